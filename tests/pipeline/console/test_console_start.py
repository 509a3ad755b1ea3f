"""``bansha status`` and ``bansha serve`` start light on the game file the last cycle derived.

When the light cycle's plan holds for the game file (the very bytes the last derivation
validated), ``bansha status`` reads the few facts it shows from the plan and the file's TOML:
no pydantic, no game file model, no rule set. It prints what the full path prints; any change
of the file (one byte) takes the full path, which reports a bad file as before. ``bansha
serve`` answers ``/login`` before the game file's model, the store, the drafts or a rule set
are loaded; every page shows what it shows with the model built at start.

Module checks run in a fresh interpreter (a subprocess) and name modules, never times.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pipeline.console.games
from engine.rulesets import REGISTRY, ruleset_header, ruleset_ids
from pipeline.cli import cli
from pipeline.cli.quick import ForumSettings, Plan, _plan_game, plan_text
from pipeline.console.app import create_app
from pipeline.console.auth import verify_token
from pipeline.console.games import GameSpec, load_specs
from pipeline.console.light import _facts
from pipeline.game.gamefile import load_game, parse_game
from pipeline.store import open_store
from tests.pipeline.console.support import (
    MORNING,
    TOKEN,
    TOKEN_HASH,
    Forum,
    Tab,
    _forum,
)

ROOT = Path(__file__).resolve().parents[3]
#: a rule set (its module, the rules they share), never loaded to name one (the registry is)
RULE_SETS = (
    "engine.rulesets.base",
    "engine.kernel",
    "engine.conduct",
    *(f"engine.rulesets.{rid}" for rid in ruleset_ids()),
)
#: never loaded by a status on the game file the last cycle derived
NOT_FOR_THE_OVERVIEW = (
    "pydantic",
    "pydantic_core",
    "pipeline.game.gamefile",
    *RULE_SETS,
    "pipeline.derive",
    "jinja2",
    "starlette",
    "sqlite_utils",  # the overview's reads are the store's own, the standard library's
)
#: what answering /login needs none of: the store, the drafts' records, the actions
NOT_FOR_LOGIN = (
    "pydantic",
    "pipeline.game",
    *RULE_SETS,
    "engine.state",
    "pipeline.store.core",
    "pipeline.drafts.records",
    "pipeline.drafts.view",
    "pipeline.console.actions",
    "pipeline.console.overview",
    "pipeline.console.preview",
    "pipeline.derive",
    "wsproto",
)

#: ``bansha ARGS`` in a fresh interpreter, then the modules it holds
RUN_CLI = (
    "import json, sys\n"
    "from pipeline.cli import cli\n"
    "try:\n"
    "    cli(sys.argv[1:], prog_name='bansha')\n"
    "except SystemExit as exit:\n"
    "    print('exit', exit.code)\n"
    "print('\\n' + json.dumps(sorted(sys.modules)))\n"
)

#: ``bansha serve ARGS`` in a fresh interpreter, uvicorn answering one ``GET /login`` instead
#: of listening: its status, its body and the modules held when it was answered
SERVE_LOGIN = """
import asyncio, json, sys
import uvicorn

def answer(app, **options):
    sent = []
    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}
    async def send(message):
        sent.append(message)
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
             "method": "GET", "scheme": "http", "path": "/login", "raw_path": b"/login",
             "query_string": b"", "root_path": "", "headers": [(b"host", b"127.0.0.1:8765")],
             "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765)}
    asyncio.run(app(scope, receive, send))
    body = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    modules = sorted(sys.modules)
    print(json.dumps({"status": sent[0]["status"], "body": body, "ws": options.get("ws")}))
    print("\\n" + json.dumps(modules))

