"""The engine kernel: pure night and day resolution shared by every rule set.

``resolve_night(state, actions, ruleset)`` and ``resolve_day(state, day_input, ruleset)`` take a
frozen :class:`~engine.state.GameState`, copy it into a mutable :class:`Board` (the scratchpad),
let the rule set run its ordered steps on the board, drain the trigger queue (hunter shots,
chain deaths, a sheriff's hand-over) until nothing new happens, run the win check once, and
return the new frozen state and a report. Nothing here reads the clock, the disk or the network,
nor draws a random number: a random hand-over takes an explicit seed from the input.

The report is the contract of a resolution's JSON output (its field names are kept stable):
``deaths`` (in the order they happened), ``feedback`` (private messages),
``public`` (lines for the day-open post),
``statuses``, ``winner`` and ``log`` (one event per step with the rule it applied), plus
``actions`` (each input action's outcome: done / blocked / fizzled / unused / invalid with a
Chinese reason — never dropped) and ``pending`` (decisions the director still has to collect).

Rule references are ``"<file>:<line>"`` into the rule texts.
"""

from __future__ import annotations

import hashlib
import logging
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from engine.state import (
    ZH_ORDINAL,
    CardState,
    Charge,
    Cooldown,
    GameState,
    Memory,
    Phase,
    PhaseKind,
    PlayerState,
    Status,
)

if TYPE_CHECKING:
    from engine.rulesets.base import Ruleset

__all__ = [
    "SLOTS",
    "Action",
    "ActionResult",
    "Board",
    "DayInput",
    "DayReport",
    "Death",
    "EngineError",
    "Event",
    "Feedback",
    "NightReport",
    "Outcome",
    "Pending",
    "Report",
    "Trigger",
    "canonical_actions",
    "resolve_day",
    "resolve_night",
    "seeded_choice",
]

log = logging.getLogger(__name__)

DECLINE_WORDS = frozenset({"放弃", "不发动", "弃权", "不使用"})


class EngineError(ValueError):
    """A resolution that cannot run (wrong phase, game over, unknown rule set); Chinese."""


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, slots=True)
class Action:
    """What a player (or the director) asked for: ``{actor, card, skill, targets, choice}``.

    ``targets`` are the chosen targets (选择目标) as the player named them; ``card`` optionally
    names the card the actor acts with; ``ref`` is where it came from (a journal id, a file).
    """

    actor: str
    skill: str
    targets: tuple[str, ...] = ()
    choice: str | None = None
    card: str | None = None
    at: str | None = None
    ref: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", tuple(self.targets))

    @property
    def declined(self) -> bool:
        return (self.choice or "").strip() in DECLINE_WORDS

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.actor,
            self.skill,
            self.targets,
            self.choice or "",
            self.card or "",
            self.at or "",
            self.ref,
        )

    def describe(self) -> str:
        target = f"→{'、'.join(self.targets)}" if self.targets else ""
        choice = f"（{self.choice}）" if self.choice else ""
        return f"{self.actor}[{self.skill}]{target}{choice}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "actor": self.actor,
            "skill": self.skill,
            "targets": list(self.targets),
            "choice": self.choice,
            "card": self.card,
            "at": self.at,
            "ref": self.ref,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Action:
        return cls(
            actor=str(data["actor"]),
            skill=str(data["skill"]),
            targets=tuple(str(t) for t in data.get("targets", ())),
            choice=data.get("choice"),
            card=data.get("card"),
            at=data.get("at"),
            ref=str(data.get("ref", "")),
        )


def canonical_actions(actions: Iterable[Action]) -> tuple[Action, ...]:
    """The actions in a fixed order, whatever order the director typed them in."""
    return tuple(sorted(actions, key=Action.sort_key))


