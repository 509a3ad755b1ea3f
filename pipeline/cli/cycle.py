"""``bansha cycle`` (what cron runs) and ``bansha schedule`` (the crontab lines for a game)."""

from __future__ import annotations

import logging
import os
import shlex
import sqlite3
import sys
from collections.abc import Callable
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, cast
from zoneinfo import ZoneInfo

import click

import pipeline.cli
from pipeline import resources
from pipeline.cli import (
    GameContext,
    as_of_option,
    cli,
    clock,
    game_command,
    game_options,
    load_context,
    make_http_client,
    templates_dir_or_none,
)
from pipeline.cli.quick import PLAN_META, Plan, light_run, plan_text, read_plan
from pipeline.cycle import (
    CycleReport,
    closed_days_to_reread,
    cycle_moments,
    first_rounds_to_reread,
    run_cycle,
)
from pipeline.notify import game_file_arg, notify_after_cycle, runnable
from pipeline.store import StoreError
from pipeline.store.lock import CycleLocked, cycle_lock

if TYPE_CHECKING:
    from pipeline.derive import Derivation
    from pipeline.discuz.crawl import CrawlReport, CrawlTarget
    from pipeline.drafts.publish import PublishResult
    from pipeline.game.gamefile import Game

log = logging.getLogger(__name__)


@cli.command("cycle")
@game_options
@click.option("--verbose", "verbose_out", is_flag=True, help="成功时也打印本轮做了什么。")
@click.option(
    "--rederive",
    is_flag=True,
    help="即使没有新内容也重新推导全部结论并起草（平时只在有变化时推导）。",
)
@as_of_option
def cycle_cmd(
    game_file: Path | None,
    db_path: str | None,
    verbose_out: bool,
    rederive: bool,
    as_of: str | None,
) -> None:
    """运行一轮：抓取 → 判票与统计 → 起草到期的草稿 → 发布导演已批准的草稿。

    供 cron 调用：同一游戏同时只运行一轮（另一轮、或导演正在运行的 bansha publish 持有同一把锁时
    立即退出，退出码 0）；每次发帖尝试按实际时间记录。

    游戏文件写了 [forum] fid 时，也起草每天要开的新帖和投票帖的锁帖：已批准的新帖在开门后开出
    （讨论帖之后紧接着发电梯），锁帖在关门后执行，都只做一次（bansha threads 查看）。

    只在有变化时重新推导：新帖或编辑、帖子消失、导演的记录（代投、夜晚行动、确认标记、发牌……）、
    游戏文件或模板改动，或者跨过了某个时刻（开门、关门、最后一小时、加速截止、提醒）；
    否则本轮不推导、不写结论、不起草（--verbose 时说“没有新内容，未重新推导”），
    只发布已批准的草稿。--rederive 强制重新推导。

    成功时不输出任何内容（除非 --verbose；需要导演处理的提醒——如某天的结算与当前计票不一致——
    写到标准错误输出）；失败时退出码 1，并在标准错误输出一行中文说明。
    """
    game_path = pipeline.cli.game_file_or_default(game_file)
    plan = None if rederive else read_plan(game_path, db_path)
    try:
        if plan is not None:
            report = light_cycle_once(plan, db_path, _now(ZoneInfo(plan.forum.timezone), as_of))
        else:
            report = _full_cycle(game_path, db_path, as_of, rederive)
    except _Locked as exc:
        click.echo(
            f"游戏 {exc.game_id} 的上一轮 cycle（或导演正在运行的 bansha publish）仍在运行，"
            "本轮跳过。"
        )
        return  # this cycle did not run: nothing to tell the director
    except CycleFailed as exc:
        raise click.ClickException(str(exc)) from exc
    if verbose_out:
        for line in report.lines():
            click.echo(line)
    game_arg = game_file_arg(game_path)  # commands said run as printed
    for line in report.warnings:  # also under cron: the director must act on these
        click.echo(f"注意：{runnable(line, game_arg)}", err=True)
    if report.errors:
        raise click.ClickException(runnable("本轮未完成：" + "；".join(report.errors), game_arg))


