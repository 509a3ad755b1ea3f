"""Notifications after a cycle, through Apprise: what should bring the director to the console.

The cycle calls :func:`notify_after_cycle` once it has finished (or failed). It first records the
cycle in the store's ``meta`` table (time, ok or the error, whether the forum answered) — what
``bansha status`` and the console's overview show as "上一轮" — and then decides what to send:

- a cycle failed: once per failure streak and cause (a new cause within the streak — the login
  fixed, now a thread to open by hand — is a new notice), and once more when a cycle succeeds
  again;
- what the director must act on (a new thread that met a captcha, an account that may not lock
  threads): each once while it lasts;
- drafts waiting for approval: each draft once (with a link to the console when
  ``[notify] console_url`` is set);
- a reminder or a result still waiting close to its deadline: each draft once;
- new conduct flags: each flag once.

Everything a cycle has to say goes into ONE notification. Where it goes: the game file's
``[notify] urls`` (read as ``getattr(game, "notify", None)``) plus the environment variable
``BANSHA_NOTIFY`` (Apprise URLs, separated by spaces or commas). A notification names drafts by
their number, kind and day, and flags by player and reason; a command in it names the game
file by its path, so it runs as printed. Failures go out as Apprise ``failure``, what the
director must act on as ``warning`` — never a draft's body (an opening
post carries last words before they are public), a card, an identity, a night action, a
cookie, a password, the console's token or a notification URL (Apprise URLs hold bot tokens).

A notification that cannot be sent is logged (which service, never its URL) and never raises:
the cycle's result and exit code are the cycle's own. What was not delivered is tried again
after the next cycle.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pipeline.drafts import Draft
    from pipeline.game.gamefile import Game
    from pipeline.store import Store

__all__ = [
    "CONSOLE_URL_ENV",
    "NOTIFY_ENV",
    "CycleRecord",
    "Notice",
    "console_url",
    "last_cycle",
    "notify_after_cycle",
    "notify_urls",
    "record_cycle",
    "send_notice",
]

log = logging.getLogger(__name__)

NOTIFY_ENV = "BANSHA_NOTIFY"
#: the console's address for links, when the game file has no ``[notify] console_url``
CONSOLE_URL_ENV = "BANSHA_CONSOLE_URL"

# the last cycle, for the overview (bansha status, the console)
META_LAST_AT = "cycle:last_at"
META_LAST_OK = "cycle:last_ok"
META_LAST_ERROR = "cycle:last_error"
META_FORUM = "cycle:forum"  # "ok", or why the forum was not usable
META_FORUM_AT = "cycle:forum_at"
META_STREAK = "cycle:fail_streak"
# what was already told
META_FAIL_SENT = "notify:fail_sent"
META_FAIL_CAUSES = "notify:fail_causes"  # the causes of this failure streak already told
META_WARNINGS = "notify:warnings"  # what the director must act on, already told
META_DRAFTS = "notify:drafts"
META_URGENT = "notify:urgent"
META_FLAGS = "notify:flags"

#: a reminder or a result this close to its deadline (or past it) is said once more
NEAR_DEADLINE = timedelta(minutes=60)
#: at most this many drafts or flags are named in one notification (the rest are counted)
MAX_LINES = 8
MAX_ERROR_CHARS = 300


@dataclass(frozen=True, slots=True)
class CycleRecord:
    """The last cycle as the store remembers it."""

    at: str
    ok: bool
    error: str | None
    forum: str | None  # "ok", the reason the forum was not usable, or None (not asked)
    streak: int  # failed cycles in a row, this one included (0 when it succeeded)

    def to_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "ok": self.ok,
            "error": self.error,
            "forum": self.forum,
            "fail_streak": self.streak,
        }


@dataclass(frozen=True, slots=True)
class Notice:
    """One notification: a title, a body, and what it tells (``failure``, ``recovered``,
    ``warning``, ``drafts``, ``urgent``, ``flags``)."""

    title: str
    body: str
    kinds: tuple[str, ...]

    @property
    def level(self) -> str:
        """The Apprise notification type: ``failure`` when a cycle failed, ``warning`` when
        the director must act (or a deadline is near), ``success`` for a recovery alone,
        else ``info``."""
        if "failure" in self.kinds:
            return "failure"
        if {"warning", "urgent"} & set(self.kinds):
            return "warning"
        if set(self.kinds) == {"recovered"}:
            return "success"
        return "info"


class _Plan:
    """What a notification will say, part by part (made only when one is configured)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.kinds: list[str] = []
        self.heads: list[str] = []
        #: meta to write once the notification was delivered
        self.on_sent: dict[str, str] = {}

    def add(self, kind: str, head: str, lines: Sequence[str]) -> None:
        if self.lines:
            self.lines.append("")
        self.lines.extend(lines)
        self.kinds.append(kind)
        self.heads.append(head)


