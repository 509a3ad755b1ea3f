"""Each draft kind's template context: the running tally, the result, the day's opening, the
电梯, the reminder, the cards, the inquiry's answers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from engine.cards import Card, CardEvent, Ledger, card_ledger
from engine.conduct import Flag, FlagKind
from engine.rulesets import get_ruleset
from engine.state import Phase
from engine.votes import Tally, VerdictStatus
from pipeline.derive import DayResult, Derivation, game_factions
from pipeline.derive.results import DayEnd
from pipeline.drafts.bbcode import BBCode, _escape_lines, bbcode_escape
from pipeline.drafts.formatting import (
    _base_context,
    _counts_context,
    _living,
    _not_counted,
    _post_link,
    _when,
    findpost_url,
)
from pipeline.game.gamefile import Day, Game, ThreadRole
from pipeline.game.threads import thread_closes

INQUIRY = ThreadRole.INQUIRY


def running_tally_context(
    game: Game, res: DayResult, *, as_of: datetime | None = None
) -> dict[str, Any] | None:
    """None when there is nothing to count yet, or when the set publishes the count only at the
    end of the day (zhenyan.txt:37 投票为匿名投票…在白天结束时，统计投票结果并公布).

    On a 太阳[日不落] day (m209.txt:377-378) the first 正午 round is counted until it ends
    (``as_of`` before ``first_closes``), the extra round afterwards; ``round`` names it."""
    verdicts, t, closes, label = res.verdicts, res.tally, res.day.closes, ""
    if res.first is not None:
        label = "额外一轮[正午]"
        if as_of is not None and as_of < res.first.closes:
            verdicts, t, closes = res.first.verdicts, res.first.tally, res.first.closes
            label = "第一轮[正午]"
    if t is None or not verdicts or not t.public_voters:
        return None
    tz = game.game.tz
    last = max(verdicts, key=lambda v: (v.ballot.evidence.at, v.ballot.evidence.pid))
    ev = last.ballot.evidence
    # by time and a link, never the floor: floors renumber after a delete
    link = _post_link(ev, "最新一票")
    last_vote = BBCode(_when(ev.at, tz) + (f"（{link}）" if link is not None else ""))
    not_counted = _not_counted(res, tz, verdicts)
    return {
        **_base_context(game, res.day.day),
        **_counts_context(t),
        "election": t.sheriff_election,
        "round": BBCode(label),  # our own words
        "last_vote": last_vote,
        "closes": _when(closes, tz),
        "invalid": not_counted,
        "invalid_count": len(not_counted),
    }


#: The note engine.rulesets.base.apply_block leaves on a stopped vote-out.
_BLOCKED_NOTE = "本应出局："


def _blocked_top(t: Tally) -> str | None:
    """The top a status stopped from going out (霸道/不死: 平安日, m209.txt:166), else None."""
    if t.out is not None or t.sheriff_election:
        return None
    try:
        block_rule = get_ruleset(t.ruleset).ref("block_out")
    except (KeyError, ValueError):
        return None
    if t.rule != block_rule:
        return None
    return next((n[len(_BLOCKED_NOTE) :] for n in t.notes if n.startswith(_BLOCKED_NOTE)), None)


def _day_top(t: Tally) -> str | None:
    """Who had the most votes as the rule set decides it (m209.txt:169: a skill's top, else the
    unique maximum, else the sheriff's pick) — also when a status stopped the vote-out."""
    if t.out is not None:
        return t.out
    return _blocked_top(t) or (t.top[0] if len(t.top) == 1 else None)


def _public_decided_by(t: Tally) -> str:
    """Why the day went as it did, in public words: a stopped vote-out says 平安日 and not which
    status (or whose skill) stopped it — that is the engine's 公示 to make, if any."""
    blocked = _blocked_top(t)
    return f"最高票{blocked}不出局，平安日" if blocked is not None else t.decided_by


def _mentioned(name: str | None, lines: Sequence[str]) -> bool:
    """A 公示 line already says who had the most votes (e.g. "今日最高票：壬，…")."""
    return name is not None and any(name in line and "最高票" in line for line in lines)


#: what the engine's 公示 says when the day's vote is not resolved at all (nizhuan.txt:123
#: 第一轮游戏立刻结束 — "当天的放逐投票不再结算"; tubian24.txt:183 游戏立即结束)
_NOT_RESOLVED = re.compile(r"(投票|竞选)不再结算")


def _vote_not_resolved(lines: Sequence[str]) -> bool:
    """A 公示 line says the day's vote is not resolved: no top, no 平安日 is said of it."""
    return any(_NOT_RESOLVED.search(line) for line in lines)


def result_context(
    game: Game,
    res: DayResult,
    announcements: Sequence[str] = (),
    *,
    ended: DayEnd | None = None,
) -> dict[str, Any] | None:
    """The vote result; ``announcements``: the engine's 公示 of the day once the director
    resolved it (白痴翻牌, 迷魂烤全羊, 警长移交 …, as the rule set words them). ``ended``: the
    game ended during the day, before its vote (zhenyan.txt:114 游戏立即结束): the post says
    so and counts nothing.

    The engine's lines replace the tally's out line, never its top: when they are empty or do
    not name the day's top, the top (m209 publishes only the top, m209.txt:167) is still said,
    and a stopped vote-out still says 平安日 (m209.txt:166) when no line does — unless a line
    says the day's vote is not resolved at all (nizhuan.txt:123: the 历史轮 ended during the
    day): then the counts are shown and no top or 平安日 is said of them."""
    t = res.tally
    if t is None:
        return None
    tz = game.game.tz
    not_counted = _not_counted(res, tz)
    lines = list(announcements)
    unresolved = _vote_not_resolved(lines)
    top = None if unresolved else _day_top(t)
    peace = None if unresolved else _blocked_top(t)
    first = res.first.tally if res.first is not None else None
    first_top = _day_top(first) if first is not None else None
    return {
        **_base_context(game, res.day.day),
        **_counts_context(t),
        "election": t.sheriff_election,
        "out": t.out,
        "elected": t.elected,
        "decided_by": _public_decided_by(t),
        # the day's top as the rule set decides it (also when a status stopped the vote-out)
        "day_top": top,
        "show_top": not lines or (top is not None and not _mentioned(top, lines)),
        # 平安日 (m209.txt:166): the top a [霸道]/[不死] stopped; shown unless a 公示 line says it
        "peace": peace,
        "show_peace": peace is not None and not any("平安日" in line for line in lines),
        # the count notes can name counts (m209 hides them) and the time a count was reached
        "notes": list(t.notes) if t.public_counts else [],
        "closes": _when(res.day.closes, tz),
        "invalid": not_counted,
        "invalid_count": len(not_counted),
        "announcements": lines,
        "ended": _ended_context(ended, tz),
        # 太阳[日不落] (m209.txt:377-378): the first 正午 round's top goes out at 黄昏 too
        "first": (
            {
                "out": first.out,
                "decided_by": _public_decided_by(first),
                "top": first_top,
                "show_top": not lines
                or (first_top is not None and not _mentioned(first_top, lines)),
                "peace": _blocked_top(first),
            }
            if first is not None
            else None
        ),
    }


def _ended_context(ended: DayEnd | None, tz: tzinfo) -> dict[str, str] | None:
    """When and why the game ended before the day's vote, as the result post says it."""
    if ended is None:
        return None
    what = ended.what.rstrip("。")
    if "投票不再结算" not in what:  # (the resolved day's sentence says it; a record may not)
        what += "，当天的投票不再结算"
    return {"at": _when(ended.at, tz) if ended.at is not None else "", "what": what}


def first_result_context(game: Game, res: DayResult) -> dict[str, Any] | None:
    """The first 正午 round of a 太阳[日不落] day: only its top is announced (m209.txt:167);
    the top is not out before 黄昏 and may still speak and vote (m209.txt:378)."""
    r = res.first
    if r is None:
        return None
    tz = game.game.tz
    not_counted = _not_counted(res, tz, r.verdicts)
    return {
        **_base_context(game, res.day.day),
        "top": _day_top(r.tally),
        "decided_by": _public_decided_by(r.tally),
        "peace": _blocked_top(r.tally),  # a [霸道]/[不死] top is not out (m209.txt:166)
        "first_closes": _when(r.closes, tz),
        "closes": _when(res.day.closes, tz),
        "vote_tid": res.day.vote,
        "invalid": not_counted,
        "invalid_count": len(not_counted),
    }


def _public_cause(d: Derivation, name: str, cause: str) -> str:
    stored, public = d.engine_outs.get(name, ("", ""))
    return public if stored == cause else cause


def _sexes(game: Game) -> list[dict[str, Any]]:
    """Each sex and its players in the game file's order, where the rule set announces them
    when the game starts (tubian24.txt:65); [] otherwise."""
    if get_ruleset(game.game.ruleset).sexes_announced is None:
        return []
    return [
        {"sex": sex, "names": [p.name for p in game.players if p.sex == sex]}
        for sex in ("男", "女")
        if any(p.sex == sex for p in game.players)
    ]


def day_open_context(game: Game, d: Derivation, prev: Day | None, day: Day) -> dict[str, Any]:
    """The opening of ``day``: the outs since ``prev`` opened (since the start for the first
    day, whose opening lists the first night's outs), the night's 公示, 遗言, the sheriff."""
    tz = game.game.tz
    since = prev.opens if prev is not None else None
    # by time; at the same time (a night's outs, all at the opening) in the order they went
    # out, as the engine listed them (公示出局名单时按角色出局的顺序排序, m209.txt:156)
    # 前一天因投票出局角色名单 (tubian24.txt:36) also names a 白痴 after [装傻], whose card
    # stays in the game (d.voted_in_game)
    listed = [
        *((at, name, cause) for name, (at, cause) in d.outs.items()),
        *(
            (at, name, cause)
            for name, (at, cause) in d.voted_in_game.items()
            if d.outs.get(name, (None,))[0] != at
        ),
    ]
    outs = sorted(
        (
            (at, name, cause)
            for at, name, cause in listed
            if (since is None or since < at) and at <= day.opens
        ),
        key=lambda o: o[0],
    )
    res = d.days.get(day.day)
    sheriff = res.sheriff if res is not None else None
    return {
        **_base_context(game, day.day),
        "prev_day": prev.day if prev is not None else None,
        # an out the engine resolved shows its public category, never the skill (女巫[毒药] …);
        # the director's own records (player out, red cards) keep the words written
        "outs": [
            {"name": n, "cause": _public_cause(d, n, c), "at": _when(at, tz)} for at, n, c in outs
        ],
        "announcements": list(d.public.get(Phase.night(day.day - 1).label, ())),
        # the 遗言 line of the day-open post (None: the rule set has no such line)
        "lastwords": get_ruleset(game.game.ruleset).lastwords.day_open_note,
        # 遗言 recorded for the players in the list (bansha lastwords add), in out order
        "said": [
            {"name": n, "text": _escape_lines(d.lastwords[n].text)}
            for _at, n, _c in outs
            if n in d.lastwords and not d.lastwords_refusal(n)
        ],
        "sheriff": sheriff,
        # 游戏开始时，会公布所有玩家的性别 (tubian24.txt:65): the first day's opening, by sex
        "sexes": _sexes(game) if prev is None else [],
        "opens": _when(day.opens, tz),
        "closes": _when(day.closes, tz),
        "discussion_tid": day.discussion,
        "vote_tid": day.vote,
        # the game was won in the night before the day (its 公示 says so): no vote follows
        "game_over": d.won is not None and d.won.index < Phase.day(day.day).index,
        "progress_tid": day.progress,
        "inquiry_tid": day.inquiry,
        "inquiry_closes": _when(inq, tz) if (inq := thread_closes(game, day, INQUIRY)) else None,
        # a rule set dealing two cards a player (m135, nizhuan): a card can go out alone
        "two_cards": (hands := get_ruleset(game.game.ruleset).hands) is not None
        and hands.size == 2,
        # 太阳[日不落] (m209.txt:377-378): the first 正午 round's thread and its end
        "first_vote_tid": day.first_vote,
        "first_closes": _when(day.first_closes, tz) if day.first_closes else None,
    }


def elevator_context(game: Game, res: DayResult) -> dict[str, Any] | None:
    day = res.day
    if day.discussion is None:
        return None
    # 离开游戏的角色在电梯楼中消失 (m209.txt:210)
    living = set(_living(game, res, day.opens)) - res.absent
    return {
        **_base_context(game, day.day),
        "tid": day.discussion,
        # after a 替补 the link follows the account that plays the slot now
        "players": [
            {"name": p.name, "uid": res.accounts.get(p.name, p.uid)}
            for p in game.players
            if p.name in living
        ],
    }


def reminder_context(
    game: Game, res: DayResult, *, as_of: datetime, minutes: int
) -> dict[str, Any] | None:
    voted: set[str] = set()
    tried: set[str] = set()
    for v in res.all_verdicts:  # a 日不落 day: a first-round vote is a vote of the day
        who = v.ballot.voter
        if v.status in (VerdictStatus.COUNTED, VerdictStatus.SUPERSEDED):
            voted.add(who)
        else:
            tried.add(who)
    # who may vote in the (last) round: not a leaver, not one the rules bar (m209 太阳[日], 白痴)
    living = [n for n in _living(game, res, as_of) if n not in res.absent | res.barred]
    not_voted = [n for n in living if n not in voted and n not in tried]
    invalid_only = [n for n in living if n not in voted and n in tried]
    if not not_voted and not invalid_only:
        return None
    tz = game.game.tz
    return {
        **_base_context(game, res.day.day),
        "minutes": minutes,
        "closes": _when(res.day.closes, tz),
        "vote_tid": res.day.vote,
        "not_voted": not_voted,
        "invalid_only": invalid_only,
        # anonymous votes (zhenyan): whose vote is invalid is not said in public
        "public_voters": res.tally.public_voters if res.tally is not None else True,
        "no_valid_vote": [n for n in living if n not in voted],
        "election": bool(res.tally and res.tally.sheriff_election),
        # a sped-up day judges no one for not voting (zhenyan.txt:158, m209.txt:719 …)
        "accelerated": res.accelerated,
    }


def _event_key(e: CardEvent) -> tuple[datetime, str, int, str, str]:
    # the order engine.cards replays events in
    return (e.at, e.player, e.colour.rank, e.source, e.reason)


_FLAG_DAY_RE = re.compile(r"^d(\d+)-")

# a floor or pid a director-side reason may name (floors renumber; a public draft names neither)
_POST_LABEL_RE = re.compile(r"(?:pid ?)?\d+楼|pid ?\d+")
# kinds whose evidence is what the player did post, not the violation itself
_NO_LINKS = frozenset({FlagKind.QIANSHUI, FlagKind.QIANSHUI_STREAK, FlagKind.NO_VOTE})


def _public_card(e: CardEvent, flag: Flag | None) -> tuple[str, list[str]]:
    """A card's reason as the public draft says it, and the findpost links to its posts."""
    if flag is None:
        if not _FLAG_DAY_RE.match(e.source):
            return e.reason, []  # the director's own words
        return _POST_LABEL_RE.sub("原帖", e.reason), []
    links: list[str] = []
    if flag.kind not in _NO_LINKS:
        links = [findpost_url(ev.tid, ev.pid) for ev in flag.evidence if ev.tid > 0 and ev.pid > 0]
    return flag.public_reason, links


def _event_day(e: CardEvent, d: Derivation, days: Sequence[Day]) -> int:
    flag = next((f for f in d.flags if f.id == e.source), None)
    if flag is not None:
        return flag.day
    if m := _FLAG_DAY_RE.match(e.source):
        return int(m.group(1))
    started = [day.day for day in days if day.opens <= e.at]
    return started[-1] if started else days[0].day


def cards_context(
    game: Game,
    d: Derivation,
    n: int,
    events: Sequence[CardEvent],
    *,
    revoked: Sequence[CardEvent] = (),
    announced: str = "",
) -> dict[str, Any] | None:
    """Cards given for day ``n`` (confirmed flags and by hand), with what they escalated to,
    and the cards withdrawn: ``revoked`` ones of the day that a posted 公示 printed
    (``announced``: the posted text) — the players must be told they no longer stand.

    Escalations are attributed by replaying the ledger one event at a time. A faction's loss is
    never printed (m209.txt:146 不予公示; elsewhere it would name a faction's players).
    """
    days = sorted(game.days, key=lambda x: x.day)
    if not days:
        return None
    factions = game_factions(game)
    ordered = sorted(events, key=_event_key)
    flags = {f.id: f for f in d.flags}
    rows: list[dict[str, Any]] = []
    escalations: list[str] = []
    red_outs: list[str] = []
    players: list[str] = []
    card_rules = get_ruleset(game.game.ruleset).cards
    prev: Ledger = card_ledger([], factions, rules=card_rules)
    last: Ledger | None = None
    for i, e in enumerate(ordered):
        ledger = card_ledger(ordered[: i + 1], factions, rules=card_rules)
        if _event_day(e, d, days) == n:
            rows.append(_card_row(e, flags.get(e.source)))
            escalations += list(ledger.escalations[len(prev.escalations) :])
            red_outs += [p for p in ledger.out_by_red if p not in prev.out_by_red]
            if e.player not in players:
                players.append(e.player)
            last = ledger
        prev = ledger
    withdrawn = [
        row
        for e in sorted(revoked, key=_event_key)
        if _event_day(e, d, days) == n
        and _printed(row := _card_row(e, flags.get(e.source)), announced)
    ]
    if not rows and not withdrawn:
        return None
    players += [w["player"] for w in withdrawn if w["player"] not in players]
    if last is None:  # every card of the day withdrawn: the cards up to that day
        last = card_ledger(
            [e for e in ordered if _event_day(e, d, days) <= n], factions, rules=card_rules
        )
    standing = []
    for name in players:
        pc = last.players.get(name)
        blue, yellow, red = (pc.blue, pc.yellow, pc.red) if pc is not None else (0, 0, 0)
        standing.append({"player": name, "blue": blue, "yellow": yellow, "red": red})
    return {
        **_base_context(game, n),
        "cards": rows,
        "withdrawn": withdrawn,
        "escalations": escalations,
        "red_outs": red_outs,
        "standing": standing,
        "blue": Card.BLUE.value,
        "yellow": Card.YELLOW.value,
        "red": Card.RED.value,
    }


def _card_row(e: CardEvent, flag: Flag | None) -> dict[str, Any]:
    """A card as the cards 公示 prints it."""
    reason, links = _public_card(e, flag)
    return {
        "player": e.player,
        "colour": e.colour.value,
        "reason": reason,
        "links": links,
        "what": flag.kind.zh if flag is not None else "导演判罚",
    }


def _printed(row: Mapping[str, Any], announced: str) -> bool:
    """Whether a posted cards 公示 (its text, ``announced``) printed this card's line."""
    esc = bbcode_escape
    return f"{esc(row['player'])}：{esc(row['colour'])}（{esc(row['reason'])}）" in announced


def inquiry_answers_context(
    game: Game, day: Day, answers: Sequence[tuple[int, str]]
) -> dict[str, Any]:
    tid = day.inquiry
    return {
        **_base_context(game, day.day),
        "tid": tid,
        "answers": [{"pid": pid, "answer": answer, "tid": tid} for pid, answer in answers],
    }
