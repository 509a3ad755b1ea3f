"""The director's day report (``render_report``): what a director reads on the page.

Each test builds a small game, writes its posts straight into a fresh store, derives it with
the real engine and renders the report; the page is then read back with selectolax.lexbor, as
a browser would parse it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from selectolax.lexbor import LexborHTMLParser

import pipeline.cli.report  # registers `bansha report`
from parsers.records import Post, ThreadPage
from pipeline.cli import cli
from pipeline.derive import Derivation, derive, flag_decisions
from pipeline.drafts.report import ReportData, render_report, report_data, write_report
from pipeline.game.gamefile import Game, parse_game
from pipeline.store import Store, open_store

assert pipeline.cli.report  # imported for its side effect

TZ = timezone(timedelta(hours=8))
OPENS = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
CLOSES = datetime(2026, 12, 2, 22, 0, tzinfo=TZ)
AFTER = CLOSES + timedelta(hours=11)
DISCUSSION, VOTE = 3011, 3012

# a name a player could register (or a director could type): markup, quotes and an entity
HOSTILE = "<img src=x onerror=alert(1)>&amp;\"坏'"

PLAYERS = [("饺子", 101), ("包子", 102), ("馄饨", 103), (HOSTILE, 104), ("面条", 105)]
# discussion posts per player: 10 (reaches both thresholds), 7 (under 10), 3 (under 5),
# 5 (exactly the 5 of the rule), 0
POSTS = {"饺子": 10, "包子": 7, "馄饨": 3, HOSTILE: 5, "面条": 0}
VOTES = [
    ("饺子", "投票对象：包子"),
    ("包子", f"投票对象：{HOSTILE}"),
    ("馄饨", "投票对象：包子"),
    (HOSTILE, "投票对象：饺子"),
    ("面条", "投票给：饺子"),  # wrong format: invalid
]


def game_data(ruleset: str, players: Sequence[tuple[str, int]]) -> dict[str, Any]:
    return {
        "game": {
            "id": f"{ruleset}-report",
            "title": f"[{ruleset.upper()}]报告测试",
            "ruleset": ruleset,
            "timezone": "Asia/Shanghai",
        },
        "forum": {"base_url": "https://bbs.example.com/"},
        "director": {"names": ["导演"], "uids": [100]},
        "players": [{"name": n, "uid": uid} for n, uid in players],
        "days": [
            {
                "day": 2,
                "opens": OPENS,
                "closes": CLOSES,
                "discussion": DISCUSSION,
                "vote": VOTE,
                "sheriff_election": False,
            }
        ],
    }


def save_thread(
    store: Store,
    tid: int,
    role: str,
    posts: list[tuple[str, int, str]],
    *,
    day: int = 2,
    opens: datetime = OPENS,
) -> None:
    """Write one thread's posts (author, uid, text) as one crawled page, ten minutes apart."""
    rows = [
        Post(
            tid=tid,
            pid=tid * 100 + i,
            floor=i + 2,
            author=author,
            uid=uid,
            posted_at=opens + timedelta(minutes=10 * (i + 1)),
            message_html=text,
            text=text,
        )
        for i, (author, uid, text) in enumerate(posts)
    ]
    store.register_thread(tid, day=day, role=role)
    store.save_page(
        ThreadPage(tid=tid, page=1, total_pages=1, posts=tuple(rows), subject=role),
        source="html",
        url=f"https://bbs.example.com/forum.php?mod=viewthread&tid={tid}",
        status=200,
        headers={"content-type": "text/html"},
        body=b"<html>",
        fetched_at=AFTER,
        ppp=None,
    )


def build(tmp_path: Path, ruleset: str = "m209") -> tuple[Game, Store, Derivation]:
    game = parse_game(game_data(ruleset, PLAYERS), check_login=False)
    store = open_store(tmp_path / "game.db")
    uid = dict(PLAYERS)
    talk = [(n, uid[n], f"{i + 1}楼发言") for n, k in POSTS.items() for i in range(k)]
    save_thread(store, DISCUSSION, "discussion", talk)
    save_thread(store, VOTE, "vote", [(n, uid[n], text) for n, text in VOTES])
    return game, store, derive(game, store, as_of=AFTER)


