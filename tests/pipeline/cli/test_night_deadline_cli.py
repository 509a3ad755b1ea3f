"""``bansha night add --at``: an action sent after its 行动时限 (night N counts from day N's
close in the game file) is refused unless the director accepts it late (``--late``), which the
record and ``night list`` keep."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from pipeline.cli import cli
from tests.engine.rule_text import says
from tests.engine.test_zhenyan_cli import game_file
from tests.helptext import help_page

SHIELD = ("night", "add", "--night", "2", "--actor", "烧卖", "--skill", "守护之盾",
          "--target", "汤圆")  # fmt: skip


@pytest.fixture(name="run")
def _run(tmp_path: Path) -> Callable[..., str]:
    game, db = game_file(tmp_path), tmp_path / "zhenyan.db"

    def invoke(*args: str, code: int | None = 0) -> str:
        n = 2 if args[0] == "night" else 1
        result = CliRunner().invoke(cli, [*args[:n], str(game), "--db", str(db), *args[n:]])
        assert code is None or result.exit_code == code, result.output
        return result.output

    return invoke


def test_a_late_shield_is_refused(run: Callable[..., str]) -> None:
    # zhenyan.txt:191 其他应该发动技能的角色未发动技能，视为放弃发动技能; day 2 closes at 22:00
    says("zhenyan.txt:191", "关门后1小时内，其他应该发动技能的角色未发动技能，视为放弃发动技能")
    out = run(*SHIELD, "--at", "2026-12-03T00:17:00+08:00", code=1)
    assert "<守护之盾>须在关门后1小时内发动（zhenyan.txt:191）" in out
    assert "截止 2026-12-02 23:00" in out and "晚了1小时17分钟" in out
    assert "视为放弃发动技能" in out and "--late" in out
    assert "已记录 #1" in run(*SHIELD, "--at", "2026-12-02T22:59:00+08:00")  # none before it


def test_on_time_or_without_a_time_is_recorded(run: Callable[..., str]) -> None:
    run(*SHIELD, "--at", "2026-12-02T23:00:00+08:00")
    run(*SHIELD)  # no --at: nothing to check
    listed = run("night", "list")
    assert listed.count("烧卖[守护之盾]→汤圆") == 2 and "逾时接受" not in listed


def test_accepted_late_is_noted(run: Callable[..., str]) -> None:
    out = run(*SHIELD, "--at", "2026-12-03T00:17:00+08:00", "--late")
    assert "已记录 #1" in out and "逾时接受" in out
    listed = run("night", "list")
    assert "[逾时接受：<守护之盾>须在关门后1小时内发动（zhenyan.txt:191）" in listed
    rows = json.loads(run("night", "list", "--json"))
    assert "晚了1小时17分钟" in rows[0]["late"]


def test_devour_has_half_an_hour(run: Callable[..., str]) -> None:
    says("zhenyan.txt:190", "关门后30分钟内，蚀时狼妃未发动吞噬，视为放弃发动技能")
    devour = ("night", "add", "--night", "2", "--actor", "烧饼", "--skill", "吞噬",
              "--target", "汤圆")  # fmt: skip
    out = run(*devour, "--at", "2026-12-02T22:31:00+08:00", code=1)
    assert "zhenyan.txt:190" in out and "晚了1分钟" in out
    run(*devour, "--at", "2026-12-02T22:30:00+08:00")


def test_help_says_what_is_checked(run: Callable[..., str]) -> None:
    out = help_page("night", "add")
    assert "--late" in out and "不写则不核对" in out


def test_a_late_action_in_an_actions_file_is_refused_with_the_whole_file(
    run: Callable[..., str], tmp_path: Path
) -> None:
    # zhenyan.txt:191, as for night add: the file is refused whole, nothing is recorded
    actions = tmp_path / "night2.toml"
    actions.write_text(
        "night = 2\n"
        '[[actions]]\nactor = "烧卖"\nskill = "守护之盾"\ntargets = ["汤圆"]\n'
        "at = 2026-12-03T00:17:00+08:00\n",
        encoding="utf-8",
    )
    out = run("night", "resolve", "--night", "2", "--actions", str(actions), code=1)
    assert "中有超过行动时限的行动——烧卖[守护之盾]→汤圆：<守护之盾>须在关门后1小时内发动" in out
    assert "未做任何处理" in out and "--late" in out
    assert json.loads(run("night", "list", "--json")) == []
    # accepted late: recorded, noted (the night itself resolves once the nights before it are)
    run("night", "resolve", "--night", "2", "--actions", str(actions), "--late", code=None)
    [row] = json.loads(run("night", "list", "--json"))
    assert "晚了1小时17分钟" in row["late"]
