"""The engine's commands on a tubian24 game file (24 players with sex, one card each, the secret
[tubian24] table): night add/resolve --json, day resolve, state, and tally."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from pipeline.cli import cli

ROSTER = [
    ("狼1", "狼人", "男"),
    ("狼2", "狼人", "女"),
    ("狼3", "狼人", "男"),
    ("狼4", "狼人", "女"),
    ("狼5", "狼人", "男"),
    ("狼6", "狼人", "女"),
    ("民1", "村民", "男"),
    ("民2", "村民", "女"),
    ("民3", "村民", "男"),
    ("民4", "村民", "女"),
    ("民5", "村民", "男"),
    ("民6", "村民", "女"),
    ("巫", "女巫", "女"),
    ("知", "先知", "男"),
    ("守", "守护", "女"),
    ("痴", "情痴", "男"),
    ("长", "村长", "女"),
    ("猎", "猎人", "男"),
    ("僧", "高僧", "男"),
    ("傻", "白痴", "女"),
    ("梦", "梦中人", "女"),
    ("白", "白眼狼", "男"),
    ("仆", "仆人", "女"),
    ("笛", "吹笛者", "女"),
]
AFTER = ["--as-of", "2026-12-03T09:00:00+08:00"]


def game_file(tmp_path: Path) -> Path:
    lines = [
        "[game]",
        'id = "tubian24-test"',
        'title = "网杀变异屠边 24人局"',
        'ruleset = "tubian24"',
        'timezone = "Asia/Shanghai"',
        "[forum]",
        'base_url = "http://127.0.0.1:8080/"',
        "[director]",
        'names = ["导演"]',
        "uids = [100]",
    ]
    for i, (name, card, sex) in enumerate(ROSTER):
        lines += [
            "[[players]]",
            f'name = "{name}"',
            f"uid = {101 + i}",
            f'sex = "{sex}"',
            f'cards = ["{card}"]',
        ]
    lines += [
        "[[days]]",
        "day = 1",
        "opens = 2026-12-01T10:00:00+08:00",
        "closes = 2026-12-01T22:00:00+08:00",
        "vote = 3002",
        "[tubian24]",
        'kill_order = ["狼1", "狼2", "狼3", "狼4", "狼5", "狼6", "仆"]',
        'master = "知"',
    ]
    path = tmp_path / "tubian24.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def paths(tmp_path: Path) -> tuple[Path, Path]:
    return game_file(tmp_path), tmp_path / "t24.db"


def run(paths: tuple[Path, Path], *args: str, code: int = 0) -> str:
    game, db = paths
    n = 2 if args[0] in ("night", "day") else 1
    result = CliRunner().invoke(cli, [*args[:n], str(game), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def add(paths: tuple[Path, Path], night: int, actor: str, skill: str, *targets: str) -> None:
    args = ["night", "add", "--night", str(night), "--actor", actor, "--skill", skill]
    for t in targets:
        args += ["--target", t]
    run(paths, *args)


def test_night_resolve_json_on_a_tubian24_game(paths: tuple[Path, Path]) -> None:
    run(paths, "init")
    # tubian24.txt:75 只有主刀狼的指杀为有效指杀; :88 女巫[通灵]; :90 xx玩家被毒害了
    add(paths, 0, "狼1", "杀人", "知")
    add(paths, 0, "狼2", "杀人", "守")
    add(paths, 0, "巫", "毒药", "白")
    add(paths, 0, "笛", "催眠", "民1", "民2")
    data = json.loads(run(paths, "night", "resolve", "--night", "0", "--json"))
    assert data["ruleset"] == "tubian24" and data["night"] == 0
    assert [(d["player"], d["card"]) for d in data["deaths"]] == [("白", "白眼狼"), ("知", "先知")]
    assert data["public"][:3] == [
        "昨晚出局（按出局顺序）：白、知",
        "白玩家被毒害了。",
        "知玩家被杀害了。",
    ]
    assert {"to": "巫", "text": "通灵：今晚被指杀的角色：知、守。", "rule": "tubian24.txt:88"} in (
        data["feedback"]
    )
    lead = {a["actor"]: a["outcome"] for a in data["actions"] if a["skill"] == "杀人"}
    assert lead == {"狼1": "done", "狼2": "fizzled"}
    # the opening settings come from the [tubian24] table once the journal passes them
    assert all(p["skill"] == "顺从" for p in data["pending"])
    # the servant's master 知 went out: 仆 became 先知 (tubian24.txt:148)
    state = run(paths, "state")
    assert "先知" in state and "仆" in state


def test_day_resolve_and_tally_on_a_tubian24_game(paths: tuple[Path, Path]) -> None:
    run(paths, "init")
    run(paths, "night", "resolve", "--night", "0")
    out = run(paths, "tally", "--day", "1", *AFTER)
    assert "规则 tubian24" in out and "无人出局" in out
    data = json.loads(run(paths, "day", "resolve", "--day", "1", "--json", *AFTER))
    assert data["deaths"] == []
    assert data["winner"] is None
    assert "不一致" not in run(paths, "tally", "--day", "1", *AFTER)  # nothing changed since
    json.loads(run(paths, "night", "resolve", "--night", "1", "--json"))
    # replaying the journal from the setup reproduces every stored state
    verify = run(paths, "state", "--verify")
    assert "全部一致" in verify


def test_a_surrender_that_leaves_one_faction_ends_the_day_before_its_close(
    paths: tuple[Path, Path],
) -> None:
    """tubian24.txt:53 当所有被询问的角色同意投降，投降有效，狼人阵营判负并公示; :183 场上仅有一个
    阵营尚未被判负，游戏立即结束，宣布此阵营胜利. With 白眼狼 and 吹笛者 out, the wolves'
    surrender at noon ends the game then: day resolve need not wait for the 22:00 close."""
    run(paths, "init")
    add(paths, 0, "巫", "毒药", "白")  # 白眼狼阵营 all out (tubian24.txt:209)
    add(paths, 0, "狼1", "杀人", "笛")  # 吹笛者阵营 all out (tubian24.txt:216)
    run(paths, "night", "resolve", "--night", "0")
    noon = "2026-12-01T12:00:00+08:00"
    run(paths, "day", "add", "--day", "1", "--actor", "狼2", "--skill", "投降", "--at", noon)
    game, db = (str(p) for p in paths)
    before_close = ["--as-of", "2026-12-01T12:05:00+08:00"]
    result = CliRunner().invoke(
        cli, ["day", "resolve", game, "--db", db, "--day", "1", "--json", *before_close]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["winner"] == "村民阵营"
    assert "狼人阵营判负（投降（由狼2发起））。" in data["public"]
    assert any(e["step"] == "投票前游戏结束" for e in data["log"])


def test_one_card_a_player_is_told_his_identity_not_a_first_one(paths: tuple[Path, Path]) -> None:
    """tubian24.txt:25 每名角色将在游戏中扮演一个身份: one card each, so the out player is told
    his card without a position — 第一身份 is for the two-card rule sets."""
    run(paths, "init")
    add(paths, 0, "狼1", "杀人", "知")
    data = json.loads(run(paths, "night", "resolve", "--night", "0", "--json"))
    told = [f["text"] for f in data["feedback"] if f["to"] == "知"]
    assert "你（先知）出局（狼人[杀人]）。" in told, told
    assert "第一身份" not in run(paths, "state")


def test_night_resolve_names_the_card_without_a_position(paths: tuple[Path, Path]) -> None:
    # tubian24: one card each, so a death reads 「白（白眼狼）」, never 「白的第一身份」
    run(paths, "init")
    add(paths, 0, "狼1", "杀人", "知")
    add(paths, 0, "巫", "毒药", "白")
    out = run(paths, "night", "resolve", "--night", "0")
    assert "1. 白（白眼狼）：" in out and "2. 知（先知）：" in out, out
    assert "身份（" not in out, out  # nor the feedback 「你的第一身份（白眼狼）」
    assert "→ 白：你（白眼狼）出局（女巫[毒药]）。" in out, out
