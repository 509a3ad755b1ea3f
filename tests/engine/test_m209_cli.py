"""The generic engine commands on an m209 game file: night add / resolve --json, day resolve,
state; loading refuses an impossible draw (m209.txt:22-33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from pipeline.cli import cli

AFTER = ["--as-of", "2026-12-03T09:00:00+08:00"]

LINEUP = (
    ("甲", "黑狼王"),
    ("乙", "狼美人"),
    ("丙", "隐狼"),
    ("丁", "石像鬼"),
    ("戊", "预言家"),
    ("己", "守卫"),
    ("庚", "摄梦人"),
    ("辛", "女巫"),
    ("壬", "长老"),
    ("癸", "猎人"),
    ("子", "白痴"),
    ("丑", "替罪羊"),
    ("寅", "吹笛者"),
)

HEAD = """[game]
id = "m209-test"
title = "[M209]巴啦啦小魔仙"
ruleset = "m209"
timezone = "Asia/Shanghai"

[forum]
base_url = "http://127.0.0.1:8080/"
encoding = "auto"
source = "auto"
cookie_env = "BANSHA_COOKIE"
min_interval_s = 1.0

[director]
names = ["导演"]
uids = [100]

"""

DAYS = """[[days]]
day = 1
opens = 2026-12-01T10:00:00+08:00
closes = 2026-12-01T22:00:00+08:00
discussion = 2001
vote = 2002
progress = 2003

[[days]]
day = 2
opens = 2026-12-02T10:00:00+08:00
closes = 2026-12-02T22:00:00+08:00
discussion = 2011
vote = 2012
progress = 2013
"""


def write_game(
    path: Path, lineup: tuple[tuple[str, str], ...] = LINEUP, table: str | None = None
) -> Path:
    players = "".join(
        f'[[players]]\nname = "{n}"\nuid = {101 + i}\naliases = []\ncards = ["{r}"]\n\n'
        for i, (n, r) in enumerate(lineup)
    )
    drawn = ", ".join(f'"{r}"' for _n, r in LINEUP) if table is None else table
    secret = f"[m209]\nlineup = [{drawn}]\n\n"
    path.write_text(HEAD + secret + players + DAYS, encoding="utf-8")
    return path


@pytest.fixture
def game(tmp_path: Path) -> tuple[Path, Path]:
    return write_game(tmp_path / "m209.toml"), tmp_path / "m209.db"


def run(game: tuple[Path, Path], *args: str, code: int = 0) -> str:
    n = 2 if args[0] in ("night", "day") else 1
    file, db = game
    result = CliRunner().invoke(cli, [*args[:n], str(file), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def test_opening_election_and_first_night_on_the_cli(game: tuple[Path, Path]) -> None:
    run(game, "night", "add", "--night", "0", "--actor", "己", "--skill", "模式选择",
        "--choice", "法式守卫")  # fmt: skip
    data = json.loads(run(game, "night", "resolve", "--night", "0", "--json"))
    assert data["ruleset"] == "m209" and data["complete"] is True
    assert any(s["kind"] == "守卫模式" and s["note"] == "法式守卫" for s in data["statuses"])
    run(game, "day", "resolve", "--day", "1", *AFTER)
    for actor, skill, target in (
        ("甲", "杀人", "戊"),
        ("己", "守护", "庚"),
        ("辛", "毒药", "乙"),
        ("戊", "预言", "丙"),
    ):
        run(game, "night", "add", "--night", "1", "--actor", actor, "--skill", skill,
            "--target", target)  # fmt: skip
    data = json.loads(run(game, "night", "resolve", "--night", "1", "--json"))
    # m209.txt:574-576: 狼人杀人 is counted before 女巫毒药
    assert [(d["player"], d["cause"]) for d in data["deaths"]] == [
        ("戊", "狼人[杀人]"),
        ("乙", "女巫[毒药]"),
    ]
    assert data["public"] == ["昨晚出局（按出局顺序）：戊、乙"]
    assert {"to": "戊", "text": "预言：选择目标丙为非村民阵营（m209.txt:235）",
            "rule": "m209.txt:235"} in data["feedback"]  # fmt: skip
    assert data["winner"] is None
    # replaying the journal reproduces every stored state
    assert "全部一致" in run(game, "state", "--verify")


def test_an_impossible_draw_is_refused(tmp_path: Path) -> None:
    lineup = tuple((n, "白狼王") if n == "乙" else (n, r) for n, r in LINEUP)
    game = (write_game(tmp_path / "bad.toml", lineup), tmp_path / "bad.db")
    err = run(game, "night", "resolve", "--night", "0", code=1)
    # m209.txt:22: 黑狼王和白狼王必出现且只会出现其中之一
    assert "黑狼王和白狼王必出现且只会出现其中之一" in err


def test_the_lineup_table_must_match_the_cards(tmp_path: Path) -> None:
    """The drawn line-up of the game file's [m209] table is what was dealt (m209.txt:22-33)."""
    table = ", ".join(f'"{r}"' for _n, r in LINEUP if r != "白痴") + ', "太阳"'
    game = (write_game(tmp_path / "t.toml", table=table), tmp_path / "t.db")
    err = run(game, "night", "resolve", "--night", "0", code=1)
    assert "[m209] lineup 与玩家的身份牌不一致：多出 白痴，缺少 太阳" in err
    table = ", ".join(f'"{r}"' for _n, r in LINEUP) + ', "白狼王"'
    game = (write_game(tmp_path / "u.toml", table=table), tmp_path / "u.db")
    err = run(game, "night", "resolve", "--night", "0", code=1)
    assert "[m209] lineup：黑狼王和白狼王必出现且只会出现其中之一" in err
