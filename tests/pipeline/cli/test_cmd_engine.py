"""The engine's commands end to end on the demo game (m135): night add/list/remove/resolve,
day add/resolve, state; the actions file; the snapshots and the replay of the journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from engine.state import GameState
from pipeline.cli import cli
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
AFTER = ["--as-of", "2026-12-03T09:00:00+08:00"]


@pytest.fixture
def db(unresolved_db: Path) -> Path:
    """The demo store before any engine work (the demo itself resolves nights 0 and 1)."""
    return unresolved_db


def run(db: Path, *args: str, code: int = 0) -> str:
    """``bansha <command> [<subcommand>] GAME --db DB <options>``."""
    n = 2 if args[0] in ("night", "day") else 1
    result = CliRunner().invoke(cli, [*args[:n], str(GAME), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def test_the_migration_adds_the_engine_tables(tmp_path: Path) -> None:
    store = open_store(tmp_path / "new.db")
    tables = set(store.db.table_names())
    assert {"journal_actions", "engine_snapshots", "engine_events"} <= tables
    names = [r["name"] for r in store.db.query("SELECT name FROM _migrations")]
    assert "004_engine" in names


def test_night_add_list_remove(db: Path) -> None:
    out = run(
        db, "night", "add", "--night", "0", "--actor", "包子", "--skill", "预言", "--target", "Snow"
    )
    assert out.strip() == "已记录 #1：第0晚 包子[预言]→Snow_风"
    out = run(
        db,
        "night",
        "add",
        "--night",
        "0",
        "--actor",
        "麻花",
        "--skill",
        "<捣蛋>",
        "--target",
        "汤圆",
    )
    assert "麻花[捣蛋]→汤圆" in out
    listing = run(db, "night", "list")
    assert "#1 第0晚 包子[预言]→Snow_风（来源：命令行）" in listing
    assert run(db, "night", "remove", "2").startswith("已撤销 #2：麻花[捣蛋]→汤圆")
    assert "#2" not in run(db, "night", "list")
    assert "已撤销" in run(db, "night", "list", "--all")
    rows = json.loads(run(db, "night", "list", "--json"))
    assert rows[0]["targets"] == ["Snow_风"] and rows[0]["skill"] == "预言"
    err = run(
        db,
        "night",
        "add",
        "--night",
        "0",
        "--actor",
        "路人",
        "--skill",
        "预言",
        "--target",
        "包子",
        code=1,
    )
    assert "玩家「路人」不在名单中" in err
    err = run(db, "night", "add", "--night", "0", "--actor", "包子", "--skill", "查验", code=1)
    assert "没有名为<查验>的技能" in err
    assert "已于" in run(db, "night", "remove", "2", code=1)


def test_night_resolve_json_contract_and_phase_order(db: Path) -> None:
    err = run(db, "night", "resolve", "--night", "1", code=1)
    assert "还没有结算第1天，请先结算它（bansha day resolve GAME.toml --day 1）" in err
    run(
        db, "night", "add", "--night", "0", "--actor", "包子", "--skill", "预言", "--target", "汤圆"
    )
    run(
        db, "night", "add", "--night", "0", "--actor", "饺子", "--skill", "杀人", "--target", "包子"
    )
    data = json.loads(run(db, "night", "resolve", "--night", "0", "--json"))
    for key in ("deaths", "feedback", "public", "statuses", "winner", "log", "actions", "pending"):
        assert key in data, key
    assert data["night"] == 0 and data["ruleset"] == "m135" and data["complete"] is True
    assert data["deaths"] == [] and data["winner"] is None
    assert {
        "to": "包子",
        "text": "预言：汤圆的表面阵营为狼人阵营。",
        "rule": "m135.txt:87",
    } in data["feedback"]
    kill = next(a for a in data["actions"] if a["skill"] == "杀人")
    assert kill["outcome"] == "invalid" and "第零晚" in kill["reason"]
    assert data["public"] == ["昨晚无人出局（平安夜）"]
    assert all({"phase", "step", "rule", "result"} <= set(e) for e in data["log"])


def test_a_whole_demo_round_with_a_pending_shot(db: Path) -> None:
    run(db, "night", "resolve", "--night", "0")
    err = run(db, "day", "resolve", "--day", "1", "--as-of", "2026-12-01T21:00:00+08:00", code=1)
    assert "第1天尚未关门" in err
    out = run(db, "day", "resolve", "--day", "1", *AFTER)
    assert "当选警长：包子" in out
    run(
        db, "night", "add", "--night", "1", "--actor", "汤圆", "--skill", "杀人", "--target", "烧卖"
    )
    run(
        db, "night", "add", "--night", "1", "--actor", "馄饨", "--skill", "毒药", "--target", "饺子"
    )
    out = run(db, "night", "resolve", "--night", "1")
    assert "1. 烧卖的第一身份（守卫）：杀人" in out
    assert "2. 饺子的第一身份（狼人）：女巫[毒药]" in out
    assert "→ 馄饨：通灵：今晚<杀人>的选择目标是烧卖。" in out
    data = json.loads(run(db, "day", "resolve", "--day", "2", "--json", *AFTER))
    assert data["tally"]["out"] == "饺子"
    assert data["complete"] is False
    assert (
        data["pending"][0]["skill"] == "最后一枪"
        and "bansha day add" in data["pending"][0]["prompt"]
    )
    run(
        db, "day", "add", "--day", "2", "--actor", "饺子", "--skill", "最后一枪", "--target", "汤圆"
    )
    data = json.loads(run(db, "day", "resolve", "--day", "2", "--json", *AFTER))
    assert data["complete"] is True
    assert "不一致" not in run(db, "tally", "--day", "2", *AFTER)  # m135: the same count
    assert [(d["player"], d["card"], d["cause"]) for d in data["deaths"]] == [
        ("饺子", "猎人", "投票出局"),
        ("汤圆", "狼人", "饺子的[最后一枪]"),
    ]
    state = run(db, "state")
    assert "引擎状态：第2天之后" in state and "警长：包子" in state
    assert "饺子：第一身份 狼人（出局：女巫[毒药]，第1晚）" in state
    snapshot = GameState.from_dict(json.loads(run(db, "state", "--json")))
    assert snapshot.phase.label == "day:2" and not snapshot.player("饺子").alive
    assert "重放 4 个阶段，全部一致。" in run(db, "state", "--verify")
    # re-resolving an earlier phase voids the later ones
    out = run(db, "night", "resolve", "--night", "1")
    assert "之后已结算的阶段（day:2）已作废" in out
    assert "引擎状态：第1晚之后" in run(db, "state")
    assert "没有第2天的结算记录" in run(db, "state", "--phase", "day:2", code=1)


def test_the_actions_file(db: Path, tmp_path: Path) -> None:
    good = tmp_path / "night0.toml"
    good.write_text(
        "night = 0\n"
        '[[actions]]\nactor = "包子"\nskill = "预言"\ntargets = ["饺子"]\n'
        '[[actions]]\nactor = "Snow"\nskill = "预言"\ntargets = ["饺子"]\n'
        "at = 2026-11-30T22:35:00+08:00\n",
        encoding="utf-8",
    )
    out = run(db, "night", "resolve", "--night", "0", "--actions", str(good))
    assert "[已结算] 包子[预言]→饺子" in out
    assert "[无效] Snow_风[预言]" in out and "没有<预言>" in out
    run(db, "night", "resolve", "--night", "0", "--actions", str(good))  # re-import replaces
    assert len(json.loads(run(db, "night", "list", "--json"))) == 2

    before = run(db, "night", "list", "--all")
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(
        'night = 0\n[[actions]]\nactor = "路人"\nskill = "预言"\ntarget = "饺子"\n'
        '[[actions]]\nactor = "包子"\nskill = "查验"\ntargets = ["甲"]\n',
        encoding="utf-8",
    )
    err = run(db, "night", "resolve", "--night", "0", "--actions", str(wrong), code=1)
    assert 'actions[0].target（第 1 个 [[actions]]，路人）：应写成 targets = ["目标"]' in err
    wrong.write_text(
        'night = 0\n[[actions]]\nactor = "路人"\nskill = "查验"\ntargets = ["甲"]\n',
        encoding="utf-8",
    )
    err = run(db, "night", "resolve", "--night", "0", "--actions", str(wrong), code=1)
    assert "actions[0]（第 1 个 [[actions]]）.actor：名单中没有玩家「路人」" in err
    assert ".skill：" in err and "没有名为<查验>的技能" in err
    assert ".targets[0]：名单中没有玩家「甲」" in err
    half = tmp_path / "half.toml"
    half.write_text('night = 0\n[[actions]]\nactor = "包子"\nskill = "预', encoding="utf-8")
    err = run(db, "night", "resolve", "--night", "0", "--actions", str(half), code=1)
    assert "不是完整有效的 TOML" in err and "未做任何处理" in err
    other = tmp_path / "other.toml"
    other.write_text("night = 3\n", encoding="utf-8")
    err = run(db, "night", "resolve", "--night", "0", "--actions", str(other), code=1)
    assert "写的是第3晚" in err
    assert run(db, "night", "list", "--all") == before  # nothing written by a bad file


def test_every_problem_of_an_actions_file_is_one_line(db: Path, tmp_path: Path) -> None:
    """A line break inside a name or a key (U+2028, U+0085: TOML strings may hold them) is
    shown escaped: a problem never splits into a line that does not say which file it is."""
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(
        'night = 0\n[[actions]]\nactor = "路\\u2028人"\nskill = "预言"\n'
        'targets = ["饺\\u0085子"]\n'
        '[[actions]]\nactor = "包子"\nskill = "预言"\ntargets = ["饺子"]\n"x\\u2028y" = 1\n',
        encoding="utf-8",
    )
    err = run(db, "night", "resolve", "--night", "0", "--actions", str(wrong), code=1)
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines and all(f"行动文件 {wrong}" in line for line in lines), lines
    assert "x\\u2028y" in err
    wrong.write_text(
        'night = 0\n[[actions]]\nactor = "路\\u2028人"\nskill = "预言"\n'
        'targets = ["饺\\u0085子"]\n',
        encoding="utf-8",
    )
    err = run(db, "night", "resolve", "--night", "0", "--actions", str(wrong), code=1)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 2 and all(f"行动文件 {wrong}" in line for line in lines), lines
    assert "名单中没有玩家「路\\u2028人」" in err and "名单中没有玩家「饺\\u0085子」" in err


def test_day_resolve_without_day_takes_the_last_closed_day(db: Path) -> None:
    # like every other command: no --day means the day the director is at — for a resolution,
    # the last one closed (day 1 closed 22:00, day 2 is open at 12-02 12:00)
    run(db, "night", "resolve", "--night", "0")
    result = CliRunner().invoke(
        cli,
        ["day", "resolve", str(GAME), "--db", str(db), "--as-of", "2026-12-02T12:00:00+08:00"],
    )
    assert result.exit_code == 0, result.output
    assert "结算第1天（最近关门的一天；用 --day 指定别的天）" in result.stderr
    assert "当选警长：包子" in result.stdout
    # before any day closed, the first day is named as not closed yet
    err = run(db, "day", "resolve", "--as-of", "2026-12-01T21:00:00+08:00", code=1)
    assert "第1天尚未关门" in err
