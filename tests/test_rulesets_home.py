"""One rule set, one place: what a rule set is lives in its module.

- ``pipeline/`` and the engine's per-concern modules (``engine/conduct.py``, ``cards.py``,
  ``speed.py``, ``votes.py``) hold no rule-set id: no id literal (``"m135"``), and no string in
  their code that names one (a message "只有 zhenyan …", a citation "zhenyan.txt:41"). The ids
  live in the registry, ``engine/rulesets/__init__.py``, and each rule set's facts in
  ``engine/rulesets/<id>.py``; the pipeline asks ``get_ruleset(game.game.ruleset)``.
- Every rule set declares its conduct, card, speed, announcement, last-words and secret-table
  rules itself, each citing its own rule text.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Iterable
from dataclasses import fields
from pathlib import Path

import pytest

from engine.conduct import FlagKind
from engine.rulesets import REGISTRY, get_ruleset, ruleset_ids
from engine.rulesets.base import Ruleset

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT.parent / "shared" / "rules"

ENGINE_MODULES = ("engine/conduct.py", "engine/cards.py", "engine/speed.py", "engine/votes.py")

IDS = ruleset_ids()
#: an id written as a literal: "m135" or 'm135'
_ALTS = "|".join(map(re.escape, IDS))
_LITERAL = re.compile(rf"""["']({_ALTS})["']""")
#: an id named anywhere in a string: "[zhenyan] 表", "zhenyan.txt:41", "（m135）"
_NAMED = re.compile(rf"(?<![A-Za-z0-9_])({_ALTS})(?![A-Za-z0-9_])")


def scanned() -> list[Path]:
    return sorted((ROOT / "pipeline").rglob("*.py")) + [ROOT / m for m in ENGINE_MODULES]


def id_literals(path: Path, text: str | None = None) -> list[str]:
    """``file:line: text`` of every line with a rule-set id literal (comments included)."""
    text = path.read_text(encoding="utf-8") if text is None else text
    where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return [
        f"{where}:{n}: {line.strip()}"
        for n, line in enumerate(text.splitlines(), 1)
        if _LITERAL.search(line)
    ]


def _docstrings(tree: ast.AST) -> set[int]:
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def named_ids(path: Path, text: str | None = None) -> list[str]:
    """``file:line: string`` of every string constant of the code (docstrings and comments
    excepted: they explain) that names a rule set, and every import of a rule-set module."""
    text = path.read_text(encoding="utf-8") if text is None else text
    where = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    tree = ast.parse(text)
    docs = _docstrings(tree)
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            if _NAMED.search(node.value):
                out.append(f"{where}:{node.lineno}: {node.value[:60]!r}")
        elif isinstance(node, ast.ImportFrom) and node.module and _NAMED.search(node.module):
            out.append(f"{where}:{node.lineno}: from {node.module} import …")
        elif isinstance(node, ast.Import):
            out += [
                f"{where}:{node.lineno}: import {a.name}"
                for a in node.names
                if _NAMED.search(a.name)
            ]
    return sorted(out)


# --------------------------------------------------------------------------- no ids outside


def test_the_pipeline_and_the_engine_modules_hold_no_rule_set_id_literal() -> None:
    found = [hit for path in scanned() for hit in id_literals(path)]
    assert not found, "rule-set ids outside engine/rulesets/:\n" + "\n".join(found)


def test_no_message_citation_or_import_in_them_names_a_rule_set() -> None:
    # what a rule set says (its citations, its messages) is read from its class
    found = [hit for path in scanned() for hit in named_ids(path)]
    assert not found, "rule-set names outside engine/rulesets/:\n" + "\n".join(found)


def test_the_scanners_find_what_they_look_for(tmp_path: Path) -> None:
    # the checks above can fail: a table keyed by id, a citation, a message, an import
    sample = tmp_path / "sample.py"
    source = (
        '"""A docstring may say zhenyan.txt:41."""\n'
        'TABLE = {"m135": 1}  # a comment\n'
        "RULE = 'zhenyan.txt:41'\n"
        'WHY = f"只有 nizhuan 有{1}"\n'
        "from engine.rulesets.m209 import M209\n"
        'OK = "m1350 tubian245 xm209"\n'
    )
    assert [h.split(": ", 1)[0] for h in id_literals(sample, source)] == ["sample.py:2"]
    assert [h.split(": ", 1)[0] for h in named_ids(sample, source)] == [
        "sample.py:2",
        "sample.py:3",
        "sample.py:4",
        "sample.py:5",
    ]


def test_the_registry_is_where_the_ids_are() -> None:
    for rid in IDS:
        assert (ROOT / "engine" / "rulesets" / f"{rid}.py").is_file()
        cls = REGISTRY[rid]  # the registry imports engine/rulesets/<id>.py when asked
        assert (cls.id, cls.__module__) == (rid, f"engine.rulesets.{rid}")


# --------------------------------------------------------------------------- what each declares


@pytest.fixture(params=IDS)
def rs(request: pytest.FixtureRequest) -> Ruleset:
    return get_ruleset(request.param)


def _citations(rs: Ruleset) -> Iterable[str]:
    """Every rule reference the rule set's declared rules carry."""
    yield from (rs.conduct.rule(kind) for kind in FlagKind)
    yield from (rs.cards.escalation_rule, rs.cards.red_out_rule, rs.cards.faction_rule)
    yield from (rs.speed.rule, rs.speed.deadline_rule, rs.speed.auto_rule)
    yield from (rs.announce_rule, rs.two_vote_rounds_rule)
    yield from (rs.public_counts_rule, rs.public_voters_rule)
    yield from (rs.lastwords.none, rs.lastwords.red_card_rule, rs.lastwords.first_night_only)
    yield from (rule for _span, rule in rs.day_skill_cutoffs.values())
    if rs.inquiry is not None:
        yield from (getattr(rs.inquiry, f.name) for f in fields(rs.inquiry) if "rule" in f.name)


_REF = re.compile(r"([a-z0-9]+)\.txt(?::(\d+))?")


def test_each_rule_set_declares_its_own_rules(rs: Ruleset) -> None:
    assert type(rs).title != Ruleset.title and rs.title
    for declared in (rs.conduct, rs.cards, rs.speed):
        assert declared.ruleset == rs.id, f"{rs.id}: {type(declared).__name__} of {declared}"
        # declared on the rule set's own class, not inherited from the base's defaults
        assert any(declared is vars(cls).get(n) for cls in type(rs).__mro__[:-2] for n in vars(cls))
    assert rs.announce_in in ("discussion", "vote")
    assert (rs.public_counts_rule != "") == (not rs.public_counts)
    assert (rs.public_voters_rule != "") == (not rs.public_voters)
    assert bool(rs.two_vote_rounds) == bool(rs.two_vote_rounds_rule)


def test_each_citation_is_to_the_rule_sets_own_text_and_says_something(rs: Ruleset) -> None:
    for ref in _citations(rs):
        for m in _REF.finditer(ref):
            assert m.group(1) == rs.id, f"{rs.id} cites another rule set: {ref}"
            path = RULES / f"{m.group(1)}.txt"
            if m.group(2) and path.exists():
                lines = path.read_text(encoding="utf-8").splitlines()
                assert lines[int(m.group(2)) - 1].strip(), f"{ref} is an empty line"


def test_each_rule_sets_module_lists_its_secret_keys(rs: Ruleset) -> None:
    # tests/pipeline/game/test_gamefile_docs.py reads SECRET_KEYS; the game file checks against it
    module = sys.modules[type(rs).__module__]
    assert rs.secret_keys == module.SECRET_KEYS
    game = type("G", (), {"players": (), "secrets": {k: ["狼人"] for k in rs.secret_keys}})()
    read = rs.settings_from_game(game)
    for key in rs.secret_keys:
        if rs.inquiry is None:  # the inquiry words are the pipeline's (pipeline/inquiry.py)
            assert key in read, f"[{rs.id}] {key} is declared but the engine does not read it"


def test_the_lastwords_lines_quote_the_text(rs: Ruleset) -> None:
    # m135.txt:59 本规则没有遗言; zhenyan.txt:46 出局的角色没有遗言;
    # tubian24.txt:45 除首夜出局玩家外，所有出局玩家均没有遗言
    for ref, words in (
        (rs.lastwords.none, "没有遗言"),
        (rs.lastwords.first_night_only, "首夜"),
    ):
        m = _REF.search(ref)
        if not ref or m is None or not (RULES / f"{m.group(1)}.txt").exists():
            continue
        line = (RULES / f"{m.group(1)}.txt").read_text(encoding="utf-8").splitlines()
        assert words in line[int(m.group(2)) - 1], ref
