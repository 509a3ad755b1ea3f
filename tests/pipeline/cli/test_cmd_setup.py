"""``Bansha new`` writes a starter game file, ``bansha check`` checks one.

The starter is the rule set's example (config/games/<id>.toml) with the game id from the file
name, the days moved to start tomorrow and every value to replace marked 「示例」: it loads as
it is, so ``check`` accepts it (exit 0) and lists what is still an example. ``check`` never
creates or writes a store (it reads an existing one read-only, for the threads bansha opened);
``check --online`` reads each of the game's threads' first page once (here from the simulator)
and says the title, the pages and who could read it; a dead forum is one line.
"""

from __future__ import annotations

import os
import re
import tomllib
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from engine.rulesets import get_ruleset
from pipeline.cli import cli
from pipeline.cli import setup as cmd_setup
from pipeline.discuz.client import RetryPolicy
from pipeline.game.gamefile import RULESETS, THREAD_ROLE_TITLES, load_game
from pipeline.sim.simulator import ForumSim, SimClock

ROOT = Path(__file__).resolve().parents[3]
GAMES = ROOT / "config" / "games"
CST = timezone(timedelta(hours=8))
#: bansha new's "now" in these tests: 2027-03-10 20:00 in Shanghai
NOW = datetime(2027, 3, 10, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cmd_setup, "clock", lambda: NOW)
    for name in ("BANSHA_GAME", "BANSHA_DB", "BANSHA_COOKIE", "BANSHA_MAX_ATTEMPTS"):
        monkeypatch.delenv(name, raising=False)


def run(*args: str, code: int = 0, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, list(args), env=env)
    assert result.exit_code == code, result.output
    return result


def new(path: Path, ruleset: str) -> Path:
    run("new", str(path), "--ruleset", ruleset)
    return path


# --------------------------------------------------------------------------- bansha new


@pytest.mark.parametrize("ruleset", RULESETS)
def test_new_writes_a_starter_that_check_accepts_and_lists_the_examples(tmp_path, ruleset):
    game_file = tmp_path / "我的游戏.toml"
    out = run("new", str(game_file), "--ruleset", ruleset).output
    assert f"已写入游戏文件 {game_file}（规则集 {ruleset}" in out
    assert f"bansha check {game_file}" in out and f"bansha init {game_file}" in out
    assert game_file.stat().st_mode & 0o777 == 0o600  # it will hold the cards
    text = game_file.read_text(encoding="utf-8")
    assert "示例" in text and "../shared" not in text
    game = load_game(game_file, env={}, check_login=False)
    assert game.game.ruleset == ruleset and game.game.id == "我的游戏"  # the id is the file's

    result = run("check", str(game_file))
    assert f"游戏文件 {game_file} 没有问题。" in result.stdout
    assert f"规则集 {ruleset}" in result.stdout
    assert f"玩家：{len(game.players)} 名" in result.stdout
    assert f"天数：{len(game.days)} 天" in result.stdout
    assert "注意：下面这些还是示例的值" in result.stdout
    assert "forum.base_url：论坛地址还是示例的 https://bbs.example.com/" in result.stdout
    assert "players：" in result.stdout and "名还是示例名单" in result.stdout
    if game.secrets:
        assert f"{ruleset}：秘密表还是示例的值" in result.stdout
    # the check touches no store: none is created beside the game file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["我的游戏.toml"]


def test_the_starter_days_start_tomorrow_keeping_the_examples_times(tmp_path):
    game = load_game(new(tmp_path / "g.toml", "m209"), env={}, check_login=False)
    example = load_game(GAMES / "m209.toml", env={}, check_login=False)
    # 2027-03-10 20:00 in Shanghai: tomorrow is 03-11; the example's day 1 opens at 09:00
    assert game.days[0].opens == datetime(2027, 3, 11, 9, 0, tzinfo=CST)
    first, ex_first = game.days[0].opens, example.days[0].opens
    for d, e in zip(game.days, example.days, strict=True):
        assert (d.opens - first, d.closes - first) == (e.opens - ex_first, e.closes - ex_first)
    text = (tmp_path / "g.toml").read_text(encoding="utf-8")
    assert "# 【示例】日期已排成从明天（2027-03-11）开始；" in text
    # the commented-out 太阳[日不落] lines moved with the days they belong to
    assert "# first_closes = 2027-03-16T15:00:00+08:00" in text