# --------------------------------------------------------------------------- configuration


def notify_urls(game: Game, env: Mapping[str, str] | None = None) -> list[str]:
    """The Apprise URLs: the game file's ``[notify] urls``, then ``BANSHA_NOTIFY``."""
    env = os.environ if env is None else env
    urls: list[str] = []
    settings = getattr(game, "notify", None)
    for url in getattr(settings, "urls", None) or []:
        if str(url).strip():
            urls.append(str(url).strip())
    for url in re.split(r"[\s,]+", env.get(NOTIFY_ENV, "")):
        if url:
            urls.append(url)
    return list(dict.fromkeys(urls))  # each once, in the order given


def console_url(game: Game, env: Mapping[str, str] | None = None) -> str | None:
    """The console's address for links (``[notify] console_url``, else ``BANSHA_CONSOLE_URL``)."""
    env = os.environ if env is None else env
    settings = getattr(game, "notify", None)
    url = getattr(settings, "console_url", None) or env.get(CONSOLE_URL_ENV, "").strip()
    if not url:
        return None
    url = str(url).strip()
    return url if url.endswith("/") else url + "/"


# --------------------------------------------------------------------------- the cycle record


def _errors_of(report: Any, error: str | None) -> list[str]:
    if error is not None:
        return [error]
    if report is None:
        return ["本轮没有完成（没有结果）"]
    return [str(e) for e in getattr(report, "errors", [])]


def record_cycle(
    store: Store, report: Any, now: datetime, *, error: str | None = None
) -> CycleRecord:
    """Write the cycle's outcome to ``meta`` and return it (with the failure streak).

    ``report`` is the cycle's :class:`~pipeline.cycle.CycleReport` (None when the cycle
    stopped before it had one; ``error`` then says why).
    """
    errors = _errors_of(report, error)
    ok = not errors
    streak = 0 if ok else _int(store.get_meta(META_STREAK)) + 1
    text = "；".join(errors) if errors else None
    at = now.isoformat()
    with store.atomic():
        store.set_meta(META_LAST_AT, at)
        store.set_meta(META_LAST_OK, "1" if ok else "0")
        store.set_meta(META_LAST_ERROR, text or "")
        store.set_meta(META_STREAK, str(streak))
        down = getattr(report, "down", None) if report is not None else None
        if down:
            store.set_meta(META_FORUM, str(down))
            store.set_meta(META_FORUM_AT, at)
        elif report is not None and getattr(report, "crawl", None) is not None:
            store.set_meta(META_FORUM, "ok")
            store.set_meta(META_FORUM_AT, at)
    return CycleRecord(at=at, ok=ok, error=text, forum=store.get_meta(META_FORUM), streak=streak)


def last_cycle(store: Store) -> CycleRecord | None:
    """The last recorded cycle, or None when no cycle was recorded yet."""
    at = store.get_meta(META_LAST_AT)
    if not at:
        return None
    return CycleRecord(
        at=at,
        ok=store.get_meta(META_LAST_OK) == "1",
        error=store.get_meta(META_LAST_ERROR) or None,
        forum=store.get_meta(META_FORUM),
        streak=_int(store.get_meta(META_STREAK)),
    )


def _int(raw: str | None) -> int:
    try:
        return int(raw or 0)
    except ValueError:
        return 0


def _ids(raw: str | None) -> set[Any]:
    try:
        value = json.loads(raw or "[]")
    except ValueError:
        return set()
    return set(value) if isinstance(value, list) else set()


# --------------------------------------------------------------------------- what to say


def cause(line: str) -> str:
    """What makes one error or warning line the same cause in another cycle: its words, the
    numbers in it aside (attempts, times, ports)."""
    return re.sub(r"\d+", "#", " ".join(line.split()))


