"""The live tests' side of a real Discuz! X3.5 (no tests here): where the forum is, its
accounts, a fresh section per test, the game file bansha reads, and bansha's commands.

The forum is the one ``forum/dzforum.sh up WORK`` stands up (or any loopback Discuz! X3.5 with the
same founder): ``BANSHA_LIVE_URL`` is its address, ``BANSHA_LIVE_ADMIN`` / ``BANSHA_LIVE_PASSWORD``
the founder (default ``admin`` / ``admin123456``, dzforum.sh's), ``BANSHA_LIVE_DB`` its MariaDB
(``host:port``, user ``dz`` / ``dzpass``, database ``dz``; or ``BANSHA_LIVE_WORK`` = the WORK
folder, whose ``ports.env`` names the port). The database is only used to move posts two hours
back (a 改票 needs an hour before the close, rule sets' ``change_cutoff``) and to list a section's
threads; everything bansha does goes over HTTP.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from pipeline.cli import cli

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
DEMO = REPO / "config" / "games" / "demo.toml"
TZ = timezone(timedelta(hours=8))  # the demo game's Asia/Shanghai, the forum's default zone
PASSWORD = "Test1234"  # the capture script's (game_script.json)
DIRECTOR = "导演L"
#: the demo game's 12 players, as forum accounts
PLAYERS = (
    "饺子",
    "包子",
    "馄饨",
    "面条",
    "烧卖",
    "汤圆",
    "春卷",
    "油条",
    "Snow_风",
    "粽子",
    "月饼",
    "麻花",
)
MARIADB = ("mariadb", "--no-defaults", "-udz", "-pdzpass", "-Ddz", "--batch", "--raw", "-N")
SUPER_MODERATOR = 2  # Discuz's 超级版主 group: moderates every section (closes threads)


def _driver() -> Any:
    spec = importlib.util.spec_from_file_location("dzdriver", HERE / "forum" / "dzdriver.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["dzdriver"] = module
    spec.loader.exec_module(module)
    return module


dz = _driver()


def db_address(env: dict[str, str]) -> str | None:
    """``host:port`` of the forum's MariaDB, or None when neither variable names it."""
    if env.get("BANSHA_LIVE_DB"):
        return env["BANSHA_LIVE_DB"]
    work = env.get("BANSHA_LIVE_WORK")
    if work and (Path(work) / "ports.env").is_file():
        ports = dict(
            line.split("=", 1)
            for line in (Path(work) / "ports.env").read_text().split()
            if "=" in line
        )
        return f"127.0.0.1:{ports['DB_PORT']}"
    return None


@dataclass
class Forum:
    """The live forum: the founder's session (in the admin panel) and the accounts' uids."""

    base: str
    admin_pw: str
    admin: Any
    db: str | None
    uids: dict[str, int] = field(default_factory=dict)

    @classmethod
    def connect(cls, env: dict[str, str]) -> Forum:
        base = env["BANSHA_LIVE_URL"].rstrip("/") + "/"
        name = env.get("BANSHA_LIVE_ADMIN", "admin")
        pw = env.get("BANSHA_LIVE_PASSWORD", "admin123456")
        admin = dz.member(base, name, pw)
        admin.enter_admin(pw)
        forum = cls(base, pw, admin, db_address(env))
        forum.add_accounts()
        return forum

    def add_accounts(self) -> None:
        """The director (超级版主) and the 12 players; an account left by an earlier run is kept."""
        self.admin.add_member(DIRECTOR, PASSWORD, groupid=SUPER_MODERATOR)
        for name in PLAYERS:
            self.admin.add_member(name, PASSWORD)
        for name in (DIRECTOR, *PLAYERS):
            page = self.as_(name).fetch("forum.php").text
            m = re.search(r"discuz_uid\s*=\s*'(\d+)'", page)
            assert m and m.group(1) != "0", f"{name} 没有登录上论坛"
            self.uids[name] = int(m.group(1))

    def as_(self, name: str) -> Any:
        """A logged-in session of this account."""
        return dz.member(self.base, name, PASSWORD)

    def section(self, name: str) -> int:
        return int(self.admin.add_section(name))

    # --- reading the forum back (the truth the tests compare bansha with)
    def thread(self, tid: int) -> dict[str, Any]:
        """The mobile API v4 view of a thread as the founder sees it (``thread``, ``posts``)."""
        url = f"api/mobile/index.php?version=4&module=viewthread&tid={tid}&ppp=200&ordertype=2"
        data = json.loads(self.admin.fetch(url).text)["Variables"]
        return {"thread": data["thread"], "posts": data.get("postlist", [])}

    def posts(self, tid: int) -> list[dict[str, Any]]:
        return list(self.thread(tid)["posts"])

    def closed(self, tid: int) -> bool:
        return str(self.thread(tid)["thread"]["closed"]) == "1"

    def subjects(self, fid: int) -> list[tuple[int, str, str]]:
        """(tid, subject, author) of the section's threads, oldest first."""
        rows = self.sql(f"SELECT tid, subject, author FROM pre_forum_thread WHERE fid = {fid:d}")
        return sorted((int(tid), subject, author) for tid, subject, author in rows)

    def sql(self, query: str) -> list[list[str]]:
        if self.db is None:
            pytest.skip(
                "BANSHA_LIVE_DB 未设置：需要论坛的 MariaDB（host:port，或 BANSHA_LIVE_WORK）"
            )
        host, _, port = self.db.rpartition(":")
        done = subprocess.run(
            [*MARIADB, f"-h{host}", f"-P{port}", "-e", query],
            check=True,
            capture_output=True,
            text=True,
        )
        return [line.split("\t") for line in done.stdout.splitlines()]

    def move_back(self, tids: list[int], seconds: int) -> None:
        """Every post of these threads (and the threads' own times) ``seconds`` earlier."""
        ids = ", ".join(str(int(t)) for t in tids)
        self.sql(
            f"UPDATE pre_forum_post SET dateline = dateline - {seconds:d} WHERE tid IN ({ids}); "
            f"UPDATE pre_forum_thread SET dateline = dateline - {seconds:d}, "
            f"lastpost = lastpost - {seconds:d} WHERE tid IN ({ids})"
        )


