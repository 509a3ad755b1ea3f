"""Votes and flags, never wrong: stored posts -> derive -> the
verdicts, flags and CLI output a director reads.

The game is the demo game file (m135, 12 players; day 2 = discussion 2011, vote 2012,
progress 2013, 10:00-22:00 on 2026-12-02) on a fresh store, with the posts written here.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.conduct import FlagKind
from engine.votes import BallotKind, VerdictStatus
from parsers.records import Mark, MarkKind, Post, PostState, ThreadPage
from pipeline.cli import cli
from pipeline.derive import derive
from pipeline.game.gamefile import load_game
from pipeline.store import open_store
from tests.engine.rule_text import says

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "config" / "games" / "demo.toml"
TZ = timezone(timedelta(hours=8))
UID = {
    name: 101 + i
    for i, name in enumerate(
        [
            "饺子",
            "包子",
            "馄饨",
            "面条",
            "烧卖",
            "汤圆",
            "春卷",
            "油条",
            "Snow_风",
            "粽子",
            "月饼",
            "麻花",
        ]
    )
}
DIRECTOR = ("导演", 100)
AFTER = "2026-12-03T09:00:00+08:00"
DAY4 = """
[[days]]
day = 4
opens = 2026-12-04T10:00:00+08:00
closes = 2026-12-04T22:00:00+08:00
discussion = 2031
vote = 2032
"""


def at(hour: int, minute: int = 0, day: int = 2) -> datetime:
    return datetime(2026, 12, day, hour, minute, tzinfo=TZ)


class Game:
    """The demo game file (optionally changed) and a fresh store beside it."""

    def __init__(self, tmp_path: Path, *, extra: str = "", strict: bool | None = None) -> None:
        tmp_path.mkdir(parents=True, exist_ok=True)
        text = DEMO.read_text(encoding="utf-8")
        if strict is not None:
            text += f"\n[votes]\nstrict_names = {'true' if strict else 'false'}\n"
        self.file = tmp_path / "g.toml"
        self.file.write_text(text + extra, encoding="utf-8")
        self.db = tmp_path / "g.db"
        open_store(self.db).close()
        self._pid = 5000

    def post(
        self,
        tid: int,
        who: str,
        when: datetime,
        text: str,
        *,
        quoted: tuple[int, ...] = (),
        marks: tuple[Mark, ...] = (),
        state: PostState = PostState.VISIBLE,
        floor: int | None = None,
    ) -> int:
        self._pid += 1
        uid = DIRECTOR[1] if who == DIRECTOR[0] else UID[who]
        post = Post(
            tid=tid,
            pid=self._pid,
            floor=floor if floor is not None else self._pid - 4990,
            author=who,
            uid=uid,
            posted_at=when,
            message_html=text,
            text=text,
            quoted_pids=quoted,
            marks=marks,
            state=state,
        )
        store = open_store(self.db)
        store.register_thread(tid, day=None, role=None)
        store.save_page(
            ThreadPage(tid=tid, page=1, total_pages=1, posts=(post,)),
            source="html",
            url=f"t{tid}",
            status=200,
            headers={},
            body=repr(post).encode(),
            fetched_at=when,
            ppp=None,
        )
        store.close()
        return self._pid

    def derive(self, as_of: str = AFTER):  # type: ignore[no-untyped-def]
        game = load_game(self.file, env={})
        store = open_store(self.db)
        try:
            return derive(game, store, as_of=datetime.fromisoformat(as_of))
        finally:
            store.close()

    def run(self, *args: str, code: int = 0) -> str:
        sub = args[0] == "vote" or (args[0] == "flags" and args[1] in ("confirm", "dismiss"))
        n = 2 if sub else 1
        cmd = [*args[:n], str(self.file), "--db", str(self.db), *args[n:]]
        result = CliRunner().invoke(cli, cmd)
        assert result.exit_code == code, result.output
        return result.output


def verdict(d, pid: int):  # type: ignore[no-untyped-def]
    return next(
        v for res in d.days.values() for v in res.all_verdicts if v.ballot.evidence.pid == pid
    )


# --------------------------------------------------------------------------- item 12: names


def test_a_name_with_invisible_or_fullwidth_characters_counts_and_is_flagged(tmp_path) -> None:
    """m135.txt:205 「投票对象有误的票无效」 — but 「饺\u200b子」 is 饺子 as the director sees it:
    with [votes] strict_names = false (the default) it counts and raises a flag to check."""
    g = Game(tmp_path)
    zw = g.post(2012, "包子", at(11), "投票对象：饺\u200b子\n投票理由：测试")
    fw = g.post(2012, "馄饨", at(11, 5), "投票对象：Ｓｎｏｗ_风\n投票理由：测试")
    d = g.derive()
    for pid, target in ((zw, "饺子"), (fw, "Snow_风")):
        v = verdict(d, pid)
        assert (v.status, v.counts_for) == (VerdictStatus.COUNTED, target)
        assert v.reason == f"有效票：投给{target}"  # public: nothing about the spelling
        assert "按「" in v.note  # the director's note says what was folded
    flags = {f.id: f for f in d.flags if f.kind is FlagKind.NAME_FOLDED}
    assert set(flags) == {f"d2-name-folded-包子-p{zw}", f"d2-name-folded-馄饨-p{fw}"}
    flag = flags[f"d2-name-folded-包子-p{zw}"]
    assert flag.kind.zh == "票中名字含不可见字符/全角字母"
    assert "「饺<U+200B>子」含不可见字符" in flag.reason and flag.card is None
    assert [e.pid for e in flag.evidence] == [zw]
    assert "全角字母/数字" in flags[f"d2-name-folded-馄饨-p{fw}"].reason


def test_strict_names_keeps_the_strict_reading(tmp_path) -> None:
    g = Game(tmp_path, strict=True)
    zw = g.post(2012, "包子", at(11), "投票对象：饺\u200b子\n投票理由：测试")
    lookalike = g.post(2012, "馄饨", at(11, 5), "投票对象：Snоw_风\n投票理由：测试")  # Cyrillic о
    d = g.derive()
    v = verdict(d, zw)
    assert v.status is VerdictStatus.INVALID
    assert v.reason.startswith("投票对象有误：「饺<U+200B>子」不在名单中，与「饺子」字形相近")
    assert not [f for f in d.flags if f.kind is FlagKind.NAME_FOLDED]
    # lookalikes from other scripts are never accepted, strict or not
    for strict in (True, False):
        d = Game(tmp_path / str(strict), strict=strict)
        d.post(2012, "馄饨", at(11, 5), "投票对象：Snоw_风\n投票理由：测试")
        assert all(v.status is VerdictStatus.INVALID for v in d.derive().day(2).verdicts)
    assert lookalike


# --------------------------------------------------------------------------- item 13: hidden


def test_hidden_text_is_a_flag_the_director_confirms_or_dismisses(tmp_path) -> None:
    """docs/rulings.md#hidden-text: text hidden by colour, size or [hide] is flagged, not
    trusted — the white vote line is not counted, and the post is flagged once."""
    rulings = (ROOT / "docs" / "rulings.md").read_text(encoding="utf-8")
    assert '<a id="hidden-text"></a>隐藏文字（白字、极小字、[hide]）中的投票行不予采信' in rulings
    g = Game(tmp_path)
    white = Mark(MarkKind.HIDDEN_COLOUR, "white", "投票对象：饺子")
    vote = g.post(2012, "包子", at(11), "大家再想想。\n投票对象：饺子", marks=(white,))
    tiny = Mark(MarkKind.TINY, "1", "悄悄话")
    chat = g.post(2011, "馄饨", at(12), "我觉得饺子可疑\n悄悄话", marks=(tiny,))
    d = g.derive()
    assert verdict(d, vote).status is VerdictStatus.INVALID and verdict(d, vote).ballot.hidden
    hidden = {f.id: f for f in d.flags if f.kind is FlagKind.HIDDEN_TEXT}
    assert set(hidden) == {f"d2-hidden-text-包子-p{vote}", f"d2-hidden-text-馄饨-p{chat}"}
    assert hidden[f"d2-hidden-text-包子-p{vote}"].rule == "docs/rulings.md#hidden-text"
    assert "投票帖" in hidden[f"d2-hidden-text-包子-p{vote}"].reason
    assert "（白字）" in hidden[f"d2-hidden-text-包子-p{vote}"].reason
    assert "（小字）" in hidden[f"d2-hidden-text-馄饨-p{chat}"].reason

    out = g.run("flags", "--day", "2", "--as-of", AFTER)
    assert f"[d2-hidden-text-包子-p{vote}]" in out
    assert "依据《bansha 规则解读》投票格式与名字" in out
    # no card of its own: the director names one to confirm, or dismisses it
    out = g.run("flags", "confirm", f"d2-hidden-text-包子-p{vote}", "--as-of", AFTER, code=1)
    assert "请用 --card 指定" in out
    out = g.run(
        "flags", "confirm", f"d2-hidden-text-包子-p{vote}", "--card", "蓝", "--as-of", AFTER
    )
    assert "包子 得到蓝牌" in out
    out = g.run(
        "flags", "dismiss", f"d2-hidden-text-馄饨-p{chat}", "--why", "装饰", "--as-of", AFTER
    )
    assert "已驳回" in out


# --------------------------------------------------------------------------- items 11, 14


def test_an_unresolved_change_is_judged_as_the_change_it_is(tmp_path) -> None:
    """m135.txt:204 「改票只允许一次。关门前一小时不允许改票或代投」 m135.txt:205 「投票对象有误的
    票无效」: a 改票 naming nobody is not a 格式错误 — it is a change, judged with every rule it
    breaks; a second change replying to the original floor is the second
    change (item 11)."""
    says("m135.txt:204", "关门前一小时不允许改票或代投")
    g = Game(tmp_path)
    vote = g.post(2012, "饺子", at(11), "投票对象：包子\n投票理由：测试")
    change = g.post(2012, "饺子", at(12), "改票对象：馄饨\n改票理由：测试", quoted=(vote,))
    again = g.post(2012, "饺子", at(13), "改票对象：面条\n改票理由：测试", quoted=(vote,))
    late = g.post(2012, "饺子", at(21, 30), "改票对象：鳗鱼\n改票理由：测试", quoted=(vote,))
    d = g.derive()
    assert verdict(d, change).status is VerdictStatus.COUNTED
    assert verdict(d, again).reason == "改票只允许进行一次，本次改票无效"
    v = verdict(d, late)
    assert v.ballot.kind is BallotKind.CHANGE and v.status is VerdictStatus.INVALID
    assert v.reason.startswith("改票只允许进行一次，本次改票无效；关门前1小时内不允许改票或代投；")
    assert "投票对象有误：「鳗鱼」不在名单中" in v.reason
    out = g.run("tally", "--day", "2", "--as-of", AFTER)
    line = next(x for x in out.splitlines() if "鳗鱼" in x)
    assert "改票→鳗鱼" in line and "格式错误" not in line and "关门前1小时" in line


def test_a_vote_for_someone_not_in_the_line_up_is_called_an_invalid_vote_as_in_the_console(
    tmp_path,
) -> None:
    """m135.txt:205 「投票对象有误的票无效」: the tally line calls it 无效票 (the console's and
    the report's word), not 格式错误 — the format was right, the name was not."""
    says("m135.txt:205", "投票对象有误的票无效")
    g = Game(tmp_path)
    wrong = g.post(2012, "饺子", at(11), "投票对象：鳗鱼\n投票理由：测试")
    v = verdict(g.derive(), wrong)
    assert v.status is VerdictStatus.INVALID and "「鳗鱼」不在名单中" in v.reason
    out = g.run("tally", "--day", "2", "--as-of", AFTER)
    line = next(x for x in out.splitlines() if "鳗鱼" in x)
    assert "无效票→鳗鱼" in line and "格式错误" not in line and "[无效]" in line


# --------------------------------------------------------------------------- item 15


def test_a_directors_post_in_vote_format_gets_an_ignored_verdict(tmp_path) -> None:
    """m135.txt:203 「投票帖可以申请由导演代发」: a 代投 names the player (代投：名字); the
    director's own vote line is not a vote, and it says so instead of disappearing."""
    g = Game(tmp_path)
    template = g.post(
        2012,
        "导演",
        at(10),
        "【第二天投票帖】格式：\n投票对象：XXX\n投票理由：XXX\n\n改票对象：XXX",
    )
    own = g.post(2012, "导演", at(11), "投票对象：饺子\n投票理由：替包子投")
    unknown = g.post(2012, "导演", at(11, 5), "代投：路人\n投票对象：饺子")
    proxy = g.post(2012, "导演", at(11, 10), "代投：包子\n投票对象：饺子")
    d = g.derive()
    pids = {v.ballot.evidence.pid for v in d.day(2).verdicts}
    assert template not in pids  # the opening post's format template is a notice
    v = verdict(d, own)
    assert (v.status, v.reason) == (VerdictStatus.IGNORED, "导演的帖子，不计票")
    assert "bansha vote proxy" in v.note and v.ballot.by_director
    v = verdict(d, unknown)
    assert v.status is VerdictStatus.IGNORED
    assert v.reason == "导演的帖子，不计票：代投的玩家「路人」不在名单中"
    v = verdict(d, proxy)
    assert (v.status, v.counts_for, v.ballot.voter) == (VerdictStatus.COUNTED, "饺子", "包子")
    out = g.run("tally", "--day", "2", "--as-of", AFTER)
    assert "导演的帖子，不计票〔导演备注：代投请用 bansha vote proxy" in out
    # the director is never flagged as a player who did not vote
    assert not [f for f in d.flags if f.player == "导演"]


# --------------------------------------------------------------------------- item 7


def test_director_notes_stay_out_of_the_public_reason(tmp_path) -> None:
    """Public text is public: "请导演…" and floor/pid details are the verdict's ``note``, shown
    by ``tally``/``why`` and in ``tally --json`` (a new field beside ``reason``)."""
    g = Game(tmp_path)
    hidden = g.post(2012, "包子", at(11), "", state=PostState.AUTHOR_ONLY)
    vote = g.post(2012, "饺子", at(11), "投票对象：包子\n投票理由：测试", floor=5)
    stray = g.post(2012, "饺子", at(12), "改票对象：馄饨\n改票理由：测试")  # no quote
    d = g.derive()
    v = verdict(d, hidden)
    assert v.reason.startswith("帖子内容不可读（仅作者可见），无法判定")
    assert "请导演" not in v.reason and "请导演查看原帖后代投" in v.note
    v = verdict(d, stray)
    assert v.reason == "改票未回复原投票楼层"
    assert v.note == f"原投票为第5楼（pid {vote}）"
    data = json.loads(g.run("tally", "--day", "2", "--json", "--as-of", AFTER))
    by_pid = {x["ballot"]["evidence"]["pid"]: x for x in data["votes"]}
    assert by_pid[stray]["reason"] == "改票未回复原投票楼层"
    assert by_pid[stray]["note"] == f"原投票为第5楼（pid {vote}）"
    assert all("请导演" not in x["reason"] and "pid" not in x["reason"] for x in data["votes"])
    out = g.run("why", "--day", "2", "--player", "饺子", "--as-of", AFTER)
    assert f"〔导演备注：原投票为第5楼（pid {vote}）〕" in out


# --------------------------------------------------------------------------- item 16


def test_vote_sheriff_from_a_day_not_in_the_game_file_applies_from_then_on(tmp_path) -> None:
    """m135.txt:148 警长带队 1.5 票: ``vote sheriff --from-day 3`` on a file with days 1, 2
    and 4 makes 包子 the sheriff from day 4 on (never "已记录" and then ignored)."""
    says("m135.txt:148", "1.5")
    g = Game(tmp_path, extra=DAY4)
    out = g.run("vote", "sheriff", "--from-day", "3", "--player", "包子")
    assert "已记录：第3天起警长为 包子" in out and "游戏文件中没有第3天，从第4天起生效" in out
    g.post(2032, "包子", at(11, day=4), "投票对象：饺子\n投票理由：测试")
    g.post(2032, "馄饨", at(11, 5, day=4), "投票对象：面条\n投票理由：测试")
    d = g.derive("2026-12-05T09:00:00+08:00")
    assert d.day(2).sheriff is None and d.day(4).sheriff == "包子"
    t = d.day(4).tally
    assert str(t.counts["饺子"]) == "3/2" and t.out == "饺子"
    out = g.run("tally", "--day", "4", "--as-of", "2026-12-05T09:00:00+08:00")
    assert "警长：包子" in out
    # a later record replaces it from its own day; a day beyond the file waits for the day
    out = g.run("vote", "sheriff", "--from-day", "9", "--player", "馄饨")
    assert "游戏文件中还没有第9天及以后的天，加入后从第9天起生效" in out
    assert g.derive("2026-12-05T09:00:00+08:00").day(4).sheriff == "包子"
    g.run("vote", "sheriff", "--from-day", "2", "--player", "馄饨")
    d = g.derive("2026-12-05T09:00:00+08:00")
    assert (d.day(2).sheriff, d.day(4).sheriff) == ("馄饨", "包子")


# --------------------------------------------------------------------------- item 18


def test_a_day_not_crawled_raises_nothing_and_says_so(tmp_path) -> None:
    """m135.txt:311, 313 潜水 is judged on the posts; a day none of whose threads was read
    (never crawled, or the forum was down) raises no 潜水/未投票 and the commands say why."""
    says("m135.txt:311", "发言不足")
    g = Game(tmp_path)
    d = g.derive()
    assert not d.flags and not d.day(2).crawled
    out = g.run("tally", "--day", "2", "--as-of", AFTER)
    assert "第2天的帖子尚未抓取（讨论帖 2011、投票帖 2012、进程帖 2013）" in out
    assert "不判潜水和未投票" in out
    assert "第2天的帖子尚未抓取" in g.run("why", "--day", "2", "--player", "饺子", "--as-of", AFTER)
    data = json.loads(g.run("tally", "--day", "2", "--json", "--as-of", AFTER))
    assert data["crawled"] is False and data["flags"] == []
    assert "没有违规标记" in g.run("flags", "--as-of", AFTER)
    report = tmp_path / "r.html"
    g.run("report", "--day", "2", "--html", str(report), "--as-of", AFTER)
    assert "第2天的帖子尚未抓取" in report.read_text(encoding="utf-8")

    # the forum was down at the day's first cycle: errors are no reading either
    store = open_store(g.db)
    for tid in (2011, 2012, 2013):
        store.log_crawl(run_id="r1", at="2026-12-02T14:01:00+00:00", tid=tid, outcome="error")
    store.close()
    assert not g.derive().flags

    # once a thread of the day is read, the day is judged (day 1 still is not)
    for name in ("饺子", "包子"):
        for i in range(5):
            g.post(2011, name, at(11, i), f"发言{i}")
    d = g.derive()
    assert d.day(2).crawled and not d.day(1).crawled
    kinds = {(f.kind, f.player) for f in d.flags if f.day == 2}
    assert (FlagKind.QIANSHUI, "馄饨") in kinds and (FlagKind.NO_VOTE, "馄饨") in kinds
    assert (FlagKind.QIANSHUI, "饺子") not in kinds
    assert not [f for f in d.flags if f.day == 1]


@pytest.mark.parametrize("strict", [None, False])
def test_the_default_game_file_folds(tmp_path, strict) -> None:
    """``[votes] strict_names`` defaults to false (pipeline/gamefile.py)."""
    g = Game(tmp_path, strict=strict)
    pid = g.post(2012, "包子", at(11), "投票对象：\ufeff饺子\n投票理由：测试")
    assert verdict(g.derive(), pid).counts_for == "饺子"


def test_a_bare_abstain_is_a_vote_in_the_wrong_format_and_a_new_post_corrects_it(
    tmp_path,
) -> None:
    """m135.txt:206 — 投弃权票时，须在投票对象中填写“弃权”; m135.txt:205 — 投票格式或投票对象有误的
    票无效。无效票须通过重新发帖或有效改票更正: a bare line 弃权 is not a vote, and the player's
    next post in the format counts."""
    says("m135.txt:206", "投弃权票时，须在投票对象中填写“弃权”")
    says("m135.txt:205", "无效票须通过重新发帖或有效改票更正")
    g = Game(tmp_path)
    bare = g.post(2012, "春卷", at(12), "弃权")
    proper = g.post(2012, "春卷", at(13), "投票对象：包子")
    d = g.derive()
    wrong = verdict(d, bare)
    assert wrong.status is VerdictStatus.INVALID
    assert "弃权须写在“投票对象：”之后（应写“投票对象：弃权”）" in wrong.reason
    counted = verdict(d, proper)
    assert counted.status is VerdictStatus.COUNTED and counted.ballot.target == "包子"
    assert d.days[2].tally is not None and d.days[2].tally.counts.get("包子") == 1
    # a rule set whose text asks nothing of the kind reads it as an abstention
    from engine.rulesets import get_ruleset

    assert get_ruleset("tubian24").bare_abstain and not get_ruleset("m135").bare_abstain
