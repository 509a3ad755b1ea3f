"""The vote / change-vote line parser (parsers.votes)."""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.names import RosterEntry, resolve_name
from parsers.records import MarkKind
from parsers.votes import CARD_TARGET, TargetRule, VoteKind, card_number, parse_vote
from tests import discuz_samples as samples
from tests.discuz_samples import SAMPLES, served_at

# --- the forms the rule texts give -----------------------------------------------------------


def test_standard_vote_with_reason_on_next_line() -> None:
    # m209.txt:602-604 【投票格式】 / 投票对象：饺子 / 投票理由：饺子好吃
    r = parse_vote("投票对象：饺子\n投票理由：饺子好吃")
    assert r.kind is VoteKind.VOTE
    assert r.target_raw == "饺子"
    assert r.reason == "饺子好吃"
    assert r.line == "投票对象：饺子"
    assert r.problem is None and r.valid


def test_vote_without_reason_line_m135() -> None:
    # m135.txt:207-208 【投票格式】 / 投票对象：饺子 (no reason line in this rule set)
    r = parse_vote("投票对象：饺子")
    assert r.kind is VoteKind.VOTE and r.target_raw == "饺子" and r.reason == ""


def test_halfwidth_colon_is_the_same() -> None:
    # m209.txt:600 特别地，投票格式中标点符号不区分全半角。
    for text in ("投票对象:饺子", "投票对象：饺子", "投票对象﹕饺子", "投票对象 ： 饺子"):
        r = parse_vote(text)
        assert (r.kind, r.target_raw) == (VoteKind.VOTE, "饺子"), text


def test_reason_on_the_same_line() -> None:
    # m209.txt:600 投票对象与投票理由之间可以不换行。
    for text in (
        "投票对象：面条 投票理由：面条前后矛盾",
        "投票对象：面条投票理由：面条前后矛盾",
        "投票对象：面条，投票理由：面条前后矛盾",
        "投票对象:面条 理由:面条前后矛盾",
    ):
        r = parse_vote(text)
        assert (r.kind, r.target_raw, r.reason) == (VoteKind.VOTE, "面条", "面条前后矛盾"), text


def test_change_vote() -> None:
    # m209.txt:605-607 【改票格式】改票需回复原投票楼层 / 改票对象：包子 / 改票理由：包子也好吃
    r = parse_vote("改票对象：包子\n改票理由：包子也好吃")
    assert r.kind is VoteKind.CHANGE
    assert r.target_raw == "包子" and r.reason == "包子也好吃"


def test_abstain_in_the_target() -> None:
    # m209.txt:601 投弃权票时，须在投票对象中填写“弃权”。
    r = parse_vote("投票对象：弃权\n投票理由：信息不足")
    assert r.kind is VoteKind.ABSTAIN and r.is_abstain and not r.bare


def test_bare_abstain_line_is_read_as_abstain_but_marked_bare() -> None:
    # m209.txt:601 须在投票对象中填写“弃权” — a bare line is kept as ABSTAIN, marked ``bare`` so a
    # strict table can refuse it, with a note for the director.
    r = parse_vote("弃权")
    assert r.kind is VoteKind.ABSTAIN and r.bare
    assert any("弃权" in n for n in r.notes)
    assert parse_vote("【弃权】").kind is VoteKind.ABSTAIN
    # 弃权 inside a sentence or a reason is not an abstention
    assert parse_vote("我想弃权，但还是算了").kind is VoteKind.NONE


def test_change_to_abstain_stays_a_change() -> None:
    r = parse_vote("改票对象：弃权")
    assert r.kind is VoteKind.CHANGE and r.is_abstain


def test_extra_spaces_around_target_are_stripped() -> None:
    r = parse_vote("投票对象：  饺子  \n投票理由：  多余空格测试")
    assert r.target_raw == "饺子" and r.reason == "多余空格测试"
    r = parse_vote("投票对象：\u3000饺子\u3000")
    assert r.target_raw == "饺子"


def test_decorated_label() -> None:
    assert parse_vote("【投票对象】：包子").target_raw == "包子"
    assert parse_vote("1. 投票对象：包子").target_raw == "包子"


# --- invalid forms (m209.txt:599 投票格式或投票对象有误的票无效) ---------------------------------


