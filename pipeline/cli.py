"""The ``bansha`` command line.

Every command takes the game file first. Expected failures exit 1 with one Chinese line on
stderr; usage errors exit 2. stdout carries the result; logs go to stderr.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
import httpx

import pipeline.cli_zh  # noqa: F401  (before any command: click speaks Chinese)
from pipeline.gamefile import Game, GameFileError, load_game, resolve_db_path
from pipeline.store import Store, StoreError, open_store

F = TypeVar("F", bound=Callable[..., Any])

log = logging.getLogger("bansha")


def _setup_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    # httpx logs every request at INFO; keep it for --verbose only
    logging.getLogger("httpx").setLevel(logging.INFO if verbose else logging.WARNING)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-v", "--verbose", is_flag=True, help="在标准错误输出显示过程信息。")
@click.version_option(package_name="bansha", message="bansha %(version)s")
def cli(verbose: bool) -> None:
    """bansha：Discuz! 论坛版杀的导演助手。

    抓取游戏帖子存入 SQLite，计票、统计潜水、标记违规、起草公示。
    每个命令的第一个参数是游戏文件（TOML）。
    """
    _setup_logging(verbose)


class GameContext:
    def __init__(self, game_path: Path, game: Game, db_path: Path) -> None:
        self.game_path = game_path
        self.game = game
        self.db_path = db_path
        self._store: Store | None = None

    def close(self) -> None:
        """Close the store (the last connection folds the WAL back into the file)."""
        if self._store is not None:
            self._store.close()
            self._store = None

    @property
    def store(self) -> Store:
        if self._store is None:
            try:
                self._store = open_store(self.db_path)
            except StoreError as exc:
                raise click.ClickException(str(exc)) from exc
        return self._store


def game_command(fn: F | None = None, *, forum: bool = False) -> Any:
    """Shared arguments: the game file, and ``--db`` (or BANSHA_DB) for the store's path.

    ``forum=True`` marks a command that talks to the forum: only then is the login cookie
    required (for a forum that needs login).
    """
    if fn is None:
        return functools.partial(game_command, forum=forum)

    @click.argument(
        "game_file", type=click.Path(dir_okay=False, path_type=Path), metavar="GAME.toml"
    )
    @click.option(
        "--db",
        "db_path",
        type=click.Path(dir_okay=False),
        default=None,
        help="数据库路径（默认：游戏文件旁的 <游戏文件名>.db，或环境变量 BANSHA_DB）。",
    )
    @functools.wraps(fn)
    def wrapper(game_file: Path, db_path: str | None, **kwargs: Any) -> Any:
        ctx = load_context(game_file, db_path, check_login=forum)
        try:
            return fn(ctx, **kwargs)
        finally:
            ctx.close()

    return wrapper  # type: ignore[return-value]


def load_context(game_file: Path, db_path: str | None, *, check_login: bool = False) -> GameContext:
    if not game_file.exists():
        raise click.ClickException(f"找不到游戏文件：{game_file}")
    try:
        game = load_game(game_file, env=os.environ, check_login=check_login)
    except GameFileError as exc:
        raise click.ClickException(str(exc)) from exc
    path = resolve_db_path(game_file, db_path, os.environ)
    return GameContext(game_file, game, path)


def make_http_client(timeout_s: float = 20.0) -> httpx.Client:
    return httpx.Client(timeout=httpx.Timeout(timeout_s), follow_redirects=True)


# register the commands defined in other modules
from pipeline import (  # noqa: E402,F401
    cmd_cycle,
    cmd_demo,
    cmd_drafts,
    cmd_engine,
    cmd_lastwords,
    cmd_post,
    cmd_report,
    cmd_votes,
    commands,
)
