"""``bansha demo``: the whole foundation on a local simulated forum, no network needed.

The demo writes its own game file beside its store (``demo.toml`` next to ``demo.db``, with the
post script and the night-actions file), its days moved by a whole number of days so that the
demo's moment — the script's ``[sim] now``, the morning after day 2 closed — is at or just
before the real time: day 2 is closed when the demo ends, so the commands it prints at the end
(``tally``, ``why``, ``flags``…, each with the written game file's path) run as printed, from
the same folder, without ``--as-of``. ``--now`` fixes that moment (the script's own
``2026-12-03T09:00:00+08:00`` keeps the files' original dates).
"""

from __future__ import annotations

import os
import re
import tempfile
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import click

from engine.rulesets import get_ruleset
from pipeline import resources
from pipeline.cli import GameContext, cli, load_context, make_http_client, story_clock
from pipeline.cli.cycle import keep_tally_views
from pipeline.cli.demo_files import (
    DAY,
    MARK,
    demo_now,
    moved_words,
    program,
    sh,
    shift_dates,
    stopped_note,
    written_by_demo,
)
from pipeline.cli.foundation import ROLE_ZH, run_crawl
from pipeline.cli.post import result_line
from pipeline.cli.votes import _votes, run_derive
from pipeline.cycle import run_cycle
from pipeline.derive import Derivation
from pipeline.discuz.poster import Poster
from pipeline.drafts import KIND_ZH, approve, list_drafts, make_drafts
from pipeline.drafts.publish import publish_approved
from pipeline.drafts.report import write_report
from pipeline.game.gamefile import resolve_db_path
from pipeline.notify import notify_after_cycle
from pipeline.sim.simulator import ForumSim, SimClock, SimServer, script_now
from pipeline.store.lock import CycleLocked, cycle_lock

CONFIG = resources.examples_dir()


@cli.command("demo")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="演示数据库的路径（默认：临时目录中的 bansha-demo/demo.db，每次重新生成）；"
    "演示用的游戏文件写在它旁边（同名的 .toml）。",
)
@click.option(
    "--day", "show_day", type=int, default=2, show_default=True, help="展示哪一天的计票。"
)
@click.option(
    "--now",
    "now_text",
    default=None,
    metavar="时间",
    help="演示时的“现在”（默认：本机当前时间）。示例游戏的日期整体平移整数天，"
    "使第 2 天在这之前关门；写 2026-12-03T09:00:00+08:00 则保持示例文件原来的日期。",
)
@click.option(
    "--from-signup",
    is_flag=True,
    help="整局演示：从报名帖开始——报名、发牌、bansha 开第 1 天的帖子、计票、关门时关闭投票帖、"
    "公布结果、开第 2 天的帖子；每一次写论坛都先经批准。",
)
def demo(db_path: Path | None, show_day: int, now_text: str | None, from_signup: bool) -> None:
    """在本机启动模拟论坛（示例游戏：12 名玩家、两天），按时运行几轮 cycle 并打印汇总。

    抓取进数据库、计票、统计发言、标记违规、起草公示；演示模式下由演示程序代替导演批准第二天的
    公示并发到模拟论坛，最后生成当天的 HTML 报告。不需要网络：模拟论坛只监听 127.0.0.1。
    示例游戏的日期移到最近（第 2 天在演示之前关门），游戏文件写在数据库旁边；
    最后打印的命令可以在当前目录原样运行。

    --from-signup：整局演示（默认数据库在临时目录的 bansha-demo-life/life.db）：逐条打印导演
    （和 cron）运行的命令及其输出，从报名帖到第 2 天开门。
    """
    if from_signup:
        from pipeline.cli.demo_life import SOURCE, run_life_demo

        run_life_demo(db_path, demo_now(SOURCE, now_text))
        return
    source_game = CONFIG / "demo.toml"
    db_path, files, shift = _demo_files(db_path, source_game, now_text)
    game_file = files.game
    script = files.script
    now = script_now(script)
    assert now is not None
    clock = SimClock(now)
    sim = ForumSim.from_script(game_file, script, clock)
    # the story's time is the simulator's, also for the commands it runs (night resolve …)
    with SimServer(sim) as server, story_clock(clock):
        # the game file names the simulator's address, as a director's names the forum's
        files.point_at(server.base_url)
        ctx = load_context(game_file, str(db_path))
        click.echo(
            f"演示用的游戏文件：{game_file}（示例游戏 {source_game.name} 的{moved_words(shift)}，"
            f"演示时刻 {now:%Y-%m-%d %H:%M}：第 {ctx.game.days[-1].day} 天已于 "
            f"{ctx.game.days[-1].closes:%m-%d %H:%M} 关门）"
        )
        click.echo(f"模拟论坛已启动：{server.base_url}")
        # cron would run a cycle every few minutes; the demo runs one at a few moments, so the
        # store sees posts arrive and a vote edited after it was first seen (the first counts)
        for moment in [m for m in _crawl_moments(ctx) if m < now] + [now]:
            _cycle(ctx, clock, moment)
        click.echo(f"已抓取到数据库：{db_path}")
        click.echo("")
        derivation = run_derive(ctx, now)
        _summary(ctx, derivation)
        click.echo("")
        _day_tally(ctx, derivation, show_day)
        click.echo("")
        _approve_and_post(ctx, sim, clock, show_day)
        _engine_nights(game_file, db_path, now, files.night)
        click.echo("")
        click.echo("引擎结算之后 cron 的下一轮（存下计票结果，bansha tally 直接显示）：")
        _cycle(ctx, clock, now)
    page = write_report(
        ctx.game,
        ctx.store,
        day=show_day,
        as_of=now,
        path=db_path.with_name(f"report-day{show_day}.html"),
    )
    click.echo(f"第 {show_day} 天的报告：{page}")
    player = _player_to_explain(ctx, derivation, show_day)
    ctx.close()
    click.echo("")
    click.echo(stopped_note(server.base_url))
    _next_commands(files, db_path, show_day, player)


