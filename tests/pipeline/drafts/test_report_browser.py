"""The day report opened in a real browser: Debian's headless Chromium.

The demo game is played on the local simulator and crawled the way ``bansha demo`` does (through
the simulator's httpx transport: no socket, no network), ``bansha report`` writes day 2's page,
and Chromium loads it. The test reads what the browser SHOWS — ``innerText`` (which leaves out
anything CSS hides), the rendered size of the chart's bars, the page width on a phone — through
the DevTools protocol over a pipe (``--remote-debugging-pipe``: the standard library is enough,
no driver package), and keeps screenshots in ``artifacts/`` (desktop and phone).

Skipped only when no Chromium binary exists and ``CI`` is unset; in CI a missing browser fails.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from click.testing import CliRunner

import pipeline.cli.report  # registers `bansha report`
from pipeline.cli import GameContext, cli, load_context
from pipeline.cli.foundation import crawl_targets, run_crawl
from pipeline.derive import Derivation, derive
from pipeline.sim.simulator import ForumSim, SimClock, script_now
from tests.conftest import missing_cjk_font

assert pipeline.cli.report  # imported for its side effect

REPO = Path(__file__).resolve().parents[3]
GAMES = REPO / "config" / "games"
ARTIFACTS = REPO / "artifacts"
DAY = 2
HOSTILE_TARGET = "<img src=x onerror=alert(1)>"
BUDGET_S = 20.0

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    "--mute-audio",
)


def chromium_binary() -> str | None:
    """``BANSHA_CHROMIUM`` if set, else Debian's ``chromium`` (or ``chromium-browser``)."""
    override = os.environ.get("BANSHA_CHROMIUM")
    if override:
        return shutil.which(override) or (override if Path(override).is_file() else None)
    return shutil.which("chromium") or shutil.which("chromium-browser")


# --------------------------------------------------------------------------- DevTools over a pipe


class Chromium:
    """Headless Chromium driven over ``--remote-debugging-pipe``: the browser reads commands
    from fd 3 and writes answers to fd 4, JSON messages separated by NUL bytes."""

    def __init__(self, binary: str, *, deadline: float) -> None:
        self.deadline = deadline
        self.profile = tempfile.TemporaryDirectory(prefix="bansha-chromium-")
        cmd_read, self.cmd_write = os.pipe()
        self.res_read, res_write = os.pipe()

        def wire_pipes() -> None:  # in the child, before exec: our pipe ends become fds 3, 4
            a = fcntl.fcntl(cmd_read, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(res_write, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [
                binary,
                *CHROMIUM_FLAGS,
                f"--user-data-dir={self.profile.name}",
                "--remote-debugging-pipe",
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=False,
            preexec_fn=wire_pipes,
        )
        os.close(cmd_read)
        os.close(res_write)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    def __enter__(self) -> Chromium:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self.proc.poll() is None:
                self.send("Browser.close")
        except (OSError, RuntimeError, TimeoutError):
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.cmd_write)
        os.close(self.res_read)
        self.profile.cleanup()

    def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("Chromium 没有在限定时间内应答")
            ready, _, _ = select.select([self.res_read], [], [], left)
            if ready:
                chunk = os.read(self.res_read, 1 << 20)
                if not chunk:
                    raise RuntimeError(f"Chromium 已退出（返回码 {self.proc.poll()}）")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return dict(json.loads(message))

    def send(self, method: str, params: dict[str, Any] | None = None, session: str = "") -> Any:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.cmd_write, json.dumps(message).encode() + b"\0")
        while True:
            answer = self._receive()
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise RuntimeError(f"{method}: {answer['error']}")
                return answer.get("result", {})
            self._events.append(answer)

    def wait_for(self, event: str, session: str) -> dict[str, Any]:
        while True:
            for i, e in enumerate(self._events):
                if e.get("method") == event and e.get("sessionId") == session:
                    return self._events.pop(i)
            self._events.append(self._receive())

    def open(self, url: str, *, width: int, height: int, mobile: bool) -> Tab:
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        self.send("Page.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
            session=session,
        )
        self.send("Page.navigate", {"url": url}, session=session)
        self.wait_for("Page.loadEventFired", session)
        return Tab(self, session)


class Tab:
    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def evaluate(self, expression: str) -> Any:
        answer = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True},
            session=self.session,
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"脚本出错：{answer['exceptionDetails']}")
        return answer["result"].get("value")

    def screenshot(self, path: Path) -> None:
        """The whole page, not just the viewport."""
        size = self.browser.send("Page.getLayoutMetrics", session=self.session)["cssContentSize"]
        shot = self.browser.send(
            "Page.captureScreenshot",
            {
                "format": "png",
                "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
                | {"scale": 1},
            },
            session=self.session,
        )
        path.write_bytes(base64.b64decode(shot["data"]))


