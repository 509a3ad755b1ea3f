"""The light cycle: ``bansha cycle`` without the game file's model while the file is unchanged.

A cycle with nothing new reads the forum, finds nothing, and neither derives nor drafts
(pipeline/cycle.py). All it needs of the game file to get there is what the crawl needs (each
day's times and threads, the forum's settings) and whether the file is the one the last
derivation was made from. When a cycle derives, it stores that much beside its record
(:data:`PLAN_META`, written with the record of the derivation, ``meta`` ``derive:last``), under
a key of what the validated game depended on: the bytes of the game file at the same place
(SHA-256), where ``[drafts] templates`` resolves to, whether the login's environment variables
are set (a forum that requires login is refused without them), bansha's code
(:func:`pipeline.code_identity`), and the record itself. The next cycle checks that key with
the standard library only (:func:`read_plan`); when it holds, the cycle runs without building
the game file's model (pydantic, the rule sets): under the game's lock it checks that no input
changed since the derivation (the threads bansha opened are an input: the plan's threads are
the game's), crawls exactly as the full cycle does (:func:`pipeline.cycle.crawl_due`, on the
plan's days), and asks :func:`pipeline.cycle.nothing_new` with the record's game identity.

Nothing new, no approved draft to post and no notification configured: the cycle is recorded
(:func:`pipeline.notify.record_cycle`) and ends. Otherwise the game file's model is built and
the full cycle goes on from the crawl it made (:func:`pipeline.cli.cycle.cycle_once`): the
forum is never read twice. Whatever the key does not cover makes the light path step aside
before anything is done.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from pipeline import PathError, code_identity, expand_home, read_readonly, resolve_db_path

if TYPE_CHECKING:
    from pipeline.cycle import CycleReport
    from pipeline.discuz.client import RetryPolicy
    from pipeline.discuz.crawl import CrawlReport, CrawlTarget
    from pipeline.game.gamefile import Game
    from pipeline.store import Store

#: ``meta`` key of the light cycle's plan (JSON: its key and what the crawl needs)
PLAN_META = "cycle:plan"
#: the version of the plan's shape: another one is never read
PLAN_VERSION = 1
#: the cycle's record of its last derivation (pipeline/cycle.py)
RECORD_KEY = "derive:last"
#: the store's input counter (pipeline/cycle.py)
INPUTS_KEY = "derive:inputs"
#: the environment variable lowering the crawl's attempts
MAX_ATTEMPTS_ENV = "BANSHA_MAX_ATTEMPTS"
#: the notification URLs of the environment (pipeline.notify)
NOTIFY_ENV = "BANSHA_NOTIFY"


# --------------------------------------------------------------------------- the crawl


def retry_policy() -> RetryPolicy:
    """The retry bounds; ``BANSHA_MAX_ATTEMPTS`` lowers the attempts (e.g. for a tight cron)."""
    from pipeline.discuz.client import RetryPolicy

    raw = os.environ.get(MAX_ATTEMPTS_ENV)
    if raw is None:
        return RetryPolicy()
    try:
        attempts = int(raw)
    except ValueError:
        raise click.ClickException(f"环境变量 {MAX_ATTEMPTS_ENV} 应为正整数：{raw}") from None
    if attempts < 1:
        raise click.ClickException(f"环境变量 {MAX_ATTEMPTS_ENV} 应为正整数：{raw}")
    return RetryPolicy(max_attempts=attempts)


class ForumSettings(NamedTuple):
    """What the crawl reads of ``[forum]`` and ``[game]`` (the zone the pages' times are in).

    The light cycle's records are named tuples: immutable like a frozen dataclass, and made at
    import for a fraction of a dataclass's cost (a nothing-new cycle is mostly start-up)."""

    base_url: str
    timezone: str
    encoding: str
    source: str
    ppp: int
    min_interval_s: float
    cookie_env: str

    @classmethod
    def of(cls, game: Game) -> ForumSettings:
        forum = game.forum
        return cls(
            base_url=str(forum.base_url),
            timezone=game.game.timezone,
            encoding=forum.encoding,
            source=forum.source,
            ppp=forum.ppp,
            min_interval_s=forum.min_interval_s,
            cookie_env=forum.cookie_env,
        )


def crawl_forum(
    store: Store,
    forum: ForumSettings,
    targets: list[CrawlTarget],
    *,
    full: bool = False,
    transport: Any = None,
    base_url: str | None = None,
    min_interval_s: float | None = None,
    progress: Callable[[int, int, int], None] | None = None,
) -> CrawlReport:
    """Read ``targets`` from the forum into ``store``: the crawl every command makes (the
    login cookie of ``[forum] cookie_env``, the retries, the pace)."""
    from zoneinfo import ZoneInfo

    from pipeline.cli import make_http_client
    from pipeline.discuz.client import DiscuzClient, SessionJar
    from pipeline.discuz.crawl import Crawler, ForumConfig

    cookie = os.environ.get(forum.cookie_env) or None
    http = make_http_client() if transport is None else _client_with(transport)
    config = ForumConfig(
        base_url=base_url or forum.base_url,
        tz=ZoneInfo(forum.timezone),
        encoding=forum.encoding,
        source=forum.source,
        html_ppp=forum.ppp,
    )
    with http:
        client = DiscuzClient(
            http,
            base_url=base_url or forum.base_url,
            min_interval_s=forum.min_interval_s if min_interval_s is None else min_interval_s,
            # a session jar even for a guest: cookies the forum sets (saltkey, lastrequest,
            # the anti-CC visitcode) go back with the next request, as a browser's would
            jar=SessionJar(cookie),
            policy=retry_policy(),
        )
        return Crawler(client, store, config, progress=progress).crawl(targets, full=full)


def _client_with(transport: Any) -> Any:
    import httpx

    return httpx.Client(transport=transport, timeout=httpx.Timeout(20.0))


# --------------------------------------------------------------------------- the plan


class Role(str):
    """A thread's role as the plan keeps it (``.value`` as the game file's roles have)."""

    @property
    def value(self) -> str:
        return str(self)


class PlanDay(NamedTuple):
    """A day as the crawl and the nothing-new check read it."""

    day: int
    opens: datetime
    closes: datetime
    first_vote: int | None
    first_closes: datetime | None
    threads: dict[Role, int]


class PlanGame(NamedTuple):
    """The game as the crawl and the nothing-new check read it (the game file's days with the
    threads bansha opened, in the file's order)."""

    days: list[PlanDay]

    def day(self, n: int) -> PlanDay:
        for day in self.days:
            if day.day == n:
                return day
        raise ValueError(f"游戏文件中没有第 {n} 天")


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def _at(raw: str | None) -> datetime | None:
    return datetime.fromisoformat(raw) if raw is not None else None


def templates_resolved(value: str | None, game_path: Path) -> str | None:
    """Where ``[drafts] templates`` points, from the game file's folder; ``"!"`` when it leaves
    that folder (the game file check refuses it: the full cycle says so)."""
    if value is None:
        return None
    base = Path(game_path).resolve().parent
    try:
        raw = expand_home(value)
    except PathError:
        return "!"  # no home folder to find here: the full cycle's game file check says so
    resolved = (raw if raw.is_absolute() else base / raw).resolve()
    if ".." in raw.parts or (resolved != base and base not in resolved.parents):
        return "!"
    return str(resolved)


def login_env(forum: Mapping[str, Any], env: Mapping[str, str]) -> list[bool]:
    """Whether each environment variable the login check reads is set, as that check reads it
    (the cookie and the account stripped, the password as it is): a forum that requires login
    is refused when none of the ways to log in is."""
    cookie, user, password = (forum.get(k) for k in ("cookie_env", "username_env", "password_env"))
    return [
        bool(cookie and env.get(cookie, "").strip()),
        bool(user and env.get(user, "").strip()),
        bool(password and env.get(password, "")),
    ]


def plan_text(
    game: Game,
    *,
    game_path: Path,
    game_digest: str,
    templates_dir: Path | None,
    record: str,
    env: Mapping[str, str],
) -> str:
    """The plan (JSON) of a cycle that derived ``game`` (built from the game file's bytes of
    SHA-256 ``game_digest``, with the threads bansha opened) and recorded ``record``."""
    from pipeline.notify import notify_urls

    forum = ForumSettings.of(game)
    days = [
        {
            "day": d.day,
            "opens": _iso(d.opens),
            "closes": _iso(d.closes),
            "first_vote": d.first_vote,
            "first_closes": _iso(d.first_closes),
            "threads": [[str(role.value), tid] for role, tid in d.threads.items()],
        }
        for d in game.days
    ]
    login = {
        "cookie_env": game.forum.cookie_env,
        "username_env": game.forum.username_env,
        "password_env": game.forum.password_env,
    }
    return json.dumps(
        {
            "v": PLAN_VERSION,
            "game_path": str(Path(game_path).resolve()),
            "game_sha256": game_digest,
            "templates_value": game.drafts.templates,
            "templates": templates_resolved(game.drafts.templates, game_path),
            "templates_dir": str(templates_dir) if templates_dir is not None else None,
            "login": login_env(login, env),
            "login_names": login,
            "code": code_identity(),
            "record": hashlib.sha256(record.encode("utf-8")).hexdigest(),
            "id": game.game.id,
            "notify": bool(notify_urls(game, {})),
            "forum": {
                "base_url": forum.base_url,
                "timezone": forum.timezone,
                "encoding": forum.encoding,
                "source": forum.source,
                "ppp": forum.ppp,
                "min_interval_s": forum.min_interval_s,
                "cookie_env": forum.cookie_env,
            },
            "days": days,
        },
        ensure_ascii=False,
    )


class Plan(NamedTuple):
    """A plan whose key holds for the game file as it is now."""

    game_path: Path
    db_path: Path
    game_id: str
    templates_dir: Path | None
    record: str
    forum: ForumSettings
    game: PlanGame


def _plan_game(days: list[Mapping[str, Any]]) -> PlanGame:
    return PlanGame(
        [
            PlanDay(
                day=int(d["day"]),
                opens=datetime.fromisoformat(d["opens"]),
                closes=datetime.fromisoformat(d["closes"]),
                first_vote=None if d["first_vote"] is None else int(d["first_vote"]),
                first_closes=_at(d["first_closes"]),
                threads={Role(role): int(tid) for role, tid in d["threads"]},
            )
            for d in days
        ]
    )


def read_plan(game_path: Path, db: str | None, env: Mapping[str, str] | None = None) -> Plan | None:
    """The stored plan when its key holds now (the standard library only: the store read
    read-only); None when there is none, it does not hold, or anything is unusual."""
    env = os.environ if env is None else env
    if any(env.get(NOTIFY_ENV, "").split()):
        return None  # a notification to plan: the full cycle's
    try:
        raw = Path(game_path).read_bytes()
    except OSError:
        return None
    db_path = resolve_db_path(game_path, db, env)
    rows = read_readonly(
        db_path,
        lambda conn: dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?)", [PLAN_META, RECORD_KEY]
            ).fetchall()
        ),
    )
    if rows is None:
        return None
    try:
        return _holding(rows, game_path, db_path, raw, env)
    except (ValueError, TypeError, KeyError, AttributeError):
        return None  # a plan not as written


