"""Vote validity: the day's timeline of ballots, judged the way a director would.

Every rule checked here is quoted with its file and line in the rule texts; ``says`` verifies
the quoted words are on that line when the shared rule texts are present.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import votes
from engine.ballots import PROXY_SLOT
from engine.rulesets import get_ruleset
from engine.votes import (
    EDITED_NOTE,
    Ballot,
    BallotKind,
    DayContext,
    Evidence,
    ModifierKind,
    PlayerStatus,
    Tally,
    VerdictStatus,
    VoteModifier,
    VoteVerdict,
)
from tests.engine.rule_text import says

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "discuz"

TZ = timezone(timedelta(hours=8))
OPENS = datetime(2026, 12, 2, 9, 0, tzinfo=TZ)
CLOSES = datetime(2026, 12, 2, 22, 0, tzinfo=TZ)
NOON = datetime(2026, 12, 2, 12, 0, tzinfo=TZ)
NAMES = ("饺子", "包子", "馄饨", "面条", "烧卖", "汤圆")

C, S, INV, IGN = (
    VerdictStatus.COUNTED,
    VerdictStatus.SUPERSEDED,
    VerdictStatus.INVALID,
    VerdictStatus.IGNORED,
)


def at(hour: int, minute: int = 0, second: int = 0) -> datetime:
    return datetime(2026, 12, 2, hour, minute, second, tzinfo=TZ)


def ctx(
    ruleset: str = "m135",
    *,
    players: tuple[PlayerStatus, ...] | None = None,
    out: dict[str, datetime] | None = None,
    **kw: Any,
) -> DayContext:
    out = out or {}
    roster = players or tuple(PlayerStatus(n, out_at=out.get(n)) for n in NAMES)
    return DayContext(day=2, opens=OPENS, closes=CLOSES, players=roster, ruleset=ruleset, **kw)


def judge_ballots(ballots: Any, day: DayContext) -> tuple[VoteVerdict, ...]:
    """The day's verdicts under the rule set the day names."""
    return votes.judge_ballots(ballots, day, get_ruleset(day.ruleset))


def tally(verdicts: Any, day: DayContext) -> Tally:
    return votes.tally(verdicts, day, get_ruleset(day.ruleset))


def tally_votes(ballots: Any, day: DayContext) -> tuple[tuple[VoteVerdict, ...], Tally]:
    return votes.tally_votes(ballots, day, get_ruleset(day.ruleset))


_pid = iter(range(1000, 100000))


def ballot(
    voter: str,
    target: str | None,
    when: datetime,
    kind: BallotKind = BallotKind.VOTE,
    *,
    pid: int | None = None,
    floor: int | None = None,
    **kw: Any,
) -> Ballot:
    pid = next(_pid) if pid is None else pid
    raw = kw.pop("target_raw", None)
    if raw is None:
        raw = target if target is not None else "弃权"
    if kind is BallotKind.ABSTAIN:
        target = None
    return Ballot(
        voter=voter,
        kind=kind,
        target=target,
        target_raw=raw,
        problem=kw.pop("problem", None),
        evidence=Evidence(tid=12346, pid=pid, floor=floor, at=when, url=f"u?pid={pid}"),
        **kw,
    )


def by_pid(verdicts: tuple[VoteVerdict, ...]) -> dict[int, VoteVerdict]:
    return {v.ballot.evidence.pid: v for v in verdicts}


# --- the real vote thread (tests/fixtures/discuz/manifest.json, tid 1) ----------------------


CLOSE_PID = 24  # the director's "投票已截止" in the vote thread


def _manifest_ballots() -> tuple[list[Ballot], tuple[str, ...]]:
    """Ballots as the pipeline would build them from the manifest's posts (the parser's job is
    simulated from each post's ``kind``). Times: floor N at 09:00 + 10·N minutes; the director's
    "投票已截止" (pid 24) at 22:00 (the close) and the late vote (pid 25) at 22:05."""
    path = FIXTURES / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    thread = manifest["threads"]["vote"]
    players = tuple(
        n for n in manifest["users"] if n not in ("admin", "导演A") and not n.startswith("导演")
    )
    ballots: list[Ballot] = []
    for post in thread["posts"]:
        pid, kind = post["pid"], post["kind"]
        position = post["db_position"]
        when = OPENS + timedelta(minutes=10 * position)
        if pid == CLOSE_PID:
            when = CLOSES
        elif pid > CLOSE_PID:
            when = CLOSES + timedelta(minutes=5 * (pid - CLOSE_PID))
        ev = Evidence(thread["tid"], pid, position, when, f"forum.php?mod=redirect&pid={pid}")
        author = post["author"]
        target = post.get("target")
        common: dict[str, Any] = {"voter": author, "evidence": ev, "edited": post["edited"]}
        if kind == "opening_post":  # contains the template "投票对象：XXX"
            ballots.append(
                Ballot(
                    kind=BallotKind.INVALID, target=None, target_raw="XXX", problem=None, **common
                )
            )
        elif kind == "vote" and post.get("format") == "abstain":
            ballots.append(
                Ballot(
                    kind=BallotKind.ABSTAIN, target=None, target_raw="弃权", problem=None, **common
                )
            )
        elif kind in ("vote", "late_vote"):
            ballots.append(
                Ballot(
                    kind=BallotKind.VOTE, target=target, target_raw=target, problem=None, **common
                )
            )
        elif kind == "invalid_vote":
            ballots.append(
                Ballot(
                    kind=BallotKind.INVALID,
                    target=None,
                    target_raw=post["sent_message"].split("：")[1].split("\n")[0],  # 投票给：包子
                    problem='投票格式错误：应为"投票对象：名字"（写成了"投票给：…"）',
                    **common,
                )
            )
        elif kind == "change_vote":
            ballots.append(
                Ballot(
                    kind=BallotKind.CHANGE,
                    target=target,
                    target_raw=target,
                    problem=None,
                    replied_to_pid=post.get("replied_to_pid"),
                    **common,
                )
            )
        elif kind == "hidden_white_text":
            ballots.append(
                Ballot(
                    kind=BallotKind.VOTE,
                    target="油条",
                    target_raw="油条",
                    problem=None,
                    hidden=True,
                    **common,
                )
            )
        # quotes, chat and director notices carry no vote line: no ballot
    return ballots, players


