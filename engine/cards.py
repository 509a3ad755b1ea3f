"""The card ledger: blue / yellow / red cards, escalation, 红牌罚下 and faction loss.

Pure: a ledger is a function of the confirmed card events and the players' factions.

What a rule set says about cards is its :class:`CardRules`, declared with the rule lines in
its module (``Ruleset.cards``) and given to
:func:`card_ledger`: 3 blue = 1 yellow and 3 yellow = 1 red, a red card puts the player out
(红牌罚下, out players can still be carded), and — where the text says so — two reds in one
faction make it lose (``reds_to_lose``; None: the director decides, where a text says so).
A text silent on cards (an empty 违规判定 post) keeps the common defaults
(docs/rulings.md#conduct-defaults).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = [
    "Card",
    "CardEvent",
    "CardRules",
    "FactionLoss",
    "Ledger",
    "PlayerCards",
    "card_ledger",
]


class Card(StrEnum):
    """A card colour, valued as a director writes it."""

    BLUE = "蓝牌"
    YELLOW = "黄牌"
    RED = "红牌"

    @classmethod
    def parse(cls, value: str | Card) -> Card:
        """Accept ``蓝牌``/``蓝``/``blue`` (and the same for 黄, 红); raise ``ValueError``."""
        if isinstance(value, Card):
            return value
        key = value.strip().lower()
        for card, words in _CARD_WORDS.items():
            if key in words:
                return card
        raise ValueError(f"无法识别的牌色：「{value}」（应为 蓝牌、黄牌 或 红牌）")

    @property
    def rank(self) -> int:
        return _RANK[self]


_CARD_WORDS: dict[Card, frozenset[str]] = {
    Card.BLUE: frozenset({"蓝牌", "蓝", "blue"}),
    Card.YELLOW: frozenset({"黄牌", "黄", "yellow"}),
    Card.RED: frozenset({"红牌", "红", "red"}),
}
_RANK = {Card.BLUE: 0, Card.YELLOW: 1, Card.RED: 2}


@dataclass(frozen=True, slots=True)
class CardRules:
    """What a rule set says about cards. Citations are ``file:line``."""

    ruleset: str
    blue_per_yellow: int = 3
    yellow_per_red: int = 3
    reds_to_lose: int | None = 2  # None: no automatic faction loss
    escalation_rule: str = "docs/rulings.md#conduct-defaults"
    red_out_rule: str = "docs/rulings.md#conduct-defaults"
    faction_rule: str = "docs/rulings.md#conduct-defaults"


@dataclass(frozen=True, slots=True)
class CardEvent:
    """A card a director gave (confirmed flag or by hand)."""

    player: str
    colour: Card
    reason: str
    at: datetime
    source: str = "导演"  # a flag id, or "导演" for a card given by hand

    def __post_init__(self) -> None:
        object.__setattr__(self, "colour", Card.parse(self.colour))

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "colour": self.colour.value,
            "reason": self.reason,
            "at": self.at.isoformat(),
            "source": self.source,
        }


@dataclass(frozen=True, slots=True)
class PlayerCards:
    """One player's cards after escalation (3 blue → 1 yellow, 3 yellow → 1 red)."""

    player: str
    faction: str | None
    blue: int
    yellow: int
    red: int
    received: Mapping[Card, int]  # cards given, before escalation
    history: tuple[str, ...]
    out_at: datetime | None  # 红牌罚下 time (the first red)

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "faction": self.faction,
            "blue": self.blue,
            "yellow": self.yellow,
            "red": self.red,
            "received": {c.value: self.received.get(c, 0) for c in Card},
            "history": list(self.history),
            "out_at": self.out_at.isoformat() if self.out_at else None,
        }


@dataclass(frozen=True, slots=True)
class FactionLoss:
    faction: str
    at: datetime  # when the faction reached the losing number of reds
    reds: int
    players: tuple[str, ...]
    reason: str
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "faction": self.faction,
            "at": self.at.isoformat(),
            "reds": self.reds,
            "players": list(self.players),
            "reason": self.reason,
            "rule": self.rule,
        }


