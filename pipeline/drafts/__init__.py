"""Drafts: the posts bansha writes for the director, in Discuz BBCode, and their approval.

A draft is made from a template in ``config/templates/<kind>.j2`` (Jinja2; a director may edit
them, or keep a folder of their own named by ``[drafts] templates`` in the game file). Every value
a template prints passes through :func:`bbcode_escape` (the environment's ``finalize``), so a
player named ``[color=red]x`` or ``[/quote]`` is shown exactly as written and can neither open a
tag nor close one of the template's. Markup belongs in the template's own text.

What is due at a moment (:func:`due_drafts`) is a pure function of the game, the derivation and
the loaded templates. :func:`save_drafts` stores only what changed: an unchanged draft is not
drafted again, a newer draft of the same key supersedes the older one still waiting, and a posted
draft is never changed. :func:`approve`, :func:`reject` and :func:`edit` move a draft along
``pending -> approved -> posted`` (or ``rejected``); every change writes a ``draft_events`` row.
Nothing here posts: the poster sends approved drafts only.

A body longer than Discuz's ``maxpostsize`` (10000 bytes by default, counted in the forum's
charset: docs/discuz.md §4.4, ``checkpost``) is split at line boundaries outside any tag pair into
parts keyed ``key#1``, ``key#2`` …, each beginning with ``〔1/2〕``.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo
from decimal import Decimal, localcontext
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from engine.cards import Card, CardEvent, Ledger, card_ledger
from engine.rulesets import get_ruleset
from engine.state import Phase
from engine.votes import Evidence, Tally, VerdictStatus, VoteVerdict
from pipeline import resources
from pipeline.derive import DayResult, Derivation, card_events, game_factions
from pipeline.game.gamefile import THREAD_ROLE_TITLES, Day, Game, ThreadRole, templates_folder
from pipeline.game.threads import (
    CLOSE_WINDOW,
    day_roles,
    game_wide,
    thread_closes,
    thread_subject,
)
from pipeline.store import DRAFT_INPUTS_KEY, Store

if TYPE_CHECKING:
    from pipeline.derive.inquiry import InquiryDay

__all__ = [
    "DEFAULT_TEMPLATES_DIR",
    "KIND_ZH",
    "MAX_POST_BYTES",
    "NO_RIGHTS_KEY",
    "STATE_ZH",
    "SUBJECT_MAX_CHARS",
    "BBCode",
    "Draft",
    "DraftAction",
    "DraftError",
    "DraftKind",
    "DraftSpec",
    "DraftState",
    "Templates",
    "approve",
    "approve_elevators",
    "bbcode_escape",
    "body_bytes",
    "cards_context",
    "close_specs",
    "day_open_context",
    "draft_events",
    "draft_key",
    "due_drafts",
    "edit",
    "elevator_context",
    "elevator_note",
    "elevator_pids",
    "elevator_rejected",
    "ensure_editable",
    "findpost_url",
    "first_result_context",
    "get_draft",
    "inquiry_answer_drafts",
    "inquiry_answers_context",
    "keep_inputs",
    "list_drafts",
    "load_templates",
    "make_drafts",
    "mark_posted",
    "moved_on",
    "newthread_key",
    "newthread_specs",
    "no_moderator_rights",
    "reject",
    "reminder_context",
    "result_context",
    "retire_opened",
    "retire_stale",
    "running_tally_context",
    "save_drafts",
    "set_aside",
    "split_body",
    "templates_dir_for",
    "thread_drafts",
    "thread_over",
    "thread_window",
]

log = logging.getLogger(__name__)

DEFAULT_TEMPLATES_DIR = resources.templates_dir()
TEMPLATE_SUFFIX = ".j2"
#: Discuz's default ``maxpostsize`` (bytes; ``strlen`` in ``checkpost``, docs/discuz.md §4.4).
MAX_POST_BYTES = 10000


class DraftError(ValueError):
    """An illegal transition, a broken template, an over-long body (message in Chinese)."""


class DraftKind(StrEnum):
    RUNNING_TALLY = "running_tally"
    RESULT = "result"
    FIRST_RESULT = "first_result"  # m209 太阳[日不落]: the first 正午 round's top
    DAY_OPEN = "day_open"
    ELEVATOR = "elevator"
    CARDS = "cards"
    REMINDER = "reminder"
    INQUIRY_ANSWERS = "inquiry_answers"
    DEAL_COMMIT = "deal_commit"  # bansha deal: the commitment for the rules thread
    DEAL_REVEAL = "deal_reveal"  # bansha deal --reveal: the deal, its salt and seed
    NEWTHREAD = "newthread"  # a day's thread bansha opens in the game's section
    CLOSE = "close"  # closing (locking) a vote thread after its close


#: kinds whose text bansha writes itself: the deal's commitment and reveal must be exactly the
#: canonical text a player hashes (docs/报名与发牌.md), so no template may reshape them
UNTEMPLATED = frozenset({DraftKind.DEAL_COMMIT, DraftKind.DEAL_REVEAL, DraftKind.CLOSE})


class DraftState(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    POSTED = "posted"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"


class DraftAction(StrEnum):
    REPLY = "reply"
    EDIT = "edit"  # replace the text of ``edit_pid`` (the 电梯 on floor 2)
    NEWTHREAD = "newthread"  # a new thread in ``[forum] fid`` (``subject`` and ``body``)
    CLOSE = "close"  # close (lock) thread ``tid``; the body only says so to the director


KIND_ZH: dict[str, str] = {
    DraftKind.RUNNING_TALLY: "计票",
    DraftKind.RESULT: "投票结果",
    DraftKind.FIRST_RESULT: "第一轮结果",
    DraftKind.DAY_OPEN: "开门公示",
    DraftKind.ELEVATOR: "电梯",
    DraftKind.CARDS: "判罚",
    DraftKind.REMINDER: "投票提醒",
    DraftKind.INQUIRY_ANSWERS: "询问回答",
    DraftKind.DEAL_COMMIT: "发牌承诺",
    DraftKind.DEAL_REVEAL: "发牌公开",
    DraftKind.NEWTHREAD: "开新帖",
    DraftKind.CLOSE: "锁帖",
}
STATE_ZH: dict[str, str] = {
    DraftState.PENDING: "待批准",
    DraftState.APPROVED: "已批准",
    DraftState.POSTED: "已发出",
    DraftState.REJECTED: "已驳回",
    DraftState.SUPERSEDED: "已取代",
}
LIVE_STATES = (DraftState.PENDING, DraftState.APPROVED)

#: Kinds whose text is made from the game's state (posts, the director's records, the engine):
#: such a draft holds only while those inputs are the ones it was drafted from. The deal's
#: texts, new threads, closes and the 电梯 index are made from the game file alone.
STATE_KINDS = frozenset(
    {
        DraftKind.RUNNING_TALLY,
        DraftKind.RESULT,
        DraftKind.FIRST_RESULT,
        DraftKind.DAY_OPEN,
        DraftKind.CARDS,
        DraftKind.REMINDER,
        DraftKind.INQUIRY_ANSWERS,
    }
)


@dataclass(frozen=True, slots=True)
class DraftSpec:
    """One post bansha proposes. ``key`` names what it is about (one live draft per key)."""

    kind: DraftKind
    day: int | None
    key: str
    tid: int | None  # the thread it goes to (None: not configured yet; paste by hand)
    action: DraftAction
    edit_pid: int | None
    title: str  # a label for the director (not sent as the post's subject)
    body: str  # Discuz BBCode, as it will be posted
    subject: str | None = None  # a new thread's subject (action newthread)
    not_before: datetime | None = None  # not sent before (a day's opening, a vote's close)
    role: str | None = None  # the thread role a newthread/close draft is about


@dataclass(frozen=True, slots=True)
class Draft:
    """A stored draft (a row of ``drafts``)."""

    id: int
    kind: str
    day: int | None
    key: str
    tid: int | None
    action: str
    edit_pid: int | None
    title: str
    body: str
    body_hash: str
    generated_body: str
    state: DraftState
    previous_id: int | None
    created_at: str
    updated_at: str
    approved_at: str | None
    posted_at: str | None
    posted_pid: int | None
    reject_why: str | None
    subject: str | None = None
    not_before: str | None = None
    role: str | None = None
    generated_subject: str | None = None  # as bansha generated it (the director may edit it)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Draft:
        return cls(
            id=row["id"],
            kind=row["kind"],
            day=row["day"],
            key=row["key"],
            tid=row["tid"],
            action=row["action"],
            edit_pid=row["edit_pid"],
            title=row["title"] or "",
            body=row["body"],
            body_hash=row["body_hash"],
            generated_body=row["generated_body"],
            state=DraftState(row["state"]),
            previous_id=row["previous_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            approved_at=row["approved_at"],
            posted_at=row["posted_at"],
            posted_pid=row["posted_pid"],
            reject_why=row["reject_why"],
            subject=row.get("subject"),
            not_before=row.get("not_before"),
            role=row.get("role"),
            generated_subject=row.get("generated_subject", row.get("subject")),
        )

    @property
    def edited(self) -> bool:
        return self.body != self.generated_body

    @property
    def kind_zh(self) -> str:
        return KIND_ZH.get(self.kind, self.kind)

    @property
    def state_zh(self) -> str:
        return STATE_ZH[self.state]


# --------------------------------------------------------------------------- BBCode escaping

#: An empty tag pair: Discuz renders it as ``<strong></strong>`` (desktop and mobile API v4 keep
#: ``[b]``), i.e. nothing, but it sits between ``[`` and the tag name, so no tag can form.
_BREAK = "[b][/b]"
# ``[`` starts every tag — only a ``[`` that could start one is broken: a tag name is ASCII
# letters (or ``*``, a list item) followed by ``=`` or ``]`` (docs/discuz.md §3.1), so ``[M135]``,
# ``[正午]`` or ``[1]`` are shown as written and stay readable in the text the director edits; a
# ``[`` with letters up to the end of the value is broken too (the template's next character
# must not close a tag the value began); ``&#`` would let Discuz turn ``&#9733;`` back into a
# character (dhtmlspecialchars); ``:`` / ``;`` before a letter or ``)(@$'`` start a smiley code
# (``:)``, ``:lol``, ``;P``), and ``://`` a bare link Discuz may turn into ``[url]``; ``{:``
# starts the other smiley sets' codes (``{:2_25:}``); ``@name`` would notify (and link) that user.
_ESCAPE_RE = re.compile(
    r"\[(?=/?[A-Za-z]*(?:[=\]*]|$))|&(?=#)|[:;](?=[A-Za-z)(@$'/])|\{(?=:)|@(?=\S)"
)
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


class BBCode(str):
    """Text that is already BBCode (escaped, or the director's own markup): printed as is."""

    __slots__ = ()


def bbcode_escape(value: object) -> BBCode:
    """``value`` as text Discuz shows exactly as written, whatever it contains.

    Line breaks and control characters become one space (a name never breaks the layout).
    Already-escaped :class:`BBCode` is returned unchanged.
    """
    if isinstance(value, BBCode):
        return value
    text = _CONTROL_RE.sub(" ", "" if value is None else str(value))
    return BBCode(_ESCAPE_RE.sub(lambda m: m.group(0) + _BREAK, text))


def _escape_lines(text: str) -> BBCode:
    """Several lines of a player's text (遗言), each escaped, the line breaks kept."""
    return BBCode("\n".join(bbcode_escape(line) for line in text.splitlines()))


def _finalize(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, BBCode):
        return value
    return bbcode_escape(value)


# --------------------------------------------------------------------------- templates


class Templates:
    """The loaded templates (one per draft kind). Rendering is pure.

    A director's template is code bansha runs: it renders in Jinja's immutable sandbox, so it
    can read the values it is given but reach no Python internals (``''.__class__``, ``__mro__``,
    ``__globals__`` …) and change nothing; such a template is refused with a Chinese error."""

    def __init__(self, texts: Mapping[str, str], origin: Mapping[str, Path]) -> None:
        self.origin = dict(origin)
        self.env = ImmutableSandboxedEnvironment(
            loader=jinja2.DictLoader(dict(texts)),
            autoescape=False,  # HTML escaping is wrong for BBCode: finalize escapes instead
            finalize=_finalize,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        self.env.filters["bbcode_escape"] = bbcode_escape
        missing = [
            k.value
            for k in DraftKind
            if k not in UNTEMPLATED and k.value + TEMPLATE_SUFFIX not in texts
        ]
        if missing:
            raise DraftError(
                "缺少草稿模板："
                + "、".join(f"{m}{TEMPLATE_SUFFIX}" for m in missing)
                + f"（应在 {DEFAULT_TEMPLATES_DIR} 中）"
            )

    def render(self, kind: DraftKind, context: Mapping[str, Any]) -> str:
        name = kind.value + TEMPLATE_SUFFIX
        where = self.origin.get(name, Path(name))
        try:
            text = self.env.get_template(name).render(**context)
        except jinja2.TemplateSyntaxError as exc:
            raise DraftError(f"草稿模板 {where} 第 {exc.lineno} 行语法错误：{exc.message}") from exc
        except jinja2.exceptions.SecurityError as exc:
            raise DraftError(
                f"草稿模板 {where} 试图使用模板中不允许的内部属性或方法"
                f"{_unsafe_what(str(exc))}，已拒绝生成（模板只能读取说明中列出的变量）"
            ) from exc
        except jinja2.UndefinedError as exc:
            raise DraftError(f"草稿模板 {where} 用了没有的变量：{exc.message}") from exc
        except jinja2.TemplateError as exc:
            raise DraftError(f"草稿模板 {where} 无法生成：{exc}") from exc
        except Exception as exc:  # a director's template is code: 1/0, range(10**9) …
            raise DraftError(
                f"草稿模板 {where} 生成时出错（{type(exc).__name__}：{exc}），请检查模板"
            ) from exc
        return _tidy(text)


_UNSAFE_RE = re.compile(r"attribute '([^']*)' of '([^']*)' object")


def _unsafe_what(message: str) -> str:
    """Jinja's SecurityError in Chinese: which attribute of which kind of value."""
    m = _UNSAFE_RE.search(message)
    return f"（{m.group(2)} 的 {m.group(1)}）" if m else ""


def load_templates(templates_dir: Path | str | None = None) -> Templates:
    """Read the templates (the only I/O here): ``config/templates``, then the director's folder.

    A kind with a file in ``templates_dir`` uses it; the others keep the default.
    """
    texts: dict[str, str] = {}
    origin: dict[str, Path] = {}
    folders = [DEFAULT_TEMPLATES_DIR]
    if templates_dir is not None:
        folder = Path(templates_dir)
        if not folder.is_dir():
            raise DraftError(f"草稿模板目录不存在：{folder}")
        folders.append(folder)
    for folder in folders:
        inside = folder.resolve()
        for kind in DraftKind:
            path = folder / (kind.value + TEMPLATE_SUFFIX)
            if not path.is_file():
                continue
            if inside not in path.resolve().parents:
                raise DraftError(
                    f"草稿模板 {path} 是指向模板目录之外的符号链接，不予读取；"
                    "请把模板文件本身放进模板目录"
                )
            try:
                texts[path.name] = path.read_text(encoding="utf-8-sig")  # Notepad: a BOM
            except (OSError, UnicodeDecodeError) as exc:
                raise DraftError(f"无法读取草稿模板 {path}：{exc}") from exc
            origin[path.name] = path
    return Templates(texts, origin)


def templates_dir_for(game: Game, game_path: Path) -> Path | None:
    """The director's template folder of ``[drafts] templates``, relative to the game file and
    inside its folder (no ``..``, no absolute path elsewhere, no symbolic link out of it: the
    game file check says so first, this holds for a game built in memory too)."""
    folder = game.drafts.templates
    if folder is None:
        return None
    try:
        return templates_folder(folder, Path(game_path).resolve().parent)
    except ValueError as exc:
        raise DraftError(f"游戏文件 {game_path}：drafts.templates：{exc}") from exc


def _tidy(text: str) -> str:
    """Trailing spaces off every line, runs of blank lines to one, no blank first/last line."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


# --------------------------------------------------------------------------- length


def body_bytes(text: str, charset: str) -> int:
    """The size Discuz's ``strlen`` sees: bytes in the forum's charset.

    ``auto`` (charset not known yet) takes the larger of UTF-8 and GBK. A character GBK cannot
    hold counts as the numeric entity it would have to be sent as.
    """
    if charset == "gbk":
        return len(text.encode("gbk", errors="xmlcharrefreplace"))
    if charset in ("utf-8", "utf8"):
        return len(text.encode("utf-8"))
    return max(body_bytes(text, "utf-8"), body_bytes(text, "gbk"))


_TAG_RE = re.compile(r"\[(/?)([A-Za-z]+)(=[^\]\r\n]*)?\]")
#: Tags that come in pairs (Discuz's simple and regex tags, docs/discuz.md §3.1, plus the blocks).
_PAIRED = frozenset(
    [
        "b",
        "i",
        "u",
        "s",
        "p",
        "color",
        "backcolor",
        "size",
        "font",
        "align",
        "float",
        "indent",
        "list",
        "url",
        "email",
        "quote",
        "code",
        "free",
        "hide",
        "img",
        "table",
        "tr",
        "td",
        "media",
        "audio",
        "flash",
        "qq",
    ]
)
_PART_MARK = "〔{i}/{n}〕"


def _advance(stack: tuple[tuple[str, str], ...], line: str) -> tuple[tuple[str, str], ...]:
    """The tags still open after ``line`` (name, opening text), innermost last."""
    st = list(stack)
    for m in _TAG_RE.finditer(line):
        name = m.group(2).lower()
        if name not in _PAIRED:
            continue
        if m.group(1):
            for i in range(len(st) - 1, -1, -1):
                if st[i][0] == name:
                    del st[i:]
                    break
        else:
            st.append((name, m.group(0)))
    return tuple(st)


def split_body(body: str, *, charset: str, limit: int = MAX_POST_BYTES) -> list[str]:
    """``body`` as one part, or as parts of at most ``limit`` bytes each, marked 〔i/n〕.

    Parts end at line boundaries where no tag pair is open. Only when a single tag pair is itself
    longer than a part may it be cut, and then the part closes the open tags and the next one
    reopens them, so every part is well formed on its own.
    """
    if body_bytes(body, charset) <= limit:
        return [body]
    lines = body.split("\n")
    stacks: list[tuple[tuple[str, str], ...]] = []
    st: tuple[tuple[str, str], ...] = ()
    for line in lines:
        st = _advance(st, line)
        stacks.append(st)
    upto = [0]  # upto[k]: bytes of lines[:k]
    for line in lines:
        upto.append(upto[-1] + body_bytes(line, charset))
    newline = body_bytes("\n", charset)
    reserve = body_bytes(_PART_MARK.format(i=999, n=999) + "\n", charset)
    budget = limit - reserve

    def cost(start: int, end: int, opening: tuple[tuple[str, str], ...]) -> int:
        closing = stacks[end - 1]
        return (
            upto[end]
            - upto[start]
            + newline * (end - start - 1)
            + sum(body_bytes(t, charset) for _, t in opening)
            + sum(body_bytes(f"[/{n}]", charset) for n, _ in closing)
        )

    chunks: list[str] = []
    start = 0
    opening: tuple[tuple[str, str], ...] = ()
    while start < len(lines):
        best_any: int | None = None
        best_safe: int | None = None
        for end in range(start + 1, len(lines) + 1):
            if cost(start, end, opening) > budget:
                break
            best_any = end
            if not stacks[end - 1]:
                best_safe = end
        if best_any is None:
            head = lines[start][:20]
            raise DraftError(
                f"草稿中有一行（“{head}…”）本身超过论坛长度上限 {limit} 字节，无法分段；请删减"
            )
        end = best_any if best_any == len(lines) or best_safe is None else best_safe
        closing = stacks[end - 1]
        text = "".join(t for _, t in opening) + "\n".join(lines[start:end])
        text += "".join(f"[/{n}]" for n, _ in reversed(closing))
        chunks.append(text)
        opening = closing
        start = end
    # blank lines at a cut are noise
    chunks = [c.strip("\n") for c in chunks]
    n = len(chunks)
    return [_PART_MARK.format(i=i, n=n) + "\n" + c for i, c in enumerate(chunks, 1)]


# --------------------------------------------------------------------------- formatting


def _votes(value: Fraction) -> str:
    """Exact votes as a director writes them: 5, 5.5, 1/3."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:  # a terminating decimal: exact
        with localcontext() as ctx:
            ctx.prec = 60
            exact = Decimal(value.numerator) / Decimal(value.denominator)
        return format(exact.normalize(), "f")
    return f"{value.numerator}/{value.denominator}"


def _when(dt: datetime, tz: tzinfo) -> str:
    local = dt.astimezone(tz)
    return f"{local.month}月{local.day}日 {local:%H:%M}"


def _announce_tid(game: Game, day: Day) -> int | None:
    """The thread announcements go to: the rule set's ``announce_in`` (m209.txt:155 and
    zhenyan.txt:31 say the discussion thread), else the other of discussion/vote."""
    first = get_ruleset(game.game.ruleset).announce_in
    other = "vote" if first == "discussion" else "discussion"
    tid: int | None = getattr(day, first) or getattr(day, other)
    return tid


def findpost_url(tid: int, pid: int) -> str:
    """A link to the post that finds it whatever floor it shows now (docs/discuz.md §1.3: floors
    renumber after a delete; key everything by pid). Relative: Discuz prefixes the site URL."""
    return f"forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={pid}"


def _post_url(ev: Evidence) -> str:
    """The findpost link of a post in a thread; "" for a journal record (a 代投 by command)."""
    return findpost_url(ev.tid, ev.pid) if ev.pid > 0 and ev.tid > 0 else ""


def _post_link(ev: Evidence, text: str) -> BBCode | None:
    """``[url=…findpost…]text[/url]`` for a post in a thread; None for a journal record."""
    url = _post_url(ev)
    return BBCode(f"[url={url}]{bbcode_escape(text)}[/url]") if url else None


def _post_label(v: VoteVerdict) -> BBCode:
    """Where a vote was cast, pid-stable: a link to the post, never the floor it showed (a
    moderator's delete renumbers floors, and a public draft must not change with them)."""
    return _post_link(v.ballot.evidence, "原帖") or BBCode("导演代投")


def _counts_context(t: Tally) -> dict[str, Any]:
    ordered = sorted(t.counts, key=lambda c: (-t.counts[c], c))
    leader = t.top[0] if len(t.top) == 1 else None
    return {
        "public_counts": t.public_counts,
        "public_voters": t.public_voters,
        "counts": [
            {"name": c, "votes": _votes(t.counts[c]), "voters": list(t.voters.get(c, []))}
            for c in ordered
            if t.counts[c] > 0
        ],
        "abstained": list(t.abstained),
        "abstain_votes": _votes(
            sum((t.weights.get(v, Fraction(1)) for v in t.abstained), Fraction(0))
        ),
        "total": _votes(t.total),
        "weights": [
            {"voter": v, "weight": _votes(t.weights[v]), "why": t.weight_reasons[v]}
            for v in sorted(t.weight_reasons)
            if v in t.weights
        ],
        "leader": leader,
        "top": list(t.top),
    }


def _not_counted(
    res: DayResult, tz: tzinfo, verdicts: Sequence[VoteVerdict] | None = None
) -> list[dict[str, Any]]:
    rows = []
    for v in res.verdicts if verdicts is None else verdicts:
        if v.status not in (VerdictStatus.INVALID, VerdictStatus.IGNORED):
            continue
        if v.voter_unit is None:
            continue  # a non-player's post: not a vote at all
        b = v.ballot
        label = _post_label(v)
        rows.append(
            {
                "post": label,
                "floor": label,  # the name older templates use: the same pid-stable label
                "url": _post_url(b.evidence),
                "at": _when(b.evidence.at, tz),
                "voter": v.voter_unit,
                "target": b.target or b.target_raw,
                "reason": v.reason,  # public (the verdict's director-only note never goes here)
                "status": "无效" if v.status is VerdictStatus.INVALID else "不计",
            }
        )
    return rows


def _base_context(game: Game, day: int | None) -> dict[str, Any]:
    return {
        "game_title": game.game.title,
        "ruleset": game.game.ruleset,
        "day": day,
        "signature": BBCode(game.drafts.director_signature),
    }


def _living(game: Game, res: DayResult, at: datetime) -> list[str]:
    return [
        p.name
        for p in game.players
        if not (p.name in res.out_before and res.out_before[p.name] <= at)
    ]


# --------------------------------------------------------------------------- the contexts


def running_tally_context(
    game: Game, res: DayResult, *, as_of: datetime | None = None
) -> dict[str, Any] | None:
    """None when there is nothing to count yet, or when the set publishes the count only at the
    end of the day (zhenyan.txt:37 投票为匿名投票…在白天结束时，统计投票结果并公布).

    On a 太阳[日不落] day (m209.txt:377-378) the first 正午 round is counted until it ends
    (``as_of`` before ``first_closes``), the extra round afterwards; ``round`` names it."""
    verdicts, t, closes, label = res.verdicts, res.tally, res.day.closes, ""
    if res.first is not None:
        label = "额外一轮[正午]"
        if as_of is not None and as_of < res.first.closes:
            verdicts, t, closes = res.first.verdicts, res.first.tally, res.first.closes
            label = "第一轮[正午]"
    if t is None or not verdicts or not t.public_voters:
        return None
    tz = game.game.tz
    last = max(verdicts, key=lambda v: (v.ballot.evidence.at, v.ballot.evidence.pid))
    ev = last.ballot.evidence
    # by time and a link, never the floor: floors renumber after a delete
    link = _post_link(ev, "最新一票")
    last_vote = BBCode(_when(ev.at, tz) + (f"（{link}）" if link is not None else ""))
    not_counted = _not_counted(res, tz, verdicts)
    return {
        **_base_context(game, res.day.day),
        **_counts_context(t),
        "election": t.sheriff_election,
        "round": BBCode(label),  # our own words
        "last_vote": last_vote,
        "closes": _when(closes, tz),
        "invalid": not_counted,
        "invalid_count": len(not_counted),
    }


#: The note engine.rulesets.base.apply_block leaves on a stopped vote-out.
_BLOCKED_NOTE = "本应出局："


def _blocked_top(t: Tally) -> str | None:
    """The top a status stopped from going out (霸道/不死: 平安日, m209.txt:166), else None."""
    if t.out is not None or t.sheriff_election:
        return None
    try:
        block_rule = get_ruleset(t.ruleset).ref("block_out")
    except (KeyError, ValueError):
        return None
    if t.rule != block_rule:
        return None
    return next((n[len(_BLOCKED_NOTE) :] for n in t.notes if n.startswith(_BLOCKED_NOTE)), None)


def _day_top(t: Tally) -> str | None:
    """Who had the most votes as the rule set decides it (m209.txt:169: a skill's top, else the
    unique maximum, else the sheriff's pick) — also when a status stopped the vote-out."""
    if t.out is not None:
        return t.out
    return _blocked_top(t) or (t.top[0] if len(t.top) == 1 else None)


def _public_decided_by(t: Tally) -> str:
    """Why the day went as it did, in public words: a stopped vote-out says 平安日 and not which
    status (or whose skill) stopped it — that is the engine's 公示 to make, if any."""
    blocked = _blocked_top(t)
    return f"最高票{blocked}不出局，平安日" if blocked is not None else t.decided_by


def _mentioned(name: str | None, lines: Sequence[str]) -> bool:
    """A 公示 line already says who had the most votes (e.g. "今日最高票：壬，…")."""
    return name is not None and any(name in line and "最高票" in line for line in lines)


def result_context(
    game: Game, res: DayResult, announcements: Sequence[str] = ()
) -> dict[str, Any] | None:
    """The vote result; ``announcements``: the engine's 公示 of the day once the director
    resolved it (白痴翻牌, 迷魂烤全羊, 警长移交 …, as the rule set words them).

    The engine's lines replace the tally's out line, never its top: when they are empty or do
    not name the day's top, the top (m209 publishes only the top, m209.txt:167) is still said,
    and a stopped vote-out still says 平安日 (m209.txt:166) when no line does."""
    t = res.tally
    if t is None:
        return None
    tz = game.game.tz
    not_counted = _not_counted(res, tz)
    lines = list(announcements)
    top = _day_top(t)
    peace = _blocked_top(t)
    first = res.first.tally if res.first is not None else None
    first_top = _day_top(first) if first is not None else None
    return {
        **_base_context(game, res.day.day),
        **_counts_context(t),
        "election": t.sheriff_election,
        "out": t.out,
        "elected": t.elected,
        "decided_by": _public_decided_by(t),
        # the day's top as the rule set decides it (also when a status stopped the vote-out)
        "day_top": top,
        "show_top": not lines or (top is not None and not _mentioned(top, lines)),
        # 平安日 (m209.txt:166): the top a [霸道]/[不死] stopped; shown unless a 公示 line says it
        "peace": peace,
        "show_peace": peace is not None and not any("平安日" in line for line in lines),
        # the count notes can name counts (m209 hides them) and the time a count was reached
        "notes": list(t.notes) if t.public_counts else [],
        "closes": _when(res.day.closes, tz),
        "invalid": not_counted,
        "invalid_count": len(not_counted),
        "announcements": lines,
        # 太阳[日不落] (m209.txt:377-378): the first 正午 round's top goes out at 黄昏 too
        "first": (
            {
                "out": first.out,
                "decided_by": _public_decided_by(first),
                "top": first_top,
                "show_top": not lines
                or (first_top is not None and not _mentioned(first_top, lines)),
                "peace": _blocked_top(first),
            }
            if first is not None
            else None
        ),
    }


def first_result_context(game: Game, res: DayResult) -> dict[str, Any] | None:
    """The first 正午 round of a 太阳[日不落] day: only its top is announced (m209.txt:167);
    the top is not out before 黄昏 and may still speak and vote (m209.txt:378)."""
    r = res.first
    if r is None:
        return None
    tz = game.game.tz
    not_counted = _not_counted(res, tz, r.verdicts)
    return {
        **_base_context(game, res.day.day),
        "top": _day_top(r.tally),
        "decided_by": _public_decided_by(r.tally),
        "peace": _blocked_top(r.tally),  # a [霸道]/[不死] top is not out (m209.txt:166)
        "first_closes": _when(r.closes, tz),
        "closes": _when(res.day.closes, tz),
        "vote_tid": res.day.vote,
        "invalid": not_counted,
        "invalid_count": len(not_counted),
    }


def _public_cause(d: Derivation, name: str, cause: str) -> str:
    stored, public = d.engine_outs.get(name, ("", ""))
    return public if stored == cause else cause


def day_open_context(game: Game, d: Derivation, prev: Day | None, day: Day) -> dict[str, Any]:
    """The opening of ``day``: the outs since ``prev`` opened (since the start for the first
    day, whose opening lists the first night's outs), the night's 公示, 遗言, the sheriff."""
    tz = game.game.tz
    since = prev.opens if prev is not None else None
    # by time; at the same time (a night's outs, all at the opening) in the order they went
    # out, as the engine listed them (公示出局名单时按角色出局的顺序排序, m209.txt:156)
    outs = sorted(
        (
            (at, name, cause)
            for name, (at, cause) in d.outs.items()
            if (since is None or since < at) and at <= day.opens
        ),
        key=lambda o: o[0],
    )
    res = d.days.get(day.day)
    sheriff = res.sheriff if res is not None else None
    return {
        **_base_context(game, day.day),
        "prev_day": prev.day if prev is not None else None,
        # an out the engine resolved shows its public category, never the skill (女巫[毒药] …);
        # the director's own records (player out, red cards) keep the words written
        "outs": [
            {"name": n, "cause": _public_cause(d, n, c), "at": _when(at, tz)} for at, n, c in outs
        ],
        "announcements": list(d.public.get(Phase.night(day.day - 1).label, ())),
        # the 遗言 line of the day-open post (None: the rule set has no such line)
        "lastwords": get_ruleset(game.game.ruleset).lastwords.day_open_note,
        # 遗言 recorded for the players in the list (bansha lastwords add), in out order
        "said": [
            {"name": n, "text": _escape_lines(d.lastwords[n].text)}
            for _at, n, _c in outs
            if n in d.lastwords and not d.lastwords_refusal(n)
        ],
        "sheriff": sheriff,
        "opens": _when(day.opens, tz),
        "closes": _when(day.closes, tz),
        "discussion_tid": day.discussion,
        "vote_tid": day.vote,
        "progress_tid": day.progress,
        "inquiry_tid": day.inquiry,
        # 太阳[日不落] (m209.txt:377-378): the first 正午 round's thread and its end
        "first_vote_tid": day.first_vote,
        "first_closes": _when(day.first_closes, tz) if day.first_closes else None,
    }


def elevator_context(game: Game, res: DayResult) -> dict[str, Any] | None:
    day = res.day
    if day.discussion is None:
        return None
    # 离开游戏的角色在电梯楼中消失 (m209.txt:210)
    living = set(_living(game, res, day.opens)) - res.absent
    return {
        **_base_context(game, day.day),
        "tid": day.discussion,
        # after a 替补 the link follows the account that plays the slot now
        "players": [
            {"name": p.name, "uid": res.accounts.get(p.name, p.uid)}
            for p in game.players
            if p.name in living
        ],
    }


def reminder_context(
    game: Game, res: DayResult, *, as_of: datetime, minutes: int
) -> dict[str, Any] | None:
    voted: set[str] = set()
    tried: set[str] = set()
    for v in res.all_verdicts:  # a 日不落 day: a first-round vote is a vote of the day
        who = v.ballot.voter
        if v.status in (VerdictStatus.COUNTED, VerdictStatus.SUPERSEDED):
            voted.add(who)
        else:
            tried.add(who)
    # who may vote in the (last) round: not a leaver, not one the rules bar (m209 太阳[日], 白痴)
    living = [n for n in _living(game, res, as_of) if n not in res.absent | res.barred]
    not_voted = [n for n in living if n not in voted and n not in tried]
    invalid_only = [n for n in living if n not in voted and n in tried]
    if not not_voted and not invalid_only:
        return None
    tz = game.game.tz
    return {
        **_base_context(game, res.day.day),
        "minutes": minutes,
        "closes": _when(res.day.closes, tz),
        "vote_tid": res.day.vote,
        "not_voted": not_voted,
        "invalid_only": invalid_only,
        # anonymous votes (zhenyan): whose vote is invalid is not said in public
        "public_voters": res.tally.public_voters if res.tally is not None else True,
        "no_valid_vote": [n for n in living if n not in voted],
        "election": bool(res.tally and res.tally.sheriff_election),
    }


def _event_key(e: CardEvent) -> tuple[datetime, str, int, str, str]:
    # the order engine.cards replays events in
    return (e.at, e.player, e.colour.rank, e.source, e.reason)


_FLAG_DAY_RE = re.compile(r"^d(\d+)-")


def _event_day(e: CardEvent, d: Derivation, days: Sequence[Day]) -> int:
    flag = next((f for f in d.flags if f.id == e.source), None)
    if flag is not None:
        return flag.day
    if m := _FLAG_DAY_RE.match(e.source):
        return int(m.group(1))
    started = [day.day for day in days if day.opens <= e.at]
    return started[-1] if started else days[0].day


def cards_context(
    game: Game, d: Derivation, n: int, events: Sequence[CardEvent]
) -> dict[str, Any] | None:
    """Cards given for day ``n`` (confirmed flags and by hand), with what they escalated to.

    Escalations are attributed by replaying the ledger one event at a time. A faction's loss is
    never printed (m209.txt:146 不予公示; elsewhere it would name a faction's players).
    """
    days = sorted(game.days, key=lambda x: x.day)
    if not days:
        return None
    factions = game_factions(game)
    ordered = sorted(events, key=_event_key)
    flags = {f.id: f for f in d.flags}
    rows: list[dict[str, Any]] = []
    escalations: list[str] = []
    red_outs: list[str] = []
    players: list[str] = []
    card_rules = get_ruleset(game.game.ruleset).cards
    prev: Ledger = card_ledger([], factions, rules=card_rules)
    last: Ledger | None = None
    for i, e in enumerate(ordered):
        ledger = card_ledger(ordered[: i + 1], factions, rules=card_rules)
        if _event_day(e, d, days) == n:
            flag = flags.get(e.source)
            rows.append(
                {
                    "player": e.player,
                    "colour": e.colour.value,
                    "reason": e.reason,
                    "what": flag.kind.zh if flag is not None else "导演判罚",
                }
            )
            escalations += list(ledger.escalations[len(prev.escalations) :])
            red_outs += [p for p in ledger.out_by_red if p not in prev.out_by_red]
            if e.player not in players:
                players.append(e.player)
            last = ledger
        prev = ledger
    if not rows or last is None:
        return None
    standing = []
    for name in players:
        pc = last.players.get(name)
        if pc is not None:
            standing.append({"player": name, "blue": pc.blue, "yellow": pc.yellow, "red": pc.red})
    return {
        **_base_context(game, n),
        "cards": rows,
        "escalations": escalations,
        "red_outs": red_outs,
        "standing": standing,
        "blue": Card.BLUE.value,
        "yellow": Card.YELLOW.value,
        "red": Card.RED.value,
    }


def inquiry_answers_context(
    game: Game, day: Day, answers: Sequence[tuple[int, str]]
) -> dict[str, Any]:
    tid = day.inquiry
    return {
        **_base_context(game, day.day),
        "tid": tid,
        "answers": [{"pid": pid, "answer": answer, "tid": tid} for pid, answer in answers],
    }


# --------------------------------------------------------------------------- what is due


_TITLES: dict[DraftKind, str] = {
    DraftKind.RUNNING_TALLY: "第{day}天 计票（进行中）",
    DraftKind.RESULT: "第{day}天 投票结果",
    DraftKind.FIRST_RESULT: "第{day}天 第一轮[正午]结果",
    DraftKind.DAY_OPEN: "第{day}天 开门公示",
    DraftKind.ELEVATOR: "第{day}天 电梯",
    DraftKind.CARDS: "第{day}天 判罚",
    DraftKind.REMINDER: "第{day}天 投票提醒",
    DraftKind.INQUIRY_ANSWERS: "第{day}天 询问回答",
}


def draft_key(kind: DraftKind, day: int | None) -> str:
    return f"{kind.value}:d{day}" if day is not None else kind.value


def _charset(game: Game) -> str:
    return game.forum.encoding


def _specs(
    game: Game,
    templates: Templates,
    kind: DraftKind,
    day: int,
    context: Mapping[str, Any],
    *,
    tid: int | None,
    action: DraftAction = DraftAction.REPLY,
    edit_pid: int | None = None,
    key_suffix: str = "",
) -> list[DraftSpec]:
    body = templates.render(kind, context)
    key = draft_key(kind, day) + key_suffix
    title = _TITLES[kind].format(day=day)
    parts = split_body(body, charset=_charset(game), limit=game.drafts.max_post_bytes)
    if len(parts) == 1:
        return [DraftSpec(kind, day, key, tid, action, edit_pid, title, body)]
    n = len(parts)
    return [
        DraftSpec(
            kind,
            day,
            f"{key}#{i}",
            tid,
            action if i == 1 else DraftAction.REPLY,
            edit_pid if i == 1 else None,
            f"{title}（{i}/{n}）",
            part,
        )
        for i, part in enumerate(parts, 1)
    ]


# long (110 lines): the list of every draft kind's due rule, one after another: it reads as the
# drafting schedule
def due_drafts(
    game: Game,
    derivation: Derivation,
    *,
    as_of: datetime,
    templates_dir: Path | str | None = None,
    templates: Templates | None = None,
    cards: Sequence[CardEvent] = (),
    floor2: Mapping[int, int] | None = None,
    unsettled: Collection[int] = (),
    unsettled_first: Collection[int] = (),
) -> list[DraftSpec]:
    """Every draft due at ``as_of``, in day order.

    - running tally: while the vote thread is open and has votes;
    - reminder: within ``[drafts] reminder_minutes`` before the close, when someone has no
      counted vote yet;
    - first-round result (m209 太阳[日不落]): once the first 正午 round has ended and its
      thread was read whole again (not in ``unsettled_first``);
    - result and cards: once the day has closed (cards only when some were given for the day;
      a ruling made days later still drafts);
    - day open (of the next day): from a day's close until the next day closes;
    - elevator: while the day is open — an edit of the director's floor 2 when its pid is known
      (``floor2``: discussion tid -> pid), else a reply.

    ``cards`` are the card events (``pipeline.derive.card_events``). ``unsettled``: closed days
    whose threads have not been read whole again since the close — their result, cards and the
    next day's opening wait, so a public result is never drafted from a crawl that missed the
    last votes. Pure, given ``templates`` (loaded from ``templates_dir`` when not given).
    """
    if templates is None:
        templates = load_templates(templates_dir)
    floor2 = floor2 or {}
    tz = game.game.tz
    days = sorted(game.days, key=lambda x: x.day)
    specs: list[DraftSpec] = []
    for i, day in enumerate(days):
        res = derivation.days.get(day.day)
        if res is None:
            continue
        n = day.day
        announce = _announce_tid(game, day)
        is_open = day.opens <= as_of < day.closes
        if day.discussion is not None and is_open:
            ctx = elevator_context(game, res)
            if ctx is not None:
                pid = floor2.get(day.discussion)
                specs += _specs(
                    game,
                    templates,
                    DraftKind.ELEVATOR,
                    n,
                    ctx,
                    tid=day.discussion,
                    action=DraftAction.EDIT if pid else DraftAction.REPLY,
                    edit_pid=pid,
                )
        if day.vote is not None and is_open:
            ctx = running_tally_context(game, res, as_of=as_of)
            if ctx is not None:
                # the first 正午 round's tally is its own draft, retired when the round ends
                first = FIRST_ROUND_KEY if str(ctx["round"]).startswith("第一轮") else ""
                specs += _specs(
                    game, templates, DraftKind.RUNNING_TALLY, n, ctx, tid=announce, key_suffix=first
                )
            minutes = game.drafts.reminder_minutes
            if as_of >= day.closes - timedelta(minutes=minutes):
                ctx = reminder_context(game, res, as_of=as_of, minutes=minutes)
                if ctx is not None:
                    specs += _specs(game, templates, DraftKind.REMINDER, n, ctx, tid=announce)
        if (
            day.first_closes is not None
            and res.first is not None
            and as_of >= day.first_closes
            and n not in unsettled_first
        ):
            ctx = first_result_context(game, res)
            if ctx is not None:
                specs += _specs(game, templates, DraftKind.FIRST_RESULT, n, ctx, tid=announce)
        if (
            i == 0
            and as_of < day.closes
            and (
                any(at <= day.opens for at, _c in derivation.outs.values())
                or derivation.deaths_in.get(Phase.night(n - 1).label, 0) > 0
            )
        ):
            # the first night's outs or lost cards (tubian24 首夜, m135 第零晚's first cards):
            # the first day's opening
            ctx = day_open_context(game, derivation, None, day)
            specs += _specs(game, templates, DraftKind.DAY_OPEN, n, ctx, tid=day.discussion)
        if as_of < day.closes or n in unsettled:
            continue
        ctx = cards_context(game, derivation, n, cards)
        if ctx is not None:
            specs += _specs(game, templates, DraftKind.CARDS, n, ctx, tid=announce)
        if n in derivation.stale_days:
            # a stale resolution (the count changed after day resolve) holds the result and
            # the next opening: they would contradict each other (derive.warnings says so)
            continue
        if day.vote is not None:
            ctx = result_context(game, res, derivation.public.get(Phase.day(n).label, ()))
            if ctx is not None:
                specs += _specs(game, templates, DraftKind.RESULT, n, ctx, tid=announce)
        if i + 1 < len(days) and as_of < days[i + 1].closes:
            nxt = days[i + 1]
            ctx = day_open_context(game, derivation, day, nxt)
            specs += _specs(game, templates, DraftKind.DAY_OPEN, nxt.day, ctx, tid=nxt.discussion)
    log.debug("due at %s: %s", as_of.astimezone(tz).isoformat(), [s.key for s in specs])
    return specs


def inquiry_answer_drafts(
    game: Game,
    day: int,
    answers: Sequence[tuple[int, str]],
    *,
    templates: Templates | None = None,
    templates_dir: Path | str | None = None,
) -> list[DraftSpec]:
    """The hook for zhenyan's 询问贴: one reply answering ``(question pid, answer)`` pairs.

    The answers are the sheriff's or the director's words (是/否/不知道, 猜测正确 …); the
    template links each to its question. Save the result with :func:`save_drafts`.
    """
    if templates is None:
        templates = load_templates(templates_dir)
    the_day = game.day(day)
    if not answers:
        return []
    ctx = inquiry_answers_context(game, the_day, answers)
    return _specs(game, templates, DraftKind.INQUIRY_ANSWERS, day, ctx, tid=the_day.inquiry)


# --------------------------------------------------------------------------- the store


def _hash(body: str) -> str:
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _iso_or_none(at: datetime | None) -> str | None:
    return at.isoformat() if at is not None else None


def _stamp(now: datetime) -> str:
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError(f"时间缺少时区：{now.isoformat()}")
    return now.isoformat()


def get_draft(store: Store, draft_id: int) -> Draft:
    rows = list(store.db.query("SELECT * FROM drafts WHERE id = ?", [draft_id]))
    if not rows:
        raise DraftError(f"没有编号为 {draft_id} 的草稿（用 bansha drafts 查看）")
    return Draft.from_row(rows[0])


def list_drafts(store: Store, *, include_superseded: bool = False) -> list[Draft]:
    sql = "SELECT * FROM drafts"
    if not include_superseded:
        sql += " WHERE state != 'superseded'"
    return [Draft.from_row(r) for r in store.db.query(sql + " ORDER BY id")]


def draft_events(store: Store, draft_id: int) -> list[dict[str, Any]]:
    return list(
        store.db.query("SELECT * FROM draft_events WHERE draft_id = ? ORDER BY id", [draft_id])
    )


def _latest(store: Store, key: str) -> Draft | None:
    rows = list(
        store.db.query("SELECT * FROM drafts WHERE key = ? ORDER BY id DESC LIMIT 1", [key])
    )
    return Draft.from_row(rows[0]) if rows else None


def _event(
    store: Store, draft_id: int, at: str, from_state: str | None, to_state: str, note: str
) -> None:
    store.db.execute(
        "INSERT INTO draft_events(draft_id, at, from_state, to_state, note) VALUES (?, ?, ?, ?, ?)",
        [draft_id, at, from_state, to_state, note],
    )


def _supersede(store: Store, draft: Draft, at: str, note: str) -> None:
    cur = store.db.execute(
        "UPDATE drafts SET state = 'superseded', updated_at = ? "
        "WHERE id = ? AND state IN ('pending', 'approved')",
        [at, draft.id],
    )
    if cur.rowcount:
        _event(store, draft.id, at, draft.state.value, DraftState.SUPERSEDED.value, note)


def _unchanged(latest: Draft, spec: DraftSpec) -> bool:
    """Nothing new to draft: same generated text for the same thread (and, for a draft still
    waiting, the same action: a 电梯 reply becomes an edit once floor 2 is known)."""
    if latest.state is DraftState.SUPERSEDED:
        return False  # no live draft of this key is left: draft it again
    if latest.generated_body != spec.body or latest.tid != spec.tid:
        return False
    generated_subject = latest.generated_subject if latest.generated_subject else latest.subject
    if generated_subject != spec.subject or latest.not_before != _iso_or_none(spec.not_before):
        return False  # (a subject the director edited is kept: the generated one is compared)
    if latest.state in LIVE_STATES:
        return latest.action == spec.action.value and latest.edit_pid == spec.edit_pid
    return True


#: The key suffix of a 太阳[日不落] day's first-round running tally.
FIRST_ROUND_KEY = ":first"


def _base_key(key: str) -> str:
    return key.split("#", 1)[0]


def save_drafts(store: Store, specs: Iterable[DraftSpec], *, now: datetime) -> list[int]:
    """Store the drafts whose text changed; return the new drafts' ids.

    A spec whose body equals the latest draft of its key (as bansha generated it) drafts nothing,
    whatever that draft's state. A new draft supersedes the pending or approved drafts of its key
    (and, when a split changed, the parts of the same draft it no longer has). A posted draft is
    never changed. All of it in one transaction.
    """
    at = _stamp(now)
    specs = list(specs)
    created: list[int] = []
    with store.atomic():
        touched_bases: dict[str, set[str]] = {}
        for spec in specs:
            touched_bases.setdefault(_base_key(spec.key), set()).add(spec.key)
        changed_bases: set[str] = set()
        for spec in specs:
            latest = _latest(store, spec.key)
            if latest is not None and _unchanged(latest, spec):
                continue
            row = {
                "kind": spec.kind.value,
                "day": spec.day,
                "key": spec.key,
                "tid": spec.tid,
                "action": spec.action.value,
                "edit_pid": spec.edit_pid,
                "title": spec.title,
                "body": spec.body,
                "body_hash": _hash(spec.body),
                "generated_body": spec.body,
                "state": DraftState.PENDING.value,
                "previous_id": latest.id if latest is not None else None,
                "created_at": at,
                "updated_at": at,
                "subject": spec.subject,
                "generated_subject": spec.subject,
                "not_before": _iso_or_none(spec.not_before),
                "role": spec.role,
            }
            cur = store.db.execute(
                f"INSERT INTO drafts({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                list(row.values()),
            )
            new_id = int(cur.lastrowid or 0)
            _event(store, new_id, at, None, DraftState.PENDING.value, "生成")
            _made_now(store, new_id, spec.kind)
            for old in store.db.query(
                "SELECT * FROM drafts WHERE key = ? AND id != ? AND state IN "
                "('pending', 'approved')",
                [spec.key, new_id],
            ):
                _supersede(store, Draft.from_row(old), at, f"被第 {new_id} 号草稿取代")
            created.append(new_id)
            changed_bases.add(_base_key(spec.key))
        for base in changed_bases:
            keep = touched_bases[base]
            for old in store.db.query(
                "SELECT * FROM drafts WHERE (key = ? OR key LIKE ?) AND state IN "
                "('pending', 'approved')",
                [base, base + "#%"],
            ):
                if old["key"] not in keep:
                    _supersede(store, Draft.from_row(old), at, "草稿的分段改变，此段作废")
    return created


def hold_stale(store: Store, derivation: Derivation, *, now: datetime) -> list[int]:
    """A day resolved on another count than today's (derive.warnings): its waiting result and
    the next day's waiting opening no longer hold — superseded until the director resolves
    the day again (then they are drafted anew)."""
    at = _stamp(now)
    held: list[int] = []
    keys = [draft_key(DraftKind.RESULT, n) for n in derivation.stale_days]
    keys += [draft_key(DraftKind.DAY_OPEN, n + 1) for n in derivation.stale_days]
    if not keys:
        return held
    with store.atomic():
        for key in keys:
            for row in store.db.query(
                "SELECT * FROM drafts WHERE (key = ? OR key LIKE ?) AND state IN "
                "('pending', 'approved')",
                [key, key + "#%"],
            ):
                draft = Draft.from_row(row)
                _supersede(store, draft, at, "当天的引擎结算与当前计票不一致，请重新结算后再起草")
                held.append(draft.id)
    return held


def retire_uncarded(
    store: Store,
    game: Game,
    specs: Sequence[DraftSpec],
    *,
    as_of: datetime,
    unsettled: Collection[int] = (),
    derived: Collection[int] = (),
    now: datetime,
) -> list[int]:
    """A waiting cards 公示 of a closed, settled day that drafting no longer produces (every card
    of that day was revoked, ``bansha card revoke``): superseded, so a revoked card never goes
    out. (A changed text is a new draft that supersedes the old one: :func:`save_drafts`.)"""
    at = _stamp(now)
    due = {_base_key(s.key) for s in specs if s.kind is DraftKind.CARDS}
    settled = {
        d.day
        for d in game.days
        if as_of >= d.closes and d.day not in unsettled and d.day in derived
    }
    retired: list[int] = []
    with store.atomic():
        for row in store.db.query(
            "SELECT * FROM drafts WHERE kind = 'cards' AND state IN ('pending', 'approved')"
        ):
            draft = Draft.from_row(row)
            if draft.day not in settled or _base_key(draft.key) in due:
                continue
            _supersede(store, draft, at, "这一天的牌已全部撤销，此公示草稿作废")
            retired.append(draft.id)
    return retired


def retire_stale(store: Store, game: Game, *, as_of: datetime, now: datetime) -> list[int]:
    """Running tallies and reminders still waiting when their day has closed: superseded.

    On a 太阳[日不落] day a running tally drafted during the first 正午 round is stale once
    that round ended (m209.txt:377-378): it counts a vote that is over."""
    at = _stamp(now)
    closes = {d.day: d.closes for d in game.days}
    first = {d.day: d.first_closes for d in game.days if d.first_closes is not None}
    retired = []
    with store.atomic():
        for row in store.db.query(
            "SELECT * FROM drafts WHERE kind IN ('running_tally', 'reminder') AND state IN "
            "('pending', 'approved')"
        ):
            draft = Draft.from_row(row)
            end = closes.get(draft.day) if draft.day is not None else None
            if end is not None and as_of >= end:
                _supersede(store, draft, at, "投票已截止，此草稿已过时")
                retired.append(draft.id)
                continue
            first_end = first.get(draft.day) if draft.day is not None else None
            if (
                first_end is not None
                and as_of >= first_end
                and _base_key(draft.key).endswith(FIRST_ROUND_KEY)
            ):
                _supersede(store, draft, at, "第一轮[正午]已结束，此计票草稿已过时")
                retired.append(draft.id)
    return retired


def _refuse(draft: Draft, doing: str) -> DraftError:
    why = {
        DraftState.APPROVED: "已经批准过了",
        DraftState.POSTED: (
            f"已于 {draft.posted_at} 发出（pid {draft.posted_pid}），发出的草稿不能再改动"
        ),
        DraftState.REJECTED: f"已被驳回（{draft.reject_why or '未写理由'}）",
        DraftState.SUPERSEDED: "已被更新的草稿取代，请处理最新的一稿（bansha drafts 查看）",
        DraftState.PENDING: "还在等待批准",
    }[draft.state]
    return DraftError(f"不能{doing}第 {draft.id} 号草稿：它{why}")


def _move(
    store: Store,
    draft: Draft,
    at: str,
    sql: str,
    params: Sequence[Any],
    *,
    doing: str,
    to: DraftState,
    note: str,
) -> None:
    """Run one guarded state change of ``draft`` and log it; refuse (in Chinese, saying why)
    when the guard matched no row because the draft is no longer in a state that allows it."""
    cur = store.db.execute(sql, params)
    if not cur.rowcount:
        raise _refuse(draft, doing)
    _event(store, draft.id, at, draft.state.value, to.value, note)


def approve(store: Store, draft_id: int, now: datetime, *, note: str = "导演批准") -> Draft:
    """pending -> approved. Only an approved draft is ever posted. ``note``: who approved it
    (the director; or the game file's ``[threads] close_vote = "auto"``, the opening thread's
    approval for its 电梯), in the draft's event. A draft made from inputs that have since
    moved on (:func:`moved_on`) is refused: it is drafted again first."""
    at = _stamp(now)
    with store.atomic():
        draft = get_draft(store, draft_id)
        stale = moved_on(store, draft)
        if stale is not None and draft.state is DraftState.PENDING:
            raise DraftError(f"第 {draft_id} 号草稿不能批准：{stale}")
        if draft.kind == DraftKind.DAY_OPEN and _unresolved_mark(draft.body):
            raise DraftError(
                f"第 {draft_id} 号草稿不能批准：它前一晚的行动还没有结算"
                "（bansha night resolve），结算后会按结算结果重新起草"
            )
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET state = 'approved', approved_at = ?, updated_at = ? "
            "WHERE id = ? AND state = 'pending'",
            [at, at, draft_id],
            doing="批准",
            to=DraftState.APPROVED,
            note=note,
        )
    return get_draft(store, draft_id)


def reject(store: Store, draft_id: int, why: str, now: datetime) -> Draft:
    """pending or approved -> rejected, with the director's reason."""
    at = _stamp(now)
    why = why.strip()
    if not why:
        raise DraftError("驳回草稿必须写明理由（--why）")
    with store.atomic():
        draft = get_draft(store, draft_id)
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET state = 'rejected', reject_why = ?, updated_at = ? "
            "WHERE id = ? AND state IN ('pending', 'approved')",
            [why, at, draft_id],
            doing="驳回",
            to=DraftState.REJECTED,
            note=why,
        )
    return get_draft(store, draft_id)


