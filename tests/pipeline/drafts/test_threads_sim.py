"""Day 3 of the demo game opened and day 2's vote thread closed by bansha, against the local
Discuz simulator through the real ``Poster``.

The forum is the demo's (config/games/demo.toml + demo_posts.toml) as of 12-03 09:00, the
director 导演 moderates fid 3. The game file adds ``[forum] fid = 3`` and a day 3 without tids.
A director checks: nothing reaches the forum before the day opens; after it opens there is one
thread per role with the subject "[M135]第3天讨论帖"…, its tid recorded; the 电梯 is floor 2 of
the discussion thread; a crash right after the forum created a thread, or right before, and a
lost answer still leave one thread; day 2's vote thread is closed once (a player's reply is then
refused); without moderator rights nothing is closed and it is said once.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.discuz.poster import Poster
from pipeline.drafts import DraftState, approve, list_drafts
from pipeline.game.gamefile import load_game
from pipeline.sim.simulator import ForumSim, SimClock, SimRequest, SimResponse, script_now
from pipeline.store import open_store
from tests.pipeline.threads_support import Crash, draft, game, publish

REPO = Path(__file__).resolve().parents[3]
DEMO_GAME = REPO / "config" / "games" / "demo.toml"
DEMO_POSTS = REPO / "config" / "games" / "demo_posts.toml"
DAY3 = """
[[days]]
day = 3
opens = 2026-12-03T10:00:00+08:00
closes = 2026-12-03T22:00:00+08:00
"""
SUBJECTS = ["[M135]第3天讨论帖", "[M135]第3天投票帖", "[M135]第3天进程帖"]


class World:
    def __init__(self, tmp_path: Path, **sim_kw: Any) -> None:
        now = script_now(DEMO_POSTS)
        assert now is not None
        self.clock = SimClock(now)
        self.sim = ForumSim.from_script(DEMO_GAME, DEMO_POSTS, self.clock, floodctrl_s=0, **sim_kw)
        text = DEMO_GAME.read_text("utf-8").replace("http://127.0.0.1:8080/", self.sim.base_url)
        # day 2's progress thread is its own: a progress thread per day (as the demo has)
        text = text.replace("[director]", 'fid = 3\n\n[threads]\nprogress = "day"\n\n[director]')
        self.path = tmp_path / "demo.toml"
        self.path.write_text(text + DAY3, "utf-8")
        self.store = open_store(tmp_path / "demo.db")
        self.after: Callable[[SimRequest, SimResponse], None] | None = None

    def now(self) -> datetime:
        return self.clock()

    def poster(self) -> Poster:
        def hook(request: SimRequest, response: SimResponse) -> None:
            if self.after is not None:
                self.after(request, response)

        http = httpx.Client(transport=self.sim.transport(after=hook))
        g = load_game(self.path, env={}, check_login=False)
        env = {"BANSHA_COOKIE": self.sim.login_cookie("导演")}
        return Poster.for_game(
            g, http, env=env, min_interval_s=0, sleep=lambda s: None, now=self.clock
        )

    def publish(self) -> Any:
        return publish(self.path, self.store, self.poster(), self.now())

    def approve(self, kind: str) -> None:
        for d in list_drafts(self.store):
            if d.kind == kind and d.state is DraftState.PENDING:
                approve(self.store, d.id, self.now())

    def titled(self, subject: str) -> list[int]:
        return [t for t in self.sim.thread_tids() if self.sim.thread_subject(t) == subject]


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path, moderators=["导演"])
    yield w
    w.store.close()


def _opened(w: World) -> None:
    draft(w.path, w.store, w.now())
    w.approve("newthread")
    assert w.publish() == []  # 09:00: the day opens at 10:00
    assert all(w.titled(s) == [] for s in SUBJECTS)
    w.clock.advance(timedelta(hours=1, minutes=1).total_seconds())


def test_day_3_opens_once_with_its_elevator_on_floor_2(world):
    w = world
    _opened(w)
    results = w.publish()
    assert all(r.ok for r in results), [r.line() for r in results]
    tids = {s: w.titled(s) for s in SUBJECTS}
    assert all(len(t) == 1 for t in tids.values()), tids
    g = game(w.path, w.store)
    assert g.day(3).discussion == tids[SUBJECTS[0]][0]
    assert g.day(3).vote == tids[SUBJECTS[1]][0]
    assert g.day(3).progress == tids[SUBJECTS[2]][0]
    pids = w.sim.thread_pids(g.day(3).discussion)
    assert len(pids) == 2 and "【电梯】第3天" in w.sim.stored_message(pids[1])
    assert w.sim.thread_author(g.day(3).discussion) == "导演"
    # again: nothing more reaches the forum
    before = len(w.sim.requests)
    w.publish()
    assert [r for r in w.sim.requests[before:] if r.method == "POST"] == []


@pytest.mark.parametrize("when", ["before", "after"])
def test_a_crash_around_the_new_thread_leaves_one_thread(world, when):
    """before: bansha recorded its intent and died while reading the form (the forum never got
    the POST); after: the forum created the thread and bansha died before recording it."""
    w = world
    _opened(w)

    def crash(request: SimRequest, response: SimResponse) -> None:
        reading_the_form = (
            request.method == "GET"
            and request.query.get("mod") == "forumdisplay"
            and "orderby" not in request.query  # find_thread reads the listing by date
        )
        posting = request.method == "POST" and request.query.get("action") == "newthread"
        if reading_the_form if when == "before" else posting:
            w.after = None
            raise Crash

    w.after = crash
    with pytest.raises(Crash):
        w.publish()
    attempts = list(w.store.db.query("SELECT * FROM post_attempts WHERE outcome IS NULL"))
    assert len(attempts) == 1  # the intent, with no outcome: what a crash leaves
    w.publish()
    assert [len(w.titled(s)) for s in SUBJECTS] == [1, 1, 1]
    recorded = {r["role"]: r["tid"] for r in w.store.opened_threads() if r["day"] == 3}
    assert recorded["discussion"] == w.titled(SUBJECTS[0])[0]
    outcomes = [
        a["outcome"]
        for a in w.store.db.query(
            "SELECT outcome FROM post_attempts WHERE id = ?", [attempts[0]["id"]]
        )
    ]
    assert outcomes == (["failed"] if when == "before" else ["found"])


def test_a_lost_answer_is_found_in_the_listing(world):
    w = world
    _opened(w)
    w.sim.faults.add("lost_answer", match="action=newthread")
    w.publish()
    assert [len(w.titled(s)) for s in SUBJECTS] == [1, 1, 1]
    assert {r["how"] for r in w.store.opened_threads()} >= {"found"}


def test_last_months_thread_of_the_same_subject_is_another_games(world):
    """The default subject ("{tag}第{day}天{role}") is the same in every game of a rule set, and
    a thread the same director opened last month has a larger tid than any thread this game
    names: it is still not this game's (started on a day before bansha drafted this one), so
    bansha opens its own and puts the 电梯 there, not in the old thread."""
    w = world
    old = 9000
    w.sim.add_thread(old, SUBJECTS[0], "导演", "上个月那一局的讨论帖", w.now() - timedelta(days=30))
    draft(w.path, w.store, w.now())
    w.approve("newthread")
    w.clock.advance(timedelta(hours=1, minutes=1).total_seconds())  # the day has opened
    results = w.publish()
    assert all(r.ok for r in results), [r.line() for r in results]
    tids = w.titled(SUBJECTS[0])
    assert len(tids) == 2 and old in tids
    new = game(w.path, w.store).day(3).discussion
    assert new in tids and new != old
    assert len(w.sim.thread_pids(old)) == 1  # no 电梯 in last month's thread
    assert len(w.sim.thread_pids(new)) == 2


def test_day_2s_vote_thread_is_closed_once_and_refuses_players(world):
    w = world
    draft(w.path, w.store, w.now())
    close = [d for d in list_drafts(w.store) if d.kind == "close" and d.day == 2]
    assert [d.tid for d in close] == [2012]
    w.approve("close")

    def crash(request: SimRequest, response: SimResponse) -> None:
        if request.query.get("mod") == "topicadmin" and request.method == "POST":
            w.after = None
            raise Crash

    w.after = crash
    with pytest.raises(Crash):
        w.publish()
    results = w.publish()  # the next cycle reads the thread: it is closed
    assert [r.status for r in results] == ["closed"]
    assert w.sim.thread_closed(2012)
    assert [a.tid for a in w.sim.mod_actions] == [2012]


def test_without_moderator_rights_nothing_is_closed_and_it_is_said_once(tmp_path):
    w = World(tmp_path)
    draft(w.path, w.store, w.now())
    w.approve("close")
    results = w.publish()
    assert [r.status for r in results] == ["no_rights"]
    assert not w.sim.thread_closed(2012)
    assert w.publish() == []
    w.store.close()


def test_bansha_cycle_opens_day_3_and_every_command_uses_its_tids(tmp_path, monkeypatch):
    """The commands a director runs: cycle (drafts, then opens once approved), drafts approve,
    threads, tally and posts — all on the tids bansha opened (through GameContext).

    The real clock is the simulator's (a forum write waits for the real time, not --as-of)."""
    import json

    from click.testing import CliRunner

    from pipeline.cli import cli
    from pipeline.cli import cycle as cycle_cli
    from pipeline.sim.simulator import SimServer

    now = script_now(DEMO_POSTS)
    assert now is not None
    clock = SimClock(now)
    monkeypatch.setattr(cycle_cli, "wall_clock", lambda ctx: clock())
    sim = ForumSim.from_script(DEMO_GAME, DEMO_POSTS, clock, floodctrl_s=0, moderators=["导演"])
    with SimServer(sim) as server:
        text = DEMO_GAME.read_text("utf-8").replace("http://127.0.0.1:8080/", server.base_url)
        text = text.replace("min_interval_s = 1.0", "min_interval_s = 0.0")
        text = text.replace("[director]", 'fid = 3\n\n[threads]\nprogress = "day"\n\n[director]')
        path = tmp_path / "demo.toml"
        path.write_text(text + DAY3, "utf-8")
        env = {"BANSHA_DB": str(tmp_path / "demo.db"), "BANSHA_COOKIE": sim.login_cookie("导演")}

        def run(*args: str) -> str:
            out = CliRunner().invoke(cli, list(args), env=env)
            assert out.exit_code == 0, out.output
            return out.output

        run("cycle", str(path), "--as-of", "2026-12-03T09:00:00+08:00")
        listed = json.loads(run("drafts", str(path), "--json"))["drafts"]
        new = [d for d in listed if d["kind"] == "newthread"]
        assert sorted(d["subject"] for d in new) == sorted(SUBJECTS)
        for d in new:
            run("drafts", "approve", str(path), str(d["id"]))
        # an as-of after the opening while the real time is 09:00: nothing opens early
        run("cycle", str(path), "--as-of", "2026-12-03T10:05:00+08:00")
        assert [t for t in sim.thread_tids() if sim.thread_subject(t) in SUBJECTS] == []
        clock.advance(timedelta(hours=1, minutes=5).total_seconds())  # the forum at 10:05 too
        run("cycle", str(path), "--as-of", "2026-12-03T10:05:00+08:00")
        data = json.loads(run("threads", str(path), "--json"))
        day3 = {t["role"]: t for t in data["days"][2]["threads"]}
        assert {t["source"] for t in day3.values()} == {"bansha"}
        assert [
            len([t for t in sim.thread_tids() if sim.thread_subject(t) == s]) for s in SUBJECTS
        ] == [1, 1, 1]
        # a player votes in the vote thread bansha opened; the next cycle crawls it
        vote_tid = day3["vote"]["tid"]
        clock.advance(60)
        sim.add_post(vote_tid, "馄饨", "投票对象：面条", clock())
        clock.advance(60)
        run("cycle", str(path), "--as-of", "2026-12-03T10:10:00+08:00")
        posts = run("posts", str(path), "--day", "3")
        assert "导演" in posts and "电梯" in posts  # the 电梯 in the new discussion thread
        at = "2026-12-03T10:10:00+08:00"
        tally = json.loads(run("tally", str(path), "--day", "3", "--json", "--as-of", at))
        assert [(v["voter"], v["target"]) for v in tally["votes"] if v["status"] == "counted"] == [
            ("馄饨", "面条")
        ]
        status = run("status", str(path))
        assert f"讨论帖 tid={day3['discussion']['tid']}" in status
        # day 3's vote thread is closed after its close (approved in advance), and the first
        # cycle after the close still re-reads the day's threads whole
        listed = json.loads(run("drafts", str(path), "--json"))["drafts"]
        [close] = [d for d in listed if d["kind"] == "close" and d["day"] == 3]
        assert close["tid"] == vote_tid and close["state"] == "pending"
        run("drafts", "approve", str(path), str(close["id"]))
        run("cycle", str(path), "--as-of", "2026-12-03T21:00:00+08:00")
        assert not sim.thread_closed(vote_tid)  # not before the close
        clock.set(datetime.fromisoformat("2026-12-03T22:01:00+08:00"))
        out = run("cycle", str(path), "--as-of", "2026-12-03T22:01:00+08:00", "--verbose")
        assert sim.thread_closed(vote_tid)
        assert "已关门、重读全帖以核对编辑和删除：第 3 天" in out
        assert f"草稿 #{close['id']}（锁帖，第3天）已锁帖" in out
        assert f"帖子 {vote_tid}：读取" in out
