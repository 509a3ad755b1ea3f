"""The generic engine commands on a nizhuan game file: ``night add/resolve --json``, ``state``
and ``state --verify`` work once the rule set has its hooks (has_engine = True)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the commands on the cli group)
from engine.kernel import DayInput, resolve_day
from engine.rulesets import get_ruleset
from engine.state import Phase
from pipeline.cli import cli
from pipeline.game.journal import save_snapshot, snapshot
from pipeline.store import open_store
from tests.engine.rule_text import says
from tests.engine.test_nizhuan_support import ROSTER

GAME = """\
[game]
id = "nizhuan-test"
title = "逆转时空的战斗（测试）"
ruleset = "nizhuan"
timezone = "Asia/Shanghai"

[forum]
base_url = "http://127.0.0.1:8080/"

[director]
names = ["导演"]
"""


def _game(tmp_path: Path) -> Path:
    text = GAME
    for i, (name, cards) in enumerate(ROSTER):
        text += (
            f'\n[[players]]\nname = "{name}"\nuid = {201 + i}\n'
            f'cards = ["{cards[0]}", "{cards[1]}"]\n'
        )
    path = tmp_path / "nizhuan.toml"
    path.write_text(text, encoding="utf-8")
    return path


def run(game: Path, db: Path, *args: str, code: int = 0) -> str:
    n = 2 if args[0] in ("night", "day", "vote") else 1
    result = CliRunner().invoke(cli, [*args[:n], str(game), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def test_night_resolve_json_on_a_nizhuan_game(tmp_path: Path) -> None:
    says("nizhuan.txt:141", "（1）狼人：选择<杀人>的目标。")
    says("nizhuan.txt:144", "3，被指杀的身份出局")
    game, db = _game(tmp_path), tmp_path / "game.db"
    # night 0 is empty (the game opens with day 1's election, nizhuan.txt:139-140)
    data = json.loads(run(game, db, "night", "resolve", "--night", "0", "--json"))
    assert data["ruleset"] == "nizhuan" and data["deaths"] == []
    # day 1: the sheriff election, stored the way `bansha day resolve` stores it
    store = open_store(db)
    rs = get_ruleset("nizhuan")
    before = snapshot(store, Phase.night(0))
    assert before is not None
    day_input = DayInput(1, elected="丁的第一身份", sheriff_election=True)
    state, report = resolve_day(before.state, day_input, rs)
    save_snapshot(store, Phase.day(1), day_input.to_dict(), state, report, resolved_at=_now())
    store.close()
    out = run(
        game,
        db,
        "night",
        "add",
        "--night",
        "1",
        "--actor",
        "丙",
        "--skill",
        "杀人",
        "--target",
        "辛",
    )
    assert "丙[杀人]→辛" in out
    run(
        game,
        db,
        "night",
        "add",
        "--night",
        "1",
        "--actor",
        "丁",
        "--skill",
        "预言",
        "--target",
        "甲",
    )
    data = json.loads(run(game, db, "night", "resolve", "--night", "1", "--json"))
    assert [(d["player"], d["card_index"], d["cause"]) for d in data["deaths"]] == [
        ("辛", 1, "被指杀")
    ]
    assert {
        "to": "丁",
        "text": "预言：甲的第一身份的阵营为狼人阵营。",
        "rule": "nizhuan.txt:89",
    } in (data["feedback"])
    assert data["complete"] is True and data["winner"] is None
    assert all(a["outcome"] == "done" for a in data["actions"])
    state_json = json.loads(run(game, db, "state", "--json"))
    assert state_json["phase"] == "night:1" and state_json["sheriff"] == "丁"
    view = run(game, db, "state")
    assert "辛：第一身份 村民（出局：被指杀，第1晚）；第二身份 村民（未入场）" in view
    assert "全部一致" in run(game, db, "state", "--verify")


def _now() -> datetime:
    return datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def test_the_nizhuan_table_reaches_the_engine() -> None:
    """nizhuan.txt:55 遗言 count and the declared 逆转轮 start come from the [nizhuan] table."""
    from types import SimpleNamespace

    from engine.rulesets import get_ruleset

    game = SimpleNamespace(secrets={"reversal_day": 5, "last_words": 2, "note": "x"})
    assert get_ruleset("nizhuan").settings_from_game(game) == {
        "reversal_day": "5",
        "last_words": "2",
    }


def test_a_duel_in_the_last_three_hours_is_refused(tmp_path: Path) -> None:
    says("nizhuan.txt:106", "关门前3小时内不可发动此技能")
    game, db = _game(tmp_path), tmp_path / "game.db"
    with game.open("a", encoding="utf-8") as fh:
        fh.write(
            "\n[[days]]\nday = 2\nopens = 2026-12-02T10:00:00+08:00\n"
            "closes = 2026-12-02T22:00:00+08:00\n"
        )
    knight = next(name for name, cards in ROSTER if "骑士" in cards)
    other = next(name for name, _ in ROSTER if name != knight)
    args = ["day", "add", "--day", "2", "--actor", knight, "--skill", "决斗", "--target", other]
    late = run(game, db, *args, "--at", "2026-12-02T19:30:00+08:00", code=1)
    assert "关门前3小时内" in late and "nizhuan.txt:106" in late
    assert "须写明发动时间" in run(game, db, *args, code=1)
    run(game, db, *args, "--at", "2026-12-02T18:30:00+08:00")


# --------------------------------------------------------------------------- the 逆转轮 on the CLI
# Targets named by card (nizhuan.txt:196 投票对象：傻树的第一身份): ``vote proxy``, ``night add``
# and a night-actions file take "X的第二身份" / "X#2"; the 逆转轮's first day is an election
# without the game file saying so (nizhuan.txt:156).


def _round_two(tmp_path: Path) -> tuple[Path, Path]:
    """A game file with days 1-6 (no sheriff_election key anywhere) whose 历史轮 ran on the CLI:
    nights 0-4 and days 1-4 resolved with nobody out, so the 逆转轮 starts on day 5."""
    game, db = _game(tmp_path), tmp_path / "game.db"
    with game.open("a", encoding="utf-8") as fh:
        for d in range(1, 7):
            fh.write(
                f"\n[[days]]\nday = {d}\nopens = 2026-12-{d:02d}T10:00:00+08:00\n"
                f"closes = 2026-12-{d:02d}T22:00:00+08:00\nvote = {3000 + d}\n"
            )
    run(game, db, "night", "resolve", "--night", "0")
    run(game, db, "day", "resolve", "--day", "1", "--as-of", _after(1))
    for n in range(1, 5):
        run(game, db, "night", "add", "--night", str(n), "--actor", "丙", "--skill", "杀人",
            "--choice", "放弃")  # fmt: skip
        out = run(game, db, "night", "resolve", "--night", str(n))
        if n < 4:
            run(game, db, "day", "resolve", "--day", str(n + 1), "--as-of", _after(n + 1))
    assert "逆转轮从第5天开始" in out
    return game, db


def _after(day: int) -> str:
    """The next morning, after day ``day`` closed."""
    return f"2026-12-{day + 1:02d}T09:00:00+08:00"


def game_at_day_two(tmp_path: Path) -> tuple[Path, Path]:
    """The game file with days 1 and 2 (08:00-22:00, vote threads 3001-3002) and its store,
    resolved through night 1 (丁's first card elected, no kill): day 2 is open."""
    game, db = _game(tmp_path), tmp_path / "game.db"
    with game.open("a", encoding="utf-8") as fh:
        for d in (1, 2):
            fh.write(
                f"\n[[days]]\nday = {d}\nopens = 2026-12-{d:02d}T08:00:00+08:00\n"
                f"closes = 2026-12-{d:02d}T22:00:00+08:00\nvote = {3000 + d}\n"
            )
    run(game, db, "night", "resolve", "--night", "0")
    run(game, db, "day", "resolve", "--day", "1", "--as-of", _after(1))
    run(game, db, "night", "add", "--night", "1", "--actor", "丙", "--skill", "杀人",
        "--choice", "放弃")  # fmt: skip
    run(game, db, "night", "resolve", "--night", "1")
    return game, db


def _proxy(game: Path, db: Path, day: int, voter: str, target: str, code: int = 0) -> str:
    at = f"2026-12-{day:02d}T11:00:00+08:00"
    return run(game, db, "vote", "proxy", "--day", str(day), "--voter", voter, "--target", target,
               "--at", at, code=code)  # fmt: skip


def _tally(game: Path, db: Path, day: int) -> dict:  # type: ignore[type-arg]
    return json.loads(run(game, db, "tally", "--day", str(day), "--json", "--as-of", _after(day)))


def test_vote_proxy_names_a_card_and_the_reversal_day_elects(tmp_path: Path) -> None:
    says("nizhuan.txt:196", "投票对象：傻树的第一身份")
    says("nizhuan.txt:156", "2，开始第一天讨论日，竞选警长")
    game, db = _round_two(tmp_path)
    assert "已记录代投：第5天 乙 → 丁的第二身份" in _proxy(game, db, 5, "乙", "丁的第二身份")
    assert "已记录代投：第5天 甲 → 丁的第二身份" in _proxy(game, db, 5, "甲", "丁#2")
    assert "已记录代投：第5天 丙 → 戊的第一身份" in _proxy(game, db, 5, "丙", "戊的第一身份")
    assert "投票对象「路人#2」不在名单中" in _proxy(game, db, 5, "己", "路人#2", code=1)
    data = _tally(game, db, 5)
    # the game file does not say day 5 elects: the engine's state does
    assert data["tally"]["sheriff_election"] is True
    assert data["elected"] == "丁的第二身份" and data["out"] is None
    votes = {v["voter"]: (v["status"], v["target"], v["reason"]) for v in data["votes"]}
    assert votes["乙的第二身份"] == ("counted", "丁的第二身份", "导演代投有效：投给丁的第二身份")
    assert votes["甲的第二身份"] == ("counted", "丁的第二身份", "导演代投有效：投给丁的第二身份")
    assert votes["丙的第二身份"] == ("counted", "戊的第一身份", "导演代投有效：投给戊的第一身份")
    # day resolve counts it as the election too: the sheriff is 丁 (second card)
    run(game, db, "day", "resolve", "--day", "5", "--as-of", _after(5))
    assert json.loads(run(game, db, "state", "--json"))["sheriff"] == "丁"


@pytest.mark.parametrize("target", ["辛的第二身份", "辛#2"])
def test_night_add_takes_a_card_label_target(tmp_path: Path, target: str) -> None:
    says("nizhuan.txt:94", "女巫可以毒杀一名角色，令其出局")
    says("nizhuan.txt:196", "投票对象：傻树的第一身份")
    game, db = _round_two(tmp_path)
    run(game, db, "day", "resolve", "--day", "5", "--as-of", _after(5))
    out = run(game, db, "night", "add", "--night", "5", "--actor", "甲", "--skill", "毒药",
              "--target", target, "--card", "第二身份")  # fmt: skip
    assert "甲[毒药]→辛的第二身份" in out
    refused = run(game, db, "night", "add", "--night", "5", "--actor", "甲", "--skill", "毒药",
                  "--target", "路人#2", code=1)  # fmt: skip
    assert "目标「路人#2」不在名单中" in refused
    data = json.loads(run(game, db, "night", "resolve", "--night", "5", "--json"))
    assert [(d["player"], d["card_index"], d["cause"]) for d in data["deaths"]] == [
        ("辛", 2, "女巫[毒药]")
    ]


def test_a_night_actions_file_takes_a_card_label_target(tmp_path: Path) -> None:
    says("nizhuan.txt:94", "女巫可以毒杀一名角色，令其出局")
    game, db = _round_two(tmp_path)
    run(game, db, "day", "resolve", "--day", "5", "--as-of", _after(5))
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'night = 5\n[[actions]]\nactor = "甲"\nskill = "毒药"\ntargets = ["路人#2"]\n',
        encoding="utf-8",
    )
    refused = run(game, db, "night", "resolve", "--night", "5", "--actions", str(bad), code=1)
    assert "targets[0]：名单中没有玩家「路人#2」" in refused
    actions = tmp_path / "night5.toml"
    actions.write_text(
        'night = 5\n[[actions]]\nactor = "甲"\nskill = "毒药"\ntargets = ["辛#2"]\n'
        'card = "第二身份"\n',
        encoding="utf-8",
    )
    data = json.loads(
        run(game, db, "night", "resolve", "--night", "5", "--actions", str(actions), "--json")
    )
    assert [(d["player"], d["card_index"], d["cause"]) for d in data["deaths"]] == [
        ("辛", 2, "女巫[毒药]")
    ]
    listed = json.loads(run(game, db, "night", "list", "--night", "5", "--json"))
    assert [r["targets"] for r in listed] == [["辛的第二身份"]]


