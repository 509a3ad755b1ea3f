"""m135 rules outside the scenario files: the card pairs checked at load, the contract that every
role has a handler and a scenario, the night order, and the day vote feeding the engine.

Every rule checked here is quoted with its file and line; ``says`` checks the quoted words are on
that line when the shared rule texts are present beside the repository.
"""

from __future__ import annotations

import re
import tomllib
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path

import pytest

from engine.kernel import Action, DayInput, EngineError, Outcome, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.m135 import (
    DECK,
    M135,
    NIGHT_PLAN,
    ROLE_RULES,
    ROLE_SKILLS,
    SPECS,
    actual_faction,
    surface_faction,
)
from engine.state import Phase
from engine.votes import Ballot, BallotKind, DayContext, Evidence, PlayerStatus, tally_votes
from tests.engine.rule_text import rule_lines, says

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = Path(__file__).resolve().parent / "scenarios" / "m135"
RS = get_ruleset("m135")
assert isinstance(RS, M135)

DEMO = [
    ("饺子", ["狼人", "猎人"]),
    ("包子", ["预言家", "村民"]),
    ("馄饨", ["复制人", "女巫"]),
    ("面条", ["隐狼", "村民"]),
    ("烧卖", ["守卫", "长老"]),
    ("汤圆", ["狼人", "白痴"]),
    ("春卷", ["黑商", "村民"]),
    ("油条", ["魔术师", "乌鸦"]),
    ("Snow_风", ["村民", "狼人"]),
    ("粽子", ["灵能", "高级村民"]),
    ("月饼", ["潜行者", "村民"]),
    ("麻花", ["捣蛋鬼", "村民"]),
]


def lines() -> list[str]:
    return rule_lines("m135.txt")


def with_cards(**changes: list[str]) -> list[tuple[str, list[str]]]:
    return [(name, changes.get(name, cards)) for name, cards in DEMO]


# --------------------------------------------------------------------------- setup


def test_the_demo_deck_is_valid() -> None:
    says("m135.txt:5", "狼人×3，隐狼，预言家，女巫，猎人，守卫，长老，白痴，黑商，魔术师")
    assert RS.validate_setup(DEMO) == []
    assert sum(DECK.values()) == 24


def test_witch_must_be_second() -> None:
    says("m135.txt:90", "女巫身份必须作为第二身份")
    problems = RS.validate_setup(with_cards(馄饨=["女巫", "复制人"]))
    assert any("女巫身份必须作为第二身份（m135.txt:90）" in p for p in problems)
    assert any("复制人身份必须作为第一身份（m135.txt:142）" in p for p in problems)


def test_copycat_must_be_first() -> None:
    says("m135.txt:142", "复制人身份必须作为第一身份")
    problems = RS.validate_setup(with_cards(月饼=["潜行者", "复制人"], 馄饨=["村民", "女巫"]))
    assert problems == ["玩家「月饼」：复制人身份必须作为第一身份（m135.txt:142）"] or any(
        "复制人身份必须作为第一身份" in p for p in problems
    )


@pytest.mark.parametrize(
    ("cards", "why"),
    [
        (["狼人", "隐狼"], "狼人阵营身份+狼人阵营身份"),
        (["预言家", "狼人"], "预言家+狼人阵营身份"),
        (["隐狼", "预言家"], "预言家+狼人阵营身份"),
        (["复制人", "狼人"], "狼人阵营身份+狼人阵营身份"),  # the copy's faction is the wolf's
    ],
)
def test_forbidden_pairs(cards: list[str], why: str) -> None:
    says("m135.txt:16", "禁止出现的组合：狼人阵营身份+狼人阵营身份，预言家+狼人阵营身份")
    problems = RS.validate_setup([("饺子", cards), ("包子", ["村民", "村民"])])
    assert any(why in p and "m135.txt:16" in p for p in problems), problems


