"""太阳[日不落]: a day with two 正午 rounds, each counted from its own vote thread.

m209.txt:377 — 太阳出局时，公示[日不落]，下一个白天额外进行一轮[正午]阶段（此游戏日只有现实一天），
在这个游戏日白天中，只有太阳指定的角色可以发言（包括在投票帖发言），最多可选择场上存活人数一半的玩家。
m209.txt:378 — 在第一次[正午]阶段最高票的角色还尚未出局，仍然可以正常发言投票（若被太阳指定）。
太阳可以看完第一轮[正午]阶段后再决定让那些角色可以发言投票。
m209.txt:379 — 投票贴不发言默认视作弃票。
"""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.cli.engine  # noqa: F401  (registers the engine commands)
from parsers.records import Post, ThreadPage
from pipeline.cli import cli
from pipeline.derive import derive
from pipeline.drafts import DraftKind, due_drafts
from pipeline.game.gamefile import GameFileError, load_game
from pipeline.store import open_store
from tests.engine.test_m209_cli import HEAD
from tests.engine.test_m209_cli import LINEUP as M209_LINEUP
from tests.pipeline.conftest import sim_crawler

TZ = timezone(timedelta(hours=8))
# the m209 CLI test's line-up with 太阳 for 长老 and 长老 for 白痴 (弱神 stays 4 of 10)
LINEUP = tuple((n, {"长老": "太阳", "白痴": "长老"}.get(r, r)) for n, r in M209_LINEUP)
UID = {n: 101 + i for i, (n, _r) in enumerate(LINEUP)}
FIRST_TID, VOTE_TID = 2014, 2012
DAY2 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
FIRST_CLOSES = datetime(2026, 12, 2, 15, 0, tzinfo=TZ)
CLOSES = datetime(2026, 12, 2, 22, 0, tzinfo=TZ)
AFTER = "2026-12-03T09:00:00+08:00"

DAYS = """[[days]]
day = 1
opens = 2026-12-01T10:00:00+08:00
closes = 2026-12-01T22:00:00+08:00
discussion = 2001
vote = 2002

[[days]]
day = 2
opens = 2026-12-02T10:00:00+08:00
closes = 2026-12-02T22:00:00+08:00
discussion = 2011
{day2}
"""
SUN_DAY = f"first_vote = {FIRST_TID}\nfirst_closes = 2026-12-02T15:00:00+08:00\nvote = {VOTE_TID}"


def write_game(
    path: Path,
    day2: str = SUN_DAY,
    ruleset: str = "m209",
    lineup: tuple[tuple[str, str], ...] = LINEUP,
    more_days: str = "",
) -> Path:
    players = "".join(
        f'[[players]]\nname = "{n}"\nuid = {UID[n]}\naliases = []\ncards = ["{r}"]\n\n'
        for n, r in lineup
    )
    drawn = ", ".join(f'"{r}"' for _n, r in lineup)
    head = HEAD.replace('ruleset = "m209"', f'ruleset = "{ruleset}"')
    text = head + f"[m209]\nlineup = [{drawn}]\n\n" + players + DAYS.format(day2=day2) + more_days
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def game(tmp_path: Path) -> tuple[Path, Path]:
    return write_game(tmp_path / "sun.toml"), tmp_path / "sun.db"


