"""Derive only on change: a cycle re-derives when something that can change a
verdict or a draft changed — a new post or an edit, a vanished post, a journal entry, the game
file — or when ``now`` crossed a moment (an opening, a close, the last hour, the reminder, the
申请加速 deadline). Otherwise it derives, writes and drafts nothing, and what is stored is what a
full re-derivation would have written (compared row for row on the demo and on a long game)."""

from __future__ import annotations

import random
import re
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pipeline.derive as derive_mod
from parsers.records import EditNote, Post, ThreadPage
from pipeline.cli import cli
from pipeline.cycle import (
    CRAWL_TABLES,
    EARLY,
    INPUT_TABLES,
    INPUTS_KEY,
    OUTPUT_TABLES,
    POST_INPUT_COLUMNS,
    RECORD_KEY,
    closed_days_to_reread,
    ensure_change_counters,
    first_rounds_to_reread,
    run_cycle,
    targets_due,
)
from pipeline.derive import crawled_tids, derive, write_derivation
from pipeline.derive.writeback import FINGERPRINT_KEY
from pipeline.discuz.crawl import CrawlReport, ThreadResult
from pipeline.drafts import make_drafts
from pipeline.drafts.inputs import GAME_KEY
from pipeline.game.gamefile import Game, load_game, parse_game
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import DRAFT_INPUTS_KEY, POST_COUNTS_KEY, Store, open_store
from tests.pipeline.conftest import DEMO_GAME as GAME
from tests.pipeline.conftest import DEMO_SCRIPT as SCRIPT
from tests.pipeline.conftest import ROOT, bansha, forum_world, sim_crawler

TZ = load_game(GAME, env={}).game.tz


def at(text: str) -> datetime:
    return datetime.fromisoformat(text + "+08:00")


# --------------------------------------------------------------------------- the demo world


