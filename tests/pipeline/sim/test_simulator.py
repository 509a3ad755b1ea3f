"""The local Discuz simulator behaves like the real X3.5 where our crawler and poster look.

Every expectation here is something a director (or the crawler on their behalf) would see on a
real forum: floors, page clamping, relative times with exact titles, login, formhash, the reply
and flood-control answers, and the failure pages.
"""

from __future__ import annotations

import json
import re
import tomllib
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from selectolax.lexbor import LexborHTMLParser

from pipeline.sim.render import dgmdate_u
from pipeline.sim.simulator import ForumSim, SimClock, SimServer, script_now

TZ8 = timezone(timedelta(hours=8))
BASE = "http://127.0.0.1:8080/"
USERS = {"导演A": 2, "饺子": 3, "包子": 4, "馄饨": 5, "面条": 6, "admin": 1}
REPO = Path(__file__).resolve().parents[3]
DEMO_GAME = REPO / "config" / "games" / "demo.toml"
DEMO_POSTS = REPO / "config" / "games" / "demo_posts.toml"


def at(h: int, m: int, s: int = 0, day: int = 29) -> datetime:
    return datetime(2026, 11, day, h, m, s, tzinfo=TZ8)


def make_sim(replies: int = 25, **kw: object) -> tuple[ForumSim, SimClock]:
    """Thread 4 by 导演A with ``replies`` replies from 饺子/包子/馄饨 in turn, one a second."""
    clock = SimClock(at(21, 7, 54))
    sim = ForumSim(users=USERS, clock=clock, admins={"admin"}, **kw)  # type: ignore[arg-type]
    sim.add_thread(4, "[测试局]第二天投票帖", "导演A", "【第二天投票帖】请投票。", at(21, 4, 30))
    authors = ["饺子", "包子", "馄饨"]
    for i in range(replies):
        sim.add_post(4, authors[i % 3], f"第{i + 1}条回复：投票对象：面条", at(21, 4, 31 + i))
    return sim, clock


def page(sim: ForumSim, query: str, cookie: str | None = None) -> LexborHTMLParser:
    resp = sim.handle("GET", BASE + "forum.php?" + query, {"Cookie": cookie} if cookie else {})
    assert resp.status == 200, resp.status
    return LexborHTMLParser(resp.text)


def floors(tree: LexborHTMLParser) -> list[str]:
    return [n.text(strip=True) for n in tree.css("a[id^=postnum]")]


def pids(tree: LexborHTMLParser) -> list[int]:
    return [int(n.attributes["id"][3:]) for n in tree.css("table[id^=pid]")]


def mobile(sim: ForumSim, query: str, cookie: str | None = None) -> dict:
    resp = sim.handle(
        "GET",
        BASE + "api/mobile/index.php?version=4&module=viewthread&" + query,
        {"Cookie": cookie} if cookie else {},
    )
    assert resp.status == 200
    assert resp.body.isascii()  # the API escapes every non-ASCII character
    return json.loads(resp.body)


# --------------------------------------------------------------------------- pagination


def test_pages_floor_names_and_page_count():
    sim, _ = make_sim()
    p1 = page(sim, "mod=viewthread&tid=4&page=1")
    assert floors(p1) == ["楼主", "沙发", "板凳", "地板"] + [f"{n}#" for n in range(5, 11)]
    assert p1.css_first("div.pg strong").text() == "1"
    assert p1.css_first('span[title^="共"]').attributes["title"] == "共 3 页"
    assert p1.css_first("span#thread_subject").text() == "[测试局]第二天投票帖"
    p3 = page(sim, "mod=viewthread&tid=4&page=3")
    assert floors(p3) == [f"{n}#" for n in range(21, 27)]
    assert p3.css_first("div.pg a.nxt") is None  # no 下一页 on the last page


def test_page_past_the_end_is_clamped_to_the_last_page():
    """docs/discuz.md §1.8: forum_viewthread.php l.476 clamps; a crawler must not loop forever."""
    sim, _ = make_sim()
    last = page(sim, "mod=viewthread&tid=4&page=3")
    beyond = page(sim, "mod=viewthread&tid=4&page=99")
    assert beyond.css_first("div.pg strong").text() == "3"
    assert pids(beyond) == pids(last)


def test_single_page_thread_has_no_pager():
    sim, _ = make_sim(replies=4)
    tree = page(sim, "mod=viewthread&tid=4")
    assert tree.css_first("div.pg") is None
    assert len(pids(tree)) == 5


