"""Resolve a name as written in a post (a vote target, an action target) to a roster player.

Only an exact match of :func:`parsers.text.name_key` against a player's name or one of the
aliases the director allowed is accepted. Everything else is refused with a Chinese reason and
up to three suggestions (nearest names, lookalikes first); a suggestion is never accepted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from parsers.text import loose_key, name_key, normalize, similar_names, visible_repr

__all__ = ["ABSTAIN_WORD", "NameMatch", "RosterEntry", "resolve_name"]

ABSTAIN_WORD = "弃权"


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

    @property
    def ok(self) -> bool:
        return self.player is not None


def _shown(raw: str) -> str:
    return visible_repr(raw.strip()) or raw


def resolve_name(raw: str, roster: Sequence[RosterEntry]) -> NameMatch:
    """Accept ``raw`` only when its :func:`name_key` equals the key of exactly one player's name
    or allowed alias. ``弃权`` is not a name (the vote parser reads it as an abstention)."""
    written = raw.strip()
    if not written:
        return NameMatch(raw=raw, player=None, problem="投票对象有误：投票对象为空")
    if normalize(written) == ABSTAIN_WORD:
        return NameMatch(
            raw=raw, player=None, problem="「弃权」不是玩家名：弃权票请写“投票对象：弃权”"
        )
    key = name_key(written)

    hits: dict[str, str] = {}  # player -> "name" | "alias"
    for entry in roster:
        if name_key(entry.name) == key:
            hits[entry.name] = "name"
        elif any(name_key(alias) == key for alias in entry.aliases):
            hits.setdefault(entry.name, "alias")
    if len(hits) == 1:
        (player, via), *_ = hits.items()
        return NameMatch(raw=raw, player=player, via=via)
    if len(hits) > 1:
        names = "、".join(hits)
        return NameMatch(
            raw=raw,
            player=None,
            suggestions=tuple(hits)[:3],
            problem=f"投票对象有歧义：「{_shown(raw)}」同时对应 {names}，请导演裁定",
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
    if suggestions:
        problem += "，最接近的是：" + "、".join(suggestions)
    return NameMatch(raw=raw, player=None, suggestions=tuple(suggestions), problem=problem)
