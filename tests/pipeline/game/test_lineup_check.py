"""The game file's line-up check (``bansha check``, and every command that loads the file:
init, state, night resolve): each rule set's number of players and each player's ``faction``
against the cards, as the rule set says (engine.rulesets, through the game file's hook)."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

import pipeline.cli.engine  # registers the commands on the cli group
import pipeline.cli.setup  # noqa: F401
from pipeline.cli import cli
from tests.engine.rule_text import says

GAMES = Path(__file__).resolve().parents[3] / "config" / "games"


def _players(text: str) -> list[str]:
    """The game file's ``[[players]]`` blocks, in order (each up to the next table)."""
    return re.findall(r"\n\[\[players\]\]\n(?:(?!\n\[).)*", text, flags=re.S)


def _check(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", str(path)])
    return result.exit_code, result.output


def test_an_m135_game_of_eleven_players_is_refused(tmp_path: Path) -> None:
    says("m135.txt:5", "本场版杀为12人局（双身份，24张牌）")
    text = (GAMES / "m135.toml").read_text(encoding="utf-8")
    last = _players(text)[-1]
    path = tmp_path / "m135.toml"
    path.write_text(text.replace(last, ""), encoding="utf-8")
    code, out = _check(path)
    assert code != 0
    assert "本规则是 12 人局，名单中有 11 名玩家（《让子弹飞》规则 · 身份配置，m135.txt:5）" in out
    # every command that reads the game file says the same and does nothing
    for args in (["state", str(path)], ["night", "resolve", str(path), "--night", "0"]):
        result = CliRunner().invoke(cli, [*args, "--db", str(tmp_path / "m135.db")])
        assert result.exit_code != 0 and "本规则是 12 人局" in result.output, result.output
    assert not (tmp_path / "m135.db").exists()
    # the whole line-up checks
    path.write_text(text, encoding="utf-8")
    assert _check(path)[0] == 0, _check(path)[1]


def test_a_wolf_given_the_village_faction_is_refused(tmp_path: Path) -> None:
    says("m135.txt:9", "其中一张属于狼人阵营时，角色的实际阵营为狼人阵营")
    text = (GAMES / "m135.toml").read_text(encoding="utf-8")
    wolf = next(block for block in _players(text) if '"狼人"' in block)
    path = tmp_path / "m135.toml"
    path.write_text(
        text.replace(wolf, wolf.replace('faction = "狼人阵营"', 'faction = "村民阵营"')),
        encoding="utf-8",
    )
    code, out = _check(path)
    assert (
        code != 0 and "实际阵营是「狼人阵营」（《让子弹飞》规则 · 身份与阵营，m135.txt:9）" in out
    )
    path.write_text(
        text.replace(wolf, wolf.replace('faction = "狼人阵营"', 'faction = "狼人"')),
        encoding="utf-8",
    )
    code, out = _check(path)
    assert code != 0 and "faction「狼人」不是本规则的阵营" in out


def test_without_faction_lines_the_cards_give_the_factions(tmp_path: Path) -> None:
    """The two-red-cards faction loss reads the factions: a game file that does not write them
    gets the ones the cards give (m135.txt:9), not "no faction"."""
    from pipeline.derive import game_factions
    from pipeline.game.gamefile import load_game

    says("m135.txt:245", "同一阵营的角色累计获得两张或以上红牌时，阵营判负")
    text = (GAMES / "m135.toml").read_text(encoding="utf-8")
    path = tmp_path / "m135.toml"
    path.write_text(re.sub(r'\nfaction = "[^"]*"', "", text), encoding="utf-8")
    game = load_game(path, env={})
    factions = game_factions(game)
    assert all(p.faction is None for p in game.players)
    for p in game.players:
        wolf = any(c in ("狼人", "隐狼") for c in p.cards)
        assert factions[p.name] == ("狼人阵营" if wolf else "村民阵营"), p.name
