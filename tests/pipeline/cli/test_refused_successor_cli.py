"""A sheriff's 殉职 recorded with a successor who cannot take the badge: the night's
resolution refuses it and says how to settle it — take the refused record back (the
resolution takes a skill's first record, so a second one alone would change nothing), record a
living successor, resolve again — with the commands filled in; run as printed, the badge goes
to the new choice (m135.txt:149)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from pipeline.cli import cli
from tests.engine.rule_text import says
from tests.pipeline.cli.test_pending_blocks import AFTER, GAME, run


def printed(line: str, db: Path) -> list[str]:
    """A command line as printed, as the director runs it: the game file's path, the store."""
    words = shlex.split(line)[1:]
    return [str(GAME) if w == GAME.name else w for w in words] + ["--db", str(db)]


def test_a_refused_successor_is_taken_back_and_chosen_again_as_printed(
    unresolved_db: Path,
) -> None:
    db = unresolved_db
    says("m135.txt:149", "殉职<强制> —— 警长并非因红牌罚下出局时，选择一名未出局的角色继任警长。")
    run(db, "night", "resolve", "--night", "0")
    assert "当选警长：包子" in run(db, "day", "resolve", "--day", "1", *AFTER)
    # 包子 (预言家, then 村民) is killed and poisoned: both cards out; his 殉职 names himself
    for actor, skill, target in (("汤圆", "杀人", "包子"), ("馄饨", "毒药", "包子")):
        run(db, "night", "add", "--night", "1", "--actor", actor, "--skill", skill,
            "--target", target)  # fmt: skip
    added = run(db, "night", "add", "--night", "1", "--actor", "包子", "--skill", "殉职",
                "--target", "包子")  # fmt: skip
    record = re.search(r"已记录 #(\d+)", added)
    assert record is not None, added
    out = run(db, "night", "resolve", "--night", "1")
    assert "[无效] 包子[殉职]→包子：包子不是存活角色" in out
    assert "《[M135]『让子弹飞』》身份与阵营·警长" in out
    assert "警长：无" in out
    undo = f"bansha undo action demo.toml {record[1]} --why 理由"
    again = "bansha night add demo.toml --night 1 --actor 包子 --skill 殉职 --target 继任者"
    assert (
        f"警长包子的殉职目标无效（包子不是存活角色）：先撤销这条记录（{undo}），"
        "再从存活角色中选择继任警长（" in out
    )
    assert f"：记录后重新结算（{again}）" in out

    taken_back = CliRunner().invoke(cli, printed(undo, db))
    assert taken_back.exit_code == 0, taken_back.output
    chosen = CliRunner().invoke(cli, printed(again.replace("继任者", "烧卖"), db))
    assert chosen.exit_code == 0, chosen.output
    out = run(db, "night", "resolve", "--night", "1")
    assert "警长包子殉职，警徽移交给烧卖" in out and "警长：烧卖" in out
    assert "待决定" not in out
