"""A store another process keeps write-locked: the posting commands say so in Chinese.

``Sqlite3.OperationalError: database is locked`` tracebacks in the intent
record, ``drafts approve``, ``save_drafts`` and ``post record``. Every write takes the write
lock first (``BEGIN IMMEDIATE``) and waits for it; when it still cannot be had, ``bansha post``,
``post record``, ``drafts approve`` and ``cycle`` exit 1 with one Chinese line — never a
traceback, and nothing half-recorded (the next run, once the store is free, does the work).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import pipeline.cli.post as cmd_post
import pipeline.store.connection as connection_module
from pipeline.cli import cli
from tests.pipeline.discuz.test_poster import (
    DIRECTOR,
    RESULT,
    VOTE_DAY2,
    World,
    game_file,
    make_world,
)

BUSY = "正被另一个 bansha 进程写入"


class Busy:
    def __init__(self, world: World, path: Path) -> None:
        self.world = world
        self.path = path
        self.db = world.tmp_path / "game.db"
        self.env = {
            "BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR),
            "BANSHA_DB": str(self.db),
            "BANSHA_MAX_ATTEMPTS": "1",
        }
        self.holder: sqlite3.Connection | None = None

    def lock(self) -> None:
        """Another process in the middle of a long write transaction."""
        self.holder = sqlite3.connect(self.db, isolation_level=None)
        self.holder.execute("BEGIN IMMEDIATE")

    def release(self) -> None:
        if self.holder is not None:
            self.holder.rollback()
            self.holder.close()
            self.holder = None

    def run(self, *args: str) -> Any:
        # catch_exceptions=False: a traceback would fail the test, not hide in the result
        return CliRunner().invoke(cli, list(args), env=self.env, catch_exceptions=False)


@pytest.fixture
def busy(tmp_path, monkeypatch):
    world = make_world(tmp_path)
    monkeypatch.setattr(connection_module, "BUSY_TIMEOUT_S", 0.2)  # not 30 s in a test
    monkeypatch.setattr(
        cmd_post, "http_client_factory", lambda: httpx.Client(transport=world.sim.transport())
    )
    state = Busy(world, game_file(tmp_path))
    yield state
    state.release()


def assert_said_in_chinese(out: Any) -> None:
    assert out.exit_code == 1
    assert BUSY in out.output and "请稍后重试" in out.output
    assert "Traceback" not in out.output and "OperationalError" not in out.output


def test_post_with_a_locked_store_says_so_and_sends_nothing(busy):
    draft_id = busy.world.add_draft(RESULT)
    busy.lock()

    out = busy.run("post", str(busy.path))

    assert_said_in_chinese(out)
    assert f"草稿 #{draft_id}（投票结果，第2天）未发出" in out.output
    assert "下次运行会先在帖子里找到它，不会重发" in out.output
    assert busy.world.reply_posts() == []  # the intent could not be written: nothing sent
    busy.release()
    again = busy.run("post", str(busy.path))
    assert again.exit_code == 0, again.output
    assert len(busy.world.copies(RESULT)) == 1


def test_post_record_with_a_locked_store_says_so(busy):
    draft_id = busy.world.add_draft(RESULT)
    by_hand = busy.world.sim.add_post(VOTE_DAY2, DIRECTOR, RESULT, busy.world.clock())
    busy.lock()

    out = busy.run("post", "record", str(busy.path), str(draft_id), "--pid", str(by_hand))

    assert_said_in_chinese(out)
    busy.release()
    assert busy.world.draft(draft_id)["state"] == "approved"  # nothing half-recorded
    again = busy.run("post", "record", str(busy.path), str(draft_id), "--pid", str(by_hand))
    assert again.exit_code == 0, again.output


def test_drafts_approve_with_a_locked_store_says_so(busy):
    draft_id = busy.world.add_draft(RESULT, state="pending")
    busy.lock()

    out = busy.run("drafts", "approve", str(busy.path), str(draft_id))

    assert_said_in_chinese(out)
    busy.release()
    assert busy.world.draft(draft_id)["state"] == "pending"


@pytest.mark.parametrize(
    "as_of",
    [
        "2026-11-01T00:00:00+08:00",  # before the game: no crawl, the verdicts' write waits
        "2026-12-02T12:00:00+08:00",  # during day 2: the crawl's first write waits
    ],
)
def test_cycle_with_a_locked_store_says_so(busy, as_of):
    busy.lock()

    out = busy.run("cycle", str(busy.path), "--as-of", as_of)

    assert_said_in_chinese(out)
    assert "本轮未完成：数据库" in out.output


def test_vote_speed_auto_forgets_the_directors_ruling(tmp_path):
    """``vote speed --mode auto`` removes the ruling inside a write transaction (the write lock
    first, as every journal write)."""
    import sqlite3

    from click.testing import CliRunner

    from pipeline.cli import cli

    game = Path(__file__).resolve().parents[3] / "config" / "games" / "demo.toml"
    db = tmp_path / "g.db"
    run = CliRunner().invoke
    base = ["--db", str(db), "--day", "2"]
    assert run(cli, ["vote", "speed", str(game), *base, "--mode", "accelerate"]).exit_code == 0
    assert run(cli, ["vote", "speed", str(game), *base, "--mode", "auto"]).exit_code == 0
    rows = sqlite3.connect(db).execute("SELECT key FROM journal_settings").fetchall()
    assert ("speed:2",) not in rows
