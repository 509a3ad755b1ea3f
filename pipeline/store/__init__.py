"""The SQLite store of one game (sqlite-utils).

Raw responses are the source of truth; posts, revisions and every verdict are derived from them
and can be derived again. The schema is created and migrated by the code; each migration is
recorded in ``_migrations``. Every page is written in one transaction, so a crawl killed at any
moment leaves the store consistent and the next crawl completes it.

No secret is stored: every body goes through :func:`pipeline.discuz.client.scrub_body` in
:meth:`Store._store_body` (the session's cookie values, the mobile API's ``auth``/``saltkey``/
``formhash``, the pages' formhash), and deleted content is overwritten (``secure_delete``).

Evidence never gets worse: a reading of a post from a poorer source (the mobile API, which
drops ``[size]``, a shown ``[hide]`` and the ``本帖最后由`` note) never replaces a richer reading
of the same content, and a richer reading of the same content enriches the revision in place
instead of making a new one (see :func:`reading_rank`).

A page's raw body is kept when the page's posts changed (first sighting of the page, a new
post, an edit, a richer reading, a vanished post, floors or subject changed), not on every
fetch: Discuz pages differ on every request (views, online counts, times), so every fetch would
otherwise keep a new body. Every fetch is still recorded, as a small ``pages`` row (time, url,
status, body id); a fetch whose body was not kept points at the last kept body of its page,
which shows the same posts. Bodies are stored zlib-compressed (:func:`encode_body`), keyed by
the sha256 of the uncompressed scrubbed body; bodies stored before are read as they are.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import sqlite_utils

from parsers.records import EditNote, Mark, MarkKind, Post, PostState, ThreadPage
from pipeline import close_readonly, connect_readonly
from pipeline.store.scrub import scrub_body, scrub_text

log = logging.getLogger(__name__)


#: ``meta`` key of the stored tally views' key (:meth:`Store.write_tally_views`)
TALLY_VIEW_KEY = "tally:view"
#: ``meta``: bumped (by the change triggers, pipeline/cycle.py) by every write to what a draft's
#: text is made from — posts, the director's records, the engine's resolutions; each live draft
#: keeps the value it was last drafted (or found unchanged) at, in ``draft_inputs``
DRAFT_INPUTS_KEY = "drafts:inputs"


class StoreError(RuntimeError):
    """A store that cannot be opened or is not ours (message in Chinese)."""


class StoreBusy(StoreError):
    """Another process held the store's write lock for longer than the busy timeout."""


BUSY_TIMEOUT_S = 30.0


def _busy_message(path: Path) -> str:
    return (
        f"数据库 {path} 正被另一个 bansha 进程写入，等待 {BUSY_TIMEOUT_S:.0f} 秒后仍未释放；"
        "请稍后重试（若有卡住的 bansha 进程，请先结束它）。"
    )


