"""cron/bansha-cycle.sh, what a crontab line runs.

The README promises: the output goes to ``<game>.log`` beside the game file, an error leaves a
line there and a non-zero exit code. The log names players and drafts: it is created private
(0600) whatever cron's umask. Tested with ``BANSHA_BIN`` pointing at a tiny fake ``bansha``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

WRAPPER = Path(__file__).resolve().parents[3] / "cron" / "bansha-cycle.sh"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("flock") is None,
    reason="需要 bash 和 flock（util-linux）",
)


def fake_bansha(tmp_path: Path, code: int) -> Path:
    script = tmp_path / f"fake-bansha-{code}"
    script.write_text(
        "#!/bin/sh\n"
        'echo "假的 bansha $*"\n'
        f'[ {code} -eq 0 ] || echo "错误：论坛暂时无法访问" >&2\n'
        f"exit {code}\n",
        "utf-8",
    )
    script.chmod(0o755)
    return script


def run_wrapper(tmp_path: Path, game: Path, code: int, **env: str) -> subprocess.CompletedProcess:
    full = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "BANSHA_BIN": str(fake_bansha(tmp_path, code)),
        "BANSHA_ENV_FILE": str(tmp_path / "no-env-file"),
        **env,
    }
    return subprocess.run(
        ["bash", str(WRAPPER), str(game)],
        env=full,
        capture_output=True,
        text=True,
        timeout=30,
        preexec_fn=lambda: os.umask(0o022),  # cron's usual umask: files come out 0644
    )


@pytest.fixture
def game(tmp_path: Path) -> Path:
    path = tmp_path / "m135.toml"
    path.write_text("# 游戏文件（假的 bansha 不读它）\n", "utf-8")
    return path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_failed_cycle_exits_with_bansha_code_and_a_private_log(tmp_path, game):
    done = run_wrapper(tmp_path, game, 3)

    assert done.returncode == 3  # what bansha said, not 0
    log = tmp_path / "m135.log"
    assert mode(log) == 0o600
    text = log.read_text("utf-8")
    assert f"cycle {game}" in text
    assert f"假的 bansha cycle {game}" in text
    assert "错误：论坛暂时无法访问" in text
    assert "退出码 3" in text
    assert done.stdout == "" and done.stderr == ""  # all of it is in the log


def test_a_good_cycle_exits_0_and_says_no_exit_code(tmp_path, game):
    done = run_wrapper(tmp_path, game, 0)
    assert done.returncode == 0
    text = (tmp_path / "m135.log").read_text("utf-8")
    assert f"假的 bansha cycle {game}" in text and "退出码" not in text


def test_an_old_world_readable_log_is_made_private(tmp_path, game):
    log = tmp_path / "m135.log"
    log.write_text("旧的日志\n", "utf-8")
    log.chmod(0o644)
    assert run_wrapper(tmp_path, game, 0).returncode == 0
    assert mode(log) == 0o600
    assert log.read_text("utf-8").startswith("旧的日志\n")  # appended, not replaced


def test_an_env_file_others_can_read_is_refused_with_exit_1(tmp_path, game):
    env_file = tmp_path / "env"
    env_file.write_text("BANSHA_COOKIE='秘密'\n", "utf-8")
    env_file.chmod(0o644)

    done = run_wrapper(tmp_path, game, 0, BANSHA_ENV_FILE=str(env_file))

    assert done.returncode == 1
    log = tmp_path / "m135.log"
    assert mode(log) == 0o600
    text = log.read_text("utf-8")
    assert f"拒绝读取 {env_file}：权限是 644，应为 600" in text
    assert "假的 bansha" not in text and "秘密" not in text


def test_a_cycle_still_running_is_skipped_with_exit_0(tmp_path, game):
    with open(tmp_path / "m135.cron.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = run_wrapper(tmp_path, game, 3)
    assert done.returncode == 0
    text = (tmp_path / "m135.log").read_text("utf-8")
    assert "上一轮仍在运行，跳过" in text and "假的 bansha" not in text


# --------------------------------------------------------------------------- one-off lines
# crontab(5) has no year field, so `01 22 01 12 *` fires on 12-01 every year;
# `bansha schedule` gives each one-off line BANSHA_ONLY_ON=<its date> and the wrapper runs the
# cycle only on that date (the machine's own date, `date +%F`).


def fake_date_dir(tmp_path: Path, today: str) -> Path:
    """A ``date`` that says ``today`` for ``date +%F`` and is the real one otherwise."""
    real = shutil.which("date")
    assert real is not None
    folder = tmp_path / f"fake-date-{today}"
    folder.mkdir()
    script = folder / "date"
    script.write_text(
        f'#!/bin/sh\n[ "$1" = "+%F" ] && {{ echo {today}; exit 0; }}\nexec {real} "$@"\n', "utf-8"
    )
    script.chmod(0o755)
    return folder


def run_on(tmp_path: Path, game: Path, today: str, only_on: str) -> subprocess.CompletedProcess:
    path = f"{fake_date_dir(tmp_path, today)}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    return run_wrapper(tmp_path, game, 0, PATH=path, BANSHA_ONLY_ON=only_on)


def test_a_one_off_line_runs_the_cycle_on_its_date(tmp_path, game):
    done = run_on(tmp_path, game, "2026-12-01", "2026-12-01")
    assert done.returncode == 0
    assert f"假的 bansha cycle {game}" in (tmp_path / "m135.log").read_text("utf-8")


def test_a_one_off_line_does_nothing_on_the_same_day_of_another_year(tmp_path, game):
    done = run_on(tmp_path, game, "2027-12-01", "2026-12-01")
    assert done.returncode == 0
    assert done.stdout == "" and done.stderr == ""
    assert not (tmp_path / "m135.log").exists()  # silent: not even a log line
    assert not (tmp_path / "m135.cron.lock").exists()


def test_a_one_off_line_does_nothing_the_day_before_either(tmp_path, game):
    done = run_on(tmp_path, game, "2026-11-30", "2026-12-01")
    assert done.returncode == 0 and not (tmp_path / "m135.log").exists()


def test_a_malformed_date_is_said_in_the_log_and_exits_1(tmp_path, game):
    done = run_on(tmp_path, game, "2026-12-01", "12/01")
    assert done.returncode == 1
    text = (tmp_path / "m135.log").read_text("utf-8")
    assert "BANSHA_ONLY_ON=12/01 不是日期（应为 年-月-日，如 2026-12-02），本轮没有运行" in text
    assert "假的 bansha" not in text
