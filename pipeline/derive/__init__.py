"""Derive every verdict of a game from the store, the game file and the director's journal.

This is step 3 of a cycle: it reads stored posts (never the network), runs the pure parsers and
the pure engine, and returns values. ``write_derivation`` (step 4) writes the verdicts back so
they can be browsed. Running it twice on the same store gives the same result.
"""

from __future__ import annotations

import itertools
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from fractions import Fraction
from typing import Any

from engine.cards import Card, CardEvent, Ledger, card_ledger
from engine.conduct import (
    Activity,
    DaySummary,
    EditedVote,
    Flag,
    FoldedName,
    PlayerLife,
    PostCount,
    SheriffAnswer,
    conduct_flags,
    count_posts,
)
from engine.kernel import Action
from engine.rulesets import Ruleset, get_ruleset
from engine.speed import SpeedDecision, SpeedKind, SpeedRequest, decide_speed, speed_deadlines
from engine.state import GameState, Phase, PhaseKind
from engine.votes import (
    Ballot,
    BallotKind,
    DayContext,
    Evidence,
    ModifierKind,
    PlayerStatus,
    Tally,
    VoteModifier,
    VoteVerdict,
    judge_ballots,
    tally,
)
from parsers.inquiry import parse_answer
from parsers.names import RosterEntry, resolve_name
from parsers.records import MarkKind, Post, PostState
from parsers.speed import SpeedKind as ParsedSpeedKind
from parsers.speed import parse_speed_request
from parsers.text import visible_repr
from parsers.votes import CARD_TARGET, VoteKind, VoteParse, parse_vote, split_proxy
from pipeline.game import journal
from pipeline.game.gamefile import Day, Game, ThreadRole
from pipeline.game.lastwords import LastWords, latest_by_player, list_lastwords, refusal
from pipeline.store import PostSketch, Store, post_from_row

log = logging.getLogger(__name__)

HIDDEN_MARKS = {MarkKind.HIDDEN_COLOUR, MarkKind.TINY, MarkKind.HIDE_TAG}
#: the hidden-text marks as the conduct flags name them (engine.conduct.HIDDEN_ZH)
HIDDEN_KEYS = {MarkKind.HIDDEN_COLOUR: "colour", MarkKind.TINY: "tiny", MarkKind.HIDE_TAG: "hide"}


def post_url(base_url: str, tid: int, pid: int) -> str:
    """A link that finds the post whatever floor it shows now (floors renumber after deletes)."""
    return f"{base_url}forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={pid}"


@dataclass(frozen=True)
class RoundResult:
    """The first 正午 round of a 太阳[日不落] day (m209.txt:377-378): its own vote thread,
    judged from the opening to ``closes`` (the game file's ``first_closes``)."""

    tid: int
    closes: datetime
    ballots: tuple[Ballot, ...]
    verdicts: tuple[VoteVerdict, ...]
    tally: Tally


@dataclass
class DayResult:
    day: Day
    ballots: tuple[Ballot, ...]
    verdicts: tuple[VoteVerdict, ...]
    tally: Tally | None
    speed: SpeedDecision | None
    counts: dict[str, PostCount]
    sheriff: str | None
    accelerated: bool
    out_before: dict[str, datetime]  # who was out (and since when) as the day was judged
    notes: list[str] = field(default_factory=list)
    accounts: dict[str, int] = field(default_factory=dict)  # slot -> forum uid at the opening
    # 太阳[日不落]: the first 正午 round; ``ballots``/``verdicts``/``tally`` are the extra round's
    first: RoundResult | None = None
    # out of the game without being out (m209 离开游戏): not in the 电梯楼, no 潜水
    absent: frozenset[str] = frozenset()
    # may not vote in the day's (last) round: a roster or state bar (m209 太阳[日], 白痴 …)
    barred: frozenset[str] = frozenset()
    # not judged for 发言不足 that day, and why (离开游戏, 太阳[日不落] …)
    post_exempt: dict[str, str] = field(default_factory=dict)
    # some thread of the day was read successfully; False: nothing judged for 潜水/未投票
    crawled: bool = True

    @property
    def all_verdicts(self) -> tuple[VoteVerdict, ...]:
        """Every verdict of the day, the first round's (if any) first."""
        return (*(self.first.verdicts if self.first else ()), *self.verdicts)


