"""The director's day report: one self-contained HTML page.

``report_data`` gathers what the page shows from a :class:`~pipeline.derive.Derivation` (the
``bansha tally --json`` contract, the roster, who is out, the card ledger);
``render_report`` turns that data into the page (a Jinja2 template with autoescape, inline CSS
and an inline SVG chart: no script, no font, no request of any kind); ``write_report`` is the
small I/O wrapper the ``bansha report`` command and the demo call.

Everything a player wrote (names, vote targets) is untrusted: the template escapes every value,
links are only ever ``http(s)`` post links, and a Content-Security-Policy forbids the page any
script or remote resource.
"""

from __future__ import annotations

import functools
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from fractions import Fraction
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from engine.conduct import FlagKind
from engine.rulesets import get_ruleset
from engine.rulesets.base import zh_votes
from engine.rulesets.rulebooks import cite
from pipeline import resources, set_mode
from pipeline.derive import Derivation, derive, flag_decisions, tally_json
from pipeline.game.gamefile import Game
from pipeline.store import Store

log = logging.getLogger(__name__)

__all__ = [
    "TEMPLATES",
    "ReportData",
    "ReportError",
    "render_report",
    "report_data",
    "write_report",
]

TEMPLATES = resources.templates_dir()
TEMPLATE_NAME = "report.html.j2"


class ReportError(ValueError):
    """The report template cannot be rendered (message in Chinese)."""


STATUS_ZH: Mapping[str, str] = {
    "counted": "有效",
    "superseded": "已改票",
    "invalid": "无效",
    "ignored": "不计",
}
KIND_ZH: Mapping[str, str] = {
    "vote": "投票",
    "change": "改票",
    "abstain": "弃权",
    "invalid": "无效票",
    "proxy": "代投",
}
FLAG_STATUS_ZH: Mapping[str, str] = {
    "open": "待确认",
    "confirmed": "已确认",
    "dismissed": "已驳回",
}
THREAD_ZH: Mapping[str, str] = {
    "discussion": "讨论帖",
    "vote": "投票帖",
    "progress": "进程帖",
    "inquiry": "询问贴",
    "first_vote": "第一轮投票帖",
}

# the chart's geometry, in SVG user units (the SVG scales to the page's width)
CHART_WIDTH = 400
CHART_LABEL = 92  # the names' column
CHART_ROW = 22
CHART_TOP = 22  # room for the threshold labels
CHART_RIGHT = 34  # room for the count after the longest bar
CHART_NAME_CHARS = 7


@dataclass(frozen=True, slots=True)
class ReportData:
    """Everything the day report shows. ``tally`` is ``tally_json(d, day, decisions)``."""

    title: str
    ruleset: str
    tz: tzinfo
    tally: Mapping[str, Any]
    players: tuple[str, ...]  # the roster, in game-file order
    outs: Mapping[str, tuple[datetime, str]]  # player -> (when, why)
    ledger: Mapping[str, Any]  # Ledger.to_dict()
    decisions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    threads: Mapping[str, str] = field(default_factory=dict)  # 讨论帖/投票帖… -> thread URL
    min_posts: int = 5
    streak_posts: int = 10
    min_posts_rule: str = ""
    streak_rule: str = ""
    # player -> how many consecutive non-accelerated days, ending with this one, they stayed
    # under ``streak_posts`` (the run the 3-day 潜水 rule counts); absent: 0
    streaks: Mapping[str, int] = field(default_factory=dict)
    # the day's inquiry thread as ``bansha tally`` lists it: (text, post link or "")
    inquiry: tuple[tuple[str, str], ...] = ()


def report_data(
    d: Derivation,
    day: int,
    decisions: Mapping[str, Mapping[str, Any]] | None = None,
    inquiry: Sequence[tuple[str, str]] = (),
) -> ReportData:
    """The report's data for one day of a derivation (raises ``ValueError`` for a day the game
    file does not have); ``inquiry``: the day's inquiry thread as the director reads it
    (:func:`pipeline.derive.inquiry.inquiry_rows`)."""
    decisions = dict(decisions or {})
    res = d.day(day)
    game = d.game
    rules = get_ruleset(game.game.ruleset).conduct
    base = str(game.forum.base_url)
    threads = {
        THREAD_ZH.get(str(role.value), str(role.value)): (
            f"{base}forum.php?mod=viewthread&tid={tid}"
        )
        for role, tid in res.day.threads.items()
    }
    return ReportData(
        title=game.game.title,
        ruleset=game.game.ruleset,
        tz=game.game.tz,
        tally=tally_json(d, day, decisions),
        players=tuple(p.name for p in game.players),
        outs=dict(d.outs),
        ledger=d.ledger.to_dict(),
        decisions=decisions,
        threads=threads,
        min_posts=rules.min_posts,
        streak_posts=rules.streak_posts,
        min_posts_rule=rules.rule(FlagKind.QIANSHUI),
        streak_rule=rules.rule(FlagKind.QIANSHUI_STREAK),
        streaks=_streaks(d, day, rules.streak_posts, rules.streak_days),
        inquiry=tuple(inquiry),
    )