@pytest.mark.parametrize(
    ("text", "label", "proper"),
    [
        ("投票给：包子\n理由：感觉不对", "投票给", "投票对象"),
        ("投给：包子", "投给", "投票对象"),
        ("投票:包子", "投票", "投票对象"),
        ("票投：包子", "票投", "投票对象"),
        ("投票对像：包子", "投票对像", "投票对象"),
        ("改票给：包子", "改票给", "改票对象"),
    ],
)
def test_misspelled_labels_are_invalid_with_the_reason(text: str, label: str, proper: str) -> None:
    # m209.txt:599 请严格依照投票格式或改票格式进行投票。投票格式或投票对象有误的票无效。
    r = parse_vote(text)
    assert r.kind is VoteKind.INVALID
    assert r.label == label
    assert r.problem is not None
    assert r.problem.startswith(f"投票格式错误：应为“{proper}：名字”")
    assert f"写成了“{label}：包子”" in r.problem


def test_missing_colon_is_invalid() -> None:
    r = parse_vote("投票对象 包子")
    assert r.kind is VoteKind.INVALID
    assert r.problem is not None and "缺少冒号" in r.problem


def test_empty_target_is_invalid() -> None:
    r = parse_vote("投票对象：\n投票理由：稍后再说")
    assert r.kind is VoteKind.INVALID and r.problem == "投票对象为空"
    assert parse_vote("改票对象：").problem == "改票对象为空"


def test_two_vote_lines_make_the_post_invalid() -> None:
    # m209.txt:596 每名存活角色每个讨论日限投一票 — one post cannot carry two votes.
    for text in (
        "投票对象：包子\n投票对象：饺子",
        "投票对象：包子\n改票对象：饺子",
        "投票对象：包子 改票对象：饺子",
        "投票对象：包子\n投给：饺子",
        "投票对象：包子\n弃权",
    ):
        r = parse_vote(text)
        assert r.kind is VoteKind.INVALID, text
        assert r.problem is not None and r.problem.startswith("一帖内有多条投票"), text


def test_labels_inside_a_reason_are_not_vote_lines() -> None:
    r = parse_vote("投票对象：包子\n投票理由：他昨天的投票对象：饺子很奇怪")
    assert (r.kind, r.target_raw) == (VoteKind.VOTE, "包子")


def test_label_in_the_middle_of_a_sentence() -> None:
    # Alone it is an invalid vote with a reason; beside a proper vote line it is ignored.
    for text in ("我觉得投票对象：油条", "我的投票对象：油条"):
        r = parse_vote(text)
        assert r.kind is VoteKind.INVALID, text
        assert r.problem is not None and "须写在行首" in r.problem, text
    for text in (
        "投票对象：包子\n我觉得应该投票对象:油条才对",
        "投票对象：包子\n他们投票对象：油条",
    ):
        r = parse_vote(text)
        assert (r.kind, r.target_raw) == (VoteKind.VOTE, "包子"), text
        assert any("未当作投票行" in n for n in r.notes)


def test_lead_in_before_the_label_still_reads_as_a_vote() -> None:
    # The sample vote thread's floor 25 "截止后补票：投票对象：油条": read as a vote (the engine
    # rejects it as late).
    r = parse_vote("截止后补票：投票对象：油条")
    assert (r.kind, r.target_raw) == (VoteKind.VOTE, "油条")
    assert r.lead_in == "截止后补票："
    assert any("截止后补票" in n for n in r.notes)
    assert parse_vote("补票：投票对象：油条").kind is VoteKind.VOTE


def test_notices_and_chat_are_not_votes() -> None:
    for text in (
        "【导演】提醒：投票截止时间为今晚22:00，请严格按格式投票，格式不对的票不计。",
        "【导演】投票已截止，请等待结果公布。",
        "包子你投我没道理吧，我昨天明明站边好人。",
        "票数统计：包子3票",
        "投票帖在哪里？",
        "",
    ):
        assert parse_vote(text).kind is VoteKind.NONE, text


# --- hidden text --------------------------------------------------------------------------------


def test_vote_in_hidden_text_is_not_trusted() -> None:
    # The sample vote thread's floor 15: "[color=white]投票对象：油条[/color]"
    r = parse_vote("大家好好想想再投。\n投票对象：油条", distrusted=["投票对象：油条"])
    assert r.kind is VoteKind.INVALID and r.hidden
    assert r.target_raw == "油条"
    assert r.problem == "投票行在隐藏文字中（白字/小字/隐藏）不予采信"


