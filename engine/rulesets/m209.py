"""[M209]巴啦啦小魔仙 (rules/m209.txt, new RD rules): the vote rules and the night/day engine.

Votes:

- The sheriff has no extra weight: only 竞岗 and 殉职 (m209.txt:224-227).
- The top (m209.txt:169): a skill's top first; else the unique maximum; else (a tie) the
  sheriff's target; else none. A top holding [霸道] or [不死] is not out: 平安日 (m209.txt:166);
  the tally names the status, never the role (太阳[日] is "[不死]"), and the engine announces
  the top, the status and "今日平安日" — whether the tally saw the status (:data:`PEACE_DECIDED`)
  or it was gained at noon. The day's top is always announced (also "没有最高票", and a top
  out at noon), so a draft built on the engine's lines never loses it (m209.txt:167).
- 替罪羊[冤死] (m209.txt:343): on a tie (not on the election day) the vote-out is void.
- Counts are hidden; only the top is announced (m209.txt:167).
- A voter whose target went out during the day may change once even in the forbidden time
  (m209.txt:170). A [狂躁] player votes before the opening and may not change; a proxy entered
  before the opening counts as made at the opening (m209.txt:97); the ``BEFORE_OPEN`` modifier
  (engine.votes) makes a later ballot not count and no ballot an abstention.
- Modifiers: [迷魂] the voter counts 0 (m209.txt:96); [独裁] +N weight (m209.txt:109).

Engine (data in :mod:`engine.rulesets.m209_roles`): one card per player; the drawn line-up is
checked at setup, also against the game file's ``[m209] lineup`` (m209.txt:22-33).

- Phases: ``night:0`` is the opening (开局: 隐狼[伪装], 守卫[模式选择]); ``day:1`` is the
  election day (竞岗); ``night:N`` runs 早夜2 → 午夜 → 深夜1 (互不影响) → 深夜2 → 凌晨1 → 凌晨2
  (the death list in the text's order) → 晨曦1 (疾病, then shots, 即时插入结算), m209.txt:528-584.
  月亮's extra night is a second round of the same night (actions with ``choice = "第二轮"``);
  statuses that end with the night are dropped before it, and every skill cools once, so
  [排斥] resets (m209.txt:60, 367-371). 晨曦 belongs to the day (m209.txt:46): at 晨曦1 the
  statuses granted for the night (当晚/持续至夜晚结束) no longer defend, 太阳[日]'s [不死] does.
- Targets: 选择目标 → 噬时狼妃[时间逆流] → 魔术师[交换] → [隐身] → 结算目标 (m209.txt:68, 107).
  Same skill in one step: the true identity's first, then gifts, later-listed roles first
  (m209.txt:527, hook ``action_order``).
- Attacks (指杀/穿透/特攻/暴击/投票出局) meet their defences (守护/坚韧/特防/暴抗/霸道), the one
  ending soonest first; counted ones are consumed (m209.txt:111, 185). Only when none offsets
  it do the step-2 survival effects act (m209.txt:186): [不死] (for 月亮[夜] and 太阳[日], [翻牌]
  skills, the card flips and the skill is spent, m209.txt:63) and 白痴 (m209.txt:357); chain
  deaths (魅惑, then 摄梦) are inserted at once (m209.txt:187, 583-584). [遗忘] drops 常驻
  defences; [秩序] / [漏洞] block negative / non-negative statuses; a second [流血] is a
  [暴击] (m209.txt:94-110).
- Day: 正午 skills (断钢斩, 决斗, 神风突击, 烈阳护卫) in launch order, then the vote (unless
  [封锁投票]), 预言家[天意], 黄昏1 (替罪羊[冤死], shots), red cards (m209.txt:177).
- 太阳[日不落] (m209.txt:377-380): the day after the sun is out has two 正午 rounds, each
  tallied from its own vote thread (game file ``first_vote``/``first_closes``): the DayInput
  is the extra round's, ``DayInput.first_round`` the first's (open to all,
  :meth:`M209.first_round_modifiers`). Without a tallied first round the director records its
  top as <第一轮最高票> (ballots as <第一轮投票>). The sun names the extra round's speakers
  (<日不落>, with its death or during the day — :meth:`M209.day_vote_modifiers` — at most half
  of the living); only they vote there. Extra-round noon skills carry ``choice = "第二轮"``;
  nothing cools down again (same game day). At 黄昏 the first round's top, then the extra
  round's, take [投票出局]; a tie in either round triggers 替罪羊[冤死] once; a [封锁投票] in
  either round voids both.
- 潜行者[潜行] (m209.txt:384): targets must be 当天投票对象 — the candidates of the day's
  ballots (``DayInput.ballots``, from the tally; both rounds on a 日不落 day), none on a
  [封锁投票] day; unchecked (flagged in the log) when the day input carries no ballots.
- Win: the only faction not lost wins; 三方 > 狼人 > 村民 among those newly lost together
  (m209.txt:505-506); losses are remembered in the state's settings (``lost:<faction>``).

General rules (m209.txt:118-217; tables ``GENERAL_MECHANICS`` / ``NOT_APPLICABLE``):

- 表面信息 (m209.txt:131-139): :meth:`M209.surface` gives (表面阵营, 表面身份, 表面带刀); each
  part is a status (``表面阵营``/``表面身份``/``表面带刀``, the value in ``note``), the last
  launched per part wins; a part never modified is the actual one (实际带刀: [群内]/[接刀]/<杀人>,
  :meth:`M209.actual_knife`). 隐狼[伪装] option 2 sets them (:func:`parse_disguise`:
  ``"1,2,4/预言家"`` = 身份 and its 阵营; ``"1,2,4/身份=预言家,阵营=村民阵营,带刀=无刀"``
  sets each part). 预言/感知 read 表面阵营, 通灵/馈赠通灵/狡黠/恶魔之眼 表面身份, 查验 both;
  the log names a disguised target's surface; the state keeps the parts as statuses.
- 获取技能 (m209.txt:118-121): only 黑商[馈赠] gives another role's skill; the user is the
  launcher (亡语 condition, 邪恶's counter), the skill keeps its tags (毒药 [排斥]); same skill in
  one step or among the shots: true identity first (m209.txt:527).
- 离开游戏 (m209.txt:209-210) and 操纵夺舍 (m209.txt:213-217) have no cause in the pool: the
  director records them (<离开游戏> choice 暂时/永久, <回到游戏>, <操纵夺舍> actor = controller,
  target = controlled, <解除操纵>); they take effect at the start of the phase they are recorded
  in (a leave before a day's opening belongs to the night before, so the tally skips it). A
  leaver is out of the 电梯楼, its skills fail, it neither votes nor is voted
  (:meth:`M209.vote_roster`), is no target and is affected by nothing; the win check counts a
  暂时 leaver alive and a 永久 one out; a sheriff leaving for good triggers 殉职 (m209.txt:227).
  A controlled player's actions are the controller's (optionally ``choice = "操纵:<controller>"``
  or ``"操纵:<controller>/<choice>"``): the controlled stays the launcher, both get the feedback,
  the result names the controller; a second controller is told [该角色当前已被他人操纵]; two
  controllers of one [团队] make its <杀人> fail (m209.txt:216); control does not chain
  (m209.txt:217); it ends when the controller is out or leaves.
- 身份更换 and [宣言]: no role of the pool has them (contract test over m209.txt:228-500).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, time, timedelta
from fractions import Fraction
from typing import Any, ClassVar, Literal

from engine.ballots import ModifierKind, VoteModifier
from engine.cards import CardRules
from engine.conduct import ConductRules, FlagKind
from engine.deal import Deal, Rng, sample, shuffle
from engine.kernel import (
    CHOICE,
    RECORD,
    RECORD_OUT,
    RESOLVE,
    Action,
    Board,
    DayInput,
    Death,
    EngineError,
    Outcome,
    Trigger,
    canonical_actions,
    later,
)
from engine.night import Handler, Holder, Pass, SkillSpec, Step, run_steps, validate
from engine.rulesets.base import (
    SHARED_VOTE_RULES,
    CountSheet,
    Deadline,
    Decision,
    LastWordsRules,
    Lineup,
    Ruleset,
    action_time,
    iso_time,
    successor_again,
)
from engine.rulesets.m209_roles import (
    ATTACK_SLOTS,
    CATEGORY,
    DEFENCE_FOR,
    DRAW,
    EXCLUSIVE,
    GIFTS,
    GROUP_ROLES,
    K_DAWN1,
    KNIFE_ORDER,
    NEVER_AGAIN,
    NEWER,
    NIGHT_PLAN,
    NOON_SKILLS,
    NOT_AGAIN,
    PIPER,
    ROLE_RULES,
    ROLE_SKILLS,
    SEER_SKILLS,
    SEERS,
    SPECS,
    STATUS_EFFECTS,
    STRONG,
    THIRD,
    VILLAGE,
    WEAK,
    WOLF,
    WOLF_ROLES,
)
from engine.speed import SpeedRules
from engine.state import Charge, GameState, Memory, Phase, PlayerState, Status

__all__ = [
    "M209",
    "SECRET_KEYS",
    "Disguise",
    "Surface",
    "faction_of",
    "lineup_problems",
    "parse_disguise",
]

#: The keys of the game file's ``[m209]`` table: the drawn line-up (m209.txt:22-33).
SECRET_KEYS: tuple[str, ...] = ("lineup",)

#: Director's actions (not skills): 红牌罚下; on a day with 太阳's extra 正午 the first 正午
#: round's top (``targets`` = the top, none for no top) and, optionally, its ballots (actor =
#: the voter, ``targets`` = the candidate), m209.txt:377-378.
FIRST_TOP = "第一轮最高票"
FIRST_BALLOT = "第一轮投票"
#: Director's actions for the general rules no pool role causes (m209.txt:209-217), applied at
#: the start of the phase in this order (releases before new ones): 回到游戏 (actor), 解除操纵
#: (actor = controller, targets optional), 离开游戏 (actor, choice 暂时/永久), 操纵夺舍
#: (actor = controller, targets = (controlled,)).
RETURN, RELEASE, LEAVE, CONTROL = "回到游戏", "解除操纵", "离开游戏", "操纵夺舍"
STATE_ACTIONS = (RETURN, RELEASE, LEAVE, CONTROL)
#: A faction lost by its red cards (m209.txt:637; choice = the faction): the card ledger's
#: verdict, recorded with the red card that reached it.
FORFEIT = "判负"
DIRECTOR_ACTIONS = ("红牌罚下", FORFEIT, FIRST_TOP, FIRST_BALLOT, *STATE_ACTIONS)
#: Status kinds: a leaver (note 暂时/永久), a controlled player (source = the controller).
LEFT = "离开游戏"
CONTROLLED = "被操纵"
#: The choice prefix naming who submitted a controlled player's action (m209.txt:214).
CONTROL_PREFIX = "操纵"
#: The surface parts (m209.txt:132), each a status kind whose ``note`` is the value.
SURFACE_FACTION, SURFACE_IDENTITY, SURFACE_KNIFE = "表面阵营", "表面身份", "表面带刀"
SURFACE_PARTS = {"阵营": SURFACE_FACTION, "身份": SURFACE_IDENTITY, "带刀": SURFACE_KNIFE}
KNIFE, NO_KNIFE = "有刀", "无刀"
#: Factions a disguise may show (m209.txt:144); short spellings accepted.
_FACTION_WORDS = {
    "村民阵营": VILLAGE,
    "村民": VILLAGE,
    "狼人阵营": WOLF,
    "狼人": WOLF,
    "三方阵营": THIRD,
    "三方": THIRD,
    THIRD: THIRD,
    "不定阵营": "不定阵营",
    "不定": "不定阵营",
}
#: Settings: ``投票对象:<day>`` = the day's vote objects (tab-separated; 潜行, m209.txt:384);
#: ``日不落:<day>`` = the suns (tab-separated, in out order) whose extra 正午 is that day.
VOTE_OBJECTS = "投票对象:"
SUN_NOON = "日不落:"
#: The decision asked of the director when the tally's top went out at noon (``Pending.skill``):
#: the tally does not see noon outs; recorded, they void the votes for that player and allow
#: his voters a change (m209.txt:170, 176).
NOON_OUT = "正午出局"
#: ``遗言权利`` = the players given last words, in order (m209.txt:190-191).
LAST_WORDS_GRANTED = "遗言权利"
#: ``封锁投票:<day>`` = what blocked that day's vote (m209.txt:205).
BLOCKED = "封锁投票:"
#: The source of the vote modifier barring the sun's unnamed players from the extra 正午.
SUN_NO_VOTE = "太阳[日]"
SUN_RULE = "m209.txt:377"  # 只有太阳指定的角色可以发言（包括在投票帖发言）
#: The source of 太阳's daytime [不死] (m209.txt:376), also at 晨曦 (m209.txt:46).
SUN_DAY = "太阳[日]（m209.txt:376）"
IDIOT_RULE = "m209.txt:357"  # 白痴不能参与投票
IDIOT_KEPT_IN = "白痴[大难不死]"  # why a 白痴 sheriff hands over the badge (m209.txt:357)
#: 开门之前未决定则默认弃票 (m209.txt:97): a [狂躁] voter votes before the opening or abstains.
MANIA_RULE = "m209.txt:97"
#: The tally's conclusion when a [霸道]/[不死] top stays in (m209.txt:166), as
#: :meth:`M209.apply_block` words it: ``…；但<top>持有<statuses>，不出局（平安日）``.
PEACE_DECIDED = re.compile(r"；但(?P<who>.+)持有(?P<what>[^，；]+)，不出局（平安日）$")
#: Starting charges: 限定 = 1, [次数] as written (m209.txt:53-55).
INITIAL_CHARGES: Mapping[str, tuple[tuple[str, int], ...]] = {
    "黑商": (("馈赠", 1),),
    "石像鬼": (("凝望", 1),),
    "潜行者": (("潜行", 1),),
    "女巫": (("救药", 1), ("毒药", 1)),
    "灵鹿": (("森林庇护", 1),),
    "猎魔人": (("猎杀", 3),),
    "黑狼王": (("报复", 1),),
}
#: Skills whose charge the kernel spends on launch (限定 and [1]).
LIMITED_CHARGED = frozenset({"馈赠", "凝望", "潜行", "救药", "毒药", "森林庇护"})
#: 常驻 statuses from the start: (kind, count, rule).
PERMANENT: Mapping[str, tuple[tuple[str, int | None, str], ...]] = {
    "长老": (("守护", 1, "m209.txt:338"),),
    "灵鹿": (("守护", 1, "m209.txt:284"),),
    "猎魔人": (("特防", None, "m209.txt:279"),),
    "吹笛者": (("秩序", None, "m209.txt:497"),),
}
#: 正午类技能只能在每天的9：00至21:00（若当天关门则为20:00）发动 (m209.txt:49).
NOON_RULE = "m209.txt:49"
NOON_FROM, NOON_UNTIL, NOON_UNTIL_CLOSING = time(9, 0), time(21, 0), time(20, 0)
#: [翻牌] skills (m209.txt:63).
FLIP_SKILLS = frozenset({"断钢斩", "决斗", "神风突击"})
#: [忍耐] skills (m209.txt:64).
ENDURANCE = frozenset({"猎杀", "断钢斩", "决斗", "神风突击"})
#: Negative statuses the holder is not told of (m209.txt:98, 100, 484).
SILENT_STATUSES = frozenset({"流血", "疾病", "魅惑"})
#: 遗言数量为人数配备最少狼数量 (m209.txt:191): 狼人 10选4 (m209.txt:22).
LAST_WORDS = DRAW["狼人"][0]
#: An action of 月亮's extra night carries ``choice = "第二轮"`` (or ``"第二轮/<choice>"``).
SECOND_ROUND = "第二轮"
#: The note of statuses that last "当晚/持续至夜晚结束": gone before the extra night's round.
TONIGHT = "当晚"
#: Engine records kept as statuses, never cleared by [漏洞].
BOOKKEEPING = frozenset(
    {
        "伪装",
        SURFACE_FACTION,
        SURFACE_IDENTITY,
        SURFACE_KNIFE,
        "守卫模式",
        "翻牌",
        "失去技能",
        LEFT,
        CONTROLLED,
    }
)
#: Scratch key: where in the memory the last 常规冷却 of the phase happened (月亮's extra
#: night, m209.txt:367); [排斥] counts only the launches after it (m209.txt:60).
COOLED = "cooled_at"
#: Per-round scratch of a night (cleared before the extra round).
ROUND_SCRATCH = (
    "attacks",
    "dreams",
    "swaps",
    "reversal",
    "pointed",
    "evil",
    "gifts",
    "bounced",
    "shooters",
)

_DIRECTOR_RULES = {
    "红牌罚下": "m209.txt:175",
    FORFEIT: "m209.txt:637",
    FIRST_TOP: "m209.txt:378",
    FIRST_BALLOT: "m209.txt:378",
    RETURN: "m209.txt:210",
    LEAVE: "m209.txt:210",
    RELEASE: "m209.txt:214",
    CONTROL: "m209.txt:214",
}

_ALIASES = {
    "法式守护": "守护",
    "日式守护": "守护",
    "版杀守护": "守护",
    "流光庇护": "馈赠流光庇护",
    "红牌": "红牌罚下",
    "黑商馈赠毒药": "馈赠毒药",
    "黑商馈赠通灵": "馈赠通灵",
}


def faction_of(role: str) -> str:
    """A role's actual faction (m209.txt:142-145)."""
    if role in WOLF_ROLES:
        return WOLF
    if role == PIPER:
        return THIRD
    return VILLAGE


def pool_text() -> str:
    """The role pool as the rule post lists it (m209.txt:22-33), one category after another:
    ``狼人（10选4）：石像鬼、…；验人系（3选1）：…``."""
    parts = []
    for cat, (need, _rule) in DRAW.items():
        roles = [r for r, c in CATEGORY.items() if c == cat]
        parts.append(f"{cat}（{len(roles)}选{need}）：{'、'.join(roles)}")
    return "；".join(parts)


def lineup_problems(drawn: Sequence[str]) -> list[str]:
    """Why a drawn line-up is impossible (m209.txt:22-33); [] when it can be drawn."""
    problems: list[str] = []
    counts = Counter(drawn)
    for role, n in sorted(counts.items()):
        if n > 1:
            problems.append(f"身份「{role}」出现 {n} 次，每个身份只能抽到一次（m209.txt:22-33）")
    by_cat = Counter(CATEGORY[r] for r in drawn if r in CATEGORY)
    for cat, (need, rule) in DRAW.items():
        if by_cat.get(cat, 0) != need:
            problems.append(f"{cat}应抽 {need} 个，实际 {by_cat.get(cat, 0)} 个（{rule}）")
    kings = [r for r in ("黑狼王", "白狼王") if r in counts]
    if len(kings) != 1:
        problems.append("黑狼王和白狼王必出现且只会出现其中之一（m209.txt:22）")
    deer = [r for r in ("灵鹿", "女巫") if r in counts]
    if len(deer) != 1:
        problems.append("灵鹿和女巫必出现且只会出现其中之一（m209.txt:27）")
    return problems


def _consecutive(idx: Sequence[int], n: int) -> bool:
    """Three seats are consecutive in the elevator ring (首尾相邻, m209.txt:197)."""
    s = set(idx)
    return any({i % n, (i + 1) % n, (i + 2) % n} == s for i in range(n)) if n >= 3 else False


@dataclass(frozen=True, slots=True)
class Surface:
    """A player's surface information (m209.txt:132): 表面阵营, 表面身份, 表面带刀 (有刀/无刀).

    ``modified`` names the parts a modification set (阵营/身份/带刀); the others are the actual
    ones (m209.txt:133 若无任何伪装，则表面信息与实际信息相同).
    """

    faction: str
    identity: str
    knife: str
    modified: tuple[str, ...] = ()

    def describe(self) -> str:
        parts = (("阵营", self.faction), ("身份", self.identity), ("带刀", self.knife))
        return "，".join(
            f"{k}={v}" + ("" if k in self.modified else "（同实际）") for k, v in parts
        )


