"""Posting approved drafts to the forum, exactly once.

:class:`Poster` is the director's session on the forum: it logs in (the session cookie from the
environment variable the game file names, or a desktop login with the username and password
from the variables it names; docs/discuz.md §4.2), reads the target thread first (Discuz sets the
``st_p`` cookie its captcha rules look for, and the page carries a fresh formhash), then sends
the desktop ajax fast reply or the edit form, percent-encoded in the forum's charset, and reads
the answer with :mod:`parsers.reply`. The cookie jar lives in memory only; no secret is ever
logged, stored or put in a message.

What the forum may answer, and what happens:

* 两次发表间隔少于 N 秒 (flood control): nothing was stored; wait N+1 s and send again, a bounded
  number of times;
* 503 非法字符 (a stale formhash): nothing was stored; read the thread again and send once more;
* 验证码 / 验证问答 (a captcha): nothing was stored; :class:`CaptchaRequired` tells the director,
  in plain Chinese, to post the approved text by hand and record the pid — bansha never tries
  to solve a captcha;
* 回复需要审核: the forum kept the reply but shows it only after a moderator approves it;
* a network error or an answer we cannot read after sending: the forum may or may not have the
  post (:class:`UncertainSend`); it is looked for before anything is sent again;
* 新主题需要审核 (a section that holds new threads for a moderator): the forum kept the thread
  but does not list it; the director's own list of waiting threads shows it
  (:meth:`Poster.waiting_threads`), and the listing's banner counts them.

Publishing drafts exactly once over this session is :mod:`pipeline.drafts.publish`.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, TypeVar

import httpx

from parsers.forumdisplay import ForumPage, SpaceThreads, parse_forumdisplay, parse_space_threads
from parsers.records import PageError, PageErrorKind, Post, ThreadPage
from parsers.reply import (
    ForumAnswer,
    LoginOutcome,
    ReplyOutcome,
    decode_answer,
    fingerprint_words,
    parse_login_answer,
    parse_login_form,
    parse_member,
    parse_post_answer,
    post_fingerprint,
)
from parsers.viewthread import parse_viewthread
from pipeline.discuz.client import (
    DiscuzClient,
    Fetched,
    ForumUnavailable,
    RetryPolicy,
    SessionJar,
    describe_error,
)
from pipeline.game.gamefile import Game

log = logging.getLogger(__name__)

_P = TypeVar("_P")  # a page read as the director (a thread page, the forum listing)

#: a page number past the end: Discuz answers with the last page (docs/discuz.md §1.8)
LAST_PAGE = 99999
#: how far before an attempt's start (on the forum's clock) a post may be and still be it
SEARCH_MARGIN = timedelta(minutes=10)
#: outcomes after which the post may exist in the thread: look before sending again
UNSURE_OUTCOMES = frozenset({"captcha", "pending_moderation"})

STATE_ZH = {
    "pending": "待批准",
    "approved": "已批准",
    "posted": "已发出",
    "rejected": "已驳回",
    "superseded": "已被新草稿取代",
}


# --------------------------------------------------------------------------- errors


class PostError(RuntimeError):
    """A posting problem, as one Chinese sentence for the director. Never carries a secret."""


class LoginFailed(PostError):
    """No usable session: the cookie is expired, the password is wrong, or login is locked."""


class NotLoggedIn(LoginFailed):
    """The forum answered a page with its login prompt (尚未登录)."""


class WrongAccount(PostError):
    """The session belongs to an account that is not the game's director."""


class CaptchaRequired(PostError):
    """The forum demands a captcha (to log in or to post). A human has to take over."""

    def __init__(self, message: str, *, during: str, forum_said: str = "") -> None:
        super().__init__(message)
        self.during = during  # "login" | "post"
        self.forum_said = forum_said  # the forum's own words, when it gave any


