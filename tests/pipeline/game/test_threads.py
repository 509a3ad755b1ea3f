"""Each day's threads opened and closed by bansha, against a stand-in of the
forum side of ``Poster`` (tests/pipeline/threads_support.py).

What a director checks: the day's threads are drafted ahead of the opening with the subject
"[M135]第1天讨论帖", sent only once approved and not before the day opens, exactly once through a
crash before or after the forum made the thread and through a lost answer; the tid bansha got is
recorded and used (the running tally goes to the vote thread bansha opened); a tid written in the
game file wins; the 电梯 follows the discussion thread's first post at once; the vote thread is
closed once after its close, and without moderator rights bansha says so once and drafts no
close again.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta

import pytest

from parsers.records import Post, ThreadPage
from pipeline.drafts import DraftState, approve, draft_events, get_draft, list_drafts
from pipeline.game.gamefile import ThreadRole
from pipeline.game.threads import OpenedThread, thread_subject, with_opened
from pipeline.store import open_store
from tests.pipeline.threads_support import (
    FID,
    ROOT,
    Crash,
    FakeForum,
    draft,
    game,
    publish,
    write_game,
)

BEFORE = datetime.fromisoformat("2026-11-30T09:00:00+08:00")  # 25 h before day 1 opens
AHEAD = datetime.fromisoformat("2026-11-30T11:00:00+08:00")  # 23 h before
OPENS = datetime.fromisoformat("2026-12-01T10:00:00+08:00")
OPEN = datetime.fromisoformat("2026-12-01T10:05:00+08:00")
CLOSED = datetime.fromisoformat("2026-12-01T22:01:00+08:00")


@pytest.fixture
def world(tmp_path):
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    yield path, store, FakeForum()
    store.close()


def newthreads(store, day=1):
    return {
        d.role: d
        for d in list_drafts(store)
        if d.kind == "newthread" and d.day == day and d.state is not DraftState.SUPERSEDED
    }


def approve_all(store, kind="newthread"):
    for d in list_drafts(store):
        if d.kind == kind and d.state is DraftState.PENDING:
            approve(store, d.id, AHEAD)


def test_drafted_ahead_of_the_opening_with_the_rule_sets_tag_and_the_day(world):
    path, store, _forum = world
    assert draft(path, store, BEFORE) == []  # more than [threads] draft_hours (24) ahead
    draft(path, store, AHEAD)
    drafts = newthreads(store)
    # m135 has a discussion, a vote and a progress thread (m135.txt:197, 206)
    assert set(drafts) == {"discussion", "vote", "progress"}
    assert drafts["discussion"].subject == "[M135]第1天讨论帖"
    assert drafts["vote"].subject == "[M135]第1天投票帖"
    assert drafts["progress"].subject == "[M135]进程帖"  # one for the whole game (default)
    assert all(d.not_before == OPENS.isoformat() for d in drafts.values())
    assert all(d.action == "newthread" and d.tid is None for d in drafts.values())
    assert "讨论时间：12月1日 10:00 至 12月1日 22:00" in drafts["discussion"].body
    # drafting again with nothing new drafts nothing
    assert draft(path, store, AHEAD) == []


def test_a_tid_in_the_game_file_wins_and_retires_a_waiting_draft(tmp_path):
    path = write_game(tmp_path / "g.toml")
    store = open_store(tmp_path / "g.db")
    draft(path, store, AHEAD)
    approve_all(store)
    write_game(tmp_path / "g.toml", keep="discussion = 31201")
    draft(path, store, AHEAD)
    d = get_draft(
        store,
        next(x.id for x in list_drafts(store, include_superseded=True) if x.role == "discussion"),
    )
    assert d.state is DraftState.SUPERSEDED
    assert "tid=31201" in draft_events(store, d.id)[-1]["note"]
    forum = FakeForum()
    publish(path, store, forum, OPEN)
    assert [t.subject for t in forum.threads.values()] == ["[M135]第1天投票帖", "[M135]进程帖"]


def test_not_sent_before_the_day_opens_then_opened_once_and_recorded(world):
    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    assert publish(path, store, forum, AHEAD) == []  # approved, but the day has not opened
    assert forum.calls == []
    results = publish(path, store, forum, OPEN)
    subjects = sorted(t.subject for t in forum.threads.values())
    assert subjects == ["[M135]第1天投票帖", "[M135]第1天讨论帖", "[M135]进程帖"]
    opened = {r["role"]: r for r in store.opened_threads()}
    by_subject = {t.subject: t.tid for t in forum.threads.values()}
    assert opened["vote"]["tid"] == by_subject["[M135]第1天投票帖"]
    assert opened["vote"]["draft_id"] == newthreads(store)["vote"].id
    g = game(path, store)
    assert g.day(1).vote == by_subject["[M135]第1天投票帖"]
    assert g.day(2).progress == by_subject["[M135]进程帖"]  # the game's one progress thread
    assert all(r.ok for r in results), [r.line() for r in results]
    # run again: nothing is sent twice
    forum.calls.clear()
    publish(path, store, forum, OPEN)
    assert not [c for c in forum.calls if c.startswith("new_thread")]


def test_the_elevator_lands_on_floor_2_with_the_threads_approval(world):
    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)
    tid = game(path, store).day(1).discussion
    posts = forum.threads[tid].posts
    assert len(posts) == 2 and "【电梯】第1天" in posts[1][1]
    assert f"tid={tid}&authorid=" in posts[1][1]
    elevator = next(d for d in list_drafts(store) if d.kind == "elevator")
    assert elevator.state is DraftState.POSTED and elevator.tid == tid
    notes = [e["note"] for e in draft_events(store, elevator.id)]
    thread_draft = newthreads(store)["discussion"].id
    assert any(f"随第 {thread_draft} 号草稿" in n for n in notes), notes


@pytest.mark.parametrize("fault", ["crash_before", "crash_after"])
def test_a_crash_around_the_send_leaves_one_thread_and_its_tid(world, fault):
    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    forum.fault = fault
    with pytest.raises(Crash):
        publish(path, store, forum, OPEN)
    publish(path, store, forum, OPEN)  # the next cycle
    subjects = [t.subject for t in forum.threads.values()]
    assert sorted(subjects) == sorted(set(subjects)) and len(subjects) == 3
    vote_tid = next(t.tid for t in forum.threads.values() if t.subject == "[M135]第1天投票帖")
    assert {r["role"]: r["tid"] for r in store.opened_threads()}["vote"] == vote_tid
    first = newthreads(store)["discussion"]  # the first sent: the crash hit it
    attempts = list(store.db.query("SELECT * FROM post_attempts WHERE draft_id = ?", [first.id]))
    outcomes = [a["outcome"] for a in attempts]
    assert outcomes == (["failed", "posted"] if fault == "crash_before" else ["found"])


def test_a_lost_answer_is_settled_by_finding_the_thread_in_the_same_run(world):
    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    forum.fault = "lost_answer"
    results = publish(path, store, forum, OPEN)
    assert len(forum.threads) == 3
    assert results[0].status == "found" and results[0].tid in forum.threads


def test_a_thread_the_director_opened_by_hand_is_found_not_opened_again(world):
    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    by_hand = forum.open_by_hand(FID, "[M135]第1天投票帖")
    publish(path, store, forum, OPEN)
    assert [t.subject for t in forum.threads.values()].count("[M135]第1天投票帖") == 1
    assert game(path, store).day(1).vote == by_hand


def test_the_running_tally_goes_to_the_vote_thread_bansha_opened(world):
    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)
    g = game(path, store)
    vote_tid = g.day(1).vote
    a, b, c = g.players[:3]
    posts = tuple(
        Post(
            tid=vote_tid,
            pid=950000 + i,
            floor=i + 2,
            author=p.name,
            uid=p.uid,
            posted_at=OPEN + timedelta(minutes=i + 1),
            message_html=f"投票对象：{c.name}",
            text=f"投票对象：{c.name}",
        )
        for i, p in enumerate((a, b))
    )
    page = ThreadPage(tid=vote_tid, page=1, total_pages=1, posts=posts)
    store.save_page(
        page, source="html", url="t", status=200, headers={}, body=b"p", fetched_at=OPEN, ppp=None
    )
    later = OPEN + timedelta(minutes=5)
    draft(path, store, later)
    tally = next(d for d in list_drafts(store) if d.kind == "running_tally")
    # m135 announces in the vote thread (engine/rulesets/m135.py announce_in)
    assert tally.tid == vote_tid and c.name in tally.body


def _day_1_opened(path, store, forum):
    """Day 1's threads drafted, approved and opened; drafted again after (its close)."""
    draft(path, store, AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)
    draft(path, store, OPEN)