def _streaks(d: Derivation, day: int, under: int, days: int) -> dict[str, int]:
    """Per player, the run of days under ``under`` posts that ends with ``day``, counted as
    ``engine.conduct`` counts the 3-day rule: a day the player was out of the game, an
    accelerated day, or a day at ``under`` or more ends the run; a run that reached ``days``
    raised its flag and starts again."""
    result: dict[str, int] = {}
    for p in d.game.players:
        run = 0
        out = d.outs.get(p.name)
        for n in sorted(k for k in d.days if k <= day):
            res = d.days[n]
            if run == days:
                run = 0
            if (out is not None and out[0] < res.day.closes) or res.accelerated:
                run = 0
                continue
            pc = res.counts.get(p.name)
            run = run + 1 if (pc.count if pc else 0) < under else 0
        if run:
            result[p.name] = run
    return result


# --------------------------------------------------------------------------- rendering


@functools.cache
def _environment(folder: str) -> jinja2.Environment:
    # the immutable sandbox, like the drafts' templates: a template reads the values it is
    # given and reaches no Python internals (''.__class__ …) and changes nothing
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(folder),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["cite"] = cite  # a rule reference as the director knows it
    return env


def render_report(data: ReportData, *, templates: Path = TEMPLATES) -> str:
    """The day report as one self-contained HTML page (a ``str``; same data → same page).

    Raises :class:`ReportError` (Chinese) when the template is missing, broken, or reaches for
    what the sandbox forbids."""
    where = Path(templates) / TEMPLATE_NAME
    try:
        template = _environment(str(templates)).get_template(TEMPLATE_NAME)
        return template.render(**_view(data))
    except jinja2.TemplateNotFound as exc:
        raise ReportError(f"找不到报告模板 {where}") from exc
    except jinja2.TemplateSyntaxError as exc:
        raise ReportError(f"报告模板 {where} 第 {exc.lineno} 行语法错误：{exc.message}") from exc
    except jinja2.exceptions.SecurityError as exc:
        raise ReportError(
            f"报告模板 {where} 试图使用模板中不允许的内部属性或方法，已拒绝生成"
        ) from exc
    except jinja2.TemplateError as exc:
        raise ReportError(f"报告模板 {where} 无法生成：{exc}") from exc


def _when(raw: str | None, tz: tzinfo, fmt: str = "%m-%d %H:%M:%S") -> str:
    if not raw:
        return "—"
    return datetime.fromisoformat(raw).astimezone(tz).strftime(fmt)


def _votes(raw: str | int | Fraction) -> str:
    """An exact vote count for reading: 3, 5.5 (a terminating decimal), or 4/3."""
    return zh_votes(Fraction(raw))


def _link(url: str | None) -> str | None:
    """Only web links become ``href``s (a 代投 from the journal has a description instead)."""
    if url and url.startswith(("http://", "https://")):
        return url
    return None


def _short(name: str, limit: int = CHART_NAME_CHARS) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"


def _view(data: ReportData) -> dict[str, Any]:
    """One flat view model for report.html.j2: each key is read once by the template, in order."""
    t = data.tally
    tz = data.tz
    day = int(t["day"])
    opens = datetime.fromisoformat(t["opens"])
    closes = datetime.fromisoformat(t["closes"])
    result = _result_view(data)
    votes = _votes_view(t, tz)
    accelerated = bool(t["accelerated"])
    rows = _post_rows(data, closes)
    chart = _chart(rows, data.min_posts, data.streak_posts)
    flags = _flags_view(data)
    ledger = data.ledger
    cards = _cards_view(ledger, tz)
    speed = t.get("speed")
    return {
        "title": data.title,
        "ruleset": data.ruleset,
        "day": day,
        "opens": opens.astimezone(tz).strftime("%m-%d %H:%M"),
        "closes": closes.astimezone(tz).strftime("%m-%d %H:%M"),
        "as_of": _when(t["as_of"], tz, "%Y-%m-%d %H:%M"),
        "closed": bool(t["closed"]),
        "sheriff": t["sheriff"],
        "accelerated": accelerated,
        "speed_reason": speed["reason"] if speed else "",
        "speed_rule": speed["rule"] if speed else "",
        # the open-vote note is the banner the page shows itself
        "notes": [n for n in t["notes"] if t["closed"] or not n.startswith("投票尚未截止")],
        "threads": dict(data.threads),
        "result": result,
        "votes": votes,
        "votes_counted": sum(1 for v in votes if v["status"] == "counted"),
        "players": rows,
        "chart": chart,
        "min_posts": data.min_posts,
        "streak_posts": data.streak_posts,
        "min_posts_rule": data.min_posts_rule,
        "streak_rule": data.streak_rule,
        "flags": flags,
        "flags_open": sum(1 for f in flags if f["status"] == "open"),
        "inquiry": [{"text": text, "url": _link(url)} for text, url in data.inquiry],
        "cards": cards,
        "escalations": list(ledger.get("escalations", [])),
        "out_by_red": [
            {"player": p, "at": _when(at, tz, "%m-%d %H:%M")}
            for p, at in ledger.get("out_by_red", {}).items()
        ],
        "losing_factions": [
            str(x.get("reason", x.get("faction", ""))) for x in ledger.get("losing_factions", [])
        ],
        "card_rules": ledger.get("rules", {}),
    }


