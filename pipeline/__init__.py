"""The edges, in layers (imports point down only; ``tests/test_layers.py`` checks it):

- ``store/``: the SQLite store, the game's lock, the secrets scrubber;  ``sim/``: the local
  Discuz simulator (the demo's forum and the tests');
- ``game/``: the game file, the director's journal, last words, the secret words;
- ``discuz/``: the Discuz client, the crawl, the forum session that posts;  ``derive/``: the
  verdicts of each day, read from the store, the game file and the journal;
- ``drafts/``: the drafts, their templates, publishing them exactly once, the day report;
- ``cycle.py`` and ``notify.py``: one cron cycle, and telling the director;
- ``cli/``: the ``bansha`` command (each command group loaded when used);  ``console/``: the
  director's web console.
"""

from pathlib import Path

#: the repository: config/ (examples, templates) and cron/ sit beside the packages
ROOT = Path(__file__).resolve().parent.parent
