"""Simplified Chinese for the text click itself prints (usage errors, help headings, "Error:").

click looks every message up through ``gettext``: each click module does
``from gettext import gettext as _`` (and ``ngettext``) and calls ``_()`` when the text is
needed. Importing this module rebinds those two names in click's modules to lookups in the
explicit tables below, so the process-wide locale and ``gettext`` domain are left alone.
A msgid not in the tables falls back to click's English.

Import it before any command is defined: a few texts (the ``--version`` option's help, the
``file``/``path`` names of ``click.Path``) are looked up when the decorators run. Hence the
first import in ``pipeline/cli.py``::

    import pipeline.cli.zh  # noqa: F401  (click speaks Chinese; must precede the commands)
"""

from __future__ import annotations

import gettext
import importlib.machinery
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import click

__all__ = ["MESSAGES", "PLURALS", "ZhChoice", "install", "translate", "translate_plural"]

# click's msgids (click 8.x source) -> Chinese. Placeholders must stay exactly as in the
# msgid: click calls ``.format(...)`` (or ``%``) on the result with its own field names.
MESSAGES: Mapping[str, str] = {
    # exceptions.py: how every failure is shown
    "Error: {message}": "错误：{message}",
    "Try '{command} {option}' for help.": "运行 '{command} {option}' 查看帮助。",
    "Invalid value: {message}": "值无效：{message}",
    "Invalid value for {param_hint}: {message}": "{param_hint} 的值无效：{message}",
    "Missing argument": "缺少参数",
    "Missing option": "缺少选项",
    "Missing parameter": "缺少参数",
    "Missing {param_type}": "缺少{param_type}",
    "Missing parameter: {param_name}": "缺少参数：{param_name}",
    "No such option {name!r}.": "没有选项 {name!r}。",
    "No such command {name!r}.": "没有命令 {name!r}。",
    "Could not open file {filename!r}: {message}": "无法打开文件 {filename!r}：{message}",
    "unknown error": "未知错误",
    # core.py
    "Aborted!": "已中止！",
    "Missing command.": "缺少命令。",
    "Options": "选项",
    "Commands": "命令",
    "Positional arguments": "参数",
    "deprecated": "已弃用",
    "DeprecationWarning: The command {name!r} is deprecated.{extra_message}": (
        "弃用警告：命令 {name!r} 已弃用。{extra_message}"
    ),
    "DeprecationWarning: The {param_type} {name!r} is deprecated.{extra_message}": (
        "弃用警告：{param_type} {name!r} 已弃用。{extra_message}"
    ),
    "Value must be an iterable.": "值必须是一组值。",
    "env var: {var}": "环境变量：{var}",
    "default: {default}": "默认：{default}",
    "required": "必填",
    "(dynamic)": "（动态）",
    # decorators.py
    "Show this message and exit.": "显示本帮助并退出。",
    "Show the version and exit.": "显示版本并退出。",
    "%(prog)s, version %(version)s": "%(prog)s，版本 %(version)s",
    "Do you want to continue?": "确定继续吗？",
    "Confirm the action without prompting.": "不再询问，直接确认。",
    # formatting.py (help headings get an ASCII ":" from click, so "Usage:" keeps one too)
    "Usage:": "用法:",
    # parser.py
    "Option {name!r} does not take a value.": "选项 {name!r} 不接受值。",
    "Argument {name!r} takes {nargs} values.": "参数 {name!r} 需要 {nargs} 个值。",
    "Invalid start character for option ({option})": "选项的开头字符无效（{option}）",
    # types.py
    "{value!r} is not a valid {number_type}.": "{value!r} 不是有效的{number_type}。",
    "{value} is not in the range {range}.": "{value} 不在范围 {range} 内。",
    "{value!r} is not a valid boolean. Recognized values: {states}": (
        "{value!r} 不是有效的布尔值。可用的值：{states}"
    ),
    "{value!r} is not a valid UUID.": "{value!r} 不是有效的 UUID。",
    "Choose from:\n\t{choices}": "可选：\n\t{choices}",
    "{name} {filename!r} does not exist.": "{name} {filename!r} 不存在。",
    "{name} {filename!r} is a file.": "{name} {filename!r} 是文件。",
    "{name} {filename!r} is a directory.": "{name} {filename!r} 是目录。",
    "{name} {filename!r} is not readable.": "{name} {filename!r} 不可读。",
    "{name} {filename!r} is not writable.": "{name} {filename!r} 不可写。",
    "{name} {filename!r} is not executable.": "{name} {filename!r} 不可执行。",
    # termui.py, _termui_impl.py, shell_completion.py, _winconsole.py
    "Repeat for confirmation": "再输入一次以确认",
    "Error: The two entered values do not match.": "错误：两次输入的值不一致。",
    "Error: invalid input": "错误：输入无效",
    "Press any key to continue...": "按任意键继续……",
    "d": "天",
    "{editor}: Editing failed": "{editor}：编辑失败",
    "{editor}: Editing failed: {e}": "{editor}：编辑失败：{e}",
    "Shell completion is not supported for Bash versions older than 4.4.": (
        "Bash 4.4 以下的版本不支持命令补全。"
    ),
    "Couldn't detect Bash version, shell completion is not supported.": (
        "无法识别 Bash 版本，不支持命令补全。"
    ),
    "Windows error: {error}": "Windows 错误：{error}",
}

