"""``parse_viewthread`` reads every sample desktop thread page exactly as recorded.

The records of each page (every field of every post, the pager, subject, formhash and extras)
are kept in ``viewthread_records.json`` beside this file, keyed by the SHA-256 of the page's
bytes, so the parser's shortcuts (what lexbor is given, how a post's parts are found) are held
to the same output on every real page. Each page is read as the crawler reads it: with the
charset of its response header and the time of its ``Date`` header.

A page whose bytes are new (a re-captured sample) has no record yet; record the current output
after checking it with::

    python tests/parsers/test_viewthread_speedups.py --write SAMPLES_DIR
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import sys
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

import parsers.viewthread as viewthread
from parsers.records import ThreadPage
from parsers.viewthread import parse_viewthread

TZ = ZoneInfo("Asia/Shanghai")
TID = 1  # the tid is only copied into the records
RECORDS = Path(__file__).with_name("viewthread_records.json")


def thread_pages(root: Path) -> list[Path]:
    """Every desktop page holding a post list (thread pages, author-only pages, re-encodings)."""
    return [
        path
        for path in sorted((root / "desktop").rglob("*.html"))
        if b'id="postlist"' in path.read_bytes()
    ]


def _response_header(path: Path) -> str:
    for suffix in (".headers", ".head"):
        header = path.with_name(path.name + suffix)
        if header.is_file():
            return header.read_text(encoding="utf-8")
    raise AssertionError(f"{path.name}: no response header file beside it")


def parse_sample(path: Path) -> ThreadPage:
    header = _response_header(path)
    date = re.search(r"^Date: (.+?)\r?$", header, re.M)
    assert date, f"{path.name}: no Date header"
    now = datetime.strptime(date.group(1), "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    charset = re.search(r"^Content-Type:.*charset=([\w-]+)", header, re.M | re.I)
    encoding = charset.group(1) if charset else None
    return parse_viewthread(path.read_bytes(), tid=TID, tz=TZ, now=now, encoding=encoding)


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def page_record(page: ThreadPage) -> dict[str, Any]:
    """The page's records as JSON values (dates in ISO form with their offset)."""
    record: dict[str, Any] = _plain(dataclasses.asdict(page))
    return record


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_every_sample_thread_page_reads_as_recorded(fixtures_dir: Path) -> None:
    recorded = json.loads(RECORDS.read_text(encoding="utf-8"))
    pages = thread_pages(fixtures_dir)
    assert len(pages) >= 20, fixtures_dir
    for path in pages:
        entry = recorded.get(_digest(path))
        assert entry is not None, f"{path.name}: no recorded records for these bytes"
        got = page_record(parse_sample(path))
        want = entry["page"]
        for index, (mine, theirs) in enumerate(zip(got["posts"], want["posts"], strict=False)):
            assert mine == theirs, f"{path.name}: post {index} (pid {theirs['pid']})"
        assert got == want, path.name


