#!/usr/bin/env python3
"""Drive a Discuz! X3.5 forum over HTTP the way a browser does (standard library only).

Covers what the live tests and the sample capture need: the web installer, logging in,
the admin panel (new members, a new section), new threads, replies (plain, and 回复 with
``repquote`` so Discuz writes the quote block itself), edits, and the moderator actions
屏蔽 (``topicadmin banpost``) and delete (``topicadmin delpost``). Every response is
returned raw (status, header lines, body bytes) so a caller can save it unchanged.

Only loopback addresses are accepted as the forum's base URL.

  dzdriver.py --base URL install --db 127.0.0.1:PORT --db-user U --db-pass P \
      --founder admin --founder-pw PW
  dzdriver.py --base URL member --admin admin:PW 饺子:pw1234
  dzdriver.py --base URL section --admin admin:PW 版杀测试区        # prints the fid
  dzdriver.py --base URL thread --as 导演:PW --fid 2 --subject S --message M   # prints the tid
  dzdriver.py --base URL reply --as 饺子:PW --tid 1 --message M [--repquote PID]  # prints the pid
  dzdriver.py --base URL edit --as 饺子:PW --tid 1 --pid 3 --message M
  dzdriver.py --base URL ban|delete --as admin:PW --tid 1 --pid 3
  dzdriver.py --base URL cookie --as 导演:PW         # a Cookie header for BANSHA_COOKIE
"""

from __future__ import annotations

import argparse
import html
import ipaddress
import json
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field

USER_AGENT = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"


class DriverError(RuntimeError):
    """The forum refused or answered something the driver cannot read."""


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    url: str
    reason: str = ""

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    def header(self, name: str) -> str:
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return ""

    def head_text(self) -> str:
        """Status line and header lines, as a capture stores them."""
        lines = [f"HTTP/1.1 {self.status} {self.reason}".rstrip()] + [
            f"{k}: {v}" for k, v in self.headers
        ]
        return "\r\n".join(lines) + "\r\n"


def _loopback_only(base: str) -> str:
    host = urllib.parse.urlsplit(base).hostname or ""
    try:
        ok = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise DriverError(f"只连接本机回环地址的论坛，拒绝 {base}")
    return base if base.endswith("/") else base + "/"


