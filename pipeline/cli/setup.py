"""Setting up a game: ``bansha new`` writes a starter game file, ``bansha check`` checks one.

* ``bansha new GAME.toml --ruleset ID`` writes the example of that rule set
  (``config/games/<id>.toml``) as a starter: the game id taken from the file name, the days
  moved to start tomorrow, every value the director must replace marked 「示例」. It loads as
  it is (a legal line-up), so ``bansha check`` accepts it and lists what is still an example.
  An existing file is never overwritten.
* ``bansha check [GAME.toml] [--online]`` validates the file and prints a short summary, or
  every problem (exit 1). The game's threads are those of every command: the file's and those
  bansha opened (:func:`pipeline.game.threads.game_for_store`), read from the store opened
  read-only when it exists — a store is never created or written. With ``--online`` it reads
  the first page of each of them once, as ``bansha crawl`` would (guest, or with the login
  cookie from the environment — never printed), and says what it found: the title, the pages,
  who could read it. A forum that is down is one line.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import tomllib
import unicodedata
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

import click
import httpx

from engine.kernel import EngineError
from engine.rulesets import get_ruleset
from engine.state import StateError
from parsers.pagecheck import UnusablePage
from parsers.records import PageError, PageErrorKind, ThreadPage
from pipeline import resources
from pipeline.cli import (
    cli,
    default_day,
    game_file_argument,
    game_file_or_default,
    make_http_client,
)
from pipeline.discuz.client import DiscuzClient, ForumUnavailable, RetryPolicy, SessionJar
from pipeline.discuz.crawl import FALLBACK_KINDS, SOURCE_HTML, SOURCE_MOBILE, Crawler, forum_down
from pipeline.game.gamefile import (
    RULESET_TITLES,
    RULESETS,
    THREAD_ROLE_TITLES,
    Game,
    GameFileError,
    Problem,
    ThreadRole,
    load_game,
    parse_game,
    resolve_db_path,
)

log = logging.getLogger(__name__)

#: the example game files, one per rule set (the starters ``bansha new`` writes)
EXAMPLES = resources.examples_dir()

#: builds the HTTP client for ``check --online`` (tests swap in the simulator's transport)
http_client_factory: Callable[[], httpx.Client] = make_http_client

#: the present, for ``bansha new``'s "tomorrow" (tests pin it)
clock: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731

#: ``check --online``: one retry, quickly — a director is waiting at the terminal
CHECK_RETRY = RetryPolicy(max_attempts=2, max_total_s=30.0, initial_wait_s=0.5, jitter_s=0.5)

MARK = "示例"


def example_path(ruleset: str) -> Path:
    return EXAMPLES / f"{ruleset}.toml"


# --------------------------------------------------------------------------- bansha new


def _toml_value(value: Any) -> str:
    """A TOML literal for the few value types the starter rewrites."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML literal for {value!r}")


def _width(text: str) -> int:
    """Terminal columns (a CJK character takes two), for aligning the comments."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _line(key: str, value: Any, comment: str) -> str:
    head = f"{key} = {_toml_value(value)}"
    pad = 37 - _width(head)
    return f"{head}{' ' * pad}# {comment}" if pad >= 2 else f"{head}  # {comment}"


_SHELL_SPECIAL = re.compile(r"[\s'\"$`\\|&;<>()*?\[\]{}!#~]")


def shell_word(text: str) -> str:
    """``text`` as one word a director can paste into a shell (quoted only when it must be:
    a Chinese file name stays readable)."""
    return shlex.quote(text) if not text or _SHELL_SPECIAL.search(text) else text


def game_id_from(path: Path, ruleset: str, today: date) -> str:
    """The game id a starter gets: the file's name (spaces made ``-``), else ``<id>-<month>``."""
    stem = re.sub(r"\s+", "-", path.stem.strip()).replace("/", "-").replace("\\", "-")
    return stem or f"{ruleset}-{today:%Y-%m}"


_DATETIME = re.compile(r"\b(\d{4}-\d{2}-\d{2})(T\d{2}:\d{2}(?::\d{2})?(?:[+-]\d{2}:\d{2}|Z))")

