"""What a draft was made from: the store's inputs counter when drafted, a night not yet
resolved, a draft whose inputs moved on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from engine.rulesets import get_ruleset
from engine.state import Phase
from pipeline.drafts.model import LIVE_STATES, STATE_KINDS, Draft, DraftKind, DraftSpec
from pipeline.drafts.records import _stamp, _supersede
from pipeline.game.gamefile import Game
from pipeline.store import DRAFT_INPUTS_KEY, Store


def _draft_inputs_now(store: Store) -> int | None:
    """The drafts' input counter now (None: the store has no change counters yet — it was never
    cycled — and nothing can be told stale)."""
    row = store.execute("SELECT value FROM meta WHERE key = ?", [DRAFT_INPUTS_KEY]).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _made_now(store: Store, draft_id: int, kind: DraftKind) -> None:
    """A draft just made holds at the inputs as they are (:func:`moved_on`)."""
    counter = _draft_inputs_now(store)
    if kind in STATE_KINDS and counter is not None:
        store.execute(
            "INSERT OR REPLACE INTO draft_inputs(draft_id, counter) VALUES (?, ?)",
            [draft_id, counter],
        )


def _drafted_at(store: Store, draft_id: int) -> int | None:
    row = store.execute(
        "SELECT counter FROM draft_inputs WHERE draft_id = ?", [draft_id]
    ).fetchone()
    return None if row is None else int(row[0])


#: The first line of a day-open post drafted while the night before it waits to be resolved:
#: it cannot be approved until the night is resolved (then it is drafted again, without it).
UNRESOLVED_MARK = "〔第{night}晚尚未结算：结算后这份开门公示会重新起草；结算之前不能批准〕"

#: The first line of a day-open post when bansha knows nothing of the night before it: the
#: engine has not resolved it and no out is recorded in it, so the post's "平安夜" (or a list
#: without the night's outs) is only what bansha has not been told. It cannot be approved as
#: drafted: the director records the night's outs (it is drafted again, without the line) or,
#: when nobody went out, deletes the line and approves.
UNRECORDED_MARK = (
    "〔第{night}晚没有记录：这一晚没有结算，也没有出局记录。"
    "有人出局请先记录，这份公示会重新起草；确实无人出局，删掉这一行再批准〕"
)


def waiting_mark(body: str) -> str | None:
    """Why a day-open post cannot be approved as it is (its first line is one of the marks
    above), or None."""
    first = body.split("\n", 1)[0]
    if not first.startswith("〔第"):
        return None
    if "晚尚未结算" in first:
        return "它前一晚的行动还没有结算（bansha night resolve），结算后会按结算结果重新起草"
    if "晚没有记录" in first:
        return (
            "bansha 不知道它前一晚的结果（没有结算，也没有出局记录）：有人出局请先用 "
            "bansha player out 记录；确实无人出局，先删掉草稿的第一行（bansha drafts edit）"
        )
    return None


def _resolved_phases(store: Store) -> set[str]:
    return {
        r[0] for r in store.execute("SELECT phase FROM engine_snapshots WHERE phase IS NOT NULL")
    }


def unresolved_nights(store: Store, game: Game) -> frozenset[int]:
    """The nights a day-open post waits for: in a game whose director resolves nights with the
    engine (any phase resolved, or night actions recorded), every night of the game — and any
    other with actions recorded — that is not resolved yet; none in a game that never uses it."""
    if not get_ruleset(game.game.ruleset).has_engine:
        return frozenset()
    resolved = _resolved_phases(store)
    acted = {
        int(r[0])
        for r in store.execute(
            "SELECT DISTINCT number FROM journal_actions WHERE phase = 'night' "
            "AND removed_at IS NULL"
        )
    }
    if not resolved and not acted:
        return frozenset()  # the director does not use the engine: nothing to wait for
    nights = {d.day for d in game.days} | acted
    return frozenset(n for n in nights if Phase.night(n).label not in resolved)


def unrecorded_nights(
    store: Store,
    game: Game,
    outs: Mapping[str, tuple[datetime, str]],
    waiting: frozenset[int],
) -> frozenset[int]:
    """The nights bansha knows nothing of (:data:`UNRECORDED_MARK`): between two days of the
    game, not resolved by the engine, and no out (``outs``: the derivation's, by name) after
    the earlier day's close and at or before the later one's opening. A night that waits for
    the engine (``waiting``: :func:`unresolved_nights`) is not one of them: it says so itself."""
    known = {d.day: d for d in game.days}
    resolved = _resolved_phases(store)
    nights: set[int] = set()
    for n, before in known.items():
        after = known.get(n + 1)
        if after is None or n in waiting or Phase.night(n).label in resolved:
            continue
        if not any(before.closes < at <= after.opens for at, _cause in outs.values()):
            nights.add(n)
    return frozenset(nights)


def _mark_unresolved(
    specs: list[DraftSpec], nights: frozenset[int], unrecorded: frozenset[int] = frozenset()
) -> list[DraftSpec]:
    """Day-open posts whose night is in ``nights`` (waiting for the engine) or ``unrecorded``
    (bansha knows nothing of it) say so in their first line."""
    out: list[DraftSpec] = []
    for spec in specs:
        night = (spec.day or 0) - 1
        if spec.kind is DraftKind.DAY_OPEN and (night in nights or night in unrecorded):
            mark = (UNRESOLVED_MARK if night in nights else UNRECORDED_MARK).format(night=night)
            spec = replace(spec, body=f"{mark}\n{spec.body}")
        out.append(spec)
    return out


#: ``meta``: the game file as the drafts were last made or checked against it
#: (:func:`note_game`)
GAME_KEY = "drafts:game"
#: a day's thread ids: bansha opening a thread changes no text already drafted (the 电梯 goes
#: out in the same run), and a tid the director writes makes its drafts anew by itself (a
#: draft's thread is part of what it is)
_TID_FIELDS = frozenset({"discussion", "vote", "progress", "inquiry", "first_vote"})


#: the game file's tables a draft's text is made of; not ``[forum]`` (where the forum is and how
#: to reach it), ``[notify]`` nor the secrets
_DRAFTED_FROM = frozenset({"game", "director", "players", "days", "drafts", "votes", "threads"})


def drafts_game_identity(game: Game) -> str:
    """A digest of the game file as the drafts read it: its tables drafts are made of
    (:data:`_DRAFTED_FROM`), the days' thread ids left out (:data:`_TID_FIELDS`)."""
    data = game.model_dump(mode="json", include=set(_DRAFTED_FROM))
    for day in data.get("days", ()):
        for name in _TID_FIELDS:
            day.pop(name, None)
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def note_game(store: Store, game: Game) -> bool:
    """The game file a draft is made, approved or sent against: when it is not the one the
    drafts were last made or checked against (the director edited it — a close moved, a
    signature, the roster), the drafts' inputs moved on, as after a record: no draft made
    before is approved or sent until drafted again (:func:`moved_on`). True when it changed."""
    identity = drafts_game_identity(game)
    with store.atomic():
        if store.get_meta(GAME_KEY) == identity:
            return False
        changed = store.get_meta(GAME_KEY) is not None
        store.set_meta(GAME_KEY, identity)
        if changed:
            store.execute(
                "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = ?",
                [DRAFT_INPUTS_KEY],
            )
    return changed


STALE_HINT = "请先运行 bansha drafts make（或等下一轮 bansha cycle）按现在的记录重新起草"


def moved_on(store: Store, draft: Draft) -> str | None:
    """Why ``draft`` no longer holds — it was made before the game's inputs last changed (a new
    post or edit, a director's record or its undo, a night or day resolved) and has not been
    drafted again since — or None while it holds."""
    if draft.kind not in STATE_KINDS or draft.state not in LIVE_STATES:
        return None
    now = _draft_inputs_now(store)
    made = _drafted_at(store, draft.id)
    if now is None or made is None or made == now:
        return None  # (made None: a draft from before bansha kept what drafts were made from)
    return (
        "它起草之后，游戏的记录已经变了（新帖、导演的记录或撤销、结算、游戏文件的修改……）；"
        f"{STALE_HINT}"
    )


def keep_inputs(store: Store, specs: Sequence[DraftSpec], *, now: datetime) -> list[int]:
    """After a drafting pass: every live draft the pass drafted (or found unchanged) holds at
    the inputs now; one the pass no longer drafts (its moment has passed) whose inputs moved on
    is superseded — it would say what is no longer so. Returns the superseded drafts' ids."""
    counter = _draft_inputs_now(store)
    if counter is None:
        return []
    at = _stamp(now)
    # what each key is drafted as now: a waiting draft holds only if it says just that (one the
    # pass did not draft again — it may be on the forum already — does not)
    now_as = {s.key: (s.body, s.tid) for s in specs}
    retired: list[int] = []
    with store.atomic():
        for row in store.query("SELECT * FROM drafts WHERE state IN ('pending', 'approved')"):
            draft = Draft.from_row(row)
            if draft.kind not in STATE_KINDS:
                continue
            if now_as.get(draft.key) == (draft.generated_body, draft.tid):
                store.execute(
                    "INSERT INTO draft_inputs(draft_id, counter) VALUES (?, ?) "
                    "ON CONFLICT(draft_id) DO UPDATE SET counter = excluded.counter "
                    "WHERE counter IS NOT excluded.counter",
                    [draft.id, counter],
                )
            elif (made := _drafted_at(store, draft.id)) is not None and made != counter:
                note = (
                    "起草之后游戏的记录已经变了（新帖、导演的记录或撤销、结算……），"
                    "而这份草稿已不再起草：作废，免得发出过时的内容"
                )
                if _supersede(store, draft, at, note):
                    retired.append(draft.id)
    return retired
