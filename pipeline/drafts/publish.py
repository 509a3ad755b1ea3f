"""Publishing approved drafts exactly once (the drafts' side of posting; the forum session is
:class:`pipeline.discuz.poster.Poster`).

:func:`publish_approved` is the exactly-once protocol over the store's ``post_attempts``: the
intent is committed before the POST, the pid and the draft's ``posted`` state in one
transaction after it; an intent without an outcome (a crash in between) makes the next run look
for the post in the thread (by :func:`parsers.reply.draft_fingerprint`) before sending again.
Outcomes written to ``post_attempts.outcome``: ``posted``, ``found`` (seen in the thread after an
unclear send), ``manual`` (the director posted it by hand), ``pending_moderation``, ``captcha``,
``captcha_login`` (the login met a captcha: nothing was sent),
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

import dataclasses
import json
import logging
import re
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from parsers.records import PageError, PageErrorKind, Post
from parsers.reply import ReplyOutcome, draft_fingerprint, fingerprint_words, post_fingerprint
from pipeline.derive import derive
from pipeline.discuz.poster import (
    STATE_ZH,
    UNSURE_OUTCOMES,
    CaptchaRequired,
    ManualPostMismatch,
    NewThread,
    NoModeratorRights,
    NotApproved,
    NotLoggedIn,
    Poster,
    PostError,
    PostRefused,
    SenderBusy,
    SendInFlight,
    Sent,
    ThreadRef,
    UncertainSend,
    same_subject,
)
from pipeline.drafts.contexts import elevator_context
from pipeline.drafts.due import _specs
from pipeline.drafts.formatting import _when
from pipeline.drafts.inputs import STALE_HINT, moved_on, note_game
from pipeline.drafts.making import elevator_rejected
from pipeline.drafts.model import KIND_ZH, Draft, DraftAction, DraftError, DraftKind, DraftState
from pipeline.drafts.newthreads import (
    drafted_otherwise,
    retire_opened,
    thread_over,
    thread_window,
)
from pipeline.drafts.records import NO_RIGHTS_KEY, _latest, maybe_on_the_forum
from pipeline.drafts.state import approve, elevator_note, reject, save_drafts, set_aside
from pipeline.drafts.templates import load_templates
from pipeline.game.gamefile import THREAD_ROLE_TITLES, Day, Game, ThreadRole
from pipeline.game.threads import OpenedThread, author_only, thread_closes, with_opened
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
    #             uncertain | waiting | skipped | closed | no_rights | held
    pid: int | None = None
    url: str | None = None
    message: str = ""
    #: it waits for the director (a captcha: posted or opened by hand, then recorded), or was
    #: not tried because of what the director is asked to do: a state, not a failed run
    director: bool = False
    #: said in an earlier run already (the same captcha): quiet now
    told: bool = False

    @property
    def ok(self) -> bool:
        """The forum has the post (or will show it once a moderator approves it)."""
        return self.status in ("posted", "found", "manual", "pending_moderation", "closed")

    @property
    def notice(self) -> bool:
        """Not a failure of the run but something the director must hear, once: the account
        may not close threads (said once; nothing of the kind is tried or drafted again), a
        new thread held back because one of the director's threads waiting for a moderator may
        be it (said once; later runs look again quietly: ``pending_moderation``), or a captcha
        the director has to get past by hand (said once; later runs wait quietly)."""
        if self.status == "captcha":
            return not self.told
        return self.status in ("no_rights", "held")

    def line(self) -> str:
        """One line for the director."""
        what = f"草稿 #{self.draft_id}（{KIND_ZH.get(self.kind, self.kind)}" + (
            f"，第{self.day}天）" if self.day is not None else "）"
        )
        where = f"帖子 tid={self.tid}" if self.tid is not None else "帖子"
        if self.kind == "newthread" and self.status in ("posted", "found"):
            verb = "已开新帖" if self.status == "posted" else "已在版块中找到已开的新帖"
            tail = f"：{self.url}" if self.url else ""
            said = f"（{self.message}）" if self.message else ""
            return f"{what}{verb} → tid={self.tid}{tail}{said}"
        if self.status == "closed":
            return f"{what}已锁帖 → {where}{'（' + self.message + '）' if self.message else ''}"
        if self.status == "no_rights":
            return f"{what}没有锁帖：{self.message}"
        if self.status == "held":
            return f"{what}暂不开帖：{self.message}"
        if self.status in ("posted", "found", "manual"):
            verb = {"posted": "已发出", "found": "已在帖子中找到", "manual": "已登记"}[self.status]
            tail = f"：{self.url}" if self.url else ""
            return f"{what}{verb} → {where} pid={self.pid}{tail}"
        return f"{what}未发出：{self.message}"


def _row(store: Store, draft_id: int) -> dict[str, Any] | None:
    rows = store.query("SELECT * FROM drafts WHERE id = ?", [draft_id])
    return rows[0] if rows else None


def _attempts(store: Store, draft_id: int, body_hash: str) -> list[dict[str, Any]]:
    return list(
        store.query(
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
        store.execute(
            "UPDATE post_attempts SET finished_at = ?, outcome = ?, pid = COALESCE(?, pid), "
            "detail = COALESCE(?, detail) WHERE id = ?",
            [_iso(at), outcome, pid, detail, attempt_id],
        )


def _note(store: Store, attempt_id: int, detail: str) -> None:
    with store.atomic():
        store.execute("UPDATE post_attempts SET detail = ? WHERE id = ?", [detail, attempt_id])


def _mark_posted(
    store: Store,
    draft: dict[str, Any],
    *,
    attempt_ids: Sequence[int],
    outcome: str,
    pid: int | None,
    at: datetime,
    note: str,
    tid: int | None = None,
) -> None:
    """Close the attempts, set the draft ``posted`` and write its event: one transaction.
    ``tid``: the thread a new-thread draft opened (its draft learns it)."""
    with store.atomic():
        for attempt_id in attempt_ids:
            store.execute(
                "UPDATE post_attempts SET finished_at = ?, outcome = ?, pid = ? WHERE id = ?",
                [_iso(at), outcome, pid, attempt_id],
            )
        current = store.execute(
            "SELECT state, body_hash FROM drafts WHERE id = ?", [draft["id"]]
        ).fetchone()
        state, body_hash = current if current else (None, None)
        if body_hash == draft["body_hash"] and state != "posted":
            store.execute(
                "UPDATE drafts SET state = 'posted', posted_pid = ?, posted_at = ?, "
                "updated_at = ?, tid = COALESCE(?, tid) WHERE id = ?",
                [pid, _iso(at), _iso(at), tid, draft["id"]],
            )
            store.execute(
                "INSERT INTO draft_events(draft_id, at, from_state, to_state, note) "
                "VALUES (?, ?, ?, 'posted', ?)",
                [draft["id"], _iso(at), state, note],
            )
        else:  # the director changed the draft while it was being sent: keep their version
            log.warning("草稿 #%s 发送期间被修改；已发出的是修改前批准的版本", draft["id"])
            store.execute(
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
    row = store.execute(
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
        _assert_holding(store, row)
        other = store.execute(
            "SELECT id, started_at FROM post_attempts WHERE draft_id = ? AND id > ? "
            "AND finished_at IS NULL AND outcome IS NULL ORDER BY id LIMIT 1",
            [draft_id, seen_upto],
        ).fetchone()
        if other is not None:
            raise SendInFlight(
                f"草稿 #{draft_id} 正由另一个 bansha 进程发送（发送记录 #{other[0]}，"
                f"开始于 {other[1]}），这次没有发送，以免发出两份"
            )
        cur = store.execute(
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
    """Raise :class:`NotApproved` unless the stored draft is approved with this exact text and
    still made from the game's inputs as they are (the last check before the forum is asked:
    a director's record made while the run waited — the forum's flood interval, a slow
    thread read — holds it back as :func:`_still_holding` did at the run's start)."""
    row = _row(store, draft_id)
    if row is None or row["state"] != "approved" or row["body_hash"] != body_hash:
        raise NotApproved(_not_approved_message(draft_id, row))
    _assert_holding(store, row)