# (singular msgid, plural msgid) -> (Chinese for n == 1, Chinese otherwise). Chinese has one
# plural form, but click's two msgids may carry different placeholders, so both are kept.
PLURALS: Mapping[tuple[str, str], tuple[str, str]] = {
    ("Got unexpected extra argument ({args})", "Got unexpected extra arguments ({args})"): (
        "多余的参数（{args}）",
        "多余的参数（{args}）",
    ),
    ("Did you mean {possibility}?", "(Did you mean one of: {possibilities}?)"): (
        "是不是要用 {possibility}？",
        "（是不是要用其中之一：{possibilities}？）",
    ),
    ("Option {name!r} requires an argument.", "Option {name!r} requires {nargs} arguments."): (
        "选项 {name!r} 需要一个值。",
        "选项 {name!r} 需要 {nargs} 个值。",
    ),
    ("Takes {nargs} values but 1 was given.", "Takes {nargs} values but {len} were given."): (
        "需要 {nargs} 个值，但只给了 1 个。",
        "需要 {nargs} 个值，但给了 {len} 个。",
    ),
    ("{value!r} is not {choice}.", "{value!r} is not one of {choices}."): (
        "{value!r} 不是 {choice}。",
        "{value!r} 不是 {choices} 之一。",
    ),
    (
        "{value!r} does not match the format {format}.",
        "{value!r} does not match the formats {formats}.",
    ): (
        "{value!r} 不符合格式 {format}。",
        "{value!r} 不符合以下任一格式：{formats}。",
    ),
    (
        "{len_type} values are required, but {len_value} was given.",
        "{len_type} values are required, but {len_value} were given.",
    ): (
        "需要 {len_type} 个值，但给了 {len_value} 个。",
        "需要 {len_type} 个值，但给了 {len_value} 个。",
    ),
}

# English words click drops into some templates as plain field values (a number type's
# ``name``, a parameter's ``param_type_name``, a ``click.Path``'s kind): msgid -> field ->
# English -> Chinese, applied when click formats that template. ``click.Path``'s kind is
# translated here rather than through its ``_("file")`` msgid, which would also turn the
# ``FILE`` metavar in the help into double-width text that click misaligns.
_NUMBER_TYPES = {"integer": "整数", "integer range": "整数", "float": "数字", "float range": "数字"}
_PARAM_TYPES = {"option": "选项", "argument": "参数", "parameter": "参数"}
_PATH_KINDS = {"File": "文件", "Directory": "目录", "Path": "路径"}  # click title-cases them
FIELD_VALUES: Mapping[str, Mapping[str, Mapping[str, str]]] = {
    "{value!r} is not a valid {number_type}.": {"number_type": _NUMBER_TYPES},
    "Missing {param_type}": {"param_type": _PARAM_TYPES},
    "DeprecationWarning: The {param_type} {name!r} is deprecated.{extra_message}": {
        "param_type": _PARAM_TYPES
    },
    **{
        f"{{name}} {{filename!r}} {tail}": {"name": _PATH_KINDS}
        for tail in (
            "does not exist.",
            "is a file.",
            "is a directory.",
            "is not readable.",
            "is not writable.",
            "is not executable.",
        )
    },
}

