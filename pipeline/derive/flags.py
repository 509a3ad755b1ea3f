"""The conduct side of a derivation: sheriff answers, every post as an activity, the flags."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.cards import Card
from engine.conduct import (
    AT_CLOSE,
    Activity,
    DaySummary,
    Flag,
    FlagKind,
    PlayerLife,
    PostCount,
    SheriffAnswer,
    conduct_flags,
)
from engine.rulesets import get_ruleset
from parsers.inquiry import answer_problems, parse_answer, sheriff_asks
from parsers.records import Post
from pipeline.derive.activities import _activities
from pipeline.derive.discussion import conduct_acts
from pipeline.derive.results import post_url
from pipeline.derive.run import _Outs, _posts_of, _role, _Run, _tids
from pipeline.game.gamefile import Day, Game
from pipeline.game.lastwords import LastWords
from pipeline.store import PostSketch


def _sheriff_answers(run: _Run, day: Day) -> None:
    """zhenyan: the sheriff's answers in the inquiry thread (into ``run.sheriff_answers``)."""
    sheriff = run.sheriff
    if day.inquiry is None or sheriff is None:
        return
    for post in _posts_of(run, day.inquiry):
        if run.roster.player_of(post) != sheriff or post.posted_at is None:
            continue
        if not (day.opens <= post.posted_at <= day.closes):
            continue
        ans = parse_answer(post.text)
        asks = sheriff_asks(post.text)
        # several answers one per line (docs/rulings.md 询问与猜词) are judged line by line
        problems = answer_problems(post.text)
        run.sheriff_answers.append(
            SheriffAnswer(
                sheriff,
                day.day,
                post.tid,
                post.pid,
                post.floor,
                post.posted_at,
                post_url(run.base, post.tid, post.pid),
                ans.answer.value if ans.answer else None,
                "；".join(problems) or None,
                asks,
            )
        )


def _all_activities(run: _Run, sent: Sequence[LastWords], outs_final: _Outs) -> list[Activity]:
    """Every post of the game's threads (each thread once) and every recorded 遗言; of a
    discussion thread read by chunks, the posts a check can flag (``conduct_acts``)."""
    acts: list[Activity] = [
        Activity(
            player=r.player,
            tid=0,
            role="lastwords",
            pid=-r.id,
            floor=None,
            at=r.at,
            url=f"导演记录：遗言 #{r.id}",
            has_bbcode=bool(r.codes),
            text=r.text,
        )
        for r in sent
    ]
    seen_tids: set[int] = set()
    for day in run.game.days:
        for tid in _tids(day):
            if tid in seen_tids:
                continue
            seen_tids.add(tid)
            if tid in run.chunked:
                acts += conduct_acts(run, day, run.chunked[tid], outs_final)
            else:
                acts += _acts_of(run, day, tid)
    return acts


def _acts_of(run: _Run, day: Day, tid: int) -> list[Activity]:
    """The posts of ``tid`` (a thread of ``day``) as activities, built once per role."""
    role = _role(day, tid)
    key = (tid, role)
    if key not in run.acts_by_tid:
        run.acts_by_tid[key] = _activities(_sketches_of(run, tid), tid, role, run.roster, run.base)
    return run.acts_by_tid[key]


def _sketches_of(run: _Run, tid: int) -> Sequence[Post | PostSketch]:
    """The posts of ``tid`` as conduct reads them: the posts if read already (a vote
    thread's), else their sketches (a discussion thread of thousands), up to ``as_of``."""
    if tid in run.posts_by_tid:
        return run.posts_by_tid[tid]
    return [
        p for p in run.store.post_sketches(tid) if p.posted_at is None or p.posted_at <= run.as_of
    ]


def _flags(
    run: _Run,
    sent: Sequence[LastWords],
    outs_final: _Outs,
    counts: Mapping[int, Mapping[str, PostCount]],
) -> tuple[Flag, ...]:
    """The conduct flags of the whole game (潜水, 未投票, hidden text …); ``counts``: each day's
    post counts (``DayResult.counts``, made from the same posts)."""
    game = run.game
    summaries = [
        DaySummary(
            d.day,
            d.opens,
            d.closes,
            discussion_tids=(d.discussion,) if d.discussion else (),
            vote_tids=tuple(t for t in (d.first_vote, d.vote) if t),
            progress_tids=(d.progress,) if d.progress else (),
            inquiry_tids=(d.inquiry,) if d.inquiry else (),
        )
        for d in game.days
    ]
    return conduct_flags(
        days=summaries,
        activities=_all_activities(run, sent, outs_final),
        players=[
            PlayerLife(p.name, outs_final[p.name][0] if p.name in outs_final else None)
            for p in game.players
        ],
        rules=run.ruleset.conduct,
        sheriff_by_day=run.sheriff_by_day,
        voted_by_day=run.voted_by_day,
        accelerated_by_day=run.accelerated_by_day,
        sheriff_answers=run.sheriff_answers,
        edited_votes=run.edited_votes,
        vote_exempt_by_day=run.vote_exempt_by_day,
        post_exempt_by_day=run.post_exempt_by_day,
        as_of=run.as_of,
        folded_names=run.folded_names,
        uncrawled_days=run.uncrawled_days,
        counts_by_day=counts,
    )


def card_problem(game: Game, flag: Mapping[str, Any], colour: Card) -> str | None:
    """Why the rule set's text does not allow ``colour`` for this flag's kind (Chinese, naming
    the rule); None when it does — the same for ``bansha flags confirm`` and the console."""
    try:
        kind = FlagKind(flag["kind"])
    except ValueError:
        return None
    return get_ruleset(game.game.ruleset).conduct.card_problem(kind, colour)


def card_time(game: Game, flag: Mapping[str, Any], now: datetime) -> str:
    """When the card for a confirmed ``flag`` (its dict, as stored) takes effect: at the
    violation — its last evidence — except for what only the day's close decides (潜水,
    未投票: :data:`engine.conduct.AT_CLOSE`), which is the close; a flag of no day, now."""
    day = flag.get("day")
    at_close = flag.get("kind") in {k.value for k in AT_CLOSE}
    if flag.get("evidence") and not (at_close and day is not None):
        return str(flag["evidence"][-1]["at"])
    if day is not None:
        return game.day(day).closes.isoformat()
    return now.isoformat()
