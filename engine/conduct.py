"""Conduct (违规): post counts per day and the flags the tool raises by itself.

Pure. The pipeline turns every post by a roster player in a game thread into an ``Activity``;
this module counts discussion posts per day (潜水) and raises ``Flag``s. A flag becomes a card
only when the director confirms it (see ``engine.cards``).

:func:`conduct_flags` gathers what the checks read into one :class:`ConductInput`, runs the
registered checks (:data:`CHECKS`: one small function per :class:`FlagKind`, in the kinds'
order) and sorts what they raise. A new flag is one ``FlagKind`` member with its label, one
check function and one entry in ``CHECKS`` (a rule set that cites a rule or gives a card for
it says so in its ``ConductRules``).

Rule texts (file:line) are each rule set's :class:`ConductRules`, declared in its module
(``engine.rulesets.<id>``, ``get_ruleset(id).conduct``) and passed in; where a set is silent
(a rule text whose 违规判定 post was left empty) the common defaults apply
(docs/rulings.md#conduct-defaults) and the flag's ``rule`` says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, Literal, TypeVar, get_args

from engine.cards import Card

__all__ = [
    "CHECKS",
    "DEFAULT_RULE",
    "ROLES",
    "Activity",
    "Check",
    "ConductCheck",
    "ConductInput",
    "ConductRules",
    "CountPolicy",
    "DaySummary",
    "EditedVote",
    "Evidence",
    "Flag",
    "FlagKind",
    "FoldedName",
    "PlayerLife",
    "PostCount",
    "SheriffAnswer",
    "conduct_flags",
    "count_posts",
    "without_posts_after_out",
]

Role = Literal["discussion", "vote", "progress", "inquiry", "lastwords", "rules"]
ROLES: tuple[str, ...] = get_args(Role)

ROLE_ZH: dict[str, str] = {
    "discussion": "讨论帖",
    "vote": "投票帖",
    "progress": "进程帖",
    "inquiry": "询问贴",
    "lastwords": "遗言",
    "rules": "规则帖",
}

DEFAULT_RULE = "docs/rulings.md#conduct-defaults"


class FlagKind(StrEnum):
    """What a conduct flag is about: its value (the flag id's middle) and its Chinese label.

    Each member is declared with its label; :data:`CHECKS` holds the one check that raises it.
    ``FlagKind("qianshui")`` looks a member up by value.
    """

    zh: str

    #: under ``min_posts`` discussion posts on a day without the exempting acceleration
    QIANSHUI = "qianshui", "潜水（发言不足）"
    #: under ``streak_posts`` on each of ``streak_days`` consecutive such days
    QIANSHUI_STREAK = "qianshui-streak", "潜水（连续三天发言不足）"
    #: no vote on a day without the exempting acceleration
    NO_VOTE = "no-vote", "潜水（未投票）"
    #: 诈尸: an out player posting in the game's threads
    ZHASHI = "zhashi", "诈尸"
    #: red or enlarged font (the director's fonts)
    FONT = "font", "导演专用字体"
    #: Discuz! code in last words
    LASTWORDS_CODE = "lastwords-code", "遗言含Discuz!代码"
    #: more inquiries in a day than ``inquiry_limit`` allows
    INQUIRY_LIMIT = "inquiry-limit", "询问超过次数"
    #: a sheriff who may only answer inquiries posting in the discussion thread
    SHERIFF_DISCUSSION = "sheriff-discussion", "警长在讨论帖发言"
    #: such a sheriff answering other than 是/否/不知道
    SHERIFF_ANSWER = "sheriff-answer", "警长回答不合规"
    #: such a sheriff asking a question or guessing a word in the inquiry thread
    SHERIFF_INQUIRY = "sheriff-inquiry", "警长在询问帖提问或猜词"
    #: a vote post that was edited
    EDITED_VOTE = "edited-vote", "投票帖被编辑"
    #: a post with text hidden by colour, size or [hide]
    HIDDEN_TEXT = "hidden-text", "隐藏文字（白字/小字/[hide]）"
    #: a vote whose name matched once invisible/full-width folded
    NAME_FOLDED = "name-folded", "票中名字含不可见字符/全角字母"

    # ``zh`` has a default only so that the one-argument lookup type-checks
    def __new__(cls, value: str, zh: str = "") -> FlagKind:
        member = str.__new__(cls, value)
        member._value_ = value
        member.zh = zh
        return member


#: what each hidden-text mark is called (Activity.hidden holds these keys)

#: What the day's close decides (潜水, 未投票 — only the players still in at the close are judged,
#: docs/rulings.md): a card for such a flag takes effect at the close, never earlier.
AT_CLOSE: frozenset[FlagKind] = frozenset(
    {FlagKind.QIANSHUI, FlagKind.QIANSHUI_STREAK, FlagKind.NO_VOTE}
)

HIDDEN_ZH: dict[str, str] = {"colour": "白字", "tiny": "小字", "hide": "[hide]"}
_KIND_ORDER = {kind: i for i, kind in enumerate(FlagKind)}


# --------------------------------------------------------------------------- rule sets


@dataclass(frozen=True, slots=True)
class ConductRules:
    """What one rule set says about conduct. ``rules`` maps a flag kind to ``file:line``."""

    ruleset: str
    rules: Mapping[FlagKind, str]
    min_posts: int = 5
    streak_posts: int = 10
    streak_days: int = 3
    accel_word: str = "加速"  # what the exempting acceleration is called in the text
    zhashi_roles: frozenset[str] = frozenset({"discussion", "vote", "progress", "inquiry"})
    font_roles: frozenset[str] = frozenset({"discussion", "vote", "progress", "inquiry", "rules"})
    inquiry_limit: int | None = None
    #: the inquiry thread closes this long before the day: a later inquiry is refused as
    #: late, not counted against ``inquiry_limit``
    inquiry_close_before: timedelta | None = None
    #: the sheriff may not post in the discussion thread and answers inquiries with 是/否/不知道
    #: only; he is excused from 潜水
    sheriff_answers_only: bool = False
    cards: Mapping[FlagKind, Card] = field(
        default_factory=lambda: {
            FlagKind.QIANSHUI: Card.YELLOW,
            FlagKind.QIANSHUI_STREAK: Card.YELLOW,
            FlagKind.NO_VOTE: Card.YELLOW,
        }
    )

    #: the only cards the text allows for a kind (潜水 固定判罚一张黄牌; 直接黄牌或红牌); kinds
    #: absent take any card the director picks
    allowed: Mapping[FlagKind, frozenset[Card]] = field(
        default_factory=lambda: {
            FlagKind.QIANSHUI: frozenset({Card.YELLOW}),
            FlagKind.QIANSHUI_STREAK: frozenset({Card.YELLOW}),
            FlagKind.NO_VOTE: frozenset({Card.YELLOW}),
        }
    )

    def rule(self, kind: FlagKind) -> str:
        return self.rules.get(kind, _SHARED_RULES.get(kind, DEFAULT_RULE))

    def card_problem(self, kind: FlagKind, card: Card) -> str | None:
        """Why the text does not allow ``card`` for a ``kind`` flag, in Chinese; None if it does."""
        allowed = self.allowed.get(kind)
        if allowed is None or card in allowed:
            return None
        colours = "或".join(c.value for c in sorted(allowed, key=lambda c: c.rank))
        return f"按规则（{self.rule(kind)}），{kind.zh}判{colours}，不能给{card.value}"


# The rule texts are silent on these; docs/rulings.md says how bansha reads them (every set).
_EDIT_RULE = "docs/rulings.md#edited-vote"
_HIDDEN_RULE = "docs/rulings.md#hidden-text"
_NAME_RULE = "docs/rulings.md#vote-names"
_SHARED_RULES: dict[FlagKind, str] = {
    FlagKind.EDITED_VOTE: _EDIT_RULE,
    FlagKind.HIDDEN_TEXT: _HIDDEN_RULE,
    FlagKind.NAME_FOLDED: _NAME_RULE,
}

# --------------------------------------------------------------------------- inputs


def _iso(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where a post is: the same shape as the vote engine's evidence."""

    tid: int
    pid: int
    floor: int | None
    at: datetime | None
    url: str

    @property
    def label(self) -> str:
        return f"{self.floor}楼" if self.floor is not None else f"pid {self.pid}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tid": self.tid,
            "pid": self.pid,
            "floor": self.floor,
            "at": _iso(self.at),
            "url": self.url,
        }


