"""A reviewer's findings on the threads bansha opens and closes, each as a director
would see it (docs/rulings.md, "bansha 开帖与锁帖"):

* a forum write waits for the real time: a future ``--as-of`` opens and closes nothing early;
* ``bansha publish`` checks an approved new thread or close against the game file as it is now,
  not the times frozen in the draft: a closed day's thread is never opened (the draft is set
  aside, rulings#threads-draft), a close waits for the close the director moved;
* a first post is never edited once out: an approved new thread or close the game file now
  drafts otherwise (a moved time, a signature) waits until drafted again (rulings#threads-now);
* a 电梯 that fails after its discussion thread opened leaves the thread opened and recorded;
* once the director rejected a day's 电梯, no later 电梯 of that day is approved for them.

The game is the m135 example without tids and with ``[forum] fid`` (tests/pipeline/
threads_support.py): day 1 opens 12-01 10:00 and closes 22:00 (config/games/m135.toml:123-124).
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta

import pytest

from engine.state import Phase
from pipeline.derive import derive
from pipeline.discuz.poster import CaptchaRequired, PostError
from pipeline.drafts import (
    DraftError,
    DraftState,
    approve,
    get_draft,
    list_drafts,
    make_drafts,
    reject,
)
from pipeline.drafts.newthreads import newthread_specs
from pipeline.drafts.publish import publish_approved
from pipeline.drafts.templates import load_templates
from pipeline.store import open_store
from tests.pipeline.threads_support import (
    FID,
    ROOT,
    FakeForum,
    Thread,
    draft,
    game,
    publish,
    write_game,
)

AHEAD = datetime.fromisoformat("2026-11-30T11:00:00+08:00")
OPEN = datetime.fromisoformat("2026-12-01T10:05:00+08:00")
AFTER_CLOSE = datetime.fromisoformat("2026-12-01T23:00:00+08:00")
SUBJECTS = {"[M135]第1天讨论帖", "[M135]第1天投票帖", "[M135]进程帖"}  # one progress thread


def approve_all(store, kind: str = "newthread") -> list[int]:
    ids = []
    for d in list_drafts(store):
        if d.kind == kind and d.state is DraftState.PENDING:
            approve(store, d.id, AHEAD)
            ids.append(d.id)
    return ids


def edit(path, old: str, new: str) -> None:
    """The director edits day 1 in the game file."""
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")


def events(store, draft_id: int) -> list[str]:
    return [
        r["note"]
        for r in store.db.query(
            "SELECT note FROM draft_events WHERE draft_id = ? ORDER BY id", [draft_id]
        )
    ]


# --------------------------------------------------------------------------- the real clock


def test_a_future_as_of_opens_nothing_before_the_real_time(tmp_path):
    """``bansha cycle --as-of`` reviews conclusions; the forum is written at the real time:
    the run's time gate is min(as-of, the real clock)."""
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    draft(path, store, AHEAD)
    approve_all(store)
    real = AHEAD  # the real clock: the day before day 1 opens
    results = publish_approved(store, game(path, store), forum, now=OPEN, clock=lambda: real)
    assert results == [] and forum.threads == {}
    assert not [c for c in forum.calls if c.startswith("new_thread")]
    real = OPEN + timedelta(minutes=1)  # now the day has really opened
    results = publish_approved(store, game(path, store), forum, now=OPEN, clock=lambda: real)
    assert {t.subject for t in forum.threads.values()} == SUBJECTS
    assert all(r.ok for r in results), [r.line() for r in results]


def vote_thread_to_close(tmp_path):
    """Day 1's vote thread 31202 named in the file, its close approved in advance (drafted at
    21:00, not before 22:00)."""
    path = write_game(tmp_path / "g.toml", keep="vote = 31202", threads='close_vote = "auto"')
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    forum.threads[31202] = Thread(31202, FID, "[M135]第1天投票帖", forum.director)
    draft(path, store, datetime.fromisoformat("2026-12-01T21:00:00+08:00"))
    return path, store, forum


