"""狼人真言's inquiry thread (询问贴) on the simulator: question counts, the sheriff's
answers naming their question, and answers to questions that are not taken."""

from __future__ import annotations

from typing import Any

from parsers.inquiry import Answer, parse_inquiry
from pipeline.derive.inquiry import inquiry_days
from pipeline.sim.simulator import ForumSim
from tests.pipeline.derive.test_inquiry_flow import at, crawl, world  # noqa: F401  (fixture)


def test_a_guess_without_its_question_mark_still_counts_beside_a_question() -> None:
    # zhenyan.txt:165 每名角色每天可以在询问贴向警长询问3次问题; the guess is one of them
    # (docs/rulings.md 猜词算一次询问; its question mark may be left out, zhenyan.txt:168 read)
    assert parse_inquiry("【第一个词语是风扇吗】你是预言家吗？").questions == 2
    assert parse_inquiry("【第一个词语是风扇吗】？你是预言家吗？").questions == 2
    assert parse_inquiry("【第一个词语是风扇吗？】你是预言家吗？").questions == 2
    assert parse_inquiry("【第一个词语是风扇吗？】").questions == 1
    assert parse_inquiry("【第一个词语是风扇吗】？").questions == 1


def test_the_fourth_inquiry_is_refused_when_a_guess_has_no_question_mark(
    world: dict[str, Any],  # noqa: F811
) -> None:
    # zhenyan.txt:147 每名角色一天只能询问3次
    sim: ForumSim = world["sim"]
    sim.add_post(2024, "麻花", "你是预言家吗？", at(1))
    p2 = sim.add_post(2024, "麻花", "【第三个词语是千纸鹤吗】饺子是狼人阵营吗？", at(2))
    p3 = sim.add_post(2024, "麻花", "包子是狼吗？", at(3))
    crawl(world)
    (d2,) = [d for d in inquiry_days(world["game"], world["store"], as_of=at(11.5)) if d.day == 2]
    items = {i.pid: i for i in d2.items}
    assert items[p2].questions == 2
    assert not items[p3].accepted  # the 4th question of the day


def test_an_answer_naming_its_player_is_paired(world: dict[str, Any]) -> None:  # noqa: F811
    # zhenyan.txt:109 用是/否/不知道这三个回答之一回复在询问贴中提出问题的角色;
    # docs/rulings.md: 写明问题（“5楼：是”“@饺子 否”）
    sim: ForumSim = world["sim"]
    q1 = sim.add_post(2024, "汤圆", "你是预言家吗？", at(1))
    q2 = sim.add_post(2024, "麻花", "饺子是狼人阵营吗？", at(1.5))
    sim.add_post(2024, "粽子", "@汤圆 否（凑字数）", at(2))
    sim.add_post(2024, "粽子", "@麻花 是\n@汤圆 不知道", at(2.5))
    crawl(world)
    (d2,) = [d for d in inquiry_days(world["game"], world["store"], as_of=at(11.5)) if d.day == 2]
    items = {i.pid: i for i in d2.items}
    assert items[q2].answer is Answer.YES
    assert items[q1].answer is Answer.NO
    assert d2.unanswered == ()


def test_the_sheriff_answering_a_refused_question_is_shown(
    world: dict[str, Any],  # noqa: F811
) -> None:
    # zhenyan.txt:147 每名角色一天只能询问3次 — the 4th is not to be answered
    sim: ForumSim = world["sim"]
    for i in range(3):
        sim.add_post(2024, "麻花", f"问题{i}是吗？", at(1 + i / 10))
    q4 = sim.add_post(2024, "麻花", "饺子是狼人阵营吗？", at(2))
    a4 = sim.add_post(2024, "粽子", "是（凑字数）", at(3), quote_pid=q4)
    crawl(world)
    (d2,) = [d for d in inquiry_days(world["game"], world["store"], as_of=at(11.5)) if d.day == 2]
    assert any(f.pid == a4 and f.who == "粽子" for f in d2.flags), d2.flags


