"""Read what Discuz! answers when bansha posts: replies, edits and logins; and recognise a post.

Pure: bytes in, records out. No network, no clock.

What the forum answers (docs/discuz.md §4, Discuz X3.5 ``function_message.php`` and
``source/language/lang_message.php``; the real captures in ``tests/fixtures/discuz/misc/``):

* ajax (``inajax=1``): ``<root><![CDATA[ … ]]></root>`` holding
  ``succeedhandle_<key>('url', 'message', {'fid':'3','tid':'7','pid':'148',…})`` or
  ``errorhandle_<key>('message', {'floodctrl':'15'})``; without a handle key, the bare text;
* a plain form POST: ``301 Location: forum.php?mod=viewthread&tid=T&pid=P…#pidP`` on success,
  else a ``showmessage`` page (``<div id="messagetext" class="alert_error"><p>…</p>``, HTTP 200);
* a stale formhash is refused before anything else by ``_xss_check``: HTTP 503 "Discuz! System
  Error" with 您当前的访问请求当中含有非法字符 (not the ``submit_invalid`` text).

Desktop answers carry only localized text, never the language key, so the outcome is read from
the words (the X3.5 zh_CN strings): ``post_reply_succeed`` 回复发布成功,
``post_newthread_succeed`` 您的主题已发布, ``post_edit_succeed`` 帖子编辑成功,
``post_reply_mod_succeed`` 回复需要审核，请等待通过, ``post_newthread_mod_succeed`` 新主题需要审核,
``edit_reply_mod_succeed`` 编辑后的回复需要审核, ``post_flood_ctrl`` 两次发表间隔少于 {N} 秒,
``post_flood_ctrl_posts_per_hour`` 每小时限制发回帖, ``submit_seccode_invalid`` 验证码填写错误,
``submit_secqaa_invalid`` 验证问答,
``login_seccheck2`` 请输入验证码后继续登录, ``login_invalid`` 登录失败，您还可以尝试 {N} 次,
``login_strike`` 密码错误次数过多, ``submit_invalid`` 表单验证串不符.

A moderated reply is answered through ``succeedhandle_`` (the key ends in ``_succeed``) but is
not visible: the words decide, not the handler.

:func:`draft_fingerprint` and :func:`post_fingerprint` tell whether a post in a thread is a
given draft, comparing what a reader sees (see their docstrings).
"""

from __future__ import annotations

import hashlib
import html
import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum

from parsers.records import Post

__all__ = [
    "ForumAnswer",
    "LoginAnswer",
    "LoginForm",
    "LoginOutcome",
    "Member",
    "ReplyOutcome",
    "classify_post_message",
    "draft_fingerprint",
    "fingerprint_text",
    "parse_login_answer",
    "parse_login_form",
    "parse_member",
    "parse_post_answer",
    "post_fingerprint",
]


class ReplyOutcome(StrEnum):
    """What became of one reply / edit POST."""

    POSTED = "posted"  # stored and visible (回复发布成功 / 帖子编辑成功 / 301 to the pid)
    PENDING_MODERATION = "pending_moderation"  # stored, invisible until a moderator approves
    FLOOD = "flood"  # 两次发表间隔少于 N 秒: not stored, try again after N+1 s
    HOURLY_LIMIT = "hourly_limit"  # 每小时限制发回帖 N 个: not stored, wait for the next hour
    CAPTCHA = "captcha"  # 验证码 / 验证问答 demanded: not stored, a human must post it
    BAD_FORMHASH = "bad_formhash"  # 503 非法字符 / 表单验证串不符: not stored, refresh the formhash
    LOGIN_REQUIRED = "login_required"  # 尚未登录: not stored, the session is gone
    REFUSED = "refused"  # any other refusal (too short, [hide], closed thread, permission …)
    SERVER_ERROR = "server_error"  # 5xx without a Discuz message: stored or not, unknown
    UNKNOWN = "unknown"  # an answer we cannot read: stored or not, unknown

    @property
    def stored(self) -> bool | None:
        """True: the forum kept the post; False: it certainly did not; None: cannot tell."""
        if self in (ReplyOutcome.POSTED, ReplyOutcome.PENDING_MODERATION):
            return True
        if self in (ReplyOutcome.SERVER_ERROR, ReplyOutcome.UNKNOWN):
            return None
        return False


