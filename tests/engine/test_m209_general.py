"""m209's general RD mechanics (m209.txt:118-217) beyond the scenario files: the 伪装 choice
syntax, the surface parts (last launched wins per part, 实际带刀), the state's record of a
disguise, and the director actions 离开游戏/回到游戏/操纵夺舍/解除操纵 where they meet the
vote roster, the day and the checks that refuse them."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from engine.kernel import Action, Board, DayInput, Report, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from engine.rulesets.m209 import M209, Disguise, parse_disguise
from engine.rulesets.m209_roles import VILLAGE, WOLF
from engine.state import GameState, Phase, Status

RS = get_ruleset("m209")
assert isinstance(RS, M209)

BASE = {
    "甲": "黑狼王",
    "乙": "狼美人",
    "丙": "隐狼",
    "丁": "石像鬼",
    "戊": "预言家",
    "己": "守卫",
    "庚": "摄梦人",
    "辛": "女巫",
    "壬": "长老",
    "癸": "猎人",
    "子": "白痴",
    "丑": "替罪羊",
    "寅": "吹笛者",
}
OPENS = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)


def start(phase: str = "day:1", sheriff: str | None = None, **roles: str) -> GameState:
    """The standard line-up (roles changed as given) standing after ``phase``."""
    cards = {**BASE, **roles}
    state = RS.setup_state([(n, [r]) for n, r in cards.items()])
    return replace(state, phase=Phase.parse(phase), sheriff=sheriff)


def reasons(report: Report, skill: str) -> list[tuple[str, str]]:
    return [
        (r.outcome.value, r.reason)
        for r in report.actions
        if RS.canonical_skill(r.action.skill) == skill
    ]


# --------------------------------------------------------------------------- 伪装's choice


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        # the older shorthand: the identity, and the faction follows it (m209.txt:432)
        ("1,2,4/预言家", Disguise(("1", "2", "4"), VILLAGE, "预言家", None)),
        ("1,2,4", Disguise(("1", "2", "4"))),
        (
            "1，2，4／身份＝预言家，阵营＝狼人，带刀＝无刀",
            Disguise(("1", "2", "4"), WOLF, "预言家", "无刀"),
        ),
        ("5,2,1/带刀=无刀", Disguise(("1", "2", "5"), knife="无刀")),
        ("1,2,4/表面阵营：村民阵营", Disguise(("1", "2", "4"), faction=VILLAGE)),
        ("1,2,4/身份=狼美人;阵营=村民阵营", Disguise(("1", "2", "4"), VILLAGE, "狼美人")),
    ],
)
def test_the_disguise_sets_each_surface_part(choice: str, expected: Disguise) -> None:
    """m209.txt:432: 可以设置自己的表面阵营，表面身份，表面带刀伪装 — each part on its own."""
    assert parse_disguise(choice) == expected


@pytest.mark.parametrize(
    ("choice", "reason"),
    [
        (None, "须从1-5中选择三项"),
        ("1,2", "须从1-5中选择三项"),
        ("1,2,6", "须从1-5中选择三项"),
        ("1,3,4/预言家", "没有选择选项2，不能设置表面信息"),
        ("1,2,4/身份=村民", "不在身份池中"),
        ("1,2,4/阵营=好人", "不是本局的阵营"),
        ("1,2,4/带刀=有", "须为「有刀」或「无刀」"),
        ("1,2,4/颜色=红", "未知的表面信息「颜色」"),
        ("1,2,4/身份=预言家,女巫", "表面身份设置了两次"),
    ],
)
def test_a_wrong_disguise_says_why(choice: str | None, reason: str) -> None:
    result = parse_disguise(choice)
    assert isinstance(result, str) and reason in result, result


def test_a_wrong_disguise_is_refused_at_the_opening() -> None:
    state = start("setup")
    _state, report = resolve_night(
        state, [Action("丙", "伪装", choice="1,2,4/阵营=好人")], RS, night=0
    )
    [(outcome, reason)] = reasons(report, "伪装")
    assert outcome == "invalid" and "不是本局的阵营" in reason


# --------------------------------------------------------------------------- the surface


def test_the_last_launched_modification_wins_per_part() -> None:
    """m209.txt:133: 对同一个角色，若有多个表面信息的修改效果，最后发动的技能所造成的表面身份
    更换生效 — per part: a later identity leaves an earlier faction in place; within one phase
    the later launch replaces the earlier; nothing modified reads the actual information."""
    board = Board(start("setup"), RS, Phase.night(0))
    assert RS.surface(board, "丙").modified == ()
    assert (RS.surface(board, "丙").faction, RS.surface(board, "丙").identity) == (WOLF, "隐狼")
    RS.set_surface(board, "丙", "表面身份", "守卫", "第一次修改")
    RS.set_surface(board, "丙", "表面身份", "预言家", "第二次修改")
    RS.set_surface(board, "丙", "表面阵营", WOLF, "第二次修改")
    assert len(board.statuses_of("丙", "表面身份")) == 1
    later = Board(board.freeze(), RS, Phase.night(2))
    RS.set_surface(later, "丙", "表面身份", "女巫", "第三次修改")
    s = RS.surface(later, "丙")
    assert (s.faction, s.identity, s.knife) == (WOLF, "女巫", "无刀")
    assert set(s.modified) == {"阵营", "身份"}
    assert s.describe() == "阵营=狼人阵营，身份=女巫，带刀=无刀（同实际）"


@pytest.mark.parametrize(
    ("roles", "statuses", "expected"),
    [
        ({}, (), {"甲": True, "乙": True, "丙": False, "丁": True, "戊": False, "寅": False}),
        # 隐狼 option 1 gives [接刀] (m209.txt:431)
        ({}, (("丙", "伪装", "1,2,4"),), {"丙": True}),
        # [超度]: 会丢失且无法获得[群内]或[接刀]标签 (m209.txt:95)
        ({}, (("甲", "超度", ""),), {"甲": False, "乙": True}),
        # 石像鬼[凝望]: 丢失[接刀]标签 (m209.txt:426)
        ({}, (("丁", "失去技能", "接刀"),), {"丁": False}),
        # 噬时狼妃 gets [群内] on its first 时间逆流 (m209.txt:454)
        ({"乙": "噬时狼妃"}, (), {"乙": False}),
    ],
)
def test_the_actual_knife(
    roles: dict[str, str], statuses: tuple[tuple[str, str, str], ...], expected: dict[str, bool]
) -> None:
    """m209.txt:139: 有[群内][接刀]标签，或是持有[杀人]技能，则实际带刀视为有刀，反之视为无刀;
    the surface knife is the actual one unless modified (m209.txt:133)."""
    state = start(**roles)
    extra = tuple(Status(k, h, "测试", 0, note=n) for h, k, n in statuses)
    board = Board(replace(state, statuses=(*state.statuses, *extra)), RS, Phase.night(1))
    for name, knife in expected.items():
        assert RS.actual_knife(board, name) is knife, name
        assert RS.surface(board, name).knife == ("有刀" if knife else "无刀"), name


def test_the_state_keeps_the_disguised_surface() -> None:
    """m209.txt:432: the state (``bansha state --json``) shows each modified part of the surface;
    the JSON round trip keeps it."""
    state, report = resolve_night(
        start("setup"), [Action("丙", "伪装", choice="1,2,3/身份=预言家,带刀=无刀")], RS, night=0
    )
    parts = {
        s["kind"]: s["note"]
        for s in state.to_dict()["statuses"]
        if s["holder"] == "丙" and s["kind"].startswith("表面")
    }
    assert parts == {"表面身份": "预言家", "表面阵营": VILLAGE, "表面带刀": "无刀"}
    assert GameState.from_json(state.to_json()) == state
    assert any(
        e.result == "丙的表面信息：阵营=村民阵营，身份=预言家，带刀=无刀" for e in report.log
    )


# --------------------------------------------------------------------------- 离开游戏


def _left(
    kind: str = "暂时", who: str = "丁", sheriff: str | None = None, **roles: str
) -> GameState:
    """The state after night 1, in which ``who`` left the game."""
    state = start(sheriff=sheriff, **roles)
    state, _ = resolve_night(state, [Action(who, "离开游戏", choice=kind)], RS, night=1)
    return state


def test_a_leaver_neither_votes_nor_is_voted() -> None:
    """m209.txt:210: 离开游戏的角色…不能发言投票和被投票."""
    state = _left()
    roster = {ps.name: ps for ps in RS.vote_roster(state, opens=OPENS, red_at={})}
    assert (roster["丁"].can_vote, roster["丁"].can_be_voted) == (False, False)
    assert all(ps.can_vote and ps.can_be_voted for n, ps in roster.items() if n != "丁")
    mods = {(m.player, m.kind.value) for m in RS.vote_modifiers(state, 2)}
    assert ("丁", "no_vote") in mods


def test_a_sheriff_away_for_a_while_keeps_the_badge_but_does_not_vote() -> None:
    """m209.txt:210, 227: only leaving for good is a 殉职; while away the sheriff cannot vote."""
    state = _left(who="戊", sheriff="戊")
    assert state.sheriff == "戊"
    assert RS.vote_sheriff(state) is None
    state, _ = resolve_day(state, DayInput(2, actions=(Action("戊", "回到游戏"),)), RS)
    assert RS.vote_sheriff(state) == "戊"


def test_a_sheriff_leaving_for_good_without_a_choice_loses_the_badge() -> None:
    """m209.txt:227: 若在该阶段内未及时选择警长，警长将直接流失."""
    state, report = resolve_night(
        start(sheriff="戊"), [Action("戊", "离开游戏", choice="永久")], RS, night=1
    )
    assert state.sheriff is None
    assert [(p.who, p.skill) for p in report.pending] == [("戊", "殉职")]


def test_a_stale_vote_out_does_not_touch_a_leaver() -> None:
    """m209.txt:210: 也不受其他技能影响 — a top that left the game before the day is not out."""
    state = _left()
    _state, report = resolve_day(state, DayInput(2, out="丁", decided_by="唯一最高票"), RS)
    assert report.deaths == ()
    assert any("丁已离开游戏，不受影响" in e.result for e in report.log)


def test_noon_skills_neither_reach_nor_come_from_a_leaver() -> None:
    """m209.txt:210: 所有技能失效…也不受其他技能影响 (骑士[决斗] at 正午)."""
    state = _left(who="丙", 壬="骑士")
    acts = (Action("壬", "决斗", ("丙",)),)
    _s, report = resolve_day(state, DayInput(2, actions=acts), RS)
    [(outcome, reason)] = reasons(report, "决斗")
    assert outcome == "invalid" and "不能成为技能目标" in reason
    state = _left(who="壬", 壬="骑士")
    _s, report = resolve_day(state, DayInput(2, actions=(Action("壬", "决斗", ("乙",)),)), RS)
    [(outcome, reason)] = reasons(report, "决斗")
    assert outcome == "invalid" and "所有技能失效" in reason


def test_a_skill_for_everyone_skips_a_leaver() -> None:
    """m209.txt:283 所有角色仅当晚获得[不死] — but a leaver 不受其他技能影响 (m209.txt:210)."""
    state = start(辛="灵鹿")
    acts = [Action("丁", "离开游戏", choice="暂时"), Action("辛", "森林庇护")]
    state, _ = resolve_night(state, acts, RS, night=1)
    holders = {
        s.holder for s in state.statuses if s.kind == "不死" and s.source.endswith("[森林庇护]")
    }
    assert "丁" not in holders and "戊" in holders


@pytest.mark.parametrize(
    ("actions", "reason"),
    [
        ((Action("丁", "离开游戏"),), 'choice="暂时" 或 "永久"'),
        ((Action("丁", "回到游戏"),), "丁没有离开游戏"),
        (
            (Action("丁", "离开游戏", choice="永久"), Action("丁", "回到游戏")),
            "永久离开游戏的角色不能回到游戏",
        ),
        (
            (
                Action("丁", "离开游戏", choice="暂时"),
                Action("丁", "离开游戏", choice="暂时", ref="2"),
            ),
            "丁已暂时离开游戏",
        ),
    ],
)
def test_leaving_and_returning_refused(actions: tuple[Action, ...], reason: str) -> None:
    state = start()
    for a in actions[:-1]:
        state, _ = resolve_night(state, [a], RS, night=1)
        state, _ = resolve_day(state, DayInput(2), RS)
    _s, report = resolve_night(state, [actions[-1]], RS)
    [(outcome, got)] = [(o, r) for o, r in reasons(report, actions[-1].skill)]
    assert outcome == "invalid" and reason in got, got


# --------------------------------------------------------------------------- 操纵夺舍


@pytest.mark.parametrize(
    ("setup", "action", "reason"),
    [
        ((), Action("寅", "操纵夺舍"), "须指定1名被操纵的角色"),
        ((), Action("寅", "操纵夺舍", ("寅",)), "不能操纵自己"),
        (
            (Action("丁", "离开游戏", choice="暂时"),),
            Action("寅", "操纵夺舍", ("丁",)),
            "不能成为技能目标",
        ),
        (
            (Action("寅", "离开游戏", choice="暂时"),),
            Action("寅", "操纵夺舍", ("丁",)),
            "所有技能失效",
        ),
        ((Action("寅", "操纵夺舍", ("丁",)),), Action("寅", "操纵夺舍", ("丁",)), "寅已在操纵丁"),
        ((), Action("寅", "解除操纵"), "寅当前没有操纵任何角色"),
        ((), Action("丁", "查验", ("戊",), choice="操纵:寅"), "丁当前没有被操纵"),
    ],
)
def test_control_refused(setup: tuple[Action, ...], action: Action, reason: str) -> None:
    state = start()
    if setup:
        state, _ = resolve_night(state, setup, RS, night=1)
        state, _ = resolve_day(state, DayInput(2), RS)
    _s, report = resolve_night(state, [action], RS)
    got = [r.reason for r in report.actions if r.action == action]
    assert got and reason in got[0], got


def test_a_controller_leaving_the_game_releases_its_control() -> None:
    """m209.txt:210 所有技能失效: the leaver's control ends; the controlled is told."""
    state, _ = resolve_night(start(), [Action("寅", "操纵夺舍", ("辛",))], RS, night=1)
    state, report = resolve_day(
        state, DayInput(2, actions=(Action("寅", "离开游戏", choice="暂时"),)), RS
    )
    assert not any(s.kind == "被操纵" for s in state.statuses)
    assert any(f.to == "辛" and "你不再被操纵" in f.text for f in report.feedback)


