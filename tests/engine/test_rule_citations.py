"""Every rule quote in the test sources is on its line of the rule text.

A quote is a string ``<set>.txt:<line>`` followed by a string of words, side by side in a call
(``says("m135.txt:92", "…")``) or a tuple (a ``parametrize`` row, a table entry). The tests that
hold them run without the rule texts (``rule_text.says`` then checks only the reference's form);
this file checks the words, one test per source file, and skips without the texts. The scenario
files' ``[[cite]]`` quotes are checked by each ``test_<set>_scenarios.py``.
"""

from __future__ import annotations

import ast
import re
from itertools import pairwise
from pathlib import Path

import pytest

from tests.engine.rule_text import RULE_FILES, line_of

TESTS = Path(__file__).resolve().parents[1]
REF = re.compile(r"(\w+\.txt):(\d+)")


def quotes_in(source: str) -> list[tuple[int, str, str]]:
    """(line in the source, ref, words) of every quote in a Python source."""
    found = []
    for node in ast.walk(ast.parse(source)):
        items = node.args if isinstance(node, ast.Call) else getattr(node, "elts", None)
        if not isinstance(node, ast.Call | ast.Tuple) or not items:
            continue
        for ref, words in pairwise(items):
            if (
                isinstance(ref, ast.Constant)
                and isinstance(ref.value, str)
                and REF.fullmatch(ref.value)
                and isinstance(words, ast.Constant)
                and isinstance(words.value, str)
            ):
                found.append((ref.lineno, ref.value, words.value))
    return sorted(found)


SOURCES = {
    path: quotes
    for path in sorted(TESTS.rglob("test_*.py"))
    if path != Path(__file__).resolve()
    if (quotes := quotes_in(path.read_text(encoding="utf-8")))
}


def test_quotes_are_found() -> None:
    sample = 'says("m135.txt:92", "结算目标")\nROWS = [("m", "m209.txt:22", "黑狼王")]\n'
    assert quotes_in(sample) == [(1, "m135.txt:92", "结算目标"), (2, "m209.txt:22", "黑狼王")]
    assert len(SOURCES) >= 10


@pytest.mark.parametrize("path", list(SOURCES), ids=lambda p: str(p.relative_to(TESTS)))
def test_every_quote_names_a_rule_file(path: Path) -> None:
    for lineno, ref, _words in SOURCES[path]:
        m = REF.fullmatch(ref)
        assert m and m.group(1) in RULE_FILES and int(m.group(2)) > 0, f"{path.name}:{lineno}"


@pytest.mark.parametrize("path", list(SOURCES), ids=lambda p: str(p.relative_to(TESTS)))
def test_quotes_match_rule_text(path: Path) -> None:
    wrong = [
        f"{path.name}:{lineno}: {ref} does not say {words!r}: {line_of(ref)!r}"
        for lineno, ref, words in SOURCES[path]
        if words not in line_of(ref)
    ]
    assert not wrong, "\n".join(wrong)