def test_hidden_target_only_is_enough_to_distrust() -> None:
    r = parse_vote("投票对象：油条", distrusted=["油条"])
    assert r.kind is VoteKind.INVALID and r.hidden


def test_hidden_extra_line_beside_a_visible_vote() -> None:
    r = parse_vote("投票对象：包子\n改票对象：油条", distrusted=["改票对象：油条"])
    assert (r.kind, r.target_raw, r.hidden) == (VoteKind.VOTE, "包子", False)
    assert any("隐藏文字" in n for n in r.notes)


def test_hidden_reason_does_not_matter() -> None:
    r = parse_vote("投票对象：包子\n投票理由：悄悄话", distrusted=["悄悄话"])
    assert r.kind is VoteKind.VOTE and not r.hidden


def test_exact_hidden_spans() -> None:
    text = "投票对象：包子\n投票理由：包子是狼"
    # Searching for "包子" distrusts both occurrences; an exact span distrusts only the reason.
    assert parse_vote(text, distrusted=["包子"]).hidden
    start = text.rindex("包子")
    r = parse_vote(text, distrusted_spans=[(start, start + 2)])
    assert r.kind is VoteKind.VOTE and not r.hidden


# --- names keep their exact characters ------------------------------------------------------------


def test_target_raw_keeps_lookalike_characters() -> None:
    assert parse_vote("投票对象：Ｓｎｏｗ_风").target_raw == "Ｓｎｏｗ_风"
    assert parse_vote("投票对象：Ｓｎｏｗ_风").target == "Snow_风"
    assert parse_vote("投票对象：\u200b包子").target_raw == "\u200b包子"
    assert parse_vote("投票对象：Snow\u200d_风 投票理由：x").target_raw == "Snow\u200d_风"


# --- nizhuan target shape -----------------------------------------------------------------------


def test_nizhuan_card_target() -> None:
    # nizhuan.txt:195-197 【投票格式】 / 投票对象：傻树的第一身份 / 投票理由：砍
    r = parse_vote("投票对象：傻树的第一身份\n投票理由：砍", target_pattern=CARD_TARGET)
    assert (r.kind, r.target_raw, r.card_index, r.reason) == (VoteKind.VOTE, "傻树", 1, "砍")
    # nizhuan.txt:199-201 【改票格式】 / 改票对象：不见的第二身份 / 改票理由：吉祥猪
    r = parse_vote("改票对象：不见的第二身份\n改票理由：吉祥猪", target_pattern=CARD_TARGET)
    assert (r.kind, r.target_raw, r.card_index) == (VoteKind.CHANGE, "不见", 2)
    r = parse_vote("投票对象：Snow_风的第2身份", target_pattern=CARD_TARGET)
    assert (r.target_raw, r.card_index) == ("Snow_风", 2)
    r = parse_vote("投票对象：傻树第１身份", target_pattern=CARD_TARGET)
    assert (r.target_raw, r.card_index) == ("傻树", 1)


def test_nizhuan_target_without_card_is_invalid_when_required() -> None:
    r = parse_vote("投票对象：傻树", target_pattern=CARD_TARGET)
    assert r.kind is VoteKind.INVALID
    assert r.problem is not None and "傻树的第一身份" in r.problem
    # abstaining needs no card
    assert parse_vote("投票对象：弃权", target_pattern=CARD_TARGET).kind is VoteKind.ABSTAIN
    # an optional shape leaves a plain name alone
    optional = TargetRule(CARD_TARGET.pattern, required=False)
    r = parse_vote("投票对象：傻树", target_pattern=optional)
    assert (r.kind, r.target_raw, r.card_index) == (VoteKind.VOTE, "傻树", None)
    r = parse_vote(
        "投票对象：傻树的第一身份", target_pattern=re.compile(r"(?P<name>.+?)的第(?P<card>.)身份")
    )
    assert (r.target_raw, r.card_index) == ("傻树", 1)


