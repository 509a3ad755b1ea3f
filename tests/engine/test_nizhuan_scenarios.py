"""nizhuan scenario files: a roster, phases with actions, and what each phase must give.

Each file in ``scenarios/nizhuan/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words are on that line of
``../shared/rules/nizhuan.txt`` (skipped with a reason when the shared texts are absent). The
runner and the expectation keys are in ``scenario_support``.

File format (TOML)::

    title = "…"
    covers = ["骑士"]
    [[cite]]
    ref = "nizhuan.txt:24"
    words = "…"
    [setup]
    players = [["甲", "狼人", "女巫"], …]     # name, first card, second card
    [[phases]]                                 # from day 1 on (the empty night 0 is implied)
    phase = "night:1"                          # or "day:2" with out / elected
    actions = [{ actor = "丙", skill = "杀人", targets = ["辛"], choice = "…", card = "…" }]
    [phases.expect]   # the keys of scenario_support.COMMON_CHECKS; different or extra here:
    deaths = [["辛", 1, "被指杀"]]              # exact: player, card position, exact cause
    outcomes = [["丙", "杀人", "done", "reason"]]  # the skill as written (not canonical)
    winner = ""                                # the state's winner; "" = nobody yet
    # pending decisions are checked only when `pending` is given
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.kernel import Report, resolve_night
from engine.state import GameState, Phase
from tests.engine.scenario_support import (
    ScenarioSet,
    check_quotes,
    covered,
    deaths_by_position,
    load,
    outcomes_by,
    plain_day,
    play_scenario,
    raw_skill,
    state_winner,
)
from tests.engine.test_nizhuan_support import RS


def initial_state(data: dict[str, Any]) -> GameState:
    """The roster after the empty night 0 (the files start on day 1)."""
    players = [(row[0], list(row[1:])) for row in data["setup"]["players"]]
    state, _ = resolve_night(RS.setup_state(players), [], RS, night=0)
    return state


def election(ph: dict[str, Any], phase: Phase) -> bool:
    return ph.get("elected") is not None


NIZHUAN = ScenarioSet(
    "nizhuan",
    initial_state,
    day_input=plain_day(election),
    checks={
        "deaths": deaths_by_position,
        "outcomes": outcomes_by(raw_skill),
        "winner": state_winner,
    },
    pending_exact=False,
)
FILES = NIZHUAN.files


def play(path: Path) -> list[tuple[GameState, Report]]:
    """The state and report after each phase of the file."""
    return [(state, report) for _, state, report in NIZHUAN.run(load(path))]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    play_scenario(NIZHUAN, path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    check_quotes(NIZHUAN, path)


def test_every_role_is_covered() -> None:
    assert {"狼人", "蚀时狼妃", "预言家", "女巫", "猎人", "长老", "骑士", "定序王子"} <= covered(
        NIZHUAN
    )
