"""A cycle stores what changed, once.

A page's raw body is kept when its posts changed (first sighting, new post, edit, vanish), not on
every fetch; bodies are compressed; every fetch is a small ``pages`` row; migration 010 compacts
a store written the old way. The raw evidence for every stored reading stays re-derivable: the
kept bodies alone, parsed again, give the same posts and revisions (``replay_kept_pages``).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from click.testing import CliRunner

from parsers.records import EditNote, Mark, MarkKind, Post, PostState, ThreadPage
from pipeline.cli import cli
from pipeline.discuz.client import DiscuzClient, Fetched, RetryPolicy
from pipeline.discuz.crawl import Crawler, CrawlTarget, ForumConfig, parse_page, replay_kept_pages
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import (
    BODY_ZLIB,
    Store,
    decode_body,
    encode_body,
    is_encoded,
    open_store,
)
from pipeline.store.scrub import SCRUB_MARK, scrub_body
from tests.pipeline.conftest import forum_world

TZ = ZoneInfo("Asia/Shanghai")
T0 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
USERS = {"导演": 2, "饺子": 3, "包子": 4, "馄饨": 5}
TID, OTHER = 4, 5
KIB = 1024


# -- a recorded forum and its crawls ---------------------------------------------------------
class Recording(httpx.BaseTransport):
    """The simulator's transport, keeping every response body it served."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        self.bodies.append(response.read())
        return response


def forum(n_posts: int = 25) -> tuple[ForumSim, SimClock]:
    clock = SimClock(T0 + timedelta(days=1))
    sim = ForumSim(users=USERS, clock=clock, floodctrl_s=0)
    sim.add_thread(TID, "第二天投票帖", "导演", "【第二天投票帖】请投票", T0)
    sim.add_thread(OTHER, "第二天讨论帖", "导演", "【第二天讨论帖】", T0)
    names = ["饺子", "包子", "馄饨"]
    for i in range(1, n_posts):
        sim.add_post(TID, names[i % 3], f"第{i}条：投票对象：包子", T0 + timedelta(minutes=i))
    for i in range(1, 6):
        sim.add_post(OTHER, names[i % 3], f"讨论{i}", T0 + timedelta(minutes=i))
    return sim, clock


def crawler(
    sim: ForumSim, store: Store, *, source: str = "html", cookie: str | None = None
) -> Crawler:
    recording = Recording(sim.transport())
    http = httpx.Client(transport=recording, follow_redirects=True)
    client = DiscuzClient(
        http,
        base_url=sim.base_url,
        min_interval_s=0,
        cookie=cookie,
        policy=RetryPolicy(max_attempts=3, initial_wait_s=0.01, jitter_s=0),
        sleep=lambda s: None,
    )
    c = Crawler(client, store, ForumConfig(base_url=sim.base_url, tz=TZ, source=source))
    c.recording = recording  # type: ignore[attr-defined]
    return c


def crawl(sim: ForumSim, store: Store, *, full: bool = False, **kw: Any) -> Crawler:
    c = crawler(sim, store, **kw)
    report = c.crawl([CrawlTarget(TID, 2, "vote"), CrawlTarget(OTHER, 2, "discussion")], full=full)
    assert report.ok, report.errors
    return c


