"""What the nizhuan engine tests share (no tests here): a roster and phase runners."""

from __future__ import annotations

from collections.abc import Sequence

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.state import GameState

RS = get_ruleset("nizhuan")

#: 8 characters, the 16 cards of nizhuan.txt:78-112; 甲 is 狼人+女巫 like 玩家A of the example
#: (nizhuan.txt:24), 乙 holds the 骑士 first like 玩家B.
ROSTER: tuple[tuple[str, tuple[str, str]], ...] = (
    ("甲", ("狼人", "女巫")),
    ("乙", ("骑士", "村民")),
    ("丙", ("狼人", "村民")),
    ("丁", ("预言家", "定序王子")),
    ("戊", ("猎人", "村民")),
    ("己", ("长老", "村民")),
    ("庚", ("村民", "蚀时狼妃")),
    ("辛", ("村民", "村民")),
)


def start(roster: Sequence[tuple[str, Sequence[str]]] = ROSTER) -> GameState:
    """The state after the empty night 0 (nizhuan has no 第零晚)."""
    state = RS.setup_state([(n, list(c)) for n, c in roster])
    state, _ = resolve_night(state, [], RS, night=0)
    return state


def act(actor: str, skill: str, *targets: str, **kw: str) -> Action:
    return Action(actor, skill, tuple(targets), **kw)


def night(state: GameState, n: int, *actions: Action) -> tuple[GameState, Report]:
    return resolve_night(state, actions, RS, night=n)


def day(
    state: GameState,
    n: int,
    *,
    out: str | None = None,
    elected: str | None = None,
    actions: Sequence[Action] = (),
) -> tuple[GameState, Report]:
    return resolve_day(
        state,
        DayInput(
            n,
            out=out,
            elected=elected,
            sheriff_election=elected is not None,
            actions=tuple(actions),
        ),
        RS,
    )


def deaths(report: Report) -> list[tuple[str, int, str]]:
    return [(d.player, d.card_index, d.cause) for d in report.deaths]


def outcome(report: Report, actor: str, skill: str) -> tuple[str, str]:
    found = [r for r in report.actions if r.action.actor == actor and r.action.skill == skill]
    assert found, f"没有{actor}的<{skill}>结果：{[r.action.describe() for r in report.actions]}"
    return found[-1].outcome.value, found[-1].reason


def alive(state: GameState, player: str, position: int) -> bool:
    return state.player(player).cards[position - 1].alive


def through_history(state: GameState) -> GameState:
    """Days 1-4 and nights 1-4 with no outs: the 历史轮 ends at the end of night 4."""
    state, _ = day(state, 1, elected="丁的第一身份")
    for n in range(1, 5):
        state, _ = night(state, n, act("丙", "杀人", choice="放弃"))
        if n < 4:
            state, _ = day(state, n + 1)
    return state


def to_day_two(state: GameState) -> GameState:
    """Day 1 elects 丁's first card, night 1 has no kill: the state as day 2 opens."""
    state, _ = day(state, 1, elected="丁的第一身份")
    state, _ = night(state, 1, act("丙", "杀人", choice="放弃"))
    return state
