"""The recall policy: gate -> route -> search -> judge -> keep -> pack, with stats and a trace."""

from __future__ import annotations

from .config import FittedThreshold, ThresholdConfig, read_config, write_config
from .log import DecisionLog, LoggedTurn
from .options import RecallOptions
from .pack import CLOSE_TAG, OPEN_TAG, count_tokens, escape_memory_text, pack_context
from .policy import KeptRecord, Recall, RecallPolicy, message_text
from .stats import RecallStats
from .thresholds import Thresholds
from .trace import Candidate, Trace
from .turn import Turn

__all__ = [
    "CLOSE_TAG",
    "OPEN_TAG",
    "Candidate",
    "DecisionLog",
    "FittedThreshold",
    "KeptRecord",
    "LoggedTurn",
    "Recall",
    "RecallOptions",
    "RecallPolicy",
    "RecallStats",
    "ThresholdConfig",
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
