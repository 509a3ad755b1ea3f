"""The overview of a game — what the console's first page, ``GET /api/games`` and
``bansha status`` show — and how urgent a waiting draft is.

Read from the store as the last cycle left it (the stored flags, the drafts, the cycle record
of :mod:`pipeline.notify`): cheap, and it changes nothing. Nothing here is director-only: no
card, identity or night action.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.console.games import GameSpec, store_error
from pipeline.drafts import Draft, DraftState, no_moderator_rights
from pipeline.drafts.view import URGENT_WINDOW, Urgency, draft_urgency, sort_drafts
from pipeline.notify import last_cycle

if TYPE_CHECKING:
    from pipeline.console.light import GameTimes
    from pipeline.store import Store

__all__ = [
    "URGENT_WINDOW",
    "GameOverview",
    "PhaseInfo",
    "Urgency",
    "draft_urgency",
    "game_overview",
    "games_json",
    "phase_info",
    "sort_drafts",
]


#: a moment as the director reads it, in the game's zone
def _short(dt: datetime | None, game: GameTimes) -> str:
    if dt is None:
        return "—"
    return dt.astimezone(game.game.tz).strftime("%m-%d %H:%M")


# --------------------------------------------------------------------------- the phase


@dataclass(frozen=True, slots=True)
class PhaseInfo:
    label: str  # "第2天（白天）", "第1晚", "未开始" …
    day: int | None  # the day to show (the current one, or the last one that opened)
    night: int | None  # the night under way, if any
    next_close: datetime | None


def phase_info(game: GameTimes, now: datetime) -> PhaseInfo:
    days = sorted(game.days, key=lambda d: d.day)
    closes = sorted(
        t for d in days for t in (d.closes, d.first_closes) if t is not None and t > now
    )
    next_close = closes[0] if closes else None
    if not days:
        return PhaseInfo("游戏文件中还没有任何一天", None, None, None)
    if now < days[0].opens:
        return PhaseInfo(
            f"未开始：第{days[0].day}天 {_short(days[0].opens, game)} 开门",
            days[0].day,
            days[0].day - 1 if days[0].day >= 1 else None,
            next_close,
        )
    for i, d in enumerate(days):
        if d.opens <= now < d.closes:
            what = "白天"
            if d.sheriff_election:
                what = "警长竞选"
            if d.first_closes is not None and now < d.first_closes:
                what = "第一轮[正午]"
            return PhaseInfo(f"第{d.day}天（{what}）", d.day, None, next_close)
        after = days[i + 1] if i + 1 < len(days) else None
        if now >= d.closes and (after is None or now < after.opens):
            from engine.state import Phase  # the night's name, as the engine says it

            night = Phase.night(d.day).zh
            if after is None:
                return PhaseInfo(
                    f"{night}（第{d.day}天已关门；游戏文件中还没有下一天）", d.day, d.day, None
                )
            return PhaseInfo(
                f"{night}（第{after.day}天 {_short(after.opens, game)} 开门）",
                d.day,
                d.day,
                next_close,
            )
    return PhaseInfo("—", days[-1].day, None, next_close)


# --------------------------------------------------------------------------- the overview


@dataclass
class GameOverview:
    id: str
    title: str
    ruleset: str
    ruleset_name: str
    path: str
    phase: str
    day: int | None
    night: int | None
    next_close: datetime | None
    drafts_pending: int = 0
    drafts_approved: int = 0
    drafts_urgent: int = 0
    flags_pending: int = 0
    last_cycle: dict[str, Any] | None = None
    forum: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None  # the store could not be read: why
    tz: Any = None
    #: the threads bansha opened: {day, role, tid, subject, opened_at}
    opened_threads: list[dict[str, Any]] = field(default_factory=list)
    #: the forum said the director's account may not close threads (said once): its words
    no_moderator_rights: str | None = None
    #: the game ended during a day, before its vote (pipeline.derive.ending), as the last
    #: cycle's derivation found it: its :meth:`DayEnd.to_dict`
    ended: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """``GET /api/games`` and ``bansha status --json``: ``id, title, ruleset,
        drafts_pending, flags_pending, last_cycle`` and the rest of the overview."""
        return {
            "id": self.id,
            "title": self.title,
            "ruleset": self.ruleset,
            "ruleset_name": self.ruleset_name,
            "phase": self.phase,
            "day": self.day,
            "night": self.night,
            "next_close": self.next_close.isoformat() if self.next_close else None,
            "drafts_pending": self.drafts_pending,
            "drafts_approved": self.drafts_approved,
            "drafts_urgent": self.drafts_urgent,
            "flags_pending": self.flags_pending,
            "last_cycle": self.last_cycle,
            "forum": self.forum,
            "problem": self.problem,
            "opened_threads": self.opened_threads,
            "no_moderator_rights": self.no_moderator_rights,
            "ended": self.ended,
        }

    # what a director reads (the terminal and the page say the same)
    @property
    def next_close_zh(self) -> str:
        if self.next_close is None:
            return "没有"
        return self.next_close.astimezone(self.tz).strftime("%m-%d %H:%M")

    @property
    def last_cycle_zh(self) -> str:
        c = self.last_cycle
        if c is None:
            return "还没有记录（cron 还没有运行过 bansha cycle）"
        at = datetime.fromisoformat(c["at"]).astimezone(self.tz).strftime("%m-%d %H:%M")
        if c.get("source") == "crawl":
            state = "成功" if c["ok"] else f"出错：{c.get('error') or '见日志'}"
            return f"{at}（没有 cycle 记录，这是最近一次抓取）{state}"
        if c["ok"]:
            return f"{at} 正常完成"
        streak = c.get("fail_streak") or 1
        again = f"（已连续 {streak} 轮失败）" if streak > 1 else ""
        return f"{at} 失败{again}：{c.get('error') or '见日志'}"

    @property
    def forum_zh(self) -> str:
        f = self.forum
        if f.get("reachable") is None:
            return "未知（还没有抓取过）"
        at = ""
        if f.get("at"):
            at = datetime.fromisoformat(f["at"]).astimezone(self.tz).strftime("%m-%d %H:%M")
            at = f"（{at}）"
        if f["reachable"]:
            return f"可以访问{at}"
        return f"无法访问{at}：{f.get('detail') or '见日志'}"

    @property
    def ended_zh(self) -> list[str]:
        """The game's end during a day (who wins or what is pending, the day to resolve),
        the commands naming the game file; [] when it did not end so."""
        if self.ended is None:
            return []
        from pipeline.notify import runnable

        name = Path(self.path).name
        return [runnable(str(line), name) for line in self.ended.get("lines", ())]

    @property
    def opened_zh(self) -> str:
        """The threads bansha opened, by day: 第3天 讨论帖 tid=2014、投票帖 tid=2015."""
        from pipeline.game.roles import THREAD_ROLE_TITLES, ThreadRole

        by_day: dict[int, list[str]] = {}
        for t in self.opened_threads:
            role = THREAD_ROLE_TITLES[ThreadRole(t["role"])]
            by_day.setdefault(t["day"], []).append(f"{role} tid={t['tid']}")
        return "；".join(f"第{n}天 " + "、".join(v) for n, v in sorted(by_day.items()))

    def lines(self) -> list[str]:
        """The overview in the terminal (``bansha status``)."""
        out = [
            f"{self.title}（{self.id}，规则：{self.ruleset_name}）",
            f"  阶段：{self.phase}",
            f"  下一次关门：{self.next_close_zh}",
        ]
        if self.problem:
            out.append(f"  注意：{self.problem}")
            return out
        out += [f"  注意：{line}" for line in self.ended_zh]
        urgent = f"，其中 {self.drafts_urgent} 份紧急" if self.drafts_urgent else ""
        approved = f"；已批准待发出 {self.drafts_approved} 份" if self.drafts_approved else ""
        out += [
            f"  待批准草稿：{self.drafts_pending} 份{urgent}{approved}",
            f"  待确认违规标记：{self.flags_pending} 条",
            f"  上一轮：{self.last_cycle_zh}",
            f"  论坛：{self.forum_zh}",
        ]
        if self.opened_zh:
            out.append(f"  bansha 开的帖子：{self.opened_zh}")
        if self.no_moderator_rights:
            out.append(
                f"  注意：导演账号没有版主权限，投票帖需手动锁帖（{self.no_moderator_rights}）"
            )
        return out


def _flags_pending(store: Store) -> int:
    row = store.execute(
        "SELECT COUNT(*) FROM flags WHERE id NOT IN (SELECT flag_id FROM flag_decisions)"
    ).fetchone()
    return int(row[0]) if row else 0


def _last_crawl(store: Store) -> dict[str, Any] | None:
    rows = list(store.query("SELECT run_id, at FROM crawl_log ORDER BY id DESC LIMIT 1"))
    if not rows:
        return None
    run = rows[0]["run_id"]
    outcomes = list(
        store.query("SELECT outcome, detail FROM crawl_log WHERE run_id = ? ORDER BY id", [run])
    )
    errors = [r for r in outcomes if r["outcome"] not in ("ok", "retry")]
    return {
        "at": rows[0]["at"],
        "ok": not errors,
        "error": (errors[-1]["detail"] or errors[-1]["outcome"]) if errors else None,
        "reachable": any(r["outcome"] == "ok" for r in outcomes),
        "source": "crawl",
    }


def _ruleset_name(spec: GameSpec) -> str:
    """The rule set as the overview names it: 让子弹飞（m135）."""
    if spec.light is not None:
        return f"{spec.light.ruleset_title}（{spec.light.game.ruleset}）"
    from engine.rulesets import get_ruleset

    ruleset = spec.model.game.ruleset
    try:
        rs = get_ruleset(ruleset)
    except ValueError:
        return ruleset
    return f"{rs.title}（{rs.id}）"


def game_overview(spec: GameSpec, now: datetime) -> GameOverview:
    game = spec.facts
    name = _ruleset_name(spec)
    phase = phase_info(game, now)
    ov = GameOverview(
        id=game.game.id,
        title=game.game.title,
        ruleset=game.game.ruleset,
        ruleset_name=name,
        path=str(spec.path),
        phase=phase.label,
        day=phase.day,
        night=phase.night,
        next_close=phase.next_close,
        tz=game.game.tz,
    )
    if not spec.db_exists:
        ov.problem = f"数据库 {spec.db_path} 还不存在（先运行 bansha init {spec.path.name}）"
        return ov
    try:
        with spec.store(reading=True) as store:
            _fill(ov, game, store, now)
    except store_error() as exc:
        ov.problem = str(exc)
    return ov


def _fill(ov: GameOverview, game: Any, store: Store, now: datetime) -> None:
    live = [
        Draft.from_row(r)
        for r in store.query("SELECT * FROM drafts WHERE state IN ('pending', 'approved')")
    ]
    pending = [d for d in live if d.state is DraftState.PENDING]
    ov.drafts_pending = len(pending)
    ov.drafts_approved = len(live) - len(pending)
    ov.drafts_urgent = sum(1 for d in pending if draft_urgency(game, d, now).urgent)
    ov.flags_pending = _flags_pending(store)
    ov.opened_threads = [
        {k: r[k] for k in ("day", "role", "tid", "subject", "opened_at")}
        for r in store.opened_threads()
    ]
    rights = no_moderator_rights(store)
    ov.no_moderator_rights = str(rights.get("message", "")) if rights else None
    _fill_ended(ov, store)
    if ov.ended is None:
        _fill_won(ov, store)
    record = last_cycle(store)
    crawl = _last_crawl(store)
    if record is not None:
        ov.last_cycle = {**record.to_dict(), "source": "cycle"}
        forum = record.forum
        if forum is not None:
            from pipeline.notify import META_FORUM_AT

            ov.forum = {
                "reachable": forum == "ok",
                "detail": None if forum == "ok" else forum,
                "at": store.get_meta(META_FORUM_AT),
            }
    elif crawl is not None:
        ov.last_cycle = {k: crawl[k] for k in ("at", "ok", "error", "source")}
    if not ov.forum:
        ov.forum = (
            {"reachable": crawl["reachable"], "detail": crawl["error"], "at": crawl["at"]}
            if crawl is not None
            else {"reachable": None, "detail": None, "at": None}
        )


def _fill_ended(ov: GameOverview, store: Store) -> None:
    """The game's end during a day, as the last derivation wrote it in that day's tally
    (pipeline/derive/writeback.py): the phase says so."""
    end = stored_end(store)
    if end is None:
        return
    ov.ended = end
    at = end.get("at")
    when = f" {datetime.fromisoformat(at).astimezone(ov.tz):%m-%d %H:%M}" if at else ""
    outcome = f"{end['winner']}胜利" if end.get("winner") else "胜负待定"
    if end.get("pending"):
        outcome += "，有待导演处理的决定"
    ov.phase = f"游戏已在第{end['day']}天{when} 结束（{outcome}；当天的投票不再进行）"


def _fill_won(ov: GameOverview, store: Store) -> None:
    """A game the engine declared won when the director resolved a night or a day's vote: the
    phase says who won and when, not the next day the game file may still list."""
    row = store.execute(
        "SELECT phase, winner FROM engine_snapshots WHERE winner IS NOT NULL AND winner != '' "
        "ORDER BY seq LIMIT 1"
    ).fetchone()
    if row is None:
        return
    from engine.state import Phase

    ov.phase = f"游戏已结束：{row[1]}胜利（{Phase.parse(row[0]).zh}结算）"


def stored_end(store: Store) -> dict[str, Any] | None:
    """The ``ended`` a day's stored tally holds (the game ended during that day), or None."""
    for row in store.query("SELECT json FROM tallies ORDER BY day"):
        try:
            data = json.loads(row["json"] or "{}")
        except ValueError:
            continue
        ended = data.get("ended") if isinstance(data, dict) else None
        if isinstance(ended, dict) and "day" in ended:
            return ended
    return None


def overviews(specs: Sequence[GameSpec], now: datetime | None = None) -> list[GameOverview]:
    out = []
    for spec in specs:
        when = now if now is not None else datetime.now(spec.tz)
        out.append(game_overview(spec, when))
    return out


def games_json(specs: Sequence[GameSpec], now: datetime | None = None) -> list[dict[str, Any]]:
    """Every game's overview (``GET /api/games``, ``bansha status --json``): ``id, title,
    ruleset, drafts_pending, flags_pending, last_cycle`` and the rest of what it shows."""
    return [ov.to_dict() for ov in overviews(specs, now)]
