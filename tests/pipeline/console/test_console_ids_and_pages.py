"""Ids the store cannot hold are unknown pages, an oversized edit comes back in its box, and
the pages say times, sources and commands as a director reads them.

- An id of 2^63 or more (or anything not a number) on any route is 404, like an unknown id,
  in Chinese, never a 500 with a traceback.
- A draft edit bigger than the forum's limit — even far bigger than a form field usually may
  be — is refused in Chinese and the text stays in the box.
- The overview names the rule set once ("让子弹飞（m135）"); the night page shows times as
  ``12-01 22:35``, where an action came from as 控制台/命令行/文件 and the file's name, and its
  hints name the game's own file instead of ``GAME.toml``."""

from __future__ import annotations

import html
import re

import pytest

from tests.pipeline.console.support import (
    MORNING,
    TOKEN,
    Tab,
    bansha,
    draft_state,
    make_app,
    result_draft,
)

GID = "m135-demo"
HUGE = str(2**63)
ISO_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


@pytest.mark.parametrize("n", [HUGE, str(2**63 - 1), str(10**30), "abc", "-1", "1.5"])
def test_an_id_the_store_cannot_hold_is_404_everywhere(morning, tab_for, n):
    app = make_app(morning)
    tab = tab_for(app)
    assert tab.get(f"/g/{GID}/drafts").status_code == 200
    for path in (
        f"/g/{GID}/drafts/{n}",
        f"/g/{GID}/night/{n}",
        f"/g/{GID}/day/{n}",
        f"/g/{GID}/day/{n}/why?player=包子",
    ):
        r = tab.client.get(path)
        assert r.status_code == 404, (path, r.status_code)
        assert "没有这个页面" in r.text, path
    for path in (
        f"/g/{GID}/drafts/{n}/approve",
        f"/g/{GID}/drafts/{n}/edit",
        f"/g/{GID}/night/{n}/add",
    ):
        r = tab.post(path, {"body": "x", "why": "y"})
        assert r.status_code == 404, path
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    for what in ("approve", "reject"):
        r = tab.client.post(f"/api/games/{GID}/drafts/{n}/{what}", headers=bearer)
        assert r.status_code == 404 and r.json()["error"] == "没有这个接口或编号"