@dataclass(frozen=True, slots=True)
class DayInput:
    """What the day decided, from the tally (engine.votes), plus the day's decisions.

    ``out``: the player the vote put out (None: nobody); ``elected``: the sheriff elected on an
    election day; ``voters``: players with a counted ballot (弃权 included); ``actions``: day
    skills and decisions (装傻, 翻牌, 最后一枪, 殉职, 红牌罚下, 投降, 判负); ``ballots``: who
    voted for whom, ``(voter, candidate)`` pairs of the counted ballots (弃权 excluded; empty
    when the input does not carry them).
    """

    day: int
    out: str | None = None
    elected: str | None = None
    sheriff_election: bool = False
    voters: tuple[str, ...] = ()
    actions: tuple[Action, ...] = ()
    decided_by: str = ""
    rule: str = ""
    ballots: tuple[tuple[str, str], ...] = ()
    # a day with two 正午 rounds (太阳[日不落]): the first round's
    # result (``day``/``out``/``decided_by``/``rule``/``ballots``); the fields above are the
    # extra round's
    first_round: DayInput | None = None
    # when the day's vote closed (ISO 8601): a red card given before it is settled where the
    # rule set puts a red card during the day, one at the close where it puts the day's end
    # (each rule set's ``red_card_at``); None: every red card of the day counts as at the close
    closes: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "voters", tuple(sorted(set(self.voters))))
        object.__setattr__(self, "actions", canonical_actions(self.actions))
        object.__setattr__(self, "ballots", tuple(sorted(set(self.ballots))))

    @classmethod
    def from_tally(
        cls,
        tally: Any,
        *,
        actions: Sequence[Action] = (),
        voters: Sequence[str] | None = None,
        first_round: Any = None,
        closes: str | None = None,
    ) -> DayInput:
        """From an :class:`engine.votes.Tally`: who is out or elected, and who voted;
        ``first_round``: the first 正午 round's tally of a day with two."""
        return cls(
            day=int(tally.day),
            out=tally.out,
            elected=tally.elected,
            sheriff_election=bool(tally.sheriff_election),
            voters=tuple(tally.weights) if voters is None else tuple(voters),
            actions=tuple(actions),
            decided_by=str(tally.decided_by),
            rule=str(tally.rule),
            ballots=tuple(
                (str(v), str(c))
                for c, vs in dict(getattr(tally, "voters", None) or {}).items()
                for v in vs
            ),
            first_round=None if first_round is None else cls.from_tally(first_round),
            closes=closes,
        )

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "day": self.day,
            "out": self.out,
            "elected": self.elected,
            "sheriff_election": self.sheriff_election,
            "voters": list(self.voters),
            "actions": [a.to_dict() for a in self.actions],
            "decided_by": self.decided_by,
            "rule": self.rule,
        }
        if self.ballots:  # only when known, so older inputs keep their exact form
            data["ballots"] = [list(pair) for pair in self.ballots]
        if self.first_round is not None:
            data["first_round"] = self.first_round.to_dict()
        if self.closes is not None:
            data["closes"] = self.closes
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DayInput:
        return cls(
            day=int(data["day"]),
            out=data.get("out"),
            elected=data.get("elected"),
            sheriff_election=bool(data.get("sheriff_election", False)),
            voters=tuple(str(v) for v in data.get("voters", ())),
            actions=tuple(Action.from_dict(a) for a in data.get("actions", ())),
            decided_by=str(data.get("decided_by", "")),
            rule=str(data.get("rule", "")),
            ballots=tuple((str(v), str(c)) for v, c in data.get("ballots", ())),
            first_round=(cls.from_dict(data["first_round"]) if data.get("first_round") else None),
            closes=data.get("closes"),
        )


# --------------------------------------------------------------------------- outputs


class Outcome(StrEnum):
    DONE = "done"  # resolved as asked
    BLOCKED = "blocked"  # launched, but a defence stopped it (守护之盾, 救药 …)
    FIZZLED = "fizzled"  # launched, but there was nothing left to act on
    UNUSED = "unused"  # prepared (最后一枪, 殉职 …) but never triggered
    INVALID = "invalid"  # not allowed; ``reason`` says why


