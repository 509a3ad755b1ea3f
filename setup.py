"""Which files the wheel holds (the rest of the metadata is in pyproject.toml).

The repository keeps ``config/`` (example game files, draft templates) and ``cron/`` at its
top level, where directors and contributors find them; the wheel ships them inside the
package, as ``pipeline/_data/config`` and ``pipeline/_data/cron`` (``pipeline.resources``
reads them from either place).
"""

from setuptools import find_packages, setup

#: package name inside the wheel -> folder of the repository
DATA_DIRS = {
    "pipeline._data.config.games": "config/games",
    "pipeline._data.config.templates": "config/templates",
    "pipeline._data.cron": "cron",
}

setup(
    packages=[*find_packages(include=["pipeline*", "engine*", "parsers*"]), *DATA_DIRS],
    package_dir=DATA_DIRS,
    package_data={
        "pipeline": ["py.typed"],
        "pipeline.console": ["templates/*.html", "static/*.css"],
        "pipeline._data.config.games": ["*.toml"],
        "pipeline._data.config.templates": ["*.j2"],
        "pipeline._data.cron": ["bansha-cycle.sh", "crontab.example"],
    },
)
