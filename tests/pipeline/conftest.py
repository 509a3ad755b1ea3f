"""Fixtures shared by the pipeline tests: the demo game, played once per test session."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.discuz.client import DiscuzClient, RetryPolicy
from pipeline.discuz.crawl import Crawler, ForumConfig
from pipeline.sim.simulator import ForumSim, SimClock, SimServer
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[2]
DEMO_GAME = ROOT / "config" / "games" / "demo.toml"
DEMO_SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store ``bansha demo`` leaves behind (simulator, cycles, drafts, one post)."""
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    result = CliRunner().invoke(
        cli, ["demo", "--db", str(db), "--now", "2026-12-03T09:00:00+08:00"]
    )
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def db(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store, free to change."""
    copy = tmp_path / "game.db"
    shutil.copy(demo_db, copy)
    return copy


@pytest.fixture
def unresolved_db(db: Path) -> Path:
    """A private copy of the demo store before any engine work (the demo itself resolves
    nights 0 and 1): no resolution, no event, no recorded action."""
    store = open_store(db)
    with store.atomic():
        for table in ("engine_events", "engine_snapshots", "journal_actions"):
            store.execute(f"DELETE FROM {table}")
    store.close()
    return db


def sim_crawler(sim: Any, store: Any, tz: Any) -> Callable[[Any, bool], Any]:
    """``crawl(targets, full)`` against the simulator, no waits (for ``run_cycle``)."""

    def crawl(targets: Any, full: bool) -> Any:
        http = httpx.Client(transport=sim.transport(), follow_redirects=True)
        client = DiscuzClient(
            http,
            base_url=sim.base_url,
            min_interval_s=0,
            policy=RetryPolicy(initial_wait_s=0.01, jitter_s=0),
            sleep=lambda s: None,
        )
        forum = ForumConfig(base_url=sim.base_url, tz=tz)
        return Crawler(client, store, forum).crawl(targets, full=full)

    return crawl


@contextmanager
def forum_world(
    tmp_path: Path, start: datetime, *, script: Path = DEMO_SCRIPT
) -> Iterator[tuple[ForumSim, SimClock, Path, dict[str, str]]]:
    """The demo game played by the simulator from ``start`` (the demo's posts, or ``script``),
    served over HTTP: ``(sim, clock, game file pointing at the server with no waits, env with
    BANSHA_DB and the director's cookie)``; the store is ``tmp_path / "game.db"``."""
    clock = SimClock(start)
    sim = ForumSim.from_script(DEMO_GAME, script, clock, floodctrl_s=0)
    with SimServer(sim) as server:
        game = tmp_path / "game.toml"
        text = DEMO_GAME.read_text(encoding="utf-8")
        text = text.replace("http://127.0.0.1:8080/", server.base_url)
        game.write_text(
            text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), encoding="utf-8"
        )
        env = {"BANSHA_DB": str(tmp_path / "game.db"), "BANSHA_COOKIE": sim.login_cookie("导演")}
        yield sim, clock, game, env


def bansha(env: dict[str, str], *args: str, code: int = 0) -> str:
    """``bansha ARGS`` with ``env``; asserts the exit code and returns the output."""
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == code, result.output
    return result.output
