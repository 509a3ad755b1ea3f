"""The game file loader: what a director sees when the file is right, and when it is wrong."""

import copy
import json
import sys
import tomllib
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pipeline.game.gamefile import (
    RULESETS,
    Game,
    GameFileError,
    ThreadRole,
    default_db_path,
    load_game,
    parse_game,
    resolve_db_path,
)

REPO = Path(__file__).resolve().parents[3]
GAMES = Path(__file__).resolve().parents[1] / "games"
VALID = GAMES / "zhenyan_valid.toml"
DEMO = REPO / "config" / "games" / "demo.toml"
CST = timezone(timedelta(hours=8))
COOKIE = "cdb_auth=S3cr3tC00kieValue%2Fxyz; cdb_saltkey=Zq9"
SECRET_WORDS = ("月亮", "钢琴", "奔跑", "蓝色")  # the [zhenyan] words in zhenyan_valid.toml


def valid_data() -> dict[str, Any]:
    with VALID.open("rb") as f:
        return tomllib.load(f)


_VALID_DATA = valid_data()


def problems_of(data: dict[str, Any], env: dict[str, str] | None = None) -> str:
    """The message a director reads for this (broken) file."""
    with pytest.raises(GameFileError) as info:
        parse_game(data, source="game.toml", env={} if env is None else env)
    return str(info.value)


def line_for(message: str, key_path: str) -> str:
    """The one line of the message about ``key_path``."""
    lines = [ln for ln in message.splitlines() if f"：{key_path}" in ln]
    assert lines, f"no line about {key_path} in:\n{message}"
    assert all(ln.startswith("游戏文件 game.toml：") for ln in lines)
    return "\n".join(lines)


# --------------------------------------------------------------------------- a valid file


def test_valid_file_loads_with_every_field() -> None:
    game = load_game(VALID, env={})
    assert game.game.id == "zhenyan-test"
    assert game.game.ruleset == "zhenyan"
    assert str(game.game.tz) == "Asia/Shanghai"
    assert game.forum.base_url == "https://bbs.example.com/bbs/"  # normalised with "/"
    assert game.forum.encoding == "gbk" and game.forum.source == "html"
    assert game.forum.min_interval_s == 2.0 and game.forum.ppp == 20
    assert game.director_names == {"[真言]导演", "[真言]副导演"}
    assert game.director.uids == [900, 901]
    assert [p.name for p in game.players][:4] == ["饺子", "包子", "Snow_风", "汤圆"]
    assert len(game.players) == 12  # the whole line-up (zhenyan.txt:64-100)
    assert game.players[0].cards == ["预言家"]
    assert game.days[0].opens == datetime(2026, 12, 1, 9, 0, tzinfo=CST)
    assert game.days[1].accelerated is True and game.days[0].accelerated is None
    assert game.secrets == {"words": list(SECRET_WORDS)}


def test_forum_defaults_follow_the_contract() -> None:
    data = valid_data()
    data["forum"] = {"base_url": "http://127.0.0.1:8080"}
    forum = parse_game(data, env={}).forum
    assert forum.base_url == "http://127.0.0.1:8080/"
    assert (forum.encoding, forum.source, forum.cookie_env) == ("auto", "auto", "BANSHA_COOKIE")
    assert forum.requires_login is False and forum.min_interval_s == 1.0 and forum.ppp == 10
    assert forum.username_env is None and forum.password_env is None


def test_player_lookup_by_name_or_alias_is_exact() -> None:
    game = load_game(VALID, env={})
    assert game.player("饺子") is game.players[0]
    assert game.player("饺子君") is game.players[0]  # an alias the director allows
    assert game.player("snow") is game.players[2]
    assert game.player("SNOW") is None  # not an allowed spelling: never guessed
    assert game.player("[真言]导演") is None


def test_day_and_thread_roles() -> None:
    game = load_game(VALID, env={})
    assert game.day(2).vote == 12356
    with pytest.raises(ValueError, match=r"^游戏文件中没有第 3 天$"):
        game.day(3)
    assert game.thread_roles() == [
        (1, ThreadRole.DISCUSSION, 12345),
        (1, ThreadRole.VOTE, 12346),
        (1, ThreadRole.PROGRESS, 12347),
        (1, ThreadRole.INQUIRY, 12348),
        (2, ThreadRole.DISCUSSION, 12355),
        (2, ThreadRole.VOTE, 12356),
        (2, ThreadRole.PROGRESS, 12347),  # one progress thread for the game is fine
        (2, ThreadRole.INQUIRY, 12358),
    ]
    assert game.thread_roles()[1][1] == "vote"


