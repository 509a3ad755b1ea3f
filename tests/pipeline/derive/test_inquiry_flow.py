"""zhenyan's inquiry thread end to end on the simulator: players ask and guess, the sheriff
answers, bansha crawls, checks the guesses against the secret words, drafts the director's
answers and the 公示 of a word guessed correctly, lists what is unanswered at the close, and
never lets an unguessed word out."""

from __future__ import annotations

import json
import logging
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import pipeline.cli.engine  # noqa: F401  (registers the engine commands)
from engine.kernel import DayInput, resolve_day, resolve_night
from engine.rulesets import get_ruleset
from parsers.inquiry import Answer, InquiryKind
from pipeline.cli import cli
from pipeline.derive import derive
from pipeline.derive.inquiry import (
    InquiryError,
    guess_actions,
    inquiry_days,
    load_secrets,
    word_key,
)
from pipeline.discuz.client import DiscuzClient, RetryPolicy
from pipeline.discuz.crawl import Crawler, CrawlTarget, ForumConfig
from pipeline.drafts import inquiry_drafts, list_drafts, save_drafts
from pipeline.game.gamefile import GameFileError, parse_game
from pipeline.sim.simulator import ForumSim, SimClock
from pipeline.store import open_store

TZ = ZoneInfo("Asia/Shanghai")
D1 = datetime(2026, 12, 1, 10, 0, tzinfo=TZ)
D2 = datetime(2026, 12, 2, 10, 0, tzinfo=TZ)
ROSTER = [
    ("饺子", "狼王"),
    ("面条", "狼美人"),
    ("春卷", "石像鬼"),
    ("烧饼", "蚀时狼妃"),
    ("包子", "长老"),
    ("汤圆", "预言家"),
    ("烧卖", "守卫"),
    ("馄饨", "猎魔人"),
    ("粽子", "村民"),
    ("油条", "村民"),
    ("麻花", "村民"),
    ("月饼", "村民"),
]
USERS = {"导演": 100, **{name: 101 + i for i, (name, _c) in enumerate(ROSTER)}}
WORDS = ["风扇", "鹿目圆", "千羽", "摄梦人"]
SECRET_LEFT = ("千羽", "摄梦人")  # never guessed in these tests


def game_data(base_url: str, **zhenyan: Any) -> dict[str, Any]:
    return {
        "game": {
            "id": "zhenyan-inquiry",
            "title": "狼人真言",
            "ruleset": "zhenyan",
            "timezone": "Asia/Shanghai",
        },
        "forum": {"base_url": base_url, "min_interval_s": 0.0},
        "director": {"names": ["导演"], "uids": [100]},
        "players": [{"name": n, "uid": USERS[n], "cards": [c]} for n, c in ROSTER],
        "days": [
            {
                "day": 1,
                "opens": D1,
                "closes": D1 + timedelta(hours=12),
                "discussion": 2011,
                "vote": 2012,
                "inquiry": 2014,
            },
            {
                "day": 2,
                "opens": D2,
                "closes": D2 + timedelta(hours=12),
                "discussion": 2021,
                "vote": 2022,
                "inquiry": 2024,
            },
        ],
        "zhenyan": zhenyan or {"words": WORDS, "variants": {"2": ["小圆"]}},
    }


def at(hours: float) -> datetime:
    return D2 + timedelta(hours=hours)


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    clock = SimClock(D2 + timedelta(hours=11, minutes=30))
    sim = ForumSim(users=USERS, clock=clock, floodctrl_s=0)
    for tid, title in (
        (2011, "第一天讨论帖"),
        (2012, "第一天警长竞选帖"),
        (2014, "第一天询问帖"),
        (2021, "第二天讨论帖"),
        (2022, "第二天投票帖"),
        (2024, "第二天询问帖"),
    ):
        start = D1 if tid < 2020 else D2
        sim.add_thread(tid, title, "导演", f"【{title}】", start)
    # day 1: 粽子 is elected sheriff (zhenyan.txt:105)
    for i, name in enumerate(["饺子", "包子", "汤圆", "油条"]):
        sim.add_post(2012, name, "投票对象：粽子\n投票理由：竞选", D1 + timedelta(hours=1 + i))
    game = parse_game(game_data(sim.base_url), check_login=False)
    return {"sim": sim, "clock": clock, "game": game, "store": open_store(tmp_path / "g.db")}


