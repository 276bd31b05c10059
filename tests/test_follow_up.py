"""Follow-up turns: "continue" after a turn that retrieved retrieves too (policy/follow_up.py)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest

import recallwise
from cli_runner import run_cli
from recallwise.errors import UsageError
from recallwise.policy import follow_up as follow_up_module
from recallwise.policy.follow_up import FollowUpMemory, follow_up_text
from recallwise.records import MemoryRecord
from recallwise.stores.sqlite import SQLiteStore
from recallwise.testing import ScriptedDecider

FACTS = [
    "I am vegetarian",
    "I'm allergic to peanuts",
    "I only drink decaf oat flat whites",
    "I use 4 spaces for indentation in Python",
    "My dog is called Rex",
]


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(f"sqlite:///{tmp_path / 'memory.db'}")
    s.add_records([MemoryRecord(actor_id="u", namespace="/facts/u", text=t) for t in FACTS])
    yield s
    s.close()


def _policy(store: SQLiteStore, **options: Any) -> recallwise.RecallPolicy:
    return recallwise.RecallPolicy(store, namespaces=["/facts/{actorId}"], **options)


def _asked_for_dinner(store: SQLiteStore) -> recallwise.RecallPolicy:
    """A policy whose conversation ("u", "s") has just asked what to have for dinner."""
    policy = _policy(store)
    policy.recall("What should I have for dinner?", actor_id="u", session_id="s")
    return policy


def _texts(recall: recallwise.Recall) -> list[str]:
    return [k.record.text for k in recall.records]


# ---- the memory -------------------------------------------------------------------------------
def test_memory_forgets_after_its_ttl_and_keeps_the_newest_conversations() -> None:
    memory = FollowUpMemory(size=2, ttl_s=60)
    a = ("a", None, ("/facts/a",))
    memory.remember(a, "dinner?", now=0.0)
    assert memory.prior(a, now=59.0) == follow_up_module.PriorTurn("dinner?", 0.0)
    assert memory.prior(a, now=61.0) is None  # too old, and gone
    assert len(memory) == 0
    for actor in ("a", "b", "c"):
        memory.remember((actor, "s", (f"/facts/{actor}",)), f"{actor}?", now=100.0)
    assert memory.prior(("a", "s", ("/facts/a",)), now=100.0) is None  # the oldest of three
    assert memory.prior(("c", "s", ("/facts/c",)), now=100.0) is not None
    assert memory.prior(("c", None, ("/facts/c",)), now=100.0) is None  # another session
    assert memory.prior(("c", "s", ("/facts/x",)), now=100.0) is None  # other namespaces
    memory.forget("c", "s")
    assert memory.prior(("c", "s", ("/facts/c",)), now=100.0) is None


@pytest.mark.parametrize(("size", "ttl"), [(0, 60.0), (10, 0.0)])
def test_memory_of_size_or_ttl_zero_is_off(size: int, ttl: float) -> None:
    memory = FollowUpMemory(size, ttl)
    memory.remember(("a", None, ()), "dinner?", now=0.0)
    assert not memory.enabled and memory.prior(("a", None, ()), now=0.0) is None


def test_follow_up_text_is_the_request_then_the_follow_up() -> None:
    request = "What should I have for dinner?"
    assert follow_up_text(request, "go on") == f"{request}\ngo on"


# ---- through the policy, embedded decider, a real SQLite file -------------------------------------
def test_a_follow_up_retrieves_for_the_request_it_carries_on(store) -> None:
    policy = _policy(store)
    first = policy.recall("What should I have for dinner?", actor_id="u", session_id="s")
    assert "I am vegetarian" in _texts(first)

    follow = policy.recall("yes please, do that", actor_id="u", session_id="s")
    trace = follow.trace
    assert trace.gate_p is not None and trace.gate_p < policy.thresholds["gate"]  # closed on its own
    assert trace.follow_up_p is not None and trace.follow_up_p >= policy.thresholds["follow_up"]
    assert trace.gate_open is True
    assert any("follow-up" in note for note in trace.notes)
    assert "I am vegetarian" in _texts(follow)
    assert "I use 4 spaces for indentation in Python" not in _texts(follow)
    assert policy.stats.follow_ups == 1
    assert "(1 as follow-ups)" in policy.stats.report()


def test_thanks_and_a_new_self_contained_question_stay_closed(store) -> None:
    policy = _asked_for_dinner(store)
    for n, message in enumerate(("thanks!", "What is 17 times 23?")):
        session = f"s{n}"
        policy.recall("What should I have for dinner?", actor_id="u", session_id=session)
        recall = policy.recall(message, actor_id="u", session_id=session)
        assert recall.trace.gate_open is False, message
        assert recall.trace.follow_up_p is not None and recall.trace.follow_up_p < 0.5
        assert recall.context == ""
    assert policy.stats.follow_ups == 0


def test_without_a_fresh_request_nothing_is_followed_up(store, monkeypatch) -> None:
    policy = _policy(store, follow_up_ttl_s=60)
    # no earlier turn in this conversation: the question is not even asked
    alone = policy.recall("continue", actor_id="u", session_id="s")
    assert alone.trace.gate_open is False and alone.trace.follow_up_p is None

    clock = [1000.0]
    monkeypatch.setattr(follow_up_module.time, "monotonic", lambda: clock[0])
    policy.recall("What should I have for dinner?", actor_id="u", session_id="s")
    other = policy.recall("continue", actor_id="u", session_id="another")
    assert other.trace.gate_open is False and other.trace.follow_up_p is None
    clock[0] += 61
    late = policy.recall("go on", actor_id="u", session_id="s")
    assert late.trace.gate_open is False and late.trace.follow_up_p is None


def test_follow_ups_chain_to_the_request_not_to_each_other(store) -> None:
    policy = _asked_for_dinner(store)
    for message in ("continue", "go on"):
        recall = policy.recall(message, actor_id="u", session_id="s")
        assert recall.trace.gate_open is True, message
        assert "I am vegetarian" in _texts(recall)
    prior = policy.follow_ups.prior(("u", "s", ("/facts/u",)))
    assert prior is not None and prior.text == "What should I have for dinner?"


def test_one_actor_id_serving_many_users_keeps_a_conversation_per_namespace(store) -> None:
    # LangGraph's store adapter searches under one actor id; its namespaces name the user
    store.add_records([MemoryRecord(actor_id="u", namespace="/other/u", text="I love sushi")])
    policy = _policy(store)
    policy.recall("What should I have for dinner?", actor_id="u", namespaces=["/facts/{actorId}"])
    other_user = policy.recall("go on", actor_id="u", namespaces=["/other/{actorId}"])
    assert other_user.trace.follow_up_p is None and other_user.trace.gate_open is False


def test_the_decision_cache_never_serves_answers_without_the_follow_up_question(store) -> None:
    policy = _policy(store)
    policy.recall("continue", actor_id="u", session_id="s")  # cached without the question
    policy.recall("What should I have for dinner?", actor_id="u", session_id="s")
    again = policy.recall("continue", actor_id="u", session_id="s")
    assert not again.trace.cache_hit
    assert again.trace.follow_up_p is not None and again.trace.gate_open is True


@pytest.mark.asyncio
async def test_arecall_follows_up_too(store) -> None:
    policy = _policy(store)
    await policy.arecall("What should I have for dinner?", actor_id="u")
    follow = await policy.arecall("go on", actor_id="u")
    assert follow.trace.gate_open is True and "I am vegetarian" in _texts(follow)


def test_off_with_zero_conversations_and_for_the_stock_arm(store) -> None:
    for policy in (_policy(store, follow_up_conversations=0), _policy(store, decider=None)):
        assert not policy.follow_ups.enabled
        policy.recall("What should I have for dinner?", actor_id="u")
        assert policy.recall("go on", actor_id="u").trace.follow_up_p is None


def test_bad_options_are_usage_errors(store) -> None:
    with pytest.raises(UsageError, match="follow_up_ttl_s"):
        _policy(store, follow_up_ttl_s=-1)


# ---- only where the threshold was measured, fitted or given ------------------------------------
def recording_decider() -> ScriptedDecider:
    """Opens the gate on one message, says every other one is a follow-up, keeps every record (a
    backend with no measured follow-up threshold)."""
    return ScriptedDecider({"What should I have for dinner?": 1.0}, 1.0, follow_up=1.0, name="recording")


def asked(decider: ScriptedDecider) -> list[list[str]]:
    return [list(call.questions) for call in decider.calls]


def test_a_backend_without_a_measured_threshold_is_never_asked(store) -> None:
    decider = recording_decider()
    policy = _policy(store, decider=decider)
    assert "follow_up" not in policy.thresholds and not policy.follow_ups.enabled
    policy.recall("What should I have for dinner?", actor_id="u")
    assert policy.recall("go on", actor_id="u").trace.gate_open is False
    assert all("follow_up" not in names for names in asked(decider))
    assert not any("follow_up" in u for u in policy.stats.unmeasured_thresholds)


def test_a_given_threshold_turns_it_on_for_any_backend(store) -> None:
    decider = recording_decider()
    policy = _policy(store, decider=decider, follow_up_threshold=0.5)
    assert policy.threshold_sources["follow_up"] == "argument"
    policy.recall("What should I have for dinner?", actor_id="u")
    follow = policy.recall("go on", actor_id="u")
    assert follow.trace.gate_open is True and follow.trace.follow_up_p == 1.0
    gate_calls = [names for names in asked(decider) if "gate" in names]
    assert "follow_up" not in gate_calls[0] and "follow_up" in gate_calls[1]  # one call per turn
    judged_as = [c for c in follow.trace.candidates]
    assert judged_as and all(c.kept for c in judged_as)


# ---- the shipped threshold and its data ---------------------------------------------------------
def _labels(split: str) -> list[dict[str, Any]]:
    text = resources.files(f"recallwise.data.{split}").joinpath("follow_up_labels.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_measured_sets_do_not_repeat_the_example_bank() -> None:
    from recallwise.policy.wording import follow_up_examples

    bank = {e.state.lower() for e in follow_up_examples()}
    dev = {r["text"].lower() for r in _labels("dev")}
    heldout = {r["text"].lower() for r in _labels("heldout")}
    assert not (bank & dev) and not (bank & heldout) and not (dev & heldout)


def test_the_shipped_threshold_is_the_tune_fit_on_dev() -> None:
    from recallwise.deciders.thresholds import default_threshold

    code, out, err = run_cli("tune", "follow-up", "--labels", "builtin:dev", "--json")
    assert code == 0 and err == ""
    body = json.loads(out)
    assert list(body["candidates"]) == ["shipped", "plain", "criteria"]
    shipped = body["candidates"]["shipped"]
    assert shipped["best_accuracy"] == 1.0 and shipped["auc"] == 1.0
    shipped_threshold = default_threshold("embedded", "follow_up").value
    assert shipped_threshold == pytest.approx(shipped["best_threshold"], abs=0.001)
    assert shipped["accuracy_at_configured"] == 1.0
    # the examples earn their place: the wording without them separates worse
    assert shipped["auc"] > body["candidates"]["criteria"]["auc"] > body["candidates"]["plain"]["auc"]


def test_tune_follow_up_writes_the_follow_up_role_and_refuses_heldout(tmp_path, store) -> None:
    from recallwise.policy.config import read_config

    path = tmp_path / "thresholds.json"
    code, out, _ = run_cli("tune", "follow-up", "--labels", "builtin:dev", "--write-config", str(path))
    assert code == 0 and "tune follow-up: embedded on builtin:dev" in out
    fitted = read_config(path).get("embedded", "follow_up")
    assert fitted is not None and fitted.value == pytest.approx(0.5652, abs=0.001)
    policy = recallwise.RecallPolicy.from_config(path, store, namespaces=["/facts/{actorId}"])
    assert policy.threshold_sources["follow_up"].startswith("config")

    heldout = ("--labels", "builtin:heldout", "--write-config", str(path))
    code, _, err = run_cli("tune", "follow-up", *heldout)
    assert code == 2 and "builtin:dev" in err
    code, _, err = run_cli("tune", "follow-up", "--labels", "builtin:seed")
    assert code == 2 and "follow_up_labels.jsonl" in err


def test_the_trace_says_the_follow_up_question_was_asked_when_the_gate_opened_anyway(store) -> None:
    decider = ScriptedDecider(gate=0.9, follow_up=0.2)
    policy = _policy(store, decider=decider, follow_up_threshold=0.5)
    assert policy.recall("dinner ideas?", actor_id="u", session_id="s").trace.follow_up_p is None  # not asked
    again = policy.recall("and for lunch?", actor_id="u", session_id="s")
    assert again.trace.gate_open is True and again.trace.follow_up_p == pytest.approx(0.2)
    assert policy.stats.follow_ups == 0  # it opened on its own merit, not as a follow-up
