"""A whole m209 game through the director's commands, from the opening to the village's win.

Posts go into the store as a crawl would leave them; the director records the night actions and
resolves every phase with the engine. Along the way: the election (m209.txt:225-226), a night
kill and a poison (m209.txt:574-576), the sun's 日不落 day with its two 正午 rounds counted
from two threads (m209.txt:377-379), 黑狼王's 报复 at 黄昏1 (m209.txt:470, 542-544), the piper out
(m209.txt:496), 石像鬼 taking the knife (m209.txt:413-416), the guard (m209.txt:252), and the
win when only the village has not lost (m209.txt:505-519).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from pipeline.derive import derive
from pipeline.drafts import DraftKind
from pipeline.game.gamefile import load_game
from pipeline.store import open_store
from tests.pipeline.derive.test_sun_rounds import (
    FIRST_TID,
    LINEUP,
    TZ,
    VOTE_TID,
    add_posts,
    draft_body,
    run,
    vote,
    write_game,
)

DAY1 = datetime(2026, 12, 1, 10, 0, tzinfo=TZ)
DAY3 = """
[[days]]
day = 3
opens = 2026-12-03T10:00:00+08:00
closes = 2026-12-03T22:00:00+08:00
discussion = 2021
vote = 2022
"""

DAY4 = """
[[days]]
day = 4
opens = 2026-12-04T10:00:00+08:00
closes = 2026-12-04T22:00:00+08:00
discussion = 2031
vote = 2032
"""


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return DAY1 + timedelta(days=day - 1, hours=hour - 10, minutes=minute)


def after(day: int) -> str:
    return at(day + 1, 9).isoformat()


def night(game: tuple[Path, Path], n: int, *actions: tuple[str, str, tuple[str, ...], str]) -> dict:
    for actor, skill, targets, choice in actions:
        args = ["night", "add", "--night", str(n), "--actor", actor, "--skill", skill]
        args += [x for t in targets for x in ("--target", t)]
        args += ["--choice", choice] if choice else []
        run(game, *args)
    return json.loads(run(game, "night", "resolve", "--night", str(n), "--json"))


def deaths(report: dict) -> list[tuple[str, str]]:
    return [(d["player"], d["cause"]) for d in report["deaths"]]


def test_a_whole_m209_game(tmp_path: Path) -> None:
    file = write_game(tmp_path / "m209.toml", more_days=DAY3)
    game = (file, tmp_path / "m209.db")

    # 开局: 隐狼 picks 3,4,5 (no 接刀), 守卫 the French mode (m209.txt:430-436, 250-252)
    night(game, 0, ("丙", "伪装", (), "3,4,5"), ("己", "模式选择", (), "法式守卫"))

    # day 1, the election: everyone votes 戊 (竞岗, m209.txt:226)
    add_posts(game[1], 2002, [vote(4000 + i, n, "戊", at(1, 12, i))
                              for i, n in enumerate("甲乙丙丁己庚辛壬癸子丑寅")])  # fmt: skip
    day1 = json.loads(run(game, "day", "resolve", "--day", "1", "--json", "--as-of", after(1)))
    assert day1["sheriff"] == "戊"

    # night 1: the wolves kill the sun, who names the extra round's speakers; the witch
    # poisons 狼美人; the seer checks 黑狼王
    n1 = night(
        game,
        1,
        ("甲", "杀人", ("壬",), ""),
        ("壬", "日不落", ("戊", "己", "庚", "辛", "癸", "子"), ""),
        ("辛", "毒药", ("乙",), ""),
        ("戊", "预言", ("甲",), ""),
    )
    assert deaths(n1) == [("壬", "狼人[杀人]"), ("乙", "女巫[毒药]")]
    assert "日不落" in n1["public"]
    run(game, "lastwords", "add", "--player", "壬", "--text", "狼人在甲乙之间",
        "--at", at(2, 8).isoformat())  # fmt: skip
    opening = draft_body(file, game[1], DraftKind.DAY_OPEN, 2, at(2, 9))
    assert "1. 壬（第1晚出局）\n2. 乙（第1晚出局）" in opening and "毒药" not in opening
    assert "[b]壬[/b]：\n狼人在甲乙之间" in opening

    # day 2 (日不落): everyone votes in the first round, only the named in the extra one
    add_posts(game[1], FIRST_TID, [
        vote(4101, "戊", "甲", at(2, 11)), vote(4102, "己", "甲", at(2, 11, 5)),
        vote(4103, "庚", "甲", at(2, 11, 10)), vote(4104, "丙", "戊", at(2, 11, 15)),
    ])  # fmt: skip
    add_posts(game[1], VOTE_TID, [
        vote(4201, "戊", "寅", at(2, 16)), vote(4202, "己", "寅", at(2, 16, 5)),
        vote(4203, "庚", "寅", at(2, 16, 10)), vote(4204, "丙", "戊", at(2, 16, 15)),
    ])  # fmt: skip
    tally2 = json.loads(run(game, "tally", "--day", "2", "--json", "--as-of", after(2)))
    assert tally2["first_round"]["out"] == "甲" and tally2["out"] == "寅"
    bing = next(v for v in tally2["votes"] if v["voter"] == "丙")
    assert bing["status"] == "invalid" and "太阳[日]" in bing["reason"]  # not named
    # 黑狼王 voted out (not by 特攻/暴击) takes 长老 with him at 黄昏1 (m209.txt:470)
    run(game, "day", "add", "--day", "2", "--actor", "甲", "--skill", "报复", "--target", "子")
    d2 = json.loads(run(game, "day", "resolve", "--day", "2", "--json", "--as-of", after(2)))
    assert "不一致" not in run(game, "tally", "--day", "2", "--as-of", after(2))
    assert deaths(d2) == [
        ("甲", "投票出局"),
        ("寅", "投票出局"),
        ("子", "黑狼王[报复]"),
    ]
    assert any("吹笛者已出局" in line for line in d2["public"])
    result = draft_body(file, game[1], DraftKind.RESULT, 2, at(2, 22, 5))
    assert "[b]结算公示[/b]" in result  # the engine's 公示 (m209.txt:159)
    assert "第一轮[正午]最高票：甲\n额外一轮[正午]最高票：寅" in result
    assert "投票出局：甲、寅\n其他原因出局（按出局顺序）：子" in result
    assert "黑狼王" not in result  # who took 子 stays private

    # only the named may speak on the 日不落 day (m209.txt:377): the others are not judged
    # for 发言不足; the named are
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(game[1])
    flags = {f.id for f in derive(g, store, as_of=at(3, 9)).flags if f.day == 2}
    store.close()
    assert "d2-qianshui-丙" not in flags and "d2-qianshui-戊" in flags
    why = run(game, "why", "--day", "2", "--player", "丙", "--as-of", at(3, 9).isoformat())
    assert "当天不判发言不足：太阳[日不落]未指定，额外一轮不能发言" in why

    # 遗言数量为人数配备最少狼数量 (m209.txt:191): 4 — 壬, 乙, 甲, 寅 had them, 子 has none
    err = run(game, "lastwords", "add", "--player", "子", "--text", "我是长老", code=1)
    assert "没有给他这次出局的遗言权利" in err

    # night 2: 石像鬼 has the knife now that no [群内] is left; the guard saves the seer
    n2 = night(game, 2, ("丁", "杀人", ("戊",), ""), ("己", "守护", ("戊",), ""))
    assert deaths(n2) == []

    # day 3: 石像鬼 voted out; 隐狼 (no 接刀) cannot carry the knife: the wolves lose, the
    # piper lost already — the village wins (仅一个阵营未判负时自动获胜, m209.txt:505)
    add_posts(game[1], 2022, [vote(4300 + i, n, "丁", at(3, 12, i))
                              for i, n in enumerate("戊己庚辛癸丑")])  # fmt: skip
    d3 = json.loads(run(game, "day", "resolve", "--day", "3", "--json", "--as-of", after(3)))
    assert deaths(d3) == [("丁", "投票出局")]
    assert d3["winner"] == "村民阵营"
    state = run(game, "state")
    assert "胜负：村民阵营胜利" in state
    assert "全部一致" in run(game, "state", "--verify")


def test_a_blocked_vote_owes_nobody_a_vote(tmp_path: Path) -> None:
    """骑士[决斗] on a wolf: [封锁投票] closes the day's vote threads (m209.txt:205, 401-403),
    so once the director resolved the day nobody is flagged 未投票 (m209.txt:721)."""
    lineup = tuple((n, "骑士") if n == "子" else (n, r) for n, r in LINEUP)
    file = write_game(tmp_path / "k.toml", f"vote = {VOTE_TID}", lineup=lineup)
    game = (file, tmp_path / "k.db")
    night(game, 0, ("己", "模式选择", (), "法式守卫"))
    run(game, "day", "resolve", "--day", "1", "--as-of", after(1))
    night(game, 1)
    add_posts(game[1], VOTE_TID, [vote(5001, "乙", "戊", at(2, 12))])
    g = load_game(file, env={"BANSHA_COOKIE": "x"})

    def no_vote_flags() -> set[str]:
        store = open_store(game[1])
        found = {f.id for f in derive(g, store, as_of=at(3, 9)).flags if "no-vote" in f.id}
        store.close()
        return {f for f in found if f.startswith("d2-")}

    assert "d2-no-vote-丙" in no_vote_flags()  # the tally alone does not know of the duel
    run(game, "day", "add", "--day", "2", "--actor", "子", "--skill", "决斗", "--target", "甲")
    d2 = json.loads(run(game, "day", "resolve", "--day", "2", "--json", "--as-of", after(2)))
    assert deaths(d2) == [("甲", "骑士[决斗]")]
    assert no_vote_flags() == set()


def test_a_player_out_of_the_game_cannot_vote_and_the_verdict_says_why(tmp_path: Path) -> None:
    """m209.txt:210 离开游戏的角色……不能发言投票和被投票."""
    file = write_game(tmp_path / "l.toml", f"vote = {VOTE_TID}")
    game = (file, tmp_path / "l.db")
    night(game, 0, ("己", "模式选择", (), "法式守卫"))
    run(game, "day", "resolve", "--day", "1", "--as-of", after(1))
    night(game, 1, ("乙", "离开游戏", (), "暂时"))
    add_posts(
        game[1], VOTE_TID, [vote(6001, "乙", "戊", at(2, 12)), vote(6002, "丙", "乙", at(2, 13))]
    )
    data = json.loads(run(game, "tally", "--day", "2", "--json", "--as-of", after(2)))
    yi = next(v for v in data["votes"] if v["voter"] == "乙")
    assert yi["status"] == "invalid" and yi["rule"] == "m209.txt:210"
    bing = next(v for v in data["votes"] if v["voter"] == "丙")
    assert bing["status"] == "invalid"  # nor can a leaver be voted for


def test_a_revived_player_votes_again(tmp_path: Path) -> None:
    """觉醒守卫[烈阳护卫] 若结算目标出局，则复活结算目标 (m209.txt:330): from the next day on
    the revived player is in the game again — his vote counts, his posts are no 诈尸."""
    lineup = tuple((n, "觉醒守卫") if n == "己" else (n, r) for n, r in LINEUP)
    file = write_game(
        tmp_path / "r.toml", f"vote = {VOTE_TID}", lineup=lineup, more_days=DAY3 + DAY4
    )
    game = (file, tmp_path / "r.db")
    night(game, 0)
    run(game, "day", "resolve", "--day", "1", "--as-of", after(1))
    assert deaths(night(game, 1, ("甲", "杀人", ("庚",), ""))) == [("庚", "狼人[杀人]")]
    run(game, "day", "add", "--day", "2", "--actor", "己", "--skill", "烈阳护卫", "--target", "庚",
        "--at", at(2, 12).isoformat())  # fmt: skip
    d2 = json.loads(run(game, "day", "resolve", "--day", "2", "--json", "--as-of", after(2)))
    assert "庚被复活" in d2["public"]
    night(game, 2)
    add_posts(game[1], 2022, [vote(7001, "庚", "甲", at(3, 12))])
    add_posts(game[1], 2021, [(7101 + i, "庚", at(3, 13, i), f"复活后发言{i}") for i in range(5)])
    data = json.loads(run(game, "tally", "--day", "3", "--json", "--as-of", after(3)))
    geng = next(v for v in data["votes"] if v["voter"] == "庚")
    assert geng["status"] == "counted"
    flags = json.loads(run(game, "flags", "--json", "--as-of", after(3)))
    assert not [f for f in flags if f["player"] == "庚" and f["kind"] == "zhashi"]
    # out at day 2's opening: not judged for day 2, though revived at its noon
    assert not [f for f in flags if f["player"] == "庚" and f["day"] == 2]
    # killed again: the second out counts from its own time — day 3 is still his
    run(game, "day", "resolve", "--day", "3", "--as-of", after(3))
    # 甲's <报复> waits for a decision, which holds night 3 (bansha night resolve): declined
    run(game, "day", "add", "--day", "3", "--actor", "甲", "--skill", "报复", "--choice", "放弃")
    run(game, "day", "resolve", "--day", "3", "--as-of", after(3))
    # (甲 went out at day 3 on 庚's vote; 狼美人 carries the knife)
    assert deaths(night(game, 3, ("乙", "杀人", ("庚",), ""))) == [("庚", "狼人[杀人]")]
    flags = json.loads(run(game, "flags", "--json", "--as-of", at(4, 12).isoformat()))
    assert not [f for f in flags if f["player"] == "庚" and f["kind"] == "zhashi"]
    add_posts(game[1], 2031, [(7201, "庚", at(4, 11), "又说话了")])
    flags = json.loads(run(game, "flags", "--json", "--as-of", at(4, 12).isoformat()))
    assert [f["day"] for f in flags if f["player"] == "庚" and f["kind"] == "zhashi"] == [4]


def test_a_hand_recorded_out_stays_out_after_later_phases(tmp_path: Path) -> None:
    """bansha player out (a death the engine did not resolve) holds across later phases: only
    a revival the engine resolved undoes an out."""
    file = write_game(tmp_path / "o.toml", f"vote = {VOTE_TID}", more_days=DAY3)
    game = (file, tmp_path / "o.db")
    night(game, 0, ("己", "模式选择", (), "法式守卫"))
    run(game, "day", "resolve", "--day", "1", "--as-of", after(1))
    night(game, 1)
    run(game, "player", "out", "--player", "庚", "--at", at(2, 12).isoformat(),
        "--cause", "导演裁定出局")  # fmt: skip
    run(game, "day", "resolve", "--day", "2", "--as-of", after(2))
    night(game, 2)
    add_posts(game[1], 2022, [vote(8001, "庚", "甲", at(3, 12))])
    data = json.loads(run(game, "tally", "--day", "3", "--json", "--as-of", after(3)))
    geng = next(v for v in data["votes"] if v["voter"] == "庚")
    assert geng["status"] == "invalid" and "出局" in geng["reason"]
    flags = json.loads(run(game, "flags", "--json", "--as-of", after(3)))
    assert [f["day"] for f in flags if f["player"] == "庚" and f["kind"] == "zhashi"] == [3]