def test_the_vote_thread_is_closed_once_after_its_close(world):
    path, store, forum = world
    _day_1_opened(path, store, forum)
    close = next(d for d in list_drafts(store) if d.kind == "close")
    vote = game(path, store).day(1).vote
    assert close.tid == vote and close.not_before == "2026-12-01T22:00:00+08:00"
    approve(store, close.id, OPEN)
    publish(path, store, forum, OPEN)
    assert not forum.threads[vote].closed  # not before the close
    results = publish(path, store, forum, CLOSED)
    assert forum.threads[vote].closed
    assert [r.status for r in results] == ["closed"]
    forum.calls.clear()
    publish(path, store, forum, CLOSED)
    assert forum.calls == []


def test_a_lost_answer_to_the_close_is_settled_by_reading_the_thread(world):
    path, store, forum = world
    _day_1_opened(path, store, forum)
    approve_all(store, "close")
    forum.fault = "crash_after"
    with pytest.raises(Crash):
        publish(path, store, forum, CLOSED)
    results = publish(path, store, forum, CLOSED)
    assert [r.status for r in results] == ["closed"]
    assert forum.calls.count(f"close_thread {game(path, store).day(1).vote}") == 1


def test_close_vote_auto_is_approved_by_the_game_file(tmp_path):
    path = write_game(tmp_path / "g.toml", threads='close_vote = "auto"')
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    draft(path, store, AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)
    draft(path, store, OPEN)
    close = next(d for d in list_drafts(store) if d.kind == "close")
    assert close.state is DraftState.APPROVED
    assert "close_vote" in draft_events(store, close.id)[-1]["note"]
    publish(path, store, forum, CLOSED)
    assert forum.threads[close.tid].closed


