"""Properties of the zhenyan engine over random games on the rule text's 12 roles (hypothesis).

- the order the director typed the actions in never changes the result;
- nobody dies twice, nobody comes back, every death has a cause and a rule;
- 魔力点 never grows, and a finished phase at 0 or below always has a winner or waits for the
  狼王's <最后一招> (zhenyan.txt:55, 70);
- the words guessed only grow, each counted once (zhenyan.txt:168);
- the state survives its canonical JSON.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.zhenyan import guessed_words, mana
from engine.state import GameState

RS = get_ruleset("zhenyan")
ROSTER = [
    ("饺子", ["狼王"]),
    ("面条", ["狼美人"]),
    ("春卷", ["石像鬼"]),
    ("烧饼", ["蚀时狼妃"]),
    ("包子", ["长老"]),
    ("汤圆", ["预言家"]),
    ("烧卖", ["守卫"]),
    ("馄饨", ["猎魔人"]),
    ("粽子", ["村民"]),
    ("油条", ["村民"]),
    ("麻花", ["村民"]),
    ("月饼", ["村民"]),
]
NAMES = [n for n, _ in ROSTER]
NIGHT_SKILLS = ["时间吞噬", "魅惑", "守护之盾", "杀人", "狩猎", "预言", "凝视", "最后一招"]


@st.composite
def night_actions(draw: st.DrawFn) -> list[Action]:
    result = []
    for _ in range(draw(st.integers(0, 8))):
        skill = draw(st.sampled_from(NIGHT_SKILLS))
        result.append(
            Action(
                actor=draw(st.sampled_from(NAMES)),
                skill=skill,
                targets=(draw(st.sampled_from(NAMES)),),
            )
        )
    return result


@st.composite
def day_input(draw: st.DrawFn, day: int) -> DayInput:
    actions: list[Action] = []
    for _ in range(draw(st.integers(0, 2))):
        actions.append(Action("导演", "猜中", choice=str(draw(st.integers(1, 4)))))
    if draw(st.booleans()):
        actions.append(Action("饺子", "最后一招", choice="放弃"))
    return DayInput(
        day=day,
        out=draw(st.sampled_from([None, *NAMES])),
        actions=tuple(actions),
    )


def play(
    nights: list[list[Action]], days: list[DayInput], *, reverse: bool = False
) -> list[tuple[GameState, Report]]:
    state = RS.setup_state(ROSTER)
    state, report = resolve_night(state, [], RS, night=0)
    state, report = resolve_day(state, DayInput(day=1, elected="粽子", sheriff_election=True), RS)
    out = [(state, report)]
    for n, (acts, day) in enumerate(zip(nights, days, strict=False), start=1):
        if state.winner is not None:
            break
        ordered = list(reversed(acts)) if reverse else acts
        state, report = resolve_night(state, ordered, RS, night=n)
        out.append((state, report))
        if state.winner is not None:
            break
        if day.out is not None and not state.player(day.out).alive:
            day = DayInput(day=n + 1, actions=day.actions)
        else:
            day = DayInput(day=n + 1, out=day.out, actions=day.actions)
        state, report = resolve_day(state, day, RS)
        out.append((state, report))
    return out


@st.composite
def games(draw: st.DrawFn) -> tuple[list[list[Action]], list[DayInput]]:
    n = draw(st.integers(1, 4))
    nights = [draw(night_actions()) for _ in range(n)]
    days = [draw(day_input(i + 2)) for i in range(n)]
    return nights, days


def digest(run: list[tuple[GameState, Report]]) -> list[Any]:
    return [(s.to_json(), [d.player for d in r.deaths], r.winner) for s, r in run]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_the_typing_order_never_changes_the_result(game: Any) -> None:
    nights, days = game
    assert digest(play(nights, days)) == digest(play(nights, days, reverse=True))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_invariants(game: Any) -> None:
    nights, days = game
    run = play(nights, days)
    dead: set[str] = set()
    points = 12
    words: tuple[int, ...] = ()
    for state, report in run:
        for d in report.deaths:
            assert d.player not in dead, f"{d.player} died twice"
            assert d.cause and d.rule
            dead.add(d.player)
        assert {p.name for p in state.players if not p.alive} == dead
        assert mana(state) <= points
        points = mana(state)
        assert set(words) <= set(guessed_words(state))
        words = guessed_words(state)
        if points <= 0 and report.phase != "night:0":
            assert state.winner is not None or any(p.skill == "最后一招" for p in report.pending)
        assert GameState.from_json(state.to_json()) == state
