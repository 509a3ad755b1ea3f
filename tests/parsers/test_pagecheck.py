"""Recognising the pages a forum serves instead of a thread (parsers.pagecheck).

Real answers of a Discuz! X3.5 server are in tests/fixtures/discuz/misc (README.md there);
the anti-crawl pages are built the way the X3.5 source builds them (helper_antitheft.php,
misc_security.php), since the test server had those protections off.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from parsers.pagecheck import check_page, classify_message
from parsers.records import PageError, PageErrorKind

K = PageErrorKind


def _entities(text: str) -> str:
    """misc_security.php sends its Chinese texts as hexadecimal character references."""
    return "".join(f"&#x{ord(c):x};" for c in text)


def _security_page(subject: str, message: str, *, form: bool = False) -> str:
    """The page misc_security.php's securitymessage() prints (X3.5 layout)."""
    body = f'<b style="font-size: 16px">{subject}</b> <br /><br />{message}'
    if form:
        body = f'<form action="" method="post" autocomplete="off">{body}</form>'
    return (
        f'<html><head><title>{subject}</title></head><body bgcolor="#FFFFFF">'
        '<script language="JavaScript">function reload() {\tdocument.location.reload();}'
        'setTimeout("reload()", 1001);</script>'
        f"<table><tr><td>{body}<br /><br /></td></tr></table></body></html>"
    )


@pytest.mark.parametrize(
    ("name", "kind", "says"),
    [
        ("members-only-thread-anon.html", K.LOGIN_REQUIRED, "您尚未登录"),
        ("members-only-section-anon.html", K.LOGIN_REQUIRED, "您尚未登录"),
        ("scratch-replyform-anon.html", K.LOGIN_REQUIRED, "没有权限在该版块回帖"),
        ("no-such-thread-anon.html", K.NOT_FOUND, "指定的主题不存在"),
        ("submit-refused-flood.html", K.RATE_LIMITED, "两次发表间隔少于 3 秒"),
        ("submit-refused-formhash.html", K.SERVER_ERROR, "非法字符"),
        ("submit-refused-hide.html", K.NO_PERMISSION, "[hide]"),
        ("submit-refused-short.html", K.MALFORMED, "小于 10 个字符"),
        ("discussion-page2-first-after-delete-anon.html", K.MALFORMED, "空白页面"),
    ],
)
def test_real_refusals(fixtures_dir: Path, name: str, kind: PageErrorKind, says: str) -> None:
    text = (fixtures_dir / "misc" / name).read_bytes().decode("utf-8")
    with pytest.raises(PageError) as caught:
        check_page(text)
    assert caught.value.kind is kind
    assert says in caught.value.detail  # the forum's own words reach the director


@pytest.mark.parametrize(
    "name",
    [
        "members-only-thread-member.html",  # a thread page
        "login-page-anon.html",
        "scratch-replyform-member.html",
        "submit-ok-fastpost.xml",  # succeedhandle_fastpost(...)
    ],
)
def test_real_pages_that_are_not_refusals(fixtures_dir: Path, name: str) -> None:
    assert check_page((fixtures_dir / "misc" / name).read_bytes().decode("utf-8")) is None


def test_every_desktop_thread_page_passes(fixtures_dir: Path) -> None:
    thread_page = re.compile(r"(vote|discussion)-(page\d|only)-")
    pages = [
        p for p in sorted((fixtures_dir / "desktop").glob("*.html")) if thread_page.match(p.name)
    ]
    # every page by a guest and by a member, the page past the end, the two only-author pages
    assert len(pages) == 2 * (3 + 5) + 1 + 2
    for page in pages:
        assert check_page(page.read_bytes().decode("utf-8")) is None, page.name


def test_the_mobile_api_503_page_is_a_server_error(fixtures_dir: Path) -> None:
    text = (fixtures_dir / "mobile" / "vote-api3-page1-anon.json").read_text("utf-8")
    with pytest.raises(PageError) as caught:
        check_page(text)
    assert caught.value.kind is K.SERVER_ERROR
    assert "mobileoem_template" in caught.value.detail


def test_a_post_quoting_an_error_text_does_not_hide_the_thread(fixtures_dir: Path) -> None:
    """A player may *write* 您浏览的太快了 or 抱歉，您尚未登录: the thread is still a thread."""
    page = (fixtures_dir / "desktop" / "vote-page3-anon.html").read_bytes().decode("utf-8")
    page = page.replace(
        "路过，今天不说话了。",
        "您浏览的太快了 抱歉，您尚未登录 Discuz! System Error getName.caller",
    )
    assert check_page(page) is None


