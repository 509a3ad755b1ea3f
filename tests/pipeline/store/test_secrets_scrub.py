"""The session's secrets never reach the database, a log or a message.

Secrets: every cookie value the client sends (whatever its name), the mobile API's
``Variables.auth`` / ``saltkey`` / ``formhash`` (docs/discuz.md §2.2) and the desktop pages'
formhash (hidden inputs, ``formhash=`` in links, docs/discuz.md §4.1). Bodies are scrubbed where
they are stored (``Store._store_body``) and must still parse to the same posts; error messages
are scrubbed in the client and the crawler.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import unquote
from zoneinfo import ZoneInfo

import httpx
import pytest
from click.testing import CliRunner

from parsers.mobile import parse_mobile_viewthread
from parsers.records import PageError
from parsers.viewthread import parse_viewthread
from pipeline.cli import cli
from pipeline.discuz.client import DiscuzClient, RetryPolicy, SessionJar
from pipeline.discuz.crawl import Crawler, CrawlTarget, ForumConfig
from pipeline.sim.simulator import ForumSim, SimClock, SimServer
from pipeline.store import decode_body, open_store
from pipeline.store.scrub import SCRUB_MARK, scrub_body, scrub_text
from tests import discuz_samples as samples
from tests.discuz_samples import served_at

TZ = ZoneInfo("Asia/Shanghai")
T0 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
USERS = {"导演": 2, "饺子": 3, "包子": 4, "馄饨": 5}
TID = 4
ROOT = Path(__file__).resolve().parents[3]
DEMO_GAME = ROOT / "config" / "games" / "demo.toml"
VOTE = samples.tid("vote")  # the page samples' vote thread


def forum(n_posts: int = 25) -> ForumSim:
    clock = SimClock(T0 + timedelta(days=1))
    sim = ForumSim(users=USERS, clock=clock, floodctrl_s=0)
    sim.add_thread(TID, "第二天投票帖", "导演", "【第二天投票帖】请投票", T0)
    names = ["饺子", "包子", "馄饨"]
    for i in range(1, n_posts):
        sim.add_post(TID, names[i % 3], f"第{i}条：投票对象：包子", T0 + timedelta(minutes=i))
    return sim


def client_for(sim: ForumSim, cookie: str, *, max_attempts: int = 3) -> DiscuzClient:
    return DiscuzClient(
        httpx.Client(transport=sim.transport()),
        base_url=sim.base_url,
        min_interval_s=0,
        policy=RetryPolicy(max_attempts=max_attempts, initial_wait_s=0.01, jitter_s=0),
        sleep=lambda s: None,
        jar=SessionJar(cookie),
    )


def session_secrets(sim: ForumSim, cookie: str) -> list[str]:
    """Every spelling of the session's secrets a store or a log line could hold."""
    jar = SessionJar(cookie)
    salt = jar.get_suffix("_saltkey")
    auth = jar.get_suffix("_auth")
    assert salt and auth
    url = f"{sim.base_url}api/mobile/index.php?version=4&module=viewthread&tid={TID}&ppp=50"
    variables = json.loads(sim.handle("GET", url, {"cookie": cookie}).body)["Variables"]
    assert variables["saltkey"] == salt and variables["auth"] == unquote(auth)
    formhash = variables["formhash"]
    assert len(formhash) == 8
    return [salt, auth, unquote(auth), unquote(auth).replace("/", "\\/"), formhash]


def db_bytes(path: Path) -> bytes:
    """The store's files as they are on disk: the database and its write-ahead log."""
    out = b""
    for suffix in ("", "-wal", "-shm"):
        f = Path(f"{path}{suffix}")
        if f.exists():
            out += f.read_bytes()
    return out