@dataclass(frozen=True, slots=True)
class Disguise:
    """隐狼[伪装] (m209.txt:430-436): the three options picked and option 2's surface parts."""

    options: tuple[str, ...]
    faction: str | None = None
    identity: str | None = None
    knife: str | None = None

    def parts(self) -> dict[str, str]:
        """The surface parts set, by status kind."""
        pairs = (
            (SURFACE_FACTION, self.faction),
            (SURFACE_IDENTITY, self.identity),
            (SURFACE_KNIFE, self.knife),
        )
        return {k: v for k, v in pairs if v is not None}


_DISGUISE_HELP = (
    '如 choice="1,2,4/预言家" 或 "1,2,4/身份=预言家,阵营=村民阵营,带刀=无刀"（m209.txt:430-432）'
)


def parse_disguise(choice: str | None) -> Disguise | str:
    """隐狼[伪装]'s choice: ``"<three of 1-5>[/<surface>]"``; the Chinese reason when invalid.

    The surface (option 2 only, m209.txt:432) is ``身份=X,阵营=Y,带刀=有刀|无刀`` in any order
    and subset (``表面身份=`` etc. accepted, ``=``/``：`` and ``,``/``;`` either width); a bare
    value is the identity (``"1,2,4/预言家"``, the older form). An identity given without a
    faction sets the faction to that identity's (docs/rulings.md, m209); a part not given stays
    the actual one.
    """
    raw = (choice or "").translate(str.maketrans("，；／＝：", ",;/=:"))
    opts, _, surface = raw.partition("/")
    picked = tuple(sorted({o.strip() for o in opts.split(",") if o.strip()}))
    if len(picked) != 3 or not set(picked) <= {"1", "2", "3", "4", "5"}:
        return f"<伪装>须从1-5中选择三项，{_DISGUISE_HELP}"
    items = [x.strip() for x in re.split(r"[,;、]", surface) if x.strip()]
    if items and "2" not in picked:
        return f"没有选择选项2，不能设置表面信息（{surface.strip()}）（m209.txt:432）"
    found: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=") if "=" in item else item.partition(":")
        if not sep:
            key, value = "身份", item
        key, value = key.strip().removeprefix("表面"), value.strip()
        if key not in SURFACE_PARTS:
            return f"未知的表面信息「{key}」（可设置：阵营、身份、带刀），{_DISGUISE_HELP}"
        if key in found:
            return f"表面{key}设置了两次，{_DISGUISE_HELP}"
        if key == "身份" and value not in CATEGORY:
            return f"伪装的表面身份「{value}」不在身份池中（m209.txt:22-33）"
        if key == "阵营":
            if value not in _FACTION_WORDS:
                return (
                    f"伪装的表面阵营「{value}」不是本局的阵营"
                    "（村民阵营、狼人阵营、三方阵营、不定阵营，m209.txt:144）"
                )
            value = _FACTION_WORDS[value]
        if key == "带刀" and value not in (KNIFE, NO_KNIFE):
            return f"伪装的表面带刀须为「有刀」或「无刀」，收到「{value}」（m209.txt:139）"
        found[key] = value
    identity = found.get("身份")
    faction = found.get("阵营") or (faction_of(identity) if identity else None)
    return Disguise(picked, faction, identity, found.get("带刀"))


def _grants(raw: str) -> dict[str, frozenset[str]]:
    """``name@phase`` entries (tab-separated) → player → the phases they got last words in."""
    out: dict[str, set[str]] = {}
    for entry in (e for e in raw.split("\t") if e):
        name, _, phase = entry.partition("@")
        out.setdefault(name, set()).add(phase)
    return {n: frozenset(p) for n, p in out.items()}


def sun_naming_problem(living: Sequence[str], targets: Sequence[str]) -> str:
    """Why 太阳's naming of the extra 正午's speakers is invalid ("" when it is valid):
    living players only, at most half of the living (m209.txt:377)."""
    limit = len(living) // 2
    bad = [t for t in targets if t not in living]
    if bad:
        return f"{'、'.join(bad)}不是存活角色"
    if len(set(targets)) > limit:
        return f"最多可选择场上存活人数一半（{limit}人），收到{len(set(targets))}人"
    return ""


def _control_prefix(choice: str | None) -> tuple[str | None, str | None]:
    """``"操纵:<controller>[/<rest>]"`` → (controller, rest or None); (None, choice) without it."""
    raw = (choice or "").strip()
    head = raw[: len(CONTROL_PREFIX) + 1]
    if head not in (CONTROL_PREFIX + ":", CONTROL_PREFIX + "："):
        return None, choice
    name, _, rest = raw[len(head) :].partition("/")
    return name.strip(), rest.strip() or None


class _NoTarget(Exception):
    """A [指定] skill whose 结算目标 were all removed ([隐身])."""


def _guarded(handler: Handler) -> Handler:
    def run(board: Board, p: Pass) -> tuple[Outcome, str]:
        try:
            return handler(board, p)
        except _NoTarget:
            return Outcome.FIZZLED, "结算目标为空（[隐身]移除，m209.txt:107），技能无效果"

    return run


