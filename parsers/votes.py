"""Read the 投票格式 / 改票格式 line of one post.

The rule texts all give the same shape (m209.txt:602-607, zhenyan.txt:179-185, nizhuan.txt:195-201,
m135.txt:207-210)::

    投票对象：饺子
    投票理由：饺子好吃

    改票对象：包子
    改票理由：包子也好吃

and add: 投票格式中标点符号不区分全半角; 投票对象与投票理由之间可以不换行;
投弃权票时，须在投票对象中填写“弃权”; 投票格式或投票对象有误的票无效.

:func:`parse_vote` decides only what the post *says*. Whether it counts (time, duplicates, the
reply link of a change, whether the target is alive) is the engine's business; whether the target
is on the roster is :func:`parsers.names.resolve_name`'s (feed it ``VoteParse.target_raw``).

Reading choices (see docs/rulings.md):

* A vote line starts its line, after optional decoration (``【``, ``1.``, ``*`` ...) or after a
  lead-in that ends in punctuation or a space (``截止后补票：投票对象：油条`` is read as a vote for
  油条 with ``lead_in="截止后补票："``; the engine rejects it on time if it is late). A label in
  the middle of a sentence (``我觉得投票对象：油条``) is not a vote line: alone it makes the post
  INVALID with a reason, beside a proper vote line it is ignored with a note.
* A post with two vote lines (two 投票对象, a 投票对象 and a 改票对象, a vote and a misspelled
  label, ...) is INVALID as a whole: the director cannot know which one was meant.
* Lines inside a reason (``投票理由：…``) are never vote lines.
* A bare line ``弃权`` is read as an abstention (``bare=True``): a rule set whose text asks for
  ``投票对象：弃权`` makes it an invalid ballot (``Ruleset.bare_abstain``).
* Text the page parser found hidden (white / tiny / [hide]) is not trusted: a vote line whose
  label or target lies in it is INVALID with ``hidden=True``. Hidden text is located by searching
  for it, so when it also occurs visibly every occurrence is distrusted (pass exact
  ``distrusted_spans`` to avoid that).
* The target is cut out of the raw text with its exact characters (``target_raw``), because names
  are matched strictly; ``target`` is its normalised form for display.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from parsers.text import MappedText, is_separator, normalize, normalize_mapped, visible_repr

__all__ = [
    "CARD_TARGET",
    "TargetRule",
    "VoteKind",
    "VoteParse",
    "card_number",
    "parse_proxy_line",
    "parse_vote",
    "split_proxy",
]

ABSTAIN_WORD = "弃权"


class VoteKind(StrEnum):
    NONE = "none"  # no vote-like line
    VOTE = "vote"
    CHANGE = "change"
    ABSTAIN = "abstain"
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class TargetRule:
    """A rule set's shape for the target, e.g. nizhuan's ``傻树的第一身份``.

    ``pattern`` is full-matched against the normalised target; its group ``name`` is the player
    and the optional group ``card`` the card number (第一/第二/1/2). When ``required`` a target
    that does not match (other than 弃权) is INVALID.
    """

    pattern: re.Pattern[str]
    required: bool = False
    example: str = ""


CARD_TARGET = TargetRule(
    pattern=re.compile(
        r"(?P<name>.+?)\s*的?\s*第\s*(?P<card>[一二三四1-4])\s*(?:张|个)?\s*身份\s*(?:牌)?"
    ),
    required=True,
    example="傻树的第一身份",
)


@dataclass(frozen=True, slots=True)
class VoteParse:
    kind: VoteKind
    target_raw: str = ""  # as written, exact characters (name part under a TargetRule)
    target: str = ""  # normalize(target_raw)
    reason: str = ""  # as written (trimmed); "" when there is no 投票理由
    line: str = ""  # the raw line the vote (or the problem) is on
    problem: str | None = None  # Chinese reason when INVALID
    hidden: bool = False  # the vote line lies in hidden (white / tiny / [hide]) text
    is_abstain: bool = False  # ABSTAIN, or a CHANGE to 弃权
    bare: bool = False  # a bare ``弃权`` line without the 投票对象 label
    card_index: int | None = None  # nizhuan: 1 or 2 from "X的第一身份"
    lead_in: str = ""  # raw text before the label on its line, e.g. "截止后补票："
    label: str = ""  # the label as written, e.g. "投票对象" / "投票给"
    notes: tuple[str, ...] = ()  # Chinese remarks that do not make the vote invalid

    @property
    def valid(self) -> bool:
        return self.kind in (VoteKind.VOTE, VoteKind.CHANGE, VoteKind.ABSTAIN)


# --- patterns (matched against the reading form: NFKC, so every colon is ":") ----------------

_CLOSE = r"[】\]」』)>》]?"
_STD = re.compile(r"(?P<label>投票对象|改票对象)\s*" + _CLOSE + r"\s*:")
_REASON = re.compile(r"(?:投票|改票)?理由\s*" + _CLOSE + r"\s*:")
_NOCOLON = re.compile(
    r"(?P<label>(?:投票|改票)对[象像向相])\s*" + _CLOSE + r"(?:\s+|\s*[-=>→|~]+\s*)(?=\S)"
)
_GENERIC = re.compile(r"(?P<label>\w{1,6}?)\s*" + _CLOSE + r"\s*:")
# Labels with 投/票 that are not votes (deadline, tally, format ... in notices and chat).
_NOT_VOTE_WORDS = (
    "理由",
    "截止",
    "时间",
    "格式",
    "结果",
    "规则",
    "说明",
    "统计",
    "记录",
    "情况",
    "帖",
    "贴",
    "数",
    "公示",
    "提醒",
    "通知",
    "注意",
    "备注",
    "补充",
    "状态",
    "顺序",
    "阶段",
    "期间",
    "得票",
    "计票",
    "唱票",
    "票型",
)
_SOFT_TAIL = " ,;.。、|/"
_CARD_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def card_number(s: str) -> int | None:
    """``第一``-style numbers: 一..九, 十, 十一..九十九, ASCII / full-width / circled digits."""
    s = normalize(s)
    if s.isdigit():
        return int(s)
    if s in _CARD_DIGITS:
        return _CARD_DIGITS[s]
    if s and set(s) <= set("一二三四五六七八九十") and "十" in s and len(s) <= 3:
        head, _, tail = s.partition("十")
        tens = _CARD_DIGITS.get(head, 1) if head else 1
        ones = _CARD_DIGITS.get(tail, 0) if tail else 0
        if (head and head not in _CARD_DIGITS) or (tail and tail not in _CARD_DIGITS):
            return None
        return tens * 10 + ones
    return None


@dataclass(slots=True)
class _Cand:
    kind: str  # vote | change | bare | mislabel | nocolon | weak
    start: int  # reading-form offset of the label (or of the bare word)
    colon_end: int  # reading-form offset right after the label's colon (start for bare)
    target_end: int  # reading-form offset where the target ends
    label: str
    lead: str  # reading-form lead-in
    reason_at: int | None = None  # reading-form offset right after the reason label's colon
    hidden: bool = False


def _is_decor(lead: str) -> bool:
    return all(is_separator(c) or c.isdigit() for c in lead)


def _at_boundary(line: str, p: int) -> bool:
    return p == 0 or is_separator(line[p - 1])


def _target_end(line: str, q: int) -> tuple[int, int | None, int]:
    """From ``q`` (after a label's colon): where the target ends, where a same-line reason
    starts (if any), and where scanning resumes."""
    reason_m = _REASON.search(line, q)
    vote_end = len(line)
    for m in _STD.finditer(line, q):
        if _at_boundary(line, m.start()):
            vote_end = m.start()
            break
    if reason_m is not None and reason_m.start() < vote_end:
        return reason_m.start(), reason_m.end(), len(line)
    return vote_end, None, vote_end


def _is_mislabel(label: str) -> bool:
    if "投" not in label and "票" not in label:
        return False
    if "投票对象" in label or "改票对象" in label:
        return False  # "我的投票对象：" — a proper label in mid-sentence (see "weak")
    return not any(word in label for word in _NOT_VOTE_WORDS)


def _scan_line(line: str) -> tuple[list[_Cand], int | None]:
    """Candidates on one reading-form line, and where the reason starts on a reason line."""
    core = line.strip("".join(c for c in set(line) if is_separator(c)))
    if core == ABSTAIN_WORD:
        start = line.find(ABSTAIN_WORD)
        end = start + len(ABSTAIN_WORD)
        cand = _Cand("bare", start, start, end, ABSTAIN_WORD, "")
        return [cand], None

    lead_len = 0
    while lead_len < len(line) and (is_separator(line[lead_len]) or line[lead_len].isdigit()):
        lead_len += 1
    reason_m = _REASON.match(line, lead_len)
    if reason_m is not None:
        return [], reason_m.end()

    cands: list[_Cand] = []
    seg = 0  # where the current segment (after the previous candidate) starts
    decor = True  # line[seg:p] is only decoration (kept incrementally: lines can be long)
    p = 0
    while p < len(line):
        if p > seg and decor:
            decor = _is_decor(line[p - 1])
        boundary = _at_boundary(line, p) or decor
        m = _STD.match(line, p)
        if m is not None:
            end, reason, resume = _target_end(line, m.end())
            kind = ("vote" if m["label"] == "投票对象" else "change") if boundary else "weak"
            cands.append(_Cand(kind, p, m.end(), end, m["label"], line[seg:p], reason))
            seg = p = resume
            decor = True
            continue
        if boundary and not is_separator(line[p]):
            m = _NOCOLON.match(line, p)
            if m is not None:
                end, reason, resume = _target_end(line, m.end())
                cand = _Cand("nocolon", p, m.end(), end, m["label"], line[seg:p], reason)
                cands.append(cand)
                seg = p = resume
                decor = True
                continue
            m = _GENERIC.match(line, p)
            if m is not None and _is_mislabel(m["label"]):
                rest = line[m.end() :].lstrip()
                if not _STD.match(rest) and not _leads_to_label(rest):
                    end, reason, resume = _target_end(line, m.end())
                    lead = line[seg:p]
                    cand = _Cand("mislabel", p, m.end(), end, m["label"], lead, reason)
                    cands.append(cand)
                    seg = p = resume
                    decor = True
                    continue
        p += 1
    return cands, None


def _leads_to_label(rest: str) -> bool:
    """``补票：投给：包子`` — a lead-in label followed by another vote-ish label."""
    m = _GENERIC.match(rest)
    return m is not None and _is_mislabel(m["label"])


def _distrusted_mask(
    mapped: MappedText, distrusted: Sequence[str], spans: Sequence[tuple[int, int]]
) -> list[bool]:
    mask = [False] * len(mapped.raw)
    for a, b in spans:
        for i in range(max(0, a), min(len(mask), b)):
            mask[i] = True
    for piece in distrusted:
        needle = normalize_mapped(piece).text.strip(" \n")
        if not needle:
            continue
        needles = [needle] if needle in mapped.text else needle.split("\n")
        for n in needles:
            n = n.strip()
            if not n:
                continue
            pos = mapped.text.find(n)
            while pos != -1:
                a, b = mapped.raw_span(pos, pos + len(n))
                for i in range(a, b):
                    mask[i] = True
                pos = mapped.text.find(n, pos + 1)
    return mask


def _raw_line(raw: str, raw_pos: int) -> str:
    a = raw.rfind("\n", 0, raw_pos) + 1
    b = raw.find("\n", raw_pos)
    return raw[a : b if b != -1 else len(raw)].rstrip("\r")


def _raw_target(mapped: MappedText, cand: _Cand) -> str:
    """The target cut from the raw text: from right after the colon to where the target ends,
    invisible characters included (they make a different name)."""
    raw = mapped.raw
    if cand.kind == "bare":
        a, b = mapped.raw_span(cand.start, cand.target_end)
        return raw[a:b]
    a = mapped.index[cand.colon_end - 1] + 1
    b = mapped.index[cand.target_end] if cand.target_end < len(mapped.text) else len(raw)
    nl = raw.find("\n", a)
    if nl != -1 and nl < b:
        b = nl
    target = raw[a:b].strip()
    if cand.reason_at is not None:  # "投票对象：面条，投票理由：…": drop the separator
        target = target.rstrip(_SOFT_TAIL + "，；。、｜／").strip()
    return target


def _raw_reason(mapped: MappedText, at: int | None) -> str:
    if at is None or at == 0:
        return ""
    a = mapped.index[at - 1] + 1
    b = mapped.raw.find("\n", a)
    return " ".join(mapped.raw[a : b if b != -1 else len(mapped.raw)].split())


def _shorten(s: str, limit: int = 24) -> str:
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _from_candidate(
    mapped: MappedText, cand: _Cand, target_rule: TargetRule | None, notes: list[str]
) -> VoteParse:
    raw = mapped.raw
    raw_start = mapped.index[cand.start] if cand.start < len(mapped.index) else len(raw)
    line = _raw_line(raw, raw_start)
    raw_lead = raw[raw.rfind("\n", 0, raw_start) + 1 : raw_start].strip()
    lead_in = "" if _is_decor(cand.lead) else raw_lead
    if lead_in and cand.kind != "weak":
        notes.append(f"投票行前有其他文字“{_shorten(lead_in)}”，仍按投票读取")
    target_raw = _raw_target(mapped, cand)
    target = normalize(target_raw)
    proper = "改票对象" if "改" in cand.label else "投票对象"

    kind = VoteKind.INVALID
    problem: str | None = None
    is_abstain = False
    card_index: int | None = None
    if cand.hidden:
        problem = "投票行在隐藏文字中（白字/小字/隐藏）不予采信"
    elif cand.kind == "weak":
        problem = (
            f"投票格式错误：“{proper}：”须写在行首"
            f"（前面写了“{_shorten(raw_lead)}”，应单独一行写“{proper}：名字”）"
        )
    elif cand.kind == "mislabel":
        written = _shorten(f"{cand.label}：{visible_repr(target_raw)}")
        problem = f"投票格式错误：应为“{proper}：名字”（写成了“{written}”）"
    elif cand.kind == "nocolon":
        problem = f"投票格式错误：“{proper}”后缺少冒号（写成了“{_shorten(line)}”）"
    elif cand.kind == "bare":
        kind, is_abstain = VoteKind.ABSTAIN, True
        notes.append("未写“投票对象：”，单独一行“弃权”按弃权票读取")
    elif not target:
        problem = f"{proper}为空"
    elif target.strip(_SOFT_TAIL + "!?~") == ABSTAIN_WORD:
        kind = VoteKind.ABSTAIN if cand.kind == "vote" else VoteKind.CHANGE
        is_abstain = True
    else:
        kind = VoteKind.VOTE if cand.kind == "vote" else VoteKind.CHANGE
        split = _apply_target_rule(mapped, cand, target_rule) if target_rule else None
        if split is not None:
            target_raw, card_index = split
            target = normalize(target_raw)
        elif target_rule is not None and target_rule.required:
            kind = VoteKind.INVALID
            example = f"，如“{target_rule.example}”" if target_rule.example else ""
            shown = _shorten(visible_repr(target_raw))
            problem = f"投票对象格式错误：“{shown}”不符合本局要求的写法{example}"

    return VoteParse(
        kind=kind,
        target_raw=target_raw,
        target=target,
        reason=_raw_reason(mapped, cand.reason_at),
        line=line,
        problem=problem,
        hidden=cand.hidden,
        is_abstain=is_abstain,
        bare=cand.kind == "bare",
        card_index=card_index,
        lead_in=lead_in,
        label=cand.label,
        notes=tuple(notes),
    )


def _apply_target_rule(
    mapped: MappedText, cand: _Cand, rule: TargetRule
) -> tuple[str, int | None] | None:
    text = mapped.text
    t0 = cand.colon_end
    while t0 < cand.target_end and text[t0] == " ":
        t0 += 1
    t1 = cand.target_end
    while t1 > t0 and text[t1 - 1] in _SOFT_TAIL:
        t1 -= 1
    m = rule.pattern.fullmatch(text, t0, t1)
    if m is None or m.start("name") == m.end("name"):
        return None
    raw = mapped.raw
    a = (
        mapped.index[cand.colon_end - 1] + 1
        if m.start("name") == t0
        else mapped.index[m.start("name")]
    )
    b = mapped.index[m.end("name")] if m.end("name") < len(text) else len(raw)
    name_raw = raw[a:b].strip()
    card = m.groupdict().get("card")
    index = card_number(card) if card else None
    return name_raw, index


def parse_vote(
    text: str,
    *,
    distrusted: Sequence[str] = (),
    distrusted_spans: Sequence[tuple[int, int]] = (),
    target_pattern: TargetRule | re.Pattern[str] | None = None,
) -> VoteParse:
    """Read the vote in a post's visible text (quote blocks already removed).

    ``distrusted``: texts of the post's hidden marks (white / tiny / [hide]);
    ``distrusted_spans``: exact ``[start, end)`` offsets of hidden text in ``text`` when known;
    ``target_pattern``: a rule set's target shape (see :data:`CARD_TARGET`); a bare compiled
    pattern is an optional shape.
    """
    rule: TargetRule | None
    if isinstance(target_pattern, re.Pattern):
        rule = TargetRule(pattern=target_pattern)
    else:
        rule = target_pattern

    mapped = normalize_mapped(text)
    mask = (
        _distrusted_mask(mapped, distrusted, distrusted_spans)
        if (distrusted or distrusted_spans)
        else None
    )

    cands: list[_Cand] = []
    offset = 0
    last_vote: _Cand | None = None
    for line in mapped.text.split("\n"):
        found, reason = _scan_line(line)
        for cand in found:
            cand.start += offset
            cand.colon_end += offset
            cand.target_end += offset
            if cand.reason_at is not None:
                cand.reason_at += offset
        if reason is not None and last_vote is not None and last_vote.reason_at is None:
            last_vote.reason_at = offset + reason
        if found:
            last_vote = found[-1]
        cands.extend(found)
        offset += len(line) + 1

    if mask is not None:
        for cand in cands:
            a, _ = mapped.raw_span(cand.start, cand.start + 1)
            _, b = mapped.raw_span(cand.start, max(cand.target_end, cand.start + 1))
            cand.hidden = any(mask[a:b])

    strong = [c for c in cands if c.kind != "weak"]
    weak = [c for c in cands if c.kind == "weak"]
    visible = [c for c in strong if not c.hidden]
    hidden = [c for c in strong if c.hidden]

    notes: list[str] = []
    if hidden and visible:
        shown = "；".join(
            _shorten(normalize(_raw_line(text, mapped.index[c.start]))) for c in hidden
        )
        notes.append(f"帖内另有隐藏文字中的投票行，未采信：{shown}")
    if weak and (visible or hidden):
        notes.append("帖内另有句中提到“投票对象：”的文字，未当作投票行")

    if len(visible) >= 2:
        lines = "；".join(_shorten(_raw_line(text, mapped.index[c.start])) for c in visible)
        first = _from_candidate(mapped, visible[0], rule, [])
        return VoteParse(
            VoteKind.INVALID,
            target_raw=first.target_raw,
            target=first.target,
            reason=first.reason,
            line=first.line,
            problem=f"一帖内有多条投票（{len(visible)}条：{lines}），整帖无效，须重新发帖",
            label=first.label,
            notes=tuple(notes),
        )
    if visible:
        return _from_candidate(mapped, visible[0], rule, notes)
    if hidden:
        return _from_candidate(mapped, hidden[0], rule, notes)
    if weak:
        return _from_candidate(mapped, weak[0], rule, notes)
    return VoteParse(VoteKind.NONE)


# --- 代投 posted by the director --------------------------------------------------------------

_PROXY = re.compile(r"^\s*[【\[(（]?\s*代投\s*[】\])）]?\s*(?:[:：]|\s)\s*(?P<name>[^\s:：,，。]+)")


def parse_proxy_line(text: str) -> str | None:
    """The voter named by a director's 代投 post (``代投：饺子`` on its own line), else None.

    The vote lines that follow are read with :func:`parse_vote` as usual.
    """
    return split_proxy(text)[0]


def split_proxy(text: str) -> tuple[str | None, str]:
    """(the voter a 代投 post names, the post without that line), or (None, ``text``).

    Read the rest with :func:`parse_vote`: the ``代投：饺子`` line itself is the director's header,
    not a (mislabelled) second vote line."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        m = _PROXY.match(line)
        if m:
            return m.group("name").strip(), "".join(lines[:i] + lines[i + 1 :])
    return None, text
