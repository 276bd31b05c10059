"""The gates of issue 51 with each framework's real objects and a scripted model, offline: LlamaIndex
(``GatedMemoryBlock`` in a real ``Memory`` under a real ``FunctionAgent``), Microsoft Agent Framework
(``GatedContextProvider`` in a real ``Agent``), the OpenAI Agents SDK (``GatedInputFilter`` as a real
``Runner``'s ``call_model_input_filter``), Agno (``GatedKnowledgeRetriever`` in a real ``Agent``) and
``recallwise hook`` (a coding agent's UserPromptSubmit hook).

For each, over a real SQLite store holding the demo persona: "Hello!" searches nothing and injects
nothing; "What should I have for dinner?" injects the diet and leaves out the flights and the code;
a failing decider falls back to the stock records and is counted; a framework that asks several
times in one user turn (a tool loop) gets one decision.
"""

from __future__ import annotations

import asyncio
import io
import json
import sys
from typing import Any

import pytest

from cli_runner import run_cli
from recallwise import open_store
from recallwise.integrations import CountingSearcher
from recallwise.testing import ScriptedDecider

ACTOR = "demo_user"
HELLO, DINNER = "Hello!", "What should I have for dinner?"
DIET = ("vegetarian", "Vietnamese")
UNRELATED = ("aisle seat", "YVR", "four spaces")


@pytest.fixture(scope="module")
def persona_url(tmp_path_factory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('persona') / 'm.db'}"
    done = run_cli("demo", "--json", "--store", url)
    assert done.returncode == 0, done.stderr
    return url


@pytest.fixture
def store(persona_url):
    counting = CountingSearcher(open_store(persona_url))
    yield counting
    counting.close()


def failing() -> ScriptedDecider:
    return ScriptedDecider(error=RuntimeError("decider down"))


def _texts(recall: Any) -> set[str]:
    """The records a turn kept (the failed-open arm searches as the gated one does, so the order
    may differ from the stock arm's; the records are the same)."""
    return {k.text for k in recall.records}


def assert_diet(shown: str) -> None:
    assert any(word in shown for word in DIET), shown[-600:]
    assert not any(word in shown for word in UNRELATED), shown[-600:]


# ---- OpenAI Agents SDK --------------------------------------------------------------------------


@pytest.fixture
def openai_agents():
    return pytest.importorskip("agents")


def _openai_model(calls: list[str], tool_first: bool = False):
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    class Scripted(Model):
        async def get_response(self, system_instructions, input, *args, **kwargs):
            calls.append(system_instructions or "")
            if tool_first and len(calls) == 1:
                call = ResponseFunctionToolCall(
                    type="function_call", call_id="c1", name="clock", arguments="{}", id="fc1"
                )
                return ModelResponse(output=[call], usage=Usage(), response_id=None)
            text = ResponseOutputText(type="output_text", text="ok", annotations=[])
            message = ResponseOutputMessage(
                id="m", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args, **kwargs):  # pragma: no cover - not streamed
            raise NotImplementedError

    return Scripted()


async def _openai_turns(openai_agents, memory, messages, tool_first=False) -> list[str]:
    from agents import Agent, RunConfig, Runner, function_tool

    @function_tool
    def clock() -> str:
        """The time."""
        return "noon"

    calls: list[str] = []
    agent = Agent(name="a", instructions="Be brief.", model=_openai_model(calls, tool_first), tools=[clock])
    config = RunConfig(call_model_input_filter=memory, tracing_disabled=True)
    history: list[Any] = []
    shown = []
    for message in messages:
        before = len(calls)
        result = await Runner.run(agent, [*history, {"role": "user", "content": message}], run_config=config)
        history = result.to_input_list()
        shown.append("\n".join(calls[before:]))
    return shown


def test_openai_agents_hello_searches_nothing_dinner_gets_the_diet(openai_agents, store):
    from recallwise.integrations.openai_agents import GatedInputFilter

    memory = GatedInputFilter(store, actor_id=ACTOR)
    hello, dinner = asyncio.run(_openai_turns(openai_agents, memory, [HELLO, DINNER]))
    assert "user_context" not in hello
    assert store.searches == 2  # the dinner turn's two namespaces only
    assert_diet(dinner)
    assert memory.stats.turns == 2 and memory.stats.gate_closed == 1


