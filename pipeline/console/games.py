"""The games the console (and ``bansha status``) look at: game files and their stores.

A game file the last derivation was made from (the light cycle's plan holds for its bytes:
:mod:`pipeline.console.light`) is served from the few facts the overview needs; its model is
built from the same bytes the first time a page needs more. Any other file is validated at
once, as it always was: a command never starts on a file it would refuse.
"""

from __future__ import annotations

import os
import threading
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from pipeline import DB_ENV, resolve_db_path
from pipeline.console.light import LightGame, light_game

if TYPE_CHECKING:
    from pipeline.game.gamefile import Game
    from pipeline.store import Store

__all__ = ["GameSpec", "GameSpecError", "expand_paths", "load_specs", "store_error"]


class GameSpecError(ValueError):
    """A game the console cannot serve (message in Chinese)."""


def store_error() -> type[Exception]:
    """:class:`pipeline.store.StoreError` (a store that cannot be read), imported when an
    error is being matched (``except (GameSpecError, store_error())``), not with the app."""
    from pipeline.store import StoreError

    return StoreError


#: (db path, the file's game) -> (the store's change stamp, the game with its opened threads)
_MERGED: dict[tuple[Path, int], tuple[tuple[int, ...], Game]] = {}


def _stamp(db_path: Path) -> tuple[int, ...]:
    """Changes whenever the store is written (its file or its write-ahead log)."""
    out: list[int] = []
    for path in (db_path, db_path.with_name(db_path.name + "-wal")):
        try:
            st = path.stat()
        except OSError:
            out += [-1, -1]
            continue
        out += [st.st_mtime_ns, st.st_size]
    return tuple(out)


def _load(path: Path, env: Mapping[str, str] | None, raw: bytes | None) -> Game:
    """The game file validated (:func:`pipeline.game.gamefile.load_game`; no login check, so
    nothing of the environment is read)."""
    from pipeline.game.gamefile import GameFileError, load_game

    try:
        return load_game(path, env=env, check_login=False, raw=raw)
    except GameFileError as exc:
        raise GameSpecError(str(exc)) from exc


