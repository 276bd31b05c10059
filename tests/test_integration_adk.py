"""Google ADK: GatedMemoryService over a real InMemoryMemoryService, a real Runner + Agent with
PreloadMemoryTool and load_memory driven by a scripted model (no network), and
RecallwiseMemoryService (recallwise's stores as a memory service) through the store conformance
suite's locations (a real SQLite file, a real PostgreSQL schema)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any, ClassVar

import pytest

pytest.importorskip("google.adk")

from google.adk.agents import Agent
from google.adk.events import Event
from google.adk.memory import InMemoryMemoryService
from google.adk.memory.base_memory_service import BaseMemoryService, SearchMemoryResponse
from google.adk.memory.memory_entry import MemoryEntry
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService, Session
from google.adk.tools import load_memory
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types

from recallwise import MemoryRecord, RecallStats, open_store
from recallwise.integrations.adk import GatedMemoryService, RecallwiseMemoryService, entry_text
from recallwise.stores.base import SearchRequest
from recallwise.testing import ScriptedDecider

APP, USER = "rg-test", "sam"
PAST = [
    "Hello! I'm Sam, I write Python at work.",
    "I only drink decaf oat flat whites.",
    "Thanks, and please always book me an aisle seat.",
    "My sister Lena lives in Hamburg.",
    "I'm allergic to peanuts, that one's serious.",
]
DRINK = "What should I drink this afternoon?"
#: what the judge may keep for DRINK: the flat white, and perhaps the food allergy (p 0.06 against
#: the keep threshold 0.037: food is the drink question's second life domain); never the aisle seat,
#: the sister or the Python line
DRINK_MAY_KEEP = (PAST[1], PAST[4])


def drink_memories_ok(kept: list[str]) -> bool:
    """The flat white first, and nothing DRINK_MAY_KEEP leaves out."""
    return bool(kept) and kept[0] == PAST[1] and set(kept) <= set(DRINK_MAY_KEEP)


def text_event(text: str, author: str = "user", **fields: Any) -> Event:
    role = "user" if author == "user" else "model"
    return Event(author=author, content=types.Content(role=role, parts=[types.Part(text=text)]), **fields)


def past_session(user: str = USER, app: str = APP, texts: list[str] = PAST) -> Session:
    return Session(id=uuid.uuid4().hex, app_name=app, user_id=user, events=[text_event(t) for t in texts])


class Counting(InMemoryMemoryService):
    """ADK's real in-memory service, counting searches."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        self.queries.append(query)
        return await super().search_memory(app_name=app_name, user_id=user_id, query=query)


class Broken(BaseMemoryService):
    """A memory service whose backend is down."""

    class Unavailable(ConnectionError):
        pass

    async def add_session_to_memory(self, session: Any) -> None:
        raise Broken.Unavailable("backend down")

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
        raise Broken.Unavailable("backend down")


@pytest.fixture
async def inner() -> Counting:
    service = Counting()
    await service.add_session_to_memory(past_session())
    service.queries.clear()
    return service


def texts(response: SearchMemoryResponse) -> list[str]:
    return [entry_text(m) for m in response.memories]


# ---- GatedMemoryService over ADK's InMemoryMemoryService -------------------------------------


@pytest.mark.parametrize("message", ["Hello!", "Thanks!", "What is 17 times 23?"])
async def test_chit_chat_never_reaches_the_inner_service(inner, message):
    gated = GatedMemoryService(inner)
    assert (await gated.search_memory(app_name=APP, user_id=USER, query=message)).memories == []
    assert inner.queries == []
    assert gated.stats.gate_closed == 1 and gated.last_recall.trace.gate_open is False


async def test_a_memory_question_gets_only_the_judged_memories(inner):
    stock = await inner.search_memory(app_name=APP, user_id=USER, query=DRINK)
    assert set(texts(stock)) == {PAST[0], PAST[1], PAST[4]}  # keyword overlap: "I" and "drink"
    gated = GatedMemoryService(inner)
    kept = await gated.search_memory(app_name=APP, user_id=USER, query=DRINK)
    assert drink_memories_ok(texts(kept))
    assert inner.queries == [DRINK, DRINK]
    by_id = {m.id: m for m in stock.memories}
    assert kept.memories[0] == by_id[kept.memories[0].id]  # the service's own entry, unchanged


async def test_decider_none_is_transparent(inner):
    gated = GatedMemoryService(inner, decider=None)
    for query in ["Hello!", DRINK, "Book me a flight to see my sister", ""]:
        got = await gated.search_memory(app_name=APP, user_id=USER, query=query)
        assert got == await inner.search_memory(app_name=APP, user_id=USER, query=query)
    assert gated.stats.decider is None


