"""Agent Framework's own ``Mem0ContextProvider``, gated (``GatedMem0ContextProvider``), with real objects.

A real offline mem0 ``AsyncMemory`` (a local qdrant directory, recallwise's embedder, memories added with
``infer=False``; the LLM mem0 extracts memories with in ``after_run`` is a scripted one), a real Agent
Framework ``Agent`` with a scripted chat client, turns in order in one session. Upstream's
``Mem0ContextProvider`` over the same memory is the stock arm: it searches on "Hello!" too.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import textwrap
from typing import Any

import pytest

os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("MEM0_DIR", tempfile.mkdtemp(prefix="recallwise-mem0-"))
pytest.importorskip("agent_framework_mem0")

from agent_framework import (
    Agent,
    AgentLoopMiddleware,
    BaseChatClient,
    ChatResponse,
    Message,
    SessionContext,
)
from agent_framework_mem0 import Mem0ContextProvider

from recallwise.demo import persona_records
from recallwise.integrations.agent_framework import GatedMem0ContextProvider
from recallwise.integrations.mem0 import local_memory
from recallwise.records import render_text
from recallwise.testing import ScriptedDecider

ACTOR = "demo_user"
HELLO, DINNER = "Hello!", "What should I have for dinner?"
DIET = ("vegetarian", "Vietnamese")
#: what the stock provider adds to the dinner turn and the judge leaves out (mem0's 0.1 score floor
#: already drops the flights and the code): the dog, the sparkling water
UNRELATED = ("aisle seat", "YVR", "four spaces", "Biscuit", "sparkling")
PROMPT = Mem0ContextProvider.DEFAULT_CONTEXT_PROMPT
CURRY = "The user loves Thai green curry for dinner."


class ScriptedExtractor:
    """mem0's LLM for ``add(infer=True)`` (what ``after_run`` calls): it extracts one memory, the
    user's love of green curry, when the turn's new messages state it, and none otherwise."""

    def __init__(self) -> None:
        self.calls = 0

    def generate_response(self, messages: list[dict[str, str]], **kwargs: Any) -> str:
        self.calls += 1
        prompt = "\n".join(m["content"] for m in messages if m["role"] == "user")
        new = prompt.split("## New Messages", 1)[-1].split("## Observation Date", 1)[0]
        found = [{"text": CURRY}] if "love Thai green curry" in new else []
        return json.dumps({"memory": found})


@pytest.fixture
def memory(tmp_path, minilm):
    """The demo persona in a real offline mem0 AsyncMemory; ``memory.searches`` counts its searches."""
    mem = local_memory(tmp_path / "qdrant", embedder=minilm, asynchronous=True)
    mem.llm = ScriptedExtractor()

    async def fill() -> None:
        for record in persona_records(ACTOR):
            await mem.add(render_text(record.text), user_id=ACTOR, infer=False)
        await mem.add("The other user drinks only iced matcha.", user_id="someone-else", infer=False)

    asyncio.run(fill())
    search = mem.search
    mem.searches = 0

    async def counted(*args: Any, **kwargs: Any) -> Any:
        mem.searches += 1
        return await search(*args, **kwargs)

    mem.search = counted  # the instance stays a real AsyncMemory (upstream checks isinstance)
    yield mem
    mem.vector_store.client.close()


class Scripted(BaseChatClient):
    """A chat client that answers "ok" and keeps the text of every request it got."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[str] = []

    async def _reply(self, messages: Any) -> ChatResponse:
        self.requests.append("\n".join(m.text or "" for m in messages))
        return ChatResponse(messages=[Message(role="assistant", contents=["ok"])], response_id="r")

    def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> Any:
        return self._reply(messages)


def provider(memory: Any, cls: type = GatedMem0ContextProvider, **keywords: Any) -> Any:
    return cls(mem0_client=memory, user_id=ACTOR, search_user_id=ACTOR, **keywords)


async def turns(
    memory: Any, context_provider: Any, messages: list[str], **agent: Any
) -> list[dict[str, Any]]:
    """The messages in order in one session: per turn, what the model was shown and mem0's searches."""
    client = Scripted()
    run_agent = Agent(client=client, instructions="Be brief.", context_providers=[context_provider], **agent)
    session = run_agent.create_session()
    shown = []
    for message in messages:
        requests, searches = len(client.requests), memory.searches
        await run_agent.run(message, session=session)
        shown.append({"requests": client.requests[requests:], "searches": memory.searches - searches})
    return shown


