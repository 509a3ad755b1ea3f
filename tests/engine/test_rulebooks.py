"""Rule references as the director knows them: the rule post's title and its section.

A verdict's data keeps ``file:line`` (``m135.txt:202``) for a maintainer; what a director reads
names the post and the section (``《[M135]『让子弹飞』》游戏流程·投票规则``). The sections are
checked against the rule texts where those are at hand; everything else runs without them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.conduct import FlagKind
from engine.rulesets import get_ruleset, ruleset_ids
from engine.rulesets.rulebooks import RULEBOOKS, RULINGS, cite, rule_name
from tests.engine.rule_text import RULES

ROOT = Path(__file__).resolve().parents[2]
RULE_TEXTS = RULES  # the rule texts beside the repository
_CITED = re.compile(r"\b(\w+\.txt):(\d+)")
_ANCHOR = re.compile(r"docs/rulings\.md#([\w-]+)")


def _code_files() -> list[Path]:
    here = ROOT / "engine" / "rulesets" / "rulebooks.py"
    pkgs = ("engine", "parsers", "pipeline")
    return [p for pkg in pkgs for p in (ROOT / pkg).rglob("*.py") if p != here]


CONDUCT = {r: get_ruleset(r).conduct for r in ruleset_ids()}


def test_a_vote_rule_reads_as_the_post_and_its_section() -> None:
    # m135.txt:202 每名存活角色每个讨论日限投一票 — under 游戏流程 › 投票规则 (m135.txt:165, 200)
    assert cite("m135.txt:202") == "《[M135]『让子弹飞』》游戏流程·投票规则"
    assert rule_name("m135.txt:202") == "《[M135]『让子弹飞』》游戏流程·投票规则"
    # a range is named by its first line
    assert cite("m209.txt:22-33") == "《[M209]巴啦啦小魔仙》导言（阵容）"
    # 蓝牌 under 违规判定 › 判罚制度 (m135.txt:233-236)
    assert cite("m135.txt:237") == "《[M135]『让子弹飞』》违规判定·蓝牌"


def test_the_sheriff_is_named_as_its_own_entry_not_the_copycat_before_it() -> None:
    # m135.txt:140-145 【其他】 1. 复制人 … 2. 警长<非身份>; 殉职 is m135.txt:149
    assert cite("m135.txt:143") == "《[M135]『让子弹飞』》身份与阵营·复制人"
    assert cite("m135.txt:149") == "《[M135]『让子弹飞』》身份与阵营·警长"


def test_several_references_each_named_once() -> None:
    assert cite("m135.txt:202；m135.txt:203；m135.txt:238") == (
        "《[M135]『让子弹飞』》游戏流程·投票规则；《[M135]『让子弹飞』》违规判定·蓝牌"
    )


def test_conduct_flags_cite_their_own_section_of_the_penalty_rules() -> None:
    # zhenyan.txt:276-278 6、帐号及回帖 （1）……放大字体、红色字体 （2）……（即“诈尸”）
    assert cite(CONDUCT["zhenyan"].rule(FlagKind.FONT)) == "《狼人真言》违规判定·帐号及回帖"
    assert cite(CONDUCT["zhenyan"].rule(FlagKind.ZHASHI)) == (
        "《狼人真言》违规判定·帐号及回帖；《狼人真言》用语定义·出局"
    )
    # zhenyan.txt:271-274 5、潜水; zhenyan.txt:290-291 8、其他 （1）警长……
    assert cite(CONDUCT["zhenyan"].rule(FlagKind.NO_VOTE)).startswith("《狼人真言》违规判定·潜水")
    assert "违规判定·其他" in cite(CONDUCT["zhenyan"].rule(FlagKind.SHERIFF_ANSWER))
    # the same floors of the other texts (m209.txt:721, m135.txt:315, tubian24.txt:297, :306)
    assert cite(CONDUCT["m209"].rule(FlagKind.ZHASHI)).endswith("违规判定·帐号及回帖")
    assert cite(CONDUCT["m135"].rule(FlagKind.FONT)).endswith("违规判定·帐号及回帖")
    assert cite(CONDUCT["tubian24"].rule(FlagKind.ZHASHI)).endswith("违规判定·发帖与诈尸")
    assert cite(CONDUCT["tubian24"].rule(FlagKind.FONT)).endswith("违规判定·字体")
    # "zhenyan.txt:64, 82": the bare line is of the same text
    assert (
        cite("zhenyan.txt:64, 82")
        == "《狼人真言》身份与阵营·狼人阵营；《狼人真言》身份与阵营·村民阵营"
    )


def test_bansha_own_rulings_are_named_by_their_section() -> None:
    assert cite("docs/rulings.md#conduct-defaults") == "《bansha 规则解读》违规标记"


def test_an_unknown_reference_is_kept_as_written() -> None:
    assert cite("规则帖第三楼") == "规则帖第三楼"
    assert cite("other.txt:3") == "other.txt:3"
    assert cite("") == "" and cite(None) == ""


def test_every_rule_text_the_code_cites_has_a_rulebook_and_a_section() -> None:
    missing = []
    for path in _code_files():
        for file, line in _CITED.findall(path.read_text(encoding="utf-8")):
            if line == "0":  # a default meaning "no line", not a citation
                continue
            book = RULEBOOKS.get(file)
            if book is None or not book.section(int(line)):
                missing.append(f"{path.relative_to(ROOT)}: {file}:{line}")
    assert missing == []


def test_every_ruling_the_code_cites_is_named_after_its_section_in_the_rulings() -> None:
    text = (ROOT / "docs" / "rulings.md").read_text(encoding="utf-8")
    heading = ""
    where: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("## "):
            heading = re.sub(r"（[ -~]*）$", "", line[3:]).strip()  # the English name goes
        for anchor in re.findall(r'<a id="([\w-]+)"></a>', line):
            where[anchor] = heading
    cited = {a for p in _code_files() for a in _ANCHOR.findall(p.read_text(encoding="utf-8"))}
    assert sorted(cited - set(RULINGS)) == []
    assert {a: where.get(a) for a in RULINGS} == RULINGS


def _rule_lines(file: str) -> list[str]:
    path = RULE_TEXTS / file
    if not path.exists():
        pytest.skip(f"规则原文不在 {RULE_TEXTS}：只有核对章节标题的这项检查需要它")
    return path.read_text(encoding="utf-8").split("\n")


@pytest.mark.parametrize("file", sorted(RULEBOOKS))
def test_each_section_starts_at_its_heading_in_the_rule_text(file: str) -> None:
    lines = _rule_lines(file)
    assert lines[0].replace(" ", "").find(RULEBOOKS[file].title.replace(" ", "")[-4:]) >= 0
    wrong = []
    for first, name in RULEBOOKS[file].sections:
        if name == "开篇" or first in RULEBOOKS[file].floors:
            continue
        last = re.sub(r"（占楼待编辑）$", "", name.split("·")[-1])
        words = last.replace("与背景故事", "").split()
        found = re.sub(r"\s+", "", lines[first - 1])
        if not all(w in found or w in lines[first - 1] for w in words):
            wrong.append(f"{file}:{first} {name!r}: {lines[first - 1][:30]!r}")
    assert wrong == []
