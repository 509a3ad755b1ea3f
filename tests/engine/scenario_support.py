"""Shared runner of the scenario files in ``tests/engine/scenarios/<set>/`` (no tests here).

A scenario file (TOML) has ``title``, ``covers``, ``[[cite]]`` (``ref`` = ``<set>.txt:<line>``,
``words``), ``[setup]`` and ``[[phases]]`` (``phase`` = ``night:N`` / ``day:N``, ``actions``,
day keys ``out`` / ``elected`` / ``voters`` / ``decided_by`` / ``rule`` / ``ballots`` /
``closes`` (the close, ISO 8601: a red card ``at`` before it was given during the day) (and
``first_round``, a table of the same keys, for m209's 太阳[日不落] day), and an
``[phases.expect]`` table). Each ``test_<set>_scenarios.py`` describes its set with a
:class:`ScenarioSet` (how the start state is built, how a day phase is built, which expectation
keys it reads differently or in addition) and calls :func:`play_scenario` and
:func:`check_quotes`.

Expectation keys read by :data:`COMMON_CHECKS` (a set may override or add keys):

    deaths = [["包子", "预言家", "杀人"]]   # exact count, in order; (player, card, cause substring)
    feedback = [["馄饨", "通灵"]]           # each (to, substring) is present
    no_feedback = [["包子", "预言"]]        # none of these is present
    public = ["昨晚出局"]                  # each substring is in some public line
    no_public = ["…"]                      # no public line holds it
    public_order = ["…", "…"]              # first public lines holding each are in this order
    outcomes = [["饺子", "杀人", "done", "reason substring"]]   # the reason is optional
    pending = [["饺子", "最后一枪"]]        # exact set (default: none, unless the set opts out)
    winner = ""                            # "" = nobody yet (report.winner)
    win_rule = "zhenyan.txt:118"
    lost = ["吹笛者阵营"]                   # factions judged lost (判负 statuses), exact
    sheriff = "包子"                        # "" = nobody
    current = { 饺子 = "村民" }             # current card after the phase ("" = out)
    wolf_group = ["饺子"]                   # exact
    alive = ["戊", ["甲", 1]]               # a player alive, or the card at a 1-based position
    statuses = [["包子", "诽谤"]]           # a status of that kind on that holder
    no_statuses = [["包子", "催眠"]]        # no status of that kind on that holder at all
    charges = [["馄饨", "毒药", 0]]         # charges of that skill on the player's first card
    resolved = [["饺子", "杀人", ["烧卖"]]] # an action's resolved targets (结算目标)
    log_order = ["发动<最后一枪>", "加入狼群"] # first log results holding each are in this order
    modifiers = [["白痴", "no_vote"]]       # vote modifiers of the next day, exact
    settings = { round = "2" }             # the state's settings, exact

After every phase the contract is checked too (every death has a cause and a rule, no card dies
twice, every action result has a reason) and the state survives a JSON round trip.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.kernel import Action, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.state import Charge, GameState, Phase, PhaseKind
from tests.engine import rule_text

HERE = Path(__file__).resolve().parent

Scenario = dict[str, Any]


@dataclass(frozen=True)
class Ctx:
    """What one phase gave: the state after it, its report, and where it was (for messages)."""

    where: str
    state: GameState
    report: Report
    rs: Any
    dump: dict[str, Any]


Check = Callable[[Ctx, Any], None]
DayBuilder = Callable[[Scenario, Phase, tuple[Action, ...]], DayInput]


def load(path: Path) -> Scenario:
    return tomllib.loads(path.read_text(encoding="utf-8"))


def scenario_files(name: str) -> list[Path]:
    return sorted((HERE / "scenarios" / name).glob("*.toml"))


def actions_of(raw: Sequence[dict[str, Any]]) -> tuple[Action, ...]:
    return tuple(
        Action(
            actor=a["actor"],
            skill=a["skill"],
            targets=tuple(a.get("targets", ())),
            choice=a.get("choice"),
            card=a.get("card"),
            at=a.get("at"),
            ref=a.get("ref", ""),
        )
        for a in raw
    )


def first_day_election(ph: Scenario, phase: Phase) -> bool:
    return phase.number == 1


def plain_day(
    election: Callable[[Scenario, Phase], bool] = first_day_election,
) -> DayBuilder:
    """A day phase from the file's ``out``/``elected``/``voters``/``decided_by``/``rule``/
    ``ballots``; ``election`` says whether the day holds a sheriff election."""

    def build(ph: Scenario, phase: Phase, actions: tuple[Action, ...]) -> DayInput:
        first = ph.get("first_round")  # a day with two 正午 rounds (m209 太阳[日不落])
        return DayInput(
            day=phase.number,
            out=ph.get("out"),
            elected=ph.get("elected"),
            sheriff_election=election(ph, phase),
            voters=tuple(ph.get("voters", ())),
            actions=actions,
            decided_by=ph.get("decided_by", ""),
            rule=ph.get("rule", ""),
            ballots=tuple((v, c) for v, c in ph.get("ballots", ())),
            closes=ph.get("closes"),
            first_round=(
                None
                if first is None
                else DayInput(
                    day=phase.number,
                    out=first.get("out"),
                    voters=tuple(first.get("voters", ())),
                    decided_by=first.get("decided_by", ""),
                    rule=first.get("rule", ""),
                    ballots=tuple((v, c) for v, c in first.get("ballots", ())),
                )
            ),
        )

    return build


# --- the setup of a scenario ----------------------------------------------------------------------


def out_before_start(state: GameState, names: Sequence[str], cause: str) -> GameState:
    """These players' current cards are out before the first phase."""
    people = {p.name: p for p in state.players}
    for name in names:
        cur = people[name].current
        assert cur is not None
        people[name] = people[name].with_card(
            replace(cur, alive=False, out_phase="setup", out_cause=cause)
        )
    return replace(state, players=tuple(people[p.name] for p in state.players))


