"""nizhuan (双身份 逆转时空): setup, each role, the two rounds, the NPC replay and the win check.

Every test quotes the rule text it checks (../shared/rules/nizhuan.txt, file:line).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from engine.ballots import Ballot, BallotKind, Evidence
from engine.kernel import EngineError
from engine.rulesets.nizhuan import npc_ballots, sheriff_unit, vote_actions_from_tally
from engine.votes import DayContext, judge_ballots
from tests.engine.rule_text import says
from tests.engine.test_nizhuan_support import (
    ROSTER,
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

# --------------------------------------------------------------------------- setup


def test_the_standard_roster_is_valid() -> None:
    says("nizhuan.txt:78", "狼人：2人")
    says("nizhuan.txt:112", "村民：7人")
    assert RS.validate_setup([(n, list(c)) for n, c in ROSTER]) == []
    assert RS.has_engine


@pytest.mark.parametrize(
    ("cards", "problem", "ref", "words"),
    [
        (
            ("村民", "狼人"),
            "狼人身份牌必须为第一身份",
            "nizhuan.txt:80",
            "这个身份牌必须为第一身份",
        ),
        (
            ("蚀时狼妃", "村民"),
            "蚀时狼妃身份牌必须为第二身份",
            "nizhuan.txt:85",
            "这个身份牌必须为第二身份",
        ),
        (
            ("定序王子", "村民"),
            "定序王子身份牌必须为第二身份",
            "nizhuan.txt:110",
            "这个身份牌必须为第二身份",
        ),
        (("狼人", "蚀时狼妃"), "双狼人阵营", "nizhuan.txt:74", "【双狼人阵营】"),
        (
            ("狼人", "预言家"),
            "狼人阵营+预言家/定序王子",
            "nizhuan.txt:74",
            "【狼人阵营+预言家/定序王子】",
        ),
    ],
)
def test_forbidden_cards(cards: tuple[str, str], problem: str, ref: str, words: str) -> None:
    says(ref, words)
    roster = [(n, list(c)) for n, c in ROSTER]
    roster[7] = ("辛", list(cards))
    problems = RS.validate_setup(roster)
    assert any(problem in p for p in problems), problems
    with pytest.raises(EngineError, match="开局设置有误"):
        RS.setup_state(roster)


def test_at_least_one_double_villager() -> None:
    says("nizhuan.txt:74", "将必定出现至少一个以下组合【双村民】")
    roster = [(n, list(c)) for n, c in ROSTER]
    roster[1] = ("乙", ["骑士", "村民"])
    roster[7] = ("辛", ["村民", "村民"])
    roster[6] = ("庚", ["村民", "蚀时狼妃"])
    # swap 辛's pair so nobody holds two 村民 cards
    roster[7] = ("辛", ["长老", "村民"])
    roster[5] = ("己", ["村民", "村民"])
    assert RS.validate_setup(roster) == []
    roster[5] = ("己", ["村民", "长老"])
    roster[7] = ("辛", ["村民", "村民"])
    roster[7], roster[5] = ("辛", ["村民", "长老"]), ("己", ["长老", "村民"])
    assert any("双村民" in p for p in RS.validate_setup(roster))


def test_history_round_plays_the_first_cards_only() -> None:
    says("nizhuan.txt:138", "所有玩家的第一身份加入游戏，共8张身份")
    state = start()
    assert all(p.cards[0].alive and not p.cards[1].alive for p in state.players)
    assert all(p.cards[1].out_cause == "未入场" for p in state.players)
    assert RS.actual_faction(state, "庚") == "狼人阵营"  # 村民+蚀时狼妃 (nizhuan.txt:72)
    assert state.player("庚").wolf_group  # 共群 (nizhuan.txt:77)


def test_night_zero_does_not_exist() -> None:
    says("nizhuan.txt:139", "开始第一天讨论日，竞选警长")
    state = RS.setup_state([(n, list(c)) for n, c in ROSTER])
    _, report = night(state, 0, act("丙", "杀人", "辛"))
    assert outcome(report, "丙", "杀人")[0] == "invalid"
    assert not report.deaths


# --------------------------------------------------------------------------- roles, round 1


def test_wolf_kill_and_seer_checks_a_card() -> None:
    says("nizhuan.txt:89", "预言家可以查验一位角色的一张身份牌，并得知该身份牌是什么阵营")
    says("nizhuan.txt:144", "3，被指杀的身份出局")
    state = start()
    state, _ = day(state, 1, elected="丁的第一身份")
    state, report = night(state, 1, act("丙", "杀人", "辛"), act("丁", "预言", "甲"))
    assert deaths(report) == [("辛", 1, "被指杀")]
    assert any(f.to == "丁" and "甲的第一身份的阵营为狼人阵营" in f.text for f in report.feedback)
    # 庚 (村民 first, 蚀时狼妃 second) is in the wolf group and may choose the kill
    state2 = start()
    state2, _ = day(state2, 1)
    _, report = night(state2, 1, act("庚", "杀人", "戊"))
    assert deaths(report) == [("戊", 1, "被指杀")]


def test_two_different_kills_are_both_invalid() -> None:
    says("nizhuan.txt:79", "可以指杀一名角色")
    state = start()
    state, _ = day(state, 1)
    _, report = night(state, 1, act("丙", "杀人", "辛"), act("甲", "杀人", "戊"))
    assert [r.outcome.value for r in report.actions] == ["invalid", "invalid"]
    assert "狼群共同指杀一名角色" in report.actions[0].reason
    assert not report.deaths


def test_witch_feedback_antidote_and_poison() -> None:
    says("nizhuan.txt:92", "通灵<强制> ——游戏日夜晚，反馈被指杀角色。")
    says("nizhuan.txt:93", "该角色当晚不会因被指杀而出局。<救药>使用时，失去技能<通灵>。")
    says("nizhuan.txt:94", "<毒药>发动后，该夜晚不可发动技能<救药>。")
    roster = [(n, list(c)) for n, c in ROSTER]
    roster[1] = ("乙", ["女巫", "村民"])
    roster[0] = ("甲", ["狼人", "骑士"])
    state = start(roster)
    state, _ = day(state, 1)
    state, report = night(state, 1, act("丙", "杀人", "辛"), act("乙", "救药", "辛"))
    assert any(f.to == "乙" and "辛的第一身份" in f.text for f in report.feedback)
    assert not report.deaths and outcome(report, "丙", "杀人")[0] == "blocked"
    state, _ = day(state, 2)
    state, report = night(state, 2, act("丙", "杀人", "戊"))
    assert not any(f.to == "乙" and "通灵" in f.text for f in report.feedback)  # lost 通灵
    assert deaths(report) == [("戊", 1, "被指杀")]
    assert ("戊", "最后一枪") in {(p.who, p.skill) for p in report.pending}


@pytest.mark.parametrize("antidote_first", [True, False, None])
def test_an_antidote_after_the_poison_the_same_night_is_refused(
    antidote_first: bool | None,
) -> None:
    """Only a 救药 used after the night's 毒药 is refused; one used before it saves. Without
    times the two are taken as the rule lists the witch's step, 救药 then 毒药."""
    says("nizhuan.txt:94", "<毒药>发动后，该夜晚不可发动技能<救药>。")
    says("nizhuan.txt:143", "女巫：执行<通灵>；选择<救药>、<毒药>目标。")
    roster = [(n, list(c)) for n, c in ROSTER]
    roster[1] = ("乙", ["女巫", "村民"])
    roster[0] = ("甲", ["狼人", "骑士"])
    state = start(roster)
    state, _ = day(state, 1)
    early, late = "2026-12-01T22:05:00+08:00", "2026-12-01T22:20:00+08:00"
    save, poison = act("乙", "救药", "辛"), act("乙", "毒药", "甲")
    if antidote_first is not None:
        save = replace(save, at=early if antidote_first else late)
        poison = replace(poison, at=late if antidote_first else early)
    # the witch's actions listed poison first: the list's order does not decide
    _, report = night(state, 1, act("丙", "杀人", "辛"), poison, save)
    if antidote_first is False:
        assert outcome(report, "乙", "救药") == (
            "invalid",
            "<毒药>发动后，该夜晚不可发动<救药>（nizhuan.txt:94）",
        )
        assert deaths(report) == [("辛", 1, "被指杀"), ("甲", 1, "女巫[毒药]")]
    else:
        assert outcome(report, "乙", "救药")[0] == "done"
        assert deaths(report) == [("甲", 1, "女巫[毒药]")]


