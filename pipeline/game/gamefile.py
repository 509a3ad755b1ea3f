"""Load and validate a game file (TOML): the contract directors write (docs/游戏文件.md).

``load_game(path)`` reads the file with :mod:`tomllib`, validates it with pydantic v2 (frozen
models, unknown keys are errors) and runs the cross-field checks (duplicate names, uids and tids,
day order, closing times, the login cookie). Every problem found is collected first; then one
:class:`GameFileError` is raised whose ``str()`` is one Chinese line per problem, each naming the
file and the key path (``players[3].uid``, ``days[1].closes``). Nothing runs on a half-valid file.

Indices in key paths are 0-based, like the ``loc`` of pydantic; each list item also carries a
hint a director can find in the file (the player's name, the day number, or "第 4 个 [[players]]").

Error messages never contain an environment variable's value (the login cookie), nor anything
from the secret table named after the rule set, nor a player's cards.
"""

import difflib
import json
import logging
import os
import re
import tomllib
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal, TypeGuard
from urllib.parse import urlsplit, urlunsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import ErrorDetails, PydanticCustomError

from engine.rulesets import EXAMPLE_RULESET, EXAMPLE_SECRET_TABLE, get_ruleset, ruleset_ids
from pipeline import DB_ENV, default_db_path, expand_home, resolve_db_path
from pipeline.game.roles import THREAD_ROLE_TITLES, ThreadRole

__all__ = [
    "DB_ENV",
    "INQUIRY_RULESETS",
    "RULESETS",
    "RULESET_TITLES",
    "SEX_RULESETS",
    "SHERIFF_ELECTION_RULESETS",
    "THREAD_ROLE_TITLES",
    "TWO_ROUND_RULESETS",
    "Day",
    "Director",
    "Drafts",
    "Forum",
    "Game",
    "GameFileError",
    "GameInfo",
    "Player",
    "Problem",
    "Ruleset",
    "ThreadRole",
    "Threads",
    "Votes",
    "default_db_path",
    "load_game",
    "one_line",
    "parse_game",
    "resolve_db_path",
    "templates_folder",
]

logger = logging.getLogger(__name__)

#: The rule sets' ids, in the registry's order (engine.rulesets: the only place that knows them;
#: what a rule set is — its title, election, inquiry thread … — is read from its class).
RULESETS: Final[tuple[str, ...]] = ruleset_ids()


def _has_ruleset(value: object, what: Callable[[Any], bool]) -> TypeGuard[str]:
    """Whether ``value`` (raw, from the file) names a rule set that has ``what``: only that one
    rule set is imported (the registry loads a rule set when it is asked for)."""
    return isinstance(value, str) and value in RULESETS and what(get_ruleset(value))


#: The tables over every rule set (their titles, which ones elect a sheriff …), built on first
#: use by the module ``__getattr__`` below: a game file is validated against its own rule set
#: only, so loading a game imports one rule set (tests/pipeline/cli/test_cli_lazy.py).
_LAZY_TABLES: Final[dict[str, Callable[[], Any]]] = {
    "RULESET_TITLES": lambda: {r: get_ruleset(r).title for r in RULESETS},
    #: Rule sets whose first day elects the sheriff (``has_sheriff_election``).
    "SHERIFF_ELECTION_RULESETS": lambda: frozenset(
        r for r in RULESETS if get_ruleset(r).has_sheriff_election
    ),
    #: Rule sets with an inquiry thread (询问贴, ``inquiry``).
    "INQUIRY_RULESETS": lambda: frozenset(
        r for r in RULESETS if get_ruleset(r).inquiry is not None
    ),
    #: Rule sets where one game day can have two 正午 vote rounds (``two_vote_rounds``).
    "TWO_ROUND_RULESETS": lambda: frozenset(r for r in RULESETS if get_ruleset(r).two_vote_rounds),
    #: Rule sets that need every player's sex (``player_fields``).
    "SEX_RULESETS": lambda: frozenset(r for r in RULESETS if "sex" in get_ruleset(r).player_fields),
    #: every rule set with its title, for the messages that list them
    "_CHOICES": lambda: "、".join(f"{r}（{get_ruleset(r).title}）" for r in RULESETS),
}

if TYPE_CHECKING:  # what the module ``__getattr__`` answers, for type checkers and linters
    RULESET_TITLES: Mapping[str, str]
    SHERIFF_ELECTION_RULESETS: frozenset[str]
    INQUIRY_RULESETS: frozenset[str]
    TWO_ROUND_RULESETS: frozenset[str]
    SEX_RULESETS: frozenset[str]
    _CHOICES: str


def __getattr__(name: str) -> Any:
    """The tables of :data:`_LAZY_TABLES`, built when first asked for (then kept)."""
    build = _LAZY_TABLES.get(name)
    if build is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = build()
    return value


def _check_ruleset(value: object) -> str:
    """``game.ruleset``: one of the registry's ids, exactly as written."""
    if isinstance(value, str) and value in RULESETS:
        return value
    if isinstance(value, str):
        message = f"未知的规则集 {_show(value)}，应为以下之一：{__getattr__('_CHOICES')}"
    else:  # ruleset = [] / {} / 3 / true: the type is what is wrong
        choices = __getattr__("_CHOICES")
        message = f'应为字符串（用双引号括起来），如 "{EXAMPLE_RULESET}"；可选：{choices}'
    raise PydanticCustomError("ruleset", "{message}", {"message": message})


Ruleset = Annotated[str, BeforeValidator(_check_ruleset)]

_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --------------------------------------------------------------------------- errors


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a game file."""

    loc: str  # key path, e.g. "players[3].uid（玩家 "饺子"）"; "" for the file as a whole
    message: str  # Simplified Chinese, never containing a secret


class GameFileError(ValueError):
    """A game file that cannot be used; ``str()`` is one Chinese line per problem."""

    def __init__(self, source: str | Path, problems: Iterable[Problem]) -> None:
        self.source = str(source)
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__(_format_problems(self.source, self.problems))


#: every character str.splitlines() breaks a line at (\n, \r, \x85, \u2028 …): shown escaped,
#: so a value a director wrote never splits one problem into two lines
_LINE_BREAKS = frozenset(c for c in map(chr, range(0x3000)) if len(f"a{c}b".splitlines()) > 1)


def one_line(text: str) -> str:
    """``text`` with every line break a director's value brought shown escaped (``\\u2028``)."""
    return "".join(f"\\u{ord(c):04x}" if c in _LINE_BREAKS else c for c in text)


def _format_problems(source: str, problems: tuple[Problem, ...]) -> str:
    lines = [
        one_line(
            f"游戏文件 {source}：{p.loc}：{p.message}"
            if p.loc
            else f"游戏文件 {source}：{p.message}"
        )
        for p in problems
    ]
    if len(lines) > 1:
        lines.insert(0, f"游戏文件 {source} 有 {len(lines)} 处错误，未做任何处理：")
    return "\n".join(lines)


