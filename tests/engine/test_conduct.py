"""Conduct flags: 潜水, 未投票, 诈尸, fonts, last words, zhenyan inquiries and sheriff."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import Card
from engine.conduct import (
    Activity,
    CountPolicy,
    DaySummary,
    EditedVote,
    Flag,
    FlagKind,
    FoldedName,
    PlayerLife,
    SheriffAnswer,
    conduct_flags,
    count_posts,
    without_posts_after_out,
)
from engine.rulesets import get_ruleset, ruleset_ids

#: each rule set's ConductRules, as its module declares them (engine.rulesets.<id>)
CONDUCT = {r: get_ruleset(r).conduct for r in ruleset_ids()}
TZ = timezone(timedelta(hours=8))
PROGRESS_TID = 3000


def at(day: int, hour: int, minute: int = 0) -> datetime:
    """Day N of the game is 2026-12-N (so day 2 opens 2026-12-02 09:00)."""
    return datetime(2026, 12, day, hour, minute, tzinfo=TZ)


def summary(day: int, *, inquiry: bool = False) -> DaySummary:
    return DaySummary(
        day=day,
        opens=at(day, 9),
        closes=at(day, 22),
        discussion_tids=(1000 + day,),
        vote_tids=(2000 + day,),
        progress_tids=(PROGRESS_TID,),
        inquiry_tids=(4000 + day,) if inquiry else (),
    )


_pid = iter(range(1, 10**9))


def posts(player: str, n: int, day: int, *, start_hour: int = 10, **kw: object) -> list[Activity]:
    """``n`` posts by ``player`` in day ``day``'s discussion thread, one minute apart."""
    out = []
    for i in range(n):
        pid = next(_pid)
        when = at(day, start_hour) + timedelta(minutes=i)
        out.append(
            Activity(
                player=player,
                tid=1000 + day,
                role="discussion",
                pid=pid,
                floor=i + 3,
                at=when,
                url=f"forum.php?mod=redirect&goto=findpost&ptid={1000 + day}&pid={pid}",
                **kw,  # type: ignore[arg-type]
            )
        )
    return out


def act(player: str, tid: int, role: str, when: datetime, **kw: object) -> Activity:
    pid = next(_pid)
    return Activity(player, tid, role, pid, None, when, url=f"pid{pid}", **kw)  # type: ignore[arg-type]


def kinds(flags: tuple[Flag, ...], player: str | None = None) -> list[tuple[FlagKind, int]]:
    return [(f.kind, f.day) for f in flags if player is None or f.player == player]


ROSTER = [PlayerLife("饺子"), PlayerLife("包子")]


# --------------------------------------------------------------------------- 潜水: under 5


def test_four_posts_is_qianshui_with_a_yellow_card() -> None:
    # m209.txt:716-717 5、潜水（以下行为均固定判罚一张“黄牌”） （1）在未执行加速的讨论日发言不足五帖
    acts = posts("饺子", 4, 2) + posts("包子", 5, 2)
    flags = conduct_flags(days=[summary(2)], activities=acts, players=ROSTER, rules=CONDUCT["m209"])
    assert len(flags) == 1
    flag = flags[0]
    assert flag.id == "d2-qianshui-饺子"
    assert flag.kind is FlagKind.QIANSHUI
    assert flag.reason == "第2天讨论帖发言4帖，少于5帖（潜水）"
    assert flag.card is Card.YELLOW
    assert flag.rule == "m209.txt:717"
    assert [e.pid for e in flag.evidence] == [a.pid for a in acts[:4]]


def test_five_posts_is_not_qianshui() -> None:
    # m209.txt:717 发言不足五帖 — five is enough
    acts = posts("饺子", 5, 2) + posts("包子", 5, 2)
    flags = conduct_flags(days=[summary(2)], activities=acts, players=ROSTER, rules=CONDUCT["m209"])
    assert flags == ()


def test_no_post_at_all_is_qianshui() -> None:
    flags = conduct_flags(
        days=[summary(2)], activities=posts("包子", 5, 2), players=ROSTER, rules=CONDUCT["m209"]
    )
    assert [(f.id, f.reason) for f in flags] == [
        ("d2-qianshui-饺子", "第2天讨论帖发言0帖，少于5帖（潜水）")
    ]


@pytest.mark.parametrize(
    ("ruleset", "rule"),
    [
        # m135.txt:311 （1）在未执行二段加速的讨论日发言不足五帖。
        ("m135", "m135.txt:311"),
        # zhenyan.txt:272 （1）在未执行加速的讨论日发言不足五帖
        ("zhenyan", "zhenyan.txt:272"),
        # tubian24.txt:294 （1）在未加快进程的单个讨论日不足五帖；324 将直接判作黄牌
        ("tubian24", "tubian24.txt:294, tubian24.txt:324"),
        # nizhuan.txt:227 违规判定 占楼待编辑 → docs/rulings.md#conduct-defaults;
        # 180 implies the penalty exists
        ("nizhuan", "docs/rulings.md#conduct-defaults；nizhuan.txt:180"),
    ],
)
def test_every_ruleset_flags_four_posts(ruleset: str, rule: str) -> None:
    acts = posts("饺子", 4, 2) + posts("包子", 9, 2)
    flags = conduct_flags(
        days=[summary(2)], activities=acts, players=ROSTER, rules=CONDUCT[ruleset]
    )
    assert [(f.id, f.card, f.rule) for f in flags] == [("d2-qianshui-饺子", Card.YELLOW, rule)]


