"""Precomputed embeddings of the texts recallwise itself embeds (package data, ``data/text_vectors``).

The gate's examples, the generic bank, the life domains' prototypes and the standing constraints'
take ~0.4 s to embed; for the default embedder their vectors ship in ``text_vectors/<name>.npz``
(checked against the embedder by the test suite: ``tests/test_embedded_quality.py``). The decider
seeds its text cache from them and the stores' :class:`~recallwise.embeddings.domains.DomainSpace`
builds its prototype matrix from them, so both read the same vectors and neither embeds them on its
first turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import resources
from types import MappingProxyType

import numpy as np

from . import Embedder

__all__ = ["shipped_vectors"]

_EMPTY: Mapping[str, np.ndarray] = MappingProxyType({})


def shipped_vectors(embedder: Embedder) -> Mapping[str, np.ndarray]:
    """The shipped vectors of ``embedder``'s model by text (read-only float32 rows), or an empty
    mapping when none ship for its name or their width is not its dimension."""
    name = getattr(embedder, "name", None)
    dimension = getattr(embedder, "dimension", None)
    if not isinstance(name, str) or not name or not isinstance(dimension, int):
        return _EMPTY
    return _load(name, dimension)


@cache
def _load(name: str, dimension: int) -> Mapping[str, np.ndarray]:
    resource = resources.files("recallwise.data").joinpath(f"text_vectors/{name}.npz")
    if not resource.is_file():
        return _EMPTY
    with resource.open("rb") as handle, np.load(handle, allow_pickle=False) as shipped:
        texts, vectors = shipped["texts"], shipped["vectors"]
        if vectors.ndim != 2 or vectors.shape[1] != dimension:
            return _EMPTY
        matrix = np.asarray(vectors, dtype=np.float32)
    matrix.flags.writeable = False
    return MappingProxyType({str(t): row for t, row in zip(texts.tolist(), matrix, strict=True)})
