"""The engine's game state: a frozen value that serialises to canonical JSON and back.

A game is its setup plus the director's journal replayed phase by phase; the
pipeline stores one snapshot of this value per phase. Everything here is pure data:

- :class:`Phase` — ``setup``, ``night:N`` or ``day:N``, with a total order (``index``):
  setup 0, night 0 → 1, day 1 → 2, night 1 → 3, … day N → 2N, night N → 2N+1.
- :class:`CardState` — one identity card (身份牌) with a stable ``uid`` that survives swaps.
- :class:`PlayerState` — a character (角色) holding its cards in order (index 0 = 第一身份);
  the current card is the first card still alive.
- :class:`Status` — ``{kind, holder, source, since, until, count, negative, survives_death}``;
  statuses age only at explicit phase boundaries (``until`` is the last phase index).
- :class:`Charge` — a per-card skill charge (限定 = 1, 馈赠 temporary skills = 1, 次数).
- :class:`Cooldown`, :class:`Memory` — cooldowns and target memory (不能连续两晚…, 每名角色只能
  被选择一次) per card and skill.

``GameState.to_json()`` is canonical (sorted keys, no spaces, a fixed order for every
collection), so equal states give equal bytes and a stable hash.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

__all__ = [
    "CardState",
    "Charge",
    "Cooldown",
    "GameState",
    "Memory",
    "Phase",
    "PhaseKind",
    "PlayerState",
    "StateError",
    "Status",
]

ZH_ORDINAL = {1: "第一身份", 2: "第二身份"}


def _canon(data: Mapping[str, Any]) -> str:
    """The total-order tie-breaker of sort keys: two values sort apart unless they are equal."""
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class StateError(ValueError):
    """A state that cannot be read (bad JSON, unknown player…); the message is Chinese."""


class PhaseKind(StrEnum):
    SETUP = "setup"
    NIGHT = "night"
    DAY = "day"


@dataclass(frozen=True, slots=True)
class Phase:
    kind: PhaseKind
    number: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", PhaseKind(self.kind))
        if self.number < 0 or (self.kind is PhaseKind.DAY and self.number < 1):
            raise StateError(f"阶段编号不合法：{self.kind.value}:{self.number}")

    @classmethod
    def setup(cls) -> Phase:
        return cls(PhaseKind.SETUP, 0)

    @classmethod
    def night(cls, n: int) -> Phase:
        return cls(PhaseKind.NIGHT, n)

    @classmethod
    def day(cls, n: int) -> Phase:
        return cls(PhaseKind.DAY, n)

    @classmethod
    def from_index(cls, index: int) -> Phase:
        if index <= 0:
            return cls.setup()
        return cls.night((index - 1) // 2) if index % 2 else cls.day(index // 2)

    @classmethod
    def parse(cls, text: str) -> Phase:
        """``setup``, ``night:2`` or ``day:3``."""
        raw = text.strip()
        if raw == "setup":
            return cls.setup()
        kind, _, number = raw.partition(":")
        try:
            return cls(PhaseKind(kind), int(number))
        except (ValueError, StateError):
            raise StateError(f"无法识别的阶段：{text!r}（应为 setup、night:N 或 day:N）") from None

    @property
    def index(self) -> int:
        if self.kind is PhaseKind.SETUP:
            return 0
        return 2 * self.number + 1 if self.kind is PhaseKind.NIGHT else 2 * self.number

    @property
    def label(self) -> str:
        return "setup" if self.kind is PhaseKind.SETUP else f"{self.kind.value}:{self.number}"

    @property
    def zh(self) -> str:
        if self.kind is PhaseKind.SETUP:
            return "开局"
        return f"第{self.number}{'晚' if self.kind is PhaseKind.NIGHT else '天'}"

    def next(self) -> Phase:
        return Phase.from_index(self.index + 1)

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True, slots=True)
class CardState:
    """One identity card. ``uid`` is ``<player>#<position at setup>`` and never changes."""

    uid: str
    name: str
    alive: bool = True
    out_phase: str | None = None  # Phase.label
    out_cause: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "uid": self.uid,
            "name": self.name,
            "alive": self.alive,
            "out_phase": self.out_phase,
            "out_cause": self.out_cause,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CardState:
        return cls(
            uid=str(data["uid"]),
            name=str(data["name"]),
            alive=bool(data["alive"]),
            out_phase=data.get("out_phase"),
            out_cause=data.get("out_cause"),
        )


