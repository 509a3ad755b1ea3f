"""One cycle of a game — what cron runs: lock, crawl, derive, draft, post what was approved.

A cycle with nothing new changes no verdict and drafts nothing. A killed cycle leaves the store
consistent (every page and every derivation is one transaction) and the next one completes the
work. Only one cycle per game runs at a time: a second one exits at once.

Derive only on change. Every verdict and every draft is a function of the
store's inputs (posts and their revisions, the director's journal, the engine's snapshots, the
drafts), the game file, bansha's code and templates — and of *which moments* ``now`` has
passed: a vote is late after the close, a day's 潜水 is judged at its close, the reminder is due
in the last hour, a post or a 遗言 counts from its time. A derivation records a fingerprint of
its inputs and the window of time between the moments around it (``meta`` ``derive:last``); a
cycle whose fingerprint is the same and whose ``now`` is in that window would derive, write and
draft exactly what is stored, so it does none of it (it still posts what was approved).

The fingerprint is cheap whatever the game's length: SQLite triggers
(:func:`ensure_change_counters`) count every write to an input table in ``meta``
``derive:inputs`` — of ``posts`` only a change of a column derive reads (a fetch that sees a
post again only moves ``last_seen_at``) — and every write to a derived table or the drafts in
``derive:outputs``; the threads read at least once (``crawled_tids``) are followed through the
new ``crawl_log`` rows only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline import (
    code_identity,
    code_identity_now,
    distinct_tids,
    no_thread_newly_read,
    resources,
    threads_read,
)
from pipeline.store import DRAFT_INPUTS_KEY, POST_COLUMNS, POST_COUNTS_KEY

if TYPE_CHECKING:
    from pipeline.derive import Derivation
    from pipeline.discuz.crawl import CrawlReport, CrawlTarget
    from pipeline.game.gamefile import Game
    from pipeline.store import Store

log = logging.getLogger(__name__)

#: a day's threads are read from this long before it opens (the director may open early)
EARLY = timedelta(minutes=30)


@dataclass
class CycleReport:
    crawl: CrawlReport | None = None
    full_reads: list[int] = field(default_factory=list)  # days whose threads were re-read whole
    derived: bool = False
    #: nothing that can change a verdict or a draft changed since the last derivation: this
    #: cycle did not derive, write or draft (what it would have done is what is stored)
    skipped: bool = False
    verdicts_changed: bool = False
    drafted: list[int] = field(default_factory=list)
    posted: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # the director must act (not a failure)
    #: why the forum was not usable this cycle (then nothing more was asked of it), or None
    down: str | None = None
    #: the forum was down: the approved drafts were not sent this cycle (the next one sends)
    publish_skipped: bool = False
    #: the crawl's requests, and the seconds slept between them (``[forum] min_interval_s``)
    requests: int = 0
    paced_s: float = 0.0

    def lines(self) -> list[str]:
        out = []
        if self.crawl is not None:
            for t in self.crawl.threads:
                if t.error is None:
                    out.append(
                        f"帖子 {t.tid}：读取 {t.pages_fetched} 页，新帖 {t.new_posts}，"
                        f"变化 {t.changed_posts}，消失 {t.vanished_posts}"
                    )
        if self.paced_s >= 1:
            out.append(
                f"读取论坛 {self.requests} 次，按请求间隔（[forum] min_interval_s）"
                f"共等待 {self.paced_s:.0f} 秒"
            )
        if self.full_reads:
            days = "、".join(map(str, self.full_reads))
            out.append(f"已关门、重读全帖以核对编辑和删除：第 {days} 天")
        if self.skipped:
            out.append("没有新内容，未重新推导")
        out.append("结论有变化，已更新" if self.verdicts_changed else "结论没有变化")
        out.append(f"新草稿：{len(self.drafted)} 份" if self.drafted else "没有新草稿")
        for p in self.posted:
            out.append(p.line() if hasattr(p, "line") else str(p))
        if self.publish_skipped:
            out.append("论坛无法使用，本轮没有发帖（已批准的草稿下一轮再发）")
        return out


def targets_due(game: Game, now: datetime) -> list[CrawlTarget]:
    """The threads of every day that has opened (an old day's threads still catch 诈尸).

    The crawl is imported here, where the cycle first needs it: a cycle with threads to read
    reads them with it; one before the game's first day never loads the forum's parsers."""
    from pipeline.discuz.crawl import CrawlTarget

    seen: set[int] = set()
    targets = []
    for day in sorted(game.days, key=lambda d: d.day):
        if day.opens - EARLY > now:
            continue
        for role, tid in day.threads.items():
            if tid in seen:
                continue
            seen.add(tid)
            targets.append(CrawlTarget(tid=tid, day=day.day, role=str(role.value)))
    return targets


def closed_days_to_reread(game: Game, store: Store, now: datetime) -> list[int]:
    """Days closed since the last cycle whose threads have not been re-read whole yet."""
    return [
        d.day
        for d in sorted(game.days, key=lambda d: d.day)
        if now >= d.closes and store.get_meta(f"full_read:{d.day}") is None
    ]


def first_rounds_to_reread(game: Game, store: Store, now: datetime) -> list[int]:
    """太阳[日不落] days whose first 正午 round has ended (m209.txt:377-378) and whose
    first-round vote thread has not been re-read whole since."""
    return [
        d.day
        for d in sorted(game.days, key=lambda d: d.day)
        if d.first_vote is not None
        and d.first_closes is not None
        and now >= d.first_closes
        and store.get_meta(f"full_read:{d.day}:first") is None
    ]


# --------------------------------------------------------------------------- derive on change

#: ``meta`` keys: the change counters the triggers keep, and the last derivation's record
INPUTS_KEY = "derive:inputs"
OUTPUTS_KEY = "derive:outputs"
#: what a draft's text is made from moved on (:data:`pipeline.store.DRAFT_INPUTS_KEY`)
DRAFTS_KEY = DRAFT_INPUTS_KEY
#: inputs a draft is not made from: a thread bansha just opened changes no text already drafted
#: (the 电梯 goes out in the same run), and what waits for it is drafted again anyway
NOT_DRAFT_INPUTS = frozenset({"game_threads"})
RECORD_KEY = "derive:last"
RECORD_VERSION = 1
#: the prefix of the triggers bansha keeps in a store (:func:`ensure_change_counters`)
TRIGGER_PREFIX = "bansha_changes_"

#: The tables whose rows derive or drafting read as inputs: any insert, update or delete of a
#: row bumps ``derive:inputs``. (``posts`` and ``meta`` are watched more narrowly below.)
INPUT_TABLES = (
    "post_revisions",
    "journal_proxy_votes",
    "journal_outs",
    "journal_modifiers",
    "journal_settings",
    "journal_substitutions",
    "journal_actions",
    "journal_lastwords",
    "card_events",
    "flag_decisions",
    "engine_snapshots",
    "engine_events",
    "game_threads",  # the threads bansha opened (their tids are the game's)
)
#: ``posts``: every fetch moves ``last_seen_at`` (and ``page``/``page_id``): only a change of a
#: column derive and drafting read is an input change (``posted_ts`` orders them)
POST_INPUT_COLUMNS = (*POST_COLUMNS, "posted_ts")
#: ``meta``: the marks of a whole re-read after a close (they settle a day's result), and what
#: the forum said about closing threads (no close is drafted after it)
META_INPUT_KEYS = ("full_read:%", "threads:%")
#: What the cycle derives and drafts (and ``bansha tally`` … write too): any write by anyone
#: bumps ``derive:outputs``; the cycle reads it after its own writes.
OUTPUT_TABLES = ("votes", "tallies", "post_counts", "flags", "drafts")
#: Read by derive only to know which threads were read at least once (``crawled_tids``):
#: fingerprinted by that set of the game's threads, followed through new ``crawl_log`` rows.
CRAWL_TABLES = ("threads", "crawl_log")


def _bump(*keys: str) -> str:
    return " ".join(
        f"UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = '{key}';" for key in keys
    )


def _key_is_input(row: str) -> str:
    return "(" + " OR ".join(f"{row}.key LIKE '{k}'" for k in META_INPUT_KEYS) + ")"


def change_triggers(tables: set[str]) -> dict[str, str]:
    """The triggers that keep the change counters: name -> ``CREATE TRIGGER`` statement, for
    the watched tables that exist. A trigger's name ends with a digest of its statement, so a
    changed definition is a new trigger (the old one is dropped)."""
    # (table, op) -> (when, counters)
    bodies: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
    both = (INPUTS_KEY, DRAFTS_KEY)
    for table in INPUT_TABLES:
        for op in ("INSERT", "UPDATE", "DELETE"):
            bodies[(table, op)] = ("", (INPUTS_KEY,) if table in NOT_DRAFT_INPUTS else both)
    for table in OUTPUT_TABLES:
        for op in ("INSERT", "UPDATE", "DELETE"):
            extra = (POST_COUNTS_KEY,) if table == "post_counts" else ()
            bodies[(table, op)] = ("", (OUTPUTS_KEY, *extra))
    bodies[("posts", "INSERT")] = ("", both)
    bodies[("posts", "DELETE")] = ("", both)
    changed = " OR ".join(f"old.{c} IS NOT new.{c}" for c in POST_INPUT_COLUMNS)
    bodies[("posts", "UPDATE")] = (changed, both)
    bodies[("meta", "INSERT")] = (_key_is_input("new"), both)
    bodies[("meta", "UPDATE")] = (
        f"({_key_is_input('old')} OR {_key_is_input('new')}) "
        "AND (old.key IS NOT new.key OR old.value IS NOT new.value)",
        both,
    )
    bodies[("meta", "DELETE")] = (_key_is_input("old"), both)
    out: dict[str, str] = {}
    for (table, op), (when, counters) in bodies.items():
        if table not in tables:
            continue
        body = (
            f"AFTER {op} ON {table}"
            + (f" WHEN {when}" if when else "")
            + f" BEGIN {_bump(*counters)} END"
        )
        digest = hashlib.sha256(body.encode()).hexdigest()[:10]
        name = f"{TRIGGER_PREFIX}{table}_{op.lower()}_{digest}"
        out[name] = f"CREATE TRIGGER {name} {body}"
    return out


def ensure_change_counters(store: Store) -> bool:
    """Install (or bring up to date) the triggers and counters :func:`run_cycle` skips by.

    Returns whether anything had to be installed: then writes may have gone uncounted (a
    store from before, a trigger a table rebuild dropped), so the last derivation's record is
    dropped and the next cycle derives. Cheap when all is in place (two small reads).
    """
    tables = {r[0] for r in store.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    want = change_triggers(tables)
    have = {
        r[0]
        for r in store.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND substr(name, 1, ?) = ?",
            [len(TRIGGER_PREFIX), TRIGGER_PREFIX],
        )
    }
    keys = (INPUTS_KEY, OUTPUTS_KEY, DRAFTS_KEY, POST_COUNTS_KEY)
    counters = {
        r[0] for r in store.execute("SELECT key FROM meta WHERE key IN (?, ?, ?, ?)", list(keys))
    }
    if have == set(want) and counters == set(keys):
        return False
    with store.atomic():
        for name in have - set(want):
            store.execute(f"DROP TRIGGER IF EXISTS {name}")
        for name in set(want) - have:
            store.execute(want[name])
        for key in keys:
            store.execute("INSERT OR IGNORE INTO meta(key, value) VALUES (?, '0')", [key])
        store.execute("DELETE FROM meta WHERE key = ?", [RECORD_KEY])
    return True


def counter(store: Store, key: str) -> int | None:
    """A change counter of ``meta`` (None when the store has none)."""
    row = store.execute("SELECT value FROM meta WHERE key = ?", [key]).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def game_identity(game: Game) -> str:
    """A digest of the whole validated game file (days, roster, cards, the rule set's table)."""
    return hashlib.sha256(game.model_dump_json().encode("utf-8")).hexdigest()[:32]


def templates_identity(templates_dir: Path | str | None) -> str:
    """A digest of the templates drafting reads: bansha's and the director's folder."""
    digest = hashlib.sha256()
    # bansha's own folder named as pipeline.drafts names it, without loading drafting (jinja2)
    for folder in (resources.templates_dir(), templates_dir):
        if folder is None:
            continue
        digest.update(f"{folder}\n".encode())
        try:
            paths = sorted(Path(folder).glob("*.j2"))
        except OSError:
            paths = []
        for path in paths:
            try:
                digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
            except OSError:
                digest.update(path.name.encode() + b"\0?\0")
    return digest.hexdigest()[:32]


def _game_tids(game: Game) -> set[int]:
    return {tid for day in game.days for tid in day.threads.values()}


def crawl_state(game: Game, store: Store) -> dict[str, Any]:
    """The game's threads derive counts as read (``pipeline.derive.crawled_tids``), and the
    last ``crawl_log`` row they were taken from. Once read, a thread stays read: a later
    cycle only looks at the newer crawl log rows (:func:`_crawl_unchanged`)."""
    tids = _game_tids(game)
    last = store.execute("SELECT COALESCE(MAX(id), 0) FROM crawl_log").fetchone()[0]
    logged = distinct_tids(store.execute, "crawl_log", "outcome = 'ok' AND id <= ?", [last])
    posted = distinct_tids(store.execute, "posts")
    read = (logged | posted | threads_read(store.execute, tids)) & tids
    return {"read": sorted(read), "log": int(last)}


def _crawl_unchanged(game: Game, store: Store, state: dict[str, Any]) -> bool:
    return no_thread_newly_read(store.execute, _game_tids(game), state)


def moments(game: Game, store: Store, d: Derivation) -> set[datetime]:
    """Every moment a verdict or a draft can change at without any input changing: each
    comparison derive, drafting and the cycle make with ``now`` is ``moment <= now``.

    From the game file: each day's opening (and the crawl's ``EARLY`` before it, and the
    ``[threads] draft_hours`` before it its new threads are drafted from), its close (and a
    day after it, when its vote thread's close is no longer drafted),
    the reminder and the last hour before it (the inquiry close, zhenyan.txt:188), the first
    正午 round's end, the 申请加速/延时 deadlines. From the store: when each player went out
    (who is living at ``now``), and the times of the journal's entries (a 遗言 counts from its
    time). Posts are added by :func:`derivation_window` (only the nearest ones matter).

    The rule set and the game's threads are imported here, with a derivation to bound: a
    cycle with nothing new never loads them.
    """
    from engine.rulesets import get_ruleset
    from engine.speed import speed_deadlines
    from pipeline.game.threads import CLOSE_WINDOW

    rs = get_ruleset(game.game.ruleset)
    found: set[datetime] = set()
    reminder = timedelta(minutes=game.drafts.reminder_minutes)
    ahead = timedelta(hours=game.threads.draft_hours)
    for day in game.days:
        found |= {day.opens, day.opens - EARLY, day.closes, day.closes - reminder}
        if game.forum.fid is not None:
            # a day's new threads and its vote threads' close are drafted from this moment on,
            # the close until a day after the close (pipeline.drafts: the game's threads)
            found |= {day.opens - ahead, day.closes + CLOSE_WINDOW}
            if day.first_closes is not None:
                found.add(day.first_closes + CLOSE_WINDOW)
            if rs.inquiry is not None:  # the inquiry thread's close is drafted until then
                found.add(day.closes - rs.inquiry.close_before + CLOSE_WINDOW)
        found.add(day.closes - timedelta(hours=1))
        if rs.inquiry is not None:  # the inquiry thread closes before the day (zhenyan.txt:188)
            found.add(day.closes - rs.inquiry.close_before)
        if day.first_closes is not None:
            found.add(day.first_closes)
        try:
            dl = speed_deadlines(rs.speed, closes=day.closes, opens=day.opens, tz=game.game.tz)
            found |= {dl.accelerate, dl.delay}
        except (KeyError, ValueError):
            pass
    found |= {at for at, _why in d.outs.values()}
    for res in d.days.values():
        found |= set(res.out_before.values())
        if res.first is not None:
            found.add(res.first.closes)
    for table, column in (
        ("journal_lastwords", "at"),
        ("journal_proxy_votes", "at"),
        ("journal_outs", "at"),
        ("card_events", "at"),
        ("journal_substitutions", "from_at"),
        ("journal_actions", "at"),
    ):
        try:
            rows = store.execute(f"SELECT {column} FROM {table} WHERE {column} IS NOT NULL")
        except sqlite3.OperationalError:  # a store without the table: nothing recorded there
            continue
        for (raw,) in rows:
            try:
                at = datetime.fromisoformat(raw)
            except (TypeError, ValueError):
                continue
            if at.tzinfo is not None:
                found.add(at)
    return found


def derivation_window(
    game: Game, store: Store, d: Derivation, as_of: datetime
) -> tuple[datetime | None, datetime | None]:
    """``(lo, hi)``: a derivation at any ``now`` with ``lo <= now < hi`` sees the same moments
    passed as one at ``as_of`` (None: no bound). Posts count from their time (a post stored
    ahead of ``now`` — a forum clock ahead of ours — counts once ``now`` reaches it)."""
    found = moments(game, store, d)
    ts = int(as_of.timestamp())
    # posted_ts is posted_at's whole seconds: read the posts of the seconds around as_of exactly
    for (raw,) in store.execute(
        "SELECT posted_at FROM posts WHERE posted_ts BETWEEN ? AND ? AND posted_at IS NOT NULL",
        [ts - 1, ts + 1],
    ):
        found.add(datetime.fromisoformat(raw))
    later = store.execute(
        "SELECT MIN(posted_ts) FROM posts WHERE posted_ts > ?", [ts + 1]
    ).fetchone()[0]
    if later is not None:  # posted at or after that second
        found.add(datetime.fromtimestamp(int(later), as_of.tzinfo))
    earlier = store.execute(
        "SELECT MAX(posted_ts) FROM posts WHERE posted_ts < ?", [ts - 1]
    ).fetchone()[0]
    if earlier is not None:  # posted before the end of that second
        found.add(datetime.fromtimestamp(int(earlier) + 1, as_of.tzinfo))
    lo = max((m for m in found if m <= as_of), default=None)
    hi = min((m for m in found if m > as_of), default=None)
    return lo, hi


def _iso_or_none(dt: datetime | None) -> str | None:
    return dt.isoformat() if dt is not None else None


def current_inputs(
    game: Game,
    store: Store,
    *,
    templates_dir: Path | str | None,
    drafting: bool,
    identity: str | None = None,
) -> dict[str, Any]:
    """This cycle's fingerprint of everything a derivation and its drafts depend on but the
    time: cheap (counters, digests of the game file, the code and the templates).
    ``identity``: the game's :func:`game_identity`, when the caller knows it already (the
    light cycle: the game file's bytes are those it was taken of)."""
    return {
        "v": RECORD_VERSION,
        "inputs": counter(store, INPUTS_KEY),
        "outputs": counter(store, OUTPUTS_KEY),
        "game": game_identity(game) if identity is None else identity,
        "code": code_identity(),
        "templates": templates_identity(templates_dir) if drafting else None,
    }


def last_derivation(store: Store) -> dict[str, Any] | None:
    return store.get_meta_json(RECORD_KEY)


def nothing_new(
    game: Game,
    store: Store,
    record: dict[str, Any] | None,
    inputs: dict[str, Any],
    *,
    now: datetime,
    drafting: bool,
) -> bool:
    """Whether a derivation at ``now`` would derive, write and draft exactly what the last one
    did: the same inputs, the same threads read, and no moment between its time and ``now``."""
    if record is None or record.get("v") != RECORD_VERSION:
        return False
    if inputs["inputs"] is None or inputs["outputs"] is None:
        return False
    for key in ("inputs", "outputs", "game", "code"):
        if record.get(key) != inputs[key]:
            return False
    if drafting and (not record.get("drafted") or record.get("templates") != inputs["templates"]):
        return False
    lo, hi = record.get("lo"), record.get("hi")
    if lo is not None and now < datetime.fromisoformat(lo):
        return False
    if hi is not None and now >= datetime.fromisoformat(hi):
        return False
    return _crawl_unchanged(game, store, record.get("crawl") or {})


def run_cycle(
    game: Game,
    store: Store,
    *,
    now: datetime,
    crawl: Callable[[list[CrawlTarget], bool], CrawlReport],
    draft: Callable[[Derivation], list[int]] | None = None,
    publish: Callable[[], list[Any]] | None = None,
    templates_dir: Path | str | None = None,
    rederive: bool = False,
    after_derive: Callable[[Derivation, str], None] | None = None,
    crawled: CycleReport | None = None,
) -> CycleReport:
    """Crawl → derive → draft → post. ``crawl(targets, full)`` does the network part.

    The first crawl that finds the forum not usable (``CrawlReport.down``) ends the network
    part: no closed day and no first round is re-read and nothing is published this cycle
    (each would only wait out the same retries again: ``report.publish_skipped``), and the
    cause is said once in ``errors``.

    Derive, write and draft only on change: when nothing a verdict or a draft depends on
    changed since the last derivation and no moment passed (:func:`nothing_new`), the cycle
    skips them (``report.skipped``; the last derivation's warnings are said again) and only
    posts what was approved. ``templates_dir``: the director's template folder ``draft``
    uses (part of the fingerprint); ``rederive``: derive whatever the fingerprint says;
    ``after_derive(d, record)``: called in the same transaction once a derivation and its
    record (``meta`` ``derive:last``, as stored) are written (the CLI stores tally's views).
    ``crawled``: the report of this cycle's network part, already done by :func:`crawl_due`
    (the light cycle, pipeline/cli/quick.py): ``crawl`` is then not called.
    """
    if crawled is None:
        report = CycleReport()
        ensure_change_counters(store)  # before the crawl: its writes are counted
        crawl_due(game, store, now, crawl, report)
    else:
        report = crawled
    drafting = draft is not None
    # read before derive: a write while it runs makes the next cycle derive again
    inputs = current_inputs(game, store, templates_dir=templates_dir, drafting=drafting)
    record = last_derivation(store)
    if not rederive and nothing_new(game, store, record, inputs, now=now, drafting=drafting):
        assert record is not None
        report.skipped = True
        report.warnings = [str(w) for w in record.get("warnings", ())]
    else:
        _derive_and_record(game, store, now, inputs, report, draft, after_derive)
    if publish is not None and report.down is not None:
        # the forum is down: a send would only wait out the same retries and say it again
        report.publish_skipped = True
    elif publish is not None:
        _publish_approved(report, publish)
    return report


def _say(report: CycleReport, lines: list[str]) -> None:
    """Add ``lines`` to the cycle's errors, each once."""
    report.errors.extend(line for line in lines if line not in report.errors)


def crawl_due(
    game: Game,
    store: Store,
    now: datetime,
    crawl: Callable[[list[CrawlTarget], bool], CrawlReport],
    report: CycleReport,
) -> None:
    """The network part of a cycle: read the threads due, then re-read whole each day closed
    (and each 太阳[日不落] first round ended) since, until the forum is found not usable."""

    def crawl_once(batch: list[CrawlTarget], full: bool) -> CrawlReport:
        result = crawl(batch, full)
        report.requests += int(getattr(result, "requests", 0))
        report.paced_s += float(getattr(result, "paced_s", 0.0))
        _say(report, result.errors)
        if result.down is not None:
            report.down = result.down
        return result

    targets = targets_due(game, now)
    if not targets:
        return
    report.crawl = crawl_once(targets, False)
    for n in closed_days_to_reread(game, store, now):
        if report.down is not None:
            break
        day = game.day(n)
        again = [t for t in targets if t.tid in day.threads.values()]
        full = crawl_once(again, True)
        if full.ok:
            store.set_meta(f"full_read:{n}", now.isoformat())
            report.full_reads.append(n)
    for n in first_rounds_to_reread(game, store, now):
        if report.down is not None:
            break
        # the first round's result is drafted only from a whole re-read of its thread
        tid = game.day(n).first_vote
        again = [t for t in targets if t.tid == tid]
        full = crawl_once(again, True)
        if full.ok:
            store.set_meta(f"full_read:{n}:first", now.isoformat())
    if report.down is not None:
        waiting = closed_days_to_reread(game, store, now)
        if waiting:
            days = "、".join(map(str, waiting))
            _say(report, [f"论坛恢复前不重读已关门的第 {days} 天，其结果暂不起草"])


#: how many times a cycle derives when a director's record lands while it derives
DERIVE_TRIES = 3


def _derive_and_record(
    game: Game,
    store: Store,
    now: datetime,
    inputs: dict[str, Any],
    report: CycleReport,
    draft: Callable[[Derivation], list[int]] | None,
    after_derive: Callable[[Derivation, str], None] | None,
) -> None:
    """Derive at ``now``, write the verdicts, draft, and record the derivation (its inputs and
    its window of time) for the next cycle's :func:`nothing_new`.

    A director's record made while it derives (another window, the console) was not seen by
    the derivation: drafts made from it would be marked as made from the records as they are
    then, and could go out saying what is no longer so. The cycle derives again (up to
    :data:`DERIVE_TRIES` times); if the records keep changing it writes the verdicts but
    drafts nothing this time (the record says so: the next cycle drafts).

    The derivation package is imported here, the first time a cycle derives: a cycle with
    nothing new never loads it (nor the engine's kernels it runs)."""
    from pipeline.derive import derive

    crawled = crawl_state(game, store)
    failed: Exception | None = None
    for tries_left in reversed(range(DERIVE_TRIES)):
        drafts_at = counter(store, DRAFTS_KEY)
        d = derive(game, store, as_of=now)
        # the write lock is held from the verdicts to the record: the outputs counter read at
        # the end counts this cycle's own writes and nobody else's
        with store.atomic():
            moved = counter(store, DRAFTS_KEY) != drafts_at
            if not moved or not tries_left:
                failed = _record_derivation(
                    _Derived(game, store, now, inputs, d, crawled),
                    report,
                    None if moved else draft,
                    after_derive,
                )
                break
        inputs = {**inputs, "inputs": counter(store, INPUTS_KEY)}
    if moved and draft is not None:
        report.warnings.append(
            "这一轮推导期间导演的记录一直在变：这一轮没有起草，下一轮按新的记录起草"
        )
    if failed is not None:
        raise failed


@dataclass(frozen=True, slots=True)
class _Derived:
    """One derivation to write, and what it was made from."""

    game: Game
    store: Store
    now: datetime
    inputs: dict[str, Any]
    d: Derivation
    crawled: Any


def _record_derivation(
    w: _Derived,
    report: CycleReport,
    draft: Callable[[Derivation], list[int]] | None,
    after_derive: Callable[[Derivation, str], None] | None,
) -> Exception | None:
    """Write one derivation's verdicts, its drafts and its record, in the caller's write
    transaction. Returns the drafting's failure (None: it drafted), for the caller to raise
    once the transaction is over: the verdicts stay."""
    from pipeline.derive import write_derivation

    store, d = w.store, w.d
    report.derived = True
    failed: Exception | None = None
    report.verdicts_changed = write_derivation(store, d, now=w.now)
    report.warnings = d.warnings()
    undone: list[str] = []
    if draft is not None:
        seen = _last_draft_event(store)
        try:
            with store.atomic():  # a savepoint: a refused draft leaves the verdicts
                report.drafted = draft(d)
        except Exception as exc:
            failed = exc
        undone = _approvals_undone(store, seen)
    if failed is None:
        lo, hi = derivation_window(w.game, store, d, w.now)
        saved = {
            **w.inputs,
            "outputs": counter(store, OUTPUTS_KEY),
            "crawl": w.crawled,
            "drafted": draft is not None,
            "as_of": w.now.isoformat(),
            "lo": _iso_or_none(lo),
            "hi": _iso_or_none(hi),
            "warnings": report.warnings,
        }
        record_text = json.dumps(saved, ensure_ascii=False)
        store.set_meta(RECORD_KEY, record_text)
        if after_derive is not None:
            after_derive(d, record_text)
        if code_identity_now() != w.inputs["code"]:
            # bansha's files changed while this cycle ran (an upgrade during the crawl):
            # no record (nor tally views, whose key is the record): the next one derives
            store.execute("DELETE FROM meta WHERE key = ?", [RECORD_KEY])
            store.write_tally_views("", {})
    # said by this cycle only (not kept with the record: a later cycle with nothing new
    # would say it again after the director approved the new draft)
    report.warnings += undone
    return failed


def _publish_approved(report: CycleReport, publish: Callable[[], list[Any]]) -> None:
    """Post what the director approved; what the forum refused is said in the report."""
    report.posted = publish()
    # said once, not a failure: the account may not close threads (no close is tried
    # again), a captcha the director gets past by hand (later cycles wait quietly)
    report.warnings += [r.line() for r in report.posted if getattr(r, "notice", False)]
    report.errors += [
        r.line()
        for r in report.posted
        if not getattr(r, "ok", True)
        and not getattr(r, "notice", False)
        and not getattr(r, "director", False)
    ]


# --------------------------------------------------------------------------- when the cycles run

#: how often a cycle runs besides the game's moments (minutes; ``bansha schedule --every``)
EVERY_MINUTES = 5


@dataclass(frozen=True, slots=True)
class CycleMoment:
    """A moment a cycle runs at besides the rhythm: ``bansha schedule`` prints a one-off crontab
    line for it and ``bansha run`` runs a cycle then.

    ``kind``: ``opens`` (the approved new threads go out on time; only with ``[forum] fid``),
    ``closes`` (one minute after the close: the day's result), ``first_closes`` (one minute
    after a 太阳[日不落] day's first 正午 round) or ``reminder`` (the vote reminder, ``[drafts]
    reminder_minutes`` before the close). ``moment``: the game's moment it is about (the
    opening or the close); ``at``: when the cycle runs."""

    kind: str
    day: int
    moment: datetime
    at: datetime


def cycle_moments(game: Game) -> list[CycleMoment]:
    """Every one-off cycle of the game, day by day in the order ``bansha schedule`` prints them
    (per day: opening, close, first round, reminder). Pure: a function of the game file."""
    reminder = timedelta(minutes=game.drafts.reminder_minutes)
    minute = timedelta(minutes=1)
    out: list[CycleMoment] = []
    for day in sorted(game.days, key=lambda d: d.day):
        if game.forum.fid is not None:
            out.append(CycleMoment("opens", day.day, day.opens, day.opens))
        out.append(CycleMoment("closes", day.day, day.closes, day.closes + minute))
        if day.first_closes is not None:
            out.append(
                CycleMoment("first_closes", day.day, day.first_closes, day.first_closes + minute)
            )
        out.append(CycleMoment("reminder", day.day, day.closes, day.closes - reminder))
    return out


def to_the_minute(moment: datetime) -> datetime:
    """``moment`` without its seconds: a crontab line names the minute, cron fires at its start."""
    return moment.replace(second=0, microsecond=0)


def next_rhythm(after: datetime, every: int = EVERY_MINUTES) -> datetime:
    """The first moment after ``after`` that ``*/every * * * *`` fires at: a whole minute of the
    machine's own clock (cron's zone) whose minute is a multiple of ``every``."""
    t = to_the_minute(after.astimezone(UTC)) + timedelta(minutes=1)
    while t.astimezone().minute % every:  # at most an hour of minutes; offsets are whole minutes
        t += timedelta(minutes=1)
    return t.astimezone(after.tzinfo)


def next_cycle(game: Game, after: datetime, every: int = EVERY_MINUTES) -> datetime:
    """When the game's next cycle runs after ``after``: the rhythm's next minute or an earlier
    one-off moment (:func:`cycle_moments`), each to its minute as cron runs it. Pure."""
    best = next_rhythm(after, every)
    for m in cycle_moments(game):
        at = to_the_minute(m.at)
        if after < at < best:
            best = at
    return best.astimezone(after.tzinfo)


def _last_draft_event(store: Store) -> int:
    row = store.execute("SELECT MAX(id) FROM draft_events").fetchone()
    return int(row[0] or 0)


def _approvals_undone(store: Store, after: int) -> list[str]:
    """The approved drafts this cycle set aside (their inputs changed): said, since what the
    director approved will not go out until a new draft is approved."""
    rows = store.query(
        "SELECT e.draft_id, e.note, d.kind, d.day FROM draft_events e "
        "JOIN drafts d ON d.id = e.draft_id WHERE e.id > ? AND e.from_state = 'approved' "
        "AND e.to_state = 'superseded' ORDER BY e.id",
        [after],
    )
    if not rows:
        return []
    from pipeline.drafts.model import KIND_ZH  # only when there is one to say

    return [
        f"已批准的第 {r['draft_id']} 号草稿（第{r['day']}天 {KIND_ZH.get(r['kind'], r['kind'])}）"
        f"不会发出：{r['note']}；请查看并批准新的草稿"
        for r in rows
    ]
