"""recallwise: decide what an AI agent should remember right now.

import recallwise
store = recallwise.open_store("sqlite:///memory.db")
policy = recallwise.RecallPolicy(store, decider=recallwise.default_decider(),
                                 namespaces=["/facts/{actorId}", "/preferences/{actorId}"])
recall = policy.recall("I'd like a drink, what should I get?", actor_id="demo_user")
recall.context   # the block to inject ("" when nothing is kept)
"""

from __future__ import annotations

from ._version import __version__
from .deciders import (
    BaseDecider,
    ChoiceAnswer,
    Decider,
    EmbeddedDecider,
    Question,
    ScoreAnswer,
    available_deciders,
    default_decider,
    make_decider,
    register_decider,
)
from .embeddings import Embedder, default_embedder, make_embedder, register_embedder
from .errors import (
    DeciderBadResponse,
    DeciderError,
    DeciderTimeout,
    DeciderUnavailable,
    DimensionMismatchError,
    InvalidIdError,
    RecallwiseError,
    StoreError,
    UsageError,
)
from .policy import (
    DecisionLog,
    FollowUpOptions,
    KeepOptions,
    LimitOptions,
    Recall,
    RecallOptions,
    RecallPolicy,
    RecallStats,
    ReliabilityOptions,
    SearchOptions,
    ThresholdOptions,
)
from .records import Event, MemoryRecord, SearchHit, render_text, resolve_namespace, validate_id
from .stores import MemoryStore, Searcher, SearchRequest, open_store, register_store

__all__ = [
    "BaseDecider",
    "ChoiceAnswer",
    "Decider",
    "DeciderBadResponse",
    "DeciderError",
    "DeciderTimeout",
    "DeciderUnavailable",
    "DecisionLog",
    "DimensionMismatchError",
    "EmbeddedDecider",
    "Embedder",
    "Event",
    "FollowUpOptions",
    "InvalidIdError",
    "KeepOptions",
    "LimitOptions",
    "MemoryRecord",
    "MemoryStore",
    "Question",
    "Recall",
    "RecallOptions",
    "RecallPolicy",
    "RecallStats",
    "RecallwiseError",
    "ReliabilityOptions",
    "ScoreAnswer",
    "SearchHit",
    "SearchOptions",
    "SearchRequest",
    "Searcher",
    "StoreError",
    "ThresholdOptions",
    "UsageError",
    "__version__",
    "available_deciders",
    "default_decider",
    "default_embedder",
    "make_decider",
    "make_embedder",
    "open_store",
    "register_decider",
    "register_embedder",
    "register_store",
    "render_text",
    "resolve_namespace",
    "validate_id",
]
