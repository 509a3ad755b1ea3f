"""zhenyan inquiry thread: questions, guesses, the sheriff's answers (parsers.inquiry)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.inquiry import (
    Answer,
    InquiryKind,
    parse_answer,
    parse_inquiry,
    sheriff_asks,
    split_answers,
)

# --- guesses: zhenyan.txt:167-168 ----------------------------------------------------------------
# 167 特别的，角色可以询问以下指定格式猜测词语，且只能用该格式猜测词语，
#     其余格式猜测词语导演均不受理。
# 168 【第X个词语是XX吗？】，若出现该询问，导演需要先反馈猜测是否正确，之后警长再继续回答该问题


@pytest.mark.parametrize(
    ("text", "index", "word"),
    [
        ("【第一个词语是风扇吗？】", 1, "风扇"),
        ("【第1个词语是风扇吗?】", 1, "风扇"),
        ("【第１个词语是风扇吗？】", 1, "风扇"),
        ("【第①个词语是鹿目圆吗？】", 1, "鹿目圆"),
        ("【第 二 个 词 是 千羽 吗 ？】", 2, "千羽"),
        ("【第三个词是“摄梦人”吗？】", 3, "摄梦人"),
        ("我猜一下：【第四个词语是Moon吗？】", 4, "Moon"),
        ("【第二个词语是风扇吗】", 2, "风扇"),  # the question mark may be left out
        ("【第二个词语是风扇吗】？", 2, "风扇"),  # or put after the bracket
        ("[第二个词语是风扇吗？]", 2, "风扇"),  # half-width brackets
        ("［第二个词语是风扇吗？］", 2, "风扇"),  # full-width square brackets
    ],
)
def test_guess_format(text: str, index: int, word: str) -> None:
    inq = parse_inquiry(text)
    assert inq.kind is InquiryKind.GUESS
    assert (inq.guess_index, inq.guess_word) == (index, word)
    assert inq.raw == text
    assert inq.problem is None


def test_the_rules_example_question_is_a_question() -> None:
    # zhenyan.txt:165 问题内容不限，但必须是是否类问题，如：第一个词语是名词吗？/…
    # zhenyan.txt:168 【第X个词语是XX吗？】 -- the brackets are what makes a guess
    inq = parse_inquiry("第一个词语是名词吗？")
    assert (inq.kind, inq.guess_index, inq.guess_word) == (InquiryKind.QUESTION, None, None)
    assert inq.guesses == () and inq.questions == 1
    # the director is told why a guess-shaped question is not checked as a guess
    assert any("没有【】" in n and "按普通问题处理" in n for n in inq.notes)


def test_the_guess_form_without_brackets_is_not_a_guess() -> None:
    # zhenyan.txt:167 且只能用该格式猜测词语，其余格式猜测词语导演均不受理。
    for text in ("第一个词语是风扇吗？", "第1个词是风扇吗", "我猜第二个词语是千羽吗？"):
        inq = parse_inquiry(text)
        assert inq.kind is InquiryKind.QUESTION, text
        assert any("没有【】" in n for n in inq.notes), text
    # the same words in brackets are a guess
    assert parse_inquiry("【第一个词语是名词吗？】").kind is InquiryKind.GUESS


def test_other_guess_formats_are_questions_with_a_note() -> None:
    # zhenyan.txt:167 其余格式猜测词语导演均不受理。
    for text in (
        "【第一个词语是不是风扇？】",
        "【第一个是风扇吗？】",
        "第一词语是风扇吗？",
        "第几个词语是风扇吗？",
    ):
        inq = parse_inquiry(text)
        assert inq.kind is InquiryKind.QUESTION, text
        assert inq.guess_index is None and inq.guess_word is None
        assert any("导演不受理" in n for n in inq.notes), text


def test_guess_index_out_of_range() -> None:
    # zhenyan.txt:52 角色需要猜测的4个真言词语
    inq = parse_inquiry("【第五个词语是风扇吗？】")
    assert inq.kind is InquiryKind.GUESS and inq.guess_index == 5
    assert inq.problem == "猜词序号超出范围：真言词语共4个（写成了第5个）"


def test_every_other_post_is_a_question() -> None:
    # zhenyan.txt:165 问题内容不限，但必须是是否类问题，如：…/你是预言家查杀了某人吗？
    inq = parse_inquiry("你是预言家查杀了某人吗？")
    assert inq.kind is InquiryKind.QUESTION and inq.questions == 1
    assert parse_inquiry("谢谢警长").kind is InquiryKind.QUESTION


def test_questions_are_counted_per_question_mark() -> None:
    # zhenyan.txt:165 每名角色每天可以在询问贴向警长询问3次问题
    assert parse_inquiry("你是狼吗？？").questions == 1
    assert parse_inquiry("你是狼吗？他是狼吗？【第一个词语是风扇吗？】").questions == 3
    two = parse_inquiry("【第一个词语是风扇吗？】【第二个词语是千羽吗？】")
    assert [g.index for g in two.guesses] == [1, 2] and two.questions == 2


# --- answers: zhenyan.txt:166 警长只能用是/否/不知道回答。 ----------------------------------------


@pytest.mark.parametrize(
    ("text", "answer"), [("是", Answer.YES), ("否", Answer.NO), ("不知道", Answer.UNKNOWN)]
)
def test_the_three_answers(text: str, answer: Answer) -> None:
    parsed = parse_answer(text)
    assert parsed.answer is answer and parsed.problem is None


def test_padding_forced_by_the_forum_minimum_length_is_accepted() -> None:
    # Discuz minpostsize: 10 bytes after quotes are removed (docs/discuz.md §4.4), so "是"
    # cannot be posted alone; filler made of punctuation or the usual padding words is not an
    # extra answer.
    for text in ("是。。。。。。。。", "否（凑字数凑字数）", "不知道 字数补丁", "是\n\n……………"):
        parsed = parse_answer(text)
        assert parsed.answer is not None and parsed.problem is None, text
        assert parsed.padding


def test_anything_else_is_a_problem() -> None:
    # zhenyan.txt:291 警长回复指定三种回答以外的内容（直接黄牌或红牌）
    for text in ("是的", "对", "狼是3号", "是 否", "不清楚", "是，而且他是狼"):
        parsed = parse_answer(text)
        assert parsed.problem is not None and "警长只能用是/否/不知道回答" in parsed.problem, text
    assert parse_answer("对").answer is None
    assert parse_answer("是的").answer is Answer.YES  # recognised, but flagged
    assert parse_answer("").problem == "警长只能用是/否/不知道回答（回复为空）"


def test_one_answer_per_quoted_question() -> None:
    # zhenyan.txt:109 用是/否/不知道这三个回答之一回复在询问贴中提出问题的角色
    # (Discuz's 回复 button quotes the question and links its pid)
    (part,) = split_answers("是。。。。。。", quoted_pids=[301])
    assert (part.answer, part.pid, part.problem) == (Answer.YES, 301, None)


def test_several_answers_in_one_post() -> None:
    parts = split_answers("是\n否\n不知道", quoted_pids=[301, 302, 303])
    assert [(p.answer, p.pid) for p in parts] == [
        (Answer.YES, 301),
        (Answer.NO, 302),
        (Answer.UNKNOWN, 303),
    ]
    parts = split_answers("5楼：是\n@饺子 否")
    assert [(p.answer, p.ref) for p in parts] == [(Answer.YES, "5楼"), (Answer.NO, "@饺子")]
    assert all(p.problem is None for p in parts)


def test_answers_that_cannot_be_paired_are_flagged() -> None:
    parts = split_answers("是\n否")
    assert all(p.problem is not None and "无法确定" in p.problem for p in parts)
    (part,) = split_answers("是", quoted_pids=[1, 2])
    assert part.problem is not None and "引用了2个问题但只有一个回答" in part.problem


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80), st.lists(st.integers(min_value=1, max_value=10**6), max_size=3))
def test_no_input_crashes_the_inquiry_parsers(text: str, pids: list[int]) -> None:
    inq = parse_inquiry(text)
    assert inq.questions >= 1
    if inq.kind is InquiryKind.GUESS:
        assert inq.guess_index is not None and inq.guess_word
    parsed = parse_answer(text)
    assert parsed.answer is not None or parsed.problem
    for part in split_answers(text, pids):
        assert part.answer is not None or part.problem


def test_what_the_sheriff_posts_instead_of_an_answer() -> None:
    # zhenyan.txt:109 成为警长的角色……也不能在询问贴中提问，猜词，只能……用是/否/不知道……回复
    assert sheriff_asks("第1个词语是风扇吗？") == "猜词"  # with or without 【】
    assert sheriff_asks("【第一个词语是风扇吗？】") == "猜词"
    assert sheriff_asks("九月是狼吗？") == "提问"
    assert sheriff_asks("九月是狼吗") == "提问"
    for answer in ("是", "否（凑字数）", "不知道……", "5楼：是"):
        assert sheriff_asks(answer) is None, answer
    # other words are a bad answer, not a question (zhenyan.txt:291)
    assert sheriff_asks("可能吧") is None
