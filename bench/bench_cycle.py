"""Cycle benchmarks, measured side by side in one run (simulator in process, no waits).

    python bench/bench_cycle.py [--small 100] [--large 10000] [--idle 20]

A one-day, 24-player m135 game whose discussion thread holds ``--small`` or ``--large`` posts
(plus a vote and a progress thread) is crawled once by ``run_cycle``; then:

1. nothing-new cycles (crawl → derive → write; nothing drafted): bansha's own time on the large
   game vs the small one (the simulator's time to render pages is taken out) —
   ``nothing-new cycle 10000/100 posts: R×`` (target ≤ 1.5×; it depends on deriving only on
   change);
2. a cycle with one new page vs a nothing-new cycle (time);
3. what the store grows by (the .db and its -wal, after a TRUNCATE checkpoint) per nothing-new
   cycle — ``store bytes per nothing-new cycle: N B`` (target ≤ 4 KiB) — and per new page.

SQLite grows its file a page (4 KiB) at a time: the bytes are averaged over ``--idle`` cycles.

4. a cycle with one new page on the large game vs the small one, side by side —
   ``one-new-page cycle 10000/100 posts: R×`` (a cycle should cost what is new;
   today it re-derives the day, whose discussion thread is the whole game).

``--baseline REV`` measures the same cycles, in the same run, on the code of git revision REV
(``bench/tree.py``: each side in a child process that imports only its own tree) and prints the
one-new-page cycle of both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from tree import ROOT, archive, check, child, pin

if TYPE_CHECKING:  # bansha is imported where used: a child pins its tree first (bench/tree.py)
    from pipeline.discuz.crawl import CrawlTarget
    from pipeline.game.gamefile import Game
    from pipeline.sim.simulator import ForumSim, SimClock
    from pipeline.store import Store

HERE = Path(__file__).resolve()

TZ = ZoneInfo("Asia/Shanghai")
OPENS = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)
CLOSES = OPENS + timedelta(days=3)  # open all through the benchmark
NAMES = [f"玩家{i:02d}" for i in range(1, 25)]
DISCUSSION, VOTE, PROGRESS = 1000, 1001, 1002
PPP = 10  # Discuz's default posts per page
CYCLE = timedelta(minutes=5)


def make_game() -> Game:
    from pipeline.game.gamefile import parse_game

    return parse_game(
        {
            "game": {
                "id": "bench",
                "title": "基准",
                "ruleset": "m135",
                "timezone": "Asia/Shanghai",
            },
            "forum": {"base_url": "http://127.0.0.1:8080/"},
            "director": {"names": ["导演"], "uids": [1]},
            "players": [{"name": n, "uid": 100 + i} for i, n in enumerate(NAMES)],
            "days": [
                {
                    "day": 1,
                    "opens": OPENS,
                    "closes": CLOSES,
                    "discussion": DISCUSSION,
                    "vote": VOTE,
                    "progress": PROGRESS,
                }
            ],
        },
        env={},
    )


def build(n_posts: int) -> tuple[ForumSim, SimClock]:
    """The forum of a game whose discussion thread has ``n_posts`` posts."""
    from pipeline.sim.simulator import ForumSim, SimClock

    clock = SimClock(OPENS + timedelta(hours=1))
    users = {"导演": 1, **{name: 100 + i for i, name in enumerate(NAMES)}}
    sim = ForumSim(users=users, clock=clock, floodctrl_s=0, ppp=PPP)
    sim.add_thread(DISCUSSION, "第一天讨论帖", "导演", "第一天讨论帖", OPENS)
    sim.add_thread(VOTE, "第一天投票帖", "导演", "投票格式：投票对象：某某", OPENS)
    sim.add_thread(PROGRESS, "第一天进程帖", "导演", "进程帖", OPENS)
    step = 3000 / max(n_posts, 1)  # every post within the game's first hour
    for i in range(1, n_posts):
        text = f"第{i}楼：我觉得[b]{NAMES[(i * 7) % 24]}[/b]有问题，大家注意。"
        sim.add_post(DISCUSSION, NAMES[i % 24], text, OPENS + timedelta(seconds=step * i))
    for i, name in enumerate(NAMES):
        at = OPENS + timedelta(seconds=60 + i)
        sim.add_post(VOTE, name, f"投票对象：{NAMES[(i + 1) % 24]}\n投票理由：跟票", at)
    return sim, clock


class Bench:
    def __init__(self, n_posts: int, db: Path) -> None:
        from bench_crawl import TimedTransport

        from pipeline.store import open_store

        self.sim, self.clock = build(n_posts)
        self.game = make_game()
        self.db = db
        self.store: Store = open_store(db)
        self.transport = TimedTransport(self.sim.transport())
        self.requests = 0
        self.new_posts = 0

    def crawler(self) -> Callable[[list[CrawlTarget], bool], Any]:
        import httpx

        from pipeline.discuz.client import DiscuzClient, RetryPolicy
        from pipeline.discuz.crawl import Crawler, ForumConfig

        def crawl(targets: list[CrawlTarget], full: bool) -> Any:
            http = httpx.Client(transport=self.transport, follow_redirects=True)
            client = DiscuzClient(
                http,
                base_url=self.sim.base_url,
                min_interval_s=0,
                policy=RetryPolicy(initial_wait_s=0.01, jitter_s=0),
                sleep=lambda s: None,
            )
            forum = ForumConfig(base_url=self.sim.base_url, tz=TZ)
            report = Crawler(client, self.store, forum).crawl(targets, full=full)
            self.new_posts += sum(t.new_posts for t in report.threads)
            return report

        return crawl

    def cycle(self) -> float:
        """One cycle 5 minutes after the last; bansha's own seconds."""
        from pipeline.cycle import run_cycle

        now = self.clock.advance(CYCLE.total_seconds())
        before_forum, before_req = self.transport.forum_s, len(self.sim.requests)
        start = time.perf_counter()
        report = run_cycle(self.game, self.store, now=now, crawl=self.crawler())
        elapsed = time.perf_counter() - start - (self.transport.forum_s - before_forum)
        assert not report.errors, report.errors
        self.requests = len(self.sim.requests) - before_req
        return elapsed

    def size(self) -> int:
        """The store's bytes on disk, its write-ahead log checkpointed into the main file."""
        self.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return sum(
            Path(f"{self.db}{suffix}").stat().st_size
            for suffix in ("", "-wal")
            if Path(f"{self.db}{suffix}").exists()
        )

    def new_page(self) -> None:
        """A page's worth of new replies in the discussion thread, in the last 5 minutes."""
        now = self.clock()
        for i in range(PPP):
            self.sim.add_post(
                DISCUSSION,
                NAMES[i],
                f"新回复 {i}：我投{NAMES[i + 1]}",
                now - timedelta(seconds=60 - i),
            )


