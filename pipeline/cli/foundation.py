"""Foundation commands: init, crawl, posts."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from datetime import datetime
from typing import Any

import click

from pipeline.cli import (
    GameContext,
    cli,
    day_option,
    game_command,
    resolve_day,
)
from pipeline.cli.quick import ForumSettings, crawl_forum
from pipeline.discuz.crawl import CrawlReport, CrawlTarget, ForumConfig, author_only_warning
from pipeline.game.gamefile import THREAD_ROLE_TITLES, Game


@cli.command()
@game_command
def init(ctx: GameContext) -> None:
    """创建（或升级）游戏的数据库，并登记游戏文件中的帖子。"""
    store = ctx.store
    for day, role, tid in ctx.game.thread_roles():
        store.register_thread(tid, day=day, role=role)
    click.echo(f"数据库已就绪：{ctx.db_path}")


def crawl_targets(game: Game, day: int | None, thread: int | None) -> list[CrawlTarget]:
    """The threads to read, each once: a thread several days share (the game's one progress
    thread) is read once, as the first of its days."""
    targets: list[CrawlTarget] = []
    seen: set[int] = set()
    for d, role, tid in game.thread_roles():
        if (day is None or d == day) and (thread is None or tid == thread) and tid not in seen:
            seen.add(tid)
            targets.append(CrawlTarget(tid=tid, day=d, role=role))
    if thread is not None and not targets:
        targets = [CrawlTarget(tid=thread)]
    return targets


def thread_label(game: Game, tid: int) -> str:
    """``帖子 2003（第 1、2、3 天进程帖）``: a thread with the days and roles it is in the game."""
    roles: dict[str, list[int]] = {}
    for d, role, t in game.thread_roles():
        if t == tid:
            roles.setdefault(THREAD_ROLE_TITLES.get(role, str(role)), []).append(d)
    named = "；".join(f"第 {'、'.join(map(str, days))} 天{what}" for what, days in roles.items())
    return f"帖子 {tid}（{named}）" if named else f"帖子 {tid}"


def crawl_failures(game: Game, report: CrawlReport) -> list[str]:
    """One line per thread that was not read (each thread once, its days named)."""
    return [f"{thread_label(game, t.tid)}：{t.error}" for t in report.threads if t.error]


def crawl_warnings(game: Game, report: CrawlReport) -> list[str]:
    """One line per thread read whose replies this session could not see (回帖仅作者可见)."""
    return [
        f"{thread_label(game, t.tid)}：{author_only_warning(t.author_only)}"
        for t in report.threads
        if t.author_only
    ]


def forum_config(game: Game, base_url: str | None = None) -> ForumConfig:
    forum = game.forum
    return ForumConfig(
        base_url=base_url or str(forum.base_url),
        tz=game.game.tz,
        encoding=forum.encoding,
        source=forum.source,
        html_ppp=forum.ppp,
    )


def run_crawl(
    ctx: GameContext,
    targets: list[CrawlTarget],
    *,
    full: bool = False,
    transport: Any = None,
    base_url: str | None = None,
    min_interval_s: float | None = None,
    progress: Callable[[int, int, int], None] | None = None,
) -> CrawlReport:
    """Read ``targets`` of ``ctx``'s game into its store (:func:`pipeline.cli.quick.crawl_forum`:
    the crawl the light cycle makes too)."""
    return crawl_forum(
        ctx.store,
        ForumSettings.of(ctx.game),
        targets,
        full=full,
        transport=transport,
        base_url=base_url,
        min_interval_s=min_interval_s,
        progress=progress,
    )


@cli.command()
@game_command(forum=True)
@click.option("--day", type=int, default=None, help="只抓取这一天的帖子。")
@click.option("--thread", "thread", type=int, default=None, help="只抓取这个帖子（tid）。")
@click.option("--full", is_flag=True, help="从第一页重新读取全部页面（检查早先楼层的编辑和删除）。")
def crawl(ctx: GameContext, day: int | None, thread: int | None, full: bool) -> None:
    """抓取游戏帖子存入数据库（增量：只读最后一页及之后的新页面）。

    在终端上显示进度；在 cron 下成功时不输出任何内容。
    """
    targets = crawl_targets(ctx.game, day, thread)
    if not targets:
        raise click.ClickException(f"游戏文件中没有第 {day} 天的帖子")
    tty = sys.stderr.isatty()

    def progress(tid: int, page: int, total: int) -> None:
        if tty:
            click.echo(f"\r帖子 {tid}：第 {page}/{total} 页", err=True, nl=False)

    report = run_crawl(ctx, targets, full=full, progress=progress)
    if tty:
        click.echo("", err=True)
        for t in report.threads:
            if t.error is None:
                click.echo(
                    f"帖子 {t.tid}：读取 {t.pages_fetched} 页，新帖 {t.new_posts}，"
                    f"变化 {t.changed_posts}，消失 {t.vanished_posts}",
                    err=True,
                )
    for warning in crawl_warnings(ctx.game, report):
        click.echo(f"注意：{warning}", err=True)  # said under cron too: votes go uncounted
    if not report.ok:
        raise click.ClickException("抓取未完成：\n" + "\n".join(crawl_failures(ctx.game, report)))
    if full:
        mark_days_reread(ctx, targets)


def mark_days_reread(ctx: GameContext, targets: list[CrawlTarget]) -> None:
    """A full re-read after a day's close settles that day: its result may be drafted."""
    now = datetime.now(ctx.game.game.tz)
    crawled = {t.tid for t in targets}
    for day in ctx.game.days:
        if now >= day.closes and set(day.threads.values()) <= crawled:
            ctx.store.set_meta(f"full_read:{day.day}", now.isoformat())
        first = day.first_vote
        if first in crawled and day.first_closes is not None and now >= day.first_closes:
            ctx.store.set_meta(f"full_read:{day.day}:first", now.isoformat())


