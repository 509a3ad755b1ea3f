"""逆转时空: the day's duels and red cards in time order, a duel that closes the day, the
逆转轮's immediate end, the NPC 救药 — each test quoting the rule it checks."""

from __future__ import annotations

import json
from pathlib import Path

from tests.engine.rule_text import says
from tests.engine.test_nizhuan_cli import _after, game_at_day_two, run
from tests.engine.test_nizhuan_support import (
    act,
    day,
    deaths,
    night,
    outcome,
    start,
    through_history,
    to_day_two,
)

AT = "2026-12-02T{}:00+08:00"

#: the witch and the knight as second / first cards where a test needs it
WITCH_FIRST = (
    ("甲", ("狼人", "长老")),
    ("乙", ("骑士", "村民")),
    ("丙", ("狼人", "村民")),
    ("丁", ("预言家", "定序王子")),
    ("戊", ("猎人", "村民")),
    ("己", ("女巫", "村民")),
    ("庚", ("村民", "蚀时狼妃")),
    ("辛", ("村民", "村民")),
)
KNIGHT_SECOND = (
    ("甲", ("狼人", "女巫")),
    ("乙", ("村民", "骑士")),
    ("丙", ("狼人", "村民")),
    ("丁", ("预言家", "定序王子")),
    ("戊", ("猎人", "村民")),
    ("己", ("长老", "村民")),
    ("庚", ("村民", "蚀时狼妃")),
    ("辛", ("村民", "村民")),
)


def test_a_knight_red_carded_before_his_duel_cannot_duel() -> None:
    says("nizhuan.txt:49", "角色在出局结算结束后，不能继续参与讨论、投票、行使特权")
    state = to_day_two(start())
    _, report = day(
        state,
        2,
        actions=[
            act("乙", "红牌罚下", at=AT.format("09:00")),
            act("乙", "决斗", "甲", at=AT.format("10:00")),
        ],
    )
    assert ("甲", 1, "乙的[决斗]") not in deaths(report), deaths(report)


def test_a_hunter_red_carded_before_a_duel_on_him_does_not_shoot() -> None:
    says("nizhuan.txt:50", "红牌罚下出局的角色没有遗言权利，除情侣<殉情>外不触发任何技能")
    state = to_day_two(start())
    _, report = day(
        state,
        2,
        actions=[
            act("戊", "红牌罚下", at=AT.format("09:00")),
            act("乙", "决斗", "戊", at=AT.format("10:00")),
            act("戊", "最后一枪", "辛"),
        ],
    )
    assert deaths(report)[0] == ("戊", 1, "红牌罚下"), deaths(report)
    assert ("辛", 1, "戊的[最后一枪]") not in deaths(report)


def test_the_npc_antidote_still_saves_the_character_when_its_recorded_card_is_out() -> None:
    says("nizhuan.txt:93", "女巫可以选择一名角色，对其使用救药。该角色当晚不会因被指杀而出局")
    says("nizhuan.txt:22", "第二轮狼人杀游戏将有和历史轮行动完全相同的NPC")
    state = to_day_two(start(WITCH_FIRST))
    state, _ = day(state, 2)
    state, report = night(state, 2, act("丙", "杀人", "辛"), act("己", "救药", "辛"))
    assert deaths(report) == []
    for n in (3, 4):
        state, _ = day(state, n)
        state, _ = night(state, n, act("丙", "杀人", choice="放弃"))
    state, _ = day(state, 5, elected="丁的第二身份")
    state, _ = night(state, 5, act("庚", "时间吞噬", "丙"))  # frees night 6's kill
    state, _ = day(state, 6, out="辛的第一身份")
    # night 6 replays night 2: the NPC witch saves 辛 (the character, still in play)
    state, report = night(state, 6, act("庚", "杀人", "辛"))
    assert outcome(report, "己", "救药")[0] == "done", outcome(report, "己", "救药")
    assert outcome(report, "庚", "杀人")[0] == "blocked"  # the player's kill, saved
    assert ("辛", 2, "被指杀") not in deaths(report), deaths(report)


