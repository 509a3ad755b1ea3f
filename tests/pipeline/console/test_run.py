"""``bansha run``: the demo game on the simulator, its cycles at the moments ``bansha schedule``
puts in cron, driven by a fake clock; games that fail beside games that go on; the game's lock
shared with ``bansha cycle``; SIGTERM in the middle of a cycle (a real process)."""

from __future__ import annotations

import os
import re
import secrets
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest

from pipeline.cli import cli
from pipeline.cli.cycle import CycleFailed
from pipeline.console.run import Runner, run_game_cycle
from pipeline.cycle import CycleReport, cycle_moments, next_cycle, next_rhythm
from pipeline.game.gamefile import load_game
from tests.pipeline.conftest import DEMO_GAME, bansha, forum_world

ROOT = Path(__file__).resolve().parents[3]


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _machine_in(zone: str):
    """The machine's local time zone set to ``zone`` while the test runs."""
    old = os.environ.get("TZ")
    os.environ["TZ"] = zone
    time.tzset()
    yield
    if old is None:
        os.environ.pop("TZ", None)
    else:
        os.environ["TZ"] = old
    time.tzset()


@pytest.fixture
def machine_in_shanghai():
    """The machine's clock in the game's zone: the terminal's times read as the game's."""
    yield from _machine_in("Asia/Shanghai")


@pytest.fixture
def forum(tmp_path, monkeypatch, machine_in_shanghai):
    with forum_world(tmp_path, at("2026-12-02T20:30:00+08:00")) as world:
        _sim, _clock, _game, env = world
        for key, value in env.items():
            monkeypatch.setenv(key, value)  # the cycle reads the cookie where cron's does
        monkeypatch.delenv("BANSHA_DB")  # the store is the one beside the game file
        yield world


def director_posts(sim):
    return [
        p
        for tid in (2011, 2012)
        for p in sim._thread(tid).posts
        if p.author == "导演" and not p.first
    ]


class Recorder:
    """The runner's cycles, each recorded with its time; the real cycle runs (the simulator)."""

    def __init__(self, clock, fail: set[str] = frozenset()) -> None:
        self.clock = clock
        self.times: dict[str, list[datetime]] = {}
        self.fail = fail

    def __call__(self, watch, now):
        gid = watch.game.game.id
        self.times.setdefault(gid, []).append(now)
        if gid in self.fail:  # an error quoting the request it failed on
            raise RuntimeError(f"{gid} 坏了：Cookie: {os.environ['BANSHA_COOKIE']}")
        return run_game_cycle(watch, now, self.clock)


def runner_for(paths, clock, recorder, lines, **kw):
    return Runner(
        paths,
        now=clock,
        sleep=lambda s: clock.advance(s),
        echo=lines.append,
        cycle=recorder,
        **kw,
    )


def every_five(start: datetime, end: datetime) -> list[datetime]:
    out, t = [], start
    while t <= end:
        out.append(t)
        t += timedelta(minutes=5)
    return out


def test_the_schedule_is_cron_s(machine_in_shanghai):
    """``bansha schedule``'s one-off lines and ``bansha run``'s moments are one list."""
    game = load_game(DEMO_GAME, env={}, check_login=False)
    kinds = [(m.kind, m.day, m.at) for m in cycle_moments(game)]
    assert kinds == [
        ("closes", 1, at("2026-12-01T22:01:00+08:00")),
        ("reminder", 1, at("2026-12-01T21:00:00+08:00")),
        ("closes", 2, at("2026-12-02T22:01:00+08:00")),
        ("reminder", 2, at("2026-12-02T21:00:00+08:00")),
    ]
    out = bansha({}, "schedule", str(DEMO_GAME), "--wrapper", "W")
    # schedule prints the same moments, one crontab line each
    assert "01 22 02 12 * BANSHA_ONLY_ON=2026-12-02 W" in out
    assert "00 21 02 12 * BANSHA_ONLY_ON=2026-12-02 W" in out
    # the rhythm: */5 of the machine's clock; the close's cycle a minute after it
    assert next_rhythm(at("2026-12-02T21:57:10+08:00")) == at("2026-12-02T22:00:00+08:00")
    assert next_cycle(game, at("2026-12-02T22:00:00+08:00")) == at("2026-12-02T22:01:00+08:00")
    assert next_cycle(game, at("2026-12-02T22:01:00+08:00")) == at("2026-12-02T22:05:00+08:00")


