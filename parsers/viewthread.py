"""Parse a desktop Discuz! X thread page (``forum.php?mod=viewthread&tid=T&page=N``).

Markup reference: docs/discuz.md §1 (templates ``viewthread_node.htm`` /
``viewthread_node_body.htm``, identical from X3.1 to X3.5). Every selector the parser relies on is
in :data:`SELECTORS`.

Speed (bench/bench_parse.py): lexbor is given only the part of the page from the top pager to
the end of the post list (the head, the fast-reply editor and the footer are a quarter of the
bytes), less each post's profile card (half of what is left) and the button rows below its
message (a third of the rest; :func:`_without_profiles` says when either is left out); the
post tables and their parts come from ONE selection over the post list; a message is read in
one walk of its nodes, with no re-parsing and no regex over the page. The walk keeps its own
stack (any depth, no recursion) and each element's text is sliced from the text as it is
built, so nested markup costs time in proportion to its size, not size × depth.

The message reader :func:`extract_message` is shared with :mod:`parsers.mobile`: it turns a
message's HTML node into the visible text (quotes removed), the quoted pids, the quoted texts,
the edit note and the presentation marks, the same way for both sources.

Decisions (see docs/rulings.md):

* Quote blocks are ``div.quote`` (desktop, API v1), ``div.reply_wrap`` (API v4) and any
  ``blockquote`` (a theme's quote; note that ``[indent]`` also renders as a bare blockquote).
  Their text is never part of ``text``; it is kept in ``quote_texts``.
* Text hidden by colour or size stays in ``text`` and is *marked*; whoever reads votes must
  check the marks (a careful director distrusts marked text rather than silently dropping it).
  Jammer text (``font.jammer``, ``display:none`` spans) is Discuz's anti-copy noise, not the
  author's words, and is removed everywhere.
* RED: a colour within RGB distance 100 of #FF0000 (red, #F00, #FF3333, #CC0000, crimson,
  firebrick, orangered; not darkred, maroon, tomato, pink). HIDDEN_COLOUR: within distance 45
  of white (white, #FFF, #EEE, snow, ivory …) or ``transparent``.
* ENLARGED: ``<font size>`` 4 or more, or a CSS size above 16px (= size 3, "medium"); posts are
  14px by default, so size 3 is not flagged. TINY: size 1 or less, or 10px or less.
* A ``[hide]`` box is marked HIDE_TAG: ``showhide`` (content shown, kept in ``text``, the
  "本帖隐藏的内容" header dropped) or ``locked`` (content not shown to this account; the box's
  own invitation text is Discuz's, not the author's, and is not in ``text``).
* Any element at all in a message (outside the edit note and quoted text) gives a BBCODE mark
  with its tag name; a quote block gives ``quote`` and a hide box ``hide``.
* The marks of one message hold at most :data:`MARK_TEXT_BUDGET` characters of text (twenty
  full-length posts); past that, a mark inside an element that has a mark of the same kind is
  left out, since the outer mark holds all of its text (hostile nesting with text at every
  level). Hidden text therefore stays wholly marked; only the count of nested marks shrinks.
* Posts come back ordered by pid (Discuz's page-1 order is not trusted) and de-duplicated.
* A page whose HTML does not end with ``</html>`` is truncated: PageError(MALFORMED).
"""

from __future__ import annotations

import codecs
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo

from selectolax.lexbor import LexborAttributes, LexborHTMLParser, LexborNode

from parsers.discuz_time import parse_discuz_time, parse_edit_note
from parsers.lazyre import LazyPattern
from parsers.pagecheck import check_page
from parsers.records import (
    EditNote,
    Mark,
    MarkKind,
    PageError,
    PageErrorKind,
    Post,
    PostState,
    ThreadPage,
)

__all__ = ["SELECTORS", "MessageParts", "extract_message", "parse_viewthread"]

SELECTORS: dict[str, str] = {
    # page
    "postlist": "#postlist",
    "post": "table[id^='pid']",  # inside #postlist; deleted placeholders have no class plhin
    "subject": "#thread_subject",
    "formhash": "input[name='formhash']",
    "replies": "div.hm.ptn span.xi1",  # page 1 only: 查看 N | 回复 N
    "pager": "div.pg",  # the first one holding a <strong> (the current page)
    "pager_current": "strong",
    "pager_total": "span[title^='共']",  # title="共 N 页"
    "pager_label": "label",  # " / N 页"
    # one post (inside the post table)
    "floor_link": "a[id^='postnum']",  # <em>N</em><sup>#</sup> or 楼主/沙发/板凳/地板
    "placeholder_floor": "div.pi strong a",  # deleted placeholder: <a> without id
    "placeholder_text": "div.pct",  # 无效楼层，该帖已经被删除
    "author_link": "div.authi a[href*='uid=']",  # favatar (authoronleft) or the post header
    "author_plain": "div.favatar div.pi",  # anonymous / deleted user: no uid link
    "posted_at": "em[id^='authorposton']",
    "posted_at_title": "span[title]",
    "message": "td[id^='postmessage_']",  # td.t_f#postmessage_PID
    "locked": "div.pcb > div.locked",  # 屏蔽 / 仅作者可见 / 密码 box replacing the message
    "pending": "span.xg1",  # 待审核 in place of the message
    "show_all_link": "div.pti div.authi a[rel='nofollow']",  # 只看该作者 | 显示全部楼层
    # inside a message: matched by tag and class while walking the message (same meaning)
    "quote": "div.quote, div.reply_wrap, blockquote",
    "quote_link": "a[href*='findpost']",
    "edit_note": "i.pstatus",
    "jammer": "font.jammer, span[style*='display:none'], span[style*='display: none']",
    "ads": "div.a_pr, div.attach_nopermission",
    "hide_shown": "div.showhide",
    "hide_locked": "div.locked",
}