def test_elder_survives_the_first_kill_only() -> None:
    says("nizhuan.txt:102", "当长老第一次成为指杀的目标时不会出局")
    state = start()
    state, _ = day(state, 1)
    state, report = night(state, 1, act("丙", "杀人", "己"))
    assert not report.deaths
    state, _ = day(state, 2)
    state, report = night(state, 2, act("丙", "杀人", "己"))
    assert deaths(report) == [("己", 1, "被指杀")]


def test_elder_voted_out_takes_every_privileged_skill() -> None:
    says("nizhuan.txt:102", "当长老因投票、决斗、毒药、最后一枪出局时，所有特权身份将失去技能")
    state = start()
    state, _ = day(state, 1)
    state, _ = night(state, 1, act("丙", "杀人", "辛"))
    state, report = day(state, 2, out="己的第一身份")
    # the effect is the director's to see; the public never learns the elder went out
    # (游戏进行期间以任何方式出局的角色均不公示其身份, nizhuan.txt:40)
    assert not any("长老" in line for line in report.public)
    assert any("所有特权身份失去技能" in e.result for e in report.log)
    state, report = night(state, 2, act("丙", "杀人", "戊"), act("丁", "预言", "甲"))
    assert outcome(report, "丁", "预言")[0] == "invalid"
    assert outcome(report, "丙", "杀人")[0] == "done"  # wolves keep <杀人> (ruling)
    assert not any(p.skill == "最后一枪" for p in report.pending)  # the hunter lost its shot


