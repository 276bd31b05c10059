"""The latency bench's decision figures come from turns of the real policy (its own trace timings),
asserted as behaviour, never as timings: what the timed turns asked, searched and judged."""

from __future__ import annotations

import pytest

from recallwise.bench.decisions import (
    NO_DECISIONS,
    DecisionBench,
    FixedSearcher,
    by_sessions,
    decision_ms,
    policy_ms,
)
from recallwise.bench.latency import MESSAGES
from recallwise.demo import persona, seed_persona
from recallwise.errors import RecallwiseError
from recallwise.policy import Recall, Trace
from recallwise.policy.conversation import session_of
from recallwise.records import MemoryRecord, SearchHit
from recallwise.stores.base import SearchRequest
from recallwise.testing import InMemoryStore, ScriptedDecider


@pytest.fixture(scope="module")
def store() -> InMemoryStore:
    seeded = InMemoryStore()
    seed_persona(seeded)
    return seeded


def _bench(store: InMemoryStore, decider: ScriptedDecider) -> DecisionBench:
    return DecisionBench(store, decider, persona()["actor_id"], MESSAGES, repeats=3, warmup=1)


def test_the_fixed_searcher_repeats_its_hits_to_the_depth_asked() -> None:
    store = InMemoryStore()
    hits = [SearchHit(MemoryRecord(actor_id="u", namespace="/f/u", text=t), 0.9) for t in ("a", "b")]
    searcher = FixedSearcher(store.embedder, {"/f/u": hits})
    vector = store.embedder.embed(["q"])[0]
    assert [h.record.text for h in searcher.search(SearchRequest("/f/u", vector, 5))] == list("ababa")
    assert searcher.search(SearchRequest("/other", vector, 5)) == []
    assert searcher.local is True


def test_the_figures_are_read_from_the_traces_of_real_turns(store: InMemoryStore) -> None:
    # A gate answer of 0 still opens: the bench's policies force the gate open (threshold 0).
    decider = ScriptedDecider(gate=0.0, judge=0.9)
    bench = _bench(store, decider)
    figures = bench.figures()
    assert list(figures) == list(NO_DECISIONS)
    # no fitted depth for this backend: each demo namespace searched top_k (10) deep, all judged
    assert figures["judged_per_turn"] == 20
    assert all(figures[key] > 0 for key in NO_DECISIONS if key != "judged_per_turn")
    gate_calls = [c for c in decider.calls if "gate" in c.questions]
    judge_calls = [c for c in decider.calls if c.memories]
    assert any("route" in c.questions for c in gate_calls)  # the routed policies ask it
    assert any("route" not in c.questions for c in gate_calls)  # the demo's policy does not
    assert 20 in {len(c.memories) for c in judge_calls}
    assert all(len(c.memories) <= 64 for c in judge_calls)  # in calls of MAX_QUESTIONS at most


def test_the_follow_up_figure_asks_the_follow_up_question(store: InMemoryStore) -> None:
    decider = ScriptedDecider(gate=0.9, judge=0.9)
    bench = _bench(store, decider)
    # the scripted backend has no measured follow-up threshold: give one, as a user may
    policy = bench.policy(follow_up_threshold=0.5)
    recalls = bench.turns(policy, follow_up=True)
    asked = [c for c in decider.calls if "gate" in c.questions]
    # each timed turn is a conversation's second: the first asks the gate, the second the follow-up too
    assert ["follow_up" in c.questions for c in asked] == [False, True] * (bench.warmup + bench.repeats)
    assert all(r.trace.gate_open and r.trace.candidates for r in recalls)


def test_a_failing_decider_stops_the_bench_instead_of_timing_a_failed_open_turn(
    store: InMemoryStore,
) -> None:
    bench = _bench(store, ScriptedDecider.failing())
    with pytest.raises(RecallwiseError, match="did not decide as measured"):
        bench.figures()


def test_the_episodic_hits_come_from_several_sessions(store: InMemoryStore) -> None:
    bench = _bench(store, ScriptedDecider())
    sessions = {
        session_of(h.record.metadata) for found in by_sessions(bench.searcher.hits, 4).values() for h in found
    }
    assert sessions == {"s0", "s1", "s2", "s3"}


def test_decision_overhead_and_policy_work_from_a_trace() -> None:
    trace = Trace(
        timings_ms={"embed": 3.0, "gate": 0.2, "search": 0.5, "judge": 0.3, "rescore": 0.1, "total": 5.0}
    )
    recall = Recall("", [], trace)
    assert decision_ms(recall) == pytest.approx(0.6)
    assert policy_ms(recall) == pytest.approx(1.5)
