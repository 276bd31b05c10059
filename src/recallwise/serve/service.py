"""The service's operations, scoped by tenant: what the HTTP API and the MCP server both call.

Every operation takes a :class:`Principal` (who is asking: a tenant and scopes, from an API key,
or the single local user of a server without keys) and the caller's own actor id. The actor id
the store sees is the tenant's: ``TENANT:ACTOR``, so two tenants' "alice" are two actors and a
request can never reach another tenant's records, whatever ids it sends: searches are filtered
by that actor, and a record id of another tenant is indistinguishable from an absent one. A
server without keys has one principal, whose actor ids are used as they are (so a store seeded
by ``recallwise demo`` is served unchanged).

Nothing here knows HTTP: every operation returns its response model (:mod:`.models`, the one
place the API's shapes are written), which the HTTP app serialises and the MCP server reads; errors
are :class:`ServiceError` with a status the transport maps.
Blocking work (embedding, the store, the judge) runs in the caller's thread; the HTTP app calls
these from worker threads, never on its event loop.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from ..deciders.wire import answers_to_wire
from ..embeddings.batching import BatchingEmbedder
from ..errors import InvalidIdError, InvalidValueError, StoreError
from ..extraction.pipeline import ExtractionLimitError, ExtractionLimits, extract_and_store
from ..policy import RecallPolicy
from ..policy.breaker import Attempt
from ..policy.turn import Recall
from ..records import (
    FACTS_NAMESPACE,
    PREFERENCES_NAMESPACE,
    Event,
    MemoryRecord,
    SearchHit,
    check_storable,
    resolve_namespace,
    score_from_cosine,
    validate_id,
)
from ..stores.base import SearchRequest, write_transaction
from ..stores.urls import store_kind
from .access import Principal, ServiceError
from .models import (
    DeletedRecord,
    EventsOut,
    ForgotActor,
    JudgeOut,
    JudgeVerdictOut,
    MessageOutcomeOut,
    Ready,
    RecallOut,
    RecordOut,
    RecordPage,
    RecordsOut,
    SearchOut,
    SystemOneOut,
    TraceOut,
)

__all__ = ["DEFAULT_NAMESPACES", "Limits", "MemoryService"]

#: What a recall searches by default: every namespace the write path writes (records.DEFAULT_NAMESPACES),
#: described for a route (asked only when a route threshold is given or fitted: policy.thresholds).
DEFAULT_NAMESPACES: dict[str, str] = {
    FACTS_NAMESPACE: "facts about the user: home, family, pets, health, work, plans",
    PREFERENCES_NAMESPACE: "the user's preferences: food, drink, travel, tools, style",
}


@dataclass(frozen=True)
class Limits:
    """What one request may carry (configurable; ``recallwise serve --help`` lists the flags).

    Past a limit the request is refused with 413 naming it, before anything is stored."""

    max_body_bytes: int = 1_000_000
    #: one text: a message, a record, a query, a candidate (also the extractor's limit a message)
    max_message_chars: int = 16_000
    max_records_per_write: int = 100
    max_events_per_write: int = 200
    #: characters one POST /v1/events extracts from (all its messages); extraction, embedding and
    #: consolidation grow with it (a request at both extraction limits: see docs/service.md)
    max_extract_chars: int = 32_000
    #: statements one POST /v1/events may extract (each is embedded and consolidated)
    max_extract_memories: int = 200
    #: one namespace template
    max_namespace_chars: int = 256
    #: namespace templates one request names (each is one search)
    max_namespaces: int = 16
    max_page: int = 100
    max_search: int = 50
    max_judge_candidates: int = 50
    #: seconds a request's whole body may take to arrive (past it: 408, the connection closed)
    body_timeout_s: float = 10.0
    #: labelled turns one refit preview may read (past it: 413); its time grows faster than linearly
    max_refit_labels: int = 2000
    #: seconds one refit preview may run (past it: stopped, 503)
    refit_timeout_s: float = 120.0
    #: refit previews of one tenant waiting or running at once (past it: 429)
    max_refits_per_tenant: int = 2
    #: refit previews running at once in this process (the others wait, tenants taking turns)
    refit_workers: int = 1
    #: how long ``/readyz`` waits for the store: a probe must answer while the database does
    #: not (a pool waiting for a connection would hold it for its own timeout, 15 s by default)
    ready_timeout_s: float = 2.0


@dataclass
class _Actor:
    """The caller's actor id and the one the store sees."""

    external: str
    internal: str

    def outward(self, namespace: str) -> str:
        """A stored namespace as the caller names it (its own actor id, no tenant)."""
        return (
            namespace.replace(self.internal, self.external) if self.internal != self.external else namespace
        )