def test_the_reversal_round_ends_at_once_when_the_last_wolf_card_is_dueled() -> None:
    says("nizhuan.txt:127", "逆转轮中，游戏状态满足某阵营胜利条件之一，游戏立即结束")
    state = through_history(start(KNIGHT_SECOND))
    state, _ = day(state, 5, elected="丁的第二身份")
    state, _ = night(state, 5, act("甲", "毒药", "丙的第一身份"))
    state, _ = day(state, 6, out="甲的第一身份")
    state, _ = night(state, 6)
    state, report = day(
        state,
        7,
        out="辛的第一身份",
        actions=[
            act("乙", "决斗", "庚的第二身份", card="第二身份", at="2026-12-07T10:00:00+08:00")
        ],
    )
    assert report.winner == "村民阵营", report.winner
    assert ("辛", 1, "投票出局") not in deaths(report), deaths(report)


# ----------------------------------------------------------------------------- with the tally


def test_a_wolf_duel_closes_the_vote_at_once(tmp_path: Path) -> None:
    """乙's knight duels 甲's first card (狼人) at 10:00: 立刻关门. Proxies at 11:00 come after
    the close and must not count."""
    says("nizhuan.txt:106", "若决斗目标为【狼人阵营】的身份牌，则会立刻关门")
    game, db = game_at_day_two(tmp_path)
    run(game, db, "vote", "proxy", "--day", "2", "--voter", "辛", "--target", "戊",
        "--at", "2026-12-02T09:30:00+08:00")  # fmt: skip
    for voter in ("丙", "丁", "己"):
        run(game, db, "vote", "proxy", "--day", "2", "--voter", voter, "--target", "庚",
            "--at", "2026-12-02T11:00:00+08:00")  # fmt: skip
    run(game, db, "day", "add", "--day", "2", "--actor", "乙", "--skill", "决斗",
        "--target", "甲的第一身份", "--at", "2026-12-02T10:00:00+08:00")  # fmt: skip
    tally = json.loads(run(game, db, "tally", "--day", "2", "--as-of", _after(2), "--json"))
    late = [v for v in tally["votes"] if v["voter"][0] in ("丙", "丁", "己")]
    assert late and all(v["status"] == "invalid" for v in late), late
    closed = "10:00 乙的骑士决斗甲的第一身份（狼人阵营），当天立刻关门，之后的投票无效"
    assert all(v["reason"] == closed and v["rule"] == "nizhuan.txt:106" for v in late), late
    assert tally["out"] == "戊的第一身份"  # 辛's vote before the duel still counts
    data = json.loads(run(game, db, "day", "resolve", "--day", "2", "--as-of", _after(2), "--json"))
    got = [(d["player"], d["card_index"], d["cause"]) for d in data["deaths"]]
    assert ("庚", 1, "投票出局") not in got, (got, data["tally"]["out"])
    assert ("戊", 1, "投票出局") in got, got


def test_the_reversal_round_ends_at_once_in_the_night_no_poison_after() -> None:
    says("nizhuan.txt:127", "逆转轮中，游戏状态满足某阵营胜利条件之一，游戏立即结束")
    state = to_day_two(start(KNIGHT_SECOND))
    state, _ = day(state, 2)
    state, _ = night(state, 2, act("丙", "杀人", "戊"), act("戊", "最后一枪", "丙的第一身份"))
    for n in (3, 4):
        state, _ = day(state, n)
        state, _ = night(state, n, act("甲", "杀人", choice="放弃"))
    state, _ = day(state, 5, elected="丁的第二身份")
    state, _ = night(state, 5)
    state, _ = day(
        state,
        6,
        out="庚的第二身份",
        actions=[
            act("乙", "决斗", "甲的第一身份", card="第二身份", at="2026-12-06T10:00:00+08:00")
        ],
    )
    state, report = night(state, 6, act("甲", "毒药", "辛的第一身份"))
    assert report.winner == "村民阵营", (report.winner, deaths(report))
    assert ("辛", 1, "女巫[毒药]") not in deaths(report), deaths(report)


def test_a_red_card_at_night_that_ends_the_history_round_stops_the_night() -> None:
    says("nizhuan.txt:123", "历史轮中，游戏满足以下条件时，第一轮游戏立刻结束")
    state = to_day_two(start(WITCH_FIRST))
    state, _ = day(state, 2, out="甲的第一身份")
    state, report = night(state, 2, act("丙", "红牌罚下"), act("己", "毒药", "辛"))
    assert dict(state.settings)["round"] == "2"
    assert ("辛", 1, "女巫[毒药]") not in deaths(report), deaths(report)
