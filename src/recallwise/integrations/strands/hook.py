"""RecallHook: recall on every user message with text, shown to the model for that turn's calls only."""

from __future__ import annotations

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

from ...policy import Recall, RecallPolicy, message_text
from ...records import validate_id

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
            index = index_of(messages, turn.message)
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
        index = index_of(messages, turn.shown)
        if index is not None:
            messages[index] = turn.message
        turn.shown = None


def index_of(messages: Sequence[Any], target: object) -> int | None:
    """Position of ``target`` in ``messages`` by identity (equal copies are other messages)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index] is target:
            return index
    return None
