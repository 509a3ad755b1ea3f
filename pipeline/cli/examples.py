"""An example at the end of every ``--help``: the command as a director types it.

The game file is left out in every example (the one game file in the current folder, or
``BANSHA_GAME``), as a director in the game's folder types it. :func:`attach` sets a command's
``epilog`` from :data:`EXAMPLES` when the command is loaded; a command whose own help already
has an example line (``示例：``) keeps it. A test parses every example against its command.
"""

from __future__ import annotations

import click

__all__ = ["EXAMPLES", "HEADING", "attach", "epilog"]

#: the line that starts the examples in a help page
HEADING = "示例："

#: the command's path (space-separated, "" for ``bansha`` itself) → the lines of its example
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": ("bansha check", "bansha tally --day 2"),
    "why": ("bansha why --player 包子 --day 2",),
    "flags": ("bansha flags", "bansha flags confirm 3 --card 黄牌"),
    "flags list": ("bansha flags list --day 2",),
    "flags confirm": ("bansha flags confirm 3", "bansha flags confirm 5 --card 蓝牌"),
    "flags dismiss": ("bansha flags dismiss 3 --why 编辑只改了错字，票没有变",),
    "cards": ("bansha cards",),
    "card": ("bansha card give --player 包子 --colour 黄 --why 第2天未投票",),
    "card give": ("bansha card give --player 包子 --colour 黄 --why 第2天未投票",),
    "vote": ("bansha vote speed --day 2 --mode 加速",),
    "vote proxy": (
        "bansha vote proxy --day 2 --voter 包子 --target 饺子 --at 2026-12-02T20:00:00+08:00",
    ),
    "vote modifier": (
        "bansha vote modifier --day 2 --player 饺子 --kind 得票加 --value 1 --source 乌鸦[诽谤]",
    ),
    "vote sheriff": ("bansha vote sheriff --from-day 3 --player 包子",),
    "vote speed": ("bansha vote speed --day 2 --mode 加速",),
    "player": (
        "bansha player out --player 烧卖 --at 2026-12-02T12:30:00+08:00 --cause 第2天中午被决斗",
    ),
    "player out": (
        "bansha player out --player 烧卖 --at 2026-12-02T12:30:00+08:00 --cause 第2天中午被决斗",
    ),
    "player substitute": (
        "bansha player substitute --player 烧卖 --uid 120 --name 替补甲 --at 2026-12-02T12:00:00+08:00",  # noqa: E501
    ),
    "new": (
        "bansha new 我的游戏.toml --ruleset {ruleset}",
        "bansha new 新局.toml --ruleset {ruleset} --fid 42",
    ),
    "check": ("bansha check", "bansha check 我的游戏.toml --online"),
    "init": ("bansha init",),
    "crawl": ("bansha crawl", "bansha crawl --day 2 --full"),
    "posts": ("bansha posts --day 2 --player 包子",),
    "cycle": ("bansha cycle", "bansha -v cycle"),
    "schedule": ("bansha schedule", "bansha schedule --every 10"),
    "night": ("bansha night add --night 1 --actor 汤圆 --skill 杀人 --target 烧卖",),
    "night add": ("bansha night add --night 1 --actor 汤圆 --skill 杀人 --target 烧卖",),
    "night list": ("bansha night list --night 1",),
    "night remove": ("bansha night remove 4",),
    "night resolve": ("bansha night resolve --night 1",),
    "day": ("bansha day resolve", "bansha day resolve --day 2"),
    "day add": (
        "bansha day add --day 2 --actor 饺子 --skill 最后一枪 --target 包子 --at 2026-12-02T15:00:00+08:00",  # noqa: E501
    ),
    "day resolve": ("bansha day resolve", "bansha day resolve --day 2"),
    "state": ("bansha state", "bansha state --phase night:1"),
    "deal": ("bansha deal", "bansha deal --reveal"),
    "publish": ("bansha publish", "bansha publish record 7 --pid 123456"),
    "publish send": ("bansha publish", "bansha publish --id 7"),
    "publish record": ("bansha publish record 7 --pid 123456",),
    "demo": ("bansha demo", "bansha demo --db 演示/demo.db"),
    "drafts": ("bansha drafts", "bansha drafts approve 5"),
    "drafts list": ("bansha drafts list", "bansha drafts list --all"),
    "drafts show": ("bansha drafts show 5",),
    "drafts edit": ("bansha drafts edit 5",),
    "drafts approve": ("bansha drafts approve 5",),
    "drafts reject": ("bansha drafts reject 5 --why 结果要等夜晚结算后再公布",),
    "drafts make": ("bansha drafts make",),
    "lastwords": ("bansha lastwords add --player 烧卖 --text 我是好人，查验饺子",),
    "lastwords add": (
        "bansha lastwords add --player 烧卖 --text 我是好人，查验饺子",
        "bansha lastwords add --player 烧卖 --file 遗言.txt",
    ),
    "lastwords list": ("bansha lastwords list",),
    "lastwords remove": ("bansha lastwords remove 2",),
    "report": ("bansha report --day 2 --html 第2天.html",),
    "serve": ("bansha serve", "bansha serve 游戏/ --port 9000"),
    "signup": ("bansha signup --dry-run", "bansha signup --until 2026-12-01T20:00:00+08:00"),
    "status": ("bansha status", "bansha status 游戏/"),
    "tally": ("bansha tally", "bansha tally --day 2 --as-of 2026-12-02T21:00:00+08:00"),
    "threads": ("bansha threads",),
    "flags revoke": ("bansha flags revoke d2-qianshui-包子 --why 他的帖子被论坛延迟显示了",),
    "card revoke": ("bansha card revoke 3 --why 给错了人",),
    "undo": ("bansha undo list", "bansha undo proxy 3 --why 代投记错了人"),
    "undo list": ("bansha undo list", "bansha undo list --all"),
    "undo action": ("bansha undo action 4 --why 女巫说她没有用毒",),
    "undo draft": ("bansha undo draft 12 --why 批准早了，还要改",),
    "undo card": ("bansha undo card 3 --why 给错了人",),
    "undo flag": ("bansha undo flag d2-qianshui-包子 --why 他的帖子被论坛延迟显示了",),
    "undo modifier": ("bansha undo modifier 2 --why 技能目标记错了",),
    "undo out": ("bansha undo out 1 --why 出局记错了人",),
    "undo proxy": ("bansha undo proxy 3 --why 代投记错了人",),
    "undo sheriff": ("bansha undo sheriff --from-day 2 --why 警徽移交记错",),
    "undo speed": ("bansha undo speed --day 2 --why 加速申请人数数错了",),
    "undo substitute": ("bansha undo substitute 1 --why 替补的时间记错了",),
    "templates": ("bansha templates 我的模板",),
    "run": ("bansha run", "bansha run 游戏目录/ --port 9000"),
}


def epilog(path: str) -> str | None:
    """The ``--help`` epilog of the command at ``path``: its examples, one a line."""
    if path == "post" or path.startswith("post "):  # the old name of publish
        path = "publish" + path[len("post") :]
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    if any("{ruleset}" in line for line in lines):  # the rule set's name is the registry's
        from engine.rulesets import EXAMPLE_RULESET

        lines = tuple(line.format(ruleset=EXAMPLE_RULESET) for line in lines)
    return "\b\n" + HEADING + "\n" + "\n".join(f"  {line}" for line in lines)


def attach(command: click.Command, path: str) -> None:
    """Give ``command`` (and the commands under it) their examples. A help that already has
    one, in its text or its epilog, is left as it is."""
    own = f"{command.help or ''}\n{command.epilog or ''}"
    if HEADING not in own and (text := epilog(path)) is not None:
        command.epilog = text if not command.epilog else f"{command.epilog}\n\n{text}"
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            attach(sub, f"{path} {name}".strip())