def memories_shown(request: str) -> list[str]:
    """The memory lines of the provider's context message in a model request ([] when none)."""
    if PROMPT not in request:
        return []
    block = request.split(PROMPT, 1)[1].strip("\n")
    return block.split("\nWhat should", 1)[0].split("\nHello!", 1)[0].splitlines()


def test_hello_searches_nothing_dinner_injects_the_diet_alone(memory):
    gated = provider(memory)
    hello, dinner = asyncio.run(turns(memory, gated, [HELLO, DINNER]))
    assert hello["searches"] == 0 and memories_shown(hello["requests"][0]) == []
    assert dinner["searches"] == 1  # the user partition, once
    shown = memories_shown(dinner["requests"][0])
    assert shown and any(word in line for line in shown for word in DIET), dinner["requests"][0]
    assert not any(word in line for line in shown for word in UNRELATED), shown
    assert "matcha" not in dinner["requests"][0]  # never another user's memory
    assert gated.stats.turns == 2 and gated.stats.gate_closed == 1


def test_stock_provider_searches_on_hello_and_injects_everything(memory):
    """The control: upstream's provider over the same memory recalls on "Hello!" and adds unrelated
    memories to the dinner turn; the gated one adds a part of what it adds, the diet kept."""
    hello, dinner = asyncio.run(turns(memory, provider(memory, Mem0ContextProvider), [HELLO, DINNER]))
    assert hello["searches"] == 1 and memories_shown(hello["requests"][0])
    stock = memories_shown(dinner["requests"][0])
    assert any(word in line for line in stock for word in UNRELATED), stock
    (gated,) = asyncio.run(turns(memory, provider(memory), [DINNER]))
    kept = memories_shown(gated["requests"][0])
    assert kept and set(kept) < set(stock), (kept, stock)


def test_transparent_is_upstreams_before_run_exactly(memory):
    stock = asyncio.run(turns(memory, provider(memory, Mem0ContextProvider), [HELLO, DINNER]))
    transparent = asyncio.run(turns(memory, provider(memory, decider=None), [HELLO, DINNER]))
    assert [t["searches"] for t in transparent] == [t["searches"] for t in stock] == [1, 1]
    for ours, theirs in zip(transparent, stock, strict=True):
        assert memories_shown(ours["requests"][0]) == memories_shown(theirs["requests"][0])


def test_a_failing_decider_fails_open_to_the_stock_memories_and_is_counted(memory):
    failing = provider(memory, decider=ScriptedDecider(error=RuntimeError("decider down")))
    (gated,) = asyncio.run(turns(memory, failing, [DINNER]))
    (stock,) = asyncio.run(turns(memory, provider(memory, Mem0ContextProvider), [DINNER]))
    assert failing.stats.decider_errors >= 1
    assert "decider" in failing.stats.report()
    assert gated["searches"] == 1
    assert set(memories_shown(gated["requests"][0])) == set(memories_shown(stock["requests"][0]))


def test_a_failing_search_runs_upstreams_before_run_and_is_counted(memory, monkeypatch):
    """Anything but the decider failing while deciding (here the gate's own seam) runs upstream's
    before_run for the turn: counted in fallbacks, never raised into the run."""
    gated = provider(memory)

    async def broken(message: str, keywords: dict[str, Any]) -> Any:
        raise RuntimeError("seam down")

    monkeypatch.setattr(gated, "_aask_policy", broken)
    (dinner,) = asyncio.run(turns(memory, gated, [DINNER]))
    assert gated.fallbacks == 1
    assert dinner["searches"] == 1  # upstream's own search
    (stock,) = asyncio.run(turns(memory, provider(memory, Mem0ContextProvider), [DINNER]))
    assert memories_shown(dinner["requests"][0]) == memories_shown(stock["requests"][0])
    assert any(word in line for line in memories_shown(dinner["requests"][0]) for word in UNRELATED)