def test_hunter_shoots_another_card_at_once() -> None:
    says("nizhuan.txt:98", "猎人可以选择一名其他角色，对其开枪。该角色立即出局")
    says("nizhuan.txt:148", "中途若触发最后一枪，则该技能在对应步骤之后插入结算。")
    state = start()
    state, _ = day(state, 1)
    _, report = night(state, 1, act("丙", "杀人", "戊"), act("戊", "最后一枪", "丙"))
    assert deaths(report) == [("戊", 1, "被指杀"), ("丙", 1, "戊的[最后一枪]")]
    _, report = night(state, 1, act("丙", "杀人", "戊"), act("戊", "最后一枪", "戊"))
    assert outcome(report, "戊", "最后一枪")[0] == "invalid"


def test_knight_duel_from_day_two_public_and_closes_on_a_wolf_card() -> None:
    says("nizhuan.txt:106", "选择一个角色的身份牌决斗，公布骑士身份牌和决斗对象的身份牌所属阵营")
    says("nizhuan.txt:106", "若决斗目标为【狼人阵营】的身份牌，则会立刻关门")
    state = start()
    _, report = day(state, 1, elected="丁的第一身份", actions=[act("乙", "决斗", "甲")])
    assert outcome(report, "乙", "决斗")[0] == "invalid"
    state, _ = day(state, 1, elected="丁的第一身份")
    state, _ = night(state, 1, act("丙", "杀人", choice="放弃"))
    state, report = day(state, 2, actions=[act("乙", "决斗", "甲的第一身份")])
    assert deaths(report) == [("甲", 1, "乙的[决斗]")]
    assert any("村民阵营" in p and "狼人阵营" in p and "立刻关门" in p for p in report.public)
    # a village card is out too (决斗目标也会立刻出局), and the day does not close
    state2 = start()
    state2, _ = day(state2, 1)
    state2, _ = night(state2, 1, act("丙", "杀人", choice="放弃"))
    _, report = day(state2, 2, actions=[act("乙", "决斗", "辛")])
    assert deaths(report) == [("辛", 1, "乙的[决斗]")]
    assert not any("立刻关门" in p for p in report.public)


def test_sheriff_hand_over_is_recorded() -> None:
    says("nizhuan.txt:118", "须选择一名未出局的角色来继任警长，或是流失警长让本轮游戏没有警长")
    state = start()
    state, _ = day(state, 1, elected="辛的第一身份")
    assert state.sheriff == "辛"
    state, _ = night(state, 1, act("丙", "杀人", "辛"), act("辛", "殉职", "戊"))
    assert state.sheriff == "戊"
    assert any(m.skill == "记录:殉职" for m in state.memory)


# --------------------------------------------------------------------------- the two rounds


def test_history_ends_after_night_four() -> None:
    says("nizhuan.txt:126", "3，第四天夜晚结束。")
    says("nizhuan.txt:155", "所有玩家的第二身份加入游戏，共16张身份")
    state = through_history(start())
    assert dict(state.settings) == {"round": "2", "reversal_day": "5"}
    assert all(c.alive for p in state.players for c in p.cards)
    assert state.sheriff is None  # a new game: a new election (nizhuan.txt:156)
    assert state.winner is None


