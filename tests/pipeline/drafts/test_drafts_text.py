"""The text a director reads and edits: a thread's first line keeps the title as written, the
vote thread's first post quotes the rule set's 投票格式, a waiting reply in a game whose threads
bansha opens says it waits for the thread, and urgency follows the length of the game's days."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from engine.rulesets import get_ruleset
from pipeline.drafts import Draft, DraftState, bbcode_escape, load_templates, newthread_specs
from pipeline.drafts.view import draft_urgency, where
from pipeline.game.gamefile import load_game

ROOT = Path(__file__).resolve().parents[3]
GAME = ROOT / "config" / "games" / "demo.toml"


def _managed():
    game = load_game(GAME)
    return game.model_copy(
        update={
            "forum": game.forum.model_copy(update={"fid": 2}),
            "days": [
                d.model_copy(update={"discussion": None, "vote": None, "progress": None})
                for d in game.days
            ],
        }
    )


def test_a_bracket_that_can_start_no_tag_is_left_as_written() -> None:
    assert bbcode_escape("[M135]『让子弹飞』") == "[M135]『让子弹飞』"
    assert bbcode_escape("[正午]") == "[正午]"
    # what can open or close a tag is still broken
    assert bbcode_escape("[color=red]x[/color]") == "[[b][/b]color=red]x[[b][/b]/color]"
    assert bbcode_escape("[*]") == "[[b][/b]*]"
    assert bbcode_escape("名字[b") == "名字[[b][/b]b"  # the template's "]" must not close it


def test_the_new_threads_first_line_and_the_vote_format() -> None:
    game = _managed()
    day = game.day(1)
    specs = newthread_specs(
        game, as_of=day.opens - timedelta(minutes=5), templates=load_templates()
    )
    by_role = {s.role: s for s in specs}
    first = by_role["discussion"].body.splitlines()[0]
    assert first == "[b][M135]『让子弹飞』 第1天 讨论帖[/b]"
    vote = by_role["vote"].body
    # m135.txt:207-210 【投票格式】投票对象：饺子 【改票格式】改票须回复原投票楼层 改票对象：包子
    assert "（《让子弹飞》规则 · 投票格式）" in vote
    quoted = "【投票格式】\n投票对象：饺子\n【改票格式】改票须回复原投票楼层\n改票对象：包子"
    assert f"[quote]\n{quoted}\n[/quote]" in vote
    assert "规则帖中的投票格式" not in vote


def test_every_rule_set_with_a_format_quotes_its_own() -> None:
    # nizhuan.txt:196 投票对象：傻树的第一身份 — a vote names a card
    assert "投票对象：傻树的第一身份" in get_ruleset("nizhuan").vote_format
    assert "投票理由：饺子好吃" in get_ruleset("m209").vote_format  # m209.txt:604
    assert get_ruleset("tubian24").vote_format == ""  # its text gives none


def test_the_progress_thread_offers_only_what_the_rule_set_allows() -> None:
    # m135.txt:197 未出局角色可于白天在进程帖中申请加速或延时
    game = _managed()
    day = game.day(1)
    specs = newthread_specs(
        game, as_of=day.opens - timedelta(minutes=5), templates=load_templates()
    )
    progress = {s.role: s for s in specs}["progress"].body
    assert "申请加速或延时" in progress
    # tubian24.txt:330 每名玩家都有拥有在进程帖内提议进程加速的权利 — and no 延时
    example = load_game(ROOT / "config" / "games" / "tubian24.toml")
    game = example.model_copy(
        update={
            "forum": example.forum.model_copy(update={"fid": 2}),
            "days": [d.model_copy(update={"progress": None}) for d in example.days],
        }
    )
    day = game.day(1)
    specs = newthread_specs(
        game, as_of=day.opens - timedelta(minutes=5), templates=load_templates()
    )
    progress = {s.role: s for s in specs}["progress"].body
    assert "申请加速（本规则没有延时）" in progress
    assert "加速或延时" not in progress


def _draft(kind: str, tid: int | None, **kw: object) -> Draft:
    return Draft(
        1, kind, 2, f"{kind}:d2", tid, kw.pop("action", "reply"), None, "", "x", "", "x",  # type: ignore[arg-type]
        DraftState.PENDING, None, "", "", None, None, None, None, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def test_a_reply_without_a_thread_waits_for_the_one_bansha_opens() -> None:
    d = _draft("day_open", None)
    assert "帖子尚未开出" in where(d, _managed()) and "手动发帖" not in where(d, _managed())
    assert "手动发帖" in where(d, load_game(GAME))  # no [forum] fid: the director posts it


def test_urgency_follows_the_length_of_the_day() -> None:
    """Two-hour days: a new thread 38 minutes ahead is not 紧急 (a quarter of the day is 30
    minutes), 20 minutes ahead it is; twelve-hour days keep 3 hours."""
    game = load_game(GAME)
    day = game.day(2)
    short = game.model_copy(
        update={
            "days": [
                d.model_copy(update={"closes": d.opens + timedelta(hours=2)}) for d in game.days
            ]
        }
    )
    thread = _draft(
        "newthread", None, action="newthread", subject="s",
        not_before=day.opens.isoformat(), role="vote",
    )  # fmt: skip
    ahead = day.opens - timedelta(minutes=38)
    assert not draft_urgency(short, thread, ahead).urgent
    soon = day.opens - timedelta(minutes=20)
    assert draft_urgency(short, thread, soon).urgent
    assert draft_urgency(game, thread, ahead).urgent  # 12 h days: within 3 h
