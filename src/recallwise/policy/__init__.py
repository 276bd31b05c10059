"""The recall policy: gate -> route -> search -> judge -> (episodic re-scoring) -> keep -> pack,
with stats and a trace."""

from __future__ import annotations

from .budget import ADAPTIVE_BUDGET, AdaptiveBudget
from .config import FittedThreshold, ThresholdConfig, read_config, write_config
from .conversation import CONVERSATION_WEIGHTS, ConversationWeights
from .log import DecisionLog, LoggedTurn
from .options import (
    EPISODIC_OPTIONS,
    FollowUpOptions,
    KeepOptions,
    LimitOptions,
    RecallOptions,
    ReliabilityOptions,
    SearchOptions,
    ThresholdOptions,
)
from .pack import CLOSE_TAG, OPEN_TAG, count_tokens, escape_memory_text, pack_context
from .policy import KeptRecord, Recall, RecallPolicy, message_text
from .stats import RecallStats
from .thresholds import Thresholds
from .trace import Candidate, Trace
from .turn import Turn

__all__ = [
    "ADAPTIVE_BUDGET",
    "CLOSE_TAG",
    "CONVERSATION_WEIGHTS",
    "EPISODIC_OPTIONS",
    "OPEN_TAG",
    "AdaptiveBudget",
    "Candidate",
    "ConversationWeights",
    "DecisionLog",
    "FittedThreshold",
    "FollowUpOptions",
    "KeepOptions",
    "KeptRecord",
    "LimitOptions",
    "LoggedTurn",
    "Recall",
    "RecallOptions",
    "RecallPolicy",
    "RecallStats",
    "ReliabilityOptions",
    "SearchOptions",
    "ThresholdConfig",
    "ThresholdOptions",
    "Thresholds",
    "Trace",
    "Turn",
    "count_tokens",
    "escape_memory_text",
    "message_text",
    "pack_context",
    "read_config",
    "write_config",
]