def test_openai_agents_one_decision_per_user_turn_across_a_tool_loop(openai_agents, store):
    from recallwise.integrations.openai_agents import GatedInputFilter

    memory = GatedInputFilter(store, actor_id=ACTOR)
    (dinner,) = asyncio.run(_openai_turns(openai_agents, memory, [DINNER], tool_first=True))
    assert dinner.count("<user_context>") == 2  # both model calls of the turn see it
    assert memory.stats.turns == 1 and store.searches == 2


def test_openai_agents_failing_decider_falls_back_to_the_stock_records(openai_agents, store, persona_url):
    from recallwise.integrations.openai_agents import GatedInputFilter

    memory = GatedInputFilter(store, actor_id=ACTOR, decider=failing())
    stock = GatedInputFilter(CountingSearcher(open_store(persona_url)), actor_id=ACTOR, decider=None)
    asyncio.run(_openai_turns(openai_agents, memory, [DINNER]))
    asyncio.run(_openai_turns(openai_agents, stock, [DINNER]))
    assert memory.stats.decider_errors >= 1
    assert memory.last_recall is not None and stock.last_recall is not None
    assert _texts(memory.last_recall) == _texts(stock.last_recall)


# ---- Microsoft Agent Framework -----------------------------------------------------------------


@pytest.fixture
def agent_framework():
    return pytest.importorskip("agent_framework")


async def _af_turns(memory, messages, **agent_options: Any) -> tuple[list[str], Any]:
    from agent_framework import Agent, BaseChatClient, ChatResponse, Message

    class Scripted(BaseChatClient):
        def __init__(self) -> None:
            super().__init__()
            self.requests: list[str] = []

        async def _reply(self, messages):
            self.requests.append("\n".join(m.text or "" for m in messages))
            return ChatResponse(messages=[Message(role="assistant", contents=["ok"])], response_id="r")

        def _inner_get_response(self, *, messages, stream, options, **kwargs):
            return self._reply(messages)

    client = Scripted()
    agent = Agent(client=client, instructions="Be brief.", context_providers=[memory], **agent_options)
    session = agent.create_session()
    shown = []
    for message in messages:
        before = len(client.requests)
        await agent.run(message, session=session)
        shown.append("\n".join(client.requests[before:]))
    return shown, session


def test_agent_framework_hello_searches_nothing_dinner_gets_the_diet(agent_framework, store):
    from recallwise.integrations.agent_framework import GatedContextProvider

    memory = GatedContextProvider(store, actor_id=ACTOR)
    (hello, dinner), session = asyncio.run(_af_turns(memory, [HELLO, DINNER]))
    assert "user_context" not in hello
    assert store.searches == 2
    assert_diet(dinner)
    # the session's stored history holds the two messages and replies, never the context
    assert "user_context" not in json.dumps(session.to_dict(), default=str)


def test_agent_framework_one_user_turn_is_one_decision_across_an_agent_loop(agent_framework, store):
    """AgentLoopMiddleware runs the agent three times for one user message (its later runs' input
    is a "continue" nudge): one decision, one search, and every run is shown the diet."""
    from agent_framework import AgentLoopMiddleware

    from recallwise.integrations.agent_framework import GatedContextProvider

    async def three_runs(*, iteration: int, **kwargs: Any) -> bool:
        return iteration < 3

    memory = GatedContextProvider(store, actor_id=ACTOR)
    (dinner,), _ = asyncio.run(_af_turns(memory, [DINNER], middleware=[AgentLoopMiddleware(three_runs)]))
    assert memory.stats.turns == 1 and store.searches == 2  # one turn's search of its two namespaces
    assert dinner.count("<user_context>") == 3  # each of the three runs was shown the context
    assert_diet(dinner)


