"""The simulator's pages have the real Discuz! X3.5 structure (tests/fixtures/discuz).

The real server's posts (manifest.json ground truth, with each post's database time) are
replayed into a ``ForumSim``; then every captured page is requested from the simulator at the
capture's own ``Date`` and compared with the real page: the message HTML, floors and times post by
post, every selector of ``parsers.viewthread.SELECTORS`` (same matches, same ancestor tag/class
chains), the mobile API's keys and values, and the misc pages (login, refusals, reply answers).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from selectolax.lexbor import LexborHTMLParser, LexborNode

from parsers.viewthread import SELECTORS
from pipeline.sim.simulator import ForumSim, SimClock
from tests import discuz_samples as samples
from tests.discuz_samples import SAMPLES, served_at

FIXTURES = SAMPLES
TZ8 = timezone(timedelta(hours=8))
BASE = samples.manifest()["server"]["base_url"]
LOOKER = samples.manifest()["looker"]  # the member of the *-member captures
VOTE, DISCUSSION = samples.tid("vote"), samples.tid("discussion")
#: the edit came a minute after Snow_风's vote (the real note says 02:26), before the capture
EDITED_AT = datetime(2026, 12, 3, 2, 26, 50, tzinfo=TZ8)
DELETED_AT = datetime(2026, 12, 3, 2, 26, 51, tzinfo=TZ8)  # after the edit, before the capture
#: the only-this-author captures, by the name in the file
AUTHORS = {"tangyuan": "汤圆", "jiaozi": "饺子"}
PAGE_RE = re.compile(r"(vote|discussion)-(?:page(\d)(-pastend)?|only-([a-z]+))-(anon|member)")


def replay(charset: str = "utf-8") -> tuple[ForumSim, SimClock, dict[int, dict[str, Any]]]:
    """A simulator holding the real vote and discussion threads."""
    manifest = samples.manifest()
    clock = SimClock(datetime.fromisoformat(manifest["captured_at"]))
    users = {name: info["uid"] for name, info in manifest["users"].items()}
    first = samples.posts("vote")[0]["pid"]
    sim = ForumSim(
        users=users,
        clock=clock,
        admins={"admin"},
        charset=charset,
        first_pid=first,
        base_url=BASE,
    )
    truth: dict[int, dict[str, Any]] = {}
    for key in ("vote", "discussion"):
        thread = samples.thread(key)
        for post in thread["posts"]:
            truth[post["pid"]] = post
            when = datetime.fromtimestamp(post["dateline"], TZ8)
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
    # the one 302 after the delete
    sim.handle("GET", BASE + f"forum.php?mod=viewthread&tid={DISCUSSION}&page=2")
    return sim, clock, truth


@pytest.fixture(scope="module")
def replayed() -> tuple[ForumSim, SimClock, dict[int, dict[str, Any]]]:
    return replay()


def sim_page_for(sim: ForumSim, clock: SimClock, path: Path) -> bytes:
    match = PAGE_RE.match(path.name)
    assert match, path.name
    key, page, past_end, author, who = match.groups()
    if past_end:
        page = str(samples.pages(key) + 1)
    url = f"{BASE}forum.php?mod=viewthread&tid={samples.tid(key)}&page={page or 1}"
    if author:
        url += f"&authorid={samples.uid(AUTHORS[author])}"
    clock.set(served_at(path))
    headers = {"Cookie": sim.login_cookie(LOOKER)} if who == "member" else {}
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
    "vote-page1-anon.html",
    "vote-page2-anon.html",  # quotes, smilies, image, white text, thread-author marker
    "vote-page3-anon.html",  # last page, hand-typed quote
    "vote-page4-pastend-anon.html",
    "vote-page2-member.html",
    "vote-only-tangyuan-anon.html",
    "discussion-page2-anon.html",  # blocked post, renumbered floors
    "discussion-page5-anon.html",  # locked [hide], single page of one post
    "discussion-page5-member.html",  # [hide] shown to a member who replied
    "discussion-only-jiaozi-anon.html",
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
    """gbk/vote-page1-anon-gbk.html: the same page as a GBK forum would serve it."""
    selectors = _selectors()
    sim, clock, _ = replay(charset="gbk")
    path = FIXTURES / "desktop" / "gbk" / "vote-page1-anon-gbk.html"
    clock.set(served_at(path))
    resp = sim.handle("GET", BASE + f"forum.php?mod=viewthread&tid={VOTE}&page=1")
    real_headers = (path.parent / f"{path.name}.head").read_text(encoding="utf-8")
    assert f"Content-Type: {resp.header('Content-Type')}" in real_headers
    real = LexborHTMLParser(path.read_bytes().decode("gbk"))
    mine = LexborHTMLParser(resp.body.decode("gbk"))
    for key in selectors:
        assert _signature(mine, key, selectors) == _signature(real, key, selectors), key
    real_text = [n.text() for n in real.css("td.t_f")]
    assert [n.text() for n in mine.css("td.t_f")] == real_text


# --------------------------------------------------------------------------- mobile API


MOBILE_RE = re.compile(r"(vote|discussion)-api4-(?:page(\d)|only-([a-z]+)|ppp(\d+))-anon")
MOBILE_PAGES = sorted(p for p in (FIXTURES / "mobile").glob("*.json") if MOBILE_RE.match(p.name))


def _mobile_url(name: str) -> str:
    match = MOBILE_RE.match(name)
    assert match, name
    key, page, author, ppp = match.groups()
    url = f"{BASE}api/mobile/index.php?version=4&module=viewthread&tid={samples.tid(key)}"
    url += f"&page={page or 1}"
    if author:
        url += f"&authorid={samples.uid(AUTHORS[author])}"
    if ppp:
        url += f"&ppp={ppp}"
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
    clock.set(served_at(path))
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
    """members-only-api4-anon.json: Message key, empty postlist, null ordertype."""
    sim, _, _ = replay()
    sim.login_required = True
    resp = sim.handle("GET", BASE + f"api/mobile/index.php?version=4&module=viewthread&tid={VOTE}")
    real = json.loads((FIXTURES / "mobile" / "members-only-api4-anon.json").read_text("utf-8"))
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
    restricted = sim.handle("GET", BASE + f"forum.php?mod=viewthread&tid={VOTE}")
    real = (FIXTURES / "misc" / "members-only-thread-anon.html").read_bytes()
    assert _message_text(restricted.body) == _message_text(real)
    real_tree = LexborHTMLParser(real)
    mine_tree = LexborHTMLParser(restricted.body)
    assert _chain(mine_tree.css_first("#messagetext"), None) == _chain(
        real_tree.css_first("#messagetext"), None
    )
    assert mine_tree.css_first("#messagelogin") is not None
    missing = sim.handle("GET", BASE + "forum.php?mod=viewthread&tid=9999")
    real_missing = FIXTURES / "misc" / "no-such-thread-anon.html"
    assert missing.status == samples.status(real_missing) == 404
    assert _message_text(missing.body) == _message_text(real_missing.read_bytes())


def test_login_form_has_the_real_fields():
    sim, _, _ = replay()
    mine = LexborHTMLParser(sim.handle("GET", BASE + "member.php?mod=logging&action=login").body)
    real = LexborHTMLParser((FIXTURES / "misc" / "login-page-anon.html").read_bytes())

    def fields(tree: LexborHTMLParser) -> tuple[str, set[str]]:
        form = tree.css_first("form[name=login]")
        action = re.sub(r"loginhash=\w+", "loginhash=X", form.attributes["action"])
        return action, {
            n.attributes.get("name") for n in form.css("input, select") if n.attributes.get("name")
        }

    assert fields(mine) == fields(real)


def test_reply_answers_match_the_captures():
    """submit-ok-fastpost.xml byte for byte (same tid/pid), and the refusal texts of
    submit-refused-flood / -short / -formhash (floodctrl was 3 s on that server)."""
    scratch = samples.thread("scratch")
    opening = scratch["posts"][0]
    files = samples.manifest()["files"]
    opened = datetime.fromtimestamp(opening["dateline"], TZ8)
    clock = SimClock(opened + timedelta(seconds=30))
    users = {"导演A": samples.uid("导演A"), "饺子": samples.uid("饺子")}
    sim = ForumSim(users=users, clock=clock, floodctrl_s=3, first_pid=opening["pid"])
    tid = scratch["tid"]
    sim.add_thread(tid, scratch["subject"], "导演A", opening["sent_message"], opened)
    # the reply that went through as a plain form, just before
    ok = files["misc/submit-ok-redirect.html"]
    assert sim.add_post(tid, "饺子", ok["sent_message"], opened + timedelta(seconds=5)) == ok["pid"]
    cookie = {"Cookie": sim.login_cookie("饺子")}
    page = sim.handle("GET", BASE + f"forum.php?mod=viewthread&tid={tid}", cookie)
    token = re.search(r'name="formhash" value="(\w+)"', page.text).group(1)  # type: ignore[union-attr]
    fid = scratch["fid"]
    url = BASE + f"forum.php?mod=post&action=reply&fid={fid}&tid={tid}&extra=&replysubmit=yes"
    form = {"Content-Type": "application/x-www-form-urlencoded", **cookie}

    def post(query: str, message: str, formhash: str = token) -> Any:
        from urllib.parse import urlencode

        return sim.handle(
            "POST",
            url + query,
            form,
            urlencode({"formhash": formhash, "message": message}).encode(),
        )

    fast = files["misc/submit-ok-fastpost.xml"]
    ajax = post("&handlekey=fastpost&loc=1&inajax=1", fast["sent_message"])
    real_xml = (FIXTURES / "misc" / "submit-ok-fastpost.xml").read_bytes()
    assert ajax.body == real_xml
    flood = post("", files["misc/submit-refused-flood.html"]["sent_message"])
    assert _message_text(flood.body) == _message_text(
        (FIXTURES / "misc" / "submit-refused-flood.html").read_bytes()
    )
    clock.advance(10)
    short = post("", files["misc/submit-refused-short.html"]["sent_message"])
    assert _message_text(short.body) == _message_text(
        (FIXTURES / "misc" / "submit-refused-short.html").read_bytes()
    )
    bad = post("", files["misc/submit-refused-formhash.html"]["sent_message"], formhash="00000000")
    real_bad = FIXTURES / "misc" / "submit-refused-formhash.html"
    assert bad.status == samples.status(real_bad) == 503 and bad.header("Retry-After") == "3600"
    real_info = LexborHTMLParser(real_bad.read_bytes()).css_first("div.info li").text()
    assert LexborHTMLParser(bad.body).css_first("div.info li").text() == real_info
    assert LexborHTMLParser(bad.body).css_first("h1").text() == "Discuz! System Error"
