"""A cycle's step 5: what is due drafted, saved, approved in advance where the game says so,
and the stale retired.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from engine.rulesets import get_ruleset
from pipeline.derive import Derivation, card_events
from pipeline.derive.journal_view import revoked_card_events
from pipeline.drafts.due import due_drafts, inquiry_answer_drafts
from pipeline.drafts.inputs import (
    _mark_unresolved,
    keep_inputs,
    note_game,
    unrecorded_nights,
    unresolved_nights,
)
from pipeline.drafts.model import DraftAction, DraftKind, DraftSpec, DraftState
from pipeline.drafts.newthreads import retire_opened, thread_drafts
from pipeline.drafts.records import get_draft
from pipeline.drafts.state import (
    approve,
    elevator_note,
    hold_stale,
    retire_stale,
    retire_uncarded,
    save_drafts,
)
from pipeline.drafts.templates import Templates, load_templates
from pipeline.game.gamefile import Game
from pipeline.store import Store

if TYPE_CHECKING:
    from pipeline.derive.inquiry import InquiryDay


def elevator_pids(game: Game, store: Store) -> dict[int, int]:
    """Discussion tid -> pid of the director's floor 2 (the 电梯), where the store has it.

    Floor 2 is the thread's second post by pid (floors shown can renumber after deletes).
    """
    uids = set(game.director.uids)
    names = set(game.director.names)
    found: dict[int, int] = {}
    for day in game.days:
        tid = day.discussion
        if tid is None or tid in found:
            continue
        rows = list(
            store.query(
                "SELECT pid, uid, author FROM posts WHERE tid = ? AND state NOT IN "
                "('deleted', 'vanished') ORDER BY pid LIMIT 2",
                [tid],
            )
        )
        if len(rows) == 2 and (
            (rows[1]["uid"] and rows[1]["uid"] in uids) or rows[1]["author"] in names
        ):
            found[tid] = rows[1]["pid"]
    return found


def posted_cards_text(store: Store) -> dict[int, str]:
    """Day -> what the cards 公示 posted for it printed (every posted one, as posted)."""
    text: dict[int, str] = {}
    for r in store.query(
        "SELECT day, body FROM drafts WHERE kind = 'cards' AND state = 'posted' ORDER BY id"
    ):
        text[r["day"]] = text.get(r["day"], "") + r["body"] + "\n"
    return text


def make_drafts(
    game: Game,
    store: Store,
    derivation: Derivation,
    *,
    now: datetime,
    templates_dir: Path | str | None = None,
    templates: Templates | None = None,
    unsettled: Collection[int] = (),
    unsettled_first: Collection[int] = (),
) -> list[int]:
    """Draft what is due at the derivation's time and store what changed (a cycle's step 5).

    Returns the ids of the new drafts; stale running tallies and reminders are retired.
    """
    as_of = derivation.as_of
    note_game(store, game)  # an edited game file: what was drafted before no longer holds
    if templates is None:
        templates = load_templates(templates_dir)
    specs = due_drafts(
        game,
        derivation,
        as_of=as_of,
        templates_dir=templates_dir,
        templates=templates,
        cards=card_events(store),
        revoked=revoked_card_events(store),
        announced=posted_cards_text(store),
        floor2=elevator_pids(game, store),
        unsettled=unsettled,
        unsettled_first=unsettled_first,
    )
    if get_ruleset(game.game.ruleset).inquiry is not None:
        # the inquiry thread: answers to guesses, and the 公示 of a word guessed right
        from pipeline.derive.inquiry import inquiry_days  # only a game with an inquiry

        specs += inquiry_drafts(game, inquiry_days(game, store, as_of=as_of))
    # the day's new threads and the vote threads' closing
    specs += thread_drafts(game, store, as_of=as_of, templates=templates, won=derivation.won)
    waiting = unresolved_nights(store, game)
    specs = _mark_unresolved(
        specs, waiting, unrecorded_nights(store, game, derivation.outs, waiting)
    )
    created = save_drafts(store, specs, now=now)
    if game.threads.close_vote == "auto":
        for draft_id in created:
            draft = get_draft(store, draft_id)
            if draft.kind == DraftKind.CLOSE and draft.state is DraftState.PENDING:
                approve(
                    store,
                    draft_id,
                    now,
                    note='游戏文件 [threads] close_vote = "auto"：锁帖已预先批准',
                )
    approve_elevators(store, created, now=now)
    retire_uncarded(
        store, game, specs, as_of=as_of, unsettled=unsettled, derived=set(derivation.days), now=now
    )
    hold_stale(store, derivation, now=now)
    retire_stale(store, game, as_of=as_of, now=now)
    retire_opened(store, game, now=now, as_of=as_of)
    keep_inputs(store, specs, now=now)  # last: a more specific reason to set one aside first
    return created


def elevator_rejected(store: Store, day: int) -> bool:
    """The director rejected a 电梯 of ``day``: from then on they decide (nothing of the day's
    电梯 is approved by the thread's approval any more)."""
    row = store.execute(
        "SELECT 1 FROM drafts WHERE kind = 'elevator' AND day = ? AND state = 'rejected' LIMIT 1",
        [day],
    ).fetchone()
    return row is not None


def approve_elevators(store: Store, created: Collection[int], *, now: datetime) -> list[int]:
    """A 电梯 reply drafted for a discussion thread bansha opened, when no 电梯 of that day has
    been posted yet (the run that opened the thread stopped before sending it): approved by the
    thread's approval, like the one sent right after the thread (docs/rulings.md) — unless the
    director rejected a 电梯 of that day (:func:`elevator_rejected`): then it waits for them."""
    approved: list[int] = []
    for draft_id in created:
        draft = get_draft(store, draft_id)
        if draft.kind != DraftKind.ELEVATOR or draft.action != DraftAction.REPLY.value:
            continue
        if draft.state is not DraftState.PENDING or draft.day is None:
            continue
        opened = store.execute(
            "SELECT draft_id FROM game_threads WHERE day = ? AND role = 'discussion' AND tid = ?",
            [draft.day, draft.tid],
        ).fetchone()
        if opened is None or opened[0] is None or elevator_rejected(store, draft.day):
            continue
        posted = store.execute(
            "SELECT 1 FROM drafts WHERE kind = 'elevator' AND day = ? AND state = 'posted'",
            [draft.day],
        ).fetchone()
        if posted is None:
            approve(store, draft_id, now, note=elevator_note(int(opened[0]), draft.day))
            approved.append(draft_id)
    return approved


def inquiry_drafts(
    game: Game,
    days: Sequence[InquiryDay],  # pipeline.derive.inquiry
    *,
    templates: Templates | None = None,
    templates_dir: Path | str | None = None,
) -> list[DraftSpec]:
    """The director's answers to the guesses (猜测正确/错误, before the sheriff's, zhenyan.txt:168)
    and the 公示 of each word guessed correctly, in the discussion thread (zhenyan.txt:31, 168).

    A guess a director's post in the inquiry thread already links (a posted answer draft) is
    not answered again; a 公示's text is stable, so storing it again drafts nothing new."""
    from pipeline.game.words import load_secrets

    secrets = load_secrets(game)
    specs: list[DraftSpec] = []
    for d in days:
        answers = [
            (i.pid, a)
            for i in d.items
            if (a := i.director_answer) is not None and not i.director_posted
        ]
        specs += inquiry_answer_drafts(
            game, d.day, answers, templates=templates, templates_dir=templates_dir
        )
        the_day = game.day(d.day)
        for item in d.items:
            for g in item.guesses:
                if not g.first:
                    continue
                body = (
                    f"[b]【真言公示】[/b]\n{item.player}在询问帖猜中第{g.index}个真言词语："
                    f"[b]{secrets.word(g.index)}[/b]\n"
                    f"[url=forum.php?mod=redirect&goto=findpost&ptid={d.tid}&pid={item.pid}]"
                    "猜词原帖[/url]"
                )
                if game.drafts.director_signature:
                    body += f"\n\n{game.drafts.director_signature}"
                specs.append(
                    DraftSpec(
                        DraftKind.INQUIRY_ANSWERS,
                        d.day,
                        f"inquiry_reveal:d{d.day}:w{g.index}",
                        the_day.discussion,
                        DraftAction.REPLY,
                        None,
                        f"第{d.day}天 真言公示：第{g.index}个词语",
                        body,
                    )
                )
    return specs