def test_agent_framework_failing_decider_falls_back_to_the_stock_records(agent_framework, store, persona_url):
    from recallwise.integrations.agent_framework import GatedContextProvider

    memory = GatedContextProvider(store, actor_id=ACTOR, decider=failing())
    stock = GatedContextProvider(CountingSearcher(open_store(persona_url)), actor_id=ACTOR, decider=None)
    asyncio.run(_af_turns(memory, [DINNER]))
    asyncio.run(_af_turns(stock, [DINNER]))
    assert memory.stats.decider_errors >= 1
    assert memory.last_recall is not None and stock.last_recall is not None
    assert _texts(memory.last_recall) == _texts(stock.last_recall)


# ---- LlamaIndex ----------------------------------------------------------------------------------


@pytest.fixture
def llamaindex():
    return pytest.importorskip("llama_index.core")


async def _li_turns(block, messages) -> list[str]:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.memory import Memory

    seen: list[str] = []

    def reply(chat: Any, **kwargs: Any) -> ChatMessage:
        seen.append("\n".join(m.content or "" for m in chat))
        return ChatMessage(role="assistant", content="ok")

    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    agent = FunctionAgent(tools=[], llm=MockFunctionCallingLLM(response_generator=reply), system_prompt="Hi.")
    shown = []
    for message in messages:
        before = len(seen)
        await agent.run(message, memory=memory)
        # LlamaIndex pulls the blocks again for the same user turn (as after a round of tool calls)
        await memory.aget()
        shown.append("\n".join(seen[before:]))
    stored = await memory.aget_all()
    assert all("user_context" not in (m.content or "") for m in stored)
    return shown


def test_llamaindex_hello_searches_nothing_dinner_gets_the_diet_once(llamaindex, store):
    from recallwise.integrations.llamaindex import GatedMemoryBlock

    block = GatedMemoryBlock.over(store, actor_id=ACTOR)
    hello, dinner = asyncio.run(_li_turns(block, [HELLO, DINNER]))
    assert "user_context" not in hello
    assert_diet(dinner)
    assert store.searches == 2  # one decision per user turn, however many pulls
    assert block.gate.stats.turns == 2


def test_llamaindex_failing_decider_falls_back_to_the_stock_records(llamaindex, store, persona_url):
    from recallwise.integrations.llamaindex import GatedMemoryBlock

    block = GatedMemoryBlock.over(store, actor_id=ACTOR, decider=failing())
    stock = GatedMemoryBlock.over(CountingSearcher(open_store(persona_url)), actor_id=ACTOR, decider=None)
    asyncio.run(_li_turns(block, [DINNER]))
    asyncio.run(_li_turns(stock, [DINNER]))
    assert block.gate.stats.decider_errors >= 1
    assert _texts(block.gate.last_recall) == _texts(stock.gate.last_recall)


# ---- Agno ----------------------------------------------------------------------------------------


@pytest.fixture
def agno():
    return pytest.importorskip("agno")


def _agno_turns(memory, messages) -> list[str]:
    from agno.agent import Agent
    from agno.models.base import Model
    from agno.models.response import ModelResponse

    class Scripted(Model):
        def __init__(self) -> None:
            super().__init__(id="scripted", name="scripted", provider="scripted")
            self.requests: list[str] = []

        def invoke(self, *args, messages=None, **kwargs):
            self.requests.append("\n".join(str(m.content or "") for m in messages or []))
            return ModelResponse(role="assistant", content="ok")

        async def ainvoke(self, *args, **kwargs):
            return self.invoke(*args, **kwargs)

        def invoke_stream(self, *args, **kwargs):  # pragma: no cover
            yield self.invoke(*args, **kwargs)

        async def ainvoke_stream(self, *args, **kwargs):  # pragma: no cover
            yield self.invoke(*args, **kwargs)

        def _parse_provider_response(self, response, **kwargs):
            return response

        def _parse_provider_response_delta(self, response):
            return response

    model = Scripted()
    agent = Agent(
        model=model,
        knowledge_retriever=memory,
        add_knowledge_to_context=True,
        add_memories_to_context=False,
        telemetry=False,
    )
    shown = []
    for message in messages:
        before = len(model.requests)
        agent.run(message, user_id=ACTOR)
        shown.append("\n".join(model.requests[before:]))
    return shown


