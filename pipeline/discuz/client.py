"""Talking to a Discuz! X forum: one httpx.Client, polite, bounded retries.

The client is built once (by the CLI or a test) and passed in; tests swap the transport for the
simulator's ``httpx.MockTransport`` instead of patching. The login cookie comes from the
environment variable the game file names and is never logged, stored or put in a message:
every error this client raises is scrubbed of the session's secrets (:meth:`DiscuzClient.scrub`),
and :func:`scrub_body` is what the store runs on every body before it keeps it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlencode, urljoin

import httpx

from parsers.pagecheck import redirect_loop
from parsers.records import PageError, PageErrorKind
from pipeline.store.scrub import is_secret_value, scrub_text

if TYPE_CHECKING:
    from tenacity import RetryCallState

log = logging.getLogger(__name__)

USER_AGENT = (
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/124.0 Safari/537.36 bansha/0.1"
)

T = TypeVar("T")

#: page errors worth another try: the forum may answer properly a little later
RETRYABLE_PAGE_ERRORS = {
    PageErrorKind.RATE_LIMITED,
    PageErrorKind.MALFORMED,
    PageErrorKind.SERVER_ERROR,
    PageErrorKind.ANTI_CRAWL,
}


class ForumUnavailable(RuntimeError):
    """The forum did not give a usable answer within the retry bounds (Chinese message).

    ``reason`` is the same without the address (what the crawl says once for the whole cycle).
    """

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class RetryableStatus(Exception):
    def __init__(self, status: int, retry_after: float | None) -> None:
        super().__init__(f"HTTP {status}")
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Fetched:
    url: str
    status: int
    headers: dict[str, str]
    body: bytes
    fetched_at: datetime
    attempts: int

    @property
    def server_time(self) -> datetime:
        """The forum's clock (Date header) — relative times are computed from it.

        Always aware: a Date header without a usable zone (none, ``-0000``, a doubled header
        that httpx joined with a comma) or one that does not parse falls back to the time the
        answer was fetched.
        """
        fetched = self.fetched_at
        if fetched.tzinfo is None or fetched.utcoffset() is None:
            fetched = fetched.replace(tzinfo=UTC)
        return _http_date(self.headers.get("date")) or fetched

    @property
    def charset(self) -> str | None:
        ctype = self.headers.get("content-type", "")
        for part in ctype.split(";"):
            part = part.strip()
            if part.lower().startswith("charset="):
                return part.split("=", 1)[1].strip().strip('"') or None
        return None


@dataclass
class RetryPolicy:
    max_attempts: int = 5
    max_total_s: float = 120.0
    initial_wait_s: float = 1.0
    max_wait_s: float = 30.0
    jitter_s: float = 1.0
    max_retry_after_s: float = 60.0


@dataclass
class ClientStats:
    requests: int = 0
    retries: int = 0
    #: seconds slept keeping ``min_interval_s`` between requests (never before the first)
    paced_s: float = 0.0
    errors: list[str] = field(default_factory=list)


def _is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError | RetryableStatus):
        return True
    return isinstance(exc, PageError) and exc.kind in RETRYABLE_PAGE_ERRORS


def _replaying(failure: Exception, attempt: Callable[[], T]) -> Callable[[], T]:
    """``attempt`` whose first call raises ``failure`` (the attempt already made) without
    making it again: the retries see the same first attempt as if they had made it."""
    pending = [failure]

    def again() -> T:
        if pending:
            raise pending.pop()
        return attempt()

    return again


def describe_error(exc: BaseException) -> str:
    """A Chinese one-liner for an error, without URLs' secrets or cookies."""
    if isinstance(exc, PageError):
        return exc.message_zh
    if isinstance(exc, RetryableStatus):
        return f"论坛返回 HTTP {exc.status}"
    if isinstance(exc, httpx.TooManyRedirects):
        return "重定向循环"
    if isinstance(exc, httpx.TimeoutException):
        return "连接论坛超时"
    if isinstance(exc, httpx.ConnectError):
        return "无法连接论坛"
    if isinstance(exc, httpx.TransportError):
        return f"网络错误（{type(exc).__name__}）"
    return f"{type(exc).__name__}"


