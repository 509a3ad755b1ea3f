"""``bansha drafts --json``: the same object the console's API serves."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.console.api import drafts_json
from pipeline.game.gamefile import load_game
from pipeline.store import open_store

GAME = Path(__file__).resolve().parents[3] / "config" / "games" / "demo.toml"


def test_drafts_json_is_what_the_api_serves(demo_db: Path) -> None:
    result = CliRunner().invoke(cli, ["drafts", "list", str(GAME), "--db", str(demo_db), "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    store = open_store(demo_db)
    try:
        expected = drafts_json(store, load_game(GAME, env={}))
    finally:
        store.close()
    expected = json.loads(json.dumps(expected, ensure_ascii=False))
    assert printed.pop("as_of") and expected.pop("as_of")  # the moment each was made
    assert printed == expected
    assert printed["drafts"], "the demo leaves drafts"
    # a bare `bansha drafts GAME.toml` still lists them for a person
    listed = CliRunner().invoke(cli, ["drafts", str(GAME), "--db", str(demo_db)])
    assert listed.exit_code == 0 and "#" in listed.output
