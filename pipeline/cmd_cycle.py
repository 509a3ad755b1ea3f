"""``bansha cycle`` (what cron runs) and ``bansha schedule`` (the crontab lines for a game)."""

from __future__ import annotations

import os
import shlex
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import click

from pipeline.cli import GameContext, cli, game_command, make_http_client
from pipeline.cmd_votes import _parse_time, as_of_option
from pipeline.commands import run_crawl
from pipeline.crawl import CrawlTarget
from pipeline.cycle import (
    CycleLocked,
    closed_days_to_reread,
    cycle_lock,
    first_rounds_to_reread,
    run_cycle,
)
from pipeline.drafts import DraftError, make_drafts, templates_dir_for
from pipeline.inquiry import InquiryError
from pipeline.poster import Poster, PublishResult, publish_approved
from pipeline.store import StoreError


@cli.command("cycle")
@game_command(forum=True)
@click.option("--verbose", "verbose_out", is_flag=True, help="成功时也打印本轮做了什么。")
@as_of_option
def cycle_cmd(ctx: GameContext, verbose_out: bool, as_of: str | None) -> None:
    """运行一轮：抓取 → 判票与统计 → 起草到期的草稿 → 发布导演已批准的草稿。

    供 cron 调用：同一游戏同时只运行一轮（另一轮、或导演正在运行的 bansha post 持有同一把锁时
    立即退出，退出码 0）；每次发帖尝试按实际时间记录。
    成功时不输出任何内容（除非 --verbose；需要导演处理的提醒——如某天的结算与当前计票不一致——
    写到标准错误输出）；失败时退出码 1，并在标准错误输出一行中文说明。
    """
    now = _parse_time(ctx, as_of)
    try:
        with cycle_lock(ctx.db_path):  # the game's lock: bansha post waits for it too
            report = run_cycle(
                ctx.game,
                ctx.store,
                now=now,
                crawl=lambda targets, full: _crawl(ctx, targets, full),
                draft=lambda d: make_drafts(
                    ctx.game,
                    ctx.store,
                    d,
                    now=now,
                    templates_dir=templates_dir_for(ctx.game, ctx.game_path),
                    # a closed day whose re-read failed this cycle keeps its result waiting
                    unsettled=closed_days_to_reread(ctx.game, ctx.store, now),
                    unsettled_first=first_rounds_to_reread(ctx.game, ctx.store, now),
                ),
                publish=lambda: _publish(ctx, now),
            )
    except CycleLocked:
        click.echo(
            f"游戏 {ctx.game.game.id} 的上一轮 cycle（或导演正在运行的 bansha post）仍在运行，"
            "本轮跳过。"
        )
        return
    except StoreError as exc:  # e.g. the store stayed locked by another process
        raise click.ClickException(f"本轮未完成：{exc}") from exc
    except (DraftError, InquiryError) as exc:  # e.g. a director's template the sandbox refused
        raise click.ClickException(f"本轮未完成：{exc}") from exc
    except sqlite3.OperationalError as exc:  # a store write that did not take the lock first
        if "locked" not in str(exc) and "busy" not in str(exc):
            raise
        raise click.ClickException(
            f"本轮未完成：数据库 {ctx.db_path} 正被另一个 bansha 进程写入，等待后仍未释放；"
            "请稍后重试（若有卡住的 bansha 进程，请先结束它）。下一轮 cycle 会接着完成。"
        ) from exc
    if verbose_out:
        for line in report.lines():
            click.echo(line)
    for line in report.warnings:  # also under cron: the director must act on these
        click.echo(f"注意：{line}", err=True)
    if report.errors:
        raise click.ClickException("本轮未完成：" + "；".join(report.errors))


def _crawl(ctx: GameContext, targets: list[CrawlTarget], full: bool) -> Any:
    return run_crawl(ctx, targets, full=full)


def wall_clock(ctx: GameContext) -> datetime:
    """The real time, in the game's zone: what each post attempt is stamped with (the cycle's
    ``now`` may be ``--as-of``; the forum's clock is compared with ours, not with that)."""
    return datetime.now(ctx.game.game.tz)


def _publish(ctx: GameContext, now: datetime) -> list[PublishResult]:
    """Post what the director approved (no request at all when nothing is approved).

    Runs inside the cycle's lock; every attempt and record gets its own time from the clock."""
    approved = ctx.store.db.execute("SELECT 1 FROM drafts WHERE state = 'approved'").fetchone()
    if not approved:
        return []
    with make_http_client() as http:
        poster = Poster.for_game(ctx.game, http, env=os.environ)
        return publish_approved(ctx.store, ctx.game, poster, now=now, clock=lambda: wall_clock(ctx))


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
    help="cron 调用的脚本（默认：仓库中的 cron/bansha-cycle.sh）。",
)
def schedule_cmd(ctx: GameContext, every: int, wrapper: str | None) -> None:
    """打印这局游戏的 crontab 行：平时每隔几分钟一轮，另在每天关门和提醒时刻各运行一轮。"""
    if not 1 <= every <= 59:
        raise click.BadParameter("应为 1 到 59 分钟", param_hint="--every")
    script = wrapper or str(Path(__file__).resolve().parent.parent / "cron" / "bansha-cycle.sh")
    game_file = str(ctx.game_path.resolve())
    cmd = cron_command(f"{shlex.quote(script)} {shlex.quote(game_file)}")
    tz = ctx.game.game.tz
    click.echo(f"# bansha：{ctx.game.game.title}（{ctx.game.game.id}）")
    click.echo(
        "# CRON_TZ 让 cron 按游戏时区理解下面的时间（cronie 支持；不支持时请换算成本机时区）"
    )
    click.echo(f"CRON_TZ={ctx.game.game.timezone}")
    click.echo(f"*/{every} * * * * {cmd}")
    reminder = ctx.game.drafts.reminder_minutes
    for day in sorted(ctx.game.days, key=lambda d: d.day):
        closes = day.closes.astimezone(tz)
        after = closes + timedelta(minutes=1)
        click.echo(f"# 第{day.day}天关门 {closes:%m-%d %H:%M}：关门后一分钟结算一轮")
        click.echo(f"{after:%M %H %d %m} * {cmd}")
        if day.first_closes is not None:
            first = day.first_closes.astimezone(tz) + timedelta(minutes=1)
            click.echo(f"# 第{day.day}天第一轮[正午]结束（太阳[日不落]）：结束后一分钟结算一轮")
            click.echo(f"{first:%M %H %d %m} * {cmd}")
        remind = closes - timedelta(minutes=reminder)
        click.echo(f"# 第{day.day}天投票提醒（关门前 {reminder} 分钟）")
        click.echo(f"{remind:%M %H %d %m} * {cmd}")
