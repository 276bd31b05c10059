"""The decision inspector: a page over the service's decision log, and the labels that teach it.

``recallwise serve --log FILE`` logs every turn (``--log-content`` adds the message and memory
text; off by default). This module serves, beside the API:

- ``GET /v1/decisions?actor_id=&session_id=&opened=&errors=&limit=&cursor=``: a page of turns,
  newest first, each with its candidates (score, judge p, kept or dropped, and why) and labels;
  ``GET /v1/decisions/{id}``: one;
- ``POST /v1/labels`` ``{"decision_id", "gate"?, "records"?}``: the gate label (true: memory was
  needed) and per-record labels (true: the record belongs); ``GET /v1/labels``: every labelled
  turn, in the format ``recallwise tune gate --fit`` / the judge's fit read (the same as
  ``recallwise log LOG --labels``);
- ``GET /v1/refit-preview/gate`` and ``/judge``: what refitting that head on the labels would do,
  the labelled turns' figures before and after, computed by the fit ``recallwise tune gate|judge
  --from-log`` runs (:mod:`.refit`), with the commands that apply it; it writes nothing;
- ``GET /ui``: the page (static HTML, CSS and JS shipped in the wheel under ``static/``; no CDN,
  no inline script, a strict content security policy). It holds no data itself: everything it
  shows comes from the APIs above, with the key typed into it (kept in the tab's
  ``sessionStorage``, sent as ``Authorization: Bearer``, never a cookie).

Who may see what, as the rest of the service: with keys, every API here needs the ``admin``
scope and shows only the key's tenant (another tenant's decision is a 404, as an absent one);
without keys, the one local user sees everything (loopback only).

The log is the SQLite file ``--log`` names, also with a PostgreSQL store: each host's replicas
(``--workers N``) share it; replicas on several hosts each show their own (docs/inspector.md).
"""

import math
import time
from collections.abc import Awaitable, Callable, Mapping
from functools import cache, partial
from html import escape
from importlib import resources
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import anyio
import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ..deciders.embedded import EmbeddedDecider
from ..errors import InvalidIdError, UsageError
from ..policy.log import DecisionLog, LoggedTurn, TurnFilter
from ..records import validate_id
from ..tuning.labelled import parse_labelled_turns
from .access import Principal, ServiceError
from .refit import HeadName, fit_head, logged_turns, refit_commands
from .service import MemoryService

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "DecisionOut",
    "DecisionPage",
    "GateFiguresOut",
    "GateRefitOut",
    "Inspector",
    "JudgeFiguresOut",
    "JudgeRefitOut",
    "LabelsIn",
    "LabelsOut",
    "inspector_router",
]

#: the page's policy: its own script and style only, requests to this server only, no frames
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
NO_LOG = "this server keeps no decision log: start recallwise serve with --log FILE"


# ---- the wire shapes --------------------------------------------------------------------------------
class DecisionCandidateOut(BaseModel):
    """A record the turn's search returned, and what the judge made of it."""

    id: str
    namespace: str
    text: str | None = Field(default=None, description="the record's text; absent unless --log-content")
    score: float = Field(description="the store's relevance score in [0, 1]")
    judge_p: float | None = Field(description="the judge's probability that it belongs (null: not judged)")
    kept: bool
    reason: str = Field(description="why it was kept or dropped")
    label: bool | None = Field(description="the label given: true, it belongs; null: not labelled")


class DecisionOut(BaseModel):
    """One logged turn, as the policy decided it."""

    id: int = Field(description="the decision id (labels name it)")
    time: str = Field(description="when, ISO 8601 UTC")
    actor_id: str
    session_id: str | None
    message: str | None = Field(default=None, description="the user's message; absent unless --log-content")
    decider: str
    gate_p: float | None = Field(description="the gate's probability that memory is needed (null: no answer)")
    gate_threshold: float | None
    gate_open: bool | None = Field(description="the turn retrieved (null: nothing to decide)")
    follow_up_p: float | None
    route: dict[str, float] | None = Field(description="the route's probability per namespace template")
    namespaces_searched: list[str]
    candidates: list[DecisionCandidateOut]
    kept: int
    dropped: int
    keep_rule: str
    context_tokens: int = Field(description="tokens injected")
    stock_tokens: int | None = Field(
        description="tokens the stock arm would have injected, from this turn's own search (null: the "
        "turn did not search what the stock arm searches, e.g. a closed gate)"
    )
    errors: list[str]
    error_kinds: list[str]
    failed_open: list[str] = Field(description="stages that failed open this turn: gate, judge")
    notes: list[str]
    total_ms: float | None
    label: bool | None = Field(description="the gate label: true, memory was needed; null: not labelled")


