"""The rule-set kernel: what every rule set shares, overridden per set only where it differs.

The shape follows python-chess ``chess/variant.py``: a base class with class attributes and
methods, one subclass per rule text, registered by id in ``engine.rulesets``. For now a rule set
carries the vote rules (validity timeline settings and the tally decision); later work grows the
classes into full night engines.

This module is pure and self-contained: it imports nothing from ``engine.votes`` (which imports
it). The tally in ``engine.votes`` digests ballots and modifiers into a :class:`CountSheet`, and a
rule set turns the sheet into a :class:`Decision`.

The night engine (``engine.kernel``, ``engine.night``) drives a rule set through the hooks in the
"engine" section below; a rule set with ``has_engine = True`` implements them (m135 does). The
kernel's types are imported only for type checking, so this module stays import-cycle free.

Everything else a rule set is lives here too, as declared class attributes the engine modules
and the pipeline read (``get_ruleset(id).conduct`` …), never as tables keyed by id elsewhere:
its title, conduct, card and speed rules (:class:`engine.conduct.ConductRules`,
:class:`engine.cards.CardRules`, :class:`engine.speed.SpeedRules`), where announcements go, its
last words (:class:`LastWordsRules`), whether it has a sheriff election, an inquiry thread
(:class:`InquiryRules`), two vote rounds a day, extra player fields, two cards per player, and
the keys of its secret table.

Every rule reference is ``"<file>:<line>"`` into the rule post the director was given
(``m135.txt`` …), or ``"docs/rulings.md#<anchor>"`` where the text is silent and the project
made a ruling.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from engine.ballots import PlayerStatus
from engine.cards import CardRules
from engine.conduct import ConductRules
from engine.deal import MAX_ATTEMPTS, Deal, DealError, Rng, expand, pairs
from engine.kernel import RECORD, UNDO, ActionResult, EngineError, Outcome
from engine.rulesets.roles import VILLAGE, WOLF
from engine.speed import SpeedRules
from engine.state import CardState, Charge

if TYPE_CHECKING:
    from engine.kernel import Action, Board, DayInput, Death
    from engine.night import Holder, Pass, Step
    from engine.state import GameState, Status

__all__ = [
    "RULE_KEYS",
    "SHARED_VOTE_RULES",
    "CountSheet",
    "Deadline",
    "Decision",
    "Hands",
    "InquiryRules",
    "LastWordsRules",
    "Lineup",
    "Ruleset",
    "late_reason",
    "zh_span",
]

#: The rule references every rule set must define (a contract test checks each one).
RULE_KEYS: tuple[str, ...] = (
    "vote_right",  # who may vote (living players)
    "out",  # out players neither vote nor are voted for
    "window",  # votes are counted at the end of the day (before the close)
    "one_vote",  # one vote per living player per day
    "format",  # wrong format / wrong target → invalid
    "correct_invalid",  # how an invalid vote is corrected
    "abstain",  # 弃权 is written in the target
    "change_once",  # a change is allowed once
    "change_reply",  # a change must reply to the original vote floor
    "change_cutoff",  # no change in the last hour
    "change_accelerated",  # no change while accelerated
    "proxy",  # 代投 by the director
    "proxy_cutoff",  # no proxy in the last hour (tubian24: 30 minutes)
    "proxy_change_cutoff",  # a proxy that changes a vote
    "hidden",  # text hidden by colour/size/[hide] is not trusted
    "edited",  # an edited vote is flagged; the first version seen counts
    "election",  # day-1 sheriff election (where the set has one)
    "sheriff_weight",  # the sheriff's vote weight
    "top",  # the unique maximum is out
    "tie",  # what a tie does
    "block_out",  # a status that stops a vote-out
    "public",  # what of the tally is public
)

#: The vote rules every rule text is silent on, read the same way for all (docs/rulings.md):
#: each rule set's ``rules`` starts from these.
SHARED_VOTE_RULES: Mapping[str, str] = {
    "hidden": "docs/rulings.md#hidden-text",
    "edited": "docs/rulings.md#edited-vote",
}

ZH_CARD = {1: "第一身份", 2: "第二身份"}
_ZH_COUNT = {1: "一", 2: "两", 3: "三", 4: "四"}


#: the step of the event a rule set logs when its game ended during a day, before the vote
#: (the vote then is not counted): ``actor``/``checked``/``because`` are the action that ended
#: it — who, its ``at`` ("" when none), its ``ref``; ``result`` says what happened
ENDED_BEFORE_THE_VOTE = "投票前游戏结束"


def iso_time(text: str | None) -> datetime | None:
    """An ISO 8601 time, or None: none given (or empty), or one that does not parse."""
    try:
        return datetime.fromisoformat(text) if text else None
    except ValueError:
        return None


def action_time(a: Action) -> datetime | None:
    """When ``a`` happened (its ``at``), or None: none given, or one that does not parse."""
    return iso_time(a.at)


def successor_again(reason: str, refused: Action, ask: str) -> str:
    """The prompt after a refused 殉职 choice: ``reason``, then the refused record taken back
    (when it is the journal's: the resolution takes a skill's first record), then ``ask``, how
    the new choice is recorded."""
    undo = f"先撤销这条记录（{UNDO}），再" if refused.ref.startswith("#") else ""
    return f"{reason}：{undo}{ask}"


def zh_span(delta: timedelta) -> str:
    """``3小时`` / ``30分钟``: a rule's span of time as the rule texts write it."""
    minutes = int(delta.total_seconds()) // 60
    return f"{minutes // 60}小时" if minutes % 60 == 0 else f"{minutes}分钟"


@dataclass(frozen=True, slots=True)
class Deadline:
    """A night skill's 行动时限: it is given up unless sent ``within`` this long after the day's
    close (``rule``: where the text says so; ``lapse``: what the text says happens then)."""

    within: timedelta
    rule: str
    lapse: str = "视为放弃发动技能"


