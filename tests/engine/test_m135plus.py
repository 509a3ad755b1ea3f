"""A rule set that extends another by one role: m135 with a 占星师, whose night skill [占星]
learns a player's actual faction (where the 预言家 learns only the surface one).

The subclass declares the role's card, skills, night step and handler, registers itself for
the test, and is dealt, resolved and tallied by the same engine and scenario runner as the
rule sets of the package.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any, ClassVar

import pytest

from engine.ballots import Ballot, BallotKind, Evidence, PlayerStatus
from engine.deal import deal
from engine.kernel import Board, DayInput, Outcome, resolve_day
from engine.night import Handler, Pass, SkillSpec, Step
from engine.rulesets import get_ruleset, register, unregister
from engine.rulesets.base import Hands
from engine.rulesets.m135 import M135, actual_faction
from engine.state import GameState
from engine.votes import DayContext, tally_votes
from tests.engine.scenario_support import ScenarioSet, plain_day

STAR = "占星"
STAR_RULE = "m135plus.txt:1"


class M135Plus(M135):
    """m135 with a 占星师 in place of one 村民."""

    id: ClassVar[str] = "m135plus"
    name: ClassVar[str] = "[M135+]『让子弹飞』占星版"
    aliases: ClassVar[tuple[str, ...]] = ()

    deck: ClassVar[Mapping[str, int]] = {**M135.deck, "村民": M135.deck["村民"] - 1, "占星师": 1}
    hands: ClassVar[Hands | None] = replace(M135.hands, deck=deck) if M135.hands else None
    god_roles: ClassVar[tuple[str, ...]] = (*M135.god_roles, "占星师")
    roles: ClassVar[Mapping[str, tuple[str, ...]]] = {**M135.roles, "占星师": (STAR,)}
    specs: ClassVar[Mapping[str, SkillSpec]] = {
        **M135.specs,
        STAR: SkillSpec(STAR, STAR_RULE, step=(4, 1)),
    }
    skill_specs: ClassVar[Mapping[str, SkillSpec]] = specs
    # after 预言 and before 杀人
    night_plan: ClassVar[tuple[Step, ...]] = (
        *M135.night_plan,
        Step((4, 1), STAR, (STAR,), STAR_RULE),
    )

    def night_handlers(self) -> dict[str, Handler]:
        return {**super().night_handlers(), STAR: self._h_star}

    def _h_star(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        text = f"占星：{target}的实际阵营为{actual_faction(board.player(target))}。"
        board.tell(p.action.actor, text, STAR_RULE)
        return Outcome.DONE, text


@pytest.fixture
def plus() -> Iterator[M135Plus]:
    register(M135Plus.id, M135Plus)
    try:
        rs = get_ruleset(M135Plus.id)
        assert isinstance(rs, M135Plus)
        yield rs
    finally:
        unregister(M135Plus.id)


PLAYERS = [
    ["饺子", "村民", "隐狼"],
    ["面条", "狼人", "村民"],
    ["烧卖", "占星师", "村民"],
    ["包子", "预言家", "村民"],
    ["汤圆", "守卫", "村民"],
]

SCENARIO: dict[str, Any] = {
    "setup": {"players": PLAYERS},
    "phases": [
        {"phase": "night:0"},
        {"phase": "day:1", "elected": "包子"},
        {
            "phase": "night:1",
            "actions": [
                {"actor": "烧卖", "skill": STAR, "targets": ["饺子"]},
                {"actor": "包子", "skill": "预言", "targets": ["饺子"]},
                {"actor": "汤圆", "skill": "守护之盾", "targets": ["烧卖"]},
                {"actor": "面条", "skill": "杀人", "targets": ["烧卖"]},
            ],
            "expect": {
                "feedback": [
                    ["烧卖", "占星：饺子的实际阵营为狼人阵营"],
                    ["包子", "预言：饺子的表面阵营为村民阵营"],
                ],
                "outcomes": [["烧卖", STAR, "done"], ["面条", "杀人", "blocked", "守护之盾"]],
                "deaths": [],
            },
        },
    ],
}


def initial_state(data: dict[str, Any]) -> GameState:
    players = [(row[0], list(row[1:])) for row in data["setup"]["players"]]
    return get_ruleset(M135Plus.id).setup_state(players)


def test_the_new_card_is_dealt(plus: M135Plus) -> None:
    names = [f"玩家{i:02d}" for i in range(1, 13)]
    dealt = [deal(plus, names, random.Random(seed)) for seed in range(30)]
    cards = [c for d in dealt for hand in d.cards for c in hand]
    assert all(d.ruleset == M135Plus.id and len(d.players) == 12 for d in dealt)
    assert cards.count("占星师") == 30 and cards.count("村民") == 30 * 5


def test_a_night_with_the_new_role_and_the_next_days_tally(plus: M135Plus) -> None:
    spec = ScenarioSet(M135Plus.id, initial_state, day_input=plain_day())
    state: GameState | None = None
    for ph, state, report in spec.run(SCENARIO):
        spec.check(ph, state, report, "m135plus")
    assert state is not None and state.phase.number == 1
    opens = datetime(2026, 12, 3, 12, tzinfo=timezone(timedelta(hours=8)))

    def vote(voter: str, target: str, minute: int) -> Ballot:
        at = opens + timedelta(minutes=minute)
        seen = Evidence(1, 100 + minute, minute + 2, at, f"http://x/{minute}")
        return Ballot(voter, BallotKind.VOTE, target, target, None, seen)

    ctx = DayContext(
        day=2,
        opens=opens,
        closes=opens + timedelta(hours=10),
        players=tuple(PlayerStatus(p.name) for p in state.players),
        sheriff=state.sheriff,
        modifiers=plus.vote_modifiers(state, 2),
        ruleset=M135Plus.id,
    )
    ballots = [vote("烧卖", "饺子", 1), vote("包子", "饺子", 2), vote("饺子", "烧卖", 3)]
    _verdicts, day_tally = tally_votes(ballots, ctx, plus)
    assert day_tally.out == "饺子"
    state, report = resolve_day(state, DayInput.from_tally(day_tally), plus)
    assert [(d.player, d.card) for d in report.deaths] == [("饺子", "村民")]
