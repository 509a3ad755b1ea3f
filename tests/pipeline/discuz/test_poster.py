"""Posting approved drafts, exactly once, against the local Discuz simulator.

The forum is the demo game's (config/games/demo.toml + demo_posts.toml) as of the demo's
``[sim] now``; the director's account is 导演 (uid 100). Everything a director would check: the
reply lands once, in the right thread, with the right text; its pid is recorded; nothing
unapproved is ever sent; a crash between the forum storing a reply and bansha recording it
never makes a second copy; flood control is waited out; a captcha is handed to the director;
no secret is ever written anywhere.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import pipeline.cli.post as cmd_post
from pipeline.cli import cli
from pipeline.discuz.poster import (
    CaptchaRequired,
    ManualPostMismatch,
    Poster,
    PostError,
    SenderBusy,
)
from pipeline.drafts.publish import publish_approved, record_manual_post
from pipeline.game.gamefile import Game, load_game
from pipeline.sim.simulator import ForumSim, SimClock, SimRequest, SimResponse, script_now
from pipeline.store import Store, open_store
from pipeline.store.lock import cycle_lock

REPO = Path(__file__).resolve().parents[3]
DEMO_GAME = REPO / "config" / "games" / "demo.toml"
DEMO_POSTS = REPO / "config" / "games" / "demo_posts.toml"
VOTE_DAY2 = 2012  # demo.toml day 2 vote thread
DISCUSSION_DAY1 = 2001
DIRECTOR = "导演"
PASSWORD = "demo1234"  # demo_posts.toml [sim] password
RESULT = "[b]第2天投票结果[/b]\n饺子 3 票（包子、馄饨、面条）\n包子 2 票（饺子、汤圆）\n饺子出局。"


class Crash(BaseException):
    """bansha's process dying (not an Exception: nothing in bansha may catch it)."""


def game_file(tmp_path: Path, **forum: str) -> Path:
    """demo.toml with ``min_interval_s = 0`` and extra ``[forum]`` keys (as TOML values)."""
    text = DEMO_GAME.read_text("utf-8").replace("min_interval_s = 1.0", "min_interval_s = 0.0")
    extra = "".join(f"{key} = {value}\n" for key, value in forum.items())
    text = text.replace("[forum]\n", "[forum]\n" + extra, 1)
    path = tmp_path / "game.toml"
    path.write_text(text, "utf-8")
    return path


@dataclass
class World:
    tmp_path: Path
    clock: SimClock
    sim: ForumSim
    game: Game
    store: Store
    waits: list[float] = field(default_factory=list)
    advance_on_sleep: bool = True
    during_sleep: Callable[[], None] | None = None

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        if self.during_sleep is not None:
            self.during_sleep()
        if self.advance_on_sleep:
            self.clock.advance(seconds)

    def poster(
        self,
        env: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
        game: Game | None = None,
    ) -> Poster:
        http = httpx.Client(transport=transport or self.sim.transport())
        if env is None:
            env = {"BANSHA_COOKIE": self.sim.login_cookie(DIRECTOR)}
        return Poster.for_game(
            game or self.game, http, env=env, min_interval_s=0, sleep=self.sleep, now=self.clock
        )

    def publish(self, poster: Poster | None = None, **kw: Any):
        return publish_approved(
            self.store, self.game, poster or self.poster(), now=self.clock(), clock=self.clock, **kw
        )

    def add_draft(
        self,
        body: str,
        *,
        state: str = "approved",
        tid: int = VOTE_DAY2,
        kind: str = "result",
        key: str | None = None,
        action: str = "reply",
        edit_pid: int | None = None,
    ) -> int:
        now = self.clock().isoformat()
        with self.store.atomic():
            cur = self.store.db.execute(
                "INSERT INTO drafts(kind, day, key, tid, action, edit_pid, body, body_hash, "
                "generated_body, state, created_at, updated_at, approved_at) "
                "VALUES (?, 2, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    kind,
                    key or f"{kind}:2:{len(body)}:{body[:8]}",
                    tid,
                    action,
                    edit_pid,
                    body,
                    hashlib.sha256(body.encode()).hexdigest(),
                    body,
                    state,
                    now,
                    now,
                    now if state == "approved" else None,
                ],
            )
        return int(cur.lastrowid or 0)

    def draft(self, draft_id: int) -> dict[str, Any]:
        return next(iter(self.store.db.query("SELECT * FROM drafts WHERE id = ?", [draft_id])))

    def attempts(self, draft_id: int) -> list[dict[str, Any]]:
        return list(
            self.store.db.query(
                "SELECT * FROM post_attempts WHERE draft_id = ? ORDER BY id", [draft_id]
            )
        )

    def copies(self, body: str, tid: int = VOTE_DAY2) -> list[int]:
        """pids of the posts in ``tid`` whose stored message is ``body``."""
        return [pid for pid in self.sim.thread_pids(tid) if self.sim.stored_message(pid) == body]

    def reply_posts(self) -> list[SimRequest]:
        return [r for r in self.sim.requests if r.method == "POST" and r.query.get("mod") == "post"]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return make_world(tmp_path)


