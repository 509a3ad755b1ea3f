"""The mobile API parser (parsers.mobile) against real Discuz! X3.5 answers.

``api/mobile/index.php?version=N&module=viewthread`` as captured from the test server
(../shared/fixtures/discuz/mobile): v4 works, v1/v2 read the same way, v3 answered 503.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.mobile import parse_mobile_check, parse_mobile_viewthread
from parsers.records import EditNote, MarkKind, PageError, PageErrorKind, PostState
from parsers.viewthread import parse_viewthread

TZ = ZoneInfo("Asia/Shanghai")
FLOOR_NAMES = {"楼主": 1, "沙发": 2, "板凳": 3, "地板": 4}
PAGES = [(4, n) for n in (1, 2, 3)] + [(5, n) for n in (1, 2, 3, 4, 5)]


def mobile(fixtures_dir: Path, name: str, *, page: int = 1, tid: int | None = None):
    body = (fixtures_dir / "mobile" / name).read_bytes()
    tid = tid if tid is not None else int(re.search(r"_t(\d+)", name).group(1))  # type: ignore[union-attr]
    return parse_mobile_viewthread(body, tid=tid, tz=TZ, page=page)


def desktop(fixtures_dir: Path, tid: int, page: int):
    name = f"{'vote' if tid == 4 else 'discussion'}_t{tid}_p{page}_guest.html"
    path = fixtures_dir / "desktop" / name
    headers = path.with_name(name + ".headers").read_text("utf-8")
    date = re.search(r"^Date: (.+?)\r?$", headers, re.M).group(1)  # type: ignore[union-attr]
    now = datetime.strptime(date, "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    return parse_viewthread(path.read_bytes(), tid=tid, tz=TZ, now=now)


@pytest.fixture(scope="module")
def truth(fixtures_dir: Path) -> dict[int, dict[str, Any]]:
    manifest = json.loads((fixtures_dir / "manifest.json").read_text("utf-8"))
    return {
        post["pid"]: {**post, "tid": manifest["threads"][key]["tid"]}
        for key in ("vote", "discussion")
        for post in manifest["threads"][key]["posts"]
    }


def shown_floor(post: dict[str, Any]) -> int:
    shown = post["floor_displayed"]
    return FLOOR_NAMES.get(shown) or int(shown.rstrip("#"))


@pytest.mark.parametrize("version", ["v4", "v1", "v2"])
@pytest.mark.parametrize(("tid", "page"), PAGES)
def test_every_post_matches_the_manifest(fixtures_dir: Path, truth, version, tid, page) -> None:
    parsed = mobile(fixtures_dir, f"{version}_viewthread_t{tid}_p{page}_guest.json", page=page)
    assert parsed.page == page
    assert parsed.total_pages == (3 if tid == 4 else 5)  # ceil((thread.replies + 1) / ppp)
    assert parsed.ppp == 10
    expected = {pid for pid, p in truth.items() if (p["tid"], p["desktop_page"]) == (tid, page)}
    assert {post.pid for post in parsed.posts} == expected
    for post in parsed.posts:
        real = truth[post.pid]
        assert (post.author, post.uid, post.source) == (real["author"], real["uid"], "mobile")
        assert post.floor == shown_floor(real)  # `number`: 116 shows 14 (position 15)
        assert post.quoted_pids == ((real["replied_to_pid"],) if real.get("replied_to_pid") else ())
        assert (post.state is PostState.BLOCKED) == real["blocked"]
        assert post.posted_at is not None and post.posted_at.tzinfo is not None


@pytest.mark.parametrize("version", ["v4", "v1"])
@pytest.mark.parametrize(("tid", "page"), PAGES)
def test_mobile_and_desktop_agree(fixtures_dir: Path, version: str, tid: int, page: int) -> None:
    """Same pids, authors, uids, floors, times, states, quotes and words (modulo v4's drops:
    runs of spaces, [size], the edit note)."""
    api = mobile(fixtures_dir, f"{version}_viewthread_t{tid}_p{page}_guest.json", page=page)
    html = desktop(fixtures_dir, tid, page)
    assert (api.page, api.total_pages, api.subject, api.formhash) == (
        html.page,
        html.total_pages,
        html.subject,
        html.formhash,
    )
    assert len(api.posts) == len(html.posts)
    for a, h in zip(api.posts, html.posts, strict=True):
        assert (a.pid, a.author, a.uid, a.floor, a.posted_at, a.state, a.quoted_pids) == (
            h.pid,
            h.author,
            h.uid,
            h.floor,
            h.posted_at,
            h.state,
            h.quoted_pids,
        )
        assert "".join(a.text.split()) == "".join(h.text.split()), a.pid
        assert ["".join(q.split()) for q in a.quote_texts] == [
            "".join(q.split()) for q in h.quote_texts
        ]
        # colours survive every renderer: the red and white marks agree
        assert {(m.kind, m.text) for m in a.marks if m.kind is not MarkKind.BBCODE} <= {
            (m.kind, m.text) for m in h.marks
        }


def test_what_each_api_version_keeps(fixtures_dir: Path) -> None:
    """v1 keeps the edit note, v4 drops it; neither keeps [size] (docs/discuz.md §2.4, §3.3)."""
    v1 = {p.pid: p for p in mobile(fixtures_dir, "v1_viewthread_t4_p1_guest.json").posts}
    v4 = {p.pid: p for p in mobile(fixtures_dir, "v4_viewthread_t4_p1_guest.json").posts}
    note = EditNote(editor="Snow_风", edited_at=datetime(2026, 11, 29, 21, 6, tzinfo=TZ))
    assert (v1[85].edit, v4[85].edit) == (note, None)
    assert (
        v1[85].text == v4[85].text == "投票对象：馄饨\n投票理由：编辑后改投馄饨（原来投的是面条）"
    )
    for posts in (v1, v4):
        assert [m.kind for m in posts[83].marks] == [MarkKind.BBCODE, MarkKind.RED]
        assert all(m.kind is not MarkKind.ENLARGED for m in posts[84].marks)


def test_blocked_post_by_status_bit(fixtures_dir: Path) -> None:
    posts = {p.pid: p for p in mobile(fixtures_dir, "v4_viewthread_t5_p2_guest.json", page=2).posts}
    blocked = posts[116]
    assert (blocked.state, blocked.text, blocked.floor, blocked.author) == (
        PostState.BLOCKED,
        "",
        14,
        "包子",
    )
    assert 115 not in posts  # deleted: not served at all


def test_locked_hide_box(fixtures_dir: Path) -> None:
    post = mobile(fixtures_dir, "v4_viewthread_t5_p5_guest.json", page=5).posts[0]
    assert post.text == "【管理员】\n请勿刷屏。"
    assert (MarkKind.HIDE_TAG, "locked") in [(m.kind, m.value) for m in post.marks]


def test_v4_quote_link_is_escaped_twice_and_still_read(fixtures_dir: Path) -> None:
    posts = {p.pid: p for p in mobile(fixtures_dir, "v4_viewthread_t4_p2_guest.json", page=2).posts}
    assert "&amp;amp;pid=82" in posts[88].message_html
    assert posts[88].quoted_pids == (82,)
    assert posts[88].text == "改票对象：春卷\n改票理由：春卷刚才的发言有问题"


def test_all_posts_in_one_answer_with_ppp(fixtures_dir: Path, truth) -> None:
    page = mobile(fixtures_dir, "v4_viewthread_t4_ppp30_guest.json")
    assert (page.page, page.total_pages, page.ppp, page.replies) == (1, 1, 30, 25)
    assert [p.pid for p in page.posts] == list(range(76, 102))
    assert [p.floor for p in page.posts] == [shown_floor(truth[p.pid]) for p in page.posts]


def test_only_this_author(fixtures_dir: Path) -> None:
    page = mobile(fixtures_dir, "v4_viewthread_t4_authorid8_guest.json")
    assert [(p.pid, p.floor, p.author) for p in page.posts] == [
        (82, 1, "汤圆"),
        (88, 2, "汤圆"),
        (98, 3, "汤圆"),
    ]
    assert page.total_pages == 1


def test_a_page_past_the_end_is_the_last_page(fixtures_dir: Path) -> None:
    page = mobile(fixtures_dir, "v4_viewthread_t4_p3_guest.json", page=4)
    assert (page.page, page.total_pages) == (3, 3)


def test_login_state(fixtures_dir: Path) -> None:
    guest = mobile(fixtures_dir, "v4_viewthread_t4_p1_guest.json")
    member = mobile(fixtures_dir, "v4_viewthread_t4_p1_login.json")
    assert (guest.extra["member_uid"], guest.formhash) == ("0", "fd260ccf")
    assert (member.extra["member_uid"], member.formhash) == ("3", "9fbbd8d9")


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("page", [1, 2, 3])
def test_v3_system_error_pages(fixtures_dir: Path, page: int) -> None:
    with pytest.raises(PageError) as caught:
        mobile(fixtures_dir, f"v3_viewthread_t4_p{page}_guest.json", page=page)
    assert caught.value.kind is PageErrorKind.SERVER_ERROR


def test_restricted_thread_needs_login(fixtures_dir: Path) -> None:
    with pytest.raises(PageError) as caught:
        mobile(fixtures_dir, "v4_viewthread_t6_restricted_guest.json")
    assert caught.value.kind is PageErrorKind.LOGIN_REQUIRED
    assert "viewperm_login_nopermission" in caught.value.detail


def test_forumdisplay_is_not_a_thread(fixtures_dir: Path) -> None:
    with pytest.raises(PageError) as caught:
        mobile(fixtures_dir, "v4_forumdisplay_f3_guest.json", tid=4)
    assert caught.value.kind is PageErrorKind.MALFORMED


def _answer(variables: dict[str, Any], message: dict[str, str] | None = None) -> bytes:
    data: dict[str, Any] = {"Version": "4", "Charset": "UTF-8", "Variables": variables}
    if message is not None:
        data["Message"] = message
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (b'{"error":"mobile_is_closed"}', PageErrorKind.CLOSED),
        (b'{"error":"module_not_exists"}', PageErrorKind.MALFORMED),
        (
            _answer({"postlist": []}, {"messageval": "thread_nonexistence", "messagestr": "x"}),
            PageErrorKind.NOT_FOUND,
        ),
        (
            _answer({}, {"messageval": "thread_nopermission", "messagestr": "阅读权限高于 50"}),
            PageErrorKind.NO_PERMISSION,
        ),
        (
            _answer({}, {"messageval": "group_nopermission//1", "messagestr": "x"}),
            PageErrorKind.LOGIN_REQUIRED,
        ),
        (_answer({"ppp": "10", "postlist": []}), PageErrorKind.MALFORMED),  # no thread
        (
            _answer({"ppp": "0", "thread": {"replies": "1"}, "postlist": []}),
            PageErrorKind.MALFORMED,
        ),
        (b"[1, 2, 3]", PageErrorKind.MALFORMED),
        (b"not json", PageErrorKind.MALFORMED),
        (b"", PageErrorKind.MALFORMED),
        (b"[" * 100_000, PageErrorKind.MALFORMED),
    ],
)
def test_error_answers(body: bytes, kind: PageErrorKind) -> None:
    with pytest.raises(PageError) as caught:
        parse_mobile_viewthread(body, tid=4, tz=TZ, page=1)
    assert caught.value.kind is kind


def test_check_module() -> None:
    working = {
        "discuzversion": "X3.2",
        "truediscuzversion": "X3.5",
        "charset": "utf-8",
        "version": "4",
    }
    assert parse_mobile_check(json.dumps(working).encode()) == working
    assert parse_mobile_check(b"{}") is None
    assert parse_mobile_check(b"<html>503</html>") is None
    assert parse_mobile_check(b"[]") is None


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=1024))
def test_arbitrary_bytes_raise_only_page_errors(body: bytes) -> None:
    try:
        page = parse_mobile_viewthread(body, tid=4, tz=TZ, page=1)
    except PageError as exc:
        assert exc.kind in PageErrorKind
        return
    assert page.tid == 4


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
_POST = st.fixed_dictionaries(
    {"pid": st.text(max_size=4), "dbdateline": st.text(max_size=12)},
    optional={"message": st.text(max_size=40), "number": _SCALARS, "status": _SCALARS},
)


@settings(max_examples=150, deadline=None)
@given(
    st.one_of(
        _JSON,
        st.fixed_dictionaries(
            {
                "Variables": st.fixed_dictionaries(
                    {
                        "ppp": _SCALARS,
                        "thread": st.fixed_dictionaries({"replies": _SCALARS}),
                        "postlist": st.lists(_POST, max_size=3),
                    }
                )
            },
            optional={"Message": _JSON},
        ),
    )
)
def test_arbitrary_json_gives_a_page_or_a_page_error(data: Any) -> None:
    try:
        page = parse_mobile_viewthread(json.dumps(data).encode(), tid=4, tz=TZ, page=1)
    except PageError as exc:
        assert exc.kind in PageErrorKind
        return
    assert 1 <= page.page <= page.total_pages
