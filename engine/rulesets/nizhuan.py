"""双身份狼人杀——逆转时空的战斗 (rules/nizhuan.txt): the vote rules.

- Votes name a card: 投票对象：傻树的第一身份 (nizhuan.txt:196). Voters and candidates are cards
  ("傻树的第一身份"); ``PlayerStatus.card`` and ``Ballot.card_index`` / ``Ballot.voter_card`` carry
  the card (1 = 第一身份, 2 = 第二身份). A target without a card is accepted only when that player
  has a single card in play (the 历史轮).
- In the 逆转轮 the first cards are NPCs whose votes are fixed from the 历史轮 (nizhuan.txt:193):
  the pipeline feeds them as ballots with ``voter_card=1`` at the opening. A player's own posts
  vote with the card the player plays this round (the highest card of the player in play).
- Day 1 of each round elects the sheriff (nizhuan.txt:45, 117, 139, 156); the sheriff has no
  extra weight (nizhuan.txt:115-118 give only 竞岗 and 殉职).
- On a tie the sheriff's target is out; if the sheriff did not vote, nobody (nizhuan.txt:45).
"""

from __future__ import annotations

from typing import ClassVar

from engine.rulesets.base import Ruleset

__all__ = ["Nizhuan"]


class Nizhuan(Ruleset):
    id: ClassVar[str] = "nizhuan"
    name: ClassVar[str] = "逆转时空的战斗"
    rule_file: ClassVar[str] = "nizhuan.txt"
    aliases: ClassVar[tuple[str, ...]] = ("逆转时空",)

    card_units: ClassVar[bool] = True

    rules: ClassVar[dict[str, str]] = {
        "vote_right": "nizhuan.txt:45",
        "out": "nizhuan.txt:49",
        "window": "nizhuan.txt:45",
        "one_vote": "nizhuan.txt:187",
        "format": "nizhuan.txt:190",
        "correct_invalid": "nizhuan.txt:190",
        "abstain": "nizhuan.txt:192",
        "change_once": "nizhuan.txt:189",
        "change_reply": "nizhuan.txt:199",
        "change_cutoff": "nizhuan.txt:189",
        "change_accelerated": "nizhuan.txt:189",
        "proxy": "nizhuan.txt:188",
        "proxy_cutoff": "nizhuan.txt:189",
        "proxy_change_cutoff": "nizhuan.txt:189",
        "hidden": "DESIGN.md:145",
        "edited": "DESIGN.md:146",
        "election": "nizhuan.txt:117",
        "sheriff_weight": "nizhuan.txt:115",
        "top": "nizhuan.txt:45",
        "tie": "nizhuan.txt:45",
        "block_out": "docs/rulings.md#block-out",
        "public": "nizhuan.txt:45",
        "card_target": "nizhuan.txt:196",
        "npc_votes": "nizhuan.txt:193",
    }