_REWRITES: Mapping[tuple[str, str], str] = {
    ("game", "title"): f"{MARK}：改成你的游戏标题（写进草稿和报告）",
    ("forum", "base_url"): f"{MARK}：改成你的论坛根地址（forum.php 所在目录）",
    ("director", "names"): f"{MARK}：改成导演的论坛账号名（这些账号的帖子不计票、不计发言）",
    ("director", "uids"): f"{MARK}：导演账号的 uid（可选；改名后也认得出）",
}


#: the keys of a ``[[days]]`` entry that hold a thread's tid (left out when bansha opens them)
_THREAD_KEYS = frozenset(role.value for role in ThreadRole)


def starter_text(
    ruleset: str,
    game_id: str,
    today: date,
    file_name: str = "本文件",
    *,
    fid: int | None = None,
) -> str:
    """The starter game file for ``ruleset``: its example with ``game_id``, the days moved so
    the first opens the day after ``today``, and every value to replace marked 「示例」.

    ``fid``: bansha opens the game's threads in that forum section (``[forum] fid``), so the
    days have no tids (bansha drafts each thread before its day opens)."""
    source = example_path(ruleset)
    text = source.read_text(encoding="utf-8")
    example = tomllib.loads(text)
    first_opens = min(d["opens"] for d in example["days"])
    shift = timedelta(days=(today + timedelta(days=1) - first_opens.date()).days)
    start = first_opens.date() + shift

    def moved(m: re.Match[str]) -> str:
        return (date.fromisoformat(m.group(1)) + shift).isoformat() + m.group(2)

    lines = text.splitlines()
    body_from = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    kept = [
        line
        for line in lines[1:body_from]
        if line.startswith("#") and "复制这个文件" not in line and "示例" not in line
    ]
    secret = "、秘密表" if ruleset in example else ""
    tids = "每天的时间" if fid is not None else "每天的时间和帖子编号"
    out = [
        f"# {RULESET_TITLES[ruleset]}（规则集 {ruleset}）的游戏文件，"
        f"由 bansha new 按规则集 {ruleset} 的示例生成。",
        f"# 这是一个合法、可以直接使用的起点：标有「{MARK}」的值都是示例——",
        f"# 标题、论坛地址、导演账号、玩家名单和身份牌、{tids}{secret}，",
        "# 改成你这局游戏的。",
        "# 每个键的类型、默认值和检查见 docs/游戏文件.md。改完后：",
        f"#   bansha check {file_name}            检查（不创建数据库；还是示例的值会列出来）",
        f"#   bansha check {file_name} --online   到论坛上读每个帖子的第一页：标题、页数、能否读到",
        f"#   bansha init {file_name}             创建数据库，开始这局游戏",
        *kept,
    ]
    section = ""
    seen_players = seen_days = False
    for line in lines[body_from:]:
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped.strip("[]").strip()
            if section == "players" and not seen_players:
                seen_players = True
                out.append(
                    f"# 【{MARK}】下面的名单是示例：每个 [[players]] 的 name（论坛用户名）、"
                    "uid、aliases"
                )
                out.append(
                    "# 改成你的玩家，cards 改成你发的牌（阵容必须合法，bansha check 会检查）。"
                )
            elif section == "days" and not seen_days:
                seen_days = True
                out.append(f"# 【{MARK}】日期已排成从明天（{start.isoformat()}）开始；")
                if fid is None:
                    out.append(
                        "# 开门/关门时间和帖子编号（tid，论坛网址里的 tid=）都是示例："
                        "开帖后改成真实的编号。"
                    )
                else:
                    out.append(
                        "# 开门/关门时间是示例。帖子不用写 tid：bansha 在开门前起草每天的新帖，"
                        "导演批准后开门时开出（[forum] fid）。"
                    )
            elif section == ruleset:
                out.append(f"# 【{MARK}】秘密表的值是示例：一定要改成你这局的")
                out.append("# （bansha check 会提醒还没改的地方，但不会显示它们）。")
        key = stripped.split("=", 1)[0].strip() if "=" in stripped else ""
        if fid is not None and section == "days" and key in _THREAD_KEYS:
            continue  # bansha opens it and records its tid
        if fid is not None and section == "forum" and key == "fid":
            continue  # written below, after the section's header
        if section == "game" and key == "id":
            line = _line(
                "id", game_id, "游戏编号（取自文件名）：不含空格和 / \\，只在 bansha 内部用"
            )
        elif (section, key) in _REWRITES:
            line = _line(key, example[section][key], _REWRITES[(section, key)])
        out.append(_DATETIME.sub(moved, line))
        if fid is not None and stripped == "[forum]":
            out.append(
                _line("fid", fid, "游戏所在的版块（版块网址里的 fid=）：bansha 在这里开新帖")
            )
    return "\n".join(out) + "\n"


