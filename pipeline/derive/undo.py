"""Taking back what the director recorded: a confirmed or dismissed flag, a card, a proxy vote,
a vote modifier, an out, a substitute, a sheriff or speed ruling, a night or day action.

Nothing is deleted that was a record: a revoked row keeps ``revoked_at`` / ``revoked_by`` /
``revoke_reason`` (an action keeps ``removed_at`` / ``removed_by`` / ``remove_reason``) and is
no input any more; every undo also writes its audit line to ``journal_revocations`` (time,
who — 命令行 or 控制台 — why, and the record as it was), also for what has no row to keep: a
flag's decision (the flag is open again, to be confirmed or dismissed anew) and a setting.

What follows from an undo is said with it: the card ledger recomputed (an escalation or a
红牌罚下 that no longer holds), and every engine phase already resolved with the record —
the engine's snapshots are not changed behind the director's back: the phase is resolved again
with the command named (later phases go stale then, as ``night resolve`` says).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engine.cards import Ledger, card_ledger
from engine.rulesets import get_ruleset
from engine.state import Phase, PhaseKind
from pipeline.derive.journal_view import card_events
from pipeline.game.gamefile import Game
from pipeline.store import Store

__all__ = [
    "BY_CLI",
    "BY_CONSOLE",
    "ROW_KINDS",
    "UndoError",
    "Undone",
    "card_rows",
    "records",
    "remove_action",
    "revocations",
    "revoke_card",
    "revoke_flag",
    "revoke_row",
    "revoked_for",
    "undo_setting",
]

BY_CLI = "命令行"
BY_CONSOLE = "控制台"

#: the row kinds ``bansha undo KIND ID`` takes back: kind → (table, what a director calls it)
ROW_KINDS: dict[str, tuple[str, str]] = {
    "card": ("card_events", "牌"),
    "proxy": ("journal_proxy_votes", "代投"),
    "modifier": ("journal_modifiers", "票权修正"),
    "out": ("journal_outs", "出局记录"),
    "substitute": ("journal_substitutions", "替补"),
}


class UndoError(ValueError):
    """An undo that cannot be done; ``str()`` is Chinese and says why."""


@dataclass(frozen=True, slots=True)
class Undone:
    """What an undo did (``message``) and what follows from it (``notes``), in Chinese;
    ``rerun``: the engine phases resolved with the record, earliest first."""

    message: str
    notes: tuple[str, ...] = ()
    rerun: tuple[Phase, ...] = ()

    def lines(self, game_arg: str) -> list[str]:
        """Everything to tell the director; ``game_arg`` is the game file as they name it."""
        out = [self.message, *self.notes]
        if self.rerun:
            first = self.rerun[0]
            cmd = (
                f"bansha night resolve {game_arg} --night {first.number}"
                if first.kind is PhaseKind.NIGHT
                else f"bansha day resolve {game_arg} --day {first.number}"
            )
            phases = "、".join(p.zh for p in self.rerun)
            out.append(
                f"注意：{phases}已经结算进引擎状态，结算时用到了撤销的记录；"
                f"引擎状态不会自动改变，请重新结算：{cmd}（之后已结算的阶段随之作废，按顺序重新结算）"
            )
        return out


def _why(why: str) -> str:
    why = (why or "").strip()
    if not why:
        raise UndoError("撤销必须写明理由（--why）")
    return why


def _when(raw: str | datetime, game: Game) -> str:
    at = datetime.fromisoformat(raw) if isinstance(raw, str) else raw
    return at.astimezone(game.game.tz).strftime("%m-%d %H:%M")


def _audit(
    store: Store, kind: str, ref: str, what: str, *, by: str, why: str, now: datetime
) -> None:
    store.execute(
        "INSERT INTO journal_revocations(kind, ref, what, revoked_at, revoked_by, reason) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [kind, ref, what, now.isoformat(), by, why],
    )


def describe(kind: str, row: dict[str, Any], game: Game) -> str:
    """A journal row as the director recorded it (Chinese, one line)."""
    if kind == "card":
        source = "导演给牌" if row["source"] == "导演" else f"违规标记 {row['source']}"
        return (
            f"牌 #{row['id']}：{row['player']} {row['colour']}（{row['reason']}；"
            f"{_when(row['at'], game)}；{source}）"
        )
    if kind == "proxy":
        return (
            f"代投 #{row['id']}：第{row['day']}天 {row['voter']} → {row['target']}"
            f"（{_when(row['at'], game)}）"
        )
    if kind == "modifier":
        from engine.votes import MODIFIER_ZH

        source = f"（{row['source']}）" if row["source"] else ""
        amount = (
            f" {row['value']}" if row["kind"] in ("weight_add", "weight_set", "voter_add") else ""
        )
        return (
            f"票权修正 #{row['id']}：第{row['day']}天 {row['player']} "
            f"{MODIFIER_ZH.get(row['kind'], row['kind'])}{amount}{source}"
        )
    if kind == "out":
        return (
            f"出局记录 #{row['id']}：{row['player']} 于 {_when(row['at'], game)} 出局"
            f"（{row['cause']}）"
        )
    if kind == "substitute":
        return (
            f"替补 #{row['id']}：{_when(row['from_at'], game)} 起由 {row['name']}"
            f"（uid {row['uid']}）代替 {row['player']}"
        )
    raise UndoError(f"不认识的记录种类：{kind}")


def _row(store: Store, kind: str, row_id: int) -> dict[str, Any]:
    if kind not in ROW_KINDS:
        raise UndoError(f"不认识的记录种类：{kind}（可撤销：{'、'.join(ROW_KINDS)}）")
    table, zh = ROW_KINDS[kind]
    rows = store.query(f"SELECT * FROM {table} WHERE id = ?", [row_id])
    if not rows:
        raise UndoError(f"没有编号为 {row_id} 的{zh}（用 bansha undo list 查看每条记录的编号）")
    return dict(rows[0])


def _refuse_revoked(row: dict[str, Any], zh: str, row_id: int, game: Game) -> None:
    if row.get("revoked_at"):
        raise UndoError(
            f"{zh} #{row_id} 已于 {_when(row['revoked_at'], game)} 由{row['revoked_by']}撤销"
            f"（理由：{row['revoke_reason']}），不能再撤销一次"
        )


# --------------------------------------------------------------------------- the ledger


def _ledger(game: Game, store: Store) -> Ledger:
    factions = {p.name: p.faction for p in game.players}
    return card_ledger(card_events(store), factions, rules=get_ruleset(game.game.ruleset).cards)


def _ledger_notes(before: Ledger, after: Ledger, game: Game) -> list[str]:
    """What the recomputed ledger no longer has (an escalation, a 红牌罚下, a faction's loss)."""
    notes: list[str] = []
    gone = Counter(before.escalations) - Counter(after.escalations)
    for line in before.escalations:
        if gone[line] > 0:
            gone[line] -= 1
            notes.append(f"台账已重算：「{line}」不再成立")
    for name, at in before.out_by_red.items():
        if name not in after.out_by_red:
            notes.append(f"台账已重算：{name}的红牌罚下出局（{_when(at, game)}）撤销")
        elif after.out_by_red[name] != at:
            notes.append(
                f"台账已重算：{name}的红牌罚下改为 {_when(after.out_by_red[name], game)}"
                f"（原为 {_when(at, game)}）"
            )
    kept = {loss.faction for loss in after.losing_factions}
    for loss in before.losing_factions:
        if loss.faction not in kept:
            notes.append(f"台账已重算：{loss.faction}的阵营判负撤销")
    return notes


# --------------------------------------------------------------------------- engine phases


def _phase_end(game: Game, phase: Phase) -> datetime | None:
    days = {d.day: d for d in game.days}
    if phase.kind is PhaseKind.DAY:
        return days[phase.number].closes if phase.number in days else None
    nxt = days.get(phase.number + 1)
    return nxt.opens if nxt is not None else None


def _resolved(store: Store) -> list[Phase]:
    return [
        Phase.parse(r["phase"])
        for r in store.query("SELECT phase FROM engine_snapshots ORDER BY seq")
    ]


def _resolved_from(
    store: Store, game: Game, at: datetime, *, kinds: Sequence[PhaseKind]
) -> tuple[Phase, ...]:
    """The resolved phases (of ``kinds``) that end at or after ``at``: a record of that time was
    an input of the first of them (and so of every later one)."""
    found = []
    for phase in _resolved(store):
        if phase.kind not in kinds:
            continue
        end = _phase_end(game, phase)
        if end is None or end >= at:
            found.append(phase)
    return tuple(found)


def _resolved_days(store: Store, first: int, last: int | None = None) -> tuple[Phase, ...]:
    return tuple(
        p
        for p in _resolved(store)
        if p.kind is PhaseKind.DAY and p.number >= first and (last is None or p.number <= last)
    )


# --------------------------------------------------------------------------- rows


def revoke_row(
    game: Game, store: Store, kind: str, row_id: int, *, why: str, by: str, now: datetime
) -> Undone:
    """Take back one journal row (``kind`` in :data:`ROW_KINDS`); a card that came from a
    confirmed flag takes the flag's decision back with it (:func:`revoke_card`)."""
    if kind == "card":
        return revoke_card(game, store, row_id, why=why, by=by, now=now)
    why = _why(why)
    table, zh = ROW_KINDS.get(kind, ("", ""))
    row = _row(store, kind, row_id)
    _refuse_revoked(row, zh, row_id, game)
    what = describe(kind, row, game)
    with store.atomic():
        cur = store.execute(
            f"UPDATE {table} SET revoked_at = ?, revoked_by = ?, revoke_reason = ? "
            "WHERE id = ? AND revoked_at IS NULL",
            [now.isoformat(), by, why, row_id],
        )
        if not cur.rowcount:
            raise UndoError(f"{zh} #{row_id} 刚被撤销过（另一个窗口？），没有再撤销一次")
        _audit(store, kind, str(row_id), what, by=by, why=why, now=now)
    if kind in ("proxy", "modifier"):
        rerun = _resolved_days(store, int(row["day"]), int(row["day"]))
    elif kind == "out":
        rerun = _resolved_from(
            store, game, datetime.fromisoformat(row["at"]), kinds=(PhaseKind.DAY,)
        )
    else:  # a substitute's posts and votes: every day from then on
        rerun = _resolved_from(
            store, game, datetime.fromisoformat(row["from_at"]), kinds=(PhaseKind.DAY,)
        )
    return Undone(f"已撤销{what}（理由：{why}）", rerun=rerun)


def revoke_card(
    game: Game, store: Store, card_id: int, *, why: str, by: str, now: datetime
) -> Undone:
    """Take back a card; one given by confirming a flag takes the flag's decision back too
    (the flag is open again)."""
    why = _why(why)
    row = _row(store, "card", card_id)
    _refuse_revoked(row, "牌", card_id, game)
    decision = store.execute(
        "SELECT status FROM flag_decisions WHERE flag_id = ?", [row["source"]]
    ).fetchone()
    if row["source"] != "导演" and decision is not None and decision[0] == "confirmed":
        done = revoke_flag(game, store, row["source"], why=why, by=by, now=now)
        return Undone(
            f"牌 #{card_id} 来自违规标记 {row['source']}：{done.message}", done.notes, done.rerun
        )
    before = _ledger(game, store)
    what = describe("card", row, game)
    with store.atomic():
        cur = store.execute(
            "UPDATE card_events SET revoked_at = ?, revoked_by = ?, revoke_reason = ? "
            "WHERE id = ? AND revoked_at IS NULL",
            [now.isoformat(), by, why, card_id],
        )
        if not cur.rowcount:
            raise UndoError(f"牌 #{card_id} 刚被撤销过（另一个窗口？），没有再撤销一次")
        _audit(store, "card", str(card_id), what, by=by, why=why, now=now)
    after = _ledger(game, store)
    return Undone(
        f"已撤销{what}（理由：{why}）",
        (*_ledger_notes(before, after, game), *_posted_notes(store, [row])),
        _card_rerun(game, store, before, after),
    )


def _posted_notes(store: Store, cards: Sequence[dict[str, Any]]) -> list[str]:
    """A cards 公示 already posted that printed a revoked card: the forum keeps it (bansha never
    edits a posted draft); the next drafting makes the corrected one."""
    notes = []
    for r in store.query(
        "SELECT id, day, posted_pid, body FROM drafts WHERE kind = 'cards' AND state = 'posted' "
        "ORDER BY id"
    ):
        hit = [c for c in cards if c["player"] in r["body"] and c["reason"] in r["body"]]
        if hit:
            notes.append(
                f"注意：第{r['day']}天的判罚公示（第 {r['id']} 号草稿，pid {r['posted_pid']}）"
                f"已经发出，印有{'、'.join(c['player'] + '的' + c['colour'] for c in hit)}；"
                "论坛上的帖子不会自动更正：下一次起草生成这一天的更正判罚公示"
                "（写明哪张牌撤销，并列出仍然有效的牌），请自行决定是否发出更正"
            )
    return notes


def _card_rerun(game: Game, store: Store, before: Ledger, after: Ledger) -> tuple[Phase, ...]:
    """A card reaches the engine only as a 红牌罚下 or a faction's loss: the phases from the
    earliest of those that changed."""
    changed = [at for name, at in before.out_by_red.items() if after.out_by_red.get(name) != at]
    kept = {(x.faction, x.at) for x in after.losing_factions}
    changed += [x.at for x in before.losing_factions if (x.faction, x.at) not in kept]
    if not changed:
        return ()
    return _resolved_from(store, game, min(changed), kinds=(PhaseKind.NIGHT, PhaseKind.DAY))


# --------------------------------------------------------------------------- flags


def revoke_flag(
    game: Game, store: Store, flag_id: str, *, why: str, by: str, now: datetime
) -> Undone:
    """Take back a flag's decision: a confirmed flag's card is revoked (the ledger recomputed),
    a dismissed flag is open again; either way it can be decided anew."""
    why = _why(why)
    rows = store.query("SELECT * FROM flag_decisions WHERE flag_id = ?", [flag_id])
    if not rows:
        known = store.execute("SELECT 1 FROM flags WHERE id = ?", [flag_id]).fetchone()
        if known is None:
            raise UndoError(f"没有编号为 {flag_id} 的违规标记（用 bansha flags 查看）")
        raise UndoError(f"标记 {flag_id} 还没有确认或驳回，没有可撤销的决定")
    dec = rows[0]
    before = _ledger(game, store)
    cards = list(
        store.query("SELECT * FROM card_events WHERE source = ? AND revoked_at IS NULL", [flag_id])
    )
    if dec["status"] == "confirmed":
        what = f"标记 {flag_id} 的确认（{dec['card']}，{_when(dec['decided_at'], game)}）"
    else:
        what = f"标记 {flag_id} 的驳回（理由：{dec['why']}，{_when(dec['decided_at'], game)}）"
    with store.atomic():
        cur = store.execute("DELETE FROM flag_decisions WHERE flag_id = ?", [flag_id])
        if not cur.rowcount:
            raise UndoError(f"标记 {flag_id} 的决定刚被撤销过（另一个窗口？），没有再撤销一次")
        for card in cards:
            store.execute(
                "UPDATE card_events SET revoked_at = ?, revoked_by = ?, revoke_reason = ? "
                "WHERE id = ?",
                [now.isoformat(), by, why, card["id"]],
            )
            _audit(
                store,
                "card",
                str(card["id"]),
                describe("card", card, game),
                by=by,
                why=why,
                now=now,
            )
        _audit(store, "flag", flag_id, what, by=by, why=why, now=now)
    after = _ledger(game, store)
    given = "；".join(f"{c['player']}的{c['colour']}（牌 #{c['id']}）撤销" for c in cards)
    message = f"已撤销{what}（理由：{why}）" + (f"：{given}" if given else "")
    message += "；标记回到待确认，可重新确认或驳回"
    return Undone(
        message,
        (*_ledger_notes(before, after, game), *_posted_notes(store, cards)),
        _card_rerun(game, store, before, after),
    )


# --------------------------------------------------------------------------- settings


SETTING_KINDS = {"sheriff": "警长", "speed": "加速裁定"}


def undo_setting(
    game: Game, store: Store, kind: str, number: int, *, why: str, by: str, now: datetime
) -> Undone:
    """Take back ``bansha vote sheriff --from-day N`` (then the election, the engine's hand-over
    or an earlier record decide again) or ``bansha vote speed --day N`` (then the players'
    requests decide, as with ``--mode auto``)."""
    why = _why(why)
    if kind not in SETTING_KINDS:
        raise UndoError(f"不认识的设置：{kind}（可撤销：sheriff、speed）")
    key = f"{kind}:{number}"
    rows = store.query("SELECT * FROM journal_settings WHERE key = ?", [key])
    if not rows:
        where = f"第{number}天起的警长" if kind == "sheriff" else f"第{number}天的加速裁定"
        raise UndoError(f"没有记录{where}，没有可撤销的设置")
    value = rows[0]["value"]
    if kind == "sheriff":
        what = f"第{number}天起警长为 {value or '无'}（{_when(rows[0]['recorded_at'], game)} 记录）"
        rerun = _resolved_days(store, number)
    else:
        zh = {"accelerate": "加速", "normal": "不加速"}.get(value, value)
        what = f"第{number}天 {zh}（{_when(rows[0]['recorded_at'], game)} 记录）"
        rerun = _resolved_days(store, number, number)
    with store.atomic():
        store.execute("DELETE FROM journal_settings WHERE key = ?", [key])
        _audit(store, kind, key, what, by=by, why=why, now=now)
    after = (
        "由竞选结果、引擎结算的移交或更早的记录决定"
        if kind == "sheriff"
        else "按玩家的申请人数计算"
    )
    return Undone(f"已撤销{SETTING_KINDS[kind]}：{what}（理由：{why}）；现在{after}", rerun=rerun)


# --------------------------------------------------------------------------- actions


def remove_action(
    game: Game, store: Store, action_id: int, *, why: str | None, by: str, now: datetime
) -> Undone:
    """``bansha night remove`` / ``undo action``: the action kept as evidence, no input any
    more (:func:`pipeline.game.journal.remove_action`), and the phases resolved with it."""
    from pipeline.game.journal import JournalError
    from pipeline.game.journal import remove_action as remove

    try:
        row = remove(store, action_id, at=now, by=by, why=why)
    except JournalError as exc:
        raise UndoError(str(exc)) from exc
    phase = Phase.night(row.number) if row.phase == "night" else Phase.day(row.number)
    rerun = tuple(p for p in _resolved(store) if p.index >= phase.index)
    reason = (why or "").strip() or "未写理由"
    return Undone(
        f"已撤销 #{row.id}：{row.action.describe()}（{phase.zh}的行动；理由：{reason}）",
        rerun=rerun,
    )


# --------------------------------------------------------------------------- listings


def records(store: Store, game: Game, *, include_revoked: bool = False) -> list[dict[str, Any]]:
    """Every director's record that ``bansha undo`` can take back, oldest first: ``kind``,
    ``ref`` (what to give ``undo``), ``what`` (Chinese), ``recorded_at``, and for a revoked
    row ``revoked``: its audit line."""
    out: list[dict[str, Any]] = []
    for kind, (table, _zh) in ROW_KINDS.items():
        for r in store.query(f"SELECT * FROM {table} ORDER BY id"):
            row = dict(r)
            if row["revoked_at"] and not include_revoked:
                continue
            out.append(
                {
                    "kind": kind,
                    "ref": str(row["id"]),
                    "what": describe(kind, row, game),
                    "recorded_at": row["recorded_at"],
                    "revoked": _revoked_line(row, game) if row["revoked_at"] else None,
                }
            )
    for r in store.query("SELECT * FROM flag_decisions ORDER BY decided_at"):
        zh = f"已确认，{r['card']}" if r["status"] == "confirmed" else f"已驳回：{r['why']}"
        out.append(
            {
                "kind": "flag",
                "ref": r["flag_id"],
                "what": f"违规标记 {r['flag_id']}：{zh}",
                "recorded_at": r["decided_at"],
                "revoked": None,
            }
        )
    for r in store.query("SELECT * FROM journal_settings ORDER BY key"):
        kind, _, number = str(r["key"]).partition(":")
        if kind not in SETTING_KINDS or not number.lstrip("-").isdigit():
            continue
        value = r["value"]
        what = (
            f"第{number}天起警长为 {value or '无'}"
            if kind == "sheriff"
            else f"第{number}天 {({'accelerate': '加速', 'normal': '不加速'}).get(value, value)}"
        )
        out.append(
            {
                "kind": kind,
                "ref": number,
                "what": what,
                "recorded_at": r["recorded_at"],
                "revoked": None,
            }
        )
    for r in store.query("SELECT * FROM journal_actions ORDER BY id"):
        row = dict(r)
        if row["removed_at"] and not include_revoked:
            continue
        from pipeline.game.journal import _row as action_row

        phase = Phase.night(row["number"]) if row["phase"] == "night" else Phase.day(row["number"])
        out.append(
            {
                "kind": "action",
                "ref": str(row["id"]),
                "what": f"行动 #{row['id']}：{phase.zh} {action_row(row).action.describe()}",
                "recorded_at": row["recorded_at"],
                "revoked": (
                    f"{row['removed_at']} 由{row.get('removed_by') or '命令行'}撤销"
                    f"（理由：{row.get('remove_reason') or '未写'}）"
                    if row["removed_at"]
                    else None
                ),
            }
        )
    for r in store.query(
        "SELECT id, title, state, approved_at, updated_at, reject_why FROM drafts "
        "WHERE state IN ('approved', 'rejected') ORDER BY id"
    ):
        decided = "已批准" if r["state"] == "approved" else f"已驳回：{r['reject_why']}"
        out.append(
            {
                "kind": "draft",
                "ref": str(r["id"]),
                "what": f"第 {r['id']} 号草稿（{r['title']}）{decided}",
                "recorded_at": r["approved_at"] or r["updated_at"],
                "revoked": None,
            }
        )
    out.sort(key=lambda x: x["recorded_at"] or "")
    return out


def _revoked_line(row: dict[str, Any], game: Game) -> str:
    return (
        f"{_when(row['revoked_at'], game)} 由{row['revoked_by']}撤销"
        f"（理由：{row['revoke_reason']}）"
    )


def card_rows(store: Store, game: Game) -> list[dict[str, Any]]:
    """Every card recorded, given and revoked, with its id and audit line (``bansha cards``)."""
    return [
        {
            "id": int(r["id"]),
            "player": r["player"],
            "colour": r["colour"],
            "reason": r["reason"],
            "at": r["at"],
            "source": r["source"],
            "line": describe("card", dict(r), game),
            "revoked": _revoked_line(dict(r), game) if r["revoked_at"] else None,
        }
        for r in store.query("SELECT * FROM card_events ORDER BY at, id")
    ]


def revocations(store: Store, game: Game) -> list[str]:
    """The audit lines of every undo, oldest first (Chinese)."""
    lines = []
    for r in store.query("SELECT * FROM journal_revocations ORDER BY id"):
        what = r["what"]
        lines.append(
            f"{_when(r['revoked_at'], game)} {r['revoked_by']}撤销 {what}（理由：{r['reason']}）"
        )
    return lines


def revoked_for(store: Store, game: Game, player: str, day: int) -> list[str]:
    """The revoked records about ``player`` that bore on ``day`` (``bansha why``): a proxy vote
    or a modifier of that day, an out, a substitute, a card — each with its audit line."""
    found: list[str] = []
    for kind, (table, _zh) in ROW_KINDS.items():
        who = "voter" if kind == "proxy" else "player"
        sql = f"SELECT * FROM {table} WHERE {who} = ? AND revoked_at IS NOT NULL"
        args: list[Any] = [player]
        if kind in ("proxy", "modifier"):
            sql += " AND day = ?"
            args.append(day)
        for r in store.query(sql + " ORDER BY id", args):
            row = dict(r)
            found.append(f"{describe(kind, row, game)}：{_revoked_line(row, game)}")
    return found
