"""A fetched page's posts sorted against their stored readings, before anything is written:
new, changed (a new revision), enriched (the same content read richer), seen again, or read
poorer (never replaces the richer reading)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from parsers.records import Post
from pipeline.store.rows import _post_row, _row_core, reading_rank


@dataclass
class PageReadings:
    """What a page's posts are to the store, each with its row where it is written."""

    new: list[tuple[Post, dict[str, Any]]] = field(default_factory=list)
    changed: list[tuple[Post, dict[str, Any]]] = field(default_factory=list)
    enriched: list[tuple[Post, dict[str, Any]]] = field(default_factory=list)
    again: list[Post] = field(default_factory=list)
    poorer: list[Post] = field(default_factory=list)


def sort_readings(
    posts: Sequence[Post], existing: dict[int, dict[str, Any]], *, page: int, seen: str
) -> PageReadings:
    """Each post of a page against its stored reading (``existing``, by pid)."""
    out = PageReadings()
    for post in posts:
        row = _post_row(post, page=page, seen=seen, page_id=0)
        old = existing.get(post.pid)
        if old is None:
            out.new.append((post, row))
            continue
        same = old["content_hash"] == row["content_hash"] and old["state"] == row["state"]
        if not same and not (old["source"] != row["source"] and _row_core(old) == _row_core(row)):
            out.changed.append((post, row))  # a new revision, the old one kept
            continue
        rank, old_rank = reading_rank(row), reading_rank(old)
        edit_differs = (old["edit_editor"], old["edit_at"]) != (row["edit_editor"], row["edit_at"])
        if rank > old_rank or (rank == old_rank and (not same or edit_differs)):
            # the same content read at least as richly: its marks, edit note and page
            # become the evidence of the stored reading and of its revision
            out.enriched.append((post, row))
        elif rank < old_rank:
            # a poorer reading (the mobile API after the desktop page): never replaces
            # the richer one; the stored reading keeps pointing at the page it came from
            out.poorer.append(post)
        else:  # unchanged: only where and when it was seen (floors renumber)
            out.again.append(post)
    return out