def test_unknown_cards_counts_and_deck() -> None:
    problems = RS.validate_setup([("饺子", ["狼人", "狼王"]), ("包子", ["村民", "村民", "村民"])])
    assert any("「狼王」不在本规则的牌组中" in p for p in problems)
    assert any("应有两张身份牌" in p and "实际有 3 张" in p for p in problems)
    problems = RS.validate_setup([("饺子", ["预言家", "村民"]), ("包子", ["预言家", "村民"])])
    assert problems == ["身份牌「预言家」出现 2 次，牌组中只有 1 张（m135.txt:5）"]
    twelve = with_cards(麻花=["村民", "村民"])
    assert RS.validate_setup(twelve) == ["身份牌「村民」出现 7 次，牌组中只有 6 张（m135.txt:5）"]


def test_no_cards_dealt_yet_is_not_a_problem() -> None:
    assert RS.validate_setup([("饺子", []), ("包子", [])]) == []


def test_setup_state_refuses_a_bad_roster_and_builds_the_wolf_group() -> None:
    with pytest.raises(EngineError, match="女巫身份必须作为第二身份"):
        RS.setup_state(with_cards(馄饨=["女巫", "复制人"]))
    state = RS.setup_state(DEMO)
    says("m135.txt:75", "游戏开始时，所有拥有<杀人>的角色互知共群")
    # 隐狼 first, 狼人 first: in the group; Snow_风 (村民 first, 狼人 second) is not yet
    assert [p.name for p in state.players if p.wolf_group] == ["饺子", "面条", "汤圆"]
    assert state.phase == Phase.setup()
    limited = {(c.card, c.skill) for c in state.charges}
    assert ("馄饨#1", "救药") in limited and ("馄饨#2", "救药") in limited  # 额外单独计算
    assert ("烧卖#2", "长寿之命") in limited


def test_factions_surface_and_actual() -> None:
    says("m135.txt:9", "其中一张属于狼人阵营时，角色的实际阵营为狼人阵营")
    says("m135.txt:40", "角色的表面阵营为当前身份牌所属阵营")
    state = RS.setup_state(DEMO)
    snow = state.player("Snow_风")
    assert surface_faction(snow) == "村民阵营" and actual_faction(snow) == "狼人阵营"
    copy = state.player("馄饨")
    assert surface_faction(copy) == "村民阵营" and actual_faction(copy) == "村民阵营"
    assert RS.actual_faction(state, "饺子") == "狼人阵营"


# --------------------------------------------------------------------------- contract


def test_every_role_in_the_rule_text_is_dealt_and_cites_its_line() -> None:
    text = lines()
    roster_line = text[4]
    for card in DECK:
        assert card in roster_line, card
        n = int(ROLE_RULES[card].split(":")[1])
        assert card in text[n - 1], (card, text[n - 1])


def test_every_role_has_skills_rules_and_handlers() -> None:
    for card in DECK:
        assert card in ROLE_SKILLS and card in ROLE_RULES
    handlers = RS.night_handlers()
    step_skills = {s for step in NIGHT_PLAN for s in step.skills}
    assert set(handlers) == step_skills
    for role, skills in ROLE_SKILLS.items():
        for skill in skills:
            spec = SPECS[skill]
            # a night skill has a handler; the others are triggers, day skills or passive
            assert skill in handlers or spec.trigger or spec.day or spec.passive, (role, skill)


def test_every_skill_cites_its_line() -> None:
    text = lines()
    for name, spec in SPECS.items():
        n = int(spec.rule.split(":")[1])
        words = name[2:] if name.startswith("馈赠") and name != "馈赠" else name
        if name in ("馈赠毒药", "馈赠最后一枪"):
            words = "馈赠"
        assert words in text[n - 1], (name, spec.rule, text[n - 1])


def test_every_role_has_a_scenario() -> None:
    covered: set[str] = set()
    for path in SCENARIOS.glob("*.toml"):
        covered |= set(tomllib.loads(path.read_text(encoding="utf-8"))["covers"])
    missing = [role for role in (*DECK, "警长") if role not in covered]
    assert missing == []