def test_game_is_frozen_and_hides_secrets_and_cards() -> None:
    game = load_game(VALID, env={})
    with pytest.raises(ValidationError):
        game.game.id = "other"  # type: ignore[misc]
    shown = repr(game)
    assert "预言家" not in shown and "狼人阵营" not in shown
    assert not any(word in shown for word in SECRET_WORDS)


def test_valid_file_round_trips() -> None:
    game = load_game(VALID, env={})
    again = parse_game(game.to_toml_dict(), env={})
    assert again == game
    raw = valid_data()
    out = game.to_toml_dict()
    assert out["zhenyan"] == raw["zhenyan"]
    for section in ("game", "director"):
        assert out[section] == raw[section]
    for written, kept in zip(raw["players"], out["players"], strict=True):
        assert {k: kept[k] for k in written} == written
    for written, kept in zip(raw["days"], out["days"], strict=True):
        assert {k: kept[k] for k in written} == written


def test_demo_game_file_loads() -> None:
    if not DEMO.exists():
        pytest.skip(f"{DEMO} is not written yet")
    game = load_game(DEMO, env={})
    assert game.game.ruleset == "m135"
    assert len(game.players) == 12
    assert all(len(p.cards) == 2 for p in game.players)
    assert game.days and all(d.opens.utcoffset() == timedelta(hours=8) for d in game.days)


# --------------------------------------------------------------------------- sheriff election


@pytest.mark.parametrize("ruleset", ["m209", "zhenyan", "m135", "nizhuan"])
def test_day_one_is_the_sheriff_election(ruleset: str) -> None:
    # rules/zhenyan.txt:105, rules/m135.txt:147, rules/nizhuan.txt:117, rules/m209.txt:226:
    # "竞岗【强制】—— 在游戏的第一天投票结束后，最先获得投票数最多的角色当选警长。"
    data = valid_data()
    data["game"]["ruleset"] = ruleset
    if ruleset != "zhenyan":
        data.pop("zhenyan")
    for day in data["days"]:
        day.pop("inquiry")
    for player in data["players"]:  # the zhenyan line-up is not a valid line-up elsewhere
        player.pop("cards", None)
    game = parse_game(data, env={})
    assert [d.sheriff_election for d in game.days] == [True, False]


def test_tubian24_has_no_election_and_the_director_can_override() -> None:
    # rules/tubian24.txt:39: "获得投票最多的角色将出局并翻牌。平票则高僧承受投票出局。"
    data = valid_data()
    data["game"]["ruleset"] = "tubian24"
    data.pop("zhenyan")
    for day, player in zip(data["days"], data["players"], strict=False):
        day.pop("inquiry")
        player["sex"] = "男"
    for player in data["players"][2:]:
        player["sex"] = "女"
    for player in data["players"]:  # the zhenyan line-up is not a tubian24 line-up
        player.pop("cards", None)
    assert [d.sheriff_election for d in parse_game(data, env={}).days] == [False, False]
    data["days"][1]["sheriff_election"] = True
    assert [d.sheriff_election for d in parse_game(data, env={}).days] == [False, True]


# --------------------------------------------------------------------------- broken files

Mutation = Callable[[dict[str, Any]], None]


def _set(path: str, value: Any) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value

    return mutate


