"""Gated long-term memory for the OpenAI Agents SDK (``openai-agents``): ``GatedInputFilter``.

The SDK keeps a conversation's history (``Session``) but has no long-term memory: users add it by
hand. Its hook before every model call is ``RunConfig.call_model_input_filter``; a
:class:`GatedInputFilter` there asks the policy about the user's message once per user turn (the
SDK calls the filter again after every round of tool calls: the same decision is reused), and when
the gate opens adds the kept records' context block to that call's instructions. Instructions are
sent with each call and stored nowhere (not in the ``Session``, not in a server-managed
conversation), so the memory is the model's for the turn only::

    from agents import Agent, RunConfig, Runner
    from recallwise import open_store
    from recallwise.integrations.openai_agents import GatedInputFilter

    memory = GatedInputFilter(open_store("sqlite:///memory.db"), actor_id="demo_user")
    result = await Runner.run(agent, "What should I have for dinner?",
                              run_config=RunConfig(call_model_input_filter=memory))

``decider=None`` is the stock arm (recall on every user turn, the store's top-k above the floor).
A failing decider fails open (the stock records, counted in ``stats``); anything else that fails
while deciding leaves the call as the SDK made it (counted in ``fallbacks``).

Needs: ``pip install 'recallwise[openai-agents]'`` (tested on openai-agents 0.24.0).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..extras import extra_imports
from ._foreign import StoreGate

with extra_imports("openai-agents", "recallwise.integrations.openai_agents"):
    from agents.run_config import CallModelData, ModelInputData

__all__ = ["GatedInputFilter", "user_turn"]


def _item_text(item: Any) -> str | None:
    """The text of a user input item (a ``{"role": "user", "content": ...}`` message), else None."""
    if not isinstance(item, Mapping) or item.get("role") != "user":
        return None
    if item.get("type", "message") != "message":
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = [
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "input_text"
        ]
        return " ".join(t for t in parts if isinstance(t, str))
    return None


def user_turn(items: Any) -> tuple[int, str] | None:
    """``(n, text)`` for the latest user message in a model call's input items: it is the ``n``-th
    user message of the conversation (tool outputs and the model's own items are not user turns);
    None when the input holds no user text."""
    if isinstance(items, str):
        return (1, items) if items.strip() else None
    if not isinstance(items, Sequence):
        return None
    count, latest = 0, None
    for item in items:
        text = _item_text(item)
        if text is not None:
            count += 1
            latest = text
    if latest is None or not latest.strip():
        return None
    return count, latest


class GatedInputFilter(StoreGate):
    """A ``RunConfig.call_model_input_filter`` that injects gated memory (see the module).

    ``memory`` is a recallwise store (any :class:`~recallwise.stores.base.Searcher`); ``actor_id``
    whose memory it reads; ``namespaces`` the templates searched (default: the policy's). The
    keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
    ``decider`` (``None``: the stock arm), ``options``, ``stats``, ``log``.
    """

    async def __call__(self, data: CallModelData[Any]) -> ModelInputData:
        model_data = data.model_data
        turn = user_turn(model_data.input)
        if turn is None:
            return model_data
        recall = await self.adecide(turn[1], turn=turn)
        if recall is None or not recall.context:
            return model_data
        instructions = (
            f"{model_data.instructions}\n\n{recall.context}" if model_data.instructions else recall.context
        )
        return ModelInputData(input=model_data.input, instructions=instructions)
