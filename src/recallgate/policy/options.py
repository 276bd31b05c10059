"""Everything a :class:`~recallgate.policy.RecallPolicy` can be tuned by, in one typed value."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import UsageError
from . import stages

__all__ = ["KeepRule", "RecallOptions"]

KeepRule = stages.KeepRule


@dataclass(frozen=True)
class RecallOptions:
    """Everything a policy can be tuned by (each is also a keyword of :class:`RecallPolicy`).

    Thresholds left at None come from a fitted config or the decider's measured default (see
    :mod:`recallgate.policy.thresholds`).
    """

    #: records searched per namespace (stock: and kept when they pass ``relevance_score``)
    top_k: int = 10
    #: the stock arm's score floor (``decider=None``)
    relevance_score: float = 0.2
    gate_threshold: float | None = None
    #: the store-aware gate's lower threshold (the message names something the memory mentions)
    gate_named_threshold: float | None = None
    judge_threshold: float | None = None
    #: keep records within this of the best one of the turn (the relative rule)
    relative_delta: float | None = None
    keep: KeepRule = "both"
    max_records: int | None = None
    max_record_chars: int = 600
    max_context_chars: int = 4000
    max_state_chars: int = 2000
    #: the gated arm fuses full-text and dense search; the stock arm is always dense, as upstream
    search_mode: Literal["dense", "hybrid"] = "hybrid"
    #: turns whose query embedding and gate answers are remembered (LRU; 0 turns it off)
    cache_size: int = 256
    decider_timeout_s: float = 2.0
    store_timeout_s: float = 5.0
    breaker_threshold: int = 3
    breaker_cooldown_s: float = 30.0

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise UsageError(f"top_k must be at least 1, got {self.top_k}")
        if self.keep not in ("absolute", "relative", "both"):
            raise UsageError(f"keep must be 'absolute', 'relative' or 'both', got {self.keep!r}")
        if self.search_mode not in ("dense", "hybrid"):
            raise UsageError(f"search_mode must be 'dense' or 'hybrid', got {self.search_mode!r}")

    @classmethod
    def of(cls, base: RecallOptions | None, overrides: Mapping[str, Any]) -> RecallOptions:
        """``base`` with ``overrides``; an unknown name is a :class:`UsageError` listing the known ones."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise UsageError(f"unknown RecallPolicy option(s) {unknown}; known: {', '.join(sorted(known))}")
        return dataclasses.replace(base or cls(), **overrides)

    @property
    def limits(self) -> stages.Limits:
        return stages.Limits(
            self.max_records, self.max_record_chars, self.max_context_chars, self.max_state_chars
        )

    def given_thresholds(self) -> dict[str, float | None]:
        return {
            "gate": self.gate_threshold,
            "judge": self.judge_threshold,
            "judge_relative": self.relative_delta,
            "gate_named": self.gate_named_threshold,
        }
