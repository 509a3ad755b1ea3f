"""Name resolution against the roster (parsers.names)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.names import (
    FOLD_FULLWIDTH,
    FOLD_INVISIBLE,
    NameMatch,
    RosterEntry,
    fold_name,
    resolve_name,
)
from parsers.text import name_key

ROSTER = (
    RosterEntry("饺子"),
    RosterEntry("包子"),
    RosterEntry("馄饨"),
    RosterEntry("面条", aliases=("面条君",)),
    RosterEntry("烧卖"),
    RosterEntry("汤圆"),
    RosterEntry("春卷"),
    RosterEntry("油条"),
    RosterEntry("Snow_风"),
)


def test_exact_name() -> None:
    m = resolve_name("饺子", ROSTER)
    assert m == NameMatch(raw="饺子", player="饺子", via="name")
    assert m.ok


def test_alias_the_director_allowed() -> None:
    m = resolve_name("面条君", ROSTER)
    assert (m.player, m.via) == ("面条", "alias")


def test_letter_case_and_surrounding_spaces_are_forgiven() -> None:
    # Discuz usernames are unique regardless of case, so "snow_风" can only be "Snow_风".
    assert resolve_name("snow_风", ROSTER).player == "Snow_风"
    assert resolve_name("  SNOW_风 ", ROSTER).player == "Snow_风"


def test_unknown_name_is_refused_with_nearest_suggestions() -> None:
    # m209.txt:599 投票格式或投票对象有误的票无效。
    m = resolve_name("饺子皮", ROSTER)
    assert m.player is None
    assert m.suggestions[0] == "饺子"
    assert len(m.suggestions) <= 3
    assert m.problem is not None
    assert m.problem.startswith("投票对象有误：「饺子皮」不在名单中")
    assert "最接近" not in m.problem  # a public reason: the hint is the director's note
    assert m.note == "最接近的是：" + "、".join(m.suggestions)


def test_nothing_near_gives_no_suggestion() -> None:
    m = resolve_name("张三丰", ROSTER)
    assert m.player is None and m.suggestions == ()
    assert m.problem == "投票对象有误：「张三丰」不在名单中"


def test_fullwidth_letters_are_not_matched_but_suggested() -> None:
    m = resolve_name("Ｓｎｏｗ_风", ROSTER)
    assert m.player is None
    assert m.suggestions[0] == "Snow_风"
    assert m.problem is not None and "字形相近" in m.problem


def test_zero_width_joiner_inside_a_name_is_not_matched_but_suggested() -> None:
    for raw in ("Snow\u200d_风", "饺\u200b子", "\ufeff包子", "汤\u2060圆"):
        m = resolve_name(raw, ROSTER)
        assert m.player is None, repr(raw)
        assert len(m.suggestions) >= 1
        assert m.problem is not None and "<U+" in m.problem  # the invisible char is shown


def test_traditional_variant_is_not_matched_but_suggested() -> None:
    m = resolve_name("餃子", ROSTER)
    assert m.player is None
    assert m.suggestions[0] == "饺子"
    assert m.problem is not None and "字形相近" in m.problem
    assert resolve_name("餛飩", ROSTER).suggestions[0] == "馄饨"
    assert resolve_name("麵條", ROSTER).suggestions[0] == "面条"


def test_cyrillic_lookalike_is_not_matched_but_suggested() -> None:
    m = resolve_name("Snоw_风", ROSTER)  # Cyrillic о
    assert m.player is None and m.suggestions[0] == "Snow_风"


def test_abstain_is_not_a_name() -> None:
    # m209.txt:601 投弃权票时，须在投票对象中填写“弃权”。
    # The vote parser reads it as an abstention; it never resolves to a player.
    m = resolve_name("弃权", (*ROSTER, RosterEntry("弃权")))
    assert m.player is None
    assert m.problem is not None and "不是玩家名" in m.problem
    m = resolve_name("弃权票", ROSTER)
    assert m.player is None and m.problem is not None and "弃权票须只写“弃权”" in m.problem


def test_empty_name() -> None:
    assert resolve_name("  ", ROSTER).problem == "投票对象有误：投票对象为空"


def test_ambiguous_alias_is_refused() -> None:
    roster = (RosterEntry("饺子", aliases=("小笼",)), RosterEntry("小笼"))
    m = resolve_name("小笼", roster)
    assert m.player is None
    assert m.problem is not None and m.problem.startswith("投票对象有歧义")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=15))
def test_resolution_never_crashes_and_accepts_only_exact_keys(raw: str) -> None:
    m = resolve_name(raw, ROSTER)
    if m.player is not None:
        entry = next(e for e in ROSTER if e.name == m.player)
        assert name_key(raw) in {name_key(s) for s in (entry.name, *entry.aliases)}
        assert m.problem is None
    else:
        assert m.problem
        assert set(m.suggestions) <= {e.name for e in ROSTER}
        assert len(m.suggestions) <= 3


# --- [votes] strict_names = false: the name as the director sees it -------


def test_invisible_characters_are_removed_before_matching_unless_strict() -> None:
    """Zero-width characters, BOM, soft hyphen and variation selectors render as nothing: the
    director reads 「饺子」, so the vote counts for 饺子 — and says it folded (for the flag)."""
    for raw in (
        "饺\u200b子",
        "\ufeff饺子",
        "饺\u00ad子",
        "饺子\ufe0f",
        "汤\u2060圆",
        "Snow\u200d_风",
    ):
        m = resolve_name(raw, ROSTER, strict=False)
        assert m.player is not None and m.folded == (FOLD_INVISIBLE,), repr(raw)
        assert m.problem is None and "不可见字符" in m.note and "<U+" in m.note
        # the strict reading (today's) still refuses it, with its reason
        strict = resolve_name(raw, ROSTER, strict=True)
        assert strict.player is None and strict.problem is not None and "<U+" in strict.problem


def test_fullwidth_letters_and_digits_fold_unless_strict() -> None:
    roster = (*ROSTER, RosterEntry("饺子1号"))
    m = resolve_name("Ｓｎｏｗ_风", roster, strict=False)
    assert (m.player, m.folded, m.folded_zh) == ("Snow_风", (FOLD_FULLWIDTH,), "全角字母/数字")
    assert m.note == "投票对象「Ｓｎｏｗ_风」含全角字母/数字，按「Snow_风」计"
    assert resolve_name("饺子１号", roster, strict=False).player == "饺子1号"
    both = resolve_name("Ｓｎｏｗ\u200b_风", roster, strict=False)
    assert both.player == "Snow_风" and both.folded == (FOLD_INVISIBLE, FOLD_FULLWIDTH)
    assert both.folded_zh == "不可见字符、全角字母/数字"
    assert resolve_name("Ｓｎｏｗ_风", roster, strict=True).player is None
    # an exact match says nothing was folded
    assert resolve_name("Snow_风", roster, strict=False).folded == ()


def test_lookalikes_from_other_scripts_and_variants_are_never_accepted() -> None:
    """Cyrillic / Greek letters and traditional characters are different letters: refused in
    both readings (docs/rulings.md), only suggested."""
    for raw in (
        "Snоw_风",
        "Ｓｎоｗ_风",
        "Snοw_风",
        "餃子",
        "\u202e饺子",
    ):  # Cyrillic о, Greek ο, RLO
        m = resolve_name(raw, ROSTER, strict=False)
        assert m.player is None and m.folded == (), repr(raw)
        assert m.problem is not None and m.suggestions


def test_fold_name_changes_nothing_else() -> None:
    assert fold_name("Ａｂ１\u200b＿") == ("Ab1＿", frozenset({FOLD_INVISIBLE, FOLD_FULLWIDTH}))
    assert fold_name("饺子") == ("饺子", frozenset())
    assert fold_name("\u2800饺子")[0] == "\u2800饺子"  # a blank that takes room is not folded


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=15))
def test_folding_accepts_only_what_reads_the_same(raw: str) -> None:
    m = resolve_name(raw, ROSTER, strict=False)
    if m.player is not None:
        entry = next(e for e in ROSTER if e.name == m.player)
        spellings = (entry.name, *entry.aliases)
        key = name_key(fold_name(raw.strip())[0])
        assert key in {name_key(fold_name(s)[0]) for s in spellings}
        assert bool(m.folded) == (name_key(raw) not in {name_key(s) for s in spellings})
    strict = resolve_name(raw, ROSTER, strict=True)
    if strict.player is not None:
        assert m.player == strict.player and m.folded == ()
