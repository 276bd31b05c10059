"""The decider contract: one base class, and adapting foreign deciders (the backends by name are in
:mod:`recallwise.deciders.registry`).

Every backend subclasses :class:`BaseDecider` and implements one method, :meth:`BaseDecider._answer`
(the way ``httpx.BaseTransport`` has only ``handle_request``). Everything around it happens once,
here: the request is validated before any network call, the state is cut to what the backend
reads (with a warning), the raw answers are parsed and checked, unexpected exceptions become
typed :class:`~recallwise.errors.DeciderError` s, and usage is added up under a lock.

:meth:`BaseDecider.decide` returns a :class:`Decision`: the answers *and* the warnings and usage
of that call, as data. ``ask(state, questions) -> answers`` stays for scripts.

What a backend can do is declared in :class:`Capabilities`, not probed. Any object with a
``name`` and ``ask(state, questions) -> {name: answer}`` still works as a decider:
:func:`as_decider` wraps it once.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ..errors import DeciderError, UsageError, error_kind
from .questions import Answer, Question, parse_answers, validate_request

__all__ = [
    "BaseDecider",
    "Capabilities",
    "Decider",
    "Decision",
    "DecisionHints",
    "Reply",
    "as_decider",
    "ask",
    "call_if_present",
    "truncate_state",
]


@runtime_checkable
class Decider(Protocol):
    """Anything with a ``name`` and ``ask(state, questions) -> {question_name: answer}``.

    ``questions`` maps names to systemone question objects
    (``{"type": "noul", "instructions": ..., "criteria": {...}}``). A noul answer is a float
    in [0, 1]; choice and score answers are objects (see :mod:`recallwise.deciders.questions`).
    Raise any exception to signal failure: the policy fails open and counts it.
    """

    @property
    def name(self) -> str: ...

    def ask(self, state: str, questions: Mapping[str, Any]) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class Capabilities:
    """What a backend does, declared by the backend (the policy and the CLI read these).

    * ``local`` -- answers in-process without I/O: called directly, with no deadline thread;
    * ``uses_hints`` -- reads :class:`DecisionHints` (the turn's query vector and the records'
      vectors) instead of embedding again;
    * ``sends_examples`` -- questions' labelled examples go to the backend;
    * ``reads_wording`` -- the answers depend on the questions' instructions text (an
      embedding decider compares texts and ignores instructions: tuning wordings is moot).
    """

    local: bool = False
    uses_hints: bool = False
    sends_examples: bool = False
    reads_wording: bool = True


@dataclass
class DecisionHints:
    """Vectors the policy already has, for deciders that declare ``uses_hints``.

    The query embedding is computed once per turn; an embedding decider reuses it (and the
    stored records' vectors) instead of embedding again.
    """

    state_vector: np.ndarray | None = None
    subject_vectors: dict[str, np.ndarray] = field(default_factory=dict)
    #: Extra per-question features (e.g. the store's search score for a judged record).
    subject_scores: dict[str, float] = field(default_factory=dict)
    #: The full-text (BM25) score of a judged record when a hybrid search matched its words.
    subject_lexical: dict[str, float] = field(default_factory=dict)
    #: The name of the embedder that made these vectors (a decider with several models picks by it).
    embedder_name: str | None = None
    #: The turn's need for memory as the policy read it: the gate's p when the gate opened on it
    #: (None: something else opened the turn, or no gate was asked); a judge that reads it can say
    #: that nothing belongs.
    need: float | None = None


@dataclass
class Reply:
    """What a backend's :meth:`BaseDecider._answer` returns.

    ``answers`` are raw: floats or wire objects (``{"type": "noul", "noul": 0.8}``) or answer
    objects; they are checked by :func:`parse_answers`. ``usage`` is this call's usage
    (``input_tokens``, ``output_tokens``, ``cost``, ...: numbers that add up).
    """

    answers: Mapping[str, Any]
    usage: Mapping[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Decision:
    """The answers to one call, with that call's warnings and usage."""

    answers: dict[str, Answer]
    warnings: list[str] = field(default_factory=list)
    usage: dict[str, float] = field(default_factory=dict)


def truncate_state(state: str, limit: int | None) -> tuple[str, str | None]:
    """The state cut to ``limit`` characters (its start), and a warning when it was cut."""
    if limit is None or len(state) <= limit:
        return state, None
    return state[:limit], f"state truncated from {len(state)} to {limit} characters for this backend"


class BaseDecider(ABC):
    """A decision backend: subclasses set ``name`` and ``capabilities`` and implement :meth:`_answer`."""

    #: an instance attribute as far as types go (the :class:`Decider` protocol reads it)
    name: str = "decider"
    capabilities: ClassVar[Capabilities] = Capabilities()
    #: characters of the state the backend reads; a longer state is cut, with a warning
    max_state_chars: int | None = None

    _usage_lock: threading.Lock
    _usage_totals: dict[str, float]

    # ---- the one method a backend implements -------------------------------------------------
    @abstractmethod
    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        """Answer every question about ``state`` in one call (the request is already valid)."""

    # ---- everything else happens once, here ---------------------------------------------------
    @property
    def local(self) -> bool:
        return self.capabilities.local

    def decide(
        self,
        state: str,
        questions: Mapping[str, Question | Mapping[str, Any]],
        hints: DecisionHints | None = None,
    ) -> Decision:
        """Validate, cut the state, ask, parse and account: one call for every question."""
        parsed = validate_request(state, questions)  # before any network call
        warnings: list[str] = []
        state = self._limit_state(state, warnings)
        try:
            reply = self._answer(state, parsed, hints or DecisionHints())
            answers = parse_answers(parsed, reply.answers)
        except DeciderError:
            raise
        except Exception as exc:  # a backend may raise anything: fail open, but say what
            error = DeciderError(f"{self.name}: {type(exc).__name__}: {exc}")
            error.kind = error_kind(exc) if isinstance(exc, OSError) else "error"
            raise error from exc
        warnings.extend(reply.warnings)
        usage = dict(reply.usage)  # as reported: token counts stay ints
        self._account(usage)
        return Decision(answers, warnings, usage)

    def ask(self, state: str, questions: Mapping[str, Question | Mapping[str, Any]]) -> dict[str, Answer]:
        """The answers only (see :meth:`decide` for warnings and usage)."""
        return self.decide(state, questions).answers

    def _limit_state(self, state: str, warnings: list[str]) -> str:
        """Cut the state to what the backend reads; backends with a tokenizer may override."""
        state, warning = truncate_state(state, self.max_state_chars)
        if warning:
            warnings.append(warning)
        return state

    def _account(self, usage: Mapping[str, float]) -> None:
        lock = self.__dict__.get("_usage_lock")
        if lock is None:
            lock = self.__dict__.setdefault("_usage_lock", threading.Lock())
        with lock:
            totals = self.__dict__.setdefault("_usage_totals", {"calls": 0.0})
            totals["calls"] += 1
            for key, value in usage.items():
                totals[key] = totals.get(key, 0.0) + value

    def usage(self) -> dict[str, float]:
        """Calls and whatever the backend reports (tokens, cost), summed over this decider's life."""
        totals = dict(self.__dict__.get("_usage_totals") or {"calls": 0.0})
        return {k: (int(v) if float(v).is_integer() else v) for k, v in totals.items()}

    # Optional hooks, not abstract: most backends have nothing to load or release.
    def warm_up(self, questions: Mapping[str, Question] | None = None) -> None:  # noqa: B027
        """Load what the first call would load (models, cached wordings). Nothing by default."""

    def close(self) -> None:  # noqa: B027
        """Release connections or models. Nothing by default."""

    def __enter__(self) -> BaseDecider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ForeignDecider(BaseDecider):
    """A user's decider (``name`` + ``ask(state, wire_questions)``) behind the base class.

    Its capabilities are read once, from the attributes it declares (``local``,
    ``accepts_examples``); it gets wire-shaped questions, as a remote backend would.
    """

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = str(getattr(inner, "name", None) or type(inner).__name__)
        self.capabilities = Capabilities(  # type: ignore[misc]
            local=bool(getattr(inner, "local", False)),
            sends_examples=bool(getattr(inner, "accepts_examples", False)),
        )

    def _answer(self, state: str, questions: Mapping[str, Question], hints: DecisionHints) -> Reply:
        sends = self.capabilities.sends_examples
        wire = {name: q.to_wire(with_examples=sends) for name, q in questions.items()}
        return Reply(self.inner.ask(state, wire))

    def warm_up(self, questions: Mapping[str, Question] | None = None) -> None:
        call_if_present(self.inner, "warm_up", questions)

    def close(self) -> None:
        call_if_present(self.inner, "close")

    def __repr__(self) -> str:
        return f"as_decider({self.inner!r})"


def as_decider(decider: Any) -> BaseDecider:
    """``decider`` as a :class:`BaseDecider` (foreign deciders are wrapped once)."""
    if isinstance(decider, BaseDecider):
        return decider
    if not callable(getattr(decider, "ask", None)):
        raise UsageError(
            f"{type(decider).__name__} is not a decider: it needs a name and "
            "ask(state, questions) -> {question: answer}"
        )
    return _ForeignDecider(decider)


def ask(
    decider: Any,
    state: str,
    questions: Mapping[str, Question | Mapping[str, Any]],
    hints: DecisionHints | None = None,
) -> dict[str, Answer]:
    """Ask every question in one call and return validated answers (any decider)."""
    return as_decider(decider).decide(state, questions, hints).answers


def check_request(state: Any, questions: Mapping[str, Any]) -> dict[str, Question]:
    """Validate a request (used by backends and the CLI before any network call)."""
    return validate_request(state, questions)


def call_if_present(target: Any, method: str, *args: Any) -> None:
    """``target.method(*args)`` when ``target`` has such a method: a wrapped object (a user's
    decider, a client of another library) need not have every optional one."""
    call = getattr(target, method, None)
    if callable(call):
        call(*args)