def test_agno_hello_searches_nothing_dinner_gets_the_diet(agno, store):
    from recallwise.integrations.agno import GatedKnowledgeRetriever

    memory = GatedKnowledgeRetriever(store, actor_id="someone-else")  # the run's user_id wins
    hello, dinner = _agno_turns(memory, [HELLO, DINNER])
    assert "<references>" not in hello
    assert store.searches == 2
    assert_diet(dinner)


def test_agno_failing_decider_falls_back_to_the_stock_records(agno, store, persona_url):
    from recallwise.integrations.agno import GatedKnowledgeRetriever

    memory = GatedKnowledgeRetriever(store, actor_id=ACTOR, decider=failing())
    stock = GatedKnowledgeRetriever(CountingSearcher(open_store(persona_url)), actor_id=ACTOR, decider=None)
    (gated,) = _agno_turns(memory, [DINNER])
    _agno_turns(stock, [DINNER])
    assert memory.stats.decider_errors >= 1
    assert _texts(memory.last_recall) == _texts(stock.last_recall)
    assert "aisle seat" in gated  # the stock records, unrelated ones included


# ---- the shared base ----------------------------------------------------------------------------


def test_a_decision_that_raises_runs_the_stock_behaviour_and_is_counted(store):
    from recallwise.integrations import TurnGate
    from recallwise.integrations._foreign import StoreGate

    gate = StoreGate(store, actor_id=ACTOR)
    assert isinstance(gate, TurnGate)
    assert gate.policy is not None
    gate.policy.recall = _raise  # type: ignore[method-assign]
    assert gate.decide(DINNER) is None
    assert gate.decide(DINNER) is None  # the same turn: decided (failed) once
    assert gate.fallbacks == 1


def _raise(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("boom")


def test_store_gates_refuse_what_is_not_a_recallwise_store():
    from recallwise.integrations._foreign import StoreGate

    with pytest.raises(TypeError, match="reads a recallwise store"):
        StoreGate(object(), actor_id=ACTOR)  # type: ignore[arg-type]


# ---- recallwise hook ------------------------------------------------------------------------------


def _hook(monkeypatch, payload: str, *args: str):
    monkeypatch.setattr(sys, "stdin", io.StringIO(payload))
    return run_cli("hook", *args)


def test_hook_prints_nothing_for_thanks_and_the_diet_for_dinner(monkeypatch, persona_url):
    thanks = _hook(monkeypatch, json.dumps({"prompt": "thanks!"}), "--store", persona_url, "--actor", ACTOR)
    assert thanks.returncode == 0 and thanks.stdout == ""
    dinner = _hook(
        monkeypatch,
        json.dumps({"prompt": DINNER, "session_id": "s-1", "hook_event_name": "UserPromptSubmit"}),
        "--store",
        persona_url,
        "--actor",
        ACTOR,
    )
    assert dinner.returncode == 0
    assert dinner.stdout.startswith("<user_context>")
    assert_diet(dinner.stdout)


def test_hook_json_is_claude_codes_additional_context(monkeypatch, persona_url):
    done = _hook(
        monkeypatch, json.dumps({"prompt": DINNER}), "--store", persona_url, "--actor", ACTOR, "--json"
    )
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "vegetarian" in out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    ("payload", "said"),
    [
        ("not json", "stdin is not JSON"),
        ("[1]", "JSON object"),
        ('{"session_id": "x"}', "no string 'prompt'"),
    ],
)
def test_hook_fails_open_visibly_on_bad_input(monkeypatch, persona_url, payload, said):
    done = _hook(monkeypatch, payload, "--store", persona_url, "--actor", ACTOR)
    assert done.returncode == 1  # the agents' non-blocking error: the prompt goes on
    assert done.stdout == ""
    assert said in done.stderr and "without memory" in done.stderr
    assert "Traceback" not in done.stderr