_FLOOR_NAMES = {"楼主": 1, "沙发": 2, "板凳": 3, "地板": 4}
_DIGITS = re.compile(r"\d{1,9}")
_UID = re.compile(r"(?:^|[?&;])uid=(\d{1,18})(?!\d)")
_QUOTE_PID = re.compile(r"(?:^|[?&;])pid=(\d{1,18})(?!\d)")
_TOTAL = re.compile(r"(\d{1,9})\s*页")
_TITLE_TIME = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{1,2}):(\d{1,2})")
_CHARSET_META = re.compile(rb"""charset\s*=\s*["']?\s*([a-z0-9_-]{2,20})""")  # on lowered bytes
_MEMBER_UID = re.compile(rb"discuz_uid\s*=\s*'(\d{1,18})'")

_BLOCK_WORDS = (  # elements that start a new line in the rendered text
    "address article aside blockquote center dd details div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody "
    "td tfoot th thead tr ul"
)
_BLOCK_TAGS = frozenset(_BLOCK_WORDS.split())
_SKIP_TAGS = frozenset(("script", "style", "noscript", "template", "textarea", "head", "title"))
_NOT_MARKUP = frozenset(("wbr",))  # no line break, no markup a reader would see
_NOISE_TAGS = frozenset(("font", "span", "div"))


# --------------------------------------------------------------------------- colours & sizes

# CSS named colours (CSS Color 4), "name rrggbb" pairs.
_COLOUR_TABLE = """
aliceblue f0f8ff antiquewhite faebd7 aqua 00ffff aquamarine 7fffd4 azure f0ffff
beige f5f5dc bisque ffe4c4 black 000000 blanchedalmond ffebcd blue 0000ff
blueviolet 8a2be2 brown a52a2a burlywood deb887 cadetblue 5f9ea0 chartreuse 7fff00
chocolate d2691e coral ff7f50 cornflowerblue 6495ed cornsilk fff8dc crimson dc143c
cyan 00ffff darkblue 00008b darkcyan 008b8b darkgoldenrod b8860b darkgray a9a9a9
darkgreen 006400 darkgrey a9a9a9 darkkhaki bdb76b darkmagenta 8b008b
darkolivegreen 556b2f darkorange ff8c00 darkorchid 9932cc darkred 8b0000
darksalmon e9967a darkseagreen 8fbc8f darkslateblue 483d8b darkslategray 2f4f4f
darkslategrey 2f4f4f darkturquoise 00ced1 darkviolet 9400d3 deeppink ff1493
deepskyblue 00bfff dimgray 696969 dimgrey 696969 dodgerblue 1e90ff firebrick b22222
floralwhite fffaf0 forestgreen 228b22 fuchsia ff00ff gainsboro dcdcdc
ghostwhite f8f8ff gold ffd700 goldenrod daa520 gray 808080 green 008000
greenyellow adff2f grey 808080 honeydew f0fff0 hotpink ff69b4 indianred cd5c5c
indigo 4b0082 ivory fffff0 khaki f0e68c lavender e6e6fa lavenderblush fff0f5
lawngreen 7cfc00 lemonchiffon fffacd lightblue add8e6 lightcoral f08080
lightcyan e0ffff lightgoldenrodyellow fafad2 lightgray d3d3d3 lightgreen 90ee90
lightgrey d3d3d3 lightpink ffb6c1 lightsalmon ffa07a lightseagreen 20b2aa
lightskyblue 87cefa lightslategray 778899 lightslategrey 778899
lightsteelblue b0c4de lightyellow ffffe0 lime 00ff00 limegreen 32cd32 linen faf0e6
magenta ff00ff maroon 800000 mediumaquamarine 66cdaa mediumblue 0000cd
mediumorchid ba55d3 mediumpurple 9370db mediumseagreen 3cb371
mediumslateblue 7b68ee mediumspringgreen 00fa9a mediumturquoise 48d1cc
mediumvioletred c71585 midnightblue 191970 mintcream f5fffa mistyrose ffe4e1
moccasin ffe4b5 navajowhite ffdead navy 000080 oldlace fdf5e6 olive 808000
olivedrab 6b8e23 orange ffa500 orangered ff4500 orchid da70d6 palegoldenrod eee8aa
palegreen 98fb98 paleturquoise afeeee palevioletred db7093 papayawhip ffefd5
peachpuff ffdab9 peru cd853f pink ffc0cb plum dda0dd powderblue b0e0e6
purple 800080 rebeccapurple 663399 red ff0000 rosybrown bc8f8f royalblue 4169e1
saddlebrown 8b4513 salmon fa8072 sandybrown f4a460 seagreen 2e8b57 seashell fff5ee
sienna a0522d silver c0c0c0 skyblue 87ceeb slateblue 6a5acd slategray 708090
slategrey 708090 snow fffafa springgreen 00ff7f steelblue 4682b4 tan d2b48c
teal 008080 thistle d8bfd8 tomato ff6347 turquoise 40e0d0 violet ee82ee
wheat f5deb3 white ffffff whitesmoke f5f5f5 yellow ffff00 yellowgreen 9acd32
"""
_COLOUR_WORDS = _COLOUR_TABLE.split()
_NAMED_COLOURS: dict[str, tuple[int, int, int]] = {
    name: (int(code[0:2], 16), int(code[2:4], 16), int(code[4:6], 16))
    for name, code in zip(_COLOUR_WORDS[0::2], _COLOUR_WORDS[1::2], strict=True)
}
#: read only in a message with a colour or a size: compiled when one comes
_HEX = LazyPattern(r"#?([0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})")
_RGB = LazyPattern(r"rgba?\(\s*([\d.]+%?)\s*[,\s]\s*([\d.]+%?)\s*[,\s]\s*([\d.]+%?)")
_STYLE_DECL = LazyPattern(r"(?:^|;)\s*(color|font-size)\s*:\s*([^;]+)", re.I)
_CSS_SIZE = LazyPattern(r"([\d.]{1,12})\s*(px|pt|em|rem|%)")
_RED_DISTANCE = 100
_WHITE_DISTANCE = 45
_DEFAULT_PX = 14  # Discuz's post font size (td.t_f)
_LARGE_WORDS = frozenset(("large", "x-large", "xx-large", "xxx-large", "larger"))
_SMALL_WORDS = frozenset(("x-small", "xx-small"))