def _result_view(data: ReportData) -> dict[str, Any] | None:
    """The day's result: the headline, every candidate's count, the weights; None before a
    tally."""
    t = data.tally
    tally = t.get("tally")
    result: dict[str, Any] | None = None
    if tally is not None:
        if tally["sheriff_election"]:
            headline = f"当选警长：{tally['elected']}" if tally["elected"] else "无人当选警长"
        else:
            headline = f"出局：{tally['out']}" if tally["out"] else "无人出局"
            first = t.get("first_round")
            if first:  # 太阳[日不落] (m209.txt:377-378): two 正午 rounds, both tops out at 黄昏
                headline = (
                    f"第一轮{'出局：' + first['out'] if first['out'] else '无人出局'}；"
                    f"额外一轮{headline}"
                )
        weights = [
            {"voter": w["voter"], "weight": _votes(w["weight"]), "why": w["why"]}
            for w in tally["weights"]
            if w["why"] or Fraction(w["weight"]) != 1
        ]
        result = {
            "headline": headline,
            "who": tally["elected"] if tally["sheriff_election"] else tally["out"],
            "decided_by": tally["decided_by"],
            "rule": tally["rule"],
            "counts": [
                {
                    "candidate": c["candidate"],
                    "votes": _votes(c["votes"]),
                    "exact": c["votes"],
                    "voters": list(c["voters"]),
                    "top": c["candidate"] in tally["top"],
                }
                for c in tally["counts"]
            ],
            "abstained": list(tally["abstained"]),
            "total": _votes(tally["total"]["votes"]),
            "weights": weights,
            "tie": list(tally["tie"]),
            "notes": list(tally["notes"]),
            "public_counts": bool(tally["public_counts"]),
            "public_voters": bool(tally["public_voters"]),
            # where the rule set says its public result leaves something out (file:line)
            "public_counts_rule": get_ruleset(data.ruleset).public_counts_rule,
            "public_voters_rule": get_ruleset(data.ruleset).public_voters_rule,
            "sheriff_vote": tally["sheriff_vote"],
            # 太阳[日不落]: the first 正午 round's counts (m209.txt:377-378)
            "first_counts": [
                {
                    "candidate": c["candidate"],
                    "votes": _votes(c["votes"]),
                    "voters": list(c["voters"]),
                    "top": c["candidate"] in t["first_round"]["tally"]["top"],
                }
                for c in t["first_round"]["tally"]["counts"]
            ]
            if t.get("first_round")
            else None,
        }
    return result


def _votes_view(t: Mapping[str, Any], tz: tzinfo) -> list[dict[str, Any]]:
    """Every vote, in post order (the first 正午 round's first on a 太阳[日不落] day)."""
    votes = []
    first = t.get("first_round")
    rounds = [("第一轮[正午]", v) for v in (first["votes"] if first else ())]
    rounds += [("额外一轮[正午]" if first else "", v) for v in t["votes"]]
    for round_zh, v in rounds:
        b = v["ballot"]
        ev = b["evidence"]
        target = v["target"] or b["target"] or b["target_raw"] or "—"
        what = "弃权" if v["abstain"] else f"{KIND_ZH.get(b['kind'], b['kind'])} → {target}"
        votes.append(
            {
                "floor": f"{ev['floor']}#" if ev["floor"] is not None else "导演",
                "at": _when(ev["at"], tz),
                "voter": v["voter"],
                "what": what,
                "status": v["status"],
                "status_zh": STATUS_ZH.get(v["status"], v["status"]),
                "reason": v["reason"],
                "rule": v["rule"],
                "url": _link(ev["url"]),
                "source": ev["url"] if not _link(ev["url"]) else "",
                "pid": ev["pid"],
                "round": round_zh,  # 太阳[日不落]: which 正午 round (m209.txt:377-378)
            }
        )
    return votes


