"""tubian24 opening: the deal (24 identities, 盗贼's substitution and buried cards), the director's
opening settings ([tubian24] table: kill_order, master, thief, sex) and the vote modifiers."""

from __future__ import annotations

import re
import tomllib

import pytest

from engine.kernel import EngineError
from engine.rulesets import get_ruleset
from engine.rulesets.tubian24 import DECK, PIPER, VILLAGE, WOLF
from tests.engine.rule_text import rule_lines

RS = get_ruleset("tubian24")

#: The 24 identities of tubian24.txt:13 once 盗贼 took its own card back (a standard game).
STANDARD = [c for c, n in DECK.items() if c != "盗贼" for _ in range(n)]


def roster(cards: list[str]) -> list[tuple[str, list[str]]]:
    return [(f"p{i:02d}", [c]) for i, c in enumerate(cards)]


def test_the_standard_deal_is_valid() -> None:
    # tubian24.txt:13 "24人局（6村民，6狼人，1女巫，1先知，1守护，1情痴，1村长，1猎人，
    # 1高僧，1白痴，1梦中人，1白眼狼，1仆人，1吹笛者，1盗贼）"
    assert len(STANDARD) == 24
    assert RS.validate_setup(roster(STANDARD)) == []


def test_a_thief_wolf_buries_one_village_card() -> None:
    # tubian24.txt:167 "盗贼若获得了【狼人】的身份，且开局狼群只有7人时，本局为埋身份局，一定有一张
    # 【验人系】【特】【俗】【村民】【白眼狼】【吹笛者】【仆人】的身份本局不存在。"
    cards = list(STANDARD)
    cards[cards.index("守护")] = "狼人"
    assert RS.validate_setup(roster(cards)) == []
    state = RS.setup_state(roster(cards))
    assert sum(p.wolf_group for p in state.players) == 7


def test_a_thief_never_lowers_the_wolves_below_six_nor_removes_the_white_wolf() -> None:
    # tubian24.txt:162 "（即：不会因为盗贼的存在导致狼的数量少于6或不存在白眼狼）"
    fewer_wolves = list(STANDARD)
    fewer_wolves[fewer_wolves.index("狼人")] = "村民"
    problems = RS.validate_setup(roster(fewer_wolves))
    assert any("非狼人、非白眼狼" in p for p in problems)
    no_white = list(STANDARD)
    no_white[no_white.index("白眼狼")] = "村民"
    assert RS.validate_setup(roster(no_white))


def test_the_thief_picks_blindly_from_three_cards() -> None:
    # tubian24.txt:164 "盗贼只能从身份1、身份2和身份3中进行选择，并不能提前知道三张身份是什么。
    # 盗贼将自己的身份牌修改为自己选择的身份"
    cards = list(STANDARD)
    cards[cards.index("先知")] = "盗贼"
    state = RS.setup_state(
        roster(cards), settings={"thief_cards": "先知,村民,狼人", "thief_pick": "2"}
    )
    thief = state.player(f"p{cards.index('盗贼'):02d}")
    assert thief.cards[0].name == "村民"  # 先知 is buried (tubian24.txt:168)
    assert ("thief", thief.name) in state.settings
    with pytest.raises(EngineError, match="thief_cards"):
        RS.setup_state(roster(cards))


def test_a_deal_that_still_lists_the_thief_is_valid() -> None:
    # tubian24.txt:162 "导演将从其他24个身份中抽出一张替换为盗贼": the 盗贼 holds the drawn
    # card's place, so the other 23 are the 24 identities less that card
    for drawn in ("先知", "村民", "狼人", "白眼狼", "仆人"):
        cards = list(STANDARD)
        cards[cards.index(drawn)] = "盗贼"
        assert RS.validate_setup(roster(cards)) == [], drawn
    # … but with 盗贼 still dealt, no identity may be over its count (tubian24.txt:13)
    cards = list(STANDARD)
    cards[cards.index("先知")] = "盗贼"
    cards[cards.index("守护")] = "村民"
    assert RS.validate_setup(roster(cards)) == [
        "身份「村民」出现 7 次，最多 6 次；身份牌仍是盗贼时，其余身份按 24 人局的张数"
        "（tubian24.txt:13, 162）"
    ]


def test_the_three_cards_may_come_in_any_order() -> None:
    # tubian24.txt:162 "盗贼从这张身份和一张【村民】、一张【狼人】中盲选一张" — 村民 drawn: the
    # three are 村民, 村民, 狼人, whichever the director lists first
    cards = list(STANDARD)
    cards[cards.index("村民")] = "盗贼"
    thief = f"p{cards.index('盗贼'):02d}"
    state = RS.setup_state(
        roster(cards), settings={"thief_cards": "狼人,村民,村民", "thief_pick": "1"}
    )
    assert state.player(thief).cards[0].name == "狼人"
    assert sum(p.wolf_group for p in state.players) == 7  # tubian24.txt:167 埋身份局


