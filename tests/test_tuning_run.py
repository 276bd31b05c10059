"""Running candidates: one decider call per item, items concurrent, failures charged per candidate."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from recallwise.deciders.questions import Question
from recallwise.policy.config import FittedThreshold, write_config
from recallwise.tuning import (
    WordingCandidate,
    default_candidates,
    parse_cases,
    parse_labels,
    tune_gate,
    tune_validator,
)
from tune_figures import GATE_KEYS, VALIDATOR_KEYS

TEXTS = {
    "Order my usual lunch": (True, 0.9),
    "Plan my weekend": (True, 0.8),
    "Book my flight home": (True, 0.7),
    "What did my sister say?": (True, 0.45),
    "Hello": (False, 0.55),
    "What is 2 + 2?": (False, 0.3),
    "Thanks": (False, 0.2),
    "Define entropy": (False, 0.1),
}
LABELS = parse_labels(
    "\n".join(f'{{"text": "{t}", "label": {str(y).lower()}}}' for t, (y, _) in TEXTS.items())
)


class TableDecider:
    """Answers from a table: noul = p, "opposite" wordings 1 - p, score/choice shaped from p; a
    question whose wording has a ``fail`` marker fails for the states listed under it. Private, not
    ``recallwise.testing.ScriptedDecider``: how a tuner scores wordings (each candidate's own
    answers, one broken candidate among good ones) is what these tests are about.

    ``p(state, instructions)`` is the table: by default the gate's (``TEXTS``); :func:`judge_table`
    reads the judge's (``RELEVANCE``)."""

    def __init__(
        self,
        fail: Mapping[str, set[str]] | None = None,
        barrier: threading.Barrier | None = None,
        *,
        p: Callable[[str, str], float] = lambda state, instructions: TEXTS[state][1],
        name: str = "table",
    ):
        self.name = name
        self.p = p
        self.calls: list[tuple[str, list[str]]] = []
        self.fail = fail or {}
        self.barrier = barrier
        self._lock = threading.Lock()

    def ask(self, state: str, questions: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.calls.append((state, sorted(questions)))
        if self.barrier is not None:
            self.barrier.wait(timeout=10)
        out: dict[str, Any] = {}
        for name, q in questions.items():
            for marker, states in self.fail.items():
                if marker in q["instructions"] and state in states:
                    if marker == "GARBLED":
                        out[name] = 1.7  # outside [0, 1]: a bad response for this one question
                        break
                    raise RuntimeError(f"{marker} cannot answer {state!r}")
            else:
                p = self.p(state, q["instructions"])
                if "opposite" in q["instructions"]:
                    p = 1 - p
                if q["type"] == "score":
                    out[name] = {"probabilities": [1 - p, p]}
                elif q["type"] == "choice":
                    out[name] = {"probabilities": {"personal": p * 0.5, "memory": p * 0.5, "general": 1 - p}}
                else:
                    out[name] = p
        return out


def candidates() -> list[WordingCandidate]:
    return [
        WordingCandidate("plain", Question("noul", "needs the user?")),
        WordingCandidate(
            "inverted", Question("noul", "the opposite: answerable without the user?"), inverted=True
        ),
        WordingCandidate("graded", Question("score", "how personal?", ("no", "yes"))),
        WordingCandidate(
            "kinds",
            Question("choice", "what kind?", {"personal": "a", "memory": "b", "general": "c"}),
            positive=("personal", "memory"),
        ),
    ]


def test_every_candidate_is_asked_in_one_call_per_item() -> None:
    decider = TableDecider()
    result = tune_gate(decider, LABELS, candidates())
    assert result.decider_calls == len(TEXTS) == len(decider.calls)
    assert sorted(state for state, _ in decider.calls) == sorted(TEXTS)
    assert all(len(names) == 4 for _, names in decider.calls)
    plain = result.candidate("plain")
    assert plain.scores == pytest.approx([p for _, p in TEXTS.values()])
    # The inverted wording, flipped, and the score and choice readings all carry the same signal.
    for name in ("inverted", "graded", "kinds"):
        assert result.candidate(name).scores == pytest.approx(plain.scores)
        assert result.candidate(name).metrics == pytest.approx(plain.metrics)


def test_gate_figures() -> None:
    result = tune_gate(TableDecider(), LABELS, candidates()[:1])
    figures = result.json()["candidates"]["plain"]
    assert set(figures) == GATE_KEYS | {"errors"}
    assert figures["margin"] == pytest.approx(0.45 - 0.55)
    assert figures["auc"] == pytest.approx(15 / 16)
    assert figures["best_accuracy"] == pytest.approx(7 / 8)
    assert figures["configured_threshold"] == 0.5  # no threshold configured for this wording
    assert figures["accuracy_at_configured"] == pytest.approx(6 / 8)
    assert figures["cv_accuracy"] <= figures["best_accuracy"]
    assert figures["errors"] == 0
    assert result.json()["n"] == 8 and result.json()["backend"] == "table"


def test_items_run_concurrently() -> None:
    # Two calls must be in flight together to pass the barrier; one at a time would time out.
    decider = TableDecider(barrier=threading.Barrier(2))
    result = tune_gate(decider, LABELS, candidates(), workers=4)
    assert all(c.errors == 0 for c in result.candidates)


def test_a_failing_candidate_is_charged_its_errors_and_never_best() -> None:
    fragile = WordingCandidate("fragile", Question("noul", "FRAGILE wording"))
    decider = TableDecider(fail={"FRAGILE": {"Hello", "Thanks"}})
    result = tune_gate(decider, LABELS, [*candidates()[:1], fragile])
    broken = result.candidate("fragile")
    assert broken.errors == 2 and "line 5" in broken.error_samples[0]
    assert broken.scores.count(None) == 2
    # Measured only on what it answered; never scored as if it had answered.
    assert broken.metrics["auc"] == pytest.approx(1.0)
    assert result.candidate("plain").errors == 0 and None not in result.candidate("plain").scores
    assert result.best is not None and result.best.name == "plain"
    assert result.json()["candidates"]["fragile"]["errors"] == 2
    # One call per item, plus one call per candidate on the two items whose call failed.
    assert result.decider_calls == len(TEXTS) + 2 * 2


def test_a_bad_answer_to_one_question_is_charged_to_its_candidate() -> None:
    garbled = WordingCandidate("garbled", Question("noul", "GARBLED wording"))
    result = tune_gate(TableDecider(fail={"GARBLED": {"Plan my weekend"}}), LABELS, [*candidates(), garbled])
    assert result.candidate("garbled").errors == 1
    assert [c.errors for c in result.candidates[:4]] == [0, 0, 0, 0]


def test_shipped_wording_is_graded_at_the_policys_threshold(tmp_path, monkeypatch) -> None:
    shipped = default_candidates("gate")[0]
    config = tmp_path / "thresholds.json"
    write_config(config, "table", {"gate": FittedThreshold(0.75, "x.jsonl", "0" * 64, 40)})
    monkeypatch.setenv("RECALLWISE_CONFIG", str(config))
    result = tune_gate(TableDecider(), LABELS, [shipped, candidates()[0]])
    assert result.candidate("shipped").metrics["configured_threshold"] == 0.75
    assert result.candidate("shipped").configured_source.startswith(f"config {config}")
    assert result.candidate("plain").metrics["configured_threshold"] == 0.5


# ---- validator ------------------------------------------------------------------------

RECORDS = {f"r{i}": f"memory number {i}" for i in range(30)}
RELEVANCE = {("q one", f"memory number {i}"): 0.9 - 0.02 * i for i in range(30)}
RELEVANCE.update({("q two", f"memory number {i}"): 0.1 + 0.02 * i for i in range(30)})


def judge_table(fail: Mapping[str, set[str]] | None = None) -> TableDecider:
    """A :class:`TableDecider` answering each (query, memory) pair's relevance from ``RELEVANCE``."""
    return TableDecider(
        fail,
        p=lambda state, instructions: RELEVANCE[(state, instructions.split("Memory: ", 1)[1])],
        name="judge-table",
    )


def cases(n_records: int = 6) -> Any:
    keys = list(RECORDS)[:n_records]
    half = n_records // 2
    document = {
        "records": {k: RECORDS[k] for k in keys},
        "cases": [
            {"query": "q one", "relevant": keys[:half], "irrelevant": keys[half:]},
            {"query": "q two", "relevant": keys[half:], "irrelevant": keys[:half]},
        ],
    }
    import json

    return parse_cases(json.dumps(document))


def judge_candidates() -> list[WordingCandidate]:
    return [
        WordingCandidate("plain", Question("noul", "useful?")),
        WordingCandidate("inverted", Question("noul", "the opposite: useless?"), inverted=True),
        WordingCandidate("graded", Question("score", "how useful?", ("no", "yes"))),
    ]


def test_validator_asks_all_of_a_querys_records_in_one_call() -> None:
    decider = judge_table()
    result = tune_validator(decider, cases(), judge_candidates())
    assert result.decider_calls == 2 and len(decider.calls) == 2
    assert all(len(names) == 3 * 6 for _, names in decider.calls)
    plain = result.json()["candidates"]["plain"]
    assert set(plain) == VALIDATOR_KEYS | {"errors"}
    # Ranking is perfect within each query, yet no single threshold works across them ...
    assert plain["mean_auc"] == 1.0 and plain["mean_p_at_k"] == 1.0
    assert plain["margin"] < 0 and plain["best_accuracy"] < 1.0
    # ... while keeping what is near each query's best does.
    assert plain["relative_accuracy"] == 1.0 and 0.04 < plain["relative_delta"] < 0.06
    assert result.json()["candidates"]["inverted"] == plain
    ranking = result.candidate("plain").queries[0]
    assert [key for key, _, _, _ in ranking.ranked] == ["r0", "r1", "r2", "r3", "r4", "r5"]


def test_validator_splits_calls_only_when_the_question_limit_forces_it() -> None:
    decider = judge_table()
    result = tune_validator(decider, cases(30), judge_candidates())  # 3 x 30 = 90 questions a query
    assert all(len(names) <= 64 for _, names in decider.calls)
    assert result.decider_calls == 4  # two calls per query
    assert all(c.errors == 0 for c in result.candidates)
    assert result.candidate("plain").metrics["mean_auc"] == 1.0


def test_validator_errors_are_counted_per_query() -> None:
    fragile = WordingCandidate("fragile", Question("noul", "FRAGILE"))
    result = tune_validator(judge_table(fail={"FRAGILE": {"q two"}}), cases(), [*judge_candidates(), fragile])
    broken = result.candidate("fragile")
    assert broken.errors == 1 and "q two" in broken.error_samples[0]
    assert broken.metrics["mean_auc"] == 1.0  # from the query it answered
    assert result.best is not None and result.best.name != "fragile"
