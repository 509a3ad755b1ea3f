"""The Discuz client: bounded retries with backoff, politeness interval, secrets kept out."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from parsers.records import PageError, PageErrorKind
from pipeline.discuz.client import DiscuzClient, ForumUnavailable, RetryPolicy

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
    with caplog.at_level(logging.INFO):
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
    from pipeline.discuz.client import SessionJar

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


# --------------------------------------------------------------------------- the forum's clock


@pytest.mark.parametrize(
    "date",
    [
        "Tue, 01 Dec 2026 10:00:00 -0000",  # RFC 2822: "zone not known"
        "Tue, 01 Dec 2026 10:00:00",  # no zone at all
        "Tue, 01 Dec 2026 10:00:00 GMT, Tue, 01 Dec 2026 10:00:01 GMT",  # doubled, joined
        "yesterday",
        "",
    ],
)
def test_a_date_header_without_a_usable_zone_falls_back_to_the_fetch_time(date):
    """An aware time always, never "can't subtract offset-naive and
    offset-aware datetimes"."""
    from datetime import UTC, datetime

    from pipeline.discuz.client import Fetched

    fetched_at = datetime(2026, 12, 1, 2, 0, 5, tzinfo=UTC)
    f = Fetched("u", 200, {"date": date} if date else {}, b"", fetched_at, 1)
    assert f.server_time == fetched_at and f.server_time.tzinfo is not None
    assert f.server_time - f.fetched_at == timedelta(0)


def test_a_date_header_with_a_zone_is_the_forums_clock():
    from datetime import UTC, datetime

    from pipeline.discuz.client import Fetched

    fetched_at = datetime(2026, 12, 1, 2, 0, 5, tzinfo=UTC)
    f = Fetched("u", 200, {"date": "Tue, 01 Dec 2026 10:00:00 +0800"}, b"", fetched_at, 1)
    assert f.server_time == datetime(2026, 12, 1, 2, 0, 0, tzinfo=UTC)
    assert f.server_time - f.fetched_at == timedelta(seconds=-5)


def test_a_retry_after_date_without_a_zone_does_not_crash():
    answers = iter(
        [
            httpx.Response(429, headers={"Retry-After": "Tue, 01 Dec 2026 10:00:00 -0000"}),
            httpx.Response(200, content=b"ok"),
        ]
    )
    client, clock = make(lambda r: next(answers))
    assert client.fetch("http://forum.test/x", ok)[1] == b"ok"
    assert clock.sleeps == [1.0]  # the usual backoff


def test_posting_survives_a_date_header_without_a_zone(tmp_path):
    """The poster measures the forum's clock skew from every page it reads (``_skew``)."""
    from pipeline.discuz.poster import Poster
    from pipeline.drafts.publish import publish_approved
    from pipeline.game.gamefile import load_game
    from pipeline.sim.simulator import ForumSim, SimClock, script_now
    from pipeline.store import open_store

    root = Path(__file__).resolve().parents[3] / "config" / "games"
    now = script_now(root / "demo_posts.toml")
    assert now is not None
    clock = SimClock(now)
    sim = ForumSim.from_script(root / "demo.toml", root / "demo_posts.toml", clock)
    game = load_game(root / "demo.toml", env={}, check_login=False)
    store = open_store(tmp_path / "game.db")
    inner = sim.transport()

    def odd_date(request: httpx.Request) -> httpx.Response:
        resp = inner.handle_request(request)
        headers = [(k, v) for k, v in resp.headers.multi_items() if k.lower() != "date"]
        headers += [("Date", "Thu, 03 Dec 2026 01:00:00 -0000")] * 2  # unknown zone, doubled
        resp.read()
        return httpx.Response(resp.status_code, headers=headers, content=resp.content)

    body = "[b]测试[/b]：论坛的 Date 头没有时区时照样发帖。"
    stamp = clock().isoformat()
    with store.atomic():
        store.db.execute(
            "INSERT INTO drafts(kind, day, key, tid, action, body, body_hash, generated_body, "
            "state, created_at, updated_at, approved_at) "
            "VALUES ('result', 2, 'result:2', 2012, 'reply', ?, 'h', ?, 'approved', ?, ?, ?)",
            [body, body, stamp, stamp, stamp],
        )
    poster = Poster.for_game(
        game,
        httpx.Client(transport=httpx.MockTransport(odd_date)),
        env={"BANSHA_COOKIE": sim.login_cookie("导演")},
        min_interval_s=0,
        sleep=lambda s: clock.advance(s),
        now=clock,
    )
    [result] = publish_approved(store, game, poster, now=clock(), clock=clock)
    assert result.ok and result.status == "posted", result.line()
    assert [p for p in sim.thread_pids(2012) if sim.stored_message(p) == body] == [result.pid]
    store.close()


# --------------------------------------------------------------------------- redirect loops


def test_a_redirect_loop_is_named_not_an_empty_page():
    from parsers.pagecheck import REDIRECT_LOOP_ZH, UnusablePage

    calls = []

    def loop(request):
        calls.append(1)
        return httpx.Response(302, headers={"Location": str(request.url)})

    client, _ = make(loop, policy=RetryPolicy(max_attempts=2, initial_wait_s=1, jitter_s=0))
    with pytest.raises(UnusablePage) as caught:
        client.fetch("http://forum.test/forum.php?mod=viewthread&tid=4", ok)
    assert caught.value.name_zh == REDIRECT_LOOP_ZH
    assert "空白页面" not in caught.value.message_zh
    assert len(calls) == 2 * 6  # each attempt: the request and 5 redirects followed


def test_one_redirect_to_itself_is_followed():
    """The real X3.5 answered the first view after a delete with a 302 to itself (fixture
    misc/discussion_t5_p2_guest_302_selfredirect.html): that is no loop."""
    answers = iter(
        [
            httpx.Response(302, headers={"Location": "http://forum.test/forum.php?tid=5"}),
            httpx.Response(200, content=b"page"),
        ]
    )
    client, _ = make(lambda r: next(answers))
    assert client.fetch("http://forum.test/forum.php?tid=5", ok)[1] == b"page"