def gifts_held(state: GameState, gifts: Sequence[Sequence[str]]) -> GameState:
    """馈赠 skills already held (one use each) by these players' current cards."""
    gifted = []
    for name, gift in gifts:
        cur = state.player(name).current
        assert cur is not None
        gifted.append(Charge(cur.uid, f"馈赠{gift}", 1, "场景设定"))
    return replace(state, charges=(*state.charges, *gifted))


# --- the checks --------------------------------------------------------------------------------


def _deaths(ctx: Ctx, exp: Any) -> None:
    got = [(d.player, d.card, d.cause) for d in ctx.report.deaths]
    assert len(got) == len(exp), f"{ctx.where} deaths: {got}"
    for (player, card, cause), (ep, ec, ecause) in zip(got, exp, strict=True):
        assert (player, card) == (ep, ec) and ecause in cause, f"{ctx.where} deaths: {got}"


def deaths_by_player(ctx: Ctx, exp: Any) -> None:
    """``deaths = [["汤圆", "指杀"]]``: (player, cause substring), exact count, in order."""
    got = [(d.player, d.cause) for d in ctx.report.deaths]
    assert len(got) == len(exp), f"{ctx.where} deaths: {got}"
    for (player, cause), (ep, ecause) in zip(got, exp, strict=True):
        assert player == ep and ecause in cause, f"{ctx.where} deaths: {got}"


def deaths_by_position(ctx: Ctx, exp: Any) -> None:
    """``deaths = [["辛", 1, "被指杀"]]``: (player, card position, exact cause), in order."""
    got = [[d.player, d.card_index, d.cause] for d in ctx.report.deaths]
    assert got == exp, f"{ctx.where} deaths: {got}"


def _feedback(ctx: Ctx, exp: Any) -> None:
    for to, text in exp:
        assert any(f.to == to and text in f.text for f in ctx.report.feedback), (
            f"{ctx.where}: no feedback {to}: {text!r} in {ctx.dump['feedback']}"
        )


def _no_feedback(ctx: Ctx, exp: Any) -> None:
    for to, text in exp:
        assert not any(f.to == to and text in f.text for f in ctx.report.feedback), (
            f"{ctx.where}: unexpected feedback {to}: {text!r} in {ctx.dump['feedback']}"
        )


def _public(ctx: Ctx, exp: Any) -> None:
    for text in exp:
        assert any(text in line for line in ctx.report.public), (
            f"{ctx.where}: {text!r} not in {ctx.dump['public']}"
        )


