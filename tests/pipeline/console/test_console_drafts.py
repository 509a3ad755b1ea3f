"""Drafts in the console: rendered as the forum will show them beside their
BBCode, the diff from the previous draft of the kind, edit / approve / reject through
pipeline.drafts (the CLI's state machine), urgent ones first — and the console never posts:
two approvals of one draft from two tabs make the next ``bansha cycle`` post it exactly once."""

from __future__ import annotations

import html
import re

from pipeline.console.api import drafts_json
from pipeline.console.preview import bbcode_html
from pipeline.drafts import bbcode_escape, draft_events, get_draft
from tests.pipeline.console.support import (
    HASH_RE,
    MORNING,
    Tab,
    at,
    bansha,
    draft_state,
    make_app,
    result_draft,
)


def test_two_approvals_from_two_tabs_post_once(morning, tab_for):
    app = make_app(morning)
    draft = result_draft(morning)
    path = f"/g/m135-demo/drafts/{draft['id']}"
    first, second = tab_for(app), tab_for(app)
    # both tabs show the draft waiting, with its approve button
    for tab in (first, second):
        page = tab.get(path)
        assert page.status_code == 200 and 'id="approve"' in page.text
    seen = HASH_RE.search(first.get(path).text).group(1)
    second.get(path)
    before = len(morning.director_posts())

    r1 = first.post(path + "/approve", {"body_hash": seen})
    r2 = second.post(path + "/approve", {"body_hash": seen})
    shown1, shown2 = first.follow(r1).text, second.follow(r2).text
    assert f"已批准第 {draft['id']} 号草稿" in html.unescape(shown1)
    assert f"不能批准第 {draft['id']} 号草稿：它已经批准过了" in html.unescape(shown2)
    assert draft_state(morning, draft["id"]) == "approved"
    assert len(morning.director_posts()) == before  # the console never posts by itself

    # the next cycle posts it, exactly once; the one after posts nothing more
    morning.cycle(at("2026-12-03T09:05:00+08:00"))
    posted = morning.director_posts()[before:]
    assert len(posted) == 1
    assert posted[0].revisions[-1].message.strip() == draft["body"].strip()
    morning.cycle(at("2026-12-03T09:10:00+08:00"))
    assert len(morning.director_posts()) == before + 1
    assert draft_state(morning, draft["id"]) == "posted"
    store = morning.store()
    try:
        notes = [e["note"] for e in draft_events(store, draft["id"])]
    finally:
        store.close()
    assert notes.count("导演批准") == 1


def test_approving_what_changed_since_the_page_was_opened_is_refused(morning, tab_for):
    app = make_app(morning)
    draft = result_draft(morning)
    path = f"/g/m135-demo/drafts/{draft['id']}"
    old_tab, new_tab = tab_for(app), tab_for(app)
    old_hash = HASH_RE.search(old_tab.get(path).text).group(1)
    new_tab.get(path)
    edited = draft["body"] + "\n（导演补充：请大家准时投票）"
    r = new_tab.post(path + "/edit", {"body": edited, "body_hash": old_hash})
    assert "已保存" in html.unescape(new_tab.follow(r).text)
    # the first tab still shows the old text: its approval is refused, nothing approved
    r = old_tab.post(path + "/approve", {"body_hash": old_hash})
    shown = html.unescape(old_tab.follow(r).text)
    assert f"第 {draft['id']} 号草稿在你打开之后被修改过" in shown
    assert draft_state(morning, draft["id"]) == "pending"
    # after looking again it can be approved; an edit of an approved draft needs approval again
    fresh = HASH_RE.search(old_tab.get(path).text).group(1)
    old_tab.post(path + "/approve", {"body_hash": fresh})
    assert draft_state(morning, draft["id"]) == "approved"
    r = old_tab.post(path + "/edit", {"body": edited + "！", "body_hash": fresh})
    assert "它原已批准，现需重新批准" in html.unescape(old_tab.follow(r).text)
    assert draft_state(morning, draft["id"]) == "pending"
    store = morning.store()
    try:
        d = get_draft(store, draft["id"])
        notes = [e["note"] for e in draft_events(store, d.id)]
    finally:
        store.close()
    assert d.body == edited + "！" and d.generated_body == draft["body"]
    assert notes[-1] == "导演修改，需重新批准"


