"""The tally of each rule set: weights, ties, majorities, elections — each rule quoted.

``says`` checks that the quoted words really are on the cited line of the rule text (when the
shared rule texts are present beside the repository).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from typing import Any, ClassVar

import pytest

from engine.rulesets import REGISTRY, RULE_KEYS, get_ruleset, ruleset_ids
from engine.rulesets.m135 import M135
from engine.votes import (
    Ballot,
    BallotKind,
    DayContext,
    Evidence,
    ModifierKind,
    PlayerStatus,
    Tally,
    VerdictStatus,
    VoteModifier,
    tally,
    tally_votes,
)
from tests.engine.rule_text import line_of, says

TZ = timezone(timedelta(hours=8))
OPENS = datetime(2026, 12, 1, 9, 0, tzinfo=TZ)
CLOSES = datetime(2026, 12, 1, 22, 0, tzinfo=TZ)
NAMES = ("饺子", "包子", "馄饨", "面条", "烧卖", "汤圆", "春卷")


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 12, 1, hour, minute, tzinfo=TZ)


class Day:
    """A small scenario builder: votes in post order, then the tally."""

    def __init__(self, ruleset: str, **ctx: Any) -> None:
        self.ruleset = ruleset
        self.ctx = ctx
        self.ballots: list[Ballot] = []
        self.minute = 0

    def _ev(self, when: datetime | None) -> Evidence:
        self.minute += 1
        pid = 100 + self.minute
        return Evidence(9, pid, None, when or at(10) + timedelta(minutes=self.minute), "")

    def vote(self, voter: str, target: str | None, when: datetime | None = None) -> int:
        kind = BallotKind.ABSTAIN if target is None else BallotKind.VOTE
        ev = self._ev(when)
        self.ballots.append(Ballot(voter, kind, target, target or "弃权", None, ev))
        return ev.pid

    def change(self, voter: str, target: str, replying_to: int, when: datetime) -> int:
        ev = self._ev(when)
        self.ballots.append(
            Ballot(voter, BallotKind.CHANGE, target, target, None, ev, replied_to_pid=replying_to)
        )
        return ev.pid

    def result(self, *, players: tuple[PlayerStatus, ...] | None = None) -> Tally:
        roster = players or tuple(PlayerStatus(n) for n in NAMES)
        ctx = DayContext(
            day=self.ctx.pop("day", 2),
            opens=OPENS,
            closes=CLOSES,
            players=roster,
            ruleset=self.ruleset,
            **self.ctx,
        )
        rs = get_ruleset(self.ruleset)
        verdicts, result = tally_votes(self.ballots, ctx, rs)
        assert tally(verdicts, ctx, rs) == result
        return result


# --- the registry ----------------------------------------------------------------------------


def test_registry_finds_each_rule_set_by_id_and_alias() -> None:
    assert ruleset_ids() == ("m209", "zhenyan", "m135", "tubian24", "nizhuan")
    assert get_ruleset("M135").id == "m135"
    assert get_ruleset("狼人真言").id == "zhenyan"
    assert get_ruleset("逆转时空").id == "nizhuan"
    with pytest.raises(ValueError, match="未知的规则集"):
        get_ruleset("m999")


@pytest.mark.parametrize("ruleset_id", list(REGISTRY))
def test_every_rule_reference_points_at_a_real_line(ruleset_id: str) -> None:
    """Each verdict cites "file:line" of its own rule text or a section of docs/rulings.md."""
    rs = get_ruleset(ruleset_id)
    assert set(RULE_KEYS) <= set(rs.rules)
    for key, ref in rs.rules.items():
        if ref.startswith("docs/rulings.md#"):
            assert re.fullmatch(r"docs/rulings\.md#[a-z0-9-]+", ref), (key, ref)
            continue
        file, _, line = ref.partition(":")
        assert file == rs.rule_file and line.isdigit(), (key, ref)


@pytest.mark.parametrize("ruleset_id", list(REGISTRY))
def test_every_cited_rule_line_holds_text(ruleset_id: str) -> None:
    rs = get_ruleset(ruleset_id)
    for key, ref in rs.rules.items():
        if not ref.startswith("docs/"):
            assert line_of(ref).strip(), (key, ref)


@pytest.mark.parametrize(
    ("ruleset_id", "weight", "ref", "words"),
    [
        ("m135", Fraction(3, 2), "m135.txt:148", "警长投出的票计为1.5票"),
        ("tubian24", Fraction(3, 2), "tubian24.txt:173", "警长投出的票计为1.5票"),
        ("zhenyan", Fraction(3, 2), "zhenyan.txt:106", "警长投出的票计为1.5票"),
        ("m209", Fraction(1), "m209.txt:224", "警长：1人 <非身份>"),  # only 竞岗 and 殉职
        ("nizhuan", Fraction(1), "nizhuan.txt:115", "警长<非身份>"),  # only 竞岗 and 殉职
    ],
)
def test_sheriff_weight(ruleset_id: str, weight: Fraction, ref: str, words: str) -> None:
    """The sheriff's 带队 weighs 1.5 only where the text gives it."""
    says(ref, words)
    rs = get_ruleset(ruleset_id)
    assert rs.sheriff_weight == weight and rs.ref("sheriff_weight") == ref
    day = Day(ruleset_id, sheriff="饺子")
    day.vote("饺子", "包子")
    result = day.result()
    assert result.counts == {"包子": weight}
    assert isinstance(result.counts["包子"], Fraction)
    assert result.weights["饺子"] == weight


