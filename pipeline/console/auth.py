"""The console's login: one token, kept only as a hash; the login rate limit; CSRF tokens.

- The token comes from the environment variable ``BANSHA_CONSOLE_TOKEN``, or is generated on
  the first start, printed once, and only its hash (scrypt, salted) is kept — in the file
  ``bansha-console.hash`` beside the (first) game file, mode 0600. ``bansha serve --new-token``
  makes a new one (the old one stops working).
  A token from the environment must be strong enough (:func:`token_weakness`).
- :class:`TokenSource`: the hash in use; re-read when the hash file changes, so a token made
  with ``--new-token`` while the console runs replaces the old one at once.
- :class:`Sessions`: the logged-in sessions, in memory (a restart ends them all). The cookie
  holds only a session's random id; logging out removes it here, so a copy of the cookie no
  longer opens anything. A session also ends when the token it logged in with is replaced.
- :class:`LoginLimiter`: tries per client address, counted when they start (before scrypt), in
  memory, bounded. Only the address that failed is locked out.
- CSRF: one random token per session, in every form, compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import math
import os
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pipeline import set_mode

__all__ = [
    "TOKEN_ENV",
    "TOKEN_FILE",
    "LoginLimiter",
    "Sessions",
    "TokenError",
    "TokenSource",
    "check_csrf",
    "hash_token",
    "new_csrf",
    "new_token",
    "token_file_for",
    "token_weakness",
    "verify_token",
]

TOKEN_ENV = "BANSHA_CONSOLE_TOKEN"
TOKEN_FILE = "bansha-console.hash"
MIN_TOKEN_CHARS = 20
MIN_TOKEN_DISTINCT = 10
MIN_TOKEN_BITS = 100
_SCRYPT = {"n": 2**14, "r": 8, "p": 1}


class TokenError(ValueError):
    """A token that cannot be used, or a hash file that cannot be read (Chinese)."""


def new_token() -> str:
    """A fresh random token (32 URL-safe characters, 192 bits)."""
    return secrets.token_urlsafe(24)


def hash_token(token: str, *, salt: bytes | None = None) -> str:
    """``scrypt$n$r$p$salt$hash`` (base64); a token is never stored or logged as it is."""
    salt = os.urandom(16) if salt is None else salt
    digest = hashlib.scrypt(token.encode("utf-8"), salt=salt, dklen=32, **_SCRYPT)
    b64 = base64.urlsafe_b64encode
    return "scrypt${n}${r}${p}${s}${h}".format(
        **_SCRYPT, s=b64(salt).decode(), h=b64(digest).decode()
    )


def verify_token(token: str, stored: str) -> bool:
    """Whether ``token`` is the one ``stored`` is the hash of (constant time)."""
    try:
        kind, n, r, p, salt, digest = stored.strip().split("$")
        if kind != "scrypt":
            return False
        want = base64.urlsafe_b64decode(digest)
        got = hashlib.scrypt(
            token.encode("utf-8"),
            salt=base64.urlsafe_b64decode(salt),
            dklen=len(want),
            n=int(n),
            r=int(r),
            p=int(p),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, want)


def token_file_for(game_path: Path) -> Path:
    """Where the token's hash is kept: beside the game file."""
    return Path(game_path).resolve().parent / TOKEN_FILE


