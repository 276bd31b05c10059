"""Gated memory for LlamaIndex (``llama-index-core``): ``GatedMemoryBlock``.

LlamaIndex's ``Memory`` pulls every memory block on every ``aget``, and its agents (``FunctionAgent``,
``ReActAgent``) call ``aget`` again after each round of tool calls; ``VectorMemoryBlock`` searches
each time with the last messages joined, top-k 2, no floor. A :class:`GatedMemoryBlock` is a
``BaseMemoryBlock`` over a recallwise store: its ``_aget`` asks the policy about the latest user
message once per user turn (the repeated pulls of a tool loop reuse the decision), returns nothing
when the gate closes and the kept records' context block when it opens. ``Memory`` renders block
content into the messages it returns for that call; the chat history it stores never holds it::

    from llama_index.core.memory import Memory
    from recallwise import open_store
    from recallwise.integrations.llamaindex import GatedMemoryBlock

    block = GatedMemoryBlock.over(open_store("sqlite:///memory.db"), actor_id="demo_user")
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[block])
    response = await agent.run("What should I have for dinner?", memory=memory)

``decider=None`` is the stock arm (recall on every pull). A failing decider fails open (the stock
records, counted in ``gate.stats``); anything else that fails while deciding returns nothing for the
block and is counted in ``gate.fallbacks``.

Needs: ``pip install 'recallwise[llamaindex]'`` (tested on llama-index-core 0.14.25).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Unpack

from ..extras import extra_imports
from ..stores.base import Searcher
from ._foreign import GateKeywords, StoreGate

with extra_imports("llamaindex", "recallwise.integrations.llamaindex"):
    from llama_index.core.base.llms.types import ChatMessage, TextBlock
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.memory.memory import BaseMemoryBlock

__all__ = ["GatedMemoryBlock", "user_turn"]


def _text(message: ChatMessage) -> str:
    return " ".join(b.text for b in message.blocks if isinstance(b, TextBlock) and b.text)


def user_turn(messages: Sequence[ChatMessage] | None) -> tuple[int, str] | None:
    """``(n, text)`` for the latest user message with text: the ``n``-th of the conversation (tool
    results and the assistant's messages are not user turns); None when there is none."""
    count, latest = 0, None
    for message in messages or []:
        role = getattr(message.role, "value", message.role)
        if role != "user":
            continue
        text = _text(message)
        if text.strip():
            count += 1
            latest = text
    return (count, latest) if latest is not None else None


class GatedMemoryBlock(BaseMemoryBlock[str]):
    """A LlamaIndex memory block holding recallwise's gated memory (see the module).

    Build it with :meth:`over` (a store and the gate's keywords); ``gate`` is the
    :class:`~recallwise.integrations._foreign.StoreGate` deciding (``gate.stats``,
    ``gate.last_recall``). ``name`` defaults to ``"recallwise"``; ``priority`` to 0 (never
    truncated: the gate already keeps only what the turn needs). ``_aput`` stores nothing: the
    store is written by recallwise's own write path (``remember``, events), not by chat flushes.
    """

    name: str = Field(default="recallwise", description="The name of the memory block.")
    accept_short_term_memory: bool = Field(default=False)
    _gate: StoreGate = PrivateAttr()

    @classmethod
    def over(
        cls,
        memory: Searcher,
        *,
        actor_id: str,
        session_id: str | None = None,
        namespaces: Sequence[str] | Mapping[str, str] | None = None,
        name: str = "recallwise",
        **gate: Unpack[GateKeywords],
    ) -> GatedMemoryBlock:
        """A block over the recallwise store ``memory`` for ``actor_id`` (the gate's keywords:
        ``decider``, ``options``, ``stats``, ``log``)."""
        block = cls(name=name)
        block._gate = StoreGate(
            memory, actor_id=actor_id, session_id=session_id, namespaces=namespaces, **gate
        )
        return block

    @property
    def gate(self) -> StoreGate:
        """The gate deciding this block's pulls."""
        return self._gate

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> str:
        turn = user_turn(messages)
        if turn is None:
            return ""
        session = block_kwargs.get("session_id")
        key = (session, *turn)
        recall = await self._gate.adecide(turn[1], turn=key)
        return recall.context if recall is not None else ""

    async def _aput(self, messages: list[ChatMessage]) -> None:
        return None