def _demo_files(
    db_path: Path | None, source_game: Path, now_text: str | None
) -> tuple[Path, DemoFiles, Any]:
    """The demo's game, posts and night files written beside a fresh database: (the database's
    path, the files, how far the example's dates were moved)."""
    source_script = CONFIG / "demo_posts.toml"
    source_night = CONFIG / "demo_night1.toml"
    for source in (source_game, source_script, source_night):
        if not source.exists():
            raise click.ClickException(
                f"找不到示例游戏文件：{source}（bansha 的安装不完整，请重新安装）"
            )
    if db_path is None:
        db_path = Path(tempfile.gettempdir()) / "bansha-demo" / "demo.db"
    if db_path.suffix == ".toml":
        raise click.ClickException(
            f"演示数据库的路径不能以 .toml 结尾：{db_path}（游戏文件会写在它旁边，如 demo.db）"
        )
    files = DemoFiles.beside(db_path)
    files.check_free()
    db_path.parent.mkdir(parents=True, exist_ok=True)
    shift = files.write(source_game, source_script, source_night, demo_now(source_game, now_text))
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    return db_path, files, shift


def _cycle(ctx: GameContext, clock: SimClock, moment: datetime) -> None:
    """One cycle at ``moment`` as cron runs it (crawl, derive, draft; the views ``bansha tally``
    shows), recorded like cron's (``bansha status`` shows it); the demo sends nothing here."""
    clock.set(moment)
    report = run_cycle(
        ctx.game,
        ctx.store,
        now=moment,
        crawl=lambda targets, full: run_crawl(ctx, targets, full=full, min_interval_s=0),
        draft=lambda d: make_drafts(ctx.game, ctx.store, d, now=moment),
        after_derive=lambda d, record: keep_tally_views(ctx, d, record),
    )
    notify_after_cycle(ctx.game, ctx.store, report, moment, env={}, send=_no_send)
    if report.errors:
        raise click.ClickException("演示失败：" + "；".join(report.errors))
    assert report.crawl is not None
    threads = report.crawl.threads
    click.echo(
        f"  {moment:%m-%d %H:%M} 一轮：请求 {sum(t.pages_fetched for t in threads)} 页，"
        f"新帖 {sum(t.new_posts for t in threads)}，"
        f"内容变化 {sum(t.changed_posts for t in threads)}，新草稿 {len(report.drafted)} 份"
    )


def _engine_nights(game_file: Path, db_path: Path, now: datetime, actions: Path) -> None:
    """Resolve night 0, day 1 and night 1 (from the actions file) with the game's engine."""
    from pipeline.game.gamefile import load_game

    ruleset = get_ruleset(load_game(game_file, env={}, check_login=False).game.ruleset)
    click.echo("")
    click.echo(f"用规则引擎结算（{ruleset.title}）：第0晚 → 第1天 → 第1晚（行动见 {actions}）")
    base = [str(game_file), "--db", str(db_path)]
    steps = [
        ["night", "resolve", *base, "--night", "0"],
        ["day", "resolve", *base, "--day", "1", "--as-of", now.isoformat()],
        ["night", "resolve", *base, "--night", "1", "--actions", str(actions)],
    ]
    for args in steps:
        cli.main(args, standalone_mode=False)


