"""Text -> vectors.

An embedder is any object with ``name``, ``dimension`` and ``embed(texts) -> float32 array``
of unit-length rows. Backends register by name (:func:`register_embedder`); the default
(``minilm-l6``) runs all-MiniLM-L6-v2 as int8 ONNX from a PyPI wheel, offline, without torch.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import UsageError
from .hashing import HashingEmbedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "Embedder",
    "HashingEmbedder",
    "available_embedders",
    "default_embedder",
    "make_embedder",
    "register_embedder",
]

DEFAULT_EMBEDDER = "minilm-l6"


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an ``(len(texts), dimension)`` float32 array of L2-normalised rows."""
        ...


_FACTORIES: dict[str, Callable[[], Embedder]] = {}
_INSTANCES: dict[str, Embedder] = {}
_LOCK = threading.Lock()


def register_embedder(name: str, factory: Callable[[], Embedder]) -> None:
    """Make ``make_embedder(name)`` build an embedder with ``factory()``."""
    _FACTORIES[name] = factory


def available_embedders() -> list[str]:
    return sorted(_FACTORIES)


def make_embedder(name: str | None = None) -> Embedder:
    """The embedder registered as ``name`` (default :data:`DEFAULT_EMBEDDER`).

    Instances are shared: a model is loaded once per process.
    """
    name = name or DEFAULT_EMBEDDER
    with _LOCK:
        if name in _INSTANCES:
            return _INSTANCES[name]
        if name not in _FACTORIES:
            raise UsageError(f"unknown embedder {name!r}; available: {', '.join(available_embedders())}")
        instance = _FACTORIES[name]()
        _INSTANCES[name] = instance
        return instance


def default_embedder() -> Embedder:
    """The offline default embedder (all-MiniLM-L6-v2, int8 ONNX)."""
    return make_embedder(DEFAULT_EMBEDDER)


def _register_builtins() -> None:
    from . import onnx_minilm

    register_embedder("minilm-l6", onnx_minilm.minilm_l6)
    register_embedder("paraphrase-minilm-l3", onnx_minilm.paraphrase_minilm_l3)
    register_embedder("hashing", HashingEmbedder)


_register_builtins()
