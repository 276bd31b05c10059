"""The HTTP API: versioned JSON over :class:`~recallwise.serve.service.MemoryService`.

``create_app(service, keyring)`` returns a FastAPI (ASGI) app; ``recallwise serve`` runs it with
uvicorn. Every endpoint is a plain ``def``, so FastAPI runs it in a worker thread: embedding,
the store and the judge never run on the event loop. The OpenAPI document is at
``/openapi.json`` (the TypeScript client is checked against it).

Errors are one JSON shape, ``{"error": {"message", "field", "status"}}``: 400 malformed JSON,
401 a missing or unknown key, 403 a scope the key lacks, 404 absent (or another tenant's: the
two cannot be told apart), 413 a body or field over its limit, 422 a wrong type, an unknown
field or a bad id, 503 the store is down (writes; a recall then answers 200 with an empty
context and the error, failing open like the library).
"""

import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

import anyio
import anyio.to_thread
from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from .. import __version__
from ..deciders.questions import ChoiceAnswer, ScoreAnswer
from ..errors import InvalidValueError, QuestionError, RecallwiseError, StoreError, UsageError
from .auth import Keyring
from .inspector import inspector_router
from .metrics import Metrics
from .service import LOCAL, MemoryService, Principal, ServiceError

__all__ = ["create_app"]

