"""Gated memory for Microsoft Agent Framework (``agent-framework-core``): ``GatedContextProvider``
and ``GatedMem0ContextProvider``.

Agent Framework adds memory through context providers: ``before_run(agent=, session=, context=,
state=)`` runs once per ``agent.run`` and may add messages to the ``SessionContext``; the stock
memory provider (``Mem0ContextProvider``) searches on every run. A :class:`GatedContextProvider`
asks the policy about the run's input messages first: when the gate closes it adds nothing and
searches nothing; when it opens it adds the kept records as one context message (one decision a
user turn: the runs of an ``AgentLoopMiddleware`` loop share the first one's). Context messages
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

:class:`GatedMem0ContextProvider` is Agent Framework's own ``Mem0ContextProvider`` (from
``agent-framework-mem0``) with its ``before_run`` gated and judged: the same constructor, the same
retrieval scope (``search_user_id`` / ``search_agent_id`` / ``search_application_id``, each
partition searched on its own as upstream does) and the same context message (``context_prompt``
then one memory a line); ``after_run`` still stores the run's messages in mem0::

    from agent_framework_mem0 import Mem0ContextProvider   # before
    from recallwise.integrations.agent_framework import GatedMem0ContextProvider

    memory = GatedMem0ContextProvider(mem0_client=AsyncMemory(), user_id="u1", search_user_id="u1")

Needs: ``pip install 'recallwise[agent-framework]'`` (tested on agent-framework-core 1.23.0); the
gated Mem0ContextProvider ``pip install 'recallwise[agent-framework-mem0]'`` (tested on
agent-framework-mem0 1.0.0b261015).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Unpack

from ..embeddings import Embedder
from ..extras import extra_imports, missing_modules, needs_extra
from ..records import SearchHit
from ..stores.base import Searcher, SearchRequest
from ._foreign import GateKeywords, StoreGate, TurnGate, foreign_owned

with extra_imports("agent-framework", "recallwise.integrations.agent_framework"):
    from agent_framework import AgentSession, ContextProvider, Message, SessionContext

#: the gated Mem0ContextProvider needs agent-framework-mem0 (and mem0ai): its own extra, so that
#: GatedContextProvider alone does not bring mem0 in
_MEM0_EXTRA = "agent-framework-mem0"
_HAS_MEM0 = not missing_modules(_MEM0_EXTRA)

if TYPE_CHECKING or _HAS_MEM0:
    from agent_framework_mem0 import Mem0ContextProvider

    from .mem0 import Mem0Searcher

__all__ = ["GatedContextProvider", "GatedMem0ContextProvider"]


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
        text = _input_text(context)
        if not text.strip():
            return
        session_id = (
            context.session_id if isinstance(context.session_id, str) and context.session_id else None
        )
        # one SessionContext is one run: one decision; an AgentLoopMiddleware's runs of one user
        # turn (their input its "continue" nudge) share its token, and the turn's first decision
        _, loop_turn = _turn_of(context)
        turn = loop_turn if loop_turn is not None else (session_id, id(context), text)
        recall = await self.adecide(text, turn=turn, session_id=_usable_id(session_id))
        if recall is None or not recall.context:
            return
        context.extend_messages(self, [Message(role="user", contents=[recall.context])])


def _input_text(context: SessionContext) -> str:
    """The run's input messages' text, one a line (the empty ones left out)."""
    return "\n".join(m.text for m in context.input_messages if m is not None and (m.text or "").strip())


def _usable_id(value: str | None) -> str | None:
    """``value`` when recallwise can key follow-ups on it (its id rules), else None."""
    from ..records import validate_id

    if value is None:
        return None
    try:
        return validate_id(value, "session_id")
    except ValueError:
        return None


def __getattr__(name: str) -> Any:
    # GatedMem0ContextProvider without its extra: the one line naming it
    if name == "GatedMem0ContextProvider":
        absent = ", ".join(map(repr, missing_modules(_MEM0_EXTRA)))
        raise ImportError(
            needs_extra(
                f"recallwise.integrations.agent_framework.{name}", _MEM0_EXTRA, f"no module named {absent}"
            )
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# ---- Agent Framework's own Mem0ContextProvider, gated ---------------------------------------------

#: how many memories mem0 returns a search when not told (mem0ai 2.2's ``search(top_k=20)``): what
#: Mem0ContextProvider gets per partition, and what the judge reads
MEM0_TOP_K = 20
#: the run option AgentLoopMiddleware marks each run of one loop (one user turn) with, the same
#: object for every iteration (agent-framework-core 1.23's ``_LOOP_ITERATION_TOKEN_KEY``)
_LOOP_TURN = "_agent_loop_iteration"


class _Partitions:
    """The retrieval partitions Mem0ContextProvider searches, each on its own (the user's, the
    agent's, or the application's alone), as one recallwise searcher: one namespace a partition,
    each a :class:`~recallwise.integrations.mem0.Mem0Searcher` keyed by that partition's id (the
    actor of its search, checked on every memory that comes back)."""

    def __init__(self, searchers: Mapping[str, tuple[Mem0Searcher, str]], local: bool) -> None:
        self.searchers = dict(searchers)
        self.local = local
        self.embedder: Embedder = next(iter(self.searchers.values()))[0].embedder

    def _route(self, request: SearchRequest) -> tuple[Mem0Searcher, SearchRequest]:
        searcher, entity_id = self.searchers[request.namespace]
        return searcher, replace(request, actor_id=entity_id)

    def search(self, request: SearchRequest) -> list[SearchHit]:
        searcher, routed = self._route(request)
        return searcher.search(routed)

    async def asearch(self, request: SearchRequest) -> list[SearchHit]:
        searcher, routed = self._route(request)
        return await searcher.asearch(routed)


def _turn_of(context: SessionContext) -> tuple[str | None, Any]:
    """The run's session id (when recallwise can key follow-ups on it) and its loop turn: an
    ``AgentLoopMiddleware`` runs the agent again and again for one user turn (its later runs'
    input is its "continue" nudge), marking every run of the turn with the same token in the
    run's options; a run outside a loop has none (its turn is its session and message)."""
    session_id = _usable_id(context.session_id if isinstance(context.session_id, str) else None)
    loop_turn = context.options.get(_LOOP_TURN) if isinstance(context.options, Mapping) else None
    return session_id, loop_turn