@dataclass(frozen=True, slots=True)
class PlayerState:
    """A character: its cards in order (index 0 = 第一身份), and what the table knows of it."""

    name: str
    cards: tuple[CardState, ...]
    wolf_group: bool = False  # 入狼群: joined on gaining <杀人>, never leaves
    red_carded: bool = False

    @property
    def alive(self) -> bool:
        return any(c.alive for c in self.cards)

    @property
    def current_index(self) -> int | None:
        """0-based position of the current card: the first card still alive."""
        for i, card in enumerate(self.cards):
            if card.alive:
                return i
        return None

    @property
    def current(self) -> CardState | None:
        i = self.current_index
        return None if i is None else self.cards[i]

    def card(self, uid: str) -> CardState:
        for c in self.cards:
            if c.uid == uid:
                return c
        raise StateError(f"{self.name}没有编号为 {uid} 的身份牌")

    def position(self, uid: str) -> int:
        """1-based position of the card (1 = 第一身份)."""
        for i, c in enumerate(self.cards):
            if c.uid == uid:
                return i + 1
        raise StateError(f"{self.name}没有编号为 {uid} 的身份牌")

    def with_card(self, card: CardState) -> PlayerState:
        return replace(self, cards=tuple(card if c.uid == card.uid else c for c in self.cards))

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "cards": [c.to_dict() for c in self.cards],
            "wolf_group": self.wolf_group,
            "red_carded": self.red_carded,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PlayerState:
        return cls(
            name=str(data["name"]),
            cards=tuple(CardState.from_dict(c) for c in data["cards"]),
            wolf_group=bool(data.get("wolf_group", False)),
            red_carded=bool(data.get("red_carded", False)),
        )


