"""The ``bansha`` command line.

Every command takes the game file first; it may be left out when the environment variable
``BANSHA_GAME`` names it, or when the current folder holds exactly one game file (a ``.toml``
with a ``[game]`` table: the demo's post script and night-actions files are not game files).
Expected failures exit 1 with one Chinese line on stderr; usage errors exit 2. stdout carries
the result; logs go to stderr.

Read-only commands (``game_command(readonly=True)``) open an existing store read-only (SQLite
``mode=ro``, no migration): they never create a store, never write one, and say so when there
is none yet.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import logging
import os
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, overload

import click

import pipeline.cli.zh  # noqa: F401  (before any command: click speaks Chinese)
from pipeline import PathError, expand_home, resolve_db_path
from pipeline.cli import examples

if TYPE_CHECKING:  # the command line starts fast: a command imports what it uses
    import httpx

    from pipeline.game.gamefile import Game
    from pipeline.store import Store

F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger("bansha")

#: the environment variable naming the game file when a command is given none
GAME_ENV = "BANSHA_GAME"


def _setup_logging(verbose: bool) -> None:
    from pipeline.cli.logzh import setup_logging  # Chinese level names; our own request lines

    setup_logging(verbose)


#: every command: its name → (module that defines it, attribute to add or None when the module
#: registers it with ``@cli.command``, its one-line help, hidden). Loaded only when run, so
#: ``bansha --help`` imports none of them; a test checks each line against the command itself.
LAZY_COMMANDS: dict[str, tuple[str, str | None, str, bool]] = {
    "card": ("pipeline.cli.votes", None, "手动给牌（give），撤销一张牌（revoke）。", False),
    "cards": (
        "pipeline.cli.votes",
        None,
        "牌的台账：每位玩家的蓝/黄/红牌（3 蓝折 1 黄，3 黄折 1 红），红牌出局，阵营判负。",
        False,
    ),
    "check": (
        "pipeline.cli.setup",
        None,
        "检查游戏文件：不创建、不写数据库；没有问题时打印摘要，有问题时列出每一处。",
        False,
    ),
    "crawl": (
        "pipeline.cli.foundation",
        None,
        "抓取游戏帖子存入数据库（增量：只读最后一页及之后的新页面）。",
        False,
    ),
    "cycle": (
        "pipeline.cli.cycle",
        None,
        "运行一轮：抓取 → 判票与统计 → 起草到期的草稿 → 发布导演已批准的草稿。",
        False,
    ),
    "day": (
        "pipeline.cli.engine",
        None,
        "白天：记录白天的决定（add：装傻、翻牌、最后一枪、殉职），结算投票结果（resolve）。",
        False,
    ),
    "deal": (
        "pipeline.cli.forum_life",
        "deal_cmd",
        "按规则集的配置随机发牌，写进游戏文件，并起草可以公开的发牌承诺（SHA-256）。",
        False,
    ),
    "demo": (
        "pipeline.cli.demo",
        None,
        "在本机启动模拟论坛（示例游戏：12 名玩家、两天），按时运行几轮 cycle 并打印汇总。",
        False,
    ),
    "drafts": ("pipeline.cli.drafts", None, "草稿：列出、查看、修改、批准、驳回、起草。", False),
    "flags": (
        "pipeline.cli.votes",
        None,
        "违规标记：列出、确认（confirm）、驳回（dismiss）、撤销决定（revoke）。",
        False,
    ),
    "init": (
        "pipeline.cli.foundation",
        None,
        "创建（或升级）游戏的数据库，并登记游戏文件中的帖子。",
        False,
    ),
    "lastwords": (
        "pipeline.cli.lastwords",
        None,
        "遗言：记录玩家发给导演的遗言（add）、列出（list）、撤销（remove）。",
        False,
    ),
    "new": (
        "pipeline.cli.setup",
        None,
        "写一个新的游戏文件：按这个规则集的示例，标出要改的「示例」值（不会覆盖已有的文件）。",
        False,
    ),
    "night": (
        "pipeline.cli.engine",
        None,
        "夜晚行动：记录（add）、列出（list）、撤销（remove）、结算（resolve）。",
        False,
    ),
    "player": ("pipeline.cli.votes", None, "导演记录的玩家信息。", False),
    "post": ("pipeline.cli.post", None, "", True),
    "posts": (
        "pipeline.cli.foundation",
        None,
        "列出某天各帖子中已抓取的帖子（楼层、时间、作者、内容首行）。只读数据库。",
        False,
    ),
    "publish": (
        "pipeline.cli.post",
        None,
        "发帖：发出已批准的草稿，或登记手动发出的帖子（旧名 post 也可用）。",
        False,
    ),
    "report": (
        "pipeline.cli.report",
        None,
        "当天的计票报告：一个独立的 HTML 页面（不联网、无脚本），手机和电脑都能看。",
        False,
    ),
    "run": (
        "pipeline.console.run",
        "run",
        "一直运行：按时运行每局游戏的 cycle，同时提供导演控制台（代替 cron 和 bansha serve）。",
        False,
    ),
    "schedule": (
        "pipeline.cli.cycle",
        None,
        "打印这局游戏的 crontab 行：平时每隔几分钟一轮，另在每天关门和提醒时刻各运行一轮。",
        False,
    ),
    "serve": (
        "pipeline.console.cli",
        "serve",
        "导演控制台：在浏览器（也可以是手机）里看总览、批准草稿、确认违规、记录夜晚行动。",
        False,
    ),
    "signup": (
        "pipeline.cli.forum_life",
        "signup",
        "读报名帖，把报名的账号（论坛名字与 uid 取自网页）按报名顺序写进游戏文件的 [[players]]。",
        False,
    ),
    "state": (
        "pipeline.cli.engine",
        None,
        "引擎状态（仅导演可见）：每人的身份牌与存活、当前身份、狼群、警长、状态、技能次数。",
        False,
    ),
    "status": (
        "pipeline.console.status",
        "status",
        "总览：每局游戏的规则集、阶段、下一次关门、待批准草稿、待确认违规、上一轮 cycle 和论坛。",
        False,
    ),
    "tally": (
        "pipeline.cli.tally",
        None,
        "计票：按发帖顺序列出每一票（有效/无效及理由）、票数（含权重）、结果和违规标记。",
        False,
    ),
    "templates": (
        "pipeline.cli.setup",
        None,
        "把 bansha 的默认草稿模板（*.j2）复制到一个目录，供修改（不会覆盖已有的文件）。",
        False,
    ),
    "threads": (
        "pipeline.cli.threads",
        None,
        "列出这局游戏每天的帖子：游戏文件里写的、bansha 开的、等待开帖的草稿，以及投票帖的锁帖。",
        False,
    ),
    "undo": (
        "pipeline.cli.undo",
        None,
        "撤销导演的记录（违规标记的决定、牌、代投、票权修正、出局、替补、警长、加速、行动）和对草稿的批准或驳回。",
        False,
    ),
    "vote": (
        "pipeline.cli.votes",
        None,
        "导演记录的投票信息：代投（proxy）、票权修正（modifier）、警长（sheriff）、加速（speed）。",
        False,
    ),
    "why": (
        "pipeline.cli.votes",
        None,
        "解释一位玩家某天的票、发言数和违规标记，每条都附帖子链接。",
        False,
    ),
}


class LazyGroup(click.Group):
    """click's lazy-group pattern: a command's module is imported when the command is used
    (``--help`` lists them from :data:`LAZY_COMMANDS` without importing any)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.commands) | set(LAZY_COMMANDS))

    def invoke(self, ctx: click.Context) -> Any:
        """The command, a path it was given that names no home folder here said in Chinese
        (``--db ~nosuchuser/game.db``) instead of a traceback."""
        try:
            return super().invoke(ctx)
        except PathError as exc:
            raise click.ClickException(str(exc)) from exc

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            load_command(cmd_name)
        command = self.commands.get(cmd_name)
        if command is not None:
            examples.attach(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            if name in self.commands:
                cmd = self.commands[name]
                if cmd.hidden:
                    continue
                rows.append((name, cmd.get_short_help_str(limit=formatter.width)))
            elif not LAZY_COMMANDS[name][3]:
                rows.append((name, LAZY_COMMANDS[name][2]))
        if rows:
            with formatter.section("命令"):
                formatter.write_dl(rows)


def load_command(name: str) -> None:
    """Import the module of command ``name`` (it registers itself, or is added here)."""
    module_name, attr, _, _ = LAZY_COMMANDS[name]
    module = importlib.import_module(module_name)
    if attr is not None and name not in cli.commands:
        cli.add_command(getattr(module, attr), name)


def load_all_commands() -> None:
    """Every command loaded (for tests and for tools that walk the command tree), each with
    its example (:mod:`pipeline.cli.examples`)."""
    for name in LAZY_COMMANDS:
        load_command(name)
    for name, command in cli.commands.items():
        examples.attach(command, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="在标准错误输出显示过程信息。")
@click.version_option(package_name="bansha", message="bansha %(version)s")
def cli(verbose: bool) -> None:
    """bansha：Discuz! 论坛版杀的导演助手。

    抓取游戏帖子存入 SQLite，计票、统计潜水、标记违规、起草公示。
    每个命令的第一个参数是游戏文件（TOML）；不写时用环境变量 BANSHA_GAME 指定的文件，
    或当前目录中唯一的游戏文件。
    """
    _setup_logging(verbose)


def console_streams() -> None:
    """stdout and stderr that never fail on a character their encoding lacks: a Windows
    console (or a file redirected there) with code page GBK/cp936 has no emoji and no rare
    character of a player's name or a file's, and a message naming one must still be shown —
    with ``?`` in its place — not end in a traceback. UTF-8 streams are left as they are."""
    import codecs
    import sys

    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None) or "utf-8"
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and codecs.lookup(encoding).name != "utf-8":
            reconfigure(errors="replace")


