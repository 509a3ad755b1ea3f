"""The cron cycle: one at a time, nothing new changes nothing, a killed cycle is completed."""

from __future__ import annotations

import os
import stat
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.cycle import run_cycle, targets_due
from pipeline.game.gamefile import load_game
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import open_store
from pipeline.store.lock import CycleLocked, cycle_lock
from tests.pipeline.conftest import sim_crawler

ROOT = Path(__file__).resolve().parents[2]
GAME = ROOT / "config" / "games" / "demo.toml"
SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"
TZ = load_game(GAME, env={}).game.tz
DAY2_NOON = datetime(2026, 12, 2, 12, 30, tzinfo=TZ)
AFTER = datetime(2026, 12, 3, 9, 0, tzinfo=TZ)


@pytest.fixture
def world(tmp_path):
    game = load_game(GAME, env={})
    clock = SimClock(DAY2_NOON)
    sim = ForumSim.from_script(GAME, SCRIPT, clock)
    store = open_store(tmp_path / "demo.db")

    yield game, sim, clock, store, sim_crawler(sim, store, game.game.tz)
    store.close()


def test_only_opened_days_are_crawled(world):
    game, *_ = world
    assert {t.day for t in targets_due(game, datetime(2026, 12, 1, 12, 0, tzinfo=TZ))} == {1}
    assert {t.day for t in targets_due(game, DAY2_NOON)} == {1, 2}


def test_a_cycle_with_nothing_new_changes_nothing(world):
    game, sim, _clock, store, crawl = world
    first = run_cycle(game, store, now=DAY2_NOON, crawl=crawl)
    assert first.verdicts_changed and not first.errors
    votes = list(store.db.query("SELECT * FROM votes ORDER BY day, seq"))
    flags = list(store.db.query("SELECT * FROM flags ORDER BY id"))
    sim.requests.clear()
    again = run_cycle(game, store, now=DAY2_NOON, crawl=crawl)
    assert not again.verdicts_changed
    assert again.skipped and not again.derived  # nothing new: not even derived again
    assert len(sim.requests) == len(targets_due(game, DAY2_NOON))  # one request per thread
    assert list(store.db.query("SELECT * FROM votes ORDER BY day, seq")) == votes
    assert list(store.db.query("SELECT * FROM flags ORDER BY id")) == flags


def test_new_posts_change_the_verdicts_and_a_closed_day_is_reread_once(world):
    game, _sim, clock, store, crawl = world
    assert run_cycle(game, store, now=DAY2_NOON, crawl=crawl).full_reads == [1]  # day 1 closed
    assert run_cycle(game, store, now=DAY2_NOON, crawl=crawl).full_reads == []  # once only
    clock.set(AFTER)
    report = run_cycle(game, store, now=AFTER, crawl=crawl)
    assert report.verdicts_changed and report.full_reads == [2]
    assert store.db.execute("SELECT out FROM tallies WHERE day = 2").fetchone()[0] == "饺子"
    assert run_cycle(game, store, now=AFTER, crawl=crawl).full_reads == []


def test_a_killed_cycle_is_completed_by_the_next(world, monkeypatch):
    game, sim, clock, store, crawl = world
    clock.set(AFTER)
    real = store.save_page
    calls = {"n": 0}

    def dying(parsed, **kw):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(parsed, **kw)

    monkeypatch.setattr(store, "save_page", dying)
    with pytest.raises(KeyboardInterrupt):
        run_cycle(game, store, now=AFTER, crawl=crawl)
    assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    monkeypatch.setattr(store, "save_page", real)
    report = run_cycle(game, store, now=AFTER, crawl=crawl)
    assert not report.errors
    # the same forum seen by the sim: every visible post is stored, none twice
    shown = {
        p.pid
        for tid in sim._threads
        for p in sim._thread(tid).posts
        if not p.deleted(int(AFTER.timestamp())) and p.dateline <= int(AFTER.timestamp())
    }
    stored = {r["pid"] for r in store.db.query("SELECT pid FROM posts WHERE state != 'vanished'")}
    assert stored == shown
    out = store.db.execute("SELECT out FROM tallies WHERE day = 2").fetchone()[0]
    assert out == "饺子"


def test_two_cycles_at_once_the_second_exits_at_once(tmp_path):
    db = tmp_path / "demo.db"
    with cycle_lock(db):
        with pytest.raises(CycleLocked), cycle_lock(db):
            pass
        result = CliRunner().invoke(cli, ["cycle", str(GAME), "--db", str(db)])
    assert result.exit_code == 0
    assert "仍在运行，本轮跳过" in result.output


def test_cycle_is_silent_on_success_and_says_one_line_on_failure(tmp_path):
    # the demo game file points at 127.0.0.1:8080 where nothing listens: one Chinese line, exit 1
    game = tmp_path / "g.toml"
    text = GAME.read_text(encoding="utf-8").replace("http://127.0.0.1:8080/", "http://127.0.0.1:9/")
    game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["cycle", str(game), "--as-of", "2026-12-01T12:00:00+08:00"],
        env={"BANSHA_DB": str(tmp_path / "g.db"), "BANSHA_MAX_ATTEMPTS": "2"},
    )
    assert result.exit_code == 1
    assert "本轮未完成" in result.output and "无法连接论坛" in result.output