async def test_writes_and_the_rest_pass_through(inner):
    gated = GatedMemoryService(inner, decider=ScriptedDecider.always_open())
    await gated.add_session_to_memory(past_session(texts=["I moved to Toronto last spring."]))
    await gated.add_events_to_memory(
        app_name=APP, user_id=USER, events=[text_event("Toronto winters are cold.")]
    )
    found = await inner.search_memory(app_name=APP, user_id=USER, query="Toronto")
    assert {entry_text(m) for m in found.memories} == {
        "I moved to Toronto last spring.",
        "Toronto winters are cold.",
    }
    await gated.delete_memory(app_name=APP, user_id=USER, memory_id=found.memories[0].id)
    assert len((await inner.search_memory(app_name=APP, user_id=USER, query="Toronto")).memories) == 1
    with pytest.raises(NotImplementedError):  # the inner service's own answer
        await gated.add_memory(app_name=APP, user_id=USER, memories=[])
    assert gated._session_events is inner._session_events  # anything else is the inner service's
    with pytest.raises(TypeError):
        GatedMemoryService(object())  # type: ignore[arg-type]


async def test_a_failing_service_is_counted_and_the_turn_gets_nothing():
    gated = GatedMemoryService(Broken())
    assert (await gated.search_memory(app_name=APP, user_id=USER, query=DRINK)).memories == []
    assert "backend down" in gated.last_recall.trace.errors[0]
    assert (await gated.search_memory(app_name=APP, user_id=USER, query="Hello!")).memories == []
    assert gated.stats.errors_by_kind == {"store:unavailable": 1}
    assert gated.stats.report().splitlines()[0].startswith("ERRORS: 1 (store:unavailable x1)")
    with pytest.raises(Broken.Unavailable):  # writes are the service's business: not swallowed
        await gated.add_session_to_memory(past_session())


async def test_memories_without_text_are_skipped_and_counted():
    class WithImages(BaseMemoryService):
        async def add_session_to_memory(self, session: Any) -> None: ...

        async def search_memory(self, *, app_name: str, user_id: str, query: str) -> SearchMemoryResponse:
            picture = types.Part(inline_data=types.Blob(mime_type="image/png", data=b"png"))
            return SearchMemoryResponse(
                memories=[
                    MemoryEntry(content=types.Content(role="user", parts=[picture])),
                    MemoryEntry(content=types.Content(role="user", parts=[types.Part(text="  ")])),
                    MemoryEntry(content=types.Content(role="user", parts=[types.Part(text=PAST[1])])),
                ]
            )

    gated = GatedMemoryService(WithImages(), decider=ScriptedDecider.always_open())
    assert texts(await gated.search_memory(app_name=APP, user_id=USER, query=DRINK)) == [PAST[1]]
    assert gated.stats.records_skipped == 2 and "skipped (not text) 2" in gated.stats.report()
    assert gated.stats.errors == 0


async def test_concurrent_searches_keep_their_own_users(inner):
    await inner.add_session_to_memory(past_session(user="kim", texts=["I only drink green tea, no coffee."]))
    gated = GatedMemoryService(inner, decider=ScriptedDecider.always_open())
    sam, kim = await asyncio.gather(
        gated.search_memory(app_name=APP, user_id=USER, query=DRINK),
        gated.search_memory(app_name=APP, user_id="kim", query=DRINK),
    )
    assert PAST[1] in texts(sam) and texts(kim) == ["I only drink green tea, no coffee."]


async def test_user_ids_that_are_not_recallwise_ids_still_work():
    service = InMemoryMemoryService()
    await service.add_session_to_memory(past_session(user="Sam Smith / ops"))
    gated = GatedMemoryService(service)
    assert drink_memories_ok(
        texts(await gated.search_memory(app_name=APP, user_id="Sam Smith / ops", query=DRINK))
    )


# ---- a real Runner + Agent driven by a scripted model --------------------------------------


class Scripted(BaseLlm):
    """Replies from a script (a function call, or "ok"); records every request's text."""

    model: str = "scripted"
    seen: ClassVar[list[str]] = []
    script: ClassVar[list[types.Part]] = []

    async def generate_content_async(self, llm_request, stream=False):
        parts = [p for c in llm_request.contents for p in (c.parts or [])]
        seen = [p.text or "" for p in parts]
        seen += [str(p.function_response.response) for p in parts if p.function_response]
        type(self).seen.append("\n".join(seen))
        part = type(self).script.pop(0) if type(self).script else types.Part(text="ok")
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


