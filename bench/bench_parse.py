"""Parse benchmark: ``parse_viewthread`` vs a BeautifulSoup(lxml) baseline vs a bare lexbor parse.

Run from the repository root::

    python bench/bench_parse.py [--repeats N]

All three read the same real desktop thread pages (tests/fixtures/discuz/desktop: every
``vote-*`` / ``discussion-*`` thread page and the GBK re-encoding, read with its header's charset
as the crawler does). The baseline extracts the same
fields as the parser (pid, floor, author, uid, time, message HTML, visible text without
quotes, quoted pids, edit note, colour/size marks, current/total page, subject, formhash) and is
checked to agree with it before timing. Each method is timed over all pages, the methods
interleaved, best of N runs; the ratios are printed side by side.

Nested markup: the first vote page with ``[align=center]`` (rendered
``<div align="center">``) nested 100 and 800 deep at the start of each of its 10 posts, parsed
by ``parse_viewthread`` and by bare lexbor; the 800/100 time ratios are printed side by side
(linear work: about 8; the quadratic walk of before made it about 40).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from bs4 import BeautifulSoup, Tag
from selectolax.lexbor import LexborHTMLParser

from parsers.records import ThreadPage
from parsers.viewthread import parse_viewthread

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "discuz"
TZ = ZoneInfo("Asia/Shanghai")
FLOOR_NAMES = {"楼主": 1, "沙发": 2, "板凳": 3, "地板": 4}


# --------------------------------------------------------------------------- pages


class Page:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.body = path.read_bytes()
        headers = path.with_name(path.name + ".head").read_text(encoding="utf-8")
        date = re.search(r"^Date: (.+?)\r?$", headers, re.M)
        charset = re.search(r"charset=([\w-]+)", headers)
        self.now = (
            datetime.strptime(date.group(1), "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
            if date
            else datetime.now(UTC)
        )
        self.charset = charset.group(1) if charset else "utf-8"
        manifest = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
        thread = "vote" if path.name.startswith("vote") else "discussion"
        self.tid = int(manifest["threads"][thread]["tid"])


def thread_pages(root: Path) -> list[Page]:
    desktop = root / "desktop"
    thread_page = re.compile(r"(vote|discussion)-(page\d|only)-")
    paths = [p for p in sorted(desktop.glob("*.html")) if thread_page.match(p.name)]
    paths += sorted((desktop / "gbk").glob("*.html"))
    return [Page(p) for p in paths]


# --------------------------------------------------------------------------- BS4 baseline

_UID = re.compile(r"uid=(\d+)")
_PID = re.compile(r"[?&;]pid=(\d+)")
_EDIT = re.compile(r"本帖最后由\s*(.+?)\s*于\s*(\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{2})\s*编辑")
_TIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})")


def _text(node: Tag) -> str:
    for br in node.find_all("br"):
        br.replace_with("\n")
    lines = [" ".join(line.split()) for line in node.get_text().split("\n")]
    return "\n".join(line for line in lines if line)


def bs4_parse(page: Page) -> dict[str, Any]:
    soup = BeautifulSoup(page.body, "lxml", from_encoding=page.charset.replace("gbk", "gb18030"))
    posts = []
    for table in soup.select("#postlist table[id^=pid]"):
        pid = int(table["id"][3:])
        link = table.select_one("a[id^=postnum]")
        floor = None
        if link is not None:
            em = link.find("em")
            label = link.get_text(strip=True)
            floor = int(em.get_text()) if em is not None else FLOOR_NAMES.get(label)
        author_link = table.select_one("div.authi a[href*='uid=']")
        author = author_link.get_text(strip=True) if author_link else ""
        uid = int(_UID.search(author_link["href"]).group(1)) if author_link else 0
        when = table.select_one("em[id^=authorposton] span[title]")
        posted_at = datetime(*map(int, _TIME.search(when["title"]).groups()), tzinfo=TZ)
        cell = table.select_one("td[id^=postmessage_]")
        quoted, marks, edit = [], [], None
        if cell is None:
            html, text = "", ""
        else:
            for noise in cell.select("font.jammer, div.a_pr, div.attach_nopermission"):
                noise.decompose()
            html = cell.decode_contents().strip()
            for quote in cell.select("div.quote, blockquote"):
                a = quote.select_one("a[href*=findpost]")
                if a is not None and (m := _PID.search(a["href"])):
                    quoted.append(int(m.group(1)))
                quote.decompose()
            note = cell.select_one("i.pstatus")
            if note is not None:
                found = _EDIT.search(note.get_text())
                edit = (found.group(1), found.group(2)) if found else None
                note.decompose()
            for font in cell.find_all("font"):
                if font.get("color") or font.get("size"):
                    marks.append((font.get("color"), font.get("size"), font.get_text()))
            text = _text(cell)
        posts.append((pid, floor, author, uid, posted_at, html, text, tuple(quoted), edit, marks))
    pager = soup.select_one("div.pg")
    current = int(pager.strong.get_text()) if pager and pager.strong else 1
    total_node = pager.select_one("span[title^='共']") if pager else None
    total = int(re.search(r"\d+", total_node["title"]).group(0)) if total_node else current
    subject = soup.select_one("#thread_subject")
    formhash = soup.select_one("input[name=formhash]")
    return {
        "posts": posts,
        "page": current,
        "total": total,
        "subject": subject.get_text(strip=True) if subject else None,
        "formhash": formhash["value"] if formhash else None,
    }


# --------------------------------------------------------------------------- runs


def _parse(page: Page) -> ThreadPage:
    return parse_viewthread(page.body, tid=page.tid, tz=TZ, now=page.now, encoding=page.charset)


def ours(page: Page) -> int:
    return len(_parse(page).posts)


def baseline(page: Page) -> int:
    return len(bs4_parse(page)["posts"])


def bare(page: Page) -> int:
    LexborHTMLParser(page.body)
    return 0


NESTED_DEPTHS = (100, 800)


def nested_page(page: Page, depth: int) -> Page:
    """``page`` with ``depth`` nested ``[align=center]`` around a vote at the start of every
    post's message."""
    block = ('<div align="center">' * depth + "投票对象：油条" + "</div>" * depth).encode()
    copy = Page(page.path)
    copy.body = re.sub(rb'(id="postmessage_\d+">)', lambda m: m.group(1) + block, page.body)
    return copy


