"""What click itself prints to a director (usage errors, help, "Error:") is Simplified Chinese.

Usage errors still exit 2, handled failures 1.
"""

from __future__ import annotations

import ast
import gettext
import string
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

import pipeline.cli.zh as cli_zh
from pipeline.cli import cli
from tests.helptext import help_page

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"

# English that must never reach a director from click.
ENGLISH = (
    "Usage:",
    "Options:",
    "Commands:",
    "Error:",
    "Try '",
    "for help",
    "Missing ",
    "No such",
    "Invalid value",
    "is not a valid",
    "is not one of",
    "unexpected extra",
    "Show this message",
    "Show the version",
    "required]",
    "Aborted",
)

# click msgids that only a programmer sees (errors in how a command is declared, reprs).
DEVELOPER_ONLY = {
    "Could not determine name for option with declarations {decls!r}",
    "No options defined but a name was passed ({name}). Did you mean to declare an argument"
    " instead? Did you mean to pass '--{name}'?",
    "Arguments take exactly one parameter declaration, got {length}: {decls}.",
    "Name '{name}' defined twice",
    "Boolean option {decl!r} cannot use the same flag for true/false.",
    "Choice({choices})",
    "Unknown color {colour!r}",
    "Unknown standard stream '{name}'",
}


def invoke(*args: str, code: int) -> Result:
    result = CliRunner().invoke(cli, list(args), prog_name="bansha")
    assert result.exit_code == code, result.output
    for english in ENGLISH:
        assert english not in result.output, result.output
    return result


def error_line(result: Result) -> str:
    return result.stderr.splitlines()[-1]


def test_missing_option_is_chinese_and_exits_2():
    result = invoke("why", str(GAME), "--day", "1", code=2)
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        "用法: bansha why [OPTIONS] [GAME.toml]",
        "运行 'bansha why --help' 查看帮助。",
        "",
        "错误：缺少选项 '--player'。",
    ]


def test_bad_integer_is_chinese_and_exits_2():
    result = invoke("tally", str(GAME), "--day", "x", code=2)
    assert error_line(result) == "错误：'--day' 的值无效：'x' 不是有效的整数。"


def test_unknown_option_is_chinese_and_exits_2():
    result = invoke("tally", str(GAME), "-o", code=2)
    assert error_line(result) == "错误：没有选项 '-o'。"
    result = invoke("tally", str(GAME), "--jsn", "--day", "1", code=2)
    assert error_line(result) == "错误：没有选项 '--jsn'。是不是要用 '--json'？"


def test_option_without_its_value_is_chinese_and_exits_2():
    result = invoke("tally", str(GAME), "--day", code=2)
    assert error_line(result) == "错误：选项 '--day' 需要一个值。"


def test_unknown_command_is_chinese_and_exits_2():
    result = invoke("nosuchcommand", code=2)
    assert "用法: bansha [OPTIONS] COMMAND [ARGS]..." in result.stderr
    assert "运行 'bansha --help' 查看帮助。" in result.stderr
    assert error_line(result) == "错误：没有命令 'nosuchcommand'。"
    result = invoke("tallyy", code=2)
    assert error_line(result) == "错误：没有命令 'tallyy'。是不是要用 'tally'？"


def test_missing_and_extra_arguments_are_chinese_and_exit_2():
    result = invoke("drafts", "show", str(GAME), code=2)
    assert error_line(result) == "错误：缺少参数 '草稿编号'。"
    result = invoke("tally", str(GAME), "extra", "--day", "1", code=2)
    assert error_line(result) == "错误：多余的参数（extra）"


