"""The director's console: a Starlette app of server-rendered Chinese pages (phone first, no
JavaScript needed, nothing loaded from elsewhere) and the JSON API.

Nothing without a login: the token (``BANSHA_CONSOLE_TOKEN``, or generated on the first start;
only its hash is known here) opens a session — a signed cookie, HttpOnly, SameSite=Strict — and
every form carries the session's CSRF token. Failed logins are rate-limited. Pages:

- ``/`` — every game: rule set, day and phase, next close, drafts waiting, unconfirmed flags,
  the last cycle (time, ok or the error), forum reachable or not;
- ``/g/{id}/drafts`` and ``/g/{id}/drafts/{n}`` — waiting drafts (urgent first), each as the
  forum will show it beside its BBCode, the diff from the previous draft of its kind, edit,
  approve, reject with a reason — through :mod:`pipeline.drafts`, as the CLI does. The console
  never posts: ``bansha cycle`` sends what was approved, exactly once;
- ``/g/{id}/day/{n}`` — the tally (every vote's verdict, reason, rule, link), post counts,
  flags to confirm or dismiss, and ``why`` per player with a BBCode answer to copy;
- ``/g/{id}/night/{n}`` — the night's recorded actions, a form to add one (checked as
  ``bansha night add`` checks it), the resolution preview; resolving is its own button.

Director-only data (cards, identities, night actions) is only ever in a page body or a form
body: never in a URL, a log line, or the session cookie (which is signed, not encrypted).
"""

from __future__ import annotations

import html
import math
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.console import actions
from pipeline.console.api import api_routes
from pipeline.console.auth import LoginLimiter, check_csrf, new_csrf, verify_token
from pipeline.console.games import GameSpec, GameSpecError
from pipeline.console.overview import overviews, sort_drafts
from pipeline.console.preview import bbcode_html, diff_lines
from pipeline.drafts import (
    STATE_ZH,
    DraftError,
    DraftState,
    approve,
    draft_events,
    edit,
    get_draft,
    list_drafts,
    reject,
)
from pipeline.store import StoreError

__all__ = ["Console", "create_app"]

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
SESSION_COOKIE = "bansha_console"
SESSION_HOURS = 12
CARD_CHOICES = ("蓝牌", "黄牌", "红牌")


@dataclass
class Console:
    """What every request needs: the games, the token's hash, the limiter and the clock."""

    games: dict[str, GameSpec]
    token_hash: str
    limiter: LoginLimiter
    clock: Callable[[], datetime]
    env: jinja2.Environment = field(repr=False)

    def now(self, spec: GameSpec) -> datetime:
        return self.clock().astimezone(spec.game.game.tz)


# --------------------------------------------------------------------------- rendering


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["q"] = lambda value: quote(str(value), safe="")
    env.globals["STATE_ZH"] = STATE_ZH
    return env


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    console: Console = request.app.state.console
    flashes = request.session.pop("flash", []) if "flash" in request.session else []
    body = console.env.get_template(name).render(
        csrf=request.session.get("csrf", ""),
        authed=bool(request.session.get("auth")),
        flashes=flashes,
        games=list(console.games.values()),
        **context,
    )
    return HTMLResponse(body, status_code=status)


def _flash(request: Request, text: str, kind: str = "ok") -> None:
    """A one-line message for the next page (kept in the signed cookie: never director-only
    data in it)."""
    items = list(request.session.get("flash", []))[-4:]
    items.append({"kind": kind, "text": text})
    request.session["flash"] = items


def _see(path: str) -> RedirectResponse:
    return RedirectResponse(path, status_code=303)


def _g(spec: GameSpec, *parts: object) -> str:
    return "/g/" + quote(spec.id, safe="") + "".join(f"/{quote(str(p), safe='')}" for p in parts)


# --------------------------------------------------------------------------- guards

Handler = Callable[[Request, GameSpec | None, FormData | None], Response]


def _authed(request: Request) -> bool:
    s = request.session
    return bool(s.get("auth")) and time.time() - float(s.get("since", 0)) < SESSION_HOURS * 3600