def test_accelerated_day_raises_no_post_or_vote_flag() -> None:
    # m209.txt:592 执行加速时，所有人不可改票，且发言不足或未投票者将不被判罚。
    acts = posts("饺子", 1, 2)
    flags = conduct_flags(
        days=[summary(2)],
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["m209"],
        voted_by_day={2: set()},
        accelerated_by_day={2: True},
    )
    assert flags == ()


def test_excluded_posts_are_named_in_the_reason() -> None:
    # a post blocked (屏蔽) by the director does not count; the reason says which and why
    acts = posts("饺子", 4, 2) + posts("饺子", 1, 2, start_hour=12, state="blocked")
    acts += posts("包子", 5, 2)
    (flag,) = conduct_flags(
        days=[summary(2)], activities=acts, players=ROSTER, rules=CONDUCT["m209"]
    )
    blocked_pid = acts[4].pid
    assert flag.reason == (
        "第2天讨论帖发言4帖，少于5帖（潜水）；另有1帖未计入"
        f"（pid {blocked_pid}：该帖被管理员或版主屏蔽，不计入发言）"
    )


def test_player_out_before_close_is_not_judged_but_voted_out_at_close_is() -> None:
    # a player out during the day (night kill, duel) cannot be asked to post that day;
    # one voted out at the close was in the game all day
    players = [PlayerLife("饺子", out_at=at(2, 12)), PlayerLife("包子", out_at=at(2, 22))]
    flags = conduct_flags(
        days=[summary(2)],
        activities=[],
        players=players,
        rules=CONDUCT["m209"],
        voted_by_day={2: set()},
    )
    assert kinds(flags) == [(FlagKind.QIANSHUI, 2), (FlagKind.NO_VOTE, 2)]
    assert {f.player for f in flags} == {"包子"}


def test_open_day_is_not_judged_until_it_closes() -> None:
    days = [summary(2), summary(3)]
    acts = posts("饺子", 5, 2) + posts("包子", 5, 2)  # day 3 has only just begun
    flags = conduct_flags(
        days=days, activities=acts, players=ROSTER, rules=CONDUCT["m209"], as_of=at(3, 12)
    )
    assert flags == ()
    flags = conduct_flags(
        days=days, activities=acts, players=ROSTER, rules=CONDUCT["m209"], as_of=at(3, 22)
    )
    assert [f.id for f in flags] == ["d3-qianshui-包子", "d3-qianshui-饺子"]


def test_post_exempt_player_is_not_flagged() -> None:
    acts = posts("包子", 5, 2)
    flags = conduct_flags(
        days=[summary(2)],
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["m209"],
        post_exempt_by_day={2: {"饺子"}},
    )
    assert flags == ()


# --------------------------------------------------------------------------- 潜水: 3 days < 10


def _three_days(counts: dict[str, list[int]], first: int = 2) -> list[Activity]:
    acts: list[Activity] = []
    for player, per_day in counts.items():
        for offset, n in enumerate(per_day):
            acts += posts(player, n, first + offset)
    return acts


def test_three_consecutive_days_under_ten() -> None:
    # m209.txt:718 （2）连续三个未执行加速的讨论日发言均不足十帖
    days = [summary(2), summary(3), summary(4)]
    acts = _three_days({"饺子": [7, 8, 9], "包子": [9, 10, 9]})
    flags = conduct_flags(days=days, activities=acts, players=ROSTER, rules=CONDUCT["m209"])
    assert len(flags) == 1
    flag = flags[0]
    assert flag.id == "d4-qianshui-streak-饺子"
    assert flag.reason == (
        "第2、3、4天连续3个未执行加速的讨论日发言均不足10帖（分别为7、8、9帖）（潜水）"
    )
    assert flag.card is Card.YELLOW
    assert flag.rule == "m209.txt:718"
    assert len(flag.evidence) == 24


def test_m135_streak_speaks_of_second_stage_acceleration() -> None:
    # m135.txt:312 （2）连续三个未执行二段加速的讨论日发言均不足十帖。
    days = [summary(2), summary(3), summary(4)]
    acts = _three_days({"饺子": [6, 6, 6], "包子": [10, 10, 10]})
    (flag,) = conduct_flags(days=days, activities=acts, players=ROSTER, rules=CONDUCT["m135"])
    assert "未执行二段加速" in flag.reason
    assert flag.rule == "m135.txt:312"


