"""The day and night pages: the live tally with every vote's
verdict, reason, rule and link; flags confirmed or dismissed as ``bansha flags`` does; ``why``
with a BBCode answer for a disputing player; night actions checked as ``bansha night add``
checks them, a resolution preview that stores nothing, and resolving as its own action."""

from __future__ import annotations

import base64
import html
import json
import re
from urllib.parse import quote

from engine.rulesets.rulebooks import cite
from pipeline.derive import derive
from tests.pipeline.console.support import MORNING, bansha, make_app

GID = "m135-demo"


def _session(tab) -> dict:
    """What the signed (not encrypted) session cookie holds: anyone holding it can read it."""
    raw = tab.client.cookies.get("bansha_console") or ""
    payload = raw.split(".")[0]
    return json.loads(base64.b64decode(payload + "=" * (-len(payload) % 4)))


def test_the_day_page_shows_every_vote_with_verdict_reason_rule_and_link(morning, tab_for):
    tab = tab_for(make_app(morning))
    page = tab.get(f"/g/{GID}/day/2")
    assert page.status_code == 200
    text = html.unescape(page.text)
    store = morning.store()
    try:
        d = derive(morning.spec().game, store, as_of=MORNING)
    finally:
        store.close()
    res = d.day(2)
    rows = re.findall(r'<li class="vote status-(\w+)" data-pid="(\d+)">(.*?)</li>', page.text, re.S)
    assert [int(pid) for _s, pid, _b in rows] == [v.ballot.evidence.pid for v in res.verdicts]
    for (status, _pid, body), v in zip(rows, res.verdicts, strict=True):
        body = html.unescape(body)
        assert status == v.status.value
        assert v.reason in body and f"依据{cite(v.rule)}" in body
        assert f'title="{v.rule}"' in body  # the maintainer's file:line
        assert f'href="{v.ballot.evidence.url}"' in body
    # m135.txt:202 "投票格式或投票对象有误的票无效"
    assert "投票对象有误：「路人甲」不在名单中" in text
    # the result and the rule that decided it, and the director's own note (console only)
    assert f"出局：{res.tally.out}" in text and f"依据{cite(res.tally.rule)}" in text
    assert "导演备注：取代它的是第13楼" in text
    # post counts for every player, with a why link
    for p in morning.spec().game.players:
        assert f"/g/{GID}/day/2/why?player={quote(p.name, safe='')}" in page.text


