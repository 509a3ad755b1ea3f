"""A day's vote steps: its ballots, the tally and its rounds, the exemptions, the post counts."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from engine.conduct import PostCount, count_posts
from engine.state import Phase
from engine.votes import (
    Ballot,
    BallotKind,
    DayContext,
    Evidence,
    ModifierKind,
    Tally,
    VoteVerdict,
    judge_ballots,
    tally,
)
from pipeline.derive.ballots import _thread_ballots
from pipeline.derive.discussion import chunked_day, thread_chunks
from pipeline.derive.engine_view import _resolved_differently
from pipeline.derive.flags import _acts_of
from pipeline.derive.journal_view import _dt, journal_modifiers, journal_proxies
from pipeline.derive.results import RoundResult
from pipeline.derive.run import _DayView, _posts_of, _Run
from pipeline.game.gamefile import Day
from pipeline.game.pending import with_commands


def _day_ballots(run: _Run, day: Day) -> tuple[list[Ballot], list[Ballot], int]:
    """The day's ballots (two rounds on a 太阳[日不落] day, m209.txt:377-378) with the
    director's proxies: (the last round's, the first round's, how many posts were unreadable).
    Records who voted in ``run.voted_by_day``."""
    read = {
        tid: _thread_ballots(
            run.store,
            _posts_of(run, tid),
            day=day.day,
            roster=run.roster,
            base=run.base,
            target_rule=run.target_rule,
            edited_votes=run.edited_votes,
            folded_names=run.folded_names,
            bare_abstain=run.ruleset.bare_abstain,
        )
        for tid in (day.first_vote, day.vote)
        if tid is not None
    }
    ballots = read[day.vote][0] if day.vote is not None else []
    first_ballots = read[day.first_vote][0] if day.first_vote is not None else []
    voted = {who for _b, v, _n in read.values() for who in v}
    unreadable = sum(n for _b, _v, n in read.values())
    for row in journal_proxies(run.store, day.day):
        at = _dt(row["at"])
        target = None if row["target"] == "弃权" else row["target"]
        card: int | None = None
        if target is not None and target not in run.roster.by_name:
            # a card label (nizhuan "丁的第二身份"), stored by bansha vote proxy
            target, card = run.ruleset.split_target(target)
        # on a 日不落 day a proxy entered by the first round's close is a first-round vote
        first = day.first_closes is not None and at <= day.first_closes
        (first_ballots if first else ballots).append(
            Ballot(
                voter=row["voter"],
                kind=BallotKind.PROXY,
                target=target,
                target_raw=row["target"],
                problem=None,
                evidence=Evidence(
                    (day.first_vote if first else day.vote) or 0,
                    -int(row["id"]),
                    None,
                    at,
                    f"导演记录：代投 #{row['id']}",
                ),
                card_index=card,
            )
        )
        voted.add(row["voter"])
    if day.vote is not None or voted:
        # a day without a vote thread is not judged for 未投票
        run.voted_by_day[day.day] = voted
    return ballots, first_ballots, unreadable


def _day_tally(
    run: _Run,
    v: _DayView,
    ballots: list[Ballot],
    first_ballots: list[Ballot],
    unreadable: int,
    notes: list[str],
) -> tuple[list[DayContext], RoundResult | None, tuple[VoteVerdict, ...], Tally | None]:
    """Judge and count the day's rounds: (their contexts, the first round of a 太阳[日不落]
    day, the last round's verdicts and tally). Adds the vote-outs and the notes."""
    day = v.day
    contexts: list[DayContext] = []
    first_round: RoundResult | None = None
    if day.vote is not None and day.first_vote is not None and day.first_closes is not None:
        ctx1, first_round = _first_round(run, v, first_ballots)
        contexts.append(ctx1)
    verdicts: tuple[VoteVerdict, ...] = ()
    day_tally = None
    if day.vote is not None:
        ctx, verdicts, day_tally = _last_round(run, v, ballots, first_round)
        contexts.append(ctx)
        if v.closed and not run.ruleset.card_units:
            stale = _resolved_differently(run.snaps, day.day, day_tally, first_round)
            if stale:
                # the director resolved the day on another count (a proxy, a modifier,
                # an edit came later): the engine's result is out of date
                notes.append(
                    f"第{day.day}天的引擎结算与当前计票不一致（{stale}）：请重新运行 "
                    f"bansha day resolve --day {day.day}，之后已结算的阶段也要按顺序重新结算"
                )
                run.stale_days.add(day.day)
        if not v.closed:
            notes.append("投票尚未截止：以上为截至目前的计票")
        if unreadable:
            notes.append(
                f"投票帖中有 {unreadable} 帖内容不可读（仅作者可见/待审核/屏蔽）："
                "若是“回帖仅作者可见”，请确认 cookie 属于开帖的导演账号且未失效"
            )
    return contexts, first_round, verdicts, day_tally