@dataclass(frozen=True, slots=True)
class Ledger:
    ruleset: str
    players: Mapping[str, PlayerCards]
    out_by_red: Mapping[str, datetime]
    losing_factions: tuple[FactionLoss, ...]
    reds_by_faction: Mapping[str, int]
    escalations: tuple[str, ...]
    rules: CardRules = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset,
            "players": {name: pc.to_dict() for name, pc in self.players.items()},
            "out_by_red": {name: at.isoformat() for name, at in self.out_by_red.items()},
            "losing_factions": [loss.to_dict() for loss in self.losing_factions],
            "reds_by_faction": dict(self.reds_by_faction),
            "escalations": list(self.escalations),
            "rules": {
                "escalation": self.rules.escalation_rule,
                "red_out": self.rules.red_out_rule,
                "faction": self.rules.faction_rule,
            },
        }


def _event_key(event: CardEvent) -> tuple[datetime, str, int, str, str]:
    return (event.at, event.player, event.colour.rank, event.source, event.reason)


@dataclass(slots=True)
class _Acc:
    blue: int = 0
    yellow: int = 0
    red: int = 0
    received: dict[Card, int] = field(default_factory=dict)
    history: list[str] = field(default_factory=list)
    out_at: datetime | None = None


def card_ledger(
    events: Sequence[CardEvent],
    factions: Mapping[str, str | None],
    *,
    rules: CardRules,
) -> Ledger:
    """Replay the card events in time order and return each player's cards.

    Order of ``events`` does not matter (they are sorted by time, then player, colour, source).
    A red card, given or reached by escalation, puts the player out at that time (out players
    can still be carded). A faction whose players together reach ``reds_to_lose`` reds loses.
    ``rules``: the rule set's card rules (``Ruleset.cards``).
    """
    accs: dict[str, _Acc] = {}
    escalations: list[str] = []
    out_by_red: dict[str, datetime] = {}
    faction_reds: dict[str, int] = {}
    faction_red_players: dict[str, list[str]] = {}
    losses: dict[str, FactionLoss] = {}

    def add_red(player: str, at: datetime) -> None:
        acc = accs[player]
        acc.red += 1
        if acc.out_at is None:
            acc.out_at = at
            out_by_red[player] = at
            acc.history.append(f"{at.strftime('%Y-%m-%d %H:%M')} {player}红牌罚下出局")
        faction = factions.get(player)
        if faction is None:
            return
        faction_reds[faction] = faction_reds.get(faction, 0) + 1
        names = faction_red_players.setdefault(faction, [])
        if player not in names:
            names.append(player)
        need = rules.reds_to_lose
        if need is not None and faction_reds[faction] >= need and faction not in losses:
            losses[faction] = FactionLoss(
                faction=faction,
                at=at,
                reds=faction_reds[faction],
                players=tuple(names),
                reason=f"{faction}累计获得{faction_reds[faction]}张红牌（{'、'.join(names)}），阵营判负",
                rule=rules.faction_rule,
            )

    for event in sorted(events, key=_event_key):
        acc = accs.setdefault(event.player, _Acc())
        acc.received[event.colour] = acc.received.get(event.colour, 0) + 1
        stamp = event.at.strftime("%Y-%m-%d %H:%M")
        acc.history.append(f"{stamp} {event.colour.value}：{event.reason}（来源：{event.source}）")
        if event.colour is Card.BLUE:
            acc.blue += 1
        elif event.colour is Card.YELLOW:
            acc.yellow += 1
        else:
            add_red(event.player, event.at)
        if acc.blue >= rules.blue_per_yellow:
            acc.blue -= rules.blue_per_yellow
            acc.yellow += 1
            line = f"{event.player}累计{rules.blue_per_yellow}张蓝牌，折合1张黄牌"
            escalations.append(line)
            acc.history.append(f"{stamp} {line}")
        if acc.yellow >= rules.yellow_per_red:
            acc.yellow -= rules.yellow_per_red
            line = f"{event.player}累计{rules.yellow_per_red}张黄牌，折合1张红牌"
            escalations.append(line)
            acc.history.append(f"{stamp} {line}")
            add_red(event.player, event.at)

    players = {
        name: PlayerCards(
            player=name,
            faction=factions.get(name),
            blue=acc.blue,
            yellow=acc.yellow,
            red=acc.red,
            received={c: acc.received[c] for c in Card if c in acc.received},
            history=tuple(acc.history),
            out_at=acc.out_at,
        )
        for name, acc in sorted(accs.items())
    }
    return Ledger(
        ruleset=rules.ruleset,
        players=players,
        out_by_red=dict(sorted(out_by_red.items(), key=lambda kv: (kv[1], kv[0]))),
        losing_factions=tuple(sorted(losses.values(), key=lambda x: (x.at, x.faction))),
        reds_by_faction=dict(sorted(faction_reds.items())),
        escalations=tuple(escalations),
        rules=rules,
    )