# long (105 lines): a recorded migration is the schema it created: it stays as it was written
def _m001_initial(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE threads (
            tid INTEGER PRIMARY KEY,
            day INTEGER,
            role TEXT,
            subject TEXT,
            source TEXT,            -- the source the page numbers below refer to
            ppp INTEGER,
            last_page INTEGER,      -- the last page fully stored (resume point)
            total_pages INTEGER,
            last_crawled_at TEXT,
            last_outcome TEXT
        )"""
    )
    db.execute(
        """
        CREATE TABLE page_bodies (
            sha256 TEXT PRIMARY KEY,
            body BLOB NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE pages (
            id INTEGER PRIMARY KEY,
            tid INTEGER,
            page INTEGER,
            source TEXT,
            url TEXT NOT NULL,
            status INTEGER,
            headers TEXT,           -- JSON object; cookies are never stored
            sha256 TEXT REFERENCES page_bodies(sha256),
            fetched_at TEXT NOT NULL,
            outcome TEXT            -- ok | the PageError kind
        )"""
    )
    db.execute("CREATE INDEX pages_tid_page ON pages(tid, page)")
    db.execute(
        """
        CREATE TABLE posts (
            tid INTEGER NOT NULL,
            pid INTEGER NOT NULL,
            floor INTEGER,
            page INTEGER,
            author TEXT,
            uid INTEGER,
            posted_at TEXT,         -- ISO 8601 with the forum's offset
            posted_ts INTEGER,      -- Unix seconds, for ordering and windows
            edit_editor TEXT,
            edit_at TEXT,
            message_html TEXT,
            text TEXT,
            quoted_pids TEXT,       -- JSON list
            quote_texts TEXT,       -- JSON list
            marks TEXT,             -- JSON list of {kind, value, text}
            content_hash TEXT,
            state TEXT NOT NULL,
            source TEXT,
            first_seen_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            page_id INTEGER REFERENCES pages(id),
            PRIMARY KEY (tid, pid)
        )"""
    )
    db.execute("CREATE INDEX posts_author ON posts(uid, posted_ts)")
    db.execute(
        """
        CREATE TABLE post_revisions (
            id INTEGER PRIMARY KEY,
            tid INTEGER NOT NULL,
            pid INTEGER NOT NULL,
            revision INTEGER NOT NULL,      -- 1 = as first seen
            seen_at TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            state TEXT NOT NULL,
            text TEXT,
            message_html TEXT,
            quoted_pids TEXT,
            marks TEXT,
            edit_editor TEXT,
            edit_at TEXT,
            page_id INTEGER REFERENCES pages(id),
            UNIQUE (tid, pid, revision)
        )"""
    )
    db.execute(
        """
        CREATE TABLE crawl_log (
            id INTEGER PRIMARY KEY,
            run_id TEXT,
            at TEXT NOT NULL,
            tid INTEGER,
            page INTEGER,
            url TEXT,
            outcome TEXT NOT NULL,  -- ok | retry | error kind
            detail TEXT,
            attempts INTEGER,
            new_posts INTEGER,
            changed_posts INTEGER,
            vanished_posts INTEGER
        )"""
    )
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")


# long (122 lines): a recorded migration is the schema it created: it stays as it was written
def _m002_journal_and_verdicts(db: sqlite_utils.Database) -> None:
    # -- the director's journal: what only the director knows, each entry with a time --------
    db.execute(
        """
        CREATE TABLE journal_proxy_votes (
            id INTEGER PRIMARY KEY,
            day INTEGER NOT NULL,
            voter TEXT NOT NULL,
            target TEXT NOT NULL,       -- a roster name or 弃权
            at TEXT NOT NULL,           -- when the director cast it (ISO, aware)
            note TEXT,
            recorded_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE journal_outs (
            id INTEGER PRIMARY KEY,
            player TEXT NOT NULL,
            at TEXT NOT NULL,
            cause TEXT NOT NULL,
            recorded_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE journal_modifiers (
            id INTEGER PRIMARY KEY,
            day INTEGER NOT NULL,
            player TEXT NOT NULL,
            kind TEXT NOT NULL,
            value TEXT NOT NULL,        -- a fraction, e.g. "1" or "3/2"
            source TEXT,
            recorded_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE journal_settings (
            key TEXT PRIMARY KEY,       -- e.g. "sheriff", "speed:2"
            value TEXT,
            recorded_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE card_events (
            id INTEGER PRIMARY KEY,
            player TEXT NOT NULL,
            colour TEXT NOT NULL,       -- 蓝牌 | 黄牌 | 红牌
            reason TEXT NOT NULL,
            at TEXT NOT NULL,
            source TEXT NOT NULL,       -- a flag id, or 导演
            recorded_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE flag_decisions (
            flag_id TEXT PRIMARY KEY,
            status TEXT NOT NULL,       -- confirmed | dismissed
            card TEXT,
            why TEXT,
            decided_at TEXT NOT NULL
        )"""
    )
    # -- derived: rewritten by every derivation, browsable (e.g. with Datasette) -------------
    db.execute(
        """
        CREATE TABLE votes (
            day INTEGER NOT NULL,
            seq INTEGER NOT NULL,       -- post order
            tid INTEGER,
            pid INTEGER,
            floor INTEGER,
            at TEXT,
            voter TEXT,
            kind TEXT,
            target TEXT,
            status TEXT NOT NULL,
            counts_for TEXT,
            reason TEXT NOT NULL,
            rule TEXT,
            url TEXT,
            PRIMARY KEY (day, seq)
        )"""
    )
    db.execute(
        """
        CREATE TABLE tallies (
            day INTEGER PRIMARY KEY,
            out TEXT,
            elected TEXT,
            decided_by TEXT,
            json TEXT NOT NULL,
            derived_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE post_counts (
            day INTEGER NOT NULL,
            player TEXT NOT NULL,
            count INTEGER NOT NULL,
            pids TEXT,
            PRIMARY KEY (day, player)
        )"""
    )
    db.execute(
        """
        CREATE TABLE flags (
            id TEXT PRIMARY KEY,
            day INTEGER,
            kind TEXT,
            player TEXT,
            reason TEXT,
            card TEXT,
            rule TEXT,
            evidence TEXT,              -- JSON list of {tid, pid, floor, at, url}
            raised_at TEXT NOT NULL
        )"""
    )


def _m003_drafts(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE drafts (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,         -- running_tally | result | day_open | elevator | cards |
                                        -- reminder | inquiry_answers | flags
            day INTEGER,
            key TEXT NOT NULL,          -- what the draft is about (kind + day + …): one live draft
            tid INTEGER,                -- the thread it will be posted to
            action TEXT NOT NULL DEFAULT 'reply',  -- reply | edit (the 电梯 floor)
            edit_pid INTEGER,           -- the post an 'edit' draft replaces
            title TEXT,
            body TEXT NOT NULL,         -- Discuz BBCode, as it will be posted
            body_hash TEXT NOT NULL,
            generated_body TEXT NOT NULL,  -- what bansha drafted (before a director's edits)
            state TEXT NOT NULL,        -- pending | approved | posted | rejected | superseded
            previous_id INTEGER REFERENCES drafts(id),  -- the draft of the same key before it
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            approved_at TEXT,
            posted_at TEXT,
            posted_pid INTEGER,
            reject_why TEXT
        )"""
    )
    db.execute("CREATE INDEX drafts_key ON drafts(key, id)")
    db.execute(
        """
        CREATE TABLE draft_events (
            id INTEGER PRIMARY KEY,
            draft_id INTEGER NOT NULL REFERENCES drafts(id),
            at TEXT NOT NULL,
            from_state TEXT,
            to_state TEXT NOT NULL,
            note TEXT
        )"""
    )
    db.execute(
        """
        CREATE TABLE post_attempts (
            id INTEGER PRIMARY KEY,
            draft_id INTEGER NOT NULL REFERENCES drafts(id),
            body_hash TEXT NOT NULL,
            started_at TEXT NOT NULL,   -- the intent, recorded before anything is sent
            finished_at TEXT,
            outcome TEXT,               -- posted | found | failed | captcha | pending_moderation
            pid INTEGER,
            detail TEXT
        )"""
    )


def _m004_engine(db: sqlite_utils.Database) -> None:
    # -- the director's journal of skills and decisions (night actions, day decisions) ------
    db.execute(
        """
        CREATE TABLE journal_actions (
            id INTEGER PRIMARY KEY,
            phase TEXT NOT NULL,        -- night | day
            number INTEGER NOT NULL,    -- the night or day number
            actor TEXT NOT NULL,
            card TEXT,                  -- the card the actor acts with, when given
            skill TEXT NOT NULL,        -- as the rule text writes it (预言, 毒药, 最后一枪 …)
            targets TEXT NOT NULL,      -- JSON list of chosen targets (选择目标)
            choice TEXT,                -- 毒药 (黑商), 放弃, a seed (红牌罚下) …
            at TEXT,                    -- when the player sent it (ISO, aware), if known
            source TEXT NOT NULL,       -- cli | 文件 <name>
            recorded_at TEXT NOT NULL,
            removed_at TEXT             -- set by `night remove`: kept as evidence, not used
        )"""
    )
    db.execute("CREATE INDEX journal_actions_phase ON journal_actions(phase, number, id)")
    # -- one engine snapshot per resolved phase: the input, the state after it, the report --
    db.execute(
        """
        CREATE TABLE engine_snapshots (
            phase TEXT PRIMARY KEY,     -- night:N | day:N
            seq INTEGER NOT NULL UNIQUE, -- phase order: night N = 2N+1, day N = 2N
            input_json TEXT NOT NULL,   -- the actions (night) or the day input it resolved
            state_json TEXT NOT NULL,   -- canonical JSON of the state after the phase
            state_hash TEXT NOT NULL,   -- sha256 of state_json
            report_json TEXT NOT NULL,  -- the `night resolve --json` contract
            complete INTEGER NOT NULL,  -- 0 while decisions are pending (最后一枪, 殉职 …)
            winner TEXT,
            resolved_at TEXT NOT NULL
        )"""
    )
    db.execute(
        """
        CREATE TABLE engine_events (
            phase TEXT NOT NULL,
            seq INTEGER NOT NULL,       -- event order within the phase
            step TEXT,
            rule TEXT,
            actor TEXT,
            result TEXT,
            json TEXT NOT NULL,
            PRIMARY KEY (phase, seq)
        )"""
    )


def _m005_substitutions(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE journal_substitutions (
            id INTEGER PRIMARY KEY,
            player TEXT NOT NULL,       -- the roster slot (the name the game file gives)
            uid INTEGER NOT NULL,       -- the substitute's forum account
            name TEXT NOT NULL,         -- the substitute's forum name
            from_at TEXT NOT NULL,      -- from when the substitute plays the slot
            recorded_at TEXT NOT NULL
        )"""
    )


def _m006_lastwords(db: sqlite_utils.Database) -> None:
    db.execute(
        """
        CREATE TABLE journal_lastwords (
            id INTEGER PRIMARY KEY,
            player TEXT NOT NULL,       -- the roster slot
            text TEXT NOT NULL,         -- the last words as the player sent them
            at TEXT NOT NULL,           -- when the player sent them
            recorded_at TEXT NOT NULL,
            removed_at TEXT             -- set when the director withdraws the record
        )"""
    )


def _m007_scrub_secrets(db: sqlite_utils.Database) -> None:
    """Bodies stored before bodies were scrubbed: scrub the known keys (the mobile API's auth,
    saltkey and formhash, the pages' formhash) and re-key them by their new sha256.

    The new body is inserted first, the pages pointing at the old one are moved to it, then the
    old one is deleted (overwritten: ``secure_delete``), so the foreign keys stay valid; all of it
    in the migration's one transaction. The crawl log's details get the same treatment.
    """
    rows = db.execute("SELECT sha256 FROM page_bodies").fetchall()
    for (old,) in rows:
        stored = db.execute("SELECT body FROM page_bodies WHERE sha256 = ?", [old]).fetchone()[0]
        body = decode_body(stored)  # re-run on a compacted store: read through the marker
        clean = scrub_body(body)
        if clean == body:
            continue
        new = hashlib.sha256(clean).hexdigest()
        # written as this migration always wrote them (uncompressed); 010 compresses them
        db.execute("INSERT OR IGNORE INTO page_bodies(sha256, body) VALUES (?, ?)", [new, clean])
        db.execute("UPDATE pages SET sha256 = ? WHERE sha256 = ?", [new, old])
        db.execute("DELETE FROM page_bodies WHERE sha256 = ?", [old])
    for row_id, detail in db.execute(
        "SELECT id, detail FROM crawl_log WHERE detail IS NOT NULL"
    ).fetchall():
        clean_detail = scrub_text(detail)
        if clean_detail != detail:
            db.execute("UPDATE crawl_log SET detail = ? WHERE id = ?", [clean_detail, row_id])


def _m008_ppp_from_pages(db: sqlite_utils.Database) -> None:
    """``threads.ppp`` of a desktop thread was the game file's ``[forum] ppp``, not what the
    forum serves: forget it, the next crawl learns it from the pages."""
    db.execute("UPDATE threads SET ppp = NULL WHERE source IS NULL OR source != 'mobile-api'")


def _m009_vote_notes(db: sqlite_utils.Database) -> None:
    """A verdict's director-only note (floors, pids, what to do) beside its public reason."""
    if "note" not in db["votes"].columns_dict:
        db.execute("ALTER TABLE votes ADD COLUMN note TEXT")


def _m010_compact_bodies(db: sqlite_utils.Database) -> None:
    """Store what changed, once: compact a store that kept a body per fetch.

    ``pages`` gets ``body_kept`` (1: ``sha256`` is this response's own body; 0: the body was not
    kept — the page's posts had not changed — and ``sha256`` is the last kept body of the same
    page, or NULL) and ``posts_sig`` (:func:`page_signature` of a kept page, to tell the next
    fetch of the page whether its posts changed).

    A fetch's body is dropped only when nothing can need it. Kept: every response that was not
    a page (errors are evidence); every page a post or a revision points at (``page_id``); every
    page fetched when a revision was recorded (its ``seen_at`` is the fetch time: first
    sightings, edits, vanishings — also when a richer reading moved the revision's ``page_id``
    on); the first and the last fetch of each page. The other fetches keep their row (time,
    url, status) and point at the last kept body before them. Then every body left is
    compressed. All of it in the migration's one transaction; :func:`migrate` VACUUMs after.
    """
    columns = db["pages"].columns_dict
    if "body_kept" not in columns:
        db.execute("ALTER TABLE pages ADD COLUMN body_kept INTEGER NOT NULL DEFAULT 1")
    if "posts_sig" not in columns:
        db.execute("ALTER TABLE pages ADD COLUMN posts_sig TEXT")
    needed: set[int] = set()
    for table in ("posts", "post_revisions"):
        needed.update(
            r[0]
            for r in db.execute(f"SELECT DISTINCT page_id FROM {table} WHERE page_id IS NOT NULL")
        )
    recorded = {
        (r[0], r[1]) for r in db.execute("SELECT DISTINCT tid, seen_at FROM post_revisions")
    }
    groups: dict[tuple[Any, ...], list[tuple[int, str | None]]] = {}
    for page_id, tid, page, source, outcome, fetched_at, digest, kept in db.execute(
        "SELECT id, tid, page, source, outcome, fetched_at, sha256, body_kept FROM pages "
        "ORDER BY id"
    ).fetchall():
        if outcome != "ok" or tid is None or page is None or not kept:
            continue  # an error response, or a fetch already without its own body
        if (tid, fetched_at) in recorded:
            needed.add(page_id)
        groups.setdefault((tid, page, source), []).append((page_id, digest))
    repoint: list[list[Any]] = []
    for rows in groups.values():
        needed.add(rows[0][0])
        needed.add(rows[-1][0])
        last_kept = rows[0][1]
        for page_id, digest in rows:
            if page_id in needed:
                last_kept = digest
            else:
                repoint.append([last_kept, page_id])
    db.conn.executemany(
        "UPDATE pages SET body_kept = 0, sha256 = ?, headers = NULL WHERE id = ?", repoint
    )
    db.execute(
        "DELETE FROM page_bodies WHERE sha256 NOT IN "
        "(SELECT sha256 FROM pages WHERE sha256 IS NOT NULL)"
    )
    for (digest,) in db.execute("SELECT sha256 FROM page_bodies").fetchall():
        stored = db.execute("SELECT body FROM page_bodies WHERE sha256 = ?", [digest]).fetchone()
        if not is_encoded(stored[0]):
            db.execute(
                "UPDATE page_bodies SET body = ? WHERE sha256 = ?",
                [encode_body(bytes(stored[0])), digest],
            )


def _m011_game_threads(db: sqlite_utils.Database) -> None:
    """The threads bansha opens itself: one row per day and role, with the
    draft that opened it and when; the drafts learn a subject (a new thread's), a not-before time
    (posted only from then: a day's opening, a vote thread's close) and the thread role."""
    db.execute(
        """
        CREATE TABLE game_threads (
            id INTEGER PRIMARY KEY,
            day INTEGER NOT NULL,
            role TEXT NOT NULL,         -- discussion | vote | progress | inquiry | first_vote
            tid INTEGER NOT NULL,
            subject TEXT,
            draft_id INTEGER REFERENCES drafts(id),  -- the newthread draft that opened it
            opened_at TEXT NOT NULL,
            how TEXT NOT NULL,          -- posted | found (after an unclear send) | moderated
            UNIQUE (day, role)
        )"""
    )
    columns = db["drafts"].columns_dict
    for column in ("subject", "not_before", "role"):
        if column not in columns:
            db.execute(f"ALTER TABLE drafts ADD COLUMN {column} TEXT")


def _m012_tally_views(db: sqlite_utils.Database) -> None:
    """What ``bansha tally`` prints for each day, as the cycle's last derivation found it
    (``text``: ``--day N``; ``json``: ``--day N --json`` with a stand-in for ``as_of``, or NULL),
    valid under the key in ``meta`` ``tally:view`` (pipeline/cli/tallyview.py)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS tally_views ("
        "day INTEGER PRIMARY KEY, text TEXT NOT NULL, json TEXT)"
    )


#: the director's records that can be taken back (``bansha undo``): each row keeps when, by
#: whom (命令行 | 控制台) and why it was revoked; a revoked row is evidence, never an input
REVOCABLE_TABLES = (
    "card_events",
    "journal_proxy_votes",
    "journal_outs",
    "journal_modifiers",
    "journal_substitutions",
)


def _m013_revocations(db: sqlite_utils.Database) -> None:
    """Taking back a director's record: ``revoked_at/revoked_by/revoke_reason`` on every
    journal row table (``journal_actions`` keeps its ``removed_at`` and gains who and why), and
    ``journal_revocations``, the audit line of every undo — also of what has no row to keep
    (a flag's decision, a sheriff or speed setting: the line keeps what was taken back)."""
    for table in REVOCABLE_TABLES:
        columns = db[table].columns_dict
        for column in ("revoked_at", "revoked_by", "revoke_reason"):
            if column not in columns:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")
    columns = db["journal_actions"].columns_dict
    for column in ("removed_by", "remove_reason"):
        if column not in columns:
            db.execute(f"ALTER TABLE journal_actions ADD COLUMN {column} TEXT")
    db.execute(
        """
        CREATE TABLE IF NOT EXISTS journal_revocations (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,         -- flag | card | proxy | modifier | out | substitute |
                                        -- sheriff | speed | action
            ref TEXT NOT NULL,          -- the record: a row id, a flag id, a setting's key
            what TEXT NOT NULL,         -- the record as the director knew it (Chinese)
            revoked_at TEXT NOT NULL,
            revoked_by TEXT NOT NULL,   -- 命令行 | 控制台
            reason TEXT NOT NULL
        )"""
    )


def _m016_generated_subject(db: sqlite_utils.Database) -> None:
    """A new thread's subject as bansha generated it, beside the one the director may have
    edited (``bansha drafts edit --subject``): the next cycle compares the generated one, so a
    director's subject is kept as a director's body is (``generated_body``)."""
    if "generated_subject" not in db["drafts"].columns_dict:
        db.execute("ALTER TABLE drafts ADD COLUMN generated_subject TEXT")
    db.execute("UPDATE drafts SET generated_subject = subject WHERE generated_subject IS NULL")


def _m017_draft_inputs(db: sqlite_utils.Database) -> None:
    """What each live draft was made from: the value of :data:`DRAFT_INPUTS_KEY` when it was
    last drafted or found unchanged. A draft whose value is behind the counter was made from
    inputs that have since moved on: it is neither approved nor sent until drafted again."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS draft_inputs ("
        "draft_id INTEGER PRIMARY KEY REFERENCES drafts(id), counter INTEGER NOT NULL)"
    )


MIGRATIONS: list[tuple[str, Callable[[sqlite_utils.Database], None]]] = [
    ("001_initial", _m001_initial),
    ("002_journal_and_verdicts", _m002_journal_and_verdicts),
    ("003_drafts", _m003_drafts),
    ("004_engine", _m004_engine),
    ("005_substitutions", _m005_substitutions),
    ("006_lastwords", _m006_lastwords),
    ("007_scrub_secrets", _m007_scrub_secrets),
    ("008_ppp_from_pages", _m008_ppp_from_pages),
    ("009_vote_notes", _m009_vote_notes),
    ("010_compact_bodies", _m010_compact_bodies),
    ("011_game_threads", _m011_game_threads),
    ("012_tally_views", _m012_tally_views),
    ("013_revocations", _m013_revocations),
    ("016_generated_subject", _m016_generated_subject),
    ("017_draft_inputs", _m017_draft_inputs),
]


#: the format marker of a compressed body: what follows is a zlib stream (level 6) of the
#: scrubbed body. A body stored without it (before migration 010) is the body itself; no
#: response body starts with a NUL byte followed by this tag.
BODY_ZLIB = b"\x00bansha-zlib\x00"
ZLIB_LEVEL = 6


def encode_body(body: bytes) -> bytes:
    """How a (scrubbed) body is stored: the marker, then the body compressed."""
    return BODY_ZLIB + zlib.compress(body, ZLIB_LEVEL)


def is_encoded(stored: bytes | memoryview) -> bool:
    return bytes(stored[: len(BODY_ZLIB)]) == BODY_ZLIB


def decode_body(stored: bytes | memoryview) -> bytes:
    """The body as it was kept (scrubbed), from a compressed row or from an older raw one."""
    if is_encoded(stored):
        return zlib.decompress(bytes(stored[len(BODY_ZLIB) :]))
    return bytes(stored)


def page_signature(parsed: ThreadPage) -> str:
    """What a page shows of its posts, as the store keeps them: subject, and for every post
    (deleted-floor placeholders too) its pid, floor, state, content hash, edit note and source.
    A fetch with the signature of its page's last kept body, and no new, changed, enriched or
    vanished post, shows what that body shows: its own body adds no evidence. The signature
    catches what the counts do not: floors renumbered after a deletion, posts moved to another
    page, a new subject."""
    payload = json.dumps(
        [
            parsed.subject,
            [
                [
                    p.pid,
                    p.floor,
                    p.state.value,
                    p.content_hash,
                    p.edit.editor if p.edit else None,
                    _iso(p.edit.edited_at) if p.edit else None,
                    p.source,
                ]
                for p in parsed.posts
            ],
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt is not None else None


#: how much each source shows of a post: the desktop page keeps every mark and the edit note;
#: the mobile API v4 drops [size], a shown [hide]'s box and the 本帖最后由 note (docs/discuz.md
#: §3.3)
SOURCE_RANK = {"html": 2, "mobile": 1, "mobile-api": 1}
#: marks only the richer source can show: their absence from a mobile reading says nothing
SOURCE_BOUND_MARKS = frozenset({MarkKind.ENLARGED, MarkKind.TINY, MarkKind.HIDE_TAG})


def reading_core(state: str, text: str, quoted_pids: str, marks: tuple[Mark, ...]) -> str:
    """What every source shows of a post alike: its state, words, quotes and the marks both
    sources keep (colours). Two readings with the same core are the same content."""
    payload = json.dumps(
        [
            state,
            text,
            json.loads(quoted_pids or "[]"),
            sorted(
                {
                    (m.kind.value, m.text)
                    for m in marks
                    if m.kind is not MarkKind.BBCODE and m.kind not in SOURCE_BOUND_MARKS
                }
            ),
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def reading_rank(row: dict[str, Any]) -> tuple[int, int, int]:
    """How rich a reading of a post is: its source (desktop page > mobile API), then whether it
    carries the edit note, then how many source-bound marks it shows."""
    marks = marks_from_json(row.get("marks"))
    return (
        SOURCE_RANK.get(row.get("source") or "", 0),
        1 if row.get("edit_at") else 0,
        sum(1 for m in marks if m.kind in SOURCE_BOUND_MARKS),
    )


def _row_core(row: dict[str, Any]) -> str:
    return reading_core(
        row["state"], row.get("text") or "", row.get("quoted_pids"), marks_from_json(row["marks"])
    )


def _marks_json(marks: Iterable[Mark]) -> str:
    return json.dumps(
        [{"kind": m.kind.value, "value": m.value, "text": m.text} for m in marks],
        ensure_ascii=False,
    )


_MARK_KINDS = {k.value: k for k in MarkKind}
_STATES = {s.value: s for s in PostState}
#: how an empty list is stored (``json.dumps([])``): most posts quote nothing and carry no mark
_EMPTY = (None, "", "[]")


def marks_from_json(raw: str | None) -> tuple[Mark, ...]:
    if raw in _EMPTY:
        return ()
    return tuple(Mark(_MARK_KINDS[m["kind"]], m["value"], m["text"]) for m in json.loads(raw))


def _json_tuple(raw: str | None) -> tuple[Any, ...]:
    return () if raw in _EMPTY else tuple(json.loads(raw))


#: the columns a Post is made of, in the order :func:`_post_from_values` takes them
POST_COLUMNS = (
    "tid",
    "pid",
    "floor",
    "author",
    "uid",
    "posted_at",
    "message_html",
    "text",
    "quoted_pids",
    "quote_texts",
    "edit_editor",
    "edit_at",
    "state",
    "marks",
    "source",
)


#: :data:`POST_COLUMNS` with an empty ``message_html`` in its place (``Store.posts(html=False)``)
_POST_COLUMNS_NO_HTML = tuple("''" if c == "message_html" else c for c in POST_COLUMNS)


def _post_from_values(
    tid: int,
    pid: int,
    floor: int | None,
    author: str | None,
    uid: int | None,
    posted_at: str | None,
    message_html: str | None,
    text: str | None,
    quoted_pids: str | None,
    quote_texts: str | None,
    edit_editor: str | None,
    edit_at: str | None,
    state: str,
    marks: str | None,
    source: str | None,
) -> Post:
    """A stored post as its record. Cheap: the lists most posts leave empty are not decoded
    (``Store.posts`` builds every post of a thread for every derivation)."""
    return Post(
        tid=tid,
        pid=pid,
        floor=floor,
        author=author or "",
        uid=uid or 0,
        posted_at=datetime.fromisoformat(posted_at) if posted_at else None,
        message_html=message_html or "",
        text=text or "",
        quoted_pids=_json_tuple(quoted_pids),
        quote_texts=_json_tuple(quote_texts),
        edit=EditNote(edit_editor, datetime.fromisoformat(edit_at))
        if edit_editor and edit_at
        else None,
        state=_STATES[state],
        marks=marks_from_json(marks),
        source=source or "html",
    )


def post_from_row(row: dict[str, Any]) -> Post:
    return _post_from_values(
        row["tid"],
        row["pid"],
        row.get("floor"),
        row.get("author"),
        row.get("uid"),
        row.get("posted_at"),
        row.get("message_html"),
        row.get("text"),
        row.get("quoted_pids"),
        row.get("quote_texts"),
        row.get("edit_editor"),
        row.get("edit_at"),
        row["state"],
        row.get("marks"),
        row.get("source"),
    )


class PostSketch(NamedTuple):
    """What :meth:`Store.post_sketches` reads of a post (the fields as in ``Post``)."""

    pid: int
    floor: int | None
    author: str
    uid: int
    posted_at: datetime | None
    text: str
    state: PostState
    marks: tuple[Mark, ...]


@dataclass(frozen=True, slots=True)
class PageWrite:
    """What saving one page changed."""

    page_id: int
    new_posts: int
    changed_posts: int
    vanished_posts: int
    #: posts whose same content was read richer than stored (a mark or edit note gained)
    enriched_posts: int = 0
    #: whether this fetch's body was kept (the page's posts changed, or never kept before)
    body_kept: bool = True


class Store:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.db = open_db(self.path)

    # -- schema ---------------------------------------------------------------------------
    def migrate(self) -> list[str]:
        return migrate(self.db)

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One write transaction, its write lock taken first (``BEGIN IMMEDIATE``).

        A deferred ``BEGIN`` reads under a snapshot and then fails at once with "database is
        locked" when another process wrote meanwhile (SQLite cannot upgrade a stale snapshot);
        taking the lock first makes every read inside the block see the latest state and makes
        a second writer wait (up to ``BUSY_TIMEOUT_S``). Nested blocks are savepoints.
        """
        conn = self.db.conn
        if conn.in_transaction:
            with self.db.atomic():  # a savepoint inside the open transaction
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

    def close(self) -> None:
        self.db.close()

    # -- meta -----------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = list(self.db.query("SELECT value FROM meta WHERE key = ?", [key]))
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
            self.db.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )

    def write_tally_views(self, key: str, views: Mapping[int, tuple[str, str | None]]) -> None:
        """Replace the stored tally views (day -> text, JSON) and their key (``meta``
        ``tally:view``); ``views`` empty drops them (and the key)."""
        with self.atomic():
            self.db.execute("DELETE FROM tally_views")
            for day, (text, as_json) in sorted(views.items()):
                self.db.execute(
                    "INSERT INTO tally_views(day, text, json) VALUES (?, ?, ?)",
                    [day, text, as_json],
                )
            if views:
                self.set_meta(TALLY_VIEW_KEY, key)
            else:
                self.db.execute("DELETE FROM meta WHERE key = ?", [TALLY_VIEW_KEY])

    # -- threads --------------------------------------------------------------------------
    def thread(self, tid: int) -> dict[str, Any] | None:
        rows = list(self.db.query("SELECT * FROM threads WHERE tid = ?", [tid]))
        return rows[0] if rows else None

    def register_thread(self, tid: int, *, day: int | None, role: str | None) -> None:
        with self.atomic():
            self.db.execute(
                "INSERT INTO threads(tid, day, role) VALUES (?, ?, ?) "
                "ON CONFLICT(tid) DO UPDATE SET day = excluded.day, role = excluded.role",
                [tid, day, role],
            )

    def opened_threads(self) -> list[dict[str, Any]]:
        """The threads bansha opened (``game_threads``), by day and role; [] on a store from
        before them (a read-only store is never migrated)."""
        try:
            return list(self.db.query("SELECT * FROM game_threads ORDER BY day, id"))
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
            self.db.execute(
                "INSERT INTO game_threads(day, role, tid, subject, draft_id, opened_at, how) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(day, role) DO NOTHING",
                [day, role, tid, subject, draft_id, at, how],
            )

    def reset_thread_position(self, tid: int) -> None:
        with self.atomic():
            self.db.execute(
                "UPDATE threads SET last_page = NULL, total_pages = NULL WHERE tid = ?", [tid]
            )

    # -- pages and posts ------------------------------------------------------------------
    def _store_body(self, body: bytes, secrets: Iterable[str] = ()) -> str:
        """Keep a body, scrubbed of secrets (the one place bodies are written), compressed
        (:func:`encode_body`); its key is the sha256 of the scrubbed body before compression,
        so the same body is stored once."""
        body = scrub_body(body, secrets)
        digest = hashlib.sha256(body).hexdigest()
        if self.db.execute("SELECT 1 FROM page_bodies WHERE sha256 = ?", [digest]).fetchone():
            return digest
        self.db.execute(
            "INSERT INTO page_bodies(sha256, body) VALUES (?, ?)", [digest, encode_body(body)]
        )
        return digest

    def body(self, sha256: str) -> bytes | None:
        """A stored body as it was kept (scrubbed, uncompressed), whichever format its row is
        in; None when no body has that key."""
        row = self.db.execute("SELECT body FROM page_bodies WHERE sha256 = ?", [sha256]).fetchone()
        return None if row is None else decode_body(row[0])

    def page_body(self, page_id: int) -> bytes | None:
        """The body a ``pages`` row points at: the fetch's own when it was kept, else the last
        kept body of the same page (the same posts); None when there is none."""
        row = self.db.execute("SELECT sha256 FROM pages WHERE id = ?", [page_id]).fetchone()
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
        cur = self.db.execute(
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
        rows = list(
            self.db.query(
                "SELECT id, sha256, posts_sig FROM pages WHERE tid = ? AND page = ? AND source = ? "
                "AND outcome = 'ok' AND body_kept = 1 ORDER BY id DESC LIMIT 1",
                [tid, page, source],
            )
        )
        return rows[0] if rows else None

    # long (170 lines): one page in one transaction: every write of a page (posts, revisions,
    # vanished, the kept body) must commit or roll back together
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
        new = changed = vanished = enriched = 0
        with self.atomic():
            # only the posts on this page: the cost follows the page, not the thread's length
            # a "无效楼层，该帖已经被删除" placeholder is not a post: Discuz may even give it a
            # made-up pid (the previous pid + 1); deletions are found by _mark_vanished
            posts = [p for p in parsed.posts if p.state is not PostState.DELETED]
            pids = [p.pid for p in posts]
            existing: dict[int, dict[str, Any]] = {}
            if pids:
                marks = ",".join("?" * len(pids))
                sql = (
                    "SELECT pid, content_hash, state, text, quoted_pids, marks, source, "
                    "edit_editor, edit_at FROM posts WHERE tid = ? AND pid IN "
                )
                existing = {
                    r["pid"]: r for r in self.db.query(f"{sql}({marks})", [parsed.tid, *pids])
                }
            # what changed, decided before anything is written: the body is kept only then
            new_posts: list[tuple[Post, dict[str, Any]]] = []
            changed_posts: list[tuple[Post, dict[str, Any]]] = []
            enriched_posts: list[tuple[Post, dict[str, Any]]] = []
            again_posts: list[Post] = []
            poorer_posts: list[Post] = []
            for post in posts:
                row = _post_row(post, page=parsed.page, seen=seen, page_id=0)
                old = existing.get(post.pid)
                if old is None:
                    new_posts.append((post, row))
                    continue
                same = old["content_hash"] == row["content_hash"] and old["state"] == row["state"]
                if not same and not (
                    old["source"] != row["source"] and _row_core(old) == _row_core(row)
                ):
                    changed_posts.append((post, row))  # a new revision, the old one kept
                    continue
                rank, old_rank = reading_rank(row), reading_rank(old)
                edit_differs = (old["edit_editor"], old["edit_at"]) != (
                    row["edit_editor"],
                    row["edit_at"],
                )
                if rank > old_rank or (rank == old_rank and (not same or edit_differs)):
                    # the same content read at least as richly: its marks, edit note and page
                    # become the evidence of the stored reading and of its revision
                    enriched_posts.append((post, row))
                elif rank < old_rank:
                    # a poorer reading (the mobile API after the desktop page): never replaces
                    # the richer one; the stored reading keeps pointing at the page it came from
                    poorer_posts.append(post)
                else:  # unchanged: only where and when it was seen (floors renumber)
                    again_posts.append(post)
            new, changed, enriched = len(new_posts), len(changed_posts), len(enriched_posts)
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
            new_rows: list[dict[str, Any]] = []
            revisions: list[dict[str, Any]] = []
            for post, row in new_posts:
                row["page_id"] = page_id
                row["first_seen_at"] = seen
                new_rows.append(row)
                revisions.append(_revision_row(post, row, 1, seen, page_id))
            for post, row in changed_posts:
                row["page_id"] = page_id
                revisions.append(
                    _revision_row(post, row, self._last_revision(post) + 1, seen, page_id)
                )
                self.db.table("posts").update((post.tid, post.pid), row)
            for post, row in enriched_posts:
                row["page_id"] = page_id
                self.db.table("posts").update((post.tid, post.pid), row)
                self.db.execute(
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
                self.db.table("posts").insert_all(new_rows)
            if revisions:
                self.db.table("post_revisions").insert_all(revisions)
            if again_posts and keep:
                # the kept body shows them as stored: it becomes where they were last read
                self.db.conn.executemany(
                    "UPDATE posts SET floor = ?, page = ?, last_seen_at = ?, page_id = ? "
                    "WHERE tid = ? AND pid = ?",
                    [[p.floor, parsed.page, seen, page_id, p.tid, p.pid] for p in again_posts],
                )
            seen_only = poorer_posts + ([] if keep else again_posts)
            if seen_only:
                self.db.conn.executemany(
                    "UPDATE posts SET floor = ?, page = ?, last_seen_at = ? "
                    "WHERE tid = ? AND pid = ?",
                    [[p.floor, parsed.page, seen, p.tid, p.pid] for p in seen_only],
                )
            self.db.execute(
                "UPDATE threads SET subject = COALESCE(?, subject), source = ?, ppp = ?, "
                "last_page = ?, total_pages = ?, last_crawled_at = ?, last_outcome = 'ok' "
                "WHERE tid = ?",
                [parsed.subject, source, ppp, parsed.page, parsed.total_pages, seen, parsed.tid],
            )
        return PageWrite(page_id, new, changed, vanished, enriched, body_kept=keep)

    def _last_revision(self, post: Post) -> int:
        return int(
            self.db.execute(
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
        rows = list(
            self.db.query(
                "SELECT pid FROM posts WHERE tid = ? AND state != 'vanished' AND pid >= ? "
                + ("" if last else "AND pid <= ?"),
                [parsed.tid, low] + ([] if last else [high]),
            )
        )
        gone = [r["pid"] for r in rows if r["pid"] not in pids]
        for pid in gone:
            rev = self.db.execute(
                "SELECT COALESCE(MAX(revision), 0) FROM post_revisions WHERE tid = ? AND pid = ?",
                [parsed.tid, pid],
            ).fetchone()[0]
            self.db.execute(
                "UPDATE posts SET state = 'vanished', last_seen_at = last_seen_at "
                "WHERE tid = ? AND pid = ?",
                [parsed.tid, pid],
            )
            self.db.execute(
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
            self.db.table("crawl_log").insert(row)

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
        return [_post_from_values(*r) for r in self.db.execute(sql, args)]

    def post_sketches(self, tid: int) -> list[PostSketch]:
        """One thread's posts, in posting order (as :meth:`posts`), as much as conduct reads of
        them: who, when, where, the words, the state and the marks — cheaper than :meth:`posts`
        for a thread of thousands (no Post, no HTML, no quotes)."""
        sql = (
            "SELECT pid, floor, author, uid, posted_at, text, state, marks FROM posts "
            "WHERE tid = ? ORDER BY tid, posted_ts, pid"
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
            for pid, floor, author, uid, posted_at, text, state, marks in self.db.execute(
                sql, [tid]
            )
        ]

    def post_rows(self, tid: int) -> list[dict[str, Any]]:
        return list(
            self.db.query("SELECT * FROM posts WHERE tid = ? ORDER BY posted_ts, pid", [tid])
        )

    def revisions(self, tid: int, pid: int) -> list[dict[str, Any]]:
        return list(
            self.db.query(
                "SELECT * FROM post_revisions WHERE tid = ? AND pid = ? ORDER BY revision",
                [tid, pid],
            )
        )

    def counts(self) -> dict[str, int]:
        return {
            name: self.db.table(name).count
            for name in ("threads", "pages", "posts", "post_revisions", "crawl_log")
        }


def _safe_headers(headers: dict[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """Response headers without anything that could carry a session secret."""
    secrets = list(secrets)
    return {
        k: scrub_text(v, secrets)
        for k, v in headers.items()
        if k.lower() not in {"set-cookie", "cookie"}
    }


def _revision_row(
    post: Post, row: dict[str, Any], revision: int, seen: str, page_id: int
) -> dict[str, Any]:
    return {
        "tid": post.tid,
        "pid": post.pid,
        "revision": revision,
        "seen_at": seen,
        "content_hash": row["content_hash"],
        "state": row["state"],
        "text": row["text"],
        "message_html": row["message_html"],
        "quoted_pids": row["quoted_pids"],
        "marks": row["marks"],
        "edit_editor": row["edit_editor"],
        "edit_at": row["edit_at"],
        "page_id": page_id,
    }


def _post_row(post: Post, *, page: int, seen: str, page_id: int) -> dict[str, Any]:
    return {
        "tid": post.tid,
        "pid": post.pid,
        "floor": post.floor,
        "page": page,
        "author": post.author,
        "uid": post.uid,
        "posted_at": _iso(post.posted_at),
        "posted_ts": int(post.posted_at.timestamp()) if post.posted_at else None,
        "edit_editor": post.edit.editor if post.edit else None,
        "edit_at": _iso(post.edit.edited_at) if post.edit else None,
        "message_html": post.message_html,
        "text": post.text,
        "quoted_pids": json.dumps(list(post.quoted_pids)),
        "quote_texts": json.dumps(list(post.quote_texts), ensure_ascii=False),
        "marks": _marks_json(post.marks),
        "content_hash": post.content_hash,
        "state": post.state.value,
        "source": post.source,
        "last_seen_at": seen,
        "page_id": page_id,
    }


def open_db(path: Path) -> sqlite_utils.Database:
    """Open (creating with mode 0600) the store and switch it to WAL."""
    path = Path(path)
    if not path.parent.exists():
        raise StoreError(f"数据库所在目录不存在：{path.parent}")
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S)
        db = sqlite_utils.Database(conn)
        db.enable_wal()
        db.execute("PRAGMA foreign_keys = ON")
        # deleted content (a body re-keyed after scrubbing) is overwritten, not left in free pages
        db.execute("PRAGMA secure_delete = ON")
        db.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"无法打开数据库 {path}：{exc}（不是 bansha 的数据库文件？）") from exc
    return db


def migrate(db: sqlite_utils.Database) -> list[str]:
    """Apply the migrations not yet recorded; return the names applied now."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    done = {r["name"] for r in db.query("SELECT name FROM _migrations")}
    applied = []
    for name, fn in MIGRATIONS:
        if name in done:
            continue
        with db.atomic():
            fn(db)
            db.execute(
                "INSERT INTO _migrations(name, applied_at) VALUES (?, ?)",
                [name, datetime.now(UTC).isoformat()],
            )
        applied.append(name)
        log.info("数据库已升级：%s", name)
    if "007_scrub_secrets" in applied or "010_compact_bodies" in applied:
        # the scrubbed bodies' old pages leave the write-ahead log for the (zeroed) main file
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if "010_compact_bodies" in applied:
        vacuum_if_worth_it(db)
    return applied


#: the share of the file's pages that must be free for a VACUUM to be worth its time
VACUUM_MIN_FREE_SHARE = 0.10


def vacuum_if_worth_it(
    db: sqlite_utils.Database, *, min_share: float = VACUUM_MIN_FREE_SHARE
) -> bool:
    """Give the space compaction freed back to the file system: ``VACUUM`` (outside any
    transaction) when at least ``min_share`` of the file's pages are free. Cheap right after
    migration 010: VACUUM copies only the live data, which the compaction just made small; a
    fresh store has nothing free and is left alone. A store another process is using is left
    as it is (its free pages are reused by later writes). Returns whether it ran."""
    free = int(db.execute("PRAGMA freelist_count").fetchone()[0])
    total = int(db.execute("PRAGMA page_count").fetchone()[0])
    if free == 0 or free < min_share * total or db.conn.in_transaction:
        return False
    try:
        db.execute("VACUUM")
    except sqlite3.OperationalError as exc:  # busy: another reader or writer
        log.info("VACUUM 未执行（%s），空闲空间留给以后的写入", exc)
        return False
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True


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
        self.db = sqlite_utils.Database(conn)
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
        close_readonly(self.db.conn, self.path, self._had_sidecars)


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