def ensure_editable(draft: Draft) -> None:
    """Raise :class:`DraftError` unless the draft is still waiting (pending or approved)."""
    if draft.state not in LIVE_STATES:
        raise _refuse(draft, "修改")


def edit(
    store: Store,
    draft_id: int,
    new_body: str,
    now: datetime,
    *,
    charset: str = "utf-8",
    limit: int = MAX_POST_BYTES,
) -> Draft:
    """Replace a waiting draft's text. An approved draft goes back to pending (the director
    approves what will be posted); the generated text stays in ``generated_body``."""
    at = _stamp(now)
    body = new_body.replace("\r\n", "\n").strip("\n")
    if not body.strip():
        raise DraftError("草稿正文不能为空（不想发出请用 bansha drafts reject）")
    size = body_bytes(body, charset)
    if size > limit:
        raise DraftError(
            f"修改后的正文有 {size} 字节，超过论坛的长度上限 {limit} 字节；请删减后再保存"
        )
    with store.atomic():
        draft = get_draft(store, draft_id)
        ensure_editable(draft)
        if body == draft.body:
            return draft
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET body = ?, body_hash = ?, state = 'pending', approved_at = NULL, "
            "updated_at = ? WHERE id = ? AND state IN ('pending', 'approved')",
            [body, _hash(body), at, draft_id],
            doing="修改",
            to=DraftState.PENDING,
            note="导演修改" + ("，需重新批准" if draft.state is DraftState.APPROVED else ""),
        )
    return get_draft(store, draft_id)