def test_without_moderator_rights_it_says_so_once_and_drafts_no_close_again(world):
    path, store, forum = world
    forum.moderator = False
    _day_1_opened(path, store, forum)
    approve_all(store, "close")
    results = publish(path, store, forum, CLOSED)
    assert [r.status for r in results] == ["no_rights"]
    assert (
        results[0].notice
        and "没有锁帖：导演账号「[M135]导演」没有版块 42 的管理权限" in results[0].line()
    )
    close = next(d for d in list_drafts(store) if d.kind == "close")
    assert close.state is DraftState.REJECTED
    # said once: the next runs try nothing and say nothing
    forum.calls.clear()
    assert publish(path, store, forum, CLOSED) == []
    assert forum.calls == []
    # and day 2's vote thread gets no close draft
    draft(path, store, datetime.fromisoformat("2026-12-02T10:30:00+08:00"))
    assert [d.day for d in list_drafts(store) if d.kind == "close"] == [1]


def test_the_file_tid_wins_over_the_store_and_the_progress_thread_carries_on(tmp_path):
    path = write_game(tmp_path / "g.toml", keep="vote = 31202")
    store = open_store(tmp_path / "g.db")
    g = game(path, store)
    merged = with_opened(
        g,
        [
            OpenedThread(1, ThreadRole.VOTE, 777),
            OpenedThread(1, ThreadRole.DISCUSSION, 778),
            OpenedThread(1, ThreadRole.PROGRESS, 779),
        ],
    )
    assert merged.day(1).vote == 31202 and merged.day(1).discussion == 778
    assert [d.progress for d in merged.days] == [779, 779, 779]
    assert merged.day(2).discussion is None
    assert thread_subject(g, 3, ThreadRole.DISCUSSION) == "[M135]第3天讨论帖"