logger = logging.getLogger("recallwise.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


# ---- request and response bodies ------------------------------------------------------------------
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RecallOptionsIn(_Body):
    top_k: int | None = Field(
        default=None, ge=1, le=100, description="records searched per namespace this turn"
    )
    max_records: int | None = Field(default=None, ge=1, le=100, description="most records kept this turn")
    stock: bool = Field(
        default=False, description="the control arm: always retrieve, keep top_k (no decisions)"
    )


class RecallIn(_Body):
    actor_id: str = Field(description="your user's id (scoped by your key's tenant)")
    message: str = Field(description="the user's message this turn")
    session_id: str | None = Field(default=None, description="the conversation, for follow-ups ('go on')")
    namespaces: list[str] | None = Field(
        default=None, description="namespace templates, e.g. /facts/{actorId}"
    )
    options: RecallOptionsIn | None = None


class RecordOut(BaseModel):
    id: str
    text: str
    namespace: str
    score: float | None = None
    judge_p: float | None = None
    strategy: str = "semantic"
    created_at: float | None = None
    metadata: dict[str, Any] | None = None


class TraceOut(BaseModel):
    skipped: str | None
    gate_p: float | None
    gate_threshold: float | None
    follow_up_p: float | None
    route: dict[str, float] | None
    namespaces_searched: list[str]
    candidates: int
    kept: int
    dropped: int
    keep_rule: str
    notes: list[str]
    timings_ms: dict[str, float]
    cache_hit: bool


class RecallOut(BaseModel):
    gated: bool = Field(description="decisions were made (false: the stock arm)")
    gate_open: bool | None
    retrieved: bool
    follow_up: bool
    context: str = Field(description="the block to inject; empty when nothing is kept")
    context_tokens: int
    records: list[RecordOut]
    trace: TraceOut
    errors: list[str] = Field(description="what failed this turn (the turn failed open)")
    error_kinds: list[str]


class MessageIn(_Body):
    role: Literal["user", "assistant"] = "user"
    text: str


class EventsIn(_Body):
    actor_id: str
    session_id: str | None = None
    messages: list[MessageIn]
    extract: bool = Field(default=True, description="extract facts and preferences into records now")


class EventsOut(BaseModel):
    actor_id: str
    session_id: str
    events: int
    memories_extracted: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    records: list[dict[str, Any]] = []


class RecordIn(_Body):
    text: str
    namespace: str | None = Field(default=None, description="a template with {actorId}; default: the first")
    strategy: str | None = None
    metadata: dict[str, Any] | None = None


class RecordsIn(_Body):
    actor_id: str
    records: list[RecordIn]


class RecordsOut(BaseModel):
    actor_id: str
    added: int
    records: list[RecordOut]


class RecordPage(BaseModel):
    actor_id: str
    total: int
    records: list[RecordOut]
    next_cursor: int | None


class DeletedRecord(BaseModel):
    deleted: int
    id: str


class ForgotActor(BaseModel):
    actor_id: str
    deleted_records: int
    deleted_events: int


class SearchIn(_Body):
    actor_id: str
    query: str
    namespaces: list[str] | None = None
    limit: int = Field(default=10, ge=1)


class SearchOut(BaseModel):
    query: str
    results: list[RecordOut]


class JudgeCandidateIn(_Body):
    text: str = Field(description="the record's text, as the client's memory returned it")
    id: str | None = Field(default=None, description="the client's id for it, echoed back")
    namespace: str | None = Field(default=None, description="where it came from (a template with {actorId})")
    score: float | None = Field(
        default=None, ge=0, le=1, description="the memory's relevance score in [0, 1]; default: cosine"
    )


class JudgeIn(_Body):
    actor_id: str = Field(description="your user's id (scoped by your key's tenant)")
    message: str = Field(description="the user's message (or the search query) the records answer")
    candidates: list[JudgeCandidateIn] = Field(description="the records to judge (at most 50; 413 above)")
    stock: bool = Field(default=False, description="the control arm: keep those above the score floor")
    gate: bool = Field(
        default=False, description="ask the gate first: a message that needs no memory keeps nothing"
    )


class JudgeVerdictOut(BaseModel):
    index: int
    id: str | None
    kept: bool
    score: float
    judge_p: float | None


class JudgeOut(BaseModel):
    gated: bool = Field(description="the judge decided (false: the stock arm's score floor)")
    gate_open: bool | None = Field(description="the gate's verdict when it was asked (gate: true), else null")
    context: str = Field(description="the kept records as a context block; empty when none is kept")
    kept: list[int] = Field(description="indexes of the kept candidates, best first")
    candidates: list[JudgeVerdictOut]
    errors: list[str] = Field(description="what failed (the judge failed open: all kept)")
    error_kinds: list[str]


class ExampleIn(_Body):
    state: str = Field(description="an example state")
    label: bool | str = Field(description="its answer: true / false for a noul, an option for a choice")


class QuestionIn(_Body):
    type: Literal["noul", "choice", "score"] = "noul"
    instructions: str
    criteria: dict[str, str] | list[str] | None = None
    examples: list[ExampleIn] | None = None


class SystemOneIn(_Body):
    state: str
    questions: dict[str, QuestionIn]
    model: str | None = Field(
        default=None, description="accepted for compatibility; the configured decider answers"
    )


class SystemOneOut(BaseModel):
    answers: dict[str, dict[str, Any]]
    model: str


class ErrorDetail(BaseModel):
    message: str
    field: str | None = None
    status: int


class ErrorOut(BaseModel):
    error: ErrorDetail


_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 413, 422, 503)
}


