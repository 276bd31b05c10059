"""LangGraph: a gate in front of any ``BaseStore``, and recallwise's stores as a ``BaseStore``.

>>> from langgraph.store.memory import InMemoryStore
>>> from recallwise.integrations.langgraph import GatedStore, index_config
>>> store = GatedStore(InMemoryStore(index=index_config()))
>>> graph = builder.compile(store=store)        # nodes call store.search(ns, query=message)

:class:`GatedStore` wraps a store (``InMemoryStore``, ``PostgresStore``, any ``BaseStore``) and
passes every operation through to it, except a search with a natural-language ``query``:

* the gate asks first whether a memory lookup can help this query; when it closes, the search
  returns ``[]`` and the inner store is not asked at all;
* when it opens, the inner store is asked for ``over_fetch`` times the page
  (``over_fetch * (offset + limit)`` items, same prefix, same filter), the judge decides which
  of them belong, and the kept items come back best first -- the inner store's own
  ``SearchItem`` objects, scores untouched -- with ``offset`` / ``limit`` applied to the kept list.

A search without a query (a listing, a filter) is never gated. ``decider=None`` passes every
call straight through: the wrapper is then transparent. An inner store that fails a gated
search is counted in :attr:`GatedStore.stats` by kind and the search returns ``[]``; the error
is first in ``stats.report()``. A namespace LangGraph rejects gets LangGraph's own
``InvalidNamespaceError``.

:func:`index_config` / :func:`embeddings_function` expose recallwise's offline embedder as a
LangGraph embeddings function, so the inner store's vectors need no hosted model.

:class:`RecallwiseStore` is the other direction: a recallwise store (the embedded SQLite one,
PostgreSQL, AgentCore) used *as* a LangGraph ``BaseStore``, with LangGraph's ``put(...,
index=False)`` (stored, not embedded) and TTL (``ttl=TTLConfig(...)``, ``put(..., ttl=minutes)``,
renewal on read, ``sweep_ttl()`` and a background sweeper).
"""

# The package is split by job: ``gate`` (GatedStore), ``store`` (RecallwiseStore), ``ttl`` (expiry
# kept in a record's metadata), ``namespaces`` (paths, match conditions, filters) and ``text``
# (what an item's text is, and the embeddings function). Everything public is importable from here.
from ...extras import extra_imports

with extra_imports("langgraph", "recallwise.integrations.langgraph"):
    from .gate import GatedStore
    from .namespaces import namespace_path, namespace_tuple
    from .store import RecallwiseStore
    from .text import embeddings_function, index_config, item_text

__all__ = [
    "GatedStore",
    "RecallwiseStore",
    "embeddings_function",
    "index_config",
    "item_text",
    "namespace_path",
    "namespace_tuple",
]
