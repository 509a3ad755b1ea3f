# ruff: noqa: E501  (the templates reproduce Discuz's markup line for line)
"""Markup and JSON of a default-template Discuz! X3.5, for the local simulator.

Pure functions (no clock, no I/O): ``pipeline.sim.simulator`` owns the forum state and calls these to
build response bodies. Everything here mirrors what the real X3.5 server in
a real Discuz! X3.5 serves, or what its source says (docs/discuz.md):

* ``discuzcode`` / ``mobile_discuzcode``: BBCode to the desktop HTML (``function_discuzcode.php``)
  and to the mobile API v4 HTML (``source/plugin/mobile/discuzcode.func.php``).
* ``dgmdate_u``: the ``'u'`` time format (``3&nbsp;分钟前`` wrapped in ``<span title>``).
* ``multi``: the ``div.pg`` pager (``helper_page::multi``).
* ``viewthread_page`` and the message pages (``showmessage``), the ajax XML envelope, the
  mobile API JSON encoding (ASCII with ``\\uXXXX`` and ``\\/`` escapes, scalars as strings).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from urllib.parse import quote

# Floor names: index 0 is the suffix for numbered floors, 1-4 the install-default custom names.
POSTNO: tuple[str, ...] = ("<sup>#</sup>", "楼主", "沙发", "板凳", "地板")

# The default smiley set (static/image/smiley/default), code -> (smilieid, file).
SMILIES: dict[str, tuple[int, str]] = {
    ":)": (1, "smile.gif"),
    ":(": (2, "sad.gif"),
    ":D": (3, "biggrin.gif"),
    ":'(": (4, "cry.gif"),
    ":@": (5, "huffy.gif"),
    ":o": (6, "shocked.gif"),
    ":P": (7, "tongue.gif"),
    ":$": (8, "shy.gif"),
    ";P": (9, "titter.gif"),
    ":L": (10, "sweat.gif"),
    ":Q": (11, "mad.gif"),
    ":lol": (12, "lol.gif"),
    ":loveliness:": (13, "loveliness.gif"),
    ":funk:": (14, "funk.gif"),
    ":curse:": (15, "curse.gif"),
    ":dizzy:": (16, "dizzy.gif"),
    ":shutup:": (17, "shutup.gif"),
    ":sleepy:": (18, "sleepy.gif"),
    ":hug:": (19, "hug.gif"),
    ":victory:": (20, "victory.gif"),
    ":time:": (21, "time.gif"),
    ":kiss:": (22, "kiss.gif"),
    ":handshake": (23, "handshake.gif"),
    ":call:": (24, "call.gif"),
}
# Longest codes first so ":lol" wins over ":L" and ":loveliness:" over ":lol".
_SMILEY_RE = re.compile("|".join(re.escape(c) for c in sorted(SMILIES, key=len, reverse=True)))
_MAX_SMILIES = 10  # setting maxsmilies (install default)

# Language strings (source/language/lang_message.php and friends, X3.5 zh_CN).
MSG_THREAD_NONEXISTENCE = "抱歉，指定的主题不存在或已被删除或正在被审核"
MSG_VIEWPERM_LOGIN = "抱歉，您尚未登录，没有权限访问该版块"
MSG_REPLYPERM_LOGIN = "抱歉，您尚未登录，没有权限在该版块回帖"
MSG_FLOOD = "抱歉，您两次发表间隔少于 {floodctrl} 秒，请稍候再发表"
MSG_TOO_SHORT = "抱歉，您的帖子小于 {minpostsize} 个字符的限制"
MSG_TOO_LONG = "抱歉，您的帖子超过 {maxpostsize} 个字符的限制"
MSG_HIDE_NOT_ALLOWED = "抱歉，您没有权限使用 [hide] 代码"
MSG_REPLY_SUCCEED = "非常感谢，回复发布成功，现在将转入主题页，请稍候……[ 点击这里转入主题列表 ]"
MSG_LOGIN_INVALID = "登录失败，您还可以尝试 {loginperm} 次"
MSG_LOGIN_STRIKE = "密码错误次数过多，请 15 分钟后重新登录"
MSG_LOGIN_SUCCEED = "欢迎您回来，{usergroup} {username}，现在将转入登录前页面"
MSG_LOGOUT_SUCCEED = "您已退出站点，现在将以游客身份转入退出前页面，请稍候……"
MSG_REQUEST_TAINTING = "您当前的访问请求当中含有非法字符，已经被系统拒绝"
MSG_BOARD_CLOSED = '抱歉，本站点暂时关闭，详情请 <a href="mailto:admin@example.com">联系管理员</a>'
MSG_TOO_FAST = "您浏览的太快了，请稍后再试"
MSG_SECCODE_INVALID = "抱歉，验证码填写错误"
MSG_LOGIN_SECCHECK = "请输入验证码后继续登录"
MSG_REPLY_MOD_SUCCEED = "回复需要审核，请等待通过"
MSG_EDIT_SUCCEED = "帖子编辑成功，现在将转入主题页，请稍候……[ 点击这里转入主题列表 ]"
MSG_EDIT_NOPERMISSION = "抱歉，您没有权限编辑他人发表的帖子"
MSG_POST_NONEXISTENCE = "帖子不存在"
MSG_NOT_LOGGEDIN = "抱歉，您尚未登录，无法进行此操作"
MSG_THREAD_CLOSED = "抱歉，本主题已关闭，不再接受新内容"
MSG_FORUM_NONEXISTENCE = "抱歉，指定的版块不存在"
MSG_POSTPERM_LOGIN = "抱歉，您尚未登录，没有权限在该版块发帖"
MSG_NEWTHREAD_NOPERMISSION = "抱歉，本版块只有特定用户组可以发新主题"
MSG_SM_ISNULL = "抱歉，您尚未输入标题或内容"
MSG_SUBJECT_TOOLONG = "抱歉，您的标题超过最大字符限制，请缩短标题后再试"
MSG_THREADS_PER_HOUR = "抱歉，您所在的用户组每小时限制发主题 {threads_per_hour} 个，请稍候再发表"
MSG_NEWTHREAD_SUCCEED = (
    "非常感谢，您的主题已发布，现在将转入主题页，请稍候……<br />"
    '<a id="forward_a" href="forum.php?mod=forumdisplay&fid={fid}">[ 点击这里转入主题列表 ]</a>'
)
MSG_NEWTHREAD_MOD_SUCCEED = "新主题需要审核，您的帖子通过审核后才能显示"
MSG_ADMIN_NOPERMISSION = "抱歉，您没有权限使用管理功能"
MSG_NO_PRIVILEGE_CLOSE = "抱歉，您没有权限关闭此主题"
MSG_NO_PRIVILEGE_OPEN = "抱歉，您没有权限打开此主题"
MSG_ADMIN_MODERATE_INVALID = "抱歉，您尚未选择主题或主题不可执行此类管理"
MSG_ADMIN_SUCCEED = "管理操作成功 "
#: a debug error page of the kind a misconfigured forum shows (it repeats the request's headers)
MSG_DEBUG_ECHO = "抱歉，论坛繁忙，请稍后再试。调试信息："
POST_EDIT_NOTE = "[i=s] 本帖最后由 {editor} 于 {edittime} 编辑 [/i]\n\n"
POST_EDIT_RE = re.compile(r"\[i=s\] 本帖最后由 .*? 于 .*? 编辑 \[/i\]\s*", re.S)

BBNAME = "Discuz! Board"


# --------------------------------------------------------------------------- time


def php_date(ts: int, tz: tzinfo, *, seconds: bool = True) -> str:
    """``Y-n-j H:i:s`` (or ``Y-n-j H:i``): month and day unpadded, like Discuz's dateformat."""
    d = datetime.fromtimestamp(ts, tz)
    clock = f"{d:%H:%M:%S}" if seconds else f"{d:%H:%M}"
    return f"{d.year}-{d.month}-{d.day} {clock}"


def dgmdate_u(
    ts: int, now: int, tz: tzinfo, *, mobile: bool = False, full: str | None = None
) -> str:
    """``dgmdate($ts, 'u', 9999, 'Y-n-j H:i:s')`` as X3.5 renders a post time (``full``: the
    title and old-time text for another format, e.g. forumdisplay's date-only ``Y-n-j``).

    Today: ``N&nbsp;小时前`` / ``半小时前`` / ``N&nbsp;分钟前`` / ``N&nbsp;秒前`` / ``刚刚``; the six
    days before: ``昨天&nbsp;H:i`` / ``前天&nbsp;H:i`` / ``N&nbsp;天前``; both wrapped in
    ``<span title="Y-n-j H:i:s">`` except under IN_MOBILE. Older or future times: the plain
    string.
    """
    full = full if full is not None else php_date(ts, tz)
    local_now = datetime.fromtimestamp(now, tz)
    today = int(local_now.replace(hour=0, minute=0, second=0, microsecond=0).timestamp())
    diff = now - ts
    if ts >= today:
        if diff > 3600:
            rel = f"{diff // 3600}&nbsp;小时前"
        elif diff > 1800:
            rel = "半小时前"
        elif diff > 60:
            rel = f"{diff // 60}&nbsp;分钟前"
        elif diff > 0:
            rel = f"{diff}&nbsp;秒前"
        elif diff == 0:
            rel = "刚刚"
        else:
            return full
        return rel if mobile else f'<span title="{full}">{rel}</span>'
    days = (today - ts) // 86400
    if 0 <= days < 7:
        hm = f"{datetime.fromtimestamp(ts, tz):%H:%M}"
        if days == 0:
            rel = f"昨天&nbsp;{hm}"
        elif days == 1:
            rel = f"前天&nbsp;{hm}"
        else:
            rel = f"{days + 1}&nbsp;天前"
        return rel if mobile else f'<span title="{full}">{rel}</span>'
    return full


