"""``bansha status [GAME.toml ...] [--json]``: the console's overview in the terminal.

Defined here with ``@click.command("status")``; ``pipeline.cli`` registers it on the root group.
The overview is the console's (:mod:`pipeline.console.overview`); ``--json`` prints what
``GET /api/games`` serves.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from pipeline.console.games import GameSpecError, load_specs
from pipeline.console.overview import games_json, overviews

__all__ = ["status"]


@click.command("status")
@click.argument("game_files", nargs=-1, type=click.Path(path_type=Path), metavar="[GAME.toml ...]")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="数据库路径（只用于一局游戏；默认：游戏文件旁的 <游戏文件名>.db，或环境变量 BANSHA_DB）。",
)
@click.option("--json", "as_json", is_flag=True, help="输出 JSON（与 GET /api/games 相同）。")
def status(game_files: tuple[Path, ...], db_path: str | None, as_json: bool) -> None:
    """总览：每局游戏的规则集、阶段、下一次关门、待批准草稿、待确认违规、上一轮 cycle 和论坛。

    不给游戏文件时，看当前目录中的所有游戏文件；也可以给一个目录。
    """
    try:
        specs = load_specs(list(game_files) or [Path(".")], db_path)
    except GameSpecError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:  # the API's JSON, without the web app
        click.echo(json.dumps(games_json(specs), ensure_ascii=False, indent=2))
        return
    for i, ov in enumerate(overviews(specs)):
        if i:
            click.echo("")
        for line in ov.lines():
            click.echo(line)