@dataclass
class MemoryService:
    """One store and one gated policy (plus the stock arm, for comparisons), shared by every request.

    ``batch_embeddings`` wraps the store's embedder in a :class:`BatchingEmbedder`, so concurrent
    turns share its batched throughput.
    """

    store: Any
    policy: RecallPolicy
    namespaces: Sequence[str] | Mapping[str, str] = field(default_factory=lambda: dict(DEFAULT_NAMESPACES))
    limits: Limits = field(default_factory=Limits)
    stock: RecallPolicy | None = None
    batcher: BatchingEmbedder | None = None
    # readiness probes share one store check at a time: a dead database never piles them up
    _ready_pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="recallwise-ready"), repr=False
    )
    _ready_check: Future[int] | None = field(default=None, repr=False)
    _ready_attempt: Attempt | None = field(default=None, repr=False)
    _ready_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def open(
        cls,
        store: Any,
        *,
        decider: Any = "default",
        namespaces: Sequence[str] | Mapping[str, str] | None = None,
        limits: Limits | None = None,
        batch_embeddings: bool = True,
        max_batch: int = 16,
        log: Any = None,
    ) -> MemoryService:
        """A service over ``store`` with the default (embedded) decider unless one is given."""
        batcher = None
        if batch_embeddings and not isinstance(store.embedder, BatchingEmbedder):
            batcher = BatchingEmbedder(store.embedder, max_batch=max_batch)
            store.embedder = batcher
        chosen = dict(DEFAULT_NAMESPACES) if namespaces is None else namespaces
        kwargs: dict[str, Any] = {} if decider == "default" else {"decider": decider}
        policy = RecallPolicy(store, namespaces=chosen, log=log, **kwargs)
        stock = RecallPolicy(store, decider=None, namespaces=chosen, stats=None)
        return cls(store, policy, chosen, limits or Limits(), stock, batcher)

    # ---- ids ------------------------------------------------------------------------------------
    def actor(self, principal: Principal, actor_id: Any, field_name: str = "actor_id") -> _Actor:
        try:
            external = validate_id(actor_id, field_name)
        except InvalidIdError as exc:
            raise ServiceError(422, str(exc), field=field_name) from None
        internal = external if principal.tenant is None else f"{principal.tenant}:{external}"
        if len(internal) > 128:
            raise ServiceError(422, f"{field_name} is too long ({len(external)} chars)", field=field_name)
        return _Actor(external, internal)

    def _owns(self, principal: Principal, internal_actor: str) -> bool:
        return principal.tenant is None or internal_actor.startswith(f"{principal.tenant}:")

    def _external(self, principal: Principal, internal_actor: str) -> str:
        return internal_actor if principal.tenant is None else internal_actor[len(principal.tenant) + 1 :]

    def _templates(
        self, namespaces: Sequence[str] | None, field_name: str = "namespaces"
    ) -> list[str] | None:
        if namespaces is None:
            return None
        if not namespaces:
            raise ServiceError(
                422, f"{field_name}: give at least one template, or leave it out", field=field_name
            )
        _within(len(namespaces), self.limits.max_namespaces, field_name, "templates")
        for i, template in enumerate(namespaces):
            self._template(template, f"{field_name}.{i}")
        return list(namespaces)

    def _template(self, template: Any, field_name: str) -> str:
        """One namespace template of the caller's: a string with ``{actorId}``, within the limit,
        naming no placeholder the server cannot fill."""
        if not isinstance(template, str) or "{actorId}" not in template:
            raise ServiceError(
                422,
                f"{field_name}: {template!r} is not a template with {{actorId}} "
                "(e.g. /facts/{actorId}); the server fills in your actor",
                field=field_name,
            )
        _within(len(template), self.limits.max_namespace_chars, field_name, "chars")
        self._storable(template, field_name)
        try:
            resolve_namespace(template, actor_id="probe")
        except InvalidIdError as exc:
            raise ServiceError(
                422, f"{field_name}: {exc} (only {{actorId}} is filled in)", field=field_name
            ) from None
        return template

    def _storable(self, value: Any, field_name: str) -> None:
        try:
            check_storable(value, field_name)
        except InvalidValueError as exc:
            raise ServiceError(422, str(exc), field=exc.field) from None

    def _message(self, message: Any, field_name: str = "message") -> str:
        if not isinstance(message, str) or not message.strip():
            raise ServiceError(422, f"{field_name} must be a non-empty string", field=field_name)
        _within(len(message), self.limits.max_message_chars, field_name, "chars")
        self._storable(message, field_name)
        return message

    # ---- recall ---------------------------------------------------------------------------------
    def recall(
        self,
        principal: Principal,
        actor_id: Any,
        message: Any,
        *,
        session_id: str | None = None,
        namespaces: Sequence[str] | None = None,
        top_k: int | None = None,
        max_records: int | None = None,
        stock: bool = False,
    ) -> RecallOut:
        """The gate, route, search and judge for one message (``stock=True``: the control arm)."""
        principal.require("recall")
        actor = self.actor(principal, actor_id)
        text = self._message(message)
        session = self._session(session_id)
        policy = self.stock if stock and self.stock is not None else self.policy
        result = policy.recall(
            text,
            actor_id=actor.internal,
            session_id=session,
            namespaces=self._templates(namespaces),
            top_k=top_k,
            max_records=max_records,
        )
        return _recall_out(result, actor, detailed=_detailed(principal))

    def judge(
        self,
        principal: Principal,
        actor_id: Any,
        message: Any,
        candidates: Sequence[Mapping[str, Any]],
        *,
        stock: bool = False,
        gate: bool = False,
    ) -> JudgeOut:
        """The policy's judge over records a client's own memory returned (no search; ``gate``: the
        gate first, so a message that needs no memory keeps nothing).

        Each candidate is ``{text, id?, namespace?, score?}``; a missing score is the cosine score
        against the message. Returns the kept ones (in the caller's ids) and a verdict per candidate.
        """
        principal.require("recall")
        actor = self.actor(principal, actor_id)
        text = self._message(message)
        _within(len(candidates), self.limits.max_judge_candidates, "candidates", "records")
        policy = self.stock if stock and self.stock is not None else self.policy
        seen: dict[str, int] = {}
        for i, c in enumerate(candidates):
            given = c.get("id")
            if given is None:
                continue
            if given in seen:  # one id, two records: each verdict would be the other's too
                raise ServiceError(
                    422,
                    f"candidates.{i}.id: {given!r} is candidate {seen[given]}'s id too; give each "
                    "candidate its own id (or none)",
                    field=f"candidates.{i}.id",
                )
            seen[given] = i
        records: list[MemoryRecord] = []
        for i, c in enumerate(candidates):
            record_text = self._message(c["text"], f"candidates.{i}.text")
            namespace = str(c.get("namespace") or "/judged/{actorId}").replace("{actorId}", actor.internal)
            record = MemoryRecord(actor_id=actor.internal, namespace=namespace, text=record_text)
            if c.get("id") is not None:
                record.id = str(c["id"])
            records.append(record)
        hits: list[SearchHit] = []
        if records:  # one batch: the judge then needs no second embedding of the records
            embedder = policy.store.embedder
            query = embedder.embed([text])[0]
            vectors = embedder.embed([r.rendered for r in records])
            for record, row, c in zip(records, vectors, candidates, strict=True):
                record.embedding = row
                given = c.get("score")
                score = float(given) if given is not None else score_from_cosine(float(row @ query))
                hits.append(SearchHit(record, score))
        result = policy.judge(
            text, [(h.record.namespace, h) for h in hits], actor_id=actor.internal, gate=gate
        )
        kept = {k.record.id: k for k in result.records}
        verdicts = [
            JudgeVerdictOut(
                index=i,
                id=h.record.id if c.get("id") is not None else None,
                kept=h.record.id in kept,
                score=round(float(h.score), 6),
                judge_p=_rounded(kept[h.record.id].judge_p) if h.record.id in kept else None,
            )
            for i, (h, c) in enumerate(zip(hits, candidates, strict=True))
        ]
        return JudgeOut(
            gated=result.trace.gated,
            gate_open=result.trace.gate_open,
            context=result.context,
            kept=[v.index for v in verdicts if v.kept],
            candidates=verdicts,
            errors=_errors(result, actor, detailed=_detailed(principal)),
            error_kinds=list(result.trace.error_kinds),
        )

    def _session(self, session_id: Any) -> str | None:
        if session_id is None:
            return None
        try:
            return validate_id(session_id, "session_id")
        except InvalidIdError as exc:
            raise ServiceError(422, str(exc), field="session_id") from None

    # ---- search (ungated, for debugging) ---------------------------------------------------------
    def search(
        self,
        principal: Principal,
        actor_id: Any,
        query: Any,
        *,
        namespaces: Sequence[str] | None = None,
        limit: int = 10,
    ) -> SearchOut:
        """The best ``limit`` records of the actor's namespaces for ``query``, by score (no gate, no
        judge)."""
        principal.require("recall")
        actor = self.actor(principal, actor_id)
        text = self._message(query, "query")
        if not 1 <= limit <= self.limits.max_search:
            raise ServiceError(422, f"limit must be 1-{self.limits.max_search}, not {limit}", field="limit")
        templates = self._templates(namespaces) or list(self.namespaces)
        vector = self.store.embedder.embed([text])[0]
        hits: list[SearchHit] = []
        for template in templates:
            namespace = resolve_namespace(template, actor_id=actor.internal)
            hits += self.store.search(
                SearchRequest(namespace, vector, limit, actor_id=actor.internal, text=text)
            )
        best = sorted(hits, key=lambda h: -round(float(h.score), 6))[:limit]
        return SearchOut(
            query=text, results=[_record_out(h.record, actor, score=round(float(h.score), 6)) for h in best]
        )

    # ---- write path -----------------------------------------------------------------------------
    def add_events(
        self,
        principal: Principal,
        actor_id: Any,
        session_id: Any,
        messages: Sequence[Mapping[str, Any]],
        *,
        extract: bool = True,
    ) -> EventsOut:
        """Conversation messages -> events -> extraction (consolidated: an update replaces) -> records.

        The events and the records extracted from them land in one transaction, or nothing does;
        consolidation is serialized per actor (across threads, processes and replicas), so
        concurrent writes of one fact make one record. Extraction is bounded by ``limits``
        (``max_message_chars``, ``max_extract_chars``, ``max_extract_memories``): past one, 413.
        """
        principal.require("write")
        actor = self.actor(principal, actor_id)
        session = self._session(session_id) or "default"
        if not messages:
            raise ServiceError(422, "messages: give at least one message", field="messages")
        _within(len(messages), self.limits.max_events_per_write, "messages", "messages")
        events = []
        for i, item in enumerate(messages):
            role = item.get("role", "user")
            if role not in ("user", "assistant"):
                raise ServiceError(
                    422, f"messages.{i}.role must be user or assistant", field=f"messages.{i}.role"
                )
            text = self._message(item.get("text"), f"messages.{i}.text")
            events.append(Event(actor_id=actor.internal, session_id=session, role=role, text=text))
        if not extract:
            with write_transaction(self.store, actor.internal):
                for event in events:
                    self.store.create_event(event)
            return EventsOut(actor_id=actor.external, session_id=session, events=len(events))
        try:
            result = extract_and_store(
                self.store, actor.internal, events, store_events=True, limits=self.extraction_limits
            )
        except ExtractionLimitError as exc:
            raise ServiceError(413, f"messages: {exc}", field="messages") from None
        done = result.consolidation
        written = [*done.added, *(new for _, new in done.updated)]
        return EventsOut(
            actor_id=actor.external,
            session_id=session,
            events=len(events),
            memories_extracted=len(result.memories),
            added=len(done.added),
            updated=len(done.updated),
            unchanged=done.unchanged,
            records=[
                RecordOut(id=r.id, text=r.text, namespace=actor.outward(r.namespace), strategy=r.strategy)
                for r in written
            ],
            messages=[MessageOutcomeOut(**m.as_dict()) for m in result.messages],
            **({"note": result.why_nothing} if result.why_nothing else {}),
        )

    @property
    def extraction_limits(self) -> ExtractionLimits:
        return ExtractionLimits(
            max_message_chars=self.limits.max_message_chars,
            max_extract_chars=self.limits.max_extract_chars,
            max_extract_memories=self.limits.max_extract_memories,
        )

    def add_records(
        self, principal: Principal, actor_id: Any, records: Sequence[Mapping[str, Any]]
    ) -> RecordsOut:
        """Records written as given (no extraction), each into a namespace template of the caller;
        all of them in one transaction, or none."""
        principal.require("write")
        actor = self.actor(principal, actor_id)
        if not records:
            raise ServiceError(422, "records: give at least one record", field="records")
        _within(len(records), self.limits.max_records_per_write, "records", "records")
        built = []
        for i, item in enumerate(records):
            where = f"records.{i}"
            template = self._template(
                item.get("namespace") or next(iter(self.namespaces)), f"{where}.namespace"
            )
            metadata = item.get("metadata") or {}
            if not isinstance(metadata, Mapping):
                raise ServiceError(422, f"{where}.metadata must be an object", field=f"{where}.metadata")
            self._storable(dict(metadata), f"{where}.metadata")
            strategy = item.get("strategy") or "semantic"
            try:
                validate_id(strategy, f"{where}.strategy")
            except InvalidIdError as exc:
                raise ServiceError(422, str(exc), field=f"{where}.strategy") from None
            built.append(
                MemoryRecord(
                    actor_id=actor.internal,
                    namespace=resolve_namespace(template, actor_id=actor.internal),
                    text=self._message(item.get("text"), f"{where}.text"),
                    strategy=strategy,
                    metadata=dict(metadata),
                )
            )
        added = self.store.add_records(built)
        return RecordsOut(
            actor_id=actor.external, added=len(added), records=[_record_out(r, actor) for r in added]
        )

    def list_records(
        self,
        principal: Principal,
        actor_id: Any,
        *,
        namespace: str | None = None,
        cursor: int = 0,
        limit: int = 50,
    ) -> RecordPage:
        """A page of the actor's records, oldest first; ``next_cursor`` None on the last page."""
        principal.require("recall")
        actor = self.actor(principal, actor_id)
        if not 1 <= limit <= self.limits.max_page:
            raise ServiceError(422, f"limit must be 1-{self.limits.max_page}, not {limit}", field="limit")
        if cursor < 0:
            raise ServiceError(422, "cursor must be >= 0", field="cursor")
        resolved = None
        if namespace is not None:
            self._template(namespace, "namespace")
            resolved = resolve_namespace(namespace, actor_id=actor.internal)
        records = self.store.list_records(resolved, actor_id=actor.internal)
        page = records[cursor : cursor + limit]
        after = cursor + len(page)
        return RecordPage(
            actor_id=actor.external,
            total=len(records),
            records=[_record_out(r, actor) for r in page],
            next_cursor=after if after < len(records) else None,
        )

    def delete_record(self, principal: Principal, record_id: Any, actor_id: Any = None) -> DeletedRecord:
        """Delete one record of this tenant's; another tenant's id is "not found", as an absent one.
        With ``actor_id`` (an MCP client, which acts for its key's actor only), so is another
        actor's. The decision log keeps no copy of its text (the turns that returned it keep its
        id and verdict) nor its labels."""
        principal.require("write")
        try:
            rid = validate_id(record_id, "record_id")
        except InvalidIdError as exc:
            raise ServiceError(422, str(exc), field="record_id") from None
        owner = None if actor_id is None else self.actor(principal, actor_id).internal
        found = self.store.get_records([rid]).get(rid)
        if (
            found is None
            or not self._owns(principal, found.actor_id)
            or (owner is not None and found.actor_id != owner)
        ):
            raise ServiceError(404, f"no record {rid!r}", field="record_id")
        deleted = self.store.delete_records([rid])
        if self.policy.log is not None:  # its text in the turns that returned it, and its labels
            self.policy.log.forget_record(found.actor_id, rid)
        return DeletedRecord(deleted=deleted, id=rid)

    def forget_actor(self, principal: Principal, actor_id: Any) -> ForgotActor:
        """Forget a user, in this request: every record and event of the actor, every turn of
        theirs in the decision log (their messages, their records' texts) and the labels given to
        them (all a refit reads), and the conversation the follow-up question remembers (this
        process's); the counts in the reply."""
        principal.require("admin")
        actor = self.actor(principal, actor_id)
        if getattr(self.store, "forget_actor", None) is None:
            raise ServiceError(501, f"{type(self.store).__name__} cannot forget an actor")
        counts = self.policy.forget_actor(actor.internal)
        if self.stock is not None:
            self.stock.follow_ups.forget_actor(actor.internal)
        return ForgotActor(
            actor_id=actor.external,
            deleted_records=counts["records"],
            deleted_events=counts["events"],
            deleted_decisions=counts["decisions"],
            deleted_labels=counts["labels"],
        )

    # ---- the decider, as a system-one server ----------------------------------------------------
    def systemone(
        self, principal: Principal, state: str, questions: Mapping[str, Mapping[str, Any]]
    ) -> SystemOneOut:
        """The configured decider's answers to ``questions`` about ``state``, in the system-one
        wire shape (404 on a server without a decider: the stock arm asks nothing)."""
        principal.require("recall")
        decider = self.policy.decider
        if decider is None:
            raise ServiceError(404, "this server runs without a decider (the stock arm)")
        _within(len(state), self.limits.max_message_chars, "state", "chars")
        for name, question in questions.items():
            _check_examples(name, question)
        answers = decider.ask(state, {name: dict(q) for name, q in questions.items()})
        return SystemOneOut(answers=answers_to_wire(answers), model=decider.name)

    # ---- health ---------------------------------------------------------------------------------
    def ready(self) -> Ready:
        """Whether the store answers (within ``limits.ready_timeout_s``), its circuit is closed and
        the model is loaded; raises :class:`StoreError` if not.

        While a remote store's circuit is open every recall injects nothing, so the service is not
        ready. The check goes through the same breaker as recall: once the cool-down is over it
        may be the circuit's trial call, so a replica taken out of rotation (and sent no recalls)
        still finds out that its store is back.
        """
        breaker = None if self.policy.searcher.local else self.policy.store_breaker
        with self._ready_lock:
            if self._ready_check is None or self._ready_check.done():
                attempt = breaker.allow() if breaker is not None else None
                if breaker is not None and attempt is None:
                    raise StoreError(
                        f"the store's circuit is open after repeated failures ({breaker.refusal()})",
                        kind="unavailable",
                    )
                self._ready_check = self._ready_pool.submit(self.store.count_records)
                self._ready_attempt = attempt
                self._ready_check.add_done_callback(lambda done: self._settle_ready(done, attempt))
            check, attempt = self._ready_check, self._ready_attempt
        try:
            check.result(timeout=self.limits.ready_timeout_s)
        except FutureTimeout:
            if breaker is not None and attempt is not None:
                breaker.release(attempt)  # slow is not down: recall's own deadline decides that
            raise StoreError(
                f"the store did not answer within {self.limits.ready_timeout_s:g} s", kind="timeout"
            ) from None
        finally:
            if check.done():
                self._settle_ready(check, attempt)  # before reading the circuit's state below
        if breaker is not None and breaker.state != "closed":
            raise StoreError(
                f"the store's circuit is open after repeated failures ({breaker.refusal()})",
                kind="unavailable",
            )
        # the kind only: /readyz answers without a key, and a URL names hosts, files and users
        return Ready(status="ready", store=store_kind(self.store), embedder=self.store.embedder.name)

    def _settle_ready(self, check: Future[int], attempt: Attempt | None) -> None:
        """Tell the store's breaker how a readiness check went (once; later calls change nothing)."""
        if attempt is None:
            return
        breaker = self.policy.store_breaker
        if check.cancelled():
            breaker.release(attempt)
        elif check.exception() is None:
            breaker.success(attempt)
        else:
            breaker.failure(attempt)

    def close(self) -> None:
        self._ready_pool.shutdown(wait=False, cancel_futures=True)
        for policy in (self.policy, self.stock):
            if policy is not None:
                policy.close()
        if self.policy.log is not None:  # a log given to the service is the service's to close
            self.policy.log.close()
        if self.batcher is not None:
            self.batcher.close()
        self.store.close()


