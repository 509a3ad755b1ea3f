"""A thread's posts as the conduct checks see them: one activity per post by a roster player."""

from __future__ import annotations

from collections.abc import Sequence

from engine.conduct import Activity
from parsers.inquiry import parse_inquiry
from parsers.records import MarkKind, Post
from pipeline.derive.posts import HIDDEN_KEYS, Roster
from pipeline.derive.results import post_url
from pipeline.derive.run import _NO_KINDS
from pipeline.store import PostSketch


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
                # each question mark a question, at least one a post (the inquiry thread's own
                # count, pipeline.derive.inquiry)
                questions=parse_inquiry(post.text).questions if role == "inquiry" else 1,
            )
        )
    return acts
