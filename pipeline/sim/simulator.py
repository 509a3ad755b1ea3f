"""A local Discuz! X3.5 forum for tests and ``bansha demo``: state, requests, faults, a server.

``ForumSim`` holds threads, posts and accounts and answers requests the way a real X3.5 does
(docs/discuz.md) (markup in ``pipeline.sim.render``). It has no sockets: call
``handle()`` directly, plug ``transport()`` into an ``httpx.Client``, or run ``SimServer`` for a
real HTTP server on 127.0.0.1.

Served endpoints:

* ``forum.php?mod=viewthread&tid=T&page=N[&authorid=U][&ordertype=1|2]`` (desktop HTML)
* ``api/mobile/index.php?version=4&module=viewthread&tid=T&page=N&ppp=P[&authorid=U]`` and
  ``module=check`` (mobile API JSON)
* ``member.php?mod=logging&action=login`` (form; POST ``loginsubmit=yes`` logs in) and
  ``action=logout``
* ``forum.php?mod=post&action=reply&tid=T`` (form, ``repquote=P`` fills ``noticetrimstr``) and
  POST ``...&replysubmit=yes[&inajax=1&handlekey=fastpost]``
* ``forum.php?mod=post&action=edit&tid=T&pid=P`` (form) and POST ``...&editsubmit=yes``
  (the author or an admin; the ``本帖最后由`` note after 60 s, like the real server)
* ``forum.php?mod=redirect&goto=findpost&ptid=T&pid=P``
* ``forum.php?mod=forumdisplay&fid=F[&filter=author&orderby=dateline][&page=N]`` (the forum
  listing: sticky threads first, then newest by ``orderby``, ``tpp`` per page; a page past the
  end shows page 1) and ``api/mobile/index.php?version=4&module=forumdisplay&fid=F[&page=N]``
* ``forum.php?mod=post&action=newthread&fid=F`` (form) and POST ``...&topicsubmit=yes``
  ``[&inajax=1&handlekey=fastnewpost]``: a new thread (tid = the largest + 1) with its first
  post; refused as Discuz refuses it (not logged in, not allowed to start threads
  (``newthread_users``), captcha, empty subject or message, subject over 80 characters, body
  size, flood control, ``threads_per_hour``); success answers 301 to the thread (ajax:
  ``succeedhandle_`` with fid/tid/pid)
* ``home.php?mod=space&uid=U&do=thread&view=me&type=thread[&filter=aduit|common][&fid=F]
  [&page=N]`` (space_thread.php / space_thread.htm): a member's own threads, 20 a page, newest
  started first; ``filter=aduit`` those waiting for a moderator (only U itself sees them;
  ``space_closed``: 抱歉，家园功能尚未开启)
* ``forum.php?mod=topicadmin&action=moderate&optgroup=4&modsubmit=yes`` POST ``fid,
  moderate[]=T, operations[]=close|open``: always in the ajax form (handle key ``mods``);
  抱歉，您没有权限使用管理功能 for an account that does not moderate the forum, 抱歉，您没有权限关闭
  此主题 for one in ``cannot_close``, 管理操作成功 otherwise (through ``errorhandle_mods`` when no
  ``redirect`` was given, as Discuz does); each close/open lands in :attr:`ForumSim.mod_actions`

Posting modes a test can switch on: ``seccode_post`` / ``seccode_login`` (the forum demands a
captcha: 抱歉，验证码填写错误 / 请输入验证码后继续登录), ``moderate_replies`` (回复需要审核: the
reply is kept out of the thread until :meth:`ForumSim.approve_post`), ``moderate_threads``
(新主题需要审核，您的帖子通过审核后才能显示: the thread is kept out of the listing and the
thread pages until :meth:`ForumSim.approve_thread`; its author still sees it and may reply to
it — function_forum.php:458-459, forum_post.php:94 — and sees forumdisplay.htm:180's banner
您有 N 个主题正等待审核中 over the listing, ``allowmoderatingthread`` being on).

Moderators: ``moderators`` moderate the sim's forum, ``admins`` moderate everywhere. A closed
thread (:meth:`ForumSim.close_thread`, or topicadmin) shows the lock in viewthread
(``fico-lock``) and ``closed: "1"`` in the mobile API; a reply or an edit in it by anyone else
is refused with 抱歉，本主题已关闭，不再接受新内容, a moderator's is accepted.

Fault ``lost_answer``: the forum handles the request (a reply, an edit, a new thread, a close),
then the connection drops before the answer arrives;
``transport(after=…)`` runs a hook after the forum handled a request (e.g. to simulate bansha
crashing right then). Faults of a forum that is not usable: ``garbage`` (HTTP 200, random bytes),
``redirect_loop`` (302 back to the same address, every time); ``echo_cookie`` answers with an
error page that repeats the request's Cookie header (a debug page: secrets must not leak from
there).

The forum is seen "as of" ``clock()``: a post exists from its ``at`` on, an edit, block or delete
takes effect from its own time. Everything is deterministic for a given seed and clock.
"""

from __future__ import annotations

import base64
import hashlib
import html
import math
import socket
import struct
import threading
import time
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit
from zoneinfo import ZoneInfo

import httpx

from pipeline.sim import render as render

FAULT_KINDS: frozenset[str] = frozenset(
    {
        "500",
        "503",
        "429",
        "slow",
        "reset",
        "truncate",
        "login_required",
        "flood",
        "maintenance",
        "lost_answer",
        "garbage",
        "redirect_loop",
        "echo_cookie",
    }
)
_TAINT = ('"', ">", "<", "'", "(", ")", "CONTENT-TRANSFER-ENCODING")
_ROLE_ZH = {"discussion": "讨论", "vote": "投票", "progress": "进程", "inquiry": "询问"}
_MIN_POST_BYTES = 10
_MAX_POST_BYTES = 10000
_MAX_SUBJECT = 80  # setting maxsubjectsize (install default)
_LOGIN_TRIES = 5


# --------------------------------------------------------------------------- small records


@dataclass(frozen=True, slots=True)
class SimRequest:
    """One request as the forum received it (for tests that count requests)."""

    method: str
    path: str  # e.g. "/forum.php"
    query: dict[str, str]
    form: dict[str, str] = field(default_factory=dict)  # decoded POST fields


@dataclass(frozen=True, slots=True)
class SimResponse:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes
    delay: float = 0.0  # "slow": seconds the real server would wait before answering
    fault: str | None = None  # "reset" | "refused" | "truncate" | "truncate_clean"

    def header(self, name: str) -> str | None:
        lname = name.lower()
        return next((v for k, v in self.headers if k.lower() == lname), None)

    @property
    def charset(self) -> str:
        ctype = self.header("content-type") or ""
        return ctype.split("charset=", 1)[1].strip() if "charset=" in ctype else "utf-8"

    @property
    def text(self) -> str:
        codec = "gb18030" if self.charset.lower() in ("gbk", "gb2312") else self.charset
        return self.body.decode(codec, errors="replace")


@dataclass
class Fault:
    kind: str
    count: int
    match: str | None = None
    seconds: float = 30.0  # "slow"
    retry_after: int = 5  # "429"
    connect: bool = False  # "reset": fail while connecting (httpx.ConnectError)
    clean: bool = False  # "truncate": a short body with a matching Content-Length


class Faults:
    """Faults that apply to the next ``count`` requests whose URL contains ``match``."""

    def __init__(self) -> None:
        self._items: list[Fault] = []

    def add(
        self,
        kind: str,
        *,
        count: int = 1,
        match: str | None = None,
        seconds: float = 30.0,
        retry_after: int = 5,
        connect: bool = False,
        clean: bool = False,
    ) -> Fault:
        if kind not in FAULT_KINDS:
            raise ValueError(f"未知的故障类型：{kind}（可选：{'、'.join(sorted(FAULT_KINDS))}）")
        if count < 1:
            raise ValueError("故障次数必须至少为 1")
        fault = Fault(kind, count, match, seconds, retry_after, connect, clean)
        self._items.append(fault)
        return fault

    def clear(self) -> None:
        self._items.clear()

    @property
    def pending(self) -> list[Fault]:
        return [f for f in self._items if f.count > 0]

    def take(self, url: str) -> Fault | None:
        for fault in self._items:
            if fault.count > 0 and (fault.match is None or fault.match in url):
                fault.count -= 1
                return fault
        return None


class SimClock:
    """A settable clock for tests and the demo: ``clock()`` returns the current sim time."""

    def __init__(self, start: datetime) -> None:
        _require_aware(start, "start")
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def set(self, when: datetime) -> None:
        _require_aware(when, "when")
        self.now = when

    def advance(self, seconds: float = 0.0, **delta: float) -> datetime:
        self.now = self.now + timedelta(seconds=seconds, **delta)
        return self.now


def _require_aware(when: datetime, what: str) -> None:
    if when.tzinfo is None or when.utcoffset() is None:
        raise ValueError(f"{what} 必须带时区（例如 +08:00）：{when.isoformat()}")


def _ts(when: datetime) -> int:
    _require_aware(when, "时间")
    return int(when.timestamp())


# --------------------------------------------------------------------------- forum state


@dataclass
class _Revision:
    at: int
    message: str


@dataclass
class _Post:
    pid: int
    tid: int
    author: str
    uid: int
    dateline: int
    position: int
    first: bool
    revisions: list[_Revision]
    blocked_at: int | None = None
    deleted_at: int | None = None
    mobile: bool = False
    smileyoff: bool = False  # posted with 禁用表情 (smilies shown as typed)

    def message_at(self, now: int) -> str:
        current = self.revisions[0].message
        for rev in self.revisions:
            if rev.at <= now:
                current = rev.message
        return current

    def blocked(self, now: int) -> bool:
        return self.blocked_at is not None and self.blocked_at <= now

    def deleted(self, now: int) -> bool:
        return self.deleted_at is not None and self.deleted_at <= now


@dataclass(frozen=True, slots=True)
class ModAction:
    """One moderation the forum carried out (``forum_threadmod``): ``CLS`` close, ``OPN`` open."""

    tid: int
    action: str
    by: str
    at: int


@dataclass
class _Thread:
    tid: int
    subject: str
    author: str
    uid: int
    dateline: int
    posts: list[_Post] = field(default_factory=list)
    views: int = 0
    closed_at: int | None = None  # forum_thread.closed = 1 from then on (None: open)
    displayorder: int = 0  # 1-4 sticky; -2 waiting for a moderator (新主题需要审核)
    disablepos_at: int | None = None  # after a delete Discuz counts floors by order
    redirect_at: int | None = None  # first desktop view after a delete answers 302 to itself
    hidden_replies: bool = False  # 回帖仅作者可见 (forum_thread.status bit 2)

    def visible(self, now: int) -> list[_Post]:
        return [p for p in self.posts if p.dateline <= now]

    def closed(self, now: int) -> bool:
        return self.closed_at is not None and self.closed_at <= now


@dataclass(frozen=True, slots=True)
class _Numbered:
    post: _Post
    number: int
    placeholder: bool


@dataclass
class _Req:
    method: str
    url: str
    path: str
    query: dict[str, str]
    form: dict[str, str]
    params: dict[str, str]  # $_GET merged with $_POST
    now: int
    saltkey: str
    new_salt: bool
    uid: int
    username: str
    auth: str | None
    force_login: bool = False
    cookies_out: list[str] = field(default_factory=list)
    cookie_header: str = ""
    pairs: list[tuple[str, str]] = field(default_factory=list)  # every POST field, repeats kept


# --------------------------------------------------------------------------- the forum


