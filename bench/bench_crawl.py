"""Crawl benchmarks, measured side by side in one run (no politeness delay, in-process forum).

    python bench/bench_crawl.py [--posts 3000]

1. First crawl of a long thread from the simulator: posts/s end to end (fetch, parse, store).
Times are bansha's own: the simulator's time to render each page is measured and taken out.
2. A cycle's crawl with nothing new vs one with a new page: requests and time, as a ratio —
   the cost must follow what is new, not the thread's length.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipeline.discuz.client import DiscuzClient
from pipeline.discuz.crawl import Crawler, CrawlTarget, ForumConfig
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import open_store

TZ = ZoneInfo("Asia/Shanghai")
T0 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
NAMES = [f"玩家{i:02d}" for i in range(1, 25)]


def build(n_posts: int) -> tuple[ForumSim, SimClock]:
    clock = SimClock(T0 + timedelta(days=2))
    users = {"导演": 1, **{name: 100 + i for i, name in enumerate(NAMES)}}
    sim = ForumSim(users=users, clock=clock, floodctrl_s=0)
    sim.add_thread(1, "讨论帖", "导演", "第一天讨论帖", T0)
    for i in range(1, n_posts):
        text = f"第{i}楼：我觉得[b]{NAMES[(i * 7) % 24]}[/b]有问题。\n投票对象：{NAMES[i % 24]}"
        sim.add_post(1, NAMES[i % 24], text, T0 + timedelta(seconds=20 * i))
    return sim, clock


class TimedTransport(httpx.BaseTransport):
    """The simulator's transport, timing the forum's own work (rendering pages) apart."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.forum_s = 0.0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        start = time.perf_counter()
        response = self.inner.handle_request(request)
        response.read()
        self.forum_s += time.perf_counter() - start
        return response


def crawl_once(sim: ForumSim, db: Path, source: str) -> tuple[float, int, int]:
    """Seconds spent by bansha itself (the simulator's rendering time taken out)."""
    store = open_store(db)
    transport = TimedTransport(sim.transport())
    http = httpx.Client(transport=transport, follow_redirects=True)
    client = DiscuzClient(http, base_url=sim.base_url, min_interval_s=0)
    crawler = Crawler(client, store, ForumConfig(base_url=sim.base_url, tz=TZ, source=source))
    before = len(sim.requests)
    start = time.perf_counter()
    report = crawler.crawl([CrawlTarget(1)])
    elapsed = time.perf_counter() - start - transport.forum_s
    assert report.ok, report.errors
    new = report.threads[0].new_posts
    store.close()
    return elapsed, len(sim.requests) - before, new


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--posts", type=int, default=3000)
    args = ap.parse_args()
    print(f"模拟论坛：一个 {args.posts} 帖的主题（每页 10 帖）")
    for source in ("html", "mobile-api"):
        sim, clock = build(args.posts)
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "bench.db"
            first, req1, new1 = crawl_once(sim, db, source)
            idle, req2, _ = crawl_once(sim, db, source)
            for i in range(12):  # a new page and a bit
                sim.add_post(1, NAMES[i], f"新回复 {i}", clock() - timedelta(seconds=60 - i))
            busy, req3, new3 = crawl_once(sim, db, source)
        print(
            f"[{source}] 首次抓取：{new1} 帖，{req1} 次请求，bansha 用时 {first:.2f} 秒，"
            f"{new1 / first:,.0f} 帖/秒（取页、解析、入库；不含模拟论坛生成页面的时间）"
        )
        print(f"[{source}] 没有新内容的一轮：{req2} 次请求，{idle * 1000:.1f} 毫秒")
        print(f"[{source}] 有 {new3} 个新帖的一轮：{req3} 次请求，{busy * 1000:.1f} 毫秒")
        print(
            f"[{source}] 比值：首次 / 无新内容 = {first / idle:,.0f}×；"
            f"有新页 / 无新内容 = {busy / idle:.1f}×（请求 {req3}/{req2}）"
        )


if __name__ == "__main__":
    main()
