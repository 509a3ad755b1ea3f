"""The values a day's vote is made of: ballots and where they were seen, the day's roster
entries and the skills' vote modifiers. A leaf: it imports nothing from the engine, so the rule
sets and :mod:`engine.votes` both import it at the top of their modules.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from fractions import Fraction
from typing import Any

__all__ = [
    "ABSTAIN_WORD",
    "MODIFIER_ZH",
    "PROXY_SLOT",
    "Ballot",
    "BallotKind",
    "Evidence",
    "ModifierKind",
    "PlayerStatus",
    "VoteModifier",
]

#: What a ballot names to abstain (投票对象：弃权).
ABSTAIN_WORD = "弃权"

#: Where a verdict's note tells how the director records a proxy vote; the front end puts its
#: own command in its place.
PROXY_SLOT = "{record_proxy}"


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where a ballot was seen: the post (tid, pid), the floor shown, its time and a link."""

    tid: int
    pid: int
    floor: int | None
    at: datetime
    url: str

    def __post_init__(self) -> None:
        if self.at.tzinfo is None or self.at.utcoffset() is None:
            raise ValueError(f"帖子时间缺少时区：pid {self.pid} {self.at.isoformat()}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "tid": self.tid,
            "pid": self.pid,
            "floor": self.floor,
            "at": self.at.isoformat(),
            "url": self.url,
        }

    def describe(self) -> str:
        return (
            f"第{self.floor}楼（pid {self.pid}）" if self.floor is not None else f"pid {self.pid}"
        )


class BallotKind(StrEnum):
    VOTE = "vote"  # 投票对象：X
    CHANGE = "change"  # 改票对象：X (must reply to the original vote floor)
    ABSTAIN = "abstain"  # 投票对象：弃权
    INVALID = "invalid"  # a vote-like post the parser could not accept (problem says why)
    PROXY = "proxy"  # 代投 by the director, for ``voter``


@dataclass(frozen=True, slots=True)
class Ballot:
    """One parsed vote post (or one 代投 from the director's journal).

    ``target`` is a resolved roster name (None for 弃权 or when it could not be read/resolved;
    ``problem`` then says why, in Chinese). A CHANGE or PROXY to 弃权 has ``target`` None and
    ``target_raw`` "弃权". ``edited``: the post was edited (the pipeline already chose the revision
    first seen before the close). ``hidden``: the vote line lies in hidden text. ``card_index``
    is the target's card (1 = 第一身份, 2 = 第二身份) and ``voter_card`` the voting card, for
    card-based rule sets. ``by_director``: a post of the director's in vote format that
    is not a 代投 (never a vote; ``problem`` may say why a 代投 was not read). ``folded``: the
    target's name matched only once invisible characters / full-width letters were folded
    (``parsers.names``). ``note``: what only the director reads (never a public draft).
    """

    voter: str
    kind: BallotKind
    target: str | None
    target_raw: str
    problem: str | None
    evidence: Evidence
    replied_to_pid: int | None = None
    edited: bool = False
    hidden: bool = False
    card_index: int | None = None
    voter_card: int | None = None
    by_director: bool = False
    folded: tuple[str, ...] = ()
    note: str = ""
    #: why this post is no player's vote although its author's name is a player's (the account
    #: left its slot to a 替补): the verdict's reason; "" for every other ballot
    not_player: str = ""

    @property
    def is_abstain(self) -> bool:
        if self.kind is BallotKind.ABSTAIN:
            return True
        return (
            self.kind in (BallotKind.CHANGE, BallotKind.PROXY)
            and self.target is None
            and self.target_raw.strip() == ABSTAIN_WORD
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "voter": self.voter,
            "kind": self.kind.value,
            "target": self.target,
            "target_raw": self.target_raw,
            "problem": self.problem,
            "replied_to_pid": self.replied_to_pid,
            "edited": self.edited,
            "hidden": self.hidden,
            "card_index": self.card_index,
            "voter_card": self.voter_card,
            "by_director": self.by_director,
            "folded": list(self.folded),
            "note": self.note,
            "evidence": self.evidence.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class PlayerStatus:
    """A roster entry for the day. ``out_at``: when the player (card) went out, or None.

    In card-based sets there is one entry per card in play, with ``card`` set.
    """

    name: str
    out_at: datetime | None = None
    can_vote: bool = True  # False e.g. for a 白痴 after [装傻]
    can_be_voted: bool = True
    card: int | None = None


class ModifierKind(StrEnum):
    WEIGHT_ADD = "weight_add"  # the player receives +value votes (乌鸦[诽谤] +1)
    WEIGHT_SET = "weight_set"  # the player's vote weighs exactly value ([迷魂] 0)
    VOTER_ADD = "voter_add"  # the player's vote weighs +value ([独裁] +N)
    NO_VOTE = "no_vote"  # the player may not vote (白痴 after 大难不死, 时间吞噬 …)
    NO_CHANGE = "no_change"  # the player may not change ([狂躁])
    BLOCK_OUT = "block_out"  # the player cannot be voted out ([霸道]/[不死])
    TIE_TAKER = "tie_taker"  # a tie puts this player out (高僧[献身])
    FORCE_TOP = "force_top"  # a skill makes this player the top (技能影响的最高票)
    VOID_ON_TIE = "void_on_tie"  # a tie voids the vote-out (替罪羊[冤死])
    BEFORE_OPEN = "before_open"  # votes before the opening; none by then is 弃权 ([狂躁])


#: What each modifier kind means, as a director (and a public draft) reads it.
MODIFIER_ZH: dict[str, str] = {
    "weight_add": "得票加",
    "weight_set": "票权改为",
    "voter_add": "票权加",
    "no_vote": "不能投票",
    "no_change": "不能改票",
    "block_out": "不能被投出",
    "tie_taker": "平票时出局",
    "force_top": "技能最高票",
    "void_on_tie": "平票时投票出局作废",
    "before_open": "须在开门前投票",
}


@dataclass(frozen=True, slots=True)
class VoteModifier:
    player: str
    kind: ModifierKind
    value: Fraction = Fraction(0)
    source: str = ""  # e.g. "乌鸦[诽谤]", "[迷魂]", "高僧[献身]"
    rule: str = ""  # where the rule text says so (file:line); "" → the rule set's own ref

    def label(self) -> str:
        return self.source or MODIFIER_ZH.get(self.kind.value, self.kind.value)
