"""Follow-up turns: "continue", "yes, for four at 7", "what about Saturday?" after a request.

A message like "yes please, do that" says nothing a memory search could use, and the gate
rightly closes on it alone. But it carries on a request that did need memories ("What should I
have for dinner?"), and an agent whose memories are injected per turn, as Strands' MemoryManager,
ADK's preload tool and recallwise's own context block do, would answer it without them. A regex
gate has the same hole from the other side: it skips recall on "continue" (hermes-agent #79343).

So the policy keeps, per conversation, the request a chain of follow-ups carries on (the last
message that retrieved on its own merit) and the conversation's previous message. A conversation
is an actor, a session and the namespaces searched: an adapter that serves many users under one
actor id (LangGraph's store, whose namespaces name the user) keeps one conversation per user.

Whether a message carries on the request is a question about the **pair** (the previous message
and this one), not about the message alone: "what is the tallest mountain in Africa?" right after
a dinner request is a new request however soon it comes. With the embedded decider over the
default English model, a learned head (:class:`FollowUpHead`, ``recallwise/data/heads/
follow_up.npz`` and its datasheet) answers it from what the turn already computed: both messages'
embeddings, their similarity and the new one's similarity to the request, the gate's p of the new
message (does it stand on its own as a request?), its length and its anaphora and ellipsis markers
(:func:`pair_features`). The head is a logistic regression, calibrated, numpy only. Other backends
are asked :func:`~recallwise.policy.wording.follow_up_question` in the gate's call (only where a
follow-up threshold was given or fitted for them).

Then, on every turn with a fresh request (younger than ``ttl_s``), the head's p is traced and:

- a message the gate closed on that carries the request on searches and judges the request and
  this message together ("What should I have for dinner?\\nyes please, do that"); the request stays;
- a message the gate opened on is a request of its own: searched alone, it becomes the request (the
  head took "What should I have for dinner?" right after a flight request for a follow-up at p 0.81;
  searched with the flight, it kept 9 records);
- anything else ends the chain: a chain never outlives the request it started from. "thanks", or
  a new question the gate closed on, leaves no request behind.
"""

from __future__ import annotations

import io
import json
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..deciders.heads import HEAD_FORMAT
from ..errors import UsageError
from ..text import read_user_bytes

__all__ = [
    "FOLLOW_UP_FEATURES",
    "MARKERS",
    "ConversationKey",
    "FollowUpHead",
    "FollowUpMemory",
    "PriorTurn",
    "follow_up_text",
    "is_social",
    "marker_features",
    "pair_features",
    "read_follow_up_head",
    "shipped_follow_up_head",
    "write_follow_up_head",
]

#: (actor id, session id, the namespaces a turn searches, as resolved for the actor)
ConversationKey = tuple[str, str | None, tuple[str, ...]]


@dataclass(frozen=True)
class PriorTurn:
    """A message of a conversation: the request a chain carries on, or the previous message."""

    text: str
    #: ``time.monotonic()`` when it was asked
    at: float
    #: its query embedding (the store embedder's), when the policy had one
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)
    #: the gate's p of it on its own, when the gate answered
    gate_p: float | None = None


@dataclass
class _Conversation:
    request: PriorTurn | None = None
    previous: PriorTurn | None = None


