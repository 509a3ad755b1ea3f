"""What the derivation reads from the director's journal and the store's bookkeeping:
the outs, proxies, modifiers, day actions, settings, the threads read, the card events.
"""

from __future__ import annotations

from datetime import datetime
from fractions import Fraction
from typing import Any

from engine.cards import Card, CardEvent
from engine.kernel import Action
from engine.votes import ModifierKind, VoteModifier
from pipeline import distinct_tids
from pipeline.game import journal
from pipeline.game.gamefile import Day
from pipeline.store import Store


def _dt(raw: str) -> datetime:
    return datetime.fromisoformat(raw)


def journal_outs(store: Store) -> list[tuple[str, datetime, str]]:
    return [
        (r["player"], _dt(r["at"]), r["cause"])
        for r in store.query(
            "SELECT player, at, cause FROM journal_outs WHERE revoked_at IS NULL ORDER BY at, id"
        )
    ]


def journal_proxies(store: Store, day: int) -> list[dict[str, Any]]:
    return list(
        store.query(
            "SELECT * FROM journal_proxy_votes WHERE day = ? AND revoked_at IS NULL "
            "ORDER BY at, id",
            [day],
        )
    )


def journal_modifiers(store: Store, day: int) -> list[VoteModifier]:
    return [
        VoteModifier(r["player"], ModifierKind(r["kind"]), Fraction(r["value"]), r["source"] or "")
        for r in store.query(
            "SELECT * FROM journal_modifiers WHERE day = ? AND revoked_at IS NULL ORDER BY id",
            [day],
        )
    ]


def journal_day_actions(store: Store, day: int) -> tuple[Action, ...]:
    """The actions the director recorded for ``day`` (the engine's day journal)."""
    return tuple(r.action for r in journal.journal_actions(store, "day", day))


def journal_setting(store: Store, key: str) -> str | None:
    rows = store.query("SELECT value FROM journal_settings WHERE key = ?", [key])
    return rows[0]["value"] if rows else None


def sheriff_settings(store: Store) -> dict[int, str]:
    """``bansha vote sheriff --from-day N``: day N -> the sheriff from that day on ("" = none)."""
    found: dict[int, str] = {}
    for r in store.query("SELECT key, value FROM journal_settings WHERE key LIKE 'sheriff:%'"):
        day = str(r["key"]).split(":", 1)[1]
        if day.lstrip("-").isdigit():
            found[int(day)] = r["value"] or ""
    return found


def crawled_tids(store: Store) -> set[int]:
    """Threads bansha has read at least once: a page stored without error (the crawl log or the
    thread's last outcome says ok), or posts in the store."""
    tids = distinct_tids(store.execute, "crawl_log", "outcome = 'ok'")
    tids |= {
        int(r["tid"])
        for r in store.query(
            "SELECT tid FROM threads WHERE last_outcome = 'ok' OR last_crawled_at IS NOT NULL"
        )
    }
    tids |= distinct_tids(store.execute, "posts")
    return tids


def not_crawled_note(day: Day) -> str:
    """What ``tally``/``why``/``report`` say about a day none of whose threads was read."""
    roles = {"discussion": "讨论帖", "vote": "投票帖", "progress": "进程帖", "inquiry": "询问贴"}
    threads = "、".join(
        f"{roles.get(role.value, '第一轮投票帖')} {tid}" for role, tid in day.threads.items()
    )
    where = f"（{threads}）" if threads else "（游戏文件中这一天没有帖子编号）"
    return (
        f"第{day.day}天的帖子尚未抓取{where}：还没有成功读到任何一页，"
        "不判潜水和未投票，计票为空；请先运行 bansha crawl（论坛打不开时稍后再试）"
    )


def card_events(store: Store) -> list[CardEvent]:
    return [
        CardEvent(r["player"], Card.parse(r["colour"]), r["reason"], _dt(r["at"]), r["source"])
        for r in store.query("SELECT * FROM card_events WHERE revoked_at IS NULL ORDER BY at, id")
    ]


def revoked_card_events(store: Store) -> list[CardEvent]:
    """The cards the director took back (``bansha card revoke``, a revoked flag decision)."""
    return [
        CardEvent(r["player"], Card.parse(r["colour"]), r["reason"], _dt(r["at"]), r["source"])
        for r in store.query(
            "SELECT * FROM card_events WHERE revoked_at IS NOT NULL ORDER BY at, id"
        )
    ]