def _no_public(ctx: Ctx, exp: Any) -> None:
    for text in exp:
        assert not any(text in line for line in ctx.report.public), (
            f"{ctx.where}: {text!r} in public {ctx.dump['public']}"
        )


def _public_order(ctx: Ctx, exp: Any) -> None:
    positions = []
    for text in exp:
        hits = [i for i, line in enumerate(ctx.report.public) if text in line]
        assert hits, f"{ctx.where}: {text!r} not in {ctx.dump['public']}"
        positions.append(hits[0])
    assert positions == sorted(positions), f"{ctx.where}: public order {ctx.dump['public']}"


def outcomes_by(skill_of: Callable[[Ctx, Action], str]) -> Check:
    """``outcomes = [[actor, skill, outcome, reason substring?]]``; ``skill_of`` names an
    action's skill for the comparison (canonical by default)."""

    def check(ctx: Ctx, exp: Any) -> None:
        for row in exp:
            actor, skill, outcome = row[:3]
            reason = row[3] if len(row) > 3 else ""
            assert any(
                r.action.actor == actor
                and skill_of(ctx, r.action) == skill
                and r.outcome.value == outcome
                and reason in r.reason
                for r in ctx.report.actions
            ), f"{ctx.where}: no {row} in {ctx.dump['actions']}"

    return check


def canonical_skill(ctx: Ctx, action: Action) -> str:
    return str(ctx.rs.canonical_skill(action.skill))


def raw_skill(ctx: Ctx, action: Action) -> str:
    return action.skill


def _pending(ctx: Ctx, exp: Any) -> None:
    pending = {(p.who, p.skill) for p in ctx.report.pending}
    assert pending == {tuple(x) for x in exp}, f"{ctx.where} pending: {pending}"


def _winner(ctx: Ctx, exp: Any) -> None:
    report = ctx.report
    assert (report.winner or "") == exp, f"{ctx.where} winner: {report.winner} {report.win_reason}"


def state_winner(ctx: Ctx, exp: Any) -> None:
    """``winner`` read from the state after the phase (None = nobody yet)."""
    assert ctx.state.winner == (exp or None), f"{ctx.where} winner: {ctx.state.winner}"


def _win_rule(ctx: Ctx, exp: Any) -> None:
    assert ctx.report.win_rule == exp, f"{ctx.where} win rule: {ctx.report.win_rule}"


def _lost(ctx: Ctx, exp: Any) -> None:
    lost = sorted(s.holder for s in ctx.state.statuses if s.kind == "判负")
    assert lost == sorted(exp), f"{ctx.where} lost: {lost}"


def _sheriff(ctx: Ctx, exp: Any) -> None:
    sheriff = ctx.state.sheriff
    assert sheriff == (exp or None), f"{ctx.where} sheriff: {sheriff}"


def _current(ctx: Ctx, exp: Any) -> None:
    for name, card in exp.items():
        cur = ctx.state.player(name).current
        assert (cur.name if cur else "") == card, f"{ctx.where}: {name} current {cur}"


def _wolf_group(ctx: Ctx, exp: Any) -> None:
    group = sorted(p.name for p in ctx.state.players if p.wolf_group)
    assert group == sorted(exp), f"{ctx.where} wolf group: {group}"


def _alive(ctx: Ctx, exp: Any) -> None:
    for row in exp:
        if isinstance(row, str):
            assert ctx.state.player(row).alive, f"{ctx.where}: {row} should be alive"
        else:
            name, position = row
            card = ctx.state.player(name).cards[position - 1]
            assert card.alive, f"{ctx.where}: {name} card {position} should be alive"


def _statuses(ctx: Ctx, exp: Any) -> None:
    statuses = ctx.state.statuses
    for holder, kind in exp:
        assert any(s.holder == holder and s.kind == kind for s in statuses), (
            f"{ctx.where}: no status {kind} on {holder}: {[s.describe() for s in statuses]}"
        )


def _no_statuses(ctx: Ctx, exp: Any) -> None:
    for holder, kind in exp:
        assert not any(s.holder == holder and s.kind == kind for s in ctx.state.statuses), (
            f"{ctx.where}: status {kind} on {holder}"
        )


