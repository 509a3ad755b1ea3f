"""Votes, tally and conduct commands: tally, why, flags, cards, card give, vote proxy/modifier,
player out."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from datetime import datetime
from fractions import Fraction
from typing import Any

import click
from click_default_group import DefaultGroup

import pipeline.cli
from engine.cards import Card
from engine.rulesets import get_ruleset
from engine.rulesets.rulebooks import cite
from engine.votes import MODIFIER_ZH, ModifierKind, VerdictStatus
from pipeline.cli import (
    DefaultDay,
    GameContext,
    as_of_option,
    cli,
    day_option,
    default_day,
    default_day_notice,
    game_command,
    resolve_day,
)
from pipeline.cli.zh import ZhChoice
from pipeline.derive import Derivation, derive, flag_decisions, tally_json, write_derivation
from pipeline.derive.flags import card_time
from pipeline.derive.posts import former_account
from pipeline.derive.results import DayResult
from pipeline.derive.undo import revoked_for
from pipeline.game.gamefile import Game
from pipeline.store import Store

STATUS_ZH = {
    VerdictStatus.COUNTED: "有效",
    VerdictStatus.SUPERSEDED: "已改票",
    VerdictStatus.INVALID: "无效",
    VerdictStatus.IGNORED: "不计",
}
KIND_ZH = {
    "vote": "投票",
    "change": "改票",
    "abstain": "弃权",
    "invalid": "无效票",  # as the console and the report say it: a wrong name is no format slip
    "proxy": "代投",
}


def _parse_time(ctx: GameContext, raw: str | None, what: str = "--as-of") -> datetime:
    tz = ctx.game.game.tz
    if raw is None:
        return pipeline.cli.clock(tz)
    return pipeline.cli.time_option(raw, tz, what)


def run_derive(ctx: GameContext, as_of: datetime, *, write: bool = True) -> Derivation:
    """Derive the game as of ``as_of``; write the verdicts back only for the present (``write``):
    a look at a past moment (``--as-of``) must not replace what the store shows now."""
    d = derive(ctx.game, ctx.store, as_of=as_of)
    if write:
        write_derivation(ctx.store, d, now=as_of)
    return d


def _day_or_fail(d: Derivation, day: int) -> Any:
    try:
        return d.day(day)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc


def _when(dt: datetime | None, tz: Any) -> str:
    """A post's time in the game's zone (a post whose time was not read: 时间不明)."""
    return "时间不明" if dt is None else dt.astimezone(tz).strftime("%m-%d %H:%M:%S")


def _votes(value: Fraction) -> str:
    return str(value) if value.denominator == 1 else f"{float(value):g}"


# --------------------------------------------------------------------------- tally


# the command itself is defined in pipeline/cli/tally.py (light: it shows the cycle's stored view
# when that view still holds); this is its full path and the rendering both paths share


@game_command(readonly=True)
def tally_full(ctx: GameContext, day: int | None, as_json: bool, as_of: str | None) -> None:
    """``bansha tally`` derived now (or at ``--as-of``) from the store and the game file."""
    when = _parse_time(ctx, as_of)
    day = resolve_day(ctx, day, when)
    d = run_derive(ctx, when, write=False)
    _day_or_fail(d, day)
    decisions = flag_decisions(ctx.store)
    if as_json:
        out = tally_json_text(d, day, decisions)
    else:
        out = tally_text(ctx.game, d, day, decisions, inquiries_of(ctx.game, ctx.store, d))
    click.echo(out, nl=False)


def tally_json_text(d: Derivation, day: int, decisions: dict[str, dict[str, Any]]) -> str:
    """What ``bansha tally --day N --json`` prints."""
    from pipeline.cli.tallyview import json_printed

    return json_printed(tally_json(d, day, decisions))


#: a day's inquiry threads as ``bansha tally`` reads them: day → the day, or why they cannot
#: be read (Chinese); empty for a rule set without an inquiry thread
Inquiries = Mapping[int, Any] | str


def inquiries_of(game: Game, store: Store, d: Derivation) -> Inquiries:
    """The inquiry threads (zhenyan's 询问帖) of ``d``'s days; {} for a rule set without one
    (nothing more is loaded then)."""
    if get_ruleset(game.game.ruleset).inquiry is None:
        return {}
    from pipeline.derive.inquiry import inquiries_of as read

    return read(game, store, d)


def inquiry_lines(
    inquiries: Inquiries, d: Derivation, day: int, *, player: str | None = None
) -> list[str]:
    """The day's inquiry thread as the director reads it (each line with its post's link);
    [] for a day without one."""
    if not inquiries:
        return []
    from pipeline.derive.inquiry import inquiry_rows

    return [
        f"{text}  {url}" if url else text
        for text, url in inquiry_rows(inquiries, d, day, player=player)
    ]


def tally_text(
    game: Game,
    d: Derivation,
    day: int,
    decisions: dict[str, dict[str, Any]],
    inquiries: Inquiries | None = None,
) -> str:
    """What ``bansha tally --day N`` prints: pure (the derivation, the flags' decisions, the
    inquiry threads read: :func:`inquiries_of`)."""
    res = d.day(day)
    out: list[str] = []
    echo = out.append
    tz = game.game.tz
    echo(f"第 {day} 天投票（{game.game.title}，规则 {game.game.ruleset}）")
    echo(
        f"开门 {_when(res.day.opens, tz)}，关门 {_when(res.day.closes, tz)}；"
        f"警长：{res.sheriff or '无'}；{'已加速' if res.accelerated else '未加速'}"
    )
    ended = d.ended if d.ended_vote(day) else None
    if ended is not None:  # the game ended during the day: its vote is not counted
        out.extend(f"注意：{line}" for line in ended.lines(tz))
    if res.speed is not None:
        echo(f"加速/延时：{res.speed.reason}")
        for player, why, url in res.speed_ignored():
            echo(f"  不计：{player} {why}{f'  {url}' if url else ''}")
    if res.first is not None:
        echo("")
        echo(
            f"第一轮[正午]（太阳[日不落]，第一轮投票帖 {res.first.tid}，"
            f"{_when(res.first.closes, tz)} 结束）："
        )
        _echo_round(echo, res.first.verdicts, res.first.tally, tz, label="第一轮最高票")
        echo("")
        echo(f"额外一轮[正午]（投票帖 {res.day.vote}，只有太阳指定的角色可以投票）：")
    else:
        echo("")
    if not res.verdicts and res.first is not None and d.as_of < res.first.closes:
        echo(f"（额外一轮在 {_when(res.first.closes, tz)} 开始）")
    elif not res.verdicts and not res.crawled:
        echo(f"（第{day}天的帖子尚未抓取：先运行 bansha crawl）")
    elif not res.verdicts:
        echo("（没有投票）")
    _echo_round(echo, res.verdicts, res.tally, tz, label="出局", ended=ended is not None)
    for note in res.notes:
        echo(f"注意：{note}")
    asked = inquiry_lines(inquiries or {}, d, day)
    if asked:
        echo("")
        out.extend(asked)
    flags = [f for f in d.flags if f.day == day]
    if flags:
        echo("")
        echo("违规标记：")
        for f in flags:
            status = decisions.get(f.id, {}).get("status", "待确认")
            echo(f"  [{f.id}] {f.player}：{f.reason}（{STATUS_FLAG.get(status, status)}）")
    return "".join(line + "\n" for line in out)


def store_tally_views(ctx: GameContext, d: Derivation, record: str) -> None:
    """Store what ``bansha tally`` prints for every day of ``d`` (text and JSON, the JSON
    compact) and which day it shows without ``--day``, keyed by the cycle's ``record`` of ``d``
    and the game file as loaded (pipeline/cli/tallyview.py checks the key); a day's row is
    rewritten only when its view changed. Inside the cycle's transaction."""
    from pipeline import code_identity, code_identity_now
    from pipeline.cli import tallyview
    from pipeline.cycle import _game_tids, game_identity
    from pipeline.game.threads import opened_threads, with_opened

    try:
        digest = hashlib.sha256(ctx.game_path.read_bytes()).hexdigest()
    except OSError:
        digest = None
    if digest is None or digest != ctx.game_digest:
        ctx.store.write_tally_views("", {})  # the file changed since it was loaded
        return
    now_game = with_opened(ctx.file_game, opened_threads(ctx.store))
    if game_identity(now_game) != game_identity(ctx.game):
        ctx.store.write_tally_views("", {})  # a thread opened since the game was built
        return
    decisions = flag_decisions(ctx.store)
    sentinel = json.dumps(tallyview.AS_OF)
    inquiries = inquiries_of(ctx.game, ctx.store, d)
    views: dict[int, tuple[str, str | None]] = {}
    for n in sorted(d.days):
        try:
            d.day(n)
        except ValueError:
            continue  # tally says so each time (the full path)
        data = tally_json(d, n, decisions)
        data["as_of"] = tallyview.AS_OF
        compact = tallyview.json_stored(data)  # printed as the full path prints it when read
        as_json = compact if compact.count(sentinel) == 1 else None
        views[n] = (tally_text(ctx.game, d, n, decisions, inquiries), as_json)
    try:
        choice: DefaultDay | None = default_day(ctx.game, d.as_of)
    except click.ClickException:
        choice = None
    key = tallyview.view_key(
        game_path=ctx.game_path,
        game_digest=digest,
        templates=ctx.game.drafts.templates,
        timezone=ctx.game.game.timezone,
        record=record,
        triggers=tallyview.trigger_names(ctx.store.execute),
        tids=_game_tids(ctx.game),
        default_day=choice.day if choice else None,
        default_notice=default_day_notice(choice) if choice else None,
    )
    if code_identity_now() != code_identity():
        ctx.store.write_tally_views("", {})  # bansha's files changed while it rendered
        return
    ctx.store.write_tally_views(key, views)


