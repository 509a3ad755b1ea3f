"""A forum that is not usable is asked once per cycle and said once.

No answer at all, random bytes and a redirect loop all mean "the forum is down right now": the
crawl stops at the first of them (``CrawlReport.down``), the cycle re-reads no closed day and no
first round, and its errors say the cause once — named for what it is ("重定向循环",
"不是论坛页面"), never "空白页面" or "被截断".
"""

from __future__ import annotations

import re
import tomllib
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from parsers.pagecheck import NOT_FORUM_ZH, REDIRECT_LOOP_ZH, UnusablePage
from parsers.records import PageError
from pipeline.cycle import closed_days_to_reread, first_rounds_to_reread, run_cycle
from pipeline.discuz.client import DiscuzClient, RetryPolicy
from pipeline.discuz.crawl import Crawler, CrawlReport, CrawlTarget, ForumConfig, ThreadResult
from pipeline.game.gamefile import load_game, parse_game
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"
M209 = ROOT / "config" / "games" / "m209.toml"
TZ = load_game(GAME, env={}).game.tz
DAY2_NOON = datetime(2026, 12, 2, 12, 30, tzinfo=TZ)  # day 1 closed, not re-read yet
#: what one request to a dead forum costs (a connect timeout), on the injected clock
CONNECT_TIMEOUT_S = 20.0


class Clock:
    """The client's clock: ``sleep`` and every request advance it, nothing really waits."""

    def __init__(self) -> None:
        self.t = 0.0

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def crawl_with(transport: httpx.BaseTransport, store, clock: Clock, policy: RetryPolicy):
    def crawl(targets, full):
        client = DiscuzClient(
            httpx.Client(transport=transport),
            base_url="http://127.0.0.1:8080/",
            min_interval_s=0,
            policy=policy,
            sleep=clock.sleep,
            monotonic=clock.monotonic,
        )
        forum = ForumConfig(base_url="http://127.0.0.1:8080/", tz=TZ)
        return Crawler(client, store, forum).crawl(targets, full=full)

    return crawl


@pytest.fixture
def demo(tmp_path):
    game = load_game(GAME, env={})
    sim = ForumSim.from_script(GAME, SCRIPT, SimClock(DAY2_NOON))
    store = open_store(tmp_path / "demo.db")
    yield game, sim, store
    store.close()


def test_a_dead_forum_is_tried_once_per_cycle_and_said_once(demo):
    game, _sim, store = demo
    assert closed_days_to_reread(game, store, DAY2_NOON) == [1]
    clock = Clock()
    requests: list[str] = []

    def refused(request: httpx.Request) -> httpx.Response:
        requests.append(str(request.url))
        clock.t += CONNECT_TIMEOUT_S
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    policy = RetryPolicy()  # the defaults cron runs with: 5 attempts, 120 s in all
    report = run_cycle(
        game,
        store,
        now=DAY2_NOON,
        crawl=crawl_with(httpx.MockTransport(refused), store, clock, policy),
    )
    assert len(requests) == policy.max_attempts  # one series of attempts, then nothing more
    assert clock.t <= policy.max_total_s + CONNECT_TIMEOUT_S  # not once more per closed day
    assert report.down is not None and "无法连接论坛" in report.down
    said = [line for line in report.errors if "无法连接论坛" in line]
    assert len(said) == 1, report.errors
    assert any("未抓取（论坛无法访问" in line for line in report.errors)
    assert report.full_reads == []
    assert closed_days_to_reread(game, store, DAY2_NOON) == [1]  # re-read when it is back
    assert any("第 1 天" in line and "不重读" in line for line in report.errors)


@pytest.mark.parametrize(
    ("fault", "name", "wrong"),
    [("garbage", NOT_FORUM_ZH, "被截断"), ("redirect_loop", REDIRECT_LOOP_ZH, "空白页面")],
)
def test_garbage_and_redirect_loops_count_as_down_and_are_named(demo, fault, name, wrong):
    game, sim, store = demo
    sim.faults.add(fault, count=10_000)
    clock = Clock()
    policy = RetryPolicy(max_attempts=3, initial_wait_s=1, jitter_s=0)
    report = run_cycle(
        game, store, now=DAY2_NOON, crawl=crawl_with(sim.transport(), store, clock, policy)
    )
    assert report.down is not None and report.down.startswith(name)
    said = [line for line in report.errors if name in line]
    assert len(said) == 1, report.errors
    assert not any(wrong in line for line in report.errors)
    assert report.full_reads == []
    viewthread = [r for r in sim.requests if r.query.get("mod") == "viewthread"]
    assert any("未抓取（论坛没有给出可用的页面" in line for line in report.errors)
    hops = 6 if fault == "redirect_loop" else 1  # the first request and 5 redirects followed
    assert len(viewthread) == policy.max_attempts * hops  # one thread, one series
    assert not any(r.query.get("module") for r in sim.requests)  # no fallback to the API
    assert store.get_meta("mobile_api") is None