@pytest.mark.parametrize("source", ["mobile-api", "html"])
def test_a_crawl_with_a_cookie_leaves_no_secret_in_the_database_files(tmp_path, source):
    sim = forum()
    cookie = sim.login_cookie("饺子")
    secrets = session_secrets(sim, cookie)
    db = tmp_path / "game.db"
    store = open_store(db)
    forum_cfg = ForumConfig(base_url=sim.base_url, tz=TZ, source=source)
    report = Crawler(client_for(sim, cookie), store, forum_cfg).crawl([CrawlTarget(TID, 2, "vote")])
    assert report.ok, report.errors
    assert store.counts()["posts"] == 25 and store.counts()["pages"] >= 1
    raw = b"".join(decode_body(r[0]) for r in store.db.execute("SELECT body FROM page_bodies"))
    assert SCRUB_MARK.encode() in raw  # the values were there, and are replaced
    data = db_bytes(db)
    assert data  # the files were read while the store is open (the WAL is in use)
    for secret in secrets:
        assert secret.encode() not in data, secret
    store.close()
    data = db_bytes(db)
    for secret in secrets:
        assert secret.encode() not in data, secret


def test_a_scrubbed_body_parses_to_the_same_posts_simulator():
    sim = forum()
    cookie = sim.login_cookie("饺子")
    secrets = session_secrets(sim, cookie)
    now = T0 + timedelta(days=1)
    for page in (1, 2, 3):
        mobile_url = (
            f"{sim.base_url}api/mobile/index.php?version=4&module=viewthread&tid={TID}"
            f"&page={page}&ppp=10&ordertype=2"
        )
        desktop_url = f"{sim.base_url}forum.php?mod=viewthread&tid={TID}&page={page}&ordertype=2"
        mobile = sim.handle("GET", mobile_url, {"cookie": cookie}).body
        desktop = sim.handle("GET", desktop_url, {"cookie": cookie}).body
        for body, parse in (
            (mobile, lambda b, n=page: parse_mobile_viewthread(b, tid=TID, tz=TZ, page=n)),
            (desktop, lambda b: parse_viewthread(b, tid=TID, tz=TZ, now=now)),
        ):
            clean = scrub_body(body, SessionJar(cookie).secrets())
            assert clean != body
            for secret in secrets:
                assert secret.encode() not in clean
            before, after = parse(body), parse(clean)
            assert after.posts == before.posts and len(after.posts) == (5 if page == 3 else 10)
            assert (after.page, after.total_pages) == (before.page, before.total_pages)


@pytest.mark.parametrize(
    ("name", "secrets"),
    [
        ("desktop/vote-page3-member.html", ["4bbf1166"]),  # 饺子's formhash
        (
            "mobile/vote-api4-page1-member.json",  # formhash, saltkey, auth (after its "/")
            [
                "4bbf1166",
                "s395yNMM",
                "QWJhvkrTQ7E97DAmP9yjXXAUfTwNn2F0M1LiYmO91spDOnnQrxh8U3B5uLXj",
            ],
        ),
    ],
)
def test_a_scrubbed_real_page_parses_to_the_same_posts(fixtures_dir, name, secrets):
    body = (fixtures_dir / name).read_bytes()
    for secret in secrets:
        assert secret.encode() in body
    clean = scrub_body(body)
    for secret in secrets:
        assert secret.encode() not in clean, secret
    if name.endswith(".json"):
        json.loads(clean)  # still JSON
        before = parse_mobile_viewthread(body, tid=VOTE, tz=TZ, page=1)
        after = parse_mobile_viewthread(clean, tid=VOTE, tz=TZ, page=1)
    else:
        now = served_at(fixtures_dir / name)
        before = parse_viewthread(body, tid=VOTE, tz=TZ, now=now)
        after = parse_viewthread(clean, tid=VOTE, tz=TZ, now=now)
    assert after.posts == before.posts and after.posts
    assert (after.page, after.total_pages) == (before.page, before.total_pages)