def test_accelerated_day_breaks_the_streak_unless_configured() -> None:
    days = [summary(d) for d in (2, 3, 4, 5)]
    acts = _three_days({"饺子": [6, 6, 6, 6], "包子": [10, 10, 10, 10]})
    accel = {4: True}
    flags = conduct_flags(
        days=days, activities=acts, players=ROSTER, rules=CONDUCT["m209"], accelerated_by_day=accel
    )
    assert flags == ()
    flags = conduct_flags(
        days=days,
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["m209"],
        accelerated_by_day=accel,
        streak_skips_accelerated=True,
    )
    assert [f.id for f in flags] == ["d5-qianshui-streak-饺子"]
    assert flags[0].reason.startswith("第2、3、5天")


def test_streak_restarts_after_a_flag_and_after_a_good_day() -> None:
    days = [summary(d) for d in range(2, 10)]
    # 2,3,4 under → flag on 4; 5,6 under, 7 has 10 → reset; 8,9 under → no flag yet
    acts = _three_days({"饺子": [6, 6, 6, 6, 6, 10, 6, 6], "包子": [10] * 8})
    flags = conduct_flags(days=days, activities=acts, players=ROSTER, rules=CONDUCT["m209"])
    assert [f.id for f in flags] == ["d4-qianshui-streak-饺子"]
    acts = _three_days({"饺子": [6] * 6, "包子": [10] * 6})
    flags = conduct_flags(days=days[:6], activities=acts, players=ROSTER, rules=CONDUCT["m209"])
    assert [f.id for f in flags] == ["d4-qianshui-streak-饺子", "d7-qianshui-streak-饺子"]


# --------------------------------------------------------------------------- 未投票


def test_no_vote_on_a_non_accelerated_day() -> None:
    # m209.txt:719 （3）在未执行加速的讨论日未投票; 601 讨论结束时，未回复投票帖者将被判罚黄牌
    acts = posts("饺子", 5, 2) + posts("包子", 5, 2)
    flags = conduct_flags(
        days=[summary(2)],
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["m209"],
        voted_by_day={2: {"包子"}},
    )
    assert [(f.id, f.reason, f.card, f.rule) for f in flags] == [
        (
            "d2-no-vote-饺子",
            "第2天未投票（讨论结束时未回复投票帖，潜水）",
            Card.YELLOW,
            "m209.txt:719, m209.txt:601",
        )
    ]


def test_no_vote_not_judged_without_vote_data_or_when_excused() -> None:
    acts = posts("饺子", 5, 2) + posts("包子", 5, 2)
    base = {"days": [summary(2)], "activities": acts, "players": ROSTER, "rules": CONDUCT["m209"]}
    assert conduct_flags(**base, voted_by_day={}) == ()  # type: ignore[arg-type]
    # m209.txt:357 大难不死 …然后白痴不能参与投票
    excused = conduct_flags(
        **base,  # type: ignore[arg-type]
        voted_by_day={2: {"包子"}},
        vote_exempt_by_day={2: {"饺子"}},
    )
    assert excused == ()


# --------------------------------------------------------------------------- 诈尸


def test_zhashi_after_out_time_only() -> None:
    # m209.txt:723 （2）已出局角色在讨论帖、投票帖、进程帖中发言（即“诈尸”）
    players = [PlayerLife("饺子", out_at=at(3, 12)), PlayerLife("包子")]
    before = act("饺子", 1003, "discussion", at(3, 11))
    after = act("饺子", 1003, "discussion", at(3, 13))
    flags = conduct_flags(
        days=[summary(3)],
        activities=[before, after],
        players=players,
        rules=CONDUCT["m209"],
        as_of=at(3, 9),  # judge only 诈尸 here
    )
    assert len(flags) == 1
    flag = flags[0]
    assert flag.id == "d3-zhashi-饺子"
    assert flag.reason == "饺子已于12月3日12:00出局，之后在讨论帖发帖1次（诈尸）"
    assert [e.pid for e in flag.evidence] == [after.pid]
    assert flag.card is None  # the director picks the colour
    assert flag.rule == "m209.txt:723"


def test_posts_after_going_out_are_not_counted() -> None:
    # m209.txt:723 （2）已出局角色在讨论帖、投票帖、进程帖中发言（即“诈尸”）: not 发言 of the
    # day (m209.txt:717 发言不足五帖); a post at the very moment of going out is no 诈尸 and counts
    mine = posts("饺子", 4, 3, start_hour=12)  # 12:00, 12:01, 12:02, 12:03
    counts = count_posts(mine, day=3, opens=at(3, 9), closes=at(3, 22), discussion_tids=(1003,))
    assert counts["饺子"].count == 4
    after = without_posts_after_out(counts, {"饺子": at(3, 12, 1), "包子": at(3, 10)})
    pc = after["饺子"]
    assert (pc.count, pc.pids) == (2, (mine[0].pid, mine[1].pid))
    assert [e.pid for e in pc.evidence] == [mine[0].pid, mine[1].pid]
    assert pc.excluded == (
        (mine[2].pid, "出局后发帖（12月3日12:02，12月3日12:01出局），不计入发言"),
        (mine[3].pid, "出局后发帖（12月3日12:03，12月3日12:01出局），不计入发言"),
    )
    assert "包子" not in after  # no post, nothing to drop