def test_a_bare_name_proxy_means_the_card_still_in_play(tmp_path: Path) -> None:
    """辛's second card is out: a proxy for "辛" counts for the first (the out one is not a
    target, nizhuan.txt:51); with both cards in play the card must be named."""
    says("nizhuan.txt:51", "已经公示的出局角色不属于游戏范畴，不允许被选为技能或投票的目标")
    game, db = _round_two(tmp_path)
    run(game, db, "day", "resolve", "--day", "5", "--as-of", _after(5))
    run(game, db, "night", "add", "--night", "5", "--actor", "甲", "--skill", "毒药",
        "--target", "辛的第二身份", "--card", "第二身份")  # fmt: skip
    run(game, db, "night", "resolve", "--night", "5")
    assert "已记录代投：第6天 乙 → 辛" in _proxy(game, db, 6, "乙", "辛")
    _proxy(game, db, 6, "丙", "戊")
    data = _tally(game, db, 6)
    votes = {v["voter"]: v for v in data["votes"]}
    assert votes["乙的第二身份"]["status"] == "counted"
    assert votes["乙的第二身份"]["reason"] == "导演代投有效：投给辛的第一身份"
    assert votes["丙的第二身份"]["status"] == "invalid"
    assert votes["丙的第二身份"]["reason"] == (
        "代投无效：投票对象须写明第几身份（例：戊的第一身份）"
    )


