"""The draft state machine: drafts saved when they changed, held or retired when stale,
approved, rejected, edited, posted, set aside.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pipeline.derive import Derivation
from pipeline.drafts.due import draft_key
from pipeline.drafts.inputs import STALE_HINT, _made_now, moved_on, note_game, waiting_mark
from pipeline.drafts.length import MAX_POST_BYTES, body_bytes
from pipeline.drafts.model import (
    LIVE_STATES,
    STATE_ZH,
    Draft,
    DraftAction,
    DraftError,
    DraftKind,
    DraftSpec,
    DraftState,
)
from pipeline.drafts.newthreads import SUBJECT_MAX_CHARS, drafted_otherwise
from pipeline.drafts.records import (
    FIRST_ROUND_KEY,
    _event,
    _hash,
    _iso_or_none,
    _latest,
    _stamp,
    _supersede,
    _unchanged,
    get_draft,
    maybe_on_the_forum,
)
from pipeline.drafts.templates import load_templates
from pipeline.game.gamefile import Game
from pipeline.game.threads import game_for_store as with_store_threads
from pipeline.store import Store


def _base_key(key: str) -> str:
    return key.split("#", 1)[0]


def save_drafts(store: Store, specs: Iterable[DraftSpec], *, now: datetime) -> list[int]:
    """Store the drafts whose text changed; return the new drafts' ids.

    A spec whose body equals the latest draft of its key (as bansha generated it) drafts nothing,
    whatever that draft's state. A new draft supersedes the pending or approved drafts of its key
    (and, when a split changed, the parts of the same draft it no longer has). A posted draft is
    never changed. All of it in one transaction.
    """
    at = _stamp(now)
    specs = list(specs)
    created: list[int] = []
    with store.atomic():
        touched_bases: dict[str, set[str]] = {}
        for spec in specs:
            touched_bases.setdefault(_base_key(spec.key), set()).add(spec.key)
        changed_bases: set[str] = set()
        for spec in specs:
            latest = _latest(store, spec.key)
            if latest is not None and _unchanged(latest, spec):
                continue
            if _sent_unseen(store, spec.key):
                continue  # drafted again once the publisher has looked for it in the thread
            row = {
                "kind": spec.kind.value,
                "day": spec.day,
                "key": spec.key,
                "tid": spec.tid,
                "action": spec.action.value,
                "edit_pid": spec.edit_pid,
                "title": spec.title,
                "body": spec.body,
                "body_hash": _hash(spec.body),
                "generated_body": spec.body,
                "state": DraftState.PENDING.value,
                "previous_id": latest.id if latest is not None else None,
                "created_at": at,
                "updated_at": at,
                "subject": spec.subject,
                "generated_subject": spec.subject,
                "not_before": _iso_or_none(spec.not_before),
                "role": spec.role,
            }
            cur = store.execute(
                f"INSERT INTO drafts({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                list(row.values()),
            )
            new_id = int(cur.lastrowid or 0)
            _event(store, new_id, at, None, DraftState.PENDING.value, "生成")
            _made_now(store, new_id, spec.kind)
            for old in store.query(
                "SELECT * FROM drafts WHERE key = ? AND id != ? AND state IN "
                "('pending', 'approved')",
                [spec.key, new_id],
            ):
                _supersede(store, Draft.from_row(old), at, f"被第 {new_id} 号草稿取代")
            created.append(new_id)
            changed_bases.add(_base_key(spec.key))
        for base in changed_bases:
            keep = touched_bases[base]
            for old in store.query(
                "SELECT * FROM drafts WHERE (key = ? OR key LIKE ?) AND state IN "
                "('pending', 'approved')",
                [base, base + "#%"],
            ):
                if old["key"] not in keep:
                    _supersede(store, Draft.from_row(old), at, "草稿的分段改变，此段作废")
    return created


def _sent_unseen(store: Store, key: str) -> bool:
    """A waiting draft of ``key`` may be in the thread already (:func:`maybe_on_the_forum`)."""
    return any(
        maybe_on_the_forum(store, int(row["id"]))
        for row in store.query(
            "SELECT id FROM drafts WHERE key = ? AND state IN ('pending', 'approved')", [key]
        )
    )


def hold_stale(store: Store, derivation: Derivation, *, now: datetime) -> list[int]:
    """A day resolved on another count than today's (derive.warnings): its waiting result and
    the next day's waiting opening no longer hold — superseded until the director resolves
    the day again (then they are drafted anew)."""
    at = _stamp(now)
    held: list[int] = []
    keys = [draft_key(DraftKind.RESULT, n) for n in derivation.stale_days]
    keys += [draft_key(DraftKind.DAY_OPEN, n + 1) for n in derivation.stale_days]
    if not keys:
        return held
    with store.atomic():
        for key in keys:
            for row in store.query(
                "SELECT * FROM drafts WHERE (key = ? OR key LIKE ?) AND state IN "
                "('pending', 'approved')",
                [key, key + "#%"],
            ):
                draft = Draft.from_row(row)
                if _supersede(
                    store, draft, at, "当天的引擎结算与当前计票不一致，请重新结算后再起草"
                ):
                    held.append(draft.id)
    return held


def retire_uncarded(
    store: Store,
    game: Game,
    specs: Sequence[DraftSpec],
    *,
    as_of: datetime,
    unsettled: Collection[int] = (),
    derived: Collection[int] = (),
    now: datetime,
) -> list[int]:
    """A waiting cards 公示 of a closed, settled day that drafting no longer produces (every card
    of that day was revoked, ``bansha card revoke``): superseded, so a revoked card never goes
    out. (A changed text is a new draft that supersedes the old one: :func:`save_drafts`.)"""
    at = _stamp(now)
    due = {_base_key(s.key) for s in specs if s.kind is DraftKind.CARDS}
    settled = {
        d.day
        for d in game.days
        if as_of >= d.closes and d.day not in unsettled and d.day in derived
    }
    retired: list[int] = []
    with store.atomic():
        for row in store.query(
            "SELECT * FROM drafts WHERE kind = 'cards' AND state IN ('pending', 'approved')"
        ):
            draft = Draft.from_row(row)
            if draft.day not in settled or _base_key(draft.key) in due:
                continue
            if _supersede(store, draft, at, "这一天的牌已全部撤销，此公示草稿作废"):
                retired.append(draft.id)
    return retired


def retire_stale(store: Store, game: Game, *, as_of: datetime, now: datetime) -> list[int]:
    """Running tallies and reminders still waiting when their day has closed: superseded.

    On a 太阳[日不落] day a running tally drafted during the first 正午 round is stale once
    that round ended (m209.txt:377-378): it counts a vote that is over."""
    at = _stamp(now)
    closes = {d.day: d.closes for d in game.days}
    first = {d.day: d.first_closes for d in game.days if d.first_closes is not None}
    retired = []
    with store.atomic():
        for row in store.query(
            "SELECT * FROM drafts WHERE kind IN ('running_tally', 'reminder') AND state IN "
            "('pending', 'approved')"
        ):
            draft = Draft.from_row(row)
            end = closes.get(draft.day) if draft.day is not None else None
            if end is not None and as_of >= end:
                if _supersede(store, draft, at, "投票已截止，此草稿已过时"):
                    retired.append(draft.id)
                continue
            first_end = first.get(draft.day) if draft.day is not None else None
            if (
                first_end is not None
                and as_of >= first_end
                and _base_key(draft.key).endswith(FIRST_ROUND_KEY)
                and _supersede(store, draft, at, "第一轮[正午]已结束，此计票草稿已过时")
            ):
                retired.append(draft.id)
    return retired


def _refuse(draft: Draft, doing: str) -> DraftError:
    why = {
        DraftState.APPROVED: "已经批准过了",
        DraftState.POSTED: (
            f"已于 {draft.posted_at} 发出（pid {draft.posted_pid}），发出的草稿不能再改动"
        ),
        DraftState.REJECTED: f"已被驳回（{draft.reject_why or '未写理由'}）",
        DraftState.SUPERSEDED: "已被更新的草稿取代，请处理最新的一稿（bansha drafts 查看）",
        DraftState.PENDING: "还在等待批准",
    }[draft.state]
    return DraftError(f"不能{doing}第 {draft.id} 号草稿：它{why}")


def _move(
    store: Store,
    draft: Draft,
    at: str,
    sql: str,
    params: Sequence[Any],
    *,
    doing: str,
    to: DraftState,
    note: str,
) -> None:
    """Run one guarded state change of ``draft`` and log it; refuse (in Chinese, saying why)
    when the guard matched no row because the draft is no longer in a state that allows it."""
    cur = store.execute(sql, params)
    if not cur.rowcount:
        raise _refuse(draft, doing)
    _event(store, draft.id, at, draft.state.value, to.value, note)


def approve(
    store: Store,
    draft_id: int,
    now: datetime,
    *,
    note: str = "导演批准",
    game: Game | None = None,
    templates_dir: Path | str | None = None,
) -> Draft:
    """pending -> approved. Only an approved draft is ever posted. ``note``: who approved it
    (the director; or the game file's ``[threads] close_vote = "auto"``, the opening thread's
    approval for its 电梯), in the draft's event. A draft made from inputs that have since
    moved on (:func:`moved_on`) is refused: it is drafted again first. ``game``: the game file
    as the director has it now (:func:`note_game`: a file edited since the draft was made is
    such a change; a new thread or a close it now drafts otherwise — read with the templates
    of ``templates_dir`` — is refused too, :func:`pipeline.drafts.newthreads.drafted_otherwise`)."""
    at = _stamp(now)
    with store.atomic():
        if game is not None:
            note_game(store, game)
        draft = get_draft(store, draft_id)
        stale = moved_on(store, draft)
        if stale is not None and draft.state is DraftState.PENDING:
            raise DraftError(f"第 {draft_id} 号草稿不能批准：{stale}")
        waits = waiting_mark(draft.body) if draft.kind == DraftKind.DAY_OPEN else None
        if waits is None and game is not None and draft.state is DraftState.PENDING:
            waits = _drafted_otherwise(store, game, draft, templates_dir)
        if waits is not None:
            raise DraftError(f"第 {draft_id} 号草稿不能批准：{waits}")
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET state = 'approved', approved_at = ?, updated_at = ? "
            "WHERE id = ? AND state = 'pending'",
            [at, at, draft_id],
            doing="批准",
            to=DraftState.APPROVED,
            note=note,
        )
    return get_draft(store, draft_id)


def _drafted_otherwise(
    store: Store, game: Game, draft: Draft, templates_dir: Path | str | None
) -> str | None:
    """Why a waiting new thread or close no longer says what the game file makes it say."""
    if draft.action not in (DraftAction.NEWTHREAD, DraftAction.CLOSE):
        return None
    row = next(iter(store.query("SELECT * FROM drafts WHERE id = ?", [draft.id])))
    why = drafted_otherwise(with_store_threads(game, store), row, load_templates(templates_dir))
    return None if why is None else f"{why}；{STALE_HINT}"


def reject(store: Store, draft_id: int, why: str, now: datetime) -> Draft:
    """pending or approved -> rejected, with the director's reason."""
    at = _stamp(now)
    why = why.strip()
    if not why:
        raise DraftError("驳回草稿必须写明理由（--why）")
    with store.atomic():
        draft = get_draft(store, draft_id)
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET state = 'rejected', reject_why = ?, updated_at = ? "
            "WHERE id = ? AND state IN ('pending', 'approved')",
            [why, at, draft_id],
            doing="驳回",
            to=DraftState.REJECTED,
            note=why,
        )
    return get_draft(store, draft_id)


