"""Draft commands: list, show, edit, approve, reject, make (``bansha drafts …``).

Nothing here posts: an approved draft is sent by ``bansha cycle`` (the poster), never before.
"""

from __future__ import annotations

import difflib
import json
import unicodedata
from datetime import datetime

import click
from click_default_group import DefaultGroup

import pipeline.cli
from pipeline.cli import GameContext, as_of_option, cli, game_command, templates_dir_or_none
from pipeline.cli.votes import _parse_time, run_derive
from pipeline.cycle import closed_days_to_reread, first_rounds_to_reread
from pipeline.derive.inquiry import InquiryError
from pipeline.drafts import (
    STATE_ZH,
    Draft,
    DraftError,
    approve,
    draft_events,
    edit,
    edit_subject,
    ensure_editable,
    get_draft,
    list_drafts,
    make_drafts,
    reject,
    retire_stale,
    templates_dir_for,
)
from pipeline.drafts.view import first_line, not_before_note, where
from pipeline.store import StoreError


def _now(ctx: GameContext) -> datetime:
    return pipeline.cli.clock(ctx.game.game.tz)


def _short(ctx: GameContext, stamp: str | None) -> str:
    if not stamp:
        return "—"
    return datetime.fromisoformat(stamp).astimezone(ctx.game.game.tz).strftime("%m-%d %H:%M")


def _get(ctx: GameContext, draft_id: int) -> Draft:
    try:
        return get_draft(ctx.store, draft_id)
    except (DraftError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc


@cli.group(
    "drafts",
    cls=DefaultGroup,
    default="list",
    default_if_no_args=True,
    short_help="草稿：列出、查看、修改、批准、驳回、起草。",
)
def drafts_group() -> None:
    """草稿：列出（bansha drafts GAME.toml）、查看（show）、修改（edit）、批准（approve）、
    驳回（reject）、起草（make）。

    草稿只有经导演批准后才会由 bansha cycle 发出。
    """


@drafts_group.command("list")
@game_command(readonly=True)
@click.option("--all", "show_all", is_flag=True, help="也列出已被新稿取代的草稿。")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="输出 JSON（字段名稳定；与控制台的 GET /api/games/{id}/drafts 相同）。",
)
def drafts_list(ctx: GameContext, show_all: bool, as_json: bool) -> None:
    """列出草稿：编号、类型、第几天、状态、首行、生成时间。"""
    if as_json:
        from pipeline.drafts.view import drafts_json

        data = drafts_json(ctx.store, ctx.game, include_superseded=show_all)
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    drafts = list_drafts(ctx.store, include_superseded=show_all)
    if not drafts:
        click.echo("还没有草稿（用 bansha drafts make 起草）。")
        return
    now = _now(ctx)
    for d in drafts:
        day = f"第{d.day}天" if d.day is not None else "—"
        text = f"「{d.subject}」" if d.action == "newthread" else first_line(d.body)
        click.echo(
            f"{_pad('#' + str(d.id), 6)}{_pad(d.kind_zh, 10)}{_pad(day, 7)}"
            f"{_pad(d.state_zh, 8)}{_short(ctx, d.created_at)}  {text}"
            f"{not_before_note(d, ctx.game, now)}"
        )
    opened_lines(ctx)


def opened_lines(ctx: GameContext) -> None:
    """The threads bansha opened (their tids are used by every command)."""
    from pipeline.game.gamefile import THREAD_ROLE_TITLES
    from pipeline.game.threads import opened_threads

    opened = opened_threads(ctx.store)
    if opened:
        click.echo("")
        click.echo("bansha 开的帖子（游戏文件里没写 tid 的，所有命令都用它们）：")
        for o in opened:
            role = THREAD_ROLE_TITLES[o.role]
            click.echo(f"  第{o.day}天 {role} tid={o.tid}「{o.subject or ''}」")


def _pad(text: str, width: int) -> str:
    """Left-aligned in ``width`` terminal columns (a CJK character takes two)."""
    used = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)
    return text + " " * max(1, width - used)


def _posted_before(ctx: GameContext, d: Draft) -> str | None:
    """Said of a waiting reply whose post went out already in an earlier draft: approved, it
    is a second post (a correction), not an edit of the first."""
    from pipeline.drafts.records import posted_before

    first = posted_before(ctx.store, d)
    if first is None or first.posted_at is None:
        return None
    return (
        f"注意：同一内容的第 {first.id} 号草稿已于 {_short(ctx, first.posted_at)} 发出"
        f"（pid {first.posted_pid}）；批准这一份会在帖子里再发一帖，作为更正。不需要更正就驳回它"
    )


