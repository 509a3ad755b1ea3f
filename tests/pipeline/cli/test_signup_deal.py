"""``bansha signup`` from a 报名帖 in the simulator, then ``bansha deal``, its commitment, the
reveal and the check any player can make (sha256sum, ``bansha deal --verify``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner

from engine.deal import SeedStream, deal, player_count
from engine.rulesets import get_ruleset
from pipeline.cli.forum_life import (
    DEAL_COMMIT,
    DEAL_REVEAL,
    META_COMMITMENT,
    META_SALT,
    META_SEED,
    META_TEXT,
    SUBSTITUTES_BEGIN,
    deal_cmd,
    signup,
    write_deal,
)
from pipeline.drafts import list_drafts
from pipeline.game.gamefile import load_game, parse_game
from pipeline.sim.simulator import ForumSim, SimClock, SimServer
from pipeline.store import open_store

ROOT = Path(__file__).resolve().parents[3]
TZ = ZoneInfo("Asia/Shanghai")
T0 = datetime(2026, 11, 28, 20, 0, tzinfo=TZ)
TID = 900
DIRECTOR = "[M135]导演"
USERS = {
    DIRECTOR: 1,
    **{f"玩家{i:02d}": 100 + i for i in range(1, 17)},
    "路人": 300,
    "老玩家": 99,
}

GAME = """# 测试游戏：导演的注释
[game]
id = "m135-signup"
title = "[M135]测试"
ruleset = "m135"
timezone = "Asia/Shanghai"

[forum]
base_url = "{base}"
min_interval_s = 0.0

[director]
names = ["[M135]导演"]
uids = [1]

# 玩家：导演写的说明
[[players]]
name = "老玩家"   # 导演手写：QQ 上报的名
uid = 99
aliases = ["老"]

[[players]]
name = "玩家2"
uid = 102
aliases = ["二号"]  # 别名

# 每天的帖子
[[days]]
day = 1
opens = 2026-12-01T09:00:00+08:00
closes = 2026-12-02T21:00:00+08:00
"""


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def signup_thread(sim: ForumSim) -> dict[str, int]:
    """A 报名帖: 14 sign-ups (报名 / +1 / 报名参加), a quoted one, an onlooker, a quit, a
    duplicate and the director's own posts."""
    pids: dict[str, int] = {}
    sim.add_thread(TID, "[M135]让子弹飞 报名帖", DIRECTOR, "报名帖：回复“报名”即可", T0)
    words = ["报名", "+1", "报名参加"]
    for i in range(1, 15):
        name = f"玩家{i:02d}"
        pids[name] = sim.add_post(TID, name, words[i % 3], at(i))
    pids["dup"] = sim.add_post(TID, "玩家01", "报名报名", at(15))
    pids["onlooker"] = sim.add_post(
        TID, "路人", "楼上好积极，围观", at(16), quote_pid=pids["玩家01"]
    )
    pids["quit"] = sim.add_post(TID, "玩家03", "不好意思，退出报名", at(17))
    pids["director"] = sim.add_post(TID, DIRECTOR, "报名截止，谢谢大家", at(30))
    return pids


@pytest.fixture
def forum(tmp_path):
    clock = SimClock(at(24 * 60))
    sim = ForumSim(users=USERS, clock=clock, floodctrl_s=0)
    pids = signup_thread(sim)
    with SimServer(sim) as server:
        game = tmp_path / "game.toml"
        game.write_text(GAME.format(base=server.base_url), encoding="utf-8")
        env = {"BANSHA_DB": str(tmp_path / "game.db"), "BANSHA_GAME": None}
        yield sim, clock, game, env, pids


def run(command, env, *args, code=0):
    result = CliRunner().invoke(command, [str(a) for a in args], env=env)
    assert result.exit_code == code, result.output
    return result.output


def players(game: Path) -> list[dict]:
    return tomllib.loads(game.read_text(encoding="utf-8"))["players"]


