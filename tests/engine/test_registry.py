"""The rule-set registry is lazy: asking for one rule set imports that rule
set's module only; ids, aliases and the registry's mapping behave as before."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from engine.rulesets import REGISTRY, get_ruleset, ruleset_ids
from engine.rulesets.base import Ruleset

RULESETS_DIR = Path(__file__).resolve().parents[2] / "engine" / "rulesets"


def _loaded_after(code: str) -> list[str]:
    """The rule-set modules a fresh interpreter has loaded after running ``code``."""
    probe = (
        f"{code}\nimport sys\n"
        "print(sorted(m for m in sys.modules if m.startswith('engine.rulesets.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    return [m.rsplit(".", 1)[1] for m in eval(out)]  # a list of module names


@pytest.mark.parametrize("rid", ruleset_ids())
def test_asking_for_one_rule_set_imports_only_that_one(rid: str) -> None:
    loaded = _loaded_after(f"from engine.rulesets import get_ruleset; get_ruleset({rid!r})")
    others = set(ruleset_ids()) - {rid}
    assert rid in loaded
    assert others.isdisjoint(loaded), loaded


def test_importing_the_registry_and_listing_ids_imports_no_rule_set() -> None:
    loaded = _loaded_after(
        "from engine.rulesets import REGISTRY, ruleset_ids; ids = ruleset_ids(); "
        "assert list(REGISTRY) == list(ids) and len(REGISTRY) == len(ids) and ids[0] in REGISTRY"
    )
    assert set(ruleset_ids()).isdisjoint(loaded), loaded


def _ruleset_classes_on_disk() -> dict[str, str]:
    """Every module of engine/rulesets/ that defines a rule-set class (one with its own ``id``)
    → that id, read from the source."""
    found: dict[str, str] = {}
    for path in sorted(RULESETS_DIR.glob("*.py")):
        if path.name in ("__init__.py", "base.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                target = getattr(stmt, "target", None)
                if isinstance(target, ast.Name) and target.id == "id" and stmt.value is not None:
                    found[path.stem] = ast.literal_eval(stmt.value)
    return found


def test_every_rule_set_module_is_registered_under_its_own_id() -> None:
    on_disk = _ruleset_classes_on_disk()
    assert set(on_disk) == set(ruleset_ids())
    for module, rid in on_disk.items():
        assert module == rid
        cls = REGISTRY[rid]
        assert issubclass(cls, Ruleset) and cls.id == rid and cls.__module__.endswith(rid)


@pytest.mark.parametrize("rid", ruleset_ids())
def test_every_alias_and_id_finds_its_rule_set_in_any_case(rid: str) -> None:
    cls = REGISTRY[rid]
    assert cls.aliases  # each rule set is known by other names too
    for name in (rid, rid.upper(), f" {rid} ", *cls.aliases, *(a.lower() for a in cls.aliases)):
        assert get_ruleset(name).id == rid, name


def test_an_unknown_name_names_every_id() -> None:
    with pytest.raises(ValueError, match="未知的规则集") as err:
        get_ruleset("m999")
    assert all(rid in str(err.value) for rid in ruleset_ids())
    with pytest.raises(KeyError):
        REGISTRY["M135"]  # the mapping is by id; get_ruleset takes aliases and any case