def test_bad_choice_is_chinese_and_exits_2():
    result = invoke("vote", "speed", str(GAME), "--day", "1", "--mode", "fast", code=2)
    assert error_line(result) == (
        "错误：'--mode' 的值无效：'fast' 不是可选的值；可以写：加速（accelerate）、"
        "不加速（延时、延迟、normal）、按申请计算（自动、auto）"
    )
    result = invoke("vote", "speed", str(GAME), "--day", "1", code=2)
    assert error_line(result) == (
        "错误：缺少选项 '--mode'。可选：加速（accelerate）、不加速（延时、延迟、normal）、"
        "按申请计算（自动、auto）"
    )
    result = invoke("new", "x.toml", code=2)  # a plain choice: one line, Chinese punctuation
    assert error_line(result) == (
        "错误：缺少选项 '--ruleset'。可选：m209、zhenyan、m135、tubian24、nizhuan"
    )


def test_a_chinese_choice_reads_chinese_in_the_help_and_stays_typeable():
    """``vote speed --help`` shows the modes as a director says them; both the Chinese words
    and the English values are accepted (the command gets the English one)."""
    result = invoke("vote", "speed", "--help", code=0)
    assert "--mode [加速|不加速|按申请计算]" in result.stdout
    assert "accelerate|normal|auto" not in result.stdout
    assert "也可以写英文 accelerate、normal、auto" in help_page("vote", "speed")
    result = invoke("vote", "modifier", "--help", code=0)
    assert "--kind [得票加|票权改为|票权加|不能投票|" in result.stdout
    mode = cli_zh.ZhChoice({"accelerate": ("加速",), "normal": ("不加速", "延时")})
    assert [mode.convert(v, None, None) for v in ("加速", "延时", "normal")] == [
        "accelerate",
        "normal",
        "normal",
    ]


def test_no_usage_error_ends_in_ascii_punctuation():
    """A director reads Chinese sentences: no ASCII full stop or a space after 。, and every
    missing argument is named in Chinese (草稿编号, 标记编号 …), never ``'ID'``."""
    cases = [
        ("drafts", "show", str(GAME)),
        ("flags", "confirm", str(GAME)),
        ("night", "remove", str(GAME)),
        ("lastwords", "remove", str(GAME)),
        ("card", "revoke", str(GAME)),
        ("why", str(GAME), "--day", "1"),
        ("tally", str(GAME), "--jsn"),
        ("tally", str(GAME), "--d"),
    ]
    for args in cases:
        line = error_line(invoke(*args, code=2))
        assert not line.endswith(".") and "。 " not in line, (args, line)
        assert not any(w in line for w in ("'ID'", "FLAG_ID", "RECORD_ID")), (args, line)


def test_help_wraps_chinese_by_the_columns_it_takes():
    """A director reads ``--help`` in a terminal: no line is wider than the width click
    wraps to (80 columns under click's test runner; a Chinese character takes two), a line
    broken in the docstring between two Chinese characters prints no space there, and no
    line begins with a closing mark."""
    from pipeline.cli.zhwrap import term_len

    result = invoke("cycle", "--help", code=0)
    lines = result.stdout.splitlines()
    assert max(term_len(x) for x in lines) <= 80, result.stdout
    assert sum(term_len(x) > 70 for x in lines) >= 5  # it does fill the lines
    assert not any(x.lstrip()[:1] in set("，。、；：）") for x in lines if x.strip())
    # the docstring breaks its line between 锁时 and 立即退出, and between ） and 只发布
    text = "".join(x.strip() for x in lines)
    assert "持有同一把锁时立即退出" in text and "提醒）；否则本轮不推导" in text
    assert "锁时 立即" not in result.stdout and "）， 只发布" not in result.stdout
    # a Latin word is never split, and keeps its space beside Chinese
    assert "bansha publish" in " ".join(x.strip() for x in lines)


def test_the_wrapper_keeps_clicks_paragraphs():
    from pipeline.cli.zhwrap import term_len, wrap_text

    text = "第一段的第一行\n第二行接着写 bansha\ncycle 不拆开。\n\n\b\n  示例：\n    bansha cycle"
    out = wrap_text(text, 20, "  ", "  ", preserve_paragraphs=True)
    assert out.split("\n\n") == [
        "  第一段的第一行第二\n  行接着写 bansha\n  cycle 不拆开。",
        "    示例：\n      bansha cycle",
    ]
    assert term_len("加速|normal") == 11 and term_len("\x1b[1m加速\x1b[0m") == 4
    # no line ends with an opening mark, no line begins with a closing one
    assert wrap_text("一二三四（五六）。", 10) == "一二三四\n（五六）。"
    assert wrap_text("一二三四五）六", 10) == "一二三四\n五）六"
    # a full-width mark carries its own space: none is kept after it, one is before Latin
    assert wrap_text("第几天。  [必填]", 78) == "第几天。[必填]"
    assert wrap_text("见 bansha why，  然后", 78) == "见 bansha why，然后"


