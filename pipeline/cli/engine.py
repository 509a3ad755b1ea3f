"""Engine commands: ``night add/list/remove/resolve``, ``day add/resolve``, ``state``.

The night actions players send privately reach the tool through ``bansha night add`` (or a
TOML file given to ``night resolve --actions``); ``night resolve`` runs the pure engine from the
previous phase's snapshot and stores the new snapshot. ``day resolve`` re-counts the day's vote
with what the engine knows (who is out, the sheriff, 乌鸦[诽谤]) and applies the result.
``state`` shows the director the engine's state (secret: cards, statuses, charges).

This module registers its commands on import (``pipeline.cli`` imports it).
"""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import click

from engine.kernel import (
    OUTCOME_ZH,
    RECORD_OUT,
    Action,
    DayInput,
    EngineError,
    Report,
    resolve_day,
)
from engine.kernel import resolve_night as engine_resolve_night
from engine.rulesets import Ruleset, get_ruleset
from engine.rulesets.base import ENDED_BEFORE_THE_VOTE, late_reason, zh_span
from engine.rulesets.rulebooks import cite
from engine.state import ZH_ORDINAL, Charge, GameState, Phase, PhaseKind, StateError, Status
from engine.votes import DayContext, Tally, judge_ballots, tally
from pipeline.cli import GameContext, cli, default_day, game_command, time_option
from pipeline.derive import DayResult, RoundResult, derive, journal_modifiers
from pipeline.game.journal import (
    JournalError,
    Snapshot,
    add_action,
    import_actions,
    journal_actions,
    latest_snapshot,
    load_actions_file,
    replay,
    save_snapshot,
    setup_state,
    snapshot,
    snapshots,
    source_zh,
    state_before,
)
from pipeline.game.pending import pending_prompt, pending_record, report_dict

if TYPE_CHECKING:
    from pipeline.game.gamefile import Day

__all__ = ["day_group", "night_group", "state_cmd"]


def _ruleset(ctx: GameContext) -> Ruleset:
    rs = get_ruleset(ctx.game.game.ruleset)
    if not rs.has_engine:
        raise click.ClickException(f"规则集 {rs.id}（{rs.name}）的夜晚结算尚未实现")
    return rs


def _now(ctx: GameContext) -> datetime:
    return datetime.now(ctx.game.game.tz)


def _name(ctx: GameContext, raw: str, what: str) -> str:
    player = ctx.game.player(raw.strip())
    if player is None:
        raise click.ClickException(f"{what}「{raw}」不在名单中")
    return player.name


def _target(ctx: GameContext, rs: Ruleset, raw: str) -> str:
    """A target as the engine reads it: a roster name, or a card label of a card-based set
    (nizhuan "戊的第二身份" / "戊#2", nizhuan.txt:196) with the player's name from the roster."""
    if ctx.game.player(raw.strip()) is not None:
        return _name(ctx, raw, "目标")
    name, card = rs.split_target(raw)
    if card is None:
        return _name(ctx, raw, "目标")
    player = ctx.game.player(name)
    if player is None:
        raise click.ClickException(f"目标「{raw}」不在名单中")
    return rs.unit_label(player.name, card)


def _time(ctx: GameContext, raw: str | None, option: str) -> datetime | None:
    if raw is None:
        return None
    return time_option(raw, ctx.game.game.tz, option)


class _ActionOptions(NamedTuple):
    """The options of ``night add`` / ``day add`` (see :func:`_action_options`), in the order
    :func:`_action_from_options` takes them."""

    actor: str
    skill: str
    targets: tuple[str, ...]
    choice: str | None
    card: str | None
    at: str | None


def _action_from_options(
    ctx: GameContext,
    rs: Ruleset,
    actor: str,
    skill: str,
    targets: tuple[str, ...],
    choice: str | None,
    card: str | None,
    at: str | None,
) -> Action:
    skill_name = rs.canonical_skill(skill)
    if skill_name not in rs.skill_names():
        raise click.ClickException(rs.unknown_skill_reason(skill_name))
    when = _time(ctx, at, "--at")
    return Action(
        actor=_name(ctx, actor, "玩家"),
        skill=skill_name,
        targets=tuple(_target(ctx, rs, t) for t in targets),
        choice=choice,
        card=card,
        at=when.isoformat() if when else None,
    )


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(str(exc))


# --------------------------------------------------------------------------- red cards


def _red_card_actions(
    ctx: GameContext, state: GameState, start: datetime | None, end: datetime | None
) -> list[Action]:
    """Red cards (given, or reached by escalation) in the window ``(start, end]`` as engine
    actions, with the 判负 they brought (:func:`pipeline.derive.ending.red_card_actions`)."""
    from pipeline.derive.ending import red_card_actions

    return red_card_actions(ctx.game, ctx.store, state, start, end)