def _drop(path: str) -> Mutation:
    def mutate(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        del node[last]

    return mutate


def _swap_days(data: dict[str, Any]) -> None:
    data["days"].reverse()


def _to_m135(data: dict[str, Any]) -> None:
    data["game"]["ruleset"] = "m135"
    data["m135"] = data.pop("zhenyan")


def _to_tubian24(data: dict[str, Any]) -> None:
    data["game"]["ruleset"] = "tubian24"
    data["tubian24"] = data.pop("zhenyan")
    for day in data["days"]:
        day.pop("inquiry")
    for player in data["players"]:
        player["sex"] = "女"
    del data["players"][3]["sex"]


def _two_tables(data: dict[str, Any]) -> None:
    data["m135"] = {"lineup": ["狼人"]}


def _secrets_table(data: dict[str, Any]) -> None:
    data["secrets"] = {"words": ["x"]}


BAD_CASES: list[tuple[str, Mutation, str, str]] = [
    # (id, mutation, key path, what the director reads)
    ("missing", _drop("players.1.uid"), 'players[1].uid（玩家 "包子"）', "缺少必填项"),
    ("missing-table", _drop("forum"), "forum", "缺少必填的表 [forum]"),
    (
        "typo",
        _set("forum.encodng", "gbk"),
        "forum.encodng",
        "未知的键（拼写错误？是不是 encoding？见 docs/游戏文件.md）",
    ),
    ("uid-string", _set("players.0.uid", "101"), "players[0].uid", "应为整数"),
    ("uid-zero", _set("players.0.uid", 0), "players[0].uid", "应为正整数"),
    ("bool", _set("forum.requires_login", "true"), "forum.requires_login", "应为 true 或 false"),
    ("ppp", _set("forum.ppp", 0), "forum.ppp", "应为正整数"),
    ("interval", _set("forum.min_interval_s", -1.0), "forum.min_interval_s", "不能小于 0"),
    ("encoding", _set("forum.encoding", "GBK"), "forum.encoding", '"auto"、"utf-8"、"gbk"'),
    ("source", _set("forum.source", "api"), "forum.source", '"auto"、"mobile-api"、"html"'),
    ("sex", _set("players.0.sex", "M"), "players[0].sex", '应为以下之一："男"、"女"'),
    ("ruleset", _set("game.ruleset", "m136"), "game.ruleset", '未知的规则集 "m136"'),
    ("timezone", _set("game.timezone", "Asia/Shanghia"), "game.timezone", "未知的时区"),
    ("tz-offset", _set("game.timezone", "+08:00"), "game.timezone", "IANA 时区名"),
    ("url-scheme", _set("forum.base_url", "bbs.example.com"), "forum.base_url", "http://"),
    (
        "url-page",
        _set("forum.base_url", "https://bbs.example.com/forum.php?mod=viewthread&tid=1"),
        "forum.base_url",
        "不要带 forum.php",
    ),
    ("no-director", _set("director.names", []), "director.names", "不能为空"),
    ("blank-name", _set("players.0.name", " "), "players[0].name", "名字不能为空"),
    ("padded-name", _set("players.0.name", "饺子 "), "players[0].name", "名字首尾不能有空格"),
    ("dup-name", _set("players.1.name", "饺子"), "players[1].name", '玩家名 "饺子" 与 players[0]'),
    ("dup-name-case", _set("players.3.name", "SNOW_风"), "players[3].name", "不区分大小写"),
    ("dup-uid", _set("players.1.uid", 101), "players[1].uid", "uid 101 与 players[0].uid 重复"),
    (
        "alias-is-name",
        _set("players.1.aliases", ["饺子"]),
        "players[1].aliases[0]",
        '别名 "饺子" 与 players[0].name',
    ),
    (
        "alias-is-alias",
        _set("players.3.aliases", ["饺子君"]),
        "players[3].aliases[0]",
        '别名 "饺子君" 与 players[0].aliases[0]',
    ),
    (
        "director-plays",
        _set("director.names", ["包子"]),
        "director.names[0]",
        '导演 "包子" 同时是玩家（players[1].name）',
    ),
    (
        "director-alias",
        _set("director.names", ["饺子君"]),
        "director.names[0]",
        '导演 "饺子君" 同时是玩家（players[0].aliases[0]）',
    ),
    ("director-uid", _set("director.uids", [103]), "director.uids[0]", "players[2].uid"),
    ("dup-day", _set("days.1.day", 1), "days[1].day", "天数 1 重复"),
    ("day-order", _swap_days, "days[1].day", "天数 1 排在天数 2 之后"),
    ("day-negative", _set("days.0.day", -1), "days[0].day", "不能小于 0"),
    (
        "closes-early",
        _set("days.1.closes", datetime(2026, 12, 3, 8, 0, tzinfo=CST)),
        "days[1].closes（天数 2）",
        "天数 2 的关门时间早于开门时间",
    ),
    (
        "closes-equal",
        _set("days.1.closes", datetime(2026, 12, 3, 9, 0, tzinfo=CST)),
        "days[1].closes",
        "天数 2 的关门时间等于开门时间",
    ),
    (
        "overlap",
        _set("days.1.opens", datetime(2026, 12, 2, 21, 0, tzinfo=CST)),
        "days[1].opens",
        "天数 2 的开门时间早于天数 1 的关门时间",
    ),
    (
        "naive",
        _set("days.0.opens", datetime(2026, 12, 1, 9, 0)),
        "days[0].opens（天数 1）",
        "时间必须带时区偏移（如 +08:00）：写成 2026-12-01T09:00:00+08:00",
    ),
    (
        "date-only",
        _set("days.0.closes", datetime(2026, 12, 2).date()),
        "days[0].closes",
        "缺少日期或时刻",
    ),
    (
        "quoted-time",
        _set("days.0.closes", "2026-12-02T22:00:00+08:00"),
        "days[0].closes",
        "日期时间不要加引号",
    ),
    ("tid-digits", _set("days.0.vote", "12346"), "days[0].vote", "帖子编号必须是数字"),
    ("tid-text", _set("days.0.vote", "abc"), "days[0].vote", "帖子编号必须是数字"),
    ("tid-bool", _set("days.0.vote", True), "days[0].vote", "帖子编号必须是数字"),
    ("tid-zero", _set("days.0.vote", 0), "days[0].vote", "帖子编号必须是正整数"),
    (
        "tid-two-roles",
        _set("days.0.vote", 12345),
        "days[0].vote",
        "天数 1 的投票帖与讨论帖用了同一个帖子编号 12345",
    ),
    (
        "tid-across-days",
        _set("days.1.discussion", 12346),
        "days[1].discussion",
        "帖子编号 12346 在天数 2 是讨论帖，在天数 1 却是投票帖",
    ),
    # rules/zhenyan.txt:147: "所有角色可以在询问贴向警长询问是否类问题" — only zhenyan has one.
    ("inquiry", _to_m135, "days[0].inquiry", "只有 zhenyan（狼人真言）有询问帖"),
    # rules/tubian24.txt:65 "游戏开始时，会公布所有玩家的性别。"; :125 "所有异性玩家均不能使用技能"
    ("tubian24-sex", _to_tubian24, 'players[3].sex（玩家 "汤圆"）', "需要每名玩家的性别"),
    ("other-table", _two_tables, "m135", "本局规则集是 zhenyan，不能有规则集 m135 的表 [m135]"),
    ("secrets-table", _secrets_table, "secrets", "以规则集命名的表里"),
    ("secret-not-table", _set("zhenyan", "月亮"), "zhenyan", "应为表"),
    ("players-empty", _set("players", []), "players", "不能为空"),
    (
        "cookie-env-value",
        _set("forum.cookie_env", COOKIE),
        "forum.cookie_env",
        "应为环境变量的名字",
    ),
]


@pytest.mark.parametrize(
    ("mutate", "key_path", "expected"),
    [case[1:] for case in BAD_CASES],
    ids=[case[0] for case in BAD_CASES],
)
def test_each_problem_is_named_with_its_key_path(
    mutate: Mutation, key_path: str, expected: str
) -> None:
    data = valid_data()
    mutate(data)
    message = problems_of(data, env={"BANSHA_COOKIE": COOKIE})
    assert expected in line_for(message, key_path)


def test_unknown_ruleset_lists_the_five() -> None:
    data = valid_data()
    data["game"]["ruleset"] = "werewolf"
    line = line_for(problems_of(data), "game.ruleset")
    assert all(ruleset in line for ruleset in RULESETS)


def test_list_items_say_which_entry_when_the_name_is_missing() -> None:
    data = valid_data()
    del data["players"][3]["name"]
    data["days"][1]["day"] = "二"
    message = problems_of(data)
    assert "players[3].name（第 4 个 [[players]]）：缺少必填项" in message
    assert "days[1].day（第 2 个 [[days]]）：应为整数" in message


def test_every_problem_is_collected_before_anything_runs(tmp_path: Path) -> None:
    text = VALID.read_text(encoding="utf-8")
    text = text.replace('ruleset = "zhenyan"', 'ruleset = "zhenyan"\nlanguage = "zh"')
    text = text.replace("uid = 102", 'uid = "102"')
    text = text.replace("vote = 12356", 'vote = "abc"')
    text = text.replace("closes = 2026-12-04T22:00:00+08:00", "closes = 2026-12-02T22:00:00")
    path = tmp_path / "broken.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GameFileError) as info:
        load_game(path, env={})
    lines = str(info.value).splitlines()
    assert lines[0] == f"游戏文件 {path} 有 4 处错误，未做任何处理："
    assert [ln.split("：")[1] for ln in lines[1:]] == [
        "game.language",
        'players[1].uid（玩家 "包子"）',
        "days[1].closes（天数 2）",
        "days[1].vote（天数 2）",
    ]
    assert all(ln.startswith(f"游戏文件 {path}：") for ln in lines[1:])
    assert len(info.value.problems) == 4


def test_one_problem_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text(VALID.read_text(encoding="utf-8").replace("uid = 104", "uid = 103"), "utf-8")
    with pytest.raises(GameFileError) as info:
        load_game(path, env={})
    assert str(info.value) == (
        f'游戏文件 {path}：players[3].uid（玩家 "汤圆"）：uid 103 与 players[2].uid 重复'
    )


def test_cross_checks_also_guard_a_game_built_in_python() -> None:
    data = parse_game(valid_data(), env={}).model_dump()
    data["players"][1]["name"] = "饺子"
    with pytest.raises(ValidationError, match="重复"):
        Game.model_validate(data)


# --------------------------------------------------------------------------- the file itself


def test_toml_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text('[game]\nid = "x"\ntitle = 测试局\n', encoding="utf-8")
    with pytest.raises(GameFileError) as info:
        load_game(path, env={})
    assert str(info.value) == (
        f"游戏文件 {path}：第 3 行第 9 列：TOML 语法错误：值无效（字符串要用双引号括起来）"
    )


def test_duplicate_key_and_unclosed_string(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text('[game]\nid = "x"\nid = "y"\n', encoding="utf-8")
    with pytest.raises(GameFileError, match="第 3 行第 9 列：TOML 语法错误：同一个键写了两次"):
        load_game(path, env={})
    path.write_text('[zhenyan]\nwords = ["月亮\n', encoding="utf-8")
    with pytest.raises(GameFileError) as info:
        load_game(path, env={})
    assert "第 2 行" in str(info.value) and "字符串缺少结束的引号" in str(info.value)
    assert "月亮" not in str(info.value)  # the line's text may be a secret: never shown


def test_bom_is_accepted_and_gbk_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_bytes(b"\xef\xbb\xbf" + VALID.read_bytes())  # Windows Notepad's UTF-8
    assert load_game(path, env={}).game.id == "zhenyan-test"
    path.write_bytes(VALID.read_text(encoding="utf-8").encode("gbk"))
    with pytest.raises(GameFileError, match="不是 UTF-8 编码"):
        load_game(path, env={})


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(GameFileError, match="找不到这个文件"):
        load_game(tmp_path / "nope.toml", env={})


# --------------------------------------------------------------------------- login and secrets


def _login(data: dict[str, Any]) -> dict[str, Any]:
    data["forum"]["requires_login"] = True
    return data


def test_login_forum_needs_the_cookie_variable() -> None:
    message = problems_of(_login(valid_data()), env={})
    assert message == (
        "游戏文件 game.toml：forum.cookie_env：论坛需要登录（requires_login = true），"
        "但环境变量 BANSHA_COOKIE 未设置或为空；"
        "请把导演账号的登录 cookie 放进环境变量 BANSHA_COOKIE"
    )
    assert "未设置或为空" in problems_of(_login(valid_data()), env={"BANSHA_COOKIE": "  "})
    game = parse_game(_login(valid_data()), env={"BANSHA_COOKIE": COOKIE})
    assert game.forum.requires_login is True


def test_cookie_variable_is_the_one_named_in_the_file() -> None:
    data = _login(valid_data())
    data["forum"]["cookie_env"] = "MY_FORUM_COOKIE"
    assert "环境变量 MY_FORUM_COOKIE 未设置" in problems_of(data, env={"BANSHA_COOKIE": COOKIE})
    assert parse_game(data, env={"MY_FORUM_COOKIE": COOKIE}).forum.cookie_env == "MY_FORUM_COOKIE"


def test_guest_readable_forum_needs_no_cookie() -> None:
    assert parse_game(valid_data(), env={}).forum.requires_login is False


def test_account_login_stands_in_for_the_cookie() -> None:
    data = _login(valid_data())
    data["forum"] |= {"username_env": "BANSHA_USER", "password_env": "BANSHA_PASSWORD"}
    assert "BANSHA_COOKIE" in problems_of(data, env={"BANSHA_USER": "导演"})
    env = {"BANSHA_USER": "导演", "BANSHA_PASSWORD": "pw-123456"}
    assert parse_game(data, env=env).forum.username_env == "BANSHA_USER"


def test_secrets_never_appear_in_any_message() -> None:
    env = {"BANSHA_COOKIE": COOKIE, "MY_COOKIE": COOKIE}
    for _, mutate, _, _ in BAD_CASES:
        data = _login(valid_data())
        mutate(data)
        message = problems_of(data, env=env)
        assert COOKIE not in message and "S3cr3t" not in message
        assert not any(word in message for word in SECRET_WORDS)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    tail=st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=8),
    where=st.sampled_from(["cookie_env", "username_env", "password_env"]),
    broken=st.sampled_from(BAD_CASES),
)
def test_a_pasted_cookie_is_never_echoed(tail: str, where: str, broken: Any) -> None:
    # A director pastes the cookie where a variable's name belongs: no message may leak it.
    cookie = "cdb_auth=" + tail
    data = _login(copy.deepcopy(_VALID_DATA))
    data["forum"][where] = cookie
    broken[1](data)  # plus another, unrelated mistake (or the forum table dropped)
    with pytest.raises(GameFileError) as info:
        parse_game(data, source="game.toml", env={"BANSHA_COOKIE": cookie})
    assert cookie not in str(info.value)
    if "forum" in data:
        assert "应为环境变量的名字" in str(info.value)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(tid=st.text(min_size=1, max_size=8))
