"""Drafts: the posts bansha writes for the director, in Discuz BBCode, and their approval.

A draft is made from a template in ``config/templates/<kind>.j2`` (Jinja2; a director may edit
them, or keep a folder of their own named by ``[drafts] templates`` in the game file). Every value
a template prints passes through :func:`bbcode_escape` (the environment's ``finalize``), so a
player named ``[color=red]x`` or ``[/quote]`` is shown exactly as written and can neither open a
tag nor close one of the template's. Markup belongs in the template's own text.

What is due at a moment (:func:`due_drafts`) is a pure function of the game, the derivation and
the loaded templates. :func:`save_drafts` stores only what changed: an unchanged draft is not
drafted again, a newer draft of the same key supersedes the older one still waiting, and a posted
draft is never changed. :func:`approve`, :func:`reject` and :func:`edit` move a draft along
``pending -> approved -> posted`` (or ``rejected``); every change writes a ``draft_events`` row.
Nothing here posts: the poster sends approved drafts only.

A body longer than Discuz's ``maxpostsize`` (10000 bytes by default, counted in the forum's
charset: docs/discuz.md §4.4, ``checkpost``) is split at line boundaries outside any tag pair into
parts keyed ``key#1``, ``key#2`` …, each beginning with ``〔1/2〕``.

Modules: ``model`` (kinds, states, ``Draft``), ``bbcode`` (escaping), ``templates``, ``length``
(byte counts, splitting), ``formatting`` and ``contexts`` (each kind's template context), ``due``
(what is due), ``records`` (drafts in the store), ``state`` (the state machine), ``inputs``
(what a draft was made from), ``newthreads`` (the game's threads' drafts), ``making`` (a
cycle's step); ``publish``, ``report`` and ``view`` build on them.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the type checker sees every name; a run loads each at first use
    from pipeline.drafts.bbcode import BBCode, bbcode_escape
    from pipeline.drafts.contexts import (
        cards_context,
        day_open_context,
        elevator_context,
        first_result_context,
        inquiry_answers_context,
        reminder_context,
        result_context,
        running_tally_context,
    )
    from pipeline.drafts.due import draft_key, due_drafts, inquiry_answer_drafts
    from pipeline.drafts.formatting import findpost_url
    from pipeline.drafts.inputs import (
        STALE_HINT,
        UNRESOLVED_MARK,
        keep_inputs,
        moved_on,
        unresolved_nights,
    )
    from pipeline.drafts.length import MAX_POST_BYTES, body_bytes, split_body
    from pipeline.drafts.making import (
        approve_elevators,
        elevator_pids,
        elevator_rejected,
        inquiry_drafts,
        make_drafts,
    )
    from pipeline.drafts.model import (
        KIND_ZH,
        LIVE_STATES,
        STATE_KINDS,
        STATE_ZH,
        UNTEMPLATED,
        Draft,
        DraftAction,
        DraftError,
        DraftKind,
        DraftSpec,
        DraftState,
    )
    from pipeline.drafts.newthreads import (
        SUBJECT_MAX_CHARS,
        close_specs,
        newthread_key,
        newthread_specs,
        retire_opened,
        thread_drafts,
        thread_over,
        thread_window,
    )
    from pipeline.drafts.records import (
        FIRST_ROUND_KEY,
        NO_RIGHTS_KEY,
        draft_events,
        get_draft,
        list_drafts,
        no_moderator_rights,
    )
    from pipeline.drafts.state import (
        approve,
        edit,
        edit_subject,
        elevator_note,
        ensure_editable,
        hold_stale,
        mark_posted,
        reject,
        reopen,
        retire_stale,
        retire_uncarded,
        save_drafts,
        set_aside,
    )
    from pipeline.drafts.templates import (
        DEFAULT_TEMPLATES_DIR,
        TEMPLATE_SUFFIX,
        Templates,
        load_templates,
        templates_dir_for,
    )

#: each re-exported name -> the module that defines it, imported when the name is first used
_HOME = {
    "DEFAULT_TEMPLATES_DIR": "pipeline.drafts.templates",
    "FIRST_ROUND_KEY": "pipeline.drafts.records",
    "KIND_ZH": "pipeline.drafts.model",
    "LIVE_STATES": "pipeline.drafts.model",
    "MAX_POST_BYTES": "pipeline.drafts.length",
    "NO_RIGHTS_KEY": "pipeline.drafts.records",
    "STALE_HINT": "pipeline.drafts.inputs",
    "STATE_KINDS": "pipeline.drafts.model",
    "STATE_ZH": "pipeline.drafts.model",
    "SUBJECT_MAX_CHARS": "pipeline.drafts.newthreads",
    "TEMPLATE_SUFFIX": "pipeline.drafts.templates",
    "UNRESOLVED_MARK": "pipeline.drafts.inputs",
    "UNTEMPLATED": "pipeline.drafts.model",
    "BBCode": "pipeline.drafts.bbcode",
    "Draft": "pipeline.drafts.model",
    "DraftAction": "pipeline.drafts.model",
    "DraftError": "pipeline.drafts.model",
    "DraftKind": "pipeline.drafts.model",
    "DraftSpec": "pipeline.drafts.model",
    "DraftState": "pipeline.drafts.model",
    "Templates": "pipeline.drafts.templates",
    "approve": "pipeline.drafts.state",
    "approve_elevators": "pipeline.drafts.making",
    "bbcode_escape": "pipeline.drafts.bbcode",
    "body_bytes": "pipeline.drafts.length",
    "cards_context": "pipeline.drafts.contexts",
    "close_specs": "pipeline.drafts.newthreads",
    "day_open_context": "pipeline.drafts.contexts",
    "draft_events": "pipeline.drafts.records",
    "draft_key": "pipeline.drafts.due",
    "due_drafts": "pipeline.drafts.due",
    "edit": "pipeline.drafts.state",
    "edit_subject": "pipeline.drafts.state",
    "elevator_context": "pipeline.drafts.contexts",
    "elevator_note": "pipeline.drafts.state",
    "elevator_pids": "pipeline.drafts.making",
    "elevator_rejected": "pipeline.drafts.making",
    "ensure_editable": "pipeline.drafts.state",
    "findpost_url": "pipeline.drafts.formatting",
    "first_result_context": "pipeline.drafts.contexts",
    "get_draft": "pipeline.drafts.records",
    "hold_stale": "pipeline.drafts.state",
    "inquiry_answer_drafts": "pipeline.drafts.due",
    "inquiry_answers_context": "pipeline.drafts.contexts",
    "inquiry_drafts": "pipeline.drafts.making",
    "keep_inputs": "pipeline.drafts.inputs",
    "list_drafts": "pipeline.drafts.records",
    "load_templates": "pipeline.drafts.templates",
    "make_drafts": "pipeline.drafts.making",
    "mark_posted": "pipeline.drafts.state",
    "moved_on": "pipeline.drafts.inputs",
    "newthread_key": "pipeline.drafts.newthreads",
    "newthread_specs": "pipeline.drafts.newthreads",
    "no_moderator_rights": "pipeline.drafts.records",
    "reject": "pipeline.drafts.state",
    "reopen": "pipeline.drafts.state",
    "reminder_context": "pipeline.drafts.contexts",
    "result_context": "pipeline.drafts.contexts",
    "retire_opened": "pipeline.drafts.newthreads",
    "retire_stale": "pipeline.drafts.state",
    "retire_uncarded": "pipeline.drafts.state",
    "running_tally_context": "pipeline.drafts.contexts",
    "save_drafts": "pipeline.drafts.state",
    "set_aside": "pipeline.drafts.state",
    "split_body": "pipeline.drafts.length",
    "templates_dir_for": "pipeline.drafts.templates",
    "thread_drafts": "pipeline.drafts.newthreads",
    "thread_over": "pipeline.drafts.newthreads",
    "thread_window": "pipeline.drafts.newthreads",
    "unresolved_nights": "pipeline.drafts.inputs",
}

__all__ = [
    "DEFAULT_TEMPLATES_DIR",
    "FIRST_ROUND_KEY",
    "KIND_ZH",
    "LIVE_STATES",
    "MAX_POST_BYTES",
    "NO_RIGHTS_KEY",
    "STALE_HINT",
    "STATE_KINDS",
    "STATE_ZH",
    "SUBJECT_MAX_CHARS",
    "TEMPLATE_SUFFIX",
    "UNRESOLVED_MARK",
    "UNTEMPLATED",
    "BBCode",
    "Draft",
    "DraftAction",
    "DraftError",
    "DraftKind",
    "DraftSpec",
    "DraftState",
    "Templates",
    "approve",
    "approve_elevators",
    "bbcode_escape",
    "body_bytes",
    "cards_context",
    "close_specs",
    "day_open_context",
    "draft_events",
    "draft_key",
    "due_drafts",
    "edit",
    "edit_subject",
    "elevator_context",
    "elevator_note",
    "elevator_pids",
    "elevator_rejected",
    "ensure_editable",
    "findpost_url",
    "first_result_context",
    "get_draft",
    "hold_stale",
    "inquiry_answer_drafts",
    "inquiry_answers_context",
    "inquiry_drafts",
    "keep_inputs",
    "list_drafts",
    "load_templates",
    "make_drafts",
    "mark_posted",
    "moved_on",
    "newthread_key",
    "newthread_specs",
    "no_moderator_rights",
    "reject",
    "reminder_context",
    "reopen",
    "result_context",
    "retire_opened",
    "retire_stale",
    "retire_uncarded",
    "running_tally_context",
    "save_drafts",
    "set_aside",
    "split_body",
    "templates_dir_for",
    "thread_drafts",
    "thread_over",
    "thread_window",
    "unresolved_nights",
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
