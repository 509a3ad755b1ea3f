"""The stored tally view: ``bansha tally`` without re-deriving, when the last cycle's is still true.

When a cycle derives, it also stores what ``bansha tally GAME --day N`` and ``--json`` print for
every day (and which day a bare ``bansha tally`` shows), under a key saying when that is still
true (:func:`view_key`, written by :func:`pipeline.cli.votes.store_tally_views`). A read-only
``bansha tally`` without ``--as-of`` checks the key here with the standard library only —
SQLite read-only, SHA-256 of the game file, the code's file sizes and times — and prints the view
when it holds (:func:`stored_tally`); otherwise it derives as before. The view holds when:

- the derivation it was made from is still the store's last one (``meta`` ``derive:last``, the
  same text), and the store's input counter (``derive:inputs``) is still the one that
  derivation recorded (a new post or edit, a journal entry, a flag decision, a thread bansha
  opened … each bumps it), kept by the same triggers (none dropped since). The output counter
  is not looked at: it counts the derived tables and the drafts, which neither derive nor tally
  reads (tally prints the derivation and ``flag_decisions``, an input), so a draft approved or
  posted leaves the view true;
- no thread of the game was read for the first time since (``crawl_log``);
- the game file has the same bytes at the same place (and ``[drafts] templates`` still resolves
  to the same folder), and bansha's code is the same (:func:`pipeline.code_identity`);
- ``now`` lies in the derivation's window ``[lo, hi)``: no opening, close, last hour, reminder,
  speed deadline, post or journal time falls between the cycle's ``now`` and this one.

and the cycle wrote it only when it held then: the game it derived was built under the game's
lock from the store's opened threads (and still is when the view is written), from the very
bytes of the game file that were hashed, by code whose files did not change while the cycle ran
(:func:`pipeline.code_identity_now` still gives the identity taken at import; otherwise neither
the record nor the view is written, and the next cycle derives).

Then deriving now would give what the cycle derived (the contract of derive-on-change,
pipeline/cycle.py), and the view is what the full path prints; only ``--json``'s ``as_of`` is
this moment's, put in where the view holds :data:`AS_OF`.

The JSON is kept compact (:func:`json_stored`: a third smaller than what is printed, and a
quarter of the time to make) and printed as the full path prints it (:func:`json_printed`) when
read back; read back only when the compact form of what it reads is the very text stored (what
``json.loads`` could not give back the same — two keys alike but for their type — derives).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import click

import pipeline.cli
from pipeline import PathError, code_identity, expand_home, no_thread_newly_read, read_readonly

#: ``meta`` key of the view's key (JSON); the views themselves are the ``tally_views`` rows
VIEW_META = "tally:view"
#: the version of the key's shape: another one is never read
VIEW_VERSION = 2
#: what stands in the stored JSON for ``as_of`` (the moment ``bansha tally`` runs)
AS_OF = "\x00as_of\x00"
#: the cycle's record of its last derivation, its change counters and triggers (pipeline/cycle.py)
RECORD_KEY = "derive:last"
#: its input counter (derive:outputs counts the derived tables and the drafts: nothing tally
#: prints comes from them, so an approved or posted draft leaves the view true)
INPUTS = "derive:inputs"
TRIGGER_PREFIX = "bansha_changes_"


def json_printed(data: Any) -> str:
    """What ``bansha tally --json`` prints of ``data`` (the full path and the view alike)."""
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def json_stored(data: Any) -> str:
    """How the view keeps the JSON of a day (:func:`json_printed` when read back)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def templates_resolved(value: str | None, game_path: Path) -> str | None:
    """Where ``[drafts] templates`` points, from the game file's folder (the game file check
    refuses a folder outside it: the same place means the same verdict)."""
    if value is None:
        return None
    base = Path(game_path).resolve().parent
    try:
        raw = expand_home(value)
    except PathError:
        return "!"  # no home folder to find here: never the place the view was kept for
    return str((base / raw).resolve())


def view_key(
    *,
    game_path: Path,
    game_digest: str,
    templates: str | None,
    timezone: str,
    record: str,
    triggers: Iterable[str],
    tids: Iterable[int],
    default_day: int | None,
    default_notice: str | None,
) -> str:
    """The key a view is stored under (JSON): everything :func:`stored_tally` checks."""
    return json.dumps(
        {
            "v": VIEW_VERSION,
            "game_path": str(Path(game_path).resolve()),
            "game_sha256": game_digest,
            "templates": templates_resolved(templates, game_path),
            "templates_value": templates,
            "timezone": timezone,
            "record": record,
            "triggers": sorted(triggers),
            "tids": sorted(tids),
            "default_day": default_day,
            "default_notice": default_notice,
        },
        ensure_ascii=False,
    )


