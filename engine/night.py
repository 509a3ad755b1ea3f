"""The night's ordered steps, action validation, and attacks against defences.

A rule set describes its night as data — :class:`Step` (keyed by ``(step, sub-order)``, never by
dict order) and :class:`SkillSpec` (phase, targets, 限定, first night, rule) — and supplies the
effects as code (handlers). :func:`run_steps` walks the steps in key order:

1. each action is matched to its skill; actions of trigger skills (最后一枪, 殉职 …) are kept
   on the board for the trigger that will need them;
2. per step, every action is validated (dead actor, lost skill, disabled skill, wrong night,
   used 限定, one use per night, illegal targets, then the rule set's own checks) and an invalid
   one is recorded with its Chinese reason;
3. the chosen targets go through the board's redirectors (选择目标 → 结算目标, with a trace);
4. the handler writes its effect to the board's scratchpad and reports an outcome.

``SIMULTANEOUS`` steps (互不影响) validate every action against the step-start board, then apply
them with the statuses and redirects they add held back until the step ends (so no action sees
another's effect); ``ORDERED`` steps validate and apply one action at a time in sub-order
(从左至右), each seeing the ones before it.

:func:`resolve_attack` runs one attack through an ordered list of defences (a rule text's
杀人结算 order, or its status table).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from engine.kernel import Action, Board, Outcome

if TYPE_CHECKING:
    from engine.rulesets.base import Ruleset

__all__ = [
    "Attack",
    "Check",
    "Defence",
    "Handler",
    "Holder",
    "Pass",
    "SkillSpec",
    "Step",
    "StepMode",
    "TargetKind",
    "resolve_attack",
    "run_steps",
    "validate",
]


class StepMode(StrEnum):
    SIMULTANEOUS = "互不影响"
    ORDERED = "依次结算"


class TargetKind(StrEnum):
    NONE = "none"
    PLAYER = "player"  # a living character
    OUT_CARD = "out_card"  # a card already out (灵能[感知])
    ANY_PLAYER = "any_player"  # living or out ([灵视])


@dataclass(frozen=True, slots=True)
class Step:
    """One night step. ``key`` = (step number, sub-order within the step)."""

    key: tuple[int, int]
    name: str
    skills: tuple[str, ...]
    rule: str
    mode: StepMode = StepMode.SIMULTANEOUS

    @property
    def label(self) -> str:
        return f"（{self.key[0]}）{self.name}"


@dataclass(frozen=True, slots=True)
class SkillSpec:
    """What the kernel needs to validate an action of this skill.

    ``step`` is the night step key; None for skills that are not launched in a night step
    (``trigger`` skills fire on an event, ``day`` skills in the daytime, passive ones never).
    """

    name: str
    rule: str
    step: tuple[int, int] | None = None
    targets: int = 1
    target_kind: TargetKind = TargetKind.PLAYER
    limited: bool = False
    forced: bool = False
    passive: bool = False
    trigger: bool = False
    day: bool = False
    first_night: int = 0
    self_ok: bool = True
    redirectable: bool = True  # a [指定] skill whose targets go through the redirectors
    distinct_targets: bool = True
    choices: tuple[str, ...] = ()
    first_night_rule: str = ""
    flexible_targets: bool = False  # [自选]: any number (at least one) of targets


@dataclass(frozen=True, slots=True)
class Holder:
    """Who holds a skill right now: the character, the card (uid) and where it came from."""

    player: str
    card: str  # card uid
    card_name: str
    role: str  # the role whose skill it is (a 复制人 holds its copy's role)
    skill: str
    source: str = ""  # "" own skill; the gift's giver for 馈赠 skills; "隐狼" for its kill
    charge: tuple[str, str, str] | None = None  # the (card, skill, source) charge it uses up


@dataclass(slots=True)
class Pass:
    """One valid action on its way through a step."""

    action: Action
    spec: SkillSpec
    holder: Holder
    step: Step
    resolved: tuple[str, ...] = ()
    trace: tuple[str, ...] = ()
    extra: dict[str, str] = field(default_factory=dict)


Handler = Callable[[Board, Pass], tuple[Outcome, str]]
Check = Callable[[Board, Pass], str | None]


@dataclass(frozen=True, slots=True)
class Attack:
    kind: str
    source: str
    target: str
    step: str
    rule: str


@dataclass(frozen=True, slots=True)
class Defence:
    """One defence in the rule set's order: ``blocks(board, attack)`` says whether it stops
    the attack (and consumes itself when counted); ``name``/``rule`` go to the log."""

    name: str
    rule: str
    blocks: Callable[[Board, Attack], bool]


def resolve_attack(board: Board, attack: Attack, defences: Sequence[Defence]) -> str | None:
    """The first defence (in order) that stops the attack, by name; None: the attack lands."""
    for d in defences:
        if d.blocks(board, attack):
            board.emit(
                attack.step,
                d.rule,
                f"{attack.kind}对{attack.target}无效：{d.name}",
                actor=attack.source,
                resolved=(attack.target,),
                checked=d.name,
            )
            return d.name
        board.emit(
            attack.step,
            d.rule,
            f"检查{d.name}：不适用",
            actor=attack.source,
            resolved=(attack.target,),
            checked=d.name,
        )
    return None


# --------------------------------------------------------------------------- the runner


_ZH_DIGITS = "零一二三四五六七八九十"


def _zh_night(n: int) -> str:
    return f"第{_ZH_DIGITS[n]}晚" if 0 <= n <= 10 else f"第{n}晚"


def validate(board: Board, rs: Ruleset, action: Action, spec: SkillSpec, step: Step) -> Pass | str:
    """A :class:`Pass` for a valid action, or the Chinese reason it is invalid."""
    night = board.night if board.night is not None else -1
    if not board.has(action.actor):
        return f"名单中没有玩家「{action.actor}」"
    if not board.alive(action.actor):
        return f"{action.actor}已出局，出局后不能发动技能"
    if spec.passive:
        return f"<{spec.name}>是被动技能，满足条件时自动结算，无需提交"
    if board.night is not None and night < spec.first_night:
        why = f"（{spec.first_night_rule}）" if spec.first_night_rule else ""
        return (
            f"<{spec.name}>{_zh_night(spec.first_night)}起才能发动，今晚是{_zh_night(night)}{why}"
        )
    holder = rs.holder(board, action.actor, spec.name)
    if holder is None:
        return rs.missing_skill_reason(board, action.actor, spec.name)
    if action.card and action.card not in (holder.card_name, holder.role):
        return f"{action.actor}的当前身份不是{action.card}，<{spec.name}>来自{holder.card_name}"
    disabled = rs.disabled(board, holder)
    if disabled:
        return disabled
    if holder.charge is not None:
        charge = board.charge(*holder.charge)
        if charge is None or charge.remaining <= 0:
            return f"<{spec.name}>是<限定>技能，已经发动过" if spec.limited else "该临时技能已用完"
        if charge.since > board.index:
            return f"<{spec.name}>从{_zh_night((charge.since - 1) // 2)}起才能使用"
    cooldown = board.cooldowns.get((holder.card, spec.name))
    if cooldown is not None and cooldown.ready > board.index:
        return f"<{spec.name}>冷却中"
    if spec.choices and action.choice not in spec.choices:
        return f"<{spec.name}>须选择{'、'.join(spec.choices)}之一（choice）"
    if spec.flexible_targets:
        if not action.targets:
            return f"<{spec.name}>须至少选择1名角色"
    elif len(action.targets) != spec.targets:
        if spec.targets == 0:
            return f"<{spec.name}>不需要指定目标"
        return f"<{spec.name}>须选择{spec.targets}名角色，收到{len(action.targets)}名"
    if spec.distinct_targets and len(set(action.targets)) != len(action.targets):
        return f"<{spec.name}>的目标不能重复"
    for target in action.targets:
        if not board.has(target):
            return f"目标「{target}」不在名单中"
        if spec.target_kind is TargetKind.PLAYER and not board.alive(target):
            cite = f"（{rs.dead_target_rule}）" if rs.dead_target_rule else ""
            return f"{target}已出局，不能被选为技能的目标{cite}"
        if not spec.self_ok and target == action.actor:
            return f"<{spec.name}>不能选择自己"
    p = Pass(action, spec, holder, step)
    reason = rs.check_action(board, p)
    return reason if reason else p


def run_steps(
    board: Board,
    rs: Ruleset,
    plan: Sequence[Step],
    specs: Mapping[str, SkillSpec],
    handlers: Mapping[str, Handler],
    actions: Sequence[Action],
) -> None:
    """Walk the night's steps in key order and resolve the actions of each."""
    by_skill = {s: step for step in plan for s in step.skills}
    queued = _queue(board, rs, by_skill, specs, actions)
    for key, items in list(queued.items()):
        queued[key] = _without_repeats(board, rs, by_skill, specs, items)
    for step in sorted(plan, key=lambda s: s.key):
        rs.before_step(board, step)
        _run_step(board, rs, step, queued.get(step.key, []), handlers)
        rs.after_step(board, step)


