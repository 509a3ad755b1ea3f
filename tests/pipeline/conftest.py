"""Fixtures shared by the pipeline tests: the demo game, played once per test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from pipeline.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DEMO_GAME = ROOT / "config" / "games" / "demo.toml"


@pytest.fixture(scope="session")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The store ``bansha demo`` leaves behind (simulator, cycles, drafts, one post)."""
    db = tmp_path_factory.mktemp("demo") / "demo.db"
    result = CliRunner().invoke(cli, ["demo", "--db", str(db)])
    assert result.exit_code == 0, result.output
    return db


@pytest.fixture
def db(demo_db: Path, tmp_path: Path) -> Path:
    """A private copy of the demo store, free to change."""
    copy = tmp_path / "game.db"
    shutil.copy(demo_db, copy)
    return copy