def test_zhashi_groups_the_threads_of_a_day() -> None:
    players = [PlayerLife("饺子", out_at=at(3, 12)), PlayerLife("包子")]
    acts = [
        act("饺子", 2003, "vote", at(3, 13)),
        act("饺子", PROGRESS_TID, "progress", at(3, 14)),
        act("饺子", 1003, "discussion", at(3, 15)),
    ]
    (flag,) = conduct_flags(
        days=[summary(3)], activities=acts, players=players, rules=CONDUCT["m209"], as_of=at(3, 9)
    )
    assert flag.reason == "饺子已于12月3日12:00出局，之后在讨论帖、投票帖、进程帖发帖3次（诈尸）"


def test_tubian24_idiot_may_still_discuss_and_rules_thread_counts() -> None:
    # tubian24.txt:112 装傻 —— 当白痴因投票而出局后，若拥有[装傻]技能，白痴仍可在讨论帖进行发言
    # tubian24.txt:298 （1）禁止已出局角色在讨论帖、投票帖、进程帖或规则帖中发言
    idiot = PlayerLife("饺子", out_at=at(2, 22), may_post_after_out=frozenset({"discussion"}))
    acts = [
        act("饺子", 1003, "discussion", at(3, 10)),
        act("饺子", 999, "rules", at(3, 11)),
    ]
    (flag,) = conduct_flags(
        days=[summary(3)],
        activities=acts,
        players=[idiot],
        rules=CONDUCT["tubian24"],
        as_of=at(3, 9),
    )
    assert flag.kind is FlagKind.ZHASHI
    assert "规则帖" in flag.reason and "讨论帖" not in flag.reason
    assert flag.rule == "tubian24.txt:298"
    # m209 does not name the rules thread (m209.txt:723)
    assert (
        conduct_flags(
            days=[summary(3)],
            activities=acts[1:],
            players=[PlayerLife("饺子", out_at=at(2, 22))],
            rules=CONDUCT["m209"],
            as_of=at(3, 9),
        )
        == ()
    )


# --------------------------------------------------------------------------- fonts, last words


def test_red_and_enlarged_font() -> None:
    # m209.txt:722 （1）使用导演专用的放大字体、红色字体（或导演认为与 #FF0000 相近颜色的字体）
    acts = [
        act("饺子", 1002, "discussion", at(2, 10), red=True),
        act("饺子", 2002, "vote", at(2, 11), enlarged=True),
        act("包子", 1002, "discussion", at(2, 12)),
    ]
    flags = conduct_flags(
        days=[summary(2)], activities=acts, players=ROSTER, rules=CONDUCT["m209"], as_of=at(2, 9)
    )
    assert [(f.id, f.reason, f.rule) for f in flags] == [
        (
            "d2-font-饺子",
            "第2天在讨论帖、投票帖使用导演专用的红色字体、放大字体，共2帖（红色1帖，放大1帖）",
            "m209.txt:722",
        )
    ]


def test_tubian24_red_font() -> None:
    # tubian24.txt:307 （1）禁止使用红色字体
    acts = [act("饺子", 1002, "discussion", at(2, 10), red=True)]
    (flag,) = conduct_flags(
        days=[summary(2)],
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["tubian24"],
        as_of=at(2, 9),
    )
    assert flag.reason == "第2天在讨论帖使用导演专用的红色字体，共1帖"
    assert flag.rule == "tubian24.txt:307, tubian24.txt:308"


def test_discuz_code_in_last_words() -> None:
    # m209.txt:193 遗言中禁止使用Discuz!代码。
    players = [PlayerLife("饺子", out_at=at(2, 22)), PlayerLife("包子")]
    words = act("饺子", 5000, "lastwords", at(2, 23), has_bbcode=True)
    plain = act("包子", 5000, "lastwords", at(2, 23))
    flags = conduct_flags(
        days=[summary(2)],
        activities=[words, plain],
        players=players,
        rules=CONDUCT["m209"],
        as_of=at(2, 9),
    )
    assert [(f.id, f.reason, f.rule) for f in flags] == [
        (
            f"d2-lastwords-code-饺子-p{words.pid}",
            "饺子的遗言中使用了Discuz!代码（遗言中禁止使用Discuz!代码）",
            "m209.txt:193",
        )
    ]


# --------------------------------------------------------------------------- zhenyan


def _inquiry(player: str, day: int, minute: int) -> Activity:
    return act(player, 4000 + day, "inquiry", at(day, 10, minute))


def test_more_than_three_inquiries_a_day() -> None:
    # zhenyan.txt:165 每名角色每天可以在询问贴向警长询问3次问题
    acts = [_inquiry("饺子", 2, m) for m in range(4)] + [
        _inquiry("包子", 2, 10 + m) for m in range(3)
    ]
    acts += [_inquiry("烧卖", 2, 20 + m) for m in range(5)]  # the sheriff answering
    players = [*ROSTER, PlayerLife("烧卖")]
    flags = conduct_flags(
        days=[summary(2, inquiry=True)],
        activities=acts,
        players=players,
        rules=CONDUCT["zhenyan"],
        sheriff_by_day={2: "烧卖"},
        as_of=at(2, 9),
    )
    assert len(flags) == 1
    flag = flags[0]
    assert flag.id == "d2-inquiry-limit-饺子"
    assert flag.reason == (f"第2天在询问贴询问4次，超过每天3次的上限（超出的在pid {acts[3].pid}）")
    assert flag.public_reason == "第2天在询问贴询问4次，超过每天3次的上限"
    assert flag.rule == "zhenyan.txt:165, zhenyan.txt:147"
    assert len(flag.evidence) == 4


