"""Conduct checks: one registered check per flag kind, and the seam a new flag goes through."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from engine.conduct import (
    CHECKS,
    Activity,
    ConductCheck,
    ConductInput,
    DaySummary,
    Flag,
    FlagKind,
    PlayerLife,
    conduct_flags,
)
from engine.rulesets import get_ruleset, ruleset_ids

ROOT = Path(__file__).resolve().parents[2]
TZ = timezone(timedelta(hours=8))
DAY = DaySummary(
    day=2,
    opens=datetime(2026, 12, 2, 9, tzinfo=TZ),
    closes=datetime(2026, 12, 2, 22, tzinfo=TZ),
    discussion_tids=(1002,),
    vote_tids=(2002,),
)
PLAYERS = [PlayerLife("饺子"), PlayerLife("包子")]


def post(player: str, tid: int, role: str, pid: int, minute: int, **kw: object) -> Activity:
    return Activity(
        player,
        tid,
        role,
        pid,
        pid,
        datetime(2026, 12, 2, 10, minute, tzinfo=TZ),
        url=f"pid{pid}",
        **kw,  # type: ignore[arg-type]
    )


def game() -> list[Activity]:
    """Both players speak enough; 包子 votes with a picture and uses the red font once."""
    acts = [
        post(p, 1002, "discussion", 10 * i + n, n)
        for i, p in enumerate(("饺子", "包子"), 1)
        for n in range(5)
    ]
    acts.append(post("包子", 2002, "vote", 31, 40, text="投票：饺子 [img]x.png[/img]", red=True))
    acts.append(post("饺子", 2002, "vote", 32, 41, text="投票：包子"))
    return acts


def picture_in_vote(inp: ConductInput) -> Iterator[Flag]:
    """A picture in the vote thread: a check written the way a new flag's check is."""
    for a, day in inp.roster_posts:
        if a.role == "vote" and "[img]" in a.text:
            reason = f"第{day}天在投票帖{a.evidence.label}贴了图片"
            yield inp.flag(FlagKind.FONT, a.player, day, reason, (a.evidence,), a.pid)


def flags(**kw: object) -> tuple[Flag, ...]:
    return conduct_flags(
        days=[DAY],
        activities=game(),
        players=PLAYERS,
        rules=get_ruleset("m135").conduct,
        **kw,  # type: ignore[arg-type]
    )


def test_every_kind_has_one_check_and_a_label_in_the_kinds_order() -> None:
    assert [c.kind for c in CHECKS] == list(FlagKind)
    for kind in FlagKind:
        assert re.search(r"[\u4e00-\u9fff]", kind.zh), kind
        assert FlagKind(kind.value) is kind
    assert len({c.run for c in CHECKS}) == len(CHECKS)


def test_a_registered_check_raises_its_flags_with_reason_and_evidence() -> None:
    plain = flags()
    assert [(f.kind, f.player) for f in plain] == [(FlagKind.FONT, "包子")]

    with_picture = flags(checks=(*CHECKS, ConductCheck(FlagKind.FONT, picture_in_vote)))
    new = [f for f in with_picture if f not in plain]
    assert len(new) == 1
    [flag] = new
    rules = get_ruleset("m135").conduct
    assert flag.id == "d2-font-包子-p31"
    assert flag.reason == "第2天在投票帖31楼贴了图片"
    assert [(e.tid, e.pid, e.url) for e in flag.evidence] == [(2002, 31, "pid31")]
    assert flag.rule == rules.rule(FlagKind.FONT)
    assert flag.card == rules.cards.get(FlagKind.FONT)
    # sorted with the others: by day, kind, player, id
    assert [f.id for f in with_picture] == sorted(f.id for f in with_picture)


def test_the_checks_given_replace_the_registered_ones() -> None:
    assert flags(checks=()) == ()
    assert flags(checks=CHECKS) == flags()
    only = flags(checks=(ConductCheck(FlagKind.FONT, picture_in_vote),))
    assert [f.reason for f in only] == ["第2天在投票帖31楼贴了图片"]


def test_a_check_raising_another_kind_is_refused_in_chinese() -> None:
    wrong = ConductCheck(FlagKind.ZHASHI, picture_in_vote)
    with pytest.raises(
        ValueError, match="picture_in_vote 登记为「诈尸」，却给出了「导演专用字体」"
    ):
        flags(checks=(wrong,))


def test_the_conduct_module_names_no_rule_set() -> None:
    text = (ROOT / "engine" / "conduct.py").read_text(encoding="utf-8")
    # each id, and the word of an id that ends in digits ("tubian" of "tubian24")
    names = {n for r in ruleset_ids() for n in (r, re.sub(r"\d+$", "", r)) if len(n) >= 4}
    named = re.compile("|".join(map(re.escape, sorted(names))), re.IGNORECASE)
    assert [line for line in text.splitlines() if named.search(line)] == []