def test_a_future_as_of_closes_nothing_before_the_real_close(tmp_path):
    path, store, forum = vote_thread_to_close(tmp_path)
    real = datetime.fromisoformat("2026-12-01T21:30:00+08:00")
    publish_approved(store, game(path, store), forum, now=AFTER_CLOSE, clock=lambda: real)
    assert not forum.threads[31202].closed


# --------------------------------------------------------------------------- frozen times


def test_publish_after_the_day_closed_opens_nothing_and_sets_the_drafts_aside(tmp_path):
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    draft(path, store, AHEAD)
    ids = approve_all(store)
    assert len(ids) == 3
    results = publish(path, store, forum, AFTER_CLOSE)  # bansha publish, no cycle in between
    assert forum.threads == {}
    assert not [c for c in forum.calls if c.startswith("new_thread")]
    assert sorted(r.draft_id for r in results) == ids
    assert {r.status for r in results} == {"skipped"}
    lines = [r.line() for r in results]
    assert any("第1天已关门，第1天的讨论帖不再开出，此草稿作废" in line for line in lines), lines
    states = {d.id: d.state for d in list_drafts(store, include_superseded=True)}
    assert {states[i] for i in ids} == {DraftState.SUPERSEDED}
    assert "第1天已关门，第1天的投票帖不再开出，此草稿作废" in events(store, ids[1])
    assert publish(path, store, forum, AFTER_CLOSE) == []  # said once


def test_a_new_thread_waits_for_the_opening_the_director_moved(tmp_path):
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    draft(path, store, AHEAD)
    approve_all(store)
    edit(path, "opens = 2026-12-01T10:00:00+08:00", "opens = 2026-12-01T11:00:00+08:00")
    results = publish(path, store, forum, OPEN)  # 10:05: the draft says 10:00, the file 11:00
    assert forum.threads == {}
    assert {r.status for r in results} == {"waiting"}
    assert "游戏文件中第1天的讨论帖的开门时间已改为 12月1日 11:00，到时再开帖，现在没有开" in [
        r.message for r in results
    ]
    # 11:05: the vote and progress threads' first posts say nothing of the opening and go; the
    # discussion thread's says 讨论时间：12月1日 10:00 …, which is no longer so: it waits
    later = OPEN + timedelta(hours=1)
    results = publish(path, store, forum, later)
    assert {t.subject for t in forum.threads.values()} == SUBJECTS - {"[M135]第1天讨论帖"}
    [held] = [r for r in results if r.status == "waiting"]
    assert held.message == (
        "没有发出：它起草之后游戏文件改了这个帖子的标题或一楼（开门、截止时间，帖子名，签名……）；"
        "请先运行 bansha drafts make（或等下一轮 bansha cycle）按现在的记录重新起草"
    )
    # drafted again from the file as it is now, approved, sent: the opening it says is 11:00
    draft(path, store, later)
    approve_all(store)
    publish(path, store, forum, later)
    assert {t.subject for t in forum.threads.values()} == SUBJECTS
    [opened] = [t for t in forum.threads.values() if t.subject == "[M135]第1天讨论帖"]
    assert "讨论时间：12月1日 11:00 至 12月1日 22:00" in opened.posts[0][1]


