"""Posting approved drafts to the forum, exactly once.

:class:`Poster` is the director's session on the forum: it logs in (the session cookie from the
environment variable the game file names, or a desktop login with the username and password
from the variables it names; DISCUZ.md §4.2), reads the target thread first (Discuz sets the
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
  post (:class:`UncertainSend`); it is looked for before anything is sent again.

:func:`publish_approved` is the exactly-once protocol over the store's ``post_attempts``: the
intent is committed before the POST, the pid and the draft's ``posted`` state in one
transaction after it; an intent without an outcome (a crash in between) makes the next run look
for the post in the thread (by :func:`parsers.reply.draft_fingerprint`) before sending again.
Outcomes written to ``post_attempts.outcome``: ``posted``, ``found`` (seen in the thread after an
unclear send), ``manual`` (the director posted it by hand), ``pending_moderation``, ``captcha``,
``refused`` (the forum said no for good: not retried until the draft changes or the director
asks), ``failed`` (nothing was stored; retried next time); NULL while the outcome is unknown.

Only one sender at a time: :func:`publish_approved` and :func:`record_manual_post` run holding
the game's lock (:func:`pipeline.cycle.cycle_lock`, the one ``bansha cycle`` holds; they take it
when the caller does not hold it already), so an open attempt seen while holding it is what a
crash left behind, and is looked for in the thread. An attempt that appears after a run read the
draft's attempts was started by another sender that did not take the lock: the intent is then
refused (:class:`SendInFlight`) rather than sending a second copy. Every read that decides a
write is repeated inside the write's transaction (``BEGIN IMMEDIATE``, :meth:`Store.atomic`).
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

import httpx

from parsers.records import PageError, PageErrorKind, Post, ThreadPage
from parsers.reply import (
    ForumAnswer,
    LoginOutcome,
    ReplyOutcome,
    decode_answer,
    draft_fingerprint,
    parse_login_answer,
    parse_login_form,
    parse_member,
    parse_post_answer,
    post_fingerprint,
)
from parsers.viewthread import parse_viewthread
from pipeline.client import (
    DiscuzClient,
    Fetched,
    ForumUnavailable,
    RetryPolicy,
    SessionJar,
    describe_error,
)
from pipeline.gamefile import Game
from pipeline.store import Store, StoreError

log = logging.getLogger(__name__)

#: a page number past the end: Discuz answers with the last page (DISCUZ.md §1.8)
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

    def __init__(self, message: str, *, during: str) -> None:
        super().__init__(message)
        self.during = during  # "login" | "post"


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


class NotApproved(PostError):
    """The draft is not (or no longer) approved: it is never sent."""


class SendInFlight(PostError):
    """Another sender started an attempt for the same draft and has not finished it."""


class SenderBusy(PostError):
    """Another process (a cycle, another ``bansha publish``) holds the game's lock."""


