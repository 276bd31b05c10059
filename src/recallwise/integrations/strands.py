"""Strands Agents over any recallwise store: a hook provider and a session manager.

>>> policy = RecallPolicy(open_store("sqlite:///memory.db"))
>>> agent = Agent(model=..., hooks=[RecallHook(policy, actor_id="u1", session_id="s1")])

:class:`RecallHook` runs the policy when a user message with text is added, and shows the
kept context to the model for the model calls of that turn only: the ``<user_context>``
block is put in front of the user's message just before each model call and taken out
right after it. The stored history (``agent.messages``, and whatever a session manager
persisted) never contains it, so context does not pile up turn after turn.

:class:`RecallSessionManager` does the same and also persists the conversation as events
in the store (restoring it when an agent starts with the same session id), and by default
runs the offline extractor after each invocation so that what the user says becomes
long-term records.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from strands.hooks import (
    AfterInvocationEvent,
    AfterModelCallEvent,
    BeforeModelCallEvent,
    HookProvider,
    HookRegistry,
    MessageAddedEvent,
)
from strands.session.session_manager import SessionManager
from strands.types.session import decode_bytes_values, encode_bytes_values

from ..extraction import Extractor, RuleExtractor, Strategy, extract_and_store
from ..extraction.base import DEFAULT_STRATEGIES
from ..extraction.pipeline import ExtractionResult
from ..policy import Recall, RecallPolicy, message_text
from ..records import Event, validate_id
from ..stores.base import MemoryStore
from .strands_memory import GatedMemoryStore, MemoryGate, RecallwiseMemoryStore, gated_injection, gated_stores

__all__ = ["RecallHook", "RecallSessionManager", "user_text"]
__all__ += ["GatedMemoryStore", "MemoryGate", "RecallwiseMemoryStore", "gated_injection", "gated_stores"]

logger = logging.getLogger(__name__)


def user_text(message: Mapping[str, Any]) -> str:
    """The text a user typed in a Strands message: its text blocks, in order.

    Tool results, tool uses, images and documents are not text the user typed and are
    skipped, so a tool-result turn (role ``user``) has no text and triggers no recall.
    (The same as :func:`recallwise.policy.message_text`.)
    """
    return message_text(message)


@dataclass
class _Turn:
    """The current turn of one agent: its user message and the context it gets."""

    message: dict[str, Any]
    context: str
    shown: dict[str, Any] | None = None  # the copy with the context, while a model call runs


class RecallHook(HookProvider):
    """Inject the policy's kept context into the current user turn, never into the history.

    ``actor_id`` picks whose memories are searched (``{actorId}`` in the policy's
    namespaces); ``session_id`` fills ``{sessionId}``. :attr:`last_recall` holds the most
    recent decision (context, kept records, trace); :attr:`policy` ``.stats`` the counters.
    """

    def __init__(self, policy: RecallPolicy, *, actor_id: str, session_id: str | None = None) -> None:
        self.policy = policy
        self.actor_id = validate_id(actor_id, "actor_id")
        self.session_id = validate_id(session_id, "session_id") if session_id is not None else None
        self.last_recall: Recall | None = None
        self._turns: dict[int, _Turn] = {}
        self._lock = threading.Lock()

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        registry.add_callback(MessageAddedEvent, self._on_message_added)
        registry.add_callback(BeforeModelCallEvent, self._show)
        registry.add_callback(AfterModelCallEvent, self._hide)
        registry.add_callback(AfterInvocationEvent, self._end_turn)

    # ---- callbacks ---------------------------------------------------------------------------
    def _on_message_added(self, event: MessageAddedEvent) -> None:
        message = event.message
        if message.get("role") != "user":
            return
        text = user_text(message)
        if not text.strip():
            return  # a tool result or an image-only message continues the turn: no new recall
        recall = self.policy.recall(text, actor_id=self.actor_id, session_id=self.session_id)
        self.last_recall = recall
        with self._lock:
            old = self._turns.pop(id(event.agent), None)
            if old is not None:
                self._restore(event.agent, old)
            if recall.context:
                self._turns[id(event.agent)] = _Turn(message=message, context=recall.context)  # type: ignore[arg-type]

    def _show(self, event: BeforeModelCallEvent) -> None:
        with self._lock:
            turn = self._turns.get(id(event.agent))
            if turn is None:
                return
            self._restore(event.agent, turn)  # a retried call must not stack a second block
            messages = event.agent.messages
            index = _index_of(messages, turn.message)
            if index is None:
                return  # the conversation manager dropped the message: nothing to attach it to
            shown = dict(turn.message)
            shown["content"] = [{"text": turn.context}, *turn.message.get("content", [])]
            messages[index] = shown  # type: ignore[call-overload]
            turn.shown = shown

    def _hide(self, event: AfterModelCallEvent) -> None:
        with self._lock:
            turn = self._turns.get(id(event.agent))
            if turn is not None:
                self._restore(event.agent, turn)

    def _end_turn(self, event: AfterInvocationEvent) -> None:
        with self._lock:
            turn = self._turns.pop(id(event.agent), None)
            if turn is not None:
                self._restore(event.agent, turn)

    @staticmethod
    def _restore(agent: Any, turn: _Turn) -> None:
        if turn.shown is None:
            return
        messages = agent.messages
        index = _index_of(messages, turn.shown)
        if index is not None:
            messages[index] = turn.message
        turn.shown = None


def _storable(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message as plain JSON (bytes base64-encoded the way Strands' own session managers do)."""
    stored: dict[str, Any] = json.loads(json.dumps(encode_bytes_values(dict(message)), default=str))
    return stored