def test_fixture_vote_thread_counts_exactly_the_valid_votes() -> None:
    """The vote thread of the real Discuz X3.5 server, judged under m135.

    m135.txt:202 「每名存活角色每个讨论日限投一票，投票完成后允许改票。」
    m135.txt:205 「投票格式或投票对象有误的票无效。无效票须通过重新发帖或有效改票更正。」
    m135.txt:209 「【改票格式】改票须回复原投票楼层」
    """
    says("m135.txt:202", "每名存活角色每个讨论日限投一票")
    says("m135.txt:205", "无效票须通过重新发帖或有效改票更正")
    says("m135.txt:209", "改票须回复原投票楼层")
    ballots, players = _manifest_ballots()
    day = DayContext(2, OPENS, CLOSES, tuple(PlayerStatus(n) for n in players), ruleset="m135")
    verdicts, result = tally_votes(ballots, day)
    v = by_pid(verdicts)

    assert v[1].status is IGN and "非玩家" in v[1].reason  # the director's opening post
    assert (v[6].status, v[17].status, v[17].counts_for) == (INV, C, "包子")  # corrected
    assert (v[7].status, v[13].status, v[13].counts_for) == (S, C, "春卷")  # valid change
    # where the change is, for the director only: the public reason names no floor
    assert v[7].reason == "已被改票取代" and "第13楼（pid 13）" in v[7].note
    assert v[20].status is INV and "改票未回复原投票楼层" in v[20].reason
    for pid in (18, 19, 21, 22):  # fresh votes after a counted one
        assert v[pid].status is IGN
        assert v[pid].reason == "已投过票，重复投票不计；改票须用改票格式并回复原投票楼层"
    assert v[15].status is INV and "隐藏" in v[15].reason
    assert v[25].status is INV and v[25].reason == "投票已截止，截止后投票无效"
    assert v[10].status is C and EDITED_NOTE in v[10].reason

    counted = {x.ballot.voter: x.counts_for for x in verdicts if x.status is C}
    assert counted == {
        "饺子": "包子",
        "包子": "饺子",
        "馄饨": "面条",
        "面条": None,  # 弃权
        "烧卖": "包子",
        "汤圆": "春卷",
        "春卷": "馄饨",
        "油条": "包子",
        "Snow_风": "馄饨",
    }
    assert result.counts == {
        "包子": Fraction(3),
        "饺子": Fraction(1),
        "面条": Fraction(1),
        "春卷": Fraction(1),
        "馄饨": Fraction(2),
    }
    assert result.voters["包子"] == ["饺子", "油条", "烧卖"]  # post order
    assert result.abstained == ["面条"]
    assert (result.out, result.decided_by) == ("包子", "唯一最高票")


# --- the timeline ----------------------------------------------------------------------------


def test_votes_outside_the_day_do_not_count() -> None:
    """m135.txt:49 「在白天结束时，统计投票结果并公布。」 A vote at the exact close still counts."""
    says("m135.txt:49", "在白天结束时，统计投票结果")
    verdicts = judge_ballots(
        [
            ballot("饺子", "包子", OPENS - timedelta(minutes=1)),
            ballot("包子", "饺子", CLOSES + timedelta(seconds=1)),
            ballot("馄饨", "饺子", CLOSES),
        ],
        ctx(),
    )
    early, on_close, late = verdicts
    assert (early.status, early.reason) == (INV, "尚未开门，投票无效")
    assert (late.status, late.reason) == (INV, "投票已截止，截止后投票无效")
    assert on_close.status is C


def test_first_valid_vote_counts_and_later_fresh_votes_are_ignored() -> None:
    """m135.txt:202 「每名存活角色每个讨论日限投一票」"""
    verdicts = judge_ballots(
        [ballot("饺子", "包子", at(10)), ballot("饺子", "馄饨", at(11))], ctx()
    )
    assert [v.status for v in verdicts] == [C, IGN]
    assert verdicts[1].rule == "m135.txt:202"
    assert "改票须用改票格式并回复原投票楼层" in verdicts[1].reason


def test_an_invalid_ballot_does_not_use_up_the_vote() -> None:
    """m209.txt:599 「投票格式或投票对象有误的票无效。无效票须通过重新发帖来更正。」"""
    says("m209.txt:599", "无效票须通过重新发帖来更正")
    verdicts = judge_ballots(
        [
            ballot("饺子", None, at(10), BallotKind.INVALID, problem="投票格式错误：写成了投票给"),
            ballot("饺子", None, at(10, 5), target_raw="鳗鱼", problem="投票对象有误：「鳗鱼」"),
            ballot("饺子", "包子", at(11)),
        ],
        ctx("m209"),
    )
    assert [v.status for v in verdicts] == [INV, INV, C]
    assert verdicts[0].reason.startswith("投票格式错误：写成了投票给")
    assert "无效票不占用投票机会" in verdicts[0].reason