_Queued = list[tuple[Action, SkillSpec]]


def _queue(
    board: Board,
    rs: Ruleset,
    by_skill: Mapping[str, Step],
    specs: Mapping[str, SkillSpec],
    actions: Sequence[Action],
) -> dict[tuple[int, int], _Queued]:
    """The night's actions by the key of their step, skill names made canonical; a trigger
    waits in ``board.prepared``, and what is no night skill is recorded as such."""
    queued: dict[tuple[int, int], _Queued] = {}
    for action in actions:
        skill = rs.canonical_skill(action.skill)
        if skill != action.skill:
            action = Action(
                action.actor,
                skill,
                action.targets,
                action.choice,
                action.card,
                action.at,
                action.ref,
            )
        spec = specs.get(skill)
        if spec is None:
            board.record(action, "校验", Outcome.INVALID, rs.unknown_skill_reason(skill), "")
            continue
        if spec.trigger or spec.day:
            if spec.day and not spec.trigger:
                board.record(
                    action, "校验", Outcome.INVALID, f"<{skill}>在白天发动，不是夜晚技能", spec.rule
                )
                continue
            board.prepared.append(action)
            continue
        step = by_skill.get(skill)
        if step is None or spec.passive:
            reason = rs.unknown_skill_reason(skill) if step is None else ""
            if spec.passive:
                reason = f"<{skill}>是<强制>/被动技能，满足条件时自动结算，无需提交"
            board.record(action, "校验", Outcome.FIZZLED, reason, spec.rule)
            continue
        queued.setdefault(step.key, []).append((action, spec))
    return queued


