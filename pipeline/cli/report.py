"""``bansha report``: the director's day report as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.cli import GameContext, as_of_option, cli, day_option, game_command, resolve_day
from pipeline.cli.votes import _parse_time
from pipeline.drafts.report import write_report


@cli.command("report")
@game_command(readonly=True)
@day_option()
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    required=True,
    help="写入的 HTML 文件（已存在则覆盖）。",
)
@as_of_option
def report_cmd(ctx: GameContext, day: int | None, html_path: Path, as_of: str | None) -> None:
    """当天的计票报告：一个独立的 HTML 页面（不联网、无脚本），手机和电脑都能看。

    内容：结果和决定它的规则、票数（含权重）、按发帖顺序的每一票（判定、理由、原帖链接）、
    每位玩家的讨论帖发言数对照 5/10 帖（条形图和表格）、违规标记（待确认/已确认/已驳回）、
    规则集有询问贴时当天的询问贴（每个询问受理与否、警长的回答、未回答的问题）和牌的台账。
    只读数据库（不改变存下的结论）。
    """
    when = _parse_time(ctx, as_of)
    day = resolve_day(ctx, day, when)
    if not any(d.day == day for d in ctx.game.days):
        raise click.ClickException(f"游戏文件中没有第 {day} 天")
    try:
        path = write_report(ctx.game, ctx.store, day=day, as_of=when, path=html_path)
    except OSError as exc:
        raise click.ClickException(f"无法写入报告 {html_path}：{exc.strerror or exc}") from exc
    click.echo(f"已写入第 {day} 天的报告：{path}")
