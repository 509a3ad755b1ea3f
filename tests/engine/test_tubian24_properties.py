"""Properties of the tubian24 engine over random games on the 24 identities (hypothesis).

- the order the director typed the actions in never changes the result;
- nobody dies twice, no out card comes back, and a player out at the phase's start never acts;
- every death has a cause and a rule;
- exactly one faction wins, and a faction judged lost never wins (tubian24.txt:184-185);
- replaying the recorded inputs from the setup reproduces every state (and its JSON).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.kernel import Action, DayInput, Outcome, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.tubian24 import FACTIONS, ROLE_SKILLS
from engine.state import GameState

RS = get_ruleset("tubian24")
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
NAMES = [n for n, _c, _s in ROSTER]
OWN = {
    n: [s for s in ROLE_SKILLS[c] if s in ("杀人", "预言", "救药", "毒药", "守卫", "爱慕", "催眠")]
    for n, c, _s in ROSTER
}
OWN["白"] = ["杀人"]
SKILLS = [
    "杀人",
    "预言",
    "救药",
    "毒药",
    "守卫",
    "爱慕",
    "催眠",
    "最后一枪",
    "殉职",
    "遗志",
    "投降",
]


def setup() -> GameState:
    settings_ = {f"sex.{n}": s for n, _c, s in ROSTER}
    settings_ |= {"kill_order": "狼1,狼2,狼3,狼4,狼5,狼6,仆", "master": "狼1"}
    return RS.setup_state([(n, [c]) for n, c, _s in ROSTER], settings=settings_)


@st.composite
def actions(draw: st.DrawFn) -> list[Action]:
    result = []
    for _ in range(draw(st.integers(0, 10))):
        actor = draw(st.sampled_from(NAMES))
        own = OWN[actor]
        skill = draw(
            st.sampled_from(own) if own and draw(st.booleans()) else st.sampled_from(SKILLS)
        )
        n = draw(st.sampled_from([1, 2])) if skill == "催眠" else 0 if skill == "投降" else 1
        targets = tuple(draw(st.lists(st.sampled_from(NAMES), min_size=n, max_size=n)))
        choice = draw(st.sampled_from([None, None, "放弃"])) if skill == "最后一枪" else None
        result.append(Action(actor, skill, targets, choice))
    return result


def game(data: st.DataObject) -> list[tuple[Any, GameState, GameState, Report]]:
    """Night 0 … night 3 with random actions; the days vote out a random living player or
    tie (the 高僧 takes it while it can)."""
    state = setup()
    phases: list[tuple[Any, GameState, GameState, Report]] = []
    for night in range(4):
        acts = data.draw(actions(), label=f"night {night}")
        before = state
        state, report = resolve_night(state, acts, RS, night=night)
        phases.append((acts, before, state, report))
        if state.winner:
            break
        living = list(state.living)
        monk = [
            m.player for m in RS.vote_modifiers(state, night + 1) if m.kind.value == "tie_taker"
        ]
        tie = bool(monk) and data.draw(st.booleans(), label="tie")
        blocked = {m.player for m in RS.vote_modifiers(state, night + 1)}
        votable = [n for n in living if n not in blocked or n in monk]
        day = DayInput(
            night + 1,
            out=monk[0] if tie else data.draw(st.sampled_from([None, *votable]), label="out"),
            actions=tuple(data.draw(actions(), label=f"day {night + 1}")),
            decided_by="平票，高僧[献身]" if tie else "唯一最高票",
            rule="tubian24.txt:118" if tie else "tubian24.txt:39",
        )
        before = state
        state, report = resolve_day(state, day, RS)
        phases.append((day, before, state, report))
        if state.winner:
            break
    return phases


SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


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
def test_nobody_dies_twice_and_the_dead_never_act(data: st.DataObject) -> None:
    gone: set[str] = set()
    for _inp, before, after, report in game(data):
        uids = [d.card_uid for d in report.deaths]
        assert len(uids) == len(set(uids))
        assert not gone & set(uids)
        for d in report.deaths:
            assert d.cause and d.rule and d.step
            assert not after.player(d.player).card(d.card_uid).alive
        gone |= set(uids)
        for p in after.players:
            for c in p.cards:
                if c.uid in gone:
                    assert not c.alive
        out_at_start = {p.name for p in before.players if not p.alive}
        for r in report.actions:
            if r.action.actor in out_at_start and r.action.skill not in ("最后一枪", "遗志"):
                assert r.outcome is not Outcome.DONE, r


@SETTINGS
@given(st.data())
def test_exactly_one_faction_wins_and_a_lost_faction_never_does(data: st.DataObject) -> None:
    for _inp, _before, after, report in game(data):
        lost = {s.holder for s in after.statuses if s.kind == "判负"}
        assert lost <= set(FACTIONS)
        if after.winner is not None:
            assert after.winner in FACTIONS
            assert after.winner not in lost
            assert report.winner == after.winner
            assert sum(line.startswith("游戏结束") for line in report.public) == 1


@SETTINGS
@given(st.data())
def test_replaying_the_inputs_reproduces_every_state(data: st.DataObject) -> None:
    phases = game(data)
    state = setup()
    for inp, _before, after, _report in phases:
        if isinstance(inp, list):
            state, _ = resolve_night(state, inp, RS, night=after.phase.number)
        else:
            state, _ = resolve_day(state, DayInput.from_dict(inp.to_dict()), RS)
        assert state.digest() == after.digest()
        assert GameState.from_json(after.to_json()) == after
