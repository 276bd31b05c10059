"""The decision backends by name: ``make_decider(name, **options)``, and :func:`from_spec`, the
decider a ``--decider NAME --url URL`` pair names (``none`` / ``stock``: no decider, the stock
behaviour), which the CLI, the service and the MCP server share.

Built-in backends with optional extras or network peers are registered as :func:`lazy_factory`:
imported only when asked for by name, so a missing extra fails with a :class:`UsageError` naming
it, and the other backends (and ``import recallwise``) are unaffected. An installed package adds a
backend in the ``recallwise.deciders`` entry-point group (:mod:`recallwise.registry`).
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable
from typing import Any

from ..errors import UsageError
from ..registry import DECIDERS_GROUP, Registry
from .base import Decider

__all__ = [
    "NO_DECIDER",
    "available_deciders",
    "from_spec",
    "lazy_factory",
    "make_decider",
    "register_decider",
]

#: The names that mean no decider: the stock behaviour (always retrieve, keep above the score
#: floor), the control arm of every comparison.
NO_DECIDER = ("none", "stock")

_REGISTRY: Registry[Callable[..., Any]] = Registry("decider", DECIDERS_GROUP)


def register_decider(name: str, factory: Callable[..., Any]) -> None:
    """Make ``make_decider(name, **options)`` build a decider with ``factory(**options)``."""
    if name in NO_DECIDER:
        raise UsageError(f"decider name {name!r} is taken: it means no decider (the stock behaviour)")
    _REGISTRY.register(name, factory)


def available_deciders() -> list[str]:
    """Every registered backend's name (``none`` / ``stock``, no decider, are not backends)."""
    return _REGISTRY.names()


def make_decider(name: str, **options: Any) -> Any:
    """Build the decision backend registered as ``name`` (``embedded``, ``sparrow``, ...)."""
    return _REGISTRY.get(name)(**options)


def from_spec(name: str, url: str | None = None, **options: Any) -> Any | None:
    """The decider ``name`` and ``url`` name (``--decider``, ``--url``): None for ``none`` or
    ``stock`` (the stock behaviour), else ``make_decider(name, url=url, **options)``, the URL
    passed only when given (a backend's default is its own environment variable)."""
    if name in NO_DECIDER:
        if url:
            raise UsageError(f"--url {url}: decider {name!r} is the stock behaviour and calls no backend")
        return None
    if _REGISTRY.find(name) is None:
        raise UsageError(
            f"unknown decider {name!r}; available: {', '.join(available_deciders())} "
            f"(or {' / '.join(NO_DECIDER)}: no decider, the stock behaviour)"
        )
    return make_decider(name, **({"url": url} if url else {}), **options)


def lazy_factory(module: str, class_name: str, *, takes_url: bool = True) -> Callable[..., Decider]:
    """A ``make_decider`` factory for ``recallwise.deciders.<module>.<class_name>``, imported on
    first use. Options the class does not take are a usage error naming the ones it does (a wrong
    ``--url`` or option must not become a traceback)."""

    def factory(**options: Any) -> Decider:
        cls = getattr(importlib.import_module(f"{__package__}.{module}"), class_name)
        name = getattr(cls, "name", module)
        if not takes_url and options.get("url"):
            raise UsageError(f"the {name} decider runs in-process and takes no --url")
        if not takes_url:
            options.pop("url", None)
        accepted = keywords(cls)
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise UsageError(
                f"the {name} decider does not take {', '.join(unknown)}; it takes: {', '.join(accepted)}"
            )
        decider: Decider = cls(**options)
        return decider

    return factory


def keywords(cls: type) -> list[str]:
    """The keywords ``cls(...)`` takes: its parameters, with a ``**options: Unpack[SomeKeywords]``
    spelled out as the keys of that TypedDict."""
    names: list[str] = []
    for name, parameter in inspect.signature(cls).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            (typed,) = typing.get_args(typing.get_type_hints(cls.__init__)[name])  # type: ignore[misc]
            names.extend(typed.__annotations__)
        elif name != "self":
            names.append(name)
    return names
