"""A verifiable deal: cards drawn for a roster under each rule set's line-up constraints.

Pure: no network, disk or clock, and no entropy of its own — the randomness comes in as an
argument (``rng``, anything with ``randrange(n)``). The pipeline makes a secret 32-byte seed
with :func:`secrets.token_bytes` and passes :class:`SeedStream` built from it, so a revealed seed
lets anyone re-derive the deal (``bansha deal --verify``).

The stream: block ``i`` is ``SHA-256(b"bansha-deal/1\\0" + seed + i as 8 bytes big-endian)``;
the blocks are read as consecutive 64-bit big-endian numbers, and ``randrange(n)`` takes the
next number ``x`` below the largest multiple of ``n`` (rejecting the rest) and returns
``x % n``. It is used instead of :class:`random.Random` so the deal of a seed never depends on
the Python version (``random.sample``'s algorithm is an implementation detail).

Every draw uses only ``randrange`` through :func:`shuffle` (Fisher–Yates from the end) and
:func:`sample` (a partial Fisher–Yates); decks and pools are sorted by code point before they
are drawn from, so reordering a rule-set module's tables never changes what a seed deals.

Per rule set (the line-up sections of the rule texts):

- m209 (m209.txt:22-33): 狼人 10选4 with exactly one of 黑狼王/白狼王, 验人系 3选1, 强神 10选3
  with exactly one of 灵鹿/女巫, 弱神 10选4, 三方 1选1 (吹笛者); the 13 cards are shuffled to
  the seats and also written as ``[m209] lineup``.
- m135 (m135.txt:5, 8, 90, 142): the 24 cards shuffled into 12 pairs until no pair is
  狼人阵营+狼人阵营 or 预言家+狼人阵营 (a 复制人 counts as its partner card); 复制人 is put
  first, 女巫 second. The players choose the order of their two cards afterwards
  (m135.txt:27); the director rewrites it in the game file.
- nizhuan (nizhuan.txt:74, 80, 85, 110): 16 cards into 8 pairs until there is no 双狼人阵营 and
  no 狼人阵营+预言家/定序王子, no pair of two cards that must both be second (蚀时狼妃 +
  定序王子), and at least one 双村民; 狼人 first, 蚀时狼妃 and 定序王子 second.
- zhenyan (zhenyan.txt:64-100): the 12 cards shuffled to the seats.
- tubian24 (tubian24.txt:13, 162): one of the 24 identities is drawn and replaced by 盗贼; the
  24 cards are shuffled to the seats; the 盗贼's three cards are the drawn one, a 村民 and a
  狼人 in a random order — or three of the drawn card when it is 狼人 or 白眼狼. They are
  written as ``[tubian24] thief`` / ``thief_cards``; the 盗贼 picks one later (``thief_pick``).

Every deal is checked against the rule set's own ``validate_setup`` and ``setup_state`` (for
tubian24 with each of the three picks) before it is returned: a deal that the game file or the
engine would refuse is a bug here, raised as :class:`DealError`.

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
(tubian24's ``thief_cards``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from engine.kernel import EngineError
from engine.rulesets import get_ruleset

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
    "extract_canonical",
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


def _expand(deck: Mapping[str, int]) -> list[str]:
    """A deck table (card → how many) as a list of cards, sorted by code point."""
    return sorted(card for card, n in deck.items() for _ in range(n))


# --------------------------------------------------------------------------- the deal


@dataclass(frozen=True, slots=True)
class Deal:
    """Cards for a roster, seat by seat, and what else the rule set's table must hold."""

    ruleset: str
    players: tuple[str, ...]
    cards: tuple[tuple[str, ...], ...]  # per seat, in the order the game file lists them
    #: extra cards that are part of the deal and committed (tubian24's ``thief_cards``)
    extras: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: keys to write into the rule set's secret table (``[m209] lineup``, ``[tubian24] thief``)
    table: Mapping[str, Any] = field(default_factory=dict)
    #: keys of that table that a new deal makes stale (choices made knowing the old cards)
    stale: tuple[str, ...] = ()
    #: each seat's actual faction where the cards alone decide it (None: decided later)
    factions: tuple[str | None, ...] = ()
    attempts: int = 1  # shuffles tried (rejection sampling)
    #: a list value of ``table`` in labelled groups, for the reader of the game file
    #: (``[m209] lineup`` by category: ("狼人 4", (…)), …)
    groups: Mapping[str, tuple[tuple[str, tuple[str, ...]], ...]] = field(default_factory=dict)
    #: what the director must know about this deal (Chinese)
    notes: tuple[str, ...] = ()

    def hands(self) -> list[tuple[str, list[str]]]:
        return [(name, list(cards)) for name, cards in zip(self.players, self.cards, strict=True)]


