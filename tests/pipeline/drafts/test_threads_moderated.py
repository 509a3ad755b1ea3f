"""Day 3's threads opened by bansha in a section that holds new threads for a moderator
(Discuz: 新主题需要审核), against the local simulator through the real ``Poster``.

A waiting thread is not listed, so looking in the listing after a lost answer or a crash finds
nothing; the director's own list of waiting threads (the banner 您有 N 个主题正等待审核中 links
it) does. What a director checks: one thread per role, never two; the waiting thread is recorded
with its tid like the forum's post_newthread_mod_succeed answer and, once a moderator approves
it, is the day's thread every command uses; when bansha can only count the waiting threads it
holds the send and says so once, and ``bansha publish --id`` still sends; an unmoderated
section is unchanged. docs/rulings.md#threads-exactly-once says the rule.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pipeline.drafts import DraftState, get_draft
from pipeline.drafts.publish import publish_approved
from pipeline.sim.simulator import SimRequest, SimResponse
from tests.pipeline.drafts.test_threads_sim import SUBJECTS, World, _opened
from tests.pipeline.threads_support import Crash, game

DISCUSSION, VOTE, PROGRESS = SUBJECTS


def waiting_titled(w: World, subject: str) -> list[int]:
    return [t for t in w.sim.pending_threads() if w.sim._thread(t).subject == subject]


def every_copy(w: World, subject: str) -> list[int]:
    return w.titled(subject) + waiting_titled(w, subject)


def posts(w: World, since: int, what: str) -> list[SimRequest]:
    return [
        r for r in w.sim.requests[since:] if r.method == "POST" and r.query.get("action") == what
    ]


def newthread_draft(w: World, subject: str) -> int:
    [row] = w.store.db.query(
        "SELECT id FROM drafts WHERE kind = 'newthread' AND subject = ?", [subject]
    )
    return int(row["id"])


@pytest.fixture
def moderated(tmp_path: Path):
    w = World(tmp_path, moderate_threads=True)
    yield w
    w.store.close()


def _moderator_approves(w: World) -> None:
    for tid in w.sim.pending_threads():
        w.sim.approve_thread(tid)


def test_a_lost_answer_leaves_one_waiting_thread_that_becomes_the_days_thread(moderated):
    w = moderated
    _opened(w)
    w.sim.faults.add("lost_answer", match="action=newthread")

    results = w.publish()

    assert all(r.ok for r in results), [r.line() for r in results]
    assert [len(every_copy(w, s)) for s in SUBJECTS] == [1, 1, 1]
    [tid] = waiting_titled(w, DISCUSSION)
    recorded = {r["role"]: (r["tid"], r["how"]) for r in w.store.opened_threads()}
    assert recorded["discussion"] == (tid, "moderated")  # like post_newthread_mod_succeed
    [line] = [r.line() for r in results if r.tid == tid and r.kind == "newthread"]
    assert "已在版块中找到已开的新帖" in line and "版主审核" in line
    # the 电梯 is the waiting thread's floor 2 (its author may reply to it)
    assert "【电梯】第3天" in w.sim.stored_message(w.sim._thread(tid).posts[1].pid)

    before = len(w.sim.requests)
    assert w.publish() == []  # every run after: nothing more is sent
    assert posts(w, before, "newthread") == []

    _moderator_approves(w)
    assert w.titled(DISCUSSION) == [tid]
    g = game(w.path, w.store)  # what every command loads (GameContext → game_for_store)
    assert (g.day(3).discussion, g.day(3).vote, g.day(3).progress) == tuple(
        w.titled(s)[0] for s in SUBJECTS
    )


def test_a_crash_right_after_the_post_leaves_one_waiting_thread(moderated):
    w = moderated
    _opened(w)

    def crash(request: SimRequest, response: SimResponse) -> None:
        if request.method == "POST" and request.query.get("action") == "newthread":
            w.after = None
            raise Crash

    w.after = crash
    with pytest.raises(Crash):
        w.publish()
    [tid] = w.sim.pending_threads()  # the forum kept it for a moderator; bansha died
    [open_attempt] = w.store.db.query("SELECT * FROM post_attempts WHERE outcome IS NULL")

    results = w.publish()

    assert all(r.ok for r in results), [r.line() for r in results]
    assert [len(every_copy(w, s)) for s in SUBJECTS] == [1, 1, 1]
    [outcome] = w.store.db.query(
        "SELECT outcome FROM post_attempts WHERE id = ?", [open_attempt["id"]]
    )
    assert outcome["outcome"] == "found"
    subject = w.sim._thread(tid).subject
    recorded = {r["subject"]: (r["tid"], r["how"]) for r in w.store.opened_threads()}
    assert recorded[subject] == (tid, "moderated")
    _moderator_approves(w)
    assert w.titled(subject) == [tid]


def _held(tmp_path: Path) -> tuple[World, int, list[Any]]:
    """A moderated section whose waiting list cannot be read (家园 closed): day 3's discussion
    thread's answer is lost; only the banner's count is left."""
    w = World(tmp_path, moderate_threads=True, space_closed=True)
    _opened(w)
    w.sim.faults.add("lost_answer", match="action=newthread")
    return w, newthread_draft(w, DISCUSSION), w.publish()


def test_with_only_the_banners_count_the_send_is_held_and_said_once(tmp_path):
    w, draft_id, first = _held(tmp_path)

    [held] = [r for r in first if r.draft_id == draft_id]
    assert held.status == "held" and held.notice  # the cycle says it once, as a warning
    assert "您" not in held.message and "等待审核" in held.message
    assert f"bansha publish 游戏文件 --id {draft_id}" in held.message
    assert "家园功能尚未开启" in held.message  # why the list was not read
    assert len(every_copy(w, DISCUSSION)) == 1
    assert get_draft(w.store, draft_id).state is DraftState.APPROVED

    before = len(w.sim.requests)
    [again] = w.publish()  # the next run looks again, quietly, and sends nothing
    assert again.status == "pending_moderation" and again.ok and not again.notice
    assert posts(w, before, "newthread") == []
    assert len(every_copy(w, DISCUSSION)) == 1
    w.store.close()


def test_a_held_thread_is_recorded_once_the_moderator_approves_it(tmp_path):
    w, draft_id, _ = _held(tmp_path)
    [tid] = waiting_titled(w, DISCUSSION)
    _moderator_approves(w)

    results = w.publish()

    [found] = [r for r in results if r.draft_id == draft_id]
    assert [r.kind for r in results] == ["newthread", "elevator"]  # its 电梯 follows
    assert (found.draft_id, found.status, found.tid) == (draft_id, "found", tid)
    assert game(w.path, w.store).day(3).discussion == tid
    assert every_copy(w, DISCUSSION) == [tid]
    w.store.close()


def test_publish_with_the_drafts_id_sends_a_held_thread_anyway(tmp_path):
    w, draft_id, _ = _held(tmp_path)

    results = publish_approved(
        w.store, game(w.path, w.store), w.poster(), now=w.now(), ids=[draft_id]
    )

    [sent] = [r for r in results if r.draft_id == draft_id]
    assert sent.status == "posted"  # the director checked: not there, send it
    assert len(every_copy(w, DISCUSSION)) == 2
    w.store.close()


def test_a_waiting_thread_bansha_knows_of_does_not_hold_the_next_one(tmp_path):
    """The banner counts the discussion thread bansha recorded (post_newthread_mod_succeed):
    the vote thread, whose send died before it reached the forum, is sent."""
    w = World(tmp_path, moderate_threads=True, space_closed=True)
    _opened(w)

    def crash(request: SimRequest, response: SimResponse) -> None:
        form = request.method == "GET" and request.query.get("mod") == "forumdisplay"
        if form and "orderby" not in request.query and len(w.sim.pending_threads()) == 1:
            w.after = None  # reading the form of the second thread
            raise Crash

    w.after = crash
    with pytest.raises(Crash):
        w.publish()
    assert len(w.sim.pending_threads()) == 1

    results = w.publish()

    assert all(r.ok for r in results), [r.line() for r in results]
    assert [len(every_copy(w, s)) for s in SUBJECTS] == [1, 1, 1]
    w.store.close()


def test_an_unmoderated_section_never_reads_the_waiting_list(tmp_path):
    w = World(tmp_path, moderators=["导演"])
    _opened(w)
    w.sim.faults.add("lost_answer", match="action=newthread")

    results = w.publish()

    assert all(r.ok for r in results), [r.line() for r in results]
    assert [len(w.titled(s)) for s in SUBJECTS] == [1, 1, 1]
    assert {r["how"] for r in w.store.opened_threads()} == {"found", "posted"}
    assert not [r for r in w.sim.requests if r.path.endswith("home.php")]
    w.store.close()
