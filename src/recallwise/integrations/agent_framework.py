"""Gated memory for Microsoft Agent Framework (``agent-framework-core``): ``GatedContextProvider``.

Agent Framework adds memory through context providers: ``before_run(agent=, session=, context=,
state=)`` runs once per ``agent.run`` and may add messages to the ``SessionContext``; the stock
memory provider (``Mem0ContextProvider``) searches on every run. A :class:`GatedContextProvider`
asks the policy about the run's input messages first: when the gate closes it adds nothing and
searches nothing; when it opens it adds the kept records as one context message. Context messages
are the model's for the run only: the history providers store them only when told to
(``store_context_messages=True``, off by default)::

    from agent_framework import Agent
    from recallwise import open_store
    from recallwise.integrations.agent_framework import GatedContextProvider

    memory = GatedContextProvider(open_store("sqlite:///memory.db"), actor_id="demo_user")
    agent = Agent(client=client, instructions="...", context_providers=[memory])

``decider=None`` is the stock arm (recall on every run). A failing decider fails open (the stock
records, counted in ``stats``); anything else that fails while deciding adds nothing and is
counted in ``fallbacks``: the run goes on as it would without the provider.

Needs: ``pip install 'recallwise[agent-framework]'`` (tested on agent-framework-core 1.23.0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from ..extras import extra_imports
from ..stores.base import Searcher
from ._foreign import GateKeywords, StoreGate

with extra_imports("agent-framework", "recallwise.integrations.agent_framework"):
    from agent_framework import AgentSession, ContextProvider, Message, SessionContext

__all__ = ["GatedContextProvider"]


class GatedContextProvider(ContextProvider, StoreGate):
    """A context provider that adds recallwise's gated memory (see the module).

    ``memory`` is a recallwise store (any :class:`~recallwise.stores.base.Searcher`); ``actor_id``
    whose memory it reads (one provider per user); ``namespaces`` the templates searched (default:
    the policy's); ``source_id`` the provider's id in the context (default ``"recallwise"``). The
    keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider`` (``None``: the stock arm), ``options``, ``stats``, ``log``. The agent's session id
    scopes follow-ups.
    """

    DEFAULT_SOURCE_ID = "recallwise"

    def __init__(
        self,
        memory: Searcher,
        *,
        actor_id: str,
        namespaces: Sequence[str] | Mapping[str, str] | None = None,
        source_id: str = DEFAULT_SOURCE_ID,
        **gate: Unpack[GateKeywords],
    ) -> None:
        ContextProvider.__init__(self, source_id)
        self._configure(**gate)
        self._configure_store(memory, actor_id, None, namespaces)

    async def before_run(
        self,
        *,
        agent: Any,
        session: AgentSession,
        context: SessionContext,
        state: dict[str, Any],
    ) -> None:
        """Ask the policy about the run's input; add the kept records when the gate opens."""
        text = "\n".join(m.text for m in context.input_messages if m is not None and (m.text or "").strip())
        if not text.strip():
            return
        session_id = (
            context.session_id if isinstance(context.session_id, str) and context.session_id else None
        )
        turn = (session_id, id(context), text)  # one SessionContext is one run: one decision
        recall = await self.adecide(text, turn=turn, session_id=_usable_id(session_id))
        if recall is None or not recall.context:
            return
        context.extend_messages(self, [Message(role="user", contents=[recall.context])])


def _usable_id(value: str | None) -> str | None:
    """``value`` when recallwise can key follow-ups on it (its id rules), else None."""
    from ..records import validate_id

    if value is None:
        return None
    try:
        return validate_id(value, "session_id")
    except ValueError:
        return None
