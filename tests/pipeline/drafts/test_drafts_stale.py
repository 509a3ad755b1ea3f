"""Nothing stale goes out: a draft made from the game's state holds only while that state is the
one it was drafted from.

Every draft of a state kind (running tally, result, day-open post, cards, reminder, inquiry
answers) keeps the value of the drafts' input counter it was last drafted — or found unchanged —
at. A new post, a director's record or its undo, a night or day resolved moves the counter on.
Until the next drafting pass (``bansha drafts make`` or the cycle) such a draft cannot be approved
and is not sent; the pass then makes it again (new text: a new draft), finds it unchanged (it
holds again), or — when its moment has passed and it is no longer drafted — sets it aside.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.drafts import get_draft, list_drafts
from pipeline.game.gamefile import load_game
from pipeline.store import open_store

DAY_OPEN_2 = 6  # the demo's day-2 opening, drafted at day 2's opening, before night 1 resolved
FIRST_RESULT = 12  # the demo's day-1 sheriff result, waiting for approval at the demo's end


def run(*args: str, code: int | None = 0) -> str:
    """``bansha ARGS`` in this process; ``code``: the exit code expected (None: any)."""
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert code is None or result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def demo_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    run("demo", "--db", str(folder / "demo.db"))
    return folder


@pytest.fixture
def demo(demo_made: Path, tmp_path: Path) -> Path:
    """A fresh copy of the demo's folder (game file, store) for each test."""
    folder = tmp_path / "demo"
    shutil.copytree(demo_made, folder, ignore=shutil.ignore_patterns("*.lock"))
    return folder


def game(folder: Path) -> list[str]:
    return [str(folder / "demo.toml"), "--db", str(folder / "demo.db")]


def test_the_day_open_post_drafted_before_the_night_was_resolved_never_goes_out(demo):
    """The demo drafts day 2's opening at 12-01 10:00 ("平安夜，无人出局": night 1 not resolved
    yet); then `night resolve` puts two first identities out. The opening's moment has passed,
    so it is no longer drafted — it is set aside, saying why, and cannot be approved."""
    state = run("state", *game(demo))
    assert "烧卖" in state and "饺子" in state
    store = open_store(demo / "demo.db")
    try:
        opening = get_draft(store, DAY_OPEN_2)
        assert "平安夜，无人出局" in opening.body
        assert opening.state.value == "superseded"
        live = [d for d in list_drafts(store) if d.kind == "day_open"]
        assert all("平安夜" not in d.body for d in live)
    finally:
        store.close()
    shown = run("drafts", "show", *game(demo), str(DAY_OPEN_2))
    assert "起草之后游戏的记录已经变了" in shown
    out = run("drafts", "approve", *game(demo), str(DAY_OPEN_2), code=1)
    assert "不能批准" in out


def test_a_director_record_holds_every_waiting_draft_until_it_is_drafted_again(demo):
    """A card given after the sheriff result was drafted: approving the result is refused (it
    may no longer say what is so) until `bansha drafts make` drafts it again; unchanged, it then
    holds and is approved."""
    run("card", "give", *game(demo), "--player", "汤圆", "--colour", "蓝", "--why", "场外")
    out = run("drafts", "approve", *game(demo), str(FIRST_RESULT), code=1)
    assert "起草之后，游戏的记录已经变了" in out
    assert "bansha drafts make" in out
    run("drafts", "make", *game(demo))
    store = open_store(demo / "demo.db")
    try:
        result = get_draft(store, FIRST_RESULT)
    finally:
        store.close()
    if result.state.value == "pending":  # the result does not print cards: it held
        run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    else:  # drafted anew: the new draft is the one to approve
        assert result.state.value == "superseded"


def test_an_approved_draft_whose_inputs_moved_on_is_not_sent(demo):
    """Approved, then the director gives a card: `bansha publish` sends nothing of it (no
    attempt is recorded) and says why; the forum is never asked."""
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    run("card", "give", *game(demo), "--player", "汤圆", "--colour", "蓝", "--why", "场外")
    out = run("publish", *game(demo), "--id", str(FIRST_RESULT), code=None)
    assert "没有发出" in out and "起草之后" in out
    store = open_store(demo / "demo.db")
    try:
        attempts = store.db.execute(
            "SELECT COUNT(*) FROM post_attempts WHERE draft_id = ?", [FIRST_RESULT]
        ).fetchone()[0]
        assert attempts == 0
        assert get_draft(store, FIRST_RESULT).state.value == "approved"
    finally:
        store.close()


def test_a_day_open_post_drafted_while_its_night_waits_says_so_and_waits(demo):
    """A director who records night 1's actions and has not resolved the night yet: day 2's
    opening, drafted at the opening, says in its first line that night 1 is not resolved and
    cannot be approved (it would say 平安夜); resolved, it is drafted again with the night's
    outs and can be approved."""
    store = open_store(demo / "demo.db")
    try:
        with store.atomic():  # back to before `night resolve --night 1` (its actions recorded)
            later = "SELECT phase FROM engine_snapshots WHERE seq >= 3"  # night 1 = 2·1+1
            store.db.execute(f"DELETE FROM engine_events WHERE phase IN ({later})")
            store.db.execute("DELETE FROM engine_snapshots WHERE seq >= 3")
    finally:
        store.close()
    opens = load_game(demo / "demo.toml", env={}, check_login=False).day(2).opens
    at = (opens.replace(minute=5)).isoformat()
    run("drafts", "make", *game(demo), "--as-of", at)
    store = open_store(demo / "demo.db")
    try:
        waiting = [d for d in list_drafts(store) if d.kind == "day_open" and d.day == 2]
    finally:
        store.close()
    assert len(waiting) == 1
    first_line = waiting[0].body.splitlines()[0]
    assert first_line == "〔第1晚尚未结算：结算后这份开门公示会重新起草；结算之前不能批准〕"
    out = run("drafts", "approve", *game(demo), str(waiting[0].id), code=1)
    assert "前一晚的行动还没有结算" in out
    run("night", "resolve", *game(demo), "--night", "1")
    run("drafts", "make", *game(demo), "--as-of", at)
    store = open_store(demo / "demo.db")
    try:
        live = [d for d in list_drafts(store) if d.kind == "day_open" and d.day == 2]
    finally:
        store.close()
    assert len(live) == 1 and "尚未结算" not in live[0].body
    assert "烧卖" in live[0].body or "第一身份" in live[0].body
    run("drafts", "approve", *game(demo), str(live[0].id))
