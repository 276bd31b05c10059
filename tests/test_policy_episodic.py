"""What the gated arm searches and keeps: the search depth per backend, a judge split into calls
of at most MAX_QUESTIONS, and the episodic options (conversation re-scoring between the judge
and the keep rule, the adaptive keep budget) with the trace saying what they did, run on real
SQLite stores with the real embedder and the embedded decider."""

from __future__ import annotations

import numpy as np
import pytest

from recallwise import MemoryRecord, RecallPolicy
from recallwise.deciders.questions import MAX_QUESTIONS
from recallwise.errors import UsageError
from recallwise.policy import (
    ADAPTIVE_BUDGET,
    CONVERSATION_WEIGHTS,
    EPISODIC_OPTIONS,
    AdaptiveBudget,
    KeepOptions,
    RecallOptions,
    SearchOptions,
)
from recallwise.policy.budget import GATED_TOP_K, keep_count
from recallwise.policy.conversation import log_odds, rescore_by_conversation
from recallwise.testing import ScriptedDecider

NS = ["/facts/{actorId}", "/preferences/{actorId}"]


def counting() -> ScriptedDecider:
    """Opens the gate and answers every judge question 0.9; ``calls`` say each call's size."""
    return ScriptedDecider(gate=1.0, judge=0.9, name="counting")


def _fill(store, actor: str, per_namespace: int, namespaces=NS, session=None) -> None:
    records = []
    for template in namespaces:
        ns = template.replace("{actorId}", actor)
        for i in range(per_namespace):
            metadata = {"session": session(i)} if session else {}
            records.append(
                MemoryRecord(actor_id=actor, namespace=ns, text=f"{ns} note {i} about tea", metadata=metadata)
            )
    store.add_records(records)


# ---- search depth -----------------------------------------------------------------------------
def test_the_embedded_decider_searches_its_fitted_depth_and_others_search_top_k(store):
    _fill(store, "u", 40)
    embedded = RecallPolicy(store, namespaces=NS)  # the default decider: embedded
    assert embedded.search_depth == GATED_TOP_K["embedded"] == 30
    stock = RecallPolicy(store, decider=None, namespaces=NS)
    other = RecallPolicy(store, decider=counting(), namespaces=NS)
    assert stock.search_depth == other.search_depth == 10
    recall = other.recall("which tea do I like?", actor_id="u")
    assert len(recall.trace.candidates) == 20
    assert RecallPolicy(store, namespaces=NS, top_k=45).search_depth == 45  # never fewer than top_k
    assert RecallPolicy(store, namespaces=NS, gated_top_k=7).search_depth == 7
    # a turn's own top_k (a framework's page) is searched as asked
    paged = RecallPolicy(store, decider=counting(), namespaces=NS, gated_top_k=25)
    assert len(paged.recall("tea?", actor_id="u", top_k=3).trace.candidates) == 6
    assert len(paged.recall("tea again?", actor_id="u").trace.candidates) == 50
    with pytest.raises(UsageError, match="gated_top_k"):
        SearchOptions(gated_top_k=0)


def test_a_judge_of_more_than_max_questions_records_is_asked_in_several_calls(store):
    three = [*NS, "/events/{actorId}"]
    _fill(store, "u", 30, namespaces=three)
    decider = counting()
    policy = RecallPolicy(store, decider=decider, namespaces=three, gated_top_k=30)
    recall = policy.recall("which tea do I like?", actor_id="u")
    judged = [len(call.questions) for call in decider.calls[1:]]  # the first call is the gate's
    assert sum(judged) == 90 and max(judged) <= MAX_QUESTIONS and len(judged) == 2
    assert not recall.trace.errors
    assert all(c.judge_p == pytest.approx(0.9) for c in recall.trace.candidates)