def test_history_ends_when_every_wolf_is_out_and_an_empty_night_follows() -> None:
    says("nizhuan.txt:124", "1，所有狼人出局")
    state = start()
    state, _ = day(state, 1)
    state, _ = night(state, 1, act("丙", "杀人", "辛"))
    state, _ = day(state, 2, actions=[act("乙", "决斗", "甲")])
    state, report = day_after_night(state)
    assert any("历史轮结束（所有狼人出局" in p for p in report.public)
    assert dict(state.settings)["reversal_day"] == "4"
    _, report = night(state, 3, act("庚", "杀人", "乙"))
    assert outcome(report, "庚", "杀人")[0] == "invalid" and not report.deaths


def day_after_night(state):  # type: ignore[no-untyped-def]
    state, _ = night(state, 2, act("丙", "杀人", choice="放弃"))
    return day(state, 3, out="丙的第一身份")


def test_the_rule_texts_example() -> None:
    """nizhuan.txt:24: A (狼人+女巫) is dueled by B's knight on day 2; in round 2 A's witch
    poisons the knight on the first night, so the recorded duel cannot happen."""
    says("nizhuan.txt:24", "使得骑士在预定的第二天决斗玩家A的狼人之前就已经出局")
    says(
        "nizhuan.txt:24",
        "则玩家B在第一轮记录的骑士操作无法发动，从而保护了玩家A的狼人牌可以继续游戏",
    )
    state = start()
    state, _ = day(state, 1, elected="丁的第一身份")
    state, _ = night(state, 1, act("丙", "杀人", "辛"))
    state, report = day(state, 2, actions=[act("乙", "决斗", "甲")])
    assert deaths(report) == [("甲", 1, "乙的[决斗]")]
    state, _ = night(state, 2, act("丙", "杀人", "戊"), act("戊", "最后一枪", choice="放弃"))
    state, report = day(state, 3, out="丙的第一身份")
    assert dict(state.settings)["reversal_day"] == "4"
    state, _ = night(state, 3)
    state, _ = day(state, 4, elected="丁的第二身份")
    state, report = night(state, 4, act("甲", "毒药", "乙的第一身份"))
    assert ("辛", 1, "被指杀") in deaths(report)  # the recorded kill of night 1 repeats
    assert ("乙", 1, "女巫[毒药]") in deaths(report)
    state, report = day(state, 5)
    status, reason = outcome(report, "乙", "决斗")
    assert status == "fizzled" and "历史记录的行动未发生" in reason and "已出局" in reason
    assert alive(state, "甲", 1)


def test_round_two_player_cannot_drive_the_npc_card() -> None:
    says("nizhuan.txt:22", "角色需要通过第二身份牌的操作，和第一轮固定操作的NPC一起进行游戏")
    state = through_history(start())
    state, _ = day(state, 5, elected="丁的第二身份")
    _, report = night(state, 5, act("丁", "预言", "甲"))
    assert outcome(report, "丁", "预言")[0] == "invalid"
    assert "NPC" in outcome(report, "丁", "预言")[1]


def test_round_two_recorded_kill_stands_unless_none_was_recorded() -> None:
    says(
        "nizhuan.txt:79",
        "若第一轮狼人有记录杀人操作（包括空刀）则不可更改，若没有杀人操作，则第二轮可以共同指杀一名角色",
    )
    state = start()
    state, _ = day(state, 1)
    state, _ = night(state, 1, act("丙", "杀人", "辛"))
    state, _ = day(state, 2, out="甲的第一身份")
    state, _ = night(state, 2, act("丙", "杀人", "戊"), act("戊", "最后一枪", "丙"))
    assert dict(state.settings)["reversal_day"] == "3"  # all wolves out after night 2
    state, _ = day(state, 3, elected="丁的第二身份")
    state, report = night(state, 3, act("庚", "杀人", "乙"))
    assert outcome(report, "庚", "杀人")[0] == "invalid"
    assert ("辛", 1, "被指杀") in deaths(report)
    state, _ = day(state, 4)
    state, report = night(state, 4, act("庚", "杀人", "乙"))
    # night 2's record: 丙 killed 戊 and 戊 shot 丙 → both repeat, whatever happens later
    assert ("戊", 1, "被指杀") in deaths(report)
    assert ("丙", 1, "戊的[最后一枪]") in deaths(report)
    state, _ = day(state, 5)
    _, report = night(state, 5, act("庚", "杀人", "乙"))
    assert outcome(report, "庚", "杀人")[0] == "done"  # nothing recorded for night 3
    assert ("乙", 2, "被指杀") in deaths(report)  # a bare name: the player's own card


