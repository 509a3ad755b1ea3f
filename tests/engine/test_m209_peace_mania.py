"""m209: 平安日 from the tally's conclusion, the day's top always said, the
sun's block named by its status, and the [狂躁] voter's deadline (the opening).

Every test quotes the rule text it checks (../shared/rules/m209.txt, file:line); the scenario
files ``scenarios/m209/peace_day*.toml``, ``dawn_*.toml``, ``exclusive_moon_cooldown.toml`` and
``noon_out_top.toml`` hold the engine-only cases.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from engine.kernel import DayInput, resolve_day
from engine.state import GameState, Phase, Status
from engine.votes import (
    Ballot,
    BallotKind,
    DayContext,
    Evidence,
    ModifierKind,
    VerdictStatus,
    judge_ballots,
    tally,
)
from tests.engine.rule_text import says
from tests.engine.test_m209_scenarios import RS, initial_state

TZ = timezone(timedelta(hours=8))
OPENS = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
CLOSES = datetime(2026, 12, 2, 22, 0, tzinfo=TZ)


def state_on_day_2(**setup: Any) -> GameState:
    return initial_state({"setup": {"start": "night:1", **setup}})


def ballot(voter: str, target: str | None, at: datetime, pid: int, **kw: Any) -> Ballot:
    kind = kw.pop("kind", BallotKind.ABSTAIN if target is None else BallotKind.VOTE)
    raw = "弃权" if target is None else target
    return Ballot(voter, kind, target, raw, None, Evidence(1, pid, pid, at, "u"), **kw)


def day_tally(state: GameState, ballots: list[Ballot]) -> tuple[Any, Any]:
    ctx = DayContext(
        day=2,
        opens=OPENS,
        closes=CLOSES,
        players=RS.vote_roster(state, opens=OPENS, red_at={}),
        sheriff=RS.vote_sheriff(state),
        modifiers=RS.vote_modifiers(state, 2),
        ruleset="m209",
    )
    verdicts = judge_ballots(ballots, ctx, RS)
    return verdicts, tally(verdicts, ctx, RS)


# --------------------------------------------------------------------------- 平安日


def test_the_suns_day_block_is_named_by_its_status() -> None:
    says("m209.txt:376", "日[强制][翻牌]—— [常驻]：游戏日白天获得[不死]状态。")
    says("m209.txt:166", "若该角色持有[霸道]或[不死]状态，则不出局，公示平安日")
    state = state_on_day_2(roles={"子": "太阳"})
    blocks = [m for m in RS.vote_modifiers(state, 2) if m.kind is ModifierKind.BLOCK_OUT]
    assert [(m.player, m.source, m.rule) for m in blocks] == [("子", "[不死]", "m209.txt:376")]
    _verdicts, t = day_tally(state, [ballot("戊", "子", OPENS + timedelta(hours=1), 1)])
    assert (t.out, t.top, t.rule) == (None, ["子"], "m209.txt:166")
    assert t.decided_by == "唯一最高票；但子持有[不死]，不出局（平安日）"


def test_a_sun_guarded_at_night_is_blocked_once() -> None:
    says(
        "m209.txt:113",
        "所有状态除非说明可以叠加有效，否则相同名字的状态即使叠加，也不会重复施加效果",
    )
    state = state_on_day_2(roles={"子": "太阳"})
    guarded = Status("不死", "子", "己[暗夜护卫]", Phase.night(1).index, Phase.day(2).index)
    state = replace(state, statuses=(*state.statuses, guarded))
    blocks = [m for m in RS.vote_modifiers(state, 2) if m.kind is ModifierKind.BLOCK_OUT]
    assert [(m.player, m.source, m.rule) for m in blocks] == [("子", "[不死]", "")]
    _verdicts, t = day_tally(state, [ballot("戊", "子", OPENS + timedelta(hours=1), 1)])
    assert t.decided_by == "唯一最高票；但子持有[不死]，不出局（平安日）"


def test_the_resolved_day_announces_the_top_why_the_flip_and_the_peace() -> None:
    says("m209.txt:166", "则不出局，公示平安日")
    says("m209.txt:167", "将只宣布当天谁是最高票")
    # the sun's own [不死] is 日[强制][翻牌]: kept in by it, his card is turned over
    says("m209.txt:63", "此技能必须翻开身份牌才能发动")
    state = state_on_day_2(roles={"子": "太阳"})
    _verdicts, t = day_tally(
        state,
        [ballot(v, "子", OPENS + timedelta(hours=i), i) for i, v in enumerate(("戊", "己"), 1)],
    )
    new, report = resolve_day(state, DayInput.from_tally(t), RS)
    assert report.public == ("今日最高票：子，持有[不死]，不出局", "子翻牌：太阳", "今日平安日")
    assert new.player("子").alive and not report.deaths


def test_no_top_is_said_too() -> None:
    """A day with no top: the 公示 says so, so a draft built on the engine's lines keeps it."""
    says("m209.txt:169", "否则警长投票的角色为最高票，否则没有最高票")
    state = state_on_day_2(roles={"丑": "骑士"})  # no 替罪羊 to void the tie
    _verdicts, t = day_tally(
        state,
        [
            ballot("戊", "甲", OPENS + timedelta(hours=1), 1),
            ballot("己", "乙", OPENS + timedelta(hours=2), 2),
        ],
    )
    assert t.out is None and t.decided_by == "平票，没有警长，无人出局（没有最高票）"
    _new, report = resolve_day(state, DayInput.from_tally(t), RS)
    assert "今日没有最高票" in report.public and "今日平安日" not in report.public


