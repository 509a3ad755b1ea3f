"""The desktop thread page parser (parsers.viewthread) against real Discuz! X3.5 pages.

Ground truth: tests/fixtures/discuz/manifest.json (what was posted, how the guest page shows it).
The vote thread (26 posts, 3 pages) and the discussion thread (42 written, one deleted so 41
shown on 5 pages, one blocked).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from parsers.records import EditNote, MarkKind, PageError, PageErrorKind, Post, PostState
from parsers.viewthread import SELECTORS, parse_viewthread
from tests import discuz_samples as samples
from tests.discuz_samples import served_at, shown_floor

TZ = ZoneInfo("Asia/Shanghai")
VOTE, DISCUSSION = samples.tid("vote"), samples.tid("discussion")
THREAD_PAGES = [
    *(
        f"{key}-page{n}-{who}.html"
        for key in ("vote", "discussion")
        for n in range(1, samples.pages(key) + 1)
        for who in ("anon", "member")
    ),
]


def tid_of(name: str) -> int:
    return VOTE if name.startswith("vote") else DISCUSSION


def parse(path: Path, tid: int | None = None, **kwargs: Any):
    tid = tid if tid is not None else tid_of(path.name)
    return parse_viewthread(path.read_bytes(), tid=tid, tz=TZ, now=served_at(path), **kwargs)


@pytest.fixture(scope="module")
def truth() -> dict[int, dict[str, Any]]:
    return {
        pid: post for pid, post in samples.by_pid().items() if post["tid"] in (VOTE, DISCUSSION)
    }


@pytest.fixture(scope="module")
def desktop(fixtures_dir: Path) -> Path:
    return fixtures_dir / "desktop"


def by_pid(page) -> dict[int, Post]:
    return {post.pid: post for post in page.posts}


def strip_bbcode(message: str) -> str:
    return re.sub(r"\[/?[a-z]+(?:=[^\]]*)?\]", "", message)


def norm(text: str) -> str:
    """One line per line break, spaces collapsed, blank lines merged and trimmed."""
    return re.sub(
        r"\n{3,}", "\n\n", "\n".join(" ".join(line.split()) for line in text.split("\n"))
    ).strip("\n")


# --------------------------------------------------------------------------- every page vs truth


@pytest.mark.parametrize("name", THREAD_PAGES)
def test_every_post_matches_the_manifest(desktop: Path, truth, name: str) -> None:
    page = parse(desktop / name)
    number = int(re.search(r"-page(\d)-", name).group(1))  # type: ignore[union-attr]
    expected = {
        pid
        for pid, post in truth.items()
        if post["tid"] == page.tid and post["desktop_page"] == number
    }
    assert {post.pid for post in page.posts} == expected
    assert [post.pid for post in page.posts] == sorted(expected)  # ordered by pid
    for post in page.posts:
        real = truth[post.pid]
        assert (post.tid, post.author, post.uid) == (real["tid"], real["author"], real["uid"])
        assert post.floor == shown_floor(real), post.pid
        assert post.quoted_pids == ((real["replied_to_pid"],) if real.get("replied_to_pid") else ())
        assert (post.state is PostState.BLOCKED) == real["blocked"]
        assert post.source == "html"


@pytest.mark.parametrize("name", THREAD_PAGES)
def test_visible_text_is_what_the_author_sent(desktop: Path, truth, name: str) -> None:
    """Quotes Discuz prepends, edit notes and markup are not part of the text."""
    special = {"chat_with_smiley_and_image", "admin_hide_tag", "manual_quote_of_vote"}
    for post in parse(desktop / name).posts:
        real = truth[post.pid]
        if real["blocked"] or real["kind"] in special:
            continue
        sent = real.get("edited_message_sent") or real["sent_message"]
        assert post.text == norm(strip_bbcode(sent)), post.pid


@pytest.mark.parametrize("name", THREAD_PAGES)
def test_times_are_aware_and_equal_the_database_times(desktop: Path, truth, name: str) -> None:
    path = desktop / name
    page = parse(path)
    served = served_at(path)
    for post in page.posts:
        assert post.posted_at is not None and post.posted_at.tzinfo is not None
        assert int(post.posted_at.timestamp()) == truth[post.pid]["dateline"], post.pid
        assert post.posted_at <= served


def test_times_equal_the_mobile_api_unix_times(fixtures_dir: Path, desktop: Path, truth) -> None:
    datelines: dict[int, int] = {}
    for key in ("vote", "discussion"):
        for path in (fixtures_dir / "mobile").glob(f"{key}-api4-page*-anon.json"):
            for post in json.loads(path.read_text("utf-8"))["Variables"]["postlist"]:
                datelines[int(post["pid"])] = int(post["dbdateline"])
    seen = 0
    for name in THREAD_PAGES:
        for post in parse(desktop / name).posts:
            assert post.posted_at is not None
            assert int(post.posted_at.timestamp()) == datelines[post.pid]
            seen += 1
    shown = [p for p in truth.values() if not p["deleted"]]
    assert seen == 2 * len(shown) == 2 * (26 + 41)  # every post, by a guest and by a member


# --------------------------------------------------------------------------- pages


@pytest.mark.parametrize(
    ("name", "page"),
    [
        ("vote-page1-anon.html", 1),
        ("vote-page2-member.html", 2),
        ("vote-page3-anon.html", 3),
        ("discussion-page1-anon.html", 1),
        ("discussion-page2-anon.html", 2),  # one blocked, one gone: still 10 shown
        ("discussion-page5-member.html", 5),
    ],
)
def test_page_numbers(desktop: Path, name: str, page: int) -> None:
    parsed = parse(desktop / name)
    key = name.split("-")[0]
    assert (parsed.page, parsed.total_pages, len(parsed.posts)) == (
        page,
        samples.pages(key),
        len(samples.on_page(key, page)),
    )


def test_an_only_this_author_page_without_a_pager_is_one_page(desktop: Path) -> None:
    parsed = parse(desktop / "vote-only-tangyuan-anon.html")
    assert (parsed.page, parsed.total_pages) == (1, 1)
    assert len(parsed.posts) == len(samples.where("vote", author="汤圆")) == 3


def test_a_page_past_the_end_is_the_last_page(desktop: Path) -> None:
    """Discuz clamps page=4 of a 3-page thread to page 3 (docs/discuz.md §1.8)."""
    beyond = parse(desktop / "vote-page4-pastend-anon.html")
    last = parse(desktop / "vote-page3-anon.html")
    assert (beyond.page, beyond.total_pages) == (3, 3)
    assert beyond.posts == last.posts


def test_page_details(desktop: Path) -> None:
    guest = parse(desktop / "vote-page1-anon.html")
    assert guest.subject == samples.thread("vote")["subject"] == "[测试局]第二天投票帖"
    assert guest.formhash == "71c2b33e"
    assert guest.replies == len(samples.posts("vote")) - 1
    assert guest.extra == {"member_uid": "0"}
    login = parse(desktop / "discussion-page3-member.html")
    assert login.subject == samples.thread("discussion")["subject"]
    assert login.formhash == "4bbf1166"
    assert login.replies is None  # the 查看/回复 counters are on page 1 only
    assert login.extra == {"member_uid": str(samples.uid("饺子"))}  # logged in as 饺子


def test_only_this_author_pages_number_the_authors_posts(desktop: Path, truth) -> None:
    page = parse(desktop / "vote-only-tangyuan-anon.html")
    tangyuan = samples.where("vote", author="汤圆")
    assert [(p.pid, p.floor, p.author, p.uid) for p in page.posts] == [
        (real["pid"], n, "汤圆", samples.uid("汤圆")) for n, real in enumerate(tangyuan, 1)
    ]
    assert page.extra["author_filter"] == "1"
    page = parse(desktop / "discussion-only-jiaozi-anon.html")
    jiaozi = samples.where("discussion", author="饺子")
    assert [p["deleted"] for p in jiaozi].count(True) == 1
    shown = [p["pid"] for p in jiaozi if not p["deleted"]]  # the deleted one is not shown
    assert [p.pid for p in page.posts] == shown
    assert [p.floor for p in page.posts] == list(range(1, len(shown) + 1))
    assert {p.text for p in page.posts} == {norm(truth[p.pid]["sent_message"]) for p in page.posts}


#: where a GBK page says so: the captured copy's markup still says utf-8 and only its header
#: says gbk (the crawler passes the header's charset); a GBK forum with a stale meta says gbk
#: in its script only; a plain GBK forum says it in both
GBK_DECLARATIONS = {
    "header": (),
    "script": ((b"charset = 'utf-8'", b"charset = 'gbk'"),),
    "meta-and-script": (
        (b"charset = 'utf-8'", b"charset = 'gbk'"),
        (b'<meta charset="utf-8"', b'<meta charset="gbk"'),
    ),
}


@pytest.mark.parametrize("where", list(GBK_DECLARATIONS))
def test_gbk_forum_page_reads_the_same(desktop: Path, where: str) -> None:
    path = desktop / "gbk" / "vote-page1-anon-gbk.html"
    body = path.read_bytes()
    for old, new in GBK_DECLARATIONS[where]:
        assert old in body
        body = body.replace(old, new)
    head = path.with_name(path.name + ".head").read_text(encoding="utf-8")
    header = re.search(r"^Content-Type: text/html; charset=(\S+)", head, re.M)
    assert header and header.group(1) == "gbk"
    encoding = header.group(1) if where == "header" else None
    gbk = parse_viewthread(body, tid=VOTE, tz=TZ, now=served_at(path), encoding=encoding)
    utf8 = parse(desktop / "vote-page1-anon.html")
    strip = ("message_html",)
    assert [{k: getattr(p, k) for k in Post.__slots__ if k not in strip} for p in gbk.posts] == [
        {k: getattr(p, k) for k in Post.__slots__ if k not in strip} for p in utf8.posts
    ]
    assert (gbk.subject, gbk.formhash, gbk.total_pages) == (utf8.subject, utf8.formhash, 3)
    forced = parse_viewthread(body, tid=VOTE, tz=TZ, now=served_at(path), encoding="gbk")
    assert forced.posts == gbk.posts


def test_a_restricted_thread_read_by_a_member(fixtures_dir: Path) -> None:
    path = fixtures_dir / "misc" / "members-only-thread-member.html"
    page = parse(path, tid=samples.tid("restricted"))
    assert [(p.floor, p.author, p.text) for p in page.posts] == [
        (real["floor"], real["author"], real["sent_message"])
        for real in samples.posts("restricted")
    ]
    assert [p.text for p in page.posts] == [
        "狼队夜间讨论频道，今晚刀谁？请在22:00前决定。",
        "我建议今晚刀春卷，他像预言家。",
    ]


# --------------------------------------------------------------------------- posts that matter


def test_reply_quote_links_the_original_vote_and_is_not_text(desktop: Path) -> None:
    # m135.txt:209 【改票格式】改票须回复原投票楼层 — the quote's link proves which floor.
    posts = by_pid(parse(desktop / "vote-page2-anon.html"))
    change = posts[samples.pid("vote", 13)]  # 汤圆 changes the vote of floor 7
    assert change.quoted_pids == (samples.pid("vote", 7),)
    assert change.text == "改票对象：春卷\n改票理由：春卷刚才的发言有问题"
    assert change.quote_texts == (
        "汤圆 发表于 2026-12-3 02:25\n投票对象：饺子\n投票理由：暂投，可能改票",
    )
    other = posts[samples.pid("vote", 12)]  # 饺子 quoting 包子's vote: not 饺子's vote
    assert other.quoted_pids == (samples.pid("vote", 3),)
    assert "投票对象" not in other.text
    assert other.text == "包子你投我没道理吧，我昨天明明站边好人。"


def test_hand_typed_quote_has_no_link_and_is_not_text(desktop: Path) -> None:
    post = by_pid(parse(desktop / "vote-page3-anon.html"))[samples.pid("vote", 23)]
    assert post.quoted_pids == ()
    assert post.quote_texts == ("投票对象：饺子",)
    assert post.text == "上面是我之前的票，已经改成春卷了，别算错。"


def test_edited_vote_carries_the_edit_note(desktop: Path) -> None:
    real = samples.one("vote", edited=True)  # Snow_风, floor 10
    post = by_pid(parse(desktop / "vote-page1-anon.html"))[real["pid"]]
    assert post.edit == EditNote(
        editor="Snow_风", edited_at=datetime(2026, 12, 3, 2, 26, tzinfo=TZ)
    )
    assert "本帖最后由 Snow_风 于 2026-12-3 02:26 编辑" in real["stored_message"]
    assert post.text == "投票对象：馄饨\n投票理由：编辑后改投馄饨（原来投的是面条）"
    assert "本帖最后由" not in post.text
    assert "pstatus" in post.message_html  # the raw message keeps the note as evidence


def test_red_and_enlarged_fonts_are_marked(desktop: Path) -> None:
    # m135.txt:316 （1）使用导演专用的放大字体、红色字体（或导演认为与 #FF0000 相近颜色的字体）。
    posts = by_pid(parse(desktop / "vote-page1-anon.html"))
    red_pid, big_pid = samples.pid("vote", 8), samples.pid("vote", 9)
    red = [m for m in posts[red_pid].marks if m.kind is MarkKind.RED]
    assert [(m.value, m.text) for m in red] == [("#FF0000", "投票对象：馄饨")]
    big = [m for m in posts[big_pid].marks if m.kind is MarkKind.ENLARGED]
    assert [(m.value, m.text) for m in big] == [("6", "投票对象：包子")]
    assert posts[big_pid].text == "投票对象：包子\n投票理由：大字投票"
    assert all(
        m.kind is not MarkKind.RED for p in posts.values() if p.pid != red_pid for m in p.marks
    )


def test_white_text_stays_in_the_text_but_is_marked_hidden(desktop: Path) -> None:
    """Ruling: hidden text is kept and marked; the vote reader distrusts marked text."""
    post = by_pid(parse(desktop / "vote-page2-anon.html"))[samples.pid("vote", 15)]
    assert post.text == "大家好好想想再投。\n投票对象：油条"
    hidden = [m for m in post.marks if m.kind is MarkKind.HIDDEN_COLOUR]
    assert [(m.value, m.text) for m in hidden] == [("white", "投票对象：油条")]


def test_any_discuz_code_is_marked(desktop: Path) -> None:
    # m209.txt:193 遗言中禁止使用Discuz!代码。
    posts = by_pid(parse(desktop / "discussion-page1-anon.html"))
    coded, plain = samples.pid("discussion", 9), samples.pid("discussion", 8)
    assert sorted(m.value for m in posts[coded].marks if m.kind is MarkKind.BBCODE) == [
        "a",
        "i",
        "strong",
        "u",
    ]
    assert posts[coded].text.endswith("加粗 斜体 下划线 链接")
    assert posts[plain].marks == ()  # plain text: no code at all
    vote_page2 = by_pid(parse(desktop / "vote-page2-anon.html"))
    smiley = vote_page2[samples.pid("vote", 14)]
    assert [m.value for m in smiley.marks] == ["img", "img", "img"]  # 2 smilies + [img]
    quoting = vote_page2[samples.pid("vote", 13)]
    assert [m.value for m in quoting.marks if m.kind is MarkKind.BBCODE] == ["quote"]


def test_blocked_post_and_renumbered_floors(desktop: Path) -> None:
    """The deleted post is absent (no placeholder); the blocked one (屏蔽), written at
    position 15 after it, shows 14#, and every later floor moved up by one."""
    deleted = samples.one("discussion", deleted=True)
    real = samples.one("discussion", blocked=True)
    assert (deleted["db_position"], real["db_position"], real["floor"]) == (14, 15, 14)
    posts = by_pid(parse(desktop / "discussion-page2-anon.html"))
    assert deleted["pid"] not in posts
    blocked = posts[real["pid"]]
    assert (blocked.state, blocked.text, blocked.author, blocked.floor) == (
        PostState.BLOCKED,
        "",
        "包子",
        14,
    )
    assert "该帖被管理员或版主屏蔽" in blocked.message_html
    assert blocked.posted_at == datetime.fromtimestamp(real["dateline"], TZ)
    # floors before the deleted post keep their position; the ones after it moved up by one
    for floor, position in ((13, 13), (14, 15), (15, 16), (20, 21)):
        shown = samples.post("discussion", floor)
        assert (shown["db_position"], posts[shown["pid"]].floor) == (position, floor)


