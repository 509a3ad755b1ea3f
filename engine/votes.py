"""Vote validity (the day's timeline) and the tally, for all five rule sets. Pure.

The pipeline parses the vote thread's posts (and the director's journal of 代投) into
:class:`Ballot` values; :func:`judge_ballots` walks them in post order and gives each a
:class:`VoteVerdict` with a Chinese reason and the rule applied; :func:`tally` counts the counted
verdicts with exact weights and lets the rule set decide who is out (or elected sheriff).

Nothing here reads the clock, the disk or the network: every time is an argument. Ballots are
always sorted by (time, pid) first, so the order they were stored in never matters.

Rule references are ``"<file>:<line>"`` into the rule texts (see ``engine.rulesets``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from fractions import Fraction
from typing import Any

from engine.ballots import (
    ABSTAIN_WORD,
    MODIFIER_ZH,
    PROXY_SLOT,
    Ballot,
    BallotKind,
    Evidence,
    ModifierKind,
    PlayerStatus,
    VoteModifier,
)
from engine.rulesets import CountSheet, Ruleset
from engine.rulesets.base import zh_votes

__all__ = [
    "EDITED_NOTE",
    "MODIFIER_ZH",
    "Ballot",
    "BallotKind",
    "DayContext",
    "Evidence",
    "ModifierKind",
    "PlayerStatus",
    "Tally",
    "VerdictStatus",
    "VoteModifier",
    "VoteVerdict",
    "judge_ballots",
    "tally",
    "tally_votes",
]

EDITED_NOTE = "该帖被编辑过，以截止前首次抓取的版本为准"


# --- input ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DayContext:
    """Everything about the day the verdicts depend on. Times are timezone-aware.

    ``accelerated``: the acceleration that forbids changes is in force (二段加速).
    ``sheriff_election``: the day's vote elects the sheriff (day 1 where the rule set has one).
    ``closed_early``: the day's acts closed it before ``closes`` (a rule set's
    ``timed_close``) — ``(when, why, rule)``: a ballot after ``when`` is refused with ``why``;
    the hour before ``closes`` stays the last hour (nobody knew the day would close sooner).
    """

    day: int
    opens: datetime
    closes: datetime
    players: tuple[PlayerStatus, ...]
    sheriff: str | None = None
    accelerated: bool = False
    sheriff_election: bool = False
    modifiers: tuple[VoteModifier, ...] = ()
    closed_early: tuple[datetime, str, str] | None = None
    #: the rule set's id (engine.rulesets); keyword-only and required
    ruleset: str = field(kw_only=True)

    def __post_init__(self) -> None:
        for label, t in (("开门时间", self.opens), ("关门时间", self.closes)):
            if t.tzinfo is None or t.utcoffset() is None:
                raise ValueError(f"第{self.day}天的{label}缺少时区：{t.isoformat()}")
        if self.closes <= self.opens:
            raise ValueError(
                f"第{self.day}天的关门时间（{self.closes.isoformat()}）"
                f"不晚于开门时间（{self.opens.isoformat()}）"
            )


# --- output --------------------------------------------------------------------------------


class VerdictStatus(StrEnum):
    COUNTED = "counted"
    SUPERSEDED = "superseded"  # counted once, then replaced by a valid change
    INVALID = "invalid"
    IGNORED = "ignored"  # not a vote that matters (a repeated fresh vote, a non-player's post)


@dataclass(frozen=True, slots=True)
class VoteVerdict:
    """A ballot's verdict. ``reason`` is public (a draft for the players' thread may quote it):
    it names no floor and no pid, so it reads the same after a delete renumbers the floors.
    ``note`` is for the director only (floors, pids, what to check): the console and the CLI
    show it, a draft never does."""

    ballot: Ballot
    status: VerdictStatus
    reason: str  # Chinese, never empty; public
    counts_for: str | None  # the candidate a COUNTED ballot counts for (None: 弃权 / not counted)
    rule: str  # "file:line" of the rule applied
    #: the voter as counted (a card label where cards vote); None: 非玩家
    voter_unit: str | None = None
    target_unit: str | None = None  # the resolved target of a counted/superseded ballot
    note: str = ""  # Chinese, director only; "" when there is nothing more to say

    @property
    def abstained(self) -> bool:
        return self.status is VerdictStatus.COUNTED and self.counts_for is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "voter": self.voter_unit or self.ballot.voter,
            "status": self.status.value,
            "counts_for": self.counts_for,
            "target": self.target_unit,
            "abstain": self.abstained,
            "reason": self.reason,
            "note": self.note,
            "rule": self.rule,
            "ballot": self.ballot.to_dict(),
        }


def _frac(value: Fraction) -> dict[str, Any]:
    return {"votes": str(value), "value": float(value)}


@dataclass(frozen=True)
class Tally:
    """The day's count and decision. Every weight is an exact Fraction."""

    day: int
    ruleset: str
    sheriff_election: bool
    counts: dict[str, Fraction]  # candidate → votes (弃权 is not a candidate)
    voters: dict[str, list[str]]  # candidate → voters, in post order
    weights: dict[str, Fraction]  # voter → the weight their counted ballot carried
    weight_reasons: dict[str, str]  # voter → why the weight is not 1 (Chinese)
    abstained: list[str]
    total: Fraction  # every counted vote, abstentions included
    top: list[str]
    tie: list[str]
    out: str | None
    elected: str | None
    decided_by: str
    rule: str
    public_counts: bool
    public_voters: bool
    sheriff: str | None
    sheriff_vote: str | None
    notes: list[str] = field(default_factory=list)  # a result draft may say them
    details: list[str] = field(default_factory=list)  # the director's only (posts, times)

    def to_dict(self) -> dict[str, Any]:
        ordered = sorted(self.counts, key=lambda c: (-self.counts[c], c))
        return {
            "day": self.day,
            "ruleset": self.ruleset,
            "sheriff_election": self.sheriff_election,
            "counts": [
                {"candidate": c, **_frac(self.counts[c]), "voters": list(self.voters.get(c, []))}
                for c in ordered
            ],
            "abstained": list(self.abstained),
            "weights": [
                {
                    "voter": v,
                    "weight": str(self.weights[v]),
                    "value": float(self.weights[v]),
                    "why": self.weight_reasons.get(v, ""),
                }
                for v in sorted(self.weights)
            ],
            "total": _frac(self.total),
            "top": list(self.top),
            "tie": list(self.tie),
            "out": self.out,
            "elected": self.elected,
            "decided_by": self.decided_by,
            "rule": self.rule,
            "public_counts": self.public_counts,
            "public_voters": self.public_voters,
            "sheriff": self.sheriff,
            "sheriff_vote": self.sheriff_vote,
            "notes": list(self.notes),
            "details": list(self.details),
        }


