"""The ``Store``: one game's database, its reads and its one-transaction page writes; the
read-only store the console opens.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from parsers.records import Post, PostState, ThreadPage
from pipeline import close_readonly, connect_readonly
from pipeline.store.bodies import decode_body, encode_body, page_signature
from pipeline.store.connection import (
    StoreBusy,
    StoreError,
    _busy_message,
    open_db,
    utils_database,
)
from pipeline.store.migrations import MIGRATIONS, migrate, pending_migrations
from pipeline.store.pages import PageReadings, sort_readings
from pipeline.store.rows import (
    _POST_COLUMNS_NO_HTML,
    _STATES,
    POST_COLUMNS,
    PageWrite,
    PostSketch,
    _iso,
    _post_from_values,
    _revision_row,
    _safe_headers,
    marks_from_json,
)
from pipeline.store.scrub import scrub_body, scrub_text

if TYPE_CHECKING:
    import sqlite_utils

#: ``meta`` key of the stored tally views' key (:meth:`Store.write_tally_views`)
TALLY_VIEW_KEY = "tally:view"


#: ``meta``: bumped (by the change triggers, pipeline/cycle.py) by every write to what a draft's
#: text is made from — posts, the director's records, the engine's resolutions; each live draft
#: keeps the value it was last drafted (or found unchanged) at, in ``draft_inputs``
DRAFT_INPUTS_KEY = "drafts:inputs"

#: ``meta``: bumped (by the change triggers, pipeline/cycle.py) by every write to
#: ``post_counts``; the derivation that wrote them keeps their fingerprint beside the value it
#: left (pipeline/derive/writeback.py), so the next one need not read them back to compare
POST_COUNTS_KEY = "derive:post_counts"


#: the statements that open or end a transaction themselves (:meth:`Store.execute` leaves them be)
_TRANSACTION_CONTROL = frozenset({"BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"})
#: the names of nested blocks' savepoints (:meth:`Store.atomic`)
_SAVEPOINTS = itertools.count(1)


class Store:
    """One game's store, on one SQLite connection (:attr:`conn`). Its own reads and writes use
    that connection; :attr:`db` puts sqlite-utils over it for the rest of bansha."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.conn = open_db(self.path)

    @cached_property
    def db(self) -> sqlite_utils.Database:
        """sqlite-utils' ``Database`` over :attr:`conn` (its table helpers), made on first use."""
        database: sqlite_utils.Database = utils_database(self.conn)
        return database

    def execute(self, sql: str, args: Sequence[Any] = ()) -> sqlite3.Cursor:
        """``sql`` on the store's connection; a write outside a transaction is committed at once
        and a failed one rolled back (as sqlite-utils' ``execute`` does)."""
        conn = self.conn
        was_open = conn.in_transaction
        try:
            cursor = conn.execute(sql, args)
        except Exception:
            if not was_open and conn.in_transaction:
                conn.rollback()
            raise
        if (
            not was_open
            and conn.in_transaction
            and cursor.description is None
            and sql.lstrip().split(None, 1)[0].upper() not in _TRANSACTION_CONTROL
        ):
            conn.commit()
        return cursor

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """The rows of ``sql`` as dicts by column name."""
        cursor = self.conn.execute(sql, args)
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor]

    def insert(self, table: str, rows: Iterable[Mapping[str, Any]]) -> int:
        """Insert ``rows`` into ``table`` in one transaction (a savepoint inside an open one); a
        column a row leaves out is NULL. Returns the rowid of the last row inserted (0 when
        there was none)."""
        rows = list(rows)
        if not rows:
            return 0
        columns = list(dict.fromkeys(c for row in rows for c in row))
        sql = f"INSERT INTO {table}({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        with self.atomic():
            if len(rows) == 1:
                cursor = self.conn.execute(sql, [rows[0].get(c) for c in columns])
                return int(cursor.lastrowid or 0)
            self.conn.executemany(sql, [[row.get(c) for c in columns] for row in rows])
            return int(self.conn.execute("SELECT last_insert_rowid()").fetchone()[0])

    def columns(self, table: str) -> list[str]:
        """The columns ``table`` has (none when there is no such table)."""
        return [r[1] for r in self.conn.execute(f"PRAGMA table_info({table})")]

    # -- schema ---------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        """Apply the migrations not yet recorded (sqlite-utils is loaded only for them)."""
        if not pending_migrations(self.conn):
            return []
        return migrate(self.db)

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction, its write lock taken first (``BEGIN IMMEDIATE``).

        A deferred ``BEGIN`` reads under a snapshot and then fails at once with "database is
        locked" when another process wrote meanwhile (SQLite cannot upgrade a stale snapshot);
        taking the lock first makes every read inside the block see the latest state and makes
        a second writer wait (up to ``BUSY_TIMEOUT_S``). Nested blocks are savepoints.
        """
        conn = self.conn
        if conn.in_transaction:
            with self._savepoint():
                yield
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(_busy_message(self.path)) from exc
            raise
        try:
            yield
        except BaseException:
            conn.rollback()
            raise
        try:
            conn.commit()
        except sqlite3.OperationalError as exc:
            conn.rollback()
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreBusy(_busy_message(self.path)) from exc
            raise

    @contextmanager
    def _savepoint(self) -> Iterator[None]:
        """A nested block of :meth:`atomic`: undone alone when it fails."""
        name = f"bansha_{next(_SAVEPOINTS)}"
        conn = self.conn
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            # a failure may have ended the whole transaction (a RAISE(ROLLBACK) trigger)
            if conn.in_transaction:
                conn.execute(f"ROLLBACK TO SAVEPOINT {name}")
                conn.execute(f"RELEASE SAVEPOINT {name}")
            raise
        conn.execute(f"RELEASE SAVEPOINT {name}")

    def close(self) -> None:
        self.conn.close()

    # -- meta -----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key = ?", [key])
        return rows[0]["value"] if rows else None

    def get_meta_json(self, key: str) -> dict[str, Any] | None:
        """A ``meta`` value that holds a JSON object; None when absent or not an object."""
        raw = self.get_meta(key)
        if not raw:
            return None
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None

    def set_meta(self, key: str, value: str) -> None:
        with self.atomic():
            self.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    def write_tally_views(self, key: str, views: Mapping[int, tuple[str, str | None]]) -> None:
        """Make the stored tally views (day -> text, JSON) ``views`` under the key ``key``
        (``meta`` ``tally:view``): a day's row is written only when its view is not the one
        stored, a day not in ``views`` is dropped; ``views`` empty drops them all (and the
        key)."""
        with self.atomic():
            for day, (text, as_json) in sorted(views.items()):
                self.execute(
                    "INSERT INTO tally_views(day, text, json) VALUES (?, ?, ?) "
                    "ON CONFLICT(day) DO UPDATE SET text = excluded.text, json = excluded.json "
                    "WHERE text IS NOT excluded.text OR json IS NOT excluded.json",
                    [day, text, as_json],
                )
            days = sorted(views)
            marks = ", ".join("?" * len(days))
            self.execute(f"DELETE FROM tally_views WHERE day NOT IN ({marks})", days)
            if views:
                self.set_meta(TALLY_VIEW_KEY, key)
            else:
                self.execute("DELETE FROM meta WHERE key = ?", [TALLY_VIEW_KEY])

    # -- threads --------------------------------------------------------------------------
    def thread(self, tid: int) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM threads WHERE tid = ?", [tid])
        return rows[0] if rows else None

    def register_thread(self, tid: int, *, day: int | None, role: str | None) -> None:
        with self.atomic():
            self.execute(
                "INSERT INTO threads(tid, day, role) VALUES (?, ?, ?) "
                "ON CONFLICT(tid) DO UPDATE SET day = excluded.day, role = excluded.role",
                [tid, day, role],
            )

    def opened_threads(self) -> list[dict[str, Any]]:
        """The threads bansha opened (``game_threads``), by day and role; [] on a store from
        before them (a read-only store is never migrated)."""
        try:
            return self.query("SELECT * FROM game_threads ORDER BY day, id")
        except sqlite3.OperationalError:
            return []

    def record_opened_thread(
        self,
        *,
        day: int,
        role: str,
        tid: int,
        subject: str | None,
        draft_id: int | None,
        at: str,
        how: str,
    ) -> None:
        """Keep a thread bansha opened (inside the caller's transaction when there is one).
        A day's role keeps the first tid recorded for it."""
        with self.atomic():
            self.execute(
                "INSERT INTO game_threads(day, role, tid, subject, draft_id, opened_at, how) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(day, role) DO NOTHING",
                [day, role, tid, subject, draft_id, at, how],
            )

    # -- pages and posts ------------------------------------------------------------------
    def _store_body(self, body: bytes, secrets: Iterable[str] = ()) -> str:
        """Keep a body, scrubbed of secrets (the one place bodies are written), compressed
        (:func:`encode_body`); its key is the sha256 of the scrubbed body before compression,
        so the same body is stored once."""
        body = scrub_body(body, secrets)
        digest = hashlib.sha256(body).hexdigest()
        if self.execute("SELECT 1 FROM page_bodies WHERE sha256 = ?", [digest]).fetchone():
            return digest
        self.execute(
            "INSERT INTO page_bodies(sha256, body) VALUES (?, ?)", [digest, encode_body(body)]
        )
        return digest

    def body(self, sha256: str) -> bytes | None:
        """A stored body as it was kept (scrubbed, uncompressed), whichever format its row is
        in; None when no body has that key."""
        row = self.execute("SELECT body FROM page_bodies WHERE sha256 = ?", [sha256]).fetchone()
        return None if row is None else decode_body(row[0])

    def page_body(self, page_id: int) -> bytes | None:
        """The body a ``pages`` row points at: the fetch's own when it was kept, else the last
        kept body of the same page (the same posts); None when there is none."""
        row = self.execute("SELECT sha256 FROM pages WHERE id = ?", [page_id]).fetchone()
        return None if row is None or row[0] is None else self.body(row[0])

    def record_response(
        self,
        *,
        tid: int | None,
        page: int | None,
        source: str,
        url: str,
        status: int,
        headers: dict[str, str],
        body: bytes,
        fetched_at: datetime,
        outcome: str,
        secrets: Iterable[str] = (),
    ) -> int:
        """Keep a raw response that did not yield a page (errors are evidence too).

        ``secrets``: the session's values to scrub besides the known keys (the cookie values).
        """
        with self.atomic():
            return self._insert_page(
                tid, page, source, url, status, headers, body, fetched_at, outcome, secrets
            )

    def _insert_page(
        self,
        tid: int | None,
        page: int | None,
        source: str,
        url: str,
        status: int,
        headers: dict[str, str],
        body: bytes | None,
        fetched_at: datetime,
        outcome: str,
        secrets: Iterable[str] = (),
        *,
        same_as: str | None = None,
        posts_sig: str | None = None,
    ) -> int:
        """One fetch row. With a ``body``, the body is kept and the row points at it; without
        (``body=None``: the page's posts had not changed), the row is small — no headers — and
        points at ``same_as``, the last kept body of the page."""
        secrets = list(secrets)
        kept = body is not None
        digest = self._store_body(body, secrets) if body is not None else same_as
        cur = self.execute(
            "INSERT INTO pages(tid, page, source, url, status, headers, sha256, fetched_at, "
            "outcome, body_kept, posts_sig) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                tid,
                page,
                source,
                scrub_text(url, secrets),
                status,
                json.dumps(_safe_headers(headers, secrets)) if kept else None,
                digest,
                _iso(fetched_at),
                outcome,
                1 if kept else 0,
                posts_sig,
            ],
        )
        return int(cur.lastrowid or 0)

    def last_kept_page(self, tid: int, page: int, source: str) -> dict[str, Any] | None:
        """The last fetch of a page whose body was kept (id, sha256, posts_sig), or None."""
        rows = self.query(
            "SELECT id, sha256, posts_sig FROM pages WHERE tid = ? AND page = ? AND source = ? "
            "AND outcome = 'ok' AND body_kept = 1 ORDER BY id DESC LIMIT 1",
            [tid, page, source],
        )
        return rows[0] if rows else None

    def save_page(
        self,
        parsed: ThreadPage,
        *,
        source: str,
        url: str,
        status: int,
        headers: dict[str, str],
        body: bytes,
        fetched_at: datetime,
        ppp: int | None,
        secrets: Iterable[str] = (),
    ) -> PageWrite:
        """Write one fetched page: raw body, posts, revisions, vanished marks, resume point.

        ``ppp``: the posts per page this source serves for the thread, as the pages told it
        (None when they have not): remembered in ``threads.ppp`` and used to tell a page's own
        posts from the sticky replies shown on it. ``secrets``: the session's values to scrub
        from the body besides the known keys.

        A post seen before is a new revision only when its content changed. The same content
        read from a poorer source (:func:`reading_rank`) changes nothing but where it was seen;
        read richer, it enriches the stored reading and its revision in place.

        The body is kept when the page's posts changed: a new, changed, enriched or vanished
        post, or a page never kept before for this (tid, page, source), or one whose
        :func:`page_signature` differs from its last kept body's (floors renumbered, the
        subject). Otherwise the fetch is a small row pointing at that last kept body, which
        shows the same posts, and the posts keep pointing at the kept pages they were read
        from. Every reading of a post (``page_id``) thus points at a kept body that shows it.

        One transaction: either all of it lands or none of it does.
        """
        seen = _iso(fetched_at)
        assert seen is not None
        with self.atomic():
            # only the posts on this page: the cost follows the page, not the thread's length
            # a "无效楼层，该帖已经被删除" placeholder is not a post: Discuz may even give it a
            # made-up pid (the previous pid + 1); deletions are found by _mark_vanished
            posts = [p for p in parsed.posts if p.state is not PostState.DELETED]
            existing = self._stored_readings(parsed.tid, [p.pid for p in posts])
            # what changed, decided before anything is written: the body is kept only then
            readings = sort_readings(posts, existing, page=parsed.page, seen=seen)
            new, changed = len(readings.new), len(readings.changed)
            enriched = len(readings.enriched)
            # a vanished revision copies the post's stored reading (its page_id): no new page
            vanished = self._mark_vanished(parsed, seen, ppp)
            sig = page_signature(parsed)
            last = self.last_kept_page(parsed.tid, parsed.page, source)
            keep = bool(
                new
                or changed
                or enriched
                or vanished
                or last is None
                or last["sha256"] is None
                or last["posts_sig"] != sig
            )
            page_id = self._insert_page(
                parsed.tid,
                parsed.page,
                source,
                url,
                status,
                headers,
                body if keep else None,
                fetched_at,
                "ok",
                secrets,
                same_as=None if last is None else last["sha256"],
                posts_sig=sig if keep else None,
            )
            self._write_readings(parsed, readings, page_id=page_id, seen=seen, keep=keep)
            self.execute(
                "UPDATE threads SET subject = COALESCE(?, subject), source = ?, ppp = ?, "
                "last_page = ?, total_pages = ?, last_crawled_at = ?, last_outcome = 'ok' "
                "WHERE tid = ?",
                [parsed.subject, source, ppp, parsed.page, parsed.total_pages, seen, parsed.tid],
            )
        return PageWrite(page_id, new, changed, vanished, enriched, body_kept=keep)

    def _stored_readings(self, tid: int, pids: list[int]) -> dict[int, dict[str, Any]]:
        """The stored reading of each of these posts (by pid), for a page being saved."""
        if not pids:
            return {}
        marks = ",".join("?" * len(pids))
        sql = (
            "SELECT pid, content_hash, state, text, quoted_pids, marks, source, "
            "edit_editor, edit_at FROM posts WHERE tid = ? AND pid IN "
        )
        return {r["pid"]: r for r in self.query(f"{sql}({marks})", [tid, *pids])}

    def _write_readings(
        self, parsed: ThreadPage, readings: PageReadings, *, page_id: int, seen: str, keep: bool
    ) -> None:
        """A saved page's posts and revisions, as :func:`sort_readings` sorted them; ``keep``:
        whether the page's body (``page_id``) was kept."""
        new_rows: list[dict[str, Any]] = []
        revisions: list[dict[str, Any]] = []
        for post, row in readings.new:
            row["page_id"] = page_id
            row["first_seen_at"] = seen
            new_rows.append(row)
            revisions.append(_revision_row(post, row, 1, seen, page_id))
        for post, row in readings.changed:
            row["page_id"] = page_id
            revisions.append(_revision_row(post, row, self._last_revision(post) + 1, seen, page_id))
            self._update_post(post, row)
        for post, row in readings.enriched:
            row["page_id"] = page_id
            self._update_post(post, row)
            self.execute(
                "UPDATE post_revisions SET content_hash = ?, message_html = ?, marks = ?, "
                "edit_editor = ?, edit_at = ?, page_id = ? "
                "WHERE tid = ? AND pid = ? AND revision = ?",
                [
                    row["content_hash"],
                    row["message_html"],
                    row["marks"],
                    row["edit_editor"],
                    row["edit_at"],
                    page_id,
                    post.tid,
                    post.pid,
                    self._last_revision(post),
                ],
            )
        if new_rows:
            self.insert("posts", new_rows)
        if revisions:
            self.insert("post_revisions", revisions)
        if readings.again and keep:
            # the kept body shows them as stored: it becomes where they were last read
            self.conn.executemany(
                "UPDATE posts SET floor = ?, page = ?, last_seen_at = ?, page_id = ? "
                "WHERE tid = ? AND pid = ?",
                [[p.floor, parsed.page, seen, page_id, p.tid, p.pid] for p in readings.again],
            )
        seen_only = readings.poorer + ([] if keep else readings.again)
        if seen_only:
            self.conn.executemany(
                "UPDATE posts SET floor = ?, page = ?, last_seen_at = ? WHERE tid = ? AND pid = ?",
                [[p.floor, parsed.page, seen, p.tid, p.pid] for p in seen_only],
            )

    def _update_post(self, post: Post, row: Mapping[str, Any]) -> None:
        """Write ``row``'s columns to the stored post ``post``."""
        columns = [c for c in row if c not in ("tid", "pid")]
        self.conn.execute(
            f"UPDATE posts SET {', '.join(f'{c} = ?' for c in columns)} WHERE tid = ? AND pid = ?",
            [*(row[c] for c in columns), post.tid, post.pid],
        )

    def _last_revision(self, post: Post) -> int:
        return int(
            self.execute(
                "SELECT COALESCE(MAX(revision), 0) FROM post_revisions WHERE tid = ? AND pid = ?",
                [post.tid, post.pid],
            ).fetchone()[0]
        )

    def _mark_vanished(self, parsed: ThreadPage, seen: str, ppp: int | None) -> int:
        """Posts stored before that this page should show but does not: mark them vanished.

        The page covers the pid range of its regular posts (page 1 may carry sticky or hot
        replies from elsewhere, so posts whose floor lies outside the page are left out of the
        range). The last page also covers everything after it.
        """
        regular = [
            p
            for p in parsed.posts
            if p.state is not PostState.DELETED
            and (
                ppp is None
                or p.floor is None
                or (parsed.page - 1) * ppp < p.floor <= parsed.page * ppp
            )
        ]
        if not regular:
            return 0
        # a deleted-floor placeholder may carry the real pid of a post in the recycle bin: it
        # does not show the post, so it does not keep the post from being marked vanished
        pids = {p.pid for p in parsed.posts if p.state is not PostState.DELETED}
        low = min(p.pid for p in regular)
        high = max(p.pid for p in regular)
        last = parsed.page >= parsed.total_pages
        rows = self.query(
            "SELECT pid FROM posts WHERE tid = ? AND state != 'vanished' AND pid >= ? "
            + ("" if last else "AND pid <= ?"),
            [parsed.tid, low] + ([] if last else [high]),
        )
        gone = [r["pid"] for r in rows if r["pid"] not in pids]
        for pid in gone:
            rev = self.execute(
                "SELECT COALESCE(MAX(revision), 0) FROM post_revisions WHERE tid = ? AND pid = ?",
                [parsed.tid, pid],
            ).fetchone()[0]
            self.execute(
                "UPDATE posts SET state = 'vanished', last_seen_at = last_seen_at "
                "WHERE tid = ? AND pid = ?",
                [parsed.tid, pid],
            )
            self.execute(
                "INSERT INTO post_revisions(tid, pid, revision, seen_at, content_hash, state, "
                "text, message_html, quoted_pids, marks, edit_editor, edit_at, page_id) "
                "SELECT tid, pid, ?, ?, content_hash, 'vanished', text, message_html, "
                "quoted_pids, marks, edit_editor, edit_at, page_id FROM posts "
                "WHERE tid = ? AND pid = ?",
                [rev + 1, seen, parsed.tid, pid],
            )
        return len(gone)

    def log_crawl(self, **row: Any) -> None:
        """One crawl log row; its detail and url never carry a formhash/auth/saltkey value
        (the crawler scrubs the session's cookie values before)."""
        for key in ("detail", "url"):
            if row.get(key):
                row[key] = scrub_text(str(row[key]))
        with self.atomic():
            self.insert("crawl_log", [row])

    # -- reading --------------------------------------------------------------------------
    def posts(self, tid: int | None = None, *, html: bool = True) -> list[Post]:
        """The stored posts (of one thread), in posting order. Reads only the columns a Post
        is made of, as tuples, and decodes no empty list (:func:`_post_from_values`).

        ``html=False``: ``message_html`` is left empty (not read), for a reader that never
        looks at it (derive reads the words, ``text``, and the marks)."""
        columns = POST_COLUMNS if html else _POST_COLUMNS_NO_HTML
        sql = f"SELECT {', '.join(columns)} FROM posts"
        args: list[Any] = []
        if tid is not None:
            sql += " WHERE tid = ?"
            args.append(tid)
        sql += " ORDER BY tid, posted_ts, pid"
        return [_post_from_values(*r) for r in self.execute(sql, args)]

    def post_sketches(
        self, tid: int, floors: tuple[int, int] | None = None, *, floorless: bool = False
    ) -> list[PostSketch]:
        """One thread's posts, in posting order (as :meth:`posts`), as much as conduct reads of
        them: who, when, where, the words, the state and the marks — cheaper than :meth:`posts`
        for a thread of thousands (no Post, no HTML, no quotes). ``floors``: only the posts on
        floors ``lo <= floor < hi``; ``floorless``: only the posts without a floor."""
        where, args = "tid = ?", [tid]
        if floorless:
            where += " AND floor IS NULL"
        elif floors is not None:
            where += " AND floor >= ? AND floor < ?"
            args += list(floors)
        sql = (
            "SELECT pid, floor, author, uid, posted_at, text, state, marks FROM posts "
            f"WHERE {where} ORDER BY tid, posted_ts, pid"
        )
        return [
            PostSketch(
                pid,
                floor,
                author or "",
                uid or 0,
                datetime.fromisoformat(posted_at) if posted_at else None,
                text or "",
                _STATES[state],
                marks_from_json(marks),
            )
            for pid, floor, author, uid, posted_at, text, state, marks in self.execute(sql, args)
        ]

    def post_rows(self, tid: int) -> list[dict[str, Any]]:
        return self.query("SELECT * FROM posts WHERE tid = ? ORDER BY posted_ts, pid", [tid])

    def revisions(self, tid: int, pid: int) -> list[dict[str, Any]]:
        return self.query(
            "SELECT * FROM post_revisions WHERE tid = ? AND pid = ? ORDER BY revision",
            [tid, pid],
        )

    def counts(self) -> dict[str, int]:
        return {
            name: int(self.conn.execute(f"SELECT count(*) FROM {name}").fetchone()[0])
            for name in ("threads", "pages", "posts", "post_revisions", "crawl_log")
        }


