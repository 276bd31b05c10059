"""The decision figures of ``recallwise bench latency``, timed through the real policy.

Each figure is a set of turns of a real :class:`~recallwise.policy.RecallPolicy` (the bench's
decider, ``cache_size=0``) over a :class:`FixedSearcher`, and what the policy spent is read
from the per-stage timings it records itself (``recall.trace.timings_ms``). So the bench times
the policy's own gate, route, judge, re-scoring and keep code, never a copy of it that could
drift from it. Two things are taken out of those turns, because they are timed on their own
(``embed_p50_ms``, ``search_p50_ms``) and the stock arm pays them too:

* the search: the searcher serves precomputed hits instantly, the ones a default gated turn
  judges (every demo namespace searched ``policy.search_depth`` deep in the bench's store);
* the query embedding: the messages' vectors are the store embedder's, computed once before
  the timed turns (:class:`~recallwise.embeddings.cache.CachedEmbedder`, same model name, so
  the decider reads them as it reads a live turn's).

Two measures of a gated turn, both from its trace:

* **decision overhead** (:func:`decision_ms`): ``gate + follow_up + judge + rescore``, the time the
  policy records for its decider calls (the gate's one call, with the route and the follow-up
  question when asked; the judge's, at most ``MAX_QUESTIONS`` records a call), for the follow-up
  head's answer on the pair and for the episodic re-scoring. This is what BENCHMARKS.md has called
  the decision overhead from the start (the decider's calls, beyond the embedding), now timed
  inside a real turn. It leaves out the work
  the policy does around those calls, which the next figure holds;
* **policy work** (:func:`policy_ms`): ``total - embed - search``, everything the turn did but
  the embedding and the search: the decision overhead plus rendering the candidates, writing
  their judge questions and hints, the keep rule and the adaptive budget, and packing the kept
  records. A stock turn renders and packs too (its own records, more of them kept), so the same
  figure is reported for a stock turn over the same hits.

Every timed turn retrieves: the policies are built with ``gate_threshold=0.0``, so the gate is
asked as on any turn but always opens and every timed turn judges (otherwise a turn the gate
closes costs only its gate call, and the figure would depend on the message mix). Over
described namespaces (the route is asked, in the gate's call) ``route_threshold=0.0`` keeps
every namespace, so the judge reads the candidate set of a default gated turn. Each timed turn
is the first of a new conversation (its own session), except in the follow-up figure.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from ..deciders import Decider
from ..deciders.base import call_if_present
from ..demo import DEMO_NAMESPACES
from ..embeddings import Embedder
from ..embeddings.cache import CachedEmbedder
from ..embeddings.language import guess_language
from ..errors import RecallwiseError
from ..policy import EPISODIC_OPTIONS, Recall, RecallPolicy
from ..policy.telemetry import Telemetry
from ..records import SearchHit, resolve_namespace
from ..stores.base import MemoryStore, SearchRequest
from .timing import p50, timed

__all__ = [
    "NO_DECISIONS",
    "DecisionBench",
    "FixedSearcher",
    "decision_ms",
    "multilingual_figures",
    "policy_ms",
]

#: the demo's namespaces with descriptions, so a policy over them asks the route (in the gate's call)
DESCRIBED_NAMESPACES = {template: template.split("/")[1] for template in DEMO_NAMESPACES}
#: the judge of 20 records (``judge20_p50_ms``): each of the two demo namespaces searched 10 deep
SHALLOW_DEPTH = 10
#: the figures of :meth:`DecisionBench.figures`, in its order, as reported without a decider
#: (the stock arm decides nothing)
NO_DECISIONS: Mapping[str, float] = MappingProxyType(
    {
        "gate_p50_ms": 0.0,
        "judge20_p50_ms": 0.0,
        "judged_per_turn": 0,
        "judge_per_turn_p50_ms": 0.0,
        "decision_overhead_p50_ms": 0.0,
        "decision_overhead_new_records_p50_ms": 0.0,
        "decision_overhead_episodic_p50_ms": 0.0,
        "decision_overhead_follow_up_p50_ms": 0.0,
        "policy_work_gated_p50_ms": 0.0,
        "policy_work_stock_p50_ms": 0.0,
    }
)
#: sessions the episodic figure's records are spread over (its worst case: re-scoring always runs)
EPISODIC_SESSIONS = 4


class FixedSearcher:
    """A :class:`~recallwise.stores.base.Searcher` serving precomputed hits, instantly.

    ``hits`` maps a resolved namespace to its hits, best first. A search ``top_k`` deep gets
    them repeated up to ``top_k``: a namespace that deep, as a default gated turn searches (the
    persona's namespaces hold fewer records than the 30 it searches, and the judge's cost is
    per record judged). Local, so the policy calls it directly, in the turn's thread.
    """

    local = True

    def __init__(
        self, embedder: Embedder, hits: Mapping[str, Sequence[SearchHit]], url: str = "bench://fixed-hits"
    ) -> None:
        self.embedder = embedder
        self.url = url
        self.hits = {namespace: list(found) for namespace, found in hits.items()}

    def search(self, request: SearchRequest) -> list[SearchHit]:
        found = self.hits.get(request.namespace, [])
        return [found[i % len(found)] for i in range(request.top_k)] if found else []


def decision_ms(recall: Recall) -> float:
    """What a turn spent deciding, from its own trace: ``gate + follow_up + judge + rescore`` (see the
    module)."""
    timings = recall.trace.timings_ms
    return sum(timings.get(stage, 0.0) for stage in ("gate", "follow_up", "judge", "rescore"))


def policy_ms(recall: Recall) -> float:
    """What a turn spent besides its embedding and its search: ``total - embed - search``."""
    timings = recall.trace.timings_ms
    return timings["total"] - timings.get("embed", 0.0) - timings.get("search", 0.0)


def by_sessions(hits: Mapping[str, Sequence[SearchHit]], sessions: int) -> dict[str, list[SearchHit]]:
    """The same hits, each record told as from one of ``sessions`` conversation sessions (in
    turn), as episodic memories are: what the episodic options' re-scoring reads."""
    return {
        namespace: [
            replace(
                hit,
                record=replace(
                    hit.record, metadata={**hit.record.metadata, "session_id": f"s{i % sessions}"}
                ),
            )
            for i, hit in enumerate(found)
        ]
        for namespace, found in hits.items()
    }