def test_new_never_overwrites(tmp_path):
    game_file = tmp_path / "g.toml"
    game_file.write_text("# 我的游戏，已经改了一半\n", encoding="utf-8")
    result = run("new", str(game_file), "--ruleset", "m135", code=1)
    assert f"{game_file} 已经存在，没有覆盖它" in result.stderr
    assert game_file.read_text(encoding="utf-8") == "# 我的游戏，已经改了一半\n"


def test_new_refuses_a_name_without_toml_and_a_missing_folder(tmp_path):
    result = run("new", str(tmp_path / "g.txt"), "--ruleset", "m135", code=1)
    assert "游戏文件名应以 .toml 结尾" in result.stderr
    result = run("new", str(tmp_path / "no" / "g.toml"), "--ruleset", "m135", code=1)
    assert f"目录不存在：{tmp_path / 'no'}" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_new_needs_a_known_rule_set(tmp_path):
    result = run("new", str(tmp_path / "g.toml"), "--ruleset", "m999", code=2)
    assert "--ruleset" in result.stderr and "m135" in result.stderr
    assert list(tmp_path.iterdir()) == []


def _fill_m135(text: str) -> str:
    """What a director does with the m135 starter: every 「示例」 value replaced."""
    text = text.replace('"[M135]『让子弹飞』"', '"[M135]『我的局』"')
    text = text.replace("https://bbs.example.com/", "https://bbs.mygame.cn/")
    text = text.replace('["[M135]导演", "[M135]导演B"]', '["主持人甲"]')
    text = text.replace("[100231, 100232]", "[900001]")
    counter = iter(range(1, 100))
    text = re.sub(r'^name = ".*"$', lambda m: f'name = "玩家{next(counter)}"', text, flags=re.M)
    counter = iter(range(1, 100))
    text = re.sub(r"^uid = \d+$", lambda m: f"uid = {800000 + next(counter)}", text, flags=re.M)
    text = re.sub(r"^aliases = .*$", "", text, flags=re.M)
    # the example's first two players hold 狼人+村民 and 村民+狼人: deal them the other way
    text = text.replace('cards = ["狼人", "村民"]', 'cards = ["X"]', 1)
    text = text.replace('cards = ["村民", "狼人"]', 'cards = ["狼人", "村民"]', 1)
    text = text.replace('cards = ["X"]', 'cards = ["村民", "狼人"]', 1)
    return re.sub(
        r"^(discussion|vote|progress) = (\d+)",
        lambda m: f"{m.group(1)} = {int(m.group(2)) + 500000}",
        text,
        flags=re.M,
    )


def test_filling_what_new_marked_leaves_nothing_to_remind(tmp_path):
    game_file = new(tmp_path / "g.toml", "m135")
    game_file.write_text(_fill_m135(game_file.read_text(encoding="utf-8")), encoding="utf-8")
    out = run("check", str(game_file)).stdout
    assert "没有问题" in out and "导演：主持人甲" in out
    assert "示例" not in out, out


def test_check_lists_every_problem_and_creates_no_store(tmp_path):
    game_file = new(tmp_path / "g.toml", "m135")
    text = game_file.read_text(encoding="utf-8")
    text = text.replace("uid = 187342", "uid = 203117")  # the second player takes the first's uid
    text = text.replace('base_url = "https://bbs.example.com/"', 'base_url = "bbs.example.com"')
    game_file.write_text(text, encoding="utf-8")
    result = run("check", str(game_file), code=1)
    assert f"游戏文件 {game_file} 有 2 处错误" in result.stderr
    assert "forum.base_url：论坛地址应以 http:// 或 https:// 开头" in result.stderr
    assert "uid 203117 与 players[0].uid 重复" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]


def test_check_starts_the_rule_set_with_the_secret_table(tmp_path):
    # m209.txt:22-33: the drawn line-up must be the cards dealt; the engine's opening says so
    game_file = new(tmp_path / "g.toml", "m209")
    text = game_file.read_text(encoding="utf-8")
    game_file.write_text(text.replace('"白狼王", "石像鬼"', '"黑狼王", "石像鬼"'), encoding="utf-8")
    result = run("check", str(game_file), code=1)
    assert "开局检查（按身份牌和秘密表开局）" in result.stderr
    assert "[m209] lineup 与玩家的身份牌不一致" in result.stderr