@cli.command("new")
@click.argument("game_file", type=click.Path(dir_okay=False, path_type=Path), metavar="GAME.toml")
@click.option(
    "--ruleset",
    type=click.Choice(RULESETS),
    required=True,
    metavar="ID",
    help="规则集：" + " / ".join(f"{rs} {RULESET_TITLES[rs]}" for rs in RULESETS) + "。",
)
@click.option(
    "--fid",
    type=click.IntRange(min=1),
    default=None,
    metavar="FID",
    help="帖子由 bansha 开：写进 [forum] fid（游戏所在版块的编号，版块网址里的 fid=），"
    "每天不写帖子编号，bansha 在开门前起草新帖、导演批准后开出。",
)
def new_cmd(game_file: Path, ruleset: str, fid: int | None) -> None:
    """写一个新的游戏文件：按这个规则集的示例，标出要改的「示例」值（不会覆盖已有的文件）。

    写出的文件可以直接使用（bansha check 接受它，并列出还是示例的值）；日期排成从明天开始。
    帖子由 bansha 开时加 --fid（版块编号）：每天不写帖子编号。
    """
    if game_file.suffix.lower() != ".toml":
        raise click.ClickException(f"游戏文件名应以 .toml 结尾（如 我的游戏.toml）：{game_file}")
    if game_file.exists():
        raise click.ClickException(
            f"{game_file} 已经存在，没有覆盖它：换一个文件名，或先把旧文件改名"
        )
    folder = game_file.parent
    if not folder.is_dir():
        raise click.ClickException(f"目录不存在：{folder}（先创建它）")
    if not example_path(ruleset).is_file():
        raise click.ClickException(
            f"找不到规则集 {ruleset} 的示例文件：{example_path(ruleset)}"
            "（bansha 的安装不完整，请重新安装）"
        )
    example = tomllib.loads(example_path(ruleset).read_text(encoding="utf-8"))
    today = clock().astimezone(ZoneInfo(example["game"]["timezone"])).date()
    text = starter_text(
        ruleset,
        game_id_from(game_file, ruleset, today),
        today,
        shell_word(game_file.name),
        fid=fid,
    )
    try:
        game = parse_game(
            tomllib.loads(text),
            source=game_file,
            env={},
            check_login=False,
            folder=folder.resolve(),
        )
    except GameFileError as exc:  # a starter that does not load is bansha's bug
        raise click.ClickException(f"内部错误：生成的游戏文件没有通过检查：{exc}") from exc
    try:
        # 0600: the file will hold the cards; O_EXCL: never overwrite one written meanwhile
        fd = os.open(game_file, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    except FileExistsError:
        raise click.ClickException(f"{game_file} 已经存在，没有覆盖它") from None
    except OSError as exc:
        raise click.ClickException(f"无法写入 {game_file}：{exc.strerror or exc}") from exc
    with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    name = shell_word(str(game_file))
    secret = f"、秘密表 [{ruleset}]" if game.secrets else ""
    start = min(d.opens for d in game.days).astimezone(game.game.tz).date()
    click.echo(
        f"已写入游戏文件 {game_file}（规则集 {ruleset}：{RULESET_TITLES[ruleset]}；"
        f"{len(game.players)} 名玩家、{len(game.days)} 天，日期从 {start.isoformat()} 开始；"
        "权限 0600，只有你能读：里面有身份牌）。"
    )
    click.echo("接下来：")
    days = (
        f"每天的时间（帖子由 bansha 在版块 fid={fid} 开出，不用写 tid）"
        if fid is not None
        else "每天的时间和帖子编号（tid）"
    )
    click.echo(
        f"  1. 打开 {name}，把标有「{MARK}」的值改成你这局游戏的：标题、论坛地址、导演账号、"
        f"玩家名单和身份牌、{days}{secret}。"
    )
    click.echo(
        f"  2. bansha check {name}            检查文件（不创建数据库；还是示例的值会列出来）"
    )
    click.echo(
        f"  3. bansha check {name} --online   到论坛上读每个帖子的第一页（标题、页数、能否读到）"
    )
    click.echo(f"  4. bansha init {name}             创建数据库，开始这局游戏")
    click.echo("每个键的说明见 docs/游戏文件.md。")


# --------------------------------------------------------------------------- bansha templates


def default_template_files() -> list[Path]:
    """bansha's own draft templates, one per kind a director may reshape."""
    from pipeline.drafts import TEMPLATE_SUFFIX, UNTEMPLATED, DraftKind

    folder = resources.templates_dir()
    names = [k.value + TEMPLATE_SUFFIX for k in DraftKind if k not in UNTEMPLATED]
    return [folder / name for name in names if (folder / name).is_file()]


@cli.command("templates")
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path), metavar="目录")
def templates_cmd(folder: Path) -> None:
    """把 bansha 的默认草稿模板（*.j2）复制到一个目录，供修改（不会覆盖已有的文件）。

    目录放在游戏文件所在的目录里，并在游戏文件的 [drafts] 写 templates = "目录名"；
    只留下你改过的模板即可，删掉的种类用默认模板。例：bansha templates 我的模板
    """
    sources = default_template_files()
    if not sources:
        raise click.ClickException(
            f"找不到默认草稿模板：{resources.templates_dir()}（bansha 的安装不完整，请重新安装）"
        )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(f"无法创建目录 {folder}：{exc.strerror or exc}") from exc
    written, kept = [], []
    for source in sources:
        target = folder / source.name
        try:
            with open(target, "xb") as fh:  # never overwrite the director's own
                fh.write(source.read_bytes())
        except FileExistsError:
            kept.append(source.name)
            continue
        except OSError as exc:
            raise click.ClickException(f"无法写入 {target}：{exc.strerror or exc}") from exc
        written.append(source.name)
    if written:
        click.echo(f"已复制 {len(written)} 个默认模板到 {folder}：{'、'.join(written)}")
    if kept:
        click.echo(f"已经存在，没有覆盖：{'、'.join(kept)}")
    click.echo(
        f'在游戏文件的 [drafts] 里写 templates = "{folder.name}"（目录要在游戏文件所在的目录里）；'
        "之后起草的草稿就用这里的模板。"
    )