class DecisionBench:
    """Turns of real policies with the bench's decider over fixed hits (see the module).

    ``messages`` are the English messages the figures cycle through; their query vectors are
    computed here, once.
    """

    def __init__(
        self,
        store: MemoryStore,
        decider: Decider,
        actor_id: str,
        messages: Sequence[str],
        *,
        repeats: int,
        warmup: int,
    ) -> None:
        self.decider = decider
        self.actor_id = actor_id
        self.messages = list(messages)
        self.repeats, self.warmup = repeats, warmup
        self.embedder = CachedEmbedder(store.embedder)
        vectors = self.embedder.embed(self.messages)  # the timed turns never wait on the model
        self.searcher = FixedSearcher(self.embedder, {})
        # The hits of a default gated turn: as deep as the policy itself searches for this decider.
        probe = self.policy(described=False)
        depth = probe.search_depth
        probe.close()
        namespaces = [resolve_namespace(t, actor_id=actor_id) for t in DEMO_NAMESPACES]
        self.searcher.hits = {
            ns: store.search(SearchRequest(ns, vectors[0], depth, actor_id=actor_id)) for ns in namespaces
        }
        self._sessions = itertools.count()

    def policy(
        self, searcher: FixedSearcher | None = None, *, described: bool = True, **options: Any
    ) -> RecallPolicy:
        """A real policy with the bench's decider, the gate forced open (see the module).

        ``described``: over :data:`DESCRIBED_NAMESPACES` (the route is asked; every namespace is
        kept), else over the undescribed demo namespaces, as the default demo policy is.
        """
        return RecallPolicy(
            searcher or self.searcher,
            decider=self.decider,
            namespaces=DESCRIBED_NAMESPACES if described else DEMO_NAMESPACES,
            cache_size=0,  # every timed turn decides: no cached gate answers
            gate_threshold=0.0,
            route_threshold=0.0,
            **options,
        )

    def candidates(self, depth: int) -> list[SearchHit]:
        """The hits a turn searching every demo namespace ``depth`` deep gets from the searcher."""
        vector = self.embedder.embed(self.messages[:1])[0]
        return [
            h for ns in self.searcher.hits for h in self.searcher.search(SearchRequest(ns, vector, depth))
        ]

    def _session(self) -> str:
        # a new conversation per turn: no earlier request of it to follow up
        return f"bench-{next(self._sessions)}"

    def turns(
        self,
        policy: RecallPolicy,
        *,
        messages: Sequence[str] | None = None,
        follow_up: bool = False,
        warmup: int | None = None,
        new_records: bool = False,
    ) -> list[Recall]:
        """``repeats`` turns after ``warmup`` untimed ones, each checked to have judged every record
        the policy searched. ``follow_up``: each is a conversation's second turn, after a first
        that retrieved, so its gate call also asks the follow-up question
        (:mod:`recallwise.policy.follow_up`). ``new_records``: the decider forgets what it cached
        of the records before each turn (the embedded judge's per-record terms), as if every
        record were new to it."""
        texts = list(messages) if messages is not None else self.messages

        def one(i: int) -> Recall:
            if new_records:
                call_if_present(self.decider, "forget_records")
            session = self._session()
            message = texts[i % len(texts)]
            if follow_up:
                policy.recall(message, actor_id=self.actor_id, session_id=session)
                message = texts[(i + 1) % len(texts)]
            return policy.recall(message, actor_id=self.actor_id, session_id=session)

        for i in range(self.warmup if warmup is None else warmup):
            one(i)
        recalls = [one(i) for i in range(self.repeats)]
        for recall in recalls:
            _check_decided(recall)
        return recalls

    # ---- the figures -------------------------------------------------------------------------
    def figures(self) -> dict[str, Any]:
        """Gate, judge, decision overhead and policy work figures (keys of ``bench latency``)."""
        default = self.policy(described=False)  # the demo's policy: no route question
        plain = self.turns(default)
        routed = self.policy()
        routed_turns = self.turns(routed)
        episodic_searcher = FixedSearcher(self.embedder, by_sessions(self.searcher.hits, EPISODIC_SESSIONS))
        episodic = self.policy(episodic_searcher, **EPISODIC_OPTIONS)
        shallow = self.policy(gated_top_k=SHALLOW_DEPTH)
        out = {
            "gate_p50_ms": p50([r.trace.timings_ms["gate"] for r in plain]),
            "judge20_p50_ms": p50([r.trace.timings_ms["judge"] for r in self.turns(shallow)]),
            "judged_per_turn": len(plain[0].trace.candidates),
            "judge_per_turn_p50_ms": p50([r.trace.timings_ms["judge"] for r in plain]),
            "decision_overhead_p50_ms": p50([decision_ms(r) for r in routed_turns]),
            "decision_overhead_new_records_p50_ms": p50(
                [decision_ms(r) for r in self.turns(routed, new_records=True)]
            ),
            "decision_overhead_episodic_p50_ms": p50([decision_ms(r) for r in self.turns(episodic)]),
            "decision_overhead_follow_up_p50_ms": p50(
                [decision_ms(r) for r in self.turns(routed, follow_up=True)]
            ),
            "policy_work_gated_p50_ms": p50([policy_ms(r) for r in routed_turns]),
            "policy_work_stock_p50_ms": p50([policy_ms(r) for r in self._stock_turns()]),
        }
        for policy in (default, routed, episodic, shallow):
            policy.close()
        return out

    def _stock_turns(self) -> list[Recall]:
        """Turns of the stock arm over the same hits (its own depth, ``top_k``): what it does
        besides embedding and searching, to set against the gated turn's policy work."""
        stock = RecallPolicy(self.searcher, decider=None, namespaces=DEMO_NAMESPACES, cache_size=0)

        def one(i: int) -> Recall:
            message = self.messages[i % len(self.messages)]
            return stock.recall(message, actor_id=self.actor_id, session_id=self._session())

        for i in range(self.warmup):
            one(i)
        recalls = [one(i) for i in range(self.repeats)]
        stock.close()
        return recalls

    def decisions_per_s(self, concurrency: int) -> float:
        """Whole gated turns per second of the routed policy, over ``concurrency`` threads: with
        the embedding and the search taken out, what limits them is the policy work (decision
        overhead included), so this is how many turns a second the policy can decide."""
        policy = self.policy()
        count = max(self.repeats * 2, 200)

        def one(i: int) -> None:
            message = self.messages[i % len(self.messages)]
            policy.recall(message, actor_id=self.actor_id, session_id=self._session())

        started = time.perf_counter()
        if concurrency > 1:
            with ThreadPoolExecutor(max_workers=concurrency) as pool:
                list(pool.map(one, range(count)))
        else:
            for i in range(count):
                one(i)
        elapsed = time.perf_counter() - started
        policy.close()
        return round(count / elapsed, 1)

    def telemetry_cost(self) -> dict[str, Any]:
        """The decision overhead with an OpenTelemetry SDK and in-memory exporters configured.

        With providers of its own (the process's global ones are left alone). The SDK's work is
        spread over the turn (metrics as the stages count) and after its ``total`` (the spans,
        made when the turn ends), so each message is a pair of turns, of a policy without the SDK
        and one with it, each timed from outside the call minus its embed and search stages.
        ``otel_emit_p50_ms`` is the median of what the SDK added to a turn (the pair's
        difference: spans and metrics), ``decision_overhead_otel_p50_ms`` that of the decision
        overhead (:func:`decision_ms`) plus it. Empty when the SDK is not installed.
        """
        try:
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import InMemoryMetricReader
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor
            from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        except ImportError:
            return {"otel": "opentelemetry-sdk is not installed"}
        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        # The batch processor, as a deployment uses (the simple one exports inside the turn).
        tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
        plain, sdk = self.policy(), self.policy()
        # Its own providers: the bench must not set the process's (set-once) global ones.
        sdk.telemetry = Telemetry(
            sdk.stats,
            decider=sdk.stats.decider,
            tracer_provider=tracer_provider,
            meter_provider=meter_provider,
        )

        def outside(policy: RecallPolicy, i: int) -> tuple[float, Recall]:
            message = self.messages[i % len(self.messages)]
            started = time.perf_counter()
            recall = policy.recall(message, actor_id=self.actor_id, session_id=self._session())
            wall = (time.perf_counter() - started) * 1000.0
            _check_decided(recall)
            timings = recall.trace.timings_ms
            return wall - timings.get("embed", 0.0) - timings.get("search", 0.0), recall

        with_sdk: list[float] = []
        added: list[float] = []
        for i in range(self.warmup + self.repeats):
            (without, recall), (with_, _) = outside(plain, i), outside(sdk, i)
            if i % 64 == 0:
                exporter.clear()  # spans would pile up in memory otherwise
            if i >= self.warmup:
                added.append(with_ - without)
                with_sdk.append(decision_ms(recall) + added[-1])
        plain.close()
        sdk.close()
        tracer_provider.shutdown()
        return {
            "otel": "sdk, batch span processor, in-memory exporters",
            "otel_emit_p50_ms": p50(added),
            "decision_overhead_otel_p50_ms": p50(with_sdk),
        }


