"""Notifications after a cycle, sent with Apprise to a local ``json://``
target (a webhook on 127.0.0.1 that writes what it receives to a temp folder).

What a director checks: a forum that cannot be reached sends ONE notification per failure streak
(and one when it recovers); drafts waiting, a reminder close to its deadline and new flags are
each said once, with a link to the console when one is configured; no notification carries a
secret, a card, a night action or a draft's text; a notification that cannot be sent is logged
and never fails the cycle.
"""

from __future__ import annotations

import inspect
import logging
from datetime import datetime
from pathlib import Path

import pytest

from pipeline.cli import load_context
from pipeline.cli.foundation import run_crawl
from pipeline.cycle import CycleReport, run_cycle
from pipeline.drafts import make_drafts
from pipeline.notify import last_cycle, notify_after_cycle, notify_urls
from pipeline.sim.simulator import ForumSim, SimClock
from tests.pipeline.console.support import GAME, MORNING, SCRIPT, TOKEN, at, bansha, closed_port

NOON = at("2026-12-02T12:30:00+08:00")


def _dead_game(tmp_path: Path) -> Path:
    game = tmp_path / "dead.toml"
    text = GAME.read_text("utf-8").replace(
        "http://127.0.0.1:8080/", f"http://127.0.0.1:{closed_port()}/"
    )
    game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), "utf-8")
    return game


def _text(n: dict) -> str:
    return f"{n.get('title', '')}\n{n.get('message', '')}"


def test_a_dead_forum_sends_one_notification_per_failure_streak(tmp_path, sink, monkeypatch):
    monkeypatch.setenv("BANSHA_MAX_ATTEMPTS", "1")  # no retries: the forum refuses at once
    ctx = load_context(_dead_game(tmp_path), str(tmp_path / "dead.db"))
    env = {"BANSHA_NOTIFY": sink.url}

    def cycle(now: datetime, crawl) -> CycleReport:
        report = run_cycle(
            ctx.game,
            ctx.store,
            now=now,
            crawl=crawl,
            draft=lambda d: make_drafts(ctx.game, ctx.store, d, now=now),
        )
        notify_after_cycle(ctx.game, ctx.store, report, now, env=env)
        return report

    def dead(targets, full):
        return run_crawl(ctx, targets, full=full)

    try:
        reports = [cycle(at(f"2026-12-02T12:{m}:00+08:00"), dead) for m in (30, 35, 40)]
        assert all(r.errors and r.down for r in reports)
        received = sink.received()
        assert len(received) == 1, received  # one per failure streak
        first = _text(received[0])
        assert "cycle 失败" in received[0]["title"]
        assert ctx.game.game.title in received[0]["title"]
        assert "12-02 12:30 的一轮 cycle 没有完成" in first
        assert reports[0].errors[0][:40] in first  # the cause, in Chinese
        assert "恢复后会再通知一次" in first
        record = last_cycle(ctx.store)
        assert record is not None and not record.ok and record.streak == 3
        assert record.forum == reports[-1].down

        # the forum answers again: one notification that it recovered
        clock = SimClock(at("2026-12-02T12:45:00+08:00"))
        sim = ForumSim.from_script(GAME, SCRIPT, clock)

        def alive(targets, full):
            return run_crawl(
                ctx,
                targets,
                full=full,
                transport=sim.transport(),
                base_url=sim.base_url,
                min_interval_s=0,
            )

        ok = cycle(at("2026-12-02T12:45:00+08:00"), alive)
        assert not ok.errors, ok.errors
        received = sink.received()
        assert len(received) == 2
        assert "cycle 已恢复" in received[1]["title"]
        assert "12-02 12:45 的一轮 cycle 已正常完成" in received[1]["message"]
        assert last_cycle(ctx.store).ok and last_cycle(ctx.store).forum == "ok"
        cycle(at("2026-12-02T12:50:00+08:00"), alive)
        assert len(sink.received()) == 2  # nothing new to say

        # a new failure streak is said again, once
        cycle(at("2026-12-02T12:55:00+08:00"), dead)
        cycle(at("2026-12-02T13:00:00+08:00"), dead)
        received = sink.received()
        assert len(received) == 3 and "cycle 失败" in received[2]["title"]
    finally:
        ctx.close()


