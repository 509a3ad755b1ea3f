"""The game's life on the forum, before the first day: sign-up → roster, and a verifiable deal.

``bansha signup GAME.toml --thread TID`` reads the 报名帖 (crawled into the store like any
thread), takes the accounts that signed up (name and uid from the pages) in post order up to
the rule set's player count (``Ruleset.deal_count``), lists the rest as 替补, and
rewrites the game file's ``[[players]]`` with tomlkit: comments and everything the director
wrote for a player already there (aliases, cards, sex …) are kept, new players are appended,
players who quit (退出报名) or became 替补 are removed, and a player the director wrote by hand
who never posted a sign-up or a quit is kept and takes a seat first. The 替补 are written as a
comment block after the last player (the game-file model has no key for them yet). Every post
that did not count is listed with its reason (parsers.signup).

``bansha deal GAME.toml`` deals the rule set's line-up (engine.deal) from a secret seed
(``secrets.token_bytes(32)``), writes the cards (and each player's faction, and the rule set's
table: ``[m209] lineup``, ``[tubian24] thief``/``thief_cards``) into the game file, keeps seed,
salt and the canonical text in the store (never in the game file, never printed, never logged)
and drafts the commitment (SHA-256 of the canonical text) for the rules thread.
``--reveal`` drafts the canonical text, the salt and the seed after the game (and prints the
text); ``--verify FILE`` (``-``: stdin) checks a revealed text against a commitment and
re-derives the deal from the seed — it needs no game file, so any player can run it. A director
may still write the cards by hand: ``deal`` never overwrites cards without ``--redeal``.

The commands are plain ``click.command``s; the root group registers them.
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import click
import tomlkit
from tomlkit.items import AoT, Comment, Item, Table, Whitespace

import pipeline.cli
from engine.deal import (
    Deal,
    DealError,
    SeedStream,
    canonical_text,
    commitment,
    deal,
    extract_canonical,
    parse_canonical,
    redeal_problems,
)
from engine.rulesets import get_ruleset
from parsers.signup import Entrant, SignupKind, SignupRecord, SignupResult, build_roster
from parsers.signup import read_signups as parse_signups
from pipeline import set_mode
from pipeline.cli import (
    GameContext,
    find_game_file,
    game_file_argument,
    game_file_or_default,
)
from pipeline.discuz.crawl import CrawlTarget
from pipeline.drafts import DraftAction, DraftKind, DraftSpec, bbcode_escape, save_drafts
from pipeline.game.gamefile import (
    SEX_RULESETS,
    Director,
    Forum,
    Game,
    GameFileError,
    GameInfo,
    Problem,
    load_game,
    parse_game,
    resolve_db_path,
)
from pipeline.store import Store, StoreError, open_store, open_store_readonly

__all__ = [
    "DEAL_COMMIT",
    "DEAL_REVEAL",
    "META_COMMITMENT",
    "META_SALT",
    "META_SEED",
    "META_TEXT",
    "SUBSTITUTES_BEGIN",
    "SUBSTITUTES_END",
    "RosterPlan",
    "commit_spec",
    "deal_cmd",
    "draft_kind",
    "plan_roster",
    "reveal_spec",
    "rewrite_players",
    "signup",
    "write_deal",
]

#: the draft kinds of this module (the values of DraftKind.DEAL_COMMIT / DEAL_REVEAL)
DEAL_COMMIT = "deal_commit"
DEAL_REVEAL = "deal_reveal"

#: ``--db`` for the commands here that take the game file themselves (not ``game_command``).
_db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="数据库路径（默认：游戏文件旁的 <游戏文件名>.db，或环境变量 BANSHA_DB）。",
)

#: the store's meta keys of the deal (secret: never printed, never logged)
META_SEED = "deal:seed"
META_SALT = "deal:salt"
META_TEXT = "deal:text"
META_COMMITMENT = "deal:commitment"
META_AT = "deal:at"

#: the comment block of the 替补 that ``bansha signup`` rewrites each time
SUBSTITUTES_BEGIN = (
    "# ==== bansha signup：替补（按报名顺序；每次 bansha signup 都会重写这一段）===="
)
SUBSTITUTES_END = "# ==== 替补结束 ===="
_BLOCK_RE = re.compile(
    r"(?:^[ \t]*\n)?^[ \t]*# ==== bansha signup：替补.*?^[ \t]*# ==== 替补结束 ====[ \t]*(?:\n|\Z)",
    re.MULTILINE | re.DOTALL,
)
_HEX64 = re.compile(r"[0-9a-f]{64}")


def draft_kind(value: str) -> DraftKind:
    """The draft kind of this module's drafts (``deal_commit`` / ``deal_reveal``)."""
    return DraftKind(value)


# --------------------------------------------------------------------------- the game file


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise click.ClickException(f"找不到游戏文件：{path}") from None
    except (OSError, UnicodeDecodeError):
        # load_game says what is wrong (unreadable, not UTF-8) in its own words
        try:
            load_game(path, check_login=False)
        except GameFileError as exc:
            raise click.ClickException(str(exc)) from exc
        raise


