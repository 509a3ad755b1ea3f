"""What bansha ships beside its code: the example game files and the default draft templates
(``config/``), the cron wrapper (``cron/``), and how the installed ``bansha`` is started.

Every read of them goes through here (:mod:`importlib.resources`), so that the package's own
name is written in one place (:data:`PACKAGE`). Two layouts:

- an installed wheel: ``config/`` and ``cron/`` are package data, ``<package>/_data/config``
  and ``<package>/_data/cron`` (``setup.py`` maps them there);
- a source checkout (an editable install, or ``PYTHONPATH`` pointing at it): they sit beside
  the package, at the top of the repository, where contributors edit them.

Standard library only, below every layer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.resources.abc import Traversable

#: the import name of the package that holds the data (the one line a rename changes)
PACKAGE = "pipeline"
#: where a wheel keeps ``config/`` and ``cron/`` inside :data:`PACKAGE`
SHIPPED = "_data"

#: Traversable → the real folder it was copied to (a package imported from a zip archive)
_EXTRACTED: dict[str, Path] = {}


def _package() -> Traversable:
    """The package's folder as :func:`importlib.resources.files` gives it: on disk (a checkout,
    an installed wheel) the folder itself, read without loading :mod:`importlib.resources`
    (which a cycle would pay for at every start); imported from a zip archive, its view."""
    init = getattr(sys.modules.get(PACKAGE), "__file__", None)
    if init and os.path.isfile(init):
        return Path(init).parent
    from importlib.resources import files

    return files(PACKAGE)


def shipped() -> bool:
    """Whether the data is the package's own (an installed wheel), not a checkout's."""
    return (_package() / SHIPPED).is_dir()


def data_root() -> Traversable:
    """The folder holding ``config/`` and ``cron/``."""
    package = _package()
    if (package / SHIPPED).is_dir():
        return package / SHIPPED
    if isinstance(package, Path):
        return package.parent  # a source checkout: the repository's top level
    raise FileNotFoundError(f"{PACKAGE} 的安装里没有 {SHIPPED}/（config/ 与 cron/）")


def _real(item: Traversable) -> Path:
    """``item`` as a path on disk: itself, or (imported from a zip archive) a private copy
    made once per process and removed at exit."""
    if isinstance(item, Path):
        return item
    key = str(item)
    if key not in _EXTRACTED:
        import atexit
        import shutil
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="bansha-data-"))
        atexit.register(shutil.rmtree, folder, True)
        target = folder / item.name
        _copy(item, target)
        _EXTRACTED[key] = target
    return _EXTRACTED[key]


def _copy(item: Traversable, target: Path) -> None:
    if item.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        for child in item.iterdir():
            _copy(child, target / child.name)
    else:
        target.write_bytes(item.read_bytes())


def data_path(*parts: str) -> Path:
    """A file or folder of the shipped data on disk, e.g. ``data_path("config", "games")``."""
    item = data_root()
    for part in parts:
        item = item / part
    return _real(item)


def examples_dir() -> Path:
    """The example game files: one per rule set (what ``bansha new`` starts from), and the
    demo's."""
    return data_path("config", "games")


def example_file(name: str) -> Path:
    """One example game file (``m135.toml``, ``demo.toml`` …)."""
    return examples_dir() / name


def templates_dir() -> Path:
    """The default draft templates (and the day report's)."""
    return data_path("config", "templates")


def cron_script() -> Path:
    """``bansha-cycle.sh``: what a crontab line runs."""
    return data_path("cron", "bansha-cycle.sh")


def bansha_executable() -> Path | None:
    """The ``bansha`` program that is running (the console script this process was started
    as), else the one installed beside this Python; ``None`` when neither is found."""
    name = "bansha.exe" if os.name == "nt" else "bansha"
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if started is not None and started.name in ("bansha", "bansha.exe"):
        for candidate in (started, started.with_name(name)):
            if candidate.is_file():
                return candidate.absolute()
    beside = Path(sys.executable).parent / name
    return beside if beside.is_file() else None
