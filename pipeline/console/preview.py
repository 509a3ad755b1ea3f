"""A draft as the forum will show it, and the difference between two drafts.

The BBCode is rendered by the simulator's copy of Discuz's ``discuzcode()``
(:func:`pipeline.sim.render.discuzcode`: ``dhtmlspecialchars`` first, so whatever a player wrote
stays text), then made safe for the console's page: the handlers and scripts Discuz's own
markup carries (``onclick``, ``onload``, the ``[hide]`` script) are removed, a link is kept only
when it goes to ``http(s)`` (relative links point to the forum), and an image only from
``http(s)``. The page's Content-Security-Policy forbids scripts besides.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass
from urllib.parse import urljoin

from markupsafe import Markup

__all__ = ["DiffLine", "bbcode_html", "diff_lines"]

_SCRIPT_RE = re.compile(r"<script\b[^>]*>.*?</script>", re.S | re.I)
_HANDLER_RE = re.compile(r"\s+on[a-z]+=\"[^\"]*\"", re.I)
_HREF_RE = re.compile(r"\b(href|src)=\"([^\"]*)\"", re.I)
_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
_BLANK_RE = re.compile(r'(<a\b[^>]*?)\s+target="_blank"', re.I)


def _safe_url(raw: str, base_url: str) -> str | None:
    """The link as the browser would read it (entities decoded), absolute against the forum,
    or None when it is not ``http(s)``."""
    url = html.unescape(raw).strip()
    url = re.sub(r"[\x00-\x20]", "", url)
    if url.startswith("//"):
        return None
    if not _SCHEME_RE.match(url):
        url = urljoin(base_url, url)
    if not re.match(r"^https?://", url, re.I):
        return None
    return html.escape(url, quote=True)


def bbcode_html(body: str, *, base_url: str, tid: int | None = None) -> Markup:
    """``body`` (Discuz BBCode) as the HTML the forum's desktop page shows, made safe."""
    from pipeline.sim.render import RenderContext, discuzcode  # loaded at the first preview

    ctx = RenderContext(
        siteurl=base_url, tid=tid or 0, fid=0, pid=0, hide_unlocked=True, viewer_name=""
    )
    out = discuzcode(body, ctx)
    out = _SCRIPT_RE.sub("", out)
    out = _HANDLER_RE.sub("", out)

    def fix(m: re.Match[str]) -> str:
        url = _safe_url(m.group(2), base_url)
        if url is None:
            return f'{m.group(1)}=""' if m.group(1).lower() == "src" else 'href="#"'
        return f'{m.group(1)}="{url}"'

    out = _HREF_RE.sub(fix, out)
    out = _BLANK_RE.sub(r'\1 target="_blank" rel="noopener noreferrer"', out)
    # made of escaped text by discuzcode, its own handlers and unsafe links removed above
    return Markup(out)


@dataclass(frozen=True, slots=True)
class DiffLine:
    kind: str  # "add" | "del" | "hunk" | "same" | "file"
    text: str


def diff_lines(old: str, new: str, old_name: str, new_name: str) -> list[DiffLine]:
    """A unified diff, line by line, each with its kind (for colours); [] when the same."""
    out: list[DiffLine] = []
    for i, line in enumerate(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=old_name, tofile=new_name, lineterm=""
        )
    ):
        if i < 2:
            kind = "file"
        elif line.startswith("@@"):
            kind = "hunk"
        elif line.startswith("+"):
            kind = "add"
        elif line.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        out.append(DiffLine(kind, line))
    return out
