"""The console's night-action form checks the 行动时限 as ``bansha night add`` does: an action
sent after its deadline is refused with the rule, unless 逾时仍然接受 is ticked (noted)."""

from __future__ import annotations

import html
from datetime import timedelta

from tests.engine.rule_text import says
from tests.pipeline.console.support import make_app

GID = "m135-demo"


def test_a_late_kill_is_refused_unless_accepted_late(morning, tab_for):
    says("m135.txt:177", "关门后90分钟内：杀人")
    closes = morning.spec().game.day(1).closes
    late = (closes + timedelta(minutes=95)).isoformat()
    tab = tab_for(make_app(morning))
    assert tab.get(f"/g/{GID}/night/1").status_code == 200
    form = {"actor": "汤圆", "skill": "杀人", "target": "烧卖", "at": late}
    r = tab.post(f"/g/{GID}/night/1/add", form)
    text = html.unescape(r.text)
    assert r.status_code == 400
    assert "<杀人>须在关门后90分钟内发动（m135.txt:177）" in text and "晚了5分钟" in text
    assert "视为放弃发动技能" in text and "逾时仍然接受" in text
    assert "这一晚还没有记录行动" in html.unescape(tab.get(f"/g/{GID}/night/1").text)
    on_time = {**form, "at": (closes + timedelta(minutes=90)).isoformat()}
    assert tab.post(f"/g/{GID}/night/1/add", on_time).status_code == 303
    r = tab.post(f"/g/{GID}/night/1/add", {**form, "late": "1"})
    assert r.status_code == 303, r.text
    page = html.unescape(tab.get(f"/g/{GID}/night/1").text)
    assert page.count("汤圆[杀人]→烧卖") == 2
    assert page.count("逾时接受：<杀人>须在关门后90分钟内发动（m135.txt:177）") == 1
