"""``bansha lastwords add/list/remove``: the last words players send the director (遗言)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import click

from pipeline.cli import GameContext, cli, game_command
from pipeline.cli.votes import _parse_time, _when, run_derive
from pipeline.game.journal import latest_snapshot
from pipeline.game.lastwords import (
    LastWordsError,
    add_lastwords,
    discuz_codes,
    latest_by_player,
    list_lastwords,
    remove_lastwords,
)


@cli.group("lastwords")
def lastwords_group() -> None:
    """遗言：记录玩家发给导演的遗言（add）、列出（list）、撤销（remove）。

    记录的遗言会出现在下一天的开门公示草稿里（原文照登，其中的 Discuz! 代码只显示为文字）；
    遗言中有 Discuz! 代码时生成违规标记，由导演确认。
    """


@lastwords_group.command("add")
@game_command
@click.option("--player", required=True, help="留下遗言的玩家（名字或别名）。")
@click.option("--text", default=None, help="遗言原文。")
@click.option(
    "--file",
    "file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="从这个 UTF-8 文本文件读取遗言原文（较长时使用）。",
)
@click.option("--at", "at", default=None, help="玩家发来遗言的时间（ISO 8601；默认现在）。")
def lastwords_add(
    ctx: GameContext, player: str, text: str | None, file: Path | None, at: str | None
) -> None:
    """记录一位玩家的遗言（同一玩家再次记录时以最后一次为准）。"""
    who = ctx.game.player(player)
    if who is None:
        raise click.ClickException(f"名单中没有玩家「{player}」")
    if (text is None) == (file is None):
        raise click.UsageError("请用 --text 或 --file 给出遗言原文（二选一）")
    if file is not None:
        try:
            text = file.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise click.ClickException(
                f"无法读取遗言文件 {file}（须为 UTF-8 文本）：{exc}"
            ) from exc
    assert text is not None
    when = _parse_time(ctx, at, "--at")
    d = run_derive(ctx, when, write=False)
    why = d.lastwords_refusal(who.name)
    if why:
        raise click.ClickException(f"不记录{who.name}的遗言：{why}")
    try:
        record_id = add_lastwords(
            ctx.store, who.name, text, at=when, recorded_at=datetime.now(ctx.game.game.tz)
        )
    except LastWordsError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"已记录 #{record_id}：{who.name} 的遗言（{len(text.strip())} 字）")
    codes = discuz_codes(text)
    if codes:
        click.echo(
            f"注意：遗言中有 Discuz! 代码（{'、'.join(codes)}），违反“遗言中禁止使用Discuz!代码”；"
            "已生成违规标记待确认（bansha flags）。公示时这些代码只显示为文字。"
        )
    last = latest_snapshot(ctx.store)
    if last is not None and last.state.winner:
        click.echo(f"注意：游戏已结束（{last.state.winner}胜利），不会再有开门公示刊登这份遗言。")
    if who.name not in d.outs:
        click.echo(
            f"注意：按目前的记录，{who.name} 尚未出局；遗言会在其出局后的开门公示中刊登"
            "（出局时若规则不给遗言，则不刊登）。"
        )


@lastwords_group.command("list")
@game_command(readonly=True)
@click.option("--all", "include_removed", is_flag=True, help="也列出已撤销的记录。")
@click.option("--json", "as_json", is_flag=True, help="输出 JSON。")
def lastwords_list(ctx: GameContext, include_removed: bool, as_json: bool) -> None:
    """列出记录的遗言（每位玩家以最后一次记录为准）。只读数据库。"""
    records = list_lastwords(ctx.store, include_removed=include_removed)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in records], ensure_ascii=False, indent=2))
        return
    if not records:
        click.echo("没有记录的遗言。")
        return
    live = [r for r in records if r.removed_at is None]
    counted = {r.id for r in latest_by_player(live).values()}
    tz = ctx.game.game.tz
    for r in records:
        state = "有效" if r.id in counted else "已被替换"
        if r.removed_at:
            state = f"已撤销 {_when(datetime.fromisoformat(r.removed_at), tz)}"
        codes = r.codes
        first = r.text.splitlines()[0] if r.text else ""
        click.echo(
            f"#{r.id} {_when(r.at, tz)} {r.player}（{state}）"
            + (f" [含 Discuz! 代码：{'、'.join(codes)}]" if codes else "")
            + f"：{first[:40]}{'…' if len(r.text) > len(first[:40]) else ''}"
        )


@lastwords_group.command("remove")
@game_command
@click.argument("record_id", type=int, metavar="记录编号")
def lastwords_remove(ctx: GameContext, record_id: int) -> None:
    """撤销一条遗言记录（记录保留，标明撤销时间）。"""
    try:
        r = remove_lastwords(ctx.store, record_id, at=datetime.now(ctx.game.game.tz))
    except LastWordsError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"已撤销 #{r.id}：{r.player} 的遗言")