# --------------------------------------------------------------------------- field types


def _show(value: object) -> str:
    """A value as the director wrote it in TOML (strings in double quotes)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _text(what: str) -> AfterValidator:
    """A non-blank string without surrounding spaces (names, aliases, cards)."""

    def check(value: str) -> str:
        if not value.strip():
            raise PydanticCustomError("blank", "{what}不能为空", {"what": what})
        if value != value.strip():
            raise PydanticCustomError("padded", "{what}首尾不能有空格", {"what": what})
        return value

    return AfterValidator(check)


def _check_tid(value: object) -> object:
    if isinstance(value, str) and value.strip().isdigit():
        raise PydanticCustomError(
            "tid_type", "帖子编号必须是数字，不要加引号：写成 {tid}", {"tid": value.strip()}
        )
    if isinstance(value, str) and (match := _ID_IN_URL.search(value)) is not None:
        raise PydanticCustomError("tid_type", _id_in_url_words(match))
    if isinstance(value, bool) or not isinstance(value, int):
        raise PydanticCustomError("tid_type", "帖子编号必须是数字（tid），如 12345")
    if value <= 0:
        raise PydanticCustomError("tid_value", "帖子编号必须是正整数")
    return value


def _check_timezone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise PydanticCustomError(
            "timezone",
            "未知的时区 {tz}，应为 IANA 时区名，如 Asia/Shanghai",
            {"tz": _show(value)},
        ) from None
    return value


def _check_base_url(value: str) -> str:
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PydanticCustomError(
            "base_url", "论坛地址应以 http:// 或 https:// 开头，如 https://bbs.example.com/"
        )
    if parts.query or parts.fragment or parts.path.endswith(".php"):
        raise PydanticCustomError(
            "base_url",
            "应为论坛的根地址（forum.php 所在的目录），如 https://bbs.example.com/，"
            "不要带 forum.php 或 ? 后面的参数",
        )
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _check_env_name(value: str) -> str:
    # Never echo the value: a director may have pasted the cookie itself here.
    if not _ENV_NAME_RE.fullmatch(value):
        raise PydanticCustomError(
            "env_name",
            "应为环境变量的名字（字母、数字和下划线，如 BANSHA_COOKIE），不是 cookie 或密码本身；"
            "秘密只从环境变量读取，不写进游戏文件",
        )
    return value


def _check_game_id(value: str) -> str:
    if not value or any(c.isspace() or c in "/\\" for c in value):
        raise PydanticCustomError("game_id", "游戏编号不能为空，也不能含空格或 / \\")
    return value


Tid = Annotated[int, BeforeValidator(_check_tid)]
Name = Annotated[str, _text("名字")]
Alias = Annotated[str, _text("别名")]
Card = Annotated[str, _text("身份牌名")]
EnvName = Annotated[str, AfterValidator(_check_env_name)]


class _Model(BaseModel):
    # strict: a TOML string is never silently read as a number, a boolean or a date.
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


# --------------------------------------------------------------------------- models


class GameInfo(_Model):
    """``[game]``."""

    id: Annotated[str, AfterValidator(_check_game_id)]
    title: str
    ruleset: Ruleset
    timezone: Annotated[str, AfterValidator(_check_timezone)]
    # the 规则帖 (bansha deal posts its commitment and reveal there) and the 报名帖 (bansha signup
    # reads it); both optional, a command's --thread wins
    rules_thread: Tid | None = None
    signup_thread: Tid | None = None

    @property
    def tz(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)


class Forum(_Model):
    """``[forum]``: where the game is played and how to read it."""

    base_url: Annotated[str, AfterValidator(_check_base_url)]  # normalised to end with "/"
    encoding: Literal["auto", "utf-8", "gbk"] = "auto"
    source: Literal["auto", "mobile-api", "html"] = "auto"
    cookie_env: EnvName = "BANSHA_COOKIE"
    requires_login: bool = False
    min_interval_s: float = Field(default=1.0, ge=0, allow_inf_nan=False)
    ppp: int = Field(default=10, gt=0)
    username_env: EnvName | None = None
    password_env: EnvName | None = None
    # the game's section (版块, forum.php?mod=forumdisplay&fid=…): where bansha opens each
    # day's threads when a day has no tid for them ([threads], docs/游戏文件.md)
    fid: Tid | None = None


class Director(_Model):
    """``[director]``: the forum accounts whose posts are the director's."""

    names: list[Name] = Field(min_length=1)
    uids: list[Annotated[int, Field(gt=0)]] = Field(default_factory=list)


class Player(_Model):
    """One ``[[players]]`` entry."""

    name: Name  # the forum account name = the name a vote must use
    uid: int = Field(gt=0)
    aliases: list[Alias] = Field(default_factory=list)
    cards: list[Card] = Field(default_factory=list, repr=False)  # private, director only
    sex: Literal["男", "女"] | None = None
    faction: str | None = Field(default=None, repr=False)


class Day(_Model):
    """One ``[[days]]`` entry: a game day's window and its threads."""

    day: int = Field(ge=0)
    opens: AwareDatetime
    closes: AwareDatetime
    discussion: Tid | None = None
    vote: Tid | None = None
    progress: Tid | None = None
    inquiry: Tid | None = None
    # m209 太阳[日不落] (m209.txt:377-378): the first 正午 round's vote thread and its close;
    # ``vote`` is then the extra round's thread, judged from ``first_closes`` to ``closes``
    first_vote: Tid | None = None
    first_closes: AwareDatetime | None = None
    # None only on a Day built alone: inside a Game it is always resolved to a bool
    # (day 1 is the election where the rule set has one, unless the director says otherwise).
    sheriff_election: bool | None = None
    accelerated: bool | None = None  # director's override of the 申请加速 count

    @property
    def threads(self) -> dict[ThreadRole, int]:
        """The configured threads of this day, in a fixed role order."""
        return {role: tid for role in ThreadRole if (tid := getattr(self, role.value)) is not None}


class Drafts(_Model):
    """``[drafts]`` (optional): how bansha drafts the director's posts (``pipeline.drafts``)."""

    # the vote reminder is drafted this many minutes before the close
    reminder_minutes: int = Field(default=60, gt=0)
    # appended to every draft (the director's own BBCode, posted as written)
    director_signature: str = ""
    # a folder of the director's own templates (*.j2), relative to the game file and inside
    # its folder (templates_folder); a kind without a file there uses config/templates
    templates: str | None = None
    # Discuz's maxpostsize (bytes in the forum's charset); longer drafts are split into parts
    max_post_bytes: int = Field(default=10000, ge=1000)


#: The fields a ``[threads]`` subject pattern may use (str.format names).
SUBJECT_FIELDS: Final[Mapping[str, str]] = {
    "tag": "游戏的标签（[threads] tag，默认取游戏标题开头方括号里的部分，如 [M135]）",
    "title": "游戏标题（[game] title）",
    "ruleset": "规则集的名字（如 让子弹飞）",
    "day": "第几天（数字）",
    "role": "帖子的种类（讨论帖、投票帖、进程帖、询问帖、第一轮投票帖）",
}


