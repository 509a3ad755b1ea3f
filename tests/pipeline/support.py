"""Set-ups shared by the m209 draft tests (the game of ``test_sun_rounds``, day 2 voted)."""

from __future__ import annotations

from pathlib import Path

from tests.pipeline.derive.test_sun_rounds import (
    LINEUP,
    VOTE_TID,
    add_posts,
    h,
    run,
    through_day_1,
    vote,
    write_game,
)


def m209_through_day_1(
    tmp_path: Path, name: str = "g", *, lineup: tuple[tuple[str, str], ...] = LINEUP
) -> tuple[Path, Path]:
    """The m209 game (day 2's vote thread set), its opening and election day resolved:
    ``(game file, store)``, named ``name.toml`` / ``name.db`` in ``tmp_path``."""
    file = write_game(tmp_path / f"{name}.toml", f"vote = {VOTE_TID}", lineup=lineup)
    game = (file, tmp_path / f"{name}.db")
    through_day_1(game)
    return game


def day_2_votes(game: tuple[Path, Path], target: str, voters: tuple[str, ...]) -> None:
    """Night 1 resolved (nothing done), then one day-2 vote for ``target`` by each of
    ``voters``, a minute apart from 12:00."""
    run(game, "night", "resolve", "--night", "1")
    add_posts(
        game[1],
        VOTE_TID,
        [vote(3201 + i, n, target, h(12, i)) for i, n in enumerate(voters)],
    )


def sun_voted_top(tmp_path: Path, name: str = "g") -> tuple[Path, Path]:
    """Day 2: three votes for 壬, the 太阳 — [日] gives it [不死] by day (m209.txt:376)."""
    game = m209_through_day_1(tmp_path, name)
    day_2_votes(game, "壬", ("乙", "丙", "丁"))
    return game
