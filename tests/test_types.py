"""The type checker's verdict is part of the suite.

``parsers/`` and ``engine/`` — the pure core every verdict comes from — pass ``mypy --strict``
with no exception. ``pipeline/`` is checked with mypy's defaults against a baseline kept in the
repository (``tests/typing_baseline.txt``: each file's error count), which may only shrink: a file
with more errors than its line fails the suite, and a file with fewer asks for the baseline to be
lowered, so the file always says the truth.

To rewrite the baseline after fixing errors: ``python tests/test_types.py --write``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "tests" / "typing_baseline.txt"
_ERROR = re.compile(r"^(?P<file>[\w/.-]+\.py):\d+(?::\d+)?: error: ")

pytestmark = pytest.mark.timeout(300)


def mypy(*args: str) -> tuple[int, str]:
    """Run mypy from the repository's root with the settings in pyproject.toml."""
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc.returncode, proc.stdout + proc.stderr


def error_counts(output: str) -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in output.splitlines():
        m = _ERROR.match(line)
        if m:
            counts[m.group("file").replace("\\", "/")] += 1
    return counts


def read_baseline() -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            file, _, n = line.rpartition(" ")
            counts[file] = int(n)
    return counts


def pipeline_errors() -> tuple[Counter[str], str]:
    _, out = mypy("pipeline")
    counts = error_counts(out)
    # engine/ is followed into and held to --strict by the test above
    return Counter({f: n for f, n in counts.items() if f.startswith("pipeline/")}), out


def test_the_pure_core_passes_mypy_strict() -> None:
    code, out = mypy("--strict", "parsers", "engine")
    assert code == 0, f"mypy --strict parsers engine:\n{out}"


def test_pipeline_errors_never_grow_past_the_baseline() -> None:
    now, out = pipeline_errors()
    base = read_baseline()
    grown = {f: (base.get(f, 0), n) for f, n in now.items() if n > base.get(f, 0)}
    assert not grown, (
        "new type errors (file: baseline → now):\n"
        + "\n".join(f"  {f}: {b} → {n}" for f, (b, n) in sorted(grown.items()))
        + f"\n\n{out}"
    )
    shrunk = {f: (b, now.get(f, 0)) for f, b in base.items() if now.get(f, 0) < b}
    assert not shrunk, (
        "fewer type errors than the baseline says — lower it "
        "(python tests/test_types.py --write):\n"
        + "\n".join(f"  {f}: {b} → {n}" for f, (b, n) in sorted(shrunk.items()))
    )


def write_baseline() -> None:
    now, _ = pipeline_errors()
    lines = [
        "# mypy errors per file in pipeline/ (tests/test_types.py); only ever lowered.",
        *(f"{f} {n}" for f, n in sorted(now.items())),
    ]
    BASELINE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{BASELINE}: {sum(now.values())} errors in {len(now)} files")


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write_baseline()
    else:
        sys.exit("usage: python tests/test_types.py --write")