def test_signup_writes_the_roster_from_the_pages(forum):
    _sim, _clock, game, env, pids = forum
    out = run(signup, env, game, "--thread", TID)
    roster = players(game)
    # 老玩家 never posted: the director's own entry keeps its seat; 玩家2 is 玩家02's uid and
    # keeps its table (aliases) under the name the page shows; the rest follow in sign-up
    # order, 玩家03 quit, and 12 seats leave 玩家13 and 玩家14 as 替补
    assert [(p["name"], p["uid"]) for p in roster] == [
        ("老玩家", 99),
        ("玩家02", 102),
        *((f"玩家{i:02d}", 100 + i) for i in (1, 4, 5, 6, 7, 8, 9, 10, 11, 12)),
    ]
    assert roster[0]["aliases"] == ["老"] and roster[1]["aliases"] == ["二号"]
    text = game.read_text(encoding="utf-8")
    for comment in (
        "# 测试游戏：导演的注释",
        "# 玩家：导演写的说明",
        "# 导演手写：QQ 上报的名",
        "# 别名",
        "# 每天的帖子",
    ):
        assert comment in text
    # the 替补 as a comment block after the last player, before the days
    block = text[text.index(SUBSTITUTES_BEGIN) : text.index("# 每天的帖子")]
    assert "替补 1：玩家13（uid 113；报名 pid" in block and "替补 2：玩家14（uid 114" in block
    assert text.index("uid = 112") < text.index(SUBSTITUTES_BEGIN) < text.index("[[days]]")
    assert "\n\n\n" not in text
    game_loaded = load_game(game, check_login=False)
    assert len(game_loaded.players) == 12
    # what the director checks: the quit, the duplicate, the onlooker, the director's posts
    assert f"玩家03（uid 103）：pid {pids['quit']} 含「退出报名」，取消了 pid" in out
    assert f"pid {pids['dup']} 玩家01" in out and f"重复报名：已按 pid {pids['玩家01']}" in out
    assert f"pid {pids['onlooker']} 路人" in out and "没有报名或退出报名的字样" in out
    assert f"pid {pids['director']} [M135]导演" in out and "导演的帖子" in out
    assert "报名帖正文（楼主）" in out
    assert "导演手写，报名帖中没有他的报名或退出，保留" in out
    assert "名字按网页改为「玩家02」" in out


def test_a_second_run_changes_nothing_and_a_later_quit_promotes_the_first_substitute(forum):
    sim, clock, game, env, _pids = forum
    run(signup, env, game, "--thread", TID)
    before = game.read_text(encoding="utf-8")
    out = run(signup, env, game, "--thread", TID)
    assert "名单没有变化" in out
    assert game.read_text(encoding="utf-8") == before
    # the director writes a card note for 玩家05 by hand; then 玩家05 quits
    text = before.replace('name = "玩家06"\nuid = 106', 'name = "玩家06"\nuid = 106\nsex = "女"')
    game.write_text(text, encoding="utf-8")
    sim.add_post(TID, "玩家05", "临时有事，取消报名", clock() - timedelta(minutes=1))
    out = run(signup, env, game, "--thread", TID)
    roster = players(game)
    names = [p["name"] for p in roster]
    assert "玩家05" not in names and names[-1] == "玩家13"
    assert next(p for p in roster if p["name"] == "玩家06")["sex"] == "女"  # kept
    assert "移出名单：玩家05（uid 105）：退出报名（pid" in out
    assert "替补 1：玩家14（uid 114" in game.read_text(encoding="utf-8")
    assert "玩家13（uid 113；" not in game.read_text(encoding="utf-8")


def test_dry_run_and_the_deadline(forum):
    _sim, _clock, game, env, _pids = forum
    before = game.read_text(encoding="utf-8")
    out = run(signup, env, game, "--thread", TID, "--until", "2026-11-28T20:07:30", "--dry-run")
    assert game.read_text(encoding="utf-8") == before
    assert "（--dry-run：没有改写游戏文件）" in out
    # posts after 20:07:30 (the game's time zone) do not count: 玩家08 … are out, 玩家03 stays in
    assert "报名截止（11-28 20:07）之后发的" in out
    assert "玩家03（uid 103）：新增" in out and "玩家08（uid 108）：新增" not in out


def test_a_file_without_players_gets_them_beside_the_director(forum):
    _sim, _clock, game, env, _pids = forum
    text = game.read_text(encoding="utf-8")
    start, end = text.index("# 玩家：导演写的说明"), text.index("# 每天的帖子")
    game.write_text(text[:start] + text[end:], encoding="utf-8")
    out = run(signup, env, game, "--thread", TID)
    text = game.read_text(encoding="utf-8")
    assert text.index("[director]") < text.index("[[players]]") < text.index("[[days]]")
    assert [p["name"] for p in players(game)][:3] == ["玩家01", "玩家02", "玩家04"]
    assert "已更新：12 名玩家（新增 12" in out


