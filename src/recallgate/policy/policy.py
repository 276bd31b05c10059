"""RecallPolicy: gate -> route -> search -> render -> judge -> keep -> pack, one turn at a time."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..deciders import Decider, DecisionHints, default_decider, default_threshold
from ..deciders import ask as ask_decider
from ..deciders.questions import ChoiceAnswer, Question
from ..errors import DeciderError, DeciderTimeout, UsageError
from ..records import MemoryRecord, SearchHit, render_text, resolve_namespace
from ..stores.base import MemoryStore
from .breaker import CircuitBreaker
from .config import ROLES, ConfigPath, config_from_env, read_config
from .log import DecisionLog, open_log
from .names import name_terms
from .pack import count_tokens, pack_context
from .stats import RecallStats
from .trace import Candidate, Trace
from .wording import GATE, ROUTE, gate_question, judge_question, route_question

__all__ = ["KeptRecord", "Recall", "RecallPolicy", "message_text"]

KeepRule = Literal["absolute", "relative", "both"]

_DEFAULT = object()


@dataclass
class KeptRecord:
    """A record that made it into the context block."""

    record: MemoryRecord
    text: str
    namespace: str
    score: float
    judge_p: float | None


@dataclass
class Recall:
    """The result of one turn: the block to inject, what is in it, and how it was decided."""

    context: str
    records: list[KeptRecord] = field(default_factory=list)
    trace: Trace = field(default_factory=Trace)

    @property
    def retrieved(self) -> bool:
        return bool(self.trace.namespaces_searched)


def message_text(message: Any) -> str:
    """The user text of a message: a string, a Strands/Bedrock message dict or a list of blocks.

    Non-text blocks (tool results, images, documents) are skipped.
    """
    if message is None:
        return ""
    if isinstance(message, str):
        return message
    if isinstance(message, Mapping):
        if "content" in message:
            return message_text(message["content"])
        text = message.get("text")
        return text if isinstance(text, str) else ""
    if isinstance(message, Sequence):
        parts = [message_text(block) for block in message if isinstance(block, (Mapping, str))]
        return "\n".join(p for p in parts if p)
    return ""


class RecallPolicy:
    """Decides, per user turn, whether to retrieve, where, and which records to inject.

    ``decider=None`` is the stock behaviour exactly (the control arm): always retrieve,
    ``top_k`` per namespace, keep every record scoring at least ``relevance_score``.
    Leaving ``decider`` out uses the offline embedded decider.

    ``namespaces`` are templates (``"/facts/{actorId}"``); pass a dict of template ->
    description to let the decider route between them.

    A remote decider or store (``local = False``) is called under ``decider_timeout_s`` /
    ``store_timeout_s``; after ``breaker_threshold`` consecutive failing calls its circuit
    opens and it is not called for ``breaker_cooldown_s`` (the turn fails open for a decider,
    injects nothing for a store, and the trace and ``stats`` say so).
    """

    def __init__(
        self,
        store: MemoryStore,
        decider: Decider | Any | None = _DEFAULT,
        namespaces: Sequence[str] | Mapping[str, str] = ("/facts/{actorId}", "/preferences/{actorId}"),
        *,
        top_k: int = 10,
        relevance_score: float = 0.2,
        gate_threshold: float | None = None,
        gate_named_threshold: float | None = None,
        judge_threshold: float | None = None,
        relative_delta: float | None = None,
        keep: KeepRule = "both",
        max_records: int | None = None,
        max_record_chars: int = 600,
        max_context_chars: int = 4000,
        max_state_chars: int = 2000,
        search_mode: Literal["dense", "hybrid"] = "hybrid",
        cache_size: int = 256,
        decider_timeout_s: float = 2.0,
        store_timeout_s: float = 5.0,
        breaker_threshold: int = 3,
        breaker_cooldown_s: float = 30.0,
        stats: RecallStats | None = None,
        log: DecisionLog | str | os.PathLike[str] | None = None,
    ) -> None:
        if top_k < 1:
            raise UsageError(f"top_k must be at least 1, got {top_k}")
        if keep not in ("absolute", "relative", "both"):
            raise UsageError(f"keep must be 'absolute', 'relative' or 'both', got {keep!r}")
        self.store = store
        self.decider: Decider | None = default_decider() if decider is _DEFAULT else decider
        if isinstance(namespaces, Mapping):
            self.namespaces = list(namespaces)
            self.descriptions: dict[str, str] = {k: v for k, v in namespaces.items() if v}
        else:
            self.namespaces = list(namespaces)
            self.descriptions = {}
        if not self.namespaces:
            raise UsageError("a policy needs at least one namespace")
        self.top_k = top_k
        self.relevance_score = relevance_score
        self.keep = keep
        self.max_records = max_records
        self.max_record_chars = max_record_chars
        self.max_context_chars = max_context_chars
        self.max_state_chars = max_state_chars
        # The gated arm fuses full-text and dense search; the stock arm is always dense, as upstream.
        self.search_mode = search_mode
        self.stats = stats or RecallStats()
        backend = getattr(self.decider, "name", None) if self.decider is not None else None
        self.stats.decider = backend
        self.thresholds: dict[str, float] = {}
        #: where each threshold came from: "argument", "config PATH" or "default"
        self.threshold_sources: dict[str, str] = {}
        # Order: explicit argument > fitted config (from_config or RECALLGATE_CONFIG) > default.
        config = config_from_env() if backend is not None else None
        for role, given in (
            ("gate", gate_threshold),
            ("judge", judge_threshold),
            ("judge_relative", relative_delta),
            ("gate_named", gate_named_threshold),
        ):
            if given is not None:
                self.thresholds[role] = float(given)
                self.threshold_sources[role] = "argument"
                continue
            if backend is None:
                continue
            fitted = config.get(backend, role) if config is not None else None
            if fitted is not None:
                self.thresholds[role] = fitted.value
                self.threshold_sources[role] = f"config {config.path if config else ''}"
                continue
            default = default_threshold(backend, role)
            if role == "gate_named" and not default.measured:
                # The store-aware gate (a lower gate threshold when the message names something
                # the actor's memory mentions) is on only where it was measured.
                continue
            self.thresholds[role] = default.value
            self.threshold_sources[role] = "default"
            if not default.measured:
                self.stats.unmeasured_thresholds.append(f"{backend}:{role}")
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self._async_pool: ThreadPoolExecutor | None = None
        # Remote deciders and stores are called with a deadline so a hung backend cannot hold the
        # turn; in-process ones (``local = True``) are called directly: they cannot hang on I/O.
        self.decider_timeout_s = float(decider_timeout_s)
        self.store_timeout_s = float(store_timeout_s)
        self.breaker = CircuitBreaker(breaker_threshold, breaker_cooldown_s)
        # The same rule for a remote store: a dead database would otherwise cost every turn
        # ``store_timeout_s`` while its connection pool retries.
        self.store_breaker = CircuitBreaker(breaker_threshold, breaker_cooldown_s)
        #: the opt-in decision log (``log=`` or ``RECALLGATE_LOG``); None when off
        self.log = open_log(log)
        self._owns_log = self.log is not None and not isinstance(log, DecisionLog)
        # Repeated messages within a session ("ok", "thanks", a retried turn) reuse the query
        # embedding and the gate's answers: bounded LRU, counted in stats.cache_hits/misses.
        self.cache_size = max(int(cache_size), 0)
        self._cache: OrderedDict[tuple[str, str | None, str], tuple[np.ndarray, dict[str, Any] | None]] = (
            OrderedDict()
        )
        self._cache_lock = threading.Lock()

    @classmethod
    def from_config(
        cls,
        path: ConfigPath,
        store: MemoryStore,
        decider: Decider | Any | None = _DEFAULT,
        **options: Any,
    ) -> RecallPolicy:
        """A policy using the thresholds ``recallgate tune ... --write-config`` fitted for its decider.

        Thresholds passed in ``options`` still win. A role the file holds no fit for (for this
        decider's backend) falls back to ``RECALLGATE_CONFIG``, then to the backend's default,
        which ``stats.report()`` lists as unmeasured when it was never measured.
        """
        config = read_config(path)
        chosen = default_decider() if decider is _DEFAULT else decider
        backend = getattr(chosen, "name", None) if chosen is not None else None
        from_file = []
        for role, argument in ROLES.items():
            fitted = config.get(backend, role) if backend is not None else None
            if fitted is not None and options.get(argument) is None:
                options[argument] = fitted.value
                from_file.append(role)
        policy = cls(store, chosen, **options)
        for role in from_file:
            policy.threshold_sources[role] = f"config {path}"
        return policy

    # ---- public ---------------------------------------------------------------------------
    def recall(self, message: Any, *, actor_id: str, session_id: str | None = None) -> Recall:
        """Decide and retrieve for one user message; returns the context block to inject."""
        result = self._recall(message, actor_id, session_id)
        if self.log is not None:
            try:
                self.log.write(
                    result.trace,
                    actor_id=actor_id,
                    session_id=session_id,
                    decider=self.stats.decider or "none",
                    message=message_text(message),
                )
            except Exception as exc:  # the log is for looking back; it must not fail the turn
                self.stats.error("log", error_kind(exc))
                result.trace.errors.append(f"log: {type(exc).__name__}: {exc}")
        return result

    def _recall(self, message: Any, actor_id: str, session_id: str | None) -> Recall:
        started = time.perf_counter()
        trace = Trace(gated=self.decider is not None)
        namespaces = [resolve_namespace(t, actor_id=actor_id, session_id=session_id) for t in self.namespaces]
        self.stats.add(turns=1)
        text = message_text(message)
        trace.message_chars = len(text)
        if not text.strip():
            trace.skipped = "no text in the message"
            return self._finish(Recall("", [], trace), started)
        self.stats.add(baseline_retrievals=1)
        key = (actor_id, session_id, text)
        cached = self._cache_get(key)
        if cached is not None:
            vector, gate_answers = cached
            trace.cache_hit = True
        else:
            try:
                vector = np.asarray(self.store.embedder.embed([text])[0], dtype=np.float32)
                dimension = getattr(self.store.embedder, "dimension", vector.shape[0])
                if vector.shape != (dimension,) or not np.isfinite(vector).all():
                    raise _BadVector(
                        f"embedder returned a vector of shape {vector.shape} with non-finite values"
                        if vector.shape == (dimension,)
                        else f"embedder returned shape {vector.shape}, expected ({dimension},)"
                    )
            except Exception as exc:  # no vector: no search can run; inject nothing, say why
                self.stats.error("embedder", error_kind(exc))
                trace.errors.append(f"embedder: {type(exc).__name__}: {exc}")
                return self._finish(Recall("", [], trace), started)
            gate_answers = None
        trace.timings_ms["embed"] = _ms(started)
        if self.decider is None:
            self._cache_put(key, vector, None)
            return self._finish(self._stock(text, vector, namespaces, actor_id, trace), started)
        recall = self._gated(text, vector, namespaces, actor_id, trace, key, gate_answers)
        return self._finish(recall, started)

    def _cache_get(self, key: tuple[str, str | None, str]) -> tuple[np.ndarray, dict[str, Any] | None] | None:
        if not self.cache_size:
            return None
        with self._cache_lock:
            entry = self._cache.get(key)
            if entry is not None:
                self._cache.move_to_end(key)
        self.stats.add(**({"cache_hits": 1} if entry is not None else {"cache_misses": 1}))
        return entry

    def _cache_put(
        self, key: tuple[str, str | None, str], vector: np.ndarray, answers: dict[str, Any] | None
    ) -> None:
        if not self.cache_size:
            return
        with self._cache_lock:
            self._cache[key] = (vector, answers)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)

    def warm_up(self) -> None:
        """Load the embedding model and the decider's cached wordings now, at start-up, rather
        than on the first user turn (loading the default model takes ~0.35 s)."""
        self.store.embedder.embed(["warm-up"])
        warm = getattr(self.decider, "warm_up", None)
        if callable(warm):
            questions: dict[str, Question] = {GATE: gate_question()}
            if len(self.descriptions) >= 2:
                questions[ROUTE] = route_question(self.descriptions)
            warm(questions)

    async def arecall(self, message: Any, *, actor_id: str, session_id: str | None = None) -> Recall:
        """:meth:`recall` for asyncio agents: runs in a worker thread so the event loop never blocks
        on the embedding, a remote decider or a remote store. Safe to await concurrently."""
        if self._async_pool is None:
            with self._pool_lock:
                if self._async_pool is None:
                    # Its own pool: the loop's default executor has only cores + 4 threads, and
                    # turns must not queue behind unrelated work (or behind each other's calls).
                    self._async_pool = ThreadPoolExecutor(
                        max_workers=64, thread_name_prefix="recallgate-turn"
                    )
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._async_pool,
            functools.partial(self.recall, message, actor_id=actor_id, session_id=session_id),
        )

    def close(self) -> None:
        for pool in (self._pool, self._async_pool):
            if pool is not None:
                pool.shutdown(wait=False)
        if self.log is not None and self._owns_log:
            self.log.close()

    # ---- arms -----------------------------------------------------------------------------
    def _stock(
        self, text: str, vector: np.ndarray, namespaces: list[str], actor_id: str, trace: Trace
    ) -> Recall:
        hits = self._search(text, vector, namespaces, actor_id, trace)
        kept: list[KeptRecord] = []
        for ns, hit in hits:
            candidate = _candidate(ns, hit)
            if hit.score >= self.relevance_score:
                candidate.kept, candidate.reason = True, f"score >= {self.relevance_score}"
                kept.append(KeptRecord(hit.record, candidate.text, ns, hit.score, None))
            else:
                candidate.reason = f"score < {self.relevance_score}"
            trace.candidates.append(candidate)
        trace.keep_rule = f"stock: score >= {self.relevance_score}"
        return self._pack(kept, trace)

    def _gated(
        self,
        text: str,
        vector: np.ndarray,
        namespaces: list[str],
        actor_id: str,
        trace: Trace,
        cache_key: tuple[str, str | None, str] | None = None,
        cached_answers: dict[str, Any] | None = None,
    ) -> Recall:
        state = self._state(text, trace)
        gate_failed = False
        if cached_answers is not None:
            answers: dict[str, Any] | None = cached_answers
        else:
            questions: dict[str, Question] = {GATE: gate_question()}
            if len(self.descriptions) >= 2:
                questions[ROUTE] = route_question(self.descriptions)
            answers = self._ask(state, questions, DecisionHints(state_vector=vector), trace, stage="gate")
            self.stats.add(gate_calls=1)
            if answers is not None and cache_key is not None:
                # Only answers that came back are cached: a failure is retried next time.
                self._cache_put(cache_key, vector, answers)
        trace.gate_threshold = self.thresholds.get("gate", 0.5)
        if answers is None:  # fail open: retrieve as stock would
            gate_failed = True
            trace.gate_open = True
            trace.notes.append("gate failed open after a decider error")
        else:
            gate_p = answers[GATE]
            assert isinstance(gate_p, float)
            trace.gate_p = gate_p
            trace.gate_open = gate_p >= trace.gate_threshold or self._named_in_store(
                text, gate_p, namespaces, actor_id, trace
            )
            route = answers.get(ROUTE)
            if isinstance(route, ChoiceAnswer):
                namespaces = self._route(route, namespaces, actor_id, trace)
        if not trace.gate_open:
            self.stats.add(gate_closed=1)
            return Recall("", [], trace)
        self.stats.add(gate_opened=1)
        hits = self._search(text, vector, namespaces, actor_id, trace)
        if not hits:
            return Recall("", [], trace)
        candidates = [_candidate(ns, hit) for ns, hit in hits]
        trace.candidates.extend(candidates)
        # Judge every candidate in one call, reusing the stored record vectors.
        judge_qs = {f"r{i}": judge_question(c.text) for i, c in enumerate(candidates)}
        hints = DecisionHints(state_vector=vector)
        for i, (_, hit) in enumerate(hits):
            if hit.record.embedding is not None:
                hints.subject_vectors[f"r{i}"] = np.asarray(hit.record.embedding, dtype=np.float32)
            hints.subject_scores[f"r{i}"] = hit.score
            if hit.lexical is not None:
                hints.subject_lexical[f"r{i}"] = hit.lexical
        judged: dict[str, Any] | None = None
        if gate_failed:
            # One failure per turn at most: a decider that just timed out or answered garbage
            # would most likely do it again, doubling the turn's worst case for nothing.
            trace.notes.append("judge: not asked, the decider failed at the gate this turn")
        else:
            judged = self._ask(state, judge_qs, hints, trace, stage="judge")
        if judged is None:
            for c in candidates:
                c.kept, c.reason = True, "judge failed open"
            trace.keep_rule = "fail open: keep all"
        else:
            for i, c in enumerate(candidates):
                p = judged[f"r{i}"]
                c.judge_p = float(p) if isinstance(p, float) else None
            self._apply_keep_rule(candidates, trace)
        kept_pairs = [(c, hit) for c, (ns, hit) in zip(candidates, hits, strict=True) if c.kept]
        kept_pairs.sort(key=lambda pair: -(pair[0].judge_p if pair[0].judge_p is not None else pair[1].score))
        kept = [KeptRecord(hit.record, c.text, c.namespace, hit.score, c.judge_p) for c, hit in kept_pairs]
        return self._pack(kept, trace)

    # ---- stages ---------------------------------------------------------------------------
    def _named_in_store(
        self, text: str, gate_p: float, namespaces: list[str], actor_id: str, trace: Trace
    ) -> bool:
        """The store-aware gate: open below the gate threshold, down to ``gate_named``, when the
        message names something (a person, place, thing) that this actor's memory mentions."""
        named = self.thresholds.get("gate_named")
        mentions = getattr(self.store, "mentions", None)
        if named is None or gate_p < named or mentions is None:
            return False
        terms = name_terms(text)
        if not terms:
            return False
        local = getattr(self.store, "local", False)
        if not local and not self.store_breaker.allow():
            trace.notes.append("store circuit open: names not looked up")
            return False

        def look_up() -> set[str]:
            found: set[str] = set()
            for namespace in namespaces:
                found |= mentions(namespace, terms, actor_id=actor_id)
            return found

        started = time.perf_counter()
        try:
            if local:
                found = look_up()
            else:  # a remote store answers under the same deadline and breaker as its searches
                future = self._executor().submit(look_up)
                try:
                    found = future.result(timeout=self.store_timeout_s)
                except FutureTimeout:
                    future.cancel()
                    raise TimeoutError(f"no answer within {self.store_timeout_s} s") from None
                self.store_breaker.success()
        except Exception as exc:  # no signal: the gate stays as the decider left it
            if not local:
                self.store_breaker.failure()
            self.stats.error("store", error_kind(exc))
            trace.errors.append(f"store mentions: {type(exc).__name__}: {exc}")
            return False
        finally:
            trace.timings_ms["names"] = _ms(started)
        if not found:
            return False
        trace.names_in_store = [t for t in terms if t in found]
        trace.notes.append(
            f"gate opened: the memory mentions {', '.join(trace.names_in_store)} "
            f"(p {gate_p:.2f} >= {named:.3g})"
        )
        return True

    def _state(self, text: str, trace: Trace) -> str:
        if len(text) > self.max_state_chars:
            trace.notes.append(
                f"message truncated from {len(text)} to {self.max_state_chars} chars for the decider"
            )
            return text[: self.max_state_chars]
        return text

    def _ask(
        self, state: str, questions: dict[str, Question], hints: DecisionHints, trace: Trace, stage: str
    ) -> dict[str, Any] | None:
        decider = self.decider
        assert decider is not None
        if not self.breaker.allow():
            self.stats.error("decider", "circuit_open")
            trace.errors.append(
                f"{stage}: circuit open after repeated decider failures; not called "
                f"for another {self.breaker.remaining_s():.0f} s"
            )
            trace.notes.append(f"{stage}: decider skipped (circuit open), failing open")
            return None
        started = time.perf_counter()
        try:
            if getattr(decider, "local", False):
                answers, warnings = _ask_with_warnings(decider, state, questions, hints)
            else:
                future = self._executor().submit(_ask_with_warnings, decider, state, questions, hints)
                try:
                    answers, warnings = future.result(timeout=self.decider_timeout_s)
                except FutureTimeout:
                    future.cancel()
                    raise DeciderTimeout(
                        f"{getattr(decider, 'name', 'decider')} gave no answer "
                        f"within {self.decider_timeout_s} s"
                    ) from None
        except DeciderError as exc:
            self.breaker.failure()
            self.stats.error("decider", exc.kind)
            trace.errors.append(f"{stage}: {exc}")
            return None
        finally:
            elapsed = _ms(started)
            trace.timings_ms[stage] = trace.timings_ms.get(stage, 0.0) + elapsed
            self.stats.add(decider_calls=1, decider_ms=elapsed)
        self.breaker.success()
        # A backend that had to cut the state says so; the trace must show it, never silently.
        trace.notes.extend(f"{stage}: {w}" for w in warnings)
        return answers

    def _executor(self) -> ThreadPoolExecutor:
        if self._pool is None:
            with self._pool_lock:
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="recallgate")
        return self._pool

    def _route(self, answer: ChoiceAnswer, namespaces: list[str], actor_id: str, trace: Trace) -> list[str]:
        trace.route = dict(answer.probabilities)
        threshold = self.thresholds.get("route", 0.25)
        chosen = [
            ns
            for template, ns in zip(self.namespaces, namespaces, strict=True)
            if answer.probabilities.get(template, 0.0) >= threshold
        ]
        if not chosen:
            trace.notes.append("route unsure: searching every namespace")
            return namespaces
        return chosen

    def _search(
        self, text: str, vector: np.ndarray, namespaces: list[str], actor_id: str, trace: Trace
    ) -> list[tuple[str, SearchHit]]:
        started = time.perf_counter()
        trace.namespaces_searched = list(namespaces)
        results: list[tuple[str, list[SearchHit]]] = []

        def one(ns: str) -> tuple[str, list[SearchHit] | Exception]:
            try:
                if self.decider is None or self.search_mode == "dense":
                    hits = self.store.search(ns, vector, self.top_k, actor_id=actor_id, text=text)
                else:
                    hits = self.store.search(
                        ns, vector, self.top_k, actor_id=actor_id, text=text, mode=self.search_mode
                    )
                return ns, hits
            except Exception as exc:  # a broken store must not break the turn: count, inject nothing
                return ns, exc

        outcomes: list[tuple[str, list[SearchHit] | Exception]]
        local = getattr(self.store, "local", False)
        if local:
            outcomes = [one(ns) for ns in namespaces]
        elif not self.store_breaker.allow():
            self.stats.error("store", "circuit_open")
            trace.errors.append(
                "store: circuit open after repeated store failures; not searched "
                f"for another {self.store_breaker.remaining_s():.0f} s"
            )
            trace.notes.append("store error: nothing injected this turn")
            return []
        else:
            # One thread per namespace, all under one deadline (a remote store may hang).
            futures = [self._executor().submit(one, ns) for ns in namespaces]
            deadline = time.monotonic() + self.store_timeout_s
            outcomes = []
            for ns, future in zip(namespaces, futures, strict=True):
                try:
                    outcomes.append(future.result(timeout=max(deadline - time.monotonic(), 0.0)))
                except FutureTimeout:
                    future.cancel()
                    outcomes.append((ns, TimeoutError(f"no answer within {self.store_timeout_s} s")))
        failed = False
        for ns, outcome in outcomes:
            if isinstance(outcome, Exception):
                failed = True
                self.stats.error("store", error_kind(outcome))
                trace.errors.append(f"store search {ns}: {type(outcome).__name__}: {outcome}")
            else:
                results.append((ns, outcome))
        if not local:
            if failed:
                self.store_breaker.failure()
            else:
                self.store_breaker.success()
        elapsed = _ms(started)
        trace.timings_ms["search"] = elapsed
        self.stats.add(retrievals=1, memory_ms=elapsed)
        if failed:
            trace.notes.append("store error: nothing injected this turn")
            return []
        hits = [(ns, hit) for ns, ns_hits in results for hit in ns_hits]
        self.stats.add(records_returned=len(hits))
        return hits

    def _apply_keep_rule(self, candidates: list[Candidate], trace: Trace) -> None:
        absolute = self.thresholds.get("judge", 0.5)
        delta = self.thresholds.get("judge_relative", 0.3)
        probs = [c.judge_p for c in candidates if c.judge_p is not None]
        best = max(probs) if probs else 0.0
        rules = []
        if self.keep in ("absolute", "both"):
            rules.append(f"p >= {absolute:.3g}")
        if self.keep in ("relative", "both"):
            rules.append(f"p >= best - {delta:.3g}")
        trace.keep_rule = " and ".join(rules)
        order = sorted(range(len(candidates)), key=lambda i: -(candidates[i].judge_p or 0.0))
        kept = 0
        for i in order:
            c = candidates[i]
            p = c.judge_p if c.judge_p is not None else 0.0
            if self.keep in ("absolute", "both") and p < absolute:
                c.reason = f"p {p:.2f} < {absolute:.3g}"
            elif self.keep in ("relative", "both") and p < best - delta:
                c.reason = f"p {p:.2f} < best {best:.2f} - {delta:.3g}"
            elif self.max_records is not None and kept >= self.max_records:
                c.reason = f"over max_records {self.max_records}"
            else:
                c.kept, c.reason = True, f"p {p:.2f} kept"
                kept += 1

    def _pack(self, kept: list[KeptRecord], trace: Trace) -> Recall:
        context, included = pack_context(
            [k.text for k in kept],
            max_record_chars=self.max_record_chars,
            max_context_chars=self.max_context_chars,
        )
        if len(included) < len(kept):
            trace.notes.append(
                f"{len(kept) - len(included)} kept record(s) left out as duplicates or by the size budget"
            )
            packed_ids = {kept[i].record.id for i in included}
            for c in trace.candidates:
                if c.kept and c.id not in packed_ids:
                    c.kept, c.reason = False, c.reason + "; left out by the budget or as a duplicate"
        self.stats.add(
            records_injected=len(included),
            records_dropped=len(trace.candidates) - len(included),
            context_chars=len(context),
            context_tokens=count_tokens(context),
        )
        return Recall(context, [kept[i] for i in included], trace)

    def _finish(self, recall: Recall, started: float) -> Recall:
        recall.trace.timings_ms["total"] = _ms(started)
        return recall


def _candidate(namespace: str, hit: SearchHit) -> Candidate:
    return Candidate(
        id=hit.record.id, namespace=namespace, text=render_text(hit.record.text), score=hit.score
    )


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def error_kind(exc: BaseException) -> str:
    """A short kind for counting a failure: timeout, unavailable, or the exception's name."""
    if isinstance(exc, TimeoutError):
        return "timeout"
    if isinstance(exc, (ConnectionError, OSError)):
        return "unavailable"
    return getattr(exc, "kind", None) or type(exc).__name__


def _ask_with_warnings(
    decider: Decider, state: str, questions: dict[str, Question], hints: DecisionHints
) -> tuple[dict[str, Any], list[str]]:
    """Ask, and read the backend's warnings in the same thread (they live in a context variable)."""
    answers = ask_decider(decider, state, questions, hints)
    return answers, list(getattr(decider, "last_warnings", None) or ())


class _BadVector(ValueError):
    """The embedder returned something that is not a usable query vector."""

    kind = "bad_vector"
