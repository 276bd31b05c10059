"""Deprecated: the Strands MemoryManager gate moved into :mod:`recallwise.integrations.strands`.

Import ``GatedMemoryStore``, ``MemoryGate``, ``StrandsSearcher``, ``gated_stores``,
``gated_injection`` and ``RecallwiseMemoryStore`` from ``recallwise.integrations.strands``; this
module re-exports them for one release, with a warning.
"""

import warnings

from .strands import (
    GatedMemoryStore,
    MemoryGate,
    RecallwiseMemoryStore,
    StrandsSearcher,
    gated_injection,
    gated_stores,
)

__all__ = [
    "GatedMemoryStore",
    "MemoryGate",
    "RecallwiseMemoryStore",
    "StrandsSearcher",
    "gated_injection",
    "gated_stores",
]

warnings.warn(
    "recallwise.integrations.strands_memory is deprecated: import from recallwise.integrations.strands",
    DeprecationWarning,
    stacklevel=2,
)
