"""``bansha run`` vs cron: 50 demo-sized games for one 5-minute window, side by side.

    python bench/bench_run.py [--games 50]

The demo game (12 players, two days, config/games/demo.toml) is copied ``--games`` times into a
temporary folder, each with its own id and store, all pointing at one simulated forum (in this
process, over HTTP, no waits; its CPU is counted on neither side). Every store is brought up to
date first (one cycle each, at 12-03 09:00: the game is over, nothing new arrives). Then the
same idle window — the five-minute rhythm's next moment, 09:05 — is run both ways:

- **resident**: one ``bansha run`` process (the runner of ``pipeline.console.run`` on a driven
  clock: its naps return at once, every wake-up's work is counted) starts, runs its start-up
  cycle of every game (09:00), then the window up to 09:05 and one nap after it: the CPU of
  the window (after start-up) and the process's peak RSS;
- **cron**: ``--games`` separate ``bansha cycle GAME --as-of 09:05`` processes, one after
  another: the CPU of all of them (user + system, from ``wait4``) and each one's peak RSS.

One run, no repeats. Printed: both sides, the ratio of CPU, and the goal (the resident process
uses less than a fifth of the CPU of the separate processes for an idle window).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "config" / "games" / "demo.toml"
SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"
START = datetime.fromisoformat("2026-12-03T09:00:00+08:00")
WINDOW = "2026-12-03T09:05:00+08:00"
GOAL = 1 / 5

#: the resident side, in its own process: start-up, then the measured window
RESIDENT = r"""
import json, resource, sys, time
def peak_kib():  # the process's own peak since exec (ru_maxrss counts the parent's pages too)
    try:
        with open("/proc/self/status") as status:
            return int(next(l.split()[1] for l in status if l.startswith("VmHWM:")))
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from datetime import datetime, timedelta
from pathlib import Path
folder, start = Path(sys.argv[1]), datetime.fromisoformat(sys.argv[2])
from pipeline.console.run import Runner
now = [start]
def sleep(seconds):
    now[0] += timedelta(seconds=seconds)
lines = []
runner = Runner([folder], now=lambda: now[0], sleep=sleep, echo=lines.append)
runner.run_forever(until=lambda: now[0] > start)  # start-up: every game's first cycle
cpu0, started = time.process_time(), len(lines)
end = start + timedelta(minutes=5)
runner.run_forever(until=lambda: now[0] > end)
cpu = time.process_time() - cpu0
print(json.dumps({
    "cpu_s": cpu,
    "startup_cpu_s": cpu0,
    "peak_rss_kib": peak_kib(),
    "cycles": sum(1 for line in lines[started:] if "；下一轮" in line),
    "quiet": sum(1 for line in lines[started:] if "：没有新内容；下一轮" in line),
}))
"""


def environment(cookie: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("BANSHA_GAME", "BANSHA_DB")}
    env["PYTHONPATH"] = str(ROOT)
    env["BANSHA_COOKIE"] = cookie
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def make_games(folder: Path, base_url: str, n: int) -> list[Path]:
    text = DEMO.read_text("utf-8").replace("http://127.0.0.1:8080/", base_url)
    text = text.replace("min_interval_s = 1.0", "min_interval_s = 0.0")
    out = []
    for i in range(n):
        path = folder / f"game{i:02d}.toml"
        path.write_text(text.replace('id = "m135-demo"', f'id = "bench-{i:02d}"'), "utf-8")
        out.append(path)
    return out


def bring_up_to_date(games: list[Path], env: dict[str, str]) -> None:
    """One cycle of every game at START (derives, drafts): the window after it is idle."""
    from pipeline.cli import load_context
    from pipeline.cli.cycle import cycle_once

    os.environ.update({"BANSHA_COOKIE": env["BANSHA_COOKIE"]})
    for path in games:
        ctx = load_context(path, None, check_login=True)
        try:
            report = cycle_once(ctx, START.astimezone(ctx.game.game.tz), clock=lambda: START)
        finally:
            ctx.close()
        if report.errors:
            raise SystemExit(f"{path.name}：{'；'.join(report.errors)}")


def resident(folder: Path, env: dict[str, str]) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", RESIDENT, str(folder), START.isoformat()],
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"bansha run 的一方失败：{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def separate(games: list[Path], env: dict[str, str]) -> dict[str, float]:
    """``bansha cycle`` per game, one after another, as cron's lines would run them: the CPU of
    each from ``wait4``, its peak RSS its own (bench_start.HWM_CHILD; ``ru_maxrss`` where there
    is no ``/proc``)."""
    from bench_start import HWM_CHILD

    cpu, peaks, quiet = 0.0, [], 0
    hwm = games[0].parent / "peak-rss"  # the games' temporary folder
    own = Path("/proc/self/status").is_file()
    for path in games:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                HWM_CHILD if own else "from pipeline.cli import cli; cli()",
                "cycle",
                str(path),
                "--as-of",
                WINDOW,
                "--verbose",
            ],
            env={**env, "BANSHA_BENCH_HWM": str(hwm)},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        out = proc.stdout.read() if proc.stdout is not None else ""
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"bansha cycle {path.name} 失败（退出码 {proc.returncode}）")
        cpu += usage.ru_utime + usage.ru_stime
        peaks.append(int(hwm.read_text()) if own else usage.ru_maxrss)
        quiet += "没有新内容，未重新推导" in out
    return {"cpu_s": cpu, "peak_rss_kib": max(peaks), "sum_rss_kib": sum(peaks), "quiet": quiet}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=50, help="how many demo games")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from pipeline.sim.simulator import ForumSim, SimClock, SimServer

    clock = SimClock(START)
    sim = ForumSim.from_script(DEMO, SCRIPT, clock, floodctrl_s=0)
    with tempfile.TemporaryDirectory(prefix="bansha-bench-run-") as tmp, SimServer(sim) as server:
        folder = Path(tmp)
        env = environment(sim.login_cookie("导演"))
        games = make_games(folder, server.base_url, args.games)
        bring_up_to_date(games, env)
        mine = resident(folder, env)
        cron = separate(games, env)
    n = args.games
    mib = 1024.0
    print(
        f"{n} demo games, one idle 5-minute window (12-03 09:00 -> 09:05, nothing new); "
        f"{sys.executable}"
    )
    print(f"{'':<38}{'CPU s':>8}{'peak RSS MiB':>14}")
    print(
        f"{'bansha run (one process, the window)':<38}{mine['cpu_s']:>8.2f}"
        f"{mine['peak_rss_kib'] / mib:>14.1f}   ({int(mine['cycles'])} cycles, "
        f"{int(mine['quiet'])} with nothing new; start-up and first cycles "
        f"{mine['startup_cpu_s']:.2f} s, not in the window)"
    )
    print(
        f"{f'bansha cycle x{n} (cron, a process each)':<38}{cron['cpu_s']:>8.2f}"
        f"{cron['peak_rss_kib'] / mib:>14.1f}   (per process; {n} at once: "
        f"{cron['sum_rss_kib'] / mib:.0f} MiB together; {int(cron['quiet'])} with nothing new)"
    )
    if mine["quiet"] != n or cron["quiet"] != n:
        print(
            "WARNING: not every cycle had nothing new (was bansha's code edited while this ran? "
            "a changed module makes every cycle derive again): the window was not idle"
        )
    ratio = mine["cpu_s"] / cron["cpu_s"] if cron["cpu_s"] else float("inf")
    verdict = "met" if ratio < GOAL else "NOT met"
    print(f"CPU ratio bansha run / {n} x bansha cycle: {ratio:.3f} (goal < {GOAL:.2f}: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
