"""遗言: the last words a player out of the game sends the director.

They are kept in the director's journal (table ``journal_lastwords``), checked for Discuz! code
(遗言中禁止使用Discuz!代码, m209.txt:193, nizhuan.txt:55 — a conduct flag, like every other rule
break, for the director to confirm) and published in the next day-open draft, where the finalizer
escapes them: a code in them shows as the text the player wrote, never as formatting.

Whether a text holds code is decided by Discuz's own rendering (the simulator's faithful copy of
``discuzcode()``, smilies off): code is whatever the forum would turn into markup, so ``[好人]``
or ``a [ b ]`` are words, ``[b]…[/b]`` and ``[color=red]`` are code.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from pipeline.sim_render import RenderContext, discuzcode
from pipeline.store import Store

__all__ = [
    "LastWords",
    "LastWordsError",
    "add_lastwords",
    "discuz_codes",
    "latest_by_player",
    "list_lastwords",
    "remove_lastwords",
]

_CONTEXT = RenderContext(
    siteurl="http://bansha.invalid/",
    tid=0,
    fid=0,
    pid=0,
    hide_unlocked=True,
    viewer_name="",
    smileyoff=True,
)
#: Tags the renderer emits for a plain line break: not code.
_PLAIN = frozenset({"br", "html", "head", "body"})
#: What a rendered tag was written as, for the director's message.
_WRITTEN = {
    "strong": "b",
    "em": "i",
    "font": "color/size/font",
    "a": "url",
    "li": "*",
    "div": "align",
    "p": "align",
}


class LastWordsError(ValueError):
    """A bad record or request (message in Chinese)."""


@dataclass(frozen=True, slots=True)
class LastWords:
    id: int
    player: str
    text: str
    at: datetime
    recorded_at: str
    removed_at: str | None = None

    @property
    def codes(self) -> list[str]:
        return discuz_codes(self.text)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "player": self.player,
            "text": self.text,
            "at": self.at.isoformat(),
            "recorded_at": self.recorded_at,
            "removed_at": self.removed_at,
            "codes": self.codes,
        }


def discuz_codes(text: str) -> list[str]:
    """The Discuz! codes in ``text`` (as the tags the forum renders, in order, once each)."""
    if "[" not in text:
        return []
    html = discuzcode(text, _CONTEXT)
    tree = LexborHTMLParser(f"<div id='lw'>{html}</div>")
    root = tree.css_first("#lw")
    found: list[str] = []
    if root is None:
        return found
    for node in root.traverse(include_text=False):
        if node.attributes.get("id") == "lw" or node.tag in _PLAIN:
            continue
        klass = node.attributes.get("class") or ""
        if node.tag in ("h4", "blockquote"):
            continue  # the inside of a [hide] / [quote] box
        name = (
            "hide" if "showhide" in klass else "quote" if "quote" in klass else None
        ) or _WRITTEN.get(node.tag, node.tag)
        if name not in found:
            found.append(name)
    return found


def _row(r: Mapping[str, Any]) -> LastWords:
    return LastWords(
        int(r["id"]),
        str(r["player"]),
        str(r["text"]),
        datetime.fromisoformat(r["at"]),
        str(r["recorded_at"]),
        r["removed_at"],
    )


def add_lastwords(
    store: Store, player: str, text: str, *, at: datetime, recorded_at: datetime
) -> int:
    if not text.strip():
        raise LastWordsError("遗言为空：放弃遗言不必记录")
    if at.tzinfo is None:
        raise LastWordsError(f"遗言的时间缺少时区：{at.isoformat()}")
    table = store.db.table("journal_lastwords")
    table.insert(
        {
            "player": player,
            "text": text.strip("\n"),
            "at": at.isoformat(),
            "recorded_at": recorded_at.isoformat(),
            "removed_at": None,
        }
    )
    return int(table.last_pk)


def list_lastwords(store: Store, *, include_removed: bool = False) -> list[LastWords]:
    sql = "SELECT * FROM journal_lastwords"
    if not include_removed:
        sql += " WHERE removed_at IS NULL"
    return [_row(r) for r in store.db.query(sql + " ORDER BY at, id")]


def remove_lastwords(store: Store, record_id: int, *, at: datetime) -> LastWords:
    rows = list(store.db.query("SELECT * FROM journal_lastwords WHERE id = ?", [record_id]))
    if not rows:
        raise LastWordsError(f"没有编号为 {record_id} 的遗言记录")
    if rows[0]["removed_at"] is not None:
        raise LastWordsError(f"遗言记录 #{record_id} 已于 {rows[0]['removed_at']} 撤销")
    store.db.execute(
        "UPDATE journal_lastwords SET removed_at = ? WHERE id = ?", [at.isoformat(), record_id]
    )
    return _row({**rows[0], "removed_at": at.isoformat()})


def latest_by_player(records: list[LastWords]) -> dict[str, LastWords]:
    """The last words that count per player: the latest record (a resend replaces)."""
    latest: dict[str, LastWords] = {}
    for r in sorted(records, key=lambda r: (r.at, r.id)):
        latest[r.player] = r
    return latest
