"""A body's length in the forum's charset, and a body over ``maxpostsize`` split into parts at
line boundaries outside any tag pair.
"""

from __future__ import annotations

import re

from pipeline.drafts.model import DraftError

#: Discuz's default ``maxpostsize`` (bytes; ``strlen`` in ``checkpost``, docs/discuz.md §4.4).
MAX_POST_BYTES = 10000


def body_bytes(text: str, charset: str) -> int:
    """The size Discuz's ``strlen`` sees: bytes in the forum's charset.

    ``auto`` (charset not known yet) takes the larger of UTF-8 and GBK. A character GBK cannot
    hold counts as the numeric entity it would have to be sent as.
    """
    if charset == "gbk":
        return len(text.encode("gbk", errors="xmlcharrefreplace"))
    if charset in ("utf-8", "utf8"):
        return len(text.encode("utf-8"))
    return max(body_bytes(text, "utf-8"), body_bytes(text, "gbk"))


_TAG_RE = re.compile(r"\[(/?)([A-Za-z]+)(=[^\]\r\n]*)?\]")


#: Tags that come in pairs (Discuz's simple and regex tags, docs/discuz.md §3.1, plus the blocks).
_PAIRED = frozenset(
    [
        "b",
        "i",
        "u",
        "s",
        "p",
        "color",
        "backcolor",
        "size",
        "font",
        "align",
        "float",
        "indent",
        "list",
        "url",
        "email",
        "quote",
        "code",
        "free",
        "hide",
        "img",
        "table",
        "tr",
        "td",
        "media",
        "audio",
        "flash",
        "qq",
    ]
)


_PART_MARK = "〔{i}/{n}〕"


def _advance(stack: tuple[tuple[str, str], ...], line: str) -> tuple[tuple[str, str], ...]:
    """The tags still open after ``line`` (name, opening text), innermost last."""
    st = list(stack)
    for m in _TAG_RE.finditer(line):
        name = m.group(2).lower()
        if name not in _PAIRED:
            continue
        if m.group(1):
            for i in range(len(st) - 1, -1, -1):
                if st[i][0] == name:
                    del st[i:]
                    break
        else:
            st.append((name, m.group(0)))
    return tuple(st)


def split_body(body: str, *, charset: str, limit: int = MAX_POST_BYTES) -> list[str]:
    """``body`` as one part, or as parts of at most ``limit`` bytes each, marked 〔i/n〕.

    Parts end at line boundaries where no tag pair is open. Only when a single tag pair is itself
    longer than a part may it be cut, and then the part closes the open tags and the next one
    reopens them, so every part is well formed on its own.
    """
    if body_bytes(body, charset) <= limit:
        return [body]
    lines = body.split("\n")
    stacks: list[tuple[tuple[str, str], ...]] = []
    st: tuple[tuple[str, str], ...] = ()
    for line in lines:
        st = _advance(st, line)
        stacks.append(st)
    upto = [0]  # upto[k]: bytes of lines[:k]
    for line in lines:
        upto.append(upto[-1] + body_bytes(line, charset))
    newline = body_bytes("\n", charset)
    reserve = body_bytes(_PART_MARK.format(i=999, n=999) + "\n", charset)
    budget = limit - reserve

    def cost(start: int, end: int, opening: tuple[tuple[str, str], ...]) -> int:
        closing = stacks[end - 1]
        return (
            upto[end]
            - upto[start]
            + newline * (end - start - 1)
            + sum(body_bytes(t, charset) for _, t in opening)
            + sum(body_bytes(f"[/{n}]", charset) for n, _ in closing)
        )

    chunks: list[str] = []
    start = 0
    opening: tuple[tuple[str, str], ...] = ()
    while start < len(lines):
        best_any: int | None = None
        best_safe: int | None = None
        for end in range(start + 1, len(lines) + 1):
            if cost(start, end, opening) > budget:
                break
            best_any = end
            if not stacks[end - 1]:
                best_safe = end
        if best_any is None:
            head = lines[start][:20]
            raise DraftError(
                f"草稿中有一行（“{head}…”）本身超过论坛长度上限 {limit} 字节，无法分段；请删减"
            )
        end = best_any if best_any == len(lines) or best_safe is None else best_safe
        closing = stacks[end - 1]
        text = "".join(t for _, t in opening) + "\n".join(lines[start:end])
        text += "".join(f"[/{n}]" for n, _ in reversed(closing))
        chunks.append(text)
        opening = closing
        start = end
    # blank lines at a cut are noise
    chunks = [c.strip("\n") for c in chunks]
    n = len(chunks)
    return [_PART_MARK.format(i=i, n=n) + "\n" + c for i, c in enumerate(chunks, 1)]
