"""The JSON the console's API serves, and what ``bansha drafts GAME --json`` prints.

- :func:`drafts_json` — the drafts of a game (``bansha drafts --json``; ``GET
  /api/games/{id}/drafts`` serves exactly this). Field names are a contract: keep them stable.
- :func:`games_json` — ``GET /api/games`` and ``bansha status --json``.
- :func:`api_routes` — the routes under ``/api/``: ``Authorization: Bearer <token>`` on every
  request (401 without; a session cookie is not enough, so no CSRF is possible; tries are
  limited per address as logins are), approve and
  reject through :mod:`pipeline.drafts`, as ``bansha drafts approve`` / ``reject`` do.
  Approving names the version the caller saw (``body_hash``, and a new thread's ``subject``,
  as ``GET …/drafts`` gives them): what changed since, or a version not named, is refused
  (:func:`seen_version`), so nothing is approved that the director did not read.
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


# --------------------------------------------------------------------------- the version seen


#: a version not named (428 Precondition Required) and one changed since (409 Conflict)
VERSION_MISSING = 428
VERSION_CHANGED = 409


def seen_version(
    d: Any, body_hash: str | None, subject: str | None, *, doing: str, required: bool = True
) -> tuple[int, str] | None:
    """Whether ``d`` (a :class:`pipeline.drafts.Draft`) is still the version the director saw:
    its ``body_hash`` and, for a new thread, its ``subject`` (another page or the CLI may have
    changed either). None when it is; else the status and why not (Chinese). Without
    ``required`` what is not named is not asked for, what is named is checked (rejecting
    posts nothing)."""
    missing = [
        name
        for name, given in (("body_hash", bool(body_hash)), ("subject", subject is not None))
        if not given and (name == "body_hash" or d.subject is not None)
    ]
    if missing and required:
        what = "、".join(f'"{name}"' for name in missing)
        return (
            VERSION_MISSING,
            f"{doing}第 {d.id} 号草稿须说明你看过的版本：请求中没有 {what}"
            "（取自草稿的 body_hash 和 subject，见 GET …/drafts），未作任何改动",
        )
    if body_hash and body_hash != d.body_hash:
        return (
            VERSION_CHANGED,
            f"第 {d.id} 号草稿在你打开之后被修改过（另一个页面或命令行），"
            f"请看过最新的正文后再{doing}",
        )
    if d.subject is not None and subject is not None and subject != d.subject:
        return (
            VERSION_CHANGED,
            f"第 {d.id} 号草稿的新帖标题在你打开之后被改为「{d.subject}」"
            f"（另一个页面或命令行），请看过最新的标题后再{doing}",
        )
    return None


class _Stale(Exception):
    """The draft is not the version the caller saw (status, Chinese reason)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


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
    try:
        body = await request.json()
    except ValueError:  # no body, or not JSON
        body = None
    if not isinstance(body, dict):
        body = {}
    why = str(body.get("why") or "")
    if what == "reject" and not why.strip():
        return _error(400, '驳回草稿必须写明理由：请求正文 {"why": "理由"}')
    seen_hash, seen_subject = body.get("body_hash"), body.get("subject")
    seen_hash = str(seen_hash) if seen_hash is not None else None
    seen_subject = str(seen_subject) if seen_subject is not None else None
    now = request.app.state.console.clock().astimezone(spec.tz)

    def run() -> dict[str, Any]:
        # the state machine imports the drafting (templates, derivation): loaded at the first
        # decision, not with the app
        from pipeline.drafts import approve, get_draft, reject
        from pipeline.drafts.view import draft_json

        with spec.store() as store, store.atomic():
            before = get_draft(store, draft_id)
            stale = seen_version(
                before,
                seen_hash,
                seen_subject,
                doing="批准" if what == "approve" else "驳回",
                required=what == "approve",
            )
            if stale is not None:
                raise _Stale(*stale)
            if what == "approve":
                d = approve(
                    store, draft_id, now, game=spec.game, templates_dir=spec.templates_dir()
                )
            else:
                d = reject(store, draft_id, why, now)
            return draft_json(spec.game, d, now)

    try:
        return JSONResponse(await run_in_threadpool(run))
    except _Stale as exc:
        return _error(exc.status, str(exc))
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
