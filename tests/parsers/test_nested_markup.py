"""Deeply nested markup (800 nested ``[align]`` in 10 posts took 4 s a page).

``[align=center]`` renders as ``<div align="center">`` (docs/discuz.md §3.1 table); nesting it is
legal BBCode, so a player can post it. What is checked here:

* the work of a parse grows linearly with the depth: the number of Python lines the parsers
  execute (counted with ``sys.settrace``, deterministic, no clock) at most doubles, within 10 %,
  when the depth doubles (a walk that re-reads each nested element's text is quadratic);
* a depth of 5,000 parses with the recursion limit barely above the caller's depth: the walk
  keeps its own stack;
* the records are unchanged: every mark's text is its element's own text, the post's text is the
  text a reader sees, and the other posts of a real page read exactly as before;
* a hostile message (text at every one of thousands of levels, so that the marks' texts would
  add up to depth² characters) stays bounded, and its hidden text is still wholly distrusted.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser, LexborNode

import parsers
from parsers.mobile import parse_mobile_viewthread
from parsers.records import Mark, MarkKind, Post, ThreadPage
from parsers.viewthread import (
    MARK_TEXT_BUDGET,
    _normalise,
    _TextSink,
    extract_message,
    parse_viewthread,
)
from tests import discuz_samples as samples
from tests.discuz_samples import served_at

TZ = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 11, 29, 13, 0, 0, tzinfo=UTC)
VOTE = "投票对象：油条"
ALIGN_OPEN, ALIGN_CLOSE = '<div align="center">', "</div>"
PARSERS_DIR = str(Path(parsers.__file__).resolve().parent)


# --------------------------------------------------------------------------- pages


def nested(depth: int, inner: str = VOTE, *, every_level: str = "") -> str:
    """``[align=center]`` nested ``depth`` times around ``inner``, as Discuz renders it;
    ``every_level`` puts text (numbered) in front of each level's child."""
    opens = "".join(
        ALIGN_OPEN + (f"{every_level}{level}" if every_level else "") for level in range(depth)
    )
    return opens + inner + ALIGN_CLOSE * depth


def desktop_page(messages: list[str]) -> bytes:
    """A thread page with the X3.5 post structure (viewthread_node.htm), one post a message."""
    posts = []
    for n, message in enumerate(messages):
        pid = 1000 + n
        posts.append(
            f'<div id="post_{pid}"><table id="pid{pid}" class="plhin" summary="pid{pid}">'
            f'<tr><td class="pls"><div class="pi"><div class="authi">'
            f'<a href="home.php?mod=space&amp;uid={10 + n}" class="xw1">玩家{n}</a>'
            f'</div></div></td><td class="plc"><div class="pi"><strong>'
            f'<a href="forum.php?mod=redirect&amp;goto=findpost&amp;ptid=4&amp;pid={pid}" '
            f'id="postnum{pid}"><em>{n + 1}</em><sup>#</sup></a></strong>'
            f'<div class="pti"><div class="authi"><em id="authorposton{pid}">发表于 '
            f'<span title="2026-11-29 20:{n:02d}:00">2026-11-29 20:{n:02d}</span></em>'
            f'</div></div></div><div class="pct"><div class="pcb"><div class="t_fsz">'
            f'<table cellspacing="0" cellpadding="0"><tr><td class="t_f" '
            f'id="postmessage_{pid}">{message}</td></tr></table></div></div></div>'
            f"</td></tr></table></div>"
        )
    return (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head><body>'
        '<div id="postlist" class="pl bm">' + "".join(posts) + "</div></body></html>"
    ).encode()


def mobile_answer(messages: list[str]) -> bytes:
    postlist = [
        {
            "pid": str(1000 + n),
            "author": f"玩家{n}",
            "authorid": str(10 + n),
            "dbdateline": str(1795000000 + n),
            "number": str(n + 1),
            "message": message,
        }
        for n, message in enumerate(messages)
    ]
    variables = {"ppp": "10", "thread": {"replies": str(len(messages) - 1)}, "postlist": postlist}
    return json.dumps({"Version": "4", "Variables": variables}, ensure_ascii=False).encode()


def parse_desktop(messages: list[str]) -> ThreadPage:
    return parse_viewthread(desktop_page(messages), tid=4, tz=TZ, now=NOW)


def parse_mobile(messages: list[str]) -> ThreadPage:
    return parse_mobile_viewthread(mobile_answer(messages), tid=4, tz=TZ, page=1)


# --------------------------------------------------------------------------- work measure