def test_check_says_the_login_cookie_is_missing_without_failing(tmp_path):
    game_file = new(tmp_path / "g.toml", "m135")
    text = game_file.read_text(encoding="utf-8")
    game_file.write_text(text.replace("requires_login = false", "requires_login = true"), "utf-8")
    out = run("check", str(game_file)).stdout
    assert "要登录才能看帖：Cookie 从环境变量 BANSHA_COOKIE 读取" in out
    assert "注意：论坛需要登录（requires_login = true），但环境变量 BANSHA_COOKIE 未设置" in out
    assert "联网的命令 crawl、cycle、post 会拒绝运行" in out


# --------------------------------------------------------------------------- --online


@pytest.fixture
def online(tmp_path, monkeypatch):
    """A starter (m135) whose forum is the simulator: the threads the file names (the progress
    thread once for the whole game), the day-1 discussion thread with 3 pages (10 a page)."""
    game_file = new(tmp_path / "g.toml", "m135")
    text = game_file.read_text(encoding="utf-8")
    game_file.write_text(text.replace("min_interval_s = 1.0", "min_interval_s = 0"), "utf-8")
    game = load_game(game_file, env={}, check_login=False)
    day1 = game.days[0]
    director = game.director.names[0]
    users = {p.name: p.uid for p in game.players}
    users.update(zip(game.director.names, game.director.uids, strict=True))

    def make(**options):
        sim = ForumSim(users=users, clock=SimClock(day1.closes), **options)
        for d, role, tid in game.thread_roles():
            if not sim_has(sim, tid):
                zh = THREAD_ROLE_TITLES[role]
                sim.add_thread(tid, f"{game.game.title}第{d}天{zh}", director, zh, day1.opens)
        for i in range(24):  # with the opening post: 25 floors, 3 pages
            author = game.players[i % len(game.players)].name
            at = day1.opens + timedelta(minutes=i + 1)
            sim.add_post(day1.discussion, author, f"第{i}条发言", at)
        monkeypatch.setattr(
            cmd_setup, "http_client_factory", lambda: httpx.Client(transport=sim.transport())
        )
        return sim

    return game_file, game, make


def sim_has(sim: ForumSim, tid: int) -> bool:
    try:
        sim.thread_pids(tid)
    except (KeyError, ValueError):
        return False
    return True


def test_check_online_reads_each_thread_once_and_says_what_it_found(online):
    game_file, game, make = online
    sim = make()
    result = run("check", str(game_file), "--online")
    out = result.stdout
    assert "联网检查 https://bbs.example.com/（以游客身份，7 个帖子，每个只读第一页）" in out
    title = game.game.title
    assert (
        f"✓ 第 1 天讨论帖 tid=31201：「{title}第1天讨论帖」，共 3 页，第 1 页 10 帖；游客可以读"
        in out
    )
    assert f"✓ 第 1 天投票帖 tid=31202：「{title}第1天投票帖」，共 1 页" in out
    # one progress thread for the whole game: listed (and read) once
    assert "✓ 第 1-3 天进程帖 tid=31200" in out
    assert "7 个帖子都读得到。" in out
    views = sorted(int(r.query["tid"]) for r in sim.requests if r.query.get("mod") == "viewthread")
    assert views == sorted({tid for _d, _r, tid in game.thread_roles()})  # each once
    assert sorted(p.name for p in game_file.parent.iterdir()) == ["g.toml"]  # no store


def test_check_online_as_guest_on_a_forum_that_needs_login(online):
    game_file, _game, make = online
    make(login_required=True)
    result = run("check", str(game_file), "--online", code=1)
    assert (
        "✗ 第 1 天讨论帖 tid=31201：游客看不了（需要登录）：在 [forum] 写 requires_login = true，"
        "并把导演账号的登录 Cookie 放进环境变量 BANSHA_COOKIE"
    ) in result.stdout
    assert "7 个帖子读不到，原因见上。" in result.stderr