def night_lateness(ctx: GameContext, rs: Ruleset, night: int, action: Action) -> str | None:
    """Why ``action`` came after its 行动时限 (night N's deadlines count from day N's close in
    the game file), or None: on time, no ``at`` (nothing to check), no close in the game file,
    or a skill whose deadline the rule set leaves to the director."""
    start, _ = _night_window(ctx, night)
    when = datetime.fromisoformat(action.at) if action.at else None
    if start is None or when is None:
        return None
    return late_reason(action.skill, rs.action_deadline(action.skill, action.card), when, start)


def _night_window(ctx: GameContext, night: int) -> tuple[datetime | None, datetime | None]:
    days = {d.day: d for d in ctx.game.days}
    start = days[night].closes if night in days else None
    end = days[night + 1].opens if night + 1 in days else None
    return start, end


# --------------------------------------------------------------------------- rendering


def _render(report: Report, title: str, game: str, rs: Ruleset) -> None:
    """The resolution of the game file ``game`` as the director reads it (a card's position
    is said only where a player holds more than one)."""
    two = rs.hands is not None and rs.hands.size > 1
    click.echo(title)
    data = report.to_dict()
    if data["actions"]:
        click.echo("行动：")
        for a in data["actions"]:
            target = f"→{'、'.join(a['chosen_targets'])}" if a["chosen_targets"] else ""
            resolved = (
                f"（结算目标：{'、'.join(a['resolved_targets'])}）"
                if a["resolved_targets"] and a["resolved_targets"] != a["chosen_targets"]
                else ""
            )
            zh = OUTCOME_ZH.get(report.actions[data["actions"].index(a)].outcome, a["outcome"])
            rule = f"（依据{cite(a['rule'])}）" if a["rule"] else ""
            click.echo(
                f"  [{zh}] {a['actor']}[{a['skill']}]{target}{resolved}：{a['reason']}{rule}"
            )
    click.echo("出局（按顺序）：" if report.deaths else "出局：无")
    for i, d in enumerate(report.deaths, 1):
        where = f"的{ZH_ORDINAL.get(d.card_index, '')}" if two else ""
        who = f"{d.player}{where}（{d.card}）"
        tail = "，该角色出局" if d.player_out else ""
        click.echo(f"  {i}. {who}：{d.cause}{tail}（{d.step}，依据{cite(d.rule)}）")
    if report.feedback:
        click.echo("私信反馈：")
        for f in report.feedback:
            click.echo(f"  → {f.to}：{f.text}")
    click.echo("公示：" if report.public else "公示：无")
    for line in report.public:
        click.echo(f"  {line}")
    click.echo(f"警长：{report.sheriff or '无'}")
    if report.pending:
        click.echo("待决定（结果不完整，记录后重新结算）：")
        for p in report.pending:
            click.echo(f"  ! {pending_record(p, game)['prompt']}")
    click.echo(
        f"胜负：{report.winner}胜利（{report.win_reason}；{report.win_rule}）"
        if report.winner
        else "胜负：未分"
    )


def _refuse_after_pending(ctx: GameContext, phase: Phase) -> None:
    """A night is not resolved while the day before it waits for a decision (最后一枪, 殉职 …):
    the state it would start from is not the game's yet. (A day is resolved after a night with
    decisions pending: some are made during the day, e.g. m209 太阳[日不落]'s named players after
    the first 正午 round.) Says which decisions and the commands
    that settle them (the game file's name, the player and the skill filled in)."""
    before = Phase.from_index(phase.index - 1)
    if before.kind is PhaseKind.SETUP:
        return
    snap = snapshot(ctx.store, before)
    if snap is None or snap.complete:
        return
    kind = before.kind.value
    option = f"--{kind} {before.number}"
    game = ctx.game_path.name
    lines = [f"{before.zh}的结算还有待决定的事项，结算{phase.zh}之前须先处理（未做任何处理）："]
    pending = snap.report.get("pending", [])
    for p in pending:
        lines.append(f"  ! {pending_prompt(p, game)}")
    resolve = f"再重新结算 bansha {kind} resolve {game} {option}，然后才能结算{phase.zh}"
    # a decision is recorded as an action of the phase, except an out's time, whose prompt
    # says its own command
    who = next((p for p in pending if RECORD_OUT not in (p.get("template") or "")), None)
    if who is None:
        lines.append(f"处理：先按上面的命令记录，{resolve}")
    else:
        actor, skill = who.get("who") or "玩家", who.get("skill") or "技能"
        lines.append(
            f"处理：先记录决定 bansha {kind} add {game} {option} --actor {actor} --skill {skill} "
            f"--target 目标（放弃发动则写 --choice 放弃），{resolve}"
        )
    raise click.ClickException("\n".join(lines))


