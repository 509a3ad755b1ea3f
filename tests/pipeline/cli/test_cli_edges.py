"""The command line as a newcomer meets it: the defaults every command takes, option values
in Chinese beside English, an example in every help page."""

from __future__ import annotations

import shlex
import shutil
import sqlite3
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pipeline.cli import cli, load_all_commands

ROOT = Path(__file__).resolve().parents[3]
GAMES = ROOT / "config" / "games"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BANSHA_GAME", "BANSHA_DB", "BANSHA_CONSOLE_TOKEN"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- defaults


def test_serve_without_a_game_file_serves_the_one_in_the_folder(tmp_path, monkeypatch):
    import uvicorn

    calls: list[object] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(app))
    shutil.copy(GAMES / "demo.toml", tmp_path / "demo.toml")
    shutil.copy(GAMES / "demo_posts.toml", tmp_path / "demo_posts.toml")  # not a game file
    monkeypatch.chdir(tmp_path)

    out = CliRunner().invoke(cli, ["serve"])

    assert out.exit_code == 0, out.output
    assert len(calls) == 1
    assert f"（m135-demo）：{tmp_path / 'demo.db'}" in out.output


def test_serve_without_a_game_file_in_an_empty_folder_says_how(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = CliRunner().invoke(cli, ["serve"])
    assert out.exit_code == 2
    assert "没有指定游戏文件" in out.output and "BANSHA_GAME" in out.output


# --------------------------------------------------------------------------- home folders

#: a ``~user`` that is no one on a test machine (Windows guesses a folder for any name)
NO_ONE = "~bansha-no-such-user-7f3a"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="Windows makes up ~user's folder")


@posix_only
@pytest.mark.parametrize(
    ("args", "env"),
    [
        (["tally", str(GAMES / "demo.toml"), "--db", f"{NO_ONE}/demo.db"], {}),
        (["tally", str(GAMES / "demo.toml")], {"BANSHA_DB": f"{NO_ONE}/demo.db"}),
        (["tally"], {"BANSHA_GAME": f"{NO_ONE}/demo.toml"}),
    ],
)
def test_a_path_under_a_home_folder_that_is_not_here_is_said_in_chinese(args, env):
    out = CliRunner().invoke(cli, args, env=env)
    assert out.exit_code == 1, out.output
    assert f"找不到 {NO_ONE} 的主目录" in out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
    assert "Traceback" not in out.output and "RuntimeError" not in out.output


@posix_only
@posix_only
def test_bansha_run_says_a_db_under_no_home_here_before_the_game_file_appears(tmp_path):
    """The game file may come later (bansha run waits for it); the bad --db is said at once."""
    out = CliRunner().invoke(cli, ["run", str(tmp_path / "later.toml"), "--db", f"{NO_ONE}/x.db"])
    assert out.exit_code == 1, out.output
    assert f"找不到 {NO_ONE} 的主目录" in out.output


def test_a_stored_templates_folder_under_no_home_here_matches_no_plan_or_view(tmp_path):
    """The light cycle's plan and tally's view keep where the templates resolved; a home folder
    gone since (another account runs cron) is never that place: both take the full path."""
    from pipeline.cli import quick, tallyview

    game = tmp_path / "game.toml"
    assert quick.templates_resolved(f"{NO_ONE}/mine", game) == "!"
    assert tallyview.templates_resolved(f"{NO_ONE}/mine", game) == "!"
    assert quick.templates_resolved("mine", game) == str((tmp_path / "mine").resolve())


# --------------------------------------------------------------------------- Chinese values


def _settings(db: Path) -> list[tuple[str, str]]:
    return sqlite3.connect(db).execute("SELECT key, value FROM journal_settings").fetchall()