# what the page shows, read in the browser (innerText leaves out what CSS hides)
SHOWN = """(() => {
  const all = s => Array.from(document.querySelectorAll(s));
  const shown = s => { const e = document.querySelector(s); return e ? e.innerText : null; };
  return {
    outcome: shown('#outcome'),
    votes: shown('#vote-table'),
    voteRows: all('#vote-table tr.vote').map(r => ({
      pid: Number(r.dataset.pid), text: r.innerText,
      href: r.querySelector('a') ? r.querySelector('a').href : null})),
    flags: shown('#flags'),
    flagRows: Object.fromEntries(
      all('#flag-table tr.flag').map(r => [r.dataset.flag, r.innerText])),
    cards: shown('#cards'),
    posts: shown('#post-table'),
    bars: all('#posts-chart rect.bar').map(b => ({
      player: b.dataset.player, count: Number(b.dataset.count),
      width: b.getBoundingClientRect().width, height: b.getBoundingClientRect().height})),
    chartWidth: document.querySelector('#posts-chart').getBoundingClientRect().width,
    images: all('img').length,
    scripts: all('script').length,
    resources: performance.getEntriesByType('resource').length,
    scrollWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    voteHead: getComputedStyle(document.querySelector('#vote-table thead')).display,
  };
})()"""


# --------------------------------------------------------------------------- the demo game


def crawl_demo(ctx: GameContext, sim: ForumSim, clock: SimClock, now: datetime) -> None:
    """Crawl as cron would have: at noon and an hour before each close, then at ``now``
    (so the store sees a vote edited after it was first read)."""
    moments = []
    for d in ctx.game.days:
        noon = d.opens.replace(hour=12, minute=30)
        if d.opens < noon < d.closes:
            moments.append(noon)
        moments.append(d.closes - timedelta(hours=1))
    opens = {d.day: d.opens for d in ctx.game.days}
    for moment in [*sorted(m for m in moments if m < now), now]:
        clock.set(moment)
        targets = [t for t in crawl_targets(ctx.game, None, None) if opens[t.day or 0] <= moment]
        report = run_crawl(
            ctx, targets, transport=sim.transport(), base_url=sim.base_url, min_interval_s=0
        )
        assert report.ok, report.errors


def decide_flags(ctx: GameContext, d: Derivation, now: datetime) -> None:
    """As a director would with ``bansha flags confirm`` / ``dismiss``: confirm the first 潜水
    flag of the day (its yellow card goes into the ledger) and dismiss the edited-vote flag."""
    flags = [f for f in d.flags if f.day == DAY]
    confirm = next(f for f in flags if f.kind.value == "qianshui")
    dismiss = next(f for f in flags if f.kind.value == "edited-vote")
    at = now.isoformat()
    with ctx.store.atomic():
        ctx.store.db.table("flag_decisions").insert_all(
            [
                {
                    "flag_id": confirm.id,
                    "status": "confirmed",
                    "card": "黄牌",
                    "why": None,
                    "decided_at": at,
                },
                {
                    "flag_id": dismiss.id,
                    "status": "dismissed",
                    "card": None,
                    "why": "只改了投票理由，票没有变",
                    "decided_at": at,
                },
            ]
        )
        ctx.store.db.table("card_events").insert(
            {
                "player": confirm.player,
                "colour": "黄牌",
                "reason": confirm.reason,
                "at": ctx.game.day(DAY).closes.isoformat(),
                "source": confirm.id,
                "recorded_at": at,
            }
        )


@pytest.fixture(scope="module")
def browser() -> str:
    binary = chromium_binary()
    font = missing_cjk_font()
    if font is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI 中浏览器测试必须能显示中文：{font}")
        pytest.skip(f"{font}; in CI (CI set) this test fails instead")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail(
                "CI 中找不到 chromium：浏览器测试必须运行"
                "（.ci/run 应执行 apt-get install -y chromium）"
            )
        pytest.skip(
            "no Chromium binary found (Debian: apt-get install -y chromium; or set "
            "BANSHA_CHROMIUM); in CI (CI set) this test fails instead"
        )
    return binary


@pytest.fixture(scope="module")
def demo(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[GameContext, Derivation, Path]]:
    """The demo game crawled into a fresh store, plus one hostile vote, and day 2's report."""
    folder = tmp_path_factory.mktemp("report-browser")
    game_file, script = GAMES / "demo.toml", GAMES / "demo_posts.toml"
    db = folder / "demo.db"
    ctx = load_context(game_file, str(db))
    now = script_now(script)
    assert now is not None
    clock = SimClock(now)
    sim = ForumSim.from_script(game_file, script, clock)
    day = ctx.game.day(DAY)
    assert day.vote is not None
    # a vote whose target is markup: shown as text, never as an element
    sim.add_post(day.vote, "麻花", f"投票对象：{HOSTILE_TARGET}", day.opens + timedelta(hours=3))
    crawl_demo(ctx, sim, clock, now)
    decide_flags(ctx, derive(ctx.game, ctx.store, as_of=now), now)
    html = folder / "report-day2.html"
    result = CliRunner().invoke(
        cli,
        [
            "report",
            str(game_file),
            "--db",
            str(db),
            "--day",
            str(DAY),
            "--html",
            str(html),
            "--as-of",
            now.isoformat(),
        ],
    )
    assert result.exit_code == 0, result.output
    yield ctx, derive(ctx.game, ctx.store, as_of=now), html
    ctx.store.close()


