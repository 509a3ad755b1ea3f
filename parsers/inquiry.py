"""The zhenyan inquiry thread (询问贴): players' questions and guesses, the sheriff's answers.

Rules (zhenyan.txt):

* 165: 每名角色每天可以在询问贴向警长询问3次问题，问题内容不限，但必须是是否类问题
* 166: 警长只能用是/否/不知道回答。
* 167-168: 角色可以询问以下指定格式猜测词语，且只能用该格式猜测词语，其余格式猜测词语导演均不受理。
  【第X个词语是XX吗？】，若出现该询问，导演需要先反馈猜测是否正确，之后警长再继续回答该问题
* 109: 警长 … 只能在询问贴中，用是/否/不知道这三个回答之一回复在询问贴中提出问题的角色。

Reading choices (docs/rulings.md):

* A guess is the designated form written with its brackets, ``【第X个词语是XX吗？】``
  (zhenyan.txt:168); the same words without 【】 are an ordinary question: line 165 gives
  ``第一个词语是名词吗？`` as its example of a question, so the brackets are what tells the two
  apart. Inside the brackets the question mark is optional (it may also follow the 】); 词 and
  词语 both work; X may be 一/1/１/①; half-width [] count as 【】.
* The guess form without brackets is a QUESTION with a note that the director does not take it
  as a guess; so is a near miss (``【第一个词语是不是风扇？】``, ``第一个是风扇吗``).
* ``Inquiry.questions`` counts the questions in the post (one per question mark, at least one) so
  the 3-a-day limit can be applied per question.
* Answers: Discuz refuses a post shorter than 10 bytes after quotes are removed
  (docs/discuz.md §4.4, ``minpostsize``), so ``是`` (3 bytes) cannot be posted alone; padding
  made only of punctuation, spaces or the usual words (凑字数, 字数补丁 …) is accepted and
  reported in ``padding``; any other content is a problem for the director (zhenyan.txt:291
  makes it a card offence).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from parsers.text import (
    MappedText,
    is_separator,
    normalize,
    normalize_lines,
    normalize_mapped,
    visible_repr,
)
from parsers.votes import card_number

__all__ = [
    "Answer",
    "AnswerParse",
    "AnswerPart",
    "Guess",
    "Inquiry",
    "InquiryKind",
    "answer_problems",
    "parse_answer",
    "parse_inquiry",
    "sheriff_asks",
    "split_answers",
]


class InquiryKind(StrEnum):
    QUESTION = "question"
    GUESS = "guess"


class Answer(StrEnum):
    YES = "是"
    NO = "否"
    UNKNOWN = "不知道"


@dataclass(frozen=True, slots=True)
class Guess:
    index: int  # 1-based word number as written (may be out of range; see Inquiry.problem)
    word: str  # normalised, surrounding quotes removed
    word_raw: str  # as written
    text: str  # the whole guess as written, e.g. "第一个词语是风扇吗？"


@dataclass(frozen=True, slots=True)
class Inquiry:
    kind: InquiryKind
    guess_index: int | None  # the first guess's word number
    guess_word: str | None  # the first guess's word (normalised)
    raw: str
    guesses: tuple[Guess, ...] = ()
    questions: int = 1  # questions asked in this post (>= 1)
    problem: str | None = None  # Chinese: a guess that cannot be checked (index out of range)
    notes: tuple[str, ...] = ()  # Chinese remarks (near-miss guess formats)


_NUM = r"[0-9一二三四五六七八九十]+"
_GUESS_BODY = (
    r"第\s*(?P<idx>" + _NUM + r")\s*个\s*(?:词语|词)\s*是\s*(?P<word>[^\n\[\]【】]{1,40}?)\s*吗"
)
# the designated form's brackets (zhenyan.txt:168); normalize() folds ［］ to []
_GUESS = re.compile(r"[【\[]\s*" + _GUESS_BODY + r"\s*\??\s*[】\]]")
_UNBRACKETED = re.compile(_GUESS_BODY)
_NEAR_GUESS = re.compile(
    r"第\s*(?:" + _NUM + r"|几)\s*个?\s*(?:真言|咒语)?\s*(?:词|咒语|真言)"
    r"|第\s*(?:" + _NUM + r"|几)\s*个\s*是[^\n]{1,40}?吗"
)
_QUOTES = " \"'「」『』“”‘’【】[]"


def _raw_between(mapped: MappedText, start: int, end: int) -> str:
    return mapped.raw_slice(start, end).strip()


def _count_questions(text: str) -> int:
    parts = re.split(r"\?+", text)
    asked = sum(1 for part in parts[:-1] if any(c.isalnum() for c in part))
    return max(1, asked)


def parse_inquiry(text: str, *, word_count: int = 4) -> Inquiry:
    """Classify one inquiry-thread post: a GUESS when it contains ``【第X个词语是XX吗？】``,
    otherwise a QUESTION."""
    mapped = normalize_mapped(text)
    guesses: list[Guess] = []
    spans: list[tuple[int, int]] = []  # the guesses' text, question marks included
    for m in _GUESS.finditer(mapped.text):
        index = card_number(m["idx"])
        if index is None:
            continue
        word_raw = _raw_between(mapped, m.start("word"), m.end("word"))
        word = normalize(word_raw).strip(_QUOTES)
        if not word:
            continue
        end = m.end()
        if end < len(mapped.text) and mapped.text[end] == "?":  # 【…吗】？
            end += 1
        spans.append((m.start(), end))
        guesses.append(
            Guess(
                index=index, word=word, word_raw=word_raw, text=_raw_between(mapped, m.start(), end)
            )
        )
    questions = _count_questions(mapped.text)
    if guesses:
        # a guess is one inquiry whether or not it has its question mark (zhenyan.txt:165, 168);
        # the question marks of the rest of the post are the other questions
        rest = mapped.text
        for start, end in reversed(spans):
            rest = rest[:start] + "\n" + rest[end:]
        questions = len(guesses) + (_count_questions(rest) if "?" in rest else 0)
    notes: list[str] = []
    if not guesses:
        if _UNBRACKETED.search(mapped.text):
            notes.append(
                "形如猜词但没有【】，按普通问题处理：猜词须写成“【第X个词语是XX吗？】”，"
                "不带【】的“第一个词语是名词吗？”是规则里普通问题的例子"
            )
        elif _NEAR_GUESS.search(mapped.text):
            notes.append(
                "疑似猜词但不符合格式“【第X个词语是XX吗？】”，导演不受理该猜词，按普通提问处理"
            )
        return Inquiry(
            kind=InquiryKind.QUESTION,
            guess_index=None,
            guess_word=None,
            raw=text,
            questions=questions,
            notes=tuple(notes),
        )
    bad = [g for g in guesses if not 1 <= g.index <= word_count]
    problem = None
    if bad:
        written = "、".join(f"第{g.index}个" for g in bad)
        problem = f"猜词序号超出范围：真言词语共{word_count}个（写成了{written}）"
    if len(guesses) > 1:
        notes.append(f"一帖内有{len(guesses)}个猜词，逐个核对")
    first = guesses[0]
    return Inquiry(
        kind=InquiryKind.GUESS,
        guess_index=first.index,
        guess_word=first.word,
        raw=text,
        guesses=tuple(guesses),
        questions=questions,
        problem=problem,
        notes=tuple(notes),
    )


# --- the sheriff's answers --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AnswerParse:
    answer: Answer | None
    problem: str | None  # Chinese; set whenever the reply is more than one of 是/否/不知道
    padding: str = ""  # accepted filler after the answer (for the director's eye)
    raw: str = ""


_ANSWER = re.compile(r"(不知道|是|否)")
_REF = re.compile(r"(?:回复\s*)?(?:@\s*\S+?|\d+\s*(?:楼|#|L|l|F|f))\s*[:,]?\s*(?=不知道|是|否)")
_PADDING_WORDS = (
    "字数补丁",
    "凑字数",
    "补字数",
    "字数不够",
    "防吞",
    "凑字",
    "补字",
    "字数",
)
_SHERIFF_RULE = "警长只能用是/否/不知道回答"


def _strip_padding(rest: str) -> str:
    """What is left of ``rest`` after filler (separators and the usual padding words)."""
    for word in _PADDING_WORDS:
        rest = rest.replace(word, "")
    return "".join(c for c in rest if not is_separator(c))


def parse_answer(text: str) -> AnswerParse:
    """The sheriff's reply to one question: exactly one of 是/否/不知道 (zhenyan.txt:166),
    optionally after a floor/@ reference and before filler."""
    t = normalize(text)
    shown = visible_repr(" ".join(text.split()))
    if not t:
        return AnswerParse(None, f"{_SHERIFF_RULE}（回复为空）", raw=text)
    ref = _REF.match(t)
    lead = 0
    if ref is not None:
        lead = ref.end()
    else:
        while lead < len(t) and is_separator(t[lead]):
            lead += 1
    m = _ANSWER.match(t, lead)
    if m is None:
        return AnswerParse(None, f"{_SHERIFF_RULE}（回复了“{_short(shown)}”）", raw=text)
    answer = Answer(m.group(1))
    rest = t[m.end() :]
    if _strip_padding(rest):
        return AnswerParse(
            answer,
            f"{_SHERIFF_RULE}，回复中含有其他内容：“{_short(shown)}”",
            padding=rest.strip(),
            raw=text,
        )
    return AnswerParse(answer, None, padding=rest.strip(), raw=text)


_ASKING_END = re.compile(r"(?:吗|么|呢|\?)\W*$")


def sheriff_asks(text: str) -> str | None:
    """What the sheriff's inquiry-thread post does instead of answering: ``"猜词"`` (the guess
    form, with or without 【】), ``"提问"`` (a question: a question mark, or a line ending in
    吗/么/呢), or None for a post that reads as an answer (zhenyan.txt:109 警长……不能在询问贴中
    提问，猜词)."""
    t = normalize_lines(text)
    if parse_answer(text).answer is not None:
        return None
    if _UNBRACKETED.search(t) or _GUESS.search(t):
        return "猜词"
    if "?" in t or any(_ASKING_END.search(line) for line in t.split("\n") if line):
        return "提问"
    return None


def _short(s: str, limit: int = 30) -> str:
    return s if len(s) <= limit else s[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class AnswerPart:
    answer: Answer | None
    problem: str | None
    line: str  # the answer line (normalised)
    pid: int | None = None  # the question answered, from the quote link, when it can be paired
    ref: str | None = None  # a floor / @ reference written before the answer ("5楼", "@饺子")
    padding: str = ""


def _is_filler_line(line: str) -> bool:
    return not _strip_padding(line)


def split_answers(text: str, quoted_pids: Sequence[int] = ()) -> tuple[AnswerPart, ...]:
    """Split a sheriff post that may answer several questions.

    The rule's form is one reply per question, made with Discuz's 回复 button (the quote link
    gives the question's pid). A post answering several questions is read line by line; the
    n-th answer line is paired with the n-th quoted pid when the counts agree, and a line may
    name its question with ``5楼：是`` / ``@饺子 否``. An answer that cannot be paired with a
    question carries a problem.
    """
    lines = [
        line for line in normalize_lines(text).split("\n") if line and not _is_filler_line(line)
    ]
    pids = list(quoted_pids)
    if len(lines) <= 1:
        parsed = parse_answer(lines[0] if lines else text)
        problem = parsed.problem
        pid = pids[0] if len(pids) == 1 else None
        if len(pids) > 1:
            extra = f"引用了{len(pids)}个问题但只有一个回答，无法对应"
            problem = f"{problem}；{extra}" if problem else extra
        return (
            AnswerPart(
                answer=parsed.answer,
                problem=problem,
                line=lines[0] if lines else "",
                pid=pid,
                ref=_ref_of(lines[0]) if lines else None,
                padding=parsed.padding,
            ),
        )
    paired = len(pids) == len(lines)
    parts: list[AnswerPart] = []
    for i, line in enumerate(lines):
        parsed = parse_answer(line)
        ref = _ref_of(line)
        pid = pids[i] if paired else None
        problem = parsed.problem
        if pid is None and ref is None:
            extra = "一帖回答多个问题时，每行须对应一个引用或写明楼层，无法确定此回答对应哪个问题"
            problem = f"{problem}；{extra}" if problem else extra
        parts.append(
            AnswerPart(
                answer=parsed.answer,
                problem=problem,
                line=line,
                pid=pid,
                ref=ref,
                padding=parsed.padding,
            )
        )
    return tuple(parts)


def answer_problems(text: str) -> tuple[str, ...]:
    """What in a sheriff's post is not one of 是/否/不知道 (zhenyan.txt:166, 291), read as
    :func:`split_answers` reads it: a post answering several questions one per line is judged
    line by line; pairing a line with its question is not the sheriff's wording."""
    lines = [
        line for line in normalize_lines(text).split("\n") if line and not _is_filler_line(line)
    ]
    if len(lines) <= 1:
        problem = parse_answer(text).problem
        return (problem,) if problem else ()
    return tuple(p for line in lines if (p := parse_answer(line).problem))


def _ref_of(line: str) -> str | None:
    m = _REF.match(line.strip())
    if m is None:
        return None
    return m.group(0).rstrip(" :,").removeprefix("回复").strip() or None