@dataclass(frozen=True, slots=True)
class ForumAnswer:
    outcome: ReplyOutcome
    message: str  # the forum's own words (Chinese), "" when it said nothing
    pid: int | None = None
    tid: int | None = None
    wait_s: int | None = None  # flood control: the interval the forum asks for
    values: tuple[tuple[str, str], ...] = ()  # the handler's {'key':'value'} pairs

    def value(self, key: str) -> str | None:
        return next((v for k, v in self.values if k == key), None)


class LoginOutcome(StrEnum):
    SUCCEEDED = "succeeded"  # 欢迎您回来 (success is confirmed by the auth cookie, not the text)
    INVALID = "invalid"  # 登录失败，您还可以尝试 N 次
    LOCKED = "locked"  # 密码错误次数过多，请 15 分钟后重新登录: stop trying
    CAPTCHA = "captcha"  # 请输入验证码后继续登录
    QUESTION = "question"  # 安全提问 needed
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class LoginAnswer:
    outcome: LoginOutcome
    message: str
    tries_left: int | None = None


@dataclass(frozen=True, slots=True)
class LoginForm:
    formhash: str
    loginhash: str | None  # the ``loginhash=L…`` of the form's action


@dataclass(frozen=True, slots=True)
class Member:
    """Who a desktop page was rendered for (``discuz_uid`` in the header script)."""

    uid: int  # 0 = guest
    username: str | None


# --------------------------------------------------------------------------- decoding