def test_time_swallow_undoes_a_first_cards_next_day_and_frees_the_kill() -> None:
    says(
        "nizhuan.txt:84",
        "该身份于第二天所做的投票和使用技能的操作均视作未进行，若为狼人，则可以重新指杀新的目标",
    )
    state = start()
    state, _ = day(state, 1, elected="丁的第一身份", actions=[act("丙", "投票", "丁的第一身份")])
    for n in range(1, 5):
        state, _ = night(state, n, act("丙", "杀人", choice="放弃"))
        if n < 4:
            state, _ = day(state, n + 1, actions=[act("丙", "投票", "辛的第一身份")])
    assert npc_ballots(state, 5) == (("丙的第一身份", "丁的第一身份"),)
    state, _ = day(state, 5, elected="丁的第一身份")
    state, report = night(state, 5, act("庚", "时间吞噬", "丙"))
    assert outcome(report, "庚", "时间吞噬")[0] == "done"
    assert npc_ballots(state, 6) == ()  # 丙's first card's day-2 vote is undone
    state, _ = day(state, 6)
    state, report = night(state, 6, act("庚", "杀人", "戊"))
    assert outcome(report, "庚", "杀人")[0] == "done"
    assert ("戊", 2, "被指杀") in deaths(report)
    status, _reason = outcome(report, "丙", "杀人")  # the recorded 空刀 is lifted
    assert status == "fizzled"
    # the swallow is 限定
    state, _ = day(state, 7)
    _, report = night(state, 7, act("庚", "时间吞噬", "甲"))
    assert outcome(report, "庚", "时间吞噬")[0] == "invalid"


def test_prince_frees_a_first_card_and_is_wasted_against_the_swallow() -> None:
    says("nizhuan.txt:109", "那个第一身份的角色，在下一个白天和夜晚可以自由操作该身份")
    says("nizhuan.txt:109", "当和狼妃对同一身份牌使用技能时，重定之理会被无效并浪费")
    state = through_history(start())
    state, _ = day(state, 5, elected="丁的第二身份")
    s1, report = night(state, 5, act("丁", "重定之理", "丁"))
    assert any("重定之理" in p for p in report.public)  # public (发动该技能会公示)
    s1, _ = day(s1, 6)
    _, report = night(s1, 6, act("丁", "预言", "庚", choice="第二身份", card="第一身份"))
    assert outcome(report, "丁", "预言")[0] == "done"
    assert any("庚的第二身份的阵营为狼人阵营" in f.text for f in report.feedback)
    _, report = night(state, 5, act("丁", "重定之理", "甲"), act("庚", "时间吞噬", "甲"))
    assert outcome(report, "丁", "重定之理")[0] == "blocked"


def test_a_player_whose_second_card_is_out_has_no_voice_unless_the_prince_frees_him() -> None:
    says("nizhuan.txt:109", "若之前第二身份出局导致自己失去发言权力，也可以借此继续发言一天")
    says("nizhuan.txt:193", "另外，在逆转轮中，第一身份的投票会在一开始就固定投票对象")
    state = through_history(start())
    assert RS.voiceless(state, 4) == {}  # the 历史轮: one card each
    state, _ = day(state, 5, elected="丁的第二身份")
    poisoned, _ = night(state, 5, act("甲", "毒药", "戊的第二身份"))
    assert alive(poisoned, "戊", 1) and not alive(poisoned, "戊", 2)  # his first card plays on
    # no 潜水 or 未投票 for him: he may neither speak nor vote
    assert RS.voiceless(poisoned, 6) == {"戊": "第二身份已出局，失去发言权力（nizhuan.txt:109）"}
    assert RS.voter_cards(poisoned, 6) == {}  # his first card's vote is the fixed one
    freed, _ = night(state, 5, act("甲", "毒药", "戊的第二身份"), act("丁", "重定之理", "戊"))
    assert RS.voiceless(freed, 6) == {}
    assert RS.voter_cards(freed, 6) == {"戊": 1}  # he votes with the freed first card
    opens = datetime(2026, 12, 6, 10, tzinfo=timezone(timedelta(hours=8)))
    ctx = DayContext(
        day=6,
        opens=opens,
        closes=opens + timedelta(hours=12),
        players=RS.vote_roster(freed, opens=opens, red_at={}),
        ruleset="nizhuan",
    )
    post = Evidence(9, 77, 5, opens + timedelta(hours=1), "")
    own = Ballot(
        "戊", BallotKind.VOTE, "甲", "甲的第一身份", None, post, voter_card=1, card_index=1
    )
    [verdict] = judge_ballots((own,), ctx, RS)
    assert (verdict.status.value, verdict.voter_unit) == ("counted", "戊的第一身份")


