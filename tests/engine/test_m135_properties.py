"""Properties of the m135 engine over random games on the rule text's 24 cards (hypothesis).

- the order the director typed the actions in never changes the result;
- nobody dies twice (no card goes out twice, no out card comes back);
- dead cards never act (an action of a character out at the phase's start is never done);
- every death has a cause and a rule;
- replaying the recorded inputs from the setup reproduces every state (and its JSON).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.kernel import Action, DayInput, Outcome, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.m135 import ROLE_SKILLS
from engine.state import GameState

RS = get_ruleset("m135")
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
NAMES = [n for n, _ in DEMO]
#: the skills each character's two cards have (a 复制人 copies its partner)
OWN_SKILLS = {
    name: [
        s
        for card in cards
        for s in ROLE_SKILLS[cards[1] if card == "复制人" else card]
        if s not in ("通灵", "长寿之命", "村镇之殇")
    ]
    for name, cards in DEMO
}
SKILLS = [
    "杀人",
    "预言",
    "救药",
    "毒药",
    "守护之盾",
    "馈赠",
    "交换",
    "诽谤",
    "感知",
    "潜行",
    "捣蛋",
    "最后一枪",
    "殉职",
    "馈赠毒药",
    "馈赠预言",
    "馈赠最后一枪",
    "翻牌",
    "装傻",
]


@st.composite
def actions(draw: st.DrawFn, *, day: bool = False) -> list[Action]:
    result = []
    for _ in range(draw(st.integers(0, 9))):
        actor = draw(st.sampled_from(NAMES))
        own = OWN_SKILLS[actor]
        skill = draw(
            st.sampled_from(own) if own and draw(st.booleans()) else st.sampled_from(SKILLS)
        )
        n = 2 if skill == "交换" else draw(st.sampled_from([0, 1, 1, 1]))
        targets = tuple(draw(st.lists(st.sampled_from(NAMES), min_size=n, max_size=n)))
        choice = None
        if skill == "馈赠":
            choice = draw(st.sampled_from(["预言", "毒药", "最后一枪"]))
        elif skill == "感知":
            choice = draw(st.sampled_from([None, "第一身份", "第二身份"]))
        elif skill in ("最后一枪", "装傻"):
            choice = draw(st.sampled_from([None, None, "放弃"]))
        result.append(Action(actor, skill, targets, choice))
    return result


def game(data: st.DataObject) -> list[tuple[Any, GameState, GameState, Report]]:
    """Night 0 … night 3 with random actions; the days vote out a random living player."""
    state = RS.setup_state(DEMO)
    phases: list[tuple[Any, GameState, GameState, Report]] = []
    for night in range(4):
        acts = data.draw(actions(), label=f"night {night}")
        before = state
        state, report = resolve_night(state, acts, RS, night=night)
        phases.append((acts, before, state, report))
        if state.winner:
            break
        living = list(state.living)
        day_n = night + 1
        if day_n == 1:
            elected = data.draw(st.sampled_from([None, *living]), label="elected")
            day = DayInput(
                1,
                elected=elected,
                sheriff_election=True,
                voters=tuple(data.draw(st.lists(st.sampled_from(living), unique=True))),
            )
        else:
            day = DayInput(
                day_n,
                out=data.draw(st.sampled_from([None, *living]), label=f"out {day_n}"),
                voters=tuple(data.draw(st.lists(st.sampled_from(living), unique=True))),
                actions=tuple(data.draw(actions(day=True), label=f"day {day_n}")),
            )
        before = state
        state, report = resolve_day(state, day, RS)
        phases.append((day, before, state, report))
        if state.winner:
            break
    return phases


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(st.data())
def test_input_order_never_changes_the_result(data: st.DataObject) -> None:
    for inp, before, after, report in game(data):
        if not isinstance(inp, list):
            continue
        shuffled = data.draw(st.permutations(inp), label="shuffled")
        again, report2 = resolve_night(before, shuffled, RS, night=int(after.phase.number))
        assert again == after
        assert report2.to_dict() == report.to_dict()


@SETTINGS
@given(st.data())
def test_nobody_dies_twice_dead_cards_never_act_every_death_has_a_cause(
    data: st.DataObject,
) -> None:
    gone: set[str] = set()
    for _inp, before, after, report in game(data):
        uids = [d.card_uid for d in report.deaths]
        assert len(uids) == len(set(uids))
        assert not gone & set(uids)
        for d in report.deaths:
            assert d.cause and d.rule and d.step
            assert not after.player(d.player).card(d.card_uid).alive
        gone |= set(uids)
        # no out card comes back
        for p in after.players:
            for c in p.cards:
                if c.uid in gone:
                    assert not c.alive
        out_at_start = {p.name for p in before.players if not p.alive}
        for r in report.actions:
            if r.action.actor in out_at_start:
                assert r.outcome is not Outcome.DONE, r


@SETTINGS
@given(st.data())
def test_replaying_the_inputs_reproduces_every_state(data: st.DataObject) -> None:
    phases = game(data)
    state = RS.setup_state(DEMO)
    for inp, _before, after, _report in phases:
        if isinstance(inp, list):
            state, _ = resolve_night(state, inp, RS, night=after.phase.number)
        else:
            state, _ = resolve_day(state, DayInput.from_dict(inp.to_dict()), RS)
        assert state.digest() == after.digest()
        assert GameState.from_json(after.to_json()) == after
