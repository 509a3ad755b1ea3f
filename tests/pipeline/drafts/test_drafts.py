"""Drafts: golden BBCode for every kind, names that cannot inject markup, only-what-changed,
the approval state machine, splitting over Discuz's 10000-byte limit, and the CLI.

The world: a three-day game whose roster holds names a player could really register on a Discuz
forum (``[`` ``]`` ``=`` ``/`` ``:`` are allowed in usernames) and that are BBCode. Posts are
written straight into the store as the crawler would, then the real derivation runs.

Regenerate the goldens with ``BANSHA_REGEN_GOLDEN=1 pytest tests/pipeline/drafts/test_drafts.py``;
the committed files are the assertion.
"""

from __future__ import annotations

import dataclasses
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from selectolax.lexbor import LexborHTMLParser

import pipeline.cli.drafts  # noqa: F401  (registers `bansha drafts`)
from parsers.records import Post, ThreadPage
from pipeline.cli import cli
from pipeline.derive import card_events, derive
from pipeline.drafts import (
    MAX_POST_BYTES,
    DraftAction,
    DraftError,
    DraftKind,
    DraftSpec,
    DraftState,
    approve,
    bbcode_escape,
    body_bytes,
    cards_context,
    draft_events,
    due_drafts,
    edit,
    elevator_pids,
    get_draft,
    inquiry_answer_drafts,
    list_drafts,
    load_templates,
    make_drafts,
    mark_posted,
    reject,
    save_drafts,
    split_body,
)
from pipeline.game.gamefile import Game, load_game
from pipeline.sim import render as sim_render
from pipeline.store import Store, open_store

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
REGEN = os.environ.get("BANSHA_REGEN_GOLDEN") == "1"
CST = timezone(timedelta(hours=8))

RED = "[color=red]红[/color]"  # a name that is a colour tag
QUOTE = "[/quote]闹"  # closes the quote a draft might be in
LINK = "[url=http://evil.example/]点我"  # opens a link
SMILE = ":)笑&#9733;"  # a smiley code and an HTML entity Discuz would turn back into ★
NAMES = {101: "饺子", 102: RED, 103: QUOTE, 104: LINK, 105: SMILE, 106: "包子", 107: "月饼"}
INJECTED = (RED, QUOTE, LINK, SMILE)


def t(day: int, hh: int, mm: int = 0) -> datetime:
    return datetime(2026, 12, day, hh, mm, tzinfo=CST)


RUN = t(2, 15)  # day 2, votes coming in
REMIND = t(2, 21, 30)  # within the hour before day 2 closes
AFTER = t(3, 9)  # day 2 closed, day 3 not open yet
DAY3 = t(3, 11)  # day 3 open


def toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def game_toml(ruleset: str = "m135", *, extra_players: int = 0, drafts: str = "") -> str:
    players = "".join(
        f"\n[[players]]\nname = {toml_str(name)}\nuid = {uid}\n" for uid, name in NAMES.items()
    )
    players += "".join(
        f"\n[[players]]\nname = {toml_str('很长的名字' * 4 + str(i))}\nuid = {1000 + i}\n"
        for i in range(extra_players)
    )
    inquiry = "inquiry = 2014\n" if ruleset == "zhenyan" else ""
    # zhenyan's four secret words (zhenyan.txt:16); a zhenyan file without them does not load
    secrets = (
        '\n[zhenyan]\nwords = ["风扇", "小圆", "千羽", "摄梦"]\n' if ruleset == "zhenyan" else ""
    )
    return f"""
[game]
id = "drafts-test"
title = "[测试]草稿局"
ruleset = "{ruleset}"
timezone = "Asia/Shanghai"

[forum]
base_url = "http://127.0.0.1:8080/"
encoding = "utf-8"

[director]
names = ["导演"]
uids = [100]
{drafts}
{players}
{secrets}
[[days]]
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
vote = 2012
{inquiry}
[[days]]
day = 3
opens = 2026-12-03T10:00:00+08:00
closes = 2026-12-03T22:00:00+08:00
discussion = 2021
vote = 2022
"""


# (tid, pid, uid, time, text)
POSTS: list[tuple[int, int, int, datetime, str]] = [
    (2001, 201, 100, t(1, 10), "【第1天讨论帖】"),
    (2002, 401, 102, t(1, 11), "投票对象：饺子"),
    (2002, 402, 103, t(1, 12), "投票对象：饺子"),
    (2002, 403, 101, t(1, 13), "投票对象：包子"),
    (2002, 404, 106, t(1, 14), "投票对象：饺子"),
    (2011, 301, 100, t(2, 10), "【第2天讨论帖】"),
    (2011, 302, 100, t(2, 10, 1), "电梯占楼"),
    (2012, 501, 101, t(2, 12), f"投票对象：{RED}\n投票理由：红字"),
    (2012, 502, 103, t(2, 12, 10), "投票对象：饺子"),
    (2012, 503, 104, t(2, 12, 20), f"投票对象：{RED}"),
    (2012, 504, 105, t(2, 12, 30), "投票对象：[/quote]路人[url=http://evil.example/]x"),
    (2012, 505, 106, t(2, 13), "投票对象：弃权"),
    (2012, 506, 102, t(2, 16), "投票对象：饺子"),
    (2021, 601, 100, t(3, 10), "【第3天讨论帖】"),
    (2021, 602, 101, t(3, 10, 5), "抢二楼"),
]
OUTS = [(QUOTE, t(3, 2), "第2夜被刀")]
# (player, colour, reason, at, source)
CARDS = [
    (SMILE, "蓝牌", "发言中辱骂其他玩家", t(1, 15), "导演"),
    (SMILE, "蓝牌", "发言中剧透", t(1, 16), "导演"),
    (SMILE, "蓝牌", "第2天发言中使用[color=red]红字[/color]", t(2, 15, 30), "导演"),
    ("包子", "红牌", "恶意破坏游戏", t(2, 18), "导演"),
    ("月饼", "黄牌", "第2天未投票（讨论结束时未回复投票帖，潜水）", t(2, 22), "d2-no-vote-月饼"),
]