def test_round_two_hunter_repeats_its_recorded_shot() -> None:
    says(
        "nizhuan.txt:98",
        "若该身份于第一轮中成功开枪，则第二轮无论什么时候出局，都会对预定的身份牌开枪",
    )
    state = start()
    state, _ = day(state, 1)
    state, _ = night(state, 1, act("丙", "杀人", "戊"), act("戊", "最后一枪", "辛"))
    for n in range(2, 5):
        state, _ = day(state, n)
        state, _ = night(state, n, act("丙", "杀人", choice="放弃"))
    state, _ = day(state, 5)
    # round 2 night 1 repeats the kill of 戊's hunter and its shot at 辛's first card
    state, report = night(state, 5)
    assert deaths(report) == [("戊", 1, "被指杀"), ("辛", 1, "戊的[最后一枪]")]


def test_a_swallowed_first_card_hunter_does_not_repeat_its_shot_that_day() -> None:
    says("nizhuan.txt:84", "该身份于第二天所做的投票和使用技能的操作均视作未进行")
    state = start()
    state, _ = day(state, 1, elected="丁的第一身份")
    state, _ = night(state, 1, act("丙", "杀人", choice="放弃"))
    state, _ = day(state, 2, out="戊的第一身份", actions=[act("戊", "最后一枪", "辛")])
    for n in range(2, 5):
        state, _ = night(state, n, act("丙", "杀人", choice="放弃"))
        if n < 4:
            state, _ = day(state, n + 1)
    state, _ = day(state, 5, elected="丁的第二身份")
    state, _ = night(state, 5, act("庚", "时间吞噬", "戊"))
    # day 2 again, 戊's hunter voted out as in the 历史轮: its recorded shot is undone too
    _, report = day(state, 6, out="戊的第一身份")
    assert deaths(report) == [("戊", 1, "投票出局")]
    assert outcome(report, "戊", "最后一枪")[0] == "fizzled"


def test_round_two_recorded_hand_over_or_lost() -> None:
    says("nizhuan.txt:118", "若第一身份没有记录移交操作或是交给的预定身份已经出局，则会流失警长")
    state = through_history(start())
    state, _ = day(state, 5, elected="辛的第一身份")
    # the recorded 空刀 of night 1 stands (nizhuan.txt:79); 甲's witch poisons the sheriff card
    s, report = night(state, 5, act("甲", "毒药", "辛的第一身份"), act("辛", "殉职", "戊"))
    assert ("辛", 1, "女巫[毒药]") in deaths(report)
    assert outcome(report, "辛", "殉职")[0] == "invalid"  # the NPC card follows its record
    assert any("没有记录移交操作，警长流失" in p for p in report.public)
    assert s.sheriff is None


def test_win_wolves_when_every_villager_card_was_out_once() -> None:
    says("nizhuan.txt:129", "所有村民阵营的村民牌，在两轮游戏中至少都出局过一次。")
    says("nizhuan.txt:132", "狼人身份和蚀时狼妃身份均出局。")
    state = through_history(start())
    assert state.winner is None
    state, _ = day(state, 5, elected="丁的第二身份")
    # village win: both 狼人 cards and the 蚀时狼妃 card out in round 2
    s, _ = night(state, 5, act("甲", "毒药", "庚的第二身份"))
    s, _ = day(s, 6, out="甲的第一身份")
    s, _ = night(s, 6, act("丙", "杀人", choice="放弃"))
    s, report = day(s, 7, out="丙的第一身份")
    assert s.winner == "村民阵营" and report.win_rule == "nizhuan.txt:132"


def test_vote_actions_from_a_tally() -> None:
    says("nizhuan.txt:21", "会记录历史轮中玩家的第一身份牌的全部操作【包括使用的技能，投票】")

    tally = SimpleNamespace(
        voters={"丁的第一身份": ["丙的第一身份", "甲的第一身份"]}, abstained=["辛的第一身份"]
    )
    actions = vote_actions_from_tally(tally)
    assert {(a.actor, a.targets, a.choice) for a in actions} == {
        ("丙", ("丁的第一身份",), None),
        ("甲", ("丁的第一身份",), None),
        ("辛", (), "弃权"),
    }


