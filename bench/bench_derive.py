"""Re-derivation benchmark: a 24-player, 10-day game with 20,000 stored posts.

    python bench/bench_derive.py [--posts 20000]

Writes the posts straight into a fresh store (no HTML), then times ``derive`` — parse every vote,
decide validity, tally, count posts, raise flags — and ``write_derivation``. Target: the whole
re-derivation under 2 s on this machine (a benchmark, not a timed test).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from parsers.records import Post, ThreadPage
from pipeline.derive import derive, write_derivation
from pipeline.game.gamefile import parse_game
from pipeline.store import open_store

TZ = ZoneInfo("Asia/Shanghai")
START = datetime(2026, 12, 1, 10, 0, tzinfo=TZ)
NAMES = [f"玩家{i:02d}" for i in range(1, 25)]


def make_game(days: int):
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
                    "day": d + 1,
                    "opens": START + timedelta(days=d),
                    "closes": START + timedelta(days=d, hours=12),
                    "discussion": 1000 + 10 * d,
                    "vote": 1001 + 10 * d,
                    "progress": 1002 + 10 * d,
                }
                for d in range(days)
            ],
        },
        env={},
    )


def fill(store, game, n_posts: int, rng: random.Random) -> None:
    pid = 1
    per_day = n_posts // len(game.days)
    for day in game.days:
        posts: dict[int, list[Post]] = {day.discussion: [], day.vote: [], day.progress: []}
        span = (day.closes - day.opens).total_seconds()
        for i in range(per_day):
            who = rng.randrange(24)
            at = day.opens + timedelta(seconds=rng.uniform(0, span))
            if i < 30:  # votes, a change, a bad label now and then
                tid = day.vote
                target = NAMES[rng.randrange(24)]
                text = rng.choice(
                    [f"投票对象：{target}\n投票理由：跟票", f"投票给：{target}", "投票对象：弃权"]
                )
            elif i < 40:
                tid, text = day.progress, rng.choice(["申请加速", "申请延时", "路过"])
            else:
                tid, text = day.discussion, f"第{i}条发言，我怀疑{NAMES[rng.randrange(24)]}。"
            posts[tid].append(
                Post(
                    tid=tid,
                    pid=pid,
                    floor=None,
                    author=NAMES[who],
                    uid=100 + who,
                    posted_at=at,
                    message_html=text,
                    text=text,
                )
            )
            pid += 1
        for tid, items in posts.items():
            store.register_thread(tid, day=day.day, role=None)
            items.sort(key=lambda p: p.posted_at)
            page = ThreadPage(tid=tid, page=1, total_pages=1, posts=tuple(items))
            store.save_page(
                page,
                source="html",
                url=f"bench:{tid}",
                status=200,
                headers={},
                body=str(tid).encode(),
                fetched_at=START + timedelta(days=30),
                ppp=None,
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--posts", type=int, default=20000)
    ap.add_argument("--days", type=int, default=10)
    args = ap.parse_args()
    game = make_game(args.days)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        fill(store, game, args.posts, random.Random(2026))
        n = store.counts()["posts"]
        as_of = START + timedelta(days=args.days + 1)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            d = derive(game, store, as_of=as_of)
            t1 = time.perf_counter()
            best = min(best, t1 - t0)
        t0 = time.perf_counter()
        write_derivation(store, d, now=as_of)
        write_s = time.perf_counter() - t0
        votes = sum(len(r.verdicts) for r in d.days.values())
        print(
            f"24 名玩家、{args.days} 天、{n} 帖：重新推导（解析、判票、计票、发言数、违规）"
            f"{best:.2f} 秒（三次取最好），{n / best:,.0f} 帖/秒；写回 {write_s:.2f} 秒"
        )
        print(
            f"  共 {votes} 张票、{len(d.flags)} 条违规标记；目标：2 秒以内 —— "
            f"{'达到' if best + write_s < 2 else '未达到'}（{best + write_s:.2f} 秒）"
        )
        store.close()


if __name__ == "__main__":
    main()
