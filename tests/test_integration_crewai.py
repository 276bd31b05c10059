"""CrewAI (``crewai`` 1.15) behind recallwise's gate: ``GatedMemory``, a subclass of CrewAI's unified
``Memory``, with CrewAI's real objects offline: a real ``Agent`` with a scripted ``BaseLLM``, CrewAI's
own LanceDB storage in a temporary folder, recallwise's MiniLM as CrewAI's embedder callable.

crewai pins ``mcp<2`` and ``openai<3``, so it is not in ``[dev]``: these tests run in their own venv
(.ci/crewai.sh, with upstream's own ``tests/memory`` under the gated subclass); elsewhere they skip.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import pytest

if importlib.util.find_spec("crewai") is not None:
    # Only where these tests run (their own venv): set at collection, the variables would reach
    # every test of the process, and the SDK then makes no spans for test_telemetry.
    os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("OTEL_SDK_DISABLED", "true")
crewai = pytest.importorskip("crewai")

from crewai import Agent  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.memory.storage.lancedb_storage import LanceDBStorage  # noqa: E402
from crewai.memory.types import MemoryRecord  # noqa: E402
from crewai.memory.unified_memory import Memory  # noqa: E402

from recallwise.demo import persona_records  # noqa: E402
from recallwise.integrations.crewai import CrewMemoryGate, GatedMemory  # noqa: E402
from recallwise.records import render_text  # noqa: E402
from recallwise.testing import ScriptedDecider  # noqa: E402

HELLO, DINNER = "Hello!", "What should I have for dinner?"
PERSONA = [render_text(r.text) for r in persona_records("demo_user")]


#: every prompt the scripted LLMs were sent
PROMPTS: list[str] = []


class ScriptedLLM(BaseLLM):
    """Answers "ok"; keeps every prompt in PROMPTS."""

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        text = (
            messages if isinstance(messages, str) else "\n".join(str(m.get("content", "")) for m in messages)
        )
        PROMPTS.append(text)
        return "ok"


class CountingStorage(LanceDBStorage):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.searches = 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        self.searches += 1
        return super().search(*args, **kwargs)


@pytest.fixture(scope="module")
def embed(minilm):
    def embed(texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in minilm.embed(list(texts))]

    return embed


@pytest.fixture
def storage(tmp_path, embed):
    store = CountingStorage(path=str(tmp_path / "lancedb"))
    store.save(
        [
            MemoryRecord(content=t, scope="/", embedding=v)
            for t, v in zip(PERSONA, embed(PERSONA), strict=True)
        ]
    )
    store.searches = 0
    return store


def memory_of(storage, embed, gate: CrewMemoryGate | None = None, stock: bool = False) -> Memory:
    fields: dict[str, Any] = {
        "storage": storage,
        "embedder": embed,
        "llm": ScriptedLLM(model="s"),
        "read_only": True,
    }
    return Memory(**fields) if stock else GatedMemory(**fields, gate=gate or CrewMemoryGate())


def kickoff(memory: Memory, message: str) -> str:
    llm = memory.llm
    agent = Agent(role="assistant", goal="help", backstory="helpful", llm=llm, memory=memory, verbose=False)
    before = len(PROMPTS)
    agent.kickoff(message)
    return "\n".join(PROMPTS[before:])


def test_hello_searches_nothing_and_dinner_gets_the_diet_not_the_flights(storage, embed):
    memory = memory_of(storage, embed)
    hello = kickoff(memory, HELLO)
    assert storage.searches == 0
    assert not any(t in hello for t in PERSONA)
    dinner = kickoff(memory, DINNER)
    assert storage.searches == 1
    assert "The user is vegetarian." in dinner
    assert "The user always books an aisle seat." not in dinner


def test_stock_crewai_recalls_on_every_kickoff(storage, embed):
    memory = memory_of(storage, embed, stock=True)
    hello = kickoff(memory, HELLO)
    assert storage.searches == 1
    assert "The user always books an aisle seat." in hello  # what the gate is for


def test_the_same_query_asks_the_gate_once_and_searches_fresh_records(storage, embed):
    decider = ScriptedDecider(gate=lambda m: 0.9 if "dinner" in m else 0.0, judge={"vegetarian": 0.9})
    gate = CrewMemoryGate(decider=decider)
    memory = memory_of(storage, embed, gate)
    first = memory.recall(DINNER, limit=5, depth="shallow")
    again = memory.recall(DINNER, limit=5, depth="shallow")
    assert (
        [m.record.content for m in first] == [m.record.content for m in again] == ["The user is vegetarian."]
    )
    assert decider.messages.count(DINNER) == 1  # the gate's answer came from the decision cache
    assert storage.searches == 2  # CrewAI writes mid-turn: each recall reads the storage again


def test_a_failing_decider_falls_back_to_crewais_records_and_is_counted(storage, embed):
    gate = CrewMemoryGate(decider=ScriptedDecider(error=RuntimeError("down")))
    gated = memory_of(storage, embed, gate).recall(DINNER, limit=5, depth="shallow")
    stock = memory_of(storage, embed, stock=True).recall(DINNER, limit=5, depth="shallow")
    assert gate.stats.decider_errors >= 1
    assert {m.record.id for m in gated} == {m.record.id for m in stock}


def test_a_transparent_gate_is_crewais_recall_exactly(storage, embed):
    gated = memory_of(storage, embed, CrewMemoryGate(decider=None)).recall(DINNER, limit=5, depth="shallow")
    stock = memory_of(storage, embed, stock=True).recall(DINNER, limit=5, depth="shallow")
    assert [m.record.id for m in gated] == [m.record.id for m in stock]


def test_the_gate_must_be_a_crew_memory_gate(storage, embed):
    with pytest.raises(TypeError, match="CrewMemoryGate"):
        GatedMemory(storage=storage, embedder=embed, llm=ScriptedLLM(model="s"), gate=object())
