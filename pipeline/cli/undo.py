"""``bansha undo``: take back a director's record (flag decision, card, proxy vote, modifier,
out, substitute, sheriff or speed ruling, action) or decision on a draft (approval,
rejection), each with its audit line (:mod:`pipeline.derive.undo`,
:func:`pipeline.drafts.reopen`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click
from click_default_group import DefaultGroup

from pipeline.cli import GameContext, cli, game_command
from pipeline.derive.undo import (
    BY_CLI,
    ROW_KINDS,
    UndoError,
    Undone,
    records,
    remove_action,
    revocations,
    revoke_flag,
    revoke_row,
    undo_setting,
)

__all__ = ["echo_undone", "undo_group"]

WHY_HELP = "撤销的理由（必填，记入审计记录）。"


def echo_undone(ctx: GameContext, undone: Undone) -> None:
    for line in undone.lines(ctx.game_path.name):
        click.echo(line)


def _now(ctx: GameContext) -> datetime:
    return datetime.now(ctx.game.game.tz)


def _run(ctx: GameContext, fn: Callable[..., Undone], *args: Any, **kwargs: Any) -> None:
    try:
        undone = fn(ctx.game, ctx.store, *args, by=BY_CLI, now=_now(ctx), **kwargs)
    except UndoError as exc:
        raise click.ClickException(str(exc)) from exc
    echo_undone(ctx, undone)


@cli.group("undo", cls=DefaultGroup, default="list", default_if_no_args=True)
def undo_group() -> None:
    """撤销导演的记录（违规标记的决定、牌、代投、票权修正、出局、替补、警长、加速、行动）和对草稿的批准或驳回。

    每次撤销都记下时间、由谁（命令行或控制台）和理由；撤销的记录保留为证据，不再参与计票和结算。
    已经结算进引擎状态的阶段不会自动改变：撤销时会说明要重新结算哪一个阶段、用哪条命令。

    \b
    例：bansha undo list
        bansha undo proxy 3 --why "代投记错了人"
        bansha undo sheriff --from-day 2 --why "警徽移交记错"
        bansha undo draft 12 --why "批准早了，还要改"
    """


@undo_group.command("list")
@game_command(readonly=True)
@click.option("--all", "include_revoked", is_flag=True, help="也列出已撤销的记录和撤销记录。")
@click.option("--json", "as_json", is_flag=True, help="输出 JSON。")
def undo_list(ctx: GameContext, include_revoked: bool, as_json: bool) -> None:
    """列出可以撤销的记录（种类、编号、内容），以及撤销的审计记录（--all）。"""
    rows = records(ctx.store, ctx.game, include_revoked=include_revoked)
    if as_json:
        data = {"records": rows, "revocations": revocations(ctx.store, ctx.game)}
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    if not rows:
        click.echo("没有可以撤销的导演记录。")
    name = ctx.game_path.name
    for r in rows:
        tail = f" [已撤销：{r['revoked']}]" if r["revoked"] else ""
        click.echo(f"{r['kind']} {r['ref']}　{r['what']}{tail}")
    if rows:
        click.echo(
            f"撤销：bansha undo 种类 {name} 编号 --why 理由"
            f"（如 bansha undo proxy {name} 3 --why …）"
        )
    if include_revoked:
        lines = revocations(ctx.store, ctx.game)
        click.echo("撤销记录：" if lines else "撤销记录：无")
        for line in lines:
            click.echo(f"  {line}")


def _row_command(kind: str, help_text: str) -> None:
    @undo_group.command(kind, help=help_text)
    @game_command
    @click.argument("record_id", type=int, metavar="编号")
    @click.option("--why", required=True, help=WHY_HELP)
    def command(ctx: GameContext, record_id: int, why: str) -> None:
        _run(ctx, revoke_row, kind, record_id, why=why)


for _kind, _help in (
    ("card", "撤销一张牌（bansha cards 列出编号）；来自违规标记的牌连同标记的确认一起撤销。"),
    ("proxy", "撤销一次代投（bansha vote proxy 记录的）：计票不再算这一票。"),
    ("modifier", "撤销一条票权修正（bansha vote modifier 记录的）。"),
    ("out", "撤销一条出局记录（bansha player out 记录的）。"),
    ("substitute", "撤销一条替补记录（bansha player substitute 记录的）。"),
):
    assert _kind in ROW_KINDS
    _row_command(_kind, _help)


@undo_group.command("flag")
@game_command
@click.argument("flag_id", metavar="标记编号")
@click.option("--why", required=True, help=WHY_HELP)
def undo_flag(ctx: GameContext, flag_id: str, why: str) -> None:
    """撤销违规标记的决定（确认或驳回）：确认给的牌一并撤销，标记回到待确认。"""
    _run(ctx, revoke_flag, flag_id, why=why)


@undo_group.command("sheriff")
@game_command
@click.option("--from-day", "from_day", type=int, required=True, help="撤销哪一天起的警长记录。")
@click.option("--why", required=True, help=WHY_HELP)
def undo_sheriff(ctx: GameContext, from_day: int, why: str) -> None:
    """撤销 bansha vote sheriff 的记录：警长重新由竞选、引擎结算的移交或更早的记录决定。"""
    _run(ctx, undo_setting, "sheriff", from_day, why=why)


@undo_group.command("speed")
@game_command
@click.option("--day", type=int, required=True, help="撤销哪一天的加速裁定。")
@click.option("--why", required=True, help=WHY_HELP)
def undo_speed(ctx: GameContext, day: int, why: str) -> None:
    """撤销 bansha vote speed 的裁定：重新按玩家的申请人数计算。"""
    _run(ctx, undo_setting, "speed", day, why=why)


@undo_group.command("action")
@game_command
@click.argument("action_id", type=int, metavar="编号")
@click.option("--why", required=True, help=WHY_HELP)
def undo_action(ctx: GameContext, action_id: int, why: str) -> None:
    """撤销一条夜晚行动或白天决定（与 bansha night remove 相同）。"""
    _run(ctx, remove_action, action_id, why=why)


@undo_group.command("draft")
@game_command
@click.argument("draft_id", type=int, metavar="草稿编号")
@click.option("--why", required=True, help=WHY_HELP)
def undo_draft(ctx: GameContext, draft_id: int, why: str) -> None:
    """撤销对一份草稿的批准或驳回：草稿回到待批准，不会发出，直到再次批准。已经发出的不能撤销。"""
    from pipeline.drafts import DraftError, reopen

    try:
        draft = reopen(ctx.store, draft_id, why, _now(ctx), by=BY_CLI)
    except DraftError as exc:
        raise click.ClickException(str(exc)) from exc
    name = ctx.game_path.name
    click.echo(
        f"已撤销：第 {draft.id} 号草稿（{draft.title}）回到待批准（理由：{why.strip()}）；"
        f"不会发出。再次批准：bansha drafts approve {name} {draft.id}"
    )
