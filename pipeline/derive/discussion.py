"""A day's discussion thread as the counts and the flags read it, chunk by chunk
(pipeline/derive/chunks.py), or whole when the chunks cannot say."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.conduct import Activity, PostCount
from pipeline.derive import chunks
from pipeline.derive.activities import _activities
from pipeline.derive.chunks import CountWindow
from pipeline.derive.run import _Outs, _Run
from pipeline.game.gamefile import Day

ROLE = "discussion"


def _dt(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


@dataclass
class ThreadChunks:
    """One discussion thread's chunks, in floor order, as this derivation read them."""

    tid: int
    materials: list[tuple[int, dict[str, Any]]]
    counts: dict[str, PostCount] | None  # None: the chunks are not in time order

    def chunks_of(self, player: str, after: datetime | None) -> list[int]:
        """The chunks holding a post by ``player`` later than ``after`` (None: any)."""
        found = []
        for chunk, m in self.materials:
            latest = m["latest"].get(player)
            if latest is not None and (after is None or _dt(latest) > after):
                found.append(chunk)
        return found


def roster_key(run: _Run) -> str:
    """Who posts as whom: the roster's accounts and names, and the 替补 (``Roster.player_of``)."""
    roster = run.roster
    parts = [
        sorted((uid, name) for uid, name in roster.by_uid.items()),
        sorted(roster.by_name),
        [(s.player, s.uid, s.name, s.since.isoformat()) for s in roster.subs],
    ]
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:24]


def chunked_day(run: _Run, day: Day) -> bool:
    """Whether ``day``'s discussion thread is read by chunks: it is the discussion thread of
    this day only and no other thread of any day, nobody read it whole, and the chunk
    counters hold."""
    tid = day.discussion
    if tid is None or not run.chunk_counters or tid in run.posts_by_tid:
        return False
    uses = [(d.day, role) for d in run.game.days for role, t in d.threads.items() if t == tid]
    return len(uses) == 1


def thread_chunks(run: _Run, day: Day) -> ThreadChunks:
    """``day``'s discussion thread by chunks: the stored materials still true, the others
    made again from their posts (and kept, when all their posts are before ``as_of``)."""
    tid = day.discussion
    assert tid is not None
    if tid in run.chunked:
        return run.chunked[tid]
    window = CountWindow(day.day, day.opens, day.closes)
    versions = chunks.chunk_versions(run.store, tid)  # before the posts: see chunks.py
    stored = chunks.stored_materials(run.store, tid)
    ctx = chunks.context_key(roster_key=run.roster_key, base=run.base, role=ROLE, window=window)
    materials: list[tuple[int, dict[str, Any]]] = []
    made: dict[int, tuple[str, bytes]] = {}
    for chunk in sorted(versions):
        key = f"{versions[chunk]}:{ctx}"
        m = chunks.load(stored[chunk][1]) if stored.get(chunk, ("",))[0] == key else None
        if m is not None and m["max_at"] is not None and _dt(m["max_at"]) > run.as_of:
            m = None  # a look at a moment before its last post
        if m is None:
            sketches = chunks.chunk_sketches(run.store, tid, chunk)
            kept = [p for p in sketches if p.posted_at is None or p.posted_at <= run.as_of]
            acts = _activities(kept, tid, ROLE, run.roster, run.base)
            run.chunk_acts[(tid, chunk)] = acts
            times = [p.posted_at for p in sketches if p.posted_at is not None]
            max_at = max(times).isoformat() if times else None
            blob = chunks.make_material(acts, window, max_at)
            m = chunks.load(blob)
            assert m is not None
            if len(kept) == len(sketches):
                made[chunk] = (key, blob)
        materials.append((chunk, m))
    chunks.store_materials(run.store, tid, made)
    found = ThreadChunks(
        tid, materials, chunks.merged_counts(tid, run.base, [m for _, m in materials])
    )
    run.chunked[tid] = found
    return found


def _chunk_acts(run: _Run, tid: int, chunk: int) -> list[Activity]:
    """One chunk's posts as activities (read again when a check needs more than its notable
    posts)."""
    if (tid, chunk) not in run.chunk_acts:
        sketches = chunks.chunk_sketches(run.store, tid, chunk)
        kept = [p for p in sketches if p.posted_at is None or p.posted_at <= run.as_of]
        run.chunk_acts[(tid, chunk)] = _activities(kept, tid, ROLE, run.roster, run.base)
    return run.chunk_acts[(tid, chunk)]


def conduct_acts(run: _Run, day: Day, found: ThreadChunks, outs_final: _Outs) -> list[Activity]:
    """The posts of a chunked discussion thread any conduct check can flag (chunks.py): the
    notable ones, every post of a player after his out time, and — where the sheriff may only
    answer — every post of the day's sheriff."""
    acts = [
        a for _, m in found.materials for a in chunks.notable_acts(m, found.tid, ROLE, run.base)
    ]
    wanted: dict[int, set[str]] = {}
    for player, (out_at, _) in outs_final.items():
        for chunk in found.chunks_of(player, out_at):
            wanted.setdefault(chunk, set()).add(player)
    sheriff = run.sheriff_by_day.get(day.day)
    if run.ruleset.conduct.sheriff_answers_only and sheriff:
        for chunk in found.chunks_of(sheriff, None):
            wanted.setdefault(chunk, set()).add(sheriff)
    for chunk, players in sorted(wanted.items()):
        acts += [a for a in _chunk_acts(run, found.tid, chunk) if a.player in players]
    return acts


def discussion_tids(run: _Run) -> dict[int, Day]:
    """The game's discussion threads read by chunks, with their day."""
    return {
        d.discussion: d
        for d in run.game.days
        if d.discussion is not None and d.discussion in run.chunked
    }