def edit_subject(store: Store, draft_id: int, subject: str, now: datetime) -> Draft:
    """Replace a waiting new-thread draft's subject (one line, at most
    :data:`SUBJECT_MAX_CHARS` characters). An approved draft goes back to pending; the
    generated subject stays in ``generated_subject``. Refused while a send of it may be on
    the forum under the old subject (an attempt whose outcome is unknown, or waiting for a
    moderator): bansha finds that thread by its subject."""
    at = _stamp(now)
    text = " ".join(subject.split())
    if not text:
        raise DraftError("新帖的标题不能为空")
    if len(text) > SUBJECT_MAX_CHARS:
        raise DraftError(f"标题有 {len(text)} 个字，超过 Discuz 的上限 {SUBJECT_MAX_CHARS}；请改短")
    with store.atomic():
        draft = get_draft(store, draft_id)
        if draft.action != DraftAction.NEWTHREAD.value:
            raise DraftError(f"第 {draft.id} 号草稿不是开新帖的草稿，没有标题可改")
        ensure_editable(draft)
        if text == draft.subject:
            return draft
        unsure = store.db.execute(
            "SELECT id FROM post_attempts WHERE draft_id = ? AND (outcome IS NULL "
            "OR outcome = 'pending_moderation') LIMIT 1",
            [draft_id],
        ).fetchone()
        if unsure is not None:
            raise DraftError(
                f"第 {draft.id} 号草稿上次开帖的结果还不确定（论坛上可能已有标题为"
                f"「{draft.subject}」的帖子），现在不能改标题；请先到版块里查看"
            )
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET subject = ?, state = 'pending', approved_at = NULL, "
            "updated_at = ? WHERE id = ? AND state IN ('pending', 'approved')",
            [text, at, draft_id],
            doing="修改",
            to=DraftState.PENDING,
            note=f"导演修改标题：「{draft.subject or ''}」→「{text}」"
            + ("，需重新批准" if draft.state is DraftState.APPROVED else ""),
        )
    return get_draft(store, draft_id)