def _within(size: int, limit: int, field_name: str, unit: str) -> None:
    """A part of a request over its limit (``Limits``) is a 413 naming it, its size and the limit."""
    if size > limit:
        raise ServiceError(413, f"{field_name} has {size} {unit}; the limit is {limit}", field=field_name)


def _check_examples(name: str, question: Mapping[str, Any]) -> None:
    """Each example's label is of its question's type: true / false for a noul question, the name
    of one of its options for a choice (one of its levels for a score); 422 naming the label."""
    kind = question.get("type", "noul")
    criteria = question.get("criteria")
    options = [str(c) for c in criteria] if isinstance(criteria, (Mapping, list)) else []
    for i, example in enumerate(question.get("examples") or ()):
        label = example.get("label")
        where = f"questions.{name}.examples.{i}.label"
        if kind == "noul" and not isinstance(label, bool):
            raise ServiceError(
                422, f"{where}: a noul question's label is true or false, not {label!r}", field=where
            )
        if kind != "noul" and not isinstance(label, str):
            raise ServiceError(
                422,
                f"{where}: a {kind} question's label names one of its options, not {label!r}",
                field=where,
            )
        if kind != "noul" and options and label not in options:
            raise ServiceError(
                422,
                f"{where}: {label!r} is not one of the question's options ({', '.join(options)})",
                field=where,
            )