@dataclass(frozen=True, slots=True)
class Activity:
    """One post by a roster player in a game thread (built by the pipeline)."""

    player: str
    tid: int
    role: str  # one of ROLES
    pid: int
    floor: int | None
    at: datetime
    state: str = "visible"  # parsers.records.PostState values
    url: str = ""
    red: bool = False
    enlarged: bool = False
    has_bbcode: bool = False
    text: str = ""
    hidden: tuple[str, ...] = ()  # hidden-text marks in the post (keys of HIDDEN_ZH)
    questions: int = 1  # an inquiry post's questions: each question mark one, at least one

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"未知的帖子类别：「{self.role}」（可选：{'、'.join(ROLES)}）")
        if self.at.tzinfo is None:
            raise ValueError(f"发帖时间必须带时区：pid {self.pid}")

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.tid, self.pid, self.floor, self.at, self.url)

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "tid": self.tid,
            "role": self.role,
            "pid": self.pid,
            "floor": self.floor,
            "at": self.at.isoformat(),
            "state": self.state,
            "url": self.url,
            "red": self.red,
            "enlarged": self.enlarged,
            "has_bbcode": self.has_bbcode,
            "text": self.text,
            "hidden": list(self.hidden),
        }


@dataclass(frozen=True, slots=True)
class DaySummary:
    day: int
    opens: datetime
    closes: datetime
    discussion_tids: tuple[int, ...] = ()
    vote_tids: tuple[int, ...] = ()
    progress_tids: tuple[int, ...] = ()
    inquiry_tids: tuple[int, ...] = ()

    @property
    def tids(self) -> frozenset[int]:
        return frozenset(
            (*self.discussion_tids, *self.vote_tids, *self.progress_tids, *self.inquiry_tids)
        )

    def contains(self, at: datetime) -> bool:
        return self.opens <= at <= self.closes

    def to_dict(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "opens": self.opens.isoformat(),
            "closes": self.closes.isoformat(),
            "discussion_tids": list(self.discussion_tids),
            "vote_tids": list(self.vote_tids),
            "progress_tids": list(self.progress_tids),
            "inquiry_tids": list(self.inquiry_tids),
        }


@dataclass(frozen=True, slots=True)
class PlayerLife:
    """A roster player and when they went out (None: still in the game).

    ``may_post_after_out``: thread roles an out player may still post in, e.g. a 白痴 out by
    装傻 who may still speak in the discussion thread → ``frozenset({"discussion"})``.
    """

    name: str
    out_at: datetime | None = None
    may_post_after_out: frozenset[str] = frozenset()

    def liable(self, day: DaySummary) -> bool:
        """In the game for the whole day: out players and those out before the close are not."""
        return self.out_at is None or self.out_at >= day.closes

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "out_at": _iso(self.out_at),
            "may_post_after_out": sorted(self.may_post_after_out),
        }


@dataclass(frozen=True, slots=True)
class _DayPost:
    """A player's post on a day, as the flags below name it (their first fields, in order)."""

    player: str
    day: int
    tid: int
    pid: int
    floor: int | None
    at: datetime
    url: str = ""

    @property
    def evidence(self) -> Evidence:
        return Evidence(self.tid, self.pid, self.floor, self.at, self.url)

    def _post_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "day": self.day,
            "tid": self.tid,
            "pid": self.pid,
            "floor": self.floor,
            "at": self.at.isoformat(),
            "url": self.url,
        }


