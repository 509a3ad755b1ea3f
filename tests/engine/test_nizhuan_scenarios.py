"""nizhuan scenario files: a roster, phases with actions, and what each phase must give.

Each file in ``scenarios/nizhuan/`` quotes the rule text it checks (``[[cite]]`` ref + words);
``test_scenario_quotes_the_rule_text`` checks the words are on that line of
``../shared/rules/nizhuan.txt`` (skipped with a reason when the shared texts are absent).

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
    [phases.expect]
    deaths = [["辛", 1, "被指杀"]]              # exact, in order: player, card position, cause
    outcomes = [["丙", "杀人", "done", "reason substring"]]
    feedback = [["丁", "substring"]]
    public = ["substring"]
    sheriff = "丁"
    settings = { round = "2", reversal_day = "4" }
    alive = [["甲", 1]]
    winner = ""                                # "" = nobody yet
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.state import GameState, Phase, PhaseKind
from tests.engine.test_nizhuan_support import RS, says

HERE = Path(__file__).resolve().parent
FILES = sorted((HERE / "scenarios" / "nizhuan").glob("*.toml"))


def _load(path: Path) -> dict[str, Any]:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def _actions(raw: list[dict[str, Any]]) -> tuple[Action, ...]:
    return tuple(
        Action(
            a["actor"],
            a["skill"],
            tuple(a.get("targets", ())),
            choice=a.get("choice"),
            card=a.get("card"),
        )
        for a in raw
    )


def _run_phase(state: GameState, phase: dict[str, Any]) -> tuple[GameState, Report]:
    p = Phase.parse(phase["phase"])
    actions = _actions(phase.get("actions", []))
    if p.kind is PhaseKind.NIGHT:
        return resolve_night(state, actions, RS, night=p.number)
    elected = phase.get("elected")
    day_input = DayInput(
        p.number,
        out=phase.get("out"),
        elected=elected,
        sheriff_election=elected is not None,
        actions=actions,
    )
    return resolve_day(state, day_input, RS)


def _check(report: Report, state: GameState, expect: dict[str, Any], where: str) -> None:
    if "deaths" in expect:
        got = [[d.player, d.card_index, d.cause] for d in report.deaths]
        assert got == expect["deaths"], where
    for actor, skill, status, reason in expect.get("outcomes", []):
        found = [
            r
            for r in report.actions
            if r.action.actor == actor and r.action.skill == skill and r.outcome.value == status
        ]
        assert any(reason in r.reason for r in found), (
            f"{where}: {actor}[{skill}] {status} {reason!r} 不在 "
            f"{[(r.action.describe(), r.outcome.value, r.reason) for r in report.actions]}"
        )
    for to, text in expect.get("feedback", []):
        assert any(f.to == to and text in f.text for f in report.feedback), (
            f"{where}: {report.feedback}"
        )
    for text in expect.get("public", []):
        assert any(text in line for line in report.public), f"{where}: {report.public}"
    if "sheriff" in expect:
        assert state.sheriff == (expect["sheriff"] or None), where
    if "settings" in expect:
        assert dict(state.settings) == expect["settings"], where
    for player, position in expect.get("alive", []):
        assert state.player(player).cards[position - 1].alive, where
    if "winner" in expect:
        assert state.winner == (expect["winner"] or None), where


def play(path: Path) -> list[tuple[GameState, Report]]:
    data = _load(path)
    players = [(row[0], list(row[1:])) for row in data["setup"]["players"]]
    state = RS.setup_state(players)
    state, _ = resolve_night(state, [], RS, night=0)
    out: list[tuple[GameState, Report]] = []
    for phase in data["phases"]:
        state, report = _run_phase(state, phase)
        out.append((state, report))
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    data = _load(path)
    results = play(path)
    for phase, (state, report) in zip(data["phases"], results, strict=True):
        _check(report, state, phase.get("expect", {}), f"{path.name} {phase['phase']}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_scenario_quotes_the_rule_text(path: Path) -> None:
    data = _load(path)
    assert data["cite"], f"{path.name} 没有引用规则原文"
    for cite in data["cite"]:
        says(cite["ref"], cite["words"])


def test_every_role_is_covered() -> None:
    covered = {c for path in FILES for c in _load(path)["covers"]}
    assert {"狼人", "蚀时狼妃", "预言家", "女巫", "猎人", "长老", "骑士", "定序王子"} <= covered
