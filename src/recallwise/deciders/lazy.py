"""Registry factories that import a backend only when it is asked for.

A backend whose optional extra is missing then fails with a :class:`UsageError` naming the
extra to install, and the other backends (and ``import recallwise``) are unaffected.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import Any

from ..errors import UsageError
from .base import Decider

__all__ = ["lazy_factory"]


def lazy_factory(module: str, class_name: str, *, takes_url: bool = True) -> Callable[..., Decider]:
    """A ``make_decider`` factory for ``recallwise.deciders.<module>.<class_name>``.

    Options the class does not take are a usage error naming the ones it does (a wrong
    ``--url`` or option must not become a traceback).
    """

    def factory(**options: Any) -> Decider:
        cls = getattr(importlib.import_module(f"{__package__}.{module}"), class_name)
        name = getattr(cls, "name", module)
        if not takes_url and options.get("url"):
            raise UsageError(f"the {name} decider runs in-process and takes no --url")
        if not takes_url:
            options.pop("url", None)
        accepted = [p for p in inspect.signature(cls).parameters if p != "self"]
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            raise UsageError(
                f"the {name} decider does not take {', '.join(unknown)}; it takes: {', '.join(accepted)}"
            )
        decider: Decider = cls(**options)
        return decider

    return factory