def test_reject_needs_a_reason_and_is_recorded(morning, tab_for):
    tab = tab_for(make_app(morning))
    draft = result_draft(morning)
    path = f"/g/m135-demo/drafts/{draft['id']}"
    tab.get(path)
    r = tab.post(path + "/reject", {"why": "   "})
    assert "驳回草稿必须写明理由" in html.unescape(tab.follow(r).text)
    assert draft_state(morning, draft["id"]) == "pending"
    r = tab.post(path + "/reject", {"why": "票数要再核对"})
    assert "已驳回第" in html.unescape(tab.follow(r).text)
    store = morning.store()
    try:
        d = get_draft(store, draft["id"])
    finally:
        store.close()
    assert d.state.value == "rejected" and d.reject_why == "票数要再核对"
    # a rejected draft can be neither approved nor edited
    page = tab.get(path)
    assert 'id="approve"' not in page.text and 'id="save"' not in page.text
    r = tab.post(path + "/approve", {"body_hash": d.body_hash})
    assert "不能批准" in html.unescape(tab.follow(r).text)


def test_an_edit_too_long_keeps_the_text_and_says_why(morning, tab_for):
    tab = tab_for(make_app(morning))
    draft = result_draft(morning)
    path = f"/g/m135-demo/drafts/{draft['id']}"
    page = tab.get(path)
    huge = "很长的一段话" * 3000
    r = tab.post(path + "/edit", {"body": huge, "body_hash": HASH_RE.search(page.text).group(1)})
    assert r.status_code == 409
    assert "超过论坛的长度上限 10000 字节" in html.unescape(r.text)
    assert huge in html.unescape(r.text)  # the director's typing is not lost
    assert draft_state(morning, draft["id"]) == "pending"


def test_the_draft_page_shows_preview_bbcode_and_the_diff(morning, tab_for):
    tab = tab_for(make_app(morning))
    store = morning.store()
    try:
        rows = list(
            store.db.query(
                "SELECT * FROM drafts WHERE previous_id IS NOT NULL AND state = 'pending' LIMIT 1"
            )
        )
        if not rows:  # make a second draft of a kind: the director's edit is a new text
            rows = list(store.db.query("SELECT * FROM drafts WHERE kind = 'result' LIMIT 1"))
        d = get_draft(store, rows[0]["id"])
        prev = get_draft(store, d.previous_id) if d.previous_id else None
    finally:
        store.close()
    page = tab.get(f"/g/m135-demo/drafts/{d.id}")
    text = html.unescape(page.text)
    preview = re.search(r'<div class="post" id="preview">(.*?)</div>\s*</section>', page.text, re.S)
    assert preview is not None
    # BBCode rendered: [b] becomes <strong>, the raw code is in the textarea
    assert "<strong>" in preview.group(1) and "[b]" not in preview.group(1)
    assert html.escape(d.body, quote=False).split("\n")[0] in page.text
    if prev is not None:
        assert f"第 {prev.id} 号（上一稿）" in text
    else:
        assert "这是该草稿的第一稿" in text