def test_card_number() -> None:
    assert [card_number(s) for s in ("一", "二", "1", "２", "①", "十", "十二", "二十")] == [
        1,
        2,
        1,
        2,
        1,
        10,
        12,
        20,
    ]
    assert card_number("几") is None


# --- the real vote thread (tests/fixtures/discuz/manifest.json, threads.vote) ---------------------

_TAG = re.compile(r"\[/?[a-z]+(?:=[^\]]*)?\]", re.IGNORECASE)


def _visible_text(stored: str) -> tuple[str, tuple[str, ...]]:
    """What the page parser gives for a stored BBCode message: quote blocks and the edit note
    removed, tags stripped; the text of white / size-1 fonts returned as distrusted."""
    msg = re.sub(r"\[quote\].*?\[/quote\]", "", stored, flags=re.DOTALL)
    msg = re.sub(r"\[i=s\].*?\[/i\]", "", msg, flags=re.DOTALL)
    msg = re.sub(r"\[img\].*?\[/img\]", "", msg, flags=re.DOTALL)
    hidden = tuple(
        m.group(1)
        for m in re.finditer(
            r"\[(?:color=(?:white|#fff(?:fff)?)|size=1)\](.*?)\[/(?:color|size)\]", msg, re.I
        )
    )
    text = _TAG.sub("", msg)
    lines = [line.strip() for line in text.split("\n")]
    return "\n".join(lines).strip("\n"), hidden


def _vote_posts() -> list[dict]:
    return samples.posts("vote")


# manifest `kind` -> what the post SAYS (whether it counts is the engine's business)
_EXPECTED = {
    "vote": VoteKind.VOTE,
    "change_vote": VoteKind.CHANGE,
    "late_vote": VoteKind.VOTE,  # a vote line after a lead-in; the engine rejects it as late
    "invalid_vote": VoteKind.INVALID,
    "hidden_white_text": VoteKind.INVALID,
    "opening_post": VoteKind.INVALID,  # the director's template has two vote lines
}


def test_every_post_of_the_fixture_vote_thread() -> None:
    posts = _vote_posts()
    assert len(posts) == 26
    for post in posts:
        text, hidden = _visible_text(post["stored_message"])
        r = parse_vote(text, distrusted=hidden)
        expected = _EXPECTED.get(post["kind"], VoteKind.NONE)
        if post.get("target") == "弃权":
            expected = VoteKind.ABSTAIN
        assert r.kind is expected, (post["pid"], post["kind"], r)
        if expected in (VoteKind.VOTE, VoteKind.CHANGE):
            assert r.target_raw == post["target"], post["pid"]
            assert r.problem is None
        if post["kind"] == "hidden_white_text":
            assert r.hidden and r.target_raw == "油条"
        if post["kind"] == "invalid_vote":
            assert r.problem is not None and "投票给" in r.problem
            assert (post["sent_message"].split("\n")[0], r.target_raw) == ("投票给：包子", "包子")
        if post["kind"] == "opening_post":
            assert r.problem is not None and r.problem.startswith("一帖内有多条投票")


def test_fixture_edited_vote_reads_both_versions() -> None:
    post = next(p for p in _vote_posts() if p.get("edited"))
    before = parse_vote(post["sent_message"])
    after = parse_vote(_visible_text(post["stored_message"])[0])
    assert before.target_raw == post["target_before_edit"]
    assert after.target_raw == post["target_after_edit"]


def test_fixture_vote_targets_resolve_to_the_roster() -> None:
    posts = _vote_posts()
    users = samples.manifest()["users"]
    roster = [RosterEntry(name) for name in users if name not in ("admin", "导演A")]
    for post in posts:
        text, hidden = _visible_text(post["stored_message"])
        r = parse_vote(text, distrusted=hidden)
        if r.kind in (VoteKind.VOTE, VoteKind.CHANGE):
            assert resolve_name(r.target_raw, roster).player == post["target"], post["pid"]


# --- properties ---------------------------------------------------------------------------------