# --- m135 ------------------------------------------------------------------------------------


def test_m135_unique_top_is_out() -> None:
    """m135.txt:50 「第二天及之后的讨论日票数最高的角色如只有一个，则该角色的当前身份牌出局。」"""
    says("m135.txt:50", "票数最高的角色如只有一个，则该角色的当前身份牌出局")
    day = Day("m135", sheriff="饺子")
    day.vote("饺子", "包子")
    day.vote("馄饨", "包子")
    day.vote("面条", "馄饨")
    day.vote("烧卖", "馄饨")
    result = day.result()
    assert result.counts == {"包子": Fraction(5, 2), "馄饨": Fraction(2)}
    assert (result.out, result.decided_by, result.rule) == ("包子", "唯一最高票", "m135.txt:50")
    assert result.to_dict()["counts"][0] == {
        "candidate": "包子",
        "votes": "5/2",
        "value": 2.5,
        "voters": ["饺子", "馄饨"],
    }


def _m135_tie(sheriff_target: str | None, *, sheriff_votes: bool = True) -> Tally:
    day = Day("m135", sheriff="饺子")
    day.vote("包子", "馄饨")
    day.vote("面条", "馄饨")
    day.vote("烧卖", "汤圆")
    day.vote("汤圆", "馄饨")
    day.vote("春卷", "汤圆")
    day.vote("馄饨", "汤圆")
    if sheriff_votes:
        day.vote("饺子", sheriff_target)
    return day.result()


def test_m135_tie_sends_out_the_sheriffs_target() -> None:
    """m135.txt:51
    「第二天及以后的讨论日产生平票时，若警长没有弃权，则警长投票的对象出局，否则无人出局。」
    With the sheriff's 1.5 a tie is only possible when the sheriff voted outside it; the text
    sends the sheriff's target out all the same (docs/rulings.md#m135-tie-literal)."""
    says("m135.txt:51", "若警长没有弃权，则警长投票的对象出局，否则无人出局")
    result = _m135_tie("面条")
    assert result.tie == ["汤圆", "馄饨"]
    assert result.counts["面条"] == Fraction(3, 2)
    assert (result.out, result.decided_by, result.rule) == (
        "面条",
        "平票，警长所投者出局",
        "m135.txt:51",
    )


def test_m135_tie_with_the_sheriff_abstaining_or_silent() -> None:
    """m135.txt:51 「…若警长没有弃权…否则无人出局」"""
    abstained = _m135_tie(None)
    assert (abstained.out, abstained.decided_by) == (None, "平票，警长弃权，无人出局")
    silent = _m135_tie(None, sheriff_votes=False)
    assert (silent.out, silent.decided_by) == (None, "平票，警长没有有效投票，无人出局")


