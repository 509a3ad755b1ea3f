"""The rule texts beside the repository (``../shared/rules/<set>.txt``) and quotes of them.

A clone without ``../shared`` still runs every test that quotes a rule: :func:`says` checks the
quote when the texts are present and leaves it to ``test_rule_citations.py`` otherwise, which
finds every quote in the test sources and skips with the reason. Only citation checks skip.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

RULES = Path(__file__).resolve().parents[2] / ".." / "shared" / "rules"

#: the rule files a quote may name
RULE_FILES = ("m135.txt", "m209.txt", "nizhuan.txt", "tubian24.txt", "zhenyan.txt")


def present() -> bool:
    """The rule texts are beside the repository."""
    return all((RULES / name).exists() for name in RULE_FILES)


@cache
def _lines(name: str) -> tuple[str, ...]:
    return tuple((RULES / name).read_text(encoding="utf-8").splitlines())


def rule_lines(name: str) -> list[str]:
    """The lines of one rule text (the test is skipped with the reason when it is absent)."""
    if not (RULES / name).exists():
        path = (RULES / name).resolve()
        pytest.skip(f"rule text not found at {path} (../shared/rules): citation unchecked")
    return list(_lines(name))


def line_of(ref: str) -> str:
    """The text at ``file:line`` (skipped when the texts are absent)."""
    name, _, line = ref.partition(":")
    return rule_lines(name)[int(line) - 1]


def says(ref: str, words: str) -> None:
    """The rule text really says ``words`` at ``ref`` (``file:line``).

    Without the texts only the reference's form is checked here; the words are checked by
    ``test_rule_citations.py``, which skips with the reason.
    """
    name, _, line = ref.partition(":")
    assert name in RULE_FILES and line.isdigit() and int(line) > 0, f"not a rule reference: {ref!r}"
    if not (RULES / name).exists():
        return
    text = _lines(name)[int(line) - 1]
    assert words in text, f"{ref} does not say {words!r}: {text!r}"
