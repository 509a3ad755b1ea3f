"""The game's threads: those the game file names and those bansha opened.

A day's threads come from two places: the tids the director wrote in ``[[days]]``, and the
threads bansha opened itself in the game's section (``[forum] fid``), which the store keeps in
``game_threads`` (:func:`pipeline.store.opened_threads`). :func:`with_opened` is the one place
they meet: the file's tid wins, a store's tid fills a role the file left empty. Every command
that loads a game for a store goes through it (the CLI's ``GameContext``, the console).

Pure: no disk, no clock; the store's rows are an argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Final

from engine.rulesets import get_ruleset
from pipeline.game.gamefile import THREAD_ROLE_TITLES, Day, Game, ThreadRole
from pipeline.store import Store

__all__ = [
    "ANONYMOUS_VOTE_THREADS",
    "CLOSE_WINDOW",
    "OpenedThread",
    "author_only",
    "author_only_roles",
    "author_only_subjects",
    "day_roles",
    "game_for_store",
    "game_wide",
    "missing_threads",
    "opened_threads",
    "thread_subject",
    "thread_tag",
    "with_opened",
]


#: a vote thread's close is drafted until this long after its close (not for old days)
CLOSE_WINDOW = timedelta(days=1)

#: The threads a rule set whose votes are anonymous (``Ruleset.public_voters`` False: zhenyan's
#: 投票为匿名投票, zhenyan.txt:37, 173) opens with Discuz's 回帖仅作者可见, so that a vote is
#: seen by its voter and the director only. m209 makes the votes public and hides only the
#: count (m209.txt:167); m135, nizhuan and tubian24 say nothing of hidden votes. The
#: 小镇树洞帖 that m135/nizhuan/zhenyan keep 仅作者可见 (m135.txt:214, nizhuan.txt:210,
#: zhenyan.txt:194) is not a thread bansha opens; zhenyan's inquiry thread is public (the
#: sheriff answers there for everyone, zhenyan.txt:147/165-168).
ANONYMOUS_VOTE_THREADS: Final = frozenset({ThreadRole.VOTE, ThreadRole.FIRST_VOTE})


@dataclass(frozen=True, slots=True)
class OpenedThread:
    """A thread bansha opened (a row of ``game_threads``)."""

    day: int
    role: ThreadRole
    tid: int
    subject: str | None = None
    draft_id: int | None = None
    opened_at: str | None = None
    how: str = "posted"  # posted | found (seen on the forum after an unclear send) | moderated


def game_wide(game: Game, role: ThreadRole) -> bool:
    """The role has one thread for the whole game (``[threads] progress = "game"``)."""
    return role is ThreadRole.PROGRESS and game.threads.progress == "game"


def author_only_roles(game: Game) -> frozenset[ThreadRole]:
    """The roles whose threads bansha opens 回帖仅作者可见: ``[threads] author_only`` when the
    game file writes it, else the vote threads of a rule set whose votes are anonymous
    (:data:`ANONYMOUS_VOTE_THREADS`)."""
    if game.threads.author_only is not None:
        return frozenset(ThreadRole(r) for r in game.threads.author_only)
    if get_ruleset(game.game.ruleset).public_voters:
        return frozenset()
    return ANONYMOUS_VOTE_THREADS


def author_only(game: Game, role: ThreadRole) -> bool:
    """Whether the thread of ``role`` is opened 回帖仅作者可见 (:func:`author_only_roles`)."""
    return role in author_only_roles(game)


def author_only_subjects(game: Game) -> frozenset[str]:
    """The subjects of the new threads bansha opens 回帖仅作者可见, for every day of the file
    (spaces as :func:`thread_subject` writes them). A subject that a public thread has too
    (a ``[threads] subject`` without ``{role}``) is left out: which thread it is cannot be
    told from the subject."""
    roles = author_only_roles(game)
    if not roles:
        return frozenset()
    hidden: set[str] = set()
    public: set[str] = set()
    for day in game.days:
        for role in day_roles(game, day):
            (hidden if role in roles else public).add(thread_subject(game, day.day, role))
    return frozenset(hidden - public)


def day_roles(game: Game, day: Day) -> list[ThreadRole]:
    """The threads the rule set has on ``day``: discussion, vote and progress (every rule set's
    text names the three: m135.txt:197/206, m209.txt:591/601, zhenyan.txt:154/177,
    nizhuan.txt:176/192, tubian24.txt:330/326), the inquiry thread where the rule set has one
    (zhenyan.txt:147), and on a 太阳[日不落] day (``first_closes`` written, m209.txt:377-378)
    the first 正午 round's vote thread (the day's ``vote`` is then the extra round's). No
    inquiry thread on a sheriff election day: its questions are the sheriff's (zhenyan.txt:147)."""
    rs = get_ruleset(game.game.ruleset)
    roles = [ThreadRole.DISCUSSION]
    if day.first_closes is not None and rs.two_vote_rounds:
        roles.append(ThreadRole.FIRST_VOTE)
    roles += [ThreadRole.VOTE, ThreadRole.PROGRESS]
    if rs.inquiry is not None and not day.sheriff_election:
        roles.append(ThreadRole.INQUIRY)  # the questions go to the sheriff: none before one
    return roles


