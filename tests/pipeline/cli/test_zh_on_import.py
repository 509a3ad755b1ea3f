"""click's modules that bansha's start does not need (the editor's, the shell completion's) are
not imported by it, and still speak Chinese once a command loads them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

LOADED = (
    "import json, sys\n"
    "import pipeline.cli\n"
    "print(json.dumps([m for m in ('click._termui_impl', 'click.shell_completion')"
    " if m in sys.modules]))\n"
)

EDITOR_FAILS = (
    "import click, pipeline.cli\n"
    "try:\n"
    "    click.edit('正文', editor='false')\n"
    "except click.ClickException as exc:\n"
    "    print(exc.format_message())\n"
    "import click.shell_completion as completion\n"
    'print(completion._("Couldn\'t detect Bash version, shell completion is not supported."))\n'
)


def _python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_command_line_starts_without_the_editor_or_the_shell_completion() -> None:
    assert json.loads(_python(LOADED)) == []


@pytest.mark.skipif(sys.platform == "win32", reason="runs `false` as the editor")
def test_the_editor_and_the_shell_completion_speak_chinese_once_loaded() -> None:
    editor, completion = _python(EDITOR_FAILS).splitlines()
    assert editor == "false：编辑失败"
    assert completion == "无法识别 Bash 版本，不支持命令补全。"
