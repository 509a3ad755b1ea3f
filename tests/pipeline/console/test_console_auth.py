"""Nothing without a login: the API answers 401 without the token, every
form refuses a missing or wrong CSRF token, logins are rate-limited, the session cookie is
HttpOnly and SameSite=Strict, and the token is stored only as a hash."""

from __future__ import annotations

import stat
from pathlib import Path

from pipeline.console.app import create_app
from pipeline.console.auth import LoginLimiter, hash_token, verify_token
from pipeline.console.cli import resolve_token
from tests.pipeline.console.support import (
    MORNING,
    TOKEN,
    TOKEN_HASH,
    Tab,
    draft_state,
    make_app,
    result_draft,
)


def test_api_without_a_token_is_401_and_changes_nothing(morning):
    app = make_app(morning)
    tab = Tab(app)
    draft = result_draft(morning)
    gid = "m135-demo"
    calls = [
        ("get", "/api/games"),
        ("get", f"/api/games/{gid}/drafts"),
        ("post", f"/api/games/{gid}/drafts/{draft['id']}/approve"),
        ("post", f"/api/games/{gid}/drafts/{draft['id']}/reject"),
    ]
    for headers in ({}, {"Authorization": "Bearer wrong-token-000000"}, {"Authorization": TOKEN}):
        for method, path in calls:
            r = getattr(tab.client, method)(path, headers=headers)
            assert r.status_code == 401, (path, headers, r.text)
            assert r.headers["www-authenticate"].startswith("Bearer")
            assert "令牌" in r.json()["error"]
    # a logged-in session is not enough for the API either: only the Bearer token
    tab.login()
    r = tab.client.post(f"/api/games/{gid}/drafts/{draft['id']}/approve")
    assert r.status_code == 401
    assert draft_state(morning, draft["id"]) == "pending"


def test_api_with_the_token(morning):
    app = make_app(morning)
    tab = Tab(app)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    (game,) = tab.client.get("/api/games", headers=auth).json()
    assert {"id", "title", "ruleset", "drafts_pending", "flags_pending", "last_cycle"} <= set(game)
    assert game["id"] == "m135-demo" and game["ruleset"] == "m135"
    assert game["drafts_pending"] >= 1 and game["flags_pending"] >= 1
    drafts = tab.client.get("/api/games/m135-demo/drafts", headers=auth).json()
    draft = result_draft(morning)
    (row,) = [d for d in drafts["drafts"] if d["id"] == draft["id"]]
    assert row["state"] == "pending" and row["kind_zh"] == "投票结果" and row["urgent"] is True
    # reject needs a reason; approve names the version seen and moves it along the CLI's
    # state machine
    r = tab.client.post(f"/api/games/m135-demo/drafts/{draft['id']}/reject", headers=auth)
    assert r.status_code == 400 and "理由" in r.json()["error"]
    seen = {"body_hash": row["body_hash"]}
    path = f"/api/games/m135-demo/drafts/{draft['id']}/approve"
    r = tab.client.post(path, headers=auth, json=seen)
    assert r.status_code == 200 and r.json()["state"] == "approved"
    r = tab.client.post(path, headers=auth, json=seen)
    assert r.status_code == 409
    assert r.json()["error"] == f"不能批准第 {draft['id']} 号草稿：它已经批准过了"
    r = tab.client.post(
        f"/api/games/m135-demo/drafts/{draft['id']}/reject", headers=auth, json={"why": "再核对"}
    )
    assert r.status_code == 200 and r.json()["state"] == "rejected"
    assert r.json()["reject_why"] == "再核对"
    assert tab.client.get("/api/games/nope/drafts", headers=auth).status_code == 404


def test_pages_need_a_login(morning):
    app = make_app(morning)
    tab = Tab(app)
    draft = result_draft(morning)
    for path in (
        "/",
        "/g/m135-demo/drafts",
        f"/g/m135-demo/drafts/{draft['id']}",
        "/g/m135-demo/day/2",
    ):
        r = tab.client.get(path)
        assert r.status_code == 303 and r.headers["location"] == "/login", path
    r = tab.post(f"/g/m135-demo/drafts/{draft['id']}/approve", {"csrf": "x"})
    assert r.status_code == 401 and "请先登录" in r.text
    assert draft_state(morning, draft["id"]) == "pending"
    # a wrong token does not log in
    r = tab.login("not-the-token-at-all")
    assert r.status_code == 401 and "令牌不对" in r.text
    assert tab.client.get("/").status_code == 303


