"""The console's flags and cards: a notice-only flag comes with no card chosen, giving a card
asks once more, and a decided flag or a given card can be taken back (recorded as 控制台, with
the reason) — the same records ``bansha flags revoke`` / ``bansha card revoke`` write."""

from __future__ import annotations

import html
import re

from tests.pipeline.console.support import bansha, make_app

GID = "m135-demo"
NOTICE = "d2-edited-vote-Snow_风-p90"  # docs/rulings.md#edited-vote: a notice, no card
SLACKER = "d2-qianshui-汤圆"  # m135.txt:310 「潜水（以下行为均固定判罚一张“黄牌”）」


def _form(page: str, flag: str) -> str:
    item = re.search(rf'<li class="flag[^"]*" id="flag-{re.escape(flag)}".*?</li>', page, re.S)
    assert item, flag
    return item.group(0)


def _cards(morning) -> list[dict]:
    store = morning.store()
    try:
        return [dict(r) for r in store.db.query("SELECT * FROM card_events ORDER BY id")]
    finally:
        store.close()


def test_a_notice_only_flag_has_no_card_chosen_and_confirming_asks_once_more(morning, tab_for):
    tab = tab_for(make_app(morning))
    page = tab.get(f"/g/{GID}/day/2").text
    notice = _form(page, NOTICE)
    options = re.findall(r"<option([^>]*)>([^<]*)</option>", notice)
    chosen = [text for attrs, text in options if "selected" in attrs]
    assert chosen == ["请选择给哪一种牌（规则没有规定）"]  # the placeholder, no colour
    assert re.search(r'<option value="" selected disabled>', notice)
    assert re.search(r'<select name="card"[^>]*required', notice)
    assert re.search(r'<input type="checkbox" name="sure" value="1" required>', notice)
    # the rule's own card (潜水: 黄牌) is offered, still to be ticked
    slacker = _form(page, SLACKER)
    assert [
        t for a, t in re.findall(r"<option([^>]*)>([^<]*)</option>", slacker) if "selected" in a
    ] == ["黄牌"]

    # not ticked: refused, nothing recorded
    r = tab.post(f"/g/{GID}/flags/confirm", {"flag_id": SLACKER, "day": "2", "card": "黄牌"})
    assert "请勾选「确认给牌」后再提交" in html.unescape(tab.follow(r).text)
    # ticked but no card chosen for a notice-only flag: refused as the CLI refuses it
    r = tab.post(f"/g/{GID}/flags/confirm", {"flag_id": NOTICE, "day": "2", "sure": "1"})
    assert "这条标记没有规定的牌，请选择给哪一种牌" in html.unescape(tab.follow(r).text)
    assert _cards(morning) == []
    r = tab.post(
        f"/g/{GID}/flags/confirm", {"flag_id": NOTICE, "day": "2", "card": "蓝牌", "sure": "1"}
    )
    assert f"已确认 {NOTICE}：Snow_风 得到蓝牌" in html.unescape(tab.follow(r).text)
    assert [(c["player"], c["colour"]) for c in _cards(morning)] == [("Snow_风", "蓝牌")]


def test_a_confirmed_flag_is_taken_back_from_its_day_page(morning, tab_for):
    tab = tab_for(make_app(morning))
    tab.get(f"/g/{GID}/day/2")
    r = tab.post(
        f"/g/{GID}/flags/confirm", {"flag_id": SLACKER, "day": "2", "card": "黄牌", "sure": "1"}
    )
    page = tab.follow(r).text
    item = _form(page, SLACKER)
    assert 'action="/g/m135-demo/flags/revoke"' in item and "撤销确认（连同给的牌）" in item
    r = tab.post(f"/g/{GID}/flags/revoke", {"flag_id": SLACKER, "day": "2", "why": " "})
    assert "撤销必须写明理由" in html.unescape(tab.follow(r).text)
    r = tab.post(f"/g/{GID}/flags/revoke", {"flag_id": SLACKER, "day": "2", "why": "汤圆请过假"})
    shown = html.unescape(tab.follow(r).text)
    assert f"已撤销标记 {SLACKER} 的确认（黄牌" in shown and "标记回到待确认" in shown
    assert re.search(rf'<li class="flag status-open" id="flag-{SLACKER}"', shown)
    (card,) = _cards(morning)
    assert (card["revoked_by"], card["revoke_reason"]) == ("控制台", "汤圆请过假")
    # the CLI sees the same: no card left, the audit line says who and why
    out = bansha(morning.env, "cards", str(morning.game))
    assert "由控制台撤销（理由：汤圆请过假）" in out
    assert "控制台撤销 标记 d2-qianshui-汤圆 的确认" in bansha(
        morning.env, "undo", "list", str(morning.game), "--all"
    )


def test_the_cards_page_revokes_a_card_and_shows_the_audit(morning, tab_for):
    bansha(
        morning.env, "card", "give", str(morning.game), "--player", "月饼", "--colour", "红",
        "--why", "场外交流", "--at", "2026-12-02T12:00:00+08:00",
    )  # fmt: skip
    tab = tab_for(make_app(morning))
    page = html.unescape(tab.get(f"/g/{GID}/cards").text)
    assert "红牌出局：月饼" in page and "月饼 红牌（场外交流" in page
    assert 'href="/g/m135-demo/cards" aria-current="page"' in page
    (card,) = _cards(morning)
    r = tab.post(f"/g/{GID}/cards/revoke", {"card_id": str(card["id"]), "why": "判错了人"})
    shown = html.unescape(tab.follow(r).text)
    assert f"已撤销牌 #{card['id']}：月饼 红牌" in shown
    assert "台账已重算：月饼的红牌罚下出局（12-02 12:00）撤销" in shown
    assert "红牌出局：月饼" not in shown.split('id="records"')[0]
    assert "由控制台撤销（理由：判错了人）" in shown  # the record, kept, with its audit line
    assert "控制台撤销 牌 #" in shown.split('id="audit"')[1]
    r = tab.post(f"/g/{GID}/cards/revoke", {"card_id": str(card["id"]), "why": "再撤一次"})
    assert "不能再撤销一次" in html.unescape(tab.follow(r).text)
    r = tab.post(f"/g/{GID}/cards/revoke", {"card_id": "9223372036854775808", "why": "x"})
    assert "没有指明要撤销哪一张牌" in html.unescape(tab.follow(r).text)