def test_report_in_headless_chromium(
    browser: str, demo: tuple[GameContext, Derivation, Path]
) -> None:
    started = time.monotonic()
    ctx, d, html = demo
    res = d.day(DAY)
    assert res.tally is not None and res.tally.out
    ARTIFACTS.mkdir(exist_ok=True)

    with Chromium(browser, deadline=started + BUDGET_S) as chromium:
        desk = chromium.open(html.as_uri(), width=1100, height=900, mobile=False)
        shown = desk.evaluate(SHOWN)
        desk.screenshot(ARTIFACTS / "report-day2.png")
        phone = chromium.open(html.as_uri(), width=390, height=844, mobile=True)
        on_phone = phone.evaluate(SHOWN)
        phone.screenshot(ARTIFACTS / "report-day2-phone.png")

    # the result: who is out (m135.txt:50's tally, decided by the engine)
    assert shown["outcome"] == f"出局：{res.tally.out}"

    # every vote, in post order, with its verdict, its reason and a link to its post
    assert [r["pid"] for r in shown["voteRows"]] == [v.ballot.evidence.pid for v in res.verdicts]
    for row, v in zip(shown["voteRows"], res.verdicts, strict=True):
        assert v.reason in row["text"]
        assert row["href"] == v.ballot.evidence.url
    invalid = [v for v in res.verdicts if v.status.value == "invalid"]
    assert invalid
    for v in invalid:
        assert v.reason in shown["votes"]
    # m135.txt:202 "投票格式或投票对象有误的票无效"
    assert any("「路人甲」不在名单中" in v.reason for v in invalid)

    # the hostile target is shown as the text the player wrote; no element was made of it
    assert HOSTILE_TARGET in shown["votes"]
    assert shown["images"] == 0
    assert shown["scripts"] == 0
    assert shown["resources"] == 0  # nothing was loaded: the page is self-contained

    # 潜水 flags (m135.txt:311 "在未执行二段加速的讨论日发言不足五帖")
    qianshui = [f for f in d.flags if f.day == DAY and f.kind.value == "qianshui"]
    assert qianshui
    for f in qianshui:
        assert f.player in shown["flags"]
        assert f.reason in shown["flags"]
    assert "潜水（发言不足）" in shown["flags"]
    # each flag with its status: the director's decisions are in the store
    decided = {r["flag_id"]: r for r in ctx.store.db.query("SELECT * FROM flag_decisions")}
    assert set(shown["flagRows"]) == {f.id for f in d.flags if f.day == DAY}
    for fid, text in shown["flagRows"].items():
        status = decided[fid]["status"] if fid in decided else "open"
        expect = {"open": "待确认", "confirmed": "已确认", "dismissed": "已驳回"}[status]
        assert expect in text, (fid, text)
    assert {r["status"] for r in decided.values()} == {"confirmed", "dismissed"}
    # the confirmed flag's yellow card is in the ledger
    (carded,) = [f.player for f in d.flags if decided.get(f.id, {}).get("status") == "confirmed"]
    assert carded in shown["cards"]
    assert "黄牌" in shown["cards"]

    # the chart: one bar per player, drawn to scale
    players = [p.name for p in ctx.game.players]
    bars = {b["player"]: b for b in shown["bars"]}
    assert len(shown["bars"]) == len(players)
    assert set(bars) == set(players)
    for name in players:
        pc = res.counts.get(name)
        assert bars[name]["count"] == (pc.count if pc else 0)
        assert (bars[name]["width"] > 0) == (bars[name]["count"] > 0)
        assert bars[name]["height"] > 0
    ordered = sorted(bars.values(), key=lambda b: b["count"])
    assert [b["width"] for b in ordered] == sorted(b["width"] for b in ordered)
    for name in players:
        assert name in shown["posts"]

    # readable on a phone: nothing wider than the screen, the vote table becomes cards
    assert on_phone["scrollWidth"] <= on_phone["viewport"] == 390
    assert on_phone["voteHead"] == "none"
    assert on_phone["chartWidth"] <= 390
    assert shown["voteHead"] != "none"

    for name in ("report-day2.png", "report-day2-phone.png"):
        png = (ARTIFACTS / name).read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert time.monotonic() - started < BUDGET_S
