"""Drafts in the store: read, listed, their events; the writes every state change uses."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any

from pipeline.drafts.model import LIVE_STATES, Draft, DraftError, DraftSpec, DraftState
from pipeline.store import Store

#: ``meta``: the forum said the director's account may not close threads in the section
#: (JSON: when, the forum's words). Set once by the publisher; no close is drafted after it.
NO_RIGHTS_KEY = "threads:no_moderator_rights"


def no_moderator_rights(store: Store) -> dict[str, Any] | None:
    """What the forum said when the director's account could not close a thread, if it did."""
    if store.get_meta(NO_RIGHTS_KEY) is None:
        return None
    return store.get_meta_json(NO_RIGHTS_KEY) or {"message": ""}


def _hash(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _iso_or_none(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


def _stamp(now: datetime) -> str:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"时间缺少时区：{now.isoformat()}")
    return now.isoformat()


def get_draft(store: Store, draft_id: int) -> Draft:
    rows = store.query("SELECT * FROM drafts WHERE id = ?", [draft_id])
    if not rows:
        raise DraftError(f"没有编号为 {draft_id} 的草稿（用 bansha drafts 查看）")
    return Draft.from_row(rows[0])


def list_drafts(store: Store, *, include_superseded: bool = False) -> list[Draft]:
    sql = "SELECT * FROM drafts"
    if not include_superseded:
        sql += " WHERE state != 'superseded'"
    return [Draft.from_row(r) for r in store.query(sql + " ORDER BY id")]


def draft_events(store: Store, draft_id: int) -> list[dict[str, Any]]:
    return list(
        store.query("SELECT * FROM draft_events WHERE draft_id = ? ORDER BY id", [draft_id])
    )


def _latest(store: Store, key: str) -> Draft | None:
    rows = store.query("SELECT * FROM drafts WHERE key = ? ORDER BY id DESC LIMIT 1", [key])
    return Draft.from_row(rows[0]) if rows else None


def posted_before(store: Store, draft: Draft) -> Draft | None:
    """The draft of the same post already on the forum, when ``draft`` (a reply still waiting)
    would be a second post about the same thing — a result drafted again after it went out
    (a record, an undo or a resolution changed it): the latest posted draft of its key."""
    if draft.state not in LIVE_STATES or draft.action != "reply":
        return None
    rows = store.query(
        "SELECT * FROM drafts WHERE key = ? AND id < ? AND state = 'posted' "
        "ORDER BY id DESC LIMIT 1",
        [draft.key, draft.id],
    )
    return Draft.from_row(rows[0]) if rows else None


def _event(
    store: Store, draft_id: int, at: str, from_state: str | None, to_state: str, note: str
) -> None:
    store.execute(
        "INSERT INTO draft_events(draft_id, at, from_state, to_state, note) VALUES (?, ?, ?, ?, ?)",
        [draft_id, at, from_state, to_state, note],
    )


#: The outcomes of a send after which the reply (or edit) may be in the thread although bansha
#: did not see it land: no answer yet (a lost answer, a crash, a sender still at it), a captcha
#: handed to the director, a reply the forum holds for moderation
#: (:data:`pipeline.discuz.poster.UNSURE_OUTCOMES` and NULL).
MAYBE_SENT_SQL = (
    "SELECT 1 FROM post_attempts a JOIN drafts d ON d.id = a.draft_id "
    "WHERE a.draft_id = ? AND d.action IN ('reply', 'edit') "
    "AND (a.outcome IS NULL OR a.outcome IN ('captcha', 'pending_moderation')) LIMIT 1"
)


def maybe_on_the_forum(store: Store, draft_id: int) -> bool:
    """The draft's reply or edit may be in the thread already (:data:`MAYBE_SENT_SQL`): it is
    neither superseded nor drafted again until the publisher has looked for it there — else
    its redraft, approved and sent, would be a second copy."""
    return store.execute(MAYBE_SENT_SQL, [draft_id]).fetchone() is not None


def _supersede(store: Store, draft: Draft, at: str, note: str) -> bool:
    """Supersede a waiting draft with ``note`` as its event; False when it was no longer
    waiting, or when it may be on the forum already (:func:`maybe_on_the_forum`: it stays
    approved, for the publisher to look for)."""
    if maybe_on_the_forum(store, draft.id):
        return False
    cur = store.execute(
        "UPDATE drafts SET state = 'superseded', updated_at = ? "
        "WHERE id = ? AND state IN ('pending', 'approved')",
        [at, draft.id],
    )
    if cur.rowcount:
        _event(store, draft.id, at, draft.state.value, DraftState.SUPERSEDED.value, note)
    return bool(cur.rowcount)


def _unchanged(latest: Draft, spec: DraftSpec) -> bool:
    """Nothing new to draft: same generated text for the same thread (and, for a draft still
    waiting, the same action: a 电梯 reply becomes an edit once floor 2 is known)."""
    if latest.state is DraftState.SUPERSEDED:
        return False  # no live draft of this key is left: draft it again
    if latest.generated_body != spec.body or latest.tid != spec.tid:
        return False
    generated_subject = latest.generated_subject if latest.generated_subject else latest.subject
    if generated_subject != spec.subject or latest.not_before != _iso_or_none(spec.not_before):
        return False  # (a subject the director edited is kept: the generated one is compared)
    if latest.state in LIVE_STATES:
        return latest.action == spec.action.value and latest.edit_pid == spec.edit_pid
    return True


#: The key suffix of a 太阳[日不落] day's first-round running tally.
FIRST_ROUND_KEY = ":first"