@dataclass
class World:
    game: Game
    sim: ForumSim
    clock: SimClock
    store: Store
    db: Path
    derived: list[datetime]  # the as_of of every derive the cycle called
    skew: timedelta = timedelta(0)  # how far the forum's clock is ahead of ours

    def cycle(self, now: datetime, **kw: Any) -> Any:
        """One cron cycle at ``now`` as ``bansha cycle`` runs it (crawl, derive, draft)."""
        self.clock.set(now + self.skew)
        game, store = self.game, self.store
        return run_cycle(
            game,
            store,
            now=now,
            crawl=sim_crawler(self.sim, store, game.game.tz),
            draft=lambda d: make_drafts(
                game,
                store,
                d,
                now=now,
                unsettled=closed_days_to_reread(game, store, now),
                unsettled_first=first_rounds_to_reread(game, store, now),
            ),
            **kw,
        )

    def derives(self, *moments: datetime) -> list[int]:
        """How many times each cycle (at these moments, in order) called derive."""
        out = []
        for m in moments:
            before = len(self.derived)
            self.cycle(m)
            out.append(len(self.derived) - before)
        return out

    def bansha(self, command: str, options: str = "", *args: str) -> str:
        """``bansha COMMAND GAME --db DB OPTIONS ARGS`` (words split on spaces)."""
        argv = [*command.split(), str(GAME), "--db", str(self.db), *options.split(), *args]
        result = CliRunner().invoke(cli, argv, catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output


@pytest.fixture
def world(tmp_path, monkeypatch):
    game = load_game(GAME, env={})
    clock = SimClock(at("2026-12-02T20:40:00"))
    sim = ForumSim.from_script(GAME, SCRIPT, clock)
    db = tmp_path / "demo.db"
    store = open_store(db)
    derived: list[datetime] = []
    real = derive_mod.derive

    def counting(game: Game, store: Store, *, as_of: datetime) -> Any:
        derived.append(as_of)
        return real(game, store, as_of=as_of)

    # the cycle imports the derivation when it derives (pipeline.cycle._derive_and_record)
    monkeypatch.setattr(derive_mod, "derive", counting)
    w = World(game, sim, clock, store, db, derived)
    yield w
    store.close()


TABLES = {
    "votes": "day, seq",
    "tallies": "day",
    "post_counts": "day, player",
    "flags": "id",
    "drafts": "id",
    "draft_events": "id",
}


def verdicts(store: Store) -> dict[str, list[tuple[Any, ...]]]:
    """Every stored verdict and draft, row for row (time stamps included)."""
    return {
        t: [tuple(r) for r in store.db.execute(f"SELECT * FROM {t} ORDER BY {order}")]
        for t, order in TABLES.items()
    }


QUIET = at("2026-12-02T20:40:00")  # the demo's day 2: no post from 20:34:43 to 21:20:00


def settled(w: World) -> None:
    """A first cycle derives; the next one, nothing new, does not."""
    assert w.derives(QUIET, QUIET + timedelta(minutes=3)) == [1, 0]


# --------------------------------------------------------------------------- nothing new


def test_a_nothing_new_cycle_does_not_derive_and_changes_nothing(world):
    w = world
    first = w.cycle(QUIET)
    assert first.derived and not first.skipped and first.drafted
    stored = verdicts(w.store)
    record = w.store.get_meta(RECORD_KEY)
    w.sim.requests.clear()
    again = w.cycle(QUIET + timedelta(minutes=5))
    assert len(w.derived) == 1  # derive was not called the second time
    assert again.skipped and not again.derived and not again.verdicts_changed
    assert again.drafted == []
    assert "没有新内容，未重新推导" in again.lines()
    assert "结论没有变化" in again.lines() and "没有新草稿" in again.lines()
    # the crawl still asked once per thread; the verdicts, drafts and the record are untouched
    assert len(w.sim.requests) == len(targets_due(w.game, QUIET))
    assert verdicts(w.store) == stored
    assert w.store.get_meta(RECORD_KEY) == record


def test_rederive_forces_a_derivation_with_the_same_result(world):
    w = world
    settled(w)
    stored = verdicts(w.store)
    report = w.cycle(QUIET + timedelta(minutes=6), rederive=True)
    assert report.derived and not report.skipped and not report.verdicts_changed
    assert len(w.derived) == 2
    assert verdicts(w.store) == stored


def test_the_warnings_of_the_last_derivation_are_said_again_when_skipping(world, monkeypatch):
    # a day resolved on another count is something the director must act on every cycle
    w = world
    from pipeline.derive import Derivation

    monkeypatch.setattr(Derivation, "warnings", lambda self: ["第1天的引擎结算与当前计票不一致"])
    first = w.cycle(QUIET)
    again = w.cycle(QUIET + timedelta(minutes=5))
    assert again.skipped
    assert again.warnings == first.warnings == ["第1天的引擎结算与当前计票不一致"]


def test_without_drafting_before_a_skip_drafting_derives(world):
    """A derivation made without drafts (a benchmark, a test) does not stand for one with."""
    w = world
    game, store = w.game, w.store
    crawl = sim_crawler(w.sim, store, game.game.tz)
    run_cycle(game, store, now=QUIET, crawl=crawl)
    assert store.db.execute("SELECT count(*) FROM drafts").fetchone()[0] == 0
    assert w.derives(QUIET + timedelta(minutes=1), QUIET + timedelta(minutes=2)) == [1, 0]
    assert store.db.execute("SELECT count(*) FROM drafts").fetchone()[0] > 0


# --------------------------------------------------------------------------- each kind of change


def test_a_new_post_derives_once(world):
    w = world
    settled(w)

    def count() -> int:
        sql = "SELECT count FROM post_counts WHERE day = 2 AND player = '春卷'"
        return int(w.store.db.execute(sql).fetchone()[0])

    before = count()
    w.sim.add_post(2011, "春卷", "我再说一句：饺子很可疑。", at("2026-12-02T20:45:00"))
    assert w.derives(at("2026-12-02T20:46:00"), at("2026-12-02T20:50:00")) == [1, 0]
    assert count() == before + 1  # the new post is counted


def test_an_edited_vote_derives_once_and_is_flagged(world):
    w = world
    settled(w)
    vote = next(p for p in w.sim._thread(2012).posts if p.author == "油条" and not p.first)
    w.sim.edit_post(vote.pid, "投票对象：包子\n投票理由：改主意了", at("2026-12-02T20:45:00"))
    assert w.derives(at("2026-12-02T20:46:00"), at("2026-12-02T20:50:00")) == [1, 0]
    flags = {r[0] for r in w.store.db.execute("SELECT id FROM flags")}
    assert any("edited" in f and f"p{vote.pid}" in f for f in flags), flags


def test_a_vanished_post_derives_once(world):
    w = world
    settled(w)
    shown = [p for p in w.sim._thread(2012).posts if p.dateline <= QUIET.timestamp()]
    last = max((p for p in shown if not p.first), key=lambda p: p.pid)
    w.sim.delete_post(last.pid, at=at("2026-12-02T20:45:00"))
    assert w.derives(at("2026-12-02T20:46:00"), at("2026-12-02T20:50:00")) == [1, 0]
    state = w.store.db.execute("SELECT state FROM posts WHERE pid = ?", [last.pid]).fetchone()
    assert state == ("vanished",)


def _flag_to_confirm(store: Store) -> str:
    row = store.db.execute(
        "SELECT id FROM flags WHERE card IS NOT NULL AND day = 1 ORDER BY id LIMIT 1"
    ).fetchone()
    assert row is not None, "the demo's day 1 raises a flag with a card"
    return row[0]


@pytest.mark.parametrize(
    "change",
    ["proxy vote", "night action", "flag confirm", "card give", "player out", "substitute"],
)
def test_a_journal_entry_derives_once(world, change):
    """What the director records with the CLI (another process, another connection)."""
    w = world
    settled(w)
    when = "2026-12-02T20:44:00+08:00"
    if change == "proxy vote":
        w.bansha("vote proxy", "--day 2 --voter 月饼 --target 饺子", "--at", when)
    elif change == "night action":
        w.bansha("night add", "--night 2 --actor 汤圆 --skill 杀人 --target 烧卖")
    elif change == "flag confirm":
        w.bansha("flags confirm", "", _flag_to_confirm(w.store), "--as-of", when)
    elif change == "card give":
        w.bansha("card give", "--player 包子 --colour 蓝 --why 刷屏", "--at", when)
    elif change == "player out":
        w.bansha("player out", "--player 烧卖 --cause 红牌罚下", "--at", when)
    elif change == "substitute":
        w.bansha("player substitute", "--player 烧卖 --uid 999 --name 替补甲", "--at", when)
    before = verdicts(w.store)
    assert w.derives(at("2026-12-02T20:46:00"), at("2026-12-02T20:50:00")) == [1, 0]
    if change in ("proxy vote", "player out"):
        assert verdicts(w.store) != before  # the entry changed what is stored


def test_a_proxy_vote_rewrites_the_votes_and_the_tally_and_leaves_the_post_counts(world):
    """代投 (m135.txt:203 "投票帖可以申请由导演代发") changes the day's ballots and tally, not who
    posted what: the post counts (every counted pid of the day) are not written again, and what
    is stored is what writing every table anew stores."""
    w = world
    settled(w)
    w.bansha(
        "vote proxy", "--day 2 --voter 月饼 --target 饺子", "--at", "2026-12-02T20:44:00+08:00"
    )
    before = verdicts(w.store)
    now = at("2026-12-02T20:46:00")
    sqls = _traced(w.store, lambda: w.cycle(now))
    writes = {t for s in sqls for t in re.findall(r"^(?:DELETE FROM|INSERT INTO) (\w+)", s.strip())}
    assert {"votes", "tallies"} <= writes and "post_counts" not in writes, writes
    after = verdicts(w.store)
    assert after["votes"] != before["votes"] and after["post_counts"] == before["post_counts"]
    proxied = w.store.query("SELECT * FROM votes WHERE day = 2 AND floor IS NULL")
    assert [(r["voter"], r["target"]) for r in proxied] == [("月饼", "饺子")]
    whole = tmp_copy(w)
    for table in ("votes", "tallies", "post_counts", "flags"):
        whole.execute(f"DELETE FROM {table}")
    assert write_derivation(whole, derive(w.game, whole, as_of=now), now=now)
    assert {t: verdicts(whole)[t] for t in ("votes", "post_counts")} == {
        t: after[t] for t in ("votes", "post_counts")
    }
    whole.close()


def test_post_counts_unchanged_since_written_are_not_read_back_and_a_write_to_them_is_seen(world):
    """The derivation that wrote the post counts keeps their fingerprint; while nobody writes
    them the next one compares by it (no read of the rows), and any write to them — here a row
    deleted by hand — makes the next derivation compare them row by row and put them right."""
    w = world
    settled(w)
    w.bansha(
        "vote proxy", "--day 2 --voter 月饼 --target 饺子", "--at", "2026-12-02T20:44:00+08:00"
    )
    now = at("2026-12-02T20:46:00")
    sqls = _traced(w.store, lambda: w.cycle(now))
    assert not [q for q in sqls if "FROM post_counts" in q], "the post counts were read back"
    kept = verdicts(w.store)["post_counts"]
    w.store.execute("DELETE FROM post_counts WHERE player = '月饼'")
    later = now + timedelta(minutes=1)
    d = derive(w.game, w.store, as_of=later)
    assert write_derivation(w.store, d, now=later)  # the deleted row is written back
    assert verdicts(w.store)["post_counts"] == kept
    assert not write_derivation(w.store, d, now=later)  # and then all is as kept


def test_post_counts_another_process_writes_while_they_are_compared_are_not_fingerprinted(
    world, monkeypatch
):
    """Another process (the cycle, while a director's command derives) rewrites the post counts
    between this derivation's read of them and its transaction: the fingerprint is not kept
    for rows that are not these counts, and the next derivation puts them right."""
    w = world
    settled(w)
    kept = verdicts(w.store)["post_counts"]
    w.store.execute("DELETE FROM meta WHERE key = ?", [FINGERPRINT_KEY])  # none kept yet
    now = QUIET + timedelta(minutes=5)
    d = derive(w.game, w.store, as_of=now)
    other = sqlite3.connect(w.db)
    real = w.store.query

    def racing(sql: str, params: Any = ()) -> Any:
        rows = real(sql, params)
        if "FROM post_counts" in sql:  # right after the rows were read
            with other:
                other.execute("UPDATE post_counts SET count = count + 100")
        return rows

    monkeypatch.setattr(w.store, "query", racing)
    assert not write_derivation(w.store, d, now=now)  # compared equal before the write
    monkeypatch.setattr(w.store, "query", real)
    other.close()
    assert w.store.get_meta(FINGERPRINT_KEY) is None  # not claimed for the other rows
    assert write_derivation(w.store, d, now=now)  # compared again, and put right
    assert verdicts(w.store)["post_counts"] == kept


def tmp_copy(w: World) -> Store:
    """A copy of the world's store, opened on its own."""
    copy = w.db.with_name("copy.db")
    with sqlite3.connect(w.db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    return open_store(copy)


def test_a_game_file_change_derives_once(world):
    w = world
    settled(w)
    # the director signs the drafts: the game file is an input like the store
    w.game = w.game.model_copy(
        update={"drafts": w.game.drafts.model_copy(update={"director_signature": "—— 导演"})}
    )
    assert w.derives(at("2026-12-02T20:46:00"), at("2026-12-02T20:50:00")) == [1, 0]
    body = w.store.db.execute(
        "SELECT body FROM drafts WHERE state = 'pending' ORDER BY id DESC LIMIT 1"
    ).fetchone()[0]
    assert "—— 导演" in body


def test_a_director_template_change_derives_once(world, tmp_path):
    w = world
    folder = tmp_path / "templates"
    folder.mkdir()
    w.derives(QUIET)
    crawl = sim_crawler(w.sim, w.store, w.game.game.tz)

    def cycle(now: datetime) -> Any:
        w.clock.set(now)
        return run_cycle(
            w.game,
            w.store,
            now=now,
            crawl=crawl,
            draft=lambda d: make_drafts(w.game, w.store, d, now=now, templates_dir=folder),
            templates_dir=folder,
        )

    cycle(at("2026-12-02T20:41:00"))
    assert cycle(at("2026-12-02T20:42:00")).skipped
    (folder / "elevator.j2").write_text("电梯（导演的模板）\n", encoding="utf-8")
    report = cycle(at("2026-12-02T20:43:00"))
    assert report.derived and report.drafted
    assert cycle(at("2026-12-02T20:44:00")).skipped


def test_crossing_the_last_hour_and_the_reminder_derives_once_each(world):
    w = world
    w.game = w.game.model_copy(
        update={"drafts": w.game.drafts.model_copy(update={"reminder_minutes": 30})}
    )
    settled(w)
    # 21:00 starts the last hour (m135.txt:204 关门前一小时不允许改票或代投); 21:30 the reminder
    assert w.derives(at("2026-12-02T20:59:59"), at("2026-12-02T21:00:00")) == [0, 1]
    assert w.derives(at("2026-12-02T21:05:00")) == [0]
    w.derives(at("2026-12-02T21:25:00"))  # 油条's vote of 21:20
    assert w.derives(at("2026-12-02T21:29:00"), at("2026-12-02T21:31:00")) == [0, 1]
    assert w.derives(at("2026-12-02T21:35:00")) == [0]
    kinds = [r[0] for r in w.store.db.execute("SELECT kind FROM drafts WHERE day = 2")]
    assert "reminder" in kinds


def test_crossing_a_close_derives_once(world):
    w = world
    settled(w)
    w.derives(at("2026-12-02T21:25:00"))
    assert w.derives(at("2026-12-02T21:59:00"), at("2026-12-02T22:01:00")) == [0, 1]
    assert w.derives(at("2026-12-02T22:03:00")) == [0]
    kinds = {r[0] for r in w.store.db.execute("SELECT kind FROM drafts WHERE day = 2")}
    assert "result" in kinds  # the day's result, drafted once the close was crossed


def test_crossing_the_speed_deadline_derives_once(world):
    """m135's 申请加速/延时 deadline: m135.txt:197 申请截至自然日18:00."""
    w = world
    w.derives(at("2026-12-02T17:58:00"))  # 烧卖's post of 17:57:43 is the last before 18:06
    assert w.derives(at("2026-12-02T17:59:30"), at("2026-12-02T18:00:30")) == [0, 1]
    assert w.derives(at("2026-12-02T18:01:00")) == [0]


def test_a_post_stored_ahead_of_now_counts_when_now_reaches_it(world):
    """A forum clock ahead of ours: the post is stored now and counts from its own time."""
    w = world
    settled(w)
    ahead = w.sim.add_post(2011, "月饼", "时钟快了两分钟。", at("2026-12-02T20:48:00"))
    w.skew = timedelta(minutes=2)
    w.cycle(at("2026-12-02T20:46:00"))  # the forum (at 20:48) shows it already

    def pids() -> set[int]:
        rows = w.store.db.execute("SELECT pids FROM post_counts WHERE day = 2")
        return {int(p) for (raw,) in rows for p in re.findall(r"\d+", raw)}

    assert ahead not in pids()
    assert w.derives(at("2026-12-02T20:47:00"), at("2026-12-02T20:48:30")) == [0, 1]
    assert ahead in pids()


def test_going_back_in_time_derives(world):
    w = world
    settled(w)
    assert w.derives(at("2026-12-02T20:30:00")) == [1]  # --as-of an earlier moment


# --------------------------------------------------------------------------- the counters


def test_a_fetch_that_sees_a_post_again_counts_no_change_but_a_floor_does(world):
    w = world
    settled(w)
    store = w.store

    def counter() -> int:
        return int(store.get_meta(INPUTS_KEY) or 0)

    n = counter()
    with store.atomic():
        store.db.execute("UPDATE posts SET last_seen_at = 'x', page = page + 1")
    assert counter() == n
    with store.atomic():
        store.db.execute(
            "UPDATE posts SET floor = floor + 1 WHERE pid = (SELECT max(pid) FROM posts)"
        )
    assert counter() == n + 1
    with store.atomic():
        store.db.execute("INSERT INTO meta(key, value) VALUES ('notify:last', 'x')")
    assert counter() == n + 1  # not an input
    store.set_meta("full_read:9", "x")
    assert counter() == n + 2


def test_missing_triggers_are_installed_and_the_record_dropped(world):
    w = world
    settled(w)
    names = [
        r[0]
        for r in w.store.db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'bansha%'"
        )
    ]
    watched = {n.split("_changes_", 1)[1].rsplit("_", 2)[0] for n in names}
    assert watched == {*INPUT_TABLES, *OUTPUT_TABLES, "posts", "meta"}
    with w.store.atomic():
        w.store.db.execute(f"DROP TRIGGER {names[0]}")
    assert ensure_change_counters(w.store) is True
    assert w.store.get_meta(RECORD_KEY) is None
    assert ensure_change_counters(w.store) is False
    assert w.derives(QUIET + timedelta(minutes=4), QUIET + timedelta(minutes=5)) == [1, 0]


# --------------------------------------------------------------------------- the guard


_SQL_WORDS = {
    "select", "distinct", "from", "where", "and", "or", "not", "in", "is", "null", "order",
    "by", "limit", "asc", "desc", "as", "like", "count", "max", "min", "coalesce", "group",
    "between", "on", "join", "left", "with", "recursive", "union", "all",
    "seen",  # the seek's own name (pipeline.distinct_tids)
}  # fmt: skip


def _tables(sql: str) -> set[str]:
    """The tables ``sql`` reads (a common table expression it names itself is none)."""
    named = {m.group(1) for m in re.finditer(r"\bWITH\s+(?:RECURSIVE\s+)?(\w+)", sql, re.I)}
    found = {m.group(1) for m in re.finditer(r"\b(?:FROM|JOIN)\s+\"?(\w+)", sql, re.I)}
    return found - named


def _traced(store: Store, fn: Any) -> list[str]:
    sqls: list[str] = []
    store.db.conn.set_trace_callback(sqls.append)
    try:
        fn()
    finally:
        store.db.conn.set_trace_callback(None)
    return sqls


def _derive_and_draft(game: Game, store: Store, now: datetime) -> None:
    d = derive(game, store, as_of=now)
    write_derivation(store, d, now=now)
    make_drafts(
        game,
        store,
        d,
        now=now,
        unsettled=closed_days_to_reread(game, store, now),
        unsettled_first=first_rounds_to_reread(game, store, now),
    )


def _guard(game: Game, store: Store, now: datetime) -> set[str]:
    sqls = _traced(store, lambda: _derive_and_draft(game, store, now))
    read = set().union(*(_tables(s) for s in sqls if not s.lstrip().upper().startswith("INSERT")))
    # draft_inputs: what each live draft was made from — the drafts' own bookkeeping, read
    # against the drafts' input counter, which the same triggers move with every input;
    # derive_chunk_*: each discussion chunk's material, made of its posts and keyed by their
    # own write count (pipeline/derive/chunks.py): what they say, the posts say;
    # post_attempts: whether a waiting draft may be on the forum already (then it is not
    # drafted again) — it stops being so only with a write of its draft (posted, set aside)
    allowed = {
        "derive_chunk_versions",
        "derive_chunk_cache",
        *INPUT_TABLES,
        "posts",
        "meta",
        *OUTPUT_TABLES,
        *CRAWL_TABLES,
        "sqlite_master",
        "draft_inputs",
        "post_attempts",
    }
    assert read <= allowed, f"derive/drafts read tables the fingerprint misses: {read - allowed}"
    # posts: only the columns the posts trigger watches
    for sql in sqls:
        if "posts" not in _tables(sql):
            continue
        assert "*" not in sql, sql
        words = {
            w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z_0-9]*", re.sub(r"'[^']*'", "", sql))
        }
        unknown = words - _SQL_WORDS - {"posts"} - set(POST_INPUT_COLUMNS)
        assert not unknown, f"{sql}: columns not watched: {unknown}"
    # meta: only the keys the meta trigger watches (whole re-read marks, the forum's word on
    # closing threads), the drafts' own counter, the game file the drafts were last made
    # against (the fingerprint holds the game file itself), and the post counts' own write
    # counter and fingerprint (how the written counts are compared, not what is derived)
    own_keys = (DRAFT_INPUTS_KEY, POST_COUNTS_KEY, FINGERPRINT_KEY)
    for sql in sqls:
        if "meta" in _tables(sql):
            own_counter = any(f"key = '{k}'" in sql for k in own_keys) or GAME_KEY in sql
            assert own_counter or re.search(r"key\s*=\s*'(full_read|threads):[^']*'", sql), sql
    # threads and crawl_log: only what crawled_tids reads (fingerprinted by its set)
    own = set(_traced(store, lambda: crawled_tids(store)))
    crawl_reads = {s for s in sqls if _tables(s) & set(CRAWL_TABLES)}
    assert crawl_reads <= own, crawl_reads - own
    return read