def game_file_arg(game_path: Path | str | None) -> str | None:
    """The game file as a director types it after ``bansha drafts``: its absolute path,
    quoted for the shell (a notice is read away from the folder the cycle ran in)."""
    if game_path is None:
        return None
    return shlex.quote(str(Path(game_path).resolve()))


#: ``bansha publish 游戏文件 --id 5``: a command whose game file is a placeholder
_PLACEHOLDER = re.compile(r"(bansha(?: [a-z]+)+) 游戏文件")


def runnable(text: str, game_file: str | None) -> str:
    """``text`` with every ``bansha … 游戏文件`` command naming the game file itself."""
    if game_file is None:
        return text
    return _PLACEHOLDER.sub(lambda m: f"{m.group(1)} {game_file}", text)


def _short(now: datetime, game: Game) -> str:
    return now.astimezone(game.game.tz).strftime("%m-%d %H:%M")


def _scrub(text: str, game: Game, env: Mapping[str, str], urls: Sequence[str]) -> str:
    """``text`` without any secret the process knows: the cookie, the account, the password,
    the console's token and the notification URLs."""
    names = [game.forum.cookie_env, "BANSHA_CONSOLE_TOKEN"]
    names += [n for n in (game.forum.username_env, game.forum.password_env) if n]
    secrets = [env.get(n, "") for n in names] + list(urls)
    for secret in sorted(secrets, key=len, reverse=True):
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    if len(text) > MAX_ERROR_CHARS:
        text = text[: MAX_ERROR_CHARS - 1] + "…"
    return text


def _draft_label(row: Mapping[str, Any]) -> str:
    from pipeline.drafts import KIND_ZH

    day = f"第{row['day']}天" if row["day"] is not None else ""
    return f"#{row['id']} {day}{KIND_ZH.get(row['kind'], row['kind'])}"


def _capped(lines: list[str], what: str) -> list[str]:
    if len(lines) <= MAX_LINES:
        return lines
    return [*lines[:MAX_LINES], f"  ……另有 {len(lines) - MAX_LINES} {what}"]


def _plan(
    game: Game,
    store: Store,
    record: CycleRecord,
    now: datetime,
    *,
    env: Mapping[str, str],
    urls: Sequence[str],
    errors: Sequence[str] = (),
    warnings: Sequence[str] | None = None,
    game_file: str | None = None,
) -> _Plan:
    """What to tell the director after a cycle, one part per kind in the order they are said:
    a failure or recovery, warnings, new drafts, drafts near their deadline, new flags."""
    from pipeline.drafts import Draft

    plan = _Plan()
    link = console_url(game, env)
    when = _short(now, game)

    def said(text: str) -> str:
        return _scrub(runnable(text, game_file), game, env, urls)

    _plan_cycle_outcome(plan, store, record, errors, when, said)
    if warnings is not None:
        _plan_warnings(plan, store, warnings, said)
    pending = [
        Draft.from_row(r)
        for r in store.query("SELECT * FROM drafts WHERE state = 'pending' ORDER BY id")
    ]
    drafts_page = f"{link}g/{game.game.id}/drafts" if link else ""
    _plan_new_drafts(plan, store, pending, drafts_page, game_file)
    _plan_urgent_drafts(plan, store, game, pending, now, drafts_page)
    _plan_flags(plan, store, f"{link}g/{game.game.id}/day/" if link else "")
    return plan


def _plan_cycle_outcome(
    plan: _Plan,
    store: Store,
    record: CycleRecord,
    errors: Sequence[str],
    when: str,
    said: Callable[[str], str],
) -> None:
    """A failed cycle: once per streak and cause; a success after a told failure: once."""
    fail_sent = store.get_meta(META_FAIL_SENT) == "1"
    if not record.ok:
        told = _ids(store.get_meta(META_FAIL_CAUSES)) if fail_sent else set()
        causes = {cause(e): e for e in errors or [record.error or ""]}
        new = [e for c, e in causes.items() if c not in told]
        if not fail_sent:
            plan.add(
                "failure",
                "cycle 失败",
                [
                    f"{when} 的一轮 cycle 没有完成：{said('；'.join(causes.values()))}",
                    "同样的原因连续失败期间不再重复通知（遇到新的原因会通知）；恢复后会再通知一次。",
                ],
            )
        elif new:
            plan.add(
                "failure",
                "cycle 失败（新的原因）",
                [f"{when} 的一轮 cycle 仍没有完成，又遇到新的问题：{said('；'.join(new))}"],
            )
        if not fail_sent or new:
            plan.on_sent[META_FAIL_SENT] = "1"
            plan.on_sent[META_FAIL_CAUSES] = json.dumps(sorted(told | set(causes)))
    elif fail_sent:
        plan.add("recovered", "cycle 已恢复", [f"{when} 的一轮 cycle 已正常完成。"])
        plan.on_sent[META_FAIL_SENT] = "0"
        plan.on_sent[META_FAIL_CAUSES] = "[]"


