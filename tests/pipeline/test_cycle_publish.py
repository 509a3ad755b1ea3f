"""What ``bansha cycle`` and ``bansha schedule`` do for posting.

* every post attempt a cycle makes carries its own time from the clock, not the cycle's start
  (``--as-of`` is the time the verdicts are judged at, not when the forum got the reply);
* ``bansha schedule`` escapes ``%`` for cron (crontab(5): an unescaped ``%`` ends the command),
  so a game file called ``100%.toml`` runs.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.sim.simulator import ForumSim, SimClock, SimServer, script_now
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[2]
GAME = ROOT / "config" / "games" / "demo.toml"
SCRIPT = ROOT / "config" / "games" / "demo_posts.toml"
BEFORE_THE_GAME = "2026-11-30T08:00:00+08:00"  # no thread due: the cycle only publishes


@pytest.fixture
def forum(tmp_path):
    now = script_now(SCRIPT)
    assert now is not None
    sim = ForumSim.from_script(GAME, SCRIPT, SimClock(now), floodctrl_s=0)
    with SimServer(sim) as server:
        game = tmp_path / "game.toml"
        text = GAME.read_text("utf-8").replace("http://127.0.0.1:8080/", server.base_url)
        game.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0.0"), "utf-8")
        env = {"BANSHA_DB": str(tmp_path / "game.db"), "BANSHA_COOKIE": sim.login_cookie("导演")}
        yield sim, game, env, tmp_path / "game.db"


def approved(db: Path, body: str) -> int:
    store = open_store(db)
    stamp = "2026-11-30T07:00:00+08:00"
    with store.atomic():
        cur = store.db.execute(
            "INSERT INTO drafts(kind, day, key, tid, action, body, body_hash, generated_body, "
            "state, created_at, updated_at, approved_at) "
            "VALUES ('result', 2, ?, 2012, 'reply', ?, ?, ?, 'approved', ?, ?, ?)",
            [
                f"result:2:{body[-4:]}",
                body,
                hashlib.sha256(body.encode()).hexdigest(),
                body,
                stamp,
                stamp,
                stamp,
            ],
        )
    store.close()
    return int(cur.lastrowid or 0)


def test_cycle_stamps_each_post_attempt_with_the_clock(forum):
    sim, game, env, db = forum
    first = approved(db, "[b]第2天投票结果[/b]\n饺子 3 票。饺子出局。")
    second = approved(db, "[b]第3天开始[/b]\n出局：饺子。请在本帖留遗言。")
    before = datetime.now().astimezone()

    out = CliRunner().invoke(cli, ["cycle", str(game), "--as-of", BEFORE_THE_GAME], env=env)

    after = datetime.now().astimezone()
    assert out.exit_code == 0, out.output
    store = open_store(db)
    attempts = list(store.db.query("SELECT * FROM post_attempts ORDER BY id"))
    drafts = {r["id"]: r for r in store.db.query("SELECT * FROM drafts")}
    store.close()
    assert [(a["draft_id"], a["outcome"]) for a in attempts] == [
        (first, "posted"),
        (second, "posted"),
    ]
    stamps = [datetime.fromisoformat(a[k]) for a in attempts for k in ("started_at", "finished_at")]
    assert len(set(stamps)) == 4  # each record its own time, in order
    assert stamps == sorted(stamps)
    assert all(before <= s <= after for s in stamps)  # the real time, not --as-of
    assert BEFORE_THE_GAME not in {a["started_at"] for a in attempts}
    for draft_id in (first, second):
        assert before <= datetime.fromisoformat(drafts[draft_id]["posted_at"]) <= after
        pid = drafts[draft_id]["posted_pid"]
        assert sim.stored_message(pid) == drafts[draft_id]["body"]  # in the thread, once


def cron_lines(output: str) -> list[str]:
    """The crontab lines that run a command (not comments, not CRON_TZ=)."""
    return [
        line
        for line in output.splitlines()
        if line.strip() and not line.startswith("#") and not line.startswith("CRON_TZ=")
    ]


def test_schedule_escapes_percent_for_cron(tmp_path):
    game = tmp_path / "100%.toml"
    game.write_text(GAME.read_text("utf-8"), "utf-8")

    out = CliRunner().invoke(
        cli, ["schedule", str(game), "--wrapper", "/opt/版杀 50%/cron/bansha-cycle.sh"]
    )

    assert out.exit_code == 0, out.output
    lines = cron_lines(out.output)
    assert len(lines) == 5  # every 5 minutes, two closes, two reminders
    for line in lines:
        assert re.search(r"(?<!\\)%", line) is None, line  # no bare % left
        assert line.endswith(f"'/opt/版杀 50\\%/cron/bansha-cycle.sh' {tmp_path}/100\\%.toml"), line
    assert lines[0].startswith("*/5 * * * * ")
