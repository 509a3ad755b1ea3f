"""The drafts' Jinja2 templates: loaded from the shipped folder or the game's own, every
printed value escaped, a missing or unsafe template said in Chinese.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from pipeline import resources
from pipeline.drafts.bbcode import _finalize, bbcode_escape
from pipeline.drafts.model import UNTEMPLATED, DraftError, DraftKind
from pipeline.game.gamefile import Game, templates_folder

DEFAULT_TEMPLATES_DIR = resources.templates_dir()


TEMPLATE_SUFFIX = ".j2"


class Templates:
    """The loaded templates (one per draft kind). Rendering is pure.

    A director's template is code bansha runs: it renders in Jinja's immutable sandbox, so it
    can read the values it is given but reach no Python internals (``''.__class__``, ``__mro__``,
    ``__globals__`` …) and change nothing; such a template is refused with a Chinese error."""

    def __init__(self, texts: Mapping[str, str], origin: Mapping[str, Path]) -> None:
        self.origin = dict(origin)
        self.env = ImmutableSandboxedEnvironment(
            loader=jinja2.DictLoader(dict(texts)),
            autoescape=False,  # HTML escaping is wrong for BBCode: finalize escapes instead
            finalize=_finalize,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
            keep_trailing_newline=False,
        )
        self.env.filters["bbcode_escape"] = bbcode_escape
        missing = [
            k.value
            for k in DraftKind
            if k not in UNTEMPLATED and k.value + TEMPLATE_SUFFIX not in texts
        ]
        if missing:
            raise DraftError(
                "缺少草稿模板："
                + "、".join(f"{m}{TEMPLATE_SUFFIX}" for m in missing)
                + f"（应在 {DEFAULT_TEMPLATES_DIR} 中）"
            )

    def render(self, kind: DraftKind, context: Mapping[str, Any]) -> str:
        name = kind.value + TEMPLATE_SUFFIX
        where = self.origin.get(name, Path(name))
        try:
            text = self.env.get_template(name).render(**context)
        except jinja2.TemplateSyntaxError as exc:
            raise DraftError(f"草稿模板 {where} 第 {exc.lineno} 行语法错误：{exc.message}") from exc
        except jinja2.exceptions.SecurityError as exc:
            raise DraftError(
                f"草稿模板 {where} 试图使用模板中不允许的内部属性或方法"
                f"{_unsafe_what(str(exc))}，已拒绝生成（模板只能读取说明中列出的变量）"
            ) from exc
        except jinja2.UndefinedError as exc:
            raise DraftError(f"草稿模板 {where} 用了没有的变量：{exc.message}") from exc
        except jinja2.TemplateError as exc:
            raise DraftError(f"草稿模板 {where} 无法生成：{exc}") from exc
        except Exception as exc:  # a director's template is code: 1/0, range(10**9) …
            raise DraftError(
                f"草稿模板 {where} 生成时出错（{type(exc).__name__}：{exc}），请检查模板"
            ) from exc
        return _tidy(text)


_UNSAFE_RE = re.compile(r"attribute '([^']*)' of '([^']*)' object")


def _unsafe_what(message: str) -> str:
    """Jinja's SecurityError in Chinese: which attribute of which kind of value."""
    m = _UNSAFE_RE.search(message)
    return f"（{m.group(2)} 的 {m.group(1)}）" if m else ""


def load_templates(templates_dir: Path | str | None = None) -> Templates:
    """Read the templates (the only I/O here): ``config/templates``, then the director's folder.

    A kind with a file in ``templates_dir`` uses it; the others keep the default.
    """
    texts: dict[str, str] = {}
    origin: dict[str, Path] = {}
    folders = [DEFAULT_TEMPLATES_DIR]
    if templates_dir is not None:
        folder = Path(templates_dir)
        if not folder.is_dir():
            raise DraftError(f"草稿模板目录不存在：{folder}")
        folders.append(folder)
    for folder in folders:
        inside = folder.resolve()
        for kind in DraftKind:
            path = folder / (kind.value + TEMPLATE_SUFFIX)
            if not path.is_file():
                continue
            if inside not in path.resolve().parents:
                raise DraftError(
                    f"草稿模板 {path} 是指向模板目录之外的符号链接，不予读取；"
                    "请把模板文件本身放进模板目录"
                )
            try:
                texts[path.name] = path.read_text(encoding="utf-8-sig")  # Notepad: a BOM
            except (OSError, UnicodeDecodeError) as exc:
                raise DraftError(f"无法读取草稿模板 {path}：{exc}") from exc
            origin[path.name] = path
    return _templates(tuple(sorted((name, text, origin[name]) for name, text in texts.items())))


@functools.lru_cache(maxsize=32)
def _templates(files: tuple[tuple[str, str, Path], ...]) -> Templates:
    """The templates of these texts, each compiled once per process: ``bansha run`` drafting
    for many games (or one game cycle after cycle) reuses the compiled templates while their
    texts are the same; a template edited on disk is a new text, read and compiled anew."""
    return Templates({n: t for n, t, _ in files}, {n: o for n, _, o in files})


def templates_dir_for(game: Game, game_path: Path) -> Path | None:
    """The director's template folder of ``[drafts] templates``, relative to the game file and
    inside its folder (no ``..``, no absolute path elsewhere, no symbolic link out of it: the
    game file check says so first, this holds for a game built in memory too)."""
    folder = game.drafts.templates
    if folder is None:
        return None
    try:
        return templates_folder(folder, Path(game_path).resolve().parent)
    except ValueError as exc:
        raise DraftError(f"游戏文件 {game_path}：drafts.templates：{exc}") from exc


def _tidy(text: str) -> str:
    """Trailing spaces off every line, runs of blank lines to one, no blank first/last line."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    out: list[str] = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)