def crawl(world: dict[str, Any]) -> None:
    sim: ForumSim = world["sim"]
    http = httpx.Client(transport=sim.transport(), timeout=httpx.Timeout(5.0))
    client = DiscuzClient(
        http,
        base_url=sim.base_url,
        min_interval_s=0,
        policy=RetryPolicy(max_attempts=3, initial_wait_s=0.01, jitter_s=0),
        sleep=lambda s: None,
    )
    crawler = Crawler(client, world["store"], ForumConfig(base_url=sim.base_url, tz=TZ))
    targets = [CrawlTarget(tid, day, role) for day, role, tid in world["game"].thread_roles()]
    assert crawler.crawl(targets).ok


def play_day_2(world: dict[str, Any]) -> dict[str, int]:
    sim: ForumSim = world["sim"]
    pids: dict[str, int] = {}
    # zhenyan.txt:168 【第X个词语是XX吗？】 — a correct guess, the first of word 1
    pids["汤圆"] = sim.add_post(2024, "汤圆", "【第一个词语是风扇吗？】", at(1))
    # the director's variant of word 2, written with full-width brackets and spaces
    pids["面条"] = sim.add_post(2024, "面条", "【第２个词语是「 小 圆 」吗？】", at(1.5))
    # zhenyan.txt:165 如：第一个词语是名词吗？ — the rule's example of an ordinary question
    pids["面条2"] = sim.add_post(2024, "面条", "第一个词语是名词吗？", at(1.6))
    # word 1 again: correct, but it counts once (no second 公示)
    pids["油条"] = sim.add_post(2024, "油条", "[第1个词语是风 扇吗]", at(2))
    # a wrong guess
    pids["麻花1"] = sim.add_post(2024, "麻花", "【第三个词语是千纸鹤吗？】", at(2.5))
    pids["麻花2"] = sim.add_post(2024, "麻花", "你是预言家吗？", at(3))
    pids["麻花3"] = sim.add_post(2024, "麻花", "饺子是狼人阵营吗？", at(3.5))
    # zhenyan.txt:165 每名角色每天可以在询问贴向警长询问3次问题 — the 4th is not answered
    pids["麻花4"] = sim.add_post(2024, "麻花", "【第四个词语是千羽吗？】", at(4))
    # zhenyan.txt:188 询问贴会比正常讨论和投票贴提前1小时关闭
    pids["月饼"] = sim.add_post(2024, "月饼", "春卷是好人吗？", at(11.2))
    # the sheriff answers 汤圆 and 麻花's 2nd question (zhenyan.txt:166 是/否/不知道)
    sim.add_post(2024, "粽子", "是（凑字数）", at(5), quote_pid=pids["汤圆"])
    sim.add_post(2024, "粽子", "不知道……凑字数", at(5.2), quote_pid=pids["麻花2"])
    # … and once with other words (zhenyan.txt:291)
    sim.add_post(2024, "粽子", "否，他肯定是狼", at(5.4), quote_pid=pids["麻花3"])
    # zhenyan.txt:109 也不能在询问贴中提问，猜词 — the sheriff guesses, then asks
    pids["粽子猜"] = sim.add_post(2024, "粽子", "第1个词语是风扇吗？", at(5.6))
    pids["粽子问"] = sim.add_post(2024, "粽子", "九月是狼吗？", at(5.8))
    # zhenyan.txt:109 成为警长的角色不能在讨论贴发言
    sim.add_post(2021, "粽子", "大家好我是警长", at(6))
    return pids


