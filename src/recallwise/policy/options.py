"""Everything a :class:`~recallwise.policy.RecallPolicy` can be tuned by, in one typed value."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from ..errors import UsageError
from . import stages
from .budget import ADAPTIVE_BUDGET, GATED_TOP_K, AdaptiveBudget
from .conversation import CONVERSATION_WEIGHTS, ConversationWeights

__all__ = ["EPISODIC_OPTIONS", "KeepRule", "RecallOptions"]

KeepRule = stages.KeepRule


#: The options for episodic memories, as fitted on LoCoMo dev (``recallwise tune keep``):
#: ``RecallPolicy(store, **EPISODIC_OPTIONS)``. ``recallwise bench locomo``'s gated arm runs with them.
EPISODIC_OPTIONS: Mapping[str, Any] = MappingProxyType(
    {"conversation_rescore": CONVERSATION_WEIGHTS, "adaptive_budget": ADAPTIVE_BUDGET}
)


@dataclass(frozen=True)
class RecallOptions:
    """Everything a policy can be tuned by (each is also a keyword of :class:`RecallPolicy`).

    Thresholds left at None come from a fitted config or the decider's measured default (see
    :mod:`recallwise.policy.thresholds`).
    """

    #: records searched per namespace by the stock arm (and kept when they pass
    #: ``relevance_score``); the gated arm searches ``gated_top_k`` when that is set
    top_k: int = 10
    #: records searched per namespace when a decider judges them. None (default): the depth
    #: fitted for the decider's backend (``policy.budget.GATED_TOP_K``: 30 for the embedded
    #: decider, fitted on LoCoMo dev) or ``top_k`` when that is larger; ``top_k`` for a backend
    #: with no fitted depth. The judge keeps a few, so searching deeper costs judge time, not
    #: prompt tokens. A turn's own ``top_k`` (``recall(..., top_k=N)``, a framework asking for
    #: a page) is searched as asked.
    gated_top_k: int | None = None
    #: the stock arm's score floor (``decider=None``)
    relevance_score: float = 0.2
    gate_threshold: float | None = None
    #: the store-aware gate's lower threshold (the message names something the memory mentions)
    gate_named_threshold: float | None = None
    judge_threshold: float | None = None
    #: the route's: a namespace is searched when the route gives it at least this (every one
    #: when the route is unsure). Asked only when the namespaces have descriptions.
    route_threshold: float | None = None
    #: keep records within this of the best one of the turn (the relative rule)
    relative_delta: float | None = None
    keep: KeepRule = "both"
    max_records: int | None = None
    #: For episodic memories (observations of what happened, session by session, like
    #: LoCoMo's): after the judge, re-score a turn's records by the sessions they came from and
    #: their closeness to the pool's centre (:mod:`recallwise.policy.conversation`;
    #: ``CONVERSATION_WEIGHTS`` were fitted on LoCoMo dev). Off (None) by default: on a
    #: persona's facts and preferences, also told over several conversations, it drops records
    #: a turn needs (``recallwise demo``: the flight turn loses YVR, the dinner turn the
    #: vegetarian and peanut-allergy records). Embedded decider only: the weights are in its
    #: judge log-odds (another decider's answers are left as they are, and the trace says so).
    conversation_rescore: ConversationWeights | None = None
    #: For episodic memories: keep as many records as :class:`AdaptiveBudget` says, after the
    #: thresholds (``max_records`` still caps it; ``ADAPTIVE_BUDGET`` keeps at most 5). Off
    #: (None) by default: the demo's dinner turn needs 11 records. Embedded decider only.
    adaptive_budget: AdaptiveBudget | None = None
    max_record_chars: int = stages.Limits.max_record_chars
    max_context_chars: int = stages.Limits.max_context_chars
    max_state_chars: int = stages.Limits.max_state_chars
    #: the gated arm fuses full-text and dense search; the stock arm is always dense, as upstream
    search_mode: Literal["dense", "hybrid"] = "hybrid"
    #: turns whose query embedding and gate answers are remembered (LRU; 0 turns it off)
    cache_size: int = 256
    #: Follow-ups (:mod:`recallwise.policy.follow_up`): "continue" or "what about tomorrow?"
    #: after a turn that retrieved retrieves too, for the two messages together. The threshold
    #: on the follow-up question (None: fitted config or the backend's measured default; a
    #: backend without one never asks it), how long a conversation's last request counts, and
    #: how many conversations are remembered (LRU; 0 turns follow-ups off).
    follow_up_threshold: float | None = None
    follow_up_ttl_s: float = 900.0
    follow_up_conversations: int = 4096
    decider_timeout_s: float = 2.0
    store_timeout_s: float = 5.0
    breaker_threshold: int = 3
    breaker_cooldown_s: float = 30.0

    def __post_init__(self) -> None:
        if self.top_k < 1:
            raise UsageError(f"top_k must be at least 1, got {self.top_k}")
        if self.gated_top_k is not None and self.gated_top_k < 1:
            raise UsageError(f"gated_top_k must be at least 1 (or None for top_k), got {self.gated_top_k}")
        if self.conversation_rescore is not None and not isinstance(
            self.conversation_rescore, ConversationWeights
        ):
            raise UsageError(
                "conversation_rescore must be a ConversationWeights or None (off), "
                f"got {self.conversation_rescore!r}"
            )
        if self.adaptive_budget is not None and not isinstance(self.adaptive_budget, AdaptiveBudget):
            raise UsageError(
                f"adaptive_budget must be an AdaptiveBudget or None (off), got {self.adaptive_budget!r}"
            )
        if self.keep not in ("absolute", "relative", "both"):
            raise UsageError(f"keep must be 'absolute', 'relative' or 'both', got {self.keep!r}")
        if self.follow_up_ttl_s < 0 or self.follow_up_conversations < 0:
            raise UsageError(
                "follow_up_ttl_s and follow_up_conversations must be >= 0 (0 turns follow-ups off), "
                f"got {self.follow_up_ttl_s}, {self.follow_up_conversations}"
            )
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

    def search_depth(self, backend: str | None) -> int:
        """Records searched per namespace by a policy whose decider is ``backend`` (None: stock)."""
        if backend is None:
            return self.top_k
        if self.gated_top_k is not None:
            return self.gated_top_k
        return max(self.top_k, GATED_TOP_K.get(backend, self.top_k))

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
            "follow_up": self.follow_up_threshold,
            "route": self.route_threshold,
        }