def test_one_inquiry_post_with_four_questions_is_over_the_limit() -> None:
    # zhenyan.txt:165 每名角色每天可以在询问贴向警长询问3次问题 — each question mark a question
    # (docs/rulings.md, 询问与猜词), as the inquiry thread counts them
    first = dataclasses.replace(_inquiry("饺子", 2, 0), questions=2)
    second = dataclasses.replace(_inquiry("饺子", 2, 1), questions=2)
    flags = conduct_flags(
        days=[summary(2, inquiry=True)],
        activities=[first, second, dataclasses.replace(_inquiry("包子", 2, 2), questions=3)],
        players=[*ROSTER, PlayerLife("烧卖")],
        rules=CONDUCT["zhenyan"],
        sheriff_by_day={2: "烧卖"},
        as_of=at(2, 9),
    )
    assert [f.id for f in flags] == ["d2-inquiry-limit-饺子"]
    assert flags[0].reason == (
        f"第2天在询问贴询问4次，超过每天3次的上限（超出的在pid {second.pid}）"
    )


def test_zhenyan_sheriff_may_not_post_in_discussion() -> None:
    # zhenyan.txt:109 成为警长的角色不能在讨论贴发言
    # zhenyan.txt:291 （1）警长在任何时候于正常讨论贴发言……（直接黄牌或红牌）
    acts = posts("烧卖", 2, 2) + posts("饺子", 5, 2) + posts("包子", 5, 2)
    players = [*ROSTER, PlayerLife("烧卖")]
    flags = conduct_flags(
        days=[summary(2)],
        activities=acts,
        players=players,
        rules=CONDUCT["zhenyan"],
        sheriff_by_day={2: "烧卖"},
    )
    # the sheriff is not asked for 5 posts in a thread he may not post in
    assert [(f.id, f.card, f.rule) for f in flags] == [
        ("d2-sheriff-discussion-烧卖", Card.YELLOW, "zhenyan.txt:109, zhenyan.txt:291")
    ]
    assert flags[0].reason == "警长烧卖第2天在讨论帖发言2帖（警长不能在讨论贴发言；直接黄牌或红牌）"
    # the same posts in m209 are nothing special; the sheriff must post like anyone
    m209 = conduct_flags(
        days=[summary(2)],
        activities=acts,
        players=players,
        rules=CONDUCT["m209"],
        sheriff_by_day={2: "烧卖"},
    )
    assert [f.id for f in m209] == ["d2-qianshui-烧卖"]


def test_each_rule_sets_fixed_cards_refuse_the_others() -> None:
    # zhenyan.txt:291 （1）警长在任何时候于正常讨论贴发言……（直接黄牌或红牌）
    zhenyan = CONDUCT["zhenyan"]
    problem = zhenyan.card_problem(FlagKind.SHERIFF_DISCUSSION, Card.BLUE)
    assert problem == (
        "按规则（zhenyan.txt:109, zhenyan.txt:291），警长在讨论帖发言判黄牌或红牌，不能给蓝牌"
    )
    assert zhenyan.card_problem(FlagKind.SHERIFF_ANSWER, Card.RED) is None
    assert zhenyan.card_problem(FlagKind.SHERIFF_INQUIRY, Card.BLUE) is not None
    # zhenyan.txt:271 m135.txt:310 m209.txt:716 潜水（以下行为均固定判罚一张“黄牌”）;
    # tubian24.txt:324 ……将直接判作黄牌
    for name in ("zhenyan", "m135", "m209", "tubian24"):
        for kind in (FlagKind.QIANSHUI, FlagKind.QIANSHUI_STREAK, FlagKind.NO_VOTE):
            assert CONDUCT[name].card_problem(kind, Card.YELLOW) is None
            assert CONDUCT[name].card_problem(kind, Card.BLUE) is not None
            assert CONDUCT[name].card_problem(kind, Card.RED) is not None
    # nizhuan.txt:192 未回复投票帖者将被判罚黄牌; its 违规判定 is empty (nizhuan.txt:227)
    nizhuan = CONDUCT["nizhuan"]
    assert nizhuan.card_problem(FlagKind.NO_VOTE, Card.BLUE) is not None
    assert nizhuan.card_problem(FlagKind.QIANSHUI, Card.BLUE) is None
    # a kind the texts give no card for takes any
    assert zhenyan.card_problem(FlagKind.FONT, Card.BLUE) is None


