"""Publishing approved drafts exactly once (the drafts' side of posting; the forum session is
:class:`pipeline.discuz.poster.Poster`).

:func:`publish_approved` is the exactly-once protocol over the store's ``post_attempts``: the
intent is committed before the POST, the pid and the draft's ``posted`` state in one
transaction after it; an intent without an outcome (a crash in between) makes the next run look
for the post in the thread (by :func:`parsers.reply.draft_fingerprint`) before sending again.
Outcomes written to ``post_attempts.outcome``: ``posted``, ``found`` (seen in the thread after an
unclear send), ``manual`` (the director posted it by hand), ``pending_moderation``, ``captcha``,
``refused`` (the forum said no for good: not retried until the draft changes or the director
asks), ``failed`` (nothing was stored; retried next time); NULL while the outcome is unknown.

Only one sender at a time: :func:`publish_approved` and :func:`record_manual_post` run holding
the game's lock (:func:`pipeline.store.lock.cycle_lock`, the one ``bansha cycle`` holds; they
take it when the caller does not hold it already), so an open attempt seen while holding it is
what a crash left behind, and is looked for in the thread. An attempt that appears after a run
read the draft's attempts was started by another sender that did not take the lock: the intent
is then refused (:class:`SendInFlight`) rather than sending a second copy. Every read that decides a
write is repeated inside the write's transaction (``BEGIN IMMEDIATE``, :meth:`Store.atomic`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from parsers.records import Post
from parsers.reply import ReplyOutcome, draft_fingerprint, post_fingerprint
from pipeline.discuz.poster import (
    STATE_ZH,
    UNSURE_OUTCOMES,
    CaptchaRequired,
    LoginFailed,
    ManualPostMismatch,
    NotApproved,
    NotLoggedIn,
    Poster,
    PostError,
    PostRefused,
    SenderBusy,
    SendInFlight,
    UncertainSend,
    WrongAccount,
)
from pipeline.drafts import KIND_ZH
from pipeline.game.gamefile import Game
from pipeline.store import Store, StoreError

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- publishing


@dataclass(frozen=True, slots=True)
class PublishResult:
    """What happened to one approved draft in one run."""

    draft_id: int
    kind: str
    day: int | None
    tid: int | None
    status: str  # posted | found | manual | pending_moderation | captcha | refused | failed |
    #             uncertain | waiting | skipped
    pid: int | None = None
    url: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        """The forum has the post (or will show it once a moderator approves it)."""
        return self.status in ("posted", "found", "manual", "pending_moderation")

    def line(self) -> str:
        """One line for the director."""
        what = f"草稿 #{self.draft_id}（{KIND_ZH.get(self.kind, self.kind)}" + (
            f"，第{self.day}天）" if self.day is not None else "）"
        )
        where = f"帖子 tid={self.tid}" if self.tid is not None else "帖子"
        if self.status in ("posted", "found", "manual"):
            verb = {"posted": "已发出", "found": "已在帖子中找到", "manual": "已登记"}[self.status]
            tail = f"：{self.url}" if self.url else ""
            return f"{what}{verb} → {where} pid={self.pid}{tail}"
        return f"{what}未发出：{self.message}"


def _row(store: Store, draft_id: int) -> dict[str, Any] | None:
    rows = list(store.db.query("SELECT * FROM drafts WHERE id = ?", [draft_id]))
    return rows[0] if rows else None


def _attempts(store: Store, draft_id: int, body_hash: str) -> list[dict[str, Any]]:
    return list(
        store.db.query(
            "SELECT * FROM post_attempts WHERE draft_id = ? AND body_hash = ? ORDER BY id",
            [draft_id, body_hash],
        )
    )


def _iso(at: datetime) -> str:
    return at.isoformat()


def _finish(
    store: Store,
    attempt_id: int,
    at: datetime,
    outcome: str,
    *,
    pid: int | None = None,
    detail: str | None = None,
) -> None:
    with store.atomic():
        store.db.execute(
            "UPDATE post_attempts SET finished_at = ?, outcome = ?, pid = COALESCE(?, pid), "
            "detail = COALESCE(?, detail) WHERE id = ?",
            [_iso(at), outcome, pid, detail, attempt_id],
        )


def _note(store: Store, attempt_id: int, detail: str) -> None:
    with store.atomic():
        store.db.execute("UPDATE post_attempts SET detail = ? WHERE id = ?", [detail, attempt_id])


def _mark_posted(
    store: Store,
    draft: dict[str, Any],
    *,
    attempt_ids: Sequence[int],
    outcome: str,
    pid: int,
    at: datetime,
    note: str,
) -> None:
    """Close the attempts, set the draft ``posted`` and write its event: one transaction."""
    with store.atomic():
        for attempt_id in attempt_ids:
            store.db.execute(
                "UPDATE post_attempts SET finished_at = ?, outcome = ?, pid = ? WHERE id = ?",
                [_iso(at), outcome, pid, attempt_id],
            )
        current = store.db.execute(
            "SELECT state, body_hash FROM drafts WHERE id = ?", [draft["id"]]
        ).fetchone()
        state, body_hash = current if current else (None, None)
        if body_hash == draft["body_hash"] and state != "posted":
            store.db.execute(
                "UPDATE drafts SET state = 'posted', posted_pid = ?, posted_at = ?, "
                "updated_at = ? WHERE id = ?",
                [pid, _iso(at), _iso(at), draft["id"]],
            )
            store.db.execute(
                "INSERT INTO draft_events(draft_id, at, from_state, to_state, note) "
                "VALUES (?, ?, ?, 'posted', ?)",
                [draft["id"], _iso(at), state, note],
            )
        else:  # the director changed the draft while it was being sent: keep their version
            log.warning("草稿 #%s 发送期间被修改；已发出的是修改前批准的版本", draft["id"])
            store.db.execute(
                "INSERT INTO draft_events(draft_id, at, from_state, to_state, note) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    draft["id"],
                    _iso(at),
                    state,
                    state or "approved",
                    f"修改前批准的版本已发出：pid={pid}；当前版本尚未发出",
                ],
            )


def _last_attempt_id(store: Store, draft_id: int) -> int:
    row = store.db.execute(
        "SELECT COALESCE(MAX(id), 0) FROM post_attempts WHERE draft_id = ?", [draft_id]
    ).fetchone()
    return int(row[0])


def _record_intent(
    store: Store, draft_id: int, body_hash: str, at: datetime, *, seen_upto: int
) -> int:
    """Commit "about to send" — only for a draft that is approved with this very text, and
    that no other sender is sending right now.

    ``seen_upto`` is the last attempt of the draft this run had read (and resolved) before it
    looked at the forum: an attempt still open after it was started since by another sender,
    which may be sending this minute — refused (:class:`SendInFlight`). Read and insert are one
    ``BEGIN IMMEDIATE`` transaction, so two senders cannot both pass.
    """
    with store.atomic():
        row = _row(store, draft_id)
        if row is None or row["state"] != "approved" or row["body_hash"] != body_hash:
            raise NotApproved(_not_approved_message(draft_id, row))
        other = store.db.execute(
            "SELECT id, started_at FROM post_attempts WHERE draft_id = ? AND id > ? "
            "AND finished_at IS NULL AND outcome IS NULL ORDER BY id LIMIT 1",
            [draft_id, seen_upto],
        ).fetchone()
        if other is not None:
            raise SendInFlight(
                f"草稿 #{draft_id} 正由另一个 bansha 进程发送（发送记录 #{other[0]}，"
                f"开始于 {other[1]}），这次没有发送，以免发出两份"
            )
        cur = store.db.execute(
            "INSERT INTO post_attempts(draft_id, body_hash, started_at) VALUES (?, ?, ?)",
            [draft_id, body_hash, _iso(at)],
        )
        return int(cur.lastrowid or 0)


def _not_approved_message(draft_id: int, row: dict[str, Any] | None) -> str:
    if row is None:
        return f"没有编号为 {draft_id} 的草稿"
    if row["state"] == "approved":
        return f"草稿 #{draft_id} 在发送前被修改过，需要重新批准，没有发送"
    return (
        f"草稿 #{draft_id} 的状态是「{STATE_ZH.get(row['state'], row['state'])}」，"
        "只有已批准的草稿才会发出"
    )


def assert_approved(store: Store, draft_id: int, body_hash: str) -> None:
    """Raise :class:`NotApproved` unless the stored draft is approved with this exact text."""
    row = _row(store, draft_id)
    if row is None or row["state"] != "approved" or row["body_hash"] != body_hash:
        raise NotApproved(_not_approved_message(draft_id, row))


_PART_KEY = re.compile(r"^(.*)#(\d{1,4})$")


def _earlier_part_pending(store: Store, draft: dict[str, Any]) -> int | None:
    """For part n>1 of a split draft (key ``…#n``): the number of the earlier part that is not
    posted yet, so the parts reach the thread in order."""
    match = _PART_KEY.match(draft["key"] or "")
    if match is None or int(match.group(2)) <= 1:
        return None
    earlier = f"{match.group(1)}#{int(match.group(2)) - 1}"
    row = store.db.execute(
        "SELECT state FROM drafts WHERE key = ? AND state NOT IN ('superseded', 'rejected') "
        "ORDER BY id DESC LIMIT 1",
        [earlier],
    ).fetchone()
    if row is not None and row[0] != "posted":
        return int(match.group(2)) - 1
    return None


@contextmanager
def sender_lock(store: Store, *, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the game's lock (:func:`pipeline.store.lock.cycle_lock` on the store) while sending.

    A thread that holds it already (``bansha cycle``, ``bansha publish``) goes on; otherwise it
    is taken here, waiting up to ``wait_s`` seconds, and :class:`SenderBusy` says, in Chinese,
    that another process is posting for this game.
    """
    # imported when used, never at load time, so the two never import each other in a loop
    from pipeline.store.lock import CycleLocked, cycle_lock, holds_cycle_lock

    with ExitStack() as stack:
        if not holds_cycle_lock(store.path):
            try:
                stack.enter_context(cycle_lock(store.path, wait_s=wait_s))
            except CycleLocked as exc:
                waited = f"等了 {wait_s:.0f} 秒仍未结束，" if wait_s >= 1 else ""
                raise SenderBusy(
                    "另一个 bansha 进程（cycle 或 post）正在给这局游戏发帖"
                    f"（锁文件 {store.path}.lock），{waited}这次没有发帖，也没有登记；"
                    "它会发出已批准的草稿，稍后用 bansha drafts 查看，需要时再运行一次"
                ) from exc
        yield


def publish_approved(
    store: Store,
    game: Game,
    poster: Poster,
    *,
    now: datetime,
    clock: Callable[[], datetime] | None = None,
    ids: Collection[int] | None = None,
    lock_wait_s: float = 0.0,
) -> list[PublishResult]:
    """Post every approved draft (oldest first), each exactly once; return what happened.

    ``now`` is when the run started; ``clock`` stamps each record (default: ``now``; give a
    real clock so every attempt carries its own time). ``ids`` limits the run to those drafts
    and means the director asked for them by hand: a draft the forum refused before, or one
    that met a captcha, is tried again only then.

    Runs holding the game's lock (:func:`sender_lock`, waiting up to ``lock_wait_s``); the
    drafts are read once it is held. Nothing talks to the forum, and no lock is taken, when no
    draft is approved. A store that stays busy ends the run with a Chinese message in the
    result, never a traceback.
    """
    tick = clock or (lambda: now)
    sql = "SELECT * FROM drafts WHERE state = 'approved'"
    args: list[Any] = []
    if ids is not None:
        wanted = sorted(set(ids))
        sql += f" AND id IN ({', '.join('?' for _ in wanted)})"
        args.extend(wanted)
    sql += " ORDER BY id"
    if not list(store.db.query(sql + " LIMIT 1", args)):
        return []
    with sender_lock(store, wait_s=lock_wait_s):
        # read again under the lock: a sender that held it may have posted them meanwhile
        return _publish_all(store, game, poster, list(store.db.query(sql, args)), tick, ids)


def _publish_all(
    store: Store,
    game: Game,
    poster: Poster,
    drafts: list[dict[str, Any]],
    tick: Callable[[], datetime],
    ids: Collection[int] | None,
) -> list[PublishResult]:
    requested = set(ids or ())
    results: list[PublishResult] = []
    stop: str | None = None  # a problem that stops every later draft too
    for draft in drafts:
        if stop is not None:
            results.append(_result(draft, "skipped", message=f"没有尝试：{stop}"))
            continue
        try:
            result = _publish_one(store, game, poster, draft, tick, draft["id"] in requested)
        except (NotApproved, SendInFlight) as exc:  # this draft only
            result = _result(draft, "skipped", message=str(exc))
        except StoreError as exc:  # the store stayed busy (or broke): stop, say it in Chinese
            stop = str(exc)
            result = _result(
                draft,
                "failed",
                message=f"{exc}（若这份草稿已发到论坛，下次运行会先在帖子里找到它，不会重发）",
            )
        except (LoginFailed, WrongAccount) as exc:
            stop = str(exc)
            result = _result(draft, "failed", message=str(exc))
        except CaptchaRequired as exc:
            stop = "论坛要求验证码（见上）"
            result = _result(draft, "captcha", message=str(exc))
        except PostError as exc:  # the forum could not be read: later drafts would fail alike
            stop = str(exc)
            result = _result(draft, "failed", message=str(exc))
        results.append(result)
    return results


def _result(draft: dict[str, Any], status: str, **kw: Any) -> PublishResult:
    return PublishResult(draft["id"], draft["kind"], draft["day"], draft["tid"], status, **kw)


# long (174 lines): the exactly-once protocol as one state machine, read top to bottom: split up,
# the order of the checks that make it exactly-once would be hidden
def _publish_one(
    store: Store,
    game: Game,
    poster: Poster,
    draft: dict[str, Any],
    tick: Callable[[], datetime],
    requested: bool,
) -> PublishResult:
    draft_id, tid, body_hash = draft["id"], draft["tid"], draft["body_hash"]
    is_edit = draft["action"] == "edit"
    if tid is None:
        return _result(draft, "failed", message="草稿没有目标帖子（tid），无法发出")
    game_tids = {t for _, _, t in game.thread_roles()}
    # the rules thread (the deal's commitment and reveal) and the sign-up thread are the game's too
    game_tids |= {
        t
        for t in (
            getattr(game.game, "rules_thread", None),
            getattr(game.game, "signup_thread", None),
        )
        if t is not None
    }
    if game_tids and tid not in game_tids:
        return _result(
            draft,
            "failed",
            message=f"目标帖子 tid={tid} 不是游戏文件中的帖子；为免发错地方，没有发送",
        )
    if is_edit and not draft["edit_pid"]:
        return _result(draft, "failed", message="编辑类草稿没有要编辑的楼层（edit_pid），无法发出")
    part = _earlier_part_pending(store, draft)
    if part is not None:
        return _result(draft, "waiting", message=f"等第 {part} 部分先发出后再发")
    fingerprint = draft_fingerprint(draft["body"])
    # we hold the game's lock: every attempt seen now is ours to resolve (a crash leftover)
    seen_upto = _last_attempt_id(store, draft_id)
    attempts = [a for a in _attempts(store, draft_id, body_hash) if a["id"] <= seen_upto]
    unsure = [a for a in attempts if a["outcome"] is None or a["outcome"] in UNSURE_OUTCOMES]
    last = attempts[-1] if attempts else None

    if unsure:
        # A crash, a lost answer, a captcha hand-over or a moderated reply: the post may be in
        # the thread already. Look before anything is sent again.
        poster.session(tid)
        since = min(datetime.fromisoformat(a["started_at"]) for a in unsure)
        found = poster.find_post(
            tid, fingerprint, since=since, pid=draft["edit_pid"] if is_edit else None
        )
        if found is not None:
            open_ids = [a["id"] for a in unsure if a["outcome"] is None]
            if not open_ids:
                open_ids = [_record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)]
            _mark_posted(
                store,
                draft,
                attempt_ids=open_ids,
                outcome="found",
                pid=found.pid,
                at=tick(),
                note=f"在帖子中找到已发出的回复：tid={tid} pid={found.pid}",
            )
            return _result(
                draft, "found", pid=found.pid, url=poster.post_url(tid, found.pid), message=""
            )
        moderated = [a for a in unsure if a["outcome"] == "pending_moderation"]
        if moderated and not requested:
            return _result(
                draft,
                "pending_moderation",
                pid=moderated[-1]["pid"],
                message="论坛仍在审核这份回复（通过后会自动登记），没有重发",
            )
        if last is not None and last["outcome"] == "captcha" and not requested:
            return _result(
                draft,
                "captcha",
                message=(
                    "上次发帖时论坛要求验证码：请手动发帖后运行 "
                    f"bansha publish record 游戏文件 {draft_id} --pid 楼层pid；"
                    f"或用 bansha publish 游戏文件 --id {draft_id} 再试一次"
                ),
            )
        for a in unsure:
            if a["outcome"] is None:
                _finish(
                    store,
                    a["id"],
                    tick(),
                    "failed",
                    detail="上次发送结果不明；帖子中没有找到，视为没有发出",
                )
    elif last is not None and last["outcome"] == "refused" and not requested:
        return _result(
            draft,
            "refused",
            message=(
                f"论坛上次拒绝了这份草稿（{last['detail']}）；请修改草稿后重新批准，"
                f"或用 bansha publish 游戏文件 --id {draft_id} 再试"
            ),
        )

    poster.session(tid)
    try:
        poster.check_encodable(draft["body"])
    except PostRefused as exc:
        attempt_id = _record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)
        _finish(store, attempt_id, tick(), "refused", detail=str(exc))
        return _result(draft, "refused", message=str(exc))

    # The last check: approved, with this very text, read from the store now.
    try:
        attempt_id = _record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)
    except NotApproved as exc:
        return _result(draft, "skipped", message=str(exc))

    def guard() -> None:
        assert_approved(store, draft_id, body_hash)

    try:
        if is_edit:
            sent = poster.edit(tid, int(draft["edit_pid"]), draft["body"], guard=guard)
        else:
            sent = poster.reply(tid, draft["body"], guard=guard)
    except NotApproved as exc:
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        return _result(draft, "skipped", message=str(exc))
    except CaptchaRequired as exc:
        _finish(store, attempt_id, tick(), "captcha", detail=str(exc))
        raise
    except PostRefused as exc:
        outcome = "failed" if exc.transient else "refused"
        _finish(store, attempt_id, tick(), outcome, detail=str(exc))
        return _result(draft, outcome, message=str(exc))
    except UncertainSend as exc:
        _note(store, attempt_id, str(exc))
        return _after_uncertain(store, poster, draft, attempt_id, fingerprint, tick, exc)
    except (LoginFailed, WrongAccount) as exc:
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        raise
    except PostError as exc:
        # e.g. the thread could not be re-read for a fresh formhash: nothing was sent then
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        raise

    if sent.outcome is ReplyOutcome.PENDING_MODERATION:
        _finish(store, attempt_id, tick(), "pending_moderation", pid=sent.pid, detail=sent.message)
        return _result(
            draft,
            "pending_moderation",
            pid=sent.pid,
            message=f"论坛收下了回复，但需要版主审核后才会显示（论坛提示：{sent.message}）",
        )
    pid = sent.pid if sent.pid is not None else draft["edit_pid"]
    if pid is None:  # the forum said "posted" without a pid: find it
        found = poster.find_post(
            tid, fingerprint, since=datetime.fromisoformat(_started(store, attempt_id))
        )
        if found is None:
            _note(store, attempt_id, f"论坛说已发出但没有给出 pid（{sent.message}）")
            return _result(
                draft, "uncertain", message="论坛说已发出但没有给出 pid；下次运行会在帖子里查找"
            )
        pid = found.pid
    waited = f"；等待发帖间隔 {len(sent.flood_waits)} 次" if sent.flood_waits else ""
    _mark_posted(
        store,
        draft,
        attempt_ids=[attempt_id],
        outcome="posted",
        pid=int(pid),
        at=tick(),
        note=f"已{'编辑' if is_edit else '发出'}：tid={tid} pid={pid}{waited}",
    )
    return _result(draft, "posted", pid=int(pid), url=poster.post_url(tid, int(pid)))


