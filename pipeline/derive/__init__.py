"""Derive every verdict of a game from the store, the game file and the director's journal.

This is step 3 of a cycle: it reads stored posts (never the network), runs the pure parsers and
the pure engine, and returns values. ``write_derivation`` (step 4) writes the verdicts back so
they can be browsed. Running it twice on the same store gives the same result.

Modules: ``derivation`` (``derive``), ``results`` (what it returns), ``journal_view`` (the
journal's reads), ``posts`` (roster, substitutions, counted versions, ballots from parses),
``ballots`` (a vote thread's ballots), ``run`` (one derivation's shared inputs), ``days`` and
``day_votes`` (a day's steps), ``engine_view`` (the engine's phases), ``flags`` (conduct),
``writeback`` (rows and tally JSON); ``inquiry`` and ``undo`` build on them.
"""

from __future__ import annotations

from pipeline.derive.derivation import derive
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