# --- the roster ----------------------------------------------------------------------------


class _Roster:
    """Players (or cards) of the day, keyed by the unit they are counted under."""

    def __init__(self, ctx: DayContext, rs: Ruleset) -> None:
        self.rs = rs
        self.units: dict[str, PlayerStatus] = {}
        self.by_name: dict[str, list[PlayerStatus]] = {}
        for ps in ctx.players:
            unit = rs.unit_label(ps.name, ps.card)
            if unit in self.units:
                raise ValueError(f"名单中重复出现：{unit}")
            self.units[unit] = ps
            self.by_name.setdefault(ps.name, []).append(ps)
        for entries in self.by_name.values():
            entries.sort(key=lambda p: p.card or 0)

    def unit_of(self, ps: PlayerStatus) -> str:
        return self.rs.unit_label(ps.name, ps.card)

    def resolve(self, name: str) -> str | None:
        """A unit label or a player's name (→ the player's highest card in play)."""
        if name in self.units:
            return name
        entries = self.by_name.get(name)
        return self.unit_of(entries[-1]) if entries else None

    def voter_unit(self, b: Ballot) -> str | None:
        entries = self.by_name.get(b.voter)
        if not entries:
            return None
        if self.rs.card_units and b.voter_card is not None:
            return self.rs.unit_label(b.voter, b.voter_card)  # may be a card not in play
        return self.unit_of(entries[-1])

    def target_unit(self, b: Ballot, at: datetime | None = None) -> tuple[str | None, str | None]:
        """(unit, problem) for the ballot's target. A bare name of a player with two cards
        means the one still in play at ``at`` when the other is out (``card_units``)."""
        assert b.target is not None
        entries = self.by_name.get(b.target)
        if not entries:
            return None, f"投票对象有误：「{b.target_raw or b.target}」不在名单中"
        if not self.rs.card_units:
            return self.unit_of(entries[-1]), None
        if b.card_index is not None:
            unit = self.rs.unit_label(b.target, b.card_index)
            if unit not in self.units:
                return None, f"投票对象有误：{unit}不在场上"
            return unit, None
        if len(entries) == 1:
            return self.unit_of(entries[0]), None
        in_play = [e for e in entries if at is None or not _gone(e, at)]
        if len(in_play) == 1:
            return self.unit_of(in_play[0]), None
        return None, f"投票对象须写明第几身份（例：{b.target}的第一身份）"


@dataclass
class _Mods:
    received: dict[str, Fraction] = field(default_factory=dict)
    received_src: dict[str, list[str]] = field(default_factory=dict)
    weight_set: dict[str, list[tuple[Fraction, str]]] = field(default_factory=dict)
    voter_add: dict[str, list[tuple[Fraction, str]]] = field(default_factory=dict)
    no_vote: dict[str, list[str]] = field(default_factory=dict)
    no_vote_rule: dict[str, str] = field(default_factory=dict)
    no_change: dict[str, list[str]] = field(default_factory=dict)
    block: dict[str, list[str]] = field(default_factory=dict)
    tie_taker: list[str] = field(default_factory=list)
    force_top: list[str] = field(default_factory=list)
    void_on_tie: list[str] = field(default_factory=list)
    before_open: dict[str, tuple[str, str]] = field(default_factory=dict)  # unit → (src, rule)