def test_a_problem_of_one_thread_is_not_the_forum_being_down(demo):
    _game, sim, store = demo
    sim.faults.add("login_required", count=1, match="tid=2001")
    report = crawl_with(sim.transport(), store, Clock(), RetryPolicy(max_attempts=2))(
        [CrawlTarget(2001, 1, "discussion"), CrawlTarget(2002, 1, "vote")], False
    )
    assert report.down is None
    assert report.threads[0].error and "需要登录" in report.threads[0].error
    assert report.threads[1].error is None and report.threads[1].new_posts > 0


def _m209_with_first_round():
    text = M209.read_text(encoding="utf-8")
    for key in ("first_vote", "first_closes"):
        text = re.sub(rf"^# ({key} = )", r"\1", text, flags=re.M)
    text = re.sub(r"^# (vote = 40122)", "", text, flags=re.M)
    return parse_game(tomllib.loads(text), source="m209.toml", env={}, check_login=False)


def test_no_closed_day_or_first_round_is_reread_when_the_forum_is_down(tmp_path):
    game = _m209_with_first_round()
    now = datetime(2026, 12, 6, 16, 0, tzinfo=TZ)  # days 1, 2 closed; day 3's first round over
    store = open_store(tmp_path / "m209.db")
    assert closed_days_to_reread(game, store, now) == [1, 2]
    assert first_rounds_to_reread(game, store, now) == [3]
    calls: list[bool] = []

    def dead(targets, full):
        calls.append(full)
        first, *rest = targets
        return CrawlReport(
            "x",
            [ThreadResult(first.tid, error="论坛暂时无法访问（无法连接论坛，已尝试 5 次）：…")]
            + [ThreadResult(t.tid, error="未抓取（论坛无法访问）", skipped=True) for t in rest],
            down="论坛暂时无法访问（无法连接论坛，已尝试 5 次）",
        )

    report = run_cycle(game, store, now=now, crawl=dead)
    assert calls == [False]  # the first crawl only
    assert report.down == "论坛暂时无法访问（无法连接论坛，已尝试 5 次）"
    assert len([e for e in report.errors if "无法连接论坛" in e]) == 1
    assert first_rounds_to_reread(game, store, now) == [3]
    store.close()


def test_httpx_too_many_redirects_is_a_redirect_loop():
    class Following(httpx.Client):
        """An httpx client that follows redirects itself, whatever it is asked."""

        def get(self, url, **kw):  # type: ignore[override]
            kw["follow_redirects"] = True
            return super().get(url, **kw)

    def loop(request: httpx.Request) -> httpx.Response:
        return httpx.Response(302, headers={"Location": str(request.url)})

    client = DiscuzClient(
        Following(transport=httpx.MockTransport(loop), max_redirects=3),
        base_url="http://forum.test/",
        min_interval_s=0,
        policy=RetryPolicy(max_attempts=2, initial_wait_s=0, jitter_s=0),
        sleep=lambda s: None,
    )
    with pytest.raises(UnusablePage) as caught:
        client.fetch("http://forum.test/forum.php?mod=viewthread&tid=1", lambda f: f.body)
    assert caught.value.name_zh == REDIRECT_LOOP_ZH
    assert caught.value.message_zh.startswith("重定向循环")
    assert isinstance(caught.value, PageError)


def test_the_cycle_says_how_long_it_waited_for_request_pacing(demo):
    """A slow cycle that was only waiting out ``min_interval_s`` says so in its log."""
    game, _sim, store = demo

    def paced(targets, full):
        return CrawlReport(
            "x", [ThreadResult(t.tid, pages_fetched=2) for t in targets], requests=8, paced_s=7.0
        )

    report = run_cycle(game, store, now=DAY2_NOON, crawl=paced)
    assert report.requests == 16 and report.paced_s == 14.0  # the crawl and the day-1 re-read
    assert "读取论坛 16 次，按请求间隔（[forum] min_interval_s）共等待 14 秒" in report.lines()