def test_tubian24_sex_from_the_posts_and_what_is_still_missing(tmp_path):
    users = {"[屠边]导演": 1, **{f"p{i:02d}": 100 + i for i in range(1, 25)}}
    clock = SimClock(at(24 * 60))
    sim = ForumSim(users=users, clock=clock, floodctrl_s=0)
    sim.add_thread(TID, "竞拍贴", "[屠边]导演", "报名，可注明性别", T0)
    for i in range(1, 25):
        sim.add_post(TID, f"p{i:02d}", "报名 女" if i == 1 else "报名", at(i))
    with SimServer(sim) as server:
        game = tmp_path / "t.toml"
        text = GAME.format(base=server.base_url)
        text = text.replace('ruleset = "m135"', 'ruleset = "tubian24"').replace(
            '"[M135]导演"', '"[屠边]导演"'
        )
        text = re.sub(r"# 玩家：.*?(?=# 每天的帖子)", "", text, flags=re.S)
        game.write_text(text, encoding="utf-8")
        out = run(signup, {"BANSHA_DB": str(tmp_path / "t.db")}, game, "--thread", TID)
    roster = players(game)
    assert len(roster) == 24
    assert roster[0]["sex"] == "女" and "sex" not in roster[1]
    # written, and the director is told what the file still needs (tubian24.txt:65)
    assert "还需要导演处理" in out and "players[1].sex" in out


def test_deal_commit_reveal_and_verify(forum, tmp_path, monkeypatch):
    _sim, _clock, game, env, _pids = forum
    run(signup, env, game, "--thread", TID)
    out = run(deal_cmd, env, game, "--thread", 880)
    loaded = load_game(game, check_login=False)
    hands = [(p.name, p.cards) for p in loaded.players]
    assert all(len(c) == 2 for _n, c in hands)
    assert get_ruleset("m135").validate_setup(hands) == []
    assert {p.faction for p in loaded.players} == {"狼人阵营", "村民阵营"}
    store = open_store(tmp_path / "game.db")
    try:
        seed, salt = store.get_meta(META_SEED), store.get_meta(META_SALT)
        digest, text = store.get_meta(META_COMMITMENT), store.get_meta(META_TEXT)
        drafts = {d.kind: d for d in list_drafts(store)}
    finally:
        store.close()
    assert re.fullmatch(r"[0-9a-f]{64}", seed) and re.fullmatch(r"[0-9a-f]{64}", salt)
    # secret: neither in the game file nor in what the command printed; the cards not printed
    file_text = game.read_text(encoding="utf-8")
    for secret in (seed, salt):
        assert secret not in file_text and secret not in out
    assert "狼人" not in out.split("m135：")[0]  # no card before the rule note
    assert f"承诺（SHA-256）：{digest}" in out
    # the commitment draft: the hash, the seats, for the rules thread; no card, no salt
    commit = drafts[DEAL_COMMIT]
    assert commit.state == "pending" and commit.tid == 880
    assert f"[code]{digest}[/code]" in commit.body and salt not in commit.body
    assert "玩家02" in commit.body and "预言家" not in commit.body
    # the canonical text is the cards dealt, seat by seat
    assert text.splitlines()[4:6] == [
        f"1|99|老玩家|{','.join(hands[0][1])}",
        f"2|102|玩家02|{','.join(hands[1][1])}",
    ]
    # a second deal without --redeal is refused: the cards are there
    refused = run(deal_cmd, env, game, code=1)
    assert "已有身份牌" in refused and "--redeal" in refused
    # after the game (played without the engine here, so the director says so with --yes): the
    # reveal draft holds the text in a code box, the salt and the seed
    out = run(deal_cmd, env, game, "--reveal", "--yes")
    assert out.startswith(text)
    store = open_store(tmp_path / "game.db")
    try:
        reveal = next(d for d in list_drafts(store) if d.kind == DEAL_REVEAL)
    finally:
        store.close()
    assert f"随机种子：[code]{seed}[/code]" in reveal.body
    # a player copies the code box into a file: sha256sum gives the published commitment
    boxed = re.search(r"\[code\]\n(.*?)\n\[/code\]", reveal.body, re.S).group(1) + "\n"
    assert boxed == text
    copy = tmp_path / "deal.txt"
    copy.write_text(boxed, encoding="utf-8")
    if shutil.which("sha256sum"):
        printed = subprocess.run(["sha256sum", str(copy)], capture_output=True, text=True)
        assert printed.stdout.split()[0] == digest
    # bansha deal --verify, with no game file at all (a player's machine)
    player_env = {"BANSHA_DB": None, "BANSHA_GAME": None}
    runner = CliRunner()
    player_dir = tmp_path / "player"
    player_dir.mkdir()
    monkeypatch.chdir(player_dir)  # no game file, no store here
    ok = runner.invoke(
        deal_cmd,
        ["--verify", str(copy), "--commitment", digest, "--seed", seed],
        env=player_env,
    )
    assert ok.exit_code == 0, ok.output
    assert "承诺核对：与 --commitment 给出的承诺一致" in ok.output
    assert "种子复算：一致（12 个座次的身份牌都由种子推出，阵容合规）" in ok.output
    # the whole reveal post pasted: the seed is read from it
    post = tmp_path / "post.txt"
    post.write_text(reveal.body.replace("\n", "\r\n"), encoding="utf-8")
    ok = runner.invoke(deal_cmd, ["--verify", str(post), "--commitment", digest], env=player_env)
    assert ok.exit_code == 0 and "核对通过" in ok.output, ok.output
    # one card changed: the commitment no longer matches, and the seed names the seat
    lines = text.splitlines()
    name, cards = lines[6].rsplit("|", 1)[0], lines[6].rsplit("|", 1)[1].split(",")
    # the seat's two cards swapped — or, when the seed dealt it two alike, one of them replaced
    other = next(
        c
        for line in lines[7:]
        if "|" in line
        for c in line.rsplit("|", 1)[1].split(",")
        if c != cards[0]
    )
    swapped = [cards[1], cards[0]] if cards[0] != cards[1] else [other, cards[1]]
    forged = "\n".join([*lines[:6], f"{name}|{','.join(swapped)}", *lines[7:]]) + "\n"
    bad = tmp_path / "forged.txt"
    bad.write_text(forged, encoding="utf-8")
    result = runner.invoke(
        deal_cmd, ["--verify", str(bad), "--commitment", digest, "--seed", seed], env=player_env
    )
    assert result.exit_code == 1
    assert "不一致：原文的 SHA-256 与 --commitment 给出的承诺不同" in result.output
    assert "不一致：第 3 座 玩家01：公开的是" in result.output
    assert "核对未通过" in result.output


