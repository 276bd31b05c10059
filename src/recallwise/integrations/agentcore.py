"""A drop-in for AgentCore Memory's Strands session manager that gates retrieval.

>>> from recallwise.integrations.agentcore import GatedAgentCoreMemorySessionManager
>>> manager = GatedAgentCoreMemorySessionManager(config, region_name="us-west-2")
>>> agent = Agent(session_manager=manager)

:class:`GatedAgentCoreMemorySessionManager` subclasses
``bedrock_agentcore.memory.integrations.strands.session_manager.AgentCoreMemorySessionManager``
and overrides only ``retrieve_customer_context``. Persistence, restore, batching and async
mode are upstream's, untouched.

* ``decider=None`` is upstream's behaviour exactly (it runs upstream's own method): retrieve
  on every user text message from every configured namespace, keep records scoring at least
  the namespace's ``relevance_score``.
* With a decider (default: the offline embedded one), each user turn is gated first (no
  AgentCore call at all when memory cannot help), then the records that come back -- still
  subject to each namespace's ``top_k`` and ``relevance_score`` -- are judged, and only the
  kept ones are injected. The kept records are a subset of what upstream would inject.

The injection format is upstream's: one ``{"text": "<user_context>...</user_context>"}``
block (``context_tag`` honoured) inserted first in the last user message. The records
inside are rendered to prose and escaped (memory text is untrusted), one per line.

Service errors are counted, not hidden. ``MemoryClient.retrieve_memories`` -- the call
upstream makes, and this class makes too, so that code and tests written against upstream
keep working -- catches every ``ClientError`` from the data plane's ``RetrieveMemoryRecords``
and returns ``[]``, so a throttled or failing memory looks like "no memories". This class
listens on the data-plane client's botocore ``after-call`` event for that operation and
counts every failed call in ``stats`` (``store_errors``, ``errors_by_kind`` such as
``store:ThrottlingException``) in both modes; in the gated mode a failed namespace is also
reported in the turn's trace and nothing is injected that turn.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ..deciders import Decider
from ..embeddings import Embedder
from ..errors import InvalidIdError, UsageError
from ..extras import extra_imports
from ..policy import DecisionLog, RecallOptions, RecallPolicy, RecallStats, message_text
from ..policy.options import FLAT_NAMES, with_shorthand
from ..policy.pack import CLOSE_TAG, OPEN_TAG, count_tokens
from ..records import MemoryRecord, SearchHit, validate_id
from ..stores.agentcore import AgentCoreError
from ..stores.base import SearchRequest
from ._foreign import DEFAULT_DECIDER, FrameworkGate

with extra_imports("agentcore", "recallwise.integrations.agentcore"):
    from bedrock_agentcore.memory.integrations.strands.config import RetrievalConfig
    from bedrock_agentcore.memory.integrations.strands.session_manager import AgentCoreMemorySessionManager
    from botocore.exceptions import ParamValidationError
    from strands.experimental.bidi import BidiAgent
    from strands.hooks import MessageAddedEvent


__all__ = ["GatedAgentCoreMemorySessionManager"]

logger = logging.getLogger(__name__)

_RETRIEVE_EVENT = "after-call.bedrock-agentcore.RetrieveMemoryRecords"
_PARAMS_EVENT = "provide-client-params.bedrock-agentcore.RetrieveMemoryRecords"


class GatedAgentCoreMemorySessionManager(AgentCoreMemorySessionManager, FrameworkGate):
    """``AgentCoreMemorySessionManager`` with recallwise's gate and judge in front of retrieval.

    Upstream's arguments, positional and keyword (``converter=`` and the rest), are upstream's. The
    keywords every gate takes (:class:`~recallwise.integrations._foreign.FrameworkGate`):
    ``decider`` (``None`` = upstream behaviour exactly), ``options`` (the decider's measured
    thresholds where it sets none; the manager searches each namespace as deep as its
    ``RetrievalConfig`` says), ``embedder`` (the local one, for deciders that use a query vector),
    ``stats``, ``log``. Its own: ``namespace_descriptions``, ``{namespace template: what it
    holds}`` for two or more namespaces, lets the decider route a turn to the namespaces worth
    searching.
    """

    _owned = MappingProxyType({"top_k": 10})
    _why = ": each RetrievalConfig's top_k says how deep its namespace is searched"

    def __init__(
        self,
        agentcore_memory_config: Any,
        region_name: str | None = None,
        boto_session: Any = None,
        boto_client_config: Any = None,
        *,
        decider: Decider | Any | None = DEFAULT_DECIDER,
        options: RecallOptions | None = None,
        embedder: Embedder | None = None,
        stats: RecallStats | None = None,
        log: DecisionLog | str | os.PathLike[str] | None = None,
        namespace_descriptions: Mapping[str, str] | None = None,
        **upstream_keywords: Any,
    ) -> None:
        # checked here, before any AWS call (a misspelt option, one the manager sets itself)
        misplaced = sorted(k for k in upstream_keywords if k in FLAT_NAMES or k == "thresholds")
        if misplaced:  # upstream would take them and say nothing
            raise UsageError(
                f"GatedAgentCoreMemorySessionManager: {', '.join(misplaced)} is not an upstream keyword; "
                "recallwise's options go in options=RecallOptions(...)"
            )
        self._configure(decider=decider, options=options, embedder=embedder, stats=stats, log=log)
        try:
            super().__init__(
                agentcore_memory_config, region_name, boto_session, boto_client_config, **upstream_keywords
            )
        except ParamValidationError as exc:
            # A placeholder or mistyped id ("MEMORY_ID") fails botocore's checks on the first call
            # upstream makes: one clear line instead of a traceback. (The id is not checked before
            # that: upstream accepts any id with a mocked client, and so must a drop-in.)
            memory_id = getattr(agentcore_memory_config, "memory_id", None)
            raise UsageError(
                f"AgentCoreMemoryConfig.memory_id {memory_id!r} was refused before any request was sent: "
                f"{' '.join(str(exc).split())} (an AgentCore memory id looks like my_memory-a1B2c3D4e5; "
                "see `aws bedrock-agentcore-control list-memories`)"
            ) from None
        self.namespace_descriptions = dict(namespace_descriptions or {})
        self._policy_key: tuple[Any, ...] | None = None
        self._local = threading.local()
        self._stock_lock = threading.Lock()
        self._stock_calls: list[tuple[str, list[dict[str, Any]] | None, str | None]] = []
        self._listen_to_data_plane()

    def close(self) -> None:
        """Upstream's ``close`` (pending messages flushed), then the gate's worker threads released."""
        super().close()
        FrameworkGate.close(self)

    # ---- seeing the errors retrieve_memories swallows ----------------------------------------
    def _listen_to_data_plane(self) -> None:
        try:
            from botocore.hooks import BaseEventHooks
        except ImportError:  # pragma: no cover - botocore comes with bedrock-agentcore
            return
        client = getattr(self.memory_client, "gmdp_client", None)
        events = getattr(getattr(client, "meta", None), "events", None)
        if not isinstance(events, BaseEventHooks):
            return  # not a real botocore client (a test double): nothing to listen to
        events.register(_PARAMS_EVENT, self._note_namespace, unique_id=f"recallwise-ns-{id(self)}")
        events.register(_RETRIEVE_EVENT, self._after_retrieve, unique_id=f"recallwise-rt-{id(self)}")

    @staticmethod
    def _note_namespace(params: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        context["recallwise_namespace"] = params.get("namespacePath") or params.get("namespace") or ""

    def _after_retrieve(
        self, http_response: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any
    ) -> None:
        status = int(getattr(http_response, "status_code", 200) or 200)
        error = None
        if status >= 300:
            error = str((parsed.get("Error") or {}).get("Code") or f"HTTP {status}")
        slot = getattr(self._local, "slot", None)
        if slot is not None:  # a gated fetch on this thread: it raises, and the policy counts it
            if error is not None:
                slot.append(error)
            return
        # upstream's own retrieval (stock mode): count here, nobody else will
        namespace = str((context or {}).get("recallwise_namespace", ""))
        records = None if error is not None else list(parsed.get("memoryRecordSummaries") or [])
        with self._stock_lock:
            self._stock_calls.append((namespace, records, error))
        if error is not None:
            self.stats.error("store", error)

    # ---- the one override --------------------------------------------------------------------
    def retrieve_customer_context(self, event: MessageAddedEvent) -> None:
        """Retrieve long-term memory for the last user message, gated and judged (see the module)."""
        if self.decider is None:
            self._stock_turn(event)
            return None
        if isinstance(event.agent, BidiAgent):
            return None
        messages = event.agent.messages
        if not messages or messages[-1].get("role") != "user":
            return None
        content = messages[-1].get("content")
        if not content or "text" not in content[0]:
            return None  # upstream's condition: tool results and non-text first blocks are not queries
        if not self.config.retrieval_config:
            return None
        query = message_text(content)
        try:
            policy = self._current_policy()
            if policy is None:
                return None
            recall = policy.recall(query, actor_id=self._policy_actor(), session_id=None)
        except Exception:  # never break the agent's turn; upstream logs and carries on too
            logger.exception("recallwise: gated retrieval failed; nothing injected this turn")
            return None
        self.last_recall = recall
        if recall.context:
            inner = recall.context
            if inner.startswith(OPEN_TAG) and inner.endswith(CLOSE_TAG):
                inner = inner[len(OPEN_TAG) : -len(CLOSE_TAG)]
            tag = self.config.context_tag
            content.insert(0, {"text": f"<{tag}>{inner}</{tag}>"})
            logger.info("Injected %s customer context items (gated)", len(recall.records))
        return None

    # ---- stock mode bookkeeping ----------------------------------------------------------------
    def _stock_turn(self, event: MessageAddedEvent) -> None:
        """Upstream's method, unchanged, with the counters a comparison needs around it."""
        messages = getattr(event.agent, "messages", None) or []
        content = messages[-1].get("content") if messages else None
        before = len(content) if isinstance(content, list) else 0
        with self._stock_lock:
            self._stock_calls = []
        started = time.perf_counter()
        super().retrieve_customer_context(event)
        elapsed_ms = (time.perf_counter() - started) * 1000.0
        eligible = (
            not isinstance(event.agent, BidiAgent)
            and bool(messages)
            and messages[-1].get("role") == "user"
            and isinstance(content, list)
            and bool(content)
            and "text" in content[0]
            and bool(self.config.retrieval_config)
        )
        if not eligible or not isinstance(content, list):
            return
        with self._stock_lock:
            calls, self._stock_calls = self._stock_calls, []
        floors = self._stock_floors()
        returned = sum(len(records or []) for _, records, _ in calls)
        kept = 0
        for namespace, records, _ in calls:
            floor = floors.get(namespace)
            for memory in records or []:
                text = (memory.get("content") or {}).get("text", "")
                if (
                    isinstance(text, str)
                    and text.strip()
                    and (not floor or memory.get("score", 0.0) >= floor)
                ):
                    kept += 1
        block = content[0]["text"] if len(content) > before else ""
        self.stats.add(
            turns=1,
            baseline_retrievals=1,
            retrievals=1,
            records_returned=returned,
            records_injected=kept,
            records_dropped=returned - kept,
            context_chars=len(block),
            context_tokens=count_tokens(block),
            memory_ms=elapsed_ms,
        )

    def _stock_floors(self) -> dict[str, float]:
        floors: dict[str, float] = {}
        for template, config in (self.config.retrieval_config or {}).items():
            resolved = self._resolve(template, config)
            if resolved is not None:
                floors[resolved] = config.relevance_score
        return floors

    # ---- gated mode ----------------------------------------------------------------------------
    def _resolve(self, template: str, config: RetrievalConfig) -> str | None:
        """A namespace template resolved the way upstream resolves it, or None if it cannot be."""
        try:
            return template.format(
                actorId=self.config.actor_id,
                sessionId=self.config.session_id,
                memoryStrategyId=config.strategy_id or "",
            )
        except (KeyError, IndexError, ValueError) as exc:
            logger.error("Failed to resolve namespace %s: %s", template, exc)
            return None

    def _policy_actor(self) -> str:
        # namespaces arrive resolved; the policy only needs a safe id for its own checks
        try:
            return validate_id(self.config.actor_id, "actor_id")
        except InvalidIdError:
            return "agentcore-actor"

    def _current_policy(self) -> RecallPolicy | None:
        configs: dict[str, RetrievalConfig] = {}
        descriptions: dict[str, str] = {}
        for template, config in (self.config.retrieval_config or {}).items():
            resolved = self._resolve(template, config)
            if resolved is not None:
                configs[resolved] = config
                descriptions[resolved] = self.namespace_descriptions.get(template, "")
        if not configs:
            return None
        key = tuple((ns, c.top_k, c.relevance_score, descriptions[ns]) for ns, c in configs.items())
        if self.policy is None or key != self._policy_key:
            if self.policy is not None:
                self.policy.close()
            namespaces: Any = (
                descriptions if sum(1 for d in descriptions.values() if d) >= 2 else list(configs)
            )
            self.policy = self._policy_over(
                _RetrievalView(self, configs),
                namespaces,
                with_shorthand(self.options, {"top_k": max(c.top_k for c in configs.values())}),
            )
            self._policy_key = key
        return self.policy

    def _fetch(self, namespace: str, query: str, top_k: int) -> list[dict[str, Any]]:
        """Upstream's retrieval call for one namespace, raising when the service refused it."""
        slot: list[str] = []
        self._local.slot = slot
        try:
            memories = self.memory_client.retrieve_memories(
                memory_id=self.config.memory_id, namespace_path=namespace, query=query, top_k=top_k
            )
        finally:
            self._local.slot = None
        if slot:
            raise AgentCoreError(
                f"RetrieveMemoryRecords failed for namespace {namespace!r}: {slot[-1]}",
                code=slot[-1],
                operation="retrieve_memory_records",
            )
        return list(memories or [])

    @property
    def embedder(self) -> Embedder:
        return self._judge_embedder()


