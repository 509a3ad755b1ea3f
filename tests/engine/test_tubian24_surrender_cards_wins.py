"""变异屠边: a day's 投降 puts its faction out from its time, a win held for a day hunter's shot is
the night's decision, a red card judges only the carded player's own faction lost."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from engine import votes
from engine.ballots import BallotKind, Evidence
from engine.kernel import Action, DayInput, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.tubian24 import WOLF
from engine.state import GameState
from engine.votes import Ballot, DayContext
from tests.engine.rule_text import says
from tests.engine.test_tubian24_games import setup as standard_game

RS = get_ruleset("tubian24")
TZ = timezone(timedelta(hours=8))
OPENS = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)
CLOSES = datetime(2026, 12, 2, 22, 0, tzinfo=TZ)


def setup(master: str = "民1") -> GameState:
    return standard_game(master)


_pid = iter(range(1000, 100000))


def ballot(voter: str, target: str, when: datetime) -> Ballot:
    pid = next(_pid)
    return Ballot(
        voter=voter,
        kind=BallotKind.VOTE,
        target=target,
        target_raw=target,
        problem=None,
        evidence=Evidence(tid=2, pid=pid, floor=pid, at=when, url=f"u?pid={pid}"),
    )


def day_context(state, actions) -> DayContext:
    """The day's vote roster as the pipeline makes it (pipeline/cli/engine.py): the engine's
    roster, with the outs the day's timed actions cause (:meth:`Ruleset.timed_outs`)."""
    players = RS.vote_roster(state, opens=OPENS, red_at={})
    players = RS.with_timed_outs(players, RS.timed_outs(state, actions))
    return DayContext(
        day=1,
        opens=OPENS,
        closes=CLOSES,
        players=players,
        modifiers=RS.vote_modifiers(state, 1),
        ruleset="tubian24",
    )


def test_surrendered_wolves_neither_vote_nor_are_voted_after_the_surrender() -> None:
    says("tubian24.txt:53", "投降有效，狼人阵营判负并公示，所有狼人阵营玩家出局。")
    says("tubian24.txt:44", "角色出局结算结束后，不能继续参与讨论、投票、行使特权。")
    state, _ = resolve_night(setup(), [], RS, night=0)
    noon = datetime(2026, 12, 2, 12, 0, tzinfo=TZ)
    surrender = Action("狼1", "投降", (), at=noon.isoformat())
    ctx = day_context(state, [surrender])
    ballots = [
        ballot(w, "民1", datetime(2026, 12, 2, 10, 0, tzinfo=TZ))
        for w in ("狼1", "狼2", "狼3", "狼4", "狼5", "狼6")
    ]
    ballots += [
        ballot(v, "民2", datetime(2026, 12, 2, 13, 0, tzinfo=TZ)) for v in ("知", "巫", "守")
    ]
    _verdicts, day = votes.tally_votes(ballots, ctx, RS)
    # the six wolves were out from noon: their votes no longer count
    assert day.out == "民2", (day.out, dict(day.counts))


SMALL: tuple[tuple[str, str], ...] = (
    ("狼1", "狼人"),
    ("民1", "村民"),
    ("民2", "村民"),
    ("知", "先知"),
    ("巫", "女巫"),
    ("猎", "猎人"),
    ("白", "白眼狼"),
)


def test_a_win_held_for_a_day_hunter_is_a_pending_decision_of_the_night() -> None:
    says(
        "tubian24.txt:181", "投票后或者夜间结算完毕后，游戏状态满足某阵营所有胜利条件，游戏立即结束"
    )
    says("tubian24.txt:250", "猎人死在白天，发动最后一枪的截止时限为猎人出局后三十分钟内")
    state = RS.setup_state([(n, [c]) for n, c in SMALL], settings={"kill_order": "狼1"})
    state, _ = resolve_night(state, [Action("狼1", "杀人", ("民1",))], RS, night=0)
    state, _ = resolve_day(state, DayInput(1, out="猎", decided_by="唯一最高票"), RS)
    # the hunter's decision was never recorded; tonight the wolves kill the last 民
    kill = Action("狼1", "杀人", ("民2",))
    _after, night = resolve_night(state, [kill], RS, night=1)
    # the win waits for the hunter: the night must say so, or the game runs on (the next
    # day no longer waits, and its vote may hand the win to another faction)
    assert night.winner is None
    assert [(p.who, p.skill) for p in night.pending] == [("猎", "最后一枪")]
    # the director records that he gave up: the night ends the game
    gave_up = Action("猎", "最后一枪", (), "放弃")
    _after, night = resolve_night(state, [kill, gave_up], RS, night=1)
    assert night.winner == WOLF and not night.pending


def test_votes_on_a_surrendered_wolf_no_longer_count() -> None:
    says("tubian24.txt:53", "所有狼人阵营玩家出局")
    says("tubian24.txt:47", "不允许被选为技能或投票的目标")
    state, _ = resolve_night(setup(), [], RS, night=0)
    noon = datetime(2026, 12, 2, 12, 0, tzinfo=TZ)
    ctx = day_context(state, [Action("狼3", "投降", (), at=noon.isoformat())])
    morning = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
    ballots = [ballot(v, "狼2", morning) for v in ("民1", "民2", "民3", "民4")]
    ballots += [ballot(v, "民5", morning) for v in ("知", "巫")]
    _verdicts, day = votes.tally_votes(ballots, ctx, RS)
    assert day.out == "民5", (day.out, dict(day.counts))


def test_a_red_card_judges_only_the_players_own_faction_lost() -> None:
    says("tubian24.txt:264", "判下红牌的同时，导演有权视情况决定是否直接使该玩家所在的阵营判负")
    state, _ = resolve_night(setup(), [], RS, night=0)
    red = Action("狼1", "红牌罚下", (), "村民阵营")
    state, report = resolve_day(state, DayInput(1, actions=(red,)), RS)
    assert not [s for s in state.statuses if s.kind == "判负" and s.holder == "村民阵营"]
    (ask,) = [p for p in report.pending if p.skill == "判负"]
    assert "红牌罚下的狼1属于狼人阵营，不能因此判村民阵营负" in ask.prompt