def test_confirming_and_dismissing_flags(morning, tab_for):
    app = make_app(morning)
    tab, stale = tab_for(app), tab_for(app)
    page = tab.get(f"/g/{GID}/day/2")
    stale.get(f"/g/{GID}/day/2")
    flag = "d2-qianshui-汤圆"  # m135.txt:311 潜水: 黄牌
    assert f'id="flag-{flag}"' in page.text
    # m135.txt:310 潜水（以下行为均固定判罚一张“黄牌”）: the console refuses a red as the CLI does
    r = tab.post(
        f"/g/{GID}/flags/confirm", {"flag_id": flag, "day": "2", "card": "红牌", "sure": "1"}
    )
    assert "潜水（发言不足）判黄牌，不能给红牌" in html.unescape(tab.follow(r).text)
    r = tab.post(
        f"/g/{GID}/flags/confirm", {"flag_id": flag, "day": "2", "card": "黄牌", "sure": "1"}
    )
    shown = html.unescape(tab.follow(r).text)
    assert f"已确认 {flag}：汤圆 得到黄牌" in shown
    item = re.search(rf'<li class="flag status-(\w+)" id="flag-{flag}"', shown)
    assert item and item.group(1) == "confirmed"
    # the other tab still shows it open: a second decision is refused, nothing doubled
    r = stale.post(
        f"/g/{GID}/flags/confirm", {"flag_id": flag, "day": "2", "card": "黄牌", "sure": "1"}
    )
    assert f"标记 {flag} 已经处理过" in html.unescape(stale.follow(r).text)
    r = stale.post(f"/g/{GID}/flags/dismiss", {"flag_id": flag, "day": "2", "why": "算了"})
    assert f"标记 {flag} 已经处理过" in html.unescape(stale.follow(r).text)
    store = morning.store()
    try:
        decisions = list(store.db.query("SELECT * FROM flag_decisions"))
        cards = list(store.db.query("SELECT * FROM card_events"))
    finally:
        store.close()
    assert [(r["flag_id"], r["status"], r["card"]) for r in decisions] == [
        (flag, "confirmed", "黄牌")
    ]
    assert [(c["player"], c["colour"], c["source"]) for c in cards] == [("汤圆", "黄牌", flag)]
    # a dismissal needs a reason
    other = "d2-edited-vote-Snow_风-p90"
    r = tab.post(f"/g/{GID}/flags/dismiss", {"flag_id": other, "day": "2", "why": " "})
    assert "驳回违规标记必须写明理由" in html.unescape(tab.follow(r).text)
    r = tab.post(f"/g/{GID}/flags/dismiss", {"flag_id": other, "day": "2", "why": "只改了理由"})
    assert f"已驳回 {other}：只改了理由" in html.unescape(tab.follow(r).text)
    # the CLI sees the same decisions
    out = bansha(
        morning.env, "flags", str(morning.game), "--day", "2", "--as-of", MORNING.isoformat()
    )
    assert f"[{flag}] 第2天 汤圆" in out and "（已确认" in out.split(f"[{flag}]")[1].split("\n")[0]
    assert "（已驳回" in out.split(f"[{other}]")[1].split("\n")[0]
    r = tab.post(f"/g/{GID}/flags/confirm", {"flag_id": "d9-nothing", "day": "2", "sure": "1"})
    assert "没有编号为 d9-nothing 的违规标记" in html.unescape(tab.follow(r).text)


def test_why_gives_a_bbcode_answer_without_director_only_notes(morning, tab_for):
    tab = tab_for(make_app(morning))
    page = tab.get(f"/g/{GID}/day/2/why?player={quote('汤圆')}")
    assert page.status_code == 200
    text = html.unescape(page.text)
    answer = html.unescape(
        re.search(r'<textarea id="answer"[^>]*>(.*?)</textarea>', page.text, re.S).group(1)
    )
    # the page: both of the player's votes, the change that replaced the first, the note
    assert "已被改票取代" in text and "有效改票：由包子改为春卷" in text
    assert "导演备注（不会出现在回复里）：取代它的是第13楼" in text
    assert "讨论帖发言：2 帖" in text
    # the answer: the verdicts with reason and rule and a link to each vote; no note
    assert answer.startswith("[b]汤圆 第2天的判定[/b]")
    assert "有效改票：由包子改为春卷" in answer
    assert "依据《[M135]『让子弹飞』》游戏流程·投票规则" in answer
    assert "[url=http://127.0.0.1:" in answer and "pid=113]13#[/url]" in answer
    assert "讨论帖发言：2 帖" in answer
    assert "取代它的是" not in answer and "导演备注" not in answer
    # an open flag is not told to the player before the director decides
    assert "潜水" not in answer
    assert tab.get(f"/g/{GID}/day/2/why?player=nobody").status_code == 404


