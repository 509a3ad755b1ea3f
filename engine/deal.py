"""A verifiable deal: cards drawn for a roster under each rule set's line-up constraints.

Pure: no network, disk or clock, and no entropy of its own — the randomness comes in as an
argument (``rng``, anything with ``randrange(n)``). The pipeline makes a secret 32-byte seed
with :func:`secrets.token_bytes` and passes :class:`SeedStream` built from it, so a revealed seed
lets anyone re-derive the deal (the CLI's deal verification).

The stream: block ``i`` is ``SHA-256(b"bansha-deal/1\\0" + seed + i as 8 bytes big-endian)``;
the blocks are read as consecutive 64-bit big-endian numbers, and ``randrange(n)`` takes the
next number ``x`` below the largest multiple of ``n`` (rejecting the rest) and returns
``x % n``. It is used instead of :class:`random.Random` so the deal of a seed never depends on
the Python version (``random.sample``'s algorithm is an implementation detail).

Every draw uses only ``randrange`` through :func:`shuffle` (Fisher–Yates from the end) and
:func:`sample` (a partial Fisher–Yates); decks and pools are sorted by code point before they
are drawn from, so reordering a rule-set module's tables never changes what a seed deals.

Each rule set deals its own line-up (:meth:`engine.rulesets.base.Ruleset.deal`, the line-up
section of its rule text) with the functions here, and says how many players it is for
(:meth:`~engine.rulesets.base.Ruleset.deal_count`). Every deal is checked against the rule
set's own ``validate_setup`` and ``setup_state`` (with the settings of every game file the deal
can still become, :meth:`~engine.rulesets.base.Ruleset.deal_settings`) before it is returned: a
deal that the game file or the engine would refuse is a bug here, raised as :class:`DealError`.

The commitment (docs/报名与发牌.md): SHA-256 of the canonical text (:func:`canonical_text`),
UTF-8, every line ending with ``\\n``::

    bansha-deal/1
    game=<game id>
    ruleset=<rule set id>
    salt=<64 lowercase hex digits>
    <seat>|<uid>|<name>|<card>,<card>
    …
    extra.<key>=<card>,<card>,…

one line per seat in seat order (seat from 1), then the extra cards of the deal sorted by key
(such as a card the players choose from later).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from engine.kernel import EngineError

if TYPE_CHECKING:
    from engine.rulesets.base import Ruleset

__all__ = [
    "DEAL_FORMAT",
    "MAX_ATTEMPTS",
    "Deal",
    "DealError",
    "Revealed",
    "Rng",
    "SeedStream",
    "canonical_text",
    "commitment",
    "deal",
    "expand",
    "extract_canonical",
    "pairs",
    "parse_canonical",
    "player_count",
    "redeal_problems",
    "sample",
    "shuffle",
]

#: The version line of the canonical text; also the PRNG's domain separator.
DEAL_FORMAT = "bansha-deal/1"
#: Rejection sampling gives up after this many shuffles (never reached by a valid rule set).
MAX_ATTEMPTS = 10_000

_HEX64 = re.compile(r"[0-9a-f]{64}")


class DealError(ValueError):
    """A deal that cannot be made or read (message in Chinese)."""


class Rng(Protocol):
    """What a deal needs of its randomness (``random.Random`` has it too)."""

    def randrange(self, n: int, /) -> int: ...


class SeedStream:
    """A deterministic stream from a secret seed (SHA-256 in counter mode, see the module)."""

    def __init__(self, seed: bytes) -> None:
        if len(seed) < 16:
            raise DealError("随机种子太短（至少 16 字节）")
        self._seed = bytes(seed)
        self._counter = 0
        self._buffer = b""

    @classmethod
    def from_hex(cls, text: str) -> SeedStream:
        text = text.strip().lower()
        if not _HEX64.fullmatch(text):
            raise DealError("随机种子应为 64 位十六进制数字（0-9、a-f）")
        return cls(bytes.fromhex(text))

    def _next64(self) -> int:
        while len(self._buffer) < 8:
            block = hashlib.sha256(
                DEAL_FORMAT.encode() + b"\0" + self._seed + self._counter.to_bytes(8, "big")
            ).digest()
            self._counter += 1
            self._buffer += block
        chunk, self._buffer = self._buffer[:8], self._buffer[8:]
        return int.from_bytes(chunk, "big")

    def randrange(self, n: int, /) -> int:
        if n <= 0:
            raise ValueError("randrange 的上界必须是正整数")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            x = self._next64()
            if x < limit:
                return x % n


def shuffle(items: Sequence[str], rng: Rng) -> list[str]:
    """A shuffled copy (Fisher–Yates from the last position down)."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        j = rng.randrange(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def sample(items: Sequence[str], k: int, rng: Rng) -> list[str]:
    """``k`` distinct positions of ``items`` (a partial Fisher–Yates from the front)."""
    out = list(items)
    if not 0 <= k <= len(out):
        raise DealError(f"不能从 {len(out)} 个中抽 {k} 个")
    for i in range(k):
        j = i + rng.randrange(len(out) - i)
        out[i], out[j] = out[j], out[i]
    return out[:k]