def test_the_inquiry_thread_end_to_end(world: dict[str, Any], caplog) -> None:  # type: ignore[no-untyped-def]
    caplog.set_level(logging.DEBUG)
    pids = play_day_2(world)
    crawl(world)
    game, store = world["game"], world["store"]
    as_of = at(11.5)  # after the inquiry close (21:00), before the day's close
    days = inquiry_days(game, store, as_of=as_of)
    assert [d.day for d in days] == [1, 2]
    d2 = days[1]
    assert d2.sheriff == "粽子" and d2.closed
    items = {i.pid: i for i in d2.items}

    # the director's feedback comes first (zhenyan.txt:168 导演需要先反馈猜测是否正确)
    assert items[pids["汤圆"]].director_answer == "猜测正确"
    assert items[pids["面条"]].director_answer == "猜测正确"  # the accepted variant
    assert items[pids["油条"]].director_answer == "猜测正确"
    assert items[pids["麻花1"]].director_answer == "猜测错误"
    assert items[pids["麻花2"]].director_answer is None  # an ordinary question
    # the rule's example question is answered by the sheriff alone, no 猜测错误
    assert items[pids["面条2"]].kind is InquiryKind.QUESTION
    assert items[pids["面条2"]].director_answer is None and items[pids["面条2"]].accepted
    # a correct word counts once: 汤圆 first guessed word 1, 面条 word 2
    assert d2.guessed == (1, 2)
    assert [g.first for g in items[pids["油条"]].guesses] == [False]

    # zhenyan.txt:165 the 4th question is flagged and not answered
    assert not items[pids["麻花4"]].accepted
    assert items[pids["麻花4"]].director_answer is None
    flags = {(f.who, f.rule): f for f in d2.flags}
    assert "超出每天3次" in flags[("麻花", "zhenyan.txt:165")].text
    # zhenyan.txt:188 after the close
    assert not items[pids["月饼"]].accepted
    assert ("月饼", "zhenyan.txt:188") in flags
    # the limits come from the rule set's InquiryRules (engine/rulesets/zhenyan.py), as worded
    assert flags[("月饼", "zhenyan.txt:188")].text.endswith(
        "关闭（讨论日结束前1小时），逾期的询问不再受理"
    )
    assert flags[("麻花", "zhenyan.txt:165")].text.endswith("超出每天3次，不予回答")
    # the sheriff: answers paired through the quote link; other words and the discussion post
    assert items[pids["汤圆"]].answer is Answer.YES
    assert items[pids["麻花2"]].answer is Answer.UNKNOWN
    assert ("粽子", "zhenyan.txt:166, zhenyan.txt:291") in flags
    assert ("粽子", "zhenyan.txt:109, zhenyan.txt:291") in flags
    # the sheriff's guess and question are said to be that, not a bad answer (zhenyan.txt:109)
    sheriff = {f.pid: f.text for f in d2.flags if f.who == "粽子"}
    assert sheriff[pids["粽子猜"]] == "警长不能在询问帖猜词（咒语反噬），猜词不计"
    assert sheriff[pids["粽子问"]] == "警长不能在询问帖提问（咒语反噬）"
    conduct = {
        f.kind.value: f for f in derive(game, store, as_of=as_of).flags if f.player == "粽子"
    }
    assert {e.pid for e in conduct["sheriff-inquiry"].evidence} == {pids["粽子猜"], pids["粽子问"]}
    bad_answers = {e.pid for e in conduct["sheriff-answer"].evidence}  # 否，他肯定是狼 only
    assert len(bad_answers) == 1 and not bad_answers & {pids["粽子猜"], pids["粽子问"]}
    # unanswered at the close, for the director
    unanswered = {i.pid for i in d2.unanswered}
    assert unanswered == {pids["面条"], pids["面条2"], pids["油条"], pids["麻花1"]}
    summary = "\n".join(d2.summary())
    assert "关门时未回答" in summary

    # drafts: the answers to the guesses, then the 公示 of each word first guessed
    specs = inquiry_drafts(game, days)
    answers = next(s for s in specs if s.key == "inquiry_answers:d2")
    assert answers.tid == 2024
    assert answers.body.count("猜测正确") == 3 and answers.body.count("猜测错误") == 1
    assert f"pid={pids['汤圆']}" in answers.body
    reveals = {s.key: s for s in specs if s.key.startswith("inquiry_reveal")}
    assert set(reveals) == {"inquiry_reveal:d2:w1", "inquiry_reveal:d2:w2"}
    assert reveals["inquiry_reveal:d2:w1"].tid == 2021  # the discussion thread (zhenyan.txt:31)
    assert "第1个真言词语：[b]风扇[/b]" in reveals["inquiry_reveal:d2:w1"].body
    assert "鹿目圆" in reveals["inquiry_reveal:d2:w2"].body
    assert "鹿目圆" not in answers.body and "风扇" not in answers.body.replace("风扇吗", "")

    # secrets never leak: not in drafts, flags, summary, logs
    everything = "\n".join(
        [*(s.body for s in specs), summary, *(r.getMessage() for r in caplog.records)]
    )
    for word in SECRET_LEFT:
        assert word not in everything.replace("千羽吗", "").replace("千纸鹤", ""), word

    # the drafts are stored like any other
    now = as_of
    assert save_drafts(store, specs, now=now)
    assert {d.key for d in list_drafts(store)} >= {"inquiry_answers:d2", "inquiry_reveal:d2:w1"}

    # once the director has posted the answers, they are not drafted again
    world["sim"].add_post(2024, "导演", answers.body, at(11.6))
    world["clock"].set(at(11.7))
    crawl(world)
    again = inquiry_drafts(game, inquiry_days(game, store, as_of=at(11.8)))
    assert not any(s.key == "inquiry_answers:d2" for s in again)
    assert {s.key for s in again} == set(reveals)

    # the engine counts the words for the win check (zhenyan.txt:127)
    actions = guess_actions(days)
    assert [a.choice for a in actions[2]] == ["1", "2"]
    rs = get_ruleset("zhenyan")
    state = rs.setup_state([(n, [c]) for n, c in ROSTER])
    state, _ = resolve_night(state, [], rs, night=0)
    state, _ = resolve_day(state, DayInput(day=1, elected="粽子", sheriff_election=True), rs)
    state, _ = resolve_night(state, [], rs, night=1)
    state, report = resolve_day(state, DayInput(day=2, actions=tuple(actions[2])), rs)
    assert sum(1 for s in state.statuses if s.kind == "真言猜中") == 2
    assert report.winner is None


