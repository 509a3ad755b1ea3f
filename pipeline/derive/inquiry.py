"""The inquiry thread (询问贴) flow: questions, guesses, the director's answers, the 公示.

Only a rule set with ``inquiry`` (:class:`engine.rulesets.base.InquiryRules`, declared in its
module: zhenyan's) has one; its limits and the rule lines cited below are read from there.
Given the game, the store and the derivation time, :func:`inquiry_days` reads each day's inquiry
thread and returns, per day:

- every player's inquiry post in order, numbered against the daily limit of 3 questions
  (zhenyan.txt:147, 165); a post that does not fit in what is left of the day's 3 is flagged and
  not answered (docs/rulings.md#zhenyan-inquiry-limit);
- each guess ``【第X个词语是XX吗？】`` (zhenyan.txt:167-168) checked against the secret words of the
  game file's ``[zhenyan]`` table, normalised for width, spaces and punctuation and for the
  director's accepted variants; a word counts as guessed once (the first correct guess);
- the sheriff's answers (是/否/不知道, zhenyan.txt:109, 166) paired with the questions through the
  quote link or a floor reference, and the questions still unanswered at the inquiry close
  (1 hour before the day closes, zhenyan.txt:188);
- flags: the sheriff asking or guessing (咒语反噬, zhenyan.txt:109), the sheriff answering with
  other words (zhenyan.txt:291), the sheriff posting in the discussion thread (zhenyan.txt:109,
  291), inquiries after the close, inquiries of players already out.

:func:`inquiry_drafts` turns the days into :class:`~pipeline.drafts.DraftSpec` s: the director's
answer to every guess first (猜测正确/猜测错误, zhenyan.txt:168) through
:func:`pipeline.drafts.inquiry_answer_drafts`, and a 公示 in the discussion thread of each word
guessed correctly. :func:`guess_actions` gives the engine's day actions (``猜中``) that count the
words for the win check; :func:`day_guess_actions` is what ``bansha day resolve`` adds to a day's
actions (the thread's guesses the director did not also record by hand).

The game file's table::

    [zhenyan]
    words = ["风扇", "鹿目圆", "千羽", "摄梦人"]   # the four 真言词语, in order
    variants = { "2" = ["小圆", "圆神"] }           # accepted other forms, by position

Secrets: the words appear only in the 公示 of a word guessed correctly; never in a log line, an
error message, a flag or an answer draft.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from engine.kernel import Action
from engine.rulesets import get_ruleset, ruleset_ids
from engine.rulesets.base import InquiryRules, zh_span
from engine.rulesets.rulebooks import cite
from parsers.inquiry import Answer, Guess, InquiryKind, parse_inquiry, sheriff_asks, split_answers
from parsers.records import Post, PostState
from pipeline.derive.derivation import derive
from pipeline.derive.posts import Roster, substitutions
from pipeline.derive.results import Derivation
from pipeline.game.gamefile import Day, Game
from pipeline.game.words import (
    InquiryError,
    Secrets,
    inquiry_rules,
    load_secrets,
    word_key,
)
from pipeline.store import Store

__all__ = [
    "CLOSE_BEFORE",
    "CheckedGuess",
    "InquiryDay",
    "InquiryError",
    "InquiryFlag",
    "InquiryItem",
    "Secrets",
    "day_guess_actions",
    "guess_actions",
    "inquiry_days",
    "load_secrets",
    "word_key",
]

log = logging.getLogger(__name__)

#: The longest inquiry close of the rule sets that have an inquiry thread (pipeline.cycle's
#: moments); a game's own is ``get_ruleset(id).inquiry.close_before``.
CLOSE_BEFORE: timedelta = max(
    (i.close_before for r in ruleset_ids() if (i := get_ruleset(r).inquiry) is not None),
    default=timedelta(0),
)
_LINKED_PID = re.compile(r"[?&;]pid=(\d+)")
CORRECT = "猜测正确"
WRONG = "猜测错误"
#: The actor of a guess the director records without naming the guesser.
DIRECTOR_ACTOR = "导演"


@dataclass(frozen=True, slots=True)
class CheckedGuess:
    index: int
    word_raw: str  # as the player wrote it (public: it is in the thread)
    correct: bool | None  # None: the position is out of range
    first: bool  # the first correct guess of this word: it counts and is announced
    text: str


@dataclass(frozen=True, slots=True)
class InquiryFlag:
    """Something for the director: who, where, what, by which rule (Chinese)."""

    who: str
    pid: int | None
    url: str
    text: str
    rule: str


@dataclass(frozen=True, slots=True)
class InquiryItem:
    """One player's inquiry post."""

    player: str
    pid: int
    floor: int | None
    at: datetime
    kind: InquiryKind
    questions: int  # questions in the post
    used_before: int  # the player's questions earlier that day
    accepted: bool  # within the daily limit, before the close, by a living player
    guesses: tuple[CheckedGuess, ...]
    answer: Answer | None  # the sheriff's answer, when paired
    answer_pid: int | None
    url: str
    notes: tuple[str, ...] = ()
    director_posted: bool = False  # a director's post in the thread already links this question

    @property
    def director_answer(self) -> str | None:
        """猜测正确/错误 for a guess post (several guesses: one line each)."""
        checked = [g for g in self.guesses if g.correct is not None]
        if not self.accepted or not checked:
            return None
        if len(checked) == 1:
            return CORRECT if checked[0].correct else WRONG
        return "；".join(f"第{g.index}个词语：{CORRECT if g.correct else WRONG}" for g in checked)


