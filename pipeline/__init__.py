"""The edges, in layers (imports point down only; ``tests/test_layers.py`` checks it):

- ``store/``: the SQLite store, the game's lock, the secrets scrubber;  ``sim/``: the local
  Discuz simulator (the demo's forum and the tests');
- ``game/``: the game file, the director's journal, last words, the secret words;
- ``discuz/``: the Discuz client, the crawl, the forum session that posts;  ``derive/``: the
  verdicts of each day, read from the store, the game file and the journal;
- ``drafts/``: the drafts, their templates, publishing them exactly once, the day report;
- ``cycle.py`` and ``notify.py``: one cron cycle, and telling the director;
- ``cli/``: the ``bansha`` command (each command group loaded when used);  ``console/``: the
  director's web console.

The root's own names sit below every layer and use the standard library only (the fast path of
``bansha tally`` checks the cycle's stored view with them, without loading pydantic, sqlite-utils
or a rule set): where the store is, which bansha is running, reading a store read-only, and
whether the threads a derivation counted as read are still all that was read.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

if TYPE_CHECKING:
    import sqlite3

_T = TypeVar("_T")

#: the packages whose code computes the verdicts (:func:`code_identity_now`)
CODE_PACKAGES: Final = ("engine", "parsers", "pipeline")

#: the environment variable naming the store (instead of ``<game file>.db``)
DB_ENV: Final = "BANSHA_DB"


class PathError(ValueError):
    """A path a director gave that names a home folder this machine cannot find (Chinese)."""


def expand_home(value: str) -> Path:
    """``value`` as a path, a leading ``~`` or ``~user`` made that home folder. Raises
    :class:`PathError` when there is no such folder to make it (``~nosuchuser``, or no home
    folder set for this account) instead of the standard library's bare ``RuntimeError``."""
    path = Path(value)
    try:
        return path.expanduser()
    except RuntimeError:
        head = path.parts[0] if path.parts else value
        raise PathError(
            f"找不到 {head} 的主目录（没有这个用户，或这个账户没有设置主目录）：{value}"
        ) from None


def default_db_path(game_path: Path) -> Path:
    """The store beside the game file: ``games/demo.toml`` -> ``games/demo.db``."""
    return Path(game_path).with_suffix(".db")


def resolve_db_path(game_path: Path, db: str | None, env: Mapping[str, str] | None = None) -> Path:
    """``--db`` first, then the environment variable ``BANSHA_DB``, then the default
    (:class:`PathError` for a ``~user`` that is no one here)."""
    if db:
        return expand_home(db)
    env = os.environ if env is None else env
    if from_env := env.get(DB_ENV, "").strip():
        return expand_home(from_env)
    return default_db_path(game_path)


#: whether the OS keeps POSIX file modes (Linux, macOS; not Windows)
POSIX_MODES = os.name == "posix"


def set_mode(path: Path | str, mode: int) -> bool:
    """``chmod`` where the OS keeps POSIX file modes (:data:`POSIX_MODES`); elsewhere
    (Windows: who may read a file is its folder's ACL) nothing, and no error. Every mode bansha
    sets goes through here. Whether the mode was set."""
    if not POSIX_MODES:
        return False
    os.chmod(path, mode)
    return True


def _package_folders(package: str) -> list[str]:
    """Where ``package`` is imported from, without importing it (its spec's search path)."""
    from importlib.util import find_spec

    spec = find_spec(package)
    return list(spec.submodule_search_locations or []) if spec is not None else []


def code_identity_now() -> str:
    """Which bansha is on disk now: the size and time of every module of the three packages
    (read each time it is called; a package imported from a zip archive: each module's bytes).
    Found through the import system, so an installed wheel is seen as a checkout is."""
    import hashlib

    digest = hashlib.sha256()
    for package in CODE_PACKAGES:
        for folder in _package_folders(package):
            if os.path.isdir(folder):
                for parts, path in sorted(_modules_under(folder)):
                    st = os.stat(path)
                    name = f"{package}/{'/'.join(parts)}"
                    digest.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            else:
                _zip_identity(package, digest)
    return digest.hexdigest()[:32]


def _modules_under(folder: str) -> list[tuple[tuple[str, ...], str]]:
    """Every ``*.py`` file under ``folder`` (its subfolders too, not through a symbolic link to
    a folder): its path's parts from ``folder`` (what ``sorted`` orders paths by, as
    :class:`~pathlib.Path` does) and its path, read with :func:`os.scandir` (every bansha process
    takes this identity when it starts: a few stat calls, no glob)."""
    found: list[tuple[tuple[str, ...], str]] = []
    pending: list[tuple[tuple[str, ...], str]] = [((), folder)]
    while pending:
        parts, where = pending.pop()
        with os.scandir(where) as entries:
            for entry in entries:
                if entry.is_dir() and not entry.is_symlink():
                    pending.append(((*parts, entry.name), entry.path))
                elif entry.name.endswith(".py"):
                    found.append(((*parts, entry.name), entry.path))
    return found


def _zip_identity(package: str, digest: Any) -> None:
    """The bytes of every module of ``package`` imported from a zip archive (no file times)."""
    from importlib.resources import files

    pending = [(package, files(package))]
    while pending:
        name, item = pending.pop()
        for child in sorted(item.iterdir(), key=lambda c: c.name):
            if child.is_dir():
                pending.append((f"{name}/{child.name}", child))
            elif child.name.endswith(".py"):
                digest.update(f"{name}/{child.name}\0".encode() + child.read_bytes() + b"\n")


