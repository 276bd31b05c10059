"""recallwise.testing: the doubles users test their own code with behave as documented."""

from __future__ import annotations

import pytest

from recallwise import MemoryRecord, RecallPolicy
from recallwise.deciders.questions import Question
from recallwise.stores.base import SearchRequest
from recallwise.testing import InMemoryStore, ScriptedDecider

R = MemoryRecord
NS = ["/facts/{actorId}", "/preferences/{actorId}"]


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore(
        [
            R(actor_id="u1", namespace="/facts/u1", text="The user is vegetarian."),
            R(actor_id="u1", namespace="/preferences/u1", text="Prefers an aisle seat."),
            R(actor_id="u2", namespace="/facts/u2", text="The other user eats fish."),
        ]
    )


def test_the_module_docstring_example_holds(store: InMemoryStore) -> None:
    decider = ScriptedDecider(gate={"What's for dinner?": 0.9}, judge={"vegetarian": 0.95})
    policy = RecallPolicy(store, decider=decider, namespaces=["/facts/{actorId}"])
    dinner = policy.recall("What's for dinner?", actor_id="u1")
    assert [r.text for r in dinner.records] == ["The user is vegetarian."]
    assert not policy.recall("Hello!", actor_id="u1").retrieved
    assert decider.messages == ["What's for dinner?", "Hello!"]


def test_judge_tables_match_words_case_insensitively_and_take_the_highest(store: InMemoryStore) -> None:
    decider = ScriptedDecider(judge={"AISLE": 0.2, "seat": 0.8, "vegetarian": 0.9})
    policy = RecallPolicy(store, decider=decider, namespaces=NS)
    recall = policy.recall("Book me a flight", actor_id="u1")
    by_text = {r.text: r.judge_p for r in recall.records}
    assert by_text == {
        "The user is vegetarian.": pytest.approx(0.9),
        "Prefers an aisle seat.": pytest.approx(0.8),
    }
    judged = [call for call in decider.calls if call.memories]
    assert sorted(m for call in judged for m in call.memories) == sorted(by_text)


def test_the_wire_form_a_foreign_decider_receives_is_understood_too() -> None:
    decider = ScriptedDecider(gate=lambda m: 0.7 if "?" in m else 0.1, judge=lambda memory: len(memory) / 100)
    wire = {
        "gate": {"type": "noul", "instructions": "Does this need memory?"},
        "r0": {"type": "noul", "instructions": "Is this relevant?\nMemory: " + "x" * 40},
        "route": {"type": "choice", "instructions": "Which?", "criteria": {"/a": "a", "/b": "b"}},
    }
    answers = decider.ask("Where to?", wire)
    assert answers == {"gate": 0.7, "r0": 0.4, "route": {"probabilities": {"/a": 0.5, "/b": 0.5}}}
    typed = {"r0": Question("noul", "Is this relevant?", subject="y" * 10)}
    assert decider.ask("Where to?", typed) == {"r0": 0.1}


def test_route_follows_the_script(store: InMemoryStore) -> None:
    decider = ScriptedDecider(route={"/preferences/{actorId}": 0.9, "/facts/{actorId}": 0.05})
    policy = RecallPolicy(
        store,
        decider=decider,
        namespaces={
            "/facts/{actorId}": "facts about the user",
            "/preferences/{actorId}": "the user's preferences",
        },
        route_threshold=0.25,  # the route is off unless a threshold is given or fitted
    )
    recall = policy.recall("Book me a flight", actor_id="u1")
    assert [r.text for r in recall.records] == ["Prefers an aisle seat."]
    assert {s.namespace for s in store.searches} == {"/preferences/u1"}


def test_a_failing_decider_means_the_stock_behaviour_counted(store: InMemoryStore) -> None:
    decider = ScriptedDecider.failing()
    policy = RecallPolicy(store, decider=decider, namespaces=NS)
    recall = policy.recall("Hello!", actor_id="u1")
    assert recall.retrieved and len(recall.records) == 2  # fail open: stock retrieval
    assert policy.stats.errors and len(decider.calls) == 1
    assert ScriptedDecider.never_open().ask("x", {"gate": {}}) == {"gate": 0.0}
    assert ScriptedDecider.always_open().ask("x", {"gate": {}}) == {"gate": 1.0}


def test_the_store_records_searches_and_fails_on_demand(store: InMemoryStore) -> None:
    assert (
        store.search(SearchRequest("/facts/u1", "dinner", top_k=3, actor_id="u1"))[0].record.text
        == "The user is vegetarian."
    )
    store.fail_searches(TimeoutError("slow"), times=1)
    with pytest.raises(TimeoutError):
        store.search(SearchRequest("/facts/u1", "dinner"))
    assert len(store.search(SearchRequest("/facts/u1", "dinner"))) == 1  # healed after one
    assert [(s.namespace, s.top_k, s.hits) for s in store.searches] == [
        ("/facts/u1", 3, 1),
        ("/facts/u1", 10, 0),
        ("/facts/u1", 10, 1),
    ]
    store.fail_searches()
    policy = RecallPolicy(store, decider=ScriptedDecider.always_open(), namespaces=NS)
    recall = policy.recall("dinner?", actor_id="u1")
    assert recall.records == [] and policy.stats.store_errors >= 1
    store.heal()
    assert policy.recall("dinner?", actor_id="u1").records