@dataclass(frozen=True, slots=True)
class InquiryDay:
    day: int
    tid: int
    sheriff: str | None
    closes_at: datetime  # the inquiry close (1 hour before the day's close)
    closed: bool
    items: tuple[InquiryItem, ...]
    flags: tuple[InquiryFlag, ...]
    guessed: tuple[int, ...]  # positions first guessed correctly this day
    guessed_before: tuple[int, ...]  # positions guessed on earlier days
    guess_skill: str  # the engine's day action for a word guessed correctly (InquiryRules)

    @property
    def unanswered(self) -> tuple[InquiryItem, ...]:
        """Accepted questions the sheriff has not answered (listed for the director at close)."""
        return tuple(i for i in self.items if i.accepted and i.answer is None)

    def summary(self) -> list[str]:
        """Lines for the director (Chinese); no secret word."""
        lines = [
            f"第{self.day}天询问帖（tid {self.tid}，{'已' if self.closed else '未'}关闭，"
            f"警长：{self.sheriff or '无'}）"
        ]
        for it in self.items:
            state = "受理" if it.accepted else "不受理"
            ans = it.answer.value if it.answer else "未回答"
            extra = f"，导演反馈：{it.director_answer}" if it.director_answer else ""
            lines.append(
                f"  {it.player} #{it.floor or '?'}（第{it.used_before + 1}问起，{it.questions}问，"
                f"{state}）：警长{ans}{extra}"
            )
        if self.closed and self.unanswered:
            lines.append(
                "  关门时未回答："
                + "、".join(f"{i.player} #{i.floor or '?'}" for i in self.unanswered)
            )
        for f in self.flags:
            lines.append(f"  ⚑ {f.who}：{f.text}（依据{cite(f.rule)}）")
        if self.guessed:
            lines.append("  本日猜中：" + "、".join(f"第{i}个词语" for i in self.guessed))
        return lines

    def director_lines(
        self,
        tz: Any,
        *,
        player: str | None = None,
        elsewhere: frozenset[int] = frozenset(),
        problems_only: bool = False,
    ) -> list[tuple[str, str]]:
        """What ``bansha tally`` / ``why`` and the console's day page show (Chinese, no secret
        word): ``(text, the post's link or "")`` per line. Every inquiry post with whether it
        is taken — and why not (after the close, over the day's 3, out), the sheriff's answer
        and the director's feedback; the questions still unanswered (at the close: zhenyan.txt:147);
        the sheriff's posts that break the thread's rules. ``player``: only that player's
        posts and flags (the sheriff's also the questions left unanswered); ``elsewhere``:
        pids whose flag the conduct flags already list (not repeated); ``problems_only``: only
        what the director must act on (posts not taken, questions unanswered, the sheriff's
        breaches) — ``bansha flags`` — and nothing when there is none."""
        lines: list[tuple[str, str]] = [
            (
                f"第{self.day}天询问帖（tid {self.tid}）："
                f"{self.closes_at.astimezone(tz):%m-%d %H:%M}关闭"
                f"（{'已' if self.closed else '未'}关闭）；警长：{self.sheriff or '无'}",
                "",
            )
        ]
        refused = {f.pid: f for f in self.flags if f.pid is not None}
        mine = [it for it in self.items if player is None or it.player == player]
        for it in mine:
            if problems_only and (it.accepted or it.pid in elsewhere):
                continue  # taken, or a conduct flag already says why not
            floor = f"{it.floor}#" if it.floor else "?#"
            head = f"  {floor:>5} {it.at.astimezone(tz):%m-%d %H:%M} {it.player} {it.questions}问"
            if it.accepted:
                ans = f"警长{it.answer.value}" if it.answer else "警长未回答"
                extra = f"；导演反馈：{it.director_answer}" if it.director_answer else ""
                first = it.used_before + 1
                span = (
                    f"第{first}问"
                    if it.questions == 1
                    else f"第{first}–{first + it.questions - 1}问"
                )
                lines.append((f"{head}（{span}）受理：{ans}{extra}", it.url))
            else:
                f = refused.get(it.pid)
                why = f"{f.text}（依据{cite(f.rule)}）" if f is not None else "不受理"
                lines.append((f"{head} 不受理：{why}", it.url))
        waiting = self.unanswered if player in (None, self.sheriff) else ()
        if waiting:
            lines.append(
                (
                    "  询问帖关闭时仍未回答（警长需要在关门前回复）："
                    if self.closed
                    else "  尚未回答：",
                    "",
                )
            )
            for it in waiting:
                lines.append((f"    {it.player} {it.floor or '?'}#", it.url))
        items = {it.pid for it in self.items}
        for f in self.flags:
            if f.pid in items or (f.pid is not None and f.pid in elsewhere):
                continue  # with its question above, or among the conduct flags
            if player is not None and f.who != player:
                continue
            lines.append((f"  ⚑ {f.who}：{f.text}（依据{cite(f.rule)}）", f.url))
        if problems_only:
            return lines if len(lines) > 1 else []
        if self.guessed and player is None:
            lines.append(("  本日猜中：" + "、".join(f"第{i}个词语" for i in self.guessed), ""))
        if len(lines) == 1:
            lines.append(
                ("  （没有询问帖的帖子）" if player is None else "  （没有这位玩家的询问）", "")
            )
        return lines


