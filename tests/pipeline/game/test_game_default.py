"""The defaults a director expects.

The game file: ``BANSHA_GAME``, else the one game file in the current folder — a ``.toml``
with a ``[game]`` table (the demo's post script and night-actions file have none); none or
several is said in Chinese. A command's other positional arguments still work without it
(``bansha drafts show 3``). The day: :func:`pipeline.cli.default_day` — the open day, the last
closed one after a close, and before the first day opens the first day with a note.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli, default_day, find_game_file
from pipeline.game.gamefile import load_game

ROOT = Path(__file__).resolve().parents[3]
GAMES = ROOT / "config" / "games"
DEMO = GAMES / "demo.toml"
CST = timezone(timedelta(hours=8))


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BANSHA_GAME", "BANSHA_DB"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A director's folder: the demo game file with its post script and night-actions file."""
    for name in ("demo.toml", "demo_posts.toml", "demo_night1.toml"):
        shutil.copy(GAMES / name, tmp_path / name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str, code: int = 0, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == code, result.output
    return result


# --------------------------------------------------------------------------- the game file


def test_the_one_game_file_in_the_folder_is_the_default(folder):
    # demo_posts.toml and demo_night1.toml are TOML too, but have no [game] table
    assert find_game_file(folder, env={}) == (folder / "demo.toml", "当前目录中唯一的游戏文件")
    out = run("check").stdout
    assert "游戏文件 " in out and "demo.toml 没有问题。" in out


def test_bansha_game_names_the_game_file(folder, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "m135.toml"
    shutil.copy(GAMES / "m135.toml", elsewhere)
    shutil.copy(GAMES / "m209.toml", folder / "m209.toml")  # two game files here now
    assert find_game_file(folder, env={"BANSHA_GAME": str(elsewhere)}) == (
        elsewhere,
        "环境变量 BANSHA_GAME",
    )
    out = run("check", env={"BANSHA_GAME": str(elsewhere)}).stdout
    assert f"游戏文件 {elsewhere} 没有问题。" in out and "规则集 m135" in out
    # a file given on the command line still wins
    out = run("check", "m209.toml", env={"BANSHA_GAME": str(elsewhere)}).stdout
    assert "游戏文件 m209.toml 没有问题。" in out


def test_bansha_game_naming_a_missing_file_is_said(folder):
    result = run("check", code=1, env={"BANSHA_GAME": "nowhere.toml"})
    assert "环境变量 BANSHA_GAME 指向的游戏文件不存在：nowhere.toml" in result.stderr


def test_several_game_files_are_said_by_name(folder):
    shutil.copy(GAMES / "m209.toml", folder / "m209.toml")
    result = run("posts", "--day", "1", code=2)
    assert (
        f"没有指定游戏文件，当前目录 {folder} 中有 2 个游戏文件（demo.toml、m209.toml），"
        "不知道用哪一个"
    ) in result.stderr
    assert "环境变量 BANSHA_GAME" in result.stderr
    assert "用法: cli posts [OPTIONS] [GAME.toml]" in result.stderr  # a usage error: exit 2
    assert sorted(p.name for p in folder.iterdir()) == [
        "demo.toml",
        "demo_night1.toml",
        "demo_posts.toml",
        "m209.toml",
    ]


def test_no_game_file_is_said_and_points_to_bansha_new(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(GAMES / "demo_posts.toml", tmp_path / "demo_posts.toml")
    result = run("tally", "--day", "1", code=2)
    assert f"没有指定游戏文件，当前目录 {tmp_path} 中也没有游戏文件（含 [game] 表的 .toml）" in (
        result.stderr
    )
    assert "bansha new 我的游戏.toml --ruleset 规则集" in result.stderr


def test_a_broken_toml_is_not_taken_for_a_game_but_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.toml").write_text("[game\nid = 1\n", encoding="utf-8")
    result = run("check", code=2)
    assert "mine.toml 不是有效的 TOML，用 bansha check 文件名 查看问题" in result.stderr


def test_the_default_game_goes_with_its_store_and_the_other_arguments(folder, db):
    shutil.copy(db, folder / "demo.db")  # the store beside the game file, its default place
    out = run("posts", "--day", "2").stdout
    assert "== 讨论帖 tid=2011：" in out
    # `bansha drafts show 3`: 3 is the draft, not a game file
    out = run("drafts", "show", "3").stdout
    assert out.startswith("第 3 号草稿：")
    assert run("drafts", "show", "demo.toml", "3").stdout == out
    result = run("lastwords", "remove", "99", code=1)
    assert "没有编号为 99 的遗言记录" in result.stderr


def test_help_shows_the_game_file_is_optional():
    out = CliRunner().invoke(cli, ["posts", "--help"], prog_name="bansha").stdout
    assert "用法: bansha posts [OPTIONS] [GAME.toml]" in out
    assert "--day INTEGER  第几天（默认：今天，关门后是刚关门的那一天）。" in out


# --------------------------------------------------------------------------- the day


@pytest.fixture(scope="module")
def demo():
    # demo.toml: day 1 opens 12-01 10:00 and closes 22:00; day 2 12-02 10:00 to 22:00
    return load_game(DEMO, env={}, check_login=False)


@pytest.mark.parametrize(
    ("now", "day", "status"),
    [
        (datetime(2026, 12, 1, 10, 0, tzinfo=CST), 1, "进行中"),  # the moment it opens
        (datetime(2026, 12, 1, 21, 59, tzinfo=CST), 1, "进行中"),
        (datetime(2026, 12, 1, 22, 0, tzinfo=CST), 1, "已关门"),  # closed: still that day
        (datetime(2026, 12, 2, 9, 0, tzinfo=CST), 1, "已关门"),  # the night between
        (datetime(2026, 12, 2, 10, 0, tzinfo=CST), 2, "进行中"),
        (datetime(2026, 12, 9, 12, 0, tzinfo=CST), 2, "已关门"),  # after the last day
    ],
)
def test_default_day_is_the_open_day_or_the_last_closed(demo, now, day, status):
    choice = default_day(demo, now)
    assert (choice.day, choice.status, choice.note) == (day, status, None)


def test_before_the_first_day_opens_it_is_day_1_with_a_note(demo):
    choice = default_day(demo, datetime(2026, 11, 30, 8, 0, tzinfo=CST))
    assert choice.day == 1
    assert choice.note == "第 1 天还没开门（12-01 10:00 开门）"


def test_a_game_without_days_has_no_default_day(demo):
    import click

    with pytest.raises(click.ClickException, match=r"游戏文件中还没有任何一天（\[\[days\]\]）"):
        default_day(demo.model_copy(update={"days": []}), datetime(2026, 12, 1, tzinfo=CST))


def test_report_without_day_takes_the_day_at_its_as_of(tmp_path, db):
    html = tmp_path / "r.html"
    args = ["report", str(DEMO), "--db", str(db), "--html", str(html)]
    out = run(*args, "--as-of", "2026-12-02T12:00:00+08:00").stdout
    assert out == f"已写入第 2 天的报告：{html}\n"
    result = run(*args, "--as-of", "2026-11-30T12:00:00+08:00")
    assert result.stdout == f"已写入第 1 天的报告：{html}\n"
    assert "注意：第 1 天还没开门（12-01 10:00 开门），先显示第 1 天（用 --day 指定别的天）" in (
        result.stderr
    )
