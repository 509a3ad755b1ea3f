#!/usr/bin/env python3
"""Replay the test game on a fresh Discuz! X3.5 and save what the forum served.

  capture.py --work WORK [--out tests/fixtures/discuz]

WORK is the folder ``dzforum.sh up WORK`` stood the forum up in (its base_url, database socket
and document root are read from there). The game comes from ``game_script.json`` beside this
file: members, two sections, a vote thread, a discussion thread, a members-only thread and a
thread for reply submissions. Every post goes through HTTP as its author (回复 with
``repquote`` for quote replies, an author's edit more than 60 s after posting, an admin's 屏蔽
and delete). Then the pages are fetched as a guest and as a member and saved byte for byte,
each with a ``.head`` file (status line and headers). ``manifest.json`` records the ground
truth read back from the database: pids, positions, the stored BBCode, what was edited,
blocked or deleted, and which URL each file came from.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dzdriver import Browser, DriverError, Reply

HERE = Path(__file__).resolve().parent
FOUNDER = ("admin", "admin123456")
LOOKER = "饺子"  # the member whose logged-in views are saved


class Capture:
    def __init__(self, work: Path, out: Path, founder: tuple[str, str]) -> None:
        self.work = work
        self.out = out
        self.base = (work / "base_url").read_text().strip()
        self.docroot = work / "htdocs"
        self.founder = founder
        self.script = json.loads((HERE / "game_script.json").read_text(encoding="utf-8"))
        self.browsers: dict[str, Browser] = {}
        self.files: dict[str, dict] = {}
        self.log: list[str] = []
        self.pid_of: dict[str, int] = {}
        self.posted_at: dict[str, float] = {}
        self.tids: dict[str, int] = {}
        self.fids: dict[str, int] = {}
        self.steps: list[str] = []
        self.guest = Browser(
            self.base
        )  # one visitor's cookies for every guest page, as a reader has

    # --- the forum's insides (read back only; nothing is written to the DB by hand except viewperm)
    def sql(self, query: str) -> list[list[str]]:
        done = subprocess.run(
            [
                "mariadb",
                "--no-defaults",
                f"--socket={self.work}/pids/db.sock",
                "-uroot",
                "dz",
                "--batch",
                "--raw",
                "--skip-column-names",
                "-e",
                query,
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        return [line.split("\t") for line in done.stdout.splitlines()]

    def setting(self, **pairs: object) -> None:
        subprocess.run(
            [
                "runuser",
                "-u",
                "www-data",
                "--",
                "php",
                str(HERE / "dzsettings.php"),
                str(self.docroot),
                "set",
                *(f"{k}={v}" for k, v in pairs.items()),
            ],
            check=True,
            capture_output=True,
        )
        self.steps.append("setting " + " ".join(f"{k}={v}" for k, v in pairs.items()))

    def recache(self) -> None:
        subprocess.run(
            [
                "runuser",
                "-u",
                "www-data",
                "--",
                "php",
                str(HERE / "dzsettings.php"),
                str(self.docroot),
                "recache",
            ],
            check=True,
            capture_output=True,
        )

    def who(self, name: str) -> Browser:
        if name not in self.browsers:
            b = Browser(self.base)
            b.login(name, self.founder[1] if name == self.founder[0] else self.script["password"])
            self.browsers[name] = b
        return self.browsers[name]

    # --- saving
    def save(self, name: str, reply: Reply, what: str) -> None:
        path = self.out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(reply.body)
        (self.out / (name + ".head")).write_text(reply.head_text(), encoding="utf-8")
        url = reply.url.replace(self.base, "")
        self.files[name] = {"url": url, "status": reply.status, "what": what}
        self.log.append(f"{name} <- {url} [{reply.status}]")

    def get(self, name: str, path: str, what: str, as_: str | None = None) -> Reply:
        b = self.who(as_) if as_ else self.guest
        got = b.fetch(path)
        self.save(name, got, what + ("（登录：" + as_ + "）" if as_ else "（游客）"))
        return got

    # --- the game
    def setup(self) -> None:
        admin = self.who(self.founder[0])
        admin.enter_admin(self.founder[1])
        for member in self.script["members"]:
            admin.add_member(member, self.script["password"])
        for key, name in self.script["sections"].items():
            self.fids[key] = admin.add_section(name)
        # the members-only section: guests (group 7) may not view it, as its 版块权限 would say
        groups = [
            g for (g,) in self.sql("SELECT groupid FROM pre_common_usergroup WHERE groupid <> 7")
        ]
        perm = "\t" + "\t".join(groups) + "\t"
        self.sql(
            f"UPDATE pre_forum_forumfield SET viewperm='{perm}' WHERE fid={self.fids['restricted']}"
        )
        self.recache()
        self.steps.append(
            f"section {self.fids['restricted']} viewperm = every group but guests (7)"
        )

    def play_thread(self, thread: dict) -> None:
        fid = self.fids[thread["section"]]
        first, *rest = thread["posts"]
        tid, _ = self.who(first["author"]).new_thread(fid, thread["subject"], first["message"])
        self.tids[thread["key"]] = tid
        self.pid_of[first["ref"]] = int(
            self.sql(f"SELECT pid FROM pre_forum_post WHERE tid={tid} AND first=1")[0][0]
        )
        self.posted_at[first["ref"]] = time.time()
        for post in rest:
            quote = self.pid_of[post["quote"]] if post.get("quote") else None
            pid, _ = self.who(post["author"]).reply(tid, post["message"], quote)
            self.pid_of[post["ref"]] = pid
            self.posted_at[post["ref"]] = time.time()

    def after_effects(self, thread: dict) -> None:
        tid = self.tids[thread["key"]]
        for post in thread["posts"]:
            if post.get("edit_to"):
                wait = self.posted_at[post["ref"]] + 65 - time.time()
                if wait > 0:
                    time.sleep(wait)  # Discuz marks an author's edit only after 60 s
                self.who(post["author"]).edit(tid, self.pid_of[post["ref"]], post["edit_to"])
        admin = self.who(self.founder[0])
        for post in thread["posts"]:
            if post.get("ban"):
                admin.ban(tid, [self.pid_of[post["ref"]]])
        for post in thread["posts"]:
            if post.get("delete"):
                admin.delete(tid, [self.pid_of[post["ref"]]])

    def submissions(self) -> None:
        """Reply submissions to the scratch thread: their answers are what the poster reads."""
        tid = self.tids["scratch"]
        fid = self.fids["main"]
        me = self.who(LOOKER)
        self.get(
            "misc/scratch-replyform-anon.html",
            f"forum.php?mod=post&action=reply&fid={fid}&tid={tid}",
            "回复表单",
        )
        form = self.get(
            "misc/scratch-replyform-member.html",
            f"forum.php?mod=post&action=reply&fid={fid}&tid={tid}",
            "回复表单",
            LOOKER,
        )
        target = f"forum.php?mod=post&action=reply&fid={fid}&tid={tid}&extra=&replysubmit=yes"
        referer = f"{self.base}forum.php?mod=viewthread&tid={tid}"

        def submit(
            name: str, message: str, what: str, *, ajax: bool = False, formhash: str | None = None
        ) -> Reply:
            page = me.fetch(f"forum.php?mod=post&action=reply&fid={fid}&tid={tid}").text
            fields = {
                "formhash": formhash or me.formhash(page),
                "posttime": str(int(time.time())),
                "wysiwyg": "0",
                "message": message,
                "usesig": "1",
                "subject": "",
            }
            url = target + ("&handlekey=fastpost&loc=1&inajax=1" if ajax else "")
            got = me.fetch(url, fields, referer=referer)
            self.save(name, got, what)
            self.files[name]["sent_message"] = message
            m = re.search(r"pid=(\d+)", got.header("Location") + got.text)
            if m and ("成功" in got.text or got.status == 301 or "succeed" in got.text):
                self.files[name]["pid"] = int(m.group(1))
            return got

        assert form.status == 200
        self.setting(floodctrl=3)
        submit(
            "misc/submit-ok-redirect.html",
            "抓包：这是一条成功的回复，不计票。",
            "回帖成功（普通表单，301 到新帖）",
        )
        submit(
            "misc/submit-refused-flood.html",
            "抓包：紧接着再发一条，应触发灌水预防。",
            "灌水预防拒绝",
        )
        self.setting(floodctrl=0)
        submit(
            "misc/submit-refused-formhash.html",
            "抓包：formhash 错误的提交。",
            "formhash 错误",
            formhash="0badf00d",
        )
        self.setting(minpostsize=10)
        submit("misc/submit-refused-short.html", "短", "字数不足拒绝")
        self.setting(minpostsize=1)
        submit(
            "misc/submit-refused-hide.html",
            "[hide]抓包：无权使用hide代码[/hide]",
            "无权使用 [hide] 拒绝",
        )
        submit(
            "misc/submit-ok-fastpost.xml",
            "抓包：inajax=1 的快速回复（fastpost）成功。",
            "快速回复成功（inajax）",
            ajax=True,
        )

    # --- the pages
    def pages(self) -> None:
        vote, disc, restricted = self.tids["vote"], self.tids["discussion"], self.tids["restricted"]
        fid, rfid = self.fids["main"], self.fids["restricted"]
        pages = {"vote": (vote, 3), "discussion": (disc, 5)}
        for key, (tid, n) in pages.items():
            for page in range(1, n + 1):
                self.get(
                    f"desktop/{key}-page{page}-anon.html",
                    f"forum.php?mod=viewthread&tid={tid}&page={page}",
                    f"{key} 帖第 {page} 页",
                )
                self.get(
                    f"desktop/{key}-page{page}-member.html",
                    f"forum.php?mod=viewthread&tid={tid}&page={page}",
                    f"{key} 帖第 {page} 页",
                    LOOKER,
                )
            self.get(
                f"desktop/{key}-print-anon.html",
                f"forum.php?mod=viewthread&action=printable&tid={tid}",
                f"{key} 帖打印版",
            )
            self.get(
                f"desktop/{key}-archiver-anon.html",
                f"archiver/?tid-{tid}.htm",
                f"{key} 帖 archiver",
            )
            self.get(
                f"desktop/{key}-archiver-page2-anon.html",
                f"archiver/?tid-{tid}.htm&page=2",
                f"{key} 帖 archiver 第 2 页",
            )
            for ver in (1, 2, 3, 4):
                for page in range(1, n + 1):
                    self.get(
                        f"mobile/{key}-api{ver}-page{page}-anon.json",
                        f"api/mobile/index.php?version={ver}&module=viewthread&tid={tid}&page={page}",
                        f"手机 API v{ver} {key} 帖第 {page} 页",
                    )
            for page in range(1, 2 if key == "discussion" else n + 1):
                self.get(
                    f"mobile/{key}-api4-page{page}-member.json",
                    f"api/mobile/index.php?version=4&module=viewthread&tid={tid}&page={page}",
                    f"手机 API v4 {key} 帖第 {page} 页",
                    LOOKER,
                )
        uid_tangyuan = self.uid("汤圆")
        uid_jiaozi = self.uid("饺子")
        self.get(
            "desktop/vote-only-tangyuan-anon.html",
            f"forum.php?mod=viewthread&tid={vote}&page=1&authorid={uid_tangyuan}",
            "vote 帖只看汤圆",
        )
        self.get(
            "desktop/discussion-only-jiaozi-anon.html",
            f"forum.php?mod=viewthread&tid={disc}&page=1&authorid={uid_jiaozi}",
            "discussion 帖只看饺子",
        )
        self.get(
            "desktop/vote-page4-pastend-anon.html",
            f"forum.php?mod=viewthread&tid={vote}&page=4",
            "vote 帖越过末页",
        )
        self.get(
            "desktop/section-list-anon.html",
            f"forum.php?mod=forumdisplay&fid={fid}",
            "版块帖子列表",
        )
        self.get(
            "desktop/section-list-member.html",
            f"forum.php?mod=forumdisplay&fid={fid}",
            "版块帖子列表",
            LOOKER,
        )
        self.get("desktop/section-archiver-anon.html", f"archiver/?fid-{fid}.htm", "版块 archiver")
        for ver in (1, 2, 3, 4):
            self.get(
                f"mobile/section-api{ver}-anon.json",
                f"api/mobile/index.php?version={ver}&module=forumdisplay&fid={fid}",
                f"手机 API v{ver} 版块列表",
            )
        self.get(
            "mobile/section-api4-member.json",
            f"api/mobile/index.php?version=4&module=forumdisplay&fid={fid}",
            "手机 API v4 版块列表",
            LOOKER,
        )
        self.get(
            "mobile/vote-api4-only-tangyuan-anon.json",
            f"api/mobile/index.php?version=4&module=viewthread&tid={vote}&authorid={uid_tangyuan}",
            "手机 API v4 只看汤圆",
        )
        self.get(
            "mobile/vote-api4-ppp30-anon.json",
            f"api/mobile/index.php?version=4&module=viewthread&tid={vote}&page=1&ppp=30",
            "手机 API v4 一页 30 帖",
        )
        self.get(
            "mobile/members-only-api4-anon.json",
            f"api/mobile/index.php?version=4&module=viewthread&tid={restricted}",
            "手机 API v4 游客看会员版块",
        )
        self.get(
            "misc/members-only-thread-anon.html",
            f"forum.php?mod=viewthread&tid={restricted}",
            "游客看会员版块的帖子",
        )
        self.get(
            "misc/members-only-thread-member.html",
            f"forum.php?mod=viewthread&tid={restricted}",
            "会员看会员版块的帖子",
            LOOKER,
        )
        self.get(
            "misc/members-only-section-anon.html",
            f"forum.php?mod=forumdisplay&fid={rfid}",
            "游客看会员版块",
        )
        self.get(
            "misc/no-such-thread-anon.html", "forum.php?mod=viewthread&tid=9999", "不存在的帖子"
        )
        self.get("misc/login-page-anon.html", "member.php?mod=logging&action=login", "登录页")
        self.get(
            "misc/vote-touch-view-anon.html",
            f"forum.php?mod=viewthread&tid={vote}&page=1&mobile=2",
            "触屏版（被重定向）",
        )
        self.gbk_copy("desktop/vote-page1-anon.html", "desktop/gbk/vote-page1-anon-gbk.html")

    def gbk_copy(self, src: str, dst: str) -> None:
        """A GBK forum's page, made from the UTF-8 one (not served: Discuz here is UTF-8)."""
        text = (self.out / src).read_text(encoding="utf-8")
        text = re.sub(r"charset=utf-8", "charset=gbk", text, flags=re.I)
        path = self.out / dst
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("gbk", errors="xmlcharrefreplace"))
        head = (self.out / (src + ".head")).read_text(encoding="utf-8")
        (self.out / (dst + ".head")).write_text(
            re.sub(r"charset=utf-8", "charset=gbk", head, flags=re.I), encoding="utf-8"
        )
        self.files[dst] = {
            "url": None,
            "status": 200,
            "what": f"{src} 用 Python 转成 GBK（非服务器所发；GBK 外的字符成了 &#NNNN;）",
            "made_from": src,
        }

    def uid(self, name: str) -> int:
        return int(self.sql(f"SELECT uid FROM pre_common_member WHERE username='{name}'")[0][0])

    # --- ground truth
    def first_view_after_delete(self) -> None:
        """The first guest view after a delete may answer 302 to itself: keep that answer."""
        disc = self.tids["discussion"]
        self.get(
            "misc/discussion-page2-first-after-delete-anon.html",
            f"forum.php?mod=viewthread&tid={disc}&page=2",
            "删帖后的第一次访问",
        )

    def truth(self) -> dict:
        threads = {}
        for thread in self.script["threads"]:
            tid = self.tids[thread["key"]]
            rows = self.sql(
                "SELECT pid, position, author, authorid, invisible, status, first, dateline, "
                f"REPLACE(REPLACE(message, '\\\\', '\\\\\\\\'), '\\n', '\\\\n') "
                f"FROM pre_forum_post WHERE tid={tid} ORDER BY position"
            )
            by_pid = {int(r[0]): r for r in rows}
            posts = []
            for post in thread["posts"]:
                pid = self.pid_of[post["ref"]]
                r = by_pid[pid]
                entry = {k: v for k, v in post.items() if k not in ("message",)}
                entry.update(
                    {
                        "pid": pid,
                        "author": r[2],
                        "uid": int(r[3]),
                        "sent_message": post["message"],
                        "db_position": int(r[1]),
                        "db_invisible": int(r[4]),
                        "db_status": int(r[5]),
                        "dateline": int(r[7]),
                        "stored_message": r[8]
                        .encode()
                        .decode("unicode_escape")
                        .encode("latin-1")
                        .decode("utf-8"),
                        "edited": bool(post.get("edit_to")),
                        "blocked": bool(int(r[5]) & 1),
                        "deleted": int(r[4]) == -5,
                        "quoted": "[quote]" in r[8],
                    }
                )
                if post.get("quote"):
                    entry["replied_to_pid"] = self.pid_of[post["quote"]]
                entry["floor_at_post_time"] = entry["db_position"]
                if post.get("edit_to"):
                    entry["edited_message_sent"] = post["edit_to"]
                    entry["target_after_edit"] = post.get("target")
                posts.append(entry)
            shown = [p for p in posts if not p["deleted"]]
            for n, p in enumerate(shown, 1):
                p["floor"] = n
                p["floor_displayed"] = {1: "楼主", 2: "沙发", 3: "板凳", 4: "地板"}.get(n, f"{n}#")
                p["desktop_page"] = (n - 1) // 10 + 1
            for p in posts:
                if p["deleted"]:
                    p.update(floor=None, floor_displayed=None, desktop_page=None)
            threads[thread["key"]] = {
                "tid": tid,
                "fid": self.fids[thread["section"]],
                "subject": thread["subject"],
                "section": self.script["sections"][thread["section"]],
                "posts": posts,
            }
        users = {
            name: {"uid": self.uid(name), "password": self.script["password"]}
            for name in self.script["members"]
        }
        users[self.founder[0]] = {"uid": self.uid(self.founder[0]), "password": self.founder[1]}
        commit = (
            (self.work / "source_commit").read_text().strip()
            if (self.work / "source_commit").exists()
            else None
        )
        versions = {
            "php": subprocess.run(
                ["php", "-r", "echo PHP_VERSION;"], capture_output=True, text=True
            ).stdout,
            "nginx": subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip(),
            "mariadb": subprocess.run(
                ["mariadbd", "--version"], capture_output=True, text=True
            ).stdout.strip(),
        }
        return {
            "server": {
                "base_url": self.base,
                "discuz": "Discuz! X3.5 UTF-8",
                "source_commit": commit,
                **versions,
            },
            "captured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "forum": {"fid": self.fids["main"], "name": self.script["sections"]["main"]},
            "restricted_forum": {
                "fid": self.fids["restricted"],
                "name": self.script["sections"]["restricted"],
            },
            "looker": LOOKER,
            "users": users,
            "threads": threads,
            "settings": self.steps,
            "files": self.files,
        }

    def run(self) -> None:
        self.setup()
        for thread in self.script["threads"]:
            self.play_thread(thread)
        for thread in self.script["threads"]:
            self.after_effects(thread)
        self.first_view_after_delete()
        self.submissions()
        self.pages()
        manifest = self.truth()
        (self.out / "manifest.json").write_text(
            json.dumps(manifest, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )
        (self.out / "capture-log.txt").write_text("\n".join(self.log) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--work", required=True, type=Path, help="dzforum.sh up 用的工作目录（必须是新装的论坛）"
    )
    ap.add_argument("--out", type=Path, default=HERE.parents[2] / "tests" / "fixtures" / "discuz")
    ap.add_argument("--founder", default=":".join(FOUNDER), help="站长 名字:密码")
    a = ap.parse_args(argv)
    name, _, pw = a.founder.partition(":")
    cap = Capture(a.work.resolve(), a.out.resolve(), (name, pw))
    if cap.sql("SELECT COUNT(*) FROM pre_forum_post")[0][0] != "0":
        print("这个论坛已经有帖子：抓包需要新装的论坛（另开一个 WORK 目录）", file=sys.stderr)
        return 1
    t0 = time.time()
    try:
        cap.run()
    except DriverError as err:
        print(f"抓包中断：{err}", file=sys.stderr)
        return 1
    print(f"保存了 {len(cap.files)} 个文件到 {a.out}（{time.time() - t0:.0f} 秒）")
    return 0


if __name__ == "__main__":
    sys.exit(main())
