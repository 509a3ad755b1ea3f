"""A command's ``--help`` page as one line a paragraph, for a test to look a sentence up in:
the page a director reads wraps by the terminal's width, anywhere between two Chinese
characters (pipeline/cli/zhwrap.py), so a sentence may straddle two lines there."""

from __future__ import annotations

from click.testing import CliRunner

from pipeline.cli import cli

#: wide enough that no paragraph of bansha's help wraps
UNWRAPPED = 100_000


def help_page(*args: str) -> str:
    """``bansha ARGS --help``, no line wrapped."""
    result = CliRunner().invoke(
        cli, [*args, "--help"], terminal_width=UNWRAPPED, max_content_width=UNWRAPPED
    )
    assert result.exit_code == 0, result.output
    return result.output