def test_m135_tie_setting_requiring_the_sheriffs_target_in_the_tie() -> None:
    """The other reading, as a setting: a subclass flips ``tie_break_requires_tied_target``."""

    class StrictM135(M135):
        tie_break_requires_tied_target: ClassVar[bool] = True

    day = Day("m135", sheriff="饺子")
    pairs = (
        ("包子", "馄饨"),
        ("面条", "馄饨"),
        ("烧卖", "汤圆"),
        ("春卷", "汤圆"),
        ("饺子", "面条"),
    )
    for voter, target in pairs:
        day.vote(voter, target)
    ctx = DayContext(
        2, OPENS, CLOSES, tuple(PlayerStatus(n) for n in NAMES), sheriff="饺子", ruleset="m135"
    )
    _verdicts, result = tally_votes(day.ballots, ctx, StrictM135())
    assert result.tie == ["汤圆", "馄饨"]
    assert result.out is None
    assert result.decided_by == "平票，警长所投的面条不在平票者之中，无人出局"


def test_m135_slander_adds_one_vote() -> None:
    """m135.txt:120 「结算目标在放逐投票中被投票数多计一票」"""
    says("m135.txt:120", "结算目标在放逐投票中被投票数多计一票")
    slander = (VoteModifier("面条", ModifierKind.WEIGHT_ADD, Fraction(1), "乌鸦[诽谤]"),)
    day = Day("m135", modifiers=slander)
    day.vote("饺子", "包子")
    day.vote("馄饨", "面条")
    result = day.result()
    assert result.counts == {"包子": 1, "面条": 2}
    assert result.out == "面条"
    assert "面条：乌鸦[诽谤]+1" in result.notes
    # with no vote at all, the slandered player still carries one
    quiet = Day("m135", modifiers=slander)
    quiet.vote("饺子", None)
    assert quiet.result().counts == {"面条": 1}


def test_votes_voided_during_the_day_are_not_counted() -> None:
    """m135.txt:55 「角色出局后，不能继续发言、投票」"""
    day = Day("m135")
    day.vote("饺子", "包子")
    day.vote("馄饨", "面条")
    day.vote("面条", "包子", at(10))
    players = tuple(PlayerStatus(n, out_at=at(12) if n == "面条" else None) for n in NAMES)
    result = day.result(players=players)
    assert result.counts == {"包子": 1}
    assert result.out == "包子"


def test_no_valid_vote_no_one_out() -> None:
    day = Day("m135")
    day.vote("饺子", None)
    result = day.result()
    assert (result.out, result.decided_by, result.abstained) == (
        None,
        "无有效票，无人出局",
        ["饺子"],
    )


# --- m209 ------------------------------------------------------------------------------------


def test_m209_counts_are_hidden_and_the_tie_goes_to_the_sheriffs_vote() -> None:
    """m209.txt:167 「每天的投票内容公开，但投票计数隐藏，将只宣布当天谁是最高票」
    m209.txt:169
    「…投票计数唯一最多的角色为最高票，否则警长投票的角色为最高票，否则没有最高票。」"""
    says("m209.txt:167", "投票计数隐藏")
    says("m209.txt:169", "否则警长投票的角色为最高票，否则没有最高票")
    day = Day("m209", sheriff="饺子")
    day.vote("饺子", "包子")
    day.vote("馄饨", "面条")
    result = day.result()
    assert (result.public_counts, result.public_voters) == (False, True)
    assert result.tie == ["包子", "面条"]
    assert (result.top, result.out) == (["包子"], "包子")
    assert (result.decided_by, result.rule) == ("平票，警长投票的角色为最高票", "m209.txt:169")

    nobody = Day("m209", sheriff="饺子")
    nobody.vote("包子", "馄饨")
    nobody.vote("馄饨", "面条")
    result = nobody.result()
    assert result.out is None
    assert result.decided_by == "平票，警长没有有效投票，无人出局（没有最高票）"


