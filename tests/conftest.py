"""Shared pytest fixtures.

The real Discuz! X3.5 pages live beside the repository in ``../shared/fixtures/discuz`` and are
never copied into it; tests that read them take the ``fixtures_dir`` fixture and are skipped
(with the reason) when that folder is absent.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

FIXTURES_DIR = Path(__file__).resolve().parents[1] / ".." / "shared" / "fixtures" / "discuz"


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The folder of real Discuz pages (``<repo>/../shared/fixtures/discuz``)."""
    if not (FIXTURES_DIR / "manifest.json").is_file():
        pytest.skip(
            f"real Discuz fixtures not found at {FIXTURES_DIR.resolve()} "
            "(expected ../shared/fixtures/discuz beside the repository)"
        )
    return FIXTURES_DIR.resolve()


def missing_cjk_font() -> str | None:
    """Why the browser tests' screenshots could not show Chinese, or None when a CJK font is
    installed (fontconfig's ``fc-list :lang=zh``). Without one, Chromium draws every character
    as an empty box and a screenshot proves nothing."""
    if shutil.which("fc-list") is None:
        return "fontconfig (fc-list) is not installed"
    out = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, check=False
    ).stdout
    if not out.strip():
        return "no CJK font (Debian: apt-get install -y fonts-wqy-microhei)"
    return None
