"""The example game files, one per rule set: config/games/<ruleset>.toml.

Each loads without a problem, its line-up is legal (the game file's check and the engine's
opening both accept it), it has 2–3 days with thread ids, every key it uses is documented in
docs/游戏文件.md, and its comments point the director to that doc, never to ../shared/.
Rule-text lines are quoted from the rule file a director was given (rules/<id>.txt).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers `bansha state` on the cli group)
from engine.rulesets import get_ruleset
from pipeline.cli import cli
from pipeline.derive.inquiry import load_secrets
from pipeline.game.gamefile import (
    RULESETS,
    SHERIFF_ELECTION_RULESETS,
    Game,
    ThreadRole,
    load_game,
    parse_game,
)
from pipeline.game.journal import setup_state
from tests.pipeline.game.test_gamefile_docs import doc_tables

ROOT = Path(__file__).resolve().parents[3]
GAMES = ROOT / "config" / "games"
EXAMPLES = {rs: GAMES / f"{rs}.toml" for rs in RULESETS}
#: players per rule set: m135.txt:5 "本场版杀为12人局（双身份，24张牌）"; m209.txt:22-33
#: 4+1+3+4+1 drawn roles; zhenyan.txt:64-100 (12 cards); tubian24.txt:13 "24人局";
#: nizhuan.txt:138 "所有玩家的第一身份加入游戏，共8张身份"
PLAYERS = {"m135": 12, "m209": 13, "zhenyan": 12, "tubian24": 24, "nizhuan": 8}
CARDS_EACH = {"m135": 2, "m209": 1, "zhenyan": 1, "tubian24": 1, "nizhuan": 2}


def load(ruleset_id: str) -> Game:
    return load_game(EXAMPLES[ruleset_id], env={}, check_login=False)


def test_there_is_one_example_per_rule_set() -> None:
    assert set(PLAYERS) == set(RULESETS)
    assert all(path.is_file() for path in EXAMPLES.values()), EXAMPLES


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_the_example_loads_without_a_problem(ruleset_id: str) -> None:
    game = load(ruleset_id)
    assert game.game.ruleset == ruleset_id
    # a forum command checks the login too: guests can read the example forum, no cookie needed
    assert load_game(EXAMPLES[ruleset_id], env={}) == game


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_the_line_up_is_legal_and_the_engine_starts(ruleset_id: str) -> None:
    game = load(ruleset_id)
    rs = get_ruleset(ruleset_id)
    assert len(game.players) == PLAYERS[ruleset_id]
    assert all(len(p.cards) == CARDS_EACH[ruleset_id] for p in game.players)
    assert rs.validate_setup([(p.name, list(p.cards)) for p in game.players]) == []
    # how `bansha night resolve` / `bansha state` start the game (pipeline.game.journal.setup_state)
    state = setup_state(game, rs)
    assert [p.name for p in state.players] == [p.name for p in game.players]
    assert all(p.faction for p in game.players)  # the card ledger's two-reds rule has factions


def test_m135_pairs_follow_the_rule_text() -> None:
    # m135.txt:5 "狼人×3，隐狼，预言家，女巫，猎人，守卫，长老，白痴，黑商，魔术师，乌鸦，
    # 灵能，潜行者，捣蛋鬼，高级村民，村民×6，复制人"; :90 女巫身份必须作为第二身份;
    # :142 复制人身份必须作为第一身份
    game = load("m135")
    cards = Counter(c for p in game.players for c in p.cards)
    assert sum(cards.values()) == 24 and cards["狼人"] == 3 and cards["村民"] == 6
    assert all(p.cards[0] != "女巫" and p.cards[1] != "复制人" for p in game.players)
    assert sum(p.faction == "狼人阵营" for p in game.players) == 4  # 狼人×3 + 隐狼, one each


def test_m209_lineup_is_the_cards_dealt() -> None:
    # m209.txt:22 "狼人（10选4，且黑狼王和白狼王必出现且只会出现其中之一）"
    game = load("m209")
    assert sorted(game.secrets["lineup"]) == sorted(p.cards[0] for p in game.players)
    state = setup_state(game, get_ruleset("m209"))
    assert "lineup" in dict(state.settings)


def test_m209_sun_day_in_the_comments_loads_when_uncommented() -> None:
    # m209.txt:377 "太阳出局时，公示[日不落]，下一个白天额外进行一轮[正午]阶段": the commented
    # lines of day 3 are a working 日不落 day once the director removes the "# "
    text = EXAMPLES["m209"].read_text(encoding="utf-8")
    for key in ("first_vote", "first_closes"):
        text = re.sub(rf"^# ({key} = )", r"\1", text, flags=re.M)
    text = re.sub(r"^# (vote = 40122)", "", text, flags=re.M)  # already set for day 3
    game = parse_game(tomllib.loads(text), source="m209.toml", env={}, check_login=False)
    day3 = game.day(3)
    assert day3.threads[ThreadRole.FIRST_VOTE] == 40123 and day3.vote == 40122
    assert day3.opens < day3.first_closes < day3.closes  # type: ignore[operator]


def test_zhenyan_words_and_variants() -> None:
    # zhenyan.txt:168 【第X个词语是XX吗？】: the variants of word 2 count as that word
    secrets = load_secrets(load("zhenyan"))
    assert len(secrets.words) == 4
    assert secrets.correct(2, "太阳花") and secrets.correct(2, "向日葵")
    assert not secrets.correct(1, "太阳花")
    game = load("zhenyan")
    # zhenyan.txt:147 询问贴 from the second day on (day 1 elects the sheriff, zhenyan.txt:105)
    assert game.days[0].inquiry is None and all(d.inquiry for d in game.days[1:])


def test_tubian24_opening() -> None:
    # tubian24.txt:65 "游戏开始时，会公布所有玩家的性别"; :74 出刀优先级 1-8; :147 仆人选主人;
    # :162 盗贼从这张身份和一张【村民】、一张【狼人】中盲选一张
    game = load("tubian24")
    assert all(p.sex in ("男", "女") for p in game.players)
    table = game.secrets
    assert len(table["kill_order"]) == 8 and len(set(table["kill_order"])) == 8
    thief = game.player(table["thief"])
    assert thief is not None
    assert thief.cards == [table["thief_cards"][table["thief_pick"] - 1]]
    state = setup_state(game, get_ruleset("tubian24"))
    settings = dict(state.settings)
    assert settings["master"] == table["master"] and settings["thief"] == thief.name


def test_tubian24_thief_card_may_be_written_as_thief() -> None:
    # tubian24.txt:164 "盗贼将自己的身份牌修改为自己选择的身份": the example's comment offers
    # cards = ["盗贼"] with thief_cards/thief_pick; the engine then deals the picked card
    data = tomllib.loads(EXAMPLES["tubian24"].read_text(encoding="utf-8"))
    thief = data["tubian24"]["thief"]
    for player in data["players"]:
        if player["name"] == thief:
            player["cards"] = ["盗贼"]
    try:
        game = parse_game(data, source="tubian24.toml", env={}, check_login=False)
    except ValueError as exc:  # the loader's line-up check refused 盗贼 in the deal
        pytest.fail(f"盗贼 as a card is refused: {exc}")
    state = setup_state(game, get_ruleset("tubian24"))
    assert [c.name for c in state.player(thief).cards] == ["猎人"]


def test_nizhuan_cards_follow_the_rule_text() -> None:
    # nizhuan.txt:80 狼人 "这个身份牌必须为第一身份"; :85 蚀时狼妃 and :110 定序王子
    # "必须为第二身份"; :74 "将必定出现至少一个以下组合【双村民】"
    game = load("nizhuan")
    for p in game.players:
        assert p.cards[1] != "狼人" and p.cards[0] not in ("蚀时狼妃", "定序王子")
    assert any(p.cards == ["村民", "村民"] for p in game.players)


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_two_or_three_days_with_their_threads(ruleset_id: str) -> None:
    game = load(ruleset_id)
    assert 2 <= len(game.days) <= 3
    assert [d.day for d in game.days] == list(range(1, len(game.days) + 1))
    for day in game.days:
        assert day.discussion and day.vote and day.progress
        assert day.opens < day.closes
    # day 1 elects the sheriff where the rule set has an election (m135.txt:50, m209.txt:226,
    # zhenyan.txt:105, nizhuan.txt:139); tubian24 has none (tubian24.txt:39)
    expected = ruleset_id in SHERIFF_ELECTION_RULESETS
    assert [d.sheriff_election for d in game.days] == [expected] + [False] * (len(game.days) - 1)


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_every_key_used_is_documented(ruleset_id: str) -> None:
    data = tomllib.loads(EXAMPLES[ruleset_id].read_text(encoding="utf-8"))
    tables = doc_tables()
    missing = [
        f"[{section}] {key}"
        for section, key in _keys_used(data)
        if key not in tables.get(("zh", section), {})
    ]
    assert not missing, f"{ruleset_id}.toml uses keys docs/游戏文件.md does not document: {missing}"


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_the_comments_point_to_the_doc_and_the_rule_file(ruleset_id: str) -> None:
    text = EXAMPLES[ruleset_id].read_text(encoding="utf-8")
    comments = "\n".join(ln for ln in text.splitlines() if ln.lstrip().startswith("#"))
    assert "docs/游戏文件.md" in comments
    assert "shared/" not in text and not re.search(r"rules/\w+\.txt", text)
    # rule lines cited the way a director can look them up: "m135.txt 第 5 行"
    assert re.search(rf"{ruleset_id}\.txt 第 \d+(-\d+)? 行", comments)
    # each key of [game], [forum] and [director] says briefly what it is, on its own line
    table = ""
    for line in text.splitlines():
        if m := re.match(r"^\[\[?(\w+)\]", line):
            table = m.group(1)
        elif table in ("game", "forum", "director") and re.match(r"^\w+ = ", line):
            assert "#" in line, f"{ruleset_id}.toml [{table}]: no comment on {line!r}"


@pytest.mark.parametrize("ruleset_id", RULESETS)
def test_bansha_init_and_state_accept_the_example(ruleset_id: str, tmp_path: Path) -> None:
    # what a director runs first on a copied file: init checks it, state starts the engine
    game = tmp_path / f"{ruleset_id}.toml"
    game.write_bytes(EXAMPLES[ruleset_id].read_bytes())
    db = tmp_path / f"{ruleset_id}.db"
    outputs = {}
    for command in ("init", "state"):
        result = CliRunner().invoke(cli, [command, str(game), "--db", str(db)])
        assert result.exit_code == 0, result.output
        outputs[command] = result.output
    assert "数据库已就绪" in outputs["init"]
    assert load(ruleset_id).players[0].name in outputs["state"]


# ------------------------------------------------------------------------ the keys a game file uses


def _keys_used(data: dict[str, Any]) -> list[tuple[str, str]]:
    """``(section, key)`` of every key in a parsed game file; top-level tables are keys of
    the ``top`` section. Values of a key (zhenyan's ``variants``) are not keys."""
    out: list[tuple[str, str]] = []
    for key, value in data.items():
        out.append(("top", key))
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            if isinstance(entry, dict):
                out += [(key, sub) for sub in entry]
    return out
