"""LangGraph namespaces as recallwise namespaces, and LangGraph's match and filter semantics."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langgraph.store.base import MatchCondition

_ESCAPED = re.compile(r"%(25|2F)")


def namespace_path(namespace: Sequence[str]) -> str:
    """A LangGraph namespace as a recallwise namespace: ``("memories", "u1")`` -> ``/memories/u1``
    (``%`` and ``/`` inside a label are written ``%25`` and ``%2F``)."""
    return "/" + "/".join(label.replace("%", "%25").replace("/", "%2F") for label in namespace)


def namespace_tuple(path: str) -> tuple[str, ...]:
    """The inverse of :func:`namespace_path` (any recallwise namespace reads as a tuple)."""
    labels = [label for label in path.split("/") if label]
    return tuple(_ESCAPED.sub(lambda m: "%" if m.group(1) == "25" else "/", label) for label in labels)


def path_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    window = (
        namespace[: len(path)]
        if condition.match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(want == "*" or want == have for want, have in zip(path, window, strict=True))


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda have, want: bool(have == want),
    "$ne": lambda have, want: bool(have != want),
    "$gt": lambda have, want: float(have) > float(want),
    "$gte": lambda have, want: float(have) >= float(want),
    "$lt": lambda have, want: float(have) < float(want),
    "$lte": lambda have, want: float(have) <= float(want),
}


def matches(value: Any, condition: Any) -> bool:
    """LangGraph's filter semantics: nested equality, lists element-wise, ``$`` operators."""
    if isinstance(condition, Mapping):
        if condition and all(isinstance(k, str) and k.startswith("$") for k in condition):
            for operator, operand in condition.items():
                if operator not in _OPERATORS:
                    raise ValueError(f"Unsupported operator: {operator}")
                try:
                    if not _OPERATORS[operator](value, operand):
                        return False
                except (TypeError, ValueError):
                    return False
            return True
        return isinstance(value, Mapping) and all(matches(value.get(k), v) for k, v in condition.items())
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(value, (list, tuple))
            and len(value) == len(condition)
            and all(matches(v, c) for v, c in zip(value, condition, strict=True))
        )
    return bool(value == condition)
