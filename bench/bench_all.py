"""Every cost figure of bansha beside its goal, measured in one run.

    python bench/bench_all.py [--rounds 3] [--sizes 100,1000,10000,30000] [--quick]

1. The cycle cron runs, on bench/bench_cycle.py's one-day, 24-player m135 game whose discussion
   thread holds 100 / 1,000 / 10,000 / 30,000 posts: each size in its own child process, which
   builds the simulated forum once (the children one after the other; then all stay up and
   their cycles are interleaved, round by round, so machine load hits all sizes alike), writes
   the game file and runs
   ``pipeline.cli.cycle.cycle_once`` — the very function ``bansha cycle`` runs (the game's
   lock, the threads bansha opened, ``run_cycle`` with the CLI's crawl, drafting, publishing
   and ``after_derive=keep_tally_views``, then the director's notices) — on a
   :class:`~pipeline.cli.GameContext` loaded from that file as the CLI loads it. The only
   change: the crawler's HTTP client talks to the simulator in process (no sockets, no waits),
   and the simulator's time rendering pages is taken out (as bench_cycle does): the times are
   bansha's own (the forum also keeps, while no post arrives, what each page recomputes over
   the whole thread: :func:`quick_pages`). After the first crawl and a settling cycle, per
   size: 5 × ``--rounds`` nothing-new cycles, ``--rounds`` cycles each after one new page (10
   posts) in the discussion thread — with the parts spent storing tally's views and drafting —
   and ``--rounds`` cycles each after one ``bansha vote proxy`` (run in process through the
   CLI: what it writes to the journal), which must re-derive. Medians; ratios to the 100-post
   game (goals: one new page 1k/100 and 10k/100 ≤ 1.5×, 30k/100 ≤ 2×; after a proxy vote
   ≤ 1.5× at every size; nothing new ≤ 1.5×).
2. Peak RSS of a real ``bansha cycle`` process (its own peak: bench_start.peak_rss_mib) on a
   game whose thread holds ``--rss-posts`` posts (20,000), the forum served over HTTP by this
   process: a nothing-new cycle (goal ≤ 40 MiB) and a cycle after one new page (goal ≤ 60
   MiB); the median of ``--rounds`` runs each.
3. Start-up: bench/bench_start.py's commands (bytecode cached, the median of ``--rounds``
   interleaved runs): ``bansha cycle`` with nothing new ≤ 4×, ``bansha status`` ≤ 6×,
   ``bansha serve`` to its first ``/login`` ≤ 6× ``python -c pass`` (``--help`` ≤ 4× and
   ``tally`` ≤ 8× printed too), each beside its floor: ``python -c`` importing the libraries
   the command cannot run without (bench_start.FLOORS).
4. Parsing: bench/bench_parse.py's ``parse_viewthread`` vs a bare lexbor parse of the
   repository's own Discuz sample pages (tests/fixtures/discuz/), the median of ``--parse-runs``
   interleaved runs (goal ≤ 1.3×).

``--quick``: sizes 100 and 10,000, a 10,000-post RSS game (its RSS is then not the goal's).
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import io
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tree import ROOT, check, child_argv, pin

if TYPE_CHECKING:  # bansha is imported where used: a child pins its tree first (bench/tree.py)
    from pipeline.cli import GameContext
    from pipeline.cycle import CycleReport

HERE = Path(__file__).resolve()
SIZES = (100, 1000, 10000, 30000)
QUICK_SIZES = (100, 10000)
RSS_POSTS = 20000
#: nothing-new cycles per ``--rounds`` (each takes milliseconds)
IDLE_ROUNDS = 5
#: what each cycle figure is called (its ratio to the smallest game is what has a goal)
CYCLE_KINDS = {"page_s": "one new page", "proxy_s": "after vote proxy", "idle_s": "nothing new"}
RSS_GOALS = {"nothing new": 40.0, "one new page": 60.0}
PARSE_GOAL = 1.3


# --------------------------------------------------------------------------- the simulated forum


def quick_pages(sim: Any) -> Any:
    """``sim`` answering as before, faster on a long thread: what every page of a thread
    recomputes over all its posts (the visible posts, their numbering, each author's counts) is
    kept while the forum's clock and its number of posts stay the same. The benchmark adds
    posts and never edits nor deletes one, so every page is the same as the simulator's own;
    its time is taken out of bansha's anyway — this only shortens the run."""
    numbered, stats = sim._numbered, sim._author_stats

    def last(compute: Callable[..., Any], key: Callable[..., Any]) -> Callable[..., Any]:
        kept: list[Any] = [None, None]

        def cached(*args: Any) -> Any:
            k = key(*args)
            if kept[0] != k:
                kept[:] = [k, compute(*args)]
            return kept[1]

        return cached

    sim._numbered = last(numbered, lambda t, now, a, d: (t.tid, len(t.posts), now, a, d))
    sim._author_stats = last(stats, lambda now: (len(sim._posts), now))
    for thread in sim._threads.values():
        visible = thread.visible
        thread.visible = last(visible, lambda now, t=thread: (len(t.posts), now))
    return sim


# --------------------------------------------------------------------------- the cycle, in a child


class CronCycle:
    """The game of bench_cycle with ``n_posts`` posts, cycled as ``bansha cycle`` does."""

    def __init__(self, n_posts: int, folder: Path) -> None:
        from bench_crawl import TimedTransport
        from bench_cycle import OPENS, build
        from bench_start import big_game_text

        import pipeline.cli
        from pipeline.cli import load_context

        sim, self.clock = build(n_posts)
        self.sim = quick_pages(sim)
        self.clock.set(OPENS + timedelta(hours=2))  # after every post of the built thread
        self.game_file = folder / "bench.toml"
        text = big_game_text(n_posts).replace("http://127.0.0.1:8080/", self.sim.base_url)
        self.game_file.write_text(text, "utf-8")
        self.db = folder / "bench.db"
        self.transport = TimedTransport(self.sim.transport())
        # every crawl takes its client from here (pipeline.cli.quick.crawl_forum)
        pipeline.cli.make_http_client = self._http_client  # type: ignore[assignment]
        self.ctx: GameContext = load_context(self.game_file, str(self.db))
        #: seconds the cycles spent storing tally's views and drafting (looked up by name
        #: when cycle_once runs: timed here, not changed)
        self.parts = {"views": 0.0, "drafts": 0.0}
        import pipeline.cli.cycle as cron

        cron.keep_tally_views = self._timed("views", cron.keep_tally_views)  # type: ignore[assignment]
        cron._draft = self._timed("drafts", cron._draft)  # type: ignore[assignment]

    def _timed(self, part: str, work: Callable[..., Any]) -> Callable[..., Any]:
        def timed_work(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return work(*args, **kwargs)
            finally:
                self.parts[part] += time.perf_counter() - start

        return timed_work

    def _http_client(self, timeout_s: float = 20.0) -> Any:
        import httpx

        return httpx.Client(transport=self.transport, follow_redirects=True, timeout=timeout_s)

    def cycle(self) -> tuple[float, CycleReport]:
        """One cycle 5 minutes after the last: bansha's own seconds, and its report."""
        from pipeline.cli.cycle import cycle_once

        now = self.clock.advance(300)
        forum = self.transport.forum_s
        self.parts = dict.fromkeys(self.parts, 0.0)
        start = time.perf_counter()
        report = cycle_once(self.ctx, now)
        seconds = time.perf_counter() - start - (self.transport.forum_s - forum)
        assert not report.errors, report.errors
        return seconds, report

    def new_page(self) -> None:
        """A page's worth of new replies in the discussion thread, in the last 5 minutes."""
        from bench_cycle import DISCUSSION, NAMES, PPP

        now = self.clock()
        for i in range(PPP):
            text = f"新回复 {i}：我投{NAMES[i + 1]}"
            self.sim.add_post(DISCUSSION, NAMES[i], text, now - timedelta(seconds=60 - i))

    def vote_proxy(self, k: int) -> None:
        """``bansha vote proxy`` through the CLI, in this process (its output kept aside)."""
        from bench_cycle import NAMES

        from pipeline.cli import cli

        at = (self.clock() - timedelta(seconds=30)).isoformat()
        argv = ["vote", "proxy", str(self.game_file), "--db", str(self.db), "--day", "1"]
        argv += ["--voter", NAMES[k % 24], "--target", NAMES[(k + 5) % 24], "--at", at]
        with contextlib.redirect_stdout(io.StringIO()) as out:
            cli.main(argv, prog_name="bansha", standalone_mode=False)
        assert "已记录代投" in out.getvalue(), out.getvalue()

    def posts(self) -> int:
        return int(self.ctx.store.db.execute("SELECT count(*) FROM posts").fetchone()[0])


def _new_posts(report: CycleReport) -> int:
    assert report.crawl is not None
    return sum(t.new_posts for t in report.crawl.threads)


def serve_cycles(n_posts: int) -> None:
    """In a child: the ``n_posts`` game crawled and settled (a JSON line says so), then one
    cycle per line read — ``idle``, ``page`` (after a new page), ``proxy K`` (after a proxy
    vote) — each answered with a JSON line; ``done``: the store's posts, and exit."""
    with tempfile.TemporaryDirectory(prefix="bansha-bench-all-") as tmp:
        built = time.perf_counter()
        b = CronCycle(n_posts, Path(tmp))
        built = time.perf_counter() - built
        first, report = b.cycle()  # the first crawl: every page
        assert report.derived, "the first cycle must derive"
        b.cycle()  # settle (the first nothing-new cycle may still write derived rows)
        say({"size": n_posts, "build_s": built, "first_s": first})
        for line in sys.stdin:
            what, *arg = line.split()
            if what == "done":
                break
            if what == "page":
                b.new_page()
            elif what == "proxy":
                b.vote_proxy(int(arg[0]))
            seconds, report = b.cycle()
            new = {"idle": 0, "page": 10, "proxy": 0}[what]
            assert report.derived != (what == "idle"), (what, report.lines())
            assert _new_posts(report) == new, (what, report.lines())
            say({"s": seconds, **b.parts})
        stored = b.ctx.store.db.execute("SELECT 1 FROM meta WHERE key = 'tally:view'").fetchone()
        assert stored is not None, "the cycle stored no tally view"
        say({"posts": b.posts()})
        b.ctx.close()


def say(found: dict[str, Any]) -> None:
    print(json.dumps(found), flush=True)


class SizeChild:
    """One size's child process (bench/tree.py), asked for one cycle at a time."""

    def __init__(self, n_posts: int) -> None:
        argv = child_argv(HERE, ROOT, ["--size", str(n_posts)])
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.size = n_posts
        self.found: dict[str, Any] = self.answer()

    def answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.size} 帖的子进程提前退出（退出码 {self.proc.wait()}）")
        return dict(json.loads(line))

    def ask(self, what: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(what + "\n")
        self.proc.stdin.flush()
        return self.answer()


def measure_cycles(sizes: list[int], rounds: int) -> list[dict[str, Any]]:
    """Each size's game in its own child, built and crawled one after the other; then the
    cycles interleaved across the sizes, round by round (machine load hits all alike)."""
    children = [SizeChild(n) for n in sizes]
    times: dict[int, dict[str, list[float]]] = {
        c.size: {k: [] for k in ("idle_s", "page_s", "proxy_s", "views", "drafts")}
        for c in children
    }
    for r in range(rounds):
        for _ in range(IDLE_ROUNDS):  # short: more of them, the median steadier
            for c in children:
                times[c.size]["idle_s"].append(c.ask("idle")["s"])
        for c in children:
            found = c.ask("page")
            for key, got in (("page_s", "s"), ("views", "views"), ("drafts", "drafts")):
                times[c.size][key].append(found[got])
        for c in children:
            times[c.size]["proxy_s"].append(c.ask(f"proxy {r}")["s"])
    results = []
    for c in children:
        posts = c.ask("done")["posts"]
        if c.proc.wait() != 0:
            raise SystemExit(f"{c.size} 帖的子进程失败（退出码 {c.proc.returncode}）")
        median = {k: statistics.median(v) for k, v in times[c.size].items()}
        results.append(
            {
                **c.found,
                "posts": posts,
                **median,
                "page_views_s": median["views"],
                "page_drafts_s": median["drafts"],
            }
        )
    return results


# --------------------------------------------------------------------------- peak RSS


def measure_rss(n_posts: int, rounds: int) -> dict[str, float]:
    """Peak RSS of ``bansha cycle`` processes on an ``n_posts`` game served over HTTP here."""
    from bench_cycle import DISCUSSION, NAMES, OPENS, PPP, build
    from bench_start import DEMO_OVER, big_game_text, environment, forum_game, peak_rss_mib
    from bench_start import served as served_here

    sim, clock = build(n_posts)
    sim = quick_pages(sim)
    clock.set(datetime.fromisoformat(DEMO_OVER))
    env = environment()
    found: dict[str, list[float]] = {name: [] for name in RSS_GOALS}
    with tempfile.TemporaryDirectory(prefix="bansha-bench-rss-") as tmp, served_here(sim) as url:
        env = {**env, "BANSHA_COOKIE": sim.login_cookie("导演")}
        game = forum_game(Path(tmp), "big", big_game_text(n_posts), url, env)
        args = ["cycle", str(game), "--as-of", DEMO_OVER]
        for _ in range(rounds):
            found["nothing new"].append(peak_rss_mib(args, env))
        for k in range(rounds):
            at = OPENS + timedelta(hours=3, minutes=k)
            for i in range(PPP):
                text = f"新回复 {k}-{i}：我投{NAMES[i + 1]}"
                sim.add_post(DISCUSSION, NAMES[i], text, at + timedelta(seconds=i))
            found["one new page"].append(peak_rss_mib(args, env))
    return {name: statistics.median(mib) for name, mib in found.items()}


# --------------------------------------------------------------------------- start-up, parsing


def measure_start(rounds: int) -> dict[str, float]:
    """bench_start's timed commands (the demo game on its simulated forum), medians."""
    from bench_start import DEMO, DEMO_OVER, SCRIPT, commands_on, environment, served, timed

    from pipeline.sim.simulator import ForumSim, SimClock

    for package in ("engine", "parsers", "pipeline"):
        compileall.compile_dir(ROOT / package, quiet=1)
    over = datetime.fromisoformat(DEMO_OVER)
    demo_sim = ForumSim.from_script(DEMO, SCRIPT, SimClock(over), floodctrl_s=0)
    env = {**environment(), "BANSHA_COOKIE": demo_sim.login_cookie("导演")}
    with tempfile.TemporaryDirectory(prefix="bansha-bench-start-") as tmp, served(demo_sim) as url:
        return timed(commands_on(Path(tmp), None, env, url), env, rounds)


def measure_parse(runs: int) -> dict[str, Any]:
    """bench_parse's pages: median seconds of ``parse_viewthread`` and of bare lexbor."""
    from bench_parse import FIXTURES, bare, ours, run_times, thread_pages

    pages = thread_pages(FIXTURES)
    for page in pages:  # warm up imports and caches
        ours(page)
        bare(page)
    times = run_times({"ours": ours, "bare": bare}, pages, runs)
    return {
        "pages": len(pages),
        "posts": sum(ours(page) for page in pages),
        **{name: statistics.median(t) for name, t in times.items()},
    }


# --------------------------------------------------------------------------- the report


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "NOT met"


def row(figure: str, value: str, goal: str, met: str) -> str:
    return f"{figure:<44}{value:>16}  {goal:<10}{met}"


def cycle_goal(kind: str, size: int) -> float:
    """The goal of a cycle's ratio to the smallest game's: a new page costs at most 1.5× up to
    10,000 posts and 2× beyond; a cycle after a proxy vote or with nothing new, 1.5×."""
    return 2.0 if kind == "page_s" and size > 10000 else 1.5


def cycle_rows(found: list[dict[str, Any]]) -> list[str]:
    base = min(found, key=lambda m: m["size"])
    lines = []
    for kind, name in CYCLE_KINDS.items():
        for m in found:
            if m is base:
                continue
            ratio = m[kind] / base[kind]
            goal = cycle_goal(kind, m["size"])
            figure = f"cycle, {name}, {m['size']}/{base['size']} posts"
            lines.append(row(figure, f"{ratio:.2f}×", f"≤ {goal:g}×", verdict(ratio, goal)))
    return lines


def print_cycles(found: list[dict[str, Any]], rounds: int) -> None:
    print(
        "1. bansha cycle (pipeline.cli.cycle.cycle_once, in process; forum rendering taken out), "
        f"median of {rounds} ({IDLE_ROUNDS * rounds} with nothing new), ms"
    )
    print(
        f"{'thread':>8}{'stored':>8}{'build s':>9}{'1st crawl s':>12}{'nothing new':>13}"
        f"{'one new page':>14}{'tally views':>13}{'drafting':>10}{'after proxy':>13}"
    )
    for m in found:
        print(
            f"{m['size']:>8}{m['posts']:>8}{m['build_s']:>9.1f}{m['first_s']:>12.1f}"
            f"{m['idle_s'] * 1000:>13.1f}{m['page_s'] * 1000:>14.1f}"
            f"{m['page_views_s'] * 1000:>13.1f}{m['page_drafts_s'] * 1000:>10.1f}"
            f"{m['proxy_s'] * 1000:>13.1f}"
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="runs per figure (the median is kept)")
    ap.add_argument("--sizes", default=None, help="posts per game, comma-separated")
    ap.add_argument("--rss-posts", type=int, default=None, help="posts of the RSS game")
    ap.add_argument("--parse-runs", type=int, default=15, help="interleaved parse runs")
    ap.add_argument("--quick", action="store_true", help="sizes 100,10000; a 10,000-post RSS game")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--tree", help=argparse.SUPPRESS)
    ap.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:  # one size in its own process (bench/tree.py)
        pin(args.tree)
        serve_cycles(args.size)
        check(args.tree)
        return 0
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else None
    sizes = sizes or list(QUICK_SIZES if args.quick else SIZES)
    rss_posts = args.rss_posts or (10000 if args.quick else RSS_POSTS)
    rounds = args.rounds
    sys.path.insert(0, str(ROOT))
    started = time.perf_counter()
    stage: dict[str, float] = {}

    def timed_stage(name: str, work: Callable[[], Any]) -> Any:
        start = time.perf_counter()
        result = work()
        stage[name] = time.perf_counter() - start
        return result

    cycles = timed_stage("cycles", lambda: measure_cycles(sizes, rounds))
    rss = timed_stage("rss", lambda: measure_rss(rss_posts, rounds))
    start = timed_stage("start-up", lambda: measure_start(rounds))
    parse = timed_stage("parse", lambda: measure_parse(args.parse_runs))
    report(cycles, rss, rss_posts, start, parse, args)
    spent = ", ".join(f"{name} {s:.0f} s" for name, s in stage.items())
    print(f"(whole run {time.perf_counter() - started:.0f} s: {spent})")
    return 0


def report(
    cycles: list[dict[str, Any]],
    rss: dict[str, float],
    rss_posts: int,
    start: dict[str, float],
    parse: dict[str, Any],
    args: argparse.Namespace,
) -> None:
    print_cycles(cycles, args.rounds)
    print(
        "   (thread: posts in the discussion thread at the start; stored: posts in the store at "
        "the end, the vote thread's and the new pages' included; tally views, drafting: the "
        "parts of the one-new-page cycle spent in keep_tally_views and in drafting)"
    )
    print(
        f"2. peak RSS of a bansha cycle process, {rss_posts}-post game, median of {args.rounds}: "
        + "; ".join(f"{name} {mib:.1f} MiB" for name, mib in rss.items())
    )
    print(f"3. start-up vs python -c pass, median of {args.rounds} interleaved runs, ms")
    width = max(map(len, start))
    for name, seconds in start.items():
        print(f"   {name:<{width}}{seconds * 1000:>9.1f}")
    print(
        f"4. parse: {parse['pages']} sample pages, {parse['posts']} posts, median of "
        f"{args.parse_runs}: parse_viewthread {parse['ours'] * 1000:.2f} ms, "
        f"bare lexbor {parse['bare'] * 1000:.2f} ms"
    )
    print()
    print(row("figure", "measured", "goal", ""))
    for line in cycle_rows(cycles):
        print(line)
    for name, goal in RSS_GOALS.items():
        mib = rss[name]
        figure = f"peak RSS, {name}, {rss_posts} posts"
        print(row(figure, f"{mib:.1f} MiB", f"≤ {goal:g} MiB", verdict(mib, goal)))
    from bench_start import CYCLE, FLOORS, SERVE, TARGETS, floor_name

    base = start["python -c pass"]
    for name in (CYCLE, "bansha status", SERVE, "bansha --help", "bansha tally"):
        ratio = start[name] / base
        goal = TARGETS[name]
        print(
            row(f"{name} / python -c pass", f"{ratio:.2f}×", f"≤ {goal:g}×", verdict(ratio, goal))
        )
        if name in FLOORS:
            floor = start[floor_name(name)] / base
            print(row("   its libraries' floor (section 3)", f"{floor:.2f}×", "", ""))
    ratio = parse["ours"] / parse["bare"]
    figure = "parse_viewthread / bare lexbor"
    print(row(figure, f"{ratio:.2f}×", f"≤ {PARSE_GOAL:g}×", verdict(ratio, PARSE_GOAL)))


if __name__ == "__main__":
    sys.exit(main())
