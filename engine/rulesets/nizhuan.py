"""双身份狼人杀——逆转时空的战斗 (rules/nizhuan.txt): the vote rules and the two-round engine.

Votes
- Votes name a card: 投票对象：傻树的第一身份 (nizhuan.txt:196). Voters and candidates are cards
  ("傻树的第一身份"); ``PlayerStatus.card`` and ``Ballot.card_index`` / ``Ballot.voter_card`` carry
  the card (1 = 第一身份, 2 = 第二身份). A target without a card is accepted only when that player
  has a single card in play (the 历史轮, or the other card is out). The pipeline's hooks:
  :meth:`Nizhuan.split_target` (``"傻树的第二身份"``/``"傻树#2"`` → name and card, for
  ``vote proxy`` and night-action targets) and :meth:`Nizhuan.resolve_target` (the card in play
  a text names in a state).
- In the 逆转轮 the first cards are NPCs whose votes are fixed from the 历史轮 (nizhuan.txt:193):
  the pipeline feeds them as ballots with ``voter_card=1`` at the opening (:func:`npc_ballots`).
  A player's own posts vote with the card the player plays this round (the highest card of the
  player in play).
- Day 1 of each round elects the sheriff (nizhuan.txt:45, 117, 139, 156); the sheriff has no
  extra weight (nizhuan.txt:115-118 give only 竞岗 and 殉职). The 逆转轮's first day is an
  election by the engine's own transition (:meth:`Nizhuan.sheriff_election_day` reads
  ``reversal_day``); a round's first day counted as an exile puts nobody out (a pending item).
- On a tie the sheriff's target is out; if the sheriff did not vote, nobody (nizhuan.txt:45).

Engine (two games in one)
- 8 characters × 2 cards; 狼人 must be first, 蚀时狼妃 and 定序王子 second (nizhuan.txt:80, 85,
  110); forbidden pairs and the 双村民 requirement (nizhuan.txt:74).
- 历史轮 (round 1): only the first cards are in play (nizhuan.txt:138); the second cards wait
  (``CardState.out_cause == "未入场"``). Every first card's action and vote is recorded in the
  state's memory under ``记录:<skill>`` (nizhuan.txt:21). Round 1 ends when every wolf card or
  every village card in play is out, or at the end of night 4 (nizhuan.txt:123-126); the engine
  detects it itself and starts the 逆转轮 on the next day (``settings["reversal_day"]``; a round
  that ends on a day leaves one empty night in between).
- 逆转轮 (round 2): all 16 cards are in play again (nizhuan.txt:155). A first card is an NPC that
  repeats its recorded actions and votes of the same round-relative phase; an action whose actor
  card is out, whose target card is out, or that 时间吞噬 undid, does not happen and the log says
  so. The players act with their second cards (and with a first card freed by 重定之理).
- Phases are numbered continuously: round-2 day ``r`` is day ``reversal_day - 1 + r``, round-2
  night ``k`` is night ``reversal_day - 1 + k`` and replays round-1 night ``k``.
- Targets name a card: ``"傻树的第二身份"`` / ``"傻树#2"``, or the player's name with
  ``choice = "第二身份"``; a bare name is the player's highest card in play (as in votes.py).
- Win (round 2 only, nizhuan.txt:127-132): wolves when every 村民 card has been out at least once
  across the two rounds; villagers when both 狼人 cards and the 蚀时狼妃 card are out.
- 遗言 (nizhuan.txt:55): per round as many as the wolf-faction characters (setting
  ``last_words`` overrides); the first to go fully out get a ``遗言`` status (round 2: the
  second card going out); never after a red card (nizhuan.txt:50).
- For the pipeline: :func:`npc_ballots` (the fixed NPC ballots of a round-2 day),
  :func:`vote_actions_from_tally` (a day's ballots as ``投票`` actions, so round-1 votes are
  recorded), :func:`sheriff_unit` (the badge's card as a vote unit).
- Settings (``[nizhuan]`` table, when passed to :meth:`Nizhuan.setup_state`): ``reversal_day``
  (the director's declaration; checked against the engine's own detection, a mismatch is a
  pending item) and ``last_words``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, ClassVar, Literal

from engine.ballots import Ballot, BallotKind, Evidence, PlayerStatus
from engine.cards import Card, CardRules
from engine.conduct import DEFAULT_RULE, ConductRules, FlagKind
from engine.deal import Deal, Rng
from engine.kernel import (
    CHOICE,
    RESOLVE,
    SKILL,
    Action,
    Board,
    DayInput,
    Death,
    EngineError,
    Outcome,
    Trigger,
    seeded_choice,
)
from engine.rulesets.base import (
    SHARED_VOTE_RULES,
    Deadline,
    Hands,
    LastWordsRules,
    Lineup,
    Ruleset,
    action_time,
    successor_again,
)
from engine.rulesets.roles import VILLAGE, WOLF
from engine.speed import SpeedRules
from engine.state import (
    ZH_ORDINAL,
    CardState,
    Charge,
    GameState,
    Memory,
    Phase,
    PlayerState,
    Status,
)

__all__ = [
    "DECK",
    "HISTORY_LAST_NIGHT",
    "ROLE_RULES",
    "SECRET_KEYS",
    "Nizhuan",
    "election_day",
    "npc_ballots",
    "sheriff_unit",
    "split_target",
    "vote_actions_from_tally",
]

#: The keys of the game file's ``[nizhuan]`` table: the declared start of the 逆转轮 and the
#: number of last words per round.
SECRET_KEYS: tuple[str, ...] = ("reversal_day", "last_words")


#: The 16 cards (nizhuan.txt:78-112).
DECK: Mapping[str, int] = {
    "狼人": 2,
    "蚀时狼妃": 1,
    "预言家": 1,
    "女巫": 1,
    "猎人": 1,
    "长老": 1,
    "骑士": 1,
    "定序王子": 1,
    "村民": 7,
}
WOLF_ROLES = frozenset({"狼人", "蚀时狼妃"})
ROLE_RULES: Mapping[str, str] = {
    "狼人": "nizhuan.txt:78",
    "蚀时狼妃": "nizhuan.txt:82",
    "预言家": "nizhuan.txt:88",
    "女巫": "nizhuan.txt:91",
    "猎人": "nizhuan.txt:97",
    "长老": "nizhuan.txt:101",
    "骑士": "nizhuan.txt:105",
    "定序王子": "nizhuan.txt:108",
    "村民": "nizhuan.txt:112",
    "警长": "nizhuan.txt:115",
}
ROLE_SKILLS: Mapping[str, tuple[str, ...]] = {
    "狼人": ("杀人",),
    "蚀时狼妃": ("杀人", "时间吞噬"),
    "预言家": ("预言",),
    "女巫": ("通灵", "救药", "毒药"),
    "猎人": ("最后一枪",),
    "长老": ("长寿之命",),
    "骑士": ("决斗",),
    "定序王子": ("重定之理",),
    "村民": (),
}
SKILL_RULES: Mapping[str, str] = {
    "杀人": "nizhuan.txt:79",
    "时间吞噬": "nizhuan.txt:84",
    "预言": "nizhuan.txt:89",
    "通灵": "nizhuan.txt:92",
    "救药": "nizhuan.txt:93",
    "毒药": "nizhuan.txt:94",
    "最后一枪": "nizhuan.txt:98",
    "长寿之命": "nizhuan.txt:102",
    "决斗": "nizhuan.txt:106",
    "重定之理": "nizhuan.txt:109",
    "殉职": "nizhuan.txt:118",
    "投票": "nizhuan.txt:193",
    "红牌罚下": "nizhuan.txt:50",
    "投降": "nizhuan.txt:58",
    "判负": "docs/rulings.md#conduct-defaults",
}
LIMITED = ("救药", "毒药", "决斗", "时间吞噬", "重定之理", "长寿之命")
NIGHT_SKILLS = ("杀人", "预言", "救药", "毒药", "时间吞噬", "重定之理")
TRIGGER_SKILLS = ("最后一枪", "殉职")
DAY_SKILLS = ("决斗", "投票")
DIRECTOR_ACTIONS = ("红牌罚下", "投降", "判负")
#: 第四天夜晚结束 ends the 历史轮 (nizhuan.txt:126).
HISTORY_LAST_NIGHT = 4
#: Setting: the players given last words (tab-separated), kept across the reversal.
LAST_WORDS_GIVEN = "遗言权利"
REC = "记录:"  # memory prefix of the 历史轮 records
NOT_IN = "未入场"
_ALIASES = {
    "刀": "杀人",
    "查验": "预言",
    "开枪": "最后一枪",
    "移交警长": "殉职",
    "红牌": "红牌罚下",
}
_POS = {"第一身份": 1, "第一": 1, "1": 1, "第二身份": 2, "第二": 2, "2": 2}
_TARGET = re.compile(
    r"^(?P<name>.+?)(?:#(?P<n>[12])|\s*的?\s*第(?P<zh>[一二12])\s*(?:张|个)?身份牌?)$"
)


#: 已经公示的出局角色……不允许被选为技能或投票的目标, as the director knows the rule
_OUT_RULE = "《逆转时空》规则 · 出局，nizhuan.txt:51"


def _ordinal(position: int) -> str:
    return ZH_ORDINAL.get(position, f"第{position}身份")


def faction_of(role: str) -> str:
    return WOLF if role in WOLF_ROLES else VILLAGE


def _faction_of_player(p: PlayerState) -> str:
    """A character is wolf when either card is a wolf card (nizhuan.txt:72)."""
    return WOLF if any(faction_of(c.name) == WOLF for c in p.cards) else VILLAGE


# ------------------------------------------------------------------------- rounds, cards and labels


def _round(settings: Mapping[str, str]) -> int:
    return int(settings.get("round", "1"))


def _relative(settings: Mapping[str, str], phase: Phase) -> Phase:
    """The round-relative phase: round-2 day 1 is day 1 again (nizhuan.txt:156)."""
    if _round(settings) < 2:
        return phase
    shift = int(settings["reversal_day"]) - 1
    return Phase(phase.kind, max(0, phase.number - shift) if phase.number else 0)


def _card_label(uid: str) -> str:
    name, _, n = uid.rpartition("#")
    return f"{name}的{_ordinal(int(n))}"


def npc_ballots(state: GameState, day: int) -> tuple[tuple[str, str | None], ...]:
    """The fixed ballots of the NPC first cards on ``day`` of the 逆转轮 (nizhuan.txt:193).

    ``(voter label, target label or None for 弃权)``, e.g. ``("傻树的第一身份", "不见的第二身份")``.
    A first card out, undone by 时间吞噬, or freed by 重定之理 (its player votes) has no fixed
    ballot; a ballot for a card that is out is left out (the pipeline counts the rest).
    """
    settings = dict(state.settings)
    if _round(settings) < 2:
        return ()
    index = Phase.day(day).index
    rel = _relative(settings, Phase.day(day)).index
    cards = {c.uid: c for p in state.players for c in p.cards}
    out: list[tuple[str, str | None]] = []
    for m in sorted(state.memory, key=Memory.sort_key):
        if m.skill != REC + "投票" or m.phase != rel:
            continue
        voter = cards.get(m.card)
        if voter is None or not voter.alive:
            continue
        if any(
            s.kind in ("时间吞噬", "重定之理") and s.holder == m.card and s.active_at(index)
            for s in state.statuses
        ):
            continue
        target = m.targets[0] if m.targets else "弃权"
        if target == "弃权":
            out.append((_card_label(m.card), None))
        elif target in cards and cards[target].alive:
            out.append((_card_label(m.card), _card_label(target)))
    return tuple(out)


def sheriff_unit(state: GameState) -> str | None:
    """The card holding the badge as a vote unit ("傻树的第一身份"), for the tally's sheriff."""
    index = state.phase.index
    for s in state.statuses:
        if s.kind == "警徽" and s.active_at(index):
            return _card_label(s.holder)
    return None