def test_a_close_waits_for_the_close_the_director_moved(tmp_path):
    path, store, forum = vote_thread_to_close(tmp_path)
    [close] = [d for d in list_drafts(store) if d.kind == "close"]
    assert close.state is DraftState.APPROVED
    # the director moves the close to 23:00
    edit(path, "closes = 2026-12-01T22:00:00+08:00", "closes = 2026-12-01T23:00:00+08:00")
    results = publish(path, store, forum, datetime.fromisoformat("2026-12-01T22:05:00+08:00"))
    assert not forum.threads[31202].closed
    assert [(r.draft_id, r.status) for r in results] == [(close.id, "waiting")]
    assert results[0].message == (
        "游戏文件中第1天的投票帖的截止时间已改为 12月1日 23:00，截止后再锁帖，现在没有锁"
    )
    # 23:01: the close as drafted names 22:00, no longer the close: drafted again first (the
    # game file approves closes in advance, close_vote = "auto"), then sent
    after = datetime.fromisoformat("2026-12-01T23:01:00+08:00")
    results = publish(path, store, forum, after)
    assert [r.status for r in results] == ["waiting"] and not forum.threads[31202].closed
    assert results[0].message.startswith("没有发出：它起草之后游戏文件改了要锁的帖子或它的截止时间")
    draft(path, store, after)
    results = publish(path, store, forum, after)
    assert [r.status for r in results] == ["closed"] and forum.threads[31202].closed


def test_an_approved_new_thread_waits_when_the_director_edits_its_subject_or_signature(tmp_path):
    """A thread's first post is never edited once out: an approved new thread drafted before
    the director changed the file's [threads] subject or [drafts] signature is not opened as
    drafted, but drafted again (and approved again) first."""
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    draft(path, store, AHEAD)
    approved = approve_all(store)
    edit(path, 'director_signature = ""', 'director_signature = "导演乙"')
    results = publish(path, store, forum, OPEN)
    assert forum.threads == {}
    assert sorted(r.draft_id for r in results if r.status == "waiting") == sorted(approved)
    # the next drafting makes them anew, signed as the file says now; the old ones are gone
    draft(path, store, OPEN)
    assert {get_draft(store, i).state for i in approved} == {DraftState.SUPERSEDED}
    approve_all(store)
    publish(path, store, forum, OPEN)
    assert {t.subject for t in forum.threads.values()} == SUBJECTS
    assert all(t.posts[0][1].rstrip().endswith("导演乙") for t in forum.threads.values())


# --------------------------------------------------------------------------- the 电梯


def open_with_a_failing_elevator(tmp_path, error: PostError):
    """Day 1's threads approved and sent at 10:05; every reply (the 电梯) raises ``error``."""
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()

    def reply(tid, body, guard=None):
        raise error

    forum.reply = reply
    draft(path, store, AHEAD)
    approve_all(store)
    return path, store, forum, publish(path, store, forum, OPEN)


def test_a_captcha_on_the_elevator_keeps_the_thread_opened_and_stops_the_run(tmp_path):
    path, store, forum, results = open_with_a_failing_elevator(
        tmp_path, CaptchaRequired("论坛要求输入验证码才能回复", during="post")
    )
    [thread] = [r for r in results if r.kind == "newthread" and r.status == "posted"]
    [discussion] = [t for t in forum.threads.values() if t.subject == "[M135]第1天讨论帖"]
    assert thread.tid == discussion.tid
    assert game(path, store).day(1).discussion == discussion.tid  # recorded
    [elevator] = [r for r in results if r.kind == "elevator"]
    assert elevator.status == "captcha" and "论坛要求输入验证码才能回复" in elevator.message
    assert elevator.draft_id != thread.draft_id  # the 电梯's own draft
    # the later threads are not tried: they would meet the captcha too (as any send's would)
    later = [r for r in results if r.kind == "newthread" and r.draft_id != thread.draft_id]
    assert [r.status for r in later] == ["skipped", "skipped"]
    assert all("没有尝试：论坛要求验证码" in r.message for r in later)
    assert len(forum.threads) == 1


def test_a_forum_error_on_the_elevator_is_the_elevators_not_the_threads(tmp_path):
    _path, store, forum, results = open_with_a_failing_elevator(
        tmp_path, PostError("论坛暂时无法访问（无法连接论坛）")
    )
    [thread] = [r for r in results if r.kind == "newthread" and r.status == "posted"]
    [elevator] = [r for r in results if r.kind == "elevator"]
    assert elevator.status == "failed"
    assert elevator.line().endswith(
        "未发出：讨论帖已开出，但电梯没有发出：论坛暂时无法访问（无法连接论坛）"
    )
    assert thread.tid in forum.threads
    attempts = [
        a["outcome"] for a in store.db.query("SELECT outcome FROM post_attempts ORDER BY id")
    ]
    assert attempts == ["posted", "failed"]  # the thread's, then the 电梯's