#: :func:`code_identity_now` when this package was first imported: the code this process runs
_IMPORTED_IDENTITY: Final = code_identity_now()


def code_identity() -> str:
    """Which bansha computes the verdicts: :func:`code_identity_now` taken when the process
    first imported ``pipeline`` (cron starts one per cycle). A new version derives again.

    A derivation and its tally views are recorded under it only when :func:`code_identity_now`
    still gives it once they are made: files changed meanwhile (an upgrade during a cycle's
    crawl) may have been imported half old, half new, and the next cycle derives again."""
    return _IMPORTED_IDENTITY


# --------------------------------------------------------------------------- a read-only store


def _uri(path: Path, mode: str) -> str:
    """An SQLite URI of an existing file (``mode`` ``ro`` or ``rw``: never created)."""
    from urllib.parse import quote

    return "file:" + quote(str(Path(path).resolve())) + "?mode=" + mode


def connect_readonly(path: Path) -> tuple[sqlite3.Connection, bool]:
    """An existing SQLite file opened read-only (``mode=ro``: never created, never written),
    and whether its ``-wal``/``-shm`` files were there before (see :func:`close_readonly`).
    Raises :class:`sqlite3.DatabaseError` for a file that is not a database."""
    import sqlite3

    had_sidecars = any(Path(f"{path}-{s}").exists() for s in ("wal", "shm"))
    conn = sqlite3.connect(_uri(path, "ro"), uri=True, timeout=30.0)
    try:
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn, had_sidecars


def close_readonly(conn: Any, path: Path, had_sidecars: bool) -> None:
    """Close a :func:`connect_readonly` connection and leave the store's folder as it was found.

    SQLite creates the ``-wal``/``-shm`` files a reader of a WAL database needs; when this
    reader was the one that created them, the last connection to close removes them (nothing is
    written: the write-ahead log is empty)."""
    import sqlite3

    conn.close()
    wal = Path(f"{path}-wal")
    if had_sidecars or not wal.exists():
        return
    try:
        if wal.stat().st_size:
            return  # a writer's frames: its own connection folds them back
        # mode=rw: a store removed meanwhile is never created again by a read-only command
        other = sqlite3.connect(_uri(path, "rw"), uri=True, timeout=1.0)
        try:
            other.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            other.close()
    except (OSError, sqlite3.Error):
        pass  # a folder bansha may not write to keeps them; they are harmless


def read_readonly(path: Path, read: Callable[[sqlite3.Connection], _T]) -> _T | None:
    """``read(conn)`` on the store at ``path`` opened read-only (:func:`connect_readonly`,
    closed with :func:`close_readonly`); None when there is no store there or SQLite fails.
    What ``read`` raises besides :class:`sqlite3.Error` is raised."""
    import sqlite3

    if not path.is_file():
        return None
    try:
        conn, had_sidecars = connect_readonly(path)
    except sqlite3.Error:
        return None
    try:
        return read(conn)
    except sqlite3.Error:
        return None
    finally:
        close_readonly(conn, path, had_sidecars)


# --------------------------------------------------------------------------- threads read


def distinct_tids(
    execute: Callable[..., Iterable[Any]], table: str, where: str = "", args: Sequence[Any] = ()
) -> set[int]:
    """``SELECT DISTINCT tid FROM table [WHERE where]`` (NULL left out), read by seeking from
    one thread's first row to the next thread's: as many index lookups as there are threads,
    where ``DISTINCT`` reads every row of the table (30,000 posts: 0.03 ms instead of 2 ms).
    The index it seeks in leads with ``where``'s equality columns, then ``tid``
    (``posts_tid_floor``, ``crawl_log_ok_tid``); without one the answer is the same, only
    slower. ``where`` is bansha's own SQL; ``args`` its parameters."""
    cond = f"{where} AND " if where else ""
    sql = (
        "WITH RECURSIVE seen(tid) AS ("
        f"SELECT MIN(tid) FROM {table} WHERE {cond}tid IS NOT NULL "
        f"UNION ALL SELECT (SELECT MIN(tid) FROM {table} WHERE {cond}tid > seen.tid) "
        "FROM seen WHERE seen.tid IS NOT NULL"
        ") SELECT tid FROM seen WHERE tid IS NOT NULL"
    )
    return {int(r[0]) for r in execute(sql, [*args, *args])}


def threads_read(execute: Callable[..., Iterable[Any]], tids: set[int]) -> set[int]:
    """The game's threads whose ``threads`` row says they were read (as derive's
    ``crawled_tids``). ``execute``: a connection's (sqlite3 or sqlite-utils)."""
    rows = execute(
        "SELECT tid FROM threads WHERE last_outcome = 'ok' OR last_crawled_at IS NOT NULL"
    )
    return {int(r[0]) for r in rows} & tids


def no_thread_newly_read(
    execute: Callable[..., Iterable[Any]], tids: set[int], state: Mapping[str, Any]
) -> bool:
    """Whether the game's threads (``tids``) read now are those ``state`` (the cycle's
    ``crawl_state``) counted as read: only the ``crawl_log`` rows after its last one are looked
    at (a thread once read stays read; one read through its posts is counted by the triggers)."""
    read = set(state.get("read", ()))
    if tids <= read:
        return True  # every thread of the game was read: nothing more to learn
    fresh = {
        int(r[0])
        for r in execute(
            "SELECT DISTINCT tid FROM crawl_log WHERE id > ? AND outcome = 'ok' "
            "AND tid IS NOT NULL",
            [int(state.get("log", 0))],
        )
    }
    return ((fresh | threads_read(execute, tids)) & tids) <= read
