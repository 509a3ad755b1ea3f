"""遗言: the last words a player out of the game sends the director.

They are kept in the director's journal (table ``journal_lastwords``), checked for Discuz! code
(遗言中禁止使用Discuz!代码, m209.txt:193, nizhuan.txt:55 — a conduct flag, like every other rule
break, for the director to confirm) and published in the next day-open draft, where the finalizer
escapes them: a code in them shows as the text the player wrote, never as formatting.

A text holds code when it holds a Discuz! X tag (``[b]``, ``[/b]``, ``[color=red]``, ``[url]``,
``[code]``, ``[table]``, ``[hide=10]`` …, any case, opening or closing): the tags Discuz's
``discuzcode()`` and its plugins turn into markup. Brackets around other words (``[好人]``,
``a [ b ]``) and smilies are words.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.rulesets import get_ruleset
from pipeline.store import Store

__all__ = [
    "LastWords",
    "LastWordsError",
    "add_lastwords",
    "discuz_codes",
    "latest_by_player",
    "list_lastwords",
    "refusal",
    "remove_lastwords",
]

#: Discuz! X3.5 BBCode tags (function_discuzcode.php and the default plugins), as players
#: write them; ``*`` is a list item.
_TAGS = (
    *("b", "i", "u", "s", "p", "color", "size", "font", "align", "float", "list", "*"),
    *("indent", "hr", "url", "email", "qq", "img", "code", "quote", "hide", "free"),
    *("table", "tr", "td", "media", "audio", "flash", "attach", "attachimg", "password"),
    *("backcolor", "sup", "sub"),
)
_TAG_RE = re.compile(
    r"\[/?(" + "|".join(re.escape(t) for t in sorted(_TAGS, key=len, reverse=True)) + r")"
    r"(?:=[^\]\r\n]*)?\]",
    re.IGNORECASE,
)


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
    """The Discuz! codes in ``text``: the tag names as written (lower case), in order, once."""
    found: list[str] = []
    for m in _TAG_RE.finditer(text):
        name = m.group(1).lower()
        if name not in found:
            found.append(name)
    return found


def refusal(ruleset: str, out: tuple[datetime, str] | None, first_opens: datetime | None) -> str:
    """Why the rules give this player no last words ("" when they may have some), as the
    rule set's :class:`engine.rulesets.base.LastWordsRules` say.

    ``out``: when and why the player went out (None: not out yet); ``first_opens``: the first
    game day's opening (tubian24: only the first night's outs have last words)."""
    rules = get_ruleset(ruleset).lastwords
    if rules.none:
        return rules.none
    if out is None:
        return ""
    at, cause = out
    if "红牌" in cause and rules.red_card_rule:  # a text silent on it refuses nothing more
        return f"红牌罚下出局的角色没有遗言权利（{rules.red_card_rule}）"
    if rules.first_night_only and first_opens is not None and at > first_opens:
        return rules.first_night_only
    return ""


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
    rowid = store.insert(
        "journal_lastwords",
        [
            {
                "player": player,
                "text": text.strip("\n"),
                "at": at.isoformat(),
                "recorded_at": recorded_at.isoformat(),
                "removed_at": None,
            }
        ],
    )
    return rowid


def list_lastwords(store: Store, *, include_removed: bool = False) -> list[LastWords]:
    sql = "SELECT * FROM journal_lastwords"
    if not include_removed:
        sql += " WHERE removed_at IS NULL"
    return [_row(r) for r in store.query(sql + " ORDER BY at, id")]


def remove_lastwords(store: Store, record_id: int, *, at: datetime) -> LastWords:
    rows = store.query("SELECT * FROM journal_lastwords WHERE id = ?", [record_id])
    if not rows:
        raise LastWordsError(f"没有编号为 {record_id} 的遗言记录")
    if rows[0]["removed_at"] is not None:
        when = datetime.fromisoformat(rows[0]["removed_at"]).strftime("%m-%d %H:%M")
        raise LastWordsError(f"遗言记录 #{record_id} 已于 {when} 撤销")
    store.execute(
        "UPDATE journal_lastwords SET removed_at = ? WHERE id = ?", [at.isoformat(), record_id]
    )
    return _row({**rows[0], "removed_at": at.isoformat()})


def latest_by_player(records: list[LastWords]) -> dict[str, LastWords]:
    """The last words that count per player: the latest record (a resend replaces)."""
    latest: dict[str, LastWords] = {}
    for r in sorted(records, key=lambda r: (r.at, r.id)):
        latest[r.player] = r
    return latest
