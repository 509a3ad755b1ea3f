"""Evidence never gets worse.

The mobile API v4 drops ``[size]``, a shown ``[hide]``'s box and the ``本帖最后由 … 编辑`` note
(docs/discuz.md §3.3). A post read from it after the desktop page (``source = mobile-api``, or the
``auto`` fallback) must keep its marks and edit note; read from it first, the desktop page later
enriches the same revision; a real change of content is still a new revision.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from parsers.records import EditNote, Mark, MarkKind, Post, ThreadPage
from pipeline.cycle import run_cycle, targets_due
from pipeline.discuz.client import DiscuzClient, RetryPolicy
from pipeline.discuz.crawl import Crawler, ForumConfig
from pipeline.game.gamefile import load_game
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import Store, open_store

TZ8 = timezone(timedelta(hours=8))
T0 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ8)
ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"
AFTER = datetime(2026, 12, 3, 9, 0, tzinfo=TZ8)

BIG = Mark(MarkKind.ENLARGED, "5", "我是好人")
EDIT = EditNote("馄饨", datetime(2026, 12, 2, 10, 30, tzinfo=TZ8))


def reading(source: str, text: str = "我是好人，请大家相信我。", *, rich: bool = True) -> Post:
    """One reading of pid 101: the desktop page shows the [size] mark and the edit note."""
    marks = (BIG, Mark(MarkKind.BBCODE, "font", "我是好人")) if rich else ()
    return Post(
        tid=4,
        pid=101,
        floor=2,
        author="馄饨",
        uid=103,
        posted_at=T0,
        message_html=text,
        text=text,
        edit=EDIT if rich else None,
        marks=marks,
        source=source,
    )


def save(store: Store, post: Post, when: datetime):
    store.register_thread(4, day=2, role="discussion")
    return store.save_page(
        ThreadPage(tid=4, page=1, total_pages=1, posts=(post,)),
        source="html" if post.source == "html" else "mobile-api",
        url="http://f/x",
        status=200,
        headers={},
        body=f"{post.source}{when}".encode(),
        fetched_at=when,
        ppp=None,
    )


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "game.db")
    yield s
    s.close()


def marks_of(row) -> set[str]:
    return {m["kind"] for m in json.loads(row["marks"])}


def test_a_poorer_reading_never_replaces_the_desktop_one(store):
    save(store, reading("html"), T0)
    w = save(store, reading("mobile", rich=False), T0 + timedelta(hours=1))
    assert (w.new_posts, w.changed_posts, w.enriched_posts) == (0, 0, 0)
    save(store, reading("html"), T0 + timedelta(hours=2))
    save(store, reading("mobile", rich=False), T0 + timedelta(hours=3))
    [post] = store.posts(4)
    assert post.edit == EDIT and BIG in post.marks and post.source == "html"
    revs = store.revisions(4, 101)
    assert len(revs) == 1  # no flipping between a [size] and a plain revision
    assert "enlarged" in marks_of(revs[0]) and revs[0]["edit_at"] == EDIT.edited_at.isoformat()
    row = store.post_rows(4)[0]
    assert row["last_seen_at"] == (T0 + timedelta(hours=3)).isoformat()  # seen, all the same


def test_a_richer_reading_enriches_the_same_revision(store):
    save(store, reading("mobile", rich=False), T0)
    w = save(store, reading("html"), T0 + timedelta(hours=1))
    assert (w.new_posts, w.changed_posts, w.enriched_posts) == (0, 0, 1)
    [post] = store.posts(4)
    assert post.edit == EDIT and BIG in post.marks and post.source == "html"
    [rev] = store.revisions(4, 101)  # the same content: still revision 1, now with the evidence
    assert rev["revision"] == 1 and rev["seen_at"] == T0.isoformat()
    assert "enlarged" in marks_of(rev) and rev["edit_at"] == EDIT.edited_at.isoformat()
    page_id = store.post_rows(4)[0]["page_id"]
    assert rev["page_id"] == page_id  # it points at the page that shows the evidence


def test_a_real_change_read_from_the_poorer_source_is_still_a_new_revision(store):
    save(store, reading("html"), T0)
    changed = reading("mobile", "我是好人，投票对象：饺子", rich=False)
    w = save(store, changed, T0 + timedelta(hours=1))
    assert w.changed_posts == 1
    revs = store.revisions(4, 101)
    assert [r["text"] for r in revs] == ["我是好人，请大家相信我。", "我是好人，投票对象：饺子"]
    # read again from the desktop page: the new revision gains its marks, no third one
    save(store, reading("html", "我是好人，投票对象：饺子"), T0 + timedelta(hours=2))
    revs = store.revisions(4, 101)
    assert len(revs) == 2 and "enlarged" in marks_of(revs[1])
    assert "enlarged" in marks_of(revs[0])  # the first revision's evidence is untouched


def test_the_same_source_adding_a_mark_is_an_edit(store):
    save(store, reading("html", rich=False), T0)
    w = save(store, reading("html"), T0 + timedelta(hours=1))
    assert w.changed_posts == 1 and len(store.revisions(4, 101)) == 2


def test_an_edit_note_that_appears_on_the_same_content_is_kept(store):
    plain = reading("html", rich=False)
    save(store, plain, T0)
    noted = Post(**{**{f: getattr(plain, f) for f in plain.__slots__}, "edit": EDIT})
    w = save(store, noted, T0 + timedelta(hours=1))
    assert w.enriched_posts == 1
    assert store.posts(4)[0].edit == EDIT
    assert store.revisions(4, 101)[0]["edit_at"] == EDIT.edited_at.isoformat()


# --------------------------------------------------------------------------- the demo game


def crawler_for(sim: ForumSim, store: Store, source: str):
    def crawl(targets, full):
        http = httpx.Client(transport=sim.transport())
        client = DiscuzClient(
            http,
            base_url=sim.base_url,
            min_interval_s=0,
            policy=RetryPolicy(max_attempts=2, initial_wait_s=0.01, jitter_s=0),
            sleep=lambda s: None,
        )
        forum = ForumConfig(base_url=sim.base_url, tz=TZ8, source=source)
        return Crawler(client, store, forum).crawl(targets, full=full)

    return crawl


def director_view(store: Store) -> tuple[set, dict]:
    flags = {
        (r["kind"], r["player"], r["day"], r["reason"])
        for r in store.db.query("SELECT kind, player, day, reason FROM flags")
    }
    edits = {
        r["pid"]: (r["edit_editor"], r["edit_at"])
        for r in store.db.query("SELECT pid, edit_editor, edit_at FROM posts")
        if r["edit_at"]
    }
    return flags, edits


@pytest.fixture
def demo(tmp_path):
    game = load_game(GAME, env={})
    sim = ForumSim.from_script(GAME, SCRIPT, SimClock(AFTER))
    store = open_store(tmp_path / "demo.db")
    yield game, sim, store
    store.close()


def test_a_mobile_reread_keeps_the_font_flag_and_the_edit_time(demo):
    game, sim, store = demo
    html = crawler_for(sim, store, "html")
    assert not run_cycle(game, store, now=AFTER, crawl=html).errors
    flags, edits = director_view(store)
    font = [f for f in flags if f[0] == "font" and f[1] == "馄饨"]
    assert font and "放大字体" in font[0][3]  # demo_posts.toml: 馄饨's [size=5]
    assert edits  # the edited vote of day 2 carries its 本帖最后由 note
    revisions = store.counts()["post_revisions"]

    mobile = crawler_for(sim, store, "mobile-api")
    report = mobile(targets_due(game, AFTER), True)
    assert report.ok and sum(t.changed_posts for t in report.threads) == 0
    run_cycle(game, store, now=AFTER, crawl=mobile)
    assert director_view(store) == (flags, edits)
    assert store.counts()["post_revisions"] == revisions  # nothing flipped
    html(targets_due(game, AFTER), True)
    assert store.counts()["post_revisions"] == revisions


def test_a_game_first_read_through_the_mobile_api_gains_the_evidence(demo, tmp_path):
    game, sim, store = demo
    mobile = crawler_for(sim, store, "mobile-api")
    run_cycle(game, store, now=AFTER, crawl=mobile)
    poor_flags, _ = director_view(store)
    assert not any(f[0] == "font" and f[1] == "馄饨" for f in poor_flags)  # not visible there
    html = crawler_for(sim, store, "html")
    report = html(targets_due(game, AFTER), True)
    assert sum(t.changed_posts for t in report.threads) == 0  # enriched, not edited
    run_cycle(game, store, now=AFTER, crawl=html)

    reference = open_store(tmp_path / "reference.db")  # the same game read from pages only
    run_cycle(game, reference, now=AFTER, crawl=crawler_for(sim, reference, "html"))
    assert director_view(store) == director_view(reference)
    assert store.counts()["post_revisions"] == reference.counts()["post_revisions"]
    reference.close()


def test_the_auto_fallback_does_not_make_the_evidence_worse(demo):
    game, sim, store = demo
    auto = crawler_for(sim, store, "auto")
    run_cycle(game, store, now=AFTER, crawl=auto)
    before = director_view(store)
    revisions = store.counts()["post_revisions"]
    # the desktop pages break for a while: auto re-reads through the mobile API
    sim.faults.add("truncate", count=1000, match="mod=viewthread", clean=True)
    report = auto(targets_due(game, AFTER), True)
    assert report.ok, report.errors
    assert store.get_meta("mobile_api") == "yes"
    sim.faults.clear()
    run_cycle(game, store, now=AFTER, crawl=auto)
    assert director_view(store) == before
    assert store.counts()["post_revisions"] == revisions
