"""m209: the day's top put out at noon (觉醒骑士's <断钢斩>) before the tally knew. The tally
reads only the outs the director recorded, so ``day resolve`` asks for the out's time and
prints the ``bansha player out`` line that records it; recorded, the day is counted again
(m209.txt:170, 176) and the next night may be resolved."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from tests.engine.rule_text import says
from tests.engine.test_m209_cli import LINEUP as M209_LINEUP
from tests.engine.test_m209_cli import write_game
from tests.pipeline.cli.test_m209_mania_cli import add_votes, at, run

# 庚 is the 觉醒骑士 (a 强神 for the 摄梦人); 戊 the 预言家 it strikes at noon
LINEUP = tuple((n, "觉醒骑士" if r == "摄梦人" else r) for n, r in M209_LINEUP)
AFTER = ["--as-of", "2026-12-03T09:00:00+08:00"]
STRIKE = at(12, 30).isoformat()
RECORD_OUT = f"bansha player out m209.toml --player 戊 --at {STRIKE} --cause 第2天正午出局"


@pytest.fixture
def game(tmp_path: Path) -> tuple[Path, Path]:
    """Day 2 voted 戊 the top (four votes to 丁's two); 庚 struck 戊 at 12:30."""
    table = ", ".join(f'"{r}"' for _n, r in LINEUP)
    game = (write_game(tmp_path / "m209.toml", LINEUP, table=table), tmp_path / "m209.db")
    run(game, "night", "add", "--night", "0", "--actor", "己", "--skill", "模式选择",
        "--choice", "法式守卫")  # fmt: skip
    run(game, "night", "resolve", "--night", "0")
    run(game, "day", "resolve", "--day", "1", "--as-of", "2026-12-02T09:00:00+08:00")
    run(game, "night", "resolve", "--night", "1")
    votes = [(8001 + i, who, "戊", at(11, i)) for i, who in enumerate("甲乙丙丁")]
    votes += [(8011, "戊", "丁", at(11, 30)), (8012, "己", "丁", at(11, 40))]
    add_votes(game[1], votes)
    run(game, "day", "add", "--day", "2", "--actor", "庚", "--skill", "断钢斩",
        "--target", "戊", "--at", STRIKE)  # fmt: skip
    return game


def test_a_top_out_at_noon_asks_for_the_out_with_its_command(game: tuple[Path, Path]) -> None:
    says("m209.txt:170", "如果投票的角色在正午就已出局，即使在禁止改票的时间内也可以进行一次改票")
    says("m209.txt:176", "除非特别说明，否则已经公示的出局角色不允许被选为技能或投票的目标")
    out = run(game, "day", "resolve", "--day", "2", *AFTER)
    assert "最高票：戊" in out and "今日最高票：戊（已在正午出局）" in out
    assert "待决定（结果不完整，记录后重新结算）" in out
    # the command with the game file, the player and the time of the strike filled in
    assert RECORD_OUT in out
    assert "再重新结算（bansha day resolve m209.toml --day 2）" in out

    err = run(game, "night", "resolve", "--night", "2", code=1)
    assert "第2天的结算还有待决定的事项" in err and RECORD_OUT in err
    assert "处理：先按上面的命令记录，再重新结算 bansha day resolve m209.toml --day 2" in err
    assert "bansha day add" not in err  # the out is not a skill to record


def test_the_recorded_out_counts_the_day_again(game: tuple[Path, Path]) -> None:
    run(game, "day", "resolve", "--day", "2", *AFTER)
    # the printed line, run as the director copies it (in the game file's folder)
    file, db = game
    words = [str(file) if w == file.name else w for w in shlex.split(RECORD_OUT)[1:]]
    recorded = CliRunner().invoke(cli, [*words, "--db", str(db)])
    assert recorded.exit_code == 0 and "已记录：戊" in recorded.output, recorded.output
    out = run(game, "day", "resolve", "--day", "2", *AFTER)
    # the votes for 戊 and 戊's own no longer count: 己's vote makes 丁 the top
    assert "最高票：丁" in out and "待决定" not in out
    assert "第2晚结算" in run(game, "night", "resolve", "--night", "2")
