"""What a cycle with nothing new leaves unloaded, and what loads once it is needed.

A cycle with nothing new reads the forum's desktop pages, each answered at the first request,
and finds the game file unchanged: it loads neither the retries (tenacity: a first attempt that
fails loads them, and they go on from it), nor the mobile API's reader, nor a TOML parser (only
a command given no game file looks for one). Each cycle runs in a fresh interpreter that prints
the modules it ended with; the assertions are on module names, never on time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

from tests.pipeline.cli.test_start_light import RUN_CLI
from tests.pipeline.conftest import bansha, forum_world

MOMENT = "2026-12-01T21:00:00+08:00"
#: what a nothing-new cycle whose requests all succeed never needs
NOT_NEEDED = ("tenacity", "parsers.mobile", "tomllib")


def _cycle(game: Path, env: dict[str, str]) -> tuple[str, str, list[str]]:
    """``bansha -v cycle GAME --verbose`` in a fresh interpreter: stdout, stderr, modules."""
    inherited = {k: v for k, v in os.environ.items() if k not in ("BANSHA_DB", "BANSHA_GAME")}
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, "-v", "cycle", str(game), "--as-of", MOMENT, "--verbose"],
        capture_output=True,
        text=True,
        env={**inherited, **env},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out, _, modules = done.stdout.rpartition("\n[")
    return out, done.stderr, json.loads("[" + modules)


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in modules if m in names or m.startswith(tuple(f"{n}." for n in names))]


def test_a_nothing_new_cycle_loads_no_retries_no_mobile_reader_and_no_toml_parser(
    tmp_path: Path,
) -> None:
    with forum_world(tmp_path, datetime.fromisoformat(MOMENT)) as (_sim, _clock, game, env):
        bansha(env, "cycle", str(game), "--as-of", MOMENT)
        out, _, modules = _cycle(game, env)
    assert "没有新内容，未重新推导" in out
    assert "parsers.viewthread" in modules  # it did read the desktop pages
    assert _loaded(modules, NOT_NEEDED) == []


def test_a_first_request_that_fails_loads_the_retries_which_go_on_from_it(
    tmp_path: Path,
) -> None:
    with forum_world(tmp_path, datetime.fromisoformat(MOMENT)) as (sim, _clock, game, env):
        bansha(env, "cycle", str(game), "--as-of", MOMENT)
        sim.faults.add("500", count=1)
        before = len(sim.requests)
        out, err, modules = _cycle(game, env)
        asked = [r.query.get("tid") for r in sim.requests[before:]]
    assert "没有新内容，未重新推导" in out  # the second attempt was answered
    assert "tenacity" in modules
    assert "第 1 次请求失败（论坛返回 HTTP 500）" in err
    first = asked[0]
    assert asked.count(first) == 2  # the failed request, tried once more (not twice more)
    assert len(asked) == len(set(asked)) + 1  # every other thread asked once
