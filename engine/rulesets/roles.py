"""What several rule texts define alike, once: the two great factions.

The rule sets import these instead of spelling them each; a rule set keeps in its own module
only what its text says differently (its roles' skills, steps and citations). The shared
opening of a game (the line-up's hand check, settings, 限定 charges), the director's 投降 / 判负 /
红牌罚下 order and the win-condition bookkeeping live on :class:`engine.rulesets.base.Ruleset`.
"""

from __future__ import annotations

__all__ = ["VILLAGE", "WOLF"]

#: The wolves' and the villagers' factions, as every rule text names them (m135.txt:9,
#: m209.txt:144, zhenyan.txt:64, 81, tubian24.txt:28, nizhuan.txt:33).
WOLF = "狼人阵营"
VILLAGE = "村民阵营"