# ---- the app --------------------------------------------------------------------------------------
def _error(
    status: int, message: str, field: str | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message, "field": field, "status": status}}, status_code=status, headers=headers
    )


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes is refused with 413 naming the limit.

    A body with a ``Content-Length`` over the limit is refused before it is read (the server then
    delivers no more than it declared). A body without one (``Transfer-Encoding: chunked``) is read
    here, up to the limit, and handed on whole; past the limit the rest is read and dropped (up to
    ``drain`` bytes, so the client sees the answer rather than a reset) and 413 is the answer.
    """

    def __init__(self, app: Any, limit: int, drain: int = 16_000_000) -> None:
        self.app, self.limit, self.drain = app, limit, drain

    def _too_large(self, size: str) -> JSONResponse:
        return _error(413, f"the body is {size}; the limit is {self.limit} bytes (--max-body-bytes)")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                await self._too_large(f"{int(declared)} bytes")(scope, receive, send)
                return
            await self.app(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            body += message.get("body", b"")
            more = bool(message.get("more_body", False))
            if len(body) > self.limit:
                seen = len(body)
                while more and seen <= self.drain:
                    message = await receive()
                    seen += len(message.get("body", b""))
                    more = message["type"] == "http.request" and bool(message.get("more_body", False))
                await self._too_large(f"over {self.limit} bytes (sent without a length)")(
                    scope, receive, send
                )
                return
            if not more:
                break
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)


class HostCheck:
    """ASGI middleware of a server without keys: a request naming another host (``Host``) or
    coming from another site's page (``Origin``) is refused, 421 / 403. A page on any web site
    can make the user's browser call loopback; with DNS rebinding it even reads the answers, as
    ``Host: evil.example.com``. Every route is guarded (``/mcp`` too: the one check for all).
    """

    LOCAL = ("localhost", "127.0.0.1", "::1")

    def __init__(self, app: Any, bound_host: str) -> None:
        self.app = app
        self.allowed = {h.lower() for h in (*self.LOCAL, bound_host.strip("[]"))}

    def _named_host(self, value: str) -> str:
        """The host name of a ``Host`` value (``[::1]:8080`` -> ``::1``, ``a.b:80`` -> ``a.b``)."""
        value = value.strip().lower()
        if value.startswith("["):
            return value[1 : value.find("]")] if "]" in value else value
        return value.rsplit(":", 1)[0] if value.count(":") == 1 else value

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan; the app has no websocket route
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        host = headers.get(b"host", b"").decode("latin-1")
        origin = headers.get(b"origin", b"").decode("latin-1")
        allowed = ", ".join(sorted(self.allowed))
        if self._named_host(host) not in self.allowed:
            message = f"Host {host!r} is not this server (without --keys it answers only {allowed})"
            await _error(421, message, "host")(scope, receive, send)
            return
        if origin:
            scheme, _, rest = origin.partition("://")
            if scheme not in ("http", "https") or self._named_host(rest.split("/")[0]) not in self.allowed:
                message = f"Origin {origin!r}: a page of another site cannot call a server without --keys"
                await _error(403, message, "origin")(scope, receive, send)
                return
        await self.app(scope, receive, send)


class Timed:
    """ASGI middleware: every request's latency into the metrics, by route and status (a plain
    ASGI wrapper: Starlette's ``BaseHTTPMiddleware`` costs a task and a stream per request)."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app, self.metrics = app, metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def sent(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sent)
        finally:
            route = getattr(scope.get("route"), "path", "other")
            self.metrics.observe(route, status, time.perf_counter() - started)


def _json(body: Any) -> Response:
    """The body as JSON, as it is: the service built it to the response model already, so
    FastAPI's second validation and encoding pass (a third of a turn's HTTP cost) is skipped."""
    return Response(json.dumps(body, separators=(",", ":")), media_type="application/json")


