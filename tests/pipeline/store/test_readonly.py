"""Read-only commands never create or write a store.

``game_command(readonly=True)`` opens an existing store read-only (SQLite ``mode=ro``, no
migration): a missing store is said in Chinese and nothing is created; the store's bytes, its
mtime and its folder are the same after the command; a write the command attempts fails with
a Chinese line instead of changing anything.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import pipeline.store.migrations as migrations_module
from pipeline.cli import cli, game_command
from pipeline.store import StoreError, open_store, open_store_readonly

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"


def read_only() -> list:
    """Every read-only command as (words before the game file, words after it); ``REPORT``
    stands for the report's HTML path, in a folder of its own."""
    commands = {
        "posts": (["posts"], ["--day", "2"]),
        "report": (["report"], ["--day", "2", "--html", "REPORT"]),
        "lastwords-list": (["lastwords", "list"], []),
        "tally": (["tally"], ["--day", "2"]),
        "why": (["why"], ["--day", "2", "--player", "饺子"]),
        "flags": (["flags", "list"], []),
        "cards": (["cards"], []),
        "drafts-list": (["drafts", "list"], []),
        "drafts-show": (["drafts", "show"], ["1"]),
        "state": (["state"], []),
        "night-list": (["night", "list"], []),
    }
    return [pytest.param(*args, id=name) for name, args in commands.items()]


READ_ONLY = read_only()


def _args(rest: list[str], tmp_path: Path) -> list[str]:
    return [str(tmp_path / "out" / "report.html") if a == "REPORT" else a for a in rest]


def listing(folder: Path, prefix: str = "") -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(prefix))


@pytest.fixture(autouse=True)
def _no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BANSHA_GAME", "BANSHA_DB"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize(("words", "rest"), READ_ONLY)
def test_a_read_only_command_on_a_missing_store_creates_nothing(tmp_path, words, rest):
    folder = tmp_path / "game"
    folder.mkdir()
    game_file = folder / "demo.toml"
    shutil.copy(GAME, game_file)
    result = CliRunner().invoke(cli, [*words, str(game_file), *_args(rest, tmp_path)])
    assert result.exit_code == 1, result.output
    assert f"还没有数据库 {folder / 'demo.db'}" in result.stderr
    assert "先运行 bansha init 或 bansha cycle" in result.stderr
    assert listing(folder) == ["demo.toml"]  # no demo.db, no -wal/-shm, no lock
    assert not (tmp_path / "out").exists()  # report: no HTML either


@pytest.fixture
def stale_db(db: Path) -> Path:
    """The demo store, its stored day-2 verdicts dropped (as a cycle interrupted long ago
    might leave them), its mtime set in the past: a command that writes verdicts back now
    changes the file."""
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("DELETE FROM votes WHERE day = 2")
    conn.close()
    os.utime(db, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return db


@pytest.mark.parametrize(("words", "rest"), READ_ONLY)
def test_a_read_only_command_leaves_the_store_as_it_was(tmp_path, stale_db, words, rest):
    def state() -> tuple[str, int, list[str]]:
        digest = hashlib.sha256(db.read_bytes()).hexdigest()
        return digest, db.stat().st_mtime_ns, listing(db.parent, db.name)

    db = stale_db
    before = state()
    args = [*words, str(GAME), *_args(rest, tmp_path), "--db", str(stale_db)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert state() == before  # same bytes, same mtime, no -wal/-shm left beside it


def test_posts_and_report_read_the_demo_store(tmp_path, db):
    out = CliRunner().invoke(cli, ["posts", str(GAME), "--db", str(db), "--day", "2"]).output
    assert "== 讨论帖 tid=2011：" in out
    html = tmp_path / "r.html"
    args = ["report", str(GAME), "--db", str(db), "--day", "2", "--html", str(html)]
    result = CliRunner().invoke(cli, [*args, "--as-of", "2026-12-03T09:00:00+08:00"])
    assert result.exit_code == 0, result.output
    assert "出局" in html.read_text(encoding="utf-8")


def test_a_write_in_a_read_only_command_is_refused_in_chinese(db):
    group = click.Group()

    @group.command("poke")
    @game_command(readonly=True)
    def poke(ctx) -> None:
        ctx.store.set_meta("poked", "yes")

    before = (db.read_bytes(), db.stat().st_mtime_ns)
    result = CliRunner().invoke(group, ["poke", str(GAME), "--db", str(db)])
    assert result.exit_code == 1
    assert "内部错误：只读命令" in result.stderr and "试图写入数据库" in result.stderr
    assert "没有写入任何内容" in result.stderr
    assert (db.read_bytes(), db.stat().st_mtime_ns) == before


def test_an_older_store_is_not_migrated_by_a_read_only_command(tmp_path, monkeypatch):
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:  # a store made by the bansha before the last migration
        m.setattr(migrations_module, "MIGRATIONS", migrations_module.MIGRATIONS[:-1])
        open_store(path).close()
    before = path.read_bytes()
    result = CliRunner().invoke(cli, ["posts", str(GAME), "--db", str(path), "--day", "1"])
    assert result.exit_code == 1
    assert f"数据库 {path} 是旧版本的 bansha 建的，需要升级：先运行 bansha init" in result.stderr
    assert path.read_bytes() == before and listing(tmp_path) == ["old.db"]


def test_an_empty_file_is_not_a_store(tmp_path):
    path = tmp_path / "demo.db"
    path.touch()  # what older read-only commands left behind
    result = CliRunner().invoke(cli, ["posts", str(GAME), "--db", str(path), "--day", "1"])
    assert result.exit_code == 1
    assert f"数据库 {path} 还没有初始化（是空的）：先运行 bansha init 或 bansha cycle" in (
        result.stderr
    )
    assert path.stat().st_size == 0 and listing(tmp_path) == ["demo.db"]


def test_open_store_readonly_refuses_what_is_not_a_store(tmp_path):
    with pytest.raises(StoreError, match="还没有数据库"):
        open_store_readonly(tmp_path / "none.db")
    assert listing(tmp_path) == []
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all, just text" * 100)
    with pytest.raises(StoreError, match="不是 bansha 的数据库文件"):
        open_store_readonly(junk)


def test_a_reader_beside_a_running_writer_sees_its_data_and_leaves_its_files(tmp_path):
    path = tmp_path / "game.db"
    writer = open_store(path)
    writer.set_meta("k", "1")
    reader = open_store_readonly(path)
    assert reader.get_meta("k") == "1"
    writer.set_meta("k", "2")  # a cycle writes while the director reads
    assert reader.get_meta("k") == "2"
    reader.close()
    assert {"game.db-wal", "game.db-shm"} <= set(listing(tmp_path))  # the writer's, kept
    writer.close()
    assert listing(tmp_path) == ["game.db"]


def test_a_store_removed_while_a_reader_closes_is_not_created_again(tmp_path):
    """A reader that made the store's -wal/-shm files removes them as it closes; when the
    store itself was removed meanwhile (the director started over), that clean-up never
    creates an empty store in its place (ReadOnlyStore.close does the same)."""
    from pipeline import close_readonly, connect_readonly

    path = tmp_path / "game.db"
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("CREATE TABLE t(x)")
    db.close()
    assert not Path(f"{path}-wal").exists()
    conn, had_sidecars = connect_readonly(path)
    conn.execute("SELECT count(*) FROM t").fetchone()
    assert Path(f"{path}-wal").exists() and not had_sidecars
    path.unlink()
    close_readonly(conn, path, had_sidecars)
    assert not path.exists()