def _first_round(
    run: _Run, v: _DayView, first_ballots: list[Ballot]
) -> tuple[DayContext, RoundResult]:
    """太阳[日不落]: everyone living votes in the first 正午 round (m209.txt:377-378)."""
    day, ruleset, engine_state = v.day, run.ruleset, v.engine_state
    assert day.first_vote is not None and day.first_closes is not None
    ctx1 = DayContext(
        day=day.day,
        opens=day.opens,
        closes=day.first_closes,
        players=v.players,
        sheriff=v.sheriff,
        accelerated=v.accelerated,
        modifiers=tuple(journal_modifiers(run.store, day.day))
        + (tuple(ruleset.first_round_modifiers(engine_state, day.day)) if engine_state else ()),
        ruleset=run.rs_id,
    )
    first_verdicts = with_commands(judge_ballots(first_ballots, ctx1, ruleset))
    first_round = RoundResult(
        day.first_vote,
        day.first_closes,
        tuple(first_ballots),
        first_verdicts,
        tally(first_verdicts, ctx1, ruleset),
    )
    if first_round.tally.out and v.closed and not v.engine_day:
        # the first round's top is not out before 黄昏 (m209.txt:378)
        run.vote_outs.append(
            (first_round.tally.out, day.closes, f"第{day.day}天第一轮[正午]最高票出局")
        )
    return ctx1, first_round


def _last_round(
    run: _Run, v: _DayView, ballots: list[Ballot], first_round: RoundResult | None
) -> tuple[DayContext, tuple[VoteVerdict, ...], Tally]:
    """The day's (last) round: judged and counted; an election on a closed day makes the
    sheriff (``run.sheriff``), a top on a closed day is out. Adds the fixed ballots to
    ``ballots``."""
    day, ruleset, engine_state = v.day, run.ruleset, v.engine_state
    assert day.vote is not None
    opens = day.opens
    if first_round is not None:  # the extra 正午 round opens when the first one ends
        assert day.first_closes is not None
        opens = day.first_closes
    ctx = DayContext(
        day=day.day,
        opens=opens,
        closes=day.closes,
        players=v.players,
        sheriff=v.sheriff,
        accelerated=v.accelerated,
        # the game file's election day, or one the engine's state makes an election
        # (nizhuan: the 逆转轮's first day, nizhuan.txt:156)
        sheriff_election=(
            bool(day.sheriff_election)
            or (engine_state is not None and ruleset.sheriff_election_day(engine_state, day.day))
        )
        and ruleset.has_sheriff_election,
        modifiers=tuple(journal_modifiers(run.store, day.day))
        + (
            (
                *ruleset.vote_modifiers(engine_state, day.day),
                *ruleset.day_vote_modifiers(engine_state, day.day, v.day_actions),
            )
            if engine_state
            else ()
        ),
        # a day its recorded acts closed sooner (nizhuan: a duel on a 狼人阵营 card)
        closed_early=ruleset.timed_close(engine_state, v.day_actions) if engine_state else None,
        ruleset=run.rs_id,
    )
    if engine_state is not None:
        # the card a player's own posts vote with, where not the highest (nizhuan 重定之理)
        cards = ruleset.voter_cards(engine_state, day.day)
        ballots = [
            replace(b, voter_card=cards[b.voter])
            if b.voter in cards and b.voter_card is None
            else b
            for b in ballots
        ]
        ballots += ruleset.fixed_ballots(engine_state, day.day, opens=day.opens, tid=day.vote)
    verdicts = with_commands(judge_ballots(ballots, ctx, ruleset))
    day_tally = tally(verdicts, ctx, ruleset)
    if day_tally.elected and v.closed:
        run.sheriff = day_tally.elected
    if day_tally.out and v.closed and not v.engine_day and not (run.snaps and ruleset.dual_card):
        # one card each: the vote-out is the player's out. With two cards (m135,
        # nizhuan) only the current card goes: once the director resolves days with
        # the engine (bansha day resolve), its outs are the ones that count
        run.vote_outs.append((day_tally.out, day.closes, f"第{day.day}天投票出局"))
    return ctx, verdicts, day_tally


