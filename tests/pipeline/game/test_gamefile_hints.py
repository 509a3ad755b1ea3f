"""A director's typo gets a hint: "did you mean" for unknown keys and tables,
the environment variable for a cookie written in the file, the right shape of a date."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.game.gamefile import GameFileError, load_game

DEMO = Path(__file__).resolve().parents[3] / "config" / "games" / "demo.toml"


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


# --------------------------------------------------------------------------- a Chinese IME


@pytest.mark.parametrize(
    ("before", "typed", "said"),
    [
        ('names = ["导演"]', 'names = ["导演"，"副导"]', "写成了全角逗号「，」"),
        ('names = ["导演"]', "names = [“导演”]", "写成了中文引号「“」"),
        ("uids = [100]", "uids ＝ [100]", "写成了全角等号「＝」"),
        ("uids = [100]", "uids = [１００]", "写成了全角数字「１」"),
        ("uids = [100]", "uids = ［100］", "写成了全角方括号「［」"),
    ],
)
def test_a_fullwidth_mark_is_named_with_the_mark_to_type(tmp_path, before, typed, said):
    out = _problems(tmp_path, lambda t: t.replace(before, typed, 1))
    assert f"TOML 语法错误：{said}（中文输入法打出的全角符号）：要写半角的「" in out
    # the wrong guesses tomllib's own message leads to are gone
    for wrong in ("数组缺少右括号", "值无效", '键后面缺少 "="'):
        assert wrong not in out


def test_the_column_is_the_fullwidth_marks(tmp_path):
    out = _problems(tmp_path, lambda t: t.replace("uids = [100]", "uids = [100，101]", 1))
    line = DEMO.read_text(encoding="utf-8").splitlines().index("uids = [100]") + 1
    assert f"第 {line} 行第 12 列：TOML 语法错误：写成了全角逗号「，」" in out


def test_chinese_punctuation_inside_a_string_is_text_not_a_slip(tmp_path):
    path = tmp_path / "g.toml"
    text = DEMO.read_text(encoding="utf-8").replace('names = ["导演"]', 'names = ["导演，副导"]')
    path.write_text(text, encoding="utf-8")
    assert load_game(path, env={}).director.names == ["导演，副导"]


@pytest.mark.parametrize(
    "typed",
    [
        "opens = 2026-12-01 10:00",
        "opens = 2026-12-01T10:00",
        "opens = 2026/12/01 10:00",
        "opens = 2026年12月1日 10:00",
        'opens = "2026-12-01 10:00"',
    ],
)
def test_a_time_written_as_people_write_it_is_given_back_as_toml_wants_it(tmp_path, typed):
    out = _problems(tmp_path, lambda t: t.replace("opens = 2026-12-01T10:00:00+08:00", typed, 1))
    # the offset is the game's timezone's (Asia/Shanghai in the demo) at that moment
    assert "时间要写成 2026-12-01T10:00:00+08:00" in out
    assert "多出了内容" not in out


def test_the_offset_follows_the_games_timezone(tmp_path):
    def edit(t: str) -> str:
        t = t.replace('timezone = "Asia/Shanghai"', 'timezone = "Asia/Tokyo"', 1)
        return t.replace("opens = 2026-12-01T10:00:00+08:00", "opens = 2026-12-01 10:00", 1)

    assert "时间要写成 2026-12-01T10:00:00+09:00" in _problems(tmp_path, edit)


@pytest.mark.parametrize(
    "typed",
    [
        "vote = https://bbs.example.com/forum.php?mod=viewthread&tid=2002&extra=page%3D1",
        'vote = "https://bbs.example.com/forum.php?mod=viewthread&tid=2002"',
        'vote = "https://bbs.example.com/thread-2002-1-1.html"',
    ],
)
def test_a_thread_address_pasted_for_its_tid_names_the_tid(tmp_path, typed):
    out = _problems(tmp_path, lambda t: t.replace("vote = 2002", typed, 1))
    assert "这里写帖子编号（tid），不是网址：这个网址里的 tid 是 2002，写成 2002（不加引号）" in out
