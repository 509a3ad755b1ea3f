"""The console answers only the addresses it is served as, and refuses forms from other sites.

A page the director visits can point a name of its own at 127.0.0.1 (DNS rebinding) and read
the console through it: the browser then sends that name as ``Host``. Only 127.0.0.1,
localhost and [::1] with the port, the ``--host`` address and the ``--public-url`` address
are answered; any other ``Host`` is 400 with a Chinese line. A state-changing request whose
``Origin`` (or ``Sec-Fetch-Site``) names another site is refused (403) even with a right CSRF
token, as a second line behind it."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from pipeline.console.cli import serve
from pipeline.console.hosts import HostPolicy
from tests.pipeline.console.support import GAME, TOKEN, Tab, draft_state, make_app, result_draft

GID = "m135-demo"


def _get(app, host, path="/login", **headers):
    client = TestClient(app, base_url="http://127.0.0.1:8765", follow_redirects=False)
    return client.get(path, headers={"Host": host, **headers})


def test_only_the_served_addresses_are_answered(morning):
    app = make_app(morning)
    for host in ("127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765"):
        assert _get(app, host).status_code == 200, host
    for host in (
        "rebind.attacker.example:8765",  # DNS rebinding: the attacker's name on 127.0.0.1
        "rebind.attacker.example",
        "127.0.0.1:9999",  # another port
        "127.0.0.1",
        "localhost.attacker.example:8765",
        "127.0.0.1:8765@evil.example",
        "",
    ):
        r = _get(app, host)
        assert r.status_code == 400, host
        assert "不认识的主机名" in r.text and "--public-url" in r.text
        assert "127.0.0.1:8765" in r.text  # says which addresses it answers
    # the API and a logged-in page alike: nothing is read through a rebound name
    r = _get(app, "rebind.attacker.example:8765", "/api/games", Authorization=f"Bearer {TOKEN}")
    assert r.status_code == 400 and "m135" not in r.text


def test_host_and_public_url_name_more_addresses(morning):
    proxied = make_app(morning, public_url="https://console.example.org/")
    assert _get(proxied, "console.example.org").status_code == 200
    assert _get(proxied, "console.example.org:443").status_code == 200
    assert _get(proxied, "127.0.0.1:8765").status_code == 200
    assert _get(proxied, "other.example.org").status_code == 400
    lan = make_app(morning, host="192.168.1.20", port=9000)
    assert _get(lan, "192.168.1.20:9000").status_code == 200
    assert _get(lan, "192.168.1.21:9000").status_code == 400
    # every address (0.0.0.0): an IP address with the port (a phone on the LAN), never a name
    wild = make_app(morning, host="0.0.0.0")
    assert _get(wild, "192.168.1.20:8765").status_code == 200
    assert _get(wild, "[fe80::1]:8765").status_code == 200
    assert _get(wild, "192.168.1.20:8766").status_code == 400
    assert _get(wild, "rebind.attacker.example:8765").status_code == 400


def test_a_form_from_another_site_is_refused_even_with_the_csrf_token(morning, tab_for):
    app = make_app(morning)
    tab = tab_for(app)
    draft = result_draft(morning)
    path = f"/g/{GID}/drafts/{draft['id']}/approve"
    assert tab.get(f"/g/{GID}/drafts/{draft['id']}").status_code == 200
    form = {"csrf": tab.csrf, "body_hash": draft["body_hash"]}
    for headers in (
        {"Origin": "https://attacker.example"},
        {"Origin": "http://rebind.attacker.example:8765"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
        {"Origin": "http://127.0.0.1:8765", "Sec-Fetch-Site": "cross-site"},
    ):
        r = tab.client.post(path, data=form, headers=headers)
        assert r.status_code == 403, headers
        assert "拒绝了来自别的网站的提交" in r.text
        assert draft_state(morning, draft["id"]) == "pending"
    # the console's own page: its Origin (and Sec-Fetch-Site: same-origin) pass
    own = {"Origin": "http://127.0.0.1:8765", "Sec-Fetch-Site": "same-origin"}
    r = tab.client.post(path, data=form, headers=own)
    assert r.status_code == 303 and draft_state(morning, draft["id"]) == "approved"


def test_the_api_and_the_login_are_guarded_by_origin_too(morning):
    app = make_app(morning)
    tab = Tab(app)
    draft = result_draft(morning)
    r = tab.client.post(
        f"/api/games/{GID}/drafts/{draft['id']}/approve",
        headers={"Authorization": f"Bearer {TOKEN}", "Origin": "https://attacker.example"},
    )
    assert r.status_code == 403 and draft_state(morning, draft["id"]) == "pending"
    tab.get("/login")
    r = tab.client.post(
        "/login",
        data={"csrf": tab.csrf, "token": TOKEN},
        headers={"Origin": "https://attacker.example"},
    )
    assert r.status_code == 403 and tab.client.get("/").status_code == 303
    # curl with the token and no Origin: the token alone decides
    r = tab.client.post(
        f"/api/games/{GID}/drafts/{draft['id']}/approve",
        headers={"Authorization": f"Bearer {TOKEN}"},
        json={"body_hash": draft["body_hash"]},
    )
    assert r.status_code == 200


def test_pages_send_their_origin_to_the_console_and_no_referrer_elsewhere(morning, tab_for):
    tab = tab_for(make_app(morning))
    page = tab.get("/")
    # same-origin: the browser names the console as Origin on its own forms (no-referrer
    # would make that Origin "null"); other sites still get no referrer
    assert page.headers["referrer-policy"] == "same-origin"
    assert '<meta name="referrer" content="same-origin">' in page.text


def test_serve_public_url(tmp_path, monkeypatch):
    import uvicorn

    calls = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append((app, kw)))
    game = tmp_path / "demo.toml"
    game.write_text(GAME.read_text("utf-8"), "utf-8")
    env = {"BANSHA_CONSOLE_TOKEN": TOKEN}
    out = CliRunner().invoke(
        serve, [str(game), "--public-url", "https://console.example.org/"], env=env
    )
    assert out.exit_code == 0, out.output
    assert "对外地址：https://console.example.org/" in out.output
    (app, _kw) = calls[0]
    assert _get(app, "console.example.org").status_code == 200
    assert _get(app, "attacker.example").status_code == 400
    out = CliRunner().invoke(serve, [str(game), "--public-url", "console.example.org"], env=env)
    assert out.exit_code == 1 and "--public-url 应是浏览器打开控制台用的地址" in out.output
    assert len(calls) == 1
    help_text = CliRunner().invoke(serve, ["--help"]).output
    assert "--public-url" in help_text and re.search(r"别的主机名\s*一律拒绝", help_text)


@pytest.mark.parametrize(
    ("netloc", "ok"),
    [("127.0.0.1:8765", True), ("[::1]:8765", True), ("[::1]", False), ("::1:8765", False)],
)
def test_host_policy_reads_host_headers(netloc, ok):
    assert HostPolicy.of("127.0.0.1", 8765).answers(netloc) is ok
