"""[M135]『让子弹飞』 (rules/m135.txt): the vote rules and the complete night/day engine.

Votes: dual cards, but a vote names the character (角色); the character's current card goes out
(m135.txt:50). The sheriff's vote weighs 1.5 (m135.txt:148). On a tie the sheriff's target is out
unless the sheriff abstained (m135.txt:51). An invalid vote may be corrected by a new post or by a
valid 改票 (m135.txt:205). ``DayContext.accelerated`` means 二段加速 here: 一段加速 is the mini
game's default and does not stop changes (m135.txt:194-198, 204).

Engine: 12 characters × 2 cards (m135.txt:5). The current card is the first card still alive
(m135.txt:10); the surface faction is the current card's, the actual faction is wolf when either
card is a wolf card (m135.txt:9, 11). Only the current card's skills are held, except 隐狼's
<杀人> while the 隐狼 card lives (m135.txt:12, 81). The wolf group is every character that holds
<杀人>; one joins on gaining it and never leaves (m135.txt:15, 75). A 复制人 plays its partner
card's role and faction with its own charges (m135.txt:142-143).

The night runs the steps (1)–(7) of m135.txt:173-179 through :func:`engine.night.run_steps`,
then the <杀人> resolution (1)–(4) (m135.txt:180-184), then the other deaths in their order
(m135.txt:185), with 最后一枪 shots inserted at once and the sheriff's hand-over after every death
(m135.txt:186). The day applies the tally: election (m135.txt:147) or exile (m135.txt:50-51),
白痴[装傻], shots, then red cards (m135.txt:56). The win check (刀边, m135.txt:154-161) runs
once everything has been drained. Interpretations are in docs/rulings.md (section m135 引擎).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from fractions import Fraction
from functools import partial
from typing import Any, ClassVar, Literal

from engine.ballots import ModifierKind, VoteModifier
from engine.cards import CardRules
from engine.conduct import DEFAULT_RULE, ConductRules, FlagKind
from engine.deal import Deal, Rng
from engine.kernel import (
    CHOICE,
    RECORD,
    Action,
    Board,
    DayInput,
    Death,
    EngineError,
    Outcome,
    Redirect,
    Trigger,
    later,
    seeded_choice,
)
from engine.night import (
    Attack,
    Defence,
    Handler,
    Holder,
    Pass,
    SkillSpec,
    Step,
    StepMode,
    TargetKind,
    resolve_attack,
    run_steps,
    validate,
)
from engine.rulesets.base import (
    SHARED_VOTE_RULES,
    Deadline,
    Hands,
    LastWordsRules,
    Lineup,
    Ruleset,
)
from engine.rulesets.roles import VILLAGE, WOLF
from engine.speed import SpeedRules
from engine.state import (
    ZH_ORDINAL,
    CardState,
    Charge,
    GameState,
    Phase,
    PlayerState,
    Status,
)

__all__ = [
    "DECK",
    "GOD_ROLES",
    "M135",
    "NIGHT_PLAN",
    "ROLE_RULES",
    "ROLE_SKILLS",
    "SECRET_KEYS",
    "SPECS",
    "VILLAGE",
    "VILLAGER_ROLES",
    "WOLF",
    "WOLF_ROLES",
]

#: The keys of the game file's ``[m135]`` table: m135 has no secret table.
SECRET_KEYS: tuple[str, ...] = ()


#: The 24 cards (m135.txt:5).
DECK: Mapping[str, int] = {
    "狼人": 3,
    "隐狼": 1,
    "预言家": 1,
    "女巫": 1,
    "猎人": 1,
    "守卫": 1,
    "长老": 1,
    "白痴": 1,
    "黑商": 1,
    "魔术师": 1,
    "乌鸦": 1,
    "灵能": 1,
    "潜行者": 1,
    "捣蛋鬼": 1,
    "高级村民": 1,
    "村民": 6,
    "复制人": 1,
}
WOLF_ROLES = frozenset({"狼人", "隐狼"})
#: 狼人阵营胜利条件 1 (m135.txt:157): every one of these cards out.
GOD_ROLES = (
    "预言家",
    "女巫",
    "猎人",
    "守卫",
    "长老",
    "白痴",
    "黑商",
    "魔术师",
    "乌鸦",
    "灵能",
    "潜行者",
    "捣蛋鬼",
)
#: 狼人阵营胜利条件 2 (m135.txt:158).
VILLAGER_ROLES = ("村民", "高级村民")

#: Each role's skills, as the rule text names them.
ROLE_SKILLS: Mapping[str, tuple[str, ...]] = {
    "狼人": ("杀人",),
    "隐狼": ("杀人",),
    "预言家": ("预言",),
    "女巫": ("通灵", "救药", "毒药"),
    "猎人": ("最后一枪",),
    "守卫": ("守护之盾",),
    "长老": ("长寿之命", "村镇之殇"),
    "白痴": ("装傻",),
    "黑商": ("馈赠",),
    "魔术师": ("交换",),
    "乌鸦": ("诽谤",),
    "灵能": ("感知",),
    "潜行者": ("潜行",),
    "捣蛋鬼": ("捣蛋",),
    "高级村民": ("翻牌",),
    "村民": (),
    "复制人": (),  # plays its partner's role (m135.txt:142)
}
#: Where each card is defined in the rule text.
ROLE_RULES: Mapping[str, str] = {
    "狼人": "m135.txt:77",
    "隐狼": "m135.txt:80",
    "预言家": "m135.txt:86",
    "女巫": "m135.txt:89",
    "猎人": "m135.txt:96",
    "守卫": "m135.txt:100",
    "长老": "m135.txt:104",
    "白痴": "m135.txt:108",
    "黑商": "m135.txt:112",
    "魔术师": "m135.txt:116",
    "乌鸦": "m135.txt:119",
    "灵能": "m135.txt:123",
    "潜行者": "m135.txt:126",
    "捣蛋鬼": "m135.txt:130",
    "高级村民": "m135.txt:134",
    "村民": "m135.txt:137",
    "复制人": "m135.txt:141",
    "警长": "m135.txt:145",
}

GIFTS = ("预言", "毒药", "最后一枪")

_ONE = TargetKind.PLAYER
SPECS: Mapping[str, SkillSpec] = {
    s.name: s
    for s in (
        SkillSpec("捣蛋", "m135.txt:131", step=(1, 0), limited=True),
        SkillSpec("交换", "m135.txt:117", step=(2, 0), targets=2),
        SkillSpec("守护之盾", "m135.txt:101", step=(3, 0)),
        SkillSpec("预言", "m135.txt:87", step=(4, 0)),
        SkillSpec("馈赠预言", "m135.txt:113", step=(4, 0)),
        SkillSpec("馈赠", "m135.txt:113", step=(4, 0), limited=True, self_ok=False, choices=GIFTS),
        SkillSpec(
            "诽谤", "m135.txt:120", step=(4, 0), first_night=1, first_night_rule="m135.txt:120"
        ),
        SkillSpec(
            "感知",
            "m135.txt:124",
            step=(4, 0),
            target_kind=TargetKind.OUT_CARD,
            redirectable=False,
        ),
        SkillSpec(
            "杀人", "m135.txt:78", step=(5, 0), first_night=1, first_night_rule="m135.txt:17"
        ),
        SkillSpec(
            "潜行",
            "m135.txt:127",
            step=(6, 0),
            limited=True,
            first_night=2,
            first_night_rule="m135.txt:127",
        ),
        SkillSpec("救药", "m135.txt:92", step=(7, 0), limited=True),
        SkillSpec("毒药", "m135.txt:93", step=(7, 0), limited=True),
        SkillSpec("馈赠毒药", "m135.txt:94", step=(7, 0)),
        SkillSpec("通灵", "m135.txt:91", targets=0, forced=True, passive=True),
        SkillSpec("长寿之命", "m135.txt:105", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("村镇之殇", "m135.txt:106", targets=0, forced=True, passive=True),
        SkillSpec("最后一枪", "m135.txt:97", trigger=True, redirectable=False),
        SkillSpec("馈赠最后一枪", "m135.txt:98", trigger=True, redirectable=False),
        SkillSpec("殉职", "m135.txt:149", trigger=True, forced=True, redirectable=False),
        SkillSpec("装傻", "m135.txt:109", day=True, trigger=True, limited=True, targets=0),
        SkillSpec("翻牌", "m135.txt:135", day=True, limited=True, targets=0),
    )
}
#: Director's actions (not skills): a red card, the wolves' surrender, a faction judged lost.
DIRECTOR_ACTIONS = ("红牌罚下", "投降", "判负")

NIGHT_PLAN: tuple[Step, ...] = (
    Step((1, 0), "捣蛋", ("捣蛋",), "m135.txt:173", StepMode.ORDERED),
    Step((2, 0), "交换", ("交换",), "m135.txt:174", StepMode.ORDERED),
    Step((3, 0), "守护之盾", ("守护之盾",), "m135.txt:175"),
    Step(
        (4, 0),
        "预言，馈赠，诽谤，感知",
        ("预言", "馈赠预言", "馈赠", "诽谤", "感知"),
        "m135.txt:176",
        StepMode.SIMULTANEOUS,
    ),
    Step((5, 0), "杀人", ("杀人",), "m135.txt:177"),
    Step((6, 0), "潜行", ("潜行",), "m135.txt:178"),
    Step((7, 0), "救药，毒药", ("救药", "毒药", "馈赠毒药"), "m135.txt:179", StepMode.ORDERED),
)

#: The other deaths, in the order of m135.txt:185.
OTHER_DEATHS = ("潜行", "毒药", "馈赠毒药", "馈赠失败")
CAUSES = {
    "潜行": "潜行者[潜行]",
    "毒药": "女巫[毒药]",
    "馈赠毒药": "黑商馈赠的[毒药]",
    "馈赠失败": "黑商[馈赠]失败",
}

_ALIASES = {
    "守护": "守护之盾",
    "黑商馈赠毒药": "馈赠毒药",
    "黑商馈赠预言": "馈赠预言",
    "黑商馈赠最后一枪": "馈赠最后一枪",
    "红牌": "红牌罚下",
}

# setting: which card a night death effect hits (docs/rulings.md#m135-current-card)
BIND_RESOLUTION = "resolution"
BIND_ACTION = "action"


# ------------------------------------------------------------------------ a card's role and faction


def role_of(p: PlayerState, card: CardState) -> str:
    """The role a card plays: a 复制人 plays its partner card's role (m135.txt:142)."""
    if card.name != "复制人":
        return card.name
    for other in p.cards:
        if other.uid != card.uid:
            return other.name if other.name != "复制人" else "复制人"
    return "复制人"


