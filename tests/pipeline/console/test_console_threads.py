"""The console shows the drafts of the threads bansha opens: a new thread's
subject, when it may go out and its first post as the forum will show it, approved from the
phone like any draft; a vote thread's close the same way. The console itself never posts."""

from __future__ import annotations

import html

from pipeline.drafts import get_draft, list_drafts
from tests.pipeline.console.support import MORNING, TOKEN, at, bansha, make_app

DAY3 = """
[[days]]
day = 3
opens = 2026-12-03T10:00:00+08:00
closes = 2026-12-03T22:00:00+08:00
"""


def _with_day_3(forum) -> None:
    text = forum.game.read_text("utf-8").replace("[director]", "fid = 3\n\n[director]", 1)
    forum.game.write_text(text + DAY3, "utf-8")


def test_a_new_thread_draft_shows_its_subject_and_time_and_is_approved_in_the_console(
    forum, tab_for
):
    _with_day_3(forum)
    forum.cycle(MORNING)
    store = forum.store()
    try:
        drafts = {d.role: d for d in list_drafts(store) if d.kind == "newthread"}
        close = [d for d in list_drafts(store) if d.kind == "close"]
    finally:
        store.close()
    # the progress thread is the game's one (day 2's 2013, [threads] progress = "game")
    assert set(drafts) == {"discussion", "vote"}
    app = make_app(forum)
    tab = tab_for(app)
    listing = html.unescape(tab.get("/g/m135-demo/drafts").text)
    assert "「[M135]第3天讨论帖」" in listing
    page = tab.get(f"/g/m135-demo/drafts/{drafts['discussion'].id}")
    shown = html.unescape(page.text)
    assert '<dd id="subject">[M135]第3天讨论帖</dd>' in shown
    assert "12-03 10:00（批准后也要到这时才发出）" in shown
    assert "批准开帖（开门时由 cycle 开出，电梯随后发在二楼）" in shown
    assert "第3天 讨论帖" in shown  # the first post, as the forum will show it
    # a vote thread's close (day 2's, written in the game file) is approved the same way
    assert [d.tid for d in close] == [2012]
    page = html.unescape(tab.get(f"/g/m135-demo/drafts/{close[0].id}").text)
    assert "锁定帖子 2012" in page and "批准锁帖（关门后由 cycle 执行）" in page

    m = tab.get(f"/g/m135-demo/drafts/{drafts['discussion'].id}")
    body_hash = m.text.split('name="body_hash" value="')[1].split('"')[0]
    subject = html.unescape(m.text.split('name="subject" value="')[1].split('"')[0])
    assert subject == "[M135]第3天讨论帖"
    approve = f"/g/m135-demo/drafts/{drafts['discussion'].id}/approve"
    # the subject seen is part of the version: a page that did not send it approves nothing
    r = tab.post(approve, {"body_hash": body_hash})
    assert "提交中没有你看过的第" in html.unescape(tab.follow(r).text)
    r = tab.post(approve, {"body_hash": body_hash, "subject": subject})
    assert r.status_code == 303
    before = set(forum.sim.thread_tids())
    forum.cycle(at("2026-12-03T09:30:00+08:00"))
    assert set(forum.sim.thread_tids()) == before  # not before the day opens
    forum.cycle(at("2026-12-03T10:02:00+08:00"))
    [new] = set(forum.sim.thread_tids()) - before
    assert forum.sim.thread_subject(new) == "[M135]第3天讨论帖"
    overview = html.unescape(
        tab_for(make_app(forum, at("2026-12-03T10:03:00+08:00"))).get("/").text
    )
    assert f"第3天 讨论帖 tid={new}" in overview


def test_a_subject_changed_since_it_was_seen_is_not_approved(forum, tab_for):
    """The subject is part of what the director approves: one edited in the CLI after the
    page (or the API) was read is refused in both, nothing approved."""
    _with_day_3(forum)
    forum.cycle(MORNING)
    store = forum.store()
    try:
        (d,) = [x for x in list_drafts(store) if x.kind == "newthread" and x.role == "vote"]
    finally:
        store.close()
    app = make_app(forum)
    tab = tab_for(app)
    page = tab.get(f"/g/m135-demo/drafts/{d.id}").text
    assert f'name="subject" value="{html.escape(d.subject)}"' in page
    auth = {"Authorization": f"Bearer {TOKEN}"}
    bansha(forum.env, "drafts", "edit", str(forum.game), str(d.id), "--subject", "[M135]改过的标题")
    seen = {"body_hash": d.body_hash, "subject": d.subject}
    r = tab.post(f"/g/m135-demo/drafts/{d.id}/approve", seen)
    assert "的新帖标题在你打开之后被改为「[M135]改过的标题」" in html.unescape(tab.follow(r).text)
    api = f"/api/games/m135-demo/drafts/{d.id}/approve"
    r = tab.client.post(api, headers=auth, json=seen)
    assert r.status_code == 409 and "「[M135]改过的标题」" in r.json()["error"]
    r = tab.client.post(api, headers=auth, json={"body_hash": d.body_hash})
    assert r.status_code == 428
    assert '请求中没有 "subject"' in r.json()["error"]
    store = forum.store()
    try:
        assert get_draft(store, d.id).state.value == "pending"
    finally:
        store.close()
    r = tab.client.post(api, headers=auth, json={**seen, "subject": "[M135]改过的标题"})
    assert r.status_code == 200 and r.json()["state"] == "approved"