uvicorn.run = answer
from pipeline.cli import cli
cli(sys.argv[1:], prog_name="bansha")
"""


def _fresh(code: str, args: list[str], env: dict[str, str]) -> tuple[str, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env={**_inherited(), **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out, _, modules = done.stdout.rpartition("\n[")
    return out, json.loads("[" + modules)


def _inherited() -> dict[str, str]:
    import os

    drop = ("BANSHA_DB", "BANSHA_GAME", "BANSHA_CONSOLE_TOKEN", "BANSHA_NOTIFY")
    return {k: v for k, v in os.environ.items() if k not in drop}


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if m in names or m.startswith(tuple(n + "." for n in names))]


def _full_path(args: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """``bansha ARGS`` here, the light facts never used (every file validated)."""
    with monkeypatch.context() as m:
        m.setattr(pipeline.console.games, "light_game", lambda *a, **k: None)
        return CliRunner().invoke(cli, args, env=env)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Forum]:
    """The demo game after the 09:00 cycle of the day after day 2, its game file where that
    cycle read it (the light cycle's plan holds for it)."""
    with _forum(tmp_path_factory.mktemp("console-start")) as forum:
        forum.cycle(MORNING)
        yield forum


@pytest.fixture
def game_text(world: Forum) -> Iterator[bytes]:
    """The game file's bytes; put back after the test (the plan holds for them again)."""
    raw = world.game.read_bytes()
    yield raw
    world.game.write_bytes(raw)


# --------------------------------------------------------------------------- status


def test_status_on_the_file_the_last_cycle_derived_loads_no_model_and_prints_as_the_full_path(
    world: Forum, monkeypatch: pytest.MonkeyPatch
) -> None:
    (spec,) = load_specs([world.game], None, env=world.env)
    assert spec.light is not None and spec.file_game is None
    out, loaded = _fresh(RUN_CLI, ["status", str(world.game)], world.env)
    assert _loaded(loaded, NOT_FOR_THE_OVERVIEW) == []
    full = _full_path(["status", str(world.game)], world.env, monkeypatch)
    assert full.exit_code == 0, full.output
    assert out.startswith(full.output)
    assert full.output.splitlines()[0] == "[M135]『让子弹飞』（m135-demo，规则：让子弹飞（m135））"
    assert "待批准草稿：" in full.output


def test_status_json_on_that_file_is_the_full_path_s(
    world: Forum, monkeypatch: pytest.MonkeyPatch
) -> None:
    out, loaded = _fresh(RUN_CLI, ["status", str(world.game), "--json"], world.env)
    assert _loaded(loaded, NOT_FOR_THE_OVERVIEW) == []
    full = _full_path(["status", str(world.game), "--json"], world.env, monkeypatch)
    light = json.loads(out.rpartition("\nexit")[0] if "\nexit" in out else out)
    assert light == json.loads(full.output)
    assert light[0]["ruleset_name"] == "让子弹飞（m135）"


def test_a_game_file_changed_by_one_byte_takes_the_full_path(
    world: Forum, game_text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.game.write_bytes(game_text + b"\n# \n")
    (spec,) = load_specs([world.game], None, env=world.env)
    assert spec.light is None and spec.file_game is not None
    out, loaded = _fresh(RUN_CLI, ["status", str(world.game)], world.env)
    assert "pydantic" in loaded and "pipeline.game.gamefile" in loaded
    full = _full_path(["status", str(world.game)], world.env, monkeypatch)
    assert out.startswith(full.output)


def test_a_bad_game_file_is_reported_in_chinese_as_the_full_path_reports_it(
    world: Forum, game_text: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = game_text.decode("utf-8")
    bad = re.sub(r'ruleset = "m135"', 'ruleset = "m136"', text, count=1)
    assert bad != text
    world.game.write_text(bad, "utf-8")
    done = CliRunner().invoke(cli, ["status", str(world.game)], env=world.env)
    full = _full_path(["status", str(world.game)], world.env, monkeypatch)
    assert done.exit_code == full.exit_code == 1
    assert done.output == full.output
    assert "game.ruleset" in done.output and "m136" in done.output


def test_the_same_file_elsewhere_or_the_login_changed_takes_the_full_path(
    world: Forum, tmp_path: Path
) -> None:
    """The plan is for the file at its place and the environment it was derived in."""
    copy = tmp_path / "game.toml"
    copy.write_bytes(world.game.read_bytes())
    (elsewhere,) = load_specs([copy], None, env=world.env)
    assert elsewhere.light is None
    (logged_out,) = load_specs([world.game], None, env={**world.env, "BANSHA_COOKIE": ""})
    assert logged_out.light is None
    assert elsewhere.id == logged_out.id == "m135-demo"


def test_status_names_the_threads_bansha_opened_without_the_model(
    world: Forum, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "game.db"
    with sqlite3.connect(world.db) as source, sqlite3.connect(db) as copy:
        source.backup(copy)
    store = open_store(db)
    store.record_opened_thread(
        day=3, role="discussion", tid=2021, subject="第三天", draft_id=None, at="x", how="bansha"
    )
    store.close()
    env = {**world.env, "BANSHA_DB": str(db)}
    out, loaded = _fresh(RUN_CLI, ["status", str(world.game)], env)
    assert _loaded(loaded, NOT_FOR_THE_OVERVIEW) == []
    full = _full_path(["status", str(world.game)], env, monkeypatch)
    assert "bansha 开的帖子：第3天 讨论帖 tid=2021" in full.output
    assert out.startswith(full.output)


# --------------------------------------------------------------------------- the facts


def test_the_registry_s_headers_are_the_rule_sets_own() -> None:
    """What the overview names without loading a rule set is what its class says."""
    for rid in ruleset_ids():
        cls = REGISTRY[rid]
        assert ruleset_header(rid) == (cls.title, cls.has_sheriff_election), rid
    assert ruleset_header("M135") is None and ruleset_header("让子弹飞") is None


def _plan_for(data: dict[str, Any], game: Any, path: Path) -> Plan:
    """The plan a cycle stores for ``game`` (pipeline/cli/quick.py), as it is read back."""
    plan = json.loads(
        plan_text(game, game_path=path, game_digest="-", templates_dir=None, record="", env={})
    )
    return Plan(
        game_path=path,
        db_path=path.with_suffix(".db"),
        game_id=plan["id"],
        templates_dir=None,
        record="",
        forum=ForumSettings(**plan["forum"]),
        game=_plan_game(plan["days"]),
    )


def _example_games() -> list[str]:
    """The whole example game files with days (config/games/ also holds posts scripts and
    the demo's first part)."""
    found = []
    for path in sorted((ROOT / "config" / "games").glob("*.toml")):
        data = tomllib.loads(path.read_text("utf-8"))
        if "game" in data and data.get("days") and data.get("players"):
            found.append(path.stem)
    return found


@pytest.mark.parametrize("election", [None, False])
@pytest.mark.parametrize("name", _example_games())
def test_the_light_facts_are_the_model_s(name: str, election: bool | None) -> None:
    """Every example game file (day 1's sheriff election as written, or turned off): what the
    overview reads of the light facts is what it reads of the model."""
    path = ROOT / "config" / "games" / f"{name}.toml"
    data = tomllib.loads(path.read_text("utf-8"))
    if election is not None:
        data["days"][0]["sheriff_election"] = election
    game = parse_game(data, source=path, env={}, check_login=False, folder=path.parent)
    light = _facts(data, _plan_for(data, game, path))
    assert light is not None
    for field in ("id", "title", "ruleset", "timezone"):
        assert getattr(light.game, field) == getattr(game.game, field)
    assert light.game.tz == game.game.tz
    assert light.forum.base_url == str(game.forum.base_url)
    assert light.ruleset_title == REGISTRY[game.game.ruleset].title
    fields = ("day", "opens", "closes", "first_closes", "sheriff_election")
    assert [[getattr(d, f) for f in fields] for d in light.days] == [
        [getattr(d, f) for f in fields] for d in game.days
    ]


def test_a_light_game_s_model_is_built_from_the_bytes_read_at_start(
    world: Forum, game_text: bytes
) -> None:
    (spec,) = load_specs([world.game], None, env=world.env)
    world.game.write_text("这不是游戏文件", "utf-8")  # changed once the console started
    assert spec.model == load_game(world.game, raw=game_text, env=world.env)
    assert spec.model is spec.model  # built once


# --------------------------------------------------------------------------- serve


def test_serve_answers_login_before_the_model_the_store_or_a_rule_set_is_loaded(
    world: Forum,
) -> None:
    env = {**world.env, "BANSHA_CONSOLE_TOKEN": TOKEN}
    out, loaded = _fresh(SERVE_LOGIN, ["serve", str(world.game)], env)
    answer = json.loads(out.strip().splitlines()[-1])
    assert answer["status"] == 200 and 'name="token"' in answer["body"]
    assert answer["ws"] == "none"
    assert _loaded(loaded, NOT_FOR_LOGIN) == []
    assert "令牌来自环境变量 BANSHA_CONSOLE_TOKEN" in out
    assert "[M135]『让子弹飞』（m135-demo）" in out


def _page(tab: Tab, path: str) -> str:
    r = tab.get(path)
    assert r.status_code == 200, (path, r.status_code, r.text[:300])
    return re.sub(r'name="csrf" value="[^"]+"', "", r.text)


def test_every_page_of_a_light_game_is_the_page_of_the_game_validated_at_start(
    world: Forum, tab_for: Any
) -> None:
    (light,) = load_specs([world.game], None, env=world.env)
    assert light.light is not None
    full = GameSpec(light.path, load_game(world.game, env=world.env), light.db_path)
    tabs = [
        tab_for(create_app([spec], TOKEN_HASH, clock=lambda: MORNING)) for spec in (light, full)
    ]
    pages = ["/", "/g/m135-demo/drafts", "/g/m135-demo/day/2", "/g/m135-demo/night/2"]
    pages += ["/g/m135-demo/cards"]
    drafts = tabs[1].client.get(
        "/api/games/m135-demo/drafts", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    pages += [f"/g/m135-demo/drafts/{d['id']}" for d in drafts.json()["drafts"][:2]]
    for path in pages:
        assert _page(tabs[0], path) == _page(tabs[1], path), path
    api = [
        t.client.get("/api/games", headers={"Authorization": f"Bearer {TOKEN}"}).json()
        for t in tabs
    ]
    assert api[0] == api[1]


def test_a_token_from_the_environment_is_hashed_by_the_first_login_not_before_login_page(
    world: Forum,
) -> None:
    """``/login`` answers before the token's hash is made (scrypt); the first login makes it,
    once, and then the token works as before."""
    from pipeline.console.auth import hash_token

    made: list[str] = []

    def make() -> str:
        made.append(hash_token(TOKEN))
        return made[-1]

    (spec,) = load_specs([world.game], None, env=world.env)
    app = create_app([spec], make, clock=lambda: MORNING)
    tab = Tab(app)
    assert tab.get("/login").status_code == 200
    assert made == []
    assert Tab(app).login("wrong-token-0123456789xx").status_code == 401
    r = tab.login()
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert tab.get("/").status_code == 200
    assert len(made) == 1 and app.state.console.token_hash == made[0]
    assert verify_token(TOKEN, made[0])
