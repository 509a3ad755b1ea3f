"""Whole 24-player tubian24 games, one to each faction's win (tubian24.txt:178-216).

Each game is a list of phases (night actions, or the day's vote-out and decisions) played from
the setup; the test checks the winner, that nobody wins early, and that the replay of the
recorded inputs gives the same states.
"""

from __future__ import annotations

from typing import Any

from engine.kernel import Action, DayInput, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.tubian24 import PIPER, VILLAGE, WHITE, WOLF
from engine.state import GameState

RS = get_ruleset("tubian24")

ROSTER: tuple[tuple[str, str, str], ...] = (
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
)


def setup(master: str) -> GameState:
    settings = {f"sex.{n}": s for n, _c, s in ROSTER}
    settings |= {"kill_order": "狼1,狼2,狼3,狼4,狼5,狼6,仆", "master": master}
    return RS.setup_state([(n, [c]) for n, c, _s in ROSTER], settings=settings)


def A(actor: str, skill: str, *targets: str, choice: str | None = None) -> Action:
    return Action(actor, skill, targets, choice)


def play(state: GameState, phases: list[Any]) -> tuple[GameState, list[Any]]:
    """phases: ("n", [actions]) or ("d", out, tie, [actions]); stops being playable after a win."""
    inputs: list[Any] = []
    night = 0
    for i, ph in enumerate(phases):
        assert state.winner is None, f"phase {i}: already won by {state.winner}"
        if ph[0] == "n":
            state, report = resolve_night(state, ph[1], RS, night=night)
            inputs.append(("n", night, ph[1]))
            night += 1
        else:
            _, out, tie, acts = ph
            day = DayInput(
                night,
                out=out,
                actions=tuple(acts),
                decided_by="平票，高僧[献身]" if tie else "唯一最高票",
                rule="tubian24.txt:118" if tie else "tubian24.txt:39",
            )
            state, report = resolve_day(state, day, RS)
            inputs.append(("d", day))
        assert not report.pending, f"phase {i}: pending {report.to_dict()['pending']}"
    return state, inputs


def replay(start: GameState, inputs: list[Any]) -> GameState:
    state = start
    for inp in inputs:
        if inp[0] == "n":
            state, _ = resolve_night(state, inp[2], RS, night=inp[1])
        else:
            state, _ = resolve_day(state, DayInput.from_dict(inp[1].to_dict()), RS)
    return state


def test_wolves_win_by_killing_every_villager() -> None:
    # tubian24.txt:190-192 有狼人阵营的玩家存活；村民阵营的…【民】均出局；且吹笛者阵营未达成获胜条件
    start = setup("知")
    phases: list[Any] = [
        ("n", [A("狼1", "杀人", "民1"), A("知", "预言", "狼1"), A("守", "守卫", "知")]),
        ("d", "民2", False, []),
        ("n", [A("狼1", "杀人", "民3"), A("狼2", "杀人", "知"), A("笛", "催眠", "民4", "民5")]),
        ("d", "民4", False, []),
        ("n", [A("狼2", "杀人", "民5"), A("白", "杀人", "僧")]),
        ("d", "民6", False, []),
    ]
    state, inputs = play(start, phases)
    assert state.winner == WOLF
    assert "【民】均出局" in (state.win_reason or "")
    assert replay(start, inputs) == state


def test_village_wins_when_the_three_other_factions_are_judged_lost() -> None:
    # tubian24.txt:198 狼人阵营、白眼狼、吹笛者阵营判负
    start = setup("知")
    phases: list[Any] = [
        ("n", [A("狼1", "杀人", "民1"), A("巫", "毒药", "狼1")]),
        ("d", "狼2", False, []),
        ("n", [A("狼3", "杀人", "民2"), A("守", "守卫", "民2")]),
        ("d", "猎", False, [A("猎", "最后一枪", "狼3")]),
        ("n", [A("狼4", "杀人", "民3")]),
        ("d", "狼4", False, []),
        ("n", [A("狼5", "杀人", "民4"), A("守", "守卫", "民4")]),
        ("d", "狼5", False, []),
        ("n", [A("狼6", "杀人", "民5"), A("守", "守卫", "民5")]),
        ("d", "狼6", False, []),
        ("n", [A("白", "杀人", "民6"), A("守", "守卫", "民6")]),
        ("d", "白", False, []),
        ("n", [A("笛", "催眠", "知", "守")]),
        ("d", "笛", False, []),
    ]
    state, inputs = play(start, phases)
    assert state.winner == VILLAGE
    lost = {s.holder for s in state.statuses if s.kind == "判负"}
    assert lost == {WOLF, WHITE, PIPER}
    assert replay(start, inputs) == state


def test_white_wolf_wins_after_the_wolves_surrender() -> None:
    # tubian24.txt:204-207 狼人阵营判负；有白眼狼阵营的玩家存活；…【民】均出局；
    # 吹笛者阵营未达成获胜条件
    start = setup("狼1")
    phases: list[Any] = [
        ("n", [A("狼1", "杀人", "知")]),
        ("d", None, False, [A("狼3", "投降")]),
        ("n", [A("白", "杀人", "民1")]),
        ("d", "民2", False, []),
        ("n", [A("白", "杀人", "民3")]),
        ("d", "民4", False, []),
        ("n", [A("白", "杀人", "民5")]),
        ("d", "民6", False, []),
    ]
    state, inputs = play(start, phases)
    assert state.winner == WHITE
    # ⑩ the servant of a wolf followed the surrender (tubian24.txt:159)
    assert not state.player("仆").alive
    assert replay(start, inputs) == state


def test_piper_wins_when_every_other_living_player_is_hypnotised() -> None:
    # tubian24.txt:213-214 有吹笛者阵营的玩家存活；除吹笛者阵营外所有玩家均进入“催眠状态”
    start = setup("狼1")
    phases: list[Any] = [
        ("n", [A("笛", "催眠", "知", "巫")]),
        ("d", "民1", False, [A("狼1", "投降"), A("白", "投降")]),
        ("n", [A("笛", "催眠", "守", "痴")]),
        ("d", "民2", False, []),
        ("n", [A("笛", "催眠", "长", "猎")]),
        ("d", "民3", False, []),
        ("n", [A("笛", "催眠", "僧", "傻")]),
        ("d", "民4", False, []),
        ("n", [A("笛", "催眠", "梦", "民5")]),
    ]
    state, _inputs = play(start, phases[:-1])
    assert state.winner is None
    state, _report = resolve_night(state, phases[-1][1], RS, night=4)
    assert state.winner is None  # 民6 is still awake
    state, _report = resolve_day(state, DayInput(5, out="民6"), RS)
    assert state.winner == PIPER
    assert "催眠" in (state.win_reason or "")