def test_a_rejected_elevator_is_the_directors_from_then_on(tmp_path):
    """rulings#threads-elevator: a 电梯 drafted after the run that opened the thread is approved
    by the thread's approval — not once the director rejected that day's 电梯."""
    path, store, _forum, _results = open_with_a_failing_elevator(
        tmp_path, PostError("论坛暂时无法访问（无法连接论坛）")
    )
    [first] = [d for d in list_drafts(store) if d.kind == "elevator"]
    assert first.state is DraftState.APPROVED  # by the thread's approval; not sent
    reject(store, first.id, "二楼我自己发", OPEN)
    # the director's own elevator.j2 changes the text: a new 电梯 is drafted
    mine = tmp_path / "templates"
    mine.mkdir()
    shutil.copy(ROOT / "config" / "templates" / "elevator.j2", mine / "elevator.j2")
    with (mine / "elevator.j2").open("a", encoding="utf-8") as f:
        f.write("\n（点名字只看该玩家）\n")
    later = OPEN + timedelta(minutes=5)
    g = game(path, store)
    created = make_drafts(g, store, derive(g, store, as_of=later), now=later, templates_dir=mine)
    [second] = [d for d in list_drafts(store) if d.kind == "elevator" and d.id in created]
    assert second.state is DraftState.PENDING
    assert not [n for n in events(store, second.id) if "一并批准" in n]


def test_a_private_vote_thread_is_opened_private_whatever_subject_the_director_gave_it(tmp_path):
    """`[threads] author_only = ["vote"]`: the vote thread is opened 回帖仅作者可见 by its role,
    also when the director renamed it (bansha drafts edit --subject); the others stay public."""
    from pipeline.drafts import edit_subject

    path = write_game(tmp_path / "g.toml", threads='author_only = ["vote"]')
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    draft(path, store, AHEAD)
    [vote] = [d for d in list_drafts(store) if d.kind == "newthread" and d.role == "vote"]
    edit_subject(store, vote.id, "[M135]第一天 投票（仅导演可见）", AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)
    opened = sorted(c for c in forum.calls if c.startswith("new_thread"))
    assert opened == [
        "new_thread [M135]第1天讨论帖",
        "new_thread [M135]第一天 投票（仅导演可见） (仅作者可见)",
        "new_thread [M135]进程帖",
    ]


def _substitute(store, player: str, uid: int, account: str, at: datetime) -> None:
    row = {"player": player, "uid": uid, "name": account, "from_at": at.isoformat()}
    store.insert("journal_substitutions", [{**row, "recorded_at": at.isoformat()}])


def test_an_approved_elevator_waits_when_a_record_changes_who_is_in_it(tmp_path):
    """The 电梯 follows the 替补 recorded (each player's link is to the account playing the slot
    now). Approved with its thread but not sent (the forum failed), then a 替补 is recorded: it
    is not sent as it is (floor 2 would link the replaced account); drafted again, approved by
    the thread's approval as before, it goes with the 替补's account."""
    from pipeline.cycle import ensure_change_counters

    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    ensure_change_counters(store)  # as every cycle keeps them
    forum = FakeForum()
    fails = PostError("论坛暂时无法访问（无法连接论坛）")

    def reply(tid, body, guard=None):
        raise fails

    forum.reply = reply
    draft(path, store, AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)
    [first] = [d for d in list_drafts(store) if d.kind == "elevator"]
    assert first.state is DraftState.APPROVED and "authorid=9001" not in first.body
    del forum.reply  # the forum answers again
    later = OPEN + timedelta(minutes=10)
    _substitute(store, "青柠汽水", 9001, "替补甲", AHEAD)  # from before the opening
    results = publish(path, store, forum, later + timedelta(minutes=1))
    [held] = [r for r in results if r.draft_id == first.id]
    assert held.status == "waiting" and "起草之后，游戏的记录已经变了" in held.message
    [discussion] = [t for t in forum.threads.values() if t.subject == "[M135]第1天讨论帖"]
    assert len(discussion.posts) == 1  # floor 1 only: nothing went to floor 2
    draft(path, store, later + timedelta(minutes=2))
    [again] = [d for d in list_drafts(store) if d.kind == "elevator" and d.id != first.id]
    assert again.state is DraftState.APPROVED and "authorid=9001" in again.body
    publish(path, store, forum, later + timedelta(minutes=3))
    assert [b for _pid, b in discussion.posts][1] == again.body


