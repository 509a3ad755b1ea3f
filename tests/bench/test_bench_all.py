"""bench/bench_all.py: the faster simulated forum answers every page as the simulator does, and
each cycle figure is held to its own goal."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

import httpx

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import bench_all  # noqa: E402
from bench_cycle import DISCUSSION, NAMES, build  # noqa: E402


def _pages(sim: object, pages: list[int]) -> list[bytes]:
    client = httpx.Client(transport=sim.transport(), base_url=sim.base_url)  # type: ignore[attr-defined]
    url = f"forum.php?mod=viewthread&tid={DISCUSSION}&page="
    return [client.get(f"{url}{page}").content for page in pages]


def test_quick_pages_answer_as_the_simulator_does_while_posts_arrive() -> None:
    (plain, plain_clock), (quick, quick_clock) = build(300), build(300)
    bench_all.quick_pages(quick)
    pages = [1, 2, 17, 30, 31]
    assert _pages(quick, pages) == _pages(plain, pages)
    for sim, clock in ((plain, plain_clock), (quick, quick_clock)):
        clock.advance(600)
        for i in range(12):  # a new page and a bit: the last page moves on
            sim.add_post(DISCUSSION, NAMES[i], f"新回复 {i}", clock() - timedelta(seconds=30 - i))
    after = _pages(plain, [30, 31, 32])
    assert _pages(quick, [30, 31, 32]) == after
    assert "新回复 11".encode() in after[-1]


def test_each_cycle_figure_is_held_to_its_goal() -> None:
    small = {"size": 100, "page_s": 0.1, "proxy_s": 0.1, "idle_s": 0.01}
    mid = {"size": 10000, "page_s": 0.19, "proxy_s": 0.14, "idle_s": 0.012}
    big = {"size": 30000, "page_s": 0.19, "proxy_s": 0.19, "idle_s": 0.014}
    rows = {
        r.split("  ")[0]: "NOT met" if r.endswith("NOT met") else r.split()[-1]
        for r in bench_all.cycle_rows([small, mid, big])
    }
    assert rows == {
        "cycle, one new page, 10000/100 posts": "NOT met",
        "cycle, one new page, 30000/100 posts": "met",
        "cycle, after vote proxy, 10000/100 posts": "met",
        "cycle, after vote proxy, 30000/100 posts": "NOT met",
        "cycle, nothing new, 10000/100 posts": "met",
        "cycle, nothing new, 30000/100 posts": "met",
    }