class SessionJar:
    """The cookies of one forum session, in memory only (never logged, stored or shown).

    Seeded from a ``Cookie`` header value (what a director copies from the browser) and kept up
    to date from every ``Set-Cookie`` the forum sends (saltkey, auth after a login, ``st_p``
    after viewing a thread). Discuz's ``auth`` only works with the ``saltkey`` it was issued
    with, so the whole jar travels together (docs/discuz.md §4.1).
    """

    def __init__(self, initial: str | None = None) -> None:
        self._cookies: dict[str, str] = {}
        if initial:
            text = initial.strip()
            if text.lower().startswith("cookie:"):
                text = text[7:]
            for part in text.split(";"):
                name, sep, value = part.strip().partition("=")
                if sep and name.strip():
                    self._cookies[name.strip()] = value.strip()

    def __repr__(self) -> str:
        return f"SessionJar({len(self._cookies)} cookies)"

    def __len__(self) -> int:
        return len(self._cookies)

    def header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self._cookies.items())

    def names(self) -> list[str]:
        return list(self._cookies)

    def get_suffix(self, suffix: str) -> str | None:
        """The value of the cookie whose name ends with ``suffix`` (e.g. ``_auth``)."""
        return next((v for k, v in self._cookies.items() if k.endswith(suffix)), None)

    def secrets(self) -> list[str]:
        """Every cookie value that could identify the session, whatever its name (to scrub
        them from messages and stored bodies); short values (``mobile=no``) and plain numbers
        (``lastvisit`` timestamps, uids: no secret, and they occur in pages as times and ids)
        are left out."""
        return [v for v in self._cookies.values() if is_secret_value(v)]

    def update(self, set_cookie_headers: Iterable[str]) -> None:
        for raw in set_cookie_headers:
            first, _, attrs = raw.partition(";")
            name, sep, value = first.strip().partition("=")
            name = name.strip()
            if not sep or not name:
                continue
            lowered = attrs.lower().replace(" ", "")
            if value.strip() in ("", "deleted") or "max-age=0" in lowered:
                self._cookies.pop(name, None)
            else:
                self._cookies[name] = value.strip()

    def update_from(self, resp: httpx.Response) -> None:
        for hop in (*resp.history, resp):
            self.update(hop.headers.get_list("set-cookie"))


