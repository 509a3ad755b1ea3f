"""Shared by the console's tests (conftest.py re-exports the fixtures): the demo game on the
local simulator (a real socket, 127.0.0.1), crawled and drafted by ``bansha cycle`` as cron
would, then served by the console app.

``Tab`` is one browser tab (its own cookie jar): it logs in with the token and submits the
forms the pages show, CSRF token included, as a browser does.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.console.app import create_app
from pipeline.console.auth import LoginLimiter, hash_token
from pipeline.console.games import GameSpec, load_specs
from pipeline.sim.simulator import ForumSim, SimClock, SimServer
from pipeline.store import Store, open_store

with warnings.catch_warnings():  # starlette warns when only httpx (not httpx2) is installed
    try:
        from starlette.exceptions import StarletteDeprecationWarning as _Old
    except ImportError:  # an older starlette: no such warning
        _Old = DeprecationWarning  # type: ignore[assignment,misc]
    warnings.simplefilter("ignore", _Old)
    from starlette.testclient import TestClient

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"
TOKEN = "console-test-token-0123456789"
TOKEN_HASH = hash_token(TOKEN)
#: the morning after day 2 closed: its result is drafted and waits for the director
MORNING = datetime.fromisoformat("2026-12-03T09:00:00+08:00")
CSRF_RE = re.compile(r'name="csrf" value="([^"]+)"')
HASH_RE = re.compile(r'name="body_hash" value="([0-9a-f]+)"')


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def bansha(env: dict[str, str], *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == code, (result.output, result.exception)
    return result.output


@dataclass
class Forum:
    sim: ForumSim
    clock: SimClock
    server: SimServer
    game: Path
    db: Path
    env: dict[str, str]

    def cycle(self, when: datetime, *, code: int = 0) -> str:
        """``bansha cycle --as-of when``, the forum's clock and the real clock (what a forum
        write waits for) both at ``when``."""
        from unittest import mock

        from pipeline.cli import cycle as cycle_cli

        self.clock.set(when)
        with mock.patch.object(cycle_cli, "wall_clock", lambda ctx: self.clock()):
            args = ["cycle", str(self.game), "--as-of", when.isoformat()]
            return bansha(self.env, *args, code=code)

    def spec(self) -> GameSpec:
        (spec,) = load_specs([self.game], None, env=self.env)
        return spec

    def store(self) -> Store:
        return open_store(self.db)

    def director_posts(self) -> list[Any]:
        """The director's replies in the demo's day-2 threads."""
        return [
            p
            for tid in (2011, 2012)
            for p in self.sim._thread(tid).posts
            if p.author == "导演" and not p.first
        ]


@contextmanager
def _forum(folder: Path) -> Iterator[Forum]:
    clock = SimClock(at("2026-12-02T20:30:00+08:00"))
    sim = ForumSim.from_script(GAME, SCRIPT, clock, floodctrl_s=0)
    with SimServer(sim) as server:
        game = folder / "game.toml"
        text = GAME.read_text(encoding="utf-8").replace("http://127.0.0.1:8080/", server.base_url)
        game.write_text(
            text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), encoding="utf-8"
        )
        env = {
            "BANSHA_DB": str(folder / "game.db"),
            "BANSHA_COOKIE": sim.login_cookie("导演"),
        }
        yield Forum(sim, clock, server, game, folder / "game.db", env)


@pytest.fixture
def forum(tmp_path: Path) -> Iterator[Forum]:
    """The demo forum on a socket and a game file pointing at it; nothing crawled yet."""
    with _forum(tmp_path) as f:
        yield f


@pytest.fixture(scope="session")
def morning_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store after the 09:00 cycle of the day after day 2, made once per session."""
    with _forum(tmp_path_factory.mktemp("console-morning")) as f:
        f.cycle(MORNING)
        return f.db


@pytest.fixture
def morning(forum: Forum, morning_db: Path) -> Forum:
    """The forum after the 09:00 cycle of the day after day 2 (a private copy of that store):
    drafts waiting. A fresh simulator: nothing posted to it yet."""
    shutil.copy(morning_db, forum.db)
    forum.clock.set(MORNING)
    return forum


def make_app(forum: Forum, when: datetime = MORNING, **kw: Any) -> Any:
    return create_app([forum.spec()], TOKEN_HASH, clock=lambda: when, **kw)


class Tab:
    """One browser tab: its own cookies; forms posted with the page's CSRF token."""

    def __init__(self, app: Any) -> None:
        self.client = TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False)
        self.csrf = ""

    def get(self, path: str, **kw: Any) -> Any:
        r = self.client.get(path, **kw)
        if m := CSRF_RE.search(r.text):
            self.csrf = m.group(1)
        return r

    def login(self, token: str = TOKEN) -> Any:
        self.get("/login")
        return self.client.post("/login", data={"csrf": self.csrf, "token": token})

    def post(self, path: str, data: dict[str, Any] | None = None, *, csrf: bool = True) -> Any:
        form = dict(data or {})
        if csrf:
            form.setdefault("csrf", self.csrf)
        return self.client.post(path, data=form)

    def follow(self, r: Any) -> Any:
        assert r.status_code == 303, (r.status_code, r.text[:500])
        return self.get(r.headers["location"])


@pytest.fixture
def tab_for() -> Any:
    def make(app: Any, *, login: bool = True) -> Tab:
        tab = Tab(app)
        if login:
            r = tab.login()
            assert r.status_code == 303, r.text
        return tab

    return make


def result_draft(forum: Forum, day: int = 2) -> dict[str, Any]:
    store = forum.store()
    try:
        rows = list(
            store.db.query(
                "SELECT * FROM drafts WHERE kind = 'result' AND day = ? AND state = 'pending'",
                [day],
            )
        )
    finally:
        store.close()
    assert len(rows) == 1, rows
    return rows[0]


def draft_state(forum: Forum, draft_id: int) -> str:
    store = forum.store()
    try:
        return str(
            store.db.execute("SELECT state FROM drafts WHERE id = ?", [draft_id]).fetchone()[0]
        )
    finally:
        store.close()


# --------------------------------------------------------------------------- a json:// target


class JsonSink:
    """A local webhook that Apprise's ``json://`` posts to: every notification it receives is
    written to a temp folder as ``NNN.json`` (127.0.0.1 only)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with sink._lock:
                    n = len(list(sink.folder.glob("*.json")))
                    (sink.folder / f"{n:03d}.json").write_bytes(body)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.url = f"json://127.0.0.1:{self.port}/notify"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> JsonSink:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)

    def received(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text("utf-8")) for p in sorted(self.folder.glob("*.json"))]


@pytest.fixture
def sink(tmp_path: Path) -> Iterator[JsonSink]:
    with JsonSink(tmp_path / "notifications") as s:
        yield s


class Served:
    """The app made for a free port on 127.0.0.1 (it answers only that address), in uvicorn
    in a thread; stopped (bounded) on exit."""

    WAIT_S = 30.0  # bounded, generous: two cores shared with the rest of the suite

    def __init__(self, make: Any) -> None:
        import uvicorn

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(
            make(self.port), host="127.0.0.1", port=self.port, log_level="warning", access_log=False
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + self.WAIT_S
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("控制台没有在限定时间内启动")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=self.WAIT_S)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


__all__ = [
    "MORNING",
    "TOKEN",
    "TOKEN_HASH",
    "Forum",
    "JsonSink",
    "LoginLimiter",
    "Served",
    "Tab",
    "at",
    "bansha",
    "closed_port",
    "draft_state",
    "free_port",
    "make_app",
    "result_draft",
]