def post(tid: int, pid: int, floor: int, uid: int, at: datetime, text: str) -> Post:
    return Post(
        tid=tid,
        pid=pid,
        floor=floor,
        author="导演" if uid == 100 else NAMES[uid],
        uid=uid,
        posted_at=at,
        message_html=text,
        text=text,
    )


def fill(store: Store, as_of: datetime) -> None:
    """Everything the crawler and the director's journal would hold at ``as_of``."""
    by_tid: dict[int, list[Post]] = {}
    for tid, pid, uid, at, text in POSTS:
        if at <= as_of:
            posts = by_tid.setdefault(tid, [])
            posts.append(post(tid, pid, len(posts) + 1, uid, at, text))
    for tid, posts in by_tid.items():
        store.register_thread(tid, day=None, role=None)
        store.save_page(
            ThreadPage(tid=tid, page=1, total_pages=1, posts=tuple(posts)),
            source="html",
            url=f"http://127.0.0.1:8080/forum.php?mod=viewthread&tid={tid}",
            status=200,
            headers={},
            body=b"",
            fetched_at=as_of,
            ppp=10,
        )
    with store.atomic():
        for player, at, cause in OUTS:
            if at <= as_of:
                store.db.table("journal_outs").insert(
                    {"player": player, "at": at.isoformat(), "cause": cause, "recorded_at": at}
                )
        for player, colour, reason, at, source in CARDS:
            if at <= as_of:
                store.db.table("card_events").insert(
                    {
                        "player": player,
                        "colour": colour,
                        "reason": reason,
                        "at": at.isoformat(),
                        "source": source,
                        "recorded_at": at.isoformat(),
                    }
                )


class World:
    def __init__(self, root: Path, ruleset: str = "m135", **kw: object) -> None:
        self.game_path = root / f"{ruleset}.toml"
        self.game_path.write_text(game_toml(ruleset, **kw), encoding="utf-8")  # type: ignore[arg-type]
        self.game: Game = load_game(self.game_path, env={})
        self.db_path = root / f"{ruleset}.db"
        self.store = open_store(self.db_path)

    def at(self, as_of: datetime) -> World:
        fill(self.store, as_of)
        return self

    def due(self, as_of: datetime) -> dict[str, DraftSpec]:
        d = derive(self.game, self.store, as_of=as_of)
        specs = due_drafts(
            self.game,
            d,
            as_of=as_of,
            cards=card_events(self.store),
            floor2=elevator_pids(self.game, self.store),
        )
        return {s.key: s for s in specs}

    def make(self, as_of: datetime, now: datetime | None = None) -> list[int]:
        d = derive(self.game, self.store, as_of=as_of)
        return make_drafts(self.game, self.store, d, now=now or as_of)


@pytest.fixture
def world(tmp_path: Path):
    worlds: list[World] = []

    def build(ruleset: str = "m135", **kw: object) -> World:
        folder = tmp_path / f"w{len(worlds)}"
        folder.mkdir()
        w = World(folder, ruleset, **kw)
        worlds.append(w)
        return w

    yield build
    for w in worlds:
        w.store.close()


def check_golden(name: str, body: str) -> None:
    path = GOLDEN / f"{name}.bbcode"
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(body + "\n", encoding="utf-8")
    assert path.exists(), f"golden file missing: {path} (run with BANSHA_REGEN_GOLDEN=1)"
    assert body + "\n" == path.read_text(encoding="utf-8"), f"draft differs from {path}"


# --------------------------------------------------------------------------- golden files


def test_running_tally_golden_counts_so_far(world):
    due = world().at(RUN).due(RUN)
    spec = due["running_tally:d2"]
    check_golden("running_tally", spec.body)
    # m135 announces in the vote thread; the sheriff (饺子, elected on day 1) weighs 1.5
    assert spec.tid == 2012 and spec.action is DraftAction.REPLY
    assert "计 1.5 票" in spec.body
    assert "result:d2" not in due and "reminder:d2" not in due


def test_running_tally_m209_names_only_the_top(world):
    # m209.txt:167 每天的投票内容公开，但投票计数隐藏，将只宣布当天谁是最高票
    spec = world("m209").at(RUN).due(RUN)["running_tally:d2"]
    check_golden("running_tally_m209", spec.body)
    assert not re.search(r"\d 票", spec.body) and "目前最高票：" in spec.body
    # m209.txt:155 游戏流程发生变化时需要在讨论帖中公示
    assert spec.tid == 2011


def test_reminder_golden_lists_who_has_not_voted(world):
    due = world().at(REMIND).due(REMIND)
    body = due["reminder:d2"].body
    check_golden("reminder", body)
    assert "还没有投票：月饼" in body
    assert f"投票无效、尚未更正：{bbcode_escape(SMILE)}" in body


def test_zhenyan_publishes_no_running_count_and_a_reminder_naming_no_invalid_vote(world):
    # zhenyan.txt:37 投票为匿名投票，仅自己可见，直到游戏结束。在白天结束时，统计投票结果并公布。
    due = world("zhenyan").at(REMIND).due(REMIND)
    assert "running_tally:d2" not in due
    body = due["reminder:d2"].body
    assert f"还没有有效票：{bbcode_escape(SMILE)}、月饼" in body and "无效" not in body
    assert due["reminder:d2"].tid == 2011  # zhenyan.txt:31 在讨论帖中公示


def test_the_reminder_of_a_sped_up_day_threatens_no_card(world):
    # zhenyan.txt:158 执行加速时，所有人不可改票，且发言不足或未投票者将不被判罚。
    # zhenyan.txt:177 讨论结束时，未回复投票帖者将被判罚黄牌 (on an ordinary day)
    w = world("zhenyan").at(REMIND)
    d = derive(w.game, w.store, as_of=REMIND)
    ordinary = {s.key: s for s in due_drafts(w.game, d, as_of=REMIND)}["reminder:d2"].body
    assert "讨论结束时未投票将判罚黄牌" in ordinary
    d.days[2] = dataclasses.replace(d.days[2], accelerated=True)
    body = {s.key: s for s in due_drafts(w.game, d, as_of=REMIND)}["reminder:d2"].body
    assert "黄牌" not in body and "本日已执行加速，未投票者不判罚" in body
    assert "弃权请在投票对象中填写“弃权”" in body


