"""Guarded backends: a decider and a searcher that keep their interface and add the policy's rules.

Like httpx's transport wrappers, :class:`GuardedDecider` and :class:`GuardedSearcher` look like
what they wrap (``decide(...)``, ``search(...)``), and add in one place what every call to a
backend needs:

* a **deadline** for a remote backend (``local = False``): the call runs in a worker thread and
  the turn stops waiting after ``timeout_s`` (an in-process backend is called directly: it
  cannot hang on I/O);
* a **circuit breaker**: after repeated failing calls the backend is not called for a cool-down,
  so a dead backend does not cost every turn its timeout;
* **counting**: every failure is counted by kind in :class:`RecallStats` (``errors_by_kind``),
  calls and milliseconds too.

They raise on failure (:class:`CircuitOpen` when the breaker refuses the call); the stages catch,
fail open or inject nothing, and write the trace.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from ..deciders import BaseDecider, Decision, DecisionHints
from ..deciders.questions import Question
from ..embeddings import Embedder
from ..errors import DeciderError, DeciderTimeout, RecallwiseError, error_kind
from ..records import SearchHit
from ..stores.base import AsyncSearcher, MentionIndex, ProfileIndex, Searcher, SearchRequest
from .breaker import Attempt, CircuitBreaker
from .stats import RecallStats

__all__ = ["CircuitOpen", "Guard", "GuardedDecider", "GuardedSearcher", "SearchOutcome"]

T = TypeVar("T")
Where = Literal["decider", "store"]


@dataclass
class SearchOutcome:
    """One namespace's search: its hits, or the exception it raised, and when it ran (epoch ns)."""

    namespace: str
    result: list[SearchHit] | Exception
    started_ns: int = 0
    ended_ns: int = 0

    def __iter__(self) -> Iterator[Any]:  # ``for ns, result in outcomes``
        return iter((self.namespace, self.result))


class CircuitOpen(RecallwiseError):
    """The backend's circuit is open after repeated failures: it was not called."""

    kind = "circuit_open"


class Guard:
    """Deadline, circuit breaker and counting for calls to one backend."""

    def __init__(
        self,
        where: Where,
        *,
        name: str,
        local: bool,
        timeout_s: float,
        breaker: CircuitBreaker,
        stats: RecallStats,
        executor: Callable[[], ThreadPoolExecutor],
    ) -> None:
        self.where = where
        self.name = name
        self.local = local
        self.timeout_s = float(timeout_s)
        self.breaker = breaker
        self.stats = stats
        self._executor = executor

    def admit(self, *, count: bool = True) -> Attempt | None:
        """The breaker's :class:`Attempt` for one call (None for a local backend: no breaker);
        raises :class:`CircuitOpen` (counted unless ``count=False``) when the circuit refuses it.

        Every admitted call ends in :meth:`settle` with its outcome, or :meth:`release` when it
        has none (both are no-ops once the attempt is settled).
        """
        if self.local:
            return None
        attempt = self.breaker.allow()
        if attempt is not None:
            return attempt
        if count:
            self.stats.error(self.where, CircuitOpen.kind)
        raise CircuitOpen(f"circuit open after repeated {self.where} failures; {self.breaker.refusal()}")

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)``, under the deadline when the backend is remote."""
        if self.local:
            return fn(*args, **kwargs)
        future = self.submit(fn, *args, **kwargs)
        try:
            return future.result(timeout=self.timeout_s)
        except FutureTimeout:
            future.cancel()
            raise self.timeout_error() from None

    def submit(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> Future[T]:
        """``fn`` in a worker thread, in a copy of the caller's context (as ``asyncio.to_thread``
        does): the application's OpenTelemetry span is current there, so a backend's own
        instrumented calls nest under it, and an integration's per-search context variables hold."""
        return self._executor().submit(contextvars.copy_context().run, fn, *args, **kwargs)

    def timeout_error(self) -> Exception:
        if self.where == "decider":
            return DeciderTimeout(f"{self.name} gave no answer within {self.timeout_s} s")
        return TimeoutError(f"no answer within {self.timeout_s} s")

    def settle(self, attempt: Attempt | None, ok: bool) -> None:
        """Tell the breaker how the call (or the turn's calls) went; nothing for a local backend."""
        if attempt is None:
            return
        if ok:
            self.breaker.success(attempt)
        else:
            self.breaker.failure(attempt)

    def release(self, attempt: Attempt | None) -> None:
        """The call ended without an outcome (cancelled, or a bug before it was made): its trial
        slot, if it held one, goes to the next caller."""
        if attempt is not None:
            self.breaker.release(attempt)

    def count(self, exc: BaseException) -> str:
        """Count one failure by kind; returns the kind."""
        kind = error_kind(exc)
        self.stats.error(self.where, kind)
        return kind


