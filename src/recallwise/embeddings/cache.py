"""An embedder that keeps its vectors by text: what a framework memory returns turn after turn
is embedded once, not on every turn it comes back."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from . import Embedder

__all__ = ["CachedEmbedder"]


class CachedEmbedder:
    """``inner`` with a bounded, thread-safe LRU of vectors by text (``size`` 0: no cache).

    Same ``name`` and ``dimension`` as ``inner`` (the decider's calibrations key on the name);
    texts missing from the cache are embedded in one batch.
    """

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        self.inner = inner
        self.name: str = inner.name
        self.dimension: int = int(inner.dimension)
        self.size = max(int(size), 0)
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            found = {t: self._vectors[t] for t in texts if t in self._vectors}
            for text in found:
                self._vectors.move_to_end(text)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            fresh = np.asarray(self.inner.embed(missing), dtype=np.float32)
            found.update(zip(missing, fresh, strict=True))
            if self.size:
                with self._lock:
                    for text, vector in zip(missing, fresh, strict=True):
                        self._vectors[text] = vector
                    while len(self._vectors) > self.size:
                        self._vectors.popitem(last=False)
        return np.stack([found[t] for t in texts])