class M209(Ruleset):
    id: ClassVar[str] = "m209"
    name: ClassVar[str] = "[M209]巴啦啦小魔仙"
    rule_file: ClassVar[str] = "m209.txt"
    aliases: ClassVar[tuple[str, ...]] = ("M209", "巴啦啦小魔仙", "RD")
    director_actions: ClassVar[tuple[str, ...]] = DIRECTOR_ACTIONS
    gifts: ClassVar[Mapping[str, str]] = GIFTS
    group_roles: ClassVar[frozenset[str]] = GROUP_ROLES
    initial_charges: ClassVar[Mapping[str, tuple[tuple[str, int], ...]]] = INITIAL_CHARGES
    role_rules: ClassVar[Mapping[str, str]] = ROLE_RULES
    role_skills: ClassVar[Mapping[str, tuple[str, ...]]] = ROLE_SKILLS
    seers: ClassVar[tuple[str, ...]] = SEERS
    strong: ClassVar[tuple[str, ...]] = STRONG
    weak: ClassVar[tuple[str, ...]] = WEAK

    change_when_target_out: ClassVar[bool] = True
    proxy_before_open: ClassVar[bool] = True
    public_counts: ClassVar[bool] = False

    rules: ClassVar[dict[str, str]] = {
        **SHARED_VOTE_RULES,
        "vote_right": "m209.txt:165",
        "out": "m209.txt:174",
        "window": "m209.txt:165",
        "one_vote": "m209.txt:596",
        "format": "m209.txt:599",
        "correct_invalid": "m209.txt:599",
        "abstain": "m209.txt:601",
        "change_once": "m209.txt:598",
        "change_reply": "m209.txt:605",
        "change_cutoff": "m209.txt:598",
        "change_accelerated": "m209.txt:598",
        "proxy": "m209.txt:597",
        "proxy_cutoff": "m209.txt:598",
        "proxy_change_cutoff": "m209.txt:598",
        "election": "m209.txt:226",
        "sheriff_weight": "m209.txt:224",
        "top": "m209.txt:169",
        "tie": "m209.txt:169",
        "block_out": "m209.txt:166",
        "public": "m209.txt:167",
        "change_target_out": "m209.txt:170",
        "mania": "m209.txt:97",
        "daze": "m209.txt:96",
        "dictator": "m209.txt:109",
        "scapegoat": "m209.txt:343",
    }

    # --- what else the rule set is ----------------------------------------------------------
    title: ClassVar[str] = "新RD规则"
    conduct: ClassVar[ConductRules] = ConductRules(
        "m209",
        rules={
            FlagKind.QIANSHUI: "m209.txt:717",
            FlagKind.QIANSHUI_STREAK: "m209.txt:718",
            FlagKind.NO_VOTE: "m209.txt:719, m209.txt:601",
            FlagKind.ZHASHI: "m209.txt:723",
            FlagKind.FONT: "m209.txt:722",
            FlagKind.LASTWORDS_CODE: "m209.txt:193",
        },
    )
    cards: ClassVar[CardRules] = CardRules(
        "m209",
        escalation_rule="m209.txt:628, m209.txt:632",
        red_out_rule="m209.txt:636",
        faction_rule="m209.txt:637",
    )
    # m209.txt:591 当日申请人数在讨论日结束三个小时前（一般为最后一个自然日的18:00）大于等于存活
    # 人数的一半，即判定加速或延迟成功。m209.txt:593 延迟成功时，不再视为"执行加速"状态。
    speed: ClassVar[SpeedRules] = SpeedRules(
        "m209",
        rule="m209.txt:591, m209.txt:593",
        deadline_rule="m209.txt:591",
        auto_rule="m209.txt:590（由导演决定）",
    )
    # m209.txt:155 游戏流程发生变化时需要在讨论帖中公示
    announce_in: ClassVar[Literal["discussion", "vote"]] = "discussion"
    #: the rule text's 投票格式 and 改票格式, as written (m209.txt:602-607)
    vote_format: ClassVar[str] = (
        "【投票格式】\n"
        "投票对象：饺子\n"
        "投票理由：饺子好吃\n"
        "【改票格式】改票需回复原投票楼层\n"
        "改票对象：包子\n"
        "改票理由：包子也好吃"
    )
    vote_format_rule: ClassVar[str] = "m209.txt:602-607"
    announce_rule: ClassVar[str] = "m209.txt:155"
    lastwords: ClassVar[LastWordsRules] = LastWordsRules(
        red_card_rule="m209.txt:175",  # 红牌罚下出局的角色没有遗言权利
        day_open_note=(
            "有遗言权利的出局角色会收到通知，遗言将在此公示；遗言中禁止使用Discuz!代码。"
        ),
    )
    two_vote_rounds: ClassVar[str] = "太阳[日不落]"
    two_vote_rounds_rule: ClassVar[str] = "m209.txt:377"
    public_counts_rule: ClassVar[str] = "m209.txt:167"  # only the top is announced
    secret_keys: ClassVar[tuple[str, ...]] = SECRET_KEYS

    def decide_exile(self, sheet: CountSheet) -> Decision:
        """m209.txt:169 有技能影响则计算技能影响的最高票，如果没有任何技能影响，则投票计数唯一最多的
        角色为最高票，否则警长投票的角色为最高票，否则没有最高票。"""
        if sheet.forced_top:
            forced = tuple(sorted(set(sheet.forced_top)))
            if len(forced) == 1:
                decision = Decision(
                    forced, (), forced[0], None, "技能影响的最高票", self.ref("top")
                )
                return self.apply_block(sheet, decision)
            # 技能产生的最高票不止一个: a tie among the skill tops (m209.txt:343 counts it as one).
            return self.apply_block(sheet, self.break_tie(sheet, forced))
        return super().decide_exile(sheet)

    # apply_block is the base's: m209.txt:166 若该角色持有[霸道]或[不死]状态，则不出局，公示平安日 —
    # nobody is out; the conclusion names the top and the status (never the role), in the form
    # :data:`PEACE_DECIDED` reads back when the engine announces the 平安日.

    def break_tie(self, sheet: CountSheet, tie: tuple[str, ...]) -> Decision:
        base = super().break_tie(sheet, tie)
        if sheet.void_on_tie:
            sources = "、".join(sorted(set(sheet.void_on_tie)))
            notes = (*base.notes, f"警长所投：{base.out}") if base.out else base.notes
            return Decision(
                base.top,
                tie,
                None,
                None,
                f"平票，{sources}发动，当日最高票产生的投票出局无效",
                self.ref("scapegoat"),
                notes,
            )
        if base.out is None:
            return Decision(
                base.top, tie, None, None, base.decided_by + "（没有最高票）", base.rule
            )
        return Decision(
            (base.out,), tie, base.out, None, "平票，警长投票的角色为最高票", self.ref("tie")
        )

    # ================================================================== the engine
    has_engine: ClassVar[bool] = True
    #: 投弃权票时，须在投票对象中填写“弃权” (m209.txt:601)
    bare_abstain: ClassVar[bool] = False
    default_settings: ClassVar[Mapping[str, str]] = {}
    specs: ClassVar[Mapping[str, SkillSpec]] = SPECS
    night_plan: ClassVar[tuple[Step, ...]] = NIGHT_PLAN
    #: 行动时限 per stage (m209.txt:543-568): 早夜2 40, 午夜 60, 深夜1 70, 深夜2 80, 凌晨1 90
    #: minutes after the close
    step_deadlines: ClassVar[Mapping[tuple[int, int], Deadline]] = {
        step.key: Deadline(timedelta(minutes=minutes), step.rule)
        for step, minutes in zip(NIGHT_PLAN, (40, 60, 70, 80, 90), strict=True)
    }

    # ------------------------------------------------------------------ setup
    # the drawn line-up: 4 + 1 + 3 + 4 + 1 = 13 roles (m209.txt:22-33); factions (m209.txt:144)
    player_count: ClassVar[tuple[int, str] | None] = (13, "m209.txt:22-33")
    factions: ClassVar[tuple[str, ...]] = (WOLF, VILLAGE, THIRD)
    faction_rule: ClassVar[str] = "m209.txt:142-145"

    draw: ClassVar[Mapping[str, tuple[int, str]]] = DRAW
    category: ClassVar[Mapping[str, str]] = CATEGORY
    #: m209.txt:22 黑狼王和白狼王必出现且只会出现其中之一;
    #: m209.txt:27 灵鹿和女巫必出现且只会出现其中之一
    exactly_one: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "狼人": ("白狼王", "黑狼王"),
        "强神": ("女巫", "灵鹿"),
    }

    def deal_count(self) -> int:
        return sum(n for n, _rule in self.draw.values())  # m209.txt:22-33: 13

    def deal(self, names: tuple[str, ...], rng: Rng) -> Deal:
        """狼人 10选4 with exactly one of 黑狼王/白狼王, 验人系 3选1, 强神 10选3 with exactly one
        of 灵鹿/女巫, 弱神 10选4, 三方 1选1 (m209.txt:22-33); the 13 cards are shuffled to the
        seats and also written as ``[m209] lineup``."""
        drawn: dict[str, list[str]] = {}
        for cat in sorted(self.draw):  # code-point order: a seed's deal never follows a table's
            need = self.draw[cat][0]
            pool = sorted(r for r, c in self.category.items() if c == cat)
            pair = self.exactly_one.get(cat)
            if pair is None:
                drawn[cat] = sample(pool, need, rng)
                continue
            one = sorted(pair)[rng.randrange(len(pair))]
            rest = [r for r in pool if r not in pair]
            drawn[cat] = [one, *sample(rest, need - 1, rng)]
        lineup = [r for cat in self.draw for r in drawn[cat]]  # the table's order, for the reader
        seats = shuffle(lineup, rng)
        groups = tuple((f"{cat} {self.draw[cat][0]}", tuple(drawn[cat])) for cat in self.draw)
        return Deal(
            self.id,
            names,
            tuple((c,) for c in seats),
            table={"lineup": lineup},
            groups={"lineup": groups},
            notes=("m209：抽到的阵容也写进了 [m209] lineup（m209.txt:22-33）。",),
        )

    def deal_settings(self, made: Deal) -> list[dict[str, str]]:
        return [{"lineup": "，".join(made.table["lineup"])}]

    def hand_faction(self, name: str, cards: Sequence[str]) -> str | None:
        if len(cards) != 1 or cards[0] not in self.category:
            return None
        return faction_of(cards[0])

    def validate_setup(self, players: Lineup) -> list[str]:
        """Problems with the drawn line-up (m209.txt:22-33), in Chinese; [] when all is well.

        Every player holds one card; the cards are the drawn line-up: 狼人 4 (黑狼王 xor 白狼王),
        验人系 1, 强神 3 (灵鹿 xor 女巫), 弱神 4, 三方 1 (吹笛者), no role twice.
        """
        problems: list[str] = []
        if not any(cards for _n, cards in players):
            return problems
        drawn: list[str] = []
        for name, cards in players:
            if len(cards) != 1:
                problems.append(f"玩家「{name}」应有一张身份牌，实际有 {len(cards)} 张")
                continue
            card = cards[0]
            if card not in self.category:
                problems.append(
                    f"玩家「{name}」的身份「{card}」不在本局的身份池中"
                    f"（{self.rule_post} · 身份配置，m209.txt:22-33）。身份池：{pool_text()}"
                )
                continue
            drawn.append(card)
        problems.extend(lineup_problems(drawn))
        return problems

    def settings_from_game(self, game: Any) -> dict[str, str]:
        """``[m209] lineup = ["黑狼王", …]``: the drawn line-up (m209.txt:22-33)."""
        table = getattr(game, "secrets", {}) or {}
        lineup = table.get("lineup")
        if isinstance(lineup, list | tuple):
            return {"lineup": "，".join(str(r) for r in lineup)}
        return {}

    @staticmethod
    def _lineup_vs_cards(raw: str, players: Lineup) -> list[str]:
        """The [m209] table's line-up is a possible draw and is exactly the cards dealt."""
        lineup = [r.strip() for r in raw.replace(",", "，").split("，") if r.strip()]
        problems = [f"[m209] lineup：{p}" for p in lineup_problems(lineup)]
        unknown = [r for r in lineup if r not in CATEGORY]
        if unknown:
            problems.append(f"[m209] lineup 中有不在身份池的身份：{'、'.join(unknown)}")
        dealt = sorted(c for _n, cards in players for c in cards)
        if dealt != sorted(lineup):
            problems.append(
                "[m209] lineup 与玩家的身份牌不一致："
                f"多出 {'、'.join(sorted(set(dealt) - set(lineup))) or '无'}，"
                f"缺少 {'、'.join(sorted(set(lineup) - set(dealt))) or '无'}"
            )
        return problems

    def open_state(self, players: Lineup, settings: Mapping[str, str], strict: bool) -> GameState:
        """The state before the opening: one card each, charges, permanent 常驻 statuses."""
        merged = {**self.default_settings, **settings}
        lineup = self._lineup_vs_cards(merged["lineup"], players) if "lineup" in merged else []
        self.check_lineup(players, strict=strict, extra=lineup)
        states: list[PlayerState] = []
        charges: list[Charge] = []
        statuses: list[Status] = []
        for name, cards in players:
            ps = PlayerState(
                name=name,
                cards=self.dealt_cards(name, cards),
                wolf_group=bool(cards) and cards[0] in self.group_roles,
            )
            states.append(ps)
            if not cards:
                continue
            role, uid = cards[0], ps.cards[0].uid
            for skill, n in self.initial_charges.get(role, ()):
                charges.append(Charge(uid, skill, n))
            for kind, count, rule in PERMANENT.get(role, ()):
                statuses.append(
                    Status(kind, name, f"{role}（{rule}）", 0, None, count, note="常驻")
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

    def canonical_skill(self, name: str) -> str:
        raw = "".join(ch for ch in name.strip() if ch not in "<>＜＞[]【】《》")
        return _ALIASES.get(raw, raw)

    def skill_rule(self, skill: str) -> str:
        name = self.canonical_skill(skill)
        spec = self.specs.get(name)
        return spec.rule if spec else _DIRECTOR_RULES.get(name, "")

    def group_skill(self, skill: str) -> bool:
        return skill in ("杀人", "预言")  # both settled before the steps (团队, 迅捷)

    def unused_reason(self, action: Action) -> str:
        skill = self.canonical_skill(action.skill)
        if skill in ("最后一枪", "馈赠最后一枪", "报复"):
            return f"{action.actor}本阶段没有以可开枪的方式出局，<{skill}>未发动"
        if skill == "殉职":
            return f"{action.actor}本阶段没有以警长身份出局，<殉职>未发动"
        if skill == "冤死":
            return "本日没有平票，<冤死>未触发"
        return super().unused_reason(action)

    # ------------------------------------------------------------------ who is what
    @staticmethod
    def role(board: Board | GameState, name: str) -> str:
        p = board.player(name)
        return p.cards[0].name if p.cards else ""

    def actual_faction(self, state: GameState, player: str) -> str | None:
        return faction_of(self.role(state, player))

    def _faction(self, board: Board, name: str) -> str:
        return faction_of(self.role(board, name))

    def _judged_faction(self, board: Board, target: str, actor: str) -> str:
        """The actual faction a skill judges; 隐狼 option 4 reads as village to village skills
        aimed at it (m209.txt:434, 436)."""
        faction = self._faction(board, target)
        if (
            faction == WOLF
            and self.role(board, target) == "隐狼"
            and "4" in self._disguise(board, target)
            and self._faction(board, actor) == VILLAGE
        ):
            return VILLAGE
        return faction

    @staticmethod
    def _marks(board: Board, holder: str, kind: str) -> list[Status]:
        return sorted(board.statuses_of(holder, kind), key=Status.sort_key)

    def _disguise(self, board: Board, name: str) -> str:
        marks = self._marks(board, name, "伪装")
        return marks[-1].note if marks else ""

    def actual_knife(self, board: Board, name: str) -> bool:
        """实际带刀 (m209.txt:139): a [群内] or [接刀] tag, or the <杀人> skill; [超度] takes the
        tags away while it lasts (m209.txt:95)."""
        if "超度" in self.effects(board, name):
            return False
        p = board.player(name)
        tagged = p.wolf_group or self.role(board, name) in self.group_roles
        return tagged or self._can_take_knife(board, name) or name in self._kill_holders(board)

    def surface(self, board: Board, name: str) -> Surface:
        """(表面阵营, 表面身份, 表面带刀) (m209.txt:132-133): per part, the modification launched
        last wins; a part never modified is the actual one. An older state that recorded only a
        表面身份 shows that identity's faction (the disguise's faction followed its identity)."""
        last = {
            kind: marks[-1].note
            for kind in (SURFACE_FACTION, SURFACE_IDENTITY, SURFACE_KNIFE)
            if (marks := self._marks(board, name, kind))
        }
        identity = last.get(SURFACE_IDENTITY, self.role(board, name))
        if SURFACE_FACTION in last:
            faction = last[SURFACE_FACTION]
        else:
            faction = (
                faction_of(identity) if SURFACE_IDENTITY in last else self._faction(board, name)
            )
        knife = last.get(SURFACE_KNIFE) or (KNIFE if self.actual_knife(board, name) else NO_KNIFE)
        modified = tuple(k for k, kind in SURFACE_PARTS.items() if kind in last)
        if SURFACE_IDENTITY in last and SURFACE_FACTION not in last:
            modified = ("阵营", *modified)
        return Surface(faction, identity, knife, modified)

    def set_surface(self, board: Board, name: str, kind: str, value: str, source: str) -> None:
        """One surface part modified now (m209.txt:133): a later launch replaces a modification
        of the same part made earlier in this phase; earlier phases' ones stay underneath."""
        for st in board.statuses_of(name, kind):
            if st.since == board.index:
                board.remove_status(st)
        board.add_status(Status(kind, name, source, board.index, note=value))

    def _surface_note(self, board: Board, name: str) -> str:
        """For the log: a target whose surface differs from the actual information."""
        s = self.surface(board, name)
        return f"（{name}的表面信息：{s.describe()}）" if s.modified else ""

    def effects(self, board: Board, name: str) -> set[str]:
        out: set[str] = set()
        for s in board.statuses_of(name):
            out |= STATUS_EFFECTS.get(s.kind, frozenset())
        return out

    def _flipped(self, board: Board, name: str) -> bool:
        return bool(board.statuses_of(name, "翻牌"))

    def _flip(self, board: Board, name: str, why: str) -> None:
        if not self._flipped(board, name):
            board.add_status(Status("翻牌", name, why, board.index))
            board.announce(f"{name}翻牌：{self.role(board, name)}")

    def _lost(self, board: Board, name: str, skill: str) -> bool:
        return any(s.note == skill for s in board.statuses_of(name, "失去技能"))

    def _lose(self, board: Board, name: str, skill: str, why: str) -> None:
        board.add_status(Status("失去技能", name, why, board.index, note=skill))

    # ------------------------------------------------------------------ 离开游戏 / 操纵夺舍
    def _left(self, board: Board, name: str) -> str:
        """The note 暂时/永久 while the player is out of the game (m209.txt:210), else ""."""
        marks = self._marks(board, name, LEFT) if board.has(name) else []
        return marks[-1].note if marks else ""

    def _ring(self, board: Board) -> list[str]:
        """The 电梯楼: living game members in seat order (m209.txt:197, 210)."""
        return [n for n in board.living() if not self._left(board, n)]

    def _counts_alive(self, board: Board, name: str) -> bool:
        """Alive for the win check: a 暂时 leaver is, a 永久 one is not (m209.txt:210)."""
        return board.alive(name) and self._left(board, name) != "永久"

    def _controller(self, board: Board, name: str) -> str:
        """Who controls the player now (m209.txt:214), or ""."""
        marks = self._marks(board, name, CONTROLLED)
        return marks[-1].source if marks else ""

    def _phase_controls(self, board: Board) -> dict[str, str]:
        """controlled → controller, fixed at the start of the phase (m209.txt:214)."""
        found = board.scratch.get("controlled")
        return dict(found) if isinstance(found, dict) else {}

    def _mirror(self, board: Board, actor: str, start: int) -> None:
        """操控双方均可获得本次使用技能的一切情况和技能反馈 (m209.txt:214): the feedback the
        controlled got since ``start`` goes to its controller too."""
        ctl = self._phase_controls(board).get(actor)
        if not ctl:
            return
        for f in list(board.feedback[start:]):
            if f.to == actor:
                board.tell(ctl, f"（你操纵的{actor}）{f.text}", f.rule or "m209.txt:214")

    def _tell_user(self, board: Board, actor: str, text: str, rule: str) -> None:
        """A skill's feedback to its launcher (and to the launcher's controller)."""
        start = len(board.feedback)
        board.tell(actor, text, rule)
        self._mirror(board, actor, start)

    def _release_controls_of(self, board: Board, controller: str, why: str) -> None:
        for st in [s for s in board.statuses if s.kind == CONTROLLED and s.source == controller]:
            board.remove_status(st)
            board.tell(st.holder, "你不再被操纵（m209.txt:214）。", "m209.txt:214")
            board.emit("操纵夺舍", "m209.txt:214", f"{controller}对{st.holder}的操纵解除：{why}")

    def add_negative(
        self, board: Board, holder: str, kind: str, source: str, until: int | None, rule: str
    ) -> bool:
        """A negative status; [秩序] clears and is immune to them (m209.txt:110)."""
        if self._left(board, holder):
            board.emit("状态", "m209.txt:210", f"{holder}已离开游戏，不受影响，不获得[{kind}]")
            return False
        if board.statuses_of(holder, "秩序"):
            board.emit("状态", "m209.txt:110", f"{holder}持有[秩序]，免疫[{kind}]", actor=source)
            return False
        if kind == "流血" and board.statuses_of(holder, "流血"):
            # m209.txt:98: a second [流血] is a [暴击] instead
            board.emit("状态", "m209.txt:98", f"{holder}再次获得[流血]：改为造成[暴击]")
            board.push_front(
                Trigger(
                    f"流血:{holder}",
                    later(
                        self.hit, "暴击", source, holder, "二次流血", "m209.txt:98", "二次[流血]"
                    ),
                )
            )
            return False
        if kind == "漏洞":  # m209.txt:99: clears the non-negative statuses
            for st in board.statuses_of(holder):
                if not st.negative and st.kind not in BOOKKEEPING:
                    board.remove_status(st)
        board.add_status(Status(kind, holder, source, board.index, until, negative=True))
        if kind not in SILENT_STATUSES:
            end = "永久" if until is None else f"至{Phase.from_index(until).zh}结束"
            board.tell(holder, f"你获得了[{kind}]状态（{end}）。", rule)
        board.emit("状态", rule, f"{holder}获得[{kind}]", actor=source, resolved=(holder,))
        return True

    def add_status(
        self,
        board: Board,
        holder: str,
        kind: str,
        source: str,
        until: int | None,
        rule: str,
        count: int | None = None,
        *,
        tonight: bool = False,
    ) -> None:
        note = TONIGHT if tonight else ""
        if self._left(board, holder) and kind not in BOOKKEEPING:
            board.emit("状态", "m209.txt:210", f"{holder}已离开游戏，不受影响，不获得[{kind}]")
            return
        if board.statuses_of(holder, "漏洞") and kind not in BOOKKEEPING:
            board.emit("状态", "m209.txt:99", f"{holder}持有[漏洞]，免疫[{kind}]", actor=source)
            return
        board.add_status(Status(kind, holder, source, board.index, until, count, note=note))
        board.emit("状态", rule, f"{holder}获得[{kind}]", actor=source, resolved=(holder,))

    # ------------------------------------------------------------------ skills held
    def _group_wolves(self, board: Board) -> list[str]:
        """The living [群内] wolves not under [超度] (m209.txt:412-413); a leaver counts (it is
        not 出局, m209.txt:210) though it cannot use the skill."""
        group = [
            n
            for n in board.living()
            if self._faction(board, n) == WOLF
            and (board.player(n).wolf_group or self.role(board, n) in self.group_roles)
        ]
        return [n for n in group if "超度" not in self.effects(board, n)]

    def _kill_holders(self, board: Board) -> list[str]:
        """Who may use <杀人> now (m209.txt:412-416): the living [群内]; else the first [接刀].
        A player out of the game holds it but its skills fail (m209.txt:210)."""
        group = self._group_wolves(board)
        if not group:
            group = next(
                (
                    [n]
                    for role in KNIFE_ORDER
                    for n in board.living()
                    if self.role(board, n) == role and self._can_take_knife(board, n)
                ),
                [],
            )
        return [n for n in group if not self._left(board, n)]

    def _can_take_knife(self, board: Board, name: str) -> bool:
        role = self.role(board, name)
        if role == "石像鬼":
            return not self._lost(board, name, "接刀")
        if role == "隐狼":
            return "1" in self._disguise(board, name)
        return False

    def holder(self, board: Board, player: str, skill: str) -> Holder | None:
        p = board.player(player)
        cur = p.current
        if cur is None:
            return None
        role = cur.name
        if skill == "杀人":
            if player in self._kill_holders(board):
                return Holder(player, cur.uid, cur.name, role, skill)
            return None
        if skill.startswith("馈赠") and skill != "馈赠":
            found = sorted(
                (
                    c
                    for c in board.charges.values()
                    if c.card == cur.uid and c.skill == skill and c.remaining > 0
                ),
                key=lambda c: (c.since > board.index, c.since, c.source),
            )
            if not found:
                return None
            c = found[0]
            return Holder(
                player, cur.uid, cur.name, role, skill, c.source, (c.card, skill, c.source)
            )
        if skill in self.role_skills.get(role, ()) and not self._lost(board, player, skill):
            charge = (cur.uid, skill, "") if skill in LIMITED_CHARGED else None
            return Holder(player, cur.uid, cur.name, role, skill, "", charge)
        return None

    def missing_skill_reason(self, board: Board, player: str, skill: str) -> str:
        role = self.role(board, player)
        if self._left(board, player):
            return self._left_reason(board, player)
        if skill == "杀人":
            return f"{player}（{role}）当前不能使用<杀人>（须为[群内]或接刀者，m209.txt:412-416）"
        if self._lost(board, player, skill):
            return f"{player}已失去<{skill}>"
        return f"{player}（{role}）没有<{skill}>"

    @staticmethod
    def _left_target(name: str) -> str:
        return f"{name}已离开游戏，不视为游戏内成员，不能成为技能目标（m209.txt:210）"

    def _left_reason(self, board: Board, player: str) -> str:
        return (
            f"{player}已{self._left(board, player)}离开游戏，不视为游戏内成员，所有技能失效"
            "（m209.txt:210）"
        )

    def disabled(self, board: Board, holder: Holder) -> str | None:
        if self._left(board, holder.player):
            return self._left_reason(board, holder.player)
        spec = self.specs.get(holder.skill)
        eff = self.effects(board, holder.player)
        if holder.skill == "杀人":
            if "缴械" in eff:
                return f"{holder.player}处于[缴械]状态，不能发动[团队]技能<杀人>（m209.txt:93）"
            return None
        if spec is not None and not spec.forced and "沉默" in eff:
            return (
                f"{holder.player}处于[沉默]状态，不能发动[强制][团队]以外的技能<{holder.skill}>"
                "（m209.txt:92）"
            )
        if holder.skill in FLIP_SKILLS and self._flipped(board, holder.player):
            return (
                f"{holder.player}已经翻开身份牌，不能发动[翻牌]技能<{holder.skill}>（m209.txt:63）"
            )
        return None

    def action_order(self, board: Board, action: Action) -> tuple[int, ...]:
        """Same skill in one step (m209.txt:527): the true identity's own skill first, then
        skills of other identities (gifts), the role listed later in the text first."""
        if not board.has(action.actor):
            return (0, 0)
        role = self.role(board, action.actor)
        line = int(self.role_rules.get(role, "m209.txt:0").split(":")[1])
        own = self.canonical_skill(action.skill) in self.role_skills.get(role, ())
        return (0, 0) if own else (1, -line)

    def _last_targets(self, board: Board, card: str, skills: Sequence[str]) -> tuple[str, ...]:
        mems = sorted(
            (
                m
                for m in board.memory
                if m.card == card and m.skill in skills and m.phase < board.index
            ),
            key=Memory.sort_key,
        )
        return mems[-1].targets if mems else ()

    def check_action(self, board: Board, p: Pass) -> str | None:
        a, skill, card = p.action, p.spec.name, p.holder.card
        gone = [t for t in a.targets if self._left(board, t)]
        if gone:
            return self._left_target("、".join(gone))
        if skill in NEWER:
            shared = ("暗夜护卫", "烈阳护卫") if skill in ("暗夜护卫", "烈阳护卫") else (skill,)
            last = self._last_targets(board, card, shared)
            if last and sorted(last) == sorted(a.targets):
                return (
                    f"<{skill}>[喜新]：选择目标不能与上一次发动时相同"
                    f"（{'、'.join(last)}，m209.txt:74）"
                )
        if skill in NOT_AGAIN or (
            skill == "守护" and self._guard_mode(board, a.actor) == "法式守卫"
        ):
            prev = {
                t
                for m in board.memory
                if m.card == card and m.skill == skill and m.phase == board.index - 2
                for t in m.targets
            }
            hit = [t for t in a.targets if t in prev]
            if hit:
                return f"<{skill}>[厌旧]：{'、'.join(hit)}是上一个游戏日的选择目标（m209.txt:75）"
        if skill in NEVER_AGAIN or (
            skill == "守护" and self._guard_mode(board, a.actor) == "版杀守卫"
        ):
            ever = {
                t for m in board.memory if m.card == card and m.skill == skill for t in m.targets
            }
            hit = [t for t in a.targets if t in ever]
            if hit:
                return f"<{skill}>[绝情]：{'、'.join(hit)}已被选择过，永久排除（m209.txt:76）"
        if skill == "守护":
            mode = self._guard_mode(board, a.actor)
            if not mode:
                return "守卫尚未在开局选择模式（法式守卫/日式守卫/版杀守卫，m209.txt:250）"
            if mode == "日式守卫" and a.actor in a.targets:
                return "<日式守护>[无私]：不能选择自己（m209.txt:255）"
        if skill in EXCLUSIVE:
            # [排斥] 常规冷却后重置 (m209.txt:60): 月亮's extra night cools every skill once
            # (m209.txt:367), so only the launches since then count
            since = board.scratch.get(COOLED, 0)
            used = [
                m.skill
                for m in board.memory[since:]
                if m.card == card
                and m.skill.startswith("排斥:")
                and m.phase in self._game_day(board)
            ]
            if used:
                return f"每天只能发动一个[排斥]技能，今天已发动{used[0][3:]}（m209.txt:60）"
        if skill in ENDURANCE and self._endurance_day(board):
            return f"<{skill}>[忍耐]：竞选日和第一个夜晚不可发动（m209.txt:64）"
        if skill == "感知":
            alive = [t for t in a.targets if board.alive(t)]
            if alive:
                return (
                    f"<感知>[招魂]：只能对已出局角色使用，{'、'.join(alive)}未出局（m209.txt:79）"
                )
        if skill == "狡黠":
            ring = self._ring(board)
            idx = [ring.index(t) for t in a.targets if t in ring]
            if len(idx) != 3 or not _consecutive(idx, len(ring)):
                return (
                    "<狡黠>须选择电梯楼中连续的3名存活角色（离开游戏的角色不在电梯楼中，"
                    "m209.txt:245, 197, 210）"
                )
        if skill == "冲锋":
            c = board.charge(card, "报复")
            if c is None or c.remaining <= 0:
                return "<冲锋>须消耗1点报复次数，报复已无次数（m209.txt:468）"
        if skill == "猎杀":
            c = board.charge(card, "猎杀")
            if c is None or c.remaining <= 0:
                return "<猎杀>次数为0或负数，不可发动（m209.txt:54, 276）"
        if skill == "迷惑":
            mania = [t for t in a.targets if board.statuses_of(t, "狂躁")]
            if mania:
                return f"<迷惑>的选择范围不含已持有[狂躁]的{'、'.join(mania)}（m209.txt:498）"
        if skill == "牺牲":
            group = self._group_wolves(board)
            if group == [a.actor] or len(group) <= 1:
                return "幼狼是最后一只群内狼，不能发动<牺牲>（m209.txt:443）"
        if skill == "潜行" and board.night is not None:
            key = f"{VOTE_OBJECTS}{board.night}"
            if key in board.settings:
                recorded = set(board.settings[key].split("\t"))
                objects = [n for n in board.order if n in recorded]
                bad = [t for t in a.targets if t not in objects]
                if bad:
                    return (
                        f"<潜行>的选择范围是当天投票对象（{'、'.join(objects) or '无'}），"
                        f"{'、'.join(bad)}不是（m209.txt:384）"
                    )
        if skill in ("断钢斩", "决斗", "神风突击", "烈阳护卫") and board.night is not None:
            return f"<{skill}>只能在正午发动（m209.txt:45）"
        return None

    def _game_day(self, board: Board) -> set[int]:
        """Phase indexes of the current game day (day N and the night after it)."""
        i = board.index
        return {i, i - 1} if board.night is not None else {i, i + 1}

    @staticmethod
    def _endurance_day(board: Board) -> bool:
        return (board.night is not None and board.night <= 1) or (
            board.night is None and board.phase.number <= 1
        )

    def _guard_mode(self, board: Board, name: str) -> str:
        marks = self._marks(board, name, "守卫模式")
        return marks[-1].note if marks else ""

    # ------------------------------------------------------------------ the night
    def night_handlers(self) -> dict[str, Handler]:
        return {name: self._mirrored(_guarded(h)) for name, h in self._handlers().items()}

    def _mirrored(self, handler: Handler) -> Handler:
        """A controlled launcher's feedback goes to its controller too (m209.txt:214)."""

        def run(board: Board, p: Pass) -> tuple[Outcome, str]:
            start = len(board.feedback)
            result = handler(board, p)
            self._mirror(board, p.action.actor, start)
            return result

        return run

    def _handlers(self) -> dict[str, Handler]:
        return {
            "时间逆流": self._h_reversal,
            "恐惧": self._h_fear,
            "结印": self._h_seal,
            "交换": self._h_swap,
            "冰冻": self._h_freeze,
            "馈赠冰冻": self._h_freeze,
            "守护": self._h_guard,
            "馈赠流光庇护": self._h_guard,
            "暗夜护卫": self._h_night_guard,
            "摄梦": self._h_dream,
            "查验": self._h_inspect,
            "凝望": self._h_gaze,
            "预言": self._h_seer,
            "通灵": self._h_medium,
            "馈赠通灵": self._h_medium,
            "狡黠": self._h_fox,
            "感知": self._h_sense,
            "迷惑": self._h_pipe,
            "魅惑": self._h_charm,
            "馈赠": self._h_gift,
            "杀人": self._h_kill,
            "牺牲": self._h_sacrifice,
            "冲锋": self._h_charge,
            "潜行": self._h_stalk,
            "猎杀": self._h_hunt,
            "救药": self._h_antidote,
            "毒药": self._h_poison,
            "馈赠毒药": self._h_poison,
            "森林庇护": self._h_forest,
            "恶魔之眼": self._h_demon_eye,
        }

    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        rest = self._director_actions(board, actions)
        if board.winner is not None:
            return
        if board.night == 0:
            self._opening(board, rest)
            return
        opening = [a for a in rest if self.canonical_skill(a.skill) in ("伪装", "模式选择")]
        for a in opening:
            board.record(
                a,
                "校验",
                Outcome.INVALID,
                f"<{a.skill}>是[开局]技能，只能在开局（第0晚）发动",
                self.skill_rule(a.skill),
            )
        rest = [a for a in rest if a not in opening]
        extra = int(board.setting(f"extra_nights:{board.night}", "0"))
        second = [a for a in rest if (a.choice or "").startswith(SECOND_ROUND)]
        first = [a for a in rest if a not in second]
        board.scratch["rounds_left"] = extra
        self._night_round(board, first)
        for n in range(extra):
            board.scratch["rounds_left"] = extra - n - 1
            # 月亮[夜] (m209.txt:367-371): one more round of 早夜-晨曦1; the deaths so far are
            # counted first; statuses that end with the night must be granted again.
            line = self._death_line(board.deaths, f"第{n + 1}轮夜晚")
            board.emit("长夜漫漫", "m209.txt:368", line or f"第{n + 1}轮夜晚无人出局")
            for st in [s for s in board.statuses if s.note == TONIGHT]:
                board.remove_status(st)
            for key in ROUND_SCRATCH:
                board.scratch.pop(key, None)
            # 所有技能常规冷却一次 (m209.txt:367): [排斥] resets with it (m209.txt:60)
            board.scratch[COOLED] = len(board.memory)
            acts = [
                replace(a, choice=(a.choice or "")[len(SECOND_ROUND) :].lstrip("/") or None)
                for a in second
            ]
            self._night_round(board, acts)
            second = []
        if second:
            for a in second:
                board.record(
                    a, "校验", Outcome.INVALID, "今晚没有月亮的额外夜晚（m209.txt:367）", ""
                )
        if extra:
            board.settings.pop(f"extra_nights:{board.night}", None)

    def _night_round(self, board: Board, actions: Sequence[Action]) -> None:
        """早夜2 → 午夜 → 深夜1 → 深夜2 → 凌晨1 → 凌晨2 → 晨曦1 (m209.txt:542-581)."""
        self._night_passives(board)
        rest = self._settle_seers(board, self._settle_kills(board, actions))
        run_steps(board, self, self.night_plan, self.specs, self.night_handlers(), rest)
        self._evil(board)
        self._dawn2(board)
        # 晨曦 belongs to the day (m209.txt:46): night statuses stop, 太阳[日] holds
        board.scratch["dawn"] = True
        self._disease(board)
        self._morning_shots(board, "晨曦1")
        board.scratch["dawn"] = False
        self._after_night(board)

    def _disease(self, board: Board) -> None:
        """[疾病]: each 晨曦 a [特攻] from whoever gave it (m209.txt:100)."""
        for st in sorted(board.statuses, key=Status.sort_key):
            if st.kind == "疾病" and st.active_at(board.index) and board.alive(st.holder):
                self.hit(
                    board, "特攻", st.source, st.holder, "晨曦：疾病", "m209.txt:100", "[疾病]"
                )
                board.drain()

    def _opening(self, board: Board, actions: Sequence[Action]) -> None:
        """第0晚 = 开局 (m209.txt:529-534): 隐狼[伪装] and 守卫[模式选择]."""
        step = "开局"
        for a in actions:
            skill = self.canonical_skill(a.skill)
            spec = self.specs.get(skill)
            if skill not in ("伪装", "模式选择") or spec is None:
                board.record(
                    a,
                    step,
                    Outcome.INVALID,
                    "第0晚是开局阶段，只能发动[开局]技能（伪装、模式选择）；竞选日之后的第1晚才是第一个夜晚（m209.txt:529-536）",
                    self.skill_rule(skill),
                )
                continue
            if (
                not board.alive(a.actor)
                or self._left(board, a.actor)
                or self.holder(board, a.actor, skill) is None
            ):
                board.record(
                    a,
                    step,
                    Outcome.INVALID,
                    self.missing_skill_reason(board, a.actor, skill),
                    spec.rule,
                )
                continue
            if skill == "模式选择":
                if a.choice not in spec.choices:
                    board.record(
                        a,
                        step,
                        Outcome.INVALID,
                        f"<模式选择>须选择{'、'.join(spec.choices)}之一（choice）",
                        spec.rule,
                    )
                    continue
                board.add_status(
                    Status("守卫模式", a.actor, "守卫[模式选择]", board.index, note=a.choice)
                )
                board.record(a, step, Outcome.DONE, f"{a.actor}选择{a.choice}", spec.rule)
                continue
            # 伪装: choice "1,2,4", "1,2,4/预言家" or "1,2,4/身份=预言家,阵营=…,带刀=无刀"
            disguise = parse_disguise(a.choice)
            if isinstance(disguise, str):
                board.record(a, step, Outcome.INVALID, disguise, spec.rule)
                continue
            first = len(board.feedback)
            note = ",".join(disguise.options)
            board.add_status(Status("伪装", a.actor, "隐狼[伪装]", board.index, note=note))
            for kind, value in disguise.parts().items():
                self.set_surface(board, a.actor, kind, value, "隐狼[伪装]")
            mates = [n for n in board.order if n != a.actor and self._faction(board, n) == WOLF]
            if "3" in disguise.options:
                board.tell(
                    a.actor,
                    f"与你实际阵营相同的角色：{'、'.join(mates)}（m209.txt:433）",
                    spec.rule,
                )
            if "5" in disguise.options:
                for m in mates:
                    board.tell(m, f"{a.actor}是隐狼（m209.txt:435）", spec.rule)
            self._mirror(board, a.actor, first)
            shown = ""
            if "2" in disguise.options:
                surface = self.surface(board, a.actor)
                shown = f"，表面信息：{surface.describe()}"
                if not disguise.parts():
                    shown += "（选项2未设置任何表面信息，表面信息与实际信息相同，m209.txt:133）"
                board.emit(
                    step,
                    "m209.txt:432",
                    f"{a.actor}的表面信息：{surface.describe()}",
                    actor=a.actor,
                    checked="表面信息",
                )
            board.record(a, step, Outcome.DONE, f"{a.actor}伪装选择{note}{shown}", spec.rule)
        board.emit(step, "m209.txt:529", "开局完成：下一个阶段是竞选日（第1天）")

    def _night_passives(self, board: Board) -> None:
        """常驻 night statuses: 恶灵骑士/小恶魔[主宰黑夜], 月亮[夜] (m209.txt:366, 447, 461)."""
        for name in self._ring(board):
            role = self.role(board, name)
            if (
                role in ("恶灵骑士", "小恶魔", "月亮")
                and "遗忘" not in self.effects(board, name)
                and not (role == "月亮" and self._flipped(board, name))  # [翻牌] (m209.txt:63)
            ):
                rule = {
                    "恶灵骑士": "m209.txt:447",
                    "小恶魔": "m209.txt:461",
                    "月亮": "m209.txt:366",
                }[role]
                self.add_status(
                    board, name, "不死", f"{role}（{rule}）", board.index, rule, tonight=True
                )

    def _settle_kills(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        """The group decides (m209.txt:59, 419); 幼狼[激励] gives the night 迅捷1 (m209.txt:442)."""
        kills = [
            a
            for a in actions
            if self.canonical_skill(a.skill) == "杀人"
            and board.alive(a.actor)
            and (h := self.holder(board, a.actor, "杀人")) is not None
            and not self.disabled(board, h)
        ]
        controls = self._phase_controls(board)
        controllers = sorted({controls[n] for n in self._kill_holders(board) if n in controls})
        if len(controllers) > 1:
            # m209.txt:216: 不同的角色操纵同一[团队]的角色 → 这次[团队]技能直接算作发动失败
            why = (
                f"不同的角色（{'、'.join(controllers)}）操纵了狼人阵营[团队]的角色，"
                "今晚的[团队]技能<杀人>无论如何发动都直接算作发动失败（m209.txt:216）"
            )
            board.emit("深夜2", "m209.txt:216", why)
            for a in kills:
                board.record(a, "深夜2", Outcome.FIZZLED, why, "m209.txt:216")
            return [a for a in actions if all(a is not k for k in kills)]
        if not kills:
            return list(actions)
        # [迅捷1] (m209.txt:55): one extra launch tonight, spent once — 月亮's extra round
        # included (scratch "swift_spent" outlives the rounds)
        swift = board.setting("swift_kill", "") == str(board.night)
        spent: set[str] = board.scratch.setdefault("swift_spent", set())
        allowed = 1 + (1 if swift and "杀人" not in spent else 0)
        distinct: list[tuple[str, ...]] = []
        keep: list[Action] = []
        dropped: set[int] = set()
        for a in sorted(kills, key=lambda a: (board.seat(a.actor), a.sort_key())):
            if a.targets in distinct:
                board.record(
                    a,
                    "深夜2",
                    Outcome.INVALID,
                    "与狼群已提交的<杀人>目标相同，只结算一次",
                    "m209.txt:419",
                )
                dropped.add(id(a))
                continue
            distinct.append(a.targets)
            keep.append(a)
        if len(distinct) > allowed:
            listing = "、".join(f"{a.actor}→{'、'.join(a.targets)}" for a in keep)
            for a in keep:
                board.record(
                    a,
                    "深夜2",
                    Outcome.INVALID,
                    f"狼群提交了{len(distinct)}个不同的<杀人>目标（{listing}），"
                    f"今晚只能发动{allowed}次（m209.txt:59, 442）；请导演只保留狼群的决定",
                    "m209.txt:419",
                )
                dropped.add(id(a))
        elif len(distinct) > 1:
            spent.add("杀人")
        return [a for a in actions if id(a) not in dropped]

    # redirects (m209.txt:68): 选择目标 → 噬时狼妃[时间逆流] → 魔术师[交换] → 结算目标
    def _redirect(self, board: Board, p: Pass) -> tuple[str, ...]:
        targets = list(p.action.targets)
        trace: list[str] = []
        rev = board.scratch.get("reversal")
        if rev is not None and self._faction(board, p.action.actor) != WOLF:
            target, queen = rev
            for i, t in enumerate(targets):
                if t == target:
                    targets[i] = p.action.actor
                    trace.append(f"噬时狼妃[时间逆流]：{t}→{p.action.actor}（m209.txt:456）")
                    board.scratch.setdefault("bounced", []).append((queen, p.spec.name))
        for a, b in board.scratch.get("swaps", []):
            moved = [b if t == a else a if t == b else t for t in targets]
            for before, after in zip(targets, moved, strict=True):
                if before != after:
                    trace.append(f"魔术师[交换]：{before}→{after}（m209.txt:265）")
            targets = moved
        hidden = [t for t in targets if board.statuses_of(t, "隐身")]
        for t in hidden:  # m209.txt:107: [隐身] leaves the 结算目标
            trace.append(f"[隐身]：{t}移除出结算目标（m209.txt:107）")
        targets = [t for t in targets if t not in hidden]
        p.resolved, p.trace = tuple(targets), tuple(trace)
        if len(targets) < p.spec.targets and p.spec.name not in ("交换", "结印"):
            raise _NoTarget
        return p.resolved

    def _attack(
        self, board: Board, slot: int, kind: str, source: str, target: str, cause: str, rule: str
    ) -> None:
        """Queue an attack for 凌晨2's death list (m209.txt:574-577)."""
        attacks = board.scratch.setdefault("attacks", [])
        attacks.append((slot, len(attacks), kind, source, target, cause, rule))

    def _h_reversal(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        board.scratch["reversal"] = (t, p.action.actor)
        if board.join_wolf_group(p.action.actor):
            board.tell(p.action.actor, "你获得[群内]标签（m209.txt:454）", "m209.txt:454")
        return Outcome.DONE, f"今晚对{t}发动的非狼人阵营[指定]技能将反弹给发动者"

    def _h_fear(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        self.add_negative(board, t, "恐惧", f"{p.action.actor}[恐惧]", board.index, "m209.txt:478")
        if board.join_wolf_group(p.action.actor):
            board.tell(p.action.actor, "你获得[群内]标签（m209.txt:476）", "m209.txt:476")
        return Outcome.DONE, f"{t}获得[恐惧]，持续至下一个正午开始"

    def _h_seal(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        targets = self._redirect(board, p)
        actor = p.action.actor
        if len(set(targets)) != 3:
            return Outcome.FIZZLED, "结算目标不是正好3人，无效果（m209.txt:321）"
        cats = sorted(self.category.get(self.role(board, t), "") for t in targets)
        if cats == ["弱神", "强神", "狼人"]:
            mine = self._faction(board, actor)
            for n in board.living():
                if self._faction(board, n) != mine:
                    self.add_negative(
                        board, n, "沉默", f"{actor}[结印]", board.index + 1, "m209.txt:317"
                    )
            return (
                Outcome.DONE,
                "1狼1强神1弱神：与道士实际阵营不一致的角色获得[沉默]至下一个夜晚开始",
            )
        if cats == ["狼人"] * 3:
            for t in targets:
                self.add_negative(board, t, "缴械", f"{actor}[结印]", board.index, "m209.txt:318")
            return Outcome.DONE, "3狼：结算目标获得[缴械]至下一个正午开始"
        if cats == ["强神"] * 3:
            board.settings["reveal_vote_out"] = str(
                board.night + 1 if board.night is not None else 0
            )
            return Outcome.DONE, "3强神：下一天被投票出局的角色翻牌"
        if cats == ["弱神"] * 3:
            self.add_status(board, actor, "独裁", f"{actor}[结印]", board.index + 1, "m209.txt:320")
            return Outcome.DONE, "3弱神：道士获得[独裁]至下一个夜晚开始"
        return Outcome.DONE, "其余情况，无效果（m209.txt:321）"

    def _h_swap(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        targets = self._redirect(board, p)
        if len(set(targets)) != 2:
            return Outcome.FIZZLED, "最终结算目标不是2个角色，交换无效（m209.txt:265）"
        swaps = board.scratch.setdefault("swaps", [])
        used = {t for pair in swaps for t in pair}
        if used & set(targets):
            return Outcome.FIZZLED, "结算到先交换的结算目标，交换无效（m209.txt:266）"
        swaps.append(tuple(targets))
        return Outcome.DONE, f"当晚之后所有[指定]技能中{targets[0]}与{targets[1]}互换"

    def _h_freeze(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        self.add_negative(board, t, "冰冻", f"{p.action.actor}[冰冻]", board.index, "m209.txt:310")
        return Outcome.DONE, f"{t}获得[冰冻]，持续至下一个正午开始"

    def _h_guard(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        kinds = ["守护"]
        if p.spec.name == "守护" and self._guard_mode(board, p.action.actor) == "版杀守卫":
            kinds.append("坚韧")
        for k in kinds:
            self.add_status(
                board,
                t,
                k,
                f"{p.action.actor}[{p.spec.name}]",
                board.index,
                p.spec.rule,
                tonight=True,
            )
        return Outcome.DONE, f"{t}获得{''.join(f'[{k}]' for k in kinds)}，持续至夜晚结束"

    def _h_night_guard(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        self.add_status(
            board, t, "不死", f"{p.action.actor}[暗夜护卫]", board.index + 1, "m209.txt:328"
        )
        board.remember(p.holder.card, "排斥:暗夜护卫", ())
        return Outcome.DONE, f"{t}获得[不死]，持续到下一个黄昏结束"

    def _h_dream(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        actor = p.action.actor
        for k in ("守护", "坚韧", "特防"):
            self.add_status(
                board, t, k, f"{actor}[摄梦]", board.index, "m209.txt:271", tonight=True
            )
        board.scratch.setdefault("dreams", []).append((actor, t))
        before = any(
            m.skill == "摄梦结算" and t in m.targets and m.phase == board.index - 2
            for m in board.memory
        )
        board.memory.append(Memory(p.holder.card, "摄梦结算", board.index, (t,)))
        extra = ""
        if before:
            self._attack(board, 4, "暴击", actor, t, "摄梦人[摄梦]连续两夜", "m209.txt:271")
            extra = "；连续两夜被摄梦，承受[暴击]"
        return Outcome.DONE, f"{t}当晚获得[守护][坚韧][特防]{extra}"

    def _checked_evil(self, board: Board, p: Pass, t: str) -> None:
        if self.role(board, t) == "恶灵骑士" and p.spec.name in SEER_SKILLS:
            board.scratch.setdefault("evil", []).append(
                (0, len(board.scratch.get("evil", [])), t, p.action.actor)
            )

    def _h_inspect(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        s = self.surface(board, t)
        text = f"查验：{p.action.targets[0]}的表面阵营为{s.faction}，表面身份为{s.identity}"
        board.memory.append(Memory(p.holder.card, "查验结果", board.index, (text,)))
        board.tell(p.action.actor, text + "（m209.txt:425）", "m209.txt:425")
        return Outcome.DONE, text + self._surface_note(board, t)

    def _h_gaze(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        actor = p.action.actor
        results = [
            m.targets[0] for m in board.memory if m.card == p.holder.card and m.skill == "查验结果"
        ]
        mates = [n for n in self._ring(board) if n != actor and self._faction(board, n) == WOLF]
        for m in mates:
            board.tell(
                m, f"石像鬼{actor}[凝望]：" + ("；".join(results) or "没有查验结果"), "m209.txt:426"
            )
        self._lose(board, actor, "查验", "石像鬼[凝望]")
        self._lose(board, actor, "接刀", "石像鬼[凝望]")
        return (
            Outcome.DONE,
            f"把{len(results)}条查验结果发给{'、'.join(mates) or '无人'}，失去<查验>与[接刀]",
        )

    def _h_seer(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        self._checked_evil(board, p, t)
        chosen = p.action.targets[0]
        word = "村民阵营" if self.surface(board, t).faction == VILLAGE else "非村民阵营"
        text = f"预言：选择目标{chosen}为{word}"
        board.memory.append(Memory(p.holder.card, "预言结果", board.index, (t, word)))
        board.tell(p.action.actor, text + "（m209.txt:235）", "m209.txt:235")
        return Outcome.DONE, text + self._surface_note(board, t)

    def _h_medium(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        self._checked_evil(board, p, t)
        text = f"通灵：选择目标{p.action.targets[0]}是{self.surface(board, t).identity}身份"
        board.tell(p.action.actor, text + "（m209.txt:241）", "m209.txt:241")
        return Outcome.DONE, text + self._surface_note(board, t)

    def _h_fox(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        targets = p.action.targets
        for t in targets:
            self._checked_evil(board, p, t)
        # m209.txt:245 reads the [表面身份]: the camp of the identity shown
        village = [faction_of(self.surface(board, t).identity) == VILLAGE for t in targets]
        if all(village) or not any(village):
            word = "<村民阵营>" if all(village) else "<非村民阵营>"
            text = f"狡黠：{'、'.join(targets)}都为{word}"
            self._lose(board, p.action.actor, "狡黠", "狐狸[狡黠]成功")
        else:
            text = "狡黠：气息杂乱无法分辨"
        board.tell(p.action.actor, text + "（m209.txt:245）", "m209.txt:245")
        return Outcome.DONE, text + "".join(self._surface_note(board, t) for t in targets)

    def _h_sense(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        text = f"感知：选择目标{p.action.targets[0]}是{self.surface(board, t).faction}"
        board.tell(p.action.actor, text + "（m209.txt:362）", "m209.txt:362")
        return Outcome.DONE, text + self._surface_note(board, t)

    def _h_pipe(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        targets = self._redirect(board, p)
        got = [
            t
            for t in targets
            if self.add_negative(board, t, "狂躁", f"{p.action.actor}[迷惑]", None, "m209.txt:499")
        ]
        return Outcome.DONE, f"{'、'.join(got) or '无人'}永久获得[狂躁]"

    def _h_charm(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        self.add_negative(board, t, "魅惑", p.action.actor, board.index + 1, "m209.txt:483")
        return Outcome.DONE, f"{t}获得[魅惑]，持续至下一个夜晚开始"

    def _h_gift(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        actor = p.action.actor
        if self._judged_faction(board, t, actor) == WOLF:
            board.tell(actor, "送礼失败（m209.txt:390）", "m209.txt:390")
            self._attack(board, 8, "穿透", actor, actor, "黑商[馈赠]给狼", "m209.txt:390")
            return Outcome.DONE, f"{t}为狼人阵营：送礼失败，黑商受到[穿透]"
        board.scratch.setdefault("gifts", []).append((t, p.action.choice, actor))
        return Outcome.DONE, f"{t}将在夜晚结束时获得[{p.action.choice}]"

    def _h_kill(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        board.scratch.setdefault("pointed", []).extend(p.action.targets)
        self._attack(board, 0, "指杀", p.action.actor, t, "狼人[杀人]", "m209.txt:420")
        return Outcome.DONE, f"对{t}造成[指杀]（凌晨2结算）"

    def _h_sacrifice(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        choice = (p.action.choice or "").strip()
        slot = ATTACK_SLOTS.index(choice) if choice in ATTACK_SLOTS else 1
        self._attack(
            board, slot, "暴击", p.action.actor, p.action.actor, "幼狼[牺牲]", "m209.txt:443"
        )
        return Outcome.DONE, f"幼狼对自己造成[暴击]，在「{ATTACK_SLOTS[slot]}」处结算"

    def _h_charge(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        board.use_charge(p.holder.card, "报复")
        board.scratch.setdefault("pointed", []).extend(p.action.targets)
        self._attack(board, 2, "指杀", p.action.actor, t, "黑狼王[冲锋]", "m209.txt:469")
        return Outcome.DONE, f"消耗1点报复次数，对{t}造成[指杀]"

    def _h_stalk(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        if f"{VOTE_OBJECTS}{board.night}" not in board.settings:
            board.emit(
                "深夜2",
                "m209.txt:384",
                f"未记录第{board.night}天的投票对象（计票的 ballots），<潜行>的[当天投票对象]"
                "限制未核对，请导演确认",
                actor=p.action.actor,
            )
        targets = self._redirect(board, p)
        for t in targets:
            self._attack(board, 5, "暴击", p.action.actor, t, "潜行者[潜行]", "m209.txt:385")
        return Outcome.DONE, f"对{'、'.join(targets)}造成[暴击]"

    def _h_hunt(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        actor = p.action.actor
        c = board.charge(p.holder.card, "猎杀")
        assert c is not None
        faction = self._judged_faction(board, t, actor)
        extra = 0 if faction == WOLF else 2 if faction == VILLAGE else 1
        left = c.remaining - 1 - extra
        board.set_charge(replace(c, remaining=left))
        parts = [f"{t}的实际阵营判定为{faction}，次数剩余{left}"]
        if faction == WOLF:
            self._attack(board, 6, "穿透", actor, t, "猎魔人[猎杀]", "m209.txt:277")
            parts.append(f"{t}受到[穿透]")
        if left < 0:
            self._attack(board, 6, "穿透", actor, actor, "猎魔人[猎杀]次数为负", "m209.txt:278")
            parts.append("次数为负数，猎魔人受到[穿透]")
        return Outcome.DONE, "；".join(parts)

    def before_step(self, board: Board, step: Step) -> None:
        if step.key != K_DAWN1:
            return
        pointed = board.scratch.get("pointed", [])
        for name in self._ring(board):
            if self.role(board, name) != "女巫" or "遗忘" in self.effects(board, name):
                continue
            listing = sorted(set(pointed), key=board.seat)
            text = "灵通：今晚[指杀]技能的选择目标：" + ("、".join(listing) if listing else "无")
            self._tell_user(board, name, text + "（m209.txt:298）", "m209.txt:298")
            board.emit("凌晨1", "m209.txt:298", f"灵通反馈给{name}", actor=name, because=text)

    def _h_antidote(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        self.add_status(
            board, t, "守护", f"{p.action.actor}[救药]", board.index, "m209.txt:300", tonight=True
        )
        board.remember(p.holder.card, "排斥:救药", ())
        return Outcome.DONE, f"{t}获得[守护]，持续至夜晚结束"

    def _h_poison(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        board.remember(p.holder.card, f"排斥:{p.spec.name}", ())  # 馈赠毒药 too (m209.txt:301)
        cause = "女巫[毒药]" if p.spec.name == "毒药" else "黑商馈赠的[毒药]"
        self._attack(board, 7, "特攻", p.action.actor, t, cause, p.spec.rule)
        return Outcome.DONE, f"对{t}造成[特攻]（凌晨2结算）"

    def _h_forest(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        for n in board.living():
            self.add_status(
                board,
                n,
                "不死",
                f"{p.action.actor}[森林庇护]",
                board.index,
                "m209.txt:283",
                tonight=True,
            )
        return Outcome.DONE, "所有角色仅当晚获得[不死]"

    def _h_demon_eye(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        (t,) = self._redirect(board, p)
        ident = self.surface(board, t).identity
        side = {"狼人": "狼", "强神": "强神", "弱神": "弱神"}.get(
            self.category.get(ident, ""), "其他身份"
        )
        text = f"恶魔之眼：选择目标{p.action.targets[0]}是{side}"
        board.tell(p.action.actor, text + "（m209.txt:463）", "m209.txt:463")
        return Outcome.DONE, text + self._surface_note(board, t)

    def _evil(self, board: Board) -> None:
        """恶灵骑士[邪恶] (m209.txt:448-450): one counter, 验人系 first, then attacks."""
        for name in self._ring(board):
            if self.role(board, name) != "恶灵骑士" or self._lost(board, name, "邪恶"):
                continue
            if "遗忘" in self.effects(board, name):
                continue
            sources = [s for (_o, _i, t, s) in board.scratch.get("evil", []) if t == name]
            sources += [
                src
                for (_slot, _seq, _kind, src, t, _c, _r) in board.scratch.get("attacks", [])
                if t == name and self._faction(board, src) == VILLAGE
            ]
            if not sources:
                continue
            self._attack(board, 3, "穿透", name, sources[0], "恶灵骑士[邪恶]反弹", "m209.txt:448")
            self._lose(board, name, "邪恶", "恶灵骑士[邪恶]已触发（限定）")
            board.emit("凌晨1", "m209.txt:450", f"恶灵骑士[邪恶]反击{sources[0]}", actor=name)

    def _dawn2(self, board: Board) -> None:
        """凌晨2: the death list in the text's order (m209.txt:573-577)."""
        attacks = sorted(board.scratch.get("attacks", []), key=lambda a: (a[0], a[1]))
        for slot, _seq, kind, source, target, cause, rule in attacks:
            self.hit(board, kind, source, target, f"凌晨2：{ATTACK_SLOTS[slot]}", rule, cause)
            board.drain()

    def _defence(self, board: Board, target: str, kind: str) -> Status | None:
        """The defence status that stops a ``kind`` attack on ``target`` (出局结算流程 1,
        m209.txt:185): the one ending soonest; None when nothing stops it. At 晨曦 — which
        belongs to the day (晨曦/正午/黄昏属于白天, m209.txt:46) — the statuses granted for the
        night (当晚 / 持续至夜晚结束) no longer hold, and 太阳's daytime [不死] (m209.txt:376)
        already does."""
        forgot = "遗忘" in self.effects(board, target)  # [遗忘] loses 常驻 effects (m209.txt:94)
        dawn = board.scratch.get("dawn", False)
        held = [
            s
            for s in board.statuses_of(target)
            if not (forgot and s.note == "常驻") and not (dawn and s.note == TONIGHT)
        ]
        # 1: a status that offsets this attack, the soonest to end; 2: only then [不死], one of
        # the 免于出局 effects (m209.txt:185-186)
        offsets = [s for s in held if s.kind == DEFENCE_FOR[kind]]
        blocks = offsets or [s for s in held if s.kind == "不死"]
        if not blocks and dawn and self._sun_by_day(board, target):
            return Status("不死", target, SUN_DAY, board.index, board.index)
        if not blocks:
            return None
        return min(
            blocks, key=lambda s: (s.until is None, s.until or 0, s.count is None, s.sort_key())
        )

    def _own_trigger(self, board: Board, name: str, skill: str) -> bool:
        """Whether the moon's/sun's going out still triggers its <``skill``> (长夜漫漫, 日不落):
        not once the card was flipped (m209.txt:63), nor under [遗忘] (m209.txt:94)."""
        if self._flipped(board, name):
            board.emit("出局", "m209.txt:63", f"{name}的身份牌已翻开，<{skill}>[翻牌]不再触发")
            return False
        if "遗忘" in self.effects(board, name):
            board.emit("出局", "m209.txt:94", f"{name}持有[遗忘]，失去<{skill}>，不触发")
            return False
        return True

    def _own_immunity_spent(self, board: Board, name: str, step: str) -> None:
        """月亮[夜] / 太阳[日] kept ``name`` in (m209.txt:366, 376): they are [翻牌] skills
        (m209.txt:63), so the card flips, and once it has the skill no longer acts — no more
        [不死] from it after the one held now, nor its trigger when the moon or sun goes out.
        Every 免于出局 effect resolves (m209.txt:186), so it flips also when another [不死]
        kept ``name`` in."""
        role = self.role(board, name)
        dawn = board.scratch.get("dawn", False)  # 晨曦 belongs to the day (m209.txt:46)
        if role == "月亮" and board.night is not None and not dawn:
            own = [s for s in board.statuses_of(name, "不死") if s.source.startswith("月亮（")]
            if not own:  # no [不死] of her own tonight ([漏洞] …): nothing of hers acted
                return
        elif role == "太阳" and (board.night is None or dawn) and self._sun_by_day(board, name):
            own = [s for s in board.statuses_of(name, "不死") if s.source == SUN_DAY]
        else:
            return
        if "遗忘" in self.effects(board, name) or self._flipped(board, name):
            return
        # the [不死] already held still holds to its end (机制和那些防御状态相同, m209.txt:112)
        skill = "夜" if role == "月亮" else "日"
        self._flip(board, name, f"{role}[{skill}]")
        board.emit(
            step,
            "m209.txt:63",
            f"{name}的<{skill}>[翻牌]：身份牌翻开，此后不再获得[不死]，出局时也不再触发",
            resolved=(name,),
        )

    def _sun_by_day(self, board: Board, name: str) -> bool:
        """太阳[日] (m209.txt:376) 游戏日白天获得[不死]状态: a living sun not under [遗忘] (its
        强制 skill lost) nor [漏洞] (immune to non-negative statuses, m209.txt:99)."""
        return (
            board.alive(name)
            and self.role(board, name) == "太阳"
            and "遗忘" not in self.effects(board, name)
            and not board.statuses_of(name, "漏洞")
            and not self._flipped(board, name)  # [翻牌]: used once (m209.txt:63)
        )

    def hit(
        self,
        board: Board,
        kind: str,
        source: str,
        target: str,
        step: str,
        rule: str,
        cause: str,
        *,
        last_words: bool = True,
    ) -> Death | None:
        """出局结算流程 1–3 (m209.txt:184-187)."""
        if not board.alive(target):
            board.emit(step, rule, f"{target}已出局，不再结算", actor=source, because=cause)
            return None
        if self._left(board, target):  # 也不受其他技能影响 (m209.txt:210)
            board.emit(
                step,
                "m209.txt:210",
                f"{target}已离开游戏，不受影响，[{kind}]不结算",
                actor=source,
                because=cause,
            )
            return None
        use = self._defence(board, target, kind)
        if use is not None:
            if use.kind == "不死":
                self._own_immunity_spent(board, target, step)
                if kind == "投票出局":  # 这些状态或效果全部结算 (m209.txt:186)
                    self._idiot_survives(board, target, step)
            if use.count is not None:
                board.remove_status(use)
                if use.count > 1:
                    board.add_status(replace(use, count=use.count - 1))
            board.emit(
                step,
                "m209.txt:185",
                f"[{kind}]对{target}无效：[{use.kind}]抵消",
                actor=source,
                resolved=(target,),
                checked=use.kind,
                because=cause,
            )
            return None
        if kind == "投票出局" and self._idiot_survives(board, target, step):
            return None
        village = self._faction(board, source) == VILLAGE if board.has(source) else False
        board.scratch.setdefault("no_words", set())
        if not last_words:
            board.scratch["no_words"].add(target)
        return board.card_out(
            target,
            cause=cause,
            step=step,
            rule=rule,
            source=source,
            kind=kind,
            village_skill=village,
        )

    # ------------------------------------------------------------------ chains
    def after_card_out(self, board: Board, death: Death) -> None:
        name, role = death.player, death.card
        triggers: list[Trigger] = []
        noon_special = death.kind == "特攻" and board.scratch.get("noon", False)
        if role == "狼美人" and not noon_special:
            for s in sorted(board.statuses, key=Status.sort_key):
                if s.kind == "魅惑" and s.source == name and s.active_at(board.index):
                    triggers.append(
                        Trigger(
                            f"魅惑:{s.holder}",
                            later(
                                self.hit,
                                "暴击",
                                name,
                                s.holder,
                                "连带出局：狼美人魅惑",
                                "m209.txt:484",
                                "狼美人[魅惑]连带",
                            ),
                        )
                    )
        # 若发动者当晚出局 (m209.txt:271): not at 晨曦, which belongs to the day (m209.txt:46)
        if board.night is not None and not board.scratch.get("dawn", False):
            for dreamer, t in board.scratch.get("dreams", []):
                if dreamer == name:
                    triggers.append(
                        Trigger(
                            f"摄梦:{t}",
                            later(
                                self.hit,
                                "暴击",
                                name,
                                t,
                                "连带出局：摄梦人摄梦",
                                "m209.txt:271",
                                "摄梦人[摄梦]连带",
                            ),
                        )
                    )
        if triggers:
            board.push_front(*triggers)
        if role == "幼狼" and not death.red:
            nxt = board.night + 1 if board.night is not None else board.phase.number
            if board.night is not None and board.scratch.get("rounds_left", 0) > 0:
                nxt = board.night  # 月亮's extra round has its own 深夜 (m209.txt:367)
            board.settings["swift_kill"] = str(nxt)
            board.emit(death.step, "m209.txt:442", f"幼狼出局：第{nxt}晚深夜狼人<杀人>获得[迅捷1]")
        if role == "月亮" and not death.red and self._own_trigger(board, name, "夜"):
            board.announce("长夜漫漫")
            nxt = board.night + 1 if board.night is not None else board.phase.number
            key = f"extra_nights:{nxt}"
            board.settings[key] = str(int(board.setting(key, "0")) + 1)  # 可以叠加 (m209.txt:371)
            board.emit(
                death.step,
                "m209.txt:367",
                f"月亮出局：第{nxt}晚额外进行一轮[早夜-晨曦第一阶段]（行动用 choice=第二轮 标记）",
            )
        if role == "太阳" and not death.red and self._own_trigger(board, name, "日"):
            board.announce("日不落")
            self._sun_falls(board, name)
        if role == PIPER:
            for s in list(board.statuses):
                if s.kind == "狂躁" and s.until is None:
                    board.remove_status(s)
            board.announce("吹笛者已出局，所有吹笛状态已解除")
        if role == "长老" and (death.kind == "投票出局" or death.village_skill):
            for n in board.living():
                if self._faction(board, n) == VILLAGE:
                    self.add_negative(board, n, "净化", "长老[村镇之殇]", None, "m209.txt:339")
        if death.kind not in ("特攻", "暴击") and not death.red:
            shoots = role == "猎人" or (
                role == "黑狼王"
                and (c := board.charge(death.card_uid, "报复")) is not None
                and c.remaining > 0
            )
            if shoots or any(
                c.card == death.card_uid and c.skill == "馈赠最后一枪" and c.remaining > 0
                for c in board.charges.values()
            ):
                board.scratch.setdefault("shooters", []).append(name)
                if board.scratch.get("shooting"):
                    board.scratch.setdefault("inserted", []).append(name)
        if board.sheriff == name:
            board.defer(Trigger(f"殉职:{name}", later(self._handover, name, "殉职")))
        if not board.alive(name):
            self._release_controls_of(board, name, f"操纵者{name}出局")
            for st in board.statuses_of(name, CONTROLLED):
                board.remove_status(st)
        self._last_words(board, death)

    def _sun_falls(self, board: Board, sun: str) -> None:
        """太阳[日]<触发> (m209.txt:377-378): the next day gets an extra [正午] round in which
        only the players the sun names speak and vote. The sun may name them at once (an
        action with its death) or after watching the first round (a day action)."""
        day = board.night + 1 if board.night is not None else board.phase.number + 1
        key = f"{SUN_NOON}{day}"
        suns = [s for s in board.setting(key, "").split("\t") if s]
        board.settings[key] = "\t".join([*suns, sun])  # 按照出局顺序轮流触发 (m209.txt:378)
        board.emit(
            board.deaths[-1].step if board.deaths else "日不落",
            "m209.txt:377",
            f"太阳{sun}出局：第{day}天额外进行一轮[正午]（此游戏日只有现实一天）",
        )
        action = board.take_prepared(sun, "日不落")
        if action is not None:
            self._sun_speakers(board, sun, action, day)
        else:
            self._ask_sun(board, sun, day)

    def _ask_sun(self, board: Board, sun: str, day: int) -> None:
        limit = len([n for n in board.living() if n != sun]) // 2
        board.need(
            sun,
            "日不落",
            f"太阳出局：第{day}天额外进行一轮[正午]，太阳须指定在这一轮可以发言（及投票）的角色，"
            f"最多{limit}人，可看完第一轮[正午]再决定；请在计票前记录（{RECORD}）",
            "m209.txt:377",
            target="…",
        )

    def _sun_speakers(self, board: Board, sun: str, action: Action, day: int) -> bool:
        """太阳[日] (m209.txt:377-379): in the extra 正午 only the named players speak and vote
        (at most half of the living); a vote post without a post is an abstention."""
        rule = "m209.txt:377"
        index = Phase.day(day).index
        living = [n for n in board.living() if n != sun]
        targets = list(dict.fromkeys(action.targets))
        why = sun_naming_problem(living, targets)
        if why:
            board.record(action, "日不落", Outcome.INVALID, why, rule)
            board.need(sun, "日不落", f"太阳的指定无效：{why}", rule)
            return False
        for t in targets:
            board.add_status(Status("发言许可", t, f"{sun}[日]", index, index))
        line = f"日不落：第{day}天额外一轮[正午]只有{'、'.join(targets)}可以发言"
        board.announce(line)
        board.record(action, "日不落", Outcome.DONE, line, rule, tuple(targets))
        return True

    def _last_words(self, board: Board, death: Death) -> None:
        """遗言数量为人数配备最少狼数量 (m209.txt:191); no Discuz! code (m209.txt:193)."""
        if death.red:
            return
        used = int(board.setting("last_words_used", "0"))
        if used >= LAST_WORDS:
            board.tell(
                death.player, f"遗言名额（共{LAST_WORDS}条）已用完，你没有遗言。", "m209.txt:191"
            )
            return
        board.settings["last_words_used"] = str(used + 1)
        granted = [n for n in board.setting(LAST_WORDS_GRANTED, "").split("\t") if n]
        board.settings[LAST_WORDS_GRANTED] = "\t".join(granted)  # known, even if none
        if death.player in board.scratch.get("no_words", set()):
            board.tell(
                death.player,
                "你的遗言必须强制留空（白狼王[神风突击]，m209.txt:489）。",
                "m209.txt:489",
            )
            return
        board.settings[LAST_WORDS_GRANTED] = "\t".join([*granted, f"{death.player}@{board.phase}"])
        board.tell(
            death.player,
            "你可以留下遗言（遗言中禁止使用Discuz!代码，m209.txt:192-193）。",
            "m209.txt:192",
        )

    def _handover(self, board: Board, name: str, why: str) -> None:
        """殉职 (m209.txt:227): hand over or lose the sheriff badge; 白痴 may not receive it."""
        if board.sheriff != name:
            return
        chooser = board.scratch.get("kamikaze_sheriff", {}).get(name, name)
        action = board.take_prepared(chooser, "殉职")
        step = "殉职"
        if why == IDIOT_KEPT_IN and not self._idiot_hands_over(board, name, action):
            return
        if action is None:
            board.need(
                chooser,
                "殉职",
                f"警长{name}出局：{chooser}须选择移交警长或流失（{RECORD}，或 {CHOICE}），"
                "未选择则警长流失",
                "m209.txt:227",
                target="某人",
                choices=("流失",),
            )
            board.sheriff = None
            board.announce("警长流失")
            board.emit(step, "m209.txt:227", f"{name}未选择继任者，警长流失（待导演确认）")
            return
        target = action.targets[0] if action.targets else None
        bad = (
            target is None
            or not board.alive(target)
            or bool(self._left(board, target))
            or target == name
            or (self.role(board, target) == "白痴" and self._flipped(board, target))
        )
        if bad or target is None:
            board.sheriff = None
            why2 = (
                "选择流失"
                if target is None
                else f"{target}不能继任（已出局、已离开游戏、是本人或已翻牌的白痴，m209.txt:357）"
            )
            board.record(
                action,
                step,
                Outcome.DONE if target is None else Outcome.INVALID,
                f"警长流失：{why2}",
                "m209.txt:227",
            )
            board.announce("警长流失")
            return
        board.sheriff = target
        board.record(
            action, step, Outcome.DONE, f"{name}移交警长给{target}", "m209.txt:227", (target,)
        )
        board.announce(f"{name}（{why}）移交警长给{target}")
        board.tell(target, "你成为警长（m209.txt:225）。", "m209.txt:225")

    def _idiot_survives(self, board: Board, target: str, step: str) -> bool:
        """白痴[大难不死] (m209.txt:357) as ``target`` takes a 投票出局: he flips, gains [自由]
        [霸道] for good and votes no more; a sheriff hands the badge on. Also when a [不死]
        kept him in: 出局结算流程 2, 这些状态或效果全部结算 (m209.txt:186). False when it does
        not trigger (not a 白痴, flipped already, under [遗忘])."""
        if (
            self.role(board, target) != "白痴"
            or self._flipped(board, target)
            or "遗忘" in self.effects(board, target)
        ):
            return False
        self._flip(board, target, IDIOT_KEPT_IN)
        for k in ("自由", "霸道"):
            self.add_status(board, target, k, IDIOT_KEPT_IN, None, "m209.txt:357")
        board.announce(f"{target}是白痴，[大难不死]，永久获得[自由][霸道]，之后不能投票")
        board.emit(step, "m209.txt:357", f"{target}[大难不死]，不出局", resolved=(target,))
        if board.sheriff == target:
            board.defer(Trigger(f"殉职:{target}", later(self._handover, target, IDIOT_KEPT_IN)))
        return True

    def _idiot_hands_over(self, board: Board, name: str, action: Action | None) -> bool:
        """若白痴是警长，须选择一名其他角色移交警长 (m209.txt:357): no 流失. True when ``action``
        names someone who can take the badge; otherwise the director is asked (again) and the
        badge stays with the 白痴 until he chooses."""
        target = action.targets[0] if action is not None and action.targets else None
        can = (
            target is not None
            and target != name
            and board.alive(target)
            and not self._left(board, target)
            and not (self.role(board, target) == "白痴" and self._flipped(board, target))
        )
        if can:
            return True
        ask = f"须选择一名其他角色移交警长（{RECORD}），不能流失；选定之前警徽仍在他手里"
        prompt = f"白痴警长{name}[大难不死]，{ask}"
        if action is not None:
            why = (
                "白痴须选择一名其他角色移交警长，不能流失"
                if target is None
                else f"{target}不能继任（已出局、已离开游戏、是本人或已翻牌的白痴）"
            )
            board.record(action, "殉职", Outcome.INVALID, why, IDIOT_RULE)
            # the resolution takes a skill's first record: the refused one is taken back first
            prompt = successor_again(f"白痴警长{name}的殉职选择无效（{why}）", action, ask)
        board.need(
            name,
            "殉职",
            prompt,
            IDIOT_RULE,
            target="某人",
            undo=(action.ref or None) if action is not None else None,
        )
        board.emit("殉职", IDIOT_RULE, f"白痴警长{name}尚未选择继任者（待导演记录）", actor=name)
        return False

    # ------------------------------------------------------------------ shots
    def _morning_shots(self, board: Board, step: str) -> None:
        """晨曦1 / 黄昏1 (m209.txt:536-539, 578-580): 猎人 then 黑狼王, 即时插入结算; among the
        <最后一枪>, the true 猎人's first, then the gifted ones, later-listed role first
        (m209.txt:527)."""
        queue = sorted(
            dict.fromkeys(board.scratch.get("shooters", [])),
            key=lambda n: self._shot_order_on(board, n),
        )
        board.scratch["shooters"] = []
        board.scratch["shooting"] = True
        done: set[str] = set()
        while queue:
            name = queue.pop(0)
            if name in done:
                continue
            done.add(name)
            board.scratch["inserted"] = []
            self._shoot(board, name, step)
            board.drain()
            new = [n for n in board.scratch.get("inserted", []) if n not in done]
            queue[:0] = sorted(new, key=lambda n: self._shot_order_on(board, n))
        board.scratch["shooting"] = False
        board.scratch["shooters"] = []

    def _shot_order_on(self, board: Board, name: str) -> tuple[int, int]:
        role = self.role(board, name)
        if role == "猎人":
            return (0, 0)
        if role == "黑狼王":
            return (2, 0)
        return (1, -int(self.role_rules.get(role, "m209.txt:0").split(":")[1]))

    def _shoot(self, board: Board, name: str, step: str) -> None:
        start = len(board.feedback)
        self._shoot_now(board, name, step)
        self._mirror(board, name, start)

    def _shoot_now(self, board: Board, name: str, step: str) -> None:
        role = self.role(board, name)
        uid = board.player(name).cards[0].uid
        if role == "猎人":
            skill = "最后一枪"
        elif role == "黑狼王":
            skill = "报复"
        else:
            skill = "馈赠最后一枪"
        rule = self.specs[skill].rule
        action = board.take_prepared(name, skill)
        if action is None and skill != "馈赠最后一枪":
            action = board.take_prepared(name, "馈赠最后一枪")
            if action is not None:
                skill, rule = "馈赠最后一枪", self.specs["馈赠最后一枪"].rule
        if action is not None and skill == "最后一枪":
            self._one_shot_only(board, name, step)
        if action is None and "沉默" in self.effects(board, name):
            # [沉默] 不能发动 (m209.txt:92): there is no shot to ask the director for
            board.emit(step, "m209.txt:92", f"{name}处于[沉默]状态，不能发动<{skill}>", actor=name)
            return
        if action is None:
            board.need(
                name,
                skill,
                f"{name}出局，可以发动<{skill}>：记录目标后重新结算（{RECORD}，或 {CHOICE}）",
                rule,
                target="某人",
                choices=("放弃",),
            )
            return
        if action.declined:
            board.record(action, step, Outcome.DONE, f"{name}放弃发动<{skill}>", rule)
            return
        if "沉默" in self.effects(board, name):
            board.record(
                action,
                step,
                Outcome.INVALID,
                f"{name}处于[沉默]状态，不能发动<{skill}>（m209.txt:92）",
                rule,
            )
            return
        if len(action.targets) != 1 or not board.alive(action.targets[0]):
            board.record(action, step, Outcome.INVALID, f"<{skill}>须选择1名未出局的角色", rule)
            board.need(name, skill, f"{name}的<{skill}>目标无效，请重新记录", rule)
            return
        if self._left(board, action.targets[0]):
            board.record(action, step, Outcome.INVALID, self._left_target(action.targets[0]), rule)
            board.need(name, skill, f"{name}的<{skill}>目标无效，请重新记录", rule)
            return
        charge_skill = "报复" if skill == "报复" else skill
        c = (
            board.charge(uid, charge_skill, "")
            if skill != "馈赠最后一枪"
            else next(
                (
                    c
                    for c in board.charges.values()
                    if c.card == uid and c.skill == skill and c.remaining > 0
                ),
                None,
            )
        )
        if c is not None:
            board.set_charge(replace(c, remaining=c.remaining - 1))
        t = action.targets[0]
        board.record(action, step, Outcome.DONE, f"{name}发动<{skill}>，{t}承受[暴击]", rule, (t,))
        board.emit(step, rule, f"{name}[{skill}]→{t}", actor=name, resolved=(t,))
        self.hit(board, "暴击", name, t, step, rule, f"{role}[{skill}]")

    def _one_shot_only(self, board: Board, name: str, step: str) -> None:
        """A 猎人 given 黑商's 猎枪 too holds the one skill twice: 猎枪：获得技能[最后一枪]
        (m209.txt:393) gives the skill it already has, and one going out shoots once. The
        gifted shot recorded beside its own is set aside, saying so (its charge stays)."""
        extra = board.take_prepared(name, "馈赠最后一枪")
        if extra is None:
            return
        board.record(
            extra,
            step,
            Outcome.UNUSED,
            f"{name}是猎人，本来就有<最后一枪>：黑商馈赠的猎枪是同一个技能（m209.txt:393），"
            "一次出局只开一枪，以<最后一枪>的记录为准，<馈赠最后一枪>未发动",
            self.specs["馈赠最后一枪"].rule,
        )

    # ------------------------------------------------------------------ end of night
    def _after_night(self, board: Board) -> None:
        for queen, skill in board.scratch.get("bounced", []):
            self._tell_user(
                board, queen, f"时间逆流反弹了<{skill}>（m209.txt:456）", "m209.txt:456"
            )
        queens = sorted({q for q, _s in board.scratch.get("bounced", [])})
        for q in queens:
            self._lose(board, q, "时间逆流", "噬时狼妃[时间逆流]成功反弹")
        for target, choice, giver in board.scratch.get("gifts", []):
            if not board.alive(target):
                continue
            skill = self.gifts[str(choice)]
            uid = board.player(target).cards[0].uid
            board.set_charge(Charge(uid, skill, 1, giver, board.index + 1))
            board.tell(
                target,
                f"你获得黑商的馈赠：临时技能[{skill[2:]}]，使用一次后丢失（m209.txt:390）",
                "m209.txt:390",
            )

    def end_of_phase(self, board: Board) -> None:
        self._name_controllers(board)
        if board.night == 0:
            return
        if board.night is not None:
            line = self._death_line(board.deaths, "昨晚")
            board.public[:0] = [line or "昨晚无人出局（平安夜）"]
            return
        vote = [d for d in board.deaths if d.kind == "投票出局"]
        other = [d for d in board.deaths if d.kind != "投票出局"]
        if vote:
            board.announce("投票出局：" + "、".join(d.player for d in vote))
        if other:
            board.announce("其他原因出局（按出局顺序）：" + "、".join(d.player for d in other))

    @staticmethod
    def _death_line(deaths: Sequence[Death], when: str) -> str:
        outs = [d.player for d in deaths if d.player_out]
        return f"{when}出局（按出局顺序）：{'、'.join(outs)}" if outs else ""

    # ------------------------------------------------------------------ director actions
    def _director_actions(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        """The director's actions: 离开游戏/回到游戏/操纵夺舍/解除操纵 at once (m209.txt:209-217),
        红牌罚下 at once by night and after the vote by day (m209.txt:177); then the
        controlled players' actions are attributed to their controllers (m209.txt:214)."""
        rest: list[Action] = []
        reds: list[Action] = []
        moves: list[Action] = []
        for a in actions:
            skill = self.canonical_skill(a.skill)
            if skill in ("红牌罚下", FORFEIT):
                reds.append(a)
            elif skill in STATE_ACTIONS:
                moves.append(a)
            else:
                rest.append(a)
        for a in sorted(
            moves,
            key=lambda a: (
                STATE_ACTIONS.index(self.canonical_skill(a.skill)),
                a.at or "",
                a.sort_key(),
            ),
        ):
            self._state_action(board, a)
        # a faction's loss after the red cards that reached it
        reds.sort(key=lambda a: self.canonical_skill(a.skill) == FORFEIT)
        if board.night is not None:
            for a in reds:
                self._red_card(board, a)
        else:
            board.scratch["reds"] = reds
        board.scratch["controlled"] = {
            st.holder: st.source
            for st in sorted(board.statuses, key=Status.sort_key)
            if st.kind == CONTROLLED and st.active_at(board.index) and board.alive(st.holder)
        }
        return self._attribute(board, rest)

    def _state_action(self, board: Board, a: Action) -> None:
        skill = self.canonical_skill(a.skill)
        rule = _DIRECTOR_RULES[skill]
        why = ""
        if not board.has(a.actor):
            why = f"名单中没有玩家「{a.actor}」"
        elif not board.alive(a.actor):
            why = f"{a.actor}已出局"
        if why:
            board.record(a, skill, Outcome.INVALID, why, rule)
            return
        {
            LEAVE: self._leave,
            RETURN: self._return,
            CONTROL: self._control,
            RELEASE: self._release,
        }[skill](board, a, rule)

    def _leave(self, board: Board, a: Action, rule: str) -> None:
        """离开游戏 (m209.txt:210): 暂时 or 永久; a sheriff leaving for good hands over
        (殉职, m209.txt:227); the leaver's controls end."""
        name, kind = a.actor, (a.choice or "").strip()
        now = self._left(board, name)
        why = ""
        if kind not in ("暂时", "永久"):
            why = '<离开游戏>须写明 choice="暂时" 或 "永久"（m209.txt:210）'
        elif now == "永久":
            why = f"{name}已永久离开游戏"
        elif now == kind:
            why = f"{name}已暂时离开游戏"
        if why:
            board.record(a, LEAVE, Outcome.INVALID, why, rule)
            return
        for st in board.statuses_of(name, LEFT):
            board.remove_status(st)
        board.add_status(Status(LEFT, name, "导演", board.index, note=kind))
        win = "算作存活" if kind == "暂时" else "算作出局"
        board.tell(
            name,
            f"你{kind}离开游戏：不在电梯楼中，所有技能失效，不能发言投票和被投票，也不受其他技能影响；"
            f"胜负判定中{win}（m209.txt:210）。",
            rule,
        )
        board.announce(f"{name}{kind}离开游戏")
        board.record(a, LEAVE, Outcome.DONE, f"{name}{kind}离开游戏（胜负判定中{win}）", rule)
        board.emit(LEAVE, rule, f"{name}{kind}离开游戏，胜负判定中{win}", resolved=(name,))
        if board.night is None and name in board.voters:
            board.emit(
                LEAVE,
                rule,
                f"{name}在第{board.phase.number}天离开游戏，但当天的计票仍计入了其选票；"
                "若离开发生在开门之前，请把<离开游戏>记在前一晚后重新计票",
                actor=name,
            )
        self._release_controls_of(board, name, f"操纵者{name}离开游戏")
        if kind == "永久" and board.sheriff == name:
            board.defer(Trigger(f"殉职:{name}", later(self._handover, name, "永久离开游戏")))

    def _return(self, board: Board, a: Action, rule: str) -> None:
        name, now = a.actor, self._left(board, a.actor)
        if now != "暂时":
            why = f"{name}没有离开游戏" if not now else "永久离开游戏的角色不能回到游戏"
            board.record(a, RETURN, Outcome.INVALID, f"{why}（m209.txt:210）", rule)
            return
        for st in board.statuses_of(name, LEFT):
            board.remove_status(st)
        board.tell(name, "你回到游戏（m209.txt:210）。", rule)
        board.announce(f"{name}回到游戏")
        board.record(a, RETURN, Outcome.DONE, f"{name}回到游戏", rule)
        board.emit(RETURN, rule, f"{name}回到游戏", resolved=(name,))

    def _control(self, board: Board, a: Action, rule: str) -> None:
        """操纵夺舍 (m209.txt:214-215): the controlled is told, not by whom; one controller at a
        time — another is told [该角色当前已被他人操纵]."""
        ctl = a.actor
        target = a.targets[0] if len(a.targets) == 1 else ""
        why = ""
        if not target:
            why = "<操纵夺舍>须指定1名被操纵的角色（targets）"
        elif not board.has(target):
            why = f"名单中没有玩家「{target}」"
        elif target == ctl:
            why = "不能操纵自己"
        elif not board.alive(target):
            why = f"{target}已出局，不能被操纵（m209.txt:176）"
        elif self._left(board, ctl):
            why = self._left_reason(board, ctl)
        elif self._left(board, target):
            why = self._left_target(target)
        elif (now := self._controller(board, target)) == ctl:
            why = f"{ctl}已在操纵{target}"
        elif now:
            board.tell(ctl, "[该角色当前已被他人操纵]（m209.txt:215）", "m209.txt:215")
            why = (
                f"{target}当前已被{now}操纵，{ctl}收到通知[该角色当前已被他人操纵]（m209.txt:215）"
            )
        if why:
            board.record(a, CONTROL, Outcome.INVALID, why, rule)
            return
        board.add_status(Status(CONTROLLED, target, ctl, board.index))
        board.tell(
            target,
            "你被人操纵夺舍：在技能可以发动时，由操纵者代替你进行操作，双方都会收到技能反馈；"
            "你不会知道是谁或者是哪个身份在操纵（m209.txt:214）。",
            rule,
        )
        board.tell(
            ctl,
            f"你操纵夺舍了{target}：在{target}的技能可以发动时由你代替操作，发动者依然是{target}"
            "（m209.txt:214）。",
            rule,
        )
        board.record(a, CONTROL, Outcome.DONE, f"{ctl}操纵夺舍{target}", rule, (target,))
        board.emit(CONTROL, rule, f"{ctl}操纵夺舍{target}", actor=ctl, resolved=(target,))

    def _release(self, board: Board, a: Action, rule: str) -> None:
        mine = [
            st
            for st in sorted(board.statuses, key=Status.sort_key)
            if st.kind == CONTROLLED
            and st.source == a.actor
            and (not a.targets or st.holder in a.targets)
        ]
        if not mine:
            whom = "、".join(a.targets) or "任何角色"
            board.record(a, RELEASE, Outcome.INVALID, f"{a.actor}当前没有操纵{whom}", rule)
            return
        for st in mine:
            board.remove_status(st)
            board.tell(st.holder, "你不再被操纵（m209.txt:214）。", rule)
        freed = "、".join(st.holder for st in mine)
        board.record(a, RELEASE, Outcome.DONE, f"{a.actor}解除对{freed}的操纵", rule)
        board.emit(RELEASE, rule, f"{a.actor}解除对{freed}的操纵", actor=a.actor)

    def _attribute(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        """A controlled player's actions are submitted by its controller (m209.txt:214): a
        ``choice`` starting ``操纵:<name>`` must name that controller (a controller of the
        controller does not control, m209.txt:217) and is stripped off."""
        controls = self._phase_controls(board)
        out: list[Action] = []
        for a in actions:
            named, rest = _control_prefix(a.choice)
            if named is None:
                out.append(a)
                continue
            real = controls.get(a.actor, "")
            why = ""
            if not real:
                why = f"{a.actor}当前没有被操纵，不能由{named}代为发动（m209.txt:214）"
            elif named != real:
                why = f"{a.actor}当前由{real}操纵，{named}不能代为发动（m209.txt:215）"
                if controls.get(real) == named:
                    why = (
                        f"{named}操纵的{real}正在操纵{a.actor}：{named}不能控制{a.actor}如何行动，"
                        f"{a.actor}的行动依然由{real}进行操作（m209.txt:217）"
                    )
            if why:
                board.record(a, CONTROL, Outcome.INVALID, why, "m209.txt:214")
                continue
            out.append(replace(a, choice=rest))
        return out

    def _name_controllers(self, board: Board) -> None:
        """Each result of a controlled player's action names the controller (m209.txt:214)."""
        controls = self._phase_controls(board)
        for i, r in enumerate(board.results):
            ctl = controls.get(r.action.actor)
            skill = self.canonical_skill(r.action.skill)
            if ctl and skill not in self.director_actions and r.step != CONTROL:
                note = f"（由{ctl}操纵提交，发动者仍是{r.action.actor}，m209.txt:214）"
                board.results[i] = replace(r, reason=r.reason + note)

    def _red_card(self, board: Board, a: Action) -> None:
        """红牌罚下 (m209.txt:175, 636), or 判负 of the faction its red cards made lose."""
        if self.canonical_skill(a.skill) == FORFEIT:
            self._forfeit(board, a)
            return
        if not board.alive(a.actor):
            board.record(a, "红牌罚下", Outcome.INVALID, f"{a.actor}已出局", "m209.txt:175")
            return
        self._red_out(board, a.actor, "红牌罚下", "m209.txt:175")
        board.record(a, "红牌罚下", Outcome.DONE, f"{a.actor}被红牌罚下，没有遗言", "m209.txt:175")

    def _forfeit(self, board: Board, a: Action) -> None:
        """判负 of ``choice``'s faction by its red cards (m209.txt:637): lost from now on, not
        announced (m209.txt:146); the win check decides what follows (m209.txt:505-506)."""
        rule, factions = _DIRECTOR_RULES[FORFEIT], (THIRD, WOLF, VILLAGE)
        loser = (a.choice or "").strip()
        if loser not in factions:
            why = f"判负须写明阵营（choice = {'、'.join(factions)} 之一）"
            board.record(a, FORFEIT, Outcome.INVALID, why, rule)
            return
        if f"lost:{loser}" in board.settings:
            board.record(a, FORFEIT, Outcome.DONE, f"{loser}此前已判负", rule)
            return
        board.settings[f"lost:{loser}"] = board.phase.label
        board.record(a, FORFEIT, Outcome.DONE, f"{loser}判负（{a.ref or '红牌'}，不予公示）", rule)

    # ------------------------------------------------------------------ the day
    def run_day(self, board: Board, day: DayInput) -> None:
        """正午 (one round, or two with 太阳's [日不落], m209.txt:377-378: ``day`` is the extra
        round's tally and ``day.first_round`` the first round's — or, when the first round was
        not tallied, a <第一轮最高票> action), then 黄昏."""
        board.voters_day = day.day
        board.scratch["closes"] = day.closes  # the noon window's last day (m209.txt:49)
        board.voters = tuple(v for v in day.voters if board.has(v))
        board.vote_cards = {
            n: c.uid for n in board.living() if (c := board.player(n).current) is not None
        }
        rest = self._director_actions(board, day.actions)
        suns = [s for s in board.setting(f"{SUN_NOON}{day.day}", "").split("\t") if s]
        if day.first_round is not None and not suns:
            raise EngineError(
                f"第{day.day}天有第一轮[正午]的计票（游戏文件的 first_vote），"
                "但当天没有太阳[日不落]的额外[正午]（m209.txt:377）："
                "请检查游戏文件的天数，或太阳是否在前一阶段出局"
            )
        firsts = [a for a in rest if self.canonical_skill(a.skill) == FIRST_TOP]
        namings = [a for a in rest if self.canonical_skill(a.skill) == "日不落"]
        ballots = [a for a in rest if self.canonical_skill(a.skill) == FIRST_BALLOT]
        rest = [a for a in rest if a not in firsts and a not in namings and a not in ballots]
        for name in board.living():
            if self._sun_by_day(board, name):
                self.add_status(board, name, "不死", SUN_DAY, board.index, "m209.txt:376")
        # 正午 (m209.txt:49): the noon skills, in the order they were launched
        noon = [a for a in rest if self.canonical_skill(a.skill) in NOON_SKILLS]
        later = [a for a in rest if a not in noon]
        second = [a for a in noon if (a.choice or "").startswith(SECOND_ROUND)]
        first = [a for a in noon if a not in second]
        board.scratch["noon"] = True
        self._noon_round(board, first)
        counted = day.first_round is not None
        first_top = self._first_top(board, suns, firsts, day.first_round)
        first_objects = self._first_ballots(board, suns, ballots, counted=counted)
        if day.first_round is not None:
            first_objects |= {c for _v, c in day.first_round.ballots}
        if suns:
            self._extra_noon(board, day, suns, namings, second)
        else:
            for a in [*second, *namings]:
                board.record(
                    a,
                    "正午",
                    Outcome.INVALID,
                    f"第{day.day}天没有太阳[日不落]的额外[正午]（m209.txt:377）",
                    "m209.txt:377",
                )
        board.scratch["noon"] = False
        self._keep_day_triggers(board, later)
        self._vote_objects(board, day, {first_top, *first_objects} - {""})
        if day.sheriff_election:
            self._election(board, day)
        elif board.scratch.get("blocked_vote"):
            # remembered: the day's vote threads were closed, nobody owed a vote (m209.txt:205)
            board.settings[f"{BLOCKED}{day.day}"] = str(board.scratch["blocked_vote"])
            board.emit(
                "放逐投票",
                "m209.txt:205",
                f"今日[封锁投票]（{board.scratch['blocked_vote']}），不产生放逐投票的最高票",
            )
            board.announce("今日封锁投票，没有放逐投票的最高票")
        else:
            firsts_in = day.first_round or replace(day, decided_by=FIRST_TOP, rule="")
            tops = [(replace(firsts_in, out=first_top), True)] if suns else []
            for top, in_first in [*tops, (day, False)]:
                if in_first and not top.out:
                    continue  # the first round had no top (said when it was read)
                label = ("第一轮[正午]" if in_first else "额外一轮[正午]") if suns else "今日"
                if top.out and suns and not board.alive(top.out):
                    board.emit("放逐投票", "m209.txt:378", f"最高票{top.out}已出局，不再结算")
                    voted = any(d.player == top.out and d.kind == "投票出局" for d in board.deaths)
                    why = "同为第一轮[正午]最高票，已结算" if voted else "已出局"
                    board.announce(f"{label}最高票：{top.out}（{why}）")
                    continue
                self._exile(board, top, label=label)
            if board.scratch.pop("peace", False) and not any(
                d.kind == "投票出局" for d in board.deaths
            ):
                board.announce("今日平安日")  # 公示平安日 (m209.txt:166)
            self._providence(board)
            self._scapegoat(board, day)
        board.drain()
        self._morning_shots(board, "黄昏1")
        board.drain()
        for a in board.scratch.get("reds", []):
            self._red_card(board, a)  # m209.txt:177: after the vote

    def _noon_round(self, board: Board, actions: Sequence[Action]) -> None:
        """The noon skills in launch order; who each one put out is remembered with the time
        it was launched (``scratch["noon_at"]``), for the director to record the out."""
        noon_at: dict[str, str] = board.scratch.setdefault("noon_at", {})
        for a in sorted(actions, key=lambda a: (a.at or "", a.sort_key())):
            before = len(board.deaths)
            self._noon_skill(board, a)
            board.drain()
            for d in board.deaths[before:]:
                if a.at and d.player_out:
                    noon_at.setdefault(d.player, a.at)

    def _first_top(
        self,
        board: Board,
        suns: Sequence[str],
        firsts: Sequence[Action],
        tallied: DayInput | None = None,
    ) -> str:
        """The first 正午 round's top, out at 黄昏 with the extra round's top; it is not out
        before, so it may speak and vote in the extra round (m209.txt:378). From the first
        round's tally (``tallied``) when there is one, else from a <第一轮最高票> action."""
        rule = "m209.txt:378"
        top = ""
        if tallied is not None:
            top = tallied.out or ""
            if top and not board.has(top):
                raise EngineError(f"第一轮[正午]的最高票「{top}」不在名单中，请检查计票")
            if top and not board.alive(top):
                if top not in {d.player for d in board.deaths}:
                    raise EngineError(f"第一轮[正午]的最高票{top}已出局，请检查计票")
                # the tally cannot see a death at noon (决斗, 断钢斩 …, m209.txt:170)
                self._noon_out_top(board, "第一轮[正午]", top, "正午")
                return ""
            peace = self._tally_peace(board, tallied)
            if peace is not None and board.alive(peace[0]):
                self._tally_kept_in(board, "第一轮[正午]", *peace, tallied.decided_by)
            elif not top:
                board.announce(self._no_top_line(tallied, "第一轮[正午]"))
            board.emit(
                "正午",
                tallied.rule or rule,
                f"第一轮[正午]最高票：{top}（黄昏结算）" if top else "第一轮[正午]没有最高票",
                resolved=(top,) if top else (),
                because=tallied.decided_by,
            )
        for i, a in enumerate(firsts):
            why = ""
            if tallied is not None:
                why = "第一轮已从第一轮投票帖计票（游戏文件的 first_vote），不接受手工记录"
            elif not suns:
                why = "今天没有太阳[日不落]的额外[正午]，当天只有一轮放逐投票（m209.txt:377）"
            elif i > 0:
                why = "第一轮最高票已记录，只能有一条"
            elif len(a.targets) > 1:
                why = "最高票只能是1人（无最高票则不填目标）"
            elif a.targets and not board.alive(a.targets[0]):
                why = f"{a.targets[0]}已出局（或不在名单中），请检查第一轮计票"
            if why:
                board.record(a, "正午", Outcome.INVALID, why, rule)
                continue
            top = a.targets[0] if a.targets else ""
            text = f"第一轮[正午]最高票：{top}（黄昏出局）" if top else "第一轮[正午]没有最高票"
            board.record(a, "正午", Outcome.DONE, text, rule, a.targets)
            if not top:
                board.announce("第一轮[正午]没有最高票")
        if suns and not firsts and tallied is None:
            board.emit(
                "正午",
                rule,
                "未记录第一轮[正午]的最高票（<第一轮最高票>），视作第一轮没有最高票",
            )
        return top

    def _extra_noon(
        self,
        board: Board,
        day: DayInput,
        suns: Sequence[str],
        namings: Sequence[Action],
        second: Sequence[Action],
    ) -> None:
        """太阳[日不落] (m209.txt:377-380): the extra 正午 round; its noon skills carry
        ``choice = "第二轮"``. Skills do not cool down again (m209.txt:380): it is the same game
        day, so what was launched in the first round stays launched."""
        board.emit("正午", "m209.txt:377", f"日不落：第{day.day}天额外一轮[正午]")
        index = board.index
        for sun in suns:  # 按照出局顺序轮流触发并选择谁可以发言投票，互相独立 (m209.txt:378)
            named = any(
                s.kind == "发言许可" and s.source == f"{sun}[日]" and s.active_at(index)
                for s in board.statuses
            )
            mine = [a for a in namings if a.actor == sun]
            for a in mine[1:] if not named else mine:
                board.record(a, "正午", Outcome.INVALID, "太阳已经指定过发言者", "m209.txt:377")
            if named:
                continue
            if not mine:
                self._ask_sun(board, sun, day.day)
                continue
            if self._sun_speakers(board, sun, mine[0], day.day):
                allowed = {s.holder for s in board.statuses if s.kind == "发言许可"}
                late = sorted({v for v, _c in day.ballots if v not in allowed})
                if late:
                    board.need(
                        sun,
                        "日不落",
                        f"计票时未记录太阳的指定：{'、'.join(late)}未被指定，投票应视作弃票"
                        "（m209.txt:379）；请把<日不落>记在太阳出局的阶段后重新计票",
                        "m209.txt:379",
                    )
        others = [a for a in namings if a.actor not in suns]
        for a in others:
            board.record(
                a, "正午", Outcome.INVALID, f"{a.actor}不是今天触发日不落的太阳", "m209.txt:377"
            )
        rest = [
            replace(a, choice=(a.choice or "")[len(SECOND_ROUND) :].lstrip("/") or None)
            for a in second
        ]
        self._noon_round(board, rest)

    def _first_ballots(
        self,
        board: Board,
        suns: Sequence[str],
        ballots: Sequence[Action],
        *,
        counted: bool = False,
    ) -> set[str]:
        """<第一轮投票>: the first 正午 round's ballots (everyone may vote in it; only the
        extra round is limited to the sun's named players, m209.txt:377-378); refused when
        the first round was tallied from its thread (``counted``)."""
        rule = "m209.txt:378"
        objects: set[str] = set()
        seen: set[str] = set()
        for a in ballots:
            why = ""
            if counted:
                why = "第一轮已从第一轮投票帖计票（游戏文件的 first_vote），不接受手工记录"
            elif not suns:
                why = "今天没有太阳[日不落]的额外[正午]，当天只有一轮放逐投票（m209.txt:377）"
            elif not board.has(a.actor):
                why = f"名单中没有玩家「{a.actor}」"
            elif a.actor in seen:
                why = f"{a.actor}的第一轮投票已记录，只能有一条（改票请只记录最终的票）"
            elif len(a.targets) > 1:
                why = "每名角色限投一票（弃票则不填目标）"
            elif a.targets and not board.has(a.targets[0]):
                why = f"名单中没有玩家「{a.targets[0]}」"
            if why:
                board.record(a, "正午", Outcome.INVALID, why, rule)
                continue
            seen.add(a.actor)
            objects.update(a.targets)
            text = f"第一轮投票：{a.actor}投{a.targets[0]}" if a.targets else f"{a.actor}弃票"
            board.record(a, "正午", Outcome.DONE, text, rule, a.targets)
        return objects

    def _vote_objects(self, board: Board, day: DayInput, first: set[str]) -> None:
        """潜行者[潜行]'s 当天投票对象 (m209.txt:384): every candidate with a counted ballot that
        day (both rounds of a 日不落 day); none when the vote was blocked (已经进行的放逐投票也会
        无效, m209.txt:205). Unknown (not recorded) when the day input carries no ballots."""
        if not day.ballots and not first:
            return
        objects: set[str] = set()
        if not board.scratch.get("blocked_vote") or day.sheriff_election:
            objects = {c for _v, c in day.ballots} | first
        board.settings[f"{VOTE_OBJECTS}{day.day}"] = "\t".join(sorted(objects))

    def _election(self, board: Board, day: DayInput) -> None:
        elected = day.elected
        if elected is None:
            board.announce("警长竞选：无人当选")
            board.emit("竞岗", "m209.txt:226", "无人当选警长", because=day.decided_by)
            return
        if not board.alive(elected):
            raise EngineError(f"当选警长的{elected}已出局（或不在名单中），请检查计票")
        board.sheriff = elected
        board.announce(f"{elected}当选警长")
        board.tell(elected, "你当选警长（竞岗，m209.txt:225-226）。", "m209.txt:225")
        board.emit(
            "竞岗",
            "m209.txt:226",
            f"{elected}当选警长",
            resolved=(elected,),
            because=day.decided_by,
        )

    def _tally_peace(self, board: Board, day: DayInput) -> tuple[str, str] | None:
        """(top, statuses) when the tally kept a [霸道]/[不死] top in (m209.txt:166): its
        conclusion says so (:meth:`apply_block`); None otherwise."""
        if day.out is not None or day.rule != self.ref("block_out"):
            return None
        m = PEACE_DECIDED.search(day.decided_by)
        if m is None or not board.has(m["who"]):
            return None
        return m["who"], m["what"]

    def _peace(
        self, board: Board, label: str, who: str, what: str, because: str, *, step: str
    ) -> None:
        """公示平安日 (m209.txt:166): the top and why it stays, for the forum — the status,
        never the role; "今日平安日" follows once nobody was voted out (:meth:`run_day`)."""
        board.emit(
            step,
            "m209.txt:166",
            f"{who}最高票，持有{what}，不出局（平安日）",
            resolved=(who,),
            checked=what,
            because=because,
        )
        board.announce(f"{label}最高票：{who}，持有{what}，不出局")
        board.scratch["peace"] = True

    def _tally_kept_in(self, board: Board, label: str, who: str, what: str, because: str) -> None:
        """The tally's top kept in by ``what`` (:meth:`_tally_peace`): 平安日, and when no [霸道]
        offset the vote-out, [不死] did — 太阳[日] flips (m209.txt:186)."""
        step = "正午" if label.startswith("第一轮") else "放逐投票"
        self._peace(board, label, who, what, because, step=step)
        if "霸道" not in what:
            self._own_immunity_spent(board, who, step)
            self._idiot_survives(board, who, step)  # 全部结算 (m209.txt:186)

    def _noon_out_top(self, board: Board, label: str, top: str, step: str) -> None:
        """The top went out at noon (决斗, 断钢斩, 神风突击 …): the tally cannot see it
        (m209.txt:170); it is still the day's top, said with the day's other public lines. The
        director is asked to record the out (with the time of the skill, when it was given):
        counted again, the votes for the top no longer count and his voters may change."""
        board.emit(step, "m209.txt:170", f"最高票{top}已在正午出局，不再结算")
        board.announce(f"{label}最高票：{top}（已在正午出局）")
        board.need(
            top,
            NOON_OUT,
            f"最高票{top}已在正午出局，计票看不到正午的出局：请记录其出局时间（{RECORD_OUT}），"
            "投给他的角色可以改票一次、投给他的票不再计入（m209.txt:170, 176），"
            f"再重新结算（{RESOLVE}）",
            "m209.txt:170",
            at=board.scratch.get("noon_at", {}).get(top),
        )

    def _no_top_line(self, day: DayInput, label: str) -> str:
        if day.rule == self.ref("scapegoat"):
            return f"{label}平票，当日最高票产生的投票出局无效"
        return f"{label}没有最高票"

    def _exile(self, board: Board, day: DayInput, *, label: str = "今日") -> None:
        step = "放逐投票"
        out = day.out
        if out is None:
            peace = self._tally_peace(board, day)
            if peace is not None and not board.alive(peace[0]):
                self._noon_out_top(board, label, peace[0], step)
            elif peace is not None:
                self._tally_kept_in(board, label, *peace, day.decided_by)
            else:
                board.emit(
                    step, day.rule or "m209.txt:169", "今日没有最高票出局", because=day.decided_by
                )
                # only the top is announced (m209.txt:167) — also when there is none
                board.announce(self._no_top_line(day, label))
            return
        if not board.has(out):
            raise EngineError(f"被投票出局的「{out}」不在名单中，请检查计票")
        if not board.alive(out):
            if out not in {d.player for d in board.deaths}:
                raise EngineError(f"被投票出局的{out}已出局，请检查计票")
            self._noon_out_top(board, label, out, step)
            return
        board.emit(
            step,
            day.rule or "m209.txt:169",
            f"{out}最高票",
            resolved=(out,),
            because=day.decided_by,
        )
        use = None if self._left(board, out) else self._defence(board, out, "投票出局")
        if use is not None:  # a status gained after the tally saw the day (烈阳护卫 …)
            self._peace(board, label, out, f"[{use.kind}]", day.decided_by, step=step)
        else:
            board.announce(f"{label}最高票：{out}")
        death = self.hit(board, "投票出局", "放逐投票", out, step, "m209.txt:166", "投票出局")
        if death is not None and board.setting("reveal_vote_out", "") == str(board.phase.number):
            self._flip(board, out, "道士[结印]3强神（m209.txt:319）")

    def _providence(self, board: Board) -> None:
        """预言家[天意] (m209.txt:236): the 结算目标 of a 非村民阵营 feedback is voted out by the
        top, and the seer voted for it (the director records <天意> with that target, since
        the day input lists only who voted): 预言 gets [迅捷1] for the next night only."""
        out = [d.player for d in board.deaths if d.kind == "投票出局"]
        for name in board.order:
            action = board.take_prepared(name, "天意")
            if action is None:
                continue
            rule = "m209.txt:236"
            card = board.player(name).cards[0]
            target = action.targets[0] if action.targets else ""
            checked = any(
                m.card == card.uid and m.skill == "预言结果" and m.targets == (target, "非村民阵营")
                for m in board.memory
            )
            why = None
            if self.role(board, name) != "预言家":
                why = f"{name}不是预言家"
            elif self._left(board, name):
                why = self._left_reason(board, name)
            elif self._lost(board, name, "天意"):
                why = "<天意>是[限定]技能，已经触发过"
            elif target not in out:
                why = f"{target or '（未指定）'}没有因最高票投票出局"
            elif not checked:
                why = f"{name}的<预言>没有对{target}反馈过[非村民阵营]"
            if why:
                board.record(action, "黄昏", Outcome.INVALID, why, rule)
                continue
            nxt = board.phase.number
            board.settings[f"swift_seer:{name}"] = str(nxt)
            self._lose(board, name, "天意", "预言家[天意]已触发（限定）")
            self._tell_user(
                board, name, f"天意：第{nxt}晚<预言>获得[迅捷1]（m209.txt:236）。", rule
            )
            board.record(action, "黄昏", Outcome.DONE, f"第{nxt}晚<预言>获得[迅捷1]", rule)

    def _settle_seers(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        """One <预言> a night; two with 天意's [迅捷1] (m209.txt:55, 236)."""
        dropped: set[int] = set()
        by_actor: dict[str, list[Action]] = {}
        for a in actions:
            if self.canonical_skill(a.skill) == "预言":
                by_actor.setdefault(a.actor, []).append(a)
        spent: set[str] = board.scratch.setdefault("swift_spent", set())
        for actor, acts in by_actor.items():
            swift = board.setting(f"swift_seer:{actor}", "") == str(board.night)
            allowed = 1 + (swift and f"预言:{actor}" not in spent)
            seen: list[tuple[str, ...]] = []
            for a in acts:
                if a.targets in seen:
                    board.record(
                        a, "深夜1", Outcome.INVALID, "重复记录，只结算一次", "m209.txt:234"
                    )
                    dropped.add(id(a))
                else:
                    seen.append(a.targets)
            if len(seen) > allowed:
                for a in acts:
                    if id(a) not in dropped:
                        board.record(
                            a,
                            "深夜1",
                            Outcome.INVALID,
                            f"{actor}今晚提交了{len(seen)}条不同的<预言>，只能发动{allowed}次"
                            "（m209.txt:40, 236）；请导演只保留一条",
                            "m209.txt:234",
                        )
                        dropped.add(id(a))
            elif len(seen) > 1:
                spent.add(f"预言:{actor}")
        return [a for a in actions if id(a) not in dropped]

    def _scapegoat(self, board: Board, day: DayInput) -> None:
        """替罪羊[冤死] (m209.txt:343-347): on a tie, not on the election day; on a 太阳[日不落]
        day a tie in either 正午 round triggers it, once (m209.txt:378)."""
        rounds = [day, *([day.first_round] if day.first_round is not None else [])]
        if not any("平票" in r.decided_by or r.rule == self.ref("scapegoat") for r in rounds):
            return
        goats = [
            n
            for n in board.order
            if self.role(board, n) == "替罪羊"
            and (board.alive(n) or n in {d.player for d in board.deaths})
            and not self._left(board, n)  # 离开游戏: 所有技能失效 (m209.txt:210)
        ]
        goats = [n for n in goats if "遗忘" not in self.effects(board, n)]
        eaters: list[str] = []
        for goat in goats:
            action = board.take_prepared(goat, "冤死")
            if action is None:
                board.need(
                    goat,
                    "冤死",
                    f"平票，替罪羊{goat}的<冤死>触发：须选择获得[迷魂]的角色（人数自选；{RECORD}）",
                    "m209.txt:343",
                    target="…",
                )
            else:
                targets = [t for t in action.targets if board.alive(t)]
                for t in targets:
                    self.add_negative(
                        board, t, "迷魂", f"{goat}[冤死]", board.index + 2, "m209.txt:345"
                    )
                eaters.extend(t for t in targets if t not in eaters)
                board.record(
                    action,
                    "黄昏1",
                    Outcome.DONE,
                    f"{'、'.join(targets)}获得[迷魂]至下一天黄昏结束",
                    "m209.txt:345",
                    tuple(targets),
                )
            self.hit(board, "暴击", goat, goat, "黄昏1：替罪羊冤死", "m209.txt:346", "替罪羊[冤死]")
        if eaters:
            board.announce(f"{'、'.join(eaters)}美餐了一顿迷魂烤全羊")

    def _noon_skill(self, board: Board, a: Action) -> None:
        start = len(board.feedback)
        self._noon_skill_now(board, a)
        self._mirror(board, a.actor, start)

    def _noon_skill_now(self, board: Board, a: Action) -> None:
        skill = self.canonical_skill(a.skill)
        spec = self.specs[skill]
        step_obj = Step((0, 0), "正午", NOON_SKILLS, "m209.txt:49")
        checked = self._outside_noon(board, a, skill) or validate(
            board, self, replace(a, skill=skill), spec, step_obj
        )
        if isinstance(checked, str):
            board.record(a, "正午", Outcome.INVALID, checked, spec.rule)
            return
        t = a.targets[0]
        board.remember(checked.holder.card, skill, a.targets)
        if skill == "烈阳护卫":
            board.remember(checked.holder.card, "排斥:烈阳护卫", ())
            self._noon_sun_guard(board, a, t, spec)
            return
        self._flip(board, a.actor, f"{self.role(board, a.actor)}[{skill}]")
        if skill == "神风突击":
            self._noon_kamikaze(board, a, t, spec)
            return
        text = self._noon_strike(board, a.actor, t, skill, spec)
        board.record(a, "正午", Outcome.DONE, text, spec.rule, (t,))
        board.announce(f"{a.actor}对{t}发动{skill}：{text}")

    @staticmethod
    def _outside_noon(board: Board, a: Action, skill: str) -> str | None:
        """正午类技能只能在每天的9：00至21:00（若当天关门则为20:00）发动 (m209.txt:49): a noon
        skill recorded with a time outside that window (both ends included) is not launched.
        Unchecked without a time (``at``)."""
        when = action_time(a)
        if when is None:
            return None
        until = NOON_UNTIL
        closes = board.scratch.get("closes")
        close = iso_time(closes) if isinstance(closes, str) else None
        if close is not None:
            if close.tzinfo is not None and when.tzinfo is not None:
                close = close.astimezone(when.tzinfo)
            if close.date() == when.date():
                until = NOON_UNTIL_CLOSING
        clock = when.time().replace(tzinfo=None)
        if NOON_FROM <= clock <= until:
            return None
        last = "（关门当天为20:00）" if until == NOON_UNTIL_CLOSING else ""
        return (
            f"<{skill}>发动于{when:%m-%d %H:%M}，不在正午：正午类技能只能在每天9:00至"
            f"{until:%H:%M}{last}发动（{NOON_RULE}）"
        )

    def _noon_sun_guard(self, board: Board, a: Action, t: str, spec: SkillSpec) -> None:
        """[烈阳护卫]: an out target comes back, a living one is [不死] until dusk."""
        p = board.player(t)
        if not p.alive:
            board.players[t] = replace(
                p,
                cards=tuple(
                    replace(c, alive=True, out_phase=None, out_cause=None) for c in p.cards
                ),
            )
            board.announce(f"{t}被复活")
            text = f"{t}被复活（m209.txt:330）"
        else:
            self.add_status(board, t, "不死", f"{a.actor}[烈阳护卫]", board.index, "m209.txt:330")
            text = f"{t}获得[不死]，持续到黄昏结束"
        board.record(a, "正午", Outcome.DONE, text, spec.rule, (t,))

    def _noon_kamikaze(self, board: Board, a: Action, t: str, spec: SkillSpec) -> None:
        """白狼王[神风突击]: [暴击] on himself (his death blocks the vote), then on the target."""
        actor = a.actor
        where, source = "正午：神风突击", "白狼王[神风突击]"
        died = self.hit(
            board, "暴击", actor, actor, where, "m209.txt:489", source, last_words=False
        )
        board.drain()
        if died is not None:
            board.scratch["blocked_vote"] = source
        if board.sheriff == t:
            board.scratch.setdefault("kamikaze_sheriff", {})[t] = actor
        self.hit(board, "暴击", actor, t, where, "m209.txt:490", source, last_words=False)
        board.record(
            a,
            "正午",
            Outcome.DONE,
            f"白狼王承受[暴击]{'并出局，当天封锁投票' if died else ''}；{t}承受[暴击]",
            spec.rule,
            (t,),
        )

    def _noon_strike(self, board: Board, actor: str, t: str, skill: str, spec: SkillSpec) -> str:
        """A noon [特攻] by faction: a wolf target takes it (the vote is blocked), a village
        one sends it back to the actor (断钢斩 then strikes the target too). What happened."""
        faction = self._judged_faction(board, t, actor)
        if board.statuses_of(t, "隐身"):
            faction = "隐身"
        source = f"{self.role(board, actor)}[{skill}]"

        def strike(on: str, why: str) -> None:
            self.hit(board, "特攻", actor, on, "正午：" + skill, spec.rule, why)

        if faction == WOLF:
            strike(t, source)
            board.scratch["blocked_vote"] = f"{actor}[{skill}]"
            text = f"{t}为狼人阵营，受到[特攻]，当天封锁投票"
            if skill == "断钢斩":
                for s in board.statuses_of(actor, "翻牌"):
                    board.remove_status(s)
                text += "；觉醒骑士的身份牌重新盖伏"
            return text
        if faction == VILLAGE:
            strike(actor, source + "失败")
            text = f"{t}为村民阵营，{actor}受到[特攻]"
            if skill == "断钢斩":
                board.drain()
                strike(t, f"{self.role(board, actor)}[{skill}]")
                text += f"，然后{t}受到[特攻]"
            return text
        return "无事发生"

    # ------------------------------------------------------------------ win check
    def _lost_now(self, board: Board) -> set[str]:
        """m209.txt:508-523; a 暂时 leaver counts alive, a 永久 one out (m209.txt:210)."""
        lost: set[str] = set()
        living = [n for n in board.order if self._counts_alive(board, n)]
        wolves_ok = any(
            (board.player(n).wolf_group or self.role(board, n) in self.group_roles)
            or self._can_take_knife(board, n)
            or self.role(board, n) == "噩梦之影"
            or (self.role(board, n) == "噬时狼妃" and not self._lost(board, n, "时间逆流"))
            for n in living
            if self._faction(board, n) == WOLF
        )
        if not wolves_ok:
            lost.add(WOLF)
        roles = {n: self.role(board, n) for n in board.order}
        upper = [n for n, r in roles.items() if r in self.seers or r in self.strong]
        weak = [n for n, r in roles.items() if r in self.weak]
        if (upper and not any(n in living for n in upper)) or (
            weak and not any(n in living for n in weak)
        ):
            lost.add(VILLAGE)
        if not any(r == PIPER and n in living for n, r in roles.items()):
            lost.add(THIRD)
        return lost

    def check_win(self, board: Board) -> None:
        """m209.txt:503-523: the only faction not lost wins; 三方 > 狼人 > 村民 on a tie."""
        step = "胜负判定"
        if board.winner is not None or board.night == 0:
            return
        recorded = {k[5:]: v for k, v in board.settings.items() if k.startswith("lost:")}
        # 之前未判负 (m209.txt:506): lost before this phase; this phase's losses (by the state,
        # or 判负 by red cards, m209.txt:637 — settled after the vote, m209.txt:177) are at once
        before = {f for f, when in recorded.items() if when != board.phase.label}
        now = self._lost_now(board) | set(recorded)  # a faction judged lost stays lost
        for f in sorted(now - set(recorded)):
            board.settings[f"lost:{f}"] = board.phase.label
            board.emit(step, "m209.txt:146", f"{f}判负（不予公示）")
        living = [n for n in board.order if self._counts_alive(board, n)]
        pipers = [n for n in living if self.role(board, n) == PIPER]
        if pipers:
            # 所有可以获得永久[狂躁]状态的角色 (m209.txt:521): not a [秩序] holder, nor a 暂时
            # leaver, who counts alive but 不受其他技能影响 (m209.txt:210)
            others = [
                n
                for n in living
                if n not in pipers and not board.statuses_of(n, "秩序") and not self._left(board, n)
            ]
            # with nobody left who could be made 狂躁, "all of them" holds (docs/rulings.md)
            if all(any(s.until is None for s in board.statuses_of(n, "狂躁")) for n in others):
                self._win(board, THIRD, "吹笛者存活，其余角色全部持有永久[狂躁]", "m209.txt:521")
                return
        factions = (THIRD, WOLF, VILLAGE)
        standing = [f for f in factions if f not in now]
        if len(standing) == 1:
            self._win(board, standing[0], "仅此阵营未判负", "m209.txt:505")
        elif not standing:
            fresh = [f for f in factions if f not in before]
            if fresh:
                self._win(board, fresh[0], "同时判负，按优先级三方＞狼人＞村民获胜", "m209.txt:506")
        else:
            board.emit(step, "m209.txt:505", f"未判负的阵营：{'、'.join(standing)}，游戏继续")

    def _win(self, board: Board, faction: str, reason: str, rule: str) -> None:
        board.set_winner(faction, reason, rule)
        board.announce(f"游戏结束：{faction}胜利（{reason}）")
        board.emit("胜负判定", rule, f"{faction}胜利", because=reason)

    # ------------------------------------------------------------------ votes
    def vote_modifiers(self, state: GameState, day: int) -> tuple[Any, ...]:
        """[迷魂] 0 (m209.txt:96), [独裁] +N (m209.txt:109), [狂躁] no change (m209.txt:97),
        [霸道]/[不死] not out (m209.txt:166), 白痴 no vote (m209.txt:357), 替罪羊 (m209.txt:343)
        and 太阳 (m209.txt:376) unless under [遗忘] (m209.txt:94); a player out of the game does
        not vote and its skills fail (m209.txt:210)."""
        index = Phase.day(day).index
        gone = self._left_in_state(state, index)
        living = tuple(n for n in state.living if n not in gone)
        mods: list[Any] = [
            VoteModifier(n, ModifierKind.NO_VOTE, Fraction(0), "离开游戏", "m209.txt:210")
            for n in state.living
            if n in gone
        ]
        for s in state.statuses:
            if not s.active_at(index) or s.holder not in living:
                continue
            if s.kind == "迷魂":
                mods.append(VoteModifier(s.holder, ModifierKind.WEIGHT_SET, Fraction(0), "[迷魂]"))
            elif s.kind == "独裁":
                n = len(state.living)  # a leaver counts alive here (m209.txt:210)
                extra = 1 + (max(0, (n - 5) // 5) if n >= 10 else 0)
                mods.append(
                    VoteModifier(s.holder, ModifierKind.VOTER_ADD, Fraction(extra), "[独裁]")
                )
            elif s.kind == "狂躁":
                mods.append(VoteModifier(s.holder, ModifierKind.NO_CHANGE, Fraction(0), "[狂躁]"))
                # 需要在开门之前立刻投……开门之前未决定则默认弃票 (m209.txt:97): a ballot after
                # the opening does not count, none at all is 弃权 (engine.votes)
                mods.append(
                    VoteModifier(
                        s.holder, ModifierKind.BEFORE_OPEN, Fraction(0), "[狂躁]", MANIA_RULE
                    )
                )
            elif s.kind in ("霸道", "不死"):
                mods.append(
                    VoteModifier(s.holder, ModifierKind.BLOCK_OUT, Fraction(0), f"[{s.kind}]")
                )
            elif s.kind == "翻牌" and self.role(state, s.holder) == "白痴":
                mods.append(
                    VoteModifier(
                        s.holder, ModifierKind.NO_VOTE, Fraction(0), "白痴[大难不死]", IDIOT_RULE
                    )
                )
        allowed = {s.holder for s in state.statuses if s.kind == "发言许可" and s.active_at(index)}
        if allowed:  # 太阳[日]: in the extra 正午 (the tallied round) only the named speak and
            # vote; a vote post without a post is an abstention (m209.txt:377-379)
            for who in living:
                if who not in allowed:
                    mods.append(
                        VoteModifier(who, ModifierKind.NO_VOTE, Fraction(0), SUN_NO_VOTE, SUN_RULE)
                    )
        # [遗忘] loses every [强制] skill and its lasting effects (m209.txt:94): the sun's 日 and
        # the goat's 冤死 (m209.txt:376, 343) are [强制]
        forgetting = {
            s.holder
            for s in state.statuses
            if s.active_at(index) and "遗忘" in STATUS_EFFECTS.get(s.kind, frozenset())
        }
        for p in state.players:
            if p.name in gone or p.name in forgetting:  # 所有技能失效 (m209.txt:210)
                continue
            immortal = any(
                m.player == p.name and m.kind is ModifierKind.BLOCK_OUT and m.source == "[不死]"
                for m in mods
            )
            flipped = any(s.kind == "翻牌" and s.holder == p.name for s in state.statuses)
            if p.alive and p.cards and p.cards[0].name == "太阳" and not immortal and not flipped:
                # the status, not the role: the conclusion is public (m209.txt:166-167)
                mods.append(
                    VoteModifier(
                        p.name, ModifierKind.BLOCK_OUT, Fraction(0), "[不死]", "m209.txt:376"
                    )
                )
            if p.alive and p.cards and p.cards[0].name == "替罪羊" and day > 1:
                mods.append(
                    VoteModifier(p.name, ModifierKind.VOID_ON_TIE, Fraction(0), "替罪羊[冤死]")
                )
        return tuple(mods)

    def lastwords_rights(self, state: GameState) -> Mapping[str, frozenset[str]] | None:
        """Who was given last words, and in which phase (the first 4 non-red outs, not a
        神风突击 victim, m209.txt:190-191, 489); None for a state resolved before this was
        recorded."""
        raw = dict(state.settings).get(LAST_WORDS_GRANTED)
        used = int(dict(state.settings).get("last_words_used", "0"))
        if raw is None:
            return {} if used == 0 else None
        return _grants(raw)

    def vote_void(self, state: GameState, day: int) -> bool:
        """[封锁投票] closed the day's vote threads (m209.txt:205): nobody owed a vote."""
        return f"{BLOCKED}{day}" in dict(state.settings)

    def silenced(self, state: GameState, day: int, actions: Sequence[Any]) -> frozenset[str]:
        """太阳[日不落]: only the named speak in the extra 正午 (m209.txt:377) — the others
        are not judged for 发言不足 that day."""
        return frozenset(
            m.player
            for m in (
                *self.vote_modifiers(state, day),
                *self.day_vote_modifiers(state, day, actions),
            )
            if m.source == SUN_NO_VOTE
        )

    def first_round_modifiers(self, state: GameState, day: int) -> tuple[Any, ...]:
        """The first 正午 round of a 太阳[日不落] day is open to every living player: only the
        extra round is the sun's named players' (m209.txt:377-378)."""
        return tuple(m for m in self.vote_modifiers(state, day) if m.source != SUN_NO_VOTE)

    def day_vote_modifiers(
        self, state: GameState, day: int, actions: Sequence[Any]
    ) -> tuple[Any, ...]:
        """太阳 may name the extra round's speakers after the first round, during the day
        (m209.txt:378): a <日不落> recorded for the day bars the others from the extra round's
        vote (投票贴不发言默认视作弃票, m209.txt:379). Nothing when the naming is already in
        the state (made in the phase the sun went out)."""
        suns = [s for s in dict(state.settings).get(f"{SUN_NOON}{day}", "").split("\t") if s]
        index = Phase.day(day).index
        if not suns or any(s.kind == "发言许可" and s.active_at(index) for s in state.statuses):
            return ()
        named: set[str] = set()
        for sun in suns:
            # as the engine reads it (run_day → _extra_noon): the sun's first naming in the
            # canonical order counts, and only if it is valid
            mine = [
                a
                for a in canonical_actions(actions)
                if self.canonical_skill(a.skill) == "日不落" and a.actor == sun
            ]
            living = [n for n in state.living if n != sun]
            if mine and not sun_naming_problem(living, list(dict.fromkeys(mine[0].targets))):
                named |= set(mine[0].targets)
        if not named:
            return ()
        voters = set(state.living) - self._left_in_state(state, index)
        return tuple(
            VoteModifier(n, ModifierKind.NO_VOTE, Fraction(0), SUN_NO_VOTE, SUN_RULE)
            for n in sorted(voters - named)
        )

    def absent(self, state: GameState, day: int) -> frozenset[str]:
        """离开游戏的角色……不能发言投票 (m209.txt:210): no 潜水 for a day spent out of the game."""
        return frozenset(self._left_in_state(state, Phase.day(day).index))

    @staticmethod
    def _left_in_state(state: GameState, index: int) -> set[str]:
        return {s.holder for s in state.statuses if s.kind == LEFT and s.active_at(index)}

    def vote_roster(
        self, state: GameState, *, opens: datetime, red_at: Mapping[str, datetime]
    ) -> tuple[Any, ...]:
        """A player out of the game neither votes nor is voted for (m209.txt:210)."""
        gone = self._left_in_state(state, state.phase.index + 1)
        return tuple(
            replace(ps, can_vote=False, can_be_voted=False) if ps.name in gone else ps
            for ps in super().vote_roster(state, opens=opens, red_at=red_at)
        )

    def vote_sheriff(self, state: GameState) -> str | None:
        """A sheriff out of the game (暂时) keeps the badge but does not vote (m209.txt:210)."""
        sheriff = super().vote_sheriff(state)
        gone = self._left_in_state(state, state.phase.index + 1)
        return None if sheriff in gone else sheriff
