"""How many records the gated arm reads and keeps: its search depth and an adaptive keep budget.

The judge is what decides which records go into the prompt, so the gated arm searches deeper
than it injects (:data:`GATED_TOP_K` per namespace for the embedded decider) and keeps a few.
For episodic memories (``KeepOptions.adaptive_budget``, off by default) the count it keeps
adapts: the records whose judge log-odds are within ``delta`` of the best one, clamped to
``[min_records, max_records]`` -- fewer when one record stands out ("What is my cat's name?"),
up to the maximum when the judge cannot tell the best few apart ("What activities has Melanie
done with her family?"). It is off by default because its cap of 5 is a choice for event
logs: the demo persona's dinner turn needs 11 of its facts and preferences (the peanut allergy
is the 11th by the judge).

Both values were fitted on LoCoMo's dev split with ``recallwise tune keep --locomo DIR --split
dev`` (BENCHMARKS.md, "LoCoMo: what the gated arm searches and keeps").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["ADAPTIVE_BUDGET", "GATED_TOP_K", "AdaptiveBudget", "keep_count"]


@dataclass(frozen=True)
class AdaptiveBudget:
    """How many of a turn's judged records to keep, from how close they score to the best."""

    #: records within this many judge log-odds of the best are kept (before clamping)
    delta: float
    #: never fewer than this many (when that many were judged and pass the judge threshold)
    min_records: int
    #: never more than this many
    max_records: int

    def __post_init__(self) -> None:
        if self.delta < 0 or self.min_records < 0 or self.max_records < max(self.min_records, 1):
            raise ValueError(
                f"need delta >= 0 and 0 <= min_records <= max_records >= 1, got {self.delta}, "
                f"{self.min_records}, {self.max_records}"
            )

    def describe(self) -> str:
        return f"within {self.delta:g} log-odds of the best, {self.min_records}-{self.max_records} records"


#: Records searched per namespace when a decider of this backend judges them (unless
#: ``SearchOptions.gated_top_k`` says otherwise; never fewer than ``top_k``). A backend not
#: listed searches ``top_k``: a remote judge pays per record, and no depth was measured for it.
#: embedded: fitted by ``recallwise tune keep --locomo DIR --split dev --depths 10,20,30`` (LoCoMo
#: dev, 630 questions, re-scoring and budget fitted at each depth): evidence recall at <= 5
#: records 0.7197 / 0.7324 / 0.7386 at depth 10 / 20 / 30 with the episodic options (0.7411
#: at 40, 0.7440 at 50 with ``--depths 10,20,30,40,50``); the judge alone, as the default
#: policy keeps, 0.6905 / 0.6942 / 0.6942. Depths past 30 are not shipped for their cost: the default
#: policy then judges 80 or 100 records a turn and ``recallwise bench latency``'s decision
#: overhead p50 went from 0.81 ms to 1.02 / 1.13 ms, past the 1 ms target (BENCHMARKS.md).
GATED_TOP_K: dict[str, int] = {"embedded": 30}

#: Fitted by the same command, with at most 5 records per question (``--max-records 5``, the
#: target's "at <= 5 records per question" read as a per-question cap). Recall can only grow
#: with the records kept, so under a cap the most recall is always "keep 5"; this is the
#: budget keeping the fewest records for that recall on dev, in the shipped judge head's
#: log-odds (refitted 2026-12-06): 0.7435 at 4.47 records per question (keeping 5 after the
#: judge threshold: 0.7435 at 4.58); held out by conversation 0.7395. (The first judge head: the
#: same budget, 0.7366 at 4.50; before any head: delta 25, 0.7386 at 4.72.)
#: The cap was added after the one test run of the first fit (delta 10.5, 3-7 records, mean
#: <= 4.8 on dev), whose mean went to 5.06 records on test: a mean fitted on one split does not
#: bound another's, a per-question cap does. A looser budget gives up recall for records on
#: dev (``budget_frontier`` in the fit's JSON).
ADAPTIVE_BUDGET = AdaptiveBudget(delta=12.0, min_records=3, max_records=5)


def keep_count(log_odds: Sequence[float] | np.ndarray, budget: AdaptiveBudget = ADAPTIVE_BUDGET) -> int:
    """How many of the best-scoring records to keep, given every judged record's log-odds."""
    values = np.asarray(log_odds, dtype=np.float64)
    if not len(values):
        return 0
    close = int((values >= values.max() - budget.delta).sum())
    return min(len(values), max(budget.min_records, min(budget.max_records, close)))
