"""The wheel is the whole bansha: built from the repository, installed into a fresh virtual
environment outside it, and run from a folder outside it — with the source it was built from
deleted — it does what a director does on the first day: ``--version``, ``demo`` and
``demo --from-signup``, ``new`` for every rule set and ``check`` on each, ``templates``,
``schedule``'s crontab line (it starts the installed bansha), and ``serve`` answering its login
page with its stylesheet.

The wheel is installed by pip; its dependencies are the ones its metadata declares
(``Requires-Dist``, followed through each dependency's own), copied from the environment the
tests run in (each in a version the requirement allows), so no index is asked for them and
nothing else is there: a module bansha imports without declaring it fails here. The build
(setuptools in its own environment) and the install take about ten seconds; part of the
normal suite (marker ``wheel``: ``-m "not wheel"`` leaves it out while working).
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import venv
import zipfile
from email.parser import Parser
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from pipeline.game.gamefile import RULESETS

ROOT = Path(__file__).resolve().parents[1]
#: what the wheel is built from (a clean checkout holds these and more)
SOURCES = [
    "pyproject.toml",
    "setup.py",
    "README.md",
    "config",
    "cron",
    "engine",
    "parsers",
    "pipeline",
]

pytestmark = [pytest.mark.wheel, pytest.mark.timeout(900)]


def run(cmd: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, (
        f"{shlex.join(cmd)} → {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    )
    return proc.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _requires(wheel: Path) -> list[str]:
    """The wheel's ``Requires-Dist`` lines, as pip reads them from its metadata."""
    with zipfile.ZipFile(wheel) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
        text = z.read(name).decode("utf-8")
    return Parser().parsestr(text).get_all("Requires-Dist") or []


def _closure(requires: list[str]) -> list[metadata.Distribution]:
    """The distributions of this environment that ``requires`` needs, and what they need in
    turn (markers evaluated for this interpreter, extras followed), each in a version its
    requirement allows."""
    todo = [(Requirement(r), "") for r in requires]
    found: dict[str, metadata.Distribution] = {}
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        key = canonicalize_name(req.name)
        dist = found.get(key)
        if dist is None:
            dist = found[key] = metadata.distribution(req.name)
            todo += [(Requirement(r), "") for r in dist.requires or ()]
        assert req.specifier.contains(dist.version, prereleases=True), (
            f"{req} is not met by {req.name} {dist.version}"
        )
        for wanted in req.extras:
            todo += [(Requirement(r), wanted) for r in dist.requires or ()]
    return list(found.values())


def _copy_into(dists: list[metadata.Distribution], site: Path) -> None:
    """Each distribution's files that live in its site-packages (its RECORD), copied to
    ``site``: the packages, their byte code and their ``.dist-info``; no scripts."""
    for dist in dists:
        root = Path(dist.locate_file("")).resolve()
        assert dist.files is not None, f"{dist.metadata['Name']} lists no files"
        for f in dist.files:
            source = Path(dist.locate_file(f)).resolve()
            if not source.is_relative_to(root):
                continue
            if source.is_file():
                target = site / source.relative_to(root)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """(the venv's bin folder, an environment that finds only the installed bansha)."""
    top = tmp_path_factory.mktemp("wheel")
    assert not top.resolve().is_relative_to(ROOT.resolve())
    src, dist = top / "src", top / "dist"
    src.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        else:
            shutil.copy2(ROOT / name, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.pop("BANSHA_GAME", None)
    env.pop("BANSHA_DB", None)
    run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(src)],
        cwd=top,
        env=env,
    )
    (wheel,) = dist.glob("bansha-*.whl")
    shutil.rmtree(src)  # nothing the installed bansha does may read the tree it was built from
    venv.EnvBuilder(with_pip=False).create(top / "venv")
    bin_dir = top / "venv" / ("Scripts" if os.name == "nt" else "bin")
    python = str(bin_dir / "python")
    site = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
               cwd=top, env=env).strip()  # fmt: skip
    _copy_into(_closure(_requires(wheel)), Path(site))
    pip = [sys.executable, "-m", "pip", "--python", python]
    run([*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)], cwd=top, env=env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["HOME"] = str(top / "home")  # no director's ~/.config/bansha here
    (top / "home").mkdir()
    (top / "work").mkdir()
    return bin_dir, env