@dataclass(frozen=True, slots=True)
class SheriffAnswer(_DayPost):
    """A post in the inquiry thread by a sheriff who may only answer (``sheriff_answers_only``);
    ``problem`` comes from the inquiry parser."""

    answer: str | None = None  # 是 / 否 / 不知道 when readable
    problem: str | None = None  # Chinese: why it is not one of the three answers
    asks: str | None = None  # "提问" / "猜词": the post asks or guesses instead of answering

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._post_dict(),
            "answer": self.answer,
            "problem": self.problem,
            "asks": self.asks,
        }


@dataclass(frozen=True, slots=True)
class EditedVote(_DayPost):
    """A vote-thread post carrying 本帖最后由 X 于 T 编辑 (or whose stored revisions differ)."""

    edited_at: datetime | None = None
    editor: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._post_dict(),
            "edited_at": _iso(self.edited_at),
            "editor": self.editor,
        }


@dataclass(frozen=True, slots=True)
class FoldedName(_DayPost):
    """A vote whose name matched a player only once invisible characters were removed or
    full-width letters/digits folded (``parsers.names``): it counts, and the director checks.
    ``player`` is the voter."""

    written: str = ""  # the name as written, invisible characters shown as <U+XXXX>
    target: str = ""  # the player it was counted for
    folded: tuple[str, ...] = ()  # "invisible" / "fullwidth"

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._post_dict(),
            "written": self.written,
            "target": self.target,
            "folded": list(self.folded),
        }


_P = TypeVar("_P", bound=_DayPost)

_FOLDED_ZH = {"invisible": "不可见字符", "fullwidth": "全角字母/数字"}


@dataclass(frozen=True, slots=True)
class CountPolicy:
    """Which posts count towards the day's 发言 (see docs/rulings.md).

    - blocked (屏蔽 by the director or a moderator, usually for a violation): not counted.
    - deleted / vanished (seen by the crawler, later removed): counted — the player did speak that
      day and the stored text is the evidence; set ``count_removed=False`` to drop them.
    - pending (待审核) and author_only (回帖仅作者可见): counted — the post was made in time.
    - any other state: not counted, with the state named in the reason.
    """

    count_blocked: bool = False
    count_removed: bool = True
    count_pending: bool = True
    count_author_only: bool = True

    def exclusion(self, state: str) -> str | None:
        """None when a post in this state counts, else the Chinese reason it does not."""
        if state == "visible":
            return None
        if state == "blocked":
            return None if self.count_blocked else "该帖被管理员或版主屏蔽，不计入发言"
        if state in ("deleted", "vanished"):
            return None if self.count_removed else "该帖已被删除，不计入发言"
        if state == "pending":
            return None if self.count_pending else "该帖待审核，不计入发言"
        if state == "author_only":
            return None if self.count_author_only else "该帖仅作者可见，不计入发言"
        return f"帖子状态未知（{state}），不计入发言"

    def note(self, state: str) -> str | None:
        """A remark for a counted post that a director may want to re-check."""
        return {
            "blocked": "该帖已被屏蔽，仍计入发言",
            "deleted": "该帖已被删除（抓取时已见），仍计入发言",
            "vanished": "该帖已消失（抓取时已见），仍计入发言",
            "pending": "该帖待审核，仍计入发言",
        }.get(state)


# --------------------------------------------------------------------------- outputs


@dataclass(frozen=True, slots=True)
class PostCount:
    player: str
    count: int
    pids: tuple[int, ...]  # counted posts, in time order
    # where each counted post is, in the order of ``pids``: a tuple, or a sequence that makes
    # them when read (the pipeline's stored counts: a day of thousands is rarely read post by post)
    evidence: Sequence[Evidence]
    excluded: tuple[tuple[int, str], ...]  # (pid, Chinese reason)
    notes: tuple[tuple[int, str], ...] = ()  # counted, but worth a look

    def to_dict(self) -> dict[str, Any]:
        """The count as a day's JSON shows it: the counted posts by pid (a pid finds the
        post on the forum), not one entry per post."""
        return {
            "player": self.player,
            "count": self.count,
            "pids": list(self.pids),
            "excluded": [{"pid": pid, "reason": r} for pid, r in self.excluded],
            "notes": [{"pid": pid, "note": n} for pid, n in self.notes],
        }


@dataclass(frozen=True, slots=True)
class Flag:
    id: str  # stable: d{day}-{kind}-{player}[-p{pid}]
    kind: FlagKind
    player: str
    day: int
    reason: str  # Chinese, complete
    evidence: tuple[Evidence, ...]
    card: Card | None  # the card the rule set gives when the director confirms; None: director's
    rule: str  # file:line
    #: the reason as a public draft may say it: no floor, no pid, no director's note ("": reason)
    public: str = ""

    @property
    def public_reason(self) -> str:
        return self.public or self.reason

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            "kind_zh": self.kind.zh,
            "player": self.player,
            "day": self.day,
            "reason": self.reason,
            "evidence": [e.to_dict() for e in self.evidence],
            "card": self.card.value if self.card is not None else None,
            "rule": self.rule,
        }


# ------------------------------------------------------- activities: keys, dedupe, order, by thread


def _act_key(a: Activity) -> tuple[Any, ...]:
    return (
        a.at,
        a.tid,
        a.pid,
        a.player,
        a.role,
        a.state,
        a.url,
        -1 if a.floor is None else a.floor,
        a.red,
        a.enlarged,
        a.has_bbcode,
        a.text,
        a.hidden,
    )


def _dedupe(activities: Iterable[Activity]) -> list[Activity]:
    """One activity per (tid, pid), chosen independently of input order; sorted by time.

    Of two activities of one post the greater ``_act_key`` is kept. Once (tid, pid) is unique,
    ``(at, tid, pid)`` orders them exactly as the whole ``_act_key`` would."""
    best: dict[tuple[int, int], Activity] = {}
    for a in activities:
        key = (a.tid, a.pid)
        kept = best.get(key)
        if kept is None or (kept is not a and _act_key(a) > _act_key(kept)):
            best[key] = a
    return sorted(best.values(), key=_time_key)


