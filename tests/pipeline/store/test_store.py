"""The store: schema, 0600 file, page writes in one transaction, revisions, vanished posts."""

from __future__ import annotations

import sqlite3
import stat
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from parsers.records import Post, PostState, ThreadPage
from pipeline.store import Store, StoreError, open_store

ROOT = Path(__file__).resolve().parents[3]

TZ = timezone(timedelta(hours=8))
T0 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)


def post(pid: int, text: str, floor: int | None = None, **kw) -> Post:
    return Post(
        tid=4,
        pid=pid,
        floor=floor if floor is not None else pid - 100,
        author="饺子",
        uid=3,
        posted_at=T0 + timedelta(minutes=pid),
        message_html=text,
        text=text,
        **kw,
    )


def page(posts: list[Post], page: int = 1, total: int = 1) -> ThreadPage:
    return ThreadPage(tid=4, page=page, total_pages=total, posts=tuple(posts), subject="投票帖")


def save(store: Store, tp: ThreadPage, when: datetime = T0, ppp: int | None = 10):
    store.register_thread(tp.tid, day=2, role="vote")
    return store.save_page(
        tp,
        source="html",
        url=f"http://f/forum.php?tid=4&page={tp.page}",
        status=200,
        headers={"content-type": "text/html", "set-cookie": "auth=SECRET"},
        body=b"<html>",
        fetched_at=when,
        ppp=ppp,
    )


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "game.db")
    yield s
    s.close()