def test_guard_derive_and_drafts_read_only_fingerprinted_tables(demo_db, tmp_path):
    """The demo after `bansha demo` (crawled, drafted, posted, nights resolved by the engine)."""
    import shutil

    db = tmp_path / "demo.db"
    shutil.copy(demo_db, db)
    store = open_store(db)
    try:
        game = load_game(GAME, env={})
        read = _guard(game, store, at("2026-12-03T09:30:00"))
        # the engine's snapshots, the journal and the revisions were read: the guard saw them
        assert {"engine_snapshots", "post_revisions", "journal_proxy_votes", "drafts"} <= read
    finally:
        store.close()


@pytest.mark.parametrize("name", ["zhenyan", "m209", "tubian24", "nizhuan", "m135"])
def test_guard_for_every_rule_set(name, tmp_path):
    game = load_game(ROOT / "config" / "games" / f"{name}.toml", env={}, check_login=False)
    store = open_store(tmp_path / "g.db")
    try:
        for day in game.days:  # the moments of each day: open, last hour, closed
            for moment in (day.opens, day.closes - timedelta(minutes=30), day.closes):
                _guard(game, store, moment)
    finally:
        store.close()


def test_the_guard_catches_a_table_the_fingerprint_misses(world, monkeypatch):
    """A derive that reads a table the fingerprint does not watch fails the guard."""
    w = world
    w.cycle(QUIET)
    real = derive_mod.derive

    def reading_pages(game: Game, store: Store, *, as_of: datetime) -> Any:
        store.db.execute("SELECT count(*) FROM pages").fetchone()
        return real(game, store, as_of=as_of)

    import tests.pipeline.derive.test_derive_on_change as me

    monkeypatch.setattr(me, "derive", reading_pages)
    with pytest.raises(AssertionError, match="pages"):
        _guard(w.game, w.store, QUIET)


