"""A zhenyan game that ends during a day: the fourth secret word guessed in the inquiry thread
at 13:00 on day 3 — 任何阵营达到其中之一的胜利条件时，游戏立即结束 (zhenyan.txt:114), 四个真言咒语
全部猜中 (zhenyan.txt:127), but the 狼王 is alive: his <最后一招> comes first (zhenyan.txt:70).

What the director sees from that moment, long before the close: ``bansha tally`` and
``bansha status`` say the game ended (at which post, what is pending), the cycle says so, no
running tally or 投票提醒 is drafted for the vote that will not happen, and
``bansha day resolve --day 3`` resolves the day before its close."""

from __future__ import annotations

import dataclasses
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the engine commands)
from engine.state import Phase
from pipeline.cli import cli
from pipeline.derive import derive, write_derivation
from pipeline.drafts.due import due_drafts
from pipeline.drafts.model import DraftKind
from pipeline.game.gamefile import parse_game
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import open_store
from tests.pipeline.derive.test_inquiry_flow import (
    D1,
    D2,
    USERS,
    WORDS,
    crawl,
    game_data,
    toml_file,
)

D3 = D2 + timedelta(days=1)


def at3(hours: float) -> datetime:
    return D3 + timedelta(hours=hours)


@pytest.fixture
def game3(tmp_path: Path) -> dict[str, Any]:
    return play(tmp_path, "摄梦人")


def play(tmp_path: Path, fourth: str) -> dict[str, Any]:
    """Three days; day 1 elects 粽子 sheriff; day 2: words 2 and 3 guessed; day 3: word 1 at
    11:00 and word 4 (``fourth``, guessed right or not) at 13:00, while six players vote 月饼
    out."""
    sim = ForumSim(users=USERS, clock=SimClock(at3(4)), floodctrl_s=0)
    data = game_data(sim.base_url)
    data["days"].append(
        {
            "day": 3,
            "opens": D3,
            "closes": D3 + timedelta(hours=12),
            "discussion": 2031,
            "vote": 2032,
            "inquiry": 2034,
        }
    )
    for tid, title, start in (
        (2011, "第一天讨论帖", D1),
        (2012, "第一天警长竞选帖", D1),
        (2014, "第一天询问帖", D1),
        (2021, "第二天讨论帖", D2),
        (2022, "第二天投票帖", D2),
        (2024, "第二天询问帖", D2),
        (2031, "第三天讨论帖", D3),
        (2032, "第三天投票帖", D3),
        (2034, "第三天询问帖", D3),
    ):
        sim.add_thread(tid, title, "导演", f"【{title}】", start)
    for i, name in enumerate(["饺子", "包子", "汤圆", "油条"]):
        sim.add_post(2012, name, "投票对象：粽子\n投票理由：竞选", D1 + timedelta(hours=1 + i))
    # zhenyan.txt:168 【第X个词语是XX吗？】 — day 2: words 2 (a variant) and 3
    sim.add_post(2024, "烧卖", "【第2个词语是小圆吗？】", D2 + timedelta(hours=1))
    sim.add_post(2024, "油条", "【第3个词语是千羽吗？】", D2 + timedelta(hours=2))
    # day 3: the vote goes on (月饼 would be voted out, zhenyan.txt:38) …
    for i, name in enumerate(["饺子", "面条", "春卷", "烧饼", "包子", "汤圆"]):
        sim.add_post(2032, name, "投票对象：月饼\n投票理由：砍", at3(0.5 + i / 10))
    # … word 1 at 11:00, the last one, word 4, at 13:00
    sim.add_post(2034, "汤圆", "【第1个词语是风扇吗？】", at3(1))
    last = sim.add_post(2034, "麻花", f"【第4个词语是{fourth}吗？】", at3(3))
    game_path = toml_file(tmp_path / "zhenyan.toml", data)
    db = tmp_path / "zhenyan.db"

    def run(*args: str, code: int = 0) -> str:
        n = 2 if args[0] in ("night", "day") else 1
        result = CliRunner().invoke(cli, [*args[:n], str(game_path), "--db", str(db), *args[n:]])
        assert result.exit_code == code, result.output
        for word in WORDS:
            assert word not in result.output, "a secret word leaked into the output"
        return result.stdout

    run("init")
    game = parse_game(data, check_login=False)
    crawl({"sim": sim, "game": game, "store": open_store(db)})
    run("night", "resolve", "--night", "0")
    run("day", "resolve", "--day", "1", "--as-of", (D1 + timedelta(hours=13)).isoformat())
    run("night", "resolve", "--night", "1")
    run("day", "resolve", "--day", "2", "--as-of", (D2 + timedelta(hours=13)).isoformat())
    run("night", "resolve", "--night", "2")
    return {"run": run, "game": game, "db": db, "path": game_path, "last": last}


