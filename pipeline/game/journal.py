"""The engine's journal: night actions and day decisions, and one state snapshot per phase.

- :func:`load_actions_file` reads a night-actions TOML file (docs/游戏文件.md),
  validates it with pydantic and the roster, and returns the actions — or raises
  :class:`JournalError` whose message names the file and every key that is wrong, in Chinese.
  Nothing is written on a half-valid (or half-written) file.
- ``add_action`` / ``journal_actions`` / ``remove_action`` / ``import_actions`` keep the
  actions in the store (table ``journal_actions``), each with the time it was recorded.
- ``save_snapshot`` / ``snapshot`` / ``latest_snapshot`` keep the engine's state and report per
  phase (table ``engine_snapshots``, events in ``engine_events``); :func:`replay` folds the
  stored inputs from the setup again and says where the result differs from what is stored.
- :func:`engine_outs` gives the characters the engine put out (both cards), with the time, for
  the derivation's roster.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, ValidationError

from engine.kernel import Action, DayInput, EngineError, Report, resolve_day, resolve_night
from engine.rulesets import Ruleset
from engine.state import GameState, Phase, PhaseKind
from pipeline.game.gamefile import Game, one_line
from pipeline.game.pending import report_dict
from pipeline.store import Store

__all__ = [
    "ActionRow",
    "ActionsFile",
    "JournalError",
    "ReplayStep",
    "Snapshot",
    "add_action",
    "engine_outs",
    "import_actions",
    "journal_actions",
    "latest_snapshot",
    "load_actions_file",
    "parse_actions",
    "remove_action",
    "replay",
    "save_snapshot",
    "setup_state",
    "snapshot",
    "snapshots",
]


class JournalError(ValueError):
    """A journal input that cannot be used; ``str()`` is Chinese, one line per problem."""


# --------------------------------------------------------------------------- the file


def _text(value: str) -> str:
    if not value.strip():
        raise ValueError("不能为空")
    return value.strip()


Text = Annotated[str, AfterValidator(_text)]


class _ActionModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    actor: Text
    skill: Text
    card: Text | None = None
    targets: list[Text] = Field(default_factory=list)
    choice: Text | None = None
    mode: Text | None = None
    at: AwareDatetime | None = None


class _FileModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    night: int = Field(ge=0)
    actions: list[_ActionModel] = Field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ActionsFile:
    night: int
    actions: tuple[Action, ...]
    source: str


_PYDANTIC_ZH = {
    "missing": "缺少这一项",
    "extra_forbidden": "不认识这个键（可用：actor、card、skill、targets、choice、mode、at）",
    "int_type": "应为整数",
    "string_type": "应为字符串（加双引号）",
    "list_type": '应为列表，如 ["包子"]',
    "greater_than_equal": "不能为负数",
    "timezone_aware": "时间须带时区，如 2026-12-02T22:35:00+08:00",
    "datetime_type": "应为带时区的时间，如 2026-12-02T22:35:00+08:00",
    "value_error": "不能为空",
    "model_type": "应为一个表（[[actions]]）",
}


def _key(loc: Sequence[int | str]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _zh_error(err: Any, data: Any) -> str:
    loc = tuple(err["loc"])
    kind = err["type"]
    msg = _PYDANTIC_ZH.get(kind, err["msg"])
    if kind == "extra_forbidden" and loc and loc[-1] == "target":
        msg = '应写成 targets = ["目标"]（列表）'
    elif kind == "extra_forbidden" and len(loc) == 1:
        msg = "不认识这个键（文件中只能有 night 和 [[actions]]）"
    hint = ""
    if len(loc) >= 2 and loc[0] == "actions" and isinstance(loc[1], int):
        try:
            actor = data["actions"][loc[1]].get("actor")
        except (KeyError, IndexError, AttributeError, TypeError):
            actor = None
        hint = f"（第 {loc[1] + 1} 个 [[actions]]" + (f"，{actor}" if actor else "") + "）"
    return f"{_key(loc)}{hint}：{msg}"


def parse_actions(
    data: Any,
    *,
    source: str,
    resolve_name: Callable[[str], str | None],
    ruleset: Ruleset,
) -> ActionsFile:
    """Validate already-parsed TOML data; every problem is collected before raising."""
    try:
        model = _FileModel.model_validate(data)
    except ValidationError as exc:
        lines = [one_line(f"{source}：{_zh_error(e, data)}") for e in exc.errors()]
        raise JournalError("\n".join(lines)) from None
    problems: list[str] = []
    known = set(ruleset.skill_names())
    actions: list[Action] = []
    for i, a in enumerate(model.actions):
        where = f"{source}：actions[{i}]（第 {i + 1} 个 [[actions]]）"
        actor = resolve_name(a.actor)
        if actor is None:
            problems.append(f"{where}.actor：名单中没有玩家「{a.actor}」")
        skill = ruleset.canonical_skill(a.skill)
        if known and skill not in known:
            problems.append(f"{where}.skill：{ruleset.unknown_skill_reason(skill)}")
        targets: list[str] = []
        for j, t in enumerate(a.targets):
            name = resolve_name(t)
            if name is None:
                # a card label of a card-based set (nizhuan "戊的第二身份" / "戊#2",
                # nizhuan.txt:196): the player from the roster, the card kept
                bare, card = ruleset.split_target(t)
                found = resolve_name(bare) if card is not None else None
                if found is not None:
                    name = ruleset.unit_label(found, card)
            if name is None:
                problems.append(f"{where}.targets[{j}]：名单中没有玩家「{t}」")
            else:
                targets.append(name)
        actions.append(
            Action(
                actor=actor or a.actor,
                skill=skill,
                targets=tuple(targets),
                choice=a.choice,
                card=a.card,
                at=a.at.isoformat() if a.at else None,
                ref=f"{source} actions[{i}]",
            )
        )
    if problems:  # one line each: a name or key with a line break in it is shown escaped
        raise JournalError("\n".join(map(one_line, problems)))
    return ActionsFile(model.night, tuple(actions), source)


def load_actions_file(
    path: Path, *, resolve_name: Callable[[str], str | None], ruleset: Ruleset
) -> ActionsFile:
    """Read and validate a night-actions TOML file; raise :class:`JournalError`."""
    path = Path(path)
    source = f"行动文件 {path}"
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise JournalError(f"{source}：找不到这个文件") from None
    except OSError as exc:
        raise JournalError(f"{source}：无法读取（{exc.strerror}）") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise JournalError(f"{source}：第 {line} 行不是 UTF-8 编码") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise JournalError(
            f"{source}：不是完整有效的 TOML（{exc}）；文件可能没有写完，未做任何处理"
        ) from None
    parsed = parse_actions(data, source=source, resolve_name=resolve_name, ruleset=ruleset)
    # the journal keys an import by the file's absolute path: importing it again replaces it
    return ActionsFile(parsed.night, parsed.actions, f"行动文件 {path.resolve()}")


# --------------------------------------------------------------------------- actions in the store


@dataclass(frozen=True, slots=True)
class ActionRow:
    id: int
    phase: str
    number: int
    action: Action
    source: str
    recorded_at: str
    removed_at: str | None
    #: why the action came after its 行动时限, when the director accepted it late (--late)
    late: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "phase": self.phase,
            "number": self.number,
            **self.action.to_dict(),
            "source": self.source,
            "recorded_at": self.recorded_at,
            "removed_at": self.removed_at,
            "late": self.late,
        }


def _row(r: dict[str, Any]) -> ActionRow:
    action = Action(
        actor=r["actor"],
        skill=r["skill"],
        targets=tuple(json.loads(r["targets"])),
        choice=r["choice"],
        card=r["card"],
        at=r["at"],
        ref=f"#{r['id']}",
    )
    return ActionRow(
        r["id"],
        r["phase"],
        r["number"],
        action,
        r["source"],
        r["recorded_at"],
        r["removed_at"],
        r.get("late"),
    )


def add_action(
    store: Store,
    phase: str,
    number: int,
    action: Action,
    *,
    source: str = "cli",
    recorded_at: datetime,
    late: str | None = None,
) -> int:
    """Record one action; returns its id. ``late``: why it came after its 行动时限, when the
    director accepts it all the same."""
    if phase not in ("night", "day"):
        raise JournalError(f"阶段应为 night 或 day：{phase}")
    with store.atomic():
        rowid = store.insert(
            "journal_actions",
            [
                {
                    "phase": phase,
                    "number": number,
                    "actor": action.actor,
                    "card": action.card,
                    "skill": action.skill,
                    "targets": json.dumps(list(action.targets), ensure_ascii=False),
                    "choice": action.choice,
                    "at": action.at,
                    "source": source,
                    "recorded_at": recorded_at.isoformat(),
                    "removed_at": None,
                    **({"late": late} if late is not None else {}),
                }
            ],
        )
        return rowid


def import_actions(
    store: Store,
    file: ActionsFile,
    *,
    recorded_at: datetime,
    late: Sequence[str | None] = (),
) -> list[int]:
    """Record a file's actions for its night, replacing an earlier import of the same file.
    ``late``: for each action in the file's order, why it came after its 行动时限 when the
    director accepts it all the same (None: on time)."""
    with store.atomic():
        store.execute(
            "UPDATE journal_actions SET removed_at = ? "
            "WHERE phase = 'night' AND number = ? AND source = ? AND removed_at IS NULL",
            [recorded_at.isoformat(), file.night, file.source],
        )
        return [
            add_action(
                store,
                "night",
                file.night,
                a,
                source=file.source,
                recorded_at=recorded_at,
                late=late[i] if i < len(late) else None,
            )
            for i, a in enumerate(file.actions)
        ]


def journal_actions(
    store: Store,
    phase: str | None = None,
    number: int | None = None,
    *,
    include_removed: bool = False,
) -> list[ActionRow]:
    sql = "SELECT * FROM journal_actions WHERE 1 = 1"
    args: list[Any] = []
    if phase is not None:
        sql += " AND phase = ?"
        args.append(phase)
    if number is not None:
        sql += " AND number = ?"
        args.append(number)
    if not include_removed:
        sql += " AND removed_at IS NULL"
    sql += " ORDER BY phase, number, id"
    return [_row(r) for r in store.query(sql, args)]


def remove_action(
    store: Store, action_id: int, *, at: datetime, by: str = "命令行", why: str | None = None
) -> ActionRow:
    """Take back an action: kept as evidence (``removed_at``, by whom, why), no input any more;
    its audit line goes to ``journal_revocations`` (``bansha undo list``)."""
    rows = store.query("SELECT * FROM journal_actions WHERE id = ?", [action_id])
    if not rows:
        raise JournalError(f"没有编号为 {action_id} 的行动记录")
    if rows[0]["removed_at"] is not None:
        who = f"由{rows[0]['removed_by']}" if rows[0].get("removed_by") else ""
        raise JournalError(f"行动记录 #{action_id} 已于 {rows[0]['removed_at']} {who}撤销")
    reason = (why or "").strip() or "未写理由"
    row = _row(rows[0])
    phase = Phase.night(row.number) if row.phase == "night" else Phase.day(row.number)
    with store.atomic():
        cur = store.execute(
            "UPDATE journal_actions SET removed_at = ?, removed_by = ?, remove_reason = ? "
            "WHERE id = ? AND removed_at IS NULL",
            [at.isoformat(), by, reason, action_id],
        )
        if not cur.rowcount:
            raise JournalError(f"行动记录 #{action_id} 刚被撤销过（另一个窗口？），没有再撤销一次")
        store.execute(
            "INSERT INTO journal_revocations(kind, ref, what, revoked_at, revoked_by, reason) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [
                "action",
                str(action_id),
                f"行动 #{action_id}：{phase.zh} {row.action.describe()}",
                at.isoformat(),
                by,
                reason,
            ],
        )
    return _row({**rows[0], "removed_at": at.isoformat()})


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True, slots=True)
class Snapshot:
    phase: Phase
    input: dict[str, Any]
    state: GameState
    report: dict[str, Any]
    complete: bool
    resolved_at: str


def setup_state(game: Game, ruleset: Ruleset) -> GameState:
    """The engine state before the first night, from the game file's cards."""
    players = [(p.name, list(p.cards)) for p in game.players]
    if not any(cards for _n, cards in players):
        raise EngineError("游戏文件中还没有发牌（players[].cards 为空），无法结算夜晚")
    return ruleset.setup_state(players, settings=ruleset.settings_from_game(game))


