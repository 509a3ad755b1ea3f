"""改编于版杀迷你场的规则——狼人真言 (rules/zhenyan.txt): the vote rules and the whole engine.

Votes:

- Day 1 elects the sheriff in the election thread (zhenyan.txt:38, 105, 135); the sheriff's vote
  weighs 1.5 (zhenyan.txt:106).
- From day 2 a player is out only with strictly more than half of all votes (zhenyan.txt:38:
  单角色票数总和大于总票数的一半). "总票数" counts every counted vote at its weight, abstentions
  included: 弃权 is a vote the text calls 弃权票 (zhenyan.txt:177). A tie can never pass.
- Votes are anonymous until the game ends (zhenyan.txt:37, 173): who voted whom is not public.

Engine (one card per player, 12 players, zhenyan.txt:64-100):

- ``night:0`` is the game start (游戏开始时): no skill is launched; 预言家 and 守卫 learn who the
  长老 is (村庄老友, zhenyan.txt:88, 92). The first game night is ``night:1``, after day 1
  (zhenyan.txt:135-136).
- The night runs the steps (1)–(9) of zhenyan.txt:137-145 through :func:`engine.night.run_steps`;
  the 指杀 resolves at (8), the 猎杀 at (9); a 狼美人 going out takes her 魅惑 target with her
  (zhenyan.txt:73), inserted at once.
- 魔力点 (zhenyan.txt:54-58) is a table status ``魔力点`` whose ``count`` is the points left: 12 at
  the start; −2 after every day from day 2 on; −2 for every vote-out from day 2 on; a skill's <X>
  when it is launched. At the end of a day or night at 0 or below the game ends and the "游戏结束时"
  conditions are judged (zhenyan.txt:55). The 长老 is told the points after each day and night
  (魔力通灵, zhenyan.txt:85).
- 真言词语 guessed correctly are table statuses ``真言猜中`` (note = the word's position 1–4), added
  by the day action ``猜中`` (choice = position): read from the inquiry thread
  (pipeline.derive.inquiry.guess_actions, fed by a day's resolution) or recorded by the
  director; a word counts once. The guesser must be a living player who is not the day's
  sheriff (咒语反噬, zhenyan.txt:109; zhenyan.txt:41). The words themselves never enter the
  engine state.
- The win check (zhenyan.txt:113-127) runs in the text's order once every death of the phase has
  been resolved; before a village win is announced, a living 狼王 may use <最后一招>
  (zhenyan.txt:70, 114); a surrender never triggers it (zhenyan.txt:49).

Interpretations are listed in the module constant :data:`RULINGS` (for docs/rulings.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from fractions import Fraction
from typing import ClassVar, Literal

from engine.cards import Card, CardRules
from engine.conduct import DEFAULT_RULE, ConductRules, FlagKind
from engine.deal import Deal, Rng, expand, shuffle
from engine.kernel import (
    CHOICE,
    RECORD,
    Action,
    Board,
    DayInput,
    Death,
    EngineError,
    Outcome,
    Trigger,
    later,
    seeded_choice,
)
from engine.night import Handler, Holder, Pass, SkillSpec, Step, StepMode, TargetKind, run_steps
from engine.rulesets.base import (
    ENDED_BEFORE_THE_VOTE,
    SHARED_VOTE_RULES,
    CountSheet,
    Deadline,
    Decision,
    Hands,
    InquiryRules,
    LastWordsRules,
    Lineup,
    Ruleset,
    action_time,
    zh_votes,
)
from engine.rulesets.roles import VILLAGE, WOLF
from engine.speed import SpeedRules
from engine.state import Charge, GameState, Phase, PlayerState, Status

__all__ = [
    "DECK",
    "MANA_START",
    "NIGHT_PLAN",
    "PRIVILEGED",
    "ROLE_SKILLS",
    "RULINGS",
    "SECRET_KEYS",
    "SPECS",
    "VILLAGE",
    "WOLF",
    "WOLF_ROLES",
    "Zhenyan",
    "guess_position",
    "guessed_words",
    "mana",
]

#: The keys of the game file's ``[zhenyan]`` table: the four secret words and the spellings
#: accepted for each (checked by pipeline.derive.inquiry).
SECRET_KEYS: tuple[str, ...] = ("words", "variants")


#: The 12 cards (zhenyan.txt:64-100).
DECK: Mapping[str, int] = {
    "狼王": 1,
    "狼美人": 1,
    "石像鬼": 1,
    "蚀时狼妃": 1,
    "长老": 1,
    "预言家": 1,
    "守卫": 1,
    "猎魔人": 1,
    "村民": 4,
}
WOLF_ROLES = frozenset({"狼王", "狼美人", "石像鬼", "蚀时狼妃"})
#: 特权牌 for 石像鬼[凝视] (zhenyan.txt:76): the village cards with a skill
#: (docs/rulings.md#zhenyan-privileged).
PRIVILEGED = frozenset({"长老", "预言家", "守卫", "猎魔人"})

ROLE_SKILLS: Mapping[str, tuple[str, ...]] = {
    "狼王": ("杀人", "感知", "最后一招"),
    "狼美人": ("杀人", "感知", "魅惑"),
    "石像鬼": ("杀人", "感知", "凝视"),
    "蚀时狼妃": ("杀人", "感知", "时间吞噬"),
    "长老": ("咒语创作者", "魔力通灵"),
    "预言家": ("村庄老友", "预言"),
    "守卫": ("村庄老友", "守护之盾"),
    "猎魔人": ("狩猎",),
    "村民": (),
}

#: <X> of each skill (zhenyan.txt:25): the 魔力点 it costs when launched.
COSTS: Mapping[str, int] = {"预言": 1, "守护之盾": 1, "狩猎": 2}

MANA_START = 12  # zhenyan.txt:56
MANA = "魔力点"
GUESSED = "真言猜中"
CHARM = "魅惑"
HUNT_LOST = "狩猎丢失"
TEAM = "狼群"  # the card key of the wolves' team <杀人> charge
WORDS = 4

_ONE = TargetKind.PLAYER
SPECS: Mapping[str, SkillSpec] = {
    s.name: s
    for s in (
        SkillSpec(
            "时间吞噬",
            "zhenyan.txt:79",
            step=(1, 0),
            limited=True,
            first_night=1,
            first_night_rule="zhenyan.txt:136",
            redirectable=False,
        ),
        SkillSpec(
            "魅惑",
            "zhenyan.txt:73",
            step=(2, 0),
            first_night=1,
            first_night_rule="zhenyan.txt:136",
            redirectable=False,
        ),
        SkillSpec(
            "守护之盾",
            "zhenyan.txt:93",
            step=(3, 0),
            first_night=1,
            first_night_rule="zhenyan.txt:136",
            redirectable=False,
        ),
        SkillSpec(
            "杀人",
            "zhenyan.txt:66",
            step=(4, 0),
            first_night=1,
            first_night_rule="zhenyan.txt:136",
            redirectable=False,
        ),
        SkillSpec(
            "狩猎",
            "zhenyan.txt:97",
            step=(5, 0),
            first_night=1,
            first_night_rule="zhenyan.txt:136",
            redirectable=False,
        ),
        SkillSpec(
            "预言",
            "zhenyan.txt:89",
            step=(6, 0),
            first_night=1,
            first_night_rule="zhenyan.txt:136",
            redirectable=False,
        ),
        SkillSpec(
            "凝视",
            "zhenyan.txt:76",
            step=(7, 0),
            first_night=1,
            first_night_rule="zhenyan.txt:136",
            redirectable=False,
        ),
        SkillSpec("感知", "zhenyan.txt:67", targets=0, forced=True, passive=True),
        SkillSpec("咒语创作者", "zhenyan.txt:84", targets=0, forced=True, passive=True),
        SkillSpec("魔力通灵", "zhenyan.txt:85", targets=0, forced=True, passive=True),
        SkillSpec("村庄老友", "zhenyan.txt:88", targets=0, forced=True, passive=True),
        SkillSpec("最后一招", "zhenyan.txt:70", trigger=True, redirectable=False),
        SkillSpec("殉职", "zhenyan.txt:107", trigger=True, forced=True, redirectable=False),
    )
}
#: Director's actions (not skills).
DIRECTOR_ACTIONS = ("猜中", "红牌罚下", "投降", "判负")
#: 询问贴会比正常讨论和投票贴提前1小时关闭 (zhenyan.txt:188)
INQUIRY_CLOSE_BEFORE = timedelta(hours=1)
#: The actor of a director's action that names no player (a 猜中 recorded without its guesser).
DIRECTOR = "导演"

NIGHT_PLAN: tuple[Step, ...] = (
    Step((1, 0), "蚀时狼妃：时间吞噬", ("时间吞噬",), "zhenyan.txt:137"),
    Step((2, 0), "狼美人：魅惑", ("魅惑",), "zhenyan.txt:138"),
    Step((3, 0), "守卫：守护之盾", ("守护之盾",), "zhenyan.txt:139"),
    Step((4, 0), "狼人：杀人", ("杀人",), "zhenyan.txt:140"),
    Step((5, 0), "猎魔人：狩猎", ("狩猎",), "zhenyan.txt:141"),
    Step((6, 0), "预言家：预言", ("预言",), "zhenyan.txt:142", StepMode.ORDERED),
    Step((7, 0), "石像鬼：凝视", ("凝视",), "zhenyan.txt:143", StepMode.ORDERED),
)

_ALIASES = {
    "守护": "守护之盾",
    "猎杀": "狩猎",
    "吞噬": "时间吞噬",
    "查验": "预言",
    "指杀": "杀人",
    "红牌": "红牌罚下",
    "猜词": "猜中",
    "猜中真言": "猜中",
}

#: The interpretations this module makes where the text is silent (for docs/rulings.md).
RULINGS: tuple[str, ...] = (
    (
        "zhenyan.txt:135-136 第零晚（night:0）是开局：不发"
        "动技能，只结算<村庄老友>；第一个游戏日夜晚是第1天之后的 night:1。"
    ),
    (
        "zhenyan.txt:25, 58 技能的<X>在技能被有效发动时扣除（即"
        "使被守护、被时间吞噬反射或无效），魔力点不足也可以发动。"
    ),
    (
        "zhenyan.txt:57 第1天（竞选日）不扣魔力点；从第2天起每个白天"
        "结束扣2点，每次投票出局再扣2点；红牌罚下不扣。"
    ),
    (
        "zhenyan.txt:55 魔力点判定在白天或夜晚的所有出局与继任结算之后"
        "进行；≤0 时按“游戏结束时”条件判定。"
    ),
    (
        "zhenyan.txt:66 “非村民”指身份牌不是村民（长老、预言家、守卫"
        "、猎魔人及狼人阵营都算非村民）；对村民的指杀无效，但仍消耗一次使用次数。"
    ),
    (
        "zhenyan.txt:66 “狼人出局”指任何狼人阵营角色因任何原因出局（"
        "含投票、红牌、魅惑连带），每出局一名次数+1，从下一晚起可用。"
    ),
    ("zhenyan.txt:76 “特权牌”指有技能的村民阵营身份：长老、预言家、守卫、猎魔人。"),
    (
        "zhenyan.txt:79 时间吞噬只影响村民阵营角色当晚对被吞噬者发动的"
        "夜晚技能（守护之盾、狩猎、预言）；反馈仍写原目标的名字。"
    ),
    ("zhenyan.txt:97, 145 猎魔人在（8）被指杀出局时，其在（5）已决定的猎杀仍在（9）结算。"),
    ("zhenyan.txt:73 魅惑持续到下一个夜晚开始前（当晚及次日白天）；狼美人可以魅惑自己（无效果）。"),
    (
        "zhenyan.txt:70, 114 狼王<最后一招>只在村民阵营即将获胜"
        "时发动；未记录决定时引擎列出待办，不宣布胜负。"
    ),
    (
        "zhenyan.txt:118-127 胜负按文本顺序判定（狼人1、2、3，"
        "村民1、2、3）；条件2只在游戏因魔力点结束时判定。"
    ),
    (
        "zhenyan.txt:49 投降由导演在狼人阵营（含已出局者）全数同意后记"
        "录，村民阵营直接获胜，不触发最后一招。"
    ),
    ("zhenyan.txt:38 总票数含弃权票（按权重），警长1.5票；须严格大于一半才出局。"),
    ("zhenyan.txt:107, 189 殉职 choice=随机 时按记录种子随机继任（警长15分钟内未联系导演）。"),
    (
        "zhenyan.txt:109, 41 猜中只在猜词者当天开始时存活且不是当天警长时计入；警长或已出局角色的"
        "猜中（询问帖读到的或导演记录的）都不计入，结算中写明原因。"
    ),
)


# ----------------------------------------------------------------------- roles, mana, guessed words


def role_of(p: PlayerState) -> str:
    return p.cards[0].name


def faction_of_role(role: str) -> str:
    return WOLF if role in WOLF_ROLES else VILLAGE


def mana(state: GameState) -> int:
    """The 魔力点 left in a state."""
    for s in state.statuses:
        if s.kind == MANA and s.holder == "*" and s.count is not None:
            return s.count
    return MANA_START


def guessed_words(state: GameState) -> tuple[int, ...]:
    """Positions (1–4) of the 真言词语 guessed correctly so far."""
    return tuple(sorted({int(s.note) for s in state.statuses if s.kind == GUESSED}))


def guess_position(choice: str | None) -> int | None:
    """The word position (1–4) a ``猜中`` action's choice names ("1", "第1个", "第1个词语");
    None when it names none."""
    raw = (choice or "").strip()
    try:
        position = int(raw.removeprefix("第").removesuffix("个词语").removesuffix("个"))
    except ValueError:
        return None
    return position if 1 <= position <= WORDS else None


def _board_mana(board: Board) -> int:
    for s in board.statuses:
        if s.kind == MANA and s.holder == "*" and s.count is not None:
            return s.count
    return MANA_START


def _set_mana(board: Board, value: int) -> None:
    old = [s for s in board.statuses if s.kind == MANA and s.holder == "*"]
    for s in old:
        board.remove_status(s)
    board.statuses.append(
        Status(MANA, "*", "真言", 0, None, value, survives_death=True, note="剩余魔力点")
    )


def _spend(board: Board, points: int, why: str, step: str, rule: str) -> None:
    before = _board_mana(board)
    after = before - points
    _set_mana(board, after)
    board.emit(step, rule, f"魔力点{before}→{after}（{why}，−{points}）")


def _board_guessed(board: Board) -> set[int]:
    return {int(s.note) for s in board.statuses if s.kind == GUESSED}


# --------------------------------------------------------------------------- the rule set


class Zhenyan(Ruleset):
    id: ClassVar[str] = "zhenyan"
    name: ClassVar[str] = "狼人真言"
    rule_file: ClassVar[str] = "zhenyan.txt"
    aliases: ClassVar[tuple[str, ...]] = ("狼人真言", "真言")
    costs: ClassVar[Mapping[str, int]] = COSTS
    deck: ClassVar[Mapping[str, int]] = DECK
    director_actions: ClassVar[tuple[str, ...]] = DIRECTOR_ACTIONS
    privileged: ClassVar[frozenset[str]] = PRIVILEGED
    wolf_roles: ClassVar[frozenset[str]] = WOLF_ROLES

    sheriff_weight: ClassVar[Fraction] = Fraction(3, 2)
    public_voters: ClassVar[bool] = False

    rules: ClassVar[dict[str, str]] = {
        **SHARED_VOTE_RULES,
        "vote_right": "zhenyan.txt:37",
        "out": "zhenyan.txt:41",
        "window": "zhenyan.txt:37",
        "one_vote": "zhenyan.txt:171",
        "format": "zhenyan.txt:175",
        "correct_invalid": "zhenyan.txt:175",
        "abstain": "zhenyan.txt:177",
        "change_once": "zhenyan.txt:174",
        "change_reply": "zhenyan.txt:183",
        "change_cutoff": "zhenyan.txt:174",
        "change_accelerated": "zhenyan.txt:174",
        "proxy": "zhenyan.txt:172",
        "proxy_cutoff": "zhenyan.txt:174",
        "proxy_change_cutoff": "zhenyan.txt:174",
        "election": "zhenyan.txt:105",
        "sheriff_weight": "zhenyan.txt:106",
        "top": "zhenyan.txt:38",
        "tie": "zhenyan.txt:38",
        "block_out": "docs/rulings.md#block-out",
        "public": "zhenyan.txt:37",
    }

    # --- what else the rule set is ----------------------------------------------------------
    title: ClassVar[str] = "狼人真言"
    conduct: ClassVar[ConductRules] = ConductRules(
        "zhenyan",
        rules={
            FlagKind.QIANSHUI: "zhenyan.txt:272",
            FlagKind.QIANSHUI_STREAK: "zhenyan.txt:273",
            FlagKind.NO_VOTE: "zhenyan.txt:274, zhenyan.txt:177",
            FlagKind.ZHASHI: "zhenyan.txt:278, zhenyan.txt:41",
            FlagKind.FONT: "zhenyan.txt:277",
            FlagKind.LASTWORDS_CODE: f"{DEFAULT_RULE}；zhenyan.txt:46 出局的角色没有遗言",
            FlagKind.INQUIRY_LIMIT: "zhenyan.txt:165, zhenyan.txt:147",
            FlagKind.SHERIFF_DISCUSSION: "zhenyan.txt:109, zhenyan.txt:291",
            FlagKind.SHERIFF_ANSWER: "zhenyan.txt:166, zhenyan.txt:109, zhenyan.txt:291",
            FlagKind.SHERIFF_INQUIRY: "zhenyan.txt:109, zhenyan.txt:291",
        },
        inquiry_limit=3,
        inquiry_close_before=INQUIRY_CLOSE_BEFORE,
        sheriff_answers_only=True,
        cards={
            FlagKind.QIANSHUI: Card.YELLOW,
            FlagKind.QIANSHUI_STREAK: Card.YELLOW,
            FlagKind.NO_VOTE: Card.YELLOW,
            # zhenyan.txt:291 直接黄牌或红牌: at least a yellow; the director may give red.
            FlagKind.SHERIFF_DISCUSSION: Card.YELLOW,
            FlagKind.SHERIFF_ANSWER: Card.YELLOW,
            FlagKind.SHERIFF_INQUIRY: Card.YELLOW,
        },
        allowed={
            # zhenyan.txt:271 潜水（以下行为均固定判罚一张“黄牌”）
            FlagKind.QIANSHUI: frozenset({Card.YELLOW}),
            FlagKind.QIANSHUI_STREAK: frozenset({Card.YELLOW}),
            FlagKind.NO_VOTE: frozenset({Card.YELLOW}),
            # zhenyan.txt:291 （直接黄牌或红牌）
            FlagKind.SHERIFF_DISCUSSION: frozenset({Card.YELLOW, Card.RED}),
            FlagKind.SHERIFF_ANSWER: frozenset({Card.YELLOW, Card.RED}),
            FlagKind.SHERIFF_INQUIRY: frozenset({Card.YELLOW, Card.RED}),
        },
    )
    cards: ClassVar[CardRules] = CardRules(
        "zhenyan",
        escalation_rule="zhenyan.txt:216, zhenyan.txt:219",
        red_out_rule="zhenyan.txt:222",
        faction_rule="zhenyan.txt:223",
    )
    # zhenyan.txt:155-156 ……大于等于存活人数的一半……延时申请截至讨论日结束前三小时（一般为最后
    # 一个自然日18:00），加速申请截止至加速成功后的讨论日结束前三小时。
    # zhenyan.txt:159 延迟成功时，不再视为"执行加速"状态。
    speed: ClassVar[SpeedRules] = SpeedRules(
        "zhenyan",
        rule="zhenyan.txt:155, zhenyan.txt:159",
        deadline_rule="zhenyan.txt:156",
        auto_rule="zhenyan.txt:152（由导演决定）",
    )
    # zhenyan.txt:31 游戏流程发生变化时需要在讨论帖中公示
    announce_in: ClassVar[Literal["discussion", "vote"]] = "discussion"
    #: the rule text's 投票格式 and 改票格式, as written (zhenyan.txt:179-185)
    vote_format: ClassVar[str] = (
        "【投票格式】\n"
        "投票对象：傻树\n"
        "投票理由：砍\n"
        "\n"
        "【改票格式】改票需回复原投票楼层\n"
        "改票对象：不见\n"
        "改票理由：吉祥猪"
    )
    vote_format_rule: ClassVar[str] = "zhenyan.txt:179-185"
    announce_rule: ClassVar[str] = "zhenyan.txt:31"
    lastwords: ClassVar[LastWordsRules] = LastWordsRules(
        none="出局的角色没有遗言（zhenyan.txt:46）", red_card_rule="zhenyan.txt:42"
    )
    # the inquiry thread (询问贴): 3 yes/no questions a day, closed 1 hour before the day
    inquiry: ClassVar[InquiryRules | None] = InquiryRules(
        daily_limit=3,
        limit_rule="zhenyan.txt:165",  # also zhenyan.txt:147
        close_before=INQUIRY_CLOSE_BEFORE,
        close_rule="zhenyan.txt:188",
        words=WORDS,
        words_rule="zhenyan.txt:52",
        out_rule="zhenyan.txt:41",
        sheriff_guess_rule="zhenyan.txt:109",
        sheriff_answer_rule="zhenyan.txt:166, zhenyan.txt:291",
        sheriff_discussion_rule="zhenyan.txt:109, zhenyan.txt:291",
        guess_skill="猜中",
        answer_rule="zhenyan.txt:168",
        reveal_rule="zhenyan.txt:31, zhenyan.txt:168",
    )
    public_voters_rule: ClassVar[str] = "zhenyan.txt:37"  # 投票为匿名投票
    secret_keys: ClassVar[tuple[str, ...]] = SECRET_KEYS

    has_engine: ClassVar[bool] = True
    #: 投弃权票时，须在投票对象中填写“弃权” (zhenyan.txt:177)
    bare_abstain: ClassVar[bool] = False
    #: 游戏立即结束 (zhenyan.txt:114): a guess, a red card or a 判负 during the day
    ends_before_the_vote: ClassVar[bool] = True
    skill_specs: ClassVar[Mapping[str, SkillSpec]] = SPECS
    skill_aliases: ClassVar[Mapping[str, str]] = _ALIASES
    roles: ClassVar[Mapping[str, tuple[str, ...]]] = ROLE_SKILLS
    specs: ClassVar[Mapping[str, SkillSpec]] = SPECS
    night_plan: ClassVar[tuple[Step, ...]] = NIGHT_PLAN
    #: 行动时限 (zhenyan.txt:190-191): 吞噬 within 30 minutes of the close, every other night
    #: skill within an hour
    night_deadlines: ClassVar[Mapping[str, Deadline]] = {
        "时间吞噬": Deadline(timedelta(minutes=30), "zhenyan.txt:190")
    }
    other_night_deadline: ClassVar[Deadline | None] = Deadline(
        timedelta(hours=1), "zhenyan.txt:191"
    )

    def guess_position(self, choice: str | None) -> int | None:
        return guess_position(choice)

    def decide_exile(self, sheet: CountSheet) -> Decision:
        """zhenyan.txt:38 如果存在单角色票数总和大于总票数的一半，则其出局，否则当天无人出局。"""
        _best, top = sheet.maximum()
        tie = top if len(top) > 1 else ()
        total = (
            sheet.total if self.majority_counts_abstentions else sheet.total - sheet.abstain_total
        )
        rule = self.ref("top")
        counted = (
            f"含弃权{zh_votes(sheet.abstain_total)}"
            if self.majority_counts_abstentions
            else "不含弃权"
        )
        note = (f"总票数{zh_votes(total)}（{counted}），出局须多于{zh_votes(total / 2)}票",)
        if len(top) == 1 and sheet.counts[top[0]] * 2 > total:
            decision = Decision(top, (), top[0], None, "票数过半出局", rule, note)
            return self.apply_block(sheet, decision)
        if not top:
            return Decision((), (), None, None, "无有效票，无人出局", rule, note)
        return Decision(top, tie, None, None, "票数未过半无人出局", rule, note)

    # ------------------------------------------------------------------ setup
    # one card each from the 12 identities (zhenyan.txt:62-100)
    hands: ClassVar[Hands | None] = Hands(
        DECK,
        1,
        "zhenyan.txt:62-100",
        deck_word="身份",
        deck_rule="zhenyan.txt:62-100",
        setup_rule="zhenyan.txt:62-100",
    )

    # the 12 identities (zhenyan.txt:64-100), of two factions (zhenyan.txt:64, 82)
    player_count: ClassVar[tuple[int, str] | None] = (12, "zhenyan.txt:64-100")
    faction_rule: ClassVar[str] = "zhenyan.txt:64, 82"

    def deal_count(self) -> int:
        assert self.hands is not None
        return sum(self.hands.deck.values())  # zhenyan.txt:64-100: 12

    def deal(self, names: tuple[str, ...], rng: Rng) -> Deal:
        """The 12 cards shuffled to the seats (zhenyan.txt:64-100)."""
        assert self.hands is not None
        return Deal(self.id, names, tuple((c,) for c in shuffle(expand(self.hands.deck), rng)))

    def hand_faction(self, name: str, cards: Sequence[str]) -> str | None:
        if len(cards) != 1 or cards[0] not in self.deck:
            return None
        return faction_of_role(cards[0])

    def validate_setup(self, players: Lineup) -> list[str]:
        """Problems with the roster's cards (zhenyan.txt:64-100), in Chinese."""
        problems: list[str] = []
        if not any(cards for _name, cards in players):
            return problems
        counts: Counter[str] = Counter()
        for name, cards in players:
            if bad := self.hand_problems(name, cards):
                problems += bad
                continue
            counts.update(cards)
        for card, n in counts.items():
            if n > self.deck[card]:
                problems.append(
                    f"身份牌「{card}」出现 {n} 次，规则中只有 {self.deck[card]} 张"
                    "（zhenyan.txt:64-100）"
                )
        if counts and counts["长老"] != 1:
            problems.append("须有一名长老（胜负判定依赖长老，zhenyan.txt:83, 118）")
        return problems

    def open_state(self, players: Lineup, settings: Mapping[str, str], strict: bool) -> GameState:
        """The state at the game start (before ``night:0``): 12 魔力点, the team kill at 0 uses."""
        self.check_lineup(players, strict=strict)
        self.merged_settings(settings)  # zhenyan has no settings
        states: list[PlayerState] = []
        charges: list[Charge] = [Charge(TEAM, "杀人", 0)]
        for name, cards in players:
            ps = PlayerState(
                name=name,
                cards=self.dealt_cards(name, cards),
                wolf_group=bool(cards) and cards[0] in self.wolf_roles,
            )
            charges += self.limited_charges(ps.cards)
            states.append(ps)
        return GameState(
            ruleset=self.id,
            phase=Phase.setup(),
            players=tuple(states),
            charges=tuple(charges),
            statuses=(
                Status(
                    MANA, "*", "真言", 0, None, MANA_START, survives_death=True, note="剩余魔力点"
                ),
            ),
        )

    # ------------------------------------------------------------------ names
    def skill_names(self) -> tuple[str, ...]:
        return (*self.specs, *self.director_actions)

    def unused_reason(self, action: Action) -> str:
        skill = self.canonical_skill(action.skill)
        if skill == "殉职":
            return f"{action.actor}本阶段没有以警长身份出局，<殉职>未发动"
        if skill == "最后一招":
            return "本阶段狼人阵营没有即将判负，<最后一招>未发动"
        return super().unused_reason(action)

    def group_skill(self, skill: str) -> bool:
        return skill == "杀人"

    def status_zh(self, status: Status) -> str | None:
        if status.kind == MANA and status.holder == "*":  # zhenyan.txt:54-58
            return f"魔力点：剩余{status.count}点（全场共用，不属于任何玩家；zhenyan.txt:55-58）"
        if status.kind == GUESSED:  # zhenyan.txt:168
            return f"第{status.note}个真言词语已被猜中（{status.source}猜中；zhenyan.txt:168）"
        return None

    def charge_zh(self, charge: Charge) -> str | None:
        if charge.card == TEAM and charge.skill == "杀人":  # zhenyan.txt:66
            if charge.remaining > 0:
                return f"可用{charge.remaining}次"
            return (
                "暂无可用次数（该技能一开始不能使用，每有一个狼人出局，使用次数+1；zhenyan.txt:66）"
            )
        return None

    # ------------------------------------------------------------------ skills held
    def holder(self, board: Board, player: str, skill: str) -> Holder | None:
        p = board.player(player)
        cur = p.current
        if cur is None or skill not in self.roles.get(cur.name, ()):
            return None
        if skill == "狩猎" and board.statuses_of(player, HUNT_LOST):
            return None
        charge = (cur.uid, skill, "") if self.specs[skill].limited else None
        source = TEAM if skill == "杀人" else ""
        return Holder(player, cur.uid, cur.name, cur.name, skill, source, charge)

    def missing_skill_reason(self, board: Board, player: str, skill: str) -> str:
        cur = board.player(player).current
        assert cur is not None
        if skill == "狩猎" and cur.name == "猎魔人":
            return f"{player}已永久失去<狩猎>（曾猎杀非狼人阵营角色，zhenyan.txt:97）"
        if skill == "杀人":
            return f"{player}不是狼人阵营的角色，没有团队技能<杀人>（zhenyan.txt:65-66）"
        return f"{player}的身份（{cur.name}）没有<{skill}>"

    def disabled(self, board: Board, holder: Holder) -> str | None:
        if holder.skill == "杀人":
            charge = board.charge(TEAM, "杀人")
            if charge is None or charge.remaining <= 0:
                return (
                    "狼群的<杀人>没有可用次数：该技能一开始不能使用，每有一个狼人出局，"
                    "使用次数+1（zhenyan.txt:66）"
                )
        return None

    def check_action(self, board: Board, p: Pass) -> str | None:
        skill = p.spec.name
        a = p.action
        if skill == "守护之盾":
            last = [m for m in board.memories(p.holder.card, skill) if m.phase == board.index - 2]
            if last and last[-1].targets == a.targets:
                return f"不能连续两晚守护同一名角色（上一晚守护了{a.targets[0]}，zhenyan.txt:93）"
        elif skill == "魅惑":
            before = {t for m in board.memory if m.skill == "魅惑" for t in m.targets}
            if a.targets[0] in before:
                return f"{a.targets[0]}已被魅惑过，每名角色只能被魅惑一次（zhenyan.txt:73）"
        return None

    # ------------------------------------------------------------------ the night
    def night_handlers(self) -> dict[str, Handler]:
        return {
            "时间吞噬": self._h_devour,
            "魅惑": self._h_charm,
            "守护之盾": self._h_guard,
            "杀人": self._h_kill,
            "狩猎": self._h_hunt,
            "预言": self._h_seer,
            "凝视": self._h_gaze,
        }

    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        rest = self._director_actions(board, actions)
        if self._over(board, rest):
            return
        if board.night == 0:
            self._game_start(board)
        elif board.night == 1:
            self._first_night(board)
        rest = self._settle_kill_actions(board, rest)
        run_steps(board, self, self.night_plan, self.specs, self.night_handlers(), rest)
        self._resolve_kill(board)
        self._resolve_hunt(board)

    def _game_start(self, board: Board) -> None:
        """村庄老友 (zhenyan.txt:88, 92): 预言家 and 守卫 learn who the 长老 is."""
        elders = [n for n in board.order if role_of(board.player(n)) == "长老"]
        for name in board.living():
            role = role_of(board.player(name))
            if role in ("预言家", "守卫") and elders:
                rule = "zhenyan.txt:88" if role == "预言家" else "zhenyan.txt:92"
                board.tell(name, f"村庄老友：长老是{elders[0]}。", rule)
                board.emit("开局", rule, f"村庄老友：{name}得知长老是谁", actor=name)

    def _first_night(self, board: Board) -> None:
        """感知 / 咒语创作者 (zhenyan.txt:67, 84): at the start of the first game night."""
        for name in board.living():
            role = role_of(board.player(name))
            if role in self.wolf_roles:
                board.tell(
                    name,
                    "感知：你获知本次游戏的四个真言咒语"
                    "（导演按游戏文件 [zhenyan] words 私下告知）。",
                    "zhenyan.txt:67",
                )
            elif role == "长老":
                board.tell(
                    name,
                    "咒语创作者：你获知本次游戏的四个真言咒语"
                    "（导演按游戏文件 [zhenyan] words 私下告知）。",
                    "zhenyan.txt:84",
                )
        board.emit("夜晚开始", "zhenyan.txt:67", "狼人阵营与长老得知四个真言咒语")

    def _settle_kill_actions(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        """The team chooses one target a night (zhenyan.txt:66)."""
        return self.settle_shared_kill(
            board, actions, step="（4）狼人：杀人", rule="zhenyan.txt:66", group="狼人阵营"
        )

    def _target(self, board: Board, p: Pass) -> str:
        """时间吞噬 (zhenyan.txt:79): a village character's skill on the devoured player acts
        on the caster itself; the trace says so, the caster is not told."""
        chosen = p.action.targets[0]
        devoured = board.scratch.get("devoured")
        actor = p.action.actor
        if (
            devoured == chosen
            and faction_of_role(role_of(board.player(actor))) == VILLAGE
            and actor != chosen
        ):
            p.resolved = (actor,)
            p.trace = (f"蚀时狼妃[时间吞噬]：{chosen}→{actor}（zhenyan.txt:79）",)
            return actor
        p.resolved = (chosen,)
        return chosen

    def _cost(self, board: Board, p: Pass) -> None:
        cost = self.costs.get(p.spec.name, 0)
        if cost:
            _spend(
                board, cost, f"{p.action.actor}发动<{p.spec.name}>", p.step.label, "zhenyan.txt:25"
            )

    def _h_devour(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.action.targets[0]
        board.scratch["devoured"] = target
        board.add_status(
            Status(
                "时间吞噬",
                target,
                f"{p.action.actor}的蚀时狼妃[时间吞噬]",
                board.index,
                board.index,
                negative=True,
                note="当晚村民阵营角色对其发动的技能视为对自己发动",
            )
        )
        return Outcome.DONE, f"吞噬{target}：当晚村民阵营角色对{target}发动的技能均视为对自己发动"

    def _h_charm(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.action.targets[0]
        board.add_status(
            Status(
                CHARM,
                target,
                p.action.actor,
                board.index,
                board.index + 1,
                negative=True,
                note="狼美人出局则一同出局（至下一个夜晚开始前）",
            )
        )
        return Outcome.DONE, f"魅惑{target}：直到下一个夜晚开始前，若狼美人出局，{target}一同出局"

    def _h_guard(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = self._target(board, p)
        self._cost(board, p)
        board.add_status(
            Status(
                "守护之盾",
                target,
                f"{p.action.actor}的守卫[守护之盾]",
                board.index,
                board.index,
                note="当晚免疫指杀",
            )
        )
        return Outcome.DONE, f"守护{target}：当晚免疫指杀"

    def _h_kill(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.action.targets[0]
        p.resolved = (target,)
        board.use_charge(TEAM, "杀人")
        left = board.charge(TEAM, "杀人")
        board.scratch["kill"] = {"target": target, "pass": p}
        return (
            Outcome.DONE,
            f"狼人阵营指杀{target}（剩余使用次数{left.remaining if left else 0}），在（8）结算",
        )

    def _h_hunt(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = self._target(board, p)
        self._cost(board, p)
        board.scratch["hunt"] = {"target": target, "pass": p}
        return Outcome.DONE, f"猎杀{target}，在（9）结算"

    def _h_seer(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        chosen = p.action.targets[0]
        target = self._target(board, p)
        self._cost(board, p)
        faction = faction_of_role(role_of(board.player(target)))
        text = f"预言：{chosen}的阵营为{faction}。"
        board.tell(p.action.actor, text, "zhenyan.txt:89")
        return Outcome.DONE, text

    def _h_gaze(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.action.targets[0]
        p.resolved = (target,)
        priv = role_of(board.player(target)) in self.privileged
        text = f"凝视：{target}{'是' if priv else '不是'}特权牌。"
        board.tell(p.action.actor, text, "zhenyan.txt:76")
        return Outcome.DONE, text

    def _resolve_kill(self, board: Board) -> None:
        """(8) 被指杀的角色如果未被守护，则被指杀角色出局 (zhenyan.txt:144, 66, 93)."""
        step = "（8）指杀结算"
        kill = board.scratch.get("kill")
        if kill is None:
            board.emit(step, "zhenyan.txt:144", "今晚没有指杀")
            return
        target: str = kill["target"]
        result = self.done_result(board, kill["pass"].action)
        if not board.alive(target):
            board.emit(step, "zhenyan.txt:144", f"{target}已出局，指杀不再结算")
            return
        if role_of(board.player(target)) == "村民":
            if result is not None:
                board.amend(result, Outcome.FIZZLED, f"{target}是村民，指杀无效（zhenyan.txt:66）")
            board.emit(step, "zhenyan.txt:66", f"{target}是村民，指杀无效", resolved=(target,))
            return
        if board.statuses_of(target, "守护之盾"):
            if result is not None:
                board.amend(result, Outcome.BLOCKED, f"{target}被守护，当晚免疫指杀")
            board.emit(step, "zhenyan.txt:93", f"{target}被守护，免疫指杀", resolved=(target,))
            return
        board.card_out(
            target, cause="指杀", step=step, rule="zhenyan.txt:144", source="狼人阵营", kind="杀人"
        )
        board.drain()

    def _resolve_hunt(self, board: Board) -> None:
        """(9) 被猎杀的角色如果是狼人阵营则出局，若不是则猎魔人收到反馈技能已丢失
        (zhenyan.txt:145, 97)."""
        step = "（9）猎杀结算"
        hunt = board.scratch.get("hunt")
        if hunt is None:
            board.emit(step, "zhenyan.txt:145", "今晚没有猎杀")
            return
        target: str = hunt["target"]
        p: Pass = hunt["pass"]
        hunter = p.action.actor
        result = self.done_result(board, p.action)
        if faction_of_role(role_of(board.player(target))) == WOLF:
            if not board.alive(target):
                board.emit(step, "zhenyan.txt:145", f"{target}已出局，猎杀不再结算")
                return
            board.card_out(
                target,
                cause="猎魔人[狩猎]",
                step=step,
                rule="zhenyan.txt:145",
                source=hunter,
                kind="技能",
            )
            board.drain()
            return
        board.add_status(
            Status(
                HUNT_LOST,
                hunter,
                f"{hunter}的猎魔人[狩猎]",
                board.index,
                None,
                negative=True,
                survives_death=True,
                note="猎杀了非狼人阵营角色，永久失去<狩猎>",
            )
        )
        board.tell(hunter, "狩猎：技能已丢失。", "zhenyan.txt:145")
        if result is not None:
            board.amend(result, Outcome.FIZZLED, f"{target}不属于狼人阵营，猎魔人永久失去<狩猎>")
        board.emit(step, "zhenyan.txt:97", f"{target}不属于狼人阵营，{hunter}永久失去<狩猎>")

    # ------------------------------------------------------------------ triggers
    def after_card_out(self, board: Board, death: Death) -> None:
        p = board.player(death.player)
        role = role_of(p)
        triggers: list[Trigger] = []
        if role in self.wolf_roles:
            if board.night is not None:  # usable from the next night on (docs/rulings.md)
                board.scratch["kills_next_night"] = board.scratch.get("kills_next_night", 0) + 1
                board.emit(
                    death.step,
                    "zhenyan.txt:66",
                    f"狼人{death.player}出局，<杀人>使用次数+1（从下一晚起可用）",
                )
            else:
                charge = board.charge(TEAM, "杀人") or Charge(TEAM, "杀人", 0)
                board.set_charge(replace(charge, remaining=charge.remaining + 1))
                board.emit(
                    death.step,
                    "zhenyan.txt:66",
                    f"狼人{death.player}出局，<杀人>使用次数+1（现为{charge.remaining + 1}）",
                )
        if role == "狼美人":
            for s in board.statuses:
                if s.kind == CHARM and s.source == death.player and s.active_at(board.index):
                    triggers.append(
                        Trigger(f"魅惑:{s.holder}", later(self._charm_out, death, s.holder))
                    )
        if board.sheriff == death.player:
            board.defer(Trigger(f"警长:{death.player}", lambda b: self._handover(b, death)))
        board.push_front(*triggers)

    def _charm_out(self, board: Board, death: Death, target: str) -> None:
        board.card_out(
            target,
            cause="狼美人[魅惑]",
            step=f"{death.step}：魅惑连带",
            rule="zhenyan.txt:73",
            source=death.player,
            kind="技能",
        )

    def _handover(self, board: Board, death: Death) -> None:
        """殉职 (zhenyan.txt:107): a sheriff out not by a red card names a living successor;
        a red-carded sheriff's successor is drawn at random (zhenyan.txt:42)."""
        old = death.player
        living = self._successors(board, death)
        if living is None:
            return
        step = "警长殉职"
        action = None if death.red else board.take_prepared(old, "殉职")
        random_pick = death.red or (
            action is not None and (action.choice or "").strip() in ("随机", "random")
        )
        if random_pick:
            seed = (
                board.scratch.get("red_seed", {}).get(old)
                if death.red
                else (action.ref if action is not None and action.ref else None)
            ) or f"{board.phase.label}:{old}"
            new = seeded_choice(seed, living)
            why = "红牌罚下" if death.red else "15分钟内未与导演联系"
            rule = "zhenyan.txt:42" if death.red else "zhenyan.txt:189"
            if action is not None:
                board.record(action, step, Outcome.DONE, f"随机继任：{new}", rule, (new,))
            self._new_sheriff(board, new, f"警长{old}{why}，警长随机移交给{new}", rule)
            return
        if action is None:
            board.sheriff = None
            board.need(
                old,
                "殉职",
                f"警长{old}出局，须从未出局角色中选择继任警长（{'、'.join(living)}）：记录后重新结算"
                f"（{RECORD}；15分钟内未联系导演则 {CHOICE}）",
                "zhenyan.txt:107",
                target="继任者",
                choices=("随机",),
            )
            board.emit(step, "zhenyan.txt:107", f"等待{old}选择继任警长", actor=old)
            return
        target = action.targets[0] if len(action.targets) == 1 else None
        if target is None or target not in living:
            problem = "须选择一名未出局的角色" if target is None else f"{target}不是未出局的角色"
            self._refuse_successor(board, action, step, problem, "zhenyan.txt:107")
            return
        board.record(
            action, step, Outcome.DONE, f"警长移交给{target}", "zhenyan.txt:107", (target,)
        )
        self._new_sheriff(board, target, f"警长{old}殉职，警长移交给{target}", "zhenyan.txt:34")

    def _new_sheriff(self, board: Board, new: str, line: str, rule: str) -> None:
        board.sheriff = new
        board.announce(line)
        board.tell(
            new,
            "你成为警长：你获知四个真言咒语（导演私下告知）；你投出的票计为1.5票；"
            "你不能在讨论帖发言，也不能在询问帖提问或猜词，只能用是/否/不知道回答"
            "（zhenyan.txt:104-109）。",
            "zhenyan.txt:106",
        )
        board.emit("警长", rule, line, resolved=(new,))

    # ------------------------------------------------------------------ director's actions
    def _director_action(self, board: Board, a: Action) -> bool:
        if self.canonical_skill(a.skill) == "猜中":
            if board.night is None:  # by day, in time order with the red cards (run_day)
                board.scratch.setdefault("guesses", []).append(a)
            else:
                self._guessed(board, a)
            return True
        return False

    def _guessed(self, board: Board, a: Action) -> None:
        """A word guessed correctly in the inquiry thread (zhenyan.txt:168): counted once."""
        step = "真言猜中"
        position = guess_position(a.choice)
        if position is None:
            board.record(
                a, step, Outcome.INVALID, "猜中须写明词语位置（choice = 1–4）", "zhenyan.txt:168"
            )
            return
        if board.night is not None:
            board.record(a, step, Outcome.INVALID, "猜词只在白天的询问帖中进行", "zhenyan.txt:168")
            return
        problem = self._guesser_problem(board, a.actor)
        if problem is not None:
            why, rule = problem
            board.record(a, step, Outcome.INVALID, f"{why}，此次猜中不计入", rule)
            board.emit(step, rule, f"{a.actor}的猜中不计入：{why}", actor=a.actor)
            return
        if position in _board_guessed(board):
            board.record(
                a, step, Outcome.FIZZLED, f"第{position}个词语已被猜中，只计一次", "zhenyan.txt:168"
            )
            return
        board.add_status(
            Status(
                GUESSED, "*", a.actor, board.index, None, survives_death=True, note=str(position)
            )
        )
        board.record(
            a, step, Outcome.DONE, f"第{position}个真言词语被猜中（{a.actor}）", "zhenyan.txt:168"
        )
        board.emit(step, "zhenyan.txt:168", f"第{position}个真言词语被猜中", actor=a.actor)

    @staticmethod
    def _guesser_problem(board: Board, actor: str) -> tuple[str, str] | None:
        """Why ``actor`` cannot guess a word today, with the rule; None when he can.

        The day's sheriff never guesses (咒语反噬, zhenyan.txt:109); an out character takes no
        part in the game's threads (zhenyan.txt:41, docs/rulings.md 诈尸 counts the 询问贴). The
        day's sheriff and outs are the ones at the day's start: the director's actions are
        settled before the vote and its hand-overs. ``导演`` as the actor is the director's
        record that names no guesser (the director vouches for it).
        """
        if actor == DIRECTOR:
            return None
        if not board.has(actor):
            return f"名单中没有玩家「{actor}」", "zhenyan.txt:165"
        if not board.alive(actor):
            return f"{actor}已出局，不能在询问帖提问或猜词", "zhenyan.txt:41"
        if board.sheriff == actor:
            return f"{actor}是警长，不能在询问帖提问或猜词（咒语反噬）", "zhenyan.txt:109"
        return None

    def _red_card(self, board: Board, a: Action) -> None:
        step = "红牌罚下"
        if not board.has(a.actor):
            board.record(
                a, step, Outcome.INVALID, f"名单中没有玩家「{a.actor}」", "zhenyan.txt:222"
            )
            return
        if not board.alive(a.actor):
            board.record(
                a,
                step,
                Outcome.FIZZLED,
                f"{a.actor}已出局（已出局角色仍可被判罚）",
                "zhenyan.txt:224",
            )
            return
        board.scratch.setdefault("red_seed", {})[a.actor] = (
            a.choice or a.ref or f"{board.phase.label}:{a.actor}"
        )
        board.players[a.actor] = replace(board.player(a.actor), red_carded=True)
        board.record(a, step, Outcome.DONE, f"{a.actor}被红牌罚下出局", "zhenyan.txt:222")
        self._red_out(board, a.actor, step, "zhenyan.txt:222")
        board.drain()

    def _surrender(self, board: Board, a: Action) -> None:
        step = "投降"
        if not board.has(a.actor) or role_of(board.player(a.actor)) not in self.wolf_roles:
            board.record(
                a,
                step,
                Outcome.INVALID,
                f"{a.actor}不是狼人阵营的角色，不能发起投降",
                "zhenyan.txt:49",
            )
            return
        board.record(
            a, step, Outcome.DONE, "狼人阵营投降（所有狼人阵营角色均已同意）", "zhenyan.txt:49"
        )
        board.set_winner(
            VILLAGE, f"狼人阵营投降（由{a.actor}发起），不触发狼王的技能", "zhenyan.txt:49"
        )
        board.emit(step, "zhenyan.txt:49", f"{a.actor}发起投降，狼人阵营全数同意", actor=a.actor)

    def _forfeit(self, board: Board, a: Action) -> None:
        """判负 by a faction's red cards (zhenyan.txt:223), settled after the red cards that
        reached it: by night after the night's red cards (:meth:`_over`), by day at its time
        among the day's guesses and red cards (:meth:`_ended_before_the_vote`)."""
        board.scratch.setdefault("forfeits", []).append(a)

    def _settle_forfeit(self, board: Board, a: Action, rest: Sequence[Action] = ()) -> None:
        """判负 now. The wolves' loss is a loss like any other for the 狼王: alive, he may
        first use <最后一招> (zhenyan.txt:70, 114) — only 投降 does not let him (zhenyan.txt:49);
        his <最后一招> is taken from ``rest`` (the night's actions) or the day's decisions."""
        loser = (a.choice or "").strip()
        kings = [n for n in board.living() if role_of(board.player(n)) == "狼王"]
        if loser != WOLF or not kings:
            super()._forfeit(board, a)
            return
        reason, rule = f"{WOLF}判负（红牌）", self.cards.faction_rule
        board.record(a, "判负", Outcome.DONE, reason, rule)
        board.prepared.extend(
            replace(m, skill="最后一招")
            for m in rest
            if m.actor == kings[0] and self.canonical_skill(m.skill) == "最后一招"
        )
        if self._last_move(board, kings[0], reason):
            board.set_winner(VILLAGE, reason, rule)
        board.scratch["over"] = True  # won, or the 狼王's choice decides

    def _over(self, board: Board, rest: Sequence[Action]) -> bool:
        """Whether the game ended with the director's actions (投降; by night 判负, after the
        night's red cards): the phase's other actions are then not resolved, each said so."""
        if board.night is not None:
            for a in board.scratch.pop("forfeits", []):
                if board.winner is None and not board.scratch.get("over"):
                    self._settle_forfeit(board, a, rest)
        if board.winner is None and not board.scratch.get("over"):
            return False
        board.scratch["over"] = True
        waiting = [*board.scratch.pop("guesses", []), *board.scratch.pop("forfeits", [])]
        unused = [a for a in rest if self.canonical_skill(a.skill) != "最后一招"]
        self._not_settled(board, [*unused, *waiting])
        return True

    @staticmethod
    def _not_settled(board: Board, actions: Sequence[Action]) -> None:
        why = "游戏已结束（或待狼王<最后一招>），不再结算"
        for a in actions:
            board.record(a, "校验", Outcome.UNUSED, why, "")

    # ------------------------------------------------------------------ the day
    def run_day(self, board: Board, day: DayInput) -> None:
        board.voters_day = day.day
        board.voters = tuple(v for v in day.voters if board.has(v))
        won_before = board.winner is not None
        rest = self._director_actions(board, day.actions)
        if self._over(board, rest):
            if not won_before:  # 投降 during the day (zhenyan.txt:49)
                board.emit(ENDED_BEFORE_THE_VOTE, "zhenyan.txt:49", f"{board.win_reason}，游戏结束")
            return
        self._keep_day_triggers(board, rest)
        if self._ended_before_the_vote(board, day):
            return
        if day.sheriff_election:
            elected = day.elected
            if elected is None:
                board.announce("警长竞选：无人当选")
                board.emit("竞岗", "zhenyan.txt:105", "无人当选警长", because=day.decided_by)
            elif not board.alive(elected):
                raise EngineError(f"当选警长的{elected}已出局（或不在名单中），请检查计票")
            else:
                self._new_sheriff(board, elected, f"{elected}当选警长", "zhenyan.txt:105")
        elif day.out is None:
            board.emit("投票", day.rule or "zhenyan.txt:38", "今日无人出局", because=day.decided_by)
            board.announce("今日无人被投票出局")
        else:
            out = day.out
            if not board.alive(out):
                raise EngineError(f"被投票出局的{out}已出局（或不在名单中），请检查计票")
            board.card_out(
                out,
                cause="投票出局",
                step="投票",
                rule="zhenyan.txt:38",
                source="投票",
                kind="投票出局",
            )
            if day.day >= 2:
                _spend(board, 2, f"成功投票{out}出局", "投票", "zhenyan.txt:57")
        board.drain()
        # 投票结束后，立即公示…警长<殉职>及其目标 (zhenyan.txt:34): the hand-over of a sheriff out
        # by the vote, before the red cards at the close (zhenyan.txt:43)
        board.run_deferred()
        # 任何阵营达到其中之一的胜利条件时，游戏立即结束 (zhenyan.txt:114): a vote-out that wins
        # (the last wolf, the 长老) ends the game before the red cards at the close
        # (zhenyan.txt:43 settles them after the vote); 魔力点 are judged at the phase's end.
        if board.winner is None and self._judged_now(board, mana_ends=False):
            board.scratch["over"] = True  # the day's 魔力点 are not spent either
            self._not_settled(
                board, [*board.scratch.pop("reds", []), *board.scratch.pop("forfeits", [])]
            )
            return
        for a in board.scratch.get("reds", []):
            self._red_card(board, a)  # zhenyan.txt:43: after the vote
        board.drain()
        for a in board.scratch.pop("forfeits", []):  # 判负 at the close (or without a time)
            if board.winner is None and not board.scratch.get("over"):
                self._settle_forfeit(board, a)

    def _ended_before_the_vote(self, board: Board, day: DayInput) -> bool:
        """The day's words guessed and red cards given before the close, in time order, each
        followed by the win check — 任何阵营达到其中之一的胜利条件时，游戏立即结束
        (zhenyan.txt:114). True when the game ended before the vote: the vote and the day's
        魔力点 then do not count. A guess with no time counts at the close, before the vote."""
        # (untimed?, seconds, order): an untimed guess last, then guesses before red cards
        events: list[tuple[tuple[int, float, int], Action]] = [
            ((0, at.timestamp(), 1), a) for at, a in self._reds_before_the_close(board, day)
        ]
        closes = datetime.fromisoformat(day.closes) if day.closes else None
        assert self.inquiry is not None
        shut = closes - self.inquiry.close_before if closes is not None else None
        for a in board.scratch.pop("guesses", []):
            at = action_time(a)
            if at is not None and shut is not None and at > shut:
                # 询问贴会比正常讨论和投票贴提前1小时关闭，逾期则今天不再能询问问题
                board.record(
                    a,
                    "真言猜中",
                    Outcome.INVALID,
                    f"询问帖已于{shut:%H:%M}关闭（比讨论帖早1小时），此后的猜词不受理",
                    self.inquiry.close_rule,
                )
                continue
            events.append(((0, at.timestamp(), 0) if at else (1, 0.0, 0), a))
        later: list[Action] = []
        for a in board.scratch.pop("forfeits", []):
            at = action_time(a)
            if at is not None and closes is not None and at < closes:
                events.append(((0, at.timestamp(), 2), a))  # after its red card
            else:
                later.append(a)
        board.scratch["forfeits"] = later
        events.sort(key=lambda e: e[0])
        for i, ((_untimed, _seconds, kind), a) in enumerate(events):
            if kind == 0:
                self._guessed(board, a)
            elif kind == 1:
                self._red_card(board, a)
            else:
                self._settle_forfeit(board, a)
            board.drain()
            if board.winner is not None or board.scratch.get("over") or self._judged_now(board):
                board.scratch["over"] = True
                self._say_ended(board, a, kind)
                self._not_settled(
                    board, [b for _k, b in events[i + 1 :]] + board.scratch.get("reds", []) + later
                )
                return True
        return False

    def _say_ended(self, board: Board, a: Action, kind: int) -> None:
        """The game ended during the day with ``a`` (``kind``: 0 a guess, 1 a red card, 2 a
        判负), before the vote (zhenyan.txt:114 游戏立即结束): logged for the director's tools
        (:data:`~engine.rulesets.base.ENDED_BEFORE_THE_VOTE`)."""
        if kind == 0:
            what = f"第{guess_position(a.choice)}个真言词语被猜中（{a.actor}）"
        elif kind == 1:
            what = f"{a.actor}被红牌罚下"
        else:
            what = f"{(a.choice or '').strip()}判负（红牌）"
        board.emit(
            ENDED_BEFORE_THE_VOTE,
            "zhenyan.txt:114",
            f"{what}，游戏立即结束，当天的投票不再结算",
            actor=a.actor,
            checked=a.at or "",
            because=a.ref,
        )

    # ------------------------------------------------------------------ end of a phase
    def end_of_phase(self, board: Board) -> None:
        board.drain()
        board.run_deferred()
        if more := board.scratch.pop("kills_next_night", 0):  # wolves out tonight
            charge = board.charge(TEAM, "杀人") or Charge(TEAM, "杀人", 0)
            board.set_charge(replace(charge, remaining=charge.remaining + more))
        over = bool(board.scratch.get("over"))  # the game ended during the day
        if board.night is None and board.phase.number >= 2 and not over:
            _spend(board, 2, f"经过第{board.phase.number}天白天", "白天结束", "zhenyan.txt:57")
        points = _board_mana(board)
        if board.night == 0:
            return  # the game start: no 魔力通灵, no announcement, no win check
        for name in board.living():
            if role_of(board.player(name)) == "长老":
                board.tell(name, f"魔力通灵：剩余魔力点{points}点。", "zhenyan.txt:85")
        if board.night is not None and board.night >= 1:
            line = self.death_line(board)
            board.public[:0] = [line, f"当日警长：{board.sheriff or '无'}"]
        elif board.night is None and board.deaths:
            board.public.insert(0, self.death_line(board))
        if not over:
            self._judge(board, points)

    death_separator: ClassVar[str] = "、"

    def death_part(self, death: Death) -> str:
        vote = "（投票出局）" if death.kind == "投票出局" else ""
        return death.player + ("（红牌罚下）" if death.red else vote)

    # ------------------------------------------------------------------ win check
    def _facts(self, board: Board) -> tuple[bool, int, int]:
        elder_out = not any(
            board.alive(n) for n in board.order if role_of(board.player(n)) == "长老"
        )
        wolves = sum(1 for n in board.living() if role_of(board.player(n)) in self.wolf_roles)
        return elder_out, wolves, len(_board_guessed(board))

    def _judged_now(self, board: Board, *, mana_ends: bool = True) -> bool:
        """胜负判定 in the middle of a day (zhenyan.txt:114): True when a faction has won, or
        the 狼王's <最后一招> now decides it — the game then ends here. ``mana_ends=False``:
        魔力点 at 0 or below do not end the game yet (they are judged when the phase ends,
        zhenyan.txt:55)."""
        before = len(board.pending)
        points = _board_mana(board)
        self._judge(board, points if mana_ends else max(points, 1), quiet=True)
        return board.winner is not None or len(board.pending) > before

    def _judge(self, board: Board, points: int, *, quiet: bool = False) -> None:
        """胜负判定 (zhenyan.txt:113-127), in the text's order (``quiet``: nothing logged when
        nobody has won)."""
        step = "胜负判定"
        if board.winner is not None:
            return
        elder_out, wolves, guessed = self._facts(board)
        ended = points <= 0
        if ended:
            board.emit(step, "zhenyan.txt:55", f"魔力点为{points}，游戏立刻结束，按当前状态判定")
        result: tuple[str, str, str] | None = None
        if elder_out:
            result = (WOLF, "长老出局", "zhenyan.txt:118")
        elif ended and wolves > guessed:
            result = (
                WOLF,
                f"游戏结束时，存活的狼人数量（{wolves}）大于已被猜中的真言咒语数量（{guessed}）",
                "zhenyan.txt:120",
            )
        elif wolves == 0:
            result = (VILLAGE, "狼人阵营的角色全部出局且长老没有出局", "zhenyan.txt:125")
        elif ended:
            result = (
                VILLAGE,
                f"游戏结束时，存活的狼人数量（{wolves}）小于或等于已被猜中的真言咒语数量"
                f"（{guessed}），且长老没有出局",
                "zhenyan.txt:126",
            )
        elif guessed >= WORDS:
            result = (VILLAGE, "四个真言咒语全部猜中，且长老没有出局", "zhenyan.txt:127")
        if result is None:
            if not quiet:
                board.emit(step, "zhenyan.txt:114", "双方均未达成胜利条件，游戏继续")
            return
        faction, reason, rule = result
        if faction == VILLAGE:
            kings = [n for n in board.living() if role_of(board.player(n)) == "狼王"]
            if kings and not self._last_move(board, kings[0], reason):
                return
            if board.winner is not None:
                return
        board.set_winner(faction, reason, rule)

    def _last_move(self, board: Board, king: str, reason: str) -> bool:
        """最后一招 (zhenyan.txt:70, 114): True when the village win stands."""
        step = "狼王：最后一招"
        rule = "zhenyan.txt:70"
        action = board.take_prepared(king, "最后一招")
        if action is None:
            board.need(
                king,
                "最后一招",
                f"村民阵营即将获胜（{reason}），狼王{king}依然存活，可以发动<最后一招>指认长老："
                f"记录后重新结算（{RECORD}，或 {CHOICE}）",
                rule,
                target="指认对象",
                choices=("放弃",),
            )
            board.emit(step, rule, f"等待狼王{king}决定是否发动<最后一招>", actor=king)
            return False
        if action.declined:
            board.record(action, step, Outcome.DONE, f"{king}放弃发动<最后一招>", rule)
            return True
        if len(action.targets) != 1 or not board.has(action.targets[0]):
            board.record(action, step, Outcome.INVALID, "<最后一招>须指认一名角色", rule)
            board.need(king, "最后一招", "<最后一招>的指认无效，请重新记录", rule)
            return False
        named = action.targets[0]
        right = role_of(board.player(named)) == "长老"
        text = f"狼王{king}发动<最后一招>，指认{named}为长老：{'正确' if right else '错误'}"
        board.record(action, step, Outcome.DONE, text, rule, (named,))
        board.announce(text)
        board.emit(step, rule, text, actor=king, chosen=(named,))
        if right:
            board.set_winner(WOLF, f"通过狼王的技能获胜（{text}）", "zhenyan.txt:121")
            return False
        return True

    def check_win(self, board: Board) -> None:
        self.announce_winner(board)

    # ------------------------------------------------------------------ votes
    def actual_faction(self, state: GameState, player: str) -> str | None:
        p = state.player(player)
        return faction_of_role(role_of(p)) if p.cards else None