def _check_subject(value: str) -> str:
    import string

    try:
        names = [f for _, f, _, _ in string.Formatter().parse(value) if f is not None]
    except ValueError as exc:
        raise PydanticCustomError(
            "subject",
            "{message}",
            {"message": f"花括号没有配对（{exc}）；字面的花括号写作 {{{{ }}}}"},
        ) from None
    unknown = [n for n in names if n not in SUBJECT_FIELDS]
    if unknown:
        allowed = "、".join("{" + k + "}" for k in SUBJECT_FIELDS)
        raise PydanticCustomError(
            "subject",
            "{message}",
            {"message": f"标题里有不认识的占位符 {{{unknown[0]}}}；可用：{allowed}"},
        )
    return value


Subject = Annotated[str, Field(min_length=1), AfterValidator(_check_subject)]


class Threads(_Model):
    """``[threads]`` (optional): the threads bansha opens for a day that has no tid for them
    (``pipeline.drafts``, the game's threads) and the closing of the vote threads."""

    # the new thread's subject; {tag} {title} {ruleset} {day} {role} (SUBJECT_FIELDS)
    subject: Subject = "{tag}第{day}天{role}"
    # "game": one progress thread (进程帖) for the whole game, opened with the first day that has
    # none and used by every later day; "day": a progress thread per day
    progress: Literal["game", "day"] = "game"
    # the subject of the game's one progress thread (progress = "game")
    progress_subject: Subject = "{tag}{role}"
    # {tag}: default the game title's leading [..] or 【..】 (e.g. [M135]), else [title]
    tag: str | None = None
    # how many hours before a day opens its new threads are drafted (posted not before it opens)
    draft_hours: float = Field(default=24.0, ge=0, le=24 * 14, allow_inf_nan=False)
    # closing (locking) the vote threads at the close: "draft" a close draft per vote thread,
    # approved like any draft; "auto" approved in advance by this file; "off" never
    close_vote: Literal["draft", "auto", "off"] = "draft"
    # the threads bansha opens with Discuz's 回帖仅作者可见 (only the thread's author and the
    # section's moderators see the replies), by role; None: the rule set's (zhenyan: the vote
    # threads, zhenyan.txt:37/173), [] none
    author_only: list[Literal["discussion", "vote", "progress", "inquiry", "first_vote"]] | None = (
        None
    )


class Notify(_Model):
    """``[notify]`` (optional): where bansha tells the director (Apprise URLs, pipeline.notify)."""

    # Apprise URLs (QQ/WeChat bots, DingTalk, Feishu, ntfy, mailto://, json://…); they often
    # hold a bot's token, so they are never shown (also BANSHA_NOTIFY, space-separated)
    urls: list[str] = Field(default_factory=list, repr=False)
    # the console's address as the director opens it (a link in the notifications)
    console_url: str | None = None


class Votes(_Model):
    """``[votes]`` (optional): how strictly names in votes are read."""

    # false (default): invisible characters (zero-width, BOM, soft hyphen, variation selectors)
    # are removed and full-width Latin letters/digits folded to half-width before a name is
    # matched; such a vote counts and is flagged for the director. true: the name must match
    # exactly as written. Lookalikes from other scripts are never accepted either way.
    strict_names: bool = False


class Game(_Model):
    """A whole validated game file."""

    game: GameInfo
    forum: Forum
    director: Director
    players: list[Player] = Field(min_length=1)
    days: list[Day] = Field(default_factory=list)
    drafts: Drafts = Field(default_factory=Drafts)
    votes: Votes = Field(default_factory=Votes)
    notify: Notify = Field(default_factory=Notify)
    threads: Threads = Field(default_factory=Threads)
    # The table named after the rule set ([zhenyan] …): secrets, never in a repr or a message.
    secrets: dict[str, Any] = Field(default_factory=dict, repr=False)

    @model_validator(mode="before")
    @classmethod
    def _default_sheriff_election(cls, data: Any) -> Any:
        if not isinstance(data, Mapping) or not isinstance(data.get("days"), list):
            return data
        info = data.get("game")
        ruleset = _known_str(
            info.get("ruleset") if isinstance(info, Mapping) else getattr(info, "ruleset", None)
        )
        days: list[Any] = []
        for entry in data["days"]:
            if isinstance(entry, Mapping) and entry.get("sheriff_election") is None:
                number = entry.get("day")
                entry = {**entry, "sheriff_election": _is_election(ruleset, number)}
            elif isinstance(entry, Day) and entry.sheriff_election is None:
                entry = entry.model_copy(
                    update={"sheriff_election": _is_election(ruleset, entry.day)}
                )
            days.append(entry)
        return {**data, "days": days}

    @model_validator(mode="after")
    def _consistent(self) -> "Game":
        problems = _cross_check(self.model_dump(exclude={"secrets"}))
        if problems:
            raise PydanticCustomError(
                "game_consistency",
                "{problems}",
                {"problems": "；".join(f"{p.loc}：{p.message}" for p in problems)},
            )
        return self

    @property
    def director_names(self) -> frozenset[str]:
        return frozenset(self.director.names)

    def player(self, name_or_alias: str) -> Player | None:
        """The player whose account name or an allowed alias is exactly this text."""
        for player in self.players:
            if player.name == name_or_alias:
                return player
        for player in self.players:
            if name_or_alias in player.aliases:
                return player
        return None

    def day(self, n: int) -> Day:
        for day in self.days:
            if day.day == n:
                return day
        raise ValueError(f"游戏文件中没有第 {n} 天")

    def thread_roles(self) -> list[tuple[int, ThreadRole, int]]:
        """Every configured thread as ``(day, role, tid)``, in file order."""
        return [(d.day, role, tid) for d in self.days for role, tid in d.threads.items()]

    def to_toml_dict(self) -> dict[str, Any]:
        """The file-shaped data (secrets under the rule set's table, no None values)."""
        data = self.model_dump(exclude={"secrets"}, exclude_none=True)
        if self.secrets:
            data[self.game.ruleset] = dict(self.secrets)
        return data


def _is_election(ruleset: object, number: object) -> bool:
    return _int(number) == 1 and _has_ruleset(ruleset, lambda rs: rs.has_sheriff_election)


def _known_str(value: object) -> str | None:
    """A raw value that can be compared with rule-set ids: only a string (``ruleset = []`` or
    ``{}`` is reported by the field check, never looked up in a set)."""
    return value if isinstance(value, str) else None


def _raw_ruleset(data: Mapping[str, Any]) -> str | None:
    """``game.ruleset`` as written, when it is a string (checked or not)."""
    info = data.get("game")
    return _known_str(info.get("ruleset")) if isinstance(info, Mapping) else None


# --------------------------------------------------------------------------- loading