def main() -> None:
    """The ``bansha`` program (the installed entry point): :func:`console_streams`, then the
    command line."""
    console_streams()
    cli()


cli.epilog = examples.epilog("")


# --------------------------------------------------------------------------- the store


class GameContext:
    def __init__(
        self,
        game_path: Path,
        game: Game,
        db_path: Path,
        *,
        readonly: bool = False,
        game_digest: str | None = None,
    ) -> None:
        self.game_path = game_path
        #: SHA-256 of the game file's bytes the game was parsed from
        self.game_digest = game_digest
        #: the game as the file says it (:attr:`game` adds the threads bansha opened)
        self.file_game = game
        self._game: Game | None = None
        self.db_path = db_path
        #: a read-only command: the store is opened read-only and must exist
        self.readonly = readonly
        self._store: Store | None = None

    @property
    def game(self) -> Game:
        """The game every command works on: the file's, with the threads bansha opened in the
        store where the file has no tid (the file's tid wins; pipeline.game.threads)."""
        if self._game is None:
            from pipeline.game.threads import opened_threads, with_opened

            rows = opened_threads(self.store) if self.db_path.exists() else []
            self._game = with_opened(self.file_game, rows)
        return self._game

    @game.setter
    def game(self, game: Game) -> None:
        self._game = game

    def refresh_threads(self) -> Game:
        """:attr:`game` built again from the file's game and the threads bansha opened as the
        store says now (after a publish that opened a day's threads, in the same process: the
        demo; in the cycle once it holds the game's lock, so that a publish that opened one
        before is counted)."""
        from pipeline.game.threads import opened_threads, with_opened

        rows = opened_threads(self.store) if self.db_path.exists() else []
        self._game = with_opened(self.file_game, rows)
        return self._game

    def adopt_store(self, store: Store) -> None:
        """Work on ``store``, already open on :attr:`db_path` (the light cycle opened it under
        the game's lock); closed with this context."""
        if self._store is not None and self._store is not store:
            self._store.close()
        self._store = store

    def close(self) -> None:
        """Close the store (the last connection folds the WAL back into the file)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
        from pipeline.store import StoreError, open_store, open_store_readonly

        if self._store is None:
            try:
                if self.readonly:
                    self._store = open_store_readonly(self.db_path)
                else:
                    self._store = open_store(self.db_path)
            except StoreError as exc:
                raise click.ClickException(str(exc)) from exc
        return self._store


# --------------------------------------------------------------------------- the game file


def _is_game_data(data: Mapping[str, Any]) -> bool:
    return isinstance(data.get("game"), dict)


def find_game_file(
    cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> tuple[Path, str]:
    """The game file a command uses when given none, and where it came from (Chinese).

    ``BANSHA_GAME`` first; else the one game file in ``cwd`` (a ``.toml`` whose top level has
    a ``[game]`` table — post scripts and night-actions files have none). Raises
    :class:`click.UsageError` (Chinese, exit 2) when there is none or more than one, and
    :class:`click.ClickException` when ``BANSHA_GAME`` names no file.
    """
    env = os.environ if env is None else env
    if named := env.get(GAME_ENV, "").strip():
        path = expand_home(named)
        if not path.is_file():
            raise click.ClickException(
                f"环境变量 {GAME_ENV} 指向的游戏文件不存在：{path}"
                f"（改正它，或在命令里写出游戏文件）"
            )
        return path, f"环境变量 {GAME_ENV}"
    import tomllib  # only a command given no game file looks for one

    folder = Path.cwd() if cwd is None else cwd
    games: list[Path] = []
    unreadable: list[Path] = []
    for path in sorted(folder.glob("*.toml")):
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_bytes().decode("utf-8-sig"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            unreadable.append(path)
            continue
        if _is_game_data(data):
            games.append(path)
    how = (
        f"请在命令里写出游戏文件（如 bansha tally 我的游戏.toml），"
        f"或用环境变量 {GAME_ENV} 指定（export {GAME_ENV}=路径/我的游戏.toml）"
    )
    if len(games) == 1:
        return games[0], "当前目录中唯一的游戏文件"
    if games:
        names = "、".join(p.name for p in games)
        raise click.UsageError(
            f"没有指定游戏文件，当前目录 {folder} 中有 {len(games)} 个游戏文件（{names}），"
            f"不知道用哪一个：{how}",
            click.get_current_context(silent=True),
        )
    if unreadable:
        names = "、".join(p.name for p in unreadable)
        raise click.UsageError(
            f"没有指定游戏文件，当前目录 {folder} 中没有可读的游戏文件"
            f"（{names} 不是有效的 TOML，用 bansha check 文件名 查看问题）：{how}",
            click.get_current_context(silent=True),
        )
    raise click.UsageError(
        f"没有指定游戏文件，当前目录 {folder} 中也没有游戏文件（含 [game] 表的 .toml）：{how}；"
        "还没有游戏文件时，用 bansha new 我的游戏.toml --ruleset 规则集 写一个",
        click.get_current_context(silent=True),
    )


def time_option(raw: str, tz: tzinfo | None, option: str = "--as-of") -> datetime:
    """A time a director typed for ``option`` (ISO 8601): one without a zone is in ``tz`` (None:
    the machine's zone); one that does not parse is said in Chinese, naming the option."""
    try:
        value = datetime.fromisoformat(raw)
    except ValueError as exc:
        raise click.BadParameter(
            f"时间格式应为 2026-12-02T21:30:00+08:00：{raw}", param_hint=option
        ) from exc
    if value.tzinfo is not None:
        return value
    return value.replace(tzinfo=tz) if tz is not None else value.astimezone()


def game_file_or_default(game_file: Path | None) -> Path:
    """``game_file`` as given, else :func:`find_game_file`'s (logged with its source)."""
    if game_file is not None:
        return game_file
    path, source = find_game_file()
    log.info("游戏文件：%s（%s）", path, source)
    return path


_UNSET = getattr(click.core, "UNSET", None)  # click >= 8.2: a sentinel; before: None


def _missing(value: object) -> bool:
    return value is None or value is _UNSET


def _looks_like_game_file(value: str) -> bool:
    return value.lower().endswith(".toml") or Path(value).is_file()


class GameFileArgument(click.Argument):
    """The optional first argument ``GAME.toml``.

    Left out in a command with more positional arguments (``bansha drafts show 5``), the
    parser gives the first value to the game file; a value that is not a game file (no
    ``.toml``, no such file) while the last positional argument is missing belongs to the
    arguments after it, and the game file is the default one.
    """

    def handle_parse_result(self, ctx: click.Context, opts: Any, args: list[str]) -> Any:
        value = opts.get(self.name, _UNSET)
        params = ctx.command.params
        later = [p for p in params[params.index(self) + 1 :] if isinstance(p, click.Argument)]
        if (
            isinstance(value, str)
            and later
            and all(p.nargs == 1 for p in later)
            and _missing(opts.get(later[-1].name, _UNSET))
            and not _looks_like_game_file(value)
        ):
            values = [value] + [opts.get(p.name, _UNSET) for p in later[:-1]]
            for p, v in zip(later, values, strict=True):
                opts[p.name] = v
            opts[self.name] = _UNSET
        return super().handle_parse_result(ctx, opts, args)


def game_file_argument(fn: F) -> F:
    """The optional ``[GAME.toml]`` argument (a :class:`GameFileArgument`)."""
    return click.argument(
        "game_file",
        cls=GameFileArgument,
        required=False,
        type=click.Path(dir_okay=False, path_type=Path),
        metavar="[GAME.toml]",
    )(fn)


def game_options(fn: F) -> F:
    """The game file argument (optional) and ``--db``, as every game command has them."""
    return game_file_argument(
        click.option(
            "--db",
            "db_path",
            type=click.Path(dir_okay=False),
            default=None,
            help="数据库路径（默认：游戏文件旁的 <游戏文件名>.db，或环境变量 BANSHA_DB）。",
        )(fn)
    )


def as_of_option(fn: F) -> F:
    """``--as-of``: judge as of that moment instead of now."""
    return click.option(
        "--as-of",
        "as_of",
        default=None,
        help="按这个时间判断（ISO 8601，带时区；默认现在）。用于复核历史结论。",
    )(fn)


#: the story's clock while ``bansha demo`` runs its commands on a simulated forum (the forum's
#: clock and every command's present are then the same moment); None: the machine's clock
_story_clock: Callable[[], datetime] | None = None


def clock(tz: tzinfo) -> datetime:
    """The present in ``tz``: what a command means by "now" when not given ``--as-of``, and
    the time a forum write is stamped with — the machine's clock, or inside
    :func:`story_clock` the demo's simulated one."""
    if _story_clock is not None:
        return _story_clock().astimezone(tz)
    return datetime.now(tz)


@contextmanager
def story_clock(now: Callable[[], datetime]) -> Iterator[None]:
    """While the demo tells its simulated story: the commands it runs take ``now`` (the
    simulator's clock) for the present, so no real time mixes into the story."""
    global _story_clock
    saved, _story_clock = _story_clock, now
    try:
        yield
    finally:
        _story_clock = saved


def verbose() -> bool:
    """Whether ``bansha -v`` was given (the logs go to stderr)."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.find_root().params.get("verbose"))


@overload
def game_command(fn: F, *, forum: bool = ..., readonly: bool = ...) -> Callable[..., Any]: ...
@overload
def game_command(
    fn: None = None, *, forum: bool = ..., readonly: bool = ...
) -> Callable[[F], Callable[..., Any]]: ...
def game_command(
    fn: F | None = None, *, forum: bool = False, readonly: bool = False
) -> Callable[..., Any]:
    """Shared arguments: the game file (optional: ``BANSHA_GAME`` or the one game file in the
    current folder), and ``--db`` (or BANSHA_DB) for the store's path.

    ``forum=True`` marks a command that talks to the forum: only then is the login cookie
    required (for a forum that needs login). ``readonly=True`` marks a command that only reads
    the store: it opens an existing store read-only (never creates or migrates one; a missing
    store is said in Chinese, exit 1) and any write it attempts fails.
    """
    if fn is None:
        return functools.partial(game_command, forum=forum, readonly=readonly)

    @game_options
    @functools.wraps(fn)
    def wrapper(game_file: Path | None, db_path: str | None, **kwargs: Any) -> Any:
        ctx = load_context(game_file, db_path, check_login=forum, readonly=readonly)
        try:
            return fn(ctx, **kwargs)
        except sqlite3.OperationalError as exc:
            if readonly and "readonly" in str(exc):
                name = click.get_current_context().command_path
                raise click.ClickException(
                    f"内部错误：只读命令 {name} 试图写入数据库 {ctx.db_path}（没有写入任何内容）；"
                    "请报告这个问题"
                ) from exc
            raise
        finally:
            ctx.close()

    return wrapper


def load_context(
    game_file: Path | None,
    db_path: str | None,
    *,
    check_login: bool = False,
    readonly: bool = False,
) -> GameContext:
    from pipeline.game.gamefile import GameFileError, load_game

    game_file = game_file_or_default(game_file)
    if not game_file.exists():
        raise click.ClickException(f"找不到游戏文件：{game_file}")
    try:  # read once: the digest is of the very bytes parsed (an editor may save meanwhile)
        raw: bytes | None = game_file.read_bytes()
    except OSError:
        raw = None  # load_game says what is wrong
    digest = hashlib.sha256(raw).hexdigest() if raw is not None else None
    try:
        game = load_game(game_file, env=os.environ, check_login=check_login, raw=raw)
    except GameFileError as exc:
        raise click.ClickException(str(exc)) from exc
    path = resolve_db_path(game_file, db_path, os.environ)
    return GameContext(game_file, game, path, readonly=readonly, game_digest=digest)


# --------------------------------------------------------------------------- the day


@dataclass(frozen=True, slots=True)
class DefaultDay:
    """The day a command means when ``--day`` is left out: ``status`` says where that day
    stands (进行中, 已关门, 还没开门) and ``note`` is set when it is not the obvious one."""

    day: int
    status: str
    note: str | None = None


def default_day(game: Game, now: datetime) -> DefaultDay:
    """The day a director means at ``now``: the day that is open, else the last one closed
    (between days and after the game's last day); before the first day opens, the first day
    (usually day 1) with a note. Raises :class:`click.ClickException` when the game file has
    no day at all. Pure: ``now`` is an argument."""
    days = sorted(game.days, key=lambda d: d.day)
    if not days:
        raise click.ClickException("游戏文件中还没有任何一天（[[days]]）：请先写上第一天")
    for d in days:
        if d.opens <= now < d.closes:
            return DefaultDay(d.day, "进行中")
    closed = [d for d in days if d.closes <= now]
    if closed:
        return DefaultDay(closed[-1].day, "已关门")
    first = days[0]
    when = first.opens.astimezone(game.game.tz).strftime("%m-%d %H:%M")
    return DefaultDay(
        first.day, f"还没开门（{when} 开门）", f"第 {first.day} 天还没开门（{when} 开门）"
    )


def resolve_day(ctx: GameContext, day: int | None, now: datetime | None = None) -> int:
    """``--day`` as given, else :func:`default_day` at ``now`` (default: the present); its note
    goes to stderr."""
    if day is not None:
        return day
    choice = default_day(ctx.game, now or clock(ctx.game.game.tz))
    if notice := default_day_notice(choice):
        click.echo(notice, err=True)
    return choice.day


def default_day_notice(choice: DefaultDay) -> str | None:
    """The line said on stderr when the default day is not the obvious one."""
    if not choice.note:
        return None
    return f"注意：{choice.note}，先显示第 {choice.day} 天（用 --day 指定别的天）"


def day_option(
    help_text: str = "第几天（默认：今天，关门后是刚关门的那一天）。",
) -> Callable[[F], F]:
    """``--day N``, optional: leave it out and the command takes :func:`resolve_day`'s day."""
    return click.option("--day", type=int, default=None, help=help_text)


def make_http_client(timeout_s: float = 20.0) -> httpx.Client:
    """bansha's HTTP client: httpx loads here, with a request to make
    (:mod:`pipeline.discuz` keeps httpx from loading the extras bansha never uses), and the
    TLS context only for an ``https`` address (:class:`~pipeline.discuz.client.TlsWhenNeeded`)
    — unless the environment names a proxy: httpx uses those only with its own transport."""
    from urllib.request import getproxies  # where httpx reads the environment's proxies

    from pipeline.discuz.client import TlsWhenNeeded  # first: pipeline.discuz imports httpx

    # isort: split
    import httpx

    transport = None if getproxies() else TlsWhenNeeded()
    return httpx.Client(
        timeout=httpx.Timeout(timeout_s), follow_redirects=True, transport=transport
    )


def templates_dir_or_none(ctx: GameContext) -> Path | None:
    """The director's template folder (``[drafts] templates``), or None when it is wrong
    (drafting says what is wrong with it): what the 电梯 after a new discussion thread uses."""
    if ctx.game.drafts.templates is None:  # no folder: no need to load drafting to say so
        return None
    from pipeline.drafts import DraftError, templates_dir_for

    try:
        return templates_dir_for(ctx.game, ctx.game_path)
    except DraftError:
        return None
