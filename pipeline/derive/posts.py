"""The posts as the count reads them: player substitutions, the roster (who posts as whom),
the counted version of an edited post, a parsed vote as a ballot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, tzinfo

from engine.votes import Ballot, BallotKind, Evidence
from parsers.names import RosterEntry, resolve_name
from parsers.records import MarkKind, Post, PostState
from parsers.votes import VoteKind, VoteParse
from pipeline.derive.journal_view import _dt
from pipeline.game.gamefile import Game
from pipeline.store import PostSketch, Store, post_from_row

HIDDEN_MARKS = {MarkKind.HIDDEN_COLOUR, MarkKind.TINY, MarkKind.HIDE_TAG}


#: the hidden-text marks as the conduct flags name them (engine.conduct.HIDDEN_ZH)
HIDDEN_KEYS = {MarkKind.HIDDEN_COLOUR: "colour", MarkKind.TINY: "tiny", MarkKind.HIDE_TAG: "hide"}


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
        for r in store.query(
            "SELECT * FROM journal_substitutions WHERE revoked_at IS NULL ORDER BY from_at, id"
        )
    ]


def former_account(player: str) -> str:
    """How a ballot names the account that left ``player``'s slot to a 替补 (never the player)."""
    return f"{player}（原账号）"


def handed_over_zh(sub: Substitution, tz: tzinfo) -> str:
    """Why a post by the account that left a slot is no vote, as its verdict says (the time in
    the game's zone ``tz``)."""
    when = sub.since.astimezone(tz).strftime("%m-%d %H:%M")
    return f"{sub.player} 已于 {when} 由替补 {sub.name} 接替，原账号此后的帖子不计票"


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

    def handed_over(self, post: Post | PostSketch) -> Substitution | None:
        """The 替补 that took the slot from this post's account before the post was made (the
        account played the slot once, a substitute plays it now); None otherwise."""
        if not self.subs or post.posted_at is None:
            return None
        taken = [s for s in self.subs if s.since <= post.posted_at]
        played = {self.uid_of[s.player] for s in taken} | {s.uid for s in taken}
        if not post.uid or post.uid not in played or self.player_of(post) is not None:
            return None
        slot = self.by_uid.get(post.uid) or next(s.player for s in taken if s.uid == post.uid)
        return [s for s in taken if s.player == slot][-1]

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
    bare_abstain: bool = True,
) -> Ballot:
    """The ballot a parsed vote post makes. ``bare_abstain``: the rule set reads a bare line
    ``弃权`` as an abstention; False where its text says 投弃权票时，须在投票对象中填写“弃权” —
    then such a post is a vote in the wrong format (invalid, to be corrected by a new post)."""
    kind = BallotKind.PROXY if proxy and vp.valid else _ballot_kind(vp)
    target: str | None = None
    problem = vp.problem
    if vp.bare and not bare_abstain:
        kind = BallotKind.INVALID
        problem = "投票格式错误：弃权须写在“投票对象：”之后（应写“投票对象：弃权”）"
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