def test_top_level_help_is_chinese():
    result = invoke("--help", code=0)
    lines = result.stdout.splitlines()
    assert lines[0] == "用法: bansha [OPTIONS] COMMAND [ARGS]..."
    assert "选项:" in lines and "命令:" in lines
    assert any(line.split() == ["--version", "显示版本并退出。"] for line in lines)
    assert any(line.split() == ["-h,", "--help", "显示本帮助并退出。"] for line in lines)
    assert any(line.split()[:1] == ["tally"] for line in lines)  # the command list is there


def test_no_command_shows_the_chinese_help_and_exits_2():
    result = invoke(code=2)
    assert "用法: bansha [OPTIONS] COMMAND [ARGS]..." in result.output
    assert "命令:" in result.output


def test_command_help_marks_required_options_in_chinese():
    result = invoke("why", "--help", code=0)
    player = next(line for line in result.stdout.splitlines() if "--player" in line)
    assert player.split() == ["--player", "TEXT", "玩家名字（或别名）。[必填]"]  # no space after 。
    day = next(line for line in result.stdout.splitlines() if "--day" in line)
    assert "[必填]" not in day  # --day defaults to today (or the day just closed)
    # metavars stay ASCII placeholders, so click keeps the columns aligned
    assert "--db FILE" in result.stdout


def test_handled_failure_keeps_exit_1_with_chinese_prefix(tmp_path: Path):
    missing = tmp_path / "nope.toml"
    result = invoke("tally", str(missing), "--day", "1", code=1)
    assert result.stderr == f"错误：找不到游戏文件：{missing}\n"


def test_abort_is_chinese_and_exits_1():
    @click.command()
    def ask() -> None:
        raise click.Abort

    result = CliRunner().invoke(ask, [])
    assert result.exit_code == 1
    assert result.stderr == "已中止！\n"


def test_path_kind_is_translated_in_messages_only(tmp_path: Path):
    @click.command()
    @click.argument("src", type=click.Path(exists=True, dir_okay=False))
    @click.option("--out", type=click.Path(file_okay=False))
    def copy(src: str, out: str | None) -> None:
        pass

    result = CliRunner().invoke(copy, [str(tmp_path / "nope.txt")], prog_name="copy")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"错误：'SRC' 的值无效：文件 '{tmp_path / 'nope.txt'}' 不存在。"
    )
    result = CliRunner().invoke(copy, [str(tmp_path)], prog_name="copy")
    assert result.stderr.splitlines()[-1].endswith("是目录。")
    help_text = CliRunner().invoke(copy, ["--help"]).stdout
    assert "--out DIRECTORY" in help_text  # the metavar is not translated


def test_field_values_are_translated_only_in_their_templates():
    missing = cli_zh.translate("Missing {param_type}").format(param_type="option")
    assert missing == "缺少选项"
    # a command that happens to be called "file" keeps its name
    assert cli_zh.translate("No such command {name!r}.").format(name="file") == "没有命令 'file'。"
    number = cli_zh.translate("{value!r} is not a valid {number_type}.")
    assert number.format(value="1.5", number_type="float") == "'1.5' 不是有效的数字。"
    assert number.format(value="x", number_type="count") == "'x' 不是有效的count。"


def test_unknown_msgid_falls_back_to_english():
    assert cli_zh.translate("A text a newer click added {x}.") == "A text a newer click added {x}."
    plural = ("One new thing {n}.", "Several new things {n}.")
    assert cli_zh.translate_plural(*plural, 1) == "One new thing {n}."
    assert cli_zh.translate_plural(*plural, 3) == "Several new things {n}."