def lines_run(work: Callable[[], Any]) -> tuple[int, Any]:
    """(Python lines executed inside the ``parsers`` package, the result of ``work()``)."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename.startswith(PARSERS_DIR):
            return local
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        result = work()
    finally:
        sys.settrace(previous)
    return count, result


def assert_linear(work_by_depth: dict[int, int]) -> None:
    depths = sorted(work_by_depth)
    for small, big in itertools.pairwise(depths):
        assert big == 2 * small
        assert work_by_depth[big] <= 2.2 * work_by_depth[small], work_by_depth


# --------------------------------------------------------------------------- linear work

DEPTHS = (100, 200, 400, 800)


@pytest.mark.parametrize("source", ["desktop", "mobile"])
def test_work_grows_linearly_with_the_nesting_depth(source: str) -> None:
    """10 posts of ``depth`` nested [align] (the issue's page): 800 levels cost at most 2.2 times
    400 levels, and so on down to 100 (quadratic work would cost 4 times)."""
    parse = parse_desktop if source == "desktop" else parse_mobile
    work: dict[int, int] = {}
    for depth in DEPTHS:
        work[depth], page = lines_run(lambda depth=depth: parse([nested(depth)] * 10))
        assert len(page.posts) == 10
        for post in page.posts:
            assert post.text == VOTE
            assert post.marks == (Mark(MarkKind.BBCODE, "div", VOTE),) * depth
    assert_linear(work)


def test_work_grows_linearly_with_text_at_every_level_below_the_budget() -> None:
    """Text at every level: each mark holds the text from its level down (quadratic in size, as
    the records are), yet the parser's own line count stays linear."""
    work: dict[int, int] = {}
    for depth in (20, 40, 80, 160):
        work[depth], page = lines_run(
            lambda depth=depth: parse_desktop([nested(depth, every_level="第")] * 10)
        )
        post = page.posts[0]
        levels = [f"第{level}" for level in range(depth)]
        assert post.text == "\n".join(levels) + VOTE  # each [align] block starts a line
        # marks close innermost first; each holds its own level's text and everything inside
        expected = [
            Mark(MarkKind.BBCODE, "div", "\n".join(levels[level:]) + VOTE)
            for level in reversed(range(depth))
        ]
        assert list(post.marks) == expected
    assert_linear(work)


# --------------------------------------------------------------------------- no recursion


def _stack_depth() -> int:
    frame: FrameType | None = sys._getframe()
    depth = 0
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


@pytest.mark.parametrize(
    ("opening", "closing"),
    [
        (ALIGN_OPEN, ALIGN_CLOSE),
        ('<font color="red">', "</font>"),
        ("<ul><li>", "</li></ul>"),
        ("<strong>", "</strong>"),
    ],
)
def test_depth_5000_parses_without_recursion(opening: str, closing: str) -> None:
    """The walk keeps its own stack: 5,000 levels parse with 60 frames of head room."""
    message = opening * 5000 + VOTE + closing * 5000
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + 60)
    try:
        desktop = parse_desktop([message, "第二帖"])
        mobile = parse_mobile([message, "第二帖"])
    finally:
        sys.setrecursionlimit(limit)
    for page in (desktop, mobile):
        assert [post.text for post in page.posts] == [VOTE, "第二帖"]
        assert page.posts[0].marks[0].text == VOTE  # the innermost element's mark


def test_depth_5000_of_quotes_reads_as_one_quote() -> None:
    message = "<blockquote>" * 5000 + "引用" + "</blockquote>" * 5000 + VOTE
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_stack_depth() + 60)
    try:
        post = parse_desktop([message]).posts[0]
    finally:
        sys.setrecursionlimit(limit)
    assert post.text == VOTE
    assert post.quote_texts == ("引用",)


# --------------------------------------------------------------------------- hostile pages


def test_hostile_nesting_stays_bounded_and_hidden_text_stays_distrusted() -> None:
    """3,000 levels with text at each one, inside white text: the exact marks would hold about
    3000²/2 × 6 characters (27 million). Past MARK_TEXT_BUDGET a mark nested inside an element
    with a mark of its own kind is left out (the outer mark holds its text), so the marks hold
    at most the budget plus a few copies of the text, and the work stays linear."""
    work: dict[int, int] = {}
    posts: dict[int, Post] = {}
    for depth in (1500, 3000):
        message = '<font color="#ffffff">' + nested(depth, every_level="第") + "</font>"
        work[depth], page = lines_run(lambda message=message: parse_desktop([message]))
        posts[depth] = page.posts[0]
    assert_linear(work)
    post = posts[3000]
    assert post.text == "\n".join(f"第{level}" for level in range(3000)) + VOTE
    total = sum(len(mark.text) for mark in post.marks)
    assert total <= MARK_TEXT_BUDGET + 3 * len(post.text)
    # the white text is still wholly marked (this is what the vote reader distrusts)
    # the innermost levels are recorded exactly until the budget is spent; the outer ones are
    # held by the <font>'s own BBCODE mark
    assert post.marks[0] == Mark(MarkKind.BBCODE, "div", "第2999" + VOTE)
    assert post.marks[-2:] == (
        Mark(MarkKind.BBCODE, "font", post.text),
        Mark(MarkKind.HIDDEN_COLOUR, "#ffffff", post.text),
    )
    assert len(post.marks) < 3000


