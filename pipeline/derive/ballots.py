"""The ballots of a vote thread (one pass in order) and the director's recorded ballots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from engine.conduct import EditedVote, FoldedName
from engine.votes import Ballot, BallotKind, Evidence
from parsers.names import resolve_name
from parsers.records import Post, PostState
from parsers.text import visible_repr
from parsers.votes import VoteKind, parse_vote, split_proxy
from pipeline.derive.posts import (
    UNREADABLE,
    UNREADABLE_ZH,
    Roster,
    _ballot_kind,
    _distrusted,
    ballot_from_parse,
    counted_version,
    former_account,
    handed_over_zh,
)
from pipeline.derive.results import post_url
from pipeline.store import Store


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
    bare_abstain: bool = True,
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
            ballot = _director_ballot(
                post, version, roster, evidence, edited, target_rule, bare_abstain
            )
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
        ballot = ballot_from_parse(
            vp,
            voter=who or post.author,
            roster=roster,
            evidence=evidence,
            replied_to=replied,
            edited=edited,
            bare_abstain=bare_abstain,
        )
        left = roster.handed_over(post) if who is None else None
        if left is not None:  # the account's own name must not count for the slot it left
            why = handed_over_zh(left, roster.game.game.tz)
            ballot = replace(ballot, voter=former_account(left.player), not_player=why)
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
    bare_abstain: bool = True,
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
            bare_abstain=bare_abstain,
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