@dataclass
class Derivation:
    game: Game
    as_of: datetime
    days: dict[int, DayResult]
    flags: tuple[Flag, ...]
    ledger: Ledger
    outs: dict[str, tuple[datetime, str]]  # player -> (when, why)
    # 遗言 the players sent the director (the latest per player, by the derivation's time)
    lastwords: dict[str, LastWords] = field(default_factory=dict)
    # the engine's 公示 per resolved phase ("night:1" → lines), as the rule set words them
    public: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # outs the engine resolved: player → (the cause as stored, what the public may read);
    # the stored cause names skills (女巫[毒药] …) and stays the director's
    engine_outs: dict[str, tuple[str, str]] = field(default_factory=dict)
    # who the engine gave last words, and for the out at which moment (m209's 4, nizhuan's
    # per round); None: not counted
    lastwords_rights: dict[str, frozenset[datetime]] | None = None
    # days the engine resolved on another count than today's: resolve them again
    stale_days: frozenset[int] = frozenset()
    # how many cards went out in each resolved phase ("night:0" → 2)
    deaths_in: dict[str, int] = field(default_factory=dict)

    def warnings(self) -> list[str]:
        """What the director must act on before drafts can follow (a stale resolution)."""
        return [n for d in sorted(self.stale_days) for n in self.days[d].notes if "不一致" in n]

    def lastwords_refusal(self, player: str) -> str:
        """Why ``player``'s recorded last words may not be published ("" when they may): the
        rule set's text (pipeline.game.lastwords.refusal) and the engine's count."""
        first = min((d.opens for d in self.game.days), default=None)
        why = refusal(self.game.game.ruleset, self.outs.get(player), first)
        if why:
            return why
        rights = self.lastwords_rights
        if rights is not None and player in self.engine_outs:
            at = self.outs[player][0] if player in self.outs else None
            if at not in rights.get(player, frozenset()):
                return "引擎结算时没有给他这次出局的遗言权利（遗言名额已用完，或遗言须留空）"
        return ""

    def day(self, n: int) -> DayResult:
        if n not in self.days:
            raise ValueError(f"游戏文件中没有第 {n} 天")
        return self.days[n]


# --------------------------------------------------------------------------- the journal


def _dt(raw: str) -> datetime:
    return datetime.fromisoformat(raw)


def journal_outs(store: Store) -> list[tuple[str, datetime, str]]:
    return [
        (r["player"], _dt(r["at"]), r["cause"])
        for r in store.db.query(
            "SELECT player, at, cause FROM journal_outs WHERE revoked_at IS NULL ORDER BY at, id"
        )
    ]


def journal_proxies(store: Store, day: int) -> list[dict[str, Any]]:
    return list(
        store.db.query(
            "SELECT * FROM journal_proxy_votes WHERE day = ? AND revoked_at IS NULL "
            "ORDER BY at, id",
            [day],
        )
    )


def journal_modifiers(store: Store, day: int) -> list[VoteModifier]:
    return [
        VoteModifier(r["player"], ModifierKind(r["kind"]), Fraction(r["value"]), r["source"] or "")
        for r in store.db.query(
            "SELECT * FROM journal_modifiers WHERE day = ? AND revoked_at IS NULL ORDER BY id",
            [day],
        )
    ]


def journal_day_actions(store: Store, day: int) -> tuple[Action, ...]:
    """The actions the director recorded for ``day`` (the engine's day journal)."""
    return tuple(r.action for r in journal.journal_actions(store, "day", day))


def journal_setting(store: Store, key: str) -> str | None:
    rows = list(store.db.query("SELECT value FROM journal_settings WHERE key = ?", [key]))
    return rows[0]["value"] if rows else None


def sheriff_settings(store: Store) -> dict[int, str]:
    """``bansha vote sheriff --from-day N``: day N -> the sheriff from that day on ("" = none)."""
    found: dict[int, str] = {}
    for r in store.db.query("SELECT key, value FROM journal_settings WHERE key LIKE 'sheriff:%'"):
        day = str(r["key"]).split(":", 1)[1]
        if day.lstrip("-").isdigit():
            found[int(day)] = r["value"] or ""
    return found


