"""docs/游戏文件.md documents every key of the game file.

The keys are read from the models at test time (pydantic ``model_fields``, recursively, from
:class:`pipeline.game.gamefile.Game`) and from each rule set's secret table (``SECRET_KEYS``
where the rule set module has one, the pipeline's model of the table, else the keys its
``settings_from_game`` reads), so a key added to the code without a doc line fails here.

The doc's format: each section starts with an anchor ``<a id="keys-SECTION"></a>`` (Chinese) or
``<a id="en-keys-SECTION"></a>`` (English), followed by a table whose first column is the key in
backticks. SECTION is ``top`` (the file's tables), a table name (``forum``, ``players``, …), or a
rule set id (its secret table).
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import textwrap
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from engine.rulesets import get_ruleset
from engine.rulesets.base import Ruleset
from pipeline.game.gamefile import RULESETS, Game

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "游戏文件.md"

_ANCHOR = re.compile(r'<a id="(en-)?keys-([A-Za-z0-9_.]+)"></a>')
_ROW = re.compile(r"^\|\s*`([^`]+)`\s*\|(.*)\|\s*$")
_HEADING = re.compile(r"^#{1,6} ")
#: the columns of a Chinese key table: 键 | 类型 | 默认 | 示例 | 说明; English: Key | Meaning
_CELLS = {"zh": 4, "en": 1}


# --------------------------------------------------------------------------- the doc


def doc_tables(text: str | None = None) -> dict[tuple[str, str], dict[str, list[str]]]:
    """``{(lang, section): {key: [the other cells]}}`` from the doc's key tables."""
    text = DOC.read_text(encoding="utf-8") if text is None else text
    out: dict[tuple[str, str], dict[str, list[str]]] = {}
    current: tuple[str, str] | None = None
    for line in text.splitlines():
        if m := _ANCHOR.search(line):
            current = ("en" if m.group(1) else "zh", m.group(2))
            out.setdefault(current, {})
            continue
        if _HEADING.match(line) and not line.startswith("### "):
            current = None  # a higher heading ends the section (its own ### title is fine)
            continue
        if current is not None and (m := _ROW.match(line)):
            cells = [c.strip() for c in m.group(2).split("|")]
            rows = out[current]
            assert m.group(1) not in rows, f"{DOC.name}: key {m.group(1)} twice in {current}"
            rows[m.group(1)] = cells
    return out


# --------------------------------------------------------------------------- the code


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The pydantic model inside an annotation (``Forum``, ``list[Player]``), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        if (found := _submodel(arg)) is not None:
            return found
    return None


def _model_sections(
    model: type[BaseModel], section: str, out: dict[str, set[str]]
) -> dict[str, set[str]]:
    keys = out.setdefault(section, set())
    for name, field in model.model_fields.items():
        if model is Game and name == "secrets":
            continue  # not a key: the table named after the rule set (documented per rule set)
        key = field.alias or name
        keys.add(key)
        sub = _submodel(field.annotation)
        if sub is not None:
            _model_sections(sub, key if section == "top" else f"{section}.{key}", out)
    return out


def _attribute_names() -> set[str]:
    """Every field name of the game file's models: what ``settings_from_game`` may read off
    the game object (``players``, ``sex`` …), which is not a secret key."""
    return {k for keys in _model_sections(Game, "top", {}).values() for k in keys} | {"secrets"}