def test_no_reminder_before_the_window(world):
    w = world().at(REMIND)
    assert "reminder:d2" not in w.due(REMIND - timedelta(minutes=31))


def test_reminder_window_is_configurable(world):
    w = world(drafts="[drafts]\nreminder_minutes = 120\n").at(REMIND)
    assert "reminder:d2" in w.due(t(2, 20, 5))
    assert "reminder:d2" not in w.due(t(2, 19, 55))


def test_result_golden_election_day(world):
    spec = world().at(AFTER).due(AFTER)["result:d1"]
    check_golden("result_election", spec.body)
    assert "[b]当选警长：饺子[/b]" in spec.body


def test_result_golden_m135(world):
    spec = world().at(AFTER).due(AFTER)["result:d2"]
    check_golden("result", spec.body)
    assert f"[b]出局：{bbcode_escape(RED)}[/b]（唯一最高票）" in spec.body
    assert "未计入的票" in spec.body  # with every invalid vote's reason


def test_result_golden_m209_hides_the_counts(world):
    # m209.txt:167: counts hidden, only the top; m209.txt:169: on a tie the sheriff's choice
    spec = world("m209").at(AFTER).due(AFTER)["result:d2"]
    check_golden("result_m209", spec.body)
    assert "票数" not in spec.body and not re.search(r"\d 票", spec.body)
    assert "今日最高票：" in spec.body
    assert "平票，警长投票的角色为最高票" in spec.body


def test_result_golden_zhenyan_is_anonymous(world):
    # zhenyan.txt:37 投票为匿名投票，仅自己可见，直到游戏结束。在白天结束时，统计投票结果并公布。
    spec = world("zhenyan").at(AFTER).due(AFTER)["result:d2"]
    check_golden("result_zhenyan", spec.body)
    # zhenyan.txt:38 单角色票数总和大于总票数的一半，则其出局 (2.5 of 4.5: 包子's 弃权 is void,
    # 包子 was red-carded before the close)
    assert f"[b]出局：{bbcode_escape(RED)}[/b]（票数过半出局）" in spec.body
    assert "（饺子" not in spec.body and "票权" not in spec.body  # no voter is named
    assert "另有 2 张票未计入。" in spec.body and bbcode_escape(LINK) not in spec.body


def test_day_open_golden_outs_in_order_and_sheriff(world):
    spec = world().at(AFTER).due(AFTER)["day_open:d3"]
    check_golden("day_open", spec.body)
    # m135.txt:46 公示出局名单时按出局的顺序排序: 红牌 (18:00), vote (22:00), night (02:00)
    lines = [ln for ln in spec.body.splitlines() if re.match(r"\d\. ", ln)]
    assert lines == [
        "1. 包子（红牌罚下）",
        f"2. {bbcode_escape(RED)}（第2天投票出局）",
        f"3. {bbcode_escape(QUOTE)}（第2夜被刀）",
    ]
    assert "[b]警长[/b]：饺子" in spec.body
    assert "遗言" not in spec.body  # m135.txt:59 本规则没有遗言
    assert spec.tid == 2021


def test_day_open_m209_reminds_of_last_words(world):
    # m209.txt:156 公示前一天出局角色名单及遗言; m209.txt:193 遗言中禁止使用Discuz!代码
    body = world("m209").at(AFTER).due(AFTER)["day_open:d3"].body
    assert "[b]遗言[/b]：" in body and "禁止使用Discuz!代码" in body


def test_elevator_golden_edits_the_directors_floor_2(world):
    spec = world().at(RUN).due(RUN)["elevator:d2"]
    check_golden("elevator_edit", spec.body)
    assert spec.action is DraftAction.EDIT and spec.edit_pid == 302 and spec.tid == 2011
    assert f"[url=forum.php?mod=viewthread&tid=2011&authorid=102]{bbcode_escape(RED)}[/url]" in (
        spec.body
    )


def test_past_days_stop_drafting_what_only_matters_while_they_run(world):
    due = world().at(t(3, 23)).due(t(3, 23))  # day 3 closed too
    assert not any(k.startswith(("elevator", "day_open", "running", "reminder")) for k in due)
    assert {"result:d1", "result:d2", "result:d3", "cards:d2"} <= set(due)


def test_elevator_golden_replies_when_floor_2_is_not_the_directors(world):
    spec = world().at(DAY3).due(DAY3)["elevator:d3"]
    check_golden("elevator_reply", spec.body)
    assert spec.action is DraftAction.REPLY and spec.edit_pid is None
    # out players have no floor in the 电梯: 包子 (red), 红 (voted out), 闹 (night)
    for gone in (102, 103, 106):
        assert f"authorid={gone}]" not in spec.body


def test_cards_golden_confirmed_flags_hand_cards_and_escalations(world):
    spec = world().at(AFTER).due(AFTER)["cards:d2"]
    check_golden("cards", spec.body)
    # m135.txt:238 累计三张“蓝牌”合并为一张“黄牌”; m135.txt:244 受到红牌判罚时出局
    assert f"{bbcode_escape(SMILE)}累计3张蓝牌，折合1张黄牌" in spec.body
    assert "[b]红牌罚下出局[/b]：包子" in spec.body
    assert "月饼：黄牌（第2天未投票（讨论结束时未回复投票帖，潜水））" in spec.body
    assert "发言中辱骂" not in spec.body  # day 1's cards are not day 2's
    assert "判负" not in spec.body.split("现有的牌")[0]


def test_cards_context_names_the_kind_of_a_confirmed_flag(world):
    w = world().at(AFTER)
    d = derive(w.game, w.store, as_of=AFTER)
    ctx = cards_context(w.game, d, 2, card_events(w.store))
    assert ctx is not None
    what = {c["player"]: c["what"] for c in ctx["cards"]}
    assert what == {SMILE: "导演判罚", "包子": "导演判罚", "月饼": "潜水（未投票）"}
    assert cards_context(w.game, d, 3, card_events(w.store)) is None  # no card for day 3