def test_m209_skill_top_comes_first() -> None:
    """m209.txt:169 「有技能影响则计算技能影响的最高票」"""
    forced = (VoteModifier("汤圆", ModifierKind.FORCE_TOP, source="技能"),)
    day = Day("m209", modifiers=forced)
    day.vote("饺子", "包子")
    day.vote("馄饨", "包子")
    result = day.result()
    assert (result.out, result.decided_by) == ("汤圆", "技能影响的最高票")


def test_m209_immortal_top_is_not_out() -> None:
    """m209.txt:166
    「讨论日获得投票最多的角色将出局，若该角色持有[霸道]或[不死]状态，则不出局，公示平安日。」"""
    says("m209.txt:166", "若该角色持有[霸道]或[不死]状态，则不出局，公示平安日")
    guarded = (VoteModifier("包子", ModifierKind.BLOCK_OUT, source="[不死]"),)
    day = Day("m209", modifiers=guarded)
    day.vote("饺子", "包子")
    result = day.result()
    assert result.out is None and result.top == ["包子"]
    assert result.decided_by == "唯一最高票；但包子持有[不死]，不出局（平安日）"
    assert result.rule == "m209.txt:166"


def test_m209_scapegoat_voids_a_tie() -> None:
    """m209.txt:343 「最高票计数平票或者技能产生的最高票不止一个（不包括竞选日）时发动。」
    「发动者承受[暴击]，当日最高票产生的[投票出局]无效。」"""
    says("m209.txt:343", "最高票计数平票或者技能产生的最高票不止一个（不包括竞选日）时发动")
    goat = (VoteModifier("春卷", ModifierKind.VOID_ON_TIE, source="替罪羊[冤死]"),)
    day = Day("m209", sheriff="饺子", modifiers=goat)
    day.vote("饺子", "包子")
    day.vote("馄饨", "面条")
    result = day.result()
    assert result.out is None and result.tie == ["包子", "面条"]
    assert result.decided_by == "平票，春卷替罪羊[冤死]发动，当日最高票产生的投票出局无效"
    assert result.rule == "m209.txt:343"


def test_m209_daze_and_dictator_weights() -> None:
    """m209.txt:96 「[迷魂]：该状态下投票算作0票」; m209.txt:109 「[独裁]：票权+1…」"""
    says("m209.txt:96", "该状态下投票算作0票")
    says("m209.txt:109", "[独裁]：票权+1")
    mods = (
        VoteModifier("饺子", ModifierKind.WEIGHT_SET, Fraction(0), "[迷魂]"),
        VoteModifier("馄饨", ModifierKind.VOTER_ADD, Fraction(1), "[独裁]"),
    )
    day = Day("m209", modifiers=mods)
    day.vote("饺子", "包子")
    day.vote("包子", "馄饨")
    day.vote("馄饨", "面条")
    result = day.result()
    assert result.counts == {"包子": 0, "馄饨": 1, "面条": 2}
    assert result.weights == {"饺子": 0, "包子": 1, "馄饨": 2}
    assert result.weight_reasons["饺子"] == "[迷魂]：计0票"
    assert result.out == "面条"


# --- tubian24 --------------------------------------------------------------------------------


def test_tubian24_tie_takes_the_monk() -> None:
    """tubian24.txt:39 「平票则高僧承受投票出局。」
    tubian24.txt:118 「当投票出现平票的情况，高僧将成为当日投票出局的玩家。」"""
    says("tubian24.txt:39", "平票则高僧承受投票出局")
    says("tubian24.txt:118", "高僧将成为当日投票出局的玩家")
    monk = (VoteModifier("春卷", ModifierKind.TIE_TAKER, source="高僧[献身]"),)
    day = Day("tubian24", modifiers=monk, sheriff="饺子")
    day.vote("饺子", "包子")  # 1.5
    day.vote("馄饨", "面条")
    day.vote("面条", "包子")  # 包子 2.5
    day.vote("烧卖", "馄饨")
    day.vote("汤圆", "馄饨")
    day.vote("包子", "馄饨")  # 馄饨 3
    day.vote("春卷", "包子")  # 包子 3.5: the sheriff's half vote breaks what would be a tie
    result = day.result()
    assert result.counts["包子"] == Fraction(7, 2) and result.out == "包子"

    tie = Day("tubian24", modifiers=monk)
    tie.vote("饺子", "包子")
    tie.vote("馄饨", "面条")
    result = tie.result()
    assert result.tie == ["包子", "面条"]
    assert (result.out, result.decided_by, result.rule) == (
        "春卷",
        "平票，高僧[献身]，承受投票出局",
        "tubian24.txt:118",
    )