def _now(tz: tzinfo, as_of: str | None) -> datetime:
    """The cycle's ``now``: ``--as-of``, else the present (read through the package: a test or
    the demo may set its clock)."""
    return pipeline.cli.clock(tz) if as_of is None else pipeline.cli.time_option(as_of, tz)


def _full_cycle(
    game_path: Path, db_path: str | None, as_of: str | None, rederive: bool
) -> CycleReport:
    """The cycle with the game file's model built first (the light cycle's plan did not hold)."""
    ctx = load_context(game_path, db_path, check_login=True)
    try:
        now = _now(ctx.game.game.tz, as_of)
        try:
            return cycle_once(ctx, now, rederive=rederive)
        except CycleLocked as exc:
            raise _Locked(ctx.game.game.id) from exc
    finally:
        ctx.close()


class _Locked(Exception):
    """The game's lock was held (:class:`CycleLocked`): this cycle did not run."""

    def __init__(self, game_id: str) -> None:
        super().__init__(game_id)
        self.game_id = game_id


class CycleFailed(RuntimeError):
    """A cycle that could not finish (the store stayed locked, a template was refused …); the
    director was told (:func:`notify_after_cycle`). ``str()`` is the Chinese line to show."""


def cycle_once(
    ctx: GameContext,
    now: datetime,
    *,
    rederive: bool = False,
    clock: Callable[[], datetime] | None = None,
    crawled: CycleReport | None = None,
    lock_held: bool = False,
) -> CycleReport:
    """One cycle of ``ctx``'s game at ``now``, as ``bansha cycle`` runs it (``bansha run`` too):
    under the game's lock, then recorded and the director told (:func:`notify_after_cycle`).

    Raises :class:`CycleLocked` when another cycle (or a ``bansha publish``) holds the lock —
    this cycle did not run, nothing is recorded — and :class:`CycleFailed` when it stopped
    part-way (recorded, the director told). ``report.errors`` lists what went wrong in a cycle
    that ran to its end. ``clock``: the real time each post attempt is stamped with (default:
    the machine's clock). ``lock_held``: this process holds the game's lock already (the light
    cycle, :func:`light_cycle_once`); ``crawled``: the report of the crawl it made under it,
    which the cycle goes on from."""
    templates_dir = templates_dir_or_none(ctx)  # drafting says what is wrong with it (below)

    def locked() -> CycleReport:
        # the threads bansha opened, read under the lock: a publish that opened one before
        # it was taken is in the game this cycle derives (and in its input counter)
        game = ctx.refresh_threads()
        return run_cycle(
            game,
            ctx.store,
            now=now,
            crawl=lambda targets, full: _crawl(ctx, targets, full),
            draft=lambda d: _draft(ctx, d, now),
            publish=lambda: _publish(ctx, now, clock),
            templates_dir=templates_dir,
            rederive=rederive,
            after_derive=lambda d, record: _after_derive(ctx, game, templates_dir, d, record),
            crawled=crawled,
        )

    def run() -> CycleReport:
        if lock_held:
            return locked()
        with cycle_lock(ctx.db_path):  # the game's lock: bansha publish waits for it too
            return locked()

    report = _guarded(run, lambda: ctx, now)
    # the director is told (Apprise, [notify]): a failure once per streak, drafts waiting …
    notify_after_cycle(ctx.game, ctx.store, report, now, game_path=ctx.game_path)
    return report


def _guarded(
    run: Callable[[], CycleReport], context: Callable[[], GameContext], now: datetime
) -> CycleReport:
    """``run()``; a cycle it could not finish is recorded, the director told, and raised as
    :class:`CycleFailed` (``context()``: the game, built when needed)."""
    try:
        return run()
    except CycleLocked:
        raise
    except StoreError as exc:  # e.g. the store stayed locked by another process
        _failed(context(), now, f"本轮未完成：{exc}", exc)
    except _refusals() as exc:  # e.g. a director's template the sandbox refused
        _failed(context(), now, f"本轮未完成：{exc}", exc)
    except sqlite3.OperationalError as exc:  # a store write that did not take the lock first
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        ctx = context()
        _failed(
            ctx,
            now,
            f"本轮未完成：数据库 {ctx.db_path} 正被另一个 bansha 进程写入，等待后仍未释放；"
            "请稍后重试（若有卡住的 bansha 进程，请先结束它）。下一轮 cycle 会接着完成。",
            exc,
        )