def _digest_modifiers(ctx: DayContext, roster: _Roster) -> _Mods:
    mods = _Mods()
    for m in ctx.modifiers:
        unit = roster.resolve(m.player)
        if unit is None:
            raise ValueError(f"投票修正（{m.label()}）中的玩家不在名单中：{m.player}")
        src = m.label()
        if m.kind is ModifierKind.WEIGHT_ADD:
            mods.received[unit] = mods.received.get(unit, Fraction(0)) + Fraction(m.value)
            mods.received_src.setdefault(unit, []).append(f"{src}+{Fraction(m.value)}")
        elif m.kind is ModifierKind.WEIGHT_SET:
            mods.weight_set.setdefault(unit, []).append((Fraction(m.value), src))
        elif m.kind is ModifierKind.VOTER_ADD:
            mods.voter_add.setdefault(unit, []).append((Fraction(m.value), src))
        elif m.kind is ModifierKind.NO_VOTE:
            mods.no_vote.setdefault(unit, []).append(src)
            if m.rule:
                mods.no_vote_rule.setdefault(unit, m.rule)
        elif m.kind is ModifierKind.NO_CHANGE:
            mods.no_change.setdefault(unit, []).append(src)
        elif m.kind is ModifierKind.BLOCK_OUT:
            mods.block.setdefault(unit, []).append(src)
        elif m.kind is ModifierKind.TIE_TAKER:
            mods.tie_taker.append(unit)
        elif m.kind is ModifierKind.FORCE_TOP:
            mods.force_top.append(unit)
        elif m.kind is ModifierKind.VOID_ON_TIE:
            mods.void_on_tie.append(f"{unit}{src}" if src else unit)
        elif m.kind is ModifierKind.BEFORE_OPEN:
            mods.before_open.setdefault(unit, (src, m.rule))
    return mods


# --- judging -------------------------------------------------------------------------------


def _order_key(b: Ballot) -> tuple[datetime, int, str, str, str]:
    return (b.evidence.at, b.evidence.pid, b.voter, b.kind.value, b.target_raw)


def _when(t: datetime, ctx: DayContext) -> str:
    return t.astimezone(ctx.closes.tzinfo).strftime("%Y-%m-%d %H:%M")


def _gone(ps: PlayerStatus, at: datetime) -> bool:
    return ps.out_at is not None and ps.out_at <= at


@dataclass
class _Draft:
    ballot: Ballot
    status: VerdictStatus
    reason: str
    rule: str
    counts_for: str | None = None
    voter_unit: str | None = None
    target_unit: str | None = None
    note: str = ""


@dataclass
class _VoterState:
    counted: int | None = None  # index into drafts of the counted ballot
    original: int | None = None  # index into drafts of the original vote (the first counted)
    changes: int = 0
    exempt_used: bool = False
    invalid_pids: set[int] = field(default_factory=set)
    # the floors a change may reply to: the original vote and every change that counted since
    chain_pids: set[int] = field(default_factory=set)

    def count(self, index: int, pid: int) -> None:
        """The ballot at ``index`` (post ``pid``) is now the voter's counted one."""
        if self.original is None:
            self.original = index
        self.counted = index
        self.chain_pids.add(pid)


def _check_target(
    b: Ballot, at: datetime, ctx: DayContext, rs: Ruleset, roster: _Roster
) -> tuple[str | None, str | None, str]:
    """(unit or None for 弃权, problem, rule). The target must be in play and votable."""
    if b.is_abstain:
        return None, None, rs.ref("abstain")
    if b.target is None:
        return None, b.problem or f"投票对象有误：「{b.target_raw}」", rs.ref("format")
    unit, problem = roster.target_unit(b, at)
    if unit is None:
        key = "card_target" if rs.card_units and "身份" in (problem or "") else "format"
        return None, b.problem or problem, rs.rules.get(key, rs.ref("format"))
    ps = roster.units[unit]
    if _gone(ps, at):
        assert ps.out_at is not None
        return None, f"投票对象{unit}已于{_when(ps.out_at, ctx)}出局，不能被投票", rs.ref("out")
    if not ps.can_be_voted:
        return None, f"{unit}不能成为投票对象", rs.rules.get("not_votable", rs.ref("out"))
    return unit, None, ""


def _target_text(unit: str | None) -> str:
    return ABSTAIN_WORD if unit is None else unit


