"""The card ledger: escalation, 红牌罚下, faction loss."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import Card, CardEvent, card_ledger
from engine.rulesets import get_ruleset, ruleset_ids

#: each rule set's CardRules, as its module declares them (engine.rulesets.<id>)
CARDS = {r: get_ruleset(r).cards for r in ruleset_ids()}
TZ = timezone(timedelta(hours=8))
FACTIONS = {"饺子": "狼人阵营", "包子": "狼人阵营", "馄饨": "村民阵营", "面条": "村民阵营"}


def at(hour: int, minute: int = 0, day: int = 2) -> datetime:
    return datetime(2026, 12, day, hour, minute, tzinfo=TZ)


def card(player: str, colour: str, hour: int, minute: int = 0, source: str = "导演") -> CardEvent:
    return CardEvent(player, Card.parse(colour), f"测试{colour}", at(hour, minute), source)


def test_three_blue_make_one_yellow() -> None:
    # m209.txt:628 累计三张“蓝牌”合并为一张“黄牌”。
    ledger = card_ledger(
        [card("饺子", "蓝", 10), card("饺子", "蓝", 11), card("饺子", "蓝", 12)],
        FACTIONS,
        rules=CARDS["m209"],
    )
    pc = ledger.players["饺子"]
    assert (pc.blue, pc.yellow, pc.red) == (0, 1, 0)
    assert pc.received == {Card.BLUE: 3}
    assert ledger.escalations == ("饺子累计3张蓝牌，折合1张黄牌",)
    assert ledger.out_by_red == {}
    assert ledger.rules.escalation_rule == "m209.txt:628, m209.txt:632"


def test_three_yellow_make_a_red_and_the_player_is_out() -> None:
    # m135.txt:241 累计三张“黄牌”合并为一张“红牌”。
    # m135.txt:244 玩家受到红牌判罚时出局（称为“红牌罚下”）。
    events = [card("饺子", "黄", 10), card("饺子", "黄", 11), card("饺子", "黄", 12, 30)]
    ledger = card_ledger(events, FACTIONS, rules=CARDS["m135"])
    pc = ledger.players["饺子"]
    assert (pc.blue, pc.yellow, pc.red) == (0, 0, 1)
    assert ledger.out_by_red == {"饺子": at(12, 30)}
    assert pc.out_at == at(12, 30)
    assert ledger.escalations == ("饺子累计3张黄牌，折合1张红牌",)
    assert pc.history[-1] == "2026-12-02 12:30 饺子红牌罚下出局"


def test_blue_escalation_cascades_into_red() -> None:
    # tubian24.txt:266-267 三张【蓝牌】升级为一张【黄牌】 三张【黄牌】升级为一张【红牌】
    events = [card("馄饨", "黄", 9), card("馄饨", "黄", 10)]
    events += [card("馄饨", "蓝", 11), card("馄饨", "蓝", 12), card("馄饨", "蓝", 13)]
    ledger = card_ledger(events, FACTIONS, rules=CARDS["tubian24"])
    assert ledger.escalations == ("馄饨累计3张蓝牌，折合1张黄牌", "馄饨累计3张黄牌，折合1张红牌")
    assert ledger.out_by_red == {"馄饨": at(13)}


def test_two_reds_in_one_faction_lose() -> None:
    # m209.txt:637 同一阵营的角色累计获得两张或以上红牌时，阵营判负。
    events = [card("饺子", "红", 10), card("馄饨", "红", 11), card("包子", "红", 12)]
    ledger = card_ledger(events, FACTIONS, rules=CARDS["m209"])
    assert [(x.faction, x.at, x.players) for x in ledger.losing_factions] == [
        ("狼人阵营", at(12), ("饺子", "包子"))
    ]
    assert ledger.losing_factions[0].reason == "狼人阵营累计获得2张红牌（饺子、包子），阵营判负"
    assert ledger.losing_factions[0].rule == "m209.txt:637"
    assert ledger.reds_by_faction == {"村民阵营": 1, "狼人阵营": 2}


def test_out_players_can_still_be_carded() -> None:
    # m135.txt:246 已出局角色仍可被判罚。  A second red for the same player counts for the faction.
    events = [card("饺子", "红", 10), card("饺子", "红", 14)]
    ledger = card_ledger(events, FACTIONS, rules=CARDS["m135"])
    assert ledger.players["饺子"].red == 2
    assert ledger.out_by_red == {"饺子": at(10)}  # out at the first red
    assert [x.faction for x in ledger.losing_factions] == ["狼人阵营"]


def test_tubian24_has_no_automatic_faction_loss() -> None:
    # tubian24.txt:264 判下红牌的同时，导演有权视情况决定是否直接使该玩家所在的阵营判负。
    events = [card("饺子", "红", 10), card("包子", "红", 11)]
    ledger = card_ledger(events, FACTIONS, rules=CARDS["tubian24"])
    assert ledger.losing_factions == ()
    assert ledger.reds_by_faction == {"狼人阵营": 2}  # reported for the director to decide


def test_nizhuan_uses_design_defaults() -> None:
    # nizhuan.txt:227 违规判定 占楼待编辑 → docs/rulings.md#conduct-defaults:
    # 3 blue = 1 yellow, 3 yellow = 1 red,
    # two reds in one faction make that faction lose
    events = [card("饺子", "红", 10), card("包子", "红", 11)]
    ledger = card_ledger(events, FACTIONS, rules=CARDS["nizhuan"])
    assert [x.faction for x in ledger.losing_factions] == ["狼人阵营"]
    assert ledger.rules.faction_rule == "docs/rulings.md#conduct-defaults"


def test_card_words_and_errors() -> None:
    assert Card.parse("蓝") is Card.BLUE
    assert Card.parse("黄牌") is Card.YELLOW
    assert Card.parse("red") is Card.RED
    with pytest.raises(ValueError, match="无法识别的牌色"):
        Card.parse("绿牌")
    with pytest.raises(ValueError, match="未知的规则"):
        card_ledger([], {}, rules=get_ruleset("werewolf").cards)
    # a plain string colour is normalised to the enum
    assert CardEvent("饺子", "黄", "x", at(10)).colour is Card.YELLOW  # type: ignore[arg-type]


def test_ledger_serialises_to_json() -> None:
    events = [card("饺子", "蓝", 10, source="d2-font-饺子"), card("饺子", "红", 11)]
    data = card_ledger(events, FACTIONS, rules=CARDS["m209"]).to_dict()
    text = json.dumps(data, ensure_ascii=False)
    assert data["out_by_red"] == {"饺子": "2026-12-02T11:00:00+08:00"}
    assert "来源：d2-font-饺子" in text


_EVENT = st.builds(
    lambda p, c, m: CardEvent(p, c, "r", at(10) + timedelta(minutes=m)),
    st.sampled_from(sorted(FACTIONS)),
    st.sampled_from(list(Card)),
    st.integers(0, 600),
)


@settings(max_examples=80, deadline=None)
@given(events=st.lists(_EVENT, max_size=25), data=st.data())
def test_event_order_does_not_matter(events: list[CardEvent], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(events))
    assert (
        card_ledger(shuffled, FACTIONS, rules=CARDS["m209"]).to_dict()
        == card_ledger(events, FACTIONS, rules=CARDS["m209"]).to_dict()
    )


@settings(max_examples=80, deadline=None)
@given(events=st.lists(_EVENT, max_size=25))
def test_escalation_conserves_weight(events: list[CardEvent]) -> None:
    # weight in blue cards: 1 yellow = 3 blue, 1 red = 3 yellow = 9 blue
    ledger = card_ledger(events, FACTIONS, rules=CARDS["m209"])
    for pc in ledger.players.values():
        given_weight = sum(
            n * {Card.BLUE: 1, Card.YELLOW: 3, Card.RED: 9}[c] for c, n in pc.received.items()
        )
        assert pc.blue + 3 * pc.yellow + 9 * pc.red == given_weight
        assert pc.blue < 3 and pc.yellow < 3
        assert (pc.out_at is not None) == (pc.red > 0)