def light_cycle_once(plan: Plan, db_path: str | None, now: datetime) -> CycleReport:
    """One cycle at ``now`` from the light cycle's ``plan`` (pipeline/cli/quick.py): under the
    game's lock, its crawl and its nothing-new check without the game file's model; anything
    more to do (an input changed, a moment passed, a draft to post) and the game file's model
    is built, and the cycle goes on as :func:`cycle_once` (never reading the forum twice)."""
    from pipeline.store import open_store

    held: list[GameContext] = []

    def context() -> GameContext:
        if not held:
            held.append(load_context(plan.game_path, db_path, check_login=True))
        return held[0]

    def run() -> CycleReport:
        with cycle_lock(plan.db_path):  # the game's lock: bansha publish waits for it too
            store = open_store(plan.db_path)
            try:
                report = light_run(plan, store, now)
            except BaseException:
                store.close()
                raise
            if report is not None and report.skipped:
                # nothing new and nothing to post: recorded as every cycle is (no notification
                # is configured: the plan holds only then)
                notify_after_cycle(
                    cast(Any, plan.game), store, report, now, game_path=plan.game_path
                )
                store.close()
                return report
            ctx = context()
            ctx.adopt_store(store)
            return cycle_once(ctx, now, crawled=report, lock_held=True)

    try:
        return _guarded(run, context, now)
    except CycleLocked as exc:
        raise _Locked(plan.game_id) from exc
    finally:
        if held:
            held[0].close()


def _refusals() -> tuple[type[Exception], ...]:
    """What drafting and the inquiry's derivation refuse with (a director's template the
    sandbox refused, an inquiry record that cannot be read): of the modules this cycle loaded
    (a cycle that never drafted nor derived cannot have raised them, and does not import them)."""
    found: list[type[Exception]] = []
    named = (("pipeline.drafts", "DraftError"), ("pipeline.derive.inquiry", "InquiryError"))
    for module, name in named:
        loaded = sys.modules.get(module)
        if loaded is not None:
            found.append(getattr(loaded, name))
    return tuple(found)


def _draft(ctx: GameContext, d: Derivation, now: datetime) -> list[int]:
    """The drafts due after derivation ``d``: the drafting package (jinja2, the templates) is
    loaded here, the first time a cycle drafts (a cycle with nothing new never does)."""
    from pipeline.drafts import make_drafts, templates_dir_for

    return make_drafts(
        ctx.game,
        ctx.store,
        d,
        now=now,
        templates_dir=templates_dir_for(ctx.game, ctx.game_path),
        # a closed day whose re-read failed this cycle keeps its result waiting
        unsettled=closed_days_to_reread(ctx.game, ctx.store, now),
        unsettled_first=first_rounds_to_reread(ctx.game, ctx.store, now),
    )


def _failed(ctx: GameContext, now: datetime, message: str, exc: Exception) -> NoReturn:
    """A cycle that could not finish: tell the director (never fails itself), then raise
    :class:`CycleFailed`."""
    try:
        notify_after_cycle(ctx.game, ctx.store, None, now, error=message, game_path=ctx.game_path)
    except Exception:  # a store that could not be written is the failure being reported
        log.warning("无法记录本轮的失败以发送提醒", exc_info=True)
    raise CycleFailed(message) from exc


def _after_derive(
    ctx: GameContext, game: Game, templates_dir: Path | None, d: Any, record: str
) -> None:
    """Once a derivation and its record are written: tally's views, and the light cycle's plan
    (pipeline/cli/quick.py) of the game derived, from the game file's bytes it was parsed from."""
    keep_tally_views(ctx, d, record)
    if ctx.game_digest is None:
        return
    text = plan_text(
        game,
        game_path=ctx.game_path,
        game_digest=ctx.game_digest,
        templates_dir=templates_dir,
        record=record,
        env=os.environ,
    )
    ctx.store.set_meta(PLAN_META, text)


