"""The threads bansha opens and closes for a day: their drafts.

For each day with ``[forum] fid`` set, every thread the rule set has that day
(:func:`pipeline.game.threads.day_roles`) and the game has no tid for (neither the file nor the
store) is drafted as a ``newthread`` draft ``[threads] draft_hours`` before the day opens, with a
subject from the ``[threads]`` pattern and a body from ``newthread.j2``; it is posted only once
approved and not before the day opens (``not_before``; the extra round's vote thread of a
太阳[日不落] day not before the first round ends). A tid that appears meanwhile (the director
wrote it in the file, or bansha opened the thread) retires the draft (:func:`retire_opened`).

Each vote thread also gets a ``close`` draft (``[threads] close_vote``): closing (locking) it,
not before its close; approved like any draft (``"draft"``), in advance by the game file
(``"auto"``), or never drafted (``"off"``). Once the forum said the director's account may not
moderate the section, no close is drafted again (:data:`NO_RIGHTS_KEY`).

Pure but for :func:`retire_opened` and :func:`no_moderator_rights` (the store).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from engine.rulesets import get_ruleset
from engine.state import Phase
from pipeline.drafts.bbcode import BBCode
from pipeline.drafts.due import _charset, draft_key
from pipeline.drafts.formatting import _base_context, _when
from pipeline.drafts.length import body_bytes
from pipeline.drafts.model import Draft, DraftAction, DraftError, DraftKind, DraftSpec
from pipeline.drafts.records import _stamp, _supersede, no_moderator_rights
from pipeline.drafts.templates import Templates
from pipeline.game.gamefile import THREAD_ROLE_TITLES, Day, Game, ThreadRole
from pipeline.game.threads import CLOSE_WINDOW, day_roles, game_wide, thread_closes, thread_subject
from pipeline.store import Store

#: Discuz refuses a subject over 80 characters (post_subject_toolong)
SUBJECT_MAX_CHARS = 80


def newthread_key(game: Game, day: int, role: ThreadRole) -> str:
    """One live draft per day and role; the game's one progress thread has one key."""
    if game_wide(game, role):
        return f"{DraftKind.NEWTHREAD.value}:game:{role.value}"
    return f"{draft_key(DraftKind.NEWTHREAD, day)}:{role.value}"


def thread_window(day: Day, role: ThreadRole) -> tuple[datetime, datetime]:
    """When the day's new thread of ``role`` may be opened: from its opening (inclusive) to its
    round's close (exclusive). On a 太阳[日不落] day the first 正午 round's vote thread opens with
    the day and its round ends at ``first_closes``; the extra round's vote thread opens then
    (m209.txt:377-378). Every other thread: the whole day."""
    if day.first_closes is not None:
        if role is ThreadRole.FIRST_VOTE:
            return day.opens, day.first_closes
        if role is ThreadRole.VOTE:
            return day.first_closes, day.closes
    return day.opens, day.closes


def _not_before(day: Day, role: ThreadRole) -> datetime:
    return thread_window(day, role)[0]


def thread_over(day: Day, role: ThreadRole, at: datetime) -> str | None:
    """Why the day's new thread of ``role`` is never opened at ``at`` (its round is over: a
    thread for a vote that has ended is no use), in Chinese; None while it may still open."""
    if at < thread_window(day, role)[1]:
        return None
    what = f"第{day.day}天的{THREAD_ROLE_TITLES[role]}"
    if role is ThreadRole.FIRST_VOTE and at < day.closes:
        return f"第{day.day}天第一轮[正午]已结束，{what}不再开出，此草稿作废"
    return f"第{day.day}天已关门，{what}不再开出，此草稿作废"


def _context(game: Game, day: Day, role: ThreadRole, subject: str) -> dict[str, Any]:
    tz = game.game.tz
    rs = get_ruleset(game.game.ruleset)
    return {
        **_base_context(game, day.day),
        "ruleset_title": rs.title,
        "subject": subject,
        "role": role.value,
        "role_title": THREAD_ROLE_TITLES[role],
        "game_wide": game_wide(game, role),
        "opens": _when(day.opens, tz),
        "closes": _when(day.closes, tz),
        "first_closes": _when(day.first_closes, tz) if day.first_closes else None,
        # the inquiry thread closes ahead of the day (zhenyan.txt:188)
        "inquiry_closes": (
            _when(inq, tz) if (inq := thread_closes(game, day, ThreadRole.INQUIRY)) else None
        ),
        "inquiry_hours": (
            f"{rs.inquiry.close_before.total_seconds() / 3600:g}" if rs.inquiry else None
        ),
        # how many questions a player may ask a day (zhenyan.txt:147, 165)
        "inquiry_limit": rs.inquiry.daily_limit if rs.inquiry else None,
        "election": bool(day.sheriff_election),
        # a rule set without 延时 (tubian24.txt:330 only 加快进程): the progress thread offers
        # 加速 alone
        "delay_allowed": rs.speed.delay_allowed,
        "rules_thread": game.game.rules_thread,
        # the rule set's 投票格式 and 改票格式 as its text writes them (lines; [] when the text
        # gives none), and where: the vote thread's first post quotes them
        "vote_format": rs.vote_format.split("\n") if rs.vote_format else [],
        "vote_format_source": BBCode(f"《{rs.title}》规则 · 投票格式") if rs.vote_format else "",
    }


