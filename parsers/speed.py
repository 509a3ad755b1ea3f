"""申请加速 / 申请延时 posts in the progress thread (进程帖).

Rules: m135.txt:197 未出局角色可于白天在进程帖中申请加速或延时;
m209.txt:591 (申请加速或延时, 加速或延迟); nizhuan.txt:176, zhenyan.txt:154 (same words);
tubian24.txt:330 在进程帖内提议进程加速 … 过半数同意加速.
Counting the requests against the living players is ``engine.speed``'s business; this module
only reads one post.

Reading choices (docs/rulings.md): a request is 申请/同意/支持/要求/请求/提议 (+进程) + 加速, or the
same + 延时/延迟/延期/延长, tolerating spaces and decoration between the words (``申请 加速``,
``申请：加速``), or a post that says nothing but ``加速`` / ``延时``. A negated (``不申请加速``) or
questioning (``有人申请加速吗？``, ``申请加速？``, ``加速？``) clause is not a request. A post
asking for both is not counted (kind None, with a problem). ``撤回/取消 … 加速`` is reported as
a withdrawal for the director.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from parsers.text import is_separator, normalize

__all__ = ["SpeedKind", "SpeedRequest", "parse_speed_request"]


class SpeedKind(StrEnum):
    ACCELERATE = "accelerate"  # 申请加速
    DELAY = "delay"  # 申请延时


@dataclass(frozen=True, slots=True)
class SpeedRequest:
    kind: SpeedKind | None  # None: the post cannot be counted (see problem)
    line: str  # the clause that asks (normalised)
    problem: str | None = None  # Chinese, when kind is None
    withdraws: SpeedKind | None = None  # 撤回加速申请 / 取消延时申请


_VERB = r"(?:申请|同意|支持|要求|请求|提议)"
_ACC = re.compile(_VERB + r"(?:进程)?加速")
_DELAY = re.compile(_VERB + r"(?:进程)?(?:延时|延迟|延期|延长)")
_WITHDRAW = re.compile(
    r"(?:撤回|撤销|取消|收回)(?:我的)?(?:申请)?(?:进程)?(?P<what>加速|延时|延迟|延期)"
)
_NEGATION = ("不", "没", "别", "未", "无需", "不用", "不要", "不必", "没有", "不想")
_QUESTION_WORDS = ("吗", "么", "要不要", "是否", "谁", "有没有", "能不能", "可不可以", "呢")
_CLAUSE_END = re.compile(r"([。.!！?？;；,，\n]+)")
_INNER_DECOR = " :：、-~·*…—_\"'“”「」【】()（）[]"


def _clauses(text: str) -> list[tuple[str, bool]]:
    """(compact clause, ends with a question mark) for each clause of the post."""
    parts = _CLAUSE_END.split(text)
    out: list[tuple[str, bool]] = []
    for i in range(0, len(parts), 2):
        body = normalize(parts[i])
        ender = parts[i + 1] if i + 1 < len(parts) else ""
        compact = "".join(c for c in body if c not in _INNER_DECOR and not c.isspace())
        if compact:
            out.append((compact, "?" in ender or "？" in ender))
    return out


def _asks(clause: str, question: bool, pattern: re.Pattern[str]) -> bool:
    m = pattern.search(clause)
    if m is None:
        return False
    before = clause[: m.start()]
    if any(before.endswith(neg) for neg in _NEGATION):
        return False
    return not (question or any(word in clause for word in _QUESTION_WORDS))


def parse_speed_request(text: str) -> SpeedRequest | None:
    """Read one progress-thread post. None when it asks for neither."""
    clauses = _clauses(text)
    acc = [c for c, q in clauses if _asks(c, q, _ACC)]
    delay = [c for c, q in clauses if _asks(c, q, _DELAY)]
    whole = "".join(c for c in normalize(text) if not is_separator(c))
    # a bare 加速 / 申请延时 is a request only when it does not ask: "加速？" and "申请延时?"
    # are questions (docs/rulings.md: 问句不算), whatever punctuation ends them
    asked = any(q for _, q in clauses) or any(w in whole for w in _QUESTION_WORDS)
    if not acc and not delay and not asked and whole in ("加速", "申请加速"):
        acc = [whole]
    if not acc and not delay and not asked and whole in ("延时", "延迟", "申请延时", "申请延迟"):
        delay = [whole]
    withdrawn: SpeedKind | None = None
    for clause, _ in clauses:
        m = _WITHDRAW.search(clause)
        if m is not None:
            withdrawn = SpeedKind.ACCELERATE if m["what"] == "加速" else SpeedKind.DELAY
            break

    if acc and delay:
        return SpeedRequest(
            kind=None,
            line=f"{acc[0]} / {delay[0]}",
            problem="一帖内同时申请加速和延时，无法判断，不予计算",
        )
    if withdrawn is not None:
        what = "加速" if withdrawn is SpeedKind.ACCELERATE else "延时"
        return SpeedRequest(
            kind=None,
            line=next(c for c, _ in clauses if _WITHDRAW.search(c)),
            problem=f"撤回{what}申请，请导演确认是否从申请人中去掉",
            withdraws=withdrawn,
        )
    if acc:
        return SpeedRequest(kind=SpeedKind.ACCELERATE, line=acc[0])
    if delay:
        return SpeedRequest(kind=SpeedKind.DELAY, line=delay[0])
    return None
