"""``bansha publish``: send approved drafts to the forum now, or record one posted by hand.

* ``bansha publish GAME.toml [--id N …]`` posts every approved draft (or the ones named),
  exactly once, and prints where each went or, in Chinese, why it did not go;
* ``bansha publish record GAME.toml ID --pid P``: the director posted draft ID by hand (the
  forum asked for a captcha) and it is floor ``pid`` P — checked on the forum first (in the
  draft's thread, by a director account, with the draft's text), ``--force`` records it anyway;
  ``--tid T`` for a new thread opened by hand (it exists, the director started it, its subject
  is the draft's).

``bansha post`` is the old name (one letter from ``posts``, the list of crawled posts), kept
as an alias that works the same; hidden from ``--help``, so the command is listed once.

Both hold the game's lock (the one ``bansha cycle`` holds) while they work: a cycle running
when the director types the command is waited for, up to ``--wait`` seconds (default 120 — a
cron cycle normally ends well within that), then a clear message says it is still running.
Interactive commands: they always say what they did. Exit 1 when a draft did not go out.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime

import click
import httpx
from click_default_group import DefaultGroup

from pipeline.cli import (
    GameContext,
    cli,
    game_command,
    make_http_client,
    templates_dir_or_none,
)
from pipeline.discuz.poster import STATE_ZH, Poster, PostError
from pipeline.drafts import KIND_ZH
from pipeline.drafts.publish import (
    PublishResult,
    due_at,
    publish_approved,
    record_manual_post,
    record_manual_thread,
)
from pipeline.store import StoreError
from pipeline.store.lock import CycleLocked, cycle_lock

#: builds the HTTP client (tests swap in the simulator's transport)
http_client_factory: Callable[[], httpx.Client] = make_http_client

#: how long ``bansha publish`` waits for a running cycle by default (seconds)
DEFAULT_WAIT_S = 120

_wait_option = click.option(
    "--wait",
    "wait_s",
    type=click.IntRange(0, 3600),
    default=DEFAULT_WAIT_S,
    show_default=True,
    help="另一轮 bansha cycle（或另一个 bansha publish）正在运行时，最多等它几秒。",
)


@contextmanager
def game_lock(ctx: GameContext, wait_s: int) -> Iterator[None]:
    """The game's lock for a command a director typed: wait for a running cycle, say so."""

    def waiting() -> None:
        click.echo(
            f"游戏 {ctx.game.game.id} 的另一轮 bansha cycle（或另一个 bansha publish）正在运行，"
            f"等它结束（最多 {wait_s} 秒）……",
            err=True,
        )

    try:
        with cycle_lock(ctx.db_path, wait_s=wait_s, on_wait=waiting):
            yield
    except CycleLocked as exc:
        raise click.ClickException(
            f"游戏 {ctx.game.game.id} 的另一轮 bansha cycle（或另一个 bansha publish）仍在运行"
            f"（等了 {wait_s} 秒），这次没有发送，也没有登记；它会发出已批准的草稿，"
            "稍后用 bansha drafts 查看，需要时再运行一次（--wait 可以等得更久）"
        ) from exc


def result_line(result: PublishResult) -> str:
    """:meth:`PublishResult.line` with the draft's kind in Chinese (投票结果, not result)."""
    return dataclasses.replace(result, kind=KIND_ZH.get(result.kind, result.kind)).line()


@cli.group(
    "publish",
    cls=DefaultGroup,
    default="send",
    default_if_no_args=True,
    short_help="发帖：发出已批准的草稿，或登记手动发出的帖子（旧名 post 也可用）。",
)
def publish_group() -> None:
    """发帖：把已批准的草稿发到论坛（bansha publish GAME.toml），或登记手动发出的帖子
    （bansha publish record）。旧名 bansha post 用法完全相同。

    带 * 的 send 是默认命令：bansha publish GAME.toml [--id N] [--wait 秒] 就是 send，
    只写 bansha publish 也是（游戏文件取 BANSHA_GAME 或当前目录中唯一的游戏文件）；
    它的选项见 bansha publish send --help。
    """


#: the old name, working the same (the same subcommands, the same default); hidden, so that
#: ``bansha --help`` lists the command once
post_group = DefaultGroup(
    "post",
    commands=publish_group.commands,
    default="send",
    default_if_no_args=True,
    hidden=True,
    help="发帖（bansha publish 的旧名，用法完全相同）：把已批准的草稿发到论坛，"
    "或登记手动发出的帖子（record）。",
)
cli.add_command(post_group)


