"""Fixtures of the console's tests (defined in tests/console/support.py)."""

from tests.console.support import forum, morning, morning_db, sink, tab_for

__all__ = ["forum", "morning", "morning_db", "sink", "tab_for"]