# --------------------------------------------------------------------------- reading


def _url(game: Game, post: Post) -> str:
    base = str(game.forum.base_url)
    return f"{base}forum.php?mod=redirect&goto=findpost&ptid={post.tid}&pid={post.pid}"


def _visible(posts: Sequence[Post]) -> list[Post]:
    return [p for p in posts if p.posted_at is not None and p.state is not PostState.DELETED]


def inquiry_days(
    game: Game,
    store: Store,
    *,
    as_of: datetime,
    sheriffs: Mapping[int, str | None] | None = None,
    outs: Mapping[str, datetime] | None = None,
    sheriff_discussion: bool = True,
) -> list[InquiryDay]:
    """Every day with an inquiry thread, in order, as of ``as_of``.

    ``sheriffs`` (day → sheriff) and ``outs`` (player → when out) default to the derivation's
    (``pipeline.derive.derive``), which knows the engine's hand-overs. Without
    ``sheriff_discussion`` the discussion threads are not read for the sheriff's posts (the
    conduct flags have them: ``bansha tally``).
    """
    rules = inquiry_rules(game)
    secrets = load_secrets(game)
    if sheriffs is None or outs is None:
        d = derive(game, store, as_of=as_of)
        if sheriffs is None:
            sheriffs = {n: r.sheriff for n, r in d.days.items()}
        if outs is None:
            outs = {p: at for p, (at, _why) in d.outs.items()}
    roster = Roster(game, substitutions(store))
    guessed: set[int] = set()
    result: list[InquiryDay] = []
    for day in sorted(game.days, key=lambda x: x.day):
        if day.inquiry is None or as_of < day.opens:
            continue
        one = _inquiry_day(
            game,
            store,
            day,
            roster,
            rules,
            secrets,
            sheriffs.get(day.day),
            outs,
            guessed,
            as_of,
            sheriff_discussion=sheriff_discussion,
        )
        guessed |= set(one.guessed)
        result.append(one)
    return result


def inquiries_of(game: Game, store: Store, d: Derivation) -> dict[int, InquiryDay] | str:
    """What ``bansha tally`` / ``why`` and the console's day page show of the inquiry threads:
    each day's, read with ``d``'s sheriffs and outs (the sheriff's discussion posts are left to
    the conduct flags), or why they cannot be read (Chinese)."""
    try:
        days = inquiry_days(
            game,
            store,
            as_of=d.as_of,
            sheriffs={n: r.sheriff for n, r in d.days.items()},
            outs={p: at for p, (at, _why) in d.outs.items()},
            sheriff_discussion=False,
        )
    except InquiryError as exc:
        return f"询问帖无法读取：{exc}"
    return {x.day: x for x in days}


