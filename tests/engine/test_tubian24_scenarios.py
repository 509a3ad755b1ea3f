"""tubian24 scenario files: setup, actions per phase, expected deaths, feedback, public, winner.

Each file in ``scenarios/tubian24/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words really are on that line of
``../shared/rules/tubian24.txt`` (skipped with a reason when the shared texts are absent).

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
    [phases.expect]
    deaths = [["包子", "先知", "杀人"]]        # exact, in order (cause is a substring)
    feedback = [["馄饨", "通灵"]]; no_feedback = [...]
    public = ["被杀害"]; no_public = [...]
    outcomes = [["饺子", "杀人", "done", "reason substring"]]
    pending = [["饺子", "最后一枪"]]           # exact set (default: none)
    winner = ""                               # "" = nobody yet
    lost = ["吹笛者阵营"]                      # factions judged lost (exact, when given)
    sheriff = "包子"
    current = { 饺子 = "狼人" }               # current card after the phase ("" = out)
    wolf_group = ["饺子"]
    statuses = [["包子", "催眠"]]; no_statuses = [...]
    charges = [["馄饨", "毒药", 0]]
    modifiers = [["白痴", "no_vote"]]         # vote modifiers on the next day (exact)
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.state import GameState, Phase, PhaseKind

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios" / "tubian24"
RULES = Path(__file__).resolve().parents[2] / ".." / "shared" / "rules"
FILES = sorted(SCENARIOS.glob("*.toml"))
RS = get_ruleset("tubian24")


def load(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def actions_of(raw: list[dict[str, Any]]) -> list[Action]:
    return [
        Action(
            actor=a["actor"],
            skill=a["skill"],
            targets=tuple(a.get("targets", ())),
            choice=a.get("choice"),
        )
        for a in raw
    ]


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


def day_input(ph: dict[str, Any], phase: Phase) -> DayInput:
    if ph.get("tie"):
        return DayInput(
            day=phase.number,
            out=ph.get("out"),
            voters=tuple(ph.get("voters", ())),
            actions=tuple(actions_of(ph.get("actions", []))),
            decided_by="平票，高僧[献身]，承受投票出局" if ph.get("out") else "平票，平安日",
            rule="tubian24.txt:118" if ph.get("out") else "tubian24.txt:121",
        )
    return DayInput(
        day=phase.number,
        out=ph.get("out"),
        voters=tuple(ph.get("voters", ())),
        actions=tuple(actions_of(ph.get("actions", []))),
        decided_by="唯一最高票" if ph.get("out") else "无有效票",
        rule="tubian24.txt:39",
    )


def run(data: dict[str, Any]) -> list[tuple[dict[str, Any], GameState, Report]]:
    state = initial_state(data)
    out: list[tuple[dict[str, Any], GameState, Report]] = []
    for ph in data["phases"]:
        phase = Phase.parse(ph["phase"])
        report: Report
        if phase.kind is PhaseKind.NIGHT:
            actions = actions_of(ph.get("actions", []))
            state, report = resolve_night(state, actions, RS, night=phase.number)
        else:
            state, report = resolve_day(state, day_input(ph, phase), RS)
        out.append((ph, state, report))
    return out


def check(ph: dict[str, Any], state: GameState, report: Report) -> None:
    exp = ph.get("expect", {})
    where = ph["phase"]
    dump = report.to_dict()
    if "deaths" in exp:
        got = [(d.player, d.card, d.cause) for d in report.deaths]
        assert len(got) == len(exp["deaths"]), f"{where} deaths: {got}"
        for (player, card, cause), (ep, ec, ecause) in zip(got, exp["deaths"], strict=True):
            assert (player, card) == (ep, ec) and ecause in cause, f"{where} deaths: {got}"
    for to, text in exp.get("feedback", []):
        assert any(f.to == to and text in f.text for f in report.feedback), (
            f"{where}: no feedback {to}: {text!r} in {dump['feedback']}"
        )
    for to, text in exp.get("no_feedback", []):
        assert not any(f.to == to and text in f.text for f in report.feedback), (
            f"{where}: unexpected feedback {to}: {text!r}"
        )
    for text in exp.get("public", []):
        assert any(text in line for line in report.public), (
            f"{where}: {text!r} not in {dump['public']}"
        )
    for text in exp.get("no_public", []):
        assert not any(text in line for line in report.public), (
            f"{where}: {text!r} in public {dump['public']}"
        )
    if "public_order" in exp:
        positions = []
        for text in exp["public_order"]:
            hits = [i for i, line in enumerate(report.public) if text in line]
            assert hits, f"{where}: {text!r} not in {dump['public']}"
            positions.append(hits[0])
        assert positions == sorted(positions), f"{where}: public order {dump['public']}"
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
        assert (report.winner or "") == exp["winner"], (
            f"{where} winner: {report.winner} {report.win_reason}"
        )
    if "lost" in exp:
        lost = sorted(s.holder for s in state.statuses if s.kind == "判负")
        assert lost == sorted(exp["lost"]), f"{where} lost: {lost}"
    if "sheriff" in exp:
        assert (state.sheriff or "") == exp["sheriff"], f"{where} sheriff: {state.sheriff}"
    for name, card in exp.get("current", {}).items():
        cur = state.player(name).current
        assert (cur.name if cur else "") == card, f"{where}: {name} current {cur}"
    if "wolf_group" in exp:
        group = sorted(p.name for p in state.players if p.wolf_group)
        assert group == sorted(exp["wolf_group"]), f"{where} wolf group: {group}"
    for holder, kind in exp.get("statuses", []):
        assert any(s.holder == holder and s.kind == kind for s in state.statuses), (
            f"{where}: no status {kind} on {holder}"
        )
    for holder, kind in exp.get("no_statuses", []):
        assert not any(s.holder == holder and s.kind == kind for s in state.statuses), (
            f"{where}: status {kind} on {holder}"
        )
    for name, skill, remaining in exp.get("charges", []):
        uid = state.player(name).cards[0].uid
        charges = [c.remaining for c in state.charges if c.card == uid and c.skill == skill]
        assert sum(charges) == remaining, f"{where}: {name} {skill} charges {charges}"
    if "modifiers" in exp:
        nxt = state.phase.number + 1 if state.phase.kind is PhaseKind.NIGHT else state.phase.number
        got = sorted((m.player, m.kind.value) for m in RS.vote_modifiers(state, nxt))
        assert got == sorted(tuple(x) for x in exp["modifiers"]), f"{where} modifiers: {got}"
    # the contract: every death has a cause and a rule, and nobody dies twice
    uids = [d.card_uid for d in report.deaths]
    assert len(uids) == len(set(uids))
    assert all(d.cause and d.rule for d in report.deaths)
    assert all(a.reason for a in report.actions)


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
    text_file = RULES / "tubian24.txt"
    if not text_file.exists():
        pytest.skip(f"rule texts not found at {RULES.resolve()} (../shared/rules beside the repo)")
    lines = text_file.read_text(encoding="utf-8").splitlines()
    for cite in cites:
        file, line = cite["ref"].split(":")
        assert file == "tubian24.txt"
        assert cite["words"] in lines[int(line) - 1], f"{cite['ref']}: {lines[int(line) - 1]!r}"


def test_every_role_and_supplementary_case_has_a_scenario() -> None:
    covered = {c for path in FILES for c in load(path).get("covers", [])}
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
    missing = sorted((roles | cases | {"高僧补充说明①", "吹笛者补充说明①"}) - covered)
    assert not missing, f"no scenario covers: {missing}"