def http_date(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%a, %d %b %Y %H:%M:%S GMT")


# --------------------------------------------------------------------------- escaping


def dhtmlspecialchars(text: str) -> str:
    """Discuz's ``dhtmlspecialchars`` with default flags: ``& " < >`` (not ``'``), then numeric
    entities the author typed are let through again."""
    out = text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    out = out.replace(">", "&gt;")
    return re.sub(r"&amp;((#(\d{3,5}|x[a-fA-F0-9]{4}));)", r"&\1", out)


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


# --------------------------------------------------------------------------- BBCode

QUOTE_RE = re.compile(r"\s?\[quote\][\n\r]*(.+?)[\n\r]*\[/quote\]\s?", re.S | re.I)
_HIDE_RE = re.compile(r"\[hide\]\s*(.*?)\s*\[/hide\]", re.S | re.I)
_URL_RE = re.compile(r"\[url(?:=([^\]\s]+?))?\](.+?)\[/url\]", re.S | re.I)
_IMG_RE = re.compile(r"\[img(?:=\d{1,4}[x,]\d{1,4})?\]\s*([^\[<\r\n]+?)\s*\[/img\]", re.I)
_SIMPLE_TAGS: tuple[tuple[str, str], ...] = (
    ("[/color]", "</font>"),
    ("[/backcolor]", "</font>"),
    ("[/size]", "</font>"),
    ("[/font]", "</font>"),
    ("[/align]", "</div>"),
    ("[b]", "<strong>"),
    ("[/b]", "</strong>"),
    ("[s]", "<strike>"),
    ("[/s]", "</strike>"),
    ("[hr]", '<hr class="l" />'),
    ("[/p]", "</p>"),
    ("[i=s]", '<i class="pstatus">'),
    ("[i]", "<i>"),
    ("[/i]", "</i>"),
    ("[u]", "<u>"),
    ("[/u]", "</u>"),
    ("[list]", "<ul>"),
    ("[list=1]", '<ul type="1" class="litype_1">'),
    ("[list=a]", '<ul type="a" class="litype_2">'),
    ("[list=A]", '<ul type="A" class="litype_3">'),
    ("[*]", "<li>"),
    ("[/list]", "</ul>"),
    ("[indent]", "<blockquote>"),
    ("[/indent]", "</blockquote>"),
    ("[/float]", "</span>"),
)
_REGEX_TAGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\[color=([#\w]+?)\]", re.I), r'<font color="\1">'),
    (re.compile(r"\[color=(rgb\([\d\s,]+?\))\]", re.I), r'<font style="color:\1">'),
    (re.compile(r"\[backcolor=([#\w]+?)\]", re.I), r'<font style="background-color:\1">'),
    (re.compile(r"\[size=(\d{1,2}?)\]", re.I), r'<font size="\1">'),
    (
        re.compile(r"\[size=(\d{1,2}(\.\d{1,2}+)?(px|pt)+?)\]", re.I),
        r'<font style="font-size:\1">',
    ),
    (re.compile(r"\[font=([^\[<]+?)\]", re.I), r'<font face="\1">'),
    (re.compile(r"\[align=(left|center|right)\]", re.I), r'<div align="\1">'),
    (re.compile(r"\[float=(left|right)\]", re.I), r'<span style="float:\1;margin-right:5px">'),
)
# v4 mobile renderer: these tags (and their closing tags) are dropped, colour/b/s are kept.
_MOBILE_DROP_RE = re.compile(r"\[/?(size|font|align|i|u|indent|float)(=[^\]]*)?\]", re.I)


@dataclass(frozen=True, slots=True)
class RenderContext:
    """Who is looking at which post: decides [hide] and the absolute links."""

    siteurl: str
    tid: int
    fid: int
    pid: int
    hide_unlocked: bool  # the viewer wrote the post, replied in the thread, or moderates
    viewer_name: str  # "" for guests
    smileyoff: bool = False  # the post was sent with 禁用表情: smiley codes stay text


def _aimg_id(pid: int, index: int) -> str:
    digest = hashlib.md5(f"aimg|{pid}|{index}".encode()).digest()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(alphabet[b % len(alphabet)] for b in digest[:5])


def _abs_url(url: str, siteurl: str) -> str:
    if re.match(r"^[a-z][a-z0-9+.-]*://", url, re.I) or url.startswith(("/", "mailto:")):
        return url
    return siteurl + url


def _smilies(text: str, *, mobile: bool, siteurl: str) -> str:
    count = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal count
        count += 1
        if count > _MAX_SMILIES:
            return m.group(0)
        sid, file = SMILIES[m.group(0)]
        if mobile:
            return f'<img src="{siteurl}static/image/smiley/default/{file}" />'
        return (
            f'<img src="static/image/smiley/default/{file}" smilieid="{sid}" border="0" alt="" />'
        )

    return _SMILEY_RE.sub(repl, text)


def _nl2br(text: str) -> str:
    return text.replace("\n", "<br />\n")


def discuzcode(message: str, ctx: RenderContext) -> str:
    """Desktop ``discuzcode()`` for a post body (smilies on, BBCode on, HTML off, no jammer)."""
    text = message.replace("\r\n", "\n").replace("\r", "\n")
    text = dhtmlspecialchars(text)
    if not ctx.smileyoff:
        text = _smilies(text, mobile=False, siteurl=ctx.siteurl)

    def url_repl(m: re.Match[str]) -> str:
        target = m.group(1) or m.group(2)
        return f'<a href="{_abs_url(target, ctx.siteurl)}" target="_blank">{m.group(2)}</a>'

    text = _URL_RE.sub(url_repl, text)
    for code, tag in _SIMPLE_TAGS:
        text = text.replace(code, tag)
    for pattern, repl in _REGEX_TAGS:
        text = pattern.sub(repl, text)
    text = QUOTE_RE.sub(r'<div class="quote"><blockquote>\1</blockquote></div>', text)
    prefix = ""
    if _HIDE_RE.search(text):
        if ctx.hide_unlocked:
            text = _HIDE_RE.sub(
                lambda m: f'<div class="showhide"><h4>本帖隐藏的内容</h4>{m.group(1)}</div>\n', text
            )
        else:
            who = ctx.viewer_name or "游客"
            link = (
                f'<a href="forum.php?mod=post&amp;action=reply&amp;fid={ctx.fid}&amp;tid={ctx.tid}"'
                " onclick=\"showWindow('reply', this.href)\">回复</a>"
            )
            text = _HIDE_RE.sub(
                lambda m: f'<div class="locked">{who}，如果您要查看本帖隐藏内容请{link}</div>', text
            )
            prefix = f"<script type=\"text/javascript\">replyreload += ',' + {ctx.pid};</script>"
    index = 0

    def img_repl(m: re.Match[str]) -> str:
        nonlocal index
        index += 1
        return (
            f'<img id="aimg_{_aimg_id(ctx.pid, index)}" onclick="zoom(this, this.src, 0, 0, 0)"'
            f' class="zoom" src="{m.group(1)}" onmouseover="img_onmouseoverfunc(this)"'
            ' onload="thumbImg(this)" border="0" alt="" />'
        )

    text = _IMG_RE.sub(img_repl, text)
    text = text.replace("\t", "&nbsp; &nbsp; &nbsp; &nbsp; ")
    text = text.replace("   ", "&nbsp; &nbsp;").replace("  ", "&nbsp;&nbsp;")
    return prefix + _nl2br(text)


def mobile_discuzcode(message: str, ctx: RenderContext) -> str:
    """The mobile API v4 renderer: edit notes removed, size/font/align/i/u dropped, quotes as
    ``div.reply_wrap``, unlocked [hide] unwrapped, runs of ``&nbsp;`` removed."""
    text = message.replace("\r\n", "\n").replace("\r", "\n")
    text = POST_EDIT_RE.sub("", text)
    text = dhtmlspecialchars(text)
    if not ctx.smileyoff:
        text = _smilies(text, mobile=True, siteurl=ctx.siteurl)

    def url_repl(m: re.Match[str]) -> str:
        target = _abs_url(m.group(1) or m.group(2), ctx.siteurl).replace("&", "&amp;")
        return f'<a href="{target}">{m.group(2)}</a>'

    text = _URL_RE.sub(url_repl, text)
    text = _MOBILE_DROP_RE.sub("", text)
    for code, tag in (
        ("[/color]", "</font>"),
        ("[/backcolor]", "</font>"),
        ("[b]", "<strong>"),
        ("[/b]", "</strong>"),
        ("[s]", "<strike>"),
        ("[/s]", "</strike>"),
    ):
        text = text.replace(code, tag)
    text = re.sub(r"\[color=([#\w]+?)\]", r'<font color="\1">', text, flags=re.I)
    text = QUOTE_RE.sub(r'<div class="reply_wrap">\1</div>', text)
    prefix = ""
    if _HIDE_RE.search(text):
        if ctx.hide_unlocked:
            text = _HIDE_RE.sub(r"\1", text)
        else:
            who = ctx.viewer_name or "游客"
            text = _HIDE_RE.sub(
                f'<div class="locked">{who}如果您要查看本帖隐藏内容请回复</div>', text
            )
            prefix = f"<script type=\"text/javascript\">replyreload += ',' + {ctx.pid};</script>"
    text = _IMG_RE.sub(
        lambda m: f'<div class="img"><img src="{_abs_url(m.group(1), ctx.siteurl)}" /></div>', text
    )
    text = _nl2br(text)
    text = re.sub(r"(&nbsp;){2,}", "", text.replace("  ", "&nbsp;&nbsp;"))
    return prefix + text


def cutstr(text: str, length: int, dot: str = " ...") -> str:
    """Discuz ``cutstr`` (UTF-8 branch): strings up to ``length`` BYTES come back as they are;
    longer ones are cut where the count (ASCII 1, other characters 2) reaches ``length`` and
    always get ``dot`` appended, even when nothing was cut (that is what the PHP does)."""
    if len(text.encode("utf-8")) <= length:
        return text
    units = 0
    out: list[str] = []
    for c in text:
        width = 1 if ord(c) < 128 else 2
        units += width
        out.append(c)
        if units >= length:
            if units > length:
                out.pop()
            break
    return "".join(out) + dot


def messagecutstr(message: str, length: int = 100) -> str:
    """The excerpt a 回复 quote carries: BBCode, inner quotes and edit notes removed, [hide]
    replaced, cut to ``length``, at most three lines (``post_newreply.php``)."""
    text = message.replace("\r\n", "\n")
    text = re.sub(
        r"\[hide=?\d*\](.*?)\[/hide\]", "**** 本内容被作者隐藏 ****", text, flags=re.S | re.I
    )
    text = re.sub(r"\[quote\](.*?)\[/quote\]", "", text, flags=re.S | re.I)
    text = POST_EDIT_RE.sub("", text)
    text = re.sub(r"\[url=?.*?\](.+?)\[/url\]", r"\1", text, flags=re.S | re.I)
    text = re.sub(
        r"\[(email|code|free|table|tr|td|img|swf|flash|attach|media|audio|payto)=?.*?\].+?\[/\1\]",
        "",
        text,
        flags=re.S | re.I,
    )
    bb = "b|i|u|p|color|backcolor|size|font|align|list|indent|float"
    text = re.sub(rf"\[({bb})=?.*?\]", "", text, flags=re.I)
    text = re.sub(rf"\[/({bb})\]", "", text, flags=re.I)
    text = re.sub(r"<[^>]*>", "", text).strip()
    text = cutstr(text, length)
    return "\n".join(text.split("\n")[:3])


def quote_block(*, pid: int, tid: int, author: str, posted: str, message: str) -> str:
    """``noticetrimstr`` of the desktop 回复 button (``post_newreply.php:175-231``)."""
    return (
        f"[quote][size=2][url=forum.php?mod=redirect&goto=findpost&pid={pid}&ptid={tid}]"
        f"[color=#999999]{author} 发表于 {posted}[/color][/url][/size]\n"
        f"{messagecutstr(message)}[/quote]"
    )


# --------------------------------------------------------------------------- pager


def multi(num: int, perpage: int, curpage: int, mpurl: str, pagelinks: int = 10) -> str:
    """``helper_page::multi`` as viewthread calls it; "" when everything fits on one page."""
    if num <= perpage:
        return ""
    base = mpurl + ("&amp;" if "?" in mpurl else "?")
    page = pagelinks - (len(str(curpage)) - 1)
    page = max(page, 1)
    offset = page // 2
    realpages = -(-num // perpage)
    curpage = min(curpage, realpages)
    pages = realpages
    if page > pages:
        start, end = 1, pages
    else:
        start = curpage - offset
        end = start + page - 1
        if start < 1:
            end = curpage + 1 - start
            start = 1
            if end - start < page:
                end = page
        elif end > pages:
            start = pages - page + 1
            end = pages
    out: list[str] = []
    if curpage - offset > 1 and pages > page:
        out.append(f'<a href="{base}page=1" class="first">1 ...</a>')
    if curpage > 1:
        out.append(f'<a href="{base}page={curpage - 1}" class="prev">&nbsp;&nbsp;</a>')
    for i in range(start, end + 1):
        out.append(f"<strong>{i}</strong>" if i == curpage else f'<a href="{base}page={i}">{i}</a>')
    if end < pages:
        out.append(f'<a href="{base}page={pages}" class="last">... {realpages}</a>')
    out.append(
        '<label><input type="text" name="custompage" class="px" size="2" title="输入页码，按回车快速跳转"'
        f' value="{curpage}" onkeydown="if(event.keyCode==13) {{window.location=\'{base}page=\''
        f'+this.value;; doane(event);}}" /><span title="共 {pages} 页"> / {pages} 页</span></label>'
    )
    if curpage < pages:
        out.append(f'<a href="{base}page={curpage + 1}" class="nxt">下一页</a>')
    return '<div class="pg">' + "".join(out) + "</div>"


# --------------------------------------------------------------------------- page shell

_TOKEN_RE = re.compile(r"\{\{(\w+)\}\}")


def fill(template: str, **values: object) -> str:
    """Replace ``{{name}}`` markers (templates hold JavaScript, so no str.format)."""
    return _TOKEN_RE.sub(lambda m: str(values[m.group(1)]), template)


@dataclass(frozen=True, slots=True)
class Viewer:
    uid: int  # 0 for guests
    username: str  # "" for guests
    formhash: str
    admin: bool = False


@dataclass(frozen=True, slots=True)
class Site:
    siteurl: str
    charset: str  # "utf-8" | "gbk"
    cookiepre: str
    fid: int
    forum_name: str


_HEAD = """<!DOCTYPE html>
<html>
<head>
<meta charset="{{charset}}" />
<meta name="renderer" content="webkit" />
<meta http-equiv="X-UA-Compatible" content="IE=edge" />
<title>{{title}} -  Discuz! Board -  Powered by Discuz!</title>
{{canonical}}
<meta name="keywords" content="{{keywords}}" />
<meta name="description" content="{{keywords}},Discuz! Board" />
<meta name="generator" content="Discuz! X3.5" />
<meta name="author" content="Discuz! Team and Comsenz UI Team" />
<meta name="copyright" content="2001-2026 Discuz! Team." />
<meta name="MSSmartTagsPreventParsing" content="True" />
<meta http-equiv="MSThemeCompatible" content="Yes" />
<base href="{{siteurl}}" /><link rel="stylesheet" type="text/css" href="data/cache/style_1_common.css?hr2" /><link rel="stylesheet" type="text/css" href="data/cache/style_1_{{css}}.css?hr2" /><script type="text/javascript">var STYLEID = '1', STATICURL = 'static/', IMGDIR = 'static/image/common', VERHASH = 'hr2', charset = '{{charset}}', discuz_uid = '{{uid}}', cookiepre = '{{cookiepre}}', cookiedomain = '', cookiepath = '/', showusercard = '1', attackevasive = '0', disallowfloat = 'newthread', creditnotice = '1|威望|,2|金钱|,3|贡献|', defaultstyle = '', REPORTURL = '', SITEURL = '{{siteurl}}', JSPATH = 'data/cache/', CSSPATH = 'data/cache/style_', DYNAMICURL = '';</script>
<script src="data/cache/common.js?hr2" type="text/javascript"></script>
<meta name="application-name" content="Discuz! Board" />
<meta name="msapplication-tooltip" content="Discuz! Board" />
<link rel="archives" title="Discuz! Board" href="{{siteurl}}archiver/" />
<script src="data/cache/forum.js?hr2" type="text/javascript"></script>
</head>

<body id="nv_forum" class="{{bodyclass}}" onkeydown="if(event.keyCode==27) return false;">
<div id="append_parent"></div><div id="ajaxwaitid"></div>
<div id="toptb" class="cl">
<div class="wp">
<div class="z"><a href="javascript:;"  onclick="setHomepage('{{siteurl}}');">设为首页</a><a href="{{siteurl}}"  onclick="addFavorite(this.href, 'Discuz! Board');return false;">收藏本站</a></div>
<div class="y">
<a id="switchblind" href="javascript:;" onclick="toggleBlind(this)" title="开启辅助访问" class="switchblind"></a>
<a href="javascript:;" id="switchwidth" onclick="widthauto(this)" title="切换到窄版" class="switchwidth">切换到窄版</a>
</div>
</div>
</div>
<div id="hd">
<div class="wp">
<div class="hdc cl"><h2><a href="./" title="Discuz! Board"><img src="static/image/common/logo.svg" alt="Discuz! Board" class="boardlogo" id="boardlogo" border="0" /></a></h2>{{userbar}}</div>

<div id="nv">
<a href="javascript:;" id="qmenu">快捷导航</a>
<ul><li class="a" id="mn_forum" ><a href="forum.php" hidefocus="true" title="BBS"  >论坛<span>BBS</span></a></li></ul>
</div>
<div id="mu" class="cl">
</div><div id="scbar" class="cl">
<form id="scbar_form" method="post" autocomplete="off" action="search.php?searchsubmit=yes" target="_blank">
<input type="hidden" name="mod" id="scbar_mod" value="search" />
<input type="hidden" name="formhash" value="{{formhash}}" />
<input type="hidden" name="srchtype" value="title" />
<table cellspacing="0" cellpadding="0">
<tr>
<td class="scbar_txt_td"><input type="text" name="srchtxt" id="scbar_txt" value="请输入搜索内容" autocomplete="off" /></td>
<td class="scbar_btn_td"><button type="submit" name="searchsubmit" id="scbar_btn" sc="1" class="pn pnc" value="true"><strong class="xi2">搜索</strong></button></td>
</tr>
</table>
</form>
</div>
</div>
</div>

"""

_GUEST_BAR = """<script src="data/cache/logging.js?hr2" type="text/javascript"></script>
<form method="post" autocomplete="off" id="lsform" action="member.php?mod=logging&amp;action=login&amp;loginsubmit=yes&amp;infloat=yes&amp;lssubmit=yes" onsubmit="return lsSubmit();">
<div class="fastlg cl">
<span id="return_ls" style="display:none"></span>
<div class="y pns">
<table cellspacing="0" cellpadding="0">
<tr>
<td><input type="text" name="username" id="ls_username" autocomplete="off" class="px vm" /></td>
<td class="fastlg_l"><label for="ls_cookietime"><input type="checkbox" name="cookietime" id="ls_cookietime" class="pc" value="2592000" />自动登录</label></td>
</tr>
<tr>
<td><input type="password" name="password" id="ls_password" class="px vm" autocomplete="off" /></td>
<td class="fastlg_l"><button type="submit" class="pn vm" style="width: 75px;"><em>登录</em></button></td>
</tr>
</table>
<input type="hidden" name="formhash" value="{{formhash}}" />
<input type="hidden" name="quickforward" value="yes" />
<input type="hidden" name="handlekey" value="ls" />
</div>
</div>
</form>
"""

_MEMBER_BAR = """<div id="um">
<div class="avt y"><a href="home.php?mod=space&amp;uid={{uid}}"><img src="{{siteurl}}uc_server/avatar.php?uid={{uid}}&size=middle&ts=1" class="user_avatar"></a></div>
<p>
<strong class="vwmy"><a href="home.php?mod=space&amp;uid={{uid}}" target="_blank" title="访问我的空间">{{username}}</a></strong>
<span class="pipe">|</span><a href="home.php?mod=spacecp">设置</a>
<span class="pipe">|</span><a href="member.php?mod=logging&amp;action=logout&amp;formhash={{formhash}}">退出</a>
</p>
<p>
<a href="home.php?mod=spacecp&amp;ac=usergroup" id="g_upmine" class="showmenu">用户组: {{group}}</a>
</p>
</div>
"""

_FOOT = """	</div>
<div id="ft" class="wp cl">
<div id="flk" class="y">
<p>
<a href="archiver/" >Archiver</a><span class="pipe">|</span><a href="forum.php?showmobile=yes" >手机版</a><span class="pipe">|</span><strong><a href="https://www.discuz.vip/" target="_blank">Discuz! X</a></strong>
</p>
<p class="xs0">
GMT+8, {{now}}<span id="debuginfo">
, Processed in 0.012000 second(s), 16 queries
.
</span>
</p>
</div>
<div id="frt">
<p>Powered by <strong><a href="https://www.discuz.vip/" target="_blank">Discuz!</a></strong> <em>X3.5</em></p>
<p class="xs0">&copy; 2001-2026 <a href="https://code.dismall.com/" target="_blank">Discuz! Team</a>.</p>
</div></div>
<script type="text/javascript">_attachEvent(window, 'scroll', function () { showTopLink(); });checkBlind();</script>
</body>
</html>"""


def page(
    site: Site,
    viewer: Viewer,
    *,
    title: str,
    body: str,
    now_text: str,
    css: str = "forum_viewthread",
    bodyclass: str = "pg_viewthread",
    canonical: str = "",
    keywords: str = "",
) -> str:
    """The page shell of ``header.htm`` / ``footer.htm`` around ``body`` (``div#wp`` inside)."""
    if viewer.uid:
        group = "管理员" if viewer.admin else "新手上路"
        bar = fill(
            _MEMBER_BAR,
            uid=viewer.uid,
            siteurl=site.siteurl,
            username=viewer.username,
            formhash=viewer.formhash,
            group=group,
        )
    else:
        bar = fill(_GUEST_BAR, formhash=viewer.formhash)
    head = fill(
        _HEAD,
        charset=site.charset,
        title=title,
        canonical=canonical,
        keywords=keywords,
        siteurl=site.siteurl,
        css=css,
        uid=viewer.uid,
        cookiepre=site.cookiepre,
        bodyclass=bodyclass,
        userbar=bar,
        formhash=viewer.formhash,
    )
    return head + '\n<div id="wp" class="wp">\n' + body + fill(_FOOT, now=now_text)


def message_page(
    site: Site,
    viewer: Viewer,
    *,
    message: str,
    alert: str = "alert_error",
    now_text: str,
    login_form: bool = False,
    css: str = "forum_post",
    bodyclass: str = "pg_post",
) -> str:
    """``showmessage()`` rendered as a full page (``div#messagetext``); returned with HTTP 200."""
    if login_form:
        inner = f"""<div class="nfl" id="main_succeed" style="display: none">
<div class="f_c altw">
<div class="alert_right">
<p id="succeedmessage"></p>
<p id="succeedlocation" class="alert_btnleft"></p>
<p class="alert_btnleft"><a id="succeedmessage_href">如果您的浏览器没有自动跳转，请点击此链接</a></p>
</div>
</div>
</div>
<div class="nfl" id="main_message">
<div class="f_c altw">
<div id="messagetext" class="{alert}">
<p>{message}</p>
</div>
<div id="messagelogin"></div>
<script type="text/javascript">ajaxget('member.php?mod=logging&action=login&infloat=yes&frommessage', 'messagelogin');</script>
</div>
</div>
</div>"""
    else:
        back = (
            '<script type="text/javascript">\n'
            "if(history.length > (BROWSER.ie ? 0 : 1)) {\n"
            'document.write(\'<p class="alert_btnleft"><a href="javascript:history.back()">'
            "[ 点击这里返回上一页 ]</a></p>');\n"
            "} else {\n"
            'document.write(\'<p class="alert_btnleft"><a href="./">[ Discuz! Board 首页 ]</a>'
            "</p>');\n"
            "}\n</script>\n"
            if alert == "alert_error"
            else ""
        )
        inner = f"""<div class="nfl">
<div class="f_c altw">
<div id="messagetext" class="{alert}">
<p>{message}</p>
{back}</div>
</div>
</div>
</div>"""
    body = f'<div id="ct" class="wp cl w">\n{inner}'
    return page(
        site,
        viewer,
        title="提示信息",
        body=body,
        now_text=now_text,
        css=css,
        bodyclass=bodyclass,
    )


def system_error_page(site_host: str, message: str, time_text: str, backtrace_id: str) -> str:
    """``discuz_error::show_error``: the "Discuz! System Error" page (served with HTTP 503)."""
    return f"""<!DOCTYPE html>
<html>
<head>
	<title>{site_host} - System Error</title>
	<meta charset="utf-8" />
	<meta name="renderer" content="webkit" />
	<meta http-equiv="X-UA-Compatible" content="IE=edge" />
	<meta name="ROBOTS" content="NOINDEX,NOFOLLOW,NOARCHIVE" />
	<meta name="viewport" content="width=device-width, initial-scale=1.0">
</head>
<body>
<div id="container">
<h1>Discuz! System Error</h1><p>Time: {time_text} IP: 127.0.0.1 BackTraceID: {backtrace_id}</p><div class="info"><li>{message}</li></div><div class="help">如果您是用户，建议您尝试刷新页面、关闭所有浏览器窗口重新进行操作。如果无法解决，建议您完整截图本页面并保存，随后向站点管理员反馈此问题</div><div class="help"><a href="http://{site_host}">{site_host}</a> 已经将此出错信息详细记录, 由此给您带来的访问不便我们深感歉意</div>
</div>
</body>
</html>"""


def nginx_error_page(status: int, reason: str) -> str:
    return (
        f"<html>\r\n<head><title>{status} {reason}</title></head>\r\n<body>\r\n"
        f"<center><h1>{status} {reason}</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n"
        "</body>\r\n</html>\r\n"
    )


def too_fast_page() -> str:
    """A rate-limit page of the kind CDNs/WAF plugins put in front of Discuz (not in core)."""
    return f"""<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8" />
<title>{MSG_TOO_FAST}</title>
</head>
<body>
<div class="main">
<h2>{MSG_TOO_FAST}</h2>
<p>系统检测到您的访问频率过高，请稍候几秒后刷新页面。</p>
</div>
</body>
</html>"""


def ajax_xml(content: str, charset: str) -> str:
    """``header_ajax.htm`` + ``footer_ajax.htm``: the inajax=1 envelope."""
    return f'<?xml version="1.0" encoding="{charset}"?>\r\n<root><![CDATA[{content}]]></root>'


def js_values(values: dict[str, str]) -> str:
    return "{" + ",".join(f"'{k}':'{v}'" for k, v in values.items()) + "}"


def ajax_error(handlekey: str, message: str, values: dict[str, str]) -> str:
    js_message = message.replace("'", "\\'")
    return (
        f'{message}<script type="text/javascript" reload="1">'
        f"if(typeof errorhandle_{handlekey}=='function') "
        f"{{errorhandle_{handlekey}('{js_message}', {js_values(values)});}}</script>"
    )


def ajax_succeed(handlekey: str, url: str, message: str, values: dict[str, str]) -> str:
    js_message = message.replace("'", "\\'")
    return (
        f'<script type="text/javascript" reload="1">'
        f"if(typeof succeedhandle_{handlekey}=='function') "
        f"{{succeedhandle_{handlekey}('{url}', '{js_message}', {js_values(values)});}}</script>"
    )


def php_json(obj: object) -> str:
    """``json_encode`` as the mobile plugin emits it: ASCII, ``\\uXXXX``, ``\\/``, compact."""
    import json

    return json.dumps(obj, ensure_ascii=True, separators=(",", ":")).replace("/", "\\/")


# --------------------------------------------------------------------------- viewthread


@dataclass(frozen=True, slots=True)
class PostView:
    """One post as a page shows it (already filtered by time, deletion and the view mode)."""

    pid: int
    tid: int
    number: int  # the floor this view shows
    author: str
    uid: int
    dateline: int
    first: bool  # the thread's opening post
    thread_author: bool  # written by the thread starter
    message_html: str  # discuzcode output ("" for placeholders)
    blocked: bool = False
    deleted_placeholder: bool = False
    author_only: bool = False  # 回帖仅作者可见 hides the text from this viewer
    author_only_note: bool = False  # a moderator sees the text under the 此帖仅作者可见 note
    admin: bool = False
    threads: int = 0  # author's thread count (left column)
    replies: int = 0  # author's reply count (left column)


@dataclass(frozen=True, slots=True)
class ThreadView:
    tid: int
    subject: str
    author: str
    uid: int
    views: int
    allreplies: int
    page: int
    total_pages: int
    posts: tuple[PostView, ...]
    authorid: int | None
    pager: str  # multi() output, "" for one page
    mpurl: str
    closed: bool = False  # forum_thread.closed = 1 (关闭)
    moderator: bool = False  # the viewer moderates the forum (may reply to a closed thread)


def floor_text(number: int) -> str:
    if 0 < number < len(POSTNO):
        return POSTNO[number]
    return f"<em>{number}</em>{POSTNO[0]}"


def _left_column(p: PostView, site: Site, viewer: Viewer) -> str:
    credits = p.threads * 4 + p.replies * 2
    group = "管理员" if p.admin else "新手上路"
    gid = 1 if p.admin else 10
    ts = "&ts=1" if viewer.uid else ""
    if viewer.uid == p.uid:
        pm = '<dl class="pil cl"></dl></div>'  # no "发消息" to oneself
    else:
        pm = f"""<dl class="pil cl"></dl><ul class="xl xl2 o cl">
<li class="pm2"><a href="home.php?mod=spacecp&amp;ac=pm&amp;op=showmsg&amp;handlekey=showmsg_{p.uid}&amp;touid={p.uid}&amp;pmid=0&amp;daterange=2&amp;pid={p.pid}&amp;tid={p.tid}" onclick="showWindow('sendpm', this.href);" title="发消息" class="xi2">发消息</a></li>
</ul>
</div>"""
    return f"""<div id="favatar{p.pid}" class="pls cl favatar">
<div class="pi">
<div class="authi"><a href="home.php?mod=space&amp;uid={p.uid}" target="_blank" class="xw1">{p.author}</a>
</div>
</div>
<div class="p_pop blk bui card_gender_0" id="userinfo{p.pid}" style="display: none; margin-top: -11px;">
<div class="m z">
<div id="userinfo{p.pid}_ma"></div>
</div>
<div class="i y">
<div>
<strong><a href="home.php?mod=space&amp;uid={p.uid}" target="_blank" class="xi2">{p.author}</a></strong>
<em>当前在线</em>
</div><dl class="cl">
<dt>积分</dt><dd><a href="home.php?mod=space&uid={p.uid}&do=profile" target="_blank" class="xi2">{credits}</a></dd>
</dl><div class="imicn">
<a href="home.php?mod=space&amp;uid={p.uid}&amp;do=profile" target="_blank" title="查看详细资料"><img src="static/image/common/userinfo.gif" alt="查看详细资料" /></a>
</div>
<div id="avatarfeed"><span id="threadsortswait"></span></div>
</div>
</div>
<div>
<div class="avatar" onmouseover="showauthor(this, 'userinfo{p.pid}')"><a href="home.php?mod=space&amp;uid={p.uid}" class="avtm" target="_blank"><img src="{site.siteurl}uc_server/avatar.php?uid={p.uid}&size=middle{ts}" class="user_avatar"></a></div>
</div>
<div class="tns xg2"><table cellspacing="0" cellpadding="0"><th><p><a href="home.php?mod=space&uid={p.uid}&do=thread&type=thread&view=me&from=space" class="xi2">{p.threads}</a></p>主题</th><th><p><a href="home.php?mod=space&uid={p.uid}&do=thread&type=reply&view=me&from=space" class="xi2">{p.replies}</a></p>回帖</th><td><p><a href="home.php?mod=space&uid={p.uid}&do=profile" class="xi2">{credits}</a></p>积分</td></table></div>

<p><em><a href="home.php?mod=spacecp&amp;ac=usergroup&amp;gid={gid}" target="_blank">{group}</a></em></p>

<dl class="pil cl">
	<dt>积分</dt><dd><a href="home.php?mod=space&uid={p.uid}&do=profile" target="_blank" class="xi2">{credits}</a></dd>
</dl>

{pm}"""


def _placeholder_node(p: PostView) -> str:
    """viewthread_node.htm's else-branch: a deleted position in position mode."""
    return f"""<div id="post_{p.pid}" ><table id="pid{p.pid}" summary="pid{p.pid}" cellspacing="0" cellpadding="0">
<tbody>
<tr>
<td class="pls"></td>
<td class="plc">
<div class="pi">
<strong><a>{floor_text(p.number)}</a></strong>
</div>
<div class="pct">无效楼层，该帖已经被删除</div>
</td>
</tr>
<tr class="ad">
<td class="pls"></td>
<td class="plc"></td>
</tr>
</tbody>
</table>
</div>"""


def post_node(
    p: PostView,
    *,
    site: Site,
    viewer: Viewer,
    page_no: int,
    first_on_page: bool,
    authorid: int | None,
    time_html: str,
) -> str:
    """One ``div#post_{pid} > table#pid{pid}.plhin`` as viewthread_node.htm renders it."""
    if p.deleted_placeholder:
        return _placeholder_node(p)
    tid, fid, pid = p.tid, site.fid, p.pid
    if p.first:
        postnum_href = f"forum.php?mod=viewthread&tid={tid}"
    else:
        postnum_href = f"forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={pid}"
    fj = _floor_jump(p, authorid)
    icon = _author_icon(p)
    only = _author_filter_link(p, page_no, authorid)
    extras = _first_post_links(p, authorid)
    style = '<style type="text/css">.pcb{margin-right:0}</style>' if first_on_page else ""
    body = _post_message(p)
    quote_kind = "reppost" if p.first else "repquote"
    edit = _edit_link(p, site, viewer, page_no)
    newpost = '<a name="newpost"></a>' if first_on_page else ""
    p_btn = '<div id="p_btn" class="mtw mbm hm cl">\n</div>\n' if p.first and not authorid else ""
    return f"""<div id="post_{pid}" ><table id="pid{pid}" class="plhin" summary="pid{pid}" cellspacing="0" cellpadding="0">
<tr>
{newpost} <td class="pls" rowspan="2">
{_left_column(p, site, viewer)}
</td>
<td class="plc">
<div class="pi">
{fj}<strong>
<a href="{postnum_href}"   id="postnum{pid}" onclick="setCopy(this.href, '帖子地址复制成功');return false;">
{floor_text(p.number)}</a>
</strong>
<div class="pti">
<div class="pdbt">
</div>
<div class="authi">
{icon}<em id="authorposton{pid}">发表于 {time_html}</em>
<span class="pipe">|</span>
{only}{extras}
</div>
</div>
</div><div class="pct">{style}<div class="pcb">
{body}
</td></tr>
<tr><td class="plc plm">
{p_btn}</td>
</tr>
<tr id="_postposition{pid}"></tr>
<tr>
<td class="pls"></td>
<td class="plc" style="overflow:visible;">
<div class="po hin">
<div class="pob cl">
<em>
<a class="fastre" href="forum.php?mod=post&amp;action=reply&amp;fid={fid}&amp;tid={tid}&amp;{quote_kind}={pid}&amp;extra=&amp;page={page_no}" onclick="showWindow('reply', this.href)">回复</a>
</em>

<p>
{edit}<a href="javascript:;" onclick="showWindow('miscreport{pid}', 'misc.php?mod=report&rtype=post&rid={pid}&tid={tid}&fid={fid}', 'get', -1);return false;">举报</a>
</p>

</div>
</div>
</td>
</tr>
<tr class="ad">
<td class="pls">
</td>
<td class="plc">
</td>
</tr>
</table>
</div>"""


def _floor_jump(p: PostView, authorid: int | None) -> str:
    """电梯直达: the jump-to-floor box on the thread's first post (not when one author is shown)."""
    tid = p.tid
    fj = ""
    if p.first and not authorid:
        fj = f"""<div id="fj" class="y">
<label class="z">电梯直达</label>
<input type="text" class="px p_fre z" size="2" onkeyup="$('fj_btn').href='forum.php?mod=redirect&ptid={tid}&authorid=0&postno='+this.value" onkeydown="if(event.keyCode==13) {{window.location=$('fj_btn').href;return false;}}" title="跳转到指定楼层" />
<a href="javascript:;" id="fj_btn" class="z fico-down fc-n" title="跳转到指定楼层"></a>
</div>
"""
    return fj


def _author_icon(p: PostView) -> str:
    """The 楼主 mark of the thread's author on a reply, else the online icon."""
    pid = p.pid
    if p.thread_author and not p.first:
        icon = (
            f'<em class="authicn fico-person fic4 fnmr vm" id="authicon{pid}" title="楼主"></em>\n'
            '&nbsp;楼主<span class="pipe">|</span>\n'
        )
    else:
        gif = "online_admin.gif" if p.admin else "online_member.gif"
        icon = f'<img class="authicn vm" id="authicon{pid}" src="static/image/common/{gif}" />\n'
    return icon


def _author_filter_link(p: PostView, page_no: int, authorid: int | None) -> str:
    """只看该作者, or 显示全部楼层 while one author is shown."""
    tid = p.tid
    if authorid:
        only = (
            f'<a href="forum.php?mod=viewthread&amp;tid={tid}&amp;page={page_no}" '
            'rel="nofollow">显示全部楼层</a>'
        )
    else:
        only = (
            f'<a href="forum.php?mod=viewthread&amp;tid={tid}&amp;page={page_no}&amp;authorid='
            f'{p.uid}" rel="nofollow">只看该作者</a>'
        )
    return only


def _first_post_links(p: PostView, authorid: int | None) -> str:
    """倒序浏览 and 阅读模式, on the thread's first post."""
    tid, pid = p.tid, p.pid
    extras = ""
    if p.first and not authorid:
        extras = (
            '\n<span class="none" title="回帖奖励"></span>\n'
            f'<span class="pipe show">|</span><a href="forum.php?mod=viewthread&amp;tid={tid}'
            '&amp;extra=&amp;ordertype=1"  class="show">倒序浏览</a>\n'
            '<span class="pipe show">|</span><a href="javascript:;" onclick="readmode($('
            f'\'thread_subject\').innerHTML, {pid});" class="show">阅读模式</a>'
        )
    return extras


def _post_message(p: PostView) -> str:
    """The message cell, or the notice of a post the moderators blocked."""
    pid = p.pid
    if p.blocked:
        body = '<div class="locked">提示: <em>该帖被管理员或版主屏蔽</em></div>\n</div>\n</div>\n'
    elif p.author_only:
        body = '<div class="locked">此帖仅作者可见</div>\n</div>\n</div>\n'
    else:
        note = '<div class="locked">此帖仅作者可见</div>\n' if p.author_only_note else ""
        body = f"""{note}<div class="t_fsz"><table cellspacing="0" cellpadding="0"><tr><td class="t_f" id="postmessage_{pid}">
{p.message_html}</td></tr></table>

</div>
<div id="comment_{pid}" class="cm">
</div>

<div id="post_rate_div_{pid}"></div>
</div>
</div>
"""
    return body


def _edit_link(p: PostView, site: Site, viewer: Viewer, page_no: int) -> str:
    """编辑, for the post's author."""
    tid, fid, pid = p.tid, site.fid, p.pid
    edit = ""
    if viewer.uid and viewer.uid == p.uid:
        edit = (
            f'<a class="editp" href="forum.php?mod=post&amp;action=edit&amp;fid={fid}&amp;tid={tid}'
            f'&amp;pid={pid}&amp;page={page_no}">编辑</a>\n'
        )
    return edit


def _fastpost_form(
    site: Site, viewer: Viewer, tid: int, now_ts: int, *, closed: bool = False
) -> str:
    fid = site.fid
    if viewer.uid and closed:  # viewthread_fastpost.htm: a closed thread, not a moderator
        area = f'<div class="pt hm">\n{MSG_THREAD_CLOSED}\n</div>'
        button = '<button type="button" '
        posttime = ""
    elif viewer.uid:
        area = '<textarea rows="6" cols="80" name="message" id="fastpostmessage" class="pt"></textarea>'
        button = '<button type="submit" '
        posttime = f'<input type="hidden" name="posttime" id="posttime" value="{now_ts}" />\n'
    else:
        area = (
            '<div class="pt hm">\n您需要登录后才可以回帖 <a href="member.php?mod=logging&amp;action=login"'
            ' onclick="showWindow(\'login\', this.href)" class="xi2">登录</a> | '
            '<a href="member.php?mod=register" class="xi2">立即注册</a>\n</div>'
        )
        button = (
            '<button type="button" onclick="showWindow(\'login\', '
            "'member.php?mod=logging&action=login&guestmessage=yes')\" "
        )
        posttime = ""
    return f"""<div id="f_pst" class="pl bm bmw">
<form method="post" autocomplete="off" id="fastpostform" action="forum.php?mod=post&amp;action=reply&amp;fid={fid}&amp;tid={tid}&amp;extra=&amp;replysubmit=yes&amp;infloat=yes&amp;handlekey=fastpost" onSubmit="return fastpostvalidate(this)">
<table cellspacing="0" cellpadding="0">
<tr>
<td class="pls">
</td>
<td class="plc">

<span id="fastpostreturn"></span>

<div class="cl">
<div class="hasfsl" id="fastposteditor">
<div class="tedt mtn">
<div class="area">
{area}
</div>
</div>
</div>
</div>
<div id="seccheck_fastpost">
</div>

{posttime}
<input type="hidden" name="formhash" value="{viewer.formhash}" />
<input type="hidden" name="usesig" value="{"1" if viewer.uid else ""}" />
<input type="hidden" name="subject" value="  " />
<p class="ptm pnpost">
{button}name="replysubmit" id="fastpostsubmit" class="pn pnc vm" value="replysubmit"><strong>发表回复</strong></button>
</p>
</td>
</tr>
</table>
</form>
</div>"""


def viewthread_page(
    view: ThreadView,
    *,
    site: Site,
    viewer: Viewer,
    now_ts: int,
    now_text: str,
    time_html: Sequence[str],
) -> str:
    """The whole ``forum.php?mod=viewthread`` page (default template, X3.5)."""
    tid, fid = view.tid, site.fid
    nodes = [
        post_node(
            p,
            site=site,
            viewer=viewer,
            page_no=view.page,
            first_on_page=i == 0,
            authorid=view.authorid,
            time_html=time_html[i],
        )
        for i, p in enumerate(view.posts)
    ]
    body = (
        f"<script type=\"text/javascript\">var fid = parseInt('{fid}'), tid = parseInt('{tid}');"
        "</script>\n\n"
        + _thread_top(view, site)
        + "".join(nodes)
        + _thread_bottom(view, site, viewer, now_ts)
    )
    title = view.subject + (f" - 第{view.page}页" if view.page > 1 else "")
    return page(
        site,
        viewer,
        title=f"{title} - {site.forum_name}",
        body=body,
        now_text=now_text,
        canonical=f'<link href="{site.siteurl}forum.php?mod=viewthread&tid={tid}" rel="canonical" />',
        keywords=view.subject,
    )


def _thread_top(view: ThreadView, site: Site) -> str:
    """Above the posts: the breadcrumbs, the upper pager and the thread's header row (the views
    and replies on page 1, the thread's author on later pages; the subject)."""
    tid, fid = view.tid, site.fid
    pager = view.pager
    top = f"""<div id="pt" class="bm cl">
<div class="z">
<a href="./" class="nvhm" title="首页">Discuz! Board</a><em>&raquo;</em><a href="forum.php">论坛</a> <em>&rsaquo;</em> <a href="forum.php?mod=forumdisplay&amp;fid={fid}">{site.forum_name}</a> <em>&rsaquo;</em> <a href="forum.php?mod=viewthread&amp;tid={tid}">{view.subject}</a>
</div>
</div>

<div id="ct" class="wp cl">
<div id="pgt" class="pgs mbm cl ">
<div class="pgt">{pager}</div>
<span class="y pgb"><a href="forum.php?mod=forumdisplay&amp;fid={fid}">返回列表</a></span>
<a id="newspecial" onclick="showWindow('newthread', 'forum.php?mod=post&action=newthread&fid={fid}')" href="javascript:;" title="发新帖" class="pgsbtn showmenu">发新帖</a></div>



<div id="postlist" class="pl bm">
<table cellspacing="0" cellpadding="0">
<tr>
<td class="pls ptn pbn">
"""
    if view.page == 1:
        top += (
            '<div class="hm ptn">\n<span class="xg1">查看:</span> <span class="xi1">'
            f'{view.views}</span><span class="pipe">|</span><span class="xg1">回复:</span> '
            f'<span class="xi1">{view.allreplies}</span>\n</div>\n'
        )
    else:
        top += (
            f'<div id="tath" class="cl">\n<a href="home.php?mod=space&amp;uid={view.uid}" '
            f'title="{view.author}"><img src="{site.siteurl}uc_server/avatar.php?uid={view.uid}'
            '&size=small" class="user_avatar"></a>\n楼主: <a href="home.php?mod=space&amp;uid='
            f'{view.uid}" title="{view.author}">{view.author}</a>\n</div>\n'
        )
    lock = '&nbsp;<i class="fico-lock fc-s" title="关闭"></i>\n' if view.closed else ""
    top += f"""</td>
<td class="plc ptm pbn vwthd">
<div class="y">
<a href="forum.php?mod=viewthread&amp;action=printable&amp;tid={tid}" title="打印" target="_blank"><i class="fico-print fic4 fc-s vm"></i></a>
</div>
<h1 class="ts">
<span id="thread_subject">{view.subject}</span>
</h1>
<span class="xg1">
{lock}<a href="forum.php?mod=viewthread&amp;tid={tid}" onclick="return copyThreadUrl(this, 'Discuz! Board')" >[复制链接]</a>
</span>
</td>
</tr>
</table>


<table cellspacing="0" cellpadding="0" class="ad">
<tr>
<td class="pls">
</td>
<td class="plc">
</td>
</tr>
</table>"""
    return top


def _thread_bottom(view: ThreadView, site: Site, viewer: Viewer, now_ts: int) -> str:
    """Below the posts: the moderation form, the next-page button, the lower pager, the reply
    form and the page's scripts."""
    tid, fid = view.tid, site.fid
    pager = view.pager
    pgbtn = ""
    if view.page < view.total_pages:
        pgbtn = (
            f'<div class="pgbtn"><a href="{view.mpurl}&amp;page={view.page + 1}" hidefocus="true"'
            ' class="bm_h">下一页 &raquo;</a></div>\n'
        )
    return f"""<div id="postlistreply" class="pl"><div id="post_new" class="viewthread_table" style="display: none"></div></div>
</div>


<form method="post" autocomplete="off" name="modactions" id="modactions">
<input type="hidden" name="formhash" value="{viewer.formhash}" />
<input type="hidden" name="optgroup" />
<input type="hidden" name="operation" />
<input type="hidden" name="listextra" value="" />
<input type="hidden" name="page" value="{view.page}" />
</form>


{pgbtn}
<div class="pgs mtm mbm cl">
{pager}<span class="pgb y"><a href="forum.php?mod=forumdisplay&amp;fid={fid}">返回列表</a></span>
</div>

<script type="text/javascript">
var postminchars = parseInt('10');
var postmaxchars = parseInt('10000');
var disablepostctrl = parseInt('0');
</script>

{_fastpost_form(site, viewer, tid, now_ts, closed=view.closed and not view.moderator)}

<script type="text/javascript">document.onkeyup = function(e){{keyPageScroll(e, {int(view.page > 1)}, {int(view.page < view.total_pages)}, '{view.mpurl}', {view.page});}}</script>
</div>
<script type="text/javascript">
fixed_avatar([{",".join(str(p.pid) for p in view.posts)}], 1);
</script>"""


def login_page(site: Site, viewer: Viewer, *, loginhash: str, now_text: str) -> str:
    """``member.php?mod=logging&action=login`` (captcha off)."""
    h = loginhash
    body = f"""<div id="ct" class="ptm wp w cl">
<div class="mn" id="main_message">
<div class="bm">
<div class="bm_h bbs">
<h3 class="xs2">登录</h3>
</div>
<div>
<div id="main_messaqge_{h}">
<div id="layer_login_{h}">
<form method="post" autocomplete="off" name="login" id="loginform_{h}" class="cl" onsubmit="pwdclear = 1;ajaxpost('loginform_{h}', 'returnmessage_{h}', 'returnmessage_{h}', 'onerror');return false;" action="member.php?mod=logging&amp;action=login&amp;loginsubmit=yes&amp;loginhash={h}">
<div class="c cl">
<input type="hidden" name="formhash" value="{viewer.formhash}" />
<input type="hidden" name="referer" value="{site.siteurl}./" />
<div class="rfm">
<table>
<tr>
<th>
<span class="login_slct">
<select name="loginfield" style="float: left;" width="45" id="loginfield_{h}">
<option value="username">用户名</option>
<option value="email">Email</option>
</select>
</span>
</th>
<td><input type="text" name="username" id="username_{h}" autocomplete="off" size="30" class="px p_fre" value="" /></td>
</tr>
</table>
</div>
<div class="rfm">
<table>
<tr>
<th><label for="password3_{h}">密码:</label></th>
<td><input type="password" id="password3_{h}" name="password" size="30" class="px p_fre" /></td>
</tr>
</table>
</div>
<div class="rfm">
<table>
<tr>
<th>安全提问:</th>
<td><select id="loginquestionid_{h}" width="213" name="questionid">
<option value="0">安全提问(未设置请忽略)</option>
</select></td>
</tr>
</table>
</div>
<div class="rfm" id="loginanswer_row_{h}"  style="display:none">
<table>
<tr>
<th>答案:</th>
<td><input type="text" name="answer" id="loginanswer_{h}" autocomplete="off" size="30" class="px p_fre" /></td>
</tr>
</table>
</div>
<div class="rfm ">
<table>
<tr>
<th></th>
<td><label for="cookietime_{h}"><input type="checkbox" class="pc" name="cookietime" id="cookietime_{h}" value="2592000"  />自动登录</label></td>
</tr>
</table>
</div>
<div class="rfm mbw bw0">
<table width="100%">
<tr>
<th>&nbsp;</th>
<td>
<button class="pn pnc" type="submit" name="loginsubmit" value="true"><strong>登录</strong></button>
</td>
</tr>
</table>
</div>
</div>
</form>
</div>
</div>
</div></div></div>
</div>"""
    return page(
        site,
        viewer,
        title="登录",
        body=body,
        now_text=now_text,
        css="member",
        bodyclass="pg_logging",
    )


def reply_form_page(
    site: Site,
    viewer: Viewer,
    *,
    tid: int,
    subject: str,
    noticetrimstr: str,
    now_ts: int,
    now_text: str,
) -> str:
    """``forum.php?mod=post&action=reply&tid=T[&repquote=P]``: the full reply form."""
    body = f"""<div id="ct" class="ct2_a ct2_a_r wp cl">
<form method="post" autocomplete="off" id="postform" action="forum.php?mod=post&amp;action=reply&amp;fid={site.fid}&amp;tid={tid}&amp;extra=&amp;replysubmit=yes">
<input type="hidden" name="formhash" id="formhash" value="{viewer.formhash}" />
<input type="hidden" name="posttime" id="posttime" value="{now_ts}" />
<input type="hidden" name="wysiwyg" id="e_mode" value="1" />
<input type="hidden" name="noticeauthor" value="" />
<input type="hidden" name="noticetrimstr" value="{_attr(noticetrimstr)}" />
<input type="hidden" name="noticeauthormsg" value="" />
<div class="bm bw0 cl">
<h1>参与/回复主题 <a href="forum.php?mod=viewthread&amp;tid={tid}">{subject}</a></h1>
<span id="subjectbox" style="display:none"><input type="text" name="subject" id="subject" class="px" value="" /></span>
<textarea name="message" id="e_textarea" class="pt" rows="15"></textarea>
<button type="submit" id="postsubmit" class="pn pnc" value="true" name="replysubmit"><span>参与/回复主题</span></button>
</div>
</form>
</div>"""
    return page(
        site,
        viewer,
        title="参与/回复主题",
        body=body,
        now_text=now_text,
        css="forum_post",
        bodyclass="pg_post",
    )


def edit_form_page(
    site: Site,
    viewer: Viewer,
    *,
    tid: int,
    pid: int,
    subject: str,
    message: str,
    now_ts: int,
    now_text: str,
) -> str:
    """``forum.php?mod=post&action=edit&tid=T&pid=P``: the edit form (``post.htm``)."""
    body = f"""<div id="ct" class="ct2_a ct2_a_r wp cl">
<form method="post" autocomplete="off" id="postform" action="forum.php?mod=post&amp;action=edit&amp;extra=&amp;editsubmit=yes">
<input type="hidden" name="formhash" id="formhash" value="{viewer.formhash}" />
<input type="hidden" name="posttime" id="posttime" value="{now_ts}" />
<input type="hidden" name="delattachop" id="delattachop" value="0" />
<input type="hidden" name="wysiwyg" id="e_mode" value="0" />
<input type="hidden" name="fid" id="fid" value="{site.fid}" />
<input type="hidden" name="tid" value="{tid}" />
<input type="hidden" name="pid" value="{pid}" />
<input type="hidden" name="page" value="1" />
<div class="bm bw0 cl">
<h1>编辑帖子 <a href="forum.php?mod=viewthread&amp;tid={tid}">{subject}</a></h1>
<textarea name="message" id="e_textarea" class="pt" rows="15">{dhtmlspecialchars(message)}</textarea>
<button type="submit" id="postsubmit" class="pn pnc" value="true" name="editsubmit"><span>保存</span></button>
</div>
</form>
</div>"""
    return page(
        site,
        viewer,
        title="编辑帖子",
        body=body,
        now_text=now_text,
        css="forum_post",
        bodyclass="pg_post",
    )


# --------------------------------------------------------------------------- forumdisplay


@dataclass(frozen=True, slots=True)
class ThreadRow:
    """One thread of the forum listing, as ``forum_forumdisplay.php`` prepares it."""

    tid: int
    subject: str  # stored form (already HTML-escaped, as Discuz stores subjects)
    author: str
    authorid: int
    dateline_html: str  # dgmdate($dateline, 'u', 9999, dateformat): relative in a <span title>
    istoday: bool
    replies: int
    views: int
    lastposter: str
    lastpost_html: str
    closed: bool
    displayorder: int  # 1-4: sticky
    new: bool  # folder "new" (a reply since the forum's last visit)
    pages: int  # the thread's own page count (the ``...2 3`` links)


def _thread_pagelinks(tid: int, pages: int, extra: str) -> str:
    if pages <= 1:
        return ""
    links = "".join(
        f'<a href="forum.php?mod=viewthread&tid={tid}&amp;extra={extra}&amp;page={i}"'
        f' onclick="atarget(this)">{i}</a>'
        for i in range(2, min(pages, 6) + 1)
    )
    if pages > 6:
        links += (
            f'..<a href="forum.php?mod=viewthread&tid={tid}&amp;extra={extra}&amp;page={pages}"'
            f' onclick="atarget(this)">{pages}</a>'
        )
    return f'<span class="tps">&nbsp;...{links}</span>\n'


def _thread_row(row: ThreadRow, *, fid: int, extra: str, moderator: bool) -> str:
    """One ``tbody#normalthread_T`` / ``tbody#stickthread_T`` of forumdisplay_list.htm."""
    tid = row.tid
    sticky = row.displayorder in (1, 2, 3, 4)
    body_id = f"stickthread_{tid}" if sticky else f"normalthread_{tid}"
    folder = "lock" if row.closed else ("new" if row.new else "common")
    title = ""
    if sticky:
        title += ("本版置顶", "分类置顶", "全局置顶", "多版置顶")[row.displayorder - 1] + "主题 - "
    if row.closed:
        title += "关闭的主题 - "
    if folder == "new":
        title += "有新回复 - "
    title += "新窗口打开"
    if row.closed:
        icon = '<i class="fico-lock fic6 fc-s"></i>'
    elif sticky:
        icon = (
            f'<i class="tpin tpin{row.displayorder}"><svg width="18" height="18">'
            '<path d="M9 0l9 9H14v9H4V9H0z"></path></svg></i>'
        )
    else:
        icon = f'<i class="fico-thread fic6 {"fc-l" if folder == "new" else "fc-n"}"></i>'
    check = ""
    if moderator:
        check = (
            '<td class="o">\n<input onclick="tmodclick(this)" type="checkbox" name="moderate[]"'
            f' value="{tid}" />\n</td>\n'
        )
    hide = ""
    if sticky:
        hide = (
            f'<a href="javascript:void(0);" onclick="hideStickThread(\'{tid}\')" '
            'class="closeprev y" title="隐藏置顶帖">隐藏置顶帖</a>\n'
        )
    new_link = ""
    if not row.closed:
        new_link = (
            f'<a href="forum.php?mod=redirect&amp;tid={tid}&amp;goto=lastpost#lastpost"'
            ' class="xi1">New</a>\n'
        )
    today = ' class="xi1"' if row.istoday else ""
    lastposter_enc = rawurlencode(row.lastposter)
    return f"""<tbody id="{body_id}">
<tr>
<td class="icn">
<a href="forum.php?mod=viewthread&amp;tid={tid}&amp;extra={extra}" title="{title}" target="_blank">
{icon}
</a>
</td>
{check}<th class="{folder}">
<a href="javascript:;" id="content_{tid}" class="showcontent y" title="更多操作" onclick="CONTENT_TID='{tid}';CONTENT_ID='{body_id}';showMenu({{'ctrlid':this.id,'menuid':'content_menu'}})"></a>
{hide} <a href="forum.php?mod=viewthread&amp;tid={tid}&amp;extra={extra}" onclick="atarget(this)" class="s xst">{row.subject}</a>
{_thread_pagelinks(tid, row.pages, extra)}{new_link}</th>
<td class="by">
<cite>
<a href="home.php?mod=space&amp;uid={row.authorid}" c="1">{row.author}</a></cite>
<em><span{today}>{row.dateline_html}</span></em>
</td>
<td class="num"><a href="forum.php?mod=viewthread&amp;tid={tid}&amp;extra={extra}" class="xi2">{row.replies}</a><em>{row.views}</em></td>
<td class="by">
<cite><a href="home.php?mod=space&username={lastposter_enc}" c="1">{row.lastposter}</a></cite>
<em><a href="forum.php?mod=redirect&tid={tid}&goto=lastpost#lastpost">{row.lastpost_html}</a></em>
</td>
</tr>
</tbody>
"""


def rawurlencode(text: str) -> str:
    """PHP ``rawurlencode`` (RFC 3986: letters, digits and ``-_.~`` kept)."""
    return quote(text, safe="-_.~")


def forumdisplay_page(
    site: Site,
    viewer: Viewer,
    *,
    rows: Sequence[ThreadRow],
    page_no: int,
    threadcount: int,
    pager: str,
    moderator: bool,
    now_ts: int,
    now_text: str,
    waiting: int = 0,
) -> str:
    """``forum.php?mod=forumdisplay&fid=F`` (default template, X3.5, list style).

    ``waiting``: the viewer's own threads of this forum waiting for a moderator — shown as
    forumdisplay.htm:180's banner (``forum_moderate_unhandled``) when there are any."""
    body = (
        _forum_head(site, threadcount)
        + _moderation_banner(viewer, waiting)
        + _forum_top_pager(site, pager)
        + _forum_threadlist(site, viewer, rows, page_no=page_no, moderator=moderator, now_ts=now_ts)
        + _forum_bottom(site, viewer, pager=pager, page_no=page_no, now_ts=now_ts)
    )
    return page(
        site,
        viewer,
        title=site.forum_name,
        body=body,
        now_text=now_text,
        css="forum_forumdisplay",
        bodyclass="pg_forumdisplay",
        keywords=site.forum_name,
    )


def _forum_head(site: Site, threadcount: int) -> str:
    """The breadcrumbs and the forum's name with its thread count."""
    fid = site.fid
    return f"""<div id="pt" class="bm cl">
<div class="z">
<a href="./" class="nvhm" title="首页">Discuz! Board</a><em>&raquo;</em><a href="forum.php">论坛</a> <em>&rsaquo;</em> <a href="forum.php?gid=1">Discuz!</a><em>&rsaquo;</em> <a href="forum.php?mod=forumdisplay&fid={fid}">{site.forum_name}</a></div>
</div>
<div class="boardnav">
<div id="ct" class="wp cl">

<div class="mn">
<div class="bm bml pbn">
<div class="bm_h cl">
<h1 class="xs2">
<a href="forum.php?mod=forumdisplay&amp;fid={fid}">{site.forum_name}</a>
<span class="xs1 xw0 i">主题: <strong class="xi1">{threadcount}</strong></span></h1>
</div>
</div>

"""


def _moderation_banner(viewer: Viewer, waiting: int) -> str:
    """The viewer's threads waiting for a moderator (forumdisplay.htm:180), when there are any."""
    return (
        '<div class="bm"><div class="ntc_l hm xi2"><strong><a href="home.php?mod=space&uid='
        f'{viewer.uid}&do=thread&view=me&type=thread&from=&filter=aduit">您有 {waiting} 个主题'
        "正等待审核中，点击查看</a></strong></div></div>\n"
        if waiting and viewer.uid
        else ""
    )


def _forum_top_pager(site: Site, pager: str) -> str:
    """The upper pager with 返回 and 发新帖."""
    fid = site.fid
    return f"""<div id="pgt" class="bm bw0 pgs cl">
<span id="fd_page_top">{pager}</span>
<span class="pgb y"  ><a href="forum.php">返&nbsp;回</a></span>
<a href="javascript:;" id="newspecial" onclick="showWindow('newthread', 'forum.php?mod=post&action=newthread&fid={fid}')" title="发新帖" class="pgsbtn showmenu">发新帖</a></div>
"""


def _forum_threadlist(
    site: Site,
    viewer: Viewer,
    rows: Sequence[ThreadRow],
    *,
    page_no: int,
    moderator: bool,
    now_ts: int,
) -> str:
    """The thread list: its sort header, then one row per thread inside the moderation form."""
    fid = site.fid
    extra = f"page%3D{page_no}"
    threads = "".join(_thread_row(r, fid=fid, extra=extra, moderator=moderator) for r in rows)
    o_cell = '<td class="o"></td>' if moderator else ""
    return f"""<div id="threadlist" class="tl bm bmw" style="position: relative;">
<div class="th">
<table cellspacing="0" cellpadding="0">
<tr>
<th colspan="{3 if moderator else 2}">
<div class="tf">
<a href="forum.php?mod=forumdisplay&amp;fid={fid}&amp;filter=lastpost&amp;orderby=lastpost" class="xi2">最新</a>&nbsp;
<a href="forum.php?mod=forumdisplay&amp;fid={fid}&amp;filter=author&amp;orderby=dateline" class="xi2">发帖时间</a>&nbsp;
</div>
</th>
<td class="by">作者</td>
<td class="num">回复/查看</td>
<td class="by">最后发表</td>
</tr>
</table>
</div>
<div class="bm_c">
<script type="text/javascript">var lasttime = {now_ts};var listcolspan= '{6 if moderator else 5}';</script>
<div id="forumnew" style="display:none"></div>
<form method="post" autocomplete="off" name="moderate" id="moderate" action="forum.php?mod=topicadmin&amp;action=moderate&amp;fid={fid}&amp;infloat=yes&amp;nopost=yes">
<input type="hidden" name="formhash" value="{viewer.formhash}" />
<input type="hidden" name="listextra" value="{extra}" />
<table summary="forum_{fid}" cellspacing="0" cellpadding="0" id="threadlisttableid">
<tbody id="separatorline" class="emptb"><tr><td class="icn"></td>{o_cell}<th></th><td class="by"></td><td class="num"></td><td class="by"></td></tr></tbody>
{threads}</table><!-- end of table "forum_G[fid]" branch 1/3 -->
</form>
</div>
</div>

"""


def _forum_bottom(site: Site, viewer: Viewer, *, pager: str, page_no: int, now_ts: int) -> str:
    """Below the list: the lower pager, the quick new-thread form and the page's scripts."""
    fid = site.fid
    return f"""<div class="bm bw0 pgs cl">
<span id="fd_page_bottom">{pager}</span>
<span  class="pgb y"><a href="forum.php">返&nbsp;回</a></span>
</div>
<script type="text/javascript">
var postminchars = parseInt('10');
var postmaxchars = parseInt('10000');
var postminsubjectchars = parseInt('1');
var postmaxsubjectchars = parseInt('80');
var fid = parseInt('{fid}');
</script>
<div id="f_pst" class="bm">
<div class="bm_c">
<form method="post" autocomplete="off" id="fastpostform" action="forum.php?mod=post&amp;action=newthread&amp;fid={fid}&amp;topicsubmit=yes&amp;infloat=yes&amp;handlekey=fastnewpost" onSubmit="return fastpostvalidate(this)">
<div class="pbt cl">
<input type="text" id="subject" name="subject" class="px" value="" onkeyup="dstrLenCalc(this, 'checklen', 80);" style="width: 25em" />
</div>
<textarea rows="6" cols="80" name="message" id="fastpostmessage" class="pt"></textarea>
<input type="hidden" name="formhash" value="{viewer.formhash}" />
<input type="hidden" name="usesig" value="1" />
<input type="hidden" name="posttime" id="posttime" value="{now_ts}" />
<button type="submit" name="topicsubmit" id="fastpostsubmit" value="topicsubmit" class="pn pnc"><strong>发表帖子</strong></button>
</form>
</div>
</div>
</div>

</div>
</div>
<script type="text/javascript">document.onkeyup = function(e){{keyPageScroll(e, 0, 0, 'forum.php?mod=forumdisplay&fid={fid}&filter=&orderby=lastpost&', {page_no});}}</script>
"""


@dataclass(frozen=True, slots=True)
class SpaceThreadRow:
    """One thread of a member's own list (space_thread.htm, ``view=me``, ``type=thread``)."""

    tid: int
    subject: str  # stored escaped, as Discuz keeps it
    fid: int
    forum_name: str
    replies: int
    views: int
    lastposter: str
    lastpost_html: str
    displayorder: int = 0


_CLASS_A = 'class="a"'
_SPACE_FILTERS = [
    ("common", "已发表"),
    ("save", "草稿"),
    ("close", "已关闭"),
    ("aduit", "待审核"),
    ("ignored", "已忽略"),
    ("recyclebin", "回收站"),
]


def space_thread_page(
    site: Site,
    viewer: Viewer,
    *,
    rows: Sequence[SpaceThreadRow],
    filter_key: str,
    page_no: int,
    full_page: bool,
    theurl: str,
    now_text: str,
) -> str:
    """``home.php?mod=space&uid=U&do=thread&view=me&type=thread&filter=F`` seen by U itself
    (space_thread.htm, not in diymode, ``homestyle`` off): the member's own threads."""
    filters = "".join(
        f'<span class="pipe">|</span><a href="home.php?mod=space&do=thread&view=me&type=thread'
        f'&from=&filter={key}" {_CLASS_A if key == filter_key else ""}>{name}</a>'
        for key, name in _SPACE_FILTERS
    )
    listed = (
        "".join(_space_thread_row(r, filter_key) for r in rows)
        or '<tr>\n<td colspan="5"><p class="emp">还没有相关的帖子</p></td>\n</tr>\n'
    )
    pager = _space_pager(theurl, page_no, full_page)
    body = f"""<div id="pt" class="bm cl">
<div class="z">
<a href="./" class="nvhm" title="首页">Discuz! Board</a> <em>&rsaquo;</em>
<a href="home.php?mod=space&do=blog">帖子</a>
</div>
</div>
<div id="ct" class="ct2_a wp cl">
<div class="appl">
<div class="tbn">
<h2 class="mt bbda">帖子</h2>
<ul>
<li><a href="home.php?mod=space&do=thread&view=we">好友的帖子</a></li>
<li class="a"><a href="home.php?mod=space&do=thread&view=me">我的帖子</a></li>
</ul>
</div>
</div>
<div class="mn pbw">
<p class="tbmu bw0">
<span class="y">
<a href="home.php?mod=space&uid={viewer.uid}&do=thread&view=me&type=thread&from=&filter=" {"" if filter_key else 'class="a"'}>全部</a>
{filters} &nbsp;
</span>
<a href="home.php?mod=space&do=thread&view=me&type=thread" class="a">主题</a><span class="pipe">|</span>
<a href="home.php?mod=space&do=thread&view=me&type=reply" >回复</a><span class="pipe">|</span>
<a href="home.php?mod=space&do=thread&view=me&type=postcomment" >点评</a>
</p>
<div class="tl">
<form method="post" autocomplete="off" name="delform" id="delform" action="home.php?mod=space&do=thread&view=all&order=dateline" onsubmit="showDialog('确定要删除选定的主题吗？', 'confirm', '', '$(\'delform\').submit();'); return false;">
<input type="hidden" name="formhash" value="{viewer.formhash}" />
<input type="hidden" name="delthread" value="true" />
<table cellspacing="0" cellpadding="0">
<tr class="th">
<td class="icn">&nbsp;</td>
<th>主题</th>
<td class="frm">版块/群组</td>
<td class="num">回复</td>
<td class="by"><cite>最后发帖</cite></td>
</tr>
{listed}</table>
</form>
</div>
{pager}
</div>
</div>
"""
    return page(
        site,
        viewer,
        title=f"{viewer.username}的帖子",
        body=body,
        now_text=now_text,
        css="home_space",
        bodyclass="pg_space",
    )


def _space_thread_row(r: SpaceThreadRow, filter_key: str) -> str:
    """One thread of the list; 待审核 marks one waiting for a moderator in the unfiltered list."""
    pending = (
        "" if filter_key else ('<span class="xg1">待审核</span>' if r.displayorder == -2 else "")
    )
    return f"""<tr>
<td class="icn">
<a href="forum.php?mod=viewthread&tid={r.tid}&highlight=" title="新窗口打开" target="_blank">
<img src="static/image/common/folder_common.gif" />
</a>
</td>
<th>
<a href="forum.php?mod=viewthread&tid={r.tid}" target="_blank" >{r.subject}</a>
{pending}</th>
<td>
<a href="forum.php?mod=forumdisplay&fid={r.fid}" class="xg1" target="_blank">{r.forum_name}</a>
</td>
<td class="num">
<a href="forum.php?mod=viewthread&tid={r.tid}" class="xi2" target="_blank">{r.replies}</a>
<em>{r.views}</em>
</td>
<td class="by">
<cite><a href="home.php?mod=space&username={rawurlencode(r.lastposter)}" target="_blank">{r.lastposter}</a></cite>
<em><a href="forum.php?mod=redirect&tid={r.tid}&goto=lastpost#lastpost" target="_blank">{r.lastpost_html}</a></em>
</td>
</tr>
"""


def _space_pager(theurl: str, page_no: int, full_page: bool) -> str:
    """上一页 / 下一页 (a full page may have a next one), or nothing on a lone page."""
    prev = (
        f'<span class="pgb"><a href="{theurl}&amp;page={page_no - 1}">上一页</a></span>'
        if page_no > 1
        else ""
    )
    nxt = f'<a href="{theurl}&amp;page={page_no + 1}" class="nxt">下一页</a>' if full_page else ""
    pager = (
        f'<div class="pgs cl mtm"><div class="pg">{prev}{nxt}</div></div>' if prev or nxt else ""
    )
    return pager


def newthread_form_page(site: Site, viewer: Viewer, *, now_ts: int, now_text: str) -> str:
    """``forum.php?mod=post&action=newthread&fid=F``: the new-thread form (``post.htm``)."""
    body = f"""<div id="ct" class="ct2_a ct2_a_r wp cl">
<form method="post" autocomplete="off" id="postform" action="forum.php?mod=post&amp;action=newthread&amp;fid={site.fid}&amp;extra=&amp;topicsubmit=yes">
<input type="hidden" name="formhash" id="formhash" value="{viewer.formhash}" />
<input type="hidden" name="posttime" id="posttime" value="{now_ts}" />
<input type="hidden" name="wysiwyg" id="e_mode" value="1" />
<div class="bm bw0 cl">
<h1>发表帖子</h1>
<span><input type="text" name="subject" id="subject" class="px" value="" onkeyup="strLenCalc(this, 'checklen', 80);" style="width: 25em" tabindex="1" /></span>
<span id="subjectchk">还可输入 <strong id="checklen">80</strong> 个字符</span>
<textarea name="message" id="e_textarea" class="pt" rows="15"></textarea>
<input type="hidden" name="allownoticeauthor" value="1" />
<input type="hidden" name="usesig" value="1" />
<button type="submit" id="postsubmit" class="pn pnc" value="true" name="topicsubmit"><span>发表帖子</span></button>
</div>
</form>
</div>"""
    return page(
        site,
        viewer,
        title="发表帖子",
        body=body,
        now_text=now_text,
        css="forum_post",
        bodyclass="pg_post",
    )
