"""Regular expressions compiled on first use.

A module's patterns for rare pages and rare markup (an error page, a coloured font, a relative
time) are written where they are read, as ``re.compile`` would be, but cost nothing until a
page needs one: a cycle that reads nothing unusual never compiles them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any, AnyStr, Generic

__all__ = ["LazyPattern"]


class LazyPattern(Generic[AnyStr]):
    """``re.compile(pattern, flags)``, compiled the first time one of its methods is called
    (then kept); the methods are the compiled pattern's."""

    __slots__ = ("_compiled", "flags", "pattern")

    pattern: AnyStr
    flags: int

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags})"

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, string: AnyStr) -> re.Match[AnyStr] | None:
        return self.compiled.search(string)

    def match(self, string: AnyStr) -> re.Match[AnyStr] | None:
        return self.compiled.match(string)

    def fullmatch(self, string: AnyStr) -> re.Match[AnyStr] | None:
        return self.compiled.fullmatch(string)

    def finditer(self, string: AnyStr) -> Iterator[re.Match[AnyStr]]:
        return self.compiled.finditer(string)

    def findall(self, string: AnyStr) -> list[Any]:
        return self.compiled.findall(string)

    def sub(self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr) -> AnyStr:
        return self.compiled.sub(repl, string)