def inquiry_rows(
    inquiries: Mapping[int, InquiryDay] | str,
    d: Derivation,
    day: int,
    *,
    player: str | None = None,
    problems_only: bool = False,
) -> list[tuple[str, str]]:
    """Day ``day``'s :meth:`InquiryDay.director_lines` (``(text, link)``), without what the
    day's conduct flags already list; [] for a day without an inquiry thread."""
    if isinstance(inquiries, str):
        return [(inquiries, "")] if d.game.day(day).inquiry is not None else []
    one = inquiries.get(day)
    if one is None:
        return []
    listed = frozenset(e.pid for f in d.flags if f.day == day for e in f.evidence)
    return one.director_lines(
        d.game.game.tz, player=player, elsewhere=listed, problems_only=problems_only
    )


@dataclass
class _Pass:
    """What one pass over a day's inquiry thread gathers, post by post: the question limit,
    the sheriff's answers and the guesses depend on what came before."""

    guessed: set[int]  # every position guessed correctly so far
    flags: list[InquiryFlag] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)  # questions asked per player
    new: list[int] = field(default_factory=list)  # positions first guessed this day
    questions: list[dict[str, Any]] = field(default_factory=list)
    by_floor: dict[int, int] = field(default_factory=dict)
    answers: dict[int, tuple[Answer | None, int]] = field(default_factory=dict)
    posted: set[int] = field(default_factory=set)  # questions the director's posts answered


def _inquiry_day(
    game: Game,
    store: Store,
    day: Day,
    roster: Roster,
    rules: InquiryRules,
    secrets: Secrets,
    sheriff: str | None,
    outs: Mapping[str, datetime],
    guessed_before: set[int],
    as_of: datetime,
    *,
    sheriff_discussion: bool = True,
) -> InquiryDay:
    """One day's inquiry thread read in post order."""
    assert day.inquiry is not None
    tid = day.inquiry
    close = day.closes - rules.close_before
    run = _Pass(guessed=set(guessed_before))
    for post in _visible(store.posts(tid)):
        at = post.posted_at
        assert at is not None
        if roster.is_director(post):
            # the director's answer posts link each question (inquiry_answers.j2)
            run.posted |= {int(m) for m in _LINKED_PID.findall(post.message_html)}
            continue
        if not (day.opens <= at <= day.closes):
            continue
        who = roster.player_of(post)
        if who is None:
            continue
        url = _url(game, post)
        if who == sheriff:
            _sheriff_post(post, who, url, at, close, rules, run)
            continue
        if post.floor is not None:
            run.by_floor[post.floor] = post.pid
        _question(run, post, who, url, close, outs, rules, secrets)
    items = _items(run.questions, run.answers, run.posted)
    flags = run.flags
    if sheriff_discussion and sheriff is not None and day.discussion is not None:
        flags += _sheriff_in_discussion(game, store, day, roster, sheriff, rules)
    log.debug("inquiry day %s: %d posts, %d flags", day.day, len(items), len(flags))
    return InquiryDay(
        day=day.day,
        tid=tid,
        sheriff=sheriff,
        closes_at=close,
        closed=as_of >= close,
        items=items,
        flags=tuple(flags),
        guessed=tuple(run.new),
        guessed_before=tuple(sorted(guessed_before)),
        guess_skill=rules.guess_skill,
    )


def _question(
    run: _Pass,
    post: Post,
    who: str,
    url: str,
    close: datetime,
    outs: Mapping[str, datetime],
    rules: InquiryRules,
    secrets: Secrets,
) -> None:
    """A player's inquiry post: taken or refused (a flag), its guesses checked."""
    at = post.posted_at
    assert at is not None
    inq = parse_inquiry(post.text, word_count=rules.words)
    before = run.used.get(who, 0)
    notes = list(inq.notes)
    refused = _refusal(who, post, url, at, close, before, inq.questions, outs, rules)
    accepted = refused is None
    if refused is not None:
        run.flags.append(refused)
    else:
        run.used[who] = before + inq.questions
    if inq.problem:
        notes.append(inq.problem)
    checked = _check_guesses(inq.guesses, rules, secrets, accepted, run.guessed, run.new)
    run.questions.append(
        {
            "player": who,
            "post": post,
            "kind": inq.kind,
            "questions": inq.questions,
            "before": before,
            "accepted": accepted,
            "guesses": tuple(checked),
            "url": url,
            "notes": tuple(notes),
        }
    )


