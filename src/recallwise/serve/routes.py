"""The HTTP API's routes: functions from a request model to the service's response model.

Each route's return type is its response model (:mod:`.models`): FastAPI documents it in
``/openapi.json``, validates what the route returns against it and serialises it, leaving out the
fields the service did not set (``response_model_exclude_unset``); mypy checks that the service's
operation returns that model.

A route runs the service's operation in a worker thread (``run_in_threadpool``): embedding, the
store and the judge never run on the event loop. The route itself is ``async``, and so are the
dependencies (who is asking, the service, the metrics: they only read the app's state): FastAPI
runs a plain ``def`` route or dependency in a worker thread too, and checks a plain route's answer
in another, a thread hop apiece that measurably lowered the service's requests/s.
"""

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import PlainTextResponse

from .. import __version__
from .access import LOCAL, Principal, ServiceError
from .auth import presented_key
from .metrics import Metrics
from .models import (
    MAX_ID,
    DeletedRecord,
    EventsIn,
    EventsOut,
    ForgotActor,
    Health,
    JudgeIn,
    JudgeOut,
    Ready,
    RecallIn,
    RecallOptionsIn,
    RecallOut,
    RecordPage,
    RecordsIn,
    RecordsOut,
    SearchIn,
    SearchOut,
    SystemOneIn,
    SystemOneOut,
)
from .service import MemoryService

__all__ = ["api", "principal"]


async def principal(request: Request) -> Principal:
    """Who is asking: the principal of the request's API key (``Authorization: Bearer KEY`` or
    ``X-Api-Key``), 401 without a valid one; the one local principal on a server without keys."""
    keyring = request.app.state.keyring
    if keyring is None:
        return LOCAL
    found = keyring.principal(presented_key(request.headers))
    if found is None:
        raise ServiceError(401, "a valid API key is required (Authorization: Bearer KEY)")
    return found


async def optional_principal(request: Request) -> Principal | None:
    """The principal of the request's key, LOCAL without keys, None without a valid key (for the
    routes anyone may call, which tell a key's holder more)."""
    keyring = request.app.state.keyring
    return LOCAL if keyring is None else keyring.principal(presented_key(request.headers))


async def _service(request: Request) -> MemoryService:
    return request.app.state.service


async def _metrics(request: Request) -> Metrics:
    return request.app.state.metrics


Who = Annotated[Principal, Depends(principal)]
Service = Annotated[MemoryService, Depends(_service)]
Counters = Annotated[Metrics, Depends(_metrics)]

api = APIRouter()


# ---- reads ---------------------------------------------------------------------------------------
@api.post("/v1/recall", tags=["recall"], response_model_exclude_unset=True)
async def recall(body: RecallIn, who: Who, service: Service, metrics: Counters) -> RecallOut:
    """The gate, route, search and judge for one user message: what to inject, and why."""
    options = body.options or RecallOptionsIn()
    result = await run_in_threadpool(
        service.recall,
        who,
        body.actor_id,
        body.message,
        session_id=body.session_id,
        namespaces=body.namespaces,
        top_k=options.top_k,
        max_records=options.max_records,
        stock=options.stock,
    )
    metrics.observe_turn(result.trace.timings_ms)
    return result


@api.post("/v1/search", tags=["debug"], response_model_exclude_unset=True)
async def search(body: SearchIn, who: Who, service: Service) -> SearchOut:
    """Ungated, bounded search over the actor's namespaces (for debugging)."""
    return await run_in_threadpool(
        service.search, who, body.actor_id, body.query, namespaces=body.namespaces, limit=body.limit
    )


@api.post("/v1/judge", tags=["recall"], response_model_exclude_unset=True)
async def judge(body: JudgeIn, who: Who, service: Service) -> JudgeOut:
    """The policy's judge over records your own memory returned: which belong in the prompt."""
    candidates = [c.model_dump() for c in body.candidates]
    return await run_in_threadpool(
        service.judge, who, body.actor_id, body.message, candidates, stock=body.stock, gate=body.gate
    )


@api.get("/v1/records", tags=["records"], response_model_exclude_unset=True)
async def list_records(
    who: Who,
    service: Service,
    actor_id: str,
    namespace: str | None = None,
    cursor: Annotated[int, Query(ge=0, le=MAX_ID)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_ID)] = 50,
) -> RecordPage:
    """A page of the actor's records, oldest first."""
    return await run_in_threadpool(
        service.list_records, who, actor_id, namespace=namespace, cursor=cursor, limit=limit
    )


# ---- writes --------------------------------------------------------------------------------------
@api.post("/v1/events", tags=["write"], response_model_exclude_unset=True)
async def add_events(body: EventsIn, who: Who, service: Service) -> EventsOut:
    """Conversation messages in; facts and preferences extracted and consolidated into records."""
    messages = [m.model_dump() for m in body.messages]
    return await run_in_threadpool(
        service.add_events, who, body.actor_id, body.session_id, messages, extract=body.extract
    )


@api.post("/v1/records", tags=["write"], response_model_exclude_unset=True)
async def add_records(body: RecordsIn, who: Who, service: Service) -> RecordsOut:
    """Records written as given (no extraction)."""
    records = [r.model_dump() for r in body.records]
    return await run_in_threadpool(service.add_records, who, body.actor_id, records)


@api.delete("/v1/records/{record_id}", tags=["write"])
async def delete_record(record_id: str, who: Who, service: Service) -> DeletedRecord:
    """Delete one record."""
    return await run_in_threadpool(service.delete_record, who, record_id)


@api.delete("/v1/actors/{actor_id}", tags=["write"])
async def forget_actor(actor_id: str, who: Who, service: Service) -> ForgotActor:
    """Forget a user (needs the admin scope): every record and event of theirs, their turns in the
    decision log and the labels given to them, deleted in this request; the counts in the reply."""
    return await run_in_threadpool(service.forget_actor, who, actor_id)


# ---- the decider, as a system-one server ---------------------------------------------------------
@api.post("/v1/systemone", tags=["decider"])
async def systemone(body: SystemOneIn, who: Who, service: Service) -> SystemOneOut:
    """The configured decider in the system-one wire shape (any system-one client can use it)."""
    questions = {name: q.model_dump(exclude_none=True) for name, q in body.questions.items()}
    return await run_in_threadpool(service.systemone, who, body.state, questions)


# ---- operations ----------------------------------------------------------------------------------
@api.get("/healthz", tags=["operations"])
async def healthz() -> Health:
    """Alive (the process answers)."""
    return Health(status="ok", version=__version__)


@api.get("/readyz", tags=["operations"])
async def readyz(service: Service, who: Annotated[Principal | None, Depends(optional_principal)]) -> Ready:
    """Ready: the store answers and the embedder is loaded. Not ready: 503, saying why to the one
    local user (a server without keys) and to an operator key only; to anyone else (no key: a
    load balancer's probe) just "not ready", since why names the database's host, port and user."""
    try:
        return await run_in_threadpool(service.ready)
    except Exception as exc:  # not ready, whatever the reason
        if who is None or (who.tenant is not None and "operator" not in who.scopes):
            raise ServiceError(503, "not ready") from None
        raise ServiceError(503, f"not ready: {type(exc).__name__}: {exc}") from None


@api.get("/metrics", tags=["operations"], response_class=PlainTextResponse)
def prometheus(who: Who, metrics: Counters) -> PlainTextResponse:
    """The counters and latency histograms, in Prometheus text format."""
    who.require("operator")  # every tenant's figures: not a tenant's admin
    body, content_type = metrics.render()
    return PlainTextResponse(body, media_type=content_type)