def test_a_link_from_a_notification_reloads_itself_to_send_the_cookie(morning):
    """A SameSite=Strict cookie is not sent when a chat app opens a link: the page reloads itself
    from the console (a meta refresh, no script), and then the session is there."""
    tab = Tab(make_app(morning))
    tab.login()
    r = tab.client.get("/g/m135-demo/drafts", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 200 and "等待处理的草稿" in r.text  # the cookie came: the page
    fresh = Tab(make_app(morning))
    r = fresh.client.get("/g/m135-demo/drafts?x=1", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 200
    assert '<meta http-equiv="refresh" content="0;url=/g/m135-demo/drafts?x=1">' in r.text
    assert "<script" not in r.text
    r = fresh.client.get("/g/m135-demo/drafts", headers={"Sec-Fetch-Site": "same-origin"})
    assert r.status_code == 303 and r.headers["location"] == "/login"  # no loop


def test_session_cookie_is_httponly_and_samesite_strict(morning):
    tab = Tab(make_app(morning))
    r = tab.login()
    assert r.status_code == 303 and r.headers["location"] == "/"
    cookie = r.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert TOKEN.lower() not in cookie  # the token itself is never in the cookie
    page = tab.get("/")
    assert page.status_code == 200 and "总览" in page.text
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp  # no script at all
    assert page.headers["cache-control"] == "no-store"


def test_every_form_refuses_a_missing_or_wrong_csrf_token(morning, tab_for):
    app = make_app(morning)
    tab = tab_for(app)
    draft = result_draft(morning)
    page = tab.get(f"/g/m135-demo/drafts/{draft['id']}")
    assert page.status_code == 200 and tab.csrf
    forms = [
        (f"/g/m135-demo/drafts/{draft['id']}/approve", {}),
        (f"/g/m135-demo/drafts/{draft['id']}/reject", {"why": "不要"}),
        (f"/g/m135-demo/drafts/{draft['id']}/edit", {"body": "改过的"}),
        ("/g/m135-demo/flags/dismiss", {"flag_id": "x", "day": "2", "why": "不算"}),
        ("/g/m135-demo/night/1/add", {"actor": "包子", "skill": "预言", "target": "饺子"}),
        ("/g/m135-demo/night/1/resolve", {}),
    ]
    for path, data in forms:
        for csrf in (None, "", "forged-token"):
            form = dict(data) if csrf is None else {**data, "csrf": csrf}
            r = tab.post(path, form, csrf=False)
            assert r.status_code == 403, (path, csrf)
            assert "表单校验失败（CSRF）" in r.text
    assert draft_state(morning, draft["id"]) == "pending"
    store = morning.store()
    try:
        assert store.db.execute("SELECT COUNT(*) FROM journal_actions").fetchone()[0] == 0
        assert store.db.execute("SELECT COUNT(*) FROM flag_decisions").fetchone()[0] == 0
    finally:
        store.close()
    # the login form too
    other = Tab(app)
    other.get("/login")
    r = other.client.post("/login", data={"csrf": "forged", "token": TOKEN})
    assert r.status_code == 403 and other.client.get("/").status_code == 303


def test_login_is_rate_limited(morning):
    ticks = [0.0]
    limiter = LoginLimiter(per_client=5, window_s=300, clock=lambda: ticks[0])
    app = make_app(morning, limiter=limiter)
    tab = Tab(app)
    for _ in range(5):
        assert tab.login("wrong-token-xxxxxxxx").status_code == 401
    # now even the right token is refused until the window has passed
    r = tab.login(TOKEN)
    assert r.status_code == 429 and "登录失败次数太多，请 5 分钟后再试" in r.text
    assert tab.client.get("/").status_code == 303
    # the API's Bearer check counts on the same limiter
    r = tab.client.get("/api/games", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 429 and "Retry-After" in r.headers
    ticks[0] = 301.0
    assert tab.login(TOKEN).status_code == 303


def test_the_limiter_is_bounded_and_locks_only_the_address_that_failed():
    ticks = [0.0]
    limiter = LoginLimiter(per_client=3, window_s=60, max_clients=4, clock=lambda: ticks[0])
    for i in range(10):
        for _ in range(3):
            limiter.failed(f"10.0.0.{i}")
    assert len(limiter._clients) == 4  # memory is bounded
    assert limiter.retry_after("10.0.0.9") > 0
    # thirty failures from elsewhere do not lock out the director's address
    assert limiter.retry_after("never-seen") == 0 and limiter.begin("never-seen") == 0
    ticks[0] = 61.0
    assert limiter.retry_after("10.0.0.9") == 0


def test_the_token_is_stored_only_as_a_hash(tmp_path, morning, capsys):
    spec = morning.spec()
    game_copy = tmp_path / "games" / "demo.toml"
    game_copy.parent.mkdir()
    game_copy.write_text(morning.game.read_text("utf-8"), "utf-8")
    from dataclasses import replace

    spec = replace(spec, path=game_copy)
    token_hash, shown, where = resolve_token([spec], new=False, env={})
    assert shown is not None and len(shown) >= 24
    path = game_copy.parent / "bansha-console.hash"
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = path.read_text("utf-8")
    assert shown not in stored and stored.strip() == token_hash
    assert verify_token(shown, stored) and not verify_token(shown + "x", stored)
    assert "只保存" in where or "不保存" in where
    # the next start uses the stored hash and shows no token
    again, shown2, _ = resolve_token([spec], new=False, env={})
    assert again == token_hash and shown2 is None
    # --new-token replaces it: the old token stops working
    newer, shown3, _ = resolve_token([spec], new=True, env={})
    assert shown3 and not verify_token(shown, newer) and verify_token(shown3, newer)
    # a token from the environment is never written anywhere
    path.unlink()
    env_hash, shown4, where = resolve_token([spec], new=False, env={"BANSHA_CONSOLE_TOKEN": TOKEN})
    assert shown4 is None and verify_token(TOKEN, env_hash) and not path.exists()
    assert "BANSHA_CONSOLE_TOKEN" in where


def test_a_restart_logs_everybody_out(morning):
    first = Tab(create_app([morning.spec()], TOKEN_HASH, clock=lambda: MORNING))
    assert first.login().status_code == 303
    cookie = first.client.cookies.get("bansha_console")
    second = Tab(create_app([morning.spec()], hash_token(TOKEN), clock=lambda: MORNING))
    second.client.cookies.set("bansha_console", cookie)
    assert second.client.get("/").status_code == 303  # signed by the old process: refused


def test_token_hash_file_is_beside_the_game(tmp_path):
    from pipeline.console.auth import token_file_for

    assert token_file_for(tmp_path / "g.toml") == (tmp_path / "bansha-console.hash").resolve()
    assert isinstance(token_file_for(Path("x.toml")), Path)