def page(html: str) -> LexborHTMLParser:
    return LexborHTMLParser(html)


def text_of(tree: LexborHTMLParser, css: str) -> str:
    node = tree.css_first(css)
    assert node is not None, f"{css} missing"
    return node.text(separator=" ")


Fresh = Callable[..., tuple[Game, Store, Derivation]]


@pytest.fixture(scope="module")
def m209(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Game, Store, Derivation]]:
    built = build(tmp_path_factory.mktemp("m209"))
    yield built
    built[1].close()


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Fresh]:
    """``fresh(ruleset)``: the test game in a new store (closed after the test)."""
    stores: list[Store] = []

    def make(ruleset: str = "m209") -> tuple[Game, Store, Derivation]:
        built = build(tmp_path, ruleset)
        stores.append(built[1])
        return built

    yield make
    for store in stores:
        store.close()


@pytest.fixture(scope="module")
def m209_html(m209: tuple[Game, Store, Derivation]) -> str:
    _, store, d = m209
    return render_report(report_data(d, 2, flag_decisions(store)))


# --------------------------------------------------------------------------- escaping


def test_hostile_player_name_is_text_everywhere_never_markup(m209_html: str) -> None:
    tree = page(m209_html)
    # no element was injected: the only <img> would be the name's
    assert tree.css("img") == []
    assert "<img src=x" not in m209_html
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;amp;&#34;坏&#39;" in m209_html
    # … and a reader sees the name exactly as the player wrote it: in the counts, the vote
    # rows, the post table and the chart (the attribute round-trips too)
    assert HOSTILE in text_of(tree, "#counts")
    assert HOSTILE in text_of(tree, "#vote-table")
    assert HOSTILE in text_of(tree, "#post-table")
    bars = {b.attributes["data-player"] for b in tree.css("#posts-chart rect.bar")}
    assert HOSTILE in bars
    # no script, no remote resource, and a policy that forbids both
    assert tree.css("script, link, iframe, object, embed") == []
    csp = tree.css_first('meta[http-equiv="Content-Security-Policy"]')
    assert csp is not None
    assert "default-src 'none'" in csp.attributes["content"]
    assert not re.search(r"url\(|@import|src=", tree.css_first("style").text())


def test_links_only_point_to_posts_and_threads_of_the_forum(m209_html: str) -> None:
    hrefs = [a.attributes.get("href") or "" for a in page(m209_html).css("a")]
    external = [h for h in hrefs if not h.startswith("#")]
    assert external
    assert all(h.startswith("https://bbs.example.com/forum.php?mod=") for h in external)


# --------------------------------------------------------------------------- the votes


def test_every_vote_is_a_row_in_post_order_with_verdict_reason_and_link(
    m209: tuple[Game, Store, Derivation], m209_html: str
) -> None:
    _, _, d = m209
    verdicts = d.day(2).verdicts
    rows = page(m209_html).css("#vote-table tr.vote")
    assert len(rows) == len(verdicts) == len(VOTES)
    assert [int(r.attributes["data-pid"] or 0) for r in rows] == [
        v.ballot.evidence.pid for v in verdicts
    ]
    for row, v in zip(rows, verdicts, strict=True):
        text = row.text(separator=" ")
        assert v.reason in text
        link = row.css_first("a")
        assert link is not None
        assert link.attributes["href"] == v.ballot.evidence.url
    # m209.txt:599 "请严格依照投票格式或改票格式进行投票。投票格式或投票对象有误的票无效。"
    wrong = rows[-1]
    assert "vote-invalid" in (wrong.attributes["class"] or "")
    assert "无效" in wrong.text()
    assert "投票给" in wrong.text()


def test_result_names_who_is_out_and_the_rule_that_decided(m209_html: str) -> None:
    tree = page(m209_html)
    # m209.txt:166 "讨论日获得投票最多的角色将出局"
    assert text_of(tree, "#outcome") == "出局：包子"
    result = text_of(tree, "#result")
    assert "唯一最高票" in result
    # the rule named as the director knows it; the maintainer's file:line on hover
    assert "依据《[M209]巴啦啦小魔仙》用语定义·投票" in result
    assert tree.css_first("#result .rule").attributes["title"].startswith("m209.txt:")


