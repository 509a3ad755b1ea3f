"""``bansha status`` (the overview in the terminal, ``--json`` too) and
``bansha serve`` (binds 127.0.0.1 by default, one or more games or a folder, ``--db`` only for
one game, the token printed once)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.console.api import games_json
from pipeline.console.auth import verify_token
from pipeline.console.cli import serve
from pipeline.console.status import status
from pipeline.cycle import CycleReport
from pipeline.notify import notify_after_cycle
from tests.pipeline.console.support import GAME, MORNING, Tab


def run(cmd, args, env=None):
    return CliRunner().invoke(cmd, args, env=env or {}, catch_exceptions=False)


def test_status_prints_the_overview(morning):
    out = run(status, [str(morning.game)], morning.env)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0] == "[M135]『让子弹飞』（m135-demo，规则：让子弹飞（m135））"
    text = out.output
    for label in (
        "阶段：",
        "下一次关门：",
        "待批准草稿：",
        "待确认违规标记：",
        "上一轮：",
        "论坛：",
    ):
        assert label in text
    assert re.search(r"待批准草稿：\d+ 份", text)
    assert "论坛：可以访问" in text
    # after a failed cycle is recorded, the overview says so, in Chinese
    store = morning.store()
    try:
        report = CycleReport(errors=["帖子 2011：论坛无法连接（连接被拒绝）"], down="论坛无法连接")
        notify_after_cycle(morning.spec().game, store, report, MORNING, env={})
    finally:
        store.close()
    text = run(status, [str(morning.game)], morning.env).output
    assert "上一轮：12-03 09:00 失败：帖子 2011：论坛无法连接（连接被拒绝）" in text
    assert "论坛：无法访问（12-03 09:00）：论坛无法连接" in text
    # --json: what GET /api/games serves
    data = json.loads(run(status, [str(morning.game), "--json"], morning.env).output)
    assert data == json.loads(json.dumps(games_json([morning.spec()]), ensure_ascii=False))
    (game,) = data
    assert game["last_cycle"]["ok"] is False and game["forum"]["reachable"] is False
    api = Tab(_app(morning)).client.get(
        "/api/games", headers={"Authorization": "Bearer console-test-token-0123456789"}
    )
    assert api.json()[0]["last_cycle"] == game["last_cycle"]


def _app(morning):
    from tests.pipeline.console.support import make_app

    return make_app(morning)


def test_status_of_a_folder_and_its_refusals(tmp_path):
    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "a.toml").write_text(GAME.read_text("utf-8"), "utf-8")
    other = GAME.read_text("utf-8").replace('id = "m135-demo"', 'id = "m135-other"')
    (folder / "b.toml").write_text(other, "utf-8")
    (folder / "night1.toml").write_text('night = 1\n[[actions]]\nactor = "x"\nskill = "y"\n')
    out = run(status, [str(folder)])
    assert out.exit_code == 0, out.output
    assert "m135-demo" in out.output and "m135-other" in out.output
    assert out.output.count("还不存在（先运行 bansha init") == 2
    out = run(status, [str(folder), "--db", str(tmp_path / "x.db")])
    assert out.exit_code == 1 and "--db 只能用于一局游戏（现在有 2 个游戏文件）" in out.output
    out = run(status, [str(folder)], {"BANSHA_DB": str(tmp_path / "x.db")})
    assert out.exit_code == 1 and "环境变量 BANSHA_DB 只能用于一局游戏" in out.output
    (folder / "c.toml").write_text(GAME.read_text("utf-8"), "utf-8")
    out = run(status, [str(folder)])
    assert out.exit_code == 1 and "的 game.id 相同（m135-demo）" in out.output
    out = run(status, [str(tmp_path / "missing.toml")])
    assert out.exit_code == 1 and "找不到游戏文件" in out.output


@pytest.fixture
def captured(monkeypatch):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    return calls


def test_serve_binds_localhost_and_prints_the_token_once(tmp_path, captured):
    game = tmp_path / "demo.toml"
    game.write_text(GAME.read_text("utf-8"), "utf-8")
    out = run(serve, [str(game)])
    assert out.exit_code == 0, out.output
    (app, kw) = captured[0]
    assert kw["host"] == "127.0.0.1" and kw["port"] == 8765
    assert kw["access_log"] is False
    token = re.search(r"登录令牌（只显示这一次，请妥善保存）：(\S+)", out.output).group(1)
    stored = (tmp_path / "bansha-console.hash").read_text("utf-8")
    assert token not in stored and verify_token(token, stored)
    assert "http://127.0.0.1:8765/" in out.output
    assert "注意：正在监听" not in out.output
    # the printed token logs in to the app that was started
    tab = Tab(app)
    assert tab.login(token).status_code == 303
    # the second start shows no token
    out = run(serve, [str(game), "--port", "9000"])
    assert "登录令牌（只显示这一次" not in out.output and "忘了就用 --new-token" in out.output
    assert captured[1][1]["port"] == 9000


def test_serve_on_a_lan_warns_and_refuses_db_for_two_games(tmp_path, captured):
    game = tmp_path / "demo.toml"
    game.write_text(GAME.read_text("utf-8"), "utf-8")
    out = CliRunner().invoke(serve, [str(game), "--host", "0.0.0.0"], env={})
    assert out.exit_code == 0
    assert "注意：正在监听 0.0.0.0，同一网络中的设备都能连上（明文 HTTP）" in out.output
    other = tmp_path / "other.toml"
    other.write_text(GAME.read_text("utf-8").replace("m135-demo", "m135-b"), "utf-8")
    out = CliRunner().invoke(serve, [str(game), str(other), "--db", "x.db"], env={})
    assert out.exit_code == 1 and "--db 只能用于一局游戏" in out.output
    strong = {"BANSHA_CONSOLE_TOKEN": "Strong-env-token-0123456789"}
    out = CliRunner().invoke(serve, [str(game), "--new-token"], env=strong)
    assert out.exit_code == 1 and "不能同时用 --new-token" in out.output
    out = CliRunner().invoke(serve, [str(game)], env={"BANSHA_CONSOLE_TOKEN": "short"})
    assert out.exit_code == 1 and "太短（5 个字符，至少要 20 个）" in out.output
    assert "short" not in out.output  # the token itself is never printed
    assert len(captured) == 1


def test_serve_help_is_chinese():
    out = CliRunner().invoke(serve, ["--help"])
    assert "导演控制台" in out.output and "--host" in out.output
    assert Path(GAME).is_file()