def _keys_read_by(fn: Callable[..., Any]) -> set[str]:
    """The identifier-like string constants in a function's source: the keys it reads from
    its table (``table.get("lineup")``, ``("reversal_day", "last_words")``)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    consts = {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    }
    return {c for c in consts if re.fullmatch(r"[a-z][a-z0-9_]*", c)} - _attribute_names()


def _pipeline_secret_models() -> dict[str, type[BaseModel]]:
    """Secret tables the pipeline validates itself (zhenyan's words: pipeline/game/words.py)."""
    from pipeline.game import words as inquiry

    return {"zhenyan": inquiry._SecretTable}


def secret_keys(ruleset_id: str) -> set[str]:
    """The keys of the rule set's secret table, as the code reads them."""
    rs = get_ruleset(ruleset_id)
    module = sys.modules[type(rs).__module__]
    keys: set[str] = set()
    listed = getattr(module, "SECRET_KEYS", None)
    if listed is not None:
        keys |= set(listed)
    elif type(rs).settings_from_game is not Ruleset.settings_from_game:
        keys |= _keys_read_by(type(rs).settings_from_game)
    model = _pipeline_secret_models().get(ruleset_id)
    if model is not None:
        keys |= {f.alias or n for n, f in model.model_fields.items()}
    return keys


def code_sections() -> dict[str, set[str]]:
    """``{section: keys}`` the doc must have, read from the code now."""
    out = _model_sections(Game, "top", {})
    out["top"] |= set(RULESETS)
    for rs in RULESETS:
        out[rs] = secret_keys(rs)
    return out


# --------------------------------------------------------------------------- tests


def undocumented(tables: dict[tuple[str, str], dict[str, list[str]]], lang: str) -> list[str]:
    """``[section] key`` of every key in the code without a line in the doc's tables."""
    return [
        f"[{section}] {key}"
        for section, keys in sorted(code_sections().items())
        for key in sorted(keys - set(tables.get((lang, section), {})))
    ]


def test_the_doc_exists_and_is_chinese_first() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text.startswith("# 游戏文件")
    assert text.index('<a id="keys-top">') < text.index("# English") < text.index("en-keys-top")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_key_of_the_model_has_a_doc_line(lang: str) -> None:
    # a key added to pipeline/gamefile.py (or to a rule set's secret table) without a line in
    # docs/游戏文件.md fails here, naming the section and the key
    tables = doc_tables()
    prefix = "en-keys-" if lang == "en" else "keys-"
    absent = [f'<a id="{prefix}{s}"></a>' for s in code_sections() if (lang, s) not in tables]
    assert not absent, f"docs/游戏文件.md has no section {absent}"
    missing = undocumented(tables, lang)
    assert not missing, f"keys without a line in docs/游戏文件.md ({lang}): {missing}"


def test_a_key_without_a_doc_line_is_reported() -> None:
    # the check above can fail: the same doc without its `ppp` line misses [forum] ppp
    text = DOC.read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.startswith("| `ppp` |")]
    assert undocumented(doc_tables("\n".join(lines)), "zh") == ["[forum] ppp"]
    assert undocumented(doc_tables("\n".join(lines)), "en") == ["[forum] ppp"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_documented_key_exists(lang: str) -> None:
    # the doc never describes a key the code does not read (a renamed or removed key)
    code = code_sections()
    extra = [
        f"[{section}] {key}"
        for (doc_lang, section), rows in sorted(doc_tables().items())
        if doc_lang == lang
        for key in sorted(set(rows) - code.get(section, set()))
    ]
    assert not extra, f"docs/游戏文件.md documents keys the code does not have: {extra}"


def test_every_line_gives_type_default_example_and_meaning() -> None:
    for (lang, section), rows in doc_tables().items():
        for key, cells in rows.items():
            assert len(cells) == _CELLS[lang], (lang, section, key, cells)
            assert all(cells), f"empty cell for [{section}] {key} ({lang}): {cells}"


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def test_the_defaults_in_the_doc_are_the_models_defaults() -> None:
    # what a director reads as the default is what bansha uses when the key is left out
    import pipeline.game.gamefile as gf

    tables = doc_tables()
    models = {"forum": gf.Forum, "director": gf.Director, "players": gf.Player}
    models |= {"days": gf.Day, "drafts": gf.Drafts, "votes": gf.Votes, "game": gf.GameInfo}
    checked = 0
    for section, model in models.items():
        for name, field in model.model_fields.items():
            default = tables[("zh", section)][name][1]
            if field.is_required():
                assert "必填" in default, f"[{section}] {name} is required; doc: {default}"
                continue
            value = field.get_default(call_default_factory=True)
            if value is None:  # no value: the doc says what happens instead
                assert not default.startswith("必填"), f"[{section}] {name}: {default}"
                continue
            shown = f"`{_toml_value(value)}`"
            assert shown in default, f"[{section}] {name}: doc says {default}, model {shown}"
            checked += 1
    assert checked >= 10


def test_rule_sets_without_a_list_of_secret_keys_are_probed() -> None:
    # m209 and nizhuan have no SECRET_KEYS list: the keys come from the source of their
    # settings_from_game; the probe must find the keys the engine reads
    assert secret_keys("m209") == {"lineup"}
    assert secret_keys("nizhuan") == {"reversal_day", "last_words"}
    assert secret_keys("m135") == set()  # m135 reads no secret table
    assert {"words", "variants"} <= secret_keys("zhenyan")
    assert {"kill_order", "master", "thief", "thief_cards", "thief_pick"} <= secret_keys("tubian24")


@pytest.mark.parametrize("ruleset_id", [r for r in RULESETS if r != "zhenyan"])
def test_each_documented_secret_key_reaches_the_engine(ruleset_id: str) -> None:
    # a documented key of [<rule set>] is one the engine really reads into its settings
    rs = get_ruleset(ruleset_id)
    for key in doc_tables()[("zh", ruleset_id)]:
        game = types.SimpleNamespace(players=(), secrets={key: ["狼人"]})
        assert key in rs.settings_from_game(game), f"[{ruleset_id}] {key} is not read"


def test_the_doc_cites_rule_files_by_name_and_line_not_by_path() -> None:
    # "m135.txt 第 90 行" is what a director can look up in the rule text they were given
    text = DOC.read_text(encoding="utf-8")
    assert "m135.txt 第 90 行" in text and "m209.txt 第 22 行" in text
    assert "shared/" not in text
    assert not re.search(r"rules/\w+\.txt", text)


# --------------------------------------------------------------------------- director-facing text

#: what a director reads: the README, docs/ and the files they edit in config/
_DIRECTOR_TEXT = ("README.md", "docs", "config")
_SUFFIXES = {".md", ".toml", ".j2", ".txt", ".example"}
#: "../shared/…" or "shared/…": a folder beside the repository, which a director does not have
_SHARED = re.compile(r"(?<![\w.-])(?:\.\./)?shared/")


def director_files() -> list[Path]:
    files: list[Path] = []
    for name in _DIRECTOR_TEXT:
        path = ROOT / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _SUFFIXES)
    return files