# --------------------------------------------------------------------------- the game file


def test_the_subject_pattern_is_checked_when_the_file_is_loaded(tmp_path):
    from pipeline.game.gamefile import GameFileError, load_game

    path = write_game(tmp_path / "g.toml", threads='subject = "{tag}第{day}天{kind}"')
    with pytest.raises(GameFileError) as err:
        load_game(path, env={}, check_login=False)
    assert "threads.subject" in str(err.value) and "{kind}" in str(err.value)
    path = write_game(tmp_path / "g.toml", threads='subject = "{title} D{day} {role}"')
    g = load_game(path, env={}, check_login=False)
    assert thread_subject(g, 2, ThreadRole.VOTE) == "[M135]『让子弹飞』 D2 投票帖"


def test_a_sun_day_with_only_first_closes_gets_both_rounds_vote_threads(tmp_path):
    """m209.txt:377-378: the 太阳[日不落] day has a first 正午 round and an extra one; with
    [forum] fid bansha opens the first round's thread at the opening and the extra round's when
    the first round ends."""
    from pipeline.drafts import load_templates, newthread_specs
    from pipeline.game.gamefile import load_game

    text = (ROOT / "config" / "games" / "m209.toml").read_text("utf-8")
    text = re.sub(r"(?m)^(discussion|vote|progress|first_vote) = \d+.*\n", "", text)
    text = text.replace("[director]", "fid = 7\n\n[director]", 1)
    text = text.replace(
        "# first_closes = 2026-12-06T15:00:00+08:00", "first_closes = 2026-12-06T15:00:00+08:00"
    )
    path = tmp_path / "m209.toml"
    path.write_text(text, "utf-8")
    g = load_game(path, env={}, check_login=False)
    day = next(d for d in g.days if d.first_closes is not None)
    specs = newthread_specs(g, as_of=day.opens, templates=load_templates())
    mine = {s.role: s for s in specs if s.day == day.day}
    assert mine["first_vote"].not_before == day.opens
    assert mine["vote"].not_before == day.first_closes
    assert "额外一轮" in mine["vote"].body


def test_check_warns_about_a_day_without_tids_when_there_is_no_fid(tmp_path):
    from click.testing import CliRunner

    from pipeline.cli import cli

    path = write_game(tmp_path / "g.toml", fid=None)
    out = CliRunner().invoke(cli, ["check", str(path)])
    assert out.exit_code == 0, out.output
    assert "注意：第1天没有讨论帖、投票帖、进程帖的 tid，游戏文件也没有 [forum] fid" in out.output
    path = write_game(tmp_path / "g.toml")
    out = CliRunner().invoke(cli, ["check", str(path)])
    assert "没有讨论帖" not in out.output