class DiscuzClient:
    """GETs with a minimum interval between requests and bounded, jittered retries.

    With a :class:`SessionJar` (``jar=``) the client keeps a login session: the jar's cookies
    are sent and every answer's ``Set-Cookie`` updates it; :meth:`post_form` sends one form POST
    (never retried: a POST that may have reached the forum must not be sent twice blindly).
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        base_url: str,
        min_interval_s: float = 1.0,
        cookie: str | None = None,
        policy: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        jar: SessionJar | None = None,
        secrets: Iterable[str] = (),
    ) -> None:
        self.http = http
        self.jar = jar
        #: more values to keep out of messages and the store (a password from the environment)
        self.extra_secrets = [s for s in secrets if s]
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.min_interval_s = min_interval_s
        self._cookie = cookie
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._monotonic = monotonic
        self._now = now
        self._last_request: float | None = None
        self.stats = ClientStats()

    def secrets(self) -> list[str]:
        """Every secret value of this session now: the cookie values sent (the jar's, updated
        by every ``Set-Cookie``) and the extra secrets given."""
        values = list(self.extra_secrets)
        if self.jar is not None:
            values += self.jar.secrets()
        if self._cookie:
            values += SessionJar(self._cookie).secrets()
        return values

    def scrub(self, text: str) -> str:
        """``text`` without this session's secrets or any formhash/auth/saltkey value."""
        return scrub_text(text, self.secrets())

    def _scrub_error(self, exc: PageError) -> None:
        exc.detail = self.scrub(exc.detail)
        exc.args = (exc.message_zh,)

    def url(self, path: str, params: Mapping[str, object] | None = None) -> str:
        url = urljoin(self.base_url, path)
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        return url

    def monotonic(self) -> float:
        """The client's own clock (seconds; injected in tests), what pacing is measured on."""
        return self._monotonic()

    def _wait_turn(self) -> None:
        if self._last_request is not None and self.min_interval_s > 0:
            elapsed = self._monotonic() - self._last_request
            if elapsed < self.min_interval_s:
                self.stats.paced_s += self.min_interval_s - elapsed
                self._sleep(self.min_interval_s - elapsed)
        self._last_request = self._monotonic()

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}
        if self.jar is not None:
            # always set (even empty), so cookies the shared httpx.Client picked up elsewhere
            # never join this session
            headers["Cookie"] = self.jar.header()
        elif self._cookie:
            headers["Cookie"] = self._cookie
        return headers

    def _follow(self, url: str, max_hops: int = 5) -> httpx.Response:
        """GET, following redirects by hand so the session's cookies go along on the same host
        (httpx drops an explicit Cookie header on every redirect) and never to another host.

        A forum still redirecting after ``max_hops`` hops is in a redirect loop: that raises
        :class:`~parsers.pagecheck.UnusablePage` ("重定向循环"), never an empty page.
        """
        resp = self.http.get(url, headers=self._headers(), follow_redirects=False)
        origin = httpx.URL(url).host
        hops = 0
        while True:
            if self.jar is not None:
                self.jar.update_from(resp)
            if not resp.is_redirect or resp.next_request is None:
                return resp
            target = resp.next_request.url
            if target.host != origin:
                log.warning("论坛把请求重定向到了另一个网站（%s），不跟随", target.host)
                return resp
            if hops >= max_hops:
                raise redirect_loop(hops, self.scrub(_redact(str(target))))
            hops += 1
            if log.isEnabledFor(logging.DEBUG):
                log.debug("论坛重定向（第 %d 次）到 %s", hops, self.scrub(_redact(str(target))))
            resp = self.http.get(str(target), headers=self._headers(), follow_redirects=False)

    def _get_once(self, url: str) -> Fetched:
        self._wait_turn()
        self.stats.requests += 1
        try:
            resp = self._follow(url)
        except httpx.TooManyRedirects as exc:  # an httpx.Client that follows redirects itself
            raise redirect_loop(0, "") from exc
        if log.isEnabledFor(logging.INFO):  # -v: one Chinese line per request (not httpx's)
            log.info(
                "读取 %s：HTTP %d，%d 字节",
                self.scrub(_redact(url)),
                resp.status_code,
                len(resp.content),
            )
        if resp.status_code == 429 or resp.status_code >= 500:
            raise RetryableStatus(resp.status_code, _retry_after(resp))
        return Fetched(
            url=url,
            status=resp.status_code,
            headers={k.lower(): v for k, v in resp.headers.items()},
            body=resp.content,
            fetched_at=self._now(),
            attempts=1,
        )

    def fetch(
        self,
        url: str,
        check: Callable[[Fetched], T],
        *,
        on_failed_attempt: Callable[[Fetched | None, BaseException], None] | None = None,
    ) -> tuple[Fetched, T]:
        """GET ``url`` and run ``check`` on it, retrying both within the policy's bounds.

        ``check`` parses the response and raises ``PageError`` for pages that are not what we
        asked for; the retryable kinds (flood control, truncated or broken pages, server
        errors) are tried again. Non-retryable ones (login required, missing thread) and
        exhausted retries raise: ``PageError`` as is, network trouble as ``ForumUnavailable``.
        """
        attempts = 0
        last: dict[str, Fetched | None] = {"resp": None}
        started = self._monotonic()

        def attempt() -> tuple[Fetched, T]:
            nonlocal attempts
            attempts += 1
            last["resp"] = None
            try:
                fetched = self._get_once(url)
                fetched = Fetched(
                    fetched.url,
                    fetched.status,
                    fetched.headers,
                    fetched.body,
                    fetched.fetched_at,
                    attempts,
                )
                last["resp"] = fetched
                return fetched, check(fetched)
            except PageError as exc:
                # the forum's words may echo the request (a debug page showing the Cookie
                # header): scrubbed before any log line, crawl log row or message sees them
                self._scrub_error(exc)
                raise

        try:
            try:
                return attempt()
            except Exception as exc:
                if not _is_retryable(exc):
                    raise
                first = exc
            # the first attempt failed in a way worth another try: the retries take over from it
            return self._retrying(url, started, last, on_failed_attempt)(_replaying(first, attempt))
        except PageError:
            raise
        except (httpx.TransportError, RetryableStatus) as exc:
            self.stats.errors.append(describe_error(exc))
            reason = f"论坛暂时无法访问（{describe_error(exc)}，已尝试 {attempts} 次）"
            raise ForumUnavailable(self.scrub(f"{reason}：{_redact(url)}"), reason=reason) from exc

    def _retrying(
        self,
        url: str,
        started: float,
        last: dict[str, Fetched | None],
        on_failed_attempt: Callable[[Fetched | None, BaseException], None] | None,
    ) -> Callable[[Callable[[], T]], T]:
        """The retries of :meth:`fetch` within the policy's bounds (tenacity, loaded here: a
        fetch whose first attempt succeeds never needs it): exponential jittered waits, a
        ``Retry-After`` honoured up to its cap, at most ``max_attempts`` attempts and
        ``max_total_s`` seconds since ``started`` on the client's own clock."""
        from tenacity import (
            Retrying,
            retry_if_exception,
            stop_after_attempt,
            wait_exponential_jitter,
        )

        policy = self.policy

        def before_sleep(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            self.stats.retries += 1
            wait = state.next_action.sleep if state.next_action else 0
            # -v shows each retry; the command's own one line says how the crawl ended
            log.info(
                "第 %d 次请求失败（%s），%.1f 秒后重试：%s",
                state.attempt_number,
                describe_error(exc) if exc else "?",
                wait,
                _redact(url),
            )
            if on_failed_attempt and exc is not None:
                on_failed_attempt(last["resp"], exc)

        base_wait = wait_exponential_jitter(
            multiplier=policy.initial_wait_s, max=policy.max_wait_s, jitter=policy.jitter_s
        )

        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            computed = base_wait(state)
            if isinstance(exc, RetryableStatus) and exc.retry_after is not None:
                return min(max(computed, exc.retry_after), policy.max_retry_after_s)
            return computed

        out_of_attempts = stop_after_attempt(policy.max_attempts)

        def stop(state: RetryCallState) -> bool:
            # out of attempts, or of time measured on our own clock (so the bound holds with
            # an injected sleep too)
            return out_of_attempts(state) or self._monotonic() - started >= policy.max_total_s

        return Retrying(
            retry=retry_if_exception(_is_retryable),
            stop=stop,
            wait=wait,
            sleep=self._sleep,
            before_sleep=before_sleep,
            reraise=True,
        )

    def post_form(
        self,
        url: str,
        fields: Mapping[str, str],
        *,
        encoding: str = "utf-8",
        referer: str | None = None,
    ) -> Fetched:
        """POST ``fields`` once, percent-encoded in the forum's charset; redirects not followed.

        Raises ``UnicodeEncodeError`` before sending when a value cannot be written in
        ``encoding`` (a GBK forum cannot store an emoji), and httpx's ``TransportError`` as it
        comes: the caller decides what an interrupted POST means.
        """
        body = urlencode(dict(fields), encoding=encoding).encode("ascii")
        headers = self._headers()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        if referer:
            headers["Referer"] = referer
        self._wait_turn()
        self.stats.requests += 1
        resp = self.http.post(url, content=body, headers=headers, follow_redirects=False)
        # the form's fields (a post's text, a password) are never logged
        log.info("提交表单 %s：HTTP %d", self.scrub(_redact(url)), resp.status_code)
        if self.jar is not None:
            self.jar.update_from(resp)
        return Fetched(
            url=url,
            status=resp.status_code,
            headers={k.lower(): v for k, v in resp.headers.items()},
            body=resp.content,
            fetched_at=self._now(),
            attempts=1,
        )


def _http_date(raw: str | None) -> datetime | None:
    """An HTTP date with a real zone, or None (absent, ``-0000``/no zone, doubled, unparseable)."""
    if not raw:
        return None
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None or when.utcoffset() is None:
        return None  # "-0000", no zone, or two joined headers: the zone is not known
    return when


def _retry_after(resp: httpx.Response) -> float | None:
    raw = resp.headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        when = _http_date(raw)
        if when is None:
            return None
        return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _redact(url: str) -> str:
    """URLs we build carry no secrets, but never echo a formhash/auth/sid parameter."""
    if "?" not in url:
        return url
    head, _, query = url.partition("?")
    parts = []
    for item in query.split("&"):
        key = item.split("=", 1)[0]
        parts.append(f"{key}=***" if key.lower() in {"formhash", "auth", "sid", "hash"} else item)
    return head + "?" + "&".join(parts)


class TlsWhenNeeded(httpx.BaseTransport):
    """httpx's own transport, one per scheme, each made at its first request: the TLS one
    (certificates verified as httpx does by default) only when an ``https`` address is asked
    for. Making it loads the CA bundle, which costs more than starting Python does, in every
    cycle; a forum on plain ``http`` (the simulator, many a Discuz forum) never needs it.

    The ``http`` transport speaks no TLS (each scheme has its own connection pool and a
    request goes to its own scheme's), so its TLS context is never used: it is made without
    loading the bundle."""

    def __init__(self) -> None:
        self._transports: dict[str, httpx.HTTPTransport] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self._for(request.url.scheme).handle_request(request)

    def _for(self, scheme: str) -> httpx.HTTPTransport:
        tls = scheme == "https"
        key = "https" if tls else "http"
        if key not in self._transports:
            self._transports[key] = (
                httpx.HTTPTransport() if tls else httpx.HTTPTransport(verify=False)
            )
        return self._transports[key]

    def close(self) -> None:
        for transport in self._transports.values():
            transport.close()
        self._transports.clear()