# ---- the episodic options ---------------------------------------------------------------------
EVENTS = [
    # session 1: a trip
    ("Mara flew to Lisbon for a conference in May.", 1),
    ("Mara gave a talk about soil bacteria in Lisbon.", 1),
    ("Mara ate grilled sardines by the river in Lisbon.", 1),
    # session 2: the garden
    ("Mara planted tomatoes and basil in her garden.", 2),
    ("Mara's tomatoes were eaten by snails.", 2),
    # session 3: a move
    ("Mara moved to a flat near the park in June.", 3),
    ("Mara's new flat has a small balcony.", 3),
    ("Mara likes travelling.", 3),
]


@pytest.fixture
def episodes(real_store):
    real_store.add_records(
        [
            MemoryRecord(
                actor_id="m", namespace="/events/m", text=text, id=f"e{i}", metadata={"session": session}
            )
            for i, (text, session) in enumerate(EVENTS)
        ]
    )
    return real_store


def test_the_episodic_options_are_off_by_default_and_are_the_fitted_values():
    assert RecallOptions().keep.conversation_rescore is None and RecallOptions().keep.adaptive_budget is None
    assert RecallOptions().keep.rule == "both" and RecallOptions().keep.judge_domains
    assert RecallOptions().keep.by_gate
    assert dict(EPISODIC_OPTIONS) == {
        "conversation_rescore": CONVERSATION_WEIGHTS,
        "adaptive_budget": ADAPTIVE_BUDGET,
        "keep": "absolute",
        "judge_domains": False,
        "keep_by_gate": False,
    }
    with pytest.raises(UsageError, match="ConversationWeights or None"):
        KeepOptions(conversation_rescore=True)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="AdaptiveBudget or None"):
        KeepOptions(adaptive_budget=5)  # type: ignore[arg-type]


def test_rescoring_writes_the_rescored_probability_back_and_the_trace_says_so(episodes):
    question = "What did Mara do in Lisbon?"
    # the same judge as the episodic options' (no life-domain table, not told the turn's need),
    # without re-scoring or budget
    plain = RecallPolicy(
        episodes, namespaces=["/events/{actorId}"], judge_domains=False, keep_by_gate=False
    ).recall(question, actor_id="m")
    policy = RecallPolicy(episodes, namespaces=["/events/{actorId}"], **EPISODIC_OPTIONS)
    recall = policy.recall(question, actor_id="m")
    before = {c.id: c.judge_p for c in plain.trace.candidates}
    ids = [c.id for c in recall.trace.candidates]
    assert ids == [c.id for c in plain.trace.candidates]  # same search, same judge
    # the re-scoring the policy applied is exactly the module's, over the judge's log-odds
    records = episodes.get_records(ids)
    expected = rescore_by_conversation(
        log_odds([before[i] for i in ids]),
        np.stack([records[i].embedding for i in ids]),
        [str(records[i].metadata["session"]) for i in ids],
        centre_weight=CONVERSATION_WEIGHTS.centre,
        session_weight=CONVERSATION_WEIGHTS.session,
    )
    after = log_odds([c.judge_p for c in recall.trace.candidates])
    assert after == pytest.approx(expected, abs=1e-6)
    assert after.tolist() != pytest.approx(log_odds([before[i] for i in ids]).tolist())
    notes = " | ".join(recall.trace.notes)
    assert "conversation re-scoring: 8 records from 3 sessions" in notes
    count = keep_count(expected, ADAPTIVE_BUDGET)
    assert f"adaptive keep budget: {count} of 8" in notes
    assert "adaptive budget" in recall.trace.keep_rule
    assert "rescore" in recall.trace.timings_ms
    # kept: the best by the re-scored probability, at most the budget, all over the threshold
    kept = [c for c in recall.trace.candidates if c.kept]
    assert len(recall.records) == len(kept) <= min(count, 5)
    assert all(c.judge_p >= policy.thresholds["judge"] for c in kept)
    assert [k.judge_p for k in recall.records] == sorted((c.judge_p for c in kept), reverse=True)
    # the Lisbon session's records lead; the judge alone scores all eight close (all name Mara),
    # after re-scoring the other sessions' fall away and the budget keeps at most five
    assert {k.record.id for k in recall.records[:3]} == {"e0", "e1", "e2"}


