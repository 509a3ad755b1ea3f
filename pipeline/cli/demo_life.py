"""``bansha demo --from-signup``: a game's whole life on a local simulated forum.

From a 报名帖 to day 2's threads, through the commands a director (and cron) runs, each printed
with its output: ``bansha signup`` → ``bansha deal`` (its commitment approved and posted to the
rules thread) → ``bansha cycle`` drafts day 1's new threads → the director approves them →
``bansha cycle`` opens them at the opening (the 电梯 on floor 2) → players post and vote →
``bansha cycle`` at the close locks the vote thread (approved for the whole game in the file),
reads the day whole again and drafts the result → approved, posted → the director records
night 1's out (``bansha player out``) → day 2's threads open.
Every forum write goes through an approval, and the forum's own record (the simulator's
requests) shows each exactly once.

The game file (``config/games/demo_life.toml``) is written beside the store with its dates moved
by whole days so that the demo's last moment is at or just before the real time, and with the
simulator's address: the commands printed at the end run as printed.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import tomllib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, redirect_stdout
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path
from urllib.parse import urlencode

import click

from pipeline import resources
from pipeline.cli import cli, story_clock
from pipeline.cli.demo_files import (
    DAY,
    MARK,
    moved_words,
    program,
    sh,
    shift_dates,
    stopped_note,
    written_by_demo,
)
from pipeline.sim.simulator import ForumSim, SimClock, SimServer

SOURCE = resources.example_file("demo_life.toml")
DIRECTOR = "导演"
DIRECTOR_UID = 100
#: who signs up, in order (13 sign-ups for 12 seats: 月饼 quits, 豆花 ends up the 替补)
SIGNUPS = ["饺子", "包子", "馄饨", "面条", "烧卖", "汤圆", "春卷", "油条", "Snow_风", "粽子"]
LATE = ["月饼", "麻花", "汤包", "豆花"]
USERS = {
    DIRECTOR: DIRECTOR_UID,
    **{name: 101 + i for i, name in enumerate(SIGNUPS + LATE)},
    "路人": 300,
}
RULES_TID = 1000
SIGNUP_TID = 1001
#: the player who posts only twice on day 1 (潜水: fewer than 5 posts, rules/m135.txt:311)
LURKER = "烧卖"
NIGHT_OUT = "油条"  # the player the story's night 1 puts out
#: day 1's votes (the sheriff election): voter -> candidate
VOTES = {
    "饺子": "包子",
    "包子": "馄饨",
    "馄饨": "包子",
    "面条": "包子",
    "汤圆": "馄饨",
    "春卷": "包子",
    "油条": "馄饨",
    "Snow_风": "包子",
    "粽子": "包子",
    "麻花": "馄饨",
}


def run_life_demo(db_path: Path | None, now: datetime) -> None:
    """The whole demo; ``now`` is the real time (or ``--now``): the last step is just before it."""
    if db_path is None:
        db_path = Path(tempfile.gettempdir()) / "bansha-demo-life" / "life.db"
    if db_path.suffix == ".toml":
        raise click.ClickException(
            f"演示数据库的路径不能以 .toml 结尾：{db_path}（游戏文件会写在它旁边，如 life.db）"
        )
    game_file = db_path.with_suffix(".toml")
    if game_file.exists() and not written_by_demo(game_file):
        raise click.ClickException(
            f"{game_file} 已经存在，而且不是 bansha demo 写的文件：演示不会覆盖它"
            "（用 --db 指定别的位置，例如 --db 演示/life.db）"
        )
    db_path.parent.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)

    source = SOURCE.read_text("utf-8")
    days = _days(source)
    # the last moment: half an hour after day 2 opened
    last = days[1][0] + timedelta(minutes=30)
    shift = (now - last) // DAY
    last += shift * DAY
    days = [(o + shift * DAY, c + shift * DAY) for o, c in days]
    (open1, close1), (open2, _close2) = days
    signup_at = open1 - timedelta(days=2, hours=14)  # 11-28 20:00 in the file's dates

    clock = SimClock(signup_at)
    sim = ForumSim(
        users=USERS,
        clock=clock,
        floodctrl_s=0,
        moderators=[DIRECTOR],  # the director moderates the game's section
        seed=2026,
    )
    _rules_and_signup(sim, signup_at)
    base = [str(game_file), "--db", str(db_path)]
    # the story's time is the simulator's: every command it runs stamps what it does (a thread
    # opened, a draft posted) with the simulated moment, never the machine's clock
    with SimServer(sim) as server, _director_cookie(sim), story_clock(clock):
        text = shift_dates(source, shift).replace("http://127.0.0.1:8080/", server.base_url)
        game_file.write_text(
            f"{MARK}（每次运行都会重写）：示例游戏 {SOURCE.name} 的{moved_words(shift)}，"
            f"论坛地址是演示时的模拟论坛（演示结束后已关闭）。\n" + text,
            "utf-8",
        )
        click.echo(f"演示用的游戏文件：{game_file}（还没有玩家、身份牌和帖子编号）")
        click.echo(f"模拟论坛已启动：{server.base_url}（导演账号「{DIRECTOR}」是游戏版块的版主）")

        _step(clock, signup_at + timedelta(hours=2), "报名截止：从报名帖写出玩家名单")
        _run("signup", *base)
        _step(clock, clock(), "发牌：身份牌写进游戏文件，承诺（SHA-256）起草成发往规则帖的草稿")
        _run("deal", *base)
        _approve_pending(base, kinds=("deal_commit",))
        _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")

        _step(clock, open1 - timedelta(hours=22), "第 1 天开门前：cycle 起草第 1 天的新帖")
        _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")
        _run("drafts", *base)
        _approve_pending(base, kinds=("newthread",))

        _step(clock, open1, "第 1 天开门：cycle 发出已批准的新帖，随即在讨论帖 2 楼发电梯")
        _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")
        threads = _threads(base)
        _run("threads", *base)
        day1 = threads[1]
        click.echo(f"  （模拟：玩家们在第 1 天的帖子里发言、投票；{LURKER} 只发了 2 帖）")
        _day_posts(sim, day1, open1)

        _step(clock, close1 - timedelta(hours=1), "关门前一小时：计票和提醒的草稿")
        _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")

        _step(clock, close1 + timedelta(minutes=1), "第 1 天关门：关闭投票帖，重读全天，起草结果")
        _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")
        before = len(sim.requests)
        refused = _late_reply(sim, "豆花", day1["vote"], "投票对象：馄饨")
        players = set(range(before, len(sim.requests)))
        click.echo(f"  关门后一位玩家回复投票帖，论坛拒绝：{refused}")
        _run("tally", *base, "--day", "1", "--as-of", _iso(clock()))
        _approve_pending(base, kinds=("result", "newthread"))
        _step(clock, clock() + timedelta(minutes=5), "下一轮 cycle：发出已批准的结果")
        _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")

        _night_and_day_2(clock, base, close1 + timedelta(hours=6), open2, last)
        _run("threads", *base)
        _forum_writes(sim, skip=players)
    click.echo("")
    click.echo(stopped_note(server.base_url))
    _next_commands(game_file, db_path)


def _night_and_day_2(
    clock: SimClock, base: Sequence[str], night: datetime, open2: datetime, last: datetime
) -> None:
    """Night 1's out recorded by the director; day 2's threads, its 电梯 and its opening."""
    _step(clock, night, f"第 1 晚：导演记下夜里出局的{NIGHT_OUT}（开门公示不会替导演说平安夜）")
    out = ["--player", NIGHT_OUT, "--at", _iso(night), "--cause", "第1晚出局"]
    _run("player", "out", *base, *out)

    _step(clock, open2, "第 2 天开门：cycle 发出第 2 天的新帖和电梯")
    _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")
    _step(
        clock,
        open2 + timedelta(minutes=5),
        "下一轮 cycle：开门公示有了第 2 天投票帖的链接，重新起草，等导演批准",
    )
    _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")
    _approve_pending(base, kinds=("day_open",))
    _step(clock, last, "下一轮 cycle：发出开门公示")
    _run("cycle", *base, "--as-of", _iso(clock()), "--verbose")


def _days(source: str) -> list[tuple[datetime, datetime]]:
    data = tomllib.loads(source)
    return [(d["opens"], d["closes"]) for d in sorted(data["days"], key=lambda d: d["day"])]


def _iso(when: datetime) -> str:
    return when.isoformat(timespec="seconds")


def _step(clock: SimClock, when: datetime, what: str) -> None:
    clock.set(when)
    click.echo("")
    click.echo(f"==== {when:%m-%d %H:%M} {what}")


def _run(*args: str) -> str:
    """Run one bansha command in this process, printed as the director would type it, with its
    output indented; a failing command ends the demo with its own message."""
    shown = " ".join(sh(a) for a in ("bansha", *args))
    click.echo(f"$ {shown}")
    out = StringIO()
    try:
        with redirect_stdout(out):
            cli.main(list(args), prog_name="bansha", standalone_mode=False)
    except click.ClickException as exc:
        raise click.ClickException(f"演示失败（{shown}）：{exc.format_message()}") from exc
    text = out.getvalue()
    for line in text.rstrip("\n").splitlines():
        click.echo(f"  {line}")
    return text


@contextmanager
def _director_cookie(sim: ForumSim) -> Iterator[None]:
    """The director's session cookie in ``BANSHA_COOKIE`` (as cron's environment file gives
    it) while the demo runs; ``BANSHA_GAME``/``BANSHA_DB`` of the caller's shell do not apply."""
    saved = {k: os.environ.get(k) for k in ("BANSHA_COOKIE", "BANSHA_GAME", "BANSHA_DB")}
    os.environ["BANSHA_COOKIE"] = sim.login_cookie(DIRECTOR)
    os.environ.pop("BANSHA_GAME", None)
    os.environ.pop("BANSHA_DB", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _approve_pending(base: Sequence[str], *, kinds: Sequence[str]) -> None:
    """Demo mode: approve every pending draft of these kinds, as the director would."""
    listed = json.loads(_quiet("drafts", *base, "--json"))
    rows = listed["drafts"] if isinstance(listed, dict) else listed
    wanted = [r for r in rows if r["kind"] in kinds and r["state"] == "pending"]
    click.echo(
        "【演示模式】演示程序代替导演批准（真实游戏中只有导演能批准，未经批准的草稿绝不会发出）："
    )
    for row in wanted:
        _run("drafts", "approve", base[0], *base[1:], str(row["id"]))


def _quiet(*args: str) -> str:
    out = StringIO()
    with redirect_stdout(out):
        cli.main(list(args), prog_name="bansha", standalone_mode=False)
    return out.getvalue()


def _threads(base: Sequence[str]) -> dict[int, dict[str, int]]:
    """Day -> role -> tid, as ``bansha threads --json`` tells it."""
    data = json.loads(_quiet("threads", *base, "--json"))
    out: dict[int, dict[str, int]] = {}
    for day in data["days"]:
        for row in day["threads"]:
            if row.get("tid") is not None:
                out.setdefault(int(day["day"]), {})[str(row["role"])] = int(row["tid"])
    return out


def _rules_and_signup(sim: ForumSim, at: datetime) -> None:
    """The rules thread and the 报名帖: 14 sign-ups, an onlooker, a quit (月饼), a 替补."""
    start = at - timedelta(hours=1)
    sim.add_thread(RULES_TID, "[M135]『让子弹飞』规则帖", DIRECTOR, "规则见此帖。", start)
    sim.add_thread(
        SIGNUP_TID, "[M135]『让子弹飞』报名帖", DIRECTOR, "12 人局，回复“报名”即可。", start
    )
    words = ["报名", "+1", "报名参加"]
    minute = 1
    for i, name in enumerate(SIGNUPS + LATE):
        sim.add_post(SIGNUP_TID, name, words[i % 3], start + timedelta(minutes=minute))
        minute += 2
        if name == "粽子":
            sim.add_post(SIGNUP_TID, "路人", "围观一下", start + timedelta(minutes=minute))
            minute += 1
    sim.add_post(SIGNUP_TID, "月饼", "不好意思，退出报名", start + timedelta(minutes=minute + 1))


def _day_posts(sim: ForumSim, threads: dict[str, int], opens: datetime) -> None:
    """Day 1 on the forum: everyone but the lurker posts 5 times in the discussion thread, the
    votes arrive in the vote thread, one player applies for acceleration."""
    names = [n for n in USERS if n not in (DIRECTOR, "路人", "月饼", "豆花")]
    at = opens + timedelta(minutes=20)
    for round_ in range(5):
        for name in names:
            if name == LURKER and round_ >= 2:
                continue
            sim.add_post(threads["discussion"], name, f"{name}的第{round_ + 1}条发言。", at)
            at += timedelta(minutes=3)
    at = opens + timedelta(hours=6)
    for voter, target in VOTES.items():
        sim.add_post(threads["vote"], voter, f"投票对象：{target}\n投票理由：相信{target}", at)
        at += timedelta(minutes=7)
    if "progress" in threads:
        sim.add_post(threads["progress"], "饺子", "申请加速", opens + timedelta(hours=2))


def _late_reply(sim: ForumSim, player: str, tid: int, text: str) -> str:
    """A player replies to ``tid`` the way the browser does (the reply form, then its POST);
    returns the forum's answer as the player sees it."""
    cookie = sim.login_cookie(player)
    form = sim.handle(
        "GET", f"{sim.base_url}forum.php?mod=post&action=reply&tid={tid}", {"Cookie": cookie}
    ).text
    refused = _refusal(form)
    if refused is not None:  # Discuz refuses a closed thread's reply form already
        return refused
    formhash = re.search(r'name="formhash" value="(\w+)"', form)
    fields = {"formhash": formhash.group(1) if formhash else "", "message": text, "wysiwyg": "0"}
    body = urlencode(fields).encode("ascii")
    answer = sim.handle(
        "POST",
        f"{sim.base_url}forum.php?mod=post&action=reply&tid={tid}&replysubmit=yes",
        {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
        body,
    ).text
    return _refusal(answer) or "（论坛接受了这条回复）"


def _refusal(page: str) -> str | None:
    """The forum's refusal on a page (its 抱歉… message), as the player reads it."""
    shown = re.search(r"(抱歉[^<\]]*)", page)
    return shown.group(1).strip() if shown else None


def _forum_writes(sim: ForumSim, *, skip: set[int]) -> None:
    """What the forum itself saw: every write bansha sent (each exactly once); ``skip``: the
    requests the demo made as a player."""
    click.echo("")
    click.echo("论坛收到的 bansha 的写操作（模拟论坛的请求记录；每一项只发了一次）：")
    for i, req in enumerate(sim.requests):
        if req.method != "POST" or i in skip:
            continue
        query = req.query
        what = {
            ("post", "newthread"): "发新帖",
            ("post", "reply"): "回帖",
            ("post", "edit"): "编辑",
            ("topicadmin", "moderate"): "关闭主题",
        }.get((query.get("mod", ""), query.get("action", "")))
        if what is None:
            continue
        if what == "发新帖":
            where = f"版块 {query.get('fid', '')}：{req.form.get('subject', '')}"
        elif what == "关闭主题":
            where = f"tid {req.form.get('moderate[]', '')}"
        else:
            where = f"tid {query.get('tid', '')}"
        click.echo(f"  {what}，{where}")
    closed = [t for t in sim.thread_tids() if sim.thread_closed(t)]
    names = "、".join(f"{sim.thread_subject(t)}（tid {t}）" for t in closed)
    click.echo(f"已关闭的主题：{names or '无'}")


def _next_commands(game_file: Path, db_path: Path) -> None:
    prog = program()
    game = sh(str(game_file))
    db = f" --db {sh(str(db_path))}"
    steps = [
        ("这局游戏的帖子：游戏文件写的、bansha 开的", f"threads {game}{db}"),
        ("第 1 天的计票（警长竞选）", f"tally {game}{db} --day 1"),
        ("全部草稿和它们的状态（新帖、关帖、结果、电梯……）", f"drafts {game}{db} --all"),
        ("报名和发牌写进游戏文件的名单与身份牌", f"check {game}"),
    ]
    click.echo("")
    click.echo("接下来可以试试（在当前目录原样运行）：")
    for what, command in steps:
        click.echo(f"  {what}：")
        click.echo(f"    {prog} {command}")