def _assert_holding(store: Store, row: dict[str, Any]) -> None:
    why = moved_on(store, Draft.from_row(row))
    if why is not None:
        raise NotApproved(f"草稿 #{row['id']} 没有发出：{why}")


_PART_KEY = re.compile(r"^(.*)#(\d{1,4})$")


def _earlier_part_pending(store: Store, draft: dict[str, Any]) -> int | None:
    """For part n>1 of a split draft (key ``…#n``): the number of the earlier part that is not
    posted yet, so the parts reach the thread in order."""
    match = _PART_KEY.match(draft["key"] or "")
    if match is None or int(match.group(2)) <= 1:
        return None
    earlier = f"{match.group(1)}#{int(match.group(2)) - 1}"
    row = store.execute(
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
    templates_dir: Path | str | None = None,
) -> list[PublishResult]:
    """Post every approved draft (oldest first), each exactly once; return what happened.

    New threads go first (:func:`open_thread`): a discussion thread's 电梯 is
    drafted from ``templates_dir`` and sent right after it.

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
    # A forum write's time gate: the run's time, never later than the real clock (``--as-of``
    # reviews the past; an as-of in the future must not open or close anything early).
    at = min(now, tick())
    sql = "SELECT * FROM drafts WHERE state = 'approved'"
    args: list[Any] = []
    if ids is not None:
        wanted = sorted(set(ids))
        sql += f" AND id IN ({', '.join('?' for _ in wanted)})"
        args.extend(wanted)
    sql += " ORDER BY id"
    if _sendable(store.query(sql, args), game, at) == ([], []):
        return []
    with sender_lock(store, wait_s=lock_wait_s):
        # a game file edited since they were drafted holds them back (a busy store: each
        # draft's own intent, refused the same way, says so)
        with suppress(StoreError):
            note_game(store, game)
        # read again under the lock: a sender that held it may have posted them meanwhile
        drafts, held = _sendable(store.query(sql, args), game, at)
        drafts, stale = _still_holding(store, drafts)
        held += stale
        drafts, rewritten = _still_as_drafted(store, game, drafts, templates_dir)
        held += rewritten
        for h in held:
            if h.set_aside:
                set_aside(store, int(h.draft["id"]), h.message, tick())
        return [_result(h.draft, h.status, message=h.message) for h in held] + _publish_all(
            store, game, poster, drafts, tick, ids, now=now, templates_dir=templates_dir
        )


def _day_role(game: Game, draft: Mapping[str, Any]) -> tuple[Day | None, ThreadRole | None]:
    """The draft's day as the game file has it now (None: gone from it), and its thread's role."""
    n = draft.get("day")
    day = next((d for d in game.days if d.day == n), None) if n is not None else None
    return day, ThreadRole(draft["role"]) if draft.get("role") else None


def due_at(game: Game, draft: Mapping[str, Any]) -> datetime | None:
    """Not before when an approved draft may go, as the game file says now: a new thread when
    its thread opens (:func:`pipeline.drafts.thread_window`), a close when its day's (or
    first round's) close is; any other draft its ``not_before``. None: no time gate, or the
    draft's day (or round) is gone from the game file."""
    day, role = _day_role(game, draft)
    if draft["action"] == "newthread" and day is not None and role is not None:
        return thread_window(day, role)[0]
    if draft["action"] == "close" and day is not None:
        return thread_closes(game, day, role or ThreadRole.VOTE)
    nb = draft.get("not_before")
    return datetime.fromisoformat(nb) if nb else None


@dataclass(frozen=True, slots=True)
class _Held:
    """An approved draft that does not go this run, and why (said in the run's results)."""

    draft: dict[str, Any]
    status: str  # waiting | skipped
    message: str
    set_aside: bool = False  # it never will: superseded with ``message``


def _held(draft: dict[str, Any], game: Game, at: datetime) -> _Held | None:
    """A new thread or a close checked against the game file as it is now, not the times
    frozen in the draft: a day's thread only while its round is open (a closed day's draft set
    aside, like :func:`pipeline.drafts.retire_opened`), a close not before its round's current
    close. A draft whose frozen time has not come either waits quietly (None)."""
    action = draft["action"]
    if action not in ("newthread", "close"):
        return None
    day, role = _day_role(game, draft)
    what = f"第{draft['day']}天的{THREAD_ROLE_TITLES[role]}" if role is not None else "帖子"
    due = due_at(game, draft)
    if day is None or role is None or due is None:
        gone = "游戏文件中已没有这一天（或这一轮投票）"
        doing = "开帖" if action == "newthread" else "锁帖"
        return _Held(draft, "skipped", f"{gone}，{what}不再{doing}，此草稿作废", set_aside=True)
    if action == "newthread" and (over := thread_over(day, role, at)) is not None:
        return _Held(draft, "skipped", over, set_aside=True)
    if at >= due:
        return None
    nb = draft.get("not_before")
    if nb and datetime.fromisoformat(nb) > at:
        return _Held(draft, "quiet", "")  # its time has not come, as drafted: nothing to say
    when = _when(due, game.game.tz)
    if action == "newthread":
        message = f"游戏文件中{what}的开门时间已改为 {when}，到时再开帖，现在没有开"
    else:
        message = f"游戏文件中{what}的截止时间已改为 {when}，截止后再锁帖，现在没有锁"
    return _Held(draft, "waiting", message)


def _sendable(
    drafts: list[dict[str, Any]], game: Game, at: datetime
) -> tuple[list[dict[str, Any]], list[_Held]]:
    """The approved drafts that may go at ``at``, new threads first, and those held back with
    a reason to say. Not before their time (:func:`_held`; a day's thread before it opens, a
    vote thread's close before its close: they wait quietly); a reply with no thread yet waits
    for the thread bansha is to open (``[forum] fid``: it is drafted again with its tid once
    the thread is there)."""
    out: list[dict[str, Any]] = []
    held: list[_Held] = []
    for d in drafts:
        h = _held(d, game, at)
        if h is not None:
            if h.status != "quiet":
                held.append(h)
            continue
        nb = d.get("not_before")
        if d["action"] not in ("newthread", "close") and nb and datetime.fromisoformat(nb) > at:
            continue
        if d["tid"] is None and d["action"] in ("reply", "edit") and game.forum.fid is not None:
            continue
        out.append(d)
    return sorted(out, key=lambda d: (d["action"] != "newthread", d["id"])), held


def _still_holding(
    store: Store, drafts: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[_Held]]:
    """The drafts still made from the game's inputs as they are, and those held back because
    the inputs moved on after they were drafted (:func:`pipeline.drafts.moved_on`): never sent
    as they are — the next drafting makes them again or sets them aside."""
    fresh: list[dict[str, Any]] = []
    held: list[_Held] = []
    for d in drafts:
        why = moved_on(store, Draft.from_row(d))
        if why is None or maybe_on_the_forum(store, int(d["id"])):
            fresh.append(d)  # (one that may be in the thread already is looked for there first)
        else:
            held.append(_Held(d, "waiting", f"没有发出：{why}"))
    return fresh, held