def run(game: tuple[Path, Path], *args: str, code: int = 0) -> str:
    n = 2 if args[0] in ("night", "day", "drafts", "lastwords", "player", "card", "vote") else 1
    file, db = game
    result = CliRunner().invoke(cli, [*args[:n], str(file), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def vote(pid: int, who: str, target: str, at: datetime) -> tuple[int, str, datetime, str]:
    return (pid, who, at, f"投票对象：{target}\n投票理由：测试")


def add_posts(db: Path, tid: int, posts: list[tuple[int, str, datetime, str]]) -> None:
    store = open_store(db)
    rows = tuple(
        Post(
            tid=tid,
            pid=pid,
            floor=i + 2,
            author=name,
            uid=UID[name],
            posted_at=at,
            message_html=text,
            text=text,
        )
        for i, (pid, name, at, text) in enumerate(posts)
    )
    store.save_page(
        ThreadPage(tid=tid, page=1, total_pages=1, posts=rows),
        source="html",
        url="test",
        status=200,
        headers={},
        body=repr(rows).encode(),
        fetched_at=DAY2,
        ppp=None,
    )
    store.close()


def draft_body(file: Path, db: Path, kind: DraftKind, day: int, at: datetime) -> str:
    """The body of the ``kind`` draft of ``day`` that is due at ``at``."""
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(db)
    spec = next(
        s
        for s in due_drafts(g, derive(g, store, as_of=at), as_of=at)
        if s.kind is kind and s.day == day
    )
    store.close()
    return spec.body


def h(hour: int, minute: int = 0) -> datetime:
    return DAY2.replace(hour=hour, minute=minute)


def post_day2_votes(db: Path) -> None:
    # round 1 (everyone living may vote): 丙 gets two votes, 丁 one
    add_posts(
        db,
        FIRST_TID,
        [
            vote(3001, "乙", "丙", h(11)),
            vote(3002, "丁", "丙", h(11, 5)),
            vote(3003, "戊", "丁", h(12)),
            vote(3004, "庚", "戊", h(15, 30)),  # after the first round ended
        ],
    )
    # the extra round: the sun named 丙、戊、己
    add_posts(
        db,
        VOTE_TID,
        [
            vote(3101, "戊", "丁", h(14)),  # before the extra round opened
            vote(3102, "戊", "丁", h(16)),
            vote(3103, "己", "丁", h(16, 5)),
            vote(3104, "乙", "丁", h(16, 10)),  # not named by the sun
            vote(3105, "丙", "戊", h(17)),
        ],
    )


# --------------------------------------------------------------------------- the game file


def test_the_first_round_needs_its_close_inside_the_day(tmp_path: Path) -> None:
    path = write_game(tmp_path / "a.toml", f"first_vote = {FIRST_TID}\nvote = {VOTE_TID}")
    with pytest.raises(GameFileError) as info:
        load_game(path, env={"BANSHA_COOKIE": "x"})
    assert "须写明第一轮[正午]的结束时间 first_closes" in str(info.value)
    late = SUN_DAY.replace("15:00:00", "23:00:00")
    path = write_game(tmp_path / "b.toml", late)
    with pytest.raises(GameFileError) as info:
        load_game(path, env={"BANSHA_COOKIE": "x"})
    assert "days[1].first_closes" in str(info.value)
    assert "第一轮结束时间须在开门与关门之间" in str(info.value)
    path = write_game(tmp_path / "c.toml", SUN_DAY.replace(f"vote = {VOTE_TID}", ""))
    with pytest.raises(GameFileError) as info:
        load_game(path, env={"BANSHA_COOKIE": "x"})
    assert "还须有额外一轮[正午]的投票帖 vote" in str(info.value)


def test_only_m209_has_two_noon_rounds(tmp_path: Path) -> None:
    path = write_game(tmp_path / "m135.toml", ruleset="m135")
    with pytest.raises(GameFileError) as info:
        load_game(path, env={"BANSHA_COOKIE": "x"})
    assert "只有 m209 的太阳[日不落]有两轮[正午]放逐投票" in str(info.value)


# --------------------------------------------------------------------------- the tally


def test_each_round_is_judged_in_its_own_window(game: tuple[Path, Path]) -> None:
    post_day2_votes(game[1])
    data = json.loads(run(game, "tally", "--day", "2", "--json", "--as-of", AFTER))
    first = data["first_round"]
    assert first["tid"] == FIRST_TID
    assert first["out"] == "丙"  # m209.txt:169: the unique maximum
    late = next(v for v in first["votes"] if v["voter"] == "庚")
    assert late["status"] == "invalid" and "投票已截止" in late["reason"]
    # the extra round opens when the first ends
    early = next(v for v in data["votes"] if v["ballot"]["evidence"]["pid"] == 3101)
    assert early["status"] == "invalid" and "尚未开门" in early["reason"]
    assert data["out"] == "丁"  # without the engine nobody is barred from the extra round
    # both tops go out at 黄昏, in order (m209.txt:378)
    file, db = game
    store = open_store(db)
    d = derive(load_game(file, env={"BANSHA_COOKIE": "x"}), store, as_of=CLOSES)
    assert d.outs["丙"] == (CLOSES, "第2天第一轮[正午]最高票出局")
    assert d.outs["丁"] == (CLOSES, "第2天投票出局")
    # a first-round vote is a vote of the day: no 未投票 for 丁 (voted in round 1 only)
    assert not [f for f in d.flags if f.player == "丁" and f.day == 2 and "no-vote" in f.id]
    store.close()


def test_why_shows_the_first_round_vote(game: tuple[Path, Path]) -> None:
    post_day2_votes(game[1])
    out = run(game, "why", "--day", "2", "--player", "丁", "--as-of", AFTER)
    assert f"tid={FIRST_TID}" in out or "3002" in out
    assert "投票→丙" in out and "[有效]" in out
    out = run(game, "tally", "--day", "2", "--as-of", AFTER)
    assert "第一轮[正午]（太阳[日不落]" in out
    assert "结果：第一轮最高票：丙" in out


def test_the_first_round_result_is_drafted_after_its_re_read(game: tuple[Path, Path]) -> None:
    file, db = game
    post_day2_votes(db)
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(db)
    at = h(15, 10)
    d = derive(g, store, as_of=at)
    kinds = {s.kind for s in due_drafts(g, d, as_of=at, unsettled_first=[2])}
    assert DraftKind.FIRST_RESULT not in kinds  # the first round's thread not re-read yet
    specs = [s for s in due_drafts(g, d, as_of=at) if s.kind is DraftKind.FIRST_RESULT]
    assert len(specs) == 1
    body = specs[0].body
    assert "第一轮最高票：丙" in body  # counts hidden, only the top (m209.txt:167)
    assert "票数" not in body
    assert "黄昏" in body
    d = derive(g, store, as_of=CLOSES)
    result = next(
        s for s in due_drafts(g, d, as_of=CLOSES) if s.kind is DraftKind.RESULT and s.day == 2
    )
    assert "第一轮最高票出局：丙" in result.body
    assert "额外一轮最高票出局：丁" in result.body
    store.close()


def test_the_report_names_both_tops(game: tuple[Path, Path], tmp_path: Path) -> None:
    from pipeline.drafts.report import write_report

    file, db = game
    post_day2_votes(db)
    store = open_store(db)
    page = write_report(
        load_game(file, env={"BANSHA_COOKIE": "x"}),
        store,
        day=2,
        as_of=CLOSES,
        path=tmp_path / "r.html",
    ).read_text(encoding="utf-8")
    store.close()
    assert "第一轮出局：丙；额外一轮出局：丁" in page
    # every ballot of both rounds, each with its round (m209.txt:377-378)
    assert page.count("第一轮[正午]</span>") == 4 and page.count("额外一轮[正午]</span>") == 5
    assert 'id="first-counts"' in page and "第一轮[正午]票数" in page


# --------------------------------------------------------------------------- with the engine


def through_day_1(game: tuple[Path, Path]) -> None:
    """The opening (守卫 picks a mode, m209.txt:250) and the election day, resolved."""
    run(game, "night", "add", "--night", "0", "--actor", "己", "--skill", "模式选择",
        "--choice", "法式守卫")  # fmt: skip
    run(game, "night", "resolve", "--night", "0")
    run(game, "day", "resolve", "--day", "1", "--as-of", AFTER)


def sun_falls_on_night_1(game: tuple[Path, Path], *, name_now: bool) -> None:
    through_day_1(game)
    run(game, "night", "add", "--night", "1", "--actor", "甲", "--skill", "杀人",
        "--target", "壬")  # fmt: skip
    if name_now:
        run(game, "night", "add", "--night", "1", "--actor", "壬", "--skill", "日不落",
            "--target", "丙", "--target", "戊", "--target", "己")  # fmt: skip
    out = run(game, "night", "resolve", "--night", "1")
    assert "日不落" in out


@pytest.mark.parametrize("name_now", [True, False], ids=["named-at-night", "named-at-noon"])
def test_only_the_suns_named_vote_in_the_extra_round(
    game: tuple[Path, Path], name_now: bool
) -> None:
    sun_falls_on_night_1(game, name_now=name_now)
    if not name_now:
        # m209.txt:378: 太阳可以看完第一轮[正午]阶段后再决定让那些角色可以发言
        run(game, "day", "add", "--day", "2", "--actor", "壬", "--skill", "日不落",
            "--target", "丙", "--target", "戊", "--target", "己")  # fmt: skip
    post_day2_votes(game[1])
    data = json.loads(run(game, "tally", "--day", "2", "--json", "--as-of", AFTER))
    # round 1 is open to every living player (乙 was not named, and counts there)
    yi_first = next(v for v in data["first_round"]["votes"] if v["voter"] == "乙")
    assert yi_first["status"] == "counted"
    # the extra round: only the named vote (m209.txt:377, 379 — 投票贴不发言默认视作弃票)
    yi = next(v for v in data["votes"] if v["voter"] == "乙")
    assert yi["status"] == "invalid" and "太阳[日]" in yi["reason"]
    assert yi["rule"] == "m209.txt:377"  # 只有太阳指定的角色可以发言（包括在投票帖发言）
    assert data["out"] == "丁" and data["first_round"]["out"] == "丙"
    out = run(game, "day", "resolve", "--day", "2", "--json", "--as-of", AFTER)
    report = json.loads(out)
    assert report["first_round"]["out"] == "丙" and report["tally"]["out"] == "丁"
    # both tops take [投票出局] at 黄昏, the first round's first (m209.txt:378)
    assert [(d["player"], d["cause"]) for d in report["deaths"]] == [
        ("丙", "投票出局"),
        ("丁", "投票出局"),
    ]
    assert "全部一致" in run(game, "state", "--verify")


def test_once_the_engine_resolved_the_day_its_outs_count(tmp_path: Path) -> None:
    """m209.txt:357 白痴[大难不死]: voted top, the idiot flips and stays in the game — once
    the director resolved the day with the engine, the tally's top is no longer taken as out."""
    lineup = tuple((n, "白痴") if n == "壬" else (n, r) for n, r in LINEUP)
    file = write_game(tmp_path / "idiot.toml", f"vote = {VOTE_TID}", lineup=lineup)
    game = (file, tmp_path / "idiot.db")
    through_day_1(game)
    run(game, "night", "add", "--night", "1", "--actor", "甲", "--skill", "杀人",
        "--target", "戊")  # fmt: skip
    run(game, "night", "resolve", "--night", "1")
    add_posts(
        game[1],
        VOTE_TID,
        [vote(3201 + i, n, "壬", h(12, i)) for i, n in enumerate(("乙", "丙", "丁"))],
    )
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(game[1])
    assert derive(g, store, as_of=CLOSES).outs["壬"][1] == "第2天投票出局"
    store.close()
    report = json.loads(run(game, "day", "resolve", "--day", "2", "--json", "--as-of", AFTER))
    assert report["deaths"] == []
    store = open_store(game[1])
    assert "壬" not in derive(g, store, as_of=CLOSES).outs
    store.close()


def test_a_first_round_without_a_fallen_sun_is_refused(game: tuple[Path, Path]) -> None:
    """m209.txt:377: only the day after 太阳 went out has the extra 正午 — a first_vote on
    another day is a mistake in the game file, said before anything is resolved."""
    through_day_1(game)
    run(game, "night", "add", "--night", "1", "--actor", "甲", "--skill", "杀人",
        "--target", "戊")  # fmt: skip
    run(game, "night", "resolve", "--night", "1")
    post_day2_votes(game[1])
    err = run(game, "day", "resolve", "--day", "2", "--as-of", AFTER, code=1)
    assert "当天没有太阳[日不落]的额外[正午]" in err


def test_the_day_input_keeps_the_first_round() -> None:
    from engine.kernel import DayInput

    first = DayInput(day=2, out="丙", decided_by="唯一最高票", ballots=(("乙", "丙"),))
    day = DayInput(day=2, out="丁", ballots=(("戊", "丁"),), first_round=first)
    again = DayInput.from_dict(json.loads(json.dumps(day.to_dict(), ensure_ascii=False)))
    assert again == day and again.first_round == first
    assert "first_round" not in DayInput(day=3).to_dict()  # older inputs keep their form


# --------------------------------------------------------------------------- the cron cycle


def test_the_cycle_rereads_the_first_round_once_and_then_drafts_its_result(
    game: tuple[Path, Path],
) -> None:
    """The first round's result is public before the day ends (only its top, m209.txt:167):
    after ``first_closes`` the cycle reads the first round's thread whole again, once, and only
    then drafts it — so a vote edited or deleted on an early page is not missed."""
    from pipeline.cycle import closed_days_to_reread, first_rounds_to_reread, run_cycle
    from pipeline.drafts import list_drafts, make_drafts
    from pipeline.sim.simulator import ForumSim, SimClock

    file, db = game
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    clock = SimClock(h(10, 30))
    sim = ForumSim(users={"导演": 100, **UID}, clock=clock, base_url=str(g.forum.base_url))
    opened = datetime(2026, 12, 1, 9, 0, tzinfo=TZ)
    for tid in (2001, 2002):
        sim.add_thread(tid, f"第1天 {tid}", "导演", "开门", opened)
    for tid in (2011, FIRST_TID, VOTE_TID):
        sim.add_thread(tid, f"第2天 {tid}", "导演", "开门", DAY2)
    for name, target, at in (("乙", "丙", h(11)), ("丁", "丙", h(11, 5)), ("戊", "丁", h(12))):
        sim.add_post(FIRST_TID, name, f"投票对象：{target}\n投票理由：测试", at)
    store = open_store(db)

    crawl = sim_crawler(sim, store, g.game.tz)

    def cycle(now: datetime) -> list[str]:
        clock.set(now)
        sim.requests.clear()
        run_cycle(
            g,
            store,
            now=now,
            crawl=crawl,
            draft=lambda d: make_drafts(
                g,
                store,
                d,
                now=now,
                unsettled=closed_days_to_reread(g, store, now),
                unsettled_first=first_rounds_to_reread(g, store, now),
            ),
        )
        return [str(d.kind) for d in list_drafts(store) if d.day == 2]

    assert "first_result" not in cycle(h(14, 50))  # the first round is still open
    assert first_rounds_to_reread(g, store, h(15, 1)) == [2]
    assert "first_result" in cycle(h(15, 1))
    assert first_rounds_to_reread(g, store, h(15, 1)) == []

    def reads() -> int:
        return len([r for r in sim.requests if r.query.get("tid") == str(FIRST_TID)])

    assert reads() == 2  # the incremental read, then the whole re-read
    cycle(h(15, 6))
    assert reads() == 1  # once only: a later cycle reads it incrementally
    draft = next(d for d in list_drafts(store) if str(d.kind) == "first_result")
    assert "第一轮最高票：丙" in draft.body
    store.close()


def test_schedule_runs_a_cycle_after_the_first_round(
    game: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Asia/Shanghai")  # schedule prints the machine's own zone
    time.tzset()
    try:
        out = run(game, "schedule")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert "# 第2天第一轮[正午]结束（太阳[日不落]）：结束后一分钟结算一轮" in out
    assert "01 15 02 12 *" in out


DAY3 = """
[[days]]
day = 3
opens = 2026-12-03T10:00:00+08:00
closes = 2026-12-03T22:00:00+08:00
discussion = 2021
vote = 2022
"""


def test_players_the_rules_bar_are_not_flagged_for_not_voting_or_posting(tmp_path: Path) -> None:
    """m209.txt:357 a flipped 白痴 不能参与投票; m209.txt:210 离开游戏的角色……不能发言投票:
    neither gets a 潜水 flag (m209.txt:719-721) for what the rules forbid them to do."""
    lineup = tuple((n, "白痴") if n == "壬" else (n, r) for n, r in LINEUP)
    file = write_game(tmp_path / "idiot.toml", f"vote = {VOTE_TID}", lineup=lineup, more_days=DAY3)
    game = (file, tmp_path / "idiot.db")
    through_day_1(game)
    run(game, "night", "resolve", "--night", "1")
    add_posts(
        game[1],
        VOTE_TID,
        [vote(3201 + i, n, "壬", h(12, i)) for i, n in enumerate(("乙", "丙", "丁"))],
    )
    run(game, "day", "resolve", "--day", "2", "--as-of", AFTER)  # the idiot flips, stays
    run(game, "night", "add", "--night", "2", "--actor", "癸", "--skill", "离开游戏",
        "--choice", "暂时")  # fmt: skip
    run(game, "night", "resolve", "--night", "2")
    day3 = DAY2 + timedelta(days=1)
    add_posts(game[1], 2022, [vote(3301, "乙", "丙", day3 + timedelta(hours=2))])
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(game[1])
    noon = day3 + timedelta(hours=2, minutes=30)
    elevator = next(
        s
        for s in due_drafts(g, derive(g, store, as_of=noon), as_of=noon)
        if s.kind is DraftKind.ELEVATOR and s.day == 3
    )
    assert "癸" not in elevator.body and "壬" in elevator.body  # 在电梯楼中消失 (m209.txt:210)
    d = derive(g, store, as_of=day3 + timedelta(hours=13))
    store.close()
    flagged = {f.id for f in d.flags if f.day == 3}
    assert "d3-no-vote-丙" in flagged  # could vote, did not
    assert "d3-no-vote-壬" not in flagged  # the flipped idiot may not vote
    assert "d3-no-vote-癸" not in flagged  # out of the game for the day
    assert not [f for f in flagged if f.endswith("-癸") or "-癸-" in f]  # nor 潜水 for posts
    assert [f for f in flagged if f.startswith("d3-qianshui-丙")]  # 丙 did not post: 潜水


def test_the_running_tally_counts_the_round_that_is_open(game: tuple[Path, Path]) -> None:
    """m209 votes are public, counts hidden (m209.txt:167): while the first 正午 round runs
    its tally is drafted, then the extra round's — each says which round it is."""
    file, db = game
    g = load_game(file, env={"BANSHA_COOKIE": "x"})

    def running(at: datetime) -> str:
        store = open_store(db)
        spec = next(
            s
            for s in due_drafts(g, derive(g, store, as_of=at), as_of=at)
            if s.kind is DraftKind.RUNNING_TALLY and s.day == 2
        )
        store.close()
        return spec.body

    add_posts(db, FIRST_TID, [vote(3001, "乙", "丙", h(11)), vote(3002, "丁", "丙", h(11, 5))])
    body = running(h(12, 30))
    assert "·第一轮[正午]·计票（进行中）" in body and "目前最高票：丙" in body
    assert "第一轮12月2日 15:00截止" in body  # the first round's end
    post_day2_votes(db)
    body = running(h(18))
    assert "·额外一轮[正午]·计票（进行中）" in body and "目前最高票：丁" in body
    assert "== 第一轮投票帖" in run(game, "posts", "--day", "2")


def test_a_naming_during_the_day_is_read_as_the_engine_reads_it(game: tuple[Path, Path]) -> None:
    """m209.txt:377 最多可选择场上存活人数一半的玩家: an over-long naming is invalid in the
    engine, and the tally does not bar anyone for it; a second naming does not count."""
    sun_falls_on_night_1(game, name_now=False)
    post_day2_votes(game[1])
    seven = ["乙", "丙", "丁", "戊", "己", "庚", "辛"]  # 12 living: at most 6
    run(game, "day", "add", "--day", "2", "--actor", "壬", "--skill", "日不落",
        *[x for t in seven for x in ("--target", t)])  # fmt: skip
    data = json.loads(run(game, "tally", "--day", "2", "--json", "--as-of", AFTER))
    assert all("太阳[日]" not in v["reason"] for v in data["votes"])
    report = json.loads(run(game, "day", "resolve", "--day", "2", "--json", "--as-of", AFTER))
    naming = next(r for r in report["actions"] if r["skill"] == "日不落")
    assert (
        naming["outcome"] == "invalid" and "最多可选择场上存活人数一半（6人）" in naming["reason"]
    )


def test_the_reminder_leaves_out_who_may_not_vote_in_the_extra_round(
    game: tuple[Path, Path],
) -> None:
    sun_falls_on_night_1(game, name_now=True)  # 丙、戊、己 named
    g = load_game(game[0], env={"BANSHA_COOKIE": "x"})
    store = open_store(game[1])
    at = h(21, 30)
    spec = next(
        s
        for s in due_drafts(g, derive(g, store, as_of=at), as_of=at)
        if s.kind is DraftKind.REMINDER and s.day == 2
    )
    store.close()
    assert "丙" in spec.body and "己" in spec.body
    assert "辛" not in spec.body  # not named by the sun: no vote to remind of


def test_a_look_at_the_past_sees_only_what_was_posted_by_then(game: tuple[Path, Path]) -> None:
    """--as-of replays a moment: a vote posted later is not in it (DESIGN: every verdict can
    be re-derived as it stood)."""
    post_day2_votes(game[1])
    data = json.loads(run(game, "tally", "--day", "2", "--json", "--as-of", h(11, 30).isoformat()))
    assert [v["voter"] for v in data["first_round"]["votes"]] == ["乙", "丁"]
    assert data["votes"] == []


def test_an_approved_first_round_tally_is_not_posted_after_the_round(
    game: tuple[Path, Path],
) -> None:
    from pipeline.drafts import approve, list_drafts, make_drafts

    file, db = game
    add_posts(db, FIRST_TID, [vote(3001, "乙", "丙", h(11)), vote(3002, "丁", "丙", h(11, 5))])
    g = load_game(file, env={"BANSHA_COOKIE": "x"})
    store = open_store(db)
    made = make_drafts(g, store, derive(g, store, as_of=h(14, 50)), now=h(14, 50))
    tally_id = next(i for i in made if str(store.db["drafts"].get(i)["kind"]) == "running_tally")
    approve(store, tally_id, h(14, 55))
    make_drafts(g, store, derive(g, store, as_of=h(15, 1)), now=h(15, 1))
    states = {d.id: str(d.state) for d in list_drafts(store, include_superseded=True)}
    store.close()
    assert states[tally_id] == "superseded"  # the first round is over: never posted


def test_the_day_open_sends_players_to_both_rounds(game: tuple[Path, Path]) -> None:
    sun_falls_on_night_1(game, name_now=True)
    g = load_game(game[0], env={"BANSHA_COOKIE": "x"})
    store = open_store(game[1])
    at = DAY2 - timedelta(minutes=30)
    body = next(
        s.body
        for s in due_drafts(g, derive(g, store, as_of=at), as_of=at)
        if s.kind is DraftKind.DAY_OPEN and s.day == 2
    )
    store.close()
    assert f"tid={FIRST_TID}]第2天第一轮投票帖[/url]，12月2日 15:00截止" in body
    assert f"tid={VOTE_TID}]第2天额外一轮投票帖[/url]，12月2日 22:00截止" in body
