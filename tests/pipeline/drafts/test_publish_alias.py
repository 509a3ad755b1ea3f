"""``bansha publish`` is the posting command; ``bansha post`` stays as an alias.

``posts`` (the list of crawled posts) and ``post`` (send drafts) were one letter apart: the
posting command is now ``publish``; ``post`` still works the same (same subcommands, same
default, same options) and is not listed a second time in ``bansha --help``. The lines a
director reads name the draft's kind in Chinese (``投票结果``, not ``result``).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from click.testing import CliRunner

import pipeline.cli.post as cmd_post
from pipeline.cli import cli
from pipeline.cli.post import result_line
from pipeline.drafts.publish import PublishResult
from tests.pipeline.discuz.test_poster import DIRECTOR, RESULT, game_file, make_world


def run(args: list[str], env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(cli, args, env=env or {}, catch_exceptions=False)


def command_rows(help_text: str) -> list[str]:
    """The command names listed under 命令: in a --help."""
    rows = help_text.split("命令:", 1)[1].split("示例：", 1)[0].splitlines()
    return [row.split()[0] for row in rows if row.startswith("  ") and row.split()]


def test_help_lists_publish_once_and_not_post():
    out = run(["--help"])
    assert out.exit_code == 0, out.output
    names = command_rows(out.output)
    assert names.count("publish") == 1
    assert "post" not in names  # the alias works but is not listed twice
    assert "posts" in names  # the list of crawled posts stays
    assert "旧名 post 也可用" in out.output


@pytest.mark.parametrize("name", ["publish", "post"])
def test_both_names_have_the_same_subcommands(name):
    out = run([name, "--help"])
    assert out.exit_code == 0, out.output
    assert command_rows(out.output) == ["send*", "record"]
    assert cli.commands["post"].commands is cli.commands["publish"].commands


@pytest.fixture
def cli_world(tmp_path, monkeypatch):
    world = make_world(tmp_path)
    monkeypatch.setattr(
        cmd_post, "http_client_factory", lambda: httpx.Client(transport=world.sim.transport())
    )
    env = {"BANSHA_COOKIE": world.sim.login_cookie(DIRECTOR), "BANSHA_DB": ""}
    return world, game_file(tmp_path), ["--db", str(tmp_path / "game.db")], env


@pytest.mark.parametrize("name", ["publish", "post"])
def test_either_name_posts_an_approved_draft_once_and_says_its_kind_in_chinese(cli_world, name):
    world, path, db, env = cli_world
    draft_id = world.add_draft(RESULT)

    out = run([name, str(path), *db], env)

    assert out.exit_code == 0, out.output
    [pid] = world.copies(RESULT)
    assert f"草稿 #{draft_id}（投票结果，第2天）已发出 → 帖子 tid=2012 pid={pid}" in out.output
    assert "result" not in out.output.split("http")[0]  # no English kind before the link
    again = run([name, str(path), *db], env)
    assert again.exit_code == 0 and "没有已批准、等待发出的草稿" in again.output
    assert world.copies(RESULT) == [pid]


@pytest.mark.parametrize("name", ["publish", "post"])
def test_either_name_takes_the_same_options(cli_world, name):
    world, path, db, env = cli_world
    draft_id = world.add_draft(RESULT, state="pending")
    out = run([name, str(path), *db, "--id", str(draft_id)], env)
    assert out.exit_code == 1
    assert "状态是「待批准」，只有已批准的草稿才会发出（先 bansha drafts approve）" in out.output
    assert world.reply_posts() == []


@pytest.mark.parametrize("name", ["publish", "post"])
def test_either_name_records_a_post_made_by_hand(cli_world, name):
    world, path, db, env = cli_world
    draft_id = world.add_draft(RESULT)
    by_hand = world.sim.add_post(2012, DIRECTOR, RESULT, world.clock.advance(minutes=1))

    out = run([name, "record", str(path), str(draft_id), "--pid", str(by_hand), *db], env)

    assert out.exit_code == 0, out.output
    assert f"草稿 #{draft_id} 已登记为发出 → 帖子 tid=2012 pid={by_hand}" in out.output


def test_a_result_line_names_every_kind_in_chinese():
    lines = {
        kind: result_line(PublishResult(7, kind, 2, 2012, "refused", message="论坛拒绝了"))
        for kind in ("result", "cards", "day_open", "reminder", "running_tally", "elevator")
    }
    assert lines["result"] == "草稿 #7（投票结果，第2天）未发出：论坛拒绝了"
    assert lines["cards"] == "草稿 #7（判罚，第2天）未发出：论坛拒绝了"
    assert lines["day_open"] == "草稿 #7（开门公示，第2天）未发出：论坛拒绝了"
    assert lines["reminder"] == "草稿 #7（投票提醒，第2天）未发出：论坛拒绝了"
    assert lines["running_tally"] == "草稿 #7（计票，第2天）未发出：论坛拒绝了"
    assert lines["elevator"] == "草稿 #7（电梯，第2天）未发出：论坛拒绝了"


@pytest.mark.parametrize("name", ["publish", "post"])
def test_bare_publish_in_a_folder_with_one_game_file_sends(cli_world, name, monkeypatch):
    # like every command, the game file is the only one in the folder (its store beside it):
    # a bare `bansha publish` is `bansha publish send`, not a usage error
    world, path, _db, env = cli_world
    draft_id = world.add_draft(RESULT)
    monkeypatch.chdir(path.parent)
    monkeypatch.delenv("BANSHA_GAME", raising=False)

    out = run([name], {**env, "BANSHA_DB": ""})

    assert out.exit_code == 0, out.output
    [pid] = world.copies(RESULT)
    assert f"草稿 #{draft_id}（投票结果，第2天）已发出 → 帖子 tid=2012 pid={pid}" in out.output