def _rgb(value: str) -> tuple[int, int, int] | None:
    v = value.strip().lower()
    if v in _NAMED_COLOURS:
        return _NAMED_COLOURS[v]
    match = _RGB.match(v)
    if match is not None:
        channels = []
        for part in match.groups():
            try:
                number = float(part.rstrip("%"))
            except ValueError:  # "rgb(1.2.3, 0, 0)": the author's typo, not a colour
                return None
            channels.append(min(255, round(number * 2.55 if part.endswith("%") else number)))
        return channels[0], channels[1], channels[2]
    match = _HEX.fullmatch(v)
    if match is not None:  # "#f00", "#ff0000", legacy "ff0000" (HTML colour parsing)
        digits = match.group(1)
        if len(digits) in (3, 4):
            digits = "".join(c * 2 for c in digits[:3])
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    return None


def _colour_kind(value: str) -> MarkKind | None:
    if value.strip().lower() == "transparent":
        return MarkKind.HIDDEN_COLOUR
    rgb = _rgb(value)
    if rgb is None:
        return None
    if math.dist(rgb, (255, 0, 0)) <= _RED_DISTANCE:
        return MarkKind.RED
    if math.dist(rgb, (255, 255, 255)) <= _WHITE_DISTANCE:
        return MarkKind.HIDDEN_COLOUR
    return None


def _font_size_kind(value: str) -> MarkKind | None:
    """``<font size="N">``: 3 is "medium" (16px), the default post text is 14px."""
    v = value.strip()
    match = _DIGITS.search(v)
    if match is None:
        return None
    size = int(match.group(0))
    if v.startswith("+"):
        size = 3 + size
    elif v.startswith("-"):
        size = 3 - size
    if size >= 4:
        return MarkKind.ENLARGED
    if size <= 1:
        return MarkKind.TINY
    return None


def _css_size_kind(value: str) -> MarkKind | None:
    v = value.strip().lower()
    if v in _LARGE_WORDS:
        return MarkKind.ENLARGED
    if v in _SMALL_WORDS:
        return MarkKind.TINY
    match = _CSS_SIZE.search(v)
    if match is None:
        return None
    try:
        number = float(match.group(1))
    except ValueError:
        return None
    unit = match.group(2)
    px = {
        "px": number,
        "pt": number * 4 / 3,
        "em": number * _DEFAULT_PX,
        "rem": number * 16,
        "%": number * _DEFAULT_PX / 100,
    }[unit]
    if px > 16:
        return MarkKind.ENLARGED
    if px <= 10:
        return MarkKind.TINY
    return None


def _presentation(tag: str, attrs: LexborAttributes) -> list[tuple[MarkKind, str]]:
    found: list[tuple[MarkKind, str]] = [(MarkKind.BBCODE, tag)]
    colour = attrs.get("color")
    if colour:
        kind = _colour_kind(colour)
        if kind is not None:
            found.append((kind, colour))
    size = attrs.get("size")
    if size and tag == "font":
        kind = _font_size_kind(size)
        if kind is not None:
            found.append((kind, size))
    style = attrs.get("style")
    if style:
        for match in _STYLE_DECL.finditer(style):
            prop, value = match.group(1).lower(), match.group(2).strip()
            kind = _colour_kind(value) if prop == "color" else _css_size_kind(value)
            if kind is not None:
                found.append((kind, value))
    return found


# ----------------------------------------------------------------------- a message's text and marks


@dataclass(frozen=True, slots=True)
class MessageParts:
    """What :func:`extract_message` reads from one message."""

    text: str
    quoted_pids: tuple[int, ...] = ()
    quote_texts: tuple[str, ...] = ()
    edit: EditNote | None = None
    marks: tuple[Mark, ...] = ()


def _normalise(raw: str) -> str:
    """One line per line break; spaces collapsed; blank lines trimmed at the ends, runs merged.

    The reference form: :class:`_TextSink` builds exactly this while the text is read."""
    lines: list[str] = []
    for line in raw.split("\n"):
        line = " ".join(line.split())
        if line or (lines and lines[-1]):
            lines.append(line)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


class _TextSink:
    """Text read from a message, kept in :func:`_normalise`'d form as it arrives.

    ``_normalise`` keeps the words (runs of non-space characters) and puts between two words
    "" (same word), " ", "\\n" or "\\n\\n" depending only on what lies between them (nothing,
    spaces, one line break, two or more). So the normalised text of any stretch of the input is
    a slice of the normalised whole: the chunks appended since the stretch began, less the
    separator in front of the first one. Each chunk is one text piece's words with the
    separator before them; the separator is only written when the next word arrives, so the
    chunks never end in one. An element's text is then read in time proportional to its own
    text, not to the whole subtree's markup (re-normalising each nested element's
    pieces made 800 nested ``[align]`` quadratic).
    """

    __slots__ = ("chunks", "newlines", "space")

    def __init__(self) -> None:
        self.chunks: list[str] = []
        self.newlines = 0  # line breaks since the last word
        self.space = False  # spaces since the last word

    def add(self, piece: str) -> None:
        """A text node's text (its own line breaks count as spaces, as in a browser)."""
        words = piece.split()
        if not words:
            if piece:
                self.space = True
            return
        chunk = " ".join(words)
        if self.chunks:
            if self.newlines:
                chunk = ("\n\n" if self.newlines > 1 else "\n") + chunk
            elif self.space or piece[0].isspace():
                chunk = " " + chunk
        self.newlines = 0
        self.space = piece[-1].isspace()
        self.chunks.append(chunk)

    def since(self, start: int) -> str:
        """The normalised text of everything added after ``len(self.chunks)`` was ``start``."""
        if start >= len(self.chunks):
            return ""
        parts = self.chunks[start:]
        first = parts[0]
        if first[0] in " \n":  # the separator from the text before
            parts[0] = first.lstrip(" \n")
        return "".join(parts)

    def value(self) -> str:
        return "".join(self.chunks)


