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

Over LlamaIndex's own memory, :meth:`GatedMemoryBlock.wrapping` gates any block (a
``VectorMemoryBlock``, a ``FactExtractionMemoryBlock``, a ``StaticMemoryBlock``): the gate decides once
per user turn whether the inner block is pulled at all (closed: not called, nothing returned; open, or
deciding failed: the inner block's own content, its stock behaviour). :class:`RecallwiseJudge` is the
judge as a node postprocessor, for ``VectorMemoryBlock(node_postprocessors=[...])``: it keeps the
retrieved messages that answer the user's message (not the joined recent messages the block searches
with), best first::

    gated = GatedMemoryBlock.wrapping(VectorMemoryBlock(vector_store=..., embed_model=...), actor_id="u1")
    gated.inner.node_postprocessors.append(gated.judge())
    memory = Memory.from_defaults(session_id="s1", memory_blocks=[gated])

Needs: ``pip install 'recallwise[llamaindex]'`` (tested on llama-index-core 0.14.25).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Unpack

from ..embeddings import Embedder
from ..extras import extra_imports
from ..records import MemoryRecord, SearchHit, score_from_cosine
from ..stores.base import Searcher, SearchRequest
from ._foreign import GateKeywords, StoreGate, TurnGate, scope_of, scoped, unique_key

with extra_imports("llamaindex", "recallwise.integrations.llamaindex"):
    from llama_index.core.base.llms.types import ChatMessage, TextBlock
    from llama_index.core.bridge.pydantic import Field, PrivateAttr
    from llama_index.core.memory.memory import BaseMemoryBlock
    from llama_index.core.postprocessor.types import BaseNodePostprocessor
    from llama_index.core.schema import NodeWithScore, QueryBundle

__all__ = ["BlockGate", "GatedMemoryBlock", "RecallwiseJudge", "user_turn"]

#: the user's message of the turn a wrapped block is pulled for (the judge reads it: the block
#: itself searches with the recent messages joined, assistant text included)
_TURN_MESSAGE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "recallwise_turn_message", default=None
)


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


class _NodeSearcher:
    """The searcher of a :class:`BlockGate`: the wrapped block searches, not recallwise. Asked for
    the turn's gate alone it finds nothing; asked to judge a retrieval, it hands the policy the
    nodes the block found (the request's scope)."""

    local = True

    def __init__(self, embedder: Callable[[], Embedder]) -> None:
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder:
        return self._embedder()

    def search(self, request: SearchRequest) -> list[SearchHit]:
        hits: list[SearchHit] | None = scope_of(request, self)
        return list(hits) if hits is not None else []


class BlockGate(TurnGate):
    """The gate of :meth:`GatedMemoryBlock.wrapping` and :class:`RecallwiseJudge`: the policy's
    gate once per user turn (its searcher finds nothing: the wrapped block searches), and its judge
    over the nodes the wrapped block retrieved. The keywords every gate takes
    (:class:`~recallwise.integrations._foreign.GateKeywords`); ``decider=None`` is transparent."""

    def __init__(self, *, actor_id: str = "llamaindex", **gate: Unpack[GateKeywords]) -> None:
        self._configure(**gate)
        self._configure_turns(actor_id, None)
        self.searcher = _NodeSearcher(self._judge_embedder)
        self.policy = self._policy_over(self.searcher, ["llamaindex"])

    def judge_nodes(self, message: str, nodes: list[NodeWithScore]) -> list[NodeWithScore]:
        """The nodes the judge keeps for ``message``, best first (all of them when transparent or
        when judging fails: the block's stock result)."""
        if self.policy is None or not nodes or not message.strip():
            return nodes
        found: dict[str, NodeWithScore] = {}
        hits = []
        for node in nodes:
            text = node.node.get_content()
            if not isinstance(text, str) or not text.strip():
                continue
            key = unique_key(str(node.node.node_id), found)
            found[key] = node
            score = node.score if isinstance(node.score, (int, float)) else 0.0
            record = MemoryRecord(actor_id=self.actor_id, namespace="llamaindex", text=text, id=key)
            hits.append(SearchHit(record, min(max(score_from_cosine(float(score)), 0.0), 1.0)))
        if not hits:
            return nodes
        try:
            # the gate's answer comes from the policy's decision cache (the block asked it this turn)
            recall = self.policy.recall(
                message,
                actor_id=self.actor_id,
                extensions=scoped(self.searcher, hits),
                top_k=len(hits),
                max_records=len(hits),
            )
        except Exception as exc:
            self._fell_back(exc)
            return nodes
        self.last_recall = recall
        kept = sorted(recall.records, key=lambda k: -(k.judge_p if k.judge_p is not None else k.score))
        return [found[k.record.id] for k in kept if k.record.id in found]


