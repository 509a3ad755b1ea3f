"""Property: a vote inside a quote is never counted, whatever surrounds it.

Messages are rendered by the simulator's copy of Discuz's discuzcode() (the same BBCode → HTML
the real forum does), read back by the page parser's message reader, then by the vote parser.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from hypothesis import given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from parsers.viewthread import extract_message
from parsers.votes import VoteKind, parse_vote
from pipeline.sim.render import RenderContext, discuzcode, quote_block

TZ = ZoneInfo("Asia/Shanghai")
CTX = RenderContext(siteurl="http://f/", tid=4, fid=3, pid=200, hide_unlocked=False, viewer_name="")
NAMES = ["饺子", "包子", "Snow_风", "馄饨"]

chatter = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="[]"),
    max_size=40,
).filter(lambda s: "投" not in s and "票" not in s and "弃权" not in s and "加速" not in s)


def read(bbcode: str):
    cell = f'<td class="t_f" id="postmessage_200">{discuzcode(bbcode, CTX)}</td>'
    html = f"<table><tr>{cell}</tr></table>"
    node = LexborHTMLParser(html).css_first("td.t_f")
    return extract_message(node, TZ)


@settings(max_examples=150, deadline=None)
@given(
    target=st.sampled_from(NAMES),
    before=chatter,
    after=chatter,
    label=st.sampled_from(["投票对象：", "投票对象:", "改票对象：", "投票给："]),
    quoted_by=st.sampled_from(["button", "hand"]),
)
def test_a_vote_inside_a_quote_is_never_a_vote(target, before, after, label, quoted_by):
    inner = f"{label}{target}\n投票理由：跟票"
    if quoted_by == "button":  # what Discuz's 回复 button stores
        quote = quote_block(pid=77, tid=4, author="饺子", posted="2026-12-2 21:04", message=inner)
    else:
        quote = f"[quote]{inner}[/quote]\n"
    parts = read(f"{before}\n{quote}{after}")
    vote = parse_vote(parts.text)
    assert vote.kind is VoteKind.NONE, (parts.text, vote)
    assert any(target in q for q in parts.quote_texts)
    if quoted_by == "button":
        assert parts.quoted_pids == (77,)


@settings(max_examples=100, deadline=None)
@given(target=st.sampled_from(NAMES), after=chatter)
def test_the_replier_s_own_vote_after_a_quote_is_read(target, after):
    quote = quote_block(
        pid=77,
        tid=4,
        author="饺子",
        posted="2026-12-2 21:04",
        message="投票对象：包子\n投票理由：x",
    )
    parts = read(f"{quote}改票对象：{target}\n改票理由：{after}")
    vote = parse_vote(parts.text)
    assert vote.kind is VoteKind.CHANGE and vote.target_raw == target
    assert parts.quoted_pids == (77,)
