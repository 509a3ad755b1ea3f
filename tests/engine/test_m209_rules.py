"""m209 contracts: every role the text lists has its skills, specs and handlers (or is listed as
not yet resolved by the engine); the drawn line-up is checked; the night order is the text's
行动顺序总集; the vote modifiers the state puts on a tally."""

from __future__ import annotations

import re
import tomllib
from dataclasses import replace
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engine.kernel import EngineError
from engine.rulesets import get_ruleset
from engine.rulesets.m209 import M209, lineup_problems
from engine.rulesets.m209_roles import (
    ATTACK_SLOTS,
    CATEGORY,
    NIGHT_PLAN,
    NOON_SKILLS,
    NOT_YET,
    ROLE_RULES,
    ROLE_SKILLS,
    SPECS,
)
from engine.state import Phase, Status
from engine.votes import ModifierKind
from tests.engine.rule_text import rule_lines

RS = get_ruleset("m209")
assert isinstance(RS, M209)
SCENARIOS = Path(__file__).resolve().parent / "scenarios" / "m209"
BASE = [
    ("甲", "黑狼王"),
    ("乙", "狼美人"),
    ("丙", "隐狼"),
    ("丁", "石像鬼"),
    ("戊", "预言家"),
    ("己", "守卫"),
    ("庚", "摄梦人"),
    ("辛", "女巫"),
    ("壬", "长老"),
    ("癸", "猎人"),
    ("子", "白痴"),
    ("丑", "替罪羊"),
    ("寅", "吹笛者"),
]


def text_lines() -> list[str]:
    return rule_lines("m209.txt")


def test_every_role_in_the_text_is_in_the_pool() -> None:
    """m209.txt:23-33: the candidate lists (wolves, 验人系, 强神, 弱神, 三方)."""
    lines = text_lines()
    listed = re.split(r"[，。\s]+", lines[22]) + lines[25].split() + re.split(r"[，。]", lines[27])
    listed += [*lines[29].split("，"), lines[32]]
    names = {n.strip() for n in listed if n.strip()}
    assert names == set(CATEGORY)


def test_contract_every_role_has_a_handler() -> None:
    """Every listed role: its definition line, its skills, each skill's spec, and a handler
    (night step, 正午, trigger, opening or 常驻). Prints the handled / not-yet table."""
    handlers = RS.night_handlers()
    night_skills = {s for step in NIGHT_PLAN for s in step.skills}
    covered = set()
    for path in SCENARIOS.glob("*.toml"):
        covered |= set(tomllib.loads(path.read_text(encoding="utf-8")).get("covers", []))
    table = []
    for role in CATEGORY:
        assert role in ROLE_RULES, role
        assert role in ROLE_SKILLS, role
        assert role in covered, f"{role} has no scenario"
        for skill in ROLE_SKILLS[role]:
            spec = SPECS[skill]
            if skill in night_skills:
                assert skill in handlers, skill
                how = "夜晚步骤"
            elif skill in NOON_SKILLS:
                how = "正午"
            elif spec.trigger:
                how = "触发"
            elif skill in ("伪装", "模式选择"):
                how = "开局"
            else:
                assert spec.passive, skill
                how = "强制/常驻"
            status = f"未完成：{NOT_YET[skill]}" if skill in NOT_YET else "已实现"
            table.append(f"{role}<{skill}>：{how}，{status}")
    print("\n".join(table))
    assert set(NOT_YET) == set()  # every role skill is resolved by the engine


def test_role_rules_point_at_the_role_definitions() -> None:
    lines = text_lines()
    for role, ref in ROLE_RULES.items():
        line = lines[int(ref.split(":")[1]) - 1]
        assert role in line or (role == "吹笛者" and "吹笛" in line), (role, line)


