"""Nothing stale goes out: a draft made from the game's state holds only while that state is the
one it was drafted from.

Every draft of a state kind (running tally, result, day-open post, cards, reminder, inquiry
answers) keeps the value of the drafts' input counter it was last drafted — or found unchanged —
at. A new post, a director's record or its undo, a night or day resolved moves the counter on.
Until the next drafting pass (``bansha drafts make`` or the cycle) such a draft cannot be approved
and is not sent; the pass then makes it again (new text: a new draft), finds it unchanged (it
holds again), or — when its moment has passed and it is no longer drafted — sets it aside.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from parsers.reply import ReplyOutcome, draft_fingerprint
from pipeline.cli import cli
from pipeline.discuz.poster import PostError, Sent, UncertainSend
from pipeline.drafts import edit, get_draft, list_drafts
from pipeline.drafts.publish import publish_approved
from pipeline.game.gamefile import load_game
from pipeline.store import open_store

DAY_OPEN_2 = 6  # the demo's day-2 opening, drafted at day 2's opening, before night 1 resolved
FIRST_RESULT = 12  # the demo's day-1 sheriff result, waiting for approval at the demo's end


def run(*args: str, code: int | None = 0) -> str:
    """``bansha ARGS`` in this process; ``code``: the exit code expected (None: any)."""
    result = CliRunner().invoke(cli, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert code is None or result.exit_code == code, result.output
    return result.output


@pytest.fixture(scope="module")
def demo_made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    run("demo", "--db", str(folder / "demo.db"))
    return folder


@pytest.fixture
def demo(demo_made: Path, tmp_path: Path) -> Path:
    """A fresh copy of the demo's folder (game file, store) for each test."""
    folder = tmp_path / "demo"
    shutil.copytree(demo_made, folder, ignore=shutil.ignore_patterns("*.lock"))
    return folder


def game(folder: Path) -> list[str]:
    return [str(folder / "demo.toml"), "--db", str(folder / "demo.db")]


def test_the_day_open_post_drafted_before_the_night_was_resolved_never_goes_out(demo):
    """The demo drafts day 2's opening at 12-01 10:00 ("平安夜，无人出局": night 1 not resolved
    yet); then `night resolve` puts two first identities out. The opening's moment has passed,
    so it is no longer drafted — it is set aside, saying why, and cannot be approved."""
    state = run("state", *game(demo))
    assert "烧卖" in state and "饺子" in state
    store = open_store(demo / "demo.db")
    try:
        opening = get_draft(store, DAY_OPEN_2)
        assert opening.body.startswith("〔第1晚没有记录：")  # the engine was not used yet
        assert "平安夜，无人出局" in opening.body
        assert opening.state.value == "superseded"
        live = [d for d in list_drafts(store) if d.kind == "day_open"]
        assert all("平安夜" not in d.body for d in live)
    finally:
        store.close()
    shown = run("drafts", "show", *game(demo), str(DAY_OPEN_2))
    assert "起草之后游戏的记录已经变了" in shown
    out = run("drafts", "approve", *game(demo), str(DAY_OPEN_2), code=1)
    assert "不能批准" in out


def test_a_director_record_holds_every_waiting_draft_until_it_is_drafted_again(demo):
    """A card given after the sheriff result was drafted: approving the result is refused (it
    may no longer say what is so) until `bansha drafts make` drafts it again; unchanged, it then
    holds and is approved."""
    run("card", "give", *game(demo), "--player", "汤圆", "--colour", "蓝", "--why", "场外")
    out = run("drafts", "approve", *game(demo), str(FIRST_RESULT), code=1)
    assert "起草之后，游戏的记录已经变了" in out
    assert "bansha drafts make" in out
    run("drafts", "make", *game(demo))
    store = open_store(demo / "demo.db")
    try:
        result = get_draft(store, FIRST_RESULT)
    finally:
        store.close()
    if result.state.value == "pending":  # the result does not print cards: it held
        run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    else:  # drafted anew: the new draft is the one to approve
        assert result.state.value == "superseded"


