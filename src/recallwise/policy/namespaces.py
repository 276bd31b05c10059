"""The namespaces a recall searches: the defaults (what the write path writes) and the one check of
a caller's templates, shared by the policy, the service and the MCP server."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import UsageError
from ..records import DEFAULT_NAMESPACES

__all__ = ["DEFAULT_NAMESPACES", "namespace_templates"]


def namespace_templates(value: Any, name: str = "namespaces") -> list[str]:
    """``value`` as a list of namespace templates.

    One string is one template (``namespaces="/facts/{actorId}"`` searches that namespace, never
    its characters); a mapping's keys are the templates (its values their descriptions). Anything
    else than strings, or none at all, is a :class:`UsageError` naming ``name`` and the item.
    """
    if isinstance(value, str):
        items: list[Any] = [value]
    elif isinstance(value, Mapping):
        items = list(value)
        for template, description in value.items():
            if not isinstance(description, str):
                raise UsageError(
                    f"{name}[{template!r}]: a namespace's description must be a string, got {description!r}"
                )
    elif isinstance(value, (bytes, bytearray)) or not isinstance(value, Iterable):
        raise UsageError(
            f'{name} must be a template ("/facts/{{actorId}}"), a list of them or a dict of '
            f"template -> description, got {value!r}"
        )
    else:
        items = list(value)
    if not items:
        raise UsageError(f"{name}: give at least one namespace template (e.g. /facts/{{actorId}})")
    for i, template in enumerate(items):
        if not isinstance(template, str) or not template.strip():
            raise UsageError(f"{name}[{i}] must be a non-empty template string, got {template!r}")
    return items
