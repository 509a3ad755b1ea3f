"""The threads a table holds rows of, read by seeking from thread to thread
(``pipeline.distinct_tids``): the set ``SELECT DISTINCT tid`` gives, NULL left out, with the
index and without it; and the seek reads the index, not the table."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline import distinct_tids
from pipeline.store import open_store

ROWS = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(1, 40)), st.sampled_from(["ok", "retry", "error"])),
    max_size=60,
)


def _table(rows: list[tuple[int | None, str]], *, indexed: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE crawl_log (id INTEGER PRIMARY KEY, tid INTEGER, outcome TEXT)")
    if indexed:
        conn.execute("CREATE INDEX crawl_log_ok_tid ON crawl_log(outcome, tid)")
    conn.executemany("INSERT INTO crawl_log(tid, outcome) VALUES (?, ?)", rows)
    return conn


def _distinct(conn: sqlite3.Connection, where: str, args: list[int]) -> set[int]:
    sql = f"SELECT DISTINCT tid FROM crawl_log WHERE tid IS NOT NULL AND {where}"
    return {r[0] for r in conn.execute(sql, args)}


@settings(max_examples=150, deadline=None)
@given(rows=ROWS, indexed=st.booleans(), upto=st.integers(0, 61))
def test_the_seek_finds_what_distinct_finds(
    rows: list[tuple[int | None, str]], indexed: bool, upto: int
) -> None:
    conn = _table(rows, indexed=indexed)
    assert distinct_tids(conn.execute, "crawl_log") == _distinct(conn, "1", [])
    assert distinct_tids(conn.execute, "crawl_log", "outcome = 'ok'") == _distinct(
        conn, "outcome = 'ok'", []
    )
    where = "outcome = 'ok' AND id <= ?"
    assert distinct_tids(conn.execute, "crawl_log", where, [upto]) == _distinct(conn, where, [upto])


def test_an_empty_table_holds_no_thread() -> None:
    assert distinct_tids(_table([], indexed=True).execute, "crawl_log") == set()
    assert distinct_tids(_table([(None, "ok")], indexed=True).execute, "crawl_log") == set()


def test_on_a_store_the_seek_searches_the_indexes_a_scan_would_read_whole(tmp_path) -> None:
    """A store's posts and crawl log: each step is an index search, never a scan of them."""
    store = open_store(tmp_path / "game.db")
    try:
        for table, where in (("posts", ""), ("crawl_log", "outcome = 'ok' AND id <= ?")):
            plans: list[str] = []

            def explain(sql: str, args: list[object], plans: list[str] = plans) -> list[object]:
                plan = store.conn.execute(f"EXPLAIN QUERY PLAN {sql}", args).fetchall()
                plans.extend(str(step[-1]) for step in plan)
                return []

            assert distinct_tids(explain, table, where, [1] if where else []) == set()
            on_table = [p for p in plans if f" {table} " in f" {p} "]
            assert on_table and all(p.startswith("SEARCH") for p in on_table), plans
            assert all("INDEX" in p for p in on_table), plans
    finally:
        store.close()
