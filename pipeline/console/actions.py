"""What the console does besides drafts: flag decisions, ``why`` (with a BBCode answer for a
disputing player), and night actions (record, preview, resolve).

Flag decisions write what ``bansha flags confirm`` / ``dismiss`` write (a ``flag_decisions``
row; a confirmed flag's card in ``card_events``), in one transaction, so two tabs cannot decide
one flag twice. Night actions are checked by the same code as ``bansha night add``
(:func:`pipeline.cli.engine._action_from_options`) and resolved as ``bansha night resolve``
does; a preview runs the engine without storing anything.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engine.cards import Card
from engine.kernel import EngineError, Report
from engine.rulesets.rulebooks import cite
from engine.state import Phase, StateError
from pipeline.drafts import bbcode_escape
from pipeline.game.gamefile import Game
from pipeline.store import Store

if TYPE_CHECKING:  # the derivation is imported where a flag or a day's verdicts are read
    from engine.votes import Tally, VoteVerdict
    from pipeline.derive import DayResult, Derivation

__all__ = [
    "ActionError",
    "NightPreview",
    "WhyView",
    "add_night_action",
    "confirm_flag",
    "dismiss_flag",
    "night_preview",
    "remove_night_action",
    "resolve_night",
    "why_bbcode",
    "why_view",
]

FLAG_STATUS_ZH = {"open": "待确认", "confirmed": "已确认", "dismissed": "已驳回"}
STATUS_ZH = {"counted": "有效", "superseded": "已改票", "invalid": "无效", "ignored": "不计"}
KIND_ZH = {
    "vote": "投票",
    "change": "改票",
    "abstain": "弃权",
    "invalid": "无效票",
    "proxy": "代投",
}


class ActionError(ValueError):
    """Something the director asked for that cannot be done (message in Chinese)."""


# --------------------------------------------------------------------------- flags


def find_flag(game: Game, store: Store, flag_id: str, as_of: datetime) -> dict[str, Any]:
    """The flag as derived now, else as the last derivation stored it."""
    from pipeline.derive import derive  # loaded at the first flag the console looks up

    d = derive(game, store, as_of=as_of)
    for f in d.flags:
        if f.id == flag_id:
            row = f.to_dict()
            row["evidence"] = [e.to_dict() for e in f.evidence]
            return row
    rows = list(store.db.query("SELECT * FROM flags WHERE id = ?", [flag_id]))
    if not rows:
        raise ActionError(f"没有编号为 {flag_id} 的违规标记")
    row = dict(rows[0])
    row["evidence"] = json.loads(row["evidence"] or "[]")
    return row


def _decided(store: Store, flag_id: str) -> bool:
    return bool(
        store.db.execute("SELECT 1 FROM flag_decisions WHERE flag_id = ?", [flag_id]).fetchone()
    )


def confirm_flag(
    game: Game,
    store: Store,
    flag_id: str,
    *,
    card: str | None,
    now: datetime,
    as_of: datetime | None = None,
) -> str:
    """Confirm a flag and record its card (the rule set's, or ``card``); returns what was done."""
    flag = find_flag(game, store, flag_id, as_of or now)
    try:
        colour = Card.parse(card) if card else (Card.parse(flag["card"]) if flag["card"] else None)
    except ValueError as exc:
        raise ActionError(f"牌的颜色应为 蓝牌/黄牌/红牌：{card}") from exc
    if colour is None:
        raise ActionError("这条标记没有规定的牌，请选择给哪一种牌：蓝牌/黄牌/红牌")
    from pipeline.derive.flags import card_problem, card_time

    if problem := card_problem(game, flag, colour):
        raise ActionError(problem)

    stamp, at = now.isoformat(), card_time(game, flag, now)
    try:
        with store.atomic():
            if _decided(store, flag_id):
                raise ActionError(f"标记 {flag_id} 已经处理过")
            store.db.table("flag_decisions").insert(
                {
                    "flag_id": flag_id,
                    "status": "confirmed",
                    "card": colour.value,
                    "why": None,
                    "decided_at": stamp,
                }
            )
            store.db.table("card_events").insert(
                {
                    "player": flag["player"],
                    "colour": colour.value,
                    "reason": flag["reason"],
                    "at": at,
                    "source": flag_id,
                    "recorded_at": stamp,
                }
            )
    except sqlite3.IntegrityError as exc:
        raise ActionError(f"标记 {flag_id} 已经处理过") from exc
    return f"已确认 {flag_id}：{flag['player']} 得到{colour.value}"


def dismiss_flag(
    game: Game,
    store: Store,
    flag_id: str,
    *,
    why: str,
    now: datetime,
    as_of: datetime | None = None,
) -> str:
    why = why.strip()
    if not why:
        raise ActionError("驳回违规标记必须写明理由")
    find_flag(game, store, flag_id, as_of or now)
    try:
        with store.atomic():
            if _decided(store, flag_id):
                raise ActionError(f"标记 {flag_id} 已经处理过")
            store.db.table("flag_decisions").insert(
                {
                    "flag_id": flag_id,
                    "status": "dismissed",
                    "card": None,
                    "why": why,
                    "decided_at": now.isoformat(),
                }
            )
    except sqlite3.IntegrityError as exc:
        raise ActionError(f"标记 {flag_id} 已经处理过") from exc
    return f"已驳回 {flag_id}：{why}"


# --------------------------------------------------------------------------- why


@dataclass
class WhyView:
    """One player's day: votes, votes received, posts, flags, out — every line with a link."""

    player: str
    day: int
    crawled: bool
    votes: list[dict[str, Any]] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0
    exempt: str | None = None
    posts: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[tuple[int, str]] = field(default_factory=list)
    flags: list[dict[str, Any]] = field(default_factory=list)
    out: tuple[datetime, str] | None = None
    bbcode: str = ""


def _fmt(dt: datetime | None, game: Game) -> str:
    """A post's time in the game's zone (a post whose time was not read: 时间不明)."""
    return "时间不明" if dt is None else dt.astimezone(game.game.tz).strftime("%m-%d %H:%M:%S")


def _votes(value: Any) -> str:
    return str(value) if value.denominator == 1 else f"{float(value):g}"


def why_view(game: Game, d: Derivation, store: Store, day: int, player: str) -> WhyView:
    """What ``bansha why --day N --player P`` says, as data for the page."""
    who = game.player(player)
    if who is None:
        raise ActionError(f"名单中没有玩家「{player}」")
    try:
        res = d.day(day)
    except ValueError as exc:
        raise ActionError(str(exc)) from exc
    from pipeline.derive.posts import former_account  # with the derivation, where it is read

    name = who.name
    voters = (name, former_account(name))  # and the account that left the slot to a 替补
    view = WhyView(player=name, day=day, crawled=res.crawled)
    for v in res.all_verdicts:
        b = v.ballot
        if b.voter not in voters:
            continue
        view.votes.append(
            {
                "where": b.evidence.describe(),
                "floor": b.evidence.floor,
                "at": _fmt(b.evidence.at, game),
                "kind": KIND_ZH.get(b.kind.value, b.kind.value),
                "target": b.target or b.target_raw or "—",
                "status": STATUS_ZH.get(v.status.value, v.status.value),
                "reason": v.reason,
                "rule": v.rule,
                "note": v.note,
                "url": b.evidence.url,
            }
        )
    rounds: list[tuple[tuple[VoteVerdict, ...], Tally | None, str]] = (
        [(res.first.verdicts, res.first.tally, "第一轮[正午]")] if res.first else []
    )
    rounds.append((res.verdicts, res.tally, "额外一轮[正午]" if res.first else ""))
    for verdicts, t, label in rounds:
        if t is not None and name in t.counts:
            against = [v.voter_unit or v.ballot.voter for v in verdicts if v.counts_for == name]
            view.received.append(
                {"label": label, "votes": _votes(t.counts[name]), "voters": "、".join(against)}
            )
    pc = res.counts.get(name)
    view.count = pc.count if pc else 0
    view.exempt = res.post_exempt.get(name)
    if pc is not None:
        view.posts = [
            {"floor": ev.floor, "at": _fmt(ev.at, game), "url": ev.url} for ev in pc.evidence
        ]
        view.excluded = list(pc.excluded)
    from pipeline.derive import flag_decisions

    decisions = flag_decisions(store)
    for f in d.flags:
        if f.player == name and f.day == day:
            status = decisions.get(f.id, {}).get("status", "open")
            view.flags.append(
                {
                    "id": f.id,
                    "reason": f.reason,
                    "rule": f.rule,
                    "status": status,
                    "status_zh": FLAG_STATUS_ZH.get(status, status),
                    "urls": [e.url for e in f.evidence],
                }
            )
    if name in d.outs:
        view.out = d.outs[name]
    view.bbcode = why_bbcode(game, res, view)
    return view


def why_bbcode(game: Game, res: DayResult, view: WhyView) -> str:
    """An answer the director can paste for a disputing player: their votes with the verdict,
    reason and rule, their post count, and the flags the director confirmed. Nothing
    director-only (no verdict note, no open flag), nothing about others' votes (m209 does not
    publish counts, m209.txt:167; zhenyan not the voters, zhenyan.txt:37). Every value is
    escaped (:func:`pipeline.drafts.bbcode_escape`)."""
    e = bbcode_escape
    lines = [f"[b]{e(view.player)} 第{view.day}天的判定[/b]"]
    if not view.votes:
        lines.append("投票：没有找到这位玩家的投票帖")
    for v in view.votes:
        where = f"{v['floor']}#" if v["floor"] else "导演记录"
        link = f"[url={v['url']}]{where}[/url]" if v["url"].startswith("http") else e(where)
        lines.append(
            f"{link} {e(v['at'])} {e(v['kind'])}→{e(v['target'])}：{e(v['status'])}"
            f"（{e(v['reason'])}；依据{e(cite(v['rule']))}）"
        )
    if res.day.discussion is not None:
        exempt = f"（当天不判发言不足：{e(view.exempt)}）" if view.exempt else ""
        lines.append(f"讨论帖发言：{view.count} 帖{exempt}")
    for f in view.flags:
        if f["status"] == "confirmed":
            lines.append(f"违规：{e(f['reason'])}（依据{e(cite(f['rule']))}）")
    return "\n".join(lines)


# --------------------------------------------------------------------------- night


@dataclass
class NightPreview:
    report: Report | None
    error: str | None
    resolved_at: str | None  # when this night was last resolved and stored


def _click_message(exc: Exception) -> str:
    return str(getattr(exc, "message", None) or exc)


def add_night_action(
    ctx: Any,
    night: int,
    *,
    actor: str,
    skill: str,
    targets: Sequence[str],
    choice: str | None,
    card: str | None,
    at: str | None,
    now: datetime,
    late: bool = False,
) -> int:
    """Record one night action, checked as ``bansha night add`` checks it: one sent after its
    行动时限 is refused unless the director accepts it late (``late``, noted on the record)."""
    import click

    from pipeline.cli.engine import _action_from_options, _ruleset, night_lateness
    from pipeline.game.journal import JournalError, add_action

    if night < 0:
        raise ActionError("第几晚不能为负数")
    if not actor.strip() or not skill.strip():
        raise ActionError("请写明发动者和技能")
    try:
        rs = _ruleset(ctx)
        action = _action_from_options(
            ctx,
            rs,
            actor,
            skill.strip(),
            tuple(t for t in targets if t.strip()),
            choice or None,
            card or None,
            at or None,
        )
        lateness = night_lateness(ctx, rs, night, action)
        if lateness is not None and not late:
            raise ActionError(f"{lateness}；未记录。导演决定仍然接受的，勾选「逾时仍然接受」")
        return add_action(
            ctx.store, "night", night, action, source="console", recorded_at=now, late=lateness
        )
    except (click.ClickException, JournalError) as exc:
        raise ActionError(_click_message(exc)) from exc


def remove_night_action(
    ctx: Any, action_id: int, *, now: datetime, why: str | None = None
) -> list[str]:
    """``bansha night remove`` from the console (recorded as 控制台, with ``why``); returns
    what to tell the director (the phases to resolve again among it)."""
    from pipeline.derive.undo import BY_CONSOLE, UndoError, remove_action

    try:
        undone = remove_action(ctx.game, ctx.store, action_id, why=why, by=BY_CONSOLE, now=now)
    except UndoError as exc:
        raise ActionError(str(exc)) from exc
    return undone.lines(ctx.game_path.name)


def _night_inputs(ctx: Any, night: int) -> tuple[Any, Any, list[Any]]:
    from pipeline.cli.engine import _night_window, _red_card_actions, _ruleset
    from pipeline.game.journal import journal_actions, state_before

    rs = _ruleset(ctx)
    state = state_before(ctx.store, ctx.game, rs, Phase.night(night))
    actions = [r.action for r in journal_actions(ctx.store, "night", night)]
    actions += _red_card_actions(ctx, state, *_night_window(ctx, night))
    return rs, state, actions


def night_preview(ctx: Any, night: int) -> NightPreview:
    """The night resolved from what is recorded now, without storing anything."""
    import click

    from engine.kernel import resolve_night as engine_resolve_night
    from pipeline.game.journal import snapshot

    snap = snapshot(ctx.store, Phase.night(night))
    resolved_at = snap.resolved_at if snap is not None else None
    try:
        rs, state, actions = _night_inputs(ctx, night)
        _state, report = engine_resolve_night(state, actions, rs, night=night)
    except (click.ClickException, EngineError, StateError) as exc:
        return NightPreview(None, _click_message(exc), resolved_at)
    return NightPreview(report, None, resolved_at)


def resolve_night(ctx: Any, night: int, *, now: datetime) -> list[str]:
    """Resolve the night and store its snapshot (``bansha night resolve``); returns the later
    phases that were resolved before and must be resolved again."""
    import click

    from engine.kernel import resolve_night as engine_resolve_night
    from pipeline.cli.engine import _refuse_after_pending
    from pipeline.game.journal import save_snapshot

    try:
        _refuse_after_pending(ctx, Phase.night(night))  # the day before waits for a decision
        rs, state, actions = _night_inputs(ctx, night)
        new_state, report = engine_resolve_night(state, actions, rs, night=night)
    except (click.ClickException, EngineError, StateError) as exc:
        raise ActionError(_click_message(exc)) from exc
    return save_snapshot(
        ctx.store,
        Phase.night(night),
        {"actions": [a.to_dict() for a in actions]},
        new_state,
        report,
        resolved_at=now,
    )


def players_of(game: Game) -> list[str]:
    return [p.name for p in game.players]


def form_list(form: Mapping[str, Any] | None, key: str) -> list[str]:
    if form is None:
        return []
    getlist = getattr(form, "getlist", None)
    values = getlist(key) if getlist else [form.get(key)]
    return [str(v) for v in values if v is not None and str(v).strip()]