# --------------------------------------------------------------------------- bansha check


def _when(dt: datetime, tz: Any) -> str:
    return dt.astimezone(tz).strftime("%m-%d %H:%M")


def example_values(game: Game) -> list[str]:
    """What in ``game`` is still the example's (``bansha new``'s starter, or a copy of
    config/games/<ruleset>.toml), one Chinese line each; never a secret's value nor a card."""
    path = example_path(game.game.ruleset)
    try:
        example = load_game(path, env={}, check_login=False)
    except (GameFileError, OSError):
        return []
    found: list[str] = []
    if game.game.title == example.game.title:
        found.append(f"game.title：标题还是示例的「{example.game.title}」")
    host = (urlsplit(game.forum.base_url).hostname or "").lower()
    if game.forum.base_url == example.forum.base_url or host.endswith(
        ("example.com", "example.org", "example.net")
    ):
        found.append(f"forum.base_url：论坛地址还是示例的 {game.forum.base_url}")
    if set(game.director.names) & set(example.director.names):
        found.append("director.names：导演账号还是示例的 " + "、".join(game.director.names))
    sample = {(p.name, p.uid) for p in example.players}
    same = [p.name for p in game.players if (p.name, p.uid) in sample]
    if same:
        found.append(
            f"players：{len(game.players)} 名玩家中有 {len(same)} 名还是示例名单（name 和 uid）"
        )
    if len(game.players) == len(example.players) and all(
        p.cards and p.cards == q.cards for p, q in zip(game.players, example.players, strict=True)
    ):
        found.append("players[].cards：身份牌与示例一张不差、顺序相同（是不是还没发你自己的牌？）")
    sample_tids = {tid for _d, _r, tid in example.thread_roles()}
    tids = sorted({tid for _d, _r, tid in game.thread_roles() if tid in sample_tids})
    if tids:
        found.append(f"days：{len(tids)} 个帖子编号还是示例的（{'、'.join(map(str, tids))}）")
    if game.secrets and game.secrets == example.secrets:
        found.append(f"{game.game.ruleset}：秘密表还是示例的值（一定要改成你这局的）")
    return found


