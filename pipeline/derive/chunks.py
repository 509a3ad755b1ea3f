"""A discussion thread of thousands, derived per chunk: what a new page costs is that page.

A day's discussion thread is read for two things only: the day's post counts (潜水) and the few
posts a conduct check can flag (a director's font, hidden text, a post after going out, a
sheriff who may only answer). Its posts are taken in chunks of ``2**CHUNK_BITS`` floors, and for
each chunk bansha keeps, in ``derive_chunk_cache``, what those two need of it (its *material*):
each player's counted posts (pid, floor, time), the ones not counted and why, the notable posts
whole, and each player's latest post. SQLite triggers count every write to a chunk's posts in
``derive_chunk_versions`` (of ``posts`` only the columns derive reads), so a derivation re-reads
only the chunks written since, and takes the others as stored. The chunks before the last are
also kept merged into one material (:data:`SETTLED`): while none of them is written, a
derivation loads that one and the last chunk's.

The answers are the whole thread's, exactly:

- the counts: each chunk's are :func:`engine.conduct.count_posts` of its posts; a thread's are
  the chunks' in floor order, which is the counts' own time order whenever each chunk's posts
  all come after the previous chunk's (checked; otherwise the thread is read whole);
- the flags: every post a check can flag is among the posts handed to the checks — the notable
  ones (:func:`notable`), every post of a player after his out time (the chunks whose latest
  post of his is later are read again), and, where the sheriff may only answer, every post of
  that day's sheriff (the chunks he posted in are read again);
- a material is keyed by its chunk's write count and by all it was made from besides the
  posts: the thread's role and day, the roster and its 替补, the forum's address, bansha's code.
  A look at a past moment (``--as-of``) before a chunk's last post reads that chunk again.

A store opened read-only uses the stored materials it can and writes none.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import marshal
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, overload

from engine.conduct import Activity, Evidence, PostCount, count_posts
from pipeline import code_identity
from pipeline.derive.results import post_url
from pipeline.store import PostSketch, Store

#: a chunk is the posts whose floor >> CHUNK_BITS is the same (posts without a floor: chunk -1)
CHUNK_BITS = 8
#: the material's shape: another one is never read
MATERIAL_VERSION = 3
VERSIONS = "derive_chunk_versions"
CACHE = "derive_chunk_cache"
TRIGGER_PREFIX = "derive_chunk_"
#: the columns of ``posts`` a material is made of (a fetch that only sees a post again moves
#: none of them)
READ_COLUMNS = ("pid", "floor", "author", "uid", "posted_at", "posted_ts", "text", "state", "marks")


def _chunk_of(row: str) -> str:
    return f"coalesce({row}.floor >> {CHUNK_BITS}, -1)"


def _bump(row: str) -> str:
    chunk = _chunk_of(row)
    return (
        f"INSERT OR IGNORE INTO {VERSIONS}(tid, chunk, version) VALUES ({row}.tid, {chunk}, 0); "
        f"UPDATE {VERSIONS} SET version = version + 1 WHERE tid = {row}.tid AND chunk = {chunk};"
    )


def chunk_triggers() -> dict[str, str]:
    """The triggers that count the writes to each chunk: name -> ``CREATE TRIGGER``. A
    trigger's name ends with a digest of its statement (a changed one is a new trigger)."""
    changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in ("tid", *READ_COLUMNS))
    bodies = {
        "insert": f"AFTER INSERT ON posts BEGIN {_bump('new')} END",
        "delete": f"AFTER DELETE ON posts BEGIN {_bump('old')} END",
        "update": f"AFTER UPDATE ON posts WHEN {changed} BEGIN {_bump('old')} {_bump('new')} END",
    }
    out = {}
    for op, body in bodies.items():
        name = f"{TRIGGER_PREFIX}{op}_{hashlib.sha256(body.encode()).hexdigest()[:10]}"
        out[name] = f"CREATE TRIGGER {name} {body}"
    return out


