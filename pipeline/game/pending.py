"""A pending decision as the director reads it: the engine's prompt with its slots filled in
with the ``bansha`` commands that record the decision.

The engine says what a decision needs (:class:`engine.kernel.Pending`: the phase it is recorded
for, the actor, the skill, a target's word, the allowed choices); the command lines are this
front end's. A stored report keeps each decision's ``prompt`` filled in for ``GAME.toml`` (the
console puts the game's own file name in its place) and, since the engine returns data, the
unfilled ``template`` beside it; a report stored before that holds the filled-in prompt only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from engine.ballots import PROXY_SLOT
from engine.kernel import (
    CHOICE,
    RECORD,
    RECORD_NIGHT,
    RECORD_OUT,
    RECORD_PHASE,
    RESOLVE,
    SKILL,
    UNDO,
    Pending,
    Report,
)
from engine.votes import VoteVerdict

#: The game file's name where a text does not know it.
GAME = "GAME.toml"
#: A phase kind as a cause of an out names it (第2天正午出局).
_ZH_PHASE = {"day": "天", "night": "晚"}


def fill(template: str, p: Mapping[str, Any], game: str = GAME) -> str:
    """``template`` with every slot replaced by its command for the decision ``p`` (a
    :meth:`Pending.to_dict` mapping) in the game file ``game``."""
    kind, number = p.get("phase") or "day", p.get("number")
    target = p.get("target")
    choices = p.get("choices") or ()
    record_phase = f"bansha {kind} add {game} --{kind} {number}"
    skill = f"--skill {p.get('skill', '')}" + (f" --target {target}" if target else "")
    words = {
        RECORD: f"{record_phase} --actor {p.get('who', '')} {skill}",
        RECORD_PHASE: record_phase,
        RECORD_NIGHT: f"bansha night add {game} --night {p.get('night')}",
        CHOICE: f"--choice {choices[0]}" if choices else "--choice",
        SKILL: skill,
        RESOLVE: f"bansha {kind} resolve {game} --{kind} {number}",
        RECORD_OUT: f"bansha player out {game} --player {p.get('who', '')} "
        f"--at {p.get('at') or '出局时间'} --cause 第{number}{_ZH_PHASE.get(kind, '')}"
        f"{p.get('skill', '')}",
        UNDO: f"bansha undo action {game} {str(p.get('undo') or '').lstrip('#')} --why 理由",
    }
    for slot, text in words.items():
        template = template.replace(slot, text)
    return template


def pending_prompt(p: Mapping[str, Any], game: str = GAME) -> str:
    """The prompt of a pending decision as stored (or as the engine returned it, a mapping):
    filled in for ``game``; a report stored before decisions were data holds the text only."""
    template = p.get("template")
    if template is None:
        return str(p.get("prompt", ""))
    return fill(str(template), p, game)


def pending_record(p: Pending, game: str = GAME) -> dict[str, Any]:
    """A decision as a report stores and prints it: the engine's data, ``prompt`` filled in
    for ``game`` and the unfilled ``template``."""
    data = p.to_dict()
    return {**data, "prompt": fill(p.prompt, data, game), "template": p.prompt}


def report_dict(report: Report, game: str = GAME) -> dict[str, Any]:
    """:meth:`Report.to_dict` with each pending decision's prompt filled in for ``game``."""
    return {**report.to_dict(), "pending": [pending_record(p, game) for p in report.pending]}


def with_commands(verdicts: Iterable[VoteVerdict]) -> tuple[VoteVerdict, ...]:
    """The verdicts with the command that records a proxy vote in their notes."""
    return tuple(
        replace(v, note=v.note.replace(PROXY_SLOT, "bansha vote proxy"))
        if v.note and PROXY_SLOT in v.note
        else v
        for v in verdicts
    )
