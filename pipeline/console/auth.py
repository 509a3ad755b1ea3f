"""The console's login: one token, kept only as a hash; the login rate limit; CSRF tokens.

- The token comes from the environment variable ``BANSHA_CONSOLE_TOKEN``, or is generated on
  the first start, printed once, and only its hash (scrypt, salted) is kept — in the file
  ``bansha-console.hash`` beside the (first) game file, mode 0600. ``bansha serve --new-token``
  makes a new one (the old one stops working).
- :class:`LoginLimiter`: failed logins per client address and in total, in memory, bounded.
- CSRF: one random token per session, in every form, compared in constant time.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path

from pipeline import set_mode

__all__ = [
    "TOKEN_ENV",
    "TOKEN_FILE",
    "LoginLimiter",
    "TokenError",
    "check_csrf",
    "hash_token",
    "new_csrf",
    "new_token",
    "token_file_for",
    "verify_token",
]

TOKEN_ENV = "BANSHA_CONSOLE_TOKEN"
TOKEN_FILE = "bansha-console.hash"
MIN_TOKEN_CHARS = 12
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


def env_token(env: dict[str, str] | None = None) -> str | None:
    raw = (os.environ if env is None else env).get(TOKEN_ENV, "").strip()
    if not raw:
        return None
    if len(raw) < MIN_TOKEN_CHARS:
        raise TokenError(
            f"环境变量 {TOKEN_ENV} 太短（至少 {MIN_TOKEN_CHARS} 个字符）；"
            "可以用 python3 -c 'import secrets; print(secrets.token_urlsafe(24))' 生成一个"
        )
    return raw


# --------------------------------------------------------------------------- rate limit


class LoginLimiter:
    """At most ``per_client`` failed logins per address and ``total`` in all within ``window_s``
    seconds; then every login is refused until the window has passed. Memory is bounded: at most
    ``max_clients`` addresses are remembered (the oldest is forgotten first)."""

    def __init__(
        self,
        *,
        per_client: int = 5,
        total: int = 30,
        window_s: float = 300.0,
        max_clients: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.per_client = per_client
        self.total = total
        self.window_s = window_s
        self.max_clients = max_clients
        self.clock = clock
        self._clients: OrderedDict[str, deque[float]] = OrderedDict()
        self._all: deque[float] = deque(maxlen=max(total, 1))
        self._lock = threading.Lock()

    def _trim(self, q: deque[float], now: float) -> None:
        while q and now - q[0] >= self.window_s:
            q.popleft()

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: now)."""
        now = self.clock()
        with self._lock:
            self._trim(self._all, now)
            waits = []
            if len(self._all) >= self.total:
                waits.append(self.window_s - (now - self._all[0]))
            q = self._clients.get(client)
            if q is not None:
                self._trim(q, now)
                if len(q) >= self.per_client:
                    waits.append(self.window_s - (now - q[0]))
            return max(waits, default=0.0)

    def failed(self, client: str) -> None:
        now = self.clock()
        with self._lock:
            q = self._clients.pop(client, None) or deque(maxlen=self.per_client)
            q.append(now)
            self._clients[client] = q
            while len(self._clients) > self.max_clients:
                self._clients.popitem(last=False)
            self._all.append(now)

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._clients.pop(client, None)


# --------------------------------------------------------------------------- CSRF


def new_csrf() -> str:
    return secrets.token_urlsafe(24)


def check_csrf(expected: object, given: object) -> bool:
    if not isinstance(expected, str) or not isinstance(given, str) or not expected:
        return False
    return hmac.compare_digest(expected.encode(), given.encode())
