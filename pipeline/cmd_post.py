"""``bansha post``: send approved drafts to the forum now, or record one posted by hand.

* ``bansha post GAME.toml [--id N …]`` posts every approved draft (or the ones named), exactly
  once, and prints where each went or, in Chinese, why it did not go;
* ``bansha post record GAME.toml ID --pid P``: the director posted draft ID by hand (the forum
  asked for a captcha) and it is floor ``pid`` P.

Interactive commands: they always say what they did. Exit 1 when a draft did not go out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime

import click
import httpx
from click_default_group import DefaultGroup

from pipeline.cli import GameContext, cli, game_command, make_http_client
from pipeline.poster import (
    STATE_ZH,
    Poster,
    PostError,
    publish_approved,
    record_manual_post,
)

#: builds the HTTP client (tests swap in the simulator's transport)
http_client_factory: Callable[[], httpx.Client] = make_http_client


@cli.group("post", cls=DefaultGroup, default="send", default_if_no_args=False)
def post_group() -> None:
    """发帖：把已批准的草稿发到论坛（bansha post GAME.toml），或登记手动发出的帖子（record）。"""


@post_group.command("send")
@game_command(forum=True)
@click.option(
    "--id",
    "draft_ids",
    type=int,
    multiple=True,
    help="只发这份草稿（可重复）；论坛上次拒绝或要求验证码的草稿，指定后会再试一次。",
)
def post_send(ctx: GameContext, draft_ids: tuple[int, ...]) -> None:
    """把已批准的草稿发到论坛，每份只发一次；打印每份发到了哪里。"""
    store = ctx.store
    for draft_id in draft_ids:
        row = store.db.execute("SELECT state FROM drafts WHERE id = ?", [draft_id]).fetchone()
        if row is None:
            raise click.ClickException(f"没有编号为 {draft_id} 的草稿")
        if row[0] != "approved":
            hint = "（先 bansha drafts approve）" if row[0] == "pending" else ""
            raise click.ClickException(
                f"草稿 #{draft_id} 的状态是「{STATE_ZH.get(row[0], row[0])}」，"
                f"只有已批准的草稿才会发出{hint}"
            )
    tz = ctx.game.game.tz
    with http_client_factory() as http:
        poster = Poster.for_game(ctx.game, http, env=os.environ)
        try:
            results = publish_approved(
                store,
                ctx.game,
                poster,
                now=datetime.now(tz),
                clock=lambda: datetime.now(tz),
                ids=draft_ids or None,
            )
        except PostError as exc:
            raise click.ClickException(str(exc)) from exc
    if not results:
        click.echo("没有已批准、等待发出的草稿。")
        return
    for result in results:
        click.echo(result.line())
    failed = [r for r in results if not r.ok]
    if failed:
        raise click.ClickException(f"{len(failed)} 份草稿没有发出，原因见上。")


@post_group.command("record")
@game_command
@click.argument("draft_id", type=int, metavar="ID")
@click.option("--pid", type=int, required=True, help="你手动发出的那一楼的 pid。")
def post_record(ctx: GameContext, draft_id: int, pid: int) -> None:
    """登记手动发出的草稿（论坛要求验证码时，由导演自己发帖）。"""
    try:
        result = record_manual_post(ctx.store, draft_id, pid, datetime.now(ctx.game.game.tz))
    except PostError as exc:
        raise click.ClickException(str(exc)) from exc
    url = ""
    if result.tid is not None:
        base = str(ctx.game.forum.base_url)
        url = f"：{base}forum.php?mod=redirect&goto=findpost&ptid={result.tid}&pid={pid}"
    click.echo(f"草稿 #{draft_id} 已登记为发出 → 帖子 tid={result.tid} pid={pid}{url}")
