"""Drafts from the engine's resolved phases: what the rules make public, nothing more.

m209.txt:156 — 夜晚期间需要公示的内容全部在下一个白天开始时公布。
m209.txt:156 — 公示出局名单时按角色出局的顺序排序。
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from pipeline.derive import derive
from pipeline.drafts import DraftKind, due_drafts
from pipeline.game.gamefile import load_game
from pipeline.store import open_store
from tests.pipeline.derive.test_sun_rounds import DAY2, LINEUP, draft_body, run
from tests.pipeline.support import day_2_votes, m209_through_day_1


def test_the_day_open_draft_shows_the_nights_public_lines_and_hides_the_causes(
    tmp_path: Path,
) -> None:
    game = m209_through_day_1(tmp_path)
    file = game[0]
    for actor, skill, target in (("甲", "杀人", "戊"), ("辛", "毒药", "乙")):
        run(game, "night", "add", "--night", "1", "--actor", actor, "--skill", skill,
            "--target", target)  # fmt: skip
    run(game, "night", "resolve", "--night", "1")
    body = draft_body(file, game[1], DraftKind.DAY_OPEN, 2, DAY2 - timedelta(minutes=30))
    assert "1. 戊（第1晚出局）\n2. 乙（第1晚出局）" in body  # in out order, no skill
    assert "昨晚出局（按出局顺序）：戊、乙" in body  # the engine's 公示 (m209.txt:156)
    assert "毒药" not in body and "杀人" not in body  # who killed whom stays private
    # the director's own record keeps the words written
    run(game, "player", "out", "--player", "乙", "--at", "2026-12-02T08:00:00+08:00",
        "--cause", "第1晚出局（导演公示）")  # fmt: skip
    body = draft_body(file, game[1], DraftKind.DAY_OPEN, 2, DAY2 - timedelta(minutes=30))
    assert "乙（第1晚出局（导演公示））" in body


def test_the_result_draft_carries_the_days_public_lines_once_resolved(tmp_path: Path) -> None:
    """m209.txt:357 白痴[大难不死]: the idiot voted top flips and stays — said in the result."""
    lineup = tuple((n, "白痴") if n == "壬" else (n, r) for n, r in LINEUP)
    game = m209_through_day_1(tmp_path, "i", lineup=lineup)
    file = game[0]
    day_2_votes(game, "壬", ("乙", "丙", "丁"))
    closed = DAY2.replace(hour=22, minute=5)
    before = draft_body(file, game[1], DraftKind.RESULT, 2, closed)
    assert "结算公示" not in before
    run(game, "day", "resolve", "--day", "2", "--as-of", "2026-12-03T09:00:00+08:00")
    after = draft_body(file, game[1], DraftKind.RESULT, 2, closed)
    assert "出局：壬" in before  # the tally alone: the top goes
    assert "[b]结算公示[/b]" in after
    assert "壬是白痴，[大难不死]" in after  # no tag can start here: shown as written
    assert "出局：壬" not in after  # the engine's word replaces the tally's


def test_a_day_resolved_on_another_count_is_called_out(tmp_path: Path) -> None:
    """After ``day resolve`` the count changed (here a skill's top recorded late, m209.txt:169):
    the engine's 公示 is no longer offered and the tally says to resolve the day again."""
    game = m209_through_day_1(tmp_path, "s")
    file = game[0]
    day_2_votes(game, "丁", ("乙", "丙", "戊"))
    run(game, "day", "resolve", "--day", "2", "--as-of", "2026-12-03T09:00:00+08:00")
    closed = DAY2.replace(hour=22, minute=5)
    assert "[b]结算公示[/b]" in draft_body(file, game[1], DraftKind.RESULT, 2, closed)
    store = open_store(game[1])
    store.set_meta("full_read:2", closed.isoformat())  # as a cycle after the close leaves it
    store.close()
    made = run(game, "drafts", "make", "--as-of", closed.isoformat())
    assert "投票结果" in made  # the result waits for approval
    run(game, "vote", "modifier", "--day", "2", "--player", "丙", "--kind", "force_top",
        "--source", "测试")  # fmt: skip
    out = run(game, "tally", "--day", "2", "--as-of", "2026-12-03T09:00:00+08:00")
    assert "第2天的引擎结算与当前计票不一致（最高票：结算时丁，现在丙）" in out
    # the result and the next opening are held until the day is resolved again
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(game[1])
    kinds = {(s.kind, s.day) for s in due_drafts(g, derive(g, store, as_of=closed), as_of=closed)}
    store.close()
    assert (DraftKind.RESULT, 2) not in kinds
    made = run(game, "drafts", "make", "--as-of", closed.isoformat())
    assert "注意：第2天的引擎结算与当前计票不一致" in made and "暂不起草" in made
    from pipeline.drafts import list_drafts

    store = open_store(game[1])
    results = [d for d in list_drafts(store, include_superseded=True) if str(d.kind) == "result"]
    store.close()
    assert results and all(str(d.state) == "superseded" for d in results if d.day == 2)
    run(game, "day", "resolve", "--day", "2", "--as-of", "2026-12-03T09:00:00+08:00")
    body = draft_body(file, game[1], DraftKind.RESULT, 2, closed)
    assert "今日最高票：丙" in body  # resolved again: the engine's 公示 follows the count
