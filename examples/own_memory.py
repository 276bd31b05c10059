"""Gate a memory recallwise does not know: implement ``Searcher`` and nothing else (offline).

    python examples/own_memory.py

A ``Searcher`` has an ``embedder``, says whether it is ``local``, and answers ``search(request)``
with the top ``request.top_k`` records of ``request.namespace``, best first. Here it is a list of
notes held in memory; in your code it is your vector database, your HTTP memory service, your
files. The policy embeds the message once, asks the gate, searches, and judges what came back.
"""

from __future__ import annotations

import numpy as np

import recallwise
from recallwise import MemoryRecord, SearchHit, SearchRequest
from recallwise.embeddings import default_embedder
from recallwise.records import score_from_cosine

NOTES = [
    "The user's go-to coffee order is a decaf oat flat white.",
    "The user prefers an aisle seat on flights.",
    "The user drinks sparkling water with lunch.",
    "The user's dog is called Biscuit.",
]


class NotesMemory:
    """Notes in a Python list, searched by cosine similarity."""

    local = True  # in-process: the policy calls it directly, no deadline thread

    def __init__(self, notes: list[str]) -> None:
        self.embedder = default_embedder()
        self.records = [MemoryRecord(actor_id="me", namespace="notes", text=n) for n in notes]
        self.vectors = self.embedder.embed([r.rendered for r in self.records])

    def search(self, request: SearchRequest) -> list[SearchHit]:
        if request.namespace != "notes" or request.actor_id not in (None, "me"):
            return []
        query = request.query
        vector = self.embedder.embed([query])[0] if isinstance(query, str) else np.asarray(query)
        cosines = self.vectors @ vector
        best = np.argsort(-cosines)[: request.top_k]
        return [SearchHit(self.records[i], score_from_cosine(float(cosines[i]))) for i in best]


memory = NotesMemory(NOTES)
policy = recallwise.RecallPolicy(memory, namespaces=["notes"])
for message in ("Hello!", "I'd like a drink, what should I get?"):
    recall = policy.recall(message, actor_id="me")
    kept = [k.record.text for k in recall.records]
    print(f"{message!r}: gate {'open' if recall.trace.gate_open else 'closed'}, {len(kept)} records")
    for text in kept:
        print(f"    {text}")
print(policy.stats.report())
policy.close()
