"""A cycle against a forum that is down says so once, in one Chinese line:
the retries and the per-thread failure are for ``-v``; cron's log gets the cycle's line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli

GAME = Path(__file__).resolve().parents[2] / "config" / "games" / "demo.toml"


def test_a_dead_forum_is_one_line_from_the_cycle(tmp_path: Path) -> None:
    game = tmp_path / "g.toml"
    text = GAME.read_text(encoding="utf-8").replace("http://127.0.0.1:8080/", "http://127.0.0.1:9/")
    game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["cycle", str(game), "--as-of", "2026-12-03T09:00:00+08:00"],  # two closed days
        env={"BANSHA_DB": str(tmp_path / "g.db"), "BANSHA_MAX_ATTEMPTS": "2"},
    )
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith("错误：本轮未完成：") and lines[0].count("无法连接论坛") == 1