def judge_ballots(
    ballots: Iterable[Ballot], ctx: DayContext, ruleset: Ruleset
) -> tuple[VoteVerdict, ...]:
    """Judge each ballot of the day, in post order (time, then pid).

    Returns one verdict per ballot, sorted by (time, pid). See the module docstring of each
    rule set for what differs; the shared timeline is:

    - a non-player's post is IGNORED (非玩家), and so is the director's own post in vote format
      (``by_director``: a 代投 names the player); a ballot before the opening or after the close,
      by a player already out, or by one who may not vote is INVALID;
    - the first valid VOTE/ABSTAIN/PROXY counts; a later fresh vote is IGNORED; an INVALID ballot
      does not use up the vote;
    - a CHANGE must reply to the original vote's floor (or to a change of the voter's that
      counted since), at most ``change_limit`` times, not in the last hour, not when
      accelerated; a change whose name does not resolve is still a change; a refused change
      lists every rule it breaks; a valid change SUPERSEDES the vote it replaces;
    - at the close, a counted vote whose voter or target went out during the day no longer counts.
    """
    rs = ruleset
    roster = _Roster(ctx, rs)
    mods = _digest_modifiers(ctx, roster)
    drafts: list[_Draft] = []
    states: dict[str, _VoterState] = {}

    for b in sorted(ballots, key=_order_key):
        drafts.append(_judge_one(b, ctx, rs, roster, mods, drafts, states))

    # At the close: the day's outs void the votes of (and for) players out before the close.
    for d in drafts:
        if d.status is not VerdictStatus.COUNTED:
            continue
        voter_ps = roster.units[d.voter_unit] if d.voter_unit else None
        if (
            rs.void_votes_of_players_out_before_close
            and voter_ps is not None
            and voter_ps.out_at is not None
            and voter_ps.out_at < ctx.closes
        ):
            d.status = VerdictStatus.INVALID
            d.reason = f"投票者已于{_when(voter_ps.out_at, ctx)}出局，其票不计入"
            d.rule, d.counts_for = rs.ref("out"), None
            continue
        if d.counts_for is not None:
            target_ps = roster.units[d.counts_for]
            if target_ps.out_at is not None and target_ps.out_at < ctx.closes:
                d.status = VerdictStatus.INVALID
                d.reason = f"投票对象{d.counts_for}已于{_when(target_ps.out_at, ctx)}出局，此票作废"
                d.rule, d.counts_for = rs.ref("out"), None

    return tuple(
        VoteVerdict(
            ballot=d.ballot,
            status=d.status,
            reason=f"{d.reason}（{EDITED_NOTE}）" if d.ballot.edited else d.reason,
            counts_for=d.counts_for if d.status is VerdictStatus.COUNTED else None,
            rule=d.rule,
            voter_unit=d.voter_unit,
            target_unit=d.target_unit,
            note="；".join(n for n in (d.ballot.note, d.note) if n),
        )
        for d in drafts
    )


def _judge_one(
    b: Ballot,
    ctx: DayContext,
    rs: Ruleset,
    roster: _Roster,
    mods: _Mods,
    drafts: list[_Draft],
    states: dict[str, _VoterState],
) -> _Draft:
    """One ballot's verdict, given every ballot before it (``drafts``, ``states``).

    The reasons a ballot fails are decided in this order: not a player's vote; outside the
    window; the voter is out, bound to vote before the opening, or barred from voting; hidden or
    malformed text; then what the ballot is (a fresh vote, a 代投, a change) decides the rest.
    """
    outside = _not_a_players_vote(b, rs, roster)
    if outside is not None:
        return outside
    unit = roster.voter_unit(b)
    assert unit is not None
    d = _Draft(b, VerdictStatus.INVALID, "", "", voter_unit=unit)
    at, early_note = _counted_time(b, ctx, rs)
    refusal = _window_refusal(at, ctx, rs) or _voter_refusal(unit, b, at, ctx, rs, roster, mods)
    if refusal is not None:
        d.reason, d.rule = refusal
        return d
    st = states.setdefault(unit, _VoterState())
    if b.hidden:
        return _hidden_ballot(d, rs, st)
    if b.kind is BallotKind.INVALID:
        return _malformed_ballot(d, rs, st)
    index = len(drafts)
    if b.kind in (BallotKind.VOTE, BallotKind.ABSTAIN):
        return _fresh_vote(d, at, ctx, rs, roster, st, index)
    if b.kind is BallotKind.PROXY and st.counted is None:
        return _proxy_vote(d, at, early_note, ctx, rs, roster, st, index)
    # A change: CHANGE, or a PROXY replacing a counted vote (代投改票). Every rule it breaks is
    # listed (the first one's rule is cited); a refused change does not use up the change.
    problems: list[tuple[str, str]] = []  # (Chinese reason, rule)
    if unit in mods.no_change:
        mania = rs.rules.get("mania", rs.ref("change_once"))
        problems.append((f"持有{'、'.join(mods.no_change[unit])}，不允许改票", mania))
    if st.counted is None:
        return _correcting_change(d, at, ctx, rs, roster, st, index, problems)
    return _replacing_change(d, at, ctx, rs, roster, drafts, st, problems)


def _not_a_players_vote(b: Ballot, rs: Ruleset, roster: _Roster) -> _Draft | None:
    """The verdict of a post that is no player's vote: the director's, a non-player's, or one
    by a unit not on the field; None for a player's ballot."""
    if b.by_director:
        # the director's own post in vote format: never a vote (a 代投 names the player)
        reason = "导演的帖子，不计票" + (f"：{b.problem}" if b.problem else "")
        note = f"代投请用 {PROXY_SLOT} 记录，或在帖中先写一行“代投：玩家名”再写投票行"
        return _Draft(b, VerdictStatus.IGNORED, reason, rs.ref("proxy"), note=note)
    unit = roster.voter_unit(b)
    if unit is None:
        reason = b.not_player or "非玩家（导演或观众）的帖子，不计票"
        return _Draft(b, VerdictStatus.IGNORED, reason, rs.ref("vote_right"))
    if unit not in roster.units:
        reason = f"{unit}不在场上，不能投票"
        return _Draft(b, VerdictStatus.INVALID, reason, rs.ref("vote_right"), voter_unit=None)
    return None


