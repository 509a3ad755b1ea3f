"""A cycle with nothing new, ``bansha status`` and the console's app load only what they use.

A cycle with nothing new runs from the light cycle's plan (pipeline/cli/quick.py), without the
game file's model or the rule sets; it decides exactly what the full cycle decides on the same
store, and every change of input makes it go on as the full cycle.

Each runs in a fresh interpreter (a subprocess) that prints the modules it holds at its end:
the drafting package (jinja2), the derivation, sqlite-utils, the console and the dev venv's
extras (pygments through httpx's own command line, trio through httpcore: selenium brings both)
stay unloaded when nothing needs them. ``bansha status`` and the console's app (what ``bansha
serve`` holds when it answers ``/login``) read drafts but never make or change one: neither the
drafting's templates (jinja2, for status), its state machine and what is due, nor the
derivation, nor the simulator's renderer is loaded. Importing one name of a package's
re-exports loads only its module. The assertions are on module names, never on time.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import parsers.mobile
import pipeline.cli.cycle
import pipeline.cli.quick
import pipeline.cycle
from pipeline.store import open_store
from tests.pipeline.conftest import bansha, forum_world

#: never needed to run bansha: what only the dev venv holds, and what httpx and httpcore probe
DEV_ONLY = ("pygments", "rich", "trio", "selenium", "pytest", "hypothesis")
#: what a cycle that finds nothing new never needs: it neither derives nor drafts
NOT_FOR_NOTHING_NEW = (
    *DEV_ONLY,
    "jinja2",
    "pipeline.drafts",
    "pipeline.derive",
    "pipeline.console",
    "pipeline.sim",
    "starlette",
    "uvicorn",
    "apprise",
    "engine",
    "pipeline.game",
    "pydantic",
    "importlib.metadata",  # sqlite-utils' plugins (and pydantic's) are found through it
    "sqlite_utils",  # the store's own reads and page writes are the standard library's
    "dateutil",
)

#: what reading drafts never needs: making or changing one, and the derivation drafts are made of
NOT_FOR_READING_DRAFTS = (
    "pipeline.derive",
    "pipeline.drafts.templates",
    "pipeline.drafts.due",
    "pipeline.drafts.contexts",
    "pipeline.drafts.state",
    "pipeline.drafts.newthreads",
    "pipeline.drafts.making",
    "pipeline.drafts.publish",
    "pipeline.sim",
)

#: what a fresh interpreter runs: the command line on ``sys.argv[1:]``, then its modules
RUN_CLI = (
    "import json, sys\n"
    "from pipeline.cli import cli\n"
    "try:\n"
    "    cli(sys.argv[1:], prog_name='bansha')\n"
    "except SystemExit as exit:\n"
    "    assert exit.code in (0, None), exit.code\n"
    "print('\\n' + json.dumps(sorted(sys.modules)))\n"
)


def _run(args: list[str], env: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """``bansha ARGS`` in a fresh interpreter: its output and the modules it ended with."""
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *args],
        capture_output=True,
        text=True,
        env=None if env is None else {**_inherited(), **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out, _, modules = done.stdout.rpartition("\n[")
    return out, json.loads("[" + modules)


def _inherited() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("BANSHA_DB", "BANSHA_GAME")}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _heavy(loaded: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if m.split(".")[0] in names or m.startswith(names)]


def test_importing_the_cycle_command_loads_no_forum_drafting_or_derivation() -> None:
    code = "import sys, json, pipeline.cli.cycle; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    not_yet = (*NOT_FOR_NOTHING_NEW, "httpx", "httpcore", "pipeline.discuz", "parsers.mobile")
    assert _heavy(loaded, not_yet) == []


def test_a_cycle_with_nothing_new_neither_derives_nor_drafts_nor_loads_them(
    tmp_path: Path,
) -> None:
    moment = "2026-12-01T21:00:00+08:00"
    with forum_world(tmp_path, at(moment)) as (_sim, _clock, game, env):
        first = bansha(env, "cycle", str(game), "--as-of", moment, "--verbose")
        assert "没有新内容" not in first  # the first cycle derives and drafts
        out, loaded = _run(["cycle", str(game), "--as-of", moment, "--verbose"], env)
    assert "没有新内容，未重新推导" in out
    assert "httpx" in loaded  # it did read the forum (the threads due)
    assert _heavy(loaded, NOT_FOR_NOTHING_NEW) == []


def test_status_loads_neither_the_forum_nor_the_dev_extras(tmp_path: Path) -> None:
    moment = "2026-12-01T21:00:00+08:00"
    with forum_world(tmp_path, at(moment)) as (_sim, _clock, game, env):
        bansha(env, "cycle", str(game), "--as-of", moment)
        out, loaded = _run(["status", str(game)], env)
    assert "第" in out or game.stem in out
    forum = (*DEV_ONLY, "httpx", "httpcore", "pipeline.discuz", "pipeline.cycle", "starlette")
    assert _heavy(loaded, forum) == []
    assert _heavy(loaded, (*NOT_FOR_READING_DRAFTS, "jinja2", "pipeline.console.app")) == []


def test_the_console_app_loads_neither_the_forum_nor_the_dev_extras() -> None:
    code = "import sys, json, pipeline.console.app; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    forum = (*DEV_ONLY, "httpx", "httpcore", "pipeline.discuz", "parsers.mobile")
    assert _heavy(loaded, forum) == []
    assert _heavy(loaded, NOT_FOR_READING_DRAFTS) == []


def test_one_re_exported_name_loads_only_its_module() -> None:
    code = (
        "import sys, json\n"
        "from pipeline.drafts import DraftState\n"
        "from pipeline.store import StoreError\n"
        "from pipeline.derive import crawled_tids\n"
        "import pipeline.drafts, pipeline.derive, pipeline.store\n"
        "assert 'approve' in dir(pipeline.drafts) and 'Store' in dir(pipeline.store)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = json.loads(done.stdout)
    assert "pipeline.drafts.model" in loaded and "pipeline.derive.journal_view" in loaded
    unused = (
        "jinja2",
        "pipeline.drafts.state",
        "pipeline.drafts.due",
        "pipeline.derive.derivation",
    )
    assert _heavy(loaded, unused) == []


def test_a_re_exported_name_is_its_module_s_own() -> None:
    import pipeline.derive
    import pipeline.drafts
    import pipeline.store
    from pipeline.derive import ending
    from pipeline.drafts import state
    from pipeline.store import core

    assert pipeline.drafts.approve is state.approve
    assert pipeline.derive.derive is ending.derive  # the days and how the game ended
    assert pipeline.store.Store is core.Store
    for package in (pipeline.drafts, pipeline.derive, pipeline.store):
        assert set(package.__all__) <= set(dir(package))
        try:
            package.no_such_name  # noqa: B018
        except AttributeError as exc:
            assert "no_such_name" in str(exc)
        else:
            raise AssertionError(f"{package.__name__}.no_such_name")


def test_the_http_client_makes_its_tls_context_only_for_https(monkeypatch) -> None:
    """A request to an ``http`` forum loads no CA bundle; an ``https`` one verifies
    certificates and host names as httpx does by default."""
    import ssl

    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)

    import httpx

    from pipeline.cli import make_http_client
    from pipeline.discuz.client import TlsWhenNeeded

    seen: list[str] = []
    with make_http_client() as client:
        transport = client._transport
        assert isinstance(transport, TlsWhenNeeded)
        assert transport._transports == {}
        plain = transport._for("http")
        assert transport._for("https") is not plain
        tls = transport._for("https")._pool._ssl_context
        assert tls is not None and tls.verify_mode == ssl.CERT_REQUIRED and tls.check_hostname
        mock = httpx.MockTransport(lambda r: seen.append(str(r.url)) or httpx.Response(200))
        plain.close()
        transport._transports["http"] = mock  # type: ignore[assignment]
        assert client.get("http://forum.example/forum.php").status_code == 200
    assert seen == ["http://forum.example/forum.php"]
    assert transport._transports == {}  # closed with the client


def test_a_proxy_in_the_environment_keeps_httpx_own_transport(monkeypatch) -> None:
    """httpx reads the environment's proxies only with its own transport: with one named, the
    client is httpx's default (the proxy is used, as before)."""
    from pipeline.cli import make_http_client
    from pipeline.discuz.client import TlsWhenNeeded

    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    with make_http_client() as client:
        assert not isinstance(client._transport, TlsWhenNeeded)
        assert any(m is not None for m in client._mounts.values())