def faction_of_role(role: str) -> str:
    return WOLF if role in WOLF_ROLES else VILLAGE


def card_faction(p: PlayerState, card: CardState) -> str:
    return faction_of_role(role_of(p, card))


def surface_faction(p: PlayerState) -> str | None:
    """The current card's faction (m135.txt:11, 40)."""
    cur = p.current
    return None if cur is None else card_faction(p, cur)


def actual_faction(p: PlayerState) -> str:
    """Wolf when either card belongs to the wolf faction (m135.txt:9, 39)."""
    return WOLF if any(card_faction(p, c) == WOLF for c in p.cards) else VILLAGE


def kill_card(p: PlayerState) -> CardState | None:
    """The card giving <杀人>: a current wolf card, or a living 隐狼 card (m135.txt:81)."""
    cur = p.current
    if cur is None:
        return None
    if role_of(p, cur) in WOLF_ROLES:
        return cur
    for c in p.cards:
        if c.alive and role_of(p, c) == "隐狼":
            return c
    return None


def _ordinal(position: int) -> str:
    return ZH_ORDINAL.get(position, f"第{position}身份")


# --------------------------------------------------------------------------- the rule set


class M135(Ruleset):
    id: ClassVar[str] = "m135"
    name: ClassVar[str] = "[M135]『让子弹飞』"
    rule_file: ClassVar[str] = "m135.txt"
    dead_target_rule: ClassVar[str] = "m135.txt:55"
    aliases: ClassVar[tuple[str, ...]] = ("M135", "让子弹飞")
    causes: ClassVar[Mapping[str, str]] = CAUSES
    director_actions: ClassVar[tuple[str, ...]] = DIRECTOR_ACTIONS
    other_deaths: ClassVar[tuple[str, ...]] = OTHER_DEATHS

    sheriff_weight: ClassVar[Fraction] = Fraction(3, 2)
    change_corrects_invalid: ClassVar[bool] = True

    rules: ClassVar[dict[str, str]] = {
        **SHARED_VOTE_RULES,
        "vote_right": "m135.txt:49",
        "out": "m135.txt:55",
        "window": "m135.txt:49",
        "one_vote": "m135.txt:202",
        "format": "m135.txt:205",
        "correct_invalid": "m135.txt:205",
        "abstain": "m135.txt:206",
        "change_once": "m135.txt:204",
        "change_reply": "m135.txt:209",
        "change_cutoff": "m135.txt:204",
        "change_accelerated": "m135.txt:204",
        "proxy": "m135.txt:203",
        "proxy_cutoff": "m135.txt:204",
        "proxy_change_cutoff": "m135.txt:204",
        "election": "m135.txt:147",
        "sheriff_weight": "m135.txt:148",
        "top": "m135.txt:50",
        "tie": "m135.txt:51",
        "block_out": "m135.txt:109",
        "public": "m135.txt:49",
        "slander": "m135.txt:120",
    }

    # --- what else the rule set is ----------------------------------------------------------
    title: ClassVar[str] = "让子弹飞"
    conduct: ClassVar[ConductRules] = ConductRules(
        "m135",
        rules={
            FlagKind.QIANSHUI: "m135.txt:311",
            FlagKind.QIANSHUI_STREAK: "m135.txt:312",
            FlagKind.NO_VOTE: "m135.txt:313, m135.txt:206",
            FlagKind.ZHASHI: "m135.txt:317",
            FlagKind.FONT: "m135.txt:316",
            FlagKind.LASTWORDS_CODE: f"{DEFAULT_RULE}；m135.txt:59 本规则没有遗言",
        },
        accel_word="二段加速",  # m135.txt:198, 311-313: only 二段加速 lifts the 潜水 penalties
    )
    cards: ClassVar[CardRules] = CardRules(
        "m135",
        escalation_rule="m135.txt:238, m135.txt:241",
        red_out_rule="m135.txt:244",
        faction_rule="m135.txt:245",
    )
    # m135.txt:197 未出局角色可于白天在进程帖中申请加速或延时。申请加速或延时的人数大于等于存活
    # 人数的一半，即判定加速或延时成功。申请截至自然日18:00。
    # m135.txt:195 存活人数低于7人后，将自动执行二段加速。
    speed: ClassVar[SpeedRules] = SpeedRules(
        "m135",
        deadline="clock",
        auto_accelerate_below=7,
        rule="m135.txt:197",
        deadline_rule="m135.txt:197",
        auto_rule="m135.txt:195",
    )
    # m135.txt:46 does not say where announcements go (the demo director posts reminders in the
    # vote thread)
    announce_in: ClassVar[Literal["discussion", "vote"]] = "vote"
    #: the rule text's 投票格式 and 改票格式, as written (m135.txt:207-210)
    vote_format: ClassVar[str] = (
        "【投票格式】\n投票对象：饺子\n【改票格式】改票须回复原投票楼层\n改票对象：包子"
    )
    vote_format_rule: ClassVar[str] = "m135.txt:207-210"
    lastwords: ClassVar[LastWordsRules] = LastWordsRules(none="本规则没有遗言（m135.txt:59）")
    dual_card: ClassVar[bool] = True  # m135.txt:5, 50: a vote-out takes the current card
    secret_keys: ClassVar[tuple[str, ...]] = SECRET_KEYS

    has_engine: ClassVar[bool] = True
    #: 投弃权票时，须在投票对象中填写“弃权” (m135.txt:206)
    bare_abstain: ClassVar[bool] = False
    skill_specs: ClassVar[Mapping[str, SkillSpec]] = SPECS
    skill_aliases: ClassVar[Mapping[str, str]] = _ALIASES
    default_settings: ClassVar[Mapping[str, str]] = {"effects_bind": BIND_RESOLUTION}
    roles: ClassVar[Mapping[str, tuple[str, ...]]] = ROLE_SKILLS
    specs: ClassVar[Mapping[str, SkillSpec]] = SPECS
    night_plan: ClassVar[tuple[Step, ...]] = NIGHT_PLAN
    #: 行动时限 per step (m135.txt:173-179): 40, 50, 60, 80, 90, 100 and 120 minutes
    step_deadlines: ClassVar[Mapping[tuple[int, int], Deadline]] = {
        step.key: Deadline(timedelta(minutes=minutes), step.rule)
        for step, minutes in zip(NIGHT_PLAN, (40, 50, 60, 80, 90, 100, 120), strict=True)
    }

    # ------------------------------------------------------------------ setup
    # 12 characters × 2 cards from the 24-card deck (m135.txt:5, 27)
    hands: ClassVar[Hands | None] = Hands(
        DECK, 2, "m135.txt:5, 27", deck_rule="m135.txt:5", setup_rule="m135.txt:5"
    )

    # 本场版杀为12人局 (m135.txt:5); the actual faction (m135.txt:9)
    player_count: ClassVar[tuple[int, str] | None] = (12, "m135.txt:5")
    faction_rule: ClassVar[str] = "m135.txt:9"

    deck: ClassVar[Mapping[str, int]] = DECK
    wolf_roles: ClassVar[frozenset[str]] = WOLF_ROLES
    god_roles: ClassVar[tuple[str, ...]] = GOD_ROLES
    villager_roles: ClassVar[tuple[str, ...]] = VILLAGER_ROLES

    def deal_count(self) -> int:
        return sum(self.deck.values()) // 2  # m135.txt:5: 12 × 2 cards

    def deal(self, names: tuple[str, ...], rng: Rng) -> Deal:
        """The 24 cards shuffled into 12 pairs until no pair is forbidden (m135.txt:16);
        复制人 first, 女巫 second (m135.txt:142, 90). The players choose the order of their
        other two cards afterwards (m135.txt:27); the director rewrites it in the game file."""
        notes = (
            "m135：复制人已排为第一身份、女巫为第二身份（m135.txt:142, 90）；其余两张的先后"
            "由玩家回复导演后，在游戏文件中调换（m135.txt:27）。",
        )
        return self.deal_in_pairs(names, rng, notes)

    def pairs_refused(self, dealt: Sequence[Sequence[str]]) -> bool:
        """m135.txt:16 禁止出现的组合：狼人阵营身份+狼人阵营身份，预言家+狼人阵营身份; a 复制人's
        faction is its partner card's (m135.txt:142)."""
        for a, b in dealt:
            roles = [b if a == "复制人" else a, a if b == "复制人" else b]
            wolf = [r in self.wolf_roles for r in roles]
            if all(wolf) or (any(wolf) and "预言家" in roles):
                return True
        return False

    def pair_order(self, a: str, b: str) -> tuple[str, str]:
        # m135.txt:142 复制人第一身份; m135.txt:90 女巫第二身份
        return (b, a) if b == "复制人" or a == "女巫" else (a, b)

    def hand_faction(self, name: str, cards: Sequence[str]) -> str | None:
        """Wolf when either card belongs to the wolf faction (m135.txt:9; 复制人 takes the
        second card's, m135.txt:142)."""
        if len(cards) != 2 or any(c not in self.deck for c in cards):
            return None
        return actual_faction(PlayerState(name, self.dealt_cards(name, cards)))

    def validate_setup(self, players: Lineup) -> list[str]:
        """Every card-pair problem of the roster, in Chinese (m135.txt:5, 8, 90, 142).

        A roster where nobody has cards yet (not dealt) has no problems. A card used more often
        than the deck has is a problem (with 12 players and 24 known cards, that is the same as
        checking the whole deck).
        """
        problems: list[str] = []
        if not any(cards for _name, cards in players):
            return problems
        counts: Counter[str] = Counter()
        for name, cards in players:
            who = f"玩家「{name}」"
            if bad := self.hand_problems(name, cards):
                problems += bad
                continue
            counts.update(cards)
            first, second = cards
            if first == "女巫":
                problems.append(f"{who}：女巫身份必须作为第二身份（m135.txt:90）")
            if second == "复制人":
                problems.append(f"{who}：复制人身份必须作为第一身份（m135.txt:142）")
            roles = [second if c == "复制人" else c for c in cards]
            if all(r in self.wolf_roles for r in roles):
                extra = (
                    "；复制人的阵营视为与第二身份相同（m135.txt:142）" if "复制人" in cards else ""
                )
                problems.append(
                    f"{who}：禁止出现的组合：狼人阵营身份+狼人阵营身份（m135.txt:16）{extra}"
                )
            elif "预言家" in roles and any(r in self.wolf_roles for r in roles):
                problems.append(f"{who}：禁止出现的组合：预言家+狼人阵营身份（m135.txt:16）")
        for card, n in sorted(counts.items(), key=lambda kv: list(self.deck).index(kv[0])):
            if n > self.deck[card]:
                problems.append(
                    f"身份牌「{card}」出现 {n} 次，牌组中只有 {self.deck[card]} 张（m135.txt:5）"
                )
        return problems

    def open_state(self, players: Lineup, settings: Mapping[str, str], strict: bool) -> GameState:
        """The state before 第零晚: cards in order, charges of every 限定 skill, the wolf group."""
        self.check_lineup(players, strict=strict)
        merged = self.merged_settings(settings)
        if merged["effects_bind"] not in (BIND_RESOLUTION, BIND_ACTION):
            raise EngineError("设置 effects_bind 应为 resolution 或 action")
        states: list[PlayerState] = []
        charges: list[Charge] = []
        for name, cards in players:
            ps = PlayerState(name=name, cards=self.dealt_cards(name, cards))
            charges += self.limited_charges(ps.cards, partial(role_of, ps))
            states.append(replace(ps, wolf_group=kill_card(ps) is not None))
        return GameState(
            ruleset=self.id,
            phase=Phase.setup(),
            players=tuple(states),
            charges=tuple(charges),
            settings=tuple(merged.items()),
        )

    # ------------------------------------------------------------------ names
    def skill_names(self) -> tuple[str, ...]:
        return (*self.specs, *self.director_actions)

    def unused_reason(self, action: Action) -> str:
        skill = self.canonical_skill(action.skill)
        if skill in ("最后一枪", "馈赠最后一枪"):
            return f"{action.actor}持有<最后一枪>的身份牌本阶段没有出局，未发动"
        if skill == "殉职":
            return f"{action.actor}本阶段没有以警长身份出局，<殉职>未发动"
        if skill == "装傻":
            return f"{action.actor}本阶段没有即将因投票出局，<装傻>未发动"
        return super().unused_reason(action)

    # ------------------------------------------------------------------ skills held
    def holder(self, board: Board, player: str, skill: str) -> Holder | None:
        p = board.player(player)
        cur = p.current
        if cur is None:
            return None
        if skill == "杀人":
            own = kill_card(p)
            if own is not None:
                source = "隐狼" if own.uid != cur.uid else ""
                return Holder(player, own.uid, own.name, role_of(p, own), skill, source)
            if p.wolf_group:  # 共群的角色共同选择 (m135.txt:78)
                for other in board.living():
                    k = kill_card(board.player(other))
                    if k is not None:
                        return Holder(player, k.uid, k.name, "狼人", skill, f"狼群（{other}）")
            return None
        if skill.startswith("馈赠") and skill != "馈赠":
            found = [
                c
                for c in board.charges.values()
                if c.card == cur.uid and c.skill == skill and c.remaining > 0
            ]
            found.sort(key=lambda c: (c.since > board.index, c.since, c.source))
            if not found:
                return None
            c = found[0]
            return Holder(
                player,
                cur.uid,
                cur.name,
                role_of(p, cur),
                skill,
                c.source,
                (c.card, skill, c.source),
            )
        role = role_of(p, cur)
        if skill in self.roles.get(role, ()):
            charge = (cur.uid, skill, "") if self.specs[skill].limited else None
            return Holder(player, cur.uid, cur.name, role, skill, "", charge)
        return None

    def missing_skill_reason(self, board: Board, player: str, skill: str) -> str:
        p = board.player(player)
        cur = p.current
        assert cur is not None
        if skill == "杀人":
            return f"{player}没有<杀人>，也不在有<杀人>持有者存活的狼群中（m135.txt:75, 78）"
        if skill.startswith("馈赠") and skill != "馈赠":
            return f"{player}的当前身份没有黑商馈赠的[{skill[2:]}]（m135.txt:113）"
        elsewhere = [
            c for c in p.cards if c.uid != cur.uid and skill in self.roles.get(role_of(p, c), ())
        ]
        why = "；该技能属于另一张身份牌" if elsewhere else ""
        return (
            f"{player}的当前身份（{cur.name}）没有<{skill}>{why}"
            "（除隐狼外，角色只拥有当前身份的技能，m135.txt:12）"
        )

    def disabled(self, board: Board, holder: Holder) -> str | None:
        grief = board.table_status("村镇之殇")
        if not grief:
            return None
        p = board.player(board.owner(holder.card))
        card = p.card(holder.card)
        if card_faction(p, card) != VILLAGE:
            return None
        until = max(s.until or board.index for s in grief)
        return (
            f"村镇之殇：所有村民阵营身份牌的技能失效，至{Phase.from_index(until).zh}结束"
            "（m135.txt:106）"
        )

    def check_action(self, board: Board, p: Pass) -> str | None:
        skill = p.spec.name
        a = p.action
        if skill == "杀人":
            refused: dict[int, str] = board.scratch.get("kill_refused", {})
            return refused.get(id(a))
        if skill == "守护之盾":
            last = [m for m in board.memories(p.holder.card, skill) if m.phase == board.index - 2]
            if last and last[-1].targets == a.targets:
                return f"不能连续两晚选择同一名角色（上一晚选择了{a.targets[0]}，m135.txt:101）"
        elif skill == "交换":
            before = {t for m in board.memories(p.holder.card, skill) for t in m.targets}
            again = [t for t in a.targets if t in before]
            if again:
                return f"{'、'.join(again)}已被选择过，每名角色只能被选择一次（m135.txt:117）"
        elif skill == "捣蛋":
            target = board.player(a.targets[0])
            if not all(c.alive for c in target.cards):
                return f"{target.name}的两张身份牌并非均存活，不能被捣蛋（m135.txt:131）"
        elif skill == "感知":
            chosen = self._out_card(board, a)
            if isinstance(chosen, str):
                return chosen
        elif skill == "潜行":
            night = board.night
            if board.voters_day != night:
                return f"没有第{night}天的投票记录，无法确认当天投票的角色（m135.txt:127）"
            if a.targets[0] not in board.voters:
                return (
                    f"{a.targets[0]}没有在第{night}天投票，"
                    "潜行只能选择当天投票的角色（m135.txt:127）"
                )
            if board.vote_cards.get(a.actor) != p.holder.card:
                return (
                    "白天投票时和夜间行动时的当前身份均为同一张潜行者时才可以发动（m135.txt:128）"
                )
        elif skill in ("毒药", "馈赠毒药"):
            used = board.scratch.setdefault("witch_used", {}).get(a.actor, set())
            if "救药" in used:
                what = (
                    "馈赠的毒药也不能和救药共同发动（m135.txt:94）"
                    if skill == "馈赠毒药"
                    else ("<救药>发动后，当晚不可发动<毒药>（m135.txt:92）")
                )
                return what
        elif skill == "救药":
            used = board.scratch.setdefault("witch_used", {}).get(a.actor, set())
            if used & {"毒药", "馈赠毒药"}:
                return "<毒药>发动后，当晚不可发动<救药>（m135.txt:93-94）"
        return None

    def _out_card(self, board: Board, a: Action) -> CardState | str:
        target = board.player(a.targets[0])
        out = [c for c in target.cards if not c.alive]
        if not out:
            return f"{target.name}没有已经出局的身份牌（m135.txt:124）"
        if a.choice:
            pick = {"第一身份": 1, "1": 1, "第一": 1, "第二身份": 2, "2": 2, "第二": 2}.get(
                a.choice.strip()
            )
            if pick is None or pick > len(target.cards):
                return f"无法识别的身份牌位置「{a.choice}」（应为 第一身份 或 第二身份）"
            card = target.cards[pick - 1]
            if card.alive:
                return f"{target.name}的{_ordinal(pick)}尚未出局（m135.txt:124）"
            return card
        if len(out) > 1:
            return f"{target.name}的两张身份牌都已出局，请用 choice 指明第一身份或第二身份"
        return out[0]

    # ------------------------------------------------------------------ the night
    def night_handlers(self) -> dict[str, Handler]:
        """The effect of every skill launched in a night step, by skill name."""
        return {
            "捣蛋": self._h_prank,
            "交换": self._h_swap,
            "守护之盾": self._h_guard,
            "预言": self._h_seer,
            "馈赠预言": self._h_seer,
            "馈赠": self._h_gift,
            "诽谤": self._h_slander,
            "感知": self._h_sense,
            "杀人": self._h_kill,
            "潜行": self._h_stalk,
            "救药": self._h_antidote,
            "毒药": self._h_poison,
            "馈赠毒药": self._h_poison,
        }

    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        rest = self._director_actions(board, actions)
        if board.winner is not None:
            return
        # the group's one choice is settled at step (5), on these very actions: their skill
        # names made canonical here, so the steps see the same objects
        rest = [
            a if (skill := self.canonical_skill(a.skill)) == a.skill else replace(a, skill=skill)
            for a in rest
        ]
        board.scratch["kills"] = rest
        run_steps(board, self, self.night_plan, self.specs, self.night_handlers(), rest)
        self._resolve_kill(board)
        self._other_deaths(board)

    def _settle_kill_actions(self, board: Board) -> None:
        """The team chooses one target a night (m135.txt:78) — among those who hold <杀人>
        when its step (5) begins: a character who gained it at step (1) (捣蛋, m135.txt:173)
        joined the group at once (m135.txt:75) and his kill is the group's too. The refusals
        are given as each kill is checked (:meth:`check_action`)."""
        board.scratch["kill_refused"] = self.shared_kill_refusals(
            board, board.scratch.get("kills", ()), rule="m135.txt:78", group="狼群"
        )

    def before_step(self, board: Board, step: Step) -> None:
        if step.key[0] == 5:
            self._settle_kill_actions(board)
        if step.key[0] != 7:
            return
        kill = board.scratch.get("kill")
        for name in board.living():
            p = board.player(name)
            cur = p.current
            assert cur is not None
            if role_of(p, cur) != "女巫":
                continue
            holder = Holder(name, cur.uid, cur.name, "女巫", "通灵")
            antidote = board.charge(cur.uid, "救药")
            if antidote is None or antidote.remaining <= 0:
                board.emit(step.label, "m135.txt:92", f"{name}已发动过<救药>，失去<通灵>")
                continue
            off = self.disabled(board, holder)
            if off:
                board.emit(step.label, "m135.txt:106", f"{name}的<通灵>失效：{off}")
                continue
            if kill is None:
                text = "通灵：今晚没有<杀人>的选择目标。"
            else:
                text = f"通灵：今晚<杀人>的选择目标是{'、'.join(kill['chosen'])}。"
            board.tell(name, text, "m135.txt:91")
            board.emit(step.label, "m135.txt:91", f"通灵反馈给{name}", actor=name, because=text)

    # handlers: each writes to the board's scratchpad and statuses; deaths come later
    def _h_prank(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        board.swap_cards(target)
        ps = board.player(target)
        cur = ps.current
        assert cur is not None
        board.tell(
            target,
            f"你的两张身份牌被交换：第一身份现为{ps.cards[0].name}，第二身份现为{ps.cards[1].name}；"
            f"当前身份为{cur.name}（m135.txt:131）",
            "m135.txt:131",
        )
        self._join_check(board, target, p.step.label)
        return Outcome.DONE, f"{target}的两张身份牌交换（原本的技能使用情况不变，m135.txt:132）"

    def _h_swap(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        a, b = p.resolved
        board.add_redirect(
            Redirect(20, f"{p.action.actor}的魔术师[交换]", "m135.txt:117", ((a, b), (b, a)))
        )
        return Outcome.DONE, f"当晚之后以{a}或{b}为目标的[指定]技能，结算目标互换"

    def _h_guard(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        board.add_status(
            Status(
                "守护之盾",
                target,
                f"{p.action.actor}的守卫[守护之盾]",
                board.index,
                board.index,
                note="当晚<杀人>无效",
            )
        )
        return Outcome.DONE, f"守护{target}：当晚<杀人>对{target}无效"

    def _h_seer(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        faction = surface_faction(board.player(target))
        label = "馈赠的[预言]" if p.spec.name == "馈赠预言" else "预言"
        text = f"{label}：{target}的表面阵营为{faction}。"
        board.tell(p.action.actor, text, "m135.txt:87")
        return Outcome.DONE, text

    def _h_gift(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        gift = p.action.choice or ""
        giver = f"{p.action.actor}的{p.holder.card_name}[馈赠]"
        if actual_faction(board.player(target)) == WOLF:
            board.scratch.setdefault("other_deaths", []).append(
                (
                    "馈赠失败",
                    p.action.actor,
                    p.action.actor,
                    p.holder.card,
                    p.holder.card,
                    self.causes["馈赠失败"],
                )
            )
            return (
                Outcome.DONE,
                f"馈赠[{gift}]给{target}：{target}的实际阵营为狼人阵营，黑商当晚出局（m135.txt:113）",
            )
        board.scratch.setdefault("gifts", []).append((target, gift, giver, p.holder.card))
        return (
            Outcome.DONE,
            f"馈赠[{gift}]给{target}：实际阵营为村民阵营，夜晚结束时得到通知（m135.txt:113）",
        )

    def _h_slander(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        nxt = board.index + 1
        board.add_status(
            Status(
                "诽谤",
                target,
                f"{p.action.actor}的乌鸦[诽谤]",
                nxt,
                nxt,
                negative=True,
                survives_death=True,
                note="放逐投票中被投票数多计一票",
            )
        )
        board.scratch.setdefault("slandered", []).append(target)
        return Outcome.DONE, f"下一个白天公示{target}被诽谤，放逐投票中多计一票（m135.txt:120）"

    def _h_sense(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = board.player(p.resolved[0])
        card = self._out_card(board, p.action)
        assert isinstance(card, CardState)
        text = f"感知：{target.name}的{_ordinal(target.position(card.uid))}是{card.name}。"
        board.tell(p.action.actor, text, "m135.txt:124")
        return Outcome.DONE, text

    def _h_kill(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        board.scratch["kill"] = {
            "actor": p.action.actor,
            "chosen": p.action.targets,
            "resolved": p.resolved,
            "pass": p,
        }
        return Outcome.DONE, f"狼群选择{p.action.targets[0]}，结算目标{p.resolved[0]}"

    def _h_stalk(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        return self._queue_death(board, p, "潜行")

    def _h_antidote(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        board.scratch.setdefault("witch_used", {}).setdefault(p.action.actor, set()).add("救药")
        board.add_status(
            Status(
                "救药",
                target,
                f"{p.action.actor}的女巫[救药]",
                board.index,
                board.index,
                note="当前身份当晚不会因<杀人>出局",
            )
        )
        board.emit(p.step.label, "m135.txt:92", f"{p.action.actor}发动<救药>后失去<通灵>")
        return (
            Outcome.DONE,
            f"{target}的当前身份当晚不会因<杀人>出局；失去<通灵>，当晚不可发动<毒药>",
        )

    def _h_poison(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        board.scratch.setdefault("witch_used", {}).setdefault(p.action.actor, set()).add(
            p.spec.name
        )
        return self._queue_death(board, p, p.spec.name)

    def _queue_death(self, board: Board, p: Pass, kind: str) -> tuple[Outcome, str]:
        target = p.resolved[0]
        cur = board.player(target).current
        assert cur is not None
        board.scratch.setdefault("other_deaths", []).append(
            (kind, p.action.actor, target, cur.uid, p.holder.card, self.causes[kind])
        )
        return (
            Outcome.DONE,
            f"{target}的当前身份当晚出局（{self.causes[kind]}，在其他出局效果中依次结算）",
        )

    # kill resolution (m135.txt:180-184) and the other deaths (m135.txt:185)
    def _resolve_kill(self, board: Board) -> None:
        kill = board.scratch.get("kill")
        step = "<杀人>结算"
        if kill is None:
            board.emit(step, "m135.txt:180", "今晚没有<杀人>")
            return
        target = kill["resolved"][0]
        attack = Attack("杀人", "狼群", target, step, "m135.txt:180")

        def guarded(b: Board, a: Attack) -> bool:
            return bool(b.statuses_of(a.target, "守护之盾"))

        def elder(b: Board, a: Attack) -> bool:
            ps = b.player(a.target)
            cur = ps.current
            if cur is None or role_of(ps, cur) != "长老":
                return False
            charge = b.charge(cur.uid, "长寿之命")
            if charge is None or charge.remaining <= 0:
                b.emit(step, "m135.txt:105", f"{a.target}的<长寿之命>已经发动过")
                return False
            off = self.disabled(b, Holder(a.target, cur.uid, cur.name, "长老", "长寿之命"))
            if off:
                b.emit(step, "m135.txt:106", f"{a.target}的<长寿之命>失效：{off}")
                return False
            b.use_charge(cur.uid, "长寿之命")
            b.tell(a.target, "长寿之命发动：你避免了因<杀人>出局（该技能已用完）。", "m135.txt:105")
            return True

        def antidote(b: Board, a: Attack) -> bool:
            return bool(b.statuses_of(a.target, "救药"))

        defences = (
            Defence("守护之盾", "m135.txt:181", guarded),
            Defence("长寿之命", "m135.txt:182", elder),
            Defence("救药", "m135.txt:183", antidote),
        )
        blocked = resolve_attack(board, attack, defences)
        kill_pass: Pass = kill["pass"]
        result = self.done_result(board, kill_pass.action)
        if blocked is not None:
            if result is not None:
                board.amend(result, Outcome.BLOCKED, f"<杀人>对{target}无效：{blocked}")
            if blocked == "守护之盾" and board.statuses_of(target, "救药"):
                board.emit(step, "m135.txt:102", f"{target}同时被守护与救药：版杀没有奶穿，不出局")
            return
        board.card_out(
            target,
            cause="杀人",
            step=f"{step}（4）",
            rule="m135.txt:184",
            source="狼群",
            kind="杀人",
        )
        board.drain()

    def _other_deaths(self, board: Board) -> None:
        effects = sorted(
            board.scratch.get("other_deaths", []),
            key=lambda e: (self.other_deaths.index(e[0]), board.seat(e[1]), e[2]),
        )
        bind = board.setting("effects_bind", BIND_RESOLUTION)
        for kind, actor, target, bound, holder_card, cause in effects:
            step = f"其他出局：{self.causes[kind]}"
            if kind == "馈赠失败":
                if not board.card(bound).alive:
                    board.emit(step, "m135.txt:185", f"{actor}的黑商已出局，馈赠失败不再结算")
                    continue
                board.card_out(
                    actor,
                    cause=cause,
                    step=step,
                    rule="m135.txt:113",
                    source=actor,
                    kind="技能",
                    bound_uid=bound,
                )
            else:
                owner = board.player(board.owner(holder_card))
                village = card_faction(owner, owner.card(holder_card)) == VILLAGE
                board.card_out(
                    target,
                    cause=cause,
                    step=step,
                    rule=self.specs[kind].rule,
                    source=actor,
                    kind="技能",
                    village_skill=village,
                    bound_uid=bound if bind == BIND_ACTION else None,
                )
            board.drain()

    # ------------------------------------------------------------------ triggers
    def after_card_out(self, board: Board, death: Death) -> None:
        p = board.player(death.player)
        card = p.card(death.card_uid)
        role = role_of(p, card)
        triggers: list[Trigger] = []
        if not death.red:
            if role == "长老" and (death.kind == "投票出局" or death.village_skill):
                triggers.append(
                    Trigger(f"村镇之殇:{card.uid}", lambda b: self._town_grief(b, death))
                )
            if role == "猎人":
                triggers.append(
                    Trigger(
                        f"最后一枪:{card.uid}",
                        lambda b: self._shot(b, death, "最后一枪", None),
                    )
                )
            for c in sorted(board.charges.values(), key=Charge.sort_key):
                if c.card == card.uid and c.skill == "馈赠最后一枪" and c.remaining > 0:
                    key = (c.card, c.skill, c.source)
                    triggers.append(
                        Trigger(
                            f"馈赠最后一枪:{card.uid}:{c.source}",
                            later(self._shot, death, "馈赠最后一枪", key),
                        )
                    )
        # m135.txt:98: 先发动<最后一枪>再加入狼群
        triggers.append(
            Trigger(f"入群:{death.player}", lambda b: self._join_check(b, death.player, death.step))
        )
        if death.player_out and board.sheriff == death.player:
            board.defer(Trigger(f"警长:{death.player}", lambda b: self._handover(b, death)))
        board.push_front(*triggers)

    def _town_grief(self, board: Board, death: Death) -> None:
        p = board.player(death.player)
        card = p.card(death.card_uid)
        holder = Holder(death.player, card.uid, card.name, "长老", "村镇之殇")
        off = self.disabled(board, holder)
        if off:
            board.emit(death.step, "m135.txt:106", f"{death.player}的<村镇之殇>失效：{off}")
            return
        until = board.index + 2
        board.add_status(
            Status(
                "村镇之殇",
                "*",
                f"{death.player}的{card.name}[村镇之殇]",
                board.index,
                until,
                negative=True,
                note="所有村民阵营身份牌的技能失效",
            )
        )
        line = (
            f"{death.player}的{_ordinal(death.card_index)}是{card.name}（村镇之殇）："
            f"所有村民阵营身份牌的技能失效，持续一天（至{Phase.from_index(until).zh}结束）"
        )
        board.announce(line)
        board.emit(death.step, "m135.txt:106", line, actor=death.player)

    def _shot(
        self, board: Board, death: Death, skill: str, charge: tuple[str, str, str] | None
    ) -> None:
        shooter = death.player
        p = board.player(shooter)
        card = p.card(death.card_uid)
        step = f"{skill}（即时插入）"
        rule = "m135.txt:97" if skill == "最后一枪" else "m135.txt:98"
        off = self.disabled(board, Holder(shooter, card.uid, card.name, role_of(p, card), skill))
        action = board.take_prepared(shooter, skill)
        if off:
            board.emit(step, "m135.txt:106", f"{shooter}的<{skill}>失效：{off}")
            if action is not None:
                board.record(action, step, Outcome.FIZZLED, off, rule)
            return
        if action is None:
            board.need(
                shooter,
                skill,
                f"{shooter}的{card.name}出局，须立即决定<{skill}>：记录目标后重新结算"
                f"（{RECORD}，或 {CHOICE}）",
                rule,
                target="目标",
                choices=("放弃",),
            )
            board.emit(step, rule, f"等待{shooter}决定<{skill}>的目标", actor=shooter)
            return
        if action.declined:
            board.record(action, step, Outcome.DONE, f"{shooter}放弃发动<{skill}>", rule)
            board.emit(step, rule, f"{shooter}放弃发动<{skill}>", actor=shooter)
            return
        problem = None
        if len(action.targets) != 1:
            problem = f"<{skill}>须选择一名角色"
        elif not board.has(action.targets[0]):
            problem = f"目标「{action.targets[0]}」不在名单中"
        elif not board.alive(action.targets[0]):
            problem = f"{action.targets[0]}已出局，不能被选为技能的目标（m135.txt:55）"
        if problem:
            board.record(action, step, Outcome.INVALID, problem, rule)
            board.need(
                shooter, skill, f"{shooter}的<{skill}>目标无效（{problem}），请重新决定", rule
            )
            return
        if charge is not None:
            board.use_charge(*charge)
        target = action.targets[0]
        board.record(
            action,
            step,
            Outcome.DONE,
            f"{target}的当前身份出局（<最后一枪>不受魔术师[交换]影响，m135.txt:190）",
            rule,
            (target,),
        )
        board.emit(
            step,
            rule,
            f"{shooter}发动<{skill}>",
            actor=shooter,
            chosen=(target,),
            resolved=(target,),
        )
        board.card_out(
            target,
            cause=f"{shooter}的[{'最后一枪' if skill == '最后一枪' else '馈赠的最后一枪'}]",
            step=step,
            rule=rule,
            source=shooter,
            kind="技能",
            village_skill=card_faction(p, card) == VILLAGE,
        )

    def _join_check(self, board: Board, name: str, step: str) -> None:
        p = board.player(name)
        if not p.alive or p.wolf_group or kill_card(p) is None:
            return
        members = [n for n in board.order if board.player(n).wolf_group]
        board.join_wolf_group(name)
        board.tell(name, "你获得了<杀人>，加入狼群（m135.txt:75）。", "m135.txt:75")
        for m in members:
            board.tell(m, f"{name}获得<杀人>，加入狼群。", "m135.txt:75")
        board.emit(step, "m135.txt:75", f"{name}获得<杀人>，立即加入狼群", actor=name)

    def _handover(self, board: Board, death: Death) -> None:
        old = death.player
        living = self._successors(board, death)
        if living is None:
            return
        step = "警长移交"
        if death.red:
            chosen = board.scratch.get("red_draw", {}).get(old)
            seed = board.scratch.get("red_seed", {}).get(old, f"{board.phase.label}:{old}")
            if chosen in living:
                new, how = chosen, "导演抽取"
            else:
                new, how = seeded_choice(seed, living), f"按记录的种子「{seed}」抽取"
            board.sheriff = new
            board.announce(f"警长{old}被红牌罚下，警徽随机移交给{new}")
            board.tell(new, "你成为警长（警徽随机移交，m135.txt:150）。", "m135.txt:146")
            board.emit(
                step, "m135.txt:150", f"警徽随机移交给{new}（{how}）", actor=old, resolved=(new,)
            )
            return
        action = board.take_prepared(old, "殉职")
        listing = "、".join(living)
        board.tell(old, f"殉职：请从存活角色中选择继任警长：{listing}", "m135.txt:186")
        if action is None:
            board.sheriff = None
            board.need(
                old,
                "殉职",
                f"警长{old}出局，须从存活角色中选择继任警长（{listing}）：记录后重新结算"
                f"（{RECORD}）",
                "m135.txt:149",
                target="继任者",
            )
            board.emit(step, "m135.txt:149", f"等待{old}选择继任警长", actor=old)
            return
        target = action.targets[0] if len(action.targets) == 1 else None
        if target is None or target not in living:
            problem = "须选择一名未出局的角色" if target is None else f"{target}不是存活角色"
            self._refuse_successor(board, action, step, problem, "m135.txt:149")
            return
        board.sheriff = target
        board.record(action, step, Outcome.DONE, f"警徽移交给{target}", "m135.txt:149", (target,))
        board.announce(f"警长{old}殉职，警徽移交给{target}")
        board.tell(target, "你成为警长（m135.txt:146）。", "m135.txt:146")
        board.emit(
            step, "m135.txt:149", f"警长{old}殉职，移交给{target}", actor=old, resolved=(target,)
        )

    # ------------------------------------------------------------------ director's actions
    # the base's _director_actions: a red-carded character cannot act (m135.txt:56)

    def _red_card(self, board: Board, a: Action) -> None:
        step = "红牌罚下"
        if not board.has(a.actor):
            board.record(a, step, Outcome.INVALID, f"名单中没有玩家「{a.actor}」", "m135.txt:244")
            return
        if not board.alive(a.actor):
            board.record(
                a, step, Outcome.FIZZLED, f"{a.actor}已出局（已出局角色仍可被判罚）", "m135.txt:246"
            )
            return
        board.scratch.setdefault("red_seed", {})[a.actor] = (
            a.choice or a.ref or (f"{board.phase.label}:{a.actor}")
        )
        if a.targets:
            board.scratch.setdefault("red_draw", {})[a.actor] = a.targets[0]
        p = board.player(a.actor)
        board.players[a.actor] = replace(p, red_carded=True)
        board.record(
            a, step, Outcome.DONE, f"{a.actor}被红牌罚下出局，不能发动任何技能", "m135.txt:244"
        )
        while board.alive(a.actor):
            self._red_out(board, a.actor, step, "m135.txt:244")
        board.drain()

    def _surrender(self, board: Board, a: Action) -> None:
        step = "投降"
        wolves = [n for n in board.order if actual_faction(board.player(n)) == WOLF]
        if a.actor not in wolves:
            board.record(
                a,
                step,
                Outcome.INVALID,
                f"{a.actor}不是狼人阵营的角色，不能发起投降",
                "m135.txt:62",
            )
            return
        outside = [n for n in wolves if board.alive(n) and not board.player(n).wolf_group]
        if outside:
            board.record(
                a,
                step,
                Outcome.INVALID,
                f"狼人阵营尚有角色未入群（{'、'.join(outside)}），不能投降（m135.txt:62）",
                "m135.txt:62",
            )
            return
        board.record(a, step, Outcome.DONE, "狼人阵营投降（已询问狼群中所有角色）", "m135.txt:62")
        board.set_winner(VILLAGE, f"狼人阵营投降（由{a.actor}发起）", "m135.txt:62")
        board.emit(step, "m135.txt:62", f"{a.actor}发起投降，狼群同意", actor=a.actor)

    def _forfeit(self, board: Board, a: Action) -> None:
        super()._forfeit(board, a)  # m135.txt:245, and the event says who won
        loser = (a.choice or "").strip()
        if loser in (WOLF, VILLAGE):
            winner = VILLAGE if loser == WOLF else WOLF
            board.emit("判负", "m135.txt:245", f"{loser}判负，{winner}胜利")

    # ------------------------------------------------------------------ the day
    def run_day(self, board: Board, day: DayInput) -> None:
        board.voters_day = day.day
        board.voters = tuple(v for v in day.voters if board.has(v))
        for v in day.voters:
            if not board.has(v):
                board.emit("放逐投票", "m135.txt:49", f"投票者「{v}」不在名单中，忽略")
        board.vote_cards = {
            n: cur.uid for n in board.living() if (cur := board.player(n).current) is not None
        }
        rest = self._director_actions(board, day.actions)
        if board.winner is not None:
            return
        day_step = Step((0, 0), "白天技能", ("翻牌",), "m135.txt:135")
        day_label = "白天技能"
        for a in rest:
            skill = self.canonical_skill(a.skill)
            spec = self.specs.get(skill)
            if spec is None:
                board.record(a, "校验", Outcome.INVALID, self.unknown_skill_reason(skill), "")
            elif skill == "翻牌":
                checked = validate(board, self, replace(a, skill=skill), spec, day_step)
                if isinstance(checked, str):
                    board.record(a, day_label, Outcome.INVALID, checked, spec.rule)
                else:
                    if checked.holder.charge is not None:
                        board.use_charge(*checked.holder.charge)
                    line = f"{a.actor}翻牌，公示身份：{checked.holder.card_name}"
                    board.announce(line)
                    board.record(a, day_label, Outcome.DONE, line, spec.rule)
                    board.emit(day_label, spec.rule, line, actor=a.actor)
            elif spec.trigger:
                board.prepared.append(replace(a, skill=skill))
            else:
                board.record(a, "校验", Outcome.INVALID, f"<{skill}>不是白天发动的技能", spec.rule)
        self._reds_during_the_day(board, day)
        step = "放逐投票"
        if day.sheriff_election:
            board.scratch["election"] = True
            elected = day.elected
            if elected is None:
                board.announce("警长竞选：无人当选")
                board.emit("竞岗", "m135.txt:147", "无人当选警长", because=day.decided_by)
            elif not board.alive(elected):
                raise EngineError(f"当选警长的{elected}已出局（或不在名单中），请检查计票")
            else:
                board.sheriff = elected
                board.announce(f"{elected}当选警长")
                board.tell(elected, "你当选警长（竞岗，m135.txt:146-147）。", "m135.txt:146")
                board.emit(
                    "竞岗",
                    "m135.txt:147",
                    f"{elected}当选警长",
                    resolved=(elected,),
                    because=day.decided_by,
                )
        elif day.out is None:
            board.emit(
                step, day.rule or "m135.txt:50", "今日无人被投票出局", because=day.decided_by
            )
        else:
            self._exile(board, day, step)
        board.drain()
        for a in board.scratch.get("reds", []):
            self._red_card(board, a)  # m135.txt:56: after the vote

    def _exile(self, board: Board, day: DayInput, step: str) -> None:
        out = day.out
        assert out is not None
        if not board.alive(out):
            raise EngineError(f"被投票出局的{out}已出局（或不在名单中），请检查计票")
        p = board.player(out)
        cur = p.current
        assert cur is not None
        rule = day.rule or "m135.txt:50"
        board.emit(step, rule, f"{out}最高票", resolved=(out,), because=day.decided_by)
        if role_of(p, cur) == "白痴":
            charge = board.charge(cur.uid, "装傻")
            holder = Holder(out, cur.uid, cur.name, "白痴", "装傻", "", (cur.uid, "装傻", ""))
            off = self.disabled(board, holder)
            action = board.take_prepared(out, "装傻")
            if charge is not None and charge.remaining > 0 and not off:
                if action is None:
                    board.need(
                        out,
                        "装傻",
                        f"{out}（白痴）即将因投票出局，可以发动<装傻>避免出局：记录决定后重新结算"
                        f"（{RECORD}，或 {CHOICE}）",
                        "m135.txt:109",
                        choices=("放弃",),
                    )
                elif not action.declined:
                    if self._play_dumb(board, action, p, cur):
                        return
                else:
                    board.record(action, step, Outcome.DONE, f"{out}放弃发动<装傻>", "m135.txt:109")
            elif action is not None:
                why = off or (
                    "<装傻>是<限定>技能，已经发动过"
                    "（白痴技能发动后可以被再次高票出局，m135.txt:110）"
                )
                board.record(action, step, Outcome.INVALID, why, "m135.txt:109")
        board.card_out(
            out, cause="投票出局", step=step, rule="m135.txt:50", source="放逐投票", kind="投票出局"
        )

    def _play_dumb(self, board: Board, action: Action, p: PlayerState, cur: CardState) -> bool:
        step = "装傻"
        name = p.name
        if board.sheriff == name and p.position(cur.uid) == 2:
            target = action.targets[0] if len(action.targets) == 1 else None
            if target is None or target == name or not board.alive(target):
                problem = (
                    "白痴是警长且为第二身份，发动装傻时须选择一名其他角色移交警长（m135.txt:109）"
                    if target is None or target == name
                    else f"{target}已出局，不能继任警长"
                )
                board.record(action, step, Outcome.INVALID, problem, "m135.txt:109")
                board.need(name, "装傻", problem, "m135.txt:109")
                return False
            board.sheriff = target
            board.announce(f"{name}移交警长给{target}")
            board.tell(target, "你成为警长（m135.txt:146）。", "m135.txt:146")
        board.use_charge(cur.uid, "装傻")
        line = f"{name}是白痴，发动装傻，避免出局"
        board.announce(line)
        board.record(action, step, Outcome.DONE, line, "m135.txt:109", action.targets)
        board.emit(step, "m135.txt:109", line, actor=name)
        return True

    # ------------------------------------------------------------------ end of a phase
    def end_of_phase(self, board: Board) -> None:
        if board.night is not None:
            self._deliver_gifts(board)
            for target in board.scratch.get("slandered", []):
                board.announce(f"{target}被诽谤（放逐投票中多计一票）")
        if board.deaths or board.night is not None or not board.scratch.get("election"):
            board.public[:0] = [self.death_line(board)]

    def _deliver_gifts(self, board: Board) -> None:
        for target, gift, giver, giver_card in board.scratch.get("gifts", []):
            step = "夜晚结束：馈赠"
            p = board.player(target)
            cur = p.current
            if cur is None:
                board.emit(step, "m135.txt:113", f"{target}已出局，馈赠的[{gift}]丢失")
                continue
            board.set_charge(Charge(cur.uid, f"馈赠{gift}", 1, giver_card, board.index + 1))
            board.tell(
                target,
                f"你获得黑商的馈赠：当前身份（{cur.name}）获得临时技能[{gift}]，"
                "额外单独计算，使用一次后丢失（m135.txt:113）。",
                "m135.txt:113",
            )
            board.emit(
                step, "m135.txt:113", f"{target}的{cur.name}获得临时技能[{gift}]", actor=giver
            )

    quiet_night_note: ClassVar[str] = "（平安夜）"

    def death_part(self, death: Death) -> str:
        text = f"{death.player}的{_ordinal(death.card_index)}"
        if death.red:
            text += "（红牌罚下）"
        elif death.kind == "投票出局":
            text += "（投票出局）"
        if death.player_out:
            text += f"，{death.player}出局"
        return text

    # ------------------------------------------------------------------ win check
    def win_conditions(self, board: Board) -> dict[str, bool]:
        wolves: list[bool] = []
        gods: list[bool] = []
        villagers: list[bool] = []
        for name in board.order:
            p = board.player(name)
            for c in p.cards:
                role = role_of(p, c)
                if role in self.wolf_roles:
                    wolves.append(c.alive)
                elif role in self.god_roles:
                    gods.append(c.alive)
                elif role in self.villager_roles:
                    villagers.append(c.alive)
        return {
            "village": bool(wolves) and not any(wolves),
            "wolf_gods": bool(gods) and not any(gods),
            "wolf_villagers": bool(villagers) and not any(villagers),
        }

    def check_win(self, board: Board) -> None:
        step = "胜负判定"
        if self.announce_winner(board, step):
            return
        # a decision still to make may change who wins: 须立即决定<最后一枪>，被枪杀的角色立即
        # 出局 (m135.txt:186); <装傻> keeps the 白痴 in (m135.txt:109)
        waiting = [p for p in board.pending if p.skill in ("最后一枪", "馈赠最后一枪", "装傻")]
        if waiting:
            what = "、".join(f"{p.who}的<{p.skill}>" for p in waiting)
            board.emit(step, "m135.txt:186", f"等待{what}（记录决定后重新结算）再判定胜负")
            return
        met = [c for c, ok in self.win_conditions(board).items() if ok]
        if not met:
            board.emit(step, "m135.txt:154", "双方均未达成胜利条件，游戏继续")
            return
        first = min(met, key=lambda c: (board.win_marks.get(c, 0), c))
        texts = {
            "village": (VILLAGE, "狼人阵营的身份牌全部出局", "m135.txt:161"),
            "wolf_gods": (
                WOLF,
                "村民阵营的预言家、女巫、猎人、守卫、长老、白痴、黑商、魔术师、乌鸦、灵能、潜行者、"
                "捣蛋鬼身份牌全部出局",
                "m135.txt:157",
            ),
            "wolf_villagers": (WOLF, "村民阵营的村民、高级村民身份牌全部出局", "m135.txt:158"),
        }
        faction, reason, rule = texts[first]
        factions = {texts[c][0] for c in met}
        if len(factions) > 1:
            reason += "（双方条件在同一阶段达成，先达成者胜）"
        board.set_winner(faction, reason, rule)
        board.announce(f"游戏结束：{faction}胜利（{reason}）")
        board.emit(step, rule, f"{faction}胜利", because=reason)

    # ------------------------------------------------------------------ votes
    def actual_faction(self, state: GameState, player: str) -> str | None:
        return actual_faction(state.player(player))

    def vote_modifiers(self, state: GameState, day: int) -> tuple[Any, ...]:
        """乌鸦[诽谤]: +1 vote against the target on the next day's exile vote (m135.txt:120)."""
        index = Phase.day(day).index
        return tuple(
            VoteModifier(s.holder, ModifierKind.WEIGHT_ADD, Fraction(1), "乌鸦[诽谤]")
            for s in state.statuses
            if s.kind == "诽谤" and s.active_at(index)
        )