def test_check_finds_a_subject_the_forum_would_refuse_as_too_long(tmp_path):
    """Discuz refuses a subject over 80 characters (post_subject_toolong): ``bansha check``
    says so before the game, not the cycle that drafts the thread on the eve of the day."""
    from click.testing import CliRunner

    from pipeline.cli import cli

    tag = "[" + "很长的游戏名" * 12 + "]"  # 74 characters: "…第1天讨论帖" is exactly 80
    path = write_game(tmp_path / "g.toml", threads=f'tag = "{tag}"')
    out = CliRunner().invoke(cli, ["check", str(path)])
    assert out.exit_code == 0, out.output
    assert "新帖标题" not in out.output  # 80 is allowed
    tag = tag[:-1] + "局]"  # 75: every day's discussion and vote subject is 81
    path = write_game(tmp_path / "g.toml", threads=f'tag = "{tag}"')
    out = CliRunner().invoke(cli, ["check", str(path)])
    assert out.exit_code == 0, out.output  # a warning: the file is loaded and checked
    long = [line for line in out.output.splitlines() if line.startswith("注意：新帖标题")]
    said = f"注意：新帖标题「{tag}第1天讨论帖」有 81 个字，超过论坛允许的 80 个字"
    assert any(line.startswith(said) for line in long), long
    assert len(long) == 6, long  # days 1-3, discussion and vote; the progress subject is 78
    short = write_game(tmp_path / "h.toml")
    out = CliRunner().invoke(cli, ["check", str(short)])
    assert "新帖标题" not in out.output


def test_bansha_threads_lists_the_file_bansha_and_the_drafts(tmp_path):
    from click.testing import CliRunner

    from pipeline.cli import cli

    path = write_game(tmp_path / "g.toml", keep="progress = 31200")
    store = open_store(tmp_path / "g.db")
    forum = FakeForum()
    draft(path, store, AHEAD)
    for d in list_drafts(store):
        if d.role == "vote":
            approve(store, d.id, AHEAD)
    publish(path, store, forum, OPEN)
    store.close()
    env = {"BANSHA_DB": str(tmp_path / "g.db")}
    out = CliRunner().invoke(cli, ["threads", str(path), "--json"], env=env)
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    day1 = {t["role"]: t for t in data["days"][0]["threads"]}
    assert day1["progress"]["source"] == "file" and day1["progress"]["tid"] == 31200
    assert day1["vote"]["source"] == "bansha" and day1["vote"]["tid"] in forum.threads
    assert day1["discussion"]["source"] is None
    assert day1["discussion"]["newthread"]["state"] == "pending"
    out = CliRunner().invoke(cli, ["threads", str(path)], env=env)
    assert f"投票帖：tid={day1['vote']['tid']}（bansha 于 12-01 10:05 开出）" in out.output
    assert "讨论帖：待开：草稿 #" in out.output
    out = CliRunner().invoke(cli, ["drafts", str(path)], env=env)
    assert "「[M135]第1天讨论帖」" in out.output
    assert "bansha 开的帖子" in out.output and f"投票帖 tid={day1['vote']['tid']}" in out.output


def test_schedule_runs_a_cycle_at_each_opening_when_bansha_opens_the_threads(tmp_path):
    from click.testing import CliRunner

    from pipeline.cli import cli

    path = write_game(tmp_path / "g.toml")
    out = CliRunner().invoke(cli, ["schedule", str(path)])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("# 第1天开门"))
    opens = datetime.fromisoformat("2026-12-01T10:00:00+08:00").astimezone()
    assert lines[at + 1].startswith(f"{opens:%M %H %d %m} * BANSHA_ONLY_ON={opens:%Y-%m-%d} ")
    without = write_game(tmp_path / "h.toml", fid=None)
    out = CliRunner().invoke(cli, ["schedule", str(without)])
    assert "开门" not in out.output


# --------------------------------------------------------------------------- the cycle


def _cycle(path, store, forum, now):
    from pipeline.cycle import run_cycle
    from pipeline.discuz.crawl import CrawlReport

    g = game(path, store)
    return run_cycle(
        g,
        store,
        now=now,
        crawl=lambda targets, full: CrawlReport(run_id="t"),
        draft=lambda d: draft(path, store, now),
        publish=lambda: publish(path, store, forum, now),
    )


