"""``bansha demo`` writes its own game file and prints commands that run as printed.

Before: the demo read config/games/demo.toml (days fixed in December 2026), printed
``bansha tally demo.toml --day 2 可看详情`` — which fails from the repository root, and with
``config/games/demo.toml`` silently made an empty ``config/games/demo.db`` — and without
``--as-of`` a ``tally`` on the demo store saw a day that had not happened yet. Now the demo
writes demo.toml (and its post script and night-actions file) beside its store, every date
moved by the same whole number of days so day 2 closed before the demo's moment, and the
commands it prints at the end run verbatim, from the same folder, and exit 0.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tomllib
from datetime import datetime, timedelta
from pathlib import Path
from subprocess import PIPE

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.cli.demo import MARK, DemoFiles, shift_dates
from pipeline.game.gamefile import load_game

ROOT = Path(__file__).resolve().parents[3]
GAMES = ROOT / "config" / "games"
BANSHA = Path(sys.executable).parent / "bansha"
HEADING = "接下来可以试试（在当前目录原样运行，不需要 --as-of）："

pytestmark = pytest.mark.skipif(not BANSHA.is_file(), reason=f"需要安装好的 {BANSHA}")


def printed_commands(out: str) -> list[str]:
    """The command lines under the demo's last heading (indented four spaces)."""
    assert HEADING in out, out
    tail = out.split(HEADING, 1)[1].splitlines()
    return [line.strip() for line in tail if line.startswith("    ") and line.strip()]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BANSHA_")}
    env.update(extra)
    return env


