"""The kernel on its own: phases, the state's canonical JSON, ordered steps, redirects, attacks
against defences, the trigger queue, nobody dying twice, and the report contract.

A toy rule set (two cards per player, three skills) drives ``engine.night.run_steps`` so the
kernel is checked without m135's rules.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import replace
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kernel import (
    Action,
    Board,
    DayInput,
    Death,
    EngineError,
    Outcome,
    Redirect,
    Trigger,
    canonical_actions,
    resolve_night,
    seeded_choice,
)
from engine.night import (
    Attack,
    Defence,
    Holder,
    Pass,
    SkillSpec,
    Step,
    StepMode,
    resolve_attack,
    run_steps,
)
from engine.rulesets.base import Ruleset
from engine.state import (
    CardState,
    Charge,
    Cooldown,
    GameState,
    Memory,
    Phase,
    PhaseKind,
    PlayerState,
    StateError,
    Status,
)

# --------------------------------------------------------------------------- phases


def test_phase_order_labels_and_round_trip() -> None:
    order = [Phase.setup(), Phase.night(0), Phase.day(1), Phase.night(1), Phase.day(2)]
    assert [p.index for p in order] == [0, 1, 2, 3, 4]
    assert [p.next() for p in order[:-1]] == order[1:]
    assert [Phase.parse(p.label) for p in order] == order
    assert [p.zh for p in order] == ["开局", "第0晚", "第1天", "第1晚", "第2天"]
    with pytest.raises(StateError, match="无法识别的阶段"):
        Phase.parse("evening:1")
    with pytest.raises(StateError):
        Phase.day(0)


# --------------------------------------------------------------------------- state JSON

names = st.sampled_from(["饺子", "包子", "馄饨", "Snow_风"])
cards = st.sampled_from(["狼人", "村民", "女巫", "复制人"])


@st.composite
def states(draw: st.DrawFn) -> GameState:
    players = []
    for name in ["饺子", "包子", "馄饨", "Snow_风"]:
        cs = tuple(
            CardState(
                f"{name}#{i}",
                draw(cards),
                alive=draw(st.booleans()),
                out_phase=draw(st.none() | st.just("night:1")),
                out_cause=draw(st.none() | st.just("杀人")),
            )
            for i in (1, 2)
        )
        players.append(PlayerState(name, cs, draw(st.booleans()), draw(st.booleans())))
    statuses = draw(
        st.lists(
            st.builds(
                Status,
                kind=st.sampled_from(["诽谤", "守护之盾", "村镇之殇"]),
                holder=names | st.just("*"),
                source=st.text(max_size=5),
                since=st.integers(0, 9),
                until=st.none() | st.integers(0, 9),
                count=st.none() | st.integers(0, 3),
                negative=st.booleans(),
                survives_death=st.booleans(),
            ),
            max_size=4,
        )
    )
    charges = draw(
        st.lists(
            st.builds(
                Charge,
                card=st.sampled_from(["饺子#1", "包子#2"]),
                skill=st.sampled_from(["救药", "毒药", "馈赠毒药"]),
                remaining=st.integers(0, 2),
                source=st.sampled_from(["", "春卷#1"]),
            ),
            max_size=4,
            unique_by=lambda c: (c.card, c.skill, c.source),
        )
    )
    memory = draw(
        st.lists(
            st.builds(
                Memory,
                card=st.just("馄饨#1"),
                skill=st.just("交换"),
                phase=st.integers(0, 9),
                targets=st.tuples(names, names),
            ),
            max_size=3,
        )
    )
    return GameState(
        ruleset="m135",
        phase=draw(st.sampled_from([Phase.setup(), Phase.night(2), Phase.day(3)])),
        players=tuple(players),
        sheriff=draw(st.none() | names),
        statuses=tuple(statuses),
        charges=tuple(charges),
        cooldowns=(Cooldown("饺子#1", "杀人", 5),),
        memory=tuple(memory),
        voters_day=draw(st.none() | st.integers(1, 5)),
        voters=tuple(draw(st.lists(names, max_size=4))),
        vote_cards=(("饺子", "饺子#1"),),
        winner=draw(st.none() | st.just("村民阵营")),
        settings=(("effects_bind", "resolution"),),
    )


@settings(max_examples=60, deadline=None)
@given(states(), st.randoms(use_true_random=False))
def test_state_json_round_trip_is_exact_and_canonical(state: GameState, rnd: random.Random) -> None:
    text = state.to_json()
    assert GameState.from_json(text) == state
    assert GameState.from_json(text).to_json() == text
    shuffled = replace(
        state,
        statuses=tuple(rnd.sample(state.statuses, len(state.statuses))),
        charges=tuple(rnd.sample(state.charges, len(state.charges))),
        memory=tuple(rnd.sample(state.memory, len(state.memory))),
        voters=tuple(rnd.sample(state.voters, len(state.voters))),
    )
    assert shuffled.to_json() == text and shuffled.digest() == state.digest()
    assert json.loads(text) == state.to_dict()


def test_bad_state_json_is_reported_in_chinese() -> None:
    with pytest.raises(StateError, match="不是有效的 JSON"):
        GameState.from_json("{")
    with pytest.raises(StateError, match="无法读取引擎状态"):
        GameState.from_json('{"ruleset": "m135"}')
    with pytest.raises(StateError, match="玩家名重复"):
        GameState("toy", Phase.setup(), (PlayerState("a", ()), PlayerState("a", ())))


# --------------------------------------------------------------------------- a toy rule set

TOY_SPECS = {
    s.name: s
    for s in (
        SkillSpec("标记", "toy:1", step=(1, 0)),
        SkillSpec("查看", "toy:2", step=(2, 0)),
        SkillSpec("刺杀", "toy:3", step=(3, 0), limited=True),
        SkillSpec("换位", "toy:4", step=(0, 0), targets=2),
        SkillSpec("遗言枪", "toy:5", trigger=True),
    )
}


class Toy(Ruleset):
    """Two cards per player; every living player holds every skill on its current card."""

    id: ClassVar[str] = "toy"
    name: ClassVar[str] = "玩具规则"
    has_engine: ClassVar[bool] = True
    plan: ClassVar[tuple[Step, ...]] = ()

    def __init__(self, mode: StepMode = StepMode.SIMULTANEOUS, reverse: bool = False) -> None:
        steps = [
            Step((3, 0), "刺杀", ("刺杀",), "toy:3"),
            Step((2, 0), "查看", ("查看",), "toy:2", mode),
            Step((1, 0), "标记", ("标记",), "toy:1"),
            Step((0, 0), "换位", ("换位",), "toy:4"),
        ]
        self.steps = tuple(steps if reverse else reversed(steps))

    def skill_names(self) -> tuple[str, ...]:
        return tuple(TOY_SPECS)

    def holder(self, board: Board, player: str, skill: str) -> Holder | None:
        cur = board.current(player)
        if cur is None:
            return None
        charge = (cur.uid, skill, "") if TOY_SPECS[skill].limited else None
        return Holder(player, cur.uid, cur.name, cur.name, skill, "", charge)

    def run_night(self, board: Board, actions: Sequence[Action]) -> None:
        handlers = {
            "换位": self.swap,
            "标记": self.mark,
            "查看": self.look,
            "刺杀": self.stab,
        }
        run_steps(board, self, self.steps, TOY_SPECS, handlers, actions)
        for target, source in board.scratch.get("stabs", []):
            board.card_out(target, cause="刺杀", step="结算", rule="toy:3", source=source)
            board.drain()

    def swap(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        a, b = p.resolved
        board.add_redirect(Redirect(1, "换位", "toy:4", ((a, b), (b, a))))
        return Outcome.DONE, f"{a}⇄{b}"

    def mark(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        board.add_status(Status("标记", p.resolved[0], p.action.actor, board.index, board.index))
        return Outcome.DONE, "标记"

    def look(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        marked = bool(board.statuses_of(p.resolved[0], "标记"))
        board.tell(p.action.actor, f"{p.resolved[0]}{'有' if marked else '没有'}标记")
        board.add_status(Status("标记", p.action.actor, "查看", board.index, board.index))
        return Outcome.DONE, "查看"

    def stab(self, board: Board, p: Pass) -> tuple[Outcome, str]:
        board.scratch.setdefault("stabs", []).append((p.resolved[0], p.action.actor))
        return Outcome.DONE, "刺杀"

    def after_card_out(self, board: Board, death: Death) -> None:
        if death.card == "枪手":
            board.push_front(Trigger(f"枪:{death.card_uid}", lambda b: self.shoot(b, death)))

    def shoot(self, board: Board, death: Death) -> None:
        action = board.take_prepared(death.player, "遗言枪")
        if action is None:
            board.need(death.player, "遗言枪", "请决定")
            return
        board.record(action, "枪", Outcome.DONE, "开枪", "toy:5", action.targets)
        board.card_out(action.targets[0], cause="枪", step="枪", rule="toy:5", source=death.player)


def toy_state() -> GameState:
    def p(name: str, first: str, second: str = "平民") -> PlayerState:
        return PlayerState(name, (CardState(f"{name}#1", first), CardState(f"{name}#2", second)))

    return GameState(
        "toy",
        Phase.setup(),
        (p("甲", "枪手"), p("乙", "平民"), p("丙", "枪手"), p("丁", "平民")),
        charges=tuple(Charge(f"{n}#{i}", "刺杀", 1) for n in "甲乙丙丁" for i in (1, 2)),
    )


def test_steps_run_by_key_whatever_order_the_plan_lists_them() -> None:
    acts = [Action("乙", "查看", ("丁",)), Action("甲", "标记", ("丁",))]
    for reverse in (False, True):
        _, report = resolve_night(toy_state(), acts, Toy(reverse=reverse))
        assert [r.action.skill for r in report.actions] == ["标记", "查看"]
        assert report.feedback[0].text == "丁有标记"


def test_simultaneous_step_reads_the_step_start_ordered_step_does_not() -> None:
    # 丙 looks at 乙 and 乙 looks at 丙: "查看" marks the looker. Simultaneous: neither sees a mark.
    acts = [Action("乙", "查看", ("丙",)), Action("丙", "查看", ("乙",))]
    _, report = resolve_night(toy_state(), acts, Toy(StepMode.SIMULTANEOUS))
    assert sorted(f.text for f in report.feedback) == ["丙没有标记", "乙没有标记"]
    # Ordered: 乙 (earlier seat) goes first and marks itself; 丙 then sees the mark on 乙.
    _, report = resolve_night(toy_state(), acts, Toy(StepMode.ORDERED))
    assert [f.text for f in report.feedback] == ["丙没有标记", "乙有标记"]


def test_redirect_trace_and_invalid_actions_are_reported_never_dropped() -> None:
    acts = [
        Action("甲", "换位", ("乙", "丁")),
        Action("丙", "刺杀", ("乙",)),
        Action("戊", "刺杀", ("乙",)),
        Action("乙", "刺杀", ("乙", "丁")),
        Action("丁", "飞行", ()),
    ]
    _, report = resolve_night(toy_state(), acts, Toy())
    by_actor = {r.action.actor: r for r in report.actions}
    stab = by_actor["丙"]
    assert stab.resolved_targets == ("丁",)
    assert stab.redirect_trace == ("换位：乙→丁（toy:4）",)
    assert (
        by_actor["戊"].outcome is Outcome.INVALID
        and "名单中没有玩家「戊」" in by_actor["戊"].reason
    )
    assert "须选择1名角色" in by_actor["乙"].reason
    assert (
        by_actor["丁"].outcome is Outcome.INVALID
        and "没有名为<飞行>的技能" in by_actor["丁"].reason
    )
    assert len(report.actions) == len(acts)
    assert [(d.player, d.card) for d in report.deaths] == [("丁", "平民")]


def test_triggers_insert_before_what_comes_next_and_nobody_dies_twice() -> None:
    # 乙 and 丁 stab 甲 (枪手) and 丙; 甲 shoots 丙: the shot lands before 丁's stab on 丙,
    # which then hits 丙's second card; 甲's stab on himself finds the first card already out.
    acts = [
        Action("乙", "刺杀", ("甲",)),
        Action("丁", "刺杀", ("丙",)),
        Action("甲", "遗言枪", ("丙",)),
        Action("丙", "遗言枪", ("丁",)),
    ]
    state, report = resolve_night(toy_state(), acts, Toy())
    assert [(d.player, d.card, d.cause) for d in report.deaths] == [
        ("甲", "枪手", "刺杀"),
        ("丙", "枪手", "枪"),
        ("丁", "平民", "枪"),
        ("丙", "平民", "刺杀"),
    ]
    assert report.complete
    uids = [d.card_uid for d in report.deaths]
    assert len(uids) == len(set(uids))
    assert not state.player("丙").alive and report.deaths[-1].player_out


def test_a_missing_decision_is_pending_not_guessed() -> None:
    _, report = resolve_night(toy_state(), [Action("乙", "刺杀", ("甲",))], Toy())
    assert not report.complete
    assert [(p.who, p.skill) for p in report.pending] == [("甲", "遗言枪")]
    assert report.to_dict()["complete"] is False


def test_card_out_twice_is_refused() -> None:
    board = Board(toy_state(), Toy(), Phase.night(0))
    first = board.card_out("乙", cause="a", step="s", rule="r", bound_uid="乙#1")
    again = board.card_out("乙", cause="b", step="s", rule="r", bound_uid="乙#1")
    assert first is not None and again is None
    assert board.events[-1].result == "乙的平民已出局，不再结算"
    board.card_out("乙", cause="c", step="s", rule="r")
    assert board.card_out("乙", cause="d", step="s", rule="r") is None
    assert [d.cause for d in board.deaths] == ["a", "c"]


def test_attacks_meet_defences_in_order_and_the_first_that_blocks_wins() -> None:
    board = Board(toy_state(), Toy(), Phase.night(1))
    used: list[str] = []

    def one(name: str, blocks: bool) -> Defence:
        def check(b: Board, a: Attack) -> bool:
            used.append(name)
            return blocks

        return Defence(name, f"toy:{name}", check)

    attack = Attack("刺杀", "乙", "甲", "结算", "toy:3")
    assert (
        resolve_attack(board, attack, [one("盾", False), one("命", True), one("药", True)]) == "命"
    )
    assert used == ["盾", "命"]
    assert resolve_attack(board, attack, [one("盾", False)]) is None
    assert [e.checked for e in board.events] == ["盾", "命", "盾"]


def test_actions_are_put_in_one_order_and_the_result_does_not_depend_on_input_order() -> None:
    acts = [
        Action("乙", "刺杀", ("甲",)),
        Action("丁", "刺杀", ("丙",)),
        Action("甲", "遗言枪", ("丙",)),
        Action("甲", "标记", ("丁",)),
        Action("丙", "查看", ("丁",)),
    ]
    rnd = random.Random(7)
    base_state, base = resolve_night(toy_state(), acts, Toy())
    for _ in range(5):
        shuffled = rnd.sample(acts, len(acts))
        assert canonical_actions(shuffled) == canonical_actions(acts)
        state, report = resolve_night(toy_state(), shuffled, Toy())
        assert state == base_state and report.to_dict() == base.to_dict()


def test_seeded_choice_is_reproducible() -> None:
    living = ["甲", "乙", "丙", "丁"]
    picks = {seeded_choice("game:甲:2026-12-02T20:00:00+08:00", living) for _ in range(5)}
    assert len(picks) == 1 and picks <= set(living)
    spread = {seeded_choice(f"seed-{i}", living) for i in range(40)}
    assert spread == set(living)
    with pytest.raises(EngineError):
        seeded_choice("x", [])


def test_rule_sets_without_an_engine_say_so() -> None:
    from engine.rulesets.base import Ruleset

    class VotesOnly(Ruleset):
        id = "votes-only"

    with pytest.raises(EngineError, match="夜晚结算尚未实现"):
        VotesOnly().setup_state([("甲", ["狼人"])])


def test_report_contract_fields() -> None:
    _, report = resolve_night(toy_state(), [Action("乙", "刺杀", ("丁",))], Toy())
    data = report.to_dict()
    for key in ("deaths", "feedback", "public", "statuses", "winner", "log"):
        assert key in data
    assert set(data["deaths"][0]) >= {"player", "card", "cause", "step"}
    assert set(data["log"][0]) >= {"phase", "step", "rule", "actor", "chosen", "resolved", "result"}
    assert set(data["actions"][0]) >= {
        "actor",
        "skill",
        "chosen_targets",
        "resolved_targets",
        "redirect_trace",
        "outcome",
        "reason",
    }
    json.dumps(data, ensure_ascii=False)


def test_day_input_round_trip() -> None:
    day = DayInput(
        2,
        out="甲",
        voters=("乙", "甲"),
        actions=(Action("甲", "装傻", choice="放弃"),),
        decided_by="唯一最高票",
        rule="m135.txt:50",
    )
    assert DayInput.from_dict(json.loads(json.dumps(day.to_dict()))) == day
    assert day.voters == ("乙", "甲") or day.voters == tuple(sorted(("乙", "甲")))
    assert Action("甲", "装傻", choice="放弃").declined


def test_phase_kinds() -> None:
    assert Phase.parse("setup").kind is PhaseKind.SETUP
