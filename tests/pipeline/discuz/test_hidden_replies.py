"""Threads opened 回帖仅作者可见 (Discuz's hiddenreplies), against the local Discuz simulator.

What a director would check: zhenyan's vote threads are opened so that only the director (the
thread's author) and the moderators see the votes, the other threads stay public, a game file
may say otherwise per thread role; the director's crawl sees every vote, a crawl without the
director's login says in Chinese that it sees none instead of counting nothing.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from parsers.records import PostState
from pipeline.discuz.client import DiscuzClient, RetryPolicy, SessionJar
from pipeline.discuz.crawl import Crawler, CrawlTarget, ForumConfig
from pipeline.game.gamefile import ThreadRole, load_game
from pipeline.game.threads import (
    author_only,
    author_only_roles,
    author_only_subjects,
    thread_subject,
)
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import open_store
from tests.pipeline.discuz.test_crawl import T0, TZ, USERS
from tests.pipeline.discuz.test_poster_threads import BODY, FID, World, make_world

TID = 7
EXAMPLES = Path(__file__).resolve().parents[3] / "config" / "games"


def _game_of(ruleset: str):
    """The rule set's example game file, as a director starts from it."""
    return load_game(EXAMPLES / f"{ruleset}.toml", env={}, check_login=False)


def _with_threads(world: World, **threads: object) -> World:
    game = world.game.model_copy(update={"threads": world.game.threads.model_copy(update=threads)})
    return World(world.clock, world.sim, game)


@pytest.fixture
def world() -> World:
    return make_world(moderators=["导演"])


def test_only_zhenyans_vote_threads_are_author_only_by_its_rules():
    # zhenyan.txt:37 投票为匿名投票 (votes seen by the voter alone, :173); m209.txt:167 makes
    # the votes public; the other texts say nothing of hidden votes
    hidden = {
        ruleset: author_only_roles(_game_of(ruleset))
        for ruleset in ("m135", "m209", "zhenyan", "tubian24", "nizhuan")
    }
    assert hidden == {
        "m135": frozenset(),
        "m209": frozenset(),
        "zhenyan": frozenset({ThreadRole.VOTE, ThreadRole.FIRST_VOTE}),
        "tubian24": frozenset(),
        "nizhuan": frozenset(),
    }


def test_the_game_file_decides_per_thread_role(world):
    assert world.game.game.ruleset == "m135"
    assert not any(author_only(world.game, r) for r in ThreadRole)
    assert author_only_subjects(world.game) == frozenset()
    zhenyan = world.game.model_copy(
        update={"game": world.game.game.model_copy(update={"ruleset": "zhenyan"})}
    )
    assert author_only(zhenyan, ThreadRole.VOTE)
    assert not author_only(zhenyan, ThreadRole.INQUIRY)
    assert not author_only(zhenyan, ThreadRole.DISCUSSION)
    hidden = _with_threads(world, author_only=["vote"]).game
    subjects = author_only_subjects(hidden)
    assert thread_subject(hidden, 2, ThreadRole.VOTE) in subjects
    assert thread_subject(hidden, 2, ThreadRole.DISCUSSION) not in subjects
    # one subject for every role: it cannot tell the vote thread, so none is hidden
    same = _with_threads(world, author_only=["vote"], subject="{tag}第{day}天").game
    assert author_only_subjects(same) == frozenset()


def test_an_author_only_role_is_opened_with_hiddenreplies(world):
    w = _with_threads(world, author_only=["vote"])
    poster = w.poster()
    vote = poster.new_thread(FID, thread_subject(w.game, 2, ThreadRole.VOTE), BODY)
    talk = poster.new_thread(FID, thread_subject(w.game, 2, ThreadRole.DISCUSSION), BODY)
    assert w.sim.thread_hidden_replies(vote.tid)
    assert not w.sim.thread_hidden_replies(talk.tid)
    sent = [r for r in w.sim.requests if r.method == "POST" and r.query.get("mod") == "post"]
    # the discussion thread waited for the flood control once: sent twice, public both times
    assert [r.form.get("hiddenreplies") for r in sent] == ["1", None, None]


