"""End to end on the real vote thread: real pages -> store -> every vote's verdict and why.

The vote thread in tests/fixtures/discuz was written on a real Discuz! X3.5 (see its README and
manifest.json). The director's floor 24 (【导演】投票已截止) marks the close. The capture wrote the
whole thread within three seconds, floors 15 to 26 within one: the posts after the director's
notice (floor 25, a vote written after the close, and floor 26) are read as written a minute
later, every other post keeps its real time. So every post lies in the last hour before the
close, which is why 汤圆's change (floor 13), though it replies to its own vote floor as a
change must, is refused: "关门前一小时不允许改票或代投".
"""

from __future__ import annotations

import json
import random
from dataclasses import replace
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest

from engine.votes import VerdictStatus
from parsers.records import ThreadPage
from parsers.viewthread import parse_viewthread
from pipeline.derive import derive, tally_json, write_derivation
from pipeline.game.gamefile import parse_game
from pipeline.store import open_store
from tests import discuz_samples as samples
from tests.discuz_samples import served_at

TZ = ZoneInfo("Asia/Shanghai")
VOTE = samples.tid("vote")
#: the director's 【导演】投票已截止
NOTICE = samples.post("vote", 24)
assert NOTICE["sent_message"] == "【导演】投票已截止，请等待结果公布。"


def floor(n: int) -> int:
    """The pid of the vote thread's floor ``n``."""
    return samples.pid("vote", n)


def _closing(page: ThreadPage, closes) -> ThreadPage:
    """The page with the posts after the director's notice written a minute after the close."""
    later = closes + timedelta(minutes=1)
    posts = tuple(
        replace(p, posted_at=later) if p.floor and p.floor > NOTICE["floor"] else p
        for p in page.posts
    )
    return replace(page, posts=posts)


def _pages(fixtures_dir):
    pages = []
    for n in range(1, samples.pages("vote") + 1):
        path = fixtures_dir / "desktop" / f"vote-page{n}-anon.html"
        body = path.read_bytes()
        pages.append((body, parse_viewthread(body, tid=VOTE, tz=TZ, now=served_at(path))))
    closes = _times(pages)[1]
    return [(body, _closing(tp, closes)) for body, tp in pages]


def _times(pages):
    """(opens, closes): a minute before the first post; the director's notice."""
    posts = {p.pid: p for _, tp in pages for p in tp.posts}
    return posts[floor(1)].posted_at - timedelta(minutes=1), posts[NOTICE["pid"]].posted_at


def _game(opens, closes):
    players = [
        {"name": name, "uid": u["uid"]}
        for name, u in samples.manifest()["users"].items()
        if name not in ("导演A", "admin")
    ]
    return parse_game(
        {
            "game": {
                "id": "fixture",
                "title": "测试局",
                "ruleset": "m135",
                "timezone": "Asia/Shanghai",
            },
            "forum": {"base_url": samples.manifest()["server"]["base_url"]},
            "director": {"names": ["导演A"], "uids": [samples.uid("导演A")]},
            "players": players,
            "days": [{"day": 2, "opens": opens, "closes": closes, "vote": VOTE}],
        },
        env={},
    )


@pytest.fixture
def derived(fixtures_dir, tmp_path):
    pages = _pages(fixtures_dir)
    opens, closes = _times(pages)
    game = _game(opens, closes)
    store = open_store(tmp_path / "fixture.db")
    store.register_thread(VOTE, day=2, role="vote")
    for body, tp in pages:
        store.save_page(
            tp,
            source="html",
            url=f"t{VOTE} p{tp.page}",
            status=200,
            headers={},
            body=body,
            fetched_at=closes + timedelta(hours=1),
            ppp=10,
        )
    d = derive(game, store, as_of=closes + timedelta(hours=1))
    yield game, store, d
    store.close()


def _by_pid(d):
    return {v.ballot.evidence.pid: v for v in d.day(2).verdicts}


def test_every_vote_of_the_real_thread_gets_its_verdict(derived):
    _, _, d = derived
    v = _by_pid(d)
    counted = {pid: x.counts_for for pid, x in v.items() if x.status is VerdictStatus.COUNTED}
    # the votes that count, and what for (弃权 counts as None)
    assert counted == {
        floor(2): "包子",  # 饺子, full-width colon
        floor(3): "饺子",  # 包子, half-width colon (标点不区分全半角)
        floor(4): "面条",  # 馄饨, target and reason on one line
        floor(5): None,  # 面条 弃权
        floor(8): "馄饨",  # 春卷, red font still counts (flagged)
        floor(9): "包子",  # 油条, size 6 still counts
        floor(10): "馄饨",  # Snow_风: edited, the version stored counts, flagged
        floor(7): "饺子",  # 汤圆: its change (floor 13) came in the last hour
        floor(17): "包子",  # 烧卖 corrects its invalid vote with a new post
    }
    change = v[floor(13)]
    assert change.ballot.replied_to_pid == floor(7)  # the quote link proves what it replies to
    assert change.status is VerdictStatus.INVALID and "关门前1小时" in change.reason
    assert "投票给" in v[floor(6)].reason and v[floor(6)].status is VerdictStatus.INVALID
    assert "回复原投票楼层" in v[floor(20)].reason  # 面条's change without the quote
    white = v[floor(15)]
    assert white.ballot.hidden and white.status is VerdictStatus.INVALID  # white text
    late = v[floor(25)]
    assert late.status is not VerdictStatus.COUNTED and "截止" in late.reason
    for n in (18, 19, 21, 22):  # a second fresh vote post is not a change
        assert v[floor(n)].status is VerdictStatus.IGNORED, (n, v[floor(n)].reason)
    # a quote of someone's vote is never a vote: floor 12 (回复 button), 23 (hand-typed [quote])
    assert floor(12) not in v and floor(23) not in v
    # the director's notices are not ballots
    assert floor(1) not in v and floor(11) not in v and floor(24) not in v


