"""Fitted thresholds on disk, and a policy that uses them (argument > config > default)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from recallwise import MemoryRecord, RecallPolicy
from recallwise.errors import UsageError
from recallwise.policy.config import CONFIG_ENV, FittedThreshold, read_config, write_config
from recallwise.testing import ScriptedDecider
from recallwise.tuning import parse_labels, tune_gate

# A decider whose gate probability is a fixed property of each message, so the fitted
# threshold and its effect can be stated exactly.
GATE_P = {
    "Order my usual lunch": 0.92,
    "Plan my weekend around my kids": 0.88,
    "Book my usual seat": 0.81,
    "What is the capital of Peru?": 0.64,
    "Translate hello into Spanish": 0.60,
    "Explain recursion": 0.55,
    # not in the labels: the message the fitted threshold is tried on
    "How tall is Everest?": 0.62,
}
LABELS = parse_labels(
    "\n".join(
        json.dumps({"text": text, "label": p > 0.7})
        for text, p in GATE_P.items()
        if text != "How tall is Everest?"
    ),
    "user_labels.jsonl",
)


def fixed_gate() -> ScriptedDecider:
    """The gate's probability from ``GATE_P`` for every question about the message; records 0.9."""
    return ScriptedDecider(gate=GATE_P, judge=0.9, name="fixedgate")


@pytest.fixture
def store_with_a_fact(store: Any) -> Any:
    store.add_records([MemoryRecord(actor_id="u", namespace="/facts/u", text="The user lives in Lima.")])
    return store


@pytest.fixture
def fitted_config(tmp_path: Path) -> Path:
    """The tuner's fit on the user's labels, written as --write-config would write it."""
    from recallwise.tuning import default_candidates

    result = tune_gate(fixed_gate(), LABELS, default_candidates("gate")[:1])
    shipped = result.candidate("shipped")
    assert shipped.metrics["best_accuracy"] == 1.0
    path = tmp_path / "thresholds.json"
    write_config(
        path,
        result.backend,
        {
            "gate": FittedThreshold(
                float(shipped.metrics["best_threshold"] or 0), LABELS.source, LABELS.sha256, 6
            )
        },
    )
    return path


def test_a_fitted_config_changes_what_the_policy_does(store_with_a_fact: Any, fitted_config: Path) -> None:
    stock_thresholds = RecallPolicy(store_with_a_fact, decider=fixed_gate())
    tuned = RecallPolicy.from_config(fitted_config, store_with_a_fact, decider=fixed_gate())
    assert 0.64 < tuned.thresholds["gate"] < 0.81  # fitted between the classes
    message = "How tall is Everest?"  # p = 0.62: not one of the labelled messages
    before = stock_thresholds.recall(message, actor_id="u")
    after = tuned.recall(message, actor_id="u")
    assert before.trace.gate_open and before.records  # 0.62 >= the unmeasured default 0.5
    assert not after.trace.gate_open and after.context == ""
    assert tuned.recall("Order my usual lunch", actor_id="u").trace.gate_open
    # The unmeasured default is reported; the fitted threshold is not.
    assert "fixedgate:gate" in stock_thresholds.stats.unmeasured_thresholds
    assert "fixedgate:gate" in stock_thresholds.stats.report()
    assert "fixedgate:gate" not in tuned.stats.unmeasured_thresholds
    assert tuned.stats.unmeasured_thresholds == ["fixedgate:judge", "fixedgate:judge_relative"]
    assert tuned.threshold_sources["gate"] == f"config {fitted_config}"


def test_the_environment_variable_loads_the_same_config(
    store_with_a_fact: Any, fitted_config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(fitted_config))
    policy = RecallPolicy(store_with_a_fact, decider=fixed_gate())
    assert policy.thresholds["gate"] == read_config(fitted_config).get("fixedgate", "gate").value  # type: ignore[union-attr]
    assert not policy.recall("How tall is Everest?", actor_id="u").trace.gate_open


def test_an_explicit_argument_beats_the_config(store_with_a_fact: Any, fitted_config: Path) -> None:
    policy = RecallPolicy.from_config(
        fitted_config, store_with_a_fact, decider=fixed_gate(), gate_threshold=0.3
    )
    assert policy.thresholds["gate"] == 0.3 and policy.threshold_sources["gate"] == "argument"
    assert policy.recall("How tall is Everest?", actor_id="u").trace.gate_open


def test_a_config_for_another_backend_does_not_apply(store_with_a_fact: Any, tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    write_config(path, "sparrow", {"gate": FittedThreshold(0.9, "x", "0" * 64, 10)})
    policy = RecallPolicy.from_config(path, store_with_a_fact, decider=fixed_gate())
    assert policy.thresholds["gate"] == 0.5 and policy.threshold_sources["gate"] == "default"
    assert "fixedgate:gate" in policy.stats.unmeasured_thresholds


def test_write_config_merges_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "t.json"
    write_config(path, "embedded", {"gate": FittedThreshold(0.4, "a.jsonl", "a" * 64, 100, "2026-01-01")})
    write_config(path, "sparrow", {"judge": FittedThreshold(0.3, "b.json", "b" * 64, 50, "2026-01-02")})
    write_config(path, "embedded", {"judge_relative": FittedThreshold(0.2, "c.json", "c" * 64, 60)})
    config = read_config(path)
    assert config.get("embedded", "gate") == FittedThreshold(0.4, "a.jsonl", "a" * 64, 100, "2026-01-01")
    assert config.get("sparrow", "judge").value == 0.3  # type: ignore[union-attr]
    assert config.get("embedded", "judge_relative").n == 60  # type: ignore[union-attr]
    assert json.loads(path.read_text())["format"] == "recallwise-thresholds/1"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"thresholds": {}}, "not a recallwise threshold config"),
        ({"format": "recallwise-thresholds/1", "thresholds": {"e": {"gaet": {}}}}, "['gaet']: unknown role"),
        (
            {"format": "recallwise-thresholds/1", "thresholds": {"e": {"gate": {"value": "high"}}}},
            "'value': gate_threshold='high' is not allowed: a number in [0, 1]",
        ),
        (
            {"format": "recallwise-thresholds/1", "thresholds": {"e": {"gate": {"value": 0.5, "n": 3}}}},
            "missing 'data_sha256'",
        ),
    ],
)
def test_bad_configs_name_the_file_and_entry(tmp_path: Path, document: Any, message: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    with pytest.raises(UsageError) as caught:
        read_config(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_a_broken_environment_config_is_a_clear_error(store: Any, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(CONFIG_ENV, str(tmp_path / "missing.json"))
    with pytest.raises(UsageError, match=f"{CONFIG_ENV}: .*missing.json: no such threshold config"):
        RecallPolicy(store, decider=fixed_gate())
