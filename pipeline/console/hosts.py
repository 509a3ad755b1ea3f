"""Which addresses the console answers, and which sites may post to it.

A page on another site the director visits can make the browser talk to the console through a
name that points at 127.0.0.1 (DNS rebinding): the browser then sends that name as ``Host``.
:class:`HostGuard` answers only the names the console is served as — ``127.0.0.1``,
``localhost`` and ``[::1]`` with its port, the address ``--host`` names, and the address of
``--public-url`` (a reverse proxy) — and refuses any other ``Host`` with 400. When ``--host``
is every address (``0.0.0.0``, ``::``) an IP address with the port is answered too: an IP
address cannot be rebound, and that is how a phone on the LAN reaches it.

A request that changes something (POST and the like) must also come from the console's own
pages: an ``Origin`` that is not one of those addresses (``null`` included), or a
``Sec-Fetch-Site`` other than ``same-origin``/``none``, is refused with 403 before its CSRF
token is even looked at (the pages' ``Referrer-Policy: same-origin`` lets the browser name
the console as ``Origin`` on its own forms). A client that sends neither (curl, a script with
the Bearer token) is judged by the CSRF token or the token alone.

:func:`register_id_convertor`: the ``{n:id}`` path parameter — a number of at most 18 digits,
so that every id the store can hold fits and a bigger one is simply an unknown page (404).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.convertors import Convertor, register_url_convertor
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = ["HostGuard", "HostPolicy", "PublicUrlError", "register_id_convertor"]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
WILDCARDS = ("0.0.0.0", "::", "")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORT = {"http": 80, "https": 443}


class PublicUrlError(ValueError):
    """A ``--public-url`` that is not an http(s) address (Chinese)."""


def _bracket(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _split(netloc: str) -> tuple[str, int | None] | None:
    """``host[:port]`` → (lower-case host, port or None); None when it cannot be read."""
    netloc = netloc.strip().lower()
    if not netloc or any(c in netloc for c in "/@ \t"):
        return None
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            return None
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else ""
    else:
        host, _, port_text = netloc.partition(":")
        if ":" in port_text:
            return None
    if not port_text:
        return host, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return host, int(port_text)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostPolicy:
    """The ``host:port`` pairs the console is served as (``None`` port: the scheme's default,
    as a browser sends it for port 80 or 443)."""

    allowed: frozenset[tuple[str, int | None]]
    any_ip_port: int | None = None
    public_url: str | None = None

    @classmethod
    def of(cls, host: str, port: int, public_url: str | None = None) -> HostPolicy:
        allowed: set[tuple[str, int | None]] = set()
        names = list(LOOPBACK_NAMES)
        if host.strip().lower() not in WILDCARDS:
            names.append(_bracket(host.strip().lower()))
        for name in names:
            allowed.add((name, port))
            if port == 80:
                allowed.add((name, None))
        shown = None
        if public_url:
            parts = urlsplit(public_url.strip())
            hostport = _split(parts.netloc) if parts.netloc else None
            if parts.scheme not in _DEFAULT_PORT or hostport is None or not hostport[0]:
                raise PublicUrlError(
                    f"--public-url 应是浏览器打开控制台用的地址，如 https://console.example.org/："
                    f"{public_url}"
                )
            name, given = hostport
            default = _DEFAULT_PORT[parts.scheme]
            allowed.add((name, given or default))
            if (given or default) == default:
                allowed.add((name, None))
            shown = f"{parts.scheme}://{parts.netloc}/"
        wildcard = host.strip().lower() in WILDCARDS
        return cls(frozenset(allowed), port if wildcard else None, shown)

    def answers(self, netloc: str) -> bool:
        hostport = _split(netloc)
        if hostport is None:
            return False
        if hostport in self.allowed:
            return True
        host, port = hostport
        return self.any_ip_port is not None and port == self.any_ip_port and _is_ip(host)

    def same_site(self, origin: str) -> bool:
        """An ``Origin`` header that is one of the console's own addresses."""
        parts = urlsplit(origin.strip())
        if parts.scheme not in _DEFAULT_PORT or not parts.netloc:
            return False
        return self.answers(parts.netloc)

    def names(self) -> list[str]:
        """What the refusal lists: the addresses a browser may use."""
        out = []
        for host, port in sorted(self.allowed, key=lambda hp: (hp[0], hp[1] or 0)):
            if port is not None:
                out.append(f"{host}:{port}")
            elif not any(h == host and p is not None for h, p in self.allowed):
                out.append(host)
        if self.any_ip_port is not None:
            out.append(f"本机的任一 IP 地址:{self.any_ip_port}")
        return out


class HostGuard:
    """Refuse a ``Host`` the console is not served as (400), and a state-changing request
    from another site (403); both in Chinese, as plain text."""

    def __init__(self, app: ASGIApp, *, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host", "")
        if not self.policy.answers(host):
            response = PlainTextResponse(
                f"不认识的主机名：{host[:100] or '（没有 Host）'}。控制台只回答这些地址："
                f"{'、'.join(self.policy.names())}；经反向代理或别的名字访问时，"
                "用 bansha serve --public-url 告诉它浏览器打开的地址。",
                status_code=400,
            )
            await response(scope, receive, send)
            return
        if scope["type"] == "http" and scope["method"] not in SAFE_METHODS:
            origin = headers.get("origin")
            fetch_site = headers.get("sec-fetch-site")
            refused = (origin is not None and not self.policy.same_site(origin)) or (
                fetch_site is not None and fetch_site not in ("same-origin", "none")
            )
            if refused:
                response = PlainTextResponse(
                    f"拒绝了来自别的网站的提交（Origin：{(origin or fetch_site or '')[:100]}）："
                    "只有控制台自己的页面能修改游戏。请直接打开控制台再操作。",
                    status_code=403,
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


class IdConvertor(Convertor[int]):
    """A draft, day or night number: 1 to 18 digits (every id the store holds); a longer one
    does not match, so it is an unknown page (404) like any unknown id."""

    regex = "[0-9]{1,18}"

    def convert(self, value: str) -> int:
        return int(value)

    def to_string(self, value: int) -> str:
        return str(int(value))


def register_id_convertor() -> None:
    register_url_convertor("id", IdConvertor())
