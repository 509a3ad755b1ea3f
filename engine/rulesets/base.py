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

Every rule reference is ``"<file>:<line>"`` into the rule text beside DESIGN.md (``rules/``), or
into DESIGN.md itself, or ``"docs/rulings.md#<anchor>"`` where the text is silent and the project
made a ruling.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from fractions import Fraction
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from engine.kernel import Action, Board, DayInput, Death
    from engine.night import Holder, Pass, Step
    from engine.state import GameState

__all__ = [
    "RULE_KEYS",
    "CountSheet",
    "Decision",
    "Ruleset",
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

ZH_CARD = {1: "第一身份", 2: "第二身份"}


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
    notes: tuple[str, ...] = ()


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
        note = (
            (f"{first}于{when[0]:%Y-%m-%d %H:%M:%S}（pid {when[1]}）达到{best}票并保持至截止",)
            if when
            else ()
        )
        return Decision(top, top, None, first, "平票，最先获得最高票者当选", rule, note)

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

    # --- the engine (night and day resolution) --------------------------------------------
    #: The rule set implements the hooks below (engine.kernel can resolve its nights).
    has_engine: ClassVar[bool] = False
    #: Readings a director may switch (docs/rulings.md); stored in the state at setup.
    default_settings: ClassVar[Mapping[str, str]] = {}

    def _no_engine(self) -> Any:
        from engine.kernel import EngineError

        return EngineError(f"规则集 {self.id}（{self.name}）的夜晚结算尚未实现")

    def validate_setup(self, players: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
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
        """The state before the first night."""
        raise self._no_engine()

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

    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        raise self._no_engine()

    def run_day(self, board: Board, day: DayInput) -> None:
        raise self._no_engine()

    def end_of_phase(self, board: Board) -> None:
        return None

    def after_card_out(self, board: Board, death: Death) -> None:
        return None

    def mark_win_conditions(self, board: Board) -> None:
        return None

    def check_win(self, board: Board) -> None:
        return None

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
        from engine.kernel import Outcome

        kills = [
            a
            for a in actions
            if self.canonical_skill(a.skill) == skill
            and board.alive(a.actor)
            and self.holder(board, a.actor, skill) is not None
        ]
        if len(kills) <= 1:
            return list(actions)
        dropped: set[int] = set()
        if len({a.targets for a in kills}) > 1:
            listing = "、".join(f"{a.actor}→{'、'.join(a.targets) or '无'}" for a in kills)
            for a in kills:
                board.record(
                    a,
                    step,
                    Outcome.INVALID,
                    f"{group}当晚提交了不同的<{skill}>目标（{listing}），{group}只能共同选择一名"
                    f"角色（{rule}）；请导演确认后只保留一条",
                    rule,
                )
                dropped.add(id(a))
        else:
            keep = min(kills, key=lambda a: (board.seat(a.actor), a.sort_key()))
            for a in kills:
                if a is not keep:
                    board.record(
                        a,
                        step,
                        Outcome.INVALID,
                        f"与{keep.actor}提交的<{skill}>目标相同，重复记录，只结算一次（{rule}）",
                        rule,
                    )
                    dropped.add(id(a))
        return [a for a in actions if id(a) not in dropped]

    def vote_modifiers(self, state: GameState, day: int) -> tuple[Any, ...]:
        """The VoteModifiers (engine.votes) the state puts on ``day``'s tally."""
        return ()

    def absent(self, state: GameState, day: int) -> frozenset[str]:
        """Players out of the game on ``day`` without being out (m209 离开游戏): not in the
        电梯楼, excused from posting (no 潜水 flag)."""
        return frozenset()

    def lastwords_rights(self, state: GameState) -> Mapping[str, frozenset[str]] | None:
        """The players the engine gave last words → the phases ("night:1") they got them in
        (m209's 4, nizhuan's per round); None when the rule set does not count them (the rule
        set's text decides, pipeline.lastwords)."""
        return None

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
        from engine.votes import PlayerStatus

        return tuple(
            PlayerStatus(p.name, out_at=opens if not p.alive else red_at.get(p.name))
            for p in state.players
        )

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
