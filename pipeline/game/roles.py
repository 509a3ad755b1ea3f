"""What a game day's threads are for (the keys of ``[[days]]``) and their names.

The standard library only: a reader of the store (``bansha status``) names the threads bansha
opened without loading the game file's model. :mod:`pipeline.game.gamefile` re-exports both.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Final

__all__ = ["THREAD_ROLE_TITLES", "ThreadRole"]


class ThreadRole(StrEnum):
    """What a thread is for on one game day (the key in ``[[days]]``)."""

    DISCUSSION = "discussion"
    VOTE = "vote"
    PROGRESS = "progress"
    INQUIRY = "inquiry"
    # m209 太阳[日不落]: the first 正午 round's vote thread (the day's ``vote`` is the extra round)
    FIRST_VOTE = "first_vote"


THREAD_ROLE_TITLES: Final[Mapping[ThreadRole, str]] = {
    ThreadRole.DISCUSSION: "讨论帖",
    ThreadRole.VOTE: "投票帖",
    ThreadRole.PROGRESS: "进程帖",
    ThreadRole.INQUIRY: "询问帖",
    ThreadRole.FIRST_VOTE: "第一轮投票帖",
}
