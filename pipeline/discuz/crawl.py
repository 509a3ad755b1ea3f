"""Incremental crawl of a game's threads into the store.

The first crawl of a thread fetches every page. Later crawls start from the last page stored
and go on while the forum reports more pages, so a crawl with nothing new costs one request per
thread. ``full=True`` re-reads every page (what the cycle does at a day's close, to catch edits
and deletions on earlier pages). Each page is written in one transaction; its raw body is kept
only when the page's posts changed (see :meth:`pipeline.store.Store.save_page`), and
:func:`replay_kept_pages` re-derives the posts from the kept bodies alone.

Posts per page are learned from the pages (a full page that is not the last one tells it) and
remembered per thread; the game file's ``[forum] ppp`` is never taken for what the forum serves.

The crawl stops at the first sign that the forum is not usable (no answer, random bytes, a
redirect loop, flood control, anti-crawl, closed, server errors) and says why in
:attr:`CrawlReport.down`, so a cycle does not ask a dead forum again for every thread and day.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from parsers.pagecheck import UnusablePage
from parsers.records import PageError, PageErrorKind, PostState, ThreadPage
from parsers.viewthread import parse_viewthread
from pipeline.discuz.client import DiscuzClient, Fetched, ForumUnavailable, describe_error
from pipeline.store import Store

log = logging.getLogger(__name__)

#: ``-v`` says how far a crawl has got at most this often (seconds on the client's clock)
PROGRESS_EVERY_S = 5.0

SOURCE_HTML = "html"
SOURCE_MOBILE = "mobile-api"
#: posts per page asked of the mobile API (the desktop page's ppp is the forum's setting)
MOBILE_PPP = 50


@dataclass(frozen=True, slots=True)
class CrawlTarget:
    tid: int
    day: int | None = None
    role: str | None = None


@dataclass(frozen=True, slots=True)
class ForumConfig:
    base_url: str
    tz: tzinfo
    encoding: str = "auto"  # auto | utf-8 | gbk
    source: str = "auto"  # auto | mobile-api | html
    mobile_ppp: int = MOBILE_PPP
    #: the game file's ``[forum] ppp``: not used for reading — the forum's posts per page
    #: differ per account and are learned from the pages themselves
    html_ppp: int | None = 10


@dataclass
class ThreadResult:
    tid: int
    pages_fetched: int = 0
    new_posts: int = 0
    changed_posts: int = 0
    vanished_posts: int = 0
    error: str | None = None
    skipped: bool = False  # not asked at all: the forum was found not usable before it
    #: replies the pages read showed 此帖仅作者可见 (回帖仅作者可见, and this session is neither
    #: the thread's author nor a moderator: a guest, or another account's cookie)
    author_only: int = 0


@dataclass
class CrawlReport:
    run_id: str
    threads: list[ThreadResult] = field(default_factory=list)
    #: why the forum did not answer usably (Chinese, said once), None when it did
    down: str | None = None
    #: requests this crawl made, and the seconds it slept between them (``min_interval_s``)
    requests: int = 0
    paced_s: float = 0.0

    @property
    def ok(self) -> bool:
        return all(t.error is None for t in self.threads)

    @property
    def errors(self) -> list[str]:
        """One line per thread that failed; the threads skipped after the forum was found not
        usable share one line."""
        out = [f"帖子 {t.tid}：{t.error}" for t in self.threads if t.error and not t.skipped]
        skipped: dict[str, list[int]] = {}
        for t in self.threads:
            if t.error and t.skipped:
                skipped.setdefault(t.error, []).append(t.tid)
        for error, tids in skipped.items():
            out.append(f"帖子 {'、'.join(map(str, tids))}：{error}")
        return out

    @property
    def warnings(self) -> list[str]:
        """One line per thread read whose replies this session may not see (回帖仅作者可见)."""
        return [
            f"帖子 {t.tid}：{author_only_warning(t.author_only)}"
            for t in self.threads
            if t.author_only
        ]


def author_only_warning(n: int) -> str:
    """What the director is told of ``n`` replies shown as 此帖仅作者可见, in Chinese."""
    return (
        f"有 {n} 帖回帖显示“此帖仅作者可见”，这次抓取看不到内容（没有登录，或 cookie 不是开帖的"
        "导演账号或版主）：这些票无法计入。请把开帖的导演账号的 cookie 放进游戏文件 [forum] "
        "cookie_env 指定的环境变量，并在 [forum] 写 requires_login = true，然后重新抓取"
    )


def choose_source(client: DiscuzClient, store: Store, forum: ForumConfig) -> str:
    """Which source to read first.

    ``auto`` reads the desktop pages: the mobile API v4 drops the ``本帖最后由 … 编辑`` notes and
    ``[size]`` (docs/discuz.md §3.3), which are evidence for edited votes and enlarged fonts. The
    crawler falls back to the mobile API for a thread whose desktop pages the forum refuses
    (anti-crawl pages, pages it cannot read); see :meth:`Crawler.crawl`.
    """
    if forum.source == "mobile-api":
        return SOURCE_MOBILE
    return SOURCE_HTML


def mobile_api_works(client: DiscuzClient, store: Store) -> bool:
    """Probe ``module=check`` once; the answer is remembered in the store."""
    known = store.get_meta("mobile_api")
    if known in ("yes", "no"):
        return known == "yes"
    from parsers.mobile import parse_mobile_check

    url = client.url("api/mobile/index.php", {"version": 4, "module": "check"})
    try:
        _, info = client.fetch(url, lambda f: parse_mobile_check(f.body))
    except (ForumUnavailable, UnusablePage) as exc:
        log.info("移动端接口这次没有应答（%s），下次再试", describe_error(exc))
        return False  # no answer (or no forum page) is not a "no": do not remember it
    except PageError as exc:
        log.info("移动端接口不可用（%s）", describe_error(exc))
        info = None
    store.set_meta("mobile_api", "yes" if info else "no")
    return bool(info)


#: desktop-page refusals after which ``auto`` tries the mobile API for the thread
FALLBACK_KINDS = {PageErrorKind.ANTI_CRAWL, PageErrorKind.MALFORMED}

#: page errors that say the whole forum is not usable now (not one thread): the crawl stops
DOWN_KINDS = {
    PageErrorKind.RATE_LIMITED: "论坛限流或防采集",
    PageErrorKind.ANTI_CRAWL: "论坛限流或防采集",
    PageErrorKind.CLOSED: "论坛关闭或维护中",
    PageErrorKind.SERVER_ERROR: "论坛服务器出错",
}


def forum_down(exc: BaseException) -> tuple[str, str] | None:
    """(the reason, a short label) when ``exc`` says the forum is not usable; else None."""
    if isinstance(exc, ForumUnavailable):
        return exc.reason, "论坛无法访问"
    if isinstance(exc, UnusablePage):
        return exc.message_zh, "论坛没有给出可用的页面"
    if isinstance(exc, PageError) and exc.kind in DOWN_KINDS:
        return exc.message_zh, DOWN_KINDS[exc.kind]
    return None


class Crawler:
    def __init__(
        self,
        client: DiscuzClient,
        store: Store,
        forum: ForumConfig,
        *,
        progress: Callable[[int, int, int], None] | None = None,
    ) -> None:
        self.client = client
        self.store = store
        self.forum = forum
        self.progress = progress
        self.run_id = uuid.uuid4().hex[:12]
        self._said_at: float | None = None  # the last progress line (the client's clock)

    def _say_progress(self, tid: int, page: int, total: int) -> None:
        """``-v``: ``帖子 2001：已读第 3/12 页…`` every :data:`PROGRESS_EVERY_S` seconds while
        a crawl goes on, naming the pacing that makes it take that long."""
        now = self.client.monotonic()
        if self._said_at is not None and now - self._said_at < PROGRESS_EVERY_S:
            return
        self._said_at = now
        pacing = self.client.min_interval_s
        why = f"（每两次请求间隔 {pacing:g} 秒，[forum] min_interval_s）" if pacing > 0 else ""
        log.info("帖子 %s：已读第 %d/%d 页…%s", tid, page, total, why)

    # -- one page -----------------------------------------------------------------------
    def page_url(self, source: str, tid: int, page: int) -> str:
        if source == SOURCE_MOBILE:
            return self.client.url(
                "api/mobile/index.php",
                {
                    "version": 4,
                    "module": "viewthread",
                    "tid": tid,
                    "page": page,
                    "ppp": self.forum.mobile_ppp,
                    "ordertype": 2,
                },
            )
        return self.client.url(
            "forum.php", {"mod": "viewthread", "tid": tid, "page": page, "ordertype": 2}
        )

    def parse(self, source: str, tid: int, page: int, fetched: Fetched) -> ThreadPage:
        return parse_page(self.forum, self.client.base_url, source, tid, page, fetched)

    def fetch_page(self, source: str, tid: int, page: int) -> tuple[Fetched, ThreadPage]:
        url = self.page_url(source, tid, page)

        def keep_failed(resp: Fetched | None, exc: BaseException) -> None:
            # a response that was not a page is evidence: keep it (scrubbed), and log the retry
            if resp is not None:
                self.store.record_response(
                    tid=tid,
                    page=page,
                    source=source,
                    url=url,
                    status=resp.status,
                    headers=resp.headers,
                    body=resp.body,
                    fetched_at=resp.fetched_at,
                    outcome=getattr(getattr(exc, "kind", None), "value", "error"),
                    secrets=self.client.secrets(),
                )
            self.store.log_crawl(
                run_id=self.run_id,
                at=_now_iso(),
                tid=tid,
                page=page,
                url=url,
                outcome="retry",
                detail=self.client.scrub(describe_error(exc)),
            )

        return self.client.fetch(
            url, lambda f: self.parse(source, tid, page, f), on_failed_attempt=keep_failed
        )

    # -- one thread ---------------------------------------------------------------------
    def crawl_thread(self, target: CrawlTarget, source: str, *, full: bool = False) -> ThreadResult:
        tid = target.tid
        result = ThreadResult(tid)
        self.store.register_thread(tid, day=target.day, role=target.role)
        state = self.store.thread(tid) or {}
        # posts per page as the pages of this source told it before (never the game file's)
        ppp: int | None = state.get("ppp") if state.get("source") == source else None
        start = 1
        if not full and state.get("source") == source and state.get("last_page"):
            start = int(state["last_page"])
        page = start
        total = state.get("total_pages") or start
        while True:
            fetched, parsed = self.fetch_page(source, tid, page)
            learned = parsed.ppp or _infer_ppp(parsed)
            if learned:
                if ppp and learned != ppp:
                    log.info("帖子 %s 的每页帖数由 %s 变为 %s", tid, ppp, learned)
                ppp = learned
            write = self.store.save_page(
                parsed,
                source=source,
                url=fetched.url,
                status=fetched.status,
                headers=fetched.headers,
                body=fetched.body,
                fetched_at=fetched.fetched_at,
                ppp=ppp,
                secrets=self.client.secrets(),
            )
            result.pages_fetched += 1
            hidden = sum(1 for p in parsed.posts if p.state is PostState.AUTHOR_ONLY)
            result.author_only += hidden
            result.new_posts += write.new_posts
            result.changed_posts += write.changed_posts
            result.vanished_posts += write.vanished_posts
            self.store.log_crawl(
                run_id=self.run_id,
                at=_now_iso(),
                tid=tid,
                page=parsed.page,
                url=fetched.url,
                outcome="ok",
                attempts=fetched.attempts,
                new_posts=write.new_posts,
                changed_posts=write.changed_posts,
                vanished_posts=write.vanished_posts,
            )
            total = parsed.total_pages
            self._say_progress(tid, parsed.page, total)
            if self.progress:
                self.progress(tid, parsed.page, total)
            # the server clamps a page past the end to the last page: stop on the served page
            if parsed.page >= total or parsed.page < page:
                break
            page = parsed.page + 1
        if result.author_only:
            log.warning("帖子 %s：%s", tid, author_only_warning(result.author_only))
        return result

    def crawl(self, targets: Sequence[CrawlTarget], *, full: bool = False) -> CrawlReport:
        report = CrawlReport(self.run_id)
        requests, paced = self.client.stats.requests, self.client.stats.paced_s
        self._said_at = self.client.monotonic()  # the first line comes after a while
        try:
            self._crawl(targets, full, report)
        finally:
            report.requests = self.client.stats.requests - requests
            report.paced_s = self.client.stats.paced_s - paced
        return report

    def _crawl(self, targets: Sequence[CrawlTarget], full: bool, report: CrawlReport) -> None:
        source = choose_source(self.client, self.store, self.forum)
        skip: str | None = None
        for target in targets:
            if skip is not None:
                # the forum is not usable: do not hammer it thread after thread
                report.threads.append(ThreadResult(target.tid, error=skip, skipped=True))
                continue
            try:
                try:
                    result = self.crawl_thread(target, source, full=full)
                except PageError as exc:
                    if not (
                        self.forum.source == "auto"
                        and exc.kind in FALLBACK_KINDS
                        and not isinstance(exc, UnusablePage)
                        and mobile_api_works(self.client, self.store)
                    ):
                        raise
                    log.warning(
                        "帖子 %s 的网页版无法读取（%s），改用移动端接口", target.tid, exc.message_zh
                    )
                    result = self.crawl_thread(target, SOURCE_MOBILE, full=full)
                report.threads.append(result)
            except (PageError, ForumUnavailable) as exc:
                msg = self.client.scrub(exc.message_zh if isinstance(exc, PageError) else str(exc))
                down = forum_down(exc)
                if down is not None:
                    reason, label = down
                    report.down = self.client.scrub(reason)
                    skip = f"未抓取（{label}，本轮停止，下一轮再来）"
                self.store.log_crawl(
                    run_id=self.run_id,
                    at=_now_iso(),
                    tid=target.tid,
                    outcome="error",
                    detail=msg,
                )
                report.threads.append(ThreadResult(target.tid, error=msg))
                # said once by the command that crawled (cycle, crawl): here only for -v
                log.info("抓取帖子 %s 失败：%s", target.tid, msg)


def parse_page(
    forum: ForumConfig, base_url: str, source: str, tid: int, page: int, fetched: Fetched
) -> ThreadPage:
    """One fetched page of ``source`` as the crawler reads it (also from a stored body)."""
    if source == SOURCE_MOBILE:  # the mobile API's reader loads with its first answer
        from parsers.mobile import parse_mobile_viewthread

        return parse_mobile_viewthread(fetched.body, tid=tid, tz=forum.tz, page=page)
    encoding = None if forum.encoding == "auto" else forum.encoding
    return parse_viewthread(
        fetched.body,
        tid=tid,
        tz=forum.tz,
        now=fetched.server_time,
        encoding=encoding or fetched.charset,
        base_url=base_url,
    )


def replay_kept_pages(source: Store, target: Store, forum: ForumConfig) -> int:
    """Re-derive a store's posts from its kept bodies alone: every fetch whose body was kept,
    in the order it was fetched, parsed again and saved into ``target`` (an empty store) as
    the crawler saved it. ``target`` then holds the same posts and revisions as ``source`` —
    the bodies are the evidence, the rest is derived. Returns the pages replayed.

    A fetch whose body was not kept showed the same posts as the last kept body of its page,
    so leaving it out changes nothing. Responses that were not pages are not replayed.
    """
    for t in source.db.query("SELECT tid, day, role FROM threads ORDER BY tid"):
        target.register_thread(t["tid"], day=t["day"], role=t["role"])
    ppp: dict[tuple[int, str], int | None] = {}
    n = 0
    rows = list(
        source.db.query(
            "SELECT id, tid, page, source, url, status, headers, fetched_at FROM pages "
            "WHERE outcome = 'ok' AND body_kept = 1 AND tid IS NOT NULL ORDER BY id"
        )
    )
    for row in rows:
        body = source.page_body(row["id"])
        if body is None:
            continue
        headers = json.loads(row["headers"] or "{}")
        fetched = Fetched(
            url=row["url"],
            status=row["status"],
            headers=headers,
            body=body,
            fetched_at=datetime.fromisoformat(row["fetched_at"]),
            attempts=1,
        )
        parsed = parse_page(
            forum, forum.base_url, row["source"], row["tid"], row["page"] or 1, fetched
        )
        key = (row["tid"], row["source"])
        learned = parsed.ppp or _infer_ppp(parsed)
        if learned:
            ppp[key] = learned
        target.save_page(
            parsed,
            source=row["source"],
            url=row["url"],
            status=row["status"],
            headers=headers,
            body=body,
            fetched_at=fetched.fetched_at,
            ppp=ppp.get(key),
        )
        n += 1
    return n


def _infer_ppp(parsed: ThreadPage) -> int | None:
    """Posts per page of a desktop page: a page N that is not the last shows the floors
    (N-1)·ppp+1 … N·ppp (deleted floors as placeholders; renumbered floors stay consecutive), so
    the run of consecutive floors that ends exactly at N × its length tells ppp. Sticky and hot
    replies from other pages sit outside that run (and only page 1 has them). The last page N > 1
    starts at floor (N-1)·ppp+1. None when the page does not tell."""
    floors = sorted({p.floor for p in parsed.posts if p.floor is not None and p.floor > 0})
    if not floors:
        return None
    if parsed.page >= parsed.total_pages:
        if parsed.page < 2 or (floors[0] - 1) % (parsed.page - 1):
            return None
        ppp = (floors[0] - 1) // (parsed.page - 1)
        return ppp if ppp >= len(floors) else None
    found: int | None = None
    start = 0
    for i, floor in enumerate(floors):
        if i and floor != floors[i - 1] + 1:
            start = i
        length = i - start + 1
        if floors[start] == (parsed.page - 1) * length + 1 and floor == parsed.page * length:
            found = length
    return found


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()
