"""Shared pytest fixtures.

The Discuz! X3.5 page samples live in the repository, in ``tests/fixtures/discuz`` (how each was
made and its ground truth: README.md and manifest.json there; loaded by tests/discuz_samples.py).
Tests that read them take the ``fixtures_dir`` fixture; a missing sample is a failure.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.discuz_samples import SAMPLES

FIXTURES_DIR = SAMPLES


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The folder of Discuz page samples (``tests/fixtures/discuz``)."""
    assert (FIXTURES_DIR / "manifest.json").is_file(), f"no page samples manifest in {FIXTURES_DIR}"
    return FIXTURES_DIR


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
