"""Start-up benchmark: bansha's short commands as ratios to ``python -c pass``, side by side.

    python bench/bench_start.py [--repeats 5] [--posts 20000] [--db PATH]

All run in the same venv (this interpreter and the ``bansha`` script beside it), as a
director's install runs them: with bytecode cached. The modules are compiled first and every
run has ``PYTHONDONTWRITEBYTECODE`` removed from its environment (this machine sets it), and
each command runs once before timing. Timed, in turn, ``--repeats`` rounds, the median of each
kept (machine load hits all alike):

- ``bansha --help`` (target ≤ 4×);
- ``bansha tally`` on the demo game, which this script makes itself with ``bansha demo --db``
  in a temporary folder (or ``--db``); tally is read-only, so every run sees the same store.
  Two paths: as a director runs it right after the demo, whose last step is cron's next cycle,
  so tally shows the view that cycle stored (``bansha tally``, target ≤ 8×); and forced to
  derive with ``--as-of`` (the demo's last moment: the same tally, derived — what a tally after
  a new post or a journal entry costs until the next cycle; ``bansha tally (derive)``, no
  target). Both print the same (tests/pipeline/cli/test_demo_commands.py); this script checks the
  view is stored before timing;
- ``bansha cycle GAME`` with nothing new (target ≤ 4×): the demo game on the simulated forum,
  served over HTTP by this process (no waits), brought up to date by one cycle at 12-03 09:00,
  then cycled at that same moment: every timed cycle reads the forum, finds nothing new and
  neither derives nor drafts (checked first). The simulator's time to answer (rendering its
  pages, in this process, while the cycle waits for them) is taken out of every timed run, as
  bench/bench_cycle.py does: the figure is bansha's own cost;
- ``bansha status GAME`` on that game (target ≤ 6×);
- ``bansha serve GAME``: from the start of the process to the first HTTP 200 of ``/login``
  (target ≤ 6×), on a free port; the server is then stopped;
- beside cycle, status and serve, their floor: ``python -c`` importing only the libraries the
  command cannot run without (:data:`FLOORS`), and what is left, bansha's own milliseconds.

Then the peak RSS of one nothing-new ``bansha cycle`` on a game whose discussion thread holds
``--posts`` posts (bench/bench_cycle.py's one-day m135 game, served the same way; its first
cycle reads it all, which takes a while): the child's own peak, ``VmHWM`` on Linux
(:func:`peak_rss_mib`; target ≤ 40 MiB).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "config" / "games" / "demo.toml"
SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"
#: the demo's game is over by then: nothing new arrives on its forum
DEMO_OVER = "2026-12-03T09:00:00+08:00"
CYCLE = "bansha cycle (nothing new)"
SERVE = "bansha serve (first /login)"
TARGETS = {
    "bansha --help": 4.0,
    "bansha tally": 8.0,
    CYCLE: 4.0,
    "bansha status": 6.0,
    SERVE: 6.0,
}
#: printed beside the targets: what a tally costs when it must derive (until the next cycle)
SHOWN = ("bansha tally (derive)",)
#: a command's floor: ``python -c`` importing the libraries it cannot run without (timed with
#: the commands, in turn): no change to bansha's own code brings the command below it
FLOORS = {
    CYCLE: "import click, filelock, httpx",
    "bansha status": "import click, sqlite3",
    SERVE: "import click, jinja2, starlette.applications, uvicorn",
}
RSS_TARGET_MIB = 40.0
#: a console login token for the benchmark's own ``bansha serve`` (never a director's)
TOKEN = "bench-start-token-0123456789"


def bansha() -> list[str]:
    """The ``bansha`` console script of this venv (what a director runs)."""
    script = Path(sys.executable).with_name("bansha")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from pipeline.cli import cli; cli()"]


def environment() -> dict[str, str]:
    drop = ("PYTHONDONTWRITEBYTECODE", "BANSHA_GAME", "BANSHA_DB")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["PYTHONPATH"] = str(ROOT)
    env["BANSHA_CONSOLE_TOKEN"] = TOKEN
    return env


def make_demo(db: Path, env: dict[str, str]) -> Path:
    """The demo game (its game file beside ``db``), made by ``bansha demo``."""
    subprocess.run(
        [*bansha(), "demo", "--db", str(db)],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    game = db.with_suffix(".toml")
    if not game.is_file():
        raise SystemExit(f"bansha demo 没有写出游戏文件：{game}")
    return game


def view_stored(db: Path) -> str:
    """The moment of the cycle that stored tally's view (its ``now``), or exit when none is."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        stored = conn.execute("SELECT 1 FROM meta WHERE key = 'tally:view'").fetchone()
        record = conn.execute("SELECT value FROM meta WHERE key = 'derive:last'").fetchone()
    if stored is None or record is None:
        raise SystemExit(f"bansha demo 的最后一轮没有存下计票结果：{db}")
    return str(json.loads(record[0])["as_of"])