def _players_problem(p: Problem) -> bool:
    return re.match(r"players(?:$|\[|\.|（)", p.loc) is not None


def _signup_game(path: Path) -> Game:
    """The game file as far as ``signup`` needs it (the forum, the director, the rule set).

    A file whose only problems are in ``[[players]]`` (none yet, no sex yet, an old line-up)
    is fine here: the roster is what signup writes; the Game is then built from the checked
    tables only, without players."""
    try:
        return load_game(path, env=os.environ, check_login=True)
    except GameFileError as exc:
        if not exc.problems or not all(_players_problem(p) for p in exc.problems):
            raise click.ClickException(str(exc)) from exc
    data = tomllib.loads(_read_text(path))
    # the other tables passed the full check above, so these cannot fail
    info = GameInfo.model_validate(data["game"])
    forum = Forum.model_validate(data["forum"])
    director = Director.model_validate(data["director"])
    return Game.model_construct(
        game=info, forum=forum, director=director, players=[], days=[], secrets={}
    )


def _check_new_text(text: str, path: Path) -> list[Problem]:
    """The problems the rewritten file would have (empty: it loads)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # never: tomlkit wrote it
        return [Problem("", f"改写后的文件不是有效的 TOML（{exc}）")]
    try:
        parse_game(data, source=path, check_login=False, folder=path.resolve().parent)
    except GameFileError as exc:
        return list(exc.problems)
    return []


#: the permission bits a file that holds every player's cards keeps: the director's alone
SECRET_MODE = 0o600


def _write_atomic(path: Path, text: str, *, secret: bool = False) -> str | None:
    """Replace the file in one step (a crash leaves the old file or the new one), keeping its
    permission bits — but a file that now holds secrets (``secret``: the cards) is readable by
    its owner only, as ``bansha new`` writes it; where the system has no such bits (Windows)
    they are left alone. Returns what was changed, said to the director, or None."""
    old_mode = path.stat().st_mode & 0o7777 if path.exists() else SECRET_MODE
    mode = old_mode
    if secret and os.name == "posix":
        mode = old_mode & ~0o077
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        set_mode(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if mode == old_mode:
        return None
    return (
        f"游戏文件写进了身份牌，权限已从 {old_mode:o} 改为 {mode:o}"
        "（只有你能读写；别的用户读不到身份牌）"
    )


def _value(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def _players_aot(doc: tomlkit.TOMLDocument) -> AoT | None:
    if "players" not in doc:
        return None
    item = doc["players"]
    if not isinstance(item, AoT):
        raise click.ClickException(
            "游戏文件的 players 应写成 [[players]] 表数组（每名玩家一个 [[players]]），"
            "bansha 才能在保留注释的同时改写它"
        )
    return item


def _pop_tail(table: Table) -> list[Comment | Whitespace]:
    """Remove and return the comments and blank lines after the table's last key."""
    body = table.value.body
    i = len(body)
    while i and body[i - 1][0] is None:  # tomlkit keeps only these two without a key
        i -= 1
    tail = cast("list[Comment | Whitespace]", [item for _key, item in body[i:]])
    del body[i:]
    return tail


def _push(table: Table, items: Iterable[Comment | Whitespace]) -> None:
    for item in items:
        table.add(item)


def _set_key(table: Table, key: str, value: Any, *, keep_comment: bool = True) -> None:
    """Set ``key`` (a new key goes after the last key, before the table's trailing comments).

    ``keep_comment=False`` drops the comment at the end of the old line (it described the old
    value: ``cards = ["狼人"]  # 盗贼：…``)."""
    if key in table:
        table[key] = value
    else:
        tail = _pop_tail(table)
        table[key] = value
        _push(table, tail)
    item = table.item(key)
    if not keep_comment and isinstance(item, Item) and item.trivia.comment:
        item.trivia.comment = ""
        item.trivia.comment_ws = ""


def _only_blank(items: Sequence[Item]) -> bool:
    return all(isinstance(i, Whitespace) for i in items)


# --------------------------------------------------------------------------- sign-up


@dataclass
class RosterPlan:
    """What ``signup`` does to the ``[[players]]`` of a game file."""

    capacity: int
    result: SignupResult
    keep: list[int] = field(default_factory=list)  # indices of existing tables kept
    hand_written: list[int] = field(default_factory=list)  # kept: no sign-up or quit posted
    removed: list[tuple[int, str]] = field(default_factory=list)  # (index, why)
    renamed: list[tuple[int, str, str]] = field(default_factory=list)  # (index, old, new)
    added: list[Entrant] = field(default_factory=list)
    sex: list[tuple[int, str]] = field(default_factory=list)  # (index, sex) filled in

    @property
    def size(self) -> int:
        return len(self.keep) + len(self.added)


