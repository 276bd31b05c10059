"""recallwise's embedder for mem0: cached per text, and as a mem0 ``EmbeddingBase``; an offline ``Memory``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mem0.embeddings.base import EmbeddingBase

from ...embeddings import Embedder, default_embedder
from ...embeddings.cache import CachedEmbedder

# ---- recallwise's embedder, cached, and as a mem0 embedder ---------------------------------------


def _cached(embedder: Embedder | None) -> CachedEmbedder:
    if isinstance(embedder, CachedEmbedder):
        return embedder
    return CachedEmbedder(embedder if embedder is not None else default_embedder())


class RecallwiseEmbedding(EmbeddingBase):
    """recallwise's embedder (default: the offline MiniLM) as a mem0 embedder.

    mem0 chooses its embedder by provider name at construction; swap this in afterwards::

        memory.embedding_model = RecallwiseEmbedding()

    and configure the vector store with ``embedding_model_dims=RecallwiseEmbedding().dimension``
    (384 for the default). Vectors are cached by text and shared with a :class:`GatedMem0` /
    :class:`Mem0Searcher` over the same memory (they pick this embedder up), so the judge does
    not embed again what mem0 just embedded.
    """

    def __init__(self, embedder: Embedder | None = None) -> None:
        from mem0.configs.embeddings.base import BaseEmbedderConfig

        chosen = _cached(embedder)
        super().__init__(BaseEmbedderConfig(model=chosen.name, embedding_dims=chosen.dimension))
        self.embedder = chosen

    @property
    def dimension(self) -> int:
        return self.embedder.dimension

    def embed(self, text: Any, memory_action: Any = None) -> list[float]:
        """One text's vector, as a list of floats (mem0 hands it to its vector store)."""
        return [float(x) for x in self.embedder.embed([_as_text(text)])[0]]

    def embed_batch(self, texts: Sequence[Any], memory_action: Any = "add") -> list[list[float]]:
        """Several texts in one batch."""
        if not texts:
            return []
        return [[float(x) for x in row] for row in self.embedder.embed([_as_text(t) for t in texts])]


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _embedder_of(memory: Any, given: Embedder | None) -> CachedEmbedder:
    """The embedder the judge reads memories with: ``given``; else the memory's own when it is a
    :class:`RecallwiseEmbedding` (one cache for both); else the default, cached."""
    if given is not None:
        return _cached(given)
    model = getattr(memory, "embedding_model", None)
    if isinstance(model, RecallwiseEmbedding):
        return model.embedder
    return CachedEmbedder(default_embedder())


def local_memory(
    path: str | Path,
    *,
    embedder: Embedder | None = None,
    collection_name: str = "recallwise",
    asynchronous: bool = False,
    config: Mapping[str, Any] | None = None,
) -> Any:
    """A mem0 ``Memory`` (``AsyncMemory`` with ``asynchronous=True``) that runs offline.

    Its vectors live in a local qdrant directory at ``path``, its history in memory, and its
    embedder is recallwise's (:class:`RecallwiseEmbedding`). mem0 builds an OpenAI LLM and
    embedder client at construction, which need a key: a placeholder is passed and never used as
    long as memories are added with ``add(..., infer=False)`` (with ``infer=True`` mem0 asks its
    LLM to extract facts, which needs a real one, given in ``config["llm"]``). ``config`` entries
    override the defaults (mem0's ``Memory.from_config`` keys). Set ``MEM0_TELEMETRY=False`` in the
    environment before importing mem0 to turn its telemetry off.
    """
    from mem0 import AsyncMemory, Memory

    chosen = RecallwiseEmbedding(embedder)
    settings: dict[str, Any] = {
        "vector_store": {
            "provider": "qdrant",
            "config": {
                "collection_name": collection_name,
                "path": str(path),
                "embedding_model_dims": chosen.dimension,
                "on_disk": True,
            },
        },
        # placeholders: the clients are built, never called (the embedder is swapped below)
        "embedder": {
            "provider": "openai",
            "config": {"api_key": "unused-offline", "embedding_dims": chosen.dimension},
        },
        "llm": {"provider": "openai", "config": {"api_key": "unused-offline"}},
        "history_db_path": ":memory:",
        **dict(config or {}),
    }
    memory = (AsyncMemory if asynchronous else Memory).from_config(settings)
    memory.embedding_model = chosen
    return memory