def make_world(tmp_path: Path, *, game_path: Path | None = None, **sim_kw: Any) -> World:
    now = script_now(DEMO_POSTS)
    assert now is not None
    clock = SimClock(now)
    sim = ForumSim.from_script(DEMO_GAME, DEMO_POSTS, clock, **sim_kw)
    game = load_game(game_path or DEMO_GAME, env={}, check_login=False)
    return World(tmp_path, clock, sim, game, open_store(tmp_path / "game.db"))


# --------------------------------------------------------------------------- posting


def test_an_approved_draft_is_posted_once_in_the_right_thread_and_its_pid_recorded(world):
    draft_id = world.add_draft(RESULT)
    before = len(world.sim.thread_pids(VOTE_DAY2))

    [result] = world.publish()

    assert result.status == "posted" and result.ok
    [pid] = world.copies(RESULT)
    assert result.pid == pid
    assert len(world.sim.thread_pids(VOTE_DAY2)) == before + 1
    assert world.sim._posts[pid].author == DIRECTOR  # posted as the director
    assert (
        result.url
        == f"{world.sim.base_url}forum.php?mod=redirect&goto=findpost&ptid=2012&pid={pid}"
    )
    row = world.draft(draft_id)
    assert (row["state"], row["posted_pid"]) == ("posted", pid)
    assert row["posted_at"] == world.clock().isoformat()
    [attempt] = world.attempts(draft_id)
    assert (attempt["outcome"], attempt["pid"]) == ("posted", pid)
    assert attempt["started_at"] and attempt["finished_at"]
    events = list(world.store.db.query("SELECT * FROM draft_events WHERE draft_id = ?", [draft_id]))
    assert [(e["from_state"], e["to_state"]) for e in events] == [("approved", "posted")]
    assert f"pid={pid}" in result.line()

    # a second run has nothing to do and does not even talk to the forum
    requests = len(world.sim.requests)
    assert world.publish() == []
    assert len(world.sim.requests) == requests
    assert world.copies(RESULT) == [pid]


@pytest.mark.parametrize("state", ["pending", "rejected", "superseded", "posted"])
def test_a_draft_that_is_not_approved_is_never_sent(world, state):
    draft_id = world.add_draft(RESULT, state=state)
    assert world.publish() == []
    assert world.publish(ids=[draft_id]) == []
    assert world.reply_posts() == []
    assert world.copies(RESULT) == []
    assert world.attempts(draft_id) == []


def test_a_draft_rejected_during_a_flood_wait_is_not_sent(world):
    """The state is read from the store again right before every POST."""
    first = world.add_draft(RESULT)
    second = world.add_draft("[b]第3天开始[/b]\n出局：饺子。请在本帖留遗言。")

    def reject_second() -> None:
        with world.store.atomic():
            world.store.db.execute("UPDATE drafts SET state = 'rejected' WHERE id = ?", [second])

    world.during_sleep = reject_second
    results = world.publish()

    assert [r.status for r in results] == ["posted", "skipped"]
    assert "已驳回" in results[1].message
    assert len(world.reply_posts()) == 2  # the first, and the second's flood-refused try
    assert world.copies("[b]第3天开始[/b]\n出局：饺子。请在本帖留遗言。") == []
    assert world.draft(first)["state"] == "posted"
    assert world.attempts(second)[0]["outcome"] == "failed"


def test_a_crash_after_the_forum_stored_the_reply_never_makes_a_second_copy(world):
    draft_id = world.add_draft(RESULT)

    def crash_after_post(request: SimRequest, _response: SimResponse) -> None:
        if request.method == "POST" and request.query.get("action") == "reply":
            raise Crash  # the forum has the reply; bansha dies before recording it

    with pytest.raises(Crash):
        world.publish(world.poster(transport=world.sim.transport(after=crash_after_post)))

    [pid] = world.copies(RESULT)  # the forum has it
    row = world.draft(draft_id)
    assert (row["state"], row["posted_pid"]) == ("approved", None)  # bansha did not record it
    [attempt] = world.attempts(draft_id)
    assert attempt["finished_at"] is None and attempt["outcome"] is None  # the intent only

    world.clock.advance(minutes=5)  # the next cron cycle
    posts_before = len(world.reply_posts())
    [result] = world.publish()

    assert (result.status, result.pid) == ("found", pid)
    assert len(world.reply_posts()) == posts_before  # looked, did not post again
    assert world.copies(RESULT) == [pid]  # exactly one copy in the thread
    row = world.draft(draft_id)
    assert (row["state"], row["posted_pid"]) == ("posted", pid)
    [attempt] = world.attempts(draft_id)
    assert (attempt["outcome"], attempt["pid"]) == ("found", pid)
    assert world.publish() == []


def test_a_crash_before_the_forum_got_the_reply_sends_it_once_on_the_next_run(world):
    draft_id = world.add_draft(RESULT)
    inner = world.sim.transport()

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            raise Crash  # dies after recording the intent, before the request left
        return inner.handle_request(request)

    with pytest.raises(Crash):
        world.publish(world.poster(transport=httpx.MockTransport(handler)))
    assert world.copies(RESULT) == []

    [result] = world.publish()
    assert result.status == "posted"
    assert len(world.copies(RESULT)) == 1
    outcomes = [a["outcome"] for a in world.attempts(draft_id)]
    assert outcomes == ["failed", "posted"]  # the open intent was looked for, not found, closed