def test_the_three_cards_must_hold_the_card_the_deal_lacks() -> None:
    # tubian24.txt:162 "盗贼从这张身份…中盲选一张": "这张" is the card drawn from the deal
    cards = list(STANDARD)
    cards[cards.index("先知")] = "盗贼"
    with pytest.raises(EngineError) as info:
        RS.setup_state(roster(cards), settings={"thief_cards": "守护,村民,狼人", "thief_pick": "2"})
    assert "thief_cards 中抽出的身份是「守护」，但发牌中被盗贼换走的是「先知」" in str(info.value)
    thief = f"p{cards.index('盗贼'):02d}"
    # the picked card written directly must be the one the pick names (tubian24.txt:164)
    written = list(cards)
    written[written.index("盗贼")] = "狼人"
    with pytest.raises(EngineError) as info:
        RS.setup_state(
            roster(written),
            settings={"thief_cards": "先知,村民,狼人", "thief_pick": "2", "thief": thief},
        )
    assert f"盗贼「{thief}」的身份牌写的是「狼人」，但 thief_cards 的第2张是「村民」" in str(
        info.value
    )
    with pytest.raises(EngineError, match=f"身份牌为盗贼的是「{thief}」"):
        RS.setup_state(
            roster(cards),
            settings={"thief_cards": "先知,村民,狼人", "thief_pick": "2", "thief": "p00"},
        )


def test_drawn_wolf_or_white_wolf_makes_all_three_cards_that_identity() -> None:
    # tubian24.txt:162 "若抽出的一张身份为【狼人】或【白眼狼】，则三张备选身份均修改为
    # 【狼人】或【白眼狼】"
    cards = list(STANDARD)
    cards[cards.index("白眼狼")] = "盗贼"
    state = RS.setup_state(
        roster(cards), settings={"thief_cards": "白眼狼,白眼狼,白眼狼", "thief_pick": "3"}
    )
    assert [p.cards[0].name for p in state.players].count("白眼狼") == 1
    with pytest.raises(EngineError, match="三张备选"):
        RS.setup_state(
            roster(cards), settings={"thief_cards": "白眼狼,村民,狼人", "thief_pick": "3"}
        )


def test_opening_settings_are_checked() -> None:
    # tubian24.txt:74 出刀优先级 1-8; tubian24.txt:147 仆人选择一名角色作为主人
    players = roster(STANDARD)
    with pytest.raises(EngineError, match="kill_order"):
        RS.setup_state(players, settings={"kill_order": "nobody"})
    servant = next(n for n, c in players if c == ["仆人"])
    with pytest.raises(EngineError, match="仆人不能选择自己"):
        RS.setup_state(players, settings={"master": servant})
    with pytest.raises(EngineError, match="男 或 女"):
        RS.setup_state(players, settings={"sex.p00": "x"})


def test_the_servant_joins_its_masters_faction() -> None:
    # tubian24.txt:147 "仆人选择一名角色作为主人，并转入相同阵营，拥有和主人相同的获胜条件"
    players = roster(STANDARD)
    servant = next(n for n, c in players if c == ["仆人"])
    wolf = next(n for n, c in players if c == ["狼人"])
    piper = next(n for n, c in players if c == ["吹笛者"])
    seer = next(n for n, c in players if c == ["先知"])
    for master, faction in ((wolf, WOLF), (piper, PIPER), (seer, VILLAGE)):
        state = RS.setup_state(players, settings={"master": master})
        assert RS.actual_faction(state, servant) == faction
        # ⑩: not in the wolf group before [变身] (tubian24.txt:159)
        assert not state.player(servant).wolf_group


GAME_FILE = """
[game]
id = "t24"
title = "网杀变异屠边"
ruleset = "tubian24"
timezone = "Asia/Shanghai"
[forum]
base_url = "http://127.0.0.1:8080/"
[director]
names = ["导演"]
[[players]]
name = "甲"
uid = 1
sex = "男"
cards = ["狼人"]
[[players]]
name = "乙"
uid = 2
sex = "女"
cards = ["仆人"]
[[players]]
name = "丙"
uid = 3
sex = "女"
cards = ["梦中人"]
[tubian24]
kill_order = ["甲", "乙"]
master = "甲"
"""


def test_settings_from_the_game_file() -> None:
    from pipeline.game.gamefile import Game

    # the rest of the 24 (tubian24.txt:13) not dealt yet: the file's line-up check waits for
    # every player's cards
    rest = "".join(
        f'[[players]]\nname = "玩家{i}"\nuid = {100 + i}\nsex = "男"\n' for i in range(21)
    )
    text = GAME_FILE.replace("[tubian24]", rest + "[tubian24]")
    game = Game.model_validate(_split(tomllib.loads(text)))
    settings = RS.settings_from_game(game)  # type: ignore[attr-defined]
    settings = {k: v for k, v in settings.items() if "玩家" not in k}
    assert settings == {
        "sex.甲": "男",
        "sex.乙": "女",
        "sex.丙": "女",
        "kill_order": "甲,乙",
        "master": "甲",
    }
    dealt = [(p.name, list(p.cards)) for p in game.players if p.cards]
    state = RS.setup_state(dealt, settings=settings)
    assert RS.actual_faction(state, "乙") == WOLF


def _split(data: dict[str, object]) -> dict[str, object]:
    out = dict(data)
    out["secrets"] = out.pop("tubian24")
    return out


def test_unknown_secret_keys_are_refused() -> None:
    class Fake:
        def __init__(self) -> None:
            self.players: tuple[object, ...] = ()
            self.secrets = {"kill_oder": ["甲"]}

    with pytest.raises(EngineError, match="kill_oder"):
        RS.settings_from_game(Fake())  # type: ignore[attr-defined]


def test_rulings_cite_the_text() -> None:
    from engine.rulesets.tubian24 import RULINGS

    assert RULINGS and all("tubian24.txt:" in r for r in RULINGS)


def test_the_rulings_cited_lines_hold_text() -> None:
    from engine.rulesets.tubian24 import RULINGS

    lines = rule_lines("tubian24.txt")
    cited = [int(n) for r in RULINGS for n in re.findall(r"tubian24\.txt:(\d+)", r)]
    assert cited and all(lines[n - 1].strip() for n in cited), cited