def create_app(
    service: MemoryService,
    keyring: Keyring | None = None,
    *,
    metrics: Metrics | None = None,
    threads: int = 64,
    bound_host: str = "127.0.0.1",
) -> FastAPI:
    """The ASGI app over ``service``; ``keyring`` None means no keys (one local principal).

    ``threads`` bounds the worker threads requests run in (each turn blocks one while it embeds,
    searches and judges; the embedding batcher gathers them). Without keys, every route answers
    only requests for ``bound_host`` or a loopback name (:class:`HostCheck`).
    """

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        anyio.to_thread.current_default_thread_limiter().total_tokens = threads
        yield
        service.close()

    app = FastAPI(
        lifespan=lifespan,
        title="recallwise",
        version=__version__,
        summary="Decide what an AI agent should remember right now: gate, route and judge memory retrieval.",
        responses=_ERRORS,
    )
    metrics = metrics or Metrics(service)
    app.state.service = service
    app.state.metrics = metrics

    def principal(request: Request) -> Principal:
        if keyring is None:
            return LOCAL
        header = request.headers.get("authorization", "")
        key = header[7:].strip() if header[:7].lower() == "bearer " else request.headers.get("x-api-key")
        found = keyring.principal(key)
        if found is None:
            raise ServiceError(401, "a valid API key is required (Authorization: Bearer KEY)")
        return found

    Who = Annotated[Principal, Depends(principal)]

    @app.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return _error(exc.status, str(exc), exc.field, headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        first = errors[0] if errors else {}
        if first.get("type") == "json_invalid":
            return _error(
                400, f"malformed JSON: {first.get('ctx', {}).get('error', 'cannot parse the body')}"
            )
        where = [str(p) for p in first.get("loc", ()) if p != "body"]
        field = ".".join(where) or None
        kind = first.get("type", "")
        message = "unknown field" if kind == "extra_forbidden" else first.get("msg", "invalid")
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return _error(422, f"{field or 'body'}: {message}{more}", field)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(StoreError)
    async def _store_down(request: Request, exc: StoreError) -> JSONResponse:
        # the details (statements, hosts) go to the log only, never to a client
        logger.warning("store error on %s: %s", request.url.path, exc)
        return _error(503, f"the store is unavailable ({exc.kind}); nothing was written")

    @app.exception_handler(InvalidValueError)
    async def _invalid_value(request: Request, exc: InvalidValueError) -> JSONResponse:
        return _error(422, str(exc), exc.field)

    @app.exception_handler(UsageError)
    async def _usage(request: Request, exc: UsageError) -> JSONResponse:
        return _error(422, str(exc))

    @app.exception_handler(QuestionError)
    async def _question(request: Request, exc: QuestionError) -> JSONResponse:
        return _error(422, str(exc), "questions")

    @app.exception_handler(RecallwiseError)
    async def _other(request: Request, exc: RecallwiseError) -> JSONResponse:
        logger.warning("%s on %s: %s", type(exc).__name__, request.url.path, exc)
        return _error(500, f"{type(exc).__name__}: {exc}")

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        # a bug: the traceback goes to the log, the client gets JSON like every other answer
        logger.error("unexpected %s on %s", type(exc).__name__, request.url.path, exc_info=exc)
        return _error(500, f"internal error ({type(exc).__name__}); the server's log has the details")

    app.add_middleware(Timed, metrics=metrics)

    # ---- reads -----------------------------------------------------------------------------------
    @app.post("/v1/recall", response_model=RecallOut, tags=["recall"])
    def recall(body: RecallIn, who: Who) -> Response:
        """The gate, route, search and judge for one user message: what to inject, and why."""
        options = body.options or RecallOptionsIn()
        result = service.recall(
            who,
            body.actor_id,
            body.message,
            session_id=body.session_id,
            namespaces=body.namespaces,
            top_k=options.top_k,
            max_records=options.max_records,
            stock=options.stock,
        )
        metrics.observe_turn(result["trace"]["timings_ms"])
        return _json(result)

    @app.post("/v1/search", response_model=SearchOut, tags=["debug"])
    def search(body: SearchIn, who: Who) -> Response:
        """Ungated, bounded search over the actor's namespaces (for debugging)."""
        return _json(
            service.search(who, body.actor_id, body.query, namespaces=body.namespaces, limit=body.limit)
        )

    @app.post("/v1/judge", response_model=JudgeOut, tags=["recall"])
    def judge(body: JudgeIn, who: Who) -> Response:
        """The policy's judge over records your own memory returned: which belong in the prompt."""
        candidates = [c.model_dump() for c in body.candidates]
        return _json(
            service.judge(who, body.actor_id, body.message, candidates, stock=body.stock, gate=body.gate)
        )

    @app.get("/v1/records", response_model=RecordPage, tags=["records"])
    def list_records(
        who: Who,
        actor_id: str,
        namespace: str | None = None,
        cursor: Annotated[int, Query(ge=0)] = 0,
        limit: Annotated[int, Query(ge=1)] = 50,
    ) -> Response:
        """A page of the actor's records, oldest first."""
        return _json(service.list_records(who, actor_id, namespace=namespace, cursor=cursor, limit=limit))

    # ---- writes ----------------------------------------------------------------------------------
    @app.post("/v1/events", response_model=EventsOut, tags=["write"])
    def add_events(body: EventsIn, who: Who) -> Response:
        """Conversation messages in; facts and preferences extracted and consolidated into records."""
        messages = [m.model_dump() for m in body.messages]
        return _json(service.add_events(who, body.actor_id, body.session_id, messages, extract=body.extract))

    @app.post("/v1/records", response_model=RecordsOut, tags=["write"])
    def add_records(body: RecordsIn, who: Who) -> Response:
        """Records written as given (no extraction)."""
        return _json(service.add_records(who, body.actor_id, [r.model_dump() for r in body.records]))

    @app.delete("/v1/records/{record_id}", response_model=DeletedRecord, tags=["write"])
    def delete_record(record_id: str, who: Who) -> Response:
        """Delete one record."""
        return _json(service.delete_record(who, record_id))

    @app.delete("/v1/actors/{actor_id}", response_model=ForgotActor, tags=["write"])
    def forget_actor(actor_id: str, who: Who) -> Response:
        """Forget a user: every record and event of theirs deleted (needs the admin scope)."""
        return _json(service.forget_actor(who, actor_id))

    # ---- the decider, as a system-one server ----------------------------------------------------------
    @app.post("/v1/systemone", response_model=SystemOneOut, tags=["decider"])
    def systemone(body: SystemOneIn, who: Who) -> Response:
        """The configured decider in the system-one wire shape (any system-one client can use it)."""
        who.require("recall")
        decider = service.policy.decider
        if decider is None:
            raise ServiceError(404, "this server runs without a decider (the stock arm)")
        if len(body.state) > service.limits.max_message_chars:
            raise ServiceError(413, f"state has {len(body.state)} chars", field="state")
        questions = {name: q.model_dump(exclude_none=True) for name, q in body.questions.items()}
        answers = decider.ask(body.state, questions)
        return _json({"answers": {name: _wire(a) for name, a in answers.items()}, "model": decider.name})

    # ---- operations ------------------------------------------------------------------------------
    @app.get("/healthz", tags=["operations"])
    async def healthz() -> dict[str, str]:
        """Alive (the process answers)."""
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"])
    def readyz() -> JSONResponse:
        """Ready: the store answers and the embedder is loaded."""
        try:
            return JSONResponse({"status": "ready", **service.ready()})
        except Exception as exc:  # not ready, whatever the reason: say it
            return _error(503, f"not ready: {type(exc).__name__}: {exc}")

    @app.get("/metrics", tags=["operations"], response_class=PlainTextResponse)
    def prometheus(request: Request) -> PlainTextResponse:
        """The counters and latency histograms, in Prometheus text format."""
        if keyring is not None:
            principal(request).require("operator")  # every tenant's figures: not a tenant's admin
        body, content_type = metrics.render()
        return PlainTextResponse(body, media_type=content_type)

    app.include_router(inspector_router(service, principal, keys=keyring is not None))
    app.add_middleware(BodyLimit, limit=service.limits.max_body_bytes)
    if keyring is None:
        app.add_middleware(HostCheck, bound_host=bound_host)  # outermost: before the body is read
    return app


def _wire(answer: Any) -> dict[str, Any]:
    if isinstance(answer, (ChoiceAnswer, ScoreAnswer)):
        return answer.to_wire()
    return {"type": "noul", "noul": float(answer)}
