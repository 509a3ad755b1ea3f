"""``bansha state`` as a director reads it, for each example game (config/games/<ruleset>.toml):
a card's position is said only where a player holds two cards; a status nobody holds (zhenyan's
魔力点) says so instead of naming an owner; a skill's charges read true before the skill was
ever usable (zhenyan's team <杀人>) as well as after it was used."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers `bansha state` on the cli group)
from engine.rulesets import get_ruleset
from engine.state import Charge, GameState
from pipeline.cli import cli
from pipeline.cli.engine import _render_state
from pipeline.game.gamefile import RULESETS, load_game
from pipeline.game.journal import setup_state

ROOT = Path(__file__).resolve().parents[3]
GAMES = ROOT / "config" / "games"
#: m135.txt:5 「本场版杀为12人局（双身份，24张牌）」; nizhuan.txt:138 「所有玩家的第一身份加入游戏」
TWO_CARDS = {"m135", "nizhuan"}


def state_of(tmp_path: Path, ruleset_id: str) -> str:
    game = tmp_path / f"{ruleset_id}.toml"
    game.write_bytes((GAMES / f"{ruleset_id}.toml").read_bytes())
    db = tmp_path / f"{ruleset_id}.db"
    for command in ("init", "state"):
        result = CliRunner().invoke(cli, [command, str(game), "--db", str(db)])
        assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_a_card_position_is_said_only_where_a_player_holds_two(
    tmp_path: Path, ruleset_id: str
) -> None:
    out = state_of(tmp_path, ruleset_id)
    lines = [line for line in out.splitlines() if "[当前：" in line]
    assert lines, out
    if ruleset_id in TWO_CARDS:
        assert all("第一身份" in line and "第二身份" in line for line in lines), out
    else:
        assert not any("身份" in line for line in lines), out
    # no status reads as held by "*"
    assert "  *：" not in out, out


def test_zhenyan_mana_belongs_to_nobody_and_the_team_kill_is_not_yet_usable(
    tmp_path: Path,
) -> None:
    out = state_of(tmp_path, "zhenyan")
    # zhenyan.txt:56 「1，初始拥有12魔力点」
    assert "魔力点：剩余12点（全场共用，不属于任何玩家；zhenyan.txt:55-58）" in out, out
    # zhenyan.txt:66 「该技能一开始不能使用，每次有一个狼人出局，则该技能的使用次数+1。」
    assert "狼群的<杀人>：暂无可用次数（该技能一开始不能使用" in out, out
    assert "<杀人>：已用" not in out, out


def _rendered(state: GameState, ruleset_id: str, capsys: pytest.CaptureFixture[str]) -> str:
    _render_state(state, get_ruleset(ruleset_id))
    return capsys.readouterr().out


def test_zhenyan_team_kill_counts_what_wolves_out_gave(
    capsys: pytest.CaptureFixture[str],
) -> None:
    game = load_game(GAMES / "zhenyan.toml", env={}, check_login=False)
    rs = get_ruleset("zhenyan")
    state = setup_state(game, rs)
    two = tuple(
        replace(c, remaining=2) if c.skill == "杀人" else c for c in state.charges
    )  # two wolves out: zhenyan.txt:66 「每次有一个狼人出局，则该技能的使用次数+1」
    assert "狼群的<杀人>：可用2次" in _rendered(replace(state, charges=two), "zhenyan", capsys)


def test_a_used_limited_skill_still_reads_used(capsys: pytest.CaptureFixture[str]) -> None:
    game = load_game(GAMES / "m135.toml", env={}, check_login=False)
    rs = get_ruleset("m135")
    state = setup_state(game, rs)
    used = tuple(
        Charge(c.card, c.skill, 0) if c.skill == "捣蛋" else c for c in state.charges
    )  # m135.txt:131 「捣蛋<限定>」
    out = _rendered(replace(state, charges=used), "m135", capsys)
    assert "白开水的捣蛋鬼<捣蛋>：已用" in out and "月下独酌的白痴<装傻>：可用" in out