def test_mobile_api_honours_ppp_and_reports_replies():
    sim, _ = make_sim()
    data = mobile(sim, "tid=4&page=1&ppp=30")
    assert len(data["Variables"]["postlist"]) == 26
    assert data["Variables"]["ppp"] == "30"
    assert data["Variables"]["thread"]["replies"] == "25"
    clamped = mobile(sim, "tid=4&page=9&ppp=10")
    assert [p["position"] for p in clamped["Variables"]["postlist"]] == [
        str(n) for n in range(21, 27)
    ]
    first = data["Variables"]["postlist"][0]
    assert all(isinstance(v, str) for v in first.values())  # every scalar is a string
    assert first["first"] == "1" and first["position"] == "1"


def test_ordertype_2_is_ascending_and_1_is_descending():
    sim, _ = make_sim()
    asc = page(sim, "mod=viewthread&tid=4&page=1&ordertype=2")
    assert pids(asc) == pids(page(sim, "mod=viewthread&tid=4&page=1"))
    desc = page(sim, "mod=viewthread&tid=4&page=1&ordertype=1")
    assert pids(desc)[0] == 1  # the opening post stays on top
    assert pids(desc)[1] == 26  # then the newest reply


# --------------------------------------------------------------------------- authorid


def test_only_this_author_numbers_floors_within_the_view():
    """docs/discuz.md §1.4: with &authorid the number is a counter inside the filtered view."""
    sim, _ = make_sim()
    tree = page(sim, "mod=viewthread&tid=4&page=1&authorid=4")  # 包子
    assert {a.attributes["href"] for a in tree.css("div.favatar .authi a.xw1")} == {
        "home.php?mod=space&uid=4"
    }
    assert floors(tree) == ["楼主", "沙发", "板凳", "地板"] + [f"{n}#" for n in range(5, 9)]
    assert tree.css_first("div.pg") is None  # 8 posts fit on one page
    assert "显示全部楼层" in tree.html
    data = mobile(sim, "tid=4&authorid=4")
    posts = data["Variables"]["postlist"]
    assert [p["number"] for p in posts] == [str(n) for n in range(1, 9)]
    assert posts[0]["position"] == "3"  # the global floor stays available
    assert data["Variables"]["thread"]["replies"] == "7"


# --------------------------------------------------------------------------- delete / block


def test_floors_after_a_delete_redirect_once_then_renumber():
    """Fixtures README "Findings": after a delete the first view 302s to itself, then floors are
    counted by order (pid at position 15 shows 14#); the mobile API keeps the DB position."""
    sim, clock = make_sim()
    sim.delete_post(14, at=at(21, 6))  # position 14
    url = BASE + "forum.php?mod=viewthread&tid=4&page=2"
    first = sim.handle("GET", url)
    assert first.status == 302
    assert first.header("Location") == url
    tree = page(sim, "mod=viewthread&tid=4&page=2")
    assert 14 not in pids(tree)
    shown = dict(zip(pids(tree), floors(tree), strict=True))
    assert shown[15] == "14#"
    assert "无效楼层" not in tree.html
    data = mobile(sim, "tid=4&page=2")
    post15 = next(p for p in data["Variables"]["postlist"] if p["pid"] == "15")
    assert (post15["position"], post15["number"]) == ("15", "14")
    assert data["Variables"]["thread"]["replies"] == "24"
    assert data["Variables"]["thread"]["maxposition"] == "26"
    # Before the delete happened, the forum still showed the post.
    clock.set(at(21, 5, 50))
    assert 14 in pids(page(sim, "mod=viewthread&tid=4&page=2"))


def test_delete_without_renumbering_leaves_a_placeholder():
    sim, _ = make_sim()
    sim.delete_post(14, renumber=False)
    tree = page(sim, "mod=viewthread&tid=4&page=2")
    node = tree.css_first("table#pid14")
    assert "plhin" not in (node.attributes.get("class") or "")
    assert "无效楼层，该帖已经被删除" in node.text()
    assert floors(tree)[:4] == ["11#", "12#", "13#", "15#"]


def test_blocked_post_keeps_its_floor_and_hides_its_text():
    sim, _ = make_sim()
    sim.block_post(14)
    tree = page(sim, "mod=viewthread&tid=4&page=2")
    node = tree.css_first("table#pid14")
    assert node.css_first("div.locked").text() == "提示: 该帖被管理员或版主屏蔽"
    assert node.css_first("td.t_f") is None
    assert "第13条回复" not in node.html
    assert floors(tree)[3] == "14#"
    post = next(p for p in mobile(sim, "tid=4&page=2")["Variables"]["postlist"] if p["pid"] == "14")
    assert post["status"] == "1"
    assert post["message"] == "提示: <em>该帖被管理员或版主屏蔽</em>"