def read_hash(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise TokenError(f"无法读取控制台令牌的哈希文件 {path}：{exc.strerror}") from exc
    if not text.startswith("scrypt$"):
        raise TokenError(f"控制台令牌的哈希文件 {path} 内容不对；删除它或用 --new-token 重新生成")
    return text


def write_hash(path: Path, token_hash: str) -> None:
    """Write the hash, mode 0600 (replacing an older one atomically)."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_TRUNC | os.O_WRONLY, 0o600)
    try:
        os.write(fd, (token_hash + "\n").encode())
    finally:
        os.close(fd)
    set_mode(tmp, 0o600)
    os.replace(tmp, path)


def token_weakness(token: str) -> str | None:
    """Why ``token`` is too weak to guard the console, or None. At least
    :data:`MIN_TOKEN_CHARS` characters, :data:`MIN_TOKEN_DISTINCT` different ones, and about
    :data:`MIN_TOKEN_BITS` bits by the kinds of character used (a random token of lower-case
    letters and digits needs 20 characters; of lower-case letters only, 22)."""
    if len(token) < MIN_TOKEN_CHARS:
        return f"太短（{len(token)} 个字符，至少要 {MIN_TOKEN_CHARS} 个）"
    if len(set(token)) < MIN_TOKEN_DISTINCT:
        return (
            f"重复的字符太多（只有 {len(set(token))} 种不同的字符，至少要 {MIN_TOKEN_DISTINCT} 种）"
        )
    pool = 0
    pool += 26 if any("a" <= c <= "z" for c in token) else 0
    pool += 26 if any("A" <= c <= "Z" for c in token) else 0
    pool += 10 if any(c.isdigit() for c in token) else 0
    pool += 32 if any(not c.isascii() or not c.isalnum() for c in token) else 0
    bits = len(token) * math.log2(max(pool, 2))
    if bits < MIN_TOKEN_BITS:
        return (
            f"太容易猜（约 {bits:.0f} 位，至少要 {MIN_TOKEN_BITS} 位："
            "更长，或混用大小写字母和数字）"
        )
    return None


def env_token(env: dict[str, str] | None = None) -> str | None:
    raw = (os.environ if env is None else env).get(TOKEN_ENV, "").strip()
    if not raw:
        return None
    if (weak := token_weakness(raw)) is not None:
        raise TokenError(
            f"环境变量 {TOKEN_ENV} 的令牌{weak}，控制台不用它启动。请换一个随机令牌，例如"
            "用 python3 -c 'import secrets; print(secrets.token_urlsafe(24))' 生成的 32 个字符；"
            f"或者不设 {TOKEN_ENV}，由 bansha serve 生成一个"
        )
    return raw


class TokenSource:
    """The hash of the token in use. From a file, it is read again whenever the file changes
    (``bansha serve --new-token`` run beside a running console): the new token works at once
    and the old one, and every session opened with it, no longer does."""

    def __init__(self, token_hash: str | Callable[[], str], path: Path | None = None) -> None:
        self.path = path
        self._seen = self._stamp()
        self._lock = threading.Lock()
        # a hash still to make (scrypt takes a while): made by the first request that needs it
        self._hash = token_hash if isinstance(token_hash, str) else ""
        self._make = None if isinstance(token_hash, str) else token_hash

    def _stamp(self) -> tuple[int, int, int] | None:
        if self.path is None:
            return None
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def current(self) -> str:
        if self._make is not None:
            with self._lock:
                if self._make is not None:
                    self._hash, self._make = self._make(), None
        if self.path is None:
            return self._hash
        stamp = self._stamp()
        with self._lock:
            if stamp is not None and stamp != self._seen:
                try:
                    fresh = read_hash(self.path)
                except TokenError:
                    fresh = None  # half written or damaged: keep the last good hash
                if fresh is not None:
                    self._hash = fresh
                    self._seen = stamp
            return self._hash


# --------------------------------------------------------------------------- sessions


@dataclass
class _Session:
    opened: float
    token_hash: str


class Sessions:
    """The sessions logged in now, in memory: ``open`` on login gives the id the cookie carries;
    ``valid`` is true only while that id is here, younger than ``max_age_s`` and opened with
    the token in use. ``close`` (logout) and ``close_all`` (退出所有设备) end them; so does a
    restart. At most ``max_sessions`` are kept (the oldest ends first)."""

    def __init__(
        self,
        *,
        max_age_s: float,
        max_sessions: int = 256,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_age_s = max_age_s
        self.max_sessions = max_sessions
        self.clock = clock
        self._open: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()

    def open(self, token_hash: str) -> str:
        sid = secrets.token_urlsafe(32)
        with self._lock:
            self._open[sid] = _Session(self.clock(), token_hash)
            while len(self._open) > self.max_sessions:
                self._open.popitem(last=False)
        return sid

    def valid(self, sid: object, token_hash: str) -> bool:
        if not isinstance(sid, str) or not sid:
            return False
        with self._lock:
            s = self._open.get(sid)
            if s is None:
                return False
            if self.clock() - s.opened >= self.max_age_s or not hmac.compare_digest(
                s.token_hash, token_hash
            ):
                del self._open[sid]
                return False
            return True

    def close(self, sid: object) -> bool:
        with self._lock:
            return isinstance(sid, str) and self._open.pop(sid, None) is not None

    def close_all(self) -> int:
        with self._lock:
            n = len(self._open)
            self._open.clear()
            return n

    def __len__(self) -> int:
        with self._lock:
            return len(self._open)


# --------------------------------------------------------------------------- rate limit


class LoginLimiter:
    """At most ``per_client`` tries per address within ``window_s`` seconds that did not log
    in. A try is counted when it starts (:meth:`begin`, before the slow scrypt check), so
    many tries at once from one address cannot all be judged; a try that turns out right is
    taken back (:meth:`succeeded`). Only that address is locked out: failures from elsewhere
    never lock out the director's right token. Memory is bounded: at most ``max_clients``
    addresses are remembered (the oldest is forgotten first)."""

    def __init__(
        self,
        *,
        per_client: int = 5,
        window_s: float = 300.0,
        max_clients: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_client = per_client
        self.window_s = window_s
        self.max_clients = max_clients
        self.clock = clock
        self._clients: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def _trim(self, q: deque[float], now: float) -> None:
        while q and now - q[0] >= self.window_s:
            q.popleft()

    def _wait(self, q: deque[float] | None, now: float) -> float:
        if q is None:
            return 0.0
        self._trim(q, now)
        if len(q) >= self.per_client:
            return max(self.window_s - (now - q[0]), 0.001)
        return 0.0

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        with self._lock:
            return self._wait(self._clients.get(client), self.clock())

    def begin(self, client: str) -> float:
        """Start a try: 0 when it may go on (it is counted now; :meth:`succeeded` clears the
        address if it was right), else the seconds to wait (refused, not counted)."""
        now = self.clock()
        with self._lock:
            q = self._clients.pop(client, None)
            wait = self._wait(q, now)
            if q is None:
                q = deque()
            self._clients[client] = q
            while len(self._clients) > self.max_clients:
                self._clients.popitem(last=False)
            if wait > 0:
                return wait
            q.append(now)
            return 0.0

    def failed(self, client: str) -> None:
        """Count a failed try that did not go through :meth:`begin`."""
        self.begin(client)

    def succeeded(self, client: str) -> None:
        """The try was right (the director): the address starts afresh."""
        with self._lock:
            self._clients.pop(client, None)


# --------------------------------------------------------------------------- CSRF


def new_csrf() -> str:
    return secrets.token_urlsafe(24)


def check_csrf(expected: object, given: object) -> bool:
    if not isinstance(expected, str) or not isinstance(given, str) or not expected:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