def test_night_actions_checked_previewed_and_resolved(morning, tab_for):
    game = str(morning.game)
    bansha(morning.env, "night", "resolve", game, "--night", "0")
    bansha(morning.env, "day", "resolve", game, "--day", "1", "--as-of", MORNING.isoformat())
    tab = tab_for(make_app(morning))
    page = tab.get(f"/g/{GID}/night/1")
    assert page.status_code == 200 and "这一晚还没有记录行动" in page.text
    # the same checks as `bansha night add`: a name not on the roster, an unknown skill
    r = tab.post(f"/g/{GID}/night/1/add", {"actor": "路人甲", "skill": "预言", "target": "饺子"})
    assert r.status_code == 400 and "玩家「路人甲」不在名单中" in html.unescape(r.text)
    r = tab.post(f"/g/{GID}/night/1/add", {"actor": "包子", "skill": "飞天", "target": "饺子"})
    assert r.status_code == 400 and "飞天" in html.unescape(r.text)
    assert "飞天" not in json.dumps(_session(tab), ensure_ascii=False)  # not in the cookie
    locations = []
    for actor, skill, target in (
        ("汤圆", "杀人", "烧卖"),
        ("馄饨", "毒药", "饺子"),
        ("包子", "预言", "饺子"),
    ):
        r = tab.post(f"/g/{GID}/night/1/add", {"actor": actor, "skill": skill, "target": target})
        assert r.status_code == 303, r.text
        locations.append(r.headers["location"])
    # director-only data never in a URL or the session cookie
    cookie = json.dumps(_session(tab), ensure_ascii=False)
    for secret in ("杀人", "毒药", "预言", "烧卖"):
        assert all(secret not in loc for loc in locations)
        assert secret not in cookie
    page = tab.get(f"/g/{GID}/night/1")
    text = html.unescape(page.text)
    for line in ("汤圆[杀人]→烧卖", "馄饨[毒药]→饺子", "包子[预言]→饺子"):
        assert line in text
    # the preview resolves (m135.txt:184 杀人, m135.txt:93 毒药) but stores nothing
    assert "烧卖的第一身份（守卫）：杀人" in text and "饺子的第一身份（狼人）：女巫[毒药]" in text
    assert "→ 包子：预言：饺子的表面阵营为狼人阵营。" in text
    store = morning.store()
    try:
        assert not list(store.db.query("SELECT 1 FROM engine_snapshots WHERE phase = 'night:1'"))
    finally:
        store.close()
    # resolving is its own action
    r = tab.post(f"/g/{GID}/night/1/resolve")
    assert "已结算第1晚并保存" in html.unescape(tab.follow(r).text)
    store = morning.store()
    try:
        (snap,) = list(store.db.query("SELECT * FROM engine_snapshots WHERE phase = 'night:1'"))
    finally:
        store.close()
    deaths = [(x["player"], x["card"]) for x in json.loads(snap["report_json"])["deaths"]]
    assert deaths == [("烧卖", "守卫"), ("饺子", "狼人")]
    out = bansha(morning.env, "state", game, "--verify")
    assert "全部一致" in out
    # removing an action is recorded, and the page says to resolve again
    action_id = re.search(r"#(\d+) 包子\[预言\]", text).group(1)
    r = tab.post(f"/g/{GID}/night/1/remove", {"action_id": action_id})
    assert "请重新结算" in html.unescape(tab.follow(r).text)


def test_a_night_before_the_previous_phase_is_resolved_says_so(morning, tab_for):
    tab = tab_for(make_app(morning))
    page = tab.get(f"/g/{GID}/night/1")
    assert "还没有结算第1天，请先结算它" in html.unescape(page.text)
    assert 'id="resolve"' not in page.text


def test_an_edited_game_file_is_what_the_next_page_judges_by(morning, tab_for):
    # docs/rulings.md 加速与延时：加速后提前关门请导演修改游戏文件中的 closes — the console
    # then judges by the new close at once, as the command line does; a broken edit is said
    tab = tab_for(make_app(morning))
    assert "12-02 22:00" in html.unescape(tab.get(f"/g/{GID}/day/2").text)
    text = morning.game.read_text(encoding="utf-8")
    edited = text.replace(
        "closes = 2026-12-02T22:00:00+08:00", "closes = 2026-12-02T21:00:00+08:00"
    )
    assert edited != text
    morning.game.write_text(edited, encoding="utf-8")
    assert "12-02 21:00" in html.unescape(tab.get(f"/g/{GID}/day/2").text)
    morning.game.write_text(edited.replace("[game]", "[game]\nnonsense = 1"), encoding="utf-8")
    page = tab.get(f"/g/{GID}/day/2")
    assert page.status_code == 503 and "nonsense" in html.unescape(page.text)