# --------------------------------------------------------------------------- time


@pytest.mark.parametrize(
    ("posted", "expected"),
    [
        (at(21, 4, 43), '<span title="2026-11-29 21:04:43">3&nbsp;分钟前</span>'),
        (at(21, 7, 54), '<span title="2026-11-29 21:07:54">刚刚</span>'),
        (at(21, 7, 40), '<span title="2026-11-29 21:07:40">14&nbsp;秒前</span>'),
        (at(20, 30), '<span title="2026-11-29 20:30:00">半小时前</span>'),
        (at(9, 5), '<span title="2026-11-29 09:05:00">12&nbsp;小时前</span>'),  # 12 h 2 min
        (at(23, 59, day=28), '<span title="2026-11-28 23:59:00">昨天&nbsp;23:59</span>'),
        (at(8, 1, day=27), '<span title="2026-11-27 08:01:00">前天&nbsp;08:01</span>'),
        (at(8, 1, day=25), '<span title="2026-11-25 08:01:00">4&nbsp;天前</span>'),
        (at(8, 1, day=20), "2026-11-20 08:01:00"),  # older than a week: plain, no title
        (at(22, 0), "2026-11-29 22:00:00"),  # clock skew: a future time is plain too
    ],
)
def test_post_times_like_dgmdate_u(posted: datetime, expected: str):
    now = int(at(21, 7, 54).timestamp())
    assert dgmdate_u(int(posted.timestamp()), now, TZ8) == expected


def test_post_time_title_on_page_and_unix_seconds_in_api():
    sim, clock = make_sim(replies=1)
    clock.set(at(21, 4, 31) + timedelta(days=1, hours=1))
    tree = page(sim, "mod=viewthread&tid=4")
    span = tree.css_first("em#authorposton2 span")
    assert span.attributes["title"] == "2026-11-29 21:04:31"
    assert span.text() == "昨天\xa021:04"
    post = mobile(sim, "tid=4")["Variables"]["postlist"][1]
    assert post["dbdateline"] == str(int(at(21, 4, 31).timestamp()))
    assert post["dateline"] == "昨天&nbsp;21:04"  # no <span> under IN_MOBILE


def test_posts_exist_only_from_their_time_on():
    sim, clock = make_sim(replies=3)
    clock.set(at(21, 4, 32))
    assert pids(page(sim, "mod=viewthread&tid=4")) == [1, 2, 3]
    clock.set(at(21, 4, 29))
    assert sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4").status == 404


# --------------------------------------------------------------------------- message markup


def test_quote_reply_builds_the_real_quote_and_links_the_pid():
    """docs/discuz.md §3.2: the 回复 button stores ``[quote]…findpost&pid=P&ptid=T…[/quote]``,
    two newlines, then the text."""
    sim, _ = make_sim(replies=2)
    pid = sim.add_post(4, "饺子", "改票对象：馄饨", at(21, 6), quote_pid=2)
    assert sim.stored_message(pid) == (
        "[quote][size=2][url=forum.php?mod=redirect&goto=findpost&pid=2&ptid=4]"
        "[color=#999999]饺子 发表于 2026-11-29 21:04[/color][/url][/size]\n"
        "第1条回复：投票对象：面条[/quote]\n\n改票对象：馄饨"
    )
    tree = page(sim, "mod=viewthread&tid=4")
    cell = tree.css_first(f"td#postmessage_{pid}")
    link = cell.css_first("div.quote blockquote a")
    assert link.attributes["href"] == f"{BASE}forum.php?mod=redirect&goto=findpost&pid=2&ptid=4"
    mobile_msg = mobile(sim, "tid=4")["Variables"]["postlist"][-1]["message"]
    assert mobile_msg.startswith('<div class="reply_wrap"><a href="')


def test_edit_more_than_a_minute_later_adds_the_edit_note():
    sim, _ = make_sim(replies=2)
    sim.edit_post(2, "投票对象：馄饨", at(21, 6, 10))
    assert sim.stored_message(2).startswith(
        "[i=s] 本帖最后由 饺子 于 2026-11-29 21:06 编辑 [/i]\n\n"
    )
    note = page(sim, "mod=viewthread&tid=4").css_first("td#postmessage_2 i.pstatus")
    assert note.text() == " 本帖最后由 饺子 于 2026-11-29 21:06 编辑 "
    assert "本帖最后由" not in mobile(sim, "tid=4")["Variables"]["postlist"][1]["message"]
    sim.edit_post(3, "投票对象：饺子", at(21, 5, 1))  # within 60 s: no note
    assert sim.stored_message(3) == "投票对象：饺子"