def page(fn: Handler, *, game: bool = True) -> Callable[[Request], Awaitable[Response]]:
    """A page or form handler: logged in, the game known, a POST's CSRF token checked; then
    ``fn`` runs in a worker thread (the store is opened there)."""

    async def endpoint(request: Request) -> Response:
        if not _authed(request):
            if request.method == "GET" and request.headers.get("sec-fetch-site") == "cross-site":
                return _bounce(request)
            if request.method == "GET":
                return _see("/login")
            return _render(request, "error.html", 401, message="请先登录（登录已过期）")
        spec = None
        if game:
            spec = request.app.state.console.games.get(request.path_params.get("gid", ""))
            if spec is None:
                return _render(request, "error.html", 404, message="没有这局游戏")
        form = None
        if request.method == "POST":
            form = await request.form()
            if not check_csrf(request.session.get("csrf"), form.get("csrf")):
                return _render(
                    request,
                    "error.html",
                    403,
                    message="表单校验失败（CSRF）：页面可能已过期，请返回、刷新后再提交",
                )
        try:
            return await run_in_threadpool(fn, request, spec, form)
        except (GameSpecError, StoreError) as exc:
            return _render(request, "error.html", 503, message=str(exc))

    return endpoint


def _bounce(request: Request) -> HTMLResponse:
    """A link followed from elsewhere (a notification in a chat app): the browser does not send
    a SameSite=Strict cookie on that navigation, so load the page once more from here, where
    it does (no script: a meta refresh)."""
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    safe = html.escape(target, quote=True)
    return HTMLResponse(
        '<!doctype html><html lang="zh-CN"><head><meta charset="utf-8">'
        f'<meta http-equiv="refresh" content="0;url={safe}"><title>bansha 控制台</title></head>'
        f'<body><p><a href="{safe}">打开 bansha 控制台</a></p></body></html>'
    )


# --------------------------------------------------------------------------- login


async def login_page(request: Request) -> Response:
    if "csrf" not in request.session:
        request.session["csrf"] = new_csrf()
    if _authed(request):
        return _see("/")
    return _render(request, "login.html", error=None)


async def login_post(request: Request) -> Response:
    console: Console = request.app.state.console
    form = await request.form()
    if not check_csrf(request.session.get("csrf"), form.get("csrf")):
        request.session["csrf"] = new_csrf()
        return _render(request, "login.html", 403, error="表单校验失败（CSRF）：请刷新登录页后再试")
    client = request.client.host if request.client else "?"
    wait = console.limiter.retry_after(client)
    if wait > 0:
        minutes = max(1, math.ceil(wait / 60))
        return _render(
            request, "login.html", 429, error=f"登录失败次数太多，请 {minutes} 分钟后再试"
        )
    token = str(form.get("token") or "").strip()
    ok = bool(token) and await run_in_threadpool(verify_token, token, console.token_hash)
    if not ok:
        console.limiter.failed(client)
        return _render(request, "login.html", 401, error="令牌不对")
    console.limiter.succeeded(client)
    request.session.clear()  # a fresh session: nothing from before the login carries over
    request.session.update({"auth": True, "since": time.time(), "csrf": new_csrf()})
    return _see("/")


async def logout(request: Request) -> Response:
    form = await request.form()
    if check_csrf(request.session.get("csrf"), form.get("csrf")):
        request.session.clear()
    return _see("/login")


async def stylesheet(request: Request) -> Response:
    return FileResponse(STATIC / "console.css", media_type="text/css")


# --------------------------------------------------------------------------- overview