# --------------------------------------------------------------------------- night


@cli.group("night")
def night_group() -> None:
    """夜晚行动：记录（add）、列出（list）、撤销（remove）、结算（resolve）。"""


def _action_options(fn: Any) -> Any:
    """The options that describe one action (--actor, --skill, --target, --choice, --card, --at),
    handed to the command as one ``opts`` argument (an :class:`_ActionOptions`)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        opts = _ActionOptions(*(kwargs.pop(name) for name in _ActionOptions._fields))
        return fn(*args, opts=opts, **kwargs)

    cmd: Any = wrapper
    cmd = click.option(
        "--at",
        "at",
        default=None,
        help="玩家发来行动的时间（ISO 8601）；夜晚行动据此核对行动时限，不写则不核对。",
    )(cmd)
    cmd = click.option("--card", default=None, help="发动技能的身份牌（可选，用于核对）。")(cmd)
    cmd = click.option(
        "--choice", default=None, help="选择：馈赠的 预言/毒药/最后一枪，放弃，感知的第一身份…"
    )(cmd)
    cmd = click.option(
        "--target", "targets", multiple=True, help="目标（可重复，如交换的两名角色）。"
    )(cmd)
    cmd = click.option("--skill", required=True, help="技能名，按规则原文（预言、毒药…）。")(cmd)
    cmd = click.option("--actor", required=True, help="发动者（玩家名或别名）。")(cmd)
    return cmd


@night_group.command("add")
@game_command
@click.option("--night", "number", type=int, required=True, help="第几晚（0 = 第零晚）。")
@_action_options
@click.option(
    "--late",
    is_flag=True,
    help="导演决定接受超过行动时限的行动（记入记录，night list 显示为逾时接受）。",
)
def night_add(ctx: GameContext, number: int, opts: _ActionOptions, late: bool) -> None:
    """记录一条夜晚行动（也用于 最后一枪、殉职 等需要即时决定的技能）。

    写了 --at 的行动按规则的行动时限核对（第N晚从游戏文件里第N天的关门时间算起）：
    超过时限的视为放弃发动技能，不予记录，除非导演决定仍然接受（--late，记入记录）。
    不写 --at 则无从核对，不检查；时限从反馈、出局等时间算起的技能（女巫的反馈、
    猎人的最后一枪…）由导演自行判断。
    """
    if number < 0:
        raise click.BadParameter("不能为负数", param_hint="--night")
    rs = _ruleset(ctx)
    action = _action_from_options(ctx, rs, *opts)
    lateness = night_lateness(ctx, rs, number, action)
    if lateness is not None and not late:
        raise click.ClickException(f"{lateness}；未记录。导演决定仍然接受的，加 --late（记入记录）")
    action_id = add_action(ctx.store, "night", number, action, recorded_at=_now(ctx), late=lateness)
    note = f"（逾时接受：{lateness}）" if lateness else ""
    click.echo(f"已记录 #{action_id}：第{number}晚 {action.describe()}{note}")


@night_group.command("list")
@game_command(readonly=True)
@click.option("--night", "number", type=int, default=None, help="只看这一晚。")
@click.option("--all", "include_removed", is_flag=True, help="包括已撤销的记录。")
@click.option("--json", "as_json", is_flag=True, help="输出 JSON。")
def night_list(ctx: GameContext, number: int | None, include_removed: bool, as_json: bool) -> None:
    """列出记录的夜晚行动。"""
    rows = journal_actions(ctx.store, "night", number, include_removed=include_removed)
    if as_json:
        _echo_json([r.to_dict() for r in rows])
        return
    if not rows:
        click.echo("没有记录的夜晚行动。")
    for r in rows:
        removed = f" [已撤销 {r.removed_at}]" if r.removed_at else ""
        late = f" [逾时接受：{r.late}]" if r.late else ""
        click.echo(
            f"#{r.id} 第{r.number}晚 {r.action.describe()}（来源：{source_zh(r.source)}）"
            f"{late}{removed}"
        )


@night_group.command("remove")
@game_command
@click.argument("action_id", type=int, metavar="行动编号")
@click.option("--why", default=None, help="撤销的理由（记入审计记录，bansha undo list --all）。")
def night_remove(ctx: GameContext, action_id: int, why: str | None) -> None:
    """撤销一条记录错的行动（夜晚或白天的；保留为证据，不再参与结算，记下时间与理由）。

    与 bansha undo action 相同；这个阶段已经结算过时，会说明用哪条命令重新结算。"""
    from pipeline.cli.undo import echo_undone
    from pipeline.derive.undo import BY_CLI, UndoError
    from pipeline.derive.undo import remove_action as undo_action

    try:
        undone = undo_action(ctx.game, ctx.store, action_id, why=why, by=BY_CLI, now=_now(ctx))
    except UndoError as exc:
        raise _fail(exc) from exc
    echo_undone(ctx, undone)


@night_group.command("resolve")
@game_command
@click.option("--night", "number", type=int, required=True, help="第几晚（0 = 第零晚）。")
@click.option(
    "--actions",
    "actions_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="行动文件（TOML）：先记入日志（替换同一文件先前记入的行动），再结算。",
)
@click.option(
    "--late",
    is_flag=True,
    help="行动文件里超过行动时限的行动，导演决定仍然接受（记入记录）。",
)
@click.option("--json", "as_json", is_flag=True, help="输出 JSON（字段名稳定，供程序读取）。")
def night_resolve(
    ctx: GameContext, number: int, actions_file: Path | None, late: bool, as_json: bool
) -> None:
    """结算一个夜晚：出局（按顺序）、私信反馈、公示、状态、胜负和每一步的依据。

    前一天的结算还有待决定的事项（如须立即决定的<最后一枪>）时不结算：先用 bansha day add
    记录决定、bansha day resolve 重新结算那一天（命令会打印出来），再结算这一晚。
    """
    rs = _ruleset(ctx)
    now = _now(ctx)
    _refuse_after_pending(ctx, Phase.night(number))
    if actions_file is not None:
        try:
            parsed = load_actions_file(actions_file, resolve_name=_resolver(ctx), ruleset=rs)
        except JournalError as exc:
            raise _fail(exc) from exc
        if parsed.night != number:
            raise click.ClickException(
                f"行动文件 {actions_file} 写的是第{parsed.night}晚（night = {parsed.night}），"
                f"与 --night {number} 不符；未做任何处理"
            )
        lateness = [night_lateness(ctx, rs, number, a) for a in parsed.actions]
        if any(lateness) and not late:
            pairs = zip(parsed.actions, lateness, strict=True)
            lines = "；".join(f"{a.describe()}：{why}" for a, why in pairs if why)
            raise click.ClickException(
                f"行动文件 {actions_file} 中有超过行动时限的行动——{lines}；未做任何处理。"
                "改掉它们，或导演决定仍然接受的，加 --late（记入记录）"
            )
        import_actions(ctx.store, parsed, recorded_at=now, late=lateness)
    phase = Phase.night(number)
    try:
        state = state_before(ctx.store, ctx.game, rs, phase)
        actions = [r.action for r in journal_actions(ctx.store, "night", number)]
        actions += _red_card_actions(ctx, state, *_night_window(ctx, number))
        new_state, report = engine_resolve_night(state, actions, rs, night=number)
    except (EngineError, StateError) as exc:
        raise _fail(exc) from exc
    stale = save_snapshot(
        ctx.store,
        phase,
        {"actions": [a.to_dict() for a in actions]},
        new_state,
        report,
        resolved_at=now,
    )
    if as_json:
        _echo_json(
            {
                "game": ctx.game.game.id,
                "ruleset": rs.id,
                "night": number,
                **report_dict(report, ctx.game_path.name),
                "stale": stale,
            }
        )
        return
    _render(report, f"第{number}晚结算（{rs.name}）", ctx.game_path.name, rs)
    if stale:
        click.echo(f"注意：之后已结算的阶段（{'、'.join(stale)}）已作废，请按顺序重新结算。")


def _resolver(ctx: GameContext) -> Any:
    def resolve(raw: str) -> str | None:
        p = ctx.game.player(raw.strip())
        return p.name if p else None

    return resolve


# --------------------------------------------------------------------------- day


@cli.group("day")
def day_group() -> None:
    """白天：记录白天的决定（add：装傻、翻牌、最后一枪、殉职），结算投票结果（resolve）。"""


@day_group.command("add")
@game_command
@click.option("--day", "number", type=int, required=True, help="第几天。")
@_action_options
def day_add(ctx: GameContext, number: int, opts: _ActionOptions) -> None:
    """记录白天的一条决定或技能（装傻、翻牌、最后一枪、殉职、投降、猜中、决斗、红牌罚下）。

    狼人真言询问帖中猜中的词语由 day resolve 自动读取，不必再记录；记录了也只计一次。

    红牌罚下、决斗写 --at：关门前的红牌使被罚者从那一刻起出局，他的票和投给他的票不再计入；
    决斗的目标身份同样从决斗时刻起出局（见 docs/rulings.md 投票与计票）。

    例：bansha day add GAME.toml --day 2 --actor 面条 --skill 红牌罚下
    --at 2026-12-02T12:30:00+08:00
    """
    rs = _ruleset(ctx)
    action = _action_from_options(ctx, rs, *opts)
    cutoff = rs.day_skill_cutoffs.get(action.skill)
    if cutoff is not None:
        _check_cutoff(ctx, number, action, *cutoff)
    action_id = add_action(ctx.store, "day", number, action, recorded_at=_now(ctx))
    click.echo(f"已记录 #{action_id}：第{number}天 {action.describe()}")


def _check_cutoff(
    ctx: GameContext, number: int, action: Action, before: timedelta, rule: str
) -> None:
    """A day skill the rule set forbids within ``before`` of the close (``day_skill_cutoffs``;
    nizhuan.txt:106 决斗……关门前3小时内不可发动此技能)."""
    within = f"关门前{zh_span(before)}内"
    if action.at is None:
        raise click.ClickException(
            f"{action.skill}须写明发动时间（--at），{within}不可发动（{rule}）"
        )
    try:
        closes = ctx.game.day(number).closes
    except ValueError as exc:
        raise _fail(exc) from exc
    if datetime.fromisoformat(action.at) > closes - before:
        raise click.ClickException(
            f"{action.skill}发动于{within}（关门时间 {closes:%m-%d %H:%M}），无效（{rule}）"
        )


def _inquiry_guesses(
    ctx: GameContext, number: int, when: datetime, d: Any, recorded: list[Action]
) -> list[Action]:
    """The words guessed correctly in the day's inquiry thread (zhenyan.txt:168), as the day's
    ``猜中`` actions — read from the crawled thread, so the director does not retype them; one
    the director recorded by hand too counts once. The derivation ``d`` gives the day's sheriff
    and who was out when (its posts are the sheriff's answers; an out player's are refused)."""
    if ctx.game.day(number).inquiry is None:
        return []
    from pipeline.derive.inquiry import InquiryError, day_guess_actions

    try:
        return day_guess_actions(
            ctx.game,
            ctx.store,
            number,
            as_of=when,
            recorded=recorded,
            sheriffs={n: r.sheriff for n, r in d.days.items()},
            outs={p: at for p, (at, _why) in d.outs.items()},
        )
    except InquiryError as exc:  # its message never shows a word
        raise _fail(exc) from exc


def _as_of(ctx: GameContext, raw: str | None) -> datetime:
    value = _time(ctx, raw, "--as-of")
    return value if value is not None else _now(ctx)


def _last_closed_day(ctx: GameContext, when: datetime) -> int:
    """The day ``day resolve`` means without ``--day``: the last one closed at ``when`` (said
    on stderr), else the first day, which then is said not to have closed yet."""
    closed = [d.day for d in ctx.game.days if d.closes <= when]
    if not closed:
        return default_day(ctx.game, when).day
    click.echo(f"结算第{max(closed)}天（最近关门的一天；用 --day 指定别的天）", err=True)
    return max(closed)


@day_group.command("resolve")
@game_command
@click.option("--day", "number", type=int, default=None, help="第几天（默认：刚关门的那一天）。")
@click.option("--as-of", "as_of", default=None, help="按这个时间判断（ISO 8601；默认现在）。")
@click.option("--json", "as_json", is_flag=True, help="输出 JSON。")
def day_resolve(ctx: GameContext, number: int | None, as_of: str | None, as_json: bool) -> None:
    """把第 N 天的计票结果（警长、诽谤、出局都按引擎的状态）应用到状态上。

    有询问帖的一天（狼人真言），帖中猜中的词语自动作为当天的“猜中”结算。
    """
    rs = _ruleset(ctx)
    when = _as_of(ctx, as_of)
    if number is None:
        number = _last_closed_day(ctx, when)
    phase = Phase.day(number)
    day, d = _closed_day(ctx, number, when)
    try:
        state = state_before(ctx.store, ctx.game, rs, phase)
    except EngineError as exc:
        raise _fail(exc) from exc
    d = d or derive(ctx.game, ctx.store, as_of=when)
    res = d.day(number)
    if res.tally is None:
        raise click.ClickException(f"第{number}天没有投票帖（days[].vote），无法结算")
    reds = _red_card_actions(ctx, state, day.opens, day.closes)
    recorded = [r.action for r in journal_actions(ctx.store, "day", number)]
    dctx = _vote_context(ctx, rs, state, day, res, recorded, reds)
    first_tally = None
    if res.first is not None:
        first_tally = _first_round_tally(ctx, rs, state, res.first, dctx)
        dctx = replace(dctx, opens=res.first.closes)  # the extra round opens when it ends
    fixed = rs.fixed_ballots(state, number, opens=day.opens, tid=day.vote or 0)
    verdicts = judge_ballots((*res.ballots, *fixed), dctx, rs)
    day_tally = tally(verdicts, dctx, rs)
    read = _inquiry_guesses(ctx, number, when, d, recorded)
    actions = [*recorded, *read, *reds, *rs.vote_actions(day_tally)]
    day_input = DayInput.from_tally(
        day_tally, actions=actions, first_round=first_tally, closes=day.closes.isoformat()
    )
    try:
        new_state, report = resolve_day(state, day_input, rs)
    except (EngineError, StateError) as exc:
        raise _fail(exc) from exc
    stale = save_snapshot(
        ctx.store,
        phase,
        {**day_input.to_dict(), "tally": day_tally.to_dict()},
        new_state,
        report,
        resolved_at=_now(ctx),
    )
    if as_json:
        _echo_json(
            {
                "game": ctx.game.game.id,
                "ruleset": rs.id,
                "day": number,
                "tally": day_tally.to_dict(),
                "first_round": first_tally.to_dict() if first_tally is not None else None,
                **report_dict(report, ctx.game_path.name),
                "stale": stale,
            }
        )
        return
    _say_day_resolved(rs, number, day_tally, first_tally, report, stale, ctx.game_path.name)


def _closed_day(ctx: GameContext, number: int, when: datetime) -> tuple[Day, Any]:
    """Day ``number`` of the game file, which must have closed by ``when`` — unless the game
    ended during it (zhenyan.txt:114): its vote will not happen, it is resolved at once (said
    on stderr). With the derivation at ``when`` when it was made to know (else None)."""
    try:
        day = ctx.game.day(number)
    except ValueError as exc:
        raise _fail(exc) from exc
    if when >= day.closes:
        return day, None
    from pipeline.derive.ending import early_resolution

    d = derive(ctx.game, ctx.store, as_of=when)
    why = early_resolution(d, number, when)
    if why is None:
        raise click.ClickException(
            f"第{number}天尚未关门（关门时间 {day.closes.isoformat()}），投票结束后才能结算"
        )
    click.echo(why, err=True)
    return day, d


def _vote_context(
    ctx: GameContext,
    rs: Ruleset,
    state: GameState,
    day: Day,
    res: DayResult,
    recorded: list[Action],
    reds: list[Action],
) -> DayContext:
    """The day's vote as the engine counts it: the roster with every out (the engine's, the
    director's records, red cards and duels with their time), the sheriff, the modifiers."""
    assert res.tally is not None
    red_at = {a.actor: datetime.fromisoformat(a.at) for a in reds if a.at}
    players = rs.vote_roster(state, opens=day.opens, red_at=red_at)
    sheriff = rs.vote_sheriff(state)
    if not rs.card_units:
        # one unit per player: the director's own records count as in the tally — an out
        # recorded by hand (bansha player out, e.g. a death at noon) and a sheriff set by hand
        players = tuple(
            replace(ps, out_at=min(ps.out_at, res.out_before[ps.name]))
            if ps.name in res.out_before and ps.out_at is not None
            else replace(ps, out_at=res.out_before[ps.name])
            if ps.name in res.out_before
            else ps
            for ps in players
        )
        sheriff = res.sheriff
    # a red card recorded with its time, a duel's target card: out from that moment
    players = rs.with_timed_outs(players, rs.timed_outs(state, [*recorded, *reds]))
    return DayContext(
        day=day.day,
        opens=day.opens,
        closes=day.closes,
        players=players,
        sheriff=sheriff,
        accelerated=res.accelerated,
        sheriff_election=res.tally.sheriff_election,
        modifiers=(
            *journal_modifiers(ctx.store, day.day),
            *rs.vote_modifiers(state, day.day),
            *rs.day_vote_modifiers(state, day.day, recorded),
        ),
        closed_early=rs.timed_close(state, [*recorded, *reds]),
        ruleset=rs.id,
    )