def test_inquiry_answers_golden(world):
    w = world("zhenyan")
    specs = inquiry_answer_drafts(
        w.game, 2, [(701, "是"), (702, "否[/quote]"), (703, "猜测正确：第1个词语是[b]月亮[/b]")]
    )
    assert [s.key for s in specs] == ["inquiry_answers:d2"] and specs[0].tid == 2014
    check_golden("inquiry_answers", specs[0].body)
    assert inquiry_answer_drafts(w.game, 2, []) == []


def test_signature_is_the_directors_own_markup(world):
    w = world(drafts='[drafts]\ndirector_signature = "[align=right][M135]导演[/align]"\n')
    body = w.at(AFTER).due(AFTER)["result:d2"].body
    assert body.endswith("\n\n[align=right][M135]导演[/align]")


# --------------------------------------------------------------------------- injection


def _render(body: str, *, mobile: bool = False) -> str:
    ctx = sim_render.RenderContext(
        siteurl="http://127.0.0.1:8080/",
        tid=2012,
        fid=2,
        pid=9,
        hide_unlocked=True,
        viewer_name="",
    )
    return (sim_render.mobile_discuzcode if mobile else sim_render.discuzcode)(body, ctx)


def _structure(html: str) -> list[tuple[str, str]]:
    """The elements the markup opens (tag, href), empty <strong></strong> left out."""
    html = html.replace("<strong></strong>", "")
    tree = LexborHTMLParser(f"<div id='m'>{html}</div>")
    root = tree.css_first("#m")
    assert root is not None
    return [
        (n.tag or "", n.attributes.get("href") or "")
        for n in root.traverse(include_text=False)
        if n.tag not in ("div", "br")
    ]


def _text(html: str) -> str:
    tree = LexborHTMLParser(f"<div id='m'>{html}</div>")
    node = tree.css_first("#m")
    assert node is not None
    return node.text(separator="").replace("\xa0", " ")


@pytest.mark.parametrize("mobile", [False, True], ids=["desktop", "mobile-v4"])
def test_injected_names_render_literally_and_open_no_tag(world, mobile):
    w = world().at(DAY3)
    due = w.due(DAY3)
    for key in ("result:d2", "day_open:d3", "elevator:d3", "cards:d2"):
        body = due[key].body
        html = _render(body, mobile=mobile)
        text = _text(html)
        shown = [n for n in INJECTED if n in text]
        assert shown, f"{key}: no injected name shown literally"
        for name in INJECTED:
            if bbcode_escape(name) in body:
                assert name in text, f"{key}: {name!r} not shown as written"
        # the same draft with the names replaced by plain words has the same markup
        plain = body
        for i, name in enumerate(INJECTED):
            plain = plain.replace(bbcode_escape(name), f"玩家{i}")
        assert _structure(html) == _structure(_render(plain, mobile=mobile)), key
        assert "<font" not in html and "blockquote" not in html and "reply_wrap" not in html
        assert "evil.example" not in " ".join(h for _, h in _structure(html))
        assert "<img" not in html and "★" not in text


def test_escape_keeps_ordinary_text_and_is_idempotent():
    assert bbcode_escape("饺子 12:40 Snow_风 3/2 票") == "饺子 12:40 Snow_风 3/2 票"
    assert bbcode_escape("@包子 http://x") == "@[b][/b]包子 http:[b][/b]//x"
    once = bbcode_escape("[b]x[/b]\n第二行")
    assert "\n" not in once and bbcode_escape(once) == once


# --------------------------------------------------------------------------- saving


def test_unchanged_inputs_draft_nothing(world):
    w = world().at(DAY3)
    first = w.make(DAY3)
    kinds = {get_draft(w.store, i).key for i in first}
    assert kinds == {
        "result:d1",
        "cards:d1",
        "result:d2",
        "cards:d2",
        "day_open:d3",
        "elevator:d3",
    }
    assert w.make(DAY3, now=DAY3 + timedelta(minutes=5)) == []
    assert w.make(DAY3 + timedelta(minutes=5)) == []
    events = w.store.db.execute("SELECT COUNT(*) FROM draft_events").fetchone()[0]
    assert events == len(first)  # one "生成" each, nothing else


def test_changed_tally_drafts_again_and_supersedes_the_waiting_one(world):
    w = world().at(RUN)
    [first] = [i for i in w.make(RUN) if get_draft(w.store, i).kind == "running_tally"]
    fill(w.store, t(2, 16, 30))  # 红 votes 饺子 at 16:00
    new = w.make(t(2, 16, 30))
    [second] = [i for i in new if get_draft(w.store, i).kind == "running_tally"]
    old, cur = get_draft(w.store, first), get_draft(w.store, second)
    assert old.state is DraftState.SUPERSEDED and cur.state is DraftState.PENDING
    assert cur.previous_id == first
    notes = [e["note"] for e in draft_events(w.store, first)]
    assert notes == ["生成", f"被第 {second} 号草稿取代"]


def test_an_approved_draft_set_aside_by_new_inputs_is_said(world):
    # what the director approved will not go out: the cycle says so (its warnings reach
    # the terminal and the notifications) and asks for the new draft to be approved
    from pipeline.cycle import _approvals_undone, _last_draft_event

    w = world().at(RUN)
    [first] = [i for i in w.make(RUN) if get_draft(w.store, i).kind == "running_tally"]
    approve(w.store, first, RUN)
    seen = _last_draft_event(w.store)
    fill(w.store, t(2, 16, 30))  # 红 votes 饺子 at 16:00
    [second] = [i for i in w.make(t(2, 16, 30)) if get_draft(w.store, i).kind == "running_tally"]
    assert get_draft(w.store, first).state is DraftState.SUPERSEDED
    [line] = _approvals_undone(w.store, seen)
    assert line.startswith(f"已批准的第 {first} 号草稿（第2天 ")
    assert f"被第 {second} 号草稿取代" in line and "请查看并批准新的草稿" in line
    assert _approvals_undone(w.store, _last_draft_event(w.store)) == []