def with_store_threads(game: Game, game_file: Path) -> tuple[Game, set[int], str | None]:
    """The game as every command sees it (:func:`pipeline.game.threads.game_for_store`): the
    file's threads and those bansha opened, read from the game's store opened read-only when
    it exists (never created, never written). Also the tids that came from the store, and a
    Chinese line when the store exists but could not be read."""
    from pipeline.game.threads import game_for_store, with_opened
    from pipeline.store import StoreError, open_store_readonly

    alone = with_opened(game, [])
    db = resolve_db_path(game_file, None, os.environ)
    if not db.is_file():
        return alone, set(), None
    try:
        store = open_store_readonly(db)
    except StoreError as exc:
        return alone, set(), f"{exc}；摘要和联网检查只包括游戏文件里的帖子，不含 bansha 开的帖子"
    try:
        full = game_for_store(game, store)
    finally:
        store.close()
    mine = {t for _d, _r, t in full.thread_roles()} - {t for _d, _r, t in alone.thread_roles()}
    return full, mine, None


def _summary(
    game: Game, game_file: Path, now: datetime, opened: Collection[int] = frozenset()
) -> list[str]:
    tz = game.game.tz
    rs = game.game.ruleset
    forum = game.forum
    login = (
        f"要登录才能看帖：Cookie 从环境变量 {forum.cookie_env} 读取"
        if forum.requires_login
        else "游客可以看帖"
    )
    cards = {len(p.cards) for p in game.players} or {0}
    dealt = (
        "还没有发牌（cards 为空：计票和违规照常，夜晚结算前要发牌）"
        if cards == {0}
        else f"每人 {'/'.join(map(str, sorted(cards)))} 张身份牌"
    )
    lines = [
        f"游戏：{game.game.title}（编号 {game.game.id}），规则集 {rs}（{RULESET_TITLES[rs]}），"
        f"时区 {game.game.timezone}",
        f"论坛：{forum.base_url}（{login}）",
        f"导演：{'、'.join(game.director.names)}",
        f"玩家：{len(game.players)} 名，{dealt}：{'、'.join(p.name for p in game.players)}"
        if game.players
        else "玩家：还没有（报名之后由 bansha signup 写进 [[players]]）",
    ]
    if not game.days:
        lines.append("天数：还没有写任何一天（[[days]]）")
    else:
        lines.append(f"天数：{len(game.days)} 天")
    missing = _to_open(game)
    for d in game.days:
        threads = "，".join(
            f"{THREAD_ROLE_TITLES[role]} {tid}{'（bansha 开的）' if tid in opened else ''}"
            for role, tid in d.threads.items()
        )
        if missing.get(d.day):
            threads += "；" if threads else ""
            threads += _will_open(game, missing[d.day])
        extra = []
        if d.sheriff_election:
            extra.append("竞选警长")
        if d.first_closes is not None:
            extra.append(f"第一轮[正午] {_when(d.first_closes, tz)} 结束")
        if d.accelerated is not None:
            extra.append("导演裁定加速" if d.accelerated else "导演裁定不加速")
        note = f"（{'，'.join(extra)}）" if extra else ""
        lines.append(
            f"  第 {d.day} 天：{_when(d.opens, tz)} 开门，{_when(d.closes, tz)} 关门{note}："
            f"{threads or '还没有帖子编号'}"
        )
    tids = list(dict.fromkeys(tid for _d, _r, tid in game.thread_roles()))
    mine = f"（其中 {len(opened)} 个是 bansha 开的，记在数据库里）" if opened else ""
    lines.append(f"帖子：{len(tids)} 个{mine}")
    if game.days:
        choice = default_day(game, now)
        lines.append(
            f"现在（{_when(now, tz)}）：第 {choice.day} 天{choice.status}；"
            f"不写 --day 的命令看第 {choice.day} 天"
        )
    db = resolve_db_path(game_file, None, os.environ)
    state = "已存在" if db.exists() else "还没有：bansha init 会创建它"
    lines.append(f"数据库：{db}（{state}）")
    return lines


def _to_open(game: Game) -> dict[int, list[ThreadRole]]:
    """Day -> the threads the rule set has that day that the game file (and the store) has no
    tid for: what bansha opens in ``[forum] fid``, or what is still to be written."""
    from pipeline.game.threads import missing_threads, with_opened

    return missing_threads(with_opened(game, []))