def measure(n_posts: int, idle_cycles: int, new_pages: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        b = Bench(n_posts, Path(tmp) / "bench.db")
        b.cycle()  # the first crawl: every page
        first_posts = b.new_posts
        b.cycle()  # settle (the first nothing-new cycle may still write derived rows)
        idle_times, sizes = [], [b.size()]
        idle_requests = 0
        for _ in range(idle_cycles):
            b.new_posts = 0
            idle_times.append(b.cycle())
            assert b.new_posts == 0
            idle_requests = b.requests
            sizes.append(b.size())
        busy_times, busy_sizes = [], [sizes[-1]]
        for _ in range(new_pages):
            b.new_page()
            b.new_posts = 0
            busy_times.append(b.cycle())
            assert b.new_posts == PPP, b.new_posts
            busy_sizes.append(b.size())
        b.store.close()
    return {
        "posts": first_posts,
        "idle_s": statistics.median(idle_times),
        "idle_requests": idle_requests,
        "idle_bytes": (sizes[-1] - sizes[0]) / idle_cycles,
        "busy_s": statistics.median(busy_times),
        "page_bytes": (busy_sizes[-1] - busy_sizes[0]) / new_pages,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", type=int, default=100)
    ap.add_argument("--large", type=int, default=10000)
    ap.add_argument("--idle", type=int, default=20, help="nothing-new cycles per game")
    ap.add_argument("--pages", type=int, default=5, help="cycles with one new page per game")
    ap.add_argument("--baseline", metavar="REV", help="also measure git revision REV, side by side")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # bench/tree.py: imports come from the tree the parent gave
        pin(args.tree)
        found = [measure(n, args.idle, args.pages) for n in (args.small, args.large)]
        check(args.tree)
        print(json.dumps(found))
        return
    argv = ["--small", str(args.small), "--large", str(args.large)]
    argv += ["--idle", str(args.idle), "--pages", str(args.pages)]
    small, large = child(HERE, ROOT, argv)
    print(
        f"模拟论坛：24 名玩家的一天，讨论帖 {args.small} / {args.large} 帖（每页 {PPP} 帖），"
        "每轮间隔 5 分钟；时间是 bansha 自己的（不含模拟论坛生成页面的时间）"
    )
    for m in (small, large):
        print(
            f"  [{m['posts']:.0f} 帖] 没有新内容的一轮 {m['idle_s'] * 1000:.0f} 毫秒"
            f"（{m['idle_requests']:.0f} 次请求）；有一页新帖的一轮 {m['busy_s'] * 1000:.0f} 毫秒；"
            f"数据库每轮增加 {m['idle_bytes']:,.0f} 字节（无新内容）/ "
            f"{m['page_bytes']:,.0f} 字节（一页新帖）"
        )
    ratio = large["idle_s"] / small["idle_s"]
    print(
        f"nothing-new cycle {args.large}/{args.small} posts: {ratio:.1f}× (target ≤ 1.5×; "
        f"{large['idle_s'] * 1000:.0f} ms / {small['idle_s'] * 1000:.0f} ms; "
        "it follows from deriving only on change)"
    )
    print(
        f"one-new-page cycle {args.large}/{args.small} posts: "
        f"{large['busy_s'] / small['busy_s']:.1f}× ({large['busy_s'] * 1000:.0f} ms / "
        f"{small['busy_s'] * 1000:.0f} ms; the day is re-derived: its discussion thread is read "
        "whole)"
    )
    for m in (small, large):
        print(
            f"one-new-page cycle / nothing-new cycle ({m['posts']:.0f} posts): "
            f"{m['busy_s'] / m['idle_s']:.1f}×"
        )
    for m in (small, large):
        print(
            f"store bytes per nothing-new cycle: {m['idle_bytes']:,.0f} B (target ≤ 4 KiB, "
            f"{'met' if m['idle_bytes'] <= 4096 else 'NOT met'}; {m['posts']:.0f} posts, "
            f"{m['idle_requests']:.0f} fetches per cycle)"
        )
    for m in (small, large):
        print(f"store bytes per new page: {m['page_bytes']:,.0f} B ({m['posts']:.0f} posts)")
    if args.baseline:
        with tempfile.TemporaryDirectory() as tmp:
            b_small, b_large = child(HERE, archive(args.baseline, Path(tmp)), argv)
        for b, m in ((b_small, small), (b_large, large)):
            print(
                f"one-new-page cycle {m['posts']:.0f} posts now/{args.baseline}: "
                f"{m['busy_s'] / b['busy_s']:.2f}× ({m['busy_s'] * 1000:.0f} ms / "
                f"{b['busy_s'] * 1000:.0f} ms)"
            )


if __name__ == "__main__":
    main()