def _check_decided(recall: Recall) -> None:
    """A timed turn must have done what its figure says: opened, and judged every record it
    searched (a failing decider fails open, and its turn would time no judge)."""
    trace = recall.trace
    judged = sum(c.judge_p is not None for c in trace.candidates)
    if trace.errors or not trace.gate_open or not trace.candidates or judged != len(trace.candidates):
        problem = "; ".join(trace.errors) or (
            f"gate open {trace.gate_open}, {judged} of {len(trace.candidates)} records judged"
        )
        raise RecallwiseError(f"bench latency: a timed turn did not decide as measured: {problem}")


def multilingual_figures(
    bench: DecisionBench | None,
    store_embedder: Embedder,
    messages: Sequence[str],
    multilingual_messages: Sequence[str],
    repeats: int,
    warmup: int,
    stage: Callable[[str], None],
) -> dict[str, Any]:
    """What a turn in another language costs the embedded decider beyond the English path.

    ``language_guess_p50_ms``: deciding which model reads a new message (every turn pays it;
    timed without a decider too, ``bench`` None). When the decider has a multilingual model the
    store's embedder is not: the second embedding (``multilingual_embed_p50_ms``, the message),
    the first sight of 20 judged records (``multilingual_embed20_p50_ms``; records recur, and are
    then cached), and the decision itself with those vectors cached
    (``multilingual_decision_overhead_p50_ms``: the decision overhead of turns of the routed
    policy searching 10 deep, so gate + route + judge of 20; a multilingual turn is never
    re-scored by conversation).
    """
    out: dict[str, Any] = {}
    guess = getattr(guess_language, "__wrapped__", guess_language)  # uncached: a new message each time
    out["language_guess_p50_ms"] = p50(
        timed(lambda i: guess(f"{messages[i % len(messages)]} #{i}"), repeats, warmup)
    )
    second = getattr(bench.decider, "multilingual_decider", None) if bench is not None else None
    ml = second() if callable(second) else None
    if bench is None or ml is None or ml.embedder.name == getattr(store_embedder, "name", None):
        out["multilingual_embedder"] = None
        return out
    stage("multilingual")
    model = ml.embedder
    model.embed(["warm-up"])
    texts = [h.record.rendered for h in bench.candidates(SHALLOW_DEPTH)]
    n = len(multilingual_messages)
    embed_ml = timed(lambda i: model.embed([f"{multilingual_messages[i % n]} #{i}"]), repeats, warmup)
    embed20 = timed(lambda i: model.embed([f"{t} #{i}" for t in texts]), max(repeats // 10, 5), 2)
    policy = bench.policy(gated_top_k=SHALLOW_DEPTH)
    # every message once before timing: its multilingual vector is then cached, as said above
    recalls = bench.turns(policy, messages=multilingual_messages, warmup=max(warmup, n))
    policy.close()
    out["multilingual_embedder"] = model.name
    out["multilingual_embed_p50_ms"] = p50(embed_ml)
    out["multilingual_embed20_p50_ms"] = p50(embed20)
    out["multilingual_decision_overhead_p50_ms"] = p50([decision_ms(r) for r in recalls])
    return out