def save_snapshot(
    store: Store,
    phase: Phase,
    input_data: dict[str, Any],
    state: GameState,
    report: Report,
    *,
    resolved_at: datetime,
) -> list[str]:
    """Store the phase's snapshot; later snapshots (now stale) are removed. Returns their
    phase labels so the caller can tell the director to resolve them again."""
    stale = [
        r["phase"]
        for r in store.query(
            "SELECT phase FROM engine_snapshots WHERE seq > ? ORDER BY seq", [phase.index]
        )
    ]
    data = report_dict(report)
    with store.atomic():
        for label in [phase.label, *stale]:
            store.execute("DELETE FROM engine_snapshots WHERE phase = ?", [label])
            store.execute("DELETE FROM engine_events WHERE phase = ?", [label])
        store.insert(
            "engine_snapshots",
            [
                {
                    "phase": phase.label,
                    "seq": phase.index,
                    "input_json": json.dumps(input_data, ensure_ascii=False, sort_keys=True),
                    "state_json": state.to_json(),
                    "state_hash": state.digest(),
                    "report_json": json.dumps(data, ensure_ascii=False),
                    "complete": int(report.complete),
                    "winner": report.winner,
                    "resolved_at": resolved_at.isoformat(),
                }
            ],
        )
        for i, event in enumerate(data["log"]):
            store.insert(
                "engine_events",
                [
                    {
                        "phase": phase.label,
                        "seq": i,
                        "step": event["step"],
                        "rule": event["rule"],
                        "actor": event["actor"],
                        "result": event["result"],
                        "json": json.dumps(event, ensure_ascii=False),
                    }
                ],
            )
    return stale


