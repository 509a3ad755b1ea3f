"""Recognise the pages Discuz! (or a proxy in front of it) serves instead of a thread page.

Used by both thread parsers before they look for posts. Every known page raises
:class:`~parsers.records.PageError` with a kind and the forum's own words as the detail;
anything else returns ``None`` and is the caller's to read.

Where the signatures come from (docs/discuz.md §5, Discuz X3.5 source):

* ``showmessage()`` pages carry ``<div id="messagetext" class="alert_error|alert_info|
  alert_right">`` and are served with HTTP 200 (404 for a missing thread); the ajax form of the
  same message is ``errorhandle_<key>('text', …)`` inside ``<root><![CDATA[…]]></root>``;
* ``discuz_error`` pages say ``Discuz! System Error`` / ``Discuz! Database Error`` (HTTP 503);
  ``request_tainting`` is one of them: 您当前的访问请求当中含有非法字符;
* ``helper_antitheft`` answers page 1 with a bare obfuscated script built around
  ``getName.caller`` that reloads the URL with ``&_dsign=``;
* ``misc_security.php`` (attackevasive) pages: 频繁刷新限制, 代理服务器访问限制, 页面重载开启, and
  an arithmetic form posting ``secqsubmit`` (the Chinese texts are sent as HTML entities);
* "您浏览的太快了" is not Discuz core: a WAF / CDN page, treated as rate limiting.

Two answers are no forum page at all and say the forum is not usable right now, whatever thread
is asked: random bytes (a broken proxy, a mis-served binary) and a redirect loop (the client
detects it). They raise :class:`UnusablePage`, named for what they are — never "空白页面" or
"被截断".

A real thread page (it has ``id="postlist"``, which user content cannot produce: Discuz escapes
quotes in messages) is never matched against the texts, so a player who *writes* one of these
sentences in a post cannot make the thread unreadable.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from parsers.lazyre import LazyPattern
from parsers.records import PageError, PageErrorKind

__all__ = [
    "MESSAGE_RULES",
    "NOT_FORUM_ZH",
    "PAGE_RULES",
    "REDIRECT_LOOP_ZH",
    "UnusablePage",
    "check_page",
    "classify_message",
    "redirect_loop",
]

K = PageErrorKind


#: what a director reads for the two answers that are no forum page at all
REDIRECT_LOOP_ZH = "重定向循环"
NOT_FORUM_ZH = "不是论坛页面（无法识别的内容）"


class UnusablePage(PageError):
    """An answer that is no forum page at all: the forum is not usable right now.

    Its kind stays ``MALFORMED`` (worth another try within the retry bounds); ``name_zh`` says
    what it was (:data:`REDIRECT_LOOP_ZH`, :data:`NOT_FORUM_ZH`), and the crawler stops at it
    instead of asking for the next thread.
    """

    def __init__(self, name_zh: str, detail: str = "") -> None:
        self.name_zh = name_zh
        super().__init__(K.MALFORMED, detail)

    @property
    def message_zh(self) -> str:
        return f"{self.name_zh}：{self.detail}" if self.detail else self.name_zh


def redirect_loop(hops: int, location: str) -> UnusablePage:
    """The error for a forum that kept redirecting (``location``: where it pointed last)."""
    where = f"，最后指向 {location}" if location else ""
    return UnusablePage(REDIRECT_LOOP_ZH, f"论坛连续重定向 {hops} 次仍未给出页面{where}")


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of a detection table: any of ``needles`` found -> ``kind``."""

    kind: PageErrorKind
    needles: tuple[str, ...]
    detail: str = ""  # Chinese explanation when the page has no message of its own


# What a forum *says* (showmessage text, ajax error text, mobile messagestr). First match wins,
# so the more specific rows come first: 您尚未登录，没有权限访问该版块 is a login problem.
MESSAGE_RULES: tuple[Rule, ...] = (
    Rule(K.SERVER_ERROR, ("非法字符",)),
    Rule(K.LOGIN_REQUIRED, ("尚未登录", "请先登录", "需要先登录", "登录后才能", "需要登录")),
    Rule(K.NOT_FOUND, ("主题不存在", "已被删除或正在被审核", "版块不存在", "帖子不存在")),
    Rule(
        K.RATE_LIMITED,
        ("两次发表间隔少于", "刷新过快", "浏览的太快", "速度过快", "刷新间隔", "每小时限制发"),
    ),
    Rule(K.CLOSED, ("站点暂时关闭", "站点已关闭", "站点关闭", "论坛暂时关闭", "维护")),
    Rule(
        K.NO_PERMISSION,
        ("没有权限", "无权", "权限高于", "阅读权限", "无法进行此操作", "禁止访问", "密码"),
    ),
)