def test_any_quoted_tid_is_refused(tid: str) -> None:
    data = copy.deepcopy(_VALID_DATA)
    data["days"][0]["progress"] = tid
    with pytest.raises(GameFileError) as info:
        parse_game(data, source="game.toml", env={})
    assert "days[0].progress（天数 1）：帖子编号必须是" in str(info.value)


# --------------------------------------------------------------------------- the store's path


def test_default_db_path_is_beside_the_game_file() -> None:
    assert default_db_path(Path("config/games/demo.toml")) == Path("config/games/demo.db")


def test_db_path_precedence() -> None:
    game = Path("games/demo.toml")
    env = {"BANSHA_DB": "/var/lib/bansha/demo.db"}
    assert resolve_db_path(game, "/tmp/x.db", env) == Path("/tmp/x.db")  # --db wins
    assert resolve_db_path(game, None, env) == Path("/var/lib/bansha/demo.db")
    assert resolve_db_path(game, None, {"BANSHA_DB": ""}) == Path("games/demo.db")
    assert resolve_db_path(game, None, {}) == Path("games/demo.db")


# --------------------------------------------------------------------------- [drafts]


def test_drafts_table_is_optional_with_defaults() -> None:
    drafts = parse_game(valid_data(), env={}).drafts
    assert drafts.reminder_minutes == 60 and drafts.director_signature == ""
    assert drafts.templates is None and drafts.max_post_bytes == 10000


