"""A voted day on the real forum: the tally, its result posted once, the vote thread closed, and
a crash between the forum's answer and bansha's record of it.

The director opens the day's threads (the game file names their tids); players vote with the
forum's own forms: a valid vote, a 改票 by 回复 (the quote Discuz writes, with its findpost
link), a vote for someone not in the game. The posts are then moved two hours back in the
database, as if the day had been played (a 改票 counts only an hour before the close), and the
day closed a minute ago.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import timedelta

import pytest

from pipeline.drafts import publish
from tests.live.support import Bansha, Forum, dz, game_text, now

RESULT = "【第1天警长竞选结果】"


@dataclass
class Day:
    discussion: int
    vote: int
    progress: int
    first_pid: int
    change_pid: int


def voted_day(forum: Forum, fid: int, bansha: Bansha) -> Day:
    director = forum.as_("导演L")
    tids = {
        role: director.new_thread(fid, f"[M135]第1天{title}", f"第1天{title}，请按格式发言")[0]
        for role, title in (("discussion", "讨论帖"), ("vote", "投票帖"), ("progress", "进程帖"))
    }
    vote = tids["vote"]
    jiaozi = forum.as_("饺子")
    first, _ = jiaozi.reply(vote, "投票对象：包子")
    forum.as_("包子").reply(vote, "投票对象：饺子")
    forum.as_("馄饨").reply(vote, "投票对象：不存在的人")
    change, _ = jiaozi.reply(vote, "改票对象：馄饨", repquote=first)
    for name in ("面条", "烧卖"):
        forum.as_(name).reply(vote, "投票对象：馄饨")
    forum.move_back(list(tids.values()), 2 * 3600)
    start = now()
    days = (
        f"\n[[days]]\nday = 1\nopens = {(start - timedelta(hours=3)).isoformat()}\n"
        f"closes = {(start - timedelta(minutes=1)).isoformat()}\n"
        + "".join(f"{role} = {tid}\n" for role, tid in tids.items())
    )
    bansha.game.write_text(game_text(forum, fid, days), "utf-8")
    return Day(tids["discussion"], vote, tids["progress"], first, change)


def result_posts(forum: Forum, tid: int) -> list[int]:
    return [int(p["pid"]) for p in forum.posts(tid) if RESULT in p["message"]]


def test_the_tally_and_its_result_posted_once(forum: Forum, fid: int, bansha: Bansha) -> None:
    day = voted_day(forum, fid, bansha)
    bansha.cycle()
    tally = bansha.json("tally", str(bansha.game), "--day", "1")
    verdicts = [(v["voter"], v["target"], v["status"]) for v in tally["votes"]]
    assert verdicts == [
        ("饺子", "包子", "superseded"),
        ("包子", "饺子", "counted"),
        ("馄饨", None, "invalid"),
        ("饺子", "馄饨", "counted"),
        ("面条", "馄饨", "counted"),
        ("烧卖", "馄饨", "counted"),
    ], verdicts
    assert "「不存在的人」不在名单中" in str(tally["votes"][2])
    change = tally["votes"][3]["ballot"]
    assert (change["kind"], change["evidence"]["pid"]) == ("change", day.change_pid)
    assert change["replied_to_pid"] == day.first_pid  # the findpost link in Discuz's quote
    counts = {c["candidate"]: c["voters"] for c in tally["tally"]["counts"]}
    assert counts == {"馄饨": ["饺子", "面条", "烧卖"], "饺子": ["包子"]}
    assert tally["elected"] == "馄饨"

    [draft] = bansha.approve("result")
    assert result_posts(forum, draft["tid"]) == []  # approved, not yet sent
    out = bansha.cycle()
    assert "已发出" in out, out
    [pid] = result_posts(forum, draft["tid"])
    [posted] = [d for d in bansha.drafts() if d["id"] == draft["id"]]
    assert posted["state"] == "posted" and posted["posted_pid"] == pid
    bansha.cycle()  # again: the forum still has it once
    assert result_posts(forum, draft["tid"]) == [pid]


def test_the_vote_thread_is_closed_and_refuses_players(
    forum: Forum, fid: int, bansha: Bansha
) -> None:
    day = voted_day(forum, fid, bansha)
    bansha.cycle()
    assert not forum.closed(day.vote)
    [draft] = bansha.approve("close")
    assert draft["tid"] == day.vote
    out = bansha.cycle()
    assert "已锁帖" in out, out
    assert forum.closed(day.vote)
    before = len(forum.posts(day.vote))
    with pytest.raises(dz.DriverError, match="关闭"):
        forum.as_("春卷").reply(day.vote, "投票对象：馄饨")
    assert len(forum.posts(day.vote)) == before
    assert "锁帖" not in bansha.cycle()  # closed once: nothing more to do


class Killed(BaseException):
    """The process dies here (nothing in bansha catches it)."""


def test_a_crash_after_the_forum_took_the_result_leaves_one_post(
    forum: Forum, fid: int, bansha: Bansha, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forum stored the reply and answered; bansha died before writing it down. The next
    cycle finds the post in the thread (by the draft's fingerprint), records it, and sends
    nothing."""
    voted_day(forum, fid, bansha)
    bansha.cycle()
    [draft] = bansha.approve("result")
    real = publish._mark_posted

    def die(*args: object, **kw: object) -> None:
        raise Killed

    monkeypatch.setattr(publish, "_mark_posted", die)
    with pytest.raises(Killed):
        bansha.cycle()
    [pid] = result_posts(forum, draft["tid"])  # the forum has it
    [left] = [d for d in bansha.drafts() if d["id"] == draft["id"]]
    assert left["state"] == "approved"  # bansha never recorded it

    monkeypatch.setattr(publish, "_mark_posted", real)
    bansha.cycle()
    assert result_posts(forum, draft["tid"]) == [pid]
    [done] = [d for d in bansha.drafts() if d["id"] == draft["id"]]
    assert done["state"] == "posted" and done["posted_pid"] == pid
    with sqlite3.connect(bansha.db) as db:
        outcomes = db.execute(
            "SELECT outcome, pid FROM post_attempts WHERE draft_id = ? ORDER BY id", [draft["id"]]
        ).fetchall()
    assert outcomes == [("found", pid)]  # the one attempt, closed by what the thread showed
