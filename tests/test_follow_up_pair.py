"""Follow-ups decided on the pair (issue 49, part 1): the shipped follow-up head, through a default
policy over a real SQLite file, turns in order in one session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import recallwise
from cli_runner import run_cli
from recallwise.errors import UsageError
from recallwise.policy.follow_up import (
    FOLLOW_UP_FEATURES,
    FollowUpHead,
    PriorTurn,
    is_social,
    marker_features,
    pair_features,
    read_follow_up_head,
    shipped_follow_up_head,
    write_follow_up_head,
)
from recallwise.records import MemoryRecord
from recallwise.stores.sqlite import SQLiteStore

FACTS = [
    "The user is vegetarian and allergic to peanuts",
    "The user lives in Lisbon",
    "The user's favourite band is Radiohead",
    "The user uses 4 spaces for indentation in Python",
    "The user's dog is called Rex",
]
DINNER = "Can you book me a table at a restaurant for dinner?"


@pytest.fixture
def store(tmp_path: Path):
    s = SQLiteStore(f"sqlite:///{tmp_path / 'memory.db'}")
    s.add_records([MemoryRecord(actor_id="u", namespace="/preferences/u", text=t) for t in FACTS])
    yield s
    s.close()


def _session(store: SQLiteStore, *messages: str) -> list[recallwise.Recall]:
    policy = recallwise.RecallPolicy(store)  # the default options
    try:
        return [policy.recall(m, actor_id="u", session_id="s") for m in messages]
    finally:
        policy.close()


def test_the_shipped_head_answers_the_default_policy(store) -> None:
    head = shipped_follow_up_head()
    assert head is not None and head.embedder == "minilm-l6" and head.threshold is not None
    policy = recallwise.RecallPolicy(store)
    assert policy.follow_up_head is head
    assert policy.thresholds["follow_up"] == head.threshold
    assert "follow_up" in policy.heads and "on the pair" in " ".join(policy.default_modes)
    policy.close()


@pytest.mark.parametrize(
    "continuation",
    ["yes, for four at 7", "what about Saturday?", "make it cheaper", "continue", "and for dessert?"],
)
def test_a_continuation_carries_the_request_on(store, continuation: str) -> None:
    policy = recallwise.RecallPolicy(store)
    first = policy.recall(DINNER, actor_id="u", session_id="s")
    follow = policy.recall(continuation, actor_id="u", session_id="s")
    policy.close()
    assert first.trace.gate_open and follow.trace.gate_open
    # the head says it carries the request on; it is searched with it unless the gate opened on it
    # alone (a message the gate opens on is a request of its own, searched alone)
    assert follow.trace.follow_up_p is not None
    assert follow.trace.follow_up_p >= policy.thresholds["follow_up"], continuation
    opened_alone = follow.trace.gate_p is not None and follow.trace.gate_p >= policy.thresholds["gate"]
    assert follow.trace.follow_up is not opened_alone
    if follow.trace.follow_up:
        assert any("vegetarian" in k.record.text for k in follow.records)


@pytest.mark.parametrize(
    "new_request",
    ["what is the tallest mountain in Africa?", "write a limerick about cats", "now write me a cover letter"],
)
def test_a_new_request_never_rides_on_the_previous_one(store, new_request: str) -> None:
    first, other = _session(store, DINNER, new_request)
    assert first.trace.gate_open
    assert not other.trace.follow_up, (new_request, other.trace.follow_up_p)
    assert other.trace.follow_up_p is not None and other.trace.follow_up_p < 0.5
    # whatever the gate says of it on its own, it is not searched with the dinner request
    assert not any("follow-up" in note for note in other.trace.notes)


@pytest.mark.parametrize("social", ["Hello!", "hi there", "thanks so much!", "good morning", "bye for now"])
def test_a_greeting_thanks_or_goodbye_never_rides_on_the_request(store, social: str) -> None:
    first, other = _session(store, "What should I drink this afternoon?", social)
    assert first.trace.gate_open
    assert not other.trace.follow_up and other.trace.follow_up_p == 0.0
    assert other.context == "" and other.records == []
    assert any("greeting, thanks or goodbye" in note for note in other.trace.notes)


@pytest.mark.parametrize(
    ("text", "social"),
    [
        ("Hello!", True),
        ("Thanks for that!", True),
        ("ok great, thanks", True),
        ("thanks, and what about Saturday?", False),
        ("Hello, can you book it for four?", False),
        ("that", False),
        ("ok, go ahead", False),
    ],
)
def test_only_a_whole_greeting_thanks_or_goodbye_is_social(text: str, social: bool) -> None:
    assert is_social(text) is social
    assert not is_social("hi " * 20_000 + "book it")  # whole words, one at a time: linear


def test_a_chain_never_outlives_the_request_it_started_from(store) -> None:
    recalls = _session(store, DINNER, "what is the tallest mountain in Africa?", "continue")
    assert recalls[0].trace.gate_open and not recalls[1].trace.follow_up
    # the mountain question ended the dinner chain: "continue" has no request left to carry on
    assert not recalls[2].trace.follow_up and recalls[2].trace.follow_up_p is None
    assert recalls[2].context == ""


def test_follow_ups_chain_to_the_request_not_to_each_other(store) -> None:
    recalls = _session(store, DINNER, "continue", "go on")
    assert all(r.trace.follow_up for r in recalls[1:])
    for r in recalls[1:]:
        assert r.trace.heads.get("follow_up", "").startswith("follow-up head: shipped")
        assert any("vegetarian" in k.record.text for k in r.records)


def test_pair_features_are_what_the_head_reads() -> None:
    v = np.zeros(384)
    v[0] = 1.0
    w = np.zeros(384)
    w[1] = 1.0
    features = pair_features(
        "and for dessert?", v, PriorTurn("x", 0.0, w, 0.2), PriorTurn("y", 0.0, v, 0.9), 0.1
    )
    assert features.shape == (384 + len(FOLLOW_UP_FEATURES) - 1,)
    numbers = features[384:]
    assert numbers[0] == 0.0 and numbers[1] == 1.0  # cos to the previous message, to the request
    assert numbers[2] == pytest.approx(np.log(0.1 / 0.9))  # the gate's logit
    markers = marker_features("and for dessert?")
    assert markers[0] == 1.0 and markers[list(FOLLOW_UP_FEATURES[6:]).index("question")] == 1.0


def test_a_head_file_round_trips_and_bad_ones_are_usage_errors(tmp_path: Path) -> None:
    head = shipped_follow_up_head()
    assert head is not None
    path = write_follow_up_head(head, tmp_path / "fu.npz")
    again = read_follow_up_head(path)
    assert np.allclose(again.weights, head.weights) and again.threshold == head.threshold
    (tmp_path / "bad.npz").write_bytes(b"not a head")
    with pytest.raises(UsageError, match=r"bad\.npz"):
        read_follow_up_head(tmp_path / "bad.npz")
    with pytest.raises(UsageError, match=r"missing\.npz"):
        read_follow_up_head(tmp_path / "missing.npz")
    other = FollowUpHead("multilingual", head.weights, head.bias, head.mean, head.scale, {}, "given")
    s = SQLiteStore("sqlite://:memory:")
    with pytest.raises(UsageError, match="minilm-l6"):
        recallwise.RecallPolicy(s, follow_up_head=other)
    s.close()


def test_tune_follow_up_fit_needs_its_calibration_set(tmp_path: Path) -> None:
    done = run_cli("tune", "follow-up", "--fit", str(tmp_path), "--json")
    assert done.returncode == 2 and "--calibrate" in done.stderr and "Traceback" not in done.stderr
    none = run_cli("tune", "follow-up", "--json")
    assert none.returncode == 2 and "--fit" in none.stderr


def _conversation(cid: str, request: str, follow: str, new: str) -> dict:
    return {
        "id": cid,
        "persona": [{"id": "m1", "text": "The user is vegetarian."}],
        "turns": [
            {"text": request, "source": "t", "needs_memory": True, "follow_up": False, "records": ["m1"]},
            {"text": follow, "source": "t", "needs_memory": True, "follow_up": True, "records": ["m1"]},
            {"text": new, "source": "u", "needs_memory": False, "follow_up": False},
        ],
    }


def test_tune_follow_up_fit_writes_a_head_a_policy_loads(tmp_path: Path, store) -> None:
    import json

    rows = [
        _conversation(f"c{i}", r, f, n)
        for i, (r, f, n) in enumerate(
            [
                ("Find me a restaurant for tonight.", "In Lisbon, for two.", "What is the capital of Peru?"),
                ("I want to watch a movie.", "Something funny, please.", "Write a poem about the sea."),
                ("Play me some music.", "Yes, that one.", "How many legs does a spider have?"),
                ("Book a table for dinner.", "Make it 8 pm instead.", "Explain what a hash map is."),
            ]
        )
    ]
    for split in ("fit", "calib"):
        (tmp_path / split).mkdir()
        (tmp_path / split / "c.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
    out = tmp_path / "fu.npz"
    done = run_cli(
        "tune",
        "follow-up",
        "--fit",
        str(tmp_path / "fit"),
        "--calibrate",
        str(tmp_path / "calib"),
        "--write-head",
        str(out),
        "--json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["sets"]["fit"]["pairs"] == 8 and report["head"] == str(out)
    head = read_follow_up_head(out)
    assert head.provenance["n"] == 8 and head.threshold == report["threshold"]
    policy = recallwise.RecallPolicy(store, follow_up_head=str(out))
    assert policy.follow_up_head is not None and policy.thresholds["follow_up"] == head.threshold
    policy.close()