def _time_key(a: Activity) -> tuple[datetime, int, int]:
    return (a.at, a.tid, a.pid)


def _by_tid(acts: Iterable[Activity]) -> dict[int, list[Activity]]:
    """Activities grouped by thread, each group in the order given."""
    found: dict[int, list[Activity]] = defaultdict(list)
    for a in acts:
        found[a.tid].append(a)
    return found


def _of_tids(by_tid: Mapping[int, list[Activity]], tids: Collection[int]) -> list[Activity]:
    """The activities of ``tids`` from :func:`_by_tid` of a deduplicated, time-ordered list, in
    that order."""
    groups = [by_tid[t] for t in dict.fromkeys(tids) if t in by_tid]
    if len(groups) == 1:
        return groups[0]
    return sorted((a for g in groups for a in g), key=_time_key)


def _ev_sorted(items: Iterable[Evidence]) -> tuple[Evidence, ...]:
    return tuple(
        sorted(items, key=lambda e: (e.at is None, e.at or datetime.min, e.tid, e.pid, e.url))
    )


def _when(at: datetime) -> str:
    return f"{at.month}月{at.day}日{at:%H:%M}"


def _roles_zh(roles: Iterable[str]) -> str:
    present = set(roles)
    return "、".join(ROLE_ZH[r] for r in ROLES if r in present)


def _days_by_tid(days: Sequence[DaySummary]) -> dict[int, list[DaySummary]]:
    """The days each thread belongs to, in the order of ``days``."""
    found: dict[int, list[DaySummary]] = defaultdict(list)
    for d in days:
        for tid in d.tids:
            found[tid].append(d)
    return found


def _day_of(
    act: Activity,
    days: Sequence[DaySummary],
    by_tid: Mapping[int, list[DaySummary]] | None = None,
) -> int:
    """The game day a post belongs to: by its thread, then by its time (``by_tid``: the
    threads' days, :func:`_days_by_tid` of ``days``)."""
    if by_tid is None:
        by_tid = _days_by_tid(days)
    candidates = by_tid.get(act.tid, [])
    if len(candidates) == 1:
        return candidates[0].day
    pool = candidates or list(days)
    if not pool:
        return 0
    within = [d for d in pool if d.contains(act.at)]
    if within:
        return within[-1].day
    started = [d for d in pool if d.opens <= act.at]
    return started[-1].day if started else pool[0].day


def _get(mapping: Mapping[int, Collection[str]] | None, day: int) -> Collection[str]:
    if mapping is None:
        return ()
    return mapping.get(day, ())


# --------------------------------------------------------------------------- counting


def count_posts(
    activities: Iterable[Activity],
    *,
    day: int,
    opens: datetime,
    closes: datetime,
    discussion_tids: Collection[int],
    policy: CountPolicy = CountPolicy(),
) -> dict[str, PostCount]:
    """Discussion posts per player for one day: in the day's discussion thread(s), from the
    open to the close inclusive, counted according to ``policy``.

    Players with no post in the discussion thread(s) are absent from the result (count 0).
    Posts in the thread outside the window appear in ``excluded`` with the reason.
    """
    tids = set(discussion_tids)
    acts = _dedupe(a for a in activities if a.tid in tids)
    return _count(acts, day=day, opens=opens, closes=closes, policy=policy)


def _count(
    acts: Iterable[Activity], *, day: int, opens: datetime, closes: datetime, policy: CountPolicy
) -> dict[str, PostCount]:
    """``count_posts`` of the discussion thread(s)' activities, deduplicated and in time order."""
    counted: dict[str, list[Activity]] = defaultdict(list)
    excluded: dict[str, list[tuple[int, str]]] = defaultdict(list)
    notes: dict[str, list[tuple[int, str]]] = defaultdict(list)
    seen: set[str] = set()
    for a in acts:
        seen.add(a.player)
        if a.at < opens:
            excluded[a.player].append((a.pid, f"开门前发帖（{_when(a.at)}），不计入第{day}天"))
            continue
        if a.at > closes:
            excluded[a.player].append((a.pid, f"关门后发帖（{_when(a.at)}），不计入第{day}天"))
            continue
        why = policy.exclusion(a.state)
        if why is not None:
            excluded[a.player].append((a.pid, why))
            continue
        counted[a.player].append(a)
        remark = policy.note(a.state)
        if remark is not None:
            notes[a.player].append((a.pid, remark))
    result: dict[str, PostCount] = {}
    for player in sorted(seen):
        posts = counted.get(player, [])
        result[player] = PostCount(
            player=player,
            count=len(posts),
            pids=tuple(a.pid for a in posts),
            evidence=tuple(a.evidence for a in posts),
            excluded=tuple(excluded.get(player, ())),
            notes=tuple(notes.get(player, ())),
        )
    return result


def without_posts_after_out(
    counts: Mapping[str, PostCount], out_at: Mapping[str, datetime]
) -> dict[str, PostCount]:
    """The day's counts without each player's posts after he went out (``out_at``): an out
    player may not speak in the discussion thread (诈尸, flagged on its own), so what he posts
    then is no 发言 of the day; they move to ``excluded`` with the reason. A post made at the
    very moment of going out still counts, as it is no 诈尸 either."""
    result = dict(counts)
    for player, out in out_at.items():
        pc = counts.get(player)
        if pc is None:
            continue
        evidence = list(pc.evidence)
        late = {e.pid for e in evidence if e.at is not None and e.at > out}
        if not late:
            continue
        kept = [(pid, e) for pid, e in zip(pc.pids, evidence, strict=True) if pid not in late]
        moved = tuple(
            (e.pid, f"出局后发帖（{_when(e.at)}，{_when(out)}出局），不计入发言")
            for e in evidence
            if e.pid in late and e.at is not None
        )
        result[player] = replace(
            pc,
            count=len(kept),
            pids=tuple(pid for pid, _e in kept),
            evidence=tuple(e for _pid, e in kept),
            excluded=(*pc.excluded, *moved),
            notes=tuple((pid, n) for pid, n in pc.notes if pid not in late),
        )
    return result


