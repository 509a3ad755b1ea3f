"""A discussion thread read by chunks gives what reading it whole gives, and costs what is new.

derive reads a day's discussion thread by chunks of floors and re-reads only the chunks written
since the last derivation (pipeline/derive/chunks.py). Here the chunks are made small (4 floors)
so that every page crosses them, and the derivation by chunks — its stored materials carried from
one derivation to the next, as cron's cycles carry them — is compared with reading every thread
whole (``by_chunks=False``), value for value: on the long game (10 days, edits, deletions that
renumber the floors, a 替补, a director's out and proxy vote, a look at a past moment) and under
generated sequences of pages, edits, marks, deletes and director records. Then what a derivation
re-reads is counted: nothing when nothing is new, the chunk of a new page or of an edit only.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pipeline.derive.chunks as chunks_mod
from parsers.records import Mark, MarkKind, Post, PostState, ThreadPage
from pipeline.cycle import targets_due
from pipeline.derive import derive
from pipeline.sim.simulator import SimClock
from pipeline.store import Store, open_store
from tests.pipeline.derive.test_derive_on_change import (
    NAMES,
    START,
    LongForum,
    Scripted,
    long_game,
)
from tests.pipeline.derive.test_derive_speed import assert_same, substitute_player04


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks_mod, "CHUNK_BITS", 2)


def _made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the chunk materials made (each one is a chunk re-read from its posts)."""
    made: list[int] = []
    real = chunks_mod.make_material

    def counting(*args: Any, **kw: Any) -> bytes:
        made.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(chunks_mod, "make_material", counting)
    return made


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the stored materials read."""
    loaded: list[int] = []
    real = chunks_mod.load

    def counting(material: bytes) -> Any:
        loaded.append(len(material))
        return real(material)

    monkeypatch.setattr(chunks_mod, "load", counting)
    return loaded


def _same_both_ways(game: Any, store: Store, as_of: Any) -> Any:
    fast = derive(game, store, as_of=as_of)
    assert_same(fast, derive(game, store, as_of=as_of, by_chunks=False))
    return fast


def _out_and_proxy(store: Store) -> None:
    """The director records 玩家07 out on day 3 and casts 玩家09's vote on day 5."""
    with store.atomic():
        store.db.table("journal_outs").insert(
            {
                "player": "玩家07",
                "at": (START + timedelta(days=2, hours=3)).isoformat(),
                "cause": "导演判出局",
                "recorded_at": START.isoformat(),
            }
        )
        store.db.table("journal_proxy_votes").insert(
            {
                "day": 5,
                "voter": "玩家09",
                "target": "玩家10",
                "at": (START + timedelta(days=4, hours=2)).isoformat(),
                "recorded_at": START.isoformat(),
            }
        )


def test_the_long_game_by_chunks_is_the_long_game_read_whole(tmp_path, small_chunks):
    game = long_game()
    forum = LongForum(per_day=60)
    store = open_store(tmp_path / "long.db")
    try:
        clock = SimClock(START)
        crawl = forum.crawler(store, clock)
        flagged = 0
        for i in range(11 * 4):
            now = START + timedelta(hours=6 * i)
            clock.set(now)
            crawl(targets_due(game, now), False)
            if i == 12:
                _out_and_proxy(store)
            if i == 20:  # a 替补 takes 玩家04's slot from day 4 on
                substitute_player04(store)
            if i % 3 == 0:
                flagged += len(_same_both_ways(game, store, now).flags)
        # a look back: a past moment re-reads the chunks with later posts, stores nothing
        fast = _same_both_ways(game, store, START + timedelta(days=4, hours=5))
        assert any(f.kind.value == "zhashi" for f in fast.flags)
        assert flagged > 0
    finally:
        store.close()


# --------------------------------------------------------------------------- generated


class Forum(LongForum):
    """A forum whose posts the test writes (marks included)."""

    def __init__(self) -> None:
        self.posts: list[Scripted] = []
        self.marks: dict[int, tuple[Mark, ...]] = {}

    def page(self, tid: int, now: Any) -> ThreadPage:
        page = super().page(tid, now)
        posts = tuple(
            Post(**{**_fields(p), "marks": self.marks.get(p.pid, ())}) for p in page.posts
        )
        return ThreadPage(tid=tid, page=1, total_pages=1, posts=posts, subject=str(tid))


def _fields(p: Post) -> dict[str, Any]:
    return {name: getattr(p, name) for name in Post.__dataclass_fields__}


