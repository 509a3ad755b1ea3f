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
from pipeline.gamefile import load_game
from pipeline.lastwords import discuz_codes
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[2]
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
        ("[color=red]投饺子[/color][size=5]大[/size]", ["color/size/font"]),
        ("[url=http://example.com]链接[/url]", ["url"]),
        ("[hide]藏[/hide] [quote]引[/quote]", ["hide", "quote"]),
        ("[align=center]居中[/align]", ["align"]),
    ],
)
def test_discuz_code_is_what_the_forum_would_render(text: str, codes: list[str]) -> None:
    assert discuz_codes(text) == codes


def test_last_words_with_code_are_flagged_and_published_as_text(db: Path) -> None:
    run(db, "player", "out", "--player", "烧卖", "--at", NIGHT, "--cause", "第1夜被刀")
    out = run(
        db, "lastwords", "add", "--player", "烧卖", "--text", "[b]我是好人[/b]\n投饺子",
        "--at", SENT,
    )  # fmt: skip
    assert "已记录 #1：烧卖 的遗言" in out
    assert "遗言中有 Discuz! 代码（b）" in out
    flags = json.loads(run(db, "flags", "--json", "--as-of", "2026-12-02T09:00:00+08:00"))
    flag = next(f for f in flags if f["kind"] == "lastwords-code")
    assert flag["player"] == "烧卖"
    assert "遗言中禁止使用Discuz!代码" in flag["reason"]
    assert flag["evidence"][0]["url"] == "导演记录：遗言 #1"
    # the day-open draft publishes the words; the code shows as text, never as formatting
    game = load_game(GAME, env={})
    store = open_store(db)
    at = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)
    spec = next(
        s
        for s in due_drafts(game, derive(game, store, as_of=at), as_of=at)
        if s.kind is DraftKind.DAY_OPEN and s.day == 2
    )
    store.close()
    assert "[b]烧卖[/b]：" in spec.body
    assert "我是好人[[b][/b]/b]\n投饺子" in spec.body  # escaped, line by line
    assert "[b]我是好人[/b]" not in spec.body  # escaped: Discuz would not render it
    assert "我是好人" in spec.body


def test_a_resend_replaces_and_a_withdrawal_removes(db: Path) -> None:
    run(db, "player", "out", "--player", "烧卖", "--at", NIGHT, "--cause", "第1夜被刀")
    run(db, "lastwords", "add", "--player", "烧卖", "--text", "第一版", "--at", SENT)
    run(db, "lastwords", "add", "--player", "烧卖", "--text", "第二版",
        "--at", "2026-12-02T08:40:00+08:00")  # fmt: skip
    out = run(db, "lastwords", "list")
    assert "#1" in out and "已被替换" in out and "#2" in out and "有效" in out
    game = load_game(GAME, env={})
    store = open_store(db)
    at = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)
    d = derive(game, store, as_of=at)
    assert d.lastwords["烧卖"].text == "第二版"
    store.close()
    assert "已撤销 #2" in run(db, "lastwords", "remove", "2")
    assert "已于" in run(db, "lastwords", "remove", "2", code=1)
    data = json.loads(run(db, "lastwords", "list", "--json"))
    assert [r["text"] for r in data] == ["第一版"]


def test_bad_requests_say_what_is_wrong(db: Path, tmp_path: Path) -> None:
    assert "名单中没有玩家「路人」" in run(
        db, "lastwords", "add", "--player", "路人", "--text", "x", code=1
    )
    assert "放弃遗言不必记录" in run(
        db, "lastwords", "add", "--player", "烧卖", "--text", "  ", code=1
    )
    assert "二选一" in run(db, "lastwords", "add", "--player", "烧卖", code=2)
    bad = tmp_path / "gbk.txt"
    bad.write_bytes("遗言".encode("gbk"))
    assert "须为 UTF-8 文本" in run(
        db, "lastwords", "add", "--player", "烧卖", "--file", str(bad), code=1
    )
    out = run(db, "lastwords", "add", "--player", "饺子", "--text", "先写好")
    assert "尚未出局" in out
