"""Text hygiene shared by every layer: clean text, and saying why a JSON text did not parse."""

from __future__ import annotations

import json
import re
import sys

__all__ = ["clean_text", "json_failure"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with lone surrogates (half a UTF-16 emoji) replaced by U+FFFD.

    They cannot be encoded as UTF-8, so no database and no tokenizer accepts them; replacing
    them is what every UTF-8 decoder does with a broken sequence.
    """
    return _SURROGATE.sub("\ufffd", text)


#: JSON tokens, enough to follow nesting and find numbers (strings are skipped whole).
_JSON_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|-?\d++(?:\.\d++)?(?:[eE][+-]?\d++)?|[\[\]{}]')


def json_failure(text: str, exc: ValueError | RecursionError) -> tuple[int | None, str]:
    """(1-based line, problem) for ``json.loads(text)`` failing with ``exc``.

    ``json.loads`` raises ``JSONDecodeError`` (a ``ValueError`` with a position) for bad
    syntax, a plain ``ValueError`` for an integer longer than ``sys.get_int_max_str_digits()``
    and ``RecursionError`` for deep nesting; the last two carry no position, so the line is
    found by a scan: of the first over-long integer, or of the deepest nesting. The line is
    None when the scan does not find the culprit.

    One function for every reader of JSON: config files and data files name the line, HTTP
    backends quote the problem with the answer's size.
    """
    if isinstance(exc, json.JSONDecodeError):
        return exc.lineno, f"{exc.msg} at column {exc.colno}"
    deep = isinstance(exc, RecursionError)
    limit = sys.get_int_max_str_digits()
    depth = deepest = 0
    culprit: int | None = None
    for token in _JSON_TOKEN.finditer(text):
        first = token.group()[0]
        if first in "[{":
            depth += 1
            if deep and depth > deepest:
                deepest, culprit = depth, token.start()
        elif first in "]}":
            depth -= 1
        elif not deep and first != '"':
            digits = token.group().lstrip("-")
            if digits.isdigit() and len(digits) > limit:  # an int; a float has no digit limit
                culprit = token.start()
                break
    line = text.count("\n", 0, culprit) + 1 if culprit is not None else None
    return line, "nested too deeply" if deep else str(exc).split(";")[0]