# --------------------------------------------------------------------------- exactness


def _script_demo(w: World, i: int, now: datetime) -> None:
    """Director's entries at fixed cycles, the same in both runs."""
    if i == 5:
        when = (now - timedelta(minutes=1)).isoformat()
        w.bansha("vote proxy", "--day 1 --voter 月饼 --target 饺子", "--at", when)
    if i == 40:
        w.bansha("card give", "--player 包子 --colour 黄 --why 刷屏", "--at", now.isoformat())


def _demo_moments() -> list[datetime]:
    start, end = at("2026-12-01T09:00:00"), at("2026-12-03T09:00:00")
    out, t = [], start
    while t <= end:
        out.append(t)
        t += timedelta(minutes=107)  # off the hour: the moments fall between cycles
    for day in ("2026-12-01", "2026-12-02"):
        for hm in ("09:31", "10:01", "18:01", "20:59", "21:01", "21:59", "22:01", "22:02"):
            out.append(at(f"{day}T{hm}:00"))
    return sorted(set(out))


def observed(now: datetime, report: Any, store: Store) -> tuple[Any, ...]:
    """What one cycle is compared by: when, drafted, warnings, errors, the stored verdicts,
    and (last, not compared) whether it skipped deriving."""
    return (now, report.drafted, report.warnings, report.errors, verdicts(store), report.skipped)


