"""A vote thread opened 回帖仅作者可见 on the real forum: the votes hidden from everyone but the
director, and still counted by bansha.

zhenyan's votes are seen by the voter alone until the game ends (zhenyan.txt:37/173): bansha
opens such a vote thread with Discuz's 回帖仅作者可见 (here the demo game asks it for its vote
thread with ``[threads] author_only``). A guest and a player see 此帖仅作者可见 where the others'
votes are; the director's crawl reads and counts every vote; a crawl without the director's
cookie says in Chinese that it saw none, and its tally names each hidden vote as unreadable
instead of counting nothing.
"""

from __future__ import annotations

import shutil
from datetime import timedelta

from click.testing import CliRunner

from pipeline.cli import cli
from tests.live.support import Bansha, Forum, day_toml, dz, game_text, now

VOTES = (("饺子", "馄饨"), ("包子", "面条"), ("馄饨", "面条"))  # not the first post's example
VOTE_SUBJECT = "[M135]第1天投票帖"


def test_an_author_only_vote_thread_hides_votes_but_the_director_counts_them(
    forum: Forum, fid: int, bansha: Bansha
) -> None:
    start = now()
    days = day_toml(start - timedelta(minutes=1), start + timedelta(hours=2))
    text = game_text(forum, fid, days).replace(
        '[threads]\nprogress = "day"\n', '[threads]\nprogress = "day"\nauthor_only = ["vote"]\n'
    )
    bansha.game.write_text(text, "utf-8")
    bansha.run("check", str(bansha.game))
    bansha.cycle()
    bansha.approve("newthread")
    assert bansha.cycle().count("已开新帖") == 3
    tids = {s: t for t, s, _a in forum.subjects(fid)}
    vote = tids.pop(VOTE_SUBJECT)
    # forum_thread.status bit 2 (value 2) is 回帖仅作者可见; only the vote thread has it
    status = {
        int(t): int(s)
        for t, s in forum.sql(f"SELECT tid, status FROM pre_forum_thread WHERE fid = {fid:d}")
    }
    assert status[vote] & 2
    assert not any(status[t] & 2 for t in tids.values())

    guest_db = bansha.db.with_name("guest.db")
    shutil.copy(bansha.db, guest_db)  # a second store that has seen the threads, not the votes
    for voter, target in VOTES:
        forum.as_(voter).reply(vote, f"投票对象：{target}\n投票理由：测试")

    # a guest sees the notice in place of every vote; a player sees only their own
    page = dz.Browser(forum.base).fetch(f"forum.php?mod=viewthread&tid={vote}").text
    assert page.count("此帖仅作者可见") == 3
    assert "投票对象：馄饨" not in page and "投票对象：面条" not in page
    mine = forum.as_("饺子").fetch(f"forum.php?mod=viewthread&tid={vote}").text
    assert "投票对象：馄饨" in mine and "投票对象：面条" not in mine
    assert mine.count("此帖仅作者可见") == 2

    # the director (thread author and 超级版主) reads every vote, without the notice in them
    bansha.cycle()
    posts = bansha.json("posts", str(bansha.game), "--day", "1")["threads"]
    [replies] = [t["posts"][1:] for t in posts if t["tid"] == vote]
    assert [p["author"] for p in replies] == [v for v, _t in VOTES]
    assert all("仅作者可见" not in p["text"] for p in replies), replies
    tally = bansha.json("tally", str(bansha.game), "--day", "1")
    assert [(v["voter"], v["target"], v["status"]) for v in tally["votes"]] == [
        (voter, target, "counted") for voter, target in VOTES
    ]

    # without the director's cookie: said, in Chinese, and no vote is counted as read
    guest_env = {"BANSHA_DB": str(guest_db), "BANSHA_COOKIE": ""}
    out = CliRunner().invoke(cli, ["crawl", str(bansha.game), "--day", "1"], env=guest_env)
    assert out.exit_code == 0, out.output
    assert "有 3 帖回帖显示“此帖仅作者可见”" in out.output, out.output
    assert "requires_login = true" in out.output
    out = CliRunner().invoke(
        cli, ["tally", str(bansha.game), "--day", "1", "--json"], env=guest_env
    )
    assert out.exit_code == 0, out.output
    assert "投票帖中有 3 帖内容不可读" in out.output, out.output
    assert "counted" not in out.output