def player_count(ruleset_id: str) -> int:
    """How many players the rule set's line-up is for, from the rule set's own tables."""
    rid = get_ruleset(ruleset_id).id
    if rid == "m209":
        from engine.rulesets.m209_roles import DRAW

        return sum(n for n, _rule in DRAW.values())  # m209.txt:22-33: 13
    if rid == "m135":
        from engine.rulesets.m135 import DECK as M135_DECK

        return sum(M135_DECK.values()) // 2  # m135.txt:5: 12 × 2 cards
    if rid == "nizhuan":
        from engine.rulesets.nizhuan import DECK as NIZHUAN_DECK

        return sum(NIZHUAN_DECK.values()) // 2  # nizhuan.txt:72: two cards each, 8 players
    if rid == "zhenyan":
        from engine.rulesets.zhenyan import DECK as ZHENYAN_DECK

        return sum(ZHENYAN_DECK.values())  # zhenyan.txt:64-100: 12
    if rid == "tubian24":
        from engine.rulesets.tubian24 import DECK as TUBIAN_DECK

        return sum(TUBIAN_DECK.values()) - 1  # tubian24.txt:13: 盗贼 replaces one of 24
    raise DealError(f"规则集 {rid} 还不能自动发牌")


def deal(ruleset_id: str, players: Sequence[str], rng: Rng) -> Deal:
    """Deal the rule set's line-up to ``players`` (names in seat order).

    Raises :class:`DealError` (Chinese) when the roster does not have the rule set's player
    count, and when a deal fails the rule set's own checks (a bug)."""
    rs = get_ruleset(ruleset_id)
    need = player_count(rs.id)
    names = tuple(players)
    if len(names) != need:
        raise DealError(f"规则集 {rs.id}（{rs.name}）需要 {need} 名玩家，名单中有 {len(names)} 名")
    if len(set(names)) != len(names):
        raise DealError("名单中有重名的玩家")
    maker = {
        "m209": _deal_m209,
        "m135": _deal_m135,
        "nizhuan": _deal_nizhuan,
        "zhenyan": _deal_zhenyan,
        "tubian24": _deal_tubian24,
    }[rs.id]
    made = maker(names, rng)
    return _checked(made)


def _deal_m209(names: tuple[str, ...], rng: Rng) -> Deal:
    from engine.rulesets.m209_roles import CATEGORY, DRAW

    # m209.txt:22 黑狼王和白狼王必出现且只会出现其中之一;
    # m209.txt:27 灵鹿和女巫必出现且只会出现其中之一
    exactly_one = {"狼人": ("白狼王", "黑狼王"), "强神": ("女巫", "灵鹿")}
    drawn: dict[str, list[str]] = {}
    for cat in sorted(DRAW):  # code-point order: what a seed deals never follows a table's order
        need = DRAW[cat][0]
        pool = sorted(r for r, c in CATEGORY.items() if c == cat)
        pair = exactly_one.get(cat)
        if pair is None:
            drawn[cat] = sample(pool, need, rng)
            continue
        one = sorted(pair)[rng.randrange(len(pair))]
        rest = [r for r in pool if r not in pair]
        drawn[cat] = [one, *sample(rest, need - 1, rng)]
    lineup = [r for cat in DRAW for r in drawn[cat]]  # the table's order, for the reader
    seats = shuffle(lineup, rng)
    return Deal(
        "m209",
        names,
        tuple((c,) for c in seats),
        table={"lineup": lineup},
        groups={"lineup": tuple((f"{cat} {DRAW[cat][0]}", tuple(drawn[cat])) for cat in DRAW)},
        notes=("m209：抽到的阵容也写进了 [m209] lineup（m209.txt:22-33）。",),
    )


def _pairs(deck: list[str], rng: Rng) -> list[list[str]]:
    cards = shuffle(deck, rng)
    return [cards[i : i + 2] for i in range(0, len(cards), 2)]


def _deal_m135(names: tuple[str, ...], rng: Rng) -> Deal:
    from engine.rulesets.m135 import DECK, WOLF_ROLES

    deck = _expand(DECK)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        pairs = _pairs(deck, rng)
        if any(_m135_forbidden(p, WOLF_ROLES) for p in pairs):
            continue
        hands = []
        for a, b in pairs:
            if (
                b == "复制人" or a == "女巫"
            ):  # m135.txt:142 复制人第一身份; m135.txt:90 女巫第二身份
                a, b = b, a
            hands.append((a, b))
        return Deal(
            "m135",
            names,
            tuple(hands),
            attempts=attempt,
            notes=(
                "m135：复制人已排为第一身份、女巫为第二身份（m135.txt:142, 90）；其余两张的先后"
                "由玩家回复导演后，在游戏文件中调换（m135.txt:27）。",
            ),
        )
    raise DealError(f"m135：{MAX_ATTEMPTS} 次洗牌都没有得到合规的组合")


def _m135_forbidden(pair: Sequence[str], wolves: frozenset[str]) -> bool:
    """m135.txt:16 禁止出现的组合：狼人阵营身份+狼人阵营身份，预言家+狼人阵营身份; a 复制人's
    faction is its partner card's (m135.txt:142)."""
    a, b = pair
    roles = [b if a == "复制人" else a, a if b == "复制人" else b]
    wolf = [r in wolves for r in roles]
    return all(wolf) or (any(wolf) and "预言家" in roles)


