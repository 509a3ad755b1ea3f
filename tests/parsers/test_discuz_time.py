"""Discuz post times and edit notes (parsers.discuz_time).

Formats: docs/discuz.md §1.5 (dgmdate 'u': exact ``Y-n-j H:i:s`` in a title, relative text
shown) and §3.4 (``本帖最后由 X 于 Y-n-j H:i 编辑``). The forum's zone is the game's zone
(Asia/Shanghai).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.discuz_time import parse_discuz_time, parse_edit_note
from parsers.records import EditNote

TZ = ZoneInfo("Asia/Shanghai")
# The fixtures' capture: Sun, 29 Nov 2026 13:07:54 GMT = 21:07:54 in the forum's zone.
NOW = datetime(2026, 11, 29, 13, 7, 54, tzinfo=UTC)


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=TZ)


def test_title_is_the_exact_time_and_wins_over_the_relative_text() -> None:
    # real markup (pid 86):
    # <em id="authorposton86">发表于 <span title="2026-11-29 21:04:43">3&nbsp;分钟前</span></em>
    got = parse_discuz_time("发表于 3\xa0分钟前", tz=TZ, now=NOW, title="2026-11-29 21:04:43")
    assert got == at(2026, 11, 29, 21, 4, 43)
    assert got.utcoffset() == timedelta(hours=8)


def test_old_posts_show_the_plain_date_without_padding() -> None:
    assert parse_discuz_time("发表于 2023-5-21 08:03:07", tz=TZ, now=NOW) == at(
        2023, 5, 21, 8, 3, 7
    )
    assert parse_discuz_time("2023-5-1 8:03", tz=TZ, now=NOW) == at(2023, 5, 1, 8, 3)


def test_other_date_formats_a_site_may_configure() -> None:
    assert parse_discuz_time("2026/11/29 21:04:43", tz=TZ, now=NOW) == at(2026, 11, 29, 21, 4, 43)
    assert parse_discuz_time("2026年11月29日 21:04", tz=TZ, now=NOW) == at(2026, 11, 29, 21, 4)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("刚刚", at(2026, 11, 29, 21, 7, 54)),
        ("12&nbsp;秒前", at(2026, 11, 29, 21, 7, 42)),
        ("3\xa0分钟前", at(2026, 11, 29, 21, 4, 54)),
        ("半小时前", at(2026, 11, 29, 20, 37, 54)),
        ("2 小时前", at(2026, 11, 29, 19, 7, 54)),
        ("昨天\xa021:05", at(2026, 11, 28, 21, 5)),
        ("前天 08:00", at(2026, 11, 27, 8, 0)),
        ("5 天前", at(2026, 11, 24, 0, 0)),  # the day is exact, the time is not shown: 00:00
    ],
)
def test_relative_times_without_a_title_resolve_against_now(text: str, expected: datetime) -> None:
    assert parse_discuz_time(f"发表于 {text}", tz=TZ, now=NOW) == expected


def test_a_naive_now_is_read_in_the_forum_zone() -> None:
    naive = datetime(2026, 11, 29, 0, 30)
    assert parse_discuz_time("昨天 23:59", tz=TZ, now=naive) == at(2026, 11, 28, 23, 59)


def test_yesterday_is_the_forum_zone_day_not_the_utc_day() -> None:
    # 00:30 in Shanghai is still the previous day in UTC.
    now = datetime(2026, 11, 29, 16, 30, tzinfo=UTC)  # 2026-11-30 00:30 +08:00
    assert parse_discuz_time("昨天 23:59", tz=TZ, now=now) == at(2026, 11, 29, 23, 59)


@pytest.mark.parametrize("text", ["", "发表于", "很久以前", "2026-13-40 25:61:00", "昨天 25:00"])
def test_unreadable_times_raise_a_chinese_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="时间"):
        parse_discuz_time(text, tz=TZ, now=NOW)


def test_a_broken_title_falls_back_to_the_text() -> None:
    got = parse_discuz_time("2026-11-29 21:04:43", tz=TZ, now=NOW, title="不是时间")
    assert got == at(2026, 11, 29, 21, 4, 43)


def test_edit_note_as_discuz_writes_it() -> None:
    # real page, pid 85: <i class="pstatus"> 本帖最后由 Snow_风 于 2026-11-29 21:06 编辑 </i>
    note = parse_edit_note(" 本帖最后由 Snow_风 于 2026-11-29 21:06 编辑 ", TZ)
    assert note == EditNote(editor="Snow_风", edited_at=at(2026, 11, 29, 21, 6))


def test_edit_note_by_a_moderator_with_a_spaced_name() -> None:
    note = parse_edit_note("本帖最后由 版主 小明 于 2024-3-1 9:10 编辑", TZ)
    assert note is not None
    assert note.editor == "版主 小明"
    assert note.edited_at == at(2024, 3, 1, 9, 10)


@pytest.mark.parametrize("text", ["", "投票对象：包子", "本帖最后由 X 于 昨天 编辑"])
def test_no_edit_note(text: str) -> None:
    assert parse_edit_note(text, TZ) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60), st.one_of(st.none(), st.text(max_size=30)))
def test_any_text_gives_an_aware_time_or_a_value_error(text: str, title: str | None) -> None:
    try:
        got = parse_discuz_time(text, tz=TZ, now=NOW, title=title)
    except ValueError:
        return
    assert got.tzinfo is not None


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_gives_an_edit_note_or_none(text: str) -> None:
    note = parse_edit_note(text, TZ)
    assert note is None or note.edited_at.tzinfo is not None
