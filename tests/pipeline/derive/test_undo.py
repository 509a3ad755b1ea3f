"""Taking back what the director recorded (the demo game, m135): a confirmed flag, a card, a
proxy vote, a modifier, an out, a substitute, a sheriff or speed ruling, a night action — each
with its audit line (time, who, why), effective in the next tally, ledger, draft and
``state --verify``; refused in Chinese where it cannot be done."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
AS_OF = ["--as-of", "2026-12-03T09:00:00+08:00"]


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.output


def base(db: Path) -> list[str]:
    return [str(GAME), "--db", str(db)]


def _drafts(db: Path, kind: str, day: int) -> list[dict]:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return [
            dict(r)
            for r in con.execute(
                "SELECT * FROM drafts WHERE kind = ? AND day = ? ORDER BY id", [kind, day]
            )
        ]
    finally:
        con.close()


def _blue(db: Path, n: int) -> None:
    run(
        "card", "give", *base(db), "--player", "月饼", "--colour", "蓝", "--why", f"第{n}次",
        "--at", f"2026-12-02T1{n}:00:00+08:00",
    )  # fmt: skip


def _vote_of(db: Path, voter: str) -> dict:
    data = json.loads(run("tally", *base(db), "--day", "2", "--json", *AS_OF))
    counted = [v for v in data["votes"] if v["voter"] == voter and v["status"] == "counted"]
    assert len(counted) == 1, counted
    return counted[0]


def test_a_yellow_from_three_blues_is_gone_after_one_blue_is_revoked_and_redrafted(db):
    # m135.txt:238 「累计三张“蓝牌”合并为一张“黄牌”。」
    _blue(db, 1)
    _blue(db, 2)
    # a notice-only flag (m135.txt:316 导演专用字体: the rule names no card): the card is chosen
    out = run("flags", "confirm", *base(db), "d2-font-月饼", *AS_OF, code=1)
    assert "这条标记没有规定的牌，请用 --card 指定" in out
    run("flags", "confirm", *base(db), "d2-font-月饼", "--card", "蓝", *AS_OF)
    assert json.loads(run("cards", *base(db), "--json"))["players"]["月饼"]["yellow"] == 1
    run("drafts", "make", *base(db), *AS_OF)
    (first,) = _drafts(db, "cards", 2)
    assert "月饼累计3张蓝牌，折合1张黄牌" in first["body"]

    out = run("flags", "revoke", *base(db), "d2-font-月饼", "--why", "字体是引用别人的帖子")
    assert "已撤销标记 d2-font-月饼 的确认（蓝牌" in out and "理由：字体是引用别人的帖子" in out
    assert "台账已重算：「月饼累计3张蓝牌，折合1张黄牌」不再成立" in out
    assert "标记回到待确认" in out
    data = json.loads(run("cards", *base(db), "--json"))
    assert (data["players"]["月饼"]["blue"], data["players"]["月饼"]["yellow"]) == (2, 0)
    assert data["escalations"] == []
    (revoked,) = [r for r in data["records"] if r["revoked"]]
    assert (
        revoked["source"] == "d2-font-月饼"
        and "由命令行撤销（理由：字体是引用别人的帖子）" in (revoked["revoked"])
    )
    text = run("cards", *base(db))
    assert "[已撤销：" in text and "由命令行撤销（理由：字体是引用别人的帖子）" in text

    # the next drafting: a new cards draft without the card, the old one superseded
    run("drafts", "make", *base(db), *AS_OF)
    old, new = _drafts(db, "cards", 2)
    assert old["id"] == first["id"] and old["state"] == "superseded"
    assert new["state"] == "pending" and new["previous_id"] == old["id"]
    assert "折合1张黄牌" not in new["body"] and "红色字体" not in new["body"]
    assert "月饼：蓝牌 2，黄牌 0" in new["body"]
    # the flag is open again: it can be decided anew
    flags = json.loads(run("flags", *base(db), "--day", "2", "--json", *AS_OF))
    assert next(f for f in flags if f["id"] == "d2-font-月饼")["status"] == "open"
    run("flags", "dismiss", *base(db), "d2-font-月饼", "--why", "引用")


def test_a_day_whose_every_card_is_revoked_sets_its_waiting_cards_draft_aside(db):
    _blue(db, 1)
    run("drafts", "make", *base(db), *AS_OF)
    (draft,) = _drafts(db, "cards", 2)
    assert "月饼：蓝牌（第1次）" in draft["body"]
    cards = json.loads(run("cards", *base(db), "--json"))["records"]
    out = run("card", "revoke", *base(db), str(cards[0]["id"]), "--why", "给错了人")
    assert f"已撤销牌 #{cards[0]['id']}：月饼 蓝牌（第1次" in out
    out = run("drafts", "make", *base(db), *AS_OF)
    (after,) = _drafts(db, "cards", 2)
    assert after["state"] == "superseded"  # nothing left to announce: it never goes out
    con = sqlite3.connect(db)
    notes = [
        r[0] for r in con.execute("SELECT note FROM draft_events WHERE draft_id = ?", [after["id"]])
    ]
    con.close()
    assert "这一天的牌已全部撤销，此公示草稿作废" in notes


def test_revoking_a_card_an_announcement_already_printed_says_the_forum_keeps_it(db):
    _blue(db, 1)
    run("drafts", "make", *base(db), *AS_OF)
    (draft,) = _drafts(db, "cards", 2)
    con = sqlite3.connect(db)  # as a cycle leaves it once the forum took the reply
    con.execute(
        "UPDATE drafts SET state = 'posted', posted_pid = 999, posted_at = ? WHERE id = ?",
        ["2026-12-03T09:05:00+08:00", draft["id"]],
    )
    con.commit()
    con.close()
    out = run("card", "revoke", *base(db), "1", "--why", "记错")
    assert (
        f"注意：第2天的判罚公示（第 {draft['id']} 号草稿，pid 999）已经发出，印有月饼的蓝牌" in out
    )
    assert "论坛上的帖子不会自动更正" in out
    run("drafts", "make", *base(db), *AS_OF)
    posted, fix = _drafts(db, "cards", 2)
    assert posted["state"] == "posted" and posted["body"] == draft["body"]  # never changed
    assert fix["state"] == "pending" and "月饼的蓝牌撤销（原判罚理由：第1次）" in fix["body"]


def _post(db: Path, draft_id: int) -> None:
    con = sqlite3.connect(db)  # as a cycle leaves it once the forum took the reply
    con.execute(
        "UPDATE drafts SET state = 'posted', posted_pid = 999, posted_at = ? WHERE id = ?",
        ["2026-12-03T09:05:00+08:00", draft_id],
    )
    con.commit()
    con.close()


def test_the_correction_after_a_posted_card_is_revoked_says_which_card_is_withdrawn(db):
    # the players read the posted 公示: the correction must tell them which card no longer
    # stands, what still does, and where each player stands now
    # (m135.txt:238 「累计三张“蓝牌”合并为一张“黄牌”。」: the standing is the ledger's)
    run(
        "card", "give", *base(db), "--player", "月饼", "--colour", "黄", "--why", "贴脸",
        "--at", "2026-12-02T11:00:00+08:00",
    )  # fmt: skip
    _blue(db, 2)
    run("drafts", "make", *base(db), *AS_OF)
    (posted,) = _drafts(db, "cards", 2)
    _post(db, posted["id"])
    yellow = next(
        r for r in json.loads(run("cards", *base(db), "--json"))["records"] if r["colour"] == "黄牌"
    )
    out = run("card", "revoke", *base(db), str(yellow["id"]), "--why", "给错了人")
    assert "下一次起草生成这一天的更正判罚公示（写明哪张牌撤销" in out
    run("drafts", "make", *base(db), *AS_OF)
    _old, fix = _drafts(db, "cards", 2)
    assert fix["state"] == "pending"
    body = fix["body"]
    assert body.startswith("[b]【第2天 判罚（更正）】[/b]\n月饼的黄牌撤销（原判罚理由：贴脸）\n"), (
        body
    )
    assert "仍然有效的判罚" in body and "月饼：蓝牌（第2次）" in body
    assert "月饼：蓝牌 1，黄牌 0，红牌 0" in body
    # nothing changed since: the same correction, no new draft
    run("drafts", "make", *base(db), *AS_OF)
    assert len(_drafts(db, "cards", 2)) == 2
    # the day's last card revoked too: still a correction to post, not a silent nothing
    blue = next(
        r for r in json.loads(run("cards", *base(db), "--json"))["records"] if not r["revoked"]
    )
    run("card", "revoke", *base(db), str(blue["id"]), "--why", "也错了")
    run("drafts", "make", *base(db), *AS_OF)
    last = _drafts(db, "cards", 2)[-1]
    assert last["state"] == "pending" and "月饼的蓝牌撤销（原判罚理由：第2次）" in last["body"]
    assert "月饼的黄牌撤销" in last["body"] and "仍然有效的判罚" not in last["body"]
    assert "月饼：蓝牌 0，黄牌 0，红牌 0" in last["body"]


def test_a_revoked_red_card_undoes_its_out(db):
    # m135.txt:244 「玩家受到红牌判罚时出局（称为“红牌罚下”）。」
    out = run(
        "card", "give", *base(db), "--player", "春卷", "--colour", "红", "--why", "场外",
        "--at", "2026-12-02T12:00:00+08:00",
    )  # fmt: skip
    assert "编号 1；撤销：bansha card revoke demo.toml 1 --why 理由" in out
    tally = run("tally", *base(db), "--day", "2", *AS_OF)
    assert "投票者已于2026-12-02 12:00出局，出局后不能投票" in tally
    out = run("undo", "card", *base(db), "1", "--why", "判错了")
    assert "台账已重算：春卷的红牌罚下出局（12-02 12:00）撤销" in out
    tally = run("tally", *base(db), "--day", "2", *AS_OF)
    assert "12-02 13:00:00 春卷 投票→汤圆  [有效]" in tally
    assert "春卷" not in json.loads(run("cards", *base(db), "--json"))["out_by_red"]


def test_a_removed_proxy_vote_gives_the_players_own_vote_back_and_why_says_so(db):
    # m135.txt:203 「投票帖可以申请由导演代发。」 a proxy is the player's vote (a change)
    assert _vote_of(db, "饺子")["ballot"]["target"] == "春卷"
    out = run(
        "vote", "proxy", *base(db), "--day", "2", "--voter", "饺子", "--target", "汤圆",
        "--at", "2026-12-02T19:00:00+08:00",
    )  # fmt: skip
    proxy_id = out.split("（编号 ")[1].split("；")[0]
    assert _vote_of(db, "饺子")["ballot"]["kind"] == "proxy"
    out = run("undo", "proxy", *base(db), proxy_id, "--why", "饺子没有申请代投")
    assert f"已撤销代投 #{proxy_id}：第2天 饺子 → 汤圆" in out
    mine = _vote_of(db, "饺子")
    assert mine["ballot"]["kind"] == "vote" and mine["ballot"]["target"] == "春卷"
    why = run("why", *base(db), "--day", "2", "--player", "饺子", *AS_OF)
    assert f"已撤销（不再参与计票）：代投 #{proxy_id}：第2天 饺子 → 汤圆" in why
    assert "由命令行撤销（理由：饺子没有申请代投）" in why
    data = json.loads(run("why", *base(db), "--day", "2", "--player", "饺子", "--json", *AS_OF))
    assert len(data["revoked"]) == 1 and "饺子没有申请代投" in data["revoked"][0]
    # once only, with a reason, a known id — each refusal says why
    out = run("undo", "proxy", *base(db), proxy_id, "--why", "再来", code=1)
    assert "已于" in out and "不能再撤销一次" in out
    out = run("undo", "proxy", *base(db), "99", "--why", "x", code=1)
    assert "没有编号为 99 的代投" in out
    out = run("undo", "proxy", *base(db), proxy_id, "--why", " ", code=1)
    assert "撤销必须写明理由" in out


def test_sheriff_speed_out_modifier_and_substitute_each_undo_with_an_audit_line(db):
    b = base(db)
    day2 = ["tally", *b, "--day", "2", *AS_OF]
    assert "警长：包子" in run(*day2)
    run("vote", "sheriff", *b, "--from-day", "2", "--player", "春卷")
    assert "警长：春卷" in run(*day2)
    out = run("undo", "sheriff", *b, "--from-day", "2", "--why", "警徽没有移交")
    assert "已撤销警长：第2天起警长为 春卷" in out
    assert "警长：包子" in run(*day2)

    run("vote", "speed", *b, "--day", "2", "--mode", "accelerate")
    assert "已加速" in run(*day2)
    run("undo", "speed", *b, "--day", "2", "--why", "申请人数不够")
    assert "未加速" in run(*day2)

    out = run(
        "player", "out", *b, "--player", "春卷", "--at", "2026-12-02T12:00:00+08:00",
        "--cause", "记错的出局",
    )  # fmt: skip
    out_id = out.split("（编号 ")[1].split("；")[0]
    assert "投票者已于2026-12-02 12:00出局" in run(*day2)
    run("undo", "out", *b, out_id, "--why", "春卷没有出局")
    assert "投票者已于2026-12-02 12:00出局" not in run(*day2)

    out = run("vote", "modifier", *b, "--day", "2", "--player", "春卷", "--kind", "no_vote")
    mod_id = out.split("（编号 ")[1].split("；")[0]
    assert "12-02 13:00:00 春卷 投票→汤圆  [有效]" not in run(*day2)
    run("undo", "modifier", *b, mod_id, "--why", "不是迷魂")
    assert "12-02 13:00:00 春卷 投票→汤圆  [有效]" in run(*day2)

    out = run(
        "player", "substitute", *b, "--player", "春卷", "--uid", "999", "--name", "替补甲",
        "--at", "2026-12-02T12:00:00+08:00",
    )  # fmt: skip
    sub_id = out.split("（编号 ")[1].split("；")[0]
    assert f"substitute {sub_id}　替补 #{sub_id}" in run("undo", "list", *b)
    run("undo", "substitute", *b, sub_id, "--why", "替补没有上场")
    assert f"substitute {sub_id}" not in run("undo", "list", *b)
    con = sqlite3.connect(db)
    row = con.execute(
        "SELECT revoked_by, revoke_reason FROM journal_substitutions WHERE id = ?", [sub_id]
    ).fetchone()
    con.close()
    assert row == ("命令行", "替补没有上场")  # kept as evidence, no input any more

    audit = run("undo", "list", *b, "--all")
    for line in (
        "命令行撤销 第2天起警长为 春卷",
        "（理由：警徽没有移交）",
        "命令行撤销 第2天 加速",
        f"命令行撤销 出局记录 #{out_id}：春卷",
        f"命令行撤销 票权修正 #{mod_id}：第2天 春卷 不能投票",
        f"命令行撤销 替补 #{sub_id}：",
    ):
        assert line in audit, line
    assert "没有记录第2天起的警长" in run(
        "undo", "sheriff", *b, "--from-day", "2", "--why", "x", code=1
    )


def test_a_night_action_removed_after_resolving_names_the_command_and_verify_holds_it(db):
    b = base(db)
    out = run("night", "remove", *b, "3", "--why", "包子查验的是汤圆")
    assert out.startswith("已撤销 #3：包子[预言]→饺子（第1晚的行动；理由：包子查验的是汤圆）")
    assert "第1晚已经结算进引擎状态" in out and "bansha night resolve demo.toml --night 1" in out
    # the stored state is what night 1 was resolved with, but its records moved on
    out = run("state", *b, "--verify", code=1)
    assert "记录已变：行动 #3 在结算后撤销" in out
    assert "请从第1晚起按顺序重新结算（bansha night resolve demo.toml --night 1）" in out
    run("night", "resolve", *b, "--night", "1")
    assert "全部一致" in run("state", *b, "--verify")
    assert "命令行撤销 行动 #3：第1晚 包子[预言]→饺子（理由：包子查验的是汤圆）" in run(
        "undo", *b, "--all"
    )


def test_a_red_card_revoked_after_its_night_was_resolved_names_the_night_to_resolve_again(db):
    # m135.txt:56 「红牌罚下出局的角色不能发动任何技能。」 the card reached the engine as 红牌罚下
    b = base(db)
    run(
        "card", "give", *b, "--player", "月饼", "--colour", "红", "--why", "场外",
        "--at", "2026-12-02T02:00:00+08:00",
    )  # fmt: skip
    run("night", "resolve", *b, "--night", "1")
    assert "全部一致" in run("state", *b, "--verify")
    out = run("card", "revoke", *b, "1", "--why", "判错了人")
    assert "台账已重算：月饼的红牌罚下出局（12-02 02:00）撤销" in out
    assert "注意：第1晚已经结算进引擎状态" in out
    assert "请重新结算：bansha night resolve demo.toml --night 1" in out
    out = run("state", *b, "--verify", code=1)
    assert "记录已变：月饼的红牌罚下（2026-12-02T02:00:00+08:00）在结算后撤销" in out
    run("night", "resolve", *b, "--night", "1")
    assert "全部一致" in run("state", *b, "--verify")


def test_a_decided_flag_says_how_to_take_the_decision_back(db):
    b = base(db)
    run("flags", "confirm", *b, "d2-qianshui-粽子")
    out = run("flags", "confirm", *b, "d2-qianshui-粽子", code=1)
    assert "已经处理过；要改变决定，先撤销：bansha flags revoke demo.toml d2-qianshui-粽子" in out
    run("undo", "flag", *b, "d2-qianshui-粽子", "--why", "粽子请过假")
    run("flags", "dismiss", *b, "d2-qianshui-粽子", "--why", "请假")
    assert json.loads(run("cards", *b, "--json"))["players"] == {}
    out = run("flags", "revoke", *b, "d2-qianshui-汤圆", "--why", "x", code=1)
    assert "标记 d2-qianshui-汤圆 还没有确认或驳回，没有可撤销的决定" in out