def _is_noise(tag: str, classes: list[str], attrs: LexborAttributes) -> bool:
    """Jammer text and ads inside a message cell: not the author's, removed everywhere."""
    if tag == "font":
        return "jammer" in classes
    if tag == "span":
        return "display:none" in (attrs.get("style") or "").replace(" ", "").lower()
    return tag == "div" and ("a_pr" in classes or "attach_nopermission" in classes)


def _quote_link_pid(href: str | None) -> int | None:
    """pid of a ``goto=findpost`` link (parameters in any order; v4 escapes ``&`` twice)."""
    if not href or "findpost" not in href:
        return None
    href = href.replace("&amp;", "&")  # v4 escapes the link's "&" twice
    if "goto=findpost" not in href:
        return None
    match = _QUOTE_PID.search(href)
    return int(match.group(1)) if match else None


# The marks of one message hold at most about this many characters of text: twenty times a
# full post at Discuz's default length limit (``maxpostsize`` 10000, docs/discuz.md §4.4). Past it,
# a mark nested inside an element that has a mark of the same kind is not recorded (the
# enclosing mark holds all of its text), so a message of deeply nested markup with text at
# every level costs time and memory in proportion to its size, not to its size times its
# depth. Real posts never come near it.
MARK_TEXT_BUDGET = 200_000
_NO_KINDS = dict.fromkeys(MarkKind, 0)

# frame: (children, is_block, marks waiting for their text or None, chunk index in `out`)
_Frame = tuple[Iterator[LexborNode], bool, list[tuple[MarkKind, str]] | None, int]


def extract_message(root: LexborNode, tz: tzinfo) -> MessageParts:
    """Read a message node: text without quotes, quotes, edit note, marks.

    Jammer and ad nodes are removed from ``root`` in place, so ``root.inner_html`` afterwards is
    the message as its author wrote it. One walk over the nodes with an explicit stack (no
    recursion, any depth), and time in proportion to the nodes plus the text recorded.
    """
    walk = _MessageWalk(root, tz)
    stack, visit, leave = walk.stack, walk.visit, walk.leave
    while stack:
        frame = stack[-1]
        for child in frame[0]:
            if visit(child):  # an element was entered: its children are read first
                break
        else:
            stack.pop()
            leave(frame[1], frame[2], frame[3])
    for node in walk.noise:
        node.decompose()
    return MessageParts(
        text=walk.main.value(),
        quoted_pids=tuple(walk.quoted),
        quote_texts=tuple(walk.quote_texts),
        edit=walk.edit,
        marks=tuple(walk.marks),
    )


class _MessageWalk:
    """What one walk over a message has found so far, and where its text goes now."""

    __slots__ = (
        "edit",
        "main",
        "marks",
        "noise",
        "open_kinds",
        "out",
        "quote_level",
        "quote_pid",
        "quote_texts",
        "quoted",
        "spent",
        "stack",
        "tz",
    )

    def __init__(self, root: LexborNode, tz: tzinfo) -> None:
        self.tz = tz
        self.main = _TextSink()
        self.out = self.main  # where text goes: `main`, or the sink of the quote being read
        self.marks: list[Mark] = []
        self.quoted: list[int] = []
        self.quote_texts: list[str] = []
        self.edit: EditNote | None = None
        self.noise: list[LexborNode] = []
        self.quote_level = 0  # stack depth of the open quote frame (0: not in a quote)
        self.quote_pid: int | None = None
        self.open_kinds = _NO_KINDS.copy()  # marks of each kind waiting on the stack
        self.spent = 0  # characters of text held by `marks`
        self.stack: list[_Frame] = [(root.iter(include_text=True), False, None, 0)]

    def leave(self, block: bool, pending: list[tuple[MarkKind, str]] | None, start: int) -> None:
        """An element's frame is done (already popped): close its quote or its marks."""
        if self.quote_level and len(self.stack) < self.quote_level:
            self._leave_quote()
            return
        if pending:
            self._close_marks(pending, start)
        if block:
            self.out.newlines += 1

    def _leave_quote(self) -> None:
        quote_text = self.out.value()
        self.quote_texts.append(quote_text)
        self.marks.append(Mark(MarkKind.BBCODE, "quote", quote_text))
        self.spent += len(quote_text)
        if self.quote_pid is not None and self.quote_pid not in self.quoted:
            self.quoted.append(self.quote_pid)
        self.out, self.quote_level, self.quote_pid = self.main, 0, None

    def _close_marks(self, pending: list[tuple[MarkKind, str]], start: int) -> None:
        """Record the element's marks with the text read since ``start``."""
        open_kinds = self.open_kinds
        for kind, _ in pending:
            open_kinds[kind] -= 1
        inside: str | None = None
        for kind, value in pending:
            if self.spent > MARK_TEXT_BUDGET and open_kinds[kind]:
                continue  # an enclosing mark of this kind holds this text too
            if inside is None:
                inside = self.out.since(start)
            self.marks.append(Mark(kind, value, inside))
            self.spent += len(inside)

    def visit(self, child: LexborNode) -> bool:
        """A child node: text, a line break, noise, or an element to walk into (True: its frame
        is on the stack now)."""
        tag = child.tag
        if tag == "-text":
            piece = child.text_content
            if piece:
                self.out.add(piece)
            return False
        if tag == "br":
            self.out.newlines += 1
            return False
        if tag in _NOT_MARKUP:
            return False
        if not tag or tag[0] == "-" or tag in _SKIP_TAGS:
            return False
        attrs = child.attrs
        css_class = attrs.get("class")
        classes = css_class.split() if css_class else []
        if tag in _NOISE_TAGS and _is_noise(tag, classes, attrs):
            self.noise.append(child)
            return False
        is_block = tag in _BLOCK_TAGS
        if self.quote_level:  # inside a quote: text and the 回复 link only
            if tag == "a" and self.quote_pid is None:
                self.quote_pid = _quote_link_pid(attrs.get("href"))
            if is_block:
                self.out.newlines += 1
            self.stack.append((child.iter(include_text=True), is_block, None, 0))
            return True
        return self._visit_element(child, tag, classes, attrs, is_block)

    def _visit_element(
        self,
        child: LexborNode,
        tag: str,
        classes: list[str],
        attrs: LexborAttributes,
        is_block: bool,
    ) -> bool:
        """An element outside quotes: an edit note, a quote, a [hide] or presentation markup."""
        if tag == "i" and "pstatus" in classes:  # 本帖最后由 X 于 T 编辑 (added by Discuz)
            if self.edit is None:
                self.edit = parse_edit_note(child.text(), self.tz)
            return False
        if tag == "blockquote" or (
            tag == "div" and ("quote" in classes or "reply_wrap" in classes)
        ):
            self.out = _TextSink()
            self.stack.append((child.iter(include_text=True), False, None, 0))
            self.quote_level = len(self.stack)
            return True
        if tag == "div" and "locked" in classes:  # [hide] not shown to this account
            self.marks.append(Mark(MarkKind.HIDE_TAG, "locked", ""))
            self.marks.append(Mark(MarkKind.BBCODE, "hide", ""))
            return False
        grandchildren = child.iter(include_text=True)
        if tag == "div" and "showhide" in classes:  # [hide] shown: drop its <h4> header
            waiting = [(MarkKind.HIDE_TAG, "showhide"), (MarkKind.BBCODE, "hide")]
            grandchildren = (node for node in grandchildren if node.tag != "h4")
        else:
            waiting = _presentation(tag, attrs)
        for kind, _ in waiting:
            self.open_kinds[kind] += 1
        if is_block:
            self.out.newlines += 1
        self.stack.append((grandchildren, is_block, waiting, len(self.out.chunks)))
        return True


