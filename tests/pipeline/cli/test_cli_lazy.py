"""The command line starts fast: ``bansha --help`` imports no command module,
no rule set, no pydantic/jinja2/sqlite-utils/httpx; each command's module loads when it is used,
and the lazy table's one-line help is the command's own."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from engine.rulesets import ruleset_ids
from pipeline.cli import LAZY_COMMANDS, cli, load_all_commands

RULESET_IDS = ruleset_ids()

HEAVY = ("pydantic", "jinja2", "sqlite_utils", "httpx", "engine", "pipeline.derive")


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from pipeline.cli import cli;"
        "r = CliRunner().invoke(cli, ['--help']); assert r.exit_code == 0, r.output;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pydantic','jinja2','sqlite_utils','httpx','engine') or m.startswith('pipeline.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    loaded = eval(out)  # a list of module names
    assert [m for m in loaded if m.startswith(HEAVY)] == []
    # the help's examples are a table of strings (pipeline.cli.examples); its text is wrapped
    # for Chinese by pipeline.cli.zhwrap (the standard library's unicodedata only)
    allowed = {"pipeline.cli", "pipeline.cli.zh", "pipeline.cli.examples", "pipeline.cli.zhwrap"}
    assert set(loaded) <= allowed, loaded


def test_the_lazy_table_says_what_each_command_says() -> None:
    load_all_commands()
    assert set(cli.commands) == set(LAZY_COMMANDS)
    for name, (_, _, short, hidden) in LAZY_COMMANDS.items():
        cmd = cli.commands[name]
        assert cmd.hidden == hidden, name
        if not hidden:
            assert cmd.get_short_help_str(limit=150) == short, name


def test_help_lists_every_visible_command_once() -> None:
    out = CliRunner().invoke(cli, ["--help"]).output
    rows = out.split("命令:")[1].split("示例：")[0]
    # a row begins two spaces in; a short help wrapped onto more lines is indented further
    listed = [line.split()[0] for line in rows.splitlines() if re.match(r"  \S", line)]
    assert listed == sorted(n for n, v in LAZY_COMMANDS.items() if not v[3])


def test_a_command_loads_when_used() -> None:
    result = CliRunner().invoke(cli, ["tally", "--help"])
    assert result.exit_code == 0 and "计票" in result.output


def _modules_after_loading(command: str, *modules: str) -> list[str]:
    """The modules a fresh interpreter holds after loading ``command`` (not running it) and
    importing ``modules``."""
    code = (
        "import importlib, sys; from pipeline.cli import load_command;"
        f"load_command({command!r}); [importlib.import_module(m) for m in {list(modules)!r}];"
        "print(sorted(sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return eval(out)  # a list of module names


#: what a read-only ``bansha tally`` never needs: the forum, the simulator, drafting, the cycle,
#: the console, and the libraries only they use
NOT_FOR_TALLY = (
    "jinja2",
    "httpx",
    "selectolax",
    "tomlkit",
    "starlette",
    "uvicorn",
    "apprise",
    "pipeline.discuz",
    "pipeline.sim",
    "pipeline.drafts",
    "pipeline.cycle",
    "pipeline.console",
    "pipeline.notify",
    "parsers.viewthread",
    "parsers.mobile",
)


#: the full path of ``bansha tally`` (when the stored view does not hold)
TALLY_FULL = "pipeline.cli.votes"


def test_tally_loads_no_forum_drafting_or_console_code() -> None:
    loaded = _modules_after_loading("tally", TALLY_FULL)
    assert "pipeline.cli.tally" in loaded and TALLY_FULL in loaded
    assert [m for m in loaded if m.startswith(NOT_FOR_TALLY)] == []


def test_loading_tally_loads_only_its_fast_path() -> None:
    """The command itself is light: its full path (derive, pydantic …) loads when it runs."""
    loaded = _modules_after_loading("tally")
    heavy = ("pydantic", "sqlite_utils", "engine", "parsers", "pipeline.derive", TALLY_FULL)
    assert [m for m in loaded if m.startswith(heavy)] == []


def test_loading_tally_imports_no_rule_set_before_a_game_names_one() -> None:
    loaded = _modules_after_loading("tally", TALLY_FULL)
    assert [m for m in loaded if m.startswith("engine.rulesets.") and m[16:] in RULESET_IDS] == []


def test_the_rule_set_tables_of_the_game_file_module_are_built_when_asked() -> None:
    """The tables over every rule set keep their names (``from … import SEX_RULESETS``), are
    what each rule set's class says, and the module answers no other missing name."""
    import pipeline.game.gamefile as gamefile
    from engine.rulesets import get_ruleset

    assert {r: get_ruleset(r).title for r in RULESET_IDS} == gamefile.RULESET_TITLES
    assert {
        r for r in RULESET_IDS if "sex" in get_ruleset(r).player_fields
    } == gamefile.SEX_RULESETS
    assert {
        r for r in RULESET_IDS if get_ruleset(r).inquiry is not None
    } == gamefile.INQUIRY_RULESETS
    assert {r for r in RULESET_IDS if get_ruleset(r).two_vote_rounds} == gamefile.TWO_ROUND_RULESETS
    assert {
        r for r in RULESET_IDS if get_ruleset(r).has_sheriff_election
    } == gamefile.SHERIFF_ELECTION_RULESETS
    with pytest.raises(AttributeError):
        gamefile.NOT_A_TABLE  # noqa: B018
