"""``--json`` on why, posts and drafts show, on the demo's store."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli

GAME = Path(__file__).resolve().parents[3] / "config" / "games" / "demo.toml"
AFTER = "2026-12-03T09:00:00+08:00"


def _json(*args: str) -> dict:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_why_json_is_the_players_part_of_the_tally(demo_db: Path) -> None:
    db = ["--db", str(demo_db)]
    why = _json("why", str(GAME), *db, "--day", "2", "--player", "饺子", "--json", "--as-of", AFTER)
    tally = _json("tally", str(GAME), *db, "--day", "2", "--json", "--as-of", AFTER)
    assert why["player"] == "饺子" and why["day"] == 2
    assert why["votes"] == [v for v in tally["votes"] if v["voter"] == "饺子"]
    assert why["post_count"] == tally["post_counts"]["饺子"]
    assert why["flags"] == [f for f in tally["flags"] if f["player"] == "饺子"]
    assert why["against"], "饺子 went out on day 2: votes counted for him"


def test_posts_json_lists_each_thread_of_the_day(demo_db: Path) -> None:
    out = _json("posts", str(GAME), "--db", str(demo_db), "--day", "2", "--json")
    assert out["day"] == 2 and {t["role"] for t in out["threads"]} >= {"discussion", "vote"}
    post = out["threads"][0]["posts"][0]
    assert set(post) == {
        "tid",
        "pid",
        "floor",
        "author",
        "uid",
        "state",
        "posted_at",
        "edit_at",
        "text",
    }


def test_drafts_show_json_is_one_item_of_drafts_json(demo_db: Path) -> None:
    listed = _json("drafts", "list", str(GAME), "--db", str(demo_db), "--json")
    first = listed["drafts"][0]
    shown = _json("drafts", "show", str(GAME), "--db", str(demo_db), str(first["id"]), "--json")
    drop = ("urgent", "deadline", "urgency", "left")  # time-dependent parts
    assert {k: v for k, v in shown.items() if k not in drop} == {
        k: v for k, v in first.items() if k not in drop
    }
