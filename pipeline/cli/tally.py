"""``bansha tally``: light to load. Without ``--as-of`` it first shows the view the last cycle
stored, when that view still holds (:mod:`pipeline.cli.tallyview`, the standard library only);
otherwise — or with ``-v`` — it derives from the store and the game file
(:func:`pipeline.cli.votes.tally_full`). Both print the same."""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.cli import as_of_option, cli, day_option, game_options, verbose
from pipeline.cli.tallyview import stored_tally


@cli.command("tally")
@game_options
@day_option()
@click.option("--json", "as_json", is_flag=True, help="输出 JSON（字段名稳定，供程序读取）。")
@as_of_option
def tally_cmd(
    game_file: Path | None, db_path: str | None, day: int | None, as_json: bool, as_of: str | None
) -> None:
    """计票：按发帖顺序列出每一票（有效/无效及理由）、票数（含权重）、结果和违规标记。

    只读数据库：判定由 bansha cycle 写回；这里按此刻（或 --as-of）重新推导并显示；
    上一轮 cycle 的推导仍然有效时（之后没有新帖、编辑、导演记录、游戏文件或程序的改动，
    也没有跨过开门、关门等时刻），直接显示它存下的结果，与重新推导完全相同。
    """
    if as_of is None and not verbose():
        shown = stored_tally(game_file, db_path, day, as_json)
        if shown is not None:
            out, err = shown
            if err:
                click.echo(err, err=True, nl=False)
            click.echo(out, nl=False)
            return
    from pipeline.cli.votes import tally_full

    tally_full(game_file=game_file, db_path=db_path, day=day, as_json=as_json, as_of=as_of)
