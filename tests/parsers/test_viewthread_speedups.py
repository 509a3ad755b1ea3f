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