def test_hook_a_missing_store_is_a_usage_error(monkeypatch, tmp_path):
    done = _hook(
        monkeypatch, '{"prompt": "hi"}', "--store", f"sqlite:///{tmp_path / 'nope.db'}", "--actor", ACTOR
    )
    assert done.returncode == 2 and done.stdout == ""
    assert not (tmp_path / "nope.db").exists()


# ---- the examples' contract ----------------------------------------------------------------------


def _example_turns(example: str, persona_url: str, cwd: Any, *flags: str) -> dict[str, dict[str, Any]]:
    """``examples/EXAMPLE --store URL --actor ACTOR --json FLAGS`` run as a newcomer would: its turns
    by message."""
    import subprocess
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / example
    done = subprocess.run(
        [sys.executable, str(script), "--store", persona_url, "--actor", ACTOR, "--json", *flags],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return {t["message"]: t for t in json.loads(done.stdout)["turns"]}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("example", "module"),
    [
        ("llamaindex_gated.py", "llama_index.core"),
        ("agent_framework_gated.py", "agent_framework"),
        ("openai_agents_gated.py", "agents"),
        ("agno_gated.py", "agno"),
    ],
)
def test_the_example_prints_the_turns_as_one_json_object(example, module, persona_url, tmp_path):
    pytest.importorskip(module)
    turns = _example_turns(example, persona_url, tmp_path)
    assert turns[HELLO]["searches"] == 0 and turns[HELLO]["records"] == []
    assert any("vegetarian" in r for r in turns[DINNER]["records"])
    assert not any("aisle" in r for r in turns[DINNER]["records"])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("example", "flag", "module", "stock_hello_searches"),
    [
        ("agno_gated.py", "--memory-manager", "agno", 0),  # Agno reads its db: no search, all memories
        ("agent_framework_gated.py", "--mem0", "agent_framework_mem0", 1),
    ],
)
def test_the_examples_own_memory_arms_gated_against_stock(
    example, flag, module, stock_hello_searches, persona_url, tmp_path
):
    """The examples' framework-memory arms, gated and ``--stock`` (the framework's own object over the
    same memories): stock shows memories on "Hello!", gated shows none and searches nothing; on the
    dinner question gated shows the diet, a part of what stock shows, without the flights."""
    pytest.importorskip(module)

    def arm(*extra: str) -> dict[str, Any]:
        return _example_turns(example, persona_url, tmp_path, flag, *extra)

    stock, gated = arm("--stock"), arm()
    assert stock[HELLO]["searches"] == stock_hello_searches and stock[HELLO]["records"]
    assert gated[HELLO]["searches"] == 0 and gated[HELLO]["records"] == []
    kept = gated[DINNER]["records"]
    assert any("vegetarian" in r for r in kept) and not any("aisle" in r for r in kept)
    assert set(kept) < set(stock[DINNER]["records"])


# ---- LlamaIndex over its own memory: any block wrapped, the judge as a node postprocessor --------


def _vector_block(minilm, texts: list[str]):
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import Field
    from llama_index.core.memory.memory_blocks.vector import VectorMemoryBlock
    from llama_index.core.schema import TextNode
    from llama_index.core.vector_stores.types import BasePydanticVectorStore, VectorStoreQueryResult

    class MiniLM(BaseEmbedding):
        def _get_query_embedding(self, query: str) -> list[float]:
            return [float(x) for x in minilm.embed([query])[0]]

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._get_query_embedding(text)

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    class TextStore(BasePydanticVectorStore):
        """A vector store that keeps the text (LlamaIndex's SimpleVectorStore does not), counting queries."""

        stores_text: bool = True
        nodes: list[Any] = Field(default_factory=list)
        queries: int = 0

        @property
        def client(self) -> Any:
            return None

        def add(self, nodes, **kwargs):
            self.nodes.extend(nodes)
            return [n.node_id for n in nodes]

        def delete(self, ref_doc_id, **kwargs):  # pragma: no cover - unused
            pass

        def query(self, query, **kwargs):
            self.queries += 1
            import numpy as np

            q = np.asarray(query.query_embedding)
            scored = sorted(((float(np.dot(q, n.embedding)), n) for n in self.nodes), key=lambda p: -p[0])
            top = scored[: query.similarity_top_k]
            return VectorStoreQueryResult(nodes=[n for _, n in top], similarities=[s for s, _ in top])

    embed = MiniLM()
    store = TextStore()
    store.add([TextNode(text=t, embedding=embed._get_text_embedding(t)) for t in texts])
    return VectorMemoryBlock(name="past", vector_store=store, embed_model=embed, similarity_top_k=6), store