# Whole-page signatures for pages without a showmessage box, checked in this order.
PAGE_RULES: tuple[Rule, ...] = (
    Rule(K.ANTI_CRAWL, ("getName.caller",), "防采集脚本页（antitheft），需执行脚本才能继续"),
    Rule(K.ANTI_CRAWL, ("代理服务器访问限制",), "论坛拒绝经代理服务器的访问"),
    Rule(K.ANTI_CRAWL, ("页面重载开启", "页面正在重新载入"), "论坛要求重新载入页面"),
    Rule(K.ANTI_CRAWL, ('name="secqsubmit"',), "论坛要求先回答算术验证题"),
    Rule(
        K.RATE_LIMITED,
        (
            "频繁刷新限制",
            "刷新间隔时间小于",
            "速度过快",
            "您浏览的太快了",
            "刷新过快",
            "访问过于频繁",
        ),
        "访问过快，请稍后再试",
    ),
    Rule(K.RATE_LIMITED, ("两次发表间隔少于",), "发帖过快，请稍后再试"),
)

_THREAD_PAGE = 'id="postlist"'
#: the rest are read only on a page that is not a thread page: compiled when one comes
_SYSTEM_ERROR = LazyPattern(r"Discuz!\s*(System|Database)\s*Error")
_ERROR_INFO = LazyPattern(r'<div class="info">(.*?)</div>', re.S)
_MESSAGETEXT = LazyPattern(r'<div[^>]*\bid="messagetext"[^>]*>(.*?)</div>', re.S)
_MESSAGE_CLASS = LazyPattern(r'\bclass="([^"]*)"')
_PARAGRAPH = LazyPattern(r"<p[^>]*>(.*?)</p>", re.S)
_AJAX_ERROR = LazyPattern(r"errorhandle_\w*\(\s*'((?:[^'\\]|\\.)*)'")
_SCRIPT = LazyPattern(r"<script\b.*?</script>", re.S | re.I)
_TAG = LazyPattern(r"<[^>]*>")
#: characters no page, JSON answer or message has in any number: U+FFFD (bytes the codec could
#: not read) and control characters other than tab, line feed, form feed, carriage return
_UNREADABLE = LazyPattern(r"[\ufffd\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")
#: share of such characters from which a body is random bytes, not a page (a real page has none;
#: random bytes read as UTF-8 are mostly U+FFFD, read as GB18030 still ~10 % control characters)
_UNREADABLE_SHARE = 0.02
_UNREADABLE_MIN = 8
#: an HTML document read with the wrong codec is garbled text, not random bytes
_MARKUP = LazyPattern(r"<(?:!doctype|html|head|body|div|table|script)\b", re.I)


def _plain(fragment: str) -> str:
    text = _TAG.sub(" ", _SCRIPT.sub(" ", fragment))
    return " ".join(html.unescape(text).split())


def classify_message(message: str) -> PageErrorKind | None:
    """The kind of a forum message (showmessage / ajax / mobile text), None if not an error."""
    for rule in MESSAGE_RULES:
        if any(needle in message for needle in rule.needles):
            return rule.kind
    return None


def _raise_for_message(message: str) -> None:
    kind = classify_message(message)
    raise PageError(kind or K.MALFORMED, f"论坛提示：{message}" if message else "论坛提示为空")


def _unreadable(text: str) -> int:
    """How many characters of ``text`` no decoded page has; 0 unless it is random bytes (a
    truncated page is readable up to where it stops)."""
    bad = len(_UNREADABLE.findall(text))
    if bad < _UNREADABLE_MIN or bad <= _UNREADABLE_SHARE * len(text):
        return 0
    return 0 if _MARKUP.search(text) else bad


def check_page(text: str) -> None:
    """Raise :class:`PageError` when ``text`` is a known non-thread page; else return None."""
    if not text.strip():
        raise PageError(K.MALFORMED, "空白页面")
    if _THREAD_PAGE in text:
        return
    system = _SYSTEM_ERROR.search(text)
    if system is not None:
        info = _ERROR_INFO.search(text)
        message = _plain(info.group(1)) if info else ""
        if "非法字符" in message:
            raise PageError(
                K.SERVER_ERROR,
                f"论坛提示：{message}（request_tainting：formhash 已过期或网址含引号、括号）",
            )
        raise PageError(K.SERVER_ERROR, f"Discuz! {system.group(1)} Error：{message}".rstrip("："))
    box = _MESSAGETEXT.search(text)
    if box is not None:
        opening = text[box.start() : box.start() + box.group(0).find(">") + 1]
        css = _MESSAGE_CLASS.search(opening)
        if css is not None and "alert_right" in css.group(1):
            return  # a success message ("回复发布成功"), not an error
        paragraph = _PARAGRAPH.search(box.group(1))
        _raise_for_message(_plain(paragraph.group(1) if paragraph else box.group(1)))
    ajax = _AJAX_ERROR.search(text)
    if ajax is not None:
        _raise_for_message(_plain(ajax.group(1).replace("\\'", "'")))
    plain = html.unescape(text)
    for rule in PAGE_RULES:
        if any(needle in plain for needle in rule.needles):
            raise PageError(rule.kind, rule.detail)
    bad = _unreadable(text)
    if bad:
        raise UnusablePage(NOT_FORUM_ZH, f"共 {len(text)} 个字符，其中 {bad} 个无法解读")
    return None