def _will_open(game: Game, roles: Collection[ThreadRole]) -> str:
    """What happens to a day's threads without a tid, as ``check`` says it."""
    names = "、".join(THREAD_ROLE_TITLES[r] for r in roles)
    fid = game.forum.fid
    if fid is None:
        return f"{names}还没有帖子编号（写上 tid，或写 [forum] fid 由 bansha 开帖）"
    hours = game.threads.draft_hours
    return f"{names}由 bansha 在版块 {fid} 开（开门前 {hours:g} 小时起草，你批准后在开门时开出）"


def _opening_problems(game: Game) -> list[str]:
    """The rule set's opening (the engine's setup) with these cards and the secret table."""
    if not any(p.cards for p in game.players):
        return []
    from pipeline.game.journal import setup_state

    rs = get_ruleset(game.game.ruleset)
    if not rs.has_engine:
        return []
    try:
        setup_state(game, rs)
    except (EngineError, StateError, ValueError) as exc:
        return [f"开局检查（按身份牌和秘密表开局）：{exc}"]
    return []


@cli.command("check")
@game_file_argument
@click.option(
    "--online",
    is_flag=True,
    help="再到论坛上读每个帖子的第一页（一次），报告标题、页数、游客还是用 Cookie 读到的。",
)
def check_cmd(game_file: Path | None, online: bool) -> None:
    """检查游戏文件：不创建、不写数据库；没有问题时打印摘要，有问题时列出每一处。

    摘要和 --online 包括 bansha 开的帖子（记在数据库里）：数据库已存在时只读打开它。
    还是示例（bansha new 或 config/games 的示例）的值会列出来
    提醒你改，但不算错误。
    """
    game_file = game_file_or_default(game_file)
    if not game_file.exists():
        raise click.ClickException(f"找不到游戏文件：{game_file}")
    try:
        game = load_game(game_file, env=os.environ, check_login=False)
        before_signup = False
    except GameFileError as exc:
        game = _before_signup(game_file, exc)
        before_signup = True
    problems = _opening_problems(game)
    if problems:
        lines = [f"游戏文件 {game_file}：{p}" for p in problems]
        if len(lines) > 1:
            lines.insert(0, f"游戏文件 {game_file} 有 {len(lines)} 处错误：")
        raise click.ClickException("\n".join(lines))
    now = datetime.now(game.game.tz)
    if before_signup:
        click.echo(f"游戏文件 {game_file} 还没有玩家（报名之前），其余没有问题。")
    else:
        click.echo(f"游戏文件 {game_file} 没有问题。")
    game, opened, unread = with_store_threads(game, game_file)
    for line in _summary(game, game_file, now, opened):
        click.echo(f"  {line}")
    if unread is not None:
        click.echo(f"注意：{unread}")
    samples = example_values(game)
    if samples:
        click.echo(f"注意：下面这些还是示例的值（标有「{MARK}」），开始游戏前改成你这局的：")
        for line in samples:
            click.echo(f"  {line}")
    for line in _thread_warnings(game):
        click.echo(f"注意：{line}")
    try:
        load_game(game_file, env=os.environ, check_login=True)
    except GameFileError as exc:
        for p in exc.problems:
            if not _about_players(p):
                click.echo(f"注意：{p.message}（联网的命令 crawl、cycle、post 会拒绝运行）")
    if before_signup:
        click.echo(_signup_next(game, game_file))
    if online:
        _check_online(game)


def _about_players(problem: Problem) -> bool:
    return problem.loc == "players" or problem.loc.startswith(("players[", "players."))


#: the stand-in ``[[players]]`` entry a file before sign-up is checked with (never shown)
_STAND_IN = "报名之前"


