"""A director's template the sandbox refuses ends the cron cycle with one Chinese line, never a
traceback (templates run in Jinja's sandbox)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

import pipeline.drafts as drafts_mod
from pipeline.cli import cli
from pipeline.drafts import DraftError, DraftKind, load_templates

ROOT = Path(__file__).resolve().parents[2]
GAME = ROOT / "config" / "games" / "demo.toml"


def test_a_refused_template_is_one_chinese_line_in_the_cycle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tpl = tmp_path / "my_templates"
    tpl.mkdir()
    (tpl / "running_tally.j2").write_text("{{ ''.__class__.__mro__ }}", encoding="utf-8")
    templates = load_templates(tpl)
    with pytest.raises(DraftError) as refused:  # what the sandbox says of such a template
        templates.render(DraftKind.RUNNING_TALLY, {})
    message = str(refused.value)

    def make_drafts(*args: object, **kwargs: object) -> list[int]:
        raise DraftError(message)

    # the cycle imports drafting when it drafts (pipeline.cli.cycle._draft)
    monkeypatch.setattr(drafts_mod, "make_drafts", make_drafts)
    # long before day 1 opens: nothing to crawl, the derivation runs, drafting refuses
    result = CliRunner().invoke(
        cli,
        ["cycle", str(GAME), "--as-of", "2026-11-20T08:00:00+08:00"],
        env={"BANSHA_DB": str(tmp_path / "g.db")},
    )
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"本轮未完成：{message}" in result.output
    assert "已拒绝" in message