def test_win_wolves_counts_outs_of_both_rounds() -> None:
    says("nizhuan.txt:129", "所有村民阵营的村民牌，在两轮游戏中至少都出局过一次。")
    says("nizhuan.txt:127", "逆转轮中，游戏状态满足某阵营胜利条件之一，游戏立即结束")
    state = start()
    state, _ = day(state, 1)
    state, _ = night(state, 1, act("丙", "杀人", "庚"))  # 庚's first card: a 村民 card
    state, _ = day(state, 2, out="甲的第一身份")
    state, _ = night(state, 2, act("丙", "杀人", "辛"))  # 辛's first 村民 card
    state, _ = day(state, 3, out="丙的第一身份")  # every 狼人 out: the 历史轮 ends
    state, _ = night(state, 3)  # the night before the 逆转轮 is not resolved
    assert state.winner is None and dict(state.settings)["reversal_day"] == "4"
    state, _ = day(state, 4, elected="丁的第二身份")
    state, _ = night(state, 4, act("甲", "毒药", "乙的第二身份"))
    state, _ = day(state, 5, out="丙的第二身份")
    state, _ = night(state, 5)
    state, _ = day(state, 6, out="戊的第二身份")
    # the 历史轮 never reached its third night: no kill recorded, the wolves choose
    # (nizhuan.txt:83 若没有杀人操作，则第二轮可以共同指杀一名角色)
    state, _ = night(state, 6, act("庚", "杀人", "己的第二身份"))
    assert state.winner is None  # 辛's second 村民 card has never been out
    state, report = day(state, 7, out="辛的第二身份")
    assert state.winner == "狼人阵营" and report.win_rule == "nizhuan.txt:129"
    assert alive(state, "庚", 1) is False  # out in both rounds (the recorded kill repeated)


def test_a_night_whose_wolves_decided_no_kill_is_a_recorded_empty_kill() -> None:
    """No kill sent in a 历史轮 night is a 空刀 (nizhuan.txt:205), and a recorded 空刀 binds
    the 逆转轮's wolves that night (nizhuan.txt:83 包括空刀 … 不可更改)."""
    says("nizhuan.txt:205", "若届时狼群无法决定刀人对象，则视为空刀。")
    says("nizhuan.txt:83", "若第一轮狼人有记录杀人操作（包括空刀）则不可更改")
    state = start()
    state, _ = day(state, 1)
    state, report = night(state, 1)
    assert [(e.step, e.rule) for e in report.log if "视为空刀" in e.result] == [
        ("（1）杀人", "nizhuan.txt:205")
    ]
    for n in (2, 3, 4):
        state, _ = day(state, n)
        state, _ = night(state, n, act("丙", "杀人", "辛" if n == 2 else "戊"))
    assert dict(state.settings)["reversal_day"] == "5"
    state, _ = day(state, 5, elected="丁的第二身份")
    _, report = night(state, 5, act("庚", "杀人", "己的第二身份"))
    assert outcome(report, "庚", "杀人") == (
        "invalid",
        "第一轮狼人有记录的杀人操作（包括空刀），不可更改（nizhuan.txt:79）",
    )
    assert not report.deaths


def test_declared_reversal_day_is_checked_and_the_badge_is_a_card() -> None:
    says("nizhuan.txt:123", "历史轮中，游戏满足以下条件时，第一轮游戏立刻结束。")
    says("nizhuan.txt:117", "在游戏的第一天投票结束后，最先获得投票数最多的角色当选警长")
    state = RS.setup_state([(n, list(c)) for n, c in ROSTER], settings={"reversal_day": "6"})
    state, _ = night(state, 0)
    state, _ = day(state, 1, elected="丁的第一身份")
    assert sheriff_unit(state) == "丁的第一身份" and state.sheriff == "丁"
    for n in range(1, 4):
        state, _ = night(state, n, act("丙", "杀人", choice="放弃"))
        state, _ = day(state, n + 1)
    state, report = night(state, 4, act("丙", "杀人", choice="放弃"))
    assert [p.skill for p in report.pending] == ["逆转轮"]
    assert dict(state.settings)["reversal_day"] == "5"
    assert sheriff_unit(state) is None


def test_red_card_puts_the_character_out_without_skills() -> None:
    says("nizhuan.txt:50", "红牌罚下出局的角色没有遗言权利，除情侣<殉情>外不触发任何技能")
    state = start()
    state, _ = day(state, 1)
    _, report = night(state, 1, act("戊", "红牌罚下"), act("戊", "最后一枪", "丙"))
    assert deaths(report) == [("戊", 1, "红牌罚下")]
    assert not report.pending


