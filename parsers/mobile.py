"""Parse Discuz! X mobile API answers (``api/mobile/index.php?version=4&module=viewthread``).

Envelope and fields: docs/discuz.md §2. Every scalar arrives as a string; a plain one (decimal
digits for a number) is read with the standard library, anything else validated and converted
by pydantic (loaded then). The message HTML goes through the same
:func:`parsers.viewthread.extract_message` as the desktop page, so both sources agree on text,
quotes and marks (v4 drops ``[size]``, the edit note and the ``[hide]`` box of a shown hide;
v1/v2 keep them, see §2.4 and §3.3).

Decisions (see docs/rulings.md):

* ``floor`` is ``number``, the floor the forum shows (the same as the desktop page, e.g. 14#
  after an earlier post was deleted); ``position`` is the database position, which stops
  matching the shown floor once a post is deleted. ``position`` is used only when ``number``
  is missing. On 只看该作者 answers ``number`` counts that author's posts, as on the desktop.
* ``posted_at`` comes from ``dbdateline`` (Unix seconds), shown in ``tz``.
* status bit 1 (屏蔽), or the "提示: <em>…屏蔽</em>" replacement message -> BLOCKED with empty
  text; "该帖仅作者可见" -> AUTHOR_ONLY with empty text.
* The API does not say which page it served: it clamps past the end like the desktop page, so
  ``page`` is the requested page capped at ``ceil((thread.replies + 1) / ppp)``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from datetime import datetime, tzinfo
from functools import cache
from typing import Any

from selectolax.lexbor import LexborHTMLParser

from parsers.pagecheck import check_page, classify_message
from parsers.records import PageError, PageErrorKind, Post, PostState, ThreadPage
from parsers.viewthread import extract_message

__all__ = ["mobile_variables", "parse_mobile_check", "parse_mobile_viewthread"]

K = PageErrorKind

# Top-level {"error": key} answers of api/mobile/index.php (mobile.php, mobile.class.php).
_ERROR_KEYS: dict[str, tuple[PageErrorKind, str]] = {
    "mobile_is_closed": (K.CLOSED, "论坛关闭了移动接口（mobile_is_closed），请改用网页抓取"),
    "board_closed": (K.CLOSED, "论坛已关闭（board_closed）"),
    "module_not_exists": (K.MALFORMED, "移动接口没有这个模块（module_not_exists）"),
    "param_error": (K.MALFORMED, "移动接口参数错误（param_error）"),
}


@dataclass(frozen=True, slots=True)
class _MobilePost:
    pid: int
    author: str = ""
    authorid: int = 0
    dbdateline: int = 0
    message: str = ""
    number: int | None = None
    position: int | None = None
    status: int = 0
    anonymous: int = 0


@dataclass(frozen=True, slots=True)
class _MobileThread:
    subject: str | None
    replies: int
    closed: int = 0  # forum_thread.closed: 1 closed, > 1 moved (the new tid)


@dataclass(frozen=True, slots=True)
class _Variables:
    formhash: str | None
    member_uid: str | None
    ppp: int
    thread: _MobileThread
    postlist: list[_MobilePost]


@dataclass(frozen=True, slots=True)
class _Message:
    messageval: str = ""
    messagestr: str = ""


# --------------------------------------------------------------------------- validation
#
# An answer whose every field has the JSON type it is read as (a number as a JSON number, or a
# string of plain decimal digits as Discuz writes them) is read here with the standard library;
# anything else is read by the pydantic models below (lax: they coerce or refuse, and say where).
# Both give the same values for the answers read here: pydantic's lax int of such a string is
# its decimal value, and a str, an int or None is kept as it is.

#: a field: (name, kind, required, default); kinds: "int", "str", "int?", "str?"
_Spec = tuple[tuple[str, str, bool, Any], ...]
_POST_SPEC: _Spec = (
    ("pid", "int", True, None),
    ("author", "str", False, ""),
    ("authorid", "int", False, 0),
    ("dbdateline", "int", True, None),
    ("message", "str", False, ""),
    ("number", "int?", False, None),
    ("position", "int?", False, None),
    ("status", "int", False, 0),
    ("anonymous", "int", False, 0),
)
_THREAD_SPEC: _Spec = (
    ("subject", "str?", False, None),
    ("replies", "int", True, None),
    ("closed", "int", False, 0),
)
_VARIABLES_SPEC: _Spec = (
    ("formhash", "str?", False, None),
    ("member_uid", "str?", False, None),
    ("ppp", "int", True, None),
)
_MESSAGE_SPEC: _Spec = (("messageval", "str", False, ""), ("messagestr", "str", False, ""))
#: the decimal integers read without pydantic: no sign but ``-``, no leading zero, no space
_PLAIN_INT = re.compile(r"0|-?[1-9][0-9]*")


class _Unsure(Exception):
    """A value the standard library does not read: pydantic decides."""


def _value(raw: Any, kind: str) -> Any:
    if raw is None and kind.endswith("?"):
        return None
    if kind.startswith("int"):
        if type(raw) is int:
            return raw
        if type(raw) is str and _PLAIN_INT.fullmatch(raw):
            return int(raw)
    elif type(raw) is str:
        return raw
    raise _Unsure


def _fields(raw: Any, spec: _Spec) -> dict[str, Any]:
    if type(raw) is not dict:
        raise _Unsure
    out: dict[str, Any] = {}
    for name, kind, required, default in spec:
        if name in raw:
            out[name] = _value(raw[name], kind)
        elif required:
            raise _Unsure
        else:
            out[name] = default
    return out


def _plain_variables(variables: dict[str, Any]) -> _Variables:
    """``Variables`` read with the standard library; raises :class:`_Unsure`."""
    fields = _fields(variables, _VARIABLES_SPEC)
    if "thread" not in variables or type(variables.get("postlist")) is not list:
        raise _Unsure
    thread = _MobileThread(**_fields(variables["thread"], _THREAD_SPEC))
    posts = [_MobilePost(**_fields(p, _POST_SPEC)) for p in variables["postlist"]]
    return _Variables(**fields, thread=thread, postlist=posts)


_KINDS: dict[str, Any] = {"int": int, "str": str, "int?": int | None, "str?": str | None}


@cache
def _models() -> tuple[Any, Any, type[Exception]]:
    """The pydantic models of ``Variables`` and ``Message`` (made from the same field specs as
    the standard-library reading), and pydantic's ValidationError."""
    from pydantic import ConfigDict, ValidationError, create_model

    config = ConfigDict(extra="ignore", frozen=True)

    def model(name: str, spec: _Spec, **extra: Any) -> Any:
        fields: dict[str, Any] = {
            field: (_KINDS[kind], ... if required else default)
            for field, kind, required, default in spec
        }
        return create_model(name, __config__=config, **fields, **extra)

    post = model("MobilePost", _POST_SPEC)
    thread = model("MobileThread", _THREAD_SPEC)
    posts: Any = list.__class_getitem__(post)  # list[MobilePost], made at run time
    variables = model("Variables", _VARIABLES_SPEC, thread=(thread, ...), postlist=(posts, ...))
    return variables, model("Message", _MESSAGE_SPEC), ValidationError