def test_hide_box_locked_for_guests_and_shown_to_members(desktop: Path) -> None:
    real = samples.one("discussion", kind="admin_hide_tag")
    guest = by_pid(parse(desktop / "discussion-page5-anon.html"))[real["pid"]]
    assert guest.text == "【管理员】\n请勿刷屏。"
    assert [(m.kind, m.value, m.text) for m in guest.marks] == [
        (MarkKind.HIDE_TAG, "locked", ""),
        (MarkKind.BBCODE, "hide", ""),
    ]
    member = by_pid(parse(desktop / "discussion-page5-member.html"))[real["pid"]]
    assert member.text == "【管理员】\n这段是隐藏内容，回复后可见。\n\n请勿刷屏。"
    assert (MarkKind.HIDE_TAG, "showhide", "这段是隐藏内容，回复后可见。") in [
        (m.kind, m.value, m.text) for m in member.marks
    ]


# --------------------------------------------------------------------------- synthetic markup


def _with_message(page: bytes, pid: int, old: str, new: str) -> bytes:
    text = page.decode("utf-8")
    assert old in text
    return text.replace(old, new, 1).encode("utf-8")


@pytest.fixture(scope="module")
def p3(desktop: Path) -> tuple[bytes, datetime]:
    path = desktop / "vote-page3-anon.html"
    return path.read_bytes(), served_at(path)


