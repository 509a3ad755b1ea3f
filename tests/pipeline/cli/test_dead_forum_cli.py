"""A cycle against a forum that is down says so once, in one Chinese line:
the retries and the per-thread failure are for ``-v``; cron's log gets the cycle's line."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli

GAME = Path(__file__).resolve().parents[3] / "config" / "games" / "demo.toml"


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


def test_a_dead_forum_is_not_asked_again_to_publish(tmp_path: Path) -> None:
    """README: a cycle stops at the first sign that the forum is down — an approved draft is
    not sent into the same outage (no attempt, no second series of retries, said once)."""
    import hashlib

    from pipeline.store import open_store

    game = tmp_path / "g.toml"
    text = GAME.read_text(encoding="utf-8").replace("http://127.0.0.1:8080/", "http://127.0.0.1:9/")
    game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), encoding="utf-8")
    store = open_store(tmp_path / "g.db")
    body = "[b]第1天投票结果[/b]\n饺子 3 票。"
    stamp = "2026-12-02T08:00:00+08:00"
    with store.atomic():
        store.db.execute(
            "INSERT INTO drafts(kind, day, key, tid, action, body, body_hash, generated_body, "
            "state, created_at, updated_at, approved_at) "
            "VALUES ('result', 1, 'result:1', 2002, 'reply', ?, ?, ?, 'approved', ?, ?, ?)",
            [body, hashlib.sha256(body.encode()).hexdigest(), body, stamp, stamp, stamp],
        )
    store.close()
    result = CliRunner().invoke(
        cli,
        ["cycle", str(game), "--as-of", "2026-12-02T09:00:00+08:00", "--verbose"],
        env={"BANSHA_DB": str(tmp_path / "g.db"), "BANSHA_MAX_ATTEMPTS": "2"},
    )
    assert result.exit_code == 1
    assert result.output.count("无法连接论坛") == 1, result.output
    assert "本轮没有发帖" in result.output
    store = open_store(tmp_path / "g.db")
    attempts = store.db.execute("SELECT COUNT(*) FROM post_attempts").fetchone()[0]
    state = store.db.execute("SELECT state FROM drafts").fetchone()[0]
    store.close()
    assert attempts == 0 and state == "approved"  # sent by the cycle after the outage


def test_crawl_names_each_unread_thread_once_with_its_days(tmp_path: Path) -> None:
    """The game's one progress thread (both days' ``progress``) is read once and, when the forum
    is down, named once — one line per thread, with the days it serves."""
    game = tmp_path / "g.toml"
    text = GAME.read_text(encoding="utf-8").replace("http://127.0.0.1:8080/", "http://127.0.0.1:9/")
    text = text.replace("progress = 2013", "progress = 2003")
    game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["crawl", str(game)],
        env={"BANSHA_DB": str(tmp_path / "g.db"), "BANSHA_MAX_ATTEMPTS": "1"},
    )
    assert result.exit_code == 1
    assert result.output.count("2003") == 1, result.output
    lines = [line for line in result.output.splitlines() if "帖子" in line]
    assert len(lines) == 5, lines  # 2001, 2002, 2003, 2011, 2012
    assert any(line.startswith("帖子 2003（第 1、2 天进程帖）：未抓取") for line in lines), lines
    assert any(line.startswith("帖子 2011（第 2 天讨论帖）：未抓取") for line in lines), lines
