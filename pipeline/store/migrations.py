"""The schema: each migration as it was written, applied in order and recorded in
``_migrations``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pipeline.store.bodies import decode_body, encode_body, is_encoded
from pipeline.store.connection import vacuum_if_worth_it
from pipeline.store.scrub import scrub_body, scrub_text

if TYPE_CHECKING:
    import sqlite3

    import sqlite_utils

log = logging.getLogger(__name__)


def _m001_initial(db: sqlite_utils.Database) -> None:
    """The threads and their fetched pages, then the posts, their revisions and the crawl log."""
    _m001_threads_and_pages(db)
    _m001_posts_and_log(db)


def _m001_threads_and_pages(db: sqlite_utils.Database) -> None:
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


def _m001_posts_and_log(db: sqlite_utils.Database) -> None:
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


def _m002_journal_and_verdicts(db: sqlite_utils.Database) -> None:
    """The director's journal, then the derived verdicts."""
    _m002_journal(db)
    _m002_verdicts(db)


def _m002_journal(db: sqlite_utils.Database) -> None:
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


def _m002_verdicts(db: sqlite_utils.Database) -> None:
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
    (``text``: ``--day N``; ``json``: ``--day N --json`` kept compact, with a stand-in for
    ``as_of``, or NULL), valid under the key in ``meta`` ``tally:view``
    (pipeline/cli/tallyview.py)."""
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


def _m018_derive_chunks(db: sqlite_utils.Database) -> None:
    """A discussion thread derived per chunk of floors (pipeline/derive/chunks.py): each
    chunk's write count (kept by triggers the derivation installs) and its stored material,
    the index that reads one chunk's posts, and the one that finds the posts nearest a moment."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS derive_chunk_versions ("
        "tid INTEGER NOT NULL, chunk INTEGER NOT NULL, version INTEGER NOT NULL, "
        "PRIMARY KEY (tid, chunk))"
    )
    db.execute(
        "CREATE TABLE IF NOT EXISTS derive_chunk_cache ("
        "tid INTEGER NOT NULL, chunk INTEGER NOT NULL, key TEXT NOT NULL, material BLOB NOT NULL, "
        "PRIMARY KEY (tid, chunk))"
    )
    db.execute("CREATE INDEX IF NOT EXISTS posts_tid_floor ON posts(tid, floor)")
    # the cycle's window of time reads the posts around its moment (pipeline/cycle.py)
    db.execute("CREATE INDEX IF NOT EXISTS posts_time ON posts(posted_ts)")


def _m019_crawl_log_threads(db: sqlite_utils.Database) -> None:
    """The index that finds the threads read without error (``pipeline.distinct_tids``): a
    derivation asks it each time, and the crawl log grows by a row per thread per cycle."""
    db.execute("CREATE INDEX IF NOT EXISTS crawl_log_ok_tid ON crawl_log(outcome, tid)")


def _m020_late_actions(db: sqlite_utils.Database) -> None:
    """A night action the director accepted after its 行动时限 (``bansha night add --late``):
    ``late`` keeps why it was late, as the refusal said it (NULL: given in time, or unchecked)."""
    if "late" not in db["journal_actions"].columns_dict:
        db.execute("ALTER TABLE journal_actions ADD COLUMN late TEXT")


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
    ("018_derive_chunks", _m018_derive_chunks),
    ("019_crawl_log_threads", _m019_crawl_log_threads),
    ("020_late_actions", _m020_late_actions),
]


def pending_migrations(conn: sqlite3.Connection) -> list[str]:
    """The migrations a store has not recorded yet (all of them for a new store), read with the
    standard library."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "_migrations" not in tables:
        return [name for name, _ in MIGRATIONS]
    done = {r[0] for r in conn.execute("SELECT name FROM _migrations")}
    return [name for name, _ in MIGRATIONS if name not in done]


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
        vacuum_if_worth_it(db.conn)
    return applied