def test_m209_counts_still_shown_to_the_director_but_labelled_not_public(
    m209_html: str,
) -> None:
    # m209.txt:167 "每天的投票内容公开，但投票计数隐藏，将只宣布当天谁是最高票"
    tree = page(m209_html)
    note = text_of(tree, "#public-counts")
    assert "只公布最高票" in note
    assert "《[M209]巴啦啦小魔仙》用语定义·投票" in note
    counts = {
        r.css_first("td").text(): r.css("td")[1].text(strip=True)
        for r in tree.css("#counts tbody tr")
    }
    assert counts == {"包子": "2", HOSTILE: "1", "饺子": "1"}


def test_a_set_with_public_counts_has_no_such_label(fresh: Fresh) -> None:
    _, store, d = fresh("m135")
    tree = page(render_report(report_data(d, 2, flag_decisions(store))))
    assert tree.css_first("#public-counts") is None
    assert tree.css_first("#counts") is not None


def test_weights_are_exact_fractions_shown_as_a_director_reads_them(
    m209: tuple[Game, Store, Derivation],
) -> None:
    _, store, d = m209
    data = report_data(d, 2, flag_decisions(store))
    tally = dict(data.tally)
    tally["tally"] = {
        **tally["tally"],
        "counts": [
            {"candidate": "包子", "votes": "5/2", "value": 2.5, "voters": ["饺子", "馄饨"]},
            {"candidate": "饺子", "votes": "4/3", "value": 1.3333, "voters": [HOSTILE]},
        ],
    }
    tree = page(render_report(replace(data, tally=tally)))
    cells = [r.css("td")[1].text(separator=" ", strip=True) for r in tree.css("#counts tbody tr")]
    assert cells == ["2.5 （5/2）", "4/3"]


def test_an_open_day_says_the_count_is_not_final(fresh: Fresh) -> None:
    game, store, _ = fresh()
    d = derive(game, store, as_of=CLOSES - timedelta(hours=2))
    tree = page(render_report(report_data(d, 2)))
    assert "投票尚未截止" in text_of(tree, "#not-closed")


# --------------------------------------------------------------------------- posts per player


def test_posts_per_player_against_the_5_and_10_thresholds(m209_html: str) -> None:
    # m209.txt:717 "（1）在未执行加速的讨论日发言不足五帖"
    # m209.txt:718 "（2）连续三个未执行加速的讨论日发言均不足十帖"
    tree = page(m209_html)
    lines = {
        int(x.attributes["data-threshold"] or 0)
        for x in tree.css("#posts-chart line")
        if "data-threshold" in x.attributes
    }
    assert lines == {5, 10}
    bars = tree.css("#posts-chart rect.bar")
    assert len(bars) == len(PLAYERS)
    by_player = {b.attributes["data-player"]: b for b in bars}
    assert {p: int(b.attributes["data-count"] or -1) for p, b in by_player.items()} == POSTS
    marks = {p: (b.attributes["class"] or "").split()[-1] for p, b in by_player.items()}
    assert marks == {"饺子": "ok", "包子": "mid", "馄饨": "low", HOSTILE: "mid", "面条": "low"}
    # longer bars for more posts: the chart is drawn to scale
    widths = {p: float(b.attributes["width"] or 0) for p, b in by_player.items()}
    assert widths["面条"] == 0 < widths["馄饨"] < widths[HOSTILE] < widths["包子"] < widths["饺子"]
    table = {
        r.css("td")[0].text(): r.css("td")[2].text(strip=True)
        for r in tree.css("#post-table tbody tr")
    }
    assert table["馄饨"] == "不足5帖"
    assert table["包子"] == "不足10帖（连续第1天）"
    assert table["饺子"] == "达标"
    assert table["面条"] == "不足5帖"