def plan_roster(
    existing: Sequence[tuple[str | None, int | None, str | None]],
    records: Sequence[SignupRecord],
    capacity: int,
) -> RosterPlan:
    """The roster from the sign-ups and the players already in the file.

    ``existing``: (name, uid, sex) of each ``[[players]]`` table in file order. A player with
    no sign-up or quit in the thread was written by the director (a sign-up by other means):
    kept, and takes a seat before the thread's sign-ups. A player whose account signed up keeps
    the table (and its place) while the account is among the first seats; one who quit or is
    now a 替补 is removed."""
    in_thread = {
        r.uid for r in records if not r.skipped and r.kind in (SignupKind.SIGNUP, SignupKind.QUIT)
    }
    hand = [i for i, (_n, uid, _s) in enumerate(existing) if uid is None or uid not in in_thread]
    result = build_roster(records, capacity - len(hand))
    plan = RosterPlan(capacity, result, hand_written=hand)
    chosen = {e.uid: e for e in result.players}
    subs = {e.uid: e for e in result.substitutes}
    quits = {q.uid: q for q, _e in result.quits}
    seen: set[int] = set()
    for i, (name, uid, sex) in enumerate(existing):
        if i in hand:
            plan.keep.append(i)
            continue
        assert uid is not None
        if uid in chosen and uid not in seen:
            seen.add(uid)
            plan.keep.append(i)
            entrant = chosen[uid]
            if name != entrant.name:
                plan.renamed.append((i, name or "", entrant.name))
            if sex is None and entrant.sex:
                plan.sex.append((i, entrant.sex))
        elif uid in subs:
            why = "只报名替补" if subs[uid].substitute else "名额已满，转为替补"
            plan.removed.append((i, why))
        elif uid in quits:
            plan.removed.append((i, f"退出报名（pid {quits[uid].pid}）"))
        else:
            plan.removed.append((i, "报名帖中没有有效的报名"))
    plan.added = [e for e in result.players if e.uid not in seen]
    return plan


def _substitutes_block(subs: Sequence[Entrant], tz: Any) -> list[Comment | Whitespace]:
    if not subs:
        return []
    lines = [SUBSTITUTES_BEGIN]
    for n, e in enumerate(subs, start=1):
        when = f"，{e.time.astimezone(tz):%m-%d %H:%M}" if e.time else ""
        wish = "只报名替补，" if e.substitute else ""
        sex = f"，{e.sex}" if e.sex else ""
        lines.append(f"# 替补 {n}：{e.name}（uid {e.uid}{sex}；{wish}报名 pid {e.pid}{when}）")
    lines.append(SUBSTITUTES_END)
    return [tomlkit.nl(), *(tomlkit.comment(line[2:]) for line in lines)]


def _new_table(e: Entrant, with_sex: bool) -> Table:
    table = tomlkit.table()
    table["name"] = e.name
    table["uid"] = e.uid
    if with_sex and e.sex:
        table["sex"] = e.sex
    return table


def rewrite_players(text: str, plan: RosterPlan, *, ruleset: str, tz: Any) -> str:
    """The game file's text with the planned ``[[players]]`` and 替补 block."""
    if plan.size == 0:
        return text  # nobody to write: the file stays as it is (signup says so)
    text = _BLOCK_RE.sub("", text)
    doc = tomlkit.parse(text)
    aot = _players_aot(doc)
    with_sex = ruleset in SEX_RULESETS
    tables: list[Table] = list(aot) if aot is not None else []
    epilogue: list[Comment | Whitespace] = _pop_tail(tables[-1]) if tables else []
    for i, name in ((i, new) for i, _old, new in plan.renamed):
        tables[i]["name"] = name
    for i, sex in plan.sex:
        if with_sex:
            _set_key(tables[i], "sex", sex)
    kept = [tables[i] for i in sorted(plan.keep)]
    new = [_new_table(e, with_sex) for e in plan.added]
    final = kept + new
    for t in final[:-1]:
        tail = _pop_tail(t)
        _push(t, tail if tail and not _only_blank(tail) else [tomlkit.nl()])
    if final:
        last = final[-1]
        own = _pop_tail(last)
        while own and isinstance(own[-1], Whitespace):
            own.pop()
        block = _substitutes_block(plan.result.substitutes, tz)
        rest = epilogue if epilogue else [tomlkit.nl()]
        if block and not (rest and isinstance(rest[0], Whitespace)):
            rest = [tomlkit.nl(), *rest]
        _push(last, [*own, *block, *rest])
    new_aot = tomlkit.aot()
    for t in final:
        new_aot.append(t)
        # the blank line between two tables is the previous table's tail (kept above), not a
        # newline tomlkit puts before the header of an appended table
        t.trivia.indent = t.trivia.indent.replace("\n", "")
    if aot is not None:
        doc["players"] = new_aot
    elif final:
        return tomlkit.dumps(_with_after(doc, "director", "players", new_aot))
    return tomlkit.dumps(doc)


def _with_after(doc: Any, after: str, key: str, value: Any) -> Any:
    """``doc`` with ``key = value`` placed right after the table ``after`` (at the end when
    there is none), comments and blank lines kept where they were."""
    if after not in doc:
        doc[key] = value
        return doc
    out = tomlkit.document()
    for name, item in doc.body:
        if name is None:
            out.add(item)
            continue
        out.append(name, item)
        if name == after:
            out.append(key, value)
    return out


