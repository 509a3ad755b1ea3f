"""bansha command line (placeholder while the foundation lands)."""

import click


@click.group()
def cli() -> None:
    """bansha：Discuz! 版杀导演助手。"""