def nested_times(page: Page, repeats: int) -> dict[tuple[str, int], float]:
    """Best time of ``parse_viewthread`` and of bare lexbor on ``page`` nested 100 and 800 deep."""
    pages = {depth: nested_page(page, depth) for depth in NESTED_DEPTHS}
    for depth, nested in pages.items():
        parsed = _parse(nested).posts
        assert len(parsed) == 10 and all(len(p.marks) >= depth for p in parsed), depth
    methods = {"parse_viewthread": ours, "LexborHTMLParser (bare)": bare}
    best: dict[tuple[str, int], float] = {}
    for depth, nested in pages.items():
        for name, seconds in best_times(methods, [nested], repeats).items():
            best[name, depth] = seconds
    return best


def check_same_fields(pages: list[Page]) -> None:
    """The baseline must do the parser's job: same posts, same essentials."""
    for page in pages:
        mine = _parse(page)
        theirs = bs4_parse(page)
        got = [(p.pid, p.floor, p.author, p.uid, p.posted_at, p.quoted_pids) for p in mine.posts]
        want = [(p[0], p[1], p[2], p[3], p[4], p[7]) for p in sorted(theirs["posts"])]
        assert got == want, f"baseline disagrees on {page.path.name}"
        assert (mine.page, mine.total_pages, mine.subject, mine.formhash) == (
            theirs["page"],
            theirs["total"],
            theirs["subject"],
            theirs["formhash"],
        ), page.path.name


def run_times(
    methods: dict[str, Callable[[Page], int]], pages: list[Page], repeats: int
) -> dict[str, list[float]]:
    """The seconds of each of ``repeats`` runs of each method over all ``pages``."""
    times: dict[str, list[float]] = {name: [] for name in methods}
    for _ in range(repeats):
        for name, method in methods.items():  # interleaved: machine load hits all alike
            start = time.perf_counter()
            for page in pages:
                method(page)
            times[name].append(time.perf_counter() - start)
    return times


def best_times(
    methods: dict[str, Callable[[Page], int]], pages: list[Page], repeats: int
) -> dict[str, float]:
    return {name: min(t) for name, t in run_times(methods, pages, repeats).items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="runs per method (best is kept)")
    args = parser.parse_args()
    pages = thread_pages(FIXTURES)
    posts = sum(ours(page) for page in pages)
    check_same_fields(pages)
    for page in pages:  # warm up imports and caches
        ours(page)
        bare(page)
    times = best_times(
        {
            "parse_viewthread": ours,
            "BeautifulSoup(lxml)": baseline,
            "LexborHTMLParser (bare)": bare,
        },
        pages,
        args.repeats,
    )
    size = sum(len(page.body) for page in pages)
    print(
        f"{len(pages)} desktop thread pages, {posts} posts, {size / 1024:.0f} KiB; "
        f"best of {args.repeats} interleaved runs"
    )
    print(f"{'method':<26}{'ms/run':>10}{'posts/s':>12}")
    for name, seconds in times.items():
        print(f"{name:<26}{seconds * 1000:>10.2f}{posts / seconds:>12,.0f}")
    mine = times["parse_viewthread"]
    vs_bs4 = times["BeautifulSoup(lxml)"] / mine
    vs_bare = mine / times["LexborHTMLParser (bare)"]
    print(
        f"ours/BS4: {vs_bs4:.1f}x faster (target >= 30x)   "
        f"ours/bare: {vs_bare:.2f}x the bare parse time (target <= 1.5x)"
    )
    first = next(page for page in pages if page.path.name == "vote-page1-anon.html")
    nested = nested_times(first, args.repeats)
    low, high = NESTED_DEPTHS
    print(
        f"nested [align] in the 10 posts of {first.path.name}: "
        f"depth {low} vs {high}, best of {args.repeats}"
    )
    print(f"{'method':<26}{f'{low} deep ms':>14}{f'{high} deep ms':>14}{'ratio':>9}")
    for name in ("parse_viewthread", "LexborHTMLParser (bare)"):
        a, b = nested[name, low], nested[name, high]
        print(f"{name:<26}{a * 1000:>14.2f}{b * 1000:>14.2f}{b / a:>8.1f}x")
    times = high // low
    print(f"(depth x{times}: linear work is about {times}x, quadratic {times * times}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
