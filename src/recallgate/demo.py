"""The side-by-side demo: a fictional persona's memory, eight turns, stock arm vs gated arm."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from .deciders import Decider
from .policy import RecallPolicy
from .policy.stats import COUNTER_NAMES
from .records import Event, MemoryRecord
from .stores.base import MemoryStore

__all__ = ["DEMO_NAMESPACES", "DemoResult", "persona", "run_demo", "seed_persona"]

DEMO_NAMESPACES = ["/facts/{actorId}", "/preferences/{actorId}"]


@lru_cache(maxsize=1)
def persona() -> dict[str, Any]:
    """The shipped fictional persona (package data ``persona.json``)."""
    text = resources.files("recallgate.data").joinpath("persona.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def persona_records(actor_id: str | None = None) -> list[MemoryRecord]:
    """The persona's long-term records: prose facts and JSON preference blobs."""
    data = persona()
    actor = actor_id or data["actor_id"]
    extracted = data["example_extracted_records"]
    facts_ns = data["namespaces"]["facts"].replace("{actorId}", actor)
    prefs_ns = data["namespaces"]["preferences"].replace("{actorId}", actor)
    records = [
        MemoryRecord(actor_id=actor, namespace=facts_ns, text=text, strategy="semantic")
        for text in extracted["facts (SEMANTIC, prose)"]
    ]
    records += [
        MemoryRecord(actor_id=actor, namespace=prefs_ns, text=json.dumps(blob), strategy="user_preference")
        for blob in extracted["preferences (USER_PREFERENCE, JSON)"]
    ]
    return records


def seed_persona(store: MemoryStore, actor_id: str | None = None) -> int:
    """Load the persona's conversations (as events) and records into ``store`` if it has none.

    Returns how many records were added (0 when the actor already had records).
    """
    data = persona()
    actor = actor_id or data["actor_id"]
    if store.list_records(actor_id=actor):
        return 0
    for session_id, turns in data["sessions"].items():
        for role, text in turns:
            store.create_event(Event(actor_id=actor, session_id=session_id, role=role.lower(), text=text))
    records = persona_records(actor)
    store.add_records(records)
    return len(records)


@dataclass
class DemoResult:
    turns: list[str]
    arms: dict[str, dict[str, Any]]
    per_turn: list[dict[str, Any]]
    seeded: int = 0
    decider: str = ""
    store: str = ""
    reports: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "arms": self.arms,
            "per_turn": self.per_turn,
            "seeded": self.seeded,
            "decider": self.decider,
            "store": self.store,
        }


def run_demo(
    store: MemoryStore,
    decider: Decider | None,
    *,
    actor_id: str | None = None,
    turns: list[str] | None = None,
    **policy_options: Any,
) -> DemoResult:
    """Run the demo turns through the stock arm and the gated arm over the same store."""
    data = persona()
    actor = actor_id or data["actor_id"]
    seeded = seed_persona(store, actor)
    turns = list(turns or data["demo_turns"])
    stock = RecallPolicy(store, decider=None, namespaces=DEMO_NAMESPACES, **policy_options)
    gated = RecallPolicy(store, decider=decider, namespaces=DEMO_NAMESPACES, **policy_options)
    per_turn: list[dict[str, Any]] = [{"turn": t} for t in turns]
    walls = {}
    for arm, policy in (("stock", stock), ("gated", gated)):
        started = time.perf_counter()
        for row, turn in zip(per_turn, turns, strict=True):
            recall = policy.recall(turn, actor_id=actor, session_id="demo")
            entry: dict[str, Any] = {
                "retrieved": recall.retrieved,
                "injected": [k.text for k in recall.records],
            }
            if arm == "gated":
                entry["gate_p"] = recall.trace.gate_p
                entry["dropped"] = [c.text for c in recall.trace.dropped]
                entry["errors"] = list(recall.trace.errors)
            row[arm] = entry
        walls[arm] = (time.perf_counter() - started) * 1000.0
    arms = {}
    for arm, policy in (("stock", stock), ("gated", gated)):
        stats = policy.stats.as_dict()
        arms[arm] = {name: stats[name] for name in COUNTER_NAMES}
        arms[arm]["wall_ms"] = round(walls[arm], 3)
        arms[arm]["errors_by_kind"] = stats["errors_by_kind"]
    return DemoResult(
        turns,
        arms,
        per_turn,
        seeded,
        getattr(decider, "name", "none") if decider else "none",
        store.url,
        {"stock": stock.stats.report(), "gated": gated.stats.report()},
    )