def test_night_order_is_the_rule_texts() -> None:
    says(
        "m135.txt:172",
        "进入夜晚，以下技能依次发动。同级理论上互不影响，如有矛盾按照从左至右依次发动。",
    )
    order = [(step.key, step.skills) for step in sorted(NIGHT_PLAN, key=lambda s: s.key)]
    assert order == [
        ((1, 0), ("捣蛋",)),
        ((2, 0), ("交换",)),
        ((3, 0), ("守护之盾",)),
        ((4, 0), ("预言", "馈赠预言", "馈赠", "诽谤", "感知")),
        ((5, 0), ("杀人",)),
        ((6, 0), ("潜行",)),
        ((7, 0), ("救药", "毒药", "馈赠毒药")),
    ]


def test_every_night_step_cites_its_line() -> None:
    text = lines()
    for step in NIGHT_PLAN:
        n = int(step.rule.split(":")[1])
        assert re.match(rf"（{step.key[0]}）", text[n - 1]), text[n - 1]
        for skill in step.skills:
            assert skill.removeprefix("馈赠") in text[n - 1] or skill == "馈赠预言"


# --------------------------------------------------------------------------- the day

TZ = timezone(timedelta(hours=8))
OPENS = datetime(2026, 12, 3, 9, 0, tzinfo=TZ)
CLOSES = datetime(2026, 12, 3, 22, 0, tzinfo=TZ)


def ballot(voter: str, target: str, minute: int) -> Ballot:
    at = OPENS + timedelta(minutes=minute)
    return Ballot(
        voter=voter,
        kind=BallotKind.VOTE,
        target=target,
        target_raw=target,
        problem=None,
        evidence=Evidence(1, 100 + minute, minute + 2, at, f"http://x/{minute}"),
    )


def day_context(state, day: int) -> DayContext:
    players = tuple(PlayerStatus(p.name, out_at=None if p.alive else OPENS) for p in state.players)
    return DayContext(
        day=day,
        opens=OPENS,
        closes=CLOSES,
        players=players,
        sheriff=state.sheriff,
        modifiers=RS.vote_modifiers(state, day),
        ruleset="m135",
    )


def test_slander_adds_a_vote_on_the_next_days_tally_and_the_result_applies() -> None:
    says("m135.txt:120", "结算目标在放逐投票中被投票数多计一票")
    cards = with_cards(油条=["乌鸦", "魔术师"])
    state = RS.setup_state(cards)
    state, _ = resolve_night(state, [], RS)
    state, _ = resolve_day(state, DayInput(1, elected="包子", sheriff_election=True), RS)
    state, report = resolve_night(state, [Action("油条", "诽谤", ("春卷",))], RS)
    assert "春卷被诽谤（放逐投票中多计一票）" in report.public
    mods = RS.vote_modifiers(state, 2)
    assert [(m.player, m.value, m.source) for m in mods] == [("春卷", Fraction(1), "乌鸦[诽谤]")]
    assert RS.vote_modifiers(state, 3) == ()
    # 2 votes for 月饼, 2 for 春卷 (+1 slander) → 春卷 is the unique top
    ballots = [ballot("饺子", "月饼", 1), ballot("面条", "月饼", 2)]
    ballots += [ballot("馄饨", "春卷", 3), ballot("麻花", "春卷", 4)]
    _, day_tally = tally_votes(ballots, day_context(state, 2), RS)
    assert day_tally.out == "春卷" and day_tally.counts["春卷"] == 3
    state, report = resolve_day(state, DayInput.from_tally(day_tally), RS)
    assert [(d.player, d.card, d.cause) for d in report.deaths] == [("春卷", "黑商", "投票出局")]
    assert set(state.voters) == {"饺子", "面条", "馄饨", "麻花"} and state.voters_day == 2


def test_a_tie_puts_out_the_sheriffs_target() -> None:
    says("m135.txt:51", "若警长没有弃权，则警长投票的对象出局，否则无人出局")
    state = RS.setup_state(DEMO)
    state, _ = resolve_night(state, [], RS)
    state, _ = resolve_day(state, DayInput(1, elected="包子", sheriff_election=True), RS)
    state, _ = resolve_night(state, [], RS)
    # 月饼 2, 面条 2: a tie; the sheriff 包子 (1.5) voted 烧卖, who is out (the literal reading,
    # docs/rulings.md#m135-tie-literal)
    ballots = [
        ballot("饺子", "月饼", 1),
        ballot("馄饨", "月饼", 2),
        ballot("包子", "烧卖", 3),
        ballot("麻花", "面条", 4),
        ballot("春卷", "面条", 5),
    ]
    _, day_tally = tally_votes(ballots, day_context(state, 2), RS)
    assert day_tally.tie == ["月饼", "面条"] and day_tally.out == "烧卖"
    state, report = resolve_day(state, DayInput.from_tally(day_tally), RS)
    assert [(d.player, d.card) for d in report.deaths] == [("烧卖", "守卫")]
    assert state.player("烧卖").current is not None  # 长老 is now current