OUTCOME_ZH = {
    Outcome.DONE: "已结算",
    Outcome.BLOCKED: "被抵挡",
    Outcome.FIZZLED: "未生效",
    Outcome.UNUSED: "未触发",
    Outcome.INVALID: "无效",
}


@dataclass(frozen=True, slots=True)
class ActionResult:
    action: Action
    step: str
    outcome: Outcome
    reason: str
    rule: str
    resolved_targets: tuple[str, ...] = ()
    redirect_trace: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "actor": self.action.actor,
            "skill": self.action.skill,
            "card": self.action.card,
            "chosen_targets": list(self.action.targets),
            "choice": self.action.choice,
            "resolved_targets": list(self.resolved_targets),
            "redirect_trace": list(self.redirect_trace),
            "outcome": self.outcome.value,
            "reason": self.reason,
            "rule": self.rule,
            "step": self.step,
            "ref": self.action.ref,
        }


@dataclass(frozen=True, slots=True)
class Death:
    """One card out. ``card_index`` is its position (1 = 第一身份) when it went out."""

    player: str
    card: str
    card_uid: str
    card_index: int
    cause: str
    step: str
    rule: str
    source: str = ""
    player_out: bool = False
    kind: str = ""  # attack kind: 杀人 | 技能 | 投票出局 | 红牌罚下 …
    village_skill: bool = False  # out by a village card's skill (村镇之殇)
    red: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "card": self.card,
            "card_index": self.card_index,
            "cause": self.cause,
            "step": self.step,
            "rule": self.rule,
            "source": self.source,
            "player_out": self.player_out,
        }


@dataclass(frozen=True, slots=True)
class Feedback:
    to: str
    text: str
    rule: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"to": self.to, "text": self.text, "rule": self.rule}


@dataclass(frozen=True, slots=True)
class Event:
    """One resolution step: ``{phase, step, rule, actor, chosen→resolved, checked, result,
    because}``."""

    phase: str
    step: str
    rule: str
    result: str
    actor: str = ""
    chosen: tuple[str, ...] = ()
    resolved: tuple[str, ...] = ()
    checked: str = ""
    because: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "step": self.step,
            "rule": self.rule,
            "actor": self.actor,
            "chosen": list(self.chosen),
            "resolved": list(self.resolved),
            "checked": self.checked,
            "result": self.result,
            "because": self.because,
        }


#: The slots a pending decision's prompt may hold where it tells how to record the decision;
#: the front end fills each in with its own syntax (:class:`Pending`).
RECORD = "{record}"  # record the decision: its phase, actor and skill, and the target if any
RECORD_PHASE = "{record_phase}"  # record something for the decision's phase
RECORD_NIGHT = "{record_night}"  # record something for night ``Pending.night`` instead
CHOICE = "{choice}"  # choose the first of ``Pending.choices``
SKILL = "{skill}"  # the skill, and the target if any, without the phase and actor
RESOLVE = "{resolve}"  # resolve the decision's phase again
RECORD_OUT = "{record_out}"  # record player ``Pending.who`` out at ``Pending.at`` (if known)
UNDO = "{undo}"  # take back the recorded action ``Pending.undo`` (its ``Action.ref``)
SLOTS = (RECORD, RECORD_PHASE, RECORD_NIGHT, CHOICE, SKILL, RESOLVE, RECORD_OUT, UNDO)


@dataclass(frozen=True, slots=True)
class Pending:
    """A decision the resolution needed and did not have (it went ahead without it).

    ``prompt`` is the Chinese sentence the director reads; where it tells how to record the
    decision it holds the :data:`SLOTS`, filled in from the data: the phase the decision is
    recorded for (``phase`` "night" or "day", ``number``), what the record holds (``target``:
    the word the prompt uses for the target, None when there is none; ``choices``: the words a
    choice may be, the first one named), ``night``, another night it may be recorded for, and
    ``at``, the time (ISO 8601) the decision is about when the resolution knows it (a player's
    out at noon: the time of the skill that put him out), and ``undo``, the record
    (:attr:`Action.ref`) to take back before the new one is recorded (a refused choice: the
    resolution takes a skill's first record)."""

    who: str
    skill: str
    prompt: str
    rule: str = ""
    phase: str = "day"
    number: int = 0
    target: str | None = None
    choices: tuple[str, ...] = ()
    night: int | None = None
    at: str | None = None
    undo: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "who": self.who,
            "skill": self.skill,
            "prompt": self.prompt,
            "rule": self.rule,
            "phase": self.phase,
            "number": self.number,
            "target": self.target,
            "choices": list(self.choices),
            "night": self.night,
            "at": self.at,
            "undo": self.undo,
        }