@dataclass(frozen=True)
class GameSpec:
    """One game: its file, the validated game and where its store is.

    ``file_game`` is the validated game; None for a file the last derivation validated, of
    which the facts are known (``light``) and the bytes kept (``raw``): its model is built from
    those bytes when first asked for (:attr:`model`)."""

    path: Path
    file_game: Game | None
    db_path: Path
    light: LightGame | None = None
    raw: bytes | None = field(default=None, repr=False)
    #: the file's (mtime_ns, size) when it was read: :func:`fresh` reads it again on a change
    file_stat: tuple[int, int] | None = None
    _built: list[Game] = field(default_factory=list, init=False, repr=False, compare=False)
    _lock: threading.Lock = field(
        default_factory=threading.Lock, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        if self.file_game is None and (self.light is None or self.raw is None):
            raise TypeError("GameSpec needs file_game, or light with raw")

    @property
    def model(self) -> Game:
        """The game file's validated game (built on first use from the bytes read at start)."""
        if self.file_game is not None:
            return self.file_game
        with self._lock:
            if not self._built:
                self._built.append(_load(self.path, None, self.raw))
        return self._built[0]

    def templates_dir(self) -> Path | None:
        """The director's template folder (``[drafts] templates``; None: none, or a wrong one —
        drafting says what is wrong with it)."""
        if self.model.drafts.templates is None:
            return None
        from pipeline.drafts import DraftError, templates_dir_for

        try:
            return templates_dir_for(self.model, self.path)
        except DraftError:
            return None

    @property
    def facts(self) -> Any:
        """What the overview reads of the game (its id, title, rule set, zone, days' times):
        the light facts when there are, else the game (:attr:`game`)."""
        return self.light if self.light is not None else self.game

    @property
    def game(self) -> Game:
        """The game with the threads bansha opened (pipeline.game.threads; the file's tid
        wins), read again whenever the store changed."""
        from pipeline.game.threads import opened_threads, with_opened

        file_game = self.model
        stamp = _stamp(self.db_path)
        key = (self.db_path, id(file_game))
        cached = _MERGED.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        rows = []
        if self.db_exists:
            from pipeline.store import open_store_readonly

            store = open_store_readonly(self.db_path)
            try:
                rows = opened_threads(store)
            finally:
                store.close()
        game = with_opened(file_game, rows)
        _MERGED[key] = (stamp, game)
        return game

    @property
    def _own(self) -> Any:
        """The file's own facts: the light ones, else the validated game."""
        return self.light if self.light is not None else self.model

    @property
    def id(self) -> str:
        """``game.id`` (the threads bansha opened never change it)."""
        return str(self._own.game.id)

    @property
    def title(self) -> str:
        return str(self._own.game.title)

    @property
    def tz(self) -> ZoneInfo:
        """The game's zone (``[game] timezone``)."""
        return self._own.game.tz  # type: ignore[no-any-return]

    @property
    def base_url(self) -> str:
        """``[forum] base_url`` (normalised to end with "/")."""
        return str(self._own.forum.base_url)

    @property
    def db_exists(self) -> bool:
        return self.db_path.exists()

    @contextmanager
    def store(self, *, reading: bool = False) -> Iterator[Store]:
        """The game's store, opened for this request only (SQLite connections stay in the
        thread that opened them) and closed afterwards. Never creates a store. ``reading``
        (nothing is written): a store the last derivation's code made (the light facts) is
        opened read-only, as it needs no migration."""
        from pipeline.store import open_store, open_store_readonly

        if not self.db_exists:
            raise GameSpecError(
                f"游戏 {self.id} 的数据库 {self.db_path} 还不存在（先运行 bansha init {self.path}）"
            )
        store = (
            open_store_readonly(self.db_path)
            if reading and self.light is not None
            else open_store(self.db_path)
        )
        try:
            yield store
        finally:
            store.close()


def _looks_like_game(path: Path) -> bool:
    """A TOML file with a ``[game]`` table (a folder also holds posts scripts, action files)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return True  # let load_game say what is wrong with it
    return isinstance(data.get("game"), dict)


def expand_paths(paths: Sequence[Path]) -> list[Path]:
    """Game files as given; a folder stands for the game files in it (``*.toml`` with a
    ``[game]`` table), sorted by name."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = [p for p in sorted(path.glob("*.toml")) if _looks_like_game(p)]
            if not found:
                raise GameSpecError(f"目录 {path} 中没有游戏文件（带 [game] 的 .toml 文件）")
            out.extend(found)
        elif not path.exists():
            raise GameSpecError(f"找不到游戏文件：{path}")
        else:
            out.append(path)
    return out


def load_specs(
    paths: Sequence[Path], db: str | None = None, env: Mapping[str, str] | None = None
) -> list[GameSpec]:
    """Load every game file (folders expanded). ``db`` (``--db``) and ``BANSHA_DB`` only for a
    single game: two games never share a store. Two files of one game id are refused."""
    env = os.environ if env is None else env
    files = expand_paths(paths)
    if not files:
        raise GameSpecError("没有给出游戏文件")
    if len(files) > 1 and db:
        raise GameSpecError(f"--db 只能用于一局游戏（现在有 {len(files)} 个游戏文件）")
    if len(files) > 1 and env.get(DB_ENV, "").strip():
        raise GameSpecError(
            f"环境变量 {DB_ENV} 只能用于一局游戏（现在有 {len(files)} 个游戏文件）；"
            "多局游戏各用游戏文件旁的 <名字>.db"
        )
    specs: list[GameSpec] = []
    seen: dict[str, Path] = {}
    for path in files:
        spec = _spec(path, db, env)
        gid = spec.id
        if gid in seen:
            raise GameSpecError(f"游戏文件 {seen[gid]} 和 {path} 的 game.id 相同（{gid}）")
        seen[gid] = path
        specs.append(spec)
    return specs


def _spec(path: Path, db: str | None, env: Mapping[str, str]) -> GameSpec:
    """The game of the file at ``path``: from its facts when the last derivation validated its
    very bytes, else validated now (:class:`GameSpecError` for a file with problems)."""
    db_path = resolve_db_path(path, db, env)
    stat = file_stat(path)
    try:
        raw = path.read_bytes()
    except OSError:
        raw = None  # load_game says what is wrong with it
    light = light_game(path, raw, db, env) if raw is not None else None
    if light is not None:
        return GameSpec(path, None, db_path, light=light, raw=raw, file_stat=stat)
    return GameSpec(path, _load(path, env, raw), db_path, file_stat=stat)


def file_stat(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of a file, None when it cannot be read."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def fresh(spec: GameSpec, env: Mapping[str, str] | None = None) -> GameSpec:
    """``spec`` as its game file says now: the same spec while the file is unchanged, else
    the file read again (same store) — a director's edit (a day's ``closes`` after 加速 …) is
    what the console judges by from the next page on; :class:`GameSpecError` when the edited
    file has a problem (the page says it; nothing is judged by the old file)."""
    if spec.file_stat is None or file_stat(spec.path) == spec.file_stat:
        return spec
    return _spec(spec.path, str(spec.db_path), os.environ if env is None else env)