def test_a_valid_change_supersedes_the_vote_and_only_once() -> None:
    """m135.txt:204 「改票只允许一次。」 m135.txt:209 「改票须回复原投票楼层」

    The original vote floor is the vote's: a second change replying to it replies to the
    original floor and is refused as the second change."""
    says("m135.txt:204", "改票只允许一次")
    v1 = ballot("饺子", "包子", at(10), floor=7)
    ch1 = ballot("饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=v1.evidence.pid)
    ch2 = ballot("饺子", "面条", at(12), BallotKind.CHANGE, replied_to_pid=ch1.evidence.pid)
    ch3 = ballot("饺子", "面条", at(13), BallotKind.CHANGE, replied_to_pid=v1.evidence.pid)
    verdicts = by_pid(judge_ballots([v1, ch1, ch2, ch3], ctx()))
    assert verdicts[v1.evidence.pid].status is S
    assert verdicts[ch1.evidence.pid].status is C
    assert verdicts[ch1.evidence.pid].reason == "有效改票：由包子改为馄饨"
    assert verdicts[ch2.evidence.pid].status is INV
    assert verdicts[ch2.evidence.pid].reason == "改票只允许进行一次，本次改票无效"
    assert verdicts[ch2.evidence.pid].rule == "m135.txt:204"
    # replying to the original vote floor is replying to it: the change is the second one
    assert verdicts[ch3.evidence.pid].status is INV
    assert verdicts[ch3.evidence.pid].reason == "改票只允许进行一次，本次改票无效"
    assert verdicts[ch3.evidence.pid].rule == "m135.txt:204"


def test_a_change_replying_to_someone_elses_floor_is_invalid() -> None:
    """m209.txt:605 「【改票格式】改票需回复原投票楼层」"""
    says("m209.txt:605", "改票需回复原投票楼层")
    mine = ballot("饺子", "包子", at(10), floor=3)
    theirs = ballot("包子", "饺子", at(10, 1), floor=4)
    change = ballot("饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=theirs.evidence.pid)
    v = by_pid(judge_ballots([mine, theirs, change], ctx("m209")))
    assert v[change.evidence.pid].status is INV
    # the floor is the director's note, not the public reason
    assert v[change.evidence.pid].reason == "改票未回复原投票楼层"
    assert v[change.evidence.pid].note == (
        f"原投票为第3楼（pid {mine.evidence.pid}）；此帖回复的是 pid {theirs.evidence.pid}"
    )
    assert v[change.evidence.pid].rule == "m209.txt:605"
    assert v[mine.evidence.pid].status is C  # the original vote stands


@pytest.mark.parametrize(
    ("before_close", "status"),
    [
        (timedelta(minutes=59), INV),
        (timedelta(minutes=60), C),
        (timedelta(minutes=61), C),
    ],
)
def test_no_change_in_the_last_hour(before_close: timedelta, status: VerdictStatus) -> None:
    """m135.txt:204 「关门前一小时不允许改票或代投」.

    Exactly one hour before the close is still allowed (docs/rulings.md)."""
    vote = ballot("饺子", "包子", at(10))
    change = ballot(
        "饺子", "馄饨", CLOSES - before_close, BallotKind.CHANGE, replied_to_pid=vote.evidence.pid
    )
    verdict = by_pid(judge_ballots([vote, change], ctx()))[change.evidence.pid]
    assert verdict.status is status
    if status is INV:
        assert verdict.reason == "关门前1小时内不允许改票或代投"
        assert verdict.rule == "m135.txt:204"


@pytest.mark.parametrize("ruleset", ["m135", "m209", "zhenyan", "nizhuan", "tubian24"])
def test_no_change_when_accelerated(ruleset: str) -> None:
    """m135.txt:204 「执行二段加速时不允许改票」; m209.txt:598, zhenyan.txt:174, nizhuan.txt:189
    「执行加速时不允许改票」; tubian24 is silent and follows the house rule (docs/rulings.md)."""
    says("m135.txt:204", "执行二段加速时不允许改票")
    says("zhenyan.txt:174", "执行加速时不允许改票")
    vote = ballot("饺子", "包子", at(10))
    change = ballot("饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid)
    verdict = by_pid(judge_ballots([vote, change], ctx(ruleset, accelerated=True)))
    assert verdict[change.evidence.pid].status is INV
    assert "执行加速时不允许改票" in verdict[change.evidence.pid].reason
    assert verdict[vote.evidence.pid].status is C


def test_a_change_without_a_counted_vote() -> None:
    """m209.txt:599 「无效票须通过重新发帖来更正」: a 改票 with nothing to change is invalid.
    m135.txt:205 「无效票须通过重新发帖或有效改票更正」: in m135 a 改票 replying to one's own
    invalid floor corrects it."""
    bad = ballot("饺子", None, at(10), BallotKind.INVALID, problem="投票格式错误")
    fix = ballot("饺子", "包子", at(11), BallotKind.CHANGE, replied_to_pid=bad.evidence.pid)
    lone = ballot("包子", "饺子", at(11), BallotKind.CHANGE)

    m209 = by_pid(judge_ballots([bad, fix, lone], ctx("m209")))
    assert m209[fix.evidence.pid].status is INV
    assert m209[fix.evidence.pid].reason == "尚无有效投票，改票无效；无效票须通过重新发帖更正"
    assert m209[lone.evidence.pid].status is INV

    m135 = by_pid(judge_ballots([bad, fix, lone], ctx("m135")))
    assert m135[fix.evidence.pid].status is C
    assert m135[fix.evidence.pid].counts_for == "包子"
    assert m135[fix.evidence.pid].rule == "m135.txt:205"
    assert m135[lone.evidence.pid].status is INV  # replies to nothing of its own


def test_the_m135_correction_is_the_one_change() -> None:
    """m135.txt:204 「改票只允许一次」: the correcting 改票 uses the change."""
    bad = ballot("饺子", None, at(10), BallotKind.INVALID, problem="投票格式错误")
    fix = ballot("饺子", "包子", at(11), BallotKind.CHANGE, replied_to_pid=bad.evidence.pid)
    again = ballot("饺子", "馄饨", at(12), BallotKind.CHANGE, replied_to_pid=fix.evidence.pid)
    v = by_pid(judge_ballots([bad, fix, again], ctx("m135")))
    assert v[again.evidence.pid].status is INV
    assert "改票只允许进行一次" in v[again.evidence.pid].reason


def test_vote_by_a_player_who_went_out_at_noon() -> None:
    """m135.txt:55 「角色出局后，不能继续发言、投票、发动技能」: a vote posted after going out is
    invalid; a vote posted before still does not count once the voter is out before the close."""
    says("m135.txt:55", "角色出局后，不能继续发言、投票")
    before = ballot("饺子", "包子", at(11))
    after = ballot("包子", "饺子", at(13))
    v = by_pid(judge_ballots([before, after], ctx(out={"饺子": NOON, "包子": NOON})))
    assert v[after.evidence.pid].status is INV
    assert v[after.evidence.pid].reason == "投票者已于2026-12-02 12:00出局，出局后不能投票"
    assert v[before.evidence.pid].status is INV
    assert v[before.evidence.pid].reason == "投票者已于2026-12-02 12:00出局，其票不计入"
    assert v[before.evidence.pid].rule == "m135.txt:55"


def test_a_vote_for_a_player_who_is_out() -> None:
    """m135.txt:55 「除非特别说明，否则也不允许被选为技能或投票的目标」"""
    says("m135.txt:55", "不允许被选为技能或投票的目标")
    for_dead = ballot("饺子", "包子", at(13))
    before_duel = ballot("馄饨", "面条", at(10))
    yesterday = ballot("汤圆", "烧卖", at(10))
    out = {"包子": NOON, "面条": NOON, "烧卖": OPENS - timedelta(hours=10)}
    v = by_pid(judge_ballots([for_dead, before_duel, yesterday], ctx(out=out)))
    assert v[for_dead.evidence.pid].status is INV
    assert v[for_dead.evidence.pid].reason == "投票对象包子已于2026-12-02 12:00出局，不能被投票"
    assert v[before_duel.evidence.pid].status is INV
    assert v[before_duel.evidence.pid].reason == "投票对象面条已于2026-12-02 12:00出局，此票作废"
    assert v[yesterday.evidence.pid].status is INV


def test_after_a_void_vote_the_voter_may_still_change() -> None:
    """The target went out at noon; a change replying to the vote floor before the last hour
    is the voter's one change (m135.txt:204)."""
    vote = ballot("饺子", "包子", at(10))
    change = ballot("饺子", "馄饨", at(14), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid)
    v = by_pid(judge_ballots([vote, change], ctx(out={"包子": NOON})))
    assert (v[vote.evidence.pid].status, v[change.evidence.pid].counts_for) == (S, "馄饨")


@pytest.mark.parametrize(("ruleset", "status"), [("m209", C), ("m135", INV)])
def test_m209_change_in_the_forbidden_time_when_the_target_went_out(
    ruleset: str, status: VerdictStatus
) -> None:
    """m209.txt:170 「如果投票的角色在正午就已出局，即使在禁止改票的时间内也可以进行一次改票。」
    m135 has no such rule: its last hour stays closed."""
    says("m209.txt:170", "即使在禁止改票的时间内也可以进行一次改票")
    vote = ballot("饺子", "包子", at(10))
    late_change = ballot(
        "饺子", "馄饨", at(21, 30), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid
    )
    v = by_pid(judge_ballots([vote, late_change], ctx(ruleset, out={"包子": NOON})))
    assert v[late_change.evidence.pid].status is status
    if status is C:
        assert v[late_change.evidence.pid].rule == "m209.txt:170"
        assert "已出局" in v[late_change.evidence.pid].reason


def test_m209_the_target_out_exemption_is_granted_once_even_after_the_normal_change() -> None:
    """m209.txt:170 「…也可以进行一次改票」: one more change, once."""
    vote = ballot("饺子", "包子", at(10))
    normal = ballot("饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid)
    special = ballot(
        "饺子", "面条", at(21, 30), BallotKind.CHANGE, replied_to_pid=normal.evidence.pid
    )
    third = ballot(
        "饺子", "汤圆", at(21, 40), BallotKind.CHANGE, replied_to_pid=special.evidence.pid
    )
    v = by_pid(judge_ballots([vote, normal, special, third], ctx("m209", out={"馄饨": NOON})))
    assert (v[normal.evidence.pid].status, v[special.evidence.pid].status) == (S, C)
    assert v[special.evidence.pid].rule == "m209.txt:170"
    assert v[third.evidence.pid].status is INV
    assert "改票只允许进行一次" in v[third.evidence.pid].reason


def test_players_who_may_not_vote_or_be_voted() -> None:
    """tubian24.txt:112 「发动此技能后，白痴不能成为投票对象，不能参与投票」"""
    says("tubian24.txt:112", "白痴不能成为投票对象，不能参与投票")
    players = (
        PlayerStatus("饺子", can_vote=False, can_be_voted=False),
        PlayerStatus("包子"),
        PlayerStatus("馄饨"),
    )
    fool_votes = ballot("饺子", "包子", at(10))
    for_fool = ballot("包子", "饺子", at(10))
    v = by_pid(judge_ballots([fool_votes, for_fool], ctx("tubian24", players=players)))
    assert v[fool_votes.evidence.pid].status is INV
    assert "不能参与投票" in v[fool_votes.evidence.pid].reason
    assert v[for_fool.evidence.pid].reason == "饺子不能成为投票对象"


def test_no_vote_modifier() -> None:
    """m209.txt:357 「然后白痴不能参与投票」 — entered as a NO_VOTE modifier."""
    says("m209.txt:357", "白痴不能参与投票")
    mods = (VoteModifier("饺子", ModifierKind.NO_VOTE, source="白痴[大难不死]"),)
    (verdict,) = judge_ballots([ballot("饺子", "包子", at(10))], ctx("m209", modifiers=mods))
    assert verdict.status is INV
    assert verdict.reason == "饺子因白痴[大难不死]不能参与投票"


def test_mania_forbids_changes() -> None:
    """m209.txt:97 「[狂躁]：该状态下需要在开门之前立刻投当天的放逐投票且不允许改票」; a proxy
    entered before the opening counts as made at the opening."""
    says("m209.txt:97", "不允许改票")
    mods = (VoteModifier("饺子", ModifierKind.NO_CHANGE, source="[狂躁]"),)
    proxy = ballot("饺子", "包子", OPENS - timedelta(minutes=30), BallotKind.PROXY)
    change = ballot("饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=proxy.evidence.pid)
    v = by_pid(judge_ballots([proxy, change], ctx("m209", modifiers=mods)))
    assert v[proxy.evidence.pid].status is C
    assert "开门前代投" in v[proxy.evidence.pid].reason
    assert v[change.evidence.pid].status is INV
    assert v[change.evidence.pid].reason == "持有[狂躁]，不允许改票"
    assert v[change.evidence.pid].rule == "m209.txt:97"


def test_proxies() -> None:
    """m135.txt:203 「投票帖可以申请由导演代发。」 m135.txt:204 「关门前一小时不允许改票或代投」
    A proxy for a player who already voted is a change (once, not in the last hour)."""
    says("m135.txt:203", "投票帖可以申请由导演代发")
    early = ballot("饺子", "包子", at(15), BallotKind.PROXY)
    late = ballot("包子", "饺子", at(21, 30), BallotKind.PROXY)
    early_pre = ballot("馄饨", "饺子", OPENS - timedelta(minutes=5), BallotKind.PROXY)
    vote = ballot("面条", "饺子", at(10))
    proxy_change = ballot("面条", None, at(16), BallotKind.PROXY, target_raw="弃权")
    v = by_pid(judge_ballots([early, late, early_pre, vote, proxy_change], ctx()))
    assert (v[early.evidence.pid].status, v[early.evidence.pid].counts_for) == (C, "包子")
    assert v[early.evidence.pid].reason == "导演代投有效：投给包子"
    assert v[late.evidence.pid].status is INV
    assert v[late.evidence.pid].reason == "关门前1小时内不允许代投，该票作废"
    assert v[early_pre.evidence.pid].reason == "尚未开门，投票无效"  # m135: no pre-open proxy
    assert v[vote.evidence.pid].status is S
    assert v[proxy_change.evidence.pid].status is C
    assert v[proxy_change.evidence.pid].counts_for is None  # changed to 弃权
    assert v[proxy_change.evidence.pid].reason == "导演代投改票：由饺子改为弃权"


@pytest.mark.parametrize(
    ("minutes_before", "fresh", "change"),
    [(70, C, C), (45, C, INV), (25, INV, INV)],
)
def test_tubian24_proxy_deadlines(
    minutes_before: int, fresh: VerdictStatus, change: VerdictStatus
) -> None:
    """tubian24.txt:332 「导演至少在投票截至的30分钟前…发出代投信息。如需代投改票，需在投票截止前
    1个小时，联系导演代投。若导演在投票截止前30分钟内再让导演代投，该票作废。」"""
    says("tubian24.txt:332", "如需代投改票，需在投票截止前1个小时")
    when = CLOSES - timedelta(minutes=minutes_before)
    proxy = ballot("饺子", "包子", when, BallotKind.PROXY)
    vote = ballot("包子", "饺子", at(10))
    proxy_change = ballot("包子", "馄饨", when, BallotKind.PROXY)
    v = by_pid(judge_ballots([proxy, vote, proxy_change], ctx("tubian24")))
    assert v[proxy.evidence.pid].status is fresh
    assert v[proxy_change.evidence.pid].status is change
    if change is INV and fresh is C:
        assert v[proxy_change.evidence.pid].reason == "关门前1小时内不允许代投改票"


def test_change_to_abstain_and_abstain_counts_as_the_vote() -> None:
    """m135.txt:206 「投弃权票时，须在投票对象中填写“弃权”」"""
    says("m135.txt:206", "须在投票对象中填写“弃权”")
    abstain = ballot("饺子", None, at(10), BallotKind.ABSTAIN)
    again = ballot("饺子", "包子", at(11))
    vote = ballot("包子", "饺子", at(10))
    to_abstain = ballot("包子", None, at(11), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid)
    v = by_pid(judge_ballots([abstain, again, vote, to_abstain], ctx()))
    assert (v[abstain.evidence.pid].status, v[abstain.evidence.pid].reason) == (C, "有效票：弃权")
    assert v[again.evidence.pid].status is IGN
    assert v[to_abstain.evidence.pid].status is C
    assert v[to_abstain.evidence.pid].counts_for is None
    assert v[to_abstain.evidence.pid].abstained


def test_hidden_edited_and_non_player_posts() -> None:
    """docs/rulings.md#hidden-text 「隐藏文字……中的投票行不予采信」;
    docs/rulings.md#edited-vote 「一帖投票以 bansha 最先看到的版本为准」
    (the rule texts are silent)."""
    rulings = (Path(__file__).resolve().parents[2] / "docs" / "rulings.md").read_text("utf-8")
    assert '<a id="hidden-text"></a>隐藏文字' in rulings
    assert '<a id="edited-vote"></a>一帖投票以 bansha **最先看到的版本**为准' in rulings
    hidden = ballot("饺子", "包子", at(10), hidden=True)
    edited = ballot("包子", "饺子", at(10), edited=True)
    spectator = ballot("路人甲", "饺子", at(10))
    director = ballot("[M135]导演", "饺子", at(10), BallotKind.INVALID)
    v = by_pid(judge_ballots([hidden, edited, spectator, director], ctx()))
    assert v[hidden.evidence.pid].status is INV
    assert v[hidden.evidence.pid].reason == "投票行在隐藏文字中（白字/小字/隐藏），不予采信"
    assert v[edited.evidence.pid].status is C
    assert v[edited.evidence.pid].reason == f"有效票：投给饺子（{EDITED_NOTE}）"
    for b in (spectator, director):
        assert v[b.evidence.pid].status is IGN
        assert v[b.evidence.pid].reason == "非玩家（导演或观众）的帖子，不计票"


def test_unknown_target_keeps_the_parsers_reason() -> None:
    """m135.txt:205 「投票格式或投票对象有误的票无效」"""
    named = ballot("饺子", "鳗鱼", at(10))
    unresolved = ballot(
        "包子", None, at(10), target_raw="餃子", problem="投票对象有误：「餃子」不在名单中"
    )
    v = by_pid(judge_ballots([named, unresolved], ctx()))
    assert v[named.evidence.pid].reason == "投票对象有误：「鳗鱼」不在名单中"
    assert v[unresolved.evidence.pid].reason == "投票对象有误：「餃子」不在名单中"
    assert {x.rule for x in v.values()} == {"m135.txt:205"}


def test_nizhuan_votes_name_cards() -> None:
    """nizhuan.txt:196 「投票对象：傻树的第一身份」;
    nizhuan.txt:193 「在逆转轮中，第一身份的投票会在一开始就固定投票对象」
    — in the 逆转轮 each card votes and is voted for."""
    says("nizhuan.txt:196", "投票对象：傻树的第一身份")
    says("nizhuan.txt:193", "第一身份的投票会在一开始就固定投票对象")
    players = tuple(PlayerStatus(n, card=c) for n in ("傻树", "不见", "吉祥") for c in (1, 2))
    day = ctx("nizhuan", players=players)
    npc = ballot("傻树", "不见", OPENS, voter_card=1, card_index=1)  # fixed from round 1
    own = ballot("傻树", "不见", at(10), card_index=2)  # the player's second card
    vague = ballot("不见", "吉祥", at(10))  # no card named: ambiguous in the 逆转轮
    fix = ballot("不见", "吉祥", at(11), card_index=1)
    v = by_pid(judge_ballots([npc, own, vague, fix], day))
    assert (v[npc.evidence.pid].voter_unit, v[npc.evidence.pid].counts_for) == (
        "傻树的第一身份",
        "不见的第一身份",
    )
    assert (v[own.evidence.pid].voter_unit, v[own.evidence.pid].counts_for) == (
        "傻树的第二身份",
        "不见的第二身份",
    )
    assert v[vague.evidence.pid].status is INV
    assert v[vague.evidence.pid].reason == "投票对象须写明第几身份（例：吉祥的第一身份）"
    assert v[vague.evidence.pid].rule == "nizhuan.txt:196"
    assert v[fix.evidence.pid].status is C
    (stray,) = judge_ballots([ballot("吉祥", "不见", at(10), card_index=1, voter_card=3)], day)
    assert (stray.status, stray.reason) == (INV, "吉祥的第3身份不在场上，不能投票")
    result = tally(judge_ballots([npc, own, vague, fix], day), day)
    assert result.counts == {
        "不见的第一身份": 1,
        "不见的第二身份": 1,
        "吉祥的第一身份": 1,
    }


def test_day_context_rejects_naive_or_inverted_times() -> None:
    with pytest.raises(ValueError, match="缺少时区"):
        DayContext(2, OPENS.replace(tzinfo=None), CLOSES, (), ruleset="m135")
    with pytest.raises(ValueError, match="不晚于开门时间"):
        DayContext(2, CLOSES, OPENS, (), ruleset="m135")
    with pytest.raises(ValueError, match="帖子时间缺少时区"):
        Evidence(1, 2, None, datetime(2026, 12, 2, 10, 0), "")


def test_verdicts_serialise_to_json() -> None:
    vote = ballot("饺子", "包子", at(10), floor=2, edited=True)
    day = ctx(sheriff="饺子")
    verdicts, result = tally_votes([vote], day)
    data = json.loads(json.dumps([v.to_dict() for v in verdicts], ensure_ascii=False))
    assert data[0]["status"] == "counted"
    assert data[0]["ballot"]["evidence"]["at"] == "2026-12-02T10:00:00+08:00"
    assert data[0]["ballot"]["evidence"]["floor"] == 2
    summary = json.loads(json.dumps(result.to_dict(), ensure_ascii=False))
    assert summary["counts"] == [
        {"candidate": "包子", "votes": "3/2", "value": 1.5, "voters": ["饺子"]}
    ]
    assert summary["weights"][0] == {
        "voter": "饺子",
        "weight": "3/2",
        "value": 1.5,
        # the note is read in public drafts: a decimal (tubian24.txt:173 计为1.5票), never 3/2
        "why": "警长带队计1.5票",
    }


# --- properties ------------------------------------------------------------------------------

KINDS = list(BallotKind)


@st.composite
def days(draw: st.DrawFn) -> tuple[DayContext, list[Ballot]]:
    ruleset = draw(st.sampled_from(["m135", "m209", "tubian24", "zhenyan", "nizhuan"]))
    names = list(NAMES[:5])
    out = {
        n: draw(st.sampled_from([None, NOON, at(21, 30), OPENS - timedelta(hours=1)]))
        for n in names
    }
    players = tuple(
        PlayerStatus(n, out_at=out[n], card=1 if ruleset == "nizhuan" else None) for n in names
    )
    mods = draw(
        st.lists(
            st.builds(
                VoteModifier,
                player=st.sampled_from(names),
                kind=st.sampled_from(
                    [
                        ModifierKind.WEIGHT_ADD,
                        ModifierKind.WEIGHT_SET,
                        ModifierKind.VOTER_ADD,
                        ModifierKind.BLOCK_OUT,
                        ModifierKind.NO_CHANGE,
                    ]
                ),
                value=st.sampled_from([Fraction(0), Fraction(1), Fraction(2)]),
                source=st.just("测试"),
            ),
            max_size=2,
        )
    )
    day = DayContext(
        day=2,
        opens=OPENS,
        closes=CLOSES,
        players=players,
        sheriff=draw(st.sampled_from([None, *names])),
        accelerated=draw(st.booleans()),
        sheriff_election=draw(st.booleans()) and ruleset != "tubian24",
        modifiers=tuple(mods),
        ruleset=ruleset,
    )
    n = draw(st.integers(min_value=0, max_value=14))
    pids = draw(st.lists(st.integers(1, 60), min_size=n, max_size=n, unique=True))
    ballots = []
    for pid in pids:
        kind = draw(st.sampled_from(KINDS))
        target = draw(st.sampled_from([*names, "路人", None]))
        minutes = draw(st.integers(min_value=-30, max_value=13 * 60 + 30))
        ballots.append(
            Ballot(
                voter=draw(st.sampled_from([*names, "导演"])),
                kind=kind,
                target=None if kind in (BallotKind.ABSTAIN, BallotKind.INVALID) else target,
                target_raw=target or "弃权",
                problem=None,
                evidence=Evidence(1, pid, None, OPENS + timedelta(minutes=minutes), ""),
                replied_to_pid=draw(st.one_of(st.none(), st.sampled_from(pids))),
                edited=draw(st.booleans()),
                hidden=draw(st.booleans()) and draw(st.booleans()),
            )
        )
    return day, ballots


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=days(), seed=st.randoms(use_true_random=False))
def test_ballot_order_never_changes_the_verdicts_or_the_tally(
    data: tuple[DayContext, list[Ballot]], seed: Any
) -> None:
    day, ballots = data
    shuffled = list(ballots)
    seed.shuffle(shuffled)
    first, result = tally_votes(ballots, day)
    again, result_again = tally_votes(shuffled, day)
    assert first == again
    assert result.to_dict() == result_again.to_dict()
    # judging twice gives identical results
    assert judge_ballots(ballots, day) == first
    # invariants a director relies on
    assert len(first) == len(ballots)
    assert all(v.reason and v.rule for v in first)
    assert not any("pid" in v.reason for v in first), "floors and pids are the director's note"
    counted = [v.voter_unit for v in first if v.status is C]
    assert len(counted) == len(set(counted)), "one counted vote per voter"
    assert all(isinstance(w, Fraction) for w in result.weights.values())
    assert all(isinstance(c, Fraction) for c in result.counts.values())
    assert isinstance(result.total, Fraction)
    if result.out is not None:
        assert result.out in result.counts
    json.dumps(result.to_dict(), ensure_ascii=False)


# --- a change judged as the change it is; public reasons; the director's posts ----


def test_m209_extra_change_replying_to_the_original_vote_floor() -> None:
    """m209.txt:170 「如果投票的角色在正午就已出局，即使在禁止改票的时间内也可以进行一次改票。」
    m209.txt:605 「【改票格式】改票需回复原投票楼层」: after a normal change, the extra change
    replying to the original vote floor is accepted."""
    says("m209.txt:170", "即使在禁止改票的时间内也可以进行一次改票")
    says("m209.txt:605", "改票需回复原投票楼层")
    vote = ballot("饺子", "包子", at(10), floor=3)
    normal = ballot("饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid)
    extra = ballot("饺子", "面条", at(21, 30), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid)
    v = by_pid(judge_ballots([vote, normal, extra], ctx("m209", out={"馄饨": NOON})))
    assert v[extra.evidence.pid].status is C and v[extra.evidence.pid].counts_for == "面条"
    assert v[extra.evidence.pid].rule == "m209.txt:170"
    assert v[extra.evidence.pid].reason == (
        "有效改票：由馄饨改为面条（原投票对象馄饨已出局，禁止改票时间内也可改票一次）"
    )
    assert v[normal.evidence.pid].status is S


@pytest.mark.parametrize("ruleset", ["m135", "m209", "zhenyan", "nizhuan", "tubian24"])
def test_a_second_change_replying_to_the_original_vote_is_the_second_change(ruleset: str) -> None:
    """m209.txt:598, zhenyan.txt:174, nizhuan.txt:189 「改票只允许进行一次」; m135.txt:204
    「改票只允许一次」 — not "改票未回复原投票楼层"."""
    says("m209.txt:598", "改票只允许进行一次")
    says("nizhuan.txt:189", "改票只允许进行一次")
    card = 1 if ruleset == "nizhuan" else None
    players = tuple(PlayerStatus(n, card=card) for n in NAMES)
    kw = {"card_index": 1} if card else {}
    vote = ballot("饺子", "包子", at(10), floor=3, **kw)
    first = ballot(
        "饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid, **kw
    )
    second = ballot(
        "饺子", "面条", at(12), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid, **kw
    )
    v = by_pid(judge_ballots([vote, first, second], ctx(ruleset, players=players)))
    assert v[first.evidence.pid].status is C
    assert v[second.evidence.pid].status is INV
    assert v[second.evidence.pid].reason == "改票只允许进行一次，本次改票无效"
    assert "回复" not in v[second.evidence.pid].reason


def test_an_unresolved_change_is_judged_as_a_change_with_every_reason() -> None:
    """m135.txt:204 「改票只允许一次。关门前一小时不允许改票或代投」, m135.txt:209 「改票须回复原
    投票楼层」, m135.txt:205 「投票格式或投票对象有误的票无效」: a change whose name does not
    resolve is still a change, and every rule it breaks is listed."""
    says("m135.txt:205", "投票格式或投票对象有误的票无效")
    vote = ballot("饺子", "包子", at(10), floor=3)
    first = ballot("饺子", "馄饨", at(11), BallotKind.CHANGE, replied_to_pid=vote.evidence.pid)
    problem = "投票对象有误：「鳗鱼」不在名单中"
    bad = ballot(
        "饺子", None, at(21, 30), BallotKind.CHANGE, target_raw="鳗鱼", problem=problem
    )  # replies to nothing, after the change, in the last hour
    v = by_pid(judge_ballots([vote, first, bad], ctx()))
    verdict = v[bad.evidence.pid]
    assert verdict.status is INV and verdict.ballot.kind is BallotKind.CHANGE
    assert verdict.reason == (
        "改票未回复原投票楼层；改票只允许进行一次，本次改票无效；"
        "关门前1小时内不允许改票或代投；投票对象有误：「鳗鱼」不在名单中"
    )
    assert verdict.rule == "m135.txt:209"  # the first rule it breaks
    assert v[first.evidence.pid].status is C  # the counted change stands
    # alone (a first change, in time, replying to the vote) only the name is wrong
    lone = ballot(
        "包子", None, at(12), BallotKind.CHANGE, target_raw="鳗鱼", problem=problem, floor=9
    )
    own = ballot("包子", "饺子", at(11), floor=8)
    lone = Ballot(**{**_fields(lone), "replied_to_pid": own.evidence.pid})
    v = by_pid(judge_ballots([own, lone], ctx()))
    assert v[lone.evidence.pid].reason == f"改票无效：{problem}"
    assert v[lone.evidence.pid].rule == "m135.txt:205"
    assert v[own.evidence.pid].status is C


def _fields(b: Ballot) -> dict[str, Any]:
    return {f: getattr(b, f) for f in Ballot.__slots__}  # type: ignore[attr-defined]


def test_a_directors_post_in_vote_format_is_ignored_with_its_reason() -> None:
    """m135.txt:203 「投票帖可以申请由导演代发。」: the director's own vote line is not a vote;
    it gets a verdict with its reason, not silence."""
    says("m135.txt:203", "投票帖可以申请由导演代发")
    own = ballot("导演", "饺子", at(10), by_director=True)
    bad_proxy = ballot(
        "导演", "包子", at(11), by_director=True, problem="代投的玩家「路人」不在名单中"
    )
    v = by_pid(judge_ballots([own, bad_proxy], ctx()))
    assert v[own.evidence.pid].status is IGN
    assert v[own.evidence.pid].reason == "导演的帖子，不计票"
    # the how-to is the director's: the front end puts its command in the slot
    assert v[own.evidence.pid].note.startswith(f"代投请用 {PROXY_SLOT} 记录")
    assert v[own.evidence.pid].rule == "m135.txt:203"
    assert v[bad_proxy.evidence.pid].reason == "导演的帖子，不计票：代投的玩家「路人」不在名单中"
    # a spectator is still a spectator
    spectator = ballot("路人甲", "饺子", at(10))
    assert judge_ballots([spectator], ctx())[0].reason == "非玩家（导演或观众）的帖子，不计票"


def test_public_reasons_name_no_floor_and_the_note_keeps_it_for_the_director() -> None:
    """A delete renumbers the floors Discuz shows (docs/discuz.md §1.3): the public reason must
    read the same before and after; the floor and pid go to the director's note."""

    def day(shift: int) -> dict[int, VoteVerdict]:
        vote = ballot("饺子", "包子", at(10), pid=501, floor=5 - shift)
        change = ballot(
            "饺子", "馄饨", at(11), BallotKind.CHANGE, pid=502, floor=7 - shift, replied_to_pid=501
        )
        wrong = ballot(
            "饺子", "面条", at(12), BallotKind.CHANGE, pid=503, floor=9 - shift, replied_to_pid=9
        )
        other = ballot("包子", "饺子", at(10), pid=504, floor=6 - shift)
        stray = ballot(
            "包子", "馄饨", at(11), BallotKind.CHANGE, pid=505, floor=8 - shift, replied_to_pid=9
        )
        return by_pid(judge_ballots([vote, change, wrong, other, stray], ctx()))

    before, after = day(0), day(1)
    assert {p: v.reason for p, v in before.items()} == {p: v.reason for p, v in after.items()}
    for v in before.values():
        assert "楼" not in v.reason.replace("回复原投票楼层", "") and "pid" not in v.reason
    assert before[501].reason == "已被改票取代" and before[501].note == "取代它的是第7楼（pid 502）"
    assert before[505].reason == "改票未回复原投票楼层"
    assert before[505].note == "原投票为第6楼（pid 504）；此帖回复的是 pid 9"
    assert after[505].note == "原投票为第5楼（pid 504）；此帖回复的是 pid 9"
    data = before[505].to_dict()
    assert data["note"] == before[505].note and data["reason"] == "改票未回复原投票楼层"


def test_a_ballots_note_reaches_its_verdict() -> None:
    """What the pipeline tells the director about a ballot (an unreadable post, a folded name)
    is in the verdict's note, never in its public reason."""
    unreadable = ballot(
        "饺子",
        None,
        at(10),
        BallotKind.INVALID,
        problem="帖子内容不可读（仅作者可见），无法判定",
        note="请导演查看原帖后代投（bansha vote proxy）或裁定",
    )
    folded = ballot(
        "包子", "饺子", at(10), target_raw="饺\u200b子", folded=("invisible",), note="含不可见字符"
    )
    v = by_pid(judge_ballots([unreadable, folded], ctx()))
    assert "请导演" not in v[unreadable.evidence.pid].reason
    assert v[unreadable.evidence.pid].note == "请导演查看原帖后代投（bansha vote proxy）或裁定"
    assert (
        v[folded.evidence.pid].status is C and v[folded.evidence.pid].reason == "有效票：投给饺子"
    )
    assert v[folded.evidence.pid].note == "含不可见字符"
    assert v[folded.evidence.pid].to_dict()["ballot"]["folded"] == ["invisible"]


# --- [狂躁]: the opening is the deadline (engine.votes ModifierKind.BEFORE_OPEN) -------------


def _mania(player: str, rule: str = "m209.txt:97") -> VoteModifier:
    return VoteModifier(player, ModifierKind.BEFORE_OPEN, Fraction(0), "[狂躁]", rule)


def test_a_mania_sheriff_voting_after_the_opening_abstains_and_breaks_no_tie() -> None:
    says("m209.txt:97", "该状态下需要在开门之前立刻投当天的放逐投票且不允许改票")
    says("m209.txt:97", "开门之前未决定则默认弃票")
    says("m209.txt:169", "否则警长投票的角色为最高票，否则没有最高票")
    c = ctx("m209", sheriff="饺子", modifiers=(_mania("饺子"),))
    late = ballot("饺子", "馄饨", at(10))
    votes = [late, ballot("包子", "馄饨", at(11)), ballot("面条", "烧卖", at(11, 5))]
    verdicts, t = tally_votes(votes, c)
    v = by_pid(verdicts)[late.evidence.pid]
    assert v.status is INV and v.rule == "m209.txt:97"
    assert v.reason == (
        "饺子持有[狂躁]，须在开门之前投票，开门后的投票不计入（开门之前未决定则默认弃票）"
    )
    assert t.abstained == ["饺子"] and t.total == 3 and t.sheriff_vote is None
    assert t.out is None and t.decided_by == "平票，警长弃权，无人出局（没有最高票）"
    assert "饺子持有[狂躁]，开门之前未投票，默认弃票" in t.notes


def test_a_mania_modifier_recorded_by_hand_cites_the_rule_set() -> None:
    """``bansha vote modifier --kind before_open`` stores no rule: the rule set's [狂躁] line."""
    says("m209.txt:97", "需要在开门之前立刻投当天的放逐投票")
    c = ctx("m209", modifiers=(_mania("包子", rule=""),))
    late = ballot("包子", "饺子", at(10))
    v = by_pid(judge_ballots([late], c))[late.evidence.pid]
    assert v.status is INV and v.rule == "m209.txt:97"


def test_a_mania_holder_out_before_the_close_is_no_abstention() -> None:
    says("m209.txt:97", "开门之前未决定则默认弃票")
    c = ctx("m209", out={"包子": at(12)}, modifiers=(_mania("包子"), _mania("面条")))
    _verdicts, t = tally_votes([ballot("饺子", "馄饨", at(10))], c)
    assert t.abstained == ["面条"] and t.total == 2
    assert not any(n.startswith("包子") for n in t.notes)


def test_a_bare_name_means_the_card_in_play_when_the_vote_is_cast() -> None:
    """nizhuan: 馄饨's second card goes out at 15:00 — before then "馄饨" names no card; after,
    only the first card can be meant (an out card is no target, nizhuan.txt:51)."""
    says("nizhuan.txt:51", "已经公示的出局角色不属于游戏范畴，不允许被选为技能或投票的目标")
    players = tuple(
        PlayerStatus(n, out_at=at(15) if (n, card) == ("馄饨", 2) else None, card=card)
        for n in NAMES
        for card in (1, 2)
    )
    c = ctx("nizhuan", players=players)
    early = ballot("饺子", "馄饨", at(12))
    late = ballot("包子", "馄饨", at(16))
    v = by_pid(judge_ballots([early, late], c))
    assert v[early.evidence.pid].status is INV
    assert v[early.evidence.pid].reason == "投票对象须写明第几身份（例：馄饨的第一身份）"
    assert v[late.evidence.pid].status is C
    assert v[late.evidence.pid].reason == "有效票：投给馄饨的第一身份"