def _approve_and_post(ctx: GameContext, sim: ForumSim, clock: SimClock, day: int) -> None:
    """Demo mode only: approve the day's result and card drafts, post them to the simulator.

    Sends like every other path: holding the game's lock, each record stamped by the clock
    (the simulated forum's, so the poster's search of the thread compares like with like)."""
    now = clock()
    rows = [
        r
        for r in list_drafts(ctx.store)
        if r.day == day and r.kind in ("result", "cards") and r.state == "pending"
    ]
    click.echo("【演示模式】以下草稿由演示程序代替导演批准；")
    click.echo("  真实游戏中只有导演能批准（drafts approve 命令），未经批准的草稿绝不会发出：")
    for r in rows:
        approve(ctx.store, r.id, now)
        click.echo(f"  批准草稿 #{r.id}（{KIND_ZH.get(r.kind, r.kind)}）")
    cookie = sim.login_cookie(ctx.game.director.names[0])
    try:
        with cycle_lock(ctx.db_path), make_http_client() as http:
            poster = Poster.for_game(
                ctx.game, http, env={ctx.game.forum.cookie_env: cookie}, min_interval_s=0, now=clock
            )
            for result in publish_approved(ctx.store, ctx.game, poster, now=now, clock=clock):
                click.echo(f"  {result_line(result)}")
    except CycleLocked as exc:
        raise click.ClickException(
            f"演示数据库 {ctx.db_path} 正被另一个 bansha 进程使用（另一个 bansha demo？），"
            "没有发帖；等它结束后再运行，或用 --db 指定别的路径"
        ) from exc


def _crawl_moments(ctx: GameContext) -> list[datetime]:
    """Noon and an hour before the close of every day: when a cron cycle would also look."""
    moments = []
    for d in ctx.game.days:
        noon = d.opens.replace(hour=12, minute=30)
        if d.opens < noon < d.closes:
            moments.append(noon)
        moments.append(d.closes - timedelta(hours=1))
    return sorted(moments)


def _summary(ctx: GameContext, d: Derivation) -> None:
    store = ctx.store
    game = ctx.game
    click.echo("帖子：")
    for day, role, tid in game.thread_roles():
        thread = store.thread(tid) or {}
        n = len(store.post_rows(tid))
        click.echo(
            f"  第{day}天 {ROLE_ZH.get(str(role.value), role)} tid={tid}："
            f"{thread.get('total_pages') or 0} 页，{n} 帖"
        )
    counts = store.counts()
    click.echo(
        f"共抓取 {counts['pages']} 个页面，{counts['posts']} 帖，{counts['post_revisions']} 个版本"
    )
    click.echo("")
    click.echo("讨论帖发言数（开门到关门之间，每位玩家每天；少于 5 帖标 *）：")
    days = [res for _, res in sorted(d.days.items()) if res.day.discussion is not None]
    click.echo("  玩家".ljust(10) + "".join(f"第{res.day.day}天".rjust(6) for res in days))
    for p in game.players:
        cells = ""
        for res in days:
            pc = res.counts.get(p.name)
            n = pc.count if pc else 0
            cells += (f"{n}*" if n < 5 else f"{n} ").rjust(7)
        click.echo(f"  {p.name}".ljust(10) + cells)


def _day_tally(ctx: GameContext, d: Derivation, day: int) -> None:
    if day not in d.days:
        return
    res = d.days[day]
    click.echo(f"第 {day} 天计票（每一票的详情见最后的 tally 命令）：")
    for v in res.verdicts:
        b = v.ballot
        floor = f"{b.evidence.floor}#" if b.evidence.floor else "导演"
        status = {"counted": "有效", "superseded": "已改票", "invalid": "无效", "ignored": "不计"}
        click.echo(
            f"  {floor:>4} {v.voter_unit or b.voter} → {b.target or b.target_raw or '—'}："
            f"{status[v.status.value]}，{v.reason}"
        )
    t = res.tally
    if t is not None:
        counts = "，".join(
            f"{c} {_votes(t.counts[c])}" for c in sorted(t.counts, key=lambda c: (-t.counts[c], c))
        )
        click.echo(f"  票数：{counts}")
        outcome = (
            f"当选警长：{t.elected or '无人当选'}"
            if t.sheriff_election
            else f"出局：{t.out or '无人'}"
        )
        click.echo(f"  结果：{outcome}（{t.decided_by}）")
    flags = [f for f in d.flags if f.day == day]
    click.echo("")
    click.echo(f"第 {day} 天违规标记（导演确认后才变成牌；见最后的 flags 命令）：")
    for f in flags:
        click.echo(f"  [{f.id}] {f.player}：{f.reason}")
    if not flags:
        click.echo("  （无）")