def _started(store: Store, attempt_id: int) -> str:
    row = store.db.execute(
        "SELECT started_at FROM post_attempts WHERE id = ?", [attempt_id]
    ).fetchone()
    return str(row[0])


def _after_uncertain(
    store: Store,
    poster: Poster,
    draft: dict[str, Any],
    attempt_id: int,
    fingerprint: str,
    tick: Callable[[], datetime],
    exc: UncertainSend,
) -> PublishResult:
    """The POST may have landed: look right away; if not found, leave the intent open so the
    next run looks again before sending."""
    tid = int(draft["tid"])
    try:
        found = poster.find_post(
            tid,
            fingerprint,
            since=datetime.fromisoformat(_started(store, attempt_id)),
            pid=draft["edit_pid"] if draft["action"] == "edit" else None,
        )
    except PostError:
        found = None
    if found is not None:
        _mark_posted(
            store,
            draft,
            attempt_ids=[attempt_id],
            outcome="found",
            pid=found.pid,
            at=tick(),
            note=f"网络中断后在帖子中找到：tid={tid} pid={found.pid}",
        )
        return _result(draft, "found", pid=found.pid, url=poster.post_url(tid, found.pid))
    return _result(
        draft,
        "uncertain",
        message=f"{exc}；下次运行会先在帖子里查找这份回复，找不到才重发",
    )