def test_check_online_with_the_cookie_never_prints_it(online):
    game_file, game, make = online
    sim = make(login_required=True)
    cookie = sim.login_cookie(game.director.names[0])
    result = run("check", str(game_file), "--online", env={"BANSHA_COOKIE": cookie})
    out = result.output
    assert "带上环境变量 BANSHA_COOKIE 的 Cookie" in out
    uid = game.director.uids[0]
    assert (
        f"共 3 页，第 1 页 10 帖；用 Cookie（环境变量 BANSHA_COOKIE）以导演账号 uid {uid} 登录读取"
        in out
    )
    for secret in [cookie, *[part.split("=", 1)[1] for part in cookie.split("; ")]]:
        assert secret not in out


def test_check_online_says_a_stale_cookie_is_one(online):
    game_file, _game, make = online
    make(login_required=True)
    result = run("check", str(game_file), "--online", code=1, env={"BANSHA_COOKIE": "a=b"})
    assert "需要登录：环境变量 BANSHA_COOKIE 里的 Cookie 无效或已过期，请从浏览器重新复制" in (
        result.stdout
    )


def test_check_online_names_a_thread_that_does_not_exist(online):
    game_file, _game, make = online
    make()
    text = game_file.read_text(encoding="utf-8").replace("vote = 31212", "vote = 31299")
    game_file.write_text(text, encoding="utf-8")
    result = run("check", str(game_file), "--online", code=1)
    assert "✗ 第 2 天投票帖 tid=31299：主题不存在或已被删除" in result.stdout
    assert "检查游戏文件里的帖子编号（论坛网址里的 tid=）" in result.stdout
    assert "1 个帖子读不到，原因见上。" in result.stderr