def test_a_remote_looking_store_goes_through_the_deadline_path() -> None:
    store = InMemoryStore([R(actor_id="u", namespace="/f/u", text="tea")], local=False)
    assert store.local is False
    policy = RecallPolicy(store, decider=ScriptedDecider.always_open(), namespaces=["/f/{actorId}"])
    assert [r.text for r in policy.recall("tea?", actor_id="u").records] == ["tea"]


def test_the_route_threshold_is_an_option_with_a_source(store: InMemoryStore) -> None:
    decider = ScriptedDecider(route={"/preferences/{actorId}": 0.3, "/facts/{actorId}": 0.2})
    described = {"/facts/{actorId}": "facts about the user", "/preferences/{actorId}": "preferences"}
    # no route threshold was ever measured: by default the route is not asked, and every
    # described namespace is searched (an unmeasured route must not hide one)
    default = RecallPolicy(store, decider=decider, namespaces=described)
    assert "route" not in default.thresholds and not default.routes
    assert not any(u.endswith(":route") for u in default.stats.unmeasured_thresholds)
    assert "route" not in default.gate_questions()
    assert {r.namespace for r in default.recall("Book me a flight", actor_id="u1").records} == {
        "/preferences/u1",
        "/facts/u1",
    }
    given = RecallPolicy(store, decider=decider, namespaces=described, route_threshold=0.25)
    assert given.threshold_sources["route"] == "argument" and given.routes
    assert {r.namespace for r in given.recall("Book me a flight", actor_id="u1").records} == {
        "/preferences/u1"
    }
    strict = RecallPolicy(store, decider=decider, namespaces=described, route_threshold=0.35)
    assert strict.threshold_sources["route"] == "argument"
    # nothing reaches 0.35: the route is unsure, and every namespace is searched
    assert len({r.namespace for r in strict.recall("Book me a flight", actor_id="u1").records}) == 2
    plain = RecallPolicy(store, decider=decider, namespaces=list(described))
    assert not any(u.endswith(":route") for u in plain.stats.unmeasured_thresholds)


def test_the_report_says_which_modes_switched_on_by_themselves(store: InMemoryStore) -> None:
    from recallwise.deciders import EmbeddedDecider

    auto = RecallPolicy(store, decider=EmbeddedDecider(embedder=store.embedder))
    last = auto.stats.report().splitlines()[-1]
    assert last.startswith("on by default for this decider:")
    assert "search depth 30" in last and "follow-ups (threshold 0.565, measured default)" in last
    asked = RecallPolicy(
        store,
        decider=EmbeddedDecider(embedder=store.embedder),
        gated_top_k=10,
        search_mode="dense",
        follow_up_threshold=0.6,
        gate_named_threshold=0.4,
    )
    assert asked.default_modes == [] and "on by default" not in asked.stats.report()
    assert RecallPolicy(store, decider=None).default_modes == []


def test_a_broken_reply_a_local_decider_and_warm_ups(store: InMemoryStore) -> None:
    broken = ScriptedDecider(reply=lambda questions: dict.fromkeys(questions, "yes"))
    policy = RecallPolicy(store, decider=broken, namespaces=NS)
    recall = policy.recall("Hello!", actor_id="u1")
    assert recall.retrieved and policy.stats.errors_by_kind == {"decider:bad_response": 1}  # fail open
    local = ScriptedDecider(local=True)
    assert RecallPolicy(store, decider=local, namespaces=NS).decider.capabilities.local  # type: ignore[union-attr]
    assert not RecallPolicy(store, decider=ScriptedDecider(), namespaces=NS).decider.capabilities.local  # type: ignore[union-attr]
    RecallPolicy(store, decider=local, namespaces=NS).warm_up()
    assert local.warmed == [["gate"]] and not local.calls


def test_every_question_about_the_message_gets_the_gates_probability() -> None:
    # a tuner asks the gate under each candidate wording's own name
    decider = ScriptedDecider(gate={"Where to?": 0.7})
    wire = {
        "shipped": {"type": "noul", "instructions": "Memory?"},
        "v2": {"type": "noul", "instructions": "?"},
    }
    assert decider.ask("Where to?", wire) == {"shipped": 0.7, "v2": 0.7}
    assert decider.ask("Where to?", {"follow_up": {"type": "noul", "instructions": "?"}}) == {
        "follow_up": 0.0
    }