def _still_as_drafted(
    store: Store, game: Game, drafts: list[dict[str, Any]], templates_dir: Path | str | None
) -> tuple[list[dict[str, Any]], list[_Held]]:
    """The drafts the game file would still draft as they are, and the new threads and closes
    it now drafts otherwise (an edited time, subject or signature:
    :func:`pipeline.drafts.newthreads.drafted_otherwise`), held back until drafted again — a
    thread's first post is never edited after it is out. (One that may be out already is looked
    for first, as in :func:`_still_holding`.)"""
    if not any(d["action"] in ("newthread", "close") for d in drafts):
        return drafts, []
    templates = load_templates(templates_dir)
    fresh: list[dict[str, Any]] = []
    held: list[_Held] = []
    for d in drafts:
        why = drafted_otherwise(game, d, templates)
        if why is None or _tried_unsure(store, int(d["id"])):
            fresh.append(d)
        else:
            held.append(_Held(d, "waiting", f"没有发出：{why}；{STALE_HINT}"))
    return fresh, held


def _tried_unsure(store: Store, draft_id: int) -> bool:
    """An attempt at this draft has no known outcome (no answer, a captcha, held for
    moderation): the thread may be open already, and :func:`open_thread` looks for it first."""
    row = store.execute(
        "SELECT 1 FROM post_attempts WHERE draft_id = ? AND (outcome IS NULL "
        "OR outcome IN ('captcha', 'pending_moderation')) LIMIT 1",
        [draft_id],
    ).fetchone()
    return row is not None


def _publish_all(
    store: Store,
    game: Game,
    poster: Poster,
    drafts: list[dict[str, Any]],
    tick: Callable[[], datetime],
    ids: Collection[int] | None,
    *,
    now: datetime,
    templates_dir: Path | str | None = None,
) -> list[PublishResult]:
    requested = set(ids or ())
    results: list[PublishResult] = []
    stop: str | None = None  # a problem that stops every later draft too
    for draft in drafts:
        if stop is not None:
            # what the director is asked to do (a captcha) holds the later drafts: no failure
            message = f"没有尝试：{stop}"
            results.append(_result(draft, "skipped", message=message, director=stop == CAPTCHA))
            continue
        told = _last_outcome(store, draft) in CAPTCHA_OUTCOMES  # said by an earlier run
        try:
            if draft["action"] == "newthread":
                opened = open_thread(
                    store,
                    game,
                    poster,
                    draft,
                    tick,
                    draft["id"] in requested,
                    templates_dir=templates_dir,
                )
                results += opened.results
                game = opened.game  # the new tid is the game's from now on (the 电梯 …)
                stop = opened.stop  # e.g. the 电梯 met a captcha: later drafts would too
                continue
            if draft["action"] == "close":
                result = close_thread(store, game, poster, draft, tick, draft["id"] in requested)
            else:
                result = _publish_one(store, game, poster, draft, tick, draft["id"] in requested)
        except CaptchaRequired as exc:
            result, stop = _captcha(store, game, draft, exc, tick, told=told)
        except (StoreError, PostError) as exc:
            result, stop = _failure(draft, exc)
        results.append(result)
    return results


#: why a run's later drafts are not tried after a captcha (the director was told above)
CAPTCHA = "论坛要求验证码（见上）"
#: an attempt that met a captcha: when posting (the director may have posted it by hand: it
#: is looked for), or at login (nothing was sent: tried again as usual once the login works)
CAPTCHA_OUTCOMES = ("captcha", "captcha_login")


def _last_outcome(store: Store, draft: Mapping[str, Any]) -> str | None:
    """The outcome of the last attempt at this very text of the draft (None: none yet)."""
    row = store.execute(
        "SELECT outcome FROM post_attempts WHERE draft_id = ? AND body_hash = ? "
        "ORDER BY id DESC LIMIT 1",
        [draft["id"], draft["body_hash"]],
    ).fetchone()
    return row[0] if row else None


def _captcha(
    store: Store,
    game: Game,
    draft: dict[str, Any],
    exc: CaptchaRequired,
    tick: Callable[[], datetime],
    *,
    told: bool,
) -> tuple[PublishResult, str | None]:
    """A captcha met sending ``draft`` (at login or when posting): the draft waits for the
    director — a state said once (``told``: an earlier run said it), not a failed run. A
    captcha at login is remembered as the draft's attempt too (``captcha_login``: nothing was
    sent), so later runs say it no more and send as usual once the login works.
    At login every later draft would meet it too (they wait); a new thread's captcha when
    posting holds that thread only."""
    if _last_outcome(store, draft) not in CAPTCHA_OUTCOMES:  # met before a send: at login
        draft_id = int(draft["id"])
        try:
            attempt_id = _record_intent(
                store,
                draft_id,
                draft["body_hash"],
                tick(),
                seen_upto=_last_attempt_id(store, draft_id),
            )
            _finish(store, attempt_id, tick(), "captcha_login", detail=str(exc))
        except PostError:  # no longer approved, or being sent by another process: not ours
            pass
    thread = draft["action"] == "newthread"
    message = _thread_captcha(game, draft, exc) if thread else str(exc)
    stop = None if thread and exc.during == "post" else CAPTCHA
    result = _result(draft, "captcha", message=message, director=True, told=told)
    return result, stop


def _thread_captcha(game: Game, draft: Mapping[str, Any], exc: CaptchaRequired | None) -> str:
    """What the director does for a new thread the forum wants a captcha for: open it by hand
    and give bansha its tid (docs/rulings.md#threads-exactly-once); at login, a browser cookie
    lets bansha open it itself."""
    draft_id, subject = draft["id"], draft["subject"] or ""
    if exc is None:
        head = "上次开帖时论坛要求验证码，仍在等导演处理"
    else:
        doing = "登录" if exc.during == "login" else "开新帖"
        said = f"（论坛提示：{exc.forum_said}）" if exc.forum_said else ""
        head = f"论坛要求填写验证码才能{doing}{said}，bansha 不会尝试识别验证码"
    text = (
        f"{head}：请在浏览器里用导演账号到版块 {game.forum.fid} 手动开帖，标题「{subject}」，"
        f"正文照抄 bansha drafts show 游戏文件 {draft_id}；开好后运行 "
        f"bansha publish record 游戏文件 {draft_id} --tid 新帖的tid 登记"
        "（下一轮 cycle 也会在版块里按标题找到它）"
    )
    if exc is not None and exc.during == "login":
        text += (
            f"；或把浏览器的 cookie 放进环境变量 {game.forum.cookie_env}，下一轮 cycle 会自己开帖"
        )
    elif exc is None:
        text += f"；或用 bansha publish 游戏文件 --id {draft_id} 再试一次"
    return text


def _failure(
    draft: dict[str, Any], exc: StoreError | PostError
) -> tuple[PublishResult, str | None]:
    """The run's answer for a draft whose send raised ``exc``, and, when the same would befall
    every later draft of the run, why they are not tried (None: this draft only)."""
    if isinstance(exc, (NotApproved, SendInFlight)):  # this draft only
        return _result(draft, "skipped", message=str(exc)), None
    if isinstance(exc, StoreError):  # the store stayed busy (or broke): stop, say it in Chinese
        message = f"{exc}（若这份草稿已发到论坛，下次运行会先在帖子里找到它，不会重发）"
        return _result(draft, "failed", message=message), str(exc)
    if isinstance(exc, CaptchaRequired):  # the director's move: a state, not a failure
        return _result(draft, "captcha", message=str(exc), director=True), CAPTCHA
    # a login or account problem, or the forum could not be read: later drafts would fail alike
    return _result(draft, "failed", message=str(exc)), str(exc)