def _before_signup(game_file: Path, exc: GameFileError) -> Game:
    """A game file before sign-up (no ``[[players]]`` yet, as ``bansha signup`` will write
    them): everything else checked — the file as it would load with one stand-in player — and
    the game returned without players. Any other problem is raised, as always."""
    try:
        data = tomllib.loads(game_file.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise click.ClickException(str(exc)) from exc
    if data.get("players") not in (None, []) or not any(_about_players(p) for p in exc.problems):
        raise click.ClickException(str(exc)) from exc
    others = [p for p in exc.problems if not _about_players(p)]
    if others:
        raise click.ClickException(
            str(GameFileError(game_file, others))
            + "\n（还没有 [[players]] 不算错误：报名后由 bansha signup 写进来）"
        ) from exc
    director = data.get("director")
    uids = director.get("uids") if isinstance(director, dict) else None
    known = [u for u in uids if isinstance(u, int)] if isinstance(uids, list) else []
    stand_in = {"name": _STAND_IN, "uid": max(known, default=0) + 1}
    try:
        game = parse_game(
            {**data, "players": [stand_in]},
            source=game_file,
            env=os.environ,
            check_login=False,
            folder=game_file.resolve().parent,
        )
    except GameFileError as again:
        others = [p for p in again.problems if not _about_players(p)]
        raise click.ClickException(str(GameFileError(game_file, others or exc.problems))) from exc
    return game.model_copy(update={"players": []})


def _signup_next(game: Game, game_file: Path) -> str:
    """What comes next for a game file before sign-up: sign-up, then the deal."""
    name = shell_word(str(game_file))
    thread = "" if game.game.signup_thread is not None else " --thread 报名帖的tid"
    return (
        f"下一步：报名截止后运行 bansha signup {name}{thread}（读报名帖，把报名的玩家按顺序"
        f"写进 [[players]]），然后 bansha deal {name} 发牌。"
    )


def _thread_warnings(game: Game) -> list[str]:
    """A day without a tid for a thread the rule set has, when bansha cannot open it either
    (no ``[forum] fid``): one line per day. With ``[forum] fid``: a new thread's subject the
    forum would refuse as too long, found now rather than when the thread is drafted."""
    from pipeline.game.gamefile import THREAD_ROLE_TITLES
    from pipeline.game.threads import missing_threads, thread_subject, with_opened

    if game.forum.fid is not None:
        from pipeline.drafts import SUBJECT_MAX_CHARS

        long = {
            subject
            for n, roles in sorted(missing_threads(with_opened(game, [])).items())
            for role in roles
            if len(subject := thread_subject(game, n, role)) > SUBJECT_MAX_CHARS
        }
        return [
            f"新帖标题「{subject}」有 {len(subject)} 个字，超过论坛允许的 {SUBJECT_MAX_CHARS} "
            "个字，bansha 起草时会拒绝它：请缩短 [threads] subject（或 progress_subject、tag）"
            for subject in sorted(long)
        ]
    return [
        f"第{n}天没有{'、'.join(THREAD_ROLE_TITLES[r] for r in roles)}的 tid，游戏文件也没有 "
        "[forum] fid：bansha 不会为它开帖；请写上 tid，或写 [forum] fid 由 bansha 开帖"
        for n, roles in sorted(missing_threads(with_opened(game, [])).items())
    ]


# --------------------------------------------------------------------------- --online


@contextmanager
def _quiet_retries() -> Iterator[None]:
    """Without ``-v`` a retry is not worth a line of its own: the result says it."""
    client_log = logging.getLogger("pipeline.discuz.client")
    old = client_log.level
    if not logging.getLogger().isEnabledFor(logging.INFO):
        client_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        client_log.setLevel(old)


def _retry_policy() -> RetryPolicy:
    if os.environ.get("BANSHA_MAX_ATTEMPTS"):
        from pipeline.cli.quick import retry_policy

        return retry_policy()
    return CHECK_RETRY


def _labels(game: Game) -> dict[int, str]:
    """Each configured thread once, with what it is for: "第 1 天讨论帖", "进程帖（第 1-3 天）"."""
    uses: dict[int, list[tuple[int, ThreadRole]]] = {}
    for day, role, tid in game.thread_roles():
        uses.setdefault(tid, []).append((day, role))
    labels = {}
    for tid, where in uses.items():
        roles = list(dict.fromkeys(THREAD_ROLE_TITLES[r] for _d, r in where))
        days = sorted({d for d, _r in where})
        span = f"第 {days[0]} 天" if len(days) == 1 else f"第 {days[0]}-{days[-1]} 天"
        labels[tid] = f"{span}{'、'.join(roles)}"
    return labels


def _reader(page: ThreadPage, game: Game, cookie: bool) -> str:
    uid_text = page.extra.get("member_uid")
    uid = int(uid_text) if uid_text and uid_text.isdigit() else None
    if not cookie:
        return "游客可以读"
    if uid == 0:
        return (
            f"注意：环境变量 {game.forum.cookie_env} 的 Cookie 没有生效，论坛把这次请求当作游客"
            "（游客可以读；Cookie 可能已过期）"
        )
    if uid is None:
        return f"用 Cookie（环境变量 {game.forum.cookie_env}）读取"
    who = "导演账号" if uid in game.director.uids else "账号"
    return f"用 Cookie（环境变量 {game.forum.cookie_env}）以{who} uid {uid} 登录读取"


def _refusal(exc: PageError, game: Game, cookie: bool) -> str:
    env = game.forum.cookie_env
    if exc.kind is PageErrorKind.LOGIN_REQUIRED:
        if cookie:
            return f"需要登录：环境变量 {env} 里的 Cookie 无效或已过期，请从浏览器重新复制"
        return (
            f"游客看不了（需要登录）：在 [forum] 写 requires_login = true，"
            f"并把导演账号的登录 Cookie 放进环境变量 {env}"
        )
    if exc.kind is PageErrorKind.NO_PERMISSION:
        hint = "" if cookie else f"；若登录后才能看，把导演账号的 Cookie 放进环境变量 {env}"
        return f"{exc.message_zh}{hint}"
    if exc.kind is PageErrorKind.NOT_FOUND:
        return f"{exc.message_zh}：检查游戏文件里的帖子编号（论坛网址里的 tid=）"
    return exc.message_zh


def _check_online(game: Game) -> None:
    forum = game.forum
    cookie = os.environ.get(forum.cookie_env, "").strip() or None
    labels = _labels(game)
    if not labels:
        if game.forum.fid is not None:
            click.echo(
                f"联网检查：帖子都还没有开出（由 bansha 在版块 {game.forum.fid} 开），"
                "没有可读的帖子。"
            )
        else:
            click.echo("联网检查：游戏文件中还没有帖子编号，没有可读的帖子。")
        return
    from pipeline.cli.foundation import forum_config

    config = forum_config(game)
    source = SOURCE_MOBILE if forum.source == "mobile-api" else SOURCE_HTML
    who = f"带上环境变量 {forum.cookie_env} 的 Cookie" if cookie else "以游客身份"
    click.echo(f"联网检查 {forum.base_url}（{who}，{len(labels)} 个帖子，每个只读第一页）：")
    failed = 0
    with _quiet_retries(), http_client_factory() as http:
        client = DiscuzClient(
            http,
            base_url=str(forum.base_url),
            min_interval_s=forum.min_interval_s,
            jar=SessionJar(cookie),
            policy=_retry_policy(),
        )
        # page_url and parse only: neither touches a store
        reader = Crawler(client, None, config)  # type: ignore[arg-type]

        def read(src: str, tid: int) -> ThreadPage:
            url = reader.page_url(src, tid, 1)
            return client.fetch(url, lambda f: reader.parse(src, tid, 1, f))[1]

        for tid, label in labels.items():
            how = ""
            try:
                try:
                    page = read(source, tid)
                except PageError as exc:
                    if not (
                        forum.source == "auto"
                        and exc.kind in FALLBACK_KINDS
                        and not isinstance(exc, UnusablePage)
                    ):
                        raise
                    page = read(SOURCE_MOBILE, tid)
                    how = f"；网页版读不了（{exc.message_zh}），手机版接口可以读"
            except (PageError, ForumUnavailable) as exc:
                down = forum_down(exc)
                if down is not None:
                    reason, label_down = down
                    left = len(labels) - failed - 1
                    rest = f"；其余 {left} 个帖子没有再试" if left > 0 else ""
                    raise click.ClickException(
                        client.scrub(
                            f"{label_down}：{reason}{rest}，稍后再运行 bansha check --online"
                        )
                    ) from exc
                failed += 1
                text = exc.message_zh if isinstance(exc, PageError) else str(exc)
                if isinstance(exc, PageError):
                    text = _refusal(exc, game, cookie is not None)
                click.echo(f"  ✗ {label} tid={tid}：{client.scrub(text)}")
                continue
            subject = f"「{page.subject}」" if page.subject else "（没有读到标题）"
            click.echo(
                f"  ✓ {label} tid={tid}：{client.scrub(subject)}，共 {page.total_pages} 页，"
                f"第 1 页 {len(page.posts)} 帖；{_reader(page, game, cookie is not None)}{how}"
            )
    if failed:
        raise click.ClickException(f"{failed} 个帖子读不到，原因见上。")
    click.echo(f"{len(labels)} 个帖子都读得到。")