class _Keep(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


_opener = urllib.request.build_opener(_Keep)


@dataclass
class Browser:
    """One visitor: a cookie jar and the requests made with it (redirects followed by hand)."""

    base: str
    cookies: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.base = _loopback_only(self.base)

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def _take_cookies(self, resp_headers) -> None:
        for line in resp_headers.get_all("Set-Cookie") or []:
            name, _, value = line.split(";", 1)[0].partition("=")
            if value in ("", "deleted"):
                self.cookies.pop(name.strip(), None)
            else:
                self.cookies[name.strip()] = value

    def fetch(
        self,
        path: str,
        form=None,
        *,
        follow: bool = False,
        referer: str | None = None,
        timeout: float = 300,
    ) -> Reply:
        url = path if path.startswith("http") else self.base + path
        data = urllib.parse.urlencode(form, doseq=True).encode() if form is not None else None
        for _hop in range(5):
            req = urllib.request.Request(url, data=data)
            req.add_header("User-Agent", USER_AGENT)
            req.add_header("Referer", referer or self.base)
            if self.cookies:
                req.add_header("Cookie", self.cookie_header())
            if data is not None:
                req.add_header("Content-Type", "application/x-www-form-urlencoded")
            try:
                resp = _opener.open(req, timeout=timeout)
            except urllib.error.HTTPError as err:
                resp = err
            body = resp.read()
            self._take_cookies(resp.headers)
            got = Reply(
                resp.status if hasattr(resp, "status") else resp.code,
                list(resp.headers.items()),
                body,
                url,
                str(getattr(resp, "reason", "") or ""),
            )
            location = got.header("Location")
            if follow and got.status in (301, 302, 303) and location:
                url, data = urllib.parse.urljoin(url, location), None
                continue
            return got
        raise DriverError(f"重定向太多：{url}")

    # --- page reading
    @staticmethod
    def formhash(text: str) -> str:
        m = re.search(r'name="formhash" value="([0-9a-f]{8})"', text) or re.search(
            r"formhash=([0-9a-f]{8})", text
        )
        if not m:
            raise DriverError("页面上没有 formhash")
        return m.group(1)

    @staticmethod
    def said(text: str) -> str:
        m = re.search(r"<!\[CDATA\[(.*?)\]\]>", text, re.S)
        inner = re.sub(r"<script.*?</script>", " ", m.group(1) if m else text, flags=re.S)
        return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inner)).split())

    def logged_in(self) -> bool:
        return any(k.endswith("_auth") for k in self.cookies)

    # --- accounts
    def login(self, username: str, password: str) -> None:
        page = self.fetch("member.php?mod=logging&action=login").text
        m = re.search(r"loginhash=(\w+)", page)
        ans = self.fetch(
            "member.php?mod=logging&action=login&loginsubmit=yes"
            f"&loginhash={m.group(1) if m else ''}&inajax=1",
            {
                "formhash": self.formhash(page),
                "referer": self.base,
                "loginfield": "username",
                "username": username,
                "password": password,
                "questionid": "0",
                "answer": "",
                "cookietime": "2592000",
            },
        )
        if not self.logged_in():
            raise DriverError(f"{username} 登录失败：{self.said(ans.text)[:200]}")

    def enter_admin(self, password: str) -> None:
        page = self.fetch("admin.php").text
        if 'name="admin_password"' not in page:
            return
        self.fetch(
            "admin.php",
            {
                "frames": "yes",
                "formhash": self.formhash(page),
                "admin_password": password,
                "admin_questionid": "0",
                "admin_answer": "",
            },
        )
        if 'name="admin_password"' in self.fetch("admin.php?action=index").text:
            raise DriverError("进入管理后台失败")

    def add_member(self, username: str, password: str, groupid: int = 10) -> str:
        page = self.fetch("admin.php?action=members&operation=add").text
        email = "m{}@example.invalid".format("".join(f"{ord(c):x}" for c in username)[:40])
        ans = self.fetch(
            "admin.php?action=members&operation=add",
            {
                "formhash": self.formhash(page),
                "newusername": username,
                "newpassword": password,
                "newemail": email,
                "newgroupid": str(groupid),
                "emailnotify": "0",
                "addsubmit": "yes",
            },
        )
        return self.said(ans.text)[:200]

    def add_section(self, name: str, category: int = 1) -> int:
        page = self.fetch("admin.php?action=forums").text
        self.fetch(
            "admin.php?action=forums",
            {
                "formhash": self.formhash(page),
                "editsubmit": "yes",
                f"newforum[{category}][]": name,
                f"neworder[{category}][]": "0",
            },
        )
        page = self.fetch("admin.php?action=forums").text
        fids = [
            int(f)
            for f, n in re.findall(r'name="name\[(\d+)\]" value="([^"]*)"', page)
            if html.unescape(n) == name
        ]
        if not fids:
            raise DriverError(f"新版块 {name} 没有出现在版块列表里")
        return max(fids)

    # --- posting
    def fid_of(self, tid: int) -> int:
        ans = self.fetch(f"api/mobile/index.php?version=4&module=viewthread&tid={tid}&ppp=1")
        return int(json.loads(ans.text)["Variables"]["thread"]["fid"])

    def new_thread(self, fid: int, subject: str, message: str) -> tuple[int, Reply]:
        page = self.fetch(f"forum.php?mod=post&action=newthread&fid={fid}").text
        ans = self.fetch(
            f"forum.php?mod=post&action=newthread&fid={fid}&extra=&topicsubmit=yes",
            {
                "formhash": self.formhash(page),
                "posttime": str(int(time.time())),
                "wysiwyg": "0",
                "subject": subject,
                "message": message,
                "allownoticeauthor": "1",
                "usesig": "1",
            },
        )
        m = re.search(r"tid=(\d+)", ans.header("Location")) or re.search(r"tid=(\d+)", ans.text)
        if not m:
            raise DriverError(f"发帖被拒：{self.said(ans.text)[:300]}")
        return int(m.group(1)), ans

    def reply_form(self, tid: int, repquote: int | None = None) -> Reply:
        q = f"&repquote={repquote}" if repquote else ""
        return self.fetch(f"forum.php?mod=post&action=reply&fid={self.fid_of(tid)}&tid={tid}{q}")

    def reply(
        self, tid: int, message: str, repquote: int | None = None, *, inajax: bool = True
    ) -> tuple[int, Reply]:
        """Post a reply; with ``repquote`` as the 回复 link does. Returns (pid, raw answer)."""
        form = self.reply_form(tid, repquote).text
        fields = {
            "formhash": self.formhash(form),
            "posttime": str(int(time.time())),
            "wysiwyg": "0",
            "message": message,
            "usesig": "1",
            "subject": "",
        }
        if repquote:
            for name in ("noticeauthor", "noticetrimstr", "noticeauthormsg", "reppid", "reppost"):
                m = re.search(rf'name="{name}"[^>]*value="([^"]*)"', form)
                if m:
                    fields[name] = html.unescape(m.group(1))
            if "noticetrimstr" not in fields:
                raise DriverError(f"pid {repquote} 的回复表单里没有引用：{self.said(form)[:200]}")
        fid = self.fid_of(tid)
        tail = "&infloat=yes&handlekey=fastpost&inajax=1" if inajax else ""
        ans = self.fetch(
            f"forum.php?mod=post&action=reply&fid={fid}&tid={tid}&extra=&replysubmit=yes{tail}",
            fields,
            referer=f"{self.base}forum.php?mod=viewthread&tid={tid}",
        )
        m = re.search(r"pid=(\d+)", ans.header("Location")) or re.search(r"pid=(\d+)", ans.text)
        if not m:
            raise DriverError(f"回帖被拒：{self.said(ans.text)[:300]}")
        return int(m.group(1)), ans

    def edit(self, tid: int, pid: int, message: str) -> str:
        fid = self.fid_of(tid)
        form = self.fetch(
            f"forum.php?mod=post&action=edit&fid={fid}&tid={tid}&pid={pid}&page=1"
        ).text
        ans = self.fetch(
            "forum.php?mod=post&action=edit&extra=&editsubmit=yes&inajax=1",
            {
                "formhash": self.formhash(form),
                "posttime": str(int(time.time())),
                "wysiwyg": "0",
                "delattachop": "0",
                "fid": str(fid),
                "tid": str(tid),
                "pid": str(pid),
                "page": "1",
                "subject": "",
                "message": message,
                "usesig": "1",
            },
        )
        if "succeed" not in ans.text and "成功" not in self.said(ans.text):
            raise DriverError(f"编辑被拒：{self.said(ans.text)[:300]}")
        return self.said(ans.text)

    def moderate(self, action: str, tid: int, pids: list[int], **extra: str) -> str:
        fid = self.fid_of(tid)
        page = self.fetch(f"forum.php?mod=viewthread&tid={tid}", follow=True).text
        form = (
            [
                ("formhash", self.formhash(page)),
                ("fid", str(fid)),
                ("tid", str(tid)),
                ("handlekey", "mods"),
                ("reason", "测试"),
                ("modsubmit", "yes"),
            ]
            + [("topiclist[]", str(p)) for p in pids]
            + list(extra.items())
        )
        ans = self.fetch(
            f"forum.php?mod=topicadmin&action={action}&fid={fid}&tid={tid}&modsubmit=yes&infloat=yes&inajax=1",
            form,
            referer=f"{self.base}forum.php?mod=viewthread&tid={tid}",
        )
        if "succeed" not in ans.text and "成功" not in self.said(ans.text):
            raise DriverError(f"{action} 被拒：{self.said(ans.text)[:300]}")
        return self.said(ans.text)

    def ban(self, tid: int, pids: list[int], on: bool = True) -> str:
        return self.moderate("banpost", tid, pids, banned="1" if on else "0")

    def delete(self, tid: int, pids: list[int]) -> str:
        return self.moderate("delpost", tid, pids)

    def close_thread(self, tid: int) -> str:
        return self.moderate(
            "moderate", tid, [tid], **{"operations[]": "close", "expirationclose": ""}
        )

    # --- the installer
    def install(
        self, db: str, db_user: str, db_pass: str, db_name: str, founder: str, founder_pw: str
    ) -> None:
        first = self.fetch("install/index.php").text
        if "已经安装" in first or "install_locked" in first or "锁定" in first:
            return
        self.fetch("install/index.php?step=1")
        email = "founder@example.invalid"
        ans = self.fetch(
            "install/index.php?step=3&install_ucenter=yes",
            {
                "step": "3",
                "install_ucenter": "yes",
                "dbinfo[dbhost]": db,
                "dbinfo[dbname]": db_name,
                "dbinfo[dbuser]": db_user,
                "dbinfo[dbpw]": db_pass,
                "dbinfo[tablepre]": "pre_",
                "dbinfo[adminemail]": email,
                "admininfo[username]": founder,
                "admininfo[password]": founder_pw,
                "admininfo[password2]": founder_pw,
                "admininfo[email]": email,
            },
        ).text
        m = re.search(r"allinfo=([^'\"&]+)", ans)
        if not m:
            raise DriverError("安装程序不接受数据库表单：" + self.said(ans)[-500:])
        for step in ("do_db_init", "do_db_data_init"):
            out = self.fetch(f"install/index.php?method={step}&allinfo={m.group(1)}")
            if out.status >= 400 or "Fatal" in out.text:
                raise DriverError(f"安装步骤 {step} 失败：{out.text[-500:]}")
        out = self.fetch("misc.php?mod=initsys", follow=True)
        if out.status >= 400:
            raise DriverError(f"initsys 失败：HTTP {out.status}")
        self.fetch("install/index.php?method=ext_info")