class ForumSim:
    """A Discuz! X3.5 forum in memory, seen as of ``clock()``."""

    def __init__(
        self,
        *,
        users: Mapping[str, int],
        tz: str = "Asia/Shanghai",
        ppp: int = 10,
        charset: str = "utf-8",
        floodctrl_s: int = 15,
        clock: Callable[[], datetime],
        login_required: bool = False,
        seed: int = 0,
        base_url: str = "http://127.0.0.1:8080/",
        fid: int = 3,
        forum_name: str = "版杀测试区",
        admins: Iterable[str] = (),
        passwords: Mapping[str, str] | None = None,
        default_password: str = "Test1234",
        first_pid: int = 1,
        seccode_post: bool = False,
        seccode_login: bool = False,
        moderate_replies: bool = False,
        moderators: Iterable[str] = (),
        moderate_threads: bool = False,
        tpp: int = 20,
        threads_per_hour: int = 0,
        newthread_users: Iterable[str] | None = None,
        cannot_close: Iterable[str] = (),
        space_closed: bool = False,
    ) -> None:
        if charset.lower() not in ("utf-8", "gbk"):
            raise ValueError(f"论坛编码只能是 utf-8 或 gbk：{charset}")
        if ppp < 1:
            raise ValueError("每页帖数 ppp 必须至少为 1")
        if tpp < 1:
            raise ValueError("每页主题数 tpp 必须至少为 1")
        uids = list(users.values())
        if len(set(uids)) != len(uids):
            raise ValueError("论坛账号的 uid 有重复")
        self.users: dict[str, int] = dict(users)
        self.tz = ZoneInfo(tz)
        self.ppp = ppp
        self.charset = charset.lower()
        self.floodctrl_s = floodctrl_s
        self.clock = clock
        self.login_required = login_required
        self.seed = seed
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.fid = fid
        self.forum_name = forum_name
        self.admins: set[str] = set(admins)
        self.passwords: dict[str, str] = {name: default_password for name in self.users}
        self.passwords.update(passwords or {})
        self.seccode_post = seccode_post
        self.seccode_login = seccode_login
        self.moderate_replies = moderate_replies
        self.moderators: set[str] = set(moderators)
        self.moderate_threads = moderate_threads
        self.tpp = tpp
        self.threads_per_hour = threads_per_hour
        self.newthread_users: set[str] | None = (
            None if newthread_users is None else set(newthread_users)
        )
        self.cannot_close: set[str] = set(cannot_close)
        self.space_closed = space_closed  # home.php answers 抱歉，家园功能尚未开启
        self.mod_actions: list[ModAction] = []
        self.requests: list[SimRequest] = []
        self.faults = Faults()
        self._pending: dict[int, _Post] = {}  # replies waiting for a moderator (invisible)
        self._pending_threads: dict[int, _Thread] = {}  # new threads waiting (displayorder -2)
        self._threads: dict[int, _Thread] = {}
        self._posts: dict[int, _Post] = {}
        self._next_pid = first_pid
        self._salt_counter = 0
        self._last_post_at: dict[int, int] = {}
        self._loginperm: dict[str, int] = {}
        self._lock = threading.RLock()
        digest = hashlib.md5(f"bansha-sim|{seed}".encode()).hexdigest()
        self._sitekey = digest
        letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
        pre = "".join(letters[int(digest[i : i + 2], 16) % len(letters)] for i in range(0, 8, 2))
        self.cookiepre = f"{pre}_2132_"

    # ------------------------------------------------------------------ seeding

    @property
    def names_by_uid(self) -> dict[int, str]:
        return {uid: name for name, uid in self.users.items()}

    def _uid(self, author: str) -> int:
        try:
            return self.users[author]
        except KeyError:
            raise ValueError(f"未知的论坛账号：{author}") from None

    def _new_pid(self) -> int:
        pid = self._next_pid
        self._next_pid += 1
        return pid

    def add_thread(
        self,
        tid: int,
        subject: str,
        author: str,
        message: str,
        at: datetime,
        *,
        hidden_replies: bool = False,
    ) -> int:
        """Open thread ``tid`` with its first post (楼主); returns that post's pid. The subject
        is stored HTML-escaped, as ``post.php`` stores it (pages show it as stored).
        ``hidden_replies``: 回帖仅作者可见 (a reply is shown to its author, the thread's author
        and the moderators only)."""
        with self._lock:
            if tid in self._threads or tid in self._pending_threads:
                raise ValueError(f"主题 {tid} 已经存在")
            ts = _ts(at)
            uid = self._uid(author)
            thread = _Thread(tid, render.dhtmlspecialchars(subject), author, uid, ts)
            thread.hidden_replies = hidden_replies
            self._threads[tid] = thread
            pid = self._new_pid()
            post = _Post(pid, tid, author, uid, ts, 1, True, [_Revision(ts, message)])
            thread.posts.append(post)
            self._posts[pid] = post
            return pid

    def add_post(
        self,
        tid: int,
        author: str,
        message_bbcode: str,
        at: datetime,
        *,
        quote_pid: int | None = None,
        mobile: bool = False,
        smileyoff: bool = False,
    ) -> int:
        """Reply in ``tid``; ``quote_pid`` prepends the quote the 回复 button builds."""
        with self._lock:
            thread = self._thread(tid)
            ts = _ts(at)
            message = message_bbcode
            if quote_pid is not None:
                message = self.quote_for(quote_pid, at=at) + "\n\n" + message_bbcode
            pid = self._new_pid()
            position = max((p.position for p in thread.posts), default=0) + 1
            post = _Post(
                pid,
                tid,
                author,
                self._uid(author),
                ts,
                position,
                False,
                [_Revision(ts, message)],
                mobile=mobile,
                smileyoff=smileyoff,
            )
            thread.posts.append(post)
            self._posts[pid] = post
            return pid

    def quote_for(self, pid: int, *, at: datetime | None = None) -> str:
        """``noticetrimstr`` for a reply to ``pid`` (docs/discuz.md §3.2), as of ``at``."""
        post = self._post(pid)
        now = _ts(at) if at is not None else _ts(self.clock())
        posted = render.php_date(post.dateline, self.tz, seconds=False)
        message = post.message_at(now)
        if post.blocked(now):
            message = "**** 该帖被屏蔽 ****"
        return render.quote_block(
            pid=pid, tid=post.tid, author=post.author, posted=posted, message=message
        )

    def edit_post(
        self, pid: int, new_message: str, at: datetime, editor: str | None = None
    ) -> None:
        """Replace the message from ``at`` on; more than 60 s after posting (and by a non-admin)
        Discuz prepends ``[i=s] 本帖最后由 {editor} 于 {Y-n-j H:i} 编辑 [/i]``."""
        with self._lock:
            post = self._post(pid)
            ts = _ts(at)
            editor = editor or post.author
            body = render.POST_EDIT_RE.sub("", new_message)
            if ts - post.dateline > 60 and editor not in self.admins:
                edittime = render.php_date(ts, self.tz, seconds=False)
                body = render.POST_EDIT_NOTE.format(editor=editor, edittime=edittime) + body
            post.revisions.append(_Revision(ts, body))
            post.revisions.sort(key=lambda r: r.at)

    def delete_post(self, pid: int, *, at: datetime | None = None, renumber: bool = True) -> None:
        """Delete a post (to the recycle bin). ``renumber`` (what the real server did): the
        first desktop view afterwards answers 302 to itself, then floors are counted by order
        (position 15 shows 14#). ``renumber=False``: the position keeps a placeholder
        ``无效楼层，该帖已经被删除``."""
        with self._lock:
            post = self._post(pid)
            if post.first:
                raise ValueError("不能单独删除主题的首帖")
            ts = _ts(at) if at is not None else post.dateline
            post.deleted_at = ts
            if renumber:
                thread = self._threads[post.tid]
                if thread.disablepos_at is None or ts < thread.disablepos_at:
                    thread.disablepos_at = ts
                thread.redirect_at = ts

    def block_post(self, pid: int, *, at: datetime | None = None) -> None:
        """屏蔽 (banpost): readers see ``提示: 该帖被管理员或版主屏蔽``; the floor stays."""
        with self._lock:
            post = self._post(pid)
            post.blocked_at = _ts(at) if at is not None else post.dateline

    def stored_message(self, pid: int, *, at: datetime | None = None) -> str:
        """The message as stored (BBCode, with any quote or edit note), as of ``at``."""
        now = _ts(at) if at is not None else _ts(self.clock())
        return self._post(pid).message_at(now)

    def thread_pids(self, tid: int) -> list[int]:
        return [p.pid for p in self._thread(tid).posts]

    def pending_pids(self, tid: int) -> list[int]:
        """Replies to ``tid`` waiting for a moderator (not shown in the thread)."""
        return [pid for pid, p in self._pending.items() if p.tid == tid]

    def approve_post(self, pid: int, *, at: datetime | None = None) -> None:
        """A moderator approves a reply that was waiting (审核通过): it joins the thread at the
        end, keeping its pid and its time."""
        with self._lock:
            try:
                post = self._pending.pop(pid)
            except KeyError:
                raise ValueError(f"帖子 pid={pid} 不在审核队列中") from None
            thread = self._thread(post.tid)
            post.position = max((p.position for p in thread.posts), default=0) + 1
            if at is not None:
                post.dateline = max(post.dateline, _ts(at))
            thread.posts.append(post)
            self._posts[pid] = post

    # ------------------------------------------------------------------ threads and moderators

    def is_moderator(self, username: str) -> bool:
        """Whether ``username`` moderates the sim's forum (its ``moderators``, or an admin)."""
        return bool(username) and (username in self.moderators or username in self.admins)

    def thread_tids(self) -> list[int]:
        """Every thread shown in the forum (not those waiting for a moderator), by tid."""
        return sorted(self._threads)

    def thread_subject(self, tid: int) -> str:
        """The subject as a reader sees it (stored escaped)."""
        return html.unescape(self._thread(tid).subject)

    def thread_hidden_replies(self, tid: int) -> bool:
        """Whether thread ``tid`` was opened 回帖仅作者可见."""
        return self._thread(tid).hidden_replies

    def thread_author(self, tid: int) -> str:
        return self._thread(tid).author

    def thread_closed(self, tid: int, *, at: datetime | None = None) -> bool:
        """Whether ``tid`` is closed (关闭) as of ``at`` (default: the sim's clock)."""
        now = _ts(at) if at is not None else _ts(self.clock())
        return self._thread(tid).closed(now)

    def close_thread(self, tid: int, *, at: datetime | None = None, by: str = "") -> None:
        """Close ``tid`` (``forum_thread.closed = 1``): only moderators may reply from ``at``
        on. Recorded in :attr:`mod_actions` like the forum's moderation log."""
        with self._lock:
            thread = self._thread(tid)
            ts = _ts(at) if at is not None else _ts(self.clock())
            thread.closed_at = ts
            self.mod_actions.append(ModAction(tid, "CLS", by, ts))

    def open_thread(self, tid: int, *, at: datetime | None = None, by: str = "") -> None:
        """Open a closed thread again (``closed = 0``)."""
        with self._lock:
            thread = self._thread(tid)
            ts = _ts(at) if at is not None else _ts(self.clock())
            thread.closed_at = None
            self.mod_actions.append(ModAction(tid, "OPN", by, ts))

    def stick_thread(self, tid: int, level: int = 1) -> None:
        """置顶 (``displayorder`` 1-4; 0 unsticks)."""
        if level not in (0, 1, 2, 3, 4):
            raise ValueError(f"置顶级别只能是 0-4：{level}")
        with self._lock:
            self._thread(tid).displayorder = level

    def pending_threads(self) -> list[int]:
        """New threads waiting for a moderator (新主题需要审核): kept, not shown."""
        return sorted(self._pending_threads)

    def approve_thread(self, tid: int) -> None:
        """A moderator approves a new thread that was waiting: it is shown from now on."""
        with self._lock:
            try:
                thread = self._pending_threads.pop(tid)
            except KeyError:
                raise ValueError(f"主题 {tid} 不在审核队列中") from None
            thread.displayorder = 0
            self._threads[tid] = thread
            for post in thread.posts:
                self._posts[post.pid] = post

    def _new_tid(self) -> int:
        return max([*self._threads, *self._pending_threads, 0]) + 1

    def _thread(self, tid: int) -> _Thread:
        """A thread shown in the forum or waiting for a moderator."""
        thread = self._threads.get(tid) or self._pending_threads.get(tid)
        if thread is None:
            raise ValueError(f"主题 {tid} 不存在")
        return thread

    def _post(self, pid: int) -> _Post:
        try:
            return self._posts[pid]
        except KeyError:
            raise ValueError(f"帖子 pid={pid} 不存在") from None

    # ------------------------------------------------------------------ sessions

    def _authkey(self, saltkey: str) -> str:
        return hashlib.md5((self._sitekey + saltkey).encode()).hexdigest()

    def formhash(
        self, saltkey: str, username: str = "", uid: int = 0, *, now: int | None = None
    ) -> str:
        """``substr(md5(substr(time,0,-7).username.uid.authkey), 8, 8)``; authkey = md5(site
        key + saltkey), so the formhash belongs to one cookie session."""
        ts = now if now is not None else _ts(self.clock())
        raw = f"{str(ts)[:-7]}{username}{uid}{self._authkey(saltkey)}"
        return hashlib.md5(raw.encode("utf-8")).hexdigest()[8:16]

    def _new_saltkey(self) -> str:
        self._salt_counter += 1
        digest = hashlib.md5(f"{self._sitekey}|salt|{self._salt_counter}".encode()).digest()
        letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
        return "".join(letters[b % len(letters)] for b in digest[:8])

    def _auth_value(self, saltkey: str, uid: int) -> str:
        sig = hashlib.sha256(f"{self._authkey(saltkey)}|{uid}".encode()).hexdigest()[:32]
        return base64.b64encode(f"{sig}\t{uid}".encode()).decode()

    def _auth_uid(self, saltkey: str, value: str) -> int:
        try:
            _sig, uid_text = base64.b64decode(value.encode(), validate=True).decode().split("\t")
            uid = int(uid_text)
        except (ValueError, UnicodeDecodeError):
            return 0
        if uid in self.names_by_uid and self._auth_value(saltkey, uid) == value:
            return uid
        return 0

    def login_cookie(self, username: str) -> str:
        """A ``Cookie`` header value of a logged-in session (what a director copies from the
        browser into BANSHA_COOKIE)."""
        with self._lock:
            uid = self._uid(username)
            salt = self._new_saltkey()
            auth = quote(self._auth_value(salt, uid), safe="")
            return f"{self.cookiepre}saltkey={salt}; {self.cookiepre}auth={auth}"

    # ------------------------------------------------------------------ requests

    def handle(
        self,
        method: str,
        url: str,
        headers: Mapping[str, str] | None = None,
        body: bytes = b"",
    ) -> SimResponse:
        """Answer one HTTP request like the forum would (no sockets involved)."""
        with self._lock:
            return self._handle(method.upper(), url, headers or {}, body)

    def _codec(self) -> str:
        return "gbk" if self.charset == "gbk" else "utf-8"

    def _parse_qs(self, qs: str) -> dict[str, str]:
        return dict(parse_qsl(qs, keep_blank_values=True, encoding=self._codec(), errors="replace"))

    def _handle(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> SimResponse:
        parts = urlsplit(url)
        path = parts.path or "/"
        query = self._parse_qs(parts.query)
        hdrs = {k.lower(): v for k, v in headers.items()}
        form: dict[str, str] = {}
        pairs: list[tuple[str, str]] = []
        if method == "POST" and body:
            form = self._parse_qs(body.decode("latin-1"))
            pairs = parse_qsl(
                body.decode("latin-1"),
                keep_blank_values=True,
                encoding=self._codec(),
                errors="replace",
            )
        self.requests.append(SimRequest(method, path, dict(query), dict(form)))
        now = _ts(self.clock())
        fault = self.faults.take(url)
        cookies = _parse_cookies(hdrs.get("cookie", ""))
        saltkey = cookies.get(f"{self.cookiepre}saltkey", "")
        new_salt = not saltkey
        if new_salt:
            saltkey = self._new_saltkey()
        auth = cookies.get(f"{self.cookiepre}auth")
        uid = self._auth_uid(saltkey, auth) if auth else 0
        username = self.names_by_uid.get(uid, "") if uid else ""
        req = _Req(
            method=method,
            url=url,
            path=path,
            query=query,
            form=form,
            params={**query, **form},
            now=now,
            saltkey=saltkey,
            new_salt=new_salt,
            uid=uid,
            username=username,
            auth=auth if uid else None,
            cookie_header=hdrs.get("cookie", ""),
            pairs=pairs,
        )
        if new_salt:
            req.cookies_out.append(
                self._cookie(f"{self.cookiepre}saltkey", saltkey, now, 2592000, httponly=True)
            )
        early = self._fault_response(fault, req) if fault else None
        resp = early if early is not None else self._route(req)
        if fault is not None and early is None:
            if fault.kind == "slow":
                resp = replace(resp, delay=fault.seconds)
            elif fault.kind == "truncate":
                resp = replace(resp, fault="truncate_clean" if fault.clean else "truncate")
            elif fault.kind == "lost_answer":
                resp = replace(resp, fault="reset")  # handled, then the connection dropped
        return resp

    def _fault_response(self, fault: Fault, req: _Req) -> SimResponse | None:
        kind = fault.kind
        if kind == "500":
            body = render.nginx_error_page(500, "Internal Server Error")
            return self._raw(500, body.encode(), "text/html", req)
        if kind == "503":
            return self._system_error(req, "Discuz! Database Error")
        if kind == "429":
            page = render.nginx_error_page(429, "Too Many Requests").encode()
            resp = self._raw(429, page, "text/html", req)
            return replace(resp, headers=(*resp.headers, ("Retry-After", str(fault.retry_after))))
        if kind == "reset":
            return SimResponse(0, (), b"", fault="refused" if fault.connect else "reset")
        if kind == "flood":
            return self._raw(200, render.too_fast_page().encode("utf-8"), "text/html", req)
        if kind == "maintenance":
            if self._is_mobile(req):
                return self._json(req, {"error": "board_closed"})
            return self._html(
                req,
                render.message_page(
                    *self._site_viewer(req),
                    message=render.MSG_BOARD_CLOSED,
                    alert="alert_info",
                    now_text=self._now_text(req),
                ),
            )
        if kind == "login_required":
            req.force_login = True
            req.uid, req.username, req.auth = 0, "", None
        if kind == "garbage":
            digest = hashlib.sha256(f"{self.seed}|{len(self.requests)}".encode()).digest()
            noise = hashlib.shake_256(digest).digest(4096)
            return SimResponse(200, tuple(self._base_headers(req, "text/html")), noise)
        if kind == "redirect_loop":
            return self._redirect(req, 302, self._self_url(req))
        if kind == "echo_cookie":
            echoed = render.dhtmlspecialchars(req.cookie_header)
            return self._message(req, f"{render.MSG_DEBUG_ECHO}Cookie: {echoed}")
        return None

    def _is_mobile(self, req: _Req) -> bool:
        return req.path.endswith("api/mobile/index.php")

    def _route(self, req: _Req) -> SimResponse:
        path, p = req.path, req.params
        if not path.endswith(("forum.php", "member.php", "home.php", "api/mobile/index.php")):
            return self._raw(
                404, render.nginx_error_page(404, "Not Found").encode(), "text/html", req
            )
        tainted = self._xss_check(req)
        if tainted is not None:
            return tainted
        if self._is_mobile(req):
            module = p.get("module", "")
            if module == "viewthread":
                return self._mobile_viewthread(req)
            if module == "check":
                return self._mobile_check(req)
            if module == "forumdisplay":
                return self._mobile_forumdisplay(req)
            return self._json(req, {"error": "module_not_exists"})
        if path.endswith("member.php"):
            if p.get("mod") == "logging" and p.get("action") == "login":
                if p.get("loginsubmit"):
                    return self._login_submit(req)
                return self._login_form(req)
            if p.get("mod") == "logging" and p.get("action") == "logout":
                return self._logout(req)
            return self._message(req, "未定义操作，请返回")
        if path.endswith("home.php"):
            if p.get("mod") == "space" and p.get("do") == "thread":
                return self._space_thread(req)
            return self._message(req, "未定义操作，请返回")
        mod = p.get("mod", "")
        if mod == "viewthread":
            return self._viewthread(req)
        if mod == "post" and p.get("action") == "reply":
            if p.get("replysubmit") and req.method == "POST":
                return self._reply_submit(req)
            return self._reply_form(req)
        if mod == "post" and p.get("action") == "edit":
            if p.get("editsubmit") and req.method == "POST":
                return self._edit_submit(req)
            return self._edit_form(req)
        if mod == "redirect" and p.get("goto") == "findpost":
            return self._findpost(req)
        if mod == "forumdisplay":
            return self._forumdisplay(req)
        if mod == "post" and p.get("action") == "newthread":
            if p.get("topicsubmit") and req.method == "POST":
                return self._newthread_submit(req)
            return self._newthread_form(req)
        if mod == "topicadmin":
            return self._topicadmin(req)
        return self._message(req, "未定义操作，请返回")

    def _xss_check(self, req: _Req) -> SimResponse | None:
        """``discuz_application::_xss_check``: wrong formhash, or quotes/brackets in the URI (or
        in a POST without formhash) -> 503 request_tainting."""
        formhash = req.params.get("formhash")
        if formhash is not None and formhash != self._viewer(req).formhash:
            if req.params.get("action") == "logout":
                return self._redirect(req, 302, "index.php")
            return self._system_error(req, render.MSG_REQUEST_TAINTING)
        split = urlsplit(req.url)
        uri = split.path + (f"?{split.query}" if split.query else "")
        if req.method == "GET":
            temp = uri
        elif not formhash:
            temp = uri + urlencode(req.form)
        else:
            temp = ""
        temp = unquote(unquote(temp)).upper()
        if any(bad in temp for bad in _TAINT):
            return self._system_error(req, render.MSG_REQUEST_TAINTING)
        return None

    # ------------------------------------------------------------------ building responses

    def _viewer(self, req: _Req) -> render.Viewer:
        return render.Viewer(
            uid=req.uid,
            username=req.username,
            formhash=self.formhash(req.saltkey, req.username, req.uid, now=req.now),
            admin=req.username in self.admins,
        )

    def _site(self) -> render.Site:
        return render.Site(self.base_url, self.charset, self.cookiepre, self.fid, self.forum_name)

    def _site_viewer(self, req: _Req) -> tuple[render.Site, render.Viewer]:
        return self._site(), self._viewer(req)

    def _now_text(self, req: _Req) -> str:
        offset = datetime.fromtimestamp(req.now, self.tz).utcoffset() or timedelta(0)
        hours = offset.total_seconds() / 3600
        label = f"GMT{hours:+g}" if hours else "GMT"
        return f"{label}, {render.php_date(req.now, self.tz, seconds=False)}"

    def _cookie(
        self, name: str, value: str, now: int, max_age: int, *, httponly: bool = False
    ) -> str:
        expires = render.http_date(now + max_age)
        tail = "; httponly" if httponly else ""
        return f"{name}={value}; expires={expires}; Max-Age={max_age}; path=/{tail}"

    def _base_headers(self, req: _Req, content_type: str) -> list[tuple[str, str]]:
        headers = [
            ("Server", "nginx/1.22.1"),
            ("Date", render.http_date(req.now)),
            ("Content-Type", content_type),
            ("X-Bansha-Simulator", "1"),
        ]
        headers.extend(("Set-Cookie", c) for c in req.cookies_out)
        return headers

    def _raw(self, status: int, body: bytes, ctype: str, req: _Req) -> SimResponse:
        """A body that is not Discuz's (nginx, a WAF): always UTF-8/ASCII."""
        return SimResponse(status, tuple(self._base_headers(req, f"{ctype}; charset=utf-8")), body)

    def _html(self, req: _Req, text: str, status: int = 200) -> SimResponse:
        body = text.encode(self._codec(), errors="xmlcharrefreplace")
        headers = self._base_headers(req, f"text/html; charset={self.charset}")
        return SimResponse(status, tuple(headers), body)

    def _xml(self, req: _Req, content: str) -> SimResponse:
        text = render.ajax_xml(content, self.charset)
        headers = self._base_headers(req, f"text/xml; charset={self.charset}")
        headers += [
            ("Expires", "-1"),
            ("Cache-Control", "no-store, private, post-check=0, pre-check=0, max-age=0"),
            ("Pragma", "no-cache"),
        ]
        return SimResponse(200, tuple(headers), text.encode(self._codec(), "xmlcharrefreplace"))

    def _json(self, req: _Req, obj: object) -> SimResponse:
        headers = self._base_headers(req, "application/json")
        return SimResponse(200, tuple(headers), render.php_json(obj).encode("ascii"))

    def _redirect(self, req: _Req, status: int, location: str) -> SimResponse:
        headers = self._base_headers(req, f"text/html; charset={self.charset}")
        headers.append(("Location", location))
        return SimResponse(status, tuple(headers), b"")

    def _message(
        self,
        req: _Req,
        message: str,
        *,
        alert: str = "alert_error",
        status: int = 200,
        login_form: bool = False,
    ) -> SimResponse:
        site, viewer = self._site_viewer(req)
        # showmessage() keeps the calling module's stylesheet and body class.
        if req.path.endswith("member.php"):
            css, bodyclass = "member", "pg_logging"
        elif req.params.get("mod") in ("viewthread", "redirect"):
            css, bodyclass = "forum_viewthread", "pg_viewthread"
        else:
            css, bodyclass = "forum_post", "pg_post"
        text = render.message_page(
            site,
            viewer,
            message=message,
            alert=alert,
            now_text=self._now_text(req),
            login_form=login_form,
            css=css,
            bodyclass=bodyclass,
        )
        return self._html(req, text, status)

    def _system_error(self, req: _Req, message: str) -> SimResponse:
        host = urlsplit(self.base_url).netloc
        when = datetime.fromtimestamp(req.now, self.tz).strftime("%Y-%m-%d %H:%M:%S %z")
        trace = hashlib.md5(f"{req.url}|{req.now}".encode()).hexdigest()
        text = render.system_error_page(host, message, when, trace)
        headers = self._base_headers(req, "text/html; charset=utf-8")
        headers.append(("Retry-After", "3600"))
        return SimResponse(503, tuple(headers), text.encode("utf-8"))

    # ------------------------------------------------------------------ numbering

    def _numbered(
        self, thread: _Thread, now: int, authorid: int | None, descending: bool
    ) -> list[_Numbered]:
        visible = sorted(thread.visible(now), key=lambda p: (p.position, p.pid))
        if authorid:
            kept = [p for p in visible if p.uid == authorid and not p.deleted(now)]
            rows = [_Numbered(p, i + 1, False) for i, p in enumerate(kept)]
        elif thread.disablepos_at is not None and thread.disablepos_at <= now:
            kept = [p for p in visible if not p.deleted(now)]
            rows = [_Numbered(p, i + 1, False) for i, p in enumerate(kept)]
        else:
            rows = [_Numbered(p, p.position, p.deleted(now)) for p in visible]
        if descending and rows:
            head = [r for r in rows if r.post.first]
            rows = head + [r for r in reversed(rows) if not r.post.first]
        return rows

    def _page_slice(
        self, rows: list[_Numbered], page_text: str, ppp: int
    ) -> tuple[int, int, list[_Numbered]]:
        total = max(1, math.ceil(len(rows) / ppp))
        try:
            page = int(page_text or 1)
        except ValueError:
            page = 1
        page = min(max(page, 1), total)
        return page, total, rows[(page - 1) * ppp : page * ppp]

    def _hidden_reply(self, thread: _Thread, post: _Post, req: _Req) -> bool:
        """回帖仅作者可见 hides this reply from this viewer (``$needhiddenreply`` of
        viewthread_node.htm: not the first post, and the viewer is neither the reply's author,
        the thread's author nor a moderator; a guest is none of them)."""
        if not thread.hidden_replies or post.first:
            return False
        sees = req.uid in (post.uid, thread.uid) or self.is_moderator(req.username)
        return not (req.uid and sees)

    def _hide_unlocked(self, thread: _Thread, post: _Post, req: _Req) -> bool:
        if not req.uid:
            return False
        if self.is_moderator(req.username) or req.uid == post.uid:
            return True
        return any(p.uid == req.uid for p in thread.visible(req.now) if not p.deleted(req.now))

    def _author_stats(self, now: int) -> tuple[Counter[int], Counter[int]]:
        threads: Counter[int] = Counter()
        replies: Counter[int] = Counter()
        for post in self._posts.values():
            if post.dateline <= now and not post.deleted(now):
                (threads if post.first else replies)[post.uid] += 1
        return threads, replies

    # ------------------------------------------------------------------ desktop viewthread

    def _viewthread(self, req: _Req) -> SimResponse:
        thread = self._visible_thread(req)
        if thread is None:
            return self._message(req, render.MSG_THREAD_NONEXISTENCE, status=404)
        if (self.login_required or req.force_login) and not req.uid:
            return self._message(
                req, render.MSG_VIEWPERM_LOGIN, alert="alert_info", login_form=True
            )
        if thread.redirect_at is not None and thread.redirect_at <= req.now:
            thread.redirect_at = None
            return self._redirect(req, 302, self._self_url(req))
        thread.views += 1
        authorid = _int(req.params.get("authorid"))
        descending = req.params.get("ordertype") == "1"
        rows = self._numbered(thread, req.now, authorid, descending)
        page, total, shown = self._page_slice(rows, req.params.get("page", ""), self.ppp)
        site, viewer = self._site_viewer(req)
        t_stats, r_stats = self._author_stats(req.now)
        posts: list[render.PostView] = []
        times: list[str] = []
        for row in shown:
            post = row.post
            html = ""
            hidden = not row.placeholder and self._hidden_reply(thread, post, req)
            if not row.placeholder and not post.blocked(req.now) and not hidden:
                ctx = render.RenderContext(
                    self.base_url,
                    thread.tid,
                    self.fid,
                    post.pid,
                    self._hide_unlocked(thread, post, req),
                    req.username,
                    smileyoff=post.smileyoff,
                )
                html = render.discuzcode(post.message_at(req.now), ctx)
            posts.append(
                render.PostView(
                    pid=post.pid,
                    tid=thread.tid,
                    number=row.number,
                    author=post.author,
                    uid=post.uid,
                    dateline=post.dateline,
                    first=post.first,
                    thread_author=post.uid == thread.uid,
                    message_html=html,
                    blocked=post.blocked(req.now),
                    deleted_placeholder=row.placeholder,
                    author_only=hidden,
                    author_only_note=(
                        thread.hidden_replies
                        and not post.first
                        and not hidden
                        and self.is_moderator(req.username)
                    ),
                    admin=post.author in self.admins,
                    threads=t_stats[post.uid],
                    replies=r_stats[post.uid],
                )
            )
            times.append(render.dgmdate_u(post.dateline, req.now, self.tz))
        mpurl = f"forum.php?mod=viewthread&tid={thread.tid}&amp;extra="
        if authorid:
            mpurl += f"&amp;authorid={authorid}"
        not_deleted = [p for p in thread.visible(req.now) if not p.deleted(req.now)]
        view = render.ThreadView(
            tid=thread.tid,
            subject=thread.subject,
            author=thread.author,
            uid=thread.uid,
            views=thread.views,
            allreplies=max(0, len(not_deleted) - 1),
            page=page,
            total_pages=total,
            posts=tuple(posts),
            authorid=authorid,
            pager=render.multi(len(rows), self.ppp, page, mpurl),
            mpurl=mpurl,
            closed=thread.closed(req.now),
            moderator=self.is_moderator(req.username),
        )
        text = render.viewthread_page(
            view,
            site=site,
            viewer=viewer,
            now_ts=req.now,
            now_text=self._now_text(req),
            time_html=times,
        )
        req.cookies_out.append(
            self._cookie(
                f"{self.cookiepre}lastact",
                quote(f"{req.now}\tforum.php\tviewthread"),
                req.now,
                86400,
            )
        )
        return self._html(req, text)

    def _self_url(self, req: _Req) -> str:
        """The absolute address of the request itself (a redirect to it)."""
        split = urlsplit(req.url)
        location = split.path + (f"?{split.query}" if split.query else "")
        if split.scheme and split.netloc:
            return f"{split.scheme}://{split.netloc}{location}"
        return self.base_url + location.lstrip("/")

    def _visible_thread(self, req: _Req) -> _Thread | None:
        """The thread ``tid`` as the viewer may see it: a thread waiting for a moderator only by
        its author (function_forum.php:458-459; forum_post.php:94 lets the author reply)."""
        tid = _int(req.params.get("tid"))
        thread = self._threads.get(tid or 0)
        if thread is None:
            waiting = self._pending_threads.get(tid or 0)
            thread = waiting if waiting is not None and req.uid == waiting.uid else None
        if thread is None or thread.dateline > req.now:
            return None
        return thread

    # ------------------------------------------------------------------ mobile API

    def _mobile_base(self, req: _Req) -> dict[str, Any]:
        admin = req.username in self.admins
        moderator = self.is_moderator(req.username)
        return {
            "cookiepre": self.cookiepre,
            "auth": unquote(req.auth) if req.auth else None,
            "saltkey": req.saltkey,
            "member_uid": str(req.uid),
            "member_username": req.username,
            "member_avatar": f"{self.base_url}uc_server/avatar.php?uid={req.uid}&size=small&ts=1",
            "groupid": "7" if not req.uid else ("1" if admin else "10"),
            "formhash": self._viewer(req).formhash,
            "ismoderator": "1" if moderator else "0",
            "readaccess": "1" if not req.uid else ("200" if admin else "10"),
            "notice": {"newpush": "0", "newpm": "0", "newprompt": "0", "newmypost": "0"},
        }

    def _mobile_thread(
        self, thread: _Thread, req: _Req, replies: int, *, restricted: bool = False
    ) -> dict[str, Any]:
        visible = [p for p in thread.visible(req.now) if not p.deleted(req.now)]
        last = max(visible, key=lambda p: (p.dateline, p.pid))
        maxposition = max(p.position for p in thread.visible(req.now))
        out: dict[str, Any] = {
            "tid": str(thread.tid),
            "fid": str(self.fid),
            "posttableid": "0",
            "typeid": "0",
            "sortid": "0",
            "readperm": "0",
            "price": "0",
            "author": thread.author,
            "authorid": str(thread.uid),
            "subject": thread.subject,
            "dateline": str(thread.dateline),
            "lastpost": render.php_date(last.dateline, self.tz, seconds=False),
            "lastposter": last.author,
            "views": str(thread.views),
            "replies": str(replies),
            "displayorder": str(thread.displayorder),
            "highlight": "0",
            "digest": "0",
            "rate": "0",
            "special": "0",
            "attachment": "0",
            "moderated": "1" if thread.closed_at is not None or thread.displayorder else "0",
            "closed": "1" if thread.closed(req.now) else "0",
            "stickreply": "0",
            "recommends": "0",
            "recommend_add": "0",
            "recommend_sub": "0",
            "heats": str(len({p.uid for p in visible})),
            "status": str(32 | (2 if thread.hidden_replies else 0)),
            "isgroup": "0",
            "favtimes": "0",
            "sharetimes": "0",
            "stamp": "-1",
            "icon": "-1",
            "pushedaid": "0",
            "cover": "0",
            "replycredit": "0",
            "relatebytag": "0",
            "maxposition": str(maxposition),
            "bgcolor": "",
            "comments": "0",
            "hidden": "0",
            "threadtable": "forum_thread",
            "threadtableid": "0",
            "posttable": "forum_post",
            "allreplies": str(max(0, len(visible) - 1)),
            "is_archived": "",
            "archiveid": "0",
            "subjectenc": quote(thread.subject, safe="-_.~"),
            "short_subject": thread.subject,
        }
        if not restricted:  # computed after the permission check, absent from a refusal
            out.update(
                {
                    "replycredit_rule": {"extcreditstype": "2"},
                    "recommendlevel": "0",
                    "heatlevel": "0",
                    "relay": "0",
                }
            )
        out["ordertype"] = None if restricted else "0"
        out["recommend"] = "0"
        return out

    def _mobile_tail(self, variables: dict[str, Any], ppp: int, *, restricted: bool) -> None:
        variables.update(
            {
                "allowpostcomment": ["1", "2"],
                "comments": None if restricted else [],
                "commentcount": None if restricted else [],
                "ppp": str(ppp),
                "setting_rewriterule": "",
                "setting_rewritestatus": "",
                "forum_threadpay": None if restricted else "",
                "cache_custominfo_postno": list(render.POSTNO),
                "forum": {"password": "0"},
            }
        )

    def _mobile_envelope(
        self, variables: dict[str, Any], message: dict[str, str] | None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {
            "Version": "4",
            "Charset": "GBK" if self.charset == "gbk" else "UTF-8",
            "Variables": variables,
        }
        if message is not None:
            out["Message"] = message
        return out

    def _mobile_viewthread(self, req: _Req) -> SimResponse:
        variables = self._mobile_base(req)
        thread = self._visible_thread(req)
        if thread is None:
            message = {
                "messageval": "thread_nonexistence",
                "messagestr": "mobile:thread_nonexistence",
            }
            return self._json(req, self._mobile_envelope(variables, message))
        ppp = _int(req.params.get("ppp")) or self.ppp
        if (self.login_required or req.force_login) and not req.uid:
            variables["thread"] = self._mobile_thread(thread, req, 0, restricted=True)
            variables["thread"]["replies"] = str(
                max(0, len([p for p in thread.visible(req.now) if not p.deleted(req.now)]) - 1)
            )
            variables["fid"] = str(self.fid)
            variables["postlist"] = []
            self._mobile_tail(variables, ppp, restricted=True)
            message = {
                "messageval": "viewperm_login_nopermission//1",
                "messagestr": "mobile:viewperm_login_nopermission",
            }
            return self._json(req, self._mobile_envelope(variables, message))
        thread.views += 1
        authorid = _int(req.params.get("authorid"))
        descending = req.params.get("ordertype") == "1"
        rows = self._numbered(thread, req.now, authorid, descending)
        _page, _total, shown = self._page_slice(rows, req.params.get("page", ""), ppp)
        postlist: list[dict[str, str]] = []
        for row in shown:
            if row.placeholder:
                continue
            post = row.post
            blocked = post.blocked(req.now)
            if blocked:
                message_html = "提示: <em>该帖被管理员或版主屏蔽</em>"
            elif self._hidden_reply(thread, post, req):
                message_html = "该帖仅作者可见"  # mobile_post_author_visible
            else:
                ctx = render.RenderContext(
                    self.base_url,
                    thread.tid,
                    self.fid,
                    post.pid,
                    self._hide_unlocked(thread, post, req),
                    req.username,
                    smileyoff=post.smileyoff,
                )
                message_html = render.mobile_discuzcode(post.message_at(req.now), ctx)
            admin = post.author in self.admins
            postlist.append(
                {
                    "pid": str(post.pid),
                    "tid": str(thread.tid),
                    "first": "1" if post.first else "0",
                    "author": post.author,
                    "authorid": str(post.uid),
                    "dateline": render.dgmdate_u(post.dateline, req.now, self.tz, mobile=True),
                    "message": message_html,
                    "anonymous": "0",
                    "attachment": "0",
                    "status": str((1 if blocked else 0) | (8 if post.mobile else 0)),
                    "replycredit": "0",
                    "position": str(post.position),
                    "username": post.author,
                    "adminid": "1" if admin else "0",
                    "groupid": "1" if admin else "10",
                    "memberstatus": "0",
                    "number": str(row.number),
                    "dbdateline": str(post.dateline),
                    "groupiconid": "admin" if admin else "1",
                }
            )
        variables["thread"] = self._mobile_thread(thread, req, max(0, len(rows) - 1))
        variables["fid"] = str(self.fid)
        variables["postlist"] = postlist
        self._mobile_tail(variables, ppp, restricted=False)
        return self._json(req, self._mobile_envelope(variables, None))

    def _mobile_check(self, req: _Req) -> SimResponse:
        posts = sum(
            1 for p in self._posts.values() if p.dateline <= req.now and not p.deleted(req.now)
        )
        return self._json(
            req,
            {
                "discuzversion": "X3.2",
                "truediscuzversion": "X3.5",
                "charset": self.charset,
                "version": "4",
                "pluginversion": "1.4.8",
                "regname": "register",
                "qqconnect": "0",
                "wsqqqconnect": "0",
                "wsqhideregister": "0",
                "sitename": render.BBNAME,
                "mysiteid": "",
                "ucenterurl": f"{self.base_url}uc_server",
                "defaultfid": "",
                "totalposts": posts,
                "totalmembers": len(self.users),
                "testcookie": None,
            },
        )

    # ------------------------------------------------------------------ login

    def _login_form(self, req: _Req) -> SimResponse:
        site, viewer = self._site_viewer(req)
        loginhash = "L" + hashlib.md5(f"{req.saltkey}|loginhash".encode()).hexdigest()[:4]
        return self._html(
            req, render.login_page(site, viewer, loginhash=loginhash, now_text=self._now_text(req))
        )

    def _login_submit(self, req: _Req) -> SimResponse:
        p = req.params
        inajax = bool(p.get("inajax"))
        handlekey = p.get("handlekey", "")
        if self.seccode_login:  # login_seccheck2: nobody gets past it without a human
            return self._login_fail(req, render.MSG_LOGIN_SECCHECK, {}, inajax, handlekey)
        field_ = p.get("loginfield", "username")
        name = p.get("username", "")
        if field_ == "uid" and name.isdigit():
            name = self.names_by_uid.get(int(name), "")
        left = self._loginperm.get(name, _LOGIN_TRIES)
        if left <= 0:
            return self._login_fail(req, render.MSG_LOGIN_STRIKE, {}, inajax, handlekey)
        uid = self.users.get(name)
        if uid is None or self.passwords.get(name) != p.get("password", ""):
            left -= 1
            self._loginperm[name] = left
            if left <= 0:
                return self._login_fail(req, render.MSG_LOGIN_STRIKE, {}, inajax, handlekey)
            message = render.MSG_LOGIN_INVALID.format(loginperm=left)
            return self._login_fail(req, message, {"loginperm": str(left)}, inajax, handlekey)
        self._loginperm.pop(name, None)
        auth = self._auth_value(req.saltkey, uid)
        req.cookies_out.append(
            self._cookie(
                f"{self.cookiepre}auth", quote(auth, safe=""), req.now, 2592000, httponly=True
            )
        )
        group = "管理员" if name in self.admins else "新手上路"
        message = render.MSG_LOGIN_SUCCEED.format(usergroup=group, username=name)
        req.uid, req.username, req.auth = uid, name, auth
        referer = p.get("referer") or f"{self.base_url}./"
        if inajax:
            values = {
                "username": name,
                "usergroup": group,
                "uid": str(uid),
                "groupid": "1" if name in self.admins else "10",
                "syn": "0",
            }
            return self._xml(req, render.ajax_succeed(handlekey, referer, message, values))
        return self._message(req, message, alert="alert_right")

    def _login_fail(
        self, req: _Req, message: str, values: dict[str, str], inajax: bool, handlekey: str
    ) -> SimResponse:
        if inajax:
            return self._xml(req, render.ajax_error(handlekey, message, values))
        return self._message(req, message)

    def _logout(self, req: _Req) -> SimResponse:
        req.cookies_out.append(
            f"{self.cookiepre}auth=deleted; expires=Thu, 01 Jan 1970 00:00:01 GMT; "
            "Max-Age=0; path=/"
        )
        req.uid, req.username, req.auth = 0, "", None
        return self._message(req, render.MSG_LOGOUT_SUCCEED, alert="alert_info")

    # ------------------------------------------------------------------ replies

    def _reply_form(self, req: _Req) -> SimResponse:
        thread = self._visible_thread(req)
        if thread is None:
            return self._message(req, render.MSG_THREAD_NONEXISTENCE, status=404)
        if thread.closed(req.now) and not self.is_moderator(req.username):
            return self._message(req, render.MSG_THREAD_CLOSED)  # forum_post.php, before login
        if not req.uid:
            return self._message(
                req, render.MSG_REPLYPERM_LOGIN, alert="alert_info", login_form=True
            )
        trim = ""
        quoted = _int(req.params.get("repquote"))
        if quoted and quoted in self._posts and self._posts[quoted].tid == thread.tid:
            trim = self.quote_for(quoted, at=datetime.fromtimestamp(req.now, self.tz))
        site, viewer = self._site_viewer(req)
        text = render.reply_form_page(
            site,
            viewer,
            tid=thread.tid,
            subject=thread.subject,
            noticetrimstr=trim,
            now_ts=req.now,
            now_text=self._now_text(req),
        )
        return self._html(req, text)

    def _reply_submit(self, req: _Req) -> SimResponse:
        p = req.params
        inajax = bool(p.get("inajax"))
        handlekey = p.get("handlekey", "")
        fail = self._refuser(req)
        thread = self._visible_thread(req)
        if thread is None:
            return fail(render.MSG_THREAD_NONEXISTENCE)
        if thread.closed(req.now) and not self.is_moderator(req.username):
            return fail(render.MSG_THREAD_CLOSED)  # forum_post.php: moderators may still reply
        if not req.uid:
            return fail(render.MSG_REPLYPERM_LOGIN)
        if self.seccode_post:  # submit_seccode_invalid: a captcha bansha never solves
            return fail(render.MSG_SECCODE_INVALID)
        message = p.get("message", "").replace("\r\n", "\n")
        problem = self._body_problem(message, req.username)
        if problem is not None:
            return fail(problem)
        last = self._last_post_at.get(req.uid)
        if last is not None and req.now - last < self.floodctrl_s:
            text = render.MSG_FLOOD.format(floodctrl=self.floodctrl_s)
            return fail(text, {"floodctrl": str(self.floodctrl_s)})
        self._last_post_at[req.uid] = req.now
        trim = p.get("noticetrimstr", "").replace("\r\n", "\n")
        stored = f"{trim}\n\n{message}" if trim else message
        smileyoff = not _php_empty(p.get("smileyoff"))
        if self.moderate_replies and req.username not in self.admins:
            pid = self._new_pid()
            self._pending[pid] = _Post(
                pid,
                thread.tid,
                req.username,
                req.uid,
                req.now,
                0,
                False,
                [_Revision(req.now, stored)],
                smileyoff=smileyoff,
            )
            values = {"fid": str(self.fid), "tid": str(thread.tid), "pid": str(pid)}
            target = f"forum.php?mod=forumdisplay&fid={self.fid}"
            if inajax:
                return self._xml(
                    req,
                    render.ajax_succeed(handlekey, target, render.MSG_REPLY_MOD_SUCCEED, values),
                )
            return self._message(req, render.MSG_REPLY_MOD_SUCCEED, alert="alert_right")
        pid = self.add_post(
            thread.tid,
            req.username,
            stored,
            datetime.fromtimestamp(req.now, self.tz),
            smileyoff=smileyoff,
        )
        rows = self._numbered(thread, req.now, None, False)
        number = next((r.number for r in rows if r.post.pid == pid), len(rows))
        page = max(1, math.ceil(number / self.ppp))
        url = f"forum.php?mod=viewthread&tid={thread.tid}&pid={pid}&page={page}&extra=#pid{pid}"
        if inajax:
            values = {
                "fid": str(self.fid),
                "tid": str(thread.tid),
                "pid": str(pid),
                "from": "",
                "sechash": "",
            }
            return self._xml(
                req, render.ajax_succeed(handlekey, url, render.MSG_REPLY_SUCCEED, values)
            )
        return self._redirect(req, 301, url)

    def _refuser(self, req: _Req) -> Callable[..., SimResponse]:
        """``showmessage()`` of a refusal to a form POST: ``errorhandle_<key>`` in the ajax
        envelope when ``inajax``, else the message page."""
        inajax = bool(req.params.get("inajax"))
        handlekey = req.params.get("handlekey", "")

        def fail(message: str, values: dict[str, str] | None = None) -> SimResponse:
            if inajax:
                return self._xml(req, render.ajax_error(handlekey, message, values or {}))
            return self._message(req, message)

        return fail

    def _body_problem(self, message: str, username: str) -> str | None:
        """``checkpost()``'s size limits (quotes not counted) and the [hide] permission."""
        counted = render.QUOTE_RE.sub("", message).strip()
        size = len(counted.encode(self._codec(), errors="replace"))
        if size < _MIN_POST_BYTES:
            return render.MSG_TOO_SHORT.format(minpostsize=_MIN_POST_BYTES)
        if size > _MAX_POST_BYTES:
            return render.MSG_TOO_LONG.format(maxpostsize=_MAX_POST_BYTES)
        if "[hide" in message.lower() and username not in self.admins:
            return render.MSG_HIDE_NOT_ALLOWED
        return None

    def _edit_target(self, req: _Req) -> tuple[_Thread | None, _Post | None, str | None]:
        thread = self._visible_thread(req)
        if thread is None:
            return None, None, render.MSG_THREAD_NONEXISTENCE
        if thread.closed(req.now) and not self.is_moderator(req.username):
            return thread, None, render.MSG_THREAD_CLOSED  # forum_post.php: edits too
        if not req.uid:
            return thread, None, render.MSG_NOT_LOGGEDIN
        post = self._posts.get(_int(req.params.get("pid")) or 0)
        if (
            post is None
            or post.tid != thread.tid
            or post.dateline > req.now
            or post.deleted(req.now)
        ):
            return thread, None, render.MSG_POST_NONEXISTENCE
        if post.uid != req.uid and req.username not in self.admins:
            return thread, None, render.MSG_EDIT_NOPERMISSION
        return thread, post, None

    def _edit_form(self, req: _Req) -> SimResponse:
        thread, post, problem = self._edit_target(req)
        if problem is not None or thread is None or post is None:
            status = 404 if thread is None else 200
            return self._message(req, problem or render.MSG_POST_NONEXISTENCE, status=status)
        site, viewer = self._site_viewer(req)
        text = render.edit_form_page(
            site,
            viewer,
            tid=thread.tid,
            pid=post.pid,
            subject=thread.subject,
            message=post.message_at(req.now),
            now_ts=req.now,
            now_text=self._now_text(req),
        )
        return self._html(req, text)

    def _edit_submit(self, req: _Req) -> SimResponse:
        """``post_editpost.php``: the author (or an admin) replaces the message; more than 60 s
        after posting Discuz prepends the ``本帖最后由 … 编辑`` note. No flood control."""
        p = req.params
        inajax = bool(p.get("inajax"))
        handlekey = p.get("handlekey", "")
        fail = self._refuser(req)
        thread, post, problem = self._edit_target(req)
        if problem is not None or thread is None or post is None:
            return fail(problem or render.MSG_POST_NONEXISTENCE)
        if self.seccode_post:
            return fail(render.MSG_SECCODE_INVALID)
        message = p.get("message", "").replace("\r\n", "\n")
        problem = self._body_problem(message, req.username)
        if problem is not None:
            return fail(problem)
        self.edit_post(
            post.pid, message, datetime.fromtimestamp(req.now, self.tz), editor=req.username
        )
        post.smileyoff = not _php_empty(p.get("smileyoff"))
        rows = self._numbered(thread, req.now, None, False)
        number = next((r.number for r in rows if r.post.pid == post.pid), 1)
        page = max(1, math.ceil(number / self.ppp))
        url = f"forum.php?mod=viewthread&tid={thread.tid}&page={page}&extra=#pid{post.pid}"
        if inajax:
            values = {"fid": str(self.fid), "tid": str(thread.tid), "pid": str(post.pid)}
            return self._xml(
                req, render.ajax_succeed(handlekey, url, render.MSG_EDIT_SUCCEED, values)
            )
        return self._redirect(req, 301, url)

    def _findpost(self, req: _Req) -> SimResponse:
        pid = _int(req.params.get("pid"))
        post = self._posts.get(pid or 0)
        if post is None or post.dateline > req.now or post.deleted(req.now):
            return self._message(req, render.MSG_THREAD_NONEXISTENCE, status=404)
        thread = self._threads.get(post.tid) or self._pending_threads.get(post.tid)
        if thread is None or (post.tid not in self._threads and req.uid != thread.uid):
            return self._message(req, render.MSG_THREAD_NONEXISTENCE, status=404)
        rows = self._numbered(thread, req.now, None, False)
        index = next((i for i, r in enumerate(rows) if r.post.pid == post.pid), 0)
        page = index // self.ppp + 1
        return self._redirect(
            req, 301, f"forum.php?mod=viewthread&tid={post.tid}&page={page}#pid{post.pid}"
        )

    # ------------------------------------------------------------------ forum listing

    def _listed(self, now: int, orderby: str) -> list[_Thread]:
        """The threads forumdisplay lists: sticky first, then by ``orderby``, newest first."""
        shown = [t for t in self._threads.values() if t.dateline <= now]

        def key(t: _Thread) -> tuple[int, int, int]:
            if orderby == "dateline":
                value = t.dateline
            elif orderby == "replies":
                value = self._replies(t, now)
            elif orderby == "views":
                value = t.views
            else:  # lastpost, the forum's default order
                value = self._last_post(t, now).dateline
            return (t.displayorder, value, t.tid)

        return sorted(shown, key=key, reverse=True)

    def _replies(self, thread: _Thread, now: int) -> int:
        return max(0, len([p for p in thread.visible(now) if not p.deleted(now)]) - 1)

    def _last_post(self, thread: _Thread, now: int) -> _Post:
        shown = [p for p in thread.visible(now) if not p.deleted(now)] or thread.posts[:1]
        return max(shown, key=lambda p: (p.dateline, p.pid))

    def _listing_request(self, req: _Req) -> tuple[str, str | None]:
        """``orderby`` and the refusal (None: the listing may be shown)."""
        if _int(req.params.get("fid")) != self.fid:
            return "", render.MSG_FORUM_NONEXISTENCE
        if (self.login_required or req.force_login) and not req.uid:
            return "", render.MSG_VIEWPERM_LOGIN
        orderby = req.params.get("orderby", "")
        if orderby not in ("lastpost", "dateline", "replies", "views"):
            orderby = "lastpost"
        return orderby, None

    def _listing_page(self, req: _Req, count: int) -> int:
        page = _int(req.params.get("page")) or 1
        # forum_forumdisplay.php: a page past the end shows page 1 (not the last one)
        return 1 if page < 1 or math.ceil(count / self.tpp) < page else page

    def _forumdisplay(self, req: _Req) -> SimResponse:
        """``forum.php?mod=forumdisplay&fid=F[&filter=author&orderby=dateline][&page=N]``."""
        orderby, refusal = self._listing_request(req)
        if refusal == render.MSG_VIEWPERM_LOGIN:
            return self._message(req, refusal, alert="alert_info", login_form=True)
        if refusal is not None:
            return self._message(req, refusal)
        threads = self._listed(req.now, orderby)
        page = self._listing_page(req, len(threads))
        shown = threads[(page - 1) * self.tpp : page * self.tpp]
        rows = []
        for t in shown:
            last = self._last_post(t, req.now)
            replies = self._replies(t, req.now)
            local = datetime.fromtimestamp(req.now, self.tz)
            today = int(local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp())
            date_only = render.php_date(t.dateline, self.tz).split(" ")[0]
            rows.append(
                render.ThreadRow(
                    tid=t.tid,
                    subject=t.subject,
                    author=t.author,
                    authorid=t.uid,
                    dateline_html=render.dgmdate_u(t.dateline, req.now, self.tz, full=date_only),
                    istoday=t.dateline > today,
                    replies=replies,
                    views=max(t.views, replies),
                    lastposter=last.author,
                    lastpost_html=self._lastpost_html(last, req.now),
                    closed=t.closed(req.now),
                    displayorder=t.displayorder,
                    new=not t.closed(req.now) and not t.displayorder,
                    pages=max(1, math.ceil((replies + 1) / self.ppp)),
                )
            )
        mpurl = f"forum.php?mod=forumdisplay&fid={self.fid}"
        if req.params.get("orderby") == orderby and orderby != "lastpost":
            mpurl += f"&filter={req.params.get('filter', 'author')}&orderby={orderby}"
        site, viewer = self._site_viewer(req)
        text = render.forumdisplay_page(
            site,
            viewer,
            rows=rows,
            page_no=page,
            threadcount=len(threads),
            pager=render.multi(len(threads), self.tpp, page, mpurl),
            moderator=self.is_moderator(req.username),
            now_ts=req.now,
            now_text=self._now_text(req),
            waiting=len(self._waiting_of(req.uid, req.now)) if req.uid else 0,
        )
        return self._html(req, text)

    def _lastpost_html(self, last: _Post, now: int) -> str:
        """A listing's 最后发表 time (``dgmdate($lastpost, 'u')``)."""
        full = render.php_date(last.dateline, self.tz, seconds=False)
        return render.dgmdate_u(last.dateline, now, self.tz, full=full)

    def _waiting_of(self, uid: int, now: int) -> list[_Thread]:
        """``uid``'s threads waiting for a moderator, newest started first."""
        mine = [t for t in self._pending_threads.values() if t.uid == uid and t.dateline <= now]
        return sorted(mine, key=lambda t: (t.dateline, t.tid), reverse=True)

    def _space_thread(self, req: _Req) -> SimResponse:
        """``home.php?mod=space&uid=U&do=thread&view=me&type=thread[&filter=F][&fid=F][&page=N]``
        (space_thread.php): U's threads, ``dateline DESC``, 20 a page; another member's list
        leaves out the threads not shown in the forum (``displayorder < 0``)."""
        if self.space_closed:
            return self._message(req, "抱歉，家园功能尚未开启")
        p = req.params
        space_uid = _int(p.get("uid")) or req.uid
        if not space_uid:
            return self._message(
                req, render.MSG_VIEWPERM_LOGIN, alert="alert_info", login_form=True
            )
        if space_uid not in self.names_by_uid:
            return self._message(req, "抱歉，您指定的用户空间不存在")
        key = p.get("filter", "")
        key = key if key in ("recyclebin", "ignored", "save", "aduit", "close", "common") else ""
        shown = [t for t in self._threads.values() if t.uid == space_uid and t.dateline <= req.now]
        waiting = self._waiting_of(space_uid, req.now) if space_uid == req.uid else []
        if key == "aduit":
            threads = waiting
        elif key == "common":
            threads = [t for t in shown if not t.closed(req.now)]
        elif key == "close":
            threads = [t for t in shown if t.closed(req.now)]
        elif key == "":
            threads = [*shown, *waiting]
        else:
            threads = []
        fid = _int(p.get("fid"))
        if fid and fid != self.fid:
            threads = []
        threads.sort(key=lambda t: (t.dateline, t.tid), reverse=True)
        perpage = 20
        page = max(1, _int(p.get("page")) or 1)
        part = threads[(page - 1) * perpage : page * perpage]
        rows = [
            render.SpaceThreadRow(
                t.tid,
                t.subject,
                self.fid,
                self.forum_name,
                replies := self._replies(t, req.now),
                max(t.views, replies),
                (last := self._last_post(t, req.now)).author,
                self._lastpost_html(last, req.now),
                t.displayorder,
            )
            for t in part
        ]
        theurl = (
            f"home.php?mod=space&uid={space_uid}&do=thread&view=me&type=thread&from="
            f"&filter={key}" + (f"&fid={fid}" if fid else "")
        )
        site, viewer = self._site_viewer(req)
        text = render.space_thread_page(
            site,
            viewer,
            rows=rows,
            filter_key=key,
            page_no=page,
            full_page=len(part) == perpage,
            theurl=html.escape(theurl),
            now_text=self._now_text(req),
        )
        return self._html(req, text)

    def _mobile_forumdisplay(self, req: _Req) -> SimResponse:
        """``api/mobile/index.php?version=4&module=forumdisplay&fid=F[&page=N]``
        (``sub_threadlist.php``: no ``closed`` field in the list)."""
        variables = self._mobile_base(req)
        orderby, refusal = self._listing_request(req)
        if refusal is not None:
            key = "forum_nonexistence" if refusal == render.MSG_FORUM_NONEXISTENCE else None
            message = {
                "messageval": key or "viewperm_login_nopermission//1",
                "messagestr": f"mobile:{key or 'viewperm_login_nopermission'}",
            }
            return self._json(req, self._mobile_envelope(variables, message))
        threads = self._listed(req.now, orderby)
        page = self._listing_page(req, len(threads))
        shown = threads[(page - 1) * self.tpp : page * self.tpp]
        posts = sum(len([p for p in t.visible(req.now) if not p.deleted(req.now)]) for t in threads)
        listed = []
        for t in shown:
            last = self._last_post(t, req.now)
            listed.append(
                {
                    "tid": str(t.tid),
                    "typeid": "0",
                    "readperm": "0",
                    "price": "0",
                    "author": t.author,
                    "authorid": str(t.uid),
                    "subject": t.subject,
                    "dateline": render.dgmdate_u(t.dateline, req.now, self.tz, mobile=True),
                    "lastpost": render.dgmdate_u(last.dateline, req.now, self.tz, mobile=True),
                    "lastposter": last.author,
                    "views": str(max(t.views, self._replies(t, req.now))),
                    "replies": str(self._replies(t, req.now)),
                    "displayorder": str(t.displayorder),
                    "digest": "0",
                    "special": "0",
                    "attachment": "0",
                    "recommend_add": "0",
                    "replycredit": "0",
                    "dbdateline": str(t.dateline),
                    "dblastpost": str(last.dateline),
                    "rushreply": "0",
                    "recommend": "0",
                }
            )
        variables.update(
            {
                "forum": {
                    "fid": str(self.fid),
                    "picstyle": "0",
                    "fup": "1",
                    "name": self.forum_name,
                    "threads": str(len(threads)),
                    "posts": str(posts),
                    "autoclose": "0",
                    "threadcount": str(len(threads)),
                    "password": "0",
                },
                "group": {"groupid": "7" if not req.uid else "10", "grouptitle": "新手上路"},
                "forum_threadlist": listed,
                "groupiconid": {str(t.uid): "1" for t in shown},
                "sublist": [],
                "tpp": str(self.tpp),
                "page": str(page),
                "reward_unit": "金钱",
            }
        )
        return self._json(req, self._mobile_envelope(variables, None))

    # ------------------------------------------------------------------ new threads

    def _newthread_refusal(self, req: _Req) -> str | None:
        """post_newthread.php's permission checks, in its order."""
        if _int(req.params.get("fid")) != self.fid:
            return render.MSG_FORUM_NONEXISTENCE
        if not req.uid:
            return render.MSG_POSTPERM_LOGIN
        if self.newthread_users is not None and req.username not in self.newthread_users:
            return render.MSG_NEWTHREAD_NOPERMISSION
        return None

    def _newthread_form(self, req: _Req) -> SimResponse:
        refusal = self._newthread_refusal(req)
        if refusal is not None:
            return self._message(
                req, refusal, alert="alert_info", login_form=refusal == render.MSG_POSTPERM_LOGIN
            )
        site, viewer = self._site_viewer(req)
        text = render.newthread_form_page(
            site, viewer, now_ts=req.now, now_text=self._now_text(req)
        )
        return self._html(req, text)

    def _newthread_submit(self, req: _Req) -> SimResponse:
        p = req.params
        inajax = bool(p.get("inajax"))
        handlekey = p.get("handlekey", "")
        fail = self._refuser(req)
        refusal = self._newthread_refusal(req)
        if refusal is not None:
            return fail(refusal)
        if self.seccode_post:  # submitcheck() with the posting captcha on
            return fail(render.MSG_SECCODE_INVALID)
        subject = p.get("subject", "").strip()
        message = p.get("message", "").replace("\r\n", "\n")
        if not subject or not message.strip():
            return fail(render.MSG_SM_ISNULL)
        # dstrlen(): characters on a UTF-8 forum, bytes on a GBK one; maxsubjectsize 80
        length = len(subject) if self.charset == "utf-8" else len(subject.encode("gbk", "replace"))
        if length > _MAX_SUBJECT:
            return fail(render.MSG_SUBJECT_TOOLONG)
        problem = self._body_problem(message, req.username)
        if problem is not None:
            return fail(problem)
        last = self._last_post_at.get(req.uid)
        if last is not None and req.now - last < self.floodctrl_s:
            text = render.MSG_FLOOD.format(floodctrl=self.floodctrl_s)
            return fail(text, {"floodctrl": str(self.floodctrl_s)})
        if self.threads_per_hour:
            started = [
                t
                for t in [*self._threads.values(), *self._pending_threads.values()]
                if t.uid == req.uid and req.now - 3600 < t.dateline <= req.now
            ]
            if len(started) >= self.threads_per_hour:
                limit = str(self.threads_per_hour)
                return fail(render.MSG_THREADS_PER_HOUR.format(threads_per_hour=limit))
        self._last_post_at[req.uid] = req.now
        tid = self._new_tid()
        at = datetime.fromtimestamp(req.now, self.tz)
        hidden = not _php_empty(p.get("hiddenreplies"))  # post_newthread.php: no permission
        pid = self.add_thread(tid, subject, req.username, message, at, hidden_replies=hidden)
        self._posts[pid].smileyoff = not _php_empty(p.get("smileyoff"))
        values = {
            "fid": str(self.fid),
            "tid": str(tid),
            "pid": str(pid),
            "coverimg": "",
            "sechash": "",
        }
        if self.moderate_threads and not self.is_moderator(req.username):
            thread = self._threads.pop(tid)
            thread.displayorder = -2
            self._pending_threads[tid] = thread
            self._posts.pop(pid)
            target = f"forum.php?mod=forumdisplay&fid={self.fid}"
            if inajax:
                return self._xml(
                    req,
                    render.ajax_succeed(
                        handlekey, target, render.MSG_NEWTHREAD_MOD_SUCCEED, values
                    ),
                )
            return self._message(req, render.MSG_NEWTHREAD_MOD_SUCCEED, alert="alert_right")
        url = f"forum.php?mod=viewthread&tid={tid}&extra="
        if inajax:
            done = render.MSG_NEWTHREAD_SUCCEED.format(fid=self.fid)
            return self._xml(req, render.ajax_succeed(handlekey, url, done, values))
        return self._redirect(req, 301, url)  # post_newthread_succeed is a quick forward

    # ------------------------------------------------------------------ moderation

    def _topicadmin(self, req: _Req) -> SimResponse:
        """``forum.php?mod=topicadmin&action=moderate&optgroup=4&modsubmit=yes`` POST
        ``fid, moderate[]=T, operations[]=close|open``. Always answered in the ajax form
        (``$_G['inajax'] = 1``, handle key ``mods``)."""
        handlekey = "mods"

        def fail(message: str) -> SimResponse:
            return self._xml(req, render.ajax_error(handlekey, message, {}))

        p = req.params
        moderator = _int(p.get("fid")) == self.fid and self.is_moderator(req.username)
        if not req.uid or not moderator:
            return fail(render.MSG_ADMIN_NOPERMISSION)
        if p.get("action") != "moderate":
            return fail("未定义操作，请返回")
        if req.method != "POST" or not p.get("modsubmit") or not p.get("formhash"):
            return fail(render.MSG_ADMIN_MODERATE_INVALID)
        tids = [_int(v) for k, v in req.pairs if k in ("moderate[]", "moderate")]
        if p.get("tid"):
            tids = [_int(p.get("tid"))]
        operations = [v for k, v in req.pairs if k in ("operations[]", "operations")]
        allowed = {"delete", "highlight", "open", "close", "stick", "digest", "bump", "down"}
        if not operations or any(op not in allowed for op in operations):
            return fail(render.MSG_ADMIN_MODERATE_INVALID)
        threads = [
            self._threads[tid]
            for tid in tids
            if tid in self._threads and self._threads[tid].dateline <= req.now
        ]
        if not threads:
            return fail(render.MSG_ADMIN_MODERATE_INVALID)
        for op in operations:
            if op not in ("close", "open"):
                return fail(render.MSG_ADMIN_MODERATE_INVALID)  # not simulated
            if req.username in self.cannot_close:
                return fail(
                    render.MSG_NO_PRIVILEGE_CLOSE if op == "close" else render.MSG_NO_PRIVILEGE_OPEN
                )
        at = datetime.fromtimestamp(req.now, self.tz)
        for op in operations:
            for thread in threads:
                if op == "close":
                    self.close_thread(thread.tid, at=at, by=req.username)
                else:
                    self.open_thread(thread.tid, at=at, by=req.username)
        redirect = p.get("redirect", "")
        if not redirect:  # showmessage without a url: the success comes through errorhandle_
            return fail(render.MSG_ADMIN_SUCCEED)
        return self._xml(
            req, render.ajax_succeed(handlekey, redirect, render.MSG_ADMIN_SUCCEED, {})
        )

    # ------------------------------------------------------------------ httpx

    def transport(
        self, *, after: Callable[[SimRequest, SimResponse], None] | None = None
    ) -> httpx.MockTransport:
        """An ``httpx.MockTransport`` answering from this forum. "reset" raises
        ``httpx.ReadError`` (``httpx.ConnectError`` with ``connect=True``); "slow" raises
        ``httpx.ReadTimeout`` when its delay exceeds the request's read timeout (and answers at
        once otherwise); "truncate" sends half the body under the full Content-Length and then
        fails like a closed connection (``httpx.RemoteProtocolError``), or with ``clean=True``
        just a short body.

        ``after(request, response)`` runs once the forum has handled a request and before the
        answer reaches the client: whatever it raises is what the client sees (a test raises
        there to crash bansha between the forum storing a reply and bansha recording it)."""

        def handler(request: httpx.Request) -> httpx.Response:
            resp = self.handle(
                request.method, str(request.url), dict(request.headers), request.read()
            )
            if after is not None:
                after(self.requests[-1], resp)
            if resp.fault == "refused":
                raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
            if resp.fault == "reset":
                raise httpx.ReadError("[Errno 104] Connection reset by peer", request=request)
            timeout = request.extensions.get("timeout") or {}
            read_timeout = timeout.get("read")
            if resp.delay and read_timeout is not None and resp.delay > read_timeout:
                raise httpx.ReadTimeout("The read operation timed out", request=request)
            headers = [(k, v) for k, v in resp.headers if k.lower() != "content-length"]
            if resp.fault == "truncate_clean":
                return httpx.Response(
                    resp.status, headers=headers, content=resp.body[: len(resp.body) // 2]
                )
            if resp.fault == "truncate":
                headers.append(("Content-Length", str(len(resp.body))))
                stream = _TruncatedStream(resp.body, request)
                return httpx.Response(resp.status, headers=headers, stream=stream)
            return httpx.Response(resp.status, headers=headers, content=resp.body)

        return httpx.MockTransport(handler)

    # ------------------------------------------------------------------ seeding from TOML

    @classmethod
    def from_script(
        cls,
        game_toml_path: str | Path,
        script_toml_path: str | Path,
        clock: Callable[[], datetime],
        **overrides: Any,
    ) -> ForumSim:
        """Build the forum of a game file (players, director, days' threads) and a post script
        (``[[posts]]``); see ``config/games/demo_posts.toml`` for the script format."""
        return _ScriptLoader(Path(game_toml_path), Path(script_toml_path)).build(clock, overrides)


def script_now(script_toml_path: str | Path) -> datetime | None:
    """``[sim] now`` of a post script: the moment the demo's forum is seen at."""
    with open(script_toml_path, "rb") as fh:
        data = tomllib.load(fh)
    now = data.get("sim", {}).get("now")
    if now is not None and not isinstance(now, datetime):
        raise ValueError(f"{script_toml_path}: sim.now 必须是带时区的日期时间")
    return now


# --------------------------------------------------------------------------- script loader

_POST_KEYS = {
    "thread",
    "day",
    "author",
    "at",
    "text",
    "ref",
    "quote",
    "edit",
    "delete",
    "block",
    "delete_at",
    "block_at",
    "renumber",
    "mobile",
}
_THREAD_KEYS = {"day", "thread", "subject", "text", "at", "author"}
_SIM_KEYS = {
    "now",
    "ppp",
    "charset",
    "floodctrl_s",
    "login_required",
    "seed",
    "password",
    "fid",
    "forum_name",
    "admins",
    "seccode_post",
    "seccode_login",
    "moderate_replies",
    "moderators",
    "moderate_threads",
    "tpp",
}


class _ScriptLoader:
    def __init__(self, game_path: Path, script_path: Path) -> None:
        self.game_path = game_path
        self.script_path = script_path
        with open(game_path, "rb") as fh:
            self.game = tomllib.load(fh)
        with open(script_path, "rb") as fh:
            self.script = tomllib.load(fh)

    def _err(self, where: str, problem: str) -> ValueError:
        return ValueError(f"{self.script_path}: {where}：{problem}")

    def _users(self) -> tuple[dict[str, int], list[str]]:
        users: dict[str, int] = {}
        for i, player in enumerate(self.game.get("players", [])):
            try:
                users[str(player["name"])] = int(player["uid"])
            except (KeyError, TypeError, ValueError):
                raise ValueError(f"{self.game_path}: players[{i}] 缺少 name 或 uid") from None
        director = self.game.get("director", {})
        names = [str(n) for n in director.get("names", [])]
        uids = list(director.get("uids", []))
        extra = {str(k): int(v) for k, v in self.script.get("users", {}).items()}
        for i, name in enumerate(names):
            if i < len(uids):
                users[name] = int(uids[i])
            elif name in extra:
                users[name] = extra[name]
        users.update(extra)
        next_uid = max(users.values(), default=0) + 1
        for name in names:
            if name not in users:
                users[name] = next_uid
                next_uid += 1
        return users, names

    def build(self, clock: Callable[[], datetime], overrides: Mapping[str, Any]) -> ForumSim:
        sim_cfg = dict(self.script.get("sim", {}))
        unknown = set(sim_cfg) - _SIM_KEYS
        if unknown:
            raise self._err("sim", f"未知的键（拼写错误？）：{'、'.join(sorted(unknown))}")
        users, directors = self._users()
        kwargs: dict[str, Any] = {
            "users": users,
            "tz": self.game.get("game", {}).get("timezone", "Asia/Shanghai"),
            "clock": clock,
        }
        for key in (
            "ppp",
            "charset",
            "floodctrl_s",
            "login_required",
            "seed",
            "fid",
            "forum_name",
            "seccode_post",
            "seccode_login",
            "moderate_replies",
            "moderators",
            "moderate_threads",
            "tpp",
        ):
            if key in sim_cfg:
                kwargs[key] = sim_cfg[key]
        if "password" in sim_cfg:
            kwargs["default_password"] = str(sim_cfg["password"])
        kwargs["admins"] = sim_cfg.get("admins", [])
        base_url = self.game.get("forum", {}).get("base_url")
        if base_url:
            kwargs["base_url"] = base_url
        kwargs.update(overrides)
        sim = ForumSim(**kwargs)
        roles = self._create_threads(sim, directors)
        self._create_posts(sim, roles)
        return sim

    def _create_threads(self, sim: ForumSim, directors: list[str]) -> dict[tuple[int, str], int]:
        title = str(self.game.get("game", {}).get("title", ""))
        overrides: dict[tuple[int, str], dict[str, Any]] = {}
        for i, entry in enumerate(self.script.get("threads", [])):
            unknown = set(entry) - _THREAD_KEYS
            if unknown:
                raise self._err(
                    f"threads[{i}]", f"未知的键（拼写错误？）：{'、'.join(sorted(unknown))}"
                )
            overrides[(int(entry["day"]), str(entry["thread"]))] = entry
        roles: dict[tuple[int, str], int] = {}
        director = directors[0] if directors else next(iter(sim.users))
        for day in self.game.get("days", []):
            n = int(day["day"])
            opens = day["opens"]
            closes = day["closes"]
            for role, zh in _ROLE_ZH.items():
                if role not in day:
                    continue
                tid = int(day[role])
                entry = overrides.get((n, role), {})
                subject = entry.get("subject", f"{title}第{n}天{zh}帖")
                text = entry.get("text", _default_opening(n, role, zh, closes))
                at = entry.get("at", opens - timedelta(minutes=5))
                sim.add_thread(tid, subject, entry.get("author", director), text, at)
                roles[(n, role)] = tid
        return roles

    def _create_posts(self, sim: ForumSim, roles: Mapping[tuple[int, str], int]) -> None:
        entries = list(enumerate(self.script.get("posts", [])))
        for i, entry in entries:
            unknown = set(entry) - _POST_KEYS
            if unknown:
                raise self._err(
                    f"posts[{i}]", f"未知的键（拼写错误？）：{'、'.join(sorted(unknown))}"
                )
            for key in ("thread", "day", "author", "at", "text"):
                if key not in entry:
                    raise self._err(f"posts[{i}].{key}", "缺少必填项")
            if not isinstance(entry["at"], datetime) or entry["at"].tzinfo is None:
                raise self._err(
                    f"posts[{i}].at", "必须是带时区的日期时间（例如 2026-12-02T10:00:00+08:00）"
                )
            if (int(entry["day"]), str(entry["thread"])) not in roles:
                raise self._err(
                    f"posts[{i}].thread", f"游戏文件第 {entry['day']} 天没有 {entry['thread']} 帖"
                )
            if str(entry["author"]) not in sim.users:
                raise self._err(f"posts[{i}].author", f"未知的论坛账号“{entry['author']}”")
        by_ref: dict[str, int] = {}
        entries.sort(key=lambda item: (item[1]["at"], item[0]))
        for i, entry in entries:
            tid = roles[(int(entry["day"]), str(entry["thread"]))]
            quote_pid = None
            if "quote" in entry:
                ref = str(entry["quote"])
                if ref not in by_ref:
                    raise self._err(f"posts[{i}].quote", f"引用的 ref “{ref}” 不存在或时间更晚")
                quote_pid = by_ref[ref]
            pid = sim.add_post(
                tid,
                str(entry["author"]),
                str(entry["text"]),
                entry["at"],
                quote_pid=quote_pid,
                mobile=bool(entry.get("mobile", False)),
            )
            if "ref" in entry:
                ref = str(entry["ref"])
                if ref in by_ref:
                    raise self._err(f"posts[{i}].ref", f"ref “{ref}” 重复")
                by_ref[ref] = pid
            edit = entry.get("edit")
            if edit is not None:
                if not isinstance(edit, dict) or "at" not in edit or "text" not in edit:
                    raise self._err(f"posts[{i}].edit", "应为 {{at = …, text = …}}")
                prefix = sim.quote_for(quote_pid, at=entry["at"]) + "\n\n" if quote_pid else ""
                sim.edit_post(pid, prefix + str(edit["text"]), edit["at"], edit.get("editor"))
            if entry.get("block"):
                sim.block_post(pid, at=entry.get("block_at"))
            if entry.get("delete"):
                sim.delete_post(
                    pid, at=entry.get("delete_at"), renumber=entry.get("renumber", True)
                )


def _default_opening(day: int, role: str, zh: str, closes: datetime) -> str:
    deadline = f"{closes.month}月{closes.day}日 {closes:%H:%M}"
    if role == "vote":
        return (
            f"【第{day}天投票帖】\n请存活玩家在本帖投票，格式如下（一人一票）：\n投票对象：XXX\n\n"
            f"改票格式（改票须回复原投票楼层）：\n改票对象：XXX\n\n截止时间：{deadline}，截止后投票无效。"
        )
    if role == "progress":
        return f"【第{day}天进程帖】\n申请加速或延时请在本帖回复“申请加速”或“申请延时”。"
    return f"【第{day}天{zh}帖】\n请大家在本帖自由发言，发言数会统计。截止时间：{deadline}。"


# --------------------------------------------------------------- request parsing, truncated replies


def _int(text: str | None) -> int | None:
    if text is None or text == "":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _php_empty(value: str | None) -> bool:
    """PHP ``empty()`` of a request value: missing, "" and "0" are empty."""
    return value is None or value in ("", "0")


def _parse_cookies(header: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in header.split(";"):
        if "=" in part:
            name, value = part.split("=", 1)
            out[name.strip()] = unquote(value.strip())
    return out


class _TruncatedStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    """Half a body, then the connection "closes" before Content-Length was reached."""

    def __init__(self, body: bytes, request: httpx.Request) -> None:
        self._half = body[: len(body) // 2]
        self._full = len(body)
        self._request = request

    def _error(self) -> httpx.RemoteProtocolError:
        return httpx.RemoteProtocolError(
            "peer closed connection without sending complete message body: "
            f"received {len(self._half)} bytes, expected {self._full}",
            request=self._request,
        )

    def __iter__(self) -> Iterator[bytes]:
        yield self._half
        raise self._error()

    async def __aiter__(self) -> Any:
        yield self._half
        raise self._error()


# --------------------------------------------------------------------------- real HTTP server


class SimServer:
    """The forum on a real socket (127.0.0.1 only, a free port), for ``bansha demo`` and the
    end-to-end test. Sets ``sim.base_url`` to its own address while it runs.

    "reset" closes the socket abruptly (RST); "slow" really sleeps; "truncate" declares the
    full Content-Length, sends half and closes.
    """

    def __init__(self, sim: ForumSim, *, host: str = "127.0.0.1", port: int = 0) -> None:
        if host not in ("127.0.0.1", "localhost"):
            raise ValueError("模拟论坛只监听本机地址 127.0.0.1")
        self.sim = sim
        self.host = "127.0.0.1"
        self.port = port
        self.base_url = ""
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._old_base = sim.base_url

    def start(self) -> SimServer:
        server = _QuietServer((self.host, self.port), _make_handler(self))
        server.daemon_threads = True
        self._server = server
        self.port = server.server_address[1]
        self.base_url = f"http://{self.host}:{self.port}/"
        self._old_base = self.sim.base_url
        self.sim.base_url = self.base_url
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.sim.base_url = self._old_base

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """Broken pipes after a fault are expected; keep stderr clean."""


def _make_handler(server: SimServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        #: headers and body go out in two writes; with Nagle's algorithm on, the second waits
        #: for the client's delayed ACK (about 40 ms on Linux), a wait no real forum adds
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Silence the default access log."""

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            url = server.base_url + self.path.lstrip("/")
            headers = dict(self.headers.items())
            resp = server.sim.handle(self.command, url, headers, body)
            if resp.fault in ("reset", "refused"):
                self.close_connection = True
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.connection.close()
                return
            if resp.delay:
                time.sleep(resp.delay)
            payload = resp.body
            declared = len(payload)
            if resp.fault == "truncate_clean":
                payload = payload[: len(payload) // 2]
                declared = len(payload)
            elif resp.fault == "truncate":
                payload = payload[: len(payload) // 2]
            self.send_response_only(resp.status)
            for name, value in resp.headers:
                if name.lower() not in ("content-length", "transfer-encoding", "connection"):
                    self.send_header(name, value)
            self.send_header("Content-Length", str(declared))
            if resp.fault == "truncate":
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)
            self.wfile.flush()

        do_GET = _serve
        do_POST = _serve
        do_HEAD = _serve

    return Handler
