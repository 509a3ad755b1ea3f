"""``bansha run [GAME.toml | 目录 ...]``: one resident process for a director's whole setup.

It runs every game's cycles at the moments ``bansha schedule`` puts in cron
(:func:`pipeline.cycle.next_cycle`: the rhythm, one minute after each close, the reminders, the
openings), each through the very code ``bansha cycle`` runs (:func:`pipeline.cli.cycle.cycle_once`,
under the game's lock: a cron line and ``bansha run`` never run a cycle of one game together),
serves the console (uvicorn in a thread) and says in the terminal what each cycle did and when
the game's next one runs.

- One game's failure never stops the others; a game file is read again at each of its cycles
  (and its moments whenever it changed); a game file with an error is said once (until it
  changes) and skipped. A folder stands for every game file in it (looked at again while it
  runs); other TOML files in it (night actions, post scripts) are skipped with one line.
- SIGINT/SIGTERM (and SIGBREAK, a Windows console closed) finish the cycle under way and stop;
  a second one stops at once (every write is a transaction: the store stays consistent).
- A machine that slept runs one cycle per game on waking, not one per missed moment.

The clock is injected (``now()`` and ``sleep(seconds)``): the tests drive a fake one.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import signal
import threading
import tomllib
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

import click

from pipeline import DB_ENV, resolve_db_path
from pipeline.console.cli import console_options
from pipeline.console.games import file_stat
from pipeline.cycle import EVERY_MINUTES, next_cycle
from pipeline.store.lock import CycleLocked

__all__ = ["GameWatch", "Runner", "run"]

log = logging.getLogger(__name__)

#: the longest nap between two looks at the clock and the game files (seconds): a machine that
#: slept is noticed this soon after waking, an edited game file's new moments this soon
NAP_S = 30.0


@dataclass
class GameWatch:
    """One game file ``bansha run`` looks after."""

    path: Path
    db_path: Path
    #: (mtime_ns, size) when last read; None: not read yet, or gone
    stat: tuple[int, int] | None = None
    digest: str | None = None
    #: the game as the file says it (None while the file has an error)
    game: Any = None
    #: the error said for ``digest`` (said once, until the file changes)
    error: str | None = None
    next_at: datetime | None = None  # None: at once (the first look, or the file was fixed)
    warnings: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.game.game.id if self.game is not None else self.path.name


@dataclass
class _Other:
    """A TOML file in a watched folder that is not a game file (said once)."""

    stat: tuple[int, int] | None


def _is_other_toml(raw: bytes) -> bool:
    """A TOML file without a ``[game]`` table (unreadable TOML counts as a game file with an
    error: the director is told what is wrong with it)."""
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return not isinstance(data.get("game"), dict)


def zone_label(moment: datetime, tz: tzinfo | None, today: datetime | None = None) -> str:
    """``21:35`` on the same day as ``today``, else ``12-03 09:01``: in the game's zone ``tz``,
    as every other command says a game's times (None: the machine's zone)."""
    here = moment.astimezone(tz)
    if today is not None and here.date() == today.astimezone(tz).date():
        return f"{here:%H:%M}"
    return f"{here:%m-%d %H:%M}"


def report_summary(report: Any) -> tuple[str, list[str]]:
    """One line for a cycle (short when nothing happened) and the lines that follow it (each
    post sent, in the publisher's words)."""
    posted = [p.line() if hasattr(p, "line") else str(p) for p in report.posted]
    if report.errors:
        return "本轮未完成：" + "；".join(report.errors), posted
    if report.skipped and not posted:
        return "没有新内容", posted
    parts = []
    if report.crawl is not None:
        threads = report.crawl.threads
        parts.append(
            f"读取 {sum(t.pages_fetched for t in threads)} 页，新帖 "
            f"{sum(t.new_posts for t in threads)}，变化 {sum(t.changed_posts for t in threads)}"
        )
    if report.full_reads:
        parts.append(f"重读已关门的第 {'、'.join(map(str, report.full_reads))} 天")
    if report.skipped:
        parts.append("没有新内容")
    else:
        parts.append("结论有变化" if report.verdicts_changed else "结论没有变化")
        parts.append(f"新草稿 {len(report.drafted)} 份" if report.drafted else "没有新草稿")
    if posted:
        parts.append(f"发帖 {len(posted)} 次")
    return "，".join(parts), posted


class Runner:
    """The games of ``paths`` (files and folders) and their cycles, on an injected clock.

    ``now()``: the present (aware); ``sleep(seconds)``: wait (a fake clock advances); ``cycle(
    watch, now)``: one cycle of a game, returning its report (default: :func:`run_game_cycle`);
    ``echo(line)``: the terminal; ``on_game(watch)``: called whenever a game file was read
    without error (the console shows it)."""

    def __init__(
        self,
        paths: Sequence[Path],
        *,
        now: Callable[[], datetime],
        sleep: Callable[[float], Any] | None = None,
        echo: Callable[[str], Any] = click.echo,
        db: str | None = None,
        env: Mapping[str, str] | None = None,
        every: int = EVERY_MINUTES,
        cycle: Callable[[GameWatch, datetime], Any] | None = None,
        on_game: Callable[[GameWatch], Any] | None = None,
    ) -> None:
        self.paths = [Path(p) for p in paths]
        self.now = now
        #: set by :meth:`stop`: the default ``sleep`` wakes at once
        self.stop_event = threading.Event()
        self.sleep = sleep or self.stop_event.wait
        self.echo = echo
        self.env = os.environ if env is None else env
        self.every = every
        self.cycle = cycle or (lambda watch, at: run_game_cycle(watch, at, self.now))
        self.on_game = on_game
        self.stopping = False
        self.watches: dict[Path, GameWatch] = {}
        self._others: dict[Path, _Other] = {}
        self._missing: set[Path] = set()
        one = self._one_game_file()
        if db and not one:
            raise click.ClickException("--db 只能用于一局游戏（bansha run 给了目录或多个游戏文件）")
        if not db and not one and self.env.get(DB_ENV, "").strip():
            raise click.ClickException(
                f"环境变量 {DB_ENV} 只能用于一局游戏（bansha run 给了目录或多个游戏文件）；"
                "多局游戏各用游戏文件旁的 <名字>.db"
            )
        if one:  # a --db or BANSHA_DB under no home folder here: said at start, not when the
            resolve_db_path(self.paths[0], db, self.env)  # game file appears (PathError)
        self.db = db

    def _one_game_file(self) -> bool:
        return len(self.paths) == 1 and not self.paths[0].is_dir()

    # ----------------------------------------------------------------- the game files

    def game_files(self) -> list[Path]:
        """The files to look after now: each file given, every ``*.toml`` of each folder."""
        out: list[Path] = []
        for p in self.paths:
            if p.is_dir():
                out.extend(f for f in sorted(p.glob("*.toml")) if f.is_file())
            else:
                out.append(p)
        return list(dict.fromkeys(out))

    def refresh(self) -> None:
        """Look at the game files again: a new or changed file is read (and said), a removed
        one is let go."""
        files = self.game_files()
        for path in files:
            st = file_stat(path)
            if st is None:
                if path not in self._missing:
                    self._missing.add(path)
                    self.echo(f"找不到游戏文件：{path}（出现后开始运行）")
                self._drop(path)
                continue
            self._missing.discard(path)
            other = self._others.get(path)
            if other is not None and other.stat == st:
                continue
            watch = self.watches.get(path)
            if watch is not None and watch.stat == st:
                continue
            self.read(path)
        for path in [p for p in self.watches if p not in files]:
            self._drop(path)
            self.echo(f"{path} 已不在，不再运行它的 cycle")
        for path in [p for p in self._others if p not in files]:
            del self._others[path]

    def _drop(self, path: Path) -> None:
        self.watches.pop(path, None)
        self._others.pop(path, None)

    def read(self, path: Path) -> GameWatch | None:
        """Read ``path`` (when its bytes changed): the game, or its error said once."""
        st = file_stat(path)
        raw: bytes | None = None
        problem: str | None = None
        try:
            raw = path.read_bytes()
        except OSError as exc:
            problem = f"无法读取游戏文件 {path}：{exc.strerror or exc}"
        if raw is not None and _is_other_toml(raw):
            if path not in self._others:
                self.echo(f"跳过 {path.name}：不是游戏文件（没有 [game] 表，如夜晚行动文件）")
            self.watches.pop(path, None)
            self._others[path] = _Other(st)
            return None
        self._others.pop(path, None)
        watch = self.watches.get(path)
        if watch is None:
            watch = GameWatch(path=path, db_path=resolve_db_path(path, self.db, self.env))
            self.watches[path] = watch
        watch.stat = st
        digest = hashlib.sha256(raw).hexdigest() if raw is not None else None
        if digest is not None and digest == watch.digest:
            return watch  # same bytes: same game (or the same error, said already)
        known = watch.game is not None or watch.error is not None
        watch.digest = digest
        if problem is None:
            from pipeline.game.gamefile import GameFileError, load_game

            try:
                game = load_game(path, env=self.env, check_login=True, raw=raw)
            except GameFileError as exc:
                problem = str(exc)
            except Exception as exc:  # a file bansha cannot read must not stop the others
                log.debug("读取游戏文件 %s 时出错", path, exc_info=True)
                problem = f"读取游戏文件时出错（{type(exc).__name__}：{exc}）"
        if problem is not None:
            watch.game, watch.error, watch.next_at = None, problem, None
            self.echo(f"游戏文件有错误，跳过它（改好后自动重新读取）：{path}")
            for line in problem.splitlines():
                self.echo(f"  {line}")
            return watch
        was_broken = watch.error is not None
        watch.game, watch.error = game, None
        if was_broken:
            watch.next_at = None  # fixed: its cycle runs at once
        elif known and watch.next_at is not None:
            # the moments may have moved: the next one from the last look
            watch.next_at = next_cycle(game, self.now() - timedelta(seconds=1), self.every)
        if known:
            self.echo(f"已重新读取游戏文件：{path}（{game.game.title}）")
        else:
            self.echo(f"游戏：{game.game.title}（{game.game.id}）：{path}，数据库 {watch.db_path}")
        if self.on_game is not None:
            self.on_game(watch)
        return watch

    # ----------------------------------------------------------------- the cycles

    def stop(self) -> None:
        """Finish the cycle under way, then stop (a signal's handler calls this)."""
        self.stopping = True
        self.stop_event.set()

    def due(self, at: datetime) -> list[GameWatch]:
        return [
            w
            for w in self.watches.values()
            if w.game is not None and (w.next_at is None or w.next_at <= at)
        ]

    def run_due(self) -> int:
        """Run each game whose moment has come, once (however many moments passed): the
        number of cycles run."""
        ran = 0
        for watch in self.due(self.now()):
            if self.stopping:
                break
            # read again: an edit since the last look (even one the file's time hid) counts
            if self.read(watch.path) is not watch or watch.game is None:
                continue
            self.run_one(watch)
            ran += 1
        return ran

    def run_one(self, watch: GameWatch) -> None:
        at = self.now()
        gid = watch.label
        following: list[str] = []
        try:
            report = self.cycle(watch, at)
        except CycleLocked:
            said = "另一轮正在运行（cron 的 bansha cycle 或导演的 bansha publish），跳过"
        except Exception as exc:  # one game's failure never stops the others
            from pipeline.cli.cycle import CycleFailed

            if isinstance(exc, CycleFailed):
                said = str(exc)
            else:
                log.error("游戏 %s 的 cycle 出错（%s）", gid, type(exc).__name__)
                log.debug("%s", scrubbed(traceback.format_exc(), watch.game))  # bansha -v run
                said = scrubbed(
                    f"本轮出错（{type(exc).__name__}：{exc}），其他游戏照常运行", watch.game
                )
        else:
            said, following = report_summary(report)
            warnings = tuple(report.warnings)
            if warnings != watch.warnings:  # said when they change, not every five minutes
                following += [f"注意：{w}" for w in warnings]
                watch.warnings = warnings
        if watch.game is not None:
            watch.next_at = next_cycle(watch.game, at, self.every)
        tz = watch.game.game.tz if watch.game is not None else None  # each line its game's
        nxt = f"；下一轮 {zone_label(watch.next_at, tz, at)}" if watch.next_at else ""
        self.echo(f"{zone_label(at, tz)} {gid}：{said}{nxt}")
        for line in following:
            self.echo(f"  {line}")

    def next_wake(self) -> float:
        """Seconds until the earliest game's moment (at most :data:`NAP_S`)."""
        now = self.now()
        moments = [w.next_at for w in self.watches.values() if w.game is not None]
        if any(m is None for m in moments):
            return 0.0
        if not moments:
            return NAP_S
        first = min(m for m in moments if m is not None)
        return max(0.0, min(NAP_S, (first - now).total_seconds()))

    def run_forever(self, until: Callable[[], bool] | None = None) -> None:
        """Look, run what is due, nap; until :meth:`stop` (or ``until()`` says so)."""
        self.refresh()
        while not self.stopping and not (until is not None and until()):
            self.run_due()
            if self.stopping or (until is not None and until()):
                break
            wait = self.next_wake()
            if wait > 0:
                self.sleep(wait)
            self.refresh()


def scrubbed(text: str, game: Any) -> str:
    """``text`` without the login cookie's values (an unexpected error's message may quote a
    request): what the terminal and the store are told."""
    from pipeline.store.scrub import scrub_text

    cookie = os.environ.get(game.forum.cookie_env, "") if game is not None else ""
    values = [part.partition("=")[2].strip() for part in cookie.split(";")]
    return scrub_text(text, [cookie, *values])


def run_game_cycle(
    watch: GameWatch,
    at: datetime,
    clock: Callable[[], datetime],
) -> Any:
    """One cycle of ``watch``'s game, as ``bansha cycle`` runs it: the store opened for it and
    closed afterwards (nothing is held between cycles). An error ``bansha cycle`` would stop on
    with a traceback is recorded as the cycle's failure (``bansha status``, the console, the
    notification) and raised."""
    from pipeline.cli import GameContext
    from pipeline.cli.cycle import CycleFailed, cycle_once
    from pipeline.notify import notify_after_cycle

    game = watch.game
    tz = game.game.tz
    now = at.astimezone(tz)
    ctx = GameContext(watch.path, game, watch.db_path, game_digest=watch.digest)
    try:
        return cycle_once(ctx, now, clock=lambda: clock().astimezone(tz))
    except (CycleLocked, CycleFailed):
        raise
    except Exception as exc:
        try:
            message = scrubbed(f"本轮出错（{type(exc).__name__}：{exc}）", game)
            notify_after_cycle(ctx.game, ctx.store, None, now, error=message)
        except Exception:  # the store itself may be what failed
            log.warning("无法记录本轮的失败以发送提醒", exc_info=True)
        raise
    finally:
        ctx.close()


# --------------------------------------------------------------------------- the console


class ConsoleThread:
    """The console (``bansha serve``'s app) in uvicorn, in a thread; started with the first game
    read without error, shown each game as its file says it now."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        new_token: bool,
        secure_cookie: bool,
        clock: Callable[[], datetime] | None,
        echo: Callable[[str], Any],
        public_url: str | None = None,
    ) -> None:
        self.host, self.port, self.public_url = host, port, public_url
        self.new_token, self.secure_cookie, self.clock = new_token, secure_cookie, clock
        self.echo = echo
        self.server: Any = None
        self.thread: threading.Thread | None = None
        self.console: Any = None
        self.failed = False

    def show(self, watch: GameWatch) -> None:
        from pipeline.console.games import GameSpec

        if self.failed:
            return
        spec = GameSpec(
            path=watch.path, file_game=watch.game, db_path=watch.db_path, file_stat=watch.stat
        )
        if self.console is None:
            self._start(spec)
            return
        games = self.console.games
        same = [gid for gid, s in games.items() if s.path == watch.path]
        if spec.id in games and games[spec.id].path != watch.path:
            self.echo(
                f"注意：{watch.path} 的 game.id（{spec.id}）与另一个游戏文件相同，控制台不显示它"
            )
            return
        for gid in same:
            if gid != spec.id:
                games.pop(gid, None)
        games[spec.id] = spec

    def _start(self, spec: Any) -> None:
        from pipeline.console.app import create_app
        from pipeline.console.auth import TokenError
        from pipeline.console.cli import resolve_token
        from pipeline.console.hosts import PublicUrlError

        try:
            token_hash, shown, source = resolve_token([spec], new=self.new_token)
            app = create_app(
                [spec],
                token_hash,
                clock=self.clock,
                https_only=self.secure_cookie,
                host=self.host,
                port=self.port,
                public_url=self.public_url,
            )
        except (TokenError, PublicUrlError) as exc:
            self.failed = True
            self.echo(f"控制台没有启动：{exc}")
            return
        self._listen(app, shown, source)

    def _listen(self, app: Any, shown: str | None, source: str) -> None:
        import uvicorn

        from pipeline.console.cli import LOOPBACK

        self.console = app.state.console
        config = uvicorn.Config(
            app,
            host=self.host,
            port=self.port,
            log_level="warning",
            access_log=False,
            server_header=False,
            ws="none",  # the console has no WebSocket: its protocol is never loaded
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._serve, name="bansha-console", daemon=True)
        self.thread.start()
        while not self.server.started and self.thread.is_alive():
            self.thread.join(0.05)
        if not self.server.started:
            self.failed = True
            self.echo(
                f"控制台没有启动：{self.host}:{self.port} 无法监听（端口被占用？用 --port 换一个，"
                "或 --no-console 不启动控制台）；cycle 照常运行"
            )
            return
        shown_host = f"[{self.host}]" if ":" in self.host else self.host
        self.echo(f"bansha 控制台：http://{shown_host}:{self.port}/")
        self.echo(source)
        if shown is not None:
            self.echo(f"登录令牌（只显示这一次，请妥善保存）：{shown}")
        if self.host not in LOOPBACK:
            self.echo(
                f"注意：正在监听 {self.host}，同一网络中的设备都能连上（明文 HTTP）。"
                "只在可信的局域网这样用；"
                "从外网访问请用 SSH 隧道或带 TLS 的反向代理（见 docs/控制台.md）。"
            )

    def _serve(self) -> None:
        with contextlib.suppress(SystemExit):  # uvicorn exits when it cannot bind (_start says)
            self.server.run()

    def stop(self) -> None:
        if self.server is not None and self.thread is not None:
            self.server.should_exit = True
            self.thread.join(timeout=10)


# --------------------------------------------------------------------------- signals


def stop_on_signals(runner: Runner, echo: Callable[[str], Any]) -> Callable[[], None]:
    """SIGINT, SIGTERM and (Windows: Ctrl+Break, the console window closed) SIGBREAK: the
    first finishes the cycle under way and stops, a second stops at once. Returns the undo."""
    names = ["SIGINT", "SIGTERM", "SIGBREAK"]
    wanted = [getattr(signal, n) for n in names if hasattr(signal, n)]
    old: dict[int, Any] = {}

    def handler(signum: int, frame: Any) -> None:
        if runner.stopping:
            raise KeyboardInterrupt
        runner.stop()
        echo("收到停止信号：完成正在进行的一轮后停止（再按一次 Ctrl+C 立即停止）")

    for sig in wanted:
        try:
            old[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread, or not on this system
            continue

    def undo() -> None:
        for sig, previous in old.items():
            signal.signal(sig, previous)

    return undo


def _fixed_start_clock(start: datetime) -> Callable[[], datetime]:
    """A clock that reads ``start`` now and runs on from there at the real pace."""
    offset = start - datetime.now(UTC)
    return lambda: datetime.now(UTC) + offset


def _start_clock(as_of: str | None) -> Callable[[], datetime] | None:
    """``--as-of``: a clock that starts there and runs at the real pace (None: the real one)."""
    from pipeline.cli import time_option

    if as_of is None:
        return None
    return _fixed_start_clock(time_option(as_of, None))  # zone-less: the machine's zone


@click.command("run")
@click.argument(
    "paths",
    nargs=-1,
    type=click.Path(path_type=Path),
    metavar="[GAME.toml | 目录 ...]",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="数据库路径（只用于一局游戏；默认：游戏文件旁的 <游戏文件名>.db，或环境变量 BANSHA_DB）。",
)
@click.option(
    "--every",
    type=click.IntRange(1, 59),
    default=EVERY_MINUTES,
    show_default=True,
    help="平时每隔几分钟运行一轮（与 bansha schedule --every 相同）。",
)
@console_options
@click.option("--no-console", is_flag=True, help="不启动控制台，只按时运行 cycle。")
@click.option(
    "--as-of",
    "as_of",
    default=None,
    help="从这个时间开始运行（ISO 8601，带时区；之后照常走）。用于演示或演练，默认现在。",
)
def run(
    paths: tuple[Path, ...],
    db_path: str | None,
    every: int,
    host: str,
    port: int,
    public_url: str | None,
    new_token: bool,
    secure_cookie: bool,
    no_console: bool,
    as_of: str | None,
) -> None:
    """一直运行：按时运行每局游戏的 cycle，同时提供导演控制台（代替 cron 和 bansha serve）。

    \b
    用法举例：
      bansha run 我的游戏.toml           一局游戏
      bansha run 游戏目录/               目录中的每个游戏文件（其他 .toml 跳过）
      bansha run 游戏目录/ --port 9000   控制台换个端口

    运行 cycle 的时刻与 bansha schedule 写进 crontab 的相同：平时每 5 分钟一轮，另在每天关门后
    一分钟、投票提醒时刻（写了 [forum] fid 时还有开门时刻）各一轮；启动时每局先运行一轮。
    每轮和 bansha cycle 一样抓取、判票、起草、发出导演已批准的草稿、发送提醒（[notify]），
    并持有同一把锁：同一局游戏的 cron 与 bansha run 不会同时运行一轮（另一轮正在运行时跳过）。
    终端里每轮一行：做了什么、这局游戏的下一轮在什么时候（没有新内容时只有一行短句）。

    一局游戏出错不影响其他游戏；游戏文件改动后下一轮重新读取；有错误的游戏文件只报告一次
    （改好之前跳过它）。按 Ctrl+C（或 kill，Windows 关闭窗口）时完成正在进行的一轮后停止；
    电脑睡眠醒来后每局游戏补运行一轮（不是每个错过的时刻一轮）。

    控制台的选项与 bansha serve 相同（令牌的说明见 bansha serve --help）；--no-console 不启动它。
    不写游戏文件时，用环境变量 BANSHA_GAME 指定的文件或当前目录中的游戏文件。
    """
    from pipeline.cli import find_game_file

    if not paths:
        paths = (find_game_file()[0],)
    shown_clock = _start_clock(as_of)
    clock: Callable[[], datetime] = shown_clock or (lambda: datetime.now(UTC))
    console = (
        None
        if no_console
        else ConsoleThread(
            host=host,
            port=port,
            new_token=new_token,
            secure_cookie=secure_cookie,
            clock=shown_clock,
            echo=click.echo,
            public_url=public_url,
        )
    )
    runner = Runner(
        list(paths),
        now=clock,
        db=db_path,
        every=every,
        on_game=console.show if console is not None else None,
    )
    undo = stop_on_signals(runner, click.echo)
    click.echo(f"bansha run：每 {every} 分钟一轮，另在关门、提醒等时刻；按 Ctrl+C 停止。")
    try:
        runner.run_forever()
    except KeyboardInterrupt:
        click.echo("已立即停止（正在进行的一轮没有完成；下一次运行会接着完成）。")
        return
    finally:
        undo()
        if console is not None:
            console.stop()
    click.echo("已停止。")