@pytest.mark.parametrize(
    ("typed", "stored", "said"),
    [
        ("accelerate", "accelerate", "加速"),
        ("加速", "accelerate", "加速"),
        ("不加速", "normal", "不加速"),
        # m209.txt:593 「延迟成功时，不再视为"执行加速"状态」: a 延时 day is a day not accelerated
        ("延时", "normal", "不加速"),
    ],
)
def test_vote_speed_takes_the_chinese_word_for_its_mode(tmp_path, typed, stored, said):
    db = tmp_path / "g.db"
    args = ["vote", "speed", str(GAMES / "demo.toml"), "--db", str(db), "--day", "2"]
    out = CliRunner().invoke(cli, [*args, "--mode", typed])
    assert out.exit_code == 0, out.output
    assert f"已记录：第2天 {said}" in out.output
    assert _settings(db) == [("speed:2", stored)]  # stored as the English value, read as before
    out = CliRunner().invoke(cli, [*args, "--mode", "自动"])
    assert out.exit_code == 0 and _settings(db) == []  # 自动 = auto: the ruling forgotten


def test_vote_modifier_takes_the_words_bansha_prints_for_a_kind(tmp_path):
    db = tmp_path / "g.db"
    base = ["vote", "modifier", str(GAMES / "demo.toml"), "--db", str(db), "--day", "2"]
    out = CliRunner().invoke(
        cli,
        [*base, "--player", "包子", "--kind", "得票加", "--value", "1", "--source", "乌鸦[诽谤]"],
    )
    assert out.exit_code == 0, out.output
    assert "已记录：第2天 包子：得票加 1（乌鸦[诽谤]）" in out.output
    rows = sqlite3.connect(db).execute("SELECT player, kind, value FROM journal_modifiers")
    assert rows.fetchall() == [("包子", "weight_add", "1")]
    bad = CliRunner().invoke(cli, [*base, "--player", "包子", "--kind", "加几票"])
    assert bad.exit_code == 2
    assert (
        "'加几票' 不是可选的值；可以写：得票加（weight_add）、票权改为（weight_set）" in bad.output
    )


# --------------------------------------------------------------------------- examples


def _commands(command: click.Command, path: tuple[str, ...] = ()):
    """Every command under ``command`` with its path (the hidden old name ``post`` left out)."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            if not sub.hidden:
                yield from _commands(sub, (*path, name))


def _help(command: click.Command, path: tuple[str, ...]) -> str:
    with click.Context(command, info_name=" ".join(("bansha", *path))) as ctx:
        return command.get_help(ctx)


def _examples(help_text: str) -> list[str]:
    """The lines under 示例： at the end of a help page."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "示例：")
    return [line.strip() for line in lines[start + 1 :] if line.strip()]


def test_every_help_page_ends_with_an_example_that_parses():
    load_all_commands()
    seen = 0
    for path, command in _commands(cli):
        text = _help(command, path)
        assert "示例：" in text, f"bansha {' '.join(path)} --help 没有示例"
        examples = _examples(text)
        assert examples, path
        for example in examples:
            words = shlex.split(example)
            assert words[0] == "bansha", example
            # the example names a real command path and options it has, with values it takes
            target: click.Command = cli
            args = words[1:]
            while args and args[0].startswith("-") and target is cli:
                args = args[1:]  # bansha -v cycle: the root's own option
            while isinstance(target, click.Group) and args and args[0] in target.commands:
                target, args = target.commands[args[0]], args[1:]
            if isinstance(target, click.Group):
                name = getattr(target, "default_cmd_name", None)
                assert name, f"{example}：没有这个命令"
                target = target.commands[name]
            target.make_context(example, list(args))  # raises on an unknown option or value
            seen += 1
    assert seen >= 60


# --------------------------------------------------------------------------- docs


def test_the_consoles_demo_example_serves_the_game_file_the_demo_wrote():
    """bansha demo moves the example's dates and writes its own game file beside its store: the
    console's example serves that file (the store beside it), not config/games/demo.toml, whose
    unshifted dates would read every vote of the shifted store as 尚未开门."""
    import tempfile

    from pipeline.cli.demo import DemoFiles

    doc = (ROOT / "docs" / "控制台.md").read_text(encoding="utf-8")
    demo_lines = [
        line for line in doc.splitlines() if "bansha serve" in line and "bansha demo" in line
    ]
    assert demo_lines
    store = Path(tempfile.gettempdir()) / "bansha-demo" / "demo.db"
    for line in demo_lines:
        words = shlex.split(line.split("#", 1)[0])
        assert words[1:] == ["serve", str(DemoFiles.beside(store).game)], line
