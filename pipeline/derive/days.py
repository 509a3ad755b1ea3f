"""A day's opening steps: the sheriff, the players and their status, the speed request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.speed import (
    SpeedDecision,
    SpeedKind,
    SpeedRequest,
    auto_accelerated,
    decide_speed,
    speed_deadlines,
)
from engine.state import GameState
from engine.votes import PlayerStatus
from parsers.records import PostState
from parsers.speed import SpeedKind as ParsedSpeedKind
from parsers.speed import parse_speed_request
from pipeline.derive.journal_view import journal_setting
from pipeline.derive.results import post_url
from pipeline.derive.run import _Outs, _posts_of, _Run
from pipeline.game.gamefile import Day


def _day_sheriff(run: _Run, day: Day, engine_state: GameState | None, outs: _Outs) -> str | None:
    """The sheriff as ``day`` opens (kept in ``run.sheriff`` for the days after)."""
    if engine_state is not None:
        run.sheriff = run.ruleset.vote_sheriff(engine_state)  # the engine knows 殉职, hand-overs
    due = [
        n for n in run.sheriff_set if n <= day.day and (run.prev_day is None or n > run.prev_day)
    ]
    if due:
        run.held = (run.sheriff_set[max(due)] or None, run.sheriff)
    elif run.held is not None and run.sheriff != run.held[1]:
        run.held = None  # the game gave another sheriff since the director's record
    if run.held is not None:
        run.sheriff = run.held[0]
    run.prev_day = day.day
    if run.sheriff is not None and run.sheriff in outs and outs[run.sheriff][0] <= day.opens:
        run.sheriff = None  # 殉职: the hand-over is the director's (bansha vote sheriff)
    return run.sheriff


def _day_players(
    run: _Run, day: Day, engine_state: GameState | None, outs: _Outs
) -> tuple[PlayerStatus, ...]:
    """Who may vote and be voted on ``day``: the game file's players, as the engine says."""
    ruleset = run.ruleset
    players = tuple(
        PlayerStatus(
            p.name,
            out_at=outs[p.name][0] if p.name in outs else None,
            card=1 if ruleset.card_units else None,  # nizhuan: the first cards play first
        )
        for p in run.game.players
    )
    if engine_state is not None and ruleset.card_units:
        # card-based sets vote by card: the engine knows which cards are in play
        red_at = {p: at for p, at in run.ledger.out_by_red.items() if day.opens < at <= day.closes}
        players = ruleset.vote_roster(engine_state, opens=day.opens, red_at=red_at)
    elif engine_state is not None:
        # who may vote / be voted as the engine says (m209 离开游戏, m209.txt:210)
        rights = {
            ps.name: ps for ps in ruleset.vote_roster(engine_state, opens=day.opens, red_at={})
        }
        players = tuple(
            replace(
                p,
                can_vote=p.can_vote and rights[p.name].can_vote,
                can_be_voted=p.can_be_voted and rights[p.name].can_be_voted,
            )
            if p.name in rights
            else p
            for p in players
        )
    return players


def _day_speed(
    run: _Run, day: Day, outs: _Outs, living_at: Sequence[str]
) -> tuple[SpeedDecision | None, bool, tuple[SpeedRequest, ...]]:
    """申请加速/延时 in the progress thread: the decision (None without one), whether the
    day is accelerated — also by itself, below the rule set's living count (m135: 存活人数低于
    7人后，将自动执行二段加速, counted at the opening), unless the director decided the day —
    and the requests read."""
    ruleset = run.ruleset
    override = day.accelerated
    jo = journal_setting(run.store, f"speed:{day.day}")
    if jo is not None:
        override = jo == "accelerate"
    auto = auto_accelerated(ruleset.speed, len(living_at))
    if day.progress is None:
        return None, auto if override is None else override, ()
    deadlines = speed_deadlines(
        ruleset.speed, closes=day.closes, opens=day.opens, tz=run.game.game.tz
    )
    requests = []
    for post in _posts_of(run, day.progress):
        who = run.roster.player_of(post)
        if who is None or post.posted_at is None or post.state is PostState.DELETED:
            continue
        req = parse_speed_request(post.text)
        if req is None or req.kind is None:
            continue
        kind = SpeedKind.ACCELERATE if req.kind is ParsedSpeedKind.ACCELERATE else SpeedKind.DELAY
        requests.append(
            SpeedRequest(
                who, kind, post.posted_at, post_url(run.base, post.tid, post.pid), post.pid
            )
        )
    speed = decide_speed(
        requests,
        living=[
            n
            for n in living_at
            if outs.get(n, (None,))[0] is None or outs[n][0] > deadlines.accelerate
        ],
        deadline=deadlines.delay,
        accelerate_deadline=deadlines.accelerate,
        override=override,
        rules=ruleset.speed,
        opens=day.opens,
        auto=auto,
    )
    return speed, speed.accelerate, tuple(requests)
