"""Strands Agents over any recallwise store: a hook provider and a session manager.

>>> policy = RecallPolicy(open_store("sqlite:///memory.db"))
>>> agent = Agent(model=..., hooks=[RecallHook(policy, actor_id="u1", session_id="s1")])

:class:`RecallHook` runs the policy when a user message with text is added, and shows the
kept context to the model for the model calls of that turn only: the ``<user_context>``
block is put in front of the user's message just before each model call and taken out
right after it. The stored history (``agent.messages``, and whatever a session manager
persisted) never contains it, so context does not pile up turn after turn.

:class:`RecallSessionManager` does the same and also persists the conversation as events
in the store (restoring it when an agent starts with the same session id), and by default
runs the offline extractor after each invocation so that what the user says becomes
long-term records.

>>> stores = gated_stores(create_agentcore_memory_stores(memory_id=..., actor_id="u1", session_id="s1",
...                                                      namespaces=[{"namespace": "/facts/{actorId}"}]))
>>> agent = Agent(memory_manager=MemoryManager(stores=stores, injection=gated_injection(stores)))

``MemoryManager`` searches every store on every user turn and injects the first ``max_entries``
results in store order ("no cross-store ranking"; its own docs: "semantic similarity is not the
same as contextual usefulness"). :class:`GatedMemoryStore` wraps any object that satisfies Strands'
``MemoryStore`` protocol (``AgentCoreMemoryStore``, the Bedrock Knowledge Base store,
``FileMemoryStore``, ``TestMemoryStore``, a third party's) and is itself one:

* ``search`` asks the gate first (closed: ``[]``, and the inner store is never called); when it
  opens, the inner store is searched, every returned entry is judged in one decider call (entry
  text is embedded locally: Strands entries carry no vectors), the keep rule applies and the kept
  entries come back best first -- the very entry objects the inner store returned. This is
  :class:`~recallwise.policy.RecallPolicy` over the inner stores (through :class:`StrandsSearcher`),
  so stats, trace, decision log, failing open on decider errors, deadlines and circuit breakers
  are the policy's.
* everything else passes through: ``name``, ``description``, ``max_search_results``,
  ``writable``, ``extraction``, ``add``, ``add_messages``, ``initialize``, ``get_tools``. Only the
  optional methods the inner store really implements exist on the wrapper's type
  (``MemoryManager`` detects write sinks and tools on the *type*), so a wrapped store is
  configured exactly as the bare one would be.
* ``decider=None`` is fully transparent: every call goes straight to the inner store.

**One decision per turn.** Stores wrapped by one :class:`MemoryGate` (``gated_stores(...)`` makes
one for a list) share one policy. ``MemoryManager.search`` starts every store's ``search`` in the
same event-loop step (``asyncio.gather``); the gate collects the searches for the same query that
start in that step into one turn: the gate is asked once, the stores the manager asked are
searched concurrently, and the judge ranks the entries of all of them in one call. The turn then
answers like one store spanning its members: at most ``N`` entries in total (``N`` = the number the
manager asked each store for, the largest when they differ: the policy's ``max_records`` for the
turn), the judge's best of all stores, each store returning its share (more than that store was
asked for only when the counts differ and ``over_fetch`` fetched more from it). ``MemoryManager``
caps injection at ``max_entries`` after concatenating stores in registration order; because the
shares already hold only the ``max_entries`` best, that cap keeps the best of all stores instead of
the first store's. Stores wrapped one by one (``GatedMemoryStore(store)``) each have their own
gate: each asks it, and ranks only its own entries. Concurrent turns (the same question from two
agents at once included) are independent: each runs in its own context.

**Failures.** An inner ``search`` that raises is counted by kind (``stats.errors_by_kind``, e.g.
``store:ThrottlingException``) and that store's ``search`` re-raises the original exception, so
``MemoryManager`` logs it and carries on with the other stores (its partial-failure behaviour). As
everywhere in recallwise, a turn whose search failed injects nothing from the gate: stores sharing
the failed store's gate return ``[]`` that turn (a half-answered turn must not look like a complete
one). Entries with empty or non-text content are skipped and counted (``stats.records_skipped``,
and a note in the turn's trace).

:func:`gated_injection` is the matching ``MemoryInjectionConfig``: the user's latest text as the
query (``None``, i.e. skip, when the turn has none), and the kept entries rendered, best first
across stores, as recallwise's escaped ``<user_context>`` block. Strands' injection shows it to the
model for one call only; ``agent.messages`` never holds it.

:class:`RecallwiseMemoryStore` goes the other way: a namespace of a recallwise store (SQLite,
PostgreSQL, AgentCore) as a read-only Strands ``MemoryStore``.
"""

# Split by job: ``hook`` (RecallHook), ``session`` (RecallSessionManager), ``gate`` (MemoryGate,
# GatedMemoryStore, StrandsSearcher), ``injection`` (gated_injection) and ``store``
# (RecallwiseMemoryStore, the reverse direction). Everything public is importable from here.
from ...extras import extra_imports

with extra_imports("strands", "recallwise.integrations.strands"):
    from .gate import GatedMemoryStore, MemoryGate, StrandsSearcher, gated_stores
    from .hook import RecallHook, user_text
    from .injection import gated_injection
    from .session import RecallSessionManager
    from .store import RecallwiseMemoryStore

__all__ = [
    "GatedMemoryStore",
    "MemoryGate",
    "RecallHook",
    "RecallSessionManager",
    "RecallwiseMemoryStore",
    "StrandsSearcher",
    "gated_injection",
    "gated_stores",
    "user_text",
]
