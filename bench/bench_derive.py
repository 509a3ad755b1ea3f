"""Re-derivation benchmark: a 24-player, 10-day game with 20,000 stored posts.

    python bench/bench_derive.py [--posts 20000] [--baseline REV] [--scale 5000,...,80000]

Writes the posts straight into a fresh store (no HTML), then times ``derive`` — parse every vote,
decide validity, tally, count posts, raise flags — and ``write_derivation`` (best of ``--repeat``).

``--baseline REV`` runs the same measurement, in the same run, against the code of git revision
REV (``git archive`` into a temporary folder) and prints both times, their ratio and whether the
verdicts are identical (a digest of every derived row). Each side runs in a child process that
imports only the tree under test (``bench/tree.py``); the two alternate ``--rounds`` times and
each side keeps its best time.

``--scale`` re-derives games of several sizes (the same 10 days) and prints seconds, microseconds
per post and the per-post cost of the largest over the smallest (linear: about 1×).

Targets: ≤ ½ the time before that work on the same machine, linear from 5,000
to 80,000 posts (a benchmark, not a timed test).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from tree import ROOT, archive, check, child, pin

HERE = Path(__file__).resolve()
TZ = ZoneInfo("Asia/Shanghai")
START = datetime(2026, 12, 1, 10, 0, tzinfo=TZ)
NAMES = [f"玩家{i:02d}" for i in range(1, 25)]


def make_game(days: int) -> Any:
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


def fill(store: Any, game: Any, n_posts: int, rng: random.Random) -> None:
    from parsers.records import Post, ThreadPage

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


def measure(n_posts: int, days: int, repeat: int) -> dict[str, Any]:
    """Fill a store, re-derive it ``repeat`` times: the best time, the write-back, a digest."""
    from pipeline.derive import derive, derived_rows, write_derivation
    from pipeline.store import open_store

    game = make_game(days)
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        fill(store, game, n_posts, random.Random(2026))
        n = store.counts()["posts"]
        as_of = START + timedelta(days=days + 1)
        best = float("inf")
        for _ in range(repeat):
            t0 = time.perf_counter()
            d = derive(game, store, as_of=as_of)
            best = min(best, time.perf_counter() - t0)
        t0 = time.perf_counter()
        write_derivation(store, d, now=as_of)
        write_s = time.perf_counter() - t0
        rows = json.dumps(derived_rows(d), ensure_ascii=False, sort_keys=True, default=str)
        store.close()
    return {
        "posts": n,
        "derive_s": best,
        "write_s": write_s,
        "votes": sum(len(r.verdicts) for r in d.days.values()),
        "flags": len(d.flags),
        "digest": hashlib.sha256(rows.encode()).hexdigest()[:16],
    }


def report(m: dict[str, Any], days: int, label: str) -> None:
    n, best = m["posts"], m["derive_s"]
    print(
        f"{label}24 名玩家、{days} 天、{n} 帖：重新推导（解析、判票、计票、发言数、违规）"
        f"{best:.3f} 秒（取最好），{n / best:,.0f} 帖/秒；写回 {m['write_s']:.3f} 秒；"
        f"{m['votes']} 张票、{m['flags']} 条违规标记"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--posts", type=int, default=20000)
    ap.add_argument("--days", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=3, help="derivations per store (best kept)")
    ap.add_argument("--baseline", metavar="REV", help="also measure git revision REV, side by side")
    ap.add_argument("--rounds", type=int, default=2, help="alternations with --baseline")
    ap.add_argument("--scale", help="post counts to check linearity, e.g. 5000,20000,80000")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # bench/tree.py: imports come from the tree the parent gave
        pin(args.tree)
        result = measure(args.posts, args.days, args.repeat)
        check(args.tree)
        print(json.dumps(result))
        return

    def run(tree: Path, posts: int) -> dict[str, Any]:
        return child(HERE, tree, ["--posts", str(posts), "--days", str(args.days), *repeat])

    repeat = ["--repeat", str(args.repeat)]
    if args.scale:
        sizes = [int(x) for x in args.scale.split(",")]
        found = [run(ROOT, n) for n in sizes]
        for m in found:
            print(
                f"scale {m['posts']:>6} posts: derive {m['derive_s']:.3f} s, "
                f"{m['derive_s'] / m['posts'] * 1e6:.1f} µs/post"
            )
        lo, hi = found[0], found[-1]
        per = (hi["derive_s"] / hi["posts"]) / (lo["derive_s"] / lo["posts"])
        print(
            f"per-post cost {hi['posts']}/{lo['posts']} posts: {per:.2f}× "
            f"(linear ≈ 1×; time {hi['derive_s'] / lo['derive_s']:.1f}× for "
            f"{hi['posts'] / lo['posts']:.0f}× the posts)"
        )
        return
    if not args.baseline:
        report(run(ROOT, args.posts), args.days, "")
        return
    with tempfile.TemporaryDirectory() as tmp:
        base_tree = archive(args.baseline, Path(tmp))
        base: dict[str, Any] | None = None
        now: dict[str, Any] | None = None
        for _ in range(args.rounds):
            b = run(base_tree, args.posts)
            c = run(ROOT, args.posts)
            base = b if base is None or b["derive_s"] < base["derive_s"] else base
            now = c if now is None or c["derive_s"] < now["derive_s"] else now
    assert base is not None and now is not None
    report(base, args.days, f"[{args.baseline}] ")
    report(now, args.days, "[工作区] ")
    same = base["digest"] == now["digest"]
    print(
        f"derive {now['posts']} posts now/{args.baseline}: "
        f"{now['derive_s'] / base['derive_s']:.2f}× (target ≤ 0.5×; "
        f"{now['derive_s']:.3f} s / {base['derive_s']:.3f} s); verdicts "
        f"{'identical' if same else 'DIFFER'} (digest {now['digest']} / {base['digest']})"
    )


if __name__ == "__main__":
    main()