def test_drafts_table_settings_are_read_and_round_trip() -> None:
    data = valid_data()
    data["drafts"] = {
        "reminder_minutes": 90,
        "director_signature": "[align=right][真言]导演[/align]",
        "templates": "my_templates",
        "max_post_bytes": 20000,
    }
    game = parse_game(data, env={})
    assert game.drafts.reminder_minutes == 90 and game.drafts.templates == "my_templates"
    assert game.drafts.director_signature == "[align=right][真言]导演[/align]"
    assert parse_game(game.to_toml_dict(), env={}) == game


def test_drafts_table_problems_name_the_key() -> None:
    data = valid_data()
    data["drafts"] = {"reminder_minutes": 0, "max_post_bytes": 500, "reminder": 60}
    message = problems_of(data)
    assert line_for(message, "drafts.reminder_minutes").endswith("：应为正整数")
    assert line_for(message, "drafts.max_post_bytes").endswith("：不能小于 1000")
    assert line_for(message, "drafts.reminder").endswith(
        "：未知的键（拼写错误？是不是 reminder_minutes？见 docs/游戏文件.md）"
    )


def test_m135_card_rules_are_checked_at_load(tmp_path):
    """m135.txt:90 女巫身份必须作为第二身份 — a file breaking it does not load."""
    from pathlib import Path

    demo = Path(__file__).resolve().parents[3] / "config" / "games" / "demo.toml"
    text = demo.read_text(encoding="utf-8")
    import re

    first = re.search(r'cards = \["([^"]+)", "女巫"\]', text)
    assert first, "the demo gives someone 女巫 as second card"
    bad = text.replace(first.group(0), f'cards = ["女巫", "{first.group(1)}"]', 1)
    path = tmp_path / "bad.toml"
    path.write_text(bad, encoding="utf-8")
    with pytest.raises(GameFileError) as err:
        load_game(path, env={})
    assert "女巫身份必须作为第二身份（m135.txt:90）" in str(err.value)


