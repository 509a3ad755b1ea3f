"""engine.deal: every rule set's line-up dealt under its constraints, reproducibly from a seed,
and the canonical text the commitment hashes."""

from __future__ import annotations

import hashlib
import random
from collections import Counter

import pytest

from engine.deal import (
    DEAL_FORMAT,
    DealError,
    SeedStream,
    canonical_text,
    commitment,
    deal,
    extract_canonical,
    parse_canonical,
    player_count,
    redeal_problems,
)
from engine.rulesets import get_ruleset
from engine.rulesets.m135 import DECK as M135_DECK
from engine.rulesets.m209 import lineup_problems
from engine.rulesets.m209_roles import CATEGORY, SEERS, STRONG, WEAK, WOLF_ROLES
from engine.rulesets.nizhuan import DECK as NIZHUAN_DECK
from engine.rulesets.tubian24 import DECK as TUBIAN_DECK
from engine.rulesets.zhenyan import DECK as ZHENYAN_DECK

SEEDS = range(200)
RULESETS = ("m209", "m135", "nizhuan", "zhenyan", "tubian24")


def names(n: int) -> list[str]:
    return [f"玩家{i:02d}" for i in range(1, n + 1)]


def deals(ruleset: str):
    n = player_count(get_ruleset(ruleset))
    return [deal(get_ruleset(ruleset), names(n), random.Random(seed)) for seed in SEEDS]


@pytest.fixture(scope="module")
def all_deals():
    return {rid: deals(rid) for rid in RULESETS}


def test_player_counts_come_from_the_rule_texts():
    # m209.txt:22-33 (4+1+3+4+1), m135.txt:5 12人局, nizhuan (16 cards, two each),
    # zhenyan.txt:64-100 (12 cards), tubian24.txt:13 24人局
    assert {rid: player_count(get_ruleset(rid)) for rid in RULESETS} == {
        "m209": 13,
        "m135": 12,
        "nizhuan": 8,
        "zhenyan": 12,
        "tubian24": 24,
    }


@pytest.mark.parametrize("ruleset", RULESETS)
def test_200_seeds_each_pass_the_rule_sets_own_checks(all_deals, ruleset):
    rs = get_ruleset(ruleset)
    for d in all_deals[ruleset]:
        hands = d.hands()
        assert rs.validate_setup(hands) == [], hands
        settings = {}
        if ruleset == "m209":
            settings = {"lineup": "，".join(d.table["lineup"])}
        if ruleset == "tubian24":
            settings = {
                "thief": d.table["thief"],
                "thief_cards": ",".join(d.table["thief_cards"]),
                "thief_pick": "2",
            }
        rs.setup_state(hands, settings=settings, strict=True)  # raises on any problem


def test_m209_pools_and_exactly_one_of_each_pair(all_deals):
    # m209.txt:22 狼人（10选4，且黑狼王和白狼王必出现且只会出现其中之一）
    # m209.txt:25-27 验人系（3选1） 强神（10选3，且灵鹿和女巫必出现且只会出现其中之一）
    # m209.txt:29 弱神（10选4） m209.txt:32 三方（1选1）吹笛者
    seen: Counter[str] = Counter()
    for d in all_deals["m209"]:
        drawn = [c for (c,) in d.cards]
        assert lineup_problems(drawn) == []
        assert sorted(drawn) == sorted(d.table["lineup"])
        by_cat = Counter(CATEGORY[c] for c in drawn)
        assert by_cat == {"狼人": 4, "验人系": 1, "强神": 3, "弱神": 4, "三方": 1}
        assert ("黑狼王" in drawn) != ("白狼王" in drawn)
        assert ("灵鹿" in drawn) != ("女巫" in drawn)
        seen.update(drawn)
    # every card of every pool appears across the seeds
    assert set(seen) == set(WOLF_ROLES) | set(SEERS) | set(STRONG) | set(WEAK) | {"吹笛者"}
    # the kings and the deer/witch share their slot about evenly (1/2 each)
    assert 70 <= seen["黑狼王"] <= 130 and 70 <= seen["灵鹿"] <= 130
    # a weak god is drawn 4 times out of 10 (200 × 0.4 = 80)
    assert all(40 <= seen[r] <= 120 for r in WEAK)


