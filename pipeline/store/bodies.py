"""A page's raw body as stored (zlib-compressed behind a format marker) and a page's
signature (what its posts show).
"""

from __future__ import annotations

import hashlib
import json
import zlib

from parsers.records import ThreadPage
from pipeline.store.rows import _iso

#: the format marker of a compressed body: what follows is a zlib stream (level 6) of the
#: scrubbed body. A body stored without it (before migration 010) is the body itself; no
#: response body starts with a NUL byte followed by this tag.
BODY_ZLIB = b"\x00bansha-zlib\x00"


ZLIB_LEVEL = 6


def encode_body(body: bytes) -> bytes:
    """How a (scrubbed) body is stored: the marker, then the body compressed."""
    return BODY_ZLIB + zlib.compress(body, ZLIB_LEVEL)


def is_encoded(stored: bytes | memoryview) -> bool:
    return bytes(stored[: len(BODY_ZLIB)]) == BODY_ZLIB


def decode_body(stored: bytes | memoryview) -> bytes:
    """The body as it was kept (scrubbed), from a compressed row or from an older raw one."""
    if is_encoded(stored):
        return zlib.decompress(bytes(stored[len(BODY_ZLIB) :]))
    return bytes(stored)


def page_signature(parsed: ThreadPage) -> str:
    """What a page shows of its posts, as the store keeps them: subject, and for every post
    (deleted-floor placeholders too) its pid, floor, state, content hash, edit note and source.
    A fetch with the signature of its page's last kept body, and no new, changed, enriched or
    vanished post, shows what that body shows: its own body adds no evidence. The signature
    catches what the counts do not: floors renumbered after a deletion, posts moved to another
    page, a new subject."""
    payload = json.dumps(
        [
            parsed.subject,
            [
                [
                    p.pid,
                    p.floor,
                    p.state.value,
                    p.content_hash,
                    p.edit.editor if p.edit else None,
                    _iso(p.edit.edited_at) if p.edit else None,
                    p.source,
                ]
                for p in parsed.posts
            ],
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]