def test_a_duel_on_the_top_card_leaves_the_day_resolvable(tmp_path: Path) -> None:
    """Votes at 09:30 on 甲's first card, 乙's duel on the same card at 10:00: the card goes out
    once, by the duel; the votes on it no longer count (docs/rulings.md 投票与计票) and the rest
    of the vote decides the day."""
    says(
        "nizhuan.txt:106",
        "决斗目标也会立刻出局，并且若决斗目标为【狼人阵营】的身份牌，则会立刻关门",
    )
    says("nizhuan.txt:51", "已经公示的出局角色不属于游戏范畴，不允许被选为技能或投票的目标")
    game, db = game_at_day_two(tmp_path)
    for voter, target in (("丙", "甲的第一身份"), ("丁", "甲的第一身份"), ("辛", "庚")):
        run(game, db, "vote", "proxy", "--day", "2", "--voter", voter, "--target", target,
            "--at", "2026-12-02T09:30:00+08:00")  # fmt: skip
    run(game, db, "day", "add", "--day", "2", "--actor", "乙", "--skill", "决斗",
        "--target", "甲的第一身份", "--at", "2026-12-02T10:00:00+08:00")  # fmt: skip
    data = json.loads(run(game, db, "day", "resolve", "--day", "2", "--as-of", _after(2), "--json"))
    assert [(d["player"], d["card_index"], d["cause"]) for d in data["deaths"]] == [
        ("甲", 1, "乙的[决斗]"),
        ("庚", 1, "投票出局"),
    ]
    assert data["tally"]["out"] == "庚的第一身份"
    # the tally view says the same before and after the resolution
    votes = {v["voter"]: (v["status"], v["reason"]) for v in _tally(game, db, 2)["votes"]}
    assert votes["丙的第一身份"][0] != "counted"
    assert "甲的第一身份已于" in votes["丙的第一身份"][1]
