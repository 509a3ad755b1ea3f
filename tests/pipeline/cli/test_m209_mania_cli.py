"""m209 [狂躁] through the CLI (m209.txt:97): the 吹笛者's <迷惑> gives it at night (m209.txt:499);
the next day the holder's vote after the opening does not count, a holder who never voted
abstains (开门之前未决定则默认弃票), and neither gets a 未投票 flag — ``bansha tally --json``."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the engine commands)
from parsers.records import Post, ThreadPage
from pipeline.cli import cli
from pipeline.store import open_store
from tests.engine.rule_text import says
from tests.engine.test_m209_cli import LINEUP, write_game

TZ = timezone(timedelta(hours=8))
UID = {n: 101 + i for i, (n, _r) in enumerate(LINEUP)}  # as test_m209_cli writes them
VOTE_TID = 2012  # day 2's vote thread, 10:00-22:00 on 2026-12-02
MANIA_REASON = "{}持有[狂躁]，须在开门之前投票，开门后的投票不计入（开门之前未决定则默认弃票）"


def run(game: tuple[Path, Path], *args: str, code: int = 0) -> str:
    n = 2 if args[0] in ("night", "day", "vote") else 1
    file, db = game
    result = CliRunner().invoke(cli, [*args[:n], str(file), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def at(hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 12, 2, hour, minute, tzinfo=TZ)


def add_votes(db: Path, votes: list[tuple[int, str, str, datetime]]) -> None:
    store = open_store(db)
    posts = tuple(
        Post(
            tid=VOTE_TID,
            pid=pid,
            floor=i + 2,
            author=who,
            uid=UID[who],
            posted_at=when,
            message_html=f"投票对象：{target}\n投票理由：测试",
            text=f"投票对象：{target}\n投票理由：测试",
        )
        for i, (pid, who, target, when) in enumerate(votes)
    )
    store.save_page(
        ThreadPage(tid=VOTE_TID, page=1, total_pages=1, posts=posts),
        source="html",
        url="test",
        status=200,
        headers={},
        body=repr(posts).encode(),
        fetched_at=at(21),
        ppp=None,
    )
    store.close()


def mania_game(tmp_path: Path) -> tuple[Path, Path]:
    """The m209 CLI game after night 1, in which 寅 (吹笛者) gave 戊 and 己 [狂躁]."""
    game = (write_game(tmp_path / "m209.toml"), tmp_path / "m209.db")
    run(game, "night", "add", "--night", "0", "--actor", "己", "--skill", "模式选择",
        "--choice", "法式守卫")  # fmt: skip
    run(game, "night", "resolve", "--night", "0")
    run(game, "day", "resolve", "--day", "1", "--as-of", "2026-12-02T09:00:00+08:00")
    run(game, "night", "add", "--night", "1", "--actor", "寅", "--skill", "迷惑",
        "--target", "戊", "--target", "己")  # fmt: skip
    night1 = json.loads(run(game, "night", "resolve", "--night", "1", "--json"))
    assert any(a["outcome"] == "done" and a["skill"] == "迷惑" for a in night1["actions"])
    return game


def test_a_mania_holder_votes_before_the_opening_or_abstains(tmp_path: Path) -> None:
    says("m209.txt:97", "该状态下需要在开门之前立刻投当天的放逐投票且不允许改票")
    says("m209.txt:97", "开门之前未决定则默认弃票")
    says("m209.txt:499", "结算目标永久获得[狂躁]状态。")
    game = mania_game(tmp_path)
    # 戊 votes after the opening (does not count); 己 never votes; 甲 and 乙 vote
    add_votes(
        game[1],
        [
            (7001, "戊", "甲", at(11)),
            (7002, "甲", "乙", at(12)),
            (7003, "乙", "甲", at(12, 30)),
        ],
    )
    data = json.loads(
        run(game, "tally", "--day", "2", "--json", "--as-of", "2026-12-03T09:00:00+08:00")
    )
    votes = {v["voter"]: v for v in data["votes"]}
    assert votes["戊"]["status"] == "invalid"
    assert votes["戊"]["reason"] == MANIA_REASON.format("戊")
    assert votes["戊"]["rule"] == "m209.txt:97"
    assert votes["甲"]["status"] == votes["乙"]["status"] == "counted"
    t = data["tally"]
    assert sorted(t["abstained"]) == ["己", "戊"]  # 默认弃票, each with its weight
    assert t["total"]["votes"] == "4"
    assert "己持有[狂躁]，开门之前未投票，默认弃票" in t["notes"]
    assert "戊持有[狂躁]，开门之前未投票，默认弃票" in t["notes"]
    no_vote = {f["player"] for f in data["flags"] if f["kind"] == "no-vote"}
    assert "戊" not in no_vote and "己" not in no_vote
    assert "丙" in no_vote  # an ordinary player who did not vote still gets the flag


def test_a_mania_holders_proxy_before_the_opening_counts(tmp_path: Path) -> None:
    says("m209.txt:97", "没有本状态也可以开门代投装作被狂躁")
    game = mania_game(tmp_path)
    add_votes(game[1], [(7002, "甲", "乙", at(12))])
    run(game, "vote", "proxy", "--day", "2", "--voter", "己", "--target", "甲",
        "--at", "2026-12-02T09:30:00+08:00")  # fmt: skip
    data = json.loads(
        run(game, "tally", "--day", "2", "--json", "--as-of", "2026-12-03T09:00:00+08:00")
    )
    votes = {v["voter"]: v for v in data["votes"]}
    assert votes["己"]["status"] == "counted"
    assert votes["己"]["reason"] == "导演代投有效：投给甲（开门前代投，按开门时计）"
    assert data["tally"]["abstained"] == ["戊"]
    assert "己持有[狂躁]，开门之前未投票，默认弃票" not in data["tally"]["notes"]
