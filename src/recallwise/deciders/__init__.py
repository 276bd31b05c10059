"""Decision backends behind the typed-question ("system one") contract.

``make_decider(name)`` builds a registered backend, ``from_spec(name, url)`` the one a
``--decider`` / ``--url`` pair names (``none``: no decider); ``default_decider()`` is the offline
embedded one. Any object with ``name`` and ``ask(state, questions)`` is a decider too.
"""

from __future__ import annotations

from typing import Any

from .base import (
    BaseDecider,
    Capabilities,
    Decider,
    Decision,
    DecisionHints,
    Reply,
    as_decider,
    ask,
)
from .embedded import EmbeddedDecider
from .questions import (
    Answer,
    ChoiceAnswer,
    Example,
    Question,
    ScoreAnswer,
    parse_answers,
    validate_request,
)
from .registry import NO_DECIDER, available_deciders, from_spec, lazy_factory, make_decider, register_decider
from .thresholds import DEFAULT_THRESHOLDS, Threshold, default_threshold

__all__ = [
    "DEFAULT_THRESHOLDS",
    "NO_DECIDER",
    "Answer",
    "BaseDecider",
    "Capabilities",
    "ChoiceAnswer",
    "Decider",
    "Decision",
    "DecisionHints",
    "EmbeddedDecider",
    "Example",
    "Question",
    "Reply",
    "ScoreAnswer",
    "Threshold",
    "as_decider",
    "ask",
    "available_deciders",
    "default_decider",
    "default_threshold",
    "from_spec",
    "make_decider",
    "parse_answers",
    "register_decider",
    "validate_request",
]

_DEFAULT: EmbeddedDecider | None = None


def default_decider() -> EmbeddedDecider:
    """The offline embedded decider (shared instance: question embeddings are cached once)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = EmbeddedDecider()
    return _DEFAULT


def _embedded(**options: Any) -> BaseDecider:
    return EmbeddedDecider(**options) if options else default_decider()


register_decider("embedded", _embedded)

# Backends with optional extras or network peers: imported only when asked for by name.
register_decider("sparrow", lazy_factory("sparrow", "SparrowDecider", takes_url=False))
register_decider("systemone", lazy_factory("systemone", "SystemOneDecider"))
register_decider("openrouter", lazy_factory("openrouter", "OpenRouterDecider"))
register_decider("sagemaker", lazy_factory("sagemaker", "SageMakerDecider"))
register_decider("strands-local", lazy_factory("strands_local", "StrandsLocalDecider"))
register_decider("llm", lazy_factory("llm", "LLMDecider"))