def test_a_day_of_the_demo_each_cycle_at_its_time_exactly_once(forum):
    sim, clock, game, _env = forum
    scripted = len(director_posts(sim))
    lines: list[str] = []
    rec = Recorder(clock)
    runner = runner_for([game], clock, rec, lines)
    end = at("2026-12-02T22:30:00+08:00")
    runner.run_forever(until=lambda: clock() > end)
    # at the start, then every five minutes and one minute after the 22:00 close, once each
    start = at("2026-12-02T20:30:00+08:00")
    expected = sorted([*every_five(start, end), at("2026-12-02T22:01:00+08:00")])
    assert rec.times["m135-demo"] == expected
    assert len(set(expected)) == len(expected)
    said = "\n".join(lines)
    # the reminder's moment (an hour before the close) drafted the vote reminder
    every_draft = bansha({}, "drafts", str(game), "--all")
    assert re.search(r"投票提醒\s+第2天\s+\S+\s+12-02 21:00", every_draft), every_draft
    # the close (22:00, a five-minute moment too) re-read the day whole and drafted its result
    assert re.search(r"^12-02 22:00 m135-demo：.*重读已关门的第 2 天.*新草稿 1 份", said, re.M)
    assert re.search(r"投票结果\s+第2天\s+\S+\s+12-02 22:00", every_draft), every_draft
    listing = bansha({}, "drafts", str(game))
    # every line says when the game's next cycle runs; one with nothing new is one short line
    assert "12-02 22:00 m135-demo：" in said and said.count("；下一轮 22:01") == 1
    assert "12-02 22:15 m135-demo：没有新内容；下一轮 22:20" in lines
    assert len(director_posts(sim)) == scripted  # nothing is posted unapproved
    # the director approves the result; the next cycle posts it, exactly once
    result_id = int(re.search(r"#(\d+)\s+投票结果\s+第2天", listing).group(1))
    bansha({}, "drafts", "approve", str(game), str(result_id))
    runner.run_forever(until=lambda: clock() > end + timedelta(minutes=20))
    posted = director_posts(sim)[scripted:]
    assert len(posted) == 1 and "饺子" in posted[0].revisions[-1].message
    assert any(re.match(r"12-02 22:35 m135-demo：.*发帖 1 次", line) for line in lines)
    assert "已发出" in bansha({}, "drafts", str(game), "--all")


def write_game(folder: Path, name: str, game: Path, gid: str) -> Path:
    text = game.read_text("utf-8").replace('id = "m135-demo"', f'id = "{gid}"')
    path = folder / f"{name}.toml"
    path.write_text(text, "utf-8")
    return path


def test_two_games_one_broken_the_other_goes_on(forum, tmp_path):
    _sim, clock, game, _env = forum
    folder = tmp_path / "games"
    folder.mkdir()
    write_game(folder, "good", game, "good")
    broken = folder / "broken.toml"
    broken.write_text('[game]\nid = "broken"\ntitle = "坏的"\n', "utf-8")  # no ruleset, no days
    crashing = write_game(folder, "crash", game, "crash")
    (folder / "night1.toml").write_text('[[actions]]\nactor = "饺子"\n', "utf-8")
    lines: list[str] = []
    rec = Recorder(clock, fail={"crash"})
    runner = runner_for([folder], clock, rec, lines)
    end = at("2026-12-02T20:45:00+08:00")
    runner.run_forever(until=lambda: clock() > end)
    start = at("2026-12-02T20:30:00+08:00")
    # the good game ran every cycle at its time; the crashing one was tried each time too
    assert rec.times["good"] == every_five(start, end)
    assert rec.times["crash"] == every_five(start, end)
    assert "broken" not in rec.times
    # the broken file is said once, with what is wrong, not every five minutes
    told = [line for line in lines if line.startswith("游戏文件有错误")]
    assert told == [f"游戏文件有错误，跳过它（改好后自动重新读取）：{broken}"]
    assert any("ruleset" in line for line in lines)
    assert lines.count("跳过 night1.toml：不是游戏文件（没有 [game] 表，如夜晚行动文件）") == 1
    crash_lines = [line for line in lines if " crash：" in line]
    assert crash_lines and all("本轮出错（RuntimeError：crash 坏了" in x for x in crash_lines)
    # the cookie the error quoted is not shown
    assert all(os.environ["BANSHA_COOKIE"].split("auth=")[1] not in x for x in lines)
    assert all("Cookie: ***" in x for x in crash_lines)
    assert Path(folder / "good.db").exists() and not crashing.with_suffix(".db").exists()
    # the director fixes the file: read again at the next look, its first cycle at once
    write_game(folder, "broken", game, "fixed")
    fixed_at = clock.advance(60)
    runner.run_forever(until=lambda: clock() > end + timedelta(minutes=5))
    assert any(line.startswith(f"已重新读取游戏文件：{broken}") for line in lines)
    assert rec.times["fixed"][0] == fixed_at  # at once, its store beside its file
    assert Path(folder / "broken.db").exists()
    assert rec.times["good"][-1] == at("2026-12-02T20:50:00+08:00")


