"""One derivation's shared inputs (``_Run``), one day as its vote steps see it (``_DayView``),
the outs per player, the factions, and each thread's posts and role.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from engine.cards import Ledger
from engine.conduct import Activity, EditedVote, FoldedName, SheriffAnswer
from engine.kernel import Action
from engine.rulesets import Ruleset, get_ruleset
from engine.state import GameState
from engine.votes import PlayerStatus
from parsers.records import MarkKind, Post
from pipeline.derive.posts import Roster
from pipeline.game import journal
from pipeline.game.gamefile import Day, Game, ThreadRole
from pipeline.store import Store

if TYPE_CHECKING:  # discussion.py imports this module
    from pipeline.derive.discussion import ThreadChunks


def _out_map(outs: Iterable[tuple[str, datetime, str]]) -> dict[str, tuple[datetime, str]]:
    """The earliest out time per player (of the outs that hold: see ``_revived``)."""
    result: dict[str, tuple[datetime, str]] = {}
    for player, at, cause in outs:
        if player not in result or at < result[player][0]:
            result[player] = (at, cause)
    return result


def game_factions(game: Game) -> dict[str, str | None]:
    """Each player's actual faction for the card ledger (a faction's loss by two red cards):
    the game file's ``faction``, else the one the cards give (the game file's check refuses a
    ``faction`` the cards contradict); None when neither says."""
    ruleset = get_ruleset(game.game.ruleset)
    return {p.name: p.faction or ruleset.hand_faction(p.name, p.cards) for p in game.players}


_Outs = dict[str, tuple[datetime, str]]


@dataclass
class _Run:
    """One derivation's inputs (read once) and what its days feed one another and the flags."""

    game: Game
    store: Store
    as_of: datetime
    roster: Roster
    ruleset: Ruleset
    # a card-based set's votes name a card ("傻树的第一身份"): the parser's card target shape
    target_rule: Any
    base: str
    # the engine's resolved phases, when the director resolves nights and days with bansha
    snaps: list[journal.Snapshot]
    ledger: Ledger
    fixed_outs: list[tuple[str, datetime, str]]
    from_engine: list[tuple[str, datetime, str]]
    revivals: list[tuple[str, datetime]]
    read_tids: set[int]
    # bansha vote sheriff --from-day N: from day N on (N need not be in the game file), until
    # the game changes the sheriff after it (an election, a hand-over the engine resolved)
    sheriff_set: dict[int, str]
    vote_outs: list[tuple[str, datetime, str]] = field(default_factory=list)
    posts_by_tid: dict[int, list[Post]] = field(default_factory=dict)
    # each thread's posts as conduct sees them, per role it plays (built once)
    acts_by_tid: dict[tuple[int, str], list[Activity]] = field(default_factory=dict)
    sheriff: str | None = None
    held: tuple[str | None, str | None] | None = None  # (the director's, what the game gave)
    prev_day: int | None = None
    voted_by_day: dict[int, set[str]] = field(default_factory=dict)
    accelerated_by_day: dict[int, bool] = field(default_factory=dict)
    sheriff_by_day: dict[int, str | None] = field(default_factory=dict)
    edited_votes: list[EditedVote] = field(default_factory=list)
    folded_names: list[FoldedName] = field(default_factory=list)
    sheriff_answers: list[SheriffAnswer] = field(default_factory=list)
    vote_exempt_by_day: dict[int, set[str]] = field(default_factory=dict)
    stale_days: set[int] = field(default_factory=set)
    post_exempt_by_day: dict[int, set[str]] = field(default_factory=dict)
    uncrawled_days: set[int] = field(default_factory=set)
    # the discussion threads read by chunks (pipeline/derive/discussion.py): whether the chunk
    # counters hold, who posts as whom (part of a chunk's key), the threads and chunks read
    chunk_counters: bool = False
    roster_key: str = ""
    chunked: dict[int, ThreadChunks] = field(default_factory=dict)
    chunk_acts: dict[tuple[int, int], list[Activity]] = field(default_factory=dict)

    @property
    def rs_id(self) -> str:
        return self.game.game.ruleset


@dataclass(frozen=True)
class _DayView:
    """One day as its vote steps see it: the roster, the sheriff and the speed are known."""

    day: Day
    engine_state: GameState | None
    outs: _Outs
    players: tuple[PlayerStatus, ...]
    sheriff: str | None  # as the day opens
    accelerated: bool
    closed: bool
    # once the director resolved the day with the engine, its outs are the ones that count
    # (白痴[大难不死], 平安日, [封锁投票] … keep a top in the game)
    engine_day: bool
    day_actions: tuple[Action, ...]


def _posts_of(run: _Run, tid: int | None) -> list[Post]:
    if tid is None:
        return []
    if tid not in run.posts_by_tid:
        # a look at a past moment (--as-of) sees only what had been posted by then; derive
        # reads a post's words and marks, never its HTML (a vote's counted version is read
        # from its revisions, counted_version)
        run.posts_by_tid[tid] = [
            p
            for p in run.store.posts(tid, html=False)
            if p.posted_at is None or p.posted_at <= run.as_of
        ]
    return run.posts_by_tid[tid]


def _tids(day: Day) -> list[int]:
    return [tid for tid in day.threads.values()]


def _role(day: Day, tid: int) -> str:
    for role, t in day.threads.items():
        if t == tid:
            # the first 正午 round's vote thread is a vote thread like the other (诈尸, fonts)
            return "vote" if role is ThreadRole.FIRST_VOTE else str(role.value)
    return "discussion"


_NO_KINDS: frozenset[MarkKind] = frozenset()
