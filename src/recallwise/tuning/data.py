"""Labelled data for the tuner: gate label files and validator case files.

Both are validated completely, with errors naming the file and line, before any decider is
asked anything: a typo on line 57 must not surface after 56 paid calls.

- Gate labels (JSONL): one ``{"text": str, "label": bool}`` per line; ``true`` means answering
  the message well needs something stored about the user.
- Validator cases (JSON): ``{"records": {key: text}, "cases": [{"query": str, "relevant":
  [key], "irrelevant": [key]}]}``. A record may be a JSON preference blob (as a string or an
  object); it is rendered to prose first, as the policy renders it before judging.
- Either may tag a line or case with ``"lang": "es"`` (any short string): the tuner then also
  reports its figures per language.

``builtin:NAME`` names a set shipped as package data: ``seed`` (the seed's small sets: 20
utterances, 4 queries), ``heldout`` (written for recallwise and never fitted on: 95 utterances,
12 queries; for reporting) and ``dev`` (validator cases the embedded judge's scales were
fitted on; no gate labels).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..records import render_text
from ..text import decode_user_text, json_failure, loads_json_file, read_user_bytes

__all__ = [
    "BUILTIN_SETS",
    "Case",
    "CaseSet",
    "LabelSet",
    "LabelledText",
    "load_cases",
    "load_labels",
    "parse_cases",
    "parse_labels",
]

#: ``builtin:NAME`` -> package holding ``gate_labels.jsonl`` and/or ``validator_cases.json``.
BUILTIN_SETS = {
    "seed": "recallwise.data.seed",
    "heldout": "recallwise.data.heldout",
    "dev": "recallwise.data.dev",
}
GATE_FILE = "gate_labels.jsonl"
FOLLOW_UP_FILE = "follow_up_labels.jsonl"
CASES_FILE = "validator_cases.json"


@dataclass(frozen=True)
class LabelledText:
    """One gate utterance: ``label`` is True when answering it well needs stored personal facts."""

    text: str
    label: bool
    line: int
    #: the optional ``lang`` tag (per-language figures)
    lang: str | None = None


@dataclass(frozen=True)
class LabelSet:
    """A validated gate label file, with where it came from and the hash of its bytes."""

    source: str
    sha256: str
    items: tuple[LabelledText, ...]

    @property
    def n(self) -> int:
        return len(self.items)


@dataclass(frozen=True)
class Case:
    """One validator query and which records answer it (keys into the record table)."""

    query: str
    relevant: tuple[str, ...]
    irrelevant: tuple[str, ...]
    line: int | None
    #: the optional ``lang`` tag (per-language figures)
    lang: str | None = None

    @property
    def keys(self) -> tuple[str, ...]:
        return self.relevant + self.irrelevant


@dataclass(frozen=True)
class CaseSet:
    """A validated validator case file; ``records`` holds the rendered record texts."""

    source: str
    sha256: str
    records: Mapping[str, str]
    cases: tuple[Case, ...]

    @property
    def n(self) -> int:
        """The number of judged (query, record) pairs."""
        return sum(len(c.keys) for c in self.cases)


# ---- reading --------------------------------------------------------------------------


def _read(spec: str, builtin_file: str) -> tuple[str, bytes]:
    """(source name, bytes) of ``spec``: a path or ``builtin:NAME``."""
    if spec.startswith("builtin:"):
        name = spec.removeprefix("builtin:")
        if name not in BUILTIN_SETS:
            raise UsageError(
                f"unknown built-in set {spec!r}; available: builtin:{', builtin:'.join(BUILTIN_SETS)}"
            )
        resource = resources.files(BUILTIN_SETS[name]).joinpath(builtin_file)
        if not resource.is_file():
            holding = [
                n
                for n, package in BUILTIN_SETS.items()
                if resources.files(package).joinpath(builtin_file).is_file()
            ]
            raise UsageError(
                f"built-in set {spec!r} has no {builtin_file}; "
                f"the sets that do: builtin:{', builtin:'.join(holding)}"
            )
        return spec, resource.read_bytes()
    return str(Path(spec)), read_user_bytes(spec, "a file")


def load_labels(spec: str, builtin_file: str = GATE_FILE) -> LabelSet:
    """Read and validate a gate label file (a path, ``builtin:seed`` or ``builtin:heldout``);
    ``builtin_file`` is the file a ``builtin:NAME`` set is read from (the follow-up labels:
    :data:`FOLLOW_UP_FILE`, in ``builtin:dev`` and ``builtin:heldout``)."""
    source, data = _read(spec, builtin_file)
    return parse_labels(decode_user_text(data, source), source, hashlib.sha256(data).hexdigest())


def load_cases(spec: str) -> CaseSet:
    """Read and validate a validator case file (a path or ``builtin:seed`` / ``dev`` / ``heldout``)."""
    source, data = _read(spec, CASES_FILE)
    return parse_cases(decode_user_text(data, source), source, hashlib.sha256(data).hexdigest())


def _require_object(
    value: Any, fields: tuple[str, ...], where: str, expected: str, what: str = "field"
) -> None:
    """A line or document of a user's file must be a JSON object holding every one of ``fields``;
    otherwise a :class:`UsageError` naming ``where`` and what was ``expected`` (or missing)."""
    if not isinstance(value, dict):
        raise UsageError(f"{where}: expected {expected}")
    for field in fields:
        if field not in value:
            raise UsageError(f"{where}: missing {what} {field!r}")


# ---- gate labels ----------------------------------------------------------------------


def parse_labels(text: str, source: str = "<labels>", sha256: str | None = None) -> LabelSet:
    """Validate JSONL gate labels; every problem names ``source`` and the line."""
    items: list[LabelledText] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{source} line {number}"
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, an over-long int, deep nesting
            raise UsageError(f"{where}: not a JSON object ({json_failure(raw, exc)[1]})") from None
        _require_object(row, ("text", "label"), where, 'a JSON object {"text": ..., "label": ...}')
        value = row["text"]
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"{where}: 'text' must be a non-empty string, got {value!r}")
        label = row["label"]
        if not isinstance(label, bool):
            raise UsageError(f"{where}: 'label' must be true or false, got {label!r}")
        key = " ".join(value.split()).casefold()
        if key in seen:
            raise UsageError(f"{where}: duplicate text {value!r} (first on line {seen[key]})")
        seen[key] = number
        items.append(LabelledText(value, label, number, _lang(row, where)))
    if not items:
        raise UsageError(f"{source}: no labelled lines")
    positives = sum(item.label for item in items)
    if positives in (0, len(items)):
        only = "true" if positives else "false"
        raise UsageError(
            f"{source}: every label is {only} ({len(items)} line{'s' if len(items) > 1 else ''}); "
            "separation needs both classes, true and false"
        )
    digest = sha256 or hashlib.sha256(text.encode("utf-8")).hexdigest()
    return LabelSet(source, digest, tuple(items))


# ---- validator cases ------------------------------------------------------------------


def _line_of(text: str, needle: str, start: int = 0) -> tuple[int | None, int]:
    """1-based line of the first ``needle`` at or after ``start``, and where it was found."""
    at = text.find(needle, start)
    if at < 0:
        return None, start
    return text.count("\n", 0, at) + 1, at


def _key_token(value: str) -> list[str]:
    return [json.dumps(value), json.dumps(value, ensure_ascii=False)]


def parse_cases(text: str, source: str = "<cases>", sha256: str | None = None) -> CaseSet:
    """Validate a validator case file; every problem names ``source``, the case and its line."""
    document = loads_json_file(text, source)
    _require_object(
        document, ("records", "cases"), source, "an object with 'records' and 'cases'", "top-level field"
    )
    raw_records = document["records"]
    if not isinstance(raw_records, dict) or not raw_records:
        raise UsageError(f"{source}: 'records' must be a non-empty object {{key: text}}")
    records: dict[str, str] = {}
    for key, value in raw_records.items():
        key_line = next((ln for tok in _key_token(key) if (ln := _line_of(text, tok)[0])), None)
        where = f"{source} line {key_line}" if key_line else source
        if isinstance(value, (dict, list)):
            value = json.dumps(value, ensure_ascii=False)
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"{where}: record {key!r} must be a non-empty string or a JSON object")
        records[key] = render_text(value)
    raw_cases = document["cases"]
    if not isinstance(raw_cases, list) or not raw_cases:
        raise UsageError(f"{source}: 'cases' must be a non-empty list")
    cases: list[Case] = []
    seen_queries: dict[str, int] = {}
    cursor = text.find('"cases"')
    for index, raw in enumerate(raw_cases):
        line: int | None = None
        if isinstance(raw, dict) and isinstance(raw.get("query"), str):
            for token in _key_token(raw["query"]):
                found, at = _line_of(text, token, max(cursor, 0))
                if found:
                    line, cursor = found, at + 1
                    break
        where = f"{source} cases[{index}]" + (f" (line {line})" if line else "")
        expected = "an object with 'query', 'relevant' and 'irrelevant'"
        _require_object(raw, ("query", "relevant", "irrelevant"), where, expected)
        query = raw["query"]
        if not isinstance(query, str) or not query.strip():
            raise UsageError(f"{where}: 'query' must be a non-empty string, got {query!r}")
        folded = " ".join(query.split()).casefold()
        if folded in seen_queries:
            raise UsageError(f"{where}: duplicate query {query!r} (first in cases[{seen_queries[folded]}])")
        seen_queries[folded] = index
        keys: dict[str, tuple[str, ...]] = {}
        for field in ("relevant", "irrelevant"):
            value = raw[field]
            if not isinstance(value, list) or not all(isinstance(k, str) for k in value):
                raise UsageError(f"{where}: {field!r} must be a list of record keys")
            if not value:
                raise UsageError(
                    f"{where}: {field!r} is empty; ranking needs a relevant and an irrelevant record"
                )
            unknown = [k for k in value if k not in records]
            if unknown:
                raise UsageError(
                    f"{where}: {field!r} names unknown record(s) {', '.join(map(repr, unknown))}"
                )
            duplicates = sorted({k for k in value if value.count(k) > 1})
            if duplicates:
                raise UsageError(f"{where}: {field!r} lists {', '.join(map(repr, duplicates))} twice")
            keys[field] = tuple(value)
        both = sorted(set(keys["relevant"]) & set(keys["irrelevant"]))
        if both:
            raise UsageError(
                f"{where}: record(s) {', '.join(map(repr, both))} are both relevant and irrelevant"
            )
        cases.append(Case(query, keys["relevant"], keys["irrelevant"], line, _lang(raw, where)))
    digest = sha256 or hashlib.sha256(text.encode("utf-8")).hexdigest()
    return CaseSet(source, digest, records, tuple(cases))


def _lang(row: Mapping[str, Any], where: str) -> str | None:
    value = row.get("lang")
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 16:
        raise UsageError(f"{where}: 'lang' must be a short language tag such as \"es\", got {value!r}")
    return value.strip()


def describe(data: LabelSet | CaseSet) -> dict[str, Any]:
    """Where a data set came from, for configs and reports."""
    return {"data": data.source, "data_sha256": data.sha256, "n": data.n}
