"""Decision backends behind the typed-question ("system one") contract.

``make_decider(name)`` builds a registered backend; ``default_decider()`` is the offline
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
    available_deciders,
    make_decider,
    register_decider,
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
from .thresholds import DEFAULT_THRESHOLDS, Threshold, default_threshold

__all__ = [
    "DEFAULT_THRESHOLDS",
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
from .lazy import lazy_factory as _lazy  # noqa: E402

register_decider("sparrow", _lazy("sparrow", "SparrowDecider", takes_url=False))
register_decider("systemone", _lazy("systemone", "SystemOneDecider"))
register_decider("openrouter", _lazy("openrouter", "OpenRouterDecider"))
register_decider("sagemaker", _lazy("sagemaker", "SageMakerDecider"))
register_decider("strands-local", _lazy("strands_local", "StrandsLocalDecider"))
register_decider("llm", _lazy("llm", "LLMDecider"))
