"""替补: from a moment, another account plays a roster slot (the director's journal)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from click.testing import CliRunner

from parsers.records import Post, ThreadPage
from pipeline.cli import cli
from pipeline.derive import derive
from pipeline.game.gamefile import load_game
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
TZ = timezone(timedelta(hours=8))
AS_OF = datetime(2026, 12, 3, 9, 0, tzinfo=TZ)


def run(*args, code=0):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def add_posts(db: Path, tid: int, posts: list[tuple[int, int, str, datetime, str]]) -> None:
    store = open_store(db)
    rows = tuple(
        Post(
            tid=tid,
            pid=pid,
            floor=None,
            author=name,
            uid=uid,
            posted_at=at,
            message_html=text,
            text=text,
        )
        for pid, uid, name, at, text in posts
    )
    existing = store.thread(tid) or {}
    store.save_page(
        ThreadPage(tid=tid, page=(existing.get("last_page") or 1) + 10, total_pages=99, posts=rows),
        source="html",
        url="test",
        status=200,
        headers={},
        body=b"x",
        fetched_at=AS_OF,
        ppp=None,
    )
    store.close()


def test_a_substitute_speaks_and_votes_for_the_slot(db):
    base = [str(GAME), "--db", str(db)]
    # 麻花 never showed up; from day 2 noon 新麻花 (uid 901) plays the slot
    out = run(
        "player",
        "substitute",
        *base,
        "--player",
        "麻花",
        "--uid",
        "901",
        "--name",
        "新麻花",
        "--at",
        "2026-12-02T12:00:00+08:00",
    )
    assert "代替 麻花" in out
    day2 = datetime(2026, 12, 2, 13, 0, tzinfo=TZ)
    add_posts(
        db,
        2011,
        [(9000 + i, 901, "新麻花", day2 + timedelta(minutes=i), f"替补发言{i}") for i in range(6)],
    )
    add_posts(
        db,
        2012,
        [(9100, 901, "新麻花", day2 + timedelta(hours=1), "投票对象：春卷\n投票理由：替补的票")],
    )
    game = load_game(GAME, env={})
    store = open_store(db)
    d = derive(game, store, as_of=AS_OF)
    store.close()
    assert d.day(2).counts["麻花"].count == 6  # the substitute's posts count for the slot
    assert not any(
        f.player == "麻花" and f.day == 2 and f.kind.value == "qianshui" for f in d.flags
    )
    verdicts = {v.ballot.evidence.pid: v for v in d.day(2).verdicts}
    assert verdicts[9100].ballot.voter == "麻花" and verdicts[9100].counts_for == "春卷"


def test_a_substitute_cannot_take_another_players_account(db):
    out = run(
        "player",
        "substitute",
        str(GAME),
        "--db",
        str(db),
        "--player",
        "麻花",
        "--uid",
        "101",
        "--name",
        "x",
        "--at",
        "2026-12-02T12:00:00+08:00",
        code=1,
    )
    assert "不能作为替补" in out


def test_the_elevator_links_the_substitute_s_account(db):
    from pipeline.drafts import due_drafts

    run(
        "player",
        "substitute",
        str(GAME),
        "--db",
        str(db),
        "--player",
        "麻花",
        "--uid",
        "901",
        "--name",
        "新麻花",
        "--at",
        "2026-12-01T09:00:00+08:00",
    )
    game = load_game(GAME, env={})
    store = open_store(db)
    noon = datetime(2026, 12, 2, 12, 0, tzinfo=TZ)
    specs = {s.key: s for s in due_drafts(game, derive(game, store, as_of=noon), as_of=noon)}
    store.close()
    body = specs["elevator:d2"].body
    assert "authorid=901]麻花" in body and "authorid=112]" not in body


def test_the_account_that_left_the_slot_no_longer_votes_for_it(db):
    # m135.txt:220 「替补玩家将收到该玩家的角色、身份、行动及帐号、密码，代替该玩家继续游戏。」
    # The substitute plays the role from then on; a vote posted later from the old account is no
    # vote for the slot, and the verdict says why, naming the substitute and the moment.
    base = [str(GAME), "--db", str(db)]
    args = ["--player", "麻花", "--uid", "901", "--name", "新麻花"]
    run("player", "substitute", *base, *args, "--at", "2026-12-02T12:00:00+08:00")
    uid = load_game(GAME, env={}).player("麻花").uid
    day2 = datetime(2026, 12, 2, 13, 0, tzinfo=TZ)
    add_posts(db, 2012, [(9200, uid, "麻花", day2, "投票对象：春卷\n投票理由：我还想投")])
    store = open_store(db)
    d = derive(load_game(GAME, env={}), store, as_of=AS_OF)
    store.close()
    v = {v.ballot.evidence.pid: v for v in d.day(2).verdicts}[9200]
    assert v.counts_for is None and v.status.value == "ignored"
    assert v.reason == "麻花 已于 12-02 12:00 由替补 新麻花 接替，原账号此后的帖子不计票"
    assert v.ballot.voter == "麻花（原账号）"  # never counted as 麻花's ballot
    assert "麻花" not in d.day(2).tally.voters.get("春卷", [])
    # `bansha why` for 麻花 shows that post and its reason
    out = run("why", *base, "--day", "2", "--player", "麻花", "--as-of", AS_OF.isoformat())
    assert "pid 9200" in out and "由替补 新麻花 接替" in out