MARKS = {
    "red": Mark(MarkKind.RED, "#FF0000", "红字"),
    "big": Mark(MarkKind.ENLARGED, "7", "大字"),
    "white": Mark(MarkKind.HIDDEN_COLOUR, "#FFFFFF", "白字"),
    "code": Mark(MarkKind.BBCODE, "b", "粗体"),
}

step = st.one_of(
    st.tuples(
        st.just("page"),
        st.integers(0, 2),  # day
        st.lists(st.tuples(st.integers(0, 5), st.sampled_from([None, *MARKS])), max_size=7),
    ),
    st.tuples(st.just("edit"), st.integers(0, 60), st.sampled_from([None, *MARKS])),
    st.tuples(st.just("delete"), st.integers(0, 60), st.just(None)),
    st.tuples(st.just("out"), st.integers(0, 5), st.integers(0, 40)),
    st.tuples(st.just("proxy"), st.integers(0, 5), st.integers(0, 2)),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=st.lists(step, min_size=1, max_size=10))
def test_generated_pages_edits_deletes_and_records(tmp_path_factory, small_chunks, steps):
    game = long_game()
    forum = Forum()
    store = open_store(tmp_path_factory.mktemp("gen") / "gen.db")
    try:
        clock = SimClock(START)
        crawl = forum.crawler(store, clock)
        now = START + timedelta(minutes=30)
        pid = 1
        for kind, a, b in steps:
            now += timedelta(minutes=47)
            if kind == "page":
                for who, mark in b:
                    tid = 1000 + 10 * a
                    at = now - timedelta(minutes=40) + timedelta(days=a)
                    forum.posts.append(Scripted(tid, pid, NAMES[who], at, f"第{pid}帖"))
                    if mark is not None:
                        forum.marks[pid] = (MARKS[mark],)
                    pid += 1
            elif kind in ("edit", "delete") and forum.posts:
                post = forum.posts[a % len(forum.posts)]
                if kind == "edit":
                    post.edited, post.new = now, post.text + "（改）"
                    forum.marks[post.pid] = (MARKS[b],) if b is not None else ()
                else:
                    post.gone = now
            elif kind == "out":
                store.db.table("journal_outs").insert(
                    {
                        "player": NAMES[a],
                        "at": (START + timedelta(hours=b)).isoformat(),
                        "cause": "导演判出局",
                        "recorded_at": START.isoformat(),
                    }
                )
            elif kind == "proxy":
                store.db.table("journal_proxy_votes").insert(
                    {
                        "day": b + 1,
                        "voter": NAMES[a],
                        "target": NAMES[(a + 1) % 6],
                        "at": (START + timedelta(days=b, hours=1)).isoformat(),
                        "recorded_at": START.isoformat(),
                    }
                )
            clock.set(max(now, START + timedelta(days=3)))
            crawl(targets_due(game, clock()), True)
            _same_both_ways(game, store, clock())
    finally:
        store.close()


# --------------------------------------------------------------------------- what is re-read


def _thread(store: Store, forum: Forum, n: int, clock: SimClock) -> Any:
    game = long_game()
    for i in range(n):
        at = START + timedelta(seconds=i + 1)
        forum.posts.append(Scripted(1000, i + 1, NAMES[i % 24], at, f"第{i}帖"))
    crawl = forum.crawler(store, clock)
    clock.set(START + timedelta(hours=1))
    crawl(targets_due(game, clock()), False)
    return game, crawl


def test_a_derivation_re_reads_only_the_chunks_written_since(tmp_path, monkeypatch):
    """With the real chunk size (256 floors): a 2,000-post thread is read whole once; then a
    derivation with nothing new re-reads no chunk, a new page only the last chunk (the others
    read as one stored material), an edit only its chunk — and the answers stay those of reading
    the thread whole."""
    store = open_store(tmp_path / "big.db")
    forum, clock = Forum(), SimClock(START)
    try:
        game, crawl = _thread(store, forum, 2000, clock)
        made = _made(monkeypatch)
        _same_both_ways(game, store, clock())
        assert len(made) == 2000 // 256 + 1
        made.clear()
        _same_both_ways(game, store, clock())
        assert made == []
        for i in range(10):  # a new page, past floor 2,000
            at = START + timedelta(minutes=59, seconds=i)
            forum.posts.append(Scripted(1000, 5000 + i, NAMES[i], at, "新回复"))
        clock.set(START + timedelta(hours=1, minutes=5))
        crawl(targets_due(game, clock()), False)
        made.clear()
        loaded = _loads(monkeypatch)
        _same_both_ways(game, store, clock())
        assert made == [1]
        # the chunks before the last are read as one stored material, not one by one
        assert len(loaded) <= 3, loaded
        forum.posts[300].edited, forum.posts[300].new = clock(), "改过了"
        forum.marks[forum.posts[300].pid] = (MARKS["red"],)
        clock.set(START + timedelta(hours=1, minutes=10))
        crawl(targets_due(game, clock()), True)
        made.clear()
        d = _same_both_ways(game, store, clock())
        assert made == [1]  # floor 301: chunk 1
        assert any(f.kind.value == "font" and f.player == NAMES[300 % 24] for f in d.flags)
    finally:
        store.close()


