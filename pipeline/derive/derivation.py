"""``derive``: the whole game re-derived, day by day in order."""

from __future__ import annotations

from datetime import datetime

from engine.cards import card_ledger
from engine.conduct import without_posts_after_out
from engine.rulesets import get_ruleset
from engine.state import Phase
from parsers.votes import CARD_TARGET
from pipeline.derive.chunks import ensure_chunk_counters
from pipeline.derive.day_votes import _day_ballots, _day_counts, _day_exemptions, _day_tally
from pipeline.derive.days import _day_players, _day_sheriff, _day_speed
from pipeline.derive.discussion import roster_key
from pipeline.derive.engine_view import (
    _engine_outs,
    _public_causes,
    _revivals,
    _revived,
    _rights_at,
    _state_before_day,
    _voted_out_in_game,
)
from pipeline.derive.flags import _flags, _sheriff_answers
from pipeline.derive.journal_view import (
    card_events,
    crawled_tids,
    journal_day_actions,
    journal_outs,
    not_crawled_note,
    sheriff_settings,
)
from pipeline.derive.posts import Roster, substitutions
from pipeline.derive.results import DayResult, Derivation
from pipeline.derive.run import _DayView, _out_map, _Run, _tids, game_factions
from pipeline.game import journal
from pipeline.game.gamefile import Day, Game
from pipeline.game.lastwords import latest_by_player, list_lastwords
from pipeline.store import Store


def derive(game: Game, store: Store, *, as_of: datetime, by_chunks: bool = True) -> Derivation:
    """Re-derive the whole game (days in order: a day's vote-out feeds the next day).

    ``by_chunks``: read each day's discussion thread by chunks, re-reading only the chunks
    written since (pipeline/derive/chunks.py; the same answers as reading it whole, which
    ``by_chunks=False`` does)."""
    run = _start(game, store, as_of)
    if by_chunks:
        run.chunk_counters = ensure_chunk_counters(store)
        run.roster_key = roster_key(run)
    days: dict[int, DayResult] = {}
    for day in sorted(game.days, key=lambda d: d.day):
        days[day.day] = _derive_day(run, day)
    outs_final = _out_map(_revived(run.revivals, None, [*run.fixed_outs, *run.vote_outs]))
    sent = [r for r in list_lastwords(store) if r.at <= as_of]
    said = latest_by_player(sent)  # published: the latest; judged: every record
    flags = _flags(run, sent, outs_final, {n: r.counts for n, r in days.items()})
    snaps = run.snaps
    return Derivation(
        game,
        as_of,
        days,
        flags,
        run.ledger,
        outs_final,
        said,
        public={s.phase.label: tuple(s.report.get("public", ())) for s in snaps},
        engine_outs=_public_causes(snaps, run.from_engine),
        voted_in_game=_voted_out_in_game(snaps, game, run.ruleset),
        lastwords_rights=_rights_at(run.ruleset.lastwords_rights(snaps[-1].state), game)
        if snaps
        else None,
        stale_days=frozenset(run.stale_days),
        deaths_in={s.phase.label: len(s.report.get("deaths", ())) for s in snaps},
        won=next((s.phase for s in snaps if s.report.get("winner")), None),
    )


def _start(game: Game, store: Store, as_of: datetime) -> _Run:
    """Read what every day needs: the roster, the rule set, the engine's phases, the outs."""
    roster = Roster(game, substitutions(store))
    ruleset = get_ruleset(game.game.ruleset)
    snaps = journal.snapshots(store) if ruleset.has_engine else []
    events = card_events(store)
    factions = game_factions(game)
    ledger = card_ledger(events, factions, rules=ruleset.cards)
    fixed_outs: list[tuple[str, datetime, str]] = list(journal_outs(store))
    from_engine = _engine_outs(store, game, snaps)
    fixed_outs += from_engine
    revivals = _revivals(snaps, game)
    fixed_outs += [(p, at, "红牌罚下") for p, at in ledger.out_by_red.items()]
    return _Run(
        game=game,
        store=store,
        as_of=as_of,
        roster=roster,
        ruleset=ruleset,
        target_rule=CARD_TARGET if ruleset.card_units else None,
        base=str(game.forum.base_url),
        snaps=snaps,
        ledger=ledger,
        fixed_outs=fixed_outs,
        from_engine=from_engine,
        revivals=revivals,
        read_tids=crawled_tids(store),
        sheriff_set=sheriff_settings(store),
    )


