"""The 报名帖: which posts are sign-ups, quits or neither, and the roster they make."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from parsers.records import Post, PostState
from parsers.signup import SignupKind, build_roster, classify_post, read_signups

TZ = ZoneInfo("Asia/Shanghai")
T0 = datetime(2026, 11, 28, 20, 0, tzinfo=TZ)
DIRECTOR = "[M135]导演"
UIDS = {"饺子": 101, "包子": 102, "馄饨": 103, "汤圆": 104, "烧卖": 105, "春卷": 106, "路人": 200}


def post(
    pid: int,
    author: str,
    text: str,
    *,
    floor: int | None = None,
    state: PostState = PostState.VISIBLE,
    uid: int | None = None,
    minutes: int | None = None,
    quotes: tuple[str, ...] = (),
) -> Post:
    return Post(
        tid=900,
        pid=pid,
        floor=floor if floor is not None else pid,
        author=author,
        uid=UIDS.get(author, 9) if uid is None else uid,
        posted_at=T0 + timedelta(minutes=pid if minutes is None else minutes),
        message_html=text,
        text=text,
        quote_texts=quotes,
        state=state,
    )


def kind(text: str, **kw) -> tuple[SignupKind, str]:
    r = classify_post(post(5, "饺子", text, **kw), directors={DIRECTOR})
    return r.kind, r.why


@pytest.mark.parametrize(
    "text",
    [
        "报名",
        "报名参加",
        "+1",
        "＋1",
        "报个名",
        "我来！",
        "算我一个",
        "占座",
        "报名 女",
        "join",
        "蹲一个",
    ],
)
def test_sign_up_words_are_read_liberally(text):
    got, why = kind(text)
    assert got is SignupKind.SIGNUP, why
    assert why.startswith("含「")


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("退出报名", "退出报名"),
        ("取消报名，这周有事", "取消报名"),
        ("不好意思，不报了", "不报了"),
        ("我退出", "我退出"),
        ("还是退出吧", "退出"),  # a bare 退出 without any sign-up word
    ],
)
def test_quits(text, word):
    got, why = kind(text)
    assert got is SignupKind.QUIT
    assert why == f"含「{word}」"


def test_a_negated_sign_up_is_a_quit_and_a_question_is_nothing():
    assert kind("这次不参加，围观") == (SignupKind.QUIT, "含否定的「不参加」，视为退出报名")
    got, why = kind("请问报名截止是几点？")
    assert got is SignupKind.OTHER and why.startswith("是提问（含问号）")
    # a sign-up that asks something at the same time still counts
    assert kind("报名！几点开始？")[0] is SignupKind.SIGNUP
    assert kind("加油，期待")[0] is SignupKind.OTHER


def test_a_signup_with_a_quit_word_is_a_signup_and_a_quit_phrase_wins():
    assert kind("报名，中途不会退出")[0] is SignupKind.SIGNUP
    assert kind("报名错了，取消报名")[0] is SignupKind.QUIT


def test_substitute_only_and_willing_to_be_one():
    r = classify_post(post(5, "饺子", "报名替补"), directors={DIRECTOR})
    assert r.kind is SignupKind.SIGNUP and r.substitute
    r = classify_post(post(5, "饺子", "报名，可以当替补"), directors={DIRECTOR})
    assert r.kind is SignupKind.SIGNUP and not r.substitute


def test_sex_from_the_post_for_tubian24():
    # tubian24.txt:65 若有特殊需要，可在竞拍贴中说明自己的性别
    assert classify_post(post(5, "饺子", "报名 女"), directors=()).sex == "女"
    assert classify_post(post(5, "饺子", "+1，性别：男"), directors=()).sex == "男"
    assert classify_post(post(5, "饺子", "报名，男女都行我无所谓的"), directors=()).sex is None


def test_posts_that_are_never_read_say_why():
    directors = {DIRECTOR}
    cases = [
        (post(1, DIRECTOR, "报名帖：请回复报名", floor=1, uid=1), "报名帖正文（楼主）"),
        (post(7, DIRECTOR, "报名截止", uid=1), "导演的帖子"),
        (post(8, "汤圆", "报名", state=PostState.DELETED), "帖子已删除"),
        (post(9, "汤圆", "", state=PostState.BLOCKED), "帖子被屏蔽，看不到内容"),
        (post(10, "匿名", "报名", uid=0), "匿名或账号已删除（没有 uid），无法确认是谁"),
    ]
    records = read_signups([p for p, _ in cases], directors=directors)
    assert [(r.skipped, r.why) for r in records] == [(True, why) for _, why in cases]


def test_a_director_by_uid_and_a_late_post():
    until = T0 + timedelta(minutes=30)
    r = classify_post(post(40, "饺子", "报名"), directors=(), until=until)
    assert r.skipped and r.why == "报名截止（11-28 20:30）之后发的"
    r = classify_post(post(4, "汤圆", "报名"), directors=(), director_uids={104})
    assert r.skipped and r.why == "导演的帖子"


def test_quoted_sign_ups_are_not_read():
    # the 回复 button quotes 饺子's 报名: only 路人's own words are read
    p = post(6, "路人", "楼上好积极", quotes=("饺子 发表于 2026-11-28 20:05\n报名",))
    assert classify_post(p, directors=()).kind is SignupKind.OTHER


def thread() -> list[Post]:
    return [
        post(1, DIRECTOR, "【报名帖】12人局，回复报名", floor=1, uid=1),
        post(2, "饺子", "报名"),
        post(3, "包子", "+1"),
        post(4, "饺子", "报名报名"),  # a duplicate
        post(5, "馄饨", "报名参加"),
        post(6, "路人", "围观"),
        post(7, "包子", "退出报名"),  # 包子 quits …
        post(8, "汤圆", "报名替补"),
        post(9, "烧卖", "报名"),
        post(10, "包子", "又有空了，报名"),  # … and signs up again: at the back
        post(11, "春卷", "取消报名"),  # never signed up
    ]


def test_the_roster_in_order_with_quits_duplicates_and_substitutes():
    records = read_signups(thread(), directors={DIRECTOR})
    result = build_roster(records, 3)
    assert [(e.name, e.uid, e.pid) for e in result.players] == [
        ("饺子", 101, 2),
        ("馄饨", 103, 5),
        ("烧卖", 105, 9),
    ]
    # the 替补 in sign-up order: 汤圆 asked for a 替补 place, 包子 came back after the seats
    assert [(e.name, e.pid, e.substitute) for e in result.substitutes] == [
        ("汤圆", 8, True),
        ("包子", 10, False),
    ]
    assert [(q.pid, e.pid) for q, e in result.quits] == [(7, 3)]
    ignored = {ig.record.pid: ig.why for ig in result.ignored}
    assert ignored == {
        1: "报名帖正文（楼主）",
        4: "重复报名：已按 pid 2 的报名计入",
        6: "没有报名或退出报名的字样",
        11: "含「取消报名」，但这个账号此前没有报名（不影响名单）",
    }


def test_enough_seats_take_everyone_but_the_substitute_only():
    result = build_roster(read_signups(thread(), directors={DIRECTOR}), 12)
    assert [e.name for e in result.players] == ["饺子", "馄饨", "烧卖", "包子"]
    assert [e.name for e in result.substitutes] == ["汤圆"]


def test_the_order_is_the_pid_order_not_the_list_order():
    posts = list(reversed(thread()))
    result = build_roster(read_signups(posts, directors={DIRECTOR}), 2)
    assert [e.name for e in result.players] == ["饺子", "馄饨"]


def test_a_real_discuz_thread_read_as_a_sign_up_thread(fixtures_dir):
    """The records come from the real X3.5 pages: names and uids from the markup, the 楼主 found
    by its floor, a 屏蔽 post and the director's posts not read (docs/discuz.md §1.6)."""
    from parsers.viewthread import parse_viewthread
    from tests import discuz_samples as samples

    now = datetime(2026, 12, 3, 12, 0, tzinfo=TZ)
    posts = [
        p
        for page in (1, 2)
        for p in parse_viewthread(
            (fixtures_dir / "desktop" / f"discussion-page{page}-anon.html").read_bytes(),
            tid=samples.tid("discussion"),
            tz=TZ,
            now=now,
        ).posts
    ]
    records = {r.pid: r for r in read_signups(posts, directors={"导演A"})}
    opening, chat, jiaozi = (samples.post("discussion", floor) for floor in (1, 2, 3))
    blocked = samples.one("discussion", blocked=True)
    assert records[opening["pid"]].why == "报名帖正文（楼主）"  # 导演A's opening post, floor 楼主
    assert records[blocked["pid"]].skipped
    assert records[blocked["pid"]].why == "帖子被屏蔽，看不到内容"
    assert (records[jiaozi["pid"]].name, records[jiaozi["pid"]].uid) == (
        "饺子",
        samples.uid("饺子"),
    )
    # chat is not a sign-up; nothing here is
    assert all(r.kind is not SignupKind.SIGNUP for r in records.values())
    assert records[chat["pid"]].why == "没有报名或退出报名的字样"