def _without_repeats(
    board: Board,
    rs: Ruleset,
    by_skill: Mapping[str, Step],
    specs: Mapping[str, SkillSpec],
    items: _Queued,
) -> _Queued:
    """One use of a skill per actor and night: identical repeats are dropped as duplicates;
    different ones are all invalid (the director keeps the one the player meant)."""
    groups: dict[tuple[str, str], list[Action]] = {}
    for action, spec in items:
        if not rs.group_skill(spec.name):
            groups.setdefault((action.actor, spec.name), []).append(action)
    dropped: set[int] = set()
    for (actor, skill), acts in groups.items():
        if len(acts) < 2:
            continue
        rule = specs[skill].rule
        label = by_skill[skill].label
        if len({(a.targets, a.choice, a.card) for a in acts}) == 1:
            for a in acts[1:]:
                board.record(a, label, Outcome.INVALID, "重复记录，只结算一次", rule)
                dropped.add(id(a))
            continue
        listing = "；".join(a.describe() for a in acts)
        for a in acts:
            board.record(
                a,
                label,
                Outcome.INVALID,
                f"{actor}今晚提交了{len(acts)}条不同的<{skill}>（{listing}），"
                "同一技能每晚只能发动一次；请导演只保留一条",
                rule,
            )
            dropped.add(id(a))
    return [(a, s) for a, s in items if id(a) not in dropped]


def _run_step(
    board: Board, rs: Ruleset, step: Step, queued: _Queued, handlers: Mapping[str, Handler]
) -> None:
    """One step's actions in order (skill, the rule set's order, seat); a simultaneous step
    validates them all before any takes effect."""
    items = sorted(
        queued,
        key=lambda item: (
            step.skills.index(item[1].name),
            rs.action_order(board, item[0]),
            board.seat(item[0].actor),
            item[0].sort_key(),
        ),
    )
    simultaneous = step.mode is StepMode.SIMULTANEOUS
    passes: list[Pass] = []
    for action, spec in items:
        checked = validate(board, rs, action, spec, step)
        if isinstance(checked, str):
            board.record(action, step.label, Outcome.INVALID, checked, spec.rule)
            board.emit(step.label, spec.rule, f"无效：{checked}", actor=action.actor)
        elif simultaneous:
            passes.append(checked)
        else:
            _apply(board, rs, checked, handlers)
    if simultaneous:
        board.begin_simultaneous()
        for p in passes:
            _apply(board, rs, p, handlers)
        board.commit()


def _apply(board: Board, rs: Ruleset, p: Pass, handlers: Mapping[str, Handler]) -> None:
    spec = p.spec
    if spec.redirectable and spec.target_kind is not TargetKind.NONE:
        p.resolved, p.trace = board.resolve_targets(p.action.targets)
    else:
        p.resolved = p.action.targets
    if p.holder.charge is not None:
        board.use_charge(*p.holder.charge)
    if p.action.targets:
        board.remember(p.holder.card, spec.name, p.action.targets)
    outcome, reason = handlers[spec.name](board, p)
    board.record(p.action, p.step.label, outcome, reason, spec.rule, p.resolved, p.trace)
    board.emit(
        p.step.label,
        spec.rule,
        reason,
        actor=p.action.actor,
        chosen=p.action.targets,
        resolved=p.resolved,
        because="；".join(p.trace),
    )