def test_an_unknown_id_within_range_is_404_too(morning, tab_for):
    tab = tab_for(make_app(morning))
    r = tab.client.get(f"/g/{GID}/drafts/999999999999999999")
    assert r.status_code == 404 and "999999999999999999" in r.text
    # the demo has days 1 and 2: nights 0, 1 and 2; night 3 needs day 3 in the game file
    assert tab.get(f"/g/{GID}/night/2").status_code == 200
    for n in ("3", "999999999999999999"):
        r = tab.client.get(f"/g/{GID}/night/{n}")
        assert r.status_code == 404
        assert f"游戏文件中没有第{n}晚" in html.unescape(r.text)
        r = tab.post(f"/g/{GID}/night/{n}/add", {"actor": "包子", "skill": "预言"})
        assert r.status_code == 404
    r = tab.client.post(
        f"/api/games/{GID}/drafts/999999999999999999/approve",
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert r.status_code == 404


def test_an_edit_far_over_the_limit_answers_in_chinese_and_keeps_the_text(morning, tab_for):
    tab = tab_for(make_app(morning))
    draft = result_draft(morning)
    page = tab.get(f"/g/{GID}/drafts/{draft['id']}")
    body_hash = re.search(r'name="body_hash" value="([0-9a-f]+)"', page.text).group(1)
    text = "第2天投票结果（导演改过）" + "长" * 400_000 + "结尾的一句"  # ~1.2 MB in UTF-8
    assert len(text.encode("utf-8")) > 1024 * 1024
    r = tab.post(f"/g/{GID}/drafts/{draft['id']}/edit", {"body": text, "body_hash": body_hash})
    assert r.status_code == 409
    page = html.unescape(r.text)
    assert "超过论坛的长度上限 10000 字节；请删减后再保存" in page
    assert "Field exceeded" not in page
    box = re.search(r'<textarea id="body"[^>]*>(.*?)</textarea>', r.text, re.S).group(1)
    assert html.unescape(box).strip("\n") == text  # the director's text is still in the box
    assert draft_state(morning, draft["id"]) == "pending"
    store = morning.store()
    try:
        body = store.db.execute("SELECT body FROM drafts WHERE id = ?", [draft["id"]]).fetchone()
    finally:
        store.close()
    assert body[0] == draft["body"]


def test_a_form_beyond_what_the_console_reads_says_so_in_chinese(morning, tab_for):
    tab = tab_for(make_app(morning))
    draft = result_draft(morning)
    r = tab.post(f"/g/{GID}/drafts/{draft['id']}/edit", {"body": "x" * (17 * 1024 * 1024)})
    assert r.status_code == 413 and "提交的内容超过 16 MB" in html.unescape(r.text)
    assert draft_state(morning, draft["id"]) == "pending"
    # the login form reads far less, before any login
    fresh = Tab(make_app(morning))
    fresh.get("/login")
    r = fresh.client.post("/login", data={"csrf": fresh.csrf, "token": "x" * 200_000})
    assert r.status_code == 413 and "提交的内容太大" in html.unescape(r.text)


def test_the_overview_names_the_rule_set_once(morning, tab_for):
    tab = tab_for(make_app(morning))
    text = html.unescape(tab.get("/").text)
    assert "<dd>让子弹飞（m135）</dd>" in text
    assert "（m135）（m135）" not in text


def test_the_night_page_hint_names_the_game_file(morning, tab_for):
    tab = tab_for(make_app(morning))
    text = html.unescape(tab.get(f"/g/{GID}/night/1").text)
    assert "还没有结算第1天，请先结算它（bansha day resolve game.toml --day 1）" in text
    assert "GAME.toml" not in text


def test_the_night_page_shows_times_and_sources_as_directors_read_them(morning, tab_for, tmp_path):
    game = str(morning.game)
    bansha(morning.env, "night", "resolve", game, "--night", "0")
    bansha(morning.env, "day", "resolve", game, "--day", "1", "--as-of", MORNING.isoformat())
    tab = tab_for(make_app(morning))
    tab.get(f"/g/{GID}/night/1")
    r = tab.post(
        f"/g/{GID}/night/1/add",
        {"actor": "汤圆", "skill": "杀人", "target": "烧卖", "at": "2026-12-01T22:35"},
    )
    assert r.status_code == 303, r.text
    bansha(
        morning.env,
        "night",
        "add",
        game,
        "--night",
        "1",
        "--actor",
        "包子",
        "--skill",
        "预言",
        "--target",
        "饺子",
        "--at",
        "2026-12-01T23:05:00+08:00",
    )
    actions = tmp_path / "第一晚.toml"
    actions.write_text(
        'night = 1\n[[actions]]\nactor = "馄饨"\nskill = "毒药"\ntargets = ["饺子"]\n', "utf-8"
    )
    bansha(morning.env, "night", "resolve", game, "--night", "1", "--actions", str(actions))
    page = tab.get(f"/g/{GID}/night/1")
    text = html.unescape(page.text)
    row = {
        who: re.search(rf"<li>#\d+ {who}.*?</small>", text, re.S).group(0)
        for who in ("汤圆", "包子", "馄饨")
    }
    assert '<span class="when">12-01 22:35</span>' in row["汤圆"]
    assert "来源：控制台" in row["汤圆"]
    assert '<span class="when">12-01 23:05</span>' in row["包子"]
    assert "来源：命令行" in row["包子"]
    assert "来源：文件 第一晚.toml" in row["馄饨"]
    assert str(tmp_path) not in text  # a file is named, its absolute path is not shown
    assert "来源：console" not in text and "来源：cli" not in text
    shown = text.split('id="preview"')[0].split("<h2>记录一条行动</h2>")[0]
    assert not ISO_RE.search(shown), ISO_RE.search(shown)  # (the form's example may stay)
    assert re.search(r"这一晚已于 \d\d-\d\d \d\d:\d\d 结算并保存", text)
