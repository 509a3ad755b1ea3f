"""The director's commands on the demo game: tally, why, flags, cards, the journal."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
AS_OF = ["--as-of", "2026-12-03T09:00:00+08:00"]


def run(*args, code=0):
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def test_demo_prints_counts_tally_and_flags(demo_db):
    out = run("demo", "--db", str(demo_db), "--now", "2026-12-03T09:00:00+08:00")
    assert "已抓取到数据库" in out and str(demo_db) in out
    assert "出局：饺子（唯一最高票）" in out
    assert "d2-qianshui-粽子" in out
    assert "【演示模式】" in out and "已发出 → 帖子 tid=2012" in out  # approved, then posted
    assert (demo_db.parent / "report-day2.html").exists()
    # the m135 engine resolves night 1 from config/games/demo_night1.toml
    assert "1. 烧卖的第一身份（守卫）：杀人" in out and "包子当选警长" in out


def test_tally_json_contract(db):
    data = json.loads(run("tally", str(GAME), "--db", str(db), "--day", "2", "--json", *AS_OF))
    for key in (
        "day",
        "votes",
        "valid",
        "invalid",
        "tally",
        "out",
        "elected",
        "decided_by",
        "rule",
        "flags",
        "post_counts",
        "sheriff",
        "accelerated",
        "speed",
    ):
        assert key in data, key
    assert data["out"] == "饺子" and data["decided_by"] == "唯一最高票"
    counts = {c["candidate"]: c for c in data["tally"]["counts"]}
    assert counts["饺子"]["votes"] == "11/2"  # the sheriff's 1.5, exact
    reasons = [v["reason"] for v in data["invalid"]]
    assert any("投票给" in r for r in reasons)
    assert any("回复原投票楼层" in r for r in reasons)
    assert any("关门前1小时" in r for r in reasons)
    assert all(v["ballot"]["evidence"]["url"].startswith("http") for v in data["votes"])


def test_tally_table_in_chinese(db):
    out = run("tally", str(GAME), "--db", str(db), "--day", "2", *AS_OF)
    assert "结果：出局：饺子" in out and "[无效]" in out and "依据" in out


def test_why_explains_a_players_vote_posts_and_flags(db):
    out = run("why", str(GAME), "--db", str(db), "--day", "2", "--player", "烧卖", *AS_OF)
    assert "投票给" in out and "goto=findpost" in out
    assert "讨论帖发言：5 帖" in out
    out = run("why", str(GAME), "--db", str(db), "--day", "2", "--player", "粽子", *AS_OF)
    assert "潜水" in out and "讨论帖发言：1 帖" in out


def test_flags_confirm_becomes_a_card_once(db):
    base = [str(GAME), "--db", str(db)]
    out = run("flags", *base, "--day", "2", *AS_OF)
    assert "[d2-qianshui-粽子]" in out and "待确认" in out
    run("flags", "confirm", *base, "d2-qianshui-粽子")
    out = run("flags", "confirm", *base, "d2-qianshui-粽子", code=1)
    assert "已经处理过" in out
    data = json.loads(run("cards", *base, "--json"))
    assert data["players"]["粽子"]["yellow"] == 1
    run("flags", "dismiss", *base, "d2-qianshui-汤圆", "--why", "请假，导演批准")
    out = run("flags", *base, "--day", "2", *AS_OF)
    assert "已驳回" in out and "已确认" in out


def test_a_lurking_flag_takes_only_the_yellow_card_the_rule_fixes(db):
    # m135.txt:310 5. 潜水（以下行为均固定判罚一张“黄牌”）
    base = [str(GAME), "--db", str(db)]
    for colour in ("蓝牌", "红牌"):
        out = run("flags", "confirm", *base, "d2-qianshui-粽子", "--card", colour, code=1)
        assert f"m135.txt:311），潜水（发言不足）判黄牌，不能给{colour}" in out
        assert "bansha card give" in out
    assert json.loads(run("cards", *base, "--json"))["players"] == {}
    run("flags", "confirm", *base, "d2-qianshui-粽子", "--card", "黄牌")
    assert json.loads(run("cards", *base, "--json"))["players"]["粽子"]["yellow"] == 1


def test_a_lurking_card_takes_effect_at_the_close_not_at_the_last_post(db):
    # docs/rulings.md 潜水：只有当天关门时仍在场的玩家才会因潜水或未投票被判 — so the card
    # cannot put the player out (a third yellow, a red) before the day's close
    import sqlite3

    from pipeline.game.gamefile import load_game

    run("flags", "confirm", str(GAME), "--db", str(db), "d2-qianshui-粽子")
    with sqlite3.connect(db) as conn:
        [(at,)] = conn.execute("SELECT at FROM card_events WHERE source = 'd2-qianshui-粽子'")
    assert at == load_game(GAME).day(2).closes.isoformat()


def test_flag_confirm_unknown_id_is_a_clear_error(db):
    out = run("flags", "confirm", str(GAME), "--db", str(db), "d9-nothing-x", code=1)
    assert "没有编号为 d9-nothing-x 的违规标记" in out


def test_three_blue_cards_make_a_yellow(db):
    base = [str(GAME), "--db", str(db)]
    for i in range(3):
        run(
            "card",
            "give",
            *base,
            "--player",
            "月饼",
            "--colour",
            "蓝",
            "--why",
            f"第{i}次",
            "--at",
            f"2026-12-02T1{i}:00:00+08:00",
        )
    data = json.loads(run("cards", *base, "--json"))
    assert data["players"]["月饼"]["blue"] == 0 and data["players"]["月饼"]["yellow"] == 1
    assert any("月饼" in line for line in data["escalations"])


def test_a_red_card_puts_the_player_out(db):
    base = [str(GAME), "--db", str(db)]
    run(
        "card",
        "give",
        *base,
        "--player",
        "油条",
        "--colour",
        "红",
        "--why",
        "场外",
        "--at",
        "2026-12-02T12:00:00+08:00",
    )
    data = json.loads(run("tally", *base, "--day", "2", "--json", *AS_OF))
    youtiao = [v for v in data["votes"] if v["voter"] == "油条"]
    assert youtiao and all(v["status"] != "counted" for v in youtiao)


def test_proxy_vote_counts_like_a_vote(db):
    base = [str(GAME), "--db", str(db)]
    run(
        "vote",
        "proxy",
        *base,
        "--day",
        "2",
        "--voter",
        "麻花",
        "--target",
        "春卷",
        "--at",
        "2026-12-02T19:00:00+08:00",
    )
    data = json.loads(run("tally", *base, "--day", "2", "--json", *AS_OF))
    proxies = [v for v in data["votes"] if v["ballot"]["kind"] == "proxy"]
    assert proxies and proxies[0]["status"] == "counted" and proxies[0]["counts_for"] == "春卷"
    # and a proxy in the last hour is refused like a change
    run(
        "vote",
        "proxy",
        *base,
        "--day",
        "2",
        "--voter",
        "面条",
        "--target",
        "春卷",
        "--at",
        "2026-12-02T21:30:00+08:00",
    )
    data = json.loads(run("tally", *base, "--day", "2", "--json", *AS_OF))
    late = [v for v in data["votes"] if v["ballot"]["kind"] == "proxy" and v["voter"] == "面条"]
    assert late and late[0]["status"] == "invalid" and "关门前1小时" in late[0]["reason"]


def test_bad_game_file_is_one_chinese_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(
        GAME.read_text(encoding="utf-8").replace('ruleset = "m135"', 'ruleset = "m999"'),
        encoding="utf-8",
    )
    out = run("tally", str(bad), "--day", "2", code=1)
    assert "game.ruleset" in out and "bad.toml" in out
    out = run("tally", str(tmp_path / "missing.toml"), "--day", "2", code=1)
    assert "找不到游戏文件" in out


def test_unknown_player_and_day(db):
    base = [str(GAME), "--db", str(db)]
    assert "名单中没有玩家「路人」" in run("why", *base, "--day", "2", "--player", "路人", code=1)
    assert "没有第 9 天" in run("tally", *base, "--day", "9", code=1)


def test_a_look_at_the_past_does_not_overwrite_the_stored_verdicts(db):
    from pipeline.store import open_store

    def snapshot():
        store = open_store(db)
        rows = list(store.db.query("SELECT * FROM flags ORDER BY id"))
        store.close()
        return rows

    before = snapshot()
    run("tally", str(GAME), "--db", str(db), "--day", "1", "--as-of", "2026-12-01T23:00:00+08:00")
    assert snapshot() == before
    # and a flag listed at --as-of can still be confirmed at that moment
    out = run("flags", "confirm", str(GAME), "--db", str(db), "d2-qianshui-汤圆", *AS_OF)
    assert "汤圆 得到黄牌" in out


def test_below_seven_living_the_day_accelerates_by_itself(db):
    # m135.txt:195 存活人数低于7人后，将自动执行二段加速
    # m135.txt:198 执行二段加速时，所有人不可改票，且发言不足或未投票者将不被判罚
    for name in ("麻花", "粽子", "月饼", "油条", "烧卖", "面条"):
        run("player", "out", str(GAME), "--db", str(db), "--player", name,
            "--at", "2026-12-02T09:00:00+08:00", "--cause", "测试：开门前出局")  # fmt: skip
    data = json.loads(run("tally", str(GAME), "--db", str(db), "--day", "2", "--json", *AS_OF))
    assert data["accelerated"] is True
    assert (
        "存活6人" in data["speed"]["reason"] and "低于7人，自动执行加速" in data["speed"]["reason"]
    )
    changes = [v for v in data["votes"] if v["ballot"]["kind"] == "change"]
    assert changes and all(v["status"] != "counted" for v in changes)
    assert not [f for f in data["flags"] if "qianshui" in f["id"] or "novote" in f["id"]]


def test_a_late_speed_request_is_shown_with_its_reason_and_post(db):
    """油条 asked for 加速 at 18:20, after m135's 18:00 (m135.txt:197): not counted, and the
    director sees why and where, in tally, why and --json."""
    out = run("tally", str(GAME), "--db", str(db), "--day", "2", *AS_OF)
    (line,) = [x for x in out.splitlines() if x.startswith("  不计：油条")]
    assert line.startswith(
        "  不计：油条 12-02 18:20 申请加速：晚于申请截止时间12-02 18:00，不计入  http"
    )
    assert "goto=findpost" in line
    out = run("why", str(GAME), "--db", str(db), "--day", "2", "--player", "油条", *AS_OF)
    assert "  加速/延时：存活" in out
    assert "    不计：12-02 18:20 申请加速：晚于申请截止时间12-02 18:00，不计入  http" in out
    out = run("why", str(GAME), "--db", str(db), "--day", "2", "--player", "包子", *AS_OF)
    assert "    申请加速：计入  http" in out and "不计：" not in out
    data = json.loads(run("tally", str(GAME), "--db", str(db), "--day", "2", "--json", *AS_OF))
    (ignored,) = data["speed"]["ignored"]
    assert ignored["player"] == "油条" and "goto=findpost" in ignored["evidence"]
    # the engine's decision carries the request's post itself: its pid, the link made of it
    assert ignored["pid"] == 133 and ignored["evidence"].endswith("&pid=133")
    assert line.endswith("&pid=133")


def test_posts_after_going_out_mid_day_are_no_speech(db):
    """面条 goes out at 16:00 on day 2 and posts three more times in the discussion thread.
    m135.txt:55 「角色出局后，不能继续发言、投票、发动技能」: those posts are 诈尸
    (m135.txt:317), not 发言 — they are not counted for 潜水 (m135.txt:311), and a player out
    before the close is not judged for 潜水 that day (docs/rulings.md): why, tally and the
    flags say the same."""
    run("player", "out", str(GAME), "--db", str(db), "--player", "面条",
        "--at", "2026-12-02T16:00:00+08:00", "--cause", "第2天中午被决斗")  # fmt: skip
    out = run("why", str(GAME), "--db", str(db), "--day", "2", "--player", "面条", *AS_OF)
    assert "  讨论帖发言：2 帖\n" in out, out  # 11:37 and 13:49; not 16:01, 18:13, 20:25
    assert "    当天不判发言不足：白天中途出局（12-02 16:00，第2天中午被决斗）" in out, out
    late = [x for x in out.splitlines() if "出局后发帖" in x]
    assert len(late) == 3 and all(x.endswith("12月2日16:00出局），不计入发言）") for x in late)
    assert "诈尸" in out  # the same three posts, flagged
    data = json.loads(run("tally", str(GAME), "--db", str(db), "--day", "2", "--json", *AS_OF))
    mine = data["post_counts"]["面条"]
    assert mine["count"] == 2 and len(mine["pids"]) == 2
    assert sum("出局后发帖" in e["reason"] for e in mine["excluded"]) == 3
    ids = {f["id"] for f in data["flags"]}
    assert "d2-zhashi-面条" in ids and "d2-qianshui-面条" not in ids
