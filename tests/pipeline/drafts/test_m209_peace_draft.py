"""m209 平安日 in the result draft.

m209.txt:166 — 讨论日获得投票最多的角色将出局，
  若该角色持有[霸道]或[不死]状态，则不出局，公示平安日。
m209.txt:167 — 每天的投票内容公开，但投票计数隐藏，将只宣布当天谁是最高票。
m209.txt:376 — 日[强制][翻牌]—— [常驻]：游戏日白天获得[不死]状态。
"""

from __future__ import annotations

from pathlib import Path

from pipeline.drafts import DraftKind
from tests.engine.rule_text import says
from tests.pipeline.derive.test_sun_rounds import DAY2, draft_body, h, run
from tests.pipeline.support import sun_voted_top

CLOSED = DAY2.replace(hour=22, minute=5)
AFTER = "2026-12-03T09:00:00+08:00"


def _sun_is_top(tmp_path: Path) -> tuple[Path, Path]:
    """Day 2: 壬 (太阳, [不死] by day) gets every vote."""
    return sun_voted_top(tmp_path, "p")


def test_the_tally_keeps_the_sun_in_without_naming_the_role(tmp_path: Path) -> None:
    says("m209.txt:166", "若该角色持有[霸道]或[不死]状态，则不出局，公示平安日")
    says("m209.txt:376", "游戏日白天获得[不死]状态")
    file, db = _sun_is_top(tmp_path)
    body = draft_body(file, db, DraftKind.RESULT, 2, CLOSED)
    assert "今日最高票：壬" in body and "平安日" in body
    assert "太阳" not in body  # the role stays private (the tally names the status)
    out = run((file, db), "tally", "--day", "2", "--as-of", AFTER)
    assert "唯一最高票；但壬持有[不死]，不出局（平安日）" in out


def test_the_resolved_day_announces_the_top_and_the_peace(tmp_path: Path) -> None:
    says("m209.txt:166", "则不出局，公示平安日")
    says("m209.txt:167", "将只宣布当天谁是最高票")
    game = _sun_is_top(tmp_path)
    # a red card the same day: the engine has other public lines, the top must stay in them
    run(game, "card", "give", "--player", "癸", "--colour", "红", "--why", "测试",
        "--at", h(14).isoformat())  # fmt: skip
    out = run(game, "day", "resolve", "--day", "2", "--as-of", AFTER)
    assert "平安日" in out
    body = draft_body(*game, DraftKind.RESULT, 2, CLOSED)
    assert "[b]结算公示[/b]" in body
    # kept in by his own 日[强制][翻牌], the sun's card is turned over (m209.txt:63, 376)
    assert "今日最高票：壬，持有[不死]，不出局\n壬翻牌：太阳\n今日平安日" in body
    assert "癸" in body  # the red card's out is said too
    assert "m209.txt" not in body