def _post_rows(data: ReportData, closes: datetime) -> list[dict[str, Any]]:
    """Posts per player against the thresholds."""
    t = data.tally
    tz = data.tz
    counts = t["post_counts"]
    accelerated = bool(t["accelerated"])
    rows = []
    for name in data.players:
        n = int(counts[name]["count"]) if name in counts else 0
        out = data.outs.get(name)
        liable = out is None or out[0] >= closes
        if not liable:
            assert out is not None
            status, css = f"已出局（{_when(out[0].isoformat(), tz, '%m-%d %H:%M')}），不计", "out"
        elif accelerated:
            status, css = "加速日，不计潜水", "exempt"
        elif name in t.get("post_exempt", {}):
            status, css = f"{t['post_exempt'][name]}，不计", "exempt"
        elif n < data.min_posts:
            status, css = f"不足{data.min_posts}帖", "low"
        elif n < data.streak_posts:
            run = data.streaks.get(name, 1)
            status, css = f"不足{data.streak_posts}帖（连续第{run}天）", "mid"
        else:
            status, css = "达标", "ok"
        rows.append({"name": name, "count": n, "status": status, "css": css})
    return rows


def _flags_view(data: ReportData) -> list[dict[str, Any]]:
    """The day's flags with the director's decisions."""
    flags = []
    for f in data.tally["flags"]:
        status = str(f.get("status", "open"))
        decision = data.decisions.get(f["id"], {})
        flags.append(
            {
                "id": f["id"],
                "player": f["player"],
                "kind": f["kind"],
                "kind_zh": f["kind_zh"],
                "reason": f["reason"],
                "card": f["card"],
                "rule": f["rule"],
                "status": status,
                "status_zh": FLAG_STATUS_ZH.get(status, status),
                "why": decision.get("why") or "",
                "decided_card": decision.get("card") or "",
                "evidence": [
                    {
                        "label": f"{e['floor']}楼" if e["floor"] is not None else f"pid {e['pid']}",
                        "url": _link(e["url"]),
                    }
                    for e in f["evidence"]
                ],
            }
        )
    return flags


def _cards_view(ledger: Mapping[str, Any], tz: tzinfo) -> list[dict[str, Any]]:
    """The card ledger, one row per player."""
    return [
        {
            "player": name,
            "blue": pc["blue"],
            "yellow": pc["yellow"],
            "red": pc["red"],
            "history": list(pc["history"]),
            "out_at": _when(pc["out_at"], tz, "%m-%d %H:%M") if pc["out_at"] else "",
        }
        for name, pc in ledger.get("players", {}).items()
    ]


def _chart(rows: Sequence[Mapping[str, Any]], low: int, high: int) -> dict[str, Any]:
    """Geometry of the horizontal bar chart: one bar per player, lines at both thresholds."""
    top = max([high + 2, *(int(r["count"]) + 1 for r in rows)])
    span = CHART_WIDTH - CHART_LABEL - CHART_RIGHT

    def x(n: int) -> float:
        return round(CHART_LABEL + span * n / top, 1)

    bars = [
        {
            "name": r["name"],
            "short": _short(str(r["name"])),
            "count": r["count"],
            "css": r["css"],
            "y": CHART_TOP + i * CHART_ROW,
            "width": round(x(int(r["count"])) - CHART_LABEL, 1),
            "text_x": x(int(r["count"])) + 4,
        }
        for i, r in enumerate(rows)
    ]
    height = CHART_TOP + len(rows) * CHART_ROW + 6
    return {
        "width": CHART_WIDTH,
        "height": height,
        "label": CHART_LABEL,
        "row": CHART_ROW,
        "bar": CHART_ROW - 8,
        "bars": bars,
        "lines": [
            {"n": low, "x": x(low), "css": "low"},
            {"n": high, "x": x(high), "css": "high"},
        ],
        "bottom": height - 4,
    }


# --------------------------------------------------------------------------- I/O


def write_report(game: Game, store: Store, *, day: int, as_of: datetime, path: Path) -> Path:
    """Derive the game as of ``as_of`` and write day ``day``'s report to ``path`` (atomically:
    a reader never sees half a page). Returns the path written."""
    d = derive(game, store, as_of=as_of)
    inquiry: list[tuple[str, str]] = []
    if get_ruleset(game.game.ruleset).inquiry is not None:  # zhenyan.txt:147 询问贴
        from pipeline.derive.inquiry import inquiries_of, inquiry_rows

        inquiry = inquiry_rows(inquiries_of(game, store, d), d, day)
    page = render_report(report_data(d, day, flag_decisions(store), inquiry))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(page)
        set_mode(tmp, 0o644)  # mkstemp makes it 0600; a report holds no secret
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    log.info("report written: %s", path)
    return path