def test_a_posted_draft_is_never_changed_and_the_next_one_follows_it(world):
    w = world().at(RUN)
    [first] = [i for i in w.make(RUN) if get_draft(w.store, i).kind == "running_tally"]
    approve(w.store, first, RUN)
    mark_posted(w.store, first, pid=9001, now=RUN)
    fill(w.store, t(2, 16, 30))
    [second] = [i for i in w.make(t(2, 16, 30)) if get_draft(w.store, i).kind == "running_tally"]
    posted = get_draft(w.store, first)
    assert posted.state is DraftState.POSTED and posted.posted_pid == 9001
    assert get_draft(w.store, second).previous_id == first


def test_a_rejected_draft_is_not_drafted_again_while_nothing_changes(world):
    w = world().at(AFTER)
    ids = w.make(AFTER)
    result = next(i for i in ids if get_draft(w.store, i).key == "result:d2")
    reject(w.store, result, "等夜晚结算后一起发", AFTER)
    assert w.make(AFTER) == []


def test_elevator_reply_becomes_an_edit_once_floor_2_is_known(world):
    w = world()
    fill(w.store, t(2, 10, 0))  # only the director's floor 1 so far
    [reply] = [i for i in w.make(t(2, 10, 0)) if get_draft(w.store, i).key == "elevator:d2"]
    assert get_draft(w.store, reply).action == "reply"
    fill(w.store, t(2, 10, 2))  # the director takes floor 2
    [edit_id] = [i for i in w.make(t(2, 10, 2)) if get_draft(w.store, i).key == "elevator:d2"]
    e = get_draft(w.store, edit_id)
    assert (e.action, e.edit_pid) == ("edit", 302)
    assert get_draft(w.store, reply).state is DraftState.SUPERSEDED


def test_stale_running_tally_is_retired_at_the_close(world):
    w = world().at(RUN)
    [tally_id] = [i for i in w.make(RUN) if get_draft(w.store, i).kind == "running_tally"]
    approve(w.store, tally_id, RUN)
    fill(w.store, AFTER)
    w.make(AFTER)
    d = get_draft(w.store, tally_id)
    assert d.state is DraftState.SUPERSEDED  # never posted after the close
    assert draft_events(w.store, tally_id)[-1]["note"] == "投票已截止，此草稿已过时"


# --------------------------------------------------------------------------- transitions


def _one(w: World) -> int:
    return next(i for i in w.make(AFTER) if get_draft(w.store, i).key == "result:d2")


def test_states_pending_approved_posted_each_recorded_with_time(world):
    w = world().at(AFTER)
    i = _one(w)
    approve(w.store, i, t(3, 9, 5))
    mark_posted(w.store, i, pid=777, now=t(3, 9, 6))
    rows = [(e["from_state"], e["to_state"], e["at"]) for e in draft_events(w.store, i)]
    assert rows == [
        (None, "pending", AFTER.isoformat()),
        ("pending", "approved", t(3, 9, 5).isoformat()),
        ("approved", "posted", t(3, 9, 6).isoformat()),
    ]


@pytest.mark.parametrize(
    ("setup", "action", "message"),
    [
        (
            "posted",
            "approve",
            r"不能批准第 \d+ 号草稿：它已于 .+ 发出（pid 777），发出的草稿不能再改动",
        ),
        ("rejected", "approve", r"不能批准第 \d+ 号草稿：它已被驳回（不要）"),
        ("approved", "approve", r"不能批准第 \d+ 号草稿：它已经批准过了"),
        ("posted", "edit", r"不能修改第 \d+ 号草稿：它已于 .+ 发出"),
        ("rejected", "edit", r"不能修改第 \d+ 号草稿：它已被驳回"),
        ("posted", "reject", r"不能驳回第 \d+ 号草稿：它已于 .+ 发出"),
        ("rejected", "reject", r"不能驳回第 \d+ 号草稿：它已被驳回"),
        ("pending", "post", r"不能发出第 \d+ 号草稿：它还在等待批准"),
    ],
)
def test_illegal_transitions_are_refused_in_chinese(world, setup, action, message):
    w = world().at(AFTER)
    i = _one(w)
    if setup in ("approved", "posted"):
        approve(w.store, i, AFTER)
    if setup == "posted":
        mark_posted(w.store, i, pid=777, now=AFTER)
    if setup == "rejected":
        reject(w.store, i, "不要", AFTER)
    before = get_draft(w.store, i)
    with pytest.raises(DraftError, match=message):
        if action == "approve":
            approve(w.store, i, AFTER)
        elif action == "edit":
            edit(w.store, i, "新的正文", AFTER)
        elif action == "reject":
            reject(w.store, i, "理由", AFTER)
        else:
            mark_posted(w.store, i, pid=1, now=AFTER)
    assert get_draft(w.store, i) == before


def test_superseded_draft_cannot_be_approved(world):
    w = world().at(RUN)
    [first] = [i for i in w.make(RUN) if get_draft(w.store, i).kind == "running_tally"]
    fill(w.store, t(2, 16, 30))
    w.make(t(2, 16, 30))
    with pytest.raises(DraftError, match="已被更新的草稿取代"):
        approve(w.store, first, t(2, 16, 31))


def test_editing_an_approved_draft_sends_it_back_to_pending(world):
    w = world().at(AFTER)
    i = _one(w)
    approve(w.store, i, AFTER)
    generated = get_draft(w.store, i).body
    d = edit(w.store, i, generated + "\n补充：今晚 23:00 开始夜晚行动。", t(3, 9, 10))
    assert d.state is DraftState.PENDING and d.approved_at is None
    assert d.generated_body == generated and d.edited
    assert draft_events(w.store, i)[-1]["note"] == "导演修改，需重新批准"
    # the edit is not undone by the next cycle: the generated text did not change
    assert w.make(AFTER) == []
    assert get_draft(w.store, i).body.endswith("夜晚行动。")


