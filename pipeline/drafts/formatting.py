"""What the contexts share: votes, times, post links and labels, a tally's counts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, tzinfo
from fractions import Fraction
from typing import Any

from engine.rulesets import get_ruleset
from engine.rulesets.base import zh_votes
from engine.votes import Evidence, Tally, VerdictStatus, VoteVerdict
from pipeline.derive import DayResult
from pipeline.drafts.bbcode import BBCode, bbcode_escape
from pipeline.game.gamefile import Day, Game


def _votes(value: Fraction) -> str:
    """Exact votes as a director writes them: 5, 5.5, 1/3."""
    return zh_votes(value)


def _when(dt: datetime, tz: tzinfo) -> str:
    local = dt.astimezone(tz)
    return f"{local.month}月{local.day}日 {local:%H:%M}"


def _announce_tid(game: Game, day: Day) -> int | None:
    """The thread announcements go to: the rule set's ``announce_in`` (m209.txt:155 and
    zhenyan.txt:31 say the discussion thread), else the other of discussion/vote."""
    first = get_ruleset(game.game.ruleset).announce_in
    other = "vote" if first == "discussion" else "discussion"
    tid: int | None = getattr(day, first) or getattr(day, other)
    return tid


def findpost_url(tid: int, pid: int) -> str:
    """A link to the post that finds it whatever floor it shows now (docs/discuz.md §1.3: floors
    renumber after a delete; key everything by pid). Relative: Discuz prefixes the site URL."""
    return f"forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={pid}"


def _post_url(ev: Evidence) -> str:
    """The findpost link of a post in a thread; "" for a journal record (a 代投 by command)."""
    return findpost_url(ev.tid, ev.pid) if ev.pid > 0 and ev.tid > 0 else ""


def _post_link(ev: Evidence, text: str) -> BBCode | None:
    """``[url=…findpost…]text[/url]`` for a post in a thread; None for a journal record."""
    url = _post_url(ev)
    return BBCode(f"[url={url}]{bbcode_escape(text)}[/url]") if url else None


def _post_label(v: VoteVerdict) -> BBCode:
    """Where a vote was cast, pid-stable: a link to the post, never the floor it showed (a
    moderator's delete renumbers floors, and a public draft must not change with them)."""
    return _post_link(v.ballot.evidence, "原帖") or BBCode("导演代投")


def _counts_context(t: Tally) -> dict[str, Any]:
    ordered = sorted(t.counts, key=lambda c: (-t.counts[c], c))
    leader = t.top[0] if len(t.top) == 1 else None
    return {
        "public_counts": t.public_counts,
        "public_voters": t.public_voters,
        "counts": [
            {"name": c, "votes": _votes(t.counts[c]), "voters": list(t.voters.get(c, []))}
            for c in ordered
            if t.counts[c] > 0
        ],
        "abstained": list(t.abstained),
        "abstain_votes": _votes(
            sum((t.weights.get(v, Fraction(1)) for v in t.abstained), Fraction(0))
        ),
        "total": _votes(t.total),
        "weights": [
            {"voter": v, "weight": _votes(t.weights[v]), "why": t.weight_reasons[v]}
            for v in sorted(t.weight_reasons)
            if v in t.weights
        ],
        "leader": leader,
        "top": list(t.top),
    }


def _not_counted(
    res: DayResult, tz: tzinfo, verdicts: Sequence[VoteVerdict] | None = None
) -> list[dict[str, Any]]:
    rows = []
    for v in res.verdicts if verdicts is None else verdicts:
        if v.status not in (VerdictStatus.INVALID, VerdictStatus.IGNORED):
            continue
        if v.voter_unit is None:
            continue  # a non-player's post: not a vote at all
        b = v.ballot
        label = _post_label(v)
        rows.append(
            {
                "post": label,
                "floor": label,  # the name older templates use: the same pid-stable label
                "url": _post_url(b.evidence),
                "at": _when(b.evidence.at, tz),
                "voter": v.voter_unit,
                "target": b.target or b.target_raw,
                "reason": v.reason,  # public (the verdict's director-only note never goes here)
                "status": "无效" if v.status is VerdictStatus.INVALID else "不计",
            }
        )
    return rows


def _base_context(game: Game, day: int | None) -> dict[str, Any]:
    return {
        "game_title": game.game.title,
        "ruleset": game.game.ruleset,
        "day": day,
        "signature": BBCode(game.drafts.director_signature),
    }


def _living(game: Game, res: DayResult, at: datetime) -> list[str]:
    return [
        p.name
        for p in game.players
        if not (p.name in res.out_before and res.out_before[p.name] <= at)
    ]