def test_a_run_of_days_under_10_posts_is_counted_towards_the_3_day_rule(tmp_path: Path) -> None:
    # m209.txt:718 "（2）连续三个未执行加速的讨论日发言均不足十帖"
    data = game_data("m209", PLAYERS[:2])
    days = []
    for k in range(3):
        opens, closes = OPENS + timedelta(days=k), CLOSES + timedelta(days=k)
        days.append(
            {
                "day": 2 + k,
                "opens": opens,
                "closes": closes,
                "discussion": 4000 + k,
                "sheriff_election": False,
            }
        )
    game = parse_game({**data, "days": days}, check_login=False)
    store = open_store(tmp_path / "streak.db")
    try:
        for k in range(3):
            talk = [("饺子", 101, "发言")] * 10 + [("包子", 102, "发言")] * 7
            save_thread(
                store, 4000 + k, "discussion", talk, day=2 + k, opens=OPENS + timedelta(days=k)
            )
        d = derive(game, store, as_of=AFTER + timedelta(days=2))
        statuses = []
        for n in (2, 3, 4):
            tree = page(render_report(report_data(d, n)))
            row = tree.css_first('#post-table tr[data-player="包子"]')
            assert row is not None
            statuses.append(row.css("td")[2].text(strip=True))
        assert statuses == [f"不足10帖（连续第{k}天）" for k in (1, 2, 3)]
        flags = {r.attributes["data-flag"] for r in tree.css("#flag-table tr.flag")}
        assert "d4-qianshui-streak-包子" in flags
        ok = tree.css_first('#post-table tr[data-player="饺子"]')
        assert ok is not None and ok.css("td")[2].text(strip=True) == "达标"
    finally:
        store.close()


def test_an_out_player_is_charted_but_not_judged(m209: tuple[Game, Store, Derivation]) -> None:
    _, store, d = m209
    data = report_data(d, 2, flag_decisions(store))
    outs = {**data.outs, "馄饨": (OPENS - timedelta(hours=3), "第1夜出局")}
    tree = page(render_report(replace(data, outs=outs)))
    bar = tree.css_first('#posts-chart rect.bar[data-player="馄饨"]')
    assert bar is not None
    assert "out" in (bar.attributes["class"] or "")
    row = next(r for r in tree.css("#post-table tbody tr") if r.css("td")[0].text() == "馄饨")
    assert "已出局" in row.text()


# --------------------------------------------------------------------------- flags and cards


def test_flags_show_their_status_open_confirmed_dismissed(fresh: Fresh) -> None:
    game, store, d = fresh()
    ids = {f.player: f.id for f in d.flags if f.kind.value == "qianshui"}
    # m209.txt:716 "5、潜水（以下行为均固定判罚一张“黄牌”）"
    assert set(ids) == {"馄饨", "面条"}
    store.db.table("flag_decisions").insert_all(
        [
            {
                "flag_id": ids["馄饨"],
                "status": "confirmed",
                "card": "黄牌",
                "why": None,
                "decided_at": AFTER.isoformat(),
            },
            {
                "flag_id": ids["面条"],
                "status": "dismissed",
                "card": None,
                "why": "请假已获导演批准",
                "decided_at": AFTER.isoformat(),
            },
        ]
    )
    store.db.table("card_events").insert(
        {
            "player": "馄饨",
            "colour": "黄牌",
            "reason": "第2天潜水",
            "at": CLOSES.isoformat(),
            "source": ids["馄饨"],
            "recorded_at": AFTER.isoformat(),
        }
    )
    d = derive(game, store, as_of=AFTER)
    tree = page(render_report(report_data(d, 2, flag_decisions(store))))
    rows = {r.attributes["data-flag"]: r for r in tree.css("#flag-table tr.flag")}
    assert set(rows) == {f.id for f in d.flags if f.day == 2}
    assert "已确认" in rows[ids["馄饨"]].text()
    assert "已驳回" in rows[ids["面条"]].text()
    assert "请假已获导演批准" in rows[ids["面条"]].text()
    assert all("潜水" in rows[i].text() for i in ids.values())
    no_vote = [f.id for f in d.flags if f.kind.value == "no-vote"]
    assert all("待确认" in rows[i].text() for i in no_vote)
    # the ledger shows the confirmed card
    ledger = tree.css_first('#card-table tr[data-player="馄饨"]')
    assert ledger is not None
    assert [td.text(strip=True) for td in ledger.css("td.num")] == ["0", "1", "0"]
    assert "第2天潜水" in ledger.text()


def test_no_cards_yet_says_so(m209_html: str) -> None:
    assert "还没有任何牌" in text_of(page(m209_html), "#cards")


# --------------------------------------------------------------------------- the command