def _rounded(p: float | None) -> float | None:
    return None if p is None else round(float(p), 6)


def _record_out(record: MemoryRecord, actor: _Actor, **fields: Any) -> RecordOut:
    """A stored record in the caller's own ids (``fields``: what this answer adds, e.g. a score)."""
    return RecordOut(
        id=record.id,
        text=record.text,
        namespace=actor.outward(record.namespace),
        strategy=record.strategy,
        created_at=record.created_at,
        metadata=record.metadata,
        **fields,
    )


def _detailed(principal: Principal) -> bool:
    """Whether ``principal`` may read the store's own error messages, which name its host, port,
    user and database (or its file): the one local user, or an operator key; a tenant's recall
    key is told what failed, not where."""
    return principal.tenant is None or "operator" in principal.scopes


def _errors(result: Recall, actor: _Actor, *, detailed: bool = True) -> list[str]:
    """The turn's errors in the caller's own ids (not ``detailed``: a store error says which
    stage failed, and not the store's message)."""
    out = []
    for error in result.trace.errors:
        error = error.replace(actor.internal, actor.external)
        if not detailed and error.startswith(("store", "log")):
            where = error.split(": ", 1)[0]  # "store search /facts/alice", "store mentions", "log"
            error = f"{where}: failed (the details name the server's hosts or files: an operator's)"
        out.append(error)
    return out