def _refusal(
    who: str,
    post: Post,
    url: str,
    at: datetime,
    close: datetime,
    before: int,
    questions: int,
    outs: Mapping[str, datetime],
    rules: InquiryRules,
) -> InquiryFlag | None:
    """Why a player's inquiry is not taken (out, after the close, over the day's limit), or
    None when it is."""
    if who in outs and outs[who] <= at:
        return InquiryFlag(who, post.pid, url, "已出局的角色在询问帖提问，不予受理", rules.out_rule)
    if at >= close:
        return InquiryFlag(
            who,
            post.pid,
            url,
            f"询问帖已于{close:%H:%M}关闭（讨论日结束前{zh_span(rules.close_before)}），"
            "逾期的询问不再受理",
            rules.close_rule,
        )
    if before + questions > rules.daily_limit:
        return InquiryFlag(
            who,
            post.pid,
            url,
            f"当天已询问{before}次，本帖{questions}问，超出每天{rules.daily_limit}次，不予回答",
            rules.limit_rule,
        )
    return None


def _check_guesses(
    guesses: Sequence[Guess],
    rules: InquiryRules,
    secrets: Secrets,
    accepted: bool,
    guessed: set[int],
    new: list[int],
) -> tuple[CheckedGuess, ...]:
    """A post's guesses checked against the secret words; a first correct guess of an accepted
    inquiry is added to ``guessed`` and ``new``."""
    checked: list[CheckedGuess] = []
    for g in guesses:
        if not 1 <= g.index <= rules.words:
            checked.append(CheckedGuess(g.index, g.word_raw, None, False, g.text))
            continue
        ok = secrets.correct(g.index, g.word)
        first = ok and accepted and g.index not in guessed
        if first:
            guessed.add(g.index)
            new.append(g.index)
        checked.append(CheckedGuess(g.index, g.word_raw, ok, first, g.text))
    return tuple(checked)


def _items(
    drafts: Sequence[dict[str, Any]],
    answers: Mapping[int, tuple[Answer | None, int]],
    posted: set[int],
) -> tuple[InquiryItem, ...]:
    """The day's inquiries with the sheriff's answers and whether the director posted them."""
    return tuple(
        InquiryItem(
            player=d["player"],
            pid=d["post"].pid,
            floor=d["post"].floor,
            at=d["post"].posted_at,
            kind=d["kind"],
            questions=d["questions"],
            used_before=d["before"],
            accepted=d["accepted"],
            guesses=d["guesses"],
            answer=answers.get(d["post"].pid, (None, 0))[0],
            answer_pid=answers.get(d["post"].pid, (None, None))[1],
            url=d["url"],
            notes=d["notes"],
            director_posted=d["post"].pid in posted,
        )
        for d in drafts
    )


def _sheriff_in_discussion(
    game: Game, store: Store, day: Day, roster: Roster, sheriff: str, rules: InquiryRules
) -> list[InquiryFlag]:
    """The sheriff's posts in the day's discussion thread (咒语反噬)."""
    flags: list[InquiryFlag] = []
    assert day.discussion is not None
    for post in _visible(store.posts(day.discussion)):
        at = post.posted_at
        assert at is not None
        if roster.player_of(post) == sheriff and day.opens <= at <= day.closes:
            flags.append(
                InquiryFlag(
                    sheriff,
                    post.pid,
                    _url(game, post),
                    "警长不能在讨论帖发言（咒语反噬）",
                    rules.sheriff_discussion_rule,
                )
            )
    return flags


def _named_question(run: _Pass, ref: str) -> int | None:
    """The question a reference names: ``5楼`` its floor; ``@饺子`` that player's earliest
    question not answered yet (docs/rulings.md 询问与猜词)."""
    if ref.startswith("@"):
        name = ref[1:].strip()
        for q in run.questions:
            pid = q["post"].pid
            if q["player"] == name and pid not in run.answers:
                return int(pid)
        return None
    digits = "".join(c for c in ref if c.isdigit())
    return run.by_floor.get(int(digits)) if digits else None


