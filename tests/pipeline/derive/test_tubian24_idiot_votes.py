"""tubian24's 白痴 after [装傻] in the vote, through ``bansha tally`` and
``bansha day resolve`` on stored vote posts.

tubian24.txt:112 "装傻<强制><限定> —— 当白痴因投票而出局后，若拥有[装傻]技能，白痴仍可在讨论帖进行
发言。发动此技能后，白痴不能成为投票对象，不能参与投票，不能继任警长。" A vote for him is an invalid
target and is not counted — so it can never make a tie (tubian24.txt:118 平票则高僧承受投票出局) —
and his own vote is invalid.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from parsers.records import Post, ThreadPage
from pipeline.cli import cli
from pipeline.store import open_store
from tests.pipeline.cli.test_cmd_engine_tubian24 import ROSTER

TZ = timezone(timedelta(hours=8))
UID = {name: 101 + i for i, (name, _c, _s) in enumerate(ROSTER)}
VOTE = {1: 3002, 2: 3012}
IDIOT = "傻"
AFTER = {1: "2026-12-02T09:00:00+08:00", 2: "2026-12-03T09:00:00+08:00"}


def game_file(tmp_path: Path) -> Path:
    lines = [
        "[game]",
        'id = "tubian24-idiot"',
        'title = "网杀变异屠边 24人局"',
        'ruleset = "tubian24"',
        'timezone = "Asia/Shanghai"',
        "[forum]",
        'base_url = "http://127.0.0.1:8080/"',
        "[director]",
        'names = ["导演"]',
        "uids = [100]",
    ]
    for name, card, sex in ROSTER:
        lines += [
            "[[players]]",
            f'name = "{name}"',
            f"uid = {UID[name]}",
            f'sex = "{sex}"',
            f'cards = ["{card}"]',
        ]
    for day in (1, 2):
        lines += [
            "[[days]]",
            f"day = {day}",
            f"opens = 2026-12-0{day}T10:00:00+08:00",
            f"closes = 2026-12-0{day}T22:00:00+08:00",
            f"vote = {VOTE[day]}",
            "progress = 3000",  # one progress thread for the game
        ]
    lines += ["[tubian24]", 'kill_order = ["狼1", "狼2"]', 'master = "民6"']
    path = tmp_path / "t24.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def add_votes(db: Path, day: int, votes: list[tuple[str, str]]) -> dict[str, int]:
    """One vote post per ``(voter, target)``, an hour apart from 11:00; voter → pid."""
    opens = datetime(2026, 12, day, 10, 0, tzinfo=TZ)
    rows = tuple(
        Post(
            tid=VOTE[day],
            pid=day * 1000 + i,
            floor=i + 2,
            author=voter,
            uid=UID[voter],
            posted_at=opens + timedelta(hours=1 + i),
            message_html=f"投票对象：{target}\n投票理由：测试",
            text=f"投票对象：{target}\n投票理由：测试",
        )
        for i, (voter, target) in enumerate(votes)
    )
    store = open_store(db)
    store.save_page(
        ThreadPage(tid=VOTE[day], page=1, total_pages=1, posts=rows),
        source="html",
        url="test",
        status=200,
        headers={},
        body=repr(rows).encode(),
        fetched_at=opens + timedelta(hours=13),
        ppp=None,
    )
    store.close()
    return {p.author: p.pid for p in rows}


@pytest.fixture
def run(tmp_path: Path):  # type: ignore[no-untyped-def]
    game, db = game_file(tmp_path), tmp_path / "t24.db"

    def invoke(*args: str) -> str:
        n = 2 if args[0] in ("night", "day", "drafts") else 1
        result = CliRunner().invoke(cli, [*args[:n], str(game), "--db", str(db), *args[n:]])
        assert result.exit_code == 0, result.output
        return result.output

    invoke("init")
    invoke("night", "resolve", "--night", "0")
    # day 1: 傻 is voted out and, holding [装傻], stays in the game (tubian24.txt:112)
    add_votes(db, 1, [("民1", IDIOT), ("民2", IDIOT), ("民3", IDIOT)])
    day1 = json.loads(invoke("day", "resolve", "--day", "1", "--json", "--as-of", AFTER[1]))
    assert day1["deaths"] == [] and any("发动[装傻]" in line for line in day1["public"])
    invoke("night", "resolve", "--night", "1")
    invoke.db = db  # type: ignore[attr-defined]
    return invoke


def test_votes_for_the_fooled_idiot_are_invalid_and_make_no_tie(run) -> None:  # type: ignore[no-untyped-def]
    # two votes for 傻, two for 狼1: counting 傻's would tie (高僧[献身], tubian24.txt:118);
    # 傻 cannot be voted for, so 狼1 is the only top (tubian24.txt:39)
    pids = add_votes(
        run.db, 2, [("民1", IDIOT), ("民2", IDIOT), ("民3", "狼1"), ("民4", "狼1"), (IDIOT, "民5")]
    )
    data = json.loads(run("tally", "--day", "2", "--json", "--as-of", AFTER[2]))
    by_pid = {v["ballot"]["evidence"]["pid"]: v for v in data["votes"]}
    for voter in ("民1", "民2"):
        v = by_pid[pids[voter]]
        assert v["status"] == "invalid" and v["counts_for"] is None
        assert v["reason"] == f"{IDIOT}不能成为投票对象"
    # his own vote: tubian24.txt:112 不能参与投票, cited by its own rule
    own = by_pid[pids[IDIOT]]
    assert own["status"] == "invalid"
    assert own["reason"] == f"{IDIOT}因白痴[装傻]不能参与投票"
    assert own["rule"] == "tubian24.txt:112"
    assert [(c["candidate"], c["votes"]) for c in data["tally"]["counts"]] == [("狼1", "2")]
    assert data["out"] == "狼1" and data["tally"]["tie"] == []
    assert data["decided_by"] == "唯一最高票"

    day2 = json.loads(run("day", "resolve", "--day", "2", "--json", "--as-of", AFTER[2]))
    assert [(d["player"], d["cause"]) for d in day2["deaths"]] == [("狼1", "投票出局")]
    assert "僧" not in {d["player"] for d in day2["deaths"]}  # no tie: 高僧 keeps [献身]


def test_a_vote_for_the_fooled_idiot_cites_his_rule(run) -> None:  # type: ignore[no-untyped-def]
    # "a barred vote cites its own rule": tubian24.txt:112 白痴不能成为投票对象
    pids = add_votes(run.db, 2, [("民1", IDIOT), ("民3", "狼1")])
    data = json.loads(run("tally", "--day", "2", "--json", "--as-of", AFTER[2]))
    v = next(v for v in data["votes"] if v["ballot"]["evidence"]["pid"] == pids["民1"])
    assert v["rule"] == "tubian24.txt:112"


def test_the_next_day_opens_listing_the_fooled_idiot_as_voted_out(run) -> None:  # type: ignore[no-untyped-def]
    """tubian24.txt:36 每个游戏日白天开始时，都会公示前一天因投票出局角色名单; :47 被投票出局的
    【白痴】: day 2's opening lists 傻 as day 1's vote-out, though his card stays in the game."""
    store = open_store(run.db)
    store.set_meta("full_read:1", AFTER[1])  # day 1 read whole after its close, as a cycle does
    store.close()
    run("drafts", "make", "--as-of", "2026-12-02T10:05:00+08:00")
    drafts = json.loads(run("drafts", "list", "--json"))["drafts"]
    [opening] = [d for d in drafts if d["kind"] == "day_open" and d["day"] == 2]
    listing = opening["body"].split("[b]出局名单[/b]", 1)[1].split("\n\n", 1)[0]
    assert f"1. {IDIOT}（第1天投票出局）" in listing, opening["body"]
    assert "平安夜" not in listing
    assert "玩家性别" not in opening["body"]  # announced once, when the game starts (:65)


def test_the_fooled_idiot_is_out_for_the_speed_count(run) -> None:  # type: ignore[no-untyped-def]
    """tubian24.txt:330 若场上未出局的玩家过半数同意加速则执行加快进程: 24 players, 傻 voted out
    with [装傻] (被投票出局的【白痴】, :47) — 23 in the game, more than half is 12."""
    add_votes(run.db, 2, [("民1", "狼1")])
    data = json.loads(run("tally", "--day", "2", "--json", "--as-of", AFTER[2]))
    assert data["speed"]["living"] == 23, data["speed"]
    assert data["speed"]["needed"] == 12


def test_the_first_day_opens_announcing_every_players_sex(tmp_path: Path) -> None:
    """tubian24.txt:65 游戏开始时，会公布所有玩家的性别 — the first day's opening lists them, by
    sex in the game file's order, also after a peaceful first night."""
    game, db = game_file(tmp_path), tmp_path / "t24.db"

    def invoke(*args: str) -> str:
        n = 2 if args[0] in ("night", "drafts") else 1
        result = CliRunner().invoke(cli, [*args[:n], str(game), "--db", str(db), *args[n:]])
        assert result.exit_code == 0, result.output
        return result.output

    invoke("init")
    invoke("night", "resolve", "--night", "0")  # 平安夜: nobody out
    invoke("drafts", "make", "--as-of", "2026-12-01T10:05:00+08:00")
    drafts = json.loads(invoke("drafts", "list", "--json"))["drafts"]
    [opening] = [d for d in drafts if d["kind"] == "day_open" and d["day"] == 1]
    men = "、".join(n for n, _c, sex in ROSTER if sex == "男")
    women = "、".join(n for n, _c, sex in ROSTER if sex == "女")
    assert f"[b]玩家性别[/b]：\n男：{men}\n女：{women}\n\n[b]出局名单[/b]" in opening["body"]
