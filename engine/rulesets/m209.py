"""[M209]巴啦啦小魔仙 (rules/m209.txt, new RD rules): the vote rules.

- The sheriff has no extra weight: only 竞岗 and 殉职 (m209.txt:224-227).
- The top (m209.txt:169): a skill's top first; else the unique maximum; else (a tie) the
  sheriff's target; else none. A top holding [霸道] or [不死] is not out: 平安日 (m209.txt:166).
- 替罪羊[冤死] (m209.txt:343): on a tie (not on the election day) the vote-out is void.
- Counts are hidden; only the top is announced (m209.txt:167).
- A voter whose target went out during the day may change once even in the forbidden time
  (m209.txt:170). A [狂躁] player votes before the opening and may not change; a proxy entered
  before the opening counts as made at the opening (m209.txt:97).
- Modifiers: [迷魂] the voter counts 0 (m209.txt:96); [独裁] +N weight (m209.txt:109).
"""

from __future__ import annotations

from typing import ClassVar

from engine.rulesets.base import CountSheet, Decision, Ruleset

__all__ = ["M209"]


class M209(Ruleset):
    id: ClassVar[str] = "m209"
    name: ClassVar[str] = "[M209]巴啦啦小魔仙"
    rule_file: ClassVar[str] = "m209.txt"
    aliases: ClassVar[tuple[str, ...]] = ("M209", "巴啦啦小魔仙", "RD")

    change_when_target_out: ClassVar[bool] = True
    proxy_before_open: ClassVar[bool] = True
    public_counts: ClassVar[bool] = False

    rules: ClassVar[dict[str, str]] = {
        "vote_right": "m209.txt:165",
        "out": "m209.txt:174",
        "window": "m209.txt:165",
        "one_vote": "m209.txt:596",
        "format": "m209.txt:599",
        "correct_invalid": "m209.txt:599",
        "abstain": "m209.txt:601",
        "change_once": "m209.txt:598",
        "change_reply": "m209.txt:605",
        "change_cutoff": "m209.txt:598",
        "change_accelerated": "m209.txt:598",
        "proxy": "m209.txt:597",
        "proxy_cutoff": "m209.txt:598",
        "proxy_change_cutoff": "m209.txt:598",
        "hidden": "DESIGN.md:145",
        "edited": "DESIGN.md:146",
        "election": "m209.txt:226",
        "sheriff_weight": "m209.txt:224",
        "top": "m209.txt:169",
        "tie": "m209.txt:169",
        "block_out": "m209.txt:166",
        "public": "m209.txt:167",
        "change_target_out": "m209.txt:170",
        "mania": "m209.txt:97",
        "daze": "m209.txt:96",
        "dictator": "m209.txt:109",
        "scapegoat": "m209.txt:343",
    }

    def decide_exile(self, sheet: CountSheet) -> Decision:
        """m209.txt:169 有技能影响则计算技能影响的最高票，如果没有任何技能影响，则投票计数唯一最多的
        角色为最高票，否则警长投票的角色为最高票，否则没有最高票。"""
        if sheet.forced_top:
            forced = tuple(sorted(set(sheet.forced_top)))
            if len(forced) == 1:
                decision = Decision(
                    forced, (), forced[0], None, "技能影响的最高票", self.ref("top")
                )
                return self.apply_block(sheet, decision)
            # 技能产生的最高票不止一个: a tie among the skill tops (m209.txt:343 counts it as one).
            return self.apply_block(sheet, self.break_tie(sheet, forced))
        return super().decide_exile(sheet)

    def break_tie(self, sheet: CountSheet, tie: tuple[str, ...]) -> Decision:
        base = super().break_tie(sheet, tie)
        if sheet.void_on_tie:
            sources = "、".join(sorted(set(sheet.void_on_tie)))
            notes = (*base.notes, f"警长所投：{base.out}") if base.out else base.notes
            return Decision(
                base.top,
                tie,
                None,
                None,
                f"平票，{sources}发动，当日最高票产生的投票出局无效",
                self.ref("scapegoat"),
                notes,
            )
        if base.out is None:
            return Decision(
                base.top, tie, None, None, base.decided_by + "（没有最高票）", base.rule
            )
        return Decision(
            (base.out,), tie, base.out, None, "平票，警长投票的角色为最高票", self.ref("tie")
        )
