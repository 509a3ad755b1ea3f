"""The game's lock (``<db>.lock``): one cycle and one sender per game, held by the operating
system (``filelock``: ``flock`` on Linux and macOS, ``LockFileEx`` on Windows), released when
its process dies, and a lock file left behind by a dead process holds nothing."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pipeline.store.lock import CycleLocked, cycle_lock, holds_cycle_lock

ROOT = Path(__file__).resolve().parents[3]

HOLDER = """
import sys, time
from pipeline.store.lock import cycle_lock
with cycle_lock(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


@contextmanager
def hold_in_another_process(db: Path, seconds: float) -> Iterator[subprocess.Popen[str]]:
    """Another bansha process holding the game's lock for ``seconds`` (it says when it holds);
    killed at the end if it still runs."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(db), str(seconds)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "held"
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=30)


def test_another_process_holds_it_then_dies_and_it_is_free(tmp_path):
    db = tmp_path / "g.db"
    with hold_in_another_process(db, 60) as holder:
        with pytest.raises(CycleLocked), cycle_lock(db):
            pass
        holder.send_signal(signal.SIGKILL)  # dies holding it: no release, no clean-up
        holder.wait(timeout=30)
    assert Path(f"{db}.lock").exists() or os.name == "nt"
    with cycle_lock(db):
        assert holds_cycle_lock(db)
    assert not holds_cycle_lock(db)


def test_a_stale_lock_file_holds_nothing(tmp_path):
    db = tmp_path / "g.db"
    Path(f"{db}.lock").write_text("4194303\n")  # a crashed process's file, its pid long gone
    with cycle_lock(db):
        assert holds_cycle_lock(db)


def test_waiting_for_it_says_so_once_and_gets_it(tmp_path):
    db = tmp_path / "g.db"
    waits: list[str] = []
    with (
        hold_in_another_process(db, 1.0),
        cycle_lock(db, wait_s=60, on_wait=lambda: waits.append("等待")),
    ):
        assert holds_cycle_lock(db)
    assert waits == ["等待"]


def test_waiting_too_long_is_refused(tmp_path):
    db = tmp_path / "g.db"
    with (
        hold_in_another_process(db, 30),
        pytest.raises(CycleLocked),
        cycle_lock(db, wait_s=0.3),
    ):
        pass


def test_not_reentrant_and_another_thread_is_refused(tmp_path):
    db = tmp_path / "g.db"
    refused: list[bool] = []

    def other() -> None:
        try:
            with cycle_lock(db):
                refused.append(False)
        except CycleLocked:
            refused.append(True)

    with cycle_lock(db):
        with pytest.raises(CycleLocked), cycle_lock(db):
            pass
        thread = threading.Thread(target=other)
        thread.start()
        thread.join(timeout=30)
        assert refused == [True]
        assert holds_cycle_lock(db)
    with cycle_lock(db):  # released: free again in this process
        pass


@pytest.mark.skipif(os.name != "posix", reason="file modes exist on POSIX only")
def test_the_lock_file_is_private(tmp_path):
    db = tmp_path / "g.db"
    with cycle_lock(db):
        assert stat.S_IMODE(Path(f"{db}.lock").stat().st_mode) & 0o077 == 0