def play(sim: ForumSim, clock: SimClock, store: Store, *, mobile: bool = True) -> None:
    """A day of a game's crawls: idle cycles, full re-reads, new posts, an edit, a deletion
    that renumbers the floors (posts move to the page before), a 屏蔽, a failed fetch."""
    crawl(sim, store)
    for _ in range(6):  # nothing new
        clock.advance(300)
        crawl(sim, store)
    clock.advance(300)
    crawl(sim, store, full=True)  # nothing new, every page
    clock.advance(60)
    sim.add_post(TID, "饺子", "新的一条：投票对象：馄饨", clock())
    clock.advance(300)
    crawl(sim, store)
    pids = sim.thread_pids(TID)
    sim.edit_post(pids[12], "第12条：投票对象：馄饨（改票）", clock())
    sim.delete_post(pids[5], at=clock())
    sim.block_post(pids[20], at=clock())
    clock.advance(300)
    crawl(sim, store, full=True)
    clock.advance(300)
    crawl(sim, store, full=True)  # after the renumbering: nothing new
    for _ in range(6):  # nothing new
        clock.advance(300)
        crawl(sim, store)
    sim.faults.add("flood", count=1, match=f"tid={OTHER}")
    clock.advance(300)
    crawl(sim, store)  # flood control answered once, kept as evidence, then the page
    if mobile:
        clock.advance(300)
        crawl(sim, store, source="mobile-api")
        clock.advance(300)
        crawl(sim, store, source="mobile-api")


def revisions(store: Store, *, where: bool = True) -> list[tuple[Any, ...]]:
    """Every stored revision; ``where``: with the time of the fetch it points at (ids differ
    per store)."""
    return [
        tuple(r) if where else tuple(r)[:-1]
        for r in store.db.execute(
            "SELECT r.tid, r.pid, r.revision, r.seen_at, r.content_hash, r.state, r.text, "
            "r.message_html, r.quoted_pids, r.marks, r.edit_editor, r.edit_at, p.fetched_at "
            "FROM post_revisions r LEFT JOIN pages p ON p.id = r.page_id "
            "ORDER BY r.tid, r.pid, r.revision"
        )
    ]


def replayed(store: Store, tmp_path: Path, base_url: str) -> Store:
    """A fresh store holding what the kept bodies of ``store`` alone give."""
    again = open_store(tmp_path / "replayed.db")
    assert replay_kept_pages(store, again, ForumConfig(base_url=base_url, tz=TZ)) > 0
    return again