# click's modules that bind ``_``/``ngettext`` from gettext (only Windows has _winconsole).
_CLICK_MODULES = (
    "click.core",
    "click.decorators",
    "click.exceptions",
    "click.formatting",
    "click.parser",
    "click.types",
    "click.termui",
    "click._termui_impl",
    "click.utils",
    "click.shell_completion",
    "click._winconsole",
)


class _Template(str):
    """A translated text whose ``format`` also translates the English field values it gets."""

    __slots__ = ("fields",)
    fields: Mapping[str, Mapping[str, str]]

    def __new__(cls, text: str, fields: Mapping[str, Mapping[str, str]]) -> _Template:
        self = super().__new__(cls, text)
        self.fields = fields
        return self

    def format(self, *args: Any, **kwargs: Any) -> str:
        for field, words in self.fields.items():
            value = kwargs.get(field)
            if isinstance(value, str) and value in words:
                kwargs[field] = words[value]
        return str(self).format(*args, **kwargs)


def translate(message: str) -> str:
    """Chinese for click's ``_(message)``; click's own English for an unknown msgid."""
    zh = MESSAGES.get(message)
    if zh is None:
        return gettext.gettext(message)
    fields = FIELD_VALUES.get(message)
    return zh if fields is None else _Template(zh, fields)


def translate_plural(singular: str, plural: str, n: int) -> str:
    """Chinese for click's ``ngettext(singular, plural, n)``; English for unknown msgids."""
    forms = PLURALS.get((singular, plural))
    if forms is None:
        return gettext.ngettext(singular, plural, n)
    return forms[0] if n == 1 else forms[1]


class ZhChoice(click.Choice):  # type: ignore[type-arg]
    """A choice a director types in Chinese (``--mode 加速``); the English value it stands for
    (``accelerate``) is typed as well, and is what the command gets.

    ``words`` maps each English value to its Chinese words: the first is the one the help's
    ``[加速|不加速|…]`` and the error listing what may be typed show first.
    """

    def __init__(self, words: Mapping[str, Sequence[str]]) -> None:
        super().__init__(list(words))
        self.words = {value: tuple(zh) for value, zh in words.items()}
        self.aliases = {w: value for value, zh in words.items() for w in zh}

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value.strip() in self.aliases:
            return self.aliases[value.strip()]
        if isinstance(value, str) and value.strip() in self.words:
            return value.strip()
        self.fail(f"{value!r} 不是可选的值；可以写：{self.listing()}", param, ctx)

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        """``[加速|不加速|按申请计算]``: the Chinese word of each value (its English where none)."""
        return "[" + "|".join(zh[0] if zh else v for v, zh in self.words.items()) + "]"

    def listing(self) -> str:
        """Every value, its Chinese word first: ``加速（accelerate）、不加速（延时、normal）``."""
        return "、".join(
            f"{zh[0]}（{'、'.join((*zh[1:], value))}）" if zh else value
            for value, zh in self.words.items()
        )


def _choices(param: click.Parameter) -> str:
    """What may be typed for a choice, as the error for a missing one lists it ("" for a
    parameter that is no choice)."""
    kind = param.type
    if isinstance(kind, ZhChoice):
        return kind.listing()
    if isinstance(kind, click.Choice):
        return "、".join(str(c) for c in kind.choices)
    return ""


