"""狼人——网杀变异屠边 24人局 (rules/tubian24.txt): the vote rules and the complete engine.

Votes:

- No sheriff election: the sheriff comes from 高僧[遗志] (tubian24.txt:119) and passes by
  [殉职] (tubian24.txt:174). The sheriff's vote weighs 1.5 (tubian24.txt:173).
- A tie puts the 高僧 out ([献身], tubian24.txt:39, 118); once the 高僧 is gone a tie is a
  平安日 (tubian24.txt:121). Only a 高僧 who still holds an unused [献身] takes a tie, so a
  仆人 transformed after its master's [献身] does not (tubian24.txt:154): :meth:`vote_modifiers`
  marks exactly those with the TIE_TAKER modifier.
- The text has no 投票规则 section; the house rules of the other four texts apply (one vote,
  改票 once replying to the original floor, none in the last hour, none when accelerated), except
  its own 代投 rule (tubian24.txt:332): a proxy vote at least 30 minutes before the close, a proxy
  change at least one hour before.

Engine: one card per player (24 players, tubian24.txt:13). The opening comes from the director
as settings (the game file's secret ``[tubian24]`` table, see :meth:`Tubian24.settings_from_game`):
``kill_order`` (狼人[种族], tubian24.txt:74), ``master`` (仆人[顺从], tubian24.txt:147),
``thief``/``thief_cards``/``thief_pick`` (盗贼[偷换], tubian24.txt:162) and ``sex.<name>`` (性别,
tubian24.txt:65). A deal may list 盗贼 itself (before the pick): the other 23 cards are then the
24 identities less the card drawn for him, and the setup gives him the picked card. The night
runs the steps ①–⑦ of tubian24.txt:235-241; deaths are settled only after every step, in the
order 白日出局枪-毒-刀-夜间出局枪 (tubian24.txt:244). The win check (tubian24.txt:179-216) runs
once everything has been drained. Interpretations are listed in the
module constant :data:`RULINGS` (for docs/rulings.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Any, ClassVar, Literal

from engine.ballots import ModifierKind, VoteModifier
from engine.cards import CardRules
from engine.conduct import DEFAULT_RULE, ConductRules, FlagKind
from engine.deal import Deal, Rng, expand, shuffle
from engine.kernel import (
    CHOICE,
    RECORD,
    RECORD_NIGHT,
    RECORD_PHASE,
    Action,
    Board,
    DayInput,
    Death,
    EngineError,
    Outcome,
    Trigger,
)
from engine.night import Handler, Holder, Pass, SkillSpec, Step, StepMode, run_steps
from engine.rulesets.base import (
    SHARED_VOTE_RULES,
    CountSheet,
    Deadline,
    Decision,
    Hands,
    LastWordsRules,
    Lineup,
    Ruleset,
)
from engine.rulesets.roles import VILLAGE, WOLF
from engine.speed import SpeedRules
from engine.state import Charge, GameState, Phase, PlayerState, Status

__all__ = [
    "CATEGORY",
    "DECK",
    "FACTIONS",
    "NIGHT_PLAN",
    "PIPER",
    "ROLE_SKILLS",
    "RULINGS",
    "SECRET_KEYS",
    "SPECS",
    "VILLAGE",
    "WHITE",
    "WOLF",
    "Tubian24",
    "drawn_for_thief",
]

_HOUSE = "docs/rulings.md#tubian24-house-vote-rules"

WHITE = "白眼狼阵营"
PIPER = "吹笛者阵营"
#: The four factions (tubian24.txt:28), in the order the win check gives them priority
#: (tubian24.txt:179, 192, 207: 吹笛者催眠 > 狼人白眼狼杀人).
FACTIONS: tuple[str, ...] = (PIPER, WOLF, WHITE, VILLAGE)

#: The 25 identities of tubian24.txt:13 (盗贼 replaces one of the other 24, tubian24.txt:162).
DECK: Mapping[str, int] = {
    "村民": 6,
    "狼人": 6,
    "女巫": 1,
    "先知": 1,
    "守护": 1,
    "情痴": 1,
    "村长": 1,
    "猎人": 1,
    "高僧": 1,
    "白痴": 1,
    "梦中人": 1,
    "白眼狼": 1,
    "仆人": 1,
    "吹笛者": 1,
    "盗贼": 1,
}
#: 村民阵营 categories (tubian24.txt:82-128), used by the wolves' and 白眼狼's win conditions.
CATEGORY: Mapping[str, str] = {
    "先知": "验人系",
    "女巫": "特",
    "守护": "特",
    "村长": "特",
    "情痴": "特",
    "白痴": "俗",
    "猎人": "俗",
    "高僧": "俗",
    "梦中人": "俗",
    "村民": "民",
}
ROLE_FACTION: Mapping[str, str] = {
    **dict.fromkeys(CATEGORY, VILLAGE),
    "狼人": WOLF,
    "白眼狼": WHITE,
    "吹笛者": PIPER,
}
GODS = frozenset(r for r, c in CATEGORY.items() if c != "民")

#: Each identity's skills as the text names them (白眼狼's [杀人] is ``白眼狼杀人`` here, so the
#: two kills run in their own steps; a 白眼狼's action named 杀人 is renamed).
ROLE_SKILLS: Mapping[str, tuple[str, ...]] = {
    "狼人": ("杀人",),
    "先知": ("预言",),
    "女巫": ("通灵", "救药", "毒药"),
    "守护": ("守卫",),
    "村长": ("长生", "无首"),
    "情痴": ("爱慕", "替死"),
    "白痴": ("装傻",),
    "猎人": ("最后一枪",),
    "高僧": ("献身", "遗志"),
    "梦中人": ("魅惑",),
    "村民": (),
    "吹笛者": ("催眠", "催眠一人"),
    "白眼狼": ("白眼狼杀人",),
    "仆人": ("顺从", "变身"),
}
ROLE_RULES: Mapping[str, str] = {
    "狼人": "tubian24.txt:73",
    "先知": "tubian24.txt:83",
    "女巫": "tubian24.txt:87",
    "守护": "tubian24.txt:94",
    "村长": "tubian24.txt:97",
    "情痴": "tubian24.txt:101",
    "白痴": "tubian24.txt:111",
    "猎人": "tubian24.txt:114",
    "高僧": "tubian24.txt:117",
    "梦中人": "tubian24.txt:123",
    "村民": "tubian24.txt:128",
    "吹笛者": "tubian24.txt:133",
    "白眼狼": "tubian24.txt:141",
    "仆人": "tubian24.txt:146",
    "盗贼": "tubian24.txt:161",
    "警长": "tubian24.txt:172",
}

SPECS: Mapping[str, SkillSpec] = {
    s.name: s
    for s in (
        SkillSpec(
            "爱慕",
            "tubian24.txt:102",
            step=(1, 0),
            limited=True,
            first_night=1,
            self_ok=False,
            first_night_rule="非首日限定，tubian24.txt:102",
        ),
        SkillSpec("守卫", "tubian24.txt:95", step=(2, 0)),
        SkillSpec("预言", "tubian24.txt:84", step=(3, 0)),
        SkillSpec("杀人", "tubian24.txt:75", step=(4, 0)),
        SkillSpec("白眼狼杀人", "tubian24.txt:142", step=(5, 0), self_ok=False),
        SkillSpec("救药", "tubian24.txt:89", step=(6, 0), limited=True),
        SkillSpec("毒药", "tubian24.txt:90", step=(6, 0), limited=True),
        SkillSpec("催眠", "tubian24.txt:134", step=(7, 0), targets=2),
        SkillSpec("催眠一人", "tubian24.txt:134", step=(7, 0)),
        SkillSpec("通灵", "tubian24.txt:88", targets=0, forced=True, passive=True),
        SkillSpec("长生", "tubian24.txt:98", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("无首", "tubian24.txt:99", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("替死", "tubian24.txt:103", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("装傻", "tubian24.txt:112", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("献身", "tubian24.txt:118", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("魅惑", "tubian24.txt:124", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("顺从", "tubian24.txt:147", targets=0, forced=True, passive=True),
        SkillSpec("变身", "tubian24.txt:148", targets=0, forced=True, passive=True, limited=True),
        SkillSpec("最后一枪", "tubian24.txt:115", trigger=True, redirectable=False),
        SkillSpec("遗志", "tubian24.txt:119", trigger=True, redirectable=False),
        SkillSpec("殉职", "tubian24.txt:174", trigger=True, redirectable=False),
    )
}
#: Director's actions (not skills): a red card, a faction's surrender, a faction judged lost.
DIRECTOR_ACTIONS = ("红牌罚下", "投降", "判负")

NIGHT_PLAN: tuple[Step, ...] = (
    Step((1, 0), "情痴行动", ("爱慕",), "tubian24.txt:235"),
    Step((2, 0), "守护行动", ("守卫",), "tubian24.txt:236"),
    Step((3, 0), "预言家行动", ("预言",), "tubian24.txt:237"),
    Step((4, 0), "狼人阵营行动", ("杀人",), "tubian24.txt:238"),
    Step((5, 0), "白眼狼阵营行动", ("白眼狼杀人",), "tubian24.txt:239"),
    Step((6, 0), "女巫行动", ("救药", "毒药"), "tubian24.txt:240", StepMode.ORDERED),
    Step((7, 0), "吹笛者行动", ("催眠", "催眠一人"), "tubian24.txt:241"),
)

_ALIASES = {
    "守护": "守卫",
    "预知": "预言",
    "查验": "预言",
    "指杀": "杀人",
    "红牌": "红牌罚下",
    "撕警徽": "殉职",
}

#: Keys of the game file's secret ``[tubian24]`` table (the opening, tubian24.txt:230-233).
SECRET_KEYS: tuple[str, ...] = (
    "kill_order",
    "master",
    "thief",
    "thief_cards",
    "thief_pick",
    "lead_wolf",
)
LEAD_SUBMITTED = "submitted"
LEAD_LIVING = "living"

#: The interpretations this module makes where the text is silent (for docs/rulings.md).
RULINGS: tuple[str, ...] = (
    "首夜是 night:0（开局后第一个夜晚）；情痴[爱慕]“非首日限定”= night:1 起"
    "（tubian24.txt:102, 234）。",
    "主刀狼：当晚提交了[杀人]且能行动的狼人中出刀优先级序号最小者（设置 lead_wolf=living："
    "存活且能行动的狼人中序号最小者，其未提交则当晚无有效指杀）（tubian24.txt:75）。",
    "女巫[通灵]感知当晚所有被指杀的角色：所有狼人的选择（含非主刀狼）与白眼狼的目标，不区分是否有效"
    "（tubian24.txt:88）。",
    "先知[预言]得知目标当前的身份牌名称（“查验其身份”），仆人未变身时为“仆人”（tubian24.txt:84）。",
    "守护[守卫]与女巫[救药]都挡狼人与白眼狼的有效指杀；两者同时作用于一人时该角色存活（没有奶穿）"
    "（tubian24.txt:89, 95）。",
    "村长[长生]在其第一次成为有效指杀的目标时消耗，即使当晚另有守卫或救药；同晚狼人与白眼狼都指杀村长时，"
    "[长生]挡先结算的狼人指杀（tubian24.txt:98, 244）。",
    "村长[长生]不受[无首]影响（补充说明⑥：变身的仆人“无论是否触发[无首]”都获得[长生]）（tubian24.txt:155）。",
    "同一夜的“刀”按狼人的有效指杀、白眼狼的指杀依次结算（补充说明③④）"
    "（tubian24.txt:107-108, 244）。",
    "刀空/毒空：目标在结算前已出局，不再结算、不公示；唯一例外是补充说明④：情痴已[替死]后白眼狼的指杀"
    "仍公示“被白眼狼杀害”，情痴当晚被守卫或被救时除外（这一刀无效）（tubian24.txt:95, 108, 244）。",
    "高僧[献身]出局不属于“投票出局”，不触发情痴[替死]（tubian24.txt:43, 103）。",
    "被动的<强制>技能（长生、替死、变身）不受梦中人[魅惑]影响；[魅惑]让异性玩家当晚不能发动主动技能，"
    "女巫也收不到[通灵]，当晚出局的猎人不能[最后一枪]（白日出局枪除外）（tubian24.txt:125）。",
    "发动[装傻]的白痴视为已出局（胜负判定、仆人[变身]），但仍可被选为技能目标、可在夜晚被杀；"
    "不能投票、不能被投票、不能继任警长；若其为警长，警徽按[殉职]移交"
    "（tubian24.txt:47, 112, 153）。",
    "仆人的阵营为开局时主人的实际阵营；[变身]后身份牌改为主人出局时的身份牌，复制主人身份牌上剩余的"
    "<限定>次数；主人的[爱慕]对象不随之继承（tubian24.txt:147-158）。",
    "吹笛者胜利条件2“除吹笛者阵营外所有玩家均进入催眠状态”只看存活（且未[装傻]）的玩家"
    "（tubian24.txt:214）。",
    "[催眠]选择了已被催眠的角色时：该目标不再生效，吹笛者被告知，并列为待定（导演记录修改后的目标，"
    "或 choice=确认 表示不修改）（tubian24.txt:136）。",
    "夜间[最后一枪]带走的角色只公示“出局”，不公示原因与身份（夜晚出局不公示身份，tubian24.txt:35）。",
    "白天红牌罚下在投票出局之前结算；被红牌罚下的警长不能[殉职]，警徽由导演组收回"
    "（tubian24.txt:48, 174, 247）。",
    "所有阵营同时判负时引擎不宣布胜者，列为待定由导演裁定（tubian24.txt:185）。",
    "发牌可以写盗贼本人（盗贼选牌之前）：其余23张是24人局的身份少抽出的那一张，其他身份都不能多出；"
    "thief_cards 须含这张被抽出的身份（抽出村民时为村民、村民、狼人，顺序不限），"
    "thief_pick 是盗贼盲选的第几张；开局（night:0）告知盗贼他的身份（tubian24.txt:162-164, 232）。",
    "投给发动[装傻]的白痴的票是无效票（不能成为投票对象），不计入票数，也不会造成平票；白痴自己的票"
    "无效（tubian24.txt:112, 118）。",
    "“一名角色不可连续被守卫两次”按被守卫的角色计，与守卫牌在谁手中无关：仆人[变身]为守护后，"
    "不能守卫主人上一晚守卫的角色（tubian24.txt:95, 148）。",
)


# ------------------------------------------------------ cards drawn, sex, factions, out for the win


def _csv(text: str) -> list[str]:
    return [x.strip() for x in text.replace("，", ",").replace("、", ",").split(",") if x.strip()]


def _drawn(three: Sequence[str]) -> str | None:
    """The card drawn for the 盗贼, read from his three cards (tubian24.txt:162): the drawn card,
    one 村民 and one 狼人 — or three 狼人 / three 白眼狼 when the drawn card is one of those.
    None when the three cannot come from one draw. The order of the three is free."""
    if len(three) != 3:
        return None
    if len(set(three)) == 1 and three[0] in ("狼人", "白眼狼"):
        return three[0]
    rest = list(three)
    for card in ("村民", "狼人"):
        if card not in rest:
            return None
        rest.remove(card)
    drawn = rest[0]
    return None if drawn in ("狼人", "白眼狼", "盗贼") else drawn


def drawn_for_thief(players: Sequence[tuple[str, Sequence[str]]]) -> str | None:
    """The card a deal that still lists 盗贼 lacks: the one drawn for the 盗贼 (tubian24.txt:162).

    Only for a 24-player deal with exactly one 盗贼 and every other identity at most at its
    count, where exactly one card is missing; None otherwise.
    """
    if len(players) != 24 or any(len(cards) != 1 for _n, cards in players):
        return None
    counts = Counter(cards[0] for _n, cards in players)
    if counts["盗贼"] != 1 or any(c not in DECK or n > DECK[c] for c, n in counts.items()):
        return None
    missing = [c for c, n in DECK.items() if c != "盗贼" and counts[c] < n]
    return missing[0] if len(missing) == 1 else None


def _opposite(sex: str) -> str:
    return "女" if sex == "男" else "男"


def _faction_of(board_or_state: Board | GameState, name: str) -> str | None:
    """The player's actual faction: its card's, or a 仆人's master's (tubian24.txt:147)."""
    if isinstance(board_or_state, Board):
        p = board_or_state.player(name)
        statuses = board_or_state.statuses
    else:
        p = board_or_state.player(name)
        statuses = list(board_or_state.statuses)
    card = p.cards[0]
    for s in statuses:
        if s.kind == "顺从" and s.holder == name:
            return s.note or None
    return ROLE_FACTION.get(card.name)


def _out_for_win(statuses: Sequence[Status], p: PlayerState) -> bool:
    """Out for the win check: the card is out, or a 白痴 after [装傻] (tubian24.txt:112)."""
    return not p.alive or any(s.kind == "装傻" and s.holder == p.name for s in statuses)


# --------------------------------------------------------------------------- the rule set


class Tubian24(Ruleset):
    id: ClassVar[str] = "tubian24"
    name: ClassVar[str] = "狼人——网杀变异屠边 24人局"
    rule_file: ClassVar[str] = "tubian24.txt"
    aliases: ClassVar[tuple[str, ...]] = ("变异屠边", "屠边24")
    deck: ClassVar[Mapping[str, int]] = DECK
    director_actions: ClassVar[tuple[str, ...]] = DIRECTOR_ACTIONS
    gods: ClassVar[frozenset[str]] = GODS
    role_faction: ClassVar[Mapping[str, str]] = ROLE_FACTION

    # no election: every day's vote puts someone out (tubian24.txt:39); the sheriff only comes
    # from 高僧[遗志]
    has_sheriff_election: ClassVar[bool] = False
    sheriff_weight: ClassVar[Fraction] = Fraction(3, 2)
    proxy_cutoff: ClassVar[timedelta | None] = timedelta(minutes=30)
    proxy_change_cutoff: ClassVar[timedelta | None] = timedelta(hours=1)

    rules: ClassVar[dict[str, str]] = {
        **SHARED_VOTE_RULES,
        "vote_right": "tubian24.txt:39",
        "out": "tubian24.txt:44",
        "window": "tubian24.txt:39",
        "one_vote": _HOUSE,
        "format": _HOUSE,
        "correct_invalid": _HOUSE,
        "abstain": _HOUSE,
        "change_once": _HOUSE,
        "change_reply": "docs/rulings.md#tubian24-house-vote-rules",
        "change_cutoff": _HOUSE,
        "change_accelerated": _HOUSE,
        "proxy": "tubian24.txt:332",
        "proxy_cutoff": "tubian24.txt:332",
        "proxy_change_cutoff": "tubian24.txt:332",
        "election": "tubian24.txt:119",
        "sheriff_weight": "tubian24.txt:173",
        "top": "tubian24.txt:39",
        "tie": "tubian24.txt:118",
        "tie_no_monk": "tubian24.txt:121",
        "block_out": "docs/rulings.md#block-out",
        "public": "tubian24.txt:39",
        # who cannot be voted for while in the game: only a 白痴 after [装傻]
        "not_votable": "tubian24.txt:112",
    }

    # --- what else the rule set is ----------------------------------------------------------
    title: ClassVar[str] = "变异屠边24人局"
    conduct: ClassVar[ConductRules] = ConductRules(
        "tubian24",
        rules={
            FlagKind.QIANSHUI: "tubian24.txt:294, tubian24.txt:324",
            FlagKind.QIANSHUI_STREAK: "tubian24.txt:294, tubian24.txt:324",
            FlagKind.NO_VOTE: "tubian24.txt:295, tubian24.txt:324",
            FlagKind.ZHASHI: "tubian24.txt:298",
            FlagKind.FONT: "tubian24.txt:307, tubian24.txt:308",
            FlagKind.LASTWORDS_CODE: f"{DEFAULT_RULE}；tubian24.txt:45 仅首夜出局玩家有遗言",
        },
        accel_word="加快进程",
        # tubian24.txt:298 adds the rules thread (规则帖)
        zhashi_roles=frozenset({"discussion", "vote", "progress", "inquiry", "rules"}),
    )
    # tubian24 has no automatic faction loss (tubian24.txt:264: the director decides at each red)
    cards: ClassVar[CardRules] = CardRules(
        "tubian24",
        reds_to_lose=None,
        escalation_rule="tubian24.txt:266, tubian24.txt:267",
        red_out_rule="tubian24.txt:264",
        faction_rule="tubian24.txt:264（阵营是否判负由导演视情况决定）",
    )
    # tubian24.txt:330 每名玩家都有拥有在进程帖内提议进程加速的权利，若场上未出局的玩家过半数同意
    # 加速则执行加快进程。Strictly more than half; no 延时 and no deadline: we use the other sets'
    # "three hours before the close".
    speed: ClassVar[SpeedRules] = SpeedRules(
        "tubian24",
        threshold="more_than_half",
        delay_allowed=False,
        deadline="before_close",
        rule="tubian24.txt:330",
        deadline_rule="tubian24.txt 未规定截止时间，按其他规则的关门前三小时",
        auto_rule="tubian24.txt:330",
    )
    # tubian24.txt:34 游戏流程发生变化时需要在讨论贴或投票贴中公示
    announce_in: ClassVar[Literal["discussion", "vote"]] = "vote"
    announce_rule: ClassVar[str] = "tubian24.txt:34"
    lastwords: ClassVar[LastWordsRules] = LastWordsRules(
        first_night_only="除首夜出局玩家外，所有出局玩家均没有遗言（tubian24.txt:45）"
    )
    # 梦中人[魅惑] silences the opposite sex (tubian24.txt:124-125), and the sexes are
    # announced at the start (tubian24.txt:65)
    player_fields: ClassVar[Mapping[str, str]] = {"sex": "梦中人[魅惑]会让所有异性玩家不能使用技能"}
    sexes_announced: ClassVar[str | None] = "tubian24.txt:65"
    secret_keys: ClassVar[tuple[str, ...]] = SECRET_KEYS

    def break_tie(self, sheet: CountSheet, tie: tuple[str, ...]) -> Decision:
        """tubian24.txt:118 当投票出现平票的情况，高僧将成为当日投票出局的玩家。"""
        if sheet.tie_takers:
            monk = sorted(sheet.tie_takers)[0]
            return Decision(tie, tie, monk, None, "平票，高僧[献身]，承受投票出局", self.ref("tie"))
        return Decision(
            tie,
            tie,
            None,
            None,
            "平票，没有可[献身]的高僧，平安日无人出局",
            self.ref("tie_no_monk"),
        )

    # ================================================================== the engine
    has_engine: ClassVar[bool] = True
    # a 投降 during the day may end the game at once (tubian24.txt:53, 183)
    ends_before_the_vote: ClassVar[bool] = True
    skill_specs: ClassVar[Mapping[str, SkillSpec]] = SPECS
    skill_aliases: ClassVar[Mapping[str, str]] = _ALIASES
    default_settings: ClassVar[Mapping[str, str]] = {"lead_wolf": LEAD_SUBMITTED}
    roles: ClassVar[Mapping[str, tuple[str, ...]]] = ROLE_SKILLS
    specs: ClassVar[Mapping[str, SkillSpec]] = SPECS
    night_plan: ClassVar[tuple[Step, ...]] = NIGHT_PLAN
    #: 行动时限 (tubian24.txt:248-249): 情痴、守护、先知、狼人阵营、白眼狼阵营 within 30
    #: minutes of the close; the witch half an hour after the feedback (the director's to
    #: judge), an hour after the close at the latest; 吹笛者 has none
    night_deadlines: ClassVar[Mapping[str, Deadline]] = {
        **{
            s: Deadline(timedelta(minutes=30), "tubian24.txt:248", "视为放弃技能")
            for s in ("爱慕", "守卫", "预言", "杀人", "白眼狼杀人")
        },
        **{
            s: Deadline(timedelta(hours=1), "tubian24.txt:249", "视为放弃技能")
            for s in ("救药", "毒药")
        },
    }

    # ------------------------------------------------------------------ setup
    def settings_from_game(self, game: Any) -> dict[str, str]:
        """The engine settings from a game file (pipeline.game.gamefile.Game, duck-typed).

        ``players[].sex`` → ``sex.<name>``; the secret ``[tubian24]`` table: ``kill_order``
        (list of names, priority 1 first), ``master`` (the 仆人's master), ``thief`` (the 盗贼's
        name), ``thief_cards`` (the three cards in order), ``thief_pick`` (1–3), ``lead_wolf``.
        """
        out: dict[str, str] = {}
        for p in getattr(game, "players", ()):
            sex = getattr(p, "sex", None)
            if sex:
                out[f"sex.{p.name}"] = str(sex)
        secrets = dict(getattr(game, "secrets", {}) or {})
        unknown = sorted(set(secrets) - set(self.secret_keys))
        if unknown:
            raise EngineError(
                f"[tubian24] 表中有未知的键：{'、'.join(unknown)}"
                f"（可选：{'、'.join(self.secret_keys)}）"
            )
        for key, value in secrets.items():
            if isinstance(value, list | tuple):
                out[key] = ",".join(str(v) for v in value)
            else:
                out[key] = str(value)
        return out

    # one card each from the 24 identities (tubian24.txt:13, 25)
    hands: ClassVar[Hands | None] = Hands(
        DECK, 1, "tubian24.txt:13, 25", deck_word="身份", deck_rule="tubian24.txt:13"
    )

    # ★24人局 (tubian24.txt:13); four factions (tubian24.txt:28)
    player_count: ClassVar[tuple[int, str] | None] = (24, "tubian24.txt:13")
    factions: ClassVar[tuple[str, ...]] = FACTIONS
    faction_rule: ClassVar[str] = "tubian24.txt:28"

    def deal_count(self) -> int:
        assert self.hands is not None
        return sum(self.hands.deck.values()) - 1  # tubian24.txt:13: 盗贼 replaces one of 24

    def deal(self, names: tuple[str, ...], rng: Rng) -> Deal:
        """One of the 24 identities drawn and replaced by 盗贼 (tubian24.txt:13, 162); the 24
        cards shuffled to the seats; the 盗贼's three cards are the drawn one, a 村民 and a 狼人
        in a random order — or three of the drawn card when it is 狼人 or 白眼狼."""
        assert self.hands is not None
        deck = self.hands.deck
        identities = expand({c: n for c, n in deck.items() if c != "盗贼"})  # the other 24
        drawn = identities.pop(rng.randrange(len(identities)))
        # tubian24.txt:162 盗贼从这张身份和一张【村民】、一张【狼人】中盲选一张；若抽出的一张身份为
        # 【狼人】或【白眼狼】，则三张备选身份均修改为【狼人】或【白眼狼】
        if drawn in ("狼人", "白眼狼"):
            three = [drawn, drawn, drawn]
        else:
            three = shuffle([drawn, "村民", "狼人"], rng)
        seats = shuffle([*identities, "盗贼"], rng)
        thief = names[seats.index("盗贼")]
        return Deal(
            self.id,
            names,
            tuple((c,) for c in seats),
            extras=(("thief_cards", tuple(three)),),
            table={"thief": thief, "thief_cards": three},
            # chosen by the players once they know their cards (tubian24.txt:74, 147, 164)
            stale=("thief_pick", "kill_order", "master"),
            notes=(
                "tubian24：盗贼的身份牌写的是「盗贼」，三张备选已写入 [tubian24] thief_cards"
                "（tubian24.txt:162）；盗贼盲选后写 thief_pick = 1、2 或 3。",
            ),
        )

    def deal_settings(self, made: Deal) -> list[dict[str, str]]:
        """One game file for each of the 盗贼's three picks."""
        base = {
            "thief": str(made.table["thief"]),
            "thief_cards": ",".join(made.table["thief_cards"]),
        }
        return [{**base, "thief_pick": str(pick)} for pick in (1, 2, 3)]

    def faction_decided_later(self, cards: Sequence[str]) -> bool:
        # the 盗贼's faction is his pick's, the 仆人's his master's
        return tuple(cards) in (("盗贼",), ("仆人",))

    def hand_faction(self, name: str, cards: Sequence[str]) -> str | None:
        """The card's faction; a 仆人's is his master's and a 盗贼's the card he picks
        (tubian24.txt:147, 162), so the cards alone do not say."""
        if len(cards) != 1 or cards[0] in ("仆人", "盗贼"):
            return None
        return self.role_faction.get(cards[0])

    def validate_setup(self, players: Lineup) -> list[str]:
        """Problems with the deal, in Chinese (tubian24.txt:13, 162-168)."""
        problems: list[str] = []
        if not any(cards for _n, cards in players):
            return problems
        counts: Counter[str] = Counter()
        for name, cards in players:
            if bad := self.hand_problems(name, cards):
                problems += bad
                continue
            counts[cards[0]] += 1
        # a deal may list 盗贼 itself (the opening before the pick, tubian24.txt:162): the 盗贼
        # then holds the place of the card drawn for him, and every other identity keeps its
        # count; once the pick is written, 村民 or 狼人 may be one over (盗贼 took that card)
        thief_dealt = counts["盗贼"] > 0
        extra_wolf = counts["狼人"] > self.deck["狼人"]
        extra_villager = counts["村民"] > self.deck["村民"]
        for card, n in counts.items():
            spare = 1 if card in ("狼人", "村民") and not thief_dealt else 0
            limit = self.deck[card] + spare
            if n > limit:
                why = ""
                if thief_dealt and card in ("狼人", "村民"):
                    why = "；身份牌仍是盗贼时，其余身份按 24 人局的张数"
                problems.append(
                    f"身份「{card}」出现 {n} 次，最多 {limit} 次{why}（tubian24.txt:13, 162）"
                )
        if extra_wolf and extra_villager:
            problems.append("狼人与村民不能同时多出一张：盗贼只换走一张身份（tubian24.txt:162）")
        if len(players) == 24 and not problems and not thief_dealt:
            missing = [c for c, n in self.deck.items() if c != "盗贼" and counts[c] < self.deck[c]]
            if extra_wolf or extra_villager:
                if len(missing) != 1 or missing[0] in ("狼人", "白眼狼"):
                    problems.append(
                        "盗贼选了村民/狼人时，恰有一张非狼人、非白眼狼的身份被埋"
                        f"（缺少：{'、'.join(missing) or '无'}；tubian24.txt:162, 167-168）"
                    )
            elif missing:
                problems.append(f"24人局缺少身份：{'、'.join(missing)}（tubian24.txt:13）")
        # with 盗贼 in a 24-player deal and no card over its count, the other 23 cards are the
        # 24 identities less exactly one: the card drawn for the 盗贼 (see :func:`drawn_for_thief`)
        return problems

    def _check_settings(
        self,
        names: Sequence[str],
        cards: Mapping[str, str],
        merged: Mapping[str, str],
        *,
        buried: str | None = None,
    ) -> list[str]:
        """Problems with the opening settings; ``buried``: the card the 盗贼 replaced in a deal
        that lists 盗贼 (:func:`drawn_for_thief`), which ``thief_cards`` must name."""
        problems: list[str] = []
        known = set(names)
        for key, value in merged.items():
            if key.startswith("sex."):
                if key[4:] not in known:
                    problems.append(f"设置 {key}：名单中没有玩家「{key[4:]}」")
                elif value not in ("男", "女"):
                    problems.append(f"设置 {key} 应为 男 或 女（tubian24.txt:65）")
            elif key not in (*self.secret_keys, *self.default_settings):
                problems.append(f"未知的设置：{key}")
        if merged.get("lead_wolf") not in (LEAD_SUBMITTED, LEAD_LIVING):
            problems.append("设置 lead_wolf 应为 submitted 或 living")
        order = _csv(merged.get("kill_order", ""))
        for n in order:
            if n not in known:
                problems.append(f"kill_order 中的「{n}」不在名单中（tubian24.txt:74）")
        if len(set(order)) != len(order):
            problems.append("kill_order 中有重复的玩家（tubian24.txt:74）")
        if len(order) > 8:
            problems.append("kill_order 最多排定 8 名（出刀优先级 1-8，tubian24.txt:74）")
        master = merged.get("master")
        if master is not None:
            if master not in known:
                problems.append(f"仆人的主人「{master}」不在名单中（tubian24.txt:147）")
            elif cards.get(master) == "仆人":
                problems.append("仆人不能选择自己作为主人（tubian24.txt:147）")
        thief = merged.get("thief")
        if thief is not None and thief not in known:
            problems.append(f"盗贼「{thief}」不在名单中（tubian24.txt:162）")
        three = _csv(merged.get("thief_cards", ""))
        if three:
            if len(three) != 3 or any(c not in self.deck or c == "盗贼" for c in three):
                problems.append("thief_cards 应为三张身份（tubian24.txt:162）")
            elif (drawn := _drawn(three)) is None:
                problems.append(
                    "盗贼的三张备选应为抽出的身份、一张村民、一张狼人；抽出狼人或白眼狼时三张均为"
                    f"该身份（收到：{'、'.join(three)}；tubian24.txt:162）"
                )
            elif buried is not None and drawn != buried:
                problems.append(
                    f"thief_cards 中抽出的身份是「{drawn}」，但发牌中被盗贼换走的是「{buried}」"
                    "（其余23张是24人局的身份少这一张，tubian24.txt:162）"
                )
            pick = merged.get("thief_pick")
            if pick is not None and pick not in ("1", "2", "3"):
                problems.append("thief_pick 应为 1、2 或 3（tubian24.txt:164）")
        return problems

    def open_state(self, players: Lineup, settings: Mapping[str, str], strict: bool) -> GameState:
        """The state before the first night (night:0): cards, 限定 charges, the wolf group,
        the 仆人's faction (its master's) and the director's opening settings."""
        merged = {**self.default_settings, **{k: str(v) for k, v in settings.items()}}
        # the 盗贼's card: a player dealt 盗贼 takes the picked card (tubian24.txt:162-164)
        three = _csv(merged.get("thief_cards", ""))
        pick = merged.get("thief_pick")
        dealt: list[tuple[str, list[str]]] = []
        thief_problems: list[str] = []
        for name, cards in players:
            cards = list(cards)
            if cards == ["盗贼"]:
                named = merged.get("thief")
                if named is not None and named != name:
                    thief_problems.append(
                        f"[tubian24] thief 写的是「{named}」，但身份牌为盗贼的是「{name}」"
                        "（tubian24.txt:162）"
                    )
                if len(three) == 3 and pick in ("1", "2", "3"):
                    cards = [three[int(pick) - 1]]
                    merged.setdefault("thief", name)
                elif strict:
                    raise EngineError(
                        f"{name}的身份是盗贼：请在 [tubian24] 表中写明 thief_cards（三张备选）与"
                        "thief_pick（1-3），或直接写出盗贼选到的身份（tubian24.txt:162-164）"
                    )
            elif (
                name == merged.get("thief")
                and len(three) == 3
                and pick in ("1", "2", "3")
                and cards != [three[int(pick) - 1]]
            ):
                thief_problems.append(
                    f"盗贼「{name}」的身份牌写的是「{'、'.join(cards)}」，"
                    f"但 thief_cards 的第{pick}张是「{three[int(pick) - 1]}」（tubian24.txt:164）"
                )
            dealt.append((name, cards))
        card_of = {n: c[0] for n, c in dealt if len(c) == 1}
        thief_problems += self._check_settings(
            [n for n, _c in dealt], card_of, merged, buried=drawn_for_thief(players)
        )
        self.check_lineup(dealt, strict=strict, extra=thief_problems)
        states: list[PlayerState] = []
        charges: list[Charge] = []
        statuses: list[Status] = []
        for name, cards in dealt:
            ps = PlayerState(name=name, cards=self.dealt_cards(name, cards))
            charges += self.limited_charges(ps.cards)
            states.append(replace(ps, wolf_group=bool(cards) and cards[0] == "狼人"))
        master = merged.get("master")
        for name, card in card_of.items():
            if card == "仆人" and master in card_of:
                faction = self.role_faction.get(card_of[master], "")
                statuses.append(
                    Status(
                        "顺从",
                        name,
                        master,
                        0,
                        None,
                        survives_death=True,
                        note=faction,
                    )
                )
        return GameState(
            ruleset=self.id,
            phase=Phase.setup(),
            players=tuple(states),
            charges=tuple(charges),
            statuses=tuple(statuses),
            settings=tuple(merged.items()),
        )

    # ------------------------------------------------------------------ names
    def skill_names(self) -> tuple[str, ...]:
        return (*self.specs, *self.director_actions)

    def unused_reason(self, action: Action) -> str:
        skill = self.canonical_skill(action.skill)
        if skill == "最后一枪":
            return f"{action.actor}（猎人）本阶段没有出局，<最后一枪>未发动"
        if skill == "殉职":
            return f"{action.actor}本阶段没有以警长身份出局，<殉职>未发动"
        if skill == "遗志":
            return f"{action.actor}本阶段没有因[献身]出局，<遗志>未发动"
        return super().unused_reason(action)

    # ------------------------------------------------------------------ skills held
    def holder(self, board: Board, player: str, skill: str) -> Holder | None:
        p = board.player(player)
        cur = p.current
        if cur is None:
            return None
        if skill in self.roles.get(cur.name, ()):
            charge = (cur.uid, skill, "") if self.specs[skill].limited else None
            return Holder(player, cur.uid, cur.name, cur.name, skill, "", charge)
        return None

    def missing_skill_reason(self, board: Board, player: str, skill: str) -> str:
        cur = board.player(player).current
        assert cur is not None
        return f"{player}的身份（{cur.name}）没有<{skill}>"

    def _disabled(self, board: Board, player: str, skill: str, *, charm: bool = True) -> str | None:
        if skill in ("变身", "顺从", "长生"):
            return None
        if board.table_status("无首") and _faction_of(board, player) == VILLAGE:
            return "村长[无首]：村民阵营的其余角色已失去全部技能（tubian24.txt:99）"
        if charm and board.night is not None:
            for s in board.table_status("魅惑"):
                sex = board.setting(f"sex.{player}", "")
                if sex and s.note and sex != s.note:
                    return (
                        f"梦中人[魅惑]：{sex}性玩家今晚无法行动，不能使用技能"
                        "（tubian24.txt:124-125）"
                    )
        return None

    def disabled(self, board: Board, holder: Holder) -> str | None:
        """A lost or silenced skill; the player is told when using it (tubian24.txt:99)."""
        off = self._disabled(board, holder.player, holder.skill)
        if off:
            board.tell(holder.player, f"你不能使用<{holder.skill}>：{off}", "tubian24.txt:99")
        return off

    def check_action(self, board: Board, p: Pass) -> str | None:
        skill = p.spec.name
        a = p.action
        if skill == "守卫":
            # per guarded character, whoever holds the guard card (仆人[变身] passes it on,
            # tubian24.txt:148): the last night's guards of every card count
            last = {
                t
                for m in board.memory
                if m.skill == skill and m.phase == board.index - 2
                for t in m.targets
            }
            again = [t for t in a.targets if t in last]
            if again:
                return f"一名角色不可连续被守卫两次（{again[0]}上一晚已被守卫，tubian24.txt:95）"
        elif skill in ("救药", "毒药"):
            used = board.scratch.setdefault("witch_used", {}).setdefault(a.actor, set())
            if used:
                return "同一个游戏日夜晚，女巫只能选择[救药]和[毒药]之一使用（tubian24.txt:92）"
        elif skill in ("催眠", "催眠一人"):
            used = board.scratch.setdefault("hypno_used", set())
            if a.actor in used:
                return "[催眠]每晚发动一次（选择一至两名角色，tubian24.txt:134）"
            used.add(a.actor)
        return None

    # ------------------------------------------------------------------ the night
    def night_handlers(self) -> dict[str, Handler]:
        return {
            "爱慕": self._h_love,
            "守卫": self._h_guard,
            "预言": self._h_seer,
            "杀人": self._h_wolf_kill,
            "白眼狼杀人": self._h_white_kill,
            "救药": self._h_antidote,
            "毒药": self._h_poison,
            "催眠": self._h_hypnotise,
            "催眠一人": self._h_hypnotise,
        }

    def _rename(self, board: Board, a: Action) -> Action:
        skill = self.canonical_skill(a.skill)
        if skill == "杀人" and board.alive(a.actor):
            cur = board.player(a.actor).current
            if cur is not None and cur.name == "白眼狼":
                skill = "白眼狼杀人"
        if skill == "催眠" and len(a.targets) == 1:
            skill = "催眠一人"
        return a if skill == a.skill else replace(a, skill=skill)

    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        if board.setting("master", "") == "" and any(
            p.cards[0].name == "仆人" and p.alive for p in board.players.values()
        ):
            board.need(
                "导演",
                "顺从",
                "缺少仆人的主人：请在游戏文件的 [tubian24] 表中写明 master（tubian24.txt:147）",
                "tubian24.txt:147",
            )
        board.scratch["night_shots"] = []
        if board.night == 0:
            self._tell_thief(board)
        rest = self._director_actions(board, actions)
        if board.winner is not None:
            return
        rest = [self._rename(board, a) for a in rest]
        day_shots: list[Action] = []
        others: list[Action] = []
        for a in rest:
            if self._late(board, a):
                day_shots.append(a)
            else:
                others.append(a)
        run_steps(board, self, self.night_plan, self.specs, self.night_handlers(), others)
        self._settle_night(board, day_shots)

    def _tell_thief(self, board: Board) -> None:
        """开局技能发动 ② 盗贼选牌，若选到狼人则进群 (tubian24.txt:232, 162-164): the director
        tells the 盗贼 the card his blind pick gave him."""
        thief = board.setting("thief", "")
        if not thief or not board.has(thief) or not board.alive(thief):
            return
        cur = board.player(thief).current
        assert cur is not None
        pick = board.setting("thief_pick", "")
        picked = f"你从三张备选身份中选择了第{pick}张，" if pick else ""
        group = "，并加入狼群" if cur.name == "狼人" else ""
        text = f"盗贼[偷换]：{picked}你的身份牌改为{cur.name}{group}（tubian24.txt:162-164, 232）。"
        board.tell(thief, text, "tubian24.txt:164")
        board.emit("盗贼[偷换]", "tubian24.txt:164", f"盗贼{thief}的身份为{cur.name}", actor=thief)

    @staticmethod
    def _late(board: Board, a: Action) -> bool:
        """A day-time decision (白日出局枪, 遗志) recorded after the day was resolved."""
        wait = {"最后一枪": "待开枪", "遗志": "待遗志"}.get(a.skill)
        return wait is not None and bool(board.statuses_of(a.actor, wait))

    def before_step(self, board: Board, step: Step) -> None:
        if step.key == (6, 0):
            self._sense(board, step)

    def after_step(self, board: Board, step: Step) -> None:
        if step.key == (4, 0):
            self._choose_lead_kill(board, step)

    # handlers
    def _h_love(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        board.add_status(
            Status(
                "爱慕",
                target,
                p.action.actor,
                board.index,
                None,
                survives_death=True,
                note="情痴的爱慕对象（不能更改）",
            )
        )
        return Outcome.DONE, f"{target}成为{p.action.actor}的爱慕对象（不能更改）"

    def _h_guard(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        board.add_status(
            Status(
                "守卫", target, p.action.actor, board.index, board.index, note="当晚有效指杀无效"
            )
        )
        return Outcome.DONE, f"守卫{target}：当晚对其的有效指杀无效"

    def _h_seer(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        cur = board.player(target).current
        assert cur is not None
        text = f"预言：{target}的身份是{cur.name}。"
        board.tell(p.action.actor, text, "tubian24.txt:84")
        return Outcome.DONE, text

    def _h_wolf_kill(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        board.scratch.setdefault("wolf_kills", []).append(p)
        return Outcome.DONE, f"{p.action.actor}指杀{p.resolved[0]}"

    def _h_white_kill(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        board.scratch["white_kill"] = p
        return Outcome.DONE, f"白眼狼{p.action.actor}有效指杀{p.resolved[0]}"

    def _h_antidote(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        target = p.resolved[0]
        board.scratch.setdefault("witch_used", {}).setdefault(p.action.actor, set()).add("救药")
        board.add_status(
            Status(
                "救药",
                target,
                p.action.actor,
                board.index,
                board.index,
                note="当晚不会因被有效指杀而出局",
            )
        )
        return Outcome.DONE, f"{target}当晚不会因被有效指杀而出局"

    def _h_poison(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        board.scratch.setdefault("witch_used", {}).setdefault(p.action.actor, set()).add("毒药")
        board.scratch["poison"] = p
        return Outcome.DONE, f"{p.resolved[0]}在夜晚结束前出局（毒，按 枪-毒-刀-枪 的顺序结算）"

    def _h_hypnotise(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        done: list[str] = []
        again: list[str] = []
        for target in p.resolved:
            if any(
                s.kind == "催眠" and s.holder == target for s in board.statuses
            ) or target in board.scratch.get("hypnotised_now", set()):
                again.append(target)
                continue
            board.scratch.setdefault("hypnotised_now", set()).add(target)
            board.add_status(
                Status(
                    "催眠",
                    target,
                    p.action.actor,
                    board.index,
                    None,
                    survives_death=True,
                    note="催眠状态（不公示）",
                )
            )
            done.append(target)
        text = f"催眠{'、'.join(done)}" if done else "没有新的角色进入催眠状态"
        if again:
            listing = "、".join(again)
            board.tell(
                p.action.actor,
                f"{listing}已经被催眠，你可以修改[催眠]目标（tubian24.txt:136）。",
                "tubian24.txt:136",
            )
            text += f"；{listing}已经被催眠"
            if (p.action.choice or "").strip() not in ("确认", "不修改"):
                board.need(
                    p.action.actor,
                    p.spec.name,
                    f"{p.action.actor}选择的{listing}已经被催眠：告知后可修改目标；记录修改后的"
                    f"[催眠]（{RECORD_PHASE}），或 {CHOICE} 表示不修改",
                    "tubian24.txt:136",
                    choices=("确认", "不修改"),
                )
        return Outcome.DONE, text

    def _sense(self, board: Board, step: Step) -> None:
        """女巫[通灵]<强制>: every character targeted by a 指杀 tonight (tubian24.txt:88)."""
        targets: list[str] = []
        for p in board.scratch.get("wolf_kills", []):
            targets.extend(t for t in p.resolved if t not in targets)
        white: Pass | None = board.scratch.get("white_kill")
        if white is not None:
            targets.extend(t for t in white.resolved if t not in targets)
        for name in board.living():
            cur = board.player(name).current
            if cur is None or "通灵" not in self.roles.get(cur.name, ()):
                continue
            off = self._disabled(board, name, "通灵")
            if off:
                # <强制>: she uses it every night, so she is told (tubian24.txt:99 在使用技能时
                # 被告知失去技能)
                board.emit(step.label, "tubian24.txt:88", f"{name}的<通灵>失效：{off}")
                board.tell(name, f"你不能使用<通灵>：{off}", "tubian24.txt:99")
                continue
            text = (
                f"通灵：今晚被指杀的角色：{'、'.join(targets)}。"
                if targets
                else "通灵：今晚没有角色被指杀。"
            )
            board.tell(name, text, "tubian24.txt:88")
            board.emit(step.label, "tubian24.txt:88", f"通灵反馈给{name}", actor=name, because=text)

    def _priority(self, board: Board, name: str) -> tuple[int, int]:
        order = _csv(board.setting("kill_order", ""))
        return (order.index(name) if name in order else 99, board.seat(name))

    def _choose_lead_kill(self, board: Board, step: Step) -> None:
        """只有主刀狼的指杀为有效指杀 (tubian24.txt:75)."""
        kills: list[Pass] = board.scratch.get("wolf_kills", [])
        if not _csv(board.setting("kill_order", "")) and kills:
            board.emit(
                step.label,
                "tubian24.txt:74",
                "没有种族排序（[tubian24] kill_order），按座次决定主刀狼",
            )
        if board.setting("lead_wolf", LEAD_SUBMITTED) == LEAD_LIVING:
            able = [
                n
                for n in board.living()
                if (cur := board.player(n).current) is not None
                and cur.name == "狼人"
                and not self._disabled(board, n, "杀人")
            ]
            lead = min(able, key=lambda n: self._priority(board, n)) if able else None
        else:
            lead = (
                min((p.action.actor for p in kills), key=lambda n: self._priority(board, n))
                if kills
                else None
            )
        effective = None
        for p in kills:
            result = self.done_result(board, p.action)
            if p.action.actor == lead:
                effective = p
            elif result is not None:
                board.amend(
                    result,
                    Outcome.FIZZLED,
                    f"主刀狼是{lead}，非主刀狼的指杀无效（tubian24.txt:75）",
                )
        if effective is not None:
            board.scratch["lead_kill"] = effective
            board.emit(
                step.label,
                "tubian24.txt:75",
                f"主刀狼{lead}的指杀为有效指杀：{effective.resolved[0]}",
                actor=lead or "",
            )
        elif lead is not None:
            board.emit(step.label, "tubian24.txt:75", f"主刀狼{lead}没有指杀，当晚无有效指杀")

    # ------------------------------------------------------------------ the settlement
    def _settle_night(self, board: Board, day_shots: Sequence[Action]) -> None:
        """白日出局枪-毒-刀-夜间出局枪 (tubian24.txt:244)."""
        board.scratch["settling"] = True
        for a in day_shots:
            self._late_day_action(board, a)
            board.drain()
        poison: Pass | None = board.scratch.get("poison")
        if poison is not None:
            target = poison.resolved[0]
            if not board.alive(target):
                board.emit("结算：毒", "tubian24.txt:244", f"毒空：{target}已出局")
            else:
                board.card_out(
                    target,
                    cause="女巫[毒药]",
                    step="结算：毒",
                    rule="tubian24.txt:90",
                    source=poison.action.actor,
                    kind="毒药",
                )
                board.announce(f"{target}玩家被毒害了。")
                board.drain()
        # 女巫毒药＞吹笛者催眠＞狼人白眼狼杀人 (tubian24.txt:179): the hypnosis is judged after the
        # poison and before the kills, so tonight's kills cannot undo a completed one
        board.scratch["piper_won"] = self._piper_wins(board)
        lead: Pass | None = board.scratch.get("lead_kill")
        if lead is not None:
            self._kill(board, lead, white=False)
        white: Pass | None = board.scratch.get("white_kill")
        if white is not None:
            self._kill(board, white, white=True)
        board.scratch["settling"] = False
        # 夜间出局枪: hunters out tonight (not by 毒药), in the order they went out
        while board.scratch["night_shots"]:
            death = board.scratch["night_shots"].pop(0)
            self._shot(board, death)
            board.drain()

    def _kill(self, board: Board, p: Pass, *, white: bool) -> None:
        step = "结算：刀（白眼狼）" if white else "结算：刀（狼人）"
        rule = "tubian24.txt:142" if white else "tubian24.txt:75"
        target = p.resolved[0]
        line = f"{target}角色被白眼狼杀害了。" if white else f"{target}玩家被杀害了。"
        if not board.alive(target):
            guarded = self._guarded(board, target)
            if target in board.scratch.get("substituted", ()) and guarded:
                # ④ (:108) is the kill that lands: 守卫/救药 made this one void (:89, 95)
                why = f"对{target}的指杀无效：{guarded}（{target}已[替死]出局，不公示被杀害）"
                board.emit(step, rule, why, actor=p.action.actor)
                if (result := self.done_result(board, p.action)) is not None:
                    board.amend(result, Outcome.BLOCKED, why)
            elif target in board.scratch.get("substituted", ()):
                board.announce(line)
                board.emit(
                    step,
                    "tubian24.txt:108",
                    f"{target}已[替死]出局，仍公示被杀害",
                    actor=p.action.actor,
                )
            else:
                board.emit(step, "tubian24.txt:244", f"刀空：{target}已出局", actor=p.action.actor)
            return
        result = self.done_result(board, p.action)
        cur = board.player(target).current
        assert cur is not None
        blocked = None
        longevity = board.charge(cur.uid, "长生")
        if cur.name == "村长" and longevity is not None and longevity.remaining > 0:
            board.use_charge(cur.uid, "长生")
            board.tell(
                target,
                "长生：你第一次成为指杀的目标，不会出局（该技能已用完）。",
                "tubian24.txt:98",
            )
            blocked = "村长[长生]"
        else:
            blocked = self._guarded(board, target)
        if blocked is not None:
            board.emit(step, rule, f"对{target}的指杀无效：{blocked}", actor=p.action.actor)
            if result is not None:
                board.amend(result, Outcome.BLOCKED, f"对{target}的指杀无效：{blocked}")
            return
        if self._substitute(board, target, step):
            return
        board.card_out(
            target,
            cause="白眼狼[杀人]" if white else "狼人[杀人]",
            step=step,
            rule=rule,
            source=p.action.actor,
            kind="杀人",
        )
        board.announce(line)
        board.drain()

    @staticmethod
    def _guarded(board: Board, target: str) -> str | None:
        """What makes tonight's kill on ``target`` void (:89, 95), if anything."""
        if board.statuses_of(target, "守卫"):
            return "守护[守卫]"
        if board.statuses_of(target, "救药"):
            return "女巫[救药]"
        return None

    def _substitute(self, board: Board, target: str, step: str) -> bool:
        """情痴[替死]: the lover goes out instead of the admired (tubian24.txt:103-108)."""
        for s in board.statuses:
            if s.kind != "爱慕" or s.holder != target:
                continue
            lover = s.source
            if not board.alive(lover):
                continue
            cur = board.player(lover).current
            assert cur is not None
            charge = board.charge(cur.uid, "替死")
            if cur.name != "情痴" or charge is None or charge.remaining <= 0:
                continue
            off = self._disabled(board, lover, "替死", charm=False)
            if off:
                board.emit(step, "tubian24.txt:99", f"{lover}的<替死>失效：{off}")
                continue
            board.use_charge(cur.uid, "替死")
            board.scratch.setdefault("substituted", set()).add(lover)
            line = (
                f"{target}玩家本该出局，但{lover}玩家深爱着{target}玩家，决定牺牲自己，"
                "为深爱的人乞求一次重生的机会！"
            )
            board.announce(line)
            board.emit(step, "tubian24.txt:103", line, actor=lover, resolved=(lover,))
            death = board.card_out(
                lover,
                cause=f"情痴[替死]（代替{target}）",
                step=step,
                rule="tubian24.txt:103",
                source=lover,
                kind="替死",
            )
            if death is not None and board.night is None:
                # 白天出局的角色公示身份 (tubian24.txt:35)
                board.announce(f"{lover}出局，身份：{death.card}。")
            board.drain()
            return True
        return False

    # ------------------------------------------------------------------ triggers
    def after_card_out(self, board: Board, death: Death) -> None:
        name = death.player
        triggers: list[Trigger] = []
        role = death.card
        if not death.red:
            if role == "村长" and death.kind in ("投票出局", "毒药", "最后一枪"):
                triggers.append(Trigger(f"无首:{name}", lambda b: self._headless(b, death)))
            if role == "梦中人" and death.kind == "投票出局":
                triggers.append(Trigger(f"魅惑:{name}", lambda b: self._charm(b, death)))
            if role == "猎人" and death.kind != "毒药":
                if board.night is not None:
                    board.scratch.setdefault("night_shots", []).append(death)
                else:
                    triggers.append(Trigger(f"最后一枪:{name}", lambda b: self._shot(b, death)))
        triggers.append(Trigger(f"变身:{name}", lambda b: self._transform(b, name)))
        if board.sheriff == name:
            board.defer(Trigger(f"警长:{name}", lambda b: self._handover(b, death)))
        board.push_front(*triggers)

    def _headless(self, board: Board, death: Death) -> None:
        p = board.player(death.player)
        card = p.cards[0]
        charge = board.charge(card.uid, "无首")
        if charge is None or charge.remaining <= 0:
            board.emit(death.step, "tubian24.txt:99", f"{death.player}的<无首>已经发动过或未获得")
            return
        board.use_charge(card.uid, "无首")
        board.add_status(
            Status(
                "无首",
                "*",
                death.player,
                board.index,
                None,
                negative=True,
                survives_death=True,
                note="村民阵营的其余角色失去全部技能",
            )
        )
        board.emit(
            death.step,
            "tubian24.txt:99",
            f"村长{death.player}因{death.cause}出局：村民阵营的其余角色失去全部技能",
            actor=death.player,
        )
        self._fools_out(board, death.step)

    def _fools_out(self, board: Board, step: str) -> None:
        """A 白痴 kept in the game by [装傻] loses it with every other skill (tubian24.txt:99)
        and is out: 因失去[装傻]而出局的白痴, announced as the vote ends (tubian24.txt:37)."""
        for status in [s for s in board.statuses if s.kind == "装傻"]:
            idiot = status.holder
            if not board.alive(idiot) or _faction_of(board, idiot) != VILLAGE:
                continue
            board.remove_status(status)
            board.emit(step, "tubian24.txt:37", f"{idiot}失去[装傻]而出局", actor=idiot)
            board.card_out(
                idiot, cause="失去[装傻]", step=step, rule="tubian24.txt:99", kind="失去装傻"
            )
            board.announce(f"{idiot}因失去[装傻]而出局。")

    def _charm(self, board: Board, death: Death) -> None:
        name = death.player
        card = board.player(name).cards[0]
        charge = board.charge(card.uid, "魅惑")
        if charge is None or charge.remaining <= 0:
            return
        off = self._disabled(board, name, "魅惑", charm=False)
        if off:
            board.emit(death.step, "tubian24.txt:99", f"{name}的<魅惑>失效：{off}")
            return
        board.use_charge(card.uid, "魅惑")
        sex = board.setting(f"sex.{name}", "")
        if not sex:
            board.need(
                "导演",
                "魅惑",
                f"梦中人{name}的性别未知：请在游戏文件中写明 sex（tubian24.txt:65, 124）",
                "tubian24.txt:124",
            )
            return
        night = board.index + 1
        other = _opposite(sex)
        board.add_status(
            Status(
                "魅惑",
                "*",
                name,
                night,
                night,
                negative=True,
                note=sex,
            )
        )
        line = f"{other}性玩家的梦中情人{name}玩家惨死，{other}性玩家悲痛欲绝，今晚将无法行动。"
        board.announce(line)
        board.emit(death.step, "tubian24.txt:124", line, actor=name)

    def _shot(
        self, board: Board, death: Death, action: Action | None = None, *, late: bool = False
    ) -> None:
        shooter = death.player
        step = "白日出局枪" if late else "最后一枪"
        rule = "tubian24.txt:115"
        off = self._disabled(board, shooter, "最后一枪", charm=not late)
        if action is None:
            action = board.take_prepared(shooter, "最后一枪")
        if off:
            # told whether or not a shot was sent: his going out is when the skill would be
            # used (tubian24.txt:99 在使用技能时被告知失去技能)
            board.emit(step, rule, f"{shooter}的<最后一枪>失效：{off}")
            if action is not None:
                board.record(action, step, Outcome.INVALID, f"你已失去技能：{off}", rule)
            board.tell(shooter, f"你已失去技能：{off}", rule)
            return
        if action is None:
            if board.night is None:
                board.add_status(
                    Status(
                        "待开枪",
                        shooter,
                        shooter,
                        board.index,
                        board.index + 1,
                        survives_death=True,
                    )
                )
                limit = "出局后三十分钟内"
                where = f"（{RECORD_PHASE} 或 {RECORD_NIGHT}）"
                night: int | None = board.phase.number
            else:
                limit = "死后第二天讨论日开门三十分钟内"
                where = f"（{RECORD_PHASE}）"
                night = None
            board.need(
                shooter,
                "最后一枪",
                f"猎人{shooter}出局，可以对一名其他角色开枪（时限：{limit}，tubian24.txt:250）："
                f"记录目标后重新结算{where}，或 {CHOICE}",
                rule,
                choices=("放弃",),
                night=night,
            )
            return
        if action.declined:
            board.record(action, step, Outcome.DONE, f"{shooter}放弃发动<最后一枪>", rule)
            return
        target = action.targets[0] if len(action.targets) == 1 else None
        problem = None
        if target is None:
            problem = "<最后一枪>须选择一名其他角色"
        elif not board.has(target):
            problem = f"目标「{target}」不在名单中"
        elif target == shooter:
            problem = "<最后一枪>须选择一名其他角色（tubian24.txt:115）"
        elif not board.alive(target):
            problem = None  # 带空 (tubian24.txt:244)
        if problem:
            board.record(action, step, Outcome.INVALID, problem, rule)
            board.need(shooter, "最后一枪", f"{shooter}的<最后一枪>目标无效（{problem}）", rule)
            return
        assert target is not None
        if not board.alive(target):
            board.record(action, step, Outcome.FIZZLED, f"带空：{target}已出局", rule, (target,))
            board.emit(step, "tubian24.txt:244", f"带空：{target}已出局", actor=shooter)
            return
        board.record(action, step, Outcome.DONE, f"{target}立刻出局", rule, (target,))
        death2 = board.card_out(
            target,
            cause=f"猎人{shooter}的[最后一枪]",
            step=step,
            rule=rule,
            source=shooter,
            kind="最后一枪",
        )
        if death2 is not None:
            if board.night is None:
                board.announce(f"{target}因猎人[最后一枪]出局，身份：{death2.card}。")
            else:
                board.announce(f"{target}玩家出局了。")

    def _transform(self, board: Board, master: str) -> None:
        """仆人[变身] when its master goes out (tubian24.txt:148-159)."""
        for s in list(board.statuses):
            if s.kind != "顺从" or s.source != master:
                continue
            servant = s.holder
            if not board.alive(servant):
                continue
            p = board.player(servant)
            card = p.cards[0]
            charge = board.charge(card.uid, "变身")
            if card.name != "仆人" or charge is None or charge.remaining <= 0:
                continue
            mp = board.player(master)
            mcard = mp.cards[0]
            board.use_charge(card.uid, "变身")
            for key in [k for k in board.charges if k[0] == card.uid]:
                del board.charges[key]
            copied = []
            for (uid, skill, source), c in list(board.charges.items()):
                if uid == mcard.uid and c.remaining > 0 and skill in self.roles.get(mcard.name, ()):
                    board.set_charge(Charge(card.uid, skill, c.remaining, source, c.since))
                    copied.append(skill)
            board.players[servant] = p.with_card(replace(card, name=mcard.name))
            kept = f"，获得未使用的<限定>技能：{'、'.join(copied)}" if copied else ""
            board.tell(
                servant,
                f"你的主人{master}出局，你[变身]为{mcard.name}{kept}（tubian24.txt:148）。",
                "tubian24.txt:148",
            )
            board.emit(
                "仆人[变身]",
                "tubian24.txt:148",
                f"仆人{servant}变身为{mcard.name}",
                actor=servant,
            )
            if mcard.name == "狼人":
                members = [n for n in board.order if board.player(n).wolf_group]
                board.join_wolf_group(servant)
                board.tell(servant, "你立刻加入狼群（tubian24.txt:156）。", "tubian24.txt:156")
                for m in members:
                    board.tell(m, f"{servant}（仆人变身为狼人）加入狼群。", "tubian24.txt:156")
            if board.table_status("无首") and _faction_of(board, servant) == VILLAGE:
                board.tell(
                    servant,
                    "村长[无首]已触发：变身后也不能发动任何技能（tubian24.txt:152）。",
                    "tubian24.txt:152",
                )

    def _handover(self, board: Board, death: Death) -> None:
        old = death.player
        if board.sheriff != old or (board.alive(old) and not board.statuses_of(old, "装傻")):
            return
        step = "警长[殉职]"
        if death.red:
            board.sheriff = None
            board.announce(f"警长{old}被红牌罚下，警长由导演组收回。")
            board.emit(step, "tubian24.txt:174", "红牌罚下不能[殉职]，警长由导演组收回", actor=old)
            return
        action = board.take_prepared(old, "殉职")
        candidates = [n for n in board.living() if not board.statuses_of(n, "装傻")]
        if action is None:
            board.sheriff = None
            board.need(
                old,
                "殉职",
                f"警长{old}出局，可以选择一名未出局的角色继任警长或撕警徽（时限：出局三十分钟内，"
                f"tubian24.txt:247）：{RECORD}（或 {CHOICE}）",
                "tubian24.txt:174",
                target="继任者",
                choices=("撕警徽",),
            )
            return
        if (action.choice or "").strip() in ("撕警徽", "放弃") and not action.targets:
            board.sheriff = None
            board.record(action, step, Outcome.DONE, "撕警徽", "tubian24.txt:174")
            board.announce(f"警长{old}[殉职]，撕掉警徽。")
            return
        target = action.targets[0] if len(action.targets) == 1 else None
        if target is None or target not in candidates:
            problem = (
                "须选择一名未出局的角色（或 choice=撕警徽）"
                if target is None
                else f"{target}不能继任警长（已出局或已发动[装傻]，tubian24.txt:112, 174）"
            )
            board.sheriff = None
            board.record(action, step, Outcome.INVALID, problem, "tubian24.txt:174")
            board.need(old, "殉职", f"警长{old}的[殉职]目标无效：{problem}", "tubian24.txt:174")
            return
        board.sheriff = target
        board.record(
            action, step, Outcome.DONE, f"警长移交给{target}", "tubian24.txt:174", (target,)
        )
        board.announce(f"警长{old}[殉职]，{target}继任警长。")
        board.tell(target, "你继任警长（tubian24.txt:174）。", "tubian24.txt:174")

    def _will(self, board: Board, monk: str, action: Action | None) -> None:
        """高僧[遗志] after [献身] (tubian24.txt:119)."""
        rule = "tubian24.txt:119"
        step = "高僧[遗志]"
        if action is None:
            action = board.take_prepared(monk, "遗志")
        if action is None:
            board.add_status(
                Status("待遗志", monk, monk, board.index, board.index + 1, survives_death=True)
            )
            board.announce(f"由于平票，{monk}玩家高僧[献身]出局。")
            board.need(
                monk,
                "遗志",
                f"高僧{monk}因[献身]出局，可以指定一名存活角色担任警长（时限：死后三十分钟内，"
                f"tubian24.txt:251）：{RECORD}，或 {CHOICE}",
                rule,
                target="目标",
                choices=("放弃",),
            )
            return
        if action.declined:
            board.record(action, step, Outcome.DONE, f"{monk}放弃发动<遗志>", rule)
            return
        target = action.targets[0] if len(action.targets) == 1 else None
        if target is None or not board.alive(target) or board.statuses_of(target, "装傻"):
            problem = "须指定一名存活角色（发动[装傻]的白痴不能担任警长）"
            board.record(action, step, Outcome.INVALID, problem, rule)
            board.need(monk, "遗志", f"{monk}的<遗志>目标无效：{problem}", rule)
            return
        board.sheriff = target
        line = f"由于平票，{monk}玩家高僧决定牺牲自己，度化世人，决定{target}玩家成为警长。"
        board.record(action, step, Outcome.DONE, line, rule, (target,))
        board.announce(line)
        board.tell(target, "你成为警长（高僧[遗志]，tubian24.txt:119）。", rule)

    def _late_day_action(self, board: Board, a: Action) -> None:
        """A day-time decision settled at night: 白日出局枪 first (tubian24.txt:244)."""
        if a.skill == "最后一枪":
            for s in board.statuses_of(a.actor, "待开枪"):
                board.remove_status(s)
            death = Death(a.actor, "猎人", "", 0, "白天出局", "白日出局枪", "tubian24.txt:244")
            self._shot(board, death, a, late=True)
        elif a.skill == "遗志":
            for s in board.statuses_of(a.actor, "待遗志"):
                board.remove_status(s)
            self._will(board, a.actor, a)
        else:
            board.record(a, "校验", Outcome.INVALID, f"<{a.skill}>须在出局的阶段记录", "")

    # ------------------------------------------------------------------ director's actions
    def director_order(self, board: Board, a: Action) -> tuple[int, str]:
        # 狼人阵营 surrenders before 白眼狼 (tubian24.txt:54)
        return (0 if board.has(a.actor) and _faction_of(board, a.actor) == WOLF else 1, a.actor)

    def _director_actions(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        rest, reds = self._take_director_actions(board, actions)
        for a in reds:  # before anything else (tubian24.txt:48: 白天红牌罚下在被投票出局之前)
            self._red_card(board, a)
        return rest

    def _red_card(self, board: Board, a: Action) -> None:
        step = "红牌罚下"
        rule = "tubian24.txt:263"
        if not board.has(a.actor):
            board.record(a, step, Outcome.INVALID, f"名单中没有玩家「{a.actor}」", rule)
            return
        if not board.alive(a.actor):
            board.record(a, step, Outcome.FIZZLED, f"{a.actor}已出局（已出局角色仍可被判罚）", rule)
            return
        p = board.player(a.actor)
        board.players[a.actor] = replace(p, red_carded=True)
        board.record(a, step, Outcome.DONE, f"{a.actor}被红牌罚下出局，不能使用任何技能", rule)
        death = self._red_out(board, a.actor, step, rule)
        if death is not None:
            shown = f"，身份：{death.card}" if board.night is None else ""
            board.announce(f"{a.actor}被红牌罚下{shown}。")
        board.drain()
        loser = (a.choice or "").strip()
        own = _faction_of(board, a.actor)
        if loser in self.factions and loser != own:
            # 导演有权…直接使该玩家所在的阵营判负 (tubian24.txt:264): his own faction only
            board.need(
                "导演",
                "判负",
                f"红牌罚下的{a.actor}属于{own}，不能因此判{loser}负（tubian24.txt:264）："
                "请改为该玩家所在的阵营，或另记判负",
                "tubian24.txt:264",
            )
        elif loser in self.factions:
            # 判负不公示 (tubian24.txt:263 says nothing of 公示, unlike 投降, :53)
            self._lose(board, loser, f"{a.actor}被红牌罚下，导演判该阵营负", rule, public=False)

    def _surrender(self, board: Board, a: Action) -> None:
        step = "投降"
        faction = _faction_of(board, a.actor) if board.has(a.actor) else None
        lost = self._lost(board)
        if faction == WOLF and board.alive(a.actor):
            rule = "tubian24.txt:53"
        elif faction == WHITE and board.alive(a.actor):
            rule = "tubian24.txt:54"
            if not any(
                s.holder == WOLF and "投降" in s.source for s in board.statuses_of(WOLF, "判负")
            ):
                board.record(a, step, Outcome.INVALID, "狼人玩家投降后，白眼狼才可以选择投降", rule)
                return
        else:
            board.record(
                a,
                step,
                Outcome.INVALID,
                f"{a.actor}不能发起投降：只有存活的狼人阵营角色（狼人投降后还有白眼狼）可以投降"
                "（tubian24.txt:51-55）",
                "tubian24.txt:55",
            )
            return
        if faction in lost:
            board.record(a, step, Outcome.INVALID, f"{faction}已经判负", rule)
            return
        board.record(
            a, step, Outcome.DONE, f"{faction}投降（由{a.actor}发起，询问的角色均同意）", rule
        )
        self._lose(board, faction, f"投降（由{a.actor}发起）", rule, public=True)
        gone = []
        for name in board.order:
            if board.alive(name) and _faction_of(board, name) == faction:
                death = board.card_out(
                    name, cause=f"{faction}投降", step=step, rule=rule, source=a.actor, kind="投降"
                )
                if death is not None:
                    gone.append(f"{name}（{death.card}）")
        if gone and board.night is None:
            # 所有狼人阵营玩家出局 (tubian24.txt:53), and 白天出局的角色公示身份 (tubian24.txt:35)
            board.announce(f"因{faction}投降出局：{'、'.join(gone)}。")
        board.drain()

    def _forfeit(self, board: Board, a: Action) -> None:
        loser = (a.choice or "").strip()
        if loser not in self.factions:
            board.record(
                a,
                "判负",
                Outcome.INVALID,
                f"判负须写明阵营（choice = {'、'.join(self.factions)} 之一）",
                "tubian24.txt:263",
            )
            return
        board.record(a, "判负", Outcome.DONE, f"{loser}判负", "tubian24.txt:263")
        self._lose(board, loser, "导演判负（红牌）", "tubian24.txt:263", public=False)

    # ------------------------------------------------------------------ the day
    def run_day(self, board: Board, day: DayInput) -> None:
        board.voters_day = day.day
        board.voters = tuple(v for v in day.voters if board.has(v))
        board.vote_cards = {
            n: cur.uid for n in board.living() if (cur := board.player(n).current) is not None
        }
        won_before = board.winner is not None
        rest = self._director_actions(board, day.actions)
        for a in rest:
            skill = self.canonical_skill(a.skill)
            spec = self.specs.get(skill)
            if spec is None:
                board.record(a, "校验", Outcome.INVALID, self.unknown_skill_reason(skill), "")
            elif spec.trigger:
                if self._late(board, replace(a, skill=skill)):
                    self._late_day_action(board, replace(a, skill=skill))
                else:
                    board.prepared.append(replace(a, skill=skill))
            else:
                board.record(
                    a, "校验", Outcome.INVALID, f"<{skill}>不是白天由玩家提交的技能", spec.rule
                )
        board.drain()
        if not won_before and len(rest) < len(day.actions) and self._one_faction_left(board):
            # a 投降, red card or 判负 during the day: 场上仅有一个阵营尚未被判负，游戏立即结束
            # (tubian24.txt:183), before the vote; any other win waits for the vote (:181)
            self.check_win(board)
        if board.winner is not None:
            if not won_before:
                # a 投降 (or a red card's 判负) during the day leaves one faction: 场上仅有一个
                # 阵营尚未被判负，游戏立即结束 (tubian24.txt:53, 183) — the vote is not counted
                self.log_ended_before_the_vote(
                    board,
                    day.actions,
                    DIRECTOR_ACTIONS,
                    "tubian24.txt:183",
                    f"{board.win_reason}，游戏立即结束，当天的投票不再结算",
                )
            return
        step = "放逐投票"
        if day.out is None:
            board.emit(
                step, day.rule or "tubian24.txt:39", "今日无人被投票出局", because=day.decided_by
            )
            if day.rule == self.ref("tie_no_monk"):
                # said without naming a living 高僧 or why he could not (a secret card)
                board.announce("平票，无人[献身]，平安日入夜。")
                board.emit(step, *self._no_devotion(board))
        elif board.has(day.out) and board.start.player(day.out).alive and not board.alive(day.out):
            board.emit(
                step,
                "tubian24.txt:48",
                f"{day.out}在投票出局之前已出局（红牌罚下或投降），不再结算投票出局",
            )
        elif not board.alive(day.out):
            raise EngineError(f"被投票出局的{day.out}已出局（或不在名单中），请检查计票")
        elif day.rule == self.ref("tie") or "献身" in day.decided_by:
            self._devotion(board, day.out)
        else:
            self._exile(board, day.out, day.decided_by)
        board.drain()

    def _no_devotion(self, board: Board) -> tuple[str, str]:
        """Why nobody took a tie (the rule, the director's reason): the 高僧 is out (:121), or
        alive without [献身] — lost to [无首] (:99) or, as a 仆人 who became him, never his
        (⑤, :154)."""
        monks = [n for n in board.living() if (c := board.player(n).current) and c.name == "高僧"]
        if not monks:
            return "tubian24.txt:121", "平票，高僧已出局：平安日入夜"
        off = self._disabled(board, monks[0], "献身")
        if off:
            return "tubian24.txt:99", f"平票，{monks[0]}（高僧）的[献身]失效：{off}；平安日入夜"
        return "tubian24.txt:154", f"平票，{monks[0]}（高僧）没有可发动的[献身]；平安日入夜"

    def _devotion(self, board: Board, monk: str) -> None:
        step = "高僧[献身]"
        cur = board.player(monk).current
        assert cur is not None
        charge = board.charge(cur.uid, "献身")
        if cur.name != "高僧" or charge is None or charge.remaining <= 0:
            raise EngineError(
                f"计票判定{monk}[献身]出局，但{monk}没有可发动的[献身]（tubian24.txt:118, 121）"
            )
        board.use_charge(cur.uid, "献身")
        board.card_out(
            monk, cause="高僧[献身]（平票）", step=step, rule="tubian24.txt:118", kind="献身"
        )
        board.drain()
        self._will(board, monk, None)

    def _exile(self, board: Board, out: str, because: str) -> None:
        step = "放逐投票"
        board.emit(step, "tubian24.txt:39", f"{out}获得投票最多", resolved=(out,), because=because)
        if self._substitute(board, out, step):
            return
        cur = board.player(out).current
        assert cur is not None
        charge = board.charge(cur.uid, "装傻")
        if cur.name == "白痴" and charge is not None and charge.remaining > 0:
            off = self._disabled(board, out, "装傻")
            if not off:
                board.use_charge(cur.uid, "装傻")
                board.add_status(
                    Status(
                        "装傻",
                        out,
                        out,
                        board.index,
                        None,
                        survives_death=True,
                        note="不能成为投票对象，不能参与投票，不能继任警长",
                    )
                )
                board.announce(
                    f"{out}被投票出局，身份：白痴，发动[装傻]，仍可在讨论帖发言；"
                    "不能成为投票对象，不能参与投票，不能继任警长。"
                )
                board.emit("白痴[装傻]", "tubian24.txt:112", f"{out}发动[装傻]", actor=out)
                # out by the vote, though his card stays (:47 被投票出局的【白痴】): in the list
                # of the day's outs, where his vote-out falls among the deaths
                board.scratch.setdefault("fooled", []).append((len(board.deaths), out))
                board.push_front(Trigger(f"变身:{out}", lambda b: self._transform(b, out)))
                if board.sheriff == out:
                    flipped = Death(out, "白痴", cur.uid, 1, "投票出局", step, "tubian24.txt:112")
                    board.defer(Trigger(f"警长:{out}", lambda b: self._handover(b, flipped)))
                return
            board.emit(step, "tubian24.txt:99", f"{out}的<装傻>失效：{off}")
        death = board.card_out(
            out,
            cause="投票出局",
            step=step,
            rule="tubian24.txt:39",
            source="放逐投票",
            kind="投票出局",
        )
        if death is not None:
            board.announce(f"{out}被投票出局，身份：{death.card}。")

    # ------------------------------------------------------------------ end of a phase
    def end_of_phase(self, board: Board) -> None:
        when = "昨晚" if board.night is not None else "今日"
        outs = [d.player for d in board.deaths]
        for at, idiot in reversed(board.scratch.get("fooled", [])):
            outs.insert(at, idiot)  # 白痴[装傻] (:112): voted out, his card not
        if not outs:
            head = f"{when}无人出局" + ("（平安夜）" if board.night is not None else "")
        else:
            head = f"{when}出局（按出局顺序）：{'、'.join(outs)}"
        board.public[:0] = [head]

    # ------------------------------------------------------------------ win check
    @staticmethod
    def _lost(board: Board) -> set[str]:
        return {s.holder for s in board.statuses if s.kind == "判负"}

    def _lose(self, board: Board, faction: str, why: str, rule: str, *, public: bool) -> None:
        if faction in self._lost(board):
            return
        board.add_status(
            Status("判负", faction, why, board.index, None, negative=True, survives_death=True)
        )
        if public:
            board.announce(f"{faction}判负（{why}）。")
        board.emit("胜负判定", rule, f"{faction}判负", because=why)

    def _members(self, board: Board) -> dict[str, list[PlayerState]]:
        out: dict[str, list[PlayerState]] = {f: [] for f in self.factions}
        for name in board.order:
            f = _faction_of(board, name)
            if f in out:
                out[f].append(board.player(name))
        return out

    def check_win(self, board: Board) -> None:
        step = "胜负判定"
        if board.winner is not None:
            return
        # 投票后或者夜间结算完毕后 (tubian24.txt:181): the settlement ends with the hunter's
        # shot (白日出局枪 … 夜间出局枪, tubian24.txt:244), which may still change who wins
        shooters = [p.who for p in board.pending if p.skill == "最后一枪"]
        # a day's hunter still to decide may shoot first thing tonight (白日出局枪)
        late = [
            s.holder
            for s in board.statuses
            if s.kind == "待开枪" and s.active_at(board.index) and s.holder not in shooters
        ]
        shooters += late
        piper_won = bool(board.scratch.get("piper_won"))
        if shooters and not piper_won:  # a shot after the hypnosis changes nothing
            for hunter in late if board.night is not None else ():
                # the win waits for him tonight: a decision of this night, or the night would
                # look complete and the game run on past its end (tubian24.txt:181, 250)
                board.need(
                    hunter,
                    "最后一枪",
                    f"猎人{hunter}白天出局后尚未决定<最后一枪>，胜负待定：记录开枪目标"
                    f"（作为白日出局枪在今晚最先结算）或放弃后重新结算（{RECORD_PHASE}），"
                    f"或 {CHOICE}",
                    "tubian24.txt:250",
                    choices=("放弃",),
                )
            board.emit(
                step,
                "tubian24.txt:181",
                f"等待{'、'.join(shooters)}的<最后一枪>（记录目标或放弃）后再判定胜负",
            )
            return
        st = board.statuses
        members = self._members(board)
        piper_wins = piper_won or self._piper_wins(board)

        def alive_in(f: str) -> bool:
            return any(not _out_for_win(st, p) for p in members[f])

        for f, rule in (
            (WOLF, "tubian24.txt:194"),
            (VILLAGE, "tubian24.txt:200"),
            (WHITE, "tubian24.txt:209"),
            (PIPER, "tubian24.txt:216"),
        ):
            if not alive_in(f) and not (f == PIPER and piper_wins):
                self._lose(board, f, f"{f}的玩家全部出局", rule, public=False)
        lost = self._lost(board)
        village = members[VILLAGE]
        gods = [p for p in village if p.cards[0].name in self.gods]
        folk = [p for p in village if p.cards[0].name == "村民"]
        gods_out = bool(gods) and all(_out_for_win(st, p) for p in gods)
        folk_out = bool(folk) and all(_out_for_win(st, p) for p in folk)
        edge = gods_out or folk_out
        edge_text = (
            "村民阵营的【验人系】【俗】【特】均出局" if gods_out else "村民阵营的【民】均出局"
        )
        wins: list[tuple[str, str, str]] = []
        if piper_wins:
            how = "，催眠先于当晚的刀结算" if not alive_in(PIPER) else ""
            wins.append(
                (PIPER, f"除吹笛者阵营外所有存活玩家均进入催眠状态{how}", "tubian24.txt:212-214")
            )
        if WOLF not in lost and alive_in(WOLF) and edge and not piper_wins:
            wins.append((WOLF, f"有狼人阵营的玩家存活，{edge_text}", "tubian24.txt:189-192"))
        if WHITE not in lost and WOLF in lost and alive_in(WHITE) and edge and not piper_wins:
            wins.append(
                (
                    WHITE,
                    f"狼人阵营已判负，有白眼狼阵营的玩家存活，{edge_text}",
                    "tubian24.txt:203-207",
                )
            )
        if VILLAGE not in lost and {WOLF, WHITE, PIPER} <= lost:
            wins.append(
                (VILLAGE, "狼人阵营、白眼狼阵营、吹笛者阵营均已判负", "tubian24.txt:197-198")
            )
        if not wins:
            remaining = [f for f in self.factions if f not in lost]
            if len(remaining) == 1:
                wins.append((remaining[0], "场上仅有一个阵营尚未被判负", "tubian24.txt:183"))
            elif not remaining:
                board.need(
                    "导演",
                    "胜负判定",
                    "所有阵营同时判负，引擎无法宣布胜者，请导演裁定（tubian24.txt:185）",
                    "tubian24.txt:185",
                )
                return
        if not wins:
            board.emit(step, "tubian24.txt:181", "没有阵营达成胜利条件，游戏继续")
            return
        faction, reason, rule = wins[0]
        board.set_winner(faction, reason, rule)
        board.announce(f"游戏结束：{faction}胜利（{reason}）")
        board.emit(step, rule, f"{faction}胜利", because=reason)

    def _one_faction_left(self, board: Board) -> bool:
        """Only one faction is neither judged lost nor all out (tubian24.txt:183)."""
        lost = self._lost(board)
        members = self._members(board)
        standing = [
            f
            for f in self.factions
            if f not in lost and any(not _out_for_win(board.statuses, p) for p in members[f])
        ]
        return len(standing) == 1

    def _piper_wins(self, board: Board) -> bool:
        """吹笛者阵营胜 (tubian24.txt:212-214): a living piper, every other player in the game
        (not a 白痴 after [装傻]) hypnotised."""
        st = board.statuses
        if PIPER in self._lost(board):
            return False
        members = self._members(board)
        if not any(not _out_for_win(st, p) for p in members[PIPER]):
            return False
        hypnotised = {s.holder for s in st if s.kind == "催眠"}
        return all(
            n in hypnotised
            for n in board.order
            if _faction_of(board, n) != PIPER and not _out_for_win(st, board.player(n))
        )

    # ------------------------------------------------------------------ votes
    def timed_outs(
        self, state: GameState, actions: Sequence[Action]
    ) -> tuple[tuple[str, int | None, datetime], ...]:
        """Red cards, and a day's 投降 from its time: 所有狼人阵营玩家出局 (tubian24.txt:53-54,
        159), and 出局后不能继续参与…投票 (tubian24.txt:44) — their votes, and the votes on them,
        no longer count. A 白眼狼 surrender counts once the wolves have surrendered (that day or
        before)."""
        outs = list(super().timed_outs(state, actions))
        alive = {p.name for p in state.players if p.alive}
        wolves_gave_up = any(
            s.kind == "判负" and s.holder == WOLF and "投降" in s.source for s in state.statuses
        )
        timed: list[tuple[datetime, str]] = []
        for a in actions:
            if self.canonical_skill(a.skill) != "投降" or not a.at or a.actor not in alive:
                continue
            try:
                timed.append((datetime.fromisoformat(a.at), a.actor))
            except ValueError:
                continue
        for at, actor in sorted(timed):
            faction = _faction_of(state, actor)
            if faction == WOLF:
                wolves_gave_up = True
            elif faction != WHITE or not wolves_gave_up:
                continue  # the engine says why the surrender is invalid
            outs += [
                (p.name, None, at)
                for p in state.players
                if p.name in alive and _faction_of(state, p.name) == faction
            ]
        return tuple(outs)

    def actual_faction(self, state: GameState, player: str) -> str | None:
        return _faction_of(state, player)

    @staticmethod
    def _fooled(state: GameState) -> set[str]:
        """Players whose 白痴[装傻] is in force (tubian24.txt:112)."""
        return {s.holder for s in state.statuses if s.kind == "装傻"}

    def out_by_vote_in_game(self, state: GameState) -> tuple[str, ...]:
        """每个游戏日白天开始时，都会公示前一天因投票出局角色名单 (tubian24.txt:36): a 白痴 after
        [装傻] was voted out (被投票出局的【白痴】, tubian24.txt:47) though his card stays."""
        fooled = self._fooled(state)
        return tuple(n for n in (p.name for p in state.players) if n in fooled)

    def vote_roster(
        self, state: GameState, *, opens: datetime, red_at: Mapping[str, datetime]
    ) -> tuple[Any, ...]:
        """发动此技能后，白痴不能成为投票对象，不能参与投票 (tubian24.txt:112): a vote for him is
        an invalid target, never counted (so never in a tie), and his own vote is invalid."""
        fooled = self._fooled(state)
        return tuple(
            replace(ps, can_vote=False, can_be_voted=False) if ps.name in fooled else ps
            for ps in super().vote_roster(state, opens=opens, red_at=red_at)
        )

    def vote_modifiers(self, state: GameState, day: int) -> tuple[Any, ...]:
        """高僧[献身] takes a tie while unused and not lost to [无首]; a 白痴 after [装傻]
        neither votes nor can be voted out (tubian24.txt:112, 118) — :meth:`vote_roster` bars
        the votes for him; the modifiers say why his own vote is invalid and keep him in the
        game should a count reach him anyway."""
        headless = any(s.kind == "无首" and s.holder == "*" for s in state.statuses)
        fooled = self._fooled(state)
        mods: list[Any] = []
        for p in state.players:
            if not p.alive:
                continue
            card = p.cards[0]
            if card.name == "高僧" and not headless:
                charge = state.charge(card.uid, "献身")
                if charge is not None and charge.remaining > 0:
                    mods.append(VoteModifier(p.name, ModifierKind.TIE_TAKER, source="高僧[献身]"))
            if p.name in fooled:
                mods.append(
                    VoteModifier(
                        p.name, ModifierKind.NO_VOTE, source="白痴[装傻]", rule="tubian24.txt:112"
                    )
                )
                mods.append(VoteModifier(p.name, ModifierKind.BLOCK_OUT, source="白痴[装傻]"))
        return tuple(mods)