def test_bansha_cycle_against_a_dead_forum_notifies_once(tmp_path, sink):
    import pipeline.cli.cycle

    if "notify_after_cycle" not in inspect.getsource(pipeline.cli.cycle):
        pytest.skip(
            "bansha cycle 还没有调用 pipeline.notify.notify_after_cycle（待接入 cmd_cycle）"
        )
    game = _dead_game(tmp_path)
    env = {
        "BANSHA_DB": str(tmp_path / "dead.db"),
        "BANSHA_NOTIFY": sink.url,
        "BANSHA_MAX_ATTEMPTS": "1",
    }
    for minute in (30, 35):
        out = bansha(env, "cycle", str(game), "--as-of", f"2026-12-02T12:{minute}:00+08:00", code=1)
        assert "本轮未完成" in out
    (notice,) = sink.received()
    assert "cycle 失败" in notice["title"]


def test_drafts_flags_and_deadlines_are_said_once_and_nothing_secret(forum, sink, monkeypatch):
    forum.cycle(at("2026-12-02T21:30:00+08:00"))  # a running tally and the vote reminder
    game = str(forum.game)
    # what only the director knows: a night action, the login cookie, the console's token
    bansha(
        forum.env,
        "night",
        "add",
        game,
        "--night",
        "1",
        "--actor",
        "包子",
        "--skill",
        "预言",
        "--target",
        "面条",
    )
    spec_game = load_context(forum.game, str(forum.db)).game
    env = {
        "BANSHA_NOTIFY": sink.url,
        "BANSHA_CONSOLE_URL": "https://console.example.org/bansha",
        "BANSHA_CONSOLE_TOKEN": TOKEN,
        **forum.env,
    }
    store = forum.store()
    try:
        when = at("2026-12-02T21:30:00+08:00")
        notice = notify_after_cycle(spec_game, store, CycleReport(), when, env=env)
        assert notice is not None and set(notice.kinds) == {"drafts", "urgent", "flags"}
        (got,) = sink.received()
        text = _text(got)
        pending = list(store.db.query("SELECT id, kind, body FROM drafts WHERE state = 'pending'"))
        reminder = next(r for r in pending if r["kind"] == "reminder")
        assert f"有 {len(pending)} 份新草稿等待批准" in text
        assert f"#{reminder['id']} 第2天投票提醒" in text
        assert "快到期、还没有批准" in text and "关门还有 30 分钟" in text
        assert "去批准：https://console.example.org/bansha/g/m135-demo/drafts" in text
        assert "新的违规标记" in text
        # nothing secret: no card, no night action, no last words, no draft text, no cookie,
        # no token, no notification address
        for p in spec_game.players:
            for card in p.cards:
                assert card not in text, card
        for secret in (
            "预言",
            "包子[",
            forum.env["BANSHA_COOKIE"],
            TOKEN,
            sink.url,
            f"127.0.0.1:{sink.port}",
        ):
            assert secret not in text, secret
        for r in pending:
            body_lines = [line for line in r["body"].splitlines() if len(line) > 12]
            assert not any(line in text for line in body_lines)
        # each draft, deadline and flag is said once
        assert notify_after_cycle(spec_game, store, CycleReport(), when, env=env) is None
        assert len(sink.received()) == 1
        # a new draft later is said, the old ones are not repeated
        forum.cycle(MORNING)
        notice = notify_after_cycle(spec_game, store, CycleReport(), MORNING, env=env)
        assert notice is not None and "drafts" in notice.kinds
        text = _text(sink.received()[1])
        assert f"#{reminder['id']} " not in text
        assert "第2天投票结果" in text
    finally:
        store.close()


def test_a_notification_that_cannot_be_sent_is_logged_and_never_raises(morning, sink, caplog):
    game = load_context(morning.game, str(morning.db)).game
    port = closed_port()
    dead = f"json://127.0.0.1:{port}/hook?token=sekret-in-url"
    store = morning.store()
    try:
        with caplog.at_level(logging.WARNING):
            report = CycleReport(errors=["帖子 2011：论坛无法连接"])
            assert (
                notify_after_cycle(game, store, report, MORNING, env={"BANSHA_NOTIFY": dead})
                is None
            )
            bad = {"BANSHA_NOTIFY": "notaurl://sekret-in-url"}
            assert notify_after_cycle(game, store, report, MORNING, env=bad) is None
        assert "通知未能发出：JSON（第 1 个地址）没有接受" in caplog.text
        assert "通知地址无法识别（第 1 个地址）" in caplog.text
        assert "sekret" not in caplog.text and f":{port}" not in caplog.text
        # nothing was marked as told: once a target works, the failure is said
        notice = notify_after_cycle(game, store, report, MORNING, env={"BANSHA_NOTIFY": sink.url})
        assert notice is not None and "failure" in notice.kinds

        def explode(urls, notice):
            raise RuntimeError("boom")

        assert (
            notify_after_cycle(
                game, store, report, MORNING, env={"BANSHA_NOTIFY": sink.url}, send=explode
            )
            is None
        )
    finally:
        store.close()