class _RetrievalView:
    """The manager's long-term memory as a :class:`~recallwise.stores.Searcher`, for its policy.

    ``search`` makes upstream's retrieval call with the namespace's ``top_k`` and applies its
    ``relevance_score`` floor, so the judge only sees records that upstream would have injected.
    """

    local = False

    def __init__(
        self, manager: GatedAgentCoreMemorySessionManager, configs: dict[str, RetrievalConfig]
    ) -> None:
        self.manager = manager
        self.configs = configs

    @property
    def embedder(self) -> Embedder:
        return self.manager.embedder

    def search(self, request: SearchRequest) -> list[SearchHit]:
        namespace, query, text = request.namespace, request.query, request.text
        config = self.configs[namespace]
        query_text = text if text is not None else (query if isinstance(query, str) else "")
        memories = self.manager._fetch(namespace, query_text, config.top_k)
        hits = []
        for memory in memories:
            if not isinstance(memory, dict):
                continue
            score = memory.get("score", 0.0)
            if config.relevance_score and score < config.relevance_score:
                continue
            content = memory.get("content", {})
            record_text = content.get("text", "").strip() if isinstance(content, dict) else ""
            if not record_text:
                continue
            record = MemoryRecord(
                actor_id=self.manager.config.actor_id,
                namespace=namespace,
                text=record_text,
                strategy=str(memory.get("memoryStrategyId") or "agentcore"),
                metadata={"memoryRecordId": memory.get("memoryRecordId")},
            )
            if memory.get("memoryRecordId"):
                record.id = str(memory["memoryRecordId"])
            hits.append(SearchHit(record, float(score)))
        return hits