# --------------------------------------------------------------------------- the demo's files


class DemoFiles:
    """The game file, post script and night-actions file the demo writes beside its store."""

    def __init__(self, game: Path, script: Path, night: Path) -> None:
        self.game = game
        self.script = script
        self.night = night

    @classmethod
    def beside(cls, db_path: Path) -> DemoFiles:
        stem = db_path.stem
        return cls(
            db_path.with_suffix(".toml"),
            db_path.with_name(f"{stem}_posts.toml"),
            db_path.with_name(f"{stem}_night1.toml"),
        )

    def all(self) -> list[Path]:
        return [self.game, self.script, self.night]

    def check_free(self) -> None:
        """Refuse before anything is written when a file of the same name is not the demo's."""
        for path in self.all():
            if path.exists() and not written_by_demo(path):
                raise click.ClickException(
                    f"{path} 已经存在，而且不是 bansha demo 写的文件：演示不会覆盖它"
                    "（用 --db 指定别的位置，例如 --db 演示/demo.db）"
                )

    def write(self, game: Path, script: Path, night: Path, now: datetime) -> int:
        """Write the three files, every date moved by the same whole number of days so the
        script's moment (``[sim] now``) is at or just before ``now``; returns the days moved."""
        moment = script_now(script)
        if moment is None:
            raise click.ClickException(f"{script} 没有 [sim] now：不知道演示的时刻")
        shift = (now - moment) // DAY
        why = (
            f"{MARK}（每次运行都会重写）：示例游戏 {{name}} 的{moved_words(shift)}，"
            "第 2 天在演示之前关门。\n"
            "# 论坛地址是演示时的模拟论坛，演示结束后已关闭：这个文件只用于查看演示的数据库"
            "（tally、why、flags、drafts…），不能 crawl 或 cycle。\n"
        )
        for source, target in ((game, self.game), (script, self.script), (night, self.night)):
            text = shift_dates(source.read_text("utf-8"), shift)
            target.write_text(why.format(name=source.name) + text, "utf-8")
        return shift

    def point_at(self, base_url: str) -> None:
        """The game file's ``[forum] base_url``: the simulator's address while the demo runs."""
        text = self.game.read_text("utf-8")
        line = re.compile(r'^base_url = "[^"]*"', re.MULTILINE)
        if len(line.findall(text)) != 1:
            raise click.ClickException(f"{self.game} 中找不到唯一的 base_url 行")
        self.game.write_text(line.sub(f'base_url = "{base_url}"', text), "utf-8")


# --------------------------------------------------------------------------- what to run next


def _player_to_explain(ctx: GameContext, d: Derivation, day: int) -> str:
    """The player ``why`` is shown for: the first one flagged that day, else the first player."""
    names = {p.name for p in ctx.game.players}
    flagged = [f.player for f in d.flags if f.day == day and f.player in names]
    return flagged[0] if flagged else ctx.game.players[0].name


def _next_commands(files: DemoFiles, db_path: Path, day: int, player: str) -> None:
    """Commands that read the demo's store, each runnable as printed from the current folder."""
    prog = program()
    game = sh(str(files.game))
    db = "" if _default_store(files.game, db_path) else f" --db {sh(str(db_path))}"
    steps = [
        (f"第 {day} 天的计票：每一票有效或无效及理由、票数、结果", f"tally {game}{db} --day {day}"),
        (
            f"一位玩家（{player}）的票、发言数和违规标记，附帖子链接",
            f"why {game}{db} --day {day} --player {sh(player)}",
        ),
        (f"第 {day} 天的违规标记（导演确认后才变成牌）", f"flags {game}{db} --day {day}"),
        ("全部草稿：编号、种类、状态", f"drafts {game}{db} --all"),
        (f"第 {day} 天 {player} 的帖子", f"posts {game}{db} --day {day} --player {sh(player)}"),
        ("引擎状态（仅导演可见）", f"state {game}{db}"),
    ]
    click.echo("")
    click.echo("接下来可以试试（在当前目录原样运行，不需要 --as-of）：")
    for what, command in steps:
        click.echo(f"  {what}：")
        click.echo(f"    {prog} {command}")


def _default_store(game: Path, db_path: Path) -> bool:
    """Whether a command given only ``game`` finds the demo's store (``BANSHA_DB`` unset)."""
    found = resolve_db_path(game, None, os.environ)
    return found.resolve() == db_path.resolve()


def _no_send(urls: object, notice: object) -> bool:
    """The demo's notifications go nowhere (it has no [notify] urls anyway)."""
    return True