def test_the_night_order_is_the_texts() -> None:
    """m209.txt:542-577: 早夜2 → 午夜 → 深夜1 → 深夜2 → 凌晨1; the death list of 凌晨2."""
    assert [s.name for s in sorted(NIGHT_PLAN, key=lambda s: s.key)] == [
        "早夜2",
        "午夜",
        "深夜1",
        "深夜2",
        "凌晨1",
    ]
    steps = {s.name: s.skills for s in NIGHT_PLAN}
    assert steps["早夜2"] == ("时间逆流", "恐惧", "结印")
    assert steps["深夜2"] == ("杀人", "牺牲", "冲锋", "潜行", "猎杀")
    assert steps["午夜"][:3] == ("交换", "冰冻", "馈赠冰冻")
    assert ATTACK_SLOTS == (
        "狼人杀人",
        "幼狼牺牲",
        "黑狼王冲锋",
        "恶灵骑士反弹",
        "摄梦人双摄",
        "潜行者潜行",
        "猎魔人猎杀",
        "女巫毒药",
        "黑商给狼暴毙",
    )


def test_the_attack_slots_are_the_texts_death_list() -> None:
    lines = text_lines()
    assert "狼人杀人\t幼狼牺牲（如果未指定）\t黑狼王冲锋\t恶灵骑士反弹" in lines[574]


def test_the_standard_draw_is_accepted() -> None:
    assert RS.validate_setup([(n, [r]) for n, r in BASE]) == []
    state = RS.setup_state([(n, [r]) for n, r in BASE])
    assert state.phase == Phase.setup()
    assert [p.name for p in state.players if p.wolf_group] == ["甲", "乙"]
    # 常驻 (m209.txt:338, 497): 长老[守护1], 吹笛者[秩序]
    assert any(s.holder == "壬" and s.kind == "守护" and s.count == 1 for s in state.statuses)
    assert any(s.holder == "寅" and s.kind == "秩序" for s in state.statuses)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"乙": "白狼王"}, "黑狼王和白狼王必出现且只会出现其中之一（m209.txt:22）"),
        ({"庚": "灵鹿"}, "灵鹿和女巫必出现且只会出现其中之一（m209.txt:27）"),
        ({"戊": "通灵师", "己": "狐狸"}, "验人系应抽 1 个，实际 2 个（m209.txt:25）"),
        ({"壬": "猎人"}, "身份「猎人」出现 2 次"),
        ({"寅": "村民"}, "身份「村民」不在本局的身份池中"),
    ],
)
def test_an_impossible_draw_is_refused(change: dict[str, str], problem: str) -> None:
    """m209.txt:22-33: 狼人 10选4（黑狼王 xor 白狼王）, 验人系 3选1, 强神 10选3（灵鹿 xor 女巫）,
    弱神 10选4, 三方 吹笛者."""
    players = [(n, [change.get(n, r)]) for n, r in BASE]
    problems = RS.validate_setup(players)
    assert any(problem in p for p in problems), problems
    with pytest.raises(EngineError, match="开局设置有误"):
        RS.setup_state(players)


def test_lineup_problems_counts_categories() -> None:
    assert lineup_problems([r for _n, r in BASE]) == []
    assert "弱神应抽 4 个，实际 3 个（m209.txt:29）" in lineup_problems(
        [r for _n, r in BASE if r != "白痴"]
    )


def test_vote_modifiers_from_statuses() -> None:
    """[迷魂] 0 votes (m209.txt:96), [独裁] +N (m209.txt:109), [狂躁] no change (m209.txt:97),
    [霸道] not out (m209.txt:166), 替罪羊 voids a tie (m209.txt:343)."""
    state = RS.setup_state([(n, [r]) for n, r in BASE])
    day = Phase.day(2).index
    state = state.__class__(
        **{
            **{f: getattr(state, f) for f in state.__dataclass_fields__},
            "statuses": (
                *state.statuses,
                Status("迷魂", "甲", "丑[冤死]", day - 1, day, negative=True),
                Status("独裁", "己", "己[结印]", day - 1, day),
                Status("狂躁", "戊", "寅[迷惑]", day - 1, None, negative=True),
                Status("霸道", "子", "白痴[大难不死]", day - 1, None),
            ),
        }
    )
    mods = {(m.player, m.kind): m for m in RS.vote_modifiers(state, 2)}
    assert mods[("甲", ModifierKind.WEIGHT_SET)].value == 0
    # 13 alive: +1, and from 10 alive one more (m209.txt:109)
    assert mods[("己", ModifierKind.VOTER_ADD)].value == Fraction(2)
    assert ("戊", ModifierKind.NO_CHANGE) in mods
    assert ("子", ModifierKind.BLOCK_OUT) in mods
    assert ("丑", ModifierKind.VOID_ON_TIE) in mods
    assert ("丑", ModifierKind.VOID_ON_TIE) not in {
        (m.player, m.kind) for m in RS.vote_modifiers(state, 1)
    }  # 不包括竞选日


