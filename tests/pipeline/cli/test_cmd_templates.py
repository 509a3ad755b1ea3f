"""``bansha templates 目录``: the default draft templates copied out for a director to reshape
(an installed bansha keeps them inside its package, out of a director's reach otherwise)."""

from __future__ import annotations

from click.testing import CliRunner

from pipeline import resources
from pipeline.cli import cli
from pipeline.drafts import DraftKind, load_templates


def test_the_defaults_are_copied_and_a_directors_own_is_never_overwritten(tmp_path):
    folder = tmp_path / "我的模板"
    folder.mkdir()
    (folder / "reminder.j2").write_text("导演自己的提醒\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["templates", str(folder)])
    assert result.exit_code == 0, result.output
    assert "已经存在，没有覆盖：reminder.j2" in result.output
    assert 'templates = "我的模板"' in result.output
    assert (folder / "reminder.j2").read_text(encoding="utf-8") == "导演自己的提醒\n"
    defaults = resources.templates_dir()
    result_j2 = (folder / "result.j2").read_bytes()
    assert result_j2 == (defaults / "result.j2").read_bytes()
    # the copies are a complete folder of templates: drafting reads them, the edit wins
    templates = load_templates(folder)
    assert templates.origin["result.j2"] == folder / "result.j2"
    assert templates.origin["reminder.j2"] == folder / "reminder.j2"
    assert DraftKind.DEAL_COMMIT.value + ".j2" not in {p.name for p in folder.iterdir()}


def test_a_folder_that_cannot_be_made_is_said_in_chinese(tmp_path):
    blocker = tmp_path / "文件"
    blocker.write_text("")
    result = CliRunner().invoke(cli, ["templates", str(blocker / "模板")])
    assert result.exit_code == 1
    assert "无法创建目录" in result.output


def test_a_template_edited_between_cycles_drafts_with_the_edit(tmp_path):
    """One process drafts cycle after cycle (``bansha run``): templates whose texts did not
    change are compiled once; a director's edit on disk is read and used at the next draft."""
    folder = tmp_path / "模板"
    folder.mkdir()
    own = folder / "reminder.j2"
    own.write_text("第{{ day }}天请投票\n", encoding="utf-8")
    first = load_templates(folder)
    assert load_templates(folder) is first  # nothing changed: nothing compiled again
    assert first.render(DraftKind.REMINDER, {"day": 2}) == "第2天请投票"
    own.write_text("第{{ day }}天还没投票的请投票\n", encoding="utf-8")
    edited = load_templates(folder)
    assert edited is not first
    assert edited.render(DraftKind.REMINDER, {"day": 2}) == "第2天还没投票的请投票"
    assert first.render(DraftKind.REMINDER, {"day": 2}) == "第2天请投票"  # drafted before
