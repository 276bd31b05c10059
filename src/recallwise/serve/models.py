"""The HTTP API's request and response bodies: the one place their shape is written.

:class:`~recallwise.serve.service.MemoryService` returns the response models, the routes
(:mod:`.routes`) declare them as their return types, and FastAPI validates and serialises them;
``/openapi.json`` (and from it ``clients/typescript/openapi.json`` and the TypeScript types) is
generated from them. A response field the service leaves unset is absent from the JSON, not null
(a recall's records carry no ``metadata``, a page of records no ``score``): the routes serialise
with ``response_model_exclude_unset``.

Both kinds refuse a field they do not declare: a request naming one is a 422, and the service
building a response with one is a bug caught where it is made. A request's values are taken as
their JSON types, never converted: ``"5"`` is not a number, ``"yes"`` or ``1`` not a boolean, ``true``
not a number (pydantic's strict mode; an integer is a number where a number is asked for). Every
id or cursor that reaches a database is at most :data:`MAX_ID` (SQLite's and PostgreSQL's largest
integer): a larger one is a 422, not an overflow.
"""

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "MAX_ID",
    "DeletedRecord",
    "ErrorDetail",
    "ErrorOut",
    "EventsIn",
    "EventsOut",
    "ExampleIn",
    "ForgotActor",
    "Health",
    "JudgeCandidateIn",
    "JudgeIn",
    "JudgeOut",
    "JudgeVerdictOut",
    "MessageIn",
    "QuestionIn",
    "Ready",
    "RecallIn",
    "RecallOptionsIn",
    "RecallOut",
    "RecordIn",
    "RecordOut",
    "RecordPage",
    "RecordsIn",
    "RecordsOut",
    "SearchIn",
    "SearchOut",
    "SystemOneIn",
    "SystemOneOut",
    "TraceOut",
]


#: the largest id or cursor a request may name: a signed 64-bit integer's largest
MAX_ID = 2**63 - 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _StrictIn(BaseModel):
    """A request body: no undeclared field, no value converted from another JSON type."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ---- requests -------------------------------------------------------------------------------------
class RecallOptionsIn(_StrictIn):
    """Per-turn options of a recall."""

    top_k: int | None = Field(
        default=None, ge=1, le=100, description="records searched per namespace this turn"
    )
    max_records: int | None = Field(default=None, ge=1, le=100, description="most records kept this turn")
    stock: bool = Field(
        default=False, description="the control arm: always retrieve, keep top_k (no decisions)"
    )


class RecallIn(_StrictIn):
    """The body of ``POST /v1/recall``."""

    actor_id: str = Field(description="your user's id (scoped by your key's tenant)")
    message: str = Field(description="the user's message this turn")
    session_id: str | None = Field(default=None, description="the conversation, for follow-ups ('go on')")
    namespaces: list[str] | None = Field(
        default=None, description="namespace templates, e.g. /facts/{actorId}"
    )
    options: RecallOptionsIn | None = None


class MessageIn(_StrictIn):
    """One conversation message to remember."""

    role: Literal["user", "assistant"] = "user"
    text: str


class EventsIn(_StrictIn):
    """The body of ``POST /v1/events``."""

    actor_id: str
    session_id: str | None = None
    messages: list[MessageIn]
    extract: bool = Field(default=True, description="extract facts and preferences into records now")


class RecordIn(_StrictIn):
    """One record to write as given."""

    text: str
    namespace: str | None = Field(default=None, description="a template with {actorId}; default: the first")
    strategy: str | None = None
    metadata: dict[str, Any] | None = None


class RecordsIn(_StrictIn):
    """The body of ``POST /v1/records``."""

    actor_id: str
    records: list[RecordIn]


class SearchIn(_StrictIn):
    """The body of ``POST /v1/search`` (ungated, for debugging)."""

    actor_id: str
    query: str
    namespaces: list[str] | None = None
    limit: int = Field(default=10, ge=1, le=MAX_ID)


class JudgeCandidateIn(_StrictIn):
    """One record a client's own memory returned, for the judge."""

    text: str = Field(description="the record's text, as the client's memory returned it")
    id: str | None = Field(default=None, description="the client's id for it, echoed back")
    namespace: str | None = Field(default=None, description="where it came from (a template with {actorId})")
    score: float | None = Field(
        default=None, ge=0, le=1, description="the memory's relevance score in [0, 1]; default: cosine"
    )


class JudgeIn(_StrictIn):
    """The body of ``POST /v1/judge``."""

    actor_id: str = Field(description="your user's id (scoped by your key's tenant)")
    message: str = Field(description="the user's message (or the search query) the records answer")
    candidates: list[JudgeCandidateIn] = Field(description="the records to judge (at most 50; 413 above)")
    stock: bool = Field(default=False, description="the control arm: keep those above the score floor")
    gate: bool = Field(
        default=False, description="ask the gate first: a message that needs no memory keeps nothing"
    )


class ExampleIn(_StrictIn):
    state: str = Field(description="an example state")
    label: bool | str = Field(description="its answer: true / false for a noul, an option for a choice")