def test_colour_size_and_white_text_render_as_font_tags():
    sim, _ = make_sim(replies=0)
    sim.add_post(4, "饺子", "[color=#FF0000]投票对象：包子[/color]", at(21, 5))
    sim.add_post(4, "包子", "[size=6]投票对象：饺子[/size]", at(21, 5, 1))
    sim.add_post(4, "馄饨", "好好想想。\n[color=white]投票对象：面条[/color]", at(21, 5, 2))
    tree = page(sim, "mod=viewthread&tid=4")
    assert tree.css_first("td#postmessage_2").html.endswith(
        '\n<font color="#FF0000">投票对象：包子</font></td>'
    )
    assert tree.css_first("td#postmessage_3 font").attributes["size"] == "6"
    assert tree.css_first("td#postmessage_4 font").attributes["color"] == "white"
    posts = mobile(sim, "tid=4")["Variables"]["postlist"]
    assert posts[2]["message"] == "投票对象：饺子"  # v4 drops [size]


def test_hide_is_locked_for_guests_and_shown_to_repliers():
    sim, _ = make_sim(replies=1)
    sim.add_post(4, "admin", "【管理员】[hide]隐藏内容。[/hide]\n请勿刷屏。", at(21, 6))
    guest = page(sim, "mod=viewthread&tid=4").css_first("td#postmessage_3")
    assert guest.css_first("div.locked").text().startswith("游客，如果您要查看本帖隐藏内容请")
    assert "隐藏内容。" not in guest.text()
    member = page(sim, "mod=viewthread&tid=4", cookie=sim.login_cookie("饺子"))
    shown = member.css_first("td#postmessage_3 div.showhide")
    assert shown.text() == "本帖隐藏的内容隐藏内容。"


# --------------------------------------------------------------------------- login and posting


def _formhash(text: str) -> str:
    match = re.search(r'name="formhash" value="([0-9a-f]{8})"', text)
    assert match, "no formhash on the page"
    return match.group(1)


def _client(sim: ForumSim, **kw: object) -> httpx.Client:
    return httpx.Client(transport=sim.transport(), base_url=BASE, **kw)  # type: ignore[arg-type]


LOGIN = "member.php?mod=logging&action=login&loginsubmit=yes&loginhash=Lab12&inajax=1"
REPLY = (
    "forum.php?mod=post&action=reply&tid=4&replysubmit=yes&infloat=yes&handlekey=fastpost&inajax=1"
)


def test_login_formhash_reply_and_flood_control():
    sim, clock = make_sim(replies=2)
    with _client(sim) as client:
        form = client.get("member.php?mod=logging&action=login")
        guest_hash = _formhash(form.text)
        assert f"{sim.cookiepre}saltkey" in client.cookies
        wrong = client.post(
            LOGIN, data={"formhash": guest_hash, "username": "饺子", "password": "x"}
        )
        assert "登录失败，您还可以尝试 4 次" in wrong.text
        assert f"{sim.cookiepre}auth" not in client.cookies
        ok = client.post(
            LOGIN, data={"formhash": guest_hash, "username": "饺子", "password": "Test1234"}
        )
        assert "succeedhandle_" in ok.text and "欢迎您回来，新手上路 饺子" in ok.text
        assert f"{sim.cookiepre}auth" in client.cookies
        thread = client.get("forum.php?mod=viewthread&tid=4")
        assert "discuz_uid = '3'" in thread.text
        member_hash = _formhash(thread.text)
        assert member_hash != guest_hash  # formhash changes with the login

        reply = client.post(
            REPLY, data={"formhash": member_hash, "message": "投票对象：包子 理由充分"}
        )
        assert reply.headers["content-type"] == "text/xml; charset=utf-8"
        pid = re.search(r"'pid':'(\d+)'", reply.text)
        assert pid and "回复发布成功" in reply.text
        assert sim.stored_message(int(pid.group(1))) == "投票对象：包子 理由充分"

        flood = client.post(REPLY, data={"formhash": member_hash, "message": "紧接着再发一条回复"})
        assert (
            "errorhandle_fastpost('抱歉，您两次发表间隔少于 15 秒，请稍候再发表', "
            "{'floodctrl':'15'})" in flood.text
        )
        clock.advance(16)
        again = client.post(REPLY, data={"formhash": member_hash, "message": "过了十六秒再发一条"})
        assert "succeedhandle_fastpost" in again.text