_VOTE_LINES = st.sampled_from(
    [
        "投票对象：油条",
        "投票对象:油条 投票理由:藏起来",
        "改票对象：饺子",
        "投票对象：弃权",
        "弃权",
        "【投票对象】：Snow_风",
    ]
)
_FILLER = st.text(
    alphabet=st.sampled_from(list("大家好想再看吧。，！ \n油条饺子理由abc")), max_size=30
).filter(lambda s: parse_vote(s).kind is VoteKind.NONE)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120), st.lists(st.text(max_size=10), max_size=3))
def test_no_input_crashes_the_vote_parser(text: str, distrusted: list[str]) -> None:
    r = parse_vote(text, distrusted=distrusted, target_pattern=CARD_TARGET)
    assert isinstance(r.kind, VoteKind)
    if r.kind is VoteKind.INVALID:
        assert r.problem
    if r.valid:
        assert r.problem is None


@settings(max_examples=200, deadline=None)
@given(_FILLER, _VOTE_LINES, _FILLER)
def test_a_vote_line_in_hidden_text_is_never_a_valid_vote(
    before: str, line: str, after: str
) -> None:
    text = f"{before}\n{line}\n{after}"
    r = parse_vote(text, distrusted=[line])
    assert not r.valid
    assert r.kind is VoteKind.INVALID and r.hidden


@settings(max_examples=100, deadline=None)
@given(_FILLER, _VOTE_LINES, _VOTE_LINES)
def test_two_visible_vote_lines_are_never_valid(before: str, a: str, b: str) -> None:
    assert parse_vote(f"{before}\n{a}\n{b}").kind is VoteKind.INVALID


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12))
def test_target_raw_is_what_was_written(name: str) -> None:
    name = name.strip()
    r = parse_vote(f"投票对象：{name}")
    if r.kind is VoteKind.VOTE:
        assert r.target_raw in f"投票对象：{name}"


def test_fixture_vote_pages_through_the_page_parser() -> None:
    """The real served pages, read by parsers.viewthread, then by parse_vote with the hidden
    marks distrusted: every post reads as in the manifest test above."""
    from parsers.viewthread import parse_viewthread

    by_pid = {p["pid"]: p for p in _vote_posts()}
    tz = ZoneInfo("Asia/Shanghai")
    seen = set()
    for page_no in range(1, samples.pages("vote") + 1):
        path = SAMPLES / "desktop" / f"vote-page{page_no}-anon.html"
        page = parse_viewthread(
            path.read_bytes(), tid=samples.tid("vote"), tz=tz, now=served_at(path)
        )
        for post in page.posts:
            hidden = [
                m.text
                for m in post.marks
                if m.kind in (MarkKind.HIDDEN_COLOUR, MarkKind.TINY, MarkKind.HIDE_TAG)
            ]
            r = parse_vote(post.text, distrusted=hidden)
            truth = by_pid[post.pid]
            expected = _EXPECTED.get(truth["kind"], VoteKind.NONE)
            if truth.get("target") == "弃权":
                expected = VoteKind.ABSTAIN
            assert r.kind is expected, (post.pid, r)
            if expected in (VoteKind.VOTE, VoteKind.CHANGE):
                assert r.target_raw == truth["target"], post.pid
            seen.add(post.pid)
    assert seen == set(by_pid)


def test_director_proxy_line_names_the_voter():
    from parsers.votes import parse_proxy_line

    assert parse_proxy_line("代投：饺子\n投票对象：包子\n投票理由：私信") == "饺子"
    assert parse_proxy_line("【代投】 Snow_风\n投票对象：弃权") == "Snow_风"
    assert parse_proxy_line("【导演】提醒：投票截止时间为今晚22:00") is None
    assert parse_proxy_line("我想代投的话怎么办") is None


def test_a_directors_proxy_post_reads_as_one_vote():
    """m135.txt:203 「投票帖可以申请由导演代发。」 docs/rulings.md: 一帖中以“代投：名字”开头的一行，
    后面按普通格式写投票行 — the 代投 line is the header, not a second (mislabelled) vote line."""
    from parsers.votes import split_proxy

    text = "代投：饺子\n投票对象：包子\n投票理由：私信"
    assert parse_vote(text).kind is VoteKind.INVALID  # read whole, 代投：饺子 looks like a vote
    name, rest = split_proxy(text)
    assert name == "饺子" and rest == "投票对象：包子\n投票理由：私信"
    r = parse_vote(rest)
    assert (r.kind, r.target_raw, r.reason) == (VoteKind.VOTE, "包子", "私信")
    assert split_proxy("【导演】提醒：投票截止") == (None, "【导演】提醒：投票截止")