def _result(draft: Mapping[str, Any], status: str, **kw: Any) -> PublishResult:
    return PublishResult(draft["id"], draft["kind"], draft["day"], draft["tid"], status, **kw)


def _give_up(store: Store, unsure: Sequence[dict[str, Any]], at: datetime, detail: str) -> None:
    """Attempts left without an outcome whose result was looked for and not found: not sent."""
    for a in unsure:
        if a["outcome"] is None:
            _finish(store, a["id"], at, "failed", detail=detail)


def _refused_before(draft: dict[str, Any], last: dict[str, Any], what: str) -> PublishResult:
    """The forum refused this very text before: not tried again until it changes or the
    director names it (``--id``)."""
    return _result(
        draft,
        "refused",
        message=(
            f"论坛上次拒绝了{what}（{last['detail']}）；请修改后重新批准，"
            f"或用 bansha publish 游戏文件 --id {draft['id']} 再试"
        ),
    )


def _begin(
    store: Store,
    poster: Poster,
    draft: dict[str, Any],
    tick: Callable[[], datetime],
    seen_upto: int,
    text: str | None,
) -> int | PublishResult:
    """The intent of a send, committed: its attempt's id — or the run's answer when there is
    nothing to send (``text`` the forum's charset cannot hold: refused; no longer approved)."""
    draft_id, body_hash = int(draft["id"]), draft["body_hash"]
    if text is not None:
        try:
            poster.check_encodable(text)
        except PostRefused as exc:
            attempt_id = _record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)
            _finish(store, attempt_id, tick(), "refused", detail=str(exc))
            return _result(draft, "refused", message=str(exc))
    # The last check: approved, with this very text, read from the store now.
    try:
        return _record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)
    except NotApproved as exc:
        return _result(draft, "skipped", message=str(exc))


@dataclass(frozen=True, slots=True)
class _Answer:
    """What one send got: the forum's value, or the run's answer for the draft, or an
    unclear answer (the forum may have done it) for the caller to look for."""

    value: Any = None
    result: PublishResult | None = None
    uncertain: UncertainSend | None = None


def _send(
    store: Store,
    draft: dict[str, Any],
    attempt_id: int,
    tick: Callable[[], datetime],
    send: Callable[[Callable[[], None]], Any],
    *,
    keep: tuple[type[PostError], ...] = (),
) -> _Answer:
    """``send(guard)`` once, its intent recorded: every answer of the forum to its outcome, as
    every send shares them (``keep``: errors the caller settles itself)."""
    draft_id, body_hash = int(draft["id"]), draft["body_hash"]

    def guard() -> None:
        assert_approved(store, draft_id, body_hash)

    try:
        return _Answer(value=send(guard))
    except keep:
        raise
    except NotApproved as exc:
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        return _Answer(result=_result(draft, "skipped", message=str(exc)))
    except CaptchaRequired as exc:
        outcome = "captcha_login" if exc.during == "login" else "captcha"  # login: none sent
        _finish(store, attempt_id, tick(), outcome, detail=str(exc))
        raise
    except PostRefused as exc:
        outcome = "failed" if exc.transient else "refused"
        _finish(store, attempt_id, tick(), outcome, detail=str(exc))
        return _Answer(result=_result(draft, outcome, message=str(exc)))
    except UncertainSend as exc:
        _note(store, attempt_id, str(exc))
        return _Answer(uncertain=exc)
    except PostError as exc:
        # a login or account problem, or e.g. the page for a fresh formhash could not be read:
        # nothing was sent then
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        raise


def _publish_one(
    store: Store,
    game: Game,
    poster: Poster,
    draft: dict[str, Any],
    tick: Callable[[], datetime],
    requested: bool,
) -> PublishResult:
    """The exactly-once protocol of one reply or edit, in its order: the target checked, an
    unsure earlier attempt looked for in the thread first, the intent recorded, the send, and
    what the forum answered recorded."""
    draft_id, tid = draft["id"], draft["tid"]
    is_edit = draft["action"] == "edit"
    refused = _unsendable(store, game, draft)
    if refused is not None:
        return refused
    fingerprint = draft_fingerprint(draft["body"])
    # we hold the game's lock: every attempt seen now is ours to resolve (a crash leftover)
    seen_upto = _last_attempt_id(store, draft_id)
    before = _earlier_attempts(store, poster, draft, tick, requested, seen_upto, fingerprint)
    if before is not None:
        return before

    poster.session(tid)
    begun = _begin(store, poster, draft, tick, seen_upto, draft["body"])
    if isinstance(begun, PublishResult):
        return begun
    attempt_id = begun

    def send(guard: Callable[[], None]) -> Any:
        if is_edit:
            return poster.edit(tid, int(draft["edit_pid"]), draft["body"], guard=guard)
        return poster.reply(tid, draft["body"], guard=guard)

    answer = _send(store, draft, attempt_id, tick, send)
    if answer.result is not None:
        return answer.result
    if answer.uncertain is not None:
        return _after_uncertain(
            store, poster, draft, attempt_id, fingerprint, tick, answer.uncertain
        )
    return _after_sent(store, poster, draft, attempt_id, fingerprint, tick, answer.value)


def _unsendable(store: Store, game: Game, draft: dict[str, Any]) -> PublishResult | None:
    """Why this draft cannot be sent now (no target, not the game's thread, no floor to edit,
    an earlier part not sent yet), or None."""
    tid = draft["tid"]
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
    return None


def _earlier_attempts(
    store: Store,
    poster: Poster,
    draft: dict[str, Any],
    tick: Callable[[], datetime],
    requested: bool,
    seen_upto: int,
    fingerprint: str,
) -> PublishResult | None:
    """The earlier attempts at this body resolved before anything is sent again: the result
    when one landed or must not be retried, else None (go on and send)."""
    draft_id, tid, body_hash = draft["id"], draft["tid"], draft["body_hash"]
    is_edit = draft["action"] == "edit"
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
        stale = moved_on(store, Draft.from_row(draft))
        if stale is not None and not moderated:
            # not in the thread, and no longer what the game's records say: not sent again —
            # the next drafting makes it anew (or sets it aside)
            for a in unsure:  # (a captcha's too: nothing of it will be sent)
                detail = "上次发送结果不明；帖子中没有找到，视为没有发出"
                _finish(store, a["id"], tick(), "failed", detail=detail)
            message = f"上次发送结果不明，帖子中没有找到它；没有重发：{stale}"
            set_aside(store, draft_id, message, tick())  # (the next drafting writes it anew)
            return _result(draft, "skipped", message=message)
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
                director=True,
                told=True,
            )
        _give_up(store, unsure, tick(), "上次发送结果不明；帖子中没有找到，视为没有发出")
    elif last is not None and last["outcome"] == "refused" and not requested:
        return _refused_before(draft, last, "这份草稿")

    return None


