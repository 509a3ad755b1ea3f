"""One module per rule set (m209, zhenyan, m135, tubian24, nizhuan), registered by id.

``get_ruleset("m135")`` returns the rule set; ids and aliases are matched case-insensitively.
This registry is the only place that knows the ids: everything a rule set is — its vote,
conduct, card, speed, announcement, last-words, election, inquiry and line-up rules — is
declared on its class in ``engine/rulesets/<id>.py``: the pipeline looks it up with
``get_ruleset(id)`` and gives it to the engine modules, which never look ids up. A sixth rule set
is one new module plus its rule text, and its two lines here; a rule set that extends another
(``class M135Plus(M135)``) may also be defined elsewhere and added with :func:`register`.

The registry is lazy: a rule set's module is imported the first time its id is asked for, so a
command about one game loads that game's rule set only (a tally starts faster). Only
an alias (``"狼人真言"``) or an unknown name loads them all, to read every class's ``aliases``.
Importing the registry loads no rule set (nor :mod:`engine.rulesets.base`): what an overview
names without the rules — a rule set's title and whether its first day elects the sheriff — is
declared beside its class's name (:func:`ruleset_header`) and checked against the class
whenever it is loaded.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:  # the type checker sees them; a run loads base with the first rule set
    from engine.rulesets.base import RULE_KEYS, CountSheet, Decision, Ruleset

__all__ = [
    "EXAMPLE_RULESET",
    "EXAMPLE_SECRET_TABLE",
    "REGISTRY",
    "RULE_KEYS",
    "CountSheet",
    "Decision",
    "Ruleset",
    "RulesetHeader",
    "get_ruleset",
    "register",
    "ruleset_header",
    "ruleset_ids",
    "unregister",
]

_BASE_NAMES = frozenset({"RULE_KEYS", "CountSheet", "Decision", "Ruleset"})


def _base() -> ModuleType:
    """:mod:`engine.rulesets.base`, imported with the first rule set (by name, as they are)."""
    return importlib.import_module(f"{__name__}.base")


def __getattr__(name: str) -> Any:
    if name in _BASE_NAMES:
        return getattr(_base(), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class RulesetHeader(NamedTuple):
    """What is known of a rule set without loading it: its ``title`` and its
    ``has_sheriff_election``."""

    title: str
    has_sheriff_election: bool


#: Rule set id → the name of its class in ``engine/rulesets/<id>.py``, in the order the README
#: lists them.
_CLASSES: dict[str, str] = {
    "m209": "M209",
    "zhenyan": "Zhenyan",
    "m135": "M135",
    "tubian24": "Tubian24",
    "nizhuan": "Nizhuan",
}

#: Rule set id → its class's ``title`` and ``has_sheriff_election`` (checked when it loads).
_HEADERS: dict[str, RulesetHeader] = {
    "m209": RulesetHeader("新RD规则", True),
    "zhenyan": RulesetHeader("狼人真言", True),
    "m135": RulesetHeader("让子弹飞", True),
    "tubian24": RulesetHeader("变异屠边24人局", False),
    "nizhuan": RulesetHeader("逆转时空", True),
}

#: The id messages show as an example (``ruleset = "m135"``): the demo game's rule set.
EXAMPLE_RULESET: str = "m135"
#: The secret table messages show as an example (``[zhenyan]``, the secret words).
EXAMPLE_SECRET_TABLE: str = "zhenyan"


_LOADED: dict[str, type[Ruleset]] = {}  # the classes imported so far, by id


def _load(id: str) -> type[Ruleset]:
    """The class of rule set ``id`` (a registered id), its module imported on first use."""
    cls = _LOADED.get(id)
    if cls is None:
        cls = getattr(importlib.import_module(f"{__name__}.{id}"), _CLASSES[id])
        where = f"engine/rulesets/{id}.py"
        if not (isinstance(cls, type) and issubclass(cls, _base().Ruleset) and cls.id == id):
            raise TypeError(f"内部错误：{where} 中的 {_CLASSES[id]} 不是规则集 {id}")
        if _header_of(cls) != _HEADERS[id]:
            raise TypeError(
                f"内部错误：{where} 中 {_CLASSES[id]} 的 title/has_sheriff_election "
                f"与 engine/rulesets/__init__.py 登记的 {tuple(_HEADERS[id])} 不同"
            )
        _LOADED[id] = cls
    return cls


def _header_of(cls: type[Ruleset]) -> RulesetHeader:
    return RulesetHeader(cls.title, cls.has_sheriff_election)


def ruleset_header(id: str) -> RulesetHeader | None:
    """The title and the day-1 sheriff election of the rule set registered as ``id`` (exactly
    an id, not an alias), without loading it; None for an id that is not registered."""
    return _HEADERS.get(id)


class _Registry(Mapping[str, "type[Ruleset]"]):
    """Rule sets by id, in the order the README lists them; iterating, ``len`` and ``in`` import
    nothing, looking one up imports its module."""

    def __getitem__(self, id: str) -> type[Ruleset]:
        if id not in _CLASSES:
            raise KeyError(id)
        return _load(id)

    def __iter__(self) -> Iterator[str]:
        return iter(_CLASSES)

    def __len__(self) -> int:
        return len(_CLASSES)

    def __contains__(self, id: object) -> bool:
        return id in _CLASSES


#: Rule sets by id (a lazy mapping: see :class:`_Registry`).
REGISTRY: Mapping[str, type[Ruleset]] = _Registry()

_BY_ID: dict[str, str] = {id.casefold(): id for id in _CLASSES}
_BY_ALIAS: dict[str, str] | None = None  # built on the first lookup that is not an id


def _by_alias() -> dict[str, str]:
    """Every alias (casefolded) → its rule set's id; imports every rule set, once."""
    global _BY_ALIAS
    if _BY_ALIAS is None:
        _BY_ALIAS = {a.casefold(): id for id in _CLASSES for a in _load(id).aliases}
    return _BY_ALIAS


def register(id: str, cls: type[Ruleset]) -> None:
    """Register ``cls`` (a :class:`Ruleset` subclass whose ``id`` is ``id``) under ``id``: a rule
    set defined outside this package, e.g. one that extends another by a role. Raises
    ValueError when the id is taken or does not match the class."""
    global _BY_ALIAS
    if not (isinstance(cls, type) and issubclass(cls, _base().Ruleset) and cls.id == id):
        raise ValueError(f"{cls!r} 不是 id 为 {id!r} 的规则集")
    if id.casefold() in _BY_ID:
        raise ValueError(f"规则集 {id!r} 已经注册")
    _CLASSES[id] = cls.__name__
    _HEADERS[id] = _header_of(cls)
    _LOADED[id] = cls
    _BY_ID[id.casefold()] = id
    _BY_ALIAS = None


def unregister(id: str) -> None:
    """Undo :func:`register` (KeyError for an id that was never registered)."""
    global _BY_ALIAS
    del _CLASSES[id], _HEADERS[id], _LOADED[id], _BY_ID[id.casefold()]
    _BY_ALIAS = None


def ruleset_ids() -> tuple[str, ...]:
    return tuple(_CLASSES)


def get_ruleset(id: str) -> Ruleset:
    """The rule set registered as ``id`` (or one of its aliases).

    Raises ValueError with a Chinese message naming the valid ids when there is none.
    """
    name = id.strip().casefold()
    found = _BY_ID.get(name) or _by_alias().get(name)
    if found is None:
        raise ValueError(f"未知的规则集：{id!r}（可选：{'、'.join(_CLASSES)}）")
    return _load(found)()