def _first_round_tally(
    ctx: GameContext, rs: Ruleset, state: GameState, first: RoundResult, dctx: DayContext
) -> Tally:
    """太阳[日不落] (m209.txt:377-378): the first 正午 round, open to every living player."""
    ctx1 = replace(
        dctx,
        closes=first.closes,
        modifiers=(
            *journal_modifiers(ctx.store, dctx.day),
            *rs.first_round_modifiers(state, dctx.day),
        ),
    )
    return tally(judge_ballots(first.ballots, ctx1, rs), ctx1, rs)


def _say_day_resolved(
    rs: Ruleset,
    number: int,
    day_tally: Tally,
    first_tally: Tally | None,
    report: Report,
    stale: list[str],
    game: str,
) -> None:
    """The resolution as the director reads it: the result, the tally's notes, what is stale."""
    result = (
        f"当选警长：{day_tally.elected or '无'}"
        if day_tally.sheriff_election
        else f"最高票：{day_tally.out or '无人'}"
    )
    ended = [e.result for e in report.log if e.step == ENDED_BEFORE_THE_VOTE]
    if ended:  # zhenyan.txt:114 游戏立即结束: the vote is not counted, nor said
        _render(report, f"第{number}天结算（{rs.name}）：{ended[0]}", game, rs)
    else:
        if first_tally is not None:
            result = (
                f"第一轮[正午]最高票：{first_tally.out or '无人'}（{first_tally.decided_by}）；"
                f"额外一轮{result}"
            )
        _render(
            report, f"第{number}天结算（{rs.name}）：{result}（{day_tally.decided_by}）", game, rs
        )
        for note in day_tally.notes:
            click.echo(f"计票备注：{note}")
        for detail in day_tally.details:
            click.echo(f"导演备注：{detail}")
    if stale:
        click.echo(f"注意：之后已结算的阶段（{'、'.join(stale)}）已作废，请按顺序重新结算。")