def _reveals(tmp_path: Path) -> list:
    store = open_store(tmp_path / "game.db")
    try:
        return [d for d in list_drafts(store) if d.kind == DEAL_REVEAL]
    finally:
        store.close()


def test_a_reveal_before_the_game_ended_warns_and_asks_first(forum, tmp_path):
    _sim, _clock, game, env, _pids = forum
    run(signup, env, game, "--thread", TID)
    run(deal_cmd, env, game, "--thread", 880)
    cards = load_game(game, check_login=False).players[0].cards
    # no answer (cron, a pipe) or "no": nothing printed, nothing drafted
    for answer in ("", "n\n"):
        result = CliRunner().invoke(deal_cmd, [str(game), "--reveal"], env=env, input=answer)
        assert result.exit_code == 1, result.output
        assert (
            "注意：这局游戏看起来还没有结束（引擎还没有结算过任何阶段，没有判出胜负"
            in result.output
        )
        assert "没有公开：没有打印身份牌，也没有起草" in result.output
        assert "|".join(["1", "99", "老玩家", ",".join(cards)]) not in result.output
        assert _reveals(tmp_path) == []
    result = CliRunner().invoke(deal_cmd, [str(game), "--reveal"], env=env, input="y\n")
    assert result.exit_code == 0, result.output
    assert len(_reveals(tmp_path)) == 1


def test_a_reveal_after_the_engine_named_a_winner_asks_nothing(forum, tmp_path):
    from dataclasses import replace

    from engine.state import Phase
    from pipeline.game.journal import setup_state

    _sim, _clock, game, env, _pids = forum
    run(signup, env, game, "--thread", TID)
    run(deal_cmd, env, game, "--thread", 880)
    loaded = load_game(game, check_login=False)
    won = replace(setup_state(loaded, get_ruleset("m135")), winner="村民阵营")
    store = open_store(tmp_path / "game.db")
    with store.atomic():
        store.db.table("engine_snapshots").insert(
            {
                "phase": Phase.day(3).label,
                "seq": Phase.day(3).index,
                "input_json": "{}",
                "state_json": won.to_json(),
                "state_hash": won.digest(),
                "report_json": "{}",
                "complete": 1,
                "winner": "村民阵营",
                "resolved_at": "2026-12-03T22:00:00+08:00",
            }
        )
    store.close()
    out = run(deal_cmd, env, game, "--reveal")  # no input: it did not ask
    assert "看起来还没有结束" not in out and len(_reveals(tmp_path)) == 1


def test_the_dealt_game_file_is_the_directors_alone(forum, tmp_path):
    _sim, _clock, game, env, _pids = forum
    run(signup, env, game, "--thread", TID)
    game.chmod(0o644)  # as an editor or a copy leaves it
    out = run(deal_cmd, env, game, "--thread", 880)
    if os.name != "posix":
        return  # no permission bits to keep
    assert game.stat().st_mode & 0o777 == 0o600
    assert "游戏文件写进了身份牌，权限已从 644 改为 600" in out
    run(deal_cmd, env, game, "--redeal")  # already the director's alone: nothing to say
    assert game.stat().st_mode & 0o777 == 0o600