# --------------------------------------------------------------------------- check input


@dataclass(frozen=True, slots=True)
class ConductInput:
    """Everything the checks read, made once by :func:`conduct_flags` (see its arguments).

    ``days`` are in day order and ``roster`` in name order; ``acts`` are the game threads'
    posts, one per (tid, pid), in time order, and ``by_tid`` the same grouped by thread.
    ``closed`` are the days closed by ``as_of``, ``judged`` those of them bansha could read;
    ``counts[d]`` is judged day d's discussion post counts. ``roster_posts`` pairs each post by
    a roster player with the game day it belongs to. ``inquiry_by_tid`` is the inquiry pool by
    thread (the given inquiries, else every post).
    """

    rules: ConductRules
    policy: CountPolicy
    days: tuple[DaySummary, ...]
    roster: tuple[PlayerLife, ...]
    life: Mapping[str, PlayerLife]
    acts: Sequence[Activity]
    by_tid: Mapping[int, list[Activity]]
    closed: tuple[DaySummary, ...]
    unread: frozenset[int]
    judged: tuple[DaySummary, ...]
    counts: Mapping[int, Mapping[str, PostCount]]
    roster_posts: tuple[tuple[Activity, int], ...]
    inquiry_by_tid: Mapping[int, list[Activity]]
    sheriffs: Mapping[int, str | None]
    accelerated: Mapping[int, bool]
    voted_by_day: Mapping[int, Collection[str]] | None
    post_exempt_by_day: Mapping[int, Collection[str]] | None
    vote_exempt_by_day: Mapping[int, Collection[str]] | None
    sheriff_answers: tuple[SheriffAnswer, ...]
    edited_votes: tuple[EditedVote, ...]
    folded_names: tuple[FoldedName, ...]
    streak_skips_accelerated: bool

    def is_accelerated(self, day: int) -> bool:
        return self.accelerated.get(day, False)

    def post_excused(self, player: str, day: int) -> bool:
        """Excused from posting on ``day``: by a skill or status, or as the answering sheriff."""
        if player in _get(self.post_exempt_by_day, day):
            return True
        return self.rules.sheriff_answers_only and self.sheriffs.get(day) == player

    def post_count(self, day: int, player: str) -> tuple[PostCount | None, int]:
        """Judged ``day``'s count for ``player`` and its number (0 when he posted nothing)."""
        pc = self.counts[day].get(player)
        return pc, pc.count if pc is not None else 0

    def flag(
        self,
        kind: FlagKind,
        player: str,
        day: int,
        reason: str,
        evidence: Iterable[Evidence],
        pid: int | None = None,
        public: str = "",
    ) -> Flag:
        """A flag with its stable id, the rule set's card and rule, and evidence in time order."""
        fid = f"d{day}-{kind.value}-{player}" + (f"-p{pid}" if pid is not None else "")
        return Flag(
            id=fid,
            kind=kind,
            player=player,
            day=day,
            reason=reason,
            evidence=_ev_sorted(evidence),
            card=self.rules.cards.get(kind),
            rule=self.rules.rule(kind),
            public=public,
        )


#: one check: the flags of its kind, from the input
Check = Callable[[ConductInput], Iterable[Flag]]


@dataclass(frozen=True, slots=True)
class ConductCheck:
    """A registered check: the kind it raises and the function that raises it."""

    kind: FlagKind
    run: Check


# --------------------------------------------------------------------------- checks: 潜水


def check_qianshui(inp: ConductInput) -> Iterator[Flag]:
    """Under ``min_posts`` discussion posts on a judged, non-accelerated day, unless excused."""
    least = inp.rules.min_posts
    for d in inp.judged:
        if inp.is_accelerated(d.day):
            continue
        for p in inp.roster:
            if not p.liable(d) or inp.post_excused(p.name, d.day):
                continue
            pc, n = inp.post_count(d.day, p.name)
            if n >= least:
                continue
            reason = public = f"第{d.day}天讨论帖发言{n}帖，少于{least}帖（潜水）"
            if pc is not None and pc.excluded:
                details = "；".join(f"pid {pid}：{why}" for pid, why in pc.excluded)
                reason += f"；另有{len(pc.excluded)}帖未计入（{details}）"
                public += f"；另有{len(pc.excluded)}帖未计入"
            evidence = pc.evidence if pc else ()
            yield inp.flag(FlagKind.QIANSHUI, p.name, d.day, reason, evidence, public=public)


def check_no_vote(inp: ConductInput) -> Iterator[Flag]:
    """No vote on a judged, non-accelerated day whose voters are known, unless excused."""
    voted = inp.voted_by_day
    if voted is None:
        return
    for d in inp.judged:
        if inp.is_accelerated(d.day) or d.day not in voted:
            continue
        for p in inp.roster:
            if not p.liable(d) or p.name in voted[d.day]:
                continue
            if p.name in _get(inp.vote_exempt_by_day, d.day):
                continue
            reason = f"第{d.day}天未投票（讨论结束时未回复投票帖，潜水）"
            yield inp.flag(FlagKind.NO_VOTE, p.name, d.day, reason, ())


def check_qianshui_streak(inp: ConductInput) -> Iterator[Flag]:
    """Under ``streak_posts`` on ``streak_days`` consecutive closed days, per player."""
    for p in inp.roster:
        yield from _streaks(inp, p)


