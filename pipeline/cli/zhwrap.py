"""Help text wrapped for Chinese: by the columns a terminal gives each character, never
putting a space where a docstring's line broke between two Chinese characters.

click rewraps a help paragraph by joining its source lines with a space and breaking it at
spaces only, counting one column a character. For Chinese that prints a stray space wherever
the docstring's line broke (``持有同一把锁时 立即退出``), and lines of 78 characters that a
78-column terminal shows as two. :func:`wrap_text` keeps click's paragraph rules (an empty
line separates paragraphs; a paragraph whose first line is ``\\b`` is printed as written;
a paragraph's indent is kept) and differs in four ways:

- source lines are joined with nothing where either side is a Chinese character or a
  full-width punctuation mark, with a space elsewhere (``bansha publish`` / ``持有`` keeps its
  space, as the text writes it between Chinese and Latin);
- the width is the terminal's columns: a wide (East Asian ``W``/``F``) character is two;
- a line may break between two Chinese characters and between a Chinese character and a
  Latin word, as well as at a space — but not before a closing mark (，。、）…) or after an
  opening one (（「《 …), the rule Chinese typesetting follows. A Latin word (an option, a
  path, a URL) is never split.
- no space is printed after a full-width mark (。，）…), which carries its own: click's
  ``[必填]`` follows ``第几天。`` directly.

:func:`term_len` measures the same way, so the options' column lines up with Chinese
metavars (``[加速|不加速|按申请计算]``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = ["term_len", "wrap_text"]

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
#: no line begins with these (closing marks, Chinese and Latin)
_NO_START = frozenset("，。、；：！？）】」』》〉”’…—～%,.;:!?)]}")
#: no line ends with these (opening marks)
_NO_END = frozenset("（【「『《〈“‘([{")


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _width(ch: str) -> int:
    if _wide(ch):
        return 2
    if unicodedata.combining(ch) or ch in "\u200b\u200c\u200d":
        return 0
    return 1


def term_len(text: str) -> int:
    """The columns ``text`` takes in a terminal (ANSI styles take none)."""
    plain = _ANSI.sub("", text)
    if plain.isascii():
        return len(plain)
    return sum(_width(ch) for ch in plain)


def _mark(ch: str) -> bool:
    """A punctuation mark of Chinese text (，。（ — … “): not ASCII, not a letter."""
    return not ch.isascii() and not ch.isalnum()


def _wide_mark(ch: str) -> bool:
    """A full-width punctuation mark (。，）…): no space follows it."""
    return _mark(ch) and _wide(ch)


def _join(lines: list[str]) -> str:
    """A paragraph's source lines as one line: nothing between two lines where the break
    falls between Chinese characters or next to a Chinese mark, a space elsewhere (between
    Chinese and a Latin word, as the text spaces them)."""
    out = lines[0]
    for line in lines[1:]:
        if not out or not line:
            out += line
            continue
        a, b = out[-1], line[0]
        chinese = (_wide(a) or _mark(a)) and (_wide(b) or _mark(b))
        out += "" if chinese or _mark(a) or _mark(b) else " "
        out += line
    return out


def _atoms(text: str) -> Iterator[tuple[str, str]]:
    """``(space before, atom)`` pairs: an atom is what no line may break inside — a Latin
    word, or one wide character, with the marks that may not be parted from it."""
    pieces = re.findall(r"\s+|[^\s]", text)
    atoms: list[tuple[str, str]] = []
    space = ""
    for piece in pieces:
        if piece.isspace():
            # none after a full-width mark: it carries its own space (``第几天。[必填]``,
            # where click writes two spaces before the ``[必填]`` it adds)
            space = "" if atoms and _wide_mark(atoms[-1][1][-1]) else " "
            continue
        if atoms and not space:
            prev = atoms[-1][1]
            last = prev[-1]
            glued = (
                piece in _NO_START
                or last in _NO_END
                or not (_wide(piece) or _wide(last))  # inside a Latin word
                or (piece.isascii() and not piece.isalnum())  # 文件名> stays whole
                or (last.isascii() and not last.isalnum())  # <游戏
            )
            if glued:
                atoms[-1] = (atoms[-1][0], prev + piece)
                continue
        atoms.append((space, piece))
        space = ""
    yield from atoms


def _fill(text: str, width: int, first: str, rest: str) -> str:
    lines: list[str] = []
    line, used = first, term_len(first)
    empty = True
    for space, atom in _atoms(text):
        w = term_len(atom)
        gap = space if not empty else ""
        if not empty and used + len(gap) + w > width:
            lines.append(line)
            line, used, gap = rest, term_len(rest), ""
        line += gap + atom
        used += len(gap) + w
        empty = False
    lines.append(line)
    return "\n".join(lines)


def wrap_text(
    text: str,
    width: int = 78,
    initial_indent: str = "",
    subsequent_indent: str = "",
    preserve_paragraphs: bool = False,
) -> str:
    """click's ``formatting.wrap_text`` (same parameters), wrapping as this module says."""
    text = text.expandtabs()
    if not preserve_paragraphs:
        return _fill(_join(text.splitlines() or [""]), width, initial_indent, subsequent_indent)
    paragraphs: list[tuple[int, bool, list[str]]] = []
    buf: list[str] = []
    indent = 0
    for line in [*text.splitlines(), ""]:
        if line:
            if not buf:  # the paragraph's indent is its first line's
                indent = term_len(line) - term_len(line.lstrip())
                line = line.lstrip()
            buf.append(line)
            continue
        if buf:
            raw = buf[0].strip() == "\b"
            paragraphs.append((indent, raw, buf[1:] if raw else buf))
            buf = []
    out = []
    for indent, raw, lines in paragraphs:
        first, rest = initial_indent + " " * indent, subsequent_indent + " " * indent
        if raw:  # as written, each line indented as click does
            out.append("\n".join((first if i == 0 else rest) + x for i, x in enumerate(lines)))
        else:
            out.append(_fill(_join([x.strip() for x in lines]), width, first, rest))
    return "\n\n".join(out)