def test_tubian24_tie_without_the_monk_is_a_quiet_day() -> None:
    """tubian24.txt:121 「高僧出局后，不论是否因[献身]而出局，若再次出现平票，会直接平安日入夜」"""
    says("tubian24.txt:121", "若再次出现平票，会直接平安日入夜")
    monk = (VoteModifier("春卷", ModifierKind.TIE_TAKER, source="高僧[献身]"),)
    day = Day("tubian24", modifiers=monk)
    day.vote("饺子", "包子")
    day.vote("馄饨", "面条")
    players = tuple(PlayerStatus(n, out_at=at(12) if n == "春卷" else None) for n in NAMES)
    result = day.result(players=players)
    assert result.out is None
    assert (result.decided_by, result.rule) == (
        "平票，没有可[献身]的高僧，平安日无人出局",
        "tubian24.txt:121",
    )


def test_tubian24_has_no_sheriff_election() -> None:
    """tubian24's sheriff comes from 高僧[遗志] (tubian24.txt:119); day 1 is a normal vote."""
    says("tubian24.txt:119", "可以指定一名存活角色担任警长")
    day = Day("tubian24", sheriff_election=True, day=1)
    day.vote("饺子", "包子")
    with pytest.raises(ValueError, match="没有警长竞选"):
        day.result()


# --- zhenyan ---------------------------------------------------------------------------------


def test_zhenyan_needs_more_than_half_of_all_votes() -> None:
    """zhenyan.txt:38
    「第二天及之后的讨论日如果存在单角色票数总和大于总票数的一半，则其出局，否则当天无人出局。」"""
    says("zhenyan.txt:38", "单角色票数总和大于总票数的一半，则其出局，否则当天无人出局")
    passing = Day("zhenyan")
    for voter, target in (("饺子", "包子"), ("馄饨", "包子"), ("面条", "包子"), ("烧卖", "汤圆")):
        passing.vote(voter, target)
    passing.vote("汤圆", "烧卖")
    result = passing.result()
    assert (result.out, result.decided_by, result.rule) == (
        "包子",
        "票数过半出局",
        "zhenyan.txt:38",
    )

    half = Day("zhenyan")
    for voter, target in (("饺子", "包子"), ("馄饨", "包子"), ("面条", "汤圆"), ("烧卖", "汤圆")):
        half.vote(voter, target)
    result = half.result()
    assert (result.out, result.decided_by) == (None, "票数未过半无人出局")
    assert result.tie == ["包子", "汤圆"]


def test_zhenyan_abstentions_count_in_all_votes() -> None:
    """zhenyan.txt:177 「投弃权票时，须在投票对象中填写“弃权”」: 弃权 is a vote (弃权票), so it
    counts in "总票数" (docs/rulings.md#zhenyan-total-votes)."""
    says("zhenyan.txt:177", "投弃权票时")
    day = Day("zhenyan")
    day.vote("饺子", "包子")
    day.vote("馄饨", "包子")
    day.vote("面条", None)
    day.vote("烧卖", None)
    result = day.result()
    assert result.total == 4 and result.counts == {"包子": 2}
    assert (result.out, result.decided_by) == (None, "票数未过半无人出局")


def test_zhenyan_sheriff_half_vote_can_tip_the_majority() -> None:
    """zhenyan.txt:106 「计算投票数量时警长投出的票计为1.5票」: 2.5 of 4.5 is more than half."""
    day = Day("zhenyan", sheriff="饺子")
    day.vote("饺子", "包子")
    day.vote("馄饨", "包子")
    day.vote("面条", "汤圆")
    day.vote("烧卖", "汤圆")
    result = day.result()
    assert result.total == Fraction(9, 2)
    assert result.out == "包子"


