"""A 报名帖 (sign-up thread) read into sign-ups, quits and the roster they make.

Pure: the posts come in as :class:`parsers.records.Post` (what the thread parser gives and the
store keeps); nothing here reads a page, a file or the clock (the sign-up deadline is an
argument).

What a post is (:func:`classify_post`), liberal on purpose — every post that does not count is
listed with the reason, so the director can check:

- not read at all: the thread's opening post (楼主), the director's posts (by name or uid),
  a post that is deleted, blocked (屏蔽), waiting for moderation or shown to its author only,
  an anonymous post (uid 0), a post after the deadline;
- ``quit``: 退出报名, 取消报名, 撤销/撤回/放弃报名, 退报, 不报了, 不参加了, 不玩了, 不来了,
  我退出, 我退了 — and a negated sign-up (不报名, 不参加, 报不了): a quit when that account had
  signed up, ignored otherwise; a bare 退出 only when the post has no sign-up word;
- ``signup``: 报名 (报个名, 报一个 … anything with 报), +1, 参加, 参与, 加入, 算我, 带我, 占座,
  占位, 占坑, 上车, 来了, 我来, 来一个, 蹲, 想玩, 要玩, join, sign up; with 替补 wording (报名替补,
  替补+1, 只当替补 …) the account asks for a 替补 place only;
- ``other``: anything else — also a question (a post with ？ that does not begin with 报名 or +1:
  请问报名截止是几点？).

Quoted text (the 回复 button's quote) is never read: only the post's own words (``Post.text``).
A post may also give the player's sex (性别：女, or 男/女 at its end), kept for the rule sets
that need it (tubian24.txt:65).

The roster (:func:`build_roster`): the sign-ups in post order (pid: Discuz numbers posts as
they arrive), one per account (uid) — a second sign-up of an account already in is listed as a
duplicate; a quit removes the account's sign-up before it, and a sign-up after a quit joins at
its own place. The first ``seats`` accounts are the players, the rest are 替补 in the same order
(with those who asked only for a 替补 place).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from parsers.records import Post, PostState

__all__ = [
    "Entrant",
    "Ignored",
    "SignupKind",
    "SignupRecord",
    "SignupResult",
    "build_roster",
    "classify_post",
    "read_signups",
]


class SignupKind(StrEnum):
    SIGNUP = "signup"
    QUIT = "quit"
    OTHER = "other"


@dataclass(frozen=True, slots=True)
class SignupRecord:
    """One post of the 报名帖, as the roster reads it."""

    name: str  # the forum account name the page shows
    uid: int
    pid: int
    time: datetime | None
    kind: SignupKind
    why: str  # Chinese: the words that made it this kind, or why it is not read
    substitute: bool = False  # asked for a 替补 place only
    sex: str | None = None  # "男" / "女" when the post says so
    floor: int | None = None
    skipped: bool = False  # not read at all (director, opening post, deleted, late …)
    excerpt: str = ""  # the post's first words (what the director checks)


@dataclass(frozen=True, slots=True)
class Entrant:
    """An account in the roster (a player or a 替补)."""

    name: str
    uid: int
    pid: int  # the sign-up post that counts
    time: datetime | None
    sex: str | None = None
    substitute: bool = False  # asked for a 替补 place only
    why: str = ""


@dataclass(frozen=True, slots=True)
class Ignored:
    """A post that did not change the roster, and why (Chinese)."""

    record: SignupRecord
    why: str


@dataclass(frozen=True, slots=True)
class SignupResult:
    players: tuple[Entrant, ...]
    substitutes: tuple[Entrant, ...]
    #: quits that removed a sign-up: (the quit, the sign-up it removed)
    quits: tuple[tuple[SignupRecord, Entrant], ...]
    ignored: tuple[Ignored, ...]


# --------------------------------------------------------------------------- the words

_QUIT_STRONG = re.compile(
    r"退出报名|取消报名|撤销报名|撤回报名|放弃报名|退报|不报了|不参加了|不玩了|不来了|"
    r"我退出|我退了|报名取消|先退了|退了退了"
)
_NEGATED = re.compile(r"不报名|不参加|不参与|报不了|没法报|不能报|不去了|不加入")
_QUIT_WEAK = re.compile(r"退出")
_SIGNUP = re.compile(
    r"报名参加|报名参与|我报名|我也报名|报名|报个名|报一个|报一下|报道|报到|报|[+＋]\s*[1１一]|参加|参与|加入|算我|带我|占座|占位|占坑|上车|来了|我来|来一个|蹲|"
    r"想玩|要玩|(?<![a-z])join(?![a-z])|sign\s*up",
    re.IGNORECASE,
)
_SUBSTITUTE = re.compile(
    r"(?:报名|报|只当|当|做|求|申请|来个|来一个)\s*替补|替补\s*(?:报名|[+＋]\s*[1１一]|一个|一枚|一位)"
)
_SUBSTITUTE_TOO = re.compile(r"(?:可以|也可以|也能|愿意|不介意)\s*(?:当|做)?\s*替补|替补也")
_QUESTION = re.compile(r"[?？]")
_SIGNUP_FIRST = re.compile(r"^\s*(?:报名|报|[+＋]\s*[1１一]|我报名|我也报名)", re.IGNORECASE)
_SEX = re.compile(r"性别\s*[:：]?\s*([男女])|([男女])(?:生|性|玩家|孩子?)?\s*[!！。~～.]*\s*$")

_DROPPED_STATES = {
    PostState.DELETED: "帖子已删除",
    PostState.VANISHED: "帖子已从论坛消失（删除或屏蔽）",
    PostState.BLOCKED: "帖子被屏蔽，看不到内容",
    PostState.PENDING: "帖子待审核，看不到内容",
    PostState.AUTHOR_ONLY: "回帖仅作者可见，这个账号看不到内容（请用导演账号的 Cookie 抓取）",
}


def _excerpt(text: str, limit: int = 30) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def classify_post(
    post: Post,
    *,
    directors: Collection[str] = (),
    director_uids: Collection[int] = (),
    opening_pid: int | None = None,
    until: datetime | None = None,
) -> SignupRecord:
    """What one post of the 报名帖 is (see the module docstring)."""
    text = post.text or ""

    def record(kind: SignupKind, why: str, **kw: object) -> SignupRecord:
        return SignupRecord(
            name=post.author,
            uid=post.uid,
            pid=post.pid,
            time=post.posted_at,
            kind=kind,
            why=why,
            floor=post.floor,
            excerpt=_excerpt(text),
            **kw,  # type: ignore[arg-type]
        )

    def skip(why: str) -> SignupRecord:
        return record(SignupKind.OTHER, why, skipped=True)

    if opening_pid is not None and post.pid == opening_pid:
        return skip("报名帖正文（楼主）")
    if post.author in directors or (post.uid and post.uid in director_uids):
        return skip("导演的帖子")
    if post.state in _DROPPED_STATES:
        return skip(_DROPPED_STATES[post.state])
    if post.uid <= 0:
        return skip("匿名或账号已删除（没有 uid），无法确认是谁")
    if until is not None and post.posted_at is not None and post.posted_at > until:
        return skip(f"报名截止（{until:%m-%d %H:%M}）之后发的")
    if (m := _QUIT_STRONG.search(text)) is not None:
        return record(SignupKind.QUIT, f"含「{m.group(0)}」")
    if (m := _NEGATED.search(text)) is not None:
        return record(SignupKind.QUIT, f"含否定的「{m.group(0)}」，视为退出报名")
    signup = _SIGNUP.search(text)
    substitute = _SUBSTITUTE.search(text)
    if signup is None and substitute is None:
        if (m := _QUIT_WEAK.search(text)) is not None:
            return record(SignupKind.QUIT, f"含「{m.group(0)}」")
        return record(SignupKind.OTHER, "没有报名或退出报名的字样")
    if _QUESTION.search(text) and _SIGNUP_FIRST.search(text) is None:
        return record(
            SignupKind.OTHER,
            "是提问（含问号），不算报名；若是报名，请在游戏文件中手动加上",
        )
    sex_match = _SEX.search(text)
    sex = (sex_match.group(1) or sex_match.group(2)) if sex_match else None
    if substitute is not None and _SUBSTITUTE_TOO.search(text) is None:
        return record(
            SignupKind.SIGNUP, f"含「{substitute.group(0)}」：只报名替补", substitute=True, sex=sex
        )
    word = signup.group(0) if signup is not None else ""
    return record(SignupKind.SIGNUP, f"含「{word.strip()}」", sex=sex)


def _opening_pid(posts: Sequence[Post]) -> int | None:
    for post in posts:
        if post.floor == 1:
            return post.pid
    return None


def read_signups(
    posts: Iterable[Post],
    *,
    directors: Collection[str] = (),
    director_uids: Collection[int] = (),
    until: datetime | None = None,
) -> list[SignupRecord]:
    """Every post of the thread classified, in post order (pid)."""
    ordered = sorted(posts, key=lambda p: p.pid)
    opening = _opening_pid(ordered)
    return [
        classify_post(
            p,
            directors=directors,
            director_uids=director_uids,
            opening_pid=opening,
            until=until,
        )
        for p in ordered
    ]


def build_roster(records: Iterable[SignupRecord], seats: int) -> SignupResult:
    """The players (the first ``seats`` accounts signed up) and the 替补, honouring quits."""
    current: dict[int, Entrant] = {}  # uid -> the sign-up that counts now
    quits: list[tuple[SignupRecord, Entrant]] = []
    ignored: list[Ignored] = []
    for r in sorted(records, key=lambda r: r.pid):
        if r.skipped or r.kind is SignupKind.OTHER:
            ignored.append(Ignored(r, r.why))
            continue
        if r.kind is SignupKind.QUIT:
            removed = current.pop(r.uid, None)
            if removed is None:
                ignored.append(Ignored(r, f"{r.why}，但这个账号此前没有报名（不影响名单）"))
            else:
                quits.append((r, removed))
            continue
        held = current.get(r.uid)
        if held is not None:
            if r.substitute == held.substitute and r.sex in (None, held.sex):
                ignored.append(Ignored(r, f"重复报名：已按 pid {held.pid} 的报名计入"))
                continue
            # a later post of the same account that changes its wish (替补 only, or its sex)
            # keeps its place in the queue
            current[r.uid] = Entrant(
                held.name,
                held.uid,
                held.pid,
                held.time,
                sex=r.sex or held.sex,
                substitute=r.substitute,
                why=f"{held.why}；pid {r.pid} {r.why}",
            )
            ignored.append(Ignored(r, f"同一账号再次报名：按 pid {held.pid} 的位置，意愿改为本帖"))
            continue
        current[r.uid] = Entrant(r.name, r.uid, r.pid, r.time, r.sex, r.substitute, r.why)
    queue = sorted(current.values(), key=lambda e: e.pid)
    players: list[Entrant] = []
    substitutes: list[Entrant] = []
    for e in queue:
        if not e.substitute and len(players) < max(seats, 0):
            players.append(e)
        else:
            substitutes.append(e)
    return SignupResult(tuple(players), tuple(substitutes), tuple(quits), tuple(ignored))
