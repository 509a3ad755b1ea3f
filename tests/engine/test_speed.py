"""申请加速 / 申请延时: counting, deadlines, overrides."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.rulesets import get_ruleset, ruleset_ids
from engine.speed import (
    SpeedKind,
    SpeedRequest,
    auto_accelerated,
    decide_speed,
    speed_deadlines,
)

#: each rule set's SpeedRules, as its module declares them (engine.rulesets.<id>)
SPEED = {r: get_ruleset(r).speed for r in ruleset_ids()}
TZ = timezone(timedelta(hours=8))
LIVING = ["饺子", "包子", "馄饨", "面条", "烧卖", "汤圆", "春卷", "油条"]  # 8 living
DEADLINE = datetime(2026, 12, 3, 18, 0, tzinfo=TZ)
ACC, DELAY = SpeedKind.ACCELERATE, SpeedKind.DELAY


def req(player: str, kind: SpeedKind = ACC, minute: int = 0, hour: int = 12) -> SpeedRequest:
    return SpeedRequest(player, kind, datetime(2026, 12, 3, hour, minute, tzinfo=TZ), f"u-{player}")


def test_exactly_half_passes() -> None:
    # m209.txt:591 当日申请人数在讨论日结束三个小时前……大于等于存活人数的一半，
    # 即判定加速或延迟成功。
    decision = decide_speed(
        [req(p) for p in LIVING[:4]], living=LIVING, deadline=DEADLINE, rules=SPEED["m209"]
    )
    assert decision.accelerate is True
    assert decision.counts[ACC] == 4 and decision.needed == 4
    assert decision.reason == (
        "存活8人，需至少一半即4人；申请加速4人（通过）；申请延时0人（未通过）。结论：本日执行加速"
    )
    assert decision.rule == "m209.txt:591, m209.txt:593"


def test_below_half_fails() -> None:
    decision = decide_speed(
        [req(p) for p in LIVING[:3]], living=LIVING, deadline=DEADLINE, rules=SPEED["m209"]
    )
    assert decision.accelerate is False and decision.counts[ACC] == 3


def test_odd_number_of_living_needs_the_rounded_up_half() -> None:
    # m135.txt:197 申请加速或延时的人数大于等于存活人数的一半 — 7 living: 3.5 → 4
    living = LIVING[:7]
    assert not decide_speed(
        [req(p) for p in living[:3]], living=living, deadline=DEADLINE, rules=SPEED["m209"]
    ).accelerate
    assert decide_speed(
        [req(p) for p in living[:4]], living=living, deadline=DEADLINE, rules=SPEED["m209"]
    ).accelerate


def test_requests_after_the_deadline_are_ignored() -> None:
    # m135.txt:197 申请截至自然日18:00。
    late = req("烧卖", hour=18, minute=1)
    on_time = [req(p) for p in LIVING[:3]] + [req("汤圆", hour=18, minute=0)]
    decision = decide_speed([*on_time, late], living=LIVING, deadline=DEADLINE, rules=SPEED["m135"])
    assert decision.voters[ACC] == tuple(sorted([*LIVING[:3], "汤圆"]))
    (ignored,) = decision.ignored
    assert (ignored.player, ignored.reason) == (
        "烧卖",
        "12-03 18:01 申请加速：晚于申请截止时间12-03 18:00，不计入",
    )
    assert ignored.request is late  # its post, for the director: which floor
    decision = decide_speed(
        [*[req(p) for p in LIVING[:3]], late], living=LIVING, deadline=DEADLINE, rules=SPEED["m135"]
    )
    assert decision.accelerate is False


def test_a_dead_players_request_is_ignored() -> None:
    # m209.txt:591 未出局角色可在进程帖中申请加速或延时。……大于等于存活人数的一半
    requests = [req(p) for p in LIVING[:3]] + [req("死者")]
    decision = decide_speed(requests, living=LIVING, deadline=DEADLINE, rules=SPEED["m209"])
    assert decision.accelerate is False
    assert [(i.player, i.reason) for i in decision.ignored] == [
        ("死者", "12-03 12:00 申请加速：不是存活角色，不计入")
    ]


def test_duplicate_requests_count_once() -> None:
    requests = [req("饺子", minute=m) for m in range(5)] + [req("包子"), req("馄饨")]
    decision = decide_speed(requests, living=LIVING, deadline=DEADLINE, rules=SPEED["m209"])
    assert decision.counts[ACC] == 3 and decision.accelerate is False
    assert sum(1 for i in decision.ignored if i.player == "饺子") == 4
    # each repeat names its own post (minutes 1–4), the first one (minute 0) counted
    assert [i.request.at.minute for i in decision.ignored] == [1, 2, 3, 4]


def test_the_last_request_of_a_player_stands() -> None:
    first = SpeedRequest("饺子", ACC, datetime(2026, 12, 3, 12, 0, tzinfo=TZ), "u-1", pid=11)
    last = SpeedRequest("饺子", DELAY, datetime(2026, 12, 3, 12, 30, tzinfo=TZ), "u-2", pid=12)
    decision = decide_speed(
        [first, last], living=LIVING[:2], deadline=DEADLINE, rules=SPEED["m209"]
    )
    assert decision.voters == {ACC: (), DELAY: ("饺子",)}
    assert decision.delay is True
    # the request set aside is the earlier one, with its own post
    (ignored,) = decision.ignored
    assert ignored.reason == "12-03 12:00 申请加速：之后改为申请延时，以最后一次为准"
    assert (ignored.pid, ignored.evidence) == (11, "u-1")
    assert ignored.to_dict() == {
        "player": "饺子",
        "reason": ignored.reason,
        "pid": 11,
        "evidence": "u-1",
    }


def test_delay_cancels_acceleration_when_both_pass() -> None:
    # m209.txt:593 延迟成功时，不再视为“执行加速”状态。
    requests = [req(p, ACC) for p in LIVING[:4]] + [req(p, DELAY) for p in LIVING[4:]]
    decision = decide_speed(requests, living=LIVING, deadline=DEADLINE, rules=SPEED["m209"])
    assert (decision.accelerate, decision.delay) == (False, True)
    assert "延时成功，不再视为执行加速" in decision.reason
    # and it cancels an automatic acceleration too
    decision = decide_speed(
        [req(p, DELAY) for p in LIVING[:4]],
        living=LIVING,
        deadline=DEADLINE,
        auto=True,
        rules=SPEED["m209"],
    )
    assert (decision.accelerate, decision.delay) == (False, True)


def test_tubian24_needs_more_than_half_and_has_no_delay() -> None:
    # tubian24.txt:330 若场上未出局的玩家过半数同意加速则执行加快进程。
    half = decide_speed(
        [req(p) for p in LIVING[:4]], living=LIVING, deadline=DEADLINE, rules=SPEED["tubian24"]
    )
    assert half.accelerate is False and half.needed == 5
    more = decide_speed(
        [req(p) for p in LIVING[:5]], living=LIVING, deadline=DEADLINE, rules=SPEED["tubian24"]
    )
    assert more.accelerate is True
    delay = decide_speed(
        [req(p, DELAY) for p in LIVING], living=LIVING, deadline=DEADLINE, rules=SPEED["tubian24"]
    )
    assert delay.delay is False
    assert delay.ignored[0].reason.endswith("本规则没有申请延时，不计入")


def test_the_directors_override_wins() -> None:
    passing = [req(p) for p in LIVING[:6]]
    decision = decide_speed(
        passing, living=LIVING, deadline=DEADLINE, override=False, rules=SPEED["m209"]
    )
    assert decision.accelerate is False and decision.overridden
    assert decision.reason.endswith("导演裁定：不执行加速。结论：本日正常进行")
    decision = decide_speed(
        [], living=LIVING, deadline=DEADLINE, override=True, rules=SPEED["m209"]
    )
    assert decision.accelerate is True and decision.overridden


def test_requests_before_the_open_are_ignored() -> None:
    opens = datetime(2026, 12, 3, 9, 0, tzinfo=TZ)
    decision = decide_speed(
        [req("饺子", hour=8)],
        living=LIVING[:2],
        deadline=DEADLINE,
        opens=opens,
        rules=SPEED["m209"],
    )
    assert decision.counts[ACC] == 0


def test_m135_auto_acceleration_below_seven() -> None:
    # m135.txt:195 存活人数低于7人后，将自动执行二段加速
    assert auto_accelerated(SPEED["m135"], 6) is True
    assert auto_accelerated(SPEED["m135"], 7) is False
    assert auto_accelerated(SPEED["m209"], 3) is False  # m209.txt:590: the director decides


def test_deadlines_per_ruleset() -> None:
    close = datetime(2026, 12, 3, 22, 0, tzinfo=TZ)
    # m135.txt:197 申请截至自然日18:00。
    assert speed_deadlines(SPEED["m135"], closes=close).delay == DEADLINE
    after_midnight = datetime(2026, 12, 4, 0, 30, tzinfo=TZ)
    assert speed_deadlines(SPEED["m135"], closes=after_midnight).accelerate == DEADLINE
    # m209.txt:591 讨论日结束三个小时前（一般为最后一个自然日的18:00）
    assert (
        speed_deadlines(SPEED["m209"], closes=datetime(2026, 12, 3, 21, tzinfo=TZ)).delay
        == DEADLINE
    )
    # zhenyan.txt:156 延时申请截至讨论日结束前三小时……加速申请截止至加速成功后的讨论日结束前三小时。
    d = speed_deadlines(
        SPEED["zhenyan"], closes=close, accelerated_closes=datetime(2026, 12, 3, 20, tzinfo=TZ)
    )
    assert d.delay == datetime(2026, 12, 3, 19, tzinfo=TZ)
    assert d.accelerate == datetime(2026, 12, 3, 17, tzinfo=TZ)
    assert d.rule == "zhenyan.txt:156"
    with pytest.raises(ValueError, match="未知的规则"):
        get_ruleset("werewolf")


def test_separate_acceleration_deadline() -> None:
    requests = [req("饺子", ACC, hour=17, minute=30), req("包子", DELAY, hour=17, minute=30)]
    decision = decide_speed(
        requests,
        living=LIVING[:2],
        deadline=DEADLINE,
        accelerate_deadline=datetime(2026, 12, 3, 17, tzinfo=TZ),
        rules=SPEED["zhenyan"],
    )
    assert decision.counts == {ACC: 0, DELAY: 1}


def test_decision_serialises_to_json() -> None:
    decision = decide_speed(
        [req("饺子")], living=LIVING[:2], deadline=DEADLINE, rules=SPEED["m209"]
    )
    data = json.loads(json.dumps(decision.to_dict(), ensure_ascii=False))
    assert data["counts"] == {"accelerate": 1, "delay": 0}
    assert data["voters"]["accelerate"] == ["饺子"]


_REQ = st.builds(
    lambda p, k, m: SpeedRequest(p, k, datetime(2026, 12, 3, 12, tzinfo=TZ) + timedelta(minutes=m)),
    st.sampled_from([*LIVING, "死者"]),
    st.sampled_from(list(SpeedKind)),
    st.integers(0, 8 * 60),
)


@settings(max_examples=80, deadline=None)
@given(requests=st.lists(_REQ, max_size=20), data=st.data())
def test_request_order_does_not_matter(requests: list[SpeedRequest], data: st.DataObject) -> None:
    shuffled = data.draw(st.permutations(requests))
    for ruleset in ("m209", "tubian24"):
        a = decide_speed(requests, living=LIVING, deadline=DEADLINE, rules=SPEED[ruleset])
        b = decide_speed(shuffled, living=LIVING, deadline=DEADLINE, rules=SPEED[ruleset])
        assert a == b
        assert not (a.accelerate and a.delay)
        assert all(n <= len(LIVING) for n in a.counts.values())
