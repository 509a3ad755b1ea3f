"""Posts and revisions as rows and back: the columns, a reading's rank, marks as JSON."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from parsers.records import EditNote, Mark, MarkKind, Post, PostState
from pipeline.store.scrub import scrub_text


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt is not None else None


#: how much each source shows of a post: the desktop page keeps every mark and the edit note;
#: the mobile API v4 drops [size], a shown [hide]'s box and the 本帖最后由 note (docs/discuz.md
#: §3.3)
SOURCE_RANK = {"html": 2, "mobile": 1, "mobile-api": 1}


#: marks only the richer source can show: their absence from a mobile reading says nothing
SOURCE_BOUND_MARKS = frozenset({MarkKind.ENLARGED, MarkKind.TINY, MarkKind.HIDE_TAG})


def reading_core(state: str, text: str, quoted_pids: str, marks: tuple[Mark, ...]) -> str:
    """What every source shows of a post alike: its state, words, quotes and the marks both
    sources keep (colours). Two readings with the same core are the same content."""
    payload = json.dumps(
        [
            state,
            text,
            json.loads(quoted_pids or "[]"),
            sorted(
                {
                    (m.kind.value, m.text)
                    for m in marks
                    if m.kind is not MarkKind.BBCODE and m.kind not in SOURCE_BOUND_MARKS
                }
            ),
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def reading_rank(row: dict[str, Any]) -> tuple[int, int, int]:
    """How rich a reading of a post is: its source (desktop page > mobile API), then whether it
    carries the edit note, then how many source-bound marks it shows."""
    marks = marks_from_json(row.get("marks"))
    return (
        SOURCE_RANK.get(row.get("source") or "", 0),
        1 if row.get("edit_at") else 0,
        sum(1 for m in marks if m.kind in SOURCE_BOUND_MARKS),
    )


def _row_core(row: dict[str, Any]) -> str:
    quoted = row.get("quoted_pids") or ""
    return reading_core(row["state"], row.get("text") or "", quoted, marks_from_json(row["marks"]))


def _marks_json(marks: Iterable[Mark]) -> str:
    return json.dumps(
        [{"kind": m.kind.value, "value": m.value, "text": m.text} for m in marks],
        ensure_ascii=False,
    )


_MARK_KINDS = {k.value: k for k in MarkKind}


_STATES = {s.value: s for s in PostState}


#: how an empty list is stored (``json.dumps([])``): most posts quote nothing and carry no mark
_EMPTY = (None, "", "[]")


def marks_from_json(raw: str | None) -> tuple[Mark, ...]:
    if raw in _EMPTY:
        return ()
    return tuple(Mark(_MARK_KINDS[m["kind"]], m["value"], m["text"]) for m in json.loads(raw))


def _json_tuple(raw: str | None) -> tuple[Any, ...]:
    return () if raw in _EMPTY else tuple(json.loads(raw))


#: the columns a Post is made of, in the order :func:`_post_from_values` takes them
POST_COLUMNS = (
    "tid",
    "pid",
    "floor",
    "author",
    "uid",
    "posted_at",
    "message_html",
    "text",
    "quoted_pids",
    "quote_texts",
    "edit_editor",
    "edit_at",
    "state",
    "marks",
    "source",
)


#: :data:`POST_COLUMNS` with an empty ``message_html`` in its place (``Store.posts(html=False)``)
_POST_COLUMNS_NO_HTML = tuple("''" if c == "message_html" else c for c in POST_COLUMNS)


def _post_from_values(
    tid: int,
    pid: int,
    floor: int | None,
    author: str | None,
    uid: int | None,
    posted_at: str | None,
    message_html: str | None,
    text: str | None,
    quoted_pids: str | None,
    quote_texts: str | None,
    edit_editor: str | None,
    edit_at: str | None,
    state: str,
    marks: str | None,
    source: str | None,
) -> Post:
    """A stored post as its record. Cheap: the lists most posts leave empty are not decoded
    (``Store.posts`` builds every post of a thread for every derivation)."""
    return Post(
        tid=tid,
        pid=pid,
        floor=floor,
        author=author or "",
        uid=uid or 0,
        posted_at=datetime.fromisoformat(posted_at) if posted_at else None,
        message_html=message_html or "",
        text=text or "",
        quoted_pids=_json_tuple(quoted_pids),
        quote_texts=_json_tuple(quote_texts),
        edit=EditNote(edit_editor, datetime.fromisoformat(edit_at))
        if edit_editor and edit_at
        else None,
        state=_STATES[state],
        marks=marks_from_json(marks),
        source=source or "html",
    )


def post_from_row(row: dict[str, Any]) -> Post:
    return _post_from_values(
        row["tid"],
        row["pid"],
        row.get("floor"),
        row.get("author"),
        row.get("uid"),
        row.get("posted_at"),
        row.get("message_html"),
        row.get("text"),
        row.get("quoted_pids"),
        row.get("quote_texts"),
        row.get("edit_editor"),
        row.get("edit_at"),
        row["state"],
        row.get("marks"),
        row.get("source"),
    )


class PostSketch(NamedTuple):
    """What :meth:`Store.post_sketches` reads of a post (the fields as in ``Post``)."""

    pid: int
    floor: int | None
    author: str
    uid: int
    posted_at: datetime | None
    text: str
    state: PostState
    marks: tuple[Mark, ...]


@dataclass(frozen=True, slots=True)
class PageWrite:
    """What saving one page changed."""

    page_id: int
    new_posts: int
    changed_posts: int
    vanished_posts: int
    #: posts whose same content was read richer than stored (a mark or edit note gained)
    enriched_posts: int = 0
    #: whether this fetch's body was kept (the page's posts changed, or never kept before)
    body_kept: bool = True


def _safe_headers(headers: dict[str, str], secrets: Iterable[str] = ()) -> dict[str, str]:
    """Response headers without anything that could carry a session secret."""
    secrets = list(secrets)
    return {
        k: scrub_text(v, secrets)
        for k, v in headers.items()
        if k.lower() not in {"set-cookie", "cookie"}
    }


def _revision_row(
    post: Post, row: dict[str, Any], revision: int, seen: str, page_id: int
) -> dict[str, Any]:
    return {
        "tid": post.tid,
        "pid": post.pid,
        "revision": revision,
        "seen_at": seen,
        "content_hash": row["content_hash"],
        "state": row["state"],
        "text": row["text"],
        "message_html": row["message_html"],
        "quoted_pids": row["quoted_pids"],
        "marks": row["marks"],
        "edit_editor": row["edit_editor"],
        "edit_at": row["edit_at"],
        "page_id": page_id,
    }


def _post_row(post: Post, *, page: int, seen: str, page_id: int) -> dict[str, Any]:
    return {
        "tid": post.tid,
        "pid": post.pid,
        "floor": post.floor,
        "page": page,
        "author": post.author,
        "uid": post.uid,
        "posted_at": _iso(post.posted_at),
        "posted_ts": int(post.posted_at.timestamp()) if post.posted_at else None,
        "edit_editor": post.edit.editor if post.edit else None,
        "edit_at": _iso(post.edit.edited_at) if post.edit else None,
        "message_html": post.message_html,
        "text": post.text,
        "quoted_pids": json.dumps(list(post.quoted_pids)),
        "quote_texts": json.dumps(list(post.quote_texts), ensure_ascii=False),
        "marks": _marks_json(post.marks),
        "content_hash": post.content_hash,
        "state": post.state.value,
        "source": post.source,
        "last_seen_at": seen,
        "page_id": page_id,
    }