def ensure_chunk_counters(store: Store) -> bool:
    """Whether the chunk counters can be trusted: their triggers are in place, installed now
    if need be (then every stored material is dropped: writes may have gone uncounted, and
    every chunk present is counted from here). False for a read-only store without them."""
    tables = {r[0] for r in store.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if VERSIONS not in tables or CACHE not in tables:
        return False  # a store from before its migration, opened read-only
    want = chunk_triggers()
    have = {
        r[0]
        for r in store.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ?",
            [len(TRIGGER_PREFIX), TRIGGER_PREFIX],
        )
    }
    if have == set(want):
        return True
    try:
        with store.atomic():
            for name in have - set(want):
                store.execute(f"DROP TRIGGER IF EXISTS {name}")
            for name in set(want) - have:
                store.execute(want[name])
            store.execute(f"DELETE FROM {CACHE}")
            present = store.execute(
                f"SELECT DISTINCT tid, {_chunk_of('posts')} FROM posts"
            ).fetchall()
            store.conn.executemany(
                f"INSERT OR IGNORE INTO {VERSIONS}(tid, chunk, version) VALUES (?, ?, 0)", present
            )
    except sqlite3.OperationalError:  # read-only: derive reads every thread whole
        return False
    return True


# --------------------------------------------------------------------------- the material


def notable(a: Activity) -> bool:
    """A thread's post a conduct check may flag whoever wrote it and whenever: a director's
    font, hidden text (Discuz! code is flagged in 遗言 only, never a thread's post; the checks
    that need the poster's out time or the day's sheriff are given those posts apart:
    ``pipeline.derive.discussion.conduct_acts``)."""
    return a.red or a.enlarged or bool(a.hidden)


def _act_row(a: Activity) -> tuple[Any, ...]:
    return (
        a.player,
        a.pid,
        a.floor,
        a.at.isoformat(),
        a.state,
        a.red,
        a.enlarged,
        a.has_bbcode,
        a.text,
        a.hidden,
    )


def _act_of(row: Sequence[Any], tid: int, role: str, base: str) -> Activity:
    player, pid, floor, at, state, red, enlarged, has_bbcode, text, hidden = row
    return Activity(
        player=player,
        tid=tid,
        role=role,
        pid=pid,
        floor=floor,
        at=datetime.fromisoformat(at),
        state=state,
        url=post_url(base, tid, pid),
        red=red,
        enlarged=enlarged,
        has_bbcode=has_bbcode,
        text=text,
        hidden=tuple(hidden),
    )


@dataclass(frozen=True, slots=True)
class CountWindow:
    """The day a discussion thread is counted for (``count_posts``'s arguments)."""

    day: int
    opens: datetime
    closes: datetime

    def key(self) -> list[Any]:
        return [self.day, self.opens.isoformat(), self.closes.isoformat()]


def make_material(
    chunk: int, acts: Sequence[Activity], window: CountWindow | None, max_at: str | None
) -> dict[str, Any]:
    """A chunk's material from its posts as activities (``window``: the day its counts are
    for; None: no counts); ``max_at``: the latest time of any post in it."""
    counts: dict[str, list[Any]] = {}
    if window is not None:
        for player, pc in count_posts(
            acts,
            day=window.day,
            opens=window.opens,
            closes=window.closes,
            discussion_tids={a.tid for a in acts},
        ).items():
            counts[player] = [
                list(pc.pids),
                # one string per player and chunk (few objects to load): floor and time per post
                "\n".join(f"{_floor(e.floor)}\t{_iso(e.at)}" for e in pc.evidence),
                [list(x) for x in pc.excluded],
                [list(x) for x in pc.notes],
            ]
    ordered = sorted(acts, key=lambda a: (a.at, a.pid))
    latest: dict[str, str] = {}
    for a in ordered:
        latest[a.player] = f"{chunk}\t{a.at.isoformat()}"
    material = {
        "v": MATERIAL_VERSION,
        "max_at": max_at,
        "first": [ordered[0].at.isoformat(), ordered[0].pid] if ordered else None,
        "last": [ordered[-1].at.isoformat(), ordered[-1].pid] if ordered else None,
        "counts": counts,
        "notable": [_act_row(a) for a in ordered if notable(a)],
        # per player, the chunk and the time of his latest post (one line per chunk)
        "latest": latest,
    }
    return material


