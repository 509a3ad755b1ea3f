"""zhenyan scenario files: setup, actions per phase, expected deaths, feedback, 魔力点, winner.

Each file in ``scenarios/zhenyan/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words really are on that line of
``../shared/rules/zhenyan.txt`` (skipped with a reason when the shared texts are absent).

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
    [phases.expect]
    deaths = [["汤圆", "指杀"]]           # exact, in order (cause is a substring)
    feedback = [["汤圆", "预言"]]         # each (to, substring) is present
    no_feedback = [["汤圆", "预言"]]
    public = ["昨晚出局"]                # each substring is in some public line
    no_public = ["…"]
    outcomes = [["饺子", "杀人", "done", "reason substring"]]
    pending = [["饺子", "最后一招"]]      # exact set (default: none)
    winner = ""                          # "" = nobody yet
    win_rule = "zhenyan.txt:118"
    sheriff = "粽子"
    mana = 10
    kills = 0
    guessed = [1]
    statuses = [["油条", "魅惑"]]
    resolved = [["汤圆", "预言", ["汤圆"]]]
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.zhenyan import GUESSED, MANA, TEAM, guessed_words, mana
from engine.state import Charge, GameState, Phase, PhaseKind, Status

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios" / "zhenyan"
RULES = Path(__file__).resolve().parents[2] / ".." / "shared" / "rules"
FILES = sorted(SCENARIOS.glob("*.toml"))
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


def load(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def actions_of(raw: list[dict[str, Any]]) -> list[Action]:
    return [
        Action(
            actor=a["actor"],
            skill=a["skill"],
            targets=tuple(a.get("targets", ())),
            choice=a.get("choice"),
            ref=a.get("ref", ""),
        )
        for a in raw
    ]


def initial_state(data: dict[str, Any]) -> GameState:
    setup = data.get("setup", {})
    players = [(row[0], list(row[1:])) for row in setup.get("players", ROSTER)]
    state = RS.setup_state(players)
    changes: dict[str, Any] = {}
    if "out" in setup:
        people = {p.name: p for p in state.players}
        for name in setup["out"]:
            cur = people[name].current
            assert cur is not None
            people[name] = people[name].with_card(
                replace(cur, alive=False, out_phase="setup", out_cause="场景设定：开局前出局")
            )
        changes["players"] = tuple(people[p.name] for p in state.players)
    statuses = [s for s in state.statuses if s.kind != MANA]
    statuses.append(Status(MANA, "*", "真言", 0, None, setup.get("mana", 12), survives_death=True))
    for n in setup.get("guessed", []):
        statuses.append(Status(GUESSED, "*", "场景设定", 0, None, note=str(n)))
    changes["statuses"] = tuple(statuses)
    if "kills" in setup:
        changes["charges"] = (
            *(c for c in state.charges if c.card != TEAM),
            Charge(TEAM, "杀人", setup["kills"]),
        )
    if "start" in setup:
        changes["phase"] = Phase.parse(setup["start"])
    if "sheriff" in setup:
        changes["sheriff"] = setup["sheriff"]
    return replace(state, **changes)


def run(data: dict[str, Any]) -> list[tuple[dict[str, Any], GameState, Report]]:
    state = initial_state(data)
    out: list[tuple[dict[str, Any], GameState, Report]] = []
    for ph in data["phases"]:
        phase = Phase.parse(ph["phase"])
        actions = actions_of(ph.get("actions", []))
        report: Report
        if phase.kind is PhaseKind.NIGHT:
            state, report = resolve_night(state, actions, RS, night=phase.number)
        else:
            day = DayInput(
                day=phase.number,
                out=ph.get("out"),
                elected=ph.get("elected"),
                sheriff_election=phase.number == 1,
                actions=tuple(actions),
            )
            state, report = resolve_day(state, day, RS)
        out.append((ph, state, report))
    return out


def check(ph: dict[str, Any], state: GameState, report: Report) -> None:
    exp = ph.get("expect", {})
    where = ph["phase"]
    dump = report.to_dict()
    if "deaths" in exp:
        got = [(d.player, d.cause) for d in report.deaths]
        assert len(got) == len(exp["deaths"]), f"{where} deaths: {got}"
        for (player, cause), (ep, ecause) in zip(got, exp["deaths"], strict=True):
            assert player == ep and ecause in cause, f"{where} deaths: {got}"
    for to, text in exp.get("feedback", []):
        assert any(f.to == to and text in f.text for f in report.feedback), (
            f"{where}: no feedback {to}: {text!r} in {dump['feedback']}"
        )
    for to, text in exp.get("no_feedback", []):
        assert not any(f.to == to and text in f.text for f in report.feedback), (
            f"{where}: unexpected feedback {to}: {text!r} in {dump['feedback']}"
        )
    for text in exp.get("public", []):
        assert any(text in line for line in report.public), (
            f"{where}: {text!r} not in {dump['public']}"
        )
    for text in exp.get("no_public", []):
        assert not any(text in line for line in report.public), (
            f"{where}: {text!r} in {dump['public']}"
        )
    for row in exp.get("outcomes", []):
        actor, skill, outcome = row[:3]
        reason = row[3] if len(row) > 3 else ""
        assert any(
            r.action.actor == actor
            and RS.canonical_skill(r.action.skill) == skill
            and r.outcome.value == outcome
            and reason in r.reason
            for r in report.actions
        ), f"{where}: no {row} in {dump['actions']}"
    pending = {(p.who, p.skill) for p in report.pending}
    assert pending == {tuple(x) for x in exp.get("pending", [])}, f"{where} pending: {pending}"
    if "winner" in exp:
        assert (report.winner or "") == exp["winner"], f"{where} winner: {report.winner}"
    if "win_rule" in exp:
        assert report.win_rule == exp["win_rule"], f"{where} win rule: {report.win_rule}"
    if "sheriff" in exp:
        assert (state.sheriff or "") == exp["sheriff"], f"{where} sheriff: {state.sheriff}"
    if "mana" in exp:
        assert mana(state) == exp["mana"], f"{where} 魔力点: {mana(state)}"
    if "kills" in exp:
        team = state.charge(TEAM, "杀人")
        assert team is not None and team.remaining == exp["kills"], f"{where} kills: {team}"
    if "guessed" in exp:
        assert list(guessed_words(state)) == exp["guessed"], f"{where}: {guessed_words(state)}"
    for holder, kind in exp.get("statuses", []):
        assert any(s.holder == holder and s.kind == kind for s in state.statuses), (
            f"{where}: no status {kind} on {holder}"
        )
    for actor, skill, targets in exp.get("resolved", []):
        assert any(
            r.action.actor == actor
            and RS.canonical_skill(r.action.skill) == skill
            and list(r.resolved_targets) == targets
            for r in report.actions
        ), f"{where}: {actor}[{skill}] not resolved to {targets}: {dump['actions']}"
    # the contract: every death has a cause and a rule, and nobody dies twice
    names = [d.player for d in report.deaths]
    assert len(names) == len(set(names))
    assert all(d.cause and d.rule for d in report.deaths)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    data = load(path)
    for ph, state, report in run(data):
        check(ph, state, report)
        assert GameState.from_json(state.to_json()) == state


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    data = load(path)
    cites = data.get("cite", [])
    assert cites, f"{path.name} quotes no rule text"
    assert data.get("covers"), f"{path.name} says nothing about what it covers"
    text_file = RULES / "zhenyan.txt"
    if not text_file.exists():
        pytest.skip(f"rule texts not found at {RULES.resolve()} (../shared/rules beside the repo)")
    lines = text_file.read_text(encoding="utf-8").splitlines()
    for cite in cites:
        file, line = cite["ref"].split(":")
        assert file == "zhenyan.txt"
        assert cite["words"] in lines[int(line) - 1], f"{cite['ref']}: {lines[int(line) - 1]!r}"


def test_every_role_and_rule_is_covered() -> None:
    covered = {c for path in FILES for c in load(path).get("covers", [])}
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
    assert needed <= covered, needed - covered


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
    text_file = RULES / "zhenyan.txt"
    if not text_file.exists():
        pytest.skip(f"rule texts not found at {RULES.resolve()} (../shared/rules beside the repo)")
    lines = text_file.read_text(encoding="utf-8").splitlines()
    for step in NIGHT_PLAN:
        line = lines[int(step.rule.split(":")[1]) - 1]
        assert line.startswith(f"（{step.key[0]}）") and step.name.split("：")[0] in line, line
