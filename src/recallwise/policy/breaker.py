"""A circuit breaker for a decision backend that keeps failing.

After ``threshold`` consecutive failures the circuit opens: for ``cooldown_s`` the policy does
not call the decider at all (each turn fails open at once and says so in its trace), instead of
paying a timeout on every turn. After the cool-down one trial call goes through (half-open);
success closes the circuit, failure opens it for another cool-down.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["CircuitBreaker"]


class CircuitBreaker:
    def __init__(
        self, threshold: int = 3, cooldown_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threshold = max(int(threshold), 1)
        self.cooldown_s = float(cooldown_s)
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial_running = False
        self._lock = threading.Lock()
        #: how many times the circuit has opened
        self.opened = 0

    @property
    def state(self) -> str:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "half-open" if self._clock() - self._opened_at >= self.cooldown_s else "open"

    def allow(self) -> bool:
        """Whether a call may go through now (one trial call at a time when half-open)."""
        with self._lock:
            if self._opened_at is None:
                return True
            if self._clock() - self._opened_at < self.cooldown_s or self._trial_running:
                return False
            self._trial_running = True
            return True

    def success(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._trial_running = False

    def failure(self) -> None:
        with self._lock:
            self._failures += 1
            self._trial_running = False
            if self._opened_at is not None or self._failures >= self.threshold:
                if self._opened_at is None or self._clock() - self._opened_at >= self.cooldown_s:
                    self.opened += 1
                self._opened_at = self._clock()

    def remaining_s(self) -> float:
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(self.cooldown_s - (self._clock() - self._opened_at), 0.0)