def test_a_page_echoing_the_cookie_header_leaks_it_nowhere(tmp_path, caplog):
    """A forum's debug page repeats the request's Cookie header: it reaches neither the log,
    nor the crawl log, nor the stored body, nor the error the director reads."""
    sim = forum(5)
    cookie = sim.login_cookie("饺子")
    secrets = session_secrets(sim, cookie)
    sim.faults.add("echo_cookie", count=100, match="viewthread")
    db = tmp_path / "game.db"
    store = open_store(db)
    client = client_for(sim, cookie, max_attempts=2)
    forum_cfg = ForumConfig(base_url=sim.base_url, tz=TZ, source="auto")
    with caplog.at_level(logging.DEBUG):
        report = Crawler(client, store, forum_cfg).crawl([CrawlTarget(TID)])
    assert not report.ok
    said = "\n".join(report.errors)
    assert "论坛繁忙" in said and "Cookie:" in said  # the forum's words still reach the director
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "论坛繁忙" in logged
    crawl_log = "\n".join(str(r["detail"]) for r in store.db.query("SELECT detail FROM crawl_log"))
    assert "论坛繁忙" in crawl_log
    bodies = b"".join(decode_body(r[0]) for r in store.db.execute("SELECT body FROM page_bodies"))
    assert "论坛繁忙".encode() in bodies  # the failed answers are kept as evidence
    with pytest.raises(PageError) as caught:
        client.fetch(
            f"{sim.base_url}forum.php?mod=viewthread&tid={TID}",
            lambda f: parse_viewthread(f.body, tid=TID, tz=TZ, now=T0),
        )
    for secret in secrets[:3]:
        assert secret not in said and secret not in logged and secret not in crawl_log
        assert secret not in str(caught.value) and secret not in caught.value.message_zh
    store.close()
    data = db_bytes(db)
    for secret in secrets:
        assert secret.encode() not in data, secret


def test_the_cookie_an_echoing_forum_shows_never_reaches_stderr(tmp_path):
    """``bansha crawl`` against a real socket: what the director (or the cron log) sees."""
    sim = forum(5)
    sim.add_thread(12345, "讨论帖", "导演", "讨论", T0)
    cookie = sim.login_cookie("饺子")
    secrets = session_secrets(sim, cookie)[:3]
    sim.faults.add("echo_cookie", count=100, match="viewthread")
    with SimServer(sim) as server:
        text = DEMO_GAME.read_text("utf-8").replace("http://127.0.0.1:8080/", server.base_url)
        game = tmp_path / "g.toml"
        game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), "utf-8")
        result = CliRunner().invoke(
            cli,
            ["crawl", str(game), "--thread", "12345"],
            env={
                "BANSHA_DB": str(tmp_path / "g.db"),
                "BANSHA_COOKIE": cookie,
                "BANSHA_MAX_ATTEMPTS": "1",
            },
        )
    assert result.exit_code == 1
    assert "论坛繁忙" in result.stderr and "Cookie:" in result.stderr
    for secret in secrets:
        assert secret not in result.output and secret not in result.stderr


def test_messages_are_scrubbed_of_every_spelling():
    jar = SessionJar("ab_2132_saltkey=Zx81Kq0P; ab_2132_auth=a1b2%2Fc3d4e5; ab_2132_lastvisit=1796")
    text = (
        "Cookie: ab_2132_saltkey=Zx81Kq0P; ab_2132_auth=a1b2%2Fc3d4e5 "
        '{"auth":"a1b2\\/c3d4e5"} a1b2/c3d4e5 formhash=9fbbd8d9 other_auth=unknown123'
    )
    clean = scrub_text(text, jar.secrets())
    for secret in ("Zx81Kq0P", "a1b2", "9fbbd8d9", "unknown123"):
        assert secret not in clean
    assert "ab_2132_saltkey=***" in clean and "formhash=***" in clean
    assert jar.secrets() == ["Zx81Kq0P", "a1b2%2Fc3d4e5"]  # a plain number is no secret


def test_stored_headers_are_scrubbed_too(tmp_path):
    store = open_store(tmp_path / "game.db")
    store.record_response(
        tid=4,
        page=1,
        source="html",
        url="http://f/forum.php?mod=viewthread&tid=4",
        status=500,
        headers={"x-debug": "cookie ab_2132_auth=TOPSECRET1", "set-cookie": "a=SECRET2"},
        body=b"<html>TOPSECRET1</html>",
        fetched_at=T0,
        outcome="malformed",
        secrets=["TOPSECRET1"],
    )
    store.close()
    data = db_bytes(tmp_path / "game.db")
    assert b"TOPSECRET1" not in data and b"SECRET2" not in data