def _counted_time(b: Ballot, ctx: DayContext, rs: Ruleset) -> tuple[datetime, str]:
    """(the time the ballot counts at, a note on it): a 代投 entered before the opening counts
    at the opening where the rule set allows it."""
    if b.evidence.at < ctx.opens and b.kind is BallotKind.PROXY and rs.proxy_before_open:
        return ctx.opens, "（开门前代投，按开门时计）"
    return b.evidence.at, ""


def _window_refusal(at: datetime, ctx: DayContext, rs: Ruleset) -> tuple[str, str] | None:
    """(reason, rule) when the ballot lies before the opening or after the close."""
    if at < ctx.opens:
        return "尚未开门，投票无效", rs.ref("window")
    if at > ctx.closes:
        return "投票已截止，截止后投票无效", rs.ref("window")
    if ctx.closed_early is not None and at > ctx.closed_early[0]:
        _when, why, rule = ctx.closed_early
        return f"{why}，之后的投票无效", rule
    return None


def _voter_refusal(
    unit: str,
    b: Ballot,
    at: datetime,
    ctx: DayContext,
    rs: Ruleset,
    roster: _Roster,
    mods: _Mods,
) -> tuple[str, str] | None:
    """(reason, rule) when the voter may not vote now: already out, bound to vote before the
    opening, or barred from voting (by a state or a modifier)."""
    ps = roster.units[unit]
    if _gone(ps, at):
        assert ps.out_at is not None
        return f"投票者已于{_when(ps.out_at, ctx)}出局，出局后不能投票", rs.ref("out")
    if unit in mods.before_open and b.evidence.at >= ctx.opens:
        # the ballot's own time: a proxy entered before the opening still counts (rule "mania")
        src, rule = mods.before_open[unit]
        reason = (
            f"{unit}持有{src}，须在开门之前投票，开门后的投票不计入（开门之前未决定则默认弃票）"
        )
        return reason, rule or rs.rules.get("mania", rs.ref("vote_right"))
    if not ps.can_vote or unit in mods.no_vote:
        why = "、".join(mods.no_vote.get(unit, [])) or "当前状态"
        no_vote_rule = mods.no_vote_rule.get(unit) if unit in mods.no_vote else None
        return f"{unit}因{why}不能参与投票", no_vote_rule or rs.ref("vote_right")
    return None


def _hidden_ballot(d: _Draft, rs: Ruleset, st: _VoterState) -> _Draft:
    """A vote line in hidden text: never taken; it does not use up the vote."""
    d.reason, d.rule = "投票行在隐藏文字中（白字/小字/隐藏），不予采信", rs.ref("hidden")
    if st.counted is None:
        st.invalid_pids.add(d.ballot.evidence.pid)
    return d


def _malformed_ballot(d: _Draft, rs: Ruleset, st: _VoterState) -> _Draft:
    """A vote-like post the parser could not accept: invalid; it does not use up the vote."""
    d.reason = d.ballot.problem or "投票格式错误"
    d.rule = rs.ref("format")
    if st.counted is not None:
        d.reason += "（已有有效票，不受影响）"
    else:
        how = "重新发帖或有效改票" if rs.change_corrects_invalid else "重新发帖"
        d.reason += f"；无效票不占用投票机会，须通过{how}更正"
        st.invalid_pids.add(d.ballot.evidence.pid)
    return d


def _fresh_vote(
    d: _Draft,
    at: datetime,
    ctx: DayContext,
    rs: Ruleset,
    roster: _Roster,
    st: _VoterState,
    index: int,
) -> _Draft:
    """A VOTE or ABSTAIN: the first with a valid target counts, a later one is ignored."""
    b = d.ballot
    if st.counted is not None:
        d.status = VerdictStatus.IGNORED
        d.reason = "已投过票，重复投票不计；改票须用改票格式并回复原投票楼层"
        d.rule = rs.ref("one_vote")
        return d
    target, problem, rule = _check_target(b, at, ctx, rs, roster)
    if problem:
        d.reason, d.rule = problem, rule
        st.invalid_pids.add(b.evidence.pid)
        return d
    d.status, d.counts_for, d.target_unit = VerdictStatus.COUNTED, target, target
    d.reason = f"有效票：{'弃权' if target is None else '投给' + target}"
    d.rule = rs.ref("abstain") if target is None else rs.ref("one_vote")
    st.count(index, b.evidence.pid)
    return d


def _proxy_vote(
    d: _Draft,
    at: datetime,
    early_note: str,
    ctx: DayContext,
    rs: Ruleset,
    roster: _Roster,
    st: _VoterState,
    index: int,
) -> _Draft:
    """A 代投 for a voter with no counted vote: counts unless too close to the close or its
    target is not valid."""
    b = d.ballot
    cutoff = rs.proxy_cutoff
    if cutoff is not None and at > ctx.closes - cutoff:
        d.reason = f"关门前{_span(cutoff)}内不允许代投，该票作废"
        d.rule = rs.ref("proxy_cutoff")
        return d
    target, problem, rule = _check_target(b, at, ctx, rs, roster)
    if problem:
        d.reason, d.rule = f"代投无效：{problem}", rule
        return d
    d.status, d.counts_for, d.target_unit = VerdictStatus.COUNTED, target, target
    d.reason = f"导演代投有效：{'弃权' if target is None else '投给' + target}{early_note}"
    d.rule = rs.ref("proxy")
    st.count(index, b.evidence.pid)
    return d


