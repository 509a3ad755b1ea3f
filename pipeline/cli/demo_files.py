"""What both demos share: the files they write (marked as theirs, dates moved by whole days) and
the commands they print (runnable as printed from the current folder)."""

from __future__ import annotations

import re
import shlex
import shutil
import sys
import tomllib
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import click

#: the first line of every file the demo writes: such a file may be rewritten by the next demo
#: (any other file of the same name is the director's, and is never overwritten)
MARK = "# 由 bansha demo 生成"

DAY = timedelta(days=1)
#: a TOML date(-time) value: the date part of ``key = 2026-12-01T10:00:00+08:00`` (also in an
#: inline table or an array); the time and the offset stay as written
_DATE_VALUE = re.compile(r"([=\[,][ \t]*)(\d{4}-\d{2}-\d{2})(?=[T ]\d{2}:\d{2}|[ \t]*[,\]}#\n])")


def written_by_demo(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.readline().startswith(MARK)
    except (OSError, UnicodeDecodeError):
        return False


def shift_dates(text: str, days: int) -> str:
    """``text`` (a TOML document) with every date and date-time value ``days`` days later,
    comments and layout kept. Checked: the result parses to the same document with exactly
    those values moved (nothing inside a string, nothing missed)."""
    if days == 0:
        return text

    def move(m: re.Match[str]) -> str:
        return m.group(1) + (date.fromisoformat(m.group(2)) + timedelta(days=days)).isoformat()

    shifted = _DATE_VALUE.sub(move, text)
    if tomllib.loads(shifted) != _moved_values(tomllib.loads(text), timedelta(days=days)):
        raise ValueError("示例游戏文件的日期没能整体平移（有日期写在了意外的位置）")
    return shifted


def _moved_values(value: Any, delta: timedelta) -> Any:
    if isinstance(value, dict):
        return {k: _moved_values(v, delta) for k, v in value.items()}
    if isinstance(value, list):
        return [_moved_values(v, delta) for v in value]
    if isinstance(value, datetime | date):
        return value + delta
    return value


def moved_words(days: int) -> str:
    if days == 0:
        return "日期保持原样"
    return f"日期整体提前了 {-days} 天" if days < 0 else f"日期整体推后了 {days} 天"


def demo_now(game: Path, text: str | None) -> datetime:
    """``--now`` (a time without a zone is the game's), or the real time."""
    with open(game, "rb") as fh:
        tz = ZoneInfo(tomllib.load(fh)["game"]["timezone"])
    if text is None:
        return datetime.now(tz)
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise click.BadParameter(
            f"不是时间：{text}（例如 2026-12-03T09:00:00+08:00）", param_hint="--now"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=tz)


def program() -> str:
    """How to run bansha again from this folder: as it was typed (``.venv/bin/bansha``), or
    ``bansha`` when that is what PATH finds."""
    argv0 = sys.argv[0] if sys.argv else ""
    on_path = shutil.which("bansha")
    if Path(argv0).name == "bansha" and Path(argv0).is_file():
        if on_path and Path(on_path).resolve() == Path(argv0).resolve():
            return "bansha"
        return sh(argv0)
    if on_path:
        return "bansha"
    beside = Path(sys.executable).parent / "bansha"  # the venv's, run as ``python -m …``
    return sh(str(beside)) if beside.is_file() else "bansha"


_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+")


def sh(arg: str) -> str:
    """``arg`` for a shell, quoted only when it needs it (a Chinese name needs no quotes)."""
    return arg if _SHELL_SAFE.fullmatch(arg) else shlex.quote(arg)


def stopped_note(base_url: str) -> str:
    """Said once the demo's simulated forum has stopped: its links no longer open."""
    return (
        f"模拟论坛（{base_url}）已随演示结束关闭：上面和下面命令输出里指向它的链接都打不开了"
        "（只作对照）；帖子都已抓进数据库，下面的命令照样能看。"
    )
