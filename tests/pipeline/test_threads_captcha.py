"""A new thread the forum wants a captcha for waits for the director: a state, not a failed
cycle — against the local Discuz simulator through the real ``Poster``.

The demo game of test_threads_sim (day 3 without tids, ``[forum] fid = 3``, the director 导演
moderates) at 12-03 10:01: day 3's threads are due and day 2's vote thread is to be locked.
What a director checks: the captcha is said once, with the instruction for a thread (open it
by hand, then ``bansha publish record … --tid``) — also when it is the login (username and
password) that needs the captcha; the rest of the cycle goes on (the lock is done); the next
cycle is quiet and sends nothing again; once the login works again the threads open as usual.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from pipeline.cycle import run_cycle
from pipeline.discuz.crawl import CrawlReport
from pipeline.discuz.poster import Poster
from pipeline.drafts.publish import publish_approved
from pipeline.game.gamefile import load_game
from tests.pipeline.test_threads_sim import SUBJECTS, World, _opened
from tests.pipeline.threads_support import game

PASSWORD = "demo1234"  # demo_posts.toml [sim] password


def _no_crawl(targets, full):
    return CrawlReport("x", [])


def cycle(w: World, poster: Poster) -> Any:
    """One cycle's publishing step (the crawl is not what is looked at here)."""
    return run_cycle(
        game(w.path, w.store),
        w.store,
        now=w.now(),
        crawl=_no_crawl,
        publish=lambda: publish_approved(w.store, game(w.path, w.store), poster, now=w.now()),
    )


def newthread_posts(w: World) -> int:
    return sum(
        1 for r in w.sim.requests if r.method == "POST" and r.query.get("action") == "newthread"
    )


@pytest.fixture
def captcha_world(tmp_path):
    w = World(tmp_path, moderators=["导演"], seccode_post=True)
    yield w
    w.store.close()


def test_a_captcha_on_a_new_thread_is_said_once_and_the_rest_of_the_cycle_goes_on(captcha_world):
    w = captcha_world
    _opened(w)
    w.approve("close")
    first = cycle(w, w.poster())
    assert first.errors == []  # not a failed cycle
    said = [line for line in first.warnings if "验证码" in line]
    assert len(said) == 3, first.warnings  # each of day 3's threads, once
    discussion = next(line for line in said if SUBJECTS[0] in line)
    assert "手动开帖" in discussion and "版块 3" in discussion
    assert "bansha publish record 游戏文件" in discussion and "--tid 新帖的tid" in discussion
    assert "--pid" not in discussion  # the instruction for a reply is not the one for a thread
    # the rest goes on: day 2's vote thread is locked in the same cycle
    assert [r.status for r in first.posted if r.kind == "close"] == ["closed"]
    assert w.sim.thread_closed(2012)
    assert all(w.titled(s) == [] for s in SUBJECTS)
    sent = newthread_posts(w)

    second = cycle(w, w.poster())
    assert second.errors == [] and second.warnings == []  # said once: quiet now
    assert newthread_posts(w) == sent  # the captcha is not tried again
    assert {r.status for r in second.posted} == {"captcha"}


def test_a_login_captcha_for_a_new_thread_says_open_it_by_hand_or_give_a_cookie(tmp_path):
    w = World(tmp_path, moderators=["导演"], seccode_login=True)
    text = w.path.read_text("utf-8").replace(
        'cookie_env = "BANSHA_COOKIE"',
        'cookie_env = "BANSHA_COOKIE"\nusername_env = "BANSHA_USER"\n'
        'password_env = "BANSHA_PASSWORD"',
    )
    w.path.write_text(text, "utf-8")
    _opened(w)
    g = load_game(w.path, env={}, check_login=False)

    def by_password() -> Poster:
        http = httpx.Client(transport=w.sim.transport())
        env = {"BANSHA_USER": "导演", "BANSHA_PASSWORD": PASSWORD}
        return Poster.for_game(g, http, env=env, min_interval_s=0, sleep=lambda s: None)

    try:
        first = cycle(w, by_password())
        assert first.errors == [], first.errors
        (said,) = first.warnings  # the login is met once: the other threads wait for it
        assert "验证码才能登录" in said and "手动开帖" in said
        assert "--tid 新帖的tid" in said and "BANSHA_COOKIE" in said
        second = cycle(w, by_password())
        assert second.errors == [] and second.warnings == []
        assert all(r.director for r in second.posted)
        # the director puts a browser cookie in place: the threads open as usual
        results = cycle(w, w.poster()).posted
        assert {r.kind for r in results if r.status == "posted"} >= {"newthread"}
        assert all(len(w.titled(s)) == 1 for s in SUBJECTS)
    finally:
        w.store.close()
