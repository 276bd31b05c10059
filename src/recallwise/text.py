"""Text hygiene shared by every layer: clean text, reading a user's file, and saying why a JSON
text did not parse."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from .errors import UsageError

__all__ = [
    "clean_text",
    "decode_user_text",
    "json_failure",
    "loads_json_file",
    "read_user_bytes",
    "read_user_file",
]

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


def read_user_file(path: str | os.PathLike[str], what: str) -> str:
    """The UTF-8 text of the user's file ``path``, a ``what`` (say "threshold config"); a missing or
    unreadable one is a :class:`UsageError` naming the file and what it should have been."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read {what}: {exc}") from None


def read_user_bytes(path: str | os.PathLike[str], expected: str, what: str = "file") -> bytes:
    """The bytes of the user's file ``path`` (bytes, where a digest of the file is kept too, or
    a binary format is parsed); a missing ``what``, an unreadable one, or a directory where
    ``expected`` (say "a file") should be, is a :class:`UsageError` naming it.
    :func:`decode_user_text` makes the text of them."""
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, expected {expected}") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None


def decode_user_text(data: bytes, where: str) -> str:
    """``data`` (read from ``where``) as UTF-8 text; bytes that are not UTF-8 are a
    :class:`UsageError` naming the line they are on."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{where} line {line}: not UTF-8 text") from None


def loads_json_file(text: str, where: str) -> Any:
    """``json.loads(text)`` of a whole file; one that does not parse is a :class:`UsageError`
    naming ``where``, the line (when :func:`json_failure` finds it) and the problem."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, an over-long int, deep nesting
        line, problem = json_failure(text, exc)
        at = f"{where} line {line}" if line is not None else where
        raise UsageError(f"{at}: not valid JSON ({problem})") from None
