"""The director's console: a Starlette app of server-rendered Chinese pages (phone first, no
JavaScript needed, nothing loaded from elsewhere) and the JSON API.

Nothing without a login: the token (``BANSHA_CONSOLE_TOKEN``, or generated on the first start;
only its hash is known here) opens a session — kept here (:class:`~pipeline.console.auth.Sessions`),
its id in a signed cookie, HttpOnly, SameSite=Strict — and every form carries the session's
CSRF token. Logging out ends the session here (a copied cookie opens nothing); 退出所有设备
ends them all, and so does a new token. Tries are rate-limited per address when they start.
Only the hosts the console is served as are answered (:class:`HostGuard`), and a form posted
from another site is refused by its ``Origin`` before its CSRF token is looked at. Pages:

- ``/`` — every game: rule set, day and phase, next close, drafts waiting, unconfirmed flags,
  the last cycle (time, ok or the error), forum reachable or not;
- ``/g/{id}/drafts`` and ``/g/{id}/drafts/{n}`` — waiting drafts (urgent first), each as the
  forum will show it beside its BBCode, the diff from the previous draft of its kind, edit,
  approve, reject with a reason — through :mod:`pipeline.drafts`, as the CLI does. The console
  never posts: ``bansha cycle`` sends what was approved, exactly once;
- ``/g/{id}/day/{n}`` — the tally (every vote's verdict, reason, rule, link), post counts,
  flags to confirm or dismiss, and ``why`` per player with a BBCode answer to copy;
- ``/g/{id}/cards`` — the card ledger, every card with a form to revoke it (a reason required),
  and the audit line of every undo; a decided flag on its day page can be taken back too;
- ``/g/{id}/night/{n}`` — the night's recorded actions, a form to add one (checked as
  ``bansha night add`` checks it), the resolution preview; resolving is its own button.

Director-only data (cards, identities, night actions) is only ever in a page body or a form
body: never in a URL, a log line, or the session cookie (which is signed, not encrypted).
"""

from __future__ import annotations

import html
import math
import secrets
import threading
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
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pipeline.console.api import VERSION_MISSING, api_routes, seen_version
from pipeline.console.auth import (
    LoginLimiter,
    Sessions,
    TokenSource,
    check_csrf,
    new_csrf,
    verify_token,
)
from pipeline.console.games import GameSpec, GameSpecError, fresh, store_error
from pipeline.console.hosts import HostGuard, HostPolicy, register_id_convertor
from pipeline.drafts import STATE_ZH, DraftError, DraftState

__all__ = ["Console", "create_app"]

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"
SESSION_COOKIE = "bansha_console"
SESSION_HOURS = 12
CARD_CHOICES = ("蓝牌", "黄牌", "红牌")
#: the largest form the console reads once logged in (a draft's edit far over any forum's
#: limit still comes back in its box, with the reason); the login form gets far less
MAX_FORM_BYTES = 16 * 1024 * 1024
MAX_LOGIN_FORM_BYTES = 64 * 1024
#: scrypt checks at once (each takes ~50 ms of a core); more tries wait their turn
VERIFY_AT_ONCE = 2