def _run_demo(tmp_path: Path, name: str, *, rederive: bool, monkeypatch) -> list[Any]:
    game = load_game(GAME, env={})
    moments = _demo_moments()
    clock = SimClock(moments[0])
    sim = ForumSim.from_script(GAME, SCRIPT, clock)
    db = tmp_path / f"{name}.db"
    store = open_store(db)
    w = World(game, sim, clock, store, db, [])
    seen = []
    try:
        for i, now in enumerate(moments):
            _script_demo(w, i, now)
            report = w.cycle(now, rederive=rederive)
            # (09:31: day 1's threads are not open yet: the errors are part of what is compared)
            seen.append(observed(now, report, store))
    finally:
        store.close()
    return seen


def test_skipping_gives_the_same_verdicts_and_drafts_as_deriving_every_cycle_demo(
    tmp_path, monkeypatch
):
    skipping = _run_demo(tmp_path, "skip", rederive=False, monkeypatch=monkeypatch)
    forced = _run_demo(tmp_path, "full", rederive=True, monkeypatch=monkeypatch)
    assert sum(1 for s in skipping if s[5]) > len(skipping) / 3  # most cycles skipped
    assert not any(f[5] for f in forced)
    for s, f in zip(skipping, forced, strict=True):
        assert s[:5] == f[:5], f"cycle at {s[0]} differs"