def test_an_approved_draft_whose_inputs_moved_on_is_not_sent(demo):
    """Approved, then the director gives a card: `bansha publish` sends nothing of it (no
    attempt is recorded) and says why; the forum is never asked."""
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    run("card", "give", *game(demo), "--player", "汤圆", "--colour", "蓝", "--why", "场外")
    out = run("publish", *game(demo), "--id", str(FIRST_RESULT), code=None)
    assert "没有发出" in out and "起草之后" in out
    store = open_store(demo / "demo.db")
    try:
        attempts = store.db.execute(
            "SELECT COUNT(*) FROM post_attempts WHERE draft_id = ?", [FIRST_RESULT]
        ).fetchone()[0]
        assert attempts == 0
        assert get_draft(store, FIRST_RESULT).state.value == "approved"
    finally:
        store.close()


def test_a_day_open_post_drafted_while_its_night_waits_says_so_and_waits(demo):
    """A director who records night 1's actions and has not resolved the night yet: day 2's
    opening, drafted at the opening, says in its first line that night 1 is not resolved and
    cannot be approved (it would say 平安夜); resolved, it is drafted again with the night's
    outs and can be approved."""
    store = open_store(demo / "demo.db")
    try:
        with store.atomic():  # back to before `night resolve --night 1` (its actions recorded)
            later = "SELECT phase FROM engine_snapshots WHERE seq >= 3"  # night 1 = 2·1+1
            store.db.execute(f"DELETE FROM engine_events WHERE phase IN ({later})")
            store.db.execute("DELETE FROM engine_snapshots WHERE seq >= 3")
    finally:
        store.close()
    opens = load_game(demo / "demo.toml", env={}, check_login=False).day(2).opens
    at = (opens.replace(minute=5)).isoformat()
    run("drafts", "make", *game(demo), "--as-of", at)
    store = open_store(demo / "demo.db")
    try:
        waiting = [d for d in list_drafts(store) if d.kind == "day_open" and d.day == 2]
    finally:
        store.close()
    assert len(waiting) == 1
    first_line = waiting[0].body.splitlines()[0]
    assert first_line == "〔第1晚尚未结算：结算后这份开门公示会重新起草；结算之前不能批准〕"
    out = run("drafts", "approve", *game(demo), str(waiting[0].id), code=1)
    assert "前一晚的行动还没有结算" in out
    run("night", "resolve", *game(demo), "--night", "1")
    run("drafts", "make", *game(demo), "--as-of", at)
    store = open_store(demo / "demo.db")
    try:
        live = [d for d in list_drafts(store) if d.kind == "day_open" and d.day == 2]
    finally:
        store.close()
    assert len(live) == 1 and "尚未结算" not in live[0].body
    assert "烧卖" in live[0].body or "第一身份" in live[0].body
    run("drafts", "approve", *game(demo), str(live[0].id))


def _without_the_engine(folder: Path) -> None:
    """The demo as a director who never used the engine would have it: no night recorded."""
    store = open_store(folder / "demo.db")
    try:
        with store.atomic():
            for table in ("engine_events", "engine_snapshots", "journal_actions"):
                store.db.execute(f"DELETE FROM {table}")
    finally:
        store.close()


def _day_2_openings(folder: Path) -> list:
    store = open_store(folder / "demo.db")
    try:
        return [d for d in list_drafts(store) if d.kind == "day_open" and d.day == 2]
    finally:
        store.close()


def test_a_day_open_post_does_not_say_平安夜_of_a_night_bansha_was_never_told_of(demo):
    """No night resolved by the engine and no out recorded between day 1's close and day 2's
    opening: bansha cannot know the night was quiet, so the opening's first line says so and
    it cannot be approved; recorded with `bansha player out`, it is drafted again listing the
    out, without the line, and can be approved."""
    _without_the_engine(demo)
    g = load_game(demo / "demo.toml", env={}, check_login=False)
    at = g.day(2).opens.replace(minute=5).isoformat()
    run("drafts", "make", *game(demo), "--as-of", at)
    [waiting] = _day_2_openings(demo)
    first, rest = waiting.body.split("\n", 1)
    assert first == (
        "〔第1晚没有记录：这一晚没有结算，也没有出局记录。"
        "有人出局请先记录，这份公示会重新起草；确实无人出局，删掉这一行再批准〕"
    )
    assert "平安夜，无人出局" in rest  # what the line keeps from going out unchecked
    out = run("drafts", "approve", *game(demo), str(waiting.id), code=1)
    assert "不知道它前一晚的结果" in out and "bansha player out" in out
    night = (g.day(1).closes + timedelta(hours=5)).isoformat()
    run("player", "out", *game(demo), "--player", "汤圆", "--at", night, "--cause", "第1晚被刀")
    run("drafts", "make", *game(demo), "--as-of", at)
    [live] = _day_2_openings(demo)
    assert "没有记录" not in live.body and "平安夜" not in live.body
    assert "汤圆（第1晚被刀）" in live.body
    run("drafts", "approve", *game(demo), str(live.id))


