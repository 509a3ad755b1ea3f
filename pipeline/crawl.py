"""Incremental crawl of a game's threads into the store.

The first crawl of a thread fetches every page. Later crawls start from the last page stored
and go on while the forum reports more pages, so a crawl with nothing new costs one request per
thread. ``full=True`` re-reads every page (what the cycle does at a day's close, to catch edits
and deletions on earlier pages). Each page is written in one transaction.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo

from parsers.mobile import parse_mobile_check, parse_mobile_viewthread
from parsers.records import PageError, PageErrorKind, ThreadPage
from parsers.viewthread import parse_viewthread
from pipeline.client import DiscuzClient, Fetched, ForumUnavailable, describe_error
from pipeline.store import Store

log = logging.getLogger(__name__)

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
    html_ppp: int | None = 10  # the forum's posts-per-page setting (Discuz default 10)


@dataclass
class ThreadResult:
    tid: int
    pages_fetched: int = 0
    new_posts: int = 0
    changed_posts: int = 0
    vanished_posts: int = 0
    error: str | None = None


@dataclass
class CrawlReport:
    run_id: str
    threads: list[ThreadResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(t.error is None for t in self.threads)

    @property
    def errors(self) -> list[str]:
        return [f"帖子 {t.tid}：{t.error}" for t in self.threads if t.error]


def choose_source(client: DiscuzClient, store: Store, forum: ForumConfig) -> str:
    """Which source to read first.

    ``auto`` reads the desktop pages: the mobile API v4 drops the ``本帖最后由 … 编辑`` notes and
    ``[size]`` (DISCUZ.md §3.3), which are evidence for edited votes and enlarged fonts. The
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
    url = client.url("api/mobile/index.php", {"version": 4, "module": "check"})
    try:
        _, info = client.fetch(url, lambda f: parse_mobile_check(f.body))
    except ForumUnavailable as exc:
        log.info("移动端接口这次没有应答（%s），下次再试", describe_error(exc))
        return False  # no answer is not a "no": do not remember it
    except PageError as exc:
        log.info("移动端接口不可用（%s）", describe_error(exc))
        info = None
    store.set_meta("mobile_api", "yes" if info else "no")
    return bool(info)


#: desktop-page refusals after which ``auto`` tries the mobile API for the thread
FALLBACK_KINDS = {PageErrorKind.ANTI_CRAWL, PageErrorKind.MALFORMED}


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
        if source == SOURCE_MOBILE:
            return parse_mobile_viewthread(fetched.body, tid=tid, tz=self.forum.tz, page=page)
        encoding = None if self.forum.encoding == "auto" else self.forum.encoding
        return parse_viewthread(
            fetched.body,
            tid=tid,
            tz=self.forum.tz,
            now=fetched.server_time,
            encoding=encoding or fetched.charset,
            base_url=self.client.base_url,
        )

    def fetch_page(self, source: str, tid: int, page: int) -> tuple[Fetched, ThreadPage]:
        url = self.page_url(source, tid, page)

        def keep_failed(resp: Fetched | None, exc: BaseException) -> None:
            # a response that was not a page is evidence: keep it, and log the retry
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
                )
            self.store.log_crawl(
                run_id=self.run_id,
                at=_now_iso(),
                tid=tid,
                page=page,
                url=url,
                outcome="retry",
                detail=describe_error(exc),
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
        ppp = self.forum.mobile_ppp if source == SOURCE_MOBILE else self.forum.html_ppp
        start = 1
        if not full and state.get("source") == source and state.get("last_page"):
            start = int(state["last_page"])
        page = start
        total = state.get("total_pages") or start
        while True:
            fetched, parsed = self.fetch_page(source, tid, page)
            ppp = parsed.ppp or ppp or _infer_ppp(parsed)
            write = self.store.save_page(
                parsed,
                source=source,
                url=fetched.url,
                status=fetched.status,
                headers=fetched.headers,
                body=fetched.body,
                fetched_at=fetched.fetched_at,
                ppp=ppp,
            )
            result.pages_fetched += 1
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
            if self.progress:
                self.progress(tid, parsed.page, total)
            # the server clamps a page past the end to the last page: stop on the served page
            if parsed.page >= total or parsed.page < page:
                break
            page = parsed.page + 1
        return result

    def crawl(self, targets: Sequence[CrawlTarget], *, full: bool = False) -> CrawlReport:
        report = CrawlReport(self.run_id)
        source = choose_source(self.client, self.store, self.forum)
        down: str | None = None
        for target in targets:
            if down is not None:
                # the forum did not answer at all: do not hammer it thread after thread
                report.threads.append(ThreadResult(target.tid, error=f"未抓取（{down}）"))
                continue
            try:
                try:
                    result = self.crawl_thread(target, source, full=full)
                except PageError as exc:
                    if not (
                        self.forum.source == "auto"
                        and exc.kind in FALLBACK_KINDS
                        and mobile_api_works(self.client, self.store)
                    ):
                        raise
                    log.warning(
                        "帖子 %s 的网页版无法读取（%s），改用移动端接口", target.tid, exc.message_zh
                    )
                    result = self.crawl_thread(target, SOURCE_MOBILE, full=full)
                report.threads.append(result)
            except (PageError, ForumUnavailable) as exc:
                msg = exc.message_zh if isinstance(exc, PageError) else str(exc)
                if isinstance(exc, ForumUnavailable):
                    down = "论坛无法访问"
                elif exc.kind in (PageErrorKind.RATE_LIMITED, PageErrorKind.ANTI_CRAWL):
                    down = "论坛限流或防采集，本轮停止，下一轮再来"
                self.store.log_crawl(
                    run_id=self.run_id,
                    at=_now_iso(),
                    tid=target.tid,
                    outcome="error",
                    detail=msg,
                )
                report.threads.append(ThreadResult(target.tid, error=msg))
                log.error("抓取帖子 %s 失败：%s", target.tid, msg)
        return report


def _infer_ppp(parsed: ThreadPage) -> int | None:
    """Posts per page of a desktop page: a full page that is not the last tells it."""
    if parsed.page < parsed.total_pages and parsed.posts:
        return len([p for p in parsed.posts if p.floor is not None]) or None
    return None


def _now_iso() -> str:
    return datetime.now(UTC).isoformat()
