"""nizhuan properties (hypothesis): the order actions are typed in never matters, nobody dies
twice, every death has a cause, the state survives JSON, and replaying gives the same game."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.kernel import Action
from engine.state import GameState
from tests.engine.test_nizhuan_scenarios import FILES, play
from tests.engine.test_nizhuan_support import ROSTER, RS, act, day, night, start

NAMES = [n for n, _c in ROSTER]
SKILLS = ["杀人", "预言", "救药", "毒药", "时间吞噬", "重定之理", "最后一枪", "殉职"]
CARDS = [None, "第一身份", "第二身份"]

action = st.builds(
    lambda actor, skill, target, choice: Action(actor, skill, (target,), choice=choice),
    st.sampled_from(NAMES),
    st.sampled_from(SKILLS),
    st.sampled_from(NAMES),
    st.sampled_from(CARDS),
)


def _round_two() -> GameState:
    state = start()
    state, _ = day(state, 1, elected="丁的第一身份")
    state, _ = night(state, 1, act("丙", "杀人", "辛"), act("丁", "预言", "甲"))
    state, _ = day(state, 2, actions=[act("乙", "决斗", "甲")])
    state, _ = night(state, 2, act("丙", "杀人", "戊"), act("戊", "最后一枪", "己"))
    state, _ = day(state, 3, out="丙的第一身份")
    state, _ = night(state, 3)
    state, _ = day(state, 4, elected="丁的第二身份")
    return state


ROUND_ONE = day(start(), 1, elected="丁的第一身份")[0]
ROUND_TWO = _round_two()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(action, max_size=6), st.randoms(use_true_random=False), st.booleans())
def test_order_of_actions_does_not_matter(actions: list[Action], rnd, second: bool) -> None:  # type: ignore[no-untyped-def]
    state, n = (ROUND_TWO, 4) if second else (ROUND_ONE, 1)
    shuffled = list(actions)
    rnd.shuffle(shuffled)
    a_state, a_report = night(state, n, *actions)
    b_state, b_report = night(state, n, *shuffled)
    assert a_state.digest() == b_state.digest()
    assert a_report.to_dict()["deaths"] == b_report.to_dict()["deaths"]
    # nobody dies twice; every death has a cause
    uids = [d.card_uid for d in a_report.deaths]
    assert len(uids) == len(set(uids))
    assert all(d.cause and d.rule for d in a_report.deaths)
    # every input action is answered
    assert len([r for r in a_report.actions if r.action.ref == ""]) >= len(actions) - sum(
        1 for a in actions if a.skill in ("最后一枪", "殉职")
    )
    # the state is a value: JSON round trip
    assert GameState.from_json(a_state.to_json()) == a_state


def test_replay_is_deterministic() -> None:
    for path in FILES:
        first = [(s.digest(), r.to_dict()) for s, r in play(path)]
        again = [(s.digest(), r.to_dict()) for s, r in play(path)]
        assert first == again, path.name


def test_resuming_from_json_gives_the_same_game() -> None:
    restored = GameState.from_json(ROUND_TWO.to_json())
    a, ra = night(ROUND_TWO, 4, act("甲", "毒药", "乙的第一身份"))
    b, rb = night(restored, 4, act("甲", "毒药", "乙的第一身份"))
    assert a.digest() == b.digest() and ra.to_dict() == rb.to_dict()
    assert RS.id == a.ruleset
