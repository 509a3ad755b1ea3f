"""The Discuz client: bounded retries with backoff, politeness interval, secrets kept out."""

from __future__ import annotations

import logging

import httpx
import pytest

from parsers.records import PageError, PageErrorKind
from pipeline.client import DiscuzClient, ForumUnavailable, RetryPolicy

COOKIE = "xx_2132_auth=TOPSECRET; xx_2132_saltkey=SALT"


class Clock:
    def __init__(self) -> None:
        self.t = 0.0
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)
        self.t += s


def make(handler, *, policy=None, interval=0.0, clock=None):
    clock = clock or Clock()
    http = httpx.Client(transport=httpx.MockTransport(handler))
    client = DiscuzClient(
        http,
        base_url="http://forum.test/",
        min_interval_s=interval,
        cookie=COOKIE,
        policy=policy or RetryPolicy(max_attempts=4, initial_wait_s=1, jitter_s=0),
        sleep=clock.sleep,
        monotonic=clock.monotonic,
    )
    return client, clock


def ok(f):
    return f.body


def test_retries_5xx_then_succeeds_with_backoff(caplog):
    answers = iter([500, 503, 200])

    def handler(request):
        return httpx.Response(next(answers), content=b"page")

    client, clock = make(handler)
    with caplog.at_level(logging.WARNING):
        fetched, body = client.fetch("http://forum.test/x", ok)
    assert body == b"page" and fetched.attempts == 3
    assert clock.sleeps == [1.0, 2.0]  # exponential backoff, jitter 0 here
    assert len([r for r in caplog.records if "重试" in r.getMessage()]) == 2


def test_429_honours_retry_after_within_bounds():
    answers = iter([httpx.Response(429, headers={"Retry-After": "7"}), httpx.Response(200)])
    client, clock = make(lambda r: next(answers))
    client.fetch("http://forum.test/x", ok)
    assert clock.sleeps == [7.0]


def test_attempts_are_bounded_and_the_error_is_chinese():
    calls = []

    def handler(request):
        calls.append(1)
        raise httpx.ConnectError("refused")

    client, _ = make(handler)
    with pytest.raises(ForumUnavailable, match="论坛暂时无法访问（无法连接论坛，已尝试 4 次）"):
        client.fetch("http://forum.test/x", ok)
    assert len(calls) == 4


def test_total_time_is_bounded():
    client, clock = make(
        lambda r: httpx.Response(503),
        policy=RetryPolicy(max_attempts=100, max_total_s=10, initial_wait_s=4, jitter_s=0),
    )
    with pytest.raises(ForumUnavailable, match="已尝试 3 次"):
        client.fetch("http://forum.test/x", ok)
    assert clock.sleeps == [4.0, 8.0]  # 12 s waited > 10 s: no third wait


def test_retryable_page_errors_are_retried_and_fatal_ones_are_not():
    bodies = iter([b"flood", b"fine"])

    def check(f):
        if f.body == b"flood":
            raise PageError(PageErrorKind.RATE_LIMITED, "您浏览的太快了")
        if f.body == b"login":
            raise PageError(PageErrorKind.LOGIN_REQUIRED)
        return f.body

    client, _ = make(lambda r: httpx.Response(200, content=next(bodies)))
    assert client.fetch("http://forum.test/x", check)[1] == b"fine"

    calls = []

    def login_handler(request):
        calls.append(1)
        return httpx.Response(200, content=b"login")

    client, _ = make(login_handler)
    with pytest.raises(PageError) as err:
        client.fetch("http://forum.test/x", check)
    assert err.value.kind is PageErrorKind.LOGIN_REQUIRED and len(calls) == 1


def test_minimum_interval_between_requests():
    client, clock = make(lambda r: httpx.Response(200), interval=1.5)
    for _ in range(3):
        client.fetch("http://forum.test/x", ok)
    assert clock.sleeps == [1.5, 1.5]


def test_cookie_is_sent_but_never_logged(caplog):
    seen = []

    def handler(request):
        seen.append(request.headers.get("cookie"))
        return httpx.Response(502)

    client, _ = make(handler)
    with caplog.at_level(logging.DEBUG), pytest.raises(ForumUnavailable) as err:
        client.fetch("http://forum.test/forum.php?mod=x&formhash=abc123", ok)
    assert seen[0] == COOKIE
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("pipeline"))
    text = ours + str(err.value)
    assert "TOPSECRET" not in text and "abc123" not in text


def test_the_session_jar_sends_back_what_the_forum_set_and_survives_a_redirect():
    """Discuz's anti-CC cookies (lastrequest, visitcode) must come back with the login cookie,
    and a same-host redirect keeps the session; another host never gets it."""
    from pipeline.client import SessionJar

    seen = []

    def handler(request):
        seen.append((request.url.host, request.url.path, request.headers.get("cookie", "")))
        if request.url.path == "/first":
            return httpx.Response(200, headers={"Set-Cookie": "xx_lastrequest=abc; path=/"})
        if request.url.path == "/moved":
            return httpx.Response(301, headers={"Location": "http://forum.test/landed"})
        if request.url.path == "/away":
            return httpx.Response(302, headers={"Location": "http://other.test/x"})
        return httpx.Response(200, content=b"ok")

    http = httpx.Client(transport=httpx.MockTransport(handler))
    client = DiscuzClient(
        http,
        base_url="http://forum.test/",
        min_interval_s=0,
        jar=SessionJar(COOKIE),
        sleep=lambda s: None,
    )
    client.fetch("http://forum.test/first", ok)
    client.fetch("http://forum.test/moved", ok)
    assert "xx_lastrequest=abc" in seen[1][2] and "TOPSECRET" in seen[1][2]
    assert seen[2][1] == "/landed" and "TOPSECRET" in seen[2][2]  # the redirect kept it
    client.fetch("http://forum.test/away", ok)
    assert all(host == "forum.test" for host, _, _ in seen)  # never followed to other.test