def test_an_answer_lost_on_the_way_back_is_found_in_the_same_run(world):
    draft_id = world.add_draft(RESULT)
    world.sim.faults.add("lost_answer", match="action=reply")

    [result] = world.publish()

    [pid] = world.copies(RESULT)
    assert (result.status, result.pid) == ("found", pid)
    assert len(world.reply_posts()) == 1
    assert world.draft(draft_id)["state"] == "posted"


def test_flood_control_is_waited_out(world):
    first = world.add_draft(RESULT)
    second_body = "[b]第2天投票提醒[/b]\n投票将于今晚 22:00 截止，还没有投票的玩家请尽快投票。"
    second = world.add_draft(second_body)

    results = world.publish()

    assert [r.status for r in results] == ["posted", "posted"]
    assert world.waits == [16.0]  # floodctrl 15 s + 1 (docs/discuz.md §4.4)
    assert len(world.reply_posts()) == 3  # second draft: flood-refused once, then sent
    [a], [b] = world.copies(RESULT), world.copies(second_body)
    assert a < b  # in the order they were approved
    assert world.draft(first)["posted_pid"] == a and world.draft(second)["posted_pid"] == b
    assert (
        "等待发帖间隔 1 次"
        in world.store.db.execute(
            "SELECT note FROM draft_events WHERE draft_id = ?", [second]
        ).fetchone()[0]
    )


def test_flood_control_that_never_clears_is_bounded_and_retried_next_run(world):
    world.add_draft(RESULT)
    second_body = "[b]第2天投票提醒[/b]\n投票将于今晚 22:00 截止，还没有投票的玩家请尽快投票。"
    second = world.add_draft(second_body)
    world.advance_on_sleep = False  # the forum's clock does not move: the lock never clears

    results = world.publish()

    assert [r.status for r in results] == ["posted", "failed"]
    assert "等了 3 次仍未解除" in results[1].message
    assert world.waits == [16.0, 16.0, 16.0]
    assert world.copies(second_body) == []
    assert world.draft(second)["state"] == "approved"
    assert world.attempts(second)[-1]["outcome"] == "failed"

    world.clock.advance(60)
    [again] = world.publish()
    assert again.status == "posted" and len(world.copies(second_body)) == 1


def test_a_captcha_is_handed_to_the_director_and_nothing_is_recorded_as_posted(tmp_path):
    world = make_world(tmp_path, seccode_post=True)
    draft_id = world.add_draft(RESULT)

    [result] = world.publish()

    assert result.status == "captcha" and not result.ok
    assert "验证码" in result.message and "不会尝试识别验证码" in result.message
    assert "bansha publish record" in result.message
    assert world.copies(RESULT) == []
    row = world.draft(draft_id)
    assert (row["state"], row["posted_pid"], row["posted_at"]) == ("approved", None, None)
    assert [a["outcome"] for a in world.attempts(draft_id)] == ["captcha"]

    # the next cron cycle does not try the captcha again
    sent = len(world.reply_posts())
    [later] = world.publish()
    assert later.status == "captcha" and len(world.reply_posts()) == sent

    # the director posts the approved text by hand: the next cycle finds it and records it
    manual_pid = world.sim.add_post(VOTE_DAY2, DIRECTOR, RESULT, world.clock.advance(minutes=3))
    [found] = world.publish()
    assert (found.status, found.pid) == ("found", manual_pid)
    assert len(world.reply_posts()) == sent
    assert world.draft(draft_id)["state"] == "posted"


def test_the_poster_raises_captcha_required_and_the_forum_keeps_nothing(tmp_path):
    world = make_world(tmp_path, seccode_post=True)
    poster = world.poster()
    poster.session(VOTE_DAY2)
    with pytest.raises(CaptchaRequired) as caught:
        poster.reply(VOTE_DAY2, RESULT)
    assert caught.value.during == "post"
    assert "请把已批准的草稿手动发到论坛" in str(caught.value)
    assert world.copies(RESULT) == [] and world.sim.pending_pids(VOTE_DAY2) == []


def record(world: World, draft_id: int, pid: int, **kw: Any):
    return record_manual_post(
        world.store, world.poster(), draft_id, pid, now=world.clock(), clock=world.clock, **kw
    )


def test_record_manual_post_after_a_captcha(tmp_path):
    world = make_world(tmp_path, seccode_post=True)
    draft_id = world.add_draft(RESULT)
    world.publish()
    by_hand = world.sim.add_post(VOTE_DAY2, DIRECTOR, RESULT, world.clock.advance(minutes=2))

    result = record(world, draft_id, by_hand)

    assert (result.status, result.pid, result.tid) == ("manual", by_hand, VOTE_DAY2)
    assert result.message == ""  # checked on the forum: nothing to warn about
    row = world.draft(draft_id)
    assert (row["state"], row["posted_pid"]) == ("posted", by_hand)
    assert world.attempts(draft_id)[-1]["outcome"] == "manual"
    with pytest.raises(PostError, match="已经登记为发出"):
        record(world, draft_id, by_hand + 1)
    pending = world.add_draft("[b]提醒[/b]\n还没有批准的草稿不能登记。", state="pending")
    with pytest.raises(PostError, match="待批准"):
        record(world, pending, by_hand)