#: the vote thread's last post (floor 26, Snow_风: "路过，今天不说话了。"), rewritten below
LAST = samples.pid("vote", 26)
MESSAGE_LAST = (
    '<div class="t_fsz"><table cellspacing="0" cellpadding="0"><tr>'
    f'<td class="t_f" id="postmessage_{LAST}">'
)


def _post_last(body: bytes, now: datetime) -> Post:
    return by_pid(parse_viewthread(body, tid=VOTE, tz=TZ, now=now))[LAST]


@pytest.mark.parametrize(
    ("markup", "kind", "value"),
    [
        ('<font color="red">投票对象：油条</font>', MarkKind.RED, "red"),
        ('<font color="#f00">投票对象：油条</font>', MarkKind.RED, "#f00"),
        ('<font color="#FF3333">投票对象：油条</font>', MarkKind.RED, "#FF3333"),
        ('<font color="Crimson">投票对象：油条</font>', MarkKind.RED, "Crimson"),
        (
            '<font style="color:rgb(255, 0, 0)">投票对象：油条</font>',
            MarkKind.RED,
            "rgb(255, 0, 0)",
        ),
        ('<font color="#fff">投票对象：油条</font>', MarkKind.HIDDEN_COLOUR, "#fff"),
        ('<font color="#FEFEFE">投票对象：油条</font>', MarkKind.HIDDEN_COLOUR, "#FEFEFE"),
        ('<font size="4">投票对象：油条</font>', MarkKind.ENLARGED, "4"),
        ('<font style="font-size:20px">投票对象：油条</font>', MarkKind.ENLARGED, "20px"),
        ('<font style="font-size:15pt">投票对象：油条</font>', MarkKind.ENLARGED, "15pt"),
        ('<font size="1">投票对象：油条</font>', MarkKind.TINY, "1"),
        ('<font style="font-size:8px">投票对象：油条</font>', MarkKind.TINY, "8px"),
    ],
)
def test_presentation_marks(p3, markup: str, kind: MarkKind, value: str) -> None:
    body, now = p3
    post = _post_last(_with_message(body, LAST, "路过，今天不说话了。", markup), now)
    assert post.text == "投票对象：油条"
    assert (kind, value, "投票对象：油条") in [(m.kind, m.value, m.text) for m in post.marks]