def test_reply_refusals_bad_formhash_too_short_hide_and_guest():
    sim, _ = make_sim(replies=1)
    with _client(sim, headers={"Cookie": sim.login_cookie("包子")}) as client:
        good = _formhash(client.get("forum.php?mod=viewthread&tid=4").text)
        bad = client.post(
            REPLY, data={"formhash": "deadbeef", "message": "formhash 错误的提交内容"}
        )
        assert bad.status_code == 503
        assert bad.headers["retry-after"] == "3600"
        assert "您当前的访问请求当中含有非法字符，已经被系统拒绝" in bad.text
        short = client.post(REPLY, data={"formhash": good, "message": "短"})
        assert "抱歉，您的帖子小于 10 个字符的限制" in short.text
        hide = client.post(REPLY, data={"formhash": good, "message": "[hide]只给回复的人看[/hide]"})
        assert "抱歉，您没有权限使用 [hide] 代码" in hide.text
    with _client(sim) as guest:
        token = _formhash(guest.get("forum.php?mod=viewthread&tid=4").text)
        refused = guest.post(REPLY, data={"formhash": token, "message": "游客想要回复这个帖子"})
        assert "抱歉，您尚未登录，没有权限在该版块回帖" in refused.text
    assert len(sim.thread_pids(4)) == 2  # nothing was posted


def test_quote_reply_through_the_form_and_non_ajax_redirect():
    sim, _ = make_sim(replies=2)
    with _client(sim, headers={"Cookie": sim.login_cookie("馄饨")}) as client:
        form = LexborHTMLParser(client.get("forum.php?mod=post&action=reply&tid=4&repquote=2").text)
        trim = form.css_first("input[name=noticetrimstr]").attributes["value"]
        assert trim.startswith(
            "[quote][size=2][url=forum.php?mod=redirect&goto=findpost&pid=2&ptid=4]"
        )
        token = form.css_first("input[name=formhash]").attributes["value"]
        resp = client.post(
            "forum.php?mod=post&action=reply&tid=4&extra=&replysubmit=yes",
            data={"formhash": token, "message": "改票对象：包子", "noticetrimstr": trim},
        )
        assert resp.status_code == 301
        location = resp.headers["location"]
        assert re.fullmatch(r"forum\.php\?mod=viewthread&tid=4&pid=4&page=1&extra=#pid4", location)
    assert sim.stored_message(4) == trim + "\n\n改票对象：包子"


def test_login_cookie_works_like_a_browser_session_and_strike_after_five_failures():
    sim, _ = make_sim(replies=0)
    tree = page(sim, "mod=viewthread&tid=4", cookie=sim.login_cookie("面条"))
    assert tree.css_first("strong.vwmy a").text() == "面条"
    forged = f"{sim.cookiepre}saltkey=AAAAAAAA; {sim.cookiepre}auth={quote('x' * 20)}"
    assert (
        "discuz_uid = '0'"
        in sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4", {"Cookie": forged}).text
    )
    with _client(sim) as client:
        token = _formhash(client.get("member.php?mod=logging&action=login").text)
        for _ in range(5):
            last = client.post(
                LOGIN, data={"formhash": token, "username": "面条", "password": "no"}
            )
        assert "密码错误次数过多，请 15 分钟后重新登录" in last.text


def test_login_required_forum_shows_the_real_refusal_to_guests():
    sim, _ = make_sim(replies=1, login_required=True)
    guest = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4")
    tree = LexborHTMLParser(guest.text)
    assert guest.status == 200
    assert (
        tree.css_first("#messagetext.alert_info p").text() == "抱歉，您尚未登录，没有权限访问该版块"
    )
    assert "ajaxget('member.php?mod=logging&action=login" in guest.text
    data = mobile(sim, "tid=4")
    assert data["Message"]["messageval"] == "viewperm_login_nopermission//1"
    assert data["Variables"]["postlist"] == []
    member = page(sim, "mod=viewthread&tid=4", cookie=sim.login_cookie("饺子"))
    assert pids(member) == [1, 2]


def test_missing_thread_is_the_real_404_page():
    sim, _ = make_sim(replies=0)
    resp = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=9999")
    assert resp.status == 404
    tree = LexborHTMLParser(resp.text)
    assert (
        tree.css_first("#messagetext.alert_error p").text()
        == "抱歉，指定的主题不存在或已被删除或正在被审核"
    )
    data = mobile(sim, "tid=9999")
    assert data["Message"]["messageval"] == "thread_nonexistence"


