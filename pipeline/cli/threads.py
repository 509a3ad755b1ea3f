"""``bansha threads GAME.toml [--json]``: the game's threads per day — written in the game file,
opened by bansha, or waiting for a draft — and the closing of each vote thread."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import click

from pipeline.cli import GameContext, cli, game_command
from pipeline.drafts import Draft, list_drafts, no_moderator_rights
from pipeline.game.gamefile import THREAD_ROLE_TITLES, ThreadRole
from pipeline.game.threads import day_roles, opened_threads

__all__ = ["threads_cmd", "threads_data"]


def _short(ctx: GameContext, stamp: str | None) -> str | None:
    if not stamp:
        return None
    return datetime.fromisoformat(stamp).astimezone(ctx.game.game.tz).strftime("%m-%d %H:%M")


def _draft(ctx: GameContext, d: Draft | None) -> dict[str, Any] | None:
    if d is None:
        return None
    return {
        "id": d.id,
        "state": d.state.value,
        "state_zh": d.state_zh,
        "subject": d.subject,
        "not_before": d.not_before,
        "reject_why": d.reject_why,
    }


def threads_data(ctx: GameContext) -> dict[str, Any]:
    """The listing (``--json``): per day, per role, where the tid comes from and the drafts."""
    store = ctx.store if ctx.db_path.exists() else None
    opened = {(o.day, o.role): o for o in (opened_threads(store) if store else [])}
    drafts = list_drafts(store) if store else []
    latest: dict[tuple[str, int | None, str | None], Draft] = {}
    for d in drafts:  # by id: the newest of each kind, day and role wins
        if d.kind in ("newthread", "close"):
            latest[(d.kind, d.day, d.role)] = d
    progress_draft = next(
        (d for d in reversed(drafts) if d.kind == "newthread" and d.key.endswith(":game:progress")),
        None,
    )
    file_days = {d.day: d for d in ctx.file_game.days}
    days = []
    for day in sorted(ctx.game.days, key=lambda d: d.day):
        rows = []
        for role in day_roles(ctx.game, day):
            tid = getattr(day, role.value)
            in_file = getattr(file_days[day.day], role.value)
            o = opened.get((day.day, role))
            if in_file is not None:
                source = "file"
            elif o is not None:
                source = "bansha"
            elif tid is not None:
                source = "bansha_game"  # the game's one progress thread, opened another day
            else:
                source = None
            new = latest.get(("newthread", day.day, role.value))
            if new is None and role is ThreadRole.PROGRESS and tid is None:
                new = progress_draft
            close = latest.get(("close", day.day, role.value))
            rows.append(
                {
                    "role": role.value,
                    "role_zh": THREAD_ROLE_TITLES[role],
                    "tid": tid,
                    "source": source,
                    "opened_at": o.opened_at if o is not None else None,
                    "how": o.how if o is not None else None,
                    "subject": o.subject if o is not None else None,
                    "newthread": _draft(ctx, new) if source is None else None,
                    "close": _draft(ctx, close),
                }
            )
        days.append(
            {
                "day": day.day,
                "opens": day.opens.isoformat(),
                "closes": day.closes.isoformat(),
                "threads": rows,
            }
        )
    return {
        "game": ctx.game.game.id,
        "fid": ctx.game.forum.fid,
        "close_vote": ctx.game.threads.close_vote,
        "no_moderator_rights": no_moderator_rights(store) if store else None,
        "days": days,
    }


def _opened_words(ctx: GameContext, row: dict[str, Any]) -> str:
    """How a thread in the store came to be the day's, as it happened: bansha opened it, or
    bansha found the director account's thread of that subject on the forum (opened by hand,
    or bansha's own send whose answer was lost) and recorded it rather than open another."""
    at = _short(ctx, row["opened_at"])
    how = row["how"]
    if how == "posted":
        return f"bansha 于 {at} 开出"
    if how == "moderated":
        return f"于 {at} 登记，等待版主审核后显示"
    if how == "found":
        return f"导演账号发的同名主题，bansha 于 {at} 在版块中找到并登记，没有再开"
    return f"导演手动开的帖子，于 {at} 登记"


def _line(ctx: GameContext, row: dict[str, Any], fid: int | None) -> str:
    where: str | None = None
    if row["source"] == "file":
        where = f"tid={row['tid']}（游戏文件）"
    elif row["source"] == "bansha":
        where = f"tid={row['tid']}（{_opened_words(ctx, row)}）"
    elif row["source"] == "bansha_game":
        where = f"tid={row['tid']}（整局的进程帖，与前几天的是同一个）"
    if where is None:
        new = row["newthread"]
        if new is not None:
            when = _short(ctx, new["not_before"])
            where = (
                f"待开：草稿 #{new['id']}（{new['state_zh']}，{when} 起发出）「{new['subject']}」"
            )
            if new["reject_why"]:
                where += f"，驳回理由：{new['reject_why']}"
        elif fid is None:
            where = "没有 tid，游戏文件也没有 [forum] fid：请写上 tid，或写 fid 由 bansha 开帖"
        else:
            where = "还没有起草（开门前 [threads] draft_hours 小时起草）"
    close = row["close"]
    if close is not None:
        state = "已锁帖" if close["state"] == "posted" else close["state_zh"]
        where += f"；锁帖：草稿 #{close['id']}（{state}）"
        if close["reject_why"]:
            where += f"：{close['reject_why']}"
    return f"  {row['role_zh']}：{where}"


@cli.command("threads")
@game_command(readonly=True)
@click.option("--json", "as_json", is_flag=True, help="输出 JSON（字段名稳定）。")
def threads_cmd(ctx: GameContext, as_json: bool) -> None:
    """列出这局游戏每天的帖子：游戏文件里写的、bansha 开的、等待开帖的草稿，以及投票帖的锁帖。

    游戏文件写了 [forum] fid 时，没写 tid 的帖子由 bansha 在开门前起草成“开新帖”草稿，
    导演批准后在开门时开出（只开一次），tid 记在数据库里，所有命令都用它；游戏文件里写的 tid 优先。
    只读数据库，不联网。
    """
    data = threads_data(ctx)
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    fid = data["fid"]
    where = f"版块 fid={fid}" if fid is not None else "没有写 [forum] fid（bansha 不开帖、不锁帖）"
    click.echo(f"{ctx.game.game.title}（{ctx.game.game.id}）：{where}")
    if data["no_moderator_rights"]:
        note = data["no_moderator_rights"]
        click.echo(f"注意：导演账号没有版主权限，不能锁帖（论坛：{note.get('message', '')}）")
    for day in data["days"]:
        opens = _short(ctx, day["opens"])
        closes = _short(ctx, day["closes"])
        click.echo(f"第{day['day']}天（{opens} 开门，{closes} 关门）")
        for row in day["threads"]:
            click.echo(_line(ctx, row, fid))
