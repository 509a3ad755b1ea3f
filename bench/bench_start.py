"""Start-up benchmark: ``bansha --help`` and ``bansha tally`` as ratios to ``python -c pass``.

    python bench/bench_start.py [--repeats 15] [--db PATH]

All run in the same venv (this interpreter and the ``bansha`` script beside it), as a
director's install runs them: with bytecode cached. The modules are compiled first and every
run has ``PYTHONDONTWRITEBYTECODE`` removed from its environment (this machine sets it), and
each command runs once before timing. ``bansha tally`` reads the demo game, which this script
makes itself with ``bansha demo --db`` in a temporary folder (or ``--db``); tally is read-only,
so every run sees the same store.

Two paths of ``bansha tally`` on that store are timed: as a director runs it right after the
demo, whose last step is cron's next cycle, so tally shows the view that cycle stored
(``bansha tally``); and forced to derive with ``--as-of`` (the demo's last moment: the same
tally, derived — what a tally after a new post or a journal entry costs until the next cycle;
``bansha tally (derive)``). Both print the same (tests/pipeline/test_demo_commands.py); this
script checks the view is stored before timing.
The commands are run in turn, ``--repeats`` rounds, and the best time of each is kept (machine
load hits all alike); the ratios are printed side by side (targets:
``--help`` ≤ 4×, ``tally`` ≤ 8×).
"""

from __future__ import annotations

import argparse
import compileall
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGETS = {"bansha --help": 4.0, "bansha tally": 8.0}
#: printed beside the targets: what a tally costs when it must derive (until the next cycle)
SHOWN = ("bansha tally (derive)",)


def bansha() -> list[str]:
    """The ``bansha`` console script of this venv (what a director runs)."""
    script = Path(sys.executable).with_name("bansha")
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-c", "from pipeline.cli import cli; cli()"]


def environment() -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "BANSHA_GAME")
    }
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
    import json

    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        stored = conn.execute("SELECT 1 FROM meta WHERE key = 'tally:view'").fetchone()
        record = conn.execute("SELECT value FROM meta WHERE key = 'derive:last'").fetchone()
    if stored is None or record is None:
        raise SystemExit(f"bansha demo 的最后一轮没有存下计票结果：{db}")
    return str(json.loads(record[0])["as_of"])


def timed(commands: dict[str, list[str]], env: dict[str, str], repeats: int) -> dict[str, float]:
    """The best time of each command over ``repeats`` interleaved rounds (after a warm-up)."""
    for argv in commands.values():  # warm-up: caches, the bytecode of anything missed
        run_once(argv, env)
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(repeats):
        for name, argv in commands.items():
            best[name] = min(best[name], run_once(argv, env))
    return best


def run_once(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} 失败：{done.stderr.decode(errors='replace')}")
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="rounds (the best is kept)")
    parser.add_argument("--db", type=Path, default=None, help="demo store (default: a temp dir)")
    args = parser.parse_args()
    env = environment()
    for package in ("engine", "parsers", "pipeline"):
        compileall.compile_dir(ROOT / package, quiet=1)
    with tempfile.TemporaryDirectory(prefix="bansha-bench-start-") as tmp:
        db = args.db or Path(tmp) / "demo.db"
        game = make_demo(db, env)
        moment = view_stored(db)
        tally = [*bansha(), "tally", str(game), "--db", str(db), "--day", "2"]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "bansha --help": [*bansha(), "--help"],
            "bansha tally (derive)": [*tally, "--as-of", moment],
            "bansha tally": tally,
        }
        best = timed(commands, env, args.repeats)
    base = best["python -c pass"]
    print(
        f"best of {args.repeats} interleaved runs, bytecode cached, {sys.executable}; "
        f"demo game: {game.name} (day 2)"
    )
    print(f"{'command':<24}{'ms':>9}")
    for name, seconds in best.items():
        print(f"{name:<24}{seconds * 1000:>9.1f}")
    for name, target in TARGETS.items():
        print(f"{name} / python -c pass: {best[name] / base:.1f}x (target <= {target:g}x)")
    for name in SHOWN:
        print(f"{name} / python -c pass: {best[name] / base:.1f}x (no target; until a cycle)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
