"""m209 scenario files: a drawn line-up, actions per phase, expected deaths, feedback, winner.

Each file in ``scenarios/m209/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words are on that line of
``../shared/rules/m209.txt`` (skipped with a reason when the shared texts are absent).

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
    [phases.expect]
    deaths = [["戊", "预言家", "杀人"]]       # exact, in order (cause is a substring)
    feedback = [["辛", "灵通"]]
    no_feedback = [["戊", "预言"]]
    public = ["昨晚出局"]
    outcomes = [["甲", "杀人", "done", "reason substring"]]
    pending = [["癸", "最后一枪"]]            # exact set (default: none)
    winner = ""
    sheriff = "戊"
    alive = ["戊"]
    statuses = [["戊", "冰冻"]]
    no_statuses = [["戊", "冰冻"]]
    charges = [["辛", "毒药", 0]]
    resolved = [["甲", "杀人", ["己"]]]
    log_order = ["…", "…"]
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.state import Charge, GameState, Phase, PhaseKind, Status

HERE = Path(__file__).resolve().parent
SCENARIOS = HERE / "scenarios" / "m209"
RULES = Path(__file__).resolve().parents[2] / ".." / "shared" / "rules"
FILES = sorted(SCENARIOS.glob("*.toml"))
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


def load(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def actions_of(raw: list[dict[str, Any]]) -> list[Action]:
    return [
        Action(
            actor=a["actor"],
            skill=a["skill"],
            targets=tuple(a.get("targets", ())),
            choice=a.get("choice"),
            at=a.get("at"),
        )
        for a in raw
    ]


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
                decided_by=ph.get("decided_by", ""),
                rule=ph.get("rule", ""),
                ballots=tuple((v, c) for v, c in ph.get("ballots", ())),
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
    for name in exp.get("alive", []):
        assert state.player(name).alive, f"{where}: {name} should be alive"
    index = state.phase.index
    for holder, kind in exp.get("statuses", []):
        assert any(s.holder == holder and s.kind == kind for s in state.statuses), (
            f"{where}: no status {kind} on {holder}: {[s.describe() for s in state.statuses]}"
        )
    for holder, kind in exp.get("no_statuses", []):
        assert not any(
            s.holder == holder and s.kind == kind and s.active_at(index + 1) for s in state.statuses
        ), f"{where}: status {kind} on {holder} should have ended"
    for name, skill, remaining in exp.get("charges", []):
        uid = state.player(name).cards[0].uid
        charges = [c.remaining for c in state.charges if c.card == uid and c.skill == skill]
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
        pos = -1
        for text in exp["log_order"]:
            hits = [i for i, r in enumerate(results) if text in r and i > pos]
            assert hits, f"{where}: {text!r} not after position {pos} in {results}"
            pos = hits[0]


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario(path: Path) -> None:
    data = load(path)
    for ph, state, report in run(data):
        check(ph, state, report)


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    text = RULES / "m209.txt"
    if not text.exists():
        pytest.skip(f"共享规则文本不存在：{text}")
    lines = text.read_text(encoding="utf-8").splitlines()
    data = load(path)
    assert data.get("cite"), f"{path.name} quotes no rule text"
    for cite in data["cite"]:
        file, _, line = cite["ref"].partition(":")
        assert file == "m209.txt"
        assert cite["words"] in lines[int(line) - 1], f"{path.name}: {cite} not on that line"


def test_there_are_scenarios() -> None:
    assert len(FILES) >= 20