@drafts_group.command("show")
@game_command(readonly=True)
@click.argument("draft_id", type=int, metavar="草稿编号")
@click.option(
    "--json", "as_json", is_flag=True, help="输出 JSON（与 drafts --json 中的一项相同）。"
)
def drafts_show(ctx: GameContext, draft_id: int, as_json: bool) -> None:
    """显示草稿正文，以及与同一草稿上一稿的差异。"""
    d = _get(ctx, draft_id)
    if as_json:
        from pipeline.drafts.view import draft_json

        data = draft_json(ctx.game, d, _now(ctx))
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    day = f"第{d.day}天 " if d.day is not None else ""
    click.echo(f"第 {d.id} 号草稿：{day}{d.kind_zh}（{d.state_zh}）")
    click.echo(f"发往：{where(d, ctx.game)}")
    if (again := _posted_before(ctx, d)) is not None:
        click.echo(again)
    if d.not_before:
        click.echo(f"不早于：{_short(ctx, d.not_before)}（批准后也要到这时才发出）")
    click.echo(f"生成于：{_short(ctx, d.created_at)}")
    if d.approved_at:
        click.echo(f"批准于：{_short(ctx, d.approved_at)}")
    if d.posted_at:
        click.echo(f"发出于：{_short(ctx, d.posted_at)}（pid {d.posted_pid}）")
    if d.reject_why:
        click.echo(f"驳回理由：{d.reject_why}")
    click.echo("")
    if d.subject:
        click.echo(f"―――― 标题 ――――\n{d.subject}")
    click.echo("―――― 正文 ――――")
    click.echo(d.body)
    click.echo("")
    if d.previous_id is None:
        click.echo("―――― 这是该草稿的第一稿，没有上一稿可比较 ――――")
    else:
        prev = get_draft(ctx.store, d.previous_id)
        click.echo(f"―――― 与上一稿（第 {prev.id} 号，{prev.state_zh}）的差异 ――――")
        _diff(prev.body, d.body, f"第 {prev.id} 号（上一稿）", f"第 {d.id} 号（本稿）")
    if d.edited:
        click.echo("")
        click.echo("―――― 导演的修改（与程序生成的原稿相比） ――――")
        _diff(d.generated_body, d.body, "程序生成的原稿", "修改后")
    events = draft_events(ctx.store, d.id)
    if events:
        click.echo("")
        click.echo("―――― 记录 ――――")
        for e in events:
            was = STATE_ZH.get(e["from_state"], e["from_state"]) if e["from_state"] else "新建"
            now = STATE_ZH.get(e["to_state"], e["to_state"])
            note = f"：{e['note']}" if e["note"] else ""
            click.echo(f"{_short(ctx, e['at'])} {was} → {now}{note}")


def _diff(old: str, new: str, old_name: str, new_name: str) -> None:
    lines = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), fromfile=old_name, tofile=new_name, lineterm=""
        )
    )
    if not lines:
        click.echo("（正文相同）")
    for line in lines:
        click.echo(line)