@cli.command()
@game_command(readonly=True)
@day_option()
@click.option("--player", default=None, help="只看这位玩家（名字或别名）。")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="输出 JSON（每帖的 tid、pid、楼层、时间、作者、状态、正文）。",
)
def posts(ctx: GameContext, day: int | None, player: str | None, as_json: bool) -> None:
    """列出某天各帖子中已抓取的帖子（楼层、时间、作者、内容首行）。只读数据库。"""
    game = ctx.game
    day = resolve_day(ctx, day)
    try:
        day_info = game.day(day)
    except (KeyError, ValueError) as exc:
        raise click.ClickException(str(exc).strip("'\"")) from exc
    who = None
    if player is not None:
        who = game.player(player)
        if who is None:
            raise click.ClickException(f"名单中没有玩家「{player}」")
    tz = game.game.tz
    any_rows = False
    threads = []
    for d, role, tid in game.thread_roles():
        if d != day_info.day:
            continue
        rows = ctx.store.post_rows(tid)
        if who is not None:
            rows = [r for r in rows if r["uid"] == who.uid]
        if as_json:
            threads.append({"tid": tid, "role": role, "posts": [_post_json(r) for r in rows]})
            continue
        click.echo(f"== {ROLE_ZH.get(role, role)} tid={tid}：{len(rows)} 帖")
        for r in rows:
            any_rows = True
            click.echo(_post_line(r, tz))
    if as_json:
        out = {"game": game.game.id, "day": day_info.day, "threads": threads}
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    if not any_rows:
        click.echo("（没有帖子：先运行 bansha crawl）")


def _post_json(r: dict[str, Any]) -> dict[str, Any]:
    """A stored post as ``posts --json`` prints it (field names are stable)."""
    keys = ("tid", "pid", "floor", "author", "uid", "state", "posted_at", "edit_at", "text")
    return {k: r.get(k) for k in keys}


ROLE_ZH = {
    "discussion": "讨论帖",
    "vote": "投票帖",
    "progress": "进程帖",
    "inquiry": "询问贴",
    "first_vote": "第一轮投票帖",
}
STATE_ZH = {
    "visible": "",
    "blocked": "［已屏蔽］",
    "deleted": "［已删除］",
    "vanished": "［已消失］",
    "pending": "［待审核］",
    "author_only": "［仅作者可见］",
}


def _post_line(row: dict[str, Any], tz: Any) -> str:
    when = datetime.fromisoformat(row["posted_at"]).astimezone(tz) if row["posted_at"] else None
    stamp = when.strftime("%m-%d %H:%M:%S") if when else "--"
    floor = f"{row['floor']}#" if row["floor"] else "?#"
    first = (row["text"] or "").strip().splitlines()
    text = first[0][:40] if first else ""
    return f"{floor:>5} {stamp} {row['author']}{STATE_ZH.get(row['state'], '')}：{text}"