def _after_sent(
    store: Store,
    poster: Poster,
    draft: dict[str, Any],
    attempt_id: int,
    fingerprint: str,
    tick: Callable[[], datetime],
    sent: Sent,
) -> PublishResult:
    """What the forum answered to a send, recorded: held for moderation, or posted (its pid
    found in the thread when the forum gave none)."""
    tid = draft["tid"]
    is_edit = draft["action"] == "edit"
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
    row = store.execute(
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
        problem = _checked_or_forced(
            lambda: _check_manual_post(poster, row, pid),
            force,
            mine="这一楼就是这份草稿",
            ref=f"pid={pid}",
        )
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
            open_ids = _open_attempts(store, current, at, "导演手动发帖")
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


def record_manual_thread(
    store: Store,
    game: Game,
    poster: Poster,
    draft_id: int,
    tid: int,
    *,
    now: datetime,
    clock: Callable[[], datetime] | None = None,
    force: bool = False,
    lock_wait_s: float = 0.0,
) -> PublishResult:
    """The director opened an approved new thread by hand (the forum wanted a captcha): record
    its tid, as the day's thread of the draft's role from now on.

    Checked on the forum first, like a reply's pid (:func:`record_manual_post`): the thread
    exists, its first post is by one of the game's director accounts, its subject is the
    draft's, and it is newer than the game's rules and sign-up threads and every earlier day's
    thread (an older one is another game's); otherwise :class:`ManualPostMismatch` says which
    (``thread``, ``author``, ``subject``) and nothing is recorded. ``force`` records it anyway,
    the reason kept in the draft's event. Runs holding the game's lock."""
    tick = clock or (lambda: now)
    if tid <= 0:
        raise PostError(f"tid 必须是正整数：{tid}")
    with sender_lock(store, wait_s=lock_wait_s):
        row = _recordable(store, draft_id)
        if row["action"] != "newthread":
            raise PostError(
                f"草稿 #{draft_id} 不是开新帖的草稿（{KIND_ZH.get(row['kind'], row['kind'])}）："
                "手动发的回复用 --pid 登记那一楼"
            )
        day, role = int(row["day"]), ThreadRole(row["role"])
        what = f"第{day}天的{THREAD_ROLE_TITLES[role]}"
        known = _known_tid(store, game, day, role)
        if known is not None:
            raise PostError(f"{what}已有帖子 tid={known}，没有登记 tid={tid}")
        if tid in {t for _, _, t in game.thread_roles()} | {
            int(r["tid"]) for r in store.opened_threads()
        }:
            raise PostError(f"帖子 tid={tid} 已是这局游戏的另一个帖子，没有登记为{what}")
        problem = _checked_or_forced(
            lambda: _check_manual_thread(poster, game, store, row, tid),
            force,
            mine=f"这就是{what}",
            ref=f"tid={tid}",
        )
        at = tick()
        note = f"导演手动开帖后登记：tid={tid}"
        if problem is not None:
            note += f"；注意：未通过核对，按 --force 登记：{problem}"
        with store.atomic():  # read again under the write lock: one transaction
            current = _recordable(store, draft_id)
            if current["body_hash"] != row["body_hash"]:
                raise PostError(
                    f"草稿 #{draft_id} 在核对期间被修改过，没有登记；请重新批准后再登记"
                )
            open_ids = _open_attempts(store, current, at, "导演手动开帖")
            _record(
                store,
                game,
                current,
                tid,
                attempt_ids=open_ids,
                outcome="manual",
                how="manual",
                at=at,
                note=note,
            )
    return PublishResult(
        draft_id,
        row["kind"],
        day,
        tid,
        "manual",
        url=poster.thread_url(tid, 1),
        message=f"未通过核对，已按 --force 登记：{problem}" if problem is not None else "",
    )


def _checked_or_forced(
    check: Callable[[], object], force: bool, *, mine: str, ref: str
) -> str | None:
    """Run the forum check of a post or thread the director made by hand: None when it holds;
    with ``force``, what did not hold (recorded anyway); otherwise the refusal, in Chinese."""
    try:
        check()
    except ManualPostMismatch as exc:
        if not force:
            raise ManualPostMismatch(
                f"{exc}；没有登记（确认{mine}时，可加 --force 强制登记）", which=exc.which
            ) from exc
        return str(exc)
    except PostError as exc:  # the forum could not be read
        if not force:
            raise PostError(
                f"{exc}；无法核对 {ref}，没有登记（论坛恢复后再试，或加 --force 不经核对直接登记）"
            ) from exc
        return f"未能在论坛上核对（{exc}）"
    return None


def _open_attempts(store: Store, draft: dict[str, Any], at: datetime, detail: str) -> list[int]:
    """The draft's unfinished attempts, or one recorded now for what the director did by hand:
    the record of it closes them."""
    open_ids = [
        int(r["id"])
        for r in store.query(
            "SELECT id FROM post_attempts WHERE draft_id = ? AND finished_at IS NULL",
            [draft["id"]],
        )
    ]
    if open_ids:
        return open_ids
    cur = store.execute(
        "INSERT INTO post_attempts(draft_id, body_hash, started_at, detail) VALUES (?, ?, ?, ?)",
        [draft["id"], draft["body_hash"], _iso(at), detail],
    )
    return [int(cur.lastrowid or 0)]


def _check_manual_thread(
    poster: Poster, game: Game, store: Store, draft: dict[str, Any], tid: int
) -> None:
    """Thread ``tid`` on the forum, when it is this new-thread draft's: it exists, the
    director started it, with the draft's subject, and it is newer than the game's earlier
    threads. Otherwise :class:`ManualPostMismatch` (``which`` says what)."""
    draft_id, subject = draft["id"], draft["subject"] or ""
    try:
        try:
            page = poster.fetch_thread(tid, 1)
        except NotLoggedIn:  # the forum shows the thread to members only: log in, read again
            poster.session(tid)
            page = poster.fetch_thread(tid, 1)
    except PostError as exc:
        cause = exc.__cause__
        if isinstance(cause, PageError) and cause.kind is PageErrorKind.NOT_FOUND:
            raise ManualPostMismatch(
                f"论坛上没有帖子 tid={tid}（tid 抄错了？帖子已被删除，或仍在等版主审核？）",
                which="thread",
            ) from exc
        raise
    first = next((p for p in page.posts if p.floor == 1), None)
    if first is None and page.page == 1 and page.posts:
        first = page.posts[0]
    if first is None:
        raise ManualPostMismatch(f"帖子 tid={tid} 的第一页上没有楼主的帖子", which="thread")
    if not poster.is_director_post(first):
        raise ManualPostMismatch(
            f"帖子 tid={tid} 是「{first.author}」（uid={first.uid}）开的，"
            "不是游戏文件 [director] 中的导演账号",
            which="author",
        )
    if not same_subject(page.subject or "", subject):
        raise ManualPostMismatch(
            f"帖子 tid={tid} 的标题是「{page.subject or ''}」，"
            f"不是草稿 #{draft_id} 的标题「{subject}」",
            which="subject",
        )
    floor = _floor(game, store, int(draft["day"]))
    if floor is not None and tid <= floor:
        raise ManualPostMismatch(
            f"帖子 tid={tid} 比这局游戏的规则帖、报名帖或前几天的帖子（tid={floor}）还早，"
            "是另一局的同名帖子",
            which="thread",
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
    # by the words alone: a forum that rewrites links (伪静态 addresses) shows the same post
    # with other targets
    if fingerprint_words(post_fingerprint(post)) != fingerprint_words(
        draft_fingerprint(draft["body"])
    ):
        shown = " ".join(post.text.split())
        shown = shown if len(shown) <= 30 else shown[:29] + "…"
        raise ManualPostMismatch(
            f"帖子 tid={tid} 的 pid={pid} 的内容与草稿 #{draft_id} 的正文不一致"
            f"（这一楼开头是：「{shown}」）",
            which="text",
        )
    return post


# --------------------------------------------------------------------------- threads
#
# Opening a day's thread and closing a vote thread, exactly once.
#
# The same protocol as a reply (above): the intent is committed in
# ``post_attempts`` before anything is sent, the outcome after. Before a new thread is sent the
# game's section is looked at (``Poster.find_thread``: the newest thread with this subject by the
# director): a crash or an unclear answer after the forum made it, or a director who opened it by
# hand, leaves it there, and it is recorded instead of opened twice. A thread found there counts
# only when it is newer than the game's rules and sign-up threads and every earlier day's thread
# (an older one with the same subject is another game's). The tid is recorded in
# ``game_threads`` in the same transaction as the draft's ``posted`` state.
#
# A section that holds new threads for a moderator (新主题需要审核) does not list a waiting
# thread: after a send whose outcome is unknown (or when the listing's banner counts waiting
# threads) the director's own list of waiting threads is read too (``Poster.waiting_threads``);
# a waiting thread with this subject is recorded like the forum's post_newthread_mod_succeed
# answer (``how = moderated``: the day's thread from now on, shown once a moderator approves
# it). When that list cannot be read and the banner counts more waiting threads than bansha
# knows of (its own ``moderated`` threads the listing does not show yet), one of them may be this
# thread: nothing is sent — said once (``held``), the attempt kept as ``pending_moderation`` and
# looked for again every run — until the thread shows up, or the director sends it anyway
# (``bansha publish --id``). Never twice beats never missing (docs/rulings.md#threads-exactly-once).
#
# A discussion thread's 电梯 follows at once (docs/rulings.md#threads-elevator): drafted from the
# derivation at that moment, approved by the thread's approval (the draft's event says so), and
# sent right after the thread's first post, so it lands on floor 2 before players reply.
#
# Closing: once (an attempt row); an unclear answer is settled by reading whether the thread is
# closed. Without moderator rights the close draft is set aside with the forum's words and
# ``meta`` remembers it (:data:`pipeline.drafts.NO_RIGHTS_KEY`): said once, and no close is
# drafted again. Nothing is ever reopened.


@dataclass
class Opened:
    """What opening one thread did: its result (and its 电梯's), and the game with the tid."""

    game: Game
    results: list[PublishResult] = field(default_factory=list)
    #: why the run's later drafts are not tried (the 电梯 met a captcha, a login failure …)
    stop: str | None = None


def _known_tid(store: Store, game: Game, day: int, role: ThreadRole) -> int | None:
    """The day's thread of this role, from the file or opened by bansha (read now)."""
    for d in game.days:
        if d.day == day and (tid := getattr(d, role.value)) is not None:
            return int(tid)
    for row in store.opened_threads():
        if row["day"] == day and row["role"] == role.value:
            return int(row["tid"])
    return None


def _floor(game: Game, store: Store, day: int) -> int | None:
    """A thread found by its subject must be newer than the game's rules and sign-up threads
    and than every thread of an earlier day: an older one with the same subject is another
    game's (the same rule set's tag)."""
    tids = {t for n, _, t in game.thread_roles() if n < day}
    tids |= {t for t in (game.game.rules_thread, game.game.signup_thread) if t is not None}
    tids |= {int(r["tid"]) for r in store.opened_threads() if int(r["day"]) < day}
    return max(tids) if tids else None


def _before(ref: ThreadRef, since: datetime | None) -> bool:
    """The listed thread was started on a day before ``since`` (in the forum's own zone, to
    the day: the listing shows an older thread's date only)."""
    if since is None or ref.created_at is None:
        return False
    started = ref.created_at
    return started.date() < since.astimezone(started.tzinfo).date()


def _first_drafted(store: Store, draft: dict[str, Any]) -> datetime | None:
    """When bansha first drafted this thread (the earliest draft of its key)."""
    rows = list(
        store.query("SELECT MIN(created_at) AS at FROM drafts WHERE key = ?", [draft["key"]])
    )
    at = rows[0]["at"] if rows else None
    return datetime.fromisoformat(at) if at else None


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the section shows of a new thread before (or after) a send."""

    tid: int | None = None  # the thread: listed, or waiting for a moderator
    waiting: bool = False  # it waits for a moderator (新主题需要审核)
    hold: str | None = None  # no tid, but a waiting thread bansha cannot see may be it


def _look(
    poster: Poster,
    game: Game,
    store: Store,
    fid: int,
    subject: str,
    day: int,
    *,
    sent_before: bool,
    draft_id: int,
    since: datetime | None = None,
) -> _Seen:
    """This thread, when the section has it already (see the module's text). ``sent_before``:
    a send of it may have reached the forum (an attempt whose outcome is unknown); ``since``:
    when bansha first drafted it — a listed thread started on an earlier day is another
    game's, even where the game has no earlier thread to compare tids with."""
    floor = _floor(game, store, day)
    ref = poster.find_thread(fid, subject)
    if ref is not None and (floor is None or ref.tid > floor) and not _before(ref, since):
        return _Seen(int(ref.tid))
    waiting = poster.waiting_threads(fid, read_list=sent_before)
    if waiting.threads is not None:
        ref = waiting.find(subject)
        if ref is not None and (floor is None or ref.tid > floor):
            return _Seen(int(ref.tid), waiting=True)
        return _Seen()
    known = {
        int(r["tid"])
        for r in store.opened_threads()
        if r["how"] == "moderated" and int(r["tid"]) not in waiting.listed
    }
    unknown = waiting.banner - len(known)
    if not sent_before or unknown <= 0:
        return _Seen()
    return _Seen(
        hold=(
            f"版块 {fid} 显示导演账号有 {waiting.banner} 个主题正等待审核，其中 {unknown} 个"
            f"不是 bansha 记下的，可能就是上次结果不明的「{subject}」；待审核主题的列表读不到"
            f"（{waiting.problem}），为免开出两个帖子，没有再发。请在论坛“我的帖子 › 待审核”"
            f"中查看：有这个帖子就等版主审核（通过后 bansha 会自动登记）；没有的话用 "
            f"bansha publish 游戏文件 --id {draft_id} 照常开帖"
        )
    )


def _record(
    store: Store,
    game: Game,
    draft: dict[str, Any],
    tid: int,
    *,
    attempt_ids: list[int],
    outcome: str,
    how: str,
    at: datetime,
    note: str,
) -> Game:
    """The draft posted with its tid and the thread in ``game_threads``: one transaction."""
    role = ThreadRole(draft["role"])
    with store.atomic():
        _mark_posted(
            store,
            draft,
            attempt_ids=attempt_ids,
            outcome=outcome,
            pid=None,
            at=at,
            note=note,
            tid=tid,
        )
        store.record_opened_thread(
            day=int(draft["day"]),
            role=role.value,
            tid=tid,
            subject=draft["subject"],
            draft_id=int(draft["id"]),
            at=at.isoformat(),
            how=how,
        )
    return with_opened(game, [OpenedThread(int(draft["day"]), role, tid)])


def open_thread(
    store: Store,
    game: Game,
    poster: Poster,
    draft: dict[str, Any],
    tick: Callable[[], datetime],
    requested: bool,
    *,
    templates_dir: Path | str | None = None,
) -> Opened:
    """Open the approved new-thread ``draft`` in ``[forum] fid``, exactly once.

    The protocol of a new thread in the order of :func:`_publish_one`'s: look (a crash, a lost
    answer, the director by hand), the intent, the send, the outcome."""
    draft_id = int(draft["id"])
    fid = game.forum.fid
    if fid is None:
        message = "游戏文件没有 [forum] fid（游戏的版块），无法开新帖"
        return Opened(game, [_result(draft, "failed", message=message)])
    day, role, subject = int(draft["day"]), ThreadRole(draft["role"]), draft["subject"] or ""
    what = f"第{day}天的{THREAD_ROLE_TITLES[role]}"
    known = _known_tid(store, game, day, role)
    if known is not None:
        retire_opened(store, with_opened(game, [OpenedThread(day, role, known)]), now=tick())
        message = f"{what}已有帖子 tid={known}，没有再开一个"
        return Opened(game, [_result(draft, "skipped", message=message)])
    ts = _NewThread(
        store,
        game,
        poster,
        draft,
        tick,
        templates_dir,
        fid,
        subject,
        day,
        _first_drafted(store, draft),
    )
    seen_upto = _last_attempt_id(store, draft_id)
    before = _thread_before(ts, requested, seen_upto)
    if before is not None:
        return before
    begun = _begin(store, poster, draft, tick, seen_upto, subject + "\n" + draft["body"])
    if isinstance(begun, PublishResult):
        return Opened(game, [begun])
    attempt_id = begun
    answer = _send(
        store,
        draft,
        attempt_id,
        tick,
        # (a private thread by its role, whatever subject the director gave it)
        lambda guard: poster.new_thread(
            fid, subject, draft["body"], guard=guard, hidden_replies=author_only(game, role)
        ),
    )
    if answer.result is not None:
        return Opened(game, [answer.result])
    if answer.uncertain is not None:
        return _thread_uncertain(ts, attempt_id, answer.uncertain)
    return _thread_made(ts, attempt_id, answer.value)


@dataclass(frozen=True)
class _NewThread:
    """One new thread being opened: what every step of :func:`open_thread` reads."""

    store: Store
    game: Game
    poster: Poster
    draft: dict[str, Any]
    tick: Callable[[], datetime]
    templates_dir: Path | str | None
    fid: int
    subject: str
    day: int
    since: datetime | None  # when it was first drafted: the look goes back to then

    def look(self, *, sent_before: bool) -> _Seen:
        return _look(
            self.poster,
            self.game,
            self.store,
            self.fid,
            self.subject,
            self.day,
            sent_before=sent_before,
            draft_id=int(self.draft["id"]),
            since=self.since,
        )


def _thread_before(ts: _NewThread, requested: bool, seen_upto: int) -> Opened | None:
    """Look before anything is sent: the thread found, held for moderation, or an earlier
    attempt that must not be retried (a captcha, a refusal) gives the answer; None: send."""
    draft, store, game, tick = ts.draft, ts.store, ts.game, ts.tick
    draft_id, body_hash = int(draft["id"]), draft["body_hash"]
    attempts = [a for a in _attempts(store, draft_id, body_hash) if a["id"] <= seen_upto]
    unsure = [a for a in attempts if a["outcome"] is None or a["outcome"] in UNSURE_OUTCOMES]
    last = attempts[-1] if attempts else None
    # Look before anything is sent: a crash, a lost answer, or the director by hand.
    landed = [a for a in unsure if a["outcome"] != "captcha"]  # a captcha: nothing was sent
    seen = ts.look(sent_before=bool(landed))
    if seen.tid is not None:
        open_ids = [a["id"] for a in unsure if a["outcome"] is None]
        if not open_ids:
            open_ids = [_record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)]
        note = f"在版块中找到同名的新帖（导演账号发的）：tid={seen.tid}，没有再开"
        return _thread_found(ts, seen, open_ids, note)
    if seen.hold is not None and not requested:
        open_ids = [a["id"] for a in unsure if a["outcome"] is None]
        if open_ids:
            return _thread_held(ts, seen, open_ids)
        message = (
            "上次开帖的结果不明，导演账号待审核的主题里可能就有它，仍没有重发；确认论坛上"
            f"没有这个帖子后，用 bansha publish 游戏文件 --id {draft_id} 照常开帖"
        )
        return Opened(game, [_result(draft, "pending_moderation", message=message)])
    if last is not None and last["outcome"] == "captcha" and not requested:
        message = _thread_captcha(game, draft, None)
        return Opened(game, [_result(draft, "captcha", message=message, director=True, told=True)])
    if last is not None and last["outcome"] == "refused" and not requested:
        return Opened(game, [_refused_before(draft, last, "这个新帖")])
    _give_up(store, unsure, tick(), "上次开帖结果不明；版块中没有找到，视为没有开出")
    return None


def _thread_found(ts: _NewThread, seen: _Seen, attempt_ids: list[int], note: str) -> Opened:
    """The new thread found in the section: recorded as opened, then what follows an open."""
    tid = int(seen.tid or 0)
    if seen.waiting:
        note += "；它正等待版主审核，通过后才会显示"
    opened = _record(
        ts.store,
        ts.game,
        ts.draft,
        tid,
        attempt_ids=attempt_ids,
        outcome="found",
        how="moderated" if seen.waiting else "found",
        at=ts.tick(),
        note=note,
    )
    said = "论坛要求版主审核后才会显示这个新帖" if seen.waiting else ""
    res = _result(ts.draft, "found", url=ts.poster.thread_url(tid, 1), message=said)
    return _after_open(ts.store, opened, ts.poster, ts.draft, tid, ts.tick, ts.templates_dir, res)


def _thread_held(ts: _NewThread, seen: _Seen, attempt_ids: list[int]) -> Opened:
    """Said once: the open attempts kept as ``pending_moderation`` (looked for again)."""
    for attempt_id in attempt_ids:
        _finish(ts.store, attempt_id, ts.tick(), "pending_moderation", detail=seen.hold)
    return Opened(ts.game, [_result(ts.draft, "held", message=str(seen.hold))])


def _thread_uncertain(ts: _NewThread, attempt_id: int, uncertain: UncertainSend) -> Opened:
    """The new thread may have been made: look right away; if not found, the intent stays
    open so the next run looks again before opening."""
    try:
        seen = ts.look(sent_before=True)
    except PostError:
        seen = _Seen()
    if seen.hold is not None:
        return _thread_held(ts, seen, [attempt_id])
    if seen.tid is None:
        message = f"{uncertain}；下次运行会先在版块里找这个新帖，找不到才重开"
        return Opened(ts.game, [_result(ts.draft, "uncertain", message=message)])
    return _thread_found(ts, seen, [attempt_id], f"网络中断后在版块中找到：tid={seen.tid}")


def _thread_made(ts: _NewThread, attempt_id: int, made: NewThread) -> Opened:
    """The forum made the new thread: recorded as opened, then what follows an open."""
    draft = ts.draft
    tid = int(made.tid)
    note = f"已开新帖：tid={tid}「{ts.subject}」"
    if made.moderated:
        note += "（论坛要求版主审核后才显示）"
    game = _record(
        ts.store,
        ts.game,
        draft,
        tid,
        attempt_ids=[attempt_id],
        outcome="posted",
        how="moderated" if made.moderated else "posted",
        at=ts.tick(),
        note=note,
    )
    message = "论坛要求版主审核后才会显示这个新帖" if made.moderated else ""
    res = PublishResult(
        int(draft["id"]), draft["kind"], ts.day, tid, "posted", url=made.url, message=message
    )
    return _after_open(ts.store, game, ts.poster, draft, tid, ts.tick, ts.templates_dir, res)


def _after_open(
    store: Store,
    game: Game,
    poster: Poster,
    draft: dict[str, Any],
    tid: int,
    tick: Callable[[], datetime],
    templates_dir: Path | str | None,
    result: PublishResult,
) -> Opened:
    """The thread's result (with its tid), then, for a discussion thread, its 电梯. The thread
    is opened and recorded whatever befalls the 电梯: a 电梯 that failed is a result of its own,
    and a failure that would befall every later draft (a captcha, a login) stops them."""
    opened = Opened(game, [dataclasses.replace(result, tid=tid)])
    if draft["role"] != ThreadRole.DISCUSSION.value:
        return opened
    # the 电梯's own draft, once drafted (its result names it); the thread's until then
    elevator = dataclasses.replace(result, kind="elevator", tid=tid, pid=None, url=None)
    try:
        sent = send_elevator(store, game, poster, draft, tid, tick, templates_dir, opened)
    except DraftError as exc:  # e.g. the director's elevator.j2: the thread stays opened
        message = f"讨论帖已开出，但电梯没有起草：{exc}（改好模板后下一轮会起草电梯）"
        opened.results.append(dataclasses.replace(elevator, status="failed", message=message))
        return opened
    except (StoreError, PostError) as exc:  # before the 电梯 was sent (drafting, approving)
        failed, opened.stop = _failure(_elevator_row(elevator), exc)
        sent = [failed]
    opened.results += [
        dataclasses.replace(r, message=f"讨论帖已开出，但电梯没有发出：{r.message}")
        if not r.ok and r.message
        else r
        for r in sent
    ]
    return opened


def _elevator_row(result: PublishResult) -> dict[str, Any]:
    """A draft row standing for the 电梯 not drafted yet (only for its result's line)."""
    return {"id": result.draft_id, "kind": "elevator", "day": result.day, "tid": result.tid}


def send_elevator(
    store: Store,
    game: Game,
    poster: Poster,
    thread_draft: dict[str, Any],
    tid: int,
    tick: Callable[[], datetime],
    templates_dir: Path | str | None,
    opened: Opened | None = None,
) -> list[PublishResult]:
    """Draft the day's 电梯 for the discussion thread bansha just opened, approve it with the
    thread's approval (not once the director rejected a 电梯 of the day: then it waits for
    them), and send it now (exactly once, like any reply). A send's failure is its result; one
    that would befall every later draft of the run is also ``opened.stop``."""
    day = int(thread_draft["day"])
    now = tick()
    d = derive(game, store, as_of=now)
    res = d.days.get(day)
    ctx = elevator_context(game, res) if res is not None else None
    if ctx is None:
        return []
    templates = load_templates(templates_dir)
    specs = _specs(game, templates, DraftKind.ELEVATOR, day, ctx, tid=tid, action=DraftAction.REPLY)
    save_drafts(store, specs, now=now)
    results: list[PublishResult] = []
    for spec in specs:
        latest = _latest(store, spec.key)
        if latest is None or latest.state in (DraftState.POSTED, DraftState.REJECTED):
            continue
        if latest.state is DraftState.PENDING:
            if elevator_rejected(store, day):
                continue  # the director decides the day's 电梯 from now on
            approve(store, latest.id, now, note=elevator_note(int(thread_draft["id"]), day))
        row = next(iter(store.query("SELECT * FROM drafts WHERE id = ?", [latest.id])))
        try:
            results.append(_publish_one(store, game, poster, row, tick, False))
        except (StoreError, PostError) as exc:
            failed, stop = _failure(row, exc)
            results.append(failed)
            if stop is not None:
                if opened is not None:
                    opened.stop = stop
                break
    return results


def close_thread(
    store: Store,
    game: Game,
    poster: Poster,
    draft: dict[str, Any],
    tick: Callable[[], datetime],
    requested: bool,
) -> PublishResult:
    """Close (lock) the vote thread of the approved close ``draft``, once."""
    draft_id, tid, body_hash = int(draft["id"]), draft["tid"], draft["body_hash"]
    fid = game.forum.fid
    if fid is None or tid is None:
        return _result(draft, "failed", message="游戏文件没有 [forum] fid（游戏的版块），无法锁帖")
    tid = int(tid)
    if tid not in {t for _, _, t in game.thread_roles()}:
        message = f"帖子 tid={tid} 不是这局游戏的帖子；为免锁错，没有锁帖"
        return _result(draft, "failed", message=message)
    seen_upto = _last_attempt_id(store, draft_id)
    attempts = [a for a in _attempts(store, draft_id, body_hash) if a["id"] <= seen_upto]
    unsure = [a for a in attempts if a["outcome"] is None]
    last = attempts[-1] if attempts else None
    if unsure and poster.thread_closed(tid):
        note = f"上次锁帖结果不明；帖子 tid={tid} 在论坛上已锁定"
        return _closed(store, draft, [a["id"] for a in unsure], "closed", note, tick())
    _give_up(store, unsure, tick(), "上次锁帖结果不明；帖子没有锁定，视为没有锁")
    if last is not None and last["outcome"] == "refused" and not requested:
        return _refused_before(draft, last, "锁帖")
    begun = _begin(store, poster, draft, tick, seen_upto, None)
    if isinstance(begun, PublishResult):
        return begun
    attempt_id = begun
    try:
        answer = _send(
            store,
            draft,
            attempt_id,
            tick,
            lambda guard: poster.close_thread(fid, tid, guard=guard),
            keep=(NoModeratorRights,),
        )
    except NoModeratorRights as exc:
        return _no_rights(store, draft, attempt_id, fid, str(exc), tick())
    if answer.result is not None:
        return answer.result
    outcome = answer.value
    if answer.uncertain is not None:
        try:
            closed = poster.thread_closed(tid)
        except PostError:
            closed = False
        if not closed:
            message = f"{answer.uncertain}；下次运行会先看帖子是否已锁定"
            return _result(draft, "uncertain", message=message)
        outcome = "closed"
    already = outcome == "already_closed"
    note = f"帖子 tid={tid} " + ("在论坛上已是锁定状态" if already else "已锁帖")
    return _closed(store, draft, [attempt_id], outcome, note, tick())


def _closed(
    store: Store,
    draft: dict[str, Any],
    attempt_ids: list[int],
    outcome: str,
    note: str,
    at: datetime,
) -> PublishResult:
    """The close recorded: the attempts and the draft (``posted``), one transaction."""
    _mark_posted(store, draft, attempt_ids=attempt_ids, outcome=outcome, pid=None, at=at, note=note)
    said = "论坛上已是锁定状态" if outcome == "already_closed" else ""
    return _result(draft, "closed", message=said)


def _no_rights(
    store: Store, draft: dict[str, Any], attempt_id: int, fid: int, said: str, at: datetime
) -> PublishResult:
    """Said once: the attempt refused, the draft set aside with the forum's words, the store
    remembers (no close is drafted again), every other close draft waiting set aside too."""
    why = f"{said}；bansha 之后不再起草锁帖"
    _finish(store, attempt_id, at, "refused", detail=said)
    with store.atomic():
        store.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [
                NO_RIGHTS_KEY,
                json.dumps({"at": at.isoformat(), "fid": fid, "message": said}, ensure_ascii=False),
            ],
        )
        waiting = [
            int(r["id"])
            for r in store.query(
                "SELECT id FROM drafts WHERE kind = 'close' AND state IN ('pending', 'approved')"
            )
        ]
        for other in waiting:
            reject(store, other, why, at)
    return _result(draft, "no_rights", message=why)