def test_marks_below_the_budget_are_all_kept() -> None:
    """Nested marks of one kind are only left out past the budget: 100 nested red fonts with
    text at each level (about 30,000 characters of marks) give 100 RED marks."""
    message = "".join(f'<font color="red">红{level}' for level in range(100)) + "</font>" * 100
    post = parse_desktop([message]).posts[0]
    red = [mark for mark in post.marks if mark.kind is MarkKind.RED]
    assert len(red) == 100
    assert red[-1].text == post.text and red[0].text == "红99"


# --------------------------------------------------------------------------- same records


def test_nested_posts_leave_the_other_posts_of_a_real_page_unchanged(fixtures_dir: Path) -> None:
    path = fixtures_dir / "desktop" / "vote-page1-anon.html"
    now = served_at(path)
    body = path.read_bytes()
    before = parse_viewthread(body, tid=samples.tid("vote"), tz=TZ, now=now)
    target = before.posts[-1].pid
    cell = f'id="postmessage_{target}">'.encode()
    assert body.count(cell) == 1
    changed = body.replace(cell, cell + nested(800).encode(), 1)
    after = parse_viewthread(changed, tid=samples.tid("vote"), tz=TZ, now=now)
    assert after.posts[:-1] == before.posts[:-1]
    post, was = after.posts[-1], before.posts[-1]
    assert post.text == f"{VOTE}\n\n{was.text}"  # 800 blocks closing: one blank line
    assert post.marks == (Mark(MarkKind.BBCODE, "div", VOTE),) * 800 + was.marks
    assert (post.floor, post.author, post.uid, post.posted_at) == (
        was.floor,
        was.author,
        was.uid,
        was.posted_at,
    )


_PIECES = st.lists(
    st.one_of(
        st.just("\n"),
        st.text(alphabet=st.sampled_from(list("ab 投\t\u3000\xa0\u2028\x1c\r")), max_size=6),
    ),
    max_size=30,
)


@settings(max_examples=400, deadline=None)
@given(pieces=_PIECES)
def test_the_text_sink_is_the_normalised_text_of_every_stretch(pieces: list[str]) -> None:
    """The sink's text of the pieces from any point on equals ``_normalise`` of those pieces
    (line breaks arrive as their own pieces; a text piece's own breaks read as spaces)."""
    sink = _TextSink()
    starts: list[tuple[int, int]] = []  # (piece index, chunk index) before each piece
    for at, piece in enumerate(pieces):
        starts.append((at, len(sink.chunks)))
        if piece == "\n":
            sink.newlines += 1
        else:
            sink.add(piece)
    flat = [p if p == "\n" else p.replace("\r", " ").replace("\n", " ") for p in pieces]
    assert sink.value() == _normalise("".join(flat))
    for at, chunk in starts:
        assert sink.since(chunk) == _normalise("".join(flat[at:])), (pieces, at)


# A small tree of inline and block elements with text and line breaks.
_TAGS = ("b", "i", "font", "div", "p", "li")
_tree: st.SearchStrategy[str] = st.recursive(
    st.sampled_from(["a", "b c", " ", "投票", "<br>", "\u3000", "x\ny", ""]),
    lambda children: st.builds(
        lambda tag, kids: f"<{tag}>{''.join(kids)}</{tag}>",
        st.sampled_from(_TAGS),
        st.lists(children, max_size=4),
    ),
    max_leaves=25,
)


def _reference_text(node: LexborNode) -> str:
    """What an element contributes to the text (text, ``<br>``, line breaks around blocks)."""
    if node.tag == "-text":
        return (node.text_content or "").replace("\r", " ").replace("\n", " ")
    if node.tag == "br":
        return "\n"
    inner = "".join(_reference_text(child) for child in node.iter(include_text=True))
    return f"\n{inner}\n" if node.tag in ("div", "p", "li") else inner


def _reference_marks(node: LexborNode) -> list[tuple[str, str]]:
    """(tag, normalised own text) of every element, innermost first (closing order)."""
    found: list[tuple[str, str]] = []
    for child in node.iter(include_text=False):
        if child.tag == "br":
            continue
        found.extend(_reference_marks(child))
        found.append((child.tag or "", _normalise(_reference_text(child))))
    return found


@settings(max_examples=300, deadline=None)
@given(markup=st.lists(_tree, max_size=4).map("".join))
def test_every_mark_holds_its_own_elements_text(markup: str) -> None:
    body = LexborHTMLParser(markup).body
    assert body is not None
    expected = _reference_marks(body)
    parts = extract_message(LexborHTMLParser(markup).body, TZ)  # type: ignore[arg-type]
    assert [(m.value, m.text) for m in parts.marks] == expected
    assert parts.text == _normalise(_reference_text(body))