def test_an_edited_game_file_is_read_again_at_the_next_cycle(forum):
    _sim, clock, game, _env = forum
    lines: list[str] = []
    rec = Recorder(clock)
    runner = runner_for([game], clock, rec, lines)
    runner.run_forever(until=lambda: clock() > at("2026-12-02T20:31:00+08:00"))
    # the director moves day 2's close to 20:42: its cycle runs a minute after the new close
    text = game.read_text("utf-8").replace(
        "closes = 2026-12-02T22:00:00+08:00", "closes = 2026-12-02T20:42:00+08:00"
    )
    game.write_text(text, "utf-8")
    runner.run_forever(until=lambda: clock() > at("2026-12-02T20:45:00+08:00"))
    assert at("2026-12-02T20:43:00+08:00") in rec.times["m135-demo"]
    assert any(line.startswith(f"已重新读取游戏文件：{game}") for line in lines)


def test_a_machine_that_slept_runs_one_cycle_per_game_on_waking(forum, tmp_path):
    _sim, clock, game, _env = forum
    folder = tmp_path / "games"
    folder.mkdir()
    write_game(folder, "a", game, "a")
    write_game(folder, "b", game, "b")
    lines: list[str] = []
    rec = Recorder(clock)
    naps = []
    woke = []

    def sleep(seconds):
        naps.append(seconds)
        if len(naps) == 2:  # the lid is closed for three hours (36 rhythm moments, a close)
            woke.append(clock.advance(3 * 3600))
        else:
            clock.advance(seconds)

    runner = Runner([folder], now=clock, sleep=sleep, echo=lines.append, cycle=rec)
    runner.run_forever(until=lambda: clock() > at("2026-12-02T23:33:00+08:00"))
    for gid in ("a", "b"):
        after = [t for t in rec.times[gid] if t > at("2026-12-02T20:35:00+08:00")]
        # woken at 23:30: one cycle (not one per missed moment), the next at the rhythm's
        assert woke[0] > at("2026-12-02T23:30:00+08:00")
        assert after == woke, gid


def test_a_cycle_held_by_another_process_is_skipped_not_a_crash(forum):
    _sim, clock, game, _env = forum
    db = game.with_suffix(".db")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from pipeline.store.lock import cycle_lock\n"
            f"with cycle_lock({str(db)!r}):\n    print('held', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        lines: list[str] = []
        runner = Runner(
            [game],
            now=clock,
            sleep=lambda s: clock.advance(s),
            echo=lines.append,
        )
        runner.run_forever(until=lambda: clock() > at("2026-12-02T20:31:00+08:00"))
    finally:
        holder.communicate("", timeout=30)
    assert lines[-1] == (
        "12-02 20:30 m135-demo：另一轮正在运行（cron 的 bansha cycle 或导演的 bansha publish），"
        "跳过；下一轮 20:35"
    )
    # released: the next cycle runs
    runner.run_forever(until=lambda: clock() > at("2026-12-02T20:36:00+08:00"))
    assert re.match(r"12-02 20:35 m135-demo：读取 \d+ 页", lines[-1]), lines[-1]


def test_a_failed_cycle_is_said_and_the_next_one_runs(forum, tmp_path):
    """A cycle that ran with errors, or stopped part-way (CycleFailed, e.g. a template the
    sandbox refused): one line each, and the game's next cycle is still at its time."""
    _sim, clock, game, _env = forum
    lines: list[str] = []

    def cycle(watch, now):
        if now.minute == 40:
            raise CycleFailed("本轮未完成：模板 result.bbcode 有错误")
        return CycleReport(errors=["论坛无法访问"])

    runner = Runner(
        [game], now=clock, sleep=lambda s: clock.advance(s), echo=lines.append, cycle=cycle
    )
    runner.run_forever(until=lambda: clock() > at("2026-12-02T20:41:00+08:00"))
    assert lines[-3:] == [
        "12-02 20:30 m135-demo：本轮未完成：论坛无法访问；下一轮 20:35",
        "12-02 20:35 m135-demo：本轮未完成：论坛无法访问；下一轮 20:40",
        "12-02 20:40 m135-demo：本轮未完成：模板 result.bbcode 有错误；下一轮 20:45",
    ]


