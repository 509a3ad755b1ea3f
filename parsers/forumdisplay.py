"""Parse a forum's thread listing: ``forum.php?mod=forumdisplay`` and the mobile API's
``module=forumdisplay``.

Pure: bytes in, records out. No network, no clock (the time a page was served is an argument).

What the listing shows (Discuz X3.5 ``source/module/forum/forum_forumdisplay.php``,
``template/default/forum/forumdisplay_list.htm``; the real pages in
``tests/fixtures/discuz/desktop/section-list-*.html`` and ``mobile/section-api4-*.json``):

* each thread is a ``<tbody id="normalthread_T">`` (``stickthread_T`` when sticky, displayorder
  1-4) of ``table#threadlisttableid``; its subject is ``a.s.xst`` (stored HTML-escaped, read
  unescaped here), the starter ``td.by cite a`` (``home.php?mod=space&uid=U``), the start time
  ``td.by em`` (``dgmdate($dateline, 'u', 9999, dateformat)``: a relative phrase today and the
  six days before, else the date alone — never the time of an older thread), the replies and
  views ``td.num``;
* a closed thread (``forum_thread.closed = 1``) has ``<th class="lock">`` and the ``fico-lock``
  icon (``folder == 'lock'``); a moved one too, with "-" for its counts;
* the pager (``div.pg`` in ``#fd_page_top``) says ``共 N 页``; no pager means one page;
* the mobile API gives exact times (``dbdateline``, Unix seconds) and ``displayorder`` but no
  ``closed`` field (``sub_threadlist.php`` keeps a fixed list of fields): ``closed`` is None;
* a thread waiting for a moderator (新主题需要审核, ``displayorder = -2``) is not listed; its
  logged-in author sees a banner instead when the setting ``allowmoderatingthread`` is on
  (``forum_forumdisplay.php:218-220`` counts the viewer's waiting threads of this forum,
  ``forumdisplay.htm:180``, ``lang_template.php:289`` ``forum_moderate_unhandled``):
  ``<div class="ntc_l hm xi2"><strong><a href="home.php?mod=space&uid=U&do=thread&view=me&
  type=thread&from=&filter=aduit">您有 N 个主题正等待审核中，点击查看</a></strong></div>`` —
  :attr:`ForumPage.waiting` is that N (0 without the banner).

The banner's link is the author's own list of waiting threads (``home.php?mod=space&uid=U&
do=thread&view=me&type=thread&filter=aduit[&fid=F]``, ``source/include/space/space_thread.php``:
``displayorder = -2``, 20 a page, newest started first; ``template/default/home/space_thread.htm``):
:func:`parse_space_threads` reads it — each row a ``<th><a href="forum.php?mod=viewthread&tid=T">
subject</a>`` and the forum ``<a href="forum.php?mod=forumdisplay&fid=F">``, ``<p class="emp">``
when there is none, ``simplepage``'s ``a.nxt`` (下一页) when a full page may have a next one.

A page that is not a listing (login required, no permission, an error page) raises
:class:`~parsers.records.PageError` through :func:`parsers.pagecheck.check_page`; a listing is
recognised by ``id="threadlisttableid"`` first, so a subject that quotes an error message
cannot make the listing unreadable.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass
from datetime import datetime, tzinfo

from pydantic import BaseModel, ConfigDict, ValidationError
from selectolax.lexbor import LexborHTMLParser, LexborNode

from parsers.discuz_time import parse_discuz_time
from parsers.mobile import mobile_variables
from parsers.pagecheck import check_page
from parsers.records import PageError, PageErrorKind
from parsers.reply import decode_answer, parse_member

__all__ = [
    "ForumPage",
    "ForumThread",
    "SpaceThread",
    "SpaceThreads",
    "parse_forumdisplay",
    "parse_mobile_forumdisplay",
    "parse_space_threads",
]

K = PageErrorKind


@dataclass(frozen=True, slots=True)
class ForumThread:
    """One thread as the forum listing shows it."""

    tid: int
    subject: str  # as a reader sees it (entities decoded)
    author: str  # "" for an anonymous thread
    authorid: int | None  # None when the listing does not link the starter (anonymous)
    created_at: datetime | None  # when shown: exact (mobile), to the unit of a relative
    # phrase, or only the day (00:00) for an older thread on the desktop page
    replies: int | None  # None for a moved thread ("-")
    views: int | None
    closed: bool | None  # None: the listing does not say (mobile API)
    sticky: bool  # 置顶 (displayorder 1-4)


@dataclass(frozen=True, slots=True)
class ForumPage:
    fid: int | None
    page: int  # the page the forum served (past the end it serves page 1)
    total_pages: int
    threads: tuple[ForumThread, ...]  # in the forum's order (sticky first)
    forum_name: str | None = None
    formhash: str | None = None
    member_uid: int | None = None  # the account the page was served to, 0 for a guest
    source: str = "html"  # "html" | "mobile"
    waiting: int = 0  # the viewer's threads of this forum waiting for a moderator (the banner)


_LISTING = "threadlisttableid"
_TBODY_ID = re.compile(r"^(normal|stick)thread_(\d{1,12})$")
_UID = re.compile(r"[?&;]uid=(\d{1,12})")
_FID = re.compile(r"forum_(\d{1,12})")
_TOTAL = re.compile(r"共\s*(\d{1,9})\s*页")
_INT = re.compile(r"-?\d{1,12}")
_DATE = re.compile(r"\d{4}\s*[-/.年]\s*\d{1,2}")
_AUDIT = "filter=aduit"  # sic: Discuz's own spelling


def _int(text: str | None) -> int | None:
    match = _INT.search(text or "")
    return int(match.group(0)) if match else None


def _text(node: LexborNode | None) -> str:
    return " ".join((node.text() if node is not None else "").split())


def parse_forumdisplay(
    body: bytes | str,
    *,
    tz: tzinfo,
    now: datetime | None = None,
    encoding: str | None = None,
) -> ForumPage:
    """Parse a desktop ``forum.php?mod=forumdisplay`` page.

    ``now`` is when the page was served (relative start times are resolved against it; without
    it they stay None); ``encoding`` the charset of the HTTP header (the page's own wins).
    """
    text = body if isinstance(body, str) else decode_answer(body, encoding)
    try:
        return _parse_desktop(text, tz=tz, now=now)
    except PageError:
        raise
    except (ValueError, OverflowError, RecursionError) as exc:
        raise PageError(K.MALFORMED, f"版块主题列表解析失败：{exc}") from exc


def _parse_desktop(text: str, *, tz: tzinfo, now: datetime | None) -> ForumPage:
    if f'id="{_LISTING}"' not in text:
        check_page(text)  # a login prompt, a refusal, an error page: raises
        raise PageError(K.MALFORMED, "不是版块主题列表页面（没有 #threadlisttableid）")
    if "</html>" not in text[-1024:].lower():
        raise PageError(K.MALFORMED, "页面不完整（没有 </html> 结尾，可能被截断）")
    tree = LexborHTMLParser(text)
    table = tree.css_first(f"#{_LISTING}")
    if table is None:  # pragma: no cover - the id was found in the text
        raise PageError(K.MALFORMED, "不是版块主题列表页面（没有 #threadlisttableid）")
    threads = [
        thread
        for tbody in table.css("tbody")
        if (thread := _desktop_thread(tbody, tz=tz, now=now)) is not None
    ]
    page, total = 1, 1
    pager = tree.css_first("#fd_page_top div.pg") or tree.css_first("div.pg")
    if pager is not None:
        current = pager.css_first("strong")
        page = _int(current.text()) or 1 if current is not None else 1
        found = _TOTAL.search(pager.html or "")
        total = int(found.group(1)) if found else page
    fid_match = _FID.search(table.attrs.get("summary") or "")
    formhash = tree.css_first('input[name="formhash"]')
    name = tree.css_first("div.bm_h h1 a") or tree.css_first("#pt a:last-child")
    member = parse_member(text[:20000])
    return ForumPage(
        fid=int(fid_match.group(1)) if fid_match else None,
        page=page,
        total_pages=max(total, page),
        threads=tuple(threads),
        forum_name=_text(name) or None,
        formhash=(formhash.attrs.get("value") or None) if formhash is not None else None,
        member_uid=member.uid if "discuz_uid" in text[:20000] else None,
        source="html",
        waiting=_waiting_banner(tree),
    )


def _waiting_banner(tree: LexborHTMLParser) -> int:
    """N of 您有 N 个主题正等待审核中 (the link to the viewer's waiting threads), else 0."""
    for link in tree.css("div.ntc_l a"):
        if _AUDIT in (link.attrs.get("href") or ""):
            return max(0, _int(link.text()) or 0)
    return 0


def _created(shown: str, *, tz: tzinfo, now: datetime | None) -> datetime | None:
    """The start time a listing shows; a relative phrase needs ``now``, a date does not."""
    if not shown or (now is None and not _DATE.search(shown)):
        return None
    try:
        return parse_discuz_time(shown, tz=tz, now=now or datetime(1970, 1, 1, tzinfo=tz))
    except ValueError:
        return None


def _desktop_thread(tbody: LexborNode, *, tz: tzinfo, now: datetime | None) -> ForumThread | None:
    match = _TBODY_ID.match(tbody.attrs.get("id") or "")
    if match is None:
        return None  # the separator line, an announcement, an ad
    tid = int(match.group(2))
    th = tbody.css_first("th")
    link = tbody.css_first("a.xst")
    if th is None or link is None:
        raise PageError(K.MALFORMED, f"主题 {tid} 的列表行没有标题")
    classes = (th.attrs.get("class") or "").split()
    closed = "lock" in classes or tbody.css_first("td.icn .fico-lock") is not None
    author, authorid, created_at = "", None, None
    by = tbody.css_first("td.by")
    if by is not None:
        starter = by.css_first("cite a")
        if starter is not None:
            author = _text(starter)
            uid = _UID.search(starter.attrs.get("href") or "")
            authorid = int(uid.group(1)) if uid else None
        else:
            author = _text(by.css_first("cite"))
        created_at = _created(_text(by.css_first("em")), tz=tz, now=now)
    num = tbody.css_first("td.num")
    replies = _int(_text(num.css_first("a"))) if num is not None else None
    views = _int(_text(num.css_first("em"))) if num is not None else None
    return ForumThread(
        tid=tid,
        subject=_text(link),
        author=author,
        authorid=authorid,
        created_at=created_at,
        replies=replies,
        views=views,
        closed=closed,
        sticky=match.group(1) == "stick",
    )


# --------------------------------------------------------------------------- mobile


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _MobileListed(_Model):
    tid: int
    author: str = ""
    authorid: int = 0
    subject: str = ""
    dbdateline: int | None = None
    replies: str = ""
    views: str = ""
    displayorder: int = 0


class _MobileForum(_Model):
    fid: int | None = None
    name: str | None = None
    threadcount: int | None = None
    threads: int | None = None


class _MobileListing(_Model):
    formhash: str | None = None
    member_uid: int | None = None
    forum: _MobileForum = _MobileForum()
    forum_threadlist: list[_MobileListed] = []
    tpp: int = 20
    page: int = 1


def parse_mobile_forumdisplay(body: bytes, *, tz: tzinfo) -> ForumPage:
    """Parse a mobile API v4 ``module=forumdisplay`` answer (``closed`` is not in it: None)."""
    variables = mobile_variables(body, "forum_threadlist")
    try:
        parsed = _MobileListing.model_validate(variables)
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors()[:3])
        raise PageError(K.MALFORMED, f"移动接口数据格式不符：{fields}") from exc
    if parsed.tpp < 1:
        raise PageError(K.MALFORMED, f"移动接口的 tpp 无效：{parsed.tpp}")
    count = parsed.forum.threadcount
    if count is None:
        count = parsed.forum.threads or 0
    total = max(1, math.ceil(count / parsed.tpp))
    threads = []
    for raw in parsed.forum_threadlist:
        created = None
        if raw.dbdateline:
            try:
                created = datetime.fromtimestamp(raw.dbdateline, tz)
            except (OverflowError, OSError, ValueError) as exc:
                raise PageError(K.MALFORMED, f"主题 {raw.tid} 的 dbdateline 无效") from exc
        threads.append(
            ForumThread(
                tid=raw.tid,
                subject=html.unescape(raw.subject),
                author=raw.author,
                authorid=raw.authorid or None,
                created_at=created,
                replies=_int(raw.replies) if raw.replies.strip() != "-" else None,
                views=_int(raw.views) if raw.views.strip() != "-" else None,
                closed=None,
                sticky=raw.displayorder in (1, 2, 3, 4),
            )
        )
    return ForumPage(
        fid=parsed.forum.fid,
        page=parsed.page,
        total_pages=max(total, parsed.page),
        threads=tuple(threads),
        forum_name=html.unescape(parsed.forum.name) if parsed.forum.name else None,
        formhash=parsed.formhash or None,
        member_uid=parsed.member_uid,
        source="mobile",
    )


# --------------------------------------------------------------------------- own threads


@dataclass(frozen=True, slots=True)
class SpaceThread:
    """One row of a member's own thread list (``home.php?mod=space&do=thread&view=me``)."""

    tid: int
    subject: str  # as a reader sees it
    fid: int | None  # the forum the row links (None when it links none)


@dataclass(frozen=True, slots=True)
class SpaceThreads:
    """A page of ``home.php?mod=space&uid=U&do=thread&view=me&type=thread[&filter=…]``."""

    threads: tuple[SpaceThread, ...]  # in the page's order (newest started first)
    has_next: bool  # a full page: ``simplepage`` links a 下一页
    member_uid: int | None = None  # the account the page was served to, 0 for a guest


_LIST_FORM = 'id="delform"'
_TID = re.compile(r"[?&;]tid=(\d{1,12})")
_FID_ARG = re.compile(r"[?&;]fid=(\d{1,12})")


def parse_space_threads(body: bytes | str, *, encoding: str | None = None) -> SpaceThreads:
    """Parse a member's own thread list (the list of threads waiting for a moderator with
    ``filter=aduit``). A page that is not the list (a login prompt, a refusal, a closed home,
    an error) raises :class:`~parsers.records.PageError`."""
    text = body if isinstance(body, str) else decode_answer(body, encoding)
    if _LIST_FORM not in text:
        check_page(text)
        raise PageError(K.MALFORMED, "不是“我的帖子”列表页面（没有 #delform）")
    if "</html>" not in text[-1024:].lower():
        raise PageError(K.MALFORMED, "页面不完整（没有 </html> 结尾，可能被截断）")
    tree = LexborHTMLParser(text)
    form = tree.css_first("#delform")
    if form is None:  # pragma: no cover - the id was found in the text
        raise PageError(K.MALFORMED, "不是“我的帖子”列表页面（没有 #delform）")
    threads = []
    for row in form.css("tr"):
        link = row.css_first("th a")
        tid = _TID.search(link.attrs.get("href") or "") if link is not None else None
        if link is None or tid is None or "viewthread" not in (link.attrs.get("href") or ""):
            continue  # the header row, the "no posts" row
        forum = next(
            (a for a in row.css("td a") if "forumdisplay" in (a.attrs.get("href") or "")), None
        )
        fid = _FID_ARG.search(forum.attrs.get("href") or "") if forum is not None else None
        threads.append(
            SpaceThread(int(tid.group(1)), _text(link), int(fid.group(1)) if fid else None)
        )
    member = parse_member(text[:20000])
    return SpaceThreads(
        threads=tuple(threads),
        has_next=tree.css_first("div.pg a.nxt") is not None,
        member_uid=member.uid if "discuz_uid" in text[:20000] else None,
    )