def test_a_cycle_drafts_the_threads_when_the_draft_hours_begin_without_new_input(world):
    path, store, forum = world
    first = _cycle(path, store, forum, BEFORE)
    assert first.drafted == []
    quiet = _cycle(path, store, forum, BEFORE + timedelta(minutes=5))
    assert quiet.skipped  # nothing new: not derived again
    at = _cycle(path, store, forum, AHEAD)  # 23 h before the opening: a moment passed
    assert not at.skipped and len(at.drafted) == 3


def test_no_moderator_rights_is_a_warning_of_the_cycle_once_not_a_failure(world):
    path, store, forum = world
    forum.moderator = False
    _cycle(path, store, forum, AHEAD)
    approve_all(store)
    _cycle(path, store, forum, OPEN)  # opens the threads
    # the next cycle sees the vote thread bansha opened (game_threads is an input): its close
    assert _cycle(path, store, forum, OPEN + timedelta(minutes=5)).drafted
    approve_all(store, "close")
    report = _cycle(path, store, forum, CLOSED)
    assert report.errors == []
    assert [w for w in report.warnings if "管理权限" in w] != []
    again = _cycle(path, store, forum, CLOSED + timedelta(minutes=5))
    assert not [w for w in again.warnings if "管理权限" in w]
    assert again.errors == []


def test_every_command_sees_the_opened_threads_through_its_game_context(world, tmp_path):
    from pipeline.cli import GameContext
    from pipeline.game.gamefile import load_game

    path, store, forum = world
    ctx = GameContext(path, load_game(path, env={}, check_login=False), tmp_path / "g.db")
    assert ctx.game.day(1).vote is None  # nothing opened yet
    draft(path, store, AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)
    assert ctx.game.day(1).vote is None  # read once per command …
    assert ctx.refresh_threads().day(1).vote == game(path, store).day(1).vote  # … or again
    fresh = GameContext(path, ctx.file_game, tmp_path / "g.db")
    assert fresh.game.day(1).vote == game(path, store).day(1).vote
    assert fresh.file_game.day(1).vote is None  # the file itself is untouched
    ctx.close()
    fresh.close()


def test_zhenyan_gets_an_inquiry_thread_but_not_on_the_sheriff_election_day():
    """zhenyan.txt:147: the questions go to the sheriff — none before day 1 elects one."""
    from pipeline.game.gamefile import load_game
    from pipeline.game.threads import day_roles

    g = load_game(ROOT / "config" / "games" / "zhenyan.toml", env={}, check_login=False)
    assert ThreadRole.INQUIRY not in day_roles(g, g.day(1))
    assert day_roles(g, g.day(2)) == [
        ThreadRole.DISCUSSION,
        ThreadRole.VOTE,
        ThreadRole.PROGRESS,
        ThreadRole.INQUIRY,
    ]
    assert thread_subject(g, 2, ThreadRole.INQUIRY).endswith("第2天询问帖")


def test_an_approved_opening_waits_for_the_thread_bansha_opens_then_goes_after_the_elevator(
    world,
):
    """docs/rulings.md#threads-waiting-replies: the day-open post of day 2 was approved before
    its discussion thread existed; it waits (no failure), is drafted again for the new thread
    (now linking the vote thread bansha opened), approved again, and lands on floor 3, after
    the 电梯."""
    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    publish(path, store, forum, OPEN)  # day 1's threads
    night = "2026-12-02T02:00:00+08:00"  # the director records night 1's out
    row = {"player": "青柠汽水", "at": night, "cause": "第1晚出局", "recorded_at": night}
    store.insert("journal_outs", [row])
    draft(path, store, CLOSED)  # day 1 closed: its result, day 2's opening, day 2's threads
    opening = next(d for d in list_drafts(store) if d.kind == "day_open" and d.day == 2)
    assert opening.tid is None
    approve(store, opening.id, CLOSED)
    approve_all(store)  # day 2's new threads
    results = publish(path, store, forum, CLOSED)
    assert all(r.draft_id != opening.id for r in results)  # waits quietly, not a failure
    day2 = datetime.fromisoformat("2026-12-02T10:01:00+08:00")
    publish(path, store, forum, day2)  # day 2's threads and the 电梯
    draft(path, store, day2 + timedelta(minutes=1))
    again = next(
        d for d in list_drafts(store) if d.kind == "day_open" and d.day == 2 and d.tid is not None
    )
    vote = game(path, store).day(2).vote
    assert again.state is DraftState.PENDING and f"tid={vote}" in again.body
    assert get_draft(store, opening.id).state is DraftState.SUPERSEDED
    approve(store, again.id, day2)
    publish(path, store, forum, day2 + timedelta(minutes=2))
    tid = game(path, store).day(2).discussion
    bodies = [b for _pid, b in forum.threads[tid].posts]
    assert len(bodies) == 3 and "【电梯】" in bodies[1] and bodies[2] == again.body


