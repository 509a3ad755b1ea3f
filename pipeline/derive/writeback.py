"""Step 4 of a cycle: the derivation written back as rows, and a day's tally as JSON."""

from __future__ import annotations

import hashlib
import json
from array import array
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pipeline.derive.results import DayResult, Derivation, RoundResult
from pipeline.store import POST_COUNTS_KEY, Store

STAMPS = {"tallies": "derived_at", "flags": "raised_at"}
#: ``meta``: the fingerprint of the post counts the store holds, with the value of the write
#: counter (:data:`~pipeline.store.POST_COUNTS_KEY`) right after they were written or compared
FINGERPRINT_KEY = "derive:post_counts_fingerprint"


DERIVED_KEYS = {
    "votes": ("day", "seq"),
    "tallies": ("day",),
    "post_counts": ("day", "player"),
    "flags": ("id",),
}


def derived_rows(d: Derivation, *, counts: bool = True) -> dict[str, list[dict[str, Any]]]:
    """The rows of the derived tables for this derivation (without time stamps); without
    ``post_counts``' rows when not ``counts``."""
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in DERIVED_KEYS}
    for n, res in sorted(d.days.items()):
        for seq, v in enumerate(res.all_verdicts):
            b = v.ballot
            rows["votes"].append(
                {
                    "day": n,
                    "seq": seq,
                    "tid": b.evidence.tid,
                    "pid": b.evidence.pid,
                    "floor": b.evidence.floor,
                    "at": b.evidence.at.isoformat(),
                    "voter": v.voter_unit or b.voter,
                    "kind": b.kind.value,
                    "target": b.target or b.target_raw,
                    "status": v.status.value,
                    "counts_for": v.counts_for,
                    "reason": v.reason,
                    "note": v.note,
                    "rule": v.rule,
                    "url": b.evidence.url,
                }
            )
        if res.tally is not None:
            rows["tallies"].append(
                {
                    "day": n,
                    "out": res.tally.out,
                    "elected": res.tally.elected,
                    "decided_by": res.tally.decided_by,
                    "json": json.dumps(
                        {
                            **res.tally.to_dict(),
                            **({"first_round": res.first.tally.to_dict()} if res.first else {}),
                            **_ended_json(d, n),
                        },
                        ensure_ascii=False,
                    ),
                }
            )
        for player, pc in sorted(res.counts.items()) if counts else ():
            rows["post_counts"].append(
                {"day": n, "player": player, "count": pc.count, "pids": json.dumps(list(pc.pids))}
            )
    for f in d.flags:
        rows["flags"].append(
            {
                "id": f.id,
                "day": f.day,
                "kind": f.kind.value,
                "player": f.player,
                "reason": f.reason,
                "card": f.card.value if f.card else None,
                "rule": f.rule,
                "evidence": json.dumps([e.to_dict() for e in f.evidence], ensure_ascii=False),
            }
        )
    return rows


def _ended_json(d: Derivation, n: int) -> dict[str, Any]:
    """``{"ended": …}`` in day ``n``'s stored tally when the game ended during it, before the
    vote (:attr:`Derivation.ended`, with the lines the director reads, for ``bansha status``:
    pipeline/console/overview.py reads them without loading the derivation)."""
    if d.ended is None or d.ended.day != n:
        return {}
    return {"ended": {**d.ended.to_dict(), "lines": d.ended.lines(d.game.game.tz)}}


def write_derivation(store: Store, d: Derivation, *, now: datetime) -> bool:
    """Write the derived tables, in one transaction; return whether anything changed.

    Only a table whose rows changed is rewritten: nothing is written when the verdicts are what
    the store already holds, so a cycle with nothing new changes nothing, and a director's
    proxy vote leaves the post counts (a day's every counted pid) as they are. A flag keeps the
    time it was first raised; the tallies' ``derived_at`` is when they last changed.

    The post counts are compared by their fingerprint (:func:`counts_fingerprint`) while no one
    wrote them since the derivation that kept it: they are not read back nor serialised then.
    """
    fingerprint = counts_fingerprint(d)
    writes = _counts_writes(store)  # before the rows are read: a write after it is seen
    kept = writes is not None and store.get_meta(FINGERPRINT_KEY) == f"{fingerprint}:{writes}"
    new = derived_rows(d, counts=not kept)
    if "note" not in store.columns("votes"):  # a store from before the note column
        new["votes"] = [{k: v for k, v in r.items() if k != "note"} for r in new["votes"]]
    tables = [t for t in DERIVED_KEYS if not (kept and t == "post_counts")]
    old: dict[str, list[dict[str, Any]]] = {}
    for table in tables:
        stamp = STAMPS.get(table)
        order = ", ".join(DERIVED_KEYS[table])
        old[table] = [
            {k: v for k, v in r.items() if k != stamp}
            for r in store.query(f"SELECT * FROM {table} ORDER BY {order}")
        ]
    changed = [t for t in tables if _by_key(old[t], t) != _by_key(new[t], t)]
    if not changed:
        if not kept and writes is not None:
            with store.atomic():
                _keep_fingerprint(store, fingerprint, since=writes)
        return False
    stamp = now.isoformat()
    raised = {r["id"]: r["raised_at"] for r in store.query("SELECT id, raised_at FROM flags")}
    stamped = {
        "tallies": lambda r: {**r, "derived_at": stamp},
        "flags": lambda r: {**r, "raised_at": raised.get(r["id"], stamp)},
    }
    with store.atomic():
        for table in changed:
            store.execute(f"DELETE FROM {table}")
            stamp_row = stamped.get(table)
            rows = new[table]
            store.insert(table, rows if stamp_row is None else map(stamp_row, rows))
        if not kept and writes is not None:
            # rows written here are these counts; rows compared equal, only if unwritten since
            _keep_fingerprint(
                store, fingerprint, since=None if "post_counts" in changed else writes
            )
    return True