def _correcting_change(
    d: _Draft,
    at: datetime,
    ctx: DayContext,
    rs: Ruleset,
    roster: _Roster,
    st: _VoterState,
    index: int,
    problems: list[tuple[str, str]],
) -> _Draft:
    """A CHANGE by a voter with no counted vote: valid only where the rule set lets a change
    correct an invalid vote and it replies to one."""
    b = d.ballot
    assert b.kind is BallotKind.CHANGE
    corrects = rs.change_corrects_invalid and b.replied_to_pid in st.invalid_pids
    if not corrects:
        no_vote = ("尚无有效投票，改票无效；无效票须通过重新发帖更正", rs.ref("correct_invalid"))
        problems = [no_vote]  # nothing to change: the other limits do not matter
    else:
        limits, rule = _change_limits(at, ctx, rs, st, proxy=False)
        problems += [(p, rule) for p in limits]
    target, problem, rule = _check_target(b, at, ctx, rs, roster)
    if problem:
        problems.append((problem, rule))
    if problems:
        d.reason = "；".join(p for p, _r in problems)
        d.rule = problems[0][1]
        if b.target is None and not b.is_abstain:
            st.invalid_pids.add(b.evidence.pid)  # an unreadable name: like an invalid vote
        return d
    st.changes += 1
    st.count(index, b.evidence.pid)
    assert b.replied_to_pid is not None
    st.chain_pids.add(b.replied_to_pid)
    d.status, d.counts_for, d.target_unit = VerdictStatus.COUNTED, target, target
    d.reason = f"有效改票，更正无效票：{'弃权' if target is None else '投给' + target}"
    d.rule = rs.ref("correct_invalid")
    return d


def _replacing_change(
    d: _Draft,
    at: datetime,
    ctx: DayContext,
    rs: Ruleset,
    roster: _Roster,
    drafts: list[_Draft],
    st: _VoterState,
    problems: list[tuple[str, str]],
) -> _Draft:
    """A CHANGE (or a 代投改票) of a counted vote: it must reply to the vote's chain, keep to the
    change limits (once exempt when the old target went out) and name a valid target; a valid
    one supersedes the vote it replaces."""
    b = d.ballot
    proxy = b.kind is BallotKind.PROXY
    assert st.counted is not None and st.original is not None
    old = drafts[st.counted]
    if not proxy and rs.change_must_reply and b.replied_to_pid not in st.chain_pids:
        problems.append(("改票未回复原投票楼层", rs.ref("change_reply")))
        d.note = f"原投票为{drafts[st.original].ballot.evidence.describe()}"
        if b.replied_to_pid is not None:
            d.note += f"；此帖回复的是 pid {b.replied_to_pid}"
    limits, rule = _change_limits(at, ctx, rs, st, proxy=proxy)
    exempt = bool(limits) and _target_out_exempt(old, at, rs, roster, st)
    if not exempt:
        problems += [(p, rule) for p in limits]
    target, problem, target_rule = _check_target(b, at, ctx, rs, roster)
    if problem:
        if problems:
            problems.append((problem, target_rule))
        else:
            problems.append((f"{'代投' if proxy else ''}改票无效：{problem}", target_rule))
    if problems:
        d.reason, d.rule = "；".join(p for p, _r in problems), problems[0][1]
        return d
    if exempt:
        st.exempt_used = True
        d.rule = rs.ref("change_target_out")
        extra = f"（原投票对象{old.counts_for}已出局，禁止改票时间内也可改票一次）"
    else:
        st.changes += 1
        d.rule = rs.ref("proxy") if proxy else rs.ref("change_once")
        extra = ""
    old.status = VerdictStatus.SUPERSEDED
    old.reason = f"已被{'代投' if proxy else ''}改票取代"
    old.note = f"取代它的是{b.evidence.describe()}"
    st.count(len(drafts), b.evidence.pid)
    d.status, d.counts_for, d.target_unit = VerdictStatus.COUNTED, target, target
    who = "导演代投改票" if proxy else "有效改票"
    d.reason = f"{who}：由{_target_text(old.counts_for)}改为{_target_text(target)}{extra}"
    return d


def _target_out_exempt(
    old: _Draft, at: datetime, rs: Ruleset, roster: _Roster, st: _VoterState
) -> bool:
    """Whether a change may break its limits once because the old vote's target went out."""
    old_target = roster.units[old.counts_for] if old.counts_for else None
    return bool(
        rs.change_when_target_out
        and not st.exempt_used
        and old_target is not None
        and _gone(old_target, at)
    )


def _span(delta: Any) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes // 60}小时" if minutes % 60 == 0 else f"{minutes}分钟"


