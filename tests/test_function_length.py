"""Small parts with names: no function in the code is longer than a maintainer can hold.

Every function and method in ``engine/``, ``parsers/`` and ``pipeline/`` is at most
:data:`LIMIT` lines from its ``def`` (or its first decorator) to its last line. There is no
exception and no comment that excuses one: a longer procedure is split into named steps.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "parsers", "pipeline")
LIMIT = 100


def _long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > LIMIT:
                out.append(f"{path.relative_to(root)}:{node.lineno} {node.name} ({length} 行)")
    return out


def test_no_function_is_longer_than_the_limit() -> None:
    found = [
        f
        for pkg in PACKAGES
        for p in sorted((ROOT / pkg).rglob("*.py"))
        for f in _long_functions(p)
    ]
    assert found == [], f"超过 {LIMIT} 行的函数：\n" + "\n".join(found)


def test_no_comment_excuses_a_long_function() -> None:
    permits = [
        f"{p.relative_to(ROOT)}:{i}"
        for pkg in PACKAGES
        for p in sorted((ROOT / pkg).rglob("*.py"))
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if line.lstrip().startswith("# long (")
    ]
    assert permits == []


def test_the_measure_counts_decorators_and_the_whole_body(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT - 2))
    short = tmp_path / "short.py"
    short.write_text(f"@staticmethod\ndef f():\n{body}\n", encoding="utf-8")
    long = tmp_path / "long.py"
    long.write_text(f"@staticmethod\ndef f():\n{body}\n    return 1\n", encoding="utf-8")
    assert _long_functions(short, tmp_path) == []
    assert _long_functions(long, tmp_path) == [f"long.py:2 f ({LIMIT + 1} 行)"]