def test_redeal_replaces_the_commitment(forum, tmp_path):
    _sim, _clock, game, env, _pids = forum
    run(signup, env, game, "--thread", TID)
    run(deal_cmd, env, game)
    store = open_store(tmp_path / "game.db")
    first = store.get_meta(META_COMMITMENT)
    store.close()
    out = run(deal_cmd, env, game, "--redeal")
    store = open_store(tmp_path / "game.db")
    try:
        second = store.get_meta(META_COMMITMENT)
        live = [d for d in list_drafts(store) if d.kind == DEAL_COMMIT]
    finally:
        store.close()
    assert second != first and f"上一次发牌（承诺 {first[:16]}…）已作废" in out
    assert [d.state for d in live] == ["pending"] and second in live[0].body


def test_a_hand_written_line_up_is_kept_and_cannot_be_revealed(tmp_path):
    game = tmp_path / "m135.toml"
    shutil.copy(ROOT / "config" / "games" / "m135.toml", game)
    env = {"BANSHA_DB": str(tmp_path / "m135.db"), "BANSHA_GAME": None}
    before = game.read_text(encoding="utf-8")
    out = run(deal_cmd, env, game, code=1)
    assert "bansha 不覆盖已写的牌" in out
    assert game.read_text(encoding="utf-8") == before
    out = run(deal_cmd, env, game, "--reveal", code=1)
    assert "数据库里没有 bansha deal 的发牌记录" in out


@pytest.mark.parametrize("ruleset", ["m209", "m135", "nizhuan", "zhenyan", "tubian24"])
def test_a_deal_written_into_each_example_file_loads_and_starts(ruleset):
    """The rewritten example game file passes the game-file checks, and the engine starts from
    it (m209 with its [m209] lineup, tubian24 once the 盗贼 picked)."""
    path = ROOT / "config" / "games" / f"{ruleset}.toml"
    text = path.read_text(encoding="utf-8")
    game = load_game(path, check_login=False)
    names = [p.name for p in game.players]
    assert len(names) == player_count(get_ruleset(ruleset))
    made = deal(get_ruleset(ruleset), names, SeedStream(bytes.fromhex("42" * 32)))
    new, dropped = write_deal(text, made, ruleset=ruleset)
    # the director's comment lines stay (a comment at the end of a replaced value may go)
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            assert line in new
    data = tomllib.loads(new)
    if ruleset == "tubian24":
        # the old choices were made knowing the old cards (tubian24.txt:74, 147, 164)
        assert set(dropped) == {"thief_pick", "kill_order", "master"}
        assert data["tubian24"]["thief_cards"] == made.table["thief_cards"]
        data["tubian24"]["thief_pick"] = 3
    loaded = parse_game(data, check_login=False, folder=path.parent)
    assert [p.cards for p in loaded.players] == [list(c) for c in made.cards]
    rs = get_ruleset(ruleset)
    state = rs.setup_state(
        [(p.name, p.cards) for p in loaded.players],
        settings=rs.settings_from_game(loaded),
        strict=True,
    )
    assert len(state.players) == len(names)
    if ruleset == "m209":
        assert sorted(data["m209"]["lineup"]) == sorted(c for (c,) in made.cards)


def test_a_deal_that_cannot_write_the_game_file_leaves_no_trace(forum, tmp_path, monkeypatch):
    """The store's deal (seed, commitment, draft) and the game file change together: a failed
    write of the file rolls the store back, so no commitment exists for cards nobody has."""
    import pipeline.cli.forum_life as life

    _sim, _clock, game, env, _pids = forum
    run(signup, env, game, "--thread", TID)
    before = game.read_text(encoding="utf-8")

    def broken(path, text, **_kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(life, "_write_atomic", broken)
    out = run(deal_cmd, env, game, code=1)
    assert "无法写入游戏文件" in out and "没有发牌，数据库也没有记录" in out
    assert game.read_text(encoding="utf-8") == before
    store = open_store(tmp_path / "game.db")
    try:
        assert store.get_meta(META_SEED) is None and store.get_meta(META_COMMITMENT) is None
        assert [d for d in list_drafts(store) if d.kind == DEAL_COMMIT] == []
    finally:
        store.close()
    monkeypatch.undo()
    out = run(deal_cmd, env, game)  # and the next try deals normally
    assert "承诺（SHA-256）" in out