def crawled_tids(store: Store) -> set[int]:
    """Threads bansha has read at least once: a page stored without error (the crawl log or the
    thread's last outcome says ok), or posts in the store."""
    tids = {
        int(r["tid"])
        for r in store.db.query(
            "SELECT DISTINCT tid FROM crawl_log WHERE outcome = 'ok' AND tid IS NOT NULL"
        )
    }
    tids |= {
        int(r["tid"])
        for r in store.db.query(
            "SELECT tid FROM threads WHERE last_outcome = 'ok' OR last_crawled_at IS NOT NULL"
        )
    }
    tids |= {int(r["tid"]) for r in store.db.query("SELECT DISTINCT tid FROM posts")}
    return tids


def not_crawled_note(day: Day) -> str:
    """What ``tally``/``why``/``report`` say about a day none of whose threads was read."""
    roles = {"discussion": "讨论帖", "vote": "投票帖", "progress": "进程帖", "inquiry": "询问贴"}
    threads = "、".join(
        f"{roles.get(role.value, '第一轮投票帖')} {tid}" for role, tid in day.threads.items()
    )
    where = f"（{threads}）" if threads else "（游戏文件中这一天没有帖子编号）"
    return (
        f"第{day.day}天的帖子尚未抓取{where}：还没有成功读到任何一页，"
        "不判潜水和未投票，计票为空；请先运行 bansha crawl（论坛打不开时稍后再试）"
    )


def card_events(store: Store) -> list[CardEvent]:
    return [
        CardEvent(r["player"], Card.parse(r["colour"]), r["reason"], _dt(r["at"]), r["source"])
        for r in store.db.query(
            "SELECT * FROM card_events WHERE revoked_at IS NULL ORDER BY at, id"
        )
    ]


# --------------------------------------------------------------------------- posts


@dataclass(frozen=True, slots=True)
class Substitution:
    """替补: from ``since``, the account ``uid`` / ``name`` plays the roster slot ``player``."""

    player: str
    uid: int
    name: str
    since: datetime


def substitutions(store: Store) -> list[Substitution]:
    return [
        Substitution(r["player"], int(r["uid"]), r["name"], _dt(r["from_at"]))
        for r in store.db.query(
            "SELECT * FROM journal_substitutions WHERE revoked_at IS NULL ORDER BY from_at, id"
        )
    ]


class Roster:
    """Who a post's author is in the game: a roster slot, the director, or nobody.

    With 替补 a slot changes hands at a moment: the substitute's posts count for the slot from
    then on, the player who left no longer speaks for it (their later posts are a non-player's).
    """

    def __init__(self, game: Game, subs: Sequence[Substitution] = ()) -> None:
        self.game = game
        # [votes] strict_names: names must match as written (no folding of invisible characters
        # or full-width letters, parsers.names)
        self.strict = bool(game.votes.strict_names)
        self.by_uid = {p.uid: p.name for p in game.players}
        self.uid_of = {p.name: p.uid for p in game.players}
        self.by_name = {p.name: p.name for p in game.players}
        self.director_uids = set(game.director.uids)
        self.director_names = set(game.director.names)
        self.subs = sorted(subs, key=lambda s: s.since)
        extra: dict[str, list[str]] = {}
        for sub in self.subs:  # a vote may name the slot by the substitute's account too
            extra.setdefault(sub.player, []).append(sub.name)
        self.entries = tuple(
            RosterEntry(p.name, (*p.aliases, *extra.get(p.name, ()))) for p in game.players
        )

    def account_at(self, player: str, at: datetime) -> int:
        """The forum account playing ``player`` at ``at`` (after 替补, the substitute's)."""
        return next(iter(self._holder_uids(player, at)))

    def _holder_uids(self, player: str, at: datetime | None) -> set[int]:
        """The accounts playing ``player`` at ``at`` (the original, or the latest substitute)."""
        uid = self.uid_of[player]
        for sub in self.subs:
            if sub.player == player and at is not None and at >= sub.since:
                uid = sub.uid
        return {uid}

    def player_of(self, post: Post | PostSketch) -> str | None:
        if not self.subs:  # nobody took a slot over: the account's own slot
            return self.by_uid.get(post.uid) if post.uid else self.by_name.get(post.author)
        for sub in self.subs:
            if post.uid == sub.uid and post.posted_at is not None and post.posted_at >= sub.since:
                return (
                    sub.player
                    if post.uid in self._holder_uids(sub.player, post.posted_at)
                    else None
                )
        slot = self.by_uid.get(post.uid) if post.uid else self.by_name.get(post.author)
        if slot is None:
            return None
        if post.uid and post.uid not in self._holder_uids(slot, post.posted_at):
            return None  # the player left the slot to a substitute
        return slot

    def is_director(self, post: Post) -> bool:
        return (post.uid in self.director_uids and post.uid != 0) or (
            post.author in self.director_names
        )