def keep_tally_views(ctx: GameContext, d: Any, record: str) -> None:
    """What ``bansha tally`` prints for each day, stored for its fast path; a view that
    cannot be made leaves the verdicts (``bansha tally`` then derives)."""
    from pipeline.cli.votes import store_tally_views  # after a derivation: derive is loaded

    try:
        with ctx.store.atomic():  # a savepoint
            store_tally_views(ctx, d, record)
    except Exception as exc:
        log.warning("未能保存计票结果供 bansha tally 直接显示（它会重新推导）：%s", exc)


def _crawl(ctx: GameContext, targets: list[CrawlTarget], full: bool) -> CrawlReport:
    """Read ``targets`` from the forum: the HTTP client and the page parsers are loaded here,
    when the cycle has a thread to read (a game before its first day has none)."""
    from pipeline.cli.foundation import run_crawl

    return run_crawl(ctx, targets, full=full)


def wall_clock(ctx: GameContext) -> datetime:
    """The real time, in the game's zone: what each post attempt is stamped with (the cycle's
    ``now`` may be ``--as-of``; the forum's clock is compared with ours, not with that); the
    demo's simulated clock while it tells its story (:func:`pipeline.cli.story_clock`)."""
    return clock(ctx.game.game.tz)


def _publish(
    ctx: GameContext, now: datetime, clock: Callable[[], datetime] | None = None
) -> list[PublishResult]:
    """Post what the director approved (no request at all when nothing is approved).

    Runs inside the cycle's lock; every attempt and record gets its own time from the clock.
    A forum write's time gate is the earlier of ``now`` (``--as-of``) and the real clock: an
    as-of in the future never opens or closes a thread early; one in the past (the demo) does
    what was due then."""
    approved = ctx.store.execute("SELECT 1 FROM drafts WHERE state = 'approved'").fetchone()
    if not approved:
        return []
    # the poster and the publishing records load only when there is something to post
    from pipeline.discuz.poster import Poster
    from pipeline.drafts.publish import publish_approved

    with make_http_client() as http:
        poster = Poster.for_game(ctx.game, http, env=os.environ)
        return publish_approved(
            ctx.store,
            ctx.game,
            poster,
            now=now,
            clock=clock or (lambda: wall_clock(ctx)),
            templates_dir=templates_dir_or_none(ctx),
        )


def cron_command(command: str) -> str:
    """``command`` as a crontab line's command field: cron turns an unescaped ``%`` into a
    newline (crontab(5)), so a game file named ``100%.toml`` needs ``\\%``."""
    return command.replace("%", "\\%")


