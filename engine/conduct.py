"""Conduct (违规): post counts per day and the flags the tool raises by itself.

Pure. The pipeline turns every post by a roster player in a game thread into an ``Activity``;
this module counts discussion posts per day (潜水) and raises ``Flag``s. A flag becomes a card
only when the director confirms it (see ``engine.cards``).

Rule texts (file:line) are each rule set's :class:`ConductRules`, declared in its module
(``engine.rulesets.<id>``, ``get_ruleset(id).conduct``) and passed in; where a set is silent
(nizhuan's 违规判定 post is empty, nizhuan.txt:227 占楼待编辑) the common defaults apply
(docs/rulings.md#conduct-defaults) and the flag's ``rule`` says so.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, get_args

from engine.cards import Card

__all__ = [
    "DEFAULT_RULE",
    "ROLES",
    "Activity",
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
    QIANSHUI = "qianshui"  # under 5 discussion posts on a non-accelerated day
    QIANSHUI_STREAK = "qianshui-streak"  # under 10 on each of 3 consecutive such days
    NO_VOTE = "no-vote"  # no vote on a non-accelerated day
    ZHASHI = "zhashi"  # 诈尸: an out player posting in the game's threads
    FONT = "font"  # red or enlarged font (the director's fonts)
    LASTWORDS_CODE = "lastwords-code"  # Discuz! code in last words
    INQUIRY_LIMIT = "inquiry-limit"  # more inquiries in a day than allowed (zhenyan)
    SHERIFF_DISCUSSION = "sheriff-discussion"  # zhenyan sheriff posting in the discussion thread
    SHERIFF_ANSWER = "sheriff-answer"  # zhenyan sheriff answering other than 是/否/不知道
    EDITED_VOTE = "edited-vote"  # a vote post that was edited
    HIDDEN_TEXT = "hidden-text"  # a post with text hidden by colour, size or [hide]
    NAME_FOLDED = "name-folded"  # a vote whose name matched once invisible/full-width folded

    @property
    def zh(self) -> str:
        return _KIND_ZH[self]


_KIND_ZH: dict[FlagKind, str] = {
    FlagKind.QIANSHUI: "潜水（发言不足）",
    FlagKind.QIANSHUI_STREAK: "潜水（连续三天发言不足）",
    FlagKind.NO_VOTE: "潜水（未投票）",
    FlagKind.ZHASHI: "诈尸",
    FlagKind.FONT: "导演专用字体",
    FlagKind.LASTWORDS_CODE: "遗言含Discuz!代码",
    FlagKind.INQUIRY_LIMIT: "询问超过次数",
    FlagKind.SHERIFF_DISCUSSION: "警长在讨论帖发言",
    FlagKind.SHERIFF_ANSWER: "警长回答不合规",
    FlagKind.EDITED_VOTE: "投票帖被编辑",
    FlagKind.HIDDEN_TEXT: "隐藏文字（白字/小字/[hide]）",
    FlagKind.NAME_FOLDED: "票中名字含不可见字符/全角字母",
}

#: what each hidden-text mark is called (Activity.hidden holds these keys)
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
    zhenyan_sheriff: bool = False  # sheriff may not post in discussion, answers 是/否/不知道 only
    cards: Mapping[FlagKind, Card] = field(
        default_factory=lambda: {
            FlagKind.QIANSHUI: Card.YELLOW,
            FlagKind.QIANSHUI_STREAK: Card.YELLOW,
            FlagKind.NO_VOTE: Card.YELLOW,
        }
    )

    def rule(self, kind: FlagKind) -> str:
        return self.rules.get(kind, _SHARED_RULES.get(kind, DEFAULT_RULE))


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

    ``may_post_after_out``: thread roles an out player may still post in, e.g. tubian24's 白痴
    after 装傻 (tubian24.txt:112 白痴仍可在讨论帖进行发言) → ``frozenset({"discussion"})``.
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
    """A zhenyan sheriff's post in the inquiry thread; ``problem`` comes from the inquiry parser."""

    answer: str | None = None  # 是 / 否 / 不知道 when readable
    problem: str | None = None  # Chinese: why it is not one of the three answers

    def to_dict(self) -> dict[str, Any]:
        return {
            **self._post_dict(),
            "answer": self.answer,
            "problem": self.problem,
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
    evidence: tuple[Evidence, ...]
    excluded: tuple[tuple[int, str], ...]  # (pid, Chinese reason)
    notes: tuple[tuple[int, str], ...] = ()  # counted, but worth a look

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "count": self.count,
            "pids": list(self.pids),
            "evidence": [e.to_dict() for e in self.evidence],
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


# --------------------------------------------------------------------------- helpers


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
) -> tuple[Flag, ...]:
    """Every conduct flag the rule set asks the tool to raise, in a stable order.

    - ``rules``: the rule set's conduct rules (``get_ruleset(id).conduct``).
    - ``voted_by_day[d]``: players who replied to day d's vote thread with a vote (valid or not,
      弃权 and 代投 included). A day missing from the mapping is not judged for 未投票.
    - ``accelerated_by_day[d]``: the day ran under the acceleration that lifts the 潜水 penalties
      (m135: 二段加速 only). Missing → not accelerated.
    - ``inquiries``: the posts that are inquiries; by default every countable post in the day's
      inquiry thread by anyone but that day's sheriff (zhenyan only).
    - ``post_exempt_by_day`` / ``vote_exempt_by_day``: players a skill or status excuses from
      posting / voting that day (e.g. m209 白痴 after 大难不死 cannot vote). A zhenyan sheriff is
      always excused from posting (he may not post in the discussion thread).
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
    """
    acts = _dedupe(activities)
    days_sorted = sorted(days, key=lambda d: d.day)
    sheriffs = dict(sheriff_by_day or {})
    accelerated = dict(accelerated_by_day or {})
    flags: list[Flag] = []

    def add(
        kind: FlagKind,
        player: str,
        day: int,
        reason: str,
        evidence: Iterable[Evidence],
        pid: int | None = None,
        card: Card | None = None,
    ) -> None:
        fid = f"d{day}-{kind.value}-{player}" + (f"-p{pid}" if pid is not None else "")
        flags.append(
            Flag(
                id=fid,
                kind=kind,
                player=player,
                day=day,
                reason=reason,
                evidence=_ev_sorted(evidence),
                card=card if card is not None else rules.cards.get(kind),
                rule=rules.rule(kind),
            )
        )

    roster = sorted(players, key=lambda p: p.name)
    life = {p.name: p for p in roster}

    # -- 潜水: posts and votes per closed day (a day bansha never read is not judged)
    unread = set(uncrawled_days)
    closed = [d for d in days_sorted if as_of is None or d.closes <= as_of]
    judged = [d for d in closed if d.day not in unread]
    by_tid = _by_tid(acts)
    made = counts_by_day or {}
    counts = {
        d.day: made[d.day]
        if d.day in made
        else _count(
            _of_tids(by_tid, d.discussion_tids),
            day=d.day,
            opens=d.opens,
            closes=d.closes,
            policy=policy,
        )
        for d in judged
    }

    def post_excused(player: str, day: int) -> bool:
        if player in _get(post_exempt_by_day, day):
            return True
        return rules.zhenyan_sheriff and sheriffs.get(day) == player

    for d in judged:
        if accelerated.get(d.day, False):
            continue
        for p in roster:
            if not p.liable(d):
                continue
            pc = counts[d.day].get(p.name)
            n = pc.count if pc is not None else 0
            if not post_excused(p.name, d.day) and n < rules.min_posts:
                reason = f"第{d.day}天讨论帖发言{n}帖，少于{rules.min_posts}帖（潜水）"
                if pc is not None and pc.excluded:
                    details = "；".join(f"pid {pid}：{why}" for pid, why in pc.excluded)
                    reason += f"；另有{len(pc.excluded)}帖未计入（{details}）"
                add(FlagKind.QIANSHUI, p.name, d.day, reason, pc.evidence if pc else ())
            if (
                voted_by_day is not None
                and d.day in voted_by_day
                and p.name not in voted_by_day[d.day]
                and p.name not in _get(vote_exempt_by_day, d.day)
            ):
                add(
                    FlagKind.NO_VOTE,
                    p.name,
                    d.day,
                    f"第{d.day}天未投票（讨论结束时未回复投票帖，潜水）",
                    (),
                )

    # -- 潜水: under streak_posts on streak_days consecutive non-accelerated days
    for p in roster:
        run: list[tuple[DaySummary, PostCount | None]] = []
        for d in closed:
            if d.day in unread:  # not seen: the run of consecutive days is broken
                run = []
                continue
            if not p.liable(d):
                run = []
                continue
            if accelerated.get(d.day, False) or post_excused(p.name, d.day):
                if not streak_skips_accelerated:
                    run = []
                continue
            pc = counts[d.day].get(p.name)
            n = pc.count if pc is not None else 0
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
                add(FlagKind.QIANSHUI_STREAK, p.name, d.day, reason, run_evidence)
                run = []

    # -- 诈尸 and fonts, grouped per player and day
    days_of_tid = _days_by_tid(days_sorted)
    zhashi: dict[tuple[str, int], list[Activity]] = defaultdict(list)
    fonts: dict[tuple[str, int], list[Activity]] = defaultdict(list)
    for a in acts:
        p_life = life.get(a.player)
        if p_life is None:
            continue
        day = _day_of(a, days_sorted, days_of_tid)
        if (
            p_life.out_at is not None
            and a.at > p_life.out_at
            and a.role in rules.zhashi_roles
            and a.role not in p_life.may_post_after_out
        ):
            zhashi[(a.player, day)].append(a)
        if (a.red or a.enlarged) and a.role in rules.font_roles:
            fonts[(a.player, day)].append(a)
        if a.hidden and a.role != "lastwords":
            where = f"{ROLE_ZH[a.role]}{a.evidence.label}"
            what = "、".join(HIDDEN_ZH.get(k, k) for k in a.hidden)
            add(
                FlagKind.HIDDEN_TEXT,
                a.player,
                day,
                f"第{day}天在{where}使用了隐藏文字（{what}）；隐藏文字不予采信"
                "（其中的投票行不计票）",
                (a.evidence,),
                pid=a.pid,
            )
        if a.role == "lastwords" and a.has_bbcode:
            add(
                FlagKind.LASTWORDS_CODE,
                a.player,
                day,
                f"{a.player}的遗言中使用了Discuz!代码（遗言中禁止使用Discuz!代码）",
                (a.evidence,),
                pid=a.pid,
            )
    for (player, day), posts in zhashi.items():
        out_at = life[player].out_at
        assert out_at is not None
        add(
            FlagKind.ZHASHI,
            player,
            day,
            f"{player}已于{_when(out_at)}出局，之后在{_roles_zh(a.role for a in posts)}"
            f"发帖{len(posts)}次（诈尸）",
            (a.evidence for a in posts),
        )
    for (player, day), posts in fonts.items():
        red = sum(1 for a in posts if a.red)
        big = sum(1 for a in posts if a.enlarged)
        what = "、".join(x for x, n in (("红色字体", red), ("放大字体", big)) if n)
        add(
            FlagKind.FONT,
            player,
            day,
            f"第{day}天在{_roles_zh(a.role for a in posts)}使用导演专用的{what}，"
            f"共{len(posts)}帖" + (f"（红色{red}帖，放大{big}帖）" if red and big else ""),
            (a.evidence for a in posts),
        )

    # -- zhenyan: inquiries per day, the sheriff's posts and answers
    if rules.inquiry_limit is not None:
        pool = _by_tid(_dedupe(inquiries)) if inquiries is not None else by_tid
        limit = rules.inquiry_limit
        for d in days_sorted:
            asked: dict[str, list[Activity]] = defaultdict(list)
            for a in _of_tids(pool, d.inquiry_tids):
                if not d.contains(a.at):
                    continue
                if a.player == sheriffs.get(d.day) or a.player not in life:
                    continue
                if policy.exclusion(a.state) is not None:
                    continue
                asked[a.player].append(a)
            for player, posts in asked.items():
                if len(posts) > limit:
                    extra = "、".join(a.evidence.label for a in posts[limit:])
                    add(
                        FlagKind.INQUIRY_LIMIT,
                        player,
                        d.day,
                        f"第{d.day}天在询问贴询问{len(posts)}次，超过每天{limit}次的上限"
                        f"（超出的是{extra}）",
                        (a.evidence for a in posts),
                    )
    if rules.zhenyan_sheriff:
        for d in days_sorted:
            sheriff = sheriffs.get(d.day)
            if not sheriff:
                continue
            posts = [
                a
                for a in _of_tids(by_tid, d.discussion_tids)
                if a.player == sheriff and d.contains(a.at)
            ]
            if posts:
                add(
                    FlagKind.SHERIFF_DISCUSSION,
                    sheriff,
                    d.day,
                    f"警长{sheriff}第{d.day}天在讨论帖发言{len(posts)}帖"
                    "（警长不能在讨论贴发言；直接黄牌或红牌）",
                    (a.evidence for a in posts),
                )
        bad: dict[tuple[str, int], list[SheriffAnswer]] = defaultdict(list)
        for ans in sorted(sheriff_answers, key=lambda x: (x.at, x.tid, x.pid, x.player)):
            if ans.problem:
                bad[(ans.player, ans.day)].append(ans)
        for (player, day), answers in bad.items():
            problems = "；".join(
                f"{Evidence(x.tid, x.pid, x.floor, x.at, x.url).label}：{x.problem}"
                for x in answers
            )
            add(
                FlagKind.SHERIFF_ANSWER,
                player,
                day,
                f"警长{player}第{day}天在询问贴的回答不是是/否/不知道（{len(answers)}帖）："
                f"{problems}（直接黄牌或红牌）",
                (Evidence(x.tid, x.pid, x.floor, x.at, x.url) for x in answers),
            )

    # -- edited vote posts, one flag each
    seen_edits: set[tuple[int, int]] = set()
    for ev in sorted(edited_votes, key=lambda x: (x.day, x.at, x.tid, x.pid, x.player)):
        if (ev.tid, ev.pid) in seen_edits:
            continue
        seen_edits.add((ev.tid, ev.pid))
        evidence = Evidence(ev.tid, ev.pid, ev.floor, ev.at, ev.url)
        who = ev.editor or ev.player
        when = f"于{_when(ev.edited_at)}" if ev.edited_at is not None else ""
        add(
            FlagKind.EDITED_VOTE,
            ev.player,
            ev.day,
            f"第{ev.day}天投票帖{evidence.label}被编辑过（{who}{when}编辑），"
            "以截止前首次抓取的版本为准",
            (evidence,),
            pid=ev.pid,
        )

    # -- votes whose name matched only once folded, one flag each
    seen_folds: set[tuple[int, int]] = set()
    for fn in sorted(folded_names, key=lambda x: (x.day, x.at, x.tid, x.pid, x.player)):
        if (fn.tid, fn.pid) in seen_folds:
            continue
        seen_folds.add((fn.tid, fn.pid))
        evidence = Evidence(fn.tid, fn.pid, fn.floor, fn.at, fn.url)
        what = "、".join(_FOLDED_ZH.get(k, k) for k in fn.folded) or "不可见字符/全角字母"
        add(
            FlagKind.NAME_FOLDED,
            fn.player,
            fn.day,
            f"第{fn.day}天投票帖{evidence.label}的投票对象「{fn.written}」含{what}，"
            f"按名单中的「{fn.target}」计票",
            (evidence,),
            pid=fn.pid,
        )

    flags.sort(key=lambda f: (f.day, _KIND_ORDER[f.kind], f.player, f.id))
    return tuple(flags)
