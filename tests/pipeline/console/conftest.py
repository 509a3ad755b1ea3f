"""Fixtures of the console's tests (defined in tests/pipeline/console/support.py)."""

from tests.pipeline.console.support import forum, morning, morning_db, sink, tab_for

__all__ = ["forum", "morning", "morning_db", "sink", "tab_for"]