def test_the_budget_caps_and_says_why_records_were_dropped(episodes):
    budget = AdaptiveBudget(delta=100.0, min_records=1, max_records=2)
    policy = RecallPolicy(
        episodes,
        namespaces=["/events/{actorId}"],
        adaptive_budget=budget,
        judge_threshold=0.0,  # every record passes the threshold: only the budget limits
    )
    recall = policy.recall("What did Mara do in Lisbon?", actor_id="m")
    assert len(recall.records) == 2
    reasons = [c.reason for c in recall.trace.candidates if not c.kept]
    assert reasons and all(r == "over the adaptive keep budget 2" for r in reasons)
    assert not any("conversation re-scoring:" in n for n in recall.trace.notes)  # not asked for


def test_records_from_one_session_are_left_as_the_judge_said(real_store):
    real_store.add_records(
        [
            MemoryRecord(actor_id="m", namespace="/events/m", text=t, metadata={"session": 1})
            for t, _ in EVENTS[:3]
        ]
    )
    plain = RecallPolicy(
        real_store, namespaces=["/events/{actorId}"], judge_domains=False, keep_by_gate=False
    ).recall("Lisbon?", actor_id="m")
    recall = RecallPolicy(real_store, namespaces=["/events/{actorId}"], **EPISODIC_OPTIONS).recall(
        "Lisbon?", actor_id="m"
    )
    assert [c.judge_p for c in recall.trace.candidates] == [c.judge_p for c in plain.trace.candidates]
    assert any("fewer than 2 sessions, unchanged" in n for n in recall.trace.notes)


def test_another_judge_is_left_alone_and_the_trace_says_why(episodes):
    decider = counting()
    policy = RecallPolicy(episodes, decider=decider, namespaces=["/events/{actorId}"], **EPISODIC_OPTIONS)
    recall = policy.recall("What did Mara do in Lisbon?", actor_id="m")
    assert all(c.judge_p == pytest.approx(0.9) for c in recall.trace.candidates)
    assert any(
        "not applied: fitted for the embedded decider's log-odds, not counting's" in n
        for n in recall.trace.notes
    )
    assert len(recall.records) == 8  # no budget either: the thresholds alone


def test_a_turn_judged_with_the_multilingual_model_is_left_alone(episodes):
    policy = RecallPolicy(episodes, namespaces=["/events/{actorId}"], **EPISODIC_OPTIONS)
    recall = policy.recall("¿Qué hizo Mara en Lisboa?", actor_id="m")
    assert recall.trace.gate_open and recall.trace.candidates
    assert any("judged with the multilingual model" in n for n in recall.trace.notes)
    assert "rescore" not in recall.trace.timings_ms


def test_the_demo_persona_is_unchanged_by_default_and_loses_records_with_the_episodic_options(
    tmp_path, minilm
):
    """The persona's memories come from five conversations: they carry sessions, but they are
    facts and preferences, not episodes. This is why the episodic options are off by default."""
    from recallwise import default_decider
    from recallwise.demo import run_demo
    from recallwise.stores import SQLiteStore

    def dinner(**options):
        store = SQLiteStore(f"sqlite:///{tmp_path}/demo-{len(options)}.db", embedder=minilm)
        try:
            result = run_demo(store, default_decider(), **options)
        finally:
            store.close()
        turn = next(t for t in result.per_turn if t["turn"] == "What should I have for dinner?")
        return " ".join(turn["gated"]["injected"]).lower()

    default = dinner()
    assert "vegetarian" in default and "peanut" in default
    episodic = dinner(**EPISODIC_OPTIONS)
    assert not ("vegetarian" in episodic and "peanut" in episodic)