class ManualPostMismatch(PostError):
    """The pid a director gave for a hand-posted draft is not that draft's post.

    ``which``: ``thread`` (not in the draft's thread), ``author`` (not by a director account)
    or ``text`` (not the draft's text).
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
        self._charset: str | None = None if encoding == "auto" else encoding
        self._formhash: str | None = None
        self._skew = timedelta(0)  # forum clock minus ours
        self.uid: int | None = None
        self.username: str | None = None
        self._password_login_done = False
        self.flood_waits: list[float] = []  # every flood-control wait, in seconds

    @classmethod
    def for_game(
        cls, game: Game, http: httpx.Client, *, env: Mapping[str, str] | None = None, **kw: Any
    ) -> Poster:
        """A poster for the game file's forum and director, credentials from ``env``."""
        forum = game.forum
        kw.setdefault("min_interval_s", forum.min_interval_s)
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

    # ------------------------------------------------------------------ helpers

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

    def _get(self, url: str, check: Callable[[Fetched], Any]) -> tuple[Fetched, Any]:
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
        page: ThreadPage | None
        try:
            page = self.fetch_thread(tid)
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
            page = self.fetch_thread(tid)
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
        """Desktop login with the username and password (DISCUZ.md §4.2). Raises
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
        codec = _post_codec(self._charset)
        referer = self.thread_url(tid)
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
                    f"发送时网络中断（{describe_error(exc)}），论坛可能已经收到这份回复",
                ) from exc
            answer = parse_post_answer(
                raw.status,
                raw.body,
                location=raw.headers.get("location"),
                charset=raw.charset or self._charset,
            )
            outcome = answer.outcome
            said = f"论坛提示：{answer.message}" if answer.message else "论坛没有说明"
            if outcome in (ReplyOutcome.POSTED, ReplyOutcome.PENDING_MODERATION):
                return Sent(outcome, tid, answer.pid or pid, answer.message, tuple(waits))
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
                log.warning("formhash 已过期（%s），重新读取帖子后再发一次", answer.message)
                self.fetch_thread(tid)
                continue
            if outcome is ReplyOutcome.LOGIN_REQUIRED and not relogged:
                relogged = True
                self.uid = None
                self.session(tid)
                continue
            if outcome is ReplyOutcome.CAPTCHA:
                raise self._fail(
                    CaptchaRequired,
                    f"论坛要求填写验证码才能发帖（{said}）。bansha 不会尝试识别验证码："
                    "请把已批准的草稿手动发到论坛，然后用 bansha publish record 登记它的 pid",
                    during="post",
                )
            if outcome in (ReplyOutcome.SERVER_ERROR, ReplyOutcome.UNKNOWN):
                raise self._fail(UncertainSend, f"发送后论坛的回答无法确认是否成功（{said}）")
            if outcome is ReplyOutcome.LOGIN_REQUIRED:
                raise self._fail(LoginFailed, f"论坛说我们没有登录（{said}）")
            transient = outcome in (ReplyOutcome.HOURLY_LIMIT, ReplyOutcome.BAD_FORMHASH)
            raise self._fail(PostRefused, f"论坛拒绝了这份回复（{said}）", transient=transient)

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

        ``pid`` given (an edit): that post, if it now shows the draft. Otherwise the
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
                if post_fingerprint(post) == fingerprint:
                    return post
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


# --------------------------------------------------------------------------- publishing


@dataclass(frozen=True, slots=True)
class PublishResult:
    """What happened to one approved draft in one run."""

    draft_id: int
    kind: str
    day: int | None
    tid: int | None
    status: str  # posted | found | manual | pending_moderation | captcha | refused | failed |
    #             uncertain | waiting | skipped
    pid: int | None = None
    url: str | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        """The forum has the post (or will show it once a moderator approves it)."""
        return self.status in ("posted", "found", "manual", "pending_moderation")

    def line(self) -> str:
        """One line for the director."""
        from pipeline.drafts import KIND_ZH

        what = f"草稿 #{self.draft_id}（{KIND_ZH.get(self.kind, self.kind)}" + (
            f"，第{self.day}天）" if self.day is not None else "）"
        )
        where = f"帖子 tid={self.tid}" if self.tid is not None else "帖子"
        if self.status in ("posted", "found", "manual"):
            verb = {"posted": "已发出", "found": "已在帖子中找到", "manual": "已登记"}[self.status]
            tail = f"：{self.url}" if self.url else ""
            return f"{what}{verb} → {where} pid={self.pid}{tail}"
        return f"{what}未发出：{self.message}"


def _row(store: Store, draft_id: int) -> dict[str, Any] | None:
    rows = list(store.db.query("SELECT * FROM drafts WHERE id = ?", [draft_id]))
    return rows[0] if rows else None


def _attempts(store: Store, draft_id: int, body_hash: str) -> list[dict[str, Any]]:
    return list(
        store.db.query(
            "SELECT * FROM post_attempts WHERE draft_id = ? AND body_hash = ? ORDER BY id",
            [draft_id, body_hash],
        )
    )


def _iso(at: datetime) -> str:
    return at.isoformat()


def _finish(
    store: Store,
    attempt_id: int,
    at: datetime,
    outcome: str,
    *,
    pid: int | None = None,
    detail: str | None = None,
) -> None:
    with store.atomic():
        store.db.execute(
            "UPDATE post_attempts SET finished_at = ?, outcome = ?, pid = COALESCE(?, pid), "
            "detail = COALESCE(?, detail) WHERE id = ?",
            [_iso(at), outcome, pid, detail, attempt_id],
        )


def _note(store: Store, attempt_id: int, detail: str) -> None:
    with store.atomic():
        store.db.execute("UPDATE post_attempts SET detail = ? WHERE id = ?", [detail, attempt_id])


def _mark_posted(
    store: Store,
    draft: dict[str, Any],
    *,
    attempt_ids: Sequence[int],
    outcome: str,
    pid: int,
    at: datetime,
    note: str,
) -> None:
    """Close the attempts, set the draft ``posted`` and write its event: one transaction."""
    with store.atomic():
        for attempt_id in attempt_ids:
            store.db.execute(
                "UPDATE post_attempts SET finished_at = ?, outcome = ?, pid = ? WHERE id = ?",
                [_iso(at), outcome, pid, attempt_id],
            )
        current = store.db.execute(
            "SELECT state, body_hash FROM drafts WHERE id = ?", [draft["id"]]
        ).fetchone()
        state, body_hash = current if current else (None, None)
        if body_hash == draft["body_hash"] and state != "posted":
            store.db.execute(
                "UPDATE drafts SET state = 'posted', posted_pid = ?, posted_at = ?, "
                "updated_at = ? WHERE id = ?",
                [pid, _iso(at), _iso(at), draft["id"]],
            )
            store.db.execute(
                "INSERT INTO draft_events(draft_id, at, from_state, to_state, note) "
                "VALUES (?, ?, ?, 'posted', ?)",
                [draft["id"], _iso(at), state, note],
            )
        else:  # the director changed the draft while it was being sent: keep their version
            log.warning("草稿 #%s 发送期间被修改；已发出的是修改前批准的版本", draft["id"])
            store.db.execute(
                "INSERT INTO draft_events(draft_id, at, from_state, to_state, note) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    draft["id"],
                    _iso(at),
                    state,
                    state or "approved",
                    f"修改前批准的版本已发出：pid={pid}；当前版本尚未发出",
                ],
            )


def _last_attempt_id(store: Store, draft_id: int) -> int:
    row = store.db.execute(
        "SELECT COALESCE(MAX(id), 0) FROM post_attempts WHERE draft_id = ?", [draft_id]
    ).fetchone()
    return int(row[0])


def _record_intent(
    store: Store, draft_id: int, body_hash: str, at: datetime, *, seen_upto: int
) -> int:
    """Commit "about to send" — only for a draft that is approved with this very text, and
    that no other sender is sending right now.

    ``seen_upto`` is the last attempt of the draft this run had read (and resolved) before it
    looked at the forum: an attempt still open after it was started since by another sender,
    which may be sending this minute — refused (:class:`SendInFlight`). Read and insert are one
    ``BEGIN IMMEDIATE`` transaction, so two senders cannot both pass.
    """
    with store.atomic():
        row = _row(store, draft_id)
        if row is None or row["state"] != "approved" or row["body_hash"] != body_hash:
            raise NotApproved(_not_approved_message(draft_id, row))
        other = store.db.execute(
            "SELECT id, started_at FROM post_attempts WHERE draft_id = ? AND id > ? "
            "AND finished_at IS NULL AND outcome IS NULL ORDER BY id LIMIT 1",
            [draft_id, seen_upto],
        ).fetchone()
        if other is not None:
            raise SendInFlight(
                f"草稿 #{draft_id} 正由另一个 bansha 进程发送（发送记录 #{other[0]}，"
                f"开始于 {other[1]}），这次没有发送，以免发出两份"
            )
        cur = store.db.execute(
            "INSERT INTO post_attempts(draft_id, body_hash, started_at) VALUES (?, ?, ?)",
            [draft_id, body_hash, _iso(at)],
        )
        return int(cur.lastrowid or 0)


def _not_approved_message(draft_id: int, row: dict[str, Any] | None) -> str:
    if row is None:
        return f"没有编号为 {draft_id} 的草稿"
    if row["state"] == "approved":
        return f"草稿 #{draft_id} 在发送前被修改过，需要重新批准，没有发送"
    return (
        f"草稿 #{draft_id} 的状态是「{STATE_ZH.get(row['state'], row['state'])}」，"
        "只有已批准的草稿才会发出"
    )


def assert_approved(store: Store, draft_id: int, body_hash: str) -> None:
    """Raise :class:`NotApproved` unless the stored draft is approved with this exact text."""
    row = _row(store, draft_id)
    if row is None or row["state"] != "approved" or row["body_hash"] != body_hash:
        raise NotApproved(_not_approved_message(draft_id, row))


_PART_KEY = re.compile(r"^(.*)#(\d{1,4})$")


def _earlier_part_pending(store: Store, draft: dict[str, Any]) -> int | None:
    """For part n>1 of a split draft (key ``…#n``): the number of the earlier part that is not
    posted yet, so the parts reach the thread in order."""
    match = _PART_KEY.match(draft["key"] or "")
    if match is None or int(match.group(2)) <= 1:
        return None
    earlier = f"{match.group(1)}#{int(match.group(2)) - 1}"
    row = store.db.execute(
        "SELECT state FROM drafts WHERE key = ? AND state NOT IN ('superseded', 'rejected') "
        "ORDER BY id DESC LIMIT 1",
        [earlier],
    ).fetchone()
    if row is not None and row[0] != "posted":
        return int(match.group(2)) - 1
    return None


@contextmanager
def sender_lock(store: Store, *, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the game's lock (:func:`pipeline.cycle.cycle_lock` on the store) while sending.

    A thread that holds it already (``bansha cycle``, ``bansha publish``) goes on; otherwise it
    is taken here, waiting up to ``wait_s`` seconds, and :class:`SenderBusy` says, in Chinese,
    that another process is posting for this game.
    """
    # the game's lock lives in pipeline.cycle, the module above this one (it calls posting):
    # imported when used, never at load time, so the two never import each other in a loop
    from pipeline.cycle import CycleLocked, cycle_lock, holds_cycle_lock

    with ExitStack() as stack:
        if not holds_cycle_lock(store.path):
            try:
                stack.enter_context(cycle_lock(store.path, wait_s=wait_s))
            except CycleLocked as exc:
                waited = f"等了 {wait_s:.0f} 秒仍未结束，" if wait_s >= 1 else ""
                raise SenderBusy(
                    "另一个 bansha 进程（cycle 或 post）正在给这局游戏发帖"
                    f"（锁文件 {store.path}.lock），{waited}这次没有发帖，也没有登记；"
                    "它会发出已批准的草稿，稍后用 bansha drafts 查看，需要时再运行一次"
                ) from exc
        yield


def publish_approved(
    store: Store,
    game: Game,
    poster: Poster,
    *,
    now: datetime,
    clock: Callable[[], datetime] | None = None,
    ids: Collection[int] | None = None,
    lock_wait_s: float = 0.0,
) -> list[PublishResult]:
    """Post every approved draft (oldest first), each exactly once; return what happened.

    ``now`` is when the run started; ``clock`` stamps each record (default: ``now``; give a
    real clock so every attempt carries its own time). ``ids`` limits the run to those drafts
    and means the director asked for them by hand: a draft the forum refused before, or one
    that met a captcha, is tried again only then.

    Runs holding the game's lock (:func:`sender_lock`, waiting up to ``lock_wait_s``); the
    drafts are read once it is held. Nothing talks to the forum, and no lock is taken, when no
    draft is approved. A store that stays busy ends the run with a Chinese message in the
    result, never a traceback.
    """
    tick = clock or (lambda: now)
    sql = "SELECT * FROM drafts WHERE state = 'approved'"
    args: list[Any] = []
    if ids is not None:
        wanted = sorted(set(ids))
        sql += f" AND id IN ({', '.join('?' for _ in wanted)})"
        args.extend(wanted)
    sql += " ORDER BY id"
    if not list(store.db.query(sql + " LIMIT 1", args)):
        return []
    with sender_lock(store, wait_s=lock_wait_s):
        # read again under the lock: a sender that held it may have posted them meanwhile
        return _publish_all(store, game, poster, list(store.db.query(sql, args)), tick, ids)


def _publish_all(
    store: Store,
    game: Game,
    poster: Poster,
    drafts: list[dict[str, Any]],
    tick: Callable[[], datetime],
    ids: Collection[int] | None,
) -> list[PublishResult]:
    requested = set(ids or ())
    results: list[PublishResult] = []
    stop: str | None = None  # a problem that stops every later draft too
    for draft in drafts:
        if stop is not None:
            results.append(_result(draft, "skipped", message=f"没有尝试：{stop}"))
            continue
        try:
            result = _publish_one(store, game, poster, draft, tick, draft["id"] in requested)
        except (NotApproved, SendInFlight) as exc:  # this draft only
            result = _result(draft, "skipped", message=str(exc))
        except StoreError as exc:  # the store stayed busy (or broke): stop, say it in Chinese
            stop = str(exc)
            result = _result(
                draft,
                "failed",
                message=f"{exc}（若这份草稿已发到论坛，下次运行会先在帖子里找到它，不会重发）",
            )
        except (LoginFailed, WrongAccount) as exc:
            stop = str(exc)
            result = _result(draft, "failed", message=str(exc))
        except CaptchaRequired as exc:
            stop = "论坛要求验证码（见上）"
            result = _result(draft, "captcha", message=str(exc))
        except PostError as exc:  # the forum could not be read: later drafts would fail alike
            stop = str(exc)
            result = _result(draft, "failed", message=str(exc))
        results.append(result)
    return results


def _result(draft: dict[str, Any], status: str, **kw: Any) -> PublishResult:
    return PublishResult(draft["id"], draft["kind"], draft["day"], draft["tid"], status, **kw)


def _publish_one(
    store: Store,
    game: Game,
    poster: Poster,
    draft: dict[str, Any],
    tick: Callable[[], datetime],
    requested: bool,
) -> PublishResult:
    draft_id, tid, body_hash = draft["id"], draft["tid"], draft["body_hash"]
    is_edit = draft["action"] == "edit"
    if tid is None:
        return _result(draft, "failed", message="草稿没有目标帖子（tid），无法发出")
    game_tids = {t for _, _, t in game.thread_roles()}
    # the rules thread (the deal's commitment and reveal) and the sign-up thread are the game's too
    game_tids |= {
        t
        for t in (
            getattr(game.game, "rules_thread", None),
            getattr(game.game, "signup_thread", None),
        )
        if t is not None
    }
    if game_tids and tid not in game_tids:
        return _result(
            draft,
            "failed",
            message=f"目标帖子 tid={tid} 不是游戏文件中的帖子；为免发错地方，没有发送",
        )
    if is_edit and not draft["edit_pid"]:
        return _result(draft, "failed", message="编辑类草稿没有要编辑的楼层（edit_pid），无法发出")
    part = _earlier_part_pending(store, draft)
    if part is not None:
        return _result(draft, "waiting", message=f"等第 {part} 部分先发出后再发")
    fingerprint = draft_fingerprint(draft["body"])
    # we hold the game's lock: every attempt seen now is ours to resolve (a crash leftover)
    seen_upto = _last_attempt_id(store, draft_id)
    attempts = [a for a in _attempts(store, draft_id, body_hash) if a["id"] <= seen_upto]
    unsure = [a for a in attempts if a["outcome"] is None or a["outcome"] in UNSURE_OUTCOMES]
    last = attempts[-1] if attempts else None

    if unsure:
        # A crash, a lost answer, a captcha hand-over or a moderated reply: the post may be in
        # the thread already. Look before anything is sent again.
        poster.session(tid)
        since = min(datetime.fromisoformat(a["started_at"]) for a in unsure)
        found = poster.find_post(
            tid, fingerprint, since=since, pid=draft["edit_pid"] if is_edit else None
        )
        if found is not None:
            open_ids = [a["id"] for a in unsure if a["outcome"] is None]
            if not open_ids:
                open_ids = [_record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)]
            _mark_posted(
                store,
                draft,
                attempt_ids=open_ids,
                outcome="found",
                pid=found.pid,
                at=tick(),
                note=f"在帖子中找到已发出的回复：tid={tid} pid={found.pid}",
            )
            return _result(
                draft, "found", pid=found.pid, url=poster.post_url(tid, found.pid), message=""
            )
        moderated = [a for a in unsure if a["outcome"] == "pending_moderation"]
        if moderated and not requested:
            return _result(
                draft,
                "pending_moderation",
                pid=moderated[-1]["pid"],
                message="论坛仍在审核这份回复（通过后会自动登记），没有重发",
            )
        if last is not None and last["outcome"] == "captcha" and not requested:
            return _result(
                draft,
                "captcha",
                message=(
                    "上次发帖时论坛要求验证码：请手动发帖后运行 "
                    f"bansha publish record 游戏文件 {draft_id} --pid 楼层pid；"
                    f"或用 bansha publish 游戏文件 --id {draft_id} 再试一次"
                ),
            )
        for a in unsure:
            if a["outcome"] is None:
                _finish(
                    store,
                    a["id"],
                    tick(),
                    "failed",
                    detail="上次发送结果不明；帖子中没有找到，视为没有发出",
                )
    elif last is not None and last["outcome"] == "refused" and not requested:
        return _result(
            draft,
            "refused",
            message=(
                f"论坛上次拒绝了这份草稿（{last['detail']}）；请修改草稿后重新批准，"
                f"或用 bansha publish 游戏文件 --id {draft_id} 再试"
            ),
        )

    poster.session(tid)
    try:
        poster.check_encodable(draft["body"])
    except PostRefused as exc:
        attempt_id = _record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)
        _finish(store, attempt_id, tick(), "refused", detail=str(exc))
        return _result(draft, "refused", message=str(exc))

    # The last check: approved, with this very text, read from the store now.
    try:
        attempt_id = _record_intent(store, draft_id, body_hash, tick(), seen_upto=seen_upto)
    except NotApproved as exc:
        return _result(draft, "skipped", message=str(exc))

    def guard() -> None:
        assert_approved(store, draft_id, body_hash)

    try:
        if is_edit:
            sent = poster.edit(tid, int(draft["edit_pid"]), draft["body"], guard=guard)
        else:
            sent = poster.reply(tid, draft["body"], guard=guard)
    except NotApproved as exc:
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        return _result(draft, "skipped", message=str(exc))
    except CaptchaRequired as exc:
        _finish(store, attempt_id, tick(), "captcha", detail=str(exc))
        raise
    except PostRefused as exc:
        outcome = "failed" if exc.transient else "refused"
        _finish(store, attempt_id, tick(), outcome, detail=str(exc))
        return _result(draft, outcome, message=str(exc))
    except UncertainSend as exc:
        _note(store, attempt_id, str(exc))
        return _after_uncertain(store, poster, draft, attempt_id, fingerprint, tick, exc)
    except (LoginFailed, WrongAccount) as exc:
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        raise
    except PostError as exc:
        # e.g. the thread could not be re-read for a fresh formhash: nothing was sent then
        _finish(store, attempt_id, tick(), "failed", detail=str(exc))
        raise

    if sent.outcome is ReplyOutcome.PENDING_MODERATION:
        _finish(store, attempt_id, tick(), "pending_moderation", pid=sent.pid, detail=sent.message)
        return _result(
            draft,
            "pending_moderation",
            pid=sent.pid,
            message=f"论坛收下了回复，但需要版主审核后才会显示（论坛提示：{sent.message}）",
        )
    pid = sent.pid if sent.pid is not None else draft["edit_pid"]
    if pid is None:  # the forum said "posted" without a pid: find it
        found = poster.find_post(
            tid, fingerprint, since=datetime.fromisoformat(_started(store, attempt_id))
        )
        if found is None:
            _note(store, attempt_id, f"论坛说已发出但没有给出 pid（{sent.message}）")
            return _result(
                draft, "uncertain", message="论坛说已发出但没有给出 pid；下次运行会在帖子里查找"
            )
        pid = found.pid
    waited = f"；等待发帖间隔 {len(sent.flood_waits)} 次" if sent.flood_waits else ""
    _mark_posted(
        store,
        draft,
        attempt_ids=[attempt_id],
        outcome="posted",
        pid=int(pid),
        at=tick(),
        note=f"已{'编辑' if is_edit else '发出'}：tid={tid} pid={pid}{waited}",
    )
    return _result(draft, "posted", pid=int(pid), url=poster.post_url(tid, int(pid)))