def test_the_console_serves_the_games_as_their_files_say_now(forum, tmp_path, monkeypatch):
    """The console of ``bansha serve`` in the run's own process: it answers while the cycles run,
    and shows a game again after its file changed."""
    import secrets

    from pipeline.console.run import ConsoleThread

    _sim, clock, game, _env = forum
    token = secrets.token_urlsafe(24)
    monkeypatch.setenv("BANSHA_CONSOLE_TOKEN", token)
    port = _free_port()
    lines: list[str] = []
    console = ConsoleThread(
        host="127.0.0.1",
        port=port,
        new_token=False,
        secure_cookie=False,
        clock=clock,
        echo=lines.append,
    )
    runner = Runner(
        [game],
        now=clock,
        sleep=lambda s: clock.advance(s),
        echo=lines.append,
        on_game=console.show,
    )
    auth = {"Authorization": f"Bearer {token}"}
    try:
        runner.run_forever(until=lambda: clock() > at("2026-12-02T20:31:00+08:00"))
        assert f"bansha 控制台：http://127.0.0.1:{port}/" in lines
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/login", timeout=10).status_code == 200
        games = httpx.get(f"{base}/api/games", headers=auth, timeout=10).json()
        assert [g["title"] for g in games] == ["[M135]『让子弹飞』"]
        game.write_text(
            game.read_text("utf-8").replace("『让子弹飞』", "『让子弹再飞一会儿』"), "utf-8"
        )
        runner.run_forever(until=lambda: clock() > at("2026-12-02T20:36:00+08:00"))
        games = httpx.get(f"{base}/api/games", headers=auth, timeout=10).json()
        assert [g["title"] for g in games] == ["[M135]『让子弹再飞一会儿』"]
    finally:
        console.stop()
    assert not console.thread.is_alive()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bansha_process(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", "from pipeline.cli import cli; cli()", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM to a child process (POSIX)")
def test_sigterm_in_the_middle_of_a_cycle_finishes_it_and_posts_once(tmp_path, monkeypatch):
    with forum_world(tmp_path, at("2026-12-03T09:00:00+08:00")) as (sim, _clock, game, env):
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        # the day's result, drafted and approved before bansha run starts
        bansha(env, "cycle", str(game), "--as-of", "2026-12-03T09:00:00+08:00")
        listing = bansha(env, "drafts", str(game))
        result_id = int(re.search(r"#(\d+)\s+投票结果\s+第2天", listing).group(1))
        bansha(env, "drafts", "approve", str(game), str(result_id))
        before = len(director_posts(sim))
        # the forum answers run's first request only when the test says so: its cycle is
        # under way (holding the game's lock) while the test acts
        first, go = threading.Event(), threading.Event()
        real = sim.handle

        def handle(*a, **kw):
            if not first.is_set():
                first.set()
                go.wait(30)
            return real(*a, **kw)

        sim.handle = handle
        child_env = {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "PYTHONUNBUFFERED": "1",
            "TZ": "Asia/Shanghai",
        }
        child_env["BANSHA_CONSOLE_TOKEN"] = secrets.token_urlsafe(32)
        port = _free_port()
        proc = _bansha_process(
            "run",
            str(game),
            "--port",
            str(port),
            "--as-of",
            "2026-12-03T09:05:00+08:00",
            env=child_env,
        )
        try:
            assert first.wait(60), "bansha run 没有开始抓取"
            # the console answers while the cycle waits for the forum
            assert httpx.get(f"http://127.0.0.1:{port}/login", timeout=10).status_code == 200
            # cron's line fires meanwhile: it finds the lock taken and leaves at once
            beside = subprocess.run(
                [sys.executable, "-c", "from pipeline.cli import cli; cli()", "cycle", str(game)],
                capture_output=True,
                text=True,
                env=child_env,
                timeout=120,
            )
            assert beside.returncode == 0, beside.stderr
            assert "仍在运行，本轮跳过" in beside.stdout
            proc.send_signal(signal.SIGTERM)
            time.sleep(0.5)  # the signal arrives while the request is still unanswered
            go.set()
            out, err = proc.communicate(timeout=120)
        finally:
            go.set()
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, err
        assert "收到停止信号：完成正在进行的一轮后停止" in out
        assert re.search(r"^12-03 09:05 m135-demo：.*发帖 1 次", out, re.M), out
        assert out.rstrip().endswith("已停止。")
        posted = director_posts(sim)[before:]
        assert len(posted) == 1 and "饺子" in posted[0].revisions[-1].message
        # the store is whole, the draft is posted, and a later cycle posts nothing again
        db = sqlite3.connect(tmp_path / "game.db")
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db.close()
        assert "已发出" in bansha(env, "drafts", str(game), "--all")
        bansha(env, "cycle", str(game), "--as-of", "2026-12-03T09:10:00+08:00")
        assert len(director_posts(sim)) == before + 1