def _zh_duration(delta: timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [f"{hours}小时" if hours else "", f"{minutes}分钟" if minutes else ""]
    text = "".join(parts)
    return text or f"{secs}秒"


def late_reason(
    skill: str, deadline: Deadline | None, at: datetime, closes: datetime
) -> str | None:
    """Why an action of ``skill`` sent at ``at`` came after its deadline counted from the day's
    close ``closes`` (Chinese), or None: on time, or no deadline the engine knows."""
    if deadline is None:
        return None
    due = closes + deadline.within
    if at <= due:
        return None
    return (
        f"<{skill}>须在关门后{zh_span(deadline.within)}内发动（{deadline.rule}）："
        f"关门 {closes:%Y-%m-%d %H:%M}，截止 {due:%Y-%m-%d %H:%M}；"
        f"这条行动的时间 {at:%Y-%m-%d %H:%M}，晚了{_zh_duration(at - due)}，{deadline.lapse}"
    )


def zh_votes(value: Fraction) -> str:
    """Votes as a director writes them: 5, 5.5, 5.75 (a terminating decimal, exact); a
    fraction only when no decimal is exact (1/3)."""
    if value.denominator == 1:
        return str(value.numerator)
    d = value.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d == 1:
        with localcontext() as ctx:
            ctx.prec = 60
            exact = Decimal(value.numerator) / Decimal(value.denominator)
        return format(exact.normalize(), "f")
    return f"{value.numerator}/{value.denominator}"


#: A roster as a game file deals it: ``[(name, cards), …]`` in seat order, first card first.
Lineup = Sequence[tuple[str, Sequence[str]]]


@dataclass(frozen=True, slots=True)
class Hands:
    """How a rule text deals: the cards each player holds, from which deck, and where the text
    says so (``file:line``). :meth:`Ruleset.hand_problems` words the problems alike for every
    set; what a text says beyond that (forbidden pairs, counts) is the set's own check.

    ``size_rule`` is cited when a player holds another number of cards, ``deck_rule`` ("": no
    citation) when a card is not in the deck (``deck_word``: 牌组 or 身份), and ``setup_rule``
    ("": no such check) by :meth:`Ruleset.check_lineup` when nobody has the right number.
    """

    deck: Mapping[str, int]
    size: int
    size_rule: str
    deck_word: str = "牌组"
    deck_rule: str = ""
    setup_rule: str = ""


@dataclass(frozen=True, slots=True)
class LastWordsRules:
    """What a rule text says about 遗言 (read by pipeline.game.lastwords and the drafts).

    ``none``: why the rule set has no last words at all, with the citation ("": it has some).
    ``red_card_rule``: where the text says 红牌罚下出局的角色没有遗言权利 ("": silent; a red card
    then refuses nothing the other rules allow). ``first_night_only``: the refusal for a player
    out after the first game day opened ("": no such limit). ``day_open_note``: the 遗言 line of the
    day-open draft (None: no line).
    """

    none: str = ""
    red_card_rule: str = ""
    first_night_only: str = ""
    day_open_note: str | None = None


@dataclass(frozen=True, slots=True)
class InquiryRules:
    """A rule set's inquiry thread (询问贴): the limits and their citations (``file:line``).

    pipeline.derive.inquiry reads the thread with these; the secret words themselves are in the game
    file's table named after the rule set (``words``, ``variants``).
    """

    daily_limit: int  # questions per player per day
    limit_rule: str
    close_before: timedelta  # the thread closes this long before the day does
    close_rule: str
    words: int  # how many secret words there are
    words_rule: str
    out_rule: str  # an out player's inquiry is not accepted
    sheriff_guess_rule: str  # the sheriff may not ask or guess
    sheriff_answer_rule: str  # the sheriff answers only 是/否/不知道
    sheriff_discussion_rule: str  # the sheriff may not post in the discussion thread
    guess_skill: str  # the engine's day action for a word guessed correctly
    answer_rule: str  # the director answers the guesses (猜测正确/错误)
    reveal_rule: str  # a word guessed correctly is announced in the discussion thread


@dataclass(frozen=True, slots=True)
class CountSheet:
    """The digested count of one day, what a rule set decides on.

    ``counts`` maps each candidate (a roster name, or a card label in card-based sets) to the
    exact votes it received, abstentions excluded. ``total`` is every counted vote's weight,
    abstentions included (zhenyan's "总票数"). ``reached`` maps each candidate to the (time, pid)
    of the ballot from which it held its final count to the close (for "最先获得投票数最多").
    """

    counts: Mapping[str, Fraction]
    total: Fraction
    abstain_total: Fraction
    sheriff: str | None
    sheriff_vote: str | None  # the candidate the sheriff's counted ballot counts for
    sheriff_abstained: bool
    blocked: Mapping[str, str] = field(default_factory=dict)  # candidate → status (霸道/不死 …)
    forced_top: tuple[str, ...] = ()  # m209: candidates a skill made the top
    tie_takers: tuple[str, ...] = ()  # tubian24: living 高僧 who still hold [献身]
    void_on_tie: tuple[str, ...] = ()  # m209: sources (替罪羊[冤死]) that void a tie's vote-out
    reached: Mapping[str, tuple[datetime, int]] = field(default_factory=dict)

    def maximum(self) -> tuple[Fraction, tuple[str, ...]]:
        """The highest count above zero and the candidates holding it (sorted by name)."""
        positive = {c: v for c, v in self.counts.items() if v > 0}
        if not positive:
            return Fraction(0), ()
        best = max(positive.values())
        return best, tuple(sorted(c for c, v in positive.items() if v == best))


@dataclass(frozen=True, slots=True)
class Decision:
    """What the count decided: who is out (or elected), by which rule, in Chinese."""

    top: tuple[str, ...]
    tie: tuple[str, ...]
    out: str | None
    elected: str | None
    decided_by: str
    rule: str
    notes: tuple[str, ...] = ()  # public: the result draft may say them
    details: tuple[str, ...] = ()  # the director's only (a post's pid, who voted when)


class Ruleset:
    """The shared vote rules. A subclass overrides only what its text says differently."""

    id: ClassVar[str] = "base"
    name: ClassVar[str] = "通用规则"
    rule_file: ClassVar[str] = ""
    #: where the rule text says an out character cannot be a skill's target ("" if silent)
    dead_target_rule: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()

    # --- who votes, for whom -------------------------------------------------------------
    #: Votes and candidates are cards ("傻树的第一身份"), not players (nizhuan).
    card_units: ClassVar[bool] = False
    #: Day 1 is a sheriff election.
    has_sheriff_election: ClassVar[bool] = True
    #: The sheriff's vote weight (带队). 1 where the set gives the sheriff no extra weight.
    sheriff_weight: ClassVar[Fraction] = Fraction(1)
    #: A vote of a player who goes out before the close does not count (出局后不能投票).
    void_votes_of_players_out_before_close: ClassVar[bool] = True

    # --- changes (改票) and proxies (代投) ---------------------------------------------------
    change_limit: ClassVar[int] = 1
    change_must_reply: ClassVar[bool] = True
    #: No change within this long before the close (None: no such limit).
    change_cutoff: ClassVar[timedelta | None] = timedelta(hours=1)
    change_forbidden_when_accelerated: ClassVar[bool] = True
    #: A 改票 replying to the voter's own invalid floor corrects it (m135: 或有效改票更正).
    change_corrects_invalid: ClassVar[bool] = False
    #: m209:170 — when the voted player went out during the day, one more change is allowed even
    #: in the forbidden time.
    change_when_target_out: ClassVar[bool] = False
    #: No fresh proxy vote within this long before the close.
    proxy_cutoff: ClassVar[timedelta | None] = timedelta(hours=1)
    #: No proxy that changes a counted vote within this long before the close.
    proxy_change_cutoff: ClassVar[timedelta | None] = timedelta(hours=1)
    #: A proxy entered before the opening counts as made at the opening (m209:97 狂躁).
    proxy_before_open: ClassVar[bool] = False

    # --- the count -----------------------------------------------------------------------
    #: The vote counts are public (m209 announces only who is the top).
    public_counts: ClassVar[bool] = True
    #: Who voted for whom is public (zhenyan: 匿名投票).
    public_voters: ClassVar[bool] = True
    #: On a tie the sheriff's target is out only when it is one of the tied (False: the text's
    #: literal reading — the sheriff's target is out wherever it stands).
    tie_break_requires_tied_target: ClassVar[bool] = False
    #: zhenyan: abstentions count in "总票数".
    majority_counts_abstentions: ClassVar[bool] = True

    rules: ClassVar[Mapping[str, str]] = {}

    # --- what else the rule set is (read by engine.conduct/cards/speed and the pipeline) ---
    #: The rule set's name as a game file's director reads it (``bansha setup``, messages).
    title: ClassVar[str] = "通用规则"
    #: 潜水, 诈尸, fonts … (engine.conduct); the base holds the common defaults
    #: (docs/rulings.md#conduct-defaults).
    conduct: ClassVar[ConductRules] = ConductRules("base", rules={})
    #: 3 蓝 = 1 黄, 3 黄 = 1 红, 红牌罚下, a faction's loss (engine.cards).
    cards: ClassVar[CardRules] = CardRules("base")
    #: 申请加速 / 申请延时 (engine.speed).
    speed: ClassVar[SpeedRules] = SpeedRules("base")
    #: The thread announcements (reminders, results, the day-open post) go to first; the other
    #: of discussion/vote when the day has no such thread.
    announce_in: ClassVar[Literal["discussion", "vote"]] = "vote"
    #: Where the text says so ("": it does not say).
    announce_rule: ClassVar[str] = ""
    #: The rule text's 投票格式 (and 改票格式) block, as written, and where ("": the text gives
    #: none; a vote thread then points to the rules thread).
    vote_format: ClassVar[str] = ""
    vote_format_rule: ClassVar[str] = ""
    lastwords: ClassVar[LastWordsRules] = LastWordsRules()
    #: The inquiry thread (询问贴); None: the rule set has none.
    inquiry: ClassVar[InquiryRules | None] = None
    #: What can give one game day two 正午 vote rounds ("": nothing; m209 太阳[日不落]).
    two_vote_rounds: ClassVar[str] = ""
    two_vote_rounds_rule: ClassVar[str] = ""
    #: Player fields of the game file the rule set needs → why (Chinese, for the message).
    player_fields: ClassVar[Mapping[str, str]] = {}
    #: Where the text has every player's sex announced when the game starts (tubian24.txt:65
    #: 游戏开始时，会公布所有玩家的性别): the first day's opening lists them. None: it does not.
    sexes_announced: ClassVar[str | None] = None
    #: Every player holds two cards and a vote-out takes only the current one.
    dual_card: ClassVar[bool] = False
    #: Where the text says the public result leaves out the counts / the voters ("": it does not).
    public_counts_rule: ClassVar[str] = ""
    public_voters_rule: ClassVar[str] = ""
    #: The keys of the secret table named after the rule set (``[<id>]`` in the game file).
    secret_keys: ClassVar[tuple[str, ...]] = ()
    #: Day skills that may not be used within some time before the close → (how long, rule).
    day_skill_cutoffs: ClassVar[Mapping[str, tuple[timedelta, str]]] = {}

    #: Night skills given up unless sent within some time after the day's close (行动时限):
    #: skill → its deadline; ``step_deadlines``: the same for every skill of a night step
    #: (the skill's ``SkillSpec.step``); ``other_night_deadline``: every other night-step skill.
    night_deadlines: ClassVar[Mapping[str, Deadline]] = {}
    step_deadlines: ClassVar[Mapping[tuple[int, int], Deadline]] = {}
    other_night_deadline: ClassVar[Deadline | None] = None

    # ------------------------------------------------------------------------------------
    def __repr__(self) -> str:
        return f"<Ruleset {self.id}>"

    def ref(self, key: str) -> str:
        """The rule reference ("file:line") for ``key``; KeyError names the missing key."""
        try:
            return self.rules[key]
        except KeyError:
            raise KeyError(f"规则集 {self.id} 缺少规则出处：{key}") from None

    def unit_label(self, name: str, card: int | None) -> str:
        """The key a voter or candidate is counted under (a card label in card-based sets)."""
        if self.card_units and card is not None:
            return f"{name}的{ZH_CARD.get(card, f'第{card}身份')}"
        return name

    def split_target(self, raw: str) -> tuple[str, int | None]:
        """The player a target text names and the card it names (None: no card).

        Card-based sets read ``"X的第二身份"`` / ``"X#2"`` (nizhuan); here a target is a
        name. The pipeline matches the whole text as a roster name first, then this."""
        return raw.strip(), None

    # --- decisions -----------------------------------------------------------------------
    def decide_election(self, sheet: CountSheet) -> Decision:
        """Day 1: 最先获得投票数最多的角色当选警长.

        Among the candidates with the final maximum, the one who reached its final count first
        (and kept it to the close) is elected.
        """
        best, top = sheet.maximum()
        rule = self.ref("election")
        if not top:
            return Decision((), (), None, None, "无有效票，无人当选", rule)
        if len(top) == 1:
            return Decision(top, (), None, top[0], "唯一最高票当选", rule)
        first = min(top, key=lambda c: (sheet.reached.get(c, (datetime.max, 0)), c))
        when = sheet.reached.get(first)
        # the same moment and no post order to tell them apart — a ballot not posted in the
        # thread (a 代投 record, nizhuan's fixed first-card votes at the opening) has no pid
        # on the forum: nobody reached it first, the director decides
        together = [
            c
            for c in top
            if when is not None
            and (r := sheet.reached.get(c)) is not None
            and r[0] == when[0]
            and min(r[1], when[1]) < 0
        ]
        if len(together) > 1:
            names = "、".join(sorted(together))
            return Decision(
                top,
                top,
                None,
                None,
                f"平票，{names}同时达到最高票，无法判定谁最先，无人当选：请导演裁定警长",
                rule,
            )
        # the public note names no post (a public draft carries no pid) and, where the votes
        # are anonymous (zhenyan.txt:37), not the time either: the time points at the voter
        votes = zh_votes(best)
        note: tuple[str, ...] = ()
        detail: tuple[str, ...] = ()
        if when:
            at = f"{when[0]:%Y-%m-%d %H:%M:%S}"
            said = f"于{at}" if self.public_voters else ""
            note = (f"{first}{said}最先达到{votes}票并保持至截止",)
            post = f"pid {when[1]}" if when[1] >= 0 else "导演记录的票"
            detail = (f"{first}于{at}（{post}）达到{votes}票并保持至截止",)
        return Decision(top, top, None, first, "平票，最先获得最高票者当选", rule, note, detail)

    def decide_exile(self, sheet: CountSheet) -> Decision:
        """Day 2 on: the unique maximum is out; a tie goes to :meth:`break_tie`."""
        _best, top = sheet.maximum()
        if not top:
            return Decision((), (), None, None, "无有效票，无人出局", self.ref("top"))
        if len(top) == 1:
            decision = Decision(top, (), top[0], None, "唯一最高票", self.ref("top"))
        else:
            decision = self.break_tie(sheet, top)
        return self.apply_block(sheet, decision)

    def break_tie(self, sheet: CountSheet, tie: tuple[str, ...]) -> Decision:
        """m135 / nizhuan: the sheriff's target is out unless the sheriff abstained or did not
        vote; then nobody is out."""
        rule = self.ref("tie")
        if sheet.sheriff is None:
            return Decision(tie, tie, None, None, "平票，没有警长，无人出局", rule)
        if sheet.sheriff_vote is None:
            why = "警长弃权" if sheet.sheriff_abstained else "警长没有有效投票"
            return Decision(tie, tie, None, None, f"平票，{why}，无人出局", rule)
        if self.tie_break_requires_tied_target and sheet.sheriff_vote not in tie:
            return Decision(
                tie,
                tie,
                None,
                None,
                f"平票，警长所投的{sheet.sheriff_vote}不在平票者之中，无人出局",
                rule,
            )
        return Decision(tie, tie, sheet.sheriff_vote, None, "平票，警长所投者出局", rule)

    def apply_block(self, sheet: CountSheet, decision: Decision) -> Decision:
        """A status such as 霸道/不死 stops the vote-out: nobody is out (平安日)."""
        out = decision.out
        if out is None or out not in sheet.blocked:
            return decision
        return Decision(
            decision.top,
            decision.tie,
            None,
            None,
            f"{decision.decided_by}；但{out}持有{sheet.blocked[out]}，不出局（平安日）",
            self.ref("block_out"),
            (*decision.notes, f"本应出局：{out}"),
        )

    #: A bare line ``弃权`` (without ``投票对象：``) is an abstention; False where the text
    #: says 投弃权票时，须在投票对象中填写“弃权”: then it is a vote in the wrong format.
    bare_abstain: ClassVar[bool] = True

    # --- the engine (night and day resolution) --------------------------------------------
    #: The rule set implements the hooks below (engine.kernel can resolve its nights).
    has_engine: ClassVar[bool] = False
    #: A day's events may end the game before its vote (the day then logs
    #: :data:`ENDED_BEFORE_THE_VOTE`): the day under way is tried on what happened so far.
    ends_before_the_vote: ClassVar[bool] = False
    #: Readings a director may switch (docs/rulings.md); stored in the state at setup.
    default_settings: ClassVar[Mapping[str, str]] = {}

    def _no_engine(self) -> Any:
        return EngineError(f"规则集 {self.id}（{self.name}）的夜晚结算尚未实现")

    def validate_setup(self, players: Lineup) -> list[str]:
        """Problems (Chinese, one per line) with the players' cards; [] when all is well.

        ``players`` is ``[(name, cards), …]`` in seat order, cards in the order the game file
        lists them (first card first).
        """
        return []

    def settings_from_game(self, game: Any) -> dict[str, str]:
        """Settings the rule set reads from the game file (its secret table, players' sex …).

        ``game`` is the pipeline's validated game file; the engine reads only plain fields of it.
        """
        return {}

    def setup_state(
        self,
        players: Sequence[tuple[str, Sequence[str]]],
        *,
        settings: Mapping[str, str] | None = None,
        strict: bool = True,
    ) -> GameState:
        """The state before the first night: an empty roster is refused here, the rest is the
        rule set's :meth:`open_state` (its line-up check, settings, cards, charges, statuses).

        ``strict``: a line-up problem raises (EngineError); False starts anyway (a director
        resolving a game the rules were bent in)."""
        if not self.has_engine:
            raise self._no_engine()
        if not players:
            raise EngineError("名单为空，无法开局")
        return self.open_state(players, settings or {}, strict)

    def open_state(self, players: Lineup, settings: Mapping[str, str], strict: bool) -> GameState:
        """The rule set's own part of :meth:`setup_state` (``players`` is not empty)."""
        raise self._no_engine()

    # --- the line-up and the opening, shared by every rule set ---------------------------
    #: How the rule text deals (None: the set checks its line-up all by itself).
    hands: ClassVar[Hands | None] = None

    def hand_problems(self, name: str, cards: Sequence[str]) -> list[str]:
        """What is wrong with one player's hand as :attr:`hands` says ([]: nothing): the number
        of cards, then each card not in the deck."""
        h = self.hands
        assert h is not None, f"{self.id} declares no hands"
        who = f"玩家「{name}」"
        if len(cards) != h.size:
            pair = "（第一身份、第二身份）" if h.size == 2 else ""
            return [
                f"{who}应有{_ZH_COUNT.get(h.size, str(h.size))}张身份牌{pair}，"
                f"实际有 {len(cards)} 张（{h.size_rule}）"
            ]
        where = f"；{h.deck_rule}" if h.deck_rule else ""
        return [
            f"{who}的身份牌「{c}」不在本规则的{h.deck_word}中（可选：{'、'.join(h.deck)}{where}）"
            for c in cards
            if c not in h.deck
        ]

    # --- the deal (engine.deal) ------------------------------------------------------------
    def deal_count(self) -> int:
        """How many players the line-up is dealt to, from the set's own tables."""
        raise DealError(f"规则集 {self.id} 还不能自动发牌")

    def deal(self, names: tuple[str, ...], rng: Rng) -> Deal:
        """The line-up dealt to ``names`` (seat order); :func:`engine.deal.deal` checks it."""
        raise DealError(f"规则集 {self.id} 还不能自动发牌")

    def deal_settings(self, made: Deal) -> list[dict[str, str]]:
        """The settings of every game file the deal can still become (one per open choice),
        each checked with :meth:`setup_state`."""
        return [{}]

    def faction_decided_later(self, cards: Sequence[str]) -> bool:
        """Whether a hand's actual faction is decided after the deal (a later pick)."""
        return False

    def deal_in_pairs(self, names: tuple[str, ...], rng: Rng, notes: tuple[str, ...]) -> Deal:
        """Two cards each from :attr:`hands`' deck: shuffled into pairs until
        :meth:`pairs_refused` accepts them, each pair then put in :meth:`pair_order`."""
        assert self.hands is not None, f"{self.id} declares no hands"
        deck = expand(self.hands.deck)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            dealt = pairs(deck, rng)
            if self.pairs_refused(dealt):
                continue
            hands = tuple(self.pair_order(a, b) for a, b in dealt)
            return Deal(self.id, names, hands, attempts=attempt, notes=notes)
        raise DealError(f"{self.id}：{MAX_ATTEMPTS} 次洗牌都没有得到合规的组合")

    def pairs_refused(self, dealt: Sequence[Sequence[str]]) -> bool:
        """Whether a shuffle into pairs breaks the text's forbidden combinations."""
        return False

    def pair_order(self, a: str, b: str) -> tuple[str, str]:
        """A dealt pair in the order the text fixes (first card first)."""
        return a, b

    #: How many players the rule text's game has, and where it says so (None: not said).
    player_count: ClassVar[tuple[int, str] | None] = None
    #: The factions a player's ``faction`` may name, and the text's 身份与阵营 line.
    factions: ClassVar[tuple[str, ...]] = (WOLF, VILLAGE)
    faction_rule: ClassVar[str] = ""

    @property
    def rule_post(self) -> str:
        """The rule post as the director knows it: 《逆转时空》规则."""
        return f"《{self.title}》" if self.title.endswith("规则") else f"《{self.title}》规则"

    def hand_faction(self, name: str, cards: Sequence[str]) -> str | None:
        """The actual faction a player's dealt cards give (None: the cards alone do not say,
        or the set does not tell)."""
        return None

    def lineup_problems(
        self, players: Lineup, factions: Mapping[str, str | None] | None = None
    ) -> list[str]:
        """The game file's check of a dealt line-up (``players``: every player with cards):
        the number of players the text plays with (:attr:`player_count`), the set's own
        :meth:`validate_setup`, and each ``faction`` the file declares against the one the
        cards give (:meth:`hand_faction`) — it decides a faction's loss by two red cards."""
        problems: list[str] = []
        if self.player_count is not None and players:
            n, rule = self.player_count
            if len(players) != n:
                problems.append(
                    f"本规则是 {n} 人局，名单中有 {len(players)} 名玩家"
                    f"（{self.rule_post} · 身份配置，{rule}）"
                )
        problems += self.validate_setup(players)
        where = (
            f"（{self.rule_post} · 身份与阵营，{self.faction_rule}）" if self.faction_rule else ""
        )
        for name, cards in players:
            declared = (factions or {}).get(name)
            if declared is None:
                continue
            if declared not in self.factions:
                problems.append(
                    f"玩家「{name}」的 faction「{declared}」不是本规则的阵营"
                    f"（可写：{'、'.join(self.factions)}；不写时按身份牌推出）{where}"
                )
                continue
            derived = self.hand_faction(name, cards)
            if derived is not None and derived != declared:
                problems.append(
                    f"玩家「{name}」的 faction 写的是「{declared}」，按身份牌（{'、'.join(cards)}）"
                    f"实际阵营是「{derived}」{where}；faction 决定“同一阵营两张红牌判负”，"
                    "请改正或删去这一行（不写时按身份牌推出）"
                )
        return problems

    def check_lineup(
        self, players: Lineup, *, strict: bool, extra: Iterable[str] = ()
    ) -> list[str]:
        """The opening check of :meth:`open_state`: :meth:`validate_setup` and ``extra`` (the
        set's problems with its settings); when nobody holds the right number of cards yet, the
        hands' ``setup_rule``. Raises EngineError (Chinese) with every problem when ``strict``;
        returns them otherwise."""
        problems = [*self.validate_setup(players), *extra]
        h = self.hands
        if h is not None and h.setup_rule and any(len(c) != h.size for _n, c in players):
            count = _ZH_COUNT.get(h.size, str(h.size))
            problems = problems or [f"每名玩家须有{count}张身份牌（{h.setup_rule}）"]
        if problems and strict:
            raise EngineError("开局设置有误：\n" + "\n".join(problems))
        return problems

    def merged_settings(
        self, settings: Mapping[str, str], *, known: Iterable[str] | None = None
    ) -> dict[str, str]:
        """The settings over :attr:`default_settings`; a key not ``known`` (default: the
        defaults' keys) raises EngineError naming it."""
        merged = {**self.default_settings, **settings}
        allowed = set(self.default_settings if known is None else known)
        unknown = sorted(set(merged) - allowed)
        if unknown:
            raise EngineError(f"未知的设置：{'、'.join(unknown)}")
        return merged

    #: role → its skills, skill → its SkillSpec (engine.night): what :meth:`limited_charges`
    #: reads; a rule set with an engine fills them
    roles: ClassVar[Mapping[str, tuple[str, ...]]] = {}
    specs: ClassVar[Mapping[str, Any]] = {}

    def limited_charges(
        self, cards: Iterable[CardState], role: Callable[[CardState], str] | None = None
    ) -> list[Charge]:
        """One charge of every 限定 skill of the cards' roles (``role``: a card's role, by
        default its name), in card and skill order."""
        role_of = role or (lambda c: c.name)
        return [
            Charge(card.uid, skill, 1)
            for card in cards
            for skill in self.roles.get(role_of(card), ())
            if self.specs[skill].limited
        ]

    @staticmethod
    def dealt_cards(name: str, cards: Sequence[str]) -> tuple[CardState, ...]:
        """A player's cards as the state holds them: ``<name>#1``, ``<name>#2`` …, in order."""
        return tuple(CardState(f"{name}#{i + 1}", c) for i, c in enumerate(cards))

    def skill_names(self) -> tuple[str, ...]:
        """Every skill name an action may carry (for the journal's checks)."""
        return ()

    #: skill name → its SkillSpec (engine.night) and accepted spellings → the skill's name;
    #: a rule set with an engine fills both
    skill_specs: ClassVar[Mapping[str, Any]] = {}
    skill_aliases: ClassVar[Mapping[str, str]] = {}

    def canonical_skill(self, name: str) -> str:
        """The skill's name as the rule text writes it: brackets dropped, aliases mapped."""
        raw = "".join(ch for ch in name.strip() if ch not in "<>＜＞[]【】《》")
        return self.skill_aliases.get(raw, raw)

    def unknown_skill_reason(self, name: str) -> str:
        known = "、".join(self.skill_names()) or "（无）"
        return f"{self.name}没有名为<{name}>的技能（可选：{known}）"

    def skill_rule(self, skill: str) -> str:
        """Where the rule text defines the skill (file:line), or ""."""
        spec = self.skill_specs.get(self.canonical_skill(skill))
        return spec.rule if spec else ""

    def group_skill(self, skill: str) -> bool:
        return False

    def status_zh(self, status: Status) -> str | None:
        """How the state listing words a status the rule set reads its own way (a table-wide
        count such as a pool of points), or None: the shared wording."""
        return None

    def charge_zh(self, charge: Charge) -> str | None:
        """How the state listing words a skill's charges when "可用/已用" would not be true (a
        team skill counted up during the game), or None: the shared wording."""
        return None

    def action_deadline(self, skill: str, actor_card: str | None = None) -> Deadline | None:
        """The 行动时限 of ``skill`` (sent by a holder of ``actor_card``, when known) counted from
        the day's close, or None: the text gives none, or one counted from something else (a
        feedback, a death) that the director judges."""
        name = self.canonical_skill(skill)
        if name in self.night_deadlines:
            return self.night_deadlines[name]
        spec = self.specs.get(name) or self.skill_specs.get(name)
        step = getattr(spec, "step", None)
        if step is None:
            return None
        return self.step_deadlines.get(step, self.other_night_deadline)

    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        raise self._no_engine()

    def run_day(self, board: Board, day: DayInput) -> None:
        raise self._no_engine()

    def end_of_phase(self, board: Board) -> None:
        return None

    def after_card_out(self, board: Board, death: Death) -> None:
        return None

    # --- the director's actions (投降, 判负, 红牌罚下) of the sets that share their order ------
    def _director_actions(self, board: Board, actions: Sequence[Action]) -> list[Action]:
        """Surrender and forfeits end the game at once; red cards at night are resolved before
        any skill (a red-carded character cannot act), by day after the vote
        (``board.scratch["reds"]``); a director's action :meth:`_director_action` takes is
        resolved at once. Returns the other actions (none once the game is over)."""
        rest, reds = self._take_director_actions(board, actions)
        if board.winner is not None:
            for a in [*rest, *reds]:
                board.record(a, "校验", Outcome.UNUSED, "游戏已结束，不再结算", "")
            return []
        if board.night is not None:
            for a in reds:
                self._red_card(board, a)
            return rest
        board.scratch["reds"] = reds
        return rest

    def _reds_during_the_day(self, board: Board, day: DayInput) -> None:
        """Settle now the day's red cards given before the close (``Action.at`` before
        ``day.closes``): only a red card at the day's end is settled after the vote
        (m135.txt:56, zhenyan.txt:43 白天结束时红牌罚下的出局结算在投票结算之后执行); the
        ones at the close stay in ``board.scratch["reds"]``. Called once the day's decisions
        (最后一枪, 殉职 …) are at hand, before the vote."""
        for _at, a in self._reds_before_the_close(board, day):
            self._red_card(board, a)

    @staticmethod
    def _reds_before_the_close(board: Board, day: DayInput) -> list[tuple[datetime, Action]]:
        """The day's red cards given before the close, with their times, in time order; the
        ones at the close (or without a time that parses) stay in ``board.scratch["reds"]``."""
        if day.closes is None:
            return []
        closes = datetime.fromisoformat(day.closes)
        during: list[tuple[datetime, Action]] = []
        at_close: list[Action] = []
        for a in board.scratch.get("reds", []):
            at = action_time(a)
            if at is not None and at < closes:
                during.append((at, a))
            else:
                at_close.append(a)
        board.scratch["reds"] = at_close
        return sorted(during, key=lambda pair: pair[0])

    def _take_director_actions(
        self, board: Board, actions: Sequence[Action]
    ) -> tuple[list[Action], list[Action]]:
        """投降 and 判负 resolved at once (in :meth:`director_order`), and so is a director's
        action :meth:`_director_action` takes; returns (the other actions, the red cards)."""
        rest: list[Action] = []
        reds: list[Action] = []
        for a in sorted(actions, key=lambda a: self.director_order(board, a)):
            skill = self.canonical_skill(a.skill)
            if skill == "投降":
                self._surrender(board, a)
            elif skill == "判负":
                self._forfeit(board, a)
            elif skill == "红牌罚下":
                reds.append(a)
            elif not self._director_action(board, a):
                rest.append(a)
        return rest, reds

    # --- 殉职: the shared steps of a sheriff's hand-over -----------------------------------
    def _successors(self, board: Board, death: Death) -> tuple[str, ...] | None:
        """The living who may succeed the sheriff out in ``death``; None when there is no
        hand-over (not the sheriff, or still in play). Nobody left: the badge is gone."""
        old = death.player
        if board.sheriff != old or board.alive(old):
            return None
        living = tuple(board.living())
        if not living:
            board.sheriff = None
            return None
        return living

    def log_ended_before_the_vote(
        self,
        board: Board,
        actions: Sequence[Action],
        skills: Collection[str],
        rule: str,
        text: str,
        because: str = "",
    ) -> None:
        """Log that the game ended during the day, before its vote
        (:data:`ENDED_BEFORE_THE_VOTE`): at the latest timed one of ``actions`` whose skill is
        among ``skills`` (who, when — the director's tools say it), none when none is timed."""
        timed = [
            (t.timestamp(), a)
            for a in actions
            if self.canonical_skill(a.skill) in skills and (t := action_time(a)) is not None
        ]
        last = max(timed, key=lambda x: x[0], default=(0.0, None))[1]
        board.emit(
            ENDED_BEFORE_THE_VOTE,
            rule,
            text,
            actor=last.actor if last is not None else "",
            checked=(last.at or "") if last is not None else "",
            because=because,
        )

    def _refuse_successor(
        self, board: Board, action: Action, step: str, problem: str, rule: str
    ) -> None:
        """A 殉职 whose successor cannot take the badge: the badge waits for a new choice, which
        the director records once the refused one is taken back."""
        board.record(action, step, Outcome.INVALID, problem, rule)
        board.sheriff = None
        board.need(
            action.actor,
            "殉职",
            successor_again(
                f"警长{action.actor}的殉职目标无效（{problem}）",
                action,
                f"从存活角色中选择继任警长（{'、'.join(board.living())}）：记录后重新结算"
                f"（{RECORD}）",
            ),
            rule,
            target="继任者",
            undo=action.ref or None,
        )

    def _keep_day_triggers(self, board: Board, actions: Sequence[Action]) -> None:
        """The day's actions that are not the director's: a skill that fires when its moment
        comes (最后一枪, 殉职 …) is kept for it; any other is refused (unknown, or no day
        skill)."""
        for a in actions:
            skill = self.canonical_skill(a.skill)
            spec = self.specs.get(skill)
            if spec is None:
                board.record(a, "校验", Outcome.INVALID, self.unknown_skill_reason(skill), "")
            elif spec.trigger:
                board.prepared.append(replace(a, skill=skill))
            else:
                board.record(a, "校验", Outcome.INVALID, f"<{skill}>不是白天发动的技能", spec.rule)

    # --- 红牌罚下 ------------------------------------------------------------------------
    @staticmethod
    def _red_out(
        board: Board, name: str, step: str, rule: str, bound_uid: str | None = None
    ) -> Death | None:
        """A red card puts ``name``'s current card (or the card ``bound_uid``) out: the
        director's doing, marked red (no last words, no skill follows)."""
        return board.card_out(
            name,
            cause="红牌罚下",
            step=step,
            rule=rule,
            source="导演",
            kind="红牌罚下",
            red=True,
            bound_uid=bound_uid,
        )

    def director_order(self, board: Board, a: Action) -> tuple[int, str]:
        """The order the director's actions of one phase are taken in (a stable sort key; the
        default keeps the recorded order)."""
        return (0, "")

    def done_result(self, board: Board, action: Action) -> ActionResult | None:
        """The DONE result recorded for ``action`` this phase, if any."""
        for r in board.results:
            if r.action is action and r.outcome is Outcome.DONE:
                return r
        return None

    # --- the public line of the phase's deaths ---------------------------------------------
    #: What a night without a death adds to 昨晚无人出局 (e.g. （平安夜）).
    quiet_night_note: ClassVar[str] = ""
    #: Between two deaths of the line.
    death_separator: ClassVar[str] = "；"

    def death_line(self, board: Board) -> str:
        """昨晚/今日 无人出局, or who went out in the order they did (:meth:`death_part`)."""
        when = "昨晚" if board.night is not None else "今日"
        if not board.deaths:
            return f"{when}无人出局" + (self.quiet_night_note if board.night is not None else "")
        parts = self.death_separator.join(self.death_part(d) for d in board.deaths)
        return f"{when}出局（按出局顺序）：{parts}"

    def death_part(self, death: Death) -> str:
        """One death as the public line names it."""
        return death.player

    def _director_action(self, board: Board, a: Action) -> bool:
        """Resolve one more kind of director's action at once (zhenyan's 猜中); False: not one."""
        return False

    def _surrender(self, board: Board, a: Action) -> None:
        raise self._no_engine()

    def _forfeit(self, board: Board, a: Action) -> None:
        """判负 of one of the two factions (``choice``), by the card rules' faction rule (a
        faction's reds, m135.txt:245, zhenyan.txt:223): the other faction wins at once."""
        step, rule = "判负", self.cards.faction_rule
        loser = (a.choice or "").strip()
        if loser not in (WOLF, VILLAGE):
            why = f"判负须写明阵营（choice = {WOLF} 或 {VILLAGE}）"
            board.record(a, step, Outcome.INVALID, why, rule)
            return
        winner = VILLAGE if loser == WOLF else WOLF
        board.record(a, step, Outcome.DONE, f"{loser}判负", rule)
        board.set_winner(winner, f"{loser}判负（红牌）", rule)

    def _red_card(self, board: Board, a: Action) -> None:
        raise self._no_engine()

    def win_conditions(self, board: Board) -> Mapping[str, bool]:
        """The rule set's win conditions by name → met now (what :meth:`mark_win_conditions`
        remembers the moment of); none here."""
        return {}

    def mark_win_conditions(self, board: Board) -> None:
        """Remember when (after how many deaths) each condition was first met: the first met
        decides when several are met together."""
        for cond, met in self.win_conditions(board).items():
            if met and cond not in board.win_marks:
                board.win_marks[cond] = len(board.deaths)

    def check_win(self, board: Board) -> None:
        return None

    @staticmethod
    def announce_winner(board: Board, step: str = "胜负判定") -> bool:
        """A winner already decided (投降, 判负, a skill …) is announced; False when none is."""
        if board.winner is None:
            return False
        board.announce(f"游戏结束：{board.winner}胜利（{board.win_reason}）")
        board.emit(
            step, board.win_rule or "", f"{board.winner}胜利", because=board.win_reason or ""
        )
        return True

    def unused_reason(self, action: Action) -> str:
        return f"<{action.skill}>的触发条件没有出现，未发动"

    # hooks of engine.night.run_steps
    def holder(self, board: Board, player: str, skill: str) -> Holder | None:
        return None

    def missing_skill_reason(self, board: Board, player: str, skill: str) -> str:
        return f"{player}当前没有<{skill}>"

    def disabled(self, board: Board, holder: Holder) -> str | None:
        return None

    def check_action(self, board: Board, p: Pass) -> str | None:
        return None

    def before_step(self, board: Board, step: Step) -> None:
        return None

    def action_order(self, board: Board, action: Action) -> tuple[int, ...]:
        """Where one action goes among those of the same skill in a step (同时段技能的先后),
        before seat order; () where the text says nothing."""
        return ()

    def after_step(self, board: Board, step: Step) -> None:
        return None

    def actual_faction(self, state: GameState, player: str) -> str | None:
        """The player's actual faction as the engine sees it (None: the set does not say)."""
        return None

    def settle_shared_kill(
        self,
        board: Board,
        actions: Sequence[Action],
        *,
        step: str,
        rule: str,
        group: str,
        skill: str = "杀人",
    ) -> list[Action]:
        """A team's one kill a night: every living holder may submit it, but differing targets
        are all invalid (the director keeps one) and identical ones resolve once."""
        refused = self.shared_kill_refusals(board, actions, rule=rule, group=group, skill=skill)
        for a in actions:
            if id(a) in refused:
                board.record(a, step, Outcome.INVALID, refused[id(a)], rule)
        return [a for a in actions if id(a) not in refused]

    def shared_kill_refusals(
        self,
        board: Board,
        actions: Sequence[Action],
        *,
        rule: str,
        group: str,
        skill: str = "杀人",
    ) -> dict[int, str]:
        """Which of ``actions`` a team's one kill a night refuses (by ``id``), and why: among
        the kills of those who hold ``skill`` now, differing targets are all refused, and of
        identical ones all but the first seat's."""
        kills = [
            a
            for a in actions
            if self.canonical_skill(a.skill) == skill
            and board.alive(a.actor)
            and self.holder(board, a.actor, skill) is not None
        ]
        if len(kills) <= 1:
            return {}
        if len({a.targets for a in kills}) > 1:
            listing = "、".join(f"{a.actor}→{'、'.join(a.targets) or '无'}" for a in kills)
            why = (
                f"{group}当晚提交了不同的<{skill}>目标（{listing}），{group}只能共同选择一名"
                f"角色（{rule}）；请导演确认后只保留一条"
            )
            return {id(a): why for a in kills}
        keep = min(kills, key=lambda a: (board.seat(a.actor), a.sort_key()))
        same = f"与{keep.actor}提交的<{skill}>目标相同，重复记录，只结算一次（{rule}）"
        return {id(a): same for a in kills if a is not keep}

    def vote_modifiers(self, state: GameState, day: int) -> tuple[Any, ...]:
        """The VoteModifiers (engine.votes) the state puts on ``day``'s tally."""
        return ()

    def absent(self, state: GameState, day: int) -> frozenset[str]:
        """Players out of the game on ``day`` without being out (m209 离开游戏): not in the
        电梯楼, excused from posting (no 潜水 flag)."""
        return frozenset()

    def voter_cards(self, state: GameState, day: int) -> Mapping[str, int]:
        """Players whose own vote posts on ``day`` vote with a card other than their highest
        (nizhuan: a first card freed by 重定之理 when the second is out) → that card; none
        here."""
        return {}

    def voiceless(self, state: GameState, day: int) -> Mapping[str, str]:
        """Players in the game who may neither speak nor vote on ``day`` → why (nizhuan: the
        second card out in the 逆转轮): not judged for 潜水 or 未投票; none here."""
        return {}

    def lastwords_rights(self, state: GameState) -> Mapping[str, frozenset[str]] | None:
        """The players the engine gave last words → the phases ("night:1") they got them in
        (m209's 4, nizhuan's per round); None when the rule set does not count them (the rule
        set's text decides, pipeline.game.lastwords)."""
        return None

    def out_by_vote_in_game(self, state: GameState) -> tuple[str, ...]:
        """Players voted out whose card stays in the game (tubian24 白痴[装傻], tubian24.txt:47,
        112): the lists of outs a day opens with name them with the vote's outs
        (tubian24.txt:36), though they are still players. None here."""
        return ()

    def vote_void(self, state: GameState, day: int) -> bool:
        """``state`` (after the day was resolved) says the day's vote did not take place, so
        nobody owed a vote (m209 [封锁投票]); False here."""
        return False

    def silenced(self, state: GameState, day: int, actions: Sequence[Any]) -> frozenset[str]:
        """Players the rules forbid to speak for part of ``day`` (m209 太阳[日不落]): not
        judged for 发言不足; none here."""
        return frozenset()

    def first_round_modifiers(self, state: GameState, day: int) -> tuple[Any, ...]:
        """The VoteModifiers of the first 正午 round of a day with two (m209 太阳[日不落]);
        by default the day's own."""
        return self.vote_modifiers(state, day)

    def day_vote_modifiers(
        self, state: GameState, day: int, actions: Sequence[Any]
    ) -> tuple[Any, ...]:
        """VoteModifiers that the day's own recorded actions put on its (last) tally — m209:
        太阳 naming the extra round's voters during the day (m209.txt:378); none here."""
        return ()

    # --- the day's vote as the engine sees it (card-based sets override) ----------------
    def vote_roster(
        self, state: GameState, *, opens: datetime, red_at: Mapping[str, datetime]
    ) -> tuple[Any, ...]:
        """The PlayerStatus entries (engine.votes) of a day: who may vote and be voted.

        One per player; a player already out votes no more (``out_at`` = the opening), one
        red-carded during the day from that moment.
        """
        return tuple(
            PlayerStatus(p.name, out_at=opens if not p.alive else red_at.get(p.name))
            for p in state.players
        )

    def timed_outs(
        self, state: GameState, actions: Sequence[Action]
    ) -> tuple[tuple[str, int | None, datetime], ...]:
        """``(player, card or None, when)``: who the day's actions put out at a time of the day
        — a red card given during the day (the time given, or the ledger's), whichever way
        it was entered. A voter out before the close loses the vote, and the votes on him no
        longer count (docs/rulings.md 投票与计票). Card-based sets add their day skills.
        A time that does not parse is left out (the engine reports the action)."""
        outs: list[tuple[str, int | None, datetime]] = []
        for a in actions:
            if self.canonical_skill(a.skill) != "红牌罚下" or not a.at:
                continue
            try:
                outs.append((a.actor, None, datetime.fromisoformat(a.at)))
            except ValueError:
                continue
        return tuple(outs)

    def timed_close(
        self, state: GameState, actions: Sequence[Action]
    ) -> tuple[datetime, str, str] | None:
        """``(when, why, rule)`` when the day's actions close it before its time (the vote
        after ``when`` does not count: :attr:`engine.votes.DayContext.closed_early`); None
        here."""
        return None

    @staticmethod
    def with_timed_outs(
        players: Sequence[Any], outs: Sequence[tuple[str, int | None, datetime]]
    ) -> tuple[Any, ...]:
        """The roster (PlayerStatus entries) with :meth:`timed_outs` applied: each entry out at
        the earliest of its own ``out_at`` and the times that name it (a card of ``None`` names
        every card of the player)."""
        result = []
        for ps in players:
            times = [
                at
                for name, card, at in outs
                if name == ps.name and (card is None or card == ps.card)
            ]
            if ps.out_at is not None:
                times.append(ps.out_at)
            result.append(replace(ps, out_at=min(times)) if times else ps)
        return tuple(result)

    def vote_sheriff(self, state: GameState) -> str | None:
        """The unit whose vote carries the sheriff's weight (a living sheriff), or None."""
        if state.sheriff and state.player(state.sheriff).alive:
            return state.sheriff
        return None

    def sheriff_election_day(self, state: GameState, day: int) -> bool:
        """The state itself makes ``day`` a sheriff election, whatever the game file says
        (nizhuan's 逆转轮 first day); False here."""
        return False

    def fixed_ballots(
        self, state: GameState, day: int, *, opens: datetime, tid: int
    ) -> tuple[Any, ...]:
        """Ballots the state itself casts on ``day`` (nizhuan's NPC first cards); none here."""
        return ()

    def vote_actions(self, tally: Any) -> tuple[Any, ...]:
        """Actions recording the day's votes in the state (nizhuan's history round); none."""
        return ()

    # --- the inquiry thread (rule sets with ``inquiry``) ---------------------------------
    def guess_position(self, choice: str | None) -> int | None:
        """The secret word's position (1 …) a guess action's choice names; None here."""
        return None