def test_a_scapegoats_void_tie_is_said_as_such() -> None:
    says("m209.txt:346", "当日最高票产生的[投票出局]无效")
    day = DayInput(
        2,
        decided_by="平票，替罪羊[冤死]发动，当日最高票产生的投票出局无效",
        rule="m209.txt:343",
    )
    _new, report = resolve_day(state_on_day_2(), day, RS)
    assert "今日平票，当日最高票产生的投票出局无效" in report.public


# --------------------------------------------------------------------------- [狂躁]


def test_mania_forbids_a_change_as_before() -> None:
    says("m209.txt:97", "该状态下需要在开门之前立刻投当天的放逐投票且不允许改票")
    state = state_on_day_2(statuses=[["戊", "狂躁", ""]])
    kinds = {(m.player, m.kind.value) for m in RS.vote_modifiers(state, 2)}
    assert ("戊", "no_change") in kinds


def test_mania_sets_the_opening_as_the_deadline() -> None:
    says("m209.txt:97", "开门之前未决定则默认弃票")
    state = state_on_day_2(statuses=[["戊", "狂躁", ""]])
    mods = [m for m in RS.vote_modifiers(state, 2) if m.player == "戊"]
    assert any(
        m.kind is ModifierKind.BEFORE_OPEN and m.source == "[狂躁]" and m.rule == "m209.txt:97"
        for m in mods
    )


def test_a_mania_vote_after_the_opening_does_not_count() -> None:
    says("m209.txt:97", "该状态下需要在开门之前立刻投当天的放逐投票")
    state = state_on_day_2(statuses=[["戊", "狂躁", ""]])
    verdicts, t = day_tally(state, [ballot("戊", "甲", OPENS + timedelta(hours=1), 1)])
    (v,) = verdicts
    assert v.status is VerdictStatus.INVALID and v.rule == "m209.txt:97"
    assert "[狂躁]" in v.reason
    assert t.counts == {} and "戊" in t.abstained  # 开门之前未决定则默认弃票


def test_a_mania_proxy_before_the_opening_counts() -> None:
    says("m209.txt:97", "没有本状态也可以开门代投装作被狂躁")
    state = state_on_day_2(statuses=[["戊", "狂躁", ""]])
    early = ballot("戊", "甲", OPENS - timedelta(minutes=30), 1, kind=BallotKind.PROXY)
    verdicts, t = day_tally(state, [early])
    assert verdicts[0].status is VerdictStatus.COUNTED
    assert t.counts == {"甲": 1}