def mark_posted(store: Store, draft_id: int, *, pid: int | None, now: datetime) -> Draft:
    """approved -> posted (for the poster, once the post is seen in the thread)."""
    at = _stamp(now)
    with store.atomic():
        draft = get_draft(store, draft_id)
        _move(
            store,
            draft,
            at,
            "UPDATE drafts SET state = 'posted', posted_at = ?, posted_pid = ?, updated_at = ? "
            "WHERE id = ? AND state = 'approved'",
            [at, pid, at, draft_id],
            doing="发出",
            to=DraftState.POSTED,
            note=f"pid {pid}",
        )
    return get_draft(store, draft_id)


# --------------------------------------------------------------------------- the cycle's step


def elevator_pids(game: Game, store: Store) -> dict[int, int]:
    """Discussion tid -> pid of the director's floor 2 (the 电梯), where the store has it.

    Floor 2 is the thread's second post by pid (floors shown can renumber after deletes).
    """
    uids = set(game.director.uids)
    names = set(game.director.names)
    found: dict[int, int] = {}
    for day in game.days:
        tid = day.discussion
        if tid is None or tid in found:
            continue
        rows = list(
            store.db.query(
                "SELECT pid, uid, author FROM posts WHERE tid = ? AND state NOT IN "
                "('deleted', 'vanished') ORDER BY pid LIMIT 2",
                [tid],
            )
        )
        if len(rows) == 2 and (
            (rows[1]["uid"] and rows[1]["uid"] in uids) or rows[1]["author"] in names
        ):
            found[tid] = rows[1]["pid"]
    return found