def expand(deck: Mapping[str, int]) -> list[str]:
    """A deck table (card → how many) as a list of cards, sorted by code point."""
    return sorted(card for card, n in deck.items() for _ in range(n))


# --------------------------------------------------------------------------- the deal


@dataclass(frozen=True, slots=True)
class Deal:
    """Cards for a roster, seat by seat, and what else the rule set's table must hold."""

    ruleset: str
    players: tuple[str, ...]
    cards: tuple[tuple[str, ...], ...]  # per seat, in the order the game file lists them
    #: extra cards that are part of the deal and committed (cards a player chooses from later)
    extras: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: keys to write into the rule set's secret table (the drawn line-up, who holds what)
    table: Mapping[str, Any] = field(default_factory=dict)
    #: keys of that table that a new deal makes stale (choices made knowing the old cards)
    stale: tuple[str, ...] = ()
    #: each seat's actual faction where the cards alone decide it (None: decided later)
    factions: tuple[str | None, ...] = ()
    attempts: int = 1  # shuffles tried (rejection sampling)
    #: a list value of ``table`` in labelled groups, for the reader of the game file
    #: (a drawn line-up by category: ("狼人 4", (…)), …)
    groups: Mapping[str, tuple[tuple[str, tuple[str, ...]], ...]] = field(default_factory=dict)
    #: what the director must know about this deal (Chinese)
    notes: tuple[str, ...] = ()

    def hands(self) -> list[tuple[str, list[str]]]:
        return [(name, list(cards)) for name, cards in zip(self.players, self.cards, strict=True)]


def player_count(rs: Ruleset) -> int:
    """How many players the rule set's line-up is for, from the rule set's own tables."""
    return rs.deal_count()


def deal(rs: Ruleset, players: Sequence[str], rng: Rng) -> Deal:
    """Deal the rule set's line-up to ``players`` (names in seat order).

    Raises :class:`DealError` (Chinese) when the roster does not have the rule set's player
    count, and when a deal fails the rule set's own checks (a bug)."""
    need = rs.deal_count()
    names = tuple(players)
    if len(names) != need:
        raise DealError(f"规则集 {rs.id}（{rs.name}）需要 {need} 名玩家，名单中有 {len(names)} 名")
    if len(set(names)) != len(names):
        raise DealError("名单中有重名的玩家")
    return _checked(rs, rs.deal(names, rng))


def pairs(deck: Sequence[str], rng: Rng) -> list[list[str]]:
    """The deck shuffled and cut into hands of two cards."""
    cards = shuffle(deck, rng)
    return [cards[i : i + 2] for i in range(0, len(cards), 2)]


def _checked(rs: Ruleset, made: Deal) -> Deal:
    """The rule set's own checks, and each player's actual faction where the set decides it."""
    hands = made.hands()
    problems = rs.validate_setup(hands)
    states = []
    for s in rs.deal_settings(made):
        try:
            states.append(rs.setup_state(hands, settings=s, strict=True))
        except EngineError as exc:
            problems.append(str(exc))
    if problems:
        raise DealError(f"{made.ruleset} 的发牌没有通过规则集的检查：" + "；".join(problems))
    factions = tuple(
        None if rs.faction_decided_later(cards) else rs.actual_faction(states[0], name)
        for name, cards in zip(made.players, made.cards, strict=True)
    )
    return replace(made, factions=factions)


# --------------------------------------------------------------------------- the commitment


@dataclass(frozen=True, slots=True)
class Revealed:
    """A canonical text read back."""

    game: str
    ruleset: str
    salt: str
    seats: tuple[tuple[int, str, tuple[str, ...]], ...]  # (uid, name, cards) in seat order
    extras: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for _uid, name, _cards in self.seats)


def _check_piece(what: str, value: str, forbidden: str) -> None:
    if not value or "\n" in value or "\r" in value or any(ch in value for ch in forbidden):
        raise DealError(f"{what}「{value}」不能为空，也不能含换行或 {' '.join(forbidden)}")


def canonical_text(
    *,
    game: str,
    ruleset: str,
    salt: str,
    seats: Sequence[tuple[int, str, Sequence[str]]],
    extras: Sequence[tuple[str, Sequence[str]]] = (),
) -> str:
    """The text the commitment is the SHA-256 of (format in the module docstring)."""
    if not _HEX64.fullmatch(salt):
        raise DealError("盐应为 64 位小写十六进制数字")
    _check_piece("游戏编号", game, "")
    lines = [DEAL_FORMAT, f"game={game}", f"ruleset={ruleset}", f"salt={salt}"]
    for seat, (uid, name, cards) in enumerate(seats, start=1):
        _check_piece("玩家名", name, "")
        for card in cards:
            _check_piece("身份牌名", card, "|,")
        lines.append(f"{seat}|{int(uid)}|{name}|{','.join(cards)}")
    for key, cards in sorted(extras):
        for card in cards:
            _check_piece("身份牌名", card, "|,")
        lines.append(f"extra.{key}={','.join(cards)}")
    return "\n".join(lines) + "\n"