def test_database_file_is_private_and_migrated_once(tmp_path):
    path = tmp_path / "game.db"
    s = open_store(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert s.migrate() == []  # already applied
    names = [r["name"] for r in s.db.query("SELECT name FROM _migrations")]
    assert names == [
        "001_initial",
        "002_journal_and_verdicts",
        "003_drafts",
        "004_engine",
        "005_substitutions",
        "006_lastwords",
        "007_scrub_secrets",
        "008_ppp_from_pages",
        "009_vote_notes",
        "010_compact_bodies",
        "011_game_threads",
        "012_tally_views",
        "013_revocations",
        "016_generated_subject",
        "017_draft_inputs",
        "018_derive_chunks",
        "019_crawl_log_threads",
        "020_late_actions",
    ]
    assert s.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    s.close()


def test_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "bad.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="无法打开数据库"):
        open_store(path)


def test_new_posts_then_nothing_new(store):
    w = save(store, page([post(101, "投票对象：包子"), post(102, "hi")]))
    assert (w.new_posts, w.changed_posts, w.vanished_posts) == (2, 0, 0)
    w = save(store, page([post(101, "投票对象：包子"), post(102, "hi")]))
    assert (w.new_posts, w.changed_posts, w.vanished_posts) == (0, 0, 0)
    assert store.counts()["posts"] == 2
    assert store.counts()["post_revisions"] == 2  # revision 1 = as first seen
    # identical raw bodies are kept once
    assert store.db.table("page_bodies").count == 1
    assert store.db.table("pages").count == 2


def test_edit_keeps_every_revision(store):
    save(store, page([post(101, "投票对象：面条")]))
    save(store, page([post(101, "投票对象：馄饨")]), when=T0 + timedelta(hours=1))
    revs = store.revisions(4, 101)
    assert [r["text"] for r in revs] == ["投票对象：面条", "投票对象：馄饨"]
    assert [r["revision"] for r in revs] == [1, 2]
    assert store.posts(4)[0].text == "投票对象：馄饨"


def test_post_missing_from_its_page_is_marked_vanished_not_deleted(store):
    save(store, page([post(101, "a"), post(102, "b"), post(103, "c")]))
    w = save(store, page([post(101, "a"), post(103, "c", floor=2)]))
    assert w.vanished_posts == 1
    states = {p.pid: p.state for p in store.posts(4)}
    assert states == {101: PostState.VISIBLE, 102: PostState.VANISHED, 103: PostState.VISIBLE}
    assert store.revisions(4, 102)[-1]["state"] == "vanished"


def test_post_outside_the_page_range_is_not_vanished(store):
    # page 1 and page 2 of a 2-page thread; re-reading page 2 says nothing about page 1
    save(store, page([post(100 + i, str(i), floor=i) for i in range(1, 11)], page=1, total=2))
    save(store, page([post(111, "11", floor=11)], page=2, total=2))
    w = save(store, page([post(111, "11", floor=11), post(112, "12", floor=12)], page=2, total=2))
    assert (w.new_posts, w.vanished_posts) == (1, 0)
    assert all(p.state is PostState.VISIBLE for p in store.posts(4))


def test_secrets_in_headers_are_not_stored(store):
    save(store, page([post(101, "a")]))
    headers = store.db.execute("SELECT headers FROM pages").fetchone()[0]
    assert "SECRET" not in headers and "set-cookie" not in headers


def test_a_failing_page_write_leaves_nothing_behind(store, monkeypatch):
    save(store, page([post(101, "a")]))
    before = store.counts()

    def boom(*a, **k):
        raise RuntimeError("killed")

    monkeypatch.setattr(store, "_mark_vanished", boom)
    with pytest.raises(RuntimeError):
        save(store, page([post(101, "changed"), post(102, "new")]))
    assert store.counts() == before
    assert store.posts(4)[0].text == "a"
    assert store.thread(4)["last_page"] == 1


def test_a_deleted_placeholder_never_overwrites_a_post(store):
    save(store, page([post(101, "投票对象：包子"), post(102, "b")]))
    placeholder = post(102, "", state=PostState.DELETED)
    w = save(store, page([post(101, "投票对象：包子"), placeholder, post(103, "c", floor=3)]))
    assert w.changed_posts == 0
    assert {p.pid: p.text for p in store.posts(4)}[102] == "b"


def test_the_migration_forgets_a_desktop_page_size_taken_from_the_game_file(tmp_path):
    """``threads.ppp`` of a desktop thread was ``[forum] ppp``; the mobile
    API's is what the forum reported and stays."""
    path = tmp_path / "old.db"
    s = open_store(path)
    s.register_thread(4, day=2, role="vote")
    s.register_thread(5, day=2, role="discussion")
    with s.atomic():
        s.db.execute("UPDATE threads SET source = 'html', ppp = 10 WHERE tid = 4")
        s.db.execute("UPDATE threads SET source = 'mobile-api', ppp = 50 WHERE tid = 5")
        s.db.execute("DELETE FROM _migrations WHERE name = '008_ppp_from_pages'")
    s.close()
    s = open_store(path)
    assert s.thread(4)["ppp"] is None and s.thread(5)["ppp"] == 50
    s.close()


def test_a_verdicts_director_note_is_stored_beside_its_reason(tmp_path):
    """Migration 009: the votes table has the director-only ``note`` column, also on an old store
    that had only the reason (public text is public)."""
    s = open_store(tmp_path / "g.db")
    assert "note" in s.db["votes"].columns_dict
    s.close()


def test_a_fetch_keeps_its_body_only_when_the_pages_posts_changed(store):
    """Discuz pages differ on every request (views, times), so bodies are
    kept when the page's posts changed, and every fetch is a row pointing at a kept body."""
    store.register_thread(4, day=2, role="vote")

    def fetch(tp: ThreadPage, body: bytes, minutes: int):
        return store.save_page(
            tp,
            source="html",
            url=f"http://f/forum.php?tid=4&page={tp.page}",
            status=200,
            headers={"content-type": "text/html"},
            body=body,
            fetched_at=T0 + timedelta(minutes=minutes),
            ppp=10,
        )

    posts = [post(101, "投票对象：包子"), post(102, "hi")]
    assert fetch(page(posts), b"<html>views 1", 0).body_kept  # first sighting
    idle = fetch(page(posts), b"<html>views 2", 5)
    assert not idle.body_kept and store.db.table("page_bodies").count == 1
    row = store.db.execute(
        "SELECT sha256, body_kept, headers FROM pages WHERE id = ?", [idle.page_id]
    ).fetchone()
    assert row[1:] == (0, None)
    assert store.body(row[0]) == b"<html>views 1"  # the last kept body: the same posts
    assert store.post_rows(4)[0]["page_id"] == 1  # the reading still points at a kept body
    assert fetch(page([*posts, post(103, "new")]), b"<html>views 3", 10).body_kept  # new post
    assert fetch(
        page([post(101, "投票对象：馄饨"), post(102, "hi"), post(103, "new")]), b"<html>views 4", 15
    ).body_kept  # an edit
    assert fetch(page([post(101, "投票对象：馄饨"), post(103, "new")]), b"<html>5", 20).body_kept
    assert store.revisions(4, 102)[-1]["state"] == "vanished"
    # the same posts on floors renumbered (a deletion before them): kept, floors are evidence
    moved = [post(101, "投票对象：馄饨", floor=1), post(103, "new", floor=2)]
    assert fetch(page(moved), b"<html>6", 25).body_kept
    assert not fetch(page(moved), b"<html>7", 30).body_kept
    assert store.db.table("page_bodies").count == 5
    assert store.counts()["pages"] == 7


# --------------------------------------------------------------------------- the connection


def _other_reader(tmp_path) -> sqlite3.Connection:
    return sqlite3.connect(tmp_path / "game.db")


def test_a_write_outside_a_block_is_committed_at_once_and_a_failed_one_leaves_nothing(
    store, tmp_path
):
    store.execute("INSERT INTO meta(key, value) VALUES ('k', 'v')")
    assert not store.conn.in_transaction
    with _other_reader(tmp_path) as other:
        assert other.execute("SELECT value FROM meta WHERE key = 'k'").fetchone() == ("v",)
    with pytest.raises(sqlite3.IntegrityError):
        store.execute("INSERT INTO meta(key, value) VALUES ('k', 'again')")
    assert not store.conn.in_transaction  # no half-open transaction catches later writes
    assert store.get_meta("k") == "v"


def test_a_failed_inner_block_is_undone_alone_and_a_failed_outer_one_undoes_all(store):
    with store.atomic():
        store.set_meta("outer", "1")
        with pytest.raises(RuntimeError), store.atomic():
            store.set_meta("inner", "1")
            raise RuntimeError("inner")
        assert store.get_meta("inner") is None
    assert store.get_meta("outer") == "1"
    with pytest.raises(RuntimeError), store.atomic():
        store.set_meta("both", "1")
        with store.atomic():
            store.set_meta("nested", "1")
        raise RuntimeError("outer")
    assert (store.get_meta("both"), store.get_meta("nested")) == (None, None)


def test_a_store_s_connection_counts_writes_of_triggers_as_sqlite_utils_did(store):
    """Triggers fire for the rows other triggers write (the change counters rely on it)."""
    assert store.conn.execute("PRAGMA recursive_triggers").fetchone() == (1,)
    assert store.conn.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert store.conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    assert store.db.conn is store.conn  # sqlite-utils over the same connection


def test_saving_and_reading_a_page_needs_no_sqlite_utils(tmp_path):
    code = (
        "import sys\n"
        "from tests.pipeline.store.test_store import T0, page, post, save\n"
        "from pipeline.store import open_store\n"
        f"s = open_store({str(tmp_path / 'fresh.db')!r})\n"
        "assert 'sqlite_utils' in sys.modules  # a new store is made by the migrations\n"
        "s.close()\n"
        "del sys.modules['sqlite_utils']\n"
        f"s = open_store({str(tmp_path / 'fresh.db')!r})\n"
        "save(s, page([post(101, 'a'), post(102, 'b')]))\n"
        "save(s, page([post(101, 'a'), post(102, 'b2')]), T0)\n"
        "assert [p.text for p in s.posts(4)] == ['a', 'b2'], s.posts(4)\n"
        "assert s.counts()['post_revisions'] == 3\n"
        "assert 'sqlite_utils' not in sys.modules\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
