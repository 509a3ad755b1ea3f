"""A director's typo gets a hint: "did you mean" for unknown keys and tables,
the environment variable for a cookie written in the file, the right shape of a date."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.game.gamefile import GameFileError, load_game

DEMO = Path(__file__).resolve().parents[2] / "config" / "games" / "demo.toml"


def _problems(tmp_path: Path, edit) -> str:  # type: ignore[no-untyped-def]
    path = tmp_path / "g.toml"
    path.write_text(edit(DEMO.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(GameFileError) as exc:
        load_game(path, env={})
    return str(exc.value)


def test_an_unknown_key_names_the_nearest_one(tmp_path: Path) -> None:
    out = _problems(tmp_path, lambda t: t.replace("\ntitle = ", "\ntitel = ", 1))
    assert "game.titel：未知的键（拼写错误？是不是 title？见 docs/游戏文件.md）" in out


def test_an_unknown_table_names_the_nearest_one(tmp_path: Path) -> None:
    out = _problems(tmp_path, lambda t: t + '\n[drafs]\ndirector_signature = "x"\n')
    assert "drafs：未知的键（拼写错误？是不是 drafts？" in out


def test_a_cookie_in_the_file_points_to_the_environment(tmp_path: Path) -> None:
    out = _problems(tmp_path, lambda t: t.replace("[forum]\n", '[forum]\ncookie = "abc123"\n', 1))
    assert "forum.cookie：未知的键：Cookie 不写在游戏文件里：放进环境变量" in out
    assert "BANSHA_COOKIE" in out
    assert "abc123" not in out  # the value itself is never repeated


def test_a_date_with_slashes_gets_the_date_hint(tmp_path: Path) -> None:
    out = _problems(tmp_path, lambda t: t.replace("opens = 2026-", "opens = 2026/", 1))
    assert "TOML 语法错误：这一行的日期写法不对：写成 2026-12-01T09:00:00+08:00" in out
    assert "多出了内容" not in out