def reopen(store: Store, draft_id: int, why: str, now: datetime, *, by: str) -> Draft:
    """Take the director's decision on a draft back (``bansha undo draft``): approved or
    rejected -> pending, with ``why`` in the draft's event and an audit line (``by``: 命令行 or
    控制台) among the undos. Refused, saying why, for a draft that is posted (it is on the
    forum), that may be on the forum already (a send whose answer never came:
    :func:`maybe_on_the_forum`), that was rejected and has a newer draft since (that one is
    what bansha drafts now), or that has no decision to take back."""
    at = _stamp(now)
    why = why.strip()
    if not why:
        raise DraftError("撤销必须写明理由（--why）")
    with store.atomic():
        draft = get_draft(store, draft_id)
        label = f"第 {draft_id} 号草稿（{draft.title}）"
        if draft.state is DraftState.POSTED:
            raise DraftError(
                f"{label}已经发出，不能撤销；要更正请到论坛上编辑那一帖，或另起一份草稿"
            )
        if draft.state not in (DraftState.APPROVED, DraftState.REJECTED):
            state = STATE_ZH.get(draft.state.value, draft.state.value)
            raise DraftError(f"{label}的状态是「{state}」，没有可以撤销的批准或驳回")
        if maybe_on_the_forum(store, draft_id):
            raise DraftError(
                f"{label}可能已经发出（上次发送没有收到论坛的回答）：先运行 bansha publish，"
                "让 bansha 到帖子里找它"
            )
        newer = store.execute(
            "SELECT id FROM drafts WHERE key = ? AND id > ? ORDER BY id DESC LIMIT 1",
            [draft.key, draft_id],
        ).fetchone()
        if draft.state is DraftState.REJECTED and newer is not None:
            raise DraftError(f"{label}之后已经有第 {newer[0]} 号草稿，请处理那一份")
        decided = "批准" if draft.state is DraftState.APPROVED else f"驳回（{draft.reject_why}）"
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET state = 'pending', approved_at = NULL, reject_why = NULL, "
            "updated_at = ? WHERE id = ? AND state IN ('approved', 'rejected')",
            [at, draft_id],
            doing="撤销",
            to=DraftState.PENDING,
            note=f"{by}撤销{decided}：{why}",
        )
        store.execute(
            "INSERT INTO journal_revocations(kind, ref, what, revoked_at, revoked_by, reason) "
            "VALUES ('draft', ?, ?, ?, ?, ?)",
            [str(draft_id), f"{label}的{decided}", at, by, why],
        )
    return get_draft(store, draft_id)


