"""What a draft is: its kinds, states and actions (with their Chinese names), a due
draft's spec, a stored draft.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any


class DraftError(ValueError):
    """An illegal transition, a broken template, an over-long body (message in Chinese)."""


class DraftKind(StrEnum):
    RUNNING_TALLY = "running_tally"
    RESULT = "result"
    FIRST_RESULT = "first_result"  # m209 太阳[日不落]: the first 正午 round's top
    DAY_OPEN = "day_open"
    ELEVATOR = "elevator"
    CARDS = "cards"
    REMINDER = "reminder"
    INQUIRY_ANSWERS = "inquiry_answers"
    DEAL_COMMIT = "deal_commit"  # bansha deal: the commitment for the rules thread
    DEAL_REVEAL = "deal_reveal"  # bansha deal --reveal: the deal, its salt and seed
    NEWTHREAD = "newthread"  # a day's thread bansha opens in the game's section
    CLOSE = "close"  # closing (locking) a vote thread after its close


#: kinds whose text bansha writes itself: the deal's commitment and reveal must be exactly the
#: canonical text a player hashes (docs/报名与发牌.md), so no template may reshape them
UNTEMPLATED = frozenset({DraftKind.DEAL_COMMIT, DraftKind.DEAL_REVEAL, DraftKind.CLOSE})


class DraftState(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    POSTED = "posted"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"


class DraftAction(StrEnum):
    REPLY = "reply"
    EDIT = "edit"  # replace the text of ``edit_pid`` (the 电梯 on floor 2)
    NEWTHREAD = "newthread"  # a new thread in ``[forum] fid`` (``subject`` and ``body``)
    CLOSE = "close"  # close (lock) thread ``tid``; the body only says so to the director


KIND_ZH: dict[str, str] = {
    DraftKind.RUNNING_TALLY: "计票",
    DraftKind.RESULT: "投票结果",
    DraftKind.FIRST_RESULT: "第一轮结果",
    DraftKind.DAY_OPEN: "开门公示",
    DraftKind.ELEVATOR: "电梯",
    DraftKind.CARDS: "判罚",
    DraftKind.REMINDER: "投票提醒",
    DraftKind.INQUIRY_ANSWERS: "询问回答",
    DraftKind.DEAL_COMMIT: "发牌承诺",
    DraftKind.DEAL_REVEAL: "发牌公开",
    DraftKind.NEWTHREAD: "开新帖",
    DraftKind.CLOSE: "锁帖",
}


STATE_ZH: dict[str, str] = {
    DraftState.PENDING: "待批准",
    DraftState.APPROVED: "已批准",
    DraftState.POSTED: "已发出",
    DraftState.REJECTED: "已驳回",
    DraftState.SUPERSEDED: "已取代",
}


LIVE_STATES = (DraftState.PENDING, DraftState.APPROVED)


#: Kinds whose text is made from the game's state (posts, the director's records, the engine):
#: such a draft holds only while those inputs are the ones it was drafted from. The 电梯 is
#: one: who is in it and under which account follow the outs and the 替补 recorded. The
#: deal's texts, new threads and closes are made from the game file alone.
STATE_KINDS = frozenset(
    {
        DraftKind.ELEVATOR,
        DraftKind.RUNNING_TALLY,
        DraftKind.RESULT,
        DraftKind.FIRST_RESULT,
        DraftKind.DAY_OPEN,
        DraftKind.CARDS,
        DraftKind.REMINDER,
        DraftKind.INQUIRY_ANSWERS,
    }
)


@dataclass(frozen=True, slots=True)
class DraftSpec:
    """One post bansha proposes. ``key`` names what it is about (one live draft per key)."""

    kind: DraftKind
    day: int | None
    key: str
    tid: int | None  # the thread it goes to (None: not configured yet; paste by hand)
    action: DraftAction
    edit_pid: int | None
    title: str  # a label for the director (not sent as the post's subject)
    body: str  # Discuz BBCode, as it will be posted
    subject: str | None = None  # a new thread's subject (action newthread)
    not_before: datetime | None = None  # not sent before (a day's opening, a vote's close)
    role: str | None = None  # the thread role a newthread/close draft is about


@dataclass(frozen=True, slots=True)
class Draft:
    """A stored draft (a row of ``drafts``)."""

    id: int
    kind: str
    day: int | None
    key: str
    tid: int | None
    action: str
    edit_pid: int | None
    title: str
    body: str
    body_hash: str
    generated_body: str
    state: DraftState
    previous_id: int | None
    created_at: str
    updated_at: str
    approved_at: str | None
    posted_at: str | None
    posted_pid: int | None
    reject_why: str | None
    subject: str | None = None
    not_before: str | None = None
    role: str | None = None
    generated_subject: str | None = None  # as bansha generated it (the director may edit it)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Draft:
        return cls(
            id=row["id"],
            kind=row["kind"],
            day=row["day"],
            key=row["key"],
            tid=row["tid"],
            action=row["action"],
            edit_pid=row["edit_pid"],
            title=row["title"] or "",
            body=row["body"],
            body_hash=row["body_hash"],
            generated_body=row["generated_body"],
            state=DraftState(row["state"]),
            previous_id=row["previous_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            approved_at=row["approved_at"],
            posted_at=row["posted_at"],
            posted_pid=row["posted_pid"],
            reject_why=row["reject_why"],
            subject=row.get("subject"),
            not_before=row.get("not_before"),
            role=row.get("role"),
            generated_subject=row.get("generated_subject", row.get("subject")),
        )

    @property
    def edited(self) -> bool:
        return self.body != self.generated_body

    @property
    def kind_zh(self) -> str:
        return KIND_ZH.get(self.kind, self.kind)

    @property
    def state_zh(self) -> str:
        return STATE_ZH[self.state]
