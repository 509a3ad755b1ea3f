"""The type checker's verdict is part of the suite: all of bansha's code — ``parsers/`` and
``engine/`` (the pure core every verdict comes from) and ``pipeline/`` (the I/O around it) —
passes ``mypy --strict`` (``strict = true`` in pyproject.toml) with no exception and no
baseline. A new error fails the suite and names its file and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("parsers", "engine", "pipeline")

pytestmark = pytest.mark.timeout(300)


def test_all_of_bansha_passes_mypy_strict() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", *PACKAGES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, f"mypy {' '.join(PACKAGES)}:\n{proc.stdout}{proc.stderr}"