def _plan_warnings(
    plan: _Plan, store: Store, warnings: Sequence[str], said: Callable[[str], str]
) -> None:
    """What the director must act on (not a failure): each once while it lasts."""
    warned = _ids(store.get_meta(META_WARNINGS))
    current = {cause(w): w for w in warnings}
    fresh_warnings = [w for c, w in current.items() if c not in warned]
    if fresh_warnings:
        plan.add(
            "warning",
            "需要导演处理",
            ["需要导演处理：", *_capped([f"  {said(w)}" for w in fresh_warnings], "条")],
        )
    plan.on_sent[META_WARNINGS] = json.dumps(sorted(current))  # a later return is new


def _plan_new_drafts(
    plan: _Plan,
    store: Store,
    pending: Sequence[Draft],
    drafts_page: str,
    game_file: str | None,
) -> None:
    """Pending drafts not told of yet, with where to approve them."""
    told = _ids(store.get_meta(META_DRAFTS)) & {d.id for d in pending}
    new = [d for d in pending if d.id not in told]
    if new:
        lines = [f"有 {len(new)} 份新草稿等待批准（没有批准不会发出）："]
        lines += _capped(
            [f"  {_draft_label(_row_of(d))}" for d in new],
            "份",
        )
        if drafts_page:
            lines.append(f"去批准：{drafts_page}")
        else:
            where = (
                f"用 bansha drafts {game_file} 查看"
                if game_file
                else "在游戏文件所在的文件夹里用 bansha drafts 查看"
            )
            lines.append(f"{where}，或在控制台（bansha serve）批准")
        plan.add("drafts", "草稿待批准", lines)
    plan.on_sent[META_DRAFTS] = json.dumps(sorted(told | {d.id for d in new}))


def _plan_urgent_drafts(
    plan: _Plan,
    store: Store,
    game: Game,
    pending: Sequence[Draft],
    now: datetime,
    drafts_page: str,
) -> None:
    """Reminders and results near their deadline, still not approved: each once."""
    from pipeline.drafts.view import draft_urgency

    urgent_told = _ids(store.get_meta(META_URGENT)) & {d.id for d in pending}
    near = []
    for d in pending:
        if d.id in urgent_told or d.kind not in ("reminder", "result", "first_result"):
            continue
        u = draft_urgency(game, d, now)
        if u.deadline is not None and u.deadline - now <= NEAR_DEADLINE:
            near.append((d, u))
    if near:
        lines = ["快到期、还没有批准："]
        lines += [f"  {_draft_label(_row_of(d))}：{u.note}" for d, u in near]
        if drafts_page:
            lines.append(f"去批准：{drafts_page}")
        plan.add("urgent", "快到期", lines)
    plan.on_sent[META_URGENT] = json.dumps(sorted(urgent_told | {d.id for d, _ in near}))


def _plan_flags(plan: _Plan, store: Store, day_page: str) -> None:
    """Conduct flags not decided and not told of yet, with the first one's day page."""
    decided = {r["flag_id"] for r in store.query("SELECT flag_id FROM flag_decisions")}
    open_flags = [
        r
        for r in store.query("SELECT id, day, player, reason FROM flags ORDER BY day, id")
        if r["id"] not in decided
    ]
    open_ids = {r["id"] for r in open_flags}
    flags_told = _ids(store.get_meta(META_FLAGS)) & open_ids
    fresh = [r for r in open_flags if r["id"] not in flags_told]
    if fresh:
        lines = [f"新的违规标记 {len(fresh)} 条（确认后才变成牌）："]
        lines += _capped(
            [f"  第{r['day']}天 {r['player']}：{r['reason']}" for r in fresh],
            "条",
        )
        if day_page and fresh[0]["day"] is not None:
            lines.append(f"去处理：{day_page}{fresh[0]['day']}")
        plan.add("flags", "新的违规标记", lines)
    plan.on_sent[META_FLAGS] = json.dumps(sorted(flags_told | {r["id"] for r in fresh}))


