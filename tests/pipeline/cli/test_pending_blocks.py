"""A phase that waits for a decision blocks the next one: ``night resolve`` after a ``day
resolve`` that listed 待决定 refuses, names the decision and prints the commands that settle it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from pipeline.cli import cli
from pipeline.store import open_store
from tests.helptext import help_page

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
AFTER = ["--as-of", "2026-12-03T09:00:00+08:00"]


@pytest.fixture
def db(unresolved_db: Path) -> Path:
    """The demo store before any engine work (the demo itself resolves nights 0 and 1)."""
    return unresolved_db


def run(db: Path, *args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, [*args[:2], str(GAME), "--db", str(db), *args[2:]])
    assert result.exit_code == code, result.output
    return result.output


def _day2_with_a_pending_shot(db: Path) -> None:
    run(db, "night", "resolve", "--night", "0")
    run(db, "day", "resolve", "--day", "1", *AFTER)
    for actor, skill, target in (("汤圆", "杀人", "烧卖"), ("馄饨", "毒药", "饺子")):
        run(db, "night", "add", "--night", "1", "--actor", actor, "--skill", skill,
            "--target", target)  # fmt: skip
    run(db, "night", "resolve", "--night", "1")
    out = run(db, "day", "resolve", "--day", "2", *AFTER)
    # m135.txt:186 「持有<最后一枪>的角色出局，须立即决定<最后一枪>」: 饺子 (猎人) is voted out
    assert "待决定" in out and "最后一枪" in out


def test_night_resolve_refuses_while_the_day_waits_for_a_last_shot(db: Path) -> None:
    _day2_with_a_pending_shot(db)
    err = run(db, "night", "resolve", "--night", "2", code=1)
    assert "第2天的结算还有待决定的事项，结算第2晚之前须先处理（未做任何处理）" in err
    assert "最后一枪" in err
    # the commands as they run: the game file, the player and the skill filled in
    assert "bansha day add demo.toml --day 2 --actor 饺子 --skill 最后一枪 --target 目标" in err
    assert "bansha day resolve demo.toml --day 2" in err
    store = open_store(db)
    phases = [r["phase"] for r in store.db.query("SELECT phase FROM engine_snapshots")]
    store.close()
    assert "night:2" not in phases  # nothing was resolved

    # settled: the shot recorded and the day resolved again, the night goes on
    run(db, "day", "add", "--day", "2", "--actor", "饺子", "--skill", "最后一枪",
        "--target", "汤圆")  # fmt: skip
    run(db, "day", "resolve", "--day", "2", *AFTER)
    assert "第2晚结算" in run(db, "night", "resolve", "--night", "2")


def test_an_earlier_phase_can_still_be_resolved_again(db: Path) -> None:
    """Only the phase right after the waiting one is blocked: re-resolving night 1 (which
    voids day 2) stays possible."""
    _day2_with_a_pending_shot(db)
    assert "之后已结算的阶段（day:2）已作废" in run(db, "night", "resolve", "--night", "1")


def test_the_help_says_so() -> None:
    out = help_page("night", "resolve")
    assert "待决定" in out and "bansha day add" in out


def test_the_consoles_resolve_button_refuses_the_same_way(db: Path) -> None:
    """The console's 结算 button resolves through the same check as the command."""
    from datetime import UTC, datetime

    from pipeline.cli import load_context
    from pipeline.console import actions

    _day2_with_a_pending_shot(db)
    ctx = load_context(GAME, str(db))
    try:
        with pytest.raises(actions.ActionError) as refused:
            actions.resolve_night(ctx, 2, now=datetime(2026, 12, 3, 1, 0, tzinfo=UTC))
        assert "第2天的结算还有待决定的事项" in str(refused.value)
        assert (
            ctx.store.db.execute(
                "SELECT COUNT(*) FROM engine_snapshots WHERE phase = 'night:2'"
            ).fetchone()[0]
            == 0
        )
    finally:
        ctx.close()