def test_record_refuses_a_pid_in_another_thread(world):
    """The pid must be in the draft's thread."""
    draft_id = world.add_draft(RESULT)
    elsewhere = world.sim.add_post(DISCUSSION_DAY1, DIRECTOR, RESULT, world.clock())

    with pytest.raises(ManualPostMismatch) as caught:
        record(world, draft_id, elsewhere)

    assert caught.value.which == "thread"
    assert f"草稿 #{draft_id} 的目标帖子 tid=2012 中没有 pid={elsewhere} 这一楼" in str(
        caught.value
    )
    assert "可加 --force 强制登记" in str(caught.value)
    row = world.draft(draft_id)
    assert (row["state"], row["posted_pid"]) == ("approved", None)
    assert world.attempts(draft_id) == []
    assert world.reply_posts() == []  # it only read


def test_record_refuses_a_pid_by_another_author(world):
    draft_id = world.add_draft(RESULT)
    players = world.sim.add_post(VOTE_DAY2, "饺子", RESULT, world.clock())

    with pytest.raises(ManualPostMismatch) as caught:
        record(world, draft_id, players)

    assert caught.value.which == "author"
    assert (
        f"帖子 tid=2012 的 pid={players} 是「饺子」（uid=101）发的，"
        "不是游戏文件 [director] 中的导演账号" in str(caught.value)
    )
    assert world.draft(draft_id)["state"] == "approved"


def test_record_refuses_a_director_post_with_other_text(world):
    draft_id = world.add_draft(RESULT)
    other = world.sim.add_post(
        VOTE_DAY2, DIRECTOR, "[b]第2天投票结果[/b]\n馄饨 3 票。\n馄饨出局。", world.clock()
    )

    with pytest.raises(ManualPostMismatch) as caught:
        record(world, draft_id, other)

    assert caught.value.which == "text"
    message = str(caught.value)
    assert f"帖子 tid=2012 的 pid={other} 的内容与草稿 #{draft_id} 的正文不一致" in message
    assert "「第2天投票结果 馄饨 3 票。 馄饨出局。」" in message
    assert world.draft(draft_id)["state"] == "approved"


def test_record_with_force_records_a_mismatch_with_a_warning(world):
    """--force: the director saw it with their own eyes (e.g. the editor reformatted it)."""
    draft_id = world.add_draft(RESULT)
    reworded = world.sim.add_post(VOTE_DAY2, DIRECTOR, RESULT + "（手动补发）", world.clock())

    result = record(world, draft_id, reworded, force=True)

    assert (result.status, result.pid) == ("manual", reworded)
    assert result.message.startswith("未通过核对，已按 --force 登记：")
    assert "内容与草稿" in result.message
    row = world.draft(draft_id)
    assert (row["state"], row["posted_pid"]) == ("posted", reworded)
    [note] = [
        e["note"]
        for e in world.store.db.query(
            "SELECT note FROM draft_events WHERE draft_id = ? AND to_state = 'posted'", [draft_id]
        )
    ]
    assert note.startswith(
        f"导演手动发帖后登记：pid={reworded}；注意：未通过核对，按 --force 登记："
    )


def test_record_of_an_elevator_edit_must_name_its_floor(world):
    floor2 = director_floor_2(world)
    body = "[b]电梯[/b]\n[url=forum.php?mod=viewthread&tid=2001&authorid=101]饺子[/url]"
    draft_id = world.add_draft(
        body, tid=DISCUSSION_DAY1, kind="elevator", action="edit", edit_pid=floor2
    )
    with pytest.raises(ManualPostMismatch, match=f"登记的 pid 应是 {floor2}，不是 {floor2 + 1}"):
        record(world, draft_id, floor2 + 1)
    with pytest.raises(ManualPostMismatch) as caught:  # not edited yet: the floor shows old text
        record(world, draft_id, floor2)
    assert caught.value.which == "text"
    world.sim.edit_post(floor2, body, world.clock.advance(minutes=1))
    assert record(world, draft_id, floor2).pid == floor2


def test_a_login_captcha_says_to_use_the_browser_cookie(tmp_path):
    path = game_file(tmp_path, username_env='"BANSHA_USER"', password_env='"BANSHA_PASSWORD"')
    world = make_world(tmp_path, game_path=path, seccode_login=True)
    world.add_draft(RESULT)
    poster = world.poster(env={"BANSHA_USER": DIRECTOR, "BANSHA_PASSWORD": PASSWORD})

    [result] = world.publish(poster)

    assert result.status == "captcha"
    assert "登录" in result.message and "BANSHA_COOKIE" in result.message
    assert world.reply_posts() == []


def test_a_moderated_reply_is_pending_and_recorded_once_a_moderator_approves_it(tmp_path):
    world = make_world(tmp_path, moderate_replies=True)
    draft_id = world.add_draft(RESULT)

    [result] = world.publish()

    assert result.status == "pending_moderation" and "审核" in result.message
    [pid] = world.sim.pending_pids(VOTE_DAY2)
    assert world.copies(RESULT) == []  # not visible yet
    assert world.draft(draft_id)["state"] == "approved"
    assert world.attempts(draft_id)[-1]["outcome"] == "pending_moderation"

    sent = len(world.reply_posts())
    [waiting] = world.publish()
    assert waiting.status == "pending_moderation" and len(world.reply_posts()) == sent

    world.sim.approve_post(pid)
    [found] = world.publish()
    assert (found.status, found.pid) == ("found", pid)
    assert len(world.reply_posts()) == sent
    assert world.draft(draft_id)["posted_pid"] == pid