# --------------------------------------------------------------------------- light and full

#: day 1 is open, its posts so far on the forum
MOMENT = "2026-12-01T21:00:00+08:00"
#: what a cycle decides and keeps: the verdicts, the drafts, its record and the cycle's outcome
DECISIONS = {
    "votes": "SELECT * FROM votes ORDER BY 1, 2, 3",
    "tallies": "SELECT * FROM tallies ORDER BY 1, 2",
    "flags": "SELECT * FROM flags ORDER BY 1",
    "post_counts": "SELECT * FROM post_counts ORDER BY 1, 2",
    "drafts": "SELECT id, kind, day, state, body FROM drafts ORDER BY id",
    "meta": "SELECT key, value FROM meta WHERE key IN "
    "('derive:last', 'derive:inputs', 'cycle:last_ok', 'cycle:last_error', 'cycle:forum') "
    "ORDER BY key",
}


def _decisions(db: Path) -> dict[str, list[Any]]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {name: conn.execute(sql).fetchall() for name, sql in DECISIONS.items()}
    finally:
        conn.close()


def _cycle(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], db: Path, game: Path, moment: str
) -> tuple[str, bool]:
    """``bansha cycle --verbose`` on the store ``db``: its output, and whether the game file's
    model was built (the full cycle, or the light one going on as the full one)."""
    built: list[Path] = []
    load = pipeline.cli.cycle.load_context

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(args[0])
        return load(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(pipeline.cli.cycle, "load_context", counted)
        out = bansha(
            {**env, "BANSHA_DB": str(db)}, "cycle", str(game), "--as-of", moment, "--verbose"
        )
    return out, bool(built)


def _light_and_full(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], game: Path, moment: str, tmp: Path
) -> tuple[tuple[str, bool, dict[str, list[Any]]], tuple[str, dict[str, list[Any]]]]:
    """One cycle at ``moment`` on two copies of the world's store: as ``bansha cycle`` runs it,
    and with the light cycle's plan never read (the full cycle): what each said and decided."""
    light_db, full_db = tmp / "light.db", tmp / "full.db"
    shutil.copy(env["BANSHA_DB"], light_db)
    shutil.copy(env["BANSHA_DB"], full_db)
    out, built = _cycle(monkeypatch, env, light_db, game, moment)
    with monkeypatch.context() as m:
        m.setattr(pipeline.cli.cycle, "read_plan", lambda *args, **kwargs: None)
        full, _ = _cycle(monkeypatch, env, full_db, game, moment)
    return (out, built, _decisions(light_db)), (full, _decisions(full_db))