# long (83 lines): the director's manual record: the checks (thread, author, text) and the record
# in one transaction
def record_manual_post(
    store: Store,
    poster: Poster,
    draft_id: int,
    pid: int,
    *,
    now: datetime,
    clock: Callable[[], datetime] | None = None,
    force: bool = False,
    lock_wait_s: float = 0.0,
) -> PublishResult:
    """The director posted an approved draft by hand (a captcha hand-over): record its pid.

    The pid is looked up on the forum first and accepted only when that post is in the draft's
    thread, by one of the game's director accounts, and shows the draft's text (the same
    :func:`parsers.reply.draft_fingerprint` the exactly-once search uses); otherwise
    :class:`ManualPostMismatch` says which of the three failed, and nothing is recorded.

    ``force`` records it anyway — for what the director has checked with their own eyes and
    bansha cannot see: a post still awaiting moderation, a text the forum's editor reformatted,
    a forum that cannot be read right now. The reason stays in the draft's event and in the
    result's message. Runs holding the game's lock (like a send): it closes open attempts.
    """
    tick = clock or (lambda: now)
    if pid <= 0:
        raise PostError(f"pid 必须是正整数：{pid}")
    with sender_lock(store, wait_s=lock_wait_s):
        row = _recordable(store, draft_id)
        problem: str | None = None
        try:
            _check_manual_post(poster, row, pid)
        except ManualPostMismatch as exc:
            if not force:
                raise ManualPostMismatch(
                    f"{exc}；没有登记（确认这一楼就是这份草稿时，可加 --force 强制登记）",
                    which=exc.which,
                ) from exc
            problem = str(exc)
        except PostError as exc:  # the forum could not be read
            if not force:
                raise PostError(
                    f"{exc}；无法核对 pid={pid}，没有登记"
                    "（论坛恢复后再试，或加 --force 不经核对直接登记）"
                ) from exc
            problem = f"未能在论坛上核对（{exc}）"
        at = tick()
        note = f"导演手动发帖后登记：pid={pid}"
        if problem is not None:
            note += f"；注意：未通过核对，按 --force 登记：{problem}"
        with store.atomic():  # read again under the write lock: one transaction
            current = _recordable(store, draft_id)
            if current["body_hash"] != row["body_hash"]:
                raise PostError(
                    f"草稿 #{draft_id} 在核对期间被修改过，没有登记；请重新批准后再登记"
                )
            open_ids = [
                r["id"]
                for r in store.db.query(
                    "SELECT id FROM post_attempts WHERE draft_id = ? AND finished_at IS NULL",
                    [draft_id],
                )
            ]
            if not open_ids:
                cur = store.db.execute(
                    "INSERT INTO post_attempts(draft_id, body_hash, started_at, detail) "
                    "VALUES (?, ?, ?, ?)",
                    [draft_id, current["body_hash"], _iso(at), "导演手动发帖"],
                )
                open_ids = [int(cur.lastrowid or 0)]
            _mark_posted(
                store, current, attempt_ids=open_ids, outcome="manual", pid=pid, at=at, note=note
            )
    tid = row["tid"]
    return PublishResult(
        draft_id,
        row["kind"],
        row["day"],
        tid,
        "manual",
        pid,
        url=poster.post_url(int(tid), pid) if tid is not None else None,
        message=f"未通过核对，已按 --force 登记：{problem}" if problem is not None else "",
    )