# --------------------------------------------------------------------------- wrong types


RULESET_CHOICES = (
    "m209（新RD规则）、zhenyan（狼人真言）、m135（让子弹飞）、tubian24（变异屠边24人局）、"
    "nizhuan（逆转时空）"
)


@pytest.mark.parametrize(
    "value", [[], {}, ["m135"], {"id": "m135"}, 3, 1.5, True, datetime(2026, 12, 1, tzinfo=CST)]
)
def test_a_ruleset_of_another_type_is_a_problem_line_not_a_traceback(value: object) -> None:
    """``ruleset = []`` / ``{}`` once raised TypeError (unhashable) in the cross checks."""
    data = valid_data()
    data["game"]["ruleset"] = value
    message = problems_of(data)
    assert line_for(message, "game.ruleset") == (
        f'游戏文件 game.toml：game.ruleset：应为字符串（用双引号括起来），如 "m135"；'
        f"可选：{RULESET_CHOICES}"
    )


@pytest.mark.parametrize("value", [[], {}, 3, True])
@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("game.id", "应为字符串（用双引号括起来）"),
        ("game.title", "应为字符串（用双引号括起来）"),
        ("game.timezone", "应为字符串（用双引号括起来）"),
        ("forum.base_url", "应为字符串（用双引号括起来）"),
        ("forum.cookie_env", "应为字符串（用双引号括起来）"),
        ("forum.encoding", '应为字符串（用双引号括起来），可选："auto"、"utf-8"、"gbk"'),
        ("forum.source", '应为字符串（用双引号括起来），可选："auto"、"mobile-api"、"html"'),
        ("players.0.sex", '应为字符串（用双引号括起来），可选："男"、"女"'),
        ("drafts.templates", "应为字符串（用双引号括起来）"),
        ("drafts.director_signature", "应为字符串（用双引号括起来）"),
    ],
)
def test_string_keys_of_another_type_name_the_key(path: str, expected: str, value: object) -> None:
    data = valid_data()
    data.setdefault("drafts", {})
    _set(path, value)(data)
    key = path.replace(".0.", "[0].")
    assert line_for(problems_of(data), key).endswith(f"：{expected}")


