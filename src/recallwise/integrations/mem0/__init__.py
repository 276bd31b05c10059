"""mem0: a gate in front of ``Memory`` / ``AsyncMemory`` / ``MemoryClient`` / ``AsyncMemoryClient``.

>>> from mem0 import Memory
>>> from recallwise.integrations.mem0 import GatedMem0
>>> memory = GatedMem0(Memory())                   # the one line that changes
>>> memory.search("I'd like a drink", filters={"user_id": "u1"}, top_k=10)
{'results': [...]}                                  # mem0's own items, scores untouched, kept ones only

mem0 (``mem0ai`` 2.2) searches on every call and returns ``top_k`` memories (20 by default) above
a 0.1 score floor, whether or not any of them is any use. :class:`GatedMem0` has mem0's own
surface (``search``, ``add``, ``get_all``, ``delete`` and, through attribute access, everything
else the memory offers) and changes only ``search``:

* the gate asks first whether a memory lookup can help this query; when it closes, the answer
  is ``{"results": []}`` and mem0 is not called at all;
* when it opens, mem0 is searched with exactly the caller's arguments (``top_k``, ``filters``,
  ``threshold``, ``rerank``, ...), the judge decides which of the memories that came back belong,
  and only those come back, best first: mem0's own item dicts, scores untouched, in mem0's
  response shape (every other key of the response kept);
* the search is scoped to one actor, given as mem0 gives it: ``filters={"user_id": ...}`` (or
  ``agent_id`` / ``app_id`` / ``run_id``). Those ids are validated as recallwise validates ids
  (one id each: an operator, a list or ``"*"`` is refused, naming the field), and every memory
  mem0 returns must belong to them: a response holding anyone else's memories -- whatever the
  filter said (``OR``, ``NOT``, a store ignoring a filter) -- injects nothing and is counted as
  ``store:foreign_actor``. A top-level ``user_id=`` is refused as mem0 refuses it.

mem0 raising (its vector store, its embedder, the platform's HTTP errors) is counted in
:attr:`GatedMem0.stats` by kind (``store:RateLimitError``, ``store:timeout``; first in
``stats.report()``) and the search returns ``{"results": []}``: no memories, no traceback into the
agent. A search longer than ``store_timeout_s`` (5 s) is given up the same way, and after three
failing searches in a row mem0 is left alone for ``store_breaker_cooldown_s`` (1 s). ``decider=None``
makes the wrapper transparent (every call goes straight to mem0). :class:`AsyncGatedMem0` is the same for
``AsyncMemory`` / ``AsyncMemoryClient`` (``await memory.search(...)``).

The judge reads each memory's text with recallwise's embedder (default: the offline MiniLM),
whatever vector store and embedder mem0 itself uses; vectors are cached by text, so a memory that
comes back turn after turn is embedded once. :class:`RecallwiseEmbedding` is recallwise's embedder
as a mem0 embedder (``memory.embedding_model = RecallwiseEmbedding()``: mem0 then needs no hosted
embedding model, and the gate and mem0 share one cache), and :func:`local_memory` builds a mem0
``Memory`` that runs offline (a local qdrant directory, no LLM call with ``add(..., infer=False)``).

:class:`Mem0Searcher` is the seam underneath: a mem0 memory as a recallwise ``Searcher``, so
``RecallPolicy(Mem0Searcher(memory), namespaces=["mem0"])`` gates, judges and packs a mem0 memory
into recallwise's context block like any recallwise store (the actor id is mem0's ``user_id``).
"""

from __future__ import annotations

from ...extras import extra_imports

with extra_imports("mem0", "recallwise.integrations.mem0"):
    from .embedding import RecallwiseEmbedding, local_memory
    from .gate import AsyncGatedMem0, GatedMem0
    from .searcher import ENTITY_KEYS, Mem0Searcher

__all__ = [
    "ENTITY_KEYS",
    "AsyncGatedMem0",
    "GatedMem0",
    "Mem0Searcher",
    "RecallwiseEmbedding",
    "local_memory",
]