def load_game(
    path: Path,
    *,
    env: Mapping[str, str] | None = None,
    check_login: bool = True,
    raw: bytes | None = None,
) -> Game:
    """Read, validate and return the game file at ``path``.

    ``env`` is where the login cookie is looked up (``os.environ`` when None); it is only
    required when ``[forum] requires_login = true`` and ``check_login`` (commands that never
    talk to the forum pass False). ``raw``: the file's bytes, already read (the caller hashed
    exactly what is parsed); ``path`` then only names it. Raises :class:`GameFileError`.
    """
    path = Path(path)
    try:
        if raw is None:
            raw = path.read_bytes()
    except FileNotFoundError:
        raise GameFileError(path, [Problem("", "找不到这个文件")]) from None
    except IsADirectoryError:
        raise GameFileError(path, [Problem("", "这是一个目录，不是游戏文件")]) from None
    except OSError as exc:
        raise GameFileError(path, [Problem("", f"无法读取（{exc.strerror}）")]) from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise GameFileError(
            path, [Problem("", f"第 {line} 行不是 UTF-8 编码；请把游戏文件另存为 UTF-8")]
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GameFileError(path, [Problem("", _toml_error(str(exc), text))]) from None
    return parse_game(
        data, source=path, env=env, check_login=check_login, folder=path.resolve().parent
    )


def parse_game(
    data: Mapping[str, Any],
    *,
    source: str | Path = "<dict>",
    env: Mapping[str, str] | None = None,
    check_login: bool = True,
    folder: Path | None = None,
) -> Game:
    """Validate already-parsed TOML data (what :func:`tomllib.load` returns).

    ``folder``: the game file's folder, which ``[drafts] templates`` must stay inside (without
    it only a ``..`` in that path is refused)."""
    env = os.environ if env is None else env
    problems: list[tuple[tuple[Any, ...], Problem]] = []
    data, secret_problems = _split_secrets(data)
    problems += secret_problems
    problems += [((*_sort_key("drafts"), 1), p) for p in _templates_check(data, folder)]
    cross = _cross_check(data)
    problems += [((*_sort_key(p.loc), 1), p) for p in cross]
    if check_login:
        problems += [((*_sort_key(p.loc), 1), p) for p in _env_check(data, env)]
    game: Game | None = None
    try:
        game = Game.model_validate(data)
    except ValidationError as exc:
        tz = _raw_timezone(data)
        for err in exc.errors():
            if err["type"] == "game_consistency":
                if not cross:  # the raw checks should have seen it; never drop a problem
                    problems.append(((99,), Problem("", err["msg"])))
                continue
            problems.append(((*_sort_key(err["loc"]), 0), _pydantic_problem(err, tz)))
    if (
        game is not None
        and get_ruleset(game.game.ruleset).inquiry is not None
        and not any(p.loc.startswith(f"{game.game.ruleset}.") for _, p in secret_problems)
    ):
        # the secret words: checked here, so a bad table never reaches a cycle
        from pipeline.game.words import InquiryError, load_secrets

        try:
            load_secrets(game)
        except InquiryError as exc:  # its message never shows a word
            problems.append(((98,), Problem(game.game.ruleset, str(exc))))
    if problems or game is None:
        problems.sort(key=lambda item: item[0])
        raise GameFileError(
            source, [Problem(_with_hint(p.loc, data), p.message) for _, p in problems]
        )
    logger.debug("loaded game %s (%s) from %s", game.game.id, game.game.ruleset, source)
    return game


def templates_folder(value: str, folder: Path | None) -> Path:
    """The director's template folder named by ``[drafts] templates``, resolved inside the
    game file's ``folder``; raises :class:`ValueError` (Chinese) for one that leaves it.

    Templates are code bansha runs (sandboxed, pipeline.drafts): a game file may only name a
    folder beside it — no ``..``, no absolute path elsewhere, no symbolic link out of it.
    Without ``folder`` (data not read from a file) only ``..`` is checked.
    """
    where = "草稿模板目录必须在游戏文件所在的目录之内"
    raw = expand_home(value)  # a PathError is a ValueError: the check says it
    if ".." in raw.parts:
        raise ValueError(f"{where}，不能用 ..：{_show(value)}")
    if folder is None:
        return raw
    base = Path(folder).resolve()
    resolved = (raw if raw.is_absolute() else base / raw).resolve()
    if resolved != base and base not in resolved.parents:
        why = "指向了外面（符号链接）" if not raw.is_absolute() else "这是别处的绝对路径"
        raise ValueError(f"{where}（{base}），{why}：{_show(value)}")
    return resolved


def _templates_check(data: Mapping[str, Any], folder: Path | None) -> list[Problem]:
    drafts = data.get("drafts")
    value = drafts.get("templates") if isinstance(drafts, Mapping) else None
    if not isinstance(value, str) or not value.strip():
        return []  # a wrong type is the field check's
    try:
        templates_folder(value, folder)
    except ValueError as exc:
        return [Problem("drafts.templates", str(exc))]
    return []


# --------------------------------------------------------------------------- secrets table


def _split_secrets(
    data: Mapping[str, Any],
) -> tuple[dict[str, Any], list[tuple[tuple[Any, ...], Problem]]]:
    """Move the table named after the rule set to ``secrets``; refuse other rule sets' tables."""
    out = dict(data)
    problems: list[tuple[tuple[Any, ...], Problem]] = []
    ruleset = _raw_ruleset(data)
    if "secrets" in out:
        out.pop("secrets")
        problems.append(
            (
                _sort_key("secrets"),
                Problem(
                    "secrets",
                    "未知的键（拼写错误？）；规则集的秘密写在以规则集命名的表里，"
                    f"如 [{EXAMPLE_SECRET_TABLE}]",
                ),
            )
        )
    for key in RULESETS:
        if key not in out:
            continue
        table = out.pop(key)
        if key != ruleset:
            if ruleset in RULESETS:
                message = f"本局规则集是 {ruleset}，不能有规则集 {key} 的表 [{key}]"
            else:
                message = f"[{key}] 是规则集 {key} 的秘密表，但 game.ruleset 不是 {key}"
            problems.append((_sort_key(key), Problem(key, message)))
        elif not isinstance(table, Mapping):
            problems.append((_sort_key(key), Problem(key, f"应为表：写成 [{key}] 后接键值对")))
        else:
            out["secrets"] = dict(table)
            problems += [(_sort_key(key), p) for p in _secret_key_problems(key, table)]
    return out, problems


def _secret_key_problems(ruleset: str, table: Mapping[str, Any]) -> list[Problem]:
    """Keys of the rule set's secret table that it does not read (a typo would be ignored
    silently otherwise): each named, with the nearest known key as a hint. Never shows a
    value."""
    known = get_ruleset(ruleset).secret_keys
    where = (
        f"[{ruleset}] 表可用的键：{'、'.join(known)}"
        if known
        else f"规则集 {ruleset} 没有秘密表，不必写 [{ruleset}]"
    )
    problems: list[Problem] = []
    for key in table:
        if key in known:
            continue
        near = difflib.get_close_matches(str(key), known, n=1)
        typo = f"拼写错误？是不是 {near[0]}？" if near else "拼写错误？"
        problems.append(
            Problem(f"{ruleset}.{key}", f"未知的键（{typo}）；{where}（见 docs/游戏文件.md）")
        )
    return problems


# --------------------------------------------------------------------------- cross checks


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() == value and value else None


def _aware(value: object) -> datetime | None:
    if isinstance(value, datetime) and value.utcoffset() is not None:
        return value
    return None


def _entries(data: Mapping[str, Any], key: str) -> list[tuple[int, Mapping[str, Any]]]:
    items = data.get(key)
    if not isinstance(items, list):
        return []
    return [(i, item) for i, item in enumerate(items) if isinstance(item, Mapping)]


def _fold(name: str) -> str:
    """How the forum tells names apart: case and full/half width do not count."""
    return unicodedata.normalize("NFKC", name).casefold()


def _same(a: str, b: str) -> str:
    return "" if a == b else "（不区分大小写和全半角）"


def _cross_check(data: Mapping[str, Any]) -> list[Problem]:
    """Checks across fields, on file-shaped data; entries of the wrong shape are skipped
    (pydantic reports those), so every problem in the file is found in one pass."""
    problems: list[Problem] = []
    ruleset = _raw_ruleset(data)
    players = _entries(data, "players")

    # Names and aliases: every spelling must point at exactly one player.
    spellings: dict[str, tuple[str, str]] = {}  # folded -> (key path, as written)
    for i, player in players:
        name = _str(player.get("name"))
        if name is None:
            continue
        here = f"players[{i}].name"
        if (seen := spellings.get(_fold(name))) is not None:
            problems.append(
                Problem(here, f"玩家名 {_show(name)} 与 {seen[0]} 重复{_same(name, seen[1])}")
            )
        else:
            spellings[_fold(name)] = (here, name)
    for i, player in players:
        aliases = player.get("aliases")
        if not isinstance(aliases, list):
            continue
        for j, alias in enumerate(aliases):
            alias = _str(alias)
            if alias is None:
                continue
            here = f"players[{i}].aliases[{j}]"
            seen = spellings.get(_fold(alias))
            if seen is None:
                spellings[_fold(alias)] = (here, alias)
            elif not seen[0].startswith(f"players[{i}]."):  # own name or alias: harmless
                problems.append(
                    Problem(
                        here,
                        f"别名 {_show(alias)} 与 {seen[0]}（{_show(seen[1])}）相同"
                        f"{_same(alias, seen[1])}，投给它的票将无法确定投给谁",
                    )
                )

    uids: dict[int, str] = {}
    for i, player in players:
        uid = _int(player.get("uid"))
        if uid is None:
            continue
        here = f"players[{i}].uid"
        if uid in uids:
            problems.append(Problem(here, f"uid {uid} 与 {uids[uid]} 重复"))
        else:
            uids[uid] = here

    if _has_ruleset(ruleset, lambda rs: "sex" in rs.player_fields):
        why = get_ruleset(ruleset).player_fields["sex"]
        for i, player in players:
            if player.get("sex") is None:
                problems.append(
                    Problem(
                        f"players[{i}].sex",
                        f'规则集 {ruleset} 需要每名玩家的性别（sex = "男" 或 "女"）：{why}',
                    )
                )

    problems += _setup_check(ruleset, players)

    director = data.get("director")
    if isinstance(director, Mapping):
        names = director.get("names")
        for j, dname in enumerate(names if isinstance(names, list) else []):
            dname = _str(dname)
            if dname is not None and (seen := spellings.get(_fold(dname))) is not None:
                problems.append(
                    Problem(
                        f"director.names[{j}]",
                        f"导演 {_show(dname)} 同时是玩家（{seen[0]}）{_same(dname, seen[1])}；"
                        "导演的帖子不计票也不计发言数",
                    )
                )
        duids = director.get("uids")
        for j, duid in enumerate(duids if isinstance(duids, list) else []):
            duid = _int(duid)
            if duid is not None and duid in uids:
                problems.append(
                    Problem(
                        f"director.uids[{j}]", f"导演的 uid {duid} 也是玩家的 uid（{uids[duid]}）"
                    )
                )

    problems += _check_days(data, ruleset)
    return problems


def _check_days(data: Mapping[str, Any], ruleset: object) -> list[Problem]:
    problems: list[Problem] = []
    # bansha opens the threads a day has no tid for when the file names the section
    forum = data.get("forum")
    managed = isinstance(forum, Mapping) and _int(forum.get("fid")) is not None
    numbers: dict[int, str] = {}
    last: tuple[int, datetime | None] | None = None  # (day number, closes) of the previous day
    tids: dict[int, tuple[ThreadRole, int]] = {}  # tid -> (role, day number) first seen
    for i, entry in _entries(data, "days"):
        number = _int(entry.get("day"))
        label = f"天数 {number}" if number is not None else f"第 {i + 1} 个 [[days]]"
        opens, closes = _aware(entry.get("opens")), _aware(entry.get("closes"))
        if number is not None:
            here = f"days[{i}].day"
            if number in numbers:
                problems.append(Problem(here, f"天数 {number} 重复（与 {numbers[number]} 相同）"))
            elif last is not None and number < last[0]:
                problems.append(
                    Problem(
                        here,
                        f"天数 {number} 排在天数 {last[0]} 之后；[[days]] 须按天数从小到大排列",
                    )
                )
            numbers.setdefault(number, here)
        if opens is not None and closes is not None:
            if closes < opens:
                problems.append(Problem(f"days[{i}].closes", f"{label} 的关门时间早于开门时间"))
            elif closes == opens:
                problems.append(Problem(f"days[{i}].closes", f"{label} 的关门时间等于开门时间"))
        if last is not None and last[1] is not None and opens is not None and opens < last[1]:
            problems.append(
                Problem(
                    f"days[{i}].opens",
                    f"{label} 的开门时间早于天数 {last[0]} 的关门时间（两天的时间段重叠）",
                )
            )
        if number is not None:
            last = (number, closes)
        problems += _first_round_problems(entry, i, label, ruleset, opens, closes, managed=managed)

        roles_today: dict[int, ThreadRole] = {}
        for role in ThreadRole:
            tid = _int(entry.get(role.value))
            if tid is None or tid <= 0:
                continue
            here = f"days[{i}].{role.value}"
            if role is ThreadRole.INQUIRY and _has_ruleset(ruleset, lambda rs: rs.inquiry is None):
                titles, inquiry = __getattr__("RULESET_TITLES"), __getattr__("INQUIRY_RULESETS")
                having = "、".join(f"{r}（{titles[r]}）" for r in RULESETS if r in inquiry)
                problems.append(Problem(here, f"只有 {having}有询问帖，本局规则集是 {ruleset}"))
            if tid in roles_today:
                other = roles_today[tid]
                problems.append(
                    Problem(
                        here,
                        f"{label} 的{THREAD_ROLE_TITLES[role]}与{THREAD_ROLE_TITLES[other]}"
                        f"用了同一个帖子编号 {tid}",
                    )
                )
                continue
            roles_today[tid] = role
            first = tids.setdefault(tid, (role, number if number is not None else -1))
            if first[0] is not role:
                problems.append(
                    Problem(
                        here,
                        f"帖子编号 {tid} 在{label} 是{THREAD_ROLE_TITLES[role]}，"
                        f"在天数 {first[1]} 却是{THREAD_ROLE_TITLES[first[0]]}",
                    )
                )
    return problems


def _first_round_problems(
    entry: Mapping[str, Any],
    i: int,
    label: str,
    ruleset: object,
    opens: datetime | None,
    closes: datetime | None,
    *,
    managed: bool = False,
) -> list[Problem]:
    """``first_vote`` / ``first_closes``: the first 正午 round of a 太阳[日不落] day
    (m209.txt:377). ``managed``: the file has ``[forum] fid``, so bansha opens the round's
    threads the day has no tid for (``first_closes`` alone is then enough)."""
    tid = _int(entry.get("first_vote"))
    has_tid = tid is not None and tid > 0
    first_closes = _aware(entry.get("first_closes"))
    if not has_tid and entry.get("first_closes") is None:
        return []
    here = f"days[{i}].first_vote"
    if _has_ruleset(ruleset, lambda rs: not rs.two_vote_rounds):
        two = __getattr__("TWO_ROUND_RULESETS")
        having = "、".join(f"{r} 的{get_ruleset(r).two_vote_rounds}" for r in RULESETS if r in two)
        return [
            Problem(
                here,
                f"只有 {having}有两轮[正午]放逐投票（第一轮投票帖），本局规则集是 {ruleset}",
            )
        ]
    problems: list[Problem] = []
    if not has_tid and not managed:
        problems.append(Problem(here, f"{label} 写了 first_closes，却没有第一轮投票帖 first_vote"))
    if entry.get("first_closes") is None:
        problems.append(
            Problem(
                f"days[{i}].first_closes",
                f"{label} 有第一轮投票帖，须写明第一轮[正午]的结束时间 first_closes",
            )
        )
    if _int(entry.get("vote")) is None and not managed:
        problems.append(
            Problem(
                f"days[{i}].vote",
                f"{label} 有第一轮投票帖，还须有额外一轮[正午]的投票帖 vote",
            )
        )
    if entry.get("sheriff_election") is True:
        problems.append(Problem(here, f"{label} 是警长竞选日，不能有两轮放逐投票"))
    if (
        first_closes is not None
        and opens is not None
        and closes is not None
        and not opens < first_closes < closes
    ):
        problems.append(
            Problem(
                f"days[{i}].first_closes",
                f"{label} 的第一轮结束时间须在开门与关门之间"
                f"（{opens.isoformat()} ～ {closes.isoformat()}）",
            )
        )
    return problems


def _setup_check(ruleset: Any, players: Sequence[tuple[int, Mapping[str, Any]]]) -> list[Problem]:
    """The rule set's own check of the line-up (player count, card pairs, forbidden
    combinations, each ``faction`` against the cards …).

    Runs only when every player lists cards: a file without cards (votes and conduct only) is
    valid. The messages name the cards: they are for the director, whose file holds them anyway.
    """
    if ruleset not in RULESETS or not players:
        return []
    if not all(isinstance(p.get("cards"), list) and p.get("cards") for _, p in players):
        return []
    setup = [(str(p.get("name")), [str(c) for c in p["cards"]]) for _, p in players]
    factions = {str(p.get("name")): p.get("faction") for _, p in players}
    problems = get_ruleset(ruleset).lineup_problems(setup, factions)  # count, cards, factions
    return [Problem("players", msg) for msg in problems]


def _env_check(data: Mapping[str, Any], env: Mapping[str, str]) -> list[Problem]:
    """A forum guests cannot read needs the login cookie; name the variable, never its value."""
    forum = data.get("forum")
    if not isinstance(forum, Mapping) or forum.get("requires_login") is not True:
        return []
    cookie_env = forum.get("cookie_env", "BANSHA_COOKIE")
    if not isinstance(cookie_env, str) or not _ENV_NAME_RE.fullmatch(cookie_env):
        return []  # reported by the field check
    if env.get(cookie_env, "").strip():
        return []
    user_env, password_env = forum.get("username_env"), forum.get("password_env")
    if (
        isinstance(user_env, str)
        and isinstance(password_env, str)
        and env.get(user_env, "").strip()
        and env.get(password_env, "")
    ):
        return []  # the client can log in with the account instead
    return [
        Problem(
            "forum.cookie_env",
            f"论坛需要登录（requires_login = true），但环境变量 {cookie_env} 未设置或为空；"
            f"请把导演账号的登录 cookie 放进环境变量 {cookie_env}",
        )
    ]


# --------------------------------------------------------------------------- messages

_SECTIONS: Final = (
    "game",
    "forum",
    "director",
    "players",
    "days",
    "drafts",
    "votes",
    "notify",
    "secrets",
    *RULESETS,
)


def _sort_key(loc: str | tuple[int | str, ...]) -> tuple[Any, ...]:
    """File order: sections as in docs/游戏文件.md, then list index; unknown keys last."""
    if isinstance(loc, str):
        match = re.match(r"([A-Za-z0-9_]*)(?:\[(\d+)\])?", loc)
        head, index = (match.group(1), match.group(2)) if match else ("", None)
        rank = _SECTIONS.index(head) if head in _SECTIONS else len(_SECTIONS)
        return (rank, int(index) if index is not None else -1)
    head = loc[0] if loc else ""
    rank = _SECTIONS.index(head) if head in _SECTIONS else len(_SECTIONS)
    index = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else -1
    return (rank, index)


def _raw_timezone(data: Mapping[str, Any]) -> ZoneInfo | None:
    info = data.get("game")
    key = info.get("timezone") if isinstance(info, Mapping) else None
    if not isinstance(key, str):
        return None
    try:
        return ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


def _key_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _with_hint(path: str, data: Mapping[str, Any]) -> str:
    """``players[3].uid`` -> ``players[3].uid（玩家 "饺子"）``: what to look for in the file."""
    match = re.match(r"(players|days)\[(\d+)\]", path)
    if match is None:
        return path
    section, index = match.group(1), int(match.group(2))
    items = data.get(section)
    item = items[index] if isinstance(items, list) and index < len(items) else None
    item = item if isinstance(item, Mapping) else {}
    if section == "players":
        name = _str(item.get("name"))
        hint = f"玩家 {_show(name)}" if name else f"第 {index + 1} 个 [[players]]"
    else:
        number = _int(item.get("day"))
        hint = f"天数 {number}" if number is not None else f"第 {index + 1} 个 [[days]]"
    return f"{path}（{hint}）"


def _literal_choices(err: ErrorDetails) -> str:
    expected = str((err.get("ctx") or {}).get("expected", ""))
    return "、".join(f'"{c}"' for c in re.findall(r"'((?:[^'\\]|\\.)*)'", expected))


def _parse_iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.strip())
    except ValueError:
        return None