def test_the_real_thread_tally_and_flags(derived):
    _, _, d = derived
    t = d.day(2).tally
    assert t.out == "包子" and t.decided_by == "唯一最高票"
    assert {k: int(c) for k, c in t.counts.items()} == {"包子": 3, "馄饨": 2, "饺子": 2, "面条": 1}
    kinds = {(f.kind.value, f.player) for f in d.flags}
    assert ("edited-vote", "Snow_风") in kinds
    assert ("font", "春卷") in kinds  # red font
    assert ("font", "油条") in kinds  # enlarged font
    out = tally_json(d, 2, {})
    assert out["out"] == "包子" and len(out["votes"]) == len(d.day(2).verdicts)
    assert {"valid", "invalid", "tally", "flags", "post_counts", "rule", "decided_by"} <= set(out)
    json.dumps(out, ensure_ascii=False)  # JSON-ready


def test_rederiving_is_deterministic_and_storage_order_does_not_matter(
    derived, fixtures_dir, tmp_path
):
    game, store, d = derived
    first = tally_json(d, 2, {})
    again = tally_json(derive(game, store, as_of=d.as_of), 2, {})
    assert again == first
    write_derivation(store, d, now=d.as_of)
    rows = list(store.db.query("SELECT * FROM votes ORDER BY day, seq"))
    write_derivation(store, derive(game, store, as_of=d.as_of), now=d.as_of)
    assert list(store.db.query("SELECT * FROM votes ORDER BY day, seq")) == rows
    # pages stored in another order, into another store: the same verdicts
    pages = _pages(fixtures_dir)
    random.Random(7).shuffle(pages)
    other = open_store(tmp_path / "other.db")
    other.register_thread(VOTE, day=2, role="vote")
    for body, tp in pages:
        other.save_page(
            tp,
            source="html",
            url="x",
            status=200,
            headers={},
            body=body,
            fetched_at=d.as_of,
            ppp=10,
        )
    assert tally_json(derive(game, other, as_of=d.as_of), 2, {}) == first
    other.close()


def test_a_vote_edited_after_the_close_keeps_the_version_first_seen(derived):
    """docs/rulings.md#edited-vote: an edited vote is flagged; the version first seen before the
    close counts."""
    game, store, d = derived
    first = next(p for p in store.posts(VOTE) if p.pid == floor(2))  # 饺子 → 包子
    edited = replace(first, text="投票对象：馄饨\n投票理由：关门后偷偷改", message_html="x")
    late = d.as_of + timedelta(hours=2)
    store.save_page(
        ThreadPage(tid=VOTE, page=1, total_pages=3, posts=(edited,)),
        source="html",
        url=f"t{VOTE}",
        status=200,
        headers={},
        body=b"edited",
        fetched_at=late,
        ppp=10,
    )
    again = derive(game, store, as_of=late)
    v = _by_pid(again)[floor(2)]
    assert v.status is VerdictStatus.COUNTED and v.counts_for == "包子"
    assert v.ballot.edited
    assert any(f.kind.value == "edited-vote" and f.player == "饺子" for f in again.flags)


def test_an_unreadable_vote_is_reported_then_counted_once_readable(fixtures_dir, tmp_path):
    """回帖仅作者可见 to a cookie that is not the director's: the vote must not vanish silently,
    and once the post is readable its words count (the first readable version)."""
    from parsers.records import PostState

    pages = _pages(fixtures_dir)
    opens, closes = _times(pages)
    game = _game(opens, closes)
    store = open_store(tmp_path / "hidden.db")
    store.register_thread(VOTE, day=2, role="vote")
    jiaozi = floor(2)
    hidden = tuple(
        replace(p, state=PostState.AUTHOR_ONLY, text="", message_html="") if p.pid == jiaozi else p
        for p in pages[0][1].posts
    )
    first = ThreadPage(tid=VOTE, page=1, total_pages=3, posts=hidden)
    store.save_page(
        first,
        source="html",
        url="p1",
        status=200,
        headers={},
        body=b"hidden",
        fetched_at=closes - timedelta(minutes=1),
        ppp=10,
    )
    for body, tp in pages[1:]:
        store.save_page(
            tp,
            source="html",
            url="pN",
            status=200,
            headers={},
            body=body,
            fetched_at=closes - timedelta(minutes=1),
            ppp=10,
        )
    d = derive(game, store, as_of=closes + timedelta(hours=1))
    v = _by_pid(d)[jiaozi]
    assert v.status is VerdictStatus.INVALID and "帖子内容不可读（仅作者可见）" in v.ballot.problem
    assert not any(f.kind.value == "no-vote" and f.player == "饺子" for f in d.flags)
    assert any("内容不可读" in n for n in d.day(2).notes)
    # the director's cookie is fixed: the page is read again, now with the words
    body, tp = pages[0]
    store.save_page(
        tp,
        source="html",
        url="p1",
        status=200,
        headers={},
        body=body,
        fetched_at=closes + timedelta(minutes=30),
        ppp=10,
    )
    d = derive(game, store, as_of=closes + timedelta(hours=1))
    v = _by_pid(d)[jiaozi]
    assert v.status is VerdictStatus.COUNTED and v.counts_for == "包子"
    assert not v.ballot.edited  # becoming readable is not an edit
    store.close()