def test_a_refusal_is_not_repeated_every_cycle(world):
    draft_id = world.add_draft("短短")  # under Discuz's 10-byte minimum
    [result] = world.publish()
    assert result.status == "refused"
    assert "小于 10 个字符" in result.message
    sent = len(world.reply_posts())

    [again] = world.publish()
    assert again.status == "refused" and len(world.reply_posts()) == sent

    world.publish(ids=[draft_id])  # the director asks for it: tried again
    assert len(world.reply_posts()) == sent + 1
    assert world.draft(draft_id)["state"] == "approved"


def test_the_parts_of_a_split_draft_go_out_in_order(world):
    world.add_draft("[b]第2天投票结果〔1/2〕[/b]\n饺子 3 票", key="result:2#1", state="pending")
    second = world.add_draft("[b]第2天投票结果〔2/2〕[/b]\n包子 2 票", key="result:2#2")
    [result] = world.publish()
    assert result.status == "waiting" and "第 1 部分" in result.message
    assert world.reply_posts() == []
    assert world.draft(second)["state"] == "approved"


# --------------------------------------------------------------------------- the 电梯 floor


def director_floor_2(world: World) -> int:
    pids = world.sim.thread_pids(DISCUSSION_DAY1)
    pid = pids[1]
    assert world.sim._posts[pid].author == DIRECTOR  # demo_posts.toml: the director's 电梯 floor
    return pid


def test_the_elevator_floor_is_edited_in_place(world):
    floor2 = director_floor_2(world)
    body = (
        "[b]电梯[/b]\n[url=forum.php?mod=viewthread&tid=2001&authorid=101]饺子[/url]\n"
        "[url=forum.php?mod=viewthread&tid=2001&authorid=102]包子[/url]"
    )
    draft_id = world.add_draft(
        body, tid=DISCUSSION_DAY1, kind="elevator", action="edit", edit_pid=floor2
    )
    count = len(world.sim.thread_pids(DISCUSSION_DAY1))

    [result] = world.publish()

    assert (result.status, result.pid) == ("posted", floor2)
    assert len(world.sim.thread_pids(DISCUSSION_DAY1)) == count  # no new floor
    stored = world.sim.stored_message(floor2)
    assert stored.endswith(body)
    assert re.match(r"\[i=s\] 本帖最后由 导演 于 .* 编辑 \[/i\]", stored)  # Discuz's own note
    assert world.draft(draft_id)["posted_pid"] == floor2
    edits = [r for r in world.reply_posts() if r.query.get("action") == "edit"]
    assert len(edits) == 1


def test_an_edit_interrupted_after_the_forum_saved_it_is_found_by_its_floor(world):
    floor2 = director_floor_2(world)
    body = "[b]电梯（更新）[/b]\n[url=forum.php?mod=viewthread&tid=2001&authorid=103]馄饨[/url]"
    draft_id = world.add_draft(
        body, tid=DISCUSSION_DAY1, kind="elevator", action="edit", edit_pid=floor2
    )

    def crash(request: SimRequest, _response: SimResponse) -> None:
        if request.method == "POST":
            raise Crash

    with pytest.raises(Crash):
        world.publish(world.poster(transport=world.sim.transport(after=crash)))
    sent = len(world.reply_posts())
    [result] = world.publish()
    assert (result.status, result.pid) == ("found", floor2)
    assert len(world.reply_posts()) == sent
    assert world.draft(draft_id)["state"] == "posted"


