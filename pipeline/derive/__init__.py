"""Derive every verdict of a game from the store, the game file and the director's journal.

This is step 3 of a cycle: it reads stored posts (never the network), runs the pure parsers and
the pure engine, and returns values. ``write_derivation`` (step 4) writes the verdicts back so
they can be browsed. Running it twice on the same store gives the same result.

Modules: ``derivation`` (``derive``), ``results`` (what it returns), ``journal_view`` (the
journal's reads), ``posts`` (roster, substitutions, counted versions, ballots from parses),
``ballots`` (a vote thread's ballots), ``run`` (one derivation's shared inputs), ``days`` and
``day_votes`` (a day's steps), ``engine_view`` (the engine's phases), ``flags`` (conduct),
``writeback`` (rows and tally JSON); ``inquiry`` and ``undo`` build on them; ``ending``
(a game ended during a day) on ``inquiry``: its ``derive`` is the package's.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type checker sees every name; a run loads each at first use
    from pipeline.derive.ending import derive
    from pipeline.derive.journal_view import (
        card_events,
        crawled_tids,
        journal_day_actions,
        journal_modifiers,
        journal_outs,
        journal_proxies,
        journal_setting,
        not_crawled_note,
        sheriff_settings,
    )
    from pipeline.derive.posts import (
        HIDDEN_KEYS,
        HIDDEN_MARKS,
        UNREADABLE,
        UNREADABLE_ZH,
        Roster,
        Substitution,
        ballot_from_parse,
        counted_version,
        substitutions,
    )
    from pipeline.derive.results import DayResult, Derivation, RoundResult, post_url
    from pipeline.derive.run import game_factions
    from pipeline.derive.writeback import (
        DERIVED_KEYS,
        STAMPS,
        derived_rows,
        flag_decisions,
        tally_json,
        write_derivation,
    )

#: each re-exported name -> the module that defines it, imported when the name is first used
_HOME = {
    "DERIVED_KEYS": "pipeline.derive.writeback",
    "HIDDEN_KEYS": "pipeline.derive.posts",
    "HIDDEN_MARKS": "pipeline.derive.posts",
    "STAMPS": "pipeline.derive.writeback",
    "UNREADABLE": "pipeline.derive.posts",
    "UNREADABLE_ZH": "pipeline.derive.posts",
    "DayResult": "pipeline.derive.results",
    "Derivation": "pipeline.derive.results",
    "Roster": "pipeline.derive.posts",
    "RoundResult": "pipeline.derive.results",
    "Substitution": "pipeline.derive.posts",
    "ballot_from_parse": "pipeline.derive.posts",
    "card_events": "pipeline.derive.journal_view",
    "counted_version": "pipeline.derive.posts",
    "crawled_tids": "pipeline.derive.journal_view",
    "derive": "pipeline.derive.ending",
    "derived_rows": "pipeline.derive.writeback",
    "flag_decisions": "pipeline.derive.writeback",
    "game_factions": "pipeline.derive.run",
    "journal_day_actions": "pipeline.derive.journal_view",
    "journal_modifiers": "pipeline.derive.journal_view",
    "journal_outs": "pipeline.derive.journal_view",
    "journal_proxies": "pipeline.derive.journal_view",
    "journal_setting": "pipeline.derive.journal_view",
    "not_crawled_note": "pipeline.derive.journal_view",
    "post_url": "pipeline.derive.results",
    "sheriff_settings": "pipeline.derive.journal_view",
    "substitutions": "pipeline.derive.posts",
    "tally_json": "pipeline.derive.writeback",
    "write_derivation": "pipeline.derive.writeback",
}

__all__ = [
    "DERIVED_KEYS",
    "HIDDEN_KEYS",
    "HIDDEN_MARKS",
    "STAMPS",
    "UNREADABLE",
    "UNREADABLE_ZH",
    "DayResult",
    "Derivation",
    "Roster",
    "RoundResult",
    "Substitution",
    "ballot_from_parse",
    "card_events",
    "counted_version",
    "crawled_tids",
    "derive",
    "derived_rows",
    "flag_decisions",
    "game_factions",
    "journal_day_actions",
    "journal_modifiers",
    "journal_outs",
    "journal_proxies",
    "journal_setting",
    "not_crawled_note",
    "post_url",
    "sheriff_settings",
    "substitutions",
    "tally_json",
    "write_derivation",
]


def __getattr__(name: str) -> Any:
    """The re-exported ``name``, imported from its module on first use (PEP 562)."""
    try:
        module = _HOME[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
