"""tubian24 scenario files: setup, actions per phase, expected deaths, feedback, public, winner.

Each file in ``scenarios/tubian24/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words really are on that line of
``../shared/rules/tubian24.txt`` (skipped with a reason when the shared texts are absent). The
runner and the expectation keys are in ``scenario_support``; a day phase is built here.

File format (TOML)::

    title = "…"
    covers = ["女巫"]
    [[cite]]
    ref = "tubian24.txt:92"
    words = "女巫只能选择[救药]和[毒药]之一使用"
    [setup]
    players = [["饺子", "狼人", "男"], …]     # name, card, sex (or roster = "standard")
    settings = { kill_order = ["饺子"], master = "包子" }   # the [tubian24] table
    sheriff = "包子"                          # optional
    [[phases]]
    phase = "night:0"                         # or "day:1" with out / tie / voters
    actions = [{ actor = "饺子", skill = "杀人", targets = ["包子"] }]
    [phases.expect]                     # the keys of scenario_support.COMMON_CHECKS
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.kernel import Action, DayInput
from engine.rulesets import get_ruleset
from engine.state import GameState, Phase
from tests.engine.scenario_support import ScenarioSet, check_quotes, covered, play_scenario

RS = get_ruleset("tubian24")


#: ``[setup] roster = "standard"``: 16 players, every identity, two wolves, two villagers.
STANDARD: tuple[tuple[str, str, str], ...] = (
    ("阿狼", "狼人", "男"),
    ("二狼", "狼人", "女"),
    ("白白", "白眼狼", "男"),
    ("笛笛", "吹笛者", "女"),
    ("知知", "先知", "女"),
    ("巫巫", "女巫", "女"),
    ("守守", "守护", "男"),
    ("长长", "村长", "男"),
    ("痴痴", "情痴", "女"),
    ("猎猎", "猎人", "男"),
    ("僧僧", "高僧", "男"),
    ("傻傻", "白痴", "女"),
    ("梦梦", "梦中人", "女"),
    ("仆仆", "仆人", "男"),
    ("民一", "村民", "男"),
    ("民二", "村民", "女"),
)
STANDARD_SETTINGS = {"kill_order": ["阿狼", "二狼"], "master": "民一"}


def players_of(setup: dict[str, Any]) -> list[list[str]]:
    if setup.get("roster") == "standard":
        return [list(row) for row in STANDARD]
    return [list(row) for row in setup["players"]]


def settings_of(setup: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    raw = {**STANDARD_SETTINGS} if setup.get("roster") == "standard" else {}
    raw.update(setup.get("settings", {}))
    for row in players_of(setup):
        if len(row) > 2 and row[2]:
            out[f"sex.{row[0]}"] = row[2]
    for key, value in raw.items():
        out[key] = ",".join(value) if isinstance(value, list) else str(value)
    return out


def initial_state(data: dict[str, Any]) -> GameState:
    setup = data["setup"]
    players = [(row[0], [row[1]]) for row in players_of(setup)]
    state = RS.setup_state(players, settings=settings_of(setup))
    if "sheriff" in setup:
        state = replace(state, sheriff=setup["sheriff"])
    return state


def day_input(ph: dict[str, Any], phase: Phase, actions: tuple[Action, ...]) -> DayInput:
    if ph.get("tie"):
        return DayInput(
            day=phase.number,
            out=ph.get("out"),
            voters=tuple(ph.get("voters", ())),
            actions=actions,
            decided_by="平票，高僧[献身]，承受投票出局" if ph.get("out") else "平票，平安日",
            rule="tubian24.txt:118" if ph.get("out") else "tubian24.txt:121",
        )
    return DayInput(
        day=phase.number,
        out=ph.get("out"),
        voters=tuple(ph.get("voters", ())),
        actions=actions,
        decided_by="唯一最高票" if ph.get("out") else "无有效票",
        rule="tubian24.txt:39",
    )


TUBIAN24 = ScenarioSet("tubian24", initial_state, day_input=day_input)
FILES = TUBIAN24.files


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    play_scenario(TUBIAN24, path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    check_quotes(TUBIAN24, path)


def test_every_role_and_supplementary_case_has_a_scenario() -> None:
    roles = {
        "狼人",
        "先知",
        "女巫",
        "守护",
        "村长",
        "情痴",
        "白痴",
        "猎人",
        "高僧",
        "梦中人",
        "吹笛者",
        "白眼狼",
        "仆人",
        "警长",
        "投降",
    }
    cases = {f"情痴补充说明{c}" for c in "①②③④"} | {f"仆人补充说明{c}" for c in "①②③④⑤⑥⑦⑧⑨⑩"}
    missing = sorted((roles | cases | {"高僧补充说明①", "吹笛者补充说明①"}) - covered(TUBIAN24))
    assert not missing, f"no scenario covers: {missing}"