# --------------------------------------------------------------------------- state


@cli.command("state")
@game_command(readonly=True)
@click.option("--phase", default=None, help="看某个阶段之后的状态（night:2、day:3；默认最新）。")
@click.option("--verify", is_flag=True, help="从开局重放日志，核对每个阶段存下的状态。")
@click.option("--json", "as_json", is_flag=True, help="输出 JSON。")
def state_cmd(ctx: GameContext, phase: str | None, verify: bool, as_json: bool) -> None:
    """引擎状态（仅导演可见）：每人的身份牌与存活、当前身份、狼群、警长、状态、技能次数。"""
    rs = _ruleset(ctx)
    if verify:
        try:
            steps = replay(ctx.store, ctx.game, rs)
        except (EngineError, StateError) as exc:
            raise _fail(exc) from exc
        moved = {snap.phase.label: _moved_inputs(ctx, snap) for snap in snapshots(ctx.store)}
        if as_json:
            _echo_json(
                [
                    {"phase": s.phase.label, "same": s.same, "moved": moved.get(s.phase.label, [])}
                    for s in steps
                ]
            )
        for s in steps if not as_json else []:
            click.echo(f"{s.phase.zh}：{'一致' if s.same else '不一致！'}")
            for why in moved.get(s.phase.label, []):
                click.echo(f"  记录已变：{why}")
        if any(not s.same for s in steps):
            raise click.ClickException("重放结果与存下的状态不一致")
        first = next((s.phase for s in steps if moved.get(s.phase.label)), None)
        if first is not None:
            cmd = (
                f"bansha night resolve {ctx.game_path.name} --night {first.number}"
                if first.kind is PhaseKind.NIGHT
                else f"bansha day resolve {ctx.game_path.name} --day {first.number}"
            )
            raise click.ClickException(
                f"存下的状态与它结算时的记录一致，但{first.zh}结算之后记录有变（撤销或新增）："
                f"请从{first.zh}起按顺序重新结算（{cmd}）"
            )
        if not as_json:
            click.echo(f"重放 {len(steps)} 个阶段，全部一致。")
        return
    try:
        if phase is not None:
            snap = snapshot(ctx.store, Phase.parse(phase))
            if snap is None:
                raise click.ClickException(f"没有{Phase.parse(phase).zh}的结算记录")
            state = snap.state
        else:
            latest = latest_snapshot(ctx.store)
            state = latest.state if latest else setup_state(ctx.game, rs)
    except (EngineError, StateError) as exc:
        raise _fail(exc) from exc
    if as_json:
        _echo_json(state.to_dict())
        return
    _render_state(state, rs)