def _fake_bansha(tmp_path: Path, body: str) -> Path:
    fake = tmp_path / "fake-bansha"
    fake.write_text("#!/usr/bin/env bash\n" + body)
    fake.chmod(0o755)
    return fake


def test_cron_wrapper_refuses_a_readable_env_file_and_logs(tmp_path):
    game = tmp_path / "g.toml"
    game.write_text("")
    env_file = tmp_path / "env"
    env_file.write_text("BANSHA_COOKIE=secret\n")
    env_file.chmod(0o644)
    fake = _fake_bansha(tmp_path, 'echo "ran $*"\n')
    env = {**os.environ, "BANSHA_BIN": str(fake), "BANSHA_ENV_FILE": str(env_file)}
    proc = subprocess.run(
        [str(ROOT / "cron" / "bansha-cycle.sh"), str(game)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 1
    assert "应为 600" in (tmp_path / "g.log").read_text()
    env_file.chmod(0o600)
    proc = subprocess.run(
        [str(ROOT / "cron" / "bansha-cycle.sh"), str(game)],
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode == 0
    log = (tmp_path / "g.log").read_text()
    assert f"ran cycle {game}" in log and "secret" not in log
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600


def test_cron_wrapper_never_overlaps(tmp_path):
    game = tmp_path / "g.toml"
    game.write_text("")
    fake = _fake_bansha(tmp_path, "sleep 2\n")
    env = {**os.environ, "BANSHA_BIN": str(fake), "BANSHA_ENV_FILE": str(tmp_path / "none")}
    first = subprocess.Popen([str(ROOT / "cron" / "bansha-cycle.sh"), str(game)], env=env)
    try:
        import time

        time.sleep(0.5)
        second = subprocess.run(
            [str(ROOT / "cron" / "bansha-cycle.sh"), str(game)], env=env, timeout=30
        )
        assert second.returncode == 0
    finally:
        first.wait(timeout=30)
    assert "上一轮仍在运行，跳过" in (tmp_path / "g.log").read_text()


def test_schedule_prints_crontab_lines_for_every_close(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Shanghai")  # the machine's own zone (cron runs in it)
    time.tzset()
    try:
        result = CliRunner().invoke(cli, ["schedule", str(GAME)])
    finally:
        monkeypatch.undo()
        time.tzset()
    assert result.exit_code == 0, result.output
    assert not any(line.startswith("CRON_TZ") for line in result.output.splitlines())
    assert "*/5 * * * *" in result.output
    assert "01 22 01 12 * BANSHA_ONLY_ON=2026-12-01" in result.output
    assert "01 22 02 12 * BANSHA_ONLY_ON=2026-12-02" in result.output


def test_a_failed_reread_after_the_close_holds_the_result(world):
    """If the re-read after a close fails, the result is not drafted from what was seen."""
    from pipeline.cycle import closed_days_to_reread
    from pipeline.discuz.crawl import CrawlReport, ThreadResult
    from pipeline.drafts import list_drafts, make_drafts

    game, _sim, clock, store, crawl = world
    clock.set(AFTER)

    def flaky(targets, full):
        if full:  # the forum is down right after the close
            return CrawlReport("x", [ThreadResult(t.tid, error="无法连接论坛") for t in targets])
        return crawl(targets, full)

    def draft(d):
        return make_drafts(
            game, store, d, now=AFTER, unsettled=closed_days_to_reread(game, store, AFTER)
        )

    report = run_cycle(game, store, now=AFTER, crawl=flaky, draft=draft)
    assert report.errors and report.full_reads == []
    assert not any(d.kind == "result" for d in list_drafts(store))
    report = run_cycle(game, store, now=AFTER, crawl=crawl, draft=draft)
    assert report.full_reads == [1, 2]
    assert {d.day for d in list_drafts(store) if d.kind == "result"} == {1, 2}


def test_a_record_made_while_the_cycle_derives_is_in_the_drafts_it_makes(world, monkeypatch):
    """The director records a proxy vote (another window, the console) while a cycle is
    deriving day 2's result. The derivation did not see it: the cycle derives again before it
    drafts, so the result it drafts counts the proxy — and it is not a draft marked as made
    from records it never read (it would be approved and sent with the old counts)."""
    import pipeline.derive
    from pipeline.drafts import list_drafts, make_drafts, moved_on

    game, _sim, _clock, store, crawl = world
    real = pipeline.derive.derive
    calls: list[int] = []

    def derive_while_the_director_records(*args, **kwargs):
        d = real(*args, **kwargs)
        calls.append(1)
        if len(calls) == 1:
            row = {"day": 2, "voter": "麻花", "target": "春卷", "at": "2026-12-02T18:00:00+08:00"}
            store.insert("journal_proxy_votes", [{**row, "recorded_at": row["at"]}])
        return d

    monkeypatch.setattr(pipeline.derive, "derive", derive_while_the_director_records)
    report = run_cycle(
        game, store, now=AFTER, crawl=crawl, draft=lambda d: make_drafts(game, store, d, now=AFTER)
    )
    assert len(calls) == 2 and not report.errors
    [result] = [d for d in list_drafts(store) if d.kind == "result" and d.day == 2]
    [line] = [li for li in result.body.splitlines() if li.startswith("春卷：")]
    assert line.endswith("、麻花）")  # the proxy vote is counted
    assert moved_on(store, result) is None