if TYPE_CHECKING or _HAS_MEM0:

    class GatedMem0ContextProvider(Mem0ContextProvider, TurnGate):
        """Agent Framework's ``Mem0ContextProvider`` with ``before_run`` gated and judged.

        Every argument of ``Mem0ContextProvider`` means what it means there (``mem0_client``,
        ``user_id`` / ``agent_id`` / ``application_id`` for storage, ``search_user_id`` /
        ``search_agent_id`` / ``search_application_id`` for retrieval, ``context_prompt``). The
        keywords every gate takes (:class:`~recallwise.integrations._foreign.GateKeywords`):
        ``decider`` (``None``: transparent, upstream's ``before_run`` exactly), ``options``,
        ``embedder`` (recallwise's, for the judge: default the memory's
        :class:`~recallwise.integrations.mem0.RecallwiseEmbedding` when it has one, else the
        offline MiniLM), ``stats``, ``log``. Its own: ``top_k`` (memories asked of mem0 per
        partition and judged; default mem0's own 20) and ``local`` (True when mem0 answers
        in-process in microseconds: no deadline thread).

        A run's ``before_run``:

        * asks the gate about the run's input messages once per user turn: the same message in
          the same session is answered again from that decision (a retried run, a workflow running
          the provider twice), and so is every iteration of an ``AgentLoopMiddleware`` loop
          (its "continue" nudges are the same turn); when the gate closes, mem0 is not searched
          and nothing is added;
        * when it opens, searches each configured partition as upstream does and adds the
          memories the judge kept, best first, as upstream's one context message
          (``context_prompt``, then a memory a line);
        * a failing decider fails open (the judge keeps every memory above the score floor,
          counted in ``stats.decider_errors``); anything else failing while deciding runs
          upstream's ``before_run`` instead (counted in ``fallbacks`` and logged).

        ``after_run`` is upstream's (the run's messages stored in mem0); the turns decided so
        far are forgotten after it, so a later turn never reuses a decision the write made stale.
        """

        _why = ": top_k says how many memories mem0 returns a partition, and every kept one is added"

        def __init__(
            self,
            source_id: str = Mem0ContextProvider.DEFAULT_SOURCE_ID,
            mem0_client: Any = None,
            api_key: Any = None,
            application_id: str | None = None,
            agent_id: str | None = None,
            user_id: str | None = None,
            search_application_id: str | None = None,
            search_agent_id: str | None = None,
            search_user_id: str | None = None,
            *,
            context_prompt: str | None = None,
            top_k: int = MEM0_TOP_K,
            local: bool = False,
            **gate: Unpack[GateKeywords],
        ) -> None:
            if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
                raise ValueError(f"top_k must be a whole number >= 1, got {top_k!r}")
            self._configure(foreign_owned(top_k), **gate)
            Mem0ContextProvider.__init__(
                self,
                source_id,
                mem0_client,
                api_key,
                application_id,
                agent_id,
                user_id,
                search_application_id,
                search_agent_id,
                search_user_id,
                context_prompt=context_prompt,
            )
            scopes = [(f, i) for f, i in (("user_id", search_user_id), ("agent_id", search_agent_id)) if i]
            if not scopes and search_application_id:  # upstream's app-only search
                scopes = [("app_id", search_application_id)]
            partitions: dict[str, tuple[Mem0Searcher, str]] = {}
            embedder = self._embedder
            for field, entity_id in scopes:
                searcher = Mem0Searcher(
                    self.mem0_client, embedder=embedder, actor_field=field, local=local, stats=self.stats
                )
                embedder = searcher.embedder  # one embedder (and its cache) for every partition
                partitions[f"mem0/{field}"] = (searcher, entity_id)
            # the actor decisions are counted and cached for: the first partition's id
            actor = next(iter(partitions.values()))[1] if partitions else "mem0"
            self._configure_turns(actor, None)
            self.partitions = _Partitions(partitions, local) if partitions else None
            self.policy = (
                self._policy_over(self.partitions, list(partitions)) if self.partitions is not None else None
            )

        async def before_run(
            self,
            *,
            agent: Any,
            session: AgentSession,
            context: SessionContext,
            state: dict[str, Any],
        ) -> None:
            """Ask the gate about the run's input; add the memories the judge kept (see the class)."""
            text = _input_text(context)
            if self.policy is None or not text.strip():
                # transparent, no retrieval scope (upstream warns once) or nothing to ask about
                await Mem0ContextProvider.before_run(
                    self, agent=agent, session=session, context=context, state=state
                )
                return
            self._validate_filters()  # upstream's configuration errors, raised as upstream raises them
            session_id, loop_turn = _turn_of(context)
            recall = await self.adecide(text, turn=loop_turn, session_id=session_id)
            if recall is None:  # deciding failed (counted in fallbacks): upstream's own search
                await Mem0ContextProvider.before_run(
                    self, agent=agent, session=session, context=context, state=state
                )
                return
            kept = sorted(recall.records, key=lambda k: -(k.judge_p if k.judge_p is not None else k.score))
            lines = "\n".join(k.record.text for k in kept)
            if lines:
                context.extend_messages(
                    self.source_id, [Message(role="user", contents=[f"{self.context_prompt}\n{lines}"])]
                )

        async def after_run(
            self,
            *,
            agent: Any,
            session: AgentSession,
            context: SessionContext,
            state: dict[str, Any],
        ) -> None:
            """Upstream's ``after_run`` (the run's messages stored in mem0); then the turns decided
            so far are forgotten: the memory changed."""
            try:
                await Mem0ContextProvider.after_run(
                    self, agent=agent, session=session, context=context, state=state
                )
            finally:
                session_id, loop_turn = _turn_of(context)
                # a loop's iteration is not the end of its turn: its decision stays for the next one
                key = self._key("", loop_turn, None, session_id) if loop_turn is not None else None
                known, recall = self._remembered(key) if key is not None else (False, None)
                self.forget_turns()
                if known:
                    self._remember(key, recall)
