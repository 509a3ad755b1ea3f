"""The live suite runs only against a real forum: every test here is skipped unless
``BANSHA_LIVE_URL`` names one (see README.md beside this file)."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live.support import Bansha, Forum

SKIP = (
    "BANSHA_LIVE_URL 未设置：真实论坛测试需要一个 Discuz! X3.5"
    "（bash tests/live/forum/dzforum.sh up WORK，见 tests/live/README.md）"
)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if not os.environ.get("BANSHA_LIVE_URL"):
        pytest.skip(SKIP)


@pytest.fixture(scope="session")
def forum() -> Forum:
    """The forum, its founder in the admin panel, the director and the 12 players."""
    return Forum.connect(dict(os.environ))


@pytest.fixture
def fid(forum: Forum) -> int:
    """A new section for this test alone."""
    return forum.section(f"版杀测试{time.time_ns() // 1_000_000 % 10**9}")


@pytest.fixture
def bansha(forum: Forum, tmp_path: Path) -> Iterator[Bansha]:
    yield Bansha(forum, tmp_path / "game.toml", tmp_path / "game.db")
