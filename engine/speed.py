"""Acceleration and delay (申请加速 / 申请延时) of a discussion day.

Each rule set declares its :class:`SpeedRules` in its module, quoting its rule text
(``Ruleset.speed``); the functions here are given them. The
defaults are what most texts say: a request passes with at least half of the living
(大于等于存活人数的一半), 延时 is allowed and cancels the acceleration (延迟成功时，不再视为
"执行加速"状态), and requests close three hours before the discussion day does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo
from enum import StrEnum
from typing import Any, Literal

__all__ = [
    "IgnoredRequest",
    "SpeedDeadlines",
    "SpeedDecision",
    "SpeedKind",
    "SpeedRequest",
    "SpeedRules",
    "auto_accelerated",
    "decide_speed",
    "speed_deadlines",
]

Threshold = Literal["at_least_half", "more_than_half"]


class SpeedKind(StrEnum):
    ACCELERATE = "accelerate"
    DELAY = "delay"

    @property
    def zh(self) -> str:
        return "加速" if self is SpeedKind.ACCELERATE else "延时"


@dataclass(frozen=True, slots=True)
class SpeedRules:
    ruleset: str
    threshold: Threshold = "at_least_half"  # what most texts say: 大于等于存活人数的一半
    delay_allowed: bool = True
    # 18:00 of the natural day | N hours before close
    deadline: Literal["clock", "before_close"] = "before_close"
    deadline_clock: time = time(18, 0)
    hours_before_close: int = 3
    auto_accelerate_below: int | None = None  # living count under which acceleration is automatic
    rule: str = ""
    deadline_rule: str = ""
    auto_rule: str = ""


@dataclass(frozen=True, slots=True)
class SpeedRequest:
    """One 申请加速 / 申请延时 post in the progress thread."""

    player: str
    kind: SpeedKind
    at: datetime
    evidence: str = ""  # the post's URL
    pid: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "kind": self.kind.value,
            "at": self.at.isoformat(),
            "evidence": self.evidence,
            "pid": self.pid,
        }


@dataclass(frozen=True, slots=True)
class SpeedDeadlines:
    accelerate: datetime
    delay: datetime
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "accelerate": self.accelerate.isoformat(),
            "delay": self.delay.isoformat(),
            "rule": self.rule,
        }


def _clock_deadline(opens: datetime | None, closes: datetime, clock: time, tz: tzinfo) -> datetime:
    """The latest ``clock`` (e.g. 18:00) of a natural day at or before the close."""
    local_close = closes.astimezone(tz)
    candidate = datetime.combine(local_close.date(), clock, tzinfo=tz)
    if candidate > local_close:
        candidate = datetime.combine(local_close.date() - timedelta(days=1), clock, tzinfo=tz)
    if opens is not None and candidate < opens:
        return closes  # the day has no 18:00 inside it: requests are open until the close
    return candidate


def speed_deadlines(
    rules: SpeedRules,
    *,
    closes: datetime,
    opens: datetime | None = None,
    accelerated_closes: datetime | None = None,
    tz: tzinfo | None = None,
) -> SpeedDeadlines:
    """The request deadlines of one discussion day.

    - ``deadline == "clock"``: the clock time of the natural day (the last one at or before the
      close, in ``tz``, which defaults to the close's own offset).
    - otherwise ``hours_before_close`` before the close. Acceleration requests may run until
      that long before the *accelerated* close; pass it as ``accelerated_closes`` (defaults to
      ``closes``).

    ``rules``: the rule set's speed rules (``Ruleset.speed``).
    """
    if closes.tzinfo is None:
        raise ValueError("关门时间必须带时区")
    zone = tz or closes.tzinfo
    assert zone is not None
    if rules.deadline == "clock":
        deadline = _clock_deadline(opens, closes, rules.deadline_clock, zone)
        return SpeedDeadlines(deadline, deadline, rules.deadline_rule)
    before = timedelta(hours=rules.hours_before_close)
    delay = closes - before
    accelerate = (accelerated_closes or closes) - before
    return SpeedDeadlines(accelerate, delay, rules.deadline_rule)


def auto_accelerated(rules: SpeedRules, living: int) -> bool:
    """Whether the rule set accelerates by itself at this number of living players.

    Only a rule set with ``auto_accelerate_below`` gives a number (存活人数低于7人后，将自动执行
    二段加速); the others leave it to the director (a day's ``accelerated`` override in the game
    file).
    """
    below = rules.auto_accelerate_below
    return below is not None and living < below


@dataclass(frozen=True, slots=True)
class IgnoredRequest:
    """A request the decision did not count: whose, why (Chinese, starting with the request's
    time and kind), and the request itself — its post (``pid``, ``evidence``) for the director."""

    player: str
    reason: str
    request: SpeedRequest

    @property
    def pid(self) -> int | None:
        return self.request.pid

    @property
    def evidence(self) -> str:
        return self.request.evidence

    def to_dict(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "reason": self.reason,
            "pid": self.pid,
            "evidence": self.evidence,
        }


@dataclass(frozen=True, slots=True)
class SpeedDecision:
    accelerate: bool  # the day runs accelerated
    delay: bool  # the day is extended
    counts: dict[SpeedKind, int]
    voters: dict[SpeedKind, tuple[str, ...]]
    living: int
    needed: int  # requests needed to pass
    ignored: tuple[IgnoredRequest, ...]  # in request order
    overridden: bool
    reason: str
    rule: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "accelerate": self.accelerate,
            "delay": self.delay,
            "counts": {k.value: self.counts.get(k, 0) for k in SpeedKind},
            "voters": {k.value: list(self.voters.get(k, ())) for k in SpeedKind},
            "living": self.living,
            "needed": self.needed,
            "ignored": [i.to_dict() for i in self.ignored],
            "overridden": self.overridden,
            "reason": self.reason,
            "rule": self.rule,
        }


def _needed(threshold: Threshold, living: int) -> int:
    if living <= 0:
        return 1
    if threshold == "at_least_half":
        return (living + 1) // 2  # 2 * count >= living
    return living // 2 + 1  # 2 * count > living


def _fmt(at: datetime) -> str:
    return at.strftime("%m-%d %H:%M")


def decide_speed(
    requests: Sequence[SpeedRequest],
    *,
    living: Sequence[str],
    deadline: datetime,
    override: bool | None = None,
    rules: SpeedRules,
    accelerate_deadline: datetime | None = None,
    opens: datetime | None = None,
    auto: bool = False,
) -> SpeedDecision:
    """Count distinct living players' requests and decide the day's speed.

    - Only players in ``living`` count; requests after the deadline (``accelerate_deadline`` for
      acceleration when given, else ``deadline``) or before ``opens`` are ignored.
    - One player counts once. A player who asked for both keeps only the last request in time.
    - Passing: ``count >= living / 2`` (``count > living / 2`` where the rules say 超过半数).
    - Acceleration holds when requested or ``auto`` (e.g. 二段加速 below 7 living); a passed
      delay cancels acceleration (延迟成功时，不再视为"执行加速"状态).
    - ``override`` (the director): True = accelerated, False = not accelerated; it wins over the
      count. The delay result is still reported as counted.
    - ``rules``: the rule set's speed rules (``Ruleset.speed``).
    """
    alive = set(living)
    acc_deadline = accelerate_deadline or deadline
    ignored: list[IgnoredRequest] = []
    latest: dict[str, SpeedRequest] = {}
    order = sorted(requests, key=lambda r: (r.at, r.player, r.kind.value, r.pid or 0, r.evidence))
    for req in order:
        label = f"{_fmt(req.at)} 申请{req.kind.zh}"
        limit = acc_deadline if req.kind is SpeedKind.ACCELERATE else deadline
        why = None
        if req.player not in alive:
            why = f"{label}：不是存活角色，不计入"
        elif req.kind is SpeedKind.DELAY and not rules.delay_allowed:
            why = f"{label}：本规则没有申请延时，不计入"
        elif opens is not None and req.at < opens:
            why = f"{label}：早于开门时间，不计入"
        elif req.at > limit:
            why = f"{label}：晚于申请截止时间{_fmt(limit)}，不计入"
        if why is not None:
            ignored.append(IgnoredRequest(req.player, why, req))
            continue
        previous = latest.get(req.player)
        if previous is None:
            latest[req.player] = req
        elif previous.kind is req.kind:
            ignored.append(IgnoredRequest(req.player, f"{label}：重复申请，只计一次", req))
        else:
            changed = (
                f"{_fmt(previous.at)} 申请{previous.kind.zh}："
                f"之后改为申请{req.kind.zh}，以最后一次为准"
            )
            ignored.append(IgnoredRequest(req.player, changed, previous))
            latest[req.player] = req

    voters = {
        kind: tuple(sorted(p for p, r in latest.items() if r.kind is kind)) for kind in SpeedKind
    }
    counts = {kind: len(voters[kind]) for kind in SpeedKind}
    n_living = len(alive)
    needed = _needed(rules.threshold, n_living)
    acc_passed = counts[SpeedKind.ACCELERATE] >= needed
    delay_passed = rules.delay_allowed and counts[SpeedKind.DELAY] >= needed

    need_words = "过半数" if rules.threshold == "more_than_half" else "至少一半"
    parts = [f"存活{n_living}人，需{need_words}即{needed}人"]
    parts.append(
        f"申请加速{counts[SpeedKind.ACCELERATE]}人（{'通过' if acc_passed else '未通过'}）"
    )
    if rules.delay_allowed:
        parts.append(
            f"申请延时{counts[SpeedKind.DELAY]}人（{'通过' if delay_passed else '未通过'}）"
        )

    accelerate = (acc_passed or auto) and not delay_passed
    if auto and not acc_passed:
        parts.append(f"存活人数低于{rules.auto_accelerate_below}人，自动执行加速")
    if delay_passed and (acc_passed or auto):
        parts.append("延时成功，不再视为执行加速")
    overridden = override is not None
    if overridden:
        accelerate = bool(override)
        delay_passed = delay_passed and not accelerate
        parts.append(f"导演裁定：{'执行加速' if accelerate else '不执行加速'}")
    conclusion = "本日执行加速" if accelerate else ("本日延时" if delay_passed else "本日正常进行")
    reason = "；".join(parts) + f"。结论：{conclusion}"
    return SpeedDecision(
        accelerate=accelerate,
        delay=delay_passed,
        counts=counts,
        voters=voters,
        living=n_living,
        needed=needed,
        ignored=tuple(ignored),
        overridden=overridden,
        reason=reason,
        rule=rules.rule,
    )