def _snapshot(r: dict[str, Any]) -> Snapshot:
    return Snapshot(
        phase=Phase.parse(r["phase"]),
        input=json.loads(r["input_json"]),
        state=GameState.from_json(r["state_json"]),
        report=json.loads(r["report_json"]),
        complete=bool(r["complete"]),
        resolved_at=r["resolved_at"],
    )


def snapshots(store: Store) -> list[Snapshot]:
    return [_snapshot(r) for r in store.query("SELECT * FROM engine_snapshots ORDER BY seq")]


def snapshot(store: Store, phase: Phase) -> Snapshot | None:
    rows = store.query("SELECT * FROM engine_snapshots WHERE phase = ?", [phase.label])
    return _snapshot(rows[0]) if rows else None


def latest_snapshot(store: Store) -> Snapshot | None:
    rows = store.query("SELECT * FROM engine_snapshots ORDER BY seq DESC LIMIT 1")
    return _snapshot(rows[0]) if rows else None


def state_before(store: Store, game: Game, ruleset: Ruleset, phase: Phase) -> GameState:
    """The state the phase starts from: the setup, or the previous phase's snapshot."""
    before = Phase.from_index(phase.index - 1)
    if before.kind is PhaseKind.SETUP:
        return setup_state(game, ruleset)
    snap = snapshot(store, before)
    if (
        snap is None
        and before.kind is PhaseKind.DAY
        and before.number not in {d.day for d in game.days}
    ):
        raise EngineError(
            f"游戏文件中没有第{before.number}天，{phase.zh}之前的白天无法结算："
            "请先在游戏文件的 [[days]] 中加上这一天"
        )
    if snap is None:
        cmd = (
            f"bansha night resolve GAME.toml --night {before.number}"
            if before.kind is PhaseKind.NIGHT
            else f"bansha day resolve GAME.toml --day {before.number}"
        )
        raise EngineError(f"还没有结算{before.zh}，请先结算它（{cmd}）")
    return snap.state