def test_m135_pairs_positions_and_the_whole_deck(all_deals):
    # m135.txt:5 狼人×3，隐狼，…，村民×6，复制人; m135.txt:16 禁止出现的组合;
    # m135.txt:90 女巫身份必须作为第二身份; m135.txt:142 复制人身份必须作为第一身份
    wolf_seats: Counter[int] = Counter()
    for d in all_deals["m135"]:
        cards = [c for hand in d.cards for c in hand]
        assert Counter(cards) == Counter(M135_DECK)
        for seat, (first, second) in enumerate(d.cards):
            assert first != "女巫" and second != "复制人"
            roles = [second if first == "复制人" else first, second]
            assert not all(r in ("狼人", "隐狼") for r in roles)
            assert not ("预言家" in roles and any(r in ("狼人", "隐狼") for r in roles))
            if "狼人" in (first, second):
                wolf_seats[seat] += 1
        assert set(d.factions) == {"狼人阵营", "村民阵营"}
        assert d.factions.count("狼人阵营") == 4  # 3 狼人 + 隐狼, never paired
    assert set(wolf_seats) == set(range(12))  # a wolf sits at every seat across the seeds


def test_nizhuan_double_villager_and_positions(all_deals):
    # nizhuan.txt:74 禁止【双狼人阵营】【狼人阵营+预言家/定序王子】将必定出现至少一个【双村民】
    # nizhuan.txt:80 狼人第一身份; nizhuan.txt:85, 110 蚀时狼妃、定序王子第二身份
    doubles = Counter()
    for d in all_deals["nizhuan"]:
        assert Counter(c for hand in d.cards for c in hand) == Counter(NIZHUAN_DECK)
        assert any(hand == ("村民", "村民") for hand in d.cards)
        doubles[sum(hand == ("村民", "村民") for hand in d.cards)] += 1
        for first, second in d.cards:
            assert second != "狼人" and first not in ("蚀时狼妃", "定序王子")
    assert len(doubles) >= 2  # one or more 双村民 pairs, not a fixed pattern


def test_zhenyan_is_the_deck_shuffled(all_deals):
    elder_seats = Counter()
    for d in all_deals["zhenyan"]:
        assert Counter(c for (c,) in d.cards) == Counter(ZHENYAN_DECK)
        elder_seats[[c for (c,) in d.cards].index("长老")] += 1
        assert d.factions.count("狼人阵营") == 4
    assert set(elder_seats) == set(range(12))


def test_tubian24_thief_replaces_one_and_holds_three(all_deals):
    # tubian24.txt:162 导演将从其他24个身份中抽出一张替换为盗贼，盗贼从这张身份和一张【村民】、
    # 一张【狼人】中盲选一张作为自己的身份。若抽出的一张身份为【狼人】或【白眼狼】，则三张备选
    # 身份均修改为【狼人】或【白眼狼】。
    drawn_seen: Counter[str] = Counter()
    full = Counter({c: n for c, n in TUBIAN_DECK.items() if c != "盗贼"})
    for d in all_deals["tubian24"]:
        cards = Counter(c for (c,) in d.cards)
        assert cards["盗贼"] == 1
        missing = full - cards
        assert sum(missing.values()) == 1
        (drawn,) = missing
        three = list(d.table["thief_cards"])
        if drawn in ("狼人", "白眼狼"):
            assert three == [drawn] * 3
        else:
            assert sorted(three) == sorted([drawn, "村民", "狼人"])
        assert d.extras == (("thief_cards", tuple(three)),)
        assert d.cards[d.players.index(d.table["thief"])] == ("盗贼",)
        assert d.stale == ("thief_pick", "kill_order", "master")
        for (card,), faction in zip(d.cards, d.factions, strict=True):
            assert (faction is None) == (card in ("盗贼", "仆人"))
        drawn_seen[drawn] += 1
    assert set(drawn_seen) == set(full)  # every identity is drawn for the thief sometimes
    assert drawn_seen["狼人"] > drawn_seen["女巫"]  # 6 of 24 vs 1 of 24


def test_a_roster_of_the_wrong_size_is_refused():
    with pytest.raises(DealError, match="需要 12 名玩家，名单中有 11 名"):
        deal(get_ruleset("m135"), names(11), random.Random(1))


