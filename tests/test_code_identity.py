"""Which bansha is on disk: every module of the code packages counts, in every subfolder, and
nothing else does; a module changed, added or removed gives another identity (the next cycle
derives again), the same files give the same one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import pipeline


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """One code package at ``tmp_path / "pkg"`` (the three packages all read from it)."""
    root = tmp_path / "pkg"
    (root / "sub" / "deeper").mkdir(parents=True)
    (root / "__init__.py").write_text("", "utf-8")
    (root / "a.py").write_text("A = 1\n", "utf-8")
    (root / "sub" / "b.py").write_text("B = 2\n", "utf-8")
    (root / "sub" / "deeper" / "c.py").write_text("C = 3\n", "utf-8")
    monkeypatch.setattr(pipeline, "_package_folders", lambda package: [str(root)])
    return root


def test_the_same_files_give_the_same_identity(tree: Path) -> None:
    assert pipeline.code_identity_now() == pipeline.code_identity_now()


def test_what_is_not_a_module_does_not_count(tree: Path) -> None:
    before = pipeline.code_identity_now()
    (tree / "sub" / "notes.txt").write_text("x", "utf-8")
    (tree / "sub" / "__pycache__").mkdir()
    (tree / "sub" / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
    assert pipeline.code_identity_now() == before


@pytest.mark.parametrize("change", ["edited", "touched", "added deep", "removed"])
def test_a_module_changed_added_or_removed_gives_another_identity(tree: Path, change: str) -> None:
    before = pipeline.code_identity_now()
    deep = tree / "sub" / "deeper" / "c.py"
    if change == "edited":
        deep.write_text("C = 33\n", "utf-8")
    elif change == "touched":
        st = deep.stat()
        os.utime(deep, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    elif change == "added deep":
        (tree / "sub" / "deeper" / "d.py").write_text("", "utf-8")
    else:
        (tree / "sub" / "b.py").unlink()
    assert pipeline.code_identity_now() != before


def test_a_module_moved_to_another_folder_gives_another_identity(tree: Path) -> None:
    before = pipeline.code_identity_now()
    (tree / "sub" / "b.py").rename(tree / "sub" / "deeper" / "b.py")
    assert pipeline.code_identity_now() != before