def _day_exemptions(
    run: _Run, v: _DayView, contexts: Sequence[DayContext]
) -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """Who the day's rules excuse from voting / posting (no 未投票/潜水 for them): (barred from
    the last round, absent, excused from posting and why). Fills the ``run`` exemptions."""
    day, ruleset, engine_state = v.day, run.ruleset, v.engine_state
    barred_last: frozenset[str] = frozenset()
    if contexts:
        barred = [
            {p.name for p in c.players if not p.can_vote}
            | {
                m.player
                for m in c.modifiers
                # [狂躁] (m209.txt:97): no vote by the opening is 弃权, not 未投票
                if m.kind in (ModifierKind.NO_VOTE, ModifierKind.BEFORE_OPEN)
            }
            for c in contexts
        ]
        # a player barred from one 正午 round could still vote in the other (日不落)
        run.vote_exempt_by_day[day.day] = set.intersection(*barred)
        barred_last = frozenset(barred[-1])
    absent = frozenset(ruleset.absent(engine_state, day.day)) if engine_state else frozenset()
    post_exempt = dict.fromkeys(sorted(absent), "离开游戏，不能发言")
    if engine_state is not None:  # m209 太阳[日不落]: the unnamed may not speak at the end
        for n in sorted(ruleset.silenced(engine_state, day.day, v.day_actions)):
            post_exempt.setdefault(n, "太阳[日不落]未指定，额外一轮不能发言")
    # in the game without a voice (nizhuan's 逆转轮, a player's second card out)
    voiceless = dict(ruleset.voiceless(engine_state, day.day)) if engine_state else {}
    for n in sorted(voiceless):
        post_exempt.setdefault(n, voiceless[n])
    run.post_exempt_by_day[day.day] = set(post_exempt)
    # out at the opening as this day saw it (a later revival does not make them owe the day)
    out_then = {n for n, (at, _c) in v.outs.items() if at <= day.opens}
    run.post_exempt_by_day[day.day] |= out_then
    run.vote_exempt_by_day[day.day] = (
        run.vote_exempt_by_day.get(day.day, set()) | out_then | set(voiceless)
    )
    resolved = next((s.state for s in run.snaps if s.phase == Phase.day(day.day)), None)
    if resolved is not None and ruleset.vote_void(resolved, day.day):
        # the day's vote did not take place (m209 [封锁投票]): nobody owed a vote
        run.vote_exempt_by_day[day.day] = {p.name for p in run.game.players}
    return barred_last, absent, post_exempt


def _day_counts(run: _Run, day: Day) -> dict[str, PostCount]:
    """The day's post counts (潜水 is judged from them): by chunks where they can say."""
    if day.discussion is not None and chunked_day(run, day):
        counts = thread_chunks(run, day).counts
        if counts is not None:
            return counts
        del run.chunked[day.discussion]  # not in time order: read whole
    acts = _acts_of(run, day, day.discussion) if day.discussion is not None else []
    return count_posts(
        acts,
        day=day.day,
        opens=day.opens,
        closes=day.closes,
        discussion_tids=(day.discussion,) if day.discussion else (),
    )
