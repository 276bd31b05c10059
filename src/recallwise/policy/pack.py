"""Packing kept records into the context block: escaped, deduplicated, ordered, bounded."""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import Any

__all__ = ["CLOSE_TAG", "OPEN_TAG", "TOKENIZER_NAME", "count_tokens", "escape_memory_text", "pack_context"]

OPEN_TAG = "<user_context>"
CLOSE_TAG = "</user_context>"

# Control characters (except newline/tab) can hide instructions or break terminal output.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def escape_memory_text(text: str, max_chars: int) -> str:
    """Make untrusted memory text safe to put inside the context block.

    Look-alikes are folded first (Unicode compatibility normalisation): a fullwidth
    ``＜/user_context＞`` or a small-form ``﹤`` reads as a tag to a model, so it becomes ASCII
    and is escaped like one. ``&``, ``<`` and ``>`` become entities, so no record can open or
    close a tag; control and bidi-override characters are dropped; newlines collapse to spaces
    (one record per line); markdown fences are defused; the result is cut to ``max_chars``
    with an ellipsis.
    """
    # Escaping only lengthens text, so nothing past max_chars of the raw text can fit: cut
    # there first (cheap on a 1 MB record), escape, then cut the escaped text to the budget.
    truncated = len(text) > max_chars * 8
    text = text[: max_chars * 8]
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cs")  # lone surrogates
    # Decompose fully (NFKD) so every bracket hiding in a compatibility form, or in a composed
    # character ("≮" is "<" + U+0338), is a plain "<" when escaping runs; composing again
    # afterwards (NFC) gives the NFKC form of the text, escaped.
    text = unicodedata.normalize("NFKD", text)
    text = _CONTROL.sub("", text)
    text = " ".join(text.split())
    text = text.replace("```", "'''")
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    escaped = unicodedata.normalize("NFC", escaped)
    if len(escaped) <= max_chars and not truncated:
        return escaped
    head = escaped[: max(max_chars - 1, 0)]
    amp = head.rfind("&")
    if amp != -1 and ";" not in head[amp:]:  # never leave half an entity
        head = head[:amp]
    return head.rstrip() + "…"


def pack_context(
    texts: Sequence[str], *, max_record_chars: int, max_context_chars: int
) -> tuple[str, list[int]]:
    """Join records into one ``<user_context>`` block within the budgets.

    Returns the block ("" when nothing fits) and the indices of the texts that went in.
    Exact duplicates (after rendering and escaping) are dropped.
    """
    lines: list[str] = []
    included: list[int] = []
    seen: set[str] = set()
    used = len(OPEN_TAG) + len(CLOSE_TAG) + 2
    for index, text in enumerate(texts):
        safe = escape_memory_text(text, max_record_chars)
        if not safe or safe in seen:
            continue
        line = f"- {safe}"
        if used + len(line) + 1 > max_context_chars:
            break
        seen.add(safe)
        lines.append(line)
        included.append(index)
        used += len(line) + 1
    if not lines:
        return "", []
    return OPEN_TAG + "\n" + "\n".join(lines) + "\n" + CLOSE_TAG, included


TOKENIZER_NAME = "bert-base-uncased-wordpiece"
_tokenizer: Any = None
_tokenizer_lock = threading.Lock()


def count_tokens(text: str) -> int:
    """Tokens in ``text`` by a real tokenizer (the bundled BERT WordPiece vocabulary)."""
    global _tokenizer
    if not text:
        return 0
    if _tokenizer is None:
        with _tokenizer_lock:
            if _tokenizer is None:
                from ..embeddings.onnx_minilm import _bert_tokenizer

                tokenizer = _bert_tokenizer(1_000_000)
                tokenizer.no_padding()
                tokenizer.no_truncation()
                _tokenizer = tokenizer
    return len(_tokenizer.encode(text, add_special_tokens=False).ids)