# -- a long generated game: 24 players, 10 days, posts every day, edits, deletions, the journal

NAMES = [f"玩家{i:02d}" for i in range(1, 25)]
START = datetime(2026, 12, 1, 10, 0, tzinfo=TZ)
DAYS = 10


def long_game() -> Game:
    return parse_game(
        {
            "game": {"id": "long", "title": "长局", "ruleset": "m135", "timezone": "Asia/Shanghai"},
            "forum": {"base_url": "http://127.0.0.1:8080/"},
            "director": {"names": ["导演"], "uids": [1]},
            "players": [{"name": n, "uid": 100 + i} for i, n in enumerate(NAMES)],
            "days": [
                {
                    "day": d + 1,
                    "opens": START + timedelta(days=d),
                    "closes": START + timedelta(days=d, hours=12),
                    "discussion": 1000 + 10 * d,
                    "vote": 1001 + 10 * d,
                    "progress": 1002 + 10 * d,
                }
                for d in range(DAYS)
            ],
        },
        env={},
    )


@dataclass
class Scripted:
    """A post of the long game: shown from ``at``, edited at ``edited`` (to ``new``),
    deleted at ``gone``; floors are counted among the posts shown (a delete renumbers)."""

    tid: int
    pid: int
    author: str
    at: datetime
    text: str
    edited: datetime | None = None
    new: str = ""
    gone: datetime | None = None