def test_findpost_redirects_to_the_page_holding_the_pid():
    sim, _ = make_sim()
    resp = sim.handle("GET", BASE + "forum.php?mod=redirect&goto=findpost&ptid=4&pid=15")
    assert resp.status == 301
    assert resp.header("Location") == "forum.php?mod=viewthread&tid=4&page=2#pid15"


def test_mobile_check_probe():
    sim, _ = make_sim(replies=0)
    data = json.loads(sim.handle("GET", BASE + "api/mobile/index.php?version=4&module=check").body)
    assert data["discuzversion"] == "X3.2"
    assert data["truediscuzversion"] == "X3.5"
    assert data["charset"] == "utf-8"
    assert data["version"] == "4"


def test_quotes_in_a_get_url_are_request_tainting():
    sim, _ = make_sim(replies=0)
    resp = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4&extra=%27%29")
    assert resp.status == 503


# --------------------------------------------------------------------------- faults


def test_faults_500_503_429_apply_to_matching_requests_only_count_times():
    sim, _ = make_sim(replies=0)
    sim.faults.add("500", match="tid=4", count=2)
    sim.faults.add("503", match="module=viewthread")
    sim.faults.add("429", match="page=7", retry_after=9)
    with _client(sim) as client:
        assert client.get("forum.php?mod=viewthread&tid=9").status_code == 404  # no match
        assert client.get("forum.php?mod=viewthread&tid=4").status_code == 500
        assert client.get("forum.php?mod=viewthread&tid=4").status_code == 500
        assert client.get("forum.php?mod=viewthread&tid=4").status_code == 200  # used up
        api = client.get("api/mobile/index.php?version=4&module=viewthread&tid=4")
        assert api.status_code == 503 and "Discuz! System Error" in api.text
        limited = client.get("forum.php?mod=viewthread&tid=4&page=7")
        assert limited.status_code == 429 and limited.headers["retry-after"] == "9"
    assert sim.faults.pending == []


def test_fault_slow_times_out_only_beyond_the_read_timeout():
    sim, _ = make_sim(replies=0)
    sim.faults.add("slow", seconds=30)
    sim.faults.add("slow", seconds=0.5)
    with _client(sim, timeout=5.0) as client:
        with pytest.raises(httpx.ReadTimeout):
            client.get("forum.php?mod=viewthread&tid=4")
        assert client.get("forum.php?mod=viewthread&tid=4").status_code == 200


def test_fault_reset_and_refused():
    sim, _ = make_sim(replies=0)
    sim.faults.add("reset")
    sim.faults.add("reset", connect=True)
    with _client(sim) as client:
        with pytest.raises(httpx.ReadError):
            client.get("forum.php?mod=viewthread&tid=4")
        with pytest.raises(httpx.ConnectError):
            client.get("forum.php?mod=viewthread&tid=4")
        assert client.get("forum.php?mod=viewthread&tid=4").status_code == 200


def test_fault_truncate_breaks_the_body():
    sim, _ = make_sim(replies=0)
    full = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4").body
    sim.faults.add("truncate")
    sim.faults.add("truncate", clean=True)
    with _client(sim) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            client.get("forum.php?mod=viewthread&tid=4")
        short = client.get("forum.php?mod=viewthread&tid=4")
        assert short.status_code == 200
        assert len(short.content) == len(full) // 2
        assert "</html>" not in short.text


def test_fault_login_required_flood_and_maintenance_pages():
    sim, _ = make_sim(replies=1)
    cookie = sim.login_cookie("饺子")
    sim.faults.add("login_required", count=2)
    sim.faults.add("flood")
    sim.faults.add("maintenance", count=2)
    with _client(sim, headers={"Cookie": cookie}) as client:
        expired = client.get("forum.php?mod=viewthread&tid=4")
        assert "抱歉，您尚未登录，没有权限访问该版块" in expired.text
        api = client.get("api/mobile/index.php?version=4&module=viewthread&tid=4").json()
        assert api["Message"]["messageval"] == "viewperm_login_nopermission//1"
        too_fast = client.get("forum.php?mod=viewthread&tid=4")
        assert too_fast.status_code == 200 and "您浏览的太快了" in too_fast.text
        closed = client.get("forum.php?mod=viewthread&tid=4")
        assert "抱歉，本站点暂时关闭" in closed.text
        assert client.get("api/mobile/index.php?version=4&module=viewthread&tid=4").json() == {
            "error": "board_closed"
        }
        assert "discuz_uid = '3'" in client.get("forum.php?mod=viewthread&tid=4").text