def test_a_quiet_night_the_engine_never_saw_goes_out_once_the_director_deletes_the_line(demo):
    """确实无人出局: the director deletes the first line (bansha drafts edit) and approves the
    opening as it then reads."""
    _without_the_engine(demo)
    g = load_game(demo / "demo.toml", env={}, check_login=False)
    run("drafts", "make", *game(demo), "--as-of", g.day(2).opens.replace(minute=5).isoformat())
    [waiting] = _day_2_openings(demo)
    store = open_store(demo / "demo.db")
    try:
        edited = edit(store, waiting.id, waiting.body.split("\n", 1)[1], g.day(2).opens)
    finally:
        store.close()
    assert edited.body.startswith("[b]【第2天 开门】[/b]")
    run("drafts", "approve", *game(demo), str(waiting.id))


class _FloodForum:
    """A forum that makes the sender wait before it takes a reply (its 两次发表间隔 flood
    interval); ``during`` is what the director does meanwhile, from another window."""

    def __init__(self, during) -> None:
        self.during = during
        self.stored: list[str] = []

    def session(self, tid: int) -> None:
        return None

    def check_encodable(self, body: str) -> None:
        return None

    def post_url(self, tid: int, pid: int) -> str:
        return f"forum.php?mod=redirect&goto=findpost&ptid={tid}&pid={pid}"

    def reply(self, tid: int, body: str, *, guard=None) -> Sent:
        self.during()  # the wait
        if guard is not None:
            guard()  # the last check, right before the POST
        self.stored.append(body)
        return Sent(ReplyOutcome.POSTED, tid, 777001, "回复发布成功")


def test_a_record_made_while_the_sender_waits_for_the_forum_keeps_the_draft_from_going(demo):
    """The result is approved and the run starts sending; while the forum makes it wait, the
    director gives a card. The check right before the POST sees the record: nothing reaches
    the forum, the draft stays approved but unsent, and the run says why."""
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))

    def record() -> None:
        run("card", "give", *game(demo), "--player", "汤圆", "--colour", "蓝", "--why", "场外")

    forum = _FloodForum(record)
    g = load_game(demo / "demo.toml", env={}, check_login=False)
    store = open_store(demo / "demo.db")
    try:
        results = publish_approved(
            store, g, forum, now=g.day(2).closes + timedelta(hours=1), ids=[FIRST_RESULT]
        )
        state = get_draft(store, FIRST_RESULT).state.value
    finally:
        store.close()
    assert forum.stored == []
    [result] = results
    assert result.status == "skipped" and "起草之后，游戏的记录已经变了" in result.message
    assert state == "approved"


class _LostAnswerForum(_FloodForum):
    """A forum that stores a reply but whose answer is lost (the network drops), and whose
    thread pages fail (500) the first time bansha looks right after."""

    def __init__(self, *, stores: bool) -> None:
        super().__init__(lambda: None)
        self.stores = stores
        self.looks = 0

    def reply(self, tid: int, body: str, *, guard=None) -> Sent:
        if guard is not None:
            guard()
        if self.stores:
            self.stored.append(body)
        raise UncertainSend("网络中断，论坛的回答没有收到")

    def find_post(self, tid: int, fingerprint: str, **_: object):
        self.looks += 1
        if self.looks == 1:
            raise PostError("论坛暂时无法访问（HTTP 500）")
        for i, body in enumerate(self.stored):
            if draft_fingerprint(body) == fingerprint:
                return type("Found", (), {"pid": 777100 + i})()
        return None


