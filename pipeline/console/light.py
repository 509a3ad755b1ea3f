"""A game file the last derivation was made from, read without its model.

``bansha status`` and the console's first pages need only a few facts of a game file: its id,
title and rule set, its zone, the forum's address and each day's times. When the light cycle's
plan (:func:`pipeline.cli.quick.read_plan`) holds for the game file — the very bytes the last
derivation validated, at the same place, read by the same code — the file is known valid, and
those facts are read from the plan and the file's TOML (:mod:`tomllib`) without building the
game file's model (pydantic) or importing a rule set. Anything unexpected gives None, and the
caller validates the file as before (:func:`pipeline.game.gamefile.load_game`): the model stays
the only judge of what a game file means; this module only reads what it already accepted.

A rule set's title and whether its first day elects a sheriff are what the registry declares
of it without loading it (:func:`engine.rulesets.ruleset_header`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol
from zoneinfo import ZoneInfo

from engine.rulesets import ruleset_header

__all__ = ["LightDay", "LightGame", "light_game"]

if TYPE_CHECKING:

    class _Zoned(Protocol):
        @property
        def tz(self) -> ZoneInfo: ...

    class _DayTimes(Protocol):
        @property
        def day(self) -> int: ...
        @property
        def opens(self) -> datetime: ...
        @property
        def closes(self) -> datetime: ...
        @property
        def first_closes(self) -> datetime | None: ...
        @property
        def sheriff_election(self) -> bool | None: ...

    class GameTimes(Protocol):
        """What the overview reads of a game: its zone and its days' times (a game file's
        model, or a :class:`LightGame`)."""

        @property
        def game(self) -> _Zoned: ...
        @property
        def days(self) -> Sequence[_DayTimes]: ...


class LightInfo(NamedTuple):
    """``[game]`` as the overview reads it."""

    id: str
    title: str
    ruleset: str
    timezone: str

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


class LightForum(NamedTuple):
    """``[forum]`` as the console's pages read it before the model is built."""

    base_url: str


class LightDay(NamedTuple):
    """A ``[[days]]`` entry as the overview reads it (times as the model resolved them)."""

    day: int
    opens: datetime
    closes: datetime
    first_closes: datetime | None
    sheriff_election: bool


class LightGame(NamedTuple):
    """What the overview reads of a game (as :class:`pipeline.game.gamefile.Game` has it)."""

    game: LightInfo
    forum: LightForum
    days: tuple[LightDay, ...]
    ruleset_title: str  # the rule set's title (``Ruleset.title``)

    def day(self, n: int) -> LightDay:
        for day in self.days:
            if day.day == n:
                return day
        raise ValueError(f"游戏文件中没有第 {n} 天")


def light_game(path: Path, raw: bytes, db: str | None, env: Mapping[str, str]) -> LightGame | None:
    """The facts of the game file at ``path`` whose bytes are ``raw``, when the light cycle's
    plan holds for exactly those bytes; else None (the file is to be validated)."""
    from pipeline.cli.quick import read_plan

    plan = read_plan(path, db, env)
    if plan is None:
        return None
    try:
        if Path(path).read_bytes() != raw:
            return None  # changed meanwhile: the plan may hold for other bytes than ``raw``
        data = tomllib.loads(raw.decode("utf-8-sig"))
        return _facts(data, plan)
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _facts(data: Mapping[str, Any], plan: Any) -> LightGame | None:
    """The facts of a game file's TOML ``data`` the plan ``plan`` was made from."""
    info = data["game"]
    title, ruleset = info["title"], info["ruleset"]
    facts = ruleset_header(ruleset) if isinstance(ruleset, str) else None
    if not isinstance(title, str) or facts is None or plan.game_id != info["id"]:
        return None
    entries = data.get("days", [])
    if len(entries) != len(plan.game.days):
        return None
    days: list[LightDay] = []
    for entry, day in zip(entries, plan.game.days, strict=True):
        if entry["day"] != day.day:
            return None
        election = entry.get("sheriff_election")
        if election is None:
            election = day.day == 1 and facts.has_sheriff_election
        if not isinstance(election, bool):
            return None
        days.append(LightDay(day.day, day.opens, day.closes, day.first_closes, election))
    return LightGame(
        game=LightInfo(id=plan.game_id, title=title, ruleset=ruleset, timezone=plan.forum.timezone),
        forum=LightForum(base_url=plan.forum.base_url),
        days=tuple(days),
        ruleset_title=facts.title,
    )