def _echo_round(
    echo: Any, verdicts: Any, t: Any, tz: Any, *, label: str, ended: bool = False
) -> None:
    """One vote round: every ballot in posting order, then the counts and the result
    (``ended``: the game ended before the vote, which has no result)."""
    for v in verdicts:
        b = v.ballot
        floor = f"{b.evidence.floor}#" if b.evidence.floor else "导演"
        target = b.target or b.target_raw or "—"
        echo(
            f"{floor:>5} {_when(b.evidence.at, tz)} {v.voter_unit or b.voter}"
            f" {KIND_ZH.get(b.kind.value, b.kind.value)}→{target}"
            f"  [{STATUS_ZH[v.status]}] {v.reason}{_note(v)}"
        )
    if t is None:
        return
    echo("")
    echo("票数：")
    for cand in sorted(t.counts, key=lambda c: (-t.counts[c], c)):
        voters = "、".join(t.voters.get(cand, []))
        echo(f"  {cand}：{_votes(t.counts[cand])} 票（{voters}）")
    if t.abstained:
        echo(f"  弃权：{'、'.join(t.abstained)}")
    for voter, why in sorted(t.weight_reasons.items()):
        echo(f"  权重：{voter} {_votes(t.weights[voter])}（{why}）")
    result = (
        f"当选警长：{t.elected or '无人当选'}"
        if t.sheriff_election
        else f"{label}：{t.out or '无人'}"
    )
    if ended:
        echo(f"结果：不结算——游戏已在投票之前结束（按现在的票数{result}，不生效）")
    else:
        echo(f"结果：{result}（{t.decided_by}；依据{cite(t.rule)}）")
    for note in t.notes:
        echo(f"计票备注：{note}")
    for detail in t.details:
        echo(f"导演备注：{detail}")
    if not t.public_counts:
        echo("（本规则集公示时不公布票数，只公布最高票）")