# --------------------------------------------------------------------------- decoding


def _codec(name: str) -> str | None:
    try:
        codec = codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None
    if codec in ("gbk", "gb2312", "gb18030", "hz"):
        return "gb18030"  # superset of GBK: rare characters do not break the page
    return codec


def _page_codec(body: bytes, encoding: str | None) -> str:
    """The codec to read the page with ("utf-8" or a legacy one such as gb18030).

    Like a browser, a page whose declarations all say UTF-8 is read as UTF-8 (a stray bad byte
    becomes U+FFFD); the bytes decide only when nothing is declared or declarations disagree
    (a GBK forum with a stale ``<meta charset="utf-8">`` but ``charset = 'gbk'`` in its script).
    """
    if encoding:
        return _codec(encoding) or "utf-8"
    declared = {_codec(m.decode("ascii")) for m in _CHARSET_META.findall(body[:2048].lower())}
    declared.discard(None)
    if declared == {"utf-8"}:
        return "utf-8"
    legacy = next((c for c in sorted(declared, key=str) if c != "utf-8"), None) or "gb18030"
    if declared and "utf-8" not in declared:
        return legacy
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return legacy
    return "utf-8"


# --------------------------------------------------------------------------- posts


def _first_int(text: str) -> int | None:
    match = _DIGITS.search(text)
    return int(match.group(0)) if match else None


def _floor(link: LexborNode | None) -> int | None:
    """Digits in ``a#postnumPID em``; else 楼主/沙发/板凳/地板; "来自 N#" (sticky); else None."""
    if link is None:
        return None
    for em in link.iter():
        if em.tag == "em":
            digits = em.text()
            if digits.isascii() and digits.isdigit() and len(digits) < 10:
                return int(digits)
            number = _first_int(digits)
            if number is not None:
                return number
    label = " ".join(link.text().split())
    for name, number in _FLOOR_NAMES.items():
        if name in label:
            return number
    if "来自" in label:  # 置顶回复: "置顶 来自 5#"
        return _first_int(label.split("来自", 1)[1])
    return None  # 推荐 (hot reply) or a custom name


def _author_from(link: LexborNode | None) -> tuple[str, int] | None:
    if link is None:
        return None
    name = link.text().strip()
    match = _UID.search(link.attrs.get("href") or "")
    if name and match is not None:
        return name, int(match.group(1))
    return None


def _author(table: LexborNode) -> tuple[str, int]:
    """The uid link in ``div.authi`` (left column or post header); else 匿名 / deleted user."""
    found = _author_from(table.css_first(SELECTORS["author_link"]))
    if found is not None:
        return found
    for link in table.css(SELECTORS["author_link"]):  # e.g. an avatar link without text first
        found = _author_from(link)
        if found is not None:
            return found
    plain = table.css_first(SELECTORS["author_plain"])  # 匿名 / "name 该用户已被删除"
    if plain is not None:
        name = plain.text()
        for em in plain.css("em"):
            name = name.replace(em.text(), "")
        return " ".join(name.split()), 0
    return "", 0


def _deleted_placeholder(table: LexborNode, pid: int, tid: int) -> Post | None:
    """``<table id="pidN">`` without a post: 无效楼层，该帖已经被删除 (position mode gaps).

    Caution: Discuz gives such a placeholder the real pid only when the post still exists but
    is invisible (recycle bin); for a position with no post left it makes one up (the previous
    pid + 1, ``forum_viewthread.php``), which may be the pid of a real later post. On a page a
    real post always wins over a placeholder; whoever stores posts must not let a DELETED
    placeholder overwrite a post already seen with that pid.
    """
    body = table.css_first(SELECTORS["placeholder_text"])
    if body is None:
        return None
    notice = body.text()
    if "无效楼层" not in notice and "该帖已经被删除" not in notice:
        return None
    return Post(
        tid=tid,
        pid=pid,
        floor=_floor(table.css_first(SELECTORS["placeholder_floor"])),
        author="",
        uid=0,
        posted_at=None,
        message_html="",
        text="",
        state=PostState.DELETED,
    )


