"""``bansha demo``: the whole foundation on a local simulated forum, no network needed."""

from __future__ import annotations

import tempfile
from datetime import datetime, timedelta
from pathlib import Path

import click

from pipeline.cli import GameContext, cli, load_context, make_http_client
from pipeline.cmd_votes import _votes, run_derive
from pipeline.commands import ROLE_ZH, run_crawl
from pipeline.cycle import CycleLocked, cycle_lock, run_cycle
from pipeline.derive import Derivation
from pipeline.drafts import approve, list_drafts, make_drafts
from pipeline.poster import Poster, publish_approved
from pipeline.report import write_report
from pipeline.simulator import ForumSim, SimClock, SimServer, script_now

CONFIG = Path(__file__).resolve().parent.parent / "config" / "games"


@cli.command("demo")
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="演示数据库的路径（默认：临时目录中的 bansha-demo/demo.db，每次重新生成）。",
)
@click.option(
    "--day", "show_day", type=int, default=2, show_default=True, help="展示哪一天的计票。"
)
def demo(db_path: Path | None, show_day: int) -> None:
    """在本机启动模拟论坛（示例游戏：12 名玩家、两天），按时运行几轮 cycle 并打印汇总。

    抓取进数据库、计票、统计发言、标记违规、起草公示；演示模式下由演示程序代替导演批准第二天的
    公示并发到模拟论坛，最后生成当天的 HTML 报告。不需要网络：模拟论坛只监听 127.0.0.1。
    """
    game_file = CONFIG / "demo.toml"
    script = CONFIG / "demo_posts.toml"
    if not game_file.exists() or not script.exists():
        raise click.ClickException(
            f"找不到示例游戏文件：{game_file}（请在仓库目录中以可编辑方式安装）"
        )
    if db_path is None:
        folder = Path(tempfile.gettempdir()) / "bansha-demo"
        folder.mkdir(exist_ok=True)
        db_path = folder / "demo.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)

    ctx = load_context(game_file, str(db_path))
    now = script_now(script)
    assert now is not None
    clock = SimClock(now)
    sim = ForumSim.from_script(game_file, script, clock)
    # cron would run a cycle every few minutes; the demo runs one at a few moments, so the store
    # sees posts arrive and a vote edited after it was first seen (the first version counts)
    moments = [m for m in _crawl_moments(ctx) if m < now] + [now]
    with SimServer(sim) as server:
        forum = ctx.game.forum.model_copy(update={"base_url": server.base_url})
        ctx.game = ctx.game.model_copy(update={"forum": forum})
        click.echo(f"模拟论坛已启动：{server.base_url}")
        for moment in moments:
            clock.set(moment)
            report = run_cycle(
                ctx.game,
                ctx.store,
                now=moment,
                crawl=lambda targets, full: run_crawl(ctx, targets, full=full, min_interval_s=0),
                draft=lambda d, moment=moment: make_drafts(ctx.game, ctx.store, d, now=moment),
            )
            if report.errors:
                raise click.ClickException("演示失败：" + "；".join(report.errors))
            assert report.crawl is not None
            threads = report.crawl.threads
            click.echo(
                f"  {moment:%m-%d %H:%M} 一轮：请求 {sum(t.pages_fetched for t in threads)} 页，"
                f"新帖 {sum(t.new_posts for t in threads)}，"
                f"内容变化 {sum(t.changed_posts for t in threads)}，新草稿 {len(report.drafted)} 份"
            )
        click.echo(f"已抓取到数据库：{db_path}")
        click.echo("")
        derivation = run_derive(ctx, now)
        _summary(ctx, derivation)
        click.echo("")
        _day_tally(ctx, derivation, show_day)
        click.echo("")
        _approve_and_post(ctx, sim, clock, show_day)
    page = write_report(
        ctx.game,
        ctx.store,
        day=show_day,
        as_of=now,
        path=db_path.with_name(f"report-day{show_day}.html"),
    )
    click.echo(f"第 {show_day} 天的报告：{page}")
    ctx.close()
    _engine_nights(game_file, db_path, now)


def _engine_nights(game_file: Path, db_path: Path, now: datetime) -> None:
    """Resolve night 0, day 1 and night 1 (from the actions file) with the m135 engine."""
    click.echo("")
    click.echo("用规则引擎结算（m135）：第0晚 → 第1天 → 第1晚（行动见 demo_night1.toml）")
    base = [str(game_file), "--db", str(db_path)]
    steps = [
        ["night", "resolve", *base, "--night", "0"],
        ["day", "resolve", *base, "--day", "1", "--as-of", now.isoformat()],
        ["night", "resolve", *base, "--night", "1", "--actions", str(CONFIG / "demo_night1.toml")],
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
    click.echo("  真实游戏中只有导演能批准（bansha drafts approve），未经批准的草稿绝不会发出：")
    for r in rows:
        approve(ctx.store, r.id, now)
        click.echo(f"  批准草稿 #{r.id}（{r.kind}）")
    cookie = sim.login_cookie(ctx.game.director.names[0])
    try:
        with cycle_lock(ctx.db_path), make_http_client() as http:
            poster = Poster.for_game(
                ctx.game, http, env={ctx.game.forum.cookie_env: cookie}, min_interval_s=0, now=clock
            )
            for result in publish_approved(ctx.store, ctx.game, poster, now=now, clock=clock):
                click.echo(f"  {result.line()}")
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
    click.echo(f"第 {day} 天计票（bansha tally {ctx.game_path.name} --day {day} 可看详情）：")
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
    click.echo(f"第 {day} 天违规标记（导演确认后才变成牌；bansha flags 查看）：")
    for f in flags:
        click.echo(f"  [{f.id}] {f.player}：{f.reason}")
    if not flags:
        click.echo("  （无）")
