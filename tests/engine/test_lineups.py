"""The line-up a game file deals, as each rule text plays it: the number of players, and the
``faction`` each player is given (it decides a faction's loss by two red cards), derived from the
cards or checked against them. The example game files in ``config/games/`` are full line-ups."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from engine.rulesets import get_ruleset
from tests.engine.rule_text import says

GAMES = Path(__file__).resolve().parents[2] / "config" / "games"

#: rule set → (players, the rule line and the words that say so)
COUNTS = {
    "m135": (12, "m135.txt:5", "本场版杀为12人局（双身份，24张牌）"),
    "m209": (13, "m209.txt:22", "狼人（10选4"),
    "zhenyan": (12, "zhenyan.txt:99", "村民：4人"),
    "tubian24": (24, "tubian24.txt:13", "★24人局"),
    "nizhuan": (8, "nizhuan.txt:138", "1，所有玩家的第一身份加入游戏，共8张身份。"),
}


def _lineup(rid: str) -> tuple[list[tuple[str, list[str]]], dict[str, Any]]:
    data = tomllib.loads((GAMES / f"{rid}.toml").read_text(encoding="utf-8"))
    players = [(p["name"], list(p["cards"])) for p in data["players"]]
    return players, {p["name"]: p.get("faction") for p in data["players"]}


@pytest.mark.parametrize("rid", sorted(COUNTS))
def test_a_full_line_up_passes_and_its_factions_are_the_cards(rid: str) -> None:
    rs = get_ruleset(rid)
    players, factions = _lineup(rid)
    assert rs.lineup_problems(players, factions) == []
    derived = {name: rs.hand_faction(name, cards) for name, cards in players}
    assert {n: f for n, f in derived.items() if f is not None} == {
        n: factions[n] for n, f in derived.items() if f is not None
    }


@pytest.mark.parametrize("rid", sorted(COUNTS))
def test_a_line_up_one_player_short_is_refused(rid: str) -> None:
    n, ref, words = COUNTS[rid]
    says(ref, words)
    rs = get_ruleset(rid)
    players, factions = _lineup(rid)
    problems = rs.lineup_problems(players[:-1], factions)
    assert f"本规则是 {n} 人局，名单中有 {n - 1} 名玩家" in problems[0]
    assert rs.rule_post in problems[0] and "身份配置" in problems[0]


def test_m135_faction_must_be_the_cards_faction() -> None:
    """m135.txt:9: one wolf-faction card makes the character wolf; 村民阵营 on a wolf and the
    bare word 狼人 are refused, a missing faction is derived."""
    says("m135.txt:9", "其中一张属于狼人阵营时，角色的实际阵营为狼人阵营")
    rs = get_ruleset("m135")
    players, factions = _lineup("m135")
    wolf = next(name for name, cards in players if "狼人" in cards)
    wrong = rs.lineup_problems(players, {**factions, wolf: "村民阵营"})
    assert wrong == [
        f"玩家「{wolf}」的 faction 写的是「村民阵营」，按身份牌（{'、'.join(dict(players)[wolf])}）"
        "实际阵营是「狼人阵营」（《让子弹飞》规则 · 身份与阵营，m135.txt:9）；"
        "faction 决定“同一阵营两张红牌判负”，请改正或删去这一行（不写时按身份牌推出）"
    ]
    bare = rs.lineup_problems(players, {**factions, wolf: "狼人"})
    assert len(bare) == 1 and "faction「狼人」不是本规则的阵营（可写：狼人阵营、村民阵营" in bare[0]
    assert rs.lineup_problems(players, {**factions, wolf: None}) == []
    assert rs.hand_faction(wolf, dict(players)[wolf]) == "狼人阵营"


def test_nizhuan_faction_is_either_card() -> None:
    says("nizhuan.txt:72", "其中有任何一个身份牌是狼人阵营则归属狼人阵营")
    rs = get_ruleset("nizhuan")
    assert rs.hand_faction("庚", ["村民", "蚀时狼妃"]) == "狼人阵营"
    assert rs.hand_faction("辛", ["村民", "村民"]) == "村民阵营"


def test_tubian24_servant_faction_is_not_read_from_the_card() -> None:
    """A 仆人 takes his master's faction (tubian24.txt:147): the card alone does not say, so
    any of the four factions is accepted for him; the others are their card's."""
    says("tubian24.txt:28", "【村民阵营】【狼人阵营】【白眼狼阵营】【吹笛者阵营】")
    rs = get_ruleset("tubian24")
    assert rs.hand_faction("甲", ["仆人"]) is None
    assert rs.hand_faction("乙", ["白眼狼"]) == "白眼狼阵营"


def test_m209_card_outside_the_pool_lists_the_pool() -> None:
    says("m209.txt:30", "长老，替罪羊，猎人，白痴，灵能，月亮，太阳，潜行者，骑士，黑商")
    rs = get_ruleset("m209")
    players, factions = _lineup("m209")
    name = players[0][0]
    problems = rs.lineup_problems([(name, ["路人"]), *players[1:]], factions)
    text = next(p for p in problems if "路人" in p)
    assert "不在本局的身份池中（《新RD规则》 · 身份配置，m209.txt:22-33）" in text
    assert "弱神（10选4）：长老、替罪羊、猎人、白痴、灵能、月亮、太阳、潜行者、骑士、黑商" in text
    assert "三方（1选1）：吹笛者" in text