def _validated_variables(variables: dict[str, Any]) -> _Variables:
    try:
        return _plain_variables(variables)
    except _Unsure:
        pass
    model, _, invalid = _models()
    try:
        parsed = model.model_validate(variables)
    except invalid as exc:
        errors = exc.errors()  # type: ignore[attr-defined]
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in errors[:3])
        raise PageError(K.MALFORMED, f"移动接口数据格式不符：{fields}") from exc
    return _Variables(
        formhash=parsed.formhash,
        member_uid=parsed.member_uid,
        ppp=parsed.ppp,
        thread=_MobileThread(**parsed.thread.model_dump()),
        postlist=[_MobilePost(**p.model_dump()) for p in parsed.postlist],
    )


def _validated_message(raw: dict[str, Any]) -> _Message:
    try:
        return _Message(**_fields(raw, _MESSAGE_SPEC))
    except _Unsure:
        pass
    _, model, invalid = _models()
    try:
        parsed = model.model_validate(raw)
    except invalid as exc:
        raise PageError(K.MALFORMED, "移动接口的 Message 格式不符") from exc
    return _Message(messageval=parsed.messageval, messagestr=parsed.messagestr)


def _load(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        # a Discuz System Error page, a WAF page, a showmessage page …
        check_page(body.decode("utf-8", errors="replace"))
        raise PageError(K.MALFORMED, "移动接口返回的不是 JSON") from None


def _raise_for_message(message: _Message) -> None:
    key = message.messageval
    said = message.messagestr
    # untranslated keys come back as "mobile:<key>": then the key says it all
    detail = f"移动接口：{said}（{key}）" if said and not said.startswith("mobile:") else key
    if key.endswith("//1") or "login" in key:  # //1: the action needs a logged-in member
        raise PageError(K.LOGIN_REQUIRED, detail)
    if "nonexistence" in key or "not_exist" in key:
        raise PageError(K.NOT_FOUND, detail)
    if "nopermission" in key or "passwd" in key:
        raise PageError(K.NO_PERMISSION, detail)
    if "closed" in key:
        raise PageError(K.CLOSED, detail)
    if "flood" in key:
        raise PageError(K.RATE_LIMITED, detail)
    raise PageError(classify_message(said) or K.MALFORMED, detail or "移动接口返回了空的提示")


def _post(raw: _MobilePost, *, tid: int, tz: tzinfo) -> Post:
    floor = raw.number if raw.number is not None and raw.number > 0 else None
    if floor is None and raw.position is not None and raw.position > 0:
        floor = raw.position
    try:
        posted_at = datetime.fromtimestamp(raw.dbdateline, tz)
    except (OverflowError, OSError, ValueError) as exc:
        raise PageError(K.MALFORMED, f"帖子 pid={raw.pid} 的 dbdateline 无效") from exc
    base = Post(
        tid=tid,
        pid=raw.pid,
        floor=floor,
        author=raw.author,
        uid=raw.authorid,
        posted_at=posted_at,
        message_html=raw.message,
        text="",
        source="mobile",
    )
    replaced = raw.message.strip()
    if replaced.startswith("提示: <em>") and "屏蔽" in replaced:
        return replace(base, state=PostState.BLOCKED)
    if replaced == "该帖仅作者可见":
        return replace(base, state=PostState.AUTHOR_ONLY)
    body = LexborHTMLParser(raw.message).body
    if body is None:  # pragma: no cover - lexbor always builds a body
        raise PageError(K.MALFORMED, f"帖子 pid={raw.pid} 的内容无法读取")
    parts = extract_message(body, tz)
    return replace(
        base,
        message_html=(body.inner_html or "").strip(),  # as on the desktop: noise removed
        text=parts.text,
        quoted_pids=parts.quoted_pids,
        quote_texts=parts.quote_texts,
        edit=parts.edit,
        state=PostState.BLOCKED if raw.status & 1 else PostState.VISIBLE,
        marks=parts.marks,
    )


def parse_mobile_viewthread(body: bytes, *, tid: int, tz: tzinfo, page: int) -> ThreadPage:
    """Parse a ``module=viewthread`` answer (v4; v1/v2 read the same way) for ``page``.

    Raises :class:`PageError` for error answers, refusals, HTML error pages and broken JSON.
    """
    try:
        return _parse(body, tid=tid, tz=tz, page=page)
    except PageError:
        raise
    except (ValueError, OverflowError, RecursionError) as exc:
        raise PageError(K.MALFORMED, f"移动接口解析失败：{exc}") from exc


def mobile_variables(body: bytes, content: str) -> dict[str, Any]:
    """The ``Variables`` of a mobile API answer whose payload is the list ``content``
    (``postlist``, ``forum_threadlist``); raises :class:`PageError` for an error answer, a
    refusal (a ``Message`` and no payload), an HTML page or broken JSON."""
    data = _load(body)
    if not isinstance(data, dict):
        raise PageError(K.MALFORMED, "移动接口返回的不是对象")
    if "error" in data:
        key = str(data["error"])
        kind, detail = _ERROR_KEYS.get(key, (K.MALFORMED, f"移动接口错误：{key}"))
        raise PageError(kind, detail)
    variables = data.get("Variables")
    if not isinstance(variables, dict):
        raise PageError(K.MALFORMED, "移动接口缺少 Variables")
    raw_message = data.get("Message")
    if isinstance(raw_message, dict) and not variables.get(content):
        _raise_for_message(_validated_message(raw_message))
    return variables


def _parse(body: bytes, *, tid: int, tz: tzinfo, page: int) -> ThreadPage:
    variables = mobile_variables(body, "postlist")
    parsed = _validated_variables(variables)
    if parsed.ppp < 1:
        raise PageError(K.MALFORMED, f"移动接口的 ppp 无效：{parsed.ppp}")
    total_pages = max(1, math.ceil((max(parsed.thread.replies, 0) + 1) / parsed.ppp))
    posts: dict[int, Post] = {}
    for raw in parsed.postlist:
        if raw.pid not in posts:
            posts[raw.pid] = _post(raw, tid=tid, tz=tz)
    extra: dict[str, str] = {}
    if parsed.member_uid is not None:
        extra["member_uid"] = parsed.member_uid
    if parsed.thread.closed == 1:
        extra["closed"] = "1"  # as the desktop page's lock icon
    return ThreadPage(
        tid=tid,
        page=min(max(page, 1), total_pages),
        total_pages=total_pages,
        posts=tuple(sorted(posts.values(), key=lambda p: p.pid)),
        subject=parsed.thread.subject,
        replies=parsed.thread.replies,
        formhash=parsed.formhash or None,
        ppp=parsed.ppp,
        extra=extra,
    )


def parse_mobile_check(body: bytes) -> dict[str, Any] | None:
    """Read a ``module=check`` answer: the JSON object when the API is usable, else None.

    A working API answers e.g. ``{"discuzversion": "X3.2", "truediscuzversion": "X3.5",
    "charset": "utf-8", "version": "4", …}``; a disabled plugin answers nothing useful.
    """
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or "version" not in data:
        return None
    return data