class DecisionPage(BaseModel):
    decisions: list[DecisionOut] = Field(description="newest first")
    next_cursor: int | None = Field(description="the cursor of the next (older) page; null on the last")
    content_logged: bool = Field(description="the log keeps message and memory text (--log-content)")


class LabelsIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    decision_id: int
    gate: bool | None = Field(default=None, description="true: memory was needed this turn")
    records: dict[str, bool] | None = Field(
        default=None,
        description="record id -> true: it belongs in the prompt (each one of the turn's candidates)",
    )


class LabelledRecordOut(BaseModel):
    id: str
    text: str | None = Field(default=None, description="absent unless the log keeps content")
    label: bool


class LabelledTurnOut(BaseModel):
    """A labelled turn: what ``recallwise tune gate --fit`` and the judge's fit read."""

    decision_id: int
    time: str
    actor_id: str
    session_id: str | None
    text: str | None = Field(default=None, description="the message; absent unless the log keeps content")
    label: bool | None = Field(default=None, description="the gate label; absent when not labelled")
    records: list[LabelledRecordOut] | None = Field(default=None, description="absent when none is labelled")


class LabelsOut(BaseModel):
    labels: list[LabelledTurnOut]


class _Figures(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GateFiguresOut(_Figures):
    """The gate on the labelled turns, at one threshold (``recallwise tune gate --json``'s
    ``before`` / ``after``)."""

    n: int = Field(description="labelled turns graded")
    accuracy: float = Field(description="share of the turns the gate decided as labelled")
    auc: float | None = Field(description="P(a turn that needed memory scores above one that did not)")
    ece: float | None = Field(description="expected calibration error of its p (0: p means what it says)")
    brier: float | None
    open_rate_true: float | None = Field(description="share of the turns that needed memory it opened on")
    closed_rate_false: float | None = Field(description="share of the turns that did not that it closed on")
    threshold: float = Field(description="the gate threshold it was graded at")


class KeepRuleOut(_Figures):
    absolute: float = Field(description="keep a record with p >= this")
    relative: float | None = Field(description="and with p >= the turn's best p - this")


class JudgeFiguresOut(_Figures):
    """The judge on the labelled records the policy's search returns for each labelled turn
    (``recallwise tune judge --json``'s ``before`` / ``after``)."""

    n: int = Field(description="labelled records graded")
    turns: int
    accuracy: float | None = Field(description="share of the records judged as labelled, at p 0.5")
    auc: float | None = Field(description="pooled over every record")
    mean_auc: float | None = Field(description="per turn, averaged")
    ece: float | None
    right_kept: float | None = Field(description="share of a request's records that belong which were kept")
    right_first: float | None = Field(description="share of requests whose best-judged record belongs")
    records_kept_per_request: float | None = Field(
        description="records kept per turn with a record that belongs"
    )
    records_kept_per_general_turn: float | None = Field(description="records kept per turn with none")
    requests: int
    general_turns: int
    keep_rule: KeepRuleOut


class RefitCommandsOut(BaseModel):
    """The commands that apply the refit, run where the server runs."""

    export: str = Field(description="write the labels the preview read to labels.json")
    fit: str = Field(description="fit the head on them and name it in a threshold config")
    load: str = Field(description="start the server with that config: the new head answers")


class _RefitPreview(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: the head it previews, and the model of its figures
    HEAD: ClassVar[HeadName]
    FIGURES: ClassVar[type[_Figures]]

    head: HeadName
    turns: int = Field(description="labelled turns the fit read (this tenant's, labelled for this head)")
    left_out: int = Field(description="labelled turns without a label for this head (the other head's only)")
    graded_on: str = Field(
        description="what 'after' was graded on: 'out of fold' (each turn by a fit without it)"
    )
    before: _Figures
    after: _Figures
    notes: list[str]
    seconds: float = Field(description="how long the fit took")
    commands: RefitCommandsOut


class GateRefitOut(_RefitPreview):
    """What refitting the gate head on the labels would do: the current gate and the refitted one
    on the same labelled turns. Nothing is written."""

    HEAD: ClassVar[HeadName] = "gate"
    FIGURES: ClassVar[type[_Figures]] = GateFiguresOut

    head: Literal["gate"]
    before: GateFiguresOut = Field(description="the gate answering now, at its threshold")
    after: GateFiguresOut = Field(description="the refitted head, at its own threshold (saved with it)")


class JudgeRefitOut(_RefitPreview):
    """What refitting the judge head on the labels would do: the current judge and the refitted one
    on the same labelled turns. Nothing is written."""

    HEAD: ClassVar[HeadName] = "judge"
    FIGURES: ClassVar[type[_Figures]] = JudgeFiguresOut

    head: Literal["judge"]
    before: JudgeFiguresOut = Field(description="the judge answering now, with its keep rule")
    after: JudgeFiguresOut = Field(description="the refitted head, with its own keep threshold")


_Model = TypeVar("_Model", bound=BaseModel)
_Preview = TypeVar("_Preview", bound=_RefitPreview)


def _plain(value: Any) -> Any:
    """A figure as JSON holds it: numpy scalars as Python numbers, NaN (undefined) as null."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _figures(model: type[_Model], figures: Mapping[str, Any]) -> _Model:
    """The fit's figures the model declares (the fit's others are in ``recallwise tune --json``)."""
    return model.model_validate({name: _plain(figures[name]) for name in model.model_fields})


# ---- the operations -----------------------------------------------------------------------------------
class Inspector:
    """The inspector's operations over a service's decision log, scoped by tenant."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    @property
    def log(self) -> DecisionLog | None:
        return self.service.policy.log

    def _open(self, principal: Principal) -> DecisionLog:
        principal.require("admin")
        if self.log is None:
            raise ServiceError(404, NO_LOG)
        return self.log

    def _scope(self, principal: Principal) -> str | None:
        return None if principal.tenant is None else f"{principal.tenant}:"

    def _owned(self, principal: Principal, log: DecisionLog, decision_id: int) -> LoggedTurn:
        turn = log.turn(decision_id)
        prefix = self._scope(principal)
        if turn is None or (prefix is not None and not turn.actor_id.startswith(prefix)):
            raise ServiceError(404, f"no decision {decision_id}", field="decision_id")
        return turn

    def _filter(
        self,
        principal: Principal,
        actor_id: str | None,
        session_id: str | None,
        opened: bool | None = None,
        errors: bool | None = None,
    ) -> TurnFilter:
        return TurnFilter(
            actor_id=None if actor_id is None else self.service.actor(principal, actor_id).internal,
            actor_prefix=self._scope(principal),
            session_id=None if session_id is None else _session(session_id),
            gate_open=opened,
            with_errors=errors,
        )

    def decisions(
        self,
        principal: Principal,
        *,
        actor_id: str | None = None,
        session_id: str | None = None,
        opened: bool | None = None,
        errors: bool | None = None,
        limit: int = 50,
        cursor: int | None = None,
    ) -> DecisionPage:
        """A page of turns, newest first (``cursor``: the ``next_cursor`` of the page before)."""
        log = self._open(principal)
        if not 1 <= limit <= self.service.limits.max_page:
            raise ServiceError(
                422, f"limit must be 1-{self.service.limits.max_page}, not {limit}", field="limit"
            )
        where = self._filter(principal, actor_id, session_id, opened, errors)
        turns = log.page(where, limit=limit + 1, before=cursor)
        more = len(turns) > limit
        turns = turns[:limit]
        return DecisionPage(
            decisions=[self._decision(principal, t) for t in turns],
            next_cursor=turns[-1].seq if more else None,
            content_logged=log.content,
        )

    def decision(self, principal: Principal, decision_id: int) -> DecisionOut:
        log = self._open(principal)
        return self._decision(principal, self._owned(principal, log, decision_id))

    def add_labels(self, principal: Principal, body: LabelsIn) -> LabelledTurnOut:
        """Label one of this tenant's turns; returns it as a labelled turn."""
        log = self._open(principal)
        self._owned(principal, log, body.decision_id)
        if body.gate is None and not body.records:
            raise ServiceError(422, "give gate, records or both", field="gate")
        try:
            turn = log.add_labels(body.decision_id, gate=body.gate, records=body.records, by=principal.key_id)
        except UsageError as exc:
            raise ServiceError(422, str(exc), field="records") from None
        return self._labelled(principal, turn)

    def labels(
        self, principal: Principal, *, actor_id: str | None = None, session_id: str | None = None
    ) -> LabelsOut:
        """Every labelled turn of this tenant (of one actor / session when given), oldest first."""
        log = self._open(principal)
        turns = log.labelled_turns(self._filter(principal, actor_id, session_id))
        return LabelsOut(labels=[self._labelled(principal, t) for t in turns])

    def refit_preview(
        self, principal: Principal, model: type[_Preview], *, base_url: str, keys: bool
    ) -> _Preview:
        """Fit the head ``model`` previews on this tenant's labels as ``recallwise tune HEAD
        --from-log`` does, and report the figures before and after; writes nothing. Blocking
        (seconds on many labels)."""
        head = model.HEAD
        log = self._open(principal)
        decider = self.service.policy.decider
        if not isinstance(decider, EmbeddedDecider):
            name = "none (the stock arm)" if decider is None else decider.name
            raise ServiceError(
                422, f"learned heads are the embedded decider's; this server's decider is {name}"
            )
        exported = self.labels(principal)
        if not exported.labels:
            raise ServiceError(
                422, "no labelled turns yet: label turns on /ui (or POST /v1/labels), then preview a refit"
            )
        # the document GET /v1/labels answers, read as `recallwise tune --labels` reads its file
        document = exported.model_dump_json(exclude_unset=True)
        started = time.perf_counter()
        try:
            labels = parse_labelled_turns(document, "GET /v1/labels")
            logged = logged_turns(head, log.path, labels, source="GET /v1/labels")
            fit = fit_head(head, logged.turns, current=decider, thresholds=self.service.policy.thresholds)
        except UsageError as exc:
            raise ServiceError(422, f"cannot preview a {head} refit: {exc}") from None
        commands = refit_commands(head, log_path=log.path, base_url=base_url, keys=keys, decider=decider)
        fields: dict[str, Any] = {
            "head": head,
            "turns": len(logged.turns),
            "left_out": logged.left_out,
            "graded_on": fit.graded_on,
            "notes": [n for n in (logged.note, *fit.notes) if n],
            "seconds": round(time.perf_counter() - started, 3),
            "before": _figures(model.FIGURES, fit.before),
            "after": _figures(model.FIGURES, fit.after),
            "commands": RefitCommandsOut(**commands),
        }
        return model(**fields)

    # ---- shapes --------------------------------------------------------------------------------------
    def _outward(self, principal: Principal, turn: LoggedTurn) -> Callable[[str], str]:
        """Text as the caller names things: the tenant's prefix taken off actor ids."""
        if principal.tenant is None:
            return lambda text: text
        internal = turn.actor_id
        external = internal[len(principal.tenant) + 1 :]
        return lambda text: text.replace(internal, external)

    def _decision(self, principal: Principal, turn: LoggedTurn) -> DecisionOut:
        outward = self._outward(principal, turn)
        trace = turn.trace
        candidates = [
            DecisionCandidateOut(
                id=c["id"],
                namespace=outward(c.get("namespace", "")),
                score=round(float(c.get("score", 0.0)), 6),
                judge_p=None if c.get("judge_p") is None else round(float(c["judge_p"]), 6),
                kept=bool(c.get("kept")),
                reason=str(c.get("reason", "")),
                label=turn.record_labels.get(c["id"]),
                **({"text": c["text"]} if c.get("text") is not None else {}),
            )
            for c in turn.candidates
        ]
        return DecisionOut(
            id=turn.seq,
            time=turn.at,
            actor_id=outward(turn.actor_id),
            session_id=turn.session_id,
            decider=turn.decider,
            gate_p=turn.gate_p,
            gate_threshold=turn.gate_threshold,
            gate_open=turn.gate_open,
            follow_up_p=trace.get("follow_up_p"),
            route=trace.get("route"),
            namespaces_searched=list(trace.get("searched_templates") or []),
            candidates=candidates,
            kept=turn.kept,
            dropped=turn.dropped,
            keep_rule=str(trace.get("keep_rule", "")),
            context_tokens=turn.context_tokens,
            stock_tokens=turn.stock_tokens,
            errors=[outward(e) for e in trace.get("errors") or []],
            error_kinds=list(trace.get("error_kinds") or []),
            failed_open=turn.failed_open,
            notes=[outward(n) for n in trace.get("notes") or []],
            total_ms=turn.total_ms,
            label=turn.gate_label,
            **({"message": turn.message} if turn.message is not None else {}),
        )

    def _labelled(self, principal: Principal, turn: LoggedTurn) -> LabelledTurnOut:
        body = turn.labelled()
        body["actor_id"] = self._outward(principal, turn)(body["actor_id"])
        return LabelledTurnOut.model_validate(body)


def _session(session_id: str) -> str:
    try:
        return validate_id(session_id, "session_id")
    except InvalidIdError as exc:
        raise ServiceError(422, str(exc), field="session_id") from None


# ---- the page -------------------------------------------------------------------------------------------
@cache
def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


_STATIC_TYPES = {"inspector.js": "text/javascript", "inspector.css": "text/css"}
_PAGE_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def inspector_router(
    service: MemoryService, principal: Callable[..., Awaitable[Principal]], *, keys: bool
) -> APIRouter:
    """The inspector's routes; ``principal`` is the app's key dependency, ``keys`` whether the
    server has keys (the page then asks for one before it asks for data). Unset fields (a message
    or text the log does not keep) are absent from the JSON, not null."""
    inspector = Inspector(service)
    router = APIRouter()
    Who = Annotated[Principal, Depends(principal)]
    refits: list[anyio.CapacityLimiter] = []  # made on first use: a limiter belongs to the event loop

    @router.get("/v1/decisions", tags=["inspector"], response_model_exclude_unset=True)
    def list_decisions(
        who: Who,
        actor_id: str | None = None,
        session_id: str | None = None,
        opened: bool | None = Query(default=None, description="true: turns the gate opened; false: closed"),
        errors: bool | None = Query(default=None, description="true: turns with errors; false: without"),
        limit: Annotated[int, Query(ge=1)] = 50,
        cursor: Annotated[int | None, Query(ge=1, description="next_cursor of the page before")] = None,
    ) -> DecisionPage:
        """A page of logged decisions, newest first (needs the admin scope; the tenant's only)."""
        return inspector.decisions(
            who,
            actor_id=actor_id,
            session_id=session_id,
            opened=opened,
            errors=errors,
            limit=limit,
            cursor=cursor,
        )

    @router.get("/v1/decisions/{decision_id}", tags=["inspector"], response_model_exclude_unset=True)
    def get_decision(decision_id: int, who: Who) -> DecisionOut:
        """One logged decision."""
        return inspector.decision(who, decision_id)

    @router.post("/v1/labels", tags=["inspector"], response_model_exclude_unset=True)
    def add_labels(body: LabelsIn, who: Who) -> LabelledTurnOut:
        """Label a decision: the gate (true: memory was needed) and its records (true: belongs)."""
        return inspector.add_labels(who, body)

    @router.get("/v1/labels", tags=["inspector"], response_model_exclude_unset=True)
    def list_labels(who: Who, actor_id: str | None = None, session_id: str | None = None) -> LabelsOut:
        """Every labelled decision, as ``recallwise tune gate --fit`` and the judge's fit read them."""
        return inspector.labels(who, actor_id=actor_id, session_id=session_id)

    async def refit(who: Principal, model: type[_Preview], request: Request) -> _Preview:
        # A fit holds a CPU for seconds: off the event loop, and one at a time per process (a
        # second waits), so previews never take the worker threads turns are answered in.
        if not refits:
            refits.append(anyio.CapacityLimiter(1))
        run = partial(
            inspector.refit_preview, who, model, base_url=str(request.base_url).rstrip("/"), keys=keys
        )
        return await anyio.to_thread.run_sync(run, limiter=refits[0])

    @router.get("/v1/refit-preview/gate", tags=["inspector"])
    async def refit_preview_gate(who: Who, request: Request) -> GateRefitOut:
        """What refitting the gate head on the labels would do: accuracy, AUC, ECE and open / closed
        rates of the labelled turns before and after, as ``recallwise tune gate --from-log`` fits it,
        and the commands that apply it. Writes nothing; 422 saying why when the labels cannot fit one."""
        return await refit(who, GateRefitOut, request)

    @router.get("/v1/refit-preview/judge", tags=["inspector"])
    async def refit_preview_judge(who: Who, request: Request) -> JudgeRefitOut:
        """What refitting the judge head on the labels would do: accuracy, AUC, ECE, the right
        records kept and records kept per request before and after, as ``recallwise tune judge
        --from-log`` fits it, and the commands that apply it. Writes nothing; 422 saying why when
        the labels cannot fit one."""
        return await refit(who, JudgeRefitOut, request)

    @router.get("/ui", include_in_schema=False)
    def page() -> Response:
        html = _static("inspector.html").decode("utf-8")
        html = html.replace("{{keys}}", "required" if keys else "none")
        html = html.replace("{{log}}", escape("on" if inspector.log is not None else "off"))
        return Response(html, media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)

    @router.get("/ui/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name not in _STATIC_TYPES:
            raise ServiceError(404, f"no {name!r} here")
        return Response(_static(name), media_type=_STATIC_TYPES[name], headers=_PAGE_HEADERS)

    return router