class GuardedDecider:
    """A decider behind a :class:`Guard`: same ``decide`` call, plus deadline, breaker, counting."""

    def __init__(self, decider: BaseDecider, guard: Guard) -> None:
        self.inner = decider
        self.guard = guard

    @property
    def name(self) -> str:
        return self.inner.name

    def decide(
        self, state: str, questions: Mapping[str, Question], hints: DecisionHints | None = None
    ) -> Decision:
        """Ask; raises :class:`DeciderError` (counted) on failure, :class:`CircuitOpen` when skipped."""
        attempt = self.guard.admit()
        started = time.perf_counter()
        try:
            decision = self.guard.run(self.inner.decide, state, questions, hints)
        except Exception as exc:  # whatever it was, the turn fails open: one error type for the stages
            error = (
                exc
                if isinstance(exc, DeciderError)
                else DeciderError(f"{self.name}: {type(exc).__name__}: {exc}")
            )
            if error is not exc:
                error.kind = error_kind(exc)
            self.guard.settle(attempt, False)
            self.guard.count(error)
            raise error from (None if error is exc else exc)
        else:
            self.guard.settle(attempt, True)
            return decision
        finally:
            self.guard.stats.add(decider_calls=1, decider_ms=(time.perf_counter() - started) * 1000.0)
            self.guard.release(attempt)  # interrupted (KeyboardInterrupt): no outcome