async def run_turns(memory: BaseMemoryService, turns: list[str], tools: list[Any]) -> list[str]:
    """Each turn's first model request, as the model received it."""
    sessions = InMemorySessionService()
    Scripted.seen = []
    runner = Runner(
        agent=Agent(name="a", model=Scripted(), tools=tools),
        app_name=APP,
        session_service=sessions,
        memory_service=memory,
    )
    session = await sessions.create_session(app_name=APP, user_id=USER)
    firsts = []
    for message in turns:
        before = len(Scripted.seen)
        content = types.Content(role="user", parts=[types.Part(text=message)])
        async for _ in runner.run_async(user_id=USER, session_id=session.id, new_message=content):
            pass
        firsts.append("\n".join(Scripted.seen[before:]))
    return firsts


def memories_in(request: str) -> list[str]:
    return [p for p in PAST if p in request]


async def test_preload_memory_reaches_the_model_only_on_turns_that_need_it(inner):
    turns = ["Hello!", DRINK, "Thanks!", "Book me a flight to see my sister"]
    stock = [memories_in(r) for r in await run_turns(inner, turns, [PreloadMemoryTool()])]
    gated = [memories_in(r) for r in await run_turns(GatedMemoryService(inner), turns, [PreloadMemoryTool()])]
    assert stock[0] == [PAST[0]] and gated[0] == []  # "Hello!" matches the old "Hello! ..." line
    assert set(stock[1]) == {PAST[0], PAST[1], PAST[4]} and set(gated[1]) <= set(DRINK_MAY_KEEP)
    assert PAST[1] in gated[1]
    assert stock[2] == [PAST[2]] and gated[2] == []
    assert PAST[3] in gated[3] and set(gated[3]) <= set(stock[3])


async def test_load_memory_returns_only_judged_memories_to_the_model(inner):
    call = types.Part(function_call=types.FunctionCall(name="load_memory", args={"query": DRINK}))
    Scripted.script = [call]
    stock = await run_turns(inner, [DRINK], [load_memory])
    Scripted.script = [call]
    gated = await run_turns(GatedMemoryService(inner), [DRINK], [load_memory])
    assert PAST[1] in stock[0] and PAST[1] in gated[0]
    # the keyword service returns every past line sharing a word ("I", "drink"); the judge keeps
    # the flat white (and perhaps the food allergy)
    assert len([p for p in PAST if p in stock[0]]) == 3
    assert drink_memories_ok(memories_in(gated[0]))


# ---- recallwise's stores as an ADK memory service: the conformance suite, where it applies ------


@pytest.fixture
def rg(location, minilm):
    return location.open(minilm)


async def test_service_round_trip_and_search_order(rg):
    service = RecallwiseMemoryService(rg)
    session = past_session()
    session.events.append(text_event("Noted: decaf oat flat white.", author="a"))
    session.events.append(Event(author="user", content=types.Content(role="user", parts=[])))  # no text
    await service.add_session_to_memory(session)
    assert rg.count_records() == len(PAST) + 1
    found = await service.search_memory(app_name=APP, user_id=USER, query=DRINK)
    assert texts(found)[0] == PAST[1]
    scores = [m.custom_metadata["score"] for m in found.memories]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    direct = rg.search(SearchRequest("/adk/rg-test/sam", DRINK, 10, actor_id=USER))
    assert texts(found) == [h.record.text for h in direct]
    by_text = {entry_text(m): m for m in found.memories}
    reply = by_text["Noted: decaf oat flat white."]
    assert reply.author == "a" and reply.content.role == "model"
    assert by_text[PAST[1]].id == session.events[1].id and by_text[PAST[1]].timestamp
    assert (await service.search_memory(app_name=APP, user_id=USER, query="  ")).memories == []


async def test_service_users_and_apps_do_not_see_each_other(rg):
    service = RecallwiseMemoryService(rg)
    await service.add_session_to_memory(past_session(user="a", texts=["secret of a"]))
    await service.add_session_to_memory(past_session(user="b", texts=["secret of b"]))
    await service.add_session_to_memory(past_session(user="a", app="other", texts=["other app secret of a"]))
    assert texts(await service.search_memory(app_name=APP, user_id="a", query="secret")) == ["secret of a"]
    assert texts(await service.search_memory(app_name="other", user_id="a", query="secret")) == [
        "other app secret of a"
    ]
    assert (await service.search_memory(app_name=APP, user_id="c", query="secret")).memories == []


