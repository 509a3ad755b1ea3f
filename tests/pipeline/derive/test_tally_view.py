"""``bansha tally`` shows the view the last cycle stored when that derivation still holds (issue
#14: tally starts fast), and what it shows is exactly what deriving again prints: stdout, stderr
and exit code compared on the demo and on a generated 10-day game at many moments. Anything that
can change a verdict since the cycle — a new post, a journal entry, a flag decision, the game
file, a crossed deadline, the code, the templates folder, a store from before
the views — makes it derive (and print the same as the full path); a draft approved or posted
does not (drafts are outputs, nothing tally prints)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from click.testing import CliRunner

import pipeline.cli
import pipeline.cli.cycle as cycle_views
import pipeline.cli.tally as tally_mod
import pipeline.cli.tallyview as tallyview
import pipeline.cli.votes as votes
from pipeline.cli import cli, load_context
from pipeline.cycle import closed_days_to_reread, run_cycle
from pipeline.drafts import make_drafts
from pipeline.game.gamefile import load_game
from pipeline.sim.simulator import SimClock
from pipeline.store import TALLY_VIEW_KEY, open_store
from tests.pipeline.conftest import bansha, forum_world
from tests.pipeline.derive.test_derive_on_change import (
    DAYS,
    NAMES,
    LongForum,
    _long_moments,
    at,
    long_game,
)

Outcome = tuple[int, str, str]  # exit code, stdout, stderr


class Tally:
    """``bansha tally`` in this process at a chosen ``now``: by the fast path when it holds,
    or forced through the full derivation; says which path ran."""

    def __init__(
        self, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], *, memo: bool = False
    ) -> None:
        self.monkeypatch = monkeypatch
        self.env = env
        #: ``memo``: the full path derives once per moment and renders every form from it (a
        #: tally writes nothing, so the derivation at one moment is the same for every form);
        #: so does the fast path when its view does not hold and it derives
        self.memo: dict[datetime, Any] | None = {} if memo else None

    def run(self, argv: list[str], now: datetime, *, full: bool) -> tuple[Outcome, bool]:
        derived: list[int] = []
        real = votes.tally_full

        def counted(**kw: Any) -> Any:
            derived.append(1)
            return real(**kw)

        with self.monkeypatch.context() as m:
            m.setattr(pipeline.cli, "clock", lambda tz: now.astimezone(tz))
            m.setattr(votes, "tally_full", counted)
            if full:
                m.setattr(tally_mod, "stored_tally", lambda *a: None)
            if self.memo is not None:
                m.setattr(votes, "run_derive", self._memoized(votes.run_derive))
            result = CliRunner().invoke(cli, ["tally", *argv], env=self.env)
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        return (result.exit_code, result.stdout, result.stderr), not derived

    def _memoized(self, real: Any) -> Any:
        memo = self.memo
        assert memo is not None

        def derive_once(ctx: Any, as_of: datetime, *, write: bool = True) -> Any:
            assert not write
            if as_of not in memo:
                memo.clear()
                memo[as_of] = real(ctx, as_of, write=False)
            return memo[as_of]

        return derive_once

    def same(self, argv: list[str], now: datetime) -> bool:
        """Both paths print the same; returns whether the fast one was taken."""
        fast, used = self.run(argv, now, full=False)
        full, _ = self.run(argv, now, full=True)
        assert fast == full, f"tally {' '.join(argv)} at {now} differs"
        return used

    def every_day(self, game: Path, days: list[int], now: datetime, *extra: str) -> list[bool]:
        used = []
        for argv in (
            [str(game), *extra],
            [str(game), "--json", *extra],
            *([str(game), "--day", str(n), *extra] for n in days),
            *([str(game), "--day", str(n), "--json", *extra] for n in days),
            [str(game), "--day", "99", *extra],
        ):
            used.append(self.same(argv, now))
        return used


# --------------------------------------------------------------------------- the demo


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with forum_world(tmp_path, at("2026-12-01T12:00:00")) as (sim, clock, game, env):

        class World:
            def cycle(self, now: datetime) -> None:
                clock.set(now)
                bansha(env, "cycle", str(game), "--as-of", now.isoformat())

        w = World()
        w.sim, w.clock, w.game, w.env = sim, clock, game, env
        w.db = Path(env["BANSHA_DB"])
        w.tally = Tally(monkeypatch, env)
        yield w


QUIET = at("2026-12-02T20:40:00")  # the demo's day 2: no post from 20:34:43 to 21:20:00


def test_the_demo_at_several_moments_shows_the_stored_view_as_derived(demo):
    for now in (at("2026-12-01T09:10:00"), at("2026-12-01T12:00:00"), QUIET):
        demo.cycle(now)
        used = demo.tally.every_day(demo.game, [1, 2], now)
        assert all(used[:-1]), f"the view did not hold at {now}"
        assert not used[-1]  # a day the game does not have: the full path says so
        later = now + timedelta(minutes=1)  # no moment between: still the same view
        assert demo.tally.same([str(demo.game), "--day", "1"], later)


def test_the_note_of_the_default_day_is_the_same(demo):
    before = at("2026-12-01T09:10:00")  # day 1 opens at 10:00
    demo.cycle(before)
    fast, used = demo.tally.run([str(demo.game)], before, full=False)
    assert used and "还没开门" in fast[2]
    assert demo.tally.same([str(demo.game), "--json"], before)


#: posts whose text the JSON has to escape: quotes, a backslash, a tab, a line separator, an
#: emoji, markup, JSON's own punctuation and the escaped text of the view's ``as_of`` stand-in
EDGES = [
    ("饺子", '投票对象：包子"\\ 🐺\t\u2028</div>'),
    ("麻花", "投票对象：{}[]:, 1e400 NaN null"),
    ("Snow_风", '投票对象："\\u0000as_of\\u0000"'),
]


def test_a_day_of_posts_the_json_escapes_shows_what_deriving_shows(demo):
    vote = load_game(demo.game, env={}).day(2).vote
    for i, (who, text) in enumerate(EDGES):
        demo.sim.add_post(vote, who, text, QUIET - timedelta(minutes=3 - i))
    demo.cycle(QUIET)
    assert all(demo.tally.every_day(demo.game, [1, 2], QUIET)[:-1])
    fast, used = demo.tally.run([str(demo.game), "--day", "2", "--json"], QUIET, full=False)
    assert used
    shown = json.loads(fast[1])
    raws = [v["ballot"]["target_raw"] for v in shown["votes"]]
    assert '包子"\\ 🐺 </div>' in raws and '"\\u0000as_of\\u0000"' in raws
    assert shown["as_of"] == QUIET.isoformat()
    stored = sqlite3.connect(demo.db).execute("SELECT json FROM tally_views WHERE day = 2")
    kept = stored.fetchone()[0]
    assert "\n" not in kept and len(kept.encode()) < len(fast[1].encode()) * 3 // 4


def test_a_view_that_does_not_read_back_as_stored_derives(demo):
    """A key twice: ``json.loads`` keeps the last one, which is not what deriving prints."""
    demo.cycle(QUIET)
    assert _holds(demo, QUIET)
    with contextlib.closing(sqlite3.connect(demo.db)) as db, db:
        kept = db.execute("SELECT json FROM tally_views WHERE day = 2").fetchone()[0]
        twice = kept.replace(',"ruleset":', ',"game":"另一局","ruleset":', 1)
        assert twice != kept
        db.execute("UPDATE tally_views SET json = ? WHERE day = 2", [twice])
    assert demo.tally.same([str(demo.game), "--day", "2"], QUIET)
    assert not demo.tally.same([str(demo.game), "--day", "2", "--json"], QUIET)


def _log_writes(db_path: Path) -> None:
    """Every row written to or dropped from ``tally_views`` from now on, in ``written``."""
    with contextlib.closing(sqlite3.connect(db_path)) as db, db:
        db.execute("CREATE TABLE written (day INTEGER, op TEXT)")
        for op, row in (("INSERT", "new"), ("UPDATE", "new"), ("DELETE", "old")):
            db.execute(
                f"CREATE TRIGGER log_{op.lower()} AFTER {op} ON tally_views "
                f"BEGIN INSERT INTO written VALUES ({row}.day, '{op}'); END"
            )


def _written(db_path: Path) -> list[tuple[int, str]]:
    with contextlib.closing(sqlite3.connect(db_path)) as db:
        return db.execute("SELECT day, op FROM written ORDER BY rowid").fetchall()


def test_a_cycle_rewrites_only_the_views_that_changed(demo):
    demo.cycle(QUIET)
    _log_writes(demo.db)
    db = sqlite3.connect(demo.db)
    record = "SELECT value FROM meta WHERE key = 'derive:last'"
    before = db.execute(record).fetchone()
    draft = db.execute("SELECT MIN(id) FROM drafts WHERE state = 'pending'").fetchone()[0]
    bansha(demo.env, "drafts", "approve", str(demo.game), str(draft))
    demo.cycle(QUIET + timedelta(minutes=1))  # derives (the outputs moved): no view changed
    assert db.execute(record).fetchone() != before
    db.close()
    assert _written(demo.db) == []
    later = at("2026-12-02T21:25:00")  # the demo's posts go on at 21:20: day 2 changes
    demo.cycle(later)
    assert _written(demo.db) == [(2, "UPDATE")]
    assert all(demo.tally.every_day(demo.game, [1, 2], later)[:-1])


def test_the_store_keeps_the_views_it_is_given(tmp_path):
    store = open_store(tmp_path / "views.db")
    try:
        store.write_tally_views("甲", {1: ("一", "{}"), 2: ("二", None), 3: ("三", "[]")})
        _log_writes(tmp_path / "views.db")
        store.write_tally_views("乙", {1: ("一", "{}"), 2: ("二", "{}")})
        rows = store.db.execute("SELECT day, text, json FROM tally_views ORDER BY day")
        assert rows.fetchall() == [(1, "一", "{}"), (2, "二", "{}")]
        assert store.get_meta(TALLY_VIEW_KEY) == "乙"
        assert _written(tmp_path / "views.db") == [(2, "UPDATE"), (3, "DELETE")]
        store.write_tally_views("", {})
        assert store.db.execute("SELECT COUNT(*) FROM tally_views").fetchone()[0] == 0
        assert store.get_meta(TALLY_VIEW_KEY) is None
    finally:
        store.close()


def _holds(w: Any, now: datetime) -> bool:
    return w.tally.same([str(w.game), "--day", "2"], now) & w.tally.same(
        [str(w.game), "--day", "2", "--json"], now
    )


def test_a_draft_approved_or_posted_keeps_the_view(demo):
    """Drafts are outputs: nothing tally prints comes from them (it prints the derivation and
    the flags' decisions). Approving one, or a cycle that posts it, leaves the view true — just
    when a director runs ``bansha tally`` — and it is still what deriving prints."""
    demo.cycle(QUIET)
    assert _holds(demo, QUIET)
    db = sqlite3.connect(demo.db)
    draft = db.execute("SELECT MIN(id) FROM drafts WHERE state = 'pending'").fetchone()[0]
    bansha(demo.env, "drafts", "approve", str(demo.game), str(draft))
    assert _holds(demo, QUIET)
    later = QUIET + timedelta(minutes=1)
    demo.cycle(later)  # derives (the approval moved the outputs), then posts the draft
    assert db.execute("SELECT state FROM drafts WHERE id = ?", [draft]).fetchone()[0] == "posted"
    assert _holds(demo, later)
    assert demo.tally.every_day(demo.game, [1, 2], later)[:-1] == [True] * 6
    db.close()


def test_a_new_post_derives(demo):
    demo.cycle(QUIET)
    later = at("2026-12-02T21:25:00")  # the demo's posts go on at 21:20
    demo.clock.set(later)
    bansha(demo.env, "crawl", str(demo.game))
    assert not _holds(demo, QUIET)
    assert not _holds(demo, later)


def test_a_journal_entry_and_a_flag_decision_derive(demo):
    demo.cycle(QUIET)
    when = (QUIET - timedelta(minutes=30)).isoformat()
    bansha(demo.env, "vote", "proxy", str(demo.game), "--day", "2", "--voter", "月饼",
           "--target", "饺子", "--at", when)  # fmt: skip
    assert not _holds(demo, QUIET)
    demo.cycle(QUIET + timedelta(minutes=1))
    now = QUIET + timedelta(minutes=1)
    assert _holds(demo, now)
    flag = sqlite3.connect(demo.db).execute("SELECT id FROM flags LIMIT 1").fetchone()[0]
    bansha(demo.env, "flags", "dismiss", str(demo.game), flag, "--why", "误判")
    assert not _holds(demo, now)


def test_a_thread_read_for_the_first_time_derives(demo):
    """A thread read once (even with nothing in it) is no longer "尚未抓取"."""
    now = at("2026-12-01T12:00:00")  # day 2's threads are not read yet
    demo.cycle(now)
    assert demo.tally.same([str(demo.game), "--day", "2"], now)
    vote = load_game(demo.game, env={}).day(2).vote
    db = sqlite3.connect(demo.db)
    with db:  # what the crawler logs for a thread with no post yet
        db.execute(
            "INSERT INTO crawl_log(run_id, at, tid, page, outcome) VALUES ('t', ?, ?, 1, 'ok')",
            [now.isoformat(), vote],
        )
    db.close()
    fast, used = demo.tally.run([str(demo.game), "--day", "2"], now, full=False)
    assert not used and "尚未抓取" not in fast[1]
    assert not demo.tally.same([str(demo.game), "--day", "2", "--json"], now)


def test_a_game_file_edit_derives(demo):
    demo.cycle(QUIET)
    text = demo.game.read_text(encoding="utf-8")
    demo.game.write_text(text + "\n# 导演的备注\n", encoding="utf-8")  # the same game
    assert not _holds(demo, QUIET)
    demo.game.write_text(text.replace("[[players]]", "[votes]\nstrict_names = true\n\n"
                                      "[[players]]", 1), encoding="utf-8")  # fmt: skip
    assert not _holds(demo, QUIET)
    demo.game.write_text(text, encoding="utf-8")  # as it was: the view holds again
    assert _holds(demo, QUIET)


def test_a_copy_of_the_game_file_elsewhere_derives(demo, tmp_path):
    demo.cycle(QUIET)
    copy = tmp_path / "copy" / demo.game.name
    copy.parent.mkdir()
    shutil.copy(demo.game, copy)
    assert not demo.tally.same([str(copy), "--day", "2"], QUIET)


def test_a_deadline_crossed_derives(demo):
    demo.cycle(QUIET)
    record = json.loads(
        sqlite3.connect(demo.db).execute("SELECT value FROM meta WHERE key = 'derive:last'")
        .fetchone()[0]
    )  # fmt: skip
    hi = datetime.fromisoformat(record["hi"])
    assert _holds(demo, hi - timedelta(seconds=1))
    assert not _holds(demo, hi)
    assert not _holds(demo, QUIET - timedelta(hours=3))  # before the window
    assert not _holds(demo, at("2026-12-02T22:00:01"))  # past the close


def test_a_code_change_derives(demo, monkeypatch):
    demo.cycle(QUIET)
    assert _holds(demo, QUIET)
    monkeypatch.setattr(tallyview, "code_identity", lambda: "another bansha")
    assert not _holds(demo, QUIET)


def test_the_templates_folder_moving_out_derives_and_is_refused(demo, tmp_path):
    own = demo.game.parent / "tpl"
    own.mkdir()
    link = demo.game.parent / "mine"
    link.symlink_to(own)
    text = demo.game.read_text(encoding="utf-8")
    demo.game.write_text(
        text.replace("[[players]]", '[drafts]\ntemplates = "mine"\n\n[[players]]', 1),
        encoding="utf-8",
    )
    demo.cycle(QUIET)
    assert _holds(demo, QUIET)
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    link.unlink()
    link.symlink_to(elsewhere)  # the game file check refuses a folder outside its own
    outcome, used = demo.tally.run([str(demo.game), "--day", "2"], QUIET, full=False)
    assert not used and outcome[0] == 1 and "草稿模板目录" in outcome[2]
    assert not _holds(demo, QUIET)


def test_a_record_dropped_or_triggers_missing_derive(demo):
    demo.cycle(QUIET)
    assert _holds(demo, QUIET)
    db = sqlite3.connect(demo.db)
    with db:
        name = db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE "
            "'bansha_changes_posts_update%'"
        ).fetchone()[0]
        db.execute(f"DROP TRIGGER {name}")  # a table rebuild would drop it: writes uncounted
    assert not _holds(demo, QUIET)
    demo.cycle(QUIET + timedelta(minutes=1))  # reinstalled, the record dropped, derived again
    assert _holds(demo, QUIET + timedelta(minutes=1))
    with db:
        db.execute("DELETE FROM meta WHERE key = 'derive:last'")
    assert not _holds(demo, QUIET + timedelta(minutes=1))
    db.close()


def test_a_store_from_before_the_views_derives(demo):
    demo.cycle(QUIET)
    db = sqlite3.connect(demo.db)
    with db:  # migrated, but no cycle since: no key
        db.execute("DELETE FROM meta WHERE key = ?", [TALLY_VIEW_KEY])
    assert not _holds(demo, QUIET)
    with db:  # from before the migration: the full path asks for bansha init
        db.execute("DROP TABLE tally_views")
        db.execute("DELETE FROM _migrations WHERE name = '012_tally_views'")
    db.close()
    outcome, used = demo.tally.run([str(demo.game), "--day", "2"], QUIET, full=False)
    assert not used and outcome[0] == 1 and "bansha init" in outcome[2]
    assert not _holds(demo, QUIET)


@pytest.mark.parametrize(
    "field, value",
    [
        ("timezone", "Nowhere/Zone"),  # not a zone
        ("timezone", None),
        ("game_sha256", None),
        ("templates_value", 5),
        ("default_notice", 5),  # a bare tally puts it on stderr
        ("game_path", None),
    ],
)
def test_a_key_not_as_the_cycle_writes_it_derives(demo, field, value):
    """Whatever is wrong in the stored key, tally derives and prints what deriving prints:
    never a traceback (the full path says what is wrong with the store, if anything)."""
    demo.cycle(QUIET)
    db = sqlite3.connect(demo.db)
    key = json.loads(db.execute("SELECT value FROM meta WHERE key = ?", [TALLY_VIEW_KEY])
                     .fetchone()[0])  # fmt: skip
    key[field] = value
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = ?", [json.dumps(key), TALLY_VIEW_KEY])
    db.close()
    assert not demo.tally.same([str(demo.game)], QUIET)
    demo.tally.same([str(demo.game), "--day", "2", "--json"], QUIET)  # the same, either way


@pytest.mark.parametrize("field, value", [("lo", "不是时间"), ("hi", 5), ("code", None)])
def test_a_record_not_as_the_cycle_writes_it_derives(demo, field, value):
    demo.cycle(QUIET)
    db = sqlite3.connect(demo.db)
    text = db.execute("SELECT value FROM meta WHERE key = 'derive:last'").fetchone()[0]
    record = json.loads(text)
    record[field] = value
    changed = json.dumps(record, ensure_ascii=False)
    key = db.execute("SELECT value FROM meta WHERE key = ?", [TALLY_VIEW_KEY]).fetchone()[0]
    key = json.loads(key)
    key["record"] = changed  # the view's key still names the record
    with db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'derive:last'", [changed])
        db.execute("UPDATE meta SET value = ? WHERE key = ?", [json.dumps(key), TALLY_VIEW_KEY])
    db.close()
    assert not demo.tally.same([str(demo.game), "--day", "2"], QUIET)


def test_the_store_named_by_the_environment_or_db(demo, tmp_path):
    demo.cycle(QUIET)
    argv = [str(demo.game), "--day", "2"]
    assert demo.tally.same(argv, QUIET)  # BANSHA_DB
    assert demo.tally.same([*argv, "--db", str(demo.db)], QUIET)
    other = tmp_path / "other.db"
    assert not demo.tally.same([*argv, "--db", str(other)], QUIET)  # no store there
    assert not other.exists()
    named = Tally(demo.tally.monkeypatch, {**demo.env, "BANSHA_GAME": str(demo.game)})
    assert named.same(["--day", "2"], QUIET)  # the game file the environment names


def test_verbose_and_as_of_derive(demo):
    demo.cycle(QUIET)
    with demo.tally.monkeypatch.context() as m:
        m.setattr(pipeline.cli, "clock", lambda tz: QUIET.astimezone(tz))
        result = CliRunner().invoke(
            cli, ["-v", "tally", str(demo.game), "--day", "2"], env=demo.env
        )
    fast, used = demo.tally.run([str(demo.game), "--day", "2"], QUIET, full=False)
    assert used and result.exit_code == 0 and result.stdout == fast[1]
    argv = [str(demo.game), "--day", "2", "--as-of", QUIET.isoformat()]
    assert not demo.tally.same(argv, QUIET)


def test_tally_reads_only(demo):
    demo.cycle(QUIET)
    folder = demo.db.parent
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert _holds(demo, QUIET)
    after = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    assert after == before


def test_the_fast_path_loads_no_pydantic_no_sqlite_utils_no_engine(demo):
    demo.cycle(QUIET)
    code = (
        "import sys, pipeline.cli as c;"
        "from datetime import datetime;"
        f"c.clock = lambda tz: datetime.fromisoformat({QUIET.isoformat()!r});"
        f"c.cli(['tally', {str(demo.game)!r}, '--day', '2'], standalone_mode=False);"
        "print(sorted(sys.modules), file=sys.stderr)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=demo.env, check=True
    )
    loaded = eval(done.stderr.strip().splitlines()[-1])  # a list of module names
    heavy = ("pydantic", "sqlite_utils", "engine", "parsers", "pipeline.derive", "pipeline.store")
    assert [m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy)] == []
    fast, used = demo.tally.run([str(demo.game), "--day", "2"], QUIET, full=False)
    assert used and done.stdout == fast[1]


# --------------------------------------------------------------------------- what a cycle stores
# docs/rulings.md:418: 「直接显示它存下的结果（与重新推导完全相同）」 — also when something
# changes while the cycle runs: then it stores no view (and the full path runs).


def _vote_thread_opened_by_bansha(demo: Any) -> None:
    """Day 2's vote thread (2012) no longer in the game file: bansha opened it (game_threads),
    a row written here by another process."""
    db = sqlite3.connect(demo.db)
    with db:
        db.execute(
            "INSERT INTO game_threads(day, role, tid, subject, draft_id, opened_at, how)"
            " VALUES (2, 'vote', 2012, '第二天投票', NULL, ?, 'posted')",
            [QUIET.isoformat()],
        )
    db.close()


def _without_the_vote_thread(demo: Any) -> None:
    text = demo.game.read_text(encoding="utf-8")
    demo.game.write_text(text.replace("vote = 2012\n", "", 1), encoding="utf-8")


def test_a_thread_opened_just_before_the_cycle_takes_the_lock_is_in_its_game(demo, monkeypatch):
    """A ``bansha publish`` that opened day 2's vote thread committed after this cycle loaded
    the game file and before it took the lock: the cycle derives with that thread (its input
    counter already counts it), so the view is what deriving prints."""
    demo.cycle(QUIET)  # day 2's vote thread 2012 is read (its posts stored)
    _without_the_vote_thread(demo)
    real = cycle_views.cycle_lock

    @contextlib.contextmanager
    def publish_first(path: Path, **kw: Any) -> Iterator[None]:
        _vote_thread_opened_by_bansha(demo)  # that publish committed and let the lock go
        with real(path, **kw):
            yield

    later = QUIET + timedelta(minutes=1)
    with monkeypatch.context() as m:
        m.setattr(cycle_views, "cycle_lock", publish_first)
        demo.cycle(later)
    argv = [str(demo.game), "--day", "2"]
    assert demo.tally.same(argv, later)  # the view holds, and has day 2's votes
    fast, _ = demo.tally.run(argv, later, full=False)
    assert "尚未抓取" not in fast[1] and "没有投票" not in fast[1]
    assert demo.tally.same([*argv, "--json"], later)


def test_a_thread_opened_while_the_cycle_crawls_stores_no_view(demo, monkeypatch):
    """A thread opened after the cycle built its game, before it read its input counter (a
    writer that did not wait for the game's lock): the view is not stored; tally derives,
    with the thread."""
    demo.cycle(QUIET)
    _without_the_vote_thread(demo)
    real = cycle_views._crawl

    def opened_meanwhile(ctx: Any, targets: Any, full: bool) -> Any:
        _vote_thread_opened_by_bansha(demo)
        return real(ctx, targets, full)

    later = QUIET + timedelta(minutes=1)
    with monkeypatch.context() as m:
        m.setattr(cycle_views, "_crawl", opened_meanwhile)
        demo.cycle(later)
    assert not demo.tally.same([str(demo.game), "--day", "2"], later)
    outcome, _ = demo.tally.run([str(demo.game), "--day", "2"], later, full=True)
    assert "尚未抓取" not in outcome[1] and "没有投票" not in outcome[1]


def test_the_game_file_edited_and_reverted_while_the_cycle_loads_it(demo, monkeypatch):
    """The director's editor saves B after the cycle read A and puts A back after: the cycle
    derives the bytes it hashed (A), and the view stored under A's digest is A's."""
    import pipeline.game.gamefile as gamefile

    demo.cycle(QUIET)
    a = demo.game.read_text(encoding="utf-8")
    b = a.replace("vote = 2012\n", "", 1)  # day 2's votes no longer counted
    real = gamefile.load_game

    def saved_meanwhile(path: Path, **kw: Any) -> Any:
        demo.game.write_text(b, encoding="utf-8")
        try:
            return real(path, **kw)
        finally:
            demo.game.write_text(a, encoding="utf-8")

    later = QUIET + timedelta(minutes=1)
    with monkeypatch.context() as m:
        m.setattr(gamefile, "load_game", saved_meanwhile)
        demo.cycle(later)
    assert demo.game.read_text(encoding="utf-8") == a
    assert demo.tally.same([str(demo.game), "--day", "2"], later)
    assert demo.tally.same([str(demo.game), "--day", "2", "--json"], later)


def _in_a_process(demo: Any, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` run by a new Python (a bansha started by cron, or by the director)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=demo.env, check=True
    )


def test_code_upgraded_while_a_cycle_crawls(demo):
    """``git pull`` lands while a cron cycle waits on the forum: the cycle rendered with the
    code it imported, so it records neither its derivation nor the views under either code;
    a later tally derives, and so does the next cycle."""
    upgraded = Path(votes.__file__)
    st = upgraded.stat()
    touch = f"os.utime({str(upgraded)!r}, ns=({st.st_atime_ns}, {st.st_mtime_ns + 10**9}))"
    cycle = (
        "import os, pipeline.cli as c, pipeline.cli.cycle as cyc\n"
        "real = cyc._crawl\n"
        f"def crawl(ctx, targets, full):\n    {touch}\n    return real(ctx, targets, full)\n"
        "cyc._crawl = crawl\n"
        "c.cli(['cycle', {game!r}, '--as-of', {now!r}], standalone_mode=False)\n"
    )
    tally = (
        "import sys, pipeline.cli as c\n"
        "from datetime import datetime\n"
        "c.clock = lambda tz: datetime.fromisoformat({now!r})\n"
        "c.cli(['tally', {game!r}, '--day', '2'], standalone_mode=False)\n"
        "print('pipeline.derive' in sys.modules, file=sys.stderr)\n"
    )
    record = "SELECT value FROM meta WHERE key = 'derive:last'"

    def derives(now: datetime) -> bool:  # the new code's tally
        done = _in_a_process(demo, tally.format(game=str(demo.game), now=now.isoformat()))
        return done.stderr.strip().splitlines()[-1] == "True"

    try:
        demo.clock.set(QUIET)
        _in_a_process(demo, cycle.format(game=str(demo.game), now=QUIET.isoformat()))
        assert sqlite3.connect(demo.db).execute(record).fetchone() is None
        assert derives(QUIET)
        later = QUIET + timedelta(minutes=1)
        demo.clock.set(later)
        next_cycle = cycle.replace("cyc._crawl = crawl", "")  # the new code, all of it
        _in_a_process(demo, next_cycle.format(game=str(demo.game), now=later.isoformat()))
        assert sqlite3.connect(demo.db).execute(record).fetchone() is not None  # derived
        assert not derives(later)  # and its view holds
    finally:
        os.utime(upgraded, ns=(st.st_atime_ns, st.st_mtime_ns))


# --------------------------------------------------------------------------- a long game


#: the days of the long game played cycle by cycle; one more cycle after the game's end reads
#: the others at once
PLAYED = 4


def _played_moments() -> list[datetime]:
    """Each played day's six cycles (before it opens, the afternoon, the last hour, just after
    the close and the result, the evening), then one after the last day's close."""
    every = _long_moments()
    return every[: 6 * PLAYED] + every[-1:]


def test_a_long_game_at_every_cycle_shows_what_deriving_shows(tmp_path, monkeypatch):
    game = long_game()
    path = tmp_path / "long.toml"
    path.write_text(tomlkit.dumps(game.to_toml_dict()), encoding="utf-8")
    db = tmp_path / "long.db"
    ctx = load_context(path, str(db))
    tally = Tally(monkeypatch, {}, memo=True)
    moments = _played_moments()
    clock = SimClock(moments[0])
    crawl = LongForum().crawler(ctx.store, clock)
    held = 0
    try:
        for i, now in enumerate(moments):
            clock.set(now)
            if i == 10:
                when = now.isoformat()
                proxy = ["--day", "3", "--voter", NAMES[0], "--target", NAMES[1], "--at", when]
                bansha({}, "vote", "proxy", str(path), "--db", str(db), *proxy)
            store = ctx.store
            run_cycle(
                ctx.game,
                store,
                now=now,
                crawl=crawl,
                draft=lambda d, now=now, store=store: make_drafts(
                    ctx.game,
                    store,
                    d,
                    now=now,
                    unsettled=closed_days_to_reread(ctx.game, store, now),
                ),
                after_derive=lambda d, record: votes.store_tally_views(ctx, d, record),
            )
            # every day's view at each day's close (when the day's result lands) and after the
            # director's record; otherwise the days this cycle can change: the one open or just
            # closed and the next (the default day and the whole-game forms cover the rest)
            today = i // 6 + 1
            if i % 6 == 3 or i == 10 or i == len(moments) - 1:
                days = [n for n in range(1, DAYS + 1) if n <= today + 1]
            else:
                days = [n for n in (today, today + 1) if n <= DAYS]
            used = tally.every_day(path, days, now, "--db", str(db))
            assert all(used[:-1]), f"the view did not hold at {now}"
            held += tally.same([str(path), "--db", str(db)], now + timedelta(seconds=30))
    finally:
        ctx.close()
    assert held > len(moments) / 2
