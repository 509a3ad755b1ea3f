"""Run a benchmark's measurement against another tree of bansha, side by side in one run.

``python bench/bench_X.py --baseline REV``: the same measurement runs on the code of git revision
REV (``git archive`` into a temporary folder) and on this checkout, each in a child process. A
child is started with ``python -S`` (the editable install's import hook, loaded by ``site``, would
otherwise import this checkout whatever ``sys.path`` says) and given the tree, the bench folder
and this venv's site-packages as its path; it imports bansha's packages from the tree before
anything else and checks, after measuring, that every module of theirs came from it.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PACKAGES = ("engine", "parsers", "pipeline")

_BOOT = (
    "import sys, json, runpy; sys.path[:0] = json.loads(sys.argv[1]); "
    "sys.argv = sys.argv[2:]; runpy.run_path(sys.argv[0], run_name='__main__')"
)


def archive(rev: str, into: Path) -> Path:
    """The tree of ``rev`` (``git archive``) extracted in ``into``."""
    tar = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=tar, check=True)
    return into


def child_argv(script: Path, tree: Path, args: list[str]) -> list[str]:
    """The command line of ``script --child --tree TREE ARGS`` in a fresh ``python -S``."""
    site = dict.fromkeys(sysconfig.get_paths()[k] for k in ("purelib", "platlib"))
    paths = [str(tree), str(BENCH), *site]
    argv = [str(script), "--child", "--tree", str(tree), *args]
    return [sys.executable, "-S", "-c", _BOOT, json.dumps(paths), *argv]


def child(script: Path, tree: Path, args: list[str]) -> dict[str, Any]:
    """Run ``script --child --tree TREE ARGS`` in a fresh ``python -S``; its last line, as JSON."""
    done = subprocess.run(child_argv(script, tree, args), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{script.name} 在 {tree} 上运行失败：\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def pin(tree: str | Path) -> None:
    """In a child: import bansha's packages from ``tree`` first (later imports of their
    modules resolve through the packages, whatever a bench module puts on ``sys.path``)."""
    root = str(Path(tree).resolve())
    if root not in sys.path:
        sys.path.insert(0, root)
    for name in PACKAGES:
        importlib.import_module(name)
    check(tree)


def check(tree: str | Path) -> None:
    """Every loaded module of bansha's packages comes from ``tree``."""
    root = Path(tree).resolve()
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in PACKAGES:
            continue
        where = getattr(module, "__file__", None)
        if where is not None and root not in Path(where).resolve().parents:
            raise SystemExit(f"模块 {name} 不是从 {root} 载入的，而是 {where}")