def thread_closes(game: Game, day: Day, role: ThreadRole) -> datetime | None:
    """When the day's thread of ``role`` closes for the players (None: it is not closed): a
    vote thread at its round's close, a 太阳[日不落] day's first-round vote thread when that
    round ends (m209.txt:377-378), the rule set's inquiry thread its ``close_before`` ahead of
    the day's close (zhenyan.txt:188)."""
    if role is ThreadRole.FIRST_VOTE:
        return day.first_closes
    if role is ThreadRole.VOTE:
        return day.closes
    if role is ThreadRole.INQUIRY:
        inquiry = get_ruleset(game.game.ruleset).inquiry
        return day.closes - inquiry.close_before if inquiry is not None else None
    return None


def missing_threads(game: Game) -> dict[int, list[ThreadRole]]:
    """Day -> the threads the rule set has that day and the game has no tid for."""
    out: dict[int, list[ThreadRole]] = {}
    for day in game.days:
        missing = [r for r in day_roles(game, day) if getattr(day, r.value) is None]
        if missing:
            out[day.day] = missing
    return out


def with_opened(game: Game, opened: Iterable[OpenedThread]) -> Game:
    """``game`` with the threads bansha opened filled in where the file has no tid.

    The file's tid always wins. With ``[threads] progress = "game"`` and ``[forum] fid`` set
    (bansha manages the threads), a day without a progress thread uses the last earlier day's
    (from the file or the store): the game has one."""
    found = {(o.day, ThreadRole(o.role)): o.tid for o in opened}
    manage = game.forum.fid is not None
    if not found and not manage:
        return game
    days: list[Day] = []
    progress: int | None = None
    changed = False
    for day in sorted(game.days, key=lambda d: d.day):
        update: dict[str, int] = {}
        for role in ThreadRole:
            if getattr(day, role.value) is None and (day.day, role) in found:
                update[role.value] = found[(day.day, role)]
        now_progress = update.get("progress", day.progress)
        if (
            manage
            and now_progress is None
            and progress is not None
            and game_wide(game, ThreadRole.PROGRESS)
        ):
            update["progress"] = progress
            now_progress = progress
        if now_progress is not None:
            progress = now_progress
        if update:
            changed = True
            day = day.model_copy(update=update)
        days.append(day)
    return game.model_copy(update={"days": days}) if changed else game


_TAG_RE = re.compile(r"^\s*(\[[^\]]+\]|【[^】]+】)")


def thread_tag(game: Game) -> str:
    """``{tag}`` of a subject: ``[threads] tag``, else the game title's leading ``[..]`` or
    ``【..】`` (``[M135]『让子弹飞』`` → ``[M135]``), else the title in brackets."""
    if game.threads.tag is not None:
        return game.threads.tag
    m = _TAG_RE.match(game.game.title)
    return m.group(1) if m else f"[{game.game.title.strip()}]"


def thread_subject(game: Game, day: int, role: ThreadRole) -> str:
    """The new thread's subject from the ``[threads]`` pattern (one line)."""
    pattern = game.threads.progress_subject if game_wide(game, role) else game.threads.subject
    text = pattern.format(
        tag=thread_tag(game),
        title=game.game.title,
        ruleset=get_ruleset(game.game.ruleset).title,
        day=day,
        role=THREAD_ROLE_TITLES[role],
    )
    return " ".join(text.split())


def opened_threads(store: Store) -> list[OpenedThread]:
    """The threads bansha opened, as the store keeps them."""
    return [
        OpenedThread(
            day=int(r["day"]),
            role=ThreadRole(r["role"]),
            tid=int(r["tid"]),
            subject=r["subject"],
            draft_id=r["draft_id"],
            opened_at=r["opened_at"],
            how=r["how"],
        )
        for r in store.opened_threads()
        if r["role"] in ThreadRole.__members__.values()
    ]


def game_for_store(game: Game, store: Store) -> Game:
    """The game as every command sees it: the file's threads, and those bansha opened."""
    return with_opened(game, opened_threads(store))
