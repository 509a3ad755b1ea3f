"""New threads, finding them again, and closing them, against the local Discuz simulator.

The forum is the demo game's (config/games/demo.toml + demo_posts.toml) as of the demo's
``[sim] now``; the director is 导演 (uid 100), forum fid 3. What a director would check: a new
thread lands once, in the forum, by the director, with the subject and text approved; every
refusal the forum can give becomes a clear error and nothing is sent twice; after a crash right
after the forum created the thread, ``find_thread`` finds it; a closed thread takes replies only
from moderators; closing needs moderator rights and happens once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from pipeline.discuz.poster import (
    CaptchaRequired,
    LoginFailed,
    NewThread,
    NoModeratorRights,
    Poster,
    PostError,
    PostRefused,
    ThreadRef,
    UncertainSend,
    WaitingThreads,
    WrongAccount,
)
from pipeline.game.gamefile import Game, load_game
from pipeline.sim.simulator import ForumSim, SimClock, SimRequest, SimResponse, script_now

REPO = Path(__file__).resolve().parents[3]
DEMO_GAME = REPO / "config" / "games" / "demo.toml"
DEMO_POSTS = REPO / "config" / "games" / "demo_posts.toml"
FID = 3
DIRECTOR = "导演"
PLAYER = "饺子"
VOTE_DAY2 = 2012
SUBJECT = "[M135]『让子弹飞』第3天投票帖"
BODY = "【第3天投票帖】\n请存活玩家在本帖投票，格式如下（一人一票）：\n投票对象：XXX"


class Crash(BaseException):
    """bansha's process dying (not an Exception: nothing in bansha may catch it)."""


@dataclass
class World:
    clock: SimClock
    sim: ForumSim
    game: Game
    waits: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.clock.advance(seconds)

    def poster(
        self, *, account: str = DIRECTOR, transport: httpx.BaseTransport | None = None, **kw: Any
    ) -> Poster:
        http = httpx.Client(transport=transport or self.sim.transport())
        env = {"BANSHA_COOKIE": self.sim.login_cookie(account)}
        return Poster.for_game(
            self.game, http, env=env, min_interval_s=0, sleep=self.sleep, now=self.clock, **kw
        )

    def posts_to(self, mod: str) -> list[SimRequest]:
        return [r for r in self.sim.requests if r.method == "POST" and r.query.get("mod") == mod]

    def threads_titled(self, subject: str) -> list[int]:
        return [t for t in self.sim.thread_tids() if self.sim.thread_subject(t) == subject]


def make_world(**sim_kw: Any) -> World:
    now = script_now(DEMO_POSTS)
    assert now is not None
    clock = SimClock(now)
    sim = ForumSim.from_script(DEMO_GAME, DEMO_POSTS, clock, **sim_kw)
    game = load_game(DEMO_GAME, env={}, check_login=False)
    return World(clock, sim, game)


@pytest.fixture
def world() -> World:
    return make_world(moderators=[DIRECTOR])


# --------------------------------------------------------------------------- new threads


def test_a_new_thread_is_created_once_by_the_director_with_the_approved_subject_and_text(world):
    before = world.sim.thread_tids()
    guarded: list[int] = []

    made = world.poster().new_thread(FID, SUBJECT, BODY, guard=lambda: guarded.append(1))

    assert isinstance(made, NewThread) and not made.moderated
    assert made.tid == max(before) + 1  # Discuz's new tid: the largest one + 1
    assert made.url == f"{world.sim.base_url}forum.php?mod=viewthread&tid={made.tid}"
    assert world.sim.thread_tids() == [*before, made.tid]
    assert world.sim.thread_subject(made.tid) == SUBJECT
    assert world.sim.thread_author(made.tid) == DIRECTOR
    [first] = world.sim.thread_pids(made.tid)
    assert world.sim.stored_message(first) == BODY
    assert guarded == [1]  # the exactly-once protocol records its intent right before the POST
    [sent] = world.posts_to("post")
    assert sent.query["action"] == "newthread" and sent.query["fid"] == str(FID)
    assert sent.form["subject"] == SUBJECT and sent.form["message"] == BODY


def test_a_refused_guard_sends_nothing(world):
    def refuse() -> None:
        raise PostError("草稿已不再是已批准状态")

    with pytest.raises(PostError, match="已不再是已批准"):
        world.poster().new_thread(FID, SUBJECT, BODY, guard=refuse)
    assert world.posts_to("post") == [] and world.threads_titled(SUBJECT) == []