@pytest.mark.parametrize(
    "markup",
    [
        '<font color="darkred">投票对象：油条</font>',
        '<font color="#999999">投票对象：油条</font>',
        '<font color="Blue">投票对象：油条</font>',
        '<font size="3">投票对象：油条</font>',  # "medium": posts are 14px, size 3 is 16px
        '<font style="font-size:14px">投票对象：油条</font>',
    ],
)
def test_ordinary_presentation_is_only_code(p3, markup: str) -> None:
    body, now = p3
    post = _post_last(_with_message(body, LAST, "路过，今天不说话了。", markup), now)
    assert [m.kind for m in post.marks] == [MarkKind.BBCODE]


@pytest.mark.parametrize(
    "attributes",
    [
        'color="rgb(1.2.3, 0, 0)"',
        'style="color:rgb(., ., .); font-size: 1.2.3px"',
        'size="+99999999999999"',
        'color="#zzz" size="-"',
        'style="font-size:"',
        'color="" size="" style=""',
    ],
)
def test_odd_presentation_never_breaks_the_page(p3, attributes: str) -> None:
    body, now = p3
    markup = f"<font {attributes}>投票对象：油条</font>"
    post = _post_last(_with_message(body, LAST, "路过，今天不说话了。", markup), now)
    assert post.text == "投票对象：油条"
    assert MarkKind.BBCODE in [m.kind for m in post.marks]