@dataclass(frozen=True, slots=True)
class ReplayStep:
    phase: Phase
    stored_hash: str
    replayed_hash: str

    @property
    def same(self) -> bool:
        return self.stored_hash == self.replayed_hash


def replay(store: Store, game: Game, ruleset: Ruleset) -> list[ReplayStep]:
    """Resolve every stored phase again from the setup and its stored input."""
    state = setup_state(game, ruleset)
    steps: list[ReplayStep] = []
    for snap in snapshots(store):
        if snap.phase.kind is PhaseKind.NIGHT:
            actions = [Action.from_dict(a) for a in snap.input.get("actions", [])]
            state, _ = resolve_night(state, actions, ruleset, night=snap.phase.number)
        else:
            state, _ = resolve_day(state, DayInput.from_dict(snap.input), ruleset)
        steps.append(ReplayStep(snap.phase, snap.state.digest(), state.digest()))
    return steps


def engine_outs(store: Store, game: Game) -> list[tuple[str, datetime, str]]:
    """Characters the engine put out (both cards), with the time: a night's outs at the next
    day's opening, a day's at its close. For the derivation's roster."""
    opens = {d.day: d.opens for d in game.days}
    closes = {d.day: d.closes for d in game.days}
    result: list[tuple[str, datetime, str]] = []
    for snap in snapshots(store):
        # every out, also a second one (after a revival, or nizhuan's second round):
        # the derivation keeps the one that holds (pipeline.derive._revived)
        for death in snap.report.get("deaths", []):
            if not death.get("player_out"):
                continue
            n = snap.phase.number
            at = opens.get(n + 1) if snap.phase.kind is PhaseKind.NIGHT else closes.get(n)
            if at is None:
                continue
            result.append((death["player"], at, f"{snap.phase.zh}：{death['cause']}"))
    return result


SOURCE_ZH = {"console": "控制台", "cli": "命令行"}
_FILE_SOURCE = "行动文件 "


def source_zh(source: str) -> str:
    """Where a recorded action came from, as a director says it: 控制台, 命令行, or 文件 and
    the file's name (not its whole path)."""
    if source in SOURCE_ZH:
        return SOURCE_ZH[source]
    if source.startswith(_FILE_SOURCE):
        return f"文件 {Path(source[len(_FILE_SOURCE) :]).name}"
    return source