def _send_lost_then_change(demo: Path, forum: _LostAnswerForum) -> tuple:
    """The sheriff result approved and sent, its answer lost; then the director proxies a
    vote for 烧卖 (who did not vote on day 1), which changes the result's counts."""
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    g = load_game(demo / "demo.toml", env={}, check_login=False)
    after = g.day(2).closes + timedelta(hours=1)
    store = open_store(demo / "demo.db")
    try:
        [first] = publish_approved(store, g, forum, now=after, ids=[FIRST_RESULT])
    finally:
        store.close()
    assert first.status == "uncertain"
    at = (g.day(1).closes - timedelta(hours=2)).isoformat()
    proxy = ["--day", "1", "--voter", "烧卖", "--target", "馄饨", "--at", at]
    run("vote", "proxy", *game(demo), *proxy)
    return g, after


def _results(folder: Path) -> list:
    store = open_store(folder / "demo.db")
    try:
        result = get_draft(store, FIRST_RESULT)
        drafts = list_drafts(store, include_superseded=True)
        return [d for d in drafts if d.key == result.key and d.id >= FIRST_RESULT]
    finally:
        store.close()


def test_a_result_that_may_be_on_the_forum_is_not_drafted_again_until_it_is_looked_for(demo):
    """Sent, the answer lost, and the thread could not be read right after: the result may be
    in the thread. A record then changes its counts. Drafting again does not replace it (a
    second copy could go out); the next publish finds it in the thread and records it posted.
    The thread holds one copy; the changed counts are a new draft for the director to judge."""
    forum = _LostAnswerForum(stores=True)
    g, after = _send_lost_then_change(demo, forum)
    run("drafts", "make", *game(demo), "--as-of", after.isoformat())
    assert [(d.id, d.state.value) for d in _results(demo)] == [(FIRST_RESULT, "approved")]
    store = open_store(demo / "demo.db")
    try:
        [again] = publish_approved(store, g, forum, now=after, ids=[FIRST_RESULT])
    finally:
        store.close()
    assert again.status == "found" and len(forum.stored) == 1
    run("drafts", "make", *game(demo), "--as-of", after.isoformat())
    states = [(d.id, d.state.value) for d in _results(demo)]
    assert states[0] == (FIRST_RESULT, "posted")
    assert [s for _i, s in states[1:]] == ["pending"]  # the new counts wait for the director
    assert len(forum.stored) == 1
    # the director is told that approving it posts a second time (a correction)
    new_id = str(states[1][0])
    again_note = f"注意：同一内容的第 {FIRST_RESULT} 号草稿已于"
    shown = run("drafts", "show", *game(demo), new_id)
    assert again_note in shown and "批准这一份会在帖子里再发一帖，作为更正" in shown
    assert again_note in run("drafts", "approve", *game(demo), new_id)


def test_a_result_that_never_reached_the_forum_is_not_resent_once_its_counts_changed(demo):
    """The same, but the forum never stored it: the next publish looks, does not find it, and
    does not send the old counts; drafting then replaces it with the new counts."""
    forum = _LostAnswerForum(stores=False)
    g, after = _send_lost_then_change(demo, forum)
    store = open_store(demo / "demo.db")
    try:
        [again] = publish_approved(store, g, forum, now=after, ids=[FIRST_RESULT])
    finally:
        store.close()
    assert again.status == "skipped" and "帖子中没有找到它；没有重发" in again.message
    assert forum.stored == []
    run("drafts", "make", *game(demo), "--as-of", after.isoformat())
    states = [(d.id, d.state.value) for d in _results(demo)]
    assert states[0] == (FIRST_RESULT, "superseded")
    assert [s for _i, s in states[1:]] == ["pending"]


# --------------------------------------------------------------------------- undoing a decision


def _state(folder: Path, draft_id: int) -> str:
    store = open_store(folder / "demo.db")
    try:
        return get_draft(store, draft_id).state.value
    finally:
        store.close()


def test_an_approval_taken_back_is_pending_again_with_an_audit_line(demo):
    """批准早了: `bansha undo draft` puts the approved result back to pending (it is not sent
    until approved again), writes the reason in its history and in the undo audit."""
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    listed = run("undo", "list", *game(demo))
    assert f"draft {FIRST_RESULT}　第 {FIRST_RESULT} 号草稿（第1天 投票结果）已批准" in listed
    out = run("undo", "draft", *game(demo), str(FIRST_RESULT), "--why", "批准早了，还要改")
    assert f"第 {FIRST_RESULT} 号草稿（第1天 投票结果）回到待批准" in out
    assert _state(demo, FIRST_RESULT) == "pending"
    shown = run("drafts", "show", *game(demo), str(FIRST_RESULT))
    assert "命令行撤销批准：批准早了，还要改" in shown
    audit = run("undo", "list", *game(demo), "--all")
    assert "的批准（理由：批准早了，还要改）" in audit
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    assert _state(demo, FIRST_RESULT) == "approved"