def test_the_game_ends_at_the_fourth_word_not_at_the_close(game3: dict[str, Any]) -> None:
    game, store = game3["game"], open_store(game3["db"])
    assert derive(game, store, as_of=at3(2)).ended is None  # three words by 12:00
    d = derive(game, store, as_of=at3(4))
    ended = d.ended
    assert ended is not None and ended.day == 3 and ended.at == at3(3)
    assert ended.what.startswith("第4个真言词语被猜中（麻花）") and ended.rule == "zhenyan.txt:114"
    assert ended.url.endswith(f"ptid=2034&pid={game3['last']}")
    # zhenyan.txt:70, 114 the 狼王 is alive: the village win waits for his <最后一招>
    assert ended.winner is None
    (pending,) = ended.pending
    assert "狼王饺子" in pending and "最后一招" in pending
    # the cycle says it (its warnings go to stderr, also under cron)
    (warning,) = d.warnings()
    assert "游戏已在第3天 12-03 13:00 结束：第4个真言词语被猜中（麻花）" in warning
    assert "bansha day resolve 游戏文件 --day 3" in warning


def test_tally_says_the_vote_is_not_counted(game3: dict[str, Any]) -> None:
    out = game3["run"]("tally", "--day", "3", "--as-of", at3(4).isoformat())
    assert "注意：游戏已在第3天 12-03 13:00 结束：第4个真言词语被猜中（麻花）" in out
    assert "待定：" in out and "<最后一招>" in out
    # zhenyan.txt:114 游戏立即结束: 月饼's six votes put nobody out
    (result,) = [x for x in out.splitlines() if x.startswith("结果：")]
    assert result.startswith("结果：不结算——游戏已在投票之前结束")
    data = json.loads(game3["run"]("tally", "--day", "3", "--json", "--as-of", at3(4).isoformat()))
    assert data["ended"]["at"] == at3(3).isoformat() and data["ended"]["winner"] is None


def due_kinds(world: dict[str, Any], when: datetime) -> set[DraftKind]:
    game, store = world["game"], open_store(world["db"])
    return {s.kind for s in due_drafts(game, derive(game, store, as_of=when), as_of=when)}


def test_no_reminder_for_a_vote_that_will_not_happen(game3: dict[str, Any], tmp_path: Path) -> None:
    """The 投票提醒 ten minutes before the close (zhenyan.txt:177) — not when the game ended at
    13:00; zhenyan has no running tally at all (zhenyan.txt:37 投票为匿名投票)."""
    near_close = at3(12) - timedelta(minutes=10)
    (tmp_path / "wrong").mkdir()
    wrong = play(tmp_path / "wrong", "千纸鹤")  # the fourth guess is wrong: the vote is on
    assert DraftKind.REMINDER in due_kinds(wrong, near_close)
    assert DraftKind.REMINDER not in due_kinds(game3, near_close)
    assert DraftKind.RUNNING_TALLY not in due_kinds(game3, near_close)


def test_status_says_the_game_ended(game3: dict[str, Any]) -> None:
    game, store = game3["game"], open_store(game3["db"])
    write_derivation(store, derive(game, store, as_of=at3(4)), now=at3(4))
    out = game3["run"]("status")
    assert "阶段：游戏已在第3天 12-03 13:00 结束（胜负待定，有待导演处理的决定" in out
    assert f"bansha day resolve {game3['path'].name} --day 3" in out
    assert "第3天（白天）" not in out


def test_day_resolve_before_the_close(game3: dict[str, Any]) -> None:
    run = game3["run"]
    # before the fourth word the day cannot be resolved
    run("day", "resolve", "--day", "3", "--as-of", at3(2).isoformat(), code=1)
    data = json.loads(run("day", "resolve", "--day", "3", "--json", "--as-of", at3(4).isoformat()))
    assert data["deaths"] == [] and data["winner"] is None  # the vote is not settled
    assert [p["skill"] for p in data["pending"]] == ["最后一招"]
    # zhenyan.txt:70 the 狼王 names the wrong player as the 长老: the village wins
    run("day", "add", "--day", "3", "--actor", "饺子", "--skill", "最后一招", "--target", "汤圆")
    out = run("day", "resolve", "--day", "3", "--as-of", at3(4).isoformat())
    assert "胜负：村民阵营胜利" in out