class LongForum:
    """The long game's forum without HTML (pages built as the parser would return them, saved
    by the store as the crawler saves them): what is shown at each moment."""

    def __init__(self, per_day: int = 40) -> None:
        rng = random.Random(14)
        self.posts: list[Scripted] = []
        pid = 1
        for d in range(DAYS):
            opens = START + timedelta(days=d)
            for k, what in enumerate(("讨论帖", "投票帖", "进程帖")):
                tid = 1000 + 10 * d + k
                self.posts.append(Scripted(tid, pid, "导演", opens - EARLY, what))
                pid += 1
            for _ in range(per_day):
                who = NAMES[rng.randrange(24)]
                # some after the close (诈尸, late votes), some within the last hour
                when = opens + timedelta(seconds=int(rng.uniform(0, 13 * 3600)))
                kind = rng.random()
                if kind < 0.3:
                    tid = 1001 + 10 * d
                    text = f"投票对象：{NAMES[rng.randrange(24)]}\n投票理由：跟票"
                elif kind < 0.4:
                    tid, text = 1002 + 10 * d, rng.choice(["申请加速", "申请延时", "路过"])
                else:
                    tid, text = 1000 + 10 * d, f"我怀疑{NAMES[rng.randrange(24)]}。"
                post = Scripted(tid, pid, who, when, text)
                r, later = rng.random(), when + timedelta(minutes=int(rng.uniform(2, 90)))
                if r < 0.06:
                    post.edited, post.new = later, text + "（改）"
                elif r < 0.1:
                    post.gone = later
                self.posts.append(post)
                pid += 1

    def page(self, tid: int, now: datetime) -> ThreadPage:
        shown = sorted(
            (
                p
                for p in self.posts
                if p.tid == tid and p.at <= now and not (p.gone and p.gone <= now)
            ),
            key=lambda p: (p.at, p.pid),
        )
        posts = []
        for floor, p in enumerate(shown, 1):
            edited = p.edited is not None and p.edited <= now
            text = p.new if edited else p.text
            posts.append(
                Post(
                    tid=tid,
                    pid=p.pid,
                    floor=floor,
                    author=p.author,
                    uid=1 if p.author == "导演" else 100 + NAMES.index(p.author),
                    posted_at=p.at,
                    message_html=text,
                    text=text,
                    edit=EditNote(p.author, p.edited) if edited and p.edited else None,
                )
            )
        return ThreadPage(tid=tid, page=1, total_pages=1, posts=tuple(posts), subject=str(tid))

    def crawler(self, store: Store, clock: SimClock) -> Any:
        def crawl(targets: list[Any], full: bool) -> CrawlReport:
            report = CrawlReport("long")
            for t in targets:
                now = clock()
                page = self.page(t.tid, now)
                store.register_thread(t.tid, day=t.day, role=t.role)
                if not page.posts:
                    report.threads.append(ThreadResult(t.tid, error="主题不存在"))
                    continue
                w = store.save_page(
                    page,
                    source="html",
                    url=f"long:{t.tid}",
                    status=200,
                    headers={},
                    body=repr(page).encode(),
                    fetched_at=now,
                    ppp=None,
                )
                store.log_crawl(run_id="long", at=now.isoformat(), tid=t.tid, page=1, outcome="ok")
                report.threads.append(
                    ThreadResult(t.tid, 1, w.new_posts, w.changed_posts, w.vanished_posts)
                )
            return report

        return crawl