def test_a_second_bleeding_is_a_critical_hit() -> None:
    """m209.txt:98: 若已持有[流血]的负面状态的情况下，再次获得[流血]的负面状态时，这次赋予流血状态的
    负面效果改为造成[暴击]."""
    from engine.kernel import Board

    state = RS.setup_state([(n, [r]) for n, r in BASE])
    board = Board(state, RS, Phase.night(1))
    assert RS.add_negative(board, "戊", "流血", "甲", None, "m209.txt:98")
    assert not any(f.to == "戊" for f in board.feedback)  # 该状态不予通知
    assert not RS.add_negative(board, "戊", "流血", "甲", None, "m209.txt:98")
    board.drain()
    assert [(d.player, d.kind) for d in board.deaths] == [("戊", "暴击")]


def test_only_the_suns_speakers_vote_the_next_day() -> None:
    """m209.txt:377-379: 只有太阳指定的角色可以发言（包括在投票帖发言）;
    投票贴不发言默认视作弃票."""
    from engine.kernel import Action, resolve_night

    roles = [(n, ["太阳" if n == "壬" else r]) for n, r in BASE]
    state = RS.setup_state(roles)
    state = state.__class__(
        **{**{f: getattr(state, f) for f in state.__dataclass_fields__}, "phase": Phase.day(1)}
    )
    acts = [Action("甲", "杀人", ("壬",)), Action("壬", "日不落", ("戊", "己"))]
    state, _ = resolve_night(state, acts, RS, night=1)
    no_vote = {m.player for m in RS.vote_modifiers(state, 2) if m.kind is ModifierKind.NO_VOTE}
    assert no_vote == set(state.living) - {"戊", "己"}
    assert not any(m.kind is ModifierKind.NO_VOTE for m in RS.vote_modifiers(state, 3))


def _sun_state(named: tuple[str, ...] = ()) -> Any:
    """Night 1: the wolves kill 太阳(壬); ``named``: the sun's 日不落 choice given at once."""
    from engine.kernel import Action, resolve_night

    roles = [(n, ["太阳" if n == "壬" else r]) for n, r in BASE]
    state = replace(RS.setup_state(roles), phase=Phase.day(1))
    acts = [Action("甲", "杀人", ("壬",))]
    if named:
        acts.append(Action("壬", "日不落", named))
    state, _ = resolve_night(state, acts, RS, night=1)
    return state


def test_day_input_carries_who_voted_for_whom() -> None:
    """m209.txt:384 (潜行：当天投票对象) needs the ballots: DayInput.from_tally takes them from the
    tally's candidate → voters map; older inputs without them keep their exact form."""
    from engine.kernel import DayInput

    tally = SimpleNamespace(
        day=2,
        out="甲",
        elected=None,
        sheriff_election=False,
        weights={"戊": 1, "己": 1, "甲": 1},
        voters={"甲": ["戊", "己"], "戊": ["甲"]},
        decided_by="最多票",
        rule="m209.txt:169",
    )
    day = DayInput.from_tally(tally)
    assert day.ballots == (("己", "甲"), ("戊", "甲"), ("甲", "戊"))
    assert DayInput.from_dict(day.to_dict()) == day
    assert "ballots" not in DayInput(2, out="甲").to_dict()