def test_one_user_turn_is_one_decision_across_an_agent_loop(memory):
    """AgentLoopMiddleware runs the agent three times for one user message (its later runs' input
    is a "continue" nudge): one decision, one mem0 search, and every run is shown the diet."""

    async def three_runs(*, iteration: int, **kwargs: Any) -> bool:
        return iteration < 3

    gated = provider(memory)
    (dinner,) = asyncio.run(turns(memory, gated, [DINNER], middleware=[AgentLoopMiddleware(three_runs)]))
    assert len(dinner["requests"]) == 3
    assert dinner["searches"] == 1 and gated.stats.turns == 1
    for request in dinner["requests"]:
        assert any(word in line for line in memories_shown(request) for word in DIET), request


def test_before_run_twice_for_one_turn_decides_once(memory):
    gated = provider(memory)
    run_agent = Agent(client=Scripted(), context_providers=[gated])
    session = run_agent.create_session()

    async def twice() -> list[SessionContext]:
        contexts = []
        for _ in range(2):
            context = SessionContext(
                session_id=session.session_id, input_messages=[Message("user", [DINNER])]
            )
            await gated.before_run(agent=run_agent, session=session, context=context, state={})
            contexts.append(context)
        return contexts

    first, second = asyncio.run(twice())
    assert memory.searches == 1 and gated.stats.turns == 1
    assert first.get_messages() and [m.text for m in first.get_messages()] == [
        m.text for m in second.get_messages()
    ]


def test_after_run_stores_in_mem0_and_the_next_turn_decides_anew(memory):
    """Upstream's after_run still writes the turn to mem0 (its LLM extracts the curry); the turns
    decided so far are forgotten, so asking about dinner again reads the new memory."""
    gated = provider(memory)
    first, _told, again = asyncio.run(
        turns(memory, gated, [DINNER, "By the way, I love Thai green curry.", DINNER])
    )
    assert memory.llm.calls == 3  # one extraction per run
    assert "curry" not in first["requests"][0]
    assert again["searches"] == 1 and gated.stats.turns == 3
    assert CURRY in memories_shown(again["requests"][0]), again["requests"][0]


def test_missing_retrieval_scope_is_upstreams_warning_and_no_search(memory, caplog):
    gated = GatedMem0ContextProvider(mem0_client=memory, user_id=ACTOR)
    (dinner,) = asyncio.run(turns(memory, gated, [DINNER]))
    assert dinner["searches"] == 0 and memories_shown(dinner["requests"][0]) == []
    assert "no retrieval scope" in caplog.text


def test_gate_keywords_are_checked_before_anything_is_built(memory):
    with pytest.raises(TypeError, match="decidr"):
        provider(memory, decidr=None)
    with pytest.raises(ValueError, match="top_k"):
        provider(memory, top_k=0)


def test_without_the_extra_the_store_provider_imports_and_the_mem0_one_names_its_extra():
    """On an install with [agent-framework] alone (agent-framework-mem0 and mem0 refused here),
    GatedContextProvider imports and GatedMem0ContextProvider is one line naming its extra."""
    script = textwrap.dedent(
        """
        import sys

        class Refuse:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("agent_framework_mem0", "mem0"):
                    raise ModuleNotFoundError(f"No module named {name!r}", name=name)
                return None

        sys.meta_path.insert(0, Refuse())
        from recallwise.integrations.agent_framework import GatedContextProvider
        try:
            from recallwise.integrations.agent_framework import GatedMem0ContextProvider
        except ImportError as exc:
            print(exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pip install 'recallwise[agent-framework-mem0]'" in done.stdout, done.stdout


def test_each_partition_is_searched_on_its_own_as_upstream_does(memory):
    """search_user_id and search_agent_id: two mem0 searches when the gate opens (upstream's two
    partitions, neither ANDed with the other), none on "Hello!"; the agent-wide memory is judged too."""

    async def add_agent_memory() -> None:
        await memory.add("The kitchen serves vegetarian pho on Fridays.", agent_id="chef", infer=False)

    asyncio.run(add_agent_memory())
    both = {"agent_id": "chef", "search_agent_id": "chef"}
    gated_hello, gated_dinner = asyncio.run(turns(memory, provider(memory, **both), [HELLO, DINNER]))
    (stock,) = asyncio.run(turns(memory, provider(memory, Mem0ContextProvider, **both), [DINNER]))
    assert gated_hello["searches"] == 0 and gated_dinner["searches"] == stock["searches"] == 2
    kept, everything = memories_shown(gated_dinner["requests"][0]), memories_shown(stock["requests"][0])
    assert "The kitchen serves vegetarian pho on Fridays." in everything
    assert kept and set(kept) < set(everything), (kept, everything)