def test_the_preview_escapes_as_discuz_does_and_runs_nothing():
    body = (
        "[b]结果[/b] <script>alert(1)</script> <img src=x onerror=alert(2)>\n"
        "[url=javascript:alert(3)]点我[/url] [url=&#106;avascript:alert(4)]再点[/url]\n"
        "[url=forum.php?mod=viewthread&tid=2012]投票帖[/url] [img]http://evil.example/x.png[/img]\n"
        "[hide]隐藏[/hide] :) " + bbcode_escape("玩家[color=red]红字[/color]")
    )
    out = str(bbcode_html(body, base_url="http://bbs.example.com/", tid=2012))
    assert "<script" not in out.lower()
    assert "onerror" not in out.lower().replace("onerror=alert(2)&gt;", "")
    assert "&lt;img src=x onerror=alert(2)&gt;" in out  # the player's text stays text
    # no link may run code: Discuz makes a scheme-less target relative to the forum, and an
    # entity-spelled scheme is decoded before it is judged
    hrefs = re.findall(r'href="([^"]*)"', out)
    assert hrefs and all(h.startswith("http://bbs.example.com/") for h in hrefs), hrefs
    assert "&#106;" not in out
    assert 'href="http://bbs.example.com/forum.php?mod=viewthread&amp;tid=2012"' in out
    assert " onclick=" not in out and " onload=" not in out and " onmouseover=" not in out
    assert "<strong>结果</strong>" in out
    assert 'src="http://bbs.example.com/static/image/smiley/default/smile.gif"' in out
    # a player's name with a tag in it (escaped by bbcode_escape) is shown as written
    assert "玩家[<strong></strong>color=red]红字[<strong></strong>/color]" in out
    assert '<font color="red">' not in out


def test_urgent_drafts_come_first(forum, tab_for):
    # 21:30 on day 2: a running tally and the vote reminder (the close is at 22:00)
    when = at("2026-12-02T21:30:00+08:00")
    forum.cycle(when)
    tab = tab_for(make_app(forum, when))
    page = tab.get("/g/m135-demo/drafts")
    order = re.findall(r'<li class="card draft ([a-z ]*)" data-draft="(\d+)">', page.text)
    store = forum.store()
    try:
        kinds = {
            r["id"]: r["kind"]
            for r in store.db.query("SELECT id, kind FROM drafts WHERE state = 'pending'")
        }
    finally:
        store.close()
    shown = [kinds[int(n)] for _cls, n in order]
    assert "reminder" in shown and "elevator" in shown
    urgent = [kinds[int(n)] for cls, n in order if "urgent" in cls]
    assert "reminder" in urgent and "running_tally" in urgent and "elevator" not in urgent
    assert shown.index("reminder") < shown.index("elevator")
    assert "关门还有 30 分钟" in html.unescape(page.text)


def test_drafts_json_is_what_the_api_serves(forum):
    forum.cycle(at("2026-12-02T21:30:00+08:00"))  # a running tally, later superseded
    forum.cycle(MORNING)
    morning = forum
    store = morning.store()
    try:
        data = drafts_json(store, morning.spec().game, now=MORNING)
        with_all = drafts_json(store, morning.spec().game, now=MORNING, include_superseded=True)
    finally:
        store.close()
    assert data["game"] == "m135-demo" and data["as_of"] == MORNING.isoformat()
    assert len(with_all["drafts"]) > len(data["drafts"])
    assert all(d["state"] != "superseded" for d in data["drafts"])
    row = next(d for d in data["drafts"] if d["kind"] == "result" and d["day"] == 2)
    for key in ("id", "kind_zh", "state_zh", "title", "body", "body_hash", "tid", "urgent"):
        assert key in row
    assert row["state_zh"] == "待批准" and row["first_line"]
    api = Tab(make_app(morning)).client.get(
        "/api/games/m135-demo/drafts", headers={"Authorization": "Bearer " + _token()}
    )
    assert api.json() == data


def _token() -> str:
    from tests.pipeline.console.support import TOKEN

    return TOKEN