def test_a_stalk_without_recorded_ballots_is_flagged_not_refused() -> None:
    """m209.txt:384: when the day's ballots were not recorded, the limit cannot be checked: the
    潜行 resolves and the log tells the director to confirm it."""
    from engine.kernel import Action, resolve_night

    roles = [(n, ["潜行者" if n == "癸" else r]) for n, r in BASE]
    state = replace(RS.setup_state(roles), phase=Phase.day(1))
    state, report = resolve_night(state, [Action("癸", "潜行", ("乙",))], RS, night=1)
    assert [d.player for d in report.deaths] == ["乙"]
    assert any("限制未核对" in e.result for e in report.log)


def test_the_sun_names_after_the_first_round_but_the_tally_counted_others() -> None:
    """m209.txt:378-379: 太阳可以看完第一轮[正午]阶段后再决定; 投票贴不发言默认视作弃票 — named
    during the day, after the tally counted an unnamed voter: the director must recount."""
    from engine.kernel import Action, DayInput, resolve_day

    state = _sun_state()
    day = DayInput(
        2,
        out="丁",
        ballots=(("戊", "丁"), ("庚", "丁")),
        actions=(Action("壬", "日不落", ("戊", "己")),),
    )
    _state, report = resolve_day(state, day, RS)
    assert [(p.who, p.skill) for p in report.pending] == [("壬", "日不落")]
    assert "庚未被指定" in report.pending[0].prompt


def test_no_second_noon_round_without_a_fallen_sun() -> None:
    """m209.txt:377: the extra 正午 round exists only the day after 太阳 is out."""
    from engine.kernel import Action, DayInput, resolve_day

    roles = [(n, ["觉醒守卫" if n == "己" else r]) for n, r in BASE]
    state = replace(RS.setup_state(roles), phase=Phase.night(1))
    acts = (
        Action("己", "烈阳护卫", ("戊",), choice="第二轮"),
        Action("壬", "第一轮最高票", ("丙",)),
        Action("戊", "第一轮投票", ("丙",)),
    )
    _state, report = resolve_day(state, DayInput(2, actions=acts), RS)
    got = {(r.action.skill, r.outcome.value) for r in report.actions}
    assert got == {("烈阳护卫", "invalid"), ("第一轮最高票", "invalid"), ("第一轮投票", "invalid")}
    assert all("额外" in r.reason or "只有一轮" in r.reason for r in report.actions)


def test_the_first_top_out_at_noon_is_not_out_again() -> None:
    """m209.txt:378: the first round's top goes out at 黄昏 unless already out (here the same
    player is the top of both rounds: one 投票出局)."""
    from engine.kernel import Action, DayInput, resolve_day

    state = _sun_state(("戊", "己"))
    day = DayInput(2, out="丁", actions=(Action("壬", "第一轮最高票", ("丁",)),))
    _state, report = resolve_day(state, day, RS)
    assert [(d.player, d.kind) for d in report.deaths] == [("丁", "投票出局")]


def test_general_rules_are_resolved_or_listed_as_not_applicable() -> None:
    """m209.txt:118-217: 表面信息/获取技能/离开游戏/操纵夺舍 are engine mechanics (离开游戏 and
    操纵夺舍 through director actions); 身份更换 and [宣言] stay not applicable."""
    from engine.rulesets.m209 import DIRECTOR_ACTIONS
    from engine.rulesets.m209_roles import GENERAL_MECHANICS, NOT_APPLICABLE

    assert set(GENERAL_MECHANICS) == {"表面信息", "获取技能", "离开游戏", "操纵夺舍"}
    assert set(NOT_APPLICABLE) == {"身份更换", "宣言"}
    assert {"离开游戏", "回到游戏", "操纵夺舍", "解除操纵"} <= set(DIRECTOR_ACTIONS)
    assert {"离开游戏", "回到游戏", "操纵夺舍", "解除操纵"} <= set(RS.skill_names())