def make_drafts(
    game: Game,
    store: Store,
    derivation: Derivation,
    *,
    now: datetime,
    templates_dir: Path | str | None = None,
    templates: Templates | None = None,
    unsettled: Collection[int] = (),
    unsettled_first: Collection[int] = (),
) -> list[int]:
    """Draft what is due at the derivation's time and store what changed (a cycle's step 5).

    Returns the ids of the new drafts; stale running tallies and reminders are retired.
    """
    as_of = derivation.as_of
    if templates is None:
        templates = load_templates(templates_dir)
    specs = due_drafts(
        game,
        derivation,
        as_of=as_of,
        templates_dir=templates_dir,
        templates=templates,
        cards=card_events(store),
        floor2=elevator_pids(game, store),
        unsettled=unsettled,
        unsettled_first=unsettled_first,
    )
    if get_ruleset(game.game.ruleset).inquiry is not None:
        # the inquiry thread: answers to guesses, and the 公示 of a word guessed right
        from pipeline.derive.inquiry import inquiry_days  # only a game with an inquiry

        specs += inquiry_drafts(game, inquiry_days(game, store, as_of=as_of))
    # the day's new threads and the vote threads' closing
    specs += thread_drafts(game, store, as_of=as_of, templates=templates)
    specs = _mark_unresolved(specs, unresolved_nights(store, game))
    created = save_drafts(store, specs, now=now)
    if game.threads.close_vote == "auto":
        for draft_id in created:
            draft = get_draft(store, draft_id)
            if draft.kind == DraftKind.CLOSE and draft.state is DraftState.PENDING:
                approve(
                    store,
                    draft_id,
                    now,
                    note='游戏文件 [threads] close_vote = "auto"：锁帖已预先批准',
                )
    approve_elevators(store, created, now=now)
    retire_uncarded(
        store, game, specs, as_of=as_of, unsettled=unsettled, derived=set(derivation.days), now=now
    )
    hold_stale(store, derivation, now=now)
    retire_stale(store, game, as_of=as_of, now=now)
    retire_opened(store, game, now=now, as_of=as_of)
    keep_inputs(store, specs, now=now)  # last: a more specific reason to set one aside first
    return created