STATUS_FLAG = {"confirmed": "已确认", "dismissed": "已驳回", "待确认": "待确认"}


def _note(v: Any) -> str:
    """The verdict's director-only note, after its public reason (never in a draft)."""
    return f"〔导演备注：{v.note}〕" if v.note else ""


# --------------------------------------------------------------------------- why


@cli.command("why")
@game_command(readonly=True)
@day_option()
@click.option("--player", required=True, help="玩家名字（或别名）。")
@click.option("--json", "as_json", is_flag=True, help="输出 JSON（字段与 tally --json 相同）。")
@as_of_option
def why_cmd(
    ctx: GameContext, day: int | None, player: str, as_of: str | None, as_json: bool
) -> None:
    """解释一位玩家某天的票、发言数和违规标记，每条都附帖子链接。"""
    who = ctx.game.player(player)
    if who is None:
        raise click.ClickException(f"名单中没有玩家「{player}」")
    when = _parse_time(ctx, as_of)
    day = resolve_day(ctx, day, when)
    d = run_derive(ctx, when, write=False)
    res = _day_or_fail(d, day)
    who_day = (ctx.store, ctx.game, who.name, day)
    voters = (who.name, former_account(who.name))  # and the account that left the slot
    if as_json:
        data = tally_json(d, day, flag_decisions(ctx.store))
        name = who.name
        mine = {
            "player": name,
            "votes": [v.to_dict() for v in res.all_verdicts if v.ballot.voter in voters],
            "against": [v.to_dict() for v in res.all_verdicts if v.counts_for == name],
            "post_count": data["post_counts"].get(name),
            "post_exempt": data["post_exempt"].get(name),
            "flags": [f for f in data["flags"] if f["player"] == name],
            "out": (
                {"at": d.outs[name][0].isoformat(), "cause": d.outs[name][1]}
                if name in d.outs
                else None
            ),
            "revoked": revoked_for(*who_day),
        }
        keep = ("game", "ruleset", "day", "as_of", "crawled", "notes")
        click.echo(json.dumps({**{k: data[k] for k in keep}, **mine}, ensure_ascii=False, indent=2))
        return
    tz = ctx.game.game.tz
    name = who.name
    click.echo(f"{name} 第 {day} 天：")
    if not res.crawled:
        note = next((n for n in res.notes if "尚未抓取" in n), f"第{day}天的帖子尚未抓取")
        click.echo(f"  注意：{note}")
    own = [v for v in res.all_verdicts if v.ballot.voter in voters]
    if not own:
        click.echo("  投票：没有找到这位玩家的投票帖")
    for v in own:
        b = v.ballot
        click.echo(
            f"  投票 {b.evidence.describe()} {_when(b.evidence.at, tz)}："
            f"{KIND_ZH.get(b.kind.value, b.kind.value)}→{b.target or b.target_raw or '—'}"
            f" [{STATUS_ZH[v.status]}] {v.reason}（依据{cite(v.rule)}）{_note(v)}"
        )
        click.echo(f"    {b.evidence.url}")
    rounds = [(res.first.verdicts, res.first.tally, "第一轮[正午]")] if res.first else []
    rounds.append((res.verdicts, res.tally, "额外一轮[正午]" if res.first else ""))
    for verdicts, t, label in rounds:
        against = [v for v in verdicts if v.counts_for == name]
        if t is not None and name in t.counts:
            click.echo(
                f"  {label}得票：{_votes(t.counts[name])}（"
                f"{'、'.join(v.voter_unit or v.ballot.voter for v in against)}）"
            )
    _echo_speed(res, voters)
    pc = res.counts.get(name)
    count = pc.count if pc else 0
    click.echo(f"  讨论帖发言：{count} 帖")
    if name in res.post_exempt:
        click.echo(f"    当天不判发言不足：{res.post_exempt[name]}")
    if pc is not None:
        for ev in pc.evidence:
            click.echo(f"    {ev.floor or '?'}# {_when(ev.at, tz)} {ev.url}")
        for pid, reason in pc.excluded:
            click.echo(f"    不计：pid {pid}（{reason}）")
    decisions = flag_decisions(ctx.store)
    for f in d.flags:
        if f.player == name and f.day == day:
            status = decisions.get(f.id, {}).get("status", "待确认")
            click.echo(
                f"  违规 [{f.id}]：{f.reason}"
                f"（{STATUS_FLAG.get(status, status)}；依据{cite(f.rule)}）"
            )
            for ev in f.evidence:
                click.echo(f"    {ev.url}")
    for line in inquiry_lines(inquiries_of(ctx.game, ctx.store, d), d, day, player=name):
        click.echo(f"  {line}")
    if name in d.outs:
        at, cause = d.outs[name]
        click.echo(f"  出局：{_when(at, tz)}（{cause}）")
    click.echo("".join(f"  已撤销（不再参与计票）：{x}\n" for x in revoked_for(*who_day)), nl=False)