def test_sheriff_answer_other_than_yes_no_unknown() -> None:
    # zhenyan.txt:166 警长只能用是/否/不知道回答。
    good = SheriffAnswer("烧卖", 2, 4002, 70, 5, at(2, 12), answer="是")
    bad = SheriffAnswer(
        "烧卖", 2, 4002, 71, 6, at(2, 13), problem="回答只能是是/否/不知道，写成了「可能吧」"
    )
    flags = conduct_flags(
        days=[summary(2, inquiry=True)],
        activities=[],
        players=[PlayerLife("烧卖")],
        rules=CONDUCT["zhenyan"],
        sheriff_by_day={2: "烧卖"},
        sheriff_answers=[good, bad],
        as_of=at(2, 9),
    )
    assert [(f.id, f.card) for f in flags] == [("d2-sheriff-answer-烧卖", Card.YELLOW)]
    assert "6楼：回答只能是是/否/不知道，写成了「可能吧」" in flags[0].reason
    # the public 判罚 draft says it without the floor (docs/rulings.md: links by findpost)
    assert flags[0].public_reason == (
        "警长烧卖第2天在询问贴的回答不是是/否/不知道（1帖）（直接黄牌或红牌）"
    )
    assert [e.pid for e in flags[0].evidence] == [71]


def test_sheriff_asking_or_guessing_is_its_own_flag() -> None:
    # zhenyan.txt:109 成为警长的角色……也不能在询问贴中提问，猜词
    # zhenyan.txt:291 警长回复指定三种回答以外的内容（直接黄牌或红牌）
    guess = SheriffAnswer(
        "烧卖", 2, 4002, 72, 7, at(2, 12), problem="警长只能用是/否/不知道回答", asks="猜词"
    )
    ask = SheriffAnswer(
        "烧卖", 2, 4002, 73, 8, at(2, 13), problem="警长只能用是/否/不知道回答", asks="提问"
    )
    flags = conduct_flags(
        days=[summary(2, inquiry=True)],
        activities=[],
        players=[PlayerLife("烧卖")],
        rules=CONDUCT["zhenyan"],
        sheriff_by_day={2: "烧卖"},
        sheriff_answers=[guess, ask],
        as_of=at(2, 9),
    )
    # not "the answer is not 是/否/不知道": the sheriff asked and guessed
    assert [(f.id, f.card, f.rule) for f in flags] == [
        ("d2-sheriff-inquiry-烧卖", Card.YELLOW, "zhenyan.txt:109, zhenyan.txt:291")
    ]
    assert "7楼猜词、8楼提问" in flags[0].reason
    assert "楼" not in flags[0].public_reason and "2帖" in flags[0].public_reason
    assert "不能在询问贴中提问、猜词" in flags[0].reason and "猜词不计" in flags[0].reason
    assert [e.pid for e in flags[0].evidence] == [72, 73]


def test_edited_vote_is_flagged_once_per_post() -> None:
    edit = EditedVote(
        "饺子", 2, 2002, 88, 7, at(2, 10), url="u88", edited_at=at(2, 11, 5), editor="饺子"
    )
    flags = conduct_flags(
        days=[summary(2)],
        activities=[],
        players=ROSTER,
        rules=CONDUCT["m209"],
        edited_votes=[edit, edit],
        as_of=at(2, 9),
    )
    assert [(f.id, f.reason) for f in flags] == [
        (
            "d2-edited-vote-饺子-p88",
            "第2天投票帖7楼被编辑过（饺子于12月2日11:05编辑），以截止前首次抓取的版本为准",
        )
    ]


# --------------------------------------------------------------------------- count_posts


def test_count_posts_window_threads_states_and_duplicates() -> None:
    d = summary(2)
    inside = posts("饺子", 3, 2)
    acts = [
        *inside,
        inside[0],  # the same post given twice counts once
        act("饺子", 1002, "discussion", d.opens),  # at the open: counts
        act("饺子", 1002, "discussion", d.closes),  # at the close: counts
        act("饺子", 1002, "discussion", d.closes + timedelta(seconds=1)),
        act("饺子", 1002, "discussion", d.opens - timedelta(minutes=1)),
        act("饺子", 1002, "discussion", at(2, 15), state="vanished"),
        act("饺子", 1002, "discussion", at(2, 16), state="blocked"),
        act("饺子", 2002, "vote", at(2, 17)),  # not the discussion thread
    ]
    counts = count_posts(
        acts, day=2, opens=d.opens, closes=d.closes, discussion_tids=d.discussion_tids
    )
    pc = counts["饺子"]
    assert pc.count == 6
    assert [why for _, why in pc.excluded] == [
        "开门前发帖（12月2日08:59），不计入第2天",
        "该帖被管理员或版主屏蔽，不计入发言",
        "关门后发帖（12月2日22:00），不计入第2天",
    ]
    assert [note for _, note in pc.notes] == ["该帖已消失（抓取时已见），仍计入发言"]
    strict = count_posts(
        acts,
        day=2,
        opens=d.opens,
        closes=d.closes,
        discussion_tids=d.discussion_tids,
        policy=CountPolicy(count_removed=False),
    )
    assert strict["饺子"].count == 5
    json.dumps(pc.to_dict(), ensure_ascii=False)