@dataclass(frozen=True, slots=True)
class Status:
    """A status on a player, a card (by uid) or the whole table (holder ``*``).

    Active from phase index ``since`` through ``until`` (inclusive; None: until removed).
    """

    kind: str
    holder: str
    source: str
    since: int
    until: int | None = None
    count: int | None = None
    negative: bool = False
    survives_death: bool = False
    note: str = ""

    def active_at(self, index: int) -> bool:
        return self.since <= index and (self.until is None or index <= self.until)

    def sort_key(self) -> tuple[Any, ...]:
        return (
            self.since,
            self.kind,
            self.holder,
            self.source,
            self.until or -1,
            self.note,
            _canon(self.to_dict()),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "holder": self.holder,
            "source": self.source,
            "since": self.since,
            "until": self.until,
            "count": self.count,
            "negative": self.negative,
            "survives_death": self.survives_death,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Status:
        return cls(
            kind=str(data["kind"]),
            holder=str(data["holder"]),
            source=str(data["source"]),
            since=int(data["since"]),
            until=None if data.get("until") is None else int(data["until"]),
            count=None if data.get("count") is None else int(data["count"]),
            negative=bool(data.get("negative", False)),
            survives_death=bool(data.get("survives_death", False)),
            note=str(data.get("note", "")),
        )

    def describe(self) -> str:
        until = "" if self.until is None else f"，至{Phase.from_index(self.until).zh}结束"
        count = "" if self.count is None else f"，剩余{self.count}次"
        return f"{self.holder}：{self.kind}（来源：{self.source}{until}{count}）"


@dataclass(frozen=True, slots=True)
class Charge:
    """A skill's charges on one card (by uid): 限定 skills start at 1; 馈赠 gifts too."""

    card: str
    skill: str
    remaining: int
    source: str = ""  # "" for the card's own skill, e.g. "春卷的黑商[馈赠]" for a gift
    since: int = 0  # phase index from which it may be used

    def sort_key(self) -> tuple[Any, ...]:
        return (self.card, self.skill, self.source, self.since, _canon(self.to_dict()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "card": self.card,
            "skill": self.skill,
            "remaining": self.remaining,
            "source": self.source,
            "since": self.since,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Charge:
        return cls(
            card=str(data["card"]),
            skill=str(data["skill"]),
            remaining=int(data["remaining"]),
            source=str(data.get("source", "")),
            since=int(data.get("since", 0)),
        )


@dataclass(frozen=True, slots=True)
class Cooldown:
    """A skill on a card that may be used again from phase index ``ready`` (冷却)."""

    card: str
    skill: str
    ready: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.card, self.skill, self.ready)

    def to_dict(self) -> dict[str, Any]:
        return {"card": self.card, "skill": self.skill, "ready": self.ready}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Cooldown:
        return cls(card=str(data["card"]), skill=str(data["skill"]), ready=int(data["ready"]))


@dataclass(frozen=True, slots=True)
class Memory:
    """Who a card's skill chose in a phase (the chosen targets, 选择目标). ``seq``: the card's
    earlier choices in the same phase (a night with a second round): the last one is the one
    used last, not the one whose targets sort last."""

    card: str
    skill: str
    phase: int
    targets: tuple[str, ...]
    seq: int = 0

    def sort_key(self) -> tuple[Any, ...]:
        return (self.phase, self.seq, self.card, self.skill, self.targets, _canon(self.to_dict()))

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "card": self.card,
            "skill": self.skill,
            "phase": self.phase,
            "targets": list(self.targets),
        }
        if self.seq:  # a state without second uses reads as before
            data["seq"] = self.seq
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Memory:
        return cls(
            card=str(data["card"]),
            skill=str(data["skill"]),
            phase=int(data["phase"]),
            targets=tuple(str(t) for t in data["targets"]),
            seq=int(data.get("seq", 0)),
        )


@dataclass(frozen=True, slots=True)
class GameState:
    """The whole state after a phase. Players keep seat order (the game file's order)."""

    ruleset: str
    phase: Phase
    players: tuple[PlayerState, ...]
    sheriff: str | None = None
    statuses: tuple[Status, ...] = ()
    charges: tuple[Charge, ...] = ()
    cooldowns: tuple[Cooldown, ...] = ()
    memory: tuple[Memory, ...] = ()
    voters_day: int | None = None  # the day whose voters are recorded below
    voters: tuple[str, ...] = ()  # players with a counted ballot that day (弃权 included)
    vote_cards: tuple[tuple[str, str], ...] = ()  # (player, current card uid) at that vote
    winner: str | None = None
    win_reason: str | None = None
    win_rule: str | None = None
    settings: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        # canonical order for every collection whose order carries no meaning
        object.__setattr__(self, "statuses", tuple(sorted(self.statuses, key=Status.sort_key)))
        object.__setattr__(self, "charges", tuple(sorted(self.charges, key=Charge.sort_key)))
        object.__setattr__(self, "cooldowns", tuple(sorted(self.cooldowns, key=Cooldown.sort_key)))
        object.__setattr__(self, "memory", tuple(sorted(self.memory, key=Memory.sort_key)))
        object.__setattr__(self, "voters", tuple(sorted(set(self.voters))))
        object.__setattr__(self, "vote_cards", tuple(sorted(self.vote_cards)))
        object.__setattr__(self, "settings", tuple(sorted(self.settings)))
        names = [p.name for p in self.players]
        if len(set(names)) != len(names):
            raise StateError(
                f"玩家名重复：{'、'.join(sorted({n for n in names if names.count(n) > 1}))}"
            )

    # -- queries ------------------------------------------------------------------------
    def player(self, name: str) -> PlayerState:
        for p in self.players:
            if p.name == name:
                return p
        raise StateError(f"名单中没有玩家「{name}」")

    @property
    def living(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.players if p.alive)

    def charge(self, card: str, skill: str, source: str = "") -> Charge | None:
        for c in self.charges:
            if (c.card, c.skill, c.source) == (card, skill, source):
                return c
        return None

    # -- serialisation ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "phase": self.phase.label,
            "players": [p.to_dict() for p in self.players],
            "sheriff": self.sheriff,
            "statuses": [s.to_dict() for s in self.statuses],
            "charges": [c.to_dict() for c in self.charges],
            "cooldowns": [c.to_dict() for c in self.cooldowns],
            "memory": [m.to_dict() for m in self.memory],
            "voters_day": self.voters_day,
            "voters": list(self.voters),
            "vote_cards": [list(pair) for pair in self.vote_cards],
            "winner": self.winner,
            "win_reason": self.win_reason,
            "win_rule": self.win_rule,
            "settings": [list(pair) for pair in self.settings],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GameState:
        try:
            return cls(
                ruleset=str(data["ruleset"]),
                phase=Phase.parse(str(data["phase"])),
                players=tuple(PlayerState.from_dict(p) for p in data["players"]),
                sheriff=data.get("sheriff"),
                statuses=tuple(Status.from_dict(s) for s in data.get("statuses", ())),
                charges=tuple(Charge.from_dict(c) for c in data.get("charges", ())),
                cooldowns=tuple(Cooldown.from_dict(c) for c in data.get("cooldowns", ())),
                memory=tuple(Memory.from_dict(m) for m in data.get("memory", ())),
                voters_day=data.get("voters_day"),
                voters=tuple(str(v) for v in data.get("voters", ())),
                vote_cards=tuple((str(a), str(b)) for a, b in data.get("vote_cards", ())),
                winner=data.get("winner"),
                win_reason=data.get("win_reason"),
                win_rule=data.get("win_rule"),
                settings=tuple((str(a), str(b)) for a, b in data.get("settings", ())),
            )
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, StateError):
                raise
            raise StateError(f"无法读取引擎状态：{exc!r}") from None

    def to_json(self) -> str:
        """Canonical JSON: sorted keys, no insignificant spaces, non-ASCII kept."""
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> GameState:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StateError(f"引擎状态不是有效的 JSON：{exc.msg}（第 {exc.lineno} 行）") from None
        if not isinstance(data, dict):
            raise StateError("引擎状态应为一个 JSON 对象")
        return cls.from_dict(data)

    def digest(self) -> str:
        """sha256 of the canonical JSON."""
        return hashlib.sha256(self.to_json().encode("utf-8")).hexdigest()