def overview(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    console: Console = request.app.state.console
    rows = overviews(list(console.games.values()), console.clock())
    return _render(request, "overview.html", rows=rows, title="总览")


# --------------------------------------------------------------------------- drafts


def drafts_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None
    console: Console = request.app.state.console
    now = console.now(spec)
    with spec.store() as store:
        everything = list_drafts(store, include_superseded=True)
    waiting = [d for d in everything if d.state in (DraftState.PENDING, DraftState.APPROVED)]
    done = [d for d in reversed(everything) if d not in waiting][:30]
    return _render(
        request,
        "drafts.html",
        spec=spec,
        title=f"草稿 · {spec.game.game.title}",
        waiting=sort_drafts(spec.game, waiting, now),
        done=done,
    )


def draft_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None
    return _draft_view(request, spec, int(request.path_params["n"]))


def _draft_view(
    request: Request,
    spec: GameSpec,
    draft_id: int,
    *,
    status: int = 200,
    error: str | None = None,
    text: str | None = None,
) -> Response:
    from pipeline.drafts.view import where as _where

    console: Console = request.app.state.console
    now = console.now(spec)
    with spec.store() as store:
        try:
            d = get_draft(store, draft_id)
        except DraftError as exc:
            return _render(request, "error.html", 404, message=str(exc))
        prev = get_draft(store, d.previous_id) if d.previous_id is not None else None
        events = draft_events(store, d.id)
    base = str(spec.game.forum.base_url)
    (urgency,) = [u for _d, u in sort_drafts(spec.game, [d], now)]
    diff = (
        diff_lines(prev.body, d.body, f"第 {prev.id} 号（上一稿）", f"第 {d.id} 号（本稿）")
        if prev is not None
        else None
    )
    edits = diff_lines(d.generated_body, d.body, "程序生成的原稿", "修改后") if d.edited else None
    tz = spec.game.game.tz
    return _render(
        request,
        "draft.html",
        status,
        spec=spec,
        title=f"第 {d.id} 号草稿 · {spec.game.game.title}",
        d=d,
        prev=prev,
        where=_where(d, spec.game),
        not_before=(
            datetime.fromisoformat(d.not_before).astimezone(tz).strftime("%m-%d %H:%M")
            if d.not_before
            else None
        ),
        urgency=urgency,
        preview=bbcode_html(text if text is not None else d.body, base_url=base, tid=d.tid),
        text=text if text is not None else d.body,
        diff=diff,
        edits=edits,
        events=[
            {
                **e,
                "at_zh": datetime.fromisoformat(e["at"]).astimezone(tz).strftime("%m-%d %H:%M"),
                "from_zh": STATE_ZH.get(e["from_state"], e["from_state"])
                if e["from_state"]
                else "新建",
                "to_zh": STATE_ZH.get(e["to_state"], e["to_state"]),
            }
            for e in events
        ],
        editable=d.state in (DraftState.PENDING, DraftState.APPROVED),
        error=error,
    )


def _same_version(request: Request, d: Any, form: FormData) -> str | None:
    """The draft is still the one the director saw (another tab or the CLI may have changed
    it); else why not."""
    seen = str(form.get("body_hash") or "")
    if seen and seen != d.body_hash:
        return (
            f"第 {d.id} 号草稿在你打开之后被修改过（另一个页面或命令行），请看过最新的正文后再操作"
        )
    return None


def draft_action(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    """Edit, approve or reject: :mod:`pipeline.drafts` as ``bansha drafts`` uses it. Approving
    and saving an edit refuse when the draft changed since the page was opened."""
    from pipeline.drafts.view import where as _where

    assert spec is not None and form is not None
    console: Console = request.app.state.console
    draft_id = int(request.path_params["n"])
    what = request.path_params["what"]
    if what not in ("edit", "approve", "reject"):
        return _render(request, "error.html", 404, message="没有这个操作")
    now = console.now(spec)
    back = _g(spec, "drafts", draft_id)
    text = str(form.get("body") or "")
    failed: str | None = None
    with spec.store() as store:
        try:
            with store.atomic():
                before = get_draft(store, draft_id)
                if what != "reject" and (stale := _same_version(request, before, form)):
                    raise DraftError(stale)
                if what == "edit":
                    after = edit(
                        store,
                        draft_id,
                        text,
                        now,
                        charset=spec.game.forum.encoding,
                        limit=spec.game.drafts.max_post_bytes,
                    )
                elif what == "approve":
                    after = approve(store, draft_id, now)
                else:
                    after = reject(store, draft_id, str(form.get("why") or ""), now)
        except DraftError as exc:
            failed = str(exc)
    if failed is not None:
        if what == "edit":  # the director's text stays in the box
            return _draft_view(request, spec, draft_id, status=409, error=failed, text=text)
        _flash(request, failed, "error")
        return _see(back)
    if what == "edit":
        if after.body == before.body:
            _flash(request, "没有修改，草稿保持不变。")
        else:
            again = "；它原已批准，现需重新批准" if before.state is DraftState.APPROVED else ""
            _flash(request, f"已保存第 {after.id} 号草稿的修改{again}。")
        return _see(back)
    if what == "approve":
        _flash(
            request,
            f"已批准第 {after.id} 号草稿（{after.title}），"
            f"将由下一次 bansha cycle 发出：{_where(after, spec.game)}",
        )
    else:
        _flash(request, f"已驳回第 {after.id} 号草稿：{after.reject_why}")
    return _see(_g(spec, "drafts"))


# --------------------------------------------------------------------------- day


def _derive(spec: GameSpec, store: Any, now: datetime) -> Any:
    from pipeline.derive import derive

    return derive(spec.game, store, as_of=now)


def day_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None
    from pipeline.derive import flag_decisions

    console: Console = request.app.state.console
    n = int(request.path_params["n"])
    now = console.now(spec)
    with spec.store() as store:
        d = _derive(spec, store, now)
        if n not in d.days:
            return _render(request, "error.html", 404, message=f"游戏文件中没有第 {n} 天")
        res = d.days[n]
        decisions = flag_decisions(store)
    flags = []
    for f in d.flags:
        if f.day != n:
            continue
        dec = decisions.get(f.id)
        status = dec["status"] if dec else "open"
        flags.append(
            {
                "flag": f,
                "status": status,
                "status_zh": actions.FLAG_STATUS_ZH.get(status, status),
                "decision": dec,
            }
        )
    counts = []
    for p in spec.game.players:
        pc = res.counts.get(p.name)
        counts.append(
            {
                "player": p.name,
                "count": pc.count if pc else 0,
                "exempt": res.post_exempt.get(p.name),
                "out": p.name in res.out_before,
            }
        )
    tz = spec.game.game.tz
    return _render(
        request,
        "day.html",
        spec=spec,
        title=f"第 {n} 天 · {spec.game.game.title}",
        n=n,
        res=res,
        rounds=_rounds(res),
        flags=flags,
        counts=counts,
        closed=now >= res.day.closes,
        opens=res.day.opens.astimezone(tz).strftime("%m-%d %H:%M"),
        closes=res.day.closes.astimezone(tz).strftime("%m-%d %H:%M"),
        days=sorted(d.days),
        cards=CARD_CHOICES,
        fmt=lambda dt: dt.astimezone(tz).strftime("%m-%d %H:%M:%S"),
        status_zh=actions.STATUS_ZH,
        kind_zh=actions.KIND_ZH,
        votes=_votes,
    )


def _votes(value: Any) -> str:
    return str(value) if value.denominator == 1 else f"{float(value):g}"


def _rounds(res: Any) -> list[dict[str, Any]]:
    out = []
    if res.first is not None:
        out.append(
            {
                "label": f"第一轮[正午]（第一轮投票帖 {res.first.tid}）",
                "verdicts": res.first.verdicts,
                "tally": res.first.tally,
                "result": "第一轮最高票",
            }
        )
    out.append(
        {
            "label": "额外一轮[正午]" if res.first is not None else "",
            "verdicts": res.verdicts,
            "tally": res.tally,
            "result": "出局",
        }
    )
    return out


def why_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None
    console: Console = request.app.state.console
    n = int(request.path_params["n"])
    player = request.query_params.get("player", "")
    now = console.now(spec)
    with spec.store() as store:
        d = _derive(spec, store, now)
        try:
            view = actions.why_view(spec.game, d, store, n, player)
        except actions.ActionError as exc:
            return _render(request, "error.html", 404, message=str(exc))
    return _render(
        request,
        "why.html",
        spec=spec,
        title=f"{view.player} 第 {n} 天 · {spec.game.game.title}",
        n=n,
        view=view,
        out_at=view.out[0].astimezone(spec.game.game.tz).strftime("%m-%d %H:%M")
        if view.out
        else None,
    )


def flag_action(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None and form is not None
    console: Console = request.app.state.console
    what = request.path_params["what"]
    flag_id = str(form.get("flag_id") or "")
    day = str(form.get("day") or "")
    back = _g(spec, "day", day) if day.isdigit() else _g(spec)
    now = console.now(spec)
    with spec.store() as store:
        try:
            if what == "confirm":
                card = str(form.get("card") or "") or None
                message = actions.confirm_flag(spec.game, store, flag_id, card=card, now=now)
            elif what == "dismiss":
                message = actions.dismiss_flag(
                    spec.game, store, flag_id, why=str(form.get("why") or ""), now=now
                )
            else:
                return _render(request, "error.html", 404, message="没有这个操作")
        except actions.ActionError as exc:
            _flash(request, str(exc), "error")
            return _see(back)
    _flash(request, message)
    return _see(back + f"#flag-{quote(flag_id, safe='')}")


# --------------------------------------------------------------------------- night


def _context(spec: GameSpec) -> Any:
    from pipeline.cli import GameContext

    if not spec.db_exists:
        raise GameSpecError(
            f"游戏 {spec.id} 的数据库 {spec.db_path} 还不存在（先运行 bansha init {spec.path}）"
        )
    return GameContext(spec.path, spec.game, spec.db_path)


def night_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None
    return _night_view(request, spec, int(request.path_params["n"]))


def _night_view(
    request: Request,
    spec: GameSpec,
    n: int,
    *,
    status: int = 200,
    error: str | None = None,
    values: dict[str, Any] | None = None,
) -> Response:
    from engine.kernel import OUTCOME_ZH
    from engine.rulesets import get_ruleset
    from engine.state import ZH_ORDINAL, Phase
    from pipeline.game.journal import journal_actions

    ctx = _context(spec)
    try:
        rows = journal_actions(ctx.store, "night", n, include_removed=True)
        preview = actions.night_preview(ctx, n)
    finally:
        ctx.close()
    rs = get_ruleset(spec.game.game.ruleset)
    skills = sorted(rs.skill_names()) if rs.has_engine else []
    nights = sorted({d.day for d in spec.game.days} | {0} | {n})
    return _render(
        request,
        "night.html",
        status,
        spec=spec,
        title=f"{Phase.night(n).zh} · {spec.game.game.title}",
        n=n,
        night_zh=Phase.night(n).zh,
        rows=[r for r in rows if r.removed_at is None],
        removed=[r for r in rows if r.removed_at is not None],
        preview=preview,
        outcome_zh={k.value if hasattr(k, "value") else k: v for k, v in OUTCOME_ZH.items()},
        ordinal=ZH_ORDINAL,
        players=actions.players_of(spec.game),
        skills=skills,
        has_engine=rs.has_engine,
        ruleset_name=rs.name,
        nights=nights,
        error=error,
        values=values or {},
    )


def night_action(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None and form is not None
    console: Console = request.app.state.console
    n = int(request.path_params["n"])
    what = request.path_params["what"]
    now = console.now(spec)
    back = _g(spec, "night", n)
    if what == "add":
        values = {
            "actor": str(form.get("actor") or ""),
            "skill": str(form.get("skill") or ""),
            "targets": actions.form_list(form, "target"),
            "choice": str(form.get("choice") or ""),
            "card": str(form.get("card") or ""),
            "at": str(form.get("at") or ""),
        }
        ctx = _context(spec)
        try:
            action_id = actions.add_night_action(ctx, n, now=now, **values)
        except actions.ActionError as exc:
            # said on the page itself (not in the cookie): it may name the action's target
            return _night_view(request, spec, n, status=400, error=str(exc), values=values)
        finally:
            ctx.close()
        _flash(request, f"已记录第{n}晚的第 {action_id} 号行动。")
        return _see(back)
    if what == "remove":
        ctx = _context(spec)
        try:
            raw = str(form.get("action_id") or "")
            if not raw.isdigit():
                raise actions.ActionError("没有指明要撤销哪一条行动")
            actions.remove_night_action(ctx, int(raw), now=now)
        except actions.ActionError as exc:
            return _night_view(request, spec, n, status=400, error=str(exc))
        finally:
            ctx.close()
        _flash(request, f"已撤销第{n}晚的第 {raw} 号行动；请重新结算。")
        return _see(back)
    if what == "resolve":
        ctx = _context(spec)
        try:
            stale = actions.resolve_night(ctx, n, now=now)
        except actions.ActionError as exc:
            return _night_view(request, spec, n, status=400, error=str(exc))
        finally:
            ctx.close()
        again = f"之后已结算的阶段（{'、'.join(stale)}）已作废，请按顺序重新结算。" if stale else ""
        _flash(request, f"已结算第{n}晚并保存。{again}")
        return _see(back)
    return _render(request, "error.html", 404, message="没有这个操作")


def game_home(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None
    return _see(_g(spec, "drafts"))


# --------------------------------------------------------------------------- headers


class SecurityHeaders:
    """Every response: a Content-Security-Policy (no script at all; the style sheet and images
    from the console itself, images also from the games' forums: a draft's smileys), no
    framing, no sniffing, no referrer; pages are not cached."""

    def __init__(self, app: ASGIApp, *, img_sources: Sequence[str] = ()) -> None:
        self.app = app
        images = " ".join(["'self'", "data:", *img_sources])
        self.csp = (
            # style attributes: Discuz's markup colours with them ([backcolor], [size=12px]);
            # style elements and every script stay forbidden
            "default-src 'none'; style-src 'self'; style-src-attr 'unsafe-inline'; "
            f"img-src {images}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = scope.get("path", "").startswith("/static/")

        async def wrapped(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers += [
                    (b"content-security-policy", self.csp.encode()),
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"no-referrer"),
                ]
                if not static:
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, wrapped)


def _origin(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}"
    return None


# --------------------------------------------------------------------------- the app


def create_app(
    games: Sequence[GameSpec],
    token_hash: str,
    *,
    clock: Callable[[], datetime] | None = None,
    secret_key: str | None = None,
    https_only: bool = False,
    limiter: LoginLimiter | None = None,
) -> Starlette:
    """The console for ``games``. ``token_hash`` is :func:`pipeline.console.auth.hash_token` of
    the login token. ``clock`` gives the time the pages judge by (default: now). The session
    key is random per process unless given: a restart logs everybody out. ``https_only`` marks
    the cookie Secure (behind a TLS reverse proxy)."""
    from datetime import UTC

    specs = {g.id: g for g in games}
    if len(specs) != len(games):
        raise ValueError("两个游戏文件的 game.id 相同")
    console = Console(
        games=specs,
        token_hash=token_hash,
        limiter=limiter or LoginLimiter(),
        clock=clock or (lambda: datetime.now(UTC)),
        env=_environment(),
    )
    routes = [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login_post, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/static/console.css", stylesheet, methods=["GET"]),
        Route("/", page(overview, game=False), methods=["GET"]),
        Route("/g/{gid}", page(game_home), methods=["GET"]),
        Route("/g/{gid}/drafts", page(drafts_page), methods=["GET"]),
        Route("/g/{gid}/drafts/{n:int}", page(draft_page), methods=["GET"]),
        Route("/g/{gid}/drafts/{n:int}/{what}", page(draft_action), methods=["POST"]),
        Route("/g/{gid}/day/{n:int}", page(day_page), methods=["GET"]),
        Route("/g/{gid}/day/{n:int}/why", page(why_page), methods=["GET"]),
        Route("/g/{gid}/flags/{what}", page(flag_action), methods=["POST"]),
        Route("/g/{gid}/night/{n:int}", page(night_page), methods=["GET"]),
        Route("/g/{gid}/night/{n:int}/{what}", page(night_action), methods=["POST"]),
        *api_routes(),
    ]
    forums = sorted({o for g in games if (o := _origin(str(g.game.forum.base_url)))})
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(SecurityHeaders, img_sources=forums),
            Middleware(
                SessionMiddleware,
                secret_key=secret_key or secrets.token_urlsafe(32),
                session_cookie=SESSION_COOKIE,
                max_age=SESSION_HOURS * 3600,
                same_site="strict",
                https_only=https_only,
            ),
        ],
    )
    app.state.console = console
    return app