#: states in which the forum showed this account no text (the post is not readable)
UNREADABLE = {PostState.AUTHOR_ONLY, PostState.PENDING, PostState.BLOCKED}
UNREADABLE_ZH = {
    PostState.AUTHOR_ONLY: "仅作者可见",
    PostState.PENDING: "待审核",
    PostState.BLOCKED: "被屏蔽",
}


def counted_version(store: Store, post: Post) -> tuple[Post, bool]:
    """The version of a vote post that counts: the first *readable* one bansha saw.

    A post first stored while it was unreadable (回帖仅作者可见 to a cookie that is not the
    director's, 待审核, 屏蔽) counts from the first revision that showed its text. Returns
    (that version, edited?) — edited when Discuz shows an edit note or the readable text or
    quotes changed (a change of state or of marks alone — a moderator's 屏蔽, the mobile API
    dropping [size] — is not an edit).
    """
    revs = store.revisions(post.tid, post.pid)
    readable = [r for r in revs if PostState(r["state"]) not in UNREADABLE | {PostState.VANISHED}]
    texts = {(r["text"], r["quoted_pids"]) for r in readable}
    edited = post.edit is not None or len(texts) > 1
    if not readable:
        return post, edited
    first = readable[0]
    row = {
        "tid": post.tid,
        "pid": post.pid,
        "floor": post.floor,
        "author": post.author,
        "uid": post.uid,
        "posted_at": post.posted_at.isoformat() if post.posted_at else None,
        "message_html": first["message_html"],
        "text": first["text"],
        "quoted_pids": first["quoted_pids"],
        "quote_texts": "[]",
        "edit_editor": first["edit_editor"],
        "edit_at": first["edit_at"],
        "state": first["state"],
        "marks": first["marks"],
        "source": post.source,
    }
    return post_from_row(row), edited


def _distrusted(post: Post) -> list[str]:
    return [m.text for m in post.marks if m.kind in HIDDEN_MARKS and m.text.strip()]


def _ballot_kind(vp: VoteParse) -> BallotKind:
    if vp.kind is VoteKind.VOTE:
        return BallotKind.VOTE
    if vp.kind is VoteKind.ABSTAIN:
        return BallotKind.ABSTAIN
    if vp.kind is VoteKind.CHANGE:
        return BallotKind.CHANGE
    return BallotKind.INVALID


def ballot_from_parse(
    vp: VoteParse,
    *,
    voter: str,
    roster: Roster,
    evidence: Evidence,
    replied_to: int | None,
    edited: bool,
    proxy: bool = False,
) -> Ballot:
    kind = BallotKind.PROXY if proxy and vp.valid else _ballot_kind(vp)
    target: str | None = None
    problem = vp.problem
    folded: tuple[str, ...] = ()
    note = ""
    if vp.valid and not vp.is_abstain:
        match = resolve_name(vp.target_raw, roster.entries, strict=roster.strict)
        if match.player is None:
            # a change stays a change: the engine judges it with every rule it breaks (the
            # name, the reply, the one change, the last hour …), not as a format error
            if kind is not BallotKind.CHANGE:
                kind = BallotKind.INVALID
            problem = match.problem
        target = match.player
        folded = match.folded if match.player is not None else ()
        note = match.note
    target_raw = "弃权" if vp.is_abstain else vp.target_raw
    if vp.hidden:
        kind = BallotKind.INVALID
    # the parser's remarks (a lead-in before the label, a hidden second vote line …) are the
    # director's to read, never a public reason
    note = "；".join(n for n in (*vp.notes, note) if n)
    return Ballot(
        voter=voter,
        kind=kind,
        target=target,
        target_raw=target_raw,
        problem=problem,
        evidence=evidence,
        replied_to_pid=replied_to,
        edited=edited,
        hidden=vp.hidden,
        card_index=vp.card_index,
        folded=folded,
        note=note,
    )