class QuestionIn(_StrictIn):
    type: Literal["noul", "choice", "score"] = "noul"
    instructions: str
    criteria: dict[str, str] | list[str] | None = None
    examples: list[ExampleIn] | None = None


class SystemOneIn(_StrictIn):
    """The body of ``POST /v1/systemone``: the system-one wire shape."""

    state: str
    questions: dict[str, QuestionIn]
    model: str | None = Field(
        default=None, description="accepted for compatibility; the configured decider answers"
    )


# ---- responses ------------------------------------------------------------------------------------
class RecordOut(_Strict):
    """A record as the service returns it, in the caller's own ids (fields that do not apply to
    an answer are absent: a recall's records have no ``metadata``, a page of records no ``score``)."""

    id: str
    text: str
    namespace: str
    score: float | None = None
    judge_p: float | None = Field(
        default=None, description="the judge's probability that the record belongs in this turn's prompt"
    )
    strategy: str = "semantic"
    created_at: float | None = None
    metadata: dict[str, Any] | None = None


class TraceOut(_Strict):
    """What one turn did, stage by stage."""

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


class RecallOut(_Strict):
    """The reply of ``POST /v1/recall``."""

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


class JudgeVerdictOut(_Strict):
    """The judge's verdict on one candidate."""

    index: int = Field(description="the candidate's position in the request")
    id: str | None
    kept: bool
    score: float
    judge_p: float | None


class JudgeOut(_Strict):
    """The reply of ``POST /v1/judge``."""

    gated: bool = Field(description="the judge decided (false: the stock arm's score floor)")
    gate_open: bool | None = Field(description="the gate's verdict when it was asked (gate: true), else null")
    context: str = Field(description="the kept records as a context block; empty when none is kept")
    kept: list[int] = Field(description="indexes of the kept candidates, best first")
    candidates: list[JudgeVerdictOut]
    errors: list[str] = Field(description="what failed (the judge failed open: all kept)")
    error_kinds: list[str]


class MessageOutcomeOut(_Strict):
    """What one message of ``POST /v1/events`` stored, or why it stored nothing."""

    index: int
    role: str
    extracted: int = Field(description="memories found in the message")
    stored: int = Field(description="of those, the ones that added or changed a record")
    reason: str | None = Field(default=None, description="why nothing was stored (absent when something was)")


class EventsOut(_Strict):
    """The reply of ``POST /v1/events`` (the extraction's counts and records absent with
    ``extract: false``)."""

    actor_id: str
    session_id: str
    events: int
    memories_extracted: int = 0
    added: int = 0
    updated: int = 0
    unchanged: int = 0
    records: list[RecordOut] = Field(
        default_factory=list, description="the records added or updated (id, namespace, text, strategy)"
    )
    messages: list[MessageOutcomeOut] = Field(
        default_factory=list, description="per message: what it stored, or why it stored nothing"
    )
    note: str | None = Field(
        default=None, description="why this write stored nothing (absent when it stored something)"
    )


class RecordsOut(_Strict):
    """The reply of ``POST /v1/records``."""

    actor_id: str
    added: int
    records: list[RecordOut]


class RecordPage(_Strict):
    """The reply of ``GET /v1/records``: a page, oldest first."""

    actor_id: str
    total: int
    records: list[RecordOut]
    next_cursor: int | None = Field(description="the cursor of the next page; null on the last")


class DeletedRecord(_Strict):
    """The reply of ``DELETE /v1/records/{record_id}``."""

    deleted: int
    id: str


class ForgotActor(_Strict):
    """The reply of ``DELETE /v1/actors/{actor_id}``: what forgetting the user deleted."""

    actor_id: str
    deleted_records: int = Field(description="their memory records")
    deleted_events: int = Field(description="their conversation events")
    deleted_decisions: int = Field(
        description="their turns in the decision log (messages, candidates' texts, traces)"
    )
    deleted_labels: int = Field(description="labels given to those turns (what a refit reads)")


class SearchOut(_Strict):
    """The reply of ``POST /v1/search``: records best first, each with its ``score``."""

    query: str
    results: list[RecordOut]


class SystemOneOut(_Strict):
    """The reply of ``POST /v1/systemone``: the system-one wire shape."""

    answers: dict[str, dict[str, Any]]
    model: str


class Health(_Strict):
    """The reply of ``GET /healthz``."""

    status: Literal["ok"]
    version: str = Field(description="the recallwise release answering (`recallwise --version`)")


class Ready(_Strict):
    """The reply of ``GET /readyz`` (not ready: 503 with the error shape)."""

    status: Literal["ready"]
    store: str = Field(description="the store's kind (sqlite, postgresql, ...), never its URL")
    embedder: str


class ErrorDetail(_Strict):
    """The service's one error shape's detail."""

    message: str
    field: str | None = Field(default=None, description="the request field at fault, when one is")
    status: int


class ErrorOut(_Strict):
    """The service's one error shape."""

    error: ErrorDetail