@drafts_group.command("edit")
@game_command
@click.argument("draft_id", type=int, metavar="草稿编号")
@click.option(
    "--subject",
    default=None,
    help="改开新帖草稿的标题（一行，最多 80 字），不打开编辑器。",
)
def drafts_edit(ctx: GameContext, draft_id: int, subject: str | None) -> None:
    """用编辑器（$EDITOR）修改草稿正文；已批准的草稿修改后需重新批准。

    开新帖的草稿用 --subject 改标题（不打开编辑器），例：

      bansha drafts edit m135.toml 7 --subject "[M135]第3天讨论帖"
    """
    d = _get(ctx, draft_id)
    if subject is not None:
        try:
            after = edit_subject(ctx.store, d.id, subject, _now(ctx))
        except (DraftError, StoreError) as exc:
            raise click.ClickException(str(exc)) from exc
        if after.subject == d.subject:
            click.echo("标题没有变化，草稿保持不变。")
            return
        again = "；它原已批准，现需重新批准" if d.state.value == "approved" else ""
        click.echo(f"已把第 {d.id} 号草稿的标题改为「{after.subject}」{again}。")
        return
    try:
        ensure_editable(d)  # before the editor opens: the director's typing would be lost
    except (DraftError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    text = click.edit(d.body + "\n", extension=".txt", require_save=True)
    if text is None:
        click.echo("没有修改，草稿保持不变。")
        return
    try:
        after = edit(
            ctx.store,
            d.id,
            text,
            _now(ctx),
            charset=ctx.game.forum.encoding,
            limit=ctx.game.drafts.max_post_bytes,
        )
    except (DraftError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    if after.body == d.body:
        click.echo("没有修改，草稿保持不变。")
        return
    again = "；它原已批准，现需重新批准" if d.state.value == "approved" else ""
    click.echo(f"已保存第 {d.id} 号草稿的修改{again}（bansha drafts show 查看差异）。")


@drafts_group.command("approve")
@game_command
@click.argument("draft_id", type=int, metavar="草稿编号")
def drafts_approve(ctx: GameContext, draft_id: int) -> None:
    """批准草稿：下一次 bansha cycle 会把它发到论坛。"""
    try:
        d = approve(
            ctx.store, draft_id, _now(ctx), game=ctx.game, templates_dir=templates_dir_or_none(ctx)
        )
    except (DraftError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"已批准第 {d.id} 号草稿（{d.title}），将由下一次 bansha cycle 发出：{where(d, ctx.game)}"
    )
    if (again := _posted_before(ctx, d)) is not None:
        click.echo(again)


@drafts_group.command("reject")
@game_command
@click.argument("draft_id", type=int, metavar="草稿编号")
@click.option("--why", required=True, help="驳回的理由（会记录下来）。")
def drafts_reject(ctx: GameContext, draft_id: int, why: str) -> None:
    """驳回草稿（写明理由）；驳回的草稿不会发出。"""
    try:
        d = reject(ctx.store, draft_id, why, _now(ctx))
    except (DraftError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"已驳回第 {d.id} 号草稿（{d.title}）：{d.reject_why}")


@drafts_group.command("make")
@game_command
@as_of_option
def drafts_make(ctx: GameContext, as_of: str | None) -> None:
    """按时间起草现在该发的草稿（计票、结果、开门公示、电梯、判罚、提醒）。

    内容没有变化的草稿不会重复起草。
    """
    try:
        _make(ctx, as_of)
    except StoreError as exc:  # e.g. a cycle held the store's write lock too long
        raise click.ClickException(str(exc)) from exc


def _make(ctx: GameContext, as_of: str | None) -> None:
    when = _parse_time(ctx, as_of)
    derivation = run_derive(ctx, when, write=as_of is None)
    unsettled = closed_days_to_reread(ctx.game, ctx.store, when)
    for n in unsettled:
        click.echo(
            f"第{n}天已关门，但关门后还没有完整重读过帖子：暂不起草它的结果与次日开门公示"
            f"（运行 bansha crawl {ctx.game_path.name} --day {n} --full，或等下一轮 cycle）"
        )
    for line in derivation.warnings():
        click.echo(f"注意：{line}；该天的投票结果和次日开门公示暂不起草")
    unsettled_first = first_rounds_to_reread(ctx.game, ctx.store, when)
    for n in unsettled_first:
        click.echo(
            f"第{n}天第一轮[正午]已结束，但之后还没有完整重读过第一轮投票帖：暂不起草第一轮结果"
            f"（运行 bansha crawl {ctx.game_path.name} --day {n} --full，或等下一轮 cycle）"
        )
    retired = retire_stale(ctx.store, ctx.game, as_of=when, now=_now(ctx))
    if retired:
        click.echo(
            f"已作废 {len(retired)} 份过时的计票/提醒草稿（投票或第一轮已截止）："
            + "、".join(f"#{i}" for i in retired)
        )
    try:
        created = make_drafts(
            ctx.game,
            ctx.store,
            derivation,
            now=_now(ctx),
            templates_dir=templates_dir_for(ctx.game, ctx.game_path),
            unsettled=unsettled,
            unsettled_first=unsettled_first,
        )
    except (DraftError, InquiryError) as exc:
        raise click.ClickException(str(exc)) from exc
    if not created:
        click.echo("没有新的草稿。")
        return
    for draft_id in created:
        d = get_draft(ctx.store, draft_id)
        click.echo(f"已起草 #{d.id} {d.title}（{where(d, ctx.game)}）：{first_line(d.body)}")
    click.echo("用 bansha drafts show 查看，bansha drafts approve 批准。")
