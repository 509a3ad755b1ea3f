"""Times as Discuz! X prints them, turned into aware datetimes.

Discuz renders a post time with ``dgmdate($dateline, 'u')`` (docs/discuz.md §1.5): the exact
``Y-n-j H:i:s`` for older posts, and for recent ones a relative phrase (``3&nbsp;分钟前``,
``半小时前``, ``昨天&nbsp;21:05``, ``5&nbsp;天前``) wrapped in ``<span title="Y-n-j H:i:s">``.
The title is exact and always preferred; a relative phrase without it is resolved against
``now`` (the time the page was served), which is only as precise as the phrase:

* ``N 秒前`` / ``N 分钟前`` / ``N 小时前`` / ``半小时前`` -> ``now`` minus that amount (Discuz
  truncates, so the real time is up to one unit earlier);
* ``昨天 HH:MM`` / ``前天 HH:MM`` -> that minute one / two days before ``now``'s date;
* ``N 天前`` -> 00:00 of the day N days before ``now``'s date (the date is exact, the time of
  day is not shown by Discuz at all).

Times are wall-clock times in the viewing account's zone, so they are read in ``tz``.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo

from parsers.lazyre import LazyPattern
from parsers.records import EditNote

__all__ = ["parse_discuz_time", "parse_edit_note"]

# Y-n-j H:i[:s]; a site may change `dateformat`, so also accept / . and 年月日 separators.
_ABSOLUTE = re.compile(
    r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?"
    r"(?:\s*(\d{1,2})\s*[:：]\s*(\d{1,2})(?:\s*[:：]\s*(\d{1,2}))?)?"
)
#: relative times and edit notes: compiled when a page shows one
_AGO = LazyPattern(r"(\d+)\s*(秒|分钟|小时|天)\s*前")
_DAY_BEFORE = LazyPattern(r"(昨天|前天)\s*(\d{1,2})\s*[:：]\s*(\d{1,2})")
_EDIT_NOTE = LazyPattern(
    r"本帖最后由\s*(.+?)\s*于\s*"
    r"(\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}\s*日?\s*\d{1,2}\s*[:：]\s*\d{1,2}"
    r"(?:\s*[:：]\s*\d{1,2})?)\s*编辑"
)
_UNIT = {"秒": timedelta(seconds=1), "分钟": timedelta(minutes=1), "小时": timedelta(hours=1)}


def _clean(text: str) -> str:
    return text.replace("&nbsp;", " ").replace("\xa0", " ").replace("发表于", " ").strip()


def _in_tz(now: datetime, tz: tzinfo) -> datetime:
    return now.astimezone(tz) if now.tzinfo is not None else now.replace(tzinfo=tz)


def _absolute(text: str, tz: tzinfo) -> datetime | None:
    match = _ABSOLUTE.search(text)
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(g) if g else 0 for g in match.groups())
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=tz)
    except ValueError as exc:
        raise ValueError(f"时间数值不合法：{match.group(0)}") from exc


def parse_discuz_time(
    text: str, *, tz: tzinfo, now: datetime, title: str | None = None
) -> datetime:
    """Parse a Discuz post time (``发表于 …`` text, optionally with its ``title``) in ``tz``.

    Raises ``ValueError`` (message in Chinese) when neither form can be read.
    """
    if title:
        exact = _absolute(_clean(title), tz)
        if exact is not None:
            return exact
    cleaned = _clean(text)
    exact = _absolute(cleaned, tz)
    if exact is not None:
        return exact
    current = _in_tz(now, tz)
    if "刚刚" in cleaned:
        return current
    if "半小时前" in cleaned:
        return current - timedelta(minutes=30)
    match = _DAY_BEFORE.search(cleaned)
    if match is not None:
        back = 1 if match.group(1) == "昨天" else 2
        hour, minute = int(match.group(2)), int(match.group(3))
        if hour > 23 or minute > 59:
            raise ValueError(f"时间数值不合法：{match.group(0)}")
        day = current.date() - timedelta(days=back)
        return datetime.combine(day, time(hour, minute), tzinfo=tz)
    match = _AGO.search(cleaned)
    if match is not None:
        amount, unit = int(match.group(1)), match.group(2)
        try:
            if unit == "天":
                that_day: date = current.date() - timedelta(days=amount)
                return datetime.combine(that_day, time(0, 0), tzinfo=tz)
            return current - amount * _UNIT[unit]
        except OverflowError as exc:
            raise ValueError(f"时间数值不合法：{match.group(0)}") from exc
    raise ValueError(f"无法识别的发帖时间：{text.strip()[:40]!r}")


def parse_edit_note(text: str, tz: tzinfo) -> EditNote | None:
    """Read ``本帖最后由 {editor} 于 {Y-n-j H:i} 编辑``; None when the text holds no such note."""
    match = _EDIT_NOTE.search(text.replace("&nbsp;", " ").replace("\xa0", " "))
    if match is None:
        return None
    try:
        edited_at = _absolute(match.group(2), tz)
    except ValueError:
        return None
    if edited_at is None:  # pragma: no cover - the pattern guarantees a date
        return None
    return EditNote(editor=match.group(1), edited_at=edited_at)