def _existing_players(text: str) -> list[tuple[str | None, int | None, str | None]]:
    doc = tomlkit.parse(_BLOCK_RE.sub("", text))
    aot = _players_aot(doc)
    out: list[tuple[str | None, int | None, str | None]] = []
    for t in aot or []:
        name = _value(t.get("name"))
        uid = _value(t.get("uid"))
        sex = _value(t.get("sex"))
        out.append(
            (
                name if isinstance(name, str) else None,
                uid if isinstance(uid, int) and not isinstance(uid, bool) else None,
                sex if isinstance(sex, str) else None,
            )
        )
    return out


def _parse_until(value: str | None, tz: Any) -> datetime | None:
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise click.ClickException(
            f"--until 应为日期时间，如 2026-12-01T20:00:00+08:00（收到：{value}）"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=tz)


def _crawl_signup(ctx: GameContext, tid: int) -> None:
    from pipeline.cli.foundation import run_crawl  # the crawl every command uses (cookie, retries)

    report = run_crawl(ctx, [CrawlTarget(tid=tid, day=None, role="signup")], full=True)
    if not report.ok:
        raise click.ClickException("读取报名帖失败：" + "；".join(report.errors))


def _when(e: Entrant | SignupRecord, tz: Any) -> str:
    return f"{e.time.astimezone(tz):%m-%d %H:%M}" if e.time else "--"


@click.command("signup")
@game_file_argument
@click.option("--thread", "thread", type=int, default=None, help="报名帖的编号（tid）。")
@click.option(
    "--until",
    default=None,
    metavar="时间",
    help="报名截止时间（如 2026-12-01T20:00:00+08:00）：之后的帖子不计。",
)
@click.option("--dry-run", is_flag=True, help="只显示结果，不改写游戏文件。")
@_db_option
def signup(
    game_file: Path | None,
    thread: int | None,
    until: str | None,
    dry_run: bool,
    db_path: str | None,
) -> None:
    """读报名帖，把报名的账号（论坛名字与 uid 取自网页）按报名顺序写进游戏文件的 [[players]]。

    人数达到规则集的人数后，其余的列为替补（写在最后一名玩家之后的注释里）；“退出报名”会被执行。

    导演已经写下的内容（注释、别名、身份牌、性别）都保留；导演手写、报名帖中没有报名也没有退出的玩家保留并先占名额。

    没有计入的帖子逐一列出理由，请核对。说明见 docs/报名与发牌.md。
    """
    path = game_file_or_default(game_file)
    game = _signup_game(path)
    tid = thread if thread is not None else game.game.signup_thread
    if tid is None:
        raise click.ClickException("请用 --thread 写出报名帖的编号（tid）")
    tz = game.game.tz
    cutoff = _parse_until(until, tz)
    capacity = get_ruleset(game.game.ruleset).deal_count()
    ctx = GameContext(path, game, resolve_db_path(path, db_path, os.environ))
    try:
        _crawl_signup(ctx, tid)
        posts = ctx.store.posts(tid)
    finally:
        ctx.close()
    text = _read_text(path)
    records = parse_signups(
        posts,
        directors=game.director.names,
        director_uids=game.director.uids,
        until=cutoff,
    )
    existing = _existing_players(text)
    plan = plan_roster(existing, records, capacity)
    _echo_plan(plan, existing, records, tid, tz, game.game.ruleset)
    if dry_run:
        click.echo("（--dry-run：没有改写游戏文件）")
        return
    if plan.size == 0:
        click.echo("报名帖中没有有效的报名，名单为空：没有改写游戏文件。")
        return
    new_text = rewrite_players(text, plan, ruleset=game.game.ruleset, tz=tz)
    problems = _check_new_text(new_text, path)
    blocking = [p for p in problems if not _players_problem(p)]
    if blocking:
        lines = "\n".join(
            f"  {p.loc}：{p.message}" if p.loc else f"  {p.message}" for p in blocking
        )
        raise click.ClickException(f"改写后的游戏文件会有错误，没有写入：\n{lines}")
    if new_text == text:
        click.echo(f"游戏文件 {path} 的名单没有变化。")
    else:
        try:
            _write_atomic(path, new_text)
        except OSError as exc:
            raise click.ClickException(
                f"无法写入游戏文件 {path}（{exc.strerror or exc}）：名单没有改"
            ) from exc
        click.echo(
            f"游戏文件 {path} 已更新：{plan.size} 名玩家（新增 {len(plan.added)}，"
            f"移出 {len(plan.removed)}），替补 {len(plan.result.substitutes)} 名。"
        )
    if problems:
        click.echo("还需要导演处理（改好之前其他命令会拒绝这个游戏文件）：")
        for p in problems:
            click.echo(f"  {p.loc}：{p.message}" if p.loc else f"  {p.message}")