class FollowUpMemory:
    """A bounded LRU of conversation -> (its request, its previous message), each forgotten after
    ``ttl_s``; thread-safe. ``size`` 0 or ``ttl_s`` 0 turns follow-ups off."""

    def __init__(self, size: int, ttl_s: float) -> None:
        self.size = max(int(size), 0)
        self.ttl_s = max(float(ttl_s), 0.0)
        self._entries: OrderedDict[ConversationKey, _Conversation] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return bool(self.size and self.ttl_s)

    def __len__(self) -> int:
        return len(self._entries)

    def _entry(self, key: ConversationKey) -> _Conversation:
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Conversation()
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return entry

    def remember(
        self,
        key: ConversationKey,
        text: str,
        now: float | None = None,
        vector: np.ndarray | None = None,
        gate_p: float | None = None,
    ) -> None:
        """``text`` is now the conversation's request (a turn that retrieved on its own merit)."""
        self._put(key, "request", PriorTurn(text, time.monotonic() if now is None else now, vector, gate_p))

    def note(
        self,
        key: ConversationKey,
        text: str,
        now: float | None = None,
        vector: np.ndarray | None = None,
        gate_p: float | None = None,
    ) -> None:
        """``text`` is the conversation's previous message (every turn notes its own)."""
        self._put(key, "previous", PriorTurn(text, time.monotonic() if now is None else now, vector, gate_p))

    def _put(self, key: ConversationKey, which: str, turn: PriorTurn) -> None:
        if not self.enabled:
            return
        with self._lock:
            setattr(self._entry(key), which, turn)

    def end_chain(self, key: ConversationKey) -> None:
        """The conversation's request is over (a message that does not carry it on came)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                entry.request = None

    def _fresh(self, key: ConversationKey, which: str, now: float | None) -> PriorTurn | None:
        if not self.enabled:
            return None
        now = time.monotonic() if now is None else now
        with self._lock:
            entry = self._entries.get(key)
            found: PriorTurn | None = getattr(entry, which) if entry is not None else None
            if found is not None and now - found.at > self.ttl_s:
                setattr(entry, which, None)
                found = None
            if entry is not None and entry.request is None and entry.previous is None:
                del self._entries[key]
        return found

    def prior(self, key: ConversationKey, now: float | None = None) -> PriorTurn | None:
        """The conversation's request, or None (never one, the chain ended, or older than ``ttl_s``)."""
        return self._fresh(key, "request", now)

    def previous(self, key: ConversationKey, now: float | None = None) -> PriorTurn | None:
        """The conversation's previous message, or None (none, or older than ``ttl_s``)."""
        return self._fresh(key, "previous", now)

    def forget(self, actor_id: str, session_id: str | None = None) -> None:
        """Drop what is remembered for an actor's session (e.g. when it ends), in every namespace."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == actor_id and k[1] == session_id]:
                del self._entries[key]

    def forget_actor(self, actor_id: str) -> None:
        """Drop what is remembered for every session of an actor (forgetting the user)."""
        with self._lock:
            for key in [k for k in self._entries if k[0] == actor_id]:
                del self._entries[key]


def follow_up_text(prior: str, text: str) -> str:
    """What a follow-up turn searches and judges: the request, then the follow-up."""
    return f"{prior}\n{text}"


# ---- the pair head ----------------------------------------------------------------------------
#: Anaphora and ellipsis markers of the new message, each 0 or 1 (English, lower-cased text):
#: what says "this goes on with something said before" or "this is a request of its own".
MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern))
    for name, pattern in (
        ("starts_connective", r"^\W*(and|but|also|plus|or|so|then|now|ok|okay|alright|actually|oh|hmm)\b"),
        ("starts_what_about", r"^\W*(what|how) about\b"),
        (
            "starts_answer",
            r"^\W*(yes|yeah|yep|yup|sure|no|nope|nah|correct|right|great|perfect|sounds|that'?s)\b",
        ),
        ("refers_back", r"\b(it|that|this|those|these|them|there|one|ones|same|such)\b"),
        ("asks_other", r"\b(another|else|other|instead|again|too|more|different|rather)\b"),
        (
            "comparative",
            r"\b(cheaper|bigger|smaller|shorter|longer|earlier|later|closer|better|less|fewer)\b",
        ),
        ("continue_word", r"^\W*(continue|go on|keep going|more|next|carry on)\b"),
        ("change_verb", r"\b(make it|change|switch|instead of|rewrite|shorten|expand|add|remove|replace)\b"),
        ("question", r"\?"),
        ("starts_wh", r"^\W*(who|what|when|where|why|which|how)\b"),
        (
            "asks_for",
            r"\b(can you|could you|would you|i want|i need|i'?d like|i would like|help me|tell me|"
            r"give me|show me|find me|write|explain)\b",
        ),
        ("digits", r"\d"),
    )
)
#: A message that is only a greeting, thanks or goodbye ("Hello!", "thanks so much", "bye for now"):
#: it opens or closes a conversation and carries no request on, whatever the head says (from the
#: embedding and the numbers alone the head took "Hello!" right after a drink request for a
#: follow-up at p 0.86: short and closed by the gate, like "ok, go ahead"; a marker feature refitted
#: left it at 0.59, as the fit sets hold few greetings). Matched one whole word at a time, so the
#: match is linear in the message.
SOCIAL = re.compile(
    r"^(?=.*\b(hi|hello|hey|hiya|howdy|greetings|morning|thanks|thank|thx|ty|cheers|bye|"
    r"goodbye|later|care)\b)\W*(?:(?:hi|hello|hey|hiya|howdy|greetings|good|morning|"
    r"afternoon|evening|night|day|thanks|thank|you|u|thx|ty|cheers|bye|goodbye|see|ya|later|ok|okay|"
    r"take|care|have|a|nice|great|there|again|all|everyone|so|much|very|lot|for|that|this|"
    r"everything|your|help|friend|buddy|mate|now|then|soon)\b\W*)+$",
    re.DOTALL,
)


def is_social(text: str) -> bool:
    """``text`` is only a greeting, thanks or goodbye (:data:`SOCIAL`): never a follow-up."""
    return SOCIAL.match(text.lower()) is not None


#: What the follow-up head reads, in this order: the new message's embedding (its kind of text:
#: a standalone request or a continuation), then the pair's numbers (see :func:`pair_features`).
#: Nothing about where in a chain the pair is (the previous message's similarity to the request, its
#: gate p): in dialogue data the turn after a request is nearly always a continuation, so those
#: numbers predicted the label by themselves there (fitted with them, "What is 17 times 23?" right
#: after a dinner request was a follow-up at p 0.98), and an agent's sessions mix requests freely.
FOLLOW_UP_FEATURES: tuple[str, ...] = (
    "embedding",
    "cos_previous",
    "cos_request",
    "gate_logit",
    "log_chars",
    "log_words",
    *(name for name, _ in MARKERS),
)
_NUMBERS = len(FOLLOW_UP_FEATURES) - 1


def marker_features(text: str) -> np.ndarray:
    """:data:`MARKERS` of ``text``: 1.0 where the marker is there, else 0.0."""
    lower = text.lower()
    return np.array([1.0 if pattern.search(lower) else 0.0 for _, pattern in MARKERS])


def _logit(p: float | None) -> float:
    if p is None:
        return 0.0
    q = min(max(float(p), 1e-4), 1 - 1e-4)
    return float(np.log(q / (1 - q)))


def pair_features(
    text: str,
    vector: np.ndarray,
    previous: PriorTurn,
    request: PriorTurn,
    gate_p: float | None,
) -> np.ndarray:
    """What the follow-up head reads about the new message (``text``, its query ``vector``, the
    gate's p of it) after the conversation's ``previous`` message, in a chain carrying on
    ``request`` (:data:`FOLLOW_UP_FEATURES`). A message without a vector reads as similarity 0."""
    v = np.asarray(vector, dtype=np.float64)

    def cos(a: np.ndarray | None, b: np.ndarray | None) -> float:
        return (
            float(np.asarray(a, dtype=np.float64) @ np.asarray(b, dtype=np.float64))
            if a is not None and b is not None
            else 0.0
        )

    numbers = np.array(
        [
            cos(v, previous.vector),
            cos(v, request.vector),
            _logit(gate_p),
            float(np.log1p(len(text))),
            float(np.log1p(len(text.split()))),
        ]
    )
    return np.concatenate([v, numbers, marker_features(text)])


@dataclass(frozen=True)
class FollowUpHead:
    """The follow-up head: ``p = sigmoid(w . x + b)`` over :func:`pair_features`, ``x`` scaled by
    the fit's ``mean`` and ``scale`` (the calibration is folded into ``w`` and ``b``); weights for
    one embedding model's space."""

    embedder: str
    weights: np.ndarray
    bias: float
    mean: np.ndarray
    scale: np.ndarray
    #: data, counts, date, the fit command, its figures and the chosen threshold
    provenance: Mapping[str, Any] = field(default_factory=dict)
    origin: str = "argument"

    @property
    def threshold(self) -> float | None:
        found = (self.provenance.get("thresholds") or {}).get("follow_up")
        return float(found) if isinstance(found, (int, float)) else None

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        x = (np.atleast_2d(np.asarray(features, dtype=np.float64)) - self.mean) / self.scale
        return np.asarray(1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias))))

    def probability(self, features: np.ndarray) -> float:
        return float(self.probabilities(features)[0])

    def describe(self) -> str:
        p = self.provenance
        parts = [f"follow-up head: {self.origin}", self.embedder]
        if p.get("n"):
            parts.append(f"n={p['n']}")
        if p.get("date"):
            parts.append(str(p["date"]))
        return ", ".join(parts)