def test_bad_inputs_are_refused_in_chinese() -> None:
    with pytest.raises(ValueError, match="未知的规则"):
        conduct_flags(days=[], activities=[], players=[], rules=get_ruleset("werewolf").conduct)
    with pytest.raises(ValueError, match="未知的帖子类别"):
        Activity("饺子", 1, "chat", 1, None, at(2, 10))


def test_flags_serialise_to_json() -> None:
    acts = posts("饺子", 1, 2, red=True)
    flags = conduct_flags(
        days=[summary(2)],
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["m209"],
        voted_by_day={2: set()},
    )
    data = [f.to_dict() for f in flags]
    text = json.dumps(data, ensure_ascii=False)
    assert '"card": "黄牌"' in text and '"kind_zh": "潜水（发言不足）"' in text


# --------------------------------------------------------------------------- properties

_PLAYERS = ["饺子", "包子", "馄饨"]
_LIVES = [PlayerLife("饺子"), PlayerLife("包子", out_at=at(3, 12)), PlayerLife("馄饨")]
_DAYS = [summary(d, inquiry=True) for d in (2, 3, 4)]
_ROLES = {
    "discussion": lambda d: 1000 + d,
    "vote": lambda d: 2000 + d,
    "progress": lambda d: PROGRESS_TID,
    "inquiry": lambda d: 4000 + d,
    "lastwords": lambda d: 5000,
}


@st.composite
def activity_lists(draw: st.DrawFn) -> list[Activity]:
    n = draw(st.integers(min_value=0, max_value=40))
    out = []
    for pid in range(1, n + 1):
        day = draw(st.sampled_from([2, 3, 4]))
        role = draw(st.sampled_from(sorted(_ROLES)))
        out.append(
            Activity(
                player=draw(st.sampled_from(_PLAYERS)),
                tid=_ROLES[role](day),
                role=role,
                pid=pid,
                floor=pid,
                at=at(day, 8) + timedelta(minutes=draw(st.integers(0, 15 * 60))),
                state=draw(st.sampled_from(["visible", "visible", "blocked", "vanished"])),
                red=draw(st.booleans()),
                enlarged=draw(st.booleans()),
                has_bbcode=draw(st.booleans()),
                hidden=draw(st.sampled_from([(), (), ("colour",), ("tiny", "hide")])),
            )
        )
    return out


def _run(acts: list[Activity], ruleset: str, **kw: Any) -> tuple[Flag, ...]:
    return conduct_flags(
        days=_DAYS,
        activities=acts,
        players=_LIVES,
        rules=CONDUCT[ruleset],
        sheriff_by_day={3: "馄饨", 4: "馄饨"},
        voted_by_day={2: {"饺子"}, 3: {"包子"}},
        accelerated_by_day={3: True},
        **kw,
    )


@settings(max_examples=60, deadline=None)
@given(
    acts=activity_lists(), ruleset=st.sampled_from(["m209", "zhenyan", "tubian24"]), data=st.data()
)
def test_activity_order_changes_nothing(
    acts: list[Activity], ruleset: str, data: st.DataObject
) -> None:
    """The order activities come in changes no flag and no count — also when a post was seen
    twice (another state, other marks): it counts once, the same reading either way."""
    again = (
        [
            dataclasses.replace(
                a, red=not a.red, state="visible" if a.state != "visible" else "blocked"
            )
            for a in data.draw(st.lists(st.sampled_from(acts), max_size=6, unique=True))
        ]
        if acts
        else []
    )
    both = acts + again
    shuffled = data.draw(st.permutations(both))
    assert _run(shuffled, ruleset) == _run(both, ruleset)
    for d in _DAYS:
        kw = {"day": d.day, "opens": d.opens, "closes": d.closes}
        kw["discussion_tids"] = d.discussion_tids
        assert count_posts(shuffled, **kw) == count_posts(both, **kw)  # type: ignore[arg-type]


@settings(max_examples=40, deadline=None)
@given(acts=activity_lists(), ruleset=st.sampled_from(["m209", "zhenyan", "tubian24"]))
def test_counts_the_caller_made_change_no_flag(acts: list[Activity], ruleset: str) -> None:
    """derive hands conduct_flags each day's count_posts (counted once, for the day's result):
    the flags are the ones conduct_flags counts for itself."""
    counts = {
        d.day: count_posts(
            acts, day=d.day, opens=d.opens, closes=d.closes, discussion_tids=d.discussion_tids
        )
        for d in _DAYS
    }
    assert _run(acts, ruleset, counts_by_day=counts) == _run(acts, ruleset)


@settings(max_examples=40, deadline=None)
@given(acts=activity_lists())
def test_flag_ids_are_stable_and_unique(acts: list[Activity]) -> None:
    first = _run(acts, "zhenyan")
    again = _run(list(acts), "zhenyan")
    assert [f.id for f in first] == [f.id for f in again]
    assert len({f.id for f in first}) == len(first)
    for f in first:
        assert f.id.startswith(f"d{f.day}-{f.kind.value}-{f.player}")


# ------------------------------------------------- folded names, hidden text, unread days