def commitment(text: str) -> str:
    """SHA-256 (lowercase hex) of the canonical text as UTF-8: what ``sha256sum`` prints."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


_SEAT_RE = re.compile(r"(\d+)\|(\d+)\|(.+)\|([^|]*)")


def parse_canonical(text: str) -> Revealed:
    """Read a canonical text (exactly, as :func:`canonical_text` writes it); DealError (Chinese)
    naming the line when it is not one."""
    if not text.endswith("\n"):
        raise DealError("发牌原文的最后一行也应以换行结束")
    lines = text[:-1].split("\n")
    if len(lines) < 5 or lines[0] != DEAL_FORMAT:
        raise DealError(f"第 1 行应为 {DEAL_FORMAT}，发牌原文至少有 5 行")
    head: dict[str, str] = {}
    for n, key in enumerate(("game", "ruleset", "salt"), start=2):
        line = lines[n - 1]
        if not line.startswith(f"{key}="):
            raise DealError(f"第 {n} 行应以 {key}= 开头")
        head[key] = line[len(key) + 1 :]
    if not _HEX64.fullmatch(head["salt"]):
        raise DealError("第 4 行的盐应为 64 位小写十六进制数字")
    seats: list[tuple[int, str, tuple[str, ...]]] = []
    extras: list[tuple[str, tuple[str, ...]]] = []
    for n, line in enumerate(lines[4:], start=5):
        if line.startswith("extra."):
            key, sep, value = line[len("extra.") :].partition("=")
            if not sep or not key:
                raise DealError(f"第 {n} 行应为 extra.键=身份,身份")
            extras.append((key, tuple(value.split(","))))
            continue
        if extras:
            raise DealError(f"第 {n} 行：座次行应在 extra. 行之前")
        match = _SEAT_RE.fullmatch(line)
        if match is None:
            raise DealError(f"第 {n} 行应为 座次|uid|名字|身份,身份")
        seat = int(match.group(1))
        if seat != len(seats) + 1:
            raise DealError(f"第 {n} 行的座次应为 {len(seats) + 1}，实际是 {seat}")
        cards = tuple(match.group(4).split(",")) if match.group(4) else ()
        seats.append((int(match.group(2)), match.group(3), cards))
    if not seats:
        raise DealError("发牌原文中没有玩家")
    revealed = Revealed(head["game"], head["ruleset"], head["salt"], tuple(seats), tuple(extras))
    if (
        canonical_text(
            game=revealed.game,
            ruleset=revealed.ruleset,
            salt=revealed.salt,
            seats=revealed.seats,
            extras=revealed.extras,
        )
        != text
    ):
        raise DealError("发牌原文的写法不是规范格式（extra. 行须按键排序，不能有多余的空格）")
    return revealed


def extract_canonical(text: str) -> str:
    """The canonical text inside what a player pasted (the whole reveal post, a file saved on
    Windows …): from the ``bansha-deal/1`` line to the last line of the format, line endings
    made ``\\n``, spaces at the ends of lines dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == DEAL_FORMAT)
    except StopIteration:
        raise DealError(f"没有找到发牌原文（以 {DEAL_FORMAT} 开头的一行）") from None
    out = [DEAL_FORMAT]
    for line in lines[start + 1 :]:
        line = line.lstrip()
        if re.match(r"(game|ruleset|salt)=|extra\.|\d+\|", line):
            out.append(line)
        else:
            break
    return "\n".join(out) + "\n"


def redeal_problems(revealed: Revealed, seed: SeedStream, rs: Ruleset) -> list[str]:
    """Re-derive the deal from the seed and compare it with the revealed text, seat by seat;
    also run the rule set's own check of the revealed line-up. [] when all agree.

    ``rs``: the rule set the revealed text names (``revealed.ruleset``)."""
    problems: list[str] = []
    try:
        again = deal(rs, revealed.names, seed)
    except (DealError, ValueError) as exc:
        return [f"无法由种子重新发牌：{exc}"]
    for seat, ((_uid, name, cards), expect) in enumerate(
        zip(revealed.seats, again.cards, strict=True), start=1
    ):
        if tuple(cards) != tuple(expect):
            problems.append(
                f"第 {seat} 座 {name}：公开的是 {'、'.join(cards) or '无'}，"
                f"由种子推出的是 {'、'.join(expect)}"
            )
    if dict(revealed.extras) != dict(again.extras):
        problems.append(
            "额外的牌不一致：公开的是 "
            + ("；".join(f"{k}={'、'.join(v)}" for k, v in revealed.extras) or "无")
            + "，由种子推出的是 "
            + ("；".join(f"{k}={'、'.join(v)}" for k, v in again.extras) or "无")
        )
    hands = [(name, list(cards)) for _uid, name, cards in revealed.seats]
    problems += [f"规则检查：{p}" for p in rs.validate_setup(hands)]
    return problems