def _holder_zh(state: GameState, holder: str) -> str:
    """Who a status is on, as the director reads it: a player, one of a player's cards, or
    the whole table (holder ``*``: nobody holds it)."""
    if holder == "*":
        return "全场（不属于任何玩家）"
    for p in state.players:
        for i, c in enumerate(p.cards, 1):
            if c.uid == holder:
                return (
                    f"{p.name}的{ZH_ORDINAL.get(i, i)}（{c.name}）"
                    if len(p.cards) > 1
                    else (f"{p.name}（{c.name}）")
                )
    return holder


def _status_line(state: GameState, s: Status) -> str:
    until = "" if s.until is None else f"，至{Phase.from_index(s.until).zh}结束"
    count = "" if s.count is None else f"，剩余{s.count}次"
    return f"{_holder_zh(state, s.holder)}：{s.kind}（来源：{s.source}{until}{count}）"


def _charge_line(state: GameState, rs: Ruleset, ch: Charge) -> str:
    """Whether a skill can still be used: the rule set's own wording first; else 可用 (with
    the count when more than one, and the phase it is usable from when later) or 已用."""
    own = rs.charge_zh(ch)
    if own is not None:
        return own
    if ch.remaining <= 0:
        return "已用"
    left = "可用" if ch.remaining == 1 else f"可用{ch.remaining}次"
    if ch.since > state.phase.index:
        left += f"（{Phase.from_index(ch.since).zh}起）"
    return left


