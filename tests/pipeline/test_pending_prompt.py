"""A pending decision's prompt: the engine's data, the commands filled in by the pipeline."""

from __future__ import annotations

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
)
from pipeline.game.pending import pending_prompt, pending_record


def test_every_slot_is_filled_with_the_command_for_the_game_file() -> None:
    p = Pending(
        "饺子",
        "最后一枪",
        f"（{RECORD}，或 {CHOICE}）（{RECORD_PHASE} 或 {RECORD_NIGHT}）（{SKILL}）（{RESOLVE}）",
        phase="day",
        number=2,
        target="目标",
        choices=("放弃",),
        night=2,
    )
    record = pending_record(p, "demo.toml")
    assert record["prompt"] == (
        "（bansha day add demo.toml --day 2 --actor 饺子 --skill 最后一枪 --target 目标，"
        "或 --choice 放弃）（bansha day add demo.toml --day 2 或 bansha night add demo.toml "
        "--night 2）（--skill 最后一枪 --target 目标）（bansha day resolve demo.toml --day 2）"
    )
    assert record["template"] == p.prompt
    assert pending_prompt(record, "我的.toml").startswith("（bansha day add 我的.toml --day 2")


def test_a_decision_without_a_target_names_none() -> None:
    p = Pending(
        "包子", "装傻", f"（{RECORD}，或 {CHOICE}）", phase="night", number=3, choices=("放弃",)
    )
    assert pending_record(p)["prompt"] == (
        "（bansha night add GAME.toml --night 3 --actor 包子 --skill 装傻，或 --choice 放弃）"
    )


def test_an_out_is_recorded_at_its_time_when_the_engine_knows_it() -> None:
    p = Pending("戊", "正午出局", f"（{RECORD_OUT}）", number=2, at="2026-12-02T12:30:00+08:00")
    assert pending_record(p, "m209.toml")["prompt"] == (
        "（bansha player out m209.toml --player 戊 --at 2026-12-02T12:30:00+08:00 "
        "--cause 第2天正午出局）"
    )
    # without the time the director writes it in
    unknown = pending_record(Pending("戊", "正午出局", f"（{RECORD_OUT}）", number=2))
    assert unknown["prompt"] == (
        "（bansha player out GAME.toml --player 戊 --at 出局时间 --cause 第2天正午出局）"
    )


def test_a_refused_record_is_taken_back_by_its_journal_number() -> None:
    p = Pending("包子", "殉职", f"先撤销这条记录（{UNDO}）", phase="night", number=1, undo="#7")
    record = pending_record(p, "demo.toml")
    assert record["prompt"] == "先撤销这条记录（bansha undo action demo.toml 7 --why 理由）"
    assert record["undo"] == "#7"


def test_a_report_stored_before_decisions_were_data_keeps_its_text() -> None:
    old = {"who": "饺子", "skill": "殉职", "prompt": "（bansha day add GAME.toml --day 2 …）"}
    assert pending_prompt(old, "demo.toml") == "（bansha day add GAME.toml --day 2 …）"