def test_every_printed_command_runs_verbatim_in_a_shell(tmp_path):
    """The default place (the temp folder's bansha-demo/), run from another folder."""
    temp = tmp_path / "temp"
    temp.mkdir()
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    env = clean_env(TMPDIR=str(temp))
    before = datetime.now().astimezone()

    demo = subprocess.run(
        [str(BANSHA), "demo"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )

    assert demo.returncode == 0, demo.stderr
    folder = temp / "bansha-demo"
    game_file = folder / "demo.toml"
    commands = printed_commands(demo.stdout)
    assert len(commands) >= 5
    assert all(str(game_file) in c for c in commands)
    assert not any("--as-of" in c for c in commands)
    # the links it printed (and why's) point at the simulator, stopped by now: said so
    base = demo.stdout.split("模拟论坛已启动：", 1)[1].split()[0]
    stopped = f"模拟论坛（{base}）已随演示结束关闭"
    assert stopped in demo.stdout
    assert demo.stdout.index(stopped) < demo.stdout.index("接下来可以试试")
    running = {
        command: subprocess.Popen(
            ["bash", "-c", command], cwd=cwd, env=env, stdout=PIPE, stderr=PIPE, text=True
        )
        for command in commands
    }
    outputs = {}
    for command, proc in running.items():
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, f"{command}\n{stdout}\n{stderr}"
        outputs[shlex.split(command)[1]] = stdout
    # without --as-of the store's day 2 is seen as the demo saw it: closed, counted
    assert "结果：出局：饺子" in outputs["tally"]
    assert "d2-qianshui-粽子" in outputs["flags"]
    assert "投票结果" in outputs["drafts"] and "已发出" in outputs["drafts"]
    assert "潜水" in outputs["why"]
    # nothing was created in the folder the commands ran from, nor beside the repository's file
    assert list(cwd.iterdir()) == []
    assert (
        not (GAMES / "demo.db").exists() or (GAMES / "demo.db").stat().st_mtime < before.timestamp()
    )

    # the written game file: the demo's, its comments kept, day 2 closed before the demo ended
    text = game_file.read_text("utf-8")
    assert text.startswith(MARK)
    assert "# 身份牌（仅导演可见）：rules/m135.txt 第 5 行的 24 张牌" in text
    game = load_game(game_file, env={}, check_login=False)
    after = datetime.now().astimezone()
    day1, day2 = game.days
    assert day2.closes < before and day2.closes > before - timedelta(days=2)
    assert day2.closes.astimezone(game.game.tz).strftime("%H:%M") == "22:00"  # whole days moved
    assert day1.opens.astimezone(game.game.tz).strftime("%H:%M") == "10:00"
    assert day2.opens - day1.opens == timedelta(days=1)
    assert (folder / "demo_posts.toml").read_text("utf-8").startswith(MARK)
    assert f"演示用的游戏文件：{game_file}" in demo.stdout
    assert after >= day2.closes


def test_relative_paths_and_a_store_a_bare_command_would_miss(tmp_path, monkeypatch):
    """A relative ``--db``: relative commands, run from that folder. With ``BANSHA_DB`` set, a
    command naming only the game file would open another store: every command has ``--db``."""
    monkeypatch.chdir(tmp_path)
    for key in [k for k in os.environ if k.startswith("BANSHA_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("BANSHA_DB", str(tmp_path / "别的.db"))
    out = CliRunner().invoke(cli, ["demo", "--db", "演示/局.db"])
    assert out.exit_code == 0, out.output

    commands = printed_commands(out.output)
    assert commands and all(" 演示/局.toml --db 演示/局.db " in f"{c} " for c in commands)
    for command in commands:
        args = shlex.split(command)[1:]  # the program: this test runs bansha in-process
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 0, f"{command}\n{done.output}"
    assert "结果：出局：饺子" in CliRunner().invoke(cli, shlex.split(commands[0])[1:]).output
    assert sorted(p.name for p in (tmp_path / "演示").glob("*.toml")) == [
        "局.toml",
        "局_night1.toml",
        "局_posts.toml",
    ]
    assert not (tmp_path / "别的.db").exists()


def test_a_directors_file_of_the_same_name_is_never_overwritten(tmp_path):
    mine = tmp_path / "m135.toml"
    mine.write_text("# 我的游戏文件\n", "utf-8")
    out = CliRunner().invoke(cli, ["demo", "--db", str(tmp_path / "m135.db")])
    assert out.exit_code == 1
    assert f"{mine} 已经存在，而且不是 bansha demo 写的文件：演示不会覆盖它" in out.output
    assert mine.read_text("utf-8") == "# 我的游戏文件\n"
    assert not (tmp_path / "m135.db").exists()


def test_the_files_move_by_whole_days_to_just_before_now(tmp_path):
    files = DemoFiles.beside(tmp_path / "demo.db")
    sources = (GAMES / "demo.toml", GAMES / "demo_posts.toml", GAMES / "demo_night1.toml")
    moment = datetime.fromisoformat("2026-12-03T09:00:00+08:00")  # demo_posts.toml [sim] now

    assert files.write(*sources, moment) == 0  # --now at the script's moment: dates as they are
    for source, written in zip(sources, files.all(), strict=True):
        assert tomllib.loads(written.read_text("utf-8")) == tomllib.loads(source.read_text("utf-8"))

    later = datetime.fromisoformat("2027-03-10T08:59:00+08:00")  # a minute before 09:00
    shift = files.write(*sources, later)
    assert shift == 96  # 2026-12-03 + 96 days = 2027-03-09 (09:00 is after 08:59 on the 10th)
    game = load_game(files.game, env={}, check_login=False)
    assert game.days[1].closes == datetime.fromisoformat("2027-03-08T22:00:00+08:00")
    assert tomllib.loads(files.script.read_text("utf-8"))["sim"]["now"] == datetime.fromisoformat(
        "2027-03-09T09:00:00+08:00"
    )


def test_shifting_moves_every_date_and_nothing_else():
    text = (GAMES / "demo_posts.toml").read_text("utf-8")
    shifted = shift_dates(text, -3)
    before, after = tomllib.loads(text), tomllib.loads(shifted)
    assert after["sim"]["now"] == before["sim"]["now"] - timedelta(days=3)
    edited = [(b, a) for b, a in zip(before["posts"], after["posts"], strict=True) if "edit" in b]
    assert edited and all(a["edit"]["at"] == b["edit"]["at"] - timedelta(days=3) for b, a in edited)
    assert [p["text"] for p in after["posts"]] == [p["text"] for p in before["posts"]]
    # comments and layout kept: only the date digits changed
    assert len(shifted.splitlines()) == len(text.splitlines())
    assert "# 截止（22:00）之后的投票：无效；麻花当天算未投票。" in shifted
    with pytest.raises(ValueError, match="没能整体平移"):
        shift_dates('text = "见 = 2026-12-01T10:00:00+08:00"\n', 1)


def test_after_the_demo_tally_shows_the_stored_view_as_derived(tmp_path, monkeypatch):
    """The demo ends with cron's next cycle after the engine's resolutions, so a director's
    first ``bansha tally`` shows what that cycle stored (the fast path) — exactly what
    deriving prints (``-v`` derives)."""
    from pipeline.cli import votes

    db = tmp_path / "demo.db"
    env = {k: None for k in os.environ if k.startswith("BANSHA_")}
    done = CliRunner().invoke(cli, ["demo", "--db", str(db)], env=env)
    assert done.exit_code == 0, done.output
    game = str(tmp_path / "demo.toml")
    derived = CliRunner().invoke(cli, ["-v", "tally", game, "--day", "2"], env=env)
    assert derived.exit_code == 0, derived.output

    def no_derive(**_kw: object) -> None:
        raise AssertionError("bansha tally derived: the demo's last cycle stored no view")

    monkeypatch.setattr(votes, "tally_full", no_derive)
    shown = CliRunner().invoke(cli, ["tally", game, "--day", "2"], env=env)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == derived.stdout
    assert "结果：出局：饺子" in shown.stdout