@dataclass(frozen=True, slots=True)
class Report:
    phase: str
    actions: tuple[ActionResult, ...]
    deaths: tuple[Death, ...]
    feedback: tuple[Feedback, ...]
    public: tuple[str, ...]
    statuses: tuple[Status, ...]
    winner: str | None
    win_reason: str | None
    win_rule: str | None
    log: tuple[Event, ...]
    pending: tuple[Pending, ...]
    sheriff: str | None

    @property
    def complete(self) -> bool:
        return not self.pending

    def to_dict(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "complete": self.complete,
            "deaths": [d.to_dict() for d in self.deaths],
            "feedback": [f.to_dict() for f in self.feedback],
            "public": list(self.public),
            "statuses": [
                {**s.to_dict(), "until_phase": _phase_label(s.until)} for s in self.statuses
            ],
            "sheriff": self.sheriff,
            "winner": self.winner,
            "win_reason": self.win_reason,
            "win_rule": self.win_rule,
            "log": [e.to_dict() for e in self.log],
            "actions": [a.to_dict() for a in self.actions],
            "pending": [p.to_dict() for p in self.pending],
        }


def _phase_label(index: int | None) -> str | None:
    return None if index is None else Phase.from_index(index).label


@dataclass(frozen=True, slots=True)
class NightReport(Report):
    pass


@dataclass(frozen=True, slots=True)
class DayReport(Report):
    pass


# --------------------------------------------------------------------------- the board


@dataclass(frozen=True, slots=True)
class Trigger:
    """A follow-up queued by a death or a step: run by the kernel when the queue drains."""

    label: str
    run: Callable[[Board], None] = field(compare=False)


def later(fn: Callable[..., object], *args: Any) -> Callable[[Board], None]:
    """A trigger's body: ``fn(board, *args)`` with ``args`` bound now (a loop's current values,
    not its last ones), whatever ``fn`` returns dropped."""

    def run(board: Board) -> None:
        fn(board, *args)

    return run


@dataclass(frozen=True, slots=True)
class Redirect:
    """One target redirector (魔术师[交换]): a mapping applied in the rule set's order."""

    order: int
    label: str
    rule: str
    mapping: tuple[tuple[str, str], ...]


