"""The JSON the console's API serves, and what ``bansha drafts GAME --json`` prints.

- :func:`drafts_json` — the drafts of a game (``bansha drafts --json``; ``GET
  /api/games/{id}/drafts`` serves exactly this). Field names are a contract: keep them stable.
- :func:`games_json` — ``GET /api/games`` and ``bansha status --json``.
- :func:`api_routes` — the routes under ``/api/``: ``Authorization: Bearer <token>`` on every
  request (401 without; a session cookie is not enough, so no CSRF is possible; tries are
  limited per address as logins are), approve and
  reject through :mod:`pipeline.drafts`, as ``bansha drafts approve`` / ``reject`` do.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from typing import TYPE_CHECKING, Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from pipeline.console.games import GameSpec, GameSpecError, store_error
from pipeline.drafts import DraftError

if TYPE_CHECKING:  # the type checker sees them; a run loads them with the first call
    from pipeline.console.app import Console
    from pipeline.console.overview import games_json
    from pipeline.drafts.view import draft_json, drafts_json

__all__ = ["api_routes", "draft_json", "drafts_json", "games_json"]

#: the JSON of the overview and the drafts (read from the store): loaded when first asked for
_LAZY = {
    "games_json": "pipeline.console.overview",
    "draft_json": "pipeline.drafts.view",
    "drafts_json": "pipeline.drafts.view",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --------------------------------------------------------------------------- routes


def _error(status: int, message: str, **headers: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers or None)


def _bearer(request: Request) -> str | None:
    raw = request.headers.get("authorization", "")
    kind, _, token = raw.partition(" ")
    if kind.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def _authorised(request: Request) -> JSONResponse | None:
    """The Bearer token is right. A try is counted against the address when it starts (before
    scrypt), so many at once are not all judged; the token just verified is remembered by its
    SHA-256 (for the hash in use), so the director's own calls skip scrypt and the limit."""
    console = request.app.state.console
    client = request.client.host if request.client else "?"
    token = _bearer(request)
    if token is None:
        return _error(
            401, "需要登录令牌：Authorization: Bearer <令牌>", **{"WWW-Authenticate": "Bearer"}
        )
    current = console.token_hash
    digest = hashlib.sha256(token.encode("utf-8")).digest()
    known = console.bearer_ok
    if known is not None and known[0] == current and hmac.compare_digest(known[1], digest):
        return None
    wait = console.limiter.begin(client)
    if wait > 0:
        return _error(
            429,
            f"令牌错误次数太多，请 {max(1, math.ceil(wait / 60))} 分钟后再试",
            **{"Retry-After": str(int(wait) + 1)},
        )
    if not await console.verify(token):
        return _error(401, "令牌不对", **{"WWW-Authenticate": 'Bearer error="invalid_token"'})
    console.limiter.succeeded(client)
    console.bearer_ok = (current, digest)
    return None


def _spec(request: Request) -> GameSpec | None:
    console: Console = request.app.state.console
    return console.game(request.path_params["gid"])


async def api_games(request: Request) -> JSONResponse:
    if (denied := await _authorised(request)) is not None:
        return denied
    from pipeline.console.overview import games_json

    console = request.app.state.console
    data = await run_in_threadpool(games_json, console.all_games(), console.clock())
    return JSONResponse(data)


async def api_drafts(request: Request) -> JSONResponse:
    if (denied := await _authorised(request)) is not None:
        return denied
    try:
        spec = _spec(request)
    except (GameSpecError, store_error()) as exc:  # its edited game file has a problem
        return _error(503, str(exc))
    if spec is None:
        return _error(404, f"没有这局游戏：{request.path_params['gid']}")
    include = request.query_params.get("all") in ("1", "true", "yes")
    now = request.app.state.console.clock()

    def run() -> dict[str, Any]:
        from pipeline.drafts.view import drafts_json

        with spec.store() as store:
            return drafts_json(
                store, spec.game, now=now.astimezone(spec.tz), include_superseded=include
            )

    try:
        return JSONResponse(await run_in_threadpool(run))
    except (GameSpecError, store_error()) as exc:
        return _error(503, str(exc))


async def _decide(request: Request, what: str) -> JSONResponse:
    if (denied := await _authorised(request)) is not None:
        return denied
    try:
        spec = _spec(request)
    except (GameSpecError, store_error()) as exc:  # its edited game file has a problem
        return _error(503, str(exc))
    if spec is None:
        return _error(404, f"没有这局游戏：{request.path_params['gid']}")
    draft_id = int(request.path_params["n"])
    why = ""
    if what == "reject":
        try:
            body = await request.json()
        except ValueError:
            body = None
        if isinstance(body, dict):
            why = str(body.get("why") or "")
        if not why.strip():
            return _error(400, '驳回草稿必须写明理由：请求正文 {"why": "理由"}')
    now = request.app.state.console.clock().astimezone(spec.tz)

    def run() -> dict[str, Any]:
        # the state machine imports the drafting (templates, derivation): loaded at the first
        # decision, not with the app
        from pipeline.drafts import approve, reject
        from pipeline.drafts.view import draft_json

        with spec.store() as store:
            if what == "approve":
                d = approve(store, draft_id, now)
            else:
                d = reject(store, draft_id, why, now)
            return draft_json(spec.game, d, now)

    try:
        return JSONResponse(await run_in_threadpool(run))
    except DraftError as exc:
        status = 404 if "没有编号为" in str(exc) else 409
        return _error(status, str(exc))
    except (GameSpecError, store_error()) as exc:
        return _error(503, str(exc))


async def api_approve(request: Request) -> JSONResponse:
    return await _decide(request, "approve")


async def api_reject(request: Request) -> JSONResponse:
    return await _decide(request, "reject")


def api_routes() -> list[Route]:
    return [
        Route("/api/games", api_games, methods=["GET"]),
        Route("/api/games/{gid}/drafts", api_drafts, methods=["GET"]),
        Route("/api/games/{gid}/drafts/{n:id}/approve", api_approve, methods=["POST"]),
        Route("/api/games/{gid}/drafts/{n:id}/reject", api_reject, methods=["POST"]),
    ]
