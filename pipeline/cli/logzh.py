"""Log lines a director reads: the level in Chinese, not ``WARNING``/``ERROR``.

``bansha`` logs to stderr (``-v`` shows the INFO lines too): a warning reads
``提醒：第 1 次请求失败（无法连接论坛），1.0 秒后重试：…``, an error
``错误：抓取帖子 2011 失败：…``, and a process line (``-v``) carries no label at all. Messages
themselves are written in Chinese where they are logged; this only names the level.

httpx logs every request at INFO in English (``HTTP Request: GET … "HTTP/1.1 200 OK"``): its
logger is kept at WARNING (:func:`quiet_httpx`); our own client logs one Chinese line per
request instead (``pipeline.discuz.client``).
"""

from __future__ import annotations

import logging
import sys

#: the label of each level (INFO has none: ``-v`` lines are what bansha is doing)
LEVEL_ZH: dict[int, str] = {
    logging.DEBUG: "调试",
    logging.INFO: "",
    logging.WARNING: "提醒",
    logging.ERROR: "错误",
    logging.CRITICAL: "严重错误",
}


def level_zh(levelno: int) -> str:
    """The Chinese label of a level; a custom level takes the label of the one below it."""
    for level in sorted(LEVEL_ZH, reverse=True):
        if levelno >= level:
            return LEVEL_ZH[level]
    return LEVEL_ZH[logging.DEBUG]


class ChineseFormatter(logging.Formatter):
    """``提醒：消息`` / ``错误：消息`` / ``消息`` (INFO); a traceback, if any, follows as usual."""

    def __init__(self) -> None:
        super().__init__("%(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        label = level_zh(record.levelno)
        return f"{label}：{text}" if label else text


def quiet_httpx() -> None:
    """httpx's English per-request INFO lines stay out of ``-v`` (warnings still show)."""
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)


def setup_logging(verbose: bool) -> None:
    """bansha's logging: Chinese lines on stderr; INFO (what bansha does) only with ``-v``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(ChineseFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO if verbose else logging.WARNING)
    quiet_httpx()