@dataclass
class Console:
    """What every request needs: the games, the token in use, the sessions, the limiter and
    the clock."""

    games: dict[str, GameSpec]
    token: TokenSource
    sessions: Sessions
    limiter: LoginLimiter
    clock: Callable[[], datetime]
    env: jinja2.Environment = field(repr=False)
    verifying: threading.BoundedSemaphore = field(
        default_factory=lambda: threading.BoundedSemaphore(VERIFY_AT_ONCE), repr=False
    )
    #: the token hash in use and the SHA-256 of the Bearer token last verified against it
    bearer_ok: tuple[str, bytes] | None = field(default=None, repr=False)

    @property
    def token_hash(self) -> str:
        return self.token.current()

    def now(self, spec: GameSpec) -> datetime:
        return self.clock().astimezone(spec.tz)

    def game(self, gid: str) -> GameSpec | None:
        """The game ``gid`` as its file says now (:func:`~pipeline.console.games.fresh`):
        an edited game file is read again; :class:`GameSpecError` when it has a problem."""
        spec = self.games.get(gid)
        if spec is None:
            return None
        new = fresh(spec)
        if new is not spec:
            self.games[gid] = new
        return new

    def all_games(self) -> list[GameSpec]:
        """Every game as its file says now; one whose edited file has a problem as it was
        (its own pages say what is wrong)."""
        out = []
        for gid in list(self.games):
            try:
                spec = self.game(gid)
            except GameSpecError:
                spec = self.games.get(gid)
            if spec is not None:
                out.append(spec)
        return out

    async def verify(self, token: str) -> bool:
        """scrypt in a worker thread, at most :data:`VERIFY_AT_ONCE` at a time (the token's
        hash too, when the first login makes it)."""

        def check() -> bool:
            token_hash = self.token_hash
            with self.verifying:
                return verify_token(token, token_hash)

        return await run_in_threadpool(check)


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
    env.filters["cite"] = _cite  # a rule reference as the director knows it
    env.globals["STATE_ZH"] = STATE_ZH
    # a pending decision's prompt with its commands (for GAME.toml: ``here`` names the file)
    env.filters["prompt"] = _prompt
    return env


def _cite(ref: str | None) -> str:
    from engine.rulesets.rulebooks import cite  # with the first page that cites a rule

    return cite(ref)


def _prompt(pending: Any) -> Any:
    from pipeline.game.pending import pending_record  # with the first page that shows one

    return pending_record(pending)["prompt"]


