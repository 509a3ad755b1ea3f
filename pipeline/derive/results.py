"""What a derivation returns: a round's and a day's results, the whole game's ``Derivation``."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from typing import Any

from engine.cards import Ledger
from engine.conduct import Flag, PostCount
from engine.speed import SpeedDecision, SpeedRequest
from engine.state import Phase
from engine.votes import Ballot, Tally, VoteVerdict
from pipeline.game.gamefile import Day, Game
from pipeline.game.lastwords import LastWords, refusal


def post_url(base_url: str, tid: int, pid: int) -> str:
    """A link that finds the post whatever floor it shows now (floors renumber after deletes)."""
    return f"{base_url}forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={pid}"


@dataclass(frozen=True)
class RoundResult:
    """The first 正午 round of a 太阳[日不落] day (m209.txt:377-378): its own vote thread,
    judged from the opening to ``closes`` (the game file's ``first_closes``)."""

    tid: int
    closes: datetime
    ballots: tuple[Ballot, ...]
    verdicts: tuple[VoteVerdict, ...]
    tally: Tally


@dataclass
class DayResult:
    day: Day
    ballots: tuple[Ballot, ...]
    verdicts: tuple[VoteVerdict, ...]
    tally: Tally | None
    speed: SpeedDecision | None
    counts: dict[str, PostCount]
    sheriff: str | None
    accelerated: bool
    out_before: dict[str, datetime]  # who was out (and since when) as the day was judged
    notes: list[str] = field(default_factory=list)
    accounts: dict[str, int] = field(default_factory=dict)  # slot -> forum uid at the opening
    # 太阳[日不落]: the first 正午 round; ``ballots``/``verdicts``/``tally`` are the extra round's
    first: RoundResult | None = None
    # out of the game without being out (m209 离开游戏): not in the 电梯楼, no 潜水
    absent: frozenset[str] = frozenset()
    # may not vote in the day's (last) round: a roster or state bar (m209 太阳[日], 白痴 …)
    barred: frozenset[str] = frozenset()
    # not judged for 发言不足 that day, and why (离开游戏, 太阳[日不落] …)
    post_exempt: dict[str, str] = field(default_factory=dict)
    # some thread of the day was read successfully; False: nothing judged for 潜水/未投票
    crawled: bool = True
    # the 申请加速/延时 posts read in the progress thread (``speed`` decides on them)
    speed_requests: tuple[SpeedRequest, ...] = ()

    def speed_ignored(self) -> list[tuple[str, str, str]]:
        """The requests the speed decision did not count: (player, Chinese reason, the post's
        link), in the decision's order; the link is "" when no request read matches."""
        return self._speed_sorted()[0]

    def speed_counted(self) -> list[SpeedRequest]:
        """The requests the speed decision counted (each player's last one that counts)."""
        return self._speed_sorted()[1]

    def _speed_sorted(self) -> tuple[list[tuple[str, str, str]], list[SpeedRequest]]:
        """Each of ``speed.ignored`` with its post's link, and the requests left over (each
        player's last one that counts)."""
        if self.speed is None:
            return [], []
        requests = sorted(
            self.speed_requests,
            key=lambda r: (r.at, r.player, r.kind.value, r.pid or 0, r.evidence),
        )
        ignored = [(i.player, i.reason, i.evidence) for i in self.speed.ignored]
        left = list(requests)
        for i in self.speed.ignored:
            if i.request in left:
                left.remove(i.request)
        return ignored, left

    @property
    def all_verdicts(self) -> tuple[VoteVerdict, ...]:
        """Every verdict of the day, the first round's (if any) first."""
        return (*(self.first.verdicts if self.first else ()), *self.verdicts)


@dataclass(frozen=True)
class DayEnd:
    """The game ended during day ``day``, before its vote (胜负判定 at the
    moment a condition is met, zhenyan.txt:114): the vote that day is not counted.

    ``at``: when (the guess's post, the red card; None: a record without a time); ``what``: the
    engine's sentence; ``url``: the post that ended it ("" when none); ``rule``: the rule
    cited; ``winner``/``win_reason``: who won (None while a decision is pending); ``pending``:
    the decisions still to take (their prompts, filled in for ``游戏文件``); ``resolved``: the
    day was already resolved on it."""

    day: int
    at: datetime | None
    what: str
    rule: str
    url: str = ""
    winner: str | None = None
    win_reason: str | None = None
    pending: tuple[str, ...] = ()
    resolved: bool = False

    def lines(self, tz: tzinfo) -> list[str]:
        """What the director reads (``bansha status``, ``bansha tally``, the cycle)."""
        from engine.rulesets.rulebooks import cite  # loads the rule books: only when said

        when = f"{self.at.astimezone(tz):%m-%d %H:%M}" if self.at is not None else "（未写时间）"
        link = f"  {self.url}" if self.url else ""
        out = [f"游戏已在第{self.day}天 {when} 结束：{self.what}（{cite(self.rule)}）{link}"]
        if self.winner is not None:
            out.append(f"胜负：{self.winner}胜利（{self.win_reason}）")
        for prompt in self.pending:
            out.append(f"待定：{prompt}")
        if not self.resolved:
            out.append(
                f"第{self.day}天的投票不再进行：不必提醒投票，可以在关门前结算"
                f"（bansha day resolve 游戏文件 --day {self.day}）"
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "day": self.day,
            "at": self.at.isoformat() if self.at is not None else None,
            "what": self.what,
            "rule": self.rule,
            "url": self.url,
            "winner": self.winner,
            "win_reason": self.win_reason,
            "pending": list(self.pending),
            "resolved": self.resolved,
        }


@dataclass
class Derivation:
    game: Game
    as_of: datetime
    days: dict[int, DayResult]
    flags: tuple[Flag, ...]
    ledger: Ledger
    outs: dict[str, tuple[datetime, str]]  # player -> (when, why)
    # 遗言 the players sent the director (the latest per player, by the derivation's time)
    lastwords: dict[str, LastWords] = field(default_factory=dict)
    # the engine's 公示 per resolved phase ("night:1" → lines), as the rule set words them
    public: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # outs the engine resolved: player → (the cause as stored, what the public may read);
    # the stored cause names skills (女巫[毒药] …) and stays the director's
    engine_outs: dict[str, tuple[str, str]] = field(default_factory=dict)
    # voted out with their card still in the game (tubian24 白痴[装傻]): player → (when, the
    # public cause); in the lists of outs a day opens with, never in the roster's outs
    voted_in_game: dict[str, tuple[datetime, str]] = field(default_factory=dict)
    # who the engine gave last words, and for the out at which moment (m209's 4, nizhuan's
    # per round); None: not counted
    lastwords_rights: dict[str, frozenset[datetime]] | None = None
    # days the engine resolved on another count than today's: resolve them again
    stale_days: frozenset[int] = frozenset()
    # how many cards went out in each resolved phase ("night:0" → 2)
    deaths_in: dict[str, int] = field(default_factory=dict)
    # the game ended during a day, before its vote (pipeline.derive.ending); None: it did not
    ended: DayEnd | None = None
    # the first resolved phase the engine declared a winner in; None: no winner yet
    won: Phase | None = None

    def warnings(self) -> list[str]:
        """What the director must act on before drafts can follow (a stale resolution), and a
        game that ended during a day (its pending decisions, its day to resolve)."""
        stale = [n for d in sorted(self.stale_days) for n in self.days[d].notes if "不一致" in n]
        ended = self.ended
        if ended is None or (ended.resolved and not ended.pending):
            return stale
        return [*stale, "；".join(ended.lines(self.game.game.tz))]

    def ended_vote(self, day: int) -> bool:
        """Whether ``day``'s vote is not counted: the game ended during it, before the vote."""
        return self.ended is not None and self.ended.day == day

    def lastwords_refusal(self, player: str) -> str:
        """Why ``player``'s recorded last words may not be published ("" when they may): the
        rule set's text (pipeline.game.lastwords.refusal) and the engine's count."""
        first = min((d.opens for d in self.game.days), default=None)
        why = refusal(self.game.game.ruleset, self.outs.get(player), first)
        if why:
            return why
        rights = self.lastwords_rights
        if rights is not None and player in self.engine_outs:
            at = self.outs[player][0] if player in self.outs else None
            if at not in rights.get(player, frozenset()):
                return "引擎结算时没有给他这次出局的遗言权利（遗言名额已用完，或遗言须留空）"
        return ""

    def day(self, n: int) -> DayResult:
        if n not in self.days:
            raise ValueError(f"游戏文件中没有第 {n} 天")
        return self.days[n]
