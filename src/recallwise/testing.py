"""Test doubles for code built on recallwise: a scripted decider, an in-memory store and a
Strands model with no provider behind it.

httpx ships ``MockTransport`` so its users test without a network; recallwise ships these so an
application's tests need no model and no file, and say in one line what the decision should be::

    from recallwise import MemoryRecord, RecallPolicy
    from recallwise.testing import InMemoryStore, ScriptedDecider

    store = InMemoryStore([MemoryRecord(actor_id="u1", namespace="/facts/u1", text="Vegetarian.")])
    decider = ScriptedDecider(gate={"What's for dinner?": 0.9}, judge={"vegetarian": 0.95})
    policy = RecallPolicy(store, decider=decider, namespaces=["/facts/{actorId}"])
    assert policy.recall("What's for dinner?", actor_id="u1").records
    assert not policy.recall("Hello!", actor_id="u1").retrieved
    assert decider.messages == ["What's for dinner?", "Hello!"]

Both are what recallwise's own test suite uses. The store is the real embedded SQLite store on
``:memory:`` (so it behaves exactly as the default store does) with a deterministic hashing
embedder, plus what a test needs around it: every search recorded, and faults on demand.
:func:`reply_model` lets a real ``strands.Agent`` run offline (the examples, ``bench latency --via
memory-manager``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .embeddings import Embedder, HashingEmbedder
from .records import MemoryRecord, SearchHit
from .stores.base import SearchMode, SearchRequest
from .stores.sqlite import SQLiteStore

__all__ = ["Asked", "InMemoryStore", "ScriptedDecider", "Searched", "reply_model"]

#: What a scripted answer may be given as: one probability for every message (or memory), a table,
#: or a function of the text.
Script = float | Mapping[str, float] | Callable[[str], float]

_GATE, _ROUTE, _FOLLOW_UP = "gate", "route", "follow_up"
_MEMORY = "\nMemory: "


@dataclass(frozen=True)
class Asked:
    """One ``ask`` a :class:`ScriptedDecider` answered: the state and the questions, by name."""

    state: str
    questions: Mapping[str, Any]

    @property
    def memories(self) -> list[str]:
        """The memory texts the judge questions of this call were about, in question order."""
        return [m for m in (_subject(q) for q in self.questions.values()) if m is not None]


class ScriptedDecider:
    """A decider answering from a script, recording every call; no model, deterministic.

    * ``gate``: the probability of every question about the message itself (the gate, or a
      wording of it a tuner tries): a number for every message, a table of exact messages (a
      message not in it gets 0.0), or a function of the message;
    * ``judge``: each record's probability: a number, a table of words or phrases (a record gets
      the highest value among the keys it contains, case-insensitive; none: 0.0), or a function of
      the record's text;
    * ``route``: the route's probabilities by namespace template (None: the route is left unsure,
      so every namespace is searched); ``follow_up``: the follow-up question's probability;
    * ``error``: raised by every ``ask`` (a decider that is down: the policy must fail open);
      a ``gate`` or ``judge`` function may raise too (a backend failing on some messages);
    * ``reply``: the whole reply as a function of the questions, instead of the script (a broken
      backend's answer: ``lambda questions: {}``; the policy must fail open and count it);
    * ``local``: True makes the policy call it in-process, as the embedded decider; by default it
      is treated as a remote backend (called in a worker thread, under a deadline and a breaker).

    ``calls`` holds every :class:`Asked`; ``messages`` the states the gate was asked about;
    ``warmed`` the question names of each ``warm_up`` (``policy.warm_up()`` passes the gate's).
    """

    def __init__(
        self,
        gate: Script = 1.0,
        judge: Script = 1.0,
        *,
        route: Mapping[str, float] | None = None,
        follow_up: float = 0.0,
        error: BaseException | None = None,
        reply: Callable[[Mapping[str, Any]], Any] | None = None,
        local: bool = False,
        name: str = "scripted",
    ) -> None:
        self.name = name
        self.local = local
        self._gate = _script(gate, exact=True)
        self._judge = _script(judge, exact=False)
        self._route = dict(route) if route is not None else None
        self._follow_up = float(follow_up)
        self._reply = reply
        self.error = error
        self.calls: list[Asked] = []
        self.warmed: list[list[str]] = []

    @classmethod
    def always_open(cls) -> ScriptedDecider:
        """Opens the gate on every message and keeps every record."""
        return cls(1.0, 1.0, name="always-open")

    @classmethod
    def never_open(cls) -> ScriptedDecider:
        """Closes the gate on every message."""
        return cls(0.0, 0.0, name="never-open")

    @classmethod
    def failing(cls, error: BaseException | None = None) -> ScriptedDecider:
        """Raises ``error`` (a ``ConnectionError`` by default) on every call."""
        return cls(error=error or ConnectionError("decider down"), name="failing")

    @property
    def messages(self) -> list[str]:
        """The messages the gate was asked about, in order."""
        return [call.state for call in self.calls if _GATE in call.questions]

    def ask(self, state: str, questions: Mapping[str, Any]) -> Any:
        """Answer every question by the script (the decider contract: ``{name: answer}``)."""
        self.calls.append(Asked(state, dict(questions)))
        if self.error is not None:
            raise self.error
        if self._reply is not None:
            return self._reply(questions)
        answers: dict[str, Any] = {}
        for name, question in questions.items():
            memory = _subject(question)
            if memory is not None:
                answers[name] = self._judge(memory)
            elif name == _FOLLOW_UP:
                answers[name] = self._follow_up
            elif name == _ROUTE or _kind(question) == "choice":
                answers[name] = self._choice(question)
            else:  # about the message: the gate, or a wording of it
                answers[name] = self._gate(state)
        return answers

    def warm_up(self, questions: Mapping[str, Any] | None = None) -> None:
        """Record the questions a policy warms up with (nothing to load)."""
        self.warmed.append(sorted(questions or {}))

    def _choice(self, question: Any) -> dict[str, Any]:
        options = _options(question)
        if self._route is None:  # unsure: equal odds
            return {"probabilities": {o: 1.0 / len(options) for o in options}} if options else {}
        return {"probabilities": {o: float(self._route.get(o, 0.0)) for o in options}}


@dataclass(frozen=True)
class Searched:
    """One search an :class:`InMemoryStore` served (or failed)."""

    namespace: str
    top_k: int
    actor_id: str | None
    mode: SearchMode
    hits: int


@dataclass
class _Faults:
    error: BaseException | None = None
    delay_s: float = 0.0
    remaining: int | None = None  # None: every search fails


class InMemoryStore(SQLiteStore):
    """The embedded store in memory, with a deterministic embedder, searches recorded, faults on demand.

    It is :class:`~recallwise.stores.sqlite.SQLiteStore` on ``:memory:``: every method behaves as
    the default store's. On top: ``searches`` lists every search (namespace, depth, actor, hits);
    :meth:`fail_searches` makes the next searches raise (or all of them); ``delay_s`` slows each
    search; ``local=False`` makes the policy treat it as a remote store (called under a deadline
    and a circuit breaker), so a test can exercise that path without a network.
    """

    def __init__(
        self,
        records: Sequence[MemoryRecord] = (),
        *,
        embedder: Embedder | None = None,
        local: bool = True,
        delay_s: float = 0.0,
    ) -> None:
        super().__init__("sqlite://:memory:", embedder=embedder or HashingEmbedder())
        # an instance attribute over SQLiteStore's class-level ``local = True``
        self.local = local
        self._faults = _Faults(delay_s=delay_s)
        self.searches: list[Searched] = []
        if records:
            self.add_records(records)

    def fail_searches(self, error: BaseException | None = None, *, times: int | None = None) -> None:
        """Make searches raise ``error`` (a ``ConnectionError`` by default): the next ``times`` of
        them, or every one until :meth:`heal`."""
        self._faults.error = error or ConnectionError("store down")
        self._faults.remaining = times

    def heal(self) -> None:
        """Searches succeed again."""
        self._faults.error, self._faults.remaining = None, None

    def search(self, request: SearchRequest) -> list[SearchHit]:
        if self._faults.delay_s:
            time.sleep(self._faults.delay_s)
        error = self._faults.error
        searched = Searched(request.namespace, request.top_k, request.actor_id, request.mode, 0)
        if error is not None:
            if self._faults.remaining is not None:
                self._faults.remaining -= 1
                if self._faults.remaining <= 0:
                    self.heal()
            self.searches.append(searched)
            raise error
        hits = super().search(request)
        self.searches.append(replace(searched, hits=len(hits)))
        return hits


def reply_model(reply: Callable[[list[dict[str, Any]]], str]) -> Any:
    """A Strands model that answers each call with one text, ``reply(messages)`` (the messages as
    Strands sends them, the user's last), and needs no provider, key or network (the ``strands``
    extra only). ``reply`` sees what was injected into the user's message for that call."""
    from strands.models.model import Model

    class ReplyModel(Model):
        def __init__(self) -> None:
            self.config: dict[str, Any] = {}

        def update_config(self, **model_config: Any) -> None:
            self.config.update(model_config)

        def get_config(self) -> Any:
            return self.config

        async def structured_output(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
            raise NotImplementedError("a reply model only chats")
            yield

        async def stream(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            text = reply(messages)
            yield {"messageStart": {"role": "assistant"}}
            yield {"contentBlockDelta": {"delta": {"text": text}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}

    return ReplyModel()


def _script(script: Script, *, exact: bool) -> Callable[[str], float]:
    if callable(script):
        return lambda text: float(script(text))
    if isinstance(script, Mapping):
        table = {str(k): float(v) for k, v in script.items()}
        if exact:
            return lambda text: table.get(text, 0.0)
        lowered = {k.lower(): v for k, v in table.items()}
        return lambda text: max((p for k, p in lowered.items() if k in text.lower()), default=0.0)
    value = float(script)
    return lambda text: value


def _subject(question: Any) -> str | None:
    """The memory a judge question is about: a :class:`Question`'s subject, or the wire form's
    ``Memory:`` line (what a foreign decider receives)."""
    subject = getattr(question, "subject", None)
    if subject is not None:
        return str(subject)
    instructions = question.get("instructions", "") if isinstance(question, Mapping) else ""
    return instructions.split(_MEMORY, 1)[1] if _MEMORY in instructions else None


def _kind(question: Any) -> str:
    return str(question.get("type") if isinstance(question, Mapping) else getattr(question, "type", ""))


def _options(question: Any) -> list[str]:
    if isinstance(question, Mapping):
        criteria = question.get("criteria") or {}
        return [str(k) for k in criteria]
    return list(getattr(question, "options", []))
