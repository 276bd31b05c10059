"""Memory records, search hits, namespace templates and the one prose style records render to."""

from __future__ import annotations

import json
import math
import re
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from .errors import InvalidIdError, InvalidValueError
from .text import clean_text

__all__ = [
    "DEFAULT_NAMESPACES",
    "FACTS_NAMESPACE",
    "PREFERENCES_NAMESPACE",
    "Event",
    "MemoryRecord",
    "SearchHit",
    "check_event",
    "check_record",
    "check_storable",
    "render_text",
    "resolve_namespace",
    "score_from_cosine",
    "validate_id",
]


def _new_id() -> str:
    return uuid.uuid4().hex


@dataclass
class MemoryRecord:
    """One long-term memory.

    ``text`` is stored as given (AgentCore's preference records are JSON blobs); what
    reaches a decider or a prompt is :attr:`rendered`. Records added without an
    ``embedding`` are embedded by the store on the way in.
    """

    actor_id: str
    namespace: str
    text: str
    id: str = field(default_factory=_new_id)
    strategy: str = "semantic"
    created_at: float = field(default_factory=time.time)
    metadata: dict[str, Any] = field(default_factory=dict)
    embedding: np.ndarray | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.text, str):
            self.text = clean_text(self.text)

    @property
    def rendered(self) -> str:
        """The record in the one prose style used everywhere (see :func:`render_text`)."""
        return render_text(self.text)


@dataclass
class SearchHit:
    """A record returned by a store search.

    ``score`` is the cosine similarity mapped to [0, 1] as ``(1 + cosine) / 2`` (the
    convention of Elasticsearch's cosine ``_score``), so that a relevance floor means what it
    means on a hosted memory service: unrelated records still score around 0.5.
    ``cosine`` is the raw similarity.
    """

    record: MemoryRecord
    score: float
    #: the full-text (BM25) score of a hybrid search, when the record matched the text
    lexical: float | None = None

    @property
    def cosine(self) -> float:
        return 2.0 * self.score - 1.0


def score_from_cosine(cosine: float) -> float:
    """A store's relevance score for a cosine similarity (see :class:`SearchHit`)."""
    return (1.0 + float(cosine)) / 2.0


@dataclass
class Event:
    """One conversation message as stored by the write path."""

    actor_id: str
    session_id: str
    role: str
    text: str
    id: str = field(default_factory=_new_id)
    created_at: float = field(default_factory=time.time)
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.text, str):
            self.text = clean_text(self.text)


# ---- what a store keeps ------------------------------------------------------------------

# NUL ends a C string (PostgreSQL refuses it in text and JSON); a lone surrogate cannot be encoded
# as UTF-8 (no database or strict JSON reader takes it).
_UNSTORABLE_CHAR = re.compile("[\x00\ud800-\udfff]")


def _bad_text(text: str) -> str | None:
    found = _UNSTORABLE_CHAR.search(text)
    if found is None:
        return None
    char = found.group()
    what = "a NUL character" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X})"
    return f"{what} at position {found.start()}"


def check_storable(value: Any, field: str) -> None:
    """Raise :class:`InvalidValueError` naming ``field`` (and the dotted path inside it,
    ``metadata.tags.0``) when ``value`` holds what no store keeps as given: a NUL character or a
    lone surrogate in a string (or a mapping's key), or a NaN / Infinity. Lists and mappings are
    walked (without recursion, so any depth is fine); other values pass.

    One check for every store and the service alike: SQLite would keep such values (and hand back
    JSON a strict reader refuses), PostgreSQL refuses them half-way through a write.
    """
    todo: list[tuple[str, Any]] = [(field, value)]
    while todo:
        where, item = todo.pop()
        if isinstance(item, str):
            bad = _bad_text(item)
            if bad is not None:
                raise InvalidValueError(f"{where}: {bad} is not allowed in stored text", field=where)
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidValueError(
                    f"{where}: {item} is not a JSON number (NaN and Infinity are refused)", field=where
                )
        elif isinstance(item, Mapping):
            for key, inner in item.items():
                name = str(key)
                bad = _bad_text(name) if isinstance(key, str) else None
                if bad is not None:
                    raise InvalidValueError(f"{where}: a key holds {bad}", field=where)
                todo.append((f"{where}.{name}", inner))
        elif isinstance(item, (list, tuple)):
            todo.extend((f"{where}.{i}", inner) for i, inner in enumerate(item))


def check_record(record: MemoryRecord) -> None:
    """:func:`check_storable` over every field of ``record`` a store writes (named by its id)."""
    where = f"record {record.id!r}"
    for name in ("id", "actor_id", "namespace", "text", "strategy", "metadata"):
        check_storable(getattr(record, name), f"{where} {name}")


