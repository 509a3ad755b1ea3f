"""A night-actions file with anything at any key: read, or refused with problem lines that each
say which file they are about (nothing else escapes: no traceback, no line split in two)."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.rulesets import get_ruleset, ruleset_ids
from pipeline.game.journal import JournalError, parse_actions

ROOT = Path(__file__).resolve().parents[3]
NIGHT1 = tomllib.loads((ROOT / "config" / "games" / "demo_night1.toml").read_text("utf-8"))
NAMES = ("汤圆", "馄饨", "包子", "饺子", "烧卖")
SOURCE = "行动文件 night.toml"
KEYS = ("actor", "skill", "targets", "choice", "card", "mode", "at", "night", "actions")

_text = st.text(alphabet=st.sampled_from(list("a1:~/ 中汤圆杀人预言\u2028\x85\x00")), max_size=5)
_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True)
    | _text
    | st.sampled_from(NAMES)
    | st.datetimes(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(_text | st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=5,
)
#: (where, key, value): where is the file's top level ("file") or the Nth [[actions]]
_changes = st.lists(
    st.tuples(st.sampled_from(["file", 0, 1, 2]), _text | st.sampled_from(KEYS), _values),
    min_size=1,
    max_size=3,
)


def _changed(changes: list[tuple[Any, str, Any]]) -> dict[str, Any]:
    data = copy.deepcopy(NIGHT1)
    for where, key, value in changes:
        if where == "file":
            data[key] = value
        elif isinstance(data.get("actions"), list) and where < len(data["actions"]):
            action = data["actions"][where]
            if isinstance(action, dict):
                action[key] = value
    return data


@settings(max_examples=200, deadline=None)
@given(rule_set=st.sampled_from(sorted(ruleset_ids())), changes=_changes)
def test_any_value_at_any_key_is_read_or_refused_line_by_line(
    rule_set: str, changes: list[tuple[Any, str, Any]]
) -> None:
    try:
        parse_actions(
            _changed(changes),
            source=SOURCE,
            resolve_name=lambda name: name if name in NAMES else None,
            ruleset=get_ruleset(rule_set),
        )
    except JournalError as exc:
        lines = str(exc).splitlines()
        assert lines and all(line.startswith(SOURCE) for line in lines), lines