# --------------------------------------------------------------------------- made from what


def _draft_inputs_now(store: Store) -> int | None:
    """The drafts' input counter now (None: the store has no change counters yet — it was never
    cycled — and nothing can be told stale)."""
    row = store.db.execute("SELECT value FROM meta WHERE key = ?", [DRAFT_INPUTS_KEY]).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _made_now(store: Store, draft_id: int, kind: DraftKind) -> None:
    """A draft just made holds at the inputs as they are (:func:`moved_on`)."""
    counter = _draft_inputs_now(store)
    if kind in STATE_KINDS and counter is not None:
        store.db.execute(
            "INSERT OR REPLACE INTO draft_inputs(draft_id, counter) VALUES (?, ?)",
            [draft_id, counter],
        )


def _drafted_at(store: Store, draft_id: int) -> int | None:
    row = store.db.execute(
        "SELECT counter FROM draft_inputs WHERE draft_id = ?", [draft_id]
    ).fetchone()
    return None if row is None else int(row[0])


#: The first line of a day-open post drafted while the night before it waits to be resolved:
#: it cannot be approved until the night is resolved (then it is drafted again, without it).
UNRESOLVED_MARK = "〔第{night}晚尚未结算：结算后这份开门公示会重新起草；结算之前不能批准〕"