_XML_ENCODING = re.compile(rb"""<\?xml[^>]*encoding=["']([A-Za-z0-9_-]{2,20})["']""")
_META_CHARSET = re.compile(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9_-]{2,20})""")
_LEGACY = ("gbk", "gb2312", "gb18030", "cp936")


def _codec(name: str | None) -> str | None:
    if not name:
        return None
    name = name.strip().lower()
    if name in _LEGACY:
        return "gb18030"  # superset of GBK: a rare character does not break the answer
    if name in ("utf-8", "utf8"):
        return "utf-8"
    if name in ("big5", "big5-hkscs"):
        return "big5hkscs"
    return None


def decode_answer(body: bytes, charset: str | None = None) -> str:
    """The text of an answer: the XML prolog or the meta tag decide, then ``charset``."""
    head = body[:2048]
    declared = _XML_ENCODING.search(head) or _META_CHARSET.search(head.lower())
    codec = _codec(declared.group(1).decode("ascii") if declared else None) or _codec(charset)
    if codec is None:
        try:
            return body.decode("utf-8")
        except UnicodeDecodeError:
            codec = "gb18030"
    return body.decode(codec, errors="replace")


# --------------------------------------------------------------------------- post answers

_CDATA = re.compile(r"<root>\s*<!\[CDATA\[(.*?)\]\]>\s*</root>", re.S)
_JS_STR = r"'((?:[^'\\]|\\.)*)'"
_SUCCEED = re.compile(
    r"succeedhandle_\w*\(\s*" + _JS_STR + r"\s*,\s*" + _JS_STR + r"(.*?)\)\s*;", re.S
)
_ERROR = re.compile(r"errorhandle_\w*\(\s*" + _JS_STR + r"(.*?)\)\s*;", re.S)
_JS_PAIR = re.compile(r"'(\w+)'\s*:\s*'((?:[^'\\]|\\.)*)'")
_SCRIPT = re.compile(r"<script\b.*?</script>", re.S | re.I)
_TAG = re.compile(r"<[^>]*>")
_MESSAGETEXT = re.compile(r'<div[^>]*\bid="messagetext"[^>]*>(.*?)</div>', re.S)
_PARAGRAPH = re.compile(r"<p[^>]*>(.*?)</p>", re.S)
_SYSTEM_ERROR = re.compile(r"Discuz!\s*(?:System|Database)\s*Error")
_ERROR_INFO = re.compile(r'<div class="info">(.*?)</div>', re.S)
_PID_IN_URL = re.compile(r"(?:[?&]pid=|#pid)(\d{1,18})(?!\d)")
_TID_IN_URL = re.compile(r"[?&]tid=(\d{1,18})(?!\d)")
_FLOOD_SECONDS = re.compile(r"少于\s*(\d{1,6})\s*秒")
_TRIES_LEFT = re.compile(r"还可以尝试\s*(\d{1,3})\s*次")


def _unjs(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _plain(fragment: str) -> str:
    text = _TAG.sub(" ", _SCRIPT.sub(" ", fragment))
    return " ".join(html.unescape(text).split())


def _pairs(raw: str) -> tuple[tuple[str, str], ...]:
    return tuple((k, _unjs(v)) for k, v in _JS_PAIR.findall(raw))


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() else None


# Ordered: the first row whose needle is in the message decides.
_POST_RULES: tuple[tuple[ReplyOutcome, tuple[str, ...]], ...] = (
    (ReplyOutcome.CAPTCHA, ("验证码", "验证问答", "seccode", "secqaa")),
    (ReplyOutcome.PENDING_MODERATION, ("需要审核", "通过审核后才能显示")),
    (ReplyOutcome.POSTED, ("发布成功", "编辑成功", "回复成功", "已经发布", "主题已发布")),
    (ReplyOutcome.FLOOD, ("两次发表间隔少于",)),
    (ReplyOutcome.HOURLY_LIMIT, ("每小时限制发",)),
    (ReplyOutcome.BAD_FORMHASH, ("非法字符", "表单验证串不符", "来路不正确")),
    (ReplyOutcome.LOGIN_REQUIRED, ("尚未登录", "请先登录", "需要先登录")),
)


def classify_post_message(message: str) -> ReplyOutcome:
    """The outcome a forum message (showmessage / ajax text) stands for; REFUSED by default."""
    lowered = message.lower()
    for outcome, needles in _POST_RULES:
        if any(needle in lowered for needle in needles):
            return outcome
    return ReplyOutcome.REFUSED if message else ReplyOutcome.UNKNOWN


def _answer(message: str, values: tuple[tuple[str, str], ...] = (), url: str = "") -> ForumAnswer:
    outcome = classify_post_message(message)
    pid = _int(dict(values).get("pid"))
    if pid is None and url:
        match = _PID_IN_URL.search(url)
        pid = int(match.group(1)) if match else None
    tid = _int(dict(values).get("tid"))
    if tid is None and url:
        match = _TID_IN_URL.search(url)
        tid = int(match.group(1)) if match else None
    wait = None
    if outcome is ReplyOutcome.FLOOD:
        wait = _int(dict(values).get("floodctrl"))
        if wait is None:
            match = _FLOOD_SECONDS.search(message)
            wait = int(match.group(1)) if match else None
    return ForumAnswer(outcome, message, pid, tid, wait, values)


def parse_post_answer(
    status: int, body: bytes, *, location: str | None = None, charset: str | None = None
) -> ForumAnswer:
    """Read the forum's answer to a reply or edit POST (ajax XML, redirect or message page).

    ``location`` is the ``Location`` header of a redirect (the request must not follow it);
    ``charset`` the one of the ``Content-Type`` header (the body's own declaration wins).
    """
    if status in (301, 302, 303, 307, 308):
        url = location or ""
        match = _PID_IN_URL.search(url)
        if match and "mod=viewthread" in url:
            tid_match = _TID_IN_URL.search(url)
            return ForumAnswer(
                ReplyOutcome.POSTED,
                "",
                int(match.group(1)),
                int(tid_match.group(1)) if tid_match else None,
            )
        return ForumAnswer(ReplyOutcome.UNKNOWN, f"论坛把请求转到了 {url or '（空地址）'}")
    text = decode_answer(body, charset)
    if _SYSTEM_ERROR.search(text):
        info = _ERROR_INFO.search(text)
        message = _plain(info.group(1)) if info else ""
        if "非法字符" in message:
            return ForumAnswer(ReplyOutcome.BAD_FORMHASH, message)
        return ForumAnswer(ReplyOutcome.SERVER_ERROR, message or "Discuz! System Error")
    cdata = _CDATA.search(text)
    if cdata is not None:
        inner = cdata.group(1)
        succeed = _SUCCEED.search(inner)
        if succeed is not None:
            url, message, rest = succeed.groups()
            return _answer(_plain(_unjs(message)), _pairs(rest), _unjs(url))
        error = _ERROR.search(inner)
        if error is not None:
            message, rest = error.groups()
            return _answer(_plain(_unjs(message)), _pairs(rest))
        return _answer(_plain(inner))
    box = _MESSAGETEXT.search(text)
    if box is not None:
        paragraph = _PARAGRAPH.search(box.group(1))
        return _answer(_plain(paragraph.group(1) if paragraph else box.group(1)))
    if status >= 500:
        return ForumAnswer(ReplyOutcome.SERVER_ERROR, f"论坛返回 HTTP {status}")
    if not text.strip():
        return ForumAnswer(ReplyOutcome.UNKNOWN, f"论坛返回了空白页面（HTTP {status}）")
    return ForumAnswer(ReplyOutcome.UNKNOWN, f"无法识别论坛的回答（HTTP {status}）")


# --------------------------------------------------------------------------- login

_FORM_HASH = re.compile(r'name="formhash"\s+value="([0-9A-Za-z]{4,16})"')
_LOGIN_HASH = re.compile(r"loginhash=(L[0-9A-Za-z]{1,16})")
_DISCUZ_UID = re.compile(r"discuz_uid\s*=\s*'(\d{1,18})'")
_VWMY = re.compile(r'<strong class="vwmy[^"]*">\s*<a [^>]*>([^<]{1,64})</a>')


def parse_login_form(text: str) -> LoginForm | None:
    """The formhash and loginhash of ``member.php?mod=logging&action=login``; None if absent."""
    formhash = _FORM_HASH.search(text)
    if formhash is None:
        return None
    loginhash = _LOGIN_HASH.search(text)
    return LoginForm(formhash.group(1), loginhash.group(1) if loginhash else None)


def parse_member(text: str) -> Member:
    """The account a desktop page was rendered for: uid 0 for a guest."""
    uid = _DISCUZ_UID.search(text)
    name = _VWMY.search(text)
    return Member(
        int(uid.group(1)) if uid else 0, html.unescape(name.group(1)).strip() if name else None
    )


def parse_login_answer(status: int, body: bytes, *, charset: str | None = None) -> LoginAnswer:
    """Read the answer to ``member.php?mod=logging&action=login&loginsubmit=yes``.

    Success is best confirmed by the ``{cookiepre}auth`` cookie the answer sets
    (docs/discuz.md §4.2); this reads the words, for the failures.
    """
    text = decode_answer(body, charset)
    cdata = _CDATA.search(text)
    message = ""
    if cdata is not None:
        inner = cdata.group(1)
        succeed = _SUCCEED.search(inner)
        error = _ERROR.search(inner)
        if succeed is not None:
            message = _plain(_unjs(succeed.group(2)))
        elif error is not None:
            message = _plain(_unjs(error.group(1)))
        else:
            message = _plain(inner)
    else:
        box = _MESSAGETEXT.search(text)
        if box is not None:
            paragraph = _PARAGRAPH.search(box.group(1))
            message = _plain(paragraph.group(1) if paragraph else box.group(1))
        elif _SYSTEM_ERROR.search(text):
            info = _ERROR_INFO.search(text)
            message = _plain(info.group(1)) if info else "Discuz! System Error"
    if "验证码" in message or "seccode" in message.lower():
        return LoginAnswer(LoginOutcome.CAPTCHA, message)
    if "次数过多" in message:
        return LoginAnswer(LoginOutcome.LOCKED, message)
    tries = _TRIES_LEFT.search(message)
    if tries is not None or "登录失败" in message or "密码错误" in message:
        return LoginAnswer(LoginOutcome.INVALID, message, int(tries.group(1)) if tries else None)
    if "安全提问" in message:
        return LoginAnswer(LoginOutcome.QUESTION, message)
    if "欢迎您回来" in message:
        return LoginAnswer(LoginOutcome.SUCCEEDED, message)
    return LoginAnswer(LoginOutcome.UNKNOWN, message or f"无法识别论坛的回答（HTTP {status}）")


# --------------------------------------------------------------------------- fingerprints

# Blocks whose content a reader does not see as text (or sees elsewhere): removed whole.
_QUOTE_BLOCK = re.compile(r"\s?\[quote\][\n\r]*(.+?)[\n\r]*\[/quote\]\s?", re.S | re.I)
_EDIT_NOTE = re.compile(r"\[i=s\]\s*本帖最后由 .*? 于 .*? 编辑\s*\[/i\]", re.S)
_OPAQUE = re.compile(
    r"\[(img|attach|attachimg|media|flash|swf|audio|qq)(?:=[^\]]*)?\].*?\[/\1\]", re.S | re.I
)
# Tags Discuz renders as markup; any other bracketed text is shown literally. One pass, like
# Discuz, so an escaped tag such as "[[b][/b]color=red]" keeps its literal "[color=red]".
_TAGS = (
    "b|i|u|s|p|sup|sub|color|backcolor|size|font|align|float|list|indent|url|email|hr|hide|"
    "code|free|table|tr|td|th|li|\\*|password|postbg|rand|index|page|ul|ol"
)
_TAG_RE = re.compile(rf"\[/?(?:{_TAGS})(?:=[^\]\r\n]*)?\]", re.I)


def fingerprint_text(text: str) -> str:
    """The comparison form of shown text: entities decoded once, NFKC, case folded, and only
    letters and digits kept (spacing, punctuation and line breaks do not survive rendering
    reliably: Discuz turns spaces into ``&nbsp;``, a theme may add or drop blank lines)."""
    text = unicodedata.normalize("NFKC", html.unescape(text)).casefold()
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


def _digest(canonical: str) -> str:
    return "v1:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


_URL_TAG = re.compile(r"\[url(?:=([^\]\r\n]*))?\](.*?)\[/url\]", re.S | re.I)
# parseurl() writes every [url] as <a href="…" target="_blank">; quotes (and the findpost link
# in their header) are left out, as the text leaves them out
_HTML_QUOTE = re.compile(r"<blockquote\b.*?</blockquote>", re.S | re.I)
_HTML_LINK = re.compile(r"""<a\s[^>]*?href\s*=\s*["']([^"']*)["'][^>]*\btarget=["']_blank""", re.I)
_SITE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://[^/?#]*|www\.[^/?#]*)", re.I)


def link_key(url: str) -> str:
    """A link target as Discuz leaves it recognisable: entities decoded, the scheme, host and
    folders dropped (parseurl() prefixes a relative [url] with the site's address), the query's
    parameters in order (``home.php?mod=space&uid=7`` → ``home.php?mod=space&uid=7``)."""
    url = _SITE.sub("", html.unescape(url).strip())
    path, _, query = url.split("#", 1)[0].partition("?")
    script = path.rsplit("/", 1)[-1].lower()
    return script + "?" + "&".join(sorted(p for p in query.split("&") if p))


def draft_links(body: str) -> list[str]:
    """The targets of a draft's ``[url]`` links as :func:`link_key` writes them, quotes left
    out, in order."""
    text = _QUOTE_BLOCK.sub(" ", body.replace("\r\n", "\n"))
    text = _OPAQUE.sub(" ", text)
    return [
        link_key(m.group(1) if m.group(1) is not None else m.group(2))
        for m in _URL_TAG.finditer(text)
    ]


def post_links(post: Post) -> list[str]:
    """The targets of the links a post's message shows (as :func:`draft_links`)."""
    html_text = _HTML_QUOTE.sub(" ", post.message_html)
    return [link_key(m.group(1)) for m in _HTML_LINK.finditer(html_text)]


def _with_links(words: str, links: list[str]) -> str:
    if not links:
        return words
    return words + " links:" + hashlib.sha256("\n".join(links).encode("utf-8")).hexdigest()


def fingerprint_words(fingerprint: str) -> str:
    """The part of a fingerprint that stands for the words alone (what a reader sees, links'
    targets not included): a reply is found by its words (a forum that rewrites links must not
    make bansha post it twice)."""
    return fingerprint.split(" ", 1)[0]


def draft_fingerprint(body: str) -> str:
    """What a reader will see of a draft (BBCode) once posted, as a hash, and where its links
    lead.

    Quote blocks, edit notes, images and attachments are removed with their content (the
    thread parser keeps quotes apart from the text); every other known tag is removed and its
    content kept; then :func:`fingerprint_text`. Smiley codes are kept: bansha posts with
    ``smileyoff=1``, so the forum shows them as typed. The targets of ``[url]`` links follow
    (:func:`draft_links`): two 电梯 that differ only in a link (a substitute's uid) differ.
    A post whose :func:`post_fingerprint` equals this shows the draft's words and links,
    whatever Discuz did to the markup; :func:`fingerprint_words` compares the words alone.
    """
    text = body.replace("\r\n", "\n")
    text = _QUOTE_BLOCK.sub(" ", text)
    text = _EDIT_NOTE.sub(" ", text)
    text = _OPAQUE.sub(" ", text)
    text = _TAG_RE.sub("", text)
    return _with_links(_digest(fingerprint_text(text)), draft_links(body))


def post_fingerprint(post: Post) -> str:
    """The fingerprint of a post read from a thread page (its visible text, quotes excluded,
    and its links' targets)."""
    return _with_links(_digest(fingerprint_text(post.text)), post_links(post))