def test_word_keys_fold_width_spaces_and_punctuation() -> None:
    # zhenyan.txt:176 标点符号不区分全半角 (read the same way for guesses)
    assert word_key("ＡＢＣ 风扇！") == word_key("abc风扇") == "abc风扇"
    assert word_key("「鹿目 圆」") == "鹿目圆"


def test_a_bad_secret_table_is_reported_without_its_words(world: dict[str, Any]) -> None:
    sim: ForumSim = world["sim"]
    # the game file itself refuses the table (nothing runs on a half-valid file) …
    with pytest.raises(GameFileError) as bad_file:
        parse_game(game_data(sim.base_url, words=["风扇", "千羽"]), check_login=False)
    assert "zhenyan" in str(bad_file.value) and "words" in str(bad_file.value)
    assert "风扇" not in str(bad_file.value) and "千羽" not in str(bad_file.value)
    # … and so does the inquiry flow, for a Game built otherwise
    game = world["game"].model_copy(update={"secrets": {"words": ["风扇", "千羽"]}})
    with pytest.raises(InquiryError) as err:
        load_secrets(game)
    assert "words" in str(err.value)
    assert "风扇" not in str(err.value) and "千羽" not in str(err.value)
    assert "风扇" not in repr(load_secrets(world["game"]))


