"""The generic engine commands on a zhenyan game file: ``night resolve --json`` (the README's
contract), ``day resolve``, ``state`` and the journal's replay — and the secret words never
appear in what they print."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from pipeline.cli import cli

ROSTER = [
    ("饺子", "狼王"),
    ("面条", "狼美人"),
    ("春卷", "石像鬼"),
    ("烧饼", "蚀时狼妃"),
    ("包子", "长老"),
    ("汤圆", "预言家"),
    ("烧卖", "守卫"),
    ("馄饨", "猎魔人"),
    ("粽子", "村民"),
    ("油条", "村民"),
    ("麻花", "村民"),
    ("月饼", "村民"),
]
WORDS = ["风扇", "鹿目圆", "千羽", "摄梦人"]
AFTER_DAY_1 = "2026-12-02T09:00:00+08:00"
AFTER_DAY_2 = "2026-12-03T09:00:00+08:00"


def game_file(tmp_path: Path) -> Path:
    text = f"""[game]
id = "zhenyan-cli"
title = "狼人真言"
ruleset = "zhenyan"
timezone = "Asia/Shanghai"

[forum]
base_url = "http://127.0.0.1:8080/"

[director]
names = ["导演"]
uids = [100]

[zhenyan]
words = {json.dumps(WORDS, ensure_ascii=False)}
"""
    for i, (name, card) in enumerate(ROSTER):
        text += f'\n[[players]]\nname = "{name}"\nuid = {101 + i}\ncards = ["{card}"]\n'
    for d in (1, 2):
        base = 2000 + 10 * d
        text += (
            f"\n[[days]]\nday = {d}\nopens = 2026-12-0{d}T10:00:00+08:00\n"
            f"closes = 2026-12-0{d}T22:00:00+08:00\ndiscussion = {base + 1}\n"
            f"vote = {base + 2}\nprogress = {base + 3}\ninquiry = {base + 4}\n"
        )
    path = tmp_path / "zhenyan.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def run(tmp_path: Path):  # type: ignore[no-untyped-def]
    game = game_file(tmp_path)
    db = tmp_path / "zhenyan.db"

    def invoke(*args: str, code: int = 0) -> str:
        n = 2 if args[0] in ("night", "day", "vote", "card") else 1
        result = CliRunner().invoke(cli, [*args[:n], str(game), "--db", str(db), *args[n:]])
        assert result.exit_code == code, result.output
        for word in WORDS:
            assert word not in result.output, "a secret word leaked into the output"
        return result.output

    return invoke


def test_night_resolve_json_on_a_zhenyan_game(run) -> None:  # type: ignore[no-untyped-def]
    # zhenyan.txt:88 村庄老友<强制>——游戏开始时，得知长老是谁。
    data = json.loads(run("night", "resolve", "--night", "0", "--json"))
    assert data["ruleset"] == "zhenyan" and data["complete"] is True
    assert {"to": "汤圆", "text": "村庄老友：长老是包子。", "rule": "zhenyan.txt:88"} in data[
        "feedback"
    ]
    # zhenyan.txt:105 第一天投票结束后，最先获得投票数最多的角色当选警长 (no ballots: nobody)
    out = run("day", "resolve", "--day", "1", "--as-of", AFTER_DAY_1)
    assert "警长竞选：无人当选" in out
    # zhenyan.txt:97 狩猎<2> … 若该角色属于狼人阵营，则目标角色出局
    run("night", "add", "--night", "1", "--actor", "馄饨", "--skill", "狩猎", "--target", "春卷")
    # zhenyan.txt:89 预言<1>——游戏日夜晚，可以查验一个角色的阵营。
    run("night", "add", "--night", "1", "--actor", "汤圆", "--skill", "预言", "--target", "面条")
    # zhenyan.txt:66 该技能一开始不能使用
    run("night", "add", "--night", "1", "--actor", "饺子", "--skill", "杀人", "--target", "汤圆")
    data = json.loads(run("night", "resolve", "--night", "1", "--json"))
    for key in ("deaths", "feedback", "public", "statuses", "winner", "log", "actions", "pending"):
        assert key in data, key
    assert [(d["player"], d["cause"]) for d in data["deaths"]] == [("春卷", "猎魔人[狩猎]")]
    assert {"to": "汤圆", "text": "预言：面条的阵营为狼人阵营。", "rule": "zhenyan.txt:89"} in data[
        "feedback"
    ]
    # zhenyan.txt:85 魔力通灵: 12 − 1 (预言) − 2 (狩猎) = 9
    assert any(f["to"] == "包子" and "剩余魔力点9点" in f["text"] for f in data["feedback"])
    kill = next(a for a in data["actions"] if a["skill"] == "杀人")
    assert kill["outcome"] == "invalid" and "一开始不能使用" in kill["reason"]
    assert data["public"][0] == "昨晚出局（按出局顺序）：春卷"
    assert data["winner"] is None

    state = json.loads(run("state", "--json"))
    assert state["phase"] == "night:1"
    verify = run("state", "--verify")
    assert "全部一致" in verify

    # zhenyan.txt:168 若猜测正确，则导演公示该猜测的词语 — the guessed word counts for the win
    run("day", "add", "--day", "2", "--actor", "汤圆", "--skill", "猜中", "--choice", "1")
    data = json.loads(run("day", "resolve", "--day", "2", "--json", "--as-of", AFTER_DAY_2))
    assert data["tally"]["out"] is None and data["winner"] is None
    assert "不一致" not in run("tally", "--day", "2", "--as-of", AFTER_DAY_2)
    guessed = next(a for a in data["actions"] if a["skill"] == "猜中")
    assert guessed["outcome"] == "done" and "第1个真言词语被猜中" in guessed["reason"]
    # zhenyan.txt:57 每经过一天白天扣除2点魔力点: 9 − 2 = 7
    assert any(f["to"] == "包子" and "剩余魔力点7点" in f["text"] for f in data["feedback"])


def test_night_zero_takes_no_skill(run) -> None:  # type: ignore[no-untyped-def]
    # zhenyan.txt:136 2、进入夜晚 … the first game night follows day 1 (zhenyan.txt:135)
    run("night", "add", "--night", "0", "--actor", "汤圆", "--skill", "预言", "--target", "饺子")
    data = json.loads(run("night", "resolve", "--night", "0", "--json"))
    seer = next(a for a in data["actions"] if a["skill"] == "预言")
    assert seer["outcome"] == "invalid" and "第一晚起才能发动" in seer["reason"]


def _day_two_votes(run) -> None:  # type: ignore[no-untyped-def]
    """Nights 0-1 and day 1 resolved; on day 2 six players vote 粽子 and five abstain."""
    run("night", "resolve", "--night", "0")
    run("day", "resolve", "--day", "1", "--as-of", AFTER_DAY_1)
    run("night", "resolve", "--night", "1")
    voters = [name for name, _ in ROSTER if name != "粽子"]
    for i, voter in enumerate(voters):
        target = "粽子" if i < 6 else "弃权"
        run("vote", "proxy", "--day", "2", "--voter", voter, "--target", target,
            "--at", "2026-12-02T11:00:00+08:00")  # fmt: skip


@pytest.mark.parametrize("entered", ["day add", "card give"])
def test_a_red_card_during_the_day_takes_the_vote_with_it(run, entered: str) -> None:  # type: ignore[no-untyped-def]
    """A red card at 12:30 puts 面条 out before the close: her vote for 粽子 is lost
    (docs/rulings.md 投票与计票), so 粽子 has 5 of 10 votes — not more than half, nobody is
    voted out (zhenyan.txt:38); only a red card at the day's end is settled after the vote
    (zhenyan.txt:43)."""
    _day_two_votes(run)
    if entered == "day add":
        run("day", "add", "--day", "2", "--actor", "面条", "--skill", "红牌罚下",
            "--at", "2026-12-02T12:30:00+08:00")  # fmt: skip
    else:
        run("card", "give", "--player", "面条", "--color", "红", "--why", "贴脸",
            "--at", "2026-12-02T12:30:00+08:00")  # fmt: skip
    data = json.loads(run("day", "resolve", "--day", "2", "--json", "--as-of", AFTER_DAY_2))
    assert data["tally"]["out"] is None
    assert [(d["player"], d["cause"]) for d in data["deaths"]] == [("面条", "红牌罚下")]


def test_a_red_card_at_the_close_is_settled_after_the_vote(run) -> None:  # type: ignore[no-untyped-def]
    """zhenyan.txt:43 白天结束时红牌罚下的出局结算在投票结算之后执行: her vote counts."""
    _day_two_votes(run)
    run("day", "add", "--day", "2", "--actor", "面条", "--skill", "红牌罚下",
        "--at", "2026-12-02T22:00:00+08:00")  # fmt: skip
    data = json.loads(run("day", "resolve", "--day", "2", "--json", "--as-of", AFTER_DAY_2))
    assert data["tally"]["out"] == "粽子"
    assert [(d["player"], d["cause"]) for d in data["deaths"]] == [
        ("粽子", "投票出局"),
        ("面条", "红牌罚下"),
    ]
