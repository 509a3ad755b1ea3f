"""What the engine's resolved phases (journal snapshots) tell the derivation: outs, their
public causes, revivals, the state before a day, the last-words rights.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from engine.rulesets.base import ENDED_BEFORE_THE_VOTE
from engine.state import GameState, Phase, PhaseKind
from engine.votes import Tally
from pipeline.derive.results import RoundResult
from pipeline.game import journal
from pipeline.game.gamefile import Game
from pipeline.store import Store


def _engine_outs(
    store: Store, game: Game, snaps: Sequence[journal.Snapshot]
) -> list[tuple[str, datetime, str]]:
    """Players the engine put out. nizhuan's 逆转轮 brings every player back (nizhuan.txt:22):
    outs of the history round end when the reversal round opens."""
    if not snaps:
        return []
    outs = journal.engine_outs(store, game)
    reversal = dict(snaps[-1].state.settings).get("reversal_day")
    if reversal is not None:
        starts = {d.day: d.opens for d in game.days}.get(int(reversal))
        if starts is not None:
            outs = [o for o in outs if o[1] >= starts]
    return outs


def _public_causes(
    snaps: Sequence[journal.Snapshot], outs: Sequence[tuple[str, datetime, str]]
) -> dict[str, tuple[str, str]]:
    """For each engine out: (its stored cause, the public wording) — 第N晚出局, 第N天投票出局,
    红牌罚下, 第N天出局 — the lists the rules announce (m209.txt:159, nizhuan.txt:41,
    tubian24.txt:36), never the skill that did it."""
    public: dict[str, str] = {}
    for snap in snaps:
        for death in snap.report.get("deaths", []):
            name, cause = death["player"], str(death.get("cause", ""))
            if not death.get("player_out") or name in public:
                continue
            if snap.phase.kind is PhaseKind.NIGHT:
                public[name] = f"{snap.phase.zh}出局"
            elif "红牌" in cause:
                public[name] = "红牌罚下"
            elif cause == "投票出局":
                public[name] = f"{snap.phase.zh}投票出局"
            else:
                public[name] = f"{snap.phase.zh}出局"
    return {p: (c, public[p]) for p, _at, c in outs if p in public}


def _voted_out_in_game(
    snaps: Sequence[journal.Snapshot], game: Game, ruleset: Any
) -> dict[str, tuple[datetime, str]]:
    """Players a resolved day voted out whose card stays in the game (tubian24 白痴[装傻],
    :meth:`~engine.rulesets.base.Ruleset.out_by_vote_in_game`): player → (the day's close,
    第N天投票出局). Not outs for the roster — they still post — only for the lists of outs."""
    found: dict[str, tuple[datetime, str]] = {}
    for snap in snaps:
        if snap.phase.kind is not PhaseKind.DAY:
            continue
        at = _phase_time(snap.phase, game)
        if at is None:
            continue
        for name in ruleset.out_by_vote_in_game(snap.state):
            found.setdefault(name, (at, f"{snap.phase.zh}投票出局"))
    return found


def _resolved_differently(
    snaps: Sequence[journal.Snapshot],
    day: int,
    now: Tally,
    first: RoundResult | None,
) -> str:
    """How the count the engine resolved ``day`` on differs from today's ("" when it does not
    or the day was not resolved)."""
    snap = next((s for s in snaps if s.phase == Phase.day(day)), None)
    if snap is None or ended_before_the_vote(snap):
        return ""  # not resolved, or the game ended before the vote: no count to differ from
    was = snap.input
    diffs = []
    if (was.get("elected") or None) != (now.elected or None):
        diffs.append(f"当选警长：结算时{was.get('elected') or '无'}，现在{now.elected or '无'}")
    if (was.get("out") or None) != (now.out or None):
        diffs.append(f"最高票：结算时{was.get('out') or '无'}，现在{now.out or '无'}")
    was_first = (was.get("first_round") or {}).get("out") or None
    now_first = (first.tally.out or None) if first is not None else None
    if was_first != now_first:
        diffs.append(f"第一轮最高票：结算时{was_first or '无'}，现在{now_first or '无'}")
    return "；".join(diffs)


def ended_before_the_vote(snap: journal.Snapshot) -> dict[str, Any] | None:
    """The event a resolved day logged when the game ended during it, before the vote
    (:data:`~engine.rulesets.base.ENDED_BEFORE_THE_VOTE`); None when it did not."""
    for event in snap.report.get("log", ()):
        if event.get("step") == ENDED_BEFORE_THE_VOTE:
            return dict(event)
    return None


def _snapshot_time(snap: journal.Snapshot, game: Game) -> datetime | None:
    return _phase_time(snap.phase, game)


def _phase_time(phase: Phase, game: Game) -> datetime | None:
    """The moment a resolved phase's outs take effect: a night's at the next day's opening, a
    day's at its close (None when the game file has no such day) — as journal.engine_outs."""
    days = {d.day: d for d in game.days}
    n = phase.number
    if phase.kind is PhaseKind.NIGHT:
        nxt = days.get(n + 1)
        return nxt.opens if nxt else None
    if phase.kind is PhaseKind.DAY and n in days:
        return days[n].closes
    return None


def _rights_at(
    rights: Mapping[str, frozenset[str]] | None, game: Game
) -> dict[str, frozenset[datetime]] | None:
    """Last-words grants (player → phases) as the out times they cover."""
    if rights is None:
        return None
    out: dict[str, frozenset[datetime]] = {}
    for name, phases in rights.items():
        times = {_phase_time(Phase.parse(p), game) for p in phases if p}
        out[name] = frozenset(t for t in times if t is not None)
    return out


def _revivals(snaps: Sequence[journal.Snapshot], game: Game) -> list[tuple[str, datetime]]:
    """(player, when) for every revival the engine resolved (m209 觉醒守卫[烈阳护卫],
    m209.txt:330): out in one phase's state, in the game again in the next one."""
    found: list[tuple[str, datetime]] = []
    for prev, snap in itertools.pairwise(snaps):
        at = _snapshot_time(snap, game)
        if at is None or prev.state.phase.label == "setup":
            continue
        known = {p.name for p in prev.state.players}
        back = set(snap.state.living) - set(prev.state.living)
        found += [(p, at) for p in sorted(back & known)]
    return found


def _revived(
    revivals: Sequence[tuple[str, datetime]],
    until: datetime | None,
    outs: Sequence[tuple[str, datetime, str]],
) -> list[tuple[str, datetime, str]]:
    """The outs without those a revival (resolved by ``until``) undid; a later out counts.
    Only a revival the engine resolved undoes anything: the director's later records stay."""
    last: dict[str, datetime] = {}
    for p, at in revivals:
        if until is None or at <= until:
            last[p] = max(at, last.get(p, at))
    return [o for o in outs if not (o[0] in last and o[1] <= last[o[0]])]


def _state_before_day(snaps: Sequence[journal.Snapshot], day: int) -> GameState | None:
    """The engine's state as day ``day`` opens: the last resolved phase before it."""
    index = Phase.day(day).index
    before = [s for s in snaps if s.phase.index < index]
    return before[-1].state if before else None