def test_reject_needs_a_reason_and_an_edit_a_body(world):
    w = world().at(AFTER)
    i = _one(w)
    with pytest.raises(DraftError, match="必须写明理由"):
        reject(w.store, i, "  ", AFTER)
    with pytest.raises(DraftError, match="不能为空"):
        edit(w.store, i, "\n\n", AFTER)
    with pytest.raises(DraftError, match="超过论坛的长度上限 10000 字节"):
        edit(w.store, i, "长" * 4000, AFTER)
    with pytest.raises(DraftError, match="没有编号为 999 的草稿"):
        approve(w.store, 999, AFTER)


# --------------------------------------------------------------------------- length


def _balanced(part: str) -> bool:
    stack: list[str] = []
    for m in re.finditer(r"\[(/?)(quote|list|b|color|url|align)(=[^\]]*)?\]", part):
        if m.group(1):
            if not stack or stack.pop() != m.group(2):
                return False
        else:
            stack.append(m.group(2))
    return not stack


def _long_body() -> str:
    lines = ["[b]【长公示】[/b]"]
    for block in range(12):
        lines.append("[quote]")
        lines += [f"第{block}段第{i}行：这是一段很长很长的中文说明文字" for i in range(20)]
        lines.append("[/quote]")
        lines.append(f"[color=red]第{block}段结束[/color]")
    return "\n".join(lines)


@pytest.mark.parametrize("charset", ["utf-8", "gbk"])
def test_split_at_line_boundaries_outside_tag_pairs(charset):
    body = _long_body()
    limit = 5000
    parts = split_body(body, charset=charset, limit=limit)
    n = len(parts)
    assert n >= 2
    for i, part in enumerate(parts, 1):
        assert body_bytes(part, charset) <= limit
        assert part.startswith(f"〔{i}/{n}〕\n")
        assert _balanced(part), f"part {i} cuts a tag pair"
    rejoined = "\n".join(p.split("\n", 1)[1] for p in parts)
    assert rejoined == body


def test_the_limit_is_counted_in_the_forums_charset():
    # 3600 CJK characters: 10800 bytes in UTF-8, 7200 in GBK (docs/discuz.md §4.4)
    body = "\n".join(["票" * 40] * 90)
    assert len(split_body(body, charset="utf-8")) == 2
    assert split_body(body, charset="gbk") == [body]
    assert len(split_body(body, charset="auto")) == 2  # unknown charset: the larger count


def test_a_tag_pair_longer_than_a_part_is_closed_and_reopened():
    body = "[quote]\n" + "\n".join(["很长的引用内容" * 10] * 60) + "\n[/quote]"
    parts = split_body(body, charset="utf-8", limit=3000)
    assert len(parts) > 1
    for part in parts:
        assert body_bytes(part, "utf-8") <= 3000 and _balanced(part)


def test_a_single_line_over_the_limit_is_an_error():
    with pytest.raises(DraftError, match="本身超过论坛长度上限 10000 字节"):
        split_body("长" * 5000, charset="utf-8")


@pytest.mark.parametrize(("encoding", "parts"), [("utf-8", 2), ("gbk", 1)])
def test_a_long_elevator_is_split_into_keyed_parts(world, encoding, parts):
    w = world(extra_players=90)
    w.game = w.game.model_copy(
        update={"forum": w.game.forum.model_copy(update={"encoding": encoding})}
    )
    fill(w.store, RUN)
    due = w.due(RUN)
    keys = sorted(k for k in due if k.startswith("elevator:d2"))
    if parts == 1:
        assert keys == ["elevator:d2"]
        assert body_bytes(due["elevator:d2"].body, "gbk") <= MAX_POST_BYTES
        return
    assert keys == ["elevator:d2#1", "elevator:d2#2"]
    one, two = due["elevator:d2#1"], due["elevator:d2#2"]
    assert one.action is DraftAction.EDIT and two.action is DraftAction.REPLY
    assert one.title.endswith("（1/2）") and one.body.startswith("〔1/2〕\n")
    for spec in (one, two):
        assert body_bytes(spec.body, "utf-8") <= MAX_POST_BYTES
        assert all(ln.count("[url=") == ln.count("[/url]") for ln in spec.body.splitlines())
    ids = save_drafts(w.store, [one, two], now=RUN)
    assert [get_draft(w.store, i).key for i in ids] == ["elevator:d2#1", "elevator:d2#2"]


def _spec(key: str, body: str) -> DraftSpec:
    return DraftSpec(
        DraftKind.RESULT, 2, key, 2012, DraftAction.REPLY, None, "第2天 投票结果", body
    )


def test_when_a_split_draft_fits_again_its_old_parts_are_superseded(world):
    w = world()
    one, two = save_drafts(
        w.store, [_spec("result:d2#1", "〔1/2〕\n甲"), _spec("result:d2#2", "〔2/2〕\n乙")], now=RUN
    )
    [whole] = save_drafts(w.store, [_spec("result:d2", "甲\n乙")], now=REMIND)
    assert get_draft(w.store, one).state is DraftState.SUPERSEDED
    assert get_draft(w.store, two).state is DraftState.SUPERSEDED
    assert draft_events(w.store, two)[-1]["note"] == "草稿的分段改变，此段作废"
    assert [d.id for d in list_drafts(w.store)] == [whole]


# --------------------------------------------------------------------------- templates


def test_a_directors_template_folder_overrides_one_kind(world, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "reminder.j2").write_text("还有 {{ minutes }} 分钟：{{ not_voted|join('、') }}")
    templates = load_templates(folder)
    w = world().at(REMIND)
    d = derive(w.game, w.store, as_of=REMIND)
    due = {s.key: s for s in due_drafts(w.game, d, as_of=REMIND, templates=templates)}
    assert due["reminder:d2"].body == "还有 60 分钟：月饼"
    assert due["running_tally:d2"].body.startswith("[b]【第2天投票")  # the default


def test_cli_make_uses_the_template_folder_named_in_the_game_file(world):
    w = world(drafts='[drafts]\ntemplates = "mine"\n').at(REMIND)
    (w.game_path.parent / "mine").mkdir()
    (w.game_path.parent / "mine" / "reminder.j2").write_text("快投票：{{ not_voted|join('、') }}")
    run("drafts", "make", str(w.game_path), "--db", str(w.db_path), "--as-of", REMIND.isoformat())
    bodies = [d.body for d in list_drafts(w.store) if d.kind == "reminder"]
    assert bodies == ["快投票：月饼"]