def now() -> datetime:
    return datetime.now(TZ).replace(microsecond=0)


def game_text(forum: Forum, fid: int, days: str) -> str:
    """The demo game file on this forum: its accounts' uids, section ``fid``, the given days,
    one progress thread per day, and no pause between writes (dzforum.sh turns flood control
    off)."""
    text = DEMO.read_text("utf-8")
    text = text[: text.index("# 第一天")]
    text = text.replace("http://127.0.0.1:8080/", forum.base)
    text = text.replace("min_interval_s = 1.0", "min_interval_s = 0.0")
    text = text.replace(
        'names = ["导演"]\nuids = [100]', f'names = ["{DIRECTOR}"]\nuids = [{forum.uids[DIRECTOR]}]'
    )
    for i, name in enumerate(PLAYERS):
        old = f'name = "{name}"\nuid = {101 + i}\n'
        assert old in text, name
        text = text.replace(old, f'name = "{name}"\nuid = {forum.uids[name]}\n')
    text = text.replace("[director]", f'fid = {fid}\n\n[threads]\nprogress = "day"\n\n[director]')
    return text + days


def day_toml(opens: datetime, closes: datetime, tids: dict[str, int] | None = None) -> str:
    lines = [
        "[[days]]",
        "day = 1",
        f"opens = {opens.isoformat()}",
        f"closes = {closes.isoformat()}",
    ]
    lines += [f"{role} = {tid}" for role, tid in (tids or {}).items()]
    return "\n" + "\n".join(lines) + "\n"


@dataclass
class Bansha:
    """bansha's commands on one game file, in this process (click's runner), as the director."""

    forum: Forum
    game: Path
    db: Path

    @property
    def env(self) -> dict[str, str]:
        cookie = self.forum.as_(DIRECTOR).cookie_header()
        return {"BANSHA_DB": str(self.db), "BANSHA_COOKIE": cookie}

    def run(self, *args: str, code: int = 0) -> str:
        out = CliRunner().invoke(cli, [*args], env=self.env)
        assert out.exit_code == code, f"bansha {' '.join(args)} → {out.exit_code}\n{out.output}"
        return out.output

    def json(self, *args: str) -> Any:
        return json.loads(self.run(*args, "--json"))

    def cycle(self, *args: str) -> str:
        return self.run("cycle", str(self.game), "--verbose", *args)

    def drafts(self) -> list[dict[str, Any]]:
        return list(self.json("drafts", str(self.game))["drafts"])

    def approve(self, kind: str) -> list[dict[str, Any]]:
        """Approve every pending draft of that kind; returns them."""
        chosen = [d for d in self.drafts() if d["kind"] == kind and d["state"] == "pending"]
        assert chosen, (
            f"没有待批准的 {kind} 草稿：{[(d['kind'], d['state']) for d in self.drafts()]}"
        )
        for d in chosen:
            self.run("drafts", "approve", str(self.game), str(d["id"]))
        return chosen
