"""An adaptive keep budget: keep more records when the judge cannot tell the best few apart,
fewer when one record stands out.

A fixed ``max_records`` keeps five records for "What is my cat's name?" (one memory answers it)
and five for "What activities has Melanie done with her family?" (seven memories do). The
budget here counts the records whose judge log-odds are within ``delta`` of the best one and
clamps that count to ``[min_records, max_records]``; ``delta`` is chosen so that the *average*
count stays within the fixed budget it replaces. Fitted on LoCoMo dev with ``python -m
recallgate.tuning.locomo_rank --locomo DIR --split dev`` (BENCHMARKS.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ADAPTIVE_BUDGET", "AdaptiveBudget", "keep_count"]


@dataclass(frozen=True)
class AdaptiveBudget:
    """How many of a turn's judged records to keep, from how close they score to the best."""

    #: records within this many judge log-odds of the best are kept (before clamping)
    delta: float
    #: never fewer than this many (when that many were judged)
    min_records: int
    #: never more than this many
    max_records: int

    def __post_init__(self) -> None:
        if self.delta < 0 or self.min_records < 0 or self.max_records < max(self.min_records, 1):
            raise ValueError(
                f"need delta >= 0 and 0 <= min_records <= max_records >= 1, got {self.delta}, "
                f"{self.min_records}, {self.max_records}"
            )


#: Fitted on LoCoMo dev by ``python -m recallgate.tuning.locomo_rank --locomo DIR --split dev``
#: (630 questions; mean records per question held at <= 4.8 so that another split's mean stays
#: under 5): 4.78 records per question, evidence recall 0.7557 against 0.7449 for a fixed 5
#: (multi-hop 0.4913 against 0.4522). BENCHMARKS.md has the run.
ADAPTIVE_BUDGET = AdaptiveBudget(delta=10.5, min_records=3, max_records=7)


def keep_count(log_odds: Sequence[float] | np.ndarray, budget: AdaptiveBudget = ADAPTIVE_BUDGET) -> int:
    """How many of the best-scoring records to keep, given every judged record's log-odds."""
    values = np.asarray(log_odds, dtype=np.float64)
    if not len(values):
        return 0
    close = int((values >= values.max() - budget.delta).sum())
    return min(len(values), max(budget.min_records, min(budget.max_records, close)))
