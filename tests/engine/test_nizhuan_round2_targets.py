"""nizhuan 逆转轮: targets named by card, bare names of a player with one
card left, and the new round's first day as the sheriff election.

Every test quotes the rule text it checks (../shared/rules/nizhuan.txt, file:line).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from engine.kernel import RESOLVE, EngineError
from engine.rulesets.nizhuan import election_day, split_target
from engine.votes import Ballot, BallotKind, DayContext, Evidence, judge_ballots, tally
from tests.engine.rule_text import says
from tests.engine.test_nizhuan_support import (
    RS,
    act,
    alive,
    day,
    deaths,
    night,
    outcome,
    start,
    through_history,
)

TZ = timezone(timedelta(hours=8))


def round_two() -> object:
    """The 逆转轮 from day 5 on (the 历史轮 ended with night 4), its sheriff elected."""
    state = through_history(start())
    state, _ = day(state, 5, elected="丁的第二身份")
    return state


# --------------------------------------------------------------------------- the hooks


@pytest.mark.parametrize(
    ("raw", "parsed"),
    [
        ("傻树的第二身份", ("傻树", 2)),
        ("傻树的第一身份", ("傻树", 1)),
        ("傻树#2", ("傻树", 2)),
        ("傻树", ("傻树", None)),
    ],
)
def test_split_target_reads_the_vote_format(raw: str, parsed: tuple[str, int | None]) -> None:
    says("nizhuan.txt:196", "投票对象：傻树的第一身份")
    says("nizhuan.txt:200", "改票对象：不见的第二身份")
    assert split_target(raw) == parsed
    assert RS.split_target(raw) == parsed
    # what the pipeline stores for a card target: the roster name and the card
    name, card = parsed
    assert RS.unit_label(name, card) == (
        "傻树" if card is None else f"傻树的第{'一二'[card - 1]}身份"
    )


def test_resolve_target_names_the_card_in_play() -> None:
    says("nizhuan.txt:155", "1，所有玩家的第二身份加入游戏，共16张身份。")
    says("nizhuan.txt:51", "已经公示的出局角色不属于游戏范畴，不允许被选为技能或投票的目标")
    state = round_two()
    state, report = night(state, 5, act("甲", "毒药", "辛的第一身份", card="第二身份"))
    assert ("辛", 1, "女巫[毒药]") in deaths(report)
    assert RS.resolve_target("辛的第二身份", state) == "辛的第二身份"
    assert RS.resolve_target("辛#2", state) == "辛的第二身份"
    # one card left in play: the bare name is that card (the out one is not counted)
    assert RS.resolve_target("辛", state) == "辛的第二身份"
    assert RS.resolve_target("戊", state) == "戊的第二身份"  # both in play: the highest
    with pytest.raises(EngineError, match="辛的第一身份已出局，不能被选为目标"):
        RS.resolve_target("辛的第一身份", state)
    with pytest.raises(EngineError, match="目标「路人#2」不在名单中"):
        RS.resolve_target("路人#2", state)


def test_history_round_second_card_is_not_in_play_yet() -> None:
    says("nizhuan.txt:138", "1，所有玩家的第一身份加入游戏，共8张身份。")
    state, _ = day(start(), 1, elected="丁的第一身份")
    assert RS.resolve_target("辛", state) == "辛的第一身份"
    with pytest.raises(EngineError, match="辛的第二身份尚未入场"):
        RS.resolve_target("辛的第二身份", state)


# --------------------------------------------------------------------------- night targets


def test_round_two_antidote_takes_a_card_label() -> None:
    """The 救药 target "戊的第二身份" was refused as "已出局" (the label is not a name)."""
    says("nizhuan.txt:93", "女巫可以选择一名角色，对其使用救药。该角色当晚不会因被指杀而出局")
    says("nizhuan.txt:196", "投票对象：傻树的第一身份")
    state = round_two()
    _, report = night(state, 5, act("甲", "救药", "戊的第二身份", card="第二身份"))
    status, reason = outcome(report, "甲", "救药")
    assert (status, reason) == ("done", "戊当晚不会因被指杀而出局；女巫失去<通灵>")


@pytest.mark.parametrize("target", ["辛的第二身份", "辛#2"])
def test_round_two_poison_takes_a_card_label(target: str) -> None:
    says("nizhuan.txt:94", "女巫可以毒杀一名角色，令其出局")
    state = round_two()
    _, report = night(state, 5, act("甲", "毒药", target, card="第二身份"))
    assert outcome(report, "甲", "毒药") == ("done", "辛的第二身份当晚出局（毒药结算）")
    assert deaths(report) == [("辛", 2, "女巫[毒药]")]


def test_an_out_card_label_is_refused_with_the_reason() -> None:
    says("nizhuan.txt:51", "不允许被选为技能或投票的目标")
    state = round_two()
    state, _ = night(state, 5, act("甲", "毒药", "辛的第一身份", card="第二身份"))
    state, _ = day(state, 6)
    _, report = night(state, 6, act("甲", "救药", "辛的第一身份", card="第二身份"))
    status, reason = outcome(report, "甲", "救药")
    assert status == "invalid"
    assert reason == "辛的第一身份已出局，不能被选为目标（《逆转时空》规则 · 出局，nizhuan.txt:51）"


# --------------------------------------------------------------------------- the new round's day 1


def test_the_transition_says_the_new_first_day_elects() -> None:
    says("nizhuan.txt:156", "2，开始第一天讨论日，竞选警长")
    state = start()
    state, _ = day(state, 1, elected="丁的第一身份")
    assert not RS.sheriff_election_day(state, 1)  # the game file says day 1 (round 1)
    for n in range(1, 5):
        state, report = night(state, n, act("丙", "杀人", choice="放弃"))
        if n < 4:
            assert not RS.sheriff_election_day(state, n + 1)
            state, _ = day(state, n + 1)
    assert any("逆转轮从第5天开始" in p and "第5天竞选警长" in p for p in report.public)
    assert RS.sheriff_election_day(state, 5) and election_day(state, 5)
    assert not RS.sheriff_election_day(state, 6)
    state, _ = day(state, 5, elected="丁的第二身份")
    assert not RS.sheriff_election_day(state, 6)


def test_a_declared_reversal_day_is_no_election_before_the_history_round_ends() -> None:
    says("nizhuan.txt:123", "历史轮中，游戏满足以下条件时，第一轮游戏立刻结束。")
    state = RS.setup_state(
        [(p.name, [c.name for c in p.cards]) for p in start().players],
        settings={"reversal_day": "4"},
    )
    assert not RS.sheriff_election_day(state, 4)


def test_the_new_first_day_counted_as_an_exile_puts_nobody_out() -> None:
    """A tally made as an exile on the 逆转轮's first day (a game file without the election)
    is not applied: the day elects (nizhuan.txt:156); the director is asked to count again."""
    says("nizhuan.txt:156", "2，开始第一天讨论日，竞选警长")
    state = through_history(start())
    state, report = day(state, 5, out="辛的第二身份")
    assert deaths(report) == []
    assert alive(state, "辛", 2)
    assert [(p.who, p.skill) for p in report.pending] == [("导演", "竞岗")]
    assert (report.pending[0].phase, report.pending[0].number) == ("day", 5)
    assert report.pending[0].prompt == (
        "第5天是逆转轮的第一天讨论日，应竞选警长（nizhuan.txt:156）；计票却按放逐投票给出了"
        f"最高票辛的第二身份，未让其出局：请按警长竞选重新计票后重新结算（{RESOLVE}）"
    )


# --------------------------------------------------------------------------- votes


def _round_two_tally(target: str, card: int | None) -> object:
    state = round_two()
    state, _ = night(state, 5, act("甲", "毒药", "辛的第一身份", card="第二身份"))
    opens = datetime(2026, 12, 6, 10, 0, tzinfo=TZ)
    roster = RS.vote_roster(state, opens=opens, red_at={})
    own = Ballot(
        "乙",
        BallotKind.VOTE,
        target,
        target if card is None else f"{target}的{'第一身份' if card == 1 else '第二身份'}",
        None,
        Evidence(99, 7, 7, opens + timedelta(hours=1), "u"),
        card_index=card,
    )
    ctx = DayContext(
        day=6,
        opens=opens,
        closes=opens + timedelta(hours=12),
        players=roster,
        sheriff=RS.vote_sheriff(state),
        ruleset="nizhuan",
    )
    verdicts = judge_ballots((own,), ctx, RS)
    return verdicts[0], tally(verdicts, ctx, RS)


def test_round_two_vote_for_a_card_label_counts() -> None:
    says("nizhuan.txt:196", "投票对象：傻树的第一身份")
    verdict, t = _round_two_tally("辛", 2)
    assert verdict.reason == "有效票：投给辛的第二身份"
    assert t.out == "辛的第二身份"


def test_round_two_bare_name_of_a_player_with_one_card_left_counts() -> None:
    """The first card is out: "辛" can only mean the second (the out card is not counted)."""
    says("nizhuan.txt:51", "已经公示的出局角色不属于游戏范畴，不允许被选为技能或投票的目标")
    verdict, t = _round_two_tally("辛", None)
    assert verdict.reason == "有效票：投给辛的第二身份"
    assert t.out == "辛的第二身份"
