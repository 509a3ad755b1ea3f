"""The generic engine commands on a nizhuan game file: ``night add/resolve --json``, ``state``
and ``state --verify`` work once the rule set has its hooks (has_engine = True)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

import pipeline.cmd_engine  # noqa: F401  (registers the commands on the cli group)
from engine.kernel import DayInput, resolve_day
from engine.rulesets import get_ruleset
from engine.state import Phase
from pipeline.cli import cli
from pipeline.journal import save_snapshot, snapshot
from pipeline.store import open_store
from tests.engine.test_nizhuan_support import ROSTER, says

GAME = """\
[game]
id = "nizhuan-test"
title = "逆转时空的战斗（测试）"
ruleset = "nizhuan"
timezone = "Asia/Shanghai"

[forum]
base_url = "http://127.0.0.1:8080/"

[director]
names = ["导演"]
"""


def _game(tmp_path: Path) -> Path:
    text = GAME
    for i, (name, cards) in enumerate(ROSTER):
        text += (
            f'\n[[players]]\nname = "{name}"\nuid = {201 + i}\n'
            f'cards = ["{cards[0]}", "{cards[1]}"]\n'
        )
    path = tmp_path / "nizhuan.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(game: Path, db: Path, *args: str, code: int = 0) -> str:
    n = 2 if args[0] in ("night", "day") else 1
    result = CliRunner().invoke(cli, [*args[:n], str(game), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def test_night_resolve_json_on_a_nizhuan_game(tmp_path: Path) -> None:
    says("nizhuan.txt:141", "（1）狼人：选择<杀人>的目标。")
    says("nizhuan.txt:144", "3，被指杀的身份出局")
    game, db = _game(tmp_path), tmp_path / "game.db"
    # night 0 is empty (the game opens with day 1's election, nizhuan.txt:139-140)
    data = json.loads(run(game, db, "night", "resolve", "--night", "0", "--json"))
    assert data["ruleset"] == "nizhuan" and data["deaths"] == []
    # day 1: the sheriff election, stored the way `bansha day resolve` stores it
    store = open_store(db)
    rs = get_ruleset("nizhuan")
    before = snapshot(store, Phase.night(0))
    assert before is not None
    day_input = DayInput(1, elected="丁的第一身份", sheriff_election=True)
    state, report = resolve_day(before.state, day_input, rs)
    save_snapshot(store, Phase.day(1), day_input.to_dict(), state, report, resolved_at=_now())
    store.close()
    out = run(
        game,
        db,
        "night",
        "add",
        "--night",
        "1",
        "--actor",
        "丙",
        "--skill",
        "杀人",
        "--target",
        "辛",
    )
    assert "丙[杀人]→辛" in out
    run(
        game,
        db,
        "night",
        "add",
        "--night",
        "1",
        "--actor",
        "丁",
        "--skill",
        "预言",
        "--target",
        "甲",
    )
    data = json.loads(run(game, db, "night", "resolve", "--night", "1", "--json"))
    assert [(d["player"], d["card_index"], d["cause"]) for d in data["deaths"]] == [
        ("辛", 1, "被指杀")
    ]
    assert {
        "to": "丁",
        "text": "预言：甲的第一身份的阵营为狼人阵营。",
        "rule": "nizhuan.txt:89",
    } in (data["feedback"])
    assert data["complete"] is True and data["winner"] is None
    assert all(a["outcome"] == "done" for a in data["actions"])
    state_json = json.loads(run(game, db, "state", "--json"))
    assert state_json["phase"] == "night:1" and state_json["sheriff"] == "丁"
    view = run(game, db, "state")
    assert "辛：第一身份 村民（出局：被指杀，第1晚）；第二身份 村民（未入场）" in view
    assert "全部一致" in run(game, db, "state", "--verify")


def _now() -> datetime:
    return datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_the_nizhuan_table_reaches_the_engine() -> None:
    """nizhuan.txt:55 遗言 count and the declared 逆转轮 start come from the [nizhuan] table."""
    from types import SimpleNamespace

    from engine.rulesets import get_ruleset

    game = SimpleNamespace(secrets={"reversal_day": 5, "last_words": 2, "note": "x"})
    assert get_ruleset("nizhuan").settings_from_game(game) == {
        "reversal_day": "5",
        "last_words": "2",
    }


def test_a_duel_in_the_last_three_hours_is_refused(tmp_path: Path) -> None:
    says("nizhuan.txt:106", "关门前3小时内不可发动此技能")
    game, db = _game(tmp_path), tmp_path / "game.db"
    with game.open("a", encoding="utf-8") as fh:
        fh.write(
            "\n[[days]]\nday = 2\nopens = 2026-12-02T10:00:00+08:00\n"
            "closes = 2026-12-02T22:00:00+08:00\n"
        )
    knight = next(name for name, cards in ROSTER if "骑士" in cards)
    other = next(name for name, _ in ROSTER if name != knight)
    args = ["day", "add", "--day", "2", "--actor", knight, "--skill", "决斗", "--target", other]
    late = run(game, db, *args, "--at", "2026-12-02T19:30:00+08:00", code=1)
    assert "关门前3小时内" in late and "nizhuan.txt:106" in late
    assert "须写明发动时间" in run(game, db, *args, code=1)
    run(game, db, *args, "--at", "2026-12-02T18:30:00+08:00")
