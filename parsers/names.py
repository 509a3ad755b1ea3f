"""Resolve a name as written in a post (a vote target, an action target) to a roster player.

An exact match of :func:`parsers.text.name_key` against a player's name or one of the aliases the
director allowed is accepted. Unless ``strict``, a name also matches once the characters nobody
can see (zero-width characters, BOM, soft hyphen, variation selectors) are removed and
full-width Latin letters and digits are folded to half-width — "the name as the director sees
it"; the match then says what was folded (:attr:`NameMatch.folded`) so the caller can flag it.
Lookalikes from other scripts (Cyrillic, Greek), traditional/simplified variants and any other
near name are never accepted: they are refused with a Chinese reason and up to three suggestions
(nearest names, lookalikes first); a suggestion is never accepted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from parsers.text import loose_key, name_key, normalize, similar_names, visible_repr

__all__ = [
    "ABSTAIN_WORD",
    "FOLD_FULLWIDTH",
    "FOLD_INVISIBLE",
    "FOLD_ZH",
    "NameMatch",
    "RosterEntry",
    "fold_name",
    "resolve_name",
]

ABSTAIN_WORD = "弃权"

FOLD_INVISIBLE = "invisible"  # characters nobody can see were removed
FOLD_FULLWIDTH = "fullwidth"  # full-width Latin letters / digits were read as half-width
FOLD_ZH = {FOLD_INVISIBLE: "不可见字符", FOLD_FULLWIDTH: "全角字母/数字"}

# Characters that render as nothing and change nothing else a reader sees. Bidi controls are
# not here on purpose: they reorder what is shown, so removing them would read a different name
# than the one on the screen; blank-looking letters (Hangul fillers, braille blank) take space.
_FOLDED_INVISIBLE = frozenset(
    "\u00ad"  # soft hyphen
    "\u034f"  # combining grapheme joiner
    "\u180e"  # Mongolian vowel separator
    "\u200b\u200c\u200d"  # zero-width space / non-joiner / joiner
    "\u2060\u2061\u2062\u2063\u2064"  # word joiner, invisible operators
    "\ufeff"  # BOM / zero-width no-break space
)


def _is_folded_invisible(ch: str) -> bool:
    cp = ord(ch)
    return (
        ch in _FOLDED_INVISIBLE
        or 0xFE00 <= cp <= 0xFE0F  # variation selectors
        or 0xE0100 <= cp <= 0xE01EF  # variation selectors supplement
        or 0xE0000 <= cp <= 0xE007F  # tag characters
    )


def _half_width(ch: str) -> str:
    cp = ord(ch)
    if 0xFF10 <= cp <= 0xFF19 or 0xFF21 <= cp <= 0xFF3A or 0xFF41 <= cp <= 0xFF5A:
        return chr(cp - 0xFEE0)
    return ch


def fold_name(raw: str) -> tuple[str, frozenset[str]]:
    """``raw`` as the director sees it: invisible characters removed, full-width Latin letters
    and digits half-width; and which of :data:`FOLD_INVISIBLE` / :data:`FOLD_FULLWIDTH` applied.
    Nothing else changes (no other width, no other script, no variant)."""
    out: list[str] = []
    kinds: set[str] = set()
    for ch in raw:
        if _is_folded_invisible(ch):
            kinds.add(FOLD_INVISIBLE)
            continue
        half = _half_width(ch)
        if half != ch:
            kinds.add(FOLD_FULLWIDTH)
        out.append(half)
    return "".join(out), frozenset(kinds)


@dataclass(frozen=True, slots=True)
class RosterEntry:
    name: str  # the forum account name = the name a vote must use
    aliases: tuple[str, ...] = ()  # spellings the director allows


@dataclass(frozen=True, slots=True)
class NameMatch:
    raw: str  # the name exactly as written
    player: str | None  # the roster name when accepted
    via: str | None = None  # "name" | "alias" when accepted
    suggestions: tuple[str, ...] = ()  # roster names, best first; never accepted
    problem: str | None = None  # Chinese reason when not accepted
    # accepted only once folded: FOLD_INVISIBLE / FOLD_FULLWIDTH (in FOLD_ZH order); () if exact
    folded: tuple[str, ...] = ()
    note: str = ""  # Chinese, for the director only (what was folded, what to decide)

    @property
    def ok(self) -> bool:
        return self.player is not None

    @property
    def folded_zh(self) -> str:
        """What was folded, in Chinese (``不可见字符、全角字母/数字``); "" for an exact match."""
        return "、".join(FOLD_ZH[k] for k in self.folded)


def _shown(raw: str) -> str:
    return visible_repr(raw.strip()) or raw


def _hits(key: str, roster: Sequence[RosterEntry], keyer: Callable[[str], str]) -> dict[str, str]:
    """player -> "name" | "alias" for every player whose name or alias has ``key``."""
    hits: dict[str, str] = {}
    for entry in roster:
        if keyer(entry.name) == key:
            hits[entry.name] = "name"
        elif any(keyer(alias) == key for alias in entry.aliases):
            hits.setdefault(entry.name, "alias")
    return hits


def _ambiguous(raw: str, hits: dict[str, str], folded: tuple[str, ...] = ()) -> NameMatch:
    names = "、".join(hits)
    return NameMatch(
        raw=raw,
        player=None,
        suggestions=tuple(hits)[:3],
        problem=f"投票对象有歧义：「{_shown(raw)}」同时对应 {names}",
        folded=folded,
        note="请导演裁定这一票投给谁（可用 bansha vote proxy 代投改正）",
    )


def _folded_key(s: str) -> str:
    return name_key(fold_name(s)[0])


def resolve_name(raw: str, roster: Sequence[RosterEntry], *, strict: bool = True) -> NameMatch:
    """Accept ``raw`` when its :func:`name_key` equals the key of exactly one player's name or
    allowed alias; unless ``strict``, also when it does once :func:`fold_name` removed invisible
    characters and folded full-width letters and digits (the match's ``folded`` says which).
    ``弃权`` is not a name (the vote parser reads it as an abstention)."""
    written = raw.strip()
    if not written:
        return NameMatch(raw=raw, player=None, problem="投票对象有误：投票对象为空")
    if normalize(written) == ABSTAIN_WORD:
        return NameMatch(
            raw=raw, player=None, problem="「弃权」不是玩家名：弃权票请写“投票对象：弃权”"
        )
    hits = _hits(name_key(written), roster, name_key)
    if len(hits) == 1:
        (player, via), *_ = hits.items()
        return NameMatch(raw=raw, player=player, via=via)
    if len(hits) > 1:
        return _ambiguous(raw, hits)

    if not strict:
        folded_text, kinds = fold_name(written)
        folded_text = folded_text.strip()
        hits = _hits(name_key(folded_text), roster, _folded_key) if folded_text else {}
        if hits:
            whose = f"投票对象「{_shown(raw)}」"
            if not kinds:  # written as seen; the roster's spelling carries the folded characters
                whose = f"名单中的名字与投票对象「{_shown(raw)}」相比"
                key = name_key(folded_text)
                kinds = frozenset(
                    k
                    for entry in roster
                    if entry.name in hits
                    for spelling in (entry.name, *entry.aliases)
                    if _folded_key(spelling) == key
                    for k in fold_name(spelling)[1]
                )
            order = tuple(k for k in FOLD_ZH if k in kinds)
            if len(hits) > 1:
                return _ambiguous(raw, hits, order)
            (player, via), *_ = hits.items()
            what = "、".join(FOLD_ZH[k] for k in order)
            return NameMatch(
                raw=raw,
                player=player,
                via=via,
                folded=order,
                note=f"{whose}含{what}，按「{player}」计",
            )

    # Not accepted: suggest. Compare against names and aliases; suggest the roster name.
    spellings: list[str] = []
    owner: dict[str, str] = {}
    for entry in roster:
        for spelling in (entry.name, *entry.aliases):
            if spelling not in owner:
                owner[spelling] = entry.name
                spellings.append(spelling)
    near = similar_names(written, spellings, limit=3 * max(1, len(spellings)))
    suggestions: list[str] = []
    for spelling in near:
        name = owner[spelling]
        if name not in suggestions:
            suggestions.append(name)
    suggestions = suggestions[:3]

    shown = _shown(raw)
    lookalikes = [
        owner[s] for s in spellings if loose_key(s) == loose_key(written) and loose_key(s)
    ]
    if lookalikes:
        why = "字形相近但并非同一个名字（全角字符、不可见字符、繁简字或形近字母）"
        problem = f"投票对象有误：「{shown}」不在名单中，与「{lookalikes[0]}」{why}"
    else:
        problem = f"投票对象有误：「{shown}」不在名单中"
    if ABSTAIN_WORD in loose_key(written):
        problem += "；弃权票须只写“弃权”"
    # the nearest roster names are a hint for the director, never part of a public reason
    note = ("最接近的是：" + "、".join(suggestions)) if suggestions else ""
    return NameMatch(
        raw=raw, player=None, suggestions=tuple(suggestions), problem=problem, note=note
    )
