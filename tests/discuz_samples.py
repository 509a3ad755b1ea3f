"""The repository's own Discuz! X3.5 page samples (tests/fixtures/discuz) and their ground truth.

``manifest.json`` beside the samples says what every post is (tid, pid, uid, author, floor,
message, edit, block, delete, desktop page) and what every file is; the functions here read it so
that a test names a post by its place in the test game (``post("vote", 13)``: the vote thread's
floor 13) rather than by numbers the capture happened to give it.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "discuz"

#: how the desktop page names floors 1-4
FLOOR_NAMES = {"楼主": 1, "沙发": 2, "板凳": 3, "地板": 4}


@cache
def manifest() -> dict[str, Any]:
    """The samples' ground truth (tests/fixtures/discuz/manifest.json)."""
    return json.loads((SAMPLES / "manifest.json").read_text(encoding="utf-8"))


def thread(key: str) -> dict[str, Any]:
    """One of the test game's threads: ``vote``, ``discussion``, ``restricted``, ``scratch``."""
    return manifest()["threads"][key]


def tid(key: str) -> int:
    return int(thread(key)["tid"])


def posts(key: str) -> list[dict[str, Any]]:
    """Every post written in the thread, in posting order (a deleted one included)."""
    return list(thread(key)["posts"])


def post(key: str, floor: int) -> dict[str, Any]:
    """The post the desktop page shows at ``floor`` of thread ``key``."""
    found = [p for p in posts(key) if p["floor"] == floor]
    assert len(found) == 1, f"{key} floor {floor}: {len(found)} posts in the manifest"
    return found[0]


def pid(key: str, floor: int) -> int:
    return int(post(key, floor)["pid"])


def where(key: str, **fields: Any) -> list[dict[str, Any]]:
    """The thread's posts whose manifest fields equal ``fields`` (``deleted=True``, ...)."""
    return [p for p in posts(key) if all(p.get(k) == v for k, v in fields.items())]


def one(key: str, **fields: Any) -> dict[str, Any]:
    found = where(key, **fields)
    assert len(found) == 1, f"{key} {fields}: {len(found)} posts in the manifest"
    return found[0]


def by_pid() -> dict[int, dict[str, Any]]:
    """Every post of every thread by pid, with its thread's ``tid`` added."""
    return {
        int(p["pid"]): {**p, "tid": t["tid"]}
        for t in manifest()["threads"].values()
        for p in t["posts"]
    }


def uid(name: str) -> int:
    return int(manifest()["users"][name]["uid"])


def shown_floor(entry: dict[str, Any]) -> int | None:
    """The floor number the desktop page shows for a manifest post (None: not shown)."""
    shown = entry["floor_displayed"]
    if shown is None:
        return None
    return FLOOR_NAMES.get(shown) or int(shown.rstrip("#"))


def pages(key: str) -> int:
    """How many desktop pages the thread has (10 posts a page)."""
    return max(int(p["desktop_page"]) for p in posts(key) if p["desktop_page"] is not None)


def on_page(key: str, page: int) -> list[dict[str, Any]]:
    return [p for p in posts(key) if p["desktop_page"] == page]


def served_at(path: Path) -> datetime:
    """When the server answered with the sample at ``path`` (the ``Date`` of its ``.head``)."""
    head = path.with_name(path.name + ".head").read_text(encoding="utf-8")
    match = re.search(r"^Date: (.+?)\r?$", head, re.M)
    assert match, f"{path.name}.head has no Date"
    return datetime.strptime(match.group(1), "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)


def status(path: Path) -> int:
    """The HTTP status the server answered with the sample at ``path``."""
    first = path.with_name(path.name + ".head").read_text(encoding="utf-8").split("\n", 1)[0]
    return int(first.split()[1])