def check_event(event: Event) -> None:
    """:func:`check_storable` over every field of ``event`` a store writes (named by its id)."""
    where = f"event {event.id!r}"
    for name in ("id", "actor_id", "session_id", "role", "text", "metadata"):
        check_storable(getattr(event, name), f"{where} {name}")


# ---- rendering ---------------------------------------------------------------------------


def _lower_first(text: str) -> str:
    """Lower the first letter unless the first word is an acronym ("YVR", "API")."""
    text = text.strip()
    if not text:
        return text
    first = text.split()[0]
    letters = [c for c in first if c.isalpha()]
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return text
    return text[0].lower() + text[1:]


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, dict):
        return _render_dict(value)
    if isinstance(value, list):
        return "; ".join(s for s in (_render_value(v) for v in value) if s)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _render_dict(blob: dict[Any, Any]) -> str:
    context, preference = blob.get("context"), blob.get("preference")
    if isinstance(context, str) and isinstance(preference, str) and context.strip():
        return f"When {_lower_first(context)}: {preference.strip()}"
    if isinstance(preference, str) and not context:
        return preference.strip()
    parts = []
    for key, value in blob.items():
        if key == "categories":  # retrieval tags, not content: they only add noise to a prompt
            continue
        rendered = _render_value(value)
        if rendered:
            parts.append(f"{key}: {rendered}")
    return "; ".join(parts)


@lru_cache(maxsize=16384)
def render_text(text: str) -> str:
    """Render a stored record text into one prose style (kept per text: a judged turn renders
    every candidate, and the same records come back turn after turn).

    USER_PREFERENCE blobs ``{"context", "preference", "categories"}`` become
    ``"When <context>: <preference>"``; other objects become ``"key: value; ..."``
    without ``categories``; lists join with ``"; "``; anything that is not JSON (or is a
    JSON scalar) passes through unchanged.
    """
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return text
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, (dict, list)):
        try:
            rendered = _render_value(value)
        except RecursionError:  # nested deeper than Python recurses: keep the text as stored
            return text
        return rendered if rendered else text
    return text


# ---- ids and namespaces ------------------------------------------------------------------

# Ids are spliced into namespace paths: anything that could climb out of a namespace
# ("/", ".."), widen it ("*", "%"), re-template it ("{", "}") or hide in whitespace is refused.
_ID_RE = re.compile(r"^[A-Za-z0-9_\-.:@+=]{1,128}$")
_PLACEHOLDER_RE = re.compile(r"\{([A-Za-z]+)\}")


def validate_id(value: Any, what: str = "actor_id") -> str:
    """Return ``value`` when it is a safe id, else raise :class:`InvalidIdError` naming it."""
    if not isinstance(value, str):
        raise InvalidIdError(f"{what} must be a string, got {type(value).__name__}")
    if not _ID_RE.fullmatch(value) or ".." in value:
        raise InvalidIdError(
            f"invalid {what} {value!r}: use 1-128 letters, digits or _-.:@+= "
            "(no '/', '..', '*', '%', braces or whitespace)"
        )
    return value


#: Where the write path files facts ("The user is vegetarian.") and preferences (JSON blobs), as
#: AgentCore's two built-in strategies do (``extraction.DEFAULT_STRATEGIES``).
FACTS_NAMESPACE = "/facts/{actorId}"
PREFERENCES_NAMESPACE = "/preferences/{actorId}"
#: Every namespace the write path writes: what a recall searches by default, in the library
#: (``RecallPolicy``), the service and the MCP server alike, so a default recall finds what the
#: default write path stored.
DEFAULT_NAMESPACES: tuple[str, ...] = (FACTS_NAMESPACE, PREFERENCES_NAMESPACE)


def resolve_namespace(
    template: str,
    *,
    actor_id: str,
    session_id: str | None = None,
    strategy_id: str | None = None,
) -> str:
    """Fill ``{actorId}``, ``{sessionId}`` and ``{memoryStrategyId}`` from validated ids."""
    values = {"actorId": validate_id(actor_id, "actor_id")}
    if session_id is not None:
        values["sessionId"] = validate_id(session_id, "session_id")
    if strategy_id is not None:
        values["memoryStrategyId"] = validate_id(strategy_id, "memoryStrategyId")

    def fill(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in values:
            raise InvalidIdError(f"namespace {template!r} needs {{{key}}}, which was not given")
        return values[key]

    return _PLACEHOLDER_RE.sub(fill, template)