def counts_fingerprint(d: Derivation) -> str:
    """A digest of every day's post counts — who, how many, which pids — without building
    their rows (a day's counts name every counted post)."""
    h = hashlib.blake2b(digest_size=16)
    for n, res in sorted(d.days.items()):
        for player, pc in sorted(res.counts.items()):
            h.update(json.dumps([n, player, pc.count, len(pc.pids)], ensure_ascii=False).encode())
            h.update(array("q", pc.pids).tobytes())
    return h.hexdigest()


def _counts_writes(store: Store) -> str | None:
    """The post counts' write counter (None in a store without it)."""
    value = store.get_meta(POST_COUNTS_KEY)
    return None if value is None else str(value)


def _keep_fingerprint(store: Store, fingerprint: str, *, since: str | None) -> None:
    """Note, inside the transaction that wrote or compared them, that ``post_counts`` holds
    the counts of ``fingerprint`` — with ``since``, only if no write came since the rows were
    read (another process's rows are not these)."""
    writes = _counts_writes(store)
    if writes is None or (since is not None and writes != since):
        return
    store.set_meta(FINGERPRINT_KEY, f"{fingerprint}:{writes}")


def _by_key(rows: list[dict[str, Any]], table: str) -> list[dict[str, Any]]:
    """``rows`` of ``table`` in the order of its key (:data:`DERIVED_KEYS`)."""
    key = DERIVED_KEYS[table]
    return sorted(rows, key=lambda r: tuple(r[k] for k in key))


def flag_decisions(store: Store) -> dict[str, dict[str, Any]]:
    return {r["flag_id"]: r for r in store.query("SELECT * FROM flag_decisions")}


def tally_json(d: Derivation, n: int, decisions: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The ``bansha tally --json`` contract (field names are stable)."""
    res = d.day(n)
    flags = [f for f in d.flags if f.day == n]
    return {
        "game": d.game.game.id,
        "ruleset": d.game.game.ruleset,
        "day": n,
        "as_of": d.as_of.isoformat(),
        "opens": res.day.opens.isoformat(),
        "closes": res.day.closes.isoformat(),
        "closed": d.as_of >= res.day.closes,
        # false: none of the day's threads was read yet (nothing judged for 潜水/未投票)
        "crawled": res.crawled,
        "sheriff": res.sheriff,
        "accelerated": res.accelerated,
        "speed": _speed_json(res),
        "votes": [v.to_dict() for v in res.verdicts],
        "valid": [v.to_dict() for v in res.verdicts if v.status.value == "counted"],
        "invalid": [v.to_dict() for v in res.verdicts if v.status.value != "counted"],
        "tally": res.tally.to_dict() if res.tally else None,
        "out": res.tally.out if res.tally else None,
        "elected": res.tally.elected if res.tally else None,
        "decided_by": res.tally.decided_by if res.tally else None,
        "rule": res.tally.rule if res.tally else None,
        "post_counts": {p: pc.to_dict() for p, pc in sorted(res.counts.items())},
        "post_exempt": dict(res.post_exempt),
        "flags": [
            {**f.to_dict(), "status": decisions.get(f.id, {}).get("status", "open")} for f in flags
        ],
        "notes": res.notes,
        # the game ended during this day, before its vote (its vote is not counted); else null
        "ended": d.ended.to_dict() if d.ended is not None and d.ended.day == n else None,
        # 太阳[日不落] (m209.txt:377-378): the first 正午 round (the fields above are the extra
        # round's); null on an ordinary day
        "first_round": _round_json(res.first),
    }


def _speed_json(res: DayResult) -> dict[str, Any] | None:
    """The day's speed decision; each request not counted with its post (pid and link)."""
    if res.speed is None:
        return None
    return res.speed.to_dict()


def _round_json(r: RoundResult | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "tid": r.tid,
        "closes": r.closes.isoformat(),
        "votes": [v.to_dict() for v in r.verdicts],
        "valid": [v.to_dict() for v in r.verdicts if v.status.value == "counted"],
        "invalid": [v.to_dict() for v in r.verdicts if v.status.value != "counted"],
        "tally": r.tally.to_dict(),
        "out": r.tally.out,
        "decided_by": r.tally.decided_by,
        "rule": r.tally.rule,
    }