def _holding(
    rows: Mapping[str, str], game_path: Path, db_path: Path, raw: bytes, env: Mapping[str, str]
) -> Plan | None:
    """The plan of ``rows`` when its key holds for the game file's bytes ``raw`` now."""
    if PLAN_META not in rows or RECORD_KEY not in rows:
        return None
    plan = json.loads(rows[PLAN_META])
    record = rows[RECORD_KEY]
    if not isinstance(plan, Mapping) or plan.get("v") != PLAN_VERSION:
        return None
    checks = (
        plan["record"] == hashlib.sha256(record.encode("utf-8")).hexdigest(),
        plan["game_sha256"] == hashlib.sha256(raw).hexdigest(),
        plan["game_path"] == str(Path(game_path).resolve()),
        plan["templates"] == templates_resolved(plan["templates_value"], game_path),
        plan["templates"] != "!",
        plan["login"] == login_env(plan["login_names"], env),
        plan["code"] == code_identity(),
        not plan["notify"],
    )
    if not all(checks):
        return None
    forum = ForumSettings(**plan["forum"])
    folder = plan["templates_dir"]
    return Plan(
        game_path=Path(game_path),
        db_path=db_path,
        game_id=str(plan["id"]),
        templates_dir=Path(folder) if folder is not None else None,
        record=record,
        forum=forum,
        game=_plan_game(plan["days"]),
    )