class Board:
    """The mutable working copy of one phase: the state, the scratchpad and the records.

    Rule sets read and change the game only through this object; the kernel turns it back
    into a frozen state and a report at the end.
    """

    def __init__(self, state: GameState, ruleset: Ruleset, phase: Phase) -> None:
        self.rs = ruleset
        self.phase = phase
        self.start = state
        self.order: list[str] = [p.name for p in state.players]
        self.players: dict[str, PlayerState] = {p.name: p for p in state.players}
        self.sheriff = state.sheriff
        index = phase.index
        # statuses age only here, at the phase boundary
        self.statuses: list[Status] = [
            s for s in state.statuses if s.until is None or s.until >= index
        ]
        self.charges: dict[tuple[str, str, str], Charge] = {
            (c.card, c.skill, c.source): c for c in state.charges
        }
        self.cooldowns: dict[tuple[str, str], Cooldown] = {
            (c.card, c.skill): c for c in state.cooldowns if c.ready > index
        }
        self.memory: list[Memory] = list(state.memory)
        self.voters_day = state.voters_day
        self.voters: tuple[str, ...] = state.voters
        self.vote_cards: dict[str, str] = dict(state.vote_cards)
        self.settings: dict[str, str] = dict(state.settings)
        self.winner = state.winner
        self.win_reason = state.win_reason
        self.win_rule = state.win_rule

        self.results: list[ActionResult] = []
        self.deaths: list[Death] = []
        self.feedback: list[Feedback] = []
        self.public: list[str] = []
        self.events: list[Event] = []
        self.pending: list[Pending] = []
        self.queue: deque[Trigger] = deque()
        self.deferred: list[Trigger] = []
        self.redirects: list[Redirect] = []
        self.scratch: dict[str, Any] = {}  # per-phase effects (protections, pending deaths …)
        self.prepared: list[Action] = []  # actions waiting for a trigger (最后一枪, 殉职 …)
        self.used_prepared: set[int] = set()
        self.win_marks: dict[str, int] = {}
        # 互不影响 steps: statuses and redirects made during the step wait here until it ends
        self.staging = False
        self.staged_statuses: list[Status] = []
        self.staged_redirects: list[Redirect] = []

    # -- queries ------------------------------------------------------------------------
    @property
    def index(self) -> int:
        return self.phase.index

    @property
    def night(self) -> int | None:
        return self.phase.number if self.phase.kind is PhaseKind.NIGHT else None

    def has(self, name: str) -> bool:
        return name in self.players

    def player(self, name: str) -> PlayerState:
        try:
            return self.players[name]
        except KeyError:
            raise EngineError(f"名单中没有玩家「{name}」") from None

    def alive(self, name: str) -> bool:
        return name in self.players and self.players[name].alive

    def current(self, name: str) -> CardState | None:
        return self.player(name).current

    def living(self) -> list[str]:
        return [n for n in self.order if self.players[n].alive]

    def seat(self, name: str) -> int:
        return self.order.index(name) if name in self.players else len(self.order)

    def owner(self, uid: str) -> str:
        for name, p in self.players.items():
            if any(c.uid == uid for c in p.cards):
                return name
        raise EngineError(f"没有编号为 {uid} 的身份牌")

    def card(self, uid: str) -> CardState:
        return self.players[self.owner(uid)].card(uid)

    def partner(self, uid: str) -> CardState | None:
        """The other card of the same character (dual-card sets)."""
        owner = self.players[self.owner(uid)]
        others = [c for c in owner.cards if c.uid != uid]
        return others[0] if len(others) == 1 else None

    def setting(self, key: str, default: str) -> str:
        return self.settings.get(key, default)

    # -- statuses, charges, memory -----------------------------------------------------
    def add_status(self, status: Status) -> None:
        if self.staging:
            self.staged_statuses.append(status)
        elif status not in self.statuses:
            self.statuses.append(status)

    def begin_simultaneous(self) -> None:
        """Start a 互不影响 step: what it adds is seen only after :meth:`commit`."""
        self.staging = True

    def commit(self) -> None:
        """End a 互不影响 step: its statuses and redirects take effect together."""
        self.staging = False
        for status in self.staged_statuses:
            self.add_status(status)
        for redirect in self.staged_redirects:
            self.add_redirect(redirect)
        self.staged_statuses, self.staged_redirects = [], []

    def remove_status(self, status: Status) -> None:
        self.statuses = [s for s in self.statuses if s != status]

    def statuses_of(self, holder: str, kind: str | None = None) -> list[Status]:
        return [
            s
            for s in self.statuses
            if s.holder == holder and (kind is None or s.kind == kind) and s.active_at(self.index)
        ]

    def table_status(self, kind: str) -> list[Status]:
        return self.statuses_of("*", kind)

    def charge(self, card: str, skill: str, source: str = "") -> Charge | None:
        return self.charges.get((card, skill, source))

    def set_charge(self, charge: Charge) -> None:
        self.charges[(charge.card, charge.skill, charge.source)] = charge

    def use_charge(self, card: str, skill: str, source: str = "") -> None:
        c = self.charges.get((card, skill, source))
        if c is not None:
            self.set_charge(replace(c, remaining=max(0, c.remaining - 1)))

    def remember(self, card: str, skill: str, targets: Sequence[str]) -> None:
        seq = sum(1 for m in self.memory if m.phase == self.index and m.card == card)
        self.memory.append(Memory(card, skill, self.index, tuple(targets), seq))

    def memories(self, card: str, skill: str) -> list[Memory]:
        return sorted(
            (m for m in self.memory if m.card == card and m.skill == skill), key=Memory.sort_key
        )

    # -- records ------------------------------------------------------------------------
    def emit(
        self,
        step: str,
        rule: str,
        result: str,
        *,
        actor: str = "",
        chosen: Sequence[str] = (),
        resolved: Sequence[str] = (),
        checked: str = "",
        because: str = "",
    ) -> None:
        self.events.append(
            Event(
                self.phase.label,
                step,
                rule,
                result,
                actor,
                tuple(chosen),
                tuple(resolved),
                checked,
                because,
            )
        )

    def tell(self, to: str, text: str, rule: str = "") -> None:
        self.feedback.append(Feedback(to, text, rule))

    def announce(self, text: str) -> None:
        self.public.append(text)

    def need(
        self,
        who: str,
        skill: str,
        prompt: str,
        rule: str = "",
        *,
        target: str | None = None,
        choices: tuple[str, ...] = (),
        night: int | None = None,
        at: str | None = None,
        undo: str | None = None,
    ) -> None:
        """A decision still to collect, recorded for the phase being resolved."""
        phase, number = (
            ("night", self.night) if self.night is not None else ("day", self.phase.number)
        )
        self.pending.append(
            Pending(who, skill, prompt, rule, phase, number, target, choices, night, at, undo)
        )

    def record(
        self,
        action: Action,
        step: str,
        outcome: Outcome,
        reason: str,
        rule: str,
        resolved: Sequence[str] = (),
        trace: Sequence[str] = (),
    ) -> ActionResult:
        result = ActionResult(action, step, outcome, reason, rule, tuple(resolved), tuple(trace))
        self.results.append(result)
        return result

    def amend(self, result: ActionResult, outcome: Outcome, extra: str) -> None:
        """Change a recorded result's outcome (a kill later blocked by a defence)."""
        for i, r in enumerate(self.results):
            if r is result:
                self.results[i] = replace(r, outcome=outcome, reason=f"{r.reason}；{extra}")
                return

    # -- prepared actions (decisions used when a trigger fires) -------------------------
    def take_prepared(self, actor: str, skill: str) -> Action | None:
        for i, a in enumerate(self.prepared):
            if i not in self.used_prepared and a.actor == actor and a.skill == skill:
                self.used_prepared.add(i)
                return a
        return None

    def unused_prepared(self) -> list[Action]:
        return [a for i, a in enumerate(self.prepared) if i not in self.used_prepared]

    # -- targets ------------------------------------------------------------------------
    def add_redirect(self, redirect: Redirect) -> None:
        if self.staging:
            self.staged_redirects.append(redirect)
            return
        self.redirects.append(redirect)
        self.redirects.sort(key=lambda r: r.order)

    def resolve_targets(self, chosen: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """选择目标 → 结算目标 through every redirector in order; (resolved, trace)."""
        targets = list(chosen)
        trace: list[str] = []
        for r in self.redirects:
            mapping = dict(r.mapping)
            moved = [mapping.get(t, t) for t in targets]
            for before, after in zip(targets, moved, strict=True):
                if before != after:
                    trace.append(f"{r.label}：{before}→{after}（{r.rule}）")
            targets = moved
        return tuple(targets), tuple(trace)

    # -- cards --------------------------------------------------------------------------
    def swap_cards(self, name: str) -> None:
        p = self.player(name)
        self.players[name] = replace(p, cards=tuple(reversed(p.cards)))

    def join_wolf_group(self, name: str) -> bool:
        p = self.player(name)
        if p.wolf_group:
            return False
        self.players[name] = replace(p, wolf_group=True)
        return True

    def card_out(
        self,
        name: str,
        *,
        cause: str,
        step: str,
        rule: str,
        source: str = "",
        kind: str = "",
        village_skill: bool = False,
        red: bool = False,
        bound_uid: str | None = None,
    ) -> Death | None:
        """Put the character's current card (or the bound card) out; None if nothing to do.

        Nobody dies twice: a card already out, or a character already out, is left alone and
        the event says so. The rule set's follow-ups (shots, chain deaths, joining the wolf
        group, a sheriff's hand-over) are queued in front of whatever comes next.
        """
        p = self.player(name)
        if not p.alive:
            self.emit(step, rule, f"{name}已出局，不再结算", actor=source, because=cause)
            return None
        card = p.current if bound_uid is None else p.card(bound_uid)
        assert card is not None
        if not card.alive:
            self.emit(
                step,
                rule,
                f"{name}的{card.name}已出局，不再结算",
                actor=source,
                because=cause,
            )
            return None
        position = p.position(card.uid)
        out = replace(card, alive=False, out_phase=self.phase.label, out_cause=cause)
        p = p.with_card(out)
        self.players[name] = p
        death = Death(
            player=name,
            card=card.name,
            card_uid=card.uid,
            card_index=position,
            cause=cause,
            step=step,
            rule=rule,
            source=source,
            player_out=not p.alive,
            kind=kind,
            village_skill=village_skill,
            red=red,
        )
        self.deaths.append(death)
        ordinal = ZH_ORDINAL.get(position, f"第{position}身份")
        nxt = p.current
        if len(p.cards) == 1:  # one card: its position means nothing to the player
            self.tell(name, f"你（{card.name}）出局（{cause}）。", rule)
        elif nxt is None:
            self.tell(name, f"你的{ordinal}（{card.name}）出局（{cause}），你已出局。", rule)
        else:
            self.tell(
                name,
                f"你的{ordinal}（{card.name}）出局（{cause}）；当前身份变为"
                f"{ZH_ORDINAL.get(p.position(nxt.uid), '')}（{nxt.name}）。",
                rule,
            )
        self.emit(
            step,
            rule,
            f"{name}的{ordinal}（{card.name}）出局" + ("，该角色出局" if not p.alive else ""),
            actor=source,
            resolved=(name,),
            because=cause,
        )
        self.rs.after_card_out(self, death)
        self.rs.mark_win_conditions(self)
        return death

    # -- triggers -----------------------------------------------------------------------
    def push_front(self, *triggers: Trigger) -> None:
        """即时插入结算: run these before anything already queued (in the given order)."""
        for t in reversed(triggers):
            self.queue.appendleft(t)

    def defer(self, trigger: Trigger) -> None:
        """Run after every death of the phase has been resolved (a sheriff's hand-over)."""
        if all(t.label != trigger.label for t in self.deferred):
            self.deferred.append(trigger)

    def drain(self) -> None:
        """Run queued triggers until nothing new happens."""
        guard = 0
        while self.queue:
            guard += 1
            if guard > 10_000:  # every trigger is tied to a card going out: cannot loop
                raise EngineError("触发结算没有终止（规则集实现错误）")
            trigger = self.queue.popleft()
            trigger.run(self)

    def run_deferred(self) -> None:
        while self.deferred:
            trigger = self.deferred.pop(0)
            trigger.run(self)
            self.drain()

    # -- the end ------------------------------------------------------------------------
    def set_winner(self, faction: str, reason: str, rule: str) -> None:
        if self.winner is None:
            self.winner, self.win_reason, self.win_rule = faction, reason, rule

    def freeze(self) -> GameState:
        return GameState(
            ruleset=self.start.ruleset,
            phase=self.phase,
            players=tuple(self.players[n] for n in self.order),
            sheriff=self.sheriff,
            statuses=tuple(self.statuses),
            charges=tuple(self.charges.values()),
            cooldowns=tuple(self.cooldowns.values()),
            memory=tuple(self.memory),
            voters_day=self.voters_day,
            voters=self.voters,
            vote_cards=tuple(self.vote_cards.items()),
            winner=self.winner,
            win_reason=self.win_reason,
            win_rule=self.win_rule,
            settings=tuple(self.settings.items()),
        )

    def report(self, cls: type[Report], state: GameState) -> Report:
        return cls(
            phase=self.phase.label,
            actions=tuple(self.results),
            deaths=tuple(self.deaths),
            feedback=tuple(self.feedback),
            public=tuple(self.public),
            statuses=state.statuses,
            winner=self.winner,
            win_reason=self.win_reason,
            win_rule=self.win_rule,
            log=tuple(self.events),
            pending=tuple(self.pending),
            sheriff=self.sheriff,
        )


# ----------------------------------------------------------------------- seeded choice, phase order


def seeded_choice(seed: str, candidates: Sequence[str]) -> str:
    """A reproducible draw: the same seed and candidates always give the same pick.

    The seed comes from the director's journal (e.g. the red card's record), never from a
    random number generator at resolution time.
    """
    if not candidates:
        raise EngineError("没有可供抽取的候选人")
    digest = hashlib.sha256(f"{seed}|{'|'.join(candidates)}".encode()).hexdigest()
    return candidates[int(digest, 16) % len(candidates)]


def _check_sequence(state: GameState, phase: Phase) -> None:
    if state.winner is not None:
        raise EngineError(
            f"游戏已结束（{state.winner}胜利：{state.win_reason}），不能再结算{phase.zh}"
        )
    expected = state.phase.next()
    if phase.index != expected.index:
        raise EngineError(
            f"结算顺序不对：当前状态停在{state.phase.zh}，下一个应结算{expected.zh}，"
            f"而不是{phase.zh}"
        )


# --------------------------------------------------------------------------- resolution


def resolve_night(
    state: GameState,
    actions: Iterable[Action],
    ruleset: Ruleset,
    *,
    night: int | None = None,
) -> tuple[GameState, NightReport]:
    """Resolve one night: ``(new_state, report)``. Pure; the input state is not changed.

    ``night`` defaults to the night after the state's phase. The actions are put in a fixed
    order first, so the order they were typed in never changes the result.
    """
    if ruleset.id != state.ruleset:
        raise EngineError(f"状态属于规则集 {state.ruleset}，不能用 {ruleset.id} 结算")
    phase = Phase.night(night) if night is not None else state.phase.next()
    if phase.kind is not PhaseKind.NIGHT:
        raise EngineError(f"当前状态停在{state.phase.zh}，下一个阶段是白天，不是夜晚")
    _check_sequence(state, phase)
    board = Board(state, ruleset, phase)
    ruleset.run_night(board, canonical_actions(actions))
    _finish(board, ruleset)
    new_state = board.freeze()
    report = board.report(NightReport, new_state)
    assert isinstance(report, NightReport)
    return new_state, report


def resolve_day(
    state: GameState, day_input: DayInput, ruleset: Ruleset
) -> tuple[GameState, DayReport]:
    """Apply a day's vote result (and the day's decisions) to the state. Pure."""
    if ruleset.id != state.ruleset:
        raise EngineError(f"状态属于规则集 {state.ruleset}，不能用 {ruleset.id} 结算")
    phase = Phase.day(day_input.day)
    _check_sequence(state, phase)
    board = Board(state, ruleset, phase)
    ruleset.run_day(board, day_input)
    _finish(board, ruleset)
    new_state = board.freeze()
    report = board.report(DayReport, new_state)
    assert isinstance(report, DayReport)
    return new_state, report


def _finish(board: Board, ruleset: Ruleset) -> None:
    board.drain()
    board.run_deferred()
    ruleset.end_of_phase(board)
    board.drain()
    board.run_deferred()
    for action in board.unused_prepared():
        board.record(
            action,
            "触发",
            Outcome.UNUSED,
            ruleset.unused_reason(action),
            ruleset.skill_rule(action.skill),
        )
    ruleset.check_win(board)