def test_hidden_text_is_flagged_once_per_post_for_the_director() -> None:
    """DESIGN: "Text hidden by colour, size or [hide] is flagged, not trusted" — a flag the
    director confirms or dismisses, citing the ruling a director can read."""
    white = act("饺子", 2002, "vote", at(2, 10), hidden=("colour",))
    tiny = act("包子", 1002, "discussion", at(2, 11), hidden=("tiny", "hide"))
    plain = act("包子", 1002, "discussion", at(2, 12))
    flags = conduct_flags(
        days=[summary(2)],
        activities=[white, white, tiny, plain],
        players=ROSTER,
        rules=CONDUCT["m135"],
        as_of=at(2, 9),  # the day is open: only the hidden-text flags
    )
    assert [(f.id, f.kind, f.card, f.rule) for f in flags] == [
        (
            f"d2-hidden-text-包子-p{tiny.pid}",
            FlagKind.HIDDEN_TEXT,
            None,
            "docs/rulings.md#hidden-text",
        ),
        (
            f"d2-hidden-text-饺子-p{white.pid}",
            FlagKind.HIDDEN_TEXT,
            None,
            "docs/rulings.md#hidden-text",
        ),
    ]
    assert flags[0].reason == (
        f"第2天在讨论帖pid {tiny.pid}使用了隐藏文字（小字、[hide]）；"
        "隐藏文字不予采信（其中的投票行不计票）"
    )
    assert flags[1].kind.zh == "隐藏文字（白字/小字/[hide]）"
    assert [e.pid for e in flags[1].evidence] == [white.pid]


def test_a_folded_name_is_flagged_once_per_post() -> None:
    """A vote whose name matched only once invisible characters / full-width letters were
    folded counts, and the director is told (docs/rulings.md#vote-names)."""
    fn = FoldedName(
        "包子", 2, 2002, 77, 5, at(2, 10), "u77", written="饺<U+200B>子", target="饺子",
        folded=("invisible",),
    )  # fmt: skip
    flags = conduct_flags(
        days=[summary(2)],
        activities=[],
        players=ROSTER,
        rules=CONDUCT["zhenyan"],
        folded_names=[fn, fn],
        as_of=at(2, 9),
    )
    assert [(f.id, f.kind.zh, f.card, f.rule, f.reason) for f in flags] == [
        (
            "d2-name-folded-包子-p77",
            "票中名字含不可见字符/全角字母",
            None,
            "docs/rulings.md#vote-names",
            "第2天投票帖5楼的投票对象「饺<U+200B>子」含不可见字符，按名单中的「饺子」计票",
        )
    ]
    assert flags[0].to_dict()["evidence"][0]["url"] == "u77"


def test_a_day_nobody_could_read_raises_no_qianshui_or_no_vote() -> None:
    """m209.txt:717, 719: 潜水 and 未投票 are judged on what was posted; a day none of whose
    threads bansha ever read (not crawled yet, the forum was down) raises nothing, and it
    breaks a run of 连续三个 days."""
    days = [summary(d) for d in (2, 3, 4, 5)]
    acts = [a for d in (2, 3, 5) for a in posts("饺子", 6, d) + posts("包子", 6, d)]
    flags = conduct_flags(
        days=days,
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["m209"],
        voted_by_day={2: {"饺子", "包子"}, 3: {"饺子", "包子"}, 4: set(), 5: {"饺子", "包子"}},
        uncrawled_days={4},
    )
    assert not [f for f in flags if f.day == 4]
    assert not [f for f in flags if f.kind is FlagKind.QIANSHUI_STREAK]  # 2, 3, (4), 5
    # the same day read and empty: everyone is flagged (and 2-3-4 make a run of three)
    read = conduct_flags(
        days=days,
        activities=acts,
        players=ROSTER,
        rules=CONDUCT["m209"],
        voted_by_day={2: {"饺子", "包子"}, 3: {"饺子", "包子"}, 4: set(), 5: {"饺子", "包子"}},
    )
    assert {(f.kind, f.player) for f in read if f.day == 4} == {
        (FlagKind.QIANSHUI, "饺子"),
        (FlagKind.QIANSHUI, "包子"),
        (FlagKind.NO_VOTE, "饺子"),
        (FlagKind.NO_VOTE, "包子"),
        (FlagKind.QIANSHUI_STREAK, "饺子"),
        (FlagKind.QIANSHUI_STREAK, "包子"),
    }


def test_edited_vote_cites_the_ruling_a_director_can_read() -> None:
    """Every flag cites the rule post or a ruling a director can read (docs/rulings.md)."""
    for rules in CONDUCT.values():
        assert rules.rule(FlagKind.EDITED_VOTE) == "docs/rulings.md#edited-vote"
        assert rules.rule(FlagKind.HIDDEN_TEXT) == "docs/rulings.md#hidden-text"
        for k in FlagKind:
            for named in re.findall(r"[\w./-]+\.(?:txt|md)\b", rules.rule(k)):
                assert named.endswith(".txt") or named == "docs/rulings.md", (k, rules.rule(k))