def test_the_cli_and_the_console_share_one_state_machine(morning, tab_for):
    """Approved in the console, the CLI sees it approved (and refuses a second approval)."""
    tab = tab_for(make_app(morning))
    draft = result_draft(morning)
    path = f"/g/m135-demo/drafts/{draft['id']}"
    tab.post(path + "/approve", {"body_hash": HASH_RE.search(tab.get(path).text).group(1)})
    out = bansha(morning.env, "drafts", str(morning.game))
    assert re.search(rf"#{draft['id']}\s+投票结果\s+第2天\s+已批准", out)
    result = bansha(morning.env, "drafts", "approve", str(morning.game), str(draft["id"]), code=1)
    assert "已经批准过了" in result


def test_the_api_approves_only_the_version_the_director_saw(morning, tab_for):
    """Tab A read draft #N through the API; tab B edits it in the page: A's approval names
    what A saw and is refused, in Chinese, with nothing approved."""
    app = make_app(morning)
    draft = result_draft(morning)
    api = f"/api/games/m135-demo/drafts/{draft['id']}"
    auth = {"Authorization": "Bearer " + _token()}
    reader, editor = tab_for(app), tab_for(app)
    (row,) = [
        d
        for d in reader.client.get("/api/games/m135-demo/drafts", headers=auth).json()["drafts"]
        if d["id"] == draft["id"]
    ]
    page = f"/g/m135-demo/drafts/{draft['id']}"
    shown = HASH_RE.search(editor.get(page).text).group(1)
    edited = draft["body"] + "\n（导演补充：改过的结果）"
    editor.follow(editor.post(page + "/edit", {"body": edited, "body_hash": shown}))
    # no version named: 428, nothing approved
    for body in (None, {}, {"why": "x"}, {"body_hash": ""}):
        r = reader.client.post(api + "/approve", headers=auth, json=body)
        assert r.status_code == 428, r.text
        assert r.json()["error"] == (
            f'批准第 {draft["id"]} 号草稿须说明你看过的版本：请求中没有 "body_hash"'
            "（取自草稿的 body_hash 和 subject，见 GET …/drafts），未作任何改动"
        )
    # the version read before the edit: 409, nothing approved
    r = reader.client.post(api + "/approve", headers=auth, json={"body_hash": row["body_hash"]})
    assert r.status_code == 409
    assert r.json()["error"] == (
        f"第 {draft['id']} 号草稿在你打开之后被修改过（另一个页面或命令行），"
        "请看过最新的正文后再批准"
    )
    assert draft_state(morning, draft["id"]) == "pending"
    # nor rejected on the strength of an old version (a rejection naming none still goes)
    r = reader.client.post(
        api + "/reject", headers=auth, json={"why": "再核对", "body_hash": row["body_hash"]}
    )
    assert r.status_code == 409 and "请看过最新的正文后再驳回" in r.json()["error"]
    assert draft_state(morning, draft["id"]) == "pending"
    # read again, it is approved
    (row,) = [
        d
        for d in reader.client.get("/api/games/m135-demo/drafts", headers=auth).json()["drafts"]
        if d["id"] == draft["id"]
    ]
    assert row["body"] == edited
    r = reader.client.post(api + "/approve", headers=auth, json={"body_hash": row["body_hash"]})
    assert r.status_code == 200 and r.json()["state"] == "approved"


def test_a_page_without_the_version_approves_nothing(morning, tab_for):
    tab = tab_for(make_app(morning))
    draft = result_draft(morning)
    path = f"/g/m135-demo/drafts/{draft['id']}"
    tab.get(path)
    for what, form in (("approve", {}), ("edit", {"body": draft["body"] + "！"})):
        r = tab.post(f"{path}/{what}", form)
        if what == "edit":
            assert r.status_code == 409
            shown = html.unescape(r.text)
        else:
            shown = html.unescape(tab.follow(r).text)
        assert f"提交中没有你看过的第 {draft['id']} 号草稿的版本，未作任何改动" in shown
    store = morning.store()
    try:
        d = get_draft(store, draft["id"])
    finally:
        store.close()
    assert d.state.value == "pending" and d.body == draft["body"]