def test_zhenyan_votes_are_anonymous() -> None:
    """zhenyan.txt:37 「投票为匿名投票，仅自己可见，直到游戏结束。」"""
    says("zhenyan.txt:37", "投票为匿名投票，仅自己可见，直到游戏结束")
    day = Day("zhenyan")
    day.vote("饺子", "包子")
    result = day.result()
    assert (result.public_counts, result.public_voters) == (True, False)


# --- nizhuan ---------------------------------------------------------------------------------

CARDS = tuple(PlayerStatus(n, card=1) for n in NAMES)


def test_nizhuan_tie_goes_to_the_sheriffs_target_or_nobody() -> None:
    """nizhuan.txt:45 「平票时警长投票的角色出局，警长未投票则无人出局。」"""
    says("nizhuan.txt:45", "平票时警长投票的角色出局，警长未投票则无人出局")
    day = Day("nizhuan", sheriff="饺子的第一身份")
    day.vote("饺子", "包子")
    day.vote("馄饨", "面条")
    result = day.result(players=CARDS)
    assert result.tie == ["包子的第一身份", "面条的第一身份"]
    assert (result.out, result.decided_by) == ("包子的第一身份", "平票，警长所投者出局")

    silent = Day("nizhuan", sheriff="饺子")
    silent.vote("包子", "馄饨")
    silent.vote("馄饨", "面条")
    result = silent.result(players=CARDS)
    assert (result.out, result.decided_by) == (None, "平票，警长没有有效投票，无人出局")


# --- the day-1 sheriff election ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("ruleset_id", "ref", "words"),
    [
        ("m135", "m135.txt:147", "最先获得投票数最多的角色当选警长"),
        ("m209", "m209.txt:226", "最先获得投票数最多的角色当选警长"),
        ("zhenyan", "zhenyan.txt:105", "最先获得投票数最多的角色当选警长"),
        ("nizhuan", "nizhuan.txt:117", "最先获得投票数最多的角色当选警长"),
    ],
)
def test_election_tie_goes_to_who_first_held_the_maximum(
    ruleset_id: str, ref: str, words: str
) -> None:
    """「在游戏的第一天投票结束后，最先获得投票数最多的角色当选警长。」 Counted in post order with
    changes applied: 饺子 reached 2 at 10:10 but lost a vote at 12:00 and got back to 2 only at
    15:00; 包子 held 2 from 12:00. 包子 is elected (docs/rulings.md#election-first-to-hold)."""
    says(ref, words)
    day = Day(ruleset_id, sheriff_election=True, day=1)
    day.vote("馄饨", "饺子", at(10, 0))
    switch = day.vote("面条", "饺子", at(10, 10))
    day.vote("烧卖", "包子", at(10, 20))
    day.change("面条", "包子", switch, at(12, 0))
    day.vote("汤圆", "饺子", at(15, 0))
    result = day.result(players=CARDS if ruleset_id == "nizhuan" else None)
    label = "的第一身份" if ruleset_id == "nizhuan" else ""
    assert result.tie == sorted([f"包子{label}", f"饺子{label}"])
    assert (result.elected, result.out) == (f"包子{label}", None)
    assert (result.decided_by, result.rule) == ("平票，最先获得最高票者当选", ref)
    # the public note names no post (public drafts never carry a pid); the director's detail
    # does. Where the votes are anonymous (zhenyan.txt:37) the note does not give the time.
    note = [n for n in result.notes if "最先达到" in n]
    when = "" if ruleset_id == "zhenyan" else f"于{at(12, 0):%Y-%m-%d %H:%M:%S}"
    assert note == [f"包子{label}{when}最先达到2票并保持至截止"]
    assert all("pid" not in n for n in result.notes)
    assert any("pid" in d and "达到2票" in d for d in result.details)