def _started(store: Store, attempt_id: int) -> str:
    row = store.db.execute(
        "SELECT started_at FROM post_attempts WHERE id = ?", [attempt_id]
    ).fetchone()
    return str(row[0])


def _after_uncertain(
    store: Store,
    poster: Poster,
    draft: dict[str, Any],
    attempt_id: int,
    fingerprint: str,
    tick: Callable[[], datetime],
    exc: UncertainSend,
) -> PublishResult:
    """The POST may have landed: look right away; if not found, leave the intent open so the
    next run looks again before sending."""
    tid = int(draft["tid"])
    try:
        found = poster.find_post(
            tid,
            fingerprint,
            since=datetime.fromisoformat(_started(store, attempt_id)),
            pid=draft["edit_pid"] if draft["action"] == "edit" else None,
        )
    except PostError:
        found = None
    if found is not None:
        _mark_posted(
            store,
            draft,
            attempt_ids=[attempt_id],
            outcome="found",
            pid=found.pid,
            at=tick(),
            note=f"网络中断后在帖子中找到：tid={tid} pid={found.pid}",
        )
        return _result(draft, "found", pid=found.pid, url=poster.post_url(tid, found.pid))
    return _result(
        draft,
        "uncertain",
        message=f"{exc}；下次运行会先在帖子里查找这份回复，找不到才重发",
    )