class PostRefused(PostError):
    """The forum refused the post: nothing was stored.

    ``transient``: worth trying again later (flood control that did not clear, the hourly
    limit, a formhash that stayed stale); otherwise the draft must change first.
    """

    def __init__(self, message: str, *, transient: bool, answer: ForumAnswer | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.answer = answer


class UncertainSend(PostError):
    """The POST may have reached the forum, but its answer did not reach us."""


class NoModeratorRights(PostError):
    """The director's account may not moderate the forum (close a thread there)."""


class NotApproved(PostError):
    """The draft is not (or no longer) approved: it is never sent."""


class SendInFlight(PostError):
    """Another sender started an attempt for the same draft and has not finished it."""


class SenderBusy(PostError):
    """Another process (a cycle, another ``bansha publish``) holds the game's lock."""


class ManualPostMismatch(PostError):
    """The pid (or a new thread's tid) a director gave for a hand-posted draft is not that
    draft's post (thread).

    ``which``: ``thread`` (not in the draft's thread; no such thread, or another game's),
    ``author`` (not by a director account), ``text`` (not the draft's text) or ``subject``
    (a new thread whose subject is not the draft's).
    """

    def __init__(self, message: str, *, which: str) -> None:
        super().__init__(message)
        self.which = which


# --------------------------------------------------------------------------- credentials


@dataclass(frozen=True)
class Credentials:
    """Where the director's session comes from. The values never appear in a repr."""

    cookie: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    cookie_env: str = "BANSHA_COOKIE"
    username_env: str | None = None
    password_env: str | None = None

    @classmethod
    def from_env(cls, game: Game, env: Mapping[str, str]) -> Credentials:
        forum = game.forum
        cookie = (env.get(forum.cookie_env) or "").strip() or None
        username = (env.get(forum.username_env) or "").strip() if forum.username_env else ""
        password = (env.get(forum.password_env) or "").rstrip("\r\n") if forum.password_env else ""
        return cls(
            cookie=cookie,
            username=username or None,
            password=password or None,
            cookie_env=forum.cookie_env,
            username_env=forum.username_env,
            password_env=forum.password_env,
        )

    @property
    def can_login(self) -> bool:
        return bool(self.username and self.password)

    def secrets(self) -> list[str]:
        return [s for s in (self.password, self.cookie) if s]

    def where(self) -> str:
        """Which environment variables a director should look at (names only)."""
        names = [self.cookie_env]
        if self.username_env and self.password_env:
            names.append(f"{self.username_env} / {self.password_env}")
        return "、".join(f"环境变量 {n}" for n in names)


# --------------------------------------------------------------------------- the poster


@dataclass(frozen=True, slots=True)
class Sent:
    """What the forum did with one reply or edit."""

    outcome: ReplyOutcome  # POSTED or PENDING_MODERATION
    tid: int
    pid: int | None
    message: str
    flood_waits: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class NewThread:
    """A thread the forum created for :meth:`Poster.new_thread`."""

    tid: int
    url: str  # forum.php?mod=viewthread&tid=T (absolute)
    moderated: bool = False  # 新主题需要审核: kept by the forum, not shown until approved


@dataclass(frozen=True, slots=True)
class ThreadRef:
    """A thread as the forum listing shows it (:meth:`Poster.find_thread`)."""

    tid: int
    subject: str
    author: str
    authorid: int | None
    closed: bool
    waiting: bool = False  # kept by the forum for a moderator (新主题需要审核), not listed yet
    #: when it was started, as the listing shows it (to the day for an older thread); None
    #: when the listing does not say (not part of what a ref is: the same thread shows its
    #: start to the minute while recent, to the day later)
    created_at: datetime | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class WaitingThreads:
    """The director's own threads of one forum that wait for a moderator (新主题需要审核), as
    :meth:`Poster.waiting_threads` saw them."""

    banner: int  # 您有 N 个主题正等待审核中 over the listing (0: no banner)
    threads: tuple[ThreadRef, ...] | None  # from the list of waiting threads; None: not read
    listed: frozenset[int] = frozenset()  # the tids the forum listing showed (find_thread)
    problem: str = ""  # why the list of waiting threads could not be read

    def find(self, subject: str) -> ThreadRef | None:
        """The newest waiting thread with exactly ``subject`` (as :meth:`Poster.find_thread`
        compares subjects)."""
        mine = [t for t in self.threads or () if same_subject(t.subject, subject)]
        return max(mine, key=lambda t: t.tid) if mine else None


def same_subject(a: str, b: str) -> bool:
    """Two subjects as a reader sees them: runs of spaces count as one."""
    return " ".join(a.split()) == " ".join(b.split())


def _post_codec(charset: str | None) -> str:
    name = (charset or "utf-8").strip().lower()
    if name in ("gbk", "gb2312", "gb18030", "cp936"):
        return "gbk"
    if name.startswith("big5"):
        return "big5"
    return "utf-8"


class Poster:
    """The director's session on one forum. Build it once per run; it logs in on first use."""

    def __init__(
        self,
        http: httpx.Client,
        *,
        base_url: str,
        credentials: Credentials,
        tz: tzinfo,
        encoding: str = "auto",
        min_interval_s: float = 1.0,
        director_uids: Collection[int] = (),
        director_names: Collection[str] = (),
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        flood_tries: int = 3,
        max_flood_wait_s: float = 120.0,
        search_pages: int = 10,
        policy: RetryPolicy | None = None,
        author_only_subjects: Collection[str] = (),
    ) -> None:
        self.credentials = credentials
        self.tz = tz
        self.jar = SessionJar(credentials.cookie)
        self.client = DiscuzClient(
            http,
            base_url=base_url,
            min_interval_s=min_interval_s,
            policy=policy or RetryPolicy(max_attempts=3, max_total_s=60.0),
            sleep=sleep,
            monotonic=monotonic,
            now=now,
            jar=self.jar,
            secrets=credentials.secrets(),  # the password too never reaches an error
        )
        self.director_uids = frozenset(director_uids)
        self.director_names = frozenset(director_names)
        self._sleep = sleep
        self._now = now
        self.flood_tries = flood_tries
        self.max_flood_wait_s = max_flood_wait_s
        self.search_pages = search_pages
        #: the subjects of the threads opened 回帖仅作者可见 (:meth:`new_thread`)
        self.author_only_subjects = frozenset(" ".join(s.split()) for s in author_only_subjects)
        self._charset: str | None = None if encoding == "auto" else encoding
        self._formhash: str | None = None
        self._skew = timedelta(0)  # forum clock minus ours
        self.uid: int | None = None
        self.username: str | None = None
        self._password_login_done = False
        self.flood_waits: list[float] = []  # every flood-control wait, in seconds
        # what find_thread saw of a forum: the banner's count, the tids listed
        self._seen_listing: dict[int, tuple[int, frozenset[int]]] = {}

    @classmethod
    def for_game(
        cls, game: Game, http: httpx.Client, *, env: Mapping[str, str] | None = None, **kw: Any
    ) -> Poster:
        """A poster for the game file's forum and director, credentials from ``env``."""
        from pipeline.game.threads import author_only_subjects

        forum = game.forum
        kw.setdefault("min_interval_s", forum.min_interval_s)
        kw.setdefault("author_only_subjects", author_only_subjects(game))
        return cls(
            http,
            base_url=str(forum.base_url),
            credentials=Credentials.from_env(game, os.environ if env is None else env),
            tz=game.game.tz,
            encoding=forum.encoding,
            director_uids=game.director.uids,
            director_names=game.director.names,
            **kw,
        )

    # ----------------------------------------------------------- the forum's address, links, errors

    @property
    def base_url(self) -> str:
        return self.client.base_url

    @property
    def charset(self) -> str | None:
        return self._charset

    def post_url(self, tid: int, pid: int) -> str:
        """The link that always finds a post, whatever page it ends up on."""
        return self.client.url(
            "forum.php", {"mod": "redirect", "goto": "findpost", "ptid": tid, "pid": pid}
        )

    def scrub(self, text: str) -> str:
        """``text`` with every secret (password, cookie values) replaced by ***."""
        for secret in [*self.credentials.secrets(), *self.jar.secrets()]:
            if secret and len(secret) >= 3:
                text = text.replace(secret, "***")
        return text

    def _fail(self, cls: type[PostError], message: str, **kw: Any) -> PostError:
        return cls(self.scrub(message), **kw)

    def _learn(self, fetched: Fetched, text_head: str | None = None) -> None:
        if self._charset is None:
            self._charset = fetched.charset or _meta_charset(fetched.body)
        self._skew = fetched.server_time - fetched.fetched_at
        head = text_head if text_head is not None else decode_answer(fetched.body[:20000])
        member = parse_member(head)
        self.uid = member.uid or None
        self.username = member.username if member.uid else None

    def _get(self, url: str, check: Callable[[Fetched], _P]) -> tuple[Fetched, _P]:
        try:
            return self.client.fetch(url, check)
        except ForumUnavailable as exc:
            raise self._fail(PostError, str(exc)) from exc

    # ------------------------------------------------------------------ reading threads

    def thread_url(self, tid: int, page: int = LAST_PAGE, *, authorid: int | None = None) -> str:
        params: dict[str, str | int] = {"mod": "viewthread", "tid": tid, "page": page}
        if authorid:
            params["authorid"] = authorid
        params["ordertype"] = 2
        return self.client.url("forum.php", params)

    def fetch_thread(
        self, tid: int, page: int = LAST_PAGE, *, authorid: int | None = None
    ) -> ThreadPage:
        """One desktop page of a thread (the last one by default), read as this session.

        Raises :class:`NotLoggedIn` when the forum shows its login prompt instead, and
        :class:`PostError` for any other page that is not the thread or an unreachable forum.
        """
        url = self.thread_url(tid, page, authorid=authorid)
        try:
            fetched, parsed = self._get(url, lambda f: self._parse_thread(tid, f))
        except PageError as exc:
            if exc.kind is PageErrorKind.LOGIN_REQUIRED:
                raise self._fail(NotLoggedIn, f"论坛要求登录才能查看帖子 {tid}") from exc
            raise self._fail(PostError, f"读取帖子 {tid} 失败：{exc.message_zh}") from exc
        self._learn(fetched)
        if parsed.formhash:
            self._formhash = parsed.formhash
        return parsed

    def _parse_thread(self, tid: int, fetched: Fetched) -> ThreadPage:
        encoding = self._charset or fetched.charset
        return parse_viewthread(
            fetched.body, tid=tid, tz=self.tz, now=fetched.server_time, encoding=encoding
        )

    def session(self, tid: int) -> ThreadPage:
        """Make sure we are logged in as the director, and read ``tid``'s last page.

        Reading the thread before posting sets Discuz's ``st_p`` cookie (its captcha rules ask
        for it) and refreshes the formhash. The cookie is tried first; a username and password
        are used when there is no cookie, or it no longer logs in.
        """
        return self._logged_in(lambda: self.fetch_thread(tid))

    def _logged_in(self, read: Callable[[], _P]) -> _P:
        """``read()`` (a page that carries a formhash) as the director: logs in first when the
        page says we are a guest, then checks the account (:meth:`session`)."""
        page: _P | None
        try:
            page = read()
        except NotLoggedIn:
            page = None
        if page is None or not self.uid:
            if not self.credentials.can_login or self._password_login_done:
                what = (
                    "cookie 已失效或没有设置"
                    if self.credentials.cookie is None
                    else "cookie 已失效"
                )
                raise self._fail(
                    LoginFailed,
                    f"没有登录论坛（{what}）：请把导演账号的登录 cookie 放进环境变量 "
                    f"{self.credentials.cookie_env}，或在游戏文件 [forum] 中用 username_env / "
                    "password_env 指定存放用户名和密码的环境变量",
                )
            self.login()
            page = read()
            if not self.uid:
                raise self._fail(LoginFailed, "登录后论坛仍把我们当作游客，无法发帖")
        self._check_account()
        return page

    def _check_account(self) -> None:
        if self.director_uids and self.uid not in self.director_uids:
            who = f"「{self.username}」" if self.username else ""
            raise self._fail(
                WrongAccount,
                f"登录的论坛账号{who}（uid={self.uid}）不是游戏文件 [director] 中的导演账号，"
                f"为免以别人的名义发帖，没有发送；请检查 {self.credentials.where()}",
            )
        if (
            not self.director_uids
            and self.director_names
            and self.username
            and self.username not in self.director_names
        ):
            raise self._fail(
                WrongAccount,
                f"登录的论坛账号「{self.username}」不是游戏文件 [director] 中的导演账号，"
                f"为免以别人的名义发帖，没有发送；请检查 {self.credentials.where()}",
            )

    # ------------------------------------------------------------------ login

    def login(self) -> None:
        """Desktop login with the username and password (docs/discuz.md §4.2). Raises
        :class:`LoginFailed` or :class:`CaptchaRequired`; never retries a refused password."""
        creds = self.credentials
        if not creds.can_login:
            raise self._fail(
                LoginFailed, f"没有可用的用户名和密码（{creds.where()}），无法登录论坛"
            )
        self._password_login_done = True
        form_url = self.client.url("member.php", {"mod": "logging", "action": "login"})

        def check(fetched: Fetched) -> Any:
            text = decode_answer(fetched.body, self._charset or fetched.charset)
            form = parse_login_form(text)
            if form is None:
                raise PageError(PageErrorKind.MALFORMED, "登录页面上没有登录表单")
            return text, form

        fetched, (text, form) = self._get(form_url, check)
        self._learn(fetched, text)
        params: dict[str, str | int] = {
            "mod": "logging",
            "action": "login",
            "loginsubmit": "yes",
        }
        if form.loginhash:
            params["loginhash"] = form.loginhash
        params["inajax"] = 1
        fields = {
            "formhash": form.formhash,
            "referer": self.base_url,
            "loginfield": "username",
            "username": creds.username or "",
            "password": creds.password or "",
            "questionid": "0",
            "answer": "",
            "cookietime": "2592000",
        }
        log.info("用用户名登录论坛：%s", creds.username)
        try:
            answer_raw = self.client.post_form(
                self.client.url("member.php", params),
                fields,
                encoding=_post_codec(self._charset),
                referer=form_url,
            )
        except UnicodeEncodeError as exc:
            raise self._fail(
                LoginFailed, f"用户名无法用论坛的编码（{self._charset}）表示，无法登录"
            ) from exc
        except httpx.TransportError as exc:
            raise self._fail(LoginFailed, f"登录时网络出错（{describe_error(exc)}）") from exc
        if self.jar.get_suffix("_auth"):
            return
        answer = parse_login_answer(
            answer_raw.status, answer_raw.body, charset=answer_raw.charset or self._charset
        )
        who = f"账号「{creds.username}」（{creds.where()}）"
        if answer.outcome is LoginOutcome.CAPTCHA:
            raise self._fail(
                CaptchaRequired,
                f"论坛要求输入验证码才能登录（论坛提示：{answer.message}）。"
                "bansha 不会尝试识别验证码：请在浏览器里登录导演账号，"
                f"把浏览器的 cookie 放进环境变量 {creds.cookie_env}，再运行一次",
                during="login",
                forum_said=self.scrub(answer.message),
            )
        if answer.outcome is LoginOutcome.LOCKED:
            raise self._fail(
                LoginFailed,
                f"论坛拒绝登录：{answer.message}。bansha 不再重试；{who}",
            )
        if answer.outcome is LoginOutcome.INVALID:
            raise self._fail(
                LoginFailed, f"用户名或密码不对，登录失败（论坛提示：{answer.message}）；{who}"
            )
        raise self._fail(LoginFailed, f"登录失败（论坛提示：{answer.message}）；{who}")

    # ------------------------------------------------------------------ sending

    def check_encodable(self, body: str) -> None:
        """Raise :class:`PostRefused` when the forum's charset cannot carry ``body`` (an emoji
        on a GBK forum): better to say so than to post question marks."""
        codec = _post_codec(self._charset)
        bad: list[str] = []
        for ch in body:
            if ch not in bad:
                try:
                    ch.encode(codec)
                except UnicodeEncodeError:
                    bad.append(ch)
        if bad:
            shown = "、".join(f"「{c}」" for c in bad[:10])
            raise PostRefused(
                f"草稿中有论坛编码（{codec.upper()}）无法表示的字符：{shown}；"
                "请修改草稿（删去或换成别的字）后重新批准",
                transient=False,
            )

    def reply(self, tid: int, body: str, *, guard: Callable[[], None] | None = None) -> Sent:
        """Reply to ``tid`` with ``body`` (BBCode). Call :meth:`session` first.

        ``guard`` runs right before every POST (the first and each retry) and raises to stop:
        the caller re-checks that the draft is still approved.
        """
        params = {
            "mod": "post",
            "action": "reply",
            "tid": tid,
            "extra": "",
            "replysubmit": "yes",
            "infloat": "yes",
            "handlekey": "fastpost",
            "inajax": 1,
        }

        def fields() -> dict[str, str]:
            return {
                "formhash": self._formhash or "",
                "message": body,
                "posttime": str(int(self._now().timestamp())),
                "usesig": "1",
                "subject": "",
                "smileyoff": "1",  # names like ":)" stay text, as the draft shows them
            }

        return self._submit(tid, None, self.client.url("forum.php", params), fields, guard)

    def edit(
        self, tid: int, pid: int, body: str, *, guard: Callable[[], None] | None = None
    ) -> Sent:
        """Replace post ``pid`` of ``tid`` (the director's own, e.g. the 电梯 floor 2)."""
        params = {
            "mod": "post",
            "action": "edit",
            "extra": "",
            "editsubmit": "yes",
            "infloat": "yes",
            "handlekey": "editpost",
            "inajax": 1,
        }

        def fields() -> dict[str, str]:
            return {
                "formhash": self._formhash or "",
                "posttime": str(int(self._now().timestamp())),
                "delattachop": "0",
                "wysiwyg": "0",
                "tid": str(tid),
                "pid": str(pid),
                "page": "1",
                "subject": "",
                "message": body,
                "usesig": "1",
                "smileyoff": "1",
            }

        return self._submit(tid, pid, self.client.url("forum.php", params), fields, guard)

    def _submit(
        self,
        tid: int,
        pid: int | None,
        url: str,
        fields: Callable[[], dict[str, str]],
        guard: Callable[[], None] | None,
    ) -> Sent:
        self.check_encodable(fields()["message"])
        answer, waits = self._send(
            url,
            fields,
            guard,
            referer=self.thread_url(tid),
            refresh=lambda: self.fetch_thread(tid),
            relogin=lambda: self.session(tid),
            what="这份回复",
        )
        return Sent(answer.outcome, tid, answer.pid or pid, answer.message, waits)

    def _send(
        self,
        url: str,
        fields: Callable[[], dict[str, str]],
        guard: Callable[[], None] | None,
        *,
        referer: str,
        refresh: Callable[[], object],
        relogin: Callable[[], object],
        what: str,
        check: Callable[[ForumAnswer], ForumAnswer] | None = None,
    ) -> tuple[ForumAnswer, tuple[float, ...]]:
        """POST ``fields()`` to ``url`` until the forum stored it (POSTED or
        PENDING_MODERATION: that answer and the flood waits) or refused it (raises).

        ``guard`` runs right before every POST; ``refresh`` re-reads the page the formhash
        comes from, ``relogin`` logs in again; ``what`` names the write in messages
        (这份回复); ``check`` may re-read an answer (or raise) before it is acted on.
        """
        codec = _post_codec(self._charset)
        waits: list[float] = []
        refreshed = relogged = False
        while True:
            if guard is not None:
                guard()
            try:
                raw = self.client.post_form(url, fields(), encoding=codec, referer=referer)
            except httpx.TransportError as exc:
                raise self._fail(
                    UncertainSend,
                    f"发送时网络中断（{describe_error(exc)}），论坛可能已经收到{what}",
                ) from exc
            answer = parse_post_answer(
                raw.status,
                raw.body,
                location=raw.headers.get("location"),
                charset=raw.charset or self._charset,
            )
            if check is not None:
                answer = check(answer)
            outcome = answer.outcome
            said = f"论坛提示：{answer.message}" if answer.message else "论坛没有说明"
            if outcome in (ReplyOutcome.POSTED, ReplyOutcome.PENDING_MODERATION):
                return answer, tuple(waits)
            if outcome is ReplyOutcome.FLOOD:
                if len(waits) >= self.flood_tries:
                    raise self._fail(
                        PostRefused,
                        f"论坛的发帖间隔限制等了 {len(waits)} 次仍未解除（{said}），这次没有发出",
                        transient=True,
                        answer=answer,
                    )
                wait = min(float(answer.wait_s or 15), self.max_flood_wait_s) + 1.0
                log.warning("论坛发帖间隔限制（%s），等待 %.0f 秒后重发", answer.message, wait)
                self._sleep(wait)
                waits.append(wait)
                self.flood_waits.append(wait)
                continue
            if outcome is ReplyOutcome.BAD_FORMHASH and not refreshed:
                refreshed = True
                log.warning("formhash 已过期（%s），重新读取页面后再发一次", answer.message)
                refresh()
                continue
            if outcome is ReplyOutcome.LOGIN_REQUIRED and not relogged:
                relogged = True
                self.uid = None
                relogin()
                continue
            if outcome is ReplyOutcome.CAPTCHA:
                raise self._fail(
                    CaptchaRequired,
                    f"论坛要求填写验证码才能发帖（{said}）。bansha 不会尝试识别验证码："
                    "请把已批准的草稿手动发到论坛，然后用 bansha publish record 登记它的 pid",
                    during="post",
                    forum_said=self.scrub(answer.message),
                )
            if outcome in (ReplyOutcome.SERVER_ERROR, ReplyOutcome.UNKNOWN):
                raise self._fail(UncertainSend, f"发送后论坛的回答无法确认是否成功（{said}）")
            if outcome is ReplyOutcome.LOGIN_REQUIRED:
                raise self._fail(LoginFailed, f"论坛说我们没有登录（{said}）")
            transient = outcome in (ReplyOutcome.HOURLY_LIMIT, ReplyOutcome.BAD_FORMHASH)
            raise self._fail(PostRefused, f"论坛拒绝了{what}（{said}）", transient=transient)

    # ------------------------------------------------------------------ new threads

    def forum_url(self, fid: int, page: int = 1, *, by_dateline: bool = False) -> str:
        """The forum listing (``by_dateline``: newest started first, sticky threads on top)."""
        params: dict[str, str | int] = {"mod": "forumdisplay", "fid": fid}
        if by_dateline:
            params.update({"filter": "author", "orderby": "dateline"})
        if page > 1:
            params["page"] = page
        return self.client.url("forum.php", params)

    def fetch_forum(self, fid: int, page: int = 1, *, by_dateline: bool = False) -> ForumPage:
        """One page of forum ``fid``'s thread listing, read as this session (it carries a fresh
        formhash). Raises :class:`NotLoggedIn` for the login prompt, :class:`PostError` for
        any other page that is not the listing."""
        url = self.forum_url(fid, page, by_dateline=by_dateline)

        def parse(fetched: Fetched) -> ForumPage:
            return parse_forumdisplay(
                fetched.body,
                tz=self.tz,
                now=fetched.server_time,
                encoding=self._charset or fetched.charset,
            )

        try:
            fetched, listing = self._get(url, parse)
        except PageError as exc:
            if exc.kind is PageErrorKind.LOGIN_REQUIRED:
                raise self._fail(NotLoggedIn, f"论坛要求登录才能查看版块 {fid}") from exc
            raise self._fail(PostError, f"读取版块 {fid} 的主题列表失败：{exc.message_zh}") from exc
        self._learn(fetched)
        if listing.formhash:
            self._formhash = listing.formhash
        return listing

    def new_thread(
        self,
        fid: int,
        subject: str,
        body: str,
        *,
        guard: Callable[[], None] | None = None,
        hidden_replies: bool | None = None,
    ) -> NewThread:
        """Start a thread in forum ``fid`` (``mod=post&action=newthread``, the ajax form of the
        forum's 快速发帖). Like :meth:`reply`: ``guard`` runs right before every POST; raises
        :class:`CaptchaRequired`, :class:`PostRefused`, :class:`UncertainSend`,
        :class:`NotLoggedIn` / :class:`LoginFailed` or :class:`WrongAccount`.

        ``hidden_replies``: open it 回帖仅作者可见 (Discuz's ``hiddenreplies=1``: only the
        thread's author and the section's moderators see the replies; docs/discuz.md §4.7);
        None: when ``subject`` is one of :attr:`author_only_subjects`."""
        if hidden_replies is None:
            hidden_replies = " ".join(subject.split()) in self.author_only_subjects
        self._logged_in(lambda: self.fetch_forum(fid))  # the formhash, and the forum's charset
        self.check_encodable(subject)
        self.check_encodable(body)
        params = {
            "mod": "post",
            "action": "newthread",
            "fid": fid,
            "extra": "",
            "topicsubmit": "yes",
            "infloat": "yes",
            "handlekey": "fastnewpost",
            "inajax": 1,
        }

        def fields() -> dict[str, str]:
            return {
                "formhash": self._formhash or "",
                "posttime": str(int(self._now().timestamp())),
                "wysiwyg": "0",
                "subject": subject,
                "message": body,
                "usesig": "1",
                "allownoticeauthor": "1",
                "smileyoff": "1",  # names like ":)" stay text, as the draft shows them
                **({"hiddenreplies": "1"} if hidden_replies else {}),
            }

        answer, _waits = self._send(
            self.client.url("forum.php", params),
            fields,
            guard,
            referer=self.forum_url(fid),
            refresh=lambda: self.fetch_forum(fid),
            relogin=lambda: self._logged_in(lambda: self.fetch_forum(fid)),
            what="这个新主题",
        )
        moderated = answer.outcome is ReplyOutcome.PENDING_MODERATION
        if not answer.tid and not moderated:
            raise self._fail(
                UncertainSend,
                f"论坛说新主题已发布，但没有给出它的 tid（论坛提示：{answer.message}）",
            )
        tid = answer.tid or 0
        url = self.client.url("forum.php", {"mod": "viewthread", "tid": tid})
        return NewThread(tid, url, moderated)

    def find_thread(self, fid: int, subject: str) -> ThreadRef | None:
        """The newest thread of forum ``fid`` with exactly ``subject`` started by the director's
        account, or None (crash recovery: did the last send create it?).

        Reads the listing ordered by start time (sticky threads stay on top), the first page and
        then, when nothing matched there, the second. Subjects are compared as a reader sees
        them (entities decoded, runs of spaces as one). A thread waiting for a moderator is not
        listed, so it is not found here (:meth:`waiting_threads` looks for it).
        """
        listing = self._logged_in(lambda: self.fetch_forum(fid, by_dateline=True))
        banner, listed = listing.waiting, set[int]()
        for page_no in (1, 2):
            if page_no == 2:
                if listing.total_pages < 2:
                    return None
                listing = self.fetch_forum(fid, 2, by_dateline=True)
                if listing.page != 2:
                    return None  # the forum served page 1 again: there is no page 2
            listed |= {t.tid for t in listing.threads}
            self._seen_listing[fid] = (banner, frozenset(listed))
            mine = [
                t
                for t in listing.threads
                if same_subject(t.subject, subject) and self._started_by_me(t.author, t.authorid)
            ]
            if mine:
                best = max(mine, key=lambda t: t.tid)  # tids only grow: the newest
                return ThreadRef(
                    best.tid,
                    best.subject,
                    best.author,
                    best.authorid,
                    bool(best.closed),
                    created_at=best.created_at,
                )
        return None

    def space_threads_url(self, fid: int, page: int = 1) -> str:
        """The director's own threads of forum ``fid`` waiting for a moderator (the link of
        the listing's banner, narrowed to the forum: space_thread.php's ``fid``)."""
        params: dict[str, str | int] = {
            "mod": "space",
            "uid": self.uid or 0,
            "do": "thread",
            "view": "me",
            "type": "thread",
            "filter": "aduit",  # sic: Discuz's spelling
            "fid": fid,
        }
        if page > 1:
            params["page"] = page
        return self.client.url("home.php", params)

    def waiting_threads(self, fid: int, *, read_list: bool = False) -> WaitingThreads:
        """The director's threads of forum ``fid`` that wait for a moderator.

        The banner's count and the listed tids come from the last :meth:`find_thread` of
        ``fid`` (the listing is read when it has not been). The list of waiting threads
        (``home.php?mod=space&do=thread&view=me&filter=aduit``, newest first, at most two pages
        of 20) is read when the banner counts any, or ``read_list`` asks for it (a forum that
        shows no banner); a list that cannot be read leaves ``threads`` None and says why in
        ``problem`` — never an exception for that.
        """
        if fid not in self._seen_listing:
            self.find_thread(fid, "\n")  # no subject has a newline: reads the listing only
        banner, listed = self._seen_listing.get(fid, (0, frozenset()))
        if not banner and not read_list:
            return WaitingThreads(banner, (), listed)
        found: list[ThreadRef] = []
        for page_no in (1, 2):
            try:
                page = self._space_threads(fid, page_no)
            except PostError as exc:
                return WaitingThreads(banner, None, listed, str(exc))
            found += [
                ThreadRef(t.tid, t.subject, self.username or "", self.uid, False, True)
                for t in page.threads
                if t.fid in (None, fid)
            ]
            if not page.has_next:
                break
        return WaitingThreads(banner, tuple(found), listed)

    def _space_threads(self, fid: int, page: int) -> SpaceThreads:
        url = self.space_threads_url(fid, page)

        def parse(fetched: Fetched) -> SpaceThreads:
            return parse_space_threads(fetched.body, encoding=self._charset or fetched.charset)

        try:
            _fetched, listing = self._get(url, parse)
        except PageError as exc:
            raise self._fail(PostError, f"读取待审核主题列表失败：{exc.message_zh}") from exc
        if not listing.member_uid or listing.member_uid != self.uid:
            raise self._fail(PostError, "读取待审核主题列表时论坛没有认出导演账号（未登录？）")
        return listing

    def _started_by_me(self, author: str, authorid: int | None) -> bool:
        if self.uid:
            return authorid == self.uid
        if authorid and self.director_uids:
            return authorid in self.director_uids
        return author in self.director_names

    # ------------------------------------------------------------------ closing threads

    def thread_closed(self, tid: int) -> bool:
        """Whether thread ``tid`` is closed (关闭), read from its first page."""
        return self.fetch_thread(tid, 1).extra.get("closed") == "1"

    def close_thread(self, fid: int, tid: int, *, guard: Callable[[], None] | None = None) -> str:
        """Close (lock) thread ``tid`` of forum ``fid`` through the moderation form
        (``mod=topicadmin&action=moderate``, operation ``close``).

        Returns ``"closed"``, or ``"already_closed"`` when the thread is closed already (then
        nothing is sent). Raises :class:`NoModeratorRights` when the forum says the account may
        not moderate there (抱歉，您没有权限使用管理功能 / 抱歉，您没有权限关闭此主题), and
        :class:`PostRefused` / :class:`UncertainSend` / :class:`CaptchaRequired` as
        :meth:`reply` does. ``guard`` runs right before the POST.
        """
        page = self._logged_in(lambda: self.fetch_thread(tid, 1))
        if page.extra.get("closed") == "1":
            return "already_closed"
        params = {
            "mod": "topicadmin",
            "action": "moderate",
            "optgroup": 4,
            "modsubmit": "yes",
            "infloat": "yes",
            "inajax": 1,
        }

        def fields() -> dict[str, str]:
            return {
                "formhash": self._formhash or "",
                "fid": str(fid),
                "moderate[]": str(tid),
                "operations[]": "close",
                "expirationclose": "",
                "reason": "",
                "handlekey": "mods",
                "redirect": "",
            }

        def check(answer: ForumAnswer) -> ForumAnswer:
            # admin_succeed comes through errorhandle_mods when no redirect was given: the
            # words decide (forum_topicadmin.php, function_message.php)
            if "管理操作成功" in answer.message:
                return replace(answer, outcome=ReplyOutcome.POSTED)
            if "没有权限使用管理功能" in answer.message or "没有权限关闭" in answer.message:
                who = f"「{self.username}」" if self.username else ""
                raise self._fail(
                    NoModeratorRights,
                    f"导演账号{who}没有版块 {fid} 的管理权限，无法关闭主题 {tid}"
                    f"（论坛提示：{answer.message}）；请由版主关闭，或给导演账号版主权限",
                )
            return answer

        self._send(
            self.client.url("forum.php", params),
            fields,
            guard,
            referer=self.thread_url(tid, 1),
            refresh=lambda: self.fetch_thread(tid, 1),
            relogin=lambda: self._logged_in(lambda: self.fetch_thread(tid, 1)),
            what="关闭主题的请求",
            check=check,
        )
        return "closed"

    # ------------------------------------------------------------------ finding a post

    def find_post(
        self,
        tid: int,
        fingerprint: str,
        *,
        since: datetime | None = None,
        pid: int | None = None,
    ) -> Post | None:
        """The director's post in ``tid`` whose text is the draft with ``fingerprint``.

        ``pid`` given (an edit): that post, if it now shows the draft, its links' targets
        included (an edit may change a link alone, e.g. a substitute's uid in the 电梯: the
        old floor is not the edit; sending it again is harmless). Otherwise the
        director's own posts (只看该作者) are read from the last page back, at most
        ``search_pages`` pages and not past ``since`` (our clock, converted to the forum's with
        the skew seen on its ``Date`` header, minus a margin).
        """
        if pid is not None:
            return self._find_by_pid(tid, pid, fingerprint)
        cutoff = since + self._skew - SEARCH_MARGIN if since is not None else None
        page_no = LAST_PAGE
        for _ in range(self.search_pages):
            page = self.fetch_thread(tid, page_no, authorid=self.uid)
            for post in page.posts:
                if not self._mine(post):
                    continue
                if cutoff is not None and post.posted_at is not None and post.posted_at < cutoff:
                    continue
                if fingerprint_words(post_fingerprint(post)) == fingerprint_words(fingerprint):
                    return post  # a reply: its words (a forum may rewrite its links)
            dated = [p.posted_at for p in page.posts if p.posted_at is not None]
            if page.page <= 1 or (cutoff is not None and dated and min(dated) < cutoff):
                return None
            page_no = page.page - 1
        return None

    def _mine(self, post: Post) -> bool:
        if self.uid:
            return post.uid == self.uid
        return post.author in self.director_names

    def is_director_post(self, post: Post) -> bool:
        """Whether ``post`` is by one of the game's director accounts (game file
        ``[director]``: a uid listed there, or an account name listed there)."""
        return bool(post.uid and post.uid in self.director_uids) or (
            post.author in self.director_names
        )

    def locate_post(self, tid: int, pid: int, *, by_floor: bool = False) -> Post | None:
        """Post ``pid`` as thread ``tid`` shows it now, or None when ``tid`` does not show it.

        ``by_floor`` (a floor known to be in ``tid``, e.g. the 电梯 being edited): Discuz's
        ``goto=findpost`` finds its page. Otherwise ``tid``'s own pages are read from the last
        one back — each director account's posts (只看该作者) first, then every post — until
        a page starts below ``pid`` (pids only grow), the first page, or ``search_pages``.
        """
        if by_floor:
            page = self._page_by_pid(tid, pid)
            return next((p for p in page.posts if p.pid == pid), None) if page else None
        authors: list[int | None] = [*sorted(self.director_uids)]
        if not authors and self.uid:
            authors.append(self.uid)
        for authorid in [*authors, None]:
            try:
                found = self._scan_for_pid(tid, pid, authorid)
            except NotLoggedIn:
                raise
            except PostError:
                if authorid is None:
                    raise
                continue  # e.g. no post by that account here: the full pages decide
            if found is not None:
                return found
        return None

    def _scan_for_pid(self, tid: int, pid: int, authorid: int | None) -> Post | None:
        page_no = LAST_PAGE
        for _ in range(self.search_pages):
            page = self.fetch_thread(tid, page_no, authorid=authorid)
            for post in page.posts:
                if post.pid == pid:
                    return post
            pids = [p.pid for p in page.posts if p.pid]
            if page.page <= 1 or not pids or min(pids) < pid:
                return None
            page_no = page.page - 1
        return None

    def _find_by_pid(self, tid: int, pid: int, fingerprint: str) -> Post | None:
        page = self._page_by_pid(tid, pid)
        if page is None:
            return None
        for post in page.posts:
            if post.pid == pid:
                return post if post_fingerprint(post) == fingerprint else None
        return None

    def _page_by_pid(self, tid: int, pid: int) -> ThreadPage | None:
        """``goto=findpost`` answers 301 to the page holding ``pid`` (an httpx client that
        follows redirects hands us that page directly); None when the floor is gone."""
        url = self.client.url(
            "forum.php", {"mod": "redirect", "goto": "findpost", "ptid": tid, "pid": pid}
        )

        def where(fetched: Fetched) -> int | ThreadPage:
            if 300 <= fetched.status < 400:
                match = re.search(r"[?&]page=(\d{1,9})", fetched.headers.get("location", ""))
                return int(match.group(1)) if match else 1
            return self._parse_thread(tid, fetched)

        try:
            fetched, found = self._get(url, where)
        except PageError as exc:
            if exc.kind is PageErrorKind.NOT_FOUND:
                return None  # the floor is gone
            raise self._fail(PostError, f"查找帖子 {tid} 失败：{exc.message_zh}") from exc
        if isinstance(found, ThreadPage):
            self._learn(fetched)
            return found
        return self.fetch_thread(tid, found)


def _meta_charset(body: bytes) -> str | None:
    match = re.search(rb"""charset\s*=\s*["']?\s*([A-Za-z0-9_-]{2,20})""", body[:4096])
    return match.group(1).decode("ascii").lower() if match else None