def _row_of(d: Any) -> dict[str, Any]:
    return {"id": d.id, "day": d.day, "kind": d.kind}


# --------------------------------------------------------------------------- sending


@contextmanager
def _apprise_quiet() -> Iterator[None]:
    """Apprise's own log lines can quote a URL (and so a bot token): silenced while sending;
    our own lines say which service failed, never its address. (One cycle sends at a time: the
    logger switch is not meant for threads.)"""
    logger = logging.getLogger("apprise")
    was = logger.disabled
    logger.disabled = True
    try:
        with warnings.catch_warnings():
            # Apprise imports modules the running Python deprecates (imghdr on 3.11–3.12):
            # a library's deprecation is not the director's business and never stops a send
            warnings.simplefilter("ignore", DeprecationWarning)
            yield
    finally:
        logger.disabled = was


def send_notice(urls: Sequence[str], notice: Notice) -> bool:
    """Send to every URL; True when at least one service accepted it. Never raises."""
    try:
        import apprise
    except ImportError:
        log.warning("通知未能发出：没有安装 apprise（pip install apprise）")
        return False
    delivered = False
    for i, url in enumerate(urls, 1):
        service = "通知服务"
        try:
            with _apprise_quiet():
                plugin = apprise.Apprise.instantiate(url)
                if not plugin:
                    log.warning("通知地址无法识别（第 %d 个地址），已跳过；请检查它的写法", i)
                    continue
                service = str(getattr(plugin, "service_name", service))
                target = apprise.Apprise()
                target.add(plugin)
                ok = bool(
                    target.notify(
                        body=notice.body,
                        title=notice.title,
                        notify_type=apprise.NotifyType(notice.level),
                    )
                )
        except Exception as exc:  # a notification never fails the cycle
            log.warning("通知未能发出：%s（第 %d 个地址）出错：%s", service, i, type(exc).__name__)
            continue
        if ok:
            delivered = True
        else:
            log.warning(
                "通知未能发出：%s（第 %d 个地址）没有接受；下一轮 cycle 后会再试", service, i
            )
    return delivered


def notify_after_cycle(
    game: Game,
    store: Store,
    report: Any,
    now: datetime,
    *,
    error: str | None = None,
    env: Mapping[str, str] | None = None,
    send: Callable[[Sequence[str], Notice], bool] | None = None,
    game_path: Path | str | None = None,
) -> Notice | None:
    """Record the cycle and send what it has to say (at most one notification). Never raises.

    ``report``: the cycle's report, or None when the cycle stopped without one (``error`` then
    says why, e.g. the store stayed locked). ``game_path``: the game file, named in the
    notice's commands (``bansha drafts /path/game.toml``). Returns the notification that was
    delivered (or None: nothing to say, no URL configured, or not delivered — then the next
    cycle tries again).
    """
    env = os.environ if env is None else env
    try:
        record = record_cycle(store, report, now, error=error)
        urls = notify_urls(game, env)
        if not urls:
            return None
        warned = getattr(report, "warnings", None) if report is not None else None
        plan = _plan(
            game,
            store,
            record,
            now,
            env=env,
            urls=urls,
            errors=_errors_of(report, error),
            warnings=[str(w) for w in warned] if warned is not None else None,
            game_file=game_file_arg(game_path),
        )
        if not plan.kinds:
            return None
        notice = Notice(
            title=f"bansha｜{game.game.title}：{'、'.join(plan.heads)}",
            body="\n".join(plan.lines),
            kinds=tuple(plan.kinds),
        )
        if not (send or send_notice)(urls, notice):
            return None
        with store.atomic():
            for key, value in plan.on_sent.items():
                store.set_meta(key, value)
        return notice
    except Exception as exc:  # a notification never fails the cycle
        log.warning("通知步骤出错（%s），本轮不发通知：%s", type(exc).__name__, _safe(exc))
        return None


def _safe(exc: Exception) -> str:
    """An exception's text only when it is one of ours (Chinese, no secret); else its type."""
    from pipeline.store import StoreError

    return str(exc) if isinstance(exc, StoreError) else type(exc).__name__
