"""The write path: conversation events in, AgentCore-shaped long-term records out.

>>> from recallwise.extraction import extract_and_store
>>> result = extract_and_store(store, "demo_user")   # the actor's events already in the store
>>> result.added, result.updated

Extractors: :class:`RuleExtractor` (offline default, no model) and :class:`LLMExtractor`
(:class:`OpenAIChat` for any OpenAI-compatible endpoint, :class:`BedrockChat` for Bedrock).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UsageError
from .base import (
    DEFAULT_STRATEGIES,
    PREFERENCE,
    SEMANTIC,
    ExtractedMemory,
    ExtractionError,
    Extractor,
    Strategy,
    preference_blob,
)
from .consolidate import DUPLICATE_COSINE, ConsolidationResult, consolidate
from .llm import BedrockChat, ChatModel, LLMExtractor, OpenAIChat, parse_extraction
from .pipeline import (
    ExtractionLimitError,
    ExtractionLimits,
    ExtractionResult,
    extract_and_store,
    extract_memories,
)
from .rules import RuleExtractor, third_person

__all__ = [
    "DEFAULT_STRATEGIES",
    "DUPLICATE_COSINE",
    "EXTRACTORS",
    "PREFERENCE",
    "SEMANTIC",
    "BedrockChat",
    "ChatModel",
    "ConsolidationResult",
    "ExtractedMemory",
    "ExtractionError",
    "ExtractionLimitError",
    "ExtractionLimits",
    "ExtractionResult",
    "Extractor",
    "LLMExtractor",
    "OpenAIChat",
    "RuleExtractor",
    "Strategy",
    "consolidate",
    "extract_and_store",
    "extract_memories",
    "make_extractor",
    "parse_extraction",
    "preference_blob",
    "third_person",
]

EXTRACTORS = ("rules", "openai", "bedrock")


def make_extractor(name: str = "rules", **options: Any) -> Extractor:
    """An extractor by name: ``rules`` (offline), ``openai`` or ``bedrock`` (both need ``model=``).

    ``openai`` also takes ``base_url=`` and ``api_key=``; ``bedrock`` takes ``region=``.
    """
    builders: dict[str, Callable[..., Extractor]] = {
        "rules": lambda: RuleExtractor(),
        "openai": lambda model=None, **kw: LLMExtractor(OpenAIChat(_need_model(name, model), **kw)),
        "bedrock": lambda model=None, **kw: LLMExtractor(BedrockChat(_need_model(name, model), **kw)),
    }
    if name not in builders:
        raise UsageError(f"unknown extractor {name!r}; available: {', '.join(EXTRACTORS)}")
    if name == "rules" and any(v is not None for v in options.values()):
        raise UsageError("the rules extractor takes no model options")
    return builders[name](**{k: v for k, v in options.items() if v is not None})


def _need_model(name: str, model: str | None) -> str:
    if not model:
        raise UsageError(f"the {name} extractor needs a model name (--model)")
    return model