def test_a_broken_template_names_its_file_and_line(tmp_path):
    (tmp_path / "result.j2").write_text("第一行\n{% if %}\n")
    templates = load_templates(tmp_path)
    with pytest.raises(DraftError, match=r"草稿模板 .*result\.j2 第 2 行语法错误"):
        templates.render(DraftKind.RESULT, {})
    with pytest.raises(DraftError, match="草稿模板目录不存在"):
        load_templates(tmp_path / "nope")


@pytest.mark.parametrize(
    ("attack", "what"),
    [
        ("{{ ''.__class__.__mro__ }}", "（str 的 __class__）"),
        ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "（str 的 __class__）"),
        ("{{ day.__class__.__base__ }}", "（int 的 __class__）"),
        ("{{ cycler.__init__.__globals__.os }}", "（type 的 __init__）"),
        ("{{ lipsum.__globals__ }}", "（function 的 __globals__）"),
        ("{{ '{0.__class__}'.format(game_title) }}", "（str 的 __class__）"),
        ("{{ not_voted.append(1) }}", "（list 的 append）"),  # the immutable sandbox
    ],
)
def test_a_template_reaching_for_python_internals_is_refused_in_chinese(world, attack, what):
    """A director's template is code bansha runs: it renders in Jinja's immutable sandbox."""
    w = world(drafts='[drafts]\ntemplates = "mine"\n').at(REMIND)
    mine = w.game_path.parent / "mine"
    mine.mkdir()
    (mine / "reminder.j2").write_text(attack, encoding="utf-8")
    out = run(
        "drafts", "make", str(w.game_path), "--db", str(w.db_path), "--as-of", REMIND.isoformat(),
        code=1,
    )  # fmt: skip
    assert f"草稿模板 {mine / 'reminder.j2'} 试图使用模板中不允许的内部属性或方法{what}" in out
    assert "已拒绝生成（模板只能读取说明中列出的变量）" in out
    assert "Traceback" not in out and "<class" not in out
    assert not [d for d in list_drafts(w.store) if d.kind == "reminder"]


def test_a_template_that_fails_while_rendering_says_so_in_chinese(tmp_path):
    (tmp_path / "result.j2").write_text("{{ 1 // 0 }}")
    templates = load_templates(tmp_path)
    with pytest.raises(DraftError, match=r"草稿模板 .*result\.j2 生成时出错（ZeroDivisionError"):
        templates.render(DraftKind.RESULT, {})


def test_a_template_file_linking_out_of_the_folder_is_not_read(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("导演的私人笔记", encoding="utf-8")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "result.j2").symlink_to(secret)
    with pytest.raises(DraftError) as err:
        load_templates(mine)
    assert str(err.value) == (
        f"草稿模板 {mine / 'result.j2'} 是指向模板目录之外的符号链接，不予读取；"
        "请把模板文件本身放进模板目录"
    )


@pytest.mark.parametrize("outside", ["../outside", "/tmp"])
def test_cli_refuses_a_templates_folder_outside_the_game_folder(world, outside):
    w = world().at(REMIND)
    text = w.game_path.read_text(encoding="utf-8")
    w.game_path.write_text(text + f'\n[drafts]\ntemplates = "{outside}"\n', encoding="utf-8")
    out = run(
        "drafts", "make", str(w.game_path), "--db", str(w.db_path), "--as-of", REMIND.isoformat(),
        code=1,
    )  # fmt: skip
    assert (
        f"游戏文件 {w.game_path}：drafts.templates：草稿模板目录必须在游戏文件所在的目录之内" in out
    )
    assert not list_drafts(w.store)


def test_templates_dir_for_refuses_a_folder_outside_for_a_game_built_in_memory(world):
    from pipeline.drafts import templates_dir_for

    w = world()
    game = w.game.model_copy(
        update={"drafts": w.game.drafts.model_copy(update={"templates": "../elsewhere"})}
    )
    with pytest.raises(
        DraftError, match=r"drafts\.templates：草稿模板目录必须在游戏文件所在的目录之内"
    ):
        templates_dir_for(game, w.game_path)
    assert templates_dir_for(w.game, w.game_path) is None


# --------------------------------------------------------------------------- CLI


def run(*args: str, code: int = 0, input: str | None = None) -> str:
    result = CliRunner().invoke(cli, list(args), input=input)
    assert result.exit_code == code, result.output
    return result.output


@pytest.fixture
def cli_world(world):
    w = world().at(RUN)
    return w, [str(w.game_path), "--db", str(w.db_path)]


def test_cli_make_list_and_nothing_new(cli_world):
    _, base = cli_world
    out = run("drafts", "make", *base, "--as-of", RUN.isoformat())
    assert "已起草 #" in out and "第2天 计票（进行中）" in out and "帖子 2012，回复" in out
    again = run("drafts", "make", *base, "--as-of", RUN.isoformat())
    assert again.endswith("没有新的草稿。\n")
    # day 1 closed but its threads were never re-read whole: its result waits
    assert "第1天已关门，但关门后还没有完整重读过帖子" in again
    listing = run("drafts", *base)
    assert "计票" in listing and "待批准" in listing and "【第2天投票·计票（进行中）】" in listing


def test_cli_show_prints_the_diff_from_the_previous_draft(cli_world):
    w, base = cli_world
    run("drafts", "make", *base, "--as-of", RUN.isoformat())
    first = next(d for d in list_drafts(w.store) if d.kind == "running_tally")
    out = run("drafts", "show", *base, str(first.id))
    assert "这是该草稿的第一稿" in out and "―――― 正文 ――――" in out
    fill(w.store, t(2, 16, 30))
    out = run("drafts", "make", *base, "--as-of", t(2, 16, 30).isoformat())
    second = next(d for d in list_drafts(w.store) if d.kind == "running_tally")
    out = run("drafts", "show", *base, str(second.id))
    assert f"与上一稿（第 {first.id} 号，已取代）的差异" in out
    assert f"--- 第 {first.id} 号（上一稿）" in out and f"+++ 第 {second.id} 号（本稿）" in out
    assert "-饺子：1 票" in out and "+饺子：2 票" in out
    listing = run("drafts", *base)
    assert f"#{first.id} " not in listing and f"#{first.id} " in run("drafts", *base, "--all")


