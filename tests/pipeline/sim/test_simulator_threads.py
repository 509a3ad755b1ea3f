"""The simulator's new threads, moderators and closed threads, request by request.

Each test sends what a browser (or bansha) sends and checks the answer Discuz X3.5 gives
(``source/include/post/post_newthread.php``, ``source/class/model/model_forum_thread.php``,
``source/module/forum/forum_topicadmin.php``, ``source/include/topicadmin/topicadmin_moderate.php``,
``source/language/lang_message.php``), read through bansha's own parsers.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import pytest

from parsers.mobile import parse_mobile_viewthread
from parsers.reply import ReplyOutcome, parse_post_answer
from parsers.viewthread import parse_viewthread
from pipeline.sim import render
from pipeline.sim.simulator import ForumSim, SimClock, SimResponse

TZ = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 12, 3, 9, 0, tzinfo=TZ)
USERS = {"导演": 100, "饺子": 101, "包子": 102, "版主": 103, "admin": 1}
VOTE = 12
BODY = "【第3天投票帖】请存活玩家在本帖投票。"


@pytest.fixture
def sim() -> ForumSim:
    forum = ForumSim(users=USERS, clock=SimClock(NOW), moderators=["版主"], admins=["admin"])
    forum.add_thread(VOTE, "[M135]第2天投票帖", "导演", BODY, NOW - timedelta(hours=5))
    return forum


def cookie(sim: ForumSim, who: str | None) -> dict[str, str]:
    return {"Cookie": sim.login_cookie(who)} if who else {}


def post(sim: ForumSim, who: str | None, query: dict, form: dict, headers=None) -> SimResponse:
    headers = headers or cookie(sim, who)
    fields = dict(form)
    if who and "formhash" not in fields:
        salt = headers["Cookie"].split("saltkey=")[1].split(";")[0]
        fields["formhash"] = sim.formhash(salt, who, sim.users[who])
    url = f"{sim.base_url}forum.php?{urlencode(query)}"
    return sim.handle("POST", url, headers, urlencode(fields).encode())


def newthread(sim: ForumSim, who: str | None, subject: str, message: str = BODY, **kw):
    query = {"mod": "post", "action": "newthread", "fid": 3, "extra": "", "topicsubmit": "yes"}
    if kw.pop("ajax", False):
        query.update({"infloat": "yes", "handlekey": "fastnewpost", "inajax": 1})
    form = {"subject": subject, "message": message, "wysiwyg": "0", "usesig": "1", **kw}
    return post(sim, who, query, form)


def answer(resp: SimResponse):
    return parse_post_answer(
        resp.status, resp.body, location=resp.header("location"), charset=resp.charset
    )


def reply(sim: ForumSim, who: str, message: str, **query):
    q = {"mod": "post", "action": "reply", "tid": VOTE, "replysubmit": "yes", **query}
    return answer(post(sim, who, q, {"message": message}))


def moderate(sim: ForumSim, who: str | None, operation: str = "close", **form):
    query = {
        "mod": "topicadmin",
        "action": "moderate",
        "optgroup": 4,
        "modsubmit": "yes",
        "infloat": "yes",
    }
    fields = {"fid": "3", "moderate[]": str(VOTE), "operations[]": operation, "redirect": ""}
    fields.update(form)
    return post(sim, who, query, fields)


# --------------------------------------------------------------------------- new threads


def test_a_new_thread_answers_301_to_the_thread_and_gets_the_next_tid(sim):
    resp = newthread(sim, "导演", "[M135]第3天投票帖")

    assert resp.status == 301  # post_newthread_succeed is a quick forward (msgforward)
    assert resp.header("location") == "forum.php?mod=viewthread&tid=13&extra="
    assert sim.thread_tids() == [VOTE, 13]  # the largest tid + 1
    assert (sim.thread_subject(13), sim.thread_author(13)) == ("[M135]第3天投票帖", "导演")
    page = sim.handle("GET", f"{sim.base_url}forum.php?mod=viewthread&tid=13")
    parsed = parse_viewthread(page.body, tid=13, tz=TZ, now=NOW)
    assert parsed.subject == "[M135]第3天投票帖"
    assert [(p.floor, p.author, p.text) for p in parsed.posts] == [(1, "导演", BODY)]


def test_the_ajax_answer_names_the_new_tid_and_pid(sim):
    got = answer(newthread(sim, "导演", "[M135]第3天投票帖", ajax=True))
    assert got.outcome is ReplyOutcome.POSTED
    assert "您的主题已发布" in got.message
    assert (got.tid, got.pid) == (13, sim.thread_pids(13)[0])


@pytest.mark.parametrize(
    ("who", "subject", "message", "words"),
    [
        (None, "主题", BODY, render.MSG_POSTPERM_LOGIN),
        ("导演", "", BODY, render.MSG_SM_ISNULL),
        ("导演", "主题", "   ", render.MSG_SM_ISNULL),
        ("导演", "题" * 81, BODY, render.MSG_SUBJECT_TOOLONG),
        ("导演", "主题", "太短", "小于 10 个字符"),
        ("饺子", "主题", "[hide]藏起来的身份牌[/hide]", render.MSG_HIDE_NOT_ALLOWED),
    ],
    ids=["guest", "no-subject", "no-message", "subject-81", "too-short", "hide"],
)
def test_a_new_thread_is_refused_as_discuz_refuses_it(sim, who, subject, message, words):
    got = answer(newthread(sim, who, subject, message, ajax=True))
    assert got.outcome is not ReplyOutcome.POSTED
    assert words in got.message
    assert sim.thread_tids() == [VOTE]


def test_only_the_allowed_accounts_may_start_threads():
    sim = ForumSim(users=USERS, clock=SimClock(NOW), newthread_users=["导演"])
    got = answer(newthread(sim, "饺子", "玩家开的帖", ajax=True))
    assert got.message == render.MSG_NEWTHREAD_NOPERMISSION
    form = sim.handle(
        "GET", f"{sim.base_url}forum.php?mod=post&action=newthread&fid=3", cookie(sim, "饺子")
    )
    assert render.MSG_NEWTHREAD_NOPERMISSION in form.text
    assert newthread(sim, "导演", "导演开的帖").status == 301


def test_the_newthread_form_carries_the_formhash_and_the_subject_limit(sim):
    headers = cookie(sim, "导演")
    page = sim.handle("GET", f"{sim.base_url}forum.php?mod=post&action=newthread&fid=3", headers)
    salt = headers["Cookie"].split("saltkey=")[1].split(";")[0]
    expected = sim.formhash(salt, "导演", 100)
    assert f'name="formhash" id="formhash" value="{expected}"' in page.text
    assert "topicsubmit=yes" in page.text and "checklen', 80" in page.text
    guest = sim.handle("GET", f"{sim.base_url}forum.php?mod=post&action=newthread&fid=3")
    assert render.MSG_POSTPERM_LOGIN in guest.text


def test_flood_control_and_the_hourly_limit_apply_to_new_threads():
    clock = SimClock(NOW)
    sim = ForumSim(users=USERS, clock=clock, threads_per_hour=2, floodctrl_s=15)
    assert newthread(sim, "导演", "第一帖").status == 301
    flood = answer(newthread(sim, "导演", "第二帖", ajax=True))
    assert (flood.outcome, flood.wait_s) == (ReplyOutcome.FLOOD, 15)
    clock.advance(16)
    assert newthread(sim, "导演", "第二帖").status == 301
    clock.advance(16)
    limit = answer(newthread(sim, "导演", "第三帖", ajax=True))
    assert limit.outcome is ReplyOutcome.HOURLY_LIMIT and "每小时限制发主题 2 个" in limit.message
    clock.advance(3600)
    assert newthread(sim, "导演", "第三帖").status == 301


def test_a_captcha_refuses_new_threads_too():
    sim = ForumSim(users=USERS, clock=SimClock(NOW), seccode_post=True)
    got = answer(newthread(sim, "导演", "主题", ajax=True))
    assert got.outcome is ReplyOutcome.CAPTCHA and sim.thread_tids() == []


def test_a_moderated_new_thread_is_kept_but_not_shown_until_approved():
    clock = SimClock(NOW)
    sim = ForumSim(users=USERS, clock=clock, moderate_threads=True, moderators=["版主"])
    kept = answer(newthread(sim, "导演", "待审核的帖子", ajax=True))
    assert kept.outcome is ReplyOutcome.PENDING_MODERATION
    assert kept.message == render.MSG_NEWTHREAD_MOD_SUCCEED and kept.tid == 1
    clock.advance(60)  # past flood control
    page = newthread(sim, "导演", "待审核的第二帖")  # not a quick forward: a message page
    assert page.status == 200 and render.MSG_NEWTHREAD_MOD_SUCCEED in page.text
    assert (sim.pending_threads(), sim.thread_tids()) == ([1, 2], [])
    hidden = sim.handle("GET", f"{sim.base_url}forum.php?mod=viewthread&tid=1")
    assert hidden.status == 404
    assert newthread(sim, "版主", "版主的帖子不用审核").status == 301
    assert sim.thread_tids() == [3]
    sim.approve_thread(1)
    assert sim.thread_tids() == [1, 3] and sim.thread_subject(1) == "待审核的帖子"


def test_the_author_sees_and_replies_to_their_thread_waiting_for_a_moderator():
    """function_forum.php:458-459: a thread with displayorder -2 is loaded for its author only;
    forum_post.php:94 lets the author reply to it. Anyone else: 指定的主题不存在或正在被审核."""
    clock = SimClock(NOW)
    sim = ForumSim(users=USERS, clock=clock, moderate_threads=True, floodctrl_s=0)
    tid = answer(newthread(sim, "导演", "待审核的讨论帖", ajax=True)).tid
    url = f"{sim.base_url}forum.php?mod=viewthread&tid={tid}"

    mine = sim.handle("GET", url, cookie(sim, "导演"))
    assert mine.status == 200
    assert parse_viewthread(mine.body, tid=tid, tz=TZ, now=NOW).posts[0].author == "导演"
    assert sim.handle("GET", url, cookie(sim, "饺子")).status == 404
    assert sim.handle("GET", url).status == 404
    clock.advance(60)
    query = {"mod": "post", "action": "reply", "tid": tid, "replysubmit": "yes"}
    got = answer(post(sim, "导演", query, {"message": "【电梯】二楼。"}))
    assert got.outcome is ReplyOutcome.POSTED
    refused = answer(post(sim, "饺子", query, {"message": "抢个沙发。"}))
    assert refused.outcome is not ReplyOutcome.POSTED
    sim.approve_thread(tid)
    assert [sim.stored_message(p) for p in sim.thread_pids(tid)][1] == "【电梯】二楼。"


def test_a_gbk_forum_takes_a_gbk_subject_and_counts_its_length_in_bytes():
    sim = ForumSim(users=USERS, clock=SimClock(NOW), charset="gbk")
    query = {"mod": "post", "action": "newthread", "fid": 3, "topicsubmit": "yes"}
    headers = cookie(sim, "导演")
    salt = headers["Cookie"].split("saltkey=")[1].split(";")[0]
    fields = {
        "formhash": sim.formhash(salt, "导演", 100),
        "subject": "第3天投票帖",
        "message": BODY,
    }
    body = urlencode(fields, encoding="gbk").encode()
    resp = sim.handle("POST", f"{sim.base_url}forum.php?{urlencode(query)}", headers, body)
    assert resp.status == 301 and sim.thread_subject(1) == "第3天投票帖"
    too_long = answer(newthread(sim, "导演", "题" * 41))  # 82 bytes in GBK
    assert too_long.message == render.MSG_SUBJECT_TOOLONG


# --------------------------------------------------------------------------- closed threads


def test_a_closed_thread_takes_replies_only_from_moderators(sim):
    sim.close_thread(VOTE, by="版主")

    for who in ("饺子", "导演"):  # the thread's own starter is no moderator either
        got = reply(sim, who, "截止后补票：投票对象：包子")
        assert got.outcome is ReplyOutcome.REFUSED and got.message == render.MSG_THREAD_CLOSED
        ajax = reply(sim, who, "截止后补票：投票对象：包子", inajax=1, handlekey="fastpost")
        assert ajax.message == render.MSG_THREAD_CLOSED
    form = sim.handle(
        "GET",
        f"{sim.base_url}forum.php?mod=post&action=reply&tid={VOTE}",
        cookie(sim, "饺子"),
    )
    assert render.MSG_THREAD_CLOSED in form.text
    guest = answer(post(sim, None, {"mod": "post", "action": "reply", "tid": VOTE}, {}))
    assert guest.message == render.MSG_THREAD_CLOSED  # forum_post.php asks before the login
    edit = {"mod": "post", "action": "edit", "editsubmit": "yes"}
    first = sim.thread_pids(VOTE)[0]
    edited = answer(
        post(sim, "导演", edit, {"tid": VOTE, "pid": first, "message": "改过的正文正文"})
    )
    assert edited.message == render.MSG_THREAD_CLOSED  # edits too, even the starter's own
    for who in ("版主", "admin"):  # a moderator of the forum, an admin (moderates everywhere)
        assert reply(sim, who, f"{who}：本帖已关闭，结果稍后公布。").outcome is ReplyOutcome.POSTED
    assert len(sim.thread_pids(VOTE)) == 3


def test_a_closed_thread_shows_the_lock_on_the_desktop_page_and_in_the_mobile_api(sim):
    def desktop(who: str | None) -> str:
        url = f"{sim.base_url}forum.php?mod=viewthread&tid={VOTE}"
        return sim.handle("GET", url, cookie(sim, who)).text

    def mobile() -> dict[str, str]:
        url = f"{sim.base_url}api/mobile/index.php?version=4&module=viewthread&tid={VOTE}"
        page = parse_mobile_viewthread(sim.handle("GET", url).body, tid=VOTE, tz=TZ, page=1)
        return page.extra

    assert "fico-lock" not in desktop(None) and "closed" not in mobile()
    sim.close_thread(VOTE)
    text = desktop("饺子")
    assert '<i class="fico-lock fc-s" title="关闭"></i>' in text
    assert render.MSG_THREAD_CLOSED in text  # the fast reply box says so
    assert 'id="fastpostmessage"' not in text
    assert 'id="fastpostmessage"' in desktop("版主")  # a moderator still gets the box
    page = parse_viewthread(text.encode(), tid=VOTE, tz=TZ, now=NOW)
    assert page.extra["closed"] == "1"
    assert mobile()["closed"] == "1"
    sim.open_thread(VOTE)
    assert "fico-lock" not in desktop(None)


def test_a_thread_closed_later_is_open_before(sim):
    sim.close_thread(VOTE, at=NOW + timedelta(hours=1))
    assert not sim.thread_closed(VOTE)
    assert sim.thread_closed(VOTE, at=NOW + timedelta(hours=2))


# --------------------------------------------------------------------------- topicadmin


def test_a_moderator_closes_and_opens_a_thread_through_topicadmin(sim):
    got = answer(moderate(sim, "版主"))
    # no redirect given: showmessage has no url, so admin_succeed comes through errorhandle_
    assert b"errorhandle_mods" in moderate(sim, "版主").body
    assert got.message == render.MSG_ADMIN_SUCCEED.strip()
    assert sim.thread_closed(VOTE)
    opened = moderate(sim, "admin", "open", redirect=f"forum.php?mod=viewthread&tid={VOTE}")
    assert b"succeedhandle_mods" in opened.body
    assert not sim.thread_closed(VOTE)
    assert [(a.tid, a.action, a.by) for a in sim.mod_actions] == [
        (VOTE, "CLS", "版主"),
        (VOTE, "CLS", "版主"),  # Discuz closes a closed thread again without a word
        (VOTE, "OPN", "admin"),
    ]


@pytest.mark.parametrize(
    ("who", "form", "words"),
    [
        ("饺子", {}, render.MSG_ADMIN_NOPERMISSION),
        ("导演", {}, render.MSG_ADMIN_NOPERMISSION),
        (None, {}, render.MSG_ADMIN_NOPERMISSION),
        ("版主", {"fid": "4"}, render.MSG_ADMIN_NOPERMISSION),  # not a moderator of forum 4
        ("版主", {"moderate[]": "999"}, render.MSG_ADMIN_MODERATE_INVALID),
        ("版主", {"operations[]": "explode"}, render.MSG_ADMIN_MODERATE_INVALID),
    ],
    ids=["player", "thread-starter", "guest", "other-forum", "no-such-thread", "bad-operation"],
)
def test_topicadmin_refuses_as_discuz_does(sim, who, form, words):
    resp = moderate(sim, who, **form)
    assert resp.header("content-type").startswith("text/xml")  # always the ajax form
    assert answer(resp).message == words
    assert not sim.thread_closed(VOTE) and sim.mod_actions == []


def test_a_moderator_whose_group_may_not_close_is_refused():
    sim = ForumSim(users=USERS, clock=SimClock(NOW), moderators=["版主"], cannot_close=["版主"])
    sim.add_thread(VOTE, "投票帖", "导演", BODY, NOW)
    assert answer(moderate(sim, "版主")).message == render.MSG_NO_PRIVILEGE_CLOSE
    assert not sim.thread_closed(VOTE)


def test_a_stale_formhash_on_topicadmin_is_the_503_of_any_form(sim):
    resp = moderate(sim, "版主", formhash="deadbeef")
    assert resp.status == 503 and answer(resp).outcome is ReplyOutcome.BAD_FORMHASH
    assert not sim.thread_closed(VOTE)


def test_the_lost_answer_fault_applies_to_the_new_writes(sim):
    sim.faults.add("lost_answer", match="action=newthread")
    resp = newthread(sim, "导演", "丢失回答的帖子")
    assert resp.fault == "reset" and sim.thread_subject(13) == "丢失回答的帖子"
    sim.faults.add("lost_answer", match="mod=topicadmin")
    assert moderate(sim, "版主").fault == "reset" and sim.thread_closed(VOTE)


def test_a_post_script_can_name_moderators(tmp_path):
    game = tmp_path / "game.toml"
    game.write_text(
        '[game]\ntitle = "[M135]"\ntimezone = "Asia/Shanghai"\n[director]\nnames = ["导演"]\n'
        'uids = [100]\n[[players]]\nname = "饺子"\nuid = 101\n',
        "utf-8",
    )
    script = tmp_path / "posts.toml"
    script.write_text('[sim]\nmoderators = ["导演"]\nmoderate_threads = true\ntpp = 5\n', "utf-8")
    sim = ForumSim.from_script(game, script, SimClock(NOW))
    assert sim.is_moderator("导演") and not sim.is_moderator("饺子")
    assert (sim.moderate_threads, sim.tpp) == (True, 5)