def test_the_migration_scrubs_bodies_stored_before_and_keeps_the_references(tmp_path):
    """A store written before bodies were scrubbed: the known keys are scrubbed, the bodies
    re-keyed by their new sha256, every page still points at a stored body."""
    db = tmp_path / "old.db"
    store = open_store(db)
    body = (
        b'{"Version":"4","Variables":{"auth":"OLDAUTH\\/VALUE123","saltkey":"OLDSALT1",'
        b'"formhash":"0ldf0rm1","member_uid":"3"}}'
    )
    page = b'<input type="hidden" name="formhash" value="0ldf0rm2" /><a href="x?formhash=0ldf0rm2">'
    with store.atomic():
        # as an older bansha wrote them: raw, keyed by the raw body's sha256
        for n, raw in enumerate((body, page, body)):
            digest = hashlib.sha256(raw).hexdigest()
            store.db.execute("INSERT OR IGNORE INTO page_bodies VALUES (?, ?)", [digest, raw])
            store.db.execute(
                "INSERT INTO pages(tid, page, source, url, status, headers, sha256, fetched_at, "
                "outcome) VALUES (4, ?, 'mobile-api', 'u', 200, '{}', ?, 't', 'ok')",
                [n + 1, digest],
            )
        store.db.execute(
            "INSERT INTO crawl_log(at, outcome, detail) VALUES ('t', 'retry', "
            "'论坛提示：xx_2132_auth=OLDAUTH\\/VALUE123')"
        )
        store.db.execute("DELETE FROM _migrations WHERE name = '007_scrub_secrets'")
    store.close()

    store = open_store(db)  # the migration runs
    assert "007_scrub_secrets" in {
        r["name"] for r in store.db.query("SELECT name FROM _migrations")
    }
    rows = list(
        store.db.query(
            "SELECT pages.page, pages.sha256, page_bodies.body FROM pages "
            "JOIN page_bodies ON page_bodies.sha256 = pages.sha256 ORDER BY pages.page"
        )
    )
    assert len(rows) == 3  # every page still has its body
    for row in rows:
        assert hashlib.sha256(decode_body(row["body"])).hexdigest() == row["sha256"]
    assert rows[0]["sha256"] == rows[2]["sha256"]  # identical bodies still stored once
    assert store.db.table("page_bodies").count == 2
    assert json.loads(decode_body(rows[0]["body"]))["Variables"]["member_uid"] == "3"
    assert store.db.execute("PRAGMA foreign_key_check").fetchall() == []
    detail = store.db.execute("SELECT detail FROM crawl_log").fetchone()[0]
    assert "OLDAUTH" not in detail
    store.close()
    data = db_bytes(db)
    for secret in (b"OLDAUTH", b"OLDSALT1", b"0ldf0rm1", b"0ldf0rm2"):
        assert secret not in data, secret
    sqlite3.connect(db).close()


def test_an_extra_secret_such_as_a_password_is_scrubbed_from_errors():
    """A client given the director's password (``secrets=``) never repeats it in an error,
    even a short or all-digit one."""

    def echo(request: httpx.Request) -> httpx.Response:
        page = (
            '<div id="messagetext" class="alert_error"><p>抱歉，请求出错：password=123456 '
            "user=导演</p></div>"
        )
        return httpx.Response(200, content=page.encode())

    client = DiscuzClient(
        httpx.Client(transport=httpx.MockTransport(echo)),
        base_url="http://forum.test/",
        min_interval_s=0,
        policy=RetryPolicy(max_attempts=1),
        sleep=lambda s: None,
        secrets=["123456"],
    )
    with pytest.raises(PageError) as caught:
        client.fetch(
            "http://forum.test/forum.php?mod=viewthread&tid=4",
            lambda f: parse_viewthread(f.body, tid=4, tz=TZ, now=T0),
        )
    assert "123456" not in str(caught.value) and "password=***" in caught.value.message_zh