class GatedMemoryBlock(BaseMemoryBlock[Any]):
    """A LlamaIndex memory block holding recallwise's gated memory (see the module).

    Build it with :meth:`over` (a store and the gate's keywords); ``gate`` is the
    :class:`~recallwise.integrations._foreign.StoreGate` deciding (``gate.stats``,
    ``gate.last_recall``). ``name`` defaults to ``"recallwise"``; ``priority`` to 0 (never
    truncated: the gate already keeps only what the turn needs). ``_aput`` stores nothing: the
    store is written by recallwise's own write path (``remember``, events), not by chat flushes.
    """

    name: str = Field(default="recallwise", description="The name of the memory block.")
    accept_short_term_memory: bool = Field(default=False)
    _gate: StoreGate | BlockGate = PrivateAttr()
    _inner: BaseMemoryBlock[Any] | None = PrivateAttr(default=None)

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

    @classmethod
    def wrapping(
        cls, block: BaseMemoryBlock[Any], *, actor_id: str = "llamaindex", **gate: Unpack[GateKeywords]
    ) -> GatedMemoryBlock:
        """``block`` (any LlamaIndex memory block) behind the gate: pulled only on the turns that
        need memory; its name, description, priority and short-term flag are the gated block's."""
        if not isinstance(block, BaseMemoryBlock):
            raise TypeError(
                f"GatedMemoryBlock.wrapping takes a LlamaIndex memory block, got {type(block).__name__}"
            )
        gated = cls(
            name=block.name,
            description=block.description,
            priority=block.priority,
            accept_short_term_memory=block.accept_short_term_memory,
        )
        gated._inner = block
        gated._gate = BlockGate(actor_id=actor_id, **gate)
        return gated

    @property
    def gate(self) -> StoreGate | BlockGate:
        """The gate deciding this block's pulls."""
        return self._gate

    @property
    def inner(self) -> BaseMemoryBlock[Any] | None:
        """The wrapped block (None over a recallwise store)."""
        return self._inner

    def judge(self) -> RecallwiseJudge:
        """The judge as a node postprocessor sharing this block's gate (for a wrapped
        ``VectorMemoryBlock``'s ``node_postprocessors``)."""
        if not isinstance(self._gate, BlockGate):
            raise TypeError("judge() is for a wrapped block: over a recallwise store the gate judges already")
        return RecallwiseJudge.of(self._gate)

    async def _aget(self, messages: list[ChatMessage] | None = None, **block_kwargs: Any) -> Any:
        turn = user_turn(messages)
        if turn is None:
            return await self._inner.aget(messages, **block_kwargs) if self._inner is not None else ""
        key = (block_kwargs.get("session_id"), *turn)
        recall = await self._gate.adecide(turn[1], turn=key)
        if self._inner is None:
            return recall.context if recall is not None else ""
        if recall is not None and recall.trace.gate_open is False:
            return ""  # the turn needs no memory: the inner block is not pulled
        token = _TURN_MESSAGE.set(turn[1])
        try:
            return await self._inner.aget(messages, **block_kwargs)
        finally:
            _TURN_MESSAGE.reset(token)

    async def _aput(self, messages: list[ChatMessage]) -> None:
        if self._inner is not None:
            await self._inner._aput(messages)  # what the inner block's own aput would run

    async def atruncate(self, content: Any, tokens_to_truncate: int) -> Any:
        if self._inner is not None:
            return await self._inner.atruncate(content, tokens_to_truncate)
        return await super().atruncate(content, tokens_to_truncate)


class RecallwiseJudge(BaseNodePostprocessor):
    """recallwise's judge as a LlamaIndex node postprocessor: of the nodes a retrieval found, the
    ones that answer the user's message, best first (see the module). Build it with
    :meth:`GatedMemoryBlock.judge` (sharing the block's gate) or :meth:`of`."""

    _gate: BlockGate = PrivateAttr()

    @classmethod
    def of(cls, gate: BlockGate) -> RecallwiseJudge:
        judge = cls()
        judge._gate = gate
        return judge

    @classmethod
    def class_name(cls) -> str:
        return "RecallwiseJudge"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        message = _TURN_MESSAGE.get() or (query_bundle.query_str if query_bundle is not None else "")
        return self._gate.judge_nodes(message, list(nodes))

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        return self._postprocess_nodes(nodes, query_bundle)  # in-process: the embedded judge