def test_the_installed_package_is_the_wheels_own(installed):
    bin_dir, env = installed
    work = bin_dir.parent.parent / "work"
    out = run(
        [
            str(bin_dir / "python"),
            "-c",
            "import engine, parsers, pipeline, pipeline.resources as r;"
            "print(pipeline.__file__); print(r.data_root()); print(r.shipped())",
        ],
        cwd=work,
        env=env,
    )
    package, data, shipped = out.splitlines()
    venv_dir = bin_dir.parent.resolve()
    assert Path(package).resolve().is_relative_to(venv_dir)
    assert Path(data).resolve().is_relative_to(venv_dir)
    assert shipped == "True"
    assert not Path(package).resolve().is_relative_to(ROOT.resolve())


def test_version(installed):
    bin_dir, env = installed
    out = run(["bansha", "--version"], cwd=bin_dir.parent.parent / "work", env=env)
    assert out.startswith("bansha 0.")


def test_demo_and_schedule_through_the_installed_wrapper(installed):
    bin_dir, env = installed
    work = bin_dir.parent.parent / "work"
    out = run(["bansha", "demo", "--db", str(work / "demo" / "demo.db")], cwd=work, env=env)
    assert "计票" in out
    game = work / "demo" / "demo.toml"
    assert game.is_file()
    lines = run(["bansha", "schedule", str(game)], cwd=work, env=env).splitlines()
    every = next(line for line in lines if line.startswith("*/5 "))
    command = every.split(" ", 5)[5].replace("\\%", "%")
    assert f"BANSHA_BIN={bin_dir / 'bansha'} bash " in command, command
    script = Path(shlex.split(command)[2])
    assert script.name == "bansha-cycle.sh" and script.resolve().is_relative_to(
        bin_dir.parent.resolve()
    )
    # cron runs that line: the wrapper starts the installed bansha, whose cycle finds the
    # demo's forum (the simulator) closed and says so in the game's log
    cron_env = {**env, "BANSHA_ENV_FILE": str(work / "no-env"), "BANSHA_MAX_ATTEMPTS": "1"}
    subprocess.run(["sh", "-c", command], cwd=work, env=cron_env, timeout=300, check=False)
    log = (work / "demo" / "demo.log").read_text(encoding="utf-8")
    assert f"cycle {game}" in log and "无法连接论坛" in log, log


def test_demo_from_signup(installed):
    bin_dir, env = installed
    work = bin_dir.parent.parent / "work"
    out = run(
        ["bansha", "demo", "--from-signup", "--db", str(work / "life" / "life.db")],
        cwd=work,
        env=env,
    )
    assert "报名" in out


@pytest.mark.parametrize("ruleset", RULESETS)
def test_new_and_check_for_each_rule_set(installed, ruleset):
    bin_dir, env = installed
    work = bin_dir.parent.parent / "work"
    game = work / f"新游戏-{ruleset}.toml"
    run(["bansha", "new", game.name, "--ruleset", ruleset], cwd=work, env=env)
    out = run(["bansha", "check", game.name], cwd=work, env=env)
    assert "示例" in out  # the starter's example values are listed for the director to replace


def test_the_default_templates_are_copied_out(installed):
    bin_dir, env = installed
    work = bin_dir.parent.parent / "work"
    run(["bansha", "templates", "我的模板"], cwd=work, env=env)
    assert (work / "我的模板" / "result.j2").read_bytes() == (
        ROOT / "config" / "templates" / "result.j2"
    ).read_bytes()


def test_serve_answers_its_login_page_with_its_stylesheet(installed):
    bin_dir, env = installed
    work = bin_dir.parent.parent / "work"
    folder = work / "serve"
    folder.mkdir()
    run(["bansha", "new", "g.toml", "--ruleset", "m135"], cwd=folder, env=env)
    port = free_port()
    serve_env = {**env, "BANSHA_CONSOLE_TOKEN": "a-long-enough-test-token"}
    with subprocess.Popen(
        ["bansha", "serve", "g.toml", "--port", str(port)],
        cwd=folder,
        env=serve_env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            page = css = None
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and server.poll() is None:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=5) as r:
                        page = r.read().decode("utf-8")
                    with urllib.request.urlopen(
                        f"http://127.0.0.1:{port}/static/console.css", timeout=5
                    ) as r:
                        css = r.read().decode("utf-8")
                    break
                except OSError:
                    time.sleep(0.3)
            assert page is not None, (
                server.stderr.read() if server.poll() is not None else "no answer"
            )
            assert "令牌" in page and "console.css" in page
            assert css and "{" in css
        finally:
            server.terminate()
            server.wait(timeout=30)
