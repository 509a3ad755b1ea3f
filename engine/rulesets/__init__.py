"""One module per rule set (m209, zhenyan, m135, tubian24, nizhuan), registered by id.

``get_ruleset("m135")`` returns the rule set; ids and aliases are matched case-insensitively.
This registry is the only place that knows the ids: everything a rule set is — its vote,
conduct, card, speed, announcement, last-words, election, inquiry and line-up rules — is
declared on its class in ``engine/rulesets/<id>.py``, and the engine modules and the pipeline
read it from ``get_ruleset(id)``. A sixth rule set is one new module plus its rule text, and a
line here.
"""

from __future__ import annotations

from engine.rulesets.base import RULE_KEYS, CountSheet, Decision, Ruleset
from engine.rulesets.m135 import M135
from engine.rulesets.m209 import M209
from engine.rulesets.nizhuan import Nizhuan
from engine.rulesets.tubian24 import Tubian24
from engine.rulesets.zhenyan import Zhenyan

__all__ = [
    "EXAMPLE_RULESET",
    "EXAMPLE_SECRET_TABLE",
    "REGISTRY",
    "RULE_KEYS",
    "CountSheet",
    "Decision",
    "Ruleset",
    "get_ruleset",
    "ruleset_ids",
]

#: Rule sets by id, in the order DESIGN.md lists them.
REGISTRY: dict[str, type[Ruleset]] = {
    cls.id: cls for cls in (M209, Zhenyan, M135, Tubian24, Nizhuan)
}

#: The id messages show as an example (``ruleset = "m135"``): the demo game's rule set.
EXAMPLE_RULESET: str = M135.id
#: The secret table messages show as an example (``[zhenyan]``, the secret words).
EXAMPLE_SECRET_TABLE: str = Zhenyan.id

_BY_NAME: dict[str, type[Ruleset]] = {}
for _cls in REGISTRY.values():
    for _name in (_cls.id, *_cls.aliases):
        _BY_NAME[_name.casefold()] = _cls


def ruleset_ids() -> tuple[str, ...]:
    return tuple(REGISTRY)


def get_ruleset(id: str) -> Ruleset:
    """The rule set registered as ``id`` (or one of its aliases).

    Raises ValueError with a Chinese message naming the valid ids when there is none.
    """
    cls = _BY_NAME.get(id.strip().casefold())
    if cls is None:
        raise ValueError(f"未知的规则集：{id!r}（可选：{'、'.join(REGISTRY)}）")
    return cls()
