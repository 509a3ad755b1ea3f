"""derive's shortcuts change no verdict.

A re-derivation of a 20,000-post game now takes less than half the time it took (``python
bench/bench_derive.py --baseline REV`` prints both and compares a digest of every derived row).
It gets there by reading a discussion thread's posts as sketches (``Store.post_sketches``: no
Post, no HTML), the vote threads without their HTML, building each thread's activities once,
deduplicating and sorting them once, and counting each day's posts once (``conduct_flags`` takes
the day's counts) and reading a discussion thread by chunks (pipeline/derive/chunks.py). Here
each shortcut is taken away again — the posts read whole, the counts made again inside
``conduct_flags``, no chunk — and the derivation must be the same, value for value, on
the demo (fonts, white text, an edit, a delete) and on a long generated game (10 days, edits,
deletions, a 替补, a look at a past moment).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

import pytest

import pipeline.derive.day_votes as day_votes_mod
import pipeline.derive.days as days_mod
import pipeline.derive.flags as flags_mod
from pipeline.cycle import targets_due
from pipeline.derive import Derivation, derive, derived_rows
from pipeline.game.gamefile import Game, load_game
from pipeline.sim.simulator import SimClock
from pipeline.store import Store, open_store
from tests.pipeline.conftest import DEMO_GAME
from tests.pipeline.derive.test_derive_on_change import START, LongForum, long_game


def _whole_posts(run: Any, tid: int) -> list[Any]:
    """The path before: every post read whole (HTML included) for its activities."""
    return [p for p in run.store.posts(tid) if p.posted_at is None or p.posted_at <= run.as_of]


def slow_derive(game: Game, store: Store, as_of: datetime, monkeypatch: Any) -> Derivation:
    """derive without its shortcuts."""
    real_flags = flags_mod.conduct_flags

    def recounting(**kw: Any) -> Any:
        kw.pop("counts_by_day", None)
        return real_flags(**kw)

    with monkeypatch.context() as m:
        m.setattr(flags_mod, "_sketches_of", _whole_posts)
        m.setattr(flags_mod, "conduct_flags", recounting)
        for mod in (days_mod, day_votes_mod, flags_mod):  # each module that reads a thread's posts
            m.setattr(mod, "_posts_of", _posts_with_html)
        return derive(game, store, as_of=as_of, by_chunks=False)


def _posts_with_html(run: Any, tid: int | None) -> list[Any]:
    if tid is None:
        return []
    if tid not in run.posts_by_tid:
        run.posts_by_tid[tid] = _whole_posts(run, tid)
    return run.posts_by_tid[tid]


def _fields(day: Any) -> dict[str, Any]:
    """Every field of a day, its post counts' evidence made (a count read by chunks makes its
    evidence when read)."""
    counts = {
        p: dataclasses.replace(pc, evidence=tuple(pc.evidence)) for p, pc in day.counts.items()
    }
    return dataclasses.asdict(dataclasses.replace(day, counts=counts))


def substitute_player04(store: Store) -> None:
    """A 替补 takes 玩家04's slot from day 4 on: 玩家04's later posts are a non-player's."""
    store.db.table("journal_substitutions").insert(
        {
            "player": "玩家04",
            "uid": 999,
            "name": "替补甲",
            "from_at": (START + timedelta(days=3)).isoformat(),
            "recorded_at": START.isoformat(),
        }
    )


def assert_same(fast: Derivation, slow: Derivation) -> None:
    assert derived_rows(fast) == derived_rows(slow)
    assert fast.flags == slow.flags
    for n, day in slow.days.items():
        # every field of every day: ballots, verdicts, tallies, counts with their evidence …
        assert _fields(fast.days[n]) == _fields(day), f"day {n}"
    assert fast.outs == slow.outs and fast.ledger == slow.ledger


def test_post_sketches_read_what_posts_read(db):
    """Every field a sketch has is the post's, for every thread of the demo (marks, a deleted
    post, an edit); ``posts(html=False)`` differs from ``posts()`` only by the HTML."""
    store = open_store(db)
    try:
        tids = [r[0] for r in store.db.execute("SELECT DISTINCT tid FROM posts ORDER BY tid")]
        assert len(tids) >= 6
        marked = 0
        for tid in tids:
            posts, sketches = store.posts(tid), store.post_sketches(tid)
            assert [s.pid for s in sketches] == [p.pid for p in posts]
            for s, p in zip(sketches, posts, strict=True):
                for name in s._fields:
                    assert getattr(s, name) == getattr(p, name), (tid, p.pid, name)
                marked += bool(s.marks)
            bare = store.posts(tid, html=False)
            assert bare == [dataclasses.replace(p, message_html="") for p in posts]
        assert marked >= 3  # red, enlarged and white text are among them
    finally:
        store.close()


@pytest.mark.parametrize(
    "moment",
    [
        "2026-12-01T15:00:00+08:00",  # day 1 running
        "2026-12-01T22:30:00+08:00",  # day 1 closed
        "2026-12-02T20:40:00+08:00",  # day 2's last hour
        "2026-12-03T09:00:00+08:00",  # the end of the demo
    ],
)
def test_derive_with_shortcuts_is_derive_without_them_demo(db, moment, monkeypatch):
    game = load_game(DEMO_GAME, env={})
    store = open_store(db)
    try:
        as_of = datetime.fromisoformat(moment)
        fast = derive(game, store, as_of=as_of)
        assert_same(fast, slow_derive(game, store, as_of, monkeypatch))
    finally:
        store.close()


def test_derive_with_shortcuts_is_derive_without_them_long_game(tmp_path, monkeypatch):
    game = long_game()
    forum = LongForum(per_day=120)
    store = open_store(tmp_path / "long.db")
    try:
        # the forum read every 3 hours for 11 days: edits, deletions (renumbered floors)
        clock = SimClock(START)
        crawl = forum.crawler(store, clock)
        for now in (START + timedelta(hours=3 * i) for i in range(11 * 8)):
            clock.set(now)
            crawl(targets_due(game, now), False)
        # a 替补 takes 玩家04's slot from day 4 on: 玩家04's later posts are a non-player's
        substitute_player04(store)
        flagged = 0
        for as_of in (START + timedelta(days=4, hours=5), START + timedelta(days=11)):
            fast = derive(game, store, as_of=as_of)
            assert_same(fast, slow_derive(game, store, as_of, monkeypatch))
            flagged += len(fast.flags)
        assert flagged and sum(len(r.verdicts) for r in fast.days.values()) > 300
    finally:
        store.close()
