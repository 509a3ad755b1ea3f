"""The crawler against the simulator: incremental, exactly the forum's posts, every fault."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
import pytest

from parsers.records import PostState
from pipeline.discuz.client import DiscuzClient, RetryPolicy
from pipeline.discuz.crawl import Crawler, CrawlTarget, ForumConfig
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import open_store

TZ = ZoneInfo("Asia/Shanghai")
T0 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
USERS = {"导演": 2, "饺子": 3, "包子": 4, "馄饨": 5}
TID = 4


def forum(n_posts: int = 25) -> tuple[ForumSim, SimClock]:
    clock = SimClock(T0 + timedelta(days=1))
    sim = ForumSim(users=USERS, clock=clock, floodctrl_s=0)
    sim.add_thread(TID, "第二天投票帖", "导演", "【第二天投票帖】请投票", T0)
    names = ["饺子", "包子", "馄饨"]
    for i in range(1, n_posts):
        sim.add_post(TID, names[i % 3], f"第{i}条：投票对象：包子", T0 + timedelta(minutes=i))
    return sim, clock


def crawler(sim: ForumSim, store, *, source: str = "html", max_attempts: int = 5) -> Crawler:
    http = httpx.Client(
        transport=sim.transport(), timeout=httpx.Timeout(5.0), follow_redirects=True
    )
    client = DiscuzClient(
        http,
        base_url=sim.base_url,
        min_interval_s=0,
        policy=RetryPolicy(max_attempts=max_attempts, initial_wait_s=0.01, jitter_s=0),
        sleep=lambda s: None,
    )
    return Crawler(client, store, ForumConfig(base_url=sim.base_url, tz=TZ, source=source))


def forum_pids(sim: ForumSim) -> list[int]:
    """The posts the forum shows now (deleted ones are gone from its pages)."""
    now = int(sim.clock().timestamp())
    return sorted(p.pid for p in sim._thread(TID).posts if not p.deleted(now))


def stored_pids(store, *, visible_only: bool = True) -> list[int]:
    return sorted(
        p.pid for p in store.posts(TID) if not visible_only or p.state is PostState.VISIBLE
    )


def viewthread_requests(sim: ForumSim) -> int:
    return sum(
        1
        for r in sim.requests
        if r.query.get("mod") == "viewthread" or r.query.get("module") == "viewthread"
    )


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "game.db")
    yield s
    s.close()


@pytest.mark.parametrize("source", ["html", "mobile-api"])
def test_first_crawl_stores_every_post_once(store, source):
    sim, _ = forum()
    report = crawler(sim, store, source=source).crawl([CrawlTarget(TID, 2, "vote")])
    assert report.ok
    assert stored_pids(store) == forum_pids(sim)
    assert store.counts()["posts"] == 25
    posts = {p.pid: p for p in store.posts(TID)}
    first = posts[min(posts)]
    assert first.floor == 1 and first.author == "导演" and first.posted_at == T0


@pytest.mark.parametrize("source", ["html", "mobile-api"])
def test_nothing_new_costs_one_request_per_thread(store, source):
    sim, _ = forum()
    sim.add_thread(5, "讨论帖", "导演", "讨论", T0)
    targets = [CrawlTarget(TID, 2, "vote"), CrawlTarget(5, 2, "discussion")]
    crawler(sim, store, source=source).crawl(targets)
    before = store.counts()["posts"]
    sim.requests.clear()
    report = crawler(sim, store, source=source).crawl(targets)
    assert viewthread_requests(sim) == 2  # one per thread
    assert len(sim.requests) == 2
    assert store.counts()["posts"] == before
    assert all(t.new_posts == 0 and t.changed_posts == 0 for t in report.threads)


def test_new_reply_new_page_edit_and_delete_are_picked_up(store):
    sim, clock = forum(25)  # 3 pages of 10
    c = crawler(sim, store)
    c.crawl([CrawlTarget(TID)])
    # a new reply on the last page
    pid_new = sim.add_post(TID, "饺子", "第25条 新回复内容", clock() - timedelta(minutes=1))
    r = crawler(sim, store).crawl([CrawlTarget(TID)])
    assert r.threads[0].new_posts == 1 and pid_new in stored_pids(store)
    # six more: a new page appears
    for i in range(6):
        sim.add_post(TID, "包子", f"第{26 + i}条 新一页的内容", clock() - timedelta(seconds=30 - i))
    sim.requests.clear()
    r = crawler(sim, store).crawl([CrawlTarget(TID)])
    assert r.threads[0].new_posts == 6 and r.threads[0].pages_fetched == 2  # pages 3 and 4
    assert stored_pids(store) == forum_pids(sim)
    # an edited post on the last page: a new revision, both versions kept
    last = forum_pids(sim)[-1]
    clock.set(clock() + timedelta(minutes=5))
    sim.edit_post(last, "投票对象：馄饨\n改成馄饨了", clock())
    r = crawler(sim, store).crawl([CrawlTarget(TID)])
    assert r.threads[0].changed_posts == 1
    revs = store.revisions(TID, last)
    assert len(revs) == 2 and "馄饨" in revs[-1]["text"] and "馄饨" not in revs[0]["text"]
    # a deleted post on an earlier page: found by a full re-read, marked, never deleted
    victim = forum_pids(sim)[4]
    sim.delete_post(victim, at=clock())
    r = crawler(sim, store).crawl([CrawlTarget(TID)], full=True)
    assert r.ok and r.threads[0].vanished_posts == 1
    states = {p.pid: p.state for p in store.posts(TID)}
    assert states[victim] is PostState.VANISHED
    assert stored_pids(store) == forum_pids(sim)
    assert store.counts()["posts"] == 32  # nothing removed from the store


FAULTS = ["500", "503", "429", "reset", "truncate", "flood", "slow"]


@pytest.mark.parametrize("kind", FAULTS)
@pytest.mark.parametrize("source", ["html", "mobile-api"])
def test_every_transient_fault_is_survived(store, kind, source):
    sim, _ = forum(25)
    sim.faults.add(kind, count=2, match="viewthread", seconds=60)
    report = crawler(sim, store, source=source).crawl([CrawlTarget(TID)])
    assert report.ok, report.errors
    assert stored_pids(store) == forum_pids(sim)
    pids = [p.pid for p in store.posts(TID)]
    assert len(pids) == len(set(pids))  # none duplicated
    log = list(store.db.query("SELECT outcome, detail FROM crawl_log WHERE outcome = 'retry'"))
    assert len(log) == 2  # the crawl log says what happened


def test_login_required_is_an_error_not_posts_and_the_next_crawl_completes(store):
    sim, _ = forum(25)
    sim.faults.add("login_required", count=1, match="page=2")
    report = crawler(sim, store).crawl([CrawlTarget(TID)])
    assert not report.ok
    assert "需要登录" in report.errors[0]
    assert stored_pids(store) == forum_pids(sim)[:10]  # page 1 kept, nothing from the bad page
    report = crawler(sim, store).crawl([CrawlTarget(TID)])
    assert report.ok and stored_pids(store) == forum_pids(sim)


@pytest.mark.parametrize("source", ["html", "mobile-api"])
def test_a_closed_board_is_reported_and_the_next_crawl_completes(store, source):
    sim, _ = forum(25)
    sim.faults.add("maintenance", count=1, match="viewthread")
    report = crawler(sim, store, source=source).crawl([CrawlTarget(TID)])
    assert not report.ok and "论坛关闭或维护中" in report.errors[0]
    assert store.counts()["posts"] == 0
    assert crawler(sim, store, source=source).crawl([CrawlTarget(TID)]).ok
    assert stored_pids(store) == forum_pids(sim)


def test_a_forum_that_stays_down_gives_a_bounded_chinese_error(store):
    sim, _ = forum(5)
    sim.faults.add("503", count=100)
    report = crawler(sim, store, max_attempts=3).crawl([CrawlTarget(TID)])
    assert not report.ok
    assert "论坛暂时无法访问" in report.errors[0] and "已尝试 3 次" in report.errors[0]
    assert len(sim.requests) == 3
    assert store.counts()["posts"] == 0


def test_a_crawl_killed_between_pages_resumes(store, monkeypatch):
    sim, _ = forum(25)
    c = crawler(sim, store)
    real_save = store.save_page
    calls = {"n": 0}

    def dying_save(parsed, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # the cycle is killed while writing page 2
        return real_save(parsed, **kw)

    monkeypatch.setattr(store, "save_page", dying_save)
    with pytest.raises(KeyboardInterrupt):
        c.crawl([CrawlTarget(TID)])
    assert stored_pids(store) == forum_pids(sim)[:10]  # page 1 whole, page 2 not at all
    monkeypatch.setattr(store, "save_page", real_save)
    report = crawler(sim, store).crawl([CrawlTarget(TID)])
    assert report.ok and stored_pids(store) == forum_pids(sim)


def test_gbk_forum(store):
    clock = SimClock(T0 + timedelta(days=1))
    sim = ForumSim(users=USERS, clock=clock, charset="gbk", floodctrl_s=0)
    sim.add_thread(TID, "投票帖", "导演", "请投票", T0)
    sim.add_post(TID, "饺子", "投票对象：包子\n投票理由：镕（GBK 外的字也不丢）", T0)
    crawler(sim, store).crawl([CrawlTarget(TID)])
    texts = [p.text for p in store.posts(TID)]
    assert any("投票对象：包子" in t for t in texts)


def test_flood_pages_that_persist_stop_the_crawl_for_this_cycle(store):
    sim, _ = forum(5)
    sim.add_thread(5, "讨论帖", "导演", "讨论", T0)
    sim.faults.add("flood", count=100)
    report = crawler(sim, store, max_attempts=2).crawl([CrawlTarget(TID), CrawlTarget(5)])
    assert not report.ok
    assert "未抓取（论坛限流或防采集" in report.errors[1]
    assert len(sim.requests) == 2  # the second thread was not hammered too


def test_an_unanswered_api_probe_is_not_remembered_as_no(store):
    from pipeline.discuz.crawl import mobile_api_works

    sim, _ = forum(5)
    sim.faults.add("reset", count=100)
    c = crawler(sim, store, max_attempts=1)
    assert mobile_api_works(c.client, store) is False
    assert store.get_meta("mobile_api") is None  # try again next time
    sim.faults.clear()
    assert mobile_api_works(c.client, store) is True
    assert store.get_meta("mobile_api") == "yes"


# --------------------------------------------------------------------------- posts per page


@pytest.mark.parametrize("renumber", [True, False])
def test_posts_per_page_are_learned_from_the_pages_not_the_game_file(store, renumber):
    """The director's account shows 15 posts a page while the game file
    says ``[forum] ppp = 10``; a post deleted on page 2 is still marked vanished."""
    clock = SimClock(T0 + timedelta(days=1))
    sim = ForumSim(users=USERS, clock=clock, floodctrl_s=0, ppp=15)
    sim.add_thread(TID, "第二天投票帖", "导演", "【第二天投票帖】请投票", T0)
    for i in range(1, 40):
        sim.add_post(TID, "饺子", f"第{i}条：投票对象：包子", T0 + timedelta(minutes=i))
    c = crawler(sim, store)
    assert c.forum.html_ppp == 10  # what the game file says
    assert c.crawl([CrawlTarget(TID)]).ok
    assert store.thread(TID)["ppp"] == 15  # remembered per thread, from the pages
    victim = forum_pids(sim)[24]  # floor 25: page 2 of 15 (page 3 of 10)
    sim.delete_post(victim, at=clock(), renumber=renumber)
    report = crawler(sim, store).crawl([CrawlTarget(TID)], full=True)
    assert report.ok and report.threads[0].vanished_posts == 1
    states = {p.pid: p.state for p in store.posts(TID)}
    assert states[victim] is PostState.VANISHED
    assert stored_pids(store) == forum_pids(sim)


@pytest.mark.parametrize("forgotten", [False, True])
def test_a_crawl_that_starts_at_the_last_page_knows_the_page_size(store, forgotten):
    clock = SimClock(T0 + timedelta(days=1))
    sim = ForumSim(users=USERS, clock=clock, floodctrl_s=0, ppp=15)
    sim.add_thread(TID, "投票帖", "导演", "请投票", T0)
    for i in range(1, 40):
        sim.add_post(TID, "包子", f"第{i}条", T0 + timedelta(minutes=i))
    crawler(sim, store).crawl([CrawlTarget(TID)])
    if forgotten:  # a store migrated by 008_ppp_from_pages: the game file's value is gone
        store.db.execute("UPDATE threads SET ppp = NULL")
    victim = forum_pids(sim)[35]  # on the last page (3)
    sim.delete_post(victim, at=clock(), renumber=False)
    sim.requests.clear()
    report = crawler(sim, store).crawl([CrawlTarget(TID)])  # incremental: the last page only
    assert viewthread_requests(sim) == 1
    assert report.threads[0].vanished_posts == 1
    assert store.thread(TID)["ppp"] == 15


def test_the_page_size_ignores_sticky_replies_on_page_one():
    from parsers.records import Post, ThreadPage
    from pipeline.discuz.crawl import _infer_ppp

    def post(pid: int, floor: int | None) -> Post:
        return Post(
            tid=TID,
            pid=pid,
            floor=floor,
            author="饺子",
            uid=3,
            posted_at=T0,
            message_html="",
            text="",
        )

    page1 = [post(100 + f, f) for f in range(1, 16)] + [post(200, 33), post(201, None)]
    assert _infer_ppp(ThreadPage(TID, 1, 3, tuple(page1))) == 15
    page2 = [post(100 + f, f) for f in range(16, 31)]
    assert _infer_ppp(ThreadPage(TID, 2, 3, tuple(page2))) == 15
    assert _infer_ppp(ThreadPage(TID, 2, 3, tuple(page2[:-1]))) is None  # not a full page
    last = [post(100 + f, f) for f in range(31, 38)]
    assert _infer_ppp(ThreadPage(TID, 3, 3, tuple(last))) == 15  # it starts at floor 31
    assert _infer_ppp(ThreadPage(TID, 1, 1, tuple(page1[:7]))) is None  # one page says nothing
    assert _infer_ppp(ThreadPage(TID, 3, 3, tuple(page2))) is None  # 16 = 2·7.5 + 1: no size


def test_pacing_waits_only_between_requests_and_says_how_far_it_got(store, caplog):
    """A 13-page thread read with ``min_interval_s = 1``: one wait between two requests, none
    before the first or after the last; ``-v`` says every 5 s how far the crawl has got and
    what it waits for, and the report counts the wait (what a cycle's log names)."""
    import logging

    sim, _clock = forum(n_posts=125)
    t = [0.0]
    sleeps: list[float] = []

    def sleep(s: float) -> None:
        sleeps.append(s)
        t[0] += s

    http = httpx.Client(transport=sim.transport(), follow_redirects=True)
    client = DiscuzClient(
        http,
        base_url=sim.base_url,
        min_interval_s=1.0,
        policy=RetryPolicy(max_attempts=1),
        sleep=sleep,
        monotonic=lambda: t[0],
    )
    crawl = Crawler(client, store, ForumConfig(base_url=sim.base_url, tz=TZ, source="html"))
    with caplog.at_level(logging.INFO, logger="pipeline.discuz.crawl"):
        report = crawl.crawl([CrawlTarget(TID)])
    pages = report.threads[0].pages_fetched
    assert pages == 13 and report.requests == 13
    assert sleeps == [1.0] * 12  # between the 13 requests, never before the first or after
    assert report.paced_s == 12.0
    said = [r.getMessage() for r in caplog.records if "已读第" in r.getMessage()]
    assert said == [
        f"帖子 {TID}：已读第 6/13 页…（每两次请求间隔 1 秒，[forum] min_interval_s）",
        f"帖子 {TID}：已读第 11/13 页…（每两次请求间隔 1 秒，[forum] min_interval_s）",
    ]