# --------------------------------------------------------------------------- derivation


# long (82 lines): one pass over a vote thread's posts in order: a change is judged against the
# posts before it
def _thread_ballots(
    store: Store,
    posts: Sequence[Post],
    *,
    day: int,
    roster: Roster,
    base: str,
    target_rule: Any,
    edited_votes: list[EditedVote],
    folded_names: list[FoldedName] | None = None,
) -> tuple[list[Ballot], set[str], int]:
    """The ballots of one vote thread: (ballots, who replied, how many posts were unreadable).

    Edited vote posts are added to ``edited_votes`` (the 修改投票 flags), votes whose name
    matched only once folded to ``folded_names`` (票中名字含不可见字符/全角字母)."""
    ballots: list[Ballot] = []
    voted: set[str] = set()
    unreadable = 0
    for post in posts:
        if post.posted_at is None or post.state is PostState.DELETED:
            continue
        version, edited = counted_version(store, post)
        evidence = Evidence(
            post.tid, post.pid, post.floor, post.posted_at, post_url(base, post.tid, post.pid)
        )
        replied = version.quoted_pids[0] if version.quoted_pids else None
        if roster.is_director(post):
            ballot = _director_ballot(post, version, roster, evidence, edited, target_rule)
            if ballot is not None:
                ballots.append(ballot)
                if not ballot.by_director:  # a 代投: the player replied through the director
                    voted.add(ballot.voter)
            continue
        who = roster.player_of(post)
        if version.state in UNREADABLE and who is not None:
            # the forum never showed us this post's words: the player did reply to the vote
            # thread, but the vote cannot be read — say so instead of dropping it silently
            why = UNREADABLE_ZH[version.state]
            ballots.append(
                Ballot(
                    voter=who,
                    kind=BallotKind.INVALID,
                    target=None,
                    target_raw="",
                    problem=f"帖子内容不可读（{why}），无法判定",
                    evidence=evidence,
                    note="请导演查看原帖后代投（bansha vote proxy）或裁定",
                )
            )
            voted.add(who)
            unreadable += 1
            continue
        vp = parse_vote(version.text, distrusted=_distrusted(version), target_pattern=target_rule)
        if vp.kind is VoteKind.NONE:
            continue
        voter = who or post.author
        ballot = ballot_from_parse(
            vp, voter=voter, roster=roster, evidence=evidence, replied_to=replied, edited=edited
        )
        ballots.append(ballot)
        if who is not None:
            voted.add(who)
            # the post as both flags below name it: voter, day, tid, pid, floor, time, link
            where = (who, day, post.tid, post.pid, post.floor, post.posted_at, evidence.url)
            if ballot.folded and not ballot.hidden and folded_names is not None:
                folded_names.append(
                    FoldedName(
                        *where,
                        written=visible_repr(vp.target_raw.strip()),
                        target=ballot.target or "",
                        folded=ballot.folded,
                    )
                )
            if edited:
                edited_votes.append(
                    EditedVote(
                        *where,
                        post.edit.edited_at if post.edit else None,
                        post.edit.editor if post.edit else "",
                    )
                )
    return ballots, voted, unreadable


