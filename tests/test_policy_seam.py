"""The core seams: a foreign memory through Searcher only, guarded backends, one threshold order,
the decider base class, and the decision log's schema version."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

import recallwise
from recallwise.deciders import BaseDecider, Capabilities, DecisionHints, Reply, as_decider
from recallwise.deciders.questions import Question
from recallwise.embeddings.hashing import HashingEmbedder
from recallwise.errors import DeciderError, UsageError
from recallwise.policy import DecisionLog, RecallOptions, RecallPolicy, SearchOptions, Thresholds
from recallwise.policy.config import CONFIG_ENV, FittedThreshold, read_config, write_config
from recallwise.policy.log import LOG_SCHEMA_VERSION
from recallwise.records import MemoryRecord, SearchHit
from recallwise.stores.base import SearchRequest
from recallwise.testing import ScriptedDecider

EMBEDDER = HashingEmbedder(64)
FACTS = {
    "drinks": "The user drinks decaf oat flat whites.",
    "indent": "The user indents Python with four spaces.",
    "seat": "The user prefers an aisle seat on flights.",
}


def _hit(namespace: str, key: str, score: float, *, vector: bool) -> SearchHit:
    record = MemoryRecord(actor_id="u1", namespace=namespace, text=FACTS[key], id=key)
    if vector:
        record.embedding = EMBEDDER.embed([record.rendered])[0]
    return SearchHit(record, score)


class ForeignMemory:
    """A memory that implements the Searcher seam and nothing else (no vectors returned)."""

    local = False

    def __init__(self, *, fail: Exception | None = None) -> None:
        self.embedder = EMBEDDER
        self.calls: list[tuple[str, str | None]] = []
        self.fail = fail

    def search(self, request: SearchRequest) -> list[SearchHit]:
        self.calls.append((request.namespace, request.text))
        if self.fail is not None:
            raise self.fail
        return [_hit(request.namespace, key, 0.6, vector=False) for key in FACTS][: request.top_k]


class AsyncMemory(ForeignMemory):
    """A natively async memory: arecall must await ``asearch`` and never call ``search``."""

    def __init__(self, *, delay_s: float = 0.0) -> None:
        super().__init__()
        self.delay_s = delay_s
        self.async_calls = 0

    def search(self, request: SearchRequest) -> list[SearchHit]:
        raise AssertionError("the sync search of an async memory was called from arecall")

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        self.async_calls += 1
        await asyncio.sleep(self.delay_s)
        return [_hit(request.namespace, key, 0.6, vector=True) for key in FACTS][: request.top_k]


def drinks() -> ScriptedDecider:
    """A plain user decider: opens the gate and keeps only the drink record."""
    return ScriptedDecider(gate=0.9, judge=lambda memory: 0.9 if "decaf" in memory else 0.1)


def test_a_foreign_memory_needs_only_the_searcher_seam() -> None:
    memory = ForeignMemory()
    assert isinstance(memory, recallwise.Searcher) and not isinstance(memory, recallwise.MemoryStore)
    policy = RecallPolicy(memory, decider=drinks(), namespaces=["notes"], gate_threshold=0.5)
    recall = policy.recall("What should I drink?", actor_id="u1")
    assert memory.calls == [("notes", "What should I drink?")]
    assert [k.record.id for k in recall.records] == ["drinks"]
    assert "decaf" in recall.context and "aisle" not in recall.context
    policy.close()


def test_an_unknown_search_mode_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="unknown search mode 'sparse'"):
        SearchRequest("n", "x", mode="sparse")  # type: ignore[arg-type]


def test_search_extensions_reach_every_search_of_the_turn() -> None:
    seen: list[tuple[str, Any]] = []

    class Scoped(ForeignMemory):
        def search(self, request: SearchRequest) -> list[SearchHit]:
            seen.append((request.namespace, request.extensions.get("scope")))
            return super().search(request)

    policy = RecallPolicy(Scoped(), decider=drinks(), namespaces=["a", "b"], gate_threshold=0.5)
    policy.recall("What should I drink?", actor_id="u1", extensions={"scope": "turn-1"})
    policy.recall("What should I drink?", actor_id="u1")
    assert seen == [("a", "turn-1"), ("b", "turn-1"), ("a", None), ("b", None)]
    policy.close()


def test_records_without_vectors_are_embedded_locally_for_the_embedded_judge() -> None:
    memory = ForeignMemory()
    decider = recallwise.EmbeddedDecider(embedder=EMBEDDER)
    policy = RecallPolicy(memory, decider=decider, namespaces=["notes"], gate_threshold=0.0)
    recall = policy.recall("flat white coffee decaf oat", actor_id="u1")
    probabilities = {c.id: c.judge_p for c in recall.trace.candidates}
    assert all(p is not None for p in probabilities.values())
    assert probabilities["drinks"] == max(probabilities.values())  # type: ignore[type-var]
    policy.close()


def test_a_failing_foreign_memory_is_counted_by_its_code_and_injects_nothing() -> None:
    class Throttled(Exception):
        code = "ThrottlingException"

    policy = RecallPolicy(ForeignMemory(fail=Throttled("slow down")), decider=drinks(), namespaces=["n"])
    recall = policy.recall("What should I drink?", actor_id="u1")
    assert recall.context == ""
    assert policy.stats.errors_by_kind == {"store:ThrottlingException": 1}
    assert "store error: nothing injected this turn" in recall.trace.notes
    assert policy.stats.report().startswith("ERRORS: 1")
    policy.close()


def test_arecall_awaits_a_natively_async_memory() -> None:
    memory = AsyncMemory()
    policy = RecallPolicy(memory, decider=drinks(), namespaces=["a", "b"], gate_threshold=0.5)
    recall = asyncio.run(policy.arecall("What should I drink?", actor_id="u1"))
    assert memory.async_calls == 2 and memory.calls == []
    assert {k.record.id for k in recall.records} == {"drinks"}
    policy.close()


def test_a_slow_async_memory_hits_the_store_deadline() -> None:
    memory = AsyncMemory(delay_s=5.0)
    policy = RecallPolicy(memory, decider=drinks(), namespaces=["a"], store_timeout_s=0.2)
    recall = asyncio.run(policy.arecall("What should I drink?", actor_id="u1"))
    assert recall.context == ""
    assert policy.stats.errors_by_kind == {"store:timeout": 1}
    policy.close()


def test_options_are_checked_and_readable() -> None:
    with pytest.raises(UsageError, match="unknown RecallPolicy option"):
        RecallPolicy(ForeignMemory(), decider=None, namespaces=["n"], top_kk=3)
    with pytest.raises(UsageError, match="top_k"):
        SearchOptions(top_k=0)
    options = RecallOptions(search=SearchOptions(top_k=2))
    policy = RecallPolicy(ForeignMemory(), decider=None, namespaces=["n"], options=options)
    assert policy.options.search.top_k == 2
    policy.close()


class FixedGate(BaseDecider):
    """A backend on the base class: implements only ``_answer``. Private, not a shipped double: the
    base class (validate, cut, parse, account once) is what these tests are about."""

    name = "fixedgate"
    capabilities = Capabilities(local=True)
    max_state_chars = 10

    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        return Reply({k: 0.6 for k in questions}, usage={"input_tokens": len(state)}, warnings=["be kind"])


def test_the_threshold_order_is_argument_then_config_then_environment_then_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given = tmp_path / "given.json"
    env = tmp_path / "env.json"
    write_config(given, "fixedgate", {"gate": FittedThreshold(0.7, "g", "0" * 64, 10)})
    write_config(
        env,
        "fixedgate",
        {"gate": FittedThreshold(0.1, "e", "1" * 64, 10), "judge": FittedThreshold(0.2, "e", "1" * 64, 10)},
    )
    resolved = Thresholds.resolve(
        "fixedgate", {"judge_relative": 0.05}, [read_config(given), read_config(env)]
    )
    # the route, like gate_named, stays off unless given or fitted (no backend has a measured one)
    assert resolved.values == {"gate": 0.7, "judge": 0.2, "judge_relative": 0.05}
    assert resolved.sources == {
        "gate": f"config {given}",
        "judge": f"config {env}",
        "judge_relative": "argument",
    }
    assert resolved.unmeasured == []
    monkeypatch.setenv(CONFIG_ENV, str(env))
    policy = RecallPolicy.from_config(given, ForeignMemory(), decider=FixedGate(), namespaces=["n"])
    assert policy.thresholds["gate"] == 0.7 and policy.thresholds["judge"] == 0.2
    assert policy.threshold_sources["judge_relative"] == "default"
    assert policy.stats.unmeasured_thresholds == ["fixedgate:judge_relative"]
    policy.close()


def test_the_base_class_validates_cuts_parses_and_accounts_once() -> None:
    decider = FixedGate()
    decision = decider.decide("a long message about drinks", {"gate": {"type": "noul", "instructions": "?"}})
    assert decision.answers == {"gate": 0.6}
    assert (
        decision.warnings[0].startswith("state truncated from 27 to 10") and decision.warnings[1] == "be kind"
    )
    assert decision.usage == {"input_tokens": 10.0}
    decider.ask("hello there", {"gate": {"type": "noul", "instructions": "?"}})
    assert decider.usage() == {"calls": 2, "input_tokens": 20}
    with pytest.raises(UsageError, match="empty"):
        decider.decide("  ", {"gate": {"type": "noul", "instructions": "?"}})


def test_a_foreign_decider_that_raises_or_answers_garbage_becomes_a_typed_error() -> None:
    question = {"gate": {"type": "noul", "instructions": "?"}}
    with pytest.raises(DeciderError) as broken:
        as_decider(ScriptedDecider.failing(ConnectionResetError("peer went away"))).decide("hi", question)
    assert broken.value.kind == "unavailable"
    with pytest.raises(DeciderError, match="outside"):
        as_decider(ScriptedDecider(gate=7)).decide("hi", question)
    with pytest.raises(UsageError, match="not a decider"):
        as_decider(object())


def test_the_decision_log_records_its_schema_and_refuses_a_newer_one(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    DecisionLog(path).close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == LOG_SCHEMA_VERSION
        conn.execute("PRAGMA user_version = 7")
    with pytest.raises(UsageError, match="schema version 7"):
        DecisionLog(path)


def test_the_version_comes_from_the_package_metadata() -> None:
    from importlib import metadata

    assert recallwise.__version__ == metadata.version("recallwise")


def test_a_turn_can_ask_for_its_own_namespaces_page_size_and_cap() -> None:
    memory = ForeignMemory()
    policy = RecallPolicy(
        memory, decider=ScriptedDecider(0.9, 0.9), namespaces=["default"], gate_threshold=0.5
    )
    recall = policy.recall("drinks?", actor_id="u1", namespaces=["page-7"], top_k=2, max_records=1)
    assert memory.calls == [("page-7", "drinks?")]
    assert len(recall.trace.candidates) == 2 and len(recall.records) == 1
    assert [c.reason for c in recall.trace.candidates if not c.kept] == ["over max_records 1"]
    with pytest.raises(UsageError, match="top_k"):
        policy.recall("drinks?", actor_id="u1", top_k=0)
    policy.close()