def _unresolved_mark(body: str) -> bool:
    first = body.split("\n", 1)[0]
    return first.startswith("〔第") and "晚尚未结算" in first


def unresolved_nights(store: Store, game: Game) -> frozenset[int]:
    """The nights a day-open post waits for: in a game whose director resolves nights with the
    engine (any phase resolved, or night actions recorded), every night of the game — and any
    other with actions recorded — that is not resolved yet; none in a game that never uses it."""
    if not get_ruleset(game.game.ruleset).has_engine:
        return frozenset()
    resolved = {
        r[0] for r in store.db.execute("SELECT phase FROM engine_snapshots WHERE phase IS NOT NULL")
    }
    acted = {
        int(r[0])
        for r in store.db.execute(
            "SELECT DISTINCT number FROM journal_actions WHERE phase = 'night' "
            "AND removed_at IS NULL"
        )
    }
    if not resolved and not acted:
        return frozenset()  # the director does not use the engine: nothing to wait for
    nights = {d.day for d in game.days} | acted
    return frozenset(n for n in nights if Phase.night(n).label not in resolved)


def _mark_unresolved(specs: list[DraftSpec], nights: frozenset[int]) -> list[DraftSpec]:
    """Day-open posts whose night is in ``nights`` say so in their first line."""
    out: list[DraftSpec] = []
    for spec in specs:
        night = (spec.day or 0) - 1
        if spec.kind is DraftKind.DAY_OPEN and night in nights:
            mark = UNRESOLVED_MARK.format(night=night)
            spec = replace(spec, body=f"{mark}\n{spec.body}")
        out.append(spec)
    return out


STALE_HINT = "请先运行 bansha drafts make（或等下一轮 bansha cycle）按现在的记录重新起草"


def moved_on(store: Store, draft: Draft) -> str | None:
    """Why ``draft`` no longer holds — it was made before the game's inputs last changed (a new
    post or edit, a director's record or its undo, a night or day resolved) and has not been
    drafted again since — or None while it holds."""
    if draft.kind not in STATE_KINDS or draft.state not in LIVE_STATES:
        return None
    now = _draft_inputs_now(store)
    made = _drafted_at(store, draft.id)
    if now is None or made is None or made == now:
        return None  # (made None: a draft from before bansha kept what drafts were made from)
    return f"它起草之后，游戏的记录已经变了（新帖、导演的记录或撤销、结算……）；{STALE_HINT}"


def keep_inputs(store: Store, specs: Sequence[DraftSpec], *, now: datetime) -> list[int]:
    """After a drafting pass: every live draft the pass drafted (or found unchanged) holds at
    the inputs now; one the pass no longer drafts (its moment has passed) whose inputs moved on
    is superseded — it would say what is no longer so. Returns the superseded drafts' ids."""
    counter = _draft_inputs_now(store)
    if counter is None:
        return []
    at = _stamp(now)
    keys = {s.key for s in specs}
    retired: list[int] = []
    with store.atomic():
        for row in list(
            store.db.query("SELECT * FROM drafts WHERE state IN ('pending', 'approved')")
        ):
            draft = Draft.from_row(row)
            if draft.kind not in STATE_KINDS:
                continue
            if draft.key in keys:
                store.db.execute(
                    "INSERT INTO draft_inputs(draft_id, counter) VALUES (?, ?) "
                    "ON CONFLICT(draft_id) DO UPDATE SET counter = excluded.counter "
                    "WHERE counter IS NOT excluded.counter",
                    [draft.id, counter],
                )
            elif (made := _drafted_at(store, draft.id)) is not None and made != counter:
                _supersede(
                    store,
                    draft,
                    at,
                    "起草之后游戏的记录已经变了（新帖、导演的记录或撤销、结算……），"
                    "而这份草稿已不再起草：作废，免得发出过时的内容",
                )
                retired.append(draft.id)
    return retired


def elevator_rejected(store: Store, day: int) -> bool:
    """The director rejected a 电梯 of ``day``: from then on they decide (nothing of the day's
    电梯 is approved by the thread's approval any more)."""
    row = store.db.execute(
        "SELECT 1 FROM drafts WHERE kind = 'elevator' AND day = ? AND state = 'rejected' LIMIT 1",
        [day],
    ).fetchone()
    return row is not None


def approve_elevators(store: Store, created: Collection[int], *, now: datetime) -> list[int]:
    """A 电梯 reply drafted for a discussion thread bansha opened, when no 电梯 of that day has
    been posted yet (the run that opened the thread stopped before sending it): approved by the
    thread's approval, like the one sent right after the thread (docs/rulings.md) — unless the
    director rejected a 电梯 of that day (:func:`elevator_rejected`): then it waits for them."""
    approved: list[int] = []
    for draft_id in created:
        draft = get_draft(store, draft_id)
        if draft.kind != DraftKind.ELEVATOR or draft.action != DraftAction.REPLY.value:
            continue
        if draft.state is not DraftState.PENDING or draft.day is None:
            continue
        opened = store.db.execute(
            "SELECT draft_id FROM game_threads WHERE day = ? AND role = 'discussion' AND tid = ?",
            [draft.day, draft.tid],
        ).fetchone()
        if opened is None or opened[0] is None or elevator_rejected(store, draft.day):
            continue
        posted = store.db.execute(
            "SELECT 1 FROM drafts WHERE kind = 'elevator' AND day = ? AND state = 'posted'",
            [draft.day],
        ).fetchone()
        if posted is None:
            approve(store, draft_id, now, note=elevator_note(int(opened[0]), draft.day))
            approved.append(draft_id)
    return approved


def inquiry_drafts(
    game: Game,
    days: Sequence[InquiryDay],  # pipeline.derive.inquiry
    *,
    templates: Templates | None = None,
    templates_dir: Path | str | None = None,
) -> list[DraftSpec]:
    """The director's answers to the guesses (猜测正确/错误, before the sheriff's, zhenyan.txt:168)
    and the 公示 of each word guessed correctly, in the discussion thread (zhenyan.txt:31, 168).

    A guess a director's post in the inquiry thread already links (a posted answer draft) is
    not answered again; a 公示's text is stable, so storing it again drafts nothing new."""
    from pipeline.game.words import load_secrets

    secrets = load_secrets(game)
    specs: list[DraftSpec] = []
    for d in days:
        answers = [
            (i.pid, a)
            for i in d.items
            if (a := i.director_answer) is not None and not i.director_posted
        ]
        specs += inquiry_answer_drafts(
            game, d.day, answers, templates=templates, templates_dir=templates_dir
        )
        the_day = game.day(d.day)
        for item in d.items:
            for g in item.guesses:
                if not g.first:
                    continue
                body = (
                    f"[b]【真言公示】[/b]\n{item.player}在询问帖猜中第{g.index}个真言词语："
                    f"[b]{secrets.word(g.index)}[/b]\n"
                    f"[url=forum.php?mod=redirect&goto=findpost&ptid={d.tid}&pid={item.pid}]"
                    "猜词原帖[/url]"
                )
                if game.drafts.director_signature:
                    body += f"\n\n{game.drafts.director_signature}"
                specs.append(
                    DraftSpec(
                        DraftKind.INQUIRY_ANSWERS,
                        d.day,
                        f"inquiry_reveal:d{d.day}:w{g.index}",
                        the_day.discussion,
                        DraftAction.REPLY,
                        None,
                        f"第{d.day}天 真言公示：第{g.index}个词语",
                        body,
                    )
                )
    return specs


# --------------------------------------------------------------------------- the game's threads
#
# The threads bansha opens and closes for a day: their drafts.
#
# For each day with ``[forum] fid`` set, every thread the rule set has that day
# (:func:`pipeline.game.threads.day_roles`) and the game has no tid for (neither the file nor the
# store) is drafted as a ``newthread`` draft ``[threads] draft_hours`` before the day opens, with a
# subject from the ``[threads]`` pattern and a body from ``newthread.j2``; it is posted only once
# approved and not before the day opens (``not_before``; the extra round's vote thread of a
# 太阳[日不落] day not before the first round ends). A tid that appears meanwhile (the director
# wrote it in the file, or bansha opened the thread) retires the draft (:func:`retire_opened`).
#
# Each vote thread also gets a ``close`` draft (``[threads] close_vote``): closing (locking) it,
# not before its close; approved like any draft (``"draft"``), in advance by the game file
# (``"auto"``), or never drafted (``"off"``). Once the forum said the director's account may not
# moderate the section, no close is drafted again (:data:`NO_RIGHTS_KEY`).
#
# Pure but for :func:`retire_opened` and :func:`no_moderator_rights` (the store).