_DATETIME_HINT: Final = "写成 2026-12-01T09:00:00+08:00 这样的日期时间（不加引号）"

#: keys a director may try to write that belong in the environment, never in the file
_SECRET_KEYS_IN_ENV: Final = {
    "cookie": (
        "Cookie 不写在游戏文件里：放进环境变量（[forum] cookie_env 指定名字，默认 BANSHA_COOKIE）"
    ),
    "password": "密码不写在游戏文件里：放进环境变量，用 [forum] password_env 指定它的名字",
    "username": "账号用环境变量：用 [forum] username_env 指定它的名字",
}


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys the model has at ``loc`` (the table holding the unknown key)."""
    model: Any = Game
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        ann = field.annotation
        args = [a for a in getattr(ann, "__args__", ()) if hasattr(a, "model_fields")]
        model = ann if hasattr(ann, "model_fields") else (args[0] if args else None)
        if model is None:
            return []
    if model is Game:
        return [*Game.model_fields, *ruleset_ids()]
    return list(getattr(model, "model_fields", {}))


def _unknown_key(loc: tuple[Any, ...]) -> str:
    key = str(loc[-1]) if loc else ""
    if key.casefold() in _SECRET_KEYS_IN_ENV:
        return f"未知的键：{_SECRET_KEYS_IN_ENV[key.casefold()]}"
    near = difflib.get_close_matches(key, _known_keys(tuple(loc[:-1])), n=1, cutoff=0.6)
    if near:
        return f"未知的键（拼写错误？是不是 {near[0]}？见 docs/游戏文件.md）"
    return "未知的键（拼写错误？见 docs/游戏文件.md）"


def _pydantic_problem(err: ErrorDetails, tz: ZoneInfo | None) -> Problem:
    loc = tuple(err["loc"])
    kind = err["type"]
    value = err.get("input")
    last = loc[-1] if loc else ""
    message: str
    if kind == "missing":
        message = "缺少必填项"
        if len(loc) == 1:
            message = f"缺少必填的表 [{loc[0]}]" if loc[0] != "players" else "缺少 [[players]]"
    elif kind == "extra_forbidden":
        message = _unknown_key(loc)
    elif kind == "literal_error":
        message = f"应为以下之一：{_literal_choices(err)}"
        if isinstance(value, str) and last in ("encoding", "source", "sex"):
            message = f"{_show(value)} 无效，{message}"
        elif not isinstance(value, str):
            message = f"应为字符串（用双引号括起来），可选：{_literal_choices(err)}"
    elif kind in ("int_type", "int_parsing", "int_from_float"):
        message = "应为整数（不加引号）"
    elif kind in ("float_type", "float_parsing"):
        message = "应为数字（不加引号）"
    elif kind == "finite_number":
        message = "应为有限的数字"
    elif kind == "string_type":
        message = "应为字符串（用双引号括起来）"
    elif kind in ("bool_type", "bool_parsing"):
        message = "应为 true 或 false（不加引号）"
    elif kind in ("list_type", "tuple_type") and len(loc) == 1 and loc[0] in ("players", "days"):
        message = f"应为 [[{loc[0]}]] 表数组"
    elif kind in ("list_type", "tuple_type"):
        message = '应为数组，如 ["a", "b"]'
    elif kind in ("dict_type", "model_type", "model_attributes_type"):
        if len(loc) == 1 and loc[0] in ("players", "days"):
            message = f"应为 [[{loc[0]}]] 表数组"
        else:
            message = "应为表（[...] 或 { ... }）"
    elif kind == "timezone_aware":
        suggestion = ""
        if isinstance(value, datetime) and tz is not None:
            suggestion = f"：写成 {value.replace(tzinfo=tz).isoformat()}"
        message = f"时间必须带时区偏移（如 +08:00）{suggestion}"
    elif kind in ("datetime_type", "datetime_parsing", "datetime_from_date_parsing"):
        if isinstance(value, str) and _aware(_parse_iso(value)) is not None:
            message = f"日期时间不要加引号：写成 {value.strip()}"
        elif isinstance(value, str) and (moment := _loose_datetime(value)) is not None:
            zone = tz if tz is not None else ZoneInfo("Asia/Shanghai")
            message = _write_datetime(moment, moment.replace(tzinfo=zone).isoformat()[19:])
        elif isinstance(value, str):
            message = f"应为日期时间：{_DATETIME_HINT}"
        elif isinstance(value, date | time):
            message = f"缺少日期或时刻：{_DATETIME_HINT}"
        else:
            message = f"应为日期时间：{_DATETIME_HINT}"
    elif kind == "greater_than" and (err.get("ctx") or {}).get("gt") == 0:
        message = "应为正整数" if isinstance(value, int) else "应大于 0"
    elif kind == "greater_than":
        message = f"应大于 {(err.get('ctx') or {}).get('gt')}"
    elif kind == "greater_than_equal":
        message = f"不能小于 {(err.get('ctx') or {}).get('ge')}"
    elif kind in ("too_short", "string_too_short"):
        message = "不能为空"
    elif kind in (
        "tid_type",
        "tid_value",
        "timezone",
        "base_url",
        "env_name",
        "game_id",
        "ruleset",
        "blank",
        "padded",
        "subject",
    ):
        message = err["msg"]
    else:  # a pydantic check this module does not phrase yet: still say where, in Chinese
        message = f"值无效（{kind}）"
    return Problem(_key_path(loc), message)


_TOML_MESSAGES: Final[tuple[tuple[str, str], ...]] = (
    ("Cannot overwrite a value", "同一个键写了两次"),
    ("Cannot declare", "同一个表声明了两次"),
    ("Cannot mutate immutable namespace", "不能往已写完的内联表或数组里再加键"),
    ("Cannot redefine namespace", "不能重新定义已有的表"),
    ("Duplicate inline table key", "内联表里的键重复"),
    ("Expected '=' after a key", '键后面缺少 "="'),
    ("Expected ']' at the end of a table", '表头缺少右括号 "]"'),
    ("Expected ']]' at the end of an array", '表数组的头缺少 "]]"'),
    ("Expected newline or end of document", "这一行多出了内容（一行只能写一个键值对）"),
    ("Invalid date or datetime", "日期或时间写法无效，应如 2026-12-01T09:00:00+08:00"),
    ("Invalid initial character for a key part", "键名无效（中文键名要加引号）"),
    ("Invalid statement", "无法识别的语句"),
    ("Invalid value", "值无效（字符串要用双引号括起来）"),
    ("Invalid hex value", "转义序列无效"),
    ("Escaped character is not a Unicode scalar value", "转义序列无效"),
    ("Unclosed array", '数组缺少右括号 "]"'),
    ("Unclosed inline table", '内联表缺少右括号 "}"'),
    ("Unterminated string", "字符串缺少结束的引号"),
    ("Unescaped '\\' in a string", "字符串中的反斜杠 \\ 要写成 \\\\"),
    ("Illegal character", "字符串中有不允许的控制字符"),
    ("Found invalid character", "有不允许的字符"),
    ("Expected", "缺少必需的符号"),
)


#: a value that looks like a date written with / or . (``opens = 2026/12/01 09:00``)
_DATE_TYPO = re.compile(r"^\s*[\w\"'.-]+\s*=\s*\d{4}\s*[/.年]\s*\d")

#: a date and a time written as a person writes them, no quotes (``opens = 2026-12-03 10:00``,
#: ``2026/12/03 10:00``, ``2026年12月3日 10:00``): what to write instead can be said exactly
_LOOSE_DATETIME = re.compile(
    r"^\s*(?:[\w\"'.-]+\s*=\s*)?(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?"
    r"\s*(?:T|\s)\s*(\d{1,2})\s*[:：]\s*(\d{2})(?:\s*[:：]\s*(\d{2}))?\s*(?:#.*)?$"
)

#: ``[game] timezone``, read from the text when the TOML does not parse (for the offset)
_TIMEZONE_LINE = re.compile(r'^\s*timezone\s*=\s*"([^"]+)"', re.MULTILINE)

#: a thread's (or the forum's) address pasted where its number goes
_ID_IN_URL = re.compile(r"(?:[?&;](tid|fid)=|/(thread|forum)-)(\d{1,12})(?!\d)")

#: what a Chinese input method types for the ASCII marks TOML is made of → (the ASCII mark,
#: what the director is told was typed)
_FULLWIDTH: Final[Mapping[str, tuple[str, str]]] = {
    "，": (",", "全角逗号"),
    "“": ('"', "中文引号"),
    "”": ('"', "中文引号"),
    "＂": ('"', "全角引号"),
    "‘": ("'", "中文单引号"),
    "’": ("'", "中文单引号"),
    "＝": ("=", "全角等号"),
    "［": ("[", "全角方括号"),
    "］": ("]", "全角方括号"),
    "【": ("[", "中文方括号"),
    "】": ("]", "中文方括号"),
    "｛": ("{", "全角花括号"),
    "｝": ("}", "全角花括号"),
    "：": (":", "全角冒号"),
    "．": (".", "全角句点"),
    "－": ("-", "全角减号"),
    "＋": ("+", "全角加号"),
    "＃": ("#", "全角井号"),
    "\u3000": (" ", "全角空格"),
    **{chr(0xFF10 + n): (str(n), "全角数字") for n in range(10)},
}


def _outside_strings(line: str) -> Iterator[tuple[int, str]]:
    """The characters of a TOML line outside its quoted strings and before its comment."""
    quote: str | None = None
    i = 0
    while i < len(line):
        c = line[i]
        if quote is not None:
            if quote == '"' and c == "\\":
                i += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            return
        else:
            yield i, c
        i += 1


def _fullwidth_hint(line: str) -> tuple[int, str] | None:
    """The first mark a Chinese input method typed where TOML wants ASCII (outside strings,
    where Chinese text is welcome), as (its column, what to say)."""
    for i, c in _outside_strings(line):
        if c in _FULLWIDTH:
            ascii_mark, name = _FULLWIDTH[c]
            shown = "" if c == "\u3000" else f"「{c}」"
            half = "半角空格" if c == "\u3000" else f"半角的「{ascii_mark}」"
            return i + 1, (
                f"写成了{name}{shown}（中文输入法打出的全角符号）：要写{half}，"
                "切换到英文输入法再输入"
            )
    return None


def _offset(source: str, moment: datetime) -> str:
    """The UTC offset ``[game] timezone`` has at ``moment`` (``+08:00``), or +08:00."""
    match = _TIMEZONE_LINE.search(source)
    try:
        zone = ZoneInfo(match.group(1)) if match else ZoneInfo("Asia/Shanghai")
    except (ZoneInfoNotFoundError, ValueError, OSError):
        zone = ZoneInfo("Asia/Shanghai")
    return moment.replace(tzinfo=zone).isoformat()[19:]


def _loose_datetime(text: str) -> datetime | None:
    """The moment in ``opens = 2026-12-03 10:00`` (or the value alone), naive; else None."""
    match = _LOOSE_DATETIME.match(text)
    if match is None:
        return None
    y, mo, d, h, mi, sec = (int(g) if g else 0 for g in match.groups())
    try:
        return datetime(y, mo, d, h, mi, sec)
    except ValueError:
        return None


def _write_datetime(moment: datetime, offset: str) -> str:
    return f"时间要写成 {moment.isoformat()}{offset}（不加引号，日期和时间之间用 T，带时区偏移）"


def _datetime_hint(line: str, source: str) -> str | None:
    """``opens = 2026-12-03 10:00`` → what to write: ``2026-12-03T10:00:00+08:00``."""
    moment = _loose_datetime(line)
    return None if moment is None else _write_datetime(moment, _offset(source, moment))


def _url_hint(line: str) -> str | None:
    """A thread's address pasted where its number goes: the number the address holds."""
    match = _ID_IN_URL.search(line)
    if match is None or "://" not in line:
        return None
    return _id_in_url_words(match)