def _derive_day(run: _Run, day: Day) -> DayResult:
    """One day's steps in order: roster, sheriff, speed, ballots, tally, exemptions, counts."""
    engine_state = _state_before_day(run.snaps, day.day)
    # a revival resolved by this day's opening undoes the outs before it
    outs = _out_map(_revived(run.revivals, day.opens, [*run.fixed_outs, *run.vote_outs]))
    sheriff = _day_sheriff(run, day, engine_state, outs)
    players = _day_players(run, day, engine_state, outs)
    day_actions = journal_day_actions(run.store, day.day) if engine_state is not None else ()
    if engine_state is not None:
        # the day's recorded red cards (--at) and duels put out from their time, as day resolve
        players = run.ruleset.with_timed_outs(
            players, run.ruleset.timed_outs(engine_state, day_actions)
        )
    living_at = [p.name for p in players if p.out_at is None or p.out_at > day.opens]
    # 场上未出局的玩家过半数同意加速 (tubian24.txt:330): a 白痴 voted out with [装傻] is out,
    # though his card stays — he neither counts nor asks (tubian24.txt:47, 112)
    voted_out = set(run.ruleset.out_by_vote_in_game(engine_state)) if engine_state else set()
    speed, accelerated, speed_requests = _day_speed(
        run, day, outs, [n for n in living_at if n not in voted_out]
    )
    run.accelerated_by_day[day.day] = accelerated
    run.sheriff_by_day[day.day] = sheriff
    ballots, first_ballots, unreadable = _day_ballots(run, day)
    notes: list[str] = []
    # none of the day's threads was ever read (not crawled yet, the forum was down): what
    # bansha did not see is not judged (no 潜水, no 未投票)
    crawled = any(tid in run.read_tids for tid in _tids(day))
    if not crawled:
        notes.append(not_crawled_note(day))
        run.uncrawled_days.add(day.day)
    view = _DayView(
        day=day,
        engine_state=engine_state,
        outs=outs,
        players=players,
        sheriff=sheriff,
        accelerated=accelerated,
        closed=run.as_of >= day.closes,
        engine_day=any(s.phase == Phase.day(day.day) for s in run.snaps),
        day_actions=day_actions,
    )
    contexts, first_round, verdicts, day_tally = _day_tally(
        run, view, ballots, first_ballots, unreadable, notes
    )
    barred_last, absent, post_exempt = _day_exemptions(run, view, contexts)
    sheriff = run.sheriff_by_day[day.day]
    if sheriff and run.ruleset.conduct.sheriff_answers_only:
        # the sheriff may not post in the discussion thread (zhenyan.txt:109): no 潜水
        post_exempt.setdefault(sheriff, "警长不能在讨论帖发言")
    tz = run.game.game.tz
    for name, (at, cause) in sorted(outs.items()):
        if day.opens < at < day.closes:  # not judged for the day (docs/rulings.md)
            when = at.astimezone(tz).strftime("%m-%d %H:%M")
            post_exempt.setdefault(name, f"白天中途出局（{when}，{cause}），出局后不能发言")
    # what an out player posts is 诈尸, no 发言: it does not count (docs/rulings.md)
    counts = without_posts_after_out(_day_counts(run, day), {n: o[0] for n, o in outs.items()})
    _sheriff_answers(run, day)
    return DayResult(
        day=day,
        ballots=tuple(ballots),
        verdicts=verdicts,
        tally=day_tally,
        speed=speed,
        counts=counts,
        sheriff=run.sheriff_by_day[day.day],
        accelerated=accelerated,
        out_before={p: o[0] for p, o in outs.items()},
        accounts={p.name: run.roster.account_at(p.name, day.opens) for p in run.game.players},
        notes=notes,
        first=first_round,
        absent=absent,
        barred=barred_last,
        post_exempt=post_exempt,
        crawled=crawled,
        speed_requests=speed_requests,
    )
