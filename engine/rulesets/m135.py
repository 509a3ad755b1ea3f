"""[M135]『让子弹飞』 (rules/m135.txt): the vote rules.

Dual cards, but a vote names the character (角色); the character's current card goes out
(m135.txt:50). The sheriff's vote weighs 1.5 (m135.txt:148). On a tie the sheriff's target is out
unless the sheriff abstained (m135.txt:51). An invalid vote may be corrected by a new post or by a
valid 改票 (m135.txt:205). ``DayContext.accelerated`` means 二段加速 here: 一段加速 is the mini
game's default and does not stop changes (m135.txt:194-198, 204).
"""

from __future__ import annotations

from fractions import Fraction
from typing import ClassVar

from engine.rulesets.base import Ruleset

__all__ = ["M135"]


class M135(Ruleset):
    id: ClassVar[str] = "m135"
    name: ClassVar[str] = "[M135]『让子弹飞』"
    rule_file: ClassVar[str] = "m135.txt"
    aliases: ClassVar[tuple[str, ...]] = ("M135", "让子弹飞")

    sheriff_weight: ClassVar[Fraction] = Fraction(3, 2)
    change_corrects_invalid: ClassVar[bool] = True

    rules: ClassVar[dict[str, str]] = {
        "vote_right": "m135.txt:49",
        "out": "m135.txt:55",
        "window": "m135.txt:49",
        "one_vote": "m135.txt:202",
        "format": "m135.txt:205",
        "correct_invalid": "m135.txt:205",
        "abstain": "m135.txt:206",
        "change_once": "m135.txt:204",
        "change_reply": "m135.txt:209",
        "change_cutoff": "m135.txt:204",
        "change_accelerated": "m135.txt:204",
        "proxy": "m135.txt:203",
        "proxy_cutoff": "m135.txt:204",
        "proxy_change_cutoff": "m135.txt:204",
        "hidden": "DESIGN.md:145",
        "edited": "DESIGN.md:146",
        "election": "m135.txt:147",
        "sheriff_weight": "m135.txt:148",
        "top": "m135.txt:50",
        "tie": "m135.txt:51",
        "block_out": "m135.txt:108",
        "public": "m135.txt:49",
        "slander": "m135.txt:120",
    }