# --------------------------------------------------------------------------- the cycle


def light_run(plan: Plan, store: Store, now: datetime) -> CycleReport | None:
    """The light cycle's part under the game's lock, on the open ``store``: None when an input
    changed since the plan's derivation (nothing is done: the full cycle runs); else the
    cycle's report after its crawl (:func:`pipeline.cycle.crawl_due`), ``skipped`` when there
    is nothing new and no draft approved (nothing more to do than record the cycle)."""
    from pipeline.cycle import (
        CycleReport,
        counter,
        crawl_due,
        current_inputs,
        ensure_change_counters,
        last_derivation,
        nothing_new,
    )

    ensure_change_counters(store)  # before the crawl: its writes are counted
    record = last_derivation(store)
    if store.get_meta(RECORD_KEY) != plan.record or record is None:
        return None  # another derivation since the plan was written, or its record dropped
    if counter(store, INPUTS_KEY) != record.get("inputs"):
        return None  # an input changed (the threads bansha opened among them)
    game: Any = plan.game  # what the crawl and the check read of a game

    def crawl(targets: list[CrawlTarget], full: bool) -> CrawlReport:
        return crawl_forum(store, plan.forum, targets, full=full)

    report = CycleReport()
    crawl_due(game, store, now, crawl, report)
    identity = str(record["game"])
    inputs = current_inputs(
        game, store, templates_dir=plan.templates_dir, drafting=True, identity=identity
    )
    record = last_derivation(store)
    approved = store.execute("SELECT 1 FROM drafts WHERE state = 'approved'").fetchone()
    if approved is None and nothing_new(game, store, record, inputs, now=now, drafting=True):
        assert record is not None
        report.skipped = True
        report.warnings = [str(w) for w in record.get("warnings", ())]
        # as the full cycle says it: the forum down, nothing was sent
        report.publish_skipped = report.down is not None
    return report