@pytest.mark.parametrize(
    ("sim_kw", "subject", "error", "words", "transient"),
    [
        # post_newthread.php: forum allowpost == -1 for the director's group
        ({"newthread_users": []}, SUBJECT, PostRefused, "只有特定用户组可以发新主题", False),
        # model_forum_thread.php:48 trim(subject) == '' -> post_sm_isnull
        ({}, "   ", PostRefused, "尚未输入标题或内容", False),
        # function_post.php checkpost(): dstrlen(subject) > maxsubjectsize (80)
        ({}, "长" * 81, PostRefused, "标题超过最大字符限制", False),
        # a captcha on posting (X3.5's default): the director posts it by hand
        ({"seccode_post": True}, SUBJECT, CaptchaRequired, "验证码", None),
    ],
    ids=["no-permission", "empty-subject", "subject-too-long", "captcha"],
)
def test_every_refusal_of_a_new_thread_is_an_error_and_nothing_is_created(
    sim_kw, subject, error, words, transient
):
    world = make_world(**sim_kw)
    before = world.sim.thread_tids()

    with pytest.raises(error, match=words) as caught:
        world.poster().new_thread(FID, subject, BODY)

    if transient is not None:
        assert caught.value.transient is transient
    if error is CaptchaRequired:
        assert caught.value.during == "post"
    assert world.sim.thread_tids() == before
    assert len(world.posts_to("post")) == 1  # refused once: never tried again


def test_a_subject_of_exactly_80_characters_is_accepted(world):
    made = world.poster().new_thread(FID, "长" * 80, BODY)
    assert world.sim.thread_subject(made.tid) == "长" * 80


def test_flood_control_is_waited_out_and_the_thread_created_once(world):
    world.sim.add_post(VOTE_DAY2, DIRECTOR, "导演刚刚在投票帖里说了一句话。", world.clock())
    world.sim._last_post_at[world.sim.users[DIRECTOR]] = int(world.clock().timestamp())

    made = world.poster().new_thread(FID, SUBJECT, BODY)

    assert world.waits == [world.sim.floodctrl_s + 1.0]
    assert world.threads_titled(SUBJECT) == [made.tid]
    assert len(world.posts_to("post")) == 2


def test_the_hourly_thread_limit_is_a_transient_refusal():
    world = make_world(threads_per_hour=1)
    poster = world.poster()
    poster.new_thread(FID, SUBJECT, BODY)
    world.clock.advance(minutes=5)

    with pytest.raises(PostRefused, match="每小时限制发主题") as caught:
        poster.new_thread(FID, SUBJECT + "（二）", BODY)

    assert caught.value.transient
    assert world.threads_titled(SUBJECT + "（二）") == []


def test_a_thread_waiting_for_a_moderator_is_reported_as_moderated_and_not_listed():
    world = make_world(moderate_threads=True)
    poster = world.poster()

    made = poster.new_thread(FID, SUBJECT, BODY)

    assert made.moderated
    assert world.sim.pending_threads() == [made.tid]
    assert world.threads_titled(SUBJECT) == []
    assert poster.find_thread(FID, SUBJECT) is None  # not shown until a moderator approves
    world.sim.approve_thread(made.tid)
    assert poster.find_thread(FID, SUBJECT) == ThreadRef(made.tid, SUBJECT, DIRECTOR, 100, False)


def test_a_thread_whose_answer_was_lost_is_found_among_the_directors_waiting_threads():
    """新主题需要审核 and a lost answer: the listing does not show the thread; the list behind
    the banner 您有 1 个主题正等待审核中 (space_thread.php, filter=aduit) does, with its tid."""
    world = make_world(moderate_threads=True)
    world.sim.faults.add("lost_answer", match="action=newthread")
    with pytest.raises(UncertainSend):
        world.poster().new_thread(FID, SUBJECT, BODY)
    [tid] = world.sim.pending_threads()

    poster = world.poster()  # a new process
    assert poster.find_thread(FID, SUBJECT) is None
    waiting = poster.waiting_threads(FID)
    assert waiting.banner == 1
    assert waiting.threads == (ThreadRef(tid, SUBJECT, DIRECTOR, 100, False, waiting=True),)
    assert waiting.find(SUBJECT) == waiting.threads[0]
    assert waiting.find(SUBJECT + "（二）") is None
    [read] = [r for r in world.sim.requests if r.path.endswith("home.php")]
    assert read.query["filter"] == "aduit" and read.query["uid"] == "100"
    assert read.query["fid"] == str(FID)