def test_where_notifications_go(morning):
    game = load_context(morning.game, str(morning.db)).game
    assert notify_urls(game, {}) == []
    assert notify_urls(game, {"BANSHA_NOTIFY": "json://a/ , ntfy://topic  json://a/"}) == [
        "json://a/",
        "ntfy://topic",
    ]


def test_a_new_cause_within_a_failure_streak_is_a_new_failure_notice(morning, sink):
    """The director fixed the login; the next blocker is a different cause: it reaches the
    phone too, as an Apprise ``failure`` (never ``info``), while the same cause is not
    repeated (the attempts or a port in its words aside)."""
    game = load_context(morning.game, str(morning.db)).game
    env = {"BANSHA_NOTIFY": sink.url}
    store = morning.store()
    login = "没有登录论坛（cookie 已失效）：请把导演账号的登录 cookie 放进环境变量 BANSHA_COOKIE"
    down = "帖子 2011：论坛暂时无法访问（无法连接论坛，已尝试 {} 次）"
    try:
        first = notify_after_cycle(game, store, CycleReport(errors=[login]), MORNING, env=env)
        assert first is not None and first.level == "failure"
        again = CycleReport(errors=[login])
        assert notify_after_cycle(game, store, again, MORNING, env=env) is None
        report = CycleReport(errors=[login, down.format(5)])
        second = notify_after_cycle(game, store, report, MORNING, env=env)
        assert second is not None and second.kinds == ("failure",)
        received = sink.received()
        assert [n["type"] for n in received] == ["failure", "failure"]
        assert "新的原因" in received[1]["title"]
        assert "无法连接论坛" in received[1]["message"] and "cookie" not in received[1]["message"]
        report = CycleReport(errors=[login, down.format(3)])  # the same cause, other attempts
        assert notify_after_cycle(game, store, report, MORNING, env=env) is None
        # recovered: said once (success); a later failure of the same cause is a new streak
        assert notify_after_cycle(game, store, CycleReport(), MORNING, env=env) is not None
        assert sink.received()[2]["type"] == "success"
        third = notify_after_cycle(game, store, CycleReport(errors=[login]), MORNING, env=env)
        assert third is not None and "cycle 失败" in third.title
    finally:
        store.close()


def test_a_notice_names_the_game_file_so_its_commands_run_as_printed(morning, sink):
    """What the director must act on goes out once as a ``warning``; every ``bansha`` command
    in a notice names the game file by its path (not the game's id): it runs as printed."""
    import shlex

    game = load_context(morning.game, str(morning.db)).game
    env = {"BANSHA_NOTIFY": sink.url}
    store = morning.store()
    act = (
        "草稿 #7（开新帖，第3天）要求验证码：请手动开帖，"
        "然后运行 bansha publish record 游戏文件 7 --tid 帖子tid"
    )
    try:
        report = CycleReport(warnings=[act])
        notice = notify_after_cycle(game, store, report, MORNING, env=env, game_path=morning.game)
        assert notice is not None and {"warning", "drafts"} <= set(notice.kinds)
        (got,) = sink.received()
        assert got["type"] == "warning"
        path = str(Path(morning.game).resolve())
        assert f"bansha publish record {shlex.quote(path)} 7 --tid 帖子tid" in got["message"]
        assert "游戏文件 7" not in got["message"]
        (command,) = [
            line.split("用 ", 1)[1].split(" 查看")[0]
            for line in got["message"].splitlines()
            if "bansha drafts" in line
        ]
        assert command == f"bansha drafts {shlex.quote(path)}"
        assert game.game.id not in command
        out = bansha(morning.env, *shlex.split(command)[1:])  # runs as printed
        assert "待批准" in out
        # said once while it lasts
        again = notify_after_cycle(game, store, report, MORNING, env=env, game_path=morning.game)
        assert again is None
    finally:
        store.close()