class GuardedSearcher:
    """A searcher behind a :class:`Guard`: same ``search`` call, plus a fan-out over namespaces
    under one deadline, natively async when the memory is, and the store-aware gate's look-up."""

    def __init__(self, searcher: Searcher, guard: Guard) -> None:
        self.inner = searcher  # the store-aware gate asks it for mentions too
        self._searcher = searcher
        self.guard = guard
        self.has_mentions = isinstance(searcher, MentionIndex)
        #: the memory keeps a per-actor profile the gate reads in-process (stores/profile.py)
        self.has_profile = isinstance(searcher, ProfileIndex)
        # A natively async memory is awaited from arecall, local or not (a local one, no deadline).
        self.is_async = isinstance(searcher, AsyncSearcher)

    @property
    def embedder(self) -> Embedder:
        return self.inner.embedder

    @property
    def local(self) -> bool:
        return self.guard.local

    def search(self, request: SearchRequest) -> list[SearchHit]:
        """One namespace, guarded; raises what the search raised (counted)."""
        (outcome,) = self.search_all(request, [request.namespace])
        if isinstance(outcome.result, Exception):
            raise outcome.result
        return outcome.result

    def search_all(self, request: SearchRequest, namespaces: Sequence[str]) -> list[SearchOutcome]:
        """``request`` in every namespace (concurrently when remote, under one deadline); one
        breaker outcome.

        Raises :class:`CircuitOpen` (counted) when the circuit is open; a namespace whose search
        failed has its exception as its outcome, counted by kind.
        """
        attempt = self.guard.admit()

        def one(ns: str) -> SearchOutcome:
            started = time.time_ns()
            try:
                hits: list[SearchHit] | Exception = self._searcher.search(request.to(ns))
            except Exception as exc:  # a broken store must not break the turn: count, inject nothing
                hits = exc
            return SearchOutcome(ns, hits, started, time.time_ns())

        try:
            if self.guard.local:
                outcomes = [one(ns) for ns in namespaces]
            else:
                futures = [self.guard.submit(one, ns) for ns in namespaces]
                started = time.time_ns()
                deadline = time.monotonic() + self.guard.timeout_s
                outcomes = []
                for ns, future in zip(namespaces, futures, strict=True):
                    try:
                        outcomes.append(future.result(timeout=max(deadline - time.monotonic(), 0.0)))
                    except FutureTimeout:
                        future.cancel()
                        outcomes.append(
                            SearchOutcome(ns, self.guard.timeout_error(), started, time.time_ns())
                        )
            return self._settle(outcomes, attempt)
        finally:
            self.guard.release(attempt)  # interrupted before an outcome

    async def asearch_all(self, request: SearchRequest, namespaces: Sequence[str]) -> list[SearchOutcome]:
        """:meth:`search_all` for an event loop: awaits a natively async memory (``asearch``), runs
        a remote sync one in a worker thread, calls a local one directly."""
        if not self.is_async:
            if self.guard.local:
                return self.search_all(request, namespaces)
            return await asyncio.to_thread(self.search_all, request, namespaces)
        attempt = self.guard.admit()
        try:
            return await self._asearch_all(request, namespaces, attempt)
        finally:
            self.guard.release(attempt)  # cancelled before an outcome

    async def _asearch_all(
        self, request: SearchRequest, namespaces: Sequence[str], attempt: Attempt | None
    ) -> list[SearchOutcome]:
        searcher: Any = self._searcher

        async def one(ns: str) -> SearchOutcome:
            started = time.time_ns()
            try:
                hits = await searcher.asearch(request.to(ns))
            except Exception as exc:  # counted below; the turn injects nothing
                return SearchOutcome(ns, exc, started, time.time_ns())
            return SearchOutcome(ns, hits, started, time.time_ns())

        started = time.time_ns()
        tasks = [asyncio.ensure_future(one(ns)) for ns in namespaces]
        timeout = None if self.guard.local else self.guard.timeout_s
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        for task in pending:
            task.cancel()
        outcomes = [
            SearchOutcome(ns, self.guard.timeout_error(), started, time.time_ns())
            if task in pending
            else task.result()
            for ns, task in zip(namespaces, tasks, strict=True)
        ]
        return self._settle(outcomes, attempt)

    def _settle(self, outcomes: list[SearchOutcome], attempt: Attempt | None) -> list[SearchOutcome]:
        failed = [o.result for o in outcomes if isinstance(o.result, Exception)]
        for exc in failed:
            self.guard.count(exc)
        self.guard.settle(attempt, not failed)
        return outcomes

    def mentions(self, namespaces: Sequence[str], terms: Sequence[str], *, actor_id: str) -> set[str]:
        """Which ``terms`` this actor's memory mentions in any of ``namespaces``.

        Under the same deadline and breaker as the searches; an open circuit raises
        :class:`CircuitOpen` without counting (the gate just goes without the signal).
        """
        index: Any = self.inner
        attempt = self.guard.admit(count=False)

        def look_up() -> set[str]:
            found: set[str] = set()
            for namespace in namespaces:
                found |= index.mentions(namespace, terms, actor_id=actor_id)
            return found

        try:
            found = self.guard.run(look_up)
        except Exception as exc:
            self.guard.settle(attempt, False)
            self.guard.count(exc)
            raise
        else:
            self.guard.settle(attempt, True)
            return found
        finally:
            self.guard.release(attempt)  # interrupted before an outcome


class _Executor:
    """One lazily started thread pool, shared by a policy's guards."""

    def __init__(self, max_workers: int = 16) -> None:
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self.max_workers = max_workers

    def __call__(self) -> ThreadPoolExecutor:
        if self._pool is None:
            with self._lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(
                        max_workers=self.max_workers, thread_name_prefix="recallwise"
                    )
        return self._pool

    @property
    def started(self) -> ThreadPoolExecutor | None:
        return self._pool

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
