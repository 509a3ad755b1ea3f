"""What a director reads at the command line: plain Chinese, and the next step if any."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.pipeline.derive.test_sun_rounds import DAY2, VOTE_TID, add_posts, h, run, write_game


def test_the_commands_say_what_happened_and_what_to_do(tmp_path: Path) -> None:
    game = (write_game(tmp_path / "g.toml", f"vote = {VOTE_TID}"), tmp_path / "g.db")
    run(game, "night", "add", "--night", "0", "--actor", "己", "--skill", "模式选择",
        "--choice", "法式守卫")  # fmt: skip
    out = run(game, "night", "resolve", "--night", "0")
    assert "公示：无" in out  # the opening announces nothing
    # a phase after a day the game file does not have
    err = run(game, "night", "resolve", "--night", "5", code=1)
    assert "游戏文件中没有第5天" in err
    # a modifier is echoed in words, not as an identifier
    out = run(game, "vote", "modifier", "--day", "2", "--player", "丙", "--kind", "force_top",
              "--source", "导演裁定")  # fmt: skip
    assert "已记录：第2天 丙：技能最高票（导演裁定）" in out
    out = run(game, "vote", "modifier", "--day", "2", "--player", "丁", "--kind", "weight_set",
              "--value", "0", "--source", "迷魂")  # fmt: skip
    assert "丁：票权改为 0（迷魂）" in out
    # flags end with how to turn them into cards (a crawled day: a day never read raises none)
    add_posts(game[1], 2011, [(901, "甲", DAY2 + timedelta(hours=1), "发言")])
    out = run(game, "flags", "--as-of", h(23).isoformat())
    assert "标记确认后才变成牌：bansha flags confirm g.toml 编号" in out
    assert "--why 理由" in out


def test_the_extra_round_says_when_it_starts(tmp_path: Path) -> None:
    game = (write_game(tmp_path / "s.toml"), tmp_path / "s.db")
    run(game, "init")  # tally only reads a store
    out = run(game, "tally", "--day", "2", "--as-of", h(12).isoformat())
    assert "（额外一轮在 12-02 15:00:00 开始）" in out