def _change_limits(
    at: datetime, ctx: DayContext, rs: Ruleset, st: _VoterState, *, proxy: bool
) -> tuple[list[str], str]:
    """The once / acceleration / last-hour limits of a change; ([problems], first rule)."""
    problems: list[str] = []
    rule = ""
    if st.changes >= rs.change_limit:
        problems.append("改票只允许进行一次，本次改票无效")
        rule = rs.ref("change_once")
    if ctx.accelerated and rs.change_forbidden_when_accelerated:
        problems.append("执行加速时不允许改票")
        rule = rule or rs.ref("change_accelerated")
    cutoff = rs.proxy_change_cutoff if proxy else rs.change_cutoff
    if cutoff is not None and at > ctx.closes - cutoff:
        what = "代投改票" if proxy else "改票或代投"
        problems.append(f"关门前{_span(cutoff)}内不允许{what}")
        rule = rule or rs.ref("proxy_change_cutoff" if proxy else "change_cutoff")
    return problems, rule


# --- the tally -----------------------------------------------------------------------------


def _voter_weight(unit: str, sheriff: str | None, rs: Ruleset, mods: _Mods) -> tuple[Fraction, str]:
    weight = Fraction(1)
    why: list[str] = []
    if sheriff is not None and unit == sheriff and rs.sheriff_weight != 1:
        weight = Fraction(rs.sheriff_weight)
        why.append(f"警长带队计{zh_votes(weight)}票")  # 1.5, never 3/2 (public text)
    for value, src in mods.voter_add.get(unit, []):
        weight += value
        why.append(f"{src}+{zh_votes(value)}")
    sets = mods.weight_set.get(unit, [])
    if sets:
        value, src = min(sets)
        weight = value
        why.append(f"{src}：计{zh_votes(value)}票")
    return weight, "；".join(why)


def tally(verdicts: Sequence[VoteVerdict], ctx: DayContext, ruleset: Ruleset) -> Tally:
    """Count the COUNTED verdicts with exact weights and decide the day.

    Day 1 of a rule set with an election elects the sheriff (``ctx.sheriff_election``); every
    other day decides who is out by the rule set's tie and majority rules.
    """
    rs = ruleset
    if ctx.sheriff_election and not rs.has_sheriff_election:
        raise ValueError(f"{rs.name}（{rs.id}）没有警长竞选，第{ctx.day}天应为放逐投票")
    roster = _Roster(ctx, rs)
    mods = _digest_modifiers(ctx, roster)
    sheriff = roster.resolve(ctx.sheriff) if ctx.sheriff else None
    if ctx.sheriff and sheriff is None:
        raise ValueError(f"警长不在名单中：{ctx.sheriff}")

    ordered = sorted(verdicts, key=lambda v: _order_key(v.ballot))
    c = _Count()
    _count_verdicts(c, ordered, sheriff, rs, mods)
    _default_abstentions(c, ctx, rs, roster, mods, sheriff)
    _received_votes(c, ctx, roster, mods)
    reached = _reached(ordered, c.final, c.weights, c.counts) if ctx.sheriff_election else {}
    sheet = CountSheet(
        counts=dict(c.counts),
        total=c.total,
        abstain_total=c.abstain_total,
        sheriff=sheriff,
        sheriff_vote=c.sheriff_vote,
        sheriff_abstained=c.sheriff_abstained,
        blocked={u: "、".join(s) for u, s in mods.block.items()},
        forced_top=tuple(u for u in mods.force_top if _votable(roster.units[u], ctx)),
        tie_takers=tuple(u for u in mods.tie_taker if _in_play(roster.units[u], ctx)),
        void_on_tie=tuple(mods.void_on_tie),
        reached=reached,
    )
    decision = rs.decide_election(sheet) if ctx.sheriff_election else rs.decide_exile(sheet)
    return Tally(
        day=ctx.day,
        ruleset=rs.id,
        sheriff_election=ctx.sheriff_election,
        counts=c.counts,
        voters=c.voters,
        weights=c.weights,
        weight_reasons=c.weight_reasons,
        abstained=c.abstained,
        total=c.total,
        top=list(decision.top),
        tie=list(decision.tie),
        out=decision.out,
        elected=decision.elected,
        decided_by=decision.decided_by,
        rule=decision.rule,
        public_counts=rs.public_counts,
        public_voters=rs.public_voters,
        sheriff=sheriff,
        sheriff_vote=c.sheriff_vote,
        notes=[*c.notes, *decision.notes],
        details=list(decision.details),
    )


@dataclass
class _Count:
    """The running count of a tally: who voted for whom, with which weight."""

    final: dict[str, VoteVerdict] = field(default_factory=dict)  # voter → its counted verdict
    counts: dict[str, Fraction] = field(default_factory=dict)
    voters: dict[str, list[str]] = field(default_factory=dict)
    weights: dict[str, Fraction] = field(default_factory=dict)
    weight_reasons: dict[str, str] = field(default_factory=dict)
    abstained: list[str] = field(default_factory=list)
    total: Fraction = Fraction(0)
    abstain_total: Fraction = Fraction(0)
    sheriff_vote: str | None = None
    sheriff_abstained: bool = False
    notes: list[str] = field(default_factory=list)

    def weigh(self, unit: str, sheriff: str | None, rs: Ruleset, mods: _Mods) -> Fraction:
        """The voter's weight, recorded (with why it is not 1) and added to the total."""
        w, why = _voter_weight(unit, sheriff, rs, mods)
        self.weights[unit] = w
        if why:
            self.weight_reasons[unit] = why
        self.total += w
        return w