@publish_group.command("send")
@game_command(forum=True)
@click.option(
    "--id",
    "draft_ids",
    type=int,
    multiple=True,
    help="只发这份草稿（可重复）；论坛上次拒绝或要求验证码的草稿、因可能已在审核中而暂不开的新帖，指定后会再试一次。",
)
@_wait_option
def post_send(ctx: GameContext, draft_ids: tuple[int, ...], wait_s: int) -> None:
    """把已批准的草稿发到论坛，每份只发一次；打印每份发到了哪里。

    与 bansha cycle 共用同一把锁：cycle 正在运行时先等它结束（最多 --wait 秒）。
    """
    store = ctx.store
    tz = ctx.game.game.tz
    try:
        with game_lock(ctx, wait_s):
            wanted = _check_named(ctx, draft_ids)
            if draft_ids and not wanted:
                return  # every draft named is posted already (said above)
            with http_client_factory() as http:
                poster = Poster.for_game(ctx.game, http, env=os.environ)
                results = publish_approved(
                    store,
                    ctx.game,
                    poster,
                    now=datetime.now(tz),
                    clock=lambda: datetime.now(tz),
                    ids=wanted or None,
                    templates_dir=templates_dir_or_none(ctx),
                )
    except (PostError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not results:
        waiting = _not_yet(ctx, wanted)
        click.echo(waiting or "没有已批准、等待发出的草稿。")
        return
    for result in results:
        click.echo(result_line(result))
    failed = [r for r in results if not r.ok]
    if failed:
        raise click.ClickException(f"{len(failed)} 份草稿没有发出，原因见上。")


def _not_yet(ctx: GameContext, draft_ids: list[int]) -> str:
    """Why approved drafts named were not sent: their time has not come (a day's new thread
    before it opens, a vote thread's close before its close — as the game file says now)."""
    tz = ctx.game.game.tz
    lines = []
    for draft_id in draft_ids:
        rows = ctx.store.query("SELECT * FROM drafts WHERE id = ?", [draft_id])
        due = due_at(ctx.game, rows[0]) if rows else None
        if due is not None and due > datetime.now(tz):
            at = due.astimezone(tz).strftime("%m-%d %H:%M")
            lines.append(
                f"草稿 #{draft_id} 要到 {at} 才发出（开门或关门之前不发），届时由 cycle 发出。"
            )
    return "\n".join(lines)


def _check_named(ctx: GameContext, draft_ids: tuple[int, ...]) -> list[int]:
    """The named drafts that are approved. One already posted (e.g. by the cycle that was
    waited for) is said and left out; any other state stops the command."""
    wanted = []
    for draft_id in draft_ids:
        row = ctx.store.execute(
            "SELECT state, tid, posted_pid FROM drafts WHERE id = ?", [draft_id]
        ).fetchone()
        if row is None:
            raise click.ClickException(f"没有编号为 {draft_id} 的草稿")
        state, tid, posted_pid = row
        if state == "posted":
            click.echo(f"草稿 #{draft_id} 已经发出 → 帖子 tid={tid} pid={posted_pid}，不再重发。")
            continue
        if state != "approved":
            hint = "（先 bansha drafts approve）" if state == "pending" else ""
            raise click.ClickException(
                f"草稿 #{draft_id} 的状态是「{STATE_ZH.get(state, state)}」，"
                f"只有已批准的草稿才会发出{hint}"
            )
        wanted.append(draft_id)
    return wanted


@publish_group.command("record")
@game_command(forum=True)
@click.argument("draft_id", type=int, metavar="草稿编号")
@click.option("--pid", type=int, default=None, help="你手动发出的那一楼的 pid（回复）。")
@click.option(
    "--tid",
    type=int,
    default=None,
    help="你手动开的新帖的 tid（开新帖的草稿遇到验证码时）；登记后它就是当天这个帖子。",
)
@click.option(
    "--force",
    is_flag=True,
    help="核对不通过（或论坛打不开）也登记：只在你亲眼确认过这一楼（这个帖子）就是这份草稿时使用"
    "（例如帖子还在审核、论坛编辑器改动了格式）；原因会记进草稿的记录。",
)
@_wait_option
def post_record(
    ctx: GameContext,
    draft_id: int,
    pid: int | None,
    tid: int | None,
    force: bool,
    wait_s: int,
) -> None:
    """登记手动发出的草稿（论坛要求验证码时，由导演自己发帖或开帖）。

    回复用 --pid：先到论坛上核对这一楼在草稿的目标帖子里、是导演账号发的、内容就是草稿正文。
    新帖用 --tid：先核对这个帖子存在、是导演账号开的、标题就是草稿的标题
    （而且比这局游戏之前的帖子新）。
    有一项不符就不登记，并说明是哪一项。

    例：bansha publish record m135.toml 7 --tid 40123
    """
    if (pid is None) == (tid is None):
        raise click.UsageError("请给出 --pid（手动发的回复）或 --tid（手动开的新帖），二者选一")
    tz = ctx.game.game.tz
    try:
        with game_lock(ctx, wait_s), http_client_factory() as http:
            game = ctx.refresh_threads()  # under the lock: the threads bansha opened so far
            poster = Poster.for_game(game, http, env=os.environ)
            if tid is not None:
                result = record_manual_thread(
                    ctx.store,
                    game,
                    poster,
                    draft_id,
                    tid,
                    now=datetime.now(tz),
                    clock=lambda: datetime.now(tz),
                    force=force,
                )
            else:
                assert pid is not None
                result = record_manual_post(
                    ctx.store,
                    poster,
                    draft_id,
                    pid,
                    now=datetime.now(tz),
                    clock=lambda: datetime.now(tz),
                    force=force,
                )
    except (PostError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    url = f"：{result.url}" if result.url else ""
    if tid is not None:
        click.echo(f"草稿 #{draft_id} 已登记为手动开出的新帖 → 帖子 tid={tid}{url}")
    else:
        click.echo(f"草稿 #{draft_id} 已登记为发出 → 帖子 tid={result.tid} pid={pid}{url}")
    if result.message:
        click.echo(f"注意：{result.message}", err=True)