def record_manual_post(
    store: Store,
    poster: Poster,
    draft_id: int,
    pid: int,
    *,
    now: datetime,
    clock: Callable[[], datetime] | None = None,
    force: bool = False,
    lock_wait_s: float = 0.0,
) -> PublishResult:
    """The director posted an approved draft by hand (a captcha hand-over): record its pid.

    The pid is looked up on the forum first and accepted only when that post is in the draft's
    thread, by one of the game's director accounts, and shows the draft's text (the same
    :func:`parsers.reply.draft_fingerprint` the exactly-once search uses); otherwise
    :class:`ManualPostMismatch` says which of the three failed, and nothing is recorded.

    ``force`` records it anyway — for what the director has checked with their own eyes and
    bansha cannot see: a post still awaiting moderation, a text the forum's editor reformatted,
    a forum that cannot be read right now. The reason stays in the draft's event and in the
    result's message. Runs holding the game's lock (like a send): it closes open attempts.
    """
    tick = clock or (lambda: now)
    if pid <= 0:
        raise PostError(f"pid 必须是正整数：{pid}")
    with sender_lock(store, wait_s=lock_wait_s):
        row = _recordable(store, draft_id)
        problem: str | None = None
        try:
            _check_manual_post(poster, row, pid)
        except ManualPostMismatch as exc:
            if not force:
                raise ManualPostMismatch(
                    f"{exc}；没有登记（确认这一楼就是这份草稿时，可加 --force 强制登记）",
                    which=exc.which,
                ) from exc
            problem = str(exc)
        except PostError as exc:  # the forum could not be read
            if not force:
                raise PostError(
                    f"{exc}；无法核对 pid={pid}，没有登记"
                    "（论坛恢复后再试，或加 --force 不经核对直接登记）"
                ) from exc
            problem = f"未能在论坛上核对（{exc}）"
        at = tick()
        note = f"导演手动发帖后登记：pid={pid}"
        if problem is not None:
            note += f"；注意：未通过核对，按 --force 登记：{problem}"
        with store.atomic():  # read again under the write lock: one transaction
            current = _recordable(store, draft_id)
            if current["body_hash"] != row["body_hash"]:
                raise PostError(
                    f"草稿 #{draft_id} 在核对期间被修改过，没有登记；请重新批准后再登记"
                )
            open_ids = [
                r["id"]
                for r in store.db.query(
                    "SELECT id FROM post_attempts WHERE draft_id = ? AND finished_at IS NULL",
                    [draft_id],
                )
            ]
            if not open_ids:
                cur = store.db.execute(
                    "INSERT INTO post_attempts(draft_id, body_hash, started_at, detail) "
                    "VALUES (?, ?, ?, ?)",
                    [draft_id, current["body_hash"], _iso(at), "导演手动发帖"],
                )
                open_ids = [int(cur.lastrowid or 0)]
            _mark_posted(
                store, current, attempt_ids=open_ids, outcome="manual", pid=pid, at=at, note=note
            )
    tid = row["tid"]
    return PublishResult(
        draft_id,
        row["kind"],
        row["day"],
        tid,
        "manual",
        pid,
        url=poster.post_url(int(tid), pid) if tid is not None else None,
        message=f"未通过核对，已按 --force 登记：{problem}" if problem is not None else "",
    )


