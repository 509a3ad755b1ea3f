"""The command line as a newcomer meets it: the defaults every command takes, option values
in Chinese beside English, an example in every help page."""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from pipeline.cli import cli, load_all_commands

ROOT = Path(__file__).resolve().parents[2]
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
