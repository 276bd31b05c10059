"""Gated memory for a CrewAI agent, offline.

    python examples/crewai_gated.py --store sqlite:///recallwise-demo.db --actor demo_user [--stock] [--json]

A real ``crewai.Agent`` with a scripted LLM (no API key, no network) and ``memory=GatedMemory(...)``:
CrewAI's own unified ``Memory`` over its own LanceDB storage (in a temporary folder), holding the
actor's records read from the recallwise store, with ``recall`` gated and judged. Two kickoffs:
"Hello!" and "What should I have for dinner?"; ``searches`` counts the searches CrewAI's storage
received. ``--stock`` runs CrewAI's own ``Memory`` (recall on every kickoff, no floor). Seed a store
first with ``recallwise demo --store URL``.

Needs: pip install 'recallwise[crewai]'.
"""

from __future__ import annotations

import os
import sys
import tempfile
from importlib.metadata import version
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from _two_turns import TURNS, arguments, report

from recallwise.extras import exit_without_extra

exit_without_extra("crewai", "examples/crewai_gated.py")

from crewai import Agent
from crewai.llms.base_llm import BaseLLM
from crewai.memory.storage.lancedb_storage import LanceDBStorage
from crewai.memory.types import MemoryRecord
from crewai.memory.unified_memory import Memory

import recallwise
from recallwise.embeddings import default_embedder
from recallwise.integrations.crewai import CrewMemoryGate, GatedMemory


class ScriptedLLM(BaseLLM):
    """Stands in for a model: answers "ok" and keeps every prompt it was sent."""

    prompts: list[str] = []

    def call(self, messages: Any, *args: Any, **kwargs: Any) -> str:
        text = (
            messages if isinstance(messages, str) else "\n".join(str(m.get("content", "")) for m in messages)
        )
        self.prompts.append(text)
        return "ok"


class CountingStorage(LanceDBStorage):
    """CrewAI's LanceDB storage, counting the searches it receives."""

    searches = 0

    def search(self, *args: Any, **kwargs: Any) -> Any:
        type(self).searches += 1
        return super().search(*args, **kwargs)


def records_of(store_url: str, actor: str) -> list[str]:
    store = recallwise.open_store(store_url)
    try:
        return [
            r.rendered
            for ns in (f"/facts/{actor}", f"/preferences/{actor}")
            for r in store.list_records(ns, actor_id=actor)
        ]
    finally:
        store.close()


def run(store_url: str, actor: str, stock: bool) -> dict[str, Any]:
    embedder = default_embedder()

    def embed(texts: list[str]) -> list[list[float]]:
        return [list(map(float, row)) for row in embedder.embed(list(texts))]

    folder = tempfile.mkdtemp(prefix="recallwise-crewai-")
    storage = CountingStorage(path=folder)
    texts = records_of(store_url, actor)
    vectors = embed(texts)
    storage.save(
        [MemoryRecord(content=t, scope="/", embedding=v) for t, v in zip(texts, vectors, strict=True)]
    )
    llm = ScriptedLLM(model="scripted")
    fields: dict[str, Any] = {"storage": storage, "embedder": embed, "llm": llm, "read_only": True}
    memory = Memory(**fields) if stock else GatedMemory(**fields, gate=CrewMemoryGate(actor_id=actor))
    agent = Agent(
        role="assistant",
        goal="help the user",
        backstory="a helpful assistant",
        llm=llm,
        memory=memory,
        verbose=False,
    )
    turns = []
    for message in TURNS:
        searches, before = CountingStorage.searches, len(llm.prompts)
        agent.kickoff(message)
        shown = "\n".join(llm.prompts[before:])
        records = [t for t in texts if t in shown]
        turns.append(
            {"message": message, "records": records, "searches": CountingStorage.searches - searches}
        )
    if not stock:
        memory.gate.close()
    return {"framework": "crewai", "version": version("crewai"), "stock": stock, "turns": turns}


def main() -> None:
    args = arguments(__doc__, "CrewAI's own Memory: recall on every kickoff")
    # CrewAI draws its progress panels on stdout (at exit too): they go to stderr, the result to stdout
    sys.stdout.flush()
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    report(run(args.store, args.actor, args.stock), as_json=args.json, out=out)


if __name__ == "__main__":
    main()