def shared_references(files: list[Path]) -> list[str]:
    """``file:line: text`` of every line that sends the reader to ../shared/ (the page samples
    are in the repository: tests/fixtures/discuz)."""
    out: list[str] = []
    for path in files:
        shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if _SHARED.search(line):
                out.append(f"{shown}:{n}: {line.strip()[:80]}")
    return out


def test_the_check_for_shared_references_finds_them(tmp_path: Path) -> None:
    sample = tmp_path / "x.md"
    sample.write_text(
        "格式见 `../shared/notes.md`\n规则在 shared/rules/m135.txt\n"
        "测试读取 `../shared/fixtures/discuz/`\n见 docs/游戏文件.md\n",
        encoding="utf-8",
    )
    found = shared_references([sample])
    assert [r.split(": ")[0] for r in found] == [f"{sample}:1", f"{sample}:2", f"{sample}:3"]


def test_no_director_facing_text_sends_the_director_to_shared() -> None:
    # the director has the repository and the rule texts they were given, not ../shared/
    files = director_files()
    assert ROOT / "README.md" in files and DOC in files
    found = shared_references(files)
    assert not found, "director-facing text refers to ../shared/:\n" + "\n".join(found)


def test_the_readme_links_to_the_game_file_reference() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/游戏文件.md" in readme


@pytest.mark.parametrize("ruleset_id", sorted(RULESETS))
def test_a_misspelled_secret_key_is_refused_as_the_doc_says(ruleset_id: str) -> None:
    """Every rule set's secret table refuses a key it does not read, at load; the doc says so
    and never that such a key is ignored."""
    import tomllib

    from pipeline.game.gamefile import GameFileError, parse_game

    data = tomllib.loads((ROOT / "config" / "games" / f"{ruleset_id}.toml").read_text("utf-8"))
    data.setdefault(ruleset_id, {})["kill_oder"] = 1
    with pytest.raises(GameFileError, match=rf"{ruleset_id}\.kill_oder：未知的键"):
        parse_game(data, env={}, check_login=False)
    text = DOC.read_text(encoding="utf-8")
    assert "会被忽略而不报错" not in text and "currently ignored" not in text
    assert "秘密表里拼错或多写的键（五个规则集都一样）会让游戏文件无法载入" in text