def ensure_editable(draft: Draft) -> None:
    """Raise :class:`DraftError` unless the draft is still waiting (pending or approved)."""
    if draft.state not in LIVE_STATES:
        raise _refuse(draft, "修改")


def edit(
    store: Store,
    draft_id: int,
    new_body: str,
    now: datetime,
    *,
    charset: str = "utf-8",
    limit: int = MAX_POST_BYTES,
) -> Draft:
    """Replace a waiting draft's text. An approved draft goes back to pending (the director
    approves what will be posted); the generated text stays in ``generated_body``."""
    at = _stamp(now)
    body = new_body.replace("\r\n", "\n").strip("\n")
    if not body.strip():
        raise DraftError("草稿正文不能为空（不想发出请用 bansha drafts reject）")
    size = body_bytes(body, charset)
    if size > limit:
        raise DraftError(
            f"修改后的正文有 {size} 字节，超过论坛的长度上限 {limit} 字节；请删减后再保存"
        )
    with store.atomic():
        draft = get_draft(store, draft_id)
        ensure_editable(draft)
        if body == draft.body:
            return draft
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET body = ?, body_hash = ?, state = 'pending', approved_at = NULL, "
            "updated_at = ? WHERE id = ? AND state IN ('pending', 'approved')",
            [body, _hash(body), at, draft_id],
            doing="修改",
            to=DraftState.PENDING,
            note="导演修改" + ("，需重新批准" if draft.state is DraftState.APPROVED else ""),
        )
    return get_draft(store, draft_id)