def _recordable(store: Store, draft_id: int) -> dict[str, Any]:
    """The draft, when it may be recorded as posted by hand (approved); else a PostError."""
    row = _row(store, draft_id)
    if row is None:
        raise PostError(f"没有编号为 {draft_id} 的草稿")
    if row["state"] == "posted":
        raise PostError(f"草稿 #{draft_id} 已经登记为发出（pid={row['posted_pid']}），不能重复登记")
    if row["state"] != "approved":
        raise PostError(
            f"草稿 #{draft_id} 的状态是「{STATE_ZH.get(row['state'], row['state'])}」，"
            "只有已批准的草稿才能登记为已发出（先 bansha drafts approve）"
        )
    return row


def _check_manual_post(poster: Poster, draft: dict[str, Any], pid: int) -> Post:
    """Post ``pid`` on the forum, when it is this draft's: in its thread, by a director
    account, with its text. Otherwise :class:`ManualPostMismatch` (``which`` says what)."""
    draft_id, tid = draft["id"], draft["tid"]
    if tid is None:
        raise ManualPostMismatch(
            f"草稿 #{draft_id} 没有目标帖子（tid），无法核对 pid={pid} 是否在帖子里",
            which="thread",
        )
    tid = int(tid)
    is_edit = draft["action"] == "edit" and draft["edit_pid"]
    if is_edit and pid != int(draft["edit_pid"]):
        raise ManualPostMismatch(
            f"草稿 #{draft_id} 是编辑帖子 tid={tid} 中 pid={draft['edit_pid']} 的那一楼，"
            f"登记的 pid 应是 {draft['edit_pid']}，不是 {pid}",
            which="thread",
        )
    try:
        post = poster.locate_post(tid, pid, by_floor=bool(is_edit))
    except NotLoggedIn:  # the forum shows the thread to members only: log in, read again
        poster.session(tid)
        post = poster.locate_post(tid, pid, by_floor=bool(is_edit))
    if post is None:
        raise ManualPostMismatch(
            f"草稿 #{draft_id} 的目标帖子 tid={tid} 中没有 pid={pid} 这一楼"
            "（发到别的帖子了？pid 抄错了？或者这一楼已被删除、仍在审核）",
            which="thread",
        )
    if not poster.is_director_post(post):
        raise ManualPostMismatch(
            f"帖子 tid={tid} 的 pid={pid} 是「{post.author}」（uid={post.uid}）发的，"
            "不是游戏文件 [director] 中的导演账号",
            which="author",
        )
    if post_fingerprint(post) != draft_fingerprint(draft["body"]):
        shown = " ".join(post.text.split())
        shown = shown if len(shown) <= 30 else shown[:29] + "…"
        raise ManualPostMismatch(
            f"帖子 tid={tid} 的 pid={pid} 的内容与草稿 #{draft_id} 的正文不一致"
            f"（这一楼开头是：「{shown}」）",
            which="text",
        )
    return post