def _echo_plan(
    plan: RosterPlan,
    existing: Sequence[tuple[str | None, int | None, str | None]],
    records: Sequence[SignupRecord],
    tid: int,
    tz: Any,
    ruleset: str,
) -> None:
    result = plan.result
    click.echo(
        f"报名帖 tid={tid}：{len(records)} 帖；规则集 {ruleset} 需要 {plan.capacity} 名玩家。"
    )
    click.echo(f"玩家（{plan.size}/{plan.capacity}）：")
    n = 0
    by_uid = {e.uid: e for e in result.players}
    renamed = {i: (old, new) for i, old, new in plan.renamed}
    for i in sorted(plan.keep):
        n += 1
        name, uid, _sex = existing[i]
        if i in plan.hand_written:
            click.echo(f"  {n}. {name}（uid {uid}）：导演手写，报名帖中没有他的报名或退出，保留")
            continue
        e = by_uid[uid] if uid is not None else None
        note = f"；名字按网页改为「{renamed[i][1]}」" if i in renamed else ""
        if e is not None:
            shown = renamed[i][1] if i in renamed else name
            click.echo(
                f"  {n}. {shown}（uid {uid}）：已在游戏文件中；报名 pid {e.pid}（{_when(e, tz)}）"
                f"{e.why}{note}"
            )
    for e in plan.added:
        n += 1
        sex = f"，{e.sex}" if e.sex else ""
        click.echo(
            f"  {n}. {e.name}（uid {e.uid}{sex}）：新增；报名 pid {e.pid}（{_when(e, tz)}）{e.why}"
        )
    if len(plan.hand_written) > plan.capacity:
        click.echo(
            f"  注意：导演手写的玩家已有 {len(plan.hand_written)} 名，超过 {plan.capacity} 名"
        )
    if result.substitutes:
        click.echo(f"替补（{len(result.substitutes)}，按报名顺序）：")
        for k, e in enumerate(result.substitutes, start=1):
            wish = "只报名替补" if e.substitute else "名额已满"
            click.echo(
                f"  {k}. {e.name}（uid {e.uid}）：{wish}；报名 pid {e.pid}（{_when(e, tz)}）"
            )
    for i, why in plan.removed:
        name, uid, _sex = existing[i]
        click.echo(f"移出名单：{name}（uid {uid}）：{why}")
    if result.quits:
        click.echo("退出报名：")
        for q, e in result.quits:
            click.echo(f"  {q.name}（uid {q.uid}）：pid {q.pid} {q.why}，取消了 pid {e.pid} 的报名")
    if result.ignored:
        click.echo("没有计入的帖子（请核对）：")
        for ig in result.ignored:
            r = ig.record
            said = f"：「{r.excerpt}」" if r.excerpt and not r.skipped else ""
            click.echo(f"  pid {r.pid} {r.name}（{_when(r, tz)}）：{ig.why}{said}")


# --------------------------------------------------------------------------- the deal


def write_deal(text: str, made: Deal, *, ruleset: str) -> tuple[str, list[str]]:
    """The game file's text with the dealt cards (and factions, and the rule set's table), and
    the keys of that table it removed because the new cards make them stale."""
    doc = tomlkit.parse(text)
    aot = _players_aot(doc)
    tables = list(aot or [])
    if len(tables) != len(made.players):
        raise click.ClickException("游戏文件的名单与发牌的名单人数不同（文件在发牌时被改过？）")
    for t, name, cards, faction in zip(
        tables,
        made.players,
        made.cards,
        made.factions or (None,) * len(tables),
        strict=True,
    ):
        if _value(t.get("name")) != name:
            raise click.ClickException(f"游戏文件中的玩家「{_value(t.get('name'))}」与发牌名单不符")
        _set_key(t, "cards", list(cards), keep_comment=False)
        if faction is not None:
            _set_key(t, "faction", faction, keep_comment=False)
        elif "faction" in t:
            del t["faction"]  # the old cards' faction; this one is decided later
    dropped: list[str] = []
    if made.table or made.stale:
        if ruleset not in doc:
            doc[ruleset] = tomlkit.table()
        table = doc[ruleset]
        assert isinstance(table, Table)
        for key, value in made.table.items():
            value = _grouped(made.groups[key]) if key in made.groups else value
            _set_key(table, key, value, keep_comment=key in made.groups)
        for key in made.stale:
            if key in table:
                del table[key]
                dropped.append(key)
    return tomlkit.dumps(doc), dropped


def _grouped(groups: Sequence[tuple[str, Sequence[str]]]) -> Any:
    """A list written one labelled group a line (``"黑狼王", … # 狼人 4``)."""
    arr = tomlkit.array()
    for label, items in groups:
        arr.add_line(*items, comment=label)
    arr.add_line(indent="")
    return arr


def _seats(game: Game, made: Deal) -> list[tuple[int, str, tuple[str, ...]]]:
    return [(p.uid, p.name, cards) for p, cards in zip(game.players, made.cards, strict=True)]


def _deal_reply(key: str, title: str, body: str, *, tid: int | None) -> DraftSpec:
    """A deal draft: a reply in the game thread, keyed once per game (not per day)."""
    return DraftSpec(
        kind=draft_kind(key),
        day=None,
        key=key,
        tid=tid,
        action=DraftAction.REPLY,
        edit_pid=None,
        title=title,
        body=body,
    )


