"""recallwise in front of a Google ADK agent's memory, fully offline.

    python examples/adk_memory.py [--store sqlite:///adk-demo.db]

A real ADK ``Runner`` and ``Agent`` with ``PreloadMemoryTool`` (which searches memory before
every model call and puts whatever comes back into the request) and a scripted model that says
which past lines it was shown. The same conversation runs twice over the same memory -- once
over the memory service as it is (stock), once over ``GatedMemoryService(service)`` -- and
prints what the model received each turn. By default the memory is ADK's
``InMemoryMemoryService`` (keyword matching); ``--store URL`` uses a recallwise store
(SQLite file, PostgreSQL) as the memory service instead (vector search).

Needs: pip install 'recallwise[adk]'. No network, no API keys.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any, ClassVar

from google.adk.agents import Agent
from google.adk.events import Event
from google.adk.memory import BaseMemoryService, InMemoryMemoryService
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.tools.preload_memory_tool import PreloadMemoryTool
from google.genai import types

import recallwise
from recallwise.integrations.adk import GatedMemoryService, RecallwiseMemoryService

APP, USER = "demo-app", "sam"
PAST = [
    "Hello! I'm Sam, I write Python at work.",
    "I only drink decaf oat flat whites.",
    "Thanks, and please always book me an aisle seat.",
    "My sister Lena lives in Hamburg.",
    "I'm allergic to peanuts, that one's serious.",
]
TURNS = ["Hello!", "What should I drink this afternoon?", "Thanks!", "Book me a flight to see my sister"]


class ScriptedModel(BaseLlm):
    """Stands in for Gemini: replies "ok" and keeps the text of every request it was sent."""

    model: str = "scripted"
    requests: ClassVar[list[str]] = []

    async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
        text = "\n".join(p.text or "" for c in llm_request.contents for p in (c.parts or []))
        type(self).requests.append(text)
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text="ok")]))


async def remember_past(memory: BaseMemoryService, sessions: InMemorySessionService) -> None:
    past = await sessions.create_session(app_name=APP, user_id=USER)
    for i, line in enumerate(PAST):
        content = types.Content(role="user", parts=[types.Part(text=line)])
        event = Event(author="user", invocation_id=f"past-{i}", content=content)
        await sessions.append_event(past, event)
    past = await sessions.get_session(app_name=APP, user_id=USER, session_id=past.id)
    await memory.add_session_to_memory(past)


async def converse(label: str, memory: BaseMemoryService, sessions: InMemorySessionService) -> None:
    runner = Runner(
        agent=Agent(name="assistant", model=ScriptedModel(), tools=[PreloadMemoryTool()]),
        app_name=APP,
        session_service=sessions,
        memory_service=memory,
    )
    session = await sessions.create_session(app_name=APP, user_id=USER)
    print(f"== {label}")
    for message in TURNS:
        before = len(ScriptedModel.requests)
        content = types.Content(role="user", parts=[types.Part(text=message)])
        async for _ in runner.run_async(user_id=USER, session_id=session.id, new_message=content):
            pass
        request = ScriptedModel.requests[before]
        shown = [line for line in PAST if line in request and "PAST_CONVERSATIONS" in request]
        print(f"user: {message}\n  model received {len(shown)}: {shown}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="a recallwise store URL (default: ADK's InMemoryMemoryService)")
    args = parser.parse_args()
    sessions = InMemorySessionService()
    memory: BaseMemoryService
    if args.store:
        memory = RecallwiseMemoryService(recallwise.open_store(args.store))
    else:
        memory = InMemoryMemoryService()
    await remember_past(memory, sessions)
    gated = GatedMemoryService(memory)
    await converse("stock", memory, sessions)
    await converse("gated", gated, sessions)
    print("== gated memory stats")
    print(gated.stats.report())


if __name__ == "__main__":
    asyncio.run(main())