def newthread_spec(game: Game, day: Day, role: ThreadRole, templates: Templates) -> DraftSpec:
    """The new-thread draft of ``day``'s thread of ``role`` as the game file has it now."""
    subject = thread_subject(game, day.day, role)
    if len(subject) > SUBJECT_MAX_CHARS:
        raise DraftError(
            f"第{day.day}天{THREAD_ROLE_TITLES[role]}的标题“{subject[:20]}…”有 "
            f"{len(subject)} 个字，超过 Discuz 的上限 {SUBJECT_MAX_CHARS}；"
            "请改短游戏文件的 [threads] subject 或 tag"
        )
    body = templates.render(DraftKind.NEWTHREAD, _context(game, day, role, subject))
    limit = game.drafts.max_post_bytes
    if body_bytes(body, _charset(game)) > limit:
        raise DraftError(
            f"第{day.day}天{THREAD_ROLE_TITLES[role]}的一楼超过论坛的长度上限 {limit} "
            "字节（新帖的一楼不能拆分）；请删减 newthread.j2"
        )
    return DraftSpec(
        DraftKind.NEWTHREAD,
        day.day,
        newthread_key(game, day.day, role),
        None,
        DraftAction.NEWTHREAD,
        None,
        f"第{day.day}天 开新帖：{THREAD_ROLE_TITLES[role]}",
        body,
        subject=subject,
        not_before=_not_before(day, role),
        role=role.value,
    )


def newthread_specs(
    game: Game, *, as_of: datetime, templates: Templates, won: Phase | None = None
) -> list[DraftSpec]:
    """The new threads due at ``as_of`` (see the section's text above). ``game``: with the store's
    threads (:func:`pipeline.game.threads.with_opened`). ``won``: the phase the engine declared a
    winner in — no day after it opens, but for the discussion thread of the day after a night
    won (its opening announces the win)."""
    if game.forum.fid is None:
        return []
    ahead = timedelta(hours=game.threads.draft_hours)
    specs: list[DraftSpec] = []
    game_wide_drafted: set[ThreadRole] = set()
    for day in sorted(game.days, key=lambda d: d.day):
        if not (day.opens - ahead <= as_of < day.closes):
            continue
        over = won is not None and Phase.day(day.day).index > won.index
        if over and won is not None and won.index < Phase.day(day.day).index - 1:
            continue
        for role in day_roles(game, day):
            if getattr(day, role.value) is not None or thread_over(day, role, as_of):
                continue
            if over and role is not ThreadRole.DISCUSSION:
                continue
            if game_wide(game, role):
                if role in game_wide_drafted:
                    continue  # the game's one progress thread: drafted with the first day
                game_wide_drafted.add(role)
            specs.append(newthread_spec(game, day, role, templates))
    return specs


def close_spec(game: Game, day: Day, role: ThreadRole, tid: int, closes: datetime) -> DraftSpec:
    """The close draft of ``day``'s thread ``tid`` of ``role``, closing at ``closes``."""
    what = THREAD_ROLE_TITLES[role]
    rs = get_ruleset(game.game.ruleset)
    body = (
        f"第{day.day}天{what}（tid={tid}）在 {_when(closes, game.game.tz)} 截止后锁帖：锁帖后玩家"
        "不能再回复；bansha 不会自动解锁。"
    )
    if role is ThreadRole.INQUIRY and rs.inquiry is not None:
        hours = rs.inquiry.close_before.total_seconds() / 3600
        body += (
            f"询问帖比讨论帖和投票帖提前 {hours:g} 小时关闭"
            f"（《{rs.title}》规则 · 行动时限，{rs.inquiry.close_rule}）。"
        )
    return DraftSpec(
        DraftKind.CLOSE,
        day.day,
        f"{draft_key(DraftKind.CLOSE, day.day)}:{role.value}",
        tid,
        DraftAction.CLOSE,
        None,
        f"第{day.day}天 锁帖：{what}",
        body,
        not_before=closes,
        role=role.value,
    )