def no_active_statuses(ctx: Ctx, exp: Any) -> None:
    """``no_statuses``: no such status is still active in the next phase."""
    index = ctx.state.phase.index
    for holder, kind in exp:
        assert not any(
            s.holder == holder and s.kind == kind and s.active_at(index + 1)
            for s in ctx.state.statuses
        ), f"{ctx.where}: status {kind} on {holder} should have ended"


def _charges(ctx: Ctx, exp: Any) -> None:
    for name, skill, remaining in exp:
        uid = ctx.state.player(name).cards[0].uid
        charges = [c.remaining for c in ctx.state.charges if c.card == uid and c.skill == skill]
        assert sum(charges) == remaining, f"{ctx.where}: {name} {skill} charges {charges}"


def current_card_charges(ctx: Ctx, exp: Any) -> None:
    """``charges`` of the player's current card (which must still be in play)."""
    for name, skill, remaining in exp:
        cur = ctx.state.player(name).current
        assert cur is not None
        charges = [c.remaining for c in ctx.state.charges if c.card == cur.uid and c.skill == skill]
        assert sum(charges) == remaining, f"{ctx.where}: {name} {skill} charges {charges}"


def _resolved(ctx: Ctx, exp: Any) -> None:
    for actor, skill, targets in exp:
        assert any(
            r.action.actor == actor
            and ctx.rs.canonical_skill(r.action.skill) == skill
            and list(r.resolved_targets) == targets
            for r in ctx.report.actions
        ), f"{ctx.where}: {actor}[{skill}] not resolved to {targets}: {ctx.dump['actions']}"


def _log_order(ctx: Ctx, exp: Any) -> None:
    results = [e.result for e in ctx.report.log]
    positions = []
    for text in exp:
        hits = [i for i, r in enumerate(results) if text in r]
        assert hits, f"{ctx.where}: {text!r} not in the log {results}"
        positions.append(hits[0])
    assert positions == sorted(positions), f"{ctx.where}: log order {results}"


def log_in_sequence(ctx: Ctx, exp: Any) -> None:
    """``log_order``: each text is in a log result strictly after the previous one's."""
    results = [e.result for e in ctx.report.log]
    pos = -1
    for text in exp:
        hits = [i for i, r in enumerate(results) if text in r and i > pos]
        assert hits, f"{ctx.where}: {text!r} not after position {pos} in {results}"
        pos = hits[0]


def _modifiers(ctx: Ctx, exp: Any) -> None:
    state = ctx.state
    nxt = state.phase.number + 1 if state.phase.kind is PhaseKind.NIGHT else state.phase.number
    got = sorted((m.player, m.kind.value) for m in ctx.rs.vote_modifiers(state, nxt))
    assert got == sorted(tuple(x) for x in exp), f"{ctx.where} modifiers: {got}"


def _settings(ctx: Ctx, exp: Any) -> None:
    assert dict(ctx.state.settings) == exp, f"{ctx.where} settings: {ctx.state.settings}"


COMMON_CHECKS: Mapping[str, Check] = {
    "deaths": _deaths,
    "feedback": _feedback,
    "no_feedback": _no_feedback,
    "public": _public,
    "no_public": _no_public,
    "public_order": _public_order,
    "outcomes": outcomes_by(canonical_skill),
    "pending": _pending,
    "winner": _winner,
    "win_rule": _win_rule,
    "lost": _lost,
    "sheriff": _sheriff,
    "current": _current,
    "wolf_group": _wolf_group,
    "alive": _alive,
    "statuses": _statuses,
    "no_statuses": _no_statuses,
    "charges": _charges,
    "resolved": _resolved,
    "log_order": _log_order,
    "modifiers": _modifiers,
    "settings": _settings,
}


#: What a public line (the 公示 the drafts carry to the forum) must not hold: a rule-file
#: reference or a pointer into this project's docs — those are for the director.
_NOT_PUBLIC = re.compile(r"\.txt:|docs/|rulings")


def contract(ctx: Ctx) -> None:
    """Every death has a cause and a rule, no card dies twice, every result has a reason, and
    the public lines are fit for the forum."""
    leaked = [line for line in ctx.report.public if _NOT_PUBLIC.search(line)]
    assert not leaked, f"{ctx.where}: public lines cite the rules: {leaked}"
    uids = [d.card_uid for d in ctx.report.deaths]
    assert len(uids) == len(set(uids)), f"{ctx.where} deaths: {uids}"
    assert all(d.cause and d.rule for d in ctx.report.deaths), f"{ctx.where} deaths"
    assert all(a.reason for a in ctx.report.actions), f"{ctx.where}: {ctx.dump['actions']}"