def vote_actions_from_tally(tally: Any) -> tuple[Action, ...]:
    """The day's counted ballots as ``投票`` actions for :class:`DayInput` (so the 历史轮 votes
    are recorded in the state). ``tally`` is an :class:`engine.votes.Tally`."""
    actions: list[Action] = []
    for candidate, voters in sorted(tally.voters.items()):
        for voter in voters:
            actor, _, card = _split_label(voter)
            actions.append(Action(actor, "投票", (candidate,), card=card or None))
    for voter in sorted(tally.abstained):
        actor, _, card = _split_label(voter)
        actions.append(Action(actor, "投票", (), choice="弃权", card=card or None))
    return tuple(actions)


def _name_and_card(label: str) -> tuple[str, int | None]:
    """``"傻树的第二身份"`` → ``("傻树", 2)``; a bare name → ``(name, None)``."""
    m = _TARGET.match(label.strip())
    if not m:
        return label.strip(), None
    n = m.group("n") or m.group("zh")
    return m.group("name").strip(), {"一": 1, "二": 2}.get(n) or int(n)


def _split_label(label: str) -> tuple[str, str, str]:
    m = _TARGET.match(label.strip())
    if not m:
        return label.strip(), "", ""
    n = m.group("n") or m.group("zh")
    pos = {"一": 1, "二": 2}.get(n) or int(n)
    return m.group("name").strip(), "的", _ordinal(pos)


def split_target(raw: str) -> tuple[str, int | None]:
    """``"傻树的第二身份"`` / ``"傻树#2"`` → ``("傻树", 2)``; a bare name → ``(name, None)``.

    Pure text: a caller holding the roster matches the whole text as a player's name first (a
    forum name may itself end in "#2")."""
    return _name_and_card(raw)


def _card_in_play(
    lookup: Callable[[str], PlayerState | None], raw: str, choice: str | None = None
) -> str:
    """The uid of the card in play that ``raw`` names (nizhuan.txt:196): ``"X的第二身份"``,
    ``"X#2"``, or a bare name with ``choice = "第二身份"``; a bare name alone is the player's
    highest card in play (the only one when the other is out). EngineError (Chinese) when it
    names no card in play."""
    text = raw.strip()
    pos: int | None = None
    m = _TARGET.match(text)
    if m and lookup(text) is None:
        text = m.group("name").strip()
        n = m.group("n") or m.group("zh")
        pos = {"一": 1, "二": 2}.get(n) or int(n)
    elif choice and choice.strip() in _POS:
        pos = _POS[choice.strip()]
    p = lookup(text)
    if p is None:
        raise EngineError(f"目标「{raw}」不在名单中")
    if pos is None:
        living = [i for i, c in enumerate(p.cards, 1) if c.alive]
        if not living:
            raise EngineError(f"{text}已出局，不能被选为技能的目标（{_OUT_RULE}）")
        pos = max(living)  # a bare name: the player's highest card in play
    card = p.cards[pos - 1]
    if not card.alive:
        what = (
            "尚未入场（历史轮只有第一身份，《逆转时空》规则 · 游戏流程，nizhuan.txt:138）"
            if card.out_cause == NOT_IN
            else "已出局"
        )
        raise EngineError(f"{text}的{_ordinal(pos)}{what}，不能被选为目标（{_OUT_RULE}）")
    return card.uid


def election_day(state: GameState, day: int) -> bool:
    """Day ``day`` is the 逆转轮's first day, which elects the sheriff (nizhuan.txt:156:
    开始第一天讨论日，竞选警长): the engine's own transition says so (``reversal_day``, set when
    the 历史轮 ended), so the game file needs no ``sheriff_election`` for it."""
    settings = dict(state.settings)
    return _round(settings) == 2 and settings.get("reversal_day") == str(day)


@dataclass(frozen=True, slots=True)
class _Act:
    """One action on its way: who, with which card, on which target cards."""

    action: Action
    skill: str
    actor_card: str  # uid
    targets: tuple[str, ...]  # card uids (救药: the target player's card in play)
    npc: bool


#: the night's steps (nizhuan.txt:141-143, 161-162): the witch's two potions are one step
_STEP = {"杀人": 0, "预言": 1, "救药": 2, "毒药": 2, "时间吞噬": 3, "重定之理": 4}


def _night_order(act: _Act, seat: int) -> tuple[Any, ...]:
    """Where an action stands in the night: by step, NPC replays first, by seat; a witch's
    救药 and 毒药 in the order she used them (their ``at``), else as the rule lists them,
    救药 before 毒药 (nizhuan.txt:143 选择<救药>、<毒药>目标): only a 救药 after the 毒药 is
    refused (nizhuan.txt:94 <毒药>发动后，该夜晚不可发动技能<救药>)."""
    at = action_time(act.action)
    when = (0, at) if at is not None and at.tzinfo is not None else (1,)
    return (_STEP[act.skill], act.npc is False, seat, when, act.skill == "毒药")


def _earlier(a: datetime | None, b: datetime | None) -> bool:
    """``a`` is a time strictly before ``b`` (both given and comparable)."""
    if a is None or b is None or (a.tzinfo is None) != (b.tzinfo is None):
        return False
    return a < b


