"""Two publishers racing for one approved draft against a slow forum: it is posted once.

``Bansha post`` during a ``bansha cycle`` (or two ``bansha post``) posted one
approved draft twice when the forum answered slowly. The forum here is the local simulator on a
real socket (``SimServer``); its "slow" fault stores the reply at once and answers only after a
delay, like a loaded forum, so the second publisher starts while the first one's POST is out.
What a director checks: the thread holds exactly one copy of the draft, the draft is recorded
posted with that pid, and whoever lost the race says so in Chinese instead of sending again.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.discuz.poster import Poster, PostError
from pipeline.drafts.publish import publish_approved
from pipeline.game.gamefile import Game, load_game
from pipeline.sim.simulator import ForumSim, SimClock, SimServer, script_now
from pipeline.store import Store, open_store

REPO = Path(__file__).resolve().parents[3]
DEMO_GAME = REPO / "config" / "games" / "demo.toml"
DEMO_POSTS = REPO / "config" / "games" / "demo_posts.toml"
VOTE_DAY2 = 2012  # demo.toml day 2 vote thread
DIRECTOR = "导演"


class Forum:
    """The demo forum on a socket, the game pointed at it, and one store."""

    def __init__(self, tmp_path: Path, server: SimServer, sim: ForumSim, clock: SimClock) -> None:
        self.tmp_path = tmp_path
        self.server = server
        self.sim = sim
        self.clock = clock
        game = load_game(DEMO_GAME, env={}, check_login=False)
        forum = game.forum.model_copy(update={"base_url": server.base_url, "min_interval_s": 0.0})
        self.game: Game = game.model_copy(update={"forum": forum})
        self.db = tmp_path / "game.db"
        self.store = open_store(self.db)
        self.cookie = sim.login_cookie(DIRECTOR)

    def add_draft(self, body: str) -> int:
        now = self.clock().isoformat()
        with self.store.atomic():
            cur = self.store.db.execute(
                "INSERT INTO drafts(kind, day, key, tid, action, body, body_hash, "
                "generated_body, state, created_at, updated_at, approved_at) "
                "VALUES ('result', 2, ?, ?, 'reply', ?, ?, ?, 'approved', ?, ?, ?)",
                [
                    f"result:2:{hashlib.sha256(body.encode()).hexdigest()[:8]}",
                    VOTE_DAY2,
                    body,
                    hashlib.sha256(body.encode()).hexdigest(),
                    body,
                    now,
                    now,
                    now,
                ],
            )
        return int(cur.lastrowid or 0)

    def copies(self, body: str) -> list[int]:
        return [p for p in self.sim.thread_pids(VOTE_DAY2) if self.sim.stored_message(p) == body]

    def draft(self, draft_id: int) -> dict[str, Any]:
        return next(iter(self.store.db.query("SELECT * FROM drafts WHERE id = ?", [draft_id])))

    def game_file(self) -> Path:
        text = DEMO_GAME.read_text("utf-8").replace("http://127.0.0.1:8080/", self.server.base_url)
        path = self.tmp_path / "game.toml"
        path.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), "utf-8")
        return path


@pytest.fixture
def forum(tmp_path: Path):
    now = script_now(DEMO_POSTS)
    assert now is not None
    clock = SimClock(now)
    # no flood control: a second copy would be stored, not refused (the bug, made visible)
    sim = ForumSim.from_script(DEMO_GAME, DEMO_POSTS, clock, floodctrl_s=0)
    with SimServer(sim) as server:
        world = Forum(tmp_path, server, sim, clock)
        yield world
        world.store.close()


def _publisher(forum: Forum, barrier: threading.Barrier, out: list[Any], i: int) -> None:
    """One ``bansha post``/cycle publisher: its own store connection, session and HTTP client."""
    store = Store(forum.db)
    tz = forum.game.game.tz
    try:
        with httpx.Client(timeout=10.0, follow_redirects=True) as http:
            poster = Poster.for_game(
                forum.game, http, env={"BANSHA_COOKIE": forum.cookie}, min_interval_s=0
            )
            barrier.wait()
            out[i] = publish_approved(
                store, forum.game, poster, now=datetime.now(tz), clock=lambda: datetime.now(tz)
            )
    except PostError as exc:
        out[i] = exc
    finally:
        store.close()


def test_two_publishers_in_two_threads_post_a_draft_once_across_many_rounds(forum):
    for round_no in range(12):
        body = f"[b]第2天投票结果（第 {round_no + 1} 次）[/b]\n饺子 3 票，包子 2 票。\n饺子出局。"
        draft_id = forum.add_draft(body)
        forum.sim.faults.clear()
        forum.sim.faults.add("slow", match="action=reply", seconds=0.25, count=2)
        barrier = threading.Barrier(2)
        out: list[Any] = [None, None]
        threads = [
            threading.Thread(target=_publisher, args=(forum, barrier, out, i)) for i in range(2)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)

        copies = forum.copies(body)
        assert len(copies) == 1, f"第 {round_no + 1} 轮：帖子里有 {len(copies)} 份"
        row = forum.draft(draft_id)
        assert (row["state"], row["posted_pid"]) == ("posted", copies[0])
        sent = [r for res in out if isinstance(res, list) for r in res if r.status == "posted"]
        assert [r.pid for r in sent] == copies  # one publisher sent it
        for res in out:  # the other one said why it did not (or found nothing left to do)
            if isinstance(res, PostError):
                assert "正在给这局游戏发帖" in str(res)
            else:
                assert res is not None
                assert all(r.status in ("posted", "skipped") for r in res)
                for r in res:
                    if r.status == "skipped":
                        assert "另一个 bansha 进程" in r.message


# --------------------------------------------------------------------------- two processes


def _bansha() -> list[str]:
    script = Path(sys.executable).with_name("bansha")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from pipeline.cli import cli; cli()"]


def test_two_bansha_post_processes_post_a_draft_once(forum):
    """The real commands, in two processes: the second waits for the first, then has nothing
    left to send (the draft is posted) — one copy in the thread, both exit 0."""
    game_file = forum.game_file()
    env = {
        **os.environ,
        "BANSHA_DB": str(forum.db),
        "BANSHA_COOKIE": forum.cookie,
        "BANSHA_MAX_ATTEMPTS": "2",
    }
    for round_no in range(2):
        body = f"[b]第2天投票结果（进程第 {round_no + 1} 次）[/b]\n饺子 3 票。\n饺子出局。"
        draft_id = forum.add_draft(body)
        forum.sim.faults.clear()
        # a loaded forum: the thread page and the reply both answer late
        forum.sim.faults.add("slow", match="mod=viewthread", seconds=0.5, count=2)
        forum.sim.faults.add("slow", match="action=reply", seconds=0.5, count=2)
        procs = [
            subprocess.Popen(
                [*_bansha(), "post", str(game_file)],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outputs = [p.communicate(timeout=120) for p in procs]
        codes = [p.returncode for p in procs]
        assert codes == [0, 0], outputs
        copies = forum.copies(body)
        assert len(copies) == 1, f"第 {round_no + 1} 轮：帖子里有 {len(copies)} 份；{outputs}"
        assert forum.draft(draft_id)["posted_pid"] == copies[0]
        said = "".join(o for pair in outputs for o in pair)
        assert f"pid={copies[0]}" in said
        assert "Traceback" not in said