def test_antitheft_reload_script() -> None:
    # helper_antitheft::make_js: a bare obfuscated script; _dsign is split into pieces.
    page = (
        '<script type="text/javascript">_abcde = window;_fghij = location;'
        "function getName(){var caller=getName.caller;if(caller.name){return caller.name} "
        'var str=caller.toString().replace(/[\\s]*/g,"");}'
        "location.href='/forum.php?mod=viewthread&tid=4&'+'_ds'+'ign=1a2b3c4d';</script>"
    )
    with pytest.raises(PageError) as caught:
        check_page(page)
    assert caught.value.kind is K.ANTI_CRAWL


@pytest.mark.parametrize(
    ("subject", "message", "kind"),
    [
        (
            "频繁刷新限制",
            "您访问本站速度过快或者刷新间隔时间小于两秒！请等待页面自动跳转 ...",
            K.RATE_LIMITED,
        ),
        (
            "代理服务器访问限制",
            "本站现在限制使用代理服务器访问，请去除您的代理设置。",
            K.ANTI_CRAWL,
        ),
        ("页面重载开启", "欢迎光临本站，页面正在重新载入，请稍候 ...", K.ANTI_CRAWL),
    ],
)
def test_attackevasive_pages(subject: str, message: str, kind: PageErrorKind) -> None:
    with pytest.raises(PageError) as caught:
        check_page(_security_page(_entities(subject), _entities(message)))
    assert caught.value.kind is kind


def test_attackevasive_arithmetic_challenge() -> None:
    form = (
        '<input type="text" name="answer" size="8" maxlength="150" />'
        '<input type="submit" name="secqsubmit" class="button" value=" Submit " />'
    )
    with pytest.raises(PageError) as caught:
        check_page(_security_page("7 + 12 + 3 = ?", form, form=True))
    assert caught.value.kind is K.ANTI_CRAWL


def test_a_waf_page_saying_you_browse_too_fast() -> None:
    with pytest.raises(PageError) as caught:
        check_page("<html><body><h1>您浏览的太快了，请稍后再试</h1></body></html>")
    assert caught.value.kind is K.RATE_LIMITED


def test_ajax_flood_answer() -> None:
    xml = (
        '<?xml version="1.0" encoding="utf-8"?>\r\n<root><![CDATA[<script type="text/javascript" '
        "reload=\"1\">errorhandle_fastpost('抱歉，您两次发表间隔少于 15 秒，请稍候再发表', "
        "{'floodctrl':'15'});</script>]]></root>"
    )
    with pytest.raises(PageError) as caught:
        check_page(xml)
    assert caught.value.kind is K.RATE_LIMITED


def test_database_error_page() -> None:
    page = (
        "<html><body><h1>Discuz! Database Error</h1>"
        '<div class="info">(1040) Too many connections</div></body></html>'
    )
    with pytest.raises(PageError) as caught:
        check_page(page)
    assert caught.value.kind is K.SERVER_ERROR
    assert "Too many connections" in caught.value.detail


def test_a_success_message_is_not_an_error() -> None:
    page = (
        '<div id="messagetext" class="alert_right"><p>非常感谢，回复发布成功，现在将转入主题页'
        "</p></div>"
    )
    assert check_page(page) is None


def test_board_closed_message() -> None:
    page = (
        '<div id="messagetext" class="alert_info"><p>抱歉，本站点暂时关闭，详情请 '
        '<a href="mailto:admin@example.com">联系管理员</a></p></div>'
    )
    with pytest.raises(PageError) as caught:
        check_page(page)
    assert caught.value.kind is K.CLOSED