def test_faults_of_a_forum_that_is_not_usable():
    sim, _ = make_sim(replies=1)
    cookie = sim.login_cookie("饺子")
    sim.faults.add("garbage")
    sim.faults.add("redirect_loop", count=2)
    sim.faults.add("echo_cookie")
    url = "forum.php?mod=viewthread&tid=4"
    with _client(sim, headers={"Cookie": cookie}, follow_redirects=False) as client:
        noise = client.get(url)
        assert noise.status_code == 200 and b"<html" not in noise.content
        assert noise.content.decode("utf-8", errors="replace").count("\ufffd") > 1000
        for _ in range(2):
            loop = client.get(url)
            assert loop.status_code == 302 and loop.headers["location"] == BASE + url
        echoed = client.get(url)
        salt = cookie.split(";")[0].split("=", 1)[1]
        assert "调试信息：Cookie:" in echoed.text and salt in echoed.text
        assert 'id="postlist"' in client.get(url).text  # all used up


def test_unknown_fault_kind_is_refused():
    sim, _ = make_sim(replies=0)
    with pytest.raises(ValueError, match="未知的故障类型"):
        sim.faults.add("timeout")


# ------------------------------------------------------------------ charset, log, determinism


def test_gbk_forum_serves_gbk_and_reads_gbk_forms():
    sim, _ = make_sim(replies=1, charset="gbk")
    sim.add_post(4, "面条", "狼来了🐺投票对象：饺子", at(21, 6))
    resp = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4")
    assert resp.header("Content-Type") == "text/html; charset=gbk"
    text = resp.body.decode("gbk")  # strict: every byte is valid GBK
    assert '<meta charset="gbk" />' in text and "charset = 'gbk'" in text
    assert "狼来了&#128058;投票对象：饺子" in text  # outside GBK -> numeric entity
    data = json.loads(
        sim.handle("GET", BASE + "api/mobile/index.php?version=4&module=viewthread&tid=4").body
    )
    assert data["Charset"] == "GBK"
    cookie = sim.login_cookie("包子")
    token = _formhash(
        sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4", {"Cookie": cookie}).text
    )
    body = f"formhash={token}&message=" + quote("投票对象：馄饨（GBK）".encode("gbk"))
    reply = sim.handle(
        "POST",
        BASE + REPLY,
        {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
        body.encode("ascii"),
    )
    assert reply.header("Content-Type") == "text/xml; charset=gbk"
    assert reply.body.startswith(b'<?xml version="1.0" encoding="gbk"?>')
    pid = int(re.search(r"'pid':'(\d+)'", reply.body.decode("gbk")).group(1))
    assert sim.stored_message(pid) == "投票对象：馄饨（GBK）"


def test_request_log_records_method_path_and_query():
    sim, _ = make_sim(replies=0)
    with _client(sim) as client:
        client.get("forum.php?mod=viewthread&tid=4&page=2")
        client.get("api/mobile/index.php?version=4&module=viewthread&tid=4&ppp=30")
        client.post(LOGIN, data={"username": "饺子", "password": "no"})
    assert [(r.method, r.path) for r in sim.requests] == [
        ("GET", "/forum.php"),
        ("GET", "/api/mobile/index.php"),
        ("POST", "/member.php"),
    ]
    assert sim.requests[0].query == {"mod": "viewthread", "tid": "4", "page": "2"}
    assert sim.requests[1].query["ppp"] == "30"
    assert sim.requests[2].form["username"] == "饺子"
    assert sum(1 for r in sim.requests if r.query.get("mod") == "viewthread") == 1


def test_same_seed_same_bytes():
    first, _ = make_sim(seed=7)
    second, _ = make_sim(seed=7)
    other, _ = make_sim(seed=8)
    url = BASE + "forum.php?mod=viewthread&tid=4&page=2"
    assert first.handle("GET", url).body == second.handle("GET", url).body
    assert first.login_cookie("饺子") == second.login_cookie("饺子")
    assert first.cookiepre != other.cookiepre


# --------------------------------------------------------------------------- the demo script


@pytest.fixture(scope="module")
def demo() -> tuple[ForumSim, SimClock]:
    now = script_now(DEMO_POSTS)
    assert now is not None
    clock = SimClock(now)
    return ForumSim.from_script(DEMO_GAME, DEMO_POSTS, clock), clock


def test_demo_script_builds_every_thread_of_the_game_file(demo):
    sim, _ = demo
    game = tomllib.loads(DEMO_GAME.read_text(encoding="utf-8"))
    assert {p["name"]: p["uid"] for p in game["players"]}.items() <= sim.users.items()
    assert sim.users["导演"] == 100
    for day in game["days"]:
        for role in ("discussion", "vote", "progress"):
            first = sim.thread_pids(day[role])[0]
            assert "【第" in sim.stored_message(first)


def test_demo_change_vote_replies_to_the_voters_own_floor(demo):
    """rules/m135.txt:209 "改票须回复原投票楼层" — 汤圆's 改票 quotes 汤圆's own vote pid."""
    sim, _ = demo
    data = mobile(sim, "tid=2012&ppp=100")
    posts = data["Variables"]["postlist"]
    own_vote = next(p for p in posts if p["author"] == "汤圆" and "投票对象：包子" in p["message"])
    change = next(p for p in posts if p["author"] == "汤圆" and "改票对象：春卷" in p["message"])
    assert f"pid={own_vote['pid']}&amp;amp;ptid=2012" in change["message"]


def test_demo_edited_vote_late_vote_and_time_travel(demo):
    sim, clock = demo
    data = mobile(sim, "tid=2012&ppp=100")
    snow = next(p for p in data["Variables"]["postlist"] if p["author"] == "Snow_风")
    assert "[i=s] 本帖最后由 Snow_风 于 2026-12-2 12:40 编辑 [/i]" in sim.stored_message(
        int(snow["pid"])
    )
    late = [p for p in data["Variables"]["postlist"] if p["author"] == "麻花"]
    assert len(late) == 1 and int(late[0]["dbdateline"]) > int(
        datetime(2026, 12, 2, 22, tzinfo=TZ8).timestamp()
    )
    saved = clock.now
    try:
        clock.set(datetime(2026, 12, 2, 12, 30, tzinfo=TZ8))  # before the edit
        snow_then = next(
            p
            for p in mobile(sim, "tid=2012&ppp=100")["Variables"]["postlist"]
            if p["author"] == "Snow_风"
        )
        assert "投票对象：面条" in snow_then["message"]
    finally:
        clock.set(saved)


def test_demo_script_errors_name_the_post(tmp_path: Path):
    bad = tmp_path / "posts.toml"
    bad.write_text(
        '[[posts]]\nthread = "vote"\nday = 2\nauthor = "路人甲"\n'
        'at = 2026-12-02T10:00:00+08:00\ntext = "投票对象：饺子"\n',
        encoding="utf-8",
    )
    clock = SimClock(datetime(2026, 12, 3, tzinfo=TZ8))
    with pytest.raises(ValueError, match=r"posts\[0\]\.author：未知的论坛账号“路人甲”"):
        ForumSim.from_script(DEMO_GAME, bad, clock)
    bad.write_text('[[posts]]\nthread = "vote"\nday = 2\nauthr = "饺子"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"posts\[0\]：未知的键（拼写错误？）：authr"):
        ForumSim.from_script(DEMO_GAME, bad, clock)


# --------------------------------------------------------------------------- real server


def test_sim_server_end_to_end_with_faults():
    sim, _ = make_sim(replies=12)
    with SimServer(sim) as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        with httpx.Client(base_url=server.base_url, timeout=2.0) as client:
            tree = LexborHTMLParser(client.get("forum.php?mod=viewthread&tid=4&page=2").text)
            assert floors(tree) == ["11#", "12#", "13#"]
            assert (
                f'<base href="{server.base_url}" />'
                in client.get("forum.php?mod=viewthread&tid=4").text
            )
            api = client.get("api/mobile/index.php?version=4&module=viewthread&tid=4&ppp=5").json()
            assert len(api["Variables"]["postlist"]) == 5
            sim.faults.add("reset")
            with pytest.raises((httpx.ReadError, httpx.RemoteProtocolError)):
                client.get("forum.php?mod=viewthread&tid=4")
            sim.faults.add("truncate")
            with pytest.raises(httpx.RemoteProtocolError):
                client.get("forum.php?mod=viewthread&tid=4")
            sim.faults.add("slow", seconds=0.6)
            with pytest.raises(httpx.ReadTimeout):
                client.get("forum.php?mod=viewthread&tid=4", timeout=0.2)
            assert client.get("forum.php?mod=viewthread&tid=4").status_code == 200
    assert sim.base_url == BASE  # restored after the server stops