def _recall_out(result: Recall, actor: _Actor, *, detailed: bool = True) -> RecallOut:
    """What ``RecallPolicy.recall`` returned, in the caller's own ids."""
    trace = result.trace
    return RecallOut(
        gated=trace.gated,
        gate_open=trace.gate_open,
        retrieved=result.retrieved,
        # retrieved although the gate alone would have closed: the follow-up question opened it
        follow_up=bool(
            result.retrieved
            and trace.follow_up_p is not None
            and trace.gate_p is not None
            and trace.gate_threshold is not None
            and trace.gate_p < trace.gate_threshold
        ),
        context=result.context,
        context_tokens=trace.context_tokens,
        records=[
            RecordOut(
                id=kept.record.id,
                text=kept.text,
                namespace=actor.outward(kept.namespace),
                score=round(float(kept.score), 6),
                judge_p=_rounded(kept.judge_p),
                strategy=kept.record.strategy,
                created_at=kept.record.created_at,
            )
            for kept in result.records
        ],
        trace=TraceOut(
            skipped=trace.skipped,
            gate_p=trace.gate_p,
            gate_threshold=trace.gate_threshold,
            follow_up_p=trace.follow_up_p,
            route=trace.route,
            namespaces_searched=list(trace.searched_templates),
            candidates=len(trace.candidates),
            kept=len(trace.kept),
            dropped=len(trace.dropped),
            keep_rule=trace.keep_rule,
            notes=list(trace.notes),
            timings_ms={k: round(v, 3) for k, v in trace.timings_ms.items()},
            cache_hit=trace.cache_hit,
        ),
        errors=_errors(result, actor, detailed=detailed),
        error_kinds=list(trace.error_kinds),
    )
