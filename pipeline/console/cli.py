"""``bansha serve GAME.toml [GAME.toml ...]``: the director's console on a local port.

Defined here with ``@click.command("serve")``; ``pipeline.cli`` registers it on the root group.
Binds 127.0.0.1 unless ``--host`` says otherwise; docs/控制台.md tells how to reach it from a
phone (an SSH tunnel, or a reverse proxy with TLS).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from pipeline.console.auth import (
    TOKEN_ENV,
    TokenError,
    env_token,
    hash_token,
    new_token,
    read_hash,
    token_file_for,
    write_hash,
)
from pipeline.console.games import GameSpec, GameSpecError, load_specs

__all__ = ["resolve_token", "serve"]

LOOPBACK = ("127.0.0.1", "localhost", "::1")


def resolve_token(
    specs: list[GameSpec], *, new: bool, env: Mapping[str, str] | None = None
) -> tuple[str, str | None, str]:
    """The token's hash, the token to print once (only when it was just made), and where the
    token comes from (said to the director). A token from the environment must be strong
    enough (:func:`pipeline.console.auth.token_weakness`)."""
    token_hash, shown, source = token_for(specs, new=new, env=env)
    return token_hash if isinstance(token_hash, str) else token_hash(), shown, source


def token_for(
    specs: list[GameSpec], *, new: bool, env: Mapping[str, str] | None = None
) -> tuple[str | Callable[[], str], str | None, str]:
    """:func:`resolve_token`, the hash of a token from the environment left to make (a
    function: :class:`pipeline.console.auth.TokenSource` makes it when first needed, at the
    first login, not before the console answers)."""
    env = os.environ if env is None else env
    from_env = env_token(dict(env))
    if from_env is not None:
        if new:
            raise TokenError(f"已设置环境变量 {TOKEN_ENV}，不能同时用 --new-token")
        return (
            lambda: hash_token(from_env),
            None,
            f"令牌来自环境变量 {TOKEN_ENV}（不写入任何文件）",
        )
    path = token_file_for(specs[0].path)
    stored = None if new else read_hash(path)
    if stored is not None:
        return (
            stored,
            None,
            f"令牌是首次启动时显示的那个（{path} 只保存了它的哈希）；忘了就用 --new-token 重新生成",
        )
    token = new_token()
    token_hash = hash_token(token)
    write_hash(path, token_hash)
    return token_hash, token, f"新令牌的哈希已保存到 {path}（权限 600），令牌本身不保存"


def _fixed_clock(as_of: str | None, spec: GameSpec) -> Callable[[], datetime] | None:
    """``--as-of``: the pages judge by that time (a time without a zone is the game's)."""
    from pipeline.cli import time_option

    if as_of is None:
        return None
    fixed = time_option(as_of, spec.tz)
    return lambda: fixed


def _announce(
    specs: list[GameSpec],
    host: str,
    port: int,
    public_url: str | None,
    source: str,
    shown: str | None,
) -> None:
    """What ``bansha serve`` says as it starts: where, which games, the token."""
    shown_host = f"[{host}]" if ":" in host else host
    click.echo(f"bansha 控制台：http://{shown_host}:{port}/（{len(specs)} 局游戏）")
    if public_url:
        click.echo(f"对外地址：{public_url}")
    for spec in specs:
        click.echo(f"  {spec.title}（{spec.id}）：{spec.db_path}")
    click.echo(source)
    if shown is not None:
        click.echo(f"登录令牌（只显示这一次，请妥善保存）：{shown}")
    if host not in LOOPBACK:
        click.echo(
            f"注意：正在监听 {host}，同一网络中的设备都能连上（明文 HTTP）。"
            "只在可信的局域网这样用；"
            "从外网访问请用 SSH 隧道或带 TLS 的反向代理（见 docs/控制台.md）。",
            err=True,
        )
    click.echo("按 Ctrl+C 停止。")


def console_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The console's listening options, the same on ``bansha serve`` and ``bansha run``:
    ``--host``, ``--port``, ``--public-url``, ``--new-token``, ``--secure-cookie``."""
    for option in reversed(_CONSOLE_OPTIONS):
        command = option(command)
    return command


_CONSOLE_OPTIONS = (
    click.option(
        "--host",
        default="127.0.0.1",
        show_default=True,
        help="监听的地址（默认只有本机能访问；局域网用 0.0.0.0，见 docs/控制台.md）。",
    ),
    click.option(
        "--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="端口。"
    ),
    click.option(
        "--public-url",
        default=None,
        help="浏览器打开控制台用的地址（经反向代理或别的名字访问时），"
        "如 https://console.example.org/；控制台只回答 127.0.0.1、localhost、[::1]（带端口）、"
        "--host 的地址和这个地址，别的主机名一律拒绝。",
    ),
    click.option(
        "--new-token",
        is_flag=True,
        help="生成新的登录令牌（旧令牌随即失效，用旧令牌登录的会话全部结束，正在运行的控制台也一样）。",
    ),
    click.option(
        "--secure-cookie",
        is_flag=True,
        help="会话 Cookie 只经 HTTPS 发送（经带 TLS 的反向代理访问时使用）。",
    ),
)


@click.command("serve")
@click.argument(
    "game_files",
    nargs=-1,
    required=False,
    type=click.Path(path_type=Path),
    metavar="[GAME.toml ...]",
)
@click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="数据库路径（只用于一局游戏；默认：游戏文件旁的 <游戏文件名>.db，或环境变量 BANSHA_DB）。",
)
@console_options
@click.option(
    "--as-of",
    "as_of",
    default=None,
    help="按这个时间显示（ISO 8601，带时区；默认现在）。用于演示或复核。",
)
def serve(
    game_files: tuple[Path, ...],
    db_path: str | None,
    host: str,
    port: int,
    public_url: str | None,
    new_token: bool,
    secure_cookie: bool,
    as_of: str | None,
) -> None:
    """导演控制台：在浏览器（也可以是手机）里看总览、批准草稿、确认违规、记录夜晚行动。

    可以给一个或多个游戏文件，也可以给一个目录（其中所有游戏文件）；不写时和其他命令一样，
    用环境变量 BANSHA_GAME 指定的文件，或当前目录中唯一的游戏文件。需要登录：令牌来自环境变量
    BANSHA_CONSOLE_TOKEN（至少 20 个字符的随机令牌），或首次启动时生成并显示一次（只存哈希）。
    退出登录即结束该会话（复制的 Cookie 也随之失效），“退出所有设备”结束全部会话；
    控制台重启或换了令牌，所有会话都结束。同一地址 5 分钟内最多试错 5 次令牌（只锁这个地址）。
    控制台只回答自己的地址（127.0.0.1、localhost、--host、--public-url）。
    控制台从不发帖：批准的草稿由下一轮 bansha cycle 发出。

    \b
    例：bansha serve game.toml
        bansha serve games/ --public-url https://console.example.org/ --secure-cookie
    """
    from pipeline.cli import game_file_or_default
    from pipeline.console.hosts import HostPolicy, PublicUrlError

    paths = list(game_files) or [game_file_or_default(None)]
    try:
        policy = HostPolicy.of(host, port, public_url)
        specs = load_specs(paths, db_path)
        token_hash, shown, source = token_for(specs, new=new_token)
    except (GameSpecError, TokenError, PublicUrlError) as exc:
        raise click.ClickException(str(exc)) from exc
    clock = _fixed_clock(as_of, specs[0])
    for spec in specs:
        if not spec.db_exists:
            click.echo(
                f"注意：{spec.id} 的数据库 {spec.db_path} 还不存在（先运行 bansha init）", err=True
            )

    import uvicorn

    from pipeline.console.app import create_app

    from_file = env_token(dict(os.environ)) is None
    app = create_app(
        specs,
        token_hash,
        clock=clock,
        https_only=secure_cookie,
        token_file=token_file_for(specs[0].path) if from_file else None,
        host=host,
        port=port,
        public_url=public_url,
    )
    _announce(specs, host, port, policy.public_url, source, shown)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        server_header=False,
        ws="none",  # the console has no WebSocket: its protocol is never loaded
    )
