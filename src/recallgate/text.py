"""Text hygiene shared by every layer."""

from __future__ import annotations

import re

__all__ = ["clean_text"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (half a UTF-16 emoji) replaced by U+FFFD.

    They cannot be encoded as UTF-8, so no database and no tokenizer accepts them; replacing
    them is what every UTF-8 decoder does with a broken sequence.
    """
    return _SURROGATE.sub("\ufffd", text)