def _floor(floor: int | None) -> str:
    return "" if floor is None else str(floor)


def _iso(at: datetime | None) -> str:
    return "" if at is None else at.isoformat()


class CountedPosts(Sequence[Evidence]):
    """A player's counted posts in one thread, made into ``Evidence`` only when read: the
    pids, and the floors and times the chunks stored (one string per chunk), in time order."""

    __slots__ = ("_base", "_made", "_pids", "_places", "_tid")

    def __init__(self, tid: int, base: str, pids: Sequence[int], places: Sequence[str]) -> None:
        self._tid, self._base, self._pids, self._places = tid, base, pids, places
        self._made: tuple[Evidence, ...] | None = None

    def _all(self) -> tuple[Evidence, ...]:
        if self._made is None:
            rows = [row.split("\t") for part in self._places if part for row in part.split("\n")]
            self._made = tuple(
                Evidence(
                    self._tid,
                    pid,
                    int(floor) if floor else None,
                    datetime.fromisoformat(at) if at else None,
                    post_url(self._base, self._tid, pid),
                )
                for pid, (floor, at) in zip(self._pids, rows, strict=True)
            )
        return self._made

    def __len__(self) -> int:
        return len(self._pids)

    @overload
    def __getitem__(self, index: int) -> Evidence: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Evidence, ...]: ...
    def __getitem__(self, index: int | slice) -> Evidence | tuple[Evidence, ...]:
        return self._all()[index]

    def __iter__(self) -> Iterator[Evidence]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CountedPosts | tuple | list):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"CountedPosts({self._all()!r})"


#: where the settled chunks' merged material is stored (``chunk`` of no floor range)
SETTLED = -2


def merge_materials(materials: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The materials of consecutive chunks (in floor order) as one, the same shape; None when
    a chunk's posts do not all come after the previous chunk's (then only the whole thread in
    time order says)."""
    parts = [m for m in materials if m["first"] is not None]
    for prev, nxt in itertools.pairwise(parts):
        last, first = prev["last"], nxt["first"]
        if (_dt(last[0]), last[1]) >= (_dt(first[0]), first[1]):
            return None
    counts: dict[str, list[Any]] = {}
    latest: dict[str, list[str]] = {}
    for m in parts:
        for player, (pids, places, excluded, notes) in m["counts"].items():
            acc = counts.get(player)
            if acc is None:
                counts[player] = acc = [[], [], [], []]
            acc[0].extend(pids)
            if places:
                acc[1].append(places)
            acc[2].extend(excluded)
            acc[3].extend(notes)
        for player, line in m["latest"].items():
            latest.setdefault(player, []).append(line)
    times = [_dt(m["max_at"]) for m in materials if m["max_at"] is not None]
    return {
        "v": MATERIAL_VERSION,
        "max_at": max(times).isoformat() if times else None,
        "first": parts[0]["first"] if parts else None,
        "last": parts[-1]["last"] if parts else None,
        "counts": {p: [c[0], "\n".join(c[1]), c[2], c[3]] for p, c in counts.items()},
        "notable": [row for m in parts for row in m["notable"]],
        "latest": {p: "\n".join(lines) for p, lines in latest.items()},
    }


def counts_of(tid: int, base: str, material: dict[str, Any]) -> dict[str, PostCount]:
    """A thread's post counts from its (merged) material, players in name order."""
    result: dict[str, PostCount] = {}
    for player in sorted(material["counts"]):
        pids, places, excluded, notes = material["counts"][player]
        result[player] = PostCount(
            player=player,
            count=len(pids),
            pids=tuple(pids),
            evidence=CountedPosts(tid, base, pids, [places]),
            excluded=tuple((pid, why) for pid, why in excluded),
            notes=tuple((pid, note) for pid, note in notes),
        )
    return result


def latest_chunks(material: dict[str, Any], player: str) -> list[tuple[int, datetime]]:
    """The chunks of a material holding a post by ``player``, with the time of his latest."""
    found = material["latest"].get(player)
    if not found:
        return []
    out = []
    for line in found.split("\n"):
        chunk, at = line.split("\t")
        out.append((int(chunk), _dt(at)))
    return out


def _dt(iso: str) -> datetime:
    return datetime.fromisoformat(iso)


# --------------------------------------------------------------------------- reading chunks


def context_key(*, roster_key: str, base: str, role: str, window: CountWindow | None) -> str:
    """What a material is made from besides its chunk's posts."""
    parts = [MATERIAL_VERSION, CHUNK_BITS, code_identity(), roster_key, base, role]
    parts.append(window.key() if window is not None else None)
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode()).hexdigest()[:24]