def test_empty_body() -> None:
    with pytest.raises(PageError) as caught:
        check_page(" \n")
    assert caught.value.kind is K.MALFORMED
    assert caught.value.message_zh == "无法识别的页面：空白页面"


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("抱歉，您尚未登录，没有权限访问该版块", K.LOGIN_REQUIRED),
        ("抱歉，本帖要求阅读权限高于 50 才能浏览", K.NO_PERMISSION),
        ("抱歉，您所在的用户组(游客)无法进行此操作", K.NO_PERMISSION),
        ("本版块为密码版块，请输入密码", K.NO_PERMISSION),
        ("抱歉，指定的主题不存在或已被删除或正在被审核", K.NOT_FOUND),
        ("抱歉，您两次发表间隔少于 15 秒，请稍候再发表", K.RATE_LIMITED),
        ("您当前的访问请求当中含有非法字符，已经被系统拒绝", K.SERVER_ERROR),
        ("非常感谢，回复发布成功", None),
    ],
)
def test_classify_message(message: str, kind: PageErrorKind | None) -> None:
    assert classify_message(message) is kind


# --------------------------------------------------------------------------- no forum page at all


def _random_bytes(n: int = 4096) -> bytes:
    import hashlib

    return hashlib.shake_256(b"bansha random bytes").digest(n)


@pytest.mark.parametrize("codec", ["utf-8", "gb18030"])
def test_random_bytes_are_not_a_forum_page_not_a_truncated_one(codec: str) -> None:
    """Random bytes were reported as "被截断"; they are no forum page."""
    from parsers.pagecheck import NOT_FORUM_ZH, UnusablePage

    with pytest.raises(UnusablePage) as caught:
        check_page(_random_bytes().decode(codec, errors="replace"))
    assert caught.value.kind is K.MALFORMED  # still worth another try within the bounds
    assert caught.value.name_zh == NOT_FORUM_ZH
    assert caught.value.message_zh.startswith("不是论坛页面（无法识别的内容）")
    assert "被截断" not in caught.value.message_zh and "空白页面" not in caught.value.message_zh


def test_random_bytes_through_both_thread_parsers() -> None:
    from datetime import UTC, datetime

    from parsers.mobile import parse_mobile_viewthread
    from parsers.pagecheck import NOT_FORUM_ZH, UnusablePage
    from parsers.viewthread import parse_viewthread

    body = _random_bytes()
    with pytest.raises(UnusablePage) as desktop:
        parse_viewthread(body, tid=4, tz=UTC, now=datetime(2026, 12, 1, tzinfo=UTC))
    with pytest.raises(UnusablePage) as mobile:
        parse_mobile_viewthread(body, tid=4, tz=UTC, page=1)
    assert desktop.value.name_zh == mobile.value.name_zh == NOT_FORUM_ZH


def test_a_truncated_page_is_still_truncated(fixtures_dir: Path) -> None:
    from datetime import UTC, datetime

    from parsers.pagecheck import UnusablePage
    from parsers.viewthread import parse_viewthread

    body = (fixtures_dir / "desktop" / "vote-page3-anon.html").read_bytes()
    with pytest.raises(PageError) as caught:
        parse_viewthread(
            body[: len(body) // 2], tid=4, tz=UTC, now=datetime(2026, 12, 1, tzinfo=UTC)
        )
    assert not isinstance(caught.value, UnusablePage)
    assert "被截断" in caught.value.message_zh


def test_a_page_read_with_the_wrong_codec_is_not_random_bytes(fixtures_dir: Path) -> None:
    """A GBK page read as UTF-8 is garbled text inside markup, not random bytes."""
    body = (fixtures_dir / "desktop" / "gbk" / "vote-page1-anon-gbk.html").read_bytes()
    text = body.decode("utf-8", errors="replace").replace('id="postlist"', "")
    assert check_page(text) is None


def test_every_real_page_is_a_forum_page(fixtures_dir: Path) -> None:
    from parsers.pagecheck import UnusablePage

    for path in sorted(fixtures_dir.rglob("*")):
        if not path.is_file() or path.suffix in (".head", ".txt") or path.name == "README.md":
            continue
        try:
            check_page(path.read_bytes().decode("utf-8", errors="replace"))
        except UnusablePage:  # pragma: no cover - the failure message names the page
            pytest.fail(f"{path.name} taken for random bytes")
        except PageError:
            pass


def test_a_redirect_loop_has_its_own_name() -> None:
    from parsers.pagecheck import REDIRECT_LOOP_ZH, redirect_loop

    error = redirect_loop(5, "http://f/forum.php?mod=viewthread&tid=4")
    assert error.name_zh == REDIRECT_LOOP_ZH
    assert error.message_zh == (
        "重定向循环：论坛连续重定向 5 次仍未给出页面，最后指向 http://f/forum.php?mod=viewthread&tid=4"
    )
    assert str(error) == error.message_zh
