"""The two timing helpers the latency bench's modules share: medians and a timed loop."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["p50", "timed"]


def p50(samples: Sequence[float]) -> float:
    """The median of ``samples`` in ms, rounded to 0.1 microsecond (0.0 for no samples: a
    figure the run did not measure, e.g. the decisions of the stock arm)."""
    return round(float(statistics.median(samples)), 4) if samples else 0.0


def timed(fn: Callable[[int], Any], repeats: int, warmup: int) -> list[float]:
    """Wall-clock ms of ``fn(i)`` for ``repeats`` calls, after ``warmup`` untimed ones."""
    for i in range(warmup):
        fn(i)
    out = []
    for i in range(repeats):
        started = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - started) * 1000.0)
    return out