def _streaks(inp: ConductInput, p: PlayerLife) -> Iterator[Flag]:
    """One player's runs: a day nobody read or he was out of breaks a run; an accelerated or
    excused day breaks it too, or is skipped with ``streak_skips_accelerated``."""
    rules = inp.rules
    run: list[tuple[DaySummary, PostCount | None]] = []
    for d in inp.closed:
        if d.day in inp.unread or not p.liable(d):
            run = []
            continue
        if inp.is_accelerated(d.day) or inp.post_excused(p.name, d.day):
            if not inp.streak_skips_accelerated:
                run = []
            continue
        pc, n = inp.post_count(d.day, p.name)
        if n >= rules.streak_posts:
            run = []
            continue
        run.append((d, pc))
        if len(run) == rules.streak_days:
            day_list = "、".join(str(x.day) for x, _ in run)
            per_day = "、".join(str(c.count if c else 0) for _, c in run)
            reason = (
                f"第{day_list}天连续{len(run)}个未执行{rules.accel_word}的讨论日"
                f"发言均不足{rules.streak_posts}帖（分别为{per_day}帖）（潜水）"
            )
            run_evidence = [e for _, c in run if c is not None for e in c.evidence]
            yield inp.flag(FlagKind.QIANSHUI_STREAK, p.name, d.day, reason, run_evidence)
            run = []


# --------------------------------------------------------------------------- checks: posts


def check_zhashi(inp: ConductInput) -> Iterator[Flag]:
    """诈尸: an out player's posts after he went out in ``zhashi_roles`` threads, per day,
    except the roles he may still post in."""
    found: dict[tuple[str, int], list[Activity]] = defaultdict(list)
    for a, day in inp.roster_posts:
        p_life = inp.life[a.player]
        if (
            p_life.out_at is not None
            and a.at > p_life.out_at
            and a.role in inp.rules.zhashi_roles
            and a.role not in p_life.may_post_after_out
        ):
            found[(a.player, day)].append(a)
    for (player, day), posts in found.items():
        out_at = inp.life[player].out_at
        assert out_at is not None
        reason = (
            f"{player}已于{_when(out_at)}出局，之后在{_roles_zh(a.role for a in posts)}"
            f"发帖{len(posts)}次（诈尸）"
        )
        yield inp.flag(FlagKind.ZHASHI, player, day, reason, (a.evidence for a in posts))


def check_font(inp: ConductInput) -> Iterator[Flag]:
    """The director's red or enlarged font in ``font_roles`` threads, per player and day."""
    found: dict[tuple[str, int], list[Activity]] = defaultdict(list)
    for a, day in inp.roster_posts:
        if (a.red or a.enlarged) and a.role in inp.rules.font_roles:
            found[(a.player, day)].append(a)
    for (player, day), posts in found.items():
        red = sum(1 for a in posts if a.red)
        big = sum(1 for a in posts if a.enlarged)
        what = "、".join(x for x, n in (("红色字体", red), ("放大字体", big)) if n)
        reason = (
            f"第{day}天在{_roles_zh(a.role for a in posts)}使用导演专用的{what}，"
            f"共{len(posts)}帖" + (f"（红色{red}帖，放大{big}帖）" if red and big else "")
        )
        yield inp.flag(FlagKind.FONT, player, day, reason, (a.evidence for a in posts))


def check_lastwords_code(inp: ConductInput) -> Iterator[Flag]:
    """Discuz! code in last words, one flag per post."""
    for a, day in inp.roster_posts:
        if a.role == "lastwords" and a.has_bbcode:
            reason = f"{a.player}的遗言中使用了Discuz!代码（遗言中禁止使用Discuz!代码）"
            yield inp.flag(FlagKind.LASTWORDS_CODE, a.player, day, reason, (a.evidence,), a.pid)


def check_hidden_text(inp: ConductInput) -> Iterator[Flag]:
    """Text hidden by colour, size or [hide] outside last words, one flag per post."""
    for a, day in inp.roster_posts:
        if not a.hidden or a.role == "lastwords":
            continue
        where = f"{ROLE_ZH[a.role]}{a.evidence.label}"
        what = "、".join(HIDDEN_ZH.get(k, k) for k in a.hidden)
        tail = f"使用了隐藏文字（{what}）；隐藏文字不予采信（其中的投票行不计票）"
        reason, public = f"第{day}天在{where}{tail}", f"第{day}天在{ROLE_ZH[a.role]}{tail}"
        yield inp.flag(
            FlagKind.HIDDEN_TEXT, a.player, day, reason, (a.evidence,), a.pid, public=public
        )


# --------------------------------------------------------------------------- checks: inquiries


def check_inquiry_limit(inp: ConductInput) -> Iterator[Flag]:
    """More countable inquiries in a day's inquiry thread than ``inquiry_limit`` (the day's
    sheriff and non-players are not counted)."""
    limit = inp.rules.inquiry_limit
    if limit is None:
        return
    for d in inp.days:
        asked: dict[str, list[Activity]] = defaultdict(list)
        shut = d.closes - inp.rules.inquiry_close_before if inp.rules.inquiry_close_before else None
        for a in _of_tids(inp.inquiry_by_tid, d.inquiry_tids):
            if not d.contains(a.at) or (shut is not None and a.at >= shut):
                continue  # after the inquiry close: refused as late
            if a.player == inp.sheriffs.get(d.day) or a.player not in inp.life:
                continue
            out_at = inp.life[a.player].out_at
            if out_at is not None and out_at <= a.at:
                continue  # refused: the player is out
            if inp.policy.exclusion(a.state) is not None:
                continue
            asked[a.player].append(a)
        for player, posts in asked.items():
            total, taken, over = 0, 0, []
            for a in posts:
                total += a.questions
                # a post that does not fit in what is left is refused and uses none of it
                # (as the inquiry thread's own reading does)
                if taken + a.questions > limit:
                    over.append(a)
                else:
                    taken += a.questions
            if not over:
                continue
            extra = "、".join(a.evidence.label for a in over)
            public = f"第{d.day}天在询问贴询问{total}次，超过每天{limit}次的上限"
            reason = f"{public}（超出的在{extra}）"
            evidence = (a.evidence for a in posts)
            yield inp.flag(FlagKind.INQUIRY_LIMIT, player, d.day, reason, evidence, public=public)


