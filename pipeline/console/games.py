"""The games the console (and ``bansha status``) look at: game files and their stores."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pipeline.game.gamefile import DB_ENV, Game, GameFileError, load_game, resolve_db_path
from pipeline.store import Store, open_store

__all__ = ["GameSpec", "GameSpecError", "expand_paths", "load_specs"]


class GameSpecError(ValueError):
    """A game the console cannot serve (message in Chinese)."""


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


@dataclass(frozen=True)
class GameSpec:
    """One game: its file, the validated game and where its store is."""

    path: Path
    file_game: Game
    db_path: Path

    @property
    def game(self) -> Game:
        """The game with the threads bansha opened (pipeline.game.threads; the file's tid
        wins), read again whenever the store changed."""
        from pipeline.game.threads import opened_threads, with_opened

        stamp = _stamp(self.db_path)
        key = (self.db_path, id(self.file_game))
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
        game = with_opened(self.file_game, rows)
        _MERGED[key] = (stamp, game)
        return game

    @property
    def id(self) -> str:
        return self.game.game.id

    @property
    def db_exists(self) -> bool:
        return self.db_path.exists()

    @contextmanager
    def store(self) -> Iterator[Store]:
        """The game's store, opened for this request only (SQLite connections stay in the
        thread that opened them) and closed afterwards. Never creates a store."""
        if not self.db_exists:
            raise GameSpecError(
                f"游戏 {self.id} 的数据库 {self.db_path} 还不存在（先运行 bansha init {self.path}）"
            )
        store = open_store(self.db_path)
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
        try:
            game = load_game(path, env=env, check_login=False)
        except GameFileError as exc:
            raise GameSpecError(str(exc)) from exc
        gid = game.game.id
        if gid in seen:
            raise GameSpecError(f"游戏文件 {seen[gid]} 和 {path} 的 game.id 相同（{gid}）")
        seen[gid] = path
        specs.append(GameSpec(path=path, file_game=game, db_path=resolve_db_path(path, db, env)))
    return specs
