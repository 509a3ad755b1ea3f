"""One cycle of a game — what cron runs: lock, crawl, derive, draft, post what was approved.

A cycle with nothing new changes no verdict and drafts nothing. A killed cycle leaves the store
consistent (every page and every derivation is one transaction) and the next one completes the
work. Only one cycle per game runs at a time: a second one exits at once.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pipeline.crawl import CrawlReport, CrawlTarget
from pipeline.derive import Derivation, derive, write_derivation
from pipeline.gamefile import Game
from pipeline.store import Store

log = logging.getLogger(__name__)

#: a day's threads are read from this long before it opens (the director may open early)
EARLY = timedelta(minutes=30)


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
    """The game's lock: an exclusive flock on ``<db>.lock``, released when the process dies.

    Whoever holds it is the game's only cycle and only sender of posts. ``wait_s = 0`` (the
    cycle): :class:`CycleLocked` at once when another process (or thread) holds it; otherwise
    wait up to ``wait_s`` seconds for it (``on_wait`` is called once, when waiting starts).
    Not re-entrant: a second ``cycle_lock`` raises :class:`CycleLocked` even in the same
    thread; :func:`holds_cycle_lock` says whether the current thread holds it.
    """
    lock_path = Path(f"{db_path}.lock")
    fd = os.open(lock_path, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        deadline = time.monotonic() + max(0.0, wait_s)
        waiting = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError as exc:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CycleLocked(str(lock_path)) from exc
                if not waiting and on_wait is not None:
                    on_wait()
                waiting = True
                time.sleep(min(0.1, left))
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        key = _lock_key(db_path)
        with _HELD_GUARD:
            _HELD[key] = threading.get_ident()
        try:
            yield
        finally:
            with _HELD_GUARD:
                _HELD.pop(key, None)
    finally:
        os.close(fd)


def holds_cycle_lock(db_path: Path | str) -> bool:
    """Whether the current thread holds the game's lock (:func:`cycle_lock`)."""
    with _HELD_GUARD:
        return _HELD.get(_lock_key(db_path)) == threading.get_ident()


@dataclass
class CycleReport:
    crawl: CrawlReport | None = None
    full_reads: list[int] = field(default_factory=list)  # days whose threads were re-read whole
    derived: bool = False
    verdicts_changed: bool = False
    drafted: list[int] = field(default_factory=list)
    posted: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the director must act (not a failure)
    #: why the forum was not usable this cycle (then nothing more was asked of it), or None
    down: str | None = None

    def lines(self) -> list[str]:
        out = []
        if self.crawl is not None:
            for t in self.crawl.threads:
                if t.error is None:
                    out.append(
                        f"帖子 {t.tid}：读取 {t.pages_fetched} 页，新帖 {t.new_posts}，"
                        f"变化 {t.changed_posts}，消失 {t.vanished_posts}"
                    )
        if self.full_reads:
            days = "、".join(map(str, self.full_reads))
            out.append(f"已关门、重读全帖以核对编辑和删除：第 {days} 天")
        out.append("结论有变化，已更新" if self.verdicts_changed else "结论没有变化")
        out.append(f"新草稿：{len(self.drafted)} 份" if self.drafted else "没有新草稿")
        for p in self.posted:
            out.append(p.line() if hasattr(p, "line") else str(p))
        return out


def targets_due(game: Game, now: datetime) -> list[CrawlTarget]:
    """The threads of every day that has opened (an old day's threads still catch 诈尸)."""
    seen: set[int] = set()
    targets = []
    for day in sorted(game.days, key=lambda d: d.day):
        if day.opens - EARLY > now:
            continue
        for role, tid in day.threads.items():
            if tid in seen:
                continue
            seen.add(tid)
            targets.append(CrawlTarget(tid=tid, day=day.day, role=str(role.value)))
    return targets


def closed_days_to_reread(game: Game, store: Store, now: datetime) -> list[int]:
    """Days closed since the last cycle whose threads have not been re-read whole yet."""
    return [
        d.day
        for d in sorted(game.days, key=lambda d: d.day)
        if now >= d.closes and store.get_meta(f"full_read:{d.day}") is None
    ]


def first_rounds_to_reread(game: Game, store: Store, now: datetime) -> list[int]:
    """太阳[日不落] days whose first 正午 round has ended (m209.txt:377-378) and whose
    first-round vote thread has not been re-read whole since."""
    return [
        d.day
        for d in sorted(game.days, key=lambda d: d.day)
        if d.first_vote is not None
        and d.first_closes is not None
        and now >= d.first_closes
        and store.get_meta(f"full_read:{d.day}:first") is None
    ]


def run_cycle(
    game: Game,
    store: Store,
    *,
    now: datetime,
    crawl: Callable[[list[CrawlTarget], bool], CrawlReport],
    draft: Callable[[Derivation], list[int]] | None = None,
    publish: Callable[[], list[Any]] | None = None,
) -> CycleReport:
    """Crawl → derive → draft → post. ``crawl(targets, full)`` does the network part.

    The first crawl that finds the forum not usable (``CrawlReport.down``) ends the network
    part: no closed day and no first round is re-read this cycle (each would only wait out the
    same retries again), and the cause is said once in ``errors``.
    """
    report = CycleReport()

    def say(lines: list[str]) -> None:
        report.errors.extend(line for line in lines if line not in report.errors)

    def crawl_once(batch: list[CrawlTarget], full: bool) -> CrawlReport:
        result = crawl(batch, full)
        say(result.errors)
        if result.down is not None:
            report.down = result.down
        return result

    targets = targets_due(game, now)
    if targets:
        report.crawl = crawl_once(targets, False)
        for n in closed_days_to_reread(game, store, now):
            if report.down is not None:
                break
            day = game.day(n)
            again = [t for t in targets if t.tid in day.threads.values()]
            full = crawl_once(again, True)
            if full.ok:
                store.set_meta(f"full_read:{n}", now.isoformat())
                report.full_reads.append(n)
        for n in first_rounds_to_reread(game, store, now):
            if report.down is not None:
                break
            # the first round's result is drafted only from a whole re-read of its thread
            tid = game.day(n).first_vote
            again = [t for t in targets if t.tid == tid]
            full = crawl_once(again, True)
            if full.ok:
                store.set_meta(f"full_read:{n}:first", now.isoformat())
        if report.down is not None:
            waiting = closed_days_to_reread(game, store, now)
            if waiting:
                days = "、".join(map(str, waiting))
                say([f"论坛恢复前不重读已关门的第 {days} 天，其结果暂不起草"])
    d = derive(game, store, as_of=now)
    report.derived = True
    report.verdicts_changed = write_derivation(store, d, now=now)
    report.warnings = d.warnings()
    if draft is not None:
        report.drafted = draft(d)
    if publish is not None:
        report.posted = publish()
        report.errors += [r.line() for r in report.posted if not getattr(r, "ok", True)]
    return report
