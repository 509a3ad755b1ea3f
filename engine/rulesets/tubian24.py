"""狼人——网杀变异屠边 24人局 (rules/tubian24.txt): the vote rules.

- No sheriff election: the sheriff comes from 高僧[遗志] (tubian24.txt:119) and passes by
  [殉职] (tubian24.txt:174). The sheriff's vote weighs 1.5 (tubian24.txt:173).
- A tie puts the 高僧 out ([献身], tubian24.txt:39, 118); once the 高僧 is gone a tie is a
  平安日 (tubian24.txt:121). A transformed 仆人 does not take a tie (tubian24.txt:154): the
  director marks only a 高僧 who still holds [献身] with the TIE_TAKER modifier.
- The text has no 投票规则 section; the house rules of the other four texts apply (one vote,
  改票 once replying to the original floor, none in the last hour, none when accelerated), except
  its own 代投 rule (tubian24.txt:332): a proxy vote at least 30 minutes before the close, a proxy
  change at least one hour before.
"""

from __future__ import annotations

from datetime import timedelta
from fractions import Fraction
from typing import ClassVar

from engine.rulesets.base import CountSheet, Decision, Ruleset

__all__ = ["Tubian24"]

_HOUSE = "docs/rulings.md#tubian24-house-vote-rules"


class Tubian24(Ruleset):
    id: ClassVar[str] = "tubian24"
    name: ClassVar[str] = "狼人——网杀变异屠边 24人局"
    rule_file: ClassVar[str] = "tubian24.txt"
    aliases: ClassVar[tuple[str, ...]] = ("变异屠边", "屠边24")

    has_sheriff_election: ClassVar[bool] = False
    sheriff_weight: ClassVar[Fraction] = Fraction(3, 2)
    proxy_cutoff: ClassVar[timedelta | None] = timedelta(minutes=30)
    proxy_change_cutoff: ClassVar[timedelta | None] = timedelta(hours=1)

    rules: ClassVar[dict[str, str]] = {
        "vote_right": "tubian24.txt:39",
        "out": "tubian24.txt:44",
        "window": "tubian24.txt:39",
        "one_vote": _HOUSE,
        "format": _HOUSE,
        "correct_invalid": _HOUSE,
        "abstain": _HOUSE,
        "change_once": _HOUSE,
        "change_reply": "DESIGN.md:143",
        "change_cutoff": _HOUSE,
        "change_accelerated": _HOUSE,
        "proxy": "tubian24.txt:332",
        "proxy_cutoff": "tubian24.txt:332",
        "proxy_change_cutoff": "tubian24.txt:332",
        "hidden": "DESIGN.md:145",
        "edited": "DESIGN.md:146",
        "election": "tubian24.txt:119",
        "sheriff_weight": "tubian24.txt:173",
        "top": "tubian24.txt:39",
        "tie": "tubian24.txt:118",
        "tie_no_monk": "tubian24.txt:121",
        "block_out": "docs/rulings.md#block-out",
        "public": "tubian24.txt:39",
    }

    def break_tie(self, sheet: CountSheet, tie: tuple[str, ...]) -> Decision:
        """tubian24.txt:118 当投票出现平票的情况，高僧将成为当日投票出局的玩家。"""
        if sheet.tie_takers:
            monk = sorted(sheet.tie_takers)[0]
            return Decision(tie, tie, monk, None, "平票，高僧[献身]，承受投票出局", self.ref("tie"))
        return Decision(
            tie,
            tie,
            None,
            None,
            "平票，没有可[献身]的高僧，平安日无人出局",
            self.ref("tie_no_monk"),
        )