@cli.command("schedule")
@game_command
@click.option("--every", type=int, default=5, show_default=True, help="平时每隔几分钟运行一轮。")
@click.option(
    "--wrapper",
    default=None,
    help="cron 调用的脚本（默认：bansha 自带的 bansha-cycle.sh）。",
)
def schedule_cmd(ctx: GameContext, every: int, wrapper: str | None) -> None:
    """打印这局游戏的 crontab 行：平时每隔几分钟一轮，另在每天关门和提醒时刻各运行一轮。

    游戏文件写了 [forum] fid 时，每天开门时刻也运行一轮，准时开出已批准的新帖。

    时间换算成本机时区（cron 按本机时区理解 crontab 的时间）。只该运行一次的行（关门、提醒）
    带着日期 BANSHA_ONLY_ON=年-月-日：crontab 的时间没有年份，bansha-cycle.sh 在其他日子
    （例如下一年的同一天）什么都不做，直接退出。
    """
    if not 1 <= every <= 59:
        raise click.BadParameter("应为 1 到 59 分钟", param_hint="--every")
    cmd = cron_command(cycle_command(wrapper, str(ctx.game_path.resolve())))
    tz = ctx.game.game.tz
    click.echo(f"# bansha：{ctx.game.game.title}（{ctx.game.game.id}）")
    click.echo(f"# 下面的时间是本机时区（{machine_zone_label()}）的时间：cron 按本机时区运行。")
    if os.environ.get("TZ"):
        click.echo(
            f"# 注意：本次按环境变量 TZ={os.environ['TZ']} 换算；cron 用的是系统时区，"
            "两者不同时请在不设 TZ 的终端里重新运行 bansha schedule"
        )
    click.echo(f"*/{every} * * * * {cmd}")
    reminder = ctx.game.drafts.reminder_minutes
    for m in cycle_moments(ctx.game):  # the moments bansha run runs its cycles at, too
        at = local_time(m.at)
        if m.kind == "opens":
            click.echo(
                f"# 第{m.day}天开门 {at:%m-%d %H:%M}{_game_time(m.moment, tz)}："
                "开门时发出已批准的新帖（bansha 开的帖子）"
            )
        elif m.kind == "closes":
            click.echo(
                f"# 第{m.day}天关门 {local_time(m.moment):%m-%d %H:%M}"
                f"{_game_time(m.moment, tz)}：关门后一分钟结算一轮"
            )
        elif m.kind == "first_closes":
            click.echo(f"# 第{m.day}天第一轮[正午]结束（太阳[日不落]）：结束后一分钟结算一轮")
        else:
            click.echo(f"# 第{m.day}天投票提醒（关门前 {reminder} 分钟）")
        click.echo(one_off_line(at, cmd))


def cycle_command(wrapper: str | None, game_file: str) -> str:
    """What a crontab line runs for ``game_file`` (a shell command).

    ``wrapper`` given, or a source checkout: that script, which starts the checkout's own
    ``.venv/bin/bansha`` (or ``$BANSHA_BIN``). An installed bansha (a wheel, pipx): the
    wrapper it ships, run by ``bash`` (a wheel may not keep its executable bit), starting this
    very ``bansha`` (``BANSHA_BIN``), wherever the installer put it."""
    if wrapper is not None or not resources.shipped():
        script = wrapper or str(resources.cron_script())
        return f"{shlex.quote(script)} {shlex.quote(game_file)}"
    program = resources.bansha_executable()
    if program is None:
        raise click.ClickException(
            "找不到正在运行的 bansha 程序，无法写出 crontab 行：请用安装好的 bansha 命令"
            "运行 bansha schedule（或用 --wrapper 指定 cron 调用的脚本）"
        )
    script = str(resources.cron_script())
    return (
        f"BANSHA_BIN={shlex.quote(str(program))} bash {shlex.quote(script)} "
        f"{shlex.quote(game_file)}"
    )


#: the environment variable a one-off crontab line sets: cron/bansha-cycle.sh runs the cycle
#: only on that date (crontab(5) has no year field: the line matches the same day every year)
ONLY_ON_ENV = "BANSHA_ONLY_ON"


def local_time(moment: datetime) -> datetime:
    """``moment`` in the machine's own zone (the process's local zone, what cron schedules by;
    with that moment's own offset, so a date across a DST change is right too)."""
    return moment.astimezone()


def machine_zone_label() -> str:
    """The machine's zone as a director reads it: its name and its offset now."""
    now = datetime.now().astimezone()
    offset = now.strftime("%z")
    sign, hours, minutes = offset[0], offset[1:3], offset[3:5]
    return f"{now.tzname()}，UTC{sign}{hours}:{minutes}"


def _game_time(moment: datetime, tz: Any) -> str:
    """``（游戏时区 12-01 22:00）`` when the game's clock reads differently from the machine's."""
    game = moment.astimezone(tz)
    if game.utcoffset() == local_time(moment).utcoffset():
        return ""
    return f"（游戏时区 {game:%m-%d %H:%M}）"


def one_off_line(at: datetime, cmd: str) -> str:
    """A crontab line firing once, at ``at`` (machine time): its date rides along for the
    wrapper to check, so it can never fire in another year."""
    return f"{at:%M %H %d %m} * {ONLY_ON_ENV}={at:%Y-%m-%d} {cmd}"