def test_llamaindex_wrapped_vector_block_is_not_pulled_on_hello_and_judged_on_dinner(llamaindex, minilm):
    from llama_index.core.base.llms.types import ChatMessage

    from recallwise.integrations.llamaindex import GatedMemoryBlock

    texts = [
        "The user is vegetarian.",
        "The user's favourite cuisine is Vietnamese.",
        "The user always books an aisle seat.",
        "The user writes mostly Python.",
    ]
    block, store = _vector_block(minilm, texts)
    gated = GatedMemoryBlock.wrapping(block, actor_id=ACTOR)
    block.node_postprocessors.append(gated.judge())

    hello = asyncio.run(gated.aget([ChatMessage(role="user", content=HELLO)]))
    assert hello == "" and store.queries == 0

    history = [ChatMessage(role="user", content=HELLO), ChatMessage(role="assistant", content="Hi!")]
    dinner_turn = [*history, ChatMessage(role="user", content=DINNER)]
    dinner = asyncio.run(gated.aget(dinner_turn))
    again = asyncio.run(gated.aget([*dinner_turn, ChatMessage(role="tool", content="noon")]))
    assert "vegetarian" in dinner and "aisle" not in dinner and "Python" not in dinner
    assert again == dinner and store.queries == 2  # one gate decision; the block itself searched each pull


def test_llamaindex_wrapped_block_transparent_and_failing_gates_pull_the_block_as_is(llamaindex, minilm):
    from llama_index.core.base.llms.types import ChatMessage

    from recallwise.integrations.llamaindex import GatedMemoryBlock

    texts = ["The user is vegetarian.", "The user always books an aisle seat."]
    block, _ = _vector_block(minilm, texts)
    stock = asyncio.run(block.aget([ChatMessage(role="user", content=HELLO)]))
    for decider in (None, failing()):
        gated = GatedMemoryBlock.wrapping(block, actor_id=ACTOR, decider=decider)
        assert asyncio.run(gated.aget([ChatMessage(role="user", content=HELLO)])) == stock
    assert gated.gate.stats.decider_errors >= 1


def test_hook_asks_a_running_service_with_serve(monkeypatch, tmp_path):
    from serve_server import persona_server

    with persona_server(tmp_path, "hooked") as server:
        thanks = _hook(
            monkeypatch, json.dumps({"prompt": "thanks!"}), "--serve", server.url, "--actor", ACTOR
        )
        assert thanks.returncode == 0 and thanks.stdout == ""
        dinner = _hook(monkeypatch, json.dumps({"prompt": DINNER}), "--serve", server.url, "--actor", ACTOR)
        assert dinner.returncode == 0 and "<user_context>" in dinner.stdout
        assert any(word in dinner.stdout for word in DIET)
    # the service gone: nothing on stdout, one line on stderr, exit 1 (the prompt goes on)
    gone = _hook(monkeypatch, json.dumps({"prompt": DINNER}), "--serve", server.url, "--actor", ACTOR)
    assert gone.returncode == 1 and gone.stdout == ""
    assert "did not answer" in gone.stderr and "Traceback" not in gone.stderr


def test_hook_needs_a_store_or_a_service(monkeypatch):
    monkeypatch.delenv("RECALLWISE_STORE", raising=False)
    done = _hook(monkeypatch, '{"prompt": "hi"}', "--actor", ACTOR)
    assert done.returncode == 2 and "--store URL (or --serve URL" in done.stderr