def test_history_ends_when_every_village_card_in_play_is_out() -> None:
    says("nizhuan.txt:125", "2，所有村民出局")
    roster = [("甲", ["狼人", "女巫"]), ("乙", ["村民", "村民"]), ("丙", ["狼人", "骑士"])]
    state = RS.setup_state(roster, strict=False)
    state, _ = night(state, 0)
    state, _ = day(state, 1)
    state, report = night(state, 1, act("丙", "杀人", "乙"))
    assert any("历史轮结束（所有村民出局" in p for p in report.public)


def test_last_words_per_round_as_many_as_the_wolves() -> None:
    says("nizhuan.txt:55", "每轮遗言数量等于狼人的数量，第二轮的遗言只会被第二身份的角色获取")
    says("nizhuan.txt:55", "放弃遗言不会使留遗言的权利留给以后出局的角色")
    state = start()
    state, _ = day(state, 1)
    state, report = night(state, 1, act("丙", "杀人", "辛"))
    assert any(f.to == "辛" and "你可以留下遗言" in f.text for f in report.feedback)
    state, _ = day(state, 2, out="己的第一身份")
    state, _ = night(state, 2, act("丙", "杀人", "戊"), act("戊", "最后一枪", choice="放弃"))
    state, report = day(state, 3, out="乙的第一身份")  # the 4th out: 3 wolf characters
    assert not any("遗言" in f.text for f in report.feedback)
    assert sorted(s.holder for s in state.statuses if s.kind == "遗言") == ["己", "戊", "辛"]
    state = through_history(start())
    state, _ = day(state, 5)
    _, report = night(state, 5, act("甲", "毒药", "辛的第一身份"))
    assert not any("遗言" in f.text for f in report.feedback)  # a first card in round 2
    _, report = night(state, 5, act("甲", "毒药", "辛的第二身份"))
    assert any(f.to == "辛" and "你可以留下遗言" in f.text for f in report.feedback)


def test_surrender_of_the_wolves() -> None:
    says("nizhuan.txt:58", "狼人阵营可以由阵营中的某一角色发起投降。")
    says("nizhuan.txt:59", "当所有被询问的角色（包括已出局角色）同意投降，投降有效，村民阵营获胜。")
    state = start()
    _, report = day(state, 1, actions=[act("辛", "投降")])
    assert outcome(report, "辛", "投降")[0] == "invalid" and report.winner is None
    state, report = day(state, 1, actions=[act("庚", "投降")])
    assert state.winner == "村民阵营" and report.win_rule == "nizhuan.txt:59"
    assert any("游戏结束：村民阵营胜利" in p for p in report.public)


def test_round_two_day_tally_counts_the_npc_vote_by_card() -> None:
    """nizhuan.txt:193 — in the 逆转轮 a first card's vote is fixed from the start; the day's
    tally votes by card (投票对象：傻树的第一身份)."""
    from datetime import datetime, timedelta, timezone

    from engine.rulesets import get_ruleset
    from engine.votes import Ballot, BallotKind, DayContext, Evidence, judge_ballots, tally

    rs = get_ruleset("nizhuan")
    state = start()
    state, _ = day(state, 1, elected="丁的第一身份", actions=[act("丙", "投票", "丁的第一身份")])
    for n in range(1, 5):
        state, _ = night(state, n, act("丙", "杀人", choice="放弃"))
        if n < 4:
            state, _ = day(state, n + 1)
    tz = timezone(timedelta(hours=8))
    opens = datetime(2026, 12, 5, 10, 0, tzinfo=tz)
    roster = rs.vote_roster(state, opens=opens, red_at={})
    assert {(p.name, p.card) for p in roster} >= {("丙", 1), ("丙", 2)}  # both cards play now
    fixed = rs.fixed_ballots(state, 5, opens=opens, tid=99)
    assert [(b.voter, b.voter_card, b.target, b.card_index) for b in fixed] == [("丙", 1, "丁", 1)]
    own = Ballot(
        "甲",
        BallotKind.VOTE,
        "丁",
        "丁的第一身份",
        None,
        Evidence(99, 7, 7, opens + timedelta(hours=1), "u"),
        card_index=1,
    )
    ctx = DayContext(
        day=5,
        opens=opens,
        closes=opens + timedelta(hours=12),
        players=roster,
        sheriff=rs.vote_sheriff(state),
        ruleset="nizhuan",
    )
    t = tally(judge_ballots((*fixed, own), ctx, rs), ctx, rs)
    assert t.out == "丁的第一身份" and set(t.voters["丁的第一身份"]) == {
        "丙的第一身份",
        "甲的第二身份",
    }