def test_run_help_is_chinese_with_an_example():
    out = bansha({}, "run", "--help")
    assert "示例" in out and "bansha run 游戏目录/" in out
    assert "--no-console" in out and "--port" in out and "--new-token" in out
    assert cli.get_command(None, "run") is not None


def test_an_unexpected_error_is_recorded_as_the_cycle_s_failure(forum, monkeypatch):
    """What would end ``bansha cycle`` with a traceback ends only this game's cycle in ``bansha
    run``: the failure is recorded (``bansha status``, the console's 上一轮, the notification)."""
    import pipeline.cli.cycle as cycle_cli
    from pipeline.notify import last_cycle
    from pipeline.store import open_store

    _sim, clock, game, _env = forum

    def broken(*args, **kwargs):
        raise ValueError("推导里的意外")

    monkeypatch.setattr(cycle_cli, "run_cycle", broken)
    lines: list[str] = []
    runner = Runner([game], now=clock, sleep=lambda s: clock.advance(s), echo=lines.append)
    runner.run_forever(until=lambda: clock() > at("2026-12-02T20:31:00+08:00"))
    assert lines[-1] == (
        "12-02 20:30 m135-demo：本轮出错（ValueError：推导里的意外），其他游戏照常运行；"
        "下一轮 20:35"
    )
    store = open_store(game.with_suffix(".db"))
    try:
        record = last_cycle(store)
    finally:
        store.close()
    assert record is not None and not record.ok
    assert record.error == "本轮出错（ValueError：推导里的意外）"


def test_one_store_is_never_shared_by_two_games(tmp_path):
    """``--db`` and ``BANSHA_DB`` name one game's store: a folder is refused with either."""
    folder = tmp_path / "games"
    folder.mkdir()
    out = bansha({}, "run", str(folder), "--db", str(tmp_path / "x.db"), code=1)
    assert "--db 只能用于一局游戏" in out
    out = bansha({"BANSHA_DB": str(tmp_path / "x.db")}, "run", str(folder), code=1)
    assert "环境变量 BANSHA_DB 只能用于一局游戏" in out


@pytest.fixture
def machine_in_utc():
    """The machine's clock in UTC, not the games' zones."""
    yield from _machine_in("UTC")


def test_each_line_says_its_game_s_time_not_the_machine_s(tmp_path, machine_in_utc):
    """On a machine in UTC, a game in Asia/Shanghai and one in America/New_York: each line's
    time (and its next cycle's) is in its game's zone, as every other command says it."""
    folder = tmp_path / "games"
    folder.mkdir()
    text = DEMO_GAME.read_text("utf-8")
    write_game(folder, "sh", DEMO_GAME, "sh")
    (folder / "ny.toml").write_text(
        text.replace('id = "m135-demo"', 'id = "ny"').replace(
            'timezone = "Asia/Shanghai"', 'timezone = "America/New_York"'
        ),
        "utf-8",
    )
    assert 'timezone = "Asia/Shanghai"' in text
    moment = at("2026-12-04T21:17:00+00:00")  # 12-05 05:17 in Shanghai, 12-04 16:17 in New York
    lines: list[str] = []
    runner = Runner(
        [folder],
        now=lambda: moment,
        sleep=lambda s: None,
        echo=lines.append,
        cycle=lambda watch, now: CycleReport(skipped=True),
        env={},
    )
    runner.refresh()
    for watch in sorted(runner.watches.values(), key=lambda w: w.label):
        runner.run_one(watch)
    said = [x for x in lines if "没有新内容" in x]
    assert said[0].startswith("12-04 16:17 ny：没有新内容；下一轮 ")
    assert said[1].startswith("12-05 05:17 sh：没有新内容；下一轮 ")
    assert not any("12-04 21:17" in x for x in lines)
