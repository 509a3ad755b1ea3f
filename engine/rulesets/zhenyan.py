"""改编于版杀迷你场的规则——狼人真言 (rules/zhenyan.txt): the vote rules.

- Day 1 elects the sheriff in the election thread (zhenyan.txt:38, 105, 135); the sheriff's vote
  weighs 1.5 (zhenyan.txt:106).
- From day 2 a player is out only with strictly more than half of all votes (zhenyan.txt:38:
  单角色票数总和大于总票数的一半). "总票数" counts every counted vote at its weight, abstentions
  included: 弃权 is a vote the text calls 弃权票 (zhenyan.txt:177). A tie can never pass.
- Votes are anonymous until the game ends (zhenyan.txt:37, 173): who voted whom is not public.
"""

from __future__ import annotations

from fractions import Fraction
from typing import ClassVar

from engine.rulesets.base import CountSheet, Decision, Ruleset

__all__ = ["Zhenyan"]


class Zhenyan(Ruleset):
    id: ClassVar[str] = "zhenyan"
    name: ClassVar[str] = "狼人真言"
    rule_file: ClassVar[str] = "zhenyan.txt"
    aliases: ClassVar[tuple[str, ...]] = ("狼人真言", "真言")

    sheriff_weight: ClassVar[Fraction] = Fraction(3, 2)
    public_voters: ClassVar[bool] = False

    rules: ClassVar[dict[str, str]] = {
        "vote_right": "zhenyan.txt:37",
        "out": "zhenyan.txt:41",
        "window": "zhenyan.txt:37",
        "one_vote": "zhenyan.txt:171",
        "format": "zhenyan.txt:175",
        "correct_invalid": "zhenyan.txt:175",
        "abstain": "zhenyan.txt:177",
        "change_once": "zhenyan.txt:174",
        "change_reply": "zhenyan.txt:183",
        "change_cutoff": "zhenyan.txt:174",
        "change_accelerated": "zhenyan.txt:174",
        "proxy": "zhenyan.txt:172",
        "proxy_cutoff": "zhenyan.txt:174",
        "proxy_change_cutoff": "zhenyan.txt:174",
        "hidden": "DESIGN.md:145",
        "edited": "DESIGN.md:146",
        "election": "zhenyan.txt:105",
        "sheriff_weight": "zhenyan.txt:106",
        "top": "zhenyan.txt:38",
        "tie": "zhenyan.txt:38",
        "block_out": "docs/rulings.md#block-out",
        "public": "zhenyan.txt:37",
    }

    def decide_exile(self, sheet: CountSheet) -> Decision:
        """zhenyan.txt:38 如果存在单角色票数总和大于总票数的一半，则其出局，否则当天无人出局。"""
        _best, top = sheet.maximum()
        tie = top if len(top) > 1 else ()
        total = (
            sheet.total if self.majority_counts_abstentions else sheet.total - sheet.abstain_total
        )
        rule = self.ref("top")
        counted = f"含弃权{sheet.abstain_total}" if self.majority_counts_abstentions else "不含弃权"
        note = (f"总票数{total}（{counted}），出局须多于{total / 2}票",)
        if len(top) == 1 and sheet.counts[top[0]] * 2 > total:
            decision = Decision(top, (), top[0], None, "票数过半出局", rule, note)
            return self.apply_block(sheet, decision)
        if not top:
            return Decision((), (), None, None, "无有效票，无人出局", rule, note)
        return Decision(top, tie, None, None, "票数未过半无人出局", rule, note)