# --------------------------------------------------------------------------- after a win


def test_no_thread_opens_for_a_day_after_the_game_was_won(tmp_path):
    """m135.txt:43 「如此往复，直到游戏结束」 — once the engine has a winner (m135.txt:14): won
    by day 1's vote, day 2 opens no thread; won in night 1, day 2 opens only its discussion
    thread, where its opening announces the night and the win — no vote thread for a vote
    that never comes."""
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    g = game(path, store)
    day2 = datetime.fromisoformat("2026-12-02T09:00:00+08:00")  # drafted ahead of day 2
    templates = load_templates()

    def roles(won):
        specs = newthread_specs(g, as_of=day2, templates=templates, won=won)
        return sorted(s.role for s in specs if s.day == 2)

    assert roles(None) == ["discussion", "progress", "vote"]  # (the game's one progress thread)
    assert roles(Phase.night(1)) == ["discussion"]
    assert roles(Phase.day(1)) == []


def test_a_new_thread_the_file_now_drafts_otherwise_cannot_be_approved(tmp_path):
    """The director moved day 1's close after its threads were drafted: the vote thread's
    first post says 投票截止：12月1日 22:00, no longer so — approving it is refused with the
    reason; the progress thread's first post names no time and is approved as usual."""
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    draft(path, store, AHEAD)
    edit(path, "closes = 2026-12-01T22:00:00+08:00", "closes = 2026-12-01T23:00:00+08:00")
    waiting = {d.role: d for d in list_drafts(store) if d.kind == "newthread"}
    with pytest.raises(DraftError) as refused:
        approve(store, waiting["vote"].id, AHEAD, game=game(path, store))
    assert str(refused.value) == (
        f"第 {waiting['vote'].id} 号草稿不能批准：它起草之后游戏文件改了这个帖子的标题或一楼"
        "（开门、截止时间，帖子名，签名……）；请先运行 bansha drafts make（或等下一轮 bansha cycle）"
        "按现在的记录重新起草"
    )
    approved = approve(store, waiting["progress"].id, AHEAD, game=game(path, store))
    assert approved.state is DraftState.APPROVED


def test_a_new_thread_from_the_directors_own_template_opens_as_drafted(tmp_path):
    """The director's own newthread.j2 ([drafts] templates): the first post is checked against
    that template, not bansha's own, so an unchanged game file opens the thread as drafted."""
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "newthread.j2").write_text("{{ subject }}：{{ closes }} 截止\n", "utf-8")
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    g = game(path, store)
    make_drafts(g, store, derive(g, store, as_of=AHEAD), now=AHEAD, templates_dir=folder)
    approve_all(store)
    results = publish_approved(store, game(path, store), forum, now=OPEN, templates_dir=folder)
    assert {r.status for r in results} <= {"posted"}
    assert {t.subject for t in forum.threads.values()} == SUBJECTS
    [vote] = [t for t in forum.threads.values() if t.subject == "[M135]第1天投票帖"]
    assert vote.posts[0][1].startswith("[M135]第1天投票帖：12月1日 22:00 截止")
