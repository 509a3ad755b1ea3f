"""A game whose days have no tids (``[forum] fid`` set: bansha opens its threads), and a small
stand-in for the forum side of ``Poster`` (new_thread, find_thread, close_thread,
thread_closed, reply, find_post) that the tests can make crash or lose an answer."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from parsers.reply import ReplyOutcome, draft_fingerprint
from pipeline.derive import derive
from pipeline.discuz.poster import PostError, Sent, UncertainSend, WaitingThreads
from pipeline.drafts import make_drafts
from pipeline.drafts.publish import NoModeratorRights, PublishResult, publish_approved
from pipeline.game.gamefile import Game, load_game
from pipeline.game.threads import game_for_store
from pipeline.store import Store

ROOT = Path(__file__).resolve().parents[2]
M135 = ROOT / "config" / "games" / "m135.toml"
FID = 42


class Crash(BaseException):
    """The process dies here (not an exception bansha catches)."""


def write_game(path: Path, *, keep: str = "", threads: str = "", fid: int | None = FID) -> Path:
    """The m135 example without the days' tids (``keep``: lines to put back into day 1)."""
    text = M135.read_text("utf-8")
    text = re.sub(r"(?m)^(discussion|vote|progress) = \d+.*\n", "", text)
    if fid is not None:
        text = text.replace("[director]", f"fid = {fid}\n\n[director]", 1)
    if keep:
        text = text.replace(
            "closes = 2026-12-01T22:00:00+08:00   # 关门时间（投票截止）",
            "closes = 2026-12-01T22:00:00+08:00\n" + keep,
            1,
        )
    if threads:
        text += "\n[threads]\n" + threads + "\n"
    path.write_text(text, "utf-8")
    return path


def game(path: Path, store: Store) -> Game:
    return game_for_store(load_game(path, env={}, check_login=False), store)


def draft(path: Path, store: Store, now: datetime) -> list[int]:
    g = game(path, store)
    return make_drafts(g, store, derive(g, store, as_of=now), now=now)


def publish(path: Path, store: Store, poster: Any, now: datetime) -> list[PublishResult]:
    return publish_approved(store, game(path, store), poster, now=now)


@dataclass
class Thread:
    tid: int
    fid: int
    subject: str
    author: str
    closed: bool = False
    posts: list[tuple[int, str]] = field(default_factory=list)  # (pid, body)


@dataclass
class Ref:
    tid: int
    subject: str
    author: str
    authorid: int | None
    closed: bool
    created_at: datetime | None = None  # the stand-in's listing shows no start times


@dataclass
class Made:
    tid: int
    url: str
    moderated: bool = False


@dataclass
class FakeForum:
    """The forum side the publisher talks to. ``fault``: "crash_before" (the process dies
    after the intent, before the forum saw anything), "crash_after" (dies after the forum made
    the thread), "lost_answer" (the forum made it; the answer never came back); once."""

    director: str = "[M135]导演"
    threads: dict[int, Thread] = field(default_factory=dict)
    next_tid: int = 40000
    next_pid: int = 900000
    fault: str | None = None
    moderator: bool = True
    calls: list[str] = field(default_factory=list)

    def _fault(self, when: str) -> None:
        if self.fault == when:
            self.fault = None
            if when.startswith("crash"):
                raise Crash(when)
            raise UncertainSend("网络中断，论坛的回答没有收到")

    # -- the Poster methods bansha calls
    def session(self, tid: int) -> None:
        return None

    def check_encodable(self, body: str) -> None:
        return None

    def post_url(self, tid: int, pid: int) -> str:
        return f"forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={pid}"

    def thread_url(self, tid: int, page: int = 1, **_: Any) -> str:
        return f"forum.php?mod=viewthread&tid={tid}"

    def new_thread(
        self,
        fid: int,
        subject: str,
        body: str,
        *,
        guard: Callable[[], None] | None = None,
        hidden_replies: bool | None = None,
    ) -> Made:
        self.calls.append(f"new_thread {subject}" + (" (仅作者可见)" if hidden_replies else ""))
        if guard is not None:
            guard()
        self._fault("crash_before")
        self.next_tid += 1
        self.next_pid += 1
        t = Thread(self.next_tid, fid, subject, self.director, posts=[(self.next_pid, body)])
        self.threads[t.tid] = t
        self._fault("crash_after")
        self._fault("lost_answer")
        return Made(t.tid, self.thread_url(t.tid))

    def find_thread(self, fid: int, subject: str) -> Ref | None:
        self.calls.append(f"find_thread {subject}")
        mine = [
            t
            for t in self.threads.values()
            if t.fid == fid and t.subject == subject and t.author == self.director
        ]
        if not mine:
            return None
        t = max(mine, key=lambda t: t.tid)
        return Ref(t.tid, t.subject, t.author, 100231, t.closed)

    def waiting_threads(self, fid: int, *, read_list: bool = False) -> WaitingThreads:
        """A section that shows every new thread at once: nothing waits for a moderator."""
        self.calls.append("waiting_threads")
        return WaitingThreads(0, (), frozenset(t.tid for t in self.threads.values()))

    def close_thread(self, fid: int, tid: int, *, guard: Callable[[], None] | None = None) -> str:
        self.calls.append(f"close_thread {tid}")
        if guard is not None:
            guard()
        if not self.moderator:
            raise NoModeratorRights(
                f"导演账号「{self.director}」没有版块 {fid} 的管理权限，无法关闭主题 {tid}"
                "（论坛提示：抱歉，您没有权限使用管理功能）"
            )
        t = self.threads.get(tid)
        if t is None:
            raise PostError(f"没有帖子 {tid}")
        if t.closed:
            return "already_closed"
        self._fault("crash_before")
        t.closed = True
        self._fault("crash_after")
        self._fault("lost_answer")
        return "closed"

    def thread_closed(self, tid: int) -> bool:
        self.calls.append(f"thread_closed {tid}")
        return self.threads[tid].closed

    def reply(self, tid: int, body: str, *, guard: Callable[[], None] | None = None) -> Sent:
        self.calls.append(f"reply {tid}")
        if guard is not None:
            guard()
        t = self.threads[tid]
        if t.closed:
            raise PostError("该帖已关闭，不能回复")
        self.next_pid += 1
        t.posts.append((self.next_pid, body))
        return Sent(ReplyOutcome.POSTED, tid, self.next_pid, "回复发布成功")

    def find_post(self, tid: int, fingerprint: str, **_: Any) -> Any:
        for pid, body in reversed(self.threads[tid].posts):
            if draft_fingerprint(body) == fingerprint:
                return type("P", (), {"pid": pid})()
        return None

    def open_by_hand(self, fid: int, subject: str, *, author: str | None = None) -> int:
        self.next_tid += 1
        self.threads[self.next_tid] = Thread(self.next_tid, fid, subject, author or self.director)
        return self.next_tid