def test_red_card_sheriff_hand_over_is_drawn_from_the_seed() -> None:
    says("m135.txt:150", "警长因红牌罚下出局，警徽随机移交")
    state = RS.setup_state(DEMO)
    state, _ = resolve_night(state, [], RS)
    state, _ = resolve_day(state, DayInput(1, elected="包子", sheriff_election=True), RS)
    red = Action("包子", "红牌罚下", choice="m135-demo:包子:2026-12-02T20:00:00+08:00")
    first, r1 = resolve_night(state, [red], RS)
    again, r2 = resolve_night(state, [red], RS)
    assert first.sheriff == again.sheriff and first.sheriff in first.living
    assert first.sheriff != "包子"
    other, _ = resolve_night(state, [Action("包子", "红牌罚下", choice="另一个种子")], RS)
    assert other.sheriff in other.living
    assert r1.to_dict() == r2.to_dict()
    assert any("警徽随机移交给" in line for line in r1.public)


def test_phase_order_and_game_over_are_enforced() -> None:
    state = RS.setup_state(DEMO)
    with pytest.raises(EngineError, match="结算顺序不对：当前状态停在开局，下一个应结算第0晚"):
        resolve_day(state, DayInput(1), RS)
    with pytest.raises(EngineError, match="而不是第2晚"):
        resolve_night(state, [], RS, night=2)
    state, _ = resolve_night(state, [], RS)
    over, report = resolve_day(state, DayInput(1, actions=(Action("饺子", "投降"),)), RS)
    assert report.winner is None  # Snow_风 (狼人 second) has not joined yet
    outcome = report.actions[0]
    assert outcome.outcome is Outcome.INVALID and "Snow_风" in outcome.reason
    done, report = resolve_night(over, [Action("面条", "判负", choice="狼人阵营")], RS)
    # 判负 is the director's (two red cards in a faction, m135.txt:245)
    says("m135.txt:245", "同一阵营的角色累计获得两张或以上红牌时，阵营判负")
    assert report.winner == "村民阵营"
    with pytest.raises(EngineError, match="游戏已结束"):
        resolve_day(done, DayInput(2), RS)


def test_an_exiled_player_who_is_already_out_is_an_error() -> None:
    state = RS.setup_state(DEMO)
    state, _ = resolve_night(state, [], RS)
    with pytest.raises(EngineError, match="当选警长的某人已出局（或不在名单中）"):
        resolve_day(state, DayInput(1, elected="某人", sheriff_election=True), RS)


def test_unknown_skills_and_other_cards_skills_are_reported() -> None:
    says("m135.txt:12", "除隐狼外，角色只拥有当前身份的技能")
    state = RS.setup_state(DEMO)
    _, report = resolve_night(
        state,
        [
            Action("饺子", "开枪", ("包子",)),
            Action("烧卖", "长寿之命"),
            Action("油条", "诽谤", ("饺子",)),
        ],
        RS,
    )
    reasons = {r.action.skill: (r.outcome, r.reason) for r in report.actions}
    assert reasons["开枪"][0] is Outcome.INVALID and "没有名为<开枪>的技能" in reasons["开枪"][1]
    assert reasons["长寿之命"][0] is Outcome.FIZZLED and "自动结算" in reasons["长寿之命"][1]
    assert reasons["诽谤"][0] is Outcome.INVALID


def test_skill_name_aliases() -> None:
    assert RS.canonical_skill(" <毒药> ") == "毒药"
    assert RS.canonical_skill("黑商馈赠毒药") == "馈赠毒药"
    assert RS.canonical_skill("守护") == "守护之盾"
    assert "红牌罚下" in RS.skill_names()
