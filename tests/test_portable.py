"""bansha on Windows and macOS as on Linux, proven here on Linux: nothing any command imports
needs a POSIX-only module (``fcntl``), file modes are set only where the OS has them, game
files saved by Notepad (CRLF, a UTF-8 BOM) load as they are, and a console whose code page is
GBK (cp936) shows every message — never a traceback."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pipeline
from engine.rulesets import get_ruleset
from pipeline import set_mode
from pipeline.console.auth import write_hash
from pipeline.drafts import load_templates
from pipeline.game.gamefile import RULESETS, load_game
from pipeline.game.journal import load_actions_file

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "config" / "games"


def run_bansha(
    args: list[str], *, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """``bansha ARGS`` as the installed program runs it (its entry point), in a new process."""
    return subprocess.run(
        [sys.executable, "-c", "from pipeline.cli import main; main()", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        capture_output=True,
        timeout=300,
    )


# --------------------------------------------------------------------------- no fcntl


NO_FCNTL = textwrap.dedent(
    """
    import importlib, pkgutil, sys
    sys.modules["fcntl"] = None  # as on Windows: `import fcntl` raises ImportError
    failed = []
    for package in ("engine", "parsers", "pipeline"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            try:
                importlib.import_module(info.name)
            except Exception as exc:
                failed.append(f"{info.name}: {exc!r}")
    from pipeline.store.lock import CycleLocked, cycle_lock
    with cycle_lock(sys.argv[1]):
        try:
            with cycle_lock(sys.argv[1]):
                failed.append("the lock was taken twice")
        except CycleLocked:
            pass
    with cycle_lock(sys.argv[1]):
        pass
    assert "fcntl" not in [m for m, v in sys.modules.items() if v is not None]
    print("\\n".join(failed) or "ok")
    """
)


def test_every_module_imports_and_the_lock_works_without_fcntl(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", NO_FCNTL, str(tmp_path / "g.db")],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


# --------------------------------------------------------------------------- file modes


def test_file_modes_are_skipped_without_error_where_the_os_has_none(tmp_path, monkeypatch):
    def no_chmod(*args: object) -> None:
        raise AssertionError("chmod called on an OS without file modes")

    monkeypatch.setattr(pipeline, "POSIX_MODES", False)
    monkeypatch.setattr(os, "chmod", no_chmod)
    assert set_mode(tmp_path / "x", 0o600) is False
    write_hash(tmp_path / "bansha-console.hash", "scrypt$abc")  # the console's token hash
    assert (tmp_path / "bansha-console.hash").read_text() == "scrypt$abc\n"


@pytest.mark.skipif(os.name != "posix", reason="file modes exist on POSIX only")
def test_file_modes_are_set_where_the_os_has_them(tmp_path):
    path = tmp_path / "x"
    path.write_text("")
    assert set_mode(path, 0o600) is True
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --------------------------------------------------------------------------- Notepad's files


def notepad(text: str) -> bytes:
    """``text`` as Windows Notepad saves it as UTF-8: a BOM and CRLF line ends."""
    return b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_game_file_saved_by_notepad_loads_as_the_same_game(tmp_path, ruleset):
    path = tmp_path / "g.toml"
    text = (GAMES / f"{ruleset}.toml").read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    game = load_game(path, env={}, check_login=False)
    path.write_bytes(notepad(text))  # the same file, saved again in Notepad
    assert load_game(path, env={}, check_login=False) == game
    assert not game.game.title.startswith("\ufeff")


def test_a_night_actions_file_saved_by_notepad_loads_the_same(tmp_path):
    path = tmp_path / "night1.toml"
    text = (GAMES / "demo_night1.toml").read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    rs = get_ruleset("m135")
    actions = load_actions_file(path, resolve_name=lambda name: name, ruleset=rs)
    path.write_bytes(notepad(text))
    assert load_actions_file(path, resolve_name=lambda name: name, ruleset=rs) == actions
    assert actions.actions, "the demo's night 1 has actions"


def test_a_template_saved_by_notepad_drafts_no_invisible_character(tmp_path):
    # a BOM copied into a post shows on some forums as a stray mark before the first word
    (tmp_path / "reminder.j2").write_bytes(notepad("[b]投票提醒[/b]\n今晚 {{ 22 }} 点关门\n"))
    templates = load_templates(tmp_path)
    text = templates.env.get_template("reminder.j2").render()
    assert text == "[b]投票提醒[/b]\n今晚 22 点关门"


# --------------------------------------------------------------------------- a GBK console


def test_a_gbk_console_shows_chinese_messages_without_a_traceback(tmp_path):
    # PYTHONIOENCODING=cp936:strict is what a Windows console with code page 936 gives a
    # redirected stdout: GBK has no emoji, and a file name may hold one
    env = {"PYTHONIOENCODING": "cp936:strict"}
    new = run_bansha(["new", "狼🐺.toml", "--ruleset", "m135"], cwd=tmp_path, env=env)
    out, err = new.stdout.decode("gbk"), new.stderr.decode("gbk")
    assert new.returncode == 0, err
    assert "Traceback" not in err
    assert "已写入游戏文件 狼?.toml" in out  # the emoji GBK lacks is a ?, the rest is shown
    (tmp_path / "坏🐺.toml").write_text('[game]\nid = "x"\ntitle = "狼🐺"\n', encoding="utf-8")
    check = run_bansha(["check", "坏🐺.toml"], cwd=tmp_path, env=env)
    err = check.stderr.decode("gbk")
    assert check.returncode == 1
    assert "Traceback" not in err
    assert "game.ruleset：缺少必填项" in err  # the director's error, in Chinese
