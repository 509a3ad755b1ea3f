"""What is due at a moment: every draft kind's due rule, a pure function of the game, the
derivation and the loaded templates.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from engine.cards import CardEvent
from engine.rulesets import get_ruleset
from engine.state import Phase
from pipeline.derive import DayResult, Derivation
from pipeline.drafts.contexts import (
    cards_context,
    day_open_context,
    elevator_context,
    first_result_context,
    inquiry_answers_context,
    reminder_context,
    result_context,
    running_tally_context,
)
from pipeline.drafts.formatting import _announce_tid
from pipeline.drafts.length import split_body
from pipeline.drafts.model import DraftAction, DraftKind, DraftSpec
from pipeline.drafts.records import FIRST_ROUND_KEY
from pipeline.drafts.templates import Templates, load_templates
from pipeline.game.gamefile import Day, Game

log = logging.getLogger(__name__)


_TITLES: dict[DraftKind, str] = {
    DraftKind.RUNNING_TALLY: "第{day}天 计票（进行中）",
    DraftKind.RESULT: "第{day}天 投票结果",
    DraftKind.FIRST_RESULT: "第{day}天 第一轮[正午]结果",
    DraftKind.DAY_OPEN: "第{day}天 开门公示",
    DraftKind.ELEVATOR: "第{day}天 电梯",
    DraftKind.CARDS: "第{day}天 判罚",
    DraftKind.REMINDER: "第{day}天 投票提醒",
    DraftKind.INQUIRY_ANSWERS: "第{day}天 询问回答",
}


def draft_key(kind: DraftKind, day: int | None) -> str:
    return f"{kind.value}:d{day}" if day is not None else kind.value


def _charset(game: Game) -> str:
    return game.forum.encoding


def _specs(
    game: Game,
    templates: Templates,
    kind: DraftKind,
    day: int,
    context: Mapping[str, Any],
    *,
    tid: int | None,
    action: DraftAction = DraftAction.REPLY,
    edit_pid: int | None = None,
    key_suffix: str = "",
) -> list[DraftSpec]:
    body = templates.render(kind, context)
    key = draft_key(kind, day) + key_suffix
    title = _TITLES[kind].format(day=day)
    parts = split_body(body, charset=_charset(game), limit=game.drafts.max_post_bytes)
    if len(parts) == 1:
        return [DraftSpec(kind, day, key, tid, action, edit_pid, title, body)]
    n = len(parts)
    return [
        DraftSpec(
            kind,
            day,
            f"{key}#{i}",
            tid,
            action if i == 1 else DraftAction.REPLY,
            edit_pid if i == 1 else None,
            f"{title}（{i}/{n}）",
            part,
        )
        for i, part in enumerate(parts, 1)
    ]


def due_drafts(
    game: Game,
    derivation: Derivation,
    *,
    as_of: datetime,
    templates_dir: Path | str | None = None,
    templates: Templates | None = None,
    cards: Sequence[CardEvent] = (),
    revoked: Sequence[CardEvent] = (),
    announced: Mapping[int, str] | None = None,
    floor2: Mapping[int, int] | None = None,
    unsettled: Collection[int] = (),
    unsettled_first: Collection[int] = (),
) -> list[DraftSpec]:
    """Every draft due at ``as_of``, in day order.

    - running tally: while the vote thread is open and has votes;
    - reminder: within ``[drafts] reminder_minutes`` before the close, when someone has no
      counted vote yet;
    - neither once the game ended during the day, before its vote (``derivation.ended``);
    - first-round result (m209 太阳[日不落]): once the first 正午 round has ended and its
      thread was read whole again (not in ``unsettled_first``);
    - result and cards: once the day has closed (cards only when some were given for the day;
      a ruling made days later still drafts); a day the game ended during, before its vote,
      as soon as the director resolved it, and no day's opening after it;
    - day open (of the next day): from a day's close until the next day closes;
    - elevator: while the day is open — an edit of the director's floor 2 when its pid is known
      (``floor2``: discussion tid -> pid), else a reply.

    ``cards`` are the card events (``pipeline.derive.card_events``); ``revoked`` the cards taken
    back, and ``announced`` what the posted cards 公示 of each day printed: a revoked card one of
    them printed is said withdrawn in the day's next cards 公示. ``unsettled``: closed days
    whose threads have not been read whole again since the close — their result, cards and the
    next day's opening wait, so a public result is never drafted from a crawl that missed the
    last votes. Pure, given ``templates`` (loaded from ``templates_dir`` when not given).
    """
    if templates is None:
        templates = load_templates(templates_dir)
    floor2 = floor2 or {}
    printed = announced or {}
    closed = partial(_closed_day_drafts, game, templates, derivation, cards=cards, revoked=revoked)
    tz = game.game.tz
    days = sorted(game.days, key=lambda x: x.day)
    specs: list[DraftSpec] = []
    for i, day in enumerate(days):
        res = derivation.days.get(day.day)
        if res is None:
            continue
        n = day.day
        won = derivation.won
        if won is not None and Phase.day(n).index > won.index:
            continue  # the game was won before the day: nothing of it is drafted
        announce = _announce_tid(game, day)
        if day.opens <= as_of < day.closes:
            # the game ended during the day (zhenyan.txt:114): its vote will not happen
            vote = not derivation.ended_vote(n)
            specs += _open_day_drafts(
                game, templates, day, res, as_of=as_of, floor2=floor2, vote=vote
            )
        if (
            day.first_closes is not None
            and res.first is not None
            and as_of >= day.first_closes
            and n not in unsettled_first
        ):
            ctx = first_result_context(game, res)
            if ctx is not None:
                specs += _specs(game, templates, DraftKind.FIRST_RESULT, n, ctx, tid=announce)
        if (
            i == 0
            and as_of < day.closes
            and (
                any(at <= day.opens for at, _c in derivation.outs.values())
                or derivation.deaths_in.get(Phase.night(n - 1).label, 0) > 0
                or get_ruleset(game.game.ruleset).sexes_announced is not None
            )
        ):
            # the first night's outs or lost cards (tubian24 首夜, m135 第零晚's first cards),
            # or the sexes the game starts by announcing (tubian24.txt:65): the first day's
            # opening
            ctx = day_open_context(game, derivation, None, day)
            specs += _specs(game, templates, DraftKind.DAY_OPEN, n, ctx, tid=day.discussion)
        ended = derivation.ended
        if ended is not None and ended.day == n and ended.resolved:
            # the game ended during the day and the director resolved it: its result (the
            # vote not counted, the 公示 of the end) goes out at once, and no day follows
            specs += closed(day, None, announced=printed.get(n, ""))
            continue
        if as_of < day.closes or n in unsettled:
            continue
        nxt = days[i + 1] if i + 1 < len(days) and as_of < days[i + 1].closes else None
        if won is not None and won.index <= Phase.day(n).index:
            nxt = None  # won by the day's vote: its result says so, no day opens after it
        specs += closed(day, nxt, announced=printed.get(n, ""))
    log.debug("due at %s: %s", as_of.astimezone(tz).isoformat(), [s.key for s in specs])
    return specs


def _open_day_drafts(
    game: Game,
    templates: Templates,
    day: Day,
    res: DayResult,
    *,
    as_of: datetime,
    floor2: Mapping[int, int],
    vote: bool = True,
) -> list[DraftSpec]:
    """An open day's drafts: the 电梯, the running tally, the reminder near the close (not
    ``vote``: the game ended before the vote, no tally and no reminder)."""
    specs: list[DraftSpec] = []
    n = day.day
    announce = _announce_tid(game, day)
    if day.discussion is not None:
        ctx = elevator_context(game, res)
        if ctx is not None:
            pid = floor2.get(day.discussion)
            specs += _specs(
                game,
                templates,
                DraftKind.ELEVATOR,
                n,
                ctx,
                tid=day.discussion,
                action=DraftAction.EDIT if pid else DraftAction.REPLY,
                edit_pid=pid,
            )
    if day.vote is not None and vote:
        ctx = running_tally_context(game, res, as_of=as_of)
        if ctx is not None:
            # the first 正午 round's tally is its own draft, retired when the round ends
            first = FIRST_ROUND_KEY if str(ctx["round"]).startswith("第一轮") else ""
            specs += _specs(
                game, templates, DraftKind.RUNNING_TALLY, n, ctx, tid=announce, key_suffix=first
            )
        minutes = game.drafts.reminder_minutes
        if as_of >= day.closes - timedelta(minutes=minutes):
            ctx = reminder_context(game, res, as_of=as_of, minutes=minutes)
            if ctx is not None:
                specs += _specs(game, templates, DraftKind.REMINDER, n, ctx, tid=announce)
    return specs


def _closed_day_drafts(
    game: Game,
    templates: Templates,
    derivation: Derivation,
    day: Day,
    nxt: Day | None,
    *,
    cards: Sequence[CardEvent],
    revoked: Sequence[CardEvent] = (),
    announced: str = "",
) -> list[DraftSpec]:
    """A closed (and read whole again) day's drafts: its cards, its result, and the opening
    of ``nxt``, the next day when it has not closed yet."""
    specs: list[DraftSpec] = []
    n = day.day
    announce = _announce_tid(game, day)
    ctx = cards_context(game, derivation, n, cards, revoked=revoked, announced=announced)
    if ctx is not None:
        specs += _specs(game, templates, DraftKind.CARDS, n, ctx, tid=announce)
    if n in derivation.stale_days:
        # a stale resolution (the count changed after day resolve) holds the result and
        # the next opening: they would contradict each other (derive.warnings says so)
        return specs
    res = derivation.days[n]
    if day.vote is not None:
        public = derivation.public.get(Phase.day(n).label, ())
        ended = derivation.ended if derivation.ended_vote(n) else None
        ctx = result_context(game, res, public, ended=ended)
        if ctx is not None:
            specs += _specs(game, templates, DraftKind.RESULT, n, ctx, tid=announce)
    if nxt is not None:
        ctx = day_open_context(game, derivation, day, nxt)
        specs += _specs(game, templates, DraftKind.DAY_OPEN, nxt.day, ctx, tid=nxt.discussion)
    return specs


def inquiry_answer_drafts(
    game: Game,
    day: int,
    answers: Sequence[tuple[int, str]],
    *,
    templates: Templates | None = None,
    templates_dir: Path | str | None = None,
) -> list[DraftSpec]:
    """The hook for zhenyan's 询问贴: one reply answering ``(question pid, answer)`` pairs.

    The answers are the sheriff's or the director's words (是/否/不知道, 猜测正确 …); the
    template links each to its question. Save the result with :func:`save_drafts`.
    """
    if templates is None:
        templates = load_templates(templates_dir)
    the_day = game.day(day)
    if not answers:
        return []
    ctx = inquiry_answers_context(game, the_day, answers)
    return _specs(game, templates, DraftKind.INQUIRY_ANSWERS, day, ctx, tid=the_day.inquiry)