def test_zhenyan_majority_note_is_written_in_decimals() -> None:
    """zhenyan.txt:38 「单角色票数总和大于总票数的一半，则其出局」; zhenyan.txt:106 警长1.5票:
    the note says 6.5 and 3.25 the way a director writes them, not 13/2 and 13/4."""
    says("zhenyan.txt:106", "警长投出的票计为1.5票")
    day = Day("zhenyan", day=2, sheriff="馄饨")
    for voter in ("馄饨", "面条", "烧卖"):
        day.vote(voter, "饺子")
    day.vote("包子", "包子")
    day.vote("汤圆", None)
    day.vote("春卷", None)
    result = day.result()
    assert "总票数6.5（含弃权2），出局须多于3.25票" in result.notes
    assert (result.out, result.decided_by) == ("饺子", "票数过半出局")  # 3.5 of 6.5


def test_election_simple_cases() -> None:
    """m135.txt:50 「第一天讨论日最先获得最多投票的角色将成为警长。」"""
    says("m135.txt:50", "第一天讨论日最先获得最多投票的角色将成为警长")
    first = Day("m135", sheriff_election=True, day=1)
    first.vote("馄饨", "饺子", at(10))
    first.vote("面条", "包子", at(11))
    result = first.result()
    assert (result.elected, result.decided_by) == ("饺子", "平票，最先获得最高票者当选")

    unique = Day("m135", sheriff_election=True, day=1)
    unique.vote("馄饨", "饺子")
    unique.vote("面条", "饺子")
    unique.vote("汤圆", "包子")
    assert (unique.result().elected, unique.result().decided_by) == ("饺子", "唯一最高票当选")

    empty = Day("m135", sheriff_election=True, day=1)
    empty.vote("馄饨", None)
    assert (empty.result().elected, empty.result().decided_by) == (None, "无有效票，无人当选")


def test_an_election_tie_at_one_moment_with_no_post_order_is_the_directors() -> None:
    """「最先获得投票数最多的角色当选警长」 (nizhuan.txt:117) — two 代投 records at the same
    minute (or nizhuan's fixed first-card votes, all at the opening, nizhuan.txt:193) are no
    forum posts: nothing says which came first, so nobody is elected and the director decides."""
    says("nizhuan.txt:117", "最先获得投票数最多的角色当选警长")
    says("nizhuan.txt:193", "另外，在逆转轮中，第一身份的投票会在一开始就固定投票对象")
    day = Day("m135", sheriff_election=True, day=1)
    for voter, target, pid in (("馄饨", "饺子", -1), ("面条", "包子", -2)):
        ev = Evidence(9, pid, None, at(10), f"导演记录：代投 #{-pid}")
        day.ballots.append(Ballot(voter, BallotKind.PROXY, target, target, None, ev))
    result = day.result()
    assert result.tie == ["包子", "饺子"] and result.elected is None
    assert (
        result.decided_by
        == "平票，包子、饺子同时达到最高票，无法判定谁最先，无人当选：请导演裁定警长"
    )
    # forum posts of the same second keep the forum's order (its pids)
    posts = Day("m135", sheriff_election=True, day=1)
    posts.vote("馄饨", "饺子", at(10))
    posts.vote("面条", "包子", at(10))
    assert posts.result().elected == "饺子"


def test_election_ignores_exile_only_extra_votes() -> None:
    """m135.txt:120 「结算目标在放逐投票中被投票数多计一票」 — only in the exile vote."""
    slander = (VoteModifier("面条", ModifierKind.WEIGHT_ADD, Fraction(1), "乌鸦[诽谤]"),)
    day = Day("m135", sheriff_election=True, day=1, modifiers=slander)
    day.vote("馄饨", "饺子")
    result = day.result()
    assert result.counts == {"饺子": 1} and result.elected == "饺子"


def test_verdict_statuses_feed_the_tally() -> None:
    day = Day("m135")
    day.vote("饺子", "包子")
    day.vote("饺子", "面条")  # ignored duplicate
    result = day.result()
    assert result.voters == {"包子": ["饺子"]}
    ctx = DayContext(2, OPENS, CLOSES, tuple(PlayerStatus(n) for n in NAMES), ruleset="m135")
    verdicts, _ = tally_votes(day.ballots, ctx, M135())
    assert [v.status for v in verdicts] == [VerdictStatus.COUNTED, VerdictStatus.IGNORED]