def commit_spec(game: Game, digest: str, *, tid: int | None, ruleset_name: str) -> DraftSpec:
    """The draft publishing the commitment (before the game; nothing secret in it)."""
    names = "、".join(bbcode_escape(p.name) for p in game.players)
    body = "\n".join(
        [
            "[b]发牌承诺[/b]",
            f"本局（{bbcode_escape(game.game.title)}，规则集 {ruleset_name}）"
            "的身份已由 bansha 随机发出。"
            "下面是发牌原文（每个座次的玩家与身份牌，连同一段随机的盐）的 SHA-256：",
            f"[code]{digest}[/code]",
            f"座次：{names}",
            "游戏结束后，导演会公开发牌原文、盐和随机种子。把原文存成文件，用 sha256sum 计算，"
            "结果应与上面完全相同；也可以用 bansha deal --verify 文件 --commitment 上面的值 核对，"
            "它还会由种子重新发一次牌，与原文比较。",
        ]
    )
    return _deal_reply(DEAL_COMMIT, "发牌承诺", body, tid=tid)


def reveal_spec(text: str, digest: str, seed_hex: str, *, tid: int | None) -> DraftSpec:
    """The draft revealing the deal after the game: the canonical text (with the salt) in a
    code box, copied exactly, and the seed."""
    if "[/code]" in text.lower():
        raise click.ClickException(
            "发牌原文中有「[/code]」（玩家名里？），放进代码框会被截断：请手动公开原文"
        )
    body = "\n".join(
        [
            "[b]发牌公开[/b]",
            f"开局前公布的承诺（SHA-256）：[code]{digest}[/code]",
            "发牌原文如下（复制代码框中的全部文字，存为文件 deal.txt，最后一行之后保留一个换行）：",
            "[code]",
            text.rstrip("\n"),
            "[/code]",
            f"随机种子：[code]{seed_hex}[/code]",
            "核对：sha256sum deal.txt 算出的值应与承诺相同（Windows 存的文件先去掉回车："
            "tr -d '\\r' < deal.txt | sha256sum）。"
            f"bansha deal --verify deal.txt --commitment {digest} --seed {seed_hex} "
            "还会由种子重新发牌，与原文逐座比较，并按规则检查阵容。",
        ]
    )
    return _deal_reply(DEAL_REVEAL, "发牌公开", body, tid=tid)


def _open(path: Path, db_path: str | None) -> Store:
    try:
        return open_store(resolve_db_path(path, db_path, os.environ))
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc


def _rules_tid(game: Game, thread: int | None) -> int | None:
    return thread if thread is not None else game.game.rules_thread


def _load(path: Path) -> Game:
    try:
        return load_game(path, env=os.environ, check_login=False)
    except GameFileError as exc:
        raise click.ClickException(str(exc)) from exc


@click.command("deal")
@game_file_argument
@click.option("--redeal", is_flag=True, help="重新发牌：覆盖游戏文件中已有的身份牌和上一次的发牌。")
@click.option("--thread", "thread", type=int, default=None, help="草稿发往的帖子（规则帖的 tid）。")
@click.option(
    "--reveal", is_flag=True, help="游戏结束后：起草发牌原文、盐和种子的公开帖，并打印原文。"
)
@click.option(
    "--verify",
    "verify_file",
    type=click.File("r", encoding="utf-8-sig"),
    default=None,
    metavar="文件",
    help="核对公开的发牌原文（文件，- 为标准输入）；不需要游戏文件。",
)
@click.option("--commitment", default=None, metavar="SHA256", help="--verify：开局前公布的承诺。")
@click.option("--seed", "seed_hex", default=None, metavar="种子", help="--verify：公开的随机种子。")
@click.option(
    "--yes",
    "assume_yes",
    is_flag=True,
    help="--reveal：引擎没有判出胜负时也不再询问（游戏确实已经结束、只是没有用引擎结算时）。",
)
@_db_option
def deal_cmd(
    game_file: Path | None,
    redeal: bool,
    thread: int | None,
    reveal: bool,
    verify_file: Any,
    commitment: str | None,
    seed_hex: str | None,
    assume_yes: bool,
    db_path: str | None,
) -> None:
    """按规则集的配置随机发牌，写进游戏文件，并起草可以公开的发牌承诺（SHA-256）。

    随机种子和盐只存在数据库里，不写进游戏文件，也不显示。

    游戏结束后用 --reveal 起草公开帖（原文、盐、种子）；引擎还没有判出胜负时先提醒并询问。

    任何人都可以用 --verify 核对公开的原文与承诺是否一致，并由种子重新发牌比较（不需要游戏文件）。

    导演也可以自己在游戏文件里写身份牌：已有身份牌时不会覆盖（除非加 --redeal）。

    说明见 docs/报名与发牌.md。
    """
    if verify_file is not None:
        _verify(game_file, verify_file, commitment, seed_hex, db_path)
        return
    if commitment is not None or seed_hex is not None:
        raise click.UsageError("--commitment 和 --seed 只用于 --verify")
    path = game_file_or_default(game_file)
    game = _load(path)
    store = _open(path, db_path)
    try:
        if reveal:
            _reveal(store, game, _rules_tid(game, thread), assume_yes=assume_yes)
        else:
            _deal(path, store, game, redeal=redeal, tid=_rules_tid(game, thread))
    finally:
        store.close()


