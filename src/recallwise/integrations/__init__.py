"""Integrations with agent frameworks (each needs its optional extra).

* :mod:`recallwise.integrations.strands` -- ``GatedMemoryStore`` (and ``gated_stores``,
  ``gated_injection``) in front of any store of Strands' ``MemoryManager``; ``RecallHook`` and
  ``RecallSessionManager`` for Strands Agents over any recallwise store
  (``pip install 'recallwise[strands]'``);
* :mod:`recallwise.integrations.agentcore` -- ``GatedAgentCoreMemorySessionManager``, a
  drop-in for AgentCore Memory's Strands session manager (``pip install 'recallwise[agentcore]'``);
* :mod:`recallwise.integrations.langgraph` -- ``GatedStore`` (a gate in front of any LangGraph
  ``BaseStore``) and ``RecallwiseStore`` (recallwise's stores as one)
  (``pip install 'recallwise[langgraph]'``);
* :mod:`recallwise.integrations.adk` -- ``GatedMemoryService`` (a gate in front of any Google ADK
  ``BaseMemoryService``) and ``RecallwiseMemoryService`` (recallwise's stores as one)
  (``pip install 'recallwise[adk]'``).

Names are imported on first use, so ``import recallwise.integrations`` works without any extra.
"""

from __future__ import annotations

import importlib
from typing import Any

from ..extras import require_extra
from ._foreign import CountingSearcher, TurnGate

__all__ = [
    "CountingSearcher",
    "GatedAgentCoreMemorySessionManager",
    "GatedInputFilter",
    "GatedMemoryService",
    "GatedMemoryStore",
    "GatedStore",
    "MemoryGate",
    "RecallHook",
    "RecallSessionManager",
    "RecallwiseMemoryService",
    "RecallwiseMemoryStore",
    "RecallwiseStore",
    "TurnGate",
    "gated_injection",
    "gated_stores",
]

_WHERE = {
    "GatedMemoryStore": ("strands", "strands"),
    "MemoryGate": ("strands", "strands"),
    "RecallwiseMemoryStore": ("strands", "strands"),
    "gated_injection": ("strands", "strands"),
    "gated_stores": ("strands", "strands"),
    "RecallHook": ("strands", "strands"),
    "RecallSessionManager": ("strands", "strands"),
    "GatedAgentCoreMemorySessionManager": ("agentcore", "agentcore"),
    "GatedStore": ("langgraph", "langgraph"),
    "RecallwiseStore": ("langgraph", "langgraph"),
    "GatedMemoryService": ("adk", "adk"),
    "RecallwiseMemoryService": ("adk", "adk"),
    "GatedInputFilter": ("openai_agents", "openai-agents"),
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module_name, extra = _WHERE[name]
    require_extra(extra, name)
    return getattr(importlib.import_module(f"{__name__}.{module_name}"), name)