def _render(request: Request, name: str, status: int = 200, **context: Any) -> HTMLResponse:
    console: Console = request.app.state.console
    flashes = request.session.pop("flash", []) if "flash" in request.session else []
    body = console.env.get_template(name).render(
        csrf=request.session.get("csrf", ""),
        authed=bool(request.session.get("auth")),
        flashes=flashes,
        games=console.all_games(),
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
    """Logged in: the cookie names a session the console still holds, opened with the token in
    use (a logout, 退出所有设备, a new token or a restart ends it)."""
    s = request.session
    if not s.get("auth"):
        return False
    console: Console = request.app.state.console
    if console.sessions.valid(s.get("sid"), console.token_hash):
        return True
    s.pop("auth", None)
    s.pop("sid", None)
    return False


async def _read_form(request: Request, limit: int) -> FormData | None:
    """The form, or None when it is bigger than ``limit`` bytes (nothing of it is used)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    try:
        return await request.form(max_part_size=limit)
    except HTTPException:
        return None


def _too_big(request: Request, limit: int) -> HTMLResponse:
    return _render(
        request,
        "error.html",
        413,
        message=f"提交的内容超过 {limit // (1024 * 1024) or 1} MB，控制台没有读取它；"
        "请返回，删减后再提交",
    )


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
            try:
                spec = request.app.state.console.game(request.path_params.get("gid", ""))
            except (GameSpecError, store_error()) as exc:
                return _render(request, "error.html", 503, message=str(exc))
            if spec is None:
                return _render(request, "error.html", 404, message="没有这局游戏")
        form = None
        if request.method == "POST":
            form = await _read_form(request, MAX_FORM_BYTES)
            if form is None:
                return _too_big(request, MAX_FORM_BYTES)
            if not check_csrf(request.session.get("csrf"), form.get("csrf")):
                return _render(
                    request,
                    "error.html",
                    403,
                    message="表单校验失败（CSRF）：页面可能已过期，请返回、刷新后再提交",
                )
        try:
            return await run_in_threadpool(fn, request, spec, form)
        except (GameSpecError, store_error()) as exc:
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
    form = await _read_form(request, MAX_LOGIN_FORM_BYTES)
    if form is None:
        return _render(request, "login.html", 413, error="提交的内容太大：请只输入令牌")
    if not check_csrf(request.session.get("csrf"), form.get("csrf")):
        request.session["csrf"] = new_csrf()
        return _render(request, "login.html", 403, error="表单校验失败（CSRF）：请刷新登录页后再试")
    client = request.client.host if request.client else "?"
    token = str(form.get("token") or "").strip()
    if not token:
        return _render(request, "login.html", 401, error="请输入令牌")
    wait = console.limiter.begin(client)  # counted now, before the slow check
    if wait > 0:
        minutes = max(1, math.ceil(wait / 60))
        return _render(
            request, "login.html", 429, error=f"登录失败次数太多，请 {minutes} 分钟后再试"
        )
    if not await console.verify(token):
        return _render(request, "login.html", 401, error="令牌不对")
    console.limiter.succeeded(client)
    request.session.clear()  # a fresh session: nothing from before the login carries over
    sid = console.sessions.open(console.token_hash)
    request.session.update({"auth": True, "sid": sid, "csrf": new_csrf()})
    return _see("/")


async def logout(request: Request) -> Response:
    """End this session (here, not only in this browser); with ``everywhere``, every session."""
    console: Console = request.app.state.console
    form = await _read_form(request, MAX_LOGIN_FORM_BYTES)
    if form is None or not check_csrf(request.session.get("csrf"), form.get("csrf")):
        return _render(
            request,
            "error.html",
            403,
            message="表单校验失败（CSRF）：页面可能已过期，请刷新后再退出",
        )
    everywhere = request.url.path.endswith("/all")
    if everywhere and _authed(request):
        n = console.sessions.close_all()
        request.session.clear()
        _flash(request, f"已退出所有设备（结束了 {n} 个会话）。")
    else:
        console.sessions.close(request.session.get("sid"))
        request.session.clear()
        _flash(request, "已退出登录。")
    return _see("/login")


async def stylesheet(request: Request) -> Response:
    return FileResponse(STATIC / "console.css", media_type="text/css")


# --------------------------------------------------------------------------- overview


def overview(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    from pipeline.console.overview import overviews

    console: Console = request.app.state.console
    rows = overviews(console.all_games(), console.clock())
    return _render(request, "overview.html", rows=rows, title="总览")


# --------------------------------------------------------------------------- drafts


def drafts_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    from pipeline.console.overview import sort_drafts
    from pipeline.drafts import list_drafts

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
    from pipeline.console.overview import sort_drafts
    from pipeline.console.preview import bbcode_html, diff_lines
    from pipeline.drafts import draft_events, get_draft
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


def _same_version(request: Request, d: Any, form: FormData, what: str) -> str | None:
    """The draft is still the one the director saw — its text and a new thread's subject
    (another tab or the CLI may have changed them); else why not. The page always sends
    both: a form without them is refused, except a rejection (it posts nothing)."""
    subject = form.get("subject")
    doing = {"approve": "批准", "edit": "保存修改", "reject": "驳回"}[what]
    stale = seen_version(
        d,
        str(form.get("body_hash") or ""),
        str(subject) if subject is not None else None,
        doing=doing,
        required=what != "reject",
    )
    if stale is None:
        return None
    if stale[0] == VERSION_MISSING:  # an old page, or a form not the console's
        return (
            f"提交中没有你看过的第 {d.id} 号草稿的版本，未作任何改动：请重新打开草稿页面后再{doing}"
        )
    return stale[1]


def draft_action(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    """Edit, approve or reject: :mod:`pipeline.drafts` as ``bansha drafts`` uses it. Approving
    and saving an edit refuse when the draft changed since the page was opened."""
    # the state machine imports the drafting (templates, derivation): loaded at the first
    # change of a draft, not with the app
    from pipeline.drafts import approve, edit, get_draft, reject
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
                if stale := _same_version(request, before, form, what):
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
                    after = approve(
                        store, draft_id, now, game=spec.game, templates_dir=spec.templates_dir()
                    )
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
    from pipeline.console import actions

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
        inquiry = _inquiry(spec, store, d, n)
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
        inquiry=inquiry,
    )


def _inquiry(spec: GameSpec, store: Any, d: Any, n: int) -> list[tuple[str, str]]:
    """Day ``n``'s inquiry thread (zhenyan's 询问帖), as ``bansha tally`` shows it; [] for a
    rule set without one."""
    from engine.rulesets import get_ruleset

    if get_ruleset(spec.game.game.ruleset).inquiry is None:
        return []
    from pipeline.derive.inquiry import inquiries_of, inquiry_rows

    return inquiry_rows(inquiries_of(spec.game, store, d), d, n)


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
    from pipeline.console import actions

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


#: the confirmation a card asks for once more (a required checkbox: the console has no script)
SURE = "sure"


def flag_action(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    """Confirm (a card: asked once more, the box ticked), dismiss, or take a decision back."""
    from pipeline.console import actions

    assert spec is not None and form is not None
    from pipeline.derive.undo import BY_CONSOLE, UndoError, revoke_flag

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
                if form.get(SURE) != "1":
                    raise actions.ActionError(
                        f"没有确认 {flag_id}：给牌会记入台账（3 蓝折 1 黄，3 黄折 1 红，"
                        "红牌即罚下出局），请勾选「确认给牌」后再提交"
                    )
                message = actions.confirm_flag(spec.game, store, flag_id, card=card, now=now)
            elif what == "dismiss":
                message = actions.dismiss_flag(
                    spec.game, store, flag_id, why=str(form.get("why") or ""), now=now
                )
            elif what == "revoke":
                undone = revoke_flag(
                    spec.game,
                    store,
                    flag_id,
                    why=str(form.get("why") or ""),
                    by=BY_CONSOLE,
                    now=now,
                )
                message = "；".join(undone.lines(spec.path.name))
            else:
                return _render(request, "error.html", 404, message="没有这个操作")
        except (actions.ActionError, UndoError) as exc:
            _flash(request, str(exc), "error")
            return _see(back)
    _flash(request, message)
    return _see(back + f"#flag-{quote(flag_id, safe='')}")


# --------------------------------------------------------------------------- cards


def cards_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    """The card ledger (after escalation), every card recorded with its revoke form, and the
    audit lines of every undo."""
    assert spec is not None
    from pipeline.derive.undo import card_rows, revocations

    console: Console = request.app.state.console
    now = console.now(spec)
    with spec.store() as store:
        d = _derive(spec, store, now)
        rows = card_rows(store, spec.game)
        audit = revocations(store, spec.game)
    tz = spec.game.game.tz
    return _render(
        request,
        "cards.html",
        spec=spec,
        title=f"牌 · {spec.game.game.title}",
        ledger=d.ledger,
        rows=rows,
        audit=audit,
        fmt=lambda dt: dt.astimezone(tz).strftime("%m-%d %H:%M"),
    )


def card_action(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    """Revoke a card (``bansha card revoke``), recorded as 控制台 with the reason."""
    assert spec is not None and form is not None
    from pipeline.derive.undo import BY_CONSOLE, UndoError, revoke_card

    console: Console = request.app.state.console
    if request.path_params["what"] != "revoke":
        return _render(request, "error.html", 404, message="没有这个操作")
    raw = str(form.get("card_id") or "")
    back = _g(spec, "cards")
    if not raw.isdigit() or len(raw) > 18:
        _flash(request, "没有指明要撤销哪一张牌", "error")
        return _see(back)
    with spec.store() as store:
        try:
            undone = revoke_card(
                spec.game,
                store,
                int(raw),
                why=str(form.get("why") or ""),
                by=BY_CONSOLE,
                now=console.now(spec),
            )
        except UndoError as exc:
            _flash(request, str(exc), "error")
            return _see(back)
    _flash(request, "；".join(undone.lines(spec.path.name)))
    return _see(back + f"#card-{raw}")


# --------------------------------------------------------------------------- night


def _context(spec: GameSpec) -> Any:
    from pipeline.cli import GameContext

    if not spec.db_exists:
        raise GameSpecError(
            f"游戏 {spec.id} 的数据库 {spec.db_path} 还不存在（先运行 bansha init {spec.path}）"
        )
    return GameContext(spec.path, spec.game, spec.db_path)


def _no_such_night(request: Request, spec: GameSpec, n: int) -> Response | None:
    """Night N follows day N (night 0 comes first): a night whose day the game file does not
    have is an unknown page, like an unknown day."""
    if n == 0 or any(d.day == n for d in spec.game.days):
        return None
    return _render(
        request,
        "error.html",
        404,
        message=f"游戏文件中没有第{n}晚（第{n}晚在第{n}天之后："
        "先在游戏文件的 [[days]] 中加上这一天）",
    )


def night_page(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    assert spec is not None
    n = int(request.path_params["n"])
    return _no_such_night(request, spec, n) or _night_view(request, spec, n)


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
    from pipeline.console import actions
    from pipeline.game.journal import journal_actions, source_zh

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
        ordinal=ZH_ORDINAL if rs.hands is not None and rs.hands.size > 1 else {},
        players=actions.players_of(spec.game),
        skills=skills,
        has_engine=rs.has_engine,
        ruleset_name=rs.name,
        nights=nights,
        error=error,
        values=values or {},
        when=lambda text: when_zh(text, spec.game.game.tz),
        source_zh=source_zh,
        here=for_file(spec),
    )


def when_zh(text: str | None, tz: Any) -> str:
    """A stored time as a director reads it (``12-02 13:38``); a time without a zone is taken
    as the game's; what is not a time stays as it was written."""
    if not text:
        return ""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        return text
    if at.tzinfo is None:
        at = at.replace(tzinfo=tz)
    return at.astimezone(tz).strftime("%m-%d %H:%M")