def test_a_new_thread_never_approved_is_set_aside_when_its_day_closes(world):
    path, store, _forum = world
    draft(path, store, AHEAD)
    draft(path, store, CLOSED)  # nobody approved day 1's threads
    day1 = [d for d in list_drafts(store, include_superseded=True) if d.kind == "newthread"]
    waiting = [d for d in day1 if d.day == 1 and d.state is not DraftState.SUPERSEDED]
    assert waiting == []
    notes = [draft_events(store, d.id)[-1]["note"] for d in day1 if d.day == 1]
    assert sum("第1天已关门" in n for n in notes) == 2  # the discussion and the vote thread
    # the game's one progress thread is drafted again with day 2 (it opens within 24 h)
    progress = [d for d in list_drafts(store) if d.role == "progress"]
    assert [d.day for d in progress] == [2]


def test_bansha_threads_does_not_say_bansha_opened_a_thread_the_director_opened(world):
    # the director opened the day's vote thread by hand (a captcha, say): bansha found it in
    # the forum and recorded it (docs/rulings.md: 导演手动开的同名主题也因此被认出来) —
    # the listing says so, and says "bansha … 开出" only of a thread bansha opened
    from click.testing import CliRunner

    from pipeline.cli import cli

    path, store, forum = world
    draft(path, store, AHEAD)
    approve_all(store)
    by_hand = forum.open_by_hand(FID, "[M135]第1天投票帖")
    publish(path, store, forum, OPEN)
    env = {"BANSHA_DB": str(store.path)}
    store.close()
    out = CliRunner().invoke(cli, ["threads", str(path)], env=env)
    assert out.exit_code == 0, out.output
    assert (
        f"投票帖：tid={by_hand}（导演账号发的同名主题，bansha 于 12-01 10:05 在版块中找到并登记，"
        "没有再开）" in out.output
    )
    opened_by_bansha = [line for line in out.output.splitlines() if "开出）" in line]
    assert opened_by_bansha and all(str(by_hand) not in line for line in opened_by_bansha)


def test_zhenyan_closes_its_inquiry_thread_an_hour_before_the_day(tmp_path):
    """zhenyan.txt:188 「询问贴会比正常讨论和投票贴提前1小时关闭」: the inquiry thread gets its
    close draft like a vote thread, due an hour before the day's close (the rule set's class
    says when: ``InquiryRules.close_before``); m135 has no inquiry thread to close."""
    from pipeline.drafts import close_specs
    from pipeline.drafts.publish import due_at
    from pipeline.game.gamefile import load_game

    text = (ROOT / "config" / "games" / "zhenyan.toml").read_text("utf-8")
    path = tmp_path / "zhenyan.toml"
    path.write_text(text.replace("[director]", "fid = 42\n\n[director]", 1), "utf-8")
    g = load_game(path, env={}, check_login=False)
    noon = datetime.fromisoformat("2026-12-02T12:00:00+08:00")
    specs = {s.role: s for s in close_specs(g, as_of=noon, no_rights=False) if s.day == 2}
    inquiry = specs["inquiry"]
    assert inquiry.tid == 52113
    assert inquiry.not_before == datetime.fromisoformat("2026-12-02T20:00:00+08:00")
    assert specs["vote"].not_before == datetime.fromisoformat("2026-12-02T21:00:00+08:00")
    assert "提前 1 小时关闭" in inquiry.body and "zhenyan.txt:188" in inquiry.body
    assert "《狼人真言》规则 · 行动时限" in inquiry.body
    row = {"action": "close", "day": 2, "role": "inquiry", "not_before": None}
    assert due_at(g, row) == datetime.fromisoformat("2026-12-02T20:00:00+08:00")
    # a rule set without an inquiry thread: the vote thread only
    m135 = load_game(write_game(tmp_path / "m135.toml", keep="vote = 4001"), env={})
    day1 = datetime.fromisoformat("2026-12-01T12:00:00+08:00")
    assert {s.role for s in close_specs(m135, as_of=day1, no_rights=False)} == {"vote"}