def _index_of(messages: Sequence[Any], target: object) -> int | None:
    """Position of ``target`` in ``messages`` by identity (equal copies are other messages)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index] is target:
            return index
    return None


class RecallSessionManager(SessionManager):
    """A Strands session manager over a recallwise store, with recall built in.

    * every message the agent adds is stored as an :class:`~recallwise.records.Event`
      (``actor_id``, ``session_id``; the full Strands message in ``metadata["message"]``),
      and an agent that starts empty with the same session id gets its conversation back;
    * the policy's context is injected exactly as :class:`RecallHook` does;
    * after each invocation, ``extractor`` (default: the offline :class:`RuleExtractor`;
      ``None`` turns it off) turns the new user messages into long-term records, consolidated
      with what the store already holds.

    Agent state (``agent.state``) and conversation-manager state are not persisted; use a
    Strands session manager plus :class:`RecallHook` when you need those.
    """

    def __init__(
        self,
        store: MemoryStore,
        policy: RecallPolicy,
        *,
        actor_id: str,
        session_id: str,
        extractor: Extractor | None = RuleExtractor(),  # noqa: B008 - stateless, safe to share
        strategies: Sequence[Strategy] = DEFAULT_STRATEGIES,
        restore: bool = True,
    ) -> None:
        self.store = store
        self.policy = policy
        self.actor_id = validate_id(actor_id, "actor_id")
        self.session_id = validate_id(session_id, "session_id")
        self.extractor = extractor
        self.strategies = tuple(strategies)
        self.restore = restore
        self.hook = RecallHook(policy, actor_id=actor_id, session_id=session_id)
        #: what the write path did after each invocation, newest last
        self.extractions: list[ExtractionResult] = []
        #: extraction failures (they never break the agent's turn), newest last
        self.extraction_errors: list[str] = []
        self._unextracted: list[Event] = []
        self._latest_event: dict[str, Event] = {}

    def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
        super().register_hooks(registry, **kwargs)
        self.hook.register_hooks(registry)
        if self.extractor is not None:
            registry.add_callback(AfterInvocationEvent, self._extract_after_invocation)

    # ---- SessionManager ----------------------------------------------------------------------
    def append_message(self, message: Any, agent: Any, **kwargs: Any) -> None:
        event = Event(
            actor_id=self.actor_id,
            session_id=self.session_id,
            role=str(message.get("role", "user")),
            text=user_text(message),
            metadata={"agent_id": agent.agent_id, "message": _storable(message)},
        )
        self.store.create_event(event)
        self._latest_event[agent.agent_id] = event
        if event.role == "user" and event.text.strip():
            self._unextracted.append(event)

    def redact_latest_message(self, redact_message: Any, agent: Any, **kwargs: Any) -> None:
        latest = self._latest_event.get(agent.agent_id)
        if latest is None:
            raise ValueError(
                f"agent {agent.agent_id!r} has no message in session {self.session_id!r} to redact"
            )
        event = Event(
            actor_id=self.actor_id,
            session_id=self.session_id,
            role=latest.role,
            text=user_text(redact_message),
            metadata={
                "agent_id": agent.agent_id,
                "message": _storable(redact_message),
                "redacts": latest.id,
            },
        )
        self.store.create_event(event)
        self._unextracted = [e for e in self._unextracted if e.id != latest.id]
        self._latest_event[agent.agent_id] = event

    def sync_agent(self, agent: Any, **kwargs: Any) -> None:
        """Nothing to do: messages are stored as they are added; agent state is not persisted."""

    def initialize(self, agent: Any, **kwargs: Any) -> None:
        if not self.restore or agent.messages:
            return
        restored = self.stored_messages(agent.agent_id)
        if restored:
            agent.messages = restored
            logger.debug("restored %d messages for agent %s", len(restored), agent.agent_id)

    def _extract_after_invocation(self, event: AfterInvocationEvent) -> None:
        self.extract()

    # ---- public ------------------------------------------------------------------------------
    def stored_messages(self, agent_id: str) -> list[dict[str, Any]]:
        """The agent's stored conversation in this session, redactions applied, oldest first."""
        events = [
            e
            for e in self.store.list_events(self.actor_id, self.session_id)
            if e.metadata.get("agent_id") == agent_id and isinstance(e.metadata.get("message"), dict)
        ]
        redacted = {e.metadata["redacts"]: e for e in events if e.metadata.get("redacts")}
        out = []
        for event in events:
            if event.metadata.get("redacts"):
                continue
            final = redacted.get(event.id, event)
            out.append(decode_bytes_values(final.metadata["message"]))
        return out

    def extract(self) -> ExtractionResult | None:
        """Run the write path over the user messages added since the last extraction."""
        if self.extractor is None or not self._unextracted:
            return None
        events, self._unextracted = self._unextracted, []
        try:
            result = extract_and_store(
                self.store, self.actor_id, events, extractor=self.extractor, strategies=self.strategies
            )
        except Exception as exc:  # the write path must never break the agent's turn
            message = f"{type(exc).__name__}: {exc}"
            self.extraction_errors.append(message)
            logger.warning("recallwise extraction failed for session %s: %s", self.session_id, message)
            return None
        self.extractions.append(result)
        return result