class _PostNodes:
    """One post table and the parts of it the parser reads (found one by one)."""

    __slots__ = ("floor_link", "locked", "message", "pid", "posted_at", "table")

    def __init__(self, table: LexborNode, pid: int | None) -> None:
        self.table = table
        self.pid = pid
        self.floor_link: LexborNode | None = None
        self.posted_at: LexborNode | None = None
        self.message: LexborNode | None = None
        self.locked: LexborNode | None = None


_PART_KEYS = ("post", "floor_link", "posted_at", "message", "locked")
_PARTS_QUERY = ", ".join(SELECTORS[key] for key in _PART_KEYS)


def _suffix_pid(ident: str | None, prefix: str) -> int | None:
    if not ident or not ident.startswith(prefix):
        return None
    digits = ident[len(prefix) :]
    if 0 < len(digits) <= 18 and digits.isascii() and digits.isdigit():
        return int(digits)
    return None


def _post_nodes(postlist: LexborNode) -> list[_PostNodes]:
    """Every post table with its parts, from ONE selection over the post list.

    The selection returns nodes in document order, so each part belongs to the table before it;
    parts carrying a pid in their id must also agree with that table's pid.
    """
    found: list[_PostNodes] = []
    current: _PostNodes | None = None
    ids: tuple[str, str, str] = ("", "", "")  # postnumN, authorpostonN, postmessage_N
    for node in postlist.css(_PARTS_QUERY):
        tag = node.tag
        if tag == "table":
            current = _PostNodes(table=node, pid=_suffix_pid(node.id, "pid"))
            found.append(current)
            if current.pid is not None:
                ids = (
                    f"postnum{current.pid}",
                    f"authorposton{current.pid}",
                    f"postmessage_{current.pid}",
                )
            continue
        if current is None or current.pid is None:
            continue
        if tag == "div":
            current.locked = current.locked or node
            continue
        ident = node.id
        if tag == "a":
            if current.floor_link is None and ident == ids[0]:
                current.floor_link = node
        elif tag == "em":
            if current.posted_at is None and ident == ids[1]:
                current.posted_at = node
        elif current.message is None and ident == ids[2]:
            current.message = node
    return found


def _posted_at(when_node: LexborNode, pid: int, tz: tzinfo, now: datetime) -> datetime:
    title = None
    last = when_node.last_child  # 发表于 <span title="Y-n-j H:i:s">3&nbsp;分钟前</span>
    if last is not None and last.tag == "span":
        title = last.attrs.get("title")
    else:
        for child in when_node.iter():
            if child.tag == "span":
                title = child.attrs.get("title")
                if title:
                    break
    if title:  # the usual case: exact time in the title
        match = _TITLE_TIME.fullmatch(title)
        if match is not None:
            year, month, day, hour, minute, second = map(int, match.groups())
            try:
                return datetime(year, month, day, hour, minute, second, tzinfo=tz)
            except ValueError:
                pass  # impossible date: let the general parser report it
    try:
        return parse_discuz_time(when_node.text(), tz=tz, now=now, title=title)
    except ValueError as exc:
        raise PageError(PageErrorKind.MALFORMED, f"帖子 pid={pid}：{exc}") from exc


def _parse_post(nodes: _PostNodes, pid: int, *, tid: int, tz: tzinfo, now: datetime) -> Post:
    table, message, locked, when_node = nodes.table, nodes.message, nodes.locked, nodes.posted_at
    if when_node is None and message is None:
        placeholder = _deleted_placeholder(table, pid, tid)
        if placeholder is not None:
            return placeholder
    if when_node is None:
        raise PageError(PageErrorKind.MALFORMED, f"帖子 pid={pid} 没有发表时间")
    if message is None and locked is None:
        raise PageError(PageErrorKind.MALFORMED, f"帖子 pid={pid} 没有正文")
    posted_at = _posted_at(when_node, pid, tz, now)
    author, uid = _author(table)
    floor = _floor(nodes.floor_link)

    state = PostState.VISIBLE
    if locked is not None:
        notice = locked.text()
        if "屏蔽" in notice:
            state = PostState.BLOCKED  # moderators also get the text below the notice
        elif message is None:
            state = PostState.AUTHOR_ONLY  # 此帖仅作者可见 / 密码帖 / 付费: text not shown to us
    if message is None:
        return Post(
            tid=tid,
            pid=pid,
            floor=floor,
            author=author,
            uid=uid,
            posted_at=posted_at,
            message_html=(locked.html or "") if locked is not None else "",
            text="",
            state=state,
        )
    parts = extract_message(message, tz)
    message_html = (message.inner_html or "").strip()
    if state is PostState.VISIBLE and parts.text == "待审核" and not parts.quote_texts:
        pending = message.css_first(SELECTORS["pending"])
        if pending is not None and pending.text().strip() == "待审核":
            state, parts = PostState.PENDING, MessageParts(text="")
    return Post(
        tid=tid,
        pid=pid,
        floor=floor,
        author=author,
        uid=uid,
        posted_at=posted_at,
        message_html=message_html,
        text=parts.text,
        quoted_pids=parts.quoted_pids,
        quote_texts=parts.quote_texts,
        edit=parts.edit,
        state=state,
        marks=parts.marks,
    )


# --------------------------------------------------------------------------- page


def _pager_numbers(pager: LexborNode) -> tuple[int, int] | None:
    """``<strong>cur</strong>`` and ``<span title="共 N 页"> / N 页</span>`` of one pager."""
    current: int | None = None
    total: int | None = None
    highest = 0
    for node in pager.traverse():
        tag = node.tag
        if tag == "strong" and current is None:
            current = _first_int(node.text())
        elif tag == "span" and total is None:
            title = node.attrs.get("title") or ""
            match = _TOTAL.search(node.text()) if not title.startswith("共") else None
            total = (
                _first_int(title)
                if title.startswith("共")
                else (int(match.group(1)) if match else None)
            )
        elif tag == "a":
            highest = max(highest, _first_int(node.text()) or 0)  # "... 12" links the last
    if current is None:
        return None  # e.g. the 点评 pager inside a post: only a 下一页 link
    return current, max(total or highest, current)