def test_the_roster_and_days_of_another_type_say_they_are_table_arrays() -> None:
    data = valid_data()
    data["players"], data["days"] = {}, "第1天"
    message = problems_of(data)
    assert line_for(message, "players").endswith("：players：应为 [[players]] 表数组")
    assert line_for(message, "days").endswith("：days：应为 [[days]] 表数组")


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(
        [
            ("game", "id"),
            ("game", "ruleset"),
            ("game", "timezone"),
            ("forum", "base_url"),
            ("forum", "encoding"),
            ("forum", "cookie_env"),
            ("director", "names"),
            ("drafts", "templates"),
            ("votes", "strict_names"),
        ]
    ),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=5,
    ).filter(lambda v: v is not None),
)
def test_any_value_of_any_type_gives_problem_lines(where: tuple[str, str], value: object) -> None:
    data = copy.deepcopy(_VALID_DATA)
    data.setdefault(where[0], {})[where[1]] = value
    try:
        parse_game(data, source="game.toml", env={})
    except GameFileError as exc:
        assert all(line.startswith("游戏文件 game.toml") for line in str(exc).splitlines())


@pytest.mark.parametrize("breaker", ["\x85", "\u2028", "\u2029", "\x0b", "\x1c"])
def test_a_line_break_in_a_value_never_splits_a_problem_line(breaker: str) -> None:
    """Hypothesis found ``ruleset = "\x85"``: every problem stays one line, the break escaped."""
    data = copy.deepcopy(_VALID_DATA)
    data["game"]["ruleset"] = f"m1{breaker}35"
    with pytest.raises(GameFileError) as exc:
        parse_game(data, source="game.toml", env={})
    lines = str(exc.value).splitlines()
    assert all(line.startswith("游戏文件 game.toml") for line in lines)
    assert len(lines) == len(exc.value.problems) + (len(exc.value.problems) > 1)
    assert any(f"\\u{ord(breaker):04x}" in line for line in lines)


# --------------------------------------------------------------------------- [drafts] templates


