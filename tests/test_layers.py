"""The house: ``pipeline/`` is in layers, imports point down only, no circles, no rule-set id.

Below the pipeline: ``parsers/`` imports nothing from ``engine/`` or ``pipeline/``, ``engine/``
nothing from ``pipeline/``; neither has an import circle, the engine imports no engine module
inside a function, and the engine's shared modules (``engine/*.py``, outside ``rulesets/``)
name no rule set: they are given one.

Layers (low → high): store, sim → game → discuz, derive → drafts → cycle, notify → cli →
console. ``sim`` (the local forum) is used by the CLI's demo and the console's BBCode preview
only. Every import is counted, also one inside a function: a lazy import that points up is still
an upward arrow; only ``if TYPE_CHECKING:`` imports (never run) are left out. The root package's
own names (``from pipeline import set_mode``) and ``resources`` (the shipped data) are below
every layer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from engine.rulesets import ruleset_ids

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = ROOT / "pipeline"

#: rank of each layer; a module may import its own layer's package or any lower rank
LAYERS = {
    "resources": -1,
    "store": 0,
    "sim": 0,
    "game": 1,
    "discuz": 2,
    "derive": 2,
    "drafts": 3,
    "cycle": 4,
    "notify": 4,
    "cli": 5,
    "console": 6,
}
#: the only imports of the simulator outside tests
SIM_USERS = {"cli", "console"}


def _layer(module: str) -> str:
    parts = module.split(".")
    assert parts[0] == "pipeline", module
    return parts[1] if len(parts) > 1 else ""


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, roots: tuple[str, ...] = ("pipeline",)) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path)
    package = me if path.name == "__init__.py" else me.rpartition(".")[0]
    out: set[str] = set()
    typing_only = {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If)
        and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
        for n in ast.walk(node)
    }
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] in roots}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            if mod.split(".")[0] not in roots:
                continue
            if mod in roots:
                out |= {f"{mod}.{a.name}" for a in node.names}
            else:
                out.add(mod)
    return out


MODULES = sorted(p for p in PIPELINE.rglob("*.py"))


def test_every_pipeline_module_sits_in_a_layer() -> None:
    loose = [
        str(p.relative_to(ROOT))
        for p in MODULES
        if p.parent == PIPELINE and p.name != "__init__.py" and p.stem not in LAYERS
    ]
    assert loose == [], f"modules outside the layers: {loose}"
    for p in MODULES:
        layer = _layer(_module_name(p)) if p != PIPELINE / "__init__.py" else ""
        assert layer == "" or layer in LAYERS, p


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down(path: Path) -> None:
    me = _module_name(path)
    if me == "pipeline":
        return
    mine = _layer(me)
    up = []
    for mod in sorted(_imports(path)):
        theirs = _layer(mod)
        if theirs == mine or theirs not in LAYERS:  # its own layer, or the root's names
            continue
        if theirs == "sim":
            if mine not in SIM_USERS:
                up.append(mod)
            continue
        if LAYERS[theirs] >= LAYERS[mine]:
            up.append(mod)
    assert up == [], f"{me} imports {up}: not below layer {mine!r}"


def _import_graph(paths: list[Path], roots: tuple[str, ...]) -> dict[str, set[str]]:
    """Module → the modules of ``paths`` it imports (in-function imports too)."""
    graph: dict[str, set[str]] = {_module_name(p): set() for p in paths}
    for p in paths:
        me = _module_name(p)
        for mod in _imports(p, roots):
            # ``from pipeline.x import name`` may name a submodule or a symbol
            target = mod if mod in graph else mod.rpartition(".")[0]
            if target in graph and target != me:
                graph[me].add(target)
    return graph


def _fail_on_circle(graph: dict[str, set[str]]) -> None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


def test_no_import_circle() -> None:
    _fail_on_circle(_import_graph(MODULES, ("pipeline",)))


# --- below the pipeline: parsers/ and engine/ ---------------------------------------------------

ENGINE = ROOT / "engine"
PARSERS = ROOT / "parsers"
LOWER = sorted([*ENGINE.rglob("*.py"), *PARSERS.rglob("*.py")])
_ALL = ("engine", "parsers", "pipeline")


def _ids(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", sorted(PARSERS.rglob("*.py")), ids=_ids)
def test_parsers_import_neither_engine_nor_pipeline(path: Path) -> None:
    above = sorted(m for m in _imports(path, _ALL) if m.split(".")[0] != "parsers")
    assert above == [], f"{_module_name(path)} imports {above}"


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=_ids)
def test_engine_imports_nothing_from_pipeline(path: Path) -> None:
    above = sorted(m for m in _imports(path, _ALL) if m.split(".")[0] == "pipeline")
    assert above == [], f"{_module_name(path)} imports {above}"


def test_no_import_circle_in_engine_or_parsers() -> None:
    """Every import counts, also one inside a function; only ``if TYPE_CHECKING:`` is left out."""
    _fail_on_circle(_import_graph(LOWER, ("engine", "parsers")))


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=_ids)
def test_no_engine_import_inside_a_function(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lazy = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [("." * node.level) + (node.module or "")]
            lazy += [f"{fn.name}:{node.lineno} {n}" for n in names if n.startswith(("engine", "."))]
    assert lazy == [], f"{_ids(path)} imports inside functions: {lazy}"


SHARED = sorted(ENGINE.glob("*.py"))


def _ruleset_id_pattern() -> re.Pattern[str]:
    words = {w for rid in ruleset_ids() for w in (rid, rid.rstrip("0123456789"))}
    words = {w for w in words if len(w) > 1}
    return re.compile("|".join(sorted(map(re.escape, words), key=len, reverse=True)), re.I)


@pytest.mark.parametrize("path", SHARED, ids=_ids)
def test_no_ruleset_id_in_a_shared_engine_module(path: Path) -> None:
    pattern = _ruleset_id_pattern()
    hits = [
        f"{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
        if pattern.search(line)
    ]
    assert hits == [], f"{_ids(path)} names rule sets: {hits}"


def _cli_syntax_pattern() -> re.Pattern[str]:
    """A command line of the CLI: ``bansha`` and one of its commands, the example game file,
    or an option."""
    from pipeline.cli import LAZY_COMMANDS

    commands = "|".join(sorted(map(re.escape, LAZY_COMMANDS), key=len, reverse=True))
    return re.compile(rf"\bbansha (?:{commands})\b|GAME\.toml|(?<![\w-])--[a-z]")


@pytest.mark.parametrize("path", sorted(ENGINE.rglob("*.py")), ids=_ids)
def test_the_engine_holds_no_cli_syntax(path: Path) -> None:
    """The engine returns data (a pending decision's phase, actor, skill, target, choices);
    the front end writes the command lines."""
    pattern = _cli_syntax_pattern()
    hits = [
        f"{n}: {line.strip()}"
        for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1)
        if pattern.search(line)
    ]
    assert hits == [], f"{_ids(path)} holds command lines: {hits}"
