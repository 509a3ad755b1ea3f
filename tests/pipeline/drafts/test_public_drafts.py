"""Public drafts: what goes to the players' threads is public text only, and it does not change
when a moderator's delete renumbers the floors.

docs/discuz.md §1.3: "Key everything by pid. The floor a page shows can change: after a post
is deleted, Discuz renumbers the floors shown (seen on the real server: position 15 became 14#)".
m209.txt:166 — 讨论日获得投票最多的角色将出局，若该角色持有[霸道]或[不死]状态，则不出局，
公示平安日。
m209.txt:167 — 每天的投票内容公开，但投票计数隐藏，将只宣布当天谁是最高票。
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from pipeline.drafts import DraftKind
from pipeline.store import open_store
from tests.pipeline.conftest import DEMO_SCRIPT, bansha, forum_world
from tests.pipeline.derive.test_sun_rounds import DAY2, draft_body, run
from tests.pipeline.support import sun_voted_top

#: Words only the director reads: hints to act, post ids, commands (drafts are what
#: the players read; the director's notes go to the console and the CLI).
DIRECTOR_ONLY = ("请导演", "代投或裁定", "pid", "bansha ", "导演查看")
_URL_OPEN = re.compile(r"\[url=[^\]]*\]")
_FLOOR = re.compile(r"第\s*\d+\s*楼|\d+#|\d+楼")


def director_only(body: str) -> list[str]:
    """The director-only phrases in a draft's text (a link's address is not text: a findpost
    link carries ``&pid=`` and is exactly how a draft cites a post)."""
    text = _URL_OPEN.sub("[url]", body)
    return [p for p in DIRECTOR_ONLY if p in text]


def drafts_in(db: Path) -> list[tuple[int, str, int | None, str]]:
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("SELECT id, kind, day, body FROM drafts ORDER BY id").fetchall()
    finally:
        conn.close()
    return [(int(i), str(k), d, str(b)) for i, k, d, b in rows]


def test_the_contract_check_sees_each_phrase() -> None:
    """The check below can fail: each phrase is found in running text, not in a link."""
    link = "[url=forum.php?mod=redirect&goto=findpost&ptid=1&pid=2]原帖[/url]"
    assert director_only(link) == []
    assert director_only("（原投票为第5楼（pid 9））") == ["pid"]
    assert director_only("帖子内容不可读，无法判定；请导演查看原帖后代投或裁定") == [
        "请导演",
        "代投或裁定",
        "导演查看",
    ]
    assert director_only("用 bansha vote proxy 代投") == ["bansha "]


# --------------------------------------------------------------------------- the demo


def test_no_draft_of_the_demo_carries_director_only_text(demo_db: Path) -> None:
    drafts = drafts_in(demo_db)
    assert {k for _i, k, _d, _b in drafts} >= {"running_tally", "result", "reminder", "day_open"}
    leaks = {(i, k, d): director_only(b) for i, k, d, b in drafts if director_only(b)}
    assert leaks == {}


def test_no_draft_of_the_demo_names_a_floor(demo_db: Path) -> None:
    """Floors renumber after a delete: a draft cites a post by its findpost link."""
    for i, kind, day, body in drafts_in(demo_db):
        assert not _FLOOR.search(_URL_OPEN.sub("[url]", body)), (i, kind, day, body)
    bodies = {k: b for _i, k, d, b in drafts_in(demo_db) if d == 2}
    # the running tally and the result cite each vote that was not counted by its post's pid
    assert "[url=forum.php?mod=redirect&goto=findpost&ptid=2012&pid=" in bodies["result"]
    assert "改票未回复原投票楼层" in bodies["result"]  # the public reason, without its note


# --------------------------------------------------------------------------- a day from cron


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.fixture
def forum(tmp_path: Path):
    with forum_world(tmp_path, at("2026-12-02T20:30:00+08:00")) as world:
        yield world


def live_drafts(env: dict[str, str]) -> dict[int, tuple[str, int | None, str]]:
    return {i: (k, d, b) for i, k, d, b in drafts_in(Path(env["BANSHA_DB"]))}


def floors(env: dict[str, str], tid: int) -> dict[int, int]:
    store = open_store(Path(env["BANSHA_DB"]))
    try:
        rows = store.db.query("SELECT pid, floor FROM posts WHERE tid = ?", [tid])
        return {r["pid"]: r["floor"] for r in rows}
    finally:
        store.close()


#: An early post of the director's in the day-2 vote thread, deleted by a moderator after the
#: result was drafted: every later floor of the thread moves up by one.
EARLY_POST = """
[[posts]]
thread = "vote"
day = 2
author = "导演"
at = 2026-12-02T10:05:00+08:00
text = "请大家按投票格式发帖。"
delete = true
delete_at = 2026-12-03T09:02:00+08:00
"""


def test_a_moderators_delete_after_the_result_drafts_nothing_new(tmp_path: Path) -> None:
    """A delete renumbers the floors after it; the drafts must not change."""
    script = tmp_path / "posts.toml"
    script.write_text(DEMO_SCRIPT.read_text(encoding="utf-8") + EARLY_POST, encoding="utf-8")
    start = at("2026-12-02T20:30:00+08:00")
    with forum_world(tmp_path, start, script=script) as (_sim, clock, game, env):
        # the running tally while votes come in, then the result the next morning
        for moment in ("2026-12-02T21:30:00+08:00", "2026-12-03T09:00:00+08:00"):
            clock.set(at(moment))
            bansha(env, "cycle", str(game), "--as-of", moment)
        before = live_drafts(env)
        result = next(b for k, d, b in before.values() if k == "result" and d == 2)
        assert "[url=forum.php?mod=redirect&goto=findpost&ptid=2012&pid=" in result
        assert not _FLOOR.search(_URL_OPEN.sub("[url]", result)), result
        floors_before = floors(env, 2012)

        # 09:02 a moderator deletes the early post; the director re-reads the day in full
        clock.set(at("2026-12-03T09:05:00+08:00"))
        bansha(env, "crawl", str(game), "--day", "2", "--full")
        floors_after = floors(env, 2012)
        moved = [p for p, f in floors_after.items() if f != floors_before.get(p)]
        assert len(moved) > 10, "the delete renumbered no floor: the test would prove nothing"

        out = bansha(env, "drafts", "make", str(game), "--as-of", "2026-12-03T09:05:00+08:00")
        assert "没有新的草稿" in out
        assert live_drafts(env) == before
        out = bansha(env, "cycle", str(game), "--as-of", "2026-12-03T09:10:00+08:00", "--verbose")
        assert "没有新草稿" in out
        assert live_drafts(env) == before


def test_no_draft_of_a_day_from_cron_carries_director_only_text(forum) -> None:
    _sim, clock, game, env = forum
    for moment in ("2026-12-02T21:30:00+08:00", "2026-12-03T09:00:00+08:00"):
        clock.set(at(moment))
        bansha(env, "cycle", str(game), "--as-of", moment)
    drafts = live_drafts(env)
    assert {k for k, _d, _b in drafts.values()} >= {"running_tally", "reminder", "result"}
    assert {i: director_only(b) for i, (_k, _d, b) in drafts.items() if director_only(b)} == {}


# --------------------------------------------------------------------------- m209 平安日


def test_a_top_holding_busi_is_announced_with_a_peaceful_day(tmp_path: Path) -> None:
    """m209.txt:166-167: the top is announced, and 平安日 — before and after the day resolve."""
    game = sun_voted_top(tmp_path)
    closed = DAY2.replace(hour=22, minute=5)
    for resolved in (False, True):
        if resolved:
            run(game, "day", "resolve", "--day", "2", "--as-of", "2026-12-03T09:00:00+08:00")
        body = draft_body(game[0], game[1], DraftKind.RESULT, 2, closed)
        assert "今日最高票：壬" in body, body
        assert "平安日" in body, body
        assert "出局：壬" not in body  # not out (m209.txt:166)
        if not resolved:  # which status (whose skill) stopped it is the engine's to publish
            assert "太阳" not in body and "不死" not in body, body
        assert director_only(body) == []


def _sun_top_result(tmp_path: Path) -> Callable[[tuple[str, ...]], str]:
    """The result post of m209's day 2 (壬 top, holding [不死]) with the engine's 公示 lines."""
    from pipeline.derive import DayResult, derive
    from pipeline.drafts import load_templates, result_context
    from pipeline.game.gamefile import load_game

    game = sun_voted_top(tmp_path)
    g = load_game(game[0], env={"BANSHA_COOKIE": "x"})
    store = open_store(game[1])
    try:
        res: DayResult = derive(g, store, as_of=DAY2.replace(hour=22, minute=5)).days[2]
    finally:
        store.close()
    templates = load_templates()

    def body(lines: tuple[str, ...]) -> str:
        ctx = result_context(g, res, lines)
        assert ctx is not None
        return templates.render(DraftKind.RESULT, ctx)

    return body


def test_the_top_line_stays_when_the_engines_lines_do_not_name_it(tmp_path: Path) -> None:
    """The engine's 公示 replaces the tally's out line, not the top (m209.txt:167): a line about
    someone else keeps 今日最高票, and 平安日 is said unless a line says it."""
    body = _sun_top_result(tmp_path)
    other = body(("警长乙移交给丙",))
    assert "今日最高票：壬" in other and "警长乙移交给丙" in other
    assert "[b]平安日[/b]：最高票壬不出局，今日无人出局" in other
    # the engine's own words (m209 day resolve) name the top and say 平安日: nothing repeated
    named = body(("今日最高票：壬，持有[不死]，不出局", "今日平安日"))
    assert named.count("最高票") == 1 and named.count("平安日") == 1
    # a line naming the top for something else does not say it had the most votes
    flipped = body(("壬是白痴，[大难不死]", "平安日：壬不出局"))
    assert "今日最高票：壬" in flipped and flipped.count("平安日") == 1
    silent = body(())
    assert "今日最高票：壬" in silent and "[b]平安日[/b]：最高票壬不出局，今日无人出局" in silent


def test_no_top_is_said_of_a_vote_the_engine_says_is_not_resolved(tmp_path: Path) -> None:
    """nizhuan.txt:123 — 历史轮中，游戏满足以下条件时，第一轮游戏立刻结束: the day's vote after
    the round ended is not resolved; the result shows the engine's 公示 and says no 最高票 and
    no 平安日 of the votes."""
    body = _sun_top_result(tmp_path)
    line = "历史轮已经结束（所有狼人出局），第一轮立刻结束，当天的放逐投票不再结算"
    unresolved = body((line,))
    assert "最高票" not in unresolved and "平安日" not in unresolved, unresolved
    assert f"[b]结算公示[/b]：\n{line}" in unresolved
    # a line about the top's own going out keeps the vote resolved: the top is said
    assert "今日最高票：壬" in body(("壬已出局，不再结算",))