def check_sheriff_discussion(inp: ConductInput) -> Iterator[Flag]:
    """A sheriff who may only answer (``sheriff_answers_only``) posting in the day's discussion
    thread during the day."""
    if not inp.rules.sheriff_answers_only:
        return
    for d in inp.days:
        sheriff = inp.sheriffs.get(d.day)
        if not sheriff:
            continue
        posts = [
            a
            for a in _of_tids(inp.by_tid, d.discussion_tids)
            if a.player == sheriff and d.contains(a.at)
        ]
        if posts:
            reason = (
                f"警长{sheriff}第{d.day}天在讨论帖发言{len(posts)}帖"
                "（警长不能在讨论贴发言；直接黄牌或红牌）"
            )
            evidence = (a.evidence for a in posts)
            yield inp.flag(FlagKind.SHERIFF_DISCUSSION, sheriff, d.day, reason, evidence)


def check_sheriff_answer(inp: ConductInput) -> Iterator[Flag]:
    """Such a sheriff's answers that are not 是/否/不知道, per player and day."""
    if not inp.rules.sheriff_answers_only:
        return
    bad: dict[tuple[str, int], list[SheriffAnswer]] = defaultdict(list)
    for ans in sorted(inp.sheriff_answers, key=lambda x: (x.at, x.tid, x.pid, x.player)):
        if ans.problem and ans.asks is None:
            bad[(ans.player, ans.day)].append(ans)
    for (player, day), answers in bad.items():
        problems = "；".join(f"{x.evidence.label}：{x.problem}" for x in answers)
        head = f"警长{player}第{day}天在询问贴的回答不是是/否/不知道（{len(answers)}帖）"
        reason = f"{head}：{problems}（直接黄牌或红牌）"
        evidence = (x.evidence for x in answers)
        public = f"{head}（直接黄牌或红牌）"
        yield inp.flag(FlagKind.SHERIFF_ANSWER, player, day, reason, evidence, public=public)


def check_sheriff_inquiry(inp: ConductInput) -> Iterator[Flag]:
    """Such a sheriff asking or guessing in the inquiry thread, per player and day."""
    if not inp.rules.sheriff_answers_only:
        return
    asked: dict[tuple[str, int], list[SheriffAnswer]] = defaultdict(list)
    for ans in sorted(inp.sheriff_answers, key=lambda x: (x.at, x.tid, x.pid, x.player)):
        if ans.asks is not None:
            asked[(ans.player, ans.day)].append(ans)
    for (player, day), posts in asked.items():
        what = "、".join(f"{x.evidence.label}{x.asks}" for x in posts)
        rule = "警长不能在询问贴中提问、猜词，只能回答是/否/不知道；猜词不计（直接黄牌或红牌）"
        reason = f"警长{player}第{day}天在询问贴提问或猜词（{what}）：{rule}"
        public = f"警长{player}第{day}天在询问贴提问或猜词（{len(posts)}帖）：{rule}"
        evidence = (x.evidence for x in posts)
        yield inp.flag(FlagKind.SHERIFF_INQUIRY, player, day, reason, evidence, public=public)


# --------------------------------------------------------------------------- checks: votes


def _once_per_post(posts: Iterable[_P]) -> Iterator[_P]:
    """``posts`` in (day, time, tid, pid, player) order, the first of each (tid, pid) only."""
    seen: set[tuple[int, int]] = set()
    for x in sorted(posts, key=lambda x: (x.day, x.at, x.tid, x.pid, x.player)):
        if (x.tid, x.pid) not in seen:
            seen.add((x.tid, x.pid))
            yield x


def check_edited_vote(inp: ConductInput) -> Iterator[Flag]:
    """A vote post that was edited, one flag per post."""
    for ev in _once_per_post(inp.edited_votes):
        evidence = ev.evidence
        who = ev.editor or ev.player
        when = f"于{_when(ev.edited_at)}" if ev.edited_at is not None else ""
        tail = f"被编辑过（{who}{when}编辑），以截止前首次抓取的版本为准"
        reason = f"第{ev.day}天投票帖{evidence.label}{tail}"
        public = f"第{ev.day}天的投票{tail}"
        yield inp.flag(
            FlagKind.EDITED_VOTE, ev.player, ev.day, reason, (evidence,), ev.pid, public=public
        )


def check_name_folded(inp: ConductInput) -> Iterator[Flag]:
    """A vote whose name matched only once folded, one flag per post."""
    for fn in _once_per_post(inp.folded_names):
        evidence = fn.evidence
        what = "、".join(_FOLDED_ZH.get(k, k) for k in fn.folded) or "不可见字符/全角字母"
        reason = (
            f"第{fn.day}天投票帖{evidence.label}的投票对象「{fn.written}」含{what}，"
            f"按名单中的「{fn.target}」计票"
        )
        # the target stays out: a rule set may keep votes anonymous
        public = f"第{fn.day}天投票的投票对象含{what}"
        yield inp.flag(
            FlagKind.NAME_FOLDED, fn.player, fn.day, reason, (evidence,), fn.pid, public=public
        )


#: the registered checks, one per FlagKind, in the kinds' order
CHECKS: tuple[ConductCheck, ...] = (
    ConductCheck(FlagKind.QIANSHUI, check_qianshui),
    ConductCheck(FlagKind.QIANSHUI_STREAK, check_qianshui_streak),
    ConductCheck(FlagKind.NO_VOTE, check_no_vote),
    ConductCheck(FlagKind.ZHASHI, check_zhashi),
    ConductCheck(FlagKind.FONT, check_font),
    ConductCheck(FlagKind.LASTWORDS_CODE, check_lastwords_code),
    ConductCheck(FlagKind.INQUIRY_LIMIT, check_inquiry_limit),
    ConductCheck(FlagKind.SHERIFF_DISCUSSION, check_sheriff_discussion),
    ConductCheck(FlagKind.SHERIFF_ANSWER, check_sheriff_answer),
    ConductCheck(FlagKind.SHERIFF_INQUIRY, check_sheriff_inquiry),
    ConductCheck(FlagKind.EDITED_VOTE, check_edited_vote),
    ConductCheck(FlagKind.HIDDEN_TEXT, check_hidden_text),
    ConductCheck(FlagKind.NAME_FOLDED, check_name_folded),
)