def _game_with_templates(folder: Path, templates: str) -> Path:
    text = DEMO.read_text(encoding="utf-8")
    path = folder / "game.toml"
    path.write_text(text + f"\n[drafts]\ntemplates = {json.dumps(templates)}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("inside", ["mine", "./mine", "mine/sub", "."])
def test_a_templates_folder_inside_the_game_folder_loads(tmp_path: Path, inside: str) -> None:
    (tmp_path / "mine" / "sub").mkdir(parents=True)
    game = load_game(_game_with_templates(tmp_path, inside), env={})
    assert game.drafts.templates == inside


def test_an_absolute_templates_path_inside_the_game_folder_loads(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    load_game(_game_with_templates(tmp_path, str(tmp_path / "mine")), env={})


@pytest.mark.parametrize(
    ("templates", "why"),
    [
        ("../elsewhere", "不能用 .."),
        ("mine/../../elsewhere", "不能用 .."),
        ("..", "不能用 .."),
        ("/etc", "这是别处的绝对路径"),
        ("~", "这是别处的绝对路径"),
    ],
)
def test_a_templates_folder_outside_the_game_folder_is_refused(
    tmp_path: Path, templates: str, why: str
) -> None:
    """Templates are code bansha runs: a game file names only a folder beside it."""
    game_dir = tmp_path / "game"
    game_dir.mkdir()
    path = _game_with_templates(game_dir, templates)
    with pytest.raises(GameFileError) as err:
        load_game(path, env={})
    line = next(ln for ln in str(err.value).splitlines() if "drafts.templates" in ln)
    assert line.startswith(
        f"游戏文件 {path}：drafts.templates：草稿模板目录必须在游戏文件所在的目录之内"
    )
    assert why in line and json.dumps(templates) in line


@pytest.mark.skipif(sys.platform == "win32", reason="Windows makes up ~user's folder")
@pytest.mark.parametrize("templates", ["~bansha-no-such-user-7f3a/mine", "~0"])
def test_a_templates_folder_under_a_home_folder_that_is_not_here_is_a_problem_line(
    tmp_path: Path, templates: str
) -> None:
    """Hypothesis found ``templates = "~0"``: the check said RuntimeError, not what is wrong."""
    path = _game_with_templates(tmp_path, templates)
    with pytest.raises(GameFileError) as err:
        load_game(path, env={})
    line = next(ln for ln in str(err.value).splitlines() if "drafts.templates" in ln)
    head = templates.split("/")[0]
    assert line.startswith(f"游戏文件 {path}：drafts.templates：找不到 {head} 的主目录")


def test_a_templates_folder_that_links_out_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    game_dir = tmp_path / "game"
    game_dir.mkdir()
    (game_dir / "mine").symlink_to(outside, target_is_directory=True)
    path = _game_with_templates(game_dir, "mine")
    with pytest.raises(GameFileError) as err:
        load_game(path, env={})
    assert (
        f"drafts.templates：草稿模板目录必须在游戏文件所在的目录之内（{game_dir.resolve()}）"
        in str(err.value)
    )
    assert "指向了外面（符号链接）" in str(err.value)


def test_a_dotdot_templates_path_is_refused_without_a_file_too() -> None:
    data = valid_data()
    data["drafts"] = {"templates": "../x"}
    assert '不能用 ..："../x"' in line_for(problems_of(data), "drafts.templates")


# --------------------------------------------------------------------------- the secret table


def test_an_unknown_key_of_the_secret_table_is_refused_with_the_nearest_key() -> None:
    # a misspelt key of [zhenyan] would be ignored, and the words with it: the file is refused,
    # naming the key, the one meant and the keys docs/游戏文件.md lists; never the value
    data = valid_data()
    data["zhenyan"]["word"] = ["机密词"]
    message = problems_of(data)
    assert line_for(message, "zhenyan.word") == (
        "游戏文件 game.toml：zhenyan.word：未知的键（拼写错误？是不是 words？）；"
        "[zhenyan] 表可用的键：words、variants（见 docs/游戏文件.md）"
    )
    assert "机密词" not in message and "月亮" not in message
    # the words' own check does not add a second line for the same table
    assert "表有误" not in message


def test_the_secret_keys_come_from_the_rule_sets_module() -> None:
    # tubian24's SECRET_KEYS (engine/rulesets/tubian24.py) and a rule set without a table
    data = valid_data()
    data["game"]["ruleset"] = "tubian24"
    del data["zhenyan"]
    del data["days"][0]["inquiry"]
    for p in data["players"]:
        p["sex"] = "男"
    data["tubian24"] = {"kill_oder": ["饺子"]}
    line = line_for(problems_of(data), "tubian24.kill_oder")
    assert line.endswith(
        "未知的键（拼写错误？是不是 kill_order？）；[tubian24] 表可用的键：kill_order、master、"
        "thief、thief_cards、thief_pick、lead_wolf（见 docs/游戏文件.md）"
    )
    data["game"]["ruleset"] = "m135"
    data["m135"] = {"lineup": ["狼人"]}
    del data["tubian24"]
    line = line_for(problems_of(data), "m135.lineup")
    assert line.endswith(
        "未知的键（拼写错误？）；规则集 m135 没有秘密表，不必写 [m135]（见 docs/游戏文件.md）"
    )


def test_every_rule_sets_secret_keys_load() -> None:
    # every key a rule set declares is accepted in its table (the engine reads it)
    from engine.rulesets import get_ruleset

    for ruleset in RULESETS:
        keys = get_ruleset(ruleset).secret_keys
        data = valid_data()
        del data["zhenyan"]
        data["game"]["ruleset"] = ruleset
        data[ruleset] = dict.fromkeys(keys, "x")
        try:
            parse_game(data, env={}, check_login=False)
        except GameFileError as exc:
            assert not [p for p in exc.problems if p.loc.startswith(f"{ruleset}.")], exc