def test_the_result_of_a_day_the_game_ended_during_goes_out_at_once(game3: dict[str, Any]) -> None:
    """zhenyan.txt:114 「任何阵营达到其中之一的胜利条件时，游戏立即结束，宣布此阵营获胜」: once
    the director resolved day 3 (the 狼王's <最后一招> recorded, zhenyan.txt:70), its result is
    the game's end, drafted at once — not at the 22:00 close —, and it counts no vote: 月饼's
    six votes put nobody out and are not shown. No day opens after it."""
    run = game3["run"]
    run("day", "add", "--day", "3", "--actor", "饺子", "--skill", "最后一招", "--target", "汤圆")
    run("day", "resolve", "--day", "3", "--as-of", at3(4).isoformat())
    game, store = game3["game"], open_store(game3["db"])
    day3 = game.days[-1]
    day4 = day3.model_copy(
        update={
            "day": 4,
            "opens": day3.opens + timedelta(days=1),
            "closes": day3.closes + timedelta(days=1),
            "discussion": 2041,
            "vote": 2042,
            "inquiry": 2044,
        }
    )
    game = game.model_copy(update={"days": [*game.days, day4]})
    for when in (at3(4.5), at3(12.5)):  # 14:30, before the close; 22:30, after it
        specs = due_drafts(game, derive(game, store, as_of=when), as_of=when)
        (result,) = [s for s in specs if s.key == "result:d3"]
        assert result.body.startswith(
            "[b]【第3天 游戏结束】[/b]\n12月3日 13:00：第4个真言词语被猜中"
        )
        assert "当天的投票不再结算" in result.body
        assert "游戏结束：村民阵营胜利（四个真言咒语全部猜中，且长老没有出局）" in result.body
        assert "月饼" not in result.body and "票数" not in result.body
        assert not [s for s in specs if s.day == 4]


def test_no_day_after_a_win_is_drafted_but_the_opening_that_announces_it(tmp_path: Path) -> None:
    """Once the engine has declared a winner, the game is over (zhenyan.txt:114 游戏立即结束,
    宣布此阵营获胜): won by night 2, day 3's opening still goes out — its 公示 announces the
    night and the win — but invites nobody to vote or ask, and nothing else of day 3 (电梯,
    投票提醒) is drafted; won by day 2's vote, its result says so and day 3 does not open."""
    world = play(tmp_path, "千纸鹤")  # the fourth guess is wrong: no win during day 3
    game, store = world["game"], open_store(world["db"])
    when = at3(12) - timedelta(minutes=10)  # reminder time on day 3
    d = derive(game, store, as_of=when)
    assert d.won is None and d.ended is None
    by_night = due_drafts(game, dataclasses.replace(d, won=Phase.night(2)), as_of=when)
    assert [s.key for s in by_night if s.day == 3] == ["day_open:d3"]
    (opening,) = [s for s in by_night if s.day == 3]
    assert "[b]游戏已经结束[/b]，今天不再讨论和投票。" in opening.body
    assert "投票请到" not in opening.body and "询问请到" not in opening.body
    by_vote = due_drafts(game, dataclasses.replace(d, won=Phase.day(2)), as_of=when)
    assert not [s for s in by_vote if s.day == 3]
    assert "result:d2" in {s.key for s in by_vote}
    # without a win, day 3 goes on as usual
    usual = {s.key for s in due_drafts(game, d, as_of=when) if s.day == 3}
    assert {"day_open:d3", "reminder:d3"} <= usual


def test_status_says_who_won_once_the_engine_declared_it(tmp_path: Path) -> None:
    """A win declared when the director resolved a night: ``bansha status`` says the game is
    over and who won, not that day 3 is under way."""
    world = play(tmp_path, "千纸鹤")
    store = open_store(world["db"])
    assert "游戏已结束" not in world["run"]("status")
    with store.atomic():  # the engine's snapshot of night 2 as a winning night stores it
        store.execute(
            "UPDATE engine_snapshots SET winner = '村民阵营' WHERE phase = ?",
            [Phase.night(2).label],
        )
    assert "阶段：游戏已结束：村民阵营胜利（第2晚结算）" in world["run"]("status")