def test_plural_forms_follow_the_count():
    extra = ("Got unexpected extra argument ({args})", "Got unexpected extra arguments ({args})")
    assert cli_zh.translate_plural(*extra, 2).format(args="a b") == "多余的参数（a b）"
    mean = ("Did you mean {possibility}?", "(Did you mean one of: {possibilities}?)")
    assert cli_zh.translate_plural(*mean, 1).format(possibility="'x'") == "是不是要用 'x'？"
    assert cli_zh.translate_plural(*mean, 2).format(possibilities="'x', 'y'") == (
        "（是不是要用其中之一：'x', 'y'？）"
    )


def test_install_is_idempotent_and_leaves_the_process_gettext_alone():
    cli_zh.install()
    cli_zh.install()
    import click.core
    import click.exceptions

    assert click.core._ is cli_zh.translate
    assert click.exceptions.ngettext is cli_zh.translate_plural
    assert gettext.gettext("Aborted!") == "Aborted!"
    assert gettext.ngettext("Missing option", "Missing options", 1) == "Missing option"


def _fields(text: str) -> list[tuple[str | None, str | None, str | None]]:
    return sorted(
        (name, conversion, spec)
        for _, name, spec, conversion in string.Formatter().parse(text)
        if name is not None
    )


def test_translations_keep_click_placeholders():
    """click formats the result with its own field names: a missing one would raise."""
    for english, chinese in cli_zh.MESSAGES.items():
        if "%(" in english:
            assert chinese.count("%(prog)s") == 1 and chinese.count("%(version)s") == 1
            continue
        assert _fields(chinese) == _fields(english), english
    for (singular, plural), (zh_one, zh_many) in cli_zh.PLURALS.items():
        assert _fields(zh_one) == _fields(singular), singular
        assert _fields(zh_many) == _fields(plural), plural
    for msgid in cli_zh.FIELD_VALUES:
        assert msgid in cli_zh.MESSAGES, msgid


def _click_msgids() -> tuple[set[str], set[tuple[str, str]]]:
    """Every literal ``_("...")`` and ``ngettext("...", "...")`` in the installed click."""
    singles: set[str] = set()
    plurals: set[tuple[str, str]] = set()
    for source in Path(click.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if node.func.id == "_" and texts and isinstance(texts[0], str):
                singles.add(texts[0])
            elif node.func.id == "ngettext" and len(texts) >= 2:
                plurals.add((texts[0], texts[1]))
    return singles, plurals


def test_every_click_text_a_director_can_see_has_a_translation():
    singles, plurals = _click_msgids()
    assert "Missing option" in singles  # the scan found click's texts
    untranslated = singles - set(cli_zh.MESSAGES) - DEVELOPER_ONLY
    # click's Path kinds are translated as field values (see cli_zh.FIELD_VALUES)
    untranslated -= {"file", "directory", "path"}
    assert not untranslated, f"add to pipeline/cli_zh.py MESSAGES: {sorted(untranslated)}"
    assert not plurals - set(cli_zh.PLURALS), sorted(plurals - set(cli_zh.PLURALS))
    # ``required`` reaches ``_()`` through a variable
    assert "required" in cli_zh.MESSAGES


@pytest.mark.skipif(sys.platform == "win32", reason="runs the CLI in a POSIX subprocess")
def test_fresh_process_speaks_chinese():
    """A new interpreter importing only pipeline.cli, as the ``bansha`` script does."""
    code = "from pipeline.cli import cli; cli(prog_name='bansha')"
    done = subprocess.run(
        [sys.executable, "-c", code, "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "显示版本并退出。" in done.stdout, "pipeline/cli.py must import pipeline.cli.zh first"
    assert "用法: bansha" in done.stdout
    done = subprocess.run(
        [sys.executable, "-c", code, "why", str(GAME), "--day", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == "错误：缺少选项 '--player'。"