def _deal_nizhuan(names: tuple[str, ...], rng: Rng) -> Deal:
    from engine.rulesets.nizhuan import DECK, WOLF_ROLES

    first_only = {"狼人"}  # nizhuan.txt:80 原初的历史
    second_only = {"蚀时狼妃", "定序王子"}  # nizhuan.txt:85 穿越时空, nizhuan.txt:110 逆转时空
    deck = _expand(DECK)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        pairs = _pairs(deck, rng)
        ok = True
        for a, b in pairs:
            both = {a, b}
            if (a in WOLF_ROLES and b in WOLF_ROLES) or (
                both & WOLF_ROLES and both & {"预言家", "定序王子"}
            ):  # nizhuan.txt:74 禁止【双狼人阵营】【狼人阵营+预言家/定序王子】
                ok = False
            elif (a in first_only and b in first_only) or (a in second_only and b in second_only):
                ok = False  # both cards would have to be first (or second)
        # nizhuan.txt:74 将必定出现至少一个以下组合【双村民】
        if not ok or not any(a == b == "村民" for a, b in pairs):
            continue
        hands = []
        for a, b in pairs:
            if b in first_only or a in second_only:
                a, b = b, a
            hands.append((a, b))
        return Deal(
            "nizhuan",
            names,
            tuple(hands),
            attempts=attempt,
            notes=(
                "nizhuan：狼人已排为第一身份，蚀时狼妃、定序王子为第二身份（nizhuan.txt:80, 85, "
                "110）；其余两张的先后由玩家选定后，在游戏文件中调换。",
            ),
        )
    raise DealError(f"nizhuan：{MAX_ATTEMPTS} 次洗牌都没有得到合规的组合")


def _deal_zhenyan(names: tuple[str, ...], rng: Rng) -> Deal:
    from engine.rulesets.zhenyan import DECK

    return Deal("zhenyan", names, tuple((c,) for c in shuffle(_expand(DECK), rng)))


def _deal_tubian24(names: tuple[str, ...], rng: Rng) -> Deal:
    from engine.rulesets.tubian24 import DECK

    identities = _expand({c: n for c, n in DECK.items() if c != "盗贼"})  # the other 24
    drawn = identities.pop(rng.randrange(len(identities)))
    # tubian24.txt:162 盗贼从这张身份和一张【村民】、一张【狼人】中盲选一张；若抽出的一张身份为
    # 【狼人】或【白眼狼】，则三张备选身份均修改为【狼人】或【白眼狼】
    if drawn in ("狼人", "白眼狼"):
        three = [drawn, drawn, drawn]
    else:
        three = shuffle([drawn, "村民", "狼人"], rng)
    seats = shuffle([*identities, "盗贼"], rng)
    thief = names[seats.index("盗贼")]
    return Deal(
        "tubian24",
        names,
        tuple((c,) for c in seats),
        extras=(("thief_cards", tuple(three)),),
        table={"thief": thief, "thief_cards": three},
        # chosen by the players once they know their cards (tubian24.txt:74, 147, 164)
        stale=("thief_pick", "kill_order", "master"),
        notes=(
            "tubian24：盗贼的身份牌写的是「盗贼」，三张备选已写入 [tubian24] thief_cards"
            "（tubian24.txt:162）；盗贼盲选后写 thief_pick = 1、2 或 3。",
        ),
    )


def _checked(made: Deal) -> Deal:
    """The rule set's own checks, and each player's actual faction where the set decides it."""
    rs = get_ruleset(made.ruleset)
    hands = made.hands()
    problems = rs.validate_setup(hands)
    settings: list[dict[str, str]] = [{}]
    if made.ruleset == "m209":
        settings = [{"lineup": "，".join(made.table["lineup"])}]
    elif made.ruleset == "tubian24":
        base = {
            "thief": str(made.table["thief"]),
            "thief_cards": ",".join(made.table["thief_cards"]),
        }
        settings = [{**base, "thief_pick": str(pick)} for pick in (1, 2, 3)]
    states = []
    for s in settings:
        try:
            states.append(rs.setup_state(hands, settings=s, strict=True))
        except EngineError as exc:
            problems.append(str(exc))
    if problems:
        raise DealError(f"{made.ruleset} 的发牌没有通过规则集的检查：" + "；".join(problems))
    factions = tuple(
        # tubian24: the 盗贼's faction is his pick's, the 仆人's his master's — both later
        None if cards in (("盗贼",), ("仆人",)) else rs.actual_faction(states[0], name)
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


def redeal_problems(revealed: Revealed, seed: SeedStream) -> list[str]:
    """Re-derive the deal from the seed and compare it with the revealed text, seat by seat;
    also run the rule set's own check of the revealed line-up. [] when all agree."""
    problems: list[str] = []
    try:
        again = deal(revealed.ruleset, revealed.names, seed)
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
    rs = get_ruleset(revealed.ruleset)
    hands = [(name, list(cards)) for _uid, name, cards in revealed.seats]
    problems += [f"规则检查：{p}" for p in rs.validate_setup(hands)]
    return problems
