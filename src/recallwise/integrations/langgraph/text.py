"""Item text and recallwise's offline embedder as a LangGraph embeddings function."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from langgraph.store.base import get_text_at_path

from ...embeddings import Embedder, default_embedder
from ...records import render_text
from .._foreign import lazy_embedder

#: value keys that usually hold a memory's text (LangMem writes {"content": {"content": ...}})
_TEXT_KEYS = ("content", "text", "memory", "data")


# ---- recallwise's embedder as a LangGraph embeddings function ----------------------------------


def embeddings_function(embedder: Embedder | None = None) -> Callable[[Sequence[str]], list[list[float]]]:
    """``texts -> vectors`` with recallwise's embedder (default: the offline MiniLM), for a
    LangGraph ``index={"embed": ...}``. LangGraph runs a sync function in a worker thread for
    its async calls, so an asyncio graph never waits on it."""
    get = lazy_embedder(embedder)

    def embed(texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        return np.asarray(get().embed(list(texts)), dtype=np.float32).tolist()

    embed.__name__ = f"recallwise_{getattr(embedder, 'name', 'default')}_embed"
    return embed


def index_config(embedder: Embedder | None = None, *, fields: Sequence[str] | None = None) -> dict[str, Any]:
    """A LangGraph ``IndexConfig`` (``dims``, ``embed``, ``fields``) over recallwise's embedder."""
    chosen = embedder if embedder is not None else default_embedder()
    config: dict[str, Any] = {"dims": int(chosen.dimension), "embed": embeddings_function(chosen)}
    if fields is not None:
        config["fields"] = list(fields)
    return config


def item_text(value: Mapping[str, Any], fields: Sequence[str] | None = None) -> str:
    """The text of a stored value that a judge reads (and that a recallwise store embeds).

    ``fields`` (LangGraph paths, e.g. the inner store's ``index["fields"]``) pick it
    explicitly. Otherwise: the first of ``content`` / ``text`` / ``memory`` / ``data`` that
    holds text (nested, as LangMem writes it), else the value's only string, else the whole
    value rendered to prose (``key: value; ...``).
    """
    if fields and list(fields) != ["$"]:
        parts = [t for path in fields for t in get_text_at_path(value, path)]
        joined = " ".join(p for p in parts if p.strip())
        if joined:
            return joined
    found = _text_in(value)
    if found:
        return found
    return render_text(json.dumps(value, ensure_ascii=False, default=str))


def _text_in(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if not isinstance(value, Mapping):
        return ""
    for key in _TEXT_KEYS:
        if key in value:
            text = _text_in(value[key])
            if text:
                return text
    strings = [v for v in value.values() if isinstance(v, str) and v.strip()]
    return strings[0].strip() if len(strings) == 1 else ""


def index_text(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """The text an item is embedded by: the text at ``fields`` (LangGraph paths), or for the
    whole item (no fields, or ``["$"]``) :func:`item_text`. Empty when the paths hold no text:
    the item is then not indexed, as in LangGraph's stores."""
    if fields is None or list(fields) == ["$"]:
        return item_text(value)
    parts = [text for path in fields for text in get_text_at_path(value, path)]
    return " ".join(part for part in parts if part.strip())
