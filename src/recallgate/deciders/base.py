"""The decider protocol, the backend registry and the one call the policy makes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..errors import DeciderBadResponse, DeciderError, UsageError
from .questions import Answer, Question, parse_answers, validate_request

__all__ = [
    "Decider",
    "DecisionHints",
    "ask",
    "available_deciders",
    "make_decider",
    "register_decider",
]


@runtime_checkable
class Decider(Protocol):
    """Anything with a ``name`` and ``ask(state, questions) -> {question_name: answer}``.

    ``questions`` maps names to systemone question objects
    (``{"type": "noul", "instructions": ..., "criteria": {...}}``). A noul answer is a float
    in [0, 1]; choice and score answers are objects (see :mod:`recallgate.deciders.questions`).
    Raise any exception to signal failure: the policy fails open and counts it.
    """

    name: str

    def ask(self, state: str, questions: Mapping[str, Any]) -> Mapping[str, Any]: ...


@dataclass
class DecisionHints:
    """Vectors the policy already has, for deciders that set ``accepts_hints = True``.

    The query embedding is computed once per turn; an embedding decider reuses it (and the
    stored records' vectors) instead of embedding again.
    """

    state_vector: np.ndarray | None = None
    subject_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    #: Extra per-question features (e.g. the store's search score for a judged record).
    subject_scores: dict[str, float] = field(default_factory=dict)
    #: The full-text (BM25) score of a judged record when a hybrid search matched its words.
    subject_lexical: dict[str, float] = field(default_factory=dict)


_FACTORIES: dict[str, Callable[..., Decider]] = {}
_LOCK = threading.Lock()


def register_decider(name: str, factory: Callable[..., Decider]) -> None:
    """Make ``make_decider(name, **options)`` build a decider with ``factory(**options)``."""
    with _LOCK:
        _FACTORIES[name] = factory


def available_deciders() -> list[str]:
    return sorted(_FACTORIES)


def make_decider(name: str, **options: Any) -> Decider:
    """Build the decision backend registered as ``name`` (``embedded``, ``sparrow``, ...)."""
    if name not in _FACTORIES:
        raise UsageError(f"unknown decider {name!r}; available: {', '.join(available_deciders())}")
    return _FACTORIES[name](**options)


def ask(
    decider: Decider,
    state: str,
    questions: Mapping[str, Question],
    hints: DecisionHints | None = None,
) -> dict[str, Answer]:
    """Ask every question in one call and return validated answers.

    Wraps anything the backend raises that is not already a :class:`DeciderError` so the
    caller has one exception type to fail open on.
    """
    try:
        if getattr(decider, "accepts_hints", False):
            raw = decider.ask(state, questions, hints=hints)  # type: ignore[call-arg]
        else:
            with_examples = getattr(decider, "accepts_examples", False)
            wire = {name: q.to_wire(with_examples=with_examples) for name, q in questions.items()}
            raw = decider.ask(state, wire)
    except DeciderError:
        raise
    except Exception as exc:  # a user's decider may raise anything: fail open, but say what
        error = DeciderError(
            f"{getattr(decider, 'name', type(decider).__name__)}: {type(exc).__name__}: {exc}"
        )
        error.kind = _kind_of(exc)
        raise error from exc
    try:
        return parse_answers(questions, raw)
    except DeciderBadResponse:
        raise
    except Exception as exc:  # pragma: no cover - parse_answers raises DeciderBadResponse
        raise DeciderBadResponse(str(exc)) from exc


def _kind_of(exc: BaseException) -> str:
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, (ConnectionError, OSError)):
        return "unavailable"
    return "error"


def check_request(state: Any, questions: Mapping[str, Any]) -> dict[str, Question]:
    """Validate a request (used by backends and the CLI before any network call)."""
    return validate_request(state, questions)