def _pages(tree: LexborHTMLParser) -> tuple[int, int]:
    """Current and total page; no pager at all means a one-page thread."""
    first = tree.css_first(SELECTORS["pager"])
    if first is None:
        return 1, 1
    numbers = _pager_numbers(first)
    if numbers is None:
        for pager in tree.css(SELECTORS["pager"]):
            numbers = _pager_numbers(pager)
            if numbers is not None:
                break
    return numbers or (1, 1)


_START_MARKS = (b'<div id="pgt"', b'<div id="postlist"')  # first occurrence: before any post
# last occurrence: after every post (the bottom pager and forms after it are not needed)
_END_MARKS = (b'<div id="postlistreply"', b'<div id="f_pst"', b'<div id="ft"')


def _thread_part(page: bytes) -> bytes:
    """The part of the page holding the pagers, the post list and its forms.

    The page head (scripts, navigation), the fast-reply editor and the footer are a quarter of
    the bytes and hold nothing the parser reads, so lexbor is not given them. The start marker
    is looked up from the front and the end marker from the back, so a post that contains a
    marker's text (forums that allow HTML) cannot cut the post list short; without the markers
    the whole page is parsed.
    """
    start = -1
    for mark in _START_MARKS:
        start = page.find(mark)
        if start >= 0:
            break
    if start < 0:
        return page
    for mark in _END_MARKS:
        end = page.rfind(mark)
        if end > start:
            return page[start:end]
    return page[start:]


_FAVATAR = b'<div id="favatar'  # a post's left column: div.pi with the author link first
_PROFILE = b'<div class="p_pop blk bui'  # then the author's profile card (hidden), stats, medals
_CELL_END = b"</td>"
_NEXT_CELL = b'<td class="plc"'  # the post's right column: floor, time, message
_POST_IDS = b'id="p'  # the post table (pid), its floor link (postnum), its message (postmessage_)
_READ_IN_CARD = (b"authi", b"authorposton")  # the author link's box, the time


def _without_profiles(part: bytes) -> bytes:
    """``part`` less what the parser never reads in a post: the profile card in its left column
    (:func:`_without_cards`, half the bytes of a post) and its button rows below the message
    (:func:`_without_footers`, a third of what is left)."""
    return _without_footers(_without_cards(part))


def _without_cards(part: bytes) -> bytes:
    """``part`` without the profile card in each post's left column.

    In each ``div.favatar`` the author link (``div.pi``) comes first; what follows up to the
    column's closing ``</div></td>`` is the author's profile card, stats, group and medals, read
    by nothing here. It is left out only where it looks exactly so: it lies between
    ``<div id="favatar`` and the next ``<td class="plc"``, its end is ``</div>`` then
    ``</td>``, and neither it nor the left column before it holds anything the parser reads
    (no ``id="p…`` — a post table, floor link or message — no ``authi``, no
    ``authorposton``). Anything else is kept as it is, so a page of another shape parses as a
    whole. A message cannot contain these bytes unless its author may post raw HTML; even then
    the cut stays inside the one post (no ``id="p…`` in it) and a cut that does not end in
    ``</div></td><td class="plc"`` is not made.
    """
    pieces: list[bytes] = []
    kept = 0  # part[:kept] is in pieces
    at = 0
    while True:
        column = part.find(_FAVATAR, at)
        if column < 0:
            break
        start = part.find(_PROFILE, column)
        if start < 0:
            break
        next_cell = part.find(_NEXT_CELL, start)
        if next_cell < 0:
            break
        at = next_cell
        cell_end = part.rfind(_CELL_END, start, next_cell)
        if cell_end < 0 or part[cell_end + len(_CELL_END) : next_cell].strip():
            continue
        end = part.rfind(b"</div>", start, cell_end)  # the column's own closing </div>
        if end < 0 or part[end + 6 : cell_end].strip():
            continue
        inner = column + len(_FAVATAR)
        if part.find(_POST_IDS, inner, end) >= 0 or part.find(_FAVATAR, inner, end) >= 0:
            continue
        for mark in _READ_IN_CARD:
            if part.find(mark, start, end) >= 0:
                break
        else:
            pieces.append(part[kept:start])
            kept = end
    if not pieces:
        return part
    pieces.append(part[kept:])
    return b"".join(pieces)


_FOOTER = b'<tr><td class="plc plm">'  # the row below a post's message: 支持/反对 buttons
_FOOTER_AFTER = b"</td></tr>"  # the message row's end, just before the footer's first row
_FOOTER_SIGN = b'<tr id="_postposition'  # then an empty row, the 回复/举报 row and an ad row
_READ_IN_FOOTER = (b"<table", b'id="p', b"auth", b"favatar", b"pcb", b'class="pg')


