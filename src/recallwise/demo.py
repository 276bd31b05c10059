"""The side-by-side demo: a fictional persona's memory, eight turns, stock arm vs gated arm."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, fields
from functools import lru_cache
from importlib import resources
from typing import Any

from .deciders import Decider
from .extraction import PREFERENCE, SEMANTIC, Strategy, extract_and_store
from .policy import RecallPolicy
from .policy.stats import COUNTER_NAMES
from .records import Event, MemoryRecord
from .stores.base import MemoryStore

__all__ = [
    "DEMO_NAMESPACES",
    "DemoResult",
    "persona",
    "persona_events",
    "persona_records",
    "run_demo",
    "seed_persona",
]

DEMO_NAMESPACES = ["/facts/{actorId}", "/preferences/{actorId}"]


@lru_cache(maxsize=1)
def persona() -> dict[str, Any]:
    """The shipped fictional persona (package data ``persona.json``)."""
    text = resources.files("recallwise.data").joinpath("persona.json").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


def persona_events(actor_id: str | None = None) -> list[Event]:
    """The persona's five conversations as events, one session each, oldest first."""
    data = persona()
    actor = actor_id or data["actor_id"]
    return [
        Event(actor_id=actor, session_id=session_id, role=role.lower(), text=text)
        for session_id, turns in data["sessions"].items()
        for role, text in turns
    ]


def _persona_strategies() -> tuple[Strategy, Strategy]:
    namespaces = persona()["namespaces"]
    return Strategy(SEMANTIC, namespaces["facts"]), Strategy(PREFERENCE, namespaces["preferences"])


def persona_records(actor_id: str | None = None) -> list[MemoryRecord]:
    """The persona's long-term records as the write path builds them from its conversations.

    Prose facts in ``/facts/{actorId}`` and JSON preference blobs in
    ``/preferences/{actorId}``, extracted by the offline rules and consolidated (into a
    throwaway in-memory store; the returned records carry no embeddings).
    """
    from .embeddings import HashingEmbedder
    from .stores.sqlite import SQLiteStore

    data = persona()
    actor = actor_id or data["actor_id"]
    with SQLiteStore("sqlite://:memory:", embedder=HashingEmbedder(256)) as scratch:
        result = extract_and_store(scratch, actor, persona_events(actor), strategies=_persona_strategies())
        records = [*result.consolidation.added, *(new for _, new in result.consolidation.updated)]
    for record in records:
        record.embedding = None
    return records


def seed_persona(store: MemoryStore, actor_id: str | None = None) -> int:
    """Load the persona's conversations into ``store`` as events and build its records from them.

    The records come out of the write path (offline rule extraction + consolidation), the
    same way ``recallwise ingest`` builds them. Returns how many records were added (0 when
    the actor already had records).
    """
    data = persona()
    actor = actor_id or data["actor_id"]
    if store.list_records(actor_id=actor):
        return 0
    events = persona_events(actor)
    for event in events:
        store.create_event(event)
    result = extract_and_store(store, actor, events, strategies=_persona_strategies())
    return result.added


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
        """Every field but ``reports`` (the text reports are printed; the JSON has the figures)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "reports"}


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
    for policy in (stock, gated):  # model loads are start-up costs, not either arm's turns
        policy.warm_up()
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