class ForumTime:
    """The seconds the simulated forums of this process spent answering requests, in all."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._lock = threading.Lock()

    def timing(self, sim: Any) -> None:
        """``sim`` answers as before; the time of each answer is added up here."""
        handle = sim.handle

        def timed_handle(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return handle(*args, **kwargs)
            finally:
                with self._lock:
                    self.seconds += time.perf_counter() - start

        sim.handle = timed_handle


#: the simulator's share of a timed run, taken out of it (it is not bansha's)
FORUM = ForumTime()


@contextmanager
def served(sim: Any) -> Iterator[str]:
    """``sim`` served over HTTP by this process (its answers timed in :data:`FORUM`): its base
    URL."""
    from pipeline.sim.simulator import SimServer

    FORUM.timing(sim)
    with SimServer(sim) as server:
        yield server.base_url


def forum_game(folder: Path, name: str, text: str, base_url: str, env: dict[str, str]) -> Path:
    """A game file pointing at ``base_url`` with no waits, brought up to date by one cycle at
    :data:`DEMO_OVER` (its store beside it); exits when a cycle at that moment is not idle."""
    game = folder / f"{name}.toml"
    text = text.replace("http://127.0.0.1:8080/", base_url)
    game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), "utf-8")
    argv = [*bansha(), "cycle", str(game), "--as-of", DEMO_OVER, "--verbose"]
    for _ in range(2):  # the first derives and drafts, the second must find nothing new
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"bansha cycle {game.name} 失败：{done.stderr}")
    if "没有新内容，未重新推导" not in done.stdout:
        raise SystemExit(f"bansha cycle {game.name} 第二轮仍有新内容：{done.stdout}")
    return game


def big_game_text(n_posts: int) -> str:
    """bench/bench_cycle.py's one-day m135 game as a game file."""
    from bench_cycle import CLOSES, DISCUSSION, NAMES, OPENS, PROGRESS, VOTE

    players = "".join(
        f'[[players]]\nname = "{n}"\nuid = {100 + i}\n\n' for i, n in enumerate(NAMES)
    )
    return (
        f'[game]\nid = "bench-start-{n_posts}"\ntitle = "基准"\nruleset = "m135"\n'
        'timezone = "Asia/Shanghai"\n\n'
        '[forum]\nbase_url = "http://127.0.0.1:8080/"\nmin_interval_s = 0.0\n\n'
        '[director]\nnames = ["导演"]\nuids = [1]\n\n'
        f"{players}"
        f"[[days]]\nday = 1\nopens = {OPENS.isoformat()}\ncloses = {CLOSES.isoformat()}\n"
        f"discussion = {DISCUSSION}\nvote = {VOTE}\nprogress = {PROGRESS}\n"
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_once(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from starting ``argv`` (``bansha serve … --port P``) to the first HTTP 200 of
    ``/login``; the server is stopped after."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/login"
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*argv, "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        return time.perf_counter() - start
            except (urllib.error.URLError, ConnectionError):
                pass
            if proc.poll() is not None:
                err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                raise SystemExit(f"bansha serve 退出了：{err}")
            time.sleep(0.002)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def timed(commands: dict[str, list[str]], env: dict[str, str], repeats: int) -> dict[str, float]:
    """The median time of each command over ``repeats`` interleaved rounds (after a warm-up)."""
    for name, argv in commands.items():  # warm-up: caches, the bytecode of anything missed
        run_once(name, argv, env)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(repeats):
        for name, argv in commands.items():
            times[name].append(run_once(name, argv, env))
    return {name: statistics.median(t) for name, t in times.items()}


def run_once(name: str, argv: list[str], env: dict[str, str]) -> float:
    """Seconds of one run of ``argv``, less the simulated forum's time answering it."""
    forum = FORUM.seconds
    if name == SERVE:
        return serve_once(argv, env) - (FORUM.seconds - forum)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start - (FORUM.seconds - forum)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} 失败：{done.stderr.decode(errors='replace')}")
    return seconds


#: what a measured ``bansha`` runs: the console script's own entry point and, at its exit, its
#: peak resident set since it started (``VmHWM``: its own image, from exec on), written to the
#: file ``BANSHA_BENCH_HWM`` names
HWM_CHILD = """
import atexit, os, sys
def _peak():
    with open("/proc/self/status") as status:
        kib = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["BANSHA_BENCH_HWM"], "w") as out:
        out.write(kib)
atexit.register(_peak)
from pipeline.cli import main
sys.argv[0] = "bansha"
sys.exit(main())
"""


def peak_rss_mib(args: list[str], env: dict[str, str]) -> float:
    """The peak RSS of one ``bansha ARGS`` process, in MiB.

    On Linux, its ``VmHWM`` (:data:`HWM_CHILD`). Not the child's ``ru_maxrss``: Linux counts in
    it the pages the child had at fork, which are this process's (a simulated forum of 20,000
    posts weighs more than the cycle measured). Elsewhere, ``ru_maxrss`` from ``wait4``."""
    if not Path("/proc/self/status").is_file():
        proc = subprocess.Popen([*bansha(), *args], env=env, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"bansha {' '.join(args)} 失败")
        scale = 1024.0 if sys.platform == "darwin" else 1.0  # macOS: bytes
        return usage.ru_maxrss / scale / 1024.0
    with tempfile.TemporaryDirectory(prefix="bansha-bench-hwm-") as tmp:
        out = Path(tmp) / "hwm"
        done = subprocess.run(
            [sys.executable, "-c", HWM_CHILD, *args],
            env={**env, "BANSHA_BENCH_HWM": str(out)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        if done.returncode != 0:
            err = done.stderr.decode(errors="replace")
            raise SystemExit(f"bansha {' '.join(args)} 失败：{err}")
        return int(out.read_text()) / 1024.0


def commands_on(folder: Path, db: Path | None, env: dict[str, str], base_url: str) -> Any:
    """The timed commands (the demo store made in ``folder`` unless ``db``), and the demo
    game on the simulated forum at ``base_url``."""
    db = db or folder / "demo.db"
    tally = [*bansha(), "tally", str(make_demo(db, env)), "--db", str(db), "--day", "2"]
    moment = view_stored(db)
    game = forum_game(folder, "forum", DEMO.read_text("utf-8"), base_url, env)
    return {
        "python -c pass": [sys.executable, "-c", "pass"],
        "bansha --help": [*bansha(), "--help"],
        "bansha tally (derive)": [*tally, "--as-of", moment],
        "bansha tally": tally,
        CYCLE: [*bansha(), "cycle", str(game), "--as-of", DEMO_OVER],
        "bansha status": [*bansha(), "status", str(game)],
        SERVE: [*bansha(), "serve", str(game), "--as-of", DEMO_OVER],
        **{floor_name(name): [sys.executable, "-c", code] for name, code in FLOORS.items()},
    }


def floor_name(command: str) -> str:
    """The timed name of ``command``'s floor (:data:`FLOORS`)."""
    return f"python -c '{FLOORS[command]}'"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="rounds (the median is kept)")
    parser.add_argument("--posts", type=int, default=20000, help="posts of the RSS game")
    parser.add_argument("--db", type=Path, default=None, help="demo store (default: a temp dir)")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from bench_cycle import build

    from pipeline.sim.simulator import ForumSim, SimClock

    env = environment()
    for package in ("engine", "parsers", "pipeline"):
        compileall.compile_dir(ROOT / package, quiet=1)
    over = datetime.fromisoformat(DEMO_OVER)
    demo_sim = ForumSim.from_script(DEMO, SCRIPT, SimClock(over), floodctrl_s=0)
    big_sim, _ = build(args.posts)
    with tempfile.TemporaryDirectory(prefix="bansha-bench-start-") as tmp:
        folder = Path(tmp)
        with served(demo_sim) as base_url:
            demo_env = {**env, "BANSHA_COOKIE": demo_sim.login_cookie("导演")}
            commands = commands_on(folder, args.db, demo_env, base_url)
            median = timed(commands, demo_env, args.repeats)
        with served(big_sim) as base_url:
            big_env = {**env, "BANSHA_COOKIE": big_sim.login_cookie("导演")}
            text = big_game_text(args.posts)
            big = forum_game(folder, "big", text, base_url, big_env)
            rss = peak_rss_mib(["cycle", str(big), "--as-of", DEMO_OVER], big_env)
    report(median, rss, args)
    return 0


def report(median: dict[str, float], rss: float, args: argparse.Namespace) -> None:
    base = median["python -c pass"]
    print(
        f"median of {args.repeats} interleaved runs, bytecode cached, {sys.executable}; "
        "demo game: tally day 2; cycle, status and serve on the simulated forum (over HTTP; "
        "its time answering taken out)"
    )
    width = max(map(len, median))
    print(f"{'command':<{width}}{'ms':>9}")
    for name, seconds in median.items():
        print(f"{name:<{width}}{seconds * 1000:>9.1f}")
    for name, target in TARGETS.items():
        line = f"{name} / python -c pass: {median[name] / base:.1f}x (target <= {target:g}x"
        if name in FLOORS:
            floor = median[floor_name(name)]
            line += f"; its libraries' floor {floor / base:.1f}x, bansha's own "
            line += f"{(median[name] - floor) * 1000:.0f} ms"
        print(line + ")")
    for name in SHOWN:
        print(f"{name} / python -c pass: {median[name] / base:.1f}x (no target; until a cycle)")
    print(
        f"peak RSS of a nothing-new bansha cycle, {args.posts}-post game: {rss:.1f} MiB "
        f"(target <= {RSS_TARGET_MIB:g} MiB)"
    )


if __name__ == "__main__":
    sys.exit(main())