def member(base: str, username: str, password: str) -> Browser:
    b = Browser(base)
    b.login(username, password)
    return b


def _pair(text: str) -> tuple[str, str]:
    name, sep, pw = text.partition(":")
    if not sep:
        raise SystemExit(f"需要 名字:密码，得到 {text!r}")
    return name, pw


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--base", required=True, help="论坛地址，如 http://127.0.0.1:PORT/")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("install")
    for k in ("db", "db-user", "db-pass", "db-name", "founder", "founder-pw"):
        p.add_argument("--" + k, required=True)
    p = sub.add_parser("member")
    p.add_argument("--admin", required=True)
    p.add_argument("accounts", nargs="+")
    p = sub.add_parser("section")
    p.add_argument("--admin", required=True)
    p.add_argument("name")
    for name in ("thread", "reply", "edit", "ban", "delete", "cookie", "close"):
        p = sub.add_parser(name)
        p.add_argument("--as", dest="who", required=True)
        if name == "thread":
            p.add_argument("--fid", type=int, required=True)
            p.add_argument("--subject", required=True)
        if name in ("reply", "edit", "ban", "delete", "close"):
            p.add_argument("--tid", type=int, required=True)
        if name in ("edit", "ban", "delete"):
            p.add_argument("--pid", type=int, action="append", required=True)
        if name in ("thread", "reply", "edit"):
            p.add_argument("--message", required=True)
        if name == "reply":
            p.add_argument("--repquote", type=int)
    a = ap.parse_args(argv)
    if a.cmd == "install":
        Browser(a.base).install(a.db, a.db_user, a.db_pass, a.db_name, a.founder, a.founder_pw)
        print("安装完成")
        return 0
    if a.cmd in ("member", "section"):
        name, pw = _pair(a.admin)
        b = member(a.base, name, pw)
        b.enter_admin(pw)
        if a.cmd == "section":
            print(b.add_section(a.name))
        for acc in getattr(a, "accounts", []):
            print(acc.split(":")[0], b.add_member(*_pair(acc)))
        return 0
    b = member(a.base, *_pair(a.who))
    if a.cmd == "thread":
        print(b.new_thread(a.fid, a.subject, a.message)[0])
    elif a.cmd == "reply":
        print(b.reply(a.tid, a.message, a.repquote)[0])
    elif a.cmd == "edit":
        print(b.edit(a.tid, a.pid[0], a.message))
    elif a.cmd == "ban":
        print(b.ban(a.tid, a.pid))
    elif a.cmd == "delete":
        print(b.delete(a.tid, a.pid))
    elif a.cmd == "close":
        print(b.close_thread(a.tid))
    elif a.cmd == "cookie":
        print(b.cookie_header())
    return 0


if __name__ == "__main__":
    sys.exit(main())