_ATTRIBUTE = st.text(
    alphabet=st.sampled_from(list("rgb(),.;:%#0123456789abcdefpxtm+- ")), max_size=24
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(colour=_ATTRIBUTE, size=_ATTRIBUTE, style=_ATTRIBUTE)
def test_any_font_attributes_give_a_post(p3, colour: str, size: str, style: str) -> None:
    body, now = p3
    markup = (
        f'<font color="{colour}" size="{size}" style="color:{style};font-size:{style}">x</font>'
    )
    post = _post_last(_with_message(body, LAST, "路过，今天不说话了。", markup), now)
    assert post.text == "x"


def test_jammer_text_is_removed_everywhere(p3) -> None:
    """Discuz's anti-copy noise after line breaks is not the author's text (docs/discuz.md §1.6)."""
    body, now = p3
    markup = (
        '投票对象：油条<font class="jammer">x9Zq</font><br />\n'
        '<span style="display:none">k3</span>投票理由：好<div class="a_pr">广告</div>'
    )
    post = _post_last(_with_message(body, LAST, "路过，今天不说话了。", markup), now)
    assert post.text == "投票对象：油条\n投票理由：好"
    assert "jammer" not in post.message_html and "广告" not in post.message_html
    assert post.marks == ()


def test_quote_link_parameters_in_any_order(p3) -> None:
    body, now = p3
    markup = (
        '<div class="quote"><blockquote><font size="2"><a href="forum.php?mod=redirect&amp;ptid='
        f'{VOTE}&amp;pid={samples.pid("vote", 7)}&amp;goto=findpost" target="_blank">'
        '<font color="#999999">汤圆 发表于 2026-12-3 02:25</font></a></font><br />\n'
        "投票对象：饺子</blockquote></div><br />\n"
        "改票对象：春卷"
    )
    post = _post_last(_with_message(body, LAST, "路过，今天不说话了。", markup), now)
    assert post.quoted_pids == (samples.pid("vote", 7),)
    assert post.text == "改票对象：春卷"
    assert [m.kind for m in post.marks] == [MarkKind.BBCODE]  # the quote's inner fonts: not marks


def test_pending_post(p3) -> None:
    body, now = p3
    post = _post_last(
        _with_message(body, LAST, "路过，今天不说话了。", '<span class="xg1">待审核</span>'), now
    )
    assert (post.state, post.text) == (PostState.PENDING, "")


def test_author_only_reply(p3) -> None:
    """回帖仅作者可见: other accounts get a locked box instead of the message cell."""
    body, now = p3
    text = body.decode("utf-8")
    start = text.index(MESSAGE_LAST)
    end = text.index("</div>", start) + len("</div>")
    box = '<div class="locked">此帖仅作者可见</div>'
    post = _post_last((text[:start] + box + text[end:]).encode("utf-8"), now)
    assert (post.state, post.text, post.author) == (PostState.AUTHOR_ONLY, "", "Snow_风")


def test_deleted_placeholder(p3) -> None:
    """Position-mode gap filler: <table id="pidN"> without class, 无效楼层，该帖已经被删除."""
    body, now = p3
    text = body.decode("utf-8")
    start = text.index(f'<table id="pid{LAST}"')
    end = text.index("</table>\r\n</div>", start) + len("</table>")
    placeholder = (
        f'<table id="pid{LAST}" summary="pid{LAST}" cellspacing="0" cellpadding="0"><tbody><tr>'
        '<td class="pls"></td><td class="plc"><div class="pi"><strong><a><em>26</em><sup>#</sup>'
        '</a></strong></div><div class="pct">无效楼层，该帖已经被删除</div></td></tr></tbody>'
        "</table>"
    )
    post = _post_last((text[:start] + placeholder + text[end:]).encode("utf-8"), now)
    assert (post.state, post.floor, post.author, post.posted_at, post.text) == (
        PostState.DELETED,
        26,
        "",
        None,
        "",
    )


def test_a_placeholder_never_replaces_a_real_post(p3) -> None:
    """Discuz may give a vanished position a made-up pid that a real post has (see parser)."""
    body, now = p3
    text = body.decode("utf-8")
    placeholder = (
        f'<table id="pid{LAST}" summary="pid{LAST}" cellspacing="0" cellpadding="0"><tbody><tr>'
        '<td class="plc"><div class="pi"><strong><a><em>27</em><sup>#</sup></a></strong></div>'
        '<div class="pct">无效楼层，该帖已经被删除</div></td></tr></tbody></table>'
    )
    at = text.index('<div id="postlistreply"')
    post = _post_last((text[:at] + placeholder + text[at:]).encode("utf-8"), now)
    assert (post.state, post.floor, post.text) == (PostState.VISIBLE, 26, "路过，今天不说话了。")


def test_moderators_see_the_blocked_text_under_the_notice(p3) -> None:
    body, now = p3
    notice = (
        '<div class="locked">提示: <em>该帖被管理员或版主屏蔽，'
        "只有管理员或有管理权限的成员可见</em></div>"
    )
    post = _post_last(_with_message(body, LAST, MESSAGE_LAST, notice + MESSAGE_LAST), now)
    assert (post.state, post.text) == (PostState.BLOCKED, "路过，今天不说话了。")


def test_selectors_are_named_by_purpose() -> None:
    for key in ("postlist", "post", "floor_link", "author_link", "posted_at", "message", "pager"):
        assert SELECTORS[key]


# --------------------------------------------------------------------------- not thread pages


@pytest.mark.parametrize(
    ("folder", "name", "kind"),
    [
        ("misc", "members-only-thread-anon.html", PageErrorKind.LOGIN_REQUIRED),
        ("misc", "no-such-thread-anon.html", PageErrorKind.NOT_FOUND),
        ("misc", "submit-refused-flood.html", PageErrorKind.RATE_LIMITED),
        ("misc", "submit-refused-formhash.html", PageErrorKind.SERVER_ERROR),
        ("misc", "discussion-page2-first-after-delete-anon.html", PageErrorKind.MALFORMED),
        ("misc", "login-page-anon.html", PageErrorKind.MALFORMED),
        ("desktop", "section-list-anon.html", PageErrorKind.MALFORMED),
        ("desktop", "vote-print-anon.html", PageErrorKind.MALFORMED),
        ("desktop", "vote-archiver-anon.html", PageErrorKind.MALFORMED),
    ],
)
def test_pages_that_are_not_thread_pages(
    fixtures_dir: Path, folder: str, name: str, kind: PageErrorKind
) -> None:
    with pytest.raises(PageError) as caught:
        parse(fixtures_dir / folder / name, tid=VOTE)
    assert caught.value.kind is kind


#: cuts through the head, the post list, the reply box, the pager and the footer
TRUNCATED = [
    ("vote-page1-anon.html", cut)
    for cut in (0, 200, 9000, 10_000, 30_000, 58_300, 60_000, 64_000, 64_690, -15, -9)
] + [("discussion-page5-member.html", cut) for cut in (10_000, 20_000, -9)]


@pytest.mark.parametrize(("name", "cut"), TRUNCATED)
def test_a_truncated_page_is_never_a_partial_page(desktop: Path, name: str, cut: int) -> None:
    path = desktop / name
    body = path.read_bytes()[:cut]
    with pytest.raises(PageError) as caught:
        parse_viewthread(body, tid=tid_of(name), tz=TZ, now=served_at(path))
    assert caught.value.kind is PageErrorKind.MALFORMED


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_raise_only_page_errors(body: bytes) -> None:
    try:
        page = parse_viewthread(body, tid=4, tz=TZ, now=datetime(2026, 12, 3, tzinfo=TZ))
    except PageError as exc:
        assert exc.kind in PageErrorKind
        return
    assert page.tid == 4


_MARKUP = st.text(
    alphabet=st.sampled_from(list("<>/=\"' #&;:0123456789abcdefilnoqrstuvxz投票对象：\n")),
    max_size=200,
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(markup=_MARKUP)
def test_arbitrary_markup_in_a_message_never_breaks_the_page(p3, markup: str) -> None:
    body, now = p3
    page = parse_viewthread(
        _with_message(body, LAST, "路过，今天不说话了。", markup), tid=VOTE, tz=TZ, now=now
    )
    assert len(page.posts) == 6 and page.posts[-1].pid == LAST