def test_one_post_answering_several_questions_is_no_bad_answer(
    world: dict[str, Any],  # noqa: F811
) -> None:
    # docs/rulings.md 询问与猜词: 一帖回答多个问题时，每行须按顺序对应一个引用，或写明问题
    # （“5楼：是”“@饺子 否”）— the form bansha accepts is not 回复指定三种回答以外的内容
    # (zhenyan.txt:291)
    from pipeline.derive import derive

    sim: ForumSim = world["sim"]
    q1 = sim.add_post(2024, "汤圆", "你是预言家吗？", at(1))
    q2 = sim.add_post(2024, "麻花", "饺子是狼人阵营吗？", at(1.5))
    both = sim.quote_for(q1, at=at(2)) + "\n" + sim.quote_for(q2, at=at(2)) + "\n\n是\n否"
    sim.add_post(2024, "粽子", both, at(2))
    floors = sim.add_post(2024, "粽子", "2楼：不知道\n3楼：是", at(2.5))
    crawl(world)
    game, store = world["game"], world["store"]
    (d2,) = [d for d in inquiry_days(game, store, as_of=at(11.5)) if d.day == 2]
    items = {i.pid: i for i in d2.items}
    assert (items[q1].answer, items[q2].answer) == (Answer.YES, Answer.NO)  # paired
    assert not [f for f in d2.flags if f.who == "粽子"]
    flags = [f for f in derive(game, store, as_of=at(11.5)).flags if f.player == "粽子"]
    assert not [f for f in flags if f.kind.value == "sheriff-answer"], [
        (f.reason, [e.pid for e in f.evidence]) for f in flags
    ]
    del floors


def test_the_limit_flag_names_only_the_posts_the_thread_refused(
    world: dict[str, Any],  # noqa: F811
) -> None:
    # docs/rulings.md#zhenyan-inquiry-limit: 一帖询问只有在其全部问题都能放进当天剩余的
    # 3 次中时才回答
    from pipeline.derive import derive

    sim: ForumSim = world["sim"]
    sim.add_post(2024, "麻花", "你是预言家吗？他是狼吗？", at(1))
    big = sim.add_post(2024, "麻花", "饺子是狼人阵营吗？包子是长老吗？", at(2))  # 2 + 2 > 3
    last = sim.add_post(2024, "麻花", "春卷是好人吗？", at(3))  # 2 + 1 = 3: answered
    crawl(world)
    game, store = world["game"], world["store"]
    (d2,) = [d for d in inquiry_days(game, store, as_of=at(11.5)) if d.day == 2]
    items = {i.pid: i for i in d2.items}
    assert not items[big].accepted and items[last].accepted
    (flag,) = [
        f for f in derive(game, store, as_of=at(11.5)).flags if f.kind.value == "inquiry-limit"
    ]
    assert flag.reason.endswith("（超出的在3楼）"), flag.reason  # not the answered 4楼


def test_a_question_after_the_close_is_not_over_the_limit(
    world: dict[str, Any],  # noqa: F811
) -> None:
    # zhenyan.txt:188 逾期则今天不再能询问问题 — refused as late, not counted against the 3
    from pipeline.derive import derive

    sim: ForumSim = world["sim"]
    for i in range(3):
        sim.add_post(2024, "麻花", f"问题{i}是吗？", at(1 + i / 10))
    sim.add_post(2024, "麻花", "春卷是好人吗？", at(11.2))  # after the 21:00 close
    crawl(world)
    game, store = world["game"], world["store"]
    flags = [
        f.reason
        for f in derive(game, store, as_of=at(11.5)).flags
        if f.kind.value == "inquiry-limit"
    ]
    assert flags == [], flags


def test_an_answer_with_no_question_is_shown_to_the_director(
    world: dict[str, Any],  # noqa: F811
) -> None:
    # an answer bansha cannot pair is said, not dropped (the question then reads 未回答)
    sim: ForumSim = world["sim"]
    sim.add_post(2024, "汤圆", "你是预言家吗？", at(1))
    lone = sim.add_post(2024, "粽子", "是（凑字数）", at(2))
    ghost = sim.add_post(2024, "粽子", "@月饼 否（凑字数）", at(2.5))
    crawl(world)
    (d2,) = [d for d in inquiry_days(world["game"], world["store"], as_of=at(11.5)) if d.day == 2]
    flagged = {f.pid for f in d2.flags if f.who == "粽子" and "无法确定" in f.text}
    assert flagged == {lone, ghost}