def _long_moments(days: int = DAYS) -> list[datetime]:
    """Six moments of each of the first ``days`` days: before the opening, during the day, in
    the last hour, just after the close (twice) and two hours later."""
    out = []
    for d in range(days):
        opens = START + timedelta(days=d)
        closes = opens + timedelta(hours=12)
        out += [opens - timedelta(minutes=29), opens + timedelta(hours=8, minutes=1)]
        out += [closes - timedelta(minutes=59), closes + timedelta(minutes=1)]
        out += [closes + timedelta(minutes=2), closes + timedelta(hours=2)]
    return out


def _run_long(tmp_path: Path, name: str, *, rederive: bool, days: int) -> list[Any]:
    game = long_game()
    moments = _long_moments(days)
    clock = SimClock(moments[0])
    store = open_store(tmp_path / f"{name}.db")
    crawl = LongForum().crawler(store, clock)
    seen = []
    try:
        for i, now in enumerate(moments):
            clock.set(now)
            if i == 10:  # a proxy vote and a flag confirmed, the same in both runs
                store.db.table("journal_proxy_votes").insert(
                    {
                        "day": 3,
                        "voter": NAMES[0],
                        "target": NAMES[1],
                        "at": now.isoformat(),
                        "note": None,
                        "recorded_at": now.isoformat(),
                    }
                )
            if i == 21:
                flag = store.db.execute(
                    "SELECT id, player, reason, card FROM flags WHERE card IS NOT NULL "
                    "ORDER BY id LIMIT 1"
                ).fetchone()
                assert flag is not None
                with store.atomic():
                    store.db.execute(
                        "INSERT INTO flag_decisions VALUES (?, 'confirmed', ?, NULL, ?)",
                        [flag[0], flag[3], now.isoformat()],
                    )
                    store.db.execute(
                        "INSERT INTO card_events(player, colour, reason, at, source, recorded_at)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        [flag[1], flag[3], flag[2], now.isoformat(), flag[0], now.isoformat()],
                    )
            report = run_cycle(
                game,
                store,
                now=now,
                crawl=crawl,
                draft=lambda d, now=now: make_drafts(
                    game, store, d, now=now, unsettled=closed_days_to_reread(game, store, now)
                ),
                rederive=rederive,
            )
            assert not report.errors, report.errors
            seen.append(observed(now, report, store))
    finally:
        store.close()
    return seen


def test_skipping_gives_the_same_verdicts_and_drafts_as_deriving_every_cycle_long_game(tmp_path):
    """The first six days of the long game, every cycle run twice (skipping and deriving)."""
    days = 6
    skipping = _run_long(tmp_path, "skip", rederive=False, days=days)
    forced = _run_long(tmp_path, "full", rederive=True, days=days)
    assert sum(1 for s in skipping if s[5]) >= days // 2  # the quiet cycles were skipped
    last = skipping[-1][4]
    assert len(last["votes"]) > 60 and last["flags"] and last["drafts"]
    for s, f in zip(skipping, forced, strict=True):
        assert s[:5] == f[:5], f"cycle at {s[0]} differs"


# --------------------------------------------------------------------------- the command


def test_cycle_verbose_says_when_it_did_not_derive_and_rederive_forces(tmp_path):
    with forum_world(tmp_path, at("2026-12-02T20:40:00")) as (_sim, _clock, game, env):
        asof = ["--as-of", "2026-12-02T20:40:00+08:00", "--verbose"]
        assert "没有新内容" not in bansha(env, "cycle", str(game), *asof)
        out = bansha(env, "cycle", str(game), *asof)
        assert "没有新内容，未重新推导" in out and "没有新草稿" in out
        out = bansha(env, "cycle", str(game), *asof, "--rederive")
        assert "没有新内容" not in out and "结论没有变化" in out
        # a file edit is an input: the signature appears in the drafts
        game.write_text(
            game.read_text(encoding="utf-8").replace(
                "[[players]]", '[drafts]\ndirector_signature = "—— 导演"\n\n[[players]]', 1
            ),
            encoding="utf-8",
        )
        out = bansha(env, "cycle", str(game), *asof)
        assert "没有新内容" not in out and "新草稿" in out


def test_a_cycle_of_an_old_store_without_triggers_derives(tmp_path):
    """A store from before (no triggers, no record): the first cycle derives and installs them."""
    db = tmp_path / "old.db"
    store = open_store(db)

    def names() -> list[str]:
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
        return [r[0] for r in store.db.execute(sql)]

    assert names() == []
    assert ensure_change_counters(store) is True
    assert names()
    store.close()
    # and the triggers count writes of any connection
    conn = sqlite3.connect(db)
    before = int(conn.execute("SELECT value FROM meta WHERE key = ?", [INPUTS_KEY]).fetchone()[0])
    conn.execute(
        "INSERT INTO journal_outs(player, at, cause, recorded_at) VALUES ('a', 'b', 'c', 'd')"
    )
    conn.commit()
    after = int(conn.execute("SELECT value FROM meta WHERE key = ?", [INPUTS_KEY]).fetchone()[0])
    conn.close()
    assert after == before + 1