def _director_ballot(
    post: Post,
    version: Post,
    roster: Roster,
    evidence: Evidence,
    edited: bool,
    target_rule: Any,
) -> Ballot | None:
    """A director's post in the vote thread: a 代投 (``代投：名字`` then a vote line) is the
    player's ballot; a post in vote format that is not a readable 代投 is the director's own
    ballot, which the engine ignores with its reason (never silence). Notices — no vote line,
    or the opening post's format template (several lines, a name on nobody) — are no ballot."""
    named, rest = split_proxy(version.text)
    vp = parse_vote(rest, distrusted=_distrusted(version), target_pattern=target_rule)
    match = resolve_name(named, roster.entries, strict=roster.strict) if named else None
    if match is not None and match.player is not None and vp.kind is not VoteKind.NONE:
        return ballot_from_parse(
            vp,
            voter=match.player,
            roster=roster,
            evidence=evidence,
            replied_to=None,
            edited=edited,
            proxy=True,
        )
    problem: str | None = None
    if match is not None and match.player is not None:  # 代投：饺子, but no vote line
        problem = f"代投帖（代投：{match.player}）中没有投票行，须另起一行写“投票对象：名字”"
    elif match is not None and vp.valid:  # the 代投 line names nobody on the roster
        problem = f"代投的玩家「{named}」不在名单中"
    elif not vp.valid:
        return None  # a notice, or the format template of the opening post
    elif not vp.is_abstain:
        target = resolve_name(vp.target_raw, roster.entries, strict=roster.strict)
        if target.player is None:
            return None  # "投票对象：XXX" in a notice: a template, not a vote
    kind = _ballot_kind(vp) if vp.valid else BallotKind.INVALID
    return Ballot(
        voter=post.author or f"uid {post.uid}",
        kind=kind,
        target=None,
        target_raw="弃权" if vp.is_abstain else vp.target_raw,
        problem=problem,
        evidence=evidence,
        edited=edited,
        by_director=True,
    )


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


def derive(game: Game, store: Store, *, as_of: datetime) -> Derivation:
    """Re-derive the whole game (days in order: a day's vote-out feeds the next day)."""
    run = _start(game, store, as_of)
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
        lastwords_rights=_rights_at(run.ruleset.lastwords_rights(snaps[-1].state), game)
        if snaps
        else None,
        stale_days=frozenset(run.stale_days),
        deaths_in={s.phase.label: len(s.report.get("deaths", ())) for s in snaps},
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
    speed, accelerated = _day_speed(run, day, outs, living_at)
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
    counts = _day_counts(run, day)
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
    )


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
) -> tuple[SpeedDecision | None, bool]:
    """申请加速/延时 in the progress thread: the decision (None without one), and whether the
    day is accelerated."""
    if day.progress is None:
        return None, bool(day.accelerated)
    ruleset = run.ruleset
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
    override = day.accelerated
    jo = journal_setting(run.store, f"speed:{day.day}")
    if jo is not None:
        override = jo == "accelerate"
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
    )
    return speed, speed.accelerate


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
    first_verdicts = judge_ballots(first_ballots, ctx1)
    first_round = RoundResult(
        day.first_vote,
        day.first_closes,
        tuple(first_ballots),
        first_verdicts,
        tally(first_verdicts, ctx1),
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
    ctx = DayContext(
        day=day.day,
        # the extra 正午 round opens when the first one ends
        opens=day.first_closes if first_round is not None else day.opens,
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
        ruleset=run.rs_id,
    )
    if engine_state is not None:
        ballots += ruleset.fixed_ballots(engine_state, day.day, opens=day.opens, tid=day.vote)
    verdicts = judge_ballots(ballots, ctx)
    day_tally = tally(verdicts, ctx)
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
    run.post_exempt_by_day[day.day] = set(post_exempt)
    # out at the opening as this day saw it (a later revival does not make them owe the day)
    out_then = {n for n, (at, _c) in v.outs.items() if at <= day.opens}
    run.post_exempt_by_day[day.day] |= out_then
    run.vote_exempt_by_day[day.day] = run.vote_exempt_by_day.get(day.day, set()) | out_then
    resolved = next((s.state for s in run.snaps if s.phase == Phase.day(day.day)), None)
    if resolved is not None and ruleset.vote_void(resolved, day.day):
        # the day's vote did not take place (m209 [封锁投票]): nobody owed a vote
        run.vote_exempt_by_day[day.day] = {p.name for p in run.game.players}
    return barred_last, absent, post_exempt


def _day_counts(run: _Run, day: Day) -> dict[str, PostCount]:
    """The day's post counts (潜水 is judged from them)."""
    acts = _acts_of(run, day, day.discussion) if day.discussion is not None else []
    return count_posts(
        acts,
        day=day.day,
        opens=day.opens,
        closes=day.closes,
        discussion_tids=(day.discussion,) if day.discussion else (),
    )


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
                ans.problem,
            )
        )


def _all_activities(run: _Run, sent: Sequence[LastWords]) -> list[Activity]:
    """Every post of the game's threads (each thread once) and every recorded 遗言."""
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
        activities=_all_activities(run, sent),
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