def _recordable(store: Store, draft_id: int) -> dict[str, Any]:
    """The draft, when it may be recorded as posted by hand (approved); else a PostError."""
    row = _row(store, draft_id)
    if row is None:
        raise PostError(f"没有编号为 {draft_id} 的草稿")
    if row["state"] == "posted":
        raise PostError(f"草稿 #{draft_id} 已经登记为发出（pid={row['posted_pid']}），不能重复登记")
    if row["state"] != "approved":
        raise PostError(
            f"草稿 #{draft_id} 的状态是「{STATE_ZH.get(row['state'], row['state'])}」，"
            "只有已批准的草稿才能登记为已发出（先 bansha drafts approve）"
        )
    return row


def _check_manual_post(poster: Poster, draft: dict[str, Any], pid: int) -> Post:
    """Post ``pid`` on the forum, when it is this draft's: in its thread, by a director
    account, with its text. Otherwise :class:`ManualPostMismatch` (``which`` says what)."""
    draft_id, tid = draft["id"], draft["tid"]
    if tid is None:
        raise ManualPostMismatch(
            f"草稿 #{draft_id} 没有目标帖子（tid），无法核对 pid={pid} 是否在帖子里",
            which="thread",
        )
    tid = int(tid)
    is_edit = draft["action"] == "edit" and draft["edit_pid"]
    if is_edit and pid != int(draft["edit_pid"]):
        raise ManualPostMismatch(
            f"草稿 #{draft_id} 是编辑帖子 tid={tid} 中 pid={draft['edit_pid']} 的那一楼，"
            f"登记的 pid 应是 {draft['edit_pid']}，不是 {pid}",
            which="thread",
        )
    try:
        post = poster.locate_post(tid, pid, by_floor=bool(is_edit))
    except NotLoggedIn:  # the forum shows the thread to members only: log in, read again
        poster.session(tid)
        post = poster.locate_post(tid, pid, by_floor=bool(is_edit))
    if post is None:
        raise ManualPostMismatch(
            f"草稿 #{draft_id} 的目标帖子 tid={tid} 中没有 pid={pid} 这一楼"
            "（发到别的帖子了？pid 抄错了？或者这一楼已被删除、仍在审核）",
            which="thread",
        )
    if not poster.is_director_post(post):
        raise ManualPostMismatch(
            f"帖子 tid={tid} 的 pid={pid} 是「{post.author}」（uid={post.uid}）发的，"
            "不是游戏文件 [director] 中的导演账号",
            which="author",
        )
    if post_fingerprint(post) != draft_fingerprint(draft["body"]):
        shown = " ".join(post.text.split())
        shown = shown if len(shown) <= 30 else shown[:29] + "…"
        raise ManualPostMismatch(
            f"帖子 tid={tid} 的 pid={pid} 的内容与草稿 #{draft_id} 的正文不一致"
            f"（这一楼开头是：「{shown}」）",
            which="text",
        )
    return post
