"""What the forum answers when bansha posts, read from real Discuz X3.5 captures; and whether a
post in a thread is a given draft.

The captures are in ``tests/fixtures/discuz/misc/`` (see its README: a real X3.5 with floodctrl
3 s, captcha off); ``files`` in its manifest.json says what each POST sent and the pid it made.
"""

from __future__ import annotations

from datetime import timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from parsers.records import Post
from parsers.reply import (
    LoginOutcome,
    ReplyOutcome,
    classify_post_message,
    draft_fingerprint,
    fingerprint_text,
    fingerprint_words,
    parse_login_answer,
    parse_login_form,
    parse_member,
    parse_post_answer,
    post_fingerprint,
)
from parsers.viewthread import parse_viewthread
from tests import discuz_samples as samples
from tests.discuz_samples import SAMPLES, served_at

TZ8 = timezone(timedelta(hours=8))
SCRATCH = samples.tid("scratch")


def capture(name: str) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of one capture in misc/."""
    path = SAMPLES / "misc" / name
    lines = path.with_name(f"{name}.head").read_text("utf-8").splitlines()
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    return status, headers, path.read_bytes()


def answer(name: str):
    status, headers, body = capture(name)
    charset = headers.get("content-type", "").partition("charset=")[2] or None
    return parse_post_answer(status, body, location=headers.get("location"), charset=charset)


# --------------------------------------------------------------------------- real captures


def test_ajax_fast_reply_success_gives_the_new_pid():
    got = answer("submit-ok-fastpost.xml")
    assert got.outcome is ReplyOutcome.POSTED
    assert (got.pid, got.tid) == (
        samples.manifest()["files"]["misc/submit-ok-fastpost.xml"]["pid"],
        SCRATCH,
    )
    assert "回复发布成功" in got.message
    assert got.value("fid") == "3"
    assert got.outcome.stored is True


def test_plain_form_success_is_a_301_to_the_new_floor():
    status, headers, _ = capture("submit-ok-redirect.html")
    assert status == 301
    got = answer("submit-ok-redirect.html")
    assert got.outcome is ReplyOutcome.POSTED
    made = samples.manifest()["files"]["misc/submit-ok-redirect.html"]["pid"]
    assert (got.pid, got.tid) == (made, SCRATCH)
    assert headers["location"].endswith(f"#pid{made}")


def test_flood_control_is_read_with_its_interval():
    got = answer("submit-refused-flood.html")
    assert got.outcome is ReplyOutcome.FLOOD
    assert got.wait_s == 3  # the test forum's floodctrl
    assert got.message == "抱歉，您两次发表间隔少于 3 秒，请稍候再发表"
    assert got.outcome.stored is False


def test_too_short_is_a_refusal_with_the_forums_words():
    got = answer("submit-refused-short.html")
    assert got.outcome is ReplyOutcome.REFUSED
    assert got.message == "抱歉，您的帖子小于 10 个字符的限制"


def test_hide_not_allowed_is_a_refusal():
    got = answer("submit-refused-hide.html")
    assert got.outcome is ReplyOutcome.REFUSED
    assert got.message == "抱歉，您没有权限使用 [hide] 代码"


def test_bad_formhash_is_the_503_request_tainting_page():
    status, _, _ = capture("submit-refused-formhash.html")
    assert status == 503
    got = answer("submit-refused-formhash.html")
    assert got.outcome is ReplyOutcome.BAD_FORMHASH
    assert "非法字符" in got.message
    assert got.outcome.stored is False


def test_login_form_and_member_of_real_pages():
    _, _, body = capture("login-page-anon.html")
    form = parse_login_form(body.decode("utf-8"))
    assert form is not None
    assert len(form.formhash) == 8 and form.loginhash and form.loginhash.startswith("L")
    assert parse_member(body.decode("utf-8")).uid == 0
    _, _, member_page = capture("members-only-thread-member.html")
    member = parse_member(member_page.decode("utf-8"))
    assert (member.uid, member.username) == (samples.uid("饺子"), "饺子")


# --------------------------------------------------------------------------- other answers


def ajax(script: str, charset: str = "utf-8") -> bytes:
    text = f'<?xml version="1.0" encoding="{charset}"?>\r\n<root><![CDATA[{script}]]></root>'
    return text.encode("gbk" if charset == "gbk" else "utf-8")


def test_moderated_reply_is_pending_even_though_it_comes_through_succeedhandle():
    body = ajax(
        '<script type="text/javascript" reload="1">if(typeof succeedhandle_fastpost=='
        "'function') {succeedhandle_fastpost('forum.php?mod=forumdisplay&fid=3', "
        "'回复需要审核，请等待通过', {'fid':'3','tid':'7','pid':'150'});}</script>"
    )
    got = parse_post_answer(200, body)
    assert got.outcome is ReplyOutcome.PENDING_MODERATION
    assert got.pid == 150
    assert got.outcome.stored is True


def test_captcha_and_hourly_limit_and_edit_success():
    captcha = ajax(
        "抱歉，验证码填写错误<script>errorhandle_fastpost('抱歉，验证码填写错误', {});</script>"
    )
    assert parse_post_answer(200, captcha).outcome is ReplyOutcome.CAPTCHA
    hourly = "抱歉，您所在的用户组每小时限制发回帖 10 个，请稍候再发表"
    assert classify_post_message(hourly) is ReplyOutcome.HOURLY_LIMIT
    edited = ajax(
        "<script>succeedhandle_editpost('forum.php?mod=viewthread&tid=5&page=1&extra=#pid12',"
        " '帖子编辑成功，现在将转入主题页，请稍候……[ 点击这里转入主题列表 ]', "
        "{'fid':'3','tid':'5','pid':'12'});</script>"
    )
    got = parse_post_answer(200, edited)
    assert (got.outcome, got.pid) == (ReplyOutcome.POSTED, 12)


def test_gbk_answer_is_decoded_from_its_prolog():
    body = ajax(
        "<script>errorhandle_fastpost('抱歉，您两次发表间隔少于 15 秒，请稍候再发表', "
        "{'floodctrl':'15'});</script>",
        charset="gbk",
    )
    got = parse_post_answer(200, body, charset=None)
    assert (got.outcome, got.wait_s) == (ReplyOutcome.FLOOD, 15)


def test_unreadable_answers_are_unknown_not_failures():
    assert parse_post_answer(200, b"").outcome is ReplyOutcome.UNKNOWN
    assert parse_post_answer(502, b"<html>Bad Gateway</html>").outcome is ReplyOutcome.SERVER_ERROR
    assert ReplyOutcome.UNKNOWN.stored is None
    # a redirect somewhere else than the new floor proves nothing
    assert parse_post_answer(302, b"", location="index.php").outcome is ReplyOutcome.UNKNOWN


def test_thread_missing_is_a_refusal_not_moderation():
    # "正在被审核" is part of thread_nonexistence; it is not 回复需要审核
    got = classify_post_message("抱歉，指定的主题不存在或已被删除或正在被审核")
    assert got is ReplyOutcome.REFUSED


def test_login_answers():
    def login(message: str):
        return parse_login_answer(
            200, ajax(f"<script>errorhandle_({message!r}, {{'loginperm':'4'}});</script>")
        )

    invalid = login("登录失败，您还可以尝试 4 次")
    assert (invalid.outcome, invalid.tries_left) == (LoginOutcome.INVALID, 4)
    assert login("密码错误次数过多，请 15 分钟后重新登录").outcome is LoginOutcome.LOCKED
    assert login("请输入验证码后继续登录").outcome is LoginOutcome.CAPTCHA


# --------------------------------------------------------------------------- fingerprints


def _post(text: str, message_html: str = "") -> Post:
    return Post(
        tid=1,
        pid=1,
        floor=2,
        author="导演",
        uid=2,
        posted_at=None,
        message_html=message_html,
        text=text,
    )


def _link(href: str, text: str) -> str:
    return f'<a href="{href}" target="_blank">{text}</a>'  # parseurl()'s markup


def test_fingerprint_matches_every_real_post_to_the_bbcode_that_was_sent():
    """Ground truth: manifest.json holds the exact BBCode each real post was sent with. Every
    visible post read from the real desktop pages matches its own message and no other."""
    posts: dict[int, Post] = {}
    for role in ("vote", "discussion"):
        for page in range(1, samples.pages(role) + 1):
            path = SAMPLES / "desktop" / f"{role}-page{page}-member.html"
            now = served_at(path)
            tid = samples.tid(role)
            for post in parse_viewthread(path.read_bytes(), tid=tid, tz=TZ8, now=now).posts:
                posts[post.pid] = post
    checked = 0
    seen: dict[str, int] = {}
    for role in ("vote", "discussion"):
        for entry in samples.posts(role):
            post = posts.get(entry["pid"])
            if post is None or entry.get("blocked") or "smiley" in entry["kind"]:
                continue  # deleted / 屏蔽 / smilies rendered as images (bansha posts smileyoff)
            sent = entry.get("edited_message_sent") or entry["sent_message"]
            assert draft_fingerprint(sent) == post_fingerprint(post), entry["pid"]
            seen.setdefault(post_fingerprint(post), entry["pid"])
            checked += 1
    assert checked >= 60
    assert len(seen) == checked  # no two different posts share a fingerprint


def test_markup_quotes_edit_notes_and_entities_do_not_change_the_fingerprint():
    draft = (
        "[size=5][b]第2天计票[/b][/size]\n饺子 3 票（包子、馄饨、面条）\n"
        "[url=forum.php?mod=viewthread&tid=5&authorid=3]饺子[/url]"
    )
    shown = "第2天计票\n饺子 3 票（包子、馄饨、面条）\n饺子"
    # parseurl() prefixes the site's address; the page writes & as &amp;
    href = "http://bbs.example.com/forum.php?mod=viewthread&amp;tid=5&amp;authorid=3"
    assert draft_fingerprint(draft) == post_fingerprint(_post(shown, _link(href, "饺子")))
    # Discuz prepends the edit note and a reply may carry a quote: neither is in post.text
    assert draft_fingerprint("[i=s] 本帖最后由 导演 于 2026-12-1 10:05 编辑 [/i]\n\n" + draft) == (
        draft_fingerprint(draft)
    )
    # an escaped tag shows literally and stays in both
    escaped = "名字：[[b][/b]color=red]x"
    assert draft_fingerprint(escaped) == post_fingerprint(_post("名字：[color=red]x"))
    assert draft_fingerprint("名字：&#091;url]x") == post_fingerprint(_post("名字：[url]x"))


def test_a_link_to_another_target_is_another_post_but_the_same_words():
    """A 电梯 edited for a substitute differs from the old floor 2 only in a uid."""
    old = (
        "[url=home.php?mod=space&uid=101]饺子[/url] 的发言："
        "[url=forum.php?mod=redirect&goto=findpost&ptid=5&pid=9]1楼[/url]"
    )
    new = old.replace("uid=101", "uid=131")
    assert draft_fingerprint(old) != draft_fingerprint(new)
    assert fingerprint_words(draft_fingerprint(old)) == fingerprint_words(draft_fingerprint(new))
    shown = _post(
        "饺子 的发言：1楼",
        _link("https://bbs.example.com/bbs/home.php?mod=space&amp;uid=101", "饺子")
        + " 的发言："
        + _link("forum.php?mod=redirect&amp;pid=9&amp;goto=findpost&amp;ptid=5", "1楼"),
    )
    assert post_fingerprint(shown) == draft_fingerprint(old)
    assert post_fingerprint(shown) != draft_fingerprint(new)
    # a quote's links (and the findpost link Discuz puts in its header) are not the post's
    quoted = _post(
        shown.text,
        shown.message_html
        + '<div class="quote"><blockquote>'
        + _link("forum.php?mod=redirect&amp;pid=3", "x")
        + "</blockquote></div>",
    )
    assert post_fingerprint(quoted) == post_fingerprint(shown)
    assert draft_fingerprint("没有链接") == fingerprint_words(draft_fingerprint("没有链接"))


def test_different_words_give_different_fingerprints():
    assert draft_fingerprint("饺子 3 票") != draft_fingerprint("饺子 2 票")
    assert draft_fingerprint("第1天结果") != draft_fingerprint("第2天结果")


@given(
    words=st.lists(st.text(alphabet="饺子包子馄饨面条0123456789abcXYZ", min_size=1), min_size=1),
    gaps=st.lists(st.sampled_from([" ", "\n", "  ", "\n\n", "\u3000", "，", "。"]), min_size=1),
    tags=st.lists(st.sampled_from(["b", "i", "u", "s", "color=red", "size=4", "align=center"])),
)
def test_rendering_spacing_and_markup_never_change_the_fingerprint(words, gaps, tags):
    plain = "".join(w + gaps[i % len(gaps)] for i, w in enumerate(words))
    marked = plain
    for tag in tags:
        name = tag.split("=")[0]
        marked = f"[{tag}]{marked}[/{name}]"
    assert draft_fingerprint(marked) == post_fingerprint(_post(" ".join(plain.split())))
    assert fingerprint_text(plain) == fingerprint_text(plain.upper().lower())