def test_without_a_banner_the_waiting_list_is_read_only_when_asked():
    world = make_world(moderators=[DIRECTOR])
    poster = world.poster()
    poster.find_thread(FID, SUBJECT)

    assert poster.waiting_threads(FID) == WaitingThreads(0, (), poster.waiting_threads(FID).listed)
    assert not [r for r in world.sim.requests if r.path.endswith("home.php")]
    assert VOTE_DAY2 in poster.waiting_threads(FID).listed  # the tids the listing showed
    assert poster.waiting_threads(FID, read_list=True).threads == ()
    assert len([r for r in world.sim.requests if r.path.endswith("home.php")]) == 1


def test_a_waiting_list_the_forum_will_not_show_leaves_only_the_banners_count():
    world = make_world(moderate_threads=True, space_closed=True)
    world.poster().new_thread(FID, SUBJECT, BODY)

    poster = world.poster()
    assert poster.find_thread(FID, SUBJECT) is None
    waiting = poster.waiting_threads(FID)
    assert (waiting.banner, waiting.threads) == (1, None)
    assert "家园功能尚未开启" in waiting.problem


def test_a_subject_the_forum_charset_cannot_carry_is_refused_before_anything_is_sent():
    world = make_world(charset="gbk")
    with pytest.raises(PostRefused, match="无法表示") as caught:
        world.poster().new_thread(FID, SUBJECT + "🐺", BODY)
    assert not caught.value.transient
    assert world.posts_to("post") == []


def test_a_gbk_forum_gets_the_subject_in_gbk(tmp_path):
    world = make_world(charset="gbk")
    made = world.poster().new_thread(FID, SUBJECT, BODY)
    assert world.sim.thread_subject(made.tid) == SUBJECT
    assert world.sim.stored_message(world.sim.thread_pids(made.tid)[0]) == BODY


def test_without_a_session_nothing_is_sent(world):
    http = httpx.Client(transport=world.sim.transport())
    poster = Poster.for_game(world.game, http, env={}, min_interval_s=0, sleep=world.sleep)
    with pytest.raises(LoginFailed, match="BANSHA_COOKIE"):
        poster.new_thread(FID, SUBJECT, BODY)
    assert world.posts_to("post") == []


def test_a_session_of_another_account_starts_and_closes_nothing(world):
    poster = world.poster(account=PLAYER)
    with pytest.raises(WrongAccount, match="不是游戏文件 \\[director\\] 中的导演账号"):
        poster.new_thread(FID, SUBJECT, BODY)
    with pytest.raises(WrongAccount):
        poster.close_thread(FID, VOTE_DAY2)
    assert world.posts_to("post") == [] and world.posts_to("topicadmin") == []


# --------------------------------------------------------------------------- crash recovery


def test_after_the_answer_is_lost_the_thread_the_forum_created_is_found(world):
    world.sim.faults.add("lost_answer", match="action=newthread")
    poster = world.poster()

    with pytest.raises(UncertainSend, match="论坛可能已经收到这个新主题"):
        poster.new_thread(FID, SUBJECT, BODY)

    [tid] = world.threads_titled(SUBJECT)  # the forum did create it
    found = world.poster().find_thread(FID, SUBJECT)  # a new process, a new session
    assert found == ThreadRef(tid, SUBJECT, DIRECTOR, 100, False)


def test_a_crash_right_after_the_forum_created_the_thread_then_find_thread_finds_it(world):
    def crash(request: SimRequest, response: SimResponse) -> None:
        if request.query.get("action") == "newthread" and request.method == "POST":
            raise Crash

    with pytest.raises(Crash):
        world.poster(transport=world.sim.transport(after=crash)).new_thread(FID, SUBJECT, BODY)

    [tid] = world.threads_titled(SUBJECT)
    assert world.poster().find_thread(FID, SUBJECT).tid == tid  # type: ignore[union-attr]


def test_find_thread_wants_the_exact_subject_and_the_directors_own_newest_thread(world):
    at = world.clock() - timedelta(hours=2)
    world.sim.add_thread(3001, SUBJECT, DIRECTOR, BODY, at)  # an older one, same subject
    world.sim.add_thread(3002, SUBJECT, PLAYER, BODY, world.clock())  # a player's copy
    world.sim.add_thread(3003, SUBJECT + "（补）", DIRECTOR, BODY, world.clock())
    newest = world.poster().new_thread(FID, SUBJECT, BODY)

    found = world.poster().find_thread(FID, SUBJECT)

    assert found is not None and found.tid == newest.tid
    assert world.poster().find_thread(FID, "[M135]『让子弹飞』第9天投票帖") is None


def test_find_thread_reads_the_second_page_of_the_listing_when_needed():
    world = make_world(tpp=3)
    world.sim.add_thread(3001, SUBJECT, DIRECTOR, BODY, world.clock() - timedelta(hours=1))
    for i in range(3):  # three newer threads push it to page 2
        world.sim.add_thread(3100 + i, f"闲聊帖 {i}", PLAYER, BODY, world.clock())

    found = world.poster().find_thread(FID, SUBJECT)

    assert found is not None and found.tid == 3001
    listings = [r for r in world.sim.requests if r.query.get("mod") == "forumdisplay"]
    assert [r.query.get("page", "1") for r in listings] == ["1", "2"]