def chunk_versions(store: Store, tid: int) -> dict[int, int]:
    return dict(
        store.execute(f"SELECT chunk, version FROM {VERSIONS} WHERE tid = ?", [tid]).fetchall()
    )


class StoredMaterials:
    """The materials kept for thread ``tid``: every chunk's key read at once, a material only
    when it is used — a derivation that finds the settled chunks merged reads two of them,
    not one per chunk of the thread."""

    def __init__(self, store: Store, tid: int) -> None:
        self._store = store
        self._tid = tid
        rows = store.execute(f"SELECT chunk, key FROM {CACHE} WHERE tid = ?", [tid]).fetchall()
        self._keys: dict[int, str] = dict(rows)

    def key(self, chunk: int) -> str:
        """The key ``chunk``'s material was kept under ("" when none is kept)."""
        return self._keys.get(chunk, "")

    def material(self, chunk: int, key: str) -> bytes | None:
        """``chunk``'s material if it is still the one kept under ``key``, else None."""
        row = self._store.execute(
            f"SELECT key, material FROM {CACHE} WHERE tid = ? AND chunk = ?", [self._tid, chunk]
        ).fetchone()
        return bytes(row[1]) if row is not None and row[0] == key else None


def store_materials(store: Store, tid: int, made: dict[int, tuple[str, bytes]]) -> None:
    """Keep ``made`` (chunk -> key, material); a store that cannot be written keeps none."""
    if not made:
        return
    try:
        with store.atomic():
            store.conn.executemany(
                f"INSERT INTO {CACHE}(tid, chunk, key, material) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(tid, chunk) DO UPDATE SET key = excluded.key, "
                "material = excluded.material",
                [(tid, chunk, key, material) for chunk, (key, material) in made.items()],
            )
    except sqlite3.OperationalError:
        pass  # read-only, or busy: the next derivation makes them again


def chunk_sketches(store: Store, tid: int, chunk: int) -> list[PostSketch]:
    """The posts of one chunk of ``tid``, in posting order (as ``Store.post_sketches``)."""
    if chunk < 0:
        return store.post_sketches(tid, floorless=True)
    return store.post_sketches(tid, (chunk << CHUNK_BITS, (chunk + 1) << CHUNK_BITS))


def dump(material: dict[str, Any]) -> bytes:
    """A material as stored (builtins only: :func:`load` gives back the same values)."""
    return marshal.dumps(material)


def load(material: bytes) -> dict[str, Any] | None:
    try:
        found = marshal.loads(material)
    except (EOFError, ValueError, TypeError):
        return None
    return found if isinstance(found, dict) and found.get("v") == MATERIAL_VERSION else None


def notable_acts(m: dict[str, Any], tid: int, role: str, base: str) -> list[Activity]:
    return [_act_of(row, tid, role, base) for row in m["notable"]]
