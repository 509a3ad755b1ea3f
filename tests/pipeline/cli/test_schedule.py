"""``bansha schedule``: crontab lines in the machine's own zone, one-off
lines that can never fire in another year.

Debian's cron ignores ``CRON_TZ``: it reads a crontab's times in the machine's zone, so the
times printed are the game's moments converted to the process's local zone (tests set ``TZ``
and call ``time.tzset()``). A crontab line has no year: each one-off line (a day's close, a
vote reminder) carries ``BANSHA_ONLY_ON=<date>`` and cron/bansha-cycle.sh runs only on that date.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "config" / "games" / "demo.toml"  # days close 2026-12-01/02 22:00 +08:00
WRAPPER = ROOT / "cron" / "bansha-cycle.sh"


@pytest.fixture
def machine_zone() -> Iterator[Callable[[str], None]]:
    """Set the process's local zone (what ``bansha schedule`` converts to)."""
    old = os.environ.get("TZ")

    def set_zone(name: str) -> None:
        os.environ["TZ"] = name
        time.tzset()

    yield set_zone
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


def schedule(game: Path = DEMO, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["schedule", str(game), *extra])
    assert result.exit_code == 0, result.output
    return result.output


def cron_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip() and not line.startswith("#")]


def test_times_are_in_the_machines_zone_and_there_is_no_cron_tz(machine_zone):
    machine_zone("America/New_York")  # December: EST, UTC-05:00; the game is UTC+08:00
    out = schedule()
    assert not any(line.startswith("CRON_TZ") for line in out.splitlines())
    assert "# 下面的时间是本机时区（EST，UTC-05:00）的时间：cron 按本机时区运行。" in out
    lines = cron_lines(out)
    assert lines[0].startswith("*/5 * * * * ")
    # day 1 closes 12-01 22:00 +08:00 = 09:00 in New York: the cycle one minute after
    assert f"01 09 01 12 * BANSHA_ONLY_ON=2026-12-01 {WRAPPER} {DEMO}" in lines
    # the reminder an hour before: 08:00 New York time
    assert f"00 08 01 12 * BANSHA_ONLY_ON=2026-12-01 {WRAPPER} {DEMO}" in lines
    assert "# 第1天关门 12-01 09:00（游戏时区 12-01 22:00）：关门后一分钟结算一轮" in out
    assert len(lines) == 5  # every 5 minutes, two closes, two reminders


def test_in_the_games_own_zone_the_times_are_the_games(machine_zone):
    machine_zone("Asia/Shanghai")
    out = schedule()
    assert f"01 22 01 12 * BANSHA_ONLY_ON=2026-12-01 {WRAPPER} {DEMO}" in cron_lines(out)
    assert f"01 22 02 12 * BANSHA_ONLY_ON=2026-12-02 {WRAPPER} {DEMO}" in cron_lines(out)
    assert "# 第1天关门 12-01 22:00：关门后一分钟结算一轮" in out  # no second clock shown
    assert "游戏时区" not in out


def test_a_close_after_local_midnight_carries_the_local_date(machine_zone):
    machine_zone("Pacific/Auckland")  # December: NZDT, UTC+13:00
    lines = cron_lines(schedule())
    # 12-01 22:01 +08:00 is 12-02 03:01 in Auckland: the machine's date is the one checked
    assert f"01 03 02 12 * BANSHA_ONLY_ON=2026-12-02 {WRAPPER} {DEMO}" in lines
    assert f"01 03 03 12 * BANSHA_ONLY_ON=2026-12-03 {WRAPPER} {DEMO}" in lines


def test_each_moment_gets_its_own_offset_across_a_dst_change(machine_zone, tmp_path):
    """A fixed offset taken from "now" would be an hour off on the other side of a DST change."""
    game = tmp_path / "summer.toml"
    text = DEMO.read_text("utf-8").replace("2026-12-01T", "2026-07-01T")
    game.write_text(text, "utf-8")
    machine_zone("Europe/Berlin")
    lines = cron_lines(schedule(game))
    summer, winter = (
        "01 16 01 07 * BANSHA_ONLY_ON=2026-07-01 ",
        "01 15 02 12 * BANSHA_ONLY_ON=2026-12-02 ",
    )
    assert any(line.startswith(summer) for line in lines)  # CEST, UTC+02:00
    assert any(line.startswith(winter) for line in lines)  # CET, UTC+01:00


