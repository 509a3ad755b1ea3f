"""The game's lock: one sender and one cycle per game at a time (an exclusive lock on
``<db>.lock``, held by the operating system and released when the process dies: ``flock`` on
Linux and macOS, ``LockFileEx`` on Windows, through the ``filelock`` library). ``bansha cycle``,
``bansha publish`` and the demo hold it while they send; the store's own write lock
(``BEGIN IMMEDIATE``) guards each write. A lock file left by a process that died holds nothing.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


class CycleLocked(RuntimeError):
    """Another cycle (or another sender: ``bansha post``, ``bansha demo``) of the same game
    holds the lock."""


#: lock file (real path) -> the thread of this process that holds it
_HELD: dict[str, int] = {}
_HELD_GUARD = threading.Lock()


def _lock_key(db_path: Path | str) -> str:
    return os.path.realpath(f"{db_path}.lock")


@contextmanager
def cycle_lock(
    db_path: Path | str,
    *,
    wait_s: float = 0.0,
    on_wait: Callable[[], None] | None = None,
) -> Iterator[None]:
    """The game's lock: an exclusive lock on ``<db>.lock``, released when the process dies.

    Whoever holds it is the game's only cycle and only sender of posts. ``wait_s = 0`` (the
    cycle): :class:`CycleLocked` at once when another process (or thread) holds it; otherwise
    wait up to ``wait_s`` seconds for it (``on_wait`` is called once, when waiting starts).
    Not re-entrant: a second ``cycle_lock`` raises :class:`CycleLocked` even in the same
    thread; :func:`holds_cycle_lock` says whether the current thread holds it.
    """
    from filelock import FileLock, Timeout  # on first use: the command line starts fast

    lock_path = Path(f"{db_path}.lock")
    lock = FileLock(str(lock_path), mode=0o600)
    deadline = time.monotonic() + max(0.0, wait_s)
    waiting = False
    while True:
        try:
            lock.acquire(timeout=0)
            break
        except Timeout as exc:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CycleLocked(str(lock_path)) from exc
            if not waiting and on_wait is not None:
                on_wait()
            waiting = True
            time.sleep(min(0.1, left))
    key = _lock_key(db_path)
    try:
        with _HELD_GUARD:
            _HELD[key] = threading.get_ident()
        try:
            yield
        finally:
            with _HELD_GUARD:
                _HELD.pop(key, None)
    finally:
        lock.release(force=True)


def holds_cycle_lock(db_path: Path | str) -> bool:
    """Whether the current thread holds the game's lock (:func:`cycle_lock`)."""
    with _HELD_GUARD:
        return _HELD.get(_lock_key(db_path)) == threading.get_ident()