def test_a_nothing_new_cycle_runs_light_and_decides_as_the_full_cycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with forum_world(tmp_path, at(MOMENT)) as (_sim, _clock, game, env):
        bansha(env, "cycle", str(game), "--as-of", MOMENT)
        assert pipeline.cli.quick.read_plan(game, None, env) is not None
        (light, built, decided), (full, full_decided) = _light_and_full(
            monkeypatch, env, game, MOMENT, tmp_path
        )
    assert "没有新内容，未重新推导" in light
    assert not built  # the game file's model was never built
    assert light == full
    assert decided == full_decided


def test_the_login_s_or_the_notifications_environment_changed_makes_the_light_cycle_step_aside(
    tmp_path: Path,
) -> None:
    with forum_world(tmp_path, at(MOMENT)) as (_sim, _clock, game, env):
        bansha(env, "cycle", str(game), "--as-of", MOMENT)
        assert pipeline.cli.quick.read_plan(game, None, env) is not None
        assert pipeline.cli.quick.read_plan(game, None, {**env, "BANSHA_COOKIE": " "}) is None
        told = {**env, "BANSHA_NOTIFY": "json://127.0.0.1:9/"}
        assert pipeline.cli.quick.read_plan(game, None, told) is None


def _edit_game_file(game: Path, **_: Any) -> None:
    text = game.read_text("utf-8")
    game.write_text(text.replace("『让子弹飞』", "『让子弹飞』第二局"), "utf-8")