def _resolved_differently(
    snaps: Sequence[journal.Snapshot],
    day: int,
    now: Tally,
    first: RoundResult | None,
) -> str:
    """How the count the engine resolved ``day`` on differs from today's ("" when it does not
    or the day was not resolved)."""
    snap = next((s for s in snaps if s.phase == Phase.day(day)), None)
    if snap is None:
        return ""
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


def _tids(day: Day) -> list[int]:
    return [tid for tid in day.threads.values()]


def _role(day: Day, tid: int) -> str:
    for role, t in day.threads.items():
        if t == tid:
            # the first 正午 round's vote thread is a vote thread like the other (诈尸, fonts)
            return "vote" if role is ThreadRole.FIRST_VOTE else str(role.value)
    return "discussion"


_NO_KINDS: frozenset[MarkKind] = frozenset()


def _activities(
    posts: Sequence[Post | PostSketch], tid: int, role: str, roster: Roster, base: str
) -> list[Activity]:
    acts = []
    for post in posts:
        who = roster.player_of(post)
        if who is None or post.posted_at is None:
            continue
        marks = post.marks
        kinds = {m.kind for m in marks} if marks else _NO_KINDS
        hidden = (
            tuple(
                dict.fromkeys(
                    HIDDEN_KEYS[m.kind]
                    for m in marks
                    if m.kind in HIDDEN_KEYS and (m.text.strip() or m.kind is MarkKind.HIDE_TAG)
                )
            )
            if marks
            else ()
        )
        acts.append(
            Activity(
                player=who,
                tid=tid,
                role=role,
                pid=post.pid,
                floor=post.floor,
                at=post.posted_at,
                state=post.state.value,
                url=post_url(base, tid, post.pid),
                red=MarkKind.RED in kinds,
                enlarged=MarkKind.ENLARGED in kinds,
                has_bbcode=MarkKind.BBCODE in kinds,
                text=post.text,
                hidden=hidden,
            )
        )
    return acts


# --------------------------------------------------------------------------- write back


STAMPS = {"tallies": "derived_at", "flags": "raised_at"}
DERIVED_KEYS = {
    "votes": ("day", "seq"),
    "tallies": ("day",),
    "post_counts": ("day", "player"),
    "flags": ("id",),
}


def derived_rows(d: Derivation) -> dict[str, list[dict[str, Any]]]:
    """The rows of the derived tables for this derivation (without time stamps)."""
    rows: dict[str, list[dict[str, Any]]] = {t: [] for t in DERIVED_KEYS}
    for n, res in sorted(d.days.items()):
        for seq, v in enumerate(res.all_verdicts):
            b = v.ballot
            rows["votes"].append(
                {
                    "day": n,
                    "seq": seq,
                    "tid": b.evidence.tid,
                    "pid": b.evidence.pid,
                    "floor": b.evidence.floor,
                    "at": b.evidence.at.isoformat(),
                    "voter": v.voter_unit or b.voter,
                    "kind": b.kind.value,
                    "target": b.target or b.target_raw,
                    "status": v.status.value,
                    "counts_for": v.counts_for,
                    "reason": v.reason,
                    "note": v.note,
                    "rule": v.rule,
                    "url": b.evidence.url,
                }
            )
        if res.tally is not None:
            rows["tallies"].append(
                {
                    "day": n,
                    "out": res.tally.out,
                    "elected": res.tally.elected,
                    "decided_by": res.tally.decided_by,
                    "json": json.dumps(
                        {
                            **res.tally.to_dict(),
                            **({"first_round": res.first.tally.to_dict()} if res.first else {}),
                        },
                        ensure_ascii=False,
                    ),
                }
            )
        for player, pc in sorted(res.counts.items()):
            rows["post_counts"].append(
                {"day": n, "player": player, "count": pc.count, "pids": json.dumps(list(pc.pids))}
            )
    for f in d.flags:
        rows["flags"].append(
            {
                "id": f.id,
                "day": f.day,
                "kind": f.kind.value,
                "player": f.player,
                "reason": f.reason,
                "card": f.card.value if f.card else None,
                "rule": f.rule,
                "evidence": json.dumps([e.to_dict() for e in f.evidence], ensure_ascii=False),
            }
        )
    return rows