def write_follow_up_head(head: FollowUpHead, path: str | os.PathLike[str]) -> Path:
    """Write ``head`` to ``path`` (``.npz``, the heads' file format with role ``follow_up``), atomically."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{path}: is a directory, expected a head file path (.npz)")
    meta = {
        "format": HEAD_FORMAT,
        "role": "follow_up",
        "features": list(FOLLOW_UP_FEATURES),
        "spaces": [{"embedder": head.embedder, "n": int(head.provenance.get("n") or 0)}],
        "provenance": dict(head.provenance),
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(f".{target.name}.tmp.npz")
    with scratch.open("wb") as handle:
        np.savez_compressed(
            handle,
            meta=np.array(json.dumps(meta, ensure_ascii=False, sort_keys=True)),
            w0=np.asarray(head.weights, dtype=np.float64),
            b0=np.array(float(head.bias)),
            m0=np.asarray(head.mean, dtype=np.float64),
            s0=np.asarray(head.scale, dtype=np.float64),
        )
    os.replace(scratch, target)
    return target


def read_follow_up_head(path: str | os.PathLike[str], *, origin: str | None = None) -> FollowUpHead:
    """Read a follow-up head file; a missing or malformed one is a :class:`UsageError` naming it."""
    data = read_user_bytes(path, "a follow-up head file (.npz)", "head file")
    return _parse(io.BytesIO(data), str(path), origin or str(path))


def _parse(handle: Any, where: str, origin: str) -> FollowUpHead:
    try:
        with np.load(handle, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files}
        meta = json.loads(str(arrays["meta"]))
    except (ValueError, OSError, EOFError, KeyError) as exc:
        raise UsageError(f"{where}: not a recallwise head file (.npz): {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != HEAD_FORMAT or meta.get("role") != "follow_up":
        raise UsageError(f"{where}: not a follow-up head (expected format {HEAD_FORMAT!r}, role 'follow_up')")
    if tuple(meta.get("features") or ()) != FOLLOW_UP_FEATURES:
        raise UsageError(
            f"{where}: the follow-up head reads {meta.get('features')}; this recallwise computes "
            f"{list(FOLLOW_UP_FEATURES)}: refit it with `recallwise tune follow-up --fit`"
        )
    try:
        weights, bias = np.asarray(arrays["w0"], dtype=np.float64), float(arrays["b0"])
        mean, scale = np.asarray(arrays["m0"], dtype=np.float64), np.asarray(arrays["s0"], dtype=np.float64)
        embedder = str(meta["spaces"][0]["embedder"])
    except (KeyError, IndexError, TypeError, ValueError):
        raise UsageError(f"{where}: the follow-up head has no weights") from None
    width = weights.shape[0] if weights.ndim == 1 else -1
    if (
        width <= _NUMBERS
        or mean.shape != (width,)
        or scale.shape != (width,)
        or not np.isfinite(weights).all()
    ):
        raise UsageError(f"{where}: the follow-up head's weights are malformed")
    return FollowUpHead(embedder, weights, bias, mean, scale, dict(meta.get("provenance") or {}), origin)


@cache
def shipped_follow_up_head() -> FollowUpHead | None:
    """The follow-up head shipped in the wheel (package data ``recallwise/data/heads/follow_up.npz``)."""
    resource = resources.files("recallwise.data.heads").joinpath("follow_up.npz")
    if not resource.is_file():
        return None
    with resource.open("rb") as handle:
        return _parse(handle, "recallwise/data/heads/follow_up.npz", "shipped")


def head_dimension(head: FollowUpHead) -> int:
    """The embedding dimension ``head`` reads."""
    return int(head.weights.shape[0]) - _NUMBERS
