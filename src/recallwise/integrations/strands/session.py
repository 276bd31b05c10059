"""RecallSessionManager: the conversation persisted as events in a recallwise store, recall built in."""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from strands.hooks import (
    AfterInvocationEvent,
    HookRegistry,
)
from strands.session.session_manager import SessionManager
from strands.types.session import decode_bytes_values, encode_bytes_values

from ...extraction import Extractor, RuleExtractor, Strategy, extract_and_store
from ...extraction.base import DEFAULT_STRATEGIES
from ...extraction.pipeline import ExtractionResult
from ...policy import RecallPolicy
from ...records import Event, validate_id
from ...stores.base import MemoryStore
from .hook import RecallHook, user_text

logger = logging.getLogger(__name__)


def _storable(message: Mapping[str, Any]) -> dict[str, Any]:
    """A message as plain JSON (bytes base64-encoded the way Strands' own session managers do)."""
    stored: dict[str, Any] = json.loads(json.dumps(encode_bytes_values(dict(message)), default=str))
    return stored


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