def trigger_names(execute: Any) -> list[str]:
    """The change-counting triggers the store holds now."""
    rows = execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ?",
        [len(TRIGGER_PREFIX), TRIGGER_PREFIX],
    )
    return sorted(r[0] for r in rows)


def stored_tally(
    game_file: Path | None, db: str | None, day: int | None, as_json: bool
) -> tuple[str, str] | None:
    """``(stdout, stderr)`` of ``bansha tally`` from the stored view, or None when the view
    does not hold (or anything is unusual, a key or record not as the cycle writes it
    included: the full path then runs and says what is wrong)."""
    try:
        game_path = pipeline.cli.game_file_or_default(game_file)
        raw = game_path.read_bytes()
    except (click.ClickException, OSError):
        return None
    db_path = pipeline.resolve_db_path(game_path, db)
    read = read_readonly(db_path, lambda conn: _read_view_or_none(conn, day))
    if read is None:
        return None
    try:
        return _shown(read, game_path, raw, day, as_json)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # a key or record not as written (ZoneInfoNotFoundError is a KeyError)


def _shown(
    read: tuple[dict[str, Any], dict[str, Any], str, str | None],
    game_path: Path,
    raw: bytes,
    day: int | None,
    as_json: bool,
) -> tuple[str, str] | None:
    """The view's ``(stdout, stderr)`` when the rest of its key holds now (the game file, the
    code, the time); raises for a key that is not what the cycle writes."""
    key, record, text, js = read
    if key["game_sha256"] != hashlib.sha256(raw).hexdigest():
        return None
    if key["game_path"] != str(game_path.resolve()):
        return None
    if key["templates"] != templates_resolved(key["templates_value"], game_path):
        return None
    if record.get("code") != code_identity():
        return None
    now = pipeline.cli.clock(ZoneInfo(key["timezone"]))
    lo, hi = record.get("lo"), record.get("hi")
    if lo is not None and now < datetime.fromisoformat(lo):
        return None
    if hi is not None and now >= datetime.fromisoformat(hi):
        return None
    err = ""
    if day is None and key["default_notice"]:
        err = key["default_notice"] + "\n"
    if not isinstance(text, str):
        return None
    if not as_json:
        return text, err
    if not isinstance(js, str):
        return None
    data = json.loads(js)
    if json_stored(data) != js:
        return None  # what was stored does not read back the same: derive
    return json_printed(data).replace(json.dumps(AS_OF), json.dumps(now.isoformat()), 1), err


def _read_view_or_none(
    conn: sqlite3.Connection, day: int | None
) -> tuple[dict[str, Any], dict[str, Any], str, str | None] | None:
    """:func:`_read_view`, None for a key, record or view not as the cycle writes them."""
    try:
        return _read_view(conn, day)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None


def _read_view(
    conn: sqlite3.Connection, day: int | None
) -> tuple[dict[str, Any], dict[str, Any], str, str | None] | None:
    """The key, the record and the view of the day shown, read in one snapshot; None when the
    store's own state says the view no longer holds."""
    conn.execute("BEGIN")
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if not {"meta", "tally_views", "crawl_log", "threads"} <= tables:
            return None  # a store from before the views
        meta = dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?, ?)",
                [VIEW_META, RECORD_KEY, INPUTS],
            ).fetchall()
        )
        if VIEW_META not in meta or RECORD_KEY not in meta:
            return None
        key = json.loads(meta[VIEW_META])
        if not isinstance(key, Mapping) or key.get("v") != VIEW_VERSION:
            return None
        if key["record"] != meta[RECORD_KEY]:
            return None  # another derivation since, or its record dropped
        record = json.loads(meta[RECORD_KEY])
        if not isinstance(record, Mapping):
            return None
        if meta.get(INPUTS) is None or int(meta[INPUTS]) != record["inputs"]:
            return None  # a write to an input since (derive:outputs is not: see above)
        if trigger_names(conn.execute) != key["triggers"]:
            return None
        if not no_thread_newly_read(conn.execute, set(key["tids"]), record.get("crawl") or {}):
            return None
        shown = key["default_day"] if day is None else day
        if shown is None:
            return None
        row = conn.execute(
            "SELECT text, json FROM tally_views WHERE day = ?", [int(shown)]
        ).fetchone()
        if row is None:
            return None
        return dict(key), dict(record), row[0], row[1]
    finally:
        conn.rollback()
