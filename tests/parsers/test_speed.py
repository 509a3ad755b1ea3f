"""申请加速 / 申请延时 posts in the progress thread (parsers.speed)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parsers.speed import SpeedKind, parse_speed_request

# m135.txt:197 未出局角色可于白天在进程帖中申请加速或延时。
# m209.txt:591 未出局角色可在进程帖中申请加速或延时。…即判定加速或延迟成功。
# tubian24.txt:330 每名玩家都有拥有在进程帖内提议进程加速的权利，
#                  若场上未出局的玩家过半数同意加速则执行加快进程。


@pytest.mark.parametrize(
    "text",
    [
        "申请加速",
        "申请加速！",
        "申 请 加 速",
        "申请：加速",
        "【申请加速】",
        "我也申请加速。",
        "大家好，申请加速",
        "同意加速",  # tubian24.txt:330 同意加速
        "申请进程加速",
        "加速",
    ],
)
def test_accelerate(text: str) -> None:
    req = parse_speed_request(text)
    assert req is not None and req.kind is SpeedKind.ACCELERATE and req.problem is None


@pytest.mark.parametrize("text", ["申请延时", "申请延迟", "申请 延时。", "延时"])
def test_delay(text: str) -> None:
    # m209.txt:591 uses both 延时 and 延迟
    req = parse_speed_request(text)
    assert req is not None and req.kind is SpeedKind.DELAY


@pytest.mark.parametrize(
    "text",
    [
        "我不申请加速",
        "不同意加速",
        "有人申请加速吗？",
        "要不要申请加速",
        "加速申请截止到18点",
        "今天讨论很激烈",
        "",
    ],
)
def test_not_a_request(text: str) -> None:
    assert parse_speed_request(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "申请加速？",
        "加速？",
        "申请延时?",
        "申请延时？",
        "延时?",
        "加速?!",
        "申请加速？？",
        "【加速？】",
        "可以申请延时吗",
        "可以申请延时吗？",
        "加速吗",
    ],
)
def test_a_question_is_not_a_request(text: str) -> None:
    # docs/rulings.md「加速/延时申请的写法」: 否定句和问句不算 — a bare 加速 / 申请延时 ending in
    # a question mark asks whether to, it does not ask for it
    assert parse_speed_request(text) is None


def test_questions_do_not_pass_an_acceleration() -> None:
    # m209.txt:591 当日申请人数……大于等于存活人数的一半，即判定加速或延迟成功。
    from datetime import datetime, timedelta, timezone

    from engine.rulesets import get_ruleset
    from engine.speed import SpeedKind as EngineKind
    from engine.speed import SpeedRequest as EngineRequest
    from engine.speed import decide_speed

    tz = timezone(timedelta(hours=8))
    living = ["饺子", "包子", "馄饨", "面条", "烧卖", "汤圆", "春卷", "油条"]
    posts = {"饺子": "申请加速", "包子": "申请加速？", "馄饨": "加速？", "面条": "加速?"}
    requests = [
        EngineRequest(who, EngineKind(parsed.kind.value), datetime(2026, 12, 3, 12, tzinfo=tz), who)
        for who, text in posts.items()
        if (parsed := parse_speed_request(text)) is not None and parsed.kind is not None
    ]
    decision = decide_speed(
        requests,
        living=living,
        deadline=datetime(2026, 12, 3, 18, tzinfo=tz),
        rules=get_ruleset("m209").speed,
    )
    assert decision.accelerate is False
    assert decision.voters[EngineKind.ACCELERATE] == ("饺子",)
    assert decision.reason.startswith("存活8人，需至少一半即4人；申请加速1人（未通过）")


def test_both_in_one_post_is_not_counted() -> None:
    req = parse_speed_request("申请加速，申请延时")
    assert req is not None and req.kind is None
    assert req.problem == "一帖内同时申请加速和延时，无法判断，不予计算"


def test_withdrawal_is_reported() -> None:
    req = parse_speed_request("撤回申请加速")
    assert req is not None and req.kind is None and req.withdraws is SpeedKind.ACCELERATE
    assert req.problem is not None and "撤回加速申请" in req.problem


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_no_input_crashes_the_speed_parser(text: str) -> None:
    req = parse_speed_request(text)
    if req is not None:
        assert (req.kind is None) == (req.problem is not None)
