"""The mobile API parser (parsers.mobile) against real Discuz! X3.5 answers.

``api/mobile/index.php?version=N&module=viewthread`` as captured from the test server
(tests/fixtures/discuz/mobile): v4 works, v1/v2 read the same way, v3 answered 503.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.mobile import parse_mobile_check, parse_mobile_viewthread
from parsers.records import EditNote, MarkKind, PageError, PageErrorKind, PostState
from parsers.viewthread import parse_viewthread
from tests import discuz_samples as samples
from tests.discuz_samples import served_at, shown_floor

TZ = ZoneInfo("Asia/Shanghai")
VOTE, DISCUSSION = samples.tid("vote"), samples.tid("discussion")
PAGES = [(key, n) for key in ("vote", "discussion") for n in range(1, samples.pages(key) + 1)]
#: which thread an answer's file is about, by the start of its name
THREAD_OF = {"vote": "vote", "discussion": "discussion", "members": "restricted"}


def mobile(fixtures_dir: Path, name: str, *, page: int = 1, tid: int | None = None):
    body = (fixtures_dir / "mobile" / name).read_bytes()
    tid = tid if tid is not None else samples.tid(THREAD_OF[name.split("-")[0]])
    return parse_mobile_viewthread(body, tid=tid, tz=TZ, page=page)


def desktop(fixtures_dir: Path, key: str, page: int):
    path = fixtures_dir / "desktop" / f"{key}-page{page}-anon.html"
    return parse_viewthread(path.read_bytes(), tid=samples.tid(key), tz=TZ, now=served_at(path))


@pytest.fixture(scope="module")
def truth() -> dict[int, dict[str, Any]]:
    return {
        pid: post for pid, post in samples.by_pid().items() if post["tid"] in (VOTE, DISCUSSION)
    }


@pytest.mark.parametrize("version", [4, 1, 2])
@pytest.mark.parametrize(("key", "page"), PAGES)
def test_every_post_matches_the_manifest(fixtures_dir: Path, truth, version, key, page) -> None:
    parsed = mobile(fixtures_dir, f"{key}-api{version}-page{page}-anon.json", page=page)
    tid = samples.tid(key)
    assert parsed.page == page
    assert parsed.total_pages == samples.pages(key)  # ceil((thread.replies + 1) / ppp)
    assert parsed.ppp == 10
    expected = {pid for pid, p in truth.items() if (p["tid"], p["desktop_page"]) == (tid, page)}
    assert {post.pid for post in parsed.posts} == expected
    for post in parsed.posts:
        real = truth[post.pid]
        assert (post.author, post.uid, post.source) == (real["author"], real["uid"], "mobile")
        assert post.floor == shown_floor(real)  # `number`: the blocked post shows 14 (position 15)
        assert post.quoted_pids == ((real["replied_to_pid"],) if real.get("replied_to_pid") else ())
        assert (post.state is PostState.BLOCKED) == real["blocked"]
        assert post.posted_at is not None and post.posted_at.tzinfo is not None
        assert int(post.posted_at.timestamp()) == real["dateline"]


@pytest.mark.parametrize("version", [4, 1])
@pytest.mark.parametrize(("key", "page"), PAGES)
def test_mobile_and_desktop_agree(fixtures_dir: Path, version: int, key: str, page: int) -> None:
    """Same pids, authors, uids, floors, times, states, quotes and words (modulo v4's drops:
    runs of spaces, [size], the edit note)."""
    api = mobile(fixtures_dir, f"{key}-api{version}-page{page}-anon.json", page=page)
    html = desktop(fixtures_dir, key, page)
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
    v1 = {p.pid: p for p in mobile(fixtures_dir, "vote-api1-page1-anon.json").posts}
    v4 = {p.pid: p for p in mobile(fixtures_dir, "vote-api4-page1-anon.json").posts}
    edited = samples.one("vote", edited=True)["pid"]
    red, big = samples.pid("vote", 8), samples.pid("vote", 9)
    note = EditNote(editor="Snow_风", edited_at=datetime(2026, 12, 3, 2, 26, tzinfo=TZ))
    assert (v1[edited].edit, v4[edited].edit) == (note, None)
    assert (
        v1[edited].text
        == v4[edited].text
        == "投票对象：馄饨\n投票理由：编辑后改投馄饨（原来投的是面条）"
    )
    for posts in (v1, v4):
        assert [m.kind for m in posts[red].marks] == [MarkKind.BBCODE, MarkKind.RED]
        assert all(m.kind is not MarkKind.ENLARGED for m in posts[big].marks)


def test_blocked_post_by_status_bit(fixtures_dir: Path) -> None:
    answer = mobile(fixtures_dir, "discussion-api4-page2-anon.json", page=2)
    posts = {p.pid: p for p in answer.posts}
    blocked = posts[samples.one("discussion", blocked=True)["pid"]]
    assert (blocked.state, blocked.text, blocked.floor, blocked.author) == (
        PostState.BLOCKED,
        "",
        14,
        "包子",
    )
    assert samples.one("discussion", deleted=True)["pid"] not in posts  # not served at all


def test_locked_hide_box(fixtures_dir: Path) -> None:
    post = mobile(fixtures_dir, "discussion-api4-page5-anon.json", page=5).posts[0]
    assert post.pid == samples.one("discussion", kind="admin_hide_tag")["pid"]
    assert post.text == "【管理员】\n请勿刷屏。"
    assert (MarkKind.HIDE_TAG, "locked") in [(m.kind, m.value) for m in post.marks]


def test_v4_quote_link_is_escaped_twice_and_still_read(fixtures_dir: Path) -> None:
    answer = mobile(fixtures_dir, "vote-api4-page2-anon.json", page=2)
    change = {p.pid: p for p in answer.posts}[samples.pid("vote", 13)]
    original = samples.pid("vote", 7)
    assert f"&amp;amp;pid={original}&amp;amp;" in change.message_html
    assert change.quoted_pids == (original,)
    assert change.text == "改票对象：春卷\n改票理由：春卷刚才的发言有问题"


def test_all_posts_in_one_answer_with_ppp(fixtures_dir: Path, truth) -> None:
    page = mobile(fixtures_dir, "vote-api4-ppp30-anon.json")
    everyone = samples.posts("vote")
    assert (page.page, page.total_pages, page.ppp, page.replies) == (1, 1, 30, len(everyone) - 1)
    assert [p.pid for p in page.posts] == [p["pid"] for p in everyone]
    assert [p.floor for p in page.posts] == [shown_floor(truth[p.pid]) for p in page.posts]


def test_only_this_author(fixtures_dir: Path) -> None:
    page = mobile(fixtures_dir, "vote-api4-only-tangyuan-anon.json")
    assert [(p.pid, p.floor, p.author) for p in page.posts] == [
        (real["pid"], n, "汤圆") for n, real in enumerate(samples.where("vote", author="汤圆"), 1)
    ]
    assert len(page.posts) == 3
    assert page.total_pages == 1


def test_a_page_past_the_end_is_the_last_page(fixtures_dir: Path) -> None:
    page = mobile(fixtures_dir, "vote-api4-page3-anon.json", page=4)
    assert (page.page, page.total_pages) == (3, 3)


def test_login_state(fixtures_dir: Path) -> None:
    guest = mobile(fixtures_dir, "vote-api4-page1-anon.json")
    member = mobile(fixtures_dir, "vote-api4-page1-member.json")
    assert (guest.extra["member_uid"], guest.formhash) == ("0", "71c2b33e")
    assert (member.extra["member_uid"], member.formhash) == (str(samples.uid("饺子")), "4bbf1166")


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(("key", "page"), PAGES)
def test_v3_system_error_pages(fixtures_dir: Path, key: str, page: int) -> None:
    name = f"{key}-api3-page{page}-anon.json"
    assert samples.status(fixtures_dir / "mobile" / name) == 503
    with pytest.raises(PageError) as caught:
        mobile(fixtures_dir, name, page=page)
    assert caught.value.kind is PageErrorKind.SERVER_ERROR


def test_restricted_thread_needs_login(fixtures_dir: Path) -> None:
    with pytest.raises(PageError) as caught:
        mobile(fixtures_dir, "members-only-api4-anon.json")
    assert caught.value.kind is PageErrorKind.LOGIN_REQUIRED
    assert "viewperm_login_nopermission" in caught.value.detail


def test_forumdisplay_is_not_a_thread(fixtures_dir: Path) -> None:
    with pytest.raises(PageError) as caught:
        mobile(fixtures_dir, "section-api4-anon.json", tid=VOTE)
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