def test_check_online_a_dead_forum_is_one_line(online, monkeypatch):
    game_file, _game, _make = online
    asked: list[str] = []

    def refuse(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    monkeypatch.setattr(
        cmd_setup,
        "http_client_factory",
        lambda: httpx.Client(transport=httpx.MockTransport(refuse)),
    )
    monkeypatch.setattr(
        cmd_setup, "CHECK_RETRY", RetryPolicy(max_attempts=2, initial_wait_s=0, jitter_s=0)
    )
    result = run("check", str(game_file), "--online", code=1)
    assert result.stderr.splitlines() == [
        "错误：论坛无法访问：论坛暂时无法访问（无法连接论坛，已尝试 2 次）；"
        "其余 6 个帖子没有再试，稍后再运行 bansha check --online"
    ]
    assert len(asked) == 2  # the first thread, tried twice; the other six not at all
    assert "没有问题" in result.stdout  # the file itself is fine


def test_check_online_without_threads_says_so(tmp_path):
    game_file = new(tmp_path / "g.toml", "m135")
    data = tomllib.loads(game_file.read_text(encoding="utf-8"))
    assert data["days"]
    text = game_file.read_text(encoding="utf-8")
    text = re.sub(r"^(discussion|vote|progress) = \d+.*$", "", text, flags=re.M)
    game_file.write_text(text, encoding="utf-8")
    out = run("check", str(game_file), "--online").stdout
    assert "还没有帖子编号" in out
    assert "联网检查：游戏文件中还没有帖子编号，没有可读的帖子。" in out


# --------------------------------------------------------------------------- bansha's threads


def _with_bansha_thread(game_file: Path) -> tuple[Path, str, float]:
    """Day 1's discussion thread left out of the file (``[forum] fid``: bansha opens it) and
    recorded in the store as opened by bansha, as a cycle would; the store's digest and mtime."""
    import hashlib

    from pipeline.game.gamefile import default_db_path
    from pipeline.store import open_store

    text = game_file.read_text(encoding="utf-8")
    text = text.replace("discussion = 31201", "", 1).replace("[director]", "fid = 42\n\n[director]")
    game_file.write_text(text, encoding="utf-8")
    db = default_db_path(game_file)
    store = open_store(db)
    store.record_opened_thread(
        day=1, role="discussion", tid=31201, subject="第1天讨论帖", draft_id=None,
        at="2027-03-11T09:00:00+08:00", how="posted",
    )  # fmt: skip
    store.close()
    return db, hashlib.sha256(db.read_bytes()).hexdigest(), db.stat().st_mtime


def test_check_covers_the_threads_bansha_opened_and_never_writes_the_store(online):
    """README: every command uses the threads bansha opened; check reads the store read-only."""
    import hashlib

    game_file, _game, make = online
    make()
    db, digest, mtime = _with_bansha_thread(game_file)
    folder = sorted(p.name for p in game_file.parent.iterdir())
    out = run("check", str(game_file)).stdout
    assert "讨论帖 31201（bansha 开的）" in out
    assert "帖子：7 个（其中 1 个是 bansha 开的，记在数据库里）" in out
    out = run("check", str(game_file), "--online").stdout
    assert "✓ 第 1 天讨论帖 tid=31201：" in out and "7 个帖子都读得到。" in out
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert db.stat().st_mtime == mtime
    assert sorted(p.name for p in game_file.parent.iterdir()) == folder


def test_check_says_a_store_it_cannot_read_and_checks_the_file(tmp_path):
    game_file = new(tmp_path / "g.toml", "m135")
    db, _digest, _mtime = _with_bansha_thread(game_file)
    db.write_bytes(b"not a database" * 100)
    out = run("check", str(game_file)).stdout
    assert "没有问题" in out
    assert f"注意：无法只读打开数据库 {db}" in out
    assert "摘要和联网检查只包括游戏文件里的帖子，不含 bansha 开的帖子" in out
    assert db.read_bytes() == b"not a database" * 100


# --------------------------------------------------------------------------- before sign-up


def test_check_before_sign_up_checks_the_rest_and_says_sign_up_is_next(tmp_path):
    # docs/报名与发牌.md: the file starts without [[players]]; bansha signup writes them
    game_file = tmp_path / "life.toml"
    game_file.write_text((GAMES / "demo_life.toml").read_text("utf-8"), "utf-8")
    assert "[[players]]" not in game_file.read_text("utf-8").replace("# 还没有 [[players]]", "")
    out = run("check", str(game_file)).output
    assert f"游戏文件 {game_file} 还没有玩家（报名之前），其余没有问题。" in out
    assert "玩家：还没有（报名之后由 bansha signup 写进 [[players]]）" in out
    assert f"下一步：报名截止后运行 bansha signup {game_file}" in out
    assert "缺少 [[players]]" not in out
    assert not (tmp_path / "life.db").exists()


def test_check_before_sign_up_still_reports_every_other_problem(tmp_path):
    game_file = tmp_path / "life.toml"
    text = (GAMES / "demo_life.toml").read_text("utf-8")
    game_file.write_text(text.replace('timezone = "Asia/Shanghai"', 'timezone = "火星"'), "utf-8")
    out = run("check", str(game_file), code=1).output
    assert 'game.timezone：未知的时区 "火星"' in out
    assert "（还没有 [[players]] 不算错误：报名后由 bansha signup 写进来）" in out
    assert "缺少 [[players]]" not in out


@pytest.mark.parametrize("ruleset", RULESETS)
def test_new_with_fid_writes_a_game_whose_threads_bansha_opens(tmp_path, ruleset):
    game_file = tmp_path / "开帖.toml"
    out = run("new", str(game_file), "--ruleset", ruleset, "--fid", "42").output
    assert "每天的时间（帖子由 bansha 在版块 fid=42 开出，不用写 tid）" in out
    game = load_game(game_file, env={}, check_login=False)
    assert game.forum.fid == 42
    assert game.days and all(not d.threads for d in game.days)  # no tid: bansha opens them
    checked = run("check", str(game_file)).output
    assert "没有问题" in checked and "bansha 不会为它开帖" not in checked
    assert "帖子编号还是示例的" not in checked
    # each day says which threads bansha will open, and where — not that a tid is missing
    assert "还没有帖子编号" not in checked
    days = [x for x in checked.splitlines() if x.lstrip().startswith("第 ") and "开门" in x]
    assert days and all(
        "讨论帖、投票帖、进程帖" in x and "由 bansha 在版块 42 开（开门前 24 小时起草" in x
        for x in days
    ), checked
    if get_ruleset(ruleset).inquiry is not None:  # zhenyan.txt:147 询问贴
        assert any("进程帖、询问帖由 bansha" in x for x in days), checked
    online = run("check", str(game_file), "--online").output
    assert "联网检查：帖子都还没有开出（由 bansha 在版块 42 开），没有可读的帖子。" in online
    assert (game_file.stat().st_mode & 0o777) == 0o600 or os.name != "posix"