def write_game_file(tmp_path: Path, game: Game) -> Path:
    lines = [
        "[game]",
        f'id = "{game.game.id}"',
        f'title = "{game.game.title}"',
        f'ruleset = "{game.game.ruleset}"',
        'timezone = "Asia/Shanghai"',
        "[forum]",
        f'base_url = "{game.forum.base_url}"',
        "[director]",
        'names = ["导演"]',
        "uids = [100]",
    ]
    for name, uid in PLAYERS:
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        lines += ["[[players]]", f'name = "{escaped}"', f"uid = {uid}"]
    lines += [
        "[[days]]",
        "day = 2",
        f"opens = {OPENS.isoformat()}",
        f"closes = {CLOSES.isoformat()}",
        f"discussion = {DISCUSSION}",
        f"vote = {VOTE}",
        "sheriff_election = false",
    ]
    path = tmp_path / "game.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_bansha_report_writes_the_page(tmp_path: Path, fresh: Fresh) -> None:
    game, store, _ = fresh()
    store.close()  # the command opens the store itself
    game_file = write_game_file(tmp_path, game)
    out = tmp_path / "out" / "day2.html"
    result = CliRunner().invoke(
        cli,
        [
            "report",
            str(game_file),
            "--db",
            str(tmp_path / "game.db"),
            "--day",
            "2",
            "--html",
            str(out),
            "--as-of",
            AFTER.isoformat(),
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output == f"已写入第 2 天的报告：{out}\n"
    tree = page(out.read_text(encoding="utf-8"))
    assert text_of(tree, "#outcome") == "出局：包子"
    assert len(tree.css("#vote-table tr.vote")) == len(VOTES)


def test_bansha_report_unknown_day_is_one_chinese_line(tmp_path: Path, fresh: Fresh) -> None:
    game, store, _ = fresh()
    store.close()  # the command opens the store itself
    game_file = write_game_file(tmp_path, game)
    result = CliRunner().invoke(
        cli,
        [
            "report",
            str(game_file),
            "--db",
            str(tmp_path / "game.db"),
            "--day",
            "7",
            "--html",
            str(tmp_path / "x.html"),
        ],
    )
    assert result.exit_code == 1
    assert result.output == "错误：游戏文件中没有第 7 天\n"
    assert not (tmp_path / "x.html").exists()


def test_write_report_replaces_the_file_whole(
    tmp_path: Path, m209: tuple[Game, Store, Derivation]
) -> None:
    game, store, _ = m209
    target = tmp_path / "r.html"
    target.write_text("old", encoding="utf-8")
    write_report(game, store, day=2, as_of=AFTER, path=target)
    html = target.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>")
    assert html.rstrip().endswith("</html>")
    assert [p.name for p in tmp_path.iterdir()] == ["r.html"]  # no temporary file left


def test_same_data_same_page(m209: tuple[Game, Store, Derivation]) -> None:
    _, store, d = m209
    data: ReportData = report_data(d, 2, flag_decisions(store))
    assert render_report(data) == render_report(data)


@pytest.mark.parametrize(
    "attack",
    [
        "{{ ''.__class__.__mro__ }}",
        "{{ cycler.__init__.__globals__.os }}",
        "{% for v in votes %}{{ v.__class__ }}{% endfor %}{{ title.__class__ }}",
    ],
)
def test_the_report_template_renders_in_the_sandbox(
    m209: tuple[Game, Store, Derivation], tmp_path: Path, attack: str
) -> None:
    from pipeline.drafts.report import ReportError

    _, store, d = m209
    (tmp_path / "report.html.j2").write_text(attack, encoding="utf-8")
    with pytest.raises(ReportError) as err:
        render_report(report_data(d, 2, flag_decisions(store)), templates=tmp_path)
    assert str(err.value) == (
        f"报告模板 {tmp_path / 'report.html.j2'} 试图使用模板中不允许的内部属性或方法，已拒绝生成"
    )


def test_a_missing_report_template_is_said_in_chinese(
    m209: tuple[Game, Store, Derivation], tmp_path: Path
) -> None:
    from pipeline.drafts.report import ReportError

    _, store, d = m209
    with pytest.raises(ReportError, match="找不到报告模板"):
        render_report(report_data(d, 2, flag_decisions(store)), templates=tmp_path)