def _moved_inputs(ctx: GameContext, snap: Snapshot) -> list[str]:
    """What changed in the director's records since the phase was resolved: an action removed
    or added (``night remove``, ``night add``/``day add``), a 红牌罚下 in the phase's window
    revoked or given (``card revoke``, ``card give``)."""
    phase = snap.phase
    stored = [Action.from_dict(a) for a in snap.input.get("actions", [])]
    then = {a.ref for a in stored if a.ref.startswith("#")}
    kind = "night" if phase.kind is PhaseKind.NIGHT else "day"
    rows = {f"#{r.id}": r for r in journal_actions(ctx.store, kind, phase.number)}
    out = [f"行动 {ref} 在结算后撤销" for ref in sorted(then - set(rows))]
    out += [
        f"行动 {ref}（{rows[ref].action.describe()}）在结算后记录"
        for ref in sorted(set(rows) - then)
    ]
    if phase.kind is PhaseKind.NIGHT:
        window = _night_window(ctx, phase.number)
    else:
        days = {d.day: d for d in ctx.game.days}
        day = days.get(phase.number)
        window = (day.opens, day.closes) if day is not None else (None, None)
    reds_then = {(a.actor, a.at) for a in stored if a.skill == "红牌罚下"}
    reds_now = {
        (a.actor, a.at)
        for a in _red_card_actions(ctx, snap.state, *window)
        if a.skill == "红牌罚下"
    }
    out += [
        f"{who}的红牌罚下（{at}）在结算后撤销" for who, at in sorted(reds_then - reds_now, key=str)
    ]
    out += [
        f"{who}的红牌罚下（{at}）在结算后记录" for who, at in sorted(reds_now - reds_then, key=str)
    ]
    return out