def write_derivation(store: Store, d: Derivation, *, now: datetime) -> bool:
    """Write the derived tables, in one transaction; return whether anything changed.

    Nothing is written when the verdicts are what the store already holds, so a cycle with
    nothing new changes nothing. A flag keeps the time it was first raised.
    """
    new = derived_rows(d)
    if "note" not in store.db["votes"].columns_dict:  # a store from before the note column
        new["votes"] = [{k: v for k, v in r.items() if k != "note"} for r in new["votes"]]
    old: dict[str, list[dict[str, Any]]] = {}
    for table, key in DERIVED_KEYS.items():
        stamp = STAMPS.get(table)
        order = ", ".join(key)
        old[table] = [
            {k: v for k, v in r.items() if k != stamp}
            for r in store.db.query(f"SELECT * FROM {table} ORDER BY {order}")
        ]
    if all(
        sorted(old[t], key=lambda r, t=t: tuple(r[k] for k in DERIVED_KEYS[t]))
        == sorted(new[t], key=lambda r, t=t: tuple(r[k] for k in DERIVED_KEYS[t]))
        for t in DERIVED_KEYS
    ):
        return False
    stamp = now.isoformat()
    raised = {r["id"]: r["raised_at"] for r in store.db.query("SELECT id, raised_at FROM flags")}
    with store.atomic():
        for table in DERIVED_KEYS:
            store.db.execute(f"DELETE FROM {table}")
        store.db.table("votes").insert_all(new["votes"])
        store.db.table("tallies").insert_all({**r, "derived_at": stamp} for r in new["tallies"])
        store.db.table("post_counts").insert_all(new["post_counts"])
        store.db.table("flags").insert_all(
            {**r, "raised_at": raised.get(r["id"], stamp)} for r in new["flags"]
        )
    return True


def flag_decisions(store: Store) -> dict[str, dict[str, Any]]:
    return {r["flag_id"]: r for r in store.db.query("SELECT * FROM flag_decisions")}


def tally_json(d: Derivation, n: int, decisions: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The ``bansha tally --json`` contract (field names are stable)."""
    res = d.day(n)
    flags = [f for f in d.flags if f.day == n]
    return {
        "game": d.game.game.id,
        "ruleset": d.game.game.ruleset,
        "day": n,
        "as_of": d.as_of.isoformat(),
        "opens": res.day.opens.isoformat(),
        "closes": res.day.closes.isoformat(),
        "closed": d.as_of >= res.day.closes,
        # false: none of the day's threads was read yet (nothing judged for 潜水/未投票)
        "crawled": res.crawled,
        "sheriff": res.sheriff,
        "accelerated": res.accelerated,
        "speed": res.speed.to_dict() if res.speed else None,
        "votes": [v.to_dict() for v in res.verdicts],
        "valid": [v.to_dict() for v in res.verdicts if v.status.value == "counted"],
        "invalid": [v.to_dict() for v in res.verdicts if v.status.value != "counted"],
        "tally": res.tally.to_dict() if res.tally else None,
        "out": res.tally.out if res.tally else None,
        "elected": res.tally.elected if res.tally else None,
        "decided_by": res.tally.decided_by if res.tally else None,
        "rule": res.tally.rule if res.tally else None,
        "post_counts": {p: pc.to_dict() for p, pc in sorted(res.counts.items())},
        "post_exempt": dict(res.post_exempt),
        "flags": [
            {**f.to_dict(), "status": decisions.get(f.id, {}).get("status", "open")} for f in flags
        ],
        "notes": res.notes,
        # 太阳[日不落] (m209.txt:377-378): the first 正午 round (the fields above are the extra
        # round's); null on an ordinary day
        "first_round": _round_json(res.first),
    }


def _round_json(r: RoundResult | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "tid": r.tid,
        "closes": r.closes.isoformat(),
        "votes": [v.to_dict() for v in r.verdicts],
        "valid": [v.to_dict() for v in r.verdicts if v.status.value == "counted"],
        "invalid": [v.to_dict() for v in r.verdicts if v.status.value != "counted"],
        "tally": r.tally.to_dict(),
        "out": r.tally.out,
        "decided_by": r.tally.decided_by,
        "rule": r.tally.rule,
    }