def main() -> int:
    parser = argparse.ArgumentParser(description="record the sample pages' records")
    parser.add_argument("--write", type=Path, metavar="SAMPLES_DIR", required=True)
    args = parser.parse_args()
    recorded = json.loads(RECORDS.read_text(encoding="utf-8")) if RECORDS.is_file() else {}
    for path in thread_pages(args.write):
        recorded[_digest(path)] = {"name": path.name, "page": page_record(parse_sample(path))}
        print(path.name)
    RECORDS.write_text(
        json.dumps(recorded, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())


# --------------------------------------------------------------------------- post footers


def _sample(fixtures_dir: Path, *names: str) -> Path:
    """The first of ``names`` present among the samples (their file names differ by capture)."""
    for name in names:
        found = sorted((fixtures_dir / "desktop").rglob(name))
        if found:
            return found[0]
    raise AssertionError(f"none of {names} in {fixtures_dir}")


def _vote_page(fixtures_dir: Path) -> Path:
    return _sample(fixtures_dir, "vote_t4_p1_guest.html", "vote-page1-anon.html")


def _cut_and_whole(
    body: bytes, path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[ThreadPage, ThreadPage]:
    """The page parsed as shipped, and parsed whole (nothing of any post left out)."""
    cut = _parse_body(body, path)
    with monkeypatch.context() as m:
        m.setattr(viewthread, "_without_profiles", lambda part: part)
        whole = _parse_body(body, path)
    return cut, whole


def _parse_body(body: bytes, path: Path) -> ThreadPage:
    header = _response_header(path)
    date = re.search(r"^Date: (.+?)\r?$", header, re.M)
    assert date
    now = datetime.strptime(date.group(1), "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=UTC)
    return parse_viewthread(body, tid=TID, tz=TZ, now=now)


def test_the_rows_below_each_message_are_left_out(fixtures_dir: Path) -> None:
    """All but the first post's (which holds the 支持/反对 box, ``id="p_btn"``)."""
    body = _vote_page(fixtures_dir).read_bytes()
    cards = viewthread._without_cards(viewthread._thread_part(body))
    lean = viewthread._without_profiles(viewthread._thread_part(body))
    assert cards.count(b'<tr><td class="plc plm">') == 10
    assert lean.count(b'<tr><td class="plc plm">') == 1
    assert lean.count(b'<tr id="_postposition') == 1 and b'id="p_btn"' in lean
    assert lean.count(b'id="postmessage_') == 10


FORGED_FOOTERS = [
    # the footer's rows in a message, as Discuz writes them (an author who may post HTML)
    '</td></tr>\n<tr><td class="plc plm"></td></tr><tr id="_postposition999"></tr>投票对象：油条',
    # the same inside a table of the message's own: the cut stays in that table
    '<table><tr><td>投票对象：油条</td></tr>\n<tr><td class="plc plm">'
    '<tr id="_postposition999"></tr>投票对象：包子</td></tr></table>改票对象：烧卖',
    # the first row only
    '</td></tr>\n<tr><td class="plc plm">投票对象：油条',
]


@pytest.mark.parametrize("forged", FORGED_FOOTERS)
def test_a_message_imitating_the_footer_leaves_every_other_post_as_on_the_whole_page(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch, forged: str
) -> None:
    path = _vote_page(fixtures_dir)
    body = path.read_bytes()
    anchor = re.search(rb'id="postmessage_(\d+)">', body[body.index(b'id="postmessage_') + 1 :])
    assert anchor is not None
    pid = int(anchor.group(1))
    body = body.replace(anchor.group(0), anchor.group(0) + forged.encode("utf-8"), 1)
    cut, whole = _cut_and_whole(body, path, monkeypatch)
    assert len(cut.posts) == len(whole.posts) == 10
    assert [p for p in cut.posts if p.pid != pid] == [p for p in whole.posts if p.pid != pid]
    if "_postposition" not in forged:  # no cut is made: the page reads as a whole
        assert cut == whole


@pytest.mark.parametrize(
    "moved",
    [
        '<div class="authi"><a href="home.php?mod=space&amp;uid=77">别名</a></div>',
        '<em id="authorposton999">发表于 <span title="2026-11-29 21:04:38">刚刚</span></em>',
        '<div class="pg"><strong>2</strong><a href="x">3</a></div>',
        '<div class="pcb"><div class="locked">提示: 该帖被管理员或版主屏蔽</div></div>',
    ],
)
def test_a_footer_holding_something_the_parser_reads_is_kept(
    fixtures_dir: Path, monkeypatch: pytest.MonkeyPatch, moved: str
) -> None:
    """A theme that puts the author link, the time, a pager or a notice below the message."""
    path = _vote_page(fixtures_dir)
    body = path.read_bytes()
    row = body.rindex(b'<tr id="_postposition')
    body = body[:row] + moved.encode("utf-8") + body[row:]
    lean = viewthread._without_profiles(viewthread._thread_part(body))
    assert moved.encode("utf-8") in lean
    cut, whole = _cut_and_whole(body, path, monkeypatch)
    assert cut == whole