def test_the_seed_stream_is_pinned():
    # re-deriving a revealed deal must give the same cards on any machine and any later
    # bansha: the stream and the zhenyan shuffle of one seed are pinned here
    stream = SeedStream(bytes(range(32)))
    block = hashlib.sha256(
        DEAL_FORMAT.encode() + b"\0" + bytes(range(32)) + (0).to_bytes(8, "big")
    ).digest()
    first = stream.randrange(1000)
    assert first == int.from_bytes(block[:8], "big") % 1000
    assert [first] + [stream.randrange(1000) for _ in range(4)] == [652, 923, 508, 699, 976]
    d = deal(get_ruleset("zhenyan"), [f"p{i}" for i in range(12)], SeedStream(bytes(range(32))))
    assert [c for (c,) in d.cards] == [
        "猎魔人", "村民", "狼美人", "村民", "蚀时狼妃", "村民",
        "狼王", "预言家", "村民", "长老", "石像鬼", "守卫",
    ]  # fmt: skip


def test_the_same_seed_deals_the_same_and_another_seed_differs():
    seed = bytes.fromhex("ab" * 32)
    a = deal(get_ruleset("m209"), names(13), SeedStream(seed))
    b = deal(get_ruleset("m209"), names(13), SeedStream(seed))
    c = deal(get_ruleset("m209"), names(13), SeedStream(bytes.fromhex("cd" * 32)))
    assert a == b
    assert a.cards != c.cards


def revealed_text(ruleset: str = "tubian24", seed: bytes = b"\x07" * 32):
    n = player_count(get_ruleset(ruleset))
    d = deal(get_ruleset(ruleset), names(n), SeedStream(seed))
    seats = [
        (1000 + i, name, cards)
        for i, (name, cards) in enumerate(zip(d.players, d.cards, strict=True))
    ]
    return d, canonical_text(
        game="g-1", ruleset=ruleset, salt="5a" * 32, seats=seats, extras=d.extras
    )


def test_the_canonical_text_and_its_sha256():
    d, text = revealed_text()
    lines = text.split("\n")
    assert lines[:4] == [DEAL_FORMAT, "game=g-1", "ruleset=tubian24", "salt=" + "5a" * 32]
    assert lines[4] == f"1|1000|玩家01|{d.cards[0][0]}"
    assert lines[-2] == "extra.thief_cards=" + ",".join(d.table["thief_cards"])
    assert text.endswith("\n") and not text.endswith("\n\n")
    # what sha256sum prints for the file holding exactly this text
    assert commitment(text) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert parse_canonical(text).seats[0] == (1000, "玩家01", d.cards[0])


def test_a_name_with_the_separator_reads_back():
    text = canonical_text(game="g", ruleset="zhenyan", salt="0" * 64, seats=[(7, "a|b", ["村民"])])
    assert parse_canonical(text).seats == ((7, "a|b", ("村民",)),)


def test_redeal_from_the_seed_confirms_and_catches_a_changed_card():
    seed = b"\x07" * 32
    _d, text = revealed_text(seed=seed)
    revealed = parse_canonical(text)
    assert redeal_problems(revealed, SeedStream(seed), get_ruleset("tubian24")) == []
    # swap two seats' cards: the hash changes, and the seed says which seats differ
    lines = text.split("\n")
    a, b = lines[4].rsplit("|", 1), lines[5].rsplit("|", 1)
    if a[1] == b[1]:
        b = lines[6].rsplit("|", 1)
        k = 6
    else:
        k = 5
    lines[4], lines[k] = f"{a[0]}|{b[1]}", f"{b[0]}|{a[1]}"
    forged = "\n".join(lines)
    assert commitment(forged) != commitment(text)
    problems = redeal_problems(parse_canonical(forged), SeedStream(seed), get_ruleset("tubian24"))
    assert problems[0].startswith("第 1 座 玩家01：公开的是")
    assert len(problems) == 2
    # another seed does not re-derive the deal
    assert redeal_problems(revealed, SeedStream(b"\x08" * 32), get_ruleset("tubian24"))


def test_extract_from_a_pasted_post_and_bad_texts():
    _d, text = revealed_text()
    pasted = "[b]发牌公开[/b]\r\n[code]\r\n" + text.replace("\n", "  \r\n") + "[/code]\r\n种子"
    assert extract_canonical(pasted) == text
    with pytest.raises(DealError, match="没有找到发牌原文"):
        extract_canonical("hello")
    with pytest.raises(DealError, match="最后一行也应以换行结束"):
        parse_canonical(text.rstrip("\n"))
    with pytest.raises(DealError, match="第 5 行的座次应为 1"):
        parse_canonical(text.replace("\n1|", "\n2|", 1))