def test_by_default_an_m135_vote_thread_stays_public(world):
    poster = world.poster()
    made = poster.new_thread(FID, thread_subject(world.game, 2, ThreadRole.VOTE), BODY)
    assert not world.sim.thread_hidden_replies(made.tid)
    forced = poster.new_thread(FID, "[M135]测试", BODY, hidden_replies=True)
    assert world.sim.thread_hidden_replies(forced.tid)


# --------------------------------------------------------------------------- reading


def hidden_forum(*, moderators: tuple[str, ...] = ()) -> ForumSim:
    clock = SimClock(T0 + timedelta(days=1))
    sim = ForumSim(
        users={**USERS, "版主": 9}, clock=clock, floodctrl_s=0, moderators=list(moderators)
    )
    sim.add_thread(TID, "第二天投票帖", "导演", "【第二天投票帖】请投票", T0, hidden_replies=True)
    for i, (who, target) in enumerate([("饺子", "包子"), ("包子", "馄饨"), ("馄饨", "包子")]):
        sim.add_post(TID, who, f"投票对象：{target}\n投票理由：测试", T0 + timedelta(minutes=i + 1))
    return sim


def crawl_as(sim: ForumSim, store, account: str | None, source: str = "html"):
    http = httpx.Client(transport=sim.transport(), follow_redirects=True)
    client = DiscuzClient(
        http,
        base_url=sim.base_url,
        min_interval_s=0,
        policy=RetryPolicy(max_attempts=2, initial_wait_s=0.01, jitter_s=0),
        sleep=lambda s: None,
        jar=SessionJar(sim.login_cookie(account) if account else None),
    )
    crawler = Crawler(client, store, ForumConfig(base_url=sim.base_url, tz=TZ, source=source))
    return crawler.crawl([CrawlTarget(TID, 2, "vote")])


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "game.db")
    yield s
    s.close()


@pytest.mark.parametrize("source", ["html", "mobile-api"])
@pytest.mark.parametrize("account", ["导演", "版主"])
def test_the_director_and_a_moderator_read_every_vote(store, source, account):
    report = crawl_as(hidden_forum(moderators=("版主",)), store, account, source)
    assert report.ok and report.warnings == []
    replies = [p for p in store.posts(TID) if p.floor != 1]
    assert [p.state for p in replies] == [PostState.VISIBLE] * 3
    assert [p.text.splitlines()[0] for p in replies] == [
        "投票对象：包子",
        "投票对象：馄饨",
        "投票对象：包子",
    ]
    assert all("仅作者可见" not in p.text for p in replies)


@pytest.mark.parametrize("source", ["html", "mobile-api"])
def test_a_guest_crawl_sees_no_vote_and_says_so(store, source, caplog):
    report = crawl_as(hidden_forum(), store, None, source)
    assert report.ok
    replies = [p for p in store.posts(TID) if p.floor != 1]
    assert [p.state for p in replies] == [PostState.AUTHOR_ONLY] * 3
    assert all(p.text == "" for p in replies)
    [warning] = report.warnings
    assert warning.startswith("帖子 7：有 3 帖回帖显示“此帖仅作者可见”")
    assert "requires_login = true" in warning
    assert "此帖仅作者可见" in caplog.text


def test_a_player_sees_only_their_own_reply():
    sim = hidden_forum()
    http = httpx.Client(transport=sim.transport(), follow_redirects=True)
    page = http.get(
        f"{sim.base_url}forum.php?mod=viewthread&tid={TID}",
        headers={"Cookie": sim.login_cookie("饺子")},
    ).text
    assert page.count("此帖仅作者可见") == 2
    assert "投票对象：包子" in page and "投票对象：馄饨" not in page
