"""The forum listing parser (parsers.forumdisplay) against real Discuz! X3.5 pages and the
simulator's.

Real pages (tests/fixtures/discuz): ``desktop/section-list-{anon,member}.html`` (section 3
版杀测试区 with three threads by 导演A: the scratch, discussion and vote threads),
``mobile/section-api4-*.json``, ``misc/members-only-section-anon.html`` (a guest refused),
``mobile/section-api1-anon.json`` (503).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from parsers.forumdisplay import (
    ForumThread,
    SpaceThread,
    parse_forumdisplay,
    parse_mobile_forumdisplay,
    parse_space_threads,
)
from parsers.records import PageError, PageErrorKind
from pipeline.sim import render
from pipeline.sim.simulator import ForumSim, SimClock
from tests import discuz_samples as samples
from tests.discuz_samples import served_at

TZ = ZoneInfo("Asia/Shanghai")
SECTION = samples.manifest()["forum"]
#: the section's threads, the one with the latest post first (the forum's order)
LISTED = [samples.thread(key) for key in ("scratch", "discussion", "vote")]
REAL_SUBJECTS = {t["tid"]: t["subject"] for t in LISTED}
#: replies: the scratch thread got the two submissions that went through
REPLIES = [2, len(samples.where("discussion", deleted=False)) - 1, len(samples.posts("vote")) - 1]


@pytest.mark.parametrize("who", ["anon", "member"])
def test_the_real_desktop_listing(fixtures_dir, who):
    path = fixtures_dir / "desktop" / f"section-list-{who}.html"
    page = parse_forumdisplay(path.read_bytes(), tz=TZ, now=served_at(path))

    assert (page.fid, page.page, page.total_pages, page.forum_name) == (
        SECTION["fid"],
        1,
        1,
        "版杀测试区",
    )
    assert [t.tid for t in page.threads] == [t["tid"] for t in LISTED]
    assert {t.tid: t.subject for t in page.threads} == REAL_SUBJECTS
    assert {(t.author, t.authorid) for t in page.threads} == {("导演A", samples.uid("导演A"))}
    assert [(t.replies, t.views) for t in page.threads] == [(n, n) for n in REPLIES]
    assert REPLIES == [2, 40, 25]
    assert not any(t.closed or t.sticky for t in page.threads)
    # "1 分钟前" (title: the day only): a minute before the page was served
    assert page.threads[0].created_at == served_at(path) - timedelta(minutes=1)
    assert page.member_uid == (samples.uid("饺子") if who == "member" else 0)
    assert page.formhash == ("4bbf1166" if who == "member" else "71c2b33e")
    assert page.waiting == 0  # no 您有 N 个主题正等待审核中 banner on these pages


@pytest.mark.parametrize("who", ["anon", "member"])
def test_the_real_mobile_listing(fixtures_dir, who):
    body = (fixtures_dir / "mobile" / f"section-api4-{who}.json").read_bytes()
    page = parse_mobile_forumdisplay(body, tz=TZ)

    assert (page.fid, page.page, page.total_pages, page.source) == (SECTION["fid"], 1, 1, "mobile")
    assert {t.tid: t.subject for t in page.threads} == REAL_SUBJECTS
    scratch = samples.thread("scratch")
    assert page.threads[0] == ForumThread(
        tid=scratch["tid"],
        subject=scratch["subject"],
        author="导演A",
        authorid=samples.uid("导演A"),
        created_at=datetime.fromtimestamp(scratch["posts"][0]["dateline"], TZ),  # exact
        replies=2,
        views=2,
        closed=None,  # sub_threadlist.php does not pass forum_thread.closed on
        sticky=False,
    )


def test_a_guest_refused_by_a_restricted_forum_is_a_login_error(fixtures_dir):
    body = (fixtures_dir / "misc" / "members-only-section-anon.html").read_bytes()
    with pytest.raises(PageError) as caught:
        parse_forumdisplay(body, tz=TZ)
    assert caught.value.kind is PageErrorKind.LOGIN_REQUIRED
    assert "没有权限访问该版块" in caught.value.message_zh


@pytest.mark.parametrize("version", [1, 2, 3])
def test_the_503_of_the_old_mobile_api_is_a_server_error(fixtures_dir, version):
    path = fixtures_dir / "mobile" / f"section-api{version}-anon.json"
    assert samples.status(path) == 503
    with pytest.raises(PageError) as caught:
        parse_mobile_forumdisplay(path.read_bytes(), tz=TZ)
    assert caught.value.kind is PageErrorKind.SERVER_ERROR


def test_a_thread_page_is_not_a_listing(fixtures_dir):
    body = (fixtures_dir / "desktop" / "vote-page1-anon.html").read_bytes()
    with pytest.raises(PageError, match="不是版块主题列表"):
        parse_forumdisplay(body, tz=TZ)


# --------------------------------------------------------------------------- the simulator's


NOW = datetime(2026, 12, 3, 9, 0, tzinfo=TZ)
SPECIAL = '[M135]第1天讨论帖 <b>注意</b> & "规则"'  # stored escaped, read unescaped


def sim_forum(**kw) -> tuple[ForumSim, SimClock]:
    clock = SimClock(NOW)
    users = {"导演": 100, "饺子": 101, "包子": 102}
    return ForumSim(users=users, clock=clock, moderators=["导演"], **kw), clock


def listing(sim: ForumSim, query: str = "", *, as_user: str | None = None):
    headers = {"Cookie": sim.login_cookie(as_user)} if as_user else {}
    url = f"{sim.base_url}forum.php?mod=forumdisplay&fid=3{query}"
    resp = sim.handle("GET", url, headers)
    return parse_forumdisplay(resp.body, tz=TZ, now=NOW, encoding=resp.charset)


def mobile_listing(sim: ForumSim, query: str = ""):
    url = f"{sim.base_url}api/mobile/index.php?version=4&module=forumdisplay&fid=3{query}"
    return parse_mobile_forumdisplay(sim.handle("GET", url).body, tz=TZ)


def test_the_simulators_listing_reads_like_the_real_one_with_closed_and_sticky_threads():
    sim, _ = sim_forum()
    sim.add_thread(1, SPECIAL, "导演", "第1天讨论帖正文。", NOW - timedelta(days=9))
    sim.add_thread(2, "[M135]第1天投票帖", "导演", "第1天投票帖正文。", NOW - timedelta(hours=3))
    sim.add_thread(
        3, "闲聊：您尚未登录，没有权限访问该版块", "饺子", "开个玩笑。", NOW - timedelta(minutes=5)
    )
    sim.add_post(1, "饺子", "讨论帖里的一句发言。", NOW - timedelta(minutes=1))
    sim.close_thread(2)
    sim.stick_thread(1)

    for page in (listing(sim), listing(sim, as_user="导演")):  # a moderator sees checkboxes
        assert [t.tid for t in page.threads] == [1, 3, 2]  # sticky first, then last post
        first, chat, vote = page.threads
        assert first.sticky and not first.closed
        assert first.subject == SPECIAL  # unescaped
        assert first.created_at == datetime(2026, 11, 24, tzinfo=TZ)  # older: only the date
        assert vote.closed and not vote.sticky
        assert vote.created_at == NOW - timedelta(hours=3)
        assert chat.subject.startswith("闲聊：您尚未登录")  # a subject is never an error page
        assert (chat.author, chat.authorid) == ("饺子", 101)
        assert (first.replies, vote.replies) == (1, 0)

    mobile = mobile_listing(sim)
    assert [(t.tid, t.sticky, t.closed) for t in mobile.threads] == [
        (1, True, None),
        (3, False, None),
        (2, False, None),
    ]
    assert mobile.threads[0].subject == SPECIAL


def test_the_simulators_listing_by_start_time_pages_and_a_page_past_the_end():
    sim, _ = sim_forum(tpp=2)
    for tid in range(1, 6):  # tid 5 started last; tid 1 has the latest reply
        sim.add_thread(
            tid, f"主题 {tid}", "导演", "正文正文正文。", NOW - timedelta(hours=10 - tid)
        )
    sim.add_post(1, "饺子", "最新的一条回复。", NOW - timedelta(minutes=1))

    by_start = listing(sim, "&filter=author&orderby=dateline")
    assert ([t.tid for t in by_start.threads], by_start.page, by_start.total_pages) == (
        [5, 4],
        1,
        3,
    )
    assert [t.tid for t in listing(sim).threads] == [1, 5]  # default: last post first
    third = listing(sim, "&filter=author&orderby=dateline&page=3")
    assert ([t.tid for t in third.threads], third.page, third.total_pages) == ([1], 3, 3)
    past = listing(sim, "&filter=author&orderby=dateline&page=9")  # Discuz shows page 1 then
    assert ([t.tid for t in past.threads], past.page) == ([5, 4], 1)
    mobile = mobile_listing(sim, "&page=2")
    assert (mobile.page, mobile.total_pages, [t.tid for t in mobile.threads]) == (2, 3, [4, 3])


def test_the_simulators_refusals_are_recognised():
    sim, _ = sim_forum(login_required=True)
    with pytest.raises(PageError) as caught:
        listing(sim)
    assert caught.value.kind is PageErrorKind.LOGIN_REQUIRED
    with pytest.raises(PageError) as caught:
        mobile_listing(sim)
    assert caught.value.kind is PageErrorKind.LOGIN_REQUIRED
    resp = sim.handle("GET", f"{sim.base_url}forum.php?mod=forumdisplay&fid=99")
    with pytest.raises(PageError) as caught:
        parse_forumdisplay(resp.body, tz=TZ)
    assert caught.value.kind is PageErrorKind.NOT_FOUND


def test_a_forum_the_account_may_not_read_is_a_permission_error():
    sim, _ = sim_forum()
    site, viewer = sim._site(), render.Viewer(uid=101, username="饺子", formhash="abcd1234")
    page = render.message_page(
        site, viewer, message="抱歉，您没有权限访问该版块", now_text="GMT+8, 2026-12-3 09:00"
    )
    with pytest.raises(PageError) as caught:
        parse_forumdisplay(page.encode(), tz=TZ)
    assert caught.value.kind is PageErrorKind.NO_PERMISSION


def test_an_empty_forum_is_an_empty_listing_not_an_error():
    sim, _ = sim_forum()
    page = listing(sim)
    assert (page.threads, page.page, page.total_pages, page.fid) == ((), 1, 1, 3)
    assert mobile_listing(sim).threads == ()


# --------------------------------------------------------------------------- waiting threads
#
# A section that holds new threads for a moderator (新主题需要审核): the thread is not listed;
# its author sees forum_forumdisplay.php:218-220 / forumdisplay.htm:180's banner and, behind its
# link, space_thread.php's list of their own waiting threads (filter=aduit).

MODERATED_SUBJECT = '[M135]第2天讨论帖 <待审> & "规则"'


def space(sim: ForumSim, query: str, *, as_user: str | None = "导演"):
    headers = {"Cookie": sim.login_cookie(as_user)} if as_user else {}
    uid = sim.users[as_user] if as_user else 0
    url = f"{sim.base_url}home.php?mod=space&uid={uid}&do=thread&view=me&type=thread{query}"
    resp = sim.handle("GET", url, headers)
    return parse_space_threads(resp.body, encoding=resp.charset)


def held(sim: ForumSim, tid: int) -> None:
    """Thread ``tid`` waits for a moderator (displayorder -2), as post_newthread.php keeps it."""
    with sim._lock:
        thread = sim._threads.pop(tid)
        thread.displayorder = -2
        sim._pending_threads[tid] = thread


def test_a_thread_waiting_for_a_moderator_shows_its_author_a_banner_and_the_waiting_list():
    sim, _ = sim_forum(moderate_threads=True)
    sim.add_thread(1, "[M135]第1天讨论帖", "导演", "第1天讨论帖正文。", NOW - timedelta(days=1))
    sim.add_thread(2, MODERATED_SUBJECT, "导演", "正文正文。", NOW - timedelta(minutes=2))
    sim.add_thread(3, "[M135]第2天投票帖", "导演", "正文正文。", NOW - timedelta(minutes=1))
    held(sim, 2)
    held(sim, 3)
    waiting = sim.pending_threads()
    assert len(waiting) == 2

    author = listing(sim, as_user="导演")
    assert [t.tid for t in author.threads] == [1]  # the waiting threads are not listed
    assert author.waiting == 2
    assert listing(sim, as_user="饺子").waiting == 0  # another member: no banner
    assert listing(sim).waiting == 0  # a guest: no banner

    mine = space(sim, "&filter=aduit&fid=3")
    assert mine.threads == (
        SpaceThread(waiting[1], "[M135]第2天投票帖", 3),  # newest started first
        SpaceThread(waiting[0], MODERATED_SUBJECT, 3),  # unescaped
    )
    assert (mine.has_next, mine.member_uid) == (False, 100)
    assert space(sim, "&filter=aduit&fid=4").threads == ()  # another forum's
    assert space(sim, "&filter=aduit", as_user="饺子").threads == ()
    sim.approve_thread(waiting[0])
    assert listing(sim, as_user="导演").waiting == 1
    assert [t.tid for t in space(sim, "&filter=aduit").threads] == [waiting[1]]
    assert {t.tid for t in space(sim, "&filter=").threads} == {1, *waiting}


def test_the_waiting_list_pages_by_twenty_and_a_refusal_is_an_error():
    sim, _ = sim_forum(moderate_threads=True)
    for n in range(21):
        sim.add_thread(n + 1, f"主题 {n + 1}", "导演", "正文正文。", NOW - timedelta(hours=n))
        held(sim, n + 1)
    first = space(sim, "&filter=aduit")
    assert [t.tid for t in first.threads] == list(range(1, 21)) and first.has_next
    second = space(sim, "&filter=aduit&page=2")
    assert [t.tid for t in second.threads] == [21] and not second.has_next
    with pytest.raises(PageError) as caught:
        space(sim, "&filter=aduit", as_user=None)
    assert caught.value.kind is PageErrorKind.LOGIN_REQUIRED
    closed, _ = sim_forum(space_closed=True)
    with pytest.raises(PageError, match="家园功能尚未开启"):
        space(closed, "&filter=aduit")


def test_a_listing_is_not_a_waiting_list(fixtures_dir):
    body = (fixtures_dir / "desktop" / "section-list-member.html").read_bytes()
    with pytest.raises(PageError, match="我的帖子"):
        parse_space_threads(body)
