"""The secret words of a rule set with an inquiry thread (狼人真言's 4 words, ``[zhenyan]``):
the game file's table, validated when the file loads, compared as a careful director would."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from engine.rulesets import get_ruleset, ruleset_ids
from engine.rulesets.base import InquiryRules
from parsers.text import normalize

if TYPE_CHECKING:
    from pipeline.game.gamefile import Game


class InquiryError(ValueError):
    """The rule set's secret table (``[zhenyan]``) cannot be used (Chinese; never quotes a
    secret)."""


# --------------------------------------------------------------------------- the secrets


class _SecretTable(BaseModel):
    """The secret table; validated with ``context={"words": n}``, the rule set's number of
    words."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    words: list[str]
    variants: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("words")
    @classmethod
    def _count(cls, value: list[str], info: ValidationInfo) -> list[str]:
        want = (info.context or {}).get("words")
        if want is not None and len(value) != want:
            raise ValueError(f"words: {len(value)} != {want}")  # never shown (a count only)
        return value


def word_key(text: str) -> str:
    """The comparison form of a word: width folded (NFKC), case folded, spaces and punctuation
    removed (zhenyan.txt:176 says punctuation width does not matter for votes; guesses are
    read the same way)."""
    return "".join(c for c in normalize(text).casefold() if c.isalnum())


@dataclass(frozen=True, slots=True)
class Secrets:
    """The four words and the accepted variants, as comparison keys and as written."""

    words: tuple[str, ...] = field(repr=False)
    keys: tuple[frozenset[str], ...] = field(repr=False)

    def __repr__(self) -> str:  # never show a secret
        return f"Secrets(<{len(self.words)} words>)"

    def correct(self, index: int, guess: str) -> bool:
        return 1 <= index <= len(self.keys) and word_key(guess) in self.keys[index - 1]

    def word(self, index: int) -> str:
        return self.words[index - 1]


_ZH_COUNT = {1: "一", 2: "两", 3: "三", 4: "四", 5: "五", 6: "六"}


def inquiry_rules(game: Game) -> InquiryRules:
    """The game's rule set's inquiry rules; InquiryError when it has no inquiry thread."""
    rules = get_ruleset(game.game.ruleset).inquiry
    if rules is None:
        having = "、".join(
            f"{rs.title}（{rs.id}）"
            for rs in map(get_ruleset, ruleset_ids())
            if rs.inquiry is not None
        )
        raise InquiryError(f"只有{having}有询问帖，本局规则集是 {game.game.ruleset}")
    return rules


def load_secrets(game: Game) -> Secrets:
    """The secret table of the game file (``[zhenyan]``), checked (InquiryError in Chinese)."""
    words = inquiry_rules(game).words
    table_name = f"[{game.game.ruleset}]"
    if not game.secrets:
        raise InquiryError(
            f"游戏文件缺少 {table_name} 表：请写 words = [{_ZH_COUNT.get(words, words)}个真言词语]"
            '（可选 variants = { "1" = [...] }）'
        )
    try:
        table = _SecretTable.model_validate(dict(game.secrets), context={"words": words})
    except ValidationError as exc:
        where = "、".join(
            sorted({".".join(str(x) for x in e["loc"]) or table_name for e in exc.errors()})
        )
        raise InquiryError(
            f"{table_name} 表有误（{where}）：words 须为{words}个字符串，"
            'variants 须为 { "1" = ["…"] } 形式（内容不在此显示）'
        ) from None
    keys: list[set[str]] = []
    for i, word in enumerate(table.words, 1):
        key = word_key(word)
        if not key:
            raise InquiryError(f"{table_name} words 的第{i}个词语为空（去掉空格与标点后）")
        keys.append({key})
    for pos, forms in table.variants.items():
        if pos not in {str(i) for i in range(1, words + 1)}:
            raise InquiryError(f"{table_name} variants 的键「{pos}」应为 1–{words} 之一")
        keys[int(pos) - 1] |= {k for f in forms if (k := word_key(f))}
    return Secrets(tuple(table.words), tuple(frozenset(k) for k in keys))


# --------------------------------------------------------------------------- results