def _echo_speed(res: DayResult, voters: tuple[str, ...]) -> None:
    """``bansha why``: the day's speed decision and the player's own requests in the progress
    thread, counted or not (and why not), each with its post's link."""
    if res.speed is None:
        return
    click.echo(f"  加速/延时：{res.speed.reason}")
    for r in res.speed_counted():
        if r.player in voters:
            click.echo(f"    申请{r.kind.zh}：计入  {r.evidence}")
    for player, why, url in res.speed_ignored():
        if player in voters:
            click.echo(f"    不计：{why}{f'  {url}' if url else ''}")


# --------------------------------------------------------------------------- flags


FLAGS_HELP = "违规标记：列出、确认（confirm）、驳回（dismiss）、撤销决定（revoke）。"


@cli.group("flags", cls=DefaultGroup, default="list", default_if_no_args=True, help=FLAGS_HELP)
def flags_group() -> None:
    pass


@flags_group.command("list")
@game_command(readonly=True)
@click.option("--day", type=int, default=None, help="只看这一天。")
@click.option("--json", "as_json", is_flag=True, help="输出 JSON。")
@as_of_option
def flags_list(ctx: GameContext, day: int | None, as_json: bool, as_of: str | None) -> None:
    """列出违规标记（确认后才变成牌）。"""
    d = run_derive(ctx, _parse_time(ctx, as_of), write=False)
    decisions = flag_decisions(ctx.store)
    flags = [f for f in d.flags if day is None or f.day == day]
    if as_json:
        click.echo(
            json.dumps(
                [
                    {**f.to_dict(), "status": decisions.get(f.id, {}).get("status", "open")}
                    for f in flags
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return
    asked = _inquiry_problems(ctx, d, day)
    if not flags:
        click.echo("没有违规标记。")
        click.echo("".join(f"{line}\n" for line in asked), nl=False)
        return
    seat = {p.name: i for i, p in enumerate(ctx.game.players)}
    for f in sorted(flags, key=lambda f: (f.day, seat.get(f.player, len(seat)))):
        dec = decisions.get(f.id)
        status = STATUS_FLAG.get(dec["status"], dec["status"]) if dec else "待确认"
        card = f"，建议{f.card.value}" if f.card else ""
        basis = f"{status}{card}；依据{cite(f.rule)}"
        click.echo(f"[{f.id}] 第{f.day}天 {f.player}：{f.reason}（{basis}）")
        for ev in f.evidence[:5]:
            click.echo(f"    {ev.url}")
    click.echo("".join(f"{line}\n" for line in asked), nl=False)
    if any(f.id not in decisions for f in flags):
        name = ctx.game_path.name
        click.echo(
            f"标记确认后才变成牌：bansha flags confirm {name} 编号，"
            f"或 bansha flags dismiss {name} 编号 --why 理由 驳回。"
        )


def _inquiry_problems(ctx: GameContext, d: Derivation, day: int | None) -> list[str]:
    """``bansha flags``: what the inquiry threads (zhenyan.txt:147) hold for the director
    besides the conduct flags — posts not taken, questions left unanswered, the sheriff's
    breaches — each with its post's link; [] for a game without an inquiry thread."""
    if not any(x.inquiry is not None for x in ctx.game.days):
        return []
    from pipeline.derive.inquiry import inquiry_rows

    inquiries = inquiries_of(ctx.game, ctx.store, d)
    lines: list[str] = []
    for n in sorted(x.day for x in ctx.game.days if day is None or x.day == day):
        if n not in d.days:
            continue
        rows = inquiry_rows(inquiries, d, n, problems_only=True)
        lines += [f"{text}  {url}" if url else text for text, url in rows]
    return lines


def _find_flag(ctx: GameContext, flag_id: str, as_of: str | None) -> dict[str, Any]:
    """The flag as derived now (or at ``--as-of``), else as the last derivation stored it."""
    d = derive(ctx.game, ctx.store, as_of=_parse_time(ctx, as_of))
    for f in d.flags:
        if f.id == flag_id:
            row = f.to_dict()
            row["evidence"] = [e.to_dict() for e in f.evidence]
            return row
    rows = ctx.store.query("SELECT * FROM flags WHERE id = ?", [flag_id])
    if not rows:
        raise click.ClickException(f"没有编号为 {flag_id} 的违规标记（用 bansha flags 查看）")
    row = rows[0]
    row["evidence"] = json.loads(row["evidence"] or "[]")
    return row


def _card_problem(ctx: GameContext, flag: dict[str, Any], colour: Card) -> str | None:
    """Why the rule set's text does not allow ``colour`` for this flag's kind; None if it does."""
    from pipeline.derive.flags import card_problem

    return card_problem(ctx.game, flag, colour)


def _decided(ctx: GameContext, flag_id: str) -> str:
    """Why a decided flag cannot be decided again, and how to take the decision back."""
    return (
        f"标记 {flag_id} 已经处理过；要改变决定，先撤销：bansha flags revoke "
        f"{ctx.game_path.name} {flag_id} --why 理由"
    )


@flags_group.command("confirm")
@game_command
@click.argument("flag_id", metavar="标记编号")
@click.option("--card", "card", default=None, help="给的牌：蓝牌/黄牌/红牌（默认按规则）。")
@as_of_option
def flags_confirm(ctx: GameContext, flag_id: str, card: str | None, as_of: str | None) -> None:
    """确认一条违规标记，并记下相应的牌。"""
    flag = _find_flag(ctx, flag_id, as_of)
    colour = _card(card) if card else (Card.parse(flag["card"]) if flag["card"] else None)
    if colour is None:
        raise click.ClickException("这条标记没有规定的牌，请用 --card 指定：蓝牌/黄牌/红牌")
    if problem := _card_problem(ctx, flag, colour):
        raise click.ClickException(
            f"{problem}。要按别的违规判罚，请驳回这条标记后手动给牌（bansha card give）"
        )
    if ctx.store.execute("SELECT 1 FROM flag_decisions WHERE flag_id = ?", [flag_id]).fetchone():
        raise click.ClickException(_decided(ctx, flag_id))
    moment = datetime.now(ctx.game.game.tz)
    now, at = moment.isoformat(), card_time(ctx.game, flag, moment)
    with ctx.store.atomic():
        ctx.store.insert(
            "flag_decisions",
            [
                {
                    "flag_id": flag_id,
                    "status": "confirmed",
                    "card": colour.value,
                    "why": None,
                    "decided_at": now,
                }
            ],
        )
        ctx.store.insert(
            "card_events",
            [
                {
                    "player": flag["player"],
                    "colour": colour.value,
                    "reason": flag["reason"],
                    "at": at,
                    "source": flag_id,
                    "recorded_at": now,
                }
            ],
        )
    click.echo(
        f"已确认 {flag_id}：{flag['player']} 得到{colour.value}"
        f"（撤销：bansha flags revoke {ctx.game_path.name} {flag_id} --why 理由）"
    )


@flags_group.command("dismiss")
@game_command
@click.argument("flag_id", metavar="标记编号")
@click.option("--why", required=True, help="驳回的理由（会记录下来）。")
@as_of_option
def flags_dismiss(ctx: GameContext, flag_id: str, why: str, as_of: str | None) -> None:
    """驳回一条违规标记（写明理由）。"""
    _find_flag(ctx, flag_id, as_of)
    if ctx.store.execute("SELECT 1 FROM flag_decisions WHERE flag_id = ?", [flag_id]).fetchone():
        raise click.ClickException(_decided(ctx, flag_id))
    ctx.store.insert(
        "flag_decisions",
        [
            {
                "flag_id": flag_id,
                "status": "dismissed",
                "card": None,
                "why": why,
                "decided_at": datetime.now(ctx.game.game.tz).isoformat(),
            }
        ],
    )
    click.echo(f"已驳回 {flag_id}：{why}")


@flags_group.command("revoke")
@game_command
@click.argument("flag_id", metavar="标记编号")
@click.option("--why", required=True, help="撤销的理由（必填，记入审计记录）。")
def flags_revoke(ctx: GameContext, flag_id: str, why: str) -> None:
    """撤销一条标记的决定：确认给的牌一并撤销（台账重算，升级与红牌出局随之撤销），标记回到待确认。"""
    from pipeline.cli.undo import echo_undone
    from pipeline.derive.undo import BY_CLI, UndoError, revoke_flag

    try:
        undone = revoke_flag(
            ctx.game, ctx.store, flag_id, why=why, by=BY_CLI, now=datetime.now(ctx.game.game.tz)
        )
    except UndoError as exc:
        raise click.ClickException(str(exc)) from exc
    echo_undone(ctx, undone)


# --------------------------------------------------------------------------- cards


def _card(raw: str) -> Card:
    try:
        return Card.parse(raw)
    except ValueError as exc:
        raise click.BadParameter(
            f"牌的颜色应为 蓝/黄/红：{raw}", param_hint="--card/--colour"
        ) from exc


@cli.command("cards")
@game_command(readonly=True)
@click.option("--json", "as_json", is_flag=True, help="输出 JSON。")
def cards_cmd(ctx: GameContext, as_json: bool) -> None:
    """牌的台账：每位玩家的蓝/黄/红牌（3 蓝折 1 黄，3 黄折 1 红），红牌出局，阵营判负。"""
    from pipeline.derive.undo import card_rows

    d = derive(ctx.game, ctx.store, as_of=datetime.now(ctx.game.game.tz))
    ledger = d.ledger
    rows = card_rows(ctx.store, ctx.game)
    if as_json:
        data = {**ledger.to_dict(), "records": rows}
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    if not ledger.players:
        click.echo("还没有任何牌。")
    for name, pc in ledger.players.items():
        data = pc.to_dict()
        click.echo(
            f"{name}：蓝 {data.get('blue', 0)}，黄 {data.get('yellow', 0)}，红 {data.get('red', 0)}"
        )
        for line in data.get("history", []):
            click.echo(f"    {line}")
    for line in ledger.escalations:
        click.echo(f"升级：{line}")
    for name, at in ledger.out_by_red.items():
        click.echo(f"红牌出局：{name}（{_when(at, ctx.game.game.tz)}）")
    for loss in ledger.losing_factions:
        click.echo(f"阵营判负：{loss.to_dict().get('reason', loss.faction)}")
    if rows:
        click.echo("")
        click.echo(f"牌的记录（撤销：bansha card revoke {ctx.game_path.name} 编号 --why 理由）：")
    for row in rows:
        tail = f" [已撤销：{row['revoked']}]" if row["revoked"] else ""
        click.echo(f"  {row['line']}{tail}")


@cli.group("card")
def card_group() -> None:
    """手动给牌（give），撤销一张牌（revoke）。"""


@card_group.command("give")
@game_command
@click.option("--player", required=True, help="玩家名字（或别名）。")
@click.option("--colour", "--color", "colour", required=True, help="蓝 / 黄 / 红。")
@click.option("--why", required=True, help="理由（会写进台账和公示）。")
@click.option("--at", "at", default=None, help="生效时间（默认现在）。")
def card_give(ctx: GameContext, player: str, colour: str, why: str, at: str | None) -> None:
    """给一位玩家一张牌（出局的玩家也可以）。"""
    who = ctx.game.player(player)
    if who is None:
        raise click.ClickException(f"名单中没有玩家「{player}」")
    card = _card(colour)
    when = _parse_time(ctx, at, "--at")
    rowid = ctx.store.insert(
        "card_events",
        [
            {
                "player": who.name,
                "colour": card.value,
                "reason": why,
                "at": when.isoformat(),
                "source": "导演",
                "recorded_at": datetime.now(ctx.game.game.tz).isoformat(),
            }
        ],
    )
    click.echo(f"已记录：{who.name} {card.value}（{why}）{_undo_hint(ctx, 'card', rowid)}")


@card_group.command("revoke")
@game_command
@click.argument("card_id", type=int, metavar="编号")
@click.option("--why", required=True, help="撤销的理由（必填，记入审计记录）。")
def card_revoke(ctx: GameContext, card_id: int, why: str) -> None:
    """撤销一张牌（编号见 bansha cards）：台账重算，升级与红牌出局随之撤销。

    来自违规标记的牌连同标记的确认一起撤销，标记回到待确认。"""
    from pipeline.cli.undo import echo_undone
    from pipeline.derive.undo import BY_CLI, UndoError, revoke_card

    try:
        undone = revoke_card(
            ctx.game, ctx.store, card_id, why=why, by=BY_CLI, now=datetime.now(ctx.game.game.tz)
        )
    except UndoError as exc:
        raise click.ClickException(str(exc)) from exc
    echo_undone(ctx, undone)


def _undo_hint(ctx: GameContext, kind: str, row_id: Any) -> str:
    """How to take a record back, said when it is recorded."""
    if kind == "card":
        return (
            f"（编号 {row_id}；撤销：bansha card revoke {ctx.game_path.name} {row_id} --why 理由）"
        )
    return f"（编号 {row_id}；撤销：bansha undo {kind} {ctx.game_path.name} {row_id} --why 理由）"


# --------------------------------------------------------------------------- journal


@cli.group("vote")
def vote_group() -> None:
    """导演记录的投票信息：代投（proxy）、票权修正（modifier）、警长（sheriff）、加速（speed）。"""


@vote_group.command("proxy")
@game_command
@click.option("--day", type=int, required=True, help="第几天。")
@click.option("--voter", required=True, help="被代投的玩家。")
@click.option(
    "--target",
    required=True,
    help="投票对象（玩家名，或 弃权；逆转时空按身份写：X的第二身份 或 X#2）。",
)
@click.option("--at", "at", required=True, help="代投的时间（ISO 8601，带时区）。")
def vote_proxy(ctx: GameContext, day: int, voter: str, target: str, at: str) -> None:
    """记录一次代投（与玩家自己投票一样受截止时间和改票规则约束）。"""
    who = ctx.game.player(voter)
    if who is None:
        raise click.ClickException(f"名单中没有玩家「{voter}」")
    rs = get_ruleset(ctx.game.game.ruleset)
    name = "弃权"
    if target != "弃权":
        # a roster name as written first (a forum name may end in "#2"), then a card label
        # (nizhuan.txt:196 投票对象：傻树的第一身份)
        bare, card = (target, None) if ctx.game.player(target) else rs.split_target(target)
        player = ctx.game.player(bare)
        if player is None:
            raise click.ClickException(f"投票对象「{target}」不在名单中")
        name = rs.unit_label(player.name, card)
    if not any(d.day == day for d in ctx.game.days):
        raise click.ClickException(f"游戏文件中没有第 {day} 天")
    when = _parse_time(ctx, at, "--at")
    rowid = ctx.store.insert(
        "journal_proxy_votes",
        [
            {
                "day": day,
                "voter": who.name,
                "target": name,
                "at": when.isoformat(),
                "note": None,
                "recorded_at": datetime.now(ctx.game.game.tz).isoformat(),
            }
        ],
    )
    click.echo(
        f"已记录代投：第{day}天 {who.name} → {name}（{_when(when, ctx.game.game.tz)}）"
        + _undo_hint(ctx, "proxy", rowid)
    )


@vote_group.command("modifier")
@game_command
@click.option("--day", type=int, required=True, help="第几天。")
@click.option("--player", required=True, help="受影响的玩家。")
@click.option(
    "--kind",
    type=ZhChoice({k.value: (MODIFIER_ZH[k.value],) for k in ModifierKind}),
    required=True,
    help="得票加：得票+N（诽谤）；票权改为：票权=N（迷魂 0）；票权加：票权+N（独裁）；"
    "不能投票；不能改票；不能被投出；平票时出局（高僧）；技能最高票；"
    "平票时投票出局作废（替罪羊）；须在开门前投票：开门前未投则弃权（狂躁）。"
    "也可以写英文（weight_add、weight_set、voter_add、no_vote、no_change、block_out、"
    "tie_taker、force_top、void_on_tie、before_open，依次对应）。",
)
@click.option("--value", default="0", help="数值（可写分数，如 1 或 3/2）。")
@click.option("--source", default="", help="来源，如 乌鸦[诽谤]。")
def vote_modifier(
    ctx: GameContext, day: int, player: str, kind: str, value: str, source: str
) -> None:
    """记录技能或状态对当天投票的影响（夜晚结算完成后由引擎自动填写）。"""
    who = ctx.game.player(player)
    if who is None:
        raise click.ClickException(f"名单中没有玩家「{player}」")
    try:
        Fraction(value)
    except ValueError as exc:
        raise click.BadParameter(f"数值应为整数或分数：{value}", param_hint="--value") from exc
    rowid = ctx.store.insert(
        "journal_modifiers",
        [
            {
                "day": day,
                "player": who.name,
                "kind": kind,
                "value": value,
                "source": source,
                "recorded_at": datetime.now(ctx.game.game.tz).isoformat(),
            }
        ],
    )
    what = MODIFIER_ZH.get(kind, kind)
    amount = f" {value}" if kind in ("weight_add", "weight_set", "voter_add") else ""
    why = f"（{source}）" if source else ""
    click.echo(
        f"已记录：第{day}天 {who.name}：{what}{amount}{why}" + _undo_hint(ctx, "modifier", rowid)
    )


@vote_group.command("sheriff")
@game_command
@click.option(
    "--from-day", "from_day", type=click.IntRange(min=0), required=True, help="从第几天起。"
)
@click.option("--player", default="", help="警长（留空表示没有警长，如撕警徽）。")
def vote_sheriff(ctx: GameContext, from_day: int, player: str) -> None:
    """指定警长（移交警徽、撕警徽时使用；第一天竞选的结果会自动生效）。

    从这一天起生效，之后的每一天都沿用，直到下一次记录、竞选或引擎结算的移交；
    这一天还不在游戏文件中也可以记录，加入后即生效。"""
    name = ""
    if player:
        who = ctx.game.player(player)
        if who is None:
            raise click.ClickException(f"名单中没有玩家「{player}」")
        name = who.name
    _setting(ctx, f"sheriff:{from_day}", name)
    days = sorted(d.day for d in ctx.game.days)
    later = [n for n in days if n >= from_day]
    if not later:
        when = f"游戏文件中还没有第{from_day}天及以后的天，加入后从第{from_day}天起生效"
    elif later[0] != from_day:
        when = f"游戏文件中没有第{from_day}天，从第{later[0]}天起生效"
    else:
        when = f"第{from_day}天起生效"
    click.echo(
        f"已记录：第{from_day}天起警长为 {name or '无'}（{when}，"
        "之后每天沿用，直到下一次移交、竞选或引擎结算的变更；"
        f"撤销：bansha undo sheriff {ctx.game_path.name} --from-day {from_day} --why 理由）"
    )


#: ``vote speed --mode``: each mode and the words of the rule texts for it (m209.txt:591-593
#: 「申请加速或延时……延迟成功时，不再视为"执行加速"状态」: a 延时 day is not accelerated)
SPEED_WORDS = {
    "accelerate": ("加速",),
    "normal": ("不加速", "延时", "延迟"),
    "auto": ("按申请计算", "自动"),
}


@vote_group.command("speed")
@game_command
@click.option("--day", type=int, required=True, help="第几天。")
@click.option(
    "--mode",
    type=ZhChoice(SPEED_WORDS),
    required=True,
    help="加速；不加速（延时成功也写它：不再视为执行加速；也可写 延时、延迟）；"
    "按申请计算（撤掉导演的裁定，按申请人数计算；也可写 自动）。"
    "也可以写英文 accelerate、normal、auto。",
)
def vote_speed(ctx: GameContext, day: int, mode: str) -> None:
    """导演裁定当天是否加速（覆盖按申请人数的计算）。"""
    if mode == "auto":
        with ctx.store.atomic():  # the write lock first, like every other journal write
            ctx.store.execute("DELETE FROM journal_settings WHERE key = ?", [f"speed:{day}"])
    else:
        _setting(ctx, f"speed:{day}", mode)
    undo = (
        f"（撤销：bansha undo speed {ctx.game_path.name} --day {day} --why 理由）"
        if mode != "auto"
        else ""
    )
    click.echo(
        f"已记录：第{day}天 {dict(accelerate='加速', normal='不加速', auto='按申请计算')[mode]}"
        + undo
    )


def _setting(ctx: GameContext, key: str, value: str) -> None:
    with ctx.store.atomic():
        ctx.store.execute(
            "INSERT INTO journal_settings(key, value, recorded_at) VALUES (?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
            "recorded_at = excluded.recorded_at",
            [key, value, datetime.now(ctx.game.game.tz).isoformat()],
        )


@cli.group("player")
def player_group() -> None:
    """导演记录的玩家信息。"""


@player_group.command("out")
@game_command
@click.option("--player", required=True, help="出局的玩家。")
@click.option("--at", "at", required=True, help="出局时间（ISO 8601，带时区）。")
@click.option("--cause", required=True, help="原因，如 第2夜被刀。")
def player_out(ctx: GameContext, player: str, at: str, cause: str) -> None:
    """记录玩家出局（夜晚出局等；投票出局和红牌出局会自动推出）。"""
    who = ctx.game.player(player)
    if who is None:
        raise click.ClickException(f"名单中没有玩家「{player}」")
    when = _parse_time(ctx, at, "--at")
    rowid = ctx.store.insert(
        "journal_outs",
        [
            {
                "player": who.name,
                "at": when.isoformat(),
                "cause": cause,
                "recorded_at": datetime.now(ctx.game.game.tz).isoformat(),
            }
        ],
    )
    click.echo(
        f"已记录：{who.name} 于 {_when(when, ctx.game.game.tz)} 出局（{cause}）"
        + _undo_hint(ctx, "out", rowid)
    )


@player_group.command("substitute")
@game_command
@click.option("--player", required=True, help="被替换的玩家（游戏文件中的名字）。")
@click.option("--uid", type=int, required=True, help="替补的论坛账号 uid。")
@click.option("--name", "account", required=True, help="替补的论坛用户名。")
@click.option("--at", "at", required=True, help="从何时起由替补上场（ISO 8601，带时区）。")
def player_substitute(ctx: GameContext, player: str, uid: int, account: str, at: str) -> None:
    """记录替补：从某时起，这个账号代替该玩家参加游戏（发言、投票都算在该玩家名下）。"""
    who = ctx.game.player(player)
    if who is None:
        raise click.ClickException(f"名单中没有玩家「{player}」")
    if uid <= 0:
        raise click.BadParameter("uid 应为正整数", param_hint="--uid")
    taken = {p.uid: p.name for p in ctx.game.players}
    if uid in taken and taken[uid] != who.name:
        raise click.ClickException(f"uid {uid} 是玩家「{taken[uid]}」的账号，不能作为替补")
    when = _parse_time(ctx, at, "--at")
    rowid = ctx.store.insert(
        "journal_substitutions",
        [
            {
                "player": who.name,
                "uid": uid,
                "name": account,
                "from_at": when.isoformat(),
                "recorded_at": datetime.now(ctx.game.game.tz).isoformat(),
            }
        ],
    )
    click.echo(
        f"已记录替补：{_when(when, ctx.game.game.tz)} 起由 {account}（uid {uid}）代替 {who.name}"
        + _undo_hint(ctx, "substitute", rowid)
    )
