"""A pattern compiled on first use reads exactly as ``re.compile`` does, and costs nothing until
it is used: reading a thread page compiles none of the patterns kept for error pages."""

from __future__ import annotations

import re

import pytest

import parsers.pagecheck
from parsers.lazyre import LazyPattern
from parsers.pagecheck import check_page
from parsers.records import PageError, PageErrorKind


def test_a_lazy_pattern_reads_as_the_compiled_one() -> None:
    text = "发表于 3 分钟前，又 12 分钟前"
    lazy, eager = LazyPattern(r"(\d+)\s*(分钟)\s*前"), re.compile(r"(\d+)\s*(分钟)\s*前")
    assert lazy.search(text).group(0) == eager.search(text).group(0)  # type: ignore[union-attr]
    assert lazy.match(text) is None and eager.match(text) is None
    assert lazy.fullmatch("3 分钟前").groups() == ("3", "分钟")  # type: ignore[union-attr]
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    assert lazy.findall(text) == eager.findall(text) == [("3", "分钟"), ("12", "分钟")]
    assert lazy.sub("#", text) == eager.sub("#", text)
    assert lazy.sub(lambda m: m.group(1), text) == "发表于 3，又 12"
    flagged = LazyPattern(rb"<SCRIPT\b.*?</script>", re.S | re.I)
    assert flagged.sub(b"", b"a<script>\nx</script>b") == b"ab"


def test_a_thread_page_compiles_none_of_the_error_page_patterns(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fresh: list[LazyPattern[str]] = []
    for name, value in list(vars(parsers.pagecheck).items()):
        if isinstance(value, LazyPattern):  # each as not yet used in this process
            fresh.append(LazyPattern(value.pattern, value.flags))
            monkeypatch.setattr(parsers.pagecheck, name, fresh[-1])
    assert len(fresh) >= 5
    check_page('<html><div id="postlist">一楼</div></html>')
    assert [p for p in fresh if p._compiled is not None] == []
    with pytest.raises(PageError) as refused:
        check_page('<div id="messagetext"><p>抱歉，您浏览的太快了</p></div>')
    assert refused.value.kind == PageErrorKind.RATE_LIMITED
    assert any(p._compiled is not None for p in fresh)