def _render_state(state: GameState, rs: Ruleset) -> None:
    after = "开局（尚未结算任何阶段）" if state.phase.kind is PhaseKind.SETUP else state.phase.zh
    click.echo(f"引擎状态：{after}之后（{rs.name}）")
    click.echo(f"警长：{state.sheriff or '无'}")
    for p in state.players:
        cards = []
        for i, c in enumerate(p.cards, 1):
            if c.alive:
                mark = "存活"
            elif c.out_cause == "未入场":  # nizhuan: the second card waits for the 逆转轮
                mark = "未入场"
            else:
                mark = f"出局：{c.out_cause}，{Phase.parse(c.out_phase or 'setup').zh}"
            ordinal = f"{ZH_ORDINAL.get(i, i)} " if len(p.cards) > 1 else ""
            cards.append(f"{ordinal}{c.name}（{mark}）")
        cur = p.current
        tags = []
        if cur is not None:
            tags.append(f"当前：{cur.name}")
        else:
            tags.append("已出局")
        if p.wolf_group:
            tags.append("狼群")
        if p.red_carded:
            tags.append("红牌罚下")
        if state.sheriff == p.name:
            tags.append("警长")
        click.echo(f"  {p.name}：{'；'.join(cards)} [{'，'.join(tags)}]")
    active = [s for s in state.statuses if s.until is None or s.until > state.phase.index]
    if active:
        click.echo("状态：")
        for s in active:
            click.echo(f"  {rs.status_zh(s) or _status_line(state, s)}")
    if state.charges:
        click.echo("技能次数：")
        owner = {c.uid: (p.name, c.name) for p in state.players for c in p.cards}
        for ch in state.charges:
            name, card = owner.get(ch.card, (ch.card, ""))
            src = "（馈赠）" if ch.source else ""
            click.echo(f"  {name}的{card}<{ch.skill}>{src}：{_charge_line(state, rs, ch)}")
    if state.winner:
        click.echo(f"胜负：{state.winner}胜利（{state.win_reason}）")