def _id_in_url_words(match: re.Match[str]) -> str:
    kind = match.group(1) or ("tid" if match.group(2) == "thread" else "fid")
    what = "帖子编号（tid）" if kind == "tid" else "版块编号（fid）"
    number = match.group(3)
    return f"这里写{what}，不是网址：这个网址里的 {kind} 是 {number}，写成 {number}（不加引号）"


def _toml_error(text: str, source: str = "") -> str:
    """tomllib's English message -> Chinese, with the line and column (never the line's text:
    it may hold a secret; it is only looked at, for a date written the wrong way)."""
    where = "文件末尾"
    line_no = None
    if match := re.search(r"\(at line (\d+), column (\d+)\)", text):
        where = f"第 {match.group(1)} 行第 {match.group(2)} 列"
        line_no = int(match.group(1))
    if text.startswith("Illegal character '\\n'"):
        what = "字符串缺少结束的引号（普通字符串不能换行）"
    else:
        what = next((zh for en, zh in _TOML_MESSAGES if text.startswith(en)), "")
    lines = source.splitlines()
    line = lines[line_no - 1] if line_no is not None and 0 < line_no <= len(lines) else ""
    if (found := _fullwidth_hint(line)) is not None:
        column, what = found
        where = f"第 {line_no} 行第 {column} 列"
    elif hint := _datetime_hint(line, source) or _url_hint(line):
        what = hint
    elif _DATE_TYPO.match(line):
        what = f"这一行的日期写法不对：{_DATETIME_HINT}，年月日之间用 -，日期和时间之间用 T"
    return f"{where}：TOML 语法错误" + (f"：{what}" if what else "")
