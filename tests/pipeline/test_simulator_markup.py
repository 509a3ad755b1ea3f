"""The simulator's pages have the real Discuz! X3.5 structure (shared/fixtures/discuz).

The real server's posts (manifest.json ground truth, times from the captured mobile API) are
replayed into a ``ForumSim``; then every captured page is requested from the simulator at the
capture's own ``Date`` and compared with the real page: the message HTML, floors and times post by
post, every selector of ``parsers.viewthread.SELECTORS`` (same matches, same ancestor tag/class
chains), the mobile API's keys and values, and the misc pages (login, refusals, reply answers).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser, LexborNode

from pipeline.sim.simulator import ForumSim, SimClock

FIXTURES = Path(__file__).resolve().parents[2] / ".." / "shared" / "fixtures" / "discuz"
if not FIXTURES.is_dir():
    pytest.skip(
        f"真实 Discuz 抓包样本目录不存在：{FIXTURES}（需要 ../shared/fixtures/discuz）",
        allow_module_level=True,
    )

TZ8 = timezone(timedelta(hours=8))
BASE = "http://127.0.0.1:8080/"
DELETED_AT = datetime(2026, 11, 29, 21, 6, 0, tzinfo=TZ8)  # between the last post and the capture
EDITED_AT = datetime(2026, 11, 29, 21, 6, 30, tzinfo=TZ8)  # the real note says 21:06
PAGE_RE = re.compile(
    r"(vote|discussion)_t(\d)_(?:p(\d)|authorid(\d+))(?:_p1)?(?:_beyond_last)?_(guest|login)"
)


def capture_time(path: Path) -> datetime:
    headers = (path.parent / f"{path.name}.headers").read_text(encoding="utf-8")
    date = re.search(r"^Date: (.+)$", headers, re.M)
    assert date, f"no Date header for {path.name}"
    return datetime.strptime(date.group(1).strip(), "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)


def _datelines() -> dict[int, int]:
    out: dict[int, int] = {}
    for path in FIXTURES.glob("mobile/v4_viewthread_t*_guest.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        for post in (data.get("Variables") or {}).get("postlist") or []:
            out[int(post["pid"])] = int(post["dbdateline"])
    return out


def replay(charset: str = "utf-8") -> tuple[ForumSim, SimClock, dict[int, dict[str, Any]]]:
    """A simulator holding the real vote (tid 4) and discussion (tid 5) threads."""
    manifest = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
    datelines = _datelines()
    clock = SimClock(datetime(2026, 11, 29, 21, 7, 54, tzinfo=TZ8))
    users = {name: info["uid"] for name, info in manifest["users"].items()}
    sim = ForumSim(users=users, clock=clock, admins={"admin"}, charset=charset, first_pid=76)
    truth: dict[int, dict[str, Any]] = {}
    for key in ("vote", "discussion"):
        thread = manifest["threads"][key]
        for post in thread["posts"]:
            truth[post["pid"]] = post
            # A deleted post is missing from the API captures: it was posted with its neighbour.
            known = post["pid"] if post["pid"] in datelines else post["pid"] - 1
            when = datetime.fromtimestamp(datelines[known], TZ8)
            if post["kind"] == "opening_post":
                pid = sim.add_thread(
                    thread["tid"], thread["subject"], post["author"], post["sent_message"], when
                )
            else:
                quote = post.get("replied_to_pid") if post.get("replied_to_pid") else None
                pid = sim.add_post(
                    thread["tid"], post["author"], post["sent_message"], when, quote_pid=quote
                )
            assert pid == post["pid"]
            if post.get("edited"):
                sim.edit_post(pid, post["edited_message_sent"], EDITED_AT)
            if post["blocked"]:
                sim.block_post(pid)
            if post["deleted"]:
                sim.delete_post(pid, at=DELETED_AT)
    sim.handle(
        "GET", BASE + "forum.php?mod=viewthread&tid=5&page=2"
    )  # the one 302 after the delete
    return sim, clock, truth


@pytest.fixture(scope="module")
def replayed() -> tuple[ForumSim, SimClock, dict[int, dict[str, Any]]]:
    return replay()


def sim_page_for(sim: ForumSim, clock: SimClock, path: Path) -> bytes:
    match = PAGE_RE.match(path.name)
    assert match, path.name
    tid, page, author, who = int(match.group(2)), match.group(3), match.group(4), match.group(5)
    if "beyond_last" in path.name:
        page = "4"
    url = f"{BASE}forum.php?mod=viewthread&tid={tid}&page={page or 1}"
    if author:
        url += f"&authorid={author}"
    clock.set(capture_time(path))
    headers = {"Cookie": sim.login_cookie("饺子")} if who == "login" else {}  # login = 饺子
    resp = sim.handle("GET", url, headers)
    assert resp.status == 200
    return resp.body


DESKTOP_PAGES = sorted(p for p in (FIXTURES / "desktop").glob("*.html") if PAGE_RE.match(p.name))


def _post_cells(tree: LexborHTMLParser) -> dict[int, tuple[str | None, ...]]:
    out: dict[int, tuple[str | None, ...]] = {}
    for node in tree.css("table[id^=pid]"):
        pid = int(node.attributes["id"][3:])
        parts = (
            node.css_first("td.t_f"),
            node.css_first("a[id^=postnum]"),
            node.css_first("em[id^=authorposton]"),
            node.css_first("div.pcb > div.locked"),
        )
        out[pid] = tuple(re.sub(r"aimg_\w+", "aimg_X", p.html or "") if p else None for p in parts)
    return out


@pytest.mark.parametrize("path", DESKTOP_PAGES, ids=lambda p: p.name)
def test_every_real_post_renders_exactly_as_the_real_server_did(replayed, path: Path):
    """Message HTML (quotes, edit note, colours, sizes, smilies, [hide]), floor text and the
    time element of each post are byte-identical to the capture (image ids aside: random)."""
    sim, clock, _ = replayed
    real = _post_cells(LexborHTMLParser(path.read_bytes()))
    mine = _post_cells(LexborHTMLParser(sim_page_for(sim, clock, path)))
    assert list(mine) == list(real)
    for pid, cells in real.items():
        assert mine[pid] == cells, f"pid {pid}"


def test_replayed_posts_are_stored_like_the_real_database(replayed):
    """The 回复 quote builder and the edit note produce exactly what Discuz stored."""
    sim, _, truth = replayed
    for pid, post in truth.items():
        assert sim.stored_message(pid) == post["stored_message"], f"pid {pid}"


# --------------------------------------------------------------------------- selectors

_PAGE_KEYS = {"postlist", "post", "subject", "formhash", "replies", "pager", "pager_total"}
_PAGER_KEYS = {"pager_current", "pager_label"}
_MESSAGE_KEYS = {
    "quote",
    "quote_link",
    "edit_note",
    "jammer",
    "ads",
    "hide_shown",
    "hide_locked",
}


def _selectors() -> dict[str, str]:
    try:
        from parsers.viewthread import SELECTORS
    except ImportError as exc:  # pragma: no cover - only before the parser lands
        pytest.skip(f"parsers.viewthread.SELECTORS 尚不存在：{exc}")
    assert SELECTORS, "parsers.viewthread.SELECTORS is empty"
    return dict(SELECTORS)


def _chain(node: LexborNode, scope: LexborNode | None) -> tuple[str, ...]:
    """tag.classes of the node and its ancestors up to the scope (ids differ by pid: ignored)."""
    out = []
    current: LexborNode | None = node
    while current is not None and current is not scope and current.tag not in ("html", "-document"):
        classes = " ".join(sorted((current.attributes.get("class") or "").split()))
        out.append(f"{current.tag}.{classes}")
        current = current.parent
    return tuple(out)


def _scopes(tree: LexborHTMLParser, key: str, selectors: dict[str, str]) -> list[LexborNode | None]:
    if key in _PAGE_KEYS:
        return [None]
    if key in _PAGER_KEYS:
        return list(tree.css(selectors.get("pager", "div.pg")))
    posts = list(tree.css(selectors.get("post", "table[id^='pid']")))
    if key in _MESSAGE_KEYS:
        message = selectors.get("message", "td[id^='postmessage_']")
        return [m for p in posts for m in p.css(message)]
    return posts  # per-post selectors (and any new key): relative to each post table


def _signature(
    tree: LexborHTMLParser, key: str, selectors: dict[str, str]
) -> tuple[int, set[tuple[str, ...]]]:
    count = 0
    chains: set[tuple[str, ...]] = set()
    for scope in _scopes(tree, key, selectors):
        nodes = tree.css(selectors[key]) if scope is None else scope.css(selectors[key])
        for node in nodes:
            count += 1
            chains.add(_chain(node, scope))
    return count, chains


STRUCTURE_PAGES = [
    "vote_t4_p1_guest.html",
    "vote_t4_p2_guest.html",  # quotes, smilies, image, white text, thread-author marker
    "vote_t4_p3_guest.html",  # last page, hand-typed quote
    "vote_t4_p4_beyond_last_guest.html",
    "vote_t4_p2_login.html",
    "vote_t4_authorid8_guest.html",
    "discussion_t5_p2_guest.html",  # blocked post, renumbered floors
    "discussion_t5_p5_guest.html",  # locked [hide], single page of one post
    "discussion_t5_p5_login.html",  # [hide] shown to a member who replied
    "discussion_t5_authorid3_p1_guest.html",
]


@pytest.mark.parametrize("name", STRUCTURE_PAGES)
def test_parser_selectors_find_the_same_structure(replayed, name: str):
    """For every selector the parser relies on: same number of matches, same ancestor chains."""
    selectors = _selectors()
    sim, clock, _ = replayed
    path = FIXTURES / "desktop" / name
    real = LexborHTMLParser(path.read_bytes())
    mine = LexborHTMLParser(sim_page_for(sim, clock, path))
    for key in selectors:
        real_sig = _signature(real, key, selectors)
        mine_sig = _signature(mine, key, selectors)
        assert mine_sig == real_sig, f"{key}: {selectors[key]!r}"


def test_gbk_page_has_the_structure_of_the_reencoded_capture():
    """gbk_reencoded/vote_t4_p1_guest.gbk.html: the same page as a GBK forum would serve it."""
    selectors = _selectors()
    sim, clock, _ = replay(charset="gbk")
    path = FIXTURES / "desktop" / "gbk_reencoded" / "vote_t4_p1_guest.gbk.html"
    clock.set(capture_time(path))
    resp = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4&page=1")
    real_headers = (path.parent / f"{path.name}.headers").read_text(encoding="utf-8")
    assert f"Content-Type: {resp.header('Content-Type')}" in real_headers
    real = LexborHTMLParser(path.read_bytes().decode("gbk"))
    mine = LexborHTMLParser(resp.body.decode("gbk"))
    for key in selectors:
        assert _signature(mine, key, selectors) == _signature(real, key, selectors), key
    real_text = [n.text() for n in real.css("td.t_f")]
    assert [n.text() for n in mine.css("td.t_f")] == real_text


# --------------------------------------------------------------------------- mobile API


MOBILE_PAGES = sorted(p for p in (FIXTURES / "mobile").glob("v4_viewthread_t[45]_*_guest.json"))


def _mobile_url(name: str) -> str:
    match = re.search(r"t(\d)_(?:p(\d)|authorid(\d+)|ppp(\d+))", name)
    assert match, name
    url = f"{BASE}api/mobile/index.php?version=4&module=viewthread&tid={match.group(1)}"
    url += f"&page={match.group(2) or 1}"
    if match.group(3):
        url += f"&authorid={match.group(3)}"
    if match.group(4):
        url += f"&ppp={match.group(4)}"
    return url


def _key_tree(value: Any) -> Any:
    if isinstance(value, dict):
        return [(k, _key_tree(v)) for k, v in value.items()]
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [_key_tree(value[0])]
    return type(value).__name__


@pytest.mark.parametrize("path", MOBILE_PAGES, ids=lambda p: p.name)
def test_mobile_api_has_the_real_keys_and_post_values(replayed, path: Path):
    """Same keys in the same order (Variables, thread, every postlist entry), every scalar a
    string, and each post's fields (message HTML, position, number, status, dateline text)
    equal to what the real v4 API returned."""
    sim, clock, _ = replayed
    clock.set(capture_time(path))
    resp = sim.handle("GET", _mobile_url(path.name))
    assert resp.header("Content-Type") == "application/json"
    assert resp.body.isascii()
    real = json.loads(path.read_text(encoding="utf-8"))
    mine = json.loads(resp.body)
    assert _key_tree(mine) == _key_tree(real)
    real_posts = real["Variables"]["postlist"]
    mine_posts = mine["Variables"]["postlist"]
    assert mine_posts == real_posts
    for key in ("replies", "maxposition", "allreplies", "lastpost", "lastposter", "subject"):
        assert mine["Variables"]["thread"][key] == real["Variables"]["thread"][key], key


def test_mobile_login_required_answer_has_the_real_shape():
    """v4_viewthread_t6_restricted_guest.json: Message key, empty postlist, null ordertype."""
    sim, _, _ = replay()
    sim.login_required = True
    resp = sim.handle("GET", BASE + "api/mobile/index.php?version=4&module=viewthread&tid=4")
    real = json.loads(
        (FIXTURES / "mobile" / "v4_viewthread_t6_restricted_guest.json").read_text("utf-8")
    )
    mine = json.loads(resp.body)
    assert _key_tree(mine) == _key_tree(real)
    assert mine["Message"] == real["Message"]
    assert mine["Variables"]["postlist"] == []
    assert mine["Variables"]["thread"]["ordertype"] is None


# --------------------------------------------------------------------------- misc pages


def _message_text(body: bytes) -> str:
    node = LexborHTMLParser(body).css_first("#messagetext p")
    assert node is not None
    return node.text()


def test_refusal_pages_match_the_captures():
    sim, _, _ = replay()
    sim.login_required = True
    restricted = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=4")
    real = (FIXTURES / "misc" / "restricted_t6_guest.html").read_bytes()
    assert _message_text(restricted.body) == _message_text(real)
    real_tree = LexborHTMLParser(real)
    mine_tree = LexborHTMLParser(restricted.body)
    assert _chain(mine_tree.css_first("#messagetext"), None) == _chain(
        real_tree.css_first("#messagetext"), None
    )
    assert mine_tree.css_first("#messagelogin") is not None
    missing = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=9999")
    real_missing = FIXTURES / "misc" / "nonexistent_thread_t9999_guest.html"
    assert missing.status == 404
    assert "404 Not Found" in (real_missing.parent / f"{real_missing.name}.headers").read_text(
        "utf-8"
    )
    assert _message_text(missing.body) == _message_text(real_missing.read_bytes())


def test_login_form_has_the_real_fields():
    sim, _, _ = replay()
    mine = LexborHTMLParser(sim.handle("GET", BASE + "member.php?mod=logging&action=login").body)
    real = LexborHTMLParser((FIXTURES / "misc" / "login_form_guest.html").read_bytes())

    def fields(tree: LexborHTMLParser) -> tuple[str, set[str]]:
        form = tree.css_first("form[name=login]")
        action = re.sub(r"loginhash=\w+", "loginhash=X", form.attributes["action"])
        return action, {
            n.attributes.get("name") for n in form.css("input, select") if n.attributes.get("name")
        }

    assert fields(mine) == fields(real)


def test_reply_answers_match_the_captures():
    """reply_submit_success_inajax.xml byte for byte (same tid/pid), and the refusal texts of
    reply_submit_fail_flood / _too_short / _bad_formhash (floodctrl was 3 s on that server)."""
    clock = SimClock(datetime(2026, 11, 29, 21, 8, 25, tzinfo=TZ8))
    sim = ForumSim(users={"导演A": 2, "饺子": 3}, clock=clock, floodctrl_s=3, first_pid=146)
    sim.add_thread(
        7, "[测试局]抓包用", "导演A", "抓包专用主题。", datetime(2026, 11, 29, 21, 7, tzinfo=TZ8)
    )
    sim.add_post(
        7, "导演A", "占位的第二楼回复内容。", datetime(2026, 11, 29, 21, 7, 30, tzinfo=TZ8)
    )
    cookie = {"Cookie": sim.login_cookie("饺子")}
    page = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=7", cookie)
    token = re.search(r'name="formhash" value="(\w+)"', page.text).group(1)  # type: ignore[union-attr]
    url = BASE + "forum.php?mod=post&action=reply&fid=3&tid=7&extra=&replysubmit=yes"
    form = {"Content-Type": "application/x-www-form-urlencoded", **cookie}

    def post(query: str, message: str, formhash: str = token) -> Any:
        from urllib.parse import urlencode

        return sim.handle(
            "POST",
            url + query,
            form,
            urlencode({"formhash": formhash, "message": message}).encode(),
        )

    ajax = post("&handlekey=fastpost&loc=1&inajax=1", "抓包：inajax=1 的快速回复（fastpost）成功。")
    real_xml = (FIXTURES / "misc" / "reply_submit_success_inajax.xml").read_bytes()
    assert ajax.body == real_xml
    flood = post("", "抓包：紧接着再发一条，应触发灌水预防。")
    assert _message_text(flood.body) == _message_text(
        (FIXTURES / "misc" / "reply_submit_fail_flood.html").read_bytes()
    )
    clock.advance(10)
    short = post("", "短")
    assert _message_text(short.body) == _message_text(
        (FIXTURES / "misc" / "reply_submit_fail_too_short.html").read_bytes()
    )
    bad = post("", "抓包：formhash 错误的提交。", formhash="00000000")
    real_bad = FIXTURES / "misc" / "reply_submit_fail_bad_formhash.html"
    assert bad.status == 503 and bad.header("Retry-After") == "3600"
    real_info = LexborHTMLParser(real_bad.read_bytes()).css_first("div.info li").text()
    assert LexborHTMLParser(bad.body).css_first("div.info li").text() == real_info
    assert LexborHTMLParser(bad.body).css_first("h1").text() == "Discuz! System Error"
