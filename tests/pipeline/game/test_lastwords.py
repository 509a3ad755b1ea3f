"""遗言: recorded by the director, checked for Discuz! code, published in the day-open draft.

m209.txt:193 — 遗言中禁止使用Discuz!代码。 nizhuan.txt:55 (the same words).
m209.txt:156 — 每个游戏日白天开始时，公示前一天出局角色名单及遗言。
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.derive import derive
from pipeline.drafts import DraftKind, due_drafts
from pipeline.game.gamefile import load_game
from pipeline.game.lastwords import discuz_codes, refusal
from pipeline.store import open_store
from tests.pipeline.derive.test_sun_rounds import VOTE_TID, draft_body, write_game
from tests.pipeline.derive.test_sun_rounds import run as m209

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
TZ = timezone(timedelta(hours=8))
NIGHT = "2026-12-02T08:00:00+08:00"
SENT = "2026-12-02T08:30:00+08:00"


def run(db: Path, *args: str, code: int = 0) -> str:
    n = 2 if args[0] in ("lastwords", "player") else 1
    result = CliRunner().invoke(cli, [*args[:n], str(GAME), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


@pytest.mark.parametrize(
    ("text", "codes"),
    [
        ("我是好人，投饺子。\n再见 :)", []),
        ("我是[好人]，a [ b ]", []),  # brackets that Discuz leaves as words
        ("[b]我是好人[/b]", ["b"]),
        ("[color=red]投饺子[/color][size=5]大[/size]", ["color", "size"]),
        ("[url=http://example.com]链接[/url]", ["url"]),
        ("[hide]藏[/hide] [quote]引[/quote]", ["hide", "quote"]),
        ("[align=center]居中[/align]", ["align"]),
        ("[code]x[/code] [table][tr][td]格[/td][/tr][/table]", ["code", "table", "tr", "td"]),
        ("只写了半个[/B]", ["b"]),  # a stray closing tag, any case
        ("[indent]缩进[/indent] [HIDE=10]藏[/HIDE] [qq]12345[/qq]", ["indent", "hide", "qq"]),
        ("[list][*]一[*]二[/list]", ["list", "*"]),
    ],
)
def test_discuz_code_is_any_discuz_tag(text: str, codes: list[str]) -> None:
    assert discuz_codes(text) == codes


def sun_game(tmp_path: Path) -> tuple[Path, Path]:
    """An m209 game (m209 has last words, m209.txt:190-193)."""
    return write_game(tmp_path / "m209.toml", f"vote = {VOTE_TID}"), tmp_path / "m209.db"


def test_last_words_with_code_are_flagged_and_published_as_text(tmp_path: Path) -> None:
    game = sun_game(tmp_path)
    file, db = game
    m209(game, "player", "out", "--player", "癸", "--at", NIGHT, "--cause", "第1晚出局")
    out = m209(
        game, "lastwords", "add", "--player", "癸", "--text", "[b]我是好人[/b]\n投甲",
        "--at", SENT,
    )  # fmt: skip
    assert "已记录 #1：癸 的遗言" in out
    assert "遗言中有 Discuz! 代码（b）" in out
    flags = json.loads(m209(game, "flags", "--json", "--as-of", "2026-12-02T09:00:00+08:00"))
    flag = next(f for f in flags if f["kind"] == "lastwords-code")
    assert flag["player"] == "癸"
    assert "遗言中禁止使用Discuz!代码" in flag["reason"]
    assert flag["evidence"][0]["url"] == "导演记录：遗言 #1"
    # the day-open draft publishes the words; the code shows as text, never as formatting
    body = draft_body(file, db, DraftKind.DAY_OPEN, 2, datetime(2026, 12, 2, 9, 0, tzinfo=TZ))
    assert "[b]癸[/b]：" in body
    assert "我是好人[[b][/b]/b]\n投甲" in body  # escaped, line by line
    assert "[b]我是好人[/b]" not in body  # Discuz would not render it


def test_a_resend_replaces_and_a_withdrawal_removes(tmp_path: Path) -> None:
    game = sun_game(tmp_path)
    file, db = game
    m209(game, "player", "out", "--player", "癸", "--at", NIGHT, "--cause", "第1晚出局")
    m209(game, "lastwords", "add", "--player", "癸", "--text", "[b]第一版[/b]", "--at", SENT)
    m209(game, "lastwords", "add", "--player", "癸", "--text", "第二版",
         "--at", "2026-12-02T08:40:00+08:00")  # fmt: skip
    out = m209(game, "lastwords", "list")
    assert "#1" in out and "已被替换" in out and "#2" in out and "有效" in out
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(db)
    at = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)
    d = derive(g, store, as_of=at)
    store.close()
    assert d.lastwords["癸"].text == "第二版"
    # the code in the first version stays a rule break: a resend does not wipe it
    assert [f.evidence[0].url for f in d.flags if f.kind.value == "lastwords-code"] == [
        "导演记录：遗言 #1"
    ]
    assert "已撤销 #2" in m209(game, "lastwords", "remove", "2")
    assert "已于" in m209(game, "lastwords", "remove", "2", code=1)
    data = json.loads(m209(game, "lastwords", "list", "--json"))
    assert [r["text"] for r in data] == ["[b]第一版[/b]"]


def test_bad_requests_say_what_is_wrong(tmp_path: Path) -> None:
    game = sun_game(tmp_path)
    assert "名单中没有玩家「路人」" in m209(
        game, "lastwords", "add", "--player", "路人", "--text", "x", code=1
    )
    assert "放弃遗言不必记录" in m209(
        game, "lastwords", "add", "--player", "癸", "--text", "  ", code=1
    )
    assert "二选一" in m209(game, "lastwords", "add", "--player", "癸", code=2)
    bad = tmp_path / "gbk.txt"
    bad.write_bytes("遗言".encode("gbk"))
    assert "须为 UTF-8 文本" in m209(
        game, "lastwords", "add", "--player", "癸", "--file", str(bad), code=1
    )
    out = m209(game, "lastwords", "add", "--player", "甲", "--text", "先写好")
    assert "尚未出局" in out


def test_the_rules_that_give_no_last_words_are_kept(db: Path, tmp_path: Path) -> None:
    # m135.txt:59 本规则没有遗言
    assert "本规则没有遗言（m135.txt:59）" in run(
        db, "lastwords", "add", "--player", "烧卖", "--text", "x", code=1
    )
    # m209.txt:175 红牌罚下出局的角色没有遗言权利
    game = sun_game(tmp_path)
    m209(game, "card", "give", "--player", "癸", "--colour", "红", "--why", "场外",
         "--at", NIGHT)  # fmt: skip
    err = m209(game, "lastwords", "add", "--player", "癸", "--text", "x", "--at", SENT, code=1)
    assert "红牌罚下出局的角色没有遗言权利（m209.txt:175）" in err


@pytest.mark.parametrize(
    ("ruleset", "out", "why"),
    [
        ("zhenyan", None, "出局的角色没有遗言（zhenyan.txt:46）"),
        ("tubian24", (datetime(2026, 12, 1, 10, tzinfo=TZ), "第0晚出局"), ""),  # 首夜
        ("tubian24", (datetime(2026, 12, 2, 10, tzinfo=TZ), "第1晚出局"), "tubian24.txt:45"),
        # tubian24 says nothing of a red card's last words: a first night's red card keeps them
        ("tubian24", (datetime(2026, 12, 1, 9, tzinfo=TZ), "红牌罚下"), ""),
        ("tubian24", (datetime(2026, 12, 2, 10, tzinfo=TZ), "红牌罚下"), "tubian24.txt:45"),
        ("nizhuan", (datetime(2026, 12, 2, 10, tzinfo=TZ), "红牌罚下"), "nizhuan.txt:50"),
        ("m209", (datetime(2026, 12, 2, 10, tzinfo=TZ), "第1晚出局"), ""),
    ],
)
def test_who_has_last_words(ruleset: str, out: tuple[datetime, str] | None, why: str) -> None:
    """tubian24.txt:45 除首夜出局玩家外，所有出局玩家均没有遗言。
    nizhuan.txt:50 红牌罚下出局的角色没有遗言权利 (tubian24.txt:49 speaks only of skills)."""
    got = refusal(ruleset, out, datetime(2026, 12, 1, 10, tzinfo=TZ))
    assert (why in got and got) if why else got == ""


def test_words_recorded_before_a_red_card_are_not_published(tmp_path: Path) -> None:
    """m209.txt:175 红牌罚下出局的角色没有遗言权利 — also when the words came first."""
    game = sun_game(tmp_path)
    file, db = game
    out = m209(game, "lastwords", "add", "--player", "甲", "--text", "先写好的遗言", "--at", SENT)
    assert "尚未出局" in out
    m209(game, "card", "give", "--player", "甲", "--colour", "红", "--why", "场外",
         "--at", NIGHT)  # fmt: skip
    body = draft_body(file, db, DraftKind.DAY_OPEN, 2, datetime(2026, 12, 2, 9, 0, tzinfo=TZ))
    assert "甲（红牌罚下）" in body
    assert "先写好的遗言" not in body


def test_the_first_nights_words_open_the_first_day(tmp_path: Path) -> None:
    """tubian24.txt:45 除首夜出局玩家外，所有出局玩家均没有遗言 — so they are published in the
    first day's opening, which lists the first night's outs."""
    from tests.pipeline.cli.test_cmd_engine_tubian24 import add, game_file
    from tests.pipeline.cli.test_cmd_engine_tubian24 import run as t24

    file = game_file(tmp_path)
    file.write_text(
        file.read_text(encoding="utf-8").replace("vote = 3002", "discussion = 3001\nvote = 3002"),
        encoding="utf-8",
    )
    paths = (file, tmp_path / "t24.db")
    add(paths, 0, "狼1", "杀人", "知")
    t24(paths, "night", "resolve", "--night", "0")
    m209(paths, "lastwords", "add", "--player", "知", "--text", "我是先知",
        "--at", "2026-12-01T08:00:00+08:00")  # fmt: skip
    g = load_game(file, env={})
    store = open_store(paths[1])
    at = datetime(2026, 12, 1, 9, 30, tzinfo=TZ)
    spec = next(
        s
        for s in due_drafts(g, derive(g, store, as_of=at), as_of=at)
        if s.kind is DraftKind.DAY_OPEN and s.day == 1
    )
    store.close()
    assert spec.tid == 3001
    assert "1. 知（第0晚出局）" in spec.body
    assert "[b]知[/b]：\n我是先知" in spec.body
    assert "先知" not in spec.body.replace("我是先知", "")  # the card stays private