def test_every_one_off_line_names_its_date(machine_zone):
    machine_zone("UTC")
    for line in cron_lines(schedule())[1:]:
        _minute, _hour, dom, month, dow, only_on, *_ = line.split()
        assert dow == "*"
        year, m, d = re.fullmatch(r"BANSHA_ONLY_ON=(\d{4})-(\d\d)-(\d\d)", only_on).groups()
        assert (m, d) == (month, dom) and year == "2026", line


def fake_bin(tmp_path: Path, today: str) -> Path:
    """A folder with a ``date`` that says ``today`` for ``date +%F`` and a fake ``bansha``."""
    folder = tmp_path / f"bin-{today}"
    folder.mkdir()
    real = shutil.which("date")
    (folder / "date").write_text(
        f'#!/bin/sh\n[ "$1" = "+%F" ] && {{ echo {today}; exit 0; }}\nexec {real} "$@"\n', "utf-8"
    )
    (folder / "bansha").write_text('#!/bin/sh\necho "假的 bansha $*"\n', "utf-8")
    for name in ("date", "bansha"):
        (folder / name).chmod(0o755)
    return folder


@pytest.mark.skipif(
    shutil.which("sh") is None or shutil.which("bash") is None or shutil.which("flock") is None,
    reason="需要 sh、bash 和 flock（util-linux）",
)
def test_the_printed_close_line_fires_on_its_date_and_not_a_year_later(machine_zone, tmp_path):
    game = tmp_path / "m135.toml"
    game.write_text(DEMO.read_text("utf-8"), "utf-8")
    machine_zone("Asia/Shanghai")
    line = next(
        line
        for line in cron_lines(schedule(game, "--wrapper", str(WRAPPER)))
        if line.startswith("01 22 01 12 *")
    )
    command = line.split(None, 5)[5]  # what cron hands to /bin/sh

    def fire(today: str) -> subprocess.CompletedProcess:
        folder = fake_bin(tmp_path, today)
        env = {
            "PATH": f"{folder}:{os.environ.get('PATH', '/usr/bin:/bin')}",
            "HOME": str(tmp_path),
            "BANSHA_BIN": str(folder / "bansha"),
            "BANSHA_ENV_FILE": str(tmp_path / "no-env-file"),
        }
        return subprocess.run(
            ["sh", "-c", command], env=env, capture_output=True, text=True, timeout=30
        )

    log = tmp_path / "m135.log"
    a_year_later = fire("2027-12-01")
    assert a_year_later.returncode == 0 and a_year_later.stdout == a_year_later.stderr == ""
    assert not log.exists()  # nothing ran, nothing was written

    on_the_day = fire("2026-12-01")
    assert on_the_day.returncode == 0, on_the_day.stderr
    assert f"假的 bansha cycle {game}" in log.read_text("utf-8")


# An installed bansha (a wheel, pipx) has no checkout and no .venv beside its wrapper: each line
# runs the wrapper it ships with bash and names the installed bansha (tests/test_wheel.py runs
# such a line for real).


def test_an_installed_bansha_schedules_its_own_wrapper_and_program(tmp_path, monkeypatch):
    from pipeline import resources

    shipped_script = tmp_path / "site-packages" / "pipeline" / "_data" / "cron" / "bansha-cycle.sh"
    program = tmp_path / "我的 bin" / "bansha"
    monkeypatch.setattr(resources, "shipped", lambda: True)
    monkeypatch.setattr(resources, "cron_script", lambda: shipped_script)
    monkeypatch.setattr(resources, "bansha_executable", lambda: program)
    game = tmp_path / "games" / "demo.toml"
    game.parent.mkdir()
    game.write_bytes(DEMO.read_bytes())
    lines = cron_lines(schedule(game))
    quoted = f"'{program}'"
    expected = f"BANSHA_BIN={quoted} bash {shipped_script} {game}"
    assert lines[0] == f"*/5 * * * * {expected}"
    assert all(line.endswith(expected) for line in lines)
    assert str(ROOT) not in "".join(lines)  # nothing points into a checkout


def test_an_installed_bansha_that_cannot_find_itself_says_so(monkeypatch):
    from pipeline import resources

    monkeypatch.setattr(resources, "shipped", lambda: True)
    monkeypatch.setattr(resources, "bansha_executable", lambda: None)
    result = CliRunner().invoke(cli, ["schedule", str(DEMO)])
    assert result.exit_code == 1
    assert "找不到正在运行的 bansha 程序" in result.output
