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
        return [
            chunk
            for _, m in self.materials
            for chunk, latest in chunks.latest_chunks(m, player)
            if after is None or latest > after
        ]


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
    made again from their posts (and kept, when all their posts are before ``as_of``).

    The chunks before the last are also kept merged (``chunks.SETTLED``): while none of them
    is written, a derivation reads that one material and the last chunk's."""
    tid = day.discussion
    assert tid is not None
    if tid in run.chunked:
        return run.chunked[tid]
    window = CountWindow(day.day, day.opens, day.closes)
    versions = chunks.chunk_versions(run.store, tid)  # before the posts: see chunks.py
    stored = chunks.StoredMaterials(run.store, tid)
    ctx = chunks.context_key(roster_key=run.roster_key, base=run.base, role=ROLE, window=window)
    keys = {chunk: f"{versions[chunk]}:{ctx}" for chunk in sorted(versions)}
    settled = list(keys)[:-1]
    settled_key = hashlib.sha256(json.dumps([keys[c] for c in settled]).encode()).hexdigest()
    made: dict[int, tuple[str, bytes]] = {}
    merged = _stored(run, stored, chunks.SETTLED, settled_key) if settled else None
    if merged is not None:
        last = list(keys)[-1]
        materials = [(chunks.SETTLED, merged)]
        materials.append((last, _material(run, tid, last, keys[last], stored, window, made)))
    else:
        materials = [(c, _material(run, tid, c, keys[c], stored, window, made)) for c in keys]
        if settled and all(c in made or stored.key(c) == keys[c] for c in settled):
            merged = chunks.merge_materials([m for _, m in materials[:-1]])
            if merged is not None and _by(merged["max_at"], run.as_of):
                made[chunks.SETTLED] = (settled_key, chunks.dump(merged))
    chunks.store_materials(run.store, tid, made)
    whole = chunks.merge_materials([m for _, m in materials])
    counts = chunks.counts_of(tid, run.base, whole) if whole is not None else None
    found = ThreadChunks(tid, materials, counts)
    run.chunked[tid] = found
    return found


def _by(max_at: str | None, as_of: datetime) -> bool:
    return max_at is None or _dt(max_at) <= as_of


def _stored(
    run: _Run, stored: chunks.StoredMaterials, chunk: int, key: str
) -> dict[str, Any] | None:
    """The stored material of ``chunk`` if its key is ``key`` and it holds nothing after
    ``as_of`` (a look at a moment before its last post reads the posts again)."""
    if stored.key(chunk) != key:
        return None
    blob = stored.material(chunk, key)
    if blob is None:
        return None
    m = chunks.load(blob)
    return m if m is not None and _by(m["max_at"], run.as_of) else None


def _material(
    run: _Run,
    tid: int,
    chunk: int,
    key: str,
    stored: chunks.StoredMaterials,
    window: CountWindow,
    made: dict[int, tuple[str, bytes]],
) -> dict[str, Any]:
    """One chunk's material: stored, or made from its posts (into ``made`` when it holds
    nothing after ``as_of``)."""
    m = _stored(run, stored, chunk, key)
    if m is not None:
        return m
    acts, max_at, whole = _read_chunk(run, tid, chunk)
    m = chunks.make_material(chunk, acts, window, max_at)
    if whole:
        made[chunk] = (key, chunks.dump(m))
    return m


def _read_chunk(run: _Run, tid: int, chunk: int) -> tuple[list[Activity], str | None, bool]:
    """One chunk's posts from the store: its activities up to ``as_of`` (kept in
    ``run.chunk_acts``), the latest time of any of its posts, and whether none is after
    ``as_of``."""
    sketches = chunks.chunk_sketches(run.store, tid, chunk)
    kept = [p for p in sketches if p.posted_at is None or p.posted_at <= run.as_of]
    acts = _activities(kept, tid, ROLE, run.roster, run.base)
    run.chunk_acts[(tid, chunk)] = acts
    times = [p.posted_at for p in sketches if p.posted_at is not None]
    return acts, max(times).isoformat() if times else None, len(kept) == len(sketches)


def _chunk_acts(run: _Run, tid: int, chunk: int) -> list[Activity]:
    """One chunk's posts as activities (read again when a check needs more than its notable
    posts)."""
    if (tid, chunk) not in run.chunk_acts:
        _read_chunk(run, tid, chunk)
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
