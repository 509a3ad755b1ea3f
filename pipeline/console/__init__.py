"""The director's console: a small local web app (Starlette + Jinja2) and ``bansha status``.

- :mod:`pipeline.console.games` — which games (game files, their stores) the console serves;
- :mod:`pipeline.console.light` — what the overview reads of a game file the last derivation
  validated, without its model;
- :mod:`pipeline.console.overview` — the overview of a game (shared by the console's first page,
  ``GET /api/games`` and ``bansha status``) and how urgent a waiting draft is;
- :mod:`pipeline.console.api` — the JSON the API and ``bansha drafts --json`` print;
- :mod:`pipeline.console.auth` — the login token (stored only as a hash), the login rate limit,
  CSRF tokens;
- :mod:`pipeline.console.preview` — a draft's BBCode as the forum will show it, and diffs;
- :mod:`pipeline.console.actions` — flag decisions, ``why`` as a BBCode answer, night actions;
- :mod:`pipeline.console.app` — the web app (:func:`create_app`);
- :mod:`pipeline.console.cli` / :mod:`pipeline.console.status` — ``bansha serve`` and
  ``bansha status``.

The console changes nothing by itself: edits, approvals and rejections go through the same
functions as ``bansha drafts`` (:mod:`pipeline.drafts`), and only ``bansha cycle`` (or
``bansha publish``) ever posts.
"""

from pipeline.console.games import GameSpec, GameSpecError, load_specs

__all__ = ["GameSpec", "GameSpecError", "load_specs"]