# --------------------------------------------------------------------------- flags


def conduct_flags(
    *,
    days: Sequence[DaySummary],
    activities: Iterable[Activity],
    players: Sequence[PlayerLife],
    rules: ConductRules,
    sheriff_by_day: Mapping[int, str | None] | None = None,
    voted_by_day: Mapping[int, Collection[str]] | None = None,
    accelerated_by_day: Mapping[int, bool] | None = None,
    inquiries: Iterable[Activity] | None = None,
    sheriff_answers: Iterable[SheriffAnswer] = (),
    edited_votes: Iterable[EditedVote] = (),
    post_exempt_by_day: Mapping[int, Collection[str]] | None = None,
    vote_exempt_by_day: Mapping[int, Collection[str]] | None = None,
    as_of: datetime | None = None,
    policy: CountPolicy = CountPolicy(),
    streak_skips_accelerated: bool = False,
    folded_names: Iterable[FoldedName] = (),
    uncrawled_days: Collection[int] = (),
    counts_by_day: Mapping[int, Mapping[str, PostCount]] | None = None,
    checks: Sequence[ConductCheck] = CHECKS,
) -> tuple[Flag, ...]:
    """Every conduct flag the rule set asks the tool to raise, in a stable order.

    - ``rules``: the rule set's conduct rules (``get_ruleset(id).conduct``).
    - ``voted_by_day[d]``: players who replied to day d's vote thread with a vote (valid or not,
      弃权 and 代投 included). A day missing from the mapping is not judged for 未投票.
    - ``accelerated_by_day[d]``: the day ran under the acceleration that lifts the 潜水 penalties
      (where a set has two speeds, only the one its text names). Missing → not accelerated.
    - ``inquiries``: the posts that are inquiries; by default every countable post in the day's
      inquiry thread by anyone but that day's sheriff (read only with an ``inquiry_limit``).
    - ``post_exempt_by_day`` / ``vote_exempt_by_day``: players a skill or status excuses from
      posting / voting that day (e.g. a 白痴 who survived his lynch cannot vote). A sheriff who
      may only answer (``sheriff_answers_only``) is always excused from posting.
    - ``as_of``: judge 潜水 and 未投票 only for days closed by then (None: all days).
    - ``streak_skips_accelerated``: False (default) — an accelerated or excused day breaks a run
      of 连续三个 days; True — it is skipped and the run continues across it.
    - ``folded_names``: votes whose name matched only once folded (one flag per post).
    - ``uncrawled_days``: days none of whose threads bansha could read yet: nobody is judged
      for 潜水 or 未投票 on them (nothing was seen, which is not the same as nothing posted), and
      such a day breaks a run of 连续三个 days (no flag rests on a day nobody read).
    - ``counts_by_day[d]``: day d's post counts when the caller already made them with
      :func:`count_posts` from the same activities and ``policy`` (the pipeline does, for each
      day's result); the days missing are counted here.
    - ``checks``: the checks to run (:data:`CHECKS`); each raises only its own kind.

    The flags are sorted by day, kind (``FlagKind`` order), player and id.
    """
    acts = _dedupe(activities)
    days_sorted = tuple(sorted(days, key=lambda d: d.day))
    roster = tuple(sorted(players, key=lambda p: p.name))
    life = {p.name: p for p in roster}
    unread = frozenset(uncrawled_days)
    closed = tuple(d for d in days_sorted if as_of is None or d.closes <= as_of)
    judged = tuple(d for d in closed if d.day not in unread)
    by_tid = _by_tid(acts)
    days_of_tid = _days_by_tid(days_sorted)
    inp = ConductInput(
        rules=rules,
        policy=policy,
        days=days_sorted,
        roster=roster,
        life=life,
        acts=acts,
        by_tid=by_tid,
        closed=closed,
        unread=unread,
        judged=judged,
        counts=_day_counts(judged, by_tid, policy, counts_by_day or {}),
        roster_posts=tuple(
            (a, _day_of(a, days_sorted, days_of_tid)) for a in acts if a.player in life
        ),
        inquiry_by_tid=_by_tid(_dedupe(inquiries)) if inquiries is not None else by_tid,
        sheriffs=dict(sheriff_by_day or {}),
        accelerated=dict(accelerated_by_day or {}),
        voted_by_day=voted_by_day,
        post_exempt_by_day=post_exempt_by_day,
        vote_exempt_by_day=vote_exempt_by_day,
        sheriff_answers=tuple(sheriff_answers),
        edited_votes=tuple(edited_votes),
        folded_names=tuple(folded_names),
        streak_skips_accelerated=streak_skips_accelerated,
    )
    return _run_checks(inp, checks)


def _day_counts(
    days: Iterable[DaySummary],
    by_tid: Mapping[int, list[Activity]],
    policy: CountPolicy,
    made: Mapping[int, Mapping[str, PostCount]],
) -> dict[int, Mapping[str, PostCount]]:
    """Each day's discussion post counts: the caller's where made, else counted here."""
    return {
        d.day: made[d.day]
        if d.day in made
        else _count(
            _of_tids(by_tid, d.discussion_tids),
            day=d.day,
            opens=d.opens,
            closes=d.closes,
            policy=policy,
        )
        for d in days
    }


def _run_checks(inp: ConductInput, checks: Sequence[ConductCheck]) -> tuple[Flag, ...]:
    """Every check's flags, sorted by day, kind, player and id (a stable sort: the checks'
    order breaks a tie)."""
    flags: list[Flag] = []
    for check in checks:
        for f in check.run(inp):
            if f.kind is not check.kind:
                raise ValueError(
                    f"违规检查 {getattr(check.run, '__name__', repr(check.run))} 登记为"
                    f"「{check.kind.zh}」，却给出了「{f.kind.zh}」的标记（{f.id}）"
                )
            flags.append(f)
    flags.sort(key=lambda f: (f.day, _KIND_ORDER[f.kind], f.player, f.id))
    return tuple(flags)