def missing_message(self: click.MissingParameter) -> str:
    """click's "Missing option '--player'." in Chinese, with Chinese punctuation: click builds
    it from pieces with an ASCII full stop (and a choice's list one value a line), which no
    message table can reach. ``缺少选项 '--player'。``, ``缺少参数 '草稿编号'。``,
    ``缺少选项 '--ruleset'。可选：m209、zhenyan…``."""
    hint: Any = self.param_hint
    if hint is None and self.param is not None:
        hint = self.param.get_error_hint(self.ctx)
    if isinstance(hint, (list, tuple)):
        hint = " / ".join(str(h) for h in hint)
    param_type = self.param_type
    if param_type is None and self.param is not None:
        param_type = self.param.param_type_name
    kind = _PARAM_TYPES.get(param_type or "parameter", "参数")
    text = f"缺少{kind}{f' {hint}' if hint else ''}。"
    if self.message:
        text += self.message
    if self.param is not None:
        listing = _choices(self.param)
        if listing:
            text += f"可选：{listing}"
        elif extra := self.param.type.get_missing_message(param=self.param, ctx=self.ctx):
            text += str(extra)
    return text


def no_such_message(self: click.NoSuchOption) -> str:
    """click's "No such option '--jsn'. Did you mean '--json'?" without the ASCII space click
    puts between the two sentences: ``没有选项 '--jsn'。是不是要用 '--json'？``."""
    possibilities = getattr(self, "possibilities", None)
    if not possibilities:
        return self.message
    names = "、".join(repr(p) for p in sorted(possibilities))
    if len(possibilities) == 1:
        return f"{self.message}是不是要用 {names}？"
    return f"{self.message}是不是要用其中之一：{names}？"


def _translate_module(module: Any) -> None:
    """Point one click module's ``_``/``ngettext`` at the tables above (only a name still bound
    to the stdlib's, so a module that defines its own is left as it is)."""
    if getattr(module, "_", None) is gettext.gettext:
        module._ = translate
    if getattr(module, "ngettext", None) is gettext.ngettext:
        module.ngettext = translate_plural


class _TranslateOnImport:
    """Translates each of click's modules that was not imported yet when :func:`install` ran
    once it is (``click.edit`` loads its editor's module when called, the shell completion its
    own when asked for): a command that uses neither never imports them."""

    def __init__(self) -> None:
        self.waiting: set[str] = set()

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name not in self.waiting:
            return None
        self.waiting.discard(name)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if loader is not None and hasattr(loader, "exec_module"):
            run = loader.exec_module

            def exec_module(module: Any) -> None:
                run(module)
                _translate_module(module)

            loader.exec_module = exec_module
        return spec


_ON_IMPORT = _TranslateOnImport()


def _wrap_text(*args: Any, **kwargs: Any) -> str:
    from pipeline.cli.zhwrap import wrap_text

    return wrap_text(*args, **kwargs)


def _term_len(x: str) -> int:
    from pipeline.cli.zhwrap import term_len

    return term_len(x)


def install() -> None:
    """Point click's ``_``/``ngettext`` at the tables above. Idempotent.

    click's messages for a missing parameter and an unknown option or command, which it
    builds from pieces with ASCII punctuation, are made in Chinese (:func:`missing_message`,
    :func:`no_such_message`); help text is wrapped for Chinese (:mod:`pipeline.cli.zhwrap`:
    by terminal columns, no stray space where a docstring's line broke), loaded only when a
    help page is printed.
    Only a name still bound to the stdlib ``gettext``/``ngettext`` is replaced, so a click
    that stops using gettext (or a module that defines its own ``_``) is left as it is. A
    click module not imported yet is translated when it is (:class:`_TranslateOnImport`).
    """
    click.MissingParameter.format_message = missing_message  # type: ignore[method-assign]
    click.formatting.wrap_text = _wrap_text
    click.formatting.term_len = _term_len  # type: ignore[attr-defined]  # imported there
    click.NoSuchOption.format_message = no_such_message  # type: ignore[method-assign]
    no_such_command = getattr(click.exceptions, "NoSuchCommand", None)  # click ≥ 8.4
    if no_such_command is not None:
        no_such_command.format_message = no_such_message
    for name in _CLICK_MODULES:
        if name == "click._winconsole" and sys.platform != "win32":
            continue
        module = sys.modules.get(name)
        if module is not None:
            _translate_module(module)
        else:
            _ON_IMPORT.waiting.add(name)
    if _ON_IMPORT.waiting and _ON_IMPORT not in sys.meta_path:
        sys.meta_path.insert(0, _ON_IMPORT)


install()