@given(st.text(alphabet="风扇鹿目圆千羽摄梦人abcXYZ123", min_size=1, max_size=8), st.data())
def test_width_spaces_and_punctuation_never_change_a_guess(word: str, data: st.DataObject) -> None:
    # zhenyan.txt:176 标点符号不区分全半角 — and spaces or punctuation around a guess do not count
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)
    noisy = "".join(c + data.draw(st.sampled_from(["", " ", "，", "！", "　", "·"])) for c in wide)
    assert word_key(noisy) == word_key(word) == word_key(word_key(word))


def test_the_cycle_drafts_the_inquiry_answers_and_the_reveal(world: dict[str, Any]) -> None:
    """A cycle's drafting step (make_drafts) includes the zhenyan inquiry drafts."""
    from pipeline.derive import derive
    from pipeline.drafts import list_drafts, make_drafts

    play_day_2(world)
    crawl(world)
    game, store = world["game"], world["store"]
    as_of = at(11.5)
    make_drafts(game, store, derive(game, store, as_of=as_of), now=as_of)
    keys = {d.key for d in list_drafts(store)}
    assert "inquiry_answers:d2" in keys
    assert any(k.startswith("inquiry_reveal:d2:w1") for k in keys)
    again = make_drafts(game, store, derive(game, store, as_of=as_of), now=as_of)
    assert again == []  # nothing new: nothing drafted


# --------------------------------------------------------------------------- day resolve


