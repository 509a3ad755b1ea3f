"""A game that ended during a day, before its vote — 任何阵营达到其中之一的胜利条件时，游戏立即
结束 (zhenyan.txt:114): the last secret word guessed in the inquiry thread, a red card, a
faction's 判负. The director needs to know at once: the day's vote will not happen (no
reminder, no running tally), the win or the decision still pending (狼王's <最后一招>,
zhenyan.txt:70) is to be settled, and the day may be resolved before its close.

A resolved day says so in its snapshot's log. The day under way (not resolved yet, the phase
before it resolved) is tried: the engine resolves it on what happened by the derivation's time
— the guesses read in the inquiry thread, the red cards and 判负 given, the director's records —
and no vote; a day that ended before the vote logs
:data:`~engine.rulesets.base.ENDED_BEFORE_THE_VOTE`. Nothing is stored.

:func:`derive` is the package's ``derive``: the days (:func:`pipeline.derive.derivation.derive`)
and how the game ended.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from engine.cards import card_ledger
from engine.kernel import Action, DayInput, EngineError, resolve_day
from engine.rulesets import get_ruleset
from engine.rulesets.base import ENDED_BEFORE_THE_VOTE
from engine.state import GameState, Phase, StateError
from pipeline.derive.derivation import derive as derive_days
from pipeline.derive.engine_view import _state_before_day, ended_before_the_vote
from pipeline.derive.journal_view import card_events, journal_day_actions
from pipeline.derive.results import DayEnd, Derivation, post_url
from pipeline.game import journal
from pipeline.game.gamefile import Day, Game
from pipeline.game.pending import fill
from pipeline.store import Store

__all__ = ["GAME_FILE", "day_end", "derive", "early_resolution", "red_card_actions"]

#: the placeholder the director's tools replace with the game file (pipeline.notify.runnable)
GAME_FILE = "游戏文件"

#: a guess read in the inquiry thread names its post (pipeline.derive.inquiry.guess_actions)
_INQUIRY_REF = re.compile(r"询问帖 pid (\d+)")


def derive(game: Game, store: Store, *, as_of: datetime, by_chunks: bool = True) -> Derivation:
    """The whole game derived (:func:`pipeline.derive.derivation.derive`), with
    :attr:`Derivation.ended` — the day the game ended during, if any."""
    d = derive_days(game, store, as_of=as_of, by_chunks=by_chunks)
    d.ended = day_end(game, store, d)
    return d


def day_end(game: Game, store: Store, d: Derivation) -> DayEnd | None:
    """The day the game ended during, before its vote, as of ``d.as_of``; None when it did
    not (or the rule set has no engine)."""
    ruleset = get_ruleset(game.game.ruleset)
    if not ruleset.has_engine:
        return None
    snaps = journal.snapshots(store)
    resolved = {s.phase: s for s in snaps}
    for day in sorted(game.days, key=lambda x: x.day):
        if d.as_of < day.opens:
            return None
        snap = resolved.get(Phase.day(day.day))
        if snap is not None:
            event = ended_before_the_vote(snap)
            if event is not None:
                return _from_snapshot(game, day, snap, event)
            continue
        if not ruleset.ends_before_the_vote:
            return None  # only a resolved day can say so
        if snaps and snaps[-1].phase.index < Phase.day(day.day).index - 1:
            return None  # the phases before this day are not resolved yet
        return _tried(game, store, d, day, _state_before_day(snaps, day.day))
    return None


def _from_snapshot(game: Game, day: Day, snap: journal.Snapshot, event: dict[str, Any]) -> DayEnd:
    report = snap.report
    pending = tuple(
        fill(str(p.get("template") or p.get("prompt", "")), p, GAME_FILE)
        for p in report.get("pending", ())
    )
    return _day_end(
        game,
        day,
        event,
        winner=report.get("winner"),
        win_reason=report.get("win_reason"),
        pending=pending,
        resolved=True,
    )


def _tried(
    game: Game, store: Store, d: Derivation, day: Day, state: GameState | None
) -> DayEnd | None:
    """Day ``day`` resolved on what happened by ``d.as_of`` and no vote: its end, if it ended."""
    if state is None:
        return None
    upto = min(d.as_of, day.closes)
    recorded = [a for a in journal_day_actions(store, day.day) if not _after(a, upto)]
    read = _guesses(game, store, d, day, recorded)
    if read is None:
        return None  # the words cannot be read: day resolve says why
    read = [a for a in read if not _after(a, upto)]  # what was posted by then
    reds = red_card_actions(game, store, state, day.opens, upto)
    trial = DayInput(
        day=day.day,
        sheriff_election=_election(d, day),
        actions=(*recorded, *read, *reds),
        closes=day.closes.isoformat(),
    )
    try:
        _state, report = resolve_day(state, trial, get_ruleset(game.game.ruleset))
    except (EngineError, StateError):
        return None
    event = next((e for e in report.log if e.step == ENDED_BEFORE_THE_VOTE), None)
    if event is None:
        return None
    return _day_end(
        game,
        day,
        event.to_dict(),
        winner=report.winner,
        win_reason=report.win_reason,
        pending=tuple(fill(p.prompt, p.to_dict(), GAME_FILE) for p in report.pending),
        resolved=False,
    )


def _guesses(
    game: Game, store: Store, d: Derivation, day: Day, recorded: list[Action]
) -> list[Action] | None:
    """The words guessed correctly in ``day``'s inquiry thread, as ``day resolve`` reads them;
    None when the secret words cannot be read."""
    if day.inquiry is None:
        return []
    # the inquiry threads' module loads every rule set: only for a day with the thread
    from pipeline.derive.inquiry import InquiryError, day_guess_actions

    try:
        return day_guess_actions(
            game,
            store,
            day.day,
            as_of=d.as_of,
            recorded=recorded,
            sheriffs={n: r.sheriff for n, r in d.days.items()},
            outs={p: at for p, (at, _why) in d.outs.items()},
        )
    except InquiryError:
        return None


def _election(d: Derivation, day: Day) -> bool:
    """Whether ``day`` elects the sheriff (as its tally counts it)."""
    res = d.days.get(day.day)
    if res is not None and res.tally is not None:
        return bool(res.tally.sheriff_election)
    return bool(day.sheriff_election)


def _day_end(
    game: Game,
    day: Day,
    event: dict[str, Any],
    *,
    winner: str | None,
    win_reason: str | None,
    pending: tuple[str, ...],
    resolved: bool,
) -> DayEnd:
    raw = str(event.get("checked") or "")
    try:
        at = datetime.fromisoformat(raw) if raw else None
    except ValueError:
        at = None
    ref = _INQUIRY_REF.fullmatch(str(event.get("because") or ""))
    url = ""
    if ref is not None and day.inquiry is not None:
        url = post_url(str(game.forum.base_url), day.inquiry, int(ref.group(1)))
    return DayEnd(
        day=day.day,
        at=at,
        what=str(event.get("result", "")),
        rule=str(event.get("rule", "")),
        url=url,
        winner=winner,
        win_reason=win_reason,
        pending=pending,
        resolved=resolved,
    )


def _after(a: Action, moment: datetime) -> bool:
    """Whether ``a`` has a time after ``moment`` (one without a time is not)."""
    try:
        return a.at is not None and datetime.fromisoformat(a.at) > moment
    except ValueError:
        return False


def red_card_actions(
    game: Game, store: Store, state: GameState, start: datetime | None, end: datetime | None
) -> list[Action]:
    """Red cards (given, or reached by escalation) in the window ``(start, end]`` as engine
    actions, and the factions' 判负 they brought; the seed of a sheriff's random hand-over is
    derived from the card's record."""
    rs = get_ruleset(state.ruleset)
    factions = {p.name: rs.actual_faction(state, p.name) for p in state.players}
    rules = get_ruleset(game.game.ruleset).cards
    ledger = card_ledger(card_events(store), factions, rules=rules)

    def within(at: datetime) -> bool:
        return (start is None or at > start) and (end is None or at <= end)

    actions: list[Action] = [
        Action(
            actor=player,
            skill="红牌罚下",
            choice=f"{game.game.id}:{player}:{at.isoformat()}",
            at=at.isoformat(),
            ref="牌的记录",
        )
        for player, at in ledger.out_by_red.items()
        if within(at)
    ]
    actions += [
        Action(
            actor="导演",
            skill="判负",
            choice=loss.faction,
            at=loss.at.isoformat(),  # when the red card that made it lose was given
            ref=loss.reason,
        )
        for loss in ledger.losing_factions
        if within(loss.at)
    ]
    return actions


def early_resolution(d: Derivation, day: int, when: datetime) -> str | None:
    """Why ``day`` may be resolved before its close at ``when`` (Chinese), or None: the game
    ended during it, at a known moment by ``when``."""
    ended = d.ended
    if ended is None or ended.day != day or ended.at is None or ended.at > when:
        return None
    tz = d.game.game.tz
    return (
        f"第{day}天尚未关门，但游戏已在 {ended.at.astimezone(tz):%m-%d %H:%M} 结束"
        f"（{ended.what}）：提前结算"
    )
