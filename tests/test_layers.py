"""The house: ``pipeline/`` is in layers, imports point down only, no circles, no rule-set id.

Layers (low → high): store, sim → game → discuz, derive → drafts → cycle, notify → cli →
console. ``sim`` (the local forum) is used by the CLI's demo and the console's BBCode preview
only. Every import is counted, also one inside a function: a lazy import that points up is still
an upward arrow; only ``if TYPE_CHECKING:`` imports (never run) are left out. The root package's
own names (``from pipeline import set_mode``) and ``resources`` (the shipped data) are below
every layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


def _imports(path: Path) -> set[str]:
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
            out |= {a.name for a in node.names if a.name.startswith("pipeline")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join([*base, node.module] if node.module else base)
            else:
                mod = node.module or ""
            if not mod.startswith("pipeline"):
                continue
            if mod == "pipeline":
                out |= {f"pipeline.{a.name}" for a in node.names}
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


def test_no_import_circle() -> None:
    graph = {_module_name(p): set() for p in MODULES}
    for p in MODULES:
        me = _module_name(p)
        for mod in _imports(p):
            # ``from pipeline.x import name`` may name a submodule or a symbol
            target = mod if mod in graph else mod.rpartition(".")[0]
            if target in graph and target != me:
                graph[me].add(target)
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


def test_no_long_function_without_its_reason() -> None:
    """No function in ``pipeline/`` over ~80 lines without a reason in a comment above it."""
    bare = []
    for path in MODULES:
        lines = path.read_text(encoding="utf-8").split("\n")
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1  # type: ignore[operator]
                first = min([d.lineno for d in node.decorator_list] + [node.lineno])
                above = first - 2  # the comment block right above the def (or its decorators)
                block = []
                while above >= 0 and lines[above].lstrip().startswith("#"):
                    block.append(lines[above].lstrip())
                    above -= 1
                if length > 80 and not any(c.startswith("# long (") for c in block):
                    bare.append(f"{path.relative_to(ROOT)}:{node.name} ({length} lines)")
    assert bare == []
