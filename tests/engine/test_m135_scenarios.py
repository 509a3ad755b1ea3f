"""m135 scenario files: setup, actions per phase, expected deaths, feedback, public lines, winner.

Each file in ``scenarios/m135/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words really are on that line of
``../shared/rules/m135.txt`` (skipped with a reason when the shared texts are absent).

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
    [phases.expect]
    deaths = [["包子", "预言家", "杀人"]]     # exact, in order (cause is a substring)
    feedback = [["馄饨", "通灵"]]             # each (to, substring) is present
    no_feedback = [["包子", "预言"]]          # none of these is present
    public = ["昨晚出局"]                    # each substring is in some public line
    outcomes = [["饺子", "杀人", "done", "reason substring"]]
    pending = [["饺子", "最后一枪"]]          # exact set (default: none)
    winner = ""                             # "" = nobody yet
    sheriff = "包子"
    current = { 饺子 = "村民" }              # current card after the phase ("" = out)
    wolf_group = ["饺子"]                    # exact
    statuses = [["包子", "诽谤"]]
    charges = [["馄饨", "毒药", 0]]          # the current card's charge of that skill
    resolved = [["饺子", "杀人", ["烧卖"]]]  # an action's resolved targets (结算目标)
    log_order = ["发动<最后一枪>", "加入狼群"]  # these log results appear in this order
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.state import Charge, GameState, Phase, PhaseKind

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios" / "m135"
RULES = Path(__file__).resolve().parents[2] / ".." / "shared" / "rules"
FILES = sorted(SCENARIOS.glob("*.toml"))
RS = get_ruleset("m135")


def load(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def actions_of(raw: list[dict[str, Any]]) -> list[Action]:
    return [
        Action(
            actor=a["actor"],
            skill=a["skill"],
            targets=tuple(a.get("targets", ())),
            choice=a.get("choice"),
            card=a.get("card"),
        )
        for a in raw
    ]


def initial_state(data: dict[str, Any]) -> GameState:
    setup = data["setup"]
    players = [(row[0], list(row[1:])) for row in setup["players"]]
    state = RS.setup_state(players, settings=setup.get("settings"))
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
    if "gifts" in setup:
        people = {p.name: p for p in changes.get("players", state.players)}
        gifted = []
        for name, gift in setup["gifts"]:
            cur = people[name].current
            assert cur is not None
            gifted.append(Charge(cur.uid, f"馈赠{gift}", 1, "场景设定"))
        changes["charges"] = (*state.charges, *gifted)
    if "start" in setup:
        changes["phase"] = Phase.parse(setup["start"])
    if "sheriff" in setup:
        changes["sheriff"] = setup["sheriff"]
    if "voters" in setup:
        day = Phase.parse(setup["start"]).number
        changes["voters_day"] = day
        changes["voters"] = tuple(setup["voters"])
        changes["vote_cards"] = tuple(
            (p.name, p.current.uid)
            for p in changes.get("players", state.players)
            if p.current is not None
        )
    return replace(state, **changes) if changes else state


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
                sheriff_election=bool(ph.get("elected")) or phase.number == 1,
                voters=tuple(ph.get("voters", ())),
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
        assert not any(text in line for line in report.public), f"{where}: {text!r} in public"
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
    for name, skill, remaining in exp.get("charges", []):
        cur = state.player(name).current
        assert cur is not None
        charges = [c.remaining for c in state.charges if c.card == cur.uid and c.skill == skill]
        assert sum(charges) == remaining, f"{where}: {name} {skill} charges {charges}"
    for actor, skill, targets in exp.get("resolved", []):
        assert any(
            r.action.actor == actor
            and RS.canonical_skill(r.action.skill) == skill
            and list(r.resolved_targets) == targets
            for r in report.actions
        ), f"{where}: {actor}[{skill}] not resolved to {targets}: {dump['actions']}"
    if "log_order" in exp:
        results = [e.result for e in report.log]
        positions = []
        for text in exp["log_order"]:
            hits = [i for i, r in enumerate(results) if text in r]
            assert hits, f"{where}: {text!r} not in the log {results}"
            positions.append(hits[0])
        assert positions == sorted(positions), f"{where}: log order {results}"
    # the contract: every death has a cause and a rule, and nobody dies twice
    uids = [d.card_uid for d in report.deaths]
    assert len(uids) == len(set(uids))
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
    text_file = RULES / "m135.txt"
    if not text_file.exists():
        pytest.skip(f"rule texts not found at {RULES.resolve()} (../shared/rules beside the repo)")
    lines = text_file.read_text(encoding="utf-8").splitlines()
    for cite in cites:
        file, line = cite["ref"].split(":")
        assert file == "m135.txt"
        assert cite["words"] in lines[int(line) - 1], f"{cite['ref']}: {lines[int(line) - 1]!r}"


def test_there_are_scenarios() -> None:
    assert len(FILES) >= 20
