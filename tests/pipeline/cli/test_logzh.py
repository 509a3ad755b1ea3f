"""Log lines in Chinese: the level is 提醒/错误, not WARNING/ERROR, and ``-v``
shows one Chinese line per request from our own client instead of httpx's English ones."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from pipeline.cli import cli
from pipeline.cli.logzh import ChineseFormatter, level_zh, setup_logging
from pipeline.discuz.client import DiscuzClient, RetryPolicy
from pipeline.sim.simulator import ForumSim, SimClock, SimServer, script_now

ROOT = Path(__file__).resolve().parents[3]
GAMES = ROOT / "config" / "games"


def record(level: int, msg: str, *args: object) -> logging.LogRecord:
    return logging.LogRecord("pipeline.discuz.client", level, __file__, 1, msg, args, None)


def test_levels_read_in_chinese():
    fmt = ChineseFormatter()
    warning = record(
        logging.WARNING, "第 %d 次请求失败（%s），%.1f 秒后重试：%s", 1, "无法连接论坛", 1.0, "u"
    )
    assert fmt.format(warning) == "提醒：第 1 次请求失败（无法连接论坛），1.0 秒后重试：u"
    assert fmt.format(record(logging.ERROR, "抓取帖子 %s 失败：%s", 2011, "超时")) == (
        "错误：抓取帖子 2011 失败：超时"
    )
    assert (
        fmt.format(record(logging.INFO, "读取 u：HTTP 200，10 字节")) == "读取 u：HTTP 200，10 字节"
    )
    assert fmt.format(record(logging.CRITICAL, "坏了")) == "严重错误：坏了"
    assert fmt.format(record(logging.DEBUG, "细节")) == "调试：细节"
    assert level_zh(35) == "提醒"  # a custom level between WARNING and ERROR


def test_a_traceback_still_follows_the_line():
    fmt = ChineseFormatter()
    try:
        raise ValueError("x")
    except ValueError:
        import sys

        rec = logging.LogRecord("bansha", logging.ERROR, __file__, 1, "出错了", (), sys.exc_info())
    text = fmt.format(rec)
    assert text.startswith("错误：出错了\n") and "ValueError: x" in text


@pytest.fixture
def root_logging() -> Iterator[None]:
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("httpx").level)
    yield
    root.handlers[:], root.level = saved[0], saved[1]
    logging.getLogger("httpx").setLevel(saved[2])


def test_verbose_shows_our_chinese_request_line_and_not_httpx(root_logging, capsys):
    setup_logging(verbose=True)
    transport = httpx.MockTransport(lambda req: httpx.Response(200, content=b"x" * 42))
    client = DiscuzClient(
        httpx.Client(transport=transport),
        base_url="http://bbs.example/",
        min_interval_s=0,
        cookie="c_2132_auth=SECRETSECRET",
        policy=RetryPolicy(initial_wait_s=0, jitter_s=0),
    )
    client.fetch(
        "http://bbs.example/forum.php?mod=viewthread&tid=7&formhash=abcdef12", lambda f: f.body
    )
    err = capsys.readouterr().err
    assert (
        "读取 http://bbs.example/forum.php?mod=viewthread&tid=7&formhash=***：HTTP 200，42 字节"
        in err
    )
    assert "HTTP Request" not in err and "INFO" not in err
    assert "SECRETSECRET" not in err and "abcdef12" not in err


def test_quiet_without_verbose(root_logging, capsys):
    setup_logging(verbose=False)
    transport = httpx.MockTransport(lambda req: httpx.Response(200, content=b"ok"))
    client = DiscuzClient(
        httpx.Client(transport=transport), base_url="http://bbs.example/", min_interval_s=0
    )
    client.fetch("http://bbs.example/forum.php", lambda f: f.body)
    assert capsys.readouterr().err == ""


def test_a_form_post_is_logged_without_its_fields(caplog):
    transport = httpx.MockTransport(lambda req: httpx.Response(200, content=b"ok"))
    client = DiscuzClient(
        httpx.Client(transport=transport), base_url="http://bbs.example/", min_interval_s=0
    )
    with caplog.at_level(logging.INFO, logger="pipeline.discuz.client"):
        client.post_form("http://bbs.example/member.php?mod=logging", {"password": "hunter2hunter"})
    assert "提交表单 http://bbs.example/member.php?mod=logging：HTTP 200" in caplog.text
    assert "hunter2hunter" not in caplog.text


@pytest.fixture
def forum(tmp_path: Path) -> Iterator[tuple[ForumSim, Path]]:
    now = script_now(GAMES / "demo_posts.toml")
    assert now is not None
    sim = ForumSim.from_script(GAMES / "demo.toml", GAMES / "demo_posts.toml", SimClock(now))
    with SimServer(sim) as server:
        text = (GAMES / "demo.toml").read_text("utf-8")
        text = text.replace(
            'base_url = "http://127.0.0.1:8080/"', f'base_url = "{server.base_url}"'
        )
        text = text.replace("min_interval_s = 1.0", "min_interval_s = 0.0")
        game = tmp_path / "game.toml"
        game.write_text(text, "utf-8")
        yield sim, game


def test_the_cli_says_its_levels_and_requests_in_chinese(forum, tmp_path, root_logging):
    """``pipeline.cli``'s ``_setup_logging`` calls :func:`pipeline.cli.logzh.setup_logging`."""
    sim, game = forum
    sim.faults.add("500", count=1, match="tid=2001")
    result = CliRunner().invoke(
        cli,
        ["-v", "crawl", str(game), "--db", str(tmp_path / "game.db"), "--thread", "2001"],
        env={"BANSHA_DB": ""},
    )
    assert result.exit_code == 0, result.output
    err = result.stderr
    assert "第 1 次请求失败（论坛返回 HTTP 500）" in err  # -v: each retry, at INFO
    assert "读取 http://127.0.0.1:" in err and "tid=2001" in err and "：HTTP 200，" in err
    for english in ("WARNING", "ERROR", "INFO", "HTTP Request"):
        assert english not in err, err
