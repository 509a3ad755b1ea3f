"""m209 scenario files: a drawn line-up, actions per phase, expected deaths, feedback, winner.

Each file in ``scenarios/m209/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words are on that line of
``../shared/rules/m209.txt`` (skipped with a reason when the shared texts are absent). The
runner and the expectation keys are in ``scenario_support``.

File format (TOML)::

    title = "…"
    covers = ["女巫"]                        # roles / rules the file checks (contract test)
    [[cite]]
    ref = "m209.txt:301"
    words = "对结算目标造成[特攻]"
    [setup]
    roles = { 己 = "企鹅" }                   # change roles of the standard line-up (BASE)
    strict = true                             # check the draw (default true)
    start = "day:1"                           # begin after this phase (default day:1)
    sheriff = "戊"
    out = ["壬"]                              # already out
    statuses = [["己", "守卫模式", "法式守卫"]] # preset statuses (holder, kind, note)
    gifts = [["戊", "毒药"]]                  # 馈赠 skills already held
    [[phases]]
    phase = "night:1"                         # or "day:2" with out / elected / decided_by
    ballots = [["戊", "甲"]]                  # day: (voter, candidate) of the counted ballots
    actions = [{ actor = "甲", skill = "杀人", targets = ["戊"] }]
    [phases.expect]   # the keys of scenario_support.COMMON_CHECKS; different or extra here:
    no_statuses = [["戊", "冰冻"]]           # no such status still active in the next phase
    log_order = ["…", "…"]                   # each strictly after the previous one
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.rulesets import get_ruleset
from engine.state import Charge, GameState, Phase, Status
from tests.engine.scenario_support import (
    ScenarioSet,
    check_quotes,
    log_in_sequence,
    no_active_statuses,
    play_scenario,
)

RS = get_ruleset("m209")

#: The standard drawn line-up (m209.txt:22-33): 4 wolves, 1 验人系, 3 强神, 4 弱神, 吹笛者.
BASE: tuple[tuple[str, str], ...] = (
    ("甲", "黑狼王"),
    ("乙", "狼美人"),
    ("丙", "隐狼"),
    ("丁", "石像鬼"),
    ("戊", "预言家"),
    ("己", "守卫"),
    ("庚", "摄梦人"),
    ("辛", "女巫"),
    ("壬", "长老"),
    ("癸", "猎人"),
    ("子", "白痴"),
    ("丑", "替罪羊"),
    ("寅", "吹笛者"),
)


def initial_state(data: dict[str, Any]) -> GameState:
    setup = data.get("setup", {})
    roles = dict(BASE)
    roles.update(setup.get("roles", {}))
    state = RS.setup_state([(n, [r]) for n, r in roles.items()], strict=setup.get("strict", True))
    people = {p.name: p for p in state.players}
    for name in setup.get("out", []):
        card = people[name].cards[0]
        people[name] = people[name].with_card(
            replace(card, alive=False, out_phase="setup", out_cause="场景设定")
        )
    extra = tuple(
        Status(kind, holder, "场景设定", 0, note=note)
        for holder, kind, note in setup.get("statuses", [])
    )
    gifts = tuple(
        Charge(people[name].cards[0].uid, f"馈赠{gift}", 1, "场景设定")
        for name, gift in setup.get("gifts", [])
    )
    return replace(
        state,
        charges=(*state.charges, *gifts),
        players=tuple(people[p.name] for p in state.players),
        phase=Phase.parse(setup.get("start", "day:1")),
        sheriff=setup.get("sheriff"),
        statuses=(*state.statuses, *extra),
        settings=(*state.settings, *(tuple(x) for x in setup.get("settings", []))),
    )


M209 = ScenarioSet(
    "m209",
    initial_state,
    checks={"no_statuses": no_active_statuses, "log_order": log_in_sequence},
)
FILES = M209.files


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario(path: Path) -> None:
    play_scenario(M209, path)


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    check_quotes(M209, path)


def test_there_are_scenarios() -> None:
    assert len(FILES) >= 20
