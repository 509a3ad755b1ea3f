"""Records every parser returns and the pipeline stores.

These are the contract between ``parsers`` (which build them from bytes) and ``pipeline``
(which stores them). Posts are keyed by ``(tid, pid)``; the floor shown on a page is kept but
never used as a key (Discuz renumbers floors after a delete).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum


class PostState(StrEnum):
    VISIBLE = "visible"
    BLOCKED = "blocked"  # 屏蔽: "该帖被管理员或版主屏蔽" / "作者被禁止或删除 内容自动屏蔽"
    DELETED = "deleted"  # placeholder "无效楼层，该帖已经被删除"
    PENDING = "pending"  # 待审核
    AUTHOR_ONLY = "author_only"  # 回帖仅作者可见: the text is not visible to this account
    VANISHED = "vanished"  # set by the crawler: was stored before, no longer served


class MarkKind(StrEnum):
    """A piece of a message whose presentation matters to the rules."""

    RED = "red"  # font colour at or near #FF0000
    ENLARGED = "enlarged"  # font size above the forum default
    HIDDEN_COLOUR = "hidden_colour"  # white / near-background colour: not visibly readable
    TINY = "tiny"  # font size 1 or smaller than ~9px: not visibly readable
    HIDE_TAG = "hide_tag"  # [hide] box (shown or locked)
    BBCODE = "bbcode"  # any Discuz markup at all (for "no Discuz code in last words")


@dataclass(frozen=True, slots=True)
class Mark:
    kind: MarkKind
    value: str  # the colour / size / "" as written by the author
    text: str  # the plain text inside the mark


@dataclass(frozen=True, slots=True)
class EditNote:
    """``本帖最后由 {editor} 于 {edited_at} 编辑`` (minute precision, the forum's time zone)."""

    editor: str
    edited_at: datetime


@dataclass(frozen=True, slots=True)
class Post:
    tid: int
    pid: int
    floor: int | None  # the position shown (楼主=1, 沙发=2 ...); None when not known
    author: str
    uid: int  # 0 for anonymous / deleted users
    posted_at: datetime | None  # timezone-aware; None only for deleted placeholders
    message_html: str  # the message cell's inner HTML (jammer and ads removed)
    text: str  # visible plain text, quote blocks removed, one line per line break
    quoted_pids: tuple[int, ...] = ()  # pids linked from quote blocks (the 回复 button's link)
    quote_texts: tuple[str, ...] = ()  # text inside quote blocks (never a vote, kept as evidence)
    edit: EditNote | None = None
    state: PostState = PostState.VISIBLE
    marks: tuple[Mark, ...] = ()
    source: str = "html"  # "html" | "mobile"

    @property
    def content_hash(self) -> str:
        return content_hash(self)


def content_hash(post: Post) -> str:
    """Hash of what a reader sees: changes exactly when the post's content changed.

    Built from source-independent fields, so the same post read through the HTML page or the
    mobile API hashes the same when its words, quotes and state are the same.
    """
    payload = json.dumps(
        [
            post.state.value,
            post.text,
            list(post.quoted_pids),
            sorted({(m.kind.value, m.text) for m in post.marks if m.kind != MarkKind.BBCODE}),
        ],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class ThreadPage:
    tid: int
    page: int  # the page the server actually served (it clamps past the last page)
    total_pages: int
    posts: tuple[Post, ...]
    subject: str | None = None
    replies: int | None = None
    formhash: str | None = None
    ppp: int | None = None  # posts per page the server used (mobile API reports it)
    extra: dict[str, str] = field(default_factory=dict)


class PageErrorKind(StrEnum):
    LOGIN_REQUIRED = "login_required"
    NO_PERMISSION = "no_permission"
    NOT_FOUND = "not_found"
    RATE_LIMITED = "rate_limited"  # flood control, 您浏览的太快了, 刷新过快
    ANTI_CRAWL = "anti_crawl"  # _dsign script page, CC protection, proxy refusal, challenge
    CLOSED = "closed"  # board closed / maintenance
    SERVER_ERROR = "server_error"  # Discuz! System/Database Error, request_tainting 503
    MALFORMED = "malformed"  # not a page we can read


_KIND_ZH = {
    PageErrorKind.LOGIN_REQUIRED: "需要登录",
    PageErrorKind.NO_PERMISSION: "没有权限",
    PageErrorKind.NOT_FOUND: "主题不存在或已被删除",
    PageErrorKind.RATE_LIMITED: "访问过快，论坛限流",
    PageErrorKind.ANTI_CRAWL: "论坛防采集页面",
    PageErrorKind.CLOSED: "论坛关闭或维护中",
    PageErrorKind.SERVER_ERROR: "论坛服务器错误",
    PageErrorKind.MALFORMED: "无法识别的页面",
}


class PageError(ValueError):
    """A response that is not a thread page. Never parsed as posts."""

    def __init__(self, kind: PageErrorKind, detail: str = "") -> None:
        self.kind = kind
        self.detail = detail
        super().__init__(self.message_zh)

    @property
    def message_zh(self) -> str:
        base = _KIND_ZH[self.kind]
        return f"{base}：{self.detail}" if self.detail else base
