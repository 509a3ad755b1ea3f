"""Opening a store's SQLite file: its errors, the busy wait, WAL, and a VACUUM when worth it.

The store is opened with the standard library's ``sqlite3``; sqlite-utils is put over the same
connection only where its table helpers are used (:attr:`pipeline.store.Store.db`), so reading the
store and a crawl that finds nothing new never import it."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


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


def open_db(path: Path) -> sqlite3.Connection:
    """Open (creating with mode 0600) the store and switch it to WAL."""
    path = Path(path)
    if not path.parent.exists():
        raise StoreError(f"数据库所在目录不存在：{path.parent}")
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
    conn = None
    try:
        conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S)
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        for pragma in CONNECTION_PRAGMAS:
            conn.execute(pragma)
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise StoreError(f"无法打开数据库 {path}：{exc}（不是 bansha 的数据库文件？）") from exc
    return conn


#: what every connection to a store runs first
CONNECTION_PRAGMAS = (
    # a trigger's writes fire the triggers they touch (as sqlite-utils sets it: the store's
    # change counters were written under it)
    "PRAGMA recursive_triggers = ON",
    "PRAGMA foreign_keys = ON",
    # deleted content (a body re-keyed after scrubbing) is overwritten, not left in free pages
    "PRAGMA secure_delete = ON",
    "PRAGMA synchronous = NORMAL",
)


def utils_database(conn: sqlite3.Connection) -> Any:
    """sqlite-utils' ``Database`` over the store's open connection, for its table helpers: no
    plugins (the store is bansha's schema alone, and finding plugins means reading every
    installed package's entry points) and nothing run on the connection (it is set up already,
    :data:`CONNECTION_PRAGMAS`)."""
    import sqlite_utils

    return sqlite_utils.Database(conn, execute_plugins=False, recursive_triggers=False)


#: the share of the file's pages that must be free for a VACUUM to be worth its time
VACUUM_MIN_FREE_SHARE = 0.10


def vacuum_if_worth_it(
    conn: sqlite3.Connection, *, min_share: float = VACUUM_MIN_FREE_SHARE
) -> bool:
    """Give the space compaction freed back to the file system: ``VACUUM`` (outside any
    transaction) when at least ``min_share`` of the file's pages are free. Cheap right after
    migration 010: VACUUM copies only the live data, which the compaction just made small; a
    fresh store has nothing free and is left alone. A store another process is using is left
    as it is (its free pages are reused by later writes). Returns whether it ran."""
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    total = int(conn.execute("PRAGMA page_count").fetchone()[0])
    if free == 0 or free < min_share * total or conn.in_transaction:
        return False
    try:
        conn.execute("VACUUM")
    except sqlite3.OperationalError as exc:  # busy: another reader or writer
        log.info("VACUUM 未执行（%s），空闲空间留给以后的写入", exc)
        return False
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return True
