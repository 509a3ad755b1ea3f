"""[M209] data: the role pool, factions, skills, skill specs and the night steps (rules/m209.txt).

Role parameters live here as data; the effects are code in :mod:`engine.rulesets.m209`.
Every reference is ``"m209.txt:<line>"``.
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.night import SkillSpec, Step, StepMode, TargetKind
from engine.rulesets.roles import VILLAGE, WOLF

__all__ = [
    "ATTACK_SLOTS",
    "CATEGORY",
    "DEFENCE_FOR",
    "DRAW",
    "GENERAL_MECHANICS",
    "GROUP_ROLES",
    "KNIFE_ORDER",
    "NIGHT_PLAN",
    "NOT_APPLICABLE",
    "PIPER",
    "ROLE_RULES",
    "ROLE_SKILLS",
    "SEERS",
    "SPECS",
    "STATUS_EFFECTS",
    "STRONG",
    "THIRD",
    "VILLAGE",
    "WEAK",
    "WOLF",
    "WOLF_ROLES",
]

THIRD = "吹笛者阵营"
PIPER = "吹笛者"

#: The wolves in the text's order (m209.txt:23); the order is the 接刀 order (m209.txt:416).
WOLF_ROLES: tuple[str, ...] = (
    "石像鬼",
    "隐狼",
    "幼狼",
    "恶灵骑士",
    "噬时狼妃",
    "小恶魔",
    "黑狼王",
    "噩梦之影",
    "狼美人",
    "白狼王",
)
SEERS: tuple[str, ...] = ("预言家", "通灵师", "狐狸")  # m209.txt:26
STRONG: tuple[str, ...] = (  # m209.txt:28
    "守卫",
    "摄梦人",
    "魔术师",
    "猎魔人",
    "灵鹿",
    "女巫",
    "企鹅",
    "道士",
    "觉醒守卫",
    "觉醒骑士",
)
WEAK: tuple[str, ...] = (  # m209.txt:30
    "长老",
    "替罪羊",
    "猎人",
    "白痴",
    "灵能",
    "月亮",
    "太阳",
    "潜行者",
    "骑士",
    "黑商",
)

#: Category of each role: 狼人 / 验人系 / 强神 / 弱神 / 三方.
CATEGORY: Mapping[str, str] = {
    **dict.fromkeys(WOLF_ROLES, "狼人"),
    **dict.fromkeys(SEERS, "验人系"),
    **dict.fromkeys(STRONG, "强神"),
    **dict.fromkeys(WEAK, "弱神"),
    PIPER: "三方",
}

#: How many of each category are drawn (m209.txt:22-33).
DRAW: Mapping[str, tuple[int, str]] = {
    "狼人": (4, "m209.txt:22"),
    "验人系": (1, "m209.txt:25"),
    "强神": (3, "m209.txt:27"),
    "弱神": (4, "m209.txt:29"),
    "三方": (1, "m209.txt:32"),
}

#: [群内] wolves (m209.txt:412); 噬时狼妃/噩梦之影 join on their first skill (m209.txt:454, 476).
GROUP_ROLES = frozenset({"幼狼", "恶灵骑士", "小恶魔", "黑狼王", "狼美人", "白狼王"})
#: [接刀] roles in 接刀 order (m209.txt:416): 石像鬼 always, 隐狼 only with 伪装 option 1.
KNIFE_ORDER: tuple[str, ...] = ("石像鬼", "隐狼")

ROLE_RULES: Mapping[str, str] = {
    "预言家": "m209.txt:233",
    "通灵师": "m209.txt:239",
    "狐狸": "m209.txt:244",
    "守卫": "m209.txt:249",
    "魔术师": "m209.txt:263",
    "摄梦人": "m209.txt:269",
    "猎魔人": "m209.txt:275",
    "灵鹿": "m209.txt:282",
    "觉醒骑士": "m209.txt:287",
    "女巫": "m209.txt:297",
    "企鹅": "m209.txt:308",
    "道士": "m209.txt:315",
    "觉醒守卫": "m209.txt:326",
    "长老": "m209.txt:337",
    "替罪羊": "m209.txt:342",
    "猎人": "m209.txt:350",
    "白痴": "m209.txt:356",
    "灵能": "m209.txt:360",
    "月亮": "m209.txt:365",
    "太阳": "m209.txt:375",
    "潜行者": "m209.txt:383",
    "黑商": "m209.txt:388",
    "骑士": "m209.txt:400",
    "石像鬼": "m209.txt:423",
    "隐狼": "m209.txt:429",
    "幼狼": "m209.txt:441",
    "恶灵骑士": "m209.txt:446",
    "噬时狼妃": "m209.txt:453",
    "小恶魔": "m209.txt:460",
    "黑狼王": "m209.txt:467",
    "噩梦之影": "m209.txt:475",
    "狼美人": "m209.txt:481",
    "白狼王": "m209.txt:487",
    "吹笛者": "m209.txt:495",
    "警长": "m209.txt:224",
}

#: Each role's skills as the text names them (守卫's three modes are one skill <守护> here).
ROLE_SKILLS: Mapping[str, tuple[str, ...]] = {
    "预言家": ("预言", "天意"),
    "通灵师": ("通灵",),
    "狐狸": ("狡黠",),
    "守卫": ("模式选择", "守护"),
    "魔术师": ("交换",),
    "摄梦人": ("摄梦",),
    "猎魔人": ("猎杀", "宿命"),
    "灵鹿": ("森林庇护", "长寿之命"),
    "觉醒骑士": ("断钢斩",),
    "女巫": ("灵通", "救药", "毒药"),
    "企鹅": ("冰冻",),
    "道士": ("结印",),
    "觉醒守卫": ("暗夜护卫", "烈阳护卫"),
    "长老": ("长寿之命", "村镇之殇"),
    "替罪羊": ("冤死",),
    "猎人": ("最后一枪",),
    "白痴": ("大难不死",),
    "灵能": ("感知",),
    "月亮": ("夜",),
    "太阳": ("日", "日不落"),
    "潜行者": ("潜行",),
    "黑商": ("馈赠",),
    "骑士": ("决斗",),
    "石像鬼": ("查验", "凝望", "杀人"),
    "隐狼": ("伪装", "杀人"),
    "幼狼": ("杀人", "激励", "牺牲"),
    "恶灵骑士": ("杀人", "主宰黑夜", "邪恶"),
    "噬时狼妃": ("时间逆流", "杀人"),
    "小恶魔": ("杀人", "主宰黑夜", "恶魔之眼"),
    "黑狼王": ("杀人", "冲锋", "报复"),
    "噩梦之影": ("恐惧", "杀人"),
    "狼美人": ("杀人", "魅惑"),
    "白狼王": ("杀人", "神风突击"),
    "吹笛者": ("神恩", "迷惑"),
}

#: The gifts of 黑商[馈赠] (choice → temporary skill), m209.txt:391-395.
GIFTS: Mapping[str, str] = {
    "验人": "馈赠通灵",
    "毒药": "馈赠毒药",
    "猎枪": "馈赠最后一枪",
    "守护": "馈赠流光庇护",
    "控制": "馈赠冰冻",
}

#: Which defence status stops which attack kind (m209.txt:111-112); 不死 stops all.
DEFENCE_FOR: Mapping[str, str] = {
    "指杀": "守护",
    "穿透": "坚韧",
    "特攻": "特防",
    "暴击": "暴抗",
    "投票出局": "霸道",
}

#: What a status does (m209.txt:92-102): composite statuses expand to their effects.
STATUS_EFFECTS: Mapping[str, frozenset[str]] = {
    "沉默": frozenset({"沉默"}),
    "缴械": frozenset({"缴械"}),
    "遗忘": frozenset({"遗忘"}),
    "超度": frozenset({"超度"}),
    "业炎": frozenset({"沉默", "超度", "遗忘"}),
    "净化": frozenset({"沉默", "超度", "遗忘"}),
    "冰冻": frozenset({"沉默", "缴械"}),
    "恐惧": frozenset({"沉默", "缴械"}),
}

#: The order of 凌晨2's death list (m209.txt:574-577): slot → label.
ATTACK_SLOTS: tuple[str, ...] = (
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

# steps: 早夜2 (42), 午夜 (50), 深夜1 (61), 深夜2 (62), 凌晨1 (71) — m209.txt:543-572
K_DUSK2 = (42, 0)
K_MIDNIGHT = (50, 0)
K_LATE1 = (61, 0)
K_LATE2 = (62, 0)
K_DAWN1 = (71, 0)

NIGHT_PLAN: tuple[Step, ...] = (
    Step(K_DUSK2, "早夜2", ("时间逆流", "恐惧", "结印"), "m209.txt:543", StepMode.ORDERED),
    Step(
        K_MIDNIGHT,
        "午夜",
        ("交换", "冰冻", "馈赠冰冻", "守护", "馈赠流光庇护", "暗夜护卫", "摄梦", "查验", "凝望"),
        "m209.txt:547",
        StepMode.ORDERED,
    ),
    Step(
        K_LATE1,
        "深夜1",
        ("预言", "通灵", "馈赠通灵", "狡黠", "感知", "迷惑", "魅惑", "馈赠"),
        "m209.txt:554",
        StepMode.SIMULTANEOUS,
    ),
    Step(
        K_LATE2, "深夜2", ("杀人", "牺牲", "冲锋", "潜行", "猎杀"), "m209.txt:562", StepMode.ORDERED
    ),
    Step(
        K_DAWN1,
        "凌晨1",
        ("救药", "毒药", "馈赠毒药", "森林庇护", "恶魔之眼"),
        "m209.txt:568",
        StepMode.ORDERED,
    ),
)

_P = TargetKind.PLAYER
_N = TargetKind.NONE

SPECS: Mapping[str, SkillSpec] = {
    s.name: s
    for s in (
        # 开局 (resolved on night 0, the opening)
        SkillSpec("伪装", "m209.txt:430", targets=0, target_kind=_N, day=True),
        SkillSpec(
            "模式选择",
            "m209.txt:250",
            targets=0,
            target_kind=_N,
            day=True,
            choices=("法式守卫", "日式守卫", "版杀守卫"),
        ),
        # 早夜2
        SkillSpec("时间逆流", "m209.txt:455", step=K_DUSK2),
        SkillSpec("恐惧", "m209.txt:477", step=K_DUSK2),
        SkillSpec("结印", "m209.txt:316", step=K_DUSK2, targets=3),
        # 午夜
        SkillSpec("交换", "m209.txt:264", step=K_MIDNIGHT, targets=2),
        SkillSpec("冰冻", "m209.txt:309", step=K_MIDNIGHT),
        SkillSpec("馈赠冰冻", "m209.txt:395", step=K_MIDNIGHT),
        SkillSpec("守护", "m209.txt:250", step=K_MIDNIGHT),
        SkillSpec("馈赠流光庇护", "m209.txt:394", step=K_MIDNIGHT),
        SkillSpec("暗夜护卫", "m209.txt:327", step=K_MIDNIGHT),
        SkillSpec("摄梦", "m209.txt:270", step=K_MIDNIGHT, self_ok=False),
        SkillSpec("查验", "m209.txt:424", step=K_MIDNIGHT),
        SkillSpec("凝望", "m209.txt:426", step=K_MIDNIGHT, targets=0, target_kind=_N, limited=True),
        # 深夜1
        SkillSpec("预言", "m209.txt:234", step=K_LATE1),
        SkillSpec("通灵", "m209.txt:240", step=K_LATE1),
        SkillSpec("馈赠通灵", "m209.txt:391", step=K_LATE1),
        SkillSpec("狡黠", "m209.txt:245", step=K_LATE1, targets=3, redirectable=False),
        SkillSpec("感知", "m209.txt:361", step=K_LATE1, target_kind=TargetKind.OUT_CARD),
        SkillSpec("迷惑", "m209.txt:498", step=K_LATE1, targets=2, self_ok=False),
        SkillSpec("魅惑", "m209.txt:482", step=K_LATE1),
        SkillSpec(
            "馈赠",
            "m209.txt:389",
            step=K_LATE1,
            limited=True,
            self_ok=False,
            choices=tuple(GIFTS),
        ),
        # 深夜2
        SkillSpec("杀人", "m209.txt:419", step=K_LATE2),
        SkillSpec("牺牲", "m209.txt:443", step=K_LATE2, targets=0, target_kind=_N),
        SkillSpec("冲锋", "m209.txt:468", step=K_LATE2),
        SkillSpec("潜行", "m209.txt:384", step=K_LATE2, limited=True, flexible_targets=True),
        SkillSpec(
            "猎杀", "m209.txt:276", step=K_LATE2, first_night=2, first_night_rule="m209.txt:64"
        ),
        # 凌晨1
        SkillSpec("救药", "m209.txt:299", step=K_DAWN1, limited=True),
        SkillSpec("毒药", "m209.txt:301", step=K_DAWN1, limited=True),
        SkillSpec("馈赠毒药", "m209.txt:392", step=K_DAWN1),
        SkillSpec(
            "森林庇护", "m209.txt:283", step=K_DAWN1, targets=0, target_kind=_N, limited=True
        ),
        SkillSpec("恶魔之眼", "m209.txt:462", step=K_DAWN1),
        # forced / passive (resolved by the engine)
        SkillSpec("天意", "m209.txt:236", trigger=True, day=True, forced=True, redirectable=False),
        SkillSpec("宿命", "m209.txt:279", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("长寿之命", "m209.txt:284", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("灵通", "m209.txt:298", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("村镇之殇", "m209.txt:339", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("大难不死", "m209.txt:357", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("夜", "m209.txt:366", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("日", "m209.txt:376", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("激励", "m209.txt:442", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("主宰黑夜", "m209.txt:447", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("邪恶", "m209.txt:448", targets=0, target_kind=_N, forced=True, passive=True),
        SkillSpec("神恩", "m209.txt:497", targets=0, target_kind=_N, forced=True, passive=True),
        # triggers (shots, hand-over, 冤死)
        SkillSpec("最后一枪", "m209.txt:351", trigger=True, redirectable=False),
        SkillSpec("馈赠最后一枪", "m209.txt:393", trigger=True, redirectable=False),
        SkillSpec("报复", "m209.txt:470", trigger=True, redirectable=False),
        SkillSpec("殉职", "m209.txt:227", trigger=True, forced=True, redirectable=False),
        SkillSpec(
            "日不落",
            "m209.txt:377",
            trigger=True,
            forced=True,
            flexible_targets=True,
            redirectable=False,
        ),
        SkillSpec(
            "冤死",
            "m209.txt:343",
            trigger=True,
            day=True,
            forced=True,
            flexible_targets=True,
            redirectable=False,
        ),
        # 正午
        SkillSpec("断钢斩", "m209.txt:288", day=True),
        SkillSpec("决斗", "m209.txt:401", day=True),
        SkillSpec("神风突击", "m209.txt:488", day=True),
        SkillSpec("烈阳护卫", "m209.txt:329", day=True, target_kind=TargetKind.ANY_PLAYER),
    )
}

#: Skills launched at 正午 (m209.txt:45-49), in the text's order.
NOON_SKILLS: tuple[str, ...] = ("断钢斩", "决斗", "神风突击", "烈阳护卫")
#: [排斥] skills (m209.txt:60); a gifted 毒药 keeps the tag of the skill it is (m209.txt:119, 392).
EXCLUSIVE = frozenset({"救药", "毒药", "馈赠毒药", "暗夜护卫", "烈阳护卫"})
#: [喜新] (m209.txt:74), [厌旧] (m209.txt:75), [绝情] (m209.txt:76).
NEWER = frozenset({"结印", "暗夜护卫", "烈阳护卫"})
NOT_AGAIN = frozenset({"冰冻", "恐惧", "魅惑"})
NEVER_AGAIN = frozenset({"交换"})
#: Skills of the 验人系 (for 恶灵骑士[邪恶], m209.txt:449).
SEER_SKILLS = frozenset({"预言", "通灵", "狡黠", "馈赠通灵"})

#: What the engine does not (yet) resolve by itself, per role skill; everything else in
#: ROLE_SKILLS is handled. The contract test prints this table and pins it.
NOT_YET: Mapping[str, str] = {}

#: The general rules of the text (m209.txt:118-217) the engine resolves although only one role of
#: the pool (or none: then a director action stands in for the off-pool cause) brings them into
#: play. The contract test prints this table and pins it.
GENERAL_MECHANICS: Mapping[str, str] = {
    "表面信息": (
        "m209.txt:131-139：表面阵营/表面身份/表面带刀按部分记录（同名状态，值在 note），"
        "同一部分后发动的修改生效；未修改的部分等于实际信息（实际带刀由[群内]/[接刀]/<杀人>算出）；"
        "池中唯一的来源是隐狼<伪装>选项2（m209.txt:432）"
    ),
    "获取技能": (
        "m209.txt:118-121：池中获得他人技能的唯一途径是黑商<馈赠>的临时技能（m209.txt:390-395），"
        "技能中指原身份的名词都指使用者（发动者、亡语条件、邪恶的反击对象），标签随技能（[排斥]）；"
        "同一时段同名技能真身份先结算（m209.txt:527）"
    ),
    "离开游戏": (
        "m209.txt:209-210：池中没有身份造成，由导演动作<离开游戏>（choice 暂时/永久）与<回到游戏>"
        "记录；离开者不在电梯楼中、技能失效、不能投票和被投票、不能成为目标、不受技能影响；"
        "胜负判定中暂时离开算存活、永久离开算出局；永久离开的警长殉职（m209.txt:227）"
    ),
    "操纵夺舍": (
        "m209.txt:213-217：池中没有身份造成，由导演动作<操纵夺舍>（actor 操纵者，target 被操纵者）"
        '与<解除操纵>记录；被操纵者的行动由操纵者提交（可写 choice="操纵:操纵者"），发动者仍是'
        "被操纵者，双方都收到反馈；不同角色操纵同一[团队]的角色时<杀人>算作发动失败"
    ),
}

#: General rules of the text that no role of the m209 pool can bring into play (nothing to resolve).
NOT_APPLICABLE: Mapping[str, str] = {
    "身份更换": (
        "m209.txt:124-129：池中没有更换身份的身份（变脸者、双重人格不在池中，m209.txt:228-500 的"
        "身份说明里没有“更换身份”），表面身份的更换由表面信息规则处理"
    ),
    "宣言": "m209.txt:56-59：池中没有带[宣言]标签的技能（m209.txt:228-500）",
}