def test_the_general_rules_are_headings_of_the_text() -> None:
    from engine.rulesets.m209_roles import GENERAL_MECHANICS, NOT_APPLICABLE

    lines = text_lines()
    for head in (*GENERAL_MECHANICS, *NOT_APPLICABLE):
        assert any(
            line.startswith(head + "——") or line.startswith(f"[{head}]——") for line in lines
        ), head


#: Words that would bring a not-yet-resolved general rule into the pool, with the table to
#: revisit when a role text starts using them (m209.txt:56-59, 124-129, 209-217).
POOL_WORDS: dict[str, str] = {
    "更换身份": "NOT_APPLICABLE[身份更换]",
    "身份更换": "NOT_APPLICABLE[身份更换]",
    "变脸": "NOT_APPLICABLE[身份更换]",
    "双重人格": "NOT_APPLICABLE[身份更换]",
    "宣言": "NOT_APPLICABLE[宣言]",
    "操纵": "GENERAL_MECHANICS[操纵夺舍]（导演动作）",
    "夺舍": "GENERAL_MECHANICS[操纵夺舍]（导演动作）",
    "离开游戏": "GENERAL_MECHANICS[离开游戏]（导演动作）",
}


def test_no_pool_role_brings_the_off_pool_general_rules() -> None:
    """The role section (m209.txt:228-500) never mentions 更换身份/变脸/双重人格/宣言/操纵/夺舍/
    离开游戏, and no skill carries the [宣言] tag (m209.txt:56): 身份更换 and 宣言 have nothing to
    resolve, and 离开游戏/操纵夺舍 can only come from the director. Only 黑商[馈赠] hands a role
    another role's skill (守卫's modes are its own skills), and only 隐狼[伪装] sets a surface."""
    lines = text_lines()
    section = list(enumerate(lines[227:500], start=228))
    hits = [
        f"m209.txt:{n} 出现「{word}」，请重新检查 {table}"
        for n, line in section
        for word, table in POOL_WORDS.items()
        if word in line
    ]
    assert not hits, "\n".join(hits)
    tagged = [n for n, line in section if "[宣言]" in line]
    assert not tagged, tagged
    gains = [n for n, line in section if "获得技能" in line]
    guard = range(int(ROLE_RULES["守卫"][9:]), int(ROLE_RULES["魔术师"][9:]))
    merchant = range(int(ROLE_RULES["黑商"][9:]), int(ROLE_RULES["骑士"][9:]))
    assert gains and all(n in guard or n in merchant for n in gains), gains
    assert [n for n in gains if n in merchant] == [391, 392, 393, 394, 395]
    setters = [n for n, line in section if "表面" in line and "设置" in line]
    assert setters == [432]


def test_an_idiot_sheriffs_refused_choice_is_taken_back_and_the_next_one_hands_over() -> None:
    """m209.txt:357 若白痴是警长，须选择一名其他角色移交警长: a 流失 recorded in the journal is
    refused, and the director is told to take it back (the resolution reads a skill's first
    record) before recording the successor; once he has, the badge goes to the successor."""
    from tests.engine.test_m209_scenarios import M209 as SCENARIO

    base = {"setup": {"start": "night:1", "sheriff": "子"}}
    refused = {"phase": "day:2", "out": "子"}
    refused["actions"] = [
        {"actor": "子", "skill": "殉职", "choice": "流失", "ref": "#7"},
        {"actor": "子", "skill": "殉职", "targets": ["丑"], "ref": "#8"},
    ]
    ((_ph, state, report),) = SCENARIO.run({**base, "phases": [refused]})
    assert state.sheriff == "子"
    (ask,) = [p for p in report.pending if p.skill == "殉职"]
    assert ask.undo == "#7" and "先撤销这条记录" in ask.prompt and "不能流失" in ask.prompt
    taken_back = {**refused, "actions": refused["actions"][1:]}
    ((_ph, state, report),) = SCENARIO.run({**base, "phases": [taken_back]})
    assert state.sheriff == "丑" and not [p for p in report.pending if p.skill == "殉职"]
