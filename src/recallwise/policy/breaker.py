"""A circuit breaker for a backend (a decider, a store) that keeps failing.

After ``threshold`` consecutive failures the circuit opens: for ``cooldown_s`` the policy does
not call the backend at all (each turn fails open, or injects nothing, at once and says so in
its trace), instead of paying a timeout on every turn. After the cool-down one trial call goes
through (half-open); its success closes the circuit, its failure opens it again for a fresh
``cooldown_s`` counted from that failure.

Every call the breaker lets through is an :class:`Attempt`, and only the outcome of an attempt
that could have changed the state counts. The cool-down counts from when the circuit opened:
calls that started before it opened and fail (or succeed) late change nothing, so a burst of
in-flight calls timing out one after another does not extend it. While the one trial call is in
flight every other call is refused; an attempt that ends without an outcome (cancelled) is
:meth:`CircuitBreaker.release`-d, which frees the trial slot for the next caller.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

__all__ = ["Attempt", "CircuitBreaker"]

State = Literal["closed", "open", "half-open"]


@dataclass(eq=False)
class Attempt:
    """One call the breaker let through: settled once, by its success, failure or release."""

    #: how many times the circuit had opened when the call started (a later opening makes it stale)
    epoch: int
    #: the half-open trial call (the only call let through while the circuit is open)
    trial: bool
    settled: bool = False


class CircuitBreaker:
    """Opens after ``threshold`` consecutive failures; one trial call ``cooldown_s`` after opening.

    ``clock`` (seconds, monotonic) is replaceable so tests can step time instead of sleeping.
    """

    def __init__(
        self, threshold: int = 3, cooldown_s: float = 30.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.threshold = max(int(threshold), 1)
        self.cooldown_s = float(cooldown_s)
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._trial: Attempt | None = None
        self._lock = threading.Lock()
        #: how many times the circuit has opened (a failed trial opens it again)
        self.opened = 0

    @property
    def state(self) -> State:
        """``closed``; ``open`` (cooling down); ``half-open`` (a trial may go, or is in flight)."""
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "open" if self._remaining() > 0 else "half-open"

    @property
    def trial_in_flight(self) -> bool:
        with self._lock:
            return self._trial is not None

    def allow(self) -> Attempt | None:
        """An :class:`Attempt` when a call may go through now, else None (the circuit refuses).

        Closed: every call. Open: none. Half-open: one trial call at a time.
        """
        with self._lock:
            if self._opened_at is None:
                return Attempt(self.opened, trial=False)
            if self._remaining() > 0 or self._trial is not None:
                return None
            self._trial = Attempt(self.opened, trial=True)
            return self._trial

    def success(self, attempt: Attempt) -> None:
        """The call answered: a trial closes the circuit; any call ends a run of failures."""
        with self._lock:
            if not self._settle(attempt):
                return
            if attempt is self._trial:
                self._trial = None
                self._opened_at = None
                self._failures = 0
            elif self._opened_at is None:
                self._failures = 0

    def failure(self, attempt: Attempt) -> None:
        """The call failed: a failed trial re-opens the circuit for a fresh cool-down from now;
        the ``threshold``-th consecutive failure opens it."""
        with self._lock:
            if not self._settle(attempt):
                return
            if attempt is self._trial:
                self._trial = None
                self._open()
            elif self._opened_at is None:
                self._failures += 1
                if self._failures >= self.threshold:
                    self._open()

    def release(self, attempt: Attempt) -> None:
        """The call ended without an outcome (cancelled): a trial's slot goes to the next caller."""
        with self._lock:
            if self._settle(attempt) and attempt is self._trial:
                self._trial = None

    def remaining_s(self) -> float:
        """Seconds until a trial call may go (0 when closed or half-open)."""
        with self._lock:
            return self._remaining()

    def refusal(self) -> str:
        """Why a call is refused now, for an error message."""
        with self._lock:
            if self._trial is not None:
                return "not called while one trial call is in flight"
            return f"not called for another {self._remaining():.1f} s"

    # ---- under the lock -------------------------------------------------------------------------
    def _remaining(self) -> float:
        if self._opened_at is None:
            return 0.0
        return max(self.cooldown_s - (self._clock() - self._opened_at), 0.0)

    def _open(self) -> None:
        self._opened_at = self._clock()
        self.opened += 1

    def _settle(self, attempt: Attempt) -> bool:
        """Mark ``attempt`` settled; whether its outcome may change the state (the trial, or a
        call that started since the circuit last opened and has not been settled before)."""
        if attempt.settled:
            return False
        attempt.settled = True
        return attempt is self._trial or (not attempt.trial and attempt.epoch == self.opened)