def test_the_controlled_never_learns_who_controls_it() -> None:
    """m209.txt:214: 不会知道是谁或者是哪个身份在操纵 — over a whole night of the controlled
    witch's skills, her feedback never names the controller or its role."""
    acts = [
        Action("寅", "操纵夺舍", ("辛",)),
        Action("甲", "杀人", ("戊",)),
        Action("辛", "救药", ("戊",)),
    ]
    _s, report = resolve_night(start(), acts, RS, night=1)
    mine = [f.text for f in report.feedback if f.to == "辛"]
    assert mine and not any("寅" in t or "吹笛者" in t for t in mine)
    mirrored = [
        f.text for f in report.feedback if f.to == "寅" and f.text.startswith("（你操纵的辛）")
    ]
    assert mirrored == ["（你操纵的辛）灵通：今晚[指杀]技能的选择目标：戊（m209.txt:298）"]


def test_director_actions_cite_their_rule() -> None:
    assert RS.skill_rule("离开游戏") == "m209.txt:210"
    assert RS.skill_rule("<操纵夺舍>") == "m209.txt:214"


# --------------------------------------------------------------------------- 获取技能


@pytest.mark.parametrize("both", [True, False])
def test_a_hunter_given_a_gun_shoots_once(both: bool) -> None:
    """m209.txt:393 「猎枪：获得技能[最后一枪]」 gives 猎人 癸 the skill he already holds
    (m209.txt:351 最后一枪[亡语]): killed at night he shoots once. With both shots recorded his
    own stands and the gifted one is set aside, saying why; with the gifted one alone, it
    fires."""
    from tests.engine.test_m209_scenarios import initial_state

    state = initial_state({"setup": {"gifts": [["癸", "最后一枪"]]}})
    acts = [Action("甲", "杀人", ("癸",)), Action("癸", "馈赠最后一枪", ("丁",))]
    if both:
        acts.insert(1, Action("癸", "最后一枪", ("乙",)))
    _state, report = resolve_night(state, acts, RS, night=1)
    shot = "乙" if both else "丁"
    assert [(d.player, d.cause) for d in report.deaths] == [
        ("癸", "狼人[杀人]"),
        (shot, "猎人[最后一枪]" if both else "猎人[馈赠最后一枪]"),
    ]
    if both:
        assert reasons(report, "最后一枪") == [("done", "癸发动<最后一枪>，乙承受[暴击]")]
        assert reasons(report, "馈赠最后一枪") == [
            (
                "unused",
                "癸是猎人，本来就有<最后一枪>：黑商馈赠的猎枪是同一个技能（m209.txt:393），"
                "一次出局只开一枪，以<最后一枪>的记录为准，<馈赠最后一枪>未发动",
            )
        ]
    else:
        assert reasons(report, "馈赠最后一枪") == [("done", "癸发动<馈赠最后一枪>，丁承受[暴击]")]
