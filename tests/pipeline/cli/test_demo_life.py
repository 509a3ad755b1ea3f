"""``bansha demo --from-signup``: the whole life of a game on the forum.

The demo signs players up from a 报名帖, deals, opens day 1's threads, counts, closes the vote
thread and opens day 2 — every forum write approved first, each exactly once. These tests run the
demo as a director would and read what it left: the game file it rewrote, its store, what it
printed (the simulator's own record of the writes), and run the commands it prints at the end.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.game.gamefile import load_game
from pipeline.store import open_store

BANSHA = Path(sys.executable).parent / "bansha"
#: the demo's moment: half an hour after day 2 opened, in the example file's own dates
NOW = "2026-12-02T10:45:00+08:00"
HEADING = "接下来可以试试（在当前目录原样运行）："


@pytest.fixture(scope="module")
def life(tmp_path_factory):
    folder = tmp_path_factory.mktemp("life")
    db = folder / "life.db"
    env = {k: None for k in os.environ if k.startswith("BANSHA_")}
    result = CliRunner().invoke(
        cli, ["demo", "--from-signup", "--db", str(db), "--now", NOW], env=env
    )
    assert result.exit_code == 0, result.output
    return folder, db, result.output


def writes(out: str) -> list[str]:
    """The forum's record of bansha's writes, as the demo printed it."""
    block = out.split("论坛收到的 bansha 的写操作", 1)[1].split("\n已关闭的主题", 1)[0]
    return [line.strip() for line in block.splitlines()[1:] if line.startswith("  ")]


def test_the_roster_and_the_cards_come_from_the_signup_thread_and_the_deal(life):
    folder, _db, out = life
    game = load_game(folder / "life.toml", env={}, check_login=False)
    names = [p.name for p in game.players]
    # 14 sign-ups, 月饼 quit (退出报名), 豆花 was the 13th remaining: the 替补
    assert len(names) == 12
    assert "月饼" not in names and "豆花" not in names
    assert names[-2:] == ["麻花", "汤包"]
    assert all(len(p.cards) == 2 for p in game.players)  # m135: two cards each (m135.txt:5)
    text = (folder / "life.toml").read_text("utf-8")
    assert "替补 1：豆花" in text
    assert "承诺（SHA-256）：" in out


def test_each_thread_is_opened_once_and_the_vote_threads_are_closed_once(life):
    _folder, db, out = life
    store = open_store(db)
    try:
        opened = {(r["day"], r["role"]): r["tid"] for r in store.opened_threads()}
    finally:
        store.close()
    assert set(opened) == {
        (1, "discussion"),
        (1, "vote"),
        (1, "progress"),  # one progress thread for the whole game ([threads] progress)
        (2, "discussion"),
        (2, "vote"),
    }
    done = writes(out)
    for subject in ("[M135]第1天讨论帖", "[M135]第1天投票帖", "[M135]进程帖", "[M135]第2天讨论帖"):
        assert done.count(f"发新帖，版块 3：{subject}") == 1, done
    assert done.count(f"关闭主题，tid {opened[(1, 'vote')]}") == 1, done
    # day 2 is still open at the demo's moment: its vote thread stays open
    assert f"关闭主题，tid {opened[(2, 'vote')]}" not in done
    assert "关门后一位玩家回复投票帖，论坛拒绝：抱歉，本主题已关闭，不再接受新内容" in out


def test_every_write_was_approved_before_it_was_sent(life):
    _folder, db, _out = life
    store = open_store(db)
    try:
        rows = list(
            store.db.query(
                "SELECT a.draft_id, a.started_at, d.kind, "
                "(SELECT MIN(e.at) FROM draft_events e WHERE e.draft_id = a.draft_id "
                " AND e.to_state = 'approved') AS approved_at "
                "FROM post_attempts a JOIN drafts d ON d.id = a.draft_id"
            )
        )
    finally:
        store.close()
    kinds = {r["kind"] for r in rows}
    assert {"deal_commit", "newthread", "elevator", "close", "result", "day_open"} <= kinds
    for r in rows:
        assert r["approved_at"] is not None, r
        assert r["approved_at"] <= r["started_at"], r
    # one attempt per draft: nothing was sent twice
    ids = [r["draft_id"] for r in rows]
    assert len(ids) == len(set(ids))


def test_the_elevator_is_floor_2_and_the_day_opening_goes_to_day_2s_discussion(life):
    _folder, db, _out = life
    store = open_store(db)
    try:
        opened = {(r["day"], r["role"]): r["tid"] for r in store.opened_threads()}
        for day in (1, 2):
            posts = store.post_rows(opened[(day, "discussion")])
            assert (posts[1]["floor"], posts[1]["author"]) == (2, "导演")
            assert "authorid=" in posts[1]["message_html"]  # a link per player (只看该作者)
        day_open = list(store.db.query("SELECT * FROM drafts WHERE kind = 'day_open'"))
    finally:
        store.close()
    # drafted at day 1's close, before day 2's threads existed, saying bansha knows nothing of
    # night 1 (it could not be approved); drafted again with the night's out the director
    # recorded; drafted again (and approved: its text now links day 2's vote thread) once
    # bansha had opened day 2's threads
    assert [(d["day"], d["tid"], d["state"]) for d in day_open] == [
        (2, None, "superseded"),
        (2, None, "superseded"),
        (2, opened[(2, "discussion")], "posted"),
    ]
    assert day_open[0]["body"].startswith("〔第1晚没有记录：")
    posted = day_open[-1]["body"]
    assert "没有记录" not in posted and "平安夜" not in posted
    assert "1. 油条（第1晚出局）" in posted
    assert f"tid={opened[(2, 'vote')]}" in posted


@pytest.mark.skipif(not BANSHA.is_file(), reason=f"需要安装好的 {BANSHA}")
def test_the_printed_commands_run_as_printed(life):
    folder, _db, out = life
    tail = out.split(HEADING, 1)[1].splitlines()
    commands = [line.strip() for line in tail if line.startswith("    ") and line.strip()]
    assert len(commands) == 4
    env = {k: v for k, v in os.environ.items() if not k.startswith("BANSHA_")}
    for line in commands:
        args = shlex.split(line)
        args[0] = str(BANSHA)
        done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=folder)
        assert done.returncode == 0, (line, done.stderr)
    assert re.search(r"当选警长：包子", out)


def test_the_story_runs_on_the_simulated_clock_only(life):
    # day 1 opened 12-01 10:00 in the story: its threads were opened then, not when the demo
    # happened to run; the deal's commitment went out at the 11-28 22:00 step
    folder, _db, out = life
    assert "讨论帖：tid=1002（bansha 于 12-01 10:00 开出）" in out
    assert "讨论帖：tid=1005（bansha 于 12-02 10:00 开出）" in out
    assert re.search(r"#1 +发牌承诺 +— +已发出 +11-28 22:00", out)
    story = "11-28|11-29|11-30|12-01|12-02"
    stamps = set(re.findall(r"\b(\d\d-\d\d) \d\d:\d\d\b", out))
    assert stamps and all(re.fullmatch(story, s) for s in stamps), stamps
    store = open_store(folder / "life.db")
    try:
        opened = [r["opened_at"] for r in store.opened_threads()]
    finally:
        store.close()
    assert opened and all(at < NOW for at in opened)


def test_the_demo_says_its_forum_has_stopped_before_the_links_are_followed(life):
    _folder, _db, out = life
    base = re.search(r"模拟论坛已启动：(http://127\.0\.0\.1:\d+/)", out).group(1)
    note = f"模拟论坛（{base}）已随演示结束关闭：上面和下面命令输出里指向它的链接都打不开了"
    assert note in out
    assert out.index(note) < out.index(HEADING)  # said before the commands to try