def edit_subject(store: Store, draft_id: int, subject: str, now: datetime) -> Draft:
    """Replace a waiting new-thread draft's subject (one line, at most
    :data:`SUBJECT_MAX_CHARS` characters). An approved draft goes back to pending; the
    generated subject stays in ``generated_subject``. Refused while a send of it may be on
    the forum under the old subject (an attempt whose outcome is unknown, or waiting for a
    moderator): bansha finds that thread by its subject."""
    at = _stamp(now)
    text = " ".join(subject.split())
    if not text:
        raise DraftError("新帖的标题不能为空")
    if len(text) > SUBJECT_MAX_CHARS:
        raise DraftError(f"标题有 {len(text)} 个字，超过 Discuz 的上限 {SUBJECT_MAX_CHARS}；请改短")
    with store.atomic():
        draft = get_draft(store, draft_id)
        if draft.action != DraftAction.NEWTHREAD.value:
            raise DraftError(f"第 {draft.id} 号草稿不是开新帖的草稿，没有标题可改")
        ensure_editable(draft)
        if text == draft.subject:
            return draft
        unsure = store.execute(
            "SELECT id FROM post_attempts WHERE draft_id = ? AND (outcome IS NULL "
            "OR outcome = 'pending_moderation') LIMIT 1",
            [draft_id],
        ).fetchone()
        if unsure is not None:
            raise DraftError(
                f"第 {draft.id} 号草稿上次开帖的结果还不确定（论坛上可能已有标题为"
                f"「{draft.subject}」的帖子），现在不能改标题；请先到版块里查看"
            )
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET subject = ?, state = 'pending', approved_at = NULL, "
            "updated_at = ? WHERE id = ? AND state IN ('pending', 'approved')",
            [text, at, draft_id],
            doing="修改",
            to=DraftState.PENDING,
            note=f"导演修改标题：「{draft.subject or ''}」→「{text}」"
            + ("，需重新批准" if draft.state is DraftState.APPROVED else ""),
        )
    return get_draft(store, draft_id)


def mark_posted(store: Store, draft_id: int, *, pid: int | None, now: datetime) -> Draft:
    """approved -> posted (for the poster, once the post is seen in the thread)."""
    at = _stamp(now)
    with store.atomic():
        draft = get_draft(store, draft_id)
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET state = 'posted', posted_at = ?, posted_pid = ?, updated_at = ? "
            "WHERE id = ? AND state = 'approved'",
            [at, pid, at, draft_id],
            doing="发出",
            to=DraftState.POSTED,
            note=f"pid {pid}",
        )
    return get_draft(store, draft_id)


def set_aside(store: Store, draft_id: int, note: str, now: datetime) -> bool:
    """A waiting draft that must never go out set aside (superseded) with ``note`` as its event,
    as :func:`retire_opened` does; False when it was no longer waiting."""
    with store.atomic():
        rows = store.query("SELECT * FROM drafts WHERE id = ?", [draft_id])
        if not rows or rows[0]["state"] not in LIVE_STATES:
            return False
        return _supersede(store, Draft.from_row(rows[0]), _stamp(now), note)


def elevator_note(thread_draft_id: int, day: int | None) -> str:
    """The event of a 电梯 approved by its discussion thread's approval."""
    return (
        f"随第 {thread_draft_id} 号草稿（第{day}天讨论帖）一并批准：bansha 开讨论帖后紧接着发电梯，"
        "让它在二楼"
    )
