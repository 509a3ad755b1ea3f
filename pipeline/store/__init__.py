"""The SQLite store of one game (sqlite-utils).

Raw responses are the source of truth; posts, revisions and every verdict are derived from them
and can be derived again. The schema is created and migrated by the code; each migration is
recorded in ``_migrations``. Every page is written in one transaction, so a crawl killed at any
moment leaves the store consistent and the next crawl completes it.

No secret is stored: every body goes through :func:`pipeline.discuz.client.scrub_body` in
:meth:`Store._store_body` (the session's cookie values, the mobile API's ``auth``/``saltkey``/
``formhash``, the pages' formhash), and deleted content is overwritten (``secure_delete``).

Evidence never gets worse: a reading of a post from a poorer source (the mobile API, which
drops ``[size]``, a shown ``[hide]`` and the ``本帖最后由`` note) never replaces a richer reading
of the same content, and a richer reading of the same content enriches the revision in place
instead of making a new one (see :func:`reading_rank`).

A page's raw body is kept when the page's posts changed (first sighting of the page, a new
post, an edit, a richer reading, a vanished post, floors or subject changed), not on every
fetch: Discuz pages differ on every request (views, online counts, times), so every fetch would
otherwise keep a new body. Every fetch is still recorded, as a small ``pages`` row (time, url,
status, body id); a fetch whose body was not kept points at the last kept body of its page,
which shows the same posts. Bodies are stored zlib-compressed (:func:`encode_body`), keyed by
the sha256 of the uncompressed scrubbed body; bodies stored before are read as they are.

Modules: ``core`` (``Store``, ``open_store``, the read-only store), ``connection`` (opening the
file, ``StoreError``, the busy wait), ``migrations`` (the schema), ``pages`` (a page's posts
sorted against the stored readings), ``bodies`` (stored bodies, page signatures), ``rows``
(posts and revisions as rows), ``scrub`` (secrets out of bodies), ``lock`` (one writer per
store).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type checker sees every name; a run loads each at first use
    from pipeline.store.bodies import (
        BODY_ZLIB,
        ZLIB_LEVEL,
        decode_body,
        encode_body,
        is_encoded,
        page_signature,
    )
    from pipeline.store.connection import (
        BUSY_TIMEOUT_S,
        VACUUM_MIN_FREE_SHARE,
        StoreBusy,
        StoreError,
        open_db,
        vacuum_if_worth_it,
    )
    from pipeline.store.core import (
        DRAFT_INPUTS_KEY,
        POST_COUNTS_KEY,
        TALLY_VIEW_KEY,
        ReadOnlyStore,
        Store,
        open_store,
        open_store_readonly,
    )
    from pipeline.store.migrations import MIGRATIONS, REVOCABLE_TABLES, migrate
    from pipeline.store.rows import (
        POST_COLUMNS,
        SOURCE_BOUND_MARKS,
        SOURCE_RANK,
        PageWrite,
        PostSketch,
        marks_from_json,
        post_from_row,
        reading_core,
        reading_rank,
    )

#: each re-exported name -> the module that defines it, imported when the name is first used
_HOME = {
    "BODY_ZLIB": "pipeline.store.bodies",
    "BUSY_TIMEOUT_S": "pipeline.store.connection",
    "DRAFT_INPUTS_KEY": "pipeline.store.core",
    "MIGRATIONS": "pipeline.store.migrations",
    "POST_COLUMNS": "pipeline.store.rows",
    "POST_COUNTS_KEY": "pipeline.store.core",
    "REVOCABLE_TABLES": "pipeline.store.migrations",
    "SOURCE_BOUND_MARKS": "pipeline.store.rows",
    "SOURCE_RANK": "pipeline.store.rows",
    "TALLY_VIEW_KEY": "pipeline.store.core",
    "VACUUM_MIN_FREE_SHARE": "pipeline.store.connection",
    "ZLIB_LEVEL": "pipeline.store.bodies",
    "PageWrite": "pipeline.store.rows",
    "PostSketch": "pipeline.store.rows",
    "ReadOnlyStore": "pipeline.store.core",
    "Store": "pipeline.store.core",
    "StoreBusy": "pipeline.store.connection",
    "StoreError": "pipeline.store.connection",
    "decode_body": "pipeline.store.bodies",
    "encode_body": "pipeline.store.bodies",
    "is_encoded": "pipeline.store.bodies",
    "marks_from_json": "pipeline.store.rows",
    "migrate": "pipeline.store.migrations",
    "open_db": "pipeline.store.connection",
    "open_store": "pipeline.store.core",
    "open_store_readonly": "pipeline.store.core",
    "page_signature": "pipeline.store.bodies",
    "post_from_row": "pipeline.store.rows",
    "reading_core": "pipeline.store.rows",
    "reading_rank": "pipeline.store.rows",
    "vacuum_if_worth_it": "pipeline.store.connection",
}

__all__ = [
    "BODY_ZLIB",
    "BUSY_TIMEOUT_S",
    "DRAFT_INPUTS_KEY",
    "MIGRATIONS",
    "POST_COLUMNS",
    "POST_COUNTS_KEY",
    "REVOCABLE_TABLES",
    "SOURCE_BOUND_MARKS",
    "SOURCE_RANK",
    "TALLY_VIEW_KEY",
    "VACUUM_MIN_FREE_SHARE",
    "ZLIB_LEVEL",
    "PageWrite",
    "PostSketch",
    "ReadOnlyStore",
    "Store",
    "StoreBusy",
    "StoreError",
    "decode_body",
    "encode_body",
    "is_encoded",
    "marks_from_json",
    "migrate",
    "open_db",
    "open_store",
    "open_store_readonly",
    "page_signature",
    "post_from_row",
    "reading_core",
    "reading_rank",
    "vacuum_if_worth_it",
]


def __getattr__(name: str) -> Any:
    """The re-exported ``name``, imported from its module on first use (PEP 562)."""
    try:
        module = _HOME[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