def test_find_thread_does_not_read_a_third_page():
    world = make_world(tpp=2)
    world.sim.add_thread(3001, SUBJECT, DIRECTOR, BODY, world.clock() - timedelta(hours=1))
    for i in range(4):
        world.sim.add_thread(3100 + i, f"闲聊帖 {i}", PLAYER, BODY, world.clock())
    assert world.poster().find_thread(FID, SUBJECT) is None


# --------------------------------------------------------------------------- closed threads


def test_a_reply_to_a_closed_thread_is_refused_for_a_player_and_accepted_for_a_moderator(world):
    world.sim.close_thread(VOTE_DAY2)

    with pytest.raises(PostRefused, match="本主题已关闭，不再接受新内容") as caught:
        world.poster(account=PLAYER).reply(VOTE_DAY2, "投票对象：包子（截止后补票）")
    assert not caught.value.transient

    director = world.poster()  # 导演 moderates the forum in this world
    director.session(VOTE_DAY2)
    sent = director.reply(VOTE_DAY2, "【导演】投票已截止，结果稍后公布。")
    assert sent.pid is not None
    assert world.sim.stored_message(sent.pid) == "【导演】投票已截止，结果稍后公布。"


def test_thread_closed_reads_the_lock_from_the_thread_page(world):
    poster = world.poster()
    assert poster.thread_closed(VOTE_DAY2) is False
    world.sim.close_thread(VOTE_DAY2)
    assert poster.thread_closed(VOTE_DAY2) is True


def test_closing_a_thread_closes_it_once_and_twice_says_already_closed(world):
    poster = world.poster()
    guarded: list[int] = []

    assert poster.close_thread(FID, VOTE_DAY2, guard=lambda: guarded.append(1)) == "closed"
    assert world.sim.thread_closed(VOTE_DAY2)
    assert poster.close_thread(FID, VOTE_DAY2, guard=lambda: guarded.append(1)) == "already_closed"

    actions = [(a.tid, a.action, a.by) for a in world.sim.mod_actions]
    assert actions == [(VOTE_DAY2, "CLS", DIRECTOR)]
    assert len(world.posts_to("topicadmin")) == 1  # the second call sent nothing
    assert guarded == [1]


@pytest.mark.parametrize(
    ("sim_kw", "words"),
    [
        ({}, "没有权限使用管理功能"),  # not a moderator of the forum: admin_nopermission
        ({"moderators": [DIRECTOR], "cannot_close": [DIRECTOR]}, "没有权限关闭此主题"),
    ],
    ids=["not-a-moderator", "group-may-not-close"],
)
def test_closing_without_moderator_rights_raises_no_moderator_rights(sim_kw, words):
    world = make_world(**sim_kw)
    cookie = world.sim.login_cookie(DIRECTOR)

    with pytest.raises(NoModeratorRights, match=words) as caught:
        world.poster().close_thread(FID, VOTE_DAY2)

    assert "版块 3" in str(caught.value) and f"主题 {VOTE_DAY2}" in str(caught.value)
    assert cookie.split("auth=")[1] not in str(caught.value)
    assert not world.sim.thread_closed(VOTE_DAY2)
    assert world.sim.mod_actions == []
    assert len(world.posts_to("topicadmin")) == 1


def test_a_lost_answer_to_a_close_is_uncertain_and_the_next_try_sees_it_closed(world):
    world.sim.faults.add("lost_answer", match="mod=topicadmin")
    with pytest.raises(UncertainSend):
        world.poster().close_thread(FID, VOTE_DAY2)
    assert world.sim.thread_closed(VOTE_DAY2)  # the forum did close it

    poster = world.poster()
    assert poster.thread_closed(VOTE_DAY2)
    assert poster.close_thread(FID, VOTE_DAY2) == "already_closed"
    assert len(world.sim.mod_actions) == 1


def test_a_crash_right_after_the_forum_closed_the_thread_closes_nothing_twice(world):
    def crash(request: SimRequest, response: SimResponse) -> None:
        if request.query.get("mod") == "topicadmin":
            raise Crash

    with pytest.raises(Crash):
        world.poster(transport=world.sim.transport(after=crash)).close_thread(FID, VOTE_DAY2)
    assert world.poster().close_thread(FID, VOTE_DAY2) == "already_closed"
    assert len(world.sim.mod_actions) == 1
