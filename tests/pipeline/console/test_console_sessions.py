"""Sessions the console ends itself, and a login limit that holds under load.

A logout ends the session on the console, not only in the browser: a copy of the cookie taken
before it opens nothing (no page, no approval, no night actions). 退出所有设备 ends every
session, and so does a new token (``bansha serve --new-token``), even while the console runs.
Tries are counted per address when they start, before the slow scrypt check: sixty wrong
logins at once see at most five judged, the same for Bearer tokens; failures from other
addresses never lock the director out. ``BANSHA_CONSOLE_TOKEN`` must be a strong token."""

from __future__ import annotations

import html
import threading
from collections import Counter
from dataclasses import replace
from typing import Any

import httpx
import pytest

from pipeline.console import auth
from pipeline.console.app import create_app
from pipeline.console.auth import LoginLimiter, TokenError, env_token, new_token, token_weakness
from pipeline.console.cli import resolve_token
from tests.pipeline.console.support import (
    CSRF_RE,
    MORNING,
    TOKEN,
    TOKEN_HASH,
    Served,
    Tab,
    draft_state,
    make_app,
    result_draft,
)

GID = "m135-demo"


def _copy_of(tab: Tab, app: Any) -> Tab:
    """Another browser holding a copy of ``tab``'s cookie (and its CSRF token)."""
    thief = Tab(app)
    thief.client.cookies.set("bansha_console", tab.client.cookies.get("bansha_console"))
    thief.csrf = tab.csrf
    return thief


def test_a_copied_cookie_opens_nothing_after_logout(morning, tab_for):
    app = make_app(morning)
    tab = tab_for(app)
    draft = result_draft(morning)
    assert tab.get("/").status_code == 200
    thief = _copy_of(tab, app)
    assert thief.get(f"/g/{GID}/night/1").status_code == 200  # the copy works while logged in
    r = tab.post("/logout")
    assert r.status_code == 303 and r.headers["location"] == "/login"
    assert "已退出登录" in html.unescape(tab.follow(r).text)
    # the copy taken before the logout: no page, no approval, no night actions
    for path in ("/", f"/g/{GID}/drafts/{draft['id']}", f"/g/{GID}/night/1", f"/g/{GID}/day/2"):
        r = thief.client.get(path)
        assert r.status_code == 303 and r.headers["location"] == "/login", path
    r = thief.post(f"/g/{GID}/drafts/{draft['id']}/approve", {"body_hash": draft["body_hash"]})
    assert r.status_code == 401 and "请先登录" in r.text
    r = thief.post(f"/g/{GID}/night/1/add", {"actor": "包子", "skill": "预言", "target": "饺子"})
    assert r.status_code == 401
    assert draft_state(morning, draft["id"]) == "pending"
    store = morning.store()
    try:
        assert store.db.execute("SELECT COUNT(*) FROM journal_actions").fetchone()[0] == 0
    finally:
        store.close()
    # logging in again opens a new session; the old copy stays dead
    assert tab.login().status_code == 303 and tab.get("/").status_code == 200
    assert thief.client.get("/").status_code == 303


def test_log_out_everywhere_ends_every_session(morning, tab_for):
    app = make_app(morning)
    phone, laptop = tab_for(app), tab_for(app)
    page = phone.get("/")
    assert 'action="/logout/all"' in page.text and "退出所有设备" in page.text
    assert laptop.get("/").status_code == 200
    r = phone.post("/logout/all")
    assert r.status_code == 303
    assert "已退出所有设备（结束了 2 个会话）" in html.unescape(phone.follow(r).text)
    assert phone.client.get("/").status_code == 303
    assert laptop.client.get("/").status_code == 303
    # without a valid CSRF token nobody is logged out
    again = tab_for(app)
    r = again.post("/logout/all", {"csrf": "forged"}, csrf=False)
    assert r.status_code == 403 and again.get("/").status_code == 200


def test_a_new_token_ends_every_session_while_the_console_runs(morning, tmp_path):
    spec = morning.spec()
    game = tmp_path / "games" / "demo.toml"
    game.parent.mkdir()
    game.write_text(morning.game.read_text("utf-8"), "utf-8")
    spec = replace(spec, path=game)
    token_hash, first, _ = resolve_token([spec], new=False, env={})
    assert first is not None
    app = create_app(
        [spec],
        token_hash,
        clock=lambda: MORNING,
        token_file=auth.token_file_for(game),
    )
    tab = Tab(app)
    assert tab.login(first).status_code == 303 and tab.get("/").status_code == 200
    bearer = {"Authorization": f"Bearer {first}"}
    assert tab.client.get("/api/games", headers=bearer).status_code == 200
    # `bansha serve --new-token` (another shell) writes a new hash beside the game file
    _hash, second, _ = resolve_token([spec], new=True, env={})
    assert second is not None and second != first
    assert tab.client.get("/").status_code == 303  # the session of the old token is over
    assert tab.login(first).status_code == 401  # the old token no longer logs in
    assert tab.client.get("/api/games", headers=bearer).status_code == 401
    assert tab.login(second).status_code == 303 and tab.get("/").status_code == 200
    ok = tab.client.get("/api/games", headers={"Authorization": f"Bearer {second}"})
    assert ok.status_code == 200