def toml_file(path: Path, data: dict[str, Any]) -> Path:
    """``data`` (as :func:`game_data` builds it) written as the director's TOML file."""

    def value(v: Any) -> str:
        if isinstance(v, datetime):
            return v.isoformat()
        return json.dumps(v, ensure_ascii=False)

    lines: list[str] = []
    for table in ("game", "forum", "director"):
        lines += [f"[{table}]", *(f"{k} = {value(v)}" for k, v in data[table].items())]
    for p in data["players"]:
        lines += ["[[players]]", *(f"{k} = {value(v)}" for k, v in p.items())]
    for d in data["days"]:
        lines += ["[[days]]", *(f"{k} = {value(v)}" for k, v in d.items())]
    lines += ["[zhenyan]", f"words = {value(data['zhenyan']['words'])}"]
    variants = ", ".join(
        f"{json.dumps(k)} = {value(v)}" for k, v in data["zhenyan"]["variants"].items()
    )
    lines.append(f"variants = {{ {variants} }}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def cli_world(world: dict[str, Any], tmp_path: Path):  # type: ignore[no-untyped-def]
    """The same forum, with the game as a TOML file and the store at the CLI's ``--db``."""
    game_path = toml_file(tmp_path / "zhenyan.toml", game_data(world["sim"].base_url))
    db = tmp_path / "zhenyan.db"

    def run(*args: str) -> str:
        n = 2 if args[0] in ("night", "day") else 1
        result = CliRunner().invoke(cli, [*args[:n], str(game_path), "--db", str(db), *args[n:]])
        assert result.exit_code == 0, result.output
        for word in WORDS:
            assert word not in result.output, "a secret word leaked into the output"
        return result.output

    def crawl_all() -> None:
        crawl({**world, "store": open_store(db)})

    run("init")
    return {**world, "run": run, "crawl": crawl_all}


def to_day_2(cli_world: dict[str, Any]) -> None:
    run = cli_world["run"]
    cli_world["crawl"]()
    run("night", "resolve", "--night", "0")
    # zhenyan.txt:105 第一天投票结束后，最先获得投票数最多的角色当选警长 — 粽子
    out = run("day", "resolve", "--day", "1", "--as-of", (D1 + timedelta(hours=13)).isoformat())
    assert "粽子当选警长" in out
    run("night", "resolve", "--night", "1")
    # the 狼王 lets a village win stand (zhenyan.txt:70, 114)
    run("day", "add", "--day", "2", "--actor", "饺子", "--skill", "最后一招", "--choice", "放弃")


def post_four_guesses(sim: ForumSim, by: dict[int, str]) -> None:
    # zhenyan.txt:168 【第X个词语是XX吗？】 — the four words, each guessed correctly
    for i, (index, word) in enumerate(
        ((1, "风扇"), (2, "小圆"), (3, "千羽"), (4, "摄梦人")), start=1
    ):
        sim.add_post(2024, by[index], f"【第{index}个词语是{word}吗？】", at(i))


def guesses(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in data["actions"] if a["skill"] == "猜中"]


def test_day_resolve_counts_the_guesses_read_in_the_inquiry_thread(
    cli_world: dict[str, Any],
) -> None:
    # zhenyan.txt:127 四个真言咒语全部猜中，且长老没有出局 — the village wins, and the director
    # types none of the four: bansha reads them in the inquiry thread
    post_four_guesses(cli_world["sim"], {1: "汤圆", 2: "烧卖", 3: "油条", 4: "麻花"})
    to_day_2(cli_world)
    run = cli_world["run"]
    # 汤圆's guess recorded by hand as well: one guess, counted once
    run("day", "add", "--day", "2", "--actor", "汤圆", "--skill", "猜中", "--choice", "1")
    after = (D2 + timedelta(hours=13)).isoformat()
    data = json.loads(run("day", "resolve", "--day", "2", "--json", "--as-of", after))
    got = sorted((a["choice"], a["actor"], a["outcome"]) for a in guesses(data))
    assert got == [
        ("1", "汤圆", "done"),
        ("2", "烧卖", "done"),
        ("3", "油条", "done"),
        ("4", "麻花", "done"),
    ]
    read = {a["choice"]: a["ref"] for a in guesses(data)}
    assert read["2"].startswith("询问帖 pid ")  # read from the thread, not retyped
    assert data["winner"] == "村民阵营"
    assert data["win_rule"] == "zhenyan.txt:127"
    state = json.loads(run("state", "--json"))
    assert sorted(s["note"] for s in state["statuses"] if s["kind"] == "真言猜中") == [
        "1",
        "2",
        "3",
        "4",
    ]
    assert "全部一致" in run("state", "--verify")


def test_the_sheriffs_guesses_never_count(cli_world: dict[str, Any]) -> None:
    # zhenyan.txt:109 成为警长的角色……也不能在询问贴中提问，猜词 — read in the thread or recorded
    post_four_guesses(cli_world["sim"], dict.fromkeys(range(1, 5), "粽子"))
    to_day_2(cli_world)
    run = cli_world["run"]
    run("day", "add", "--day", "2", "--actor", "粽子", "--skill", "猜中", "--choice", "1")
    after = (D2 + timedelta(hours=13)).isoformat()
    data = json.loads(run("day", "resolve", "--day", "2", "--json", "--as-of", after))
    assert [(a["actor"], a["outcome"], a["rule"]) for a in guesses(data)] == [
        ("粽子", "invalid", "zhenyan.txt:109")
    ]
    assert guesses(data)[0]["reason"] == (
        "粽子是警长，不能在询问帖提问或猜词（咒语反噬），此次猜中不计入"
    )
    assert data["winner"] is None
    state = json.loads(run("state", "--json"))
    assert not [s for s in state["statuses"] if s["kind"] == "真言猜中"]


# --------------------------------------------------------------------------- what the director sees


def test_tally_and_why_show_the_inquiry_thread(cli_world: dict[str, Any]) -> None:
    """zhenyan.txt:188 a question after the inquiry close and the sheriff's answer to it are
    not taken; zhenyan.txt:147 what is still unanswered at the close — ``bansha tally`` and
    ``bansha why`` show both, each with its post's link, and never a secret word."""
    sim: ForumSim = cli_world["sim"]
    pids = play_day_2(cli_world)
    late = sim.add_post(2024, "粽子", "是（凑字数）", at(11.3), quote_pid=pids["月饼"])
    cli_world["crawl"]()
    run = cli_world["run"]
    when = ["--as-of", at(11.5).isoformat()]
    out = run("tally", "--day", "2", *when)
    lines = out.splitlines()
    assert "第2天询问帖（tid 2024）：12-02 21:00关闭（已关闭）；警长：粽子" in lines
    (moon,) = [x for x in lines if " 月饼 " in x]
    assert "月饼 1问 不受理：询问帖已于21:00关闭（讨论日结束前1小时），逾期的询问不再受理" in moon
    assert moon.endswith(f"pid={pids['月饼']}")
    (answer,) = [x for x in lines if "询问帖关闭后警长不允许继续回答" in x]
    assert answer.startswith("  ⚑ 粽子：") and answer.endswith(f"pid={late}")
    (limit,) = [x for x in lines if f"pid={pids['麻花4']}" in x]
    assert "不受理：当天已询问3次，本帖1问，超出每天3次，不予回答" in limit
    (tang,) = [x for x in lines if " 汤圆 " in x]
    assert "（第1问）受理：警长是；导演反馈：猜测正确" in tang
    at_close = lines.index("  询问帖关闭时仍未回答（警长需要在关门前回复）：")
    # (面条's 第一个词语是名词吗？ is an ordinary question, zhenyan.txt:165: the sheriff's too)
    unanswered = [lines[at_close + i].split()[:2] for i in (1, 2, 3, 4)]
    assert unanswered == [["面条", "3#"], ["面条", "4#"], ["油条", "5#"], ["麻花", "6#"]]
    assert "  本日猜中：第1个词语、第2个词语" in lines
    # the sheriff's other words are a conduct flag already: not repeated in the thread's list
    assert sum("否，他肯定是狼" in x for x in lines) == 1

    out = run("why", "--day", "2", "--player", "月饼", *when)
    assert "月饼 1问 不受理：询问帖已于21:00关闭" in out and f"pid={pids['月饼']}" in out
    assert "汤圆" not in out
    out = run("why", "--day", "2", "--player", "粽子", *when)
    assert "⚑ 粽子：询问帖关闭后警长不允许继续回答" in out and f"pid={late}" in out
    assert "询问帖关闭时仍未回答" in out  # the sheriff's to answer


def test_report_and_flags_show_the_inquiry_thread(
    cli_world: dict[str, Any], tmp_path: Path
) -> None:
    """The day report lists the inquiry thread as ``bansha tally`` does, and ``bansha flags``
    what in it needs the director (zhenyan.txt:165 the 4th question is not answered;
    zhenyan.txt:188 a question after the inquiry close is not taken); no secret word."""
    pids = play_day_2(cli_world)
    cli_world["crawl"]()
    run = cli_world["run"]
    when = ["--as-of", at(11.5).isoformat()]
    page = tmp_path / "day2.html"
    run("report", "--day", "2", "--html", str(page), *when)
    html = page.read_text(encoding="utf-8")
    assert '<section id="inquiry">' in html and "第2天询问帖（tid 2024）" in html
    assert "汤圆 1问（第1问）受理：警长是；导演反馈：猜测正确" in html
    assert f"pid={pids['麻花4']}" in html and "超出每天3次，不予回答" in html
    assert not any(word in html for word in WORDS)
    out = run("flags", "--day", "2", *when)
    lines = out.splitlines()
    assert "第2天询问帖（tid 2024）：12-02 21:00关闭（已关闭）；警长：粽子" in lines
    # the 4th question is a conduct flag of its own: listed once, with the flags
    assert sum(f"pid={pids['麻花4']}" in x for x in lines) == 1
    (moon,) = [x for x in lines if " 月饼 " in x]
    assert "不受理：询问帖已于21:00关闭" in moon
    assert "  询问帖关闭时仍未回答（警长需要在关门前回复）：" in lines
    assert not any(" 汤圆 " in x for x in lines)  # taken and answered: nothing to do
