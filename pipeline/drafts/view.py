"""How a waiting draft looks to the director, wherever it is shown (``bansha drafts``, the
console, ``bansha drafts --json`` = ``GET /api/games/{id}/drafts``, the notifications): its first
line, where it goes, how urgent it is, and the JSON contract."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pipeline.drafts.model import Draft, DraftState
from pipeline.drafts.records import list_drafts
from pipeline.store import Store

if TYPE_CHECKING:
    from pipeline.game.gamefile import Game

__all__ = [
    "URGENT_SHARE",
    "URGENT_WINDOW",
    "Urgency",
    "draft_json",
    "draft_urgency",
    "drafts_json",
    "first_line",
    "not_before_note",
    "sort_drafts",
    "urgent_window",
    "where",
]

_TAGS = re.compile(r"\[/?[A-Za-z*]+(=[^\]]*)?\]")
_PART = re.compile(r"^〔\d+/\d+〕$")


def first_line(body: str, width: int = 36) -> str:
    """The first line a reader sees: tags and the part mark left out."""
    for line in body.splitlines():
        text = _TAGS.sub("", line).strip()
        if text and not _PART.match(text):
            return text if len(text) <= width else text[: width - 1] + "…"
    return ""


def where(d: Draft, game: Game | None = None) -> str:
    """Where the draft goes, for the director. A reply with no tid in a game whose threads
    bansha opens (``[forum] fid``) waits for that thread: it is drafted again with its tid."""
    if d.action == "newthread":
        opened = f"（已开出：tid={d.tid}）" if d.tid is not None else ""
        return f"在游戏的版块（[forum] fid）开新帖「{d.subject or ''}」{opened}"
    if d.action == "close":
        return f"锁定帖子 {d.tid}（锁帖后玩家不能再回复）"
    if d.tid is None and game is not None and game.forum.fid is not None:
        day = f"第{d.day}天的" if d.day is not None else ""
        return f"{day}帖子尚未开出：bansha 开帖后会写上帖子重新起草，在那之前不会发出"
    if d.tid is None:
        return "帖子未配置（游戏文件中没有对应的 tid；可复制正文手动发帖）"
    if d.action == "edit":
        return f"帖子 {d.tid}，编辑二楼（pid {d.edit_pid}）"
    return f"帖子 {d.tid}，回复"


def not_before_note(d: Draft, game: Game, now: datetime) -> str:
    """``（12-03 09:00 前不发出）`` for a waiting draft that waits for its time, else ""."""
    if not d.not_before or d.state not in (DraftState.PENDING, DraftState.APPROVED):
        return ""
    at = datetime.fromisoformat(d.not_before)
    if at <= now:
        return ""
    return f"（{_short(at, game)} 前不发出）"


#: a running tally or an opening post this close to its deadline goes first — in a game whose
#: days are short, within :data:`URGENT_SHARE` of a day's length instead (a day of 2 hours: the
#: last 30 minutes), so that not every draft of a short game is urgent
URGENT_WINDOW = timedelta(hours=3)
URGENT_SHARE = 4
_FAR = datetime.max.replace(tzinfo=None)


def _short(dt: datetime | None, game: Game) -> str:
    if dt is None:
        return "—"
    return dt.astimezone(game.game.tz).strftime("%m-%d %H:%M")


def _left(deadline: datetime, now: datetime) -> str:
    """How far ``deadline`` is: 还有 40 分钟, 还有 2 小时 5 分钟, 已过 10 分钟."""
    seconds = int((deadline - now).total_seconds())
    past = seconds < 0
    minutes = abs(seconds) // 60
    hours, minutes = divmod(minutes, 60)
    text = f"{hours} 小时 {minutes} 分钟" if hours else f"{minutes} 分钟"
    return f"已过 {text}" if past else f"还有 {text}"


# --------------------------------------------------------------------------- urgency


@dataclass(frozen=True, slots=True)
class Urgency:
    """How urgent a waiting draft is: ``deadline`` is when it must be out by."""

    urgent: bool
    deadline: datetime | None
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "urgent": self.urgent,
            "deadline": self.deadline.isoformat() if self.deadline else None,
            "note": self.note,
        }


def urgent_window(game: Game, day: int | None = None) -> timedelta:
    """How close to its deadline a draft is urgent: :data:`URGENT_WINDOW`, or a quarter of the
    day's length (``day``; else the game's shortest day) when that is shorter."""
    spans = [d.closes - d.opens for d in game.days if day is None or d.day == day]
    spans = [s for s in spans if s > timedelta(0)]
    return min([URGENT_WINDOW, *(s / URGENT_SHARE for s in spans)])


def draft_urgency(game: Game, draft: Draft, now: datetime) -> Urgency:
    """A reminder (before the close) and a result (the day is over) are urgent; a running tally,
    an opening post or a new thread is urgent within :func:`urgent_window` of its deadline."""
    if draft.state not in (DraftState.PENDING, DraftState.APPROVED) or draft.day is None:
        return Urgency(False, None, "")
    days = {d.day: d for d in game.days}
    day = days.get(draft.day)
    if day is None:
        return Urgency(False, None, "")
    if draft.kind == "day_open" and "晚尚未结算" in draft.body.split("\n", 1)[0]:
        return Urgency(False, None, "等待夜晚结算")  # it cannot be approved before
    window = urgent_window(game, draft.day)
    first_round = draft.key.split("#", 1)[0].endswith(":first")
    if draft.kind in ("reminder", "running_tally"):
        deadline = day.first_closes if first_round and day.first_closes else day.closes
        urgent = draft.kind == "reminder" or deadline - now <= window
        return Urgency(urgent and now < deadline, deadline, f"关门{_left(deadline, now)}")
    if draft.kind == "first_result":
        deadline = day.closes
        return Urgency(True, deadline, f"第一轮已结束，额外一轮关门{_left(deadline, now)}")
    if draft.kind == "result":
        after = days.get(draft.day + 1)
        if after is None:
            return Urgency(True, None, "投票已结束，结果等待公示")
        return Urgency(
            True, after.opens, f"投票已结束；第{after.day}天开门{_left(after.opens, now)}"
        )
    if draft.kind in ("newthread", "close") and draft.not_before:
        at = datetime.fromisoformat(draft.not_before)
        what = "开帖" if draft.kind == "newthread" else "锁帖"
        return Urgency(
            draft.state is DraftState.PENDING and at - now <= window,
            at,
            f"{_short(at, game)} 起{what}（{_left(at, now)}）",
        )
    if draft.kind == "day_open":
        return Urgency(
            day.opens - now <= window, day.opens, f"第{day.day}天开门{_left(day.opens, now)}"
        )
    return Urgency(False, None, "")


def sort_drafts(game: Game, drafts: Iterable[Draft], now: datetime) -> list[tuple[Draft, Urgency]]:
    """Urgent first, then by deadline, then by number."""
    rows = [(d, draft_urgency(game, d, now)) for d in drafts]
    return sorted(
        rows,
        key=lambda r: (
            not r[1].urgent,
            (
                r[1].deadline.astimezone(game.game.tz).replace(tzinfo=None)
                if r[1].deadline
                else _FAR
            ),
            r[0].id,
        ),
    )


def draft_json(game: Game, d: Draft, now: datetime) -> dict[str, Any]:
    return {
        "id": d.id,
        "kind": d.kind,
        "kind_zh": d.kind_zh,
        "day": d.day,
        "key": d.key,
        "state": d.state.value,
        "state_zh": d.state_zh,
        "title": d.title,
        "first_line": first_line(d.body),
        "tid": d.tid,
        "action": d.action,
        "edit_pid": d.edit_pid,
        "body": d.body,
        "body_hash": d.body_hash,
        "edited": d.edited,
        "previous_id": d.previous_id,
        "created_at": d.created_at,
        "updated_at": d.updated_at,
        "approved_at": d.approved_at,
        "posted_at": d.posted_at,
        "posted_pid": d.posted_pid,
        "reject_why": d.reject_why,
        "subject": d.subject,  # a new thread's subject (kind newthread)
        "not_before": d.not_before,  # not sent before (a day's opening, a vote's close)
        "role": d.role,  # the thread role of a newthread/close draft
        **draft_urgency(game, d, now).to_dict(),
    }


def drafts_json(
    store: Store,
    game: Game,
    *,
    now: datetime | None = None,
    include_superseded: bool = False,
) -> dict[str, Any]:
    """``bansha drafts GAME --json`` (``--all``: ``include_superseded``): the game, the time,
    and every draft by number with its state, its text and how urgent it is."""
    now = now if now is not None else datetime.now(game.game.tz)
    drafts = list_drafts(store, include_superseded=include_superseded)
    return {
        "game": game.game.id,
        "as_of": now.isoformat(),
        "drafts": [draft_json(game, d, now) for d in drafts],
    }
