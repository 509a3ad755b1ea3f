"""Secrets never reach the store, a log or a message: the scrubbing every stored body and every
error message goes through (the session's cookie values, the mobile API's auth/saltkey/formhash,
the desktop pages' formhash). The lowest layer: the store keeps bodies through it, the Discuz
client scrubs its errors with it."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

# --------------------------------------------------------------------------- secrets

#: what a secret is replaced with, in stored bodies and in messages (ASCII: valid in any page
#: charset, inside JSON strings, HTML attributes and URLs; never a valid formhash)
SCRUB_MARK = "***"
_MARK_B = SCRUB_MARK.encode("ascii")
#: the mobile API's session values (``Variables.auth``, ``saltkey``, ``formhash``;
#: docs/discuz.md §2.2)
_JSON_SECRET = re.compile(rb'"(?:auth|saltkey|formhash)"\s*:\s*"((?:[^"\\]|\\.)*)"')
_INPUT_TAG = re.compile(rb"<input\b[^>]*>", re.I)
_FORMHASH_FIELD = re.compile(rb"""\b(?:name|id)\s*=\s*["']?formhash\b""", re.I)
_VALUE_ATTR = re.compile(rb"""\bvalue\s*=\s*(["'])([^"'>]*)\1""", re.I)
#: ``formhash=`` in links and scripts (the logout link, search links, ajax URLs)
_FORMHASH_PARAM = re.compile(rb"""(?<![\w-])formhash=([^&"'\s<>;#\\]+)""", re.I)
#: the same in messages, plus cookie assignments a page may echo (``xxxx_2132_auth=...``)
_TEXT_SECRET = re.compile(
    r"""(?i)(?<![\w-])((?:\w*_)?(?:formhash|saltkey|auth)\s*[=:]\s*["']?)([^\s;&"'<>,，）)]+)"""
)


#: the shortest secret replaced in a message (a password may be short) and in a stored body
#: (shorter values would hit the words of posts, which must parse the same)
_MIN_IN_TEXT = 3
_MIN_IN_BODY = 6


def is_secret_value(value: str) -> bool:
    """A cookie value that can identify a session: long enough, and not a plain number (times
    and ids are not secret and occur in every page)."""
    return len(value) >= _MIN_IN_BODY and not value.isdigit() and value != SCRUB_MARK


def secret_variants(value: str, minimum: int = _MIN_IN_BODY) -> set[str]:
    """The spellings a secret takes in a page, a JSON answer or a message: as sent in the Cookie
    header (percent-encoded), decoded, HTML-escaped, JSON-escaped (``\\/``)."""
    plain = unquote(value)
    out = {value, plain, quote(plain, safe=""), html.escape(plain)}
    escaped = json.dumps(plain)[1:-1]
    out |= {escaped, escaped.replace("/", "\\/")}
    return {v for v in out if len(v) >= minimum and v != SCRUB_MARK}


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` (a message, a log line) with every secret and every formhash/auth/saltkey value
    replaced by :data:`SCRUB_MARK`."""
    variants: set[str] = set()
    for secret in secrets:
        if secret and len(secret) >= _MIN_IN_TEXT:
            variants |= secret_variants(secret, _MIN_IN_TEXT)
    for variant in sorted(variants, key=len, reverse=True):
        text = text.replace(variant, SCRUB_MARK)
    return _TEXT_SECRET.sub(
        lambda m: m.group(0) if m.group(2) == SCRUB_MARK else m.group(1) + SCRUB_MARK, text
    )


def scrub_body(body: bytes, secrets: Iterable[str] = ()) -> bytes:
    """A response body without secrets, still parseable to the same posts.

    Replaced by :data:`SCRUB_MARK`: the mobile API's ``auth``, ``saltkey`` and ``formhash``
    values, the desktop pages' formhash (hidden inputs, ``formhash=`` in links) — and every
    other occurrence of those values (``hash=`` in a script) —, and every value in ``secrets``
    (the cookie values the client sent, a password) in any of its spellings. Only values are
    replaced, never the quotes, tags or keys around them, so JSON stays JSON and HTML stays HTML.
    """
    found: set[bytes] = set()
    for match in _JSON_SECRET.finditer(body):
        found.add(match.group(1))
    for tag in _INPUT_TAG.finditer(body):
        if _FORMHASH_FIELD.search(tag.group(0)):
            attr = _VALUE_ATTR.search(tag.group(0))
            if attr is not None:
                found.add(attr.group(2))
    for match in _FORMHASH_PARAM.finditer(body):
        found.add(match.group(1))
    for secret in secrets:
        if secret and is_secret_value(secret):
            for variant in secret_variants(secret):
                found.add(variant.encode("utf-8"))
    values = [v for v in found if len(v) >= _MIN_IN_BODY and not v.isdigit() and v != _MARK_B]
    for value in sorted(values, key=len, reverse=True):
        body = body.replace(value, _MARK_B)
    return body
