"""A day run from cron against the simulator, with only ``approve`` typed by hand."""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from tests.pipeline.conftest import bansha, forum_world


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def forum(tmp_path):
    with forum_world(tmp_path, at("2026-12-02T20:30:00+08:00")) as world:
        yield world


def director_posts(sim):
    """The director's posts in the day-2 threads."""
    return [
        p
        for tid in (2011, 2012)
        for p in sim._thread(tid).posts
        if p.author == "导演" and not p.first
    ]


def test_a_day_from_cron_with_only_approve_by_hand(forum):
    sim, clock, game, env = forum
    scripted = len(director_posts(sim))  # the director's posts the script itself wrote
    # 21:30, the last half hour: the cycle crawls, counts and drafts a running tally and a reminder
    clock.set(at("2026-12-02T21:30:00+08:00"))
    assert bansha(env, "cycle", str(game), "--as-of", "2026-12-02T21:30:00+08:00") == ""
    listing = bansha(env, "drafts", str(game))
    assert "计票" in listing and "投票提醒" in listing
    # nothing new: nothing drafted, nothing changed
    out = bansha(env, "cycle", str(game), "--as-of", "2026-12-02T21:30:00+08:00", "--verbose")
    assert "没有新草稿" in out and "结论没有变化" in out
    # the next morning: the day closed, the result is drafted, nothing is posted unapproved
    clock.set(at("2026-12-03T09:00:00+08:00"))
    out = bansha(env, "cycle", str(game), "--as-of", "2026-12-03T09:00:00+08:00", "--verbose")
    assert "已关门、重读全帖" in out
    assert len(director_posts(sim)) == scripted  # nothing posted unapproved
    listing = bansha(env, "drafts", str(game))
    result_id = int(re.search(r"#(\d+)\s+投票结果\s+第2天", listing).group(1))
    before = len(director_posts(sim))  # nothing is posted unapproved
    shown = bansha(env, "drafts", "show", str(game), str(result_id))
    assert "饺子" in shown
    # the director approves; the next cycle posts it, exactly once
    bansha(env, "drafts", "approve", str(game), str(result_id))
    bansha(env, "cycle", str(game), "--as-of", "2026-12-03T09:05:00+08:00")
    posted = director_posts(sim)[before:]
    assert len(posted) == 1
    assert "饺子" in posted[0].revisions[-1].message
    bansha(env, "cycle", str(game), "--as-of", "2026-12-03T09:10:00+08:00")
    assert len(director_posts(sim)) == before + 1
    assert "已发出" in bansha(env, "drafts", str(game), "--all")