def _zhenyan_opened_by_bansha(tmp_path):
    """The zhenyan example with no tid written and a [forum] fid: bansha opens every thread."""
    from pipeline.game.gamefile import load_game

    text = (ROOT / "config" / "games" / "zhenyan.toml").read_text("utf-8")
    text = re.sub(r"(?m)^(discussion|vote|progress|inquiry) = \d+.*\n", "", text)
    text = text.replace("[director]", "fid = 7\n\n[director]", 1)
    path = tmp_path / "zhenyan.toml"
    path.write_text(text, "utf-8")
    return load_game(path, env={}, check_login=False)


def test_the_zhenyan_inquiry_thread_says_when_it_closes(tmp_path):
    """zhenyan.txt:188 询问贴会比正常讨论和投票贴提前1小时关闭，逾期则今天不再能询问问题，
    警长也不允许继续回答。"""
    from pipeline.drafts import load_templates, newthread_specs

    g = _zhenyan_opened_by_bansha(tmp_path)
    day = next(d for d in g.days if d.day == 2)
    specs = newthread_specs(g, as_of=day.opens, templates=load_templates())
    (inquiry,) = [s for s in specs if s.day == 2 and s.role == "inquiry"]
    assert "本帖 12月2日 20:00 关闭（比讨论帖和投票帖提前1小时）" in inquiry.body
    # zhenyan.txt:167-168 只能用该格式猜测词语：【第X个词语是XX吗？】
    assert "猜词只能用这个格式：【第X个词语是XX吗？】（不带【】的是普通提问）" in inquiry.body
    # zhenyan.txt:147 每名角色一天只能询问3次
    assert "每名角色每天可以在本帖向警长询问 3 次是否类问题" in inquiry.body


def test_the_inquiry_thread_states_the_rule_sets_own_limit(tmp_path, monkeypatch):
    """The number of questions a day the inquiry thread's first post states is the rule set's
    (zhenyan.txt:165 每名角色每天可以在询问贴向警长询问3次问题), not a number of the template:
    a rule set allowing 2 says 2."""
    import dataclasses

    from engine.rulesets import get_ruleset
    from pipeline.drafts import load_templates, newthread_specs, newthreads

    g = _zhenyan_opened_by_bansha(tmp_path)
    rs = get_ruleset(g.game.ruleset)
    assert rs.inquiry is not None
    limit_two = dataclasses.replace(rs.inquiry, daily_limit=2)

    class TwoQuestions:
        inquiry = limit_two

        def __getattr__(self, name):
            return getattr(rs, name)

    monkeypatch.setattr(newthreads, "get_ruleset", lambda _id: TwoQuestions())
    day = next(d for d in g.days if d.day == 2)
    specs = newthread_specs(g, as_of=day.opens, templates=load_templates())
    (inquiry,) = [s for s in specs if s.day == 2 and s.role == "inquiry"]
    assert "每名角色每天可以在本帖向警长询问 2 次是否类问题" in inquiry.body