# --- a rule set's scenarios ---------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioSet:
    """The scenario files of one rule set, ``scenarios/<name>/``, checked against
    ``../shared/rules/<name>.txt``.

    ``initial_state`` builds the state before the first listed phase from the whole file;
    ``day_input`` builds a day phase; ``checks`` overrides or adds expectation keys;
    ``contract`` adds per-set checks run after every phase; ``pending_exact`` checks the
    pending decisions against ``pending`` (default none) after every phase, not only when the
    key is given.
    """

    name: str
    initial_state: Callable[[Scenario], GameState]
    day_input: DayBuilder = field(default_factory=plain_day)
    checks: Mapping[str, Check] = field(default_factory=dict)
    contract: Callable[[Ctx], None] | None = None
    pending_exact: bool = True

    @property
    def rs(self) -> Any:
        return get_ruleset(self.name)

    @property
    def rule_file(self) -> str:
        return f"{self.name}.txt"

    @property
    def files(self) -> list[Path]:
        return scenario_files(self.name)

    @property
    def all_checks(self) -> dict[str, Check]:
        return {**COMMON_CHECKS, **self.checks}

    def run(self, data: Scenario) -> Iterator[tuple[Scenario, GameState, Report]]:
        """Each phase of the file with the state after it and its report."""
        rs = self.rs
        state = self.initial_state(data)
        for ph in data["phases"]:
            phase = Phase.parse(ph["phase"])
            actions = actions_of(ph.get("actions", []))
            report: Report
            if phase.kind is PhaseKind.NIGHT:
                state, report = resolve_night(state, actions, rs, night=phase.number)
            else:
                state, report = resolve_day(state, self.day_input(ph, phase, actions), rs)
            yield ph, state, report

    def check(self, ph: Scenario, state: GameState, report: Report, where: str = "") -> None:
        exp = dict(ph.get("expect", {}))
        if self.pending_exact:
            exp.setdefault("pending", [])
        checks = self.all_checks
        unknown = sorted(set(exp) - set(checks))
        assert not unknown, f"{where} {ph['phase']}: unknown expectation keys {unknown}"
        ctx = Ctx(f"{where} {ph['phase']}".strip(), state, report, self.rs, report.to_dict())
        for key, value in exp.items():
            checks[key](ctx, value)
        contract(ctx)
        if self.contract is not None:
            self.contract(ctx)


def play_scenario(spec: ScenarioSet, path: Path) -> None:
    """Run the file phase by phase and check every phase's expectations and the contract."""
    for ph, state, report in spec.run(load(path)):
        spec.check(ph, state, report, path.name)
        assert GameState.from_json(state.to_json()) == state, f"{path.name} {ph['phase']}"


def rule_lines(spec: ScenarioSet) -> list[str]:
    """The lines of ``../shared/rules/<set>.txt`` (skipped with a reason when absent)."""
    return rule_text.rule_lines(spec.rule_file)


def check_quotes(spec: ScenarioSet, path: Path) -> None:
    """The file says what it covers and each ``[[cite]]`` quote is on its line of the text.

    Without the rule texts the quotes' form is checked and only the words are skipped; the
    scenario itself runs in :func:`play_scenario` either way.
    """
    data = load(path)
    cites = data.get("cite", [])
    assert cites, f"{path.name} quotes no rule text"
    assert data.get("covers"), f"{path.name} says nothing about what it covers"
    for cite in cites:
        file, _, line = cite["ref"].partition(":")
        assert file == spec.rule_file and line.isdigit(), f"{path.name}: {cite['ref']}"
        assert cite["words"], f"{path.name}: {cite['ref']} quotes nothing"
    lines = rule_lines(spec)
    for cite in cites:
        text = lines[int(cite["ref"].partition(":")[2]) - 1]
        assert cite["words"] in text, f"{path.name}: {cite['ref']}: {text!r}"


def covered(spec: ScenarioSet) -> set[str]:
    """Everything the set's files say they cover."""
    return {c for path in spec.files for c in load(path).get("covers", [])}
