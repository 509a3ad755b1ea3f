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
from tests.pipeline.drafts.test_threads_sim import SUBJECTS, World, _opened
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


def _hand_opened(w: World) -> tuple[int, Any]:
    """After the captcha: the director's draft of day 3's discussion thread."""
    from pipeline.drafts import list_drafts

    _opened(w)
    cycle(w, w.poster())
    (d,) = [x for x in list_drafts(w.store) if x.kind == "newthread" and x.subject == SUBJECTS[0]]
    return d.id, d


def test_a_thread_opened_by_hand_is_recorded_by_its_tid_checked_on_the_forum(captcha_world):
    from pipeline.discuz.poster import ManualPostMismatch, PostError
    from pipeline.drafts.publish import record_manual_thread

    w = captcha_world
    draft_id, d = _hand_opened(w)

    def record(tid: int, **kw: Any):
        g = game(w.path, w.store)
        return record_manual_thread(w.store, g, w.poster(), draft_id, tid, now=w.now(), **kw)

    missing = max(w.sim.thread_tids()) + 10
    with pytest.raises(ManualPostMismatch, match=f"论坛上没有帖子 tid={missing}") as caught:
        record(missing)
    assert caught.value.which == "thread"
    by_player = max(w.sim.thread_tids()) + 1
    w.sim.add_thread(by_player, SUBJECTS[0], "饺子", "【第3天讨论帖】", w.now())
    with pytest.raises(ManualPostMismatch, match="是「饺子」") as caught:
        record(by_player)
    assert caught.value.which == "author"
    other = by_player + 1
    w.sim.add_thread(other, "[M135]第3天闲聊", "导演", "【闲聊】", w.now())
    with pytest.raises(ManualPostMismatch, match="标题是「\\[M135\\]第3天闲聊」") as caught:
        record(other)
    assert caught.value.which == "subject"
    older = 1999  # older than the game's earlier threads (day 1 is 2001): another game's
    w.sim.add_thread(older, SUBJECTS[0], "导演", "【上一局的第3天讨论帖】", w.now())
    with pytest.raises(ManualPostMismatch, match="另一局") as caught:
        record(older)
    assert caught.value.which == "thread"
    with pytest.raises(PostError, match="已是这局游戏的另一个帖子"):
        record(2011)
    assert game(w.path, w.store).day(3).discussion is None  # nothing recorded so far

    mine = other + 1
    w.sim.add_thread(mine, SUBJECTS[0], "导演", d.body, w.now())
    result = record(mine)
    assert (result.status, result.tid) == ("manual", mine)
    assert game(w.path, w.store).day(3).discussion == mine  # the day's thread from now on
    row = w.store.db.execute("SELECT state, tid FROM drafts WHERE id = ?", [draft_id]).fetchone()
    assert tuple(row) == ("posted", mine)
    outcomes = [
        r[0]
        for r in w.store.db.execute(
            "SELECT outcome FROM post_attempts WHERE draft_id = ? ORDER BY id", [draft_id]
        )
    ]
    assert outcomes == ["captcha", "manual"]
    with pytest.raises(PostError, match="已经登记为发出"):
        record(mine)
    sent = newthread_posts(w)
    later = cycle(w, w.poster())
    assert later.errors == [] and newthread_posts(w) == sent  # no second thread
    assert len(w.titled(SUBJECTS[0])) == 3  # the player's, the older one and the director's


def test_publish_record_tid_from_the_command_line(captcha_world, monkeypatch):
    from click.testing import CliRunner

    import pipeline.cli.post as cmd_post
    from pipeline.cli import cli

    w = captcha_world
    draft_id, d = _hand_opened(w)
    monkeypatch.setattr(
        cmd_post, "http_client_factory", lambda: httpx.Client(transport=w.sim.transport())
    )
    env = {"BANSHA_DB": str(w.path.parent / "demo.db"), "BANSHA_COOKIE": w.sim.login_cookie("导演")}
    runner = CliRunner()
    neither = runner.invoke(cli, ["publish", "record", str(w.path), str(draft_id)], env=env)
    assert neither.exit_code == 2 and "--pid" in neither.output and "--tid" in neither.output
    tid = max(w.sim.thread_tids()) + 1
    w.sim.add_thread(tid, SUBJECTS[0], "导演", d.body, w.now())
    out = runner.invoke(
        cli, ["publish", "record", str(w.path), str(draft_id), "--tid", str(tid)], env=env
    )
    assert out.exit_code == 0, out.output
    assert f"草稿 #{draft_id} 已登记为手动开出的新帖 → 帖子 tid={tid}" in out.output
    assert game(w.path, w.store).day(3).discussion == tid


def test_drafts_edit_subject_changes_a_new_threads_subject_and_the_next_cycle_keeps_it(tmp_path):
    """The director retitles day 3's discussion thread before it opens: it goes back to
    pending (approved again by them), a later drafting keeps their subject, and the thread
    opens with it."""
    from datetime import timedelta

    from click.testing import CliRunner

    from pipeline.cli import cli
    from pipeline.drafts import DraftError, edit_subject, list_drafts
    from tests.pipeline.threads_support import draft

    w = World(tmp_path, moderators=["导演"])
    try:
        draft(w.path, w.store, w.now())
        w.approve("newthread")
        (d,) = [x for x in list_drafts(w.store) if x.subject == SUBJECTS[0]]
        mine = "[M135]第3天讨论帖（请先看规则）"
        env = {"BANSHA_DB": str(tmp_path / "demo.db")}
        out = CliRunner().invoke(
            cli, ["drafts", "edit", str(w.path), str(d.id), "--subject", mine], env=env
        )
        assert out.exit_code == 0, out.output
        assert f"已把第 {d.id} 号草稿的标题改为「{mine}」；它原已批准，现需重新批准" in out.output
        (after,) = [x for x in list_drafts(w.store) if x.id == d.id]
        assert (after.subject, after.state.value) == (mine, "pending")
        assert after.body == d.body
        # the next cycle's drafting keeps the director's subject (nothing new was generated)
        assert draft(w.path, w.store, w.now() + timedelta(minutes=5)) == []
        with pytest.raises(DraftError, match="超过 Discuz 的上限 80"):
            edit_subject(w.store, d.id, "长" * 81, w.now())
        reply = next(x for x in list_drafts(w.store) if x.action != "newthread")
        with pytest.raises(DraftError, match="不是开新帖的草稿"):
            edit_subject(w.store, reply.id, "标题", w.now())
        w.approve("newthread")
        w.clock.advance(timedelta(hours=1, minutes=1).total_seconds())
        w.publish()
        assert len(w.titled(mine)) == 1 and w.titled(SUBJECTS[0]) == []
        assert game(w.path, w.store).day(3).discussion == w.titled(mine)[0]
    finally:
        w.store.close()
