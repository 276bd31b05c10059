"""recallwise in front of a LangGraph store, fully offline.

    python examples/langgraph_store.py [--store sqlite:///langgraph-demo.db]

A real LangGraph ``StateGraph`` whose ``recall`` node searches the store with the user's
message (as LangMem-style memory nodes do) and whose ``reply`` node stands in for a model: it
says which memories it was given. The same graph runs twice over the same memories -- once
over the store as it is (stock), once over ``GatedStore(store)`` -- and prints what each turn
received. By default the memories live in LangGraph's ``InMemoryStore`` with recallwise's
offline embedder as its embeddings function; ``--store URL`` puts them in a recallwise store
(SQLite file, PostgreSQL) used as a LangGraph store instead.

Needs: pip install 'recallwise[langgraph]'. No network, no API keys.
"""

from __future__ import annotations

import argparse
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

import recallwise
from recallwise.integrations.langgraph import GatedStore, RecallwiseStore, index_config

NAMESPACE = ("memories", "user-42")
MEMORIES = [
    "I'm trying to cut down on caffeine, so decaf oat flat white is my go-to now.",
    "I really can't stand sparkling water. Still water only, please.",
    "I'm vegetarian, and I'm allergic to peanuts -- that one's serious.",
    "I always book an aisle seat, I hate climbing over people.",
    "I live in Vancouver, so I usually fly out of YVR.",
    "I write mostly Python, and I strongly prefer four spaces to tabs.",
    "I have a dog called Biscuit, a very opinionated cocker spaniel.",
]
TURNS = ["Hello!", "I'd like a drink, what should I get?", "Thanks!", "I'm booking a flight next week."]


class State(TypedDict):
    message: str
    memories: list[str]
    reply: str


def recall(state: State, *, store: BaseStore) -> dict[str, Any]:
    items = store.search(NAMESPACE, query=state["message"], limit=5)
    return {"memories": [item.value["text"] for item in items]}


def reply(state: State) -> dict[str, Any]:
    shown = state["memories"]
    return {"reply": f"(saw {len(shown)} memories)" if shown else "(saw no memories)"}


def build(store: BaseStore) -> Any:
    graph = StateGraph(State)
    graph.add_node("recall", recall)
    graph.add_node("reply", reply)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "reply")
    graph.add_edge("reply", END)
    return graph.compile(store=store)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="a recallwise store URL (default: LangGraph's InMemoryStore)")
    args = parser.parse_args()
    store: BaseStore
    if args.store:
        store = RecallwiseStore(recallwise.open_store(args.store))
    else:
        store = InMemoryStore(index=index_config())
    for i, text in enumerate(MEMORIES):
        store.put(NAMESPACE, f"m{i}", {"text": text})

    gated = GatedStore(store)
    for label, graph in (("stock", build(store)), ("gated", build(gated))):
        print(f"== {label}")
        for message in TURNS:
            out = graph.invoke({"message": message, "memories": [], "reply": ""})
            print(f"user: {message}\n  graph received {len(out['memories'])}: {out['memories']}")
    print("== gated store stats")
    print(gated.stats.report())


if __name__ == "__main__":
    main()
