"""The circuit breaker's timing, stepped with a fake clock: when it opens, how long it stays open,
what a late outcome does, one trial at a time, and what a failed trial does."""

from __future__ import annotations

import pytest

from recallwise.policy.breaker import CircuitBreaker


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def step(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock() -> Clock:
    return Clock()


def fail(breaker: CircuitBreaker, times: int = 1) -> None:
    for _ in range(times):
        attempt = breaker.allow()
        assert attempt is not None
        breaker.failure(attempt)


def test_opens_on_the_threshold_th_consecutive_failure(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=3, cooldown_s=10, clock=clock)
    fail(breaker, 2)
    ok = breaker.allow()
    assert ok is not None
    breaker.success(ok)  # a success ends the run of failures
    fail(breaker, 2)
    assert breaker.state == "closed" and breaker.opened == 0
    fail(breaker)
    assert breaker.state == "open" and breaker.opened == 1
    assert breaker.allow() is None
    assert breaker.remaining_s() == pytest.approx(10)
    assert breaker.refusal() == "not called for another 10.0 s"


def test_the_cool_down_counts_from_the_opening_not_from_late_failures(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=3, cooldown_s=10, clock=clock)
    in_flight = [breaker.allow() for _ in range(6)]  # six calls start while the circuit is closed
    for attempt in in_flight[:3]:
        assert attempt is not None
        clock.step(1)
        breaker.failure(attempt)
    assert breaker.state == "open"  # opened at t=3
    for attempt in in_flight[3:]:  # the other three time out later, one by one
        assert attempt is not None
        clock.step(2)
        breaker.failure(attempt)
    assert breaker.opened == 1
    assert breaker.remaining_s() == pytest.approx(4)  # 10 s from the opening, 6 s of them gone
    clock.step(4)
    assert breaker.state == "half-open" and breaker.allow() is not None


def test_a_late_success_of_a_call_from_before_the_opening_does_not_close_it(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, cooldown_s=10, clock=clock)
    slow = breaker.allow()
    fail(breaker)
    assert slow is not None and breaker.state == "open"
    clock.step(3)
    breaker.success(slow)
    assert breaker.state == "open" and breaker.remaining_s() == pytest.approx(7)


def test_one_trial_at_a_time_and_a_failed_trial_reopens_for_a_fresh_interval(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, cooldown_s=10, clock=clock)
    fail(breaker)
    clock.step(9.9)
    assert breaker.allow() is None
    clock.step(0.1)
    trial = breaker.allow()
    assert trial is not None and trial.trial
    assert breaker.trial_in_flight and breaker.state == "half-open"
    for _ in range(3):  # everyone else is refused while it runs, however long it takes
        assert breaker.allow() is None
        clock.step(5)
    assert breaker.refusal() == "not called while one trial call is in flight"
    breaker.failure(trial)  # fails 15 s after it started: the next interval counts from now
    assert breaker.state == "open" and breaker.opened == 2
    assert breaker.remaining_s() == pytest.approx(10)
    clock.step(10)
    second = breaker.allow()
    assert second is not None and second.trial
    breaker.success(second)
    assert breaker.state == "closed" and not breaker.trial_in_flight
    fail(breaker)  # closed again: the threshold (1) counts afresh
    assert breaker.state == "open" and breaker.opened == 3


def test_an_outcome_counts_once(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=2, cooldown_s=10, clock=clock)
    attempt = breaker.allow()
    assert attempt is not None
    breaker.failure(attempt)
    breaker.failure(attempt)  # e.g. a deadline and then the call's own error
    assert breaker.state == "closed"
    fail(breaker)
    assert breaker.state == "open"
    clock.step(10)
    trial = breaker.allow()
    assert trial is not None
    breaker.success(trial)
    breaker.failure(trial)  # a late second outcome of the trial changes nothing
    assert breaker.state == "closed"


def test_a_released_trial_frees_the_slot_without_changing_the_state(clock: Clock) -> None:
    breaker = CircuitBreaker(threshold=1, cooldown_s=10, clock=clock)
    fail(breaker)
    clock.step(10)
    trial = breaker.allow()
    assert trial is not None and breaker.allow() is None
    breaker.release(trial)  # cancelled: no outcome
    assert breaker.state == "half-open" and not breaker.trial_in_flight
    breaker.failure(trial)  # a released attempt's late outcome counts for nothing
    assert breaker.state == "half-open"
    retry = breaker.allow()
    assert retry is not None and retry.trial


def test_a_trial_closes_a_circuit_opened_by_calls_from_before_it(clock: Clock) -> None:
    """The issue's sequence: in-flight calls time out after the circuit opened, a trial made just
    after the database came back succeeds: the circuit closes at once, nothing re-arms it."""
    breaker = CircuitBreaker(threshold=3, cooldown_s=1, clock=clock)
    in_flight = [breaker.allow() for _ in range(8)]
    for attempt in in_flight[:3]:
        assert attempt is not None
        breaker.failure(attempt)
    clock.step(1)
    trial = breaker.allow()
    assert trial is not None
    for attempt in in_flight[3:]:  # time out while the trial runs
        assert attempt is not None
        breaker.failure(attempt)
    breaker.success(trial)
    assert breaker.state == "closed" and breaker.opened == 1
