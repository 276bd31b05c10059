"""Stock vs gated through Strands' own machinery: ``recallwise demo --via memory-manager`` and
``recallwise bench latency --via memory-manager`` (needs ``recallwise[strands]``).

A real ``strands.Agent`` (with a scripted model that records what it is shown) and a real
``MemoryManager`` over the demo persona's memory, exposed as two Strands memory stores
(:class:`~recallwise.integrations.strands.RecallwiseMemoryStore`: dense search over the facts and
preferences namespaces). The stock arm is ``MemoryManager(stores=...)`` as a Strands user writes
it (default injection: every user turn, every store, ``max_entries=5``); the gated arm wraps the
same stores in one :class:`~recallwise.integrations.strands.MemoryGate` and injects with
:func:`~recallwise.integrations.strands.gated_injection`. What each arm injected is read from the
messages the model was sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from strands import Agent
from strands.memory import MemoryEntry, MemoryManager
from strands.memory.types import SearchOptions

from ..deciders import Decider
from ..demo import DEMO_NAMESPACES, persona, seed_persona
from ..integrations.strands import RecallwiseMemoryStore, gated_injection, gated_stores
from ..policy import RecallOptions, count_tokens
from ..policy.stats import COUNTER_NAMES
from ..stores.base import MemoryStore
from ..testing import reply_model

__all__ = ["ARMS", "MemoryManagerArm", "injected_records", "run_memory_manager_demo"]

ARMS = ("stock", "gated")


def injected_records(text: str) -> list[str]:
    """The records in an injected block: Strands' default ``<memory>`` block (one ``<entry>`` per
    record) or recallwise's ``<user_context>`` block (one ``- `` line per record)."""
    records = []
    for line in text.splitlines():
        if line.startswith("<entry"):
            records.append(line[line.index(">") + 1 : line.rindex("</entry>")])
        elif line.startswith("- "):
            records.append(line[2:])
    return records


class MemoryManagerArm:
    """One arm: an agent with a MemoryManager over the persona's two namespaces of ``store``."""

    def __init__(
        self,
        store: MemoryStore,
        decider: Decider | None,
        *,
        gated: bool,
        actor_id: str,
        options: RecallOptions | None = None,
    ) -> None:
        self.inner = [
            _CountingStore(store, template, actor_id=actor_id, name=template.strip("/").split("/")[0])
            for template in DEMO_NAMESPACES
        ]
        self.injected: list[str] = []  # what was injected into the user message of each model call
        self.model = reply_model(self._seen)
        self.gate = None
        if gated:
            stores: list[Any] = gated_stores(self.inner, decider=decider, actor_id=actor_id, options=options)
            self.gate = stores[0].gate
            manager = MemoryManager(
                stores=stores, search_tool_config=False, injection=gated_injection(stores)
            )
        else:
            manager = MemoryManager(stores=list(self.inner), search_tool_config=False)
        self.agent = Agent(model=self.model, memory_manager=manager, callback_handler=None)

    def turn(self, message: str) -> dict[str, Any]:
        """Run one user turn; returns what was injected and how long the turn took."""
        before = sum(s.searches for s in self.inner)
        last = self.gate.last_recall if self.gate is not None else None
        calls = len(self.injected)
        started = time.perf_counter()
        self.agent(message)
        elapsed = (time.perf_counter() - started) * 1000.0
        injected = "\n".join(self.injected[calls:])
        recall = self.gate.last_recall if self.gate is not None else None
        return {
            "ms": elapsed,
            "searches": sum(s.searches for s in self.inner) - before,
            "injected_text": injected,
            "injected": injected_records(injected),
            "recall": recall if recall is not last else None,
        }

    def _seen(self, messages: Any) -> str:
        # Injection appends one text block to the user's message; the user's own is the first.
        blocks = messages[-1]["content"][1:]
        self.injected.append("\n".join(b["text"].strip() for b in blocks if "text" in b))
        return "ok"

    @property
    def searches(self) -> int:
        return sum(s.searches for s in self.inner)

    def history_clean(self) -> bool:
        """No injected block in the agent's durable history."""
        history = str(self.agent.messages)
        return "<memory>" not in history and "<user_context>" not in history


def run_memory_manager_demo(
    store: MemoryStore,
    decider: Decider | None,
    *,
    actor_id: str | None = None,
    turns: list[str] | None = None,
    wrap_store: Callable[[MemoryStore], MemoryStore] | None = None,
) -> dict[str, Any]:
    """The demo's turns through both arms; ``wrap_store`` (e.g. a delayed store modelling a remote
    memory service) is applied to the store both arms search."""
    data = persona()
    actor = actor_id or data["actor_id"]
    seeded = seed_persona(store, actor)
    turns = list(turns or data["demo_turns"])
    searched = wrap_store(store) if wrap_store is not None else store
    for name in ARMS:  # model loads are start-up costs, not either arm's turns: a throwaway agent
        MemoryManagerArm(store, decider, gated=name == "gated", actor_id=actor).turn(turns[0])
    arms = {arm: MemoryManagerArm(searched, decider, gated=arm == "gated", actor_id=actor) for arm in ARMS}
    per_turn: list[dict[str, Any]] = [{"turn": t} for t in turns]
    figures: dict[str, dict[str, Any]] = {}
    for name, arm in arms.items():
        started = time.perf_counter()
        texts = []
        for row, turn in zip(per_turn, turns, strict=True):
            result = arm.turn(turn)
            texts.append(result["injected_text"])
            row[name] = {
                "searched": result["searches"] > 0,
                "injected": result["injected"],
                "ms": round(result["ms"], 3),
            }
            if result["recall"] is not None:
                row[name]["gate_p"] = result["recall"].trace.gate_p
                row[name]["dropped"] = [c.text for c in result["recall"].trace.dropped]
                row[name]["errors"] = list(result["recall"].trace.errors)
        wall = (time.perf_counter() - started) * 1000.0
        injected = [r[name]["injected"] for r in per_turn]
        figures[name] = {
            "store_searches": arm.searches,
            "records_injected": sum(len(i) for i in injected),
            "context_chars": sum(len(t) for t in texts),
            "context_tokens": sum(count_tokens(t) for t in texts),
            "wall_ms": round(wall, 3),
            "history_clean": arm.history_clean(),
        }
        if arm.gate is not None:
            stats = arm.gate.stats.as_dict()
            figures[name]["gate"] = {counter: stats[counter] for counter in COUNTER_NAMES}
            figures[name]["gate"]["errors_by_kind"] = stats["errors_by_kind"]
            figures[name]["report"] = arm.gate.report()
    return {
        "via": "memory-manager",
        "turns": turns,
        "arms": figures,
        "per_turn": per_turn,
        "seeded": seeded,
        "decider": getattr(decider, "name", "none") if decider is not None else "none",
        "store": store.url,
    }


# ---- pieces --------------------------------------------------------------------------------------


class _CountingStore(RecallwiseMemoryStore):
    """Counts the searches the memory manager makes (what a hosted memory bills)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.searches = 0

    async def search(self, query: str, options: SearchOptions | None = None) -> list[MemoryEntry]:
        self.searches += 1
        return await super().search(query, options)
