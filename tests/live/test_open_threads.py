"""A day's threads opened by bansha on the real forum, and read back by its crawler.

The game file names the section (``[forum] fid``) and no tids: ``bansha cycle`` drafts the
day's three threads, nothing reaches the forum before the director approves them, the next
cycle opens each once as the director (the 电梯 on floor 2 of the discussion thread), and the
crawler then reads every post, floor and author as the forum's own API gives them. A crash
right after the forum created a thread still leaves one thread of each.
"""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from pipeline.drafts import publish
from tests.live.support import DIRECTOR, Bansha, Forum, day_toml, game_text, now

SUBJECTS = ("[M135]第1天讨论帖", "[M135]第1天投票帖", "[M135]第1天进程帖")


def test_the_days_threads_open_once_after_approval_and_are_read_back(
    forum: Forum, fid: int, bansha: Bansha
) -> None:
    start = now()
    days = day_toml(start - timedelta(minutes=1), start + timedelta(hours=2))
    bansha.game.write_text(game_text(forum, fid, days), "utf-8")
    bansha.run("check", str(bansha.game))

    bansha.cycle()
    assert sorted(d["subject"] for d in bansha.drafts() if d["kind"] == "newthread") == sorted(
        SUBJECTS
    )
    assert forum.subjects(fid) == []  # drafted, not approved: nothing on the forum
    bansha.approve("newthread")
    out = bansha.cycle()
    assert out.count("已开新帖") == 3, out

    threads = forum.subjects(fid)
    assert sorted(s for _tid, s, _a in threads) == sorted(SUBJECTS)
    assert {a for _tid, _s, a in threads} == {DIRECTOR}
    tid = {s: t for t, s, _a in threads}
    listed = bansha.json("threads", str(bansha.game))["days"][0]["threads"]
    assert {t["role"]: t["tid"] for t in listed} == {
        "discussion": tid[SUBJECTS[0]],
        "vote": tid[SUBJECTS[1]],
        "progress": tid[SUBJECTS[2]],
    }
    assert {t["source"] for t in listed} == {"bansha"}
    elevator = forum.posts(tid[SUBJECTS[0]])
    assert len(elevator) == 2 and "电梯" in elevator[1]["message"]

    # players write; the crawler reads them back with the forum's floors and authors
    vote, talk = tid[SUBJECTS[1]], tid[SUBJECTS[0]]
    forum.as_("饺子").reply(vote, "投票对象：包子")
    forum.as_("包子").reply(talk, "我是好人，大家别投我")
    forum.as_("馄饨").reply(talk, "包子发言有点急")
    bansha.cycle()
    for t in (vote, talk):
        truth = [
            (int(p["pid"]), int(p["position"]), p["author"], int(p["authorid"]))
            for p in forum.posts(t)
        ]
        listed = bansha.json("posts", str(bansha.game), "--day", "1")["threads"]
        [crawled] = [x["posts"] for x in listed if x["tid"] == t]
        assert [(p["pid"], p["floor"], p["author"], p["uid"]) for p in crawled] == truth

    # another cycle: no second copy of anything
    bansha.cycle()
    assert len(forum.subjects(fid)) == 3
    assert len(forum.posts(talk)) == 4


class Killed(BaseException):
    """The process dies here (nothing in bansha catches it)."""


def test_a_crash_after_the_forum_opened_a_thread_leaves_one_thread(
    forum: Forum, fid: int, bansha: Bansha, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forum created the first thread and bansha died before recording its tid: the next
    cycle finds it in the section's listing (same subject, by the director, started after the
    draft) and opens only the other two."""
    start = now()
    days = day_toml(start - timedelta(minutes=1), start + timedelta(hours=2))
    bansha.game.write_text(game_text(forum, fid, days), "utf-8")
    bansha.cycle()
    bansha.approve("newthread")
    real = publish._record

    def die(*args: object, **kw: object) -> None:
        raise Killed

    monkeypatch.setattr(publish, "_record", die)
    with pytest.raises(Killed):
        bansha.cycle()
    [(first, subject, _a)] = forum.subjects(fid)  # on the forum, not in bansha's store
    monkeypatch.setattr(publish, "_record", real)
    bansha.cycle()
    threads = forum.subjects(fid)
    assert sorted(s for _t, s, _a in threads) == sorted(SUBJECTS)
    listed = bansha.json("threads", str(bansha.game))["days"][0]["threads"]
    assert [t["tid"] for t in listed if t["subject"] == subject] == [first]
    with sqlite3.connect(bansha.db) as db:
        outcomes = db.execute(
            "SELECT outcome FROM post_attempts WHERE draft_id = (SELECT id FROM drafts "
            "WHERE subject = ? AND kind = 'newthread') ORDER BY id",
            [subject],
        ).fetchall()
    assert outcomes == [("found",)]
