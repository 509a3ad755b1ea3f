"""BBCode escaping: every value a template prints shown exactly as written, never a tag."""

from __future__ import annotations

import re

#: An empty tag pair: Discuz renders it as ``<strong></strong>`` (desktop and mobile API v4 keep
#: ``[b]``), i.e. nothing, but it sits between ``[`` and the tag name, so no tag can form.
_BREAK = "[b][/b]"


# ``[`` starts every tag — only a ``[`` that could start one is broken: a tag name is ASCII
# letters (or ``*``, a list item) followed by ``=`` or ``]`` (docs/discuz.md §3.1), so ``[M135]``,
# ``[正午]`` or ``[1]`` are shown as written and stay readable in the text the director edits; a
# ``[`` with letters up to the end of the value is broken too (the template's next character
# must not close a tag the value began); ``&#`` would let Discuz turn ``&#9733;`` back into a
# character (dhtmlspecialchars); ``:`` / ``;`` before a letter or ``)(@$'`` start a smiley code
# (``:)``, ``:lol``, ``;P``), and ``://`` a bare link Discuz may turn into ``[url]``; ``{:``
# starts the other smiley sets' codes (``{:2_25:}``); ``@name`` would notify (and link) that user.
_ESCAPE_RE = re.compile(
    r"\[(?=/?[A-Za-z]*(?:[=\]*]|$))|&(?=#)|[:;](?=[A-Za-z)(@$'/])|\{(?=:)|@(?=\S)"
)


_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


class BBCode(str):
    """Text that is already BBCode (escaped, or the director's own markup): printed as is."""

    __slots__ = ()


def bbcode_escape(value: object) -> BBCode:
    """``value`` as text Discuz shows exactly as written, whatever it contains.

    Line breaks and control characters become one space (a name never breaks the layout).
    Already-escaped :class:`BBCode` is returned unchanged.
    """
    if isinstance(value, BBCode):
        return value
    text = _CONTROL_RE.sub(" ", "" if value is None else str(value))
    return BBCode(_ESCAPE_RE.sub(lambda m: m.group(0) + _BREAK, text))


def _escape_lines(text: str) -> BBCode:
    """Several lines of a player's text (遗言), each escaped, the line breaks kept."""
    return BBCode("\n".join(bbcode_escape(line) for line in text.splitlines()))


def _finalize(value: object) -> object:
    if value is None:
        return ""
    if isinstance(value, BBCode):
        return value
    return bbcode_escape(value)