def for_file(spec: GameSpec) -> Callable[[str | None], str]:
    """A hint's ``bansha … GAME.toml …`` with the game's own file name (quoted for the shell
    only when it has to be: ``我的游戏.toml`` stays as it is)."""
    import re
    import shlex

    name = spec.path.name
    if not re.fullmatch(r"[^\s'\"$`\\!*?;&|<>(){}\[\]#~]+", name):
        name = shlex.quote(name)
    return lambda text: (text or "").replace("GAME.toml", name)


def night_action(request: Request, spec: GameSpec | None, form: FormData | None) -> Response:
    from pipeline.console import actions

    assert spec is not None and form is not None
    console: Console = request.app.state.console
    n = int(request.path_params["n"])
    if (unknown := _no_such_night(request, spec, n)) is not None:
        return unknown
    what = request.path_params["what"]
    now = console.now(spec)
    back = _g(spec, "night", n)
    if what == "add":
        values: dict[str, Any] = {
            "actor": str(form.get("actor") or ""),
            "skill": str(form.get("skill") or ""),
            "targets": actions.form_list(form, "target"),
            "choice": str(form.get("choice") or ""),
            "card": str(form.get("card") or ""),
            "at": str(form.get("at") or ""),
            "late": bool(form.get("late")),
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
            lines = actions.remove_night_action(
                ctx, int(raw), now=now, why=str(form.get("why") or "") or None
            )
        except actions.ActionError as exc:
            return _night_view(request, spec, n, status=400, error=str(exc))
        finally:
            ctx.close()
        rerun = "；".join(lines[1:]) or "请重新结算（预览已按撤销后的记录计算）"
        _flash(request, f"已撤销第{n}晚的第 {raw} 号行动；{rerun}")
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
    framing, no sniffing, no referrer to other sites (to its own pages the browser names the
    console as ``Origin``, which :class:`~pipeline.console.hosts.HostGuard` checks); pages are
    not cached."""

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
                    (b"referrer-policy", b"same-origin"),
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
    token_hash: str | Callable[[], str],
    *,
    clock: Callable[[], datetime] | None = None,
    secret_key: str | None = None,
    https_only: bool = False,
    limiter: LoginLimiter | None = None,
    token_file: Path | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
    public_url: str | None = None,
) -> Starlette:
    """The console for ``games``. ``token_hash`` is :func:`pipeline.console.auth.hash_token` of
    the login token (or a function making it, called by the first request that needs it: a
    login, not the login page); with ``token_file`` (where that hash is kept) a new
    hash written there replaces it at once. ``clock`` gives the time the pages judge by
    (default: now). Sessions are kept in memory and the session key is random per process
    unless given: a restart logs everybody out. ``https_only`` marks the cookie Secure (behind
    a TLS reverse proxy). ``host``, ``port`` and ``public_url`` say the addresses the console
    is served as: any other ``Host`` is refused (:class:`~pipeline.console.hosts.HostPolicy`)."""
    from datetime import UTC

    register_id_convertor()

    specs = {g.id: g for g in games}
    if len(specs) != len(games):
        raise ValueError("两个游戏文件的 game.id 相同")
    policy = HostPolicy.of(host, port, public_url)
    console = Console(
        games=specs,
        token=TokenSource(token_hash, token_file),
        sessions=Sessions(max_age_s=SESSION_HOURS * 3600),
        limiter=limiter or LoginLimiter(),
        clock=clock or (lambda: datetime.now(UTC)),
        env=_environment(),
    )
    routes = [
        Route("/login", login_page, methods=["GET"]),
        Route("/login", login_post, methods=["POST"]),
        Route("/logout", logout, methods=["POST"]),
        Route("/logout/all", logout, methods=["POST"]),
        Route("/static/console.css", stylesheet, methods=["GET"]),
        Route("/", page(overview, game=False), methods=["GET"]),
        Route("/g/{gid}", page(game_home), methods=["GET"]),
        Route("/g/{gid}/drafts", page(drafts_page), methods=["GET"]),
        Route("/g/{gid}/drafts/{n:id}", page(draft_page), methods=["GET"]),
        Route("/g/{gid}/drafts/{n:id}/{what}", page(draft_action), methods=["POST"]),
        Route("/g/{gid}/day/{n:id}", page(day_page), methods=["GET"]),
        Route("/g/{gid}/day/{n:id}/why", page(why_page), methods=["GET"]),
        Route("/g/{gid}/flags/{what}", page(flag_action), methods=["POST"]),
        Route("/g/{gid}/cards", page(cards_page), methods=["GET"]),
        Route("/g/{gid}/cards/{what}", page(card_action), methods=["POST"]),
        Route("/g/{gid}/night/{n:id}", page(night_page), methods=["GET"]),
        Route("/g/{gid}/night/{n:id}/{what}", page(night_action), methods=["POST"]),
        *api_routes(),
    ]
    forums = sorted({o for g in games if (o := _origin(g.base_url))})
    app = Starlette(
        routes=routes,
        exception_handlers={404: _not_found, 405: _not_allowed},
        middleware=[
            Middleware(SecurityHeaders, img_sources=forums),
            Middleware(HostGuard, policy=policy),
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
    app.state.hosts = policy
    return app


async def _not_found(request: Request, exc: Exception) -> Response:
    """Any path the console does not have — an unknown page, an id that is not a number or too
    big to be one — answers like an unknown id: 404, in Chinese."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": "没有这个接口或编号"}, status_code=404)
    if "session" not in request.scope:
        return PlainTextResponse("没有这个页面", status_code=404)
    return _render(request, "error.html", 404, message="没有这个页面（或没有这个编号）")


async def _not_allowed(request: Request, exc: Exception) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": "这个接口不接受这种请求方法"}, status_code=405)
    return PlainTextResponse("这个页面不接受这种请求方法", status_code=405)