def _count_verdicts(
    c: _Count, ordered: Sequence[VoteVerdict], sheriff: str | None, rs: Ruleset, mods: _Mods
) -> None:
    """Add every counted verdict, in post order, with its voter's weight."""
    for v in ordered:
        if v.status is not VerdictStatus.COUNTED or v.voter_unit is None:
            continue
        if v.voter_unit in c.final:
            raise ValueError(f"{v.voter_unit}有两张计入的票，判定结果不一致")
        c.final[v.voter_unit] = v
        w = c.weigh(v.voter_unit, sheriff, rs, mods)
        if v.counts_for is None:
            c.abstained.append(v.voter_unit)
            c.abstain_total += w
        else:
            c.counts[v.counts_for] = c.counts.get(v.counts_for, Fraction(0)) + w
            c.voters.setdefault(v.counts_for, []).append(v.voter_unit)
        if v.voter_unit == sheriff:
            c.sheriff_vote = v.counts_for
            c.sheriff_abstained = v.counts_for is None


def _default_abstentions(
    c: _Count,
    ctx: DayContext,
    rs: Ruleset,
    roster: _Roster,
    mods: _Mods,
    sheriff: str | None,
) -> None:
    """开门之前未决定则默认弃票 (rule "mania"): a unit that had to vote before the opening
    and has no counted ballot abstains, with its weight."""
    for unit, (src, _rule) in sorted(mods.before_open.items()):
        ps = roster.units[unit]
        if unit in c.final or not _in_play(ps, ctx) or not ps.can_vote or unit in mods.no_vote:
            continue
        c.abstain_total += c.weigh(unit, sheriff, rs, mods)
        c.abstained.append(unit)
        if unit == sheriff:
            c.sheriff_abstained = True
        c.notes.append(f"{unit}持有{src}，开门之前未投票，默认弃票")


def _received_votes(c: _Count, ctx: DayContext, roster: _Roster, mods: _Mods) -> None:
    """The extra votes a player receives (乌鸦[诽谤] …); an exile vote only, and only for a
    player who may still be voted."""
    if not ctx.sheriff_election:
        for unit, extra in sorted(mods.received.items()):
            srcs = "、".join(mods.received_src[unit])
            if not _votable(roster.units[unit], ctx):
                c.notes.append(f"{unit}不在可投票之列，{srcs}不计")
                continue
            c.counts[unit] = c.counts.get(unit, Fraction(0)) + extra
            c.total += extra
            c.notes.append(f"{unit}：{srcs}")
    elif mods.received:
        c.notes.append("警长竞选不计放逐投票的额外票数（如诽谤）")


def _votable(ps: PlayerStatus, ctx: DayContext) -> bool:
    """Whether votes for the player count at the close."""
    return ps.can_be_voted and (ps.out_at is None or ps.out_at >= ctx.closes)


def _in_play(ps: PlayerStatus, ctx: DayContext) -> bool:
    return ps.out_at is None or ps.out_at >= ctx.closes


def _reached(
    ordered: Sequence[VoteVerdict],
    final: Mapping[str, VoteVerdict],
    weights: Mapping[str, Fraction],
    counts: Mapping[str, Fraction],
) -> dict[str, tuple[datetime, int]]:
    """For each candidate: the (time, pid) from which it held its final count to the close.

    Replays, in post order, the ballots of every voter whose last ballot counts: a vote adds the
    voter's weight to its target, a change moves it. Voters whose vote was voided are left out.
    """
    running: dict[str, Fraction] = {}
    current: dict[str, str | None] = {}
    reached: dict[str, tuple[datetime, int]] = {}
    for v in ordered:
        unit = v.voter_unit
        if unit is None or unit not in final:
            continue
        if v.status not in (VerdictStatus.COUNTED, VerdictStatus.SUPERSEDED):
            continue
        w = weights[unit]
        before = current.get(unit)
        if before is not None:
            running[before] = running.get(before, Fraction(0)) - w
        now = v.target_unit
        current[unit] = now
        if now is not None:
            old = running.get(now, Fraction(0))
            running[now] = old + w
            goal = counts.get(now, Fraction(0))
            if goal > 0 and old < goal <= running[now]:
                reached[now] = (v.ballot.evidence.at, v.ballot.evidence.pid)
    return reached


def tally_votes(
    ballots: Iterable[Ballot], ctx: DayContext, ruleset: Ruleset
) -> tuple[tuple[VoteVerdict, ...], Tally]:
    """Judge and tally in one call: (verdicts, tally)."""
    rs = ruleset
    verdicts = judge_ballots(ballots, ctx, rs)
    return verdicts, tally(verdicts, ctx, rs)