def test_cli_approve_reject_and_their_refusals(cli_world):
    w, base = cli_world
    run("drafts", "make", *base, "--as-of", RUN.isoformat())
    ids = [d.id for d in list_drafts(w.store)]
    out = run("drafts", "approve", *base, str(ids[0]))
    assert out.startswith(f"已批准第 {ids[0]} 号草稿") and "bansha cycle" in out
    out = run("drafts", "approve", *base, str(ids[0]), code=1)
    assert f"不能批准第 {ids[0]} 号草稿：它已经批准过了" in out
    out = run("drafts", "reject", *base, str(ids[1]), "--why", "格式不对")
    assert f"已驳回第 {ids[1]} 号草稿" in out and "格式不对" in out
    out = run("drafts", "approve", *base, str(ids[1]), code=1)
    assert "它已被驳回（格式不对）" in out
    assert "缺少选项 '--why'" in run("drafts", "reject", *base, str(ids[0]), code=2)
    assert "没有编号为 999 的草稿" in run("drafts", "approve", *base, "999", code=1)
    assert "没有编号为 999 的草稿" in run("drafts", "show", *base, "999", code=1)


def test_cli_edit_opens_the_editor_and_keeps_the_generated_text(cli_world, monkeypatch):
    w, base = cli_world
    run("drafts", "make", *base, "--as-of", RUN.isoformat())
    d = next(d for d in list_drafts(w.store) if d.kind == "running_tally")
    run("drafts", "approve", *base, str(d.id))
    monkeypatch.setattr("click.edit", lambda text, **kw: text + "导演补充一句。\n")
    out = run("drafts", "edit", *base, str(d.id))
    assert "已保存" in out and "现需重新批准" in out
    after = get_draft(w.store, d.id)
    assert after.state is DraftState.PENDING and after.body.endswith("导演补充一句。")
    assert after.generated_body == d.body
    assert "导演的修改" in run("drafts", "show", *base, str(d.id))
    monkeypatch.setattr("click.edit", lambda text, **kw: None)
    assert "没有修改" in run("drafts", "edit", *base, str(d.id))
    approve(w.store, d.id, RUN)
    mark_posted(w.store, d.id, pid=5, now=RUN)

    def never(*a, **kw):  # the editor must not open for a draft that cannot change
        raise AssertionError("editor opened")

    monkeypatch.setattr("click.edit", never)
    assert "发出的草稿不能再改动" in run("drafts", "edit", *base, str(d.id), code=1)


def test_cli_list_when_empty(cli_world):
    _, base = cli_world
    assert "还没有草稿" in run("drafts", *base)


def test_drafts_section_of_the_game_file_is_optional(world):
    game = world().game
    assert game.drafts.reminder_minutes == 60 and game.drafts.director_signature == ""
    assert game.drafts.max_post_bytes == MAX_POST_BYTES and game.drafts.templates is None


def test_a_result_waits_until_the_closed_day_was_read_again(cli_world):
    """The public result is never drafted from a crawl that may have missed the last votes."""
    w, base = cli_world
    out = run("drafts", "make", *base, "--as-of", RUN.isoformat())
    assert "第1天 投票结果" not in out
    w.store.set_meta("full_read:1", RUN.isoformat())
    out = run("drafts", "make", *base, "--as-of", RUN.isoformat())
    assert "第1天 投票结果" in out and "第1天已关门" not in out


@pytest.mark.parametrize("ruleset", ["m135", "zhenyan"])
def test_the_cards_draft_names_no_floor_and_links_the_posts(world, ruleset: str) -> None:
    # docs/rulings.md（抓取与帖子）：链接一律用 findpost：删帖后楼层会重排，pid 不变。
    # zhenyan.txt:291 警长……回复指定三种回答以外的内容（直接黄牌或红牌）
    from engine.cards import Card as EngineCard
    from engine.conduct import Evidence, Flag, FlagKind

    w = world(ruleset).at(AFTER)
    d = derive(w.game, w.store, as_of=AFTER)
    ev = tuple(Evidence(4002, pid, floor, t(2, 12), "") for pid, floor in ((91, 14), (92, 17)))
    flag = Flag(
        id="d2-sheriff-answer-月饼",
        kind=FlagKind.SHERIFF_ANSWER,
        player="月饼",
        day=2,
        reason="警长月饼第2天在询问贴的回答不是是/否/不知道（2帖）：14楼：可能；17楼：也许",
        evidence=ev,
        card=EngineCard.YELLOW,
        rule="zhenyan.txt:291",
        public="警长月饼第2天在询问贴的回答不是是/否/不知道（2帖）（直接黄牌或红牌）",
    )
    d = dataclasses.replace(d, flags=(*d.flags, flag))
    events = [
        *card_events(w.store),
        dataclasses.replace(card_events(w.store)[-1], reason=flag.reason, source=flag.id),
    ]
    ctx = cards_context(w.game, d, 2, events)
    assert ctx is not None
    body = load_templates().render(DraftKind.CARDS, ctx)
    line = next(x for x in body.splitlines() if "不是是/否/不知道" in x)
    said = re.sub(r"\[url=[^\]]*\]", "", line)
    assert "楼" not in said and "pid" not in said, line
    assert "（2帖）（直接黄牌或红牌）" in line
    assert "[url=forum.php?mod=redirect&goto=findpost&ptid=4002&pid=91]1[/url]" in line
    assert "[url=forum.php?mod=redirect&goto=findpost&ptid=4002&pid=92]2[/url]" in line
    # a flag no longer derived: its stored reason loses its floors all the same
    gone = dataclasses.replace(d, flags=tuple(f for f in d.flags if f.id != flag.id))
    ctx = cards_context(w.game, gone, 2, events)
    assert ctx is not None
    assert not any("楼" in c["reason"] for c in ctx["cards"])
