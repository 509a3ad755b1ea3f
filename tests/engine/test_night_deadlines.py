"""Each rule set's 行动时限: a night skill sent after its deadline, counted from the day's
close, is given up (``Ruleset.action_deadline`` and ``late_reason``)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from engine.rulesets import get_ruleset
from engine.rulesets.base import late_reason
from tests.engine.rule_text import says

CLOSE = datetime.fromisoformat("2026-12-05T05:13:00+08:00")

# (rule set, skill, minutes, rule line, what the line says)
CASES = [
    ("zhenyan", "时间吞噬", 30, "zhenyan.txt:190", "关门后30分钟内，蚀时狼妃未发动吞噬"),
    ("zhenyan", "守护之盾", 60, "zhenyan.txt:191", "关门后1小时内，其他应该发动技能的角色"),
    ("m135", "捣蛋", 40, "m135.txt:173", "关门后40分钟内：捣蛋"),
    ("m135", "交换", 50, "m135.txt:174", "关门后50分钟内：交换"),
    ("m135", "守护之盾", 60, "m135.txt:175", "关门后60分钟内：守护之盾"),
    ("m135", "感知", 80, "m135.txt:176", "关门后80分钟内：预言，馈赠，诽谤，感知"),
    ("m135", "杀人", 90, "m135.txt:177", "关门后90分钟内：杀人"),
    ("m135", "潜行", 100, "m135.txt:178", "关门后100分钟内：潜行"),
    ("m135", "毒药", 120, "m135.txt:179", "关门后120分钟内：救药，毒药"),
    ("m209", "时间逆流", 40, "m209.txt:543", "早夜2，关门40分钟内"),
    ("m209", "守护", 60, "m209.txt:547", "午夜，关门60分钟内"),
    ("m209", "预言", 70, "m209.txt:554", "深夜1，关门70分钟内"),
    ("m209", "杀人", 80, "m209.txt:562", "深夜2，关门80分钟内"),
    ("m209", "毒药", 90, "m209.txt:568", "凌晨1，关门90分钟内"),
    ("nizhuan", "杀人", 30, "nizhuan.txt:205", "关门后30分钟内，狼人发动<杀人>技能"),
    ("nizhuan", "预言", 45, "nizhuan.txt:206", "关门后45分钟内，收到反馈的女巫和其他身份"),
    ("tubian24", "守卫", 30, "tubian24.txt:248", "关门三十分钟后，情痴、守护、先知、狼人阵营"),
    ("tubian24", "白眼狼杀人", 30, "tubian24.txt:248", "白眼狼阵营未与导演取得联系"),
    ("tubian24", "救药", 60, "tubian24.txt:249", "最迟可宽限至关门一小时内"),
]


@pytest.mark.parametrize(("ruleset", "skill", "minutes", "ref", "words"), CASES)
def test_on_time_and_late(ruleset: str, skill: str, minutes: int, ref: str, words: str) -> None:
    says(ref, words)
    rs = get_ruleset(ruleset)
    deadline = rs.action_deadline(skill)
    assert deadline is not None
    assert (deadline.within, deadline.rule) == (timedelta(minutes=minutes), ref)
    due = CLOSE + timedelta(minutes=minutes)
    assert late_reason(skill, deadline, due, CLOSE) is None  # on the minute: in time
    reason = late_reason(skill, deadline, due + timedelta(minutes=7), CLOSE)
    assert reason is not None
    assert f"<{skill}>" in reason and ref in reason and "晚了7分钟" in reason


def test_the_reported_shield_is_late_by_an_hour_and_seventeen_minutes() -> None:
    rs = get_ruleset("zhenyan")
    at = datetime.fromisoformat("2026-12-05T07:30:00+08:00")
    reason = late_reason("守护之盾", rs.action_deadline("守护"), at, CLOSE)
    assert reason == (
        "<守护之盾>须在关门后1小时内发动（zhenyan.txt:191）：关门 2026-12-05 05:13，"
        "截止 2026-12-05 06:13；这条行动的时间 2026-12-05 07:30，晚了1小时17分钟，"
        "视为放弃发动技能"
    )


def test_nizhuan_late_kill_is_an_empty_knife() -> None:
    says("nizhuan.txt:205", "若届时狼群无法决定刀人对象，则视为空刀")
    rs = get_ruleset("nizhuan")
    reason = late_reason("杀人", rs.action_deadline("刀"), CLOSE + timedelta(hours=1), CLOSE)
    assert reason is not None and reason.endswith("视为空刀")


@pytest.mark.parametrize(
    ("ruleset", "skill"),
    [
        ("zhenyan", "殉职"),  # zhenyan.txt:189: 15 minutes after a vote-out, then chosen at random
        ("zhenyan", "最后一招"),
        ("m135", "最后一枪"),
        ("m209", "报复"),
        ("nizhuan", "最后一枪"),
        ("tubian24", "最后一枪"),  # tubian24.txt:250: counted from the hunter's death
        ("tubian24", "遗志"),  # tubian24.txt:251: counted from the monk's death
        ("tubian24", "催眠"),  # 吹笛者 is not in tubian24.txt:248
    ],
)
def test_deadlines_counted_from_something_else_are_the_directors(ruleset: str, skill: str) -> None:
    assert get_ruleset(ruleset).action_deadline(skill) is None
