"""m135 scenario files: setup, actions per phase, expected deaths, feedback, public lines, winner.

Each file in ``scenarios/m135/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words really are on that line of
``../shared/rules/m135.txt`` (skipped with a reason when the shared texts are absent). The
runner and the expectation keys are in ``scenario_support``.

File format (TOML)::

    title = "…"
    covers = ["女巫"]                      # roles / rules the file checks (contract test)
    [[cite]]
    ref = "m135.txt:92"
    words = "结算目标的当前身份当晚不会因<杀人>出局"
    [setup]
    players = [["饺子", "狼人", "村民"], …]  # name, first card, second card
    start = "day:1"                         # optional: begin after this phase
    sheriff = "包子"                        # optional
    settings = { effects_bind = "action" }  # optional
    out = ["馄饨"]                           # optional: these current cards start out
    gifts = [["烧卖", "毒药"]]               # optional: 馈赠 skills already held
    voters = ["饺子"]                        # optional: who voted on the start day
    [[phases]]
    phase = "night:1"                       # or "day:2" with out / elected / voters
    actions = [{ actor = "饺子", skill = "杀人", targets = ["包子"] }]
    [phases.expect]   # the keys of scenario_support.COMMON_CHECKS; different or extra here:
    charges = [["馄饨", "毒药", 0]]          # the current card's charge of that skill
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.rulesets import get_ruleset
from engine.state import GameState, Phase
from tests.engine.scenario_support import (
    ScenarioSet,
    check_quotes,
    current_card_charges,
    gifts_held,
    out_before_start,
    plain_day,
    play_scenario,
)

RS = get_ruleset("m135")


def initial_state(data: dict[str, Any]) -> GameState:
    setup = data["setup"]
    players = [(row[0], list(row[1:])) for row in setup["players"]]
    state = RS.setup_state(players, settings=setup.get("settings"))
    state = out_before_start(state, setup.get("out", []), "场景设定：开局前出局")
    state = gifts_held(state, setup.get("gifts", []))
    if "start" in setup:
        state = replace(state, phase=Phase.parse(setup["start"]))
    if "sheriff" in setup:
        state = replace(state, sheriff=setup["sheriff"])
    if "voters" in setup:
        state = replace(
            state,
            voters_day=Phase.parse(setup["start"]).number,
            voters=tuple(setup["voters"]),
            vote_cards=tuple(
                (p.name, p.current.uid) for p in state.players if p.current is not None
            ),
        )
    return state


def election(ph: dict[str, Any], phase: Phase) -> bool:
    return bool(ph.get("elected")) or phase.number == 1


M135 = ScenarioSet(
    "m135",
    initial_state,
    day_input=plain_day(election),
    checks={"charges": current_card_charges},
)
FILES = M135.files


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    play_scenario(M135, path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    check_quotes(M135, path)


def test_there_are_scenarios() -> None:
    assert len(FILES) >= 20