def test_a_session_is_held_by_the_console_not_by_the_cookie(morning, tab_for):
    """The cookie is only a signed session id: the console's table decides."""
    app = make_app(morning)
    tab = tab_for(app)
    console = app.state.console
    assert len(console.sessions) == 1
    console.sessions.close_all()
    assert tab.client.get("/").status_code == 303


# --------------------------------------------------------------------------- the rate limit


def _at_once(n: int, fn: Any) -> Counter[int]:
    """``fn`` from ``n`` threads released together; the status codes."""
    gate = threading.Barrier(n)
    codes: list[int] = []
    lock = threading.Lock()

    def run() -> None:
        gate.wait()
        code = fn()
        with lock:
            codes.append(code)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return Counter(codes)


@pytest.fixture
def served(morning):
    with Served(lambda port: make_app(morning, port=port)) as s:
        yield s


def test_sixty_wrong_logins_at_once_see_at_most_five_judged(served):
    with httpx.Client(base_url=served.url) as c:
        page = c.get("/login")
        csrf = CSRF_RE.search(page.text).group(1)
        cookie = c.cookies.get("bansha_console")

    def wrong() -> int:
        r = httpx.post(
            served.url + "/login",
            data={"csrf": csrf, "token": "wrong-token-but-long-enough"},
            cookies={"bansha_console": cookie},
            timeout=120,
        )
        return r.status_code

    codes = _at_once(60, wrong)
    assert sum(codes.values()) == 60
    assert codes[401] <= 5 and codes[429] >= 55, codes  # judged: 401 令牌不对
    # the same address is refused even the right token until the window has passed
    r = httpx.post(
        served.url + "/login",
        data={"csrf": csrf, "token": TOKEN},
        cookies={"bansha_console": cookie},
    )
    assert r.status_code == 429 and "登录失败次数太多" in r.text


def test_a_hundred_and_twenty_wrong_bearer_tokens_at_once_see_at_most_five_judged(served):
    def wrong() -> int:
        r = httpx.get(
            served.url + "/api/games",
            headers={"Authorization": "Bearer wrong-token-but-long-enough"},
            timeout=120,
        )
        return r.status_code

    codes = _at_once(120, wrong)
    assert codes[401] <= 5 and codes[429] >= 115, codes


def test_the_director_is_not_locked_out_by_failures_from_elsewhere(morning):
    """Thirty-five failed logins from seven other addresses: the director's own address still
    logs in with the right token (the lockout is per address)."""
    ticks = [0.0]
    app = make_app(morning, limiter=LoginLimiter(clock=lambda: ticks[0]))
    from starlette.testclient import TestClient

    for i in range(7):
        other = Tab(app)
        other.client = TestClient(
            app, base_url="http://127.0.0.1:8765", client=(f"203.0.113.{i}", 4000)
        )
        for _ in range(5):
            assert other.login("wrong-token-but-long-enough").status_code == 401
        assert other.login(TOKEN).status_code == 429  # that address is locked
    director = Tab(app)
    assert director.login(TOKEN).status_code == 303
    r = director.client.get("/api/games", headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200


def test_a_right_bearer_token_is_not_counted_against_its_address(morning):
    app = make_app(morning)
    tab = Tab(app)
    auth_ok = {"Authorization": f"Bearer {TOKEN}"}
    for _ in range(12):
        assert tab.client.get("/api/games", headers=auth_ok).status_code == 200
    for _ in range(4):
        r = tab.client.get("/api/games", headers={"Authorization": "Bearer wrong-token-0000000"})
        assert r.status_code == 401
    assert tab.client.get("/api/games", headers=auth_ok).status_code == 200


# --------------------------------------------------------------------------- strong tokens


@pytest.mark.parametrize(
    ("token", "why"),
    [
        ("Abcdef123456", "太短（12 个字符，至少要 20 个）"),
        ("abababababababababababab", "重复的字符太多（只有 2 种不同的字符，至少要 10 种）"),
        ("abcdefghijklmnopqrst", "太容易猜（约 94 位，至少要 100 位"),
    ],
)
def test_a_weak_console_token_is_refused_in_chinese(token, why):
    with pytest.raises(TokenError) as caught:
        env_token({"BANSHA_CONSOLE_TOKEN": token})
    message = str(caught.value)
    assert why in message and "BANSHA_CONSOLE_TOKEN" in message
    assert "secrets.token_urlsafe(24)" in message  # says what to use
    assert token not in message  # the token itself is never printed


def test_strong_tokens_are_accepted():
    assert token_weakness(new_token()) is None
    assert token_weakness(TOKEN) is None
    assert env_token({"BANSHA_CONSOLE_TOKEN": f"  {TOKEN} "}) == TOKEN
    assert TOKEN_HASH.startswith("scrypt$")
