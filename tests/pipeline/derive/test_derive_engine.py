"""The tally reads the engine once the director resolves phases with it: outs, the sheriff."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from pipeline.cli import cli

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"
AFTER = ["--as-of", "2026-12-03T09:00:00+08:00"]


def run(db, *args, code=0):
    n = 2 if args[0] in ("night", "day") else 1
    result = CliRunner().invoke(cli, [*args[:n], str(GAME), "--db", str(db), *args[n:]])
    assert result.exit_code == code, result.output
    return result.output


def tally(db, day):
    return json.loads(run(db, "tally", "--day", str(day), "--json", *AFTER))


def test_a_night_out_from_the_engine_voids_that_players_later_vote(db):
    # m135: a character is out when both cards are out (m135.txt:27). 饺子 (狼人, 猎人) loses the
    # first card to 女巫[毒药] on night 1 and keeps voting; the engine's outs are what count.
    run(db, "night", "resolve", "--night", "0")
    run(db, "day", "resolve", "--day", "1", *AFTER)
    run(
        db, "night", "add", "--night", "1", "--actor", "馄饨", "--skill", "毒药", "--target", "饺子"
    )
    run(db, "night", "resolve", "--night", "1")
    data = tally(db, 2)
    assert data["sheriff"] == "包子"  # elected on day 1, as the engine recorded it
    jiaozi = [v for v in data["votes"] if v["voter"] == "饺子"]
    assert jiaozi and jiaozi[0]["status"] == "counted"  # still in the game with the 猎人 card


def test_without_the_engine_the_tally_still_elects_and_exiles(db):
    data = tally(db, 1)
    assert data["elected"] == "包子"
    assert tally(db, 2)["sheriff"] == "包子"


def test_nizhuan_history_round_outs_end_when_the_reversal_round_opens(monkeypatch):
    """nizhuan.txt:22 — the 逆转轮 starts a new game with all 16 cards: a player out in the
    history round plays again, so only outs from the reversal round on keep a player out."""
    from datetime import datetime, timedelta, timezone
    from types import SimpleNamespace

    from pipeline.derive import engine_view
    from pipeline.game import journal

    tz = timezone(timedelta(hours=8))
    days = [SimpleNamespace(day=n, opens=datetime(2026, 12, n, 10, tzinfo=tz)) for n in (1, 5)]
    game = SimpleNamespace(days=days)
    early = ("甲", datetime(2026, 12, 2, 10, tzinfo=tz), "第1晚出局")
    late = ("乙", datetime(2026, 12, 6, 10, tzinfo=tz), "第5晚出局")
    monkeypatch.setattr(journal, "engine_outs", lambda store, game: [early, late])
    snap = SimpleNamespace(state=SimpleNamespace(settings=(("reversal_day", "5"), ("round", "2"))))
    assert engine_view._engine_outs(None, game, [snap]) == [late]
    history = SimpleNamespace(state=SimpleNamespace(settings=(("round", "1"),)))
    assert engine_view._engine_outs(None, game, [history]) == [early, late]
    assert engine_view._engine_outs(None, game, []) == []