def _without_footers(part: bytes) -> bytes:
    """``part`` without the rows below each post's message (回复, 编辑, 举报 and the ad row).

    A post table's last rows, from ``<tr><td class="plc plm">`` to the table's ``</table>``,
    hold its buttons and nothing the parser reads. They are left out only where they look
    exactly so: the rows follow the message row's ``</td></tr>``, hold Discuz's
    ``<tr id="_postposition…">`` and end at the first ``</table>`` after them; and they hold
    no table (so the cut ends the post table and stays in it), no ``id="p…`` (no post table,
    floor link, message or the first post's ``p_btn``), no ``authi`` or ``authorposton``, no
    left column, no ``pcb`` box (the locked notice) and no pager. Anything else is kept.
    A message cannot contain these bytes unless its author may post raw HTML; even then the
    cut holds no other post's part and a ``<tr>`` written in the message's cell already ends
    that cell, so what follows it was never the message's text.
    """
    pieces: list[bytes] = []
    kept = 0  # part[:kept] is in pieces
    at = 0
    while True:
        start = part.find(_FOOTER, at)
        if start < 0:
            break
        end = part.find(b"</table>", start)
        if end < 0:
            break
        at = end
        row_end = part.rfind(_FOOTER_AFTER, max(0, start - 64), start)
        if row_end < 0 or part[row_end + len(_FOOTER_AFTER) : start].strip():
            continue
        if part.find(_FOOTER_SIGN, start, end) < 0:
            continue
        for mark in _READ_IN_FOOTER:
            if part.find(mark, start, end) >= 0:
                break
        else:
            pieces.append(part[kept:start])
            kept = end
    if not pieces:
        return part
    pieces.append(part[kept:])
    return b"".join(pieces)


def _formhash(body: bytes) -> str | None:
    """``<input type="hidden" name="formhash" value="xxxxxxxx" />``: the first one is the page
    header's (before any post), found without the parser."""
    at = body.find(b'name="formhash" value="')
    if at < 0:
        return None
    value = body[at + 23 : at + 23 + 16].split(b'"', 1)[0]
    return value.decode("ascii") if value and value.isalnum() and value.isascii() else None


def parse_viewthread(
    body: bytes,
    *,
    tid: int,
    tz: tzinfo,
    now: datetime,
    encoding: str | None = None,
    base_url: str = "",
) -> ThreadPage:
    """Parse one desktop thread page into a :class:`ThreadPage`.

    ``now`` is when the page was served (relative times without a title are resolved against
    it); ``encoding`` overrides the page's own declaration (GBK is read as gb18030);
    ``base_url`` is the forum root the page came from (reserved; links are read as served).
    Raises :class:`PageError` for anything that is not a complete thread page.
    """
    del base_url  # quote links carry their pid in the query string; nothing to resolve
    try:
        return _parse_viewthread(body, tid=tid, tz=tz, now=now, encoding=encoding)
    except PageError:
        raise
    except (ValueError, OverflowError, RecursionError) as exc:
        raise PageError(PageErrorKind.MALFORMED, f"页面解析失败：{exc}") from exc


def _parse_viewthread(
    body: bytes, *, tid: int, tz: tzinfo, now: datetime, encoding: str | None
) -> ThreadPage:
    # Every codec a Discuz forum uses (UTF-8, GBK/GB18030, Big5) keeps ASCII bytes as ASCII and
    # never uses "<" inside a multi-byte character, so markup can be looked for in the bytes.
    codec = _page_codec(body, encoding)
    if b'id="postlist"' not in body:  # not a thread page: say what it is
        check_page(body.decode(codec, errors="replace"))
    if b"</html>" not in body[-1024:].lower():
        raise PageError(PageErrorKind.MALFORMED, "页面不完整（没有 </html> 结尾，可能被截断）")
    member = _MEMBER_UID.search(body, 0, 16384)
    member_uid = member.group(1).decode("ascii") if member else None
    part = _without_profiles(_thread_part(body))
    tree = LexborHTMLParser(part if codec == "utf-8" else part.decode(codec, errors="replace"))
    postlist = tree.css_first(SELECTORS["postlist"])
    if postlist is None:
        raise PageError(PageErrorKind.MALFORMED, "不是帖子页面（没有 #postlist）")

    posts: dict[int, Post] = {}
    author_filter: bool | None = None
    for nodes in _post_nodes(postlist):
        pid = nodes.pid
        if pid is None:
            if "plhin" in (nodes.table.attrs.get("class") or ""):
                raise PageError(PageErrorKind.MALFORMED, "帖子没有可识别的 pid")
            continue  # a gap filler without a pid: nothing to key it by
        previous = posts.get(pid)
        if previous is not None and previous.state is not PostState.DELETED:
            continue  # listed twice (a hot reply that also belongs on page 1)
        post = _parse_post(nodes, pid, tid=tid, tz=tz, now=now)
        if previous is not None and post.state is PostState.DELETED:
            continue  # a placeholder never replaces a post
        posts[pid] = post
        if author_filter is None and post.state is not PostState.DELETED:
            # 只看该作者 pages link 显示全部楼层 (no authorid=) where others link 只看该作者
            link = nodes.table.css_first(SELECTORS["show_all_link"])
            author_filter = link is not None and "authorid=" not in (link.attrs.get("href") or "")

    page, total_pages = _pages(tree)
    header = postlist.css_first("table")  # the thread header: subject, 查看 N | 回复 N
    replies_nodes = header.css(SELECTORS["replies"]) if header is not None else []
    replies = _first_int(replies_nodes[1].text()) if len(replies_nodes) >= 2 else None
    subject_node = header.css_first(SELECTORS["subject"]) if header is not None else None
    if subject_node is None:
        subject_node = tree.css_first(SELECTORS["subject"])
    subject = (" ".join(subject_node.text().split()) or None) if subject_node is not None else None
    formhash = _formhash(body)
    if formhash is None:
        formhash_node = tree.css_first(SELECTORS["formhash"])
        formhash = (formhash_node.attrs.get("value") or None) if formhash_node else None
    extra: dict[str, str] = {}
    if member_uid is not None:
        extra["member_uid"] = member_uid  # discuz_uid in the header script: 0 = guest
    if author_filter:
        extra["author_filter"] = "1"  # 只看该作者: floors count this author's posts only
    if header is not None and header.css_first("i.fico-lock") is not None:
        extra["closed"] = "1"  # viewthread.htm: forum_thread.closed == 1 shows the lock icon
    return ThreadPage(
        tid=tid,
        page=page,
        total_pages=total_pages,
        posts=tuple(sorted(posts.values(), key=lambda p: p.pid)),
        subject=subject,
        replies=replies,
        formhash=formhash,
        extra=extra,
    )