def _sheriff_post(
    post: Post,
    who: str,
    url: str,
    at: datetime,
    close: datetime,
    rules: InquiryRules,
    run: _Pass,
) -> None:
    """The sheriff answers only 是/否/不知道, before the close, never asks (zhenyan.txt:109)."""
    flags, answers = run.flags, run.answers
    refused = {int(q["post"].pid) for q in run.questions if not q["accepted"]}
    asks = sheriff_asks(post.text)
    if asks is not None:
        text = f"警长不能在询问帖{asks}（咒语反噬）" + ("，猜词不计" if asks == "猜词" else "")
        flags.append(InquiryFlag(who, post.pid, url, text, rules.sheriff_guess_rule))
        return
    if at >= close:
        flags.append(
            InquiryFlag(who, post.pid, url, "询问帖关闭后警长不允许继续回答", rules.close_rule)
        )
        return
    for part in split_answers(post.text, post.quoted_pids):
        if part.problem:
            flags.append(InquiryFlag(who, post.pid, url, part.problem, rules.sheriff_answer_rule))
        target = part.pid
        if target is None and part.ref:
            target = _named_question(run, part.ref)
        if part.answer is not None and target is None and not part.problem:
            text = "无法确定此回答对应哪个问题（没有引用问题，写明的楼层或名字也找不到问题）"
            flags.append(InquiryFlag(who, post.pid, url, text, rules.sheriff_answer_rule))
        if target is not None and target in refused:
            # zhenyan.txt:147 每名角色一天只能询问3次 — a question not taken is not answered
            text = "警长回答了不予受理的询问（超出每天次数、询问帖关闭后或已出局）"
            flags.append(InquiryFlag(who, post.pid, url, text, rules.limit_rule))
        if target is not None and part.answer is not None and target not in answers:
            answers[target] = (part.answer, post.pid)


# --------------------------------------------------------------------------- drafts


def guess_actions(days: Sequence[InquiryDay]) -> dict[int, list[Action]]:
    """The engine's day actions (``猜中`` by the guesser, choice = the position) per day, for
    the win check (zhenyan.txt:120, 126, 127); the CLI form is
    ``bansha day add GAME.toml --day N --actor 汤圆 --skill 猜中 --choice 1``.

    Only the first correct guess of a word by a player whose inquiry was accepted (living, not
    the sheriff — whose posts are answers, zhenyan.txt:109 — within the day's 3 and before the
    inquiry close); ``at`` is the post's time."""
    result: dict[int, list[Action]] = {}
    for d in days:
        for item in d.items:
            for g in item.guesses:
                if g.first:
                    result.setdefault(d.day, []).append(
                        Action(
                            actor=item.player,
                            skill=d.guess_skill,
                            choice=str(g.index),
                            at=item.at.isoformat(),
                            ref=f"询问帖 pid {item.pid}",
                        )
                    )
    return result


def day_guess_actions(
    game: Game,
    store: Store,
    day: int,
    *,
    as_of: datetime,
    recorded: Sequence[Action] = (),
    sheriffs: Mapping[int, str | None] | None = None,
    outs: Mapping[str, datetime] | None = None,
) -> list[Action]:
    """The ``猜中`` actions bansha reads in ``day``'s inquiry thread, for the engine's day
    (``bansha day resolve``): a correct guess counts without the director retyping it.

    A guess the director also recorded by hand (``recorded``: the day's journal actions; the
    same guesser and word, or the word recorded as ``导演``'s) is left out, so it counts exactly
    once; [] for a day without an inquiry thread. ``sheriffs``/``outs`` as in
    :func:`inquiry_days`.
    """
    if game.day(day).inquiry is None:
        return []
    days = inquiry_days(game, store, as_of=as_of, sheriffs=sheriffs, outs=outs)
    rs = get_ruleset(game.game.ruleset)
    skill = inquiry_rules(game).guess_skill
    typed = {
        (a.actor, rs.guess_position(a.choice))
        for a in recorded
        if rs.canonical_skill(a.skill) == skill
    }
    anyone = {position for actor, position in typed if actor == DIRECTOR_ACTOR}
    read = guess_actions(days).get(day, [])

    def typed_too(a: Action) -> bool:
        position = rs.guess_position(a.choice)
        return (a.actor, position) in typed or position in anyone

    kept = [a for a in read if not typed_too(a)]
    log.debug(
        "inquiry day %s: %d guesses read, %d already recorded",
        day,
        len(read),
        len(read) - len(kept),
    )
    return kept