def close_specs(game: Game, *, as_of: datetime, no_rights: bool) -> list[DraftSpec]:
    """Closing each vote thread the game knows (from the file or opened by bansha), drafted
    from ``draft_hours`` before the day opens until :data:`CLOSE_WINDOW` after its close."""
    if game.forum.fid is None or game.threads.close_vote == "off" or no_rights:
        return []
    ahead = timedelta(hours=game.threads.draft_hours)
    specs: list[DraftSpec] = []
    for day in sorted(game.days, key=lambda d: d.day):
        rounds = [(ThreadRole.FIRST_VOTE, day.first_vote, day.first_closes)]
        rounds.append((ThreadRole.VOTE, day.vote, day.closes))
        # the rule set's inquiry thread closes before the day (zhenyan.txt:188)
        inquiry_closes = thread_closes(game, day, ThreadRole.INQUIRY)
        rounds.append((ThreadRole.INQUIRY, day.inquiry, inquiry_closes))
        for role, tid, closes in rounds:
            if tid is None or closes is None:
                continue
            if not (day.opens - ahead <= as_of < closes + CLOSE_WINDOW):
                continue
            specs.append(close_spec(game, day, role, tid, closes))
    return specs


def drafted_otherwise(game: Game, draft: Mapping[str, Any], templates: Templates) -> str | None:
    """Why a new-thread or close draft (a row of ``drafts``) no longer says what the game file
    makes it say now — its subject, its first post (the day's times, the vote format, the
    signature …) or its thread and time (a close) —, in Chinese; None while it does, for any
    other draft, and for one whose day or round is gone from the file (:func:`pipeline.drafts.
    publish` sets those aside itself). ``game``: with the store's threads."""
    if draft["action"] not in (DraftAction.NEWTHREAD.value, DraftAction.CLOSE.value):
        return None
    day = next((d for d in game.days if d.day == draft["day"]), None)
    if day is None or not draft.get("role"):
        return None
    role = ThreadRole(draft["role"])
    if draft["action"] == DraftAction.NEWTHREAD.value:
        try:
            spec = newthread_spec(game, day, role, templates)
        except DraftError as exc:
            return str(exc)
        if (spec.subject, spec.body) == (draft["generated_subject"], draft["generated_body"]):
            return None
        return "它起草之后游戏文件改了这个帖子的标题或一楼（开门、截止时间，帖子名，签名……）"
    tid, closes = getattr(day, role.value, None), thread_closes(game, day, role)
    if tid is None or closes is None:
        return None
    spec = close_spec(game, day, role, tid, closes)
    if (spec.tid, spec.body) == (draft["tid"], draft["generated_body"]):
        return None
    return "它起草之后游戏文件改了要锁的帖子或它的截止时间"


def thread_drafts(
    game: Game,
    store: Store,
    *,
    as_of: datetime,
    templates: Templates,
    won: Phase | None = None,
) -> list[DraftSpec]:
    """Every new-thread and close draft due at ``as_of`` (``won``: :func:`newthread_specs`)."""
    return newthread_specs(game, as_of=as_of, templates=templates, won=won) + close_specs(
        game, as_of=as_of, no_rights=no_moderator_rights(store) is not None
    )


def retire_opened(
    store: Store, game: Game, *, now: datetime, as_of: datetime | None = None
) -> list[int]:
    """New-thread drafts still waiting whose thread has a tid now (the director wrote it in the
    game file, or bansha opened it): superseded, so no second thread is ever opened. With
    ``as_of``: also those of a day that has closed, and a 太阳[日不落] day's first-round vote
    thread once that round ended (:func:`thread_over`: a thread for a vote that is over is never
    opened; the game's one progress thread is drafted again with the next day)."""
    at = _stamp(now)
    retired: list[int] = []
    days = {d.day: d for d in game.days}
    with store.atomic():
        for row in store.query(
            "SELECT * FROM drafts WHERE kind = 'newthread' AND state IN ('pending', 'approved')"
        ):
            draft = Draft.from_row(row)
            day = days.get(draft.day) if draft.day is not None else None
            if day is None or draft.role is None:
                continue
            role = ThreadRole(draft.role)
            what = f"第{draft.day}天的{THREAD_ROLE_TITLES[role]}"
            tid = getattr(day, draft.role, None)
            if tid is not None:
                note = f"{what}已有帖子 tid={tid}，此草稿作废（不会再开一个）"
            elif as_of is None or (over := thread_over(day, role, as_of)) is None:
                continue
            else:
                note = over
            if _supersede(store, draft, at, note):
                retired.append(draft.id)
    return retired