def on_disk(path: Path) -> int:
    """The store's bytes, its write-ahead log checkpointed into the main file first."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return sum(
        Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists()
    )


def make_old_format(monkeypatch: pytest.MonkeyPatch) -> None:
    """Write as bansha did before migration 010: every fetch keeps its own body, uncompressed."""
    monkeypatch.setattr("pipeline.store.core.encode_body", lambda body: body)
    monkeypatch.setattr(Store, "last_kept_page", lambda self, tid, page, source: None)


def to_old_schema(path: Path) -> None:
    """The columns and the migration record an old store did not have."""
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE pages DROP COLUMN body_kept")
    conn.execute("ALTER TABLE pages DROP COLUMN posts_sig")
    conn.execute("DELETE FROM _migrations WHERE name = '010_compact_bodies'")
    conn.commit()
    conn.close()


# -- a cycle with nothing new costs a row per fetch -------------------------------------------
@pytest.fixture
def demo_forum(tmp_path):
    # day 2's last half hour: the script's last post before the close is at 21:20
    start = datetime.fromisoformat("2026-12-02T21:30:00+08:00")
    with forum_world(tmp_path, start) as (sim, clock, game, env):
        yield sim, clock, game, env, tmp_path / "game.db"


def cycle(env: dict[str, str], game: Path, when: datetime) -> str:
    result = CliRunner().invoke(cli, ["cycle", str(game), "--as-of", when.isoformat()], env=env)
    assert result.exit_code == 0, result.output
    return result.output


def test_nothing_new_cycles_add_at_most_4_kib_each_and_a_fetch_row_each(demo_forum):
    """The demo game (it grew 151.6 KiB per idle cycle): ten cron cycles with
    nothing new add a small row per fetch, no body, ≤ 4 KiB per cycle."""
    _sim, clock, game, env, db = demo_forum
    when = clock()
    cycle(env, game, when)  # the first crawl, the running tally and the reminder drafted
    when += timedelta(minutes=1)
    clock.set(when)
    cycle(env, game, when)
    before = on_disk(db)
    store = open_store(db)
    pages, bodies = store.counts()["pages"], store.db.table("page_bodies").count
    threads = store.db.table("threads").count
    last_id = store.db.execute("SELECT MAX(id) FROM pages").fetchone()[0]
    store.close()
    n = 10
    for _ in range(n):  # till 21:51, before the close at 22:00
        when += timedelta(minutes=2)
        clock.set(when)
        assert cycle(env, game, when) == ""  # a successful cycle says nothing
    grown = on_disk(db) - before
    assert grown <= n * 4 * KIB, f"{grown / n:.0f} B per nothing-new cycle"
    store = open_store(db)
    assert store.db.table("page_bodies").count == bodies  # no body kept
    assert store.counts()["pages"] == pages + n * threads  # every fetch recorded
    rows = list(store.db.query("SELECT * FROM pages WHERE id > ?", [last_id]))
    assert all(r["body_kept"] == 0 and r["headers"] is None for r in rows)
    assert all(r["status"] == 200 and r["url"] and r["fetched_at"] for r in rows)
    for r in rows:  # each points at the last kept body of its page, which shows the same posts
        kept = store.last_kept_page(r["tid"], r["page"], r["source"])
        assert kept is not None and r["sha256"] == kept["sha256"]
        assert store.body(r["sha256"]) is not None
    store.close()


def test_a_body_is_kept_only_when_the_pages_posts_changed(tmp_path):
    sim, clock = forum()
    store = open_store(tmp_path / "game.db")
    crawl(sim, store)  # 3 + 1 pages, first sighting: kept
    assert store.db.table("page_bodies").count == 4
    clock.advance(300)
    crawl(sim, store, full=True)
    assert store.db.table("page_bodies").count == 4  # nothing changed: nothing kept
    assert store.db.execute("SELECT COUNT(*) FROM pages WHERE body_kept = 0").fetchone()[0] == 4
    # an edit on page 2: that page's body is kept, the revision points at it
    pid = sim.thread_pids(TID)[12]
    sim.edit_post(pid, "第12条：投票对象：馄饨", clock())
    clock.advance(300)
    crawl(sim, store, full=True)
    assert store.db.table("page_bodies").count == 5
    rev = store.revisions(TID, pid)[-1]
    assert (rev["revision"], rev["text"]) == (2, "第12条：投票对象：馄饨")
    page = store.db.execute(
        "SELECT page, body_kept, sha256 FROM pages WHERE id = ?", [rev["page_id"]]
    ).fetchone()
    assert page[:2] == (2, 1)
    assert "投票对象：馄饨".encode() in store.body(page[2])
    assert store.post_rows(TID)[12]["page_id"] == rev["page_id"]
    # a deletion that renumbers: the page that lacks the post is kept, and so is every page
    # whose floors moved; the pages after it too (floors are evidence of where a post was)
    gone = sim.thread_pids(TID)[3]
    sim.delete_post(gone, at=clock())
    clock.advance(300)
    before = store.db.table("page_bodies").count
    crawl(sim, store, full=True)
    assert store.revisions(TID, gone)[-1]["state"] == "vanished"
    vanished_at = store.revisions(TID, gone)[-1]["seen_at"]
    lacking = store.db.execute(
        "SELECT body_kept FROM pages WHERE tid = ? AND page = 1 AND fetched_at = ?",
        [TID, vanished_at],
    ).fetchone()
    assert lacking == (1,)
    assert store.db.table("page_bodies").count == before + 3
    # and reading it all again: nothing kept
    clock.advance(300)
    before = store.db.table("page_bodies").count
    crawl(sim, store, full=True)
    assert store.db.table("page_bodies").count == before
    store.close()


def assert_every_reading_is_shown_by_its_kept_body(store: Store, base_url: str) -> None:
    """Every post and revision points at a fetch whose body was kept and, parsed again, shows
    that post with that content (a vanished one: as it was last read)."""
    forum_cfg = ForumConfig(base_url=base_url, tz=TZ)
    for table in ("posts", "post_revisions"):
        for row in store.db.query(f"SELECT * FROM {table}"):
            page = store.db.execute(
                "SELECT tid, page, source, body_kept, url, status, headers, fetched_at "
                "FROM pages WHERE id = ?",
                [row["page_id"]],
            ).fetchone()
            assert page[3] == 1, (table, row["pid"])
            fetched = Fetched(
                page[4],
                page[5],
                json.loads(page[6]),
                store.page_body(row["page_id"]),
                datetime.fromisoformat(page[7]),
                1,
            )
            parsed = parse_page(forum_cfg, base_url, page[2], page[0], page[1], fetched)
            shown = {p.pid: p for p in parsed.posts}
            assert shown[row["pid"]].content_hash == row["content_hash"], (table, row["pid"])


def test_every_stored_reading_points_at_a_kept_body_that_shows_it(tmp_path):
    sim, clock = forum()
    store = open_store(tmp_path / "game.db")
    play(sim, clock, store)
    assert_every_reading_is_shown_by_its_kept_body(store, sim.base_url)
    store.close()


def test_the_kept_bodies_alone_re_derive_the_same_posts_and_revisions(tmp_path):
    sim, clock = forum()
    store = open_store(tmp_path / "game.db")
    play(sim, clock, store)
    kept = store.db.execute("SELECT COUNT(*) FROM pages WHERE body_kept = 1").fetchone()[0]
    assert kept < store.counts()["pages"] / 2  # most fetches kept nothing
    again = replayed(store, tmp_path, sim.base_url)
    assert again.posts() == store.posts()
    assert revisions(again) == revisions(store)
    assert {p.state for p in store.posts()} >= {PostState.VANISHED, PostState.BLOCKED}
    again.close()
    store.close()


def test_bodies_are_compressed_and_read_back_byte_identical(tmp_path):
    sim, _ = forum()
    store = open_store(tmp_path / "game.db")
    c = crawl(sim, store)
    served = c.recording.bodies
    rows = store.db.execute("SELECT sha256, body FROM page_bodies").fetchall()
    assert rows and all(is_encoded(r[1]) for r in rows)
    stored = {r[0]: store.body(r[0]) for r in rows}
    for digest, body in stored.items():
        assert hashlib.sha256(body).hexdigest() == digest  # the key: the uncompressed body
    assert sorted(stored.values()) == sorted(scrub_body(b) for b in served)
    raw_size = sum(len(b) for b in stored.values())
    assert sum(len(r[1]) for r in rows) < raw_size / 3
    # a body stored before (raw, no marker) reads as it is; the marker tells them apart
    old = b"<html>old body</html>"
    with store.atomic():
        store.db.execute(
            "INSERT INTO page_bodies VALUES (?, ?)", [hashlib.sha256(old).hexdigest(), old]
        )
    assert store.body(hashlib.sha256(old).hexdigest()) == old
    assert decode_body(encode_body(old)) == old and encode_body(old).startswith(BODY_ZLIB)
    assert store.body("0" * 64) is None
    store.close()


def test_compressed_bodies_are_still_scrubbed_of_the_session(tmp_path):
    """Compression does not hide a secret: what is compressed is the scrubbed body."""
    sim, _ = forum()
    cookie = sim.login_cookie("饺子")
    values = [part.split("=", 1)[1] for part in cookie.split("; ")]
    store = open_store(tmp_path / "game.db")
    crawl(sim, store, cookie=cookie)
    bodies = b"".join(store.body(r[0]) for r in store.db.execute("SELECT sha256 FROM page_bodies"))
    assert SCRUB_MARK.encode() in bodies  # the formhash was there, and is replaced
    for value in values:
        assert value.encode() not in bodies, value
    store.close()


# -- migration 010 ----------------------------------------------------------------------------
def test_the_migration_compacts_a_store_written_the_old_way(tmp_path, monkeypatch):
    """An old store made by this code with the two changes undone (every fetch keeps its own
    raw body): migration 010 drops only the bodies nothing can need, compresses the rest,
    VACUUMs; every revision keeps the body it was read from and the kept bodies re-derive the
    same posts and revisions."""
    sim, clock = forum()
    path = tmp_path / "old.db"
    with monkeypatch.context() as m:
        make_old_format(m)
        store = open_store(path)
        play(sim, clock, store)
        raw = {r[0]: bytes(r[1]) for r in store.db.execute("SELECT sha256, body FROM page_bodies")}
        assert all(hashlib.sha256(b).hexdigest() == d for d, b in raw.items())  # old: raw
        fetches = store.counts()["pages"]
        assert len(raw) == fetches  # old: a body per fetch
        posts, revs = store.posts(), revisions(store)
        errors = store.db.execute("SELECT id, sha256 FROM pages WHERE outcome != 'ok'").fetchall()
        assert errors  # the flood-control answer
        store.close()
    to_old_schema(path)
    size = on_disk(path)

    store = open_store(path)  # migration 010 runs
    assert "010_compact_bodies" in {
        r["name"] for r in store.db.query("SELECT name FROM _migrations")
    }
    assert on_disk(path) < size / 3  # compacted and VACUUMed
    assert store.counts()["pages"] == fetches  # every fetch still recorded
    assert store.posts() == posts and revisions(store) == revs  # nothing derived changed
    bodies = store.db.execute("SELECT sha256, body FROM page_bodies").fetchall()
    assert all(is_encoded(b) for _, b in bodies)
    assert len(bodies) < fetches / 2
    for digest, _ in bodies:
        assert store.body(digest) == raw[digest]  # byte-identical
    # the errors keep their bodies; every fetch points at a body of its own page
    for page_id, digest in errors:
        assert store.db.execute(
            "SELECT sha256, body_kept FROM pages WHERE id = ?", [page_id]
        ).fetchone() == (digest, 1)
    for r in store.db.query("SELECT * FROM pages WHERE body_kept = 0"):
        assert r["outcome"] == "ok" and r["headers"] is None
        owner = store.db.execute(
            "SELECT tid, page, source FROM pages WHERE sha256 = ? AND body_kept = 1 AND id < ?",
            [r["sha256"], r["id"]],
        ).fetchone()
        assert owner == (r["tid"], r["page"], r["source"])
    # every revision and every post: the page it points at kept its body; the fetch that
    # recorded each revision (first sighting, edit, vanishing) too
    for table in ("posts", "post_revisions"):
        for row in store.db.query(f"SELECT page_id FROM {table}"):
            kept = store.db.execute(
                "SELECT body_kept FROM pages WHERE id = ?", [row["page_id"]]
            ).fetchone()
            assert kept == (1,) and store.page_body(row["page_id"]) is not None
    for row in store.db.query("SELECT tid, seen_at FROM post_revisions"):
        assert store.db.execute(
            "SELECT COUNT(*) FROM pages WHERE tid = ? AND fetched_at = ? AND body_kept = 1",
            [row["tid"], row["seen_at"]],
        ).fetchone()[0]
    assert_every_reading_is_shown_by_its_kept_body(store, sim.base_url)
    again = replayed(store, tmp_path, sim.base_url)
    assert again.posts() == posts
    # the same revisions; a vanished one may copy an earlier kept sighting of the same reading
    # (the old store moved a post's page_id with every fetch)
    assert revisions(again, where=False) == [r[:-1] for r in revs]
    assert_every_reading_is_shown_by_its_kept_body(again, sim.base_url)
    again.close()
    # and the compacted store goes on storing only what changes
    bodies_now = store.db.table("page_bodies").count
    crawl(sim, store)
    crawl(sim, store)
    assert store.db.table("page_bodies").count <= bodies_now + 4  # each page's first new fetch
    n = store.db.table("page_bodies").count
    crawl(sim, store)
    assert store.db.table("page_bodies").count == n
    store.close()


def test_rerunning_the_scrub_migration_on_a_compacted_store_reads_through_the_marker(tmp_path):
    sim, _ = forum()
    path = tmp_path / "game.db"
    store = open_store(path)
    crawl(sim, store)
    before = {r[0]: store.body(r[0]) for r in store.db.execute("SELECT sha256 FROM page_bodies")}
    with store.atomic():
        store.db.execute("DELETE FROM _migrations WHERE name = '007_scrub_secrets'")
    store.close()
    store = open_store(path)
    after = {r[0]: store.body(r[0]) for r in store.db.execute("SELECT sha256 FROM page_bodies")}
    assert after == before
    store.close()


def test_a_fresh_store_is_not_vacuumed_and_has_the_new_columns(tmp_path):
    store = open_store(tmp_path / "new.db")
    columns = store.db["pages"].columns_dict
    assert "body_kept" in columns and "posts_sig" in columns
    store.close()


# -- Store.posts: the same records, cheaper -----------------------------------------------------
def reference_post(row: dict[str, Any]) -> Post:
    """How posts were read before: every JSON column decoded."""
    edit = None
    if row.get("edit_editor") and row.get("edit_at"):
        edit = EditNote(row["edit_editor"], datetime.fromisoformat(row["edit_at"]))
    return Post(
        tid=row["tid"],
        pid=row["pid"],
        floor=row.get("floor"),
        author=row.get("author") or "",
        uid=row.get("uid") or 0,
        posted_at=datetime.fromisoformat(row["posted_at"]) if row.get("posted_at") else None,
        message_html=row.get("message_html") or "",
        text=row.get("text") or "",
        quoted_pids=tuple(json.loads(row.get("quoted_pids") or "[]")),
        quote_texts=tuple(json.loads(row.get("quote_texts") or "[]")),
        edit=edit,
        state=PostState(row["state"]),
        marks=tuple(
            Mark(MarkKind(m["kind"]), m["value"], m["text"])
            for m in json.loads(row.get("marks") or "[]")
        ),
        source=row.get("source") or "html",
    )


def reference_posts(store: Store, tid: int | None = None) -> list[Post]:
    sql = "SELECT * FROM posts" + (" WHERE tid = ?" if tid is not None else "")
    rows = store.db.query(sql + " ORDER BY tid, posted_ts, pid", [] if tid is None else [tid])
    return [reference_post(r) for r in rows]


def test_store_posts_gives_exactly_the_records_it_gave_before(demo_db, tmp_path):
    store = open_store(demo_db)
    try:
        posts = store.posts()
        assert posts == reference_posts(store)
        assert any(p.quoted_pids for p in posts) and any(p.marks for p in posts)
        for tid in {p.tid for p in posts}:
            assert store.posts(tid) == reference_posts(store, tid)
    finally:
        store.close()
    # every field, with and without its optional parts
    s = open_store(tmp_path / "g.db")
    s.register_thread(4, day=1, role="vote")
    marks = (Mark(MarkKind.RED, "#FF0000", "投票对象：包子"), Mark(MarkKind.BBCODE, "b", "x"))
    page = ThreadPage(
        tid=4,
        page=1,
        total_pages=1,
        posts=(
            Post(
                4, 1, 1, "饺子", 3, T0, "<b>a</b>", "a", (7, 8), ("引用", "二"), None, marks=marks
            ),
            Post(
                4,
                2,
                2,
                "包子",
                4,
                T0 + timedelta(minutes=1),
                "b",
                "b",
                edit=EditNote("包子", T0 + timedelta(minutes=5)),
                state=PostState.BLOCKED,
                source="mobile-api",
            ),
            Post(4, 3, 3, "", 0, None, "", ""),
        ),
    )
    s.save_page(
        page,
        source="html",
        url="u",
        status=200,
        headers={},
        body=b"x",
        fetched_at=T0 + timedelta(hours=1),
        ppp=None,
    )
    assert s.posts() == reference_posts(s) and len(s.posts()) == 3
    first = {p.pid: p for p in s.posts()}[1]
    assert first.marks == marks and first.quote_texts == ("引用", "二")
    s.close()