def test_a_read_only_store_derives_the_same_and_writes_nothing(tmp_path, monkeypatch):
    from pipeline.store import open_store_readonly

    path = tmp_path / "ro.db"
    store = open_store(path)
    forum, clock = Forum(), SimClock(START)
    game, _ = _thread(store, forum, 600, clock)
    expected = derive(game, store, as_of=clock(), by_chunks=False)
    store.close()
    ro = open_store_readonly(path)
    try:
        assert_same(derive(game, ro, as_of=clock()), expected)  # no trigger yet: read whole
        assert ro.db.execute("SELECT count(*) FROM derive_chunk_cache").fetchone()[0] == 0
    finally:
        ro.close()
    store = open_store(path)
    derive(game, store, as_of=clock())  # the triggers and the materials are written
    store.close()
    ro = open_store_readonly(path)
    try:
        made = _made(monkeypatch)
        assert_same(derive(game, ro, as_of=clock()), expected)
        assert made == []
    finally:
        ro.close()


def test_posts_out_of_floor_order_are_read_whole(tmp_path, small_chunks):
    """A post whose floor is before another's but whose time is after it (a moved post): the
    chunks are not in time order, and the thread is counted whole."""
    store = open_store(tmp_path / "order.db")
    forum, clock = Forum(), SimClock(START)
    try:
        game, _ = _thread(store, forum, 12, clock)
        with store.atomic():  # floor 2's post is stamped after floor 9's
            store.db.execute(
                "UPDATE posts SET posted_at = ?, posted_ts = posted_ts + 100 "
                "WHERE tid = 1000 AND floor = 2",
                [(START + timedelta(seconds=100)).isoformat()],
            )
        _same_both_ways(game, store, clock())
    finally:
        store.close()


def test_states_count_as_the_whole_thread_counts_them(tmp_path, small_chunks):
    store = open_store(tmp_path / "states.db")
    forum, clock = Forum(), SimClock(START)
    try:
        game, _ = _thread(store, forum, 30, clock)
        with store.atomic():
            for floor, state in ((3, PostState.BLOCKED), (7, PostState.DELETED)):
                store.db.execute(
                    "UPDATE posts SET state = ? WHERE tid = 1000 AND floor = ?",
                    [state.value, floor],
                )
        d = _same_both_ways(game, store, clock())
        excluded = [why for pc in d.days[1].counts.values() for _, why in pc.excluded]
        assert "该帖被管理员或版主屏蔽，不计入发言" in excluded
    finally:
        store.close()


def test_a_sheriff_who_may_only_answer_is_seen_in_every_chunk(tmp_path, small_chunks):
    """狼人真言: the sheriff may not post in the discussion thread (直接黄牌或红牌). His posts
    are plain text, in every chunk of a long thread: the flag names each of them, as reading the
    thread whole does."""
    from pipeline.game.gamefile import parse_game

    game = parse_game(
        {
            "game": {
                "id": "zy",
                "title": "真言",
                "ruleset": "zhenyan",
                "timezone": "Asia/Shanghai",
            },
            "forum": {"base_url": "http://127.0.0.1:8080/"},
            "director": {"names": ["导演"], "uids": [1]},
            "players": [{"name": n, "uid": 100 + i} for i, n in enumerate(NAMES)],
            "days": [
                {
                    "day": 1,
                    "opens": START,
                    "closes": START + timedelta(hours=12),
                    "discussion": 1000,
                    "vote": 1001,
                    "progress": 1002,
                }
            ],
            "zhenyan": {"words": ["灯塔", "向日葵", "冬眠", "口琴"]},
        },
        env={},
    )
    store = open_store(tmp_path / "zhenyan.db")
    forum, clock = Forum(), SimClock(START)
    try:
        _, _ = _thread(store, forum, 40, clock)
        with store.atomic():
            store.db.table("journal_settings").insert(
                {"key": "sheriff:1", "value": NAMES[5], "recorded_at": START.isoformat()}
            )
        d = _same_both_ways(game, store, clock())
        flag = next(f for f in d.flags if f.kind.value == "sheriff-discussion")
        assert flag.player == NAMES[5] and len(flag.evidence) == 40 // 24 + 1
    finally:
        store.close()
