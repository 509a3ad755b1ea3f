"""Text normalisation (parsers.text)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.text import (
    fold_lookalikes,
    is_invisible,
    loose_key,
    name_key,
    normalize,
    normalize_lines,
    normalize_mapped,
    similar_names,
    visible_repr,
)


def test_fullwidth_and_halfwidth_punctuation_read_alike() -> None:
    # m209.txt:600 特别地，投票格式中标点符号不区分全半角。
    assert normalize("投票对象：饺子") == normalize("投票对象:饺子") == "投票对象:饺子"
    assert normalize("好吗？") == normalize("好吗?")
    assert normalize("（理由）") == "(理由)"
    assert normalize("“引号”") == '"引号"'


def test_invisible_characters_are_removed() -> None:
    for ch in "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad":
        assert normalize(f"饺{ch}子") == "饺子", hex(ord(ch))
    for ch in "\ufe0f\U000e0101\u202e\u2066\u034f\u3164":
        assert normalize(f"饺{ch}子") == "饺子", hex(ord(ch))
    assert is_invisible("\u200d") and not is_invisible("饺") and not is_invisible("\n")


def test_whitespace_runs_collapse_and_strip() -> None:
    assert normalize("  投票对象：\u3000 饺子 \t\n 理由 ") == "投票对象: 饺子 理由"
    assert normalize_lines(" a  b \n\n c ") == "a b\n\nc"


def test_name_key_is_strict() -> None:
    assert name_key(" Snow_风 ") == name_key("snow_风")
    assert name_key("Ｓｎｏｗ_风") != name_key("Snow_风")  # full-width letters
    assert name_key("Snow\u200d_风") != name_key("Snow_风")  # zero-width joiner
    assert name_key("餃子") != name_key("饺子")  # traditional variant
    assert name_key("e\u0301") == name_key("é")  # canonical equivalence is the same text


def test_lookalike_folding_for_suggestions() -> None:
    assert loose_key("Ｓｎｏｗ_风") == loose_key("Snow_风")
    assert loose_key("Snow\u200d_風") == loose_key("snow_风")
    assert fold_lookalikes("餃子") == "饺子"
    assert similar_names("餃子", ["包子", "饺子", "汤圆"]) == ("饺子", "包子")
    assert similar_names("xyz", ["饺子", "包子"]) == ()
    assert len(similar_names("子", ["饺子", "包子", "子", "子子"])) == 3


def test_visible_repr_shows_invisible_characters() -> None:
    assert visible_repr("Snow\u200d_风") == "Snow<U+200D>_风"


def test_mapped_text_points_back_to_the_raw_characters() -> None:
    raw = "  投票对象：\u200bＳｎｏｗ  _风\r\n投票理由：x"
    m = normalize_mapped(raw)
    assert m.text == "投票对象:Snow _风\n投票理由:x"
    start = m.text.index("Snow")
    assert m.raw_slice(start, start + 4) == "Ｓｎｏｗ"


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_normalize_is_idempotent(s: str) -> None:
    once = normalize(s)
    assert normalize(once) == once
    assert "\n" not in once and once == once.strip()


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_mapped_indices_are_ordered_and_in_range(s: str) -> None:
    m = normalize_mapped(s)
    assert len(m.index) == len(m.text)
    assert all(0 <= i < len(s) for i in m.index)
    assert list(m.index) == sorted(m.index)
    assert not any(is_invisible(c) for c in m.text)
