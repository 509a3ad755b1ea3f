"""tubian24's 盗贼 from the game file to the engine.

tubian24.txt:162 "游戏开始时，导演将从其他24个身份中抽出一张替换为盗贼，盗贼从这张身份和
一张【村民】、一张【狼人】中盲选一张作为自己的身份。" A deal that still lists 盗贼 lacks exactly
the card drawn for him; the file must load, and the [tubian24] table's ``thief_cards`` /
``thief_pick`` must reach the engine, which gives the 盗贼 the card he picked (tubian24.txt:164
"盗贼将自己的身份牌修改为自己选择的身份").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from pipeline.cli import cli
from pipeline.game.gamefile import GameFileError, parse_game
from tests.pipeline.cli.test_cmd_engine_tubian24 import ROSTER

THIEF = "知"  # dealt 盗贼: the director drew 先知 for him (tubian24.txt:162)


def deal(replaced: str = "先知") -> list[tuple[str, str, str]]:
    """The 24-player roster with the player holding ``replaced`` dealt 盗贼 instead."""
    return [(n, "盗贼" if c == replaced else c, s) for n, c, s in ROSTER]


def game_data(roster: list[tuple[str, str, str]], **table: Any) -> dict[str, Any]:
    return {
        "game": {
            "id": "tubian24-thief",
            "title": "网杀变异屠边 24人局",
            "ruleset": "tubian24",
            "timezone": "Asia/Shanghai",
        },
        "forum": {"base_url": "http://127.0.0.1:8080/"},
        "director": {"names": ["导演"], "uids": [100]},
        "players": [
            {"name": n, "uid": 101 + i, "sex": s, "cards": [c]}
            for i, (n, c, s) in enumerate(roster)
        ],
        "tubian24": {"master": "民1", **table},
    }


def toml_text(data: dict[str, Any]) -> str:
    lines = [
        "[game]",
        *(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in data["game"].items()),
        "[forum]",
        'base_url = "http://127.0.0.1:8080/"',
        "[director]",
        'names = ["导演"]',
        "uids = [100]",
    ]
    for p in data["players"]:
        lines += ["[[players]]"]
        lines += [f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in p.items()]
    lines += [
        "[[days]]",
        "day = 1",
        "opens = 2026-12-01T10:00:00+08:00",
        "closes = 2026-12-01T22:00:00+08:00",
        "vote = 3002",
        "[tubian24]",
        *(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in data["tubian24"].items()),
    ]
    return "\n".join(lines) + "\n"


def test_a_deal_with_the_thief_and_his_three_cards_loads() -> None:
    # tubian24.txt:162 导演将从其他24个身份中抽出一张替换为盗贼 — 先知 is drawn, 知 holds 盗贼
    data = game_data(deal(), thief_cards=["先知", "村民", "狼人"], thief_pick=2)
    game = parse_game(data, source="t24.toml", env={})
    assert [p.cards for p in game.players if p.name == THIEF] == [["盗贼"]]
    assert game.secrets["thief_cards"] == ["先知", "村民", "狼人"]
    # the keys reach the engine's settings
    from engine.rulesets import get_ruleset

    settings = get_ruleset("tubian24").settings_from_game(game)
    assert settings["thief_cards"] == "先知,村民,狼人" and settings["thief_pick"] == "2"
    # a deal listing 盗贼 before the pick is written loads too (the pick comes at the opening,
    # tubian24.txt:232 ② 盗贼选牌)
    parse_game(game_data(deal()), source="t24.toml", env={})


def test_a_deal_with_the_thief_still_keeps_every_other_count() -> None:
    # tubian24.txt:13 six 狼人: with 盗贼 still dealt, a seventh 狼人 is no legal deal
    roster = deal()
    roster[roster.index(("民1", "村民", "男"))] = ("民1", "狼人", "男")
    with pytest.raises(GameFileError) as info:
        parse_game(game_data(roster), source="t24.toml", env={})
    assert "身份「狼人」出现 7 次，最多 6 次；身份牌仍是盗贼时" in str(info.value)


@pytest.mark.parametrize(
    ("pick", "card"),
    [("1", "先知"), ("2", "村民"), ("3", "狼人")],
)
def test_night_zero_gives_the_thief_the_card_he_picked(
    tmp_path: Path, pick: str, card: str
) -> None:
    # tubian24.txt:164 盗贼将自己的身份牌修改为自己选择的身份; :232 ②盗贼选牌，若选到狼人则进群
    path = tmp_path / "t24.toml"
    path.write_text(
        toml_text(game_data(deal(), thief_cards=["先知", "村民", "狼人"], thief_pick=int(pick))),
        encoding="utf-8",
    )
    db = tmp_path / "t24.db"

    def run(*args: str) -> str:
        n = 2 if args[0] in ("night", "day") else 1
        result = CliRunner().invoke(cli, [*args[:n], str(path), "--db", str(db), *args[n:]])
        assert result.exit_code == 0, result.output
        return result.output

    run("init")
    data = json.loads(run("night", "resolve", "--night", "0", "--json"))
    told = [f["text"] for f in data["feedback"] if f["to"] == THIEF]
    assert told == [
        f"盗贼[偷换]：你从三张备选身份中选择了第{pick}张，你的身份牌改为{card}"
        + ("，并加入狼群" if card == "狼人" else "")
        + "（tubian24.txt:162-164, 232）。"
    ]
    state = json.loads(run("state", "--json"))
    thief = next(p for p in state["players"] if p["name"] == THIEF)
    assert [c["name"] for c in thief["cards"]] == [card]
    assert thief["wolf_group"] is (card == "狼人")
    assert ["thief", THIEF] in state["settings"]
    assert "全部一致" in run("state", "--verify")