def open_store(path: Path | str) -> Store:
    store = Store(path)
    store.migrate()
    return store


class ReadOnlyStore(Store):
    """A store opened read-only (``mode=ro``): no file is created, no migration is applied,
    and any write fails (``sqlite3.OperationalError``: attempt to write a readonly database).

    SQLite creates the ``-wal``/``-shm`` files a reader of a WAL database needs; when this
    reader was the one that created them, :meth:`close` lets SQLite remove them again, so the
    store's folder is left as it was found.
    """

    def __init__(self, path: Path | str) -> None:  # not Store.__init__: that creates the file
        self.path = Path(path)
        conn = None
        try:
            conn, self._had_sidecars = connect_readonly(self.path)
            names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            done = (
                {r[0] for r in conn.execute("SELECT name FROM _migrations")}
                if "_migrations" in names
                else set()
            )
        except sqlite3.DatabaseError as exc:
            if conn is not None:
                conn.close()
            raise StoreError(
                f"无法只读打开数据库 {self.path}：{exc}（不是 bansha 的数据库文件？）"
            ) from exc
        self.conn = conn
        if not done:
            self.close()
            raise StoreError(
                f"数据库 {self.path} 还没有初始化（是空的）：先运行 bansha init 或 bansha cycle"
            )
        missing = [name for name, _ in MIGRATIONS if name not in done]
        if missing:
            self.close()
            raise StoreError(
                f"数据库 {self.path} 是旧版本的 bansha 建的，需要升级：先运行 bansha init"
                "（这个命令只读数据库，不会升级它）"
            )

    def close(self) -> None:
        close_readonly(self.conn, self.path, self._had_sidecars)


def open_store_readonly(path: Path | str) -> Store:
    """The existing store at ``path``, read-only; :class:`StoreError` (Chinese) when there is
    none, it is empty or from an older bansha (never created, never migrated)."""
    path = Path(path)
    if not path.is_file():
        raise StoreError(
            f"还没有数据库 {path}：这个命令只读取数据库，不会创建它；"
            "先运行 bansha init 或 bansha cycle"
        )
    return ReadOnlyStore(path)