def test_a_rejection_taken_back_is_pending_again_but_not_one_with_a_newer_draft(demo):
    run("drafts", "reject", *game(demo), str(FIRST_RESULT), "--why", "看错了")
    out = run("undo", "draft", *game(demo), str(FIRST_RESULT), "--why", "驳回错了")
    assert "回到待批准" in out and _state(demo, FIRST_RESULT) == "pending"
    store = open_store(demo / "demo.db")
    try:
        older = [
            d for d in list_drafts(store, include_superseded=True) if d.state.value == "superseded"
        ]
    finally:
        store.close()
    assert older  # a draft superseded by a newer one has no decision to take back
    out = run("undo", "draft", *game(demo), str(older[0].id), "--why", "x", code=1)
    assert "没有可以撤销的批准或驳回" in out


def test_a_posted_draft_or_one_that_may_be_on_the_forum_is_not_taken_back(demo):
    store = open_store(demo / "demo.db")
    try:
        posted = next(d for d in list_drafts(store) if d.state.value == "posted")
    finally:
        store.close()
    out = run("undo", "draft", *game(demo), str(posted.id), "--why", "发错了", code=1)
    assert "已经发出，不能撤销" in out
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    store = open_store(demo / "demo.db")
    try:
        body_hash = get_draft(store, FIRST_RESULT).body_hash
        store.insert(  # a send whose answer never came
            "post_attempts",
            [
                {
                    "draft_id": FIRST_RESULT,
                    "body_hash": body_hash,
                    "started_at": "2026-12-03T09:00:00+08:00",
                }
            ],
        )
    finally:
        store.close()
    out = run("undo", "draft", *game(demo), str(FIRST_RESULT), "--why", "批准早了", code=1)
    assert "可能已经发出" in out and _state(demo, FIRST_RESULT) == "approved"


def test_a_game_file_edited_after_the_approval_keeps_the_draft_from_going_until_drafted_again(
    demo,
):
    """The result is approved; then the director adds a signature to the game file (any edit
    that can change what a draft says: a close moved, the roster …). `bansha publish` sends
    nothing of it and says why; `bansha drafts make` drafts it anew, signed."""
    run("drafts", "approve", *game(demo), str(FIRST_RESULT))
    path = demo / "demo.toml"
    text = path.read_text("utf-8")
    path.write_text(text + '\n[drafts]\ndirector_signature = "导演组"\n', "utf-8")
    g = load_game(path, env={}, check_login=False)
    forum = _FloodForum(lambda: None)
    store = open_store(demo / "demo.db")
    try:
        [result] = publish_approved(store, g, forum, now=g.day(2).closes, ids=[FIRST_RESULT])
    finally:
        store.close()
    assert forum.stored == []
    assert result.status == "waiting" and "游戏文件的修改" in result.message
    run("drafts", "make", *game(demo), "--as-of", g.day(2).closes.isoformat())
    [signed] = [d for d in _results(demo) if d.id != FIRST_RESULT]
    assert signed.body.endswith("导演组") and signed.state.value == "pending"
    assert _state(demo, FIRST_RESULT) == "superseded"


def test_bansha_opening_a_thread_is_not_an_edit_of_the_game_file(demo):
    """The threads bansha opens fill the days' tids: not a change of what drafts are made of."""
    from pipeline.drafts.inputs import drafts_game_identity
    from pipeline.game.gamefile import ThreadRole
    from pipeline.game.threads import OpenedThread, with_opened

    path = demo / "demo.toml"  # day 2's vote thread not written: bansha is to open it
    path.write_text(path.read_text("utf-8").replace("vote = 2012", "# vote = 2012"), "utf-8")
    g = load_game(path, env={}, check_login=False)
    opened = with_opened(g, [OpenedThread(2, ThreadRole.VOTE, 4242)])
    assert opened.day(2).vote == 4242 and g.day(2).vote is None
    assert drafts_game_identity(opened) == drafts_game_identity(g)