def test_an_edit_that_changes_only_a_link_and_never_reached_the_forum_is_sent(world):
    """A substitute's 电梯 differs from floor 2 only in a uid: after a send that died before
    the forum saw it, floor 2 still links the old account, so the edit is not taken as found."""
    floor2 = director_floor_2(world)
    old = "[b]电梯[/b]\n[url=home.php?mod=space&uid=101]饺子[/url]"
    world.add_draft(old, tid=DISCUSSION_DAY1, kind="elevator", action="edit", edit_pid=floor2)
    assert [r.status for r in world.publish()] == ["posted"]
    new = old.replace("uid=101", "uid=131")
    draft_id = world.add_draft(
        new, tid=DISCUSSION_DAY1, kind="elevator", action="edit", edit_pid=floor2, key="elevator:1b"
    )
    inner = world.sim.transport()

    def lost(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            raise Crash  # bansha dies before the forum got the edit
        return inner.handle_request(request)

    with pytest.raises(Crash):
        world.publish(world.poster(transport=httpx.MockTransport(lost)))
    assert world.sim.stored_message(floor2).endswith(old)
    [result] = world.publish()
    assert (result.status, result.pid) == ("posted", floor2)
    assert world.sim.stored_message(floor2).endswith(new)
    assert world.draft(draft_id)["state"] == "posted"


# --------------------------------------------------------------------------- login


def test_login_with_username_and_password(tmp_path):
    path = game_file(tmp_path, username_env='"BANSHA_USER"', password_env='"BANSHA_PASSWORD"')
    world = make_world(tmp_path, game_path=path)
    world.add_draft(RESULT)
    poster = world.poster(env={"BANSHA_USER": DIRECTOR, "BANSHA_PASSWORD": PASSWORD})

    [result] = world.publish(poster)

    assert result.status == "posted"
    [pid] = world.copies(RESULT)
    assert world.sim._posts[pid].author == DIRECTOR
    logins = [r for r in world.sim.requests if r.method == "POST" and r.path.endswith("member.php")]
    assert len(logins) == 1 and logins[0].form["username"] == DIRECTOR
    assert poster.uid == 100 and poster.username == DIRECTOR


def test_a_wrong_password_is_a_chinese_error_without_the_password(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    secret = "Wr0ng-Pa55word!"
    path = game_file(tmp_path, username_env='"BANSHA_USER"', password_env='"BANSHA_PASSWORD"')
    world = make_world(tmp_path, game_path=path)
    draft_id = world.add_draft(RESULT)
    poster = world.poster(env={"BANSHA_USER": DIRECTOR, "BANSHA_PASSWORD": secret})

    [result] = world.publish(poster)

    assert result.status == "failed"
    assert "用户名或密码不对" in result.message
    assert "登录失败，您还可以尝试 4 次" in result.message
    assert "BANSHA_PASSWORD" in result.message  # where to look, by name
    assert secret not in result.message and secret not in caplog.text
    assert secret not in repr(poster.credentials)
    assert world.reply_posts() == []
    assert world.draft(draft_id)["state"] == "approved"
    assert_no_secret_in_store(world.store, [secret])


def test_posting_as_an_account_that_is_not_the_director_is_refused(world):
    world.add_draft(RESULT)
    poster = world.poster(env={"BANSHA_COOKIE": world.sim.login_cookie("饺子")})
    [result] = world.publish(poster)
    assert result.status == "failed" and "不是游戏文件 [director] 中的导演账号" in result.message
    assert world.reply_posts() == []


def test_an_expired_cookie_without_a_password_says_which_variable_to_fix(world):
    world.add_draft(RESULT)
    [result] = world.publish(world.poster(env={}))
    assert result.status == "failed"
    assert "BANSHA_COOKIE" in result.message and "没有登录论坛" in result.message


def test_a_stale_formhash_is_refreshed_once(world):
    poster = world.poster()
    poster.session(VOTE_DAY2)
    poster._formhash = "deadbeef"  # e.g. the session changed since the page was read
    sent = poster.reply(VOTE_DAY2, RESULT)
    assert sent.pid in world.copies(RESULT)
    assert len(world.reply_posts()) == 2


# --------------------------------------------------------------------------- charset, secrets


def test_a_gbk_forum_gets_gbk_percent_encoding(tmp_path):
    world = make_world(tmp_path, charset="gbk")
    body = "[b]第2天投票结果[/b]\n饺子 3 票（包子、馄饨、面条）；Snow_风 0 票。"
    world.add_draft(body)
    inner = world.sim.transport()
    sent: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            sent.append(request.read())
        return inner.handle_request(request)

    [result] = world.publish(world.poster(transport=httpx.MockTransport(handler)))

    assert result.status == "posted"
    assert world.copies(body) == [result.pid]  # the forum decoded exactly what was meant
    [raw] = sent
    assert b"message=%5Bb%5D%B5%DA2%CC%EC" in raw  # "[b]第2天" as GBK bytes
    assert b"%E7%AC%AC" not in raw  # not UTF-8


def test_a_character_a_gbk_forum_cannot_store_is_refused_before_sending(tmp_path):
    world = make_world(tmp_path, charset="gbk")
    draft_id = world.add_draft("[b]第2天投票结果[/b]\n饺子出局 🎉 恭喜好人阵营")
    [result] = world.publish()
    assert result.status == "refused"
    assert "「🎉」" in result.message and "GBK" in result.message
    assert world.reply_posts() == []
    assert world.attempts(draft_id)[0]["outcome"] == "refused"


def assert_no_secret_in_store(store: Store, secrets: list[str]) -> None:
    tables = [
        r["name"] for r in store.db.query("SELECT name FROM sqlite_master WHERE type = 'table'")
    ]
    for table in tables:
        for row in store.db.query(f'SELECT * FROM "{table}"'):
            for column, value in row.items():
                text = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
                for secret in secrets:
                    assert secret not in text, f"secret in {table}.{column}"


def test_the_session_secrets_never_reach_the_logs_or_the_store(tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    path = game_file(tmp_path, username_env='"BANSHA_USER"', password_env='"BANSHA_PASSWORD"')
    world = make_world(tmp_path, game_path=path)
    cookie = world.sim.login_cookie(DIRECTOR)
    world.add_draft(RESULT)
    world.add_draft("[b]第2天投票提醒[/b]\n投票将于今晚 22:00 截止，请尽快投票。")
    world.sim.faults.add("lost_answer", match="action=reply")

    # a run that logs in with the password (the cookie is stale), waits out flood control,
    # meets a lost answer: every path that logs or records something
    stale = re.sub(r"auth=[^;]+", "auth=AAAAAAAAAAAA", cookie)
    env = {"BANSHA_COOKIE": stale, "BANSHA_USER": DIRECTOR, "BANSHA_PASSWORD": PASSWORD}
    poster = world.poster(env=env)
    results = world.publish(poster)
    assert [r.status for r in results] == ["found", "posted"]

    session_values = [v for v in poster.jar.secrets()]
    secrets = [PASSWORD, *[part.split("=", 1)[1] for part in cookie.split("; ")], *session_values]
    for secret in secrets:
        assert secret not in caplog.text
        assert all(secret not in r.line() for r in results)
    assert_no_secret_in_store(world.store, secrets)
    assert "Cookie" not in caplog.text


# --------------------------------------------------------------------------- the CLI


@pytest.fixture
def cli_world(tmp_path, monkeypatch):
    world = make_world(tmp_path)
    monkeypatch.setattr(
        cmd_post, "http_client_factory", lambda: httpx.Client(transport=world.sim.transport())
    )
    return world, game_file(tmp_path)


def run(args: list[str], env: dict[str, str]) -> Any:
    return CliRunner().invoke(cli, args, env=env, catch_exceptions=False)


def test_cli_post_prints_where_each_draft_went(cli_world):
    world, path = cli_world
    draft_id = world.add_draft(RESULT)
    env = {"BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR), "BANSHA_DB": ""}
    db = ["--db", str(world.tmp_path / "game.db")]

    out = run(["post", str(path), *db], env)

    assert out.exit_code == 0, out.output
    [pid] = world.copies(RESULT)
    assert f"草稿 #{draft_id}（投票结果，第2天）已发出 → 帖子 tid=2012 pid={pid}" in out.output
    assert "goto=findpost&ptid=2012" in out.output
    again = run(["post", str(path), *db], env)
    assert again.exit_code == 0 and "没有已批准、等待发出的草稿" in again.output
    assert world.copies(RESULT) == [pid]


def test_cli_post_refuses_a_named_draft_that_is_not_approved(cli_world):
    world, path = cli_world
    draft_id = world.add_draft(RESULT, state="pending")
    env = {"BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR)}
    out = run(
        ["post", str(path), "--db", str(world.tmp_path / "game.db"), "--id", str(draft_id)], env
    )
    assert out.exit_code == 1
    assert "状态是「待批准」，只有已批准的草稿才会发出" in out.output
    assert world.reply_posts() == []


def test_cli_post_exits_1_with_the_captcha_hand_over(tmp_path, monkeypatch):
    world = make_world(tmp_path, seccode_post=True)
    monkeypatch.setattr(
        cmd_post, "http_client_factory", lambda: httpx.Client(transport=world.sim.transport())
    )
    path = game_file(tmp_path)
    draft_id = world.add_draft(RESULT)
    db = ["--db", str(tmp_path / "game.db")]
    env = {"BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR)}

    out = run(["post", str(path), *db], env)
    assert out.exit_code == 1
    assert "验证码" in out.output and "1 份草稿没有发出" in out.output

    wrong = world.sim.add_post(VOTE_DAY2, "包子", RESULT, world.clock.advance(minutes=1))
    refused = run(["post", "record", str(path), str(draft_id), "--pid", str(wrong), *db], env)
    assert refused.exit_code == 1
    assert "是「包子」（uid=102）发的，不是游戏文件 [director] 中的导演账号" in refused.output
    assert "Traceback" not in refused.output

    by_hand = world.sim.add_post(VOTE_DAY2, DIRECTOR, RESULT, world.clock.advance(minutes=1))
    recorded = run(["post", "record", str(path), str(draft_id), "--pid", str(by_hand), *db], env)
    assert recorded.exit_code == 0, recorded.output
    assert f"草稿 #{draft_id} 已登记为发出 → 帖子 tid=2012 pid={by_hand}" in recorded.output
    twice = run(["post", "record", str(path), str(draft_id), "--pid", str(by_hand), *db], env)
    assert twice.exit_code == 1 and "不能重复登记" in twice.output


def test_publish_needs_no_forum_when_nothing_is_approved(world):
    world.add_draft(RESULT, state="pending")

    def no_network(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"unexpected request {request.url}")

    results = world.publish(world.poster(transport=httpx.MockTransport(no_network)))
    assert results == []


def test_record_uses_the_clock_it_is_given(world):
    draft_id = world.add_draft(RESULT)
    by_hand = world.sim.add_post(VOTE_DAY2, DIRECTOR, RESULT, world.clock())
    when = datetime.fromisoformat("2026-12-03T10:30:00+08:00")
    record_manual_post(world.store, world.poster(), draft_id, by_hand, now=when)
    assert world.draft(draft_id)["posted_at"] == when.isoformat()


def test_smiley_codes_in_a_draft_stay_text(world):
    """A player may be called ":lol" or ":)": the draft says the name, not a smiley picture."""
    body = "[b]第2天投票结果[/b]\n:lol 3 票；:) 1 票。"
    world.add_draft(body)
    [result] = world.publish()
    poster = world.poster()
    page = poster.fetch_thread(VOTE_DAY2)
    [post] = [p for p in page.posts if p.pid == result.pid]
    assert ":lol 3 票；:) 1 票。" in post.text
    assert "smiley" not in post.message_html


def test_a_draft_for_a_thread_outside_the_game_is_not_sent(world):
    world.sim.add_thread(9999, "别的主题", DIRECTOR, "与本局无关的主题帖。", world.clock())
    world.add_draft(RESULT, tid=9999)
    [result] = world.publish()
    assert result.status == "failed" and "不是游戏文件中的帖子" in result.message
    assert world.reply_posts() == []


# --------------------------------------------------------------------------- one sender at a time


def test_an_attempt_another_sender_started_meanwhile_blocks_the_send(world):
    """An intent recorded by another sender after this run read the draft's
    attempts is in flight right now — refused in the same transaction, never a second POST."""
    draft_id = world.add_draft(RESULT)
    inner = world.sim.transport()
    other: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and not other:
            # while we read the thread, a sender that did not take the game's lock records its
            # intent (its POST is on the way to a slow forum)
            rival = Store(world.tmp_path / "game.db")
            with rival.atomic():
                cur = rival.db.execute(
                    "INSERT INTO post_attempts(draft_id, body_hash, started_at) VALUES (?, ?, ?)",
                    [draft_id, world.draft(draft_id)["body_hash"], world.clock().isoformat()],
                )
                other.append(int(cur.lastrowid or 0))
            rival.close()
        return inner.handle_request(request)

    [result] = world.publish(world.poster(transport=httpx.MockTransport(handler)))

    assert result.status == "skipped"
    assert f"草稿 #{draft_id} 正由另一个 bansha 进程发送（发送记录 #{other[0]}" in result.message
    assert "以免发出两份" in result.message
    assert world.reply_posts() == []
    assert [a["id"] for a in world.attempts(draft_id)] == other  # ours was never written
    assert world.draft(draft_id)["state"] == "approved"


@pytest.fixture
def held_lock(world):
    """The game's lock held by another thread (a running ``bansha cycle``) until released."""
    held, release = threading.Event(), threading.Event()

    def cycle() -> None:
        with cycle_lock(world.tmp_path / "game.db"):
            held.set()
            release.wait(30)

    thread = threading.Thread(target=cycle)
    thread.start()
    assert held.wait(5)
    yield release
    release.set()
    thread.join(10)


def test_publish_refuses_while_another_sender_holds_the_games_lock(world, held_lock):
    draft_id = world.add_draft(RESULT)

    with pytest.raises(SenderBusy) as caught:
        world.publish()

    assert "另一个 bansha 进程（cycle 或 post）正在给这局游戏发帖" in str(caught.value)
    assert world.sim.requests == []  # not even read the thread
    assert world.attempts(draft_id) == []
    held_lock.set()
    time.sleep(0.2)
    [result] = world.publish(lock_wait_s=5)
    assert result.status == "posted" and len(world.copies(RESULT)) == 1


def test_cli_post_waits_for_a_running_cycle_then_posts(cli_world):
    world, path = cli_world
    draft_id = world.add_draft(RESULT)
    held, release = threading.Event(), threading.Event()

    def cycle() -> None:
        with cycle_lock(world.tmp_path / "game.db"):
            held.set()
            release.wait(0.5)  # the cron cycle ends half a second later

    thread = threading.Thread(target=cycle)
    thread.start()
    assert held.wait(5)
    env = {"BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR)}
    out = run(["post", str(path), "--db", str(world.tmp_path / "game.db"), "--wait", "10"], env)
    thread.join(5)

    assert out.exit_code == 0, out.output
    assert "正在运行，等它结束（最多 10 秒）" in out.stderr
    [pid] = world.copies(RESULT)
    assert f"草稿 #{draft_id}（投票结果，第2天）已发出 → 帖子 tid=2012 pid={pid}" in out.stdout


def test_cli_post_gives_up_after_its_wait_with_a_chinese_message(cli_world, held_lock):
    world, path = cli_world
    world.add_draft(RESULT)
    env = {"BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR)}
    db = ["--db", str(world.tmp_path / "game.db")]
    for args in (["post", str(path)], ["post", "record", str(path), "1", "--pid", "5"]):
        out = run([*args, *db, "--wait", "1"], env)
        assert out.exit_code == 1
        assert "另一轮 bansha cycle（或另一个 bansha publish）仍在运行（等了 1 秒）" in out.output
        assert "Traceback" not in out.output
    assert world.sim.requests == [] and world.copies(RESULT) == []


def test_cli_post_of_a_draft_the_cycle_posted_meanwhile_says_where_it_went(cli_world):
    world, path = cli_world
    draft_id = world.add_draft(RESULT)
    [first] = world.publish()  # the cycle that was running posted it
    env = {"BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR)}
    db = ["--db", str(world.tmp_path / "game.db")]
    sent = len(world.reply_posts())

    out = run(["post", str(path), *db, "--id", str(draft_id)], env)

    assert out.exit_code == 0, out.output
    assert f"草稿 #{draft_id} 已经发出 → 帖子 tid=2012 pid={first.pid}，不再重发。" in out.output
    assert len(world.reply_posts()) == sent