def _deal(path: Path, store: Store, game: Game, *, redeal: bool, tid: int | None) -> None:
    ruleset = game.game.ruleset
    rs = get_ruleset(ruleset)
    with_cards = [p.name for p in game.players if p.cards]
    earlier = store.get_meta(META_COMMITMENT)
    if not redeal and with_cards:
        raise click.ClickException(
            f"游戏文件中已有身份牌（{len(with_cards)} 名玩家写了 cards）：bansha 不覆盖已写的牌；"
            "要重新随机发牌请加 --redeal"
        )
    if not redeal and earlier:
        raise click.ClickException(
            f"已经用 bansha 发过牌（承诺 {earlier[:16]}…）：要重新发牌请加 --redeal"
            "（已公布的承诺随之作废）"
        )
    seed = secrets.token_bytes(32)
    salt = secrets.token_hex(32)
    try:
        made = deal(rs, [p.name for p in game.players], SeedStream(seed))
    except DealError as exc:
        raise click.ClickException(str(exc)) from exc
    text = canonical_text(
        game=game.game.id, ruleset=ruleset, salt=salt, seats=_seats(game, made), extras=made.extras
    )
    digest = commitment(text)
    old = _read_text(path)
    new, dropped = write_deal(old, made, ruleset=ruleset)
    problems = _check_new_text(new, path)
    if problems:  # a bug: the engine checked the deal
        lines = "\n".join(f"  {p.loc}：{p.message}" for p in problems)
        raise click.ClickException(f"写入身份牌后游戏文件会有错误，没有写入：\n{lines}")
    now = pipeline.cli.clock(game.game.tz)
    spec = commit_spec(game, digest, tid=tid, ruleset_name=f"{rs.id}（{bbcode_escape(rs.name)}）")
    try:
        with store.atomic():
            store.set_meta(META_SEED, seed.hex())
            store.set_meta(META_SALT, salt)
            store.set_meta(META_TEXT, text)
            store.set_meta(META_COMMITMENT, digest)
            store.set_meta(META_AT, now.isoformat())
            ids = save_drafts(store, [spec], now=now)
            mode_note = _write_atomic(path, new, secret=True)  # last: a failure rolls back
    except OSError as exc:
        raise click.ClickException(
            f"无法写入游戏文件 {path}（{exc.strerror or exc}）：没有发牌，数据库也没有记录"
        ) from exc
    click.echo(
        f"已为 {len(made.players)} 名玩家发牌（规则集 {rs.id}），身份牌已写入 {path}"
        "（只有导演看得到）。"
    )
    if earlier and earlier != digest:
        click.echo(f"上一次发牌（承诺 {earlier[:16]}…）已作废。")
    if mode_note:
        click.echo(mode_note)
    click.echo(f"承诺（SHA-256）：{digest}")
    where = (
        f"发往帖子 {tid}"
        if tid is not None
        else "没有目标帖子（--thread 写规则帖的 tid），可复制后手动发"
    )
    if ids:
        click.echo(f"已起草第 {ids[0]} 号草稿「发牌承诺」（待批准，{where}）。")
    if dropped:
        click.echo(
            f"已删除 [{ruleset}] 中随旧身份牌定下的 {'、'.join(dropped)}：请在玩家重新选定后再写。"
        )
    for note in made.notes:
        click.echo(note)


def _confirm_reveal(store: Store) -> None:
    """Before the whole deal is printed and drafted: a game the engine has not seen end is
    said to be running, and the director asked (no answer, as in cron or a pipe: nothing)."""
    from pipeline.game.journal import latest_snapshot

    last = latest_snapshot(store)
    if last is not None and last.state.winner:
        return
    where = (
        f"引擎结算到{last.phase.zh}，还没有判出胜负"
        if last is not None
        else "引擎还没有结算过任何阶段，没有判出胜负"
    )
    click.echo(
        f"注意：这局游戏看起来还没有结束（{where}，见 bansha state）。--reveal 会在这里打印"
        "每名玩家的身份牌，并起草把它们公之于众的帖子（批准后发出）。",
        err=True,
    )
    try:
        sure = click.confirm("确定现在公开发牌吗？", default=False, err=True)
    except click.Abort:  # no answer: stdin closed (cron, a pipe) or Ctrl+C
        sure = False
        click.echo("", err=True)
    if not sure:
        raise click.ClickException(
            "没有公开：没有打印身份牌，也没有起草。游戏结束后再运行；"
            "游戏确实已经结束（只是没有用引擎结算）时加 --yes"
        )