class Nizhuan(Ruleset):
    id: ClassVar[str] = "nizhuan"
    name: ClassVar[str] = "逆转时空的战斗"
    rule_file: ClassVar[str] = "nizhuan.txt"
    aliases: ClassVar[tuple[str, ...]] = ("逆转时空",)
    day_skills: ClassVar[tuple[str, ...]] = DAY_SKILLS
    deck: ClassVar[Mapping[str, int]] = DECK
    director_actions: ClassVar[tuple[str, ...]] = DIRECTOR_ACTIONS
    night_skills: ClassVar[tuple[str, ...]] = NIGHT_SKILLS
    role_skills: ClassVar[Mapping[str, tuple[str, ...]]] = ROLE_SKILLS
    skill_rules: ClassVar[Mapping[str, str]] = SKILL_RULES
    trigger_skills: ClassVar[tuple[str, ...]] = TRIGGER_SKILLS
    #: 行动时限 (nizhuan.txt:205-206): 杀人 within 30 minutes of the close (else 空刀), the
    #: witch and the other characters within 45
    night_deadlines: ClassVar[Mapping[str, Deadline]] = {
        "杀人": Deadline(timedelta(minutes=30), "nizhuan.txt:205", "视为空刀"),
        **{
            s: Deadline(timedelta(minutes=45), "nizhuan.txt:206")
            for s in NIGHT_SKILLS
            if s != "杀人"
        },
    }

    card_units: ClassVar[bool] = True

    rules: ClassVar[dict[str, str]] = {
        **SHARED_VOTE_RULES,
        "vote_right": "nizhuan.txt:45",
        "out": "nizhuan.txt:49",
        "window": "nizhuan.txt:45",
        "one_vote": "nizhuan.txt:187",
        "format": "nizhuan.txt:190",
        "correct_invalid": "nizhuan.txt:190",
        "abstain": "nizhuan.txt:192",
        "change_once": "nizhuan.txt:189",
        "change_reply": "nizhuan.txt:199",
        "change_cutoff": "nizhuan.txt:189",
        "change_accelerated": "nizhuan.txt:189",
        "proxy": "nizhuan.txt:188",
        "proxy_cutoff": "nizhuan.txt:189",
        "proxy_change_cutoff": "nizhuan.txt:189",
        "election": "nizhuan.txt:117",
        "sheriff_weight": "nizhuan.txt:115",
        "top": "nizhuan.txt:45",
        "tie": "nizhuan.txt:45",
        "block_out": "docs/rulings.md#block-out",
        "public": "nizhuan.txt:45",
        "card_target": "nizhuan.txt:196",
        "npc_votes": "nizhuan.txt:193",
    }

    # --- what else the rule set is ----------------------------------------------------------
    title: ClassVar[str] = "逆转时空"
    conduct: ClassVar[ConductRules] = ConductRules(
        "nizhuan",
        rules={
            # nizhuan.txt:227 违规判定 is empty; nizhuan.txt:180 confirms the penalties exist.
            FlagKind.QIANSHUI: f"{DEFAULT_RULE}；nizhuan.txt:180",
            FlagKind.QIANSHUI_STREAK: f"{DEFAULT_RULE}；nizhuan.txt:180",
            FlagKind.NO_VOTE: "nizhuan.txt:192, nizhuan.txt:180",
            FlagKind.LASTWORDS_CODE: "nizhuan.txt:55",
        },
        # only 未投票 has a card in the text (nizhuan.txt:192 将被判罚黄牌); 潜水 is a house default
        allowed={FlagKind.NO_VOTE: frozenset({Card.YELLOW})},
    )
    # nizhuan.txt:227 违规判定 is "占楼待编辑": the common defaults
    # (docs/rulings.md#conduct-defaults).
    cards: ClassVar[CardRules] = CardRules("nizhuan")
    # nizhuan.txt:177-178 申请加速或延时的人数大于等于存活人数的一半……延时申请截至讨论日结束前
    # 三小时（一般为最后一个自然日18:00），加速申请截止至加速成功后的讨论日结束前三小时。
    # nizhuan.txt:181 延迟成功时，不再视为“执行加速”状态。
    speed: ClassVar[SpeedRules] = SpeedRules(
        "nizhuan",
        rule="nizhuan.txt:177, nizhuan.txt:181",
        deadline_rule="nizhuan.txt:178",
        auto_rule="nizhuan.txt:174（由导演决定）",
    )
    # nizhuan.txt:39 游戏流程发生变化时需要在讨论贴或投票贴中公示
    announce_in: ClassVar[Literal["discussion", "vote"]] = "vote"
    #: the rule text's 投票格式 and 改票格式, as written (nizhuan.txt:195-201)
    vote_format: ClassVar[str] = (
        "【投票格式】\n"
        "投票对象：傻树的第一身份\n"
        "投票理由：砍\n"
        "\n"
        "【改票格式】改票需回复原投票楼层\n"
        "改票对象：不见的第二身份\n"
        "改票理由：吉祥猪"
    )
    vote_format_rule: ClassVar[str] = "nizhuan.txt:195-201"
    announce_rule: ClassVar[str] = "nizhuan.txt:39"
    lastwords: ClassVar[LastWordsRules] = LastWordsRules(
        red_card_rule="nizhuan.txt:50",  # 红牌罚下出局的角色没有遗言权利
        day_open_note=(
            "有遗言权利的出局角色请在本讨论日开始前向导演提交遗言，未提交视为放弃；"
            "遗言中禁止使用Discuz!代码。"
        ),
    )
    dual_card: ClassVar[bool] = True  # nizhuan.txt:72: a vote-out takes the card in play
    secret_keys: ClassVar[tuple[str, ...]] = SECRET_KEYS
    # nizhuan.txt:106 决斗……关门前3小时内不可发动此技能
    day_skill_cutoffs: ClassVar[Mapping[str, tuple[timedelta, str]]] = {
        "决斗": (timedelta(hours=3), "nizhuan.txt:106")
    }

    has_engine: ClassVar[bool] = True
    #: 投弃权票时，须在投票对象中填写“弃权” (nizhuan.txt:192)
    bare_abstain: ClassVar[bool] = False
    #: 逆转轮中……游戏立即结束 (nizhuan.txt:127): a duel or a red card during the day
    ends_before_the_vote: ClassVar[bool] = True
    skill_aliases: ClassVar[Mapping[str, str]] = _ALIASES
    default_settings: ClassVar[Mapping[str, str]] = {}

    # ------------------------------------------------------------------ setup
    # 8 characters × 2 cards from the 16-card deck (nizhuan.txt:72, 78-112)
    hands: ClassVar[Hands | None] = Hands(DECK, 2, "nizhuan.txt:72", setup_rule="nizhuan.txt:72")

    # 所有玩家的第一身份加入游戏，共8张身份 (nizhuan.txt:138); factions (nizhuan.txt:72)
    player_count: ClassVar[tuple[int, str] | None] = (8, "nizhuan.txt:138")
    faction_rule: ClassVar[str] = "nizhuan.txt:72"

    wolf_roles: ClassVar[frozenset[str]] = WOLF_ROLES
    #: nizhuan.txt:80 原初的历史: always the first card
    first_only: ClassVar[frozenset[str]] = frozenset({"狼人"})
    #: nizhuan.txt:85 穿越时空, nizhuan.txt:110 逆转时空: always the second card
    second_only: ClassVar[frozenset[str]] = frozenset({"蚀时狼妃", "定序王子"})

    def deal_count(self) -> int:
        assert self.hands is not None
        return sum(self.hands.deck.values()) // 2  # nizhuan.txt:72: two cards each, 8 players

    def deal(self, names: tuple[str, ...], rng: Rng) -> Deal:
        """16 cards into 8 pairs until none is forbidden (nizhuan.txt:74) and at least one is
        双村民; 狼人 first, 蚀时狼妃 and 定序王子 second (nizhuan.txt:80, 85, 110)."""
        notes = (
            "nizhuan：狼人已排为第一身份，蚀时狼妃、定序王子为第二身份（nizhuan.txt:80, 85, "
            "110）；其余两张的先后由玩家选定后，在游戏文件中调换。",
        )
        return self.deal_in_pairs(names, rng, notes)

    def pairs_refused(self, dealt: Sequence[Sequence[str]]) -> bool:
        wolves = self.wolf_roles
        for a, b in dealt:
            both = {a, b}
            if (a in wolves and b in wolves) or (both & wolves and both & {"预言家", "定序王子"}):
                return True  # nizhuan.txt:74 禁止【双狼人阵营】【狼人阵营+预言家/定序王子】
            if both <= self.first_only or both <= self.second_only:
                return True  # both cards would have to be first (or second)
        # nizhuan.txt:74 将必定出现至少一个以下组合【双村民】
        return not any(a == b == "村民" for a, b in dealt)

    def pair_order(self, a: str, b: str) -> tuple[str, str]:
        return (b, a) if b in self.first_only or a in self.second_only else (a, b)

    def hand_faction(self, name: str, cards: Sequence[str]) -> str | None:
        """其中有任何一个身份牌是狼人阵营则归属狼人阵营 (nizhuan.txt:72)."""
        if len(cards) != 2 or any(c not in self.deck for c in cards):
            return None
        return WOLF if any(c in self.wolf_roles for c in cards) else VILLAGE

    def validate_setup(self, players: Lineup) -> list[str]:
        """Every card problem of the roster, in Chinese (nizhuan.txt:72-112)."""
        problems: list[str] = []
        if not any(cards for _n, cards in players):
            return problems
        counts: Counter[str] = Counter()
        double_villager = False
        for name, cards in players:
            who = f"玩家「{name}」"
            if bad := self.hand_problems(name, cards):
                problems += bad
                continue
            counts.update(cards)
            first, second = cards
            if second == "狼人":
                problems.append(f"{who}：狼人身份牌必须为第一身份（nizhuan.txt:80）")
            if first == "蚀时狼妃":
                problems.append(f"{who}：蚀时狼妃身份牌必须为第二身份（nizhuan.txt:85）")
            if first == "定序王子":
                problems.append(f"{who}：定序王子身份牌必须为第二身份（nizhuan.txt:110）")
            if first in self.wolf_roles and second in self.wolf_roles:
                problems.append(f"{who}：禁止的组合：双狼人阵营（nizhuan.txt:74）")
            elif {first, second} & self.wolf_roles and {first, second} & {"预言家", "定序王子"}:
                problems.append(f"{who}：禁止的组合：狼人阵营+预言家/定序王子（nizhuan.txt:74）")
            if first == second == "村民":
                double_villager = True
        for card, n in sorted(counts.items(), key=lambda kv: list(self.deck).index(kv[0])):
            if n > self.deck[card]:
                problems.append(
                    f"身份牌「{card}」出现 {n} 次，牌组中只有 {self.deck[card]} 张"
                    "（nizhuan.txt:78-112）"
                )
        if not double_villager and all(len(c) == 2 for _n, c in players):
            problems.append("至少须有一名玩家是双村民（nizhuan.txt:74）")
        return problems

    # --- the day's vote: one unit per card in play ----------------------------------------
    def lastwords_rights(self, state: GameState) -> Mapping[str, frozenset[str]] | None:
        """Who was given last words, and in which phase — per round, so a grant of the
        history round does not cover an out of the reversal round (nizhuan.txt:55)."""
        out: dict[str, set[str]] = {}
        for entry in (e for e in dict(state.settings).get(LAST_WORDS_GIVEN, "").split("\t") if e):
            name, _, phase = entry.partition("@")
            out.setdefault(name, set()).add(phase)
        return {n: frozenset(p) for n, p in out.items()}

    def vote_roster(
        self, state: GameState, *, opens: datetime, red_at: Mapping[str, datetime]
    ) -> tuple[Any, ...]:
        """One PlayerStatus per card that has entered the game (nizhuan.txt:138, 193)."""
        entries = []
        for p in state.players:
            for index, card in enumerate(p.cards, start=1):
                if card.out_cause == NOT_IN:
                    continue
                out_at = opens if not card.alive else red_at.get(p.name)
                entries.append(PlayerStatus(p.name, out_at=out_at, card=index))
        return tuple(entries)

    def timed_outs(
        self, state: GameState, actions: Sequence[Action]
    ) -> tuple[tuple[str, int | None, datetime], ...]:
        """Red cards, and a duel's target card from the duel's time (决斗目标也会立刻出局,
        nizhuan.txt:106): votes on it before the close no longer count."""
        outs = list(super().timed_outs(state, actions))
        for uid, at, _a in self._timed_duels(state, actions):
            name, _, n = uid.rpartition("#")
            outs.append((name, int(n), at))
        return tuple(outs)

    def timed_close(
        self, state: GameState, actions: Sequence[Action]
    ) -> tuple[datetime, str, str] | None:
        """若决斗目标为【狼人阵营】的身份牌，则会立刻关门 (nizhuan.txt:106): the first timed duel
        on a 狼人阵营 card closes the vote at its time."""
        wolf = [
            (at, uid, a)
            for uid, at, a in self._timed_duels(state, actions)
            if faction_of(state.player(uid.rpartition("#")[0]).card(uid).name) == WOLF
        ]
        if not wolf:
            return None
        at, uid, a = min(wolf, key=lambda w: w[0])
        why = f"{at:%H:%M} {a.actor}的骑士决斗{_card_label(uid)}（狼人阵营），当天立刻关门"
        return at, why, "nizhuan.txt:106"

    def _timed_duels(
        self, state: GameState, actions: Sequence[Action]
    ) -> list[tuple[str, datetime, Action]]:
        """The day's duels recorded with their time: (target card's uid, when, the action);
        one that names no card in play is left out (the engine says why it is invalid)."""
        people = {p.name: p for p in state.players}
        duels = []
        for a in actions:
            if self.canonical_skill(a.skill) != "决斗" or not a.at or len(a.targets) != 1:
                continue
            try:
                uid = _card_in_play(people.get, a.targets[0], a.choice)
                at = datetime.fromisoformat(a.at)
            except (EngineError, ValueError):
                continue
            duels.append((uid, at, a))
        return duels

    def vote_sheriff(self, state: GameState) -> str | None:
        return sheriff_unit(state)

    def voter_cards(self, state: GameState, day: int) -> Mapping[str, int]:
        """逆转轮: a first card freed by 重定之理 is its player's for the day (在下一个白天和
        夜晚可以自由操作该身份……若之前第二身份出局导致自己失去发言权力，也可以借此继续发言一天,
        nizhuan.txt:109): with the second card out, the player's vote posts are that card's."""
        if _round(dict(state.settings)) < 2:
            return {}
        index = Phase.day(day).index
        freed = {s.holder for s in state.statuses if s.kind == "重定之理" and s.active_at(index)}
        return {
            p.name: 1
            for p in state.players
            if len(p.cards) == 2
            and p.cards[0].alive
            and not p.cards[1].alive
            and p.cards[0].uid in freed
        }

    def voiceless(self, state: GameState, day: int) -> Mapping[str, str]:
        """逆转轮: a player whose second card is out while the first plays on has lost the
        right to speak (若之前第二身份出局导致自己失去发言权力, nizhuan.txt:109) — and to vote, the
        first card's vote being fixed (nizhuan.txt:193) — unless 重定之理 frees the first card
        that day."""
        if _round(dict(state.settings)) < 2:
            return {}
        index = Phase.day(day).index
        freed = {s.holder for s in state.statuses if s.kind == "重定之理" and s.active_at(index)}
        return {
            p.name: "第二身份已出局，失去发言权力（nizhuan.txt:109）"
            for p in state.players
            if len(p.cards) == 2
            and p.cards[0].alive
            and not p.cards[1].alive
            and p.cards[0].uid not in freed
        }

    # --- targets named by card (the pipeline's hooks) --------------------------------------
    def split_target(self, raw: str) -> tuple[str, int | None]:
        """The player a target names and the card (nizhuan.txt:196 投票对象：傻树的第一身份):
        ``"傻树的第二身份"``/``"傻树#2"`` → ``("傻树", 2)``, a bare name → ``(name, None)``.
        For a proxy vote's target and night-action targets: the pipeline checks the name
        against the roster and keeps the card (``unit_label(name, card)``)."""
        return split_target(raw)

    def resolve_target(self, raw: str, state: GameState, choice: str | None = None) -> str:
        """The card label (``"傻树的第二身份"``) of the card in play ``raw`` names in
        ``state`` — a bare name is the player's highest card in play, so the only one once the
        other is out; EngineError (Chinese) when it names no card in play (nizhuan.txt:51,
        138)."""
        people = {p.name: p for p in state.players}
        return _card_label(_card_in_play(people.get, raw, choice))

    def sheriff_election_day(self, state: GameState, day: int) -> bool:
        """The state makes ``day`` a sheriff election: the 逆转轮's first day
        (nizhuan.txt:156), whatever the game file says of that day."""
        return election_day(state, day)

    def fixed_ballots(
        self, state: GameState, day: int, *, opens: datetime, tid: int
    ) -> tuple[Any, ...]:
        """The NPC first cards' recorded votes, cast at the opening (nizhuan.txt:193)."""
        ballots = []
        for n, (voter, target) in enumerate(npc_ballots(state, day), start=1):
            actor, _ = _name_and_card(voter)
            evidence = Evidence(tid, -1000 - n, None, opens, f"逆转轮：{voter}按历史轮的投票")
            if target is None:
                ballots.append(
                    Ballot(actor, BallotKind.ABSTAIN, None, "弃权", None, evidence, voter_card=1)
                )
                continue
            name, card = _name_and_card(target)
            ballots.append(
                Ballot(
                    actor,
                    BallotKind.VOTE,
                    name,
                    target,
                    None,
                    evidence,
                    voter_card=1,
                    card_index=card,
                )
            )
        return tuple(ballots)

    def vote_actions(self, tally: Any) -> tuple[Any, ...]:
        return vote_actions_from_tally(tally)

    def settings_from_game(self, game: Any) -> dict[str, str]:
        """``[nizhuan] reversal_day`` (declared start of the 逆转轮) and ``last_words``."""
        table = getattr(game, "secrets", {}) or {}
        return {k: str(table[k]) for k in self.secret_keys if k in table}

    def open_state(self, players: Lineup, settings: Mapping[str, str], strict: bool) -> GameState:
        """The state before day 1 of the 历史轮: first cards in play, second cards waiting."""
        self.check_lineup(players, strict=strict)
        merged = self.merged_settings(
            {"round": "1", **settings}, known=("round", *self.secret_keys)
        )
        states: list[PlayerState] = []
        charges: list[Charge] = []
        for name, cards in players:
            ps = PlayerState(
                name=name,
                cards=tuple(
                    CardState(
                        f"{name}#{i + 1}", c, alive=i == 0, out_cause=None if i == 0 else NOT_IN
                    )
                    for i, c in enumerate(cards)
                ),
                wolf_group=any(c in self.wolf_roles for c in cards),  # 共群 (nizhuan.txt:77)
            )
            charges.extend(self._charges(ps.cards[:1]))
            states.append(ps)
        return GameState(
            ruleset=self.id,
            phase=Phase.setup(),
            players=tuple(states),
            charges=tuple(charges),
            settings=tuple(merged.items()),
        )

    @staticmethod
    def _charges(cards: Sequence[CardState]) -> list[Charge]:
        return [
            Charge(c.uid, s, 1) for c in cards for s in ROLE_SKILLS.get(c.name, ()) if s in LIMITED
        ]

    # ------------------------------------------------------------------ names
    def skill_names(self) -> tuple[str, ...]:
        return (*self.night_skills, *self.trigger_skills, *self.day_skills, *self.director_actions)

    def skill_rule(self, skill: str) -> str:
        return self.skill_rules.get(self.canonical_skill(skill), "")

    def unused_reason(self, action: Action) -> str:
        skill = self.canonical_skill(action.skill)
        if skill == "最后一枪":
            return f"{action.actor}的猎人本阶段没有出局，<最后一枪>未发动"
        if skill == "殉职":
            return f"{action.actor}本阶段没有以警长身份出局，<殉职>未发动"
        return super().unused_reason(action)

    def actual_faction(self, state: GameState, player: str) -> str | None:
        return _faction_of_player(state.player(player))

    # ------------------------------------------------------------- the round and cards on the board
    @staticmethod
    def _round_of(board: Board) -> int:
        return _round(board.settings)

    def _rel(self, board: Board) -> Phase:
        return _relative(board.settings, board.phase)

    def _transition(self, board: Board) -> bool:
        """The empty night between a 历史轮 that ended on a day and the 逆转轮's day 1."""
        return (
            self._round_of(board) == 2
            and board.night is not None
            and board.night == int(board.settings["reversal_day"]) - 1
        )

    def _controlled(self, board: Board, uid: str) -> bool:
        """Does the player act with this card now? Round 1: the first card. Round 2: the second
        card, or a first card freed by 重定之理 (nizhuan.txt:109)."""
        n = int(uid.rpartition("#")[2])
        if self._round_of(board) == 1:
            return n == 1
        return n == 2 or bool(board.statuses_of(uid, "重定之理"))

    def _swallowed(self, board: Board, uid: str) -> bool:
        return bool(board.statuses_of(uid, "时间吞噬"))

    def _lost(self, board: Board, uid: str) -> str | None:
        """长老: all privileged (village) cards lose their skills (nizhuan.txt:102)."""
        if faction_of(board.card(uid).name) == WOLF or not board.table_status("失去技能"):
            return None
        return "长老因投票、决斗、毒药或最后一枪出局，所有特权身份失去技能（nizhuan.txt:102）"

    def _parse_target(self, board: Board, raw: str, choice: str | None = None) -> str:
        """A target as a card uid; raises EngineError (Chinese) when it names no card in play."""
        return _card_in_play(board.players.get, raw, choice)

    def _skill_card(self, board: Board, a: Action, skill: str) -> str:
        """The acting card of a player action, or an EngineError with the reason."""
        if not board.has(a.actor):
            raise EngineError(f"名单中没有玩家「{a.actor}」")
        p = board.player(a.actor)
        if not p.alive:
            raise EngineError(f"{a.actor}已出局，出局后不能发动技能（nizhuan.txt:49）")
        if skill == "杀人":
            if not p.wolf_group:
                raise EngineError(f"{a.actor}不在狼群中，没有<杀人>（nizhuan.txt:77-79）")
            own = [c.uid for c in p.cards if c.alive and c.name in self.wolf_roles]
            team = own or self._kill_cards(board)
            if not team:
                raise EngineError("狼人阵营已没有存活的带<杀人>的身份牌")
            return team[0]
        wanted = _POS.get((a.card or "").strip())
        cards = [
            c
            for i, c in enumerate(p.cards, 1)
            if skill in self.role_skills.get(c.name, ())
            and (wanted is None or wanted == i or a.card == c.name)
        ]
        if not cards:
            raise EngineError(f"{a.actor}没有带<{skill}>的身份牌")
        card = cards[0]
        if not card.alive:
            why = "尚未入场" if card.out_cause == NOT_IN else "已出局"
            raise EngineError(f"{a.actor}的{card.name}{why}，不能发动<{skill}>")
        if not self._controlled(board, card.uid):
            raise EngineError(
                f"{a.actor}的{card.name}是第一身份，逆转轮中作为NPC按历史轮记录行动，"
                "玩家用第二身份操作（nizhuan.txt:22）；除非被<重定之理>选中（nizhuan.txt:109）"
            )
        return card.uid

    def _kill_cards(self, board: Board) -> list[str]:
        return [
            c.uid
            for n in board.order
            for c in board.player(n).cards
            if c.alive and c.name in self.wolf_roles
        ]

    # ------------------------------------------------------------------ history records
    def _record(self, board: Board, card: str, skill: str, targets: Sequence[str]) -> None:
        """历史轮: every first card's operation is recorded (nizhuan.txt:21)."""
        if self._round_of(board) == 1:
            board.remember(card, REC + skill, tuple(targets))

    @staticmethod
    def _records(board: Board, skill: str, phase: Phase) -> list[Memory]:
        return [
            m
            for m in sorted(board.memory, key=Memory.sort_key)
            if m.skill == REC + skill and m.phase == phase.index
        ]

    # ------------------------------------------------------------------ the night
    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        rest = self._director(board, actions)
        if board.winner is not None:
            return
        night = board.night
        assert night is not None
        if night == 0 or self._transition(board):
            why = (
                "本规则没有第零晚：第一天白天竞选警长后才进入夜晚（nizhuan.txt:139-140）"
                if night == 0
                else f"历史轮已结束，逆转轮从第{board.settings['reversal_day']}天开始，本晚不结算"
                "（nizhuan.txt:123, 156）"
            )
            for a in rest:
                board.record(a, "校验", Outcome.INVALID, why, "nizhuan.txt:139")
            board.emit("夜晚", "nizhuan.txt:139", why)
            return
        acts = self._night_acts(board, rest)
        r2 = self._round_of(board) == 2
        order: tuple[tuple[str, tuple[str, ...], str], ...] = (
            ("（1）杀人", ("杀人",), "nizhuan.txt:141"),
            ("（2）预言", ("预言",), "nizhuan.txt:142"),
            ("（3）女巫", ("救药", "毒药"), "nizhuan.txt:143"),
        )
        if r2:
            order = (
                *order,
                ("（4）时间吞噬", ("时间吞噬",), "nizhuan.txt:161"),
                ("（5）重定之理", ("重定之理",), "nizhuan.txt:162"),
            )
        for label, skills, _rule in order:
            if "救药" in skills:
                self._witch_feedback(board, label)
            for act in [x for x in acts if x.skill in skills]:
                self._night_act(board, act, label)
        if not r2:
            self._undecided_kill(board)
        self._resolve_kill(board, "（6）指杀结算" if r2 else "（4）指杀结算")
        if not r2 and (over := self._history_over_now(board)):
            # 第一轮游戏立刻结束 (nizhuan.txt:123): nothing after that step is resolved
            why = f"历史轮已经结束（{over}），第一轮立刻结束，毒药不再结算（nizhuan.txt:123）"
            board.emit("（5）毒药结算", "nizhuan.txt:123", why)
            return
        if r2 and (won := self._won_now(board)):
            # 逆转轮中……游戏立即结束 (nizhuan.txt:127): the poison after it is not resolved
            why = f"{won}，游戏立即结束，毒药不再结算（nizhuan.txt:127）"
            board.emit("（7）毒药结算", "nizhuan.txt:127", why)
            return
        self._resolve_poison(board, "（7）毒药结算" if r2 else "（5）毒药结算")

    def _undecided_kill(self, board: Board) -> None:
        """历史轮: a night whose wolves decided no kill (none sent, or only refused ones) is a
        空刀 (nizhuan.txt:205 若届时狼群无法决定刀人对象，则视为空刀), recorded as one: the
        逆转轮's wolves cannot choose that night's kill again (nizhuan.txt:79)."""
        if "kill" in board.scratch:
            return
        cards = [uid for uid in self._kill_cards(board) if self._lost(board, uid) is None]
        if not cards:
            return
        self._record(board, cards[0], "杀人", ())
        why = "狼群没有决定刀人对象，视为空刀，记入历史轮记录（nizhuan.txt:205）"
        board.emit("（1）杀人", "nizhuan.txt:205", why)

    def _night_acts(self, board: Board, actions: Sequence[Action]) -> list[_Act]:
        """Validate the players' actions and add the NPC replays; in the night's order."""
        acts: list[_Act] = []
        groups: dict[tuple[str, str], list[Action]] = {}
        for a in actions:
            skill = self.canonical_skill(a.skill)
            a = replace(a, skill=skill)
            if skill in self.trigger_skills:
                board.prepared.append(a)
                continue
            if skill not in self.night_skills:
                why = (
                    f"<{skill}>在白天发动，不是夜晚技能"
                    if skill in self.day_skills
                    else self.unknown_skill_reason(skill)
                )
                board.record(a, "校验", Outcome.INVALID, why, self.skill_rules.get(skill, ""))
                continue
            groups.setdefault(("狼群" if skill == "杀人" else a.actor, skill), []).append(a)
        for (who, skill), items in groups.items():
            rule = self.skill_rules[skill]
            if len({(x.targets, x.choice, x.card) for x in items}) > 1:
                listing = "；".join(x.describe() for x in items)
                team = "（狼群共同指杀一名角色，nizhuan.txt:79）" if who == "狼群" else ""
                for x in items:
                    board.record(
                        x,
                        "校验",
                        Outcome.INVALID,
                        f"当晚提交了{len(items)}条不同的<{skill}>（{listing}），"
                        f"同一技能每晚只能发动一次{team}；请导演只保留一条",
                        rule,
                    )
                continue
            for x in items[1:]:
                board.record(x, "校验", Outcome.INVALID, "重复记录，只结算一次", rule)
            a = items[0]
            try:
                acts.append(self._check(board, a, skill))
            except EngineError as exc:
                board.record(a, "校验", Outcome.INVALID, str(exc), rule)
                board.emit("校验", rule, f"无效：{exc}", actor=a.actor)
        if self._round_of(board) == 2:
            acts.extend(self._npc_night(board))
        acts.sort(key=lambda x: _night_order(x, board.seat(x.action.actor)))
        return acts

    def _check(self, board: Board, a: Action, skill: str) -> _Act:
        """A player's action, validated (EngineError with the Chinese reason otherwise)."""
        card = self._skill_card(board, a, skill)
        lost = self._lost(board, card)
        if lost:
            raise EngineError(lost)
        if skill in LIMITED:
            ch = board.charge(card, skill)
            if ch is None or ch.remaining <= 0:
                raise EngineError(f"<{skill}>是<限定>技能，已经发动过")
        if skill == "杀人":
            if self._round_of(board) == 2 and self._kill_fixed(board):
                raise EngineError(
                    "第一轮狼人有记录的杀人操作（包括空刀），不可更改（nizhuan.txt:79）"
                )
            if a.declined or not a.targets:
                return _Act(a, skill, card, (), False)
        if len(a.targets) != 1:
            raise EngineError(f"<{skill}>须选择一个目标，收到{len(a.targets)}个")
        target = a.targets[0]
        if skill in ("时间吞噬", "重定之理"):
            uid = self._parse_target(board, target, a.choice or "第一身份")
            if not uid.endswith("#1"):
                raise EngineError(f"<{skill}>只能对第一身份发动（{self.skill_rules[skill]}）")
        else:
            uid = self._parse_target(board, target, a.choice)
        if skill == "毒药" and board.scratch.get("poisoned_by", {}).get(a.actor):
            raise EngineError("同一晚只能发动一次<毒药>")
        return _Act(a, skill, card, (uid,), False)

    def _kill_fixed(self, board: Board) -> bool:
        """A recorded kill of this night binds the round-2 wolves (nizhuan.txt:79) unless
        时间吞噬 or 重定之理 freed a 狼人 first card (nizhuan.txt:84, 109)."""
        rel = self._rel(board)
        if not self._records(board, "杀人", rel):
            return False
        return not any(
            board.statuses_of(c.uid, kind)
            for n in board.order
            for c in board.player(n).cards
            if c.name == "狼人"
            for kind in ("时间吞噬", "重定之理")
        )

    def _npc_night(self, board: Board) -> list[_Act]:
        """The NPC first cards' recorded actions of this (relative) night (nizhuan.txt:22)."""
        rel = self._rel(board)
        acts: list[_Act] = []
        for skill in ("杀人", "预言", "救药", "毒药"):
            for m in self._records(board, skill, rel):
                actor = board.owner(m.card)
                a = Action(
                    actor,
                    skill,
                    tuple(_card_label(t) for t in m.targets),
                    choice=None if m.targets else "放弃",
                    card="第一身份",
                    ref=f"历史轮记录：{rel.zh}",
                )
                if skill == "杀人" and not self._kill_fixed(board):
                    board.record(
                        a,
                        "NPC",
                        Outcome.FIZZLED,
                        "记录的杀人被时间吞噬/重定之理解除，狼人阵营可重新指杀"
                        "（nizhuan.txt:84, 109）",
                        self.skill_rules[skill],
                    )
                    continue
                why = self._npc_blocked(board, m, skill)
                if why:
                    board.record(
                        a,
                        "NPC",
                        Outcome.FIZZLED,
                        f"历史记录的行动未发生：{why}",
                        self.skill_rules[skill],
                    )
                    board.emit(
                        "NPC", self.skill_rules[skill], f"历史记录的行动未发生：{why}", actor=actor
                    )
                    continue
                if skill in LIMITED:
                    ch = board.charge(m.card, skill)
                    if ch is None or ch.remaining <= 0:
                        board.record(
                            a,
                            "NPC",
                            Outcome.FIZZLED,
                            f"<{skill}>已经发动过",
                            self.skill_rules[skill],
                        )
                        continue
                acts.append(_Act(a, skill, m.card, m.targets, True))
        return acts

    def _npc_blocked(self, board: Board, m: Memory, skill: str) -> str | None:
        """Why a recorded action cannot happen now (None: it happens)."""
        owner = board.owner(m.card)
        card = board.card(m.card)
        if skill == "杀人":
            if not any(c.endswith("#1") for c in self._kill_cards(board)):
                return "狼人身份牌均已出局"
        elif not card.alive:
            return f"{owner}的第一身份（{card.name}）已出局"
        if self._swallowed(board, m.card):
            return f"{owner}的第一身份被<时间吞噬>，当天的操作视作未进行（nizhuan.txt:84）"
        if board.statuses_of(m.card, "重定之理"):
            return f"{owner}的第一身份被<重定之理>选中，由玩家自由操作（nizhuan.txt:109）"
        lost = self._lost(board, m.card)
        if lost:
            return lost
        for t in m.targets:
            if skill == "救药":
                # 选择一名角色，对其使用救药 (nizhuan.txt:93): the character, while in play
                if not board.alive(board.owner(t)):
                    return f"目标{board.owner(t)}已出局"
            elif not board.card(t).alive:
                return f"目标{_card_label(t)}已出局"
        return None

    def _night_act(self, board: Board, act: _Act, label: str) -> None:
        a, skill = act.action, act.skill
        rule = self.skill_rules[skill]
        who = f"{a.actor}的{board.card(act.actor_card).name}" + ("（NPC）" if act.npc else "")
        if (
            act.npc
            and act.targets
            and not board.card(act.targets[0]).alive
            and not (skill == "救药" and board.alive(board.owner(act.targets[0])))
        ):
            why = f"目标{_card_label(act.targets[0])}已出局"
            board.record(a, label, Outcome.FIZZLED, f"历史记录的行动未发生：{why}", rule)
            return
        if skill == "救药" and board.scratch.get("poisoned_by", {}).get(a.actor):
            why = "<毒药>发动后，该夜晚不可发动<救药>（nizhuan.txt:94）"
            board.record(a, label, Outcome.INVALID, why, rule)
            board.emit(label, rule, f"无效：{why}", actor=who)
            return
        if skill in LIMITED:
            board.use_charge(act.actor_card, skill)
        if not act.npc:
            self._record(board, act.actor_card, skill, act.targets)
        if skill == "杀人":
            board.scratch["kill"] = act
            reason = f"狼群指杀{_card_label(act.targets[0])}" if act.targets else "狼群空刀"
            if act.npc:
                reason = f"按历史轮记录：{reason}（不可更改，nizhuan.txt:79）"
            board.record(
                a, label, Outcome.DONE, reason, rule, tuple(_card_label(t) for t in act.targets)
            )
            board.emit(label, rule, reason, actor=who)
            return
        target = act.targets[0]
        tl = _card_label(target)
        if skill == "预言":
            faction = faction_of(board.card(target).name)
            text = f"预言：{tl}的阵营为{faction}。" + ("（历史轮记录的查验）" if act.npc else "")
            board.tell(a.actor, text, rule)
            board.record(a, label, Outcome.DONE, text, rule, (tl,))
        elif skill == "救药":
            holder = board.owner(target)
            board.add_status(
                Status("救药", holder, who, board.index, board.index, note="当晚不会因被指杀而出局")
            )
            board.record(
                a,
                label,
                Outcome.DONE,
                f"{holder}当晚不会因被指杀而出局；女巫失去<通灵>",
                rule,
                (holder,),
            )
        elif skill == "毒药":
            board.scratch.setdefault("poisoned_by", {})[a.actor] = True
            board.scratch.setdefault("poison", []).append((target, a.actor, who))
            board.record(a, label, Outcome.DONE, f"{tl}当晚出局（毒药结算）", rule, (tl,))
        elif skill in ("时间吞噬", "重定之理"):
            self._time_skill(board, act, label, who)
            return
        board.emit(label, rule, board.results[-1].reason, actor=who, resolved=(tl,))

    def _time_skill(self, board: Board, act: _Act, label: str, who: str) -> None:
        a, skill, target = act.action, act.skill, act.targets[0]
        rule = self.skill_rules[skill]
        tl = _card_label(target)
        nxt, until = board.index + 1, board.index + 2
        if skill == "重定之理":
            rival = [
                s
                for s in board.statuses
                if s.kind == "时间吞噬" and s.holder == target and s.since == nxt
            ]
            # 发动该技能会公示 (nizhuan.txt:109): the launch and its choice, not who launched it
            board.announce(f"<重定之理>发动，选择{tl}")
            if rival:
                board.record(
                    a,
                    label,
                    Outcome.BLOCKED,
                    "狼妃对同一身份牌发动了<时间吞噬>，<重定之理>无效并浪费（nizhuan.txt:109）",
                    rule,
                    (tl,),
                )
                board.emit(label, rule, f"<重定之理>对{tl}无效并浪费", actor=who)
                return
            board.add_status(
                Status("重定之理", target, who, nxt, until, note="下一个白天和夜晚由玩家自由操作")
            )
            board.tell(
                board.owner(target),
                f"你的第一身份被<重定之理>选中：下一个白天和夜晚可以自由操作该身份（{rule}）。",
                rule,
            )
            text = f"{tl}在下一个白天和夜晚由其玩家自由操作"
        else:
            board.add_status(
                Status(
                    "时间吞噬",
                    target,
                    who,
                    nxt,
                    until,
                    negative=True,
                    note="第二天的投票和技能视作未进行",
                )
            )
            text = f"{tl}于第二天所做的投票和使用技能的操作均视作未进行"
        if board.card(target).name == "狼人":
            text += "；狼人阵营可以重新指杀"
        board.record(a, label, Outcome.DONE, text, rule, (tl,))
        board.emit(label, rule, text, actor=who, resolved=(tl,))

    def _witch_feedback(self, board: Board, label: str) -> None:
        """通灵<强制>: the witch learns the kill target, until the antidote is used
        (nizhuan.txt:92-93)."""
        kill: _Act | None = board.scratch.get("kill")
        for name in board.order:
            for c in board.player(name).cards:
                if c.name != "女巫" or not c.alive:
                    continue
                ch = board.charge(c.uid, "救药")
                if ch is None or ch.remaining <= 0 or self._lost(board, c.uid):
                    continue
                if self._round_of(board) == 2 and not self._controlled(board, c.uid):
                    continue  # the NPC witch repeats its record; the player is not asked
                text = (
                    "通灵：今晚没有被指杀的角色。"
                    if kill is None or not kill.targets
                    else f"通灵：今晚被指杀的是{_card_label(kill.targets[0])}。"
                )
                board.tell(name, text, "nizhuan.txt:92")
                board.emit(label, "nizhuan.txt:92", f"通灵反馈给{name}", actor=name, because=text)

    def _resolve_kill(self, board: Board, step: str) -> None:
        kill: _Act | None = board.scratch.get("kill")
        if kill is None or not kill.targets:
            board.emit(step, "nizhuan.txt:144", "今晚没有指杀" if kill is None else "狼群空刀")
            return
        target = kill.targets[0]
        card = board.card(target)
        owner = board.owner(target)
        if not card.alive:
            board.emit(step, "nizhuan.txt:144", f"{_card_label(target)}已出局，指杀不再结算")
            return
        if card.name == "长老":
            ch = board.charge(target, "长寿之命")
            if ch is not None and ch.remaining > 0:
                board.use_charge(target, "长寿之命")
                board.emit(
                    step, "nizhuan.txt:144", f"{_card_label(target)}是未被有效指杀的长老，不出局"
                )
                board.tell(
                    owner, "长寿之命：你的长老第一次成为指杀的目标，没有出局。", "nizhuan.txt:102"
                )
                return
        if board.statuses_of(owner, "救药"):
            board.emit(step, "nizhuan.txt:144", f"{owner}是救药的目标，不出局", checked="救药")
            for r in board.results:
                if r.action is kill.action:
                    board.amend(r, Outcome.BLOCKED, f"{owner}被救药救下")
            return
        board.card_out(
            owner,
            cause="被指杀",
            step=step,
            rule="nizhuan.txt:144",
            source="狼群",
            kind="杀人",
            bound_uid=target,
        )
        board.drain()

    def _resolve_poison(self, board: Board, step: str) -> None:
        for target, actor, _who in board.scratch.get("poison", []):
            board.card_out(
                board.owner(target),
                cause="女巫[毒药]",
                step=step,
                rule="nizhuan.txt:147",
                source=actor,
                kind="毒药",
                bound_uid=target,
            )
            board.drain()

    # ------------------------------------------------------------------ deaths and triggers
    def after_card_out(self, board: Board, death: Death) -> None:
        uid = death.card_uid
        if self._round_of(board) == 1:
            board.remember(uid, REC + "出局", ())
        card = board.card(uid)
        self._last_words(board, death)
        triggers: list[Trigger] = []
        if not death.red:
            if card.name == "长老" and death.kind in ("投票出局", "决斗", "毒药", "最后一枪"):
                triggers.append(Trigger(f"长老:{uid}", lambda b: self._elder_loss(b, death)))
            if card.name == "猎人":
                triggers.append(Trigger(f"最后一枪:{uid}", lambda b: self._shot(b, death)))
        board.push_front(*triggers)
        if board.statuses_of(uid, "警徽"):
            board.defer(Trigger(f"警长:{uid}", lambda b: self._handover(b, death)))

    def _last_words(self, board: Board, death: Death) -> None:
        """遗言: per round as many as the wolves; round 2 only for second cards; the first to go
        fully out get them; none after a red card (nizhuan.txt:50, 55)."""
        if death.red:
            return
        round_two = self._round_of(board) == 2
        if (round_two and death.card_index != 2) or (not round_two and not death.player_out):
            return
        quota = int(board.settings.get("last_words", str(self._wolf_count(board))))
        granted = [s for s in board.statuses if s.kind == "遗言"]
        if len(granted) >= quota or any(s.holder == death.player for s in granted):
            return
        board.add_status(
            Status("遗言", death.player, "遗言", board.index, None, note="次日讨论日开始前提交")
        )
        # remembered past the reversal (which clears the statuses): who may publish words
        given = [n for n in board.settings.get(LAST_WORDS_GIVEN, "").split("\t") if n]
        board.settings[LAST_WORDS_GIVEN] = "\t".join([*given, f"{death.player}@{board.phase}"])
        board.tell(
            death.player,
            f"你可以留下遗言（本轮第{len(granted) + 1}份，共{quota}份），请在次日讨论日开始前"
            "提交给导演；遗言中禁止使用Discuz!代码（nizhuan.txt:55, 207）。",
            "nizhuan.txt:55",
        )
        board.emit("遗言", "nizhuan.txt:55", f"{death.player}获得遗言权利", actor=death.player)

    @staticmethod
    def _wolf_count(board: Board) -> int:
        """狼人的数量: the wolf-faction characters (nizhuan.txt:55, 72)."""
        return sum(1 for n in board.order if _faction_of_player(board.player(n)) == WOLF)

    def _elder_loss(self, board: Board, death: Death) -> None:
        board.add_status(
            Status(
                "失去技能",
                "*",
                f"{death.player}的长老",
                board.index,
                None,
                negative=True,
                note="所有特权身份失去技能",
            )
        )
        # not announced: 以任何方式出局的角色均不公示其身份 (nizhuan.txt:40)
        line = "长老因投票、决斗、毒药或最后一枪出局，所有特权身份失去技能"
        board.emit(death.step, "nizhuan.txt:102", line, actor=death.player)

    def _shot(self, board: Board, death: Death) -> None:
        uid, shooter = death.card_uid, death.player
        step, rule = "最后一枪（插入结算）", "nizhuan.txt:98"
        lost = self._lost(board, uid)
        prepared = board.take_prepared(shooter, "最后一枪")
        if lost:
            board.emit(step, rule, f"{shooter}的<最后一枪>失效：{lost}")
            if prepared is not None:
                board.record(prepared, step, Outcome.FIZZLED, lost, rule)
            return
        if self._round_of(board) == 2 and not self._controlled(board, uid):
            rec = [m for m in board.memory if m.card == uid and m.skill == REC + "最后一枪"]
            a = Action(
                shooter,
                "最后一枪",
                tuple(_card_label(t) for m in rec for t in m.targets),
                card="第一身份",
                ref="历史轮记录",
            )
            if prepared is not None:
                board.record(
                    prepared,
                    step,
                    Outcome.INVALID,
                    "第一身份的<最后一枪>按历史轮记录结算（nizhuan.txt:98）",
                    rule,
                )
            if not rec or not rec[0].targets:
                board.emit(step, rule, f"{shooter}的第一身份（猎人）在历史轮没有成功开枪，不开枪")
                return
            if self._swallowed(board, uid):  # 使用技能的操作均视作未进行, as its duel or vote
                why = f"{shooter}的第一身份被<时间吞噬>，当天的操作视作未进行，预定的枪不开"
                board.record(a, step, Outcome.FIZZLED, why, "nizhuan.txt:84")
                board.emit(step, "nizhuan.txt:84", why, actor=shooter)
                return
            target = rec[0].targets[0]
            if not board.card(target).alive:
                why = f"历史记录的行动未发生：预定的{_card_label(target)}已出局"
                board.record(a, step, Outcome.FIZZLED, why, rule)
                board.emit(step, rule, why, actor=shooter)
                return
            self._fire(board, a, death, target, step, rule, npc=True)
            return
        if prepared is None:
            board.need(
                shooter,
                "最后一枪",
                f"{shooter}的猎人出局，可以对一名其他角色开枪：记录目标后重新结算"
                f"（{SKILL}，或 {CHOICE}）",
                rule,
                target="目标",
                choices=("放弃",),
            )
            board.emit(step, rule, f"等待{shooter}决定<最后一枪>的目标", actor=shooter)
            return
        if prepared.declined:
            board.record(prepared, step, Outcome.DONE, f"{shooter}放弃开枪", rule)
            return
        try:
            if len(prepared.targets) != 1:
                raise EngineError("<最后一枪>须选择一个目标")
            target = self._parse_target(board, prepared.targets[0], prepared.choice)
            if board.owner(target) == shooter:
                raise EngineError("<最后一枪>须选择一名其他角色（nizhuan.txt:98）")
        except EngineError as exc:
            board.record(prepared, step, Outcome.INVALID, str(exc), rule)
            board.need(
                shooter, "最后一枪", f"{shooter}的<最后一枪>目标无效（{exc}），请重新决定", rule
            )
            return
        self._fire(board, prepared, death, target, step, rule, npc=False)

    def _fire(
        self, board: Board, a: Action, death: Death, target: str, step: str, rule: str, *, npc: bool
    ) -> None:
        tl = _card_label(target)
        if not npc and death.card_index == 1:
            self._record(board, death.card_uid, "最后一枪", (target,))
        board.record(
            a, step, Outcome.DONE, f"{tl}立即出局" + ("（历史轮记录）" if npc else ""), rule, (tl,)
        )
        board.emit(step, rule, f"{death.player}发动<最后一枪>", actor=death.player, resolved=(tl,))
        board.card_out(
            board.owner(target),
            cause=f"{death.player}的[最后一枪]",
            step=step,
            rule=rule,
            source=death.player,
            kind="最后一枪",
            bound_uid=target,
        )

    def _handover(self, board: Board, death: Death) -> None:
        uid, old = death.card_uid, death.player
        step, rule = "警长移交", "nizhuan.txt:118"
        for s in board.statuses_of(uid, "警徽"):
            board.remove_status(s)
        board.sheriff = None
        if death.red:
            living = [c for n in board.order for c in board.player(n).cards if c.alive]
            if living:
                pick = seeded_choice(f"{board.phase.label}:{old}", [c.uid for c in living])
                self._give_badge(
                    board,
                    pick,
                    f"警长被红牌罚下，警徽随机移交给{_card_label(pick)}（nizhuan.txt:50）",
                )
            return
        prepared = board.take_prepared(old, "殉职")
        if self._round_of(board) == 2 and not self._controlled(board, uid):
            rec = [m for m in board.memory if m.card == uid and m.skill == REC + "殉职"]
            if prepared is not None:
                board.record(
                    prepared,
                    step,
                    Outcome.INVALID,
                    "第一身份的殉职按历史轮记录结算（nizhuan.txt:118）",
                    rule,
                )
            if not rec or not rec[0].targets:
                line = f"{_card_label(uid)}在历史轮没有记录移交操作，警长流失"
            elif not board.card(rec[0].targets[0]).alive:
                line = f"预定继任的{_card_label(rec[0].targets[0])}已出局，警长流失"
            else:
                self._give_badge(
                    board,
                    rec[0].targets[0],
                    f"警长按历史轮记录移交给{_card_label(rec[0].targets[0])}",
                )
                return
            board.announce(line)
            board.emit(step, rule, line, actor=old)
            return
        if prepared is None:
            board.need(
                old,
                "殉职",
                f"警长{_card_label(uid)}出局，须选择一名未出局的角色继任警长，或流失警长"
                f"（{SKILL}，或 {CHOICE}）",
                rule,
                target="继任者",
                choices=("放弃",),
            )
            board.emit(step, rule, f"等待{old}选择继任警长", actor=old)
            return
        if prepared.declined:
            board.record(prepared, step, Outcome.DONE, "警长流失，本轮游戏没有警长", rule)
            board.announce("警长流失，本轮游戏没有警长")
            if death.card_index == 1:
                self._record(board, uid, "殉职", ())
            return
        try:
            if len(prepared.targets) != 1:
                raise EngineError("须选择一名未出局的角色")
            target = self._parse_target(board, prepared.targets[0], prepared.choice)
        except EngineError as exc:
            board.record(prepared, step, Outcome.INVALID, str(exc), rule)
            board.need(
                old,
                "殉职",
                successor_again(
                    f"警长的殉职目标无效（{exc}）",
                    prepared,
                    f"选择一名未出局的角色继任警长，或流失警长（{SKILL}，或 {CHOICE}）",
                ),
                rule,
                target="继任者",
                choices=("放弃",),
                undo=prepared.ref or None,
            )
            return
        if death.card_index == 1:
            self._record(board, uid, "殉职", (target,))
        board.record(
            prepared,
            step,
            Outcome.DONE,
            f"警徽移交给{_card_label(target)}",
            rule,
            (_card_label(target),),
        )
        self._give_badge(board, target, f"警长{old}殉职，警徽移交给{_card_label(target)}")

    def _give_badge(self, board: Board, uid: str, line: str) -> None:
        owner = board.owner(uid)
        board.sheriff = owner
        board.add_status(Status("警徽", uid, "警长", board.index, None, survives_death=False))
        board.announce(line)
        board.tell(
            owner, f"你的{_ordinal(int(uid[-1]))}成为警长（nizhuan.txt:116）。", "nizhuan.txt:116"
        )
        board.emit("警长", "nizhuan.txt:116", line, resolved=(owner,))

    # ------------------------------------------------------------------ director's actions
    def _director(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        rest: list[Action] = []
        for a in actions:
            skill = self.canonical_skill(a.skill)
            if skill in ("投降", "判负"):
                self._game_over(board, a, skill)
                continue
            if skill != "红牌罚下":
                rest.append(a)
                continue
            if not board.alive(a.actor):
                board.record(a, "红牌罚下", Outcome.FIZZLED, f"{a.actor}已出局", "nizhuan.txt:50")
                continue
            p = board.player(a.actor)
            board.players[a.actor] = replace(p, red_carded=True)
            board.record(
                a,
                "红牌罚下",
                Outcome.DONE,
                f"{a.actor}被红牌罚下出局，没有遗言，不触发技能",
                "nizhuan.txt:50",
            )
            for c in p.cards:
                if c.alive:
                    self._red_out(board, a.actor, "红牌罚下", "nizhuan.txt:50", c.uid)
            board.drain()
        return rest

    def _game_over(self, board: Board, a: Action, skill: str) -> None:
        """投降 (nizhuan.txt:58-59): a wolf-faction character starts it and the whole wolf group
        agreed (the director records it only then); 判负: a faction lost by red cards."""
        if board.winner is not None:
            board.record(a, skill, Outcome.FIZZLED, "游戏已结束", self.skill_rules[skill])
            return
        if skill == "投降":
            if not board.has(a.actor) or _faction_of_player(board.player(a.actor)) != WOLF:
                board.record(
                    a,
                    skill,
                    Outcome.INVALID,
                    f"{a.actor}不是狼人阵营的角色，不能发起投降",
                    "nizhuan.txt:58",
                )
                return
            reason = f"狼人阵营投降（由{a.actor}发起，狼群中所有角色同意）"
            board.record(a, skill, Outcome.DONE, reason, "nizhuan.txt:59")
            board.set_winner(VILLAGE, reason, "nizhuan.txt:59")
            return
        loser = (a.choice or "").strip()
        if loser not in (WOLF, VILLAGE):
            board.record(
                a, skill, Outcome.INVALID, f"判负须写明阵营（choice = {WOLF} 或 {VILLAGE}）", ""
            )
            return
        winner = VILLAGE if loser == WOLF else WOLF
        board.record(a, skill, Outcome.DONE, f"{loser}判负", self.skill_rules[skill])
        board.set_winner(winner, f"{loser}判负（{a.ref or '红牌'}）", self.skill_rules[skill])

    # ------------------------------------------------------------------ the day
    def run_day(self, board: Board, day: DayInput) -> None:
        board.voters_day = day.day
        board.voters = tuple(v for v in day.voters if board.has(v))
        ends = [a for a in day.actions if self.canonical_skill(a.skill) in ("投降", "判负")]
        self._director(board, ends)
        if board.winner is not None:
            return
        reds = [a for a in day.actions if self.canonical_skill(a.skill) == "红牌罚下"]
        rest = [
            a
            for a in day.actions
            if self.canonical_skill(a.skill) not in ("红牌罚下", "投降", "判负")
        ]
        self._record_votes(board, rest)
        # the decisions a card going out calls for are at hand before any card goes out: a
        # duel takes its target at once (nizhuan.txt:106), and a 猎人 so taken shoots
        # (nizhuan.txt:98), a sheriff so taken hands the badge on (nizhuan.txt:118)
        for a in rest:
            skill = self.canonical_skill(a.skill)
            if skill in self.trigger_skills:
                board.prepared.append(replace(a, skill=skill))
        # a red card timed before a duel is resolved before it: the one red-carded is out
        # from that moment (nizhuan.txt:49-50), he neither duels nor is taken by a duel
        closed, reds = self._duels(board, rest, reds)
        # 白天红牌罚下在被投票出局之前 (nizhuan.txt:52)
        self._director(board, reds)
        for a in rest:
            skill = self.canonical_skill(a.skill)
            if skill not in (*self.trigger_skills, "决斗", "投票"):
                board.record(
                    a,
                    "校验",
                    Outcome.INVALID,
                    f"<{skill}>不是白天发动的技能",
                    self.skill_rules.get(skill, ""),
                )
        rel = self._rel(board)
        election = day.sheriff_election or (day.elected is not None and rel.number == 1)
        if self._history_ended_today(board, day, election):
            return
        if rel.number == 1 and not election and day.out is not None:
            # 开始第一天讨论日，竞选警长 (nizhuan.txt:139, 156): the day's vote elects, it puts
            # nobody out — a count made as an exile is not applied
            which = "逆转轮" if self._round_of(board) == 2 else "历史轮"
            rule = "nizhuan.txt:156" if self._round_of(board) == 2 else "nizhuan.txt:139"
            line = (
                f"第{day.day}天是{which}的第一天讨论日，应竞选警长（{rule}）；"
                f"计票却按放逐投票给出了最高票{day.out}，未让其出局"
            )
            board.need(
                "导演",
                "竞岗",
                f"{line}：请按警长竞选重新计票后重新结算（{RESOLVE}）",
                rule,
            )
            board.emit("竞岗", rule, line, because=day.decided_by)
            board.drain()
            return
        if election:
            if day.elected is None:
                board.announce("警长竞选：无人当选")
                board.emit("竞岗", "nizhuan.txt:117", "无人当选警长", because=day.decided_by)
            else:
                uid = self._parse_target(board, day.elected)
                self._give_badge(board, uid, f"{_card_label(uid)}当选警长")
        elif day.out is not None and (gone := self._out_today(board, day.out)) is not None:
            # the card the most votes named went out earlier today (a duel, a red card): it
            # goes out once; votes on a card out before the close no longer count
            # (docs/rulings.md 投票与计票), so the vote puts nobody out
            line = f"最高票{gone}已在投票结算之前出局，不再因投票出局"
            board.emit("放逐投票", "nizhuan.txt:51", line, because=day.decided_by)
            board.announce(f"最高票{gone}已在投票结算之前出局")
        elif day.out is not None:
            uid = self._parse_target(board, day.out)
            board.emit(
                "放逐投票",
                day.rule or "nizhuan.txt:45",
                f"{_card_label(uid)}最高票",
                because=day.decided_by + ("；当天因决斗关门" if closed else ""),
            )
            board.card_out(
                board.owner(uid),
                cause="投票出局",
                step="放逐投票",
                rule="nizhuan.txt:45",
                source="放逐投票",
                kind="投票出局",
                bound_uid=uid,
            )
        else:
            board.emit(
                "放逐投票",
                day.rule or "nizhuan.txt:45",
                "今日无人被投票出局",
                because=day.decided_by,
            )
        board.drain()

    def _history_ended_today(self, board: Board, day: DayInput, election: bool) -> bool:
        """历史轮: a duel (and the shots and red cards it brought) took the last 狼人 or the
        last 村民 card — 第一轮游戏立刻结束 (nizhuan.txt:123); 逆转轮: they met a faction's win
        condition — 游戏立即结束 (nizhuan.txt:127). Either way the day's vote is not resolved."""
        vote = "警长竞选" if election else "放逐投票"
        if self._round_of(board) == 2:
            return self._won_today(board, day, vote)
        over = self._history_over_now(board)
        if over is None:
            return False
        line = f"历史轮已经结束（{over}），第一轮立刻结束，当天的{vote}不再结算"
        board.emit(vote, "nizhuan.txt:123", f"{line}（nizhuan.txt:123）", because=day.decided_by)
        board.announce(line)
        board.drain()
        return True

    def _won_today(self, board: Board, day: DayInput, vote: str) -> bool:
        """逆转轮: a duel (or a red card) met a faction's win condition — 游戏立即结束
        (nizhuan.txt:127): the day's vote is not resolved, logged as the game's end before the
        vote (:data:`~engine.rulesets.base.ENDED_BEFORE_THE_VOTE`) at the last such act."""
        won = self._won_now(board)
        if won is None:
            return False
        self.log_ended_before_the_vote(
            board,
            day.actions,
            ("决斗", "红牌罚下"),
            "nizhuan.txt:127",
            f"{won}，游戏立即结束，当天的{vote}不再结算",
            because=day.decided_by,
        )
        board.drain()
        return True

    def _out_today(self, board: Board, raw: str) -> str | None:
        """The label of the card ``raw`` names when it was in play as the day opened and is
        out now (taken by a duel or a red card earlier in the day); None otherwise."""
        try:
            self._parse_target(board, raw)
        except EngineError:
            start = {p.name: p for p in board.start.players}
            try:
                uid = _card_in_play(start.get, raw)
            except EngineError:
                return None
            return _card_label(uid) if not board.card(uid).alive else None
        return None

    def _record_votes(self, board: Board, actions: Sequence[Action]) -> None:
        """Round 1: every first card's vote is recorded (nizhuan.txt:21)."""
        if self._round_of(board) != 1:
            return
        for a in actions:
            if self.canonical_skill(a.skill) != "投票" or not board.has(a.actor):
                continue
            first = board.player(a.actor).cards[0]
            voter = first.uid
            if not first.alive:
                board.record(
                    a,
                    "投票记录",
                    Outcome.INVALID,
                    f"{a.actor}的第一身份已出局，不能投票",
                    "nizhuan.txt:49",
                )
                continue
            if a.declined or not a.targets:
                board.remember(voter, REC + "投票", ("弃权",))
            else:
                try:
                    target = self._parse_target(board, a.targets[0], a.choice)
                except EngineError:
                    continue
                board.remember(voter, REC + "投票", (target,))
            board.record(
                a,
                "投票记录",
                Outcome.DONE,
                "第一身份的投票已记录，逆转轮中固定（nizhuan.txt:193）",
                "nizhuan.txt:193",
            )

    def _duels(
        self, board: Board, actions: Sequence[Action], reds: Sequence[Action] = ()
    ) -> tuple[bool, list[Action]]:
        """骑士[决斗]: from day 2, a card; public; a wolf card closes the day (nizhuan.txt:106).
        The day's red cards timed before a duel are resolved before it (nizhuan.txt:49-50).
        Returns whether the day closed, and the red cards not resolved yet."""
        waiting = list(reds)
        rel = self._rel(board)
        rule, step = self.skill_rules["决斗"], "决斗"
        todo: list[_Act] = []
        for a in actions:
            if self.canonical_skill(a.skill) != "决斗":
                continue
            a = replace(a, skill="决斗")
            try:
                if rel.number < 2:
                    raise EngineError("决斗第二天起才能发动（nizhuan.txt:106）")
                card = self._skill_card(board, a, "决斗")
                lost = self._lost(board, card)
                if lost:
                    raise EngineError(lost)
                ch = board.charge(card, "决斗")
                if ch is None or ch.remaining <= 0:
                    raise EngineError("<决斗>是<限定>技能，已经发动过")
                if len(a.targets) != 1:
                    raise EngineError("<决斗>须选择一张身份牌")
                target = self._parse_target(board, a.targets[0], a.choice)
            except EngineError as exc:
                board.record(a, step, Outcome.INVALID, str(exc), rule)
                continue
            todo.append(_Act(a, "决斗", card, (target,), False))
        if self._round_of(board) == 2:
            for m in self._records(board, "决斗", rel):
                a = Action(
                    board.owner(m.card),
                    "决斗",
                    tuple(_card_label(t) for t in m.targets),
                    card="第一身份",
                    ref=f"历史轮记录：{rel.zh}",
                )
                why = self._npc_blocked(board, m, "决斗")
                ch = board.charge(m.card, "决斗")
                if not why and (ch is None or ch.remaining <= 0):
                    why = "<决斗>已经发动过"
                if why:
                    board.record(a, step, Outcome.FIZZLED, f"历史记录的行动未发生：{why}", rule)
                    board.emit(step, rule, f"历史记录的行动未发生：{why}", actor=a.actor)
                    continue
                todo.append(_Act(a, "决斗", m.card, m.targets, True))
        todo.sort(key=lambda x: (x.action.at or "", x.npc))
        closed = False
        for act in todo:
            at = action_time(act.action)
            early = [r for r in waiting if _earlier(action_time(r), at)]
            if early:
                waiting = [r for r in waiting if r not in early]
                self._director(board, early)
            target = act.targets[0]
            if closed or not board.card(target).alive or not board.card(act.actor_card).alive:
                board.record(act.action, step, Outcome.FIZZLED, "当天已关门或目标/骑士已出局", rule)
                continue
            board.use_charge(act.actor_card, "决斗")
            if not act.npc:
                self._record(board, act.actor_card, "决斗", act.targets)
            knight_f = faction_of(board.card(act.actor_card).name)
            target_f = faction_of(board.card(target).name)
            tl = _card_label(target)
            line = (
                f"{act.action.actor}的骑士身份牌（{knight_f}）决斗{tl}（{target_f}），{tl}立刻出局"
            )
            if target_f == WOLF:
                line += "；决斗目标为狼人阵营身份牌，立刻关门"
                closed = True
            board.announce(line)
            board.record(
                act.action,
                step,
                Outcome.DONE,
                line + ("（历史轮记录）" if act.npc else ""),
                rule,
                (_card_label(target),),
            )
            board.emit(step, rule, line, actor=act.action.actor, resolved=(_card_label(target),))
            board.card_out(
                board.owner(target),
                cause=f"{act.action.actor}的[决斗]",
                step=step,
                rule=rule,
                source=act.action.actor,
                kind="决斗",
                bound_uid=target,
            )
            board.drain()
        return closed, waiting

    # ------------------------------------------------------------------ end of a phase
    def end_of_phase(self, board: Board) -> None:
        board.public[:0] = [self.death_line(board)]
        if self._round_of(board) == 1:
            why = self._history_over(board)
            if why:
                self._reverse(board, why)

    def death_part(self, death: Death) -> str:
        # 按出局顺序，不公示身份 (nizhuan.txt:40-41)
        return (
            f"{death.player}的{_ordinal(death.card_index)}"
            + ("（红牌罚下）" if death.red else "")
            + ("，该角色出局" if death.player_out else "")
        )

    def _history_over(self, board: Board) -> str | None:
        """历史轮结束条件 (nizhuan.txt:123-126)."""
        if over := self._history_over_now(board):
            return over
        if board.night == HISTORY_LAST_NIGHT:
            return "第四天夜晚结束"
        return None

    @staticmethod
    def _history_over_now(board: Board) -> str | None:
        """The 历史轮's end conditions met the moment a card goes out (nizhuan.txt:124-125)."""
        first = [board.player(n).cards[0] for n in board.order]
        if not any(c.alive for c in first if faction_of(c.name) == WOLF):
            return "所有狼人出局"
        if not any(c.alive for c in first if faction_of(c.name) == VILLAGE):
            return "所有村民出局"
        return None

    def _reverse(self, board: Board, why: str) -> None:
        """The 历史轮 ends; the 逆转轮 starts with all 16 cards (nizhuan.txt:155)."""
        day = board.phase.number + 1
        for n in board.order:
            p = board.player(n)
            if p.red_carded:
                continue
            board.players[n] = replace(
                p,
                cards=tuple(
                    replace(c, alive=True, out_phase=None, out_cause=None) for c in p.cards
                ),
            )
        board.sheriff = None
        board.statuses = []
        board.charges = {
            (c.card, c.skill, c.source): c
            for c in self._charges([c for n in board.order for c in board.player(n).cards])
        }
        declared = board.settings.get("reversal_day")
        if declared is not None and declared != str(day):
            board.need(
                "导演",
                "逆转轮",
                f"游戏文件写明逆转轮从第{declared}天开始（[nizhuan] reversal_day），"
                f"但历史轮按规则在{board.phase.zh}结束，逆转轮应从第{day}天开始"
                "（nizhuan.txt:123-126）；请改正游戏文件",
                "nizhuan.txt:123",
            )
        board.settings["round"] = "2"
        board.settings["reversal_day"] = str(day)
        line = (
            f"历史轮结束（{why}）；逆转轮从第{day}天开始：所有玩家的第二身份加入游戏，共16张身份；"
            f"第{day}天竞选警长"
        )
        board.announce(line)
        board.emit("历史轮结束", "nizhuan.txt:123-126, 155", line)
        # the new round's first day elects the sheriff (nizhuan.txt:156): the derivation reads
        # it from ``reversal_day`` (:meth:`Nizhuan.sheriff_election_day`), no game-file edit
        board.emit(
            "逆转轮",
            "nizhuan.txt:156",
            f"第{day}天为逆转轮第一天讨论日，竞选警长（计票按警长竞选）",
        )

    # ------------------------------------------------------------------ win check
    def win_conditions(self, board: Board) -> dict[str, bool]:
        if self._round_of(board) != 2 or self._transition(board):
            return {}
        ever_out = {m.card for m in board.memory if m.skill == REC + "出局"}
        villagers = [c for n in board.order for c in board.player(n).cards if c.name == "村民"]
        wolves = [
            c for n in board.order for c in board.player(n).cards if c.name in self.wolf_roles
        ]
        return {
            "wolf": bool(villagers) and all(not c.alive or c.uid in ever_out for c in villagers),
            "village": bool(wolves) and not any(c.alive for c in wolves),
        }

    def _won_now(self, board: Board) -> str | None:
        """逆转轮: a faction's win condition is met now (nizhuan.txt:127), as the reason."""
        met = [c for c, ok in self.win_conditions(board).items() if ok]
        if not met:
            return None
        first = min(met, key=lambda c: (board.win_marks.get(c, 0), c))
        return {
            "wolf": "狼人阵营胜利条件已达成（所有村民牌在两轮游戏中至少都出局过一次）",
            "village": "村民阵营胜利条件已达成（狼人身份和蚀时狼妃身份均出局）",
        }[first]

    def check_win(self, board: Board) -> None:
        step = "胜负判定"
        if self.announce_winner(board, step):
            return
        met = [c for c, ok in self.win_conditions(board).items() if ok]
        if not met:
            board.emit(
                step,
                "nizhuan.txt:127",
                "历史轮不判胜负"
                if self._round_of(board) == 1
                else "双方均未达成胜利条件，游戏继续",
            )
            return
        first = min(met, key=lambda c: (board.win_marks.get(c, 0), c))
        texts = {
            "wolf": (WOLF, "所有村民阵营的村民牌在两轮游戏中至少都出局过一次", "nizhuan.txt:129"),
            "village": (VILLAGE, "狼人身份和蚀时狼妃身份均出局", "nizhuan.txt:132"),
        }
        faction, reason, rule = texts[first]
        board.set_winner(faction, reason, rule)
        board.announce(f"游戏结束：{faction}胜利（{reason}）")
        board.emit(step, rule, f"{faction}胜利", because=reason)