def _new_post(sim: Any, **_: Any) -> None:
    sim.add_post(2001, "饺子", "我再说一句：投给老二。", at(MOMENT) - timedelta(minutes=1))


def _journal_record(env: dict[str, str], **_: Any) -> None:
    store = open_store(env["BANSHA_DB"])
    with store.atomic():
        store.db.execute(
            "INSERT INTO journal_lastwords (player, text, at, recorded_at) VALUES (?, ?, ?, ?)",
            ["饺子", "我是好人。", "2026-12-01T20:00:00+08:00", MOMENT],
        )
    store.close()


def _thread_opened(env: dict[str, str], **_: Any) -> None:
    store = open_store(env["BANSHA_DB"])
    store.record_opened_thread(
        day=3, role="discussion", tid=2021, subject="第三天", draft_id=None, at=MOMENT, how="bansha"
    )
    store.close()


def _code_changed(monkeypatch: pytest.MonkeyPatch, **_: Any) -> None:
    for module in (pipeline.cli.quick, pipeline.cycle):
        monkeypatch.setattr(module, "code_identity", lambda: "another bansha")


CHANGES: dict[str, Callable[..., None]] = {
    "the game file edited": _edit_game_file,
    "a new post": _new_post,
    "a journal record": _journal_record,
    "a thread bansha opened": _thread_opened,
    "bansha's code changed": _code_changed,
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_each_change_of_input_makes_the_light_cycle_go_on_as_the_full_one(
    change: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with forum_world(tmp_path, at(MOMENT)) as (sim, _clock, game, env):
        bansha(env, "cycle", str(game), "--as-of", MOMENT)
        CHANGES[change](sim=sim, game=game, env=env, monkeypatch=monkeypatch)
        (light, built, decided), (full, full_decided) = _light_and_full(
            monkeypatch, env, game, MOMENT, tmp_path
        )
    assert "没有新内容" not in light
    assert built
    assert light == full
    assert decided == full_decided


def test_a_moment_passing_makes_the_light_cycle_go_on_as_the_full_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with forum_world(tmp_path, at(MOMENT)) as (_sim, _clock, game, env):
        bansha(env, "cycle", str(game), "--as-of", MOMENT)
        conn = sqlite3.connect(env["BANSHA_DB"])
        record = json.loads(
            conn.execute("SELECT value FROM meta WHERE key = 'derive:last'").fetchone()[0]
        )
        conn.close()
        assert record["hi"] is not None
        just_before = (at(record["hi"]) - timedelta(seconds=1)).isoformat()
        (quiet, built, _), _ = _light_and_full(monkeypatch, env, game, just_before, tmp_path)
        assert "没有新内容，未重新推导" in quiet and not built  # still inside the window
        (light, built, decided), (full, full_decided) = _light_and_full(
            monkeypatch, env, game, record["hi"], tmp_path
        )
    assert "没有新内容" not in light
    assert built
    assert light == full
    assert decided == full_decided


# --------------------------------------------------------------------------- the mobile API


_SCALARS = st.one_of(
    st.integers(-(10**12), 10**12),
    st.integers(-(10**12), 10**12).map(str),
    st.sampled_from(["", " 12", "012", "1_0", "+1", "-0", "1.0", "abc", "１２"]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.text(max_size=5),
)


_INTS = st.one_of(st.integers(-(10**12), 10**12), st.integers(-(10**12), 10**12).map(str))
#: each kind of field: what Discuz writes, most of the time, else anything
_GOOD = {
    "int": _INTS,
    "str": st.text(max_size=5),
    "int?": st.one_of(st.none(), _INTS),
    "str?": st.one_of(st.none(), st.text(max_size=5)),
}


def _object(spec: Any) -> st.SearchStrategy[dict[str, Any]]:
    """A JSON object of ``spec``'s fields (parsers.mobile) as Discuz writes them, the optional
    ones at times left out."""
    required = {n: _GOOD[kind] for n, kind, needed, _ in spec if needed}
    optional = {n: _GOOD[kind] for n, kind, needed, _ in spec if not needed}
    return st.fixed_dictionaries(required, optional=optional)


_AS_WRITTEN = st.fixed_dictionaries(
    {
        "ppp": _INTS,
        "thread": _object(parsers.mobile._THREAD_SPEC),
        "postlist": st.lists(_object(parsers.mobile._POST_SPEC), max_size=3),
    },
    optional={"formhash": _GOOD["str?"], "member_uid": _GOOD["str?"]},
)
_SPECS = {
    "variables": parsers.mobile._VARIABLES_SPEC,
    "thread": parsers.mobile._THREAD_SPEC,
    "post": parsers.mobile._POST_SPEC,
}


@st.composite
def _answers(draw: Any) -> dict[str, Any]:
    """``Variables`` as Discuz writes them, one field at times left out or any value."""
    variables = draw(_AS_WRITTEN)
    where = draw(st.sampled_from(["as written", *_SPECS]))
    if where == "as written" or (where == "post" and not variables["postlist"]):
        return variables
    target = {"variables": variables, "thread": variables["thread"]}.get(where)
    target = variables["postlist"][0] if target is None else target
    name = draw(st.sampled_from([n for n, *_ in _SPECS[where]]))
    if draw(st.booleans()):
        target.pop(name, None)
    else:
        target[name] = draw(_SCALARS)
    return variables


def _by_pydantic(variables: dict[str, Any]) -> Any:
    model, _, invalid = parsers.mobile._models()
    try:
        return model.model_validate(variables).model_dump()
    except invalid:
        return "refused"


@settings(max_examples=400, deadline=None)
@given(_answers())
def test_a_mobile_answer_read_without_pydantic_is_read_as_pydantic_reads_it(
    variables: dict[str, Any],
) -> None:
    """The mobile API's answers a crawl reads without loading pydantic: whatever the standard
    library reads, it reads as pydantic's models do; the rest is left to them."""
    try:
        plain = parsers.mobile._plain_variables(variables)
    except parsers.mobile._Unsure:
        return
    assert dataclasses.asdict(plain) == _by_pydantic(variables)


def test_discuz_s_own_answers_are_read_without_pydantic() -> None:
    variables = {
        "formhash": "abcd1234",
        "member_uid": "1",
        "ppp": "10",
        "thread": {"subject": "第一天", "replies": "12", "closed": "0"},
        "postlist": [
            {
                "pid": "7",
                "author": "饺子",
                "authorid": "101",
                "dbdateline": "1764554400",
                "message": "投老二",
                "number": "2",
                "position": "2",
                "status": "32",
                "anonymous": "0",
            },
        ],
    }
    plain = parsers.mobile._plain_variables(variables)
    assert dataclasses.asdict(plain) == _by_pydantic(variables)
    assert plain.postlist[0].pid == 7 and plain.thread.replies == 12