def _reveal(store: Store, game: Game, tid: int | None, *, assume_yes: bool = False) -> None:
    text = store.get_meta(META_TEXT)
    seed_hex = store.get_meta(META_SEED)
    digest = store.get_meta(META_COMMITMENT)
    if not text or not seed_hex or not digest:
        raise click.ClickException(
            "数据库里没有 bansha deal 的发牌记录（身份牌是导演手写的？），无法公开"
        )
    if not assume_yes:
        _confirm_reveal(store)
    revealed = parse_canonical(text)
    now_cards = {p.name: sorted(p.cards) for p in game.players}
    changed = [name for _uid, name, cards in revealed.seats if now_cards.get(name) != sorted(cards)]
    spec = reveal_spec(text, digest, seed_hex, tid=tid)
    with store.atomic():
        ids = save_drafts(store, [spec], now=pipeline.cli.clock(game.game.tz))
    click.echo(text, nl=False)
    click.echo(f"承诺（SHA-256）：{digest}")
    if ids:
        click.echo(f"已起草第 {ids[0]} 号草稿「发牌公开」（待批准）。")
    else:
        click.echo("「发牌公开」草稿已经起草过，内容没有变化。")
    if changed:
        click.echo(
            "注意：游戏文件中这些玩家的身份牌与发牌时不同（导演改过）："
            + "、".join(changed)
            + "；公开的是发牌时的原文"
        )


def _find(pattern: str, text: str) -> str | None:
    m = re.search(pattern, text, re.IGNORECASE)
    return m.group(1).lower() if m else None


def _verify(
    game_file: Path | None,
    source: Any,
    expected: str | None,
    seed_hex: str | None,
    db_path: str | None,
) -> None:
    raw = source.read()
    try:
        text = extract_canonical(raw)
        revealed = parse_canonical(text)
    except DealError as exc:
        raise click.ClickException(f"读不懂发牌原文：{exc}") from exc
    digest = commitment(text)
    failures: list[str] = []
    click.echo(
        f"发牌原文：游戏 {revealed.game}，规则集 {revealed.ruleset}，{len(revealed.seats)} 名玩家"
    )
    click.echo(f"原文的 SHA-256：{digest}")
    stored: str | None = None
    game, store_path = _verify_game(game_file, db_path)
    if store_path is not None:
        try:
            store = open_store_readonly(store_path)
        except StoreError:
            store = None
        if store is not None:
            try:
                stored = store.get_meta(META_COMMITMENT)
            finally:
                store.close()
    published = _find(r"承诺（SHA-256）：\s*(?:\[code\])?\s*([0-9a-f]{64})", raw)
    if expected is not None:
        expected = expected.strip().lower()
        if not _HEX64.fullmatch(expected):
            raise click.UsageError("--commitment 应为 64 位十六进制数字")
        _compare(digest, expected, "与 --commitment 给出的承诺", failures)
    if stored is not None:
        _compare(digest, stored, "与数据库中发牌时的承诺", failures)
    if expected is None and stored is None:
        if published:
            _compare(digest, published, "与公开帖中写的承诺", failures)
        click.echo("提示：请把上面的值与开局前公布的承诺逐字比较（或用 --commitment 给出它）。")
    seed = seed_hex or _find(r"(?:随机种子|seed)\s*[:：=]\s*(?:\[code\])?\s*([0-9a-f]{64})", raw)
    if seed is None:
        click.echo("种子复算：没有种子（用 --seed 给出公开的随机种子），未复算")
        rs = get_ruleset(revealed.ruleset)
        for p in rs.validate_setup([(n, list(c)) for _u, n, c in revealed.seats]):
            failures.append(f"规则检查：{p}")
    else:
        try:
            problems = redeal_problems(
                revealed, SeedStream.from_hex(seed), get_ruleset(revealed.ruleset)
            )
        except ValueError as exc:  # a bad seed (DealError) or an unknown rule set
            raise click.ClickException(str(exc)) from exc
        if problems:
            failures += problems
        else:
            click.echo(
                f"种子复算：一致（{len(revealed.seats)} 个座次的身份牌都由种子推出，阵容合规）"
            )
    if game is not None:
        mine = {p.name: sorted(p.cards) for p in game.players}
        for _uid, name, cards in revealed.seats:
            if name in mine and mine[name] and mine[name] != sorted(cards):
                click.echo(f"注意：游戏文件中「{name}」的身份牌与公开的原文不同")
    if failures:
        for f in failures:
            click.echo(f"不一致：{f}")
        raise click.ClickException(f"核对未通过：{len(failures)} 处不一致")
    click.echo("核对通过。")


def _compare(digest: str, other: str, what: str, failures: list[str]) -> None:
    if digest == other:
        click.echo(f"承诺核对：{what}一致")
    else:
        failures.append(f"原文的 SHA-256 {what}不同（承诺是 {other}）")


def _verify_game(game_file: Path | None, db_path: str | None) -> tuple[Game | None, Path | None]:
    """The director's game and store, when there are any (a player has neither)."""
    path = game_file
    if path is None:
        try:
            path, _how = find_game_file()
            game = load_game(path, env=os.environ, check_login=False)
        except (click.ClickException, GameFileError):
            return None, None  # a player's folder: nothing of the director's to compare
    else:
        if not path.exists():
            raise click.ClickException(f"找不到游戏文件：{path}")
        game = _load(path)
    db = resolve_db_path(path, db_path, os.environ)
    return game, db if db.is_file() else None