async def test_service_adding_a_session_again_changes_nothing(rg):
    service = RecallwiseMemoryService(rg)
    session = past_session()
    await service.add_session_to_memory(session)
    await service.add_session_to_memory(session)
    session.events.append(text_event("A new line."))
    await service.add_session_to_memory(session)
    assert rg.count_records() == len(PAST) + 1


async def test_service_deltas_explicit_memories_and_deletes(rg):
    service = RecallwiseMemoryService(rg, top_k=3)
    event = text_event("I moved to Toronto.")
    await service.add_events_to_memory(app_name=APP, user_id=USER, events=[event], session_id="s1")
    entry = MemoryEntry(
        id="pref-1",
        content=types.Content(role="user", parts=[types.Part(text="Prefers window seats on trains.")]),
        author="user",
        timestamp="2026-01-02T03:04:05",
        custom_metadata={"source": "crm"},
    )
    await service.add_memory(app_name=APP, user_id=USER, memories=[entry])
    found = await service.search_memory(app_name=APP, user_id=USER, query="train seat")
    first = found.memories[0]
    assert first.id == "pref-1" and first.timestamp == "2026-01-02T03:04:05"
    assert (
        first.custom_metadata["source"] == "crm" and first.custom_metadata["namespace"] == "/adk/rg-test/sam"
    )
    await service.delete_memory(app_name=APP, user_id=USER, memory_id="pref-1")
    await service.delete_memory(app_name=APP, user_id=USER, memory_id=event.id)
    await service.delete_memory(app_name=APP, user_id=USER, memory_id=None)
    assert rg.count_records() == 0


async def test_service_other_workers_writes_are_seen(location, minilm):
    a, b = RecallwiseMemoryService(location.open(minilm)), RecallwiseMemoryService(location.open(minilm))
    await a.add_session_to_memory(past_session(texts=["first"]))
    assert texts(await b.search_memory(app_name=APP, user_id=USER, query="first")) == ["first"]


async def test_service_concurrent_writers_lose_nothing(location, minilm):
    workers = [RecallwiseMemoryService(location.open(minilm)) for _ in range(2)]
    lines = {w: [f"worker {w} fact {i}" for i in range(15)] for w in range(2)}
    await asyncio.gather(
        *(workers[w].add_session_to_memory(past_session(texts=[line])) for w in range(2) for line in lines[w])
    )
    records = workers[0].store.list_records("/adk/rg-test/sam", actor_id=USER)
    assert {r.text for r in records} == set(lines[0]) | set(lines[1])


async def test_service_searches_what_recallwise_ingested(rg):
    rg.add_records([MemoryRecord(actor_id=USER, namespace=f"/facts/{USER}", text="The user is vegetarian.")])
    service = RecallwiseMemoryService(rg, also_search=["/facts/{user_id}"])
    found = await service.search_memory(app_name=APP, user_id=USER, query="what can I eat")
    assert texts(found) == ["The user is vegetarian."]


async def test_a_runner_over_recallwises_own_store_gated(tmp_path, minilm):
    store = open_store(f"sqlite:///{tmp_path}/adk.db", embedder=minilm)
    service = RecallwiseMemoryService(store)
    await service.add_session_to_memory(past_session())
    stats = RecallStats()
    turns = ["Hello!", DRINK, "Thanks!"]
    stock = [memories_in(r) for r in await run_turns(service, turns, [PreloadMemoryTool()])]
    gated = [
        memories_in(r)
        for r in await run_turns(GatedMemoryService(service, stats=stats), turns, [PreloadMemoryTool()])
    ]
    assert all(len(s) == len(PAST) for s in stock)  # a vector search with no floor returns everything
    assert gated[0] == gated[2] == [] and drink_memories_ok(gated[1])
    assert stats.gate_closed == 2 and stats.records_injected == len(gated[1])
    store.close()


def test_the_example_runs_offline(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "examples" / "adk_memory.py"
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    stock, gated = done.stdout.split("== gated\n", 1)
    assert "user: Hello!\n  model received 1:" in stock
    assert "user: Hello!\n  model received 0: []" in gated
    drink_turn = gated.split("user: What should I drink this afternoon?\n  model received ", 1)[1].split(
        "\n", 1
    )[0]
    assert drink_turn.startswith(
        ("1: ['I only drink decaf oat flat whites.'", "2: ['I only drink decaf oat flat whites.'")
    )
    assert "aisle" not in drink_turn and "Lena" not in drink_turn and "Python" not in drink_turn
    assert "gate opened 2, closed 2" in done.stdout and "OK: no errors" in done.stdout
