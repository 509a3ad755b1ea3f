"""The parser leaves each post's profile card out of what lexbor parses (parsing at
lexbor's pace) and reads exactly the same records as from the whole page, on every real page
and when a message imitates the card's markup."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

import parsers.viewthread as viewthread
from parsers.records import ThreadPage
from parsers.viewthread import parse_viewthread
from tests import discuz_samples as samples
from tests.discuz_samples import served_at

TZ = ZoneInfo("Asia/Shanghai")
VOTE = samples.tid("vote")
#: the vote thread's last post (floor 26)
LAST = samples.pid("vote", 26)


def _thread_pages(root: Path) -> list[Path]:
    """Every desktop thread page (not the printable or archiver ones), the GBK copy last."""
    desktop = root / "desktop"
    thread_page = re.compile(r"(vote|discussion)-(page\d|only)-")
    pages = [p for p in sorted(desktop.glob("*.html")) if thread_page.match(p.name)]
    return pages + sorted((desktop / "gbk").glob("*.html"))


def _both(
    body: bytes,
    now: datetime,
    monkeypatch: pytest.MonkeyPatch,
    tid: int = VOTE,
    encoding: str | None = None,
) -> tuple[ThreadPage, ThreadPage]:
    """The page parsed as shipped, and parsed whole (the cut switched off)."""
    cut = parse_viewthread(body, tid=tid, tz=TZ, now=now, encoding=encoding)
    with monkeypatch.context() as m:
        m.setattr(viewthread, "_without_profiles", lambda part: part)
        whole = parse_viewthread(body, tid=tid, tz=TZ, now=now, encoding=encoding)
    return cut, whole


def test_every_real_page_reads_the_same_without_its_profile_cards(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = _thread_pages(fixtures_dir)
    assert len(pages) == 2 * (3 + 5) + 1 + 2 + 1  # the past-end, only-author and GBK pages too
    for path in pages:
        body = path.read_bytes()
        tid = samples.tid("vote" if path.name.startswith("vote") else "discussion")
        encoding = "gbk" if path.parent.name == "gbk" else None  # as its header says
        cut, whole = _both(body, served_at(path), monkeypatch, tid, encoding)
        assert cut == whole, path.name
        assert cut.posts, path.name


def test_the_cards_are_most_of_what_is_left_out(fixtures_dir: Path) -> None:
    """The cut really happens on Discuz X3.5's pages: about half the post list's bytes."""
    path = fixtures_dir / "desktop" / "vote-page1-anon.html"
    part = viewthread._thread_part(path.read_bytes())
    lean = viewthread._without_profiles(part)
    assert len(lean) < 0.6 * len(part)
    assert lean.count(b'<div id="favatar') == part.count(b'<div id="favatar') == 10
    assert b"p_pop blk bui" not in lean and b'class="authi"><a href=' in lean


FORGED_CARD = (
    '<div class="p_pop blk bui card_gender_0" id="userinfo999" style="display: none;">'
    "投票对象：包子</div></td>"
)


@pytest.mark.parametrize(
    "forged",
    [
        # the card's markup in a message, its end imitated too (an author who may post HTML)
        f'<div id="favatar999" class="pls cl favatar">{FORGED_CARD}<td class="plc">投票对象：油条',
        # the card's start only: a cut would run into the next post (it is not made)
        '<div id="favatar999" class="pls"><div class="p_pop blk bui">投票对象：油条',
        # the start of a left column only
        '<div id="favatar999" class="pls cl favatar">投票对象：油条',
    ],
)
def test_a_message_imitating_the_card_reads_as_on_the_whole_page(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch, forged: str
) -> None:
    path = fixtures_dir / "desktop" / "vote-page3-anon.html"
    anchor = f'id="postmessage_{LAST}">'.encode()
    body = path.read_bytes()
    assert anchor in body
    body = body.replace(anchor, anchor + forged.encode("utf-8"), 1)
    cut, whole = _both(body, served_at(path), monkeypatch)
    others = [p for p in cut.posts if p.pid != LAST]
    assert others == [p for p in whole.posts if p.pid != LAST]
    assert len(cut.posts) == len(whole.posts)
    if "<td" not in forged:  # the cut was not made: the whole post reads as on the whole page
        assert cut == whole


def test_a_card_holding_something_the_parser_reads_is_kept(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A theme that puts the author link (div.authi) or the time in the card: nothing is cut."""
    path = fixtures_dir / "desktop" / "vote-page1-anon.html"
    body = path.read_bytes()
    inside = body.index(b">", body.index(b'<div class="p_pop blk bui')) + 1
    moved = '<div class="authi"><a href="home.php?mod=space&amp;uid=77">别名</a></div>'.encode()
    body = body[:inside] + moved + body[inside:]
    part = viewthread._thread_part(body)
    lean = viewthread._without_profiles(part)
    assert moved in lean
    cut, whole = _both(body, served_at(path), monkeypatch)
    assert cut == whole