#: ``meta``: the forum said the director's account may not close threads in the section
#: (JSON: when, the forum's words). Set once by the publisher; no close is drafted after it.
NO_RIGHTS_KEY = "threads:no_moderator_rights"
#: Discuz refuses a subject over 80 characters (post_subject_toolong)
SUBJECT_MAX_CHARS = 80


def newthread_key(game: Game, day: int, role: ThreadRole) -> str:
    """One live draft per day and role; the game's one progress thread has one key."""
    if game_wide(game, role):
        return f"{DraftKind.NEWTHREAD.value}:game:{role.value}"
    return f"{draft_key(DraftKind.NEWTHREAD, day)}:{role.value}"


def thread_window(day: Day, role: ThreadRole) -> tuple[datetime, datetime]:
    """When the day's new thread of ``role`` may be opened: from its opening (inclusive) to its
    round's close (exclusive). On a 太阳[日不落] day the first 正午 round's vote thread opens with
    the day and its round ends at ``first_closes``; the extra round's vote thread opens then
    (m209.txt:377-378). Every other thread: the whole day."""
    if day.first_closes is not None:
        if role is ThreadRole.FIRST_VOTE:
            return day.opens, day.first_closes
        if role is ThreadRole.VOTE:
            return day.first_closes, day.closes
    return day.opens, day.closes


def _not_before(day: Day, role: ThreadRole) -> datetime:
    return thread_window(day, role)[0]


def thread_over(day: Day, role: ThreadRole, at: datetime) -> str | None:
    """Why the day's new thread of ``role`` is never opened at ``at`` (its round is over: a
    thread for a vote that has ended is no use), in Chinese; None while it may still open."""
    if at < thread_window(day, role)[1]:
        return None
    what = f"第{day.day}天的{THREAD_ROLE_TITLES[role]}"
    if role is ThreadRole.FIRST_VOTE and at < day.closes:
        return f"第{day.day}天第一轮[正午]已结束，{what}不再开出，此草稿作废"
    return f"第{day.day}天已关门，{what}不再开出，此草稿作废"


def _context(game: Game, day: Day, role: ThreadRole, subject: str) -> dict[str, Any]:
    tz = game.game.tz
    rs = get_ruleset(game.game.ruleset)
    return {
        **_base_context(game, day.day),
        "ruleset_title": rs.title,
        "subject": subject,
        "role": role.value,
        "role_title": THREAD_ROLE_TITLES[role],
        "game_wide": game_wide(game, role),
        "opens": _when(day.opens, tz),
        "closes": _when(day.closes, tz),
        "first_closes": _when(day.first_closes, tz) if day.first_closes else None,
        "election": bool(day.sheriff_election),
        "rules_thread": game.game.rules_thread,
        # the rule set's 投票格式 and 改票格式 as its text writes them (lines; [] when the text
        # gives none), and where: the vote thread's first post quotes them
        "vote_format": rs.vote_format.split("\n") if rs.vote_format else [],
        "vote_format_source": BBCode(f"《{rs.title}》规则 · 投票格式") if rs.vote_format else "",
    }


def newthread_specs(game: Game, *, as_of: datetime, templates: Templates) -> list[DraftSpec]:
    """The new threads due at ``as_of`` (see the section's text above). ``game``: with the store's
    threads (:func:`pipeline.game.threads.with_opened`)."""
    if game.forum.fid is None:
        return []
    ahead = timedelta(hours=game.threads.draft_hours)
    specs: list[DraftSpec] = []
    game_wide_drafted: set[ThreadRole] = set()
    for day in sorted(game.days, key=lambda d: d.day):
        if not (day.opens - ahead <= as_of < day.closes):
            continue
        for role in day_roles(game, day):
            if getattr(day, role.value) is not None or thread_over(day, role, as_of):
                continue
            if game_wide(game, role):
                if role in game_wide_drafted:
                    continue  # the game's one progress thread: drafted with the first day
                game_wide_drafted.add(role)
            subject = thread_subject(game, day.day, role)
            if len(subject) > SUBJECT_MAX_CHARS:
                raise DraftError(
                    f"第{day.day}天{THREAD_ROLE_TITLES[role]}的标题“{subject[:20]}…”有 "
                    f"{len(subject)} 个字，超过 Discuz 的上限 {SUBJECT_MAX_CHARS}；"
                    "请改短游戏文件的 [threads] subject 或 tag"
                )
            body = templates.render(DraftKind.NEWTHREAD, _context(game, day, role, subject))
            limit = game.drafts.max_post_bytes
            if body_bytes(body, _charset(game)) > limit:
                raise DraftError(
                    f"第{day.day}天{THREAD_ROLE_TITLES[role]}的一楼超过论坛的长度上限 {limit} "
                    "字节（新帖的一楼不能拆分）；请删减 newthread.j2"
                )
            specs.append(
                DraftSpec(
                    DraftKind.NEWTHREAD,
                    day.day,
                    newthread_key(game, day.day, role),
                    None,
                    DraftAction.NEWTHREAD,
                    None,
                    f"第{day.day}天 开新帖：{THREAD_ROLE_TITLES[role]}",
                    body,
                    subject=subject,
                    not_before=_not_before(day, role),
                    role=role.value,
                )
            )
    return specs


def close_specs(game: Game, *, as_of: datetime, no_rights: bool) -> list[DraftSpec]:
    """Closing each vote thread the game knows (from the file or opened by bansha), drafted
    from ``draft_hours`` before the day opens until :data:`CLOSE_WINDOW` after its close."""
    if game.forum.fid is None or game.threads.close_vote == "off" or no_rights:
        return []
    ahead = timedelta(hours=game.threads.draft_hours)
    tz = game.game.tz
    rs = get_ruleset(game.game.ruleset)
    specs: list[DraftSpec] = []
    for day in sorted(game.days, key=lambda d: d.day):
        rounds = [(ThreadRole.FIRST_VOTE, day.first_vote, day.first_closes)]
        rounds.append((ThreadRole.VOTE, day.vote, day.closes))
        # the rule set's inquiry thread closes before the day (zhenyan.txt:188)
        inquiry_closes = thread_closes(game, day, ThreadRole.INQUIRY)
        rounds.append((ThreadRole.INQUIRY, day.inquiry, inquiry_closes))
        for role, tid, closes in rounds:
            if tid is None or closes is None:
                continue
            if not (day.opens - ahead <= as_of < closes + CLOSE_WINDOW):
                continue
            what = THREAD_ROLE_TITLES[role]
            body = (
                f"第{day.day}天{what}（tid={tid}）在 {_when(closes, tz)} 截止后锁帖：锁帖后玩家"
                "不能再回复；bansha 不会自动解锁。"
            )
            if role is ThreadRole.INQUIRY and rs.inquiry is not None:
                hours = rs.inquiry.close_before.total_seconds() / 3600
                body += (
                    f"询问帖比讨论帖和投票帖提前 {hours:g} 小时关闭"
                    f"（《{rs.title}》规则 · 行动时限，{rs.inquiry.close_rule}）。"
                )
            specs.append(
                DraftSpec(
                    DraftKind.CLOSE,
                    day.day,
                    f"{draft_key(DraftKind.CLOSE, day.day)}:{role.value}",
                    tid,
                    DraftAction.CLOSE,
                    None,
                    f"第{day.day}天 锁帖：{what}",
                    body,
                    not_before=closes,
                    role=role.value,
                )
            )
    return specs


def no_moderator_rights(store: Store) -> dict[str, Any] | None:
    """What the forum said when the director's account could not close a thread, if it did."""
    if store.get_meta(NO_RIGHTS_KEY) is None:
        return None
    return store.get_meta_json(NO_RIGHTS_KEY) or {"message": ""}


def thread_drafts(
    game: Game, store: Store, *, as_of: datetime, templates: Templates
) -> list[DraftSpec]:
    """Every new-thread and close draft due at ``as_of``."""
    return newthread_specs(game, as_of=as_of, templates=templates) + close_specs(
        game, as_of=as_of, no_rights=no_moderator_rights(store) is not None
    )


def retire_opened(
    store: Store, game: Game, *, now: datetime, as_of: datetime | None = None
) -> list[int]:
    """New-thread drafts still waiting whose thread has a tid now (the director wrote it in the
    game file, or bansha opened it): superseded, so no second thread is ever opened. With
    ``as_of``: also those of a day that has closed, and a 太阳[日不落] day's first-round vote
    thread once that round ended (:func:`thread_over`: a thread for a vote that is over is never
    opened; the game's one progress thread is drafted again with the next day)."""
    at = _stamp(now)
    retired: list[int] = []
    days = {d.day: d for d in game.days}
    with store.atomic():
        for row in store.db.query(
            "SELECT * FROM drafts WHERE kind = 'newthread' AND state IN ('pending', 'approved')"
        ):
            draft = Draft.from_row(row)
            day = days.get(draft.day) if draft.day is not None else None
            if day is None or draft.role is None:
                continue
            role = ThreadRole(draft.role)
            what = f"第{draft.day}天的{THREAD_ROLE_TITLES[role]}"
            tid = getattr(day, draft.role, None)
            if tid is not None:
                note = f"{what}已有帖子 tid={tid}，此草稿作废（不会再开一个）"
            elif as_of is None or (over := thread_over(day, role, as_of)) is None:
                continue
            else:
                note = over
            _supersede(store, draft, at, note)
            retired.append(draft.id)
    return retired


def set_aside(store: Store, draft_id: int, note: str, now: datetime) -> bool:
    """A waiting draft that must never go out set aside (superseded) with ``note`` as its event,
    as :func:`retire_opened` does; False when it was no longer waiting."""
    with store.atomic():
        rows = list(store.db.query("SELECT * FROM drafts WHERE id = ?", [draft_id]))
        if not rows or rows[0]["state"] not in LIVE_STATES:
            return False
        _supersede(store, Draft.from_row(rows[0]), _stamp(now), note)
    return True


def elevator_note(thread_draft_id: int, day: int | None) -> str:
    """The event of a 电梯 approved by its discussion thread's approval."""
    return (
        f"随第 {thread_draft_id} 号草稿（第{day}天讨论帖）一并批准：bansha 开讨论帖后紧接着发电梯，"
        "让它在二楼"
    )
