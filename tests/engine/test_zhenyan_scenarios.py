"""zhenyan scenario files: setup, actions per phase, expected deaths, feedback, 魔力点, winner.

Each file in ``scenarios/zhenyan/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words really are on that line of
``../shared/rules/zhenyan.txt`` (skipped with a reason when the shared texts are absent). The
runner and the shared expectation keys are in ``scenario_support``; ``mana``, ``kills`` and
``guessed`` are read here.

File format (TOML)::

    title = "…"
    covers = ["守卫"]
    [[cite]]
    ref = "zhenyan.txt:93"
    words = "不能连续两晚守护同一名角色"
    [setup]
    players = [["饺子", "狼王"], …]     # optional: the standard 12 (ROSTER below)
    start = "day:1"                      # optional: begin after this phase
    sheriff = "粽子"                     # optional
    out = ["油条"]                       # optional: out before the start
    mana = 4                             # optional: 魔力点 at the start
    kills = 1                            # optional: uses of the wolves' <杀人>
    guessed = [1, 2]                     # optional: words already guessed
    [[phases]]
    phase = "night:1"                    # or "day:2" with out / elected
    actions = [{ actor = "饺子", skill = "杀人", targets = ["汤圆"] }]
    [phases.expect]   # the keys of scenario_support.COMMON_CHECKS; different or extra here:
    deaths = [["汤圆", "指杀"]]           # exact, in order: player, cause substring
    mana = 10                            # 魔力点 after the phase
    kills = 0                            # uses of the wolves' <杀人> left
    guessed = [1]                        # words guessed so far
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.rulesets import get_ruleset
from engine.rulesets.zhenyan import GUESSED, MANA, TEAM, guessed_words, mana
from engine.state import Charge, GameState, Phase, Status
from tests.engine.scenario_support import (
    Ctx,
    ScenarioSet,
    check_quotes,
    covered,
    deaths_by_player,
    out_before_start,
    play_scenario,
    rule_lines,
)

RS = get_ruleset("zhenyan")

#: The standard 12 (zhenyan.txt:64-100).
ROSTER = [
    ["饺子", "狼王"],
    ["面条", "狼美人"],
    ["春卷", "石像鬼"],
    ["烧饼", "蚀时狼妃"],
    ["包子", "长老"],
    ["汤圆", "预言家"],
    ["烧卖", "守卫"],
    ["馄饨", "猎魔人"],
    ["粽子", "村民"],
    ["油条", "村民"],
    ["麻花", "村民"],
    ["月饼", "村民"],
]


def initial_state(data: dict[str, Any]) -> GameState:
    setup = data.get("setup", {})
    players = [(row[0], list(row[1:])) for row in setup.get("players", ROSTER)]
    state = RS.setup_state(players)
    state = out_before_start(state, setup.get("out", []), "场景设定：开局前出局")
    statuses = [s for s in state.statuses if s.kind != MANA]
    statuses.append(Status(MANA, "*", "真言", 0, None, setup.get("mana", 12), survives_death=True))
    for n in setup.get("guessed", []):
        statuses.append(Status(GUESSED, "*", "场景设定", 0, None, note=str(n)))
    state = replace(state, statuses=tuple(statuses))
    if "kills" in setup:
        state = replace(
            state,
            charges=(
                *(c for c in state.charges if c.card != TEAM),
                Charge(TEAM, "杀人", setup["kills"]),
            ),
        )
    if "start" in setup:
        state = replace(state, phase=Phase.parse(setup["start"]))
    if "sheriff" in setup:
        state = replace(state, sheriff=setup["sheriff"])
    return state


def check_mana(ctx: Ctx, exp: Any) -> None:
    assert mana(ctx.state) == exp, f"{ctx.where} 魔力点: {mana(ctx.state)}"


def check_kills(ctx: Ctx, exp: Any) -> None:
    team = ctx.state.charge(TEAM, "杀人")
    assert team is not None and team.remaining == exp, f"{ctx.where} kills: {team}"


def check_guessed(ctx: Ctx, exp: Any) -> None:
    got = list(guessed_words(ctx.state))
    assert got == exp, f"{ctx.where}: {got}"


def nobody_dies_twice(ctx: Ctx) -> None:
    names = [d.player for d in ctx.report.deaths]
    assert len(names) == len(set(names)), f"{ctx.where} deaths: {names}"


ZHENYAN = ScenarioSet(
    "zhenyan",
    initial_state,
    checks={
        "deaths": deaths_by_player,
        "mana": check_mana,
        "kills": check_kills,
        "guessed": check_guessed,
    },
    contract=nobody_dies_twice,
)
FILES = ZHENYAN.files


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    play_scenario(ZHENYAN, path)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    check_quotes(ZHENYAN, path)


def test_every_role_and_rule_is_covered() -> None:
    needed = {
        "狼王",
        "狼美人",
        "石像鬼",
        "蚀时狼妃",
        "长老",
        "预言家",
        "守卫",
        "猎魔人",
        "村民",
        "杀人",
        "感知",
        "警长",
        "魔力点",
        "夜晚顺序",
        "投降",
        "胜负判定",
        "红牌罚下",
        "真言词语",
    }
    assert needed <= covered(ZHENYAN), needed - covered(ZHENYAN)


def test_the_night_order_is_the_texts() -> None:
    # zhenyan.txt:137-143 （1）蚀时狼妃 （2）狼美人 （3）守卫 （4）狼人
    #                     （5）猎魔人 （6）预言家 （7）石像鬼
    from engine.rulesets.zhenyan import NIGHT_PLAN

    assert [(s.key[0], s.skills) for s in NIGHT_PLAN] == [
        (1, ("时间吞噬",)),
        (2, ("魅惑",)),
        (3, ("守护之盾",)),
        (4, ("杀人",)),
        (5, ("狩猎",)),
        (6, ("预言",)),
        (7, ("凝视",)),
    ]


def test_every_night_step_cites_its_line() -> None:
    from engine.rulesets.zhenyan import NIGHT_PLAN

    lines = rule_lines(ZHENYAN)
    for step in NIGHT_PLAN:
        line = lines[int(step.rule.split(":")[1]) - 1]
        assert line.startswith(f"（{step.key[0]}）") and step.name.split("：")[0] in line, line
