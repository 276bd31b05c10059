"""A deterministic bag-of-words embedder: the in-memory double for tests.

It has no model and no quality to speak of beyond word overlap, but it is instant and
needs nothing installed, so tests of stores and policy plumbing do not load ONNX.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Sequence

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Feature-hashed unigrams and bigrams, L2-normalised."""

    def __init__(self, dimension: int = 256) -> None:
        self.dimension = dimension
        self.name = f"hashing-{dimension}"
        self.calls = 0

    def _bucket(self, token: str) -> tuple[int, float]:
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self.dimension, (1.0 if value >> 63 else -1.0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for token in words + [a + " " + b for a, b in itertools.pairwise(words)]:
                index, sign = self._bucket(token)
                out[row, index] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out
