"""Talking to the forum: the HTTP client, the crawl, the poster.

httpx and httpcore are imported here, first, without two optional extras they probe for and
bansha never uses: httpx's own command line (``httpx._main``: pygments and rich, when they are
installed) and httpcore's trio backend (trio, installed with selenium in the dev venv). bansha's
requests are synchronous, so neither can serve it; without this, what else is installed beside
bansha would change what every cycle loads. A module already imported is left as it is.
"""

from __future__ import annotations

import sys

#: optional modules httpx and httpcore import when present; bansha uses none of them
_UNUSED_EXTRAS = ("httpx._main", "trio")


def _import_http_without_extras() -> None:
    """Import httpx and httpcore with :data:`_UNUSED_EXTRAS` unavailable (a ``None`` entry in
    ``sys.modules`` makes their ``import`` raise ImportError, which both packages expect), then
    make the extras importable again for whoever else wants them (selenium wants trio)."""
    if "httpcore" in sys.modules and "httpx" in sys.modules:
        return
    blocked = [name for name in _UNUSED_EXTRAS if name not in sys.modules]
    for name in blocked:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import httpcore  # noqa: F401
        import httpx  # noqa: F401
    finally:
        for name in blocked:
            if sys.modules.get(name, ...) is None:
                del sys.modules[name]


_import_http_without_extras()
