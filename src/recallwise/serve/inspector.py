"""The decision inspector: a page over the service's decision log, and the labels that teach it.

``recallwise serve --log FILE`` logs every turn (``--log-content`` adds the message and memory
text; off by default). This module serves, beside the API:

- ``GET /v1/decisions?actor_id=&session_id=&opened=&errors=&limit=&cursor=``: a page of turns,
  newest first, each with its candidates (score, judge p, kept or dropped, and why) and labels;
  ``GET /v1/decisions/{id}``: one;
- ``POST /v1/labels`` ``{"decision_id", "gate"?, "records"?}``: the gate label (true: memory was
  needed) and per-record labels (true: the record belongs); ``GET /v1/labels?limit=&cursor=``: the
  labelled turns, oldest first, a page at a time, in the format ``recallwise tune gate --fit`` /
  the judge's fit read (the same as ``recallwise log LOG --labels``);
- ``POST /v1/refit-preview/gate`` and ``/judge``: what refitting that head on the labels would do,
  the labelled turns' figures before and after, computed by the fit ``recallwise tune gate|judge
  --from-log`` runs (:mod:`.refit`), with the commands that apply it; it writes nothing. A bounded
  job: at most ``--max-refit-labels`` labelled turns (413 past it), ``--refit-timeout-s`` seconds
  (503 past it), ``--refit-workers`` fits at once per process with tenants taking turns
  (:class:`FairQueue`), at most ``--max-refits-per-tenant`` of one tenant waiting or running (429),
  and stopped when its client goes away. ``GET`` on the same path computes nothing: how many
  labelled turns a fit would read, the limit, and the commands;
- ``GET /ui``: the page (static HTML, CSS and JS shipped in the wheel under ``static/``; no CDN,
  no inline script, a strict content security policy). It holds no data itself: everything it
  shows comes from the APIs above, with the key typed into it (kept in the tab's
  ``sessionStorage``, sent as ``Authorization: Bearer``, never a cookie).

Who may see what, as the rest of the service: with keys, every API here needs the ``admin``
scope and shows only the key's tenant (another tenant's decision is a 404, as an absent one);
without keys, the one local user sees everything (loopback only).

The log is what ``--log`` names: a SQLite file (each host's replicas, ``--workers N``, share it),
or a PostgreSQL database every replica on every host shares (:mod:`recallwise.policy.log_postgres`):
then any replica lists, labels, refits on and forgets every replica's turns, each turn naming the
replica that served it. ``GET /v1/log`` says how this replica's writes to it go (docs/inspector.md).
Decision ids are opaque (:func:`~recallwise.policy.log.public_id`): they say nothing of how many
turns the log holds, so a tenant cannot count another's traffic from them.
"""

import logging
import math
import time
from collections import Counter, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cache, partial
from html import escape
from importlib import resources
from typing import Annotated, Any, ClassVar, Literal, TypeVar

import anyio
import anyio.to_thread
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import RedirectResponse, Response
from pydantic import BaseModel, ConfigDict, Field

from ..deciders.embedded import EmbeddedDecider
from ..errors import InvalidIdError, UsageError
from ..policy.log import DecisionLog, LoggedTurn, TurnFilter
from ..records import validate_id
from ..tuning.refit import refusal
from .access import Principal, ServiceError
from .models import MAX_ID
from .refit import HeadName, RefitStopped, Stop, fit_head, from_logged, refit_commands
from .service import MemoryService

__all__ = [
    "CONTENT_SECURITY_POLICY",
    "MAX_LABELS_PAGE",
    "DecisionOut",
    "DecisionPage",
    "FairQueue",
    "GateFiguresOut",
    "GateRefitOut",
    "Inspector",
    "JudgeFiguresOut",
    "JudgeRefitOut",
    "LabelsIn",
    "LabelsOut",
    "LogHealthOut",
    "inspector_router",
]

logger = logging.getLogger("recallwise.serve")

#: the page's policy: its own script and style only, requests to this server only, no frames
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
NO_LOG = "this server keeps no decision log: start recallwise serve with --log FILE"
#: the most labelled turns one page of ``GET /v1/labels`` holds
MAX_LABELS_PAGE = 10_000
#: a decision id or cursor a request may name (opaque; every stored one is below 2**53)
DecisionId = Annotated[int, Path(ge=1, le=MAX_ID, description="a decision id")]


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
    replica: str | None = Field(
        default=None, description="the replica that served the turn (--replica-name; default host:port)"
    )


class DecisionPage(BaseModel):
    decisions: list[DecisionOut] = Field(description="newest first")
    next_cursor: int | None = Field(description="the cursor of the next (older) page; null on the last")
    content_logged: bool = Field(description="the log keeps message and memory text (--log-content)")


class LogHealthOut(BaseModel):
    """The reply of ``GET /v1/log``: this replica's view of its decision log, from its own
    counters (it answers while the log's database is down)."""

    backend: Literal["sqlite", "postgresql"] = Field(
        description="where the log lives (never its path or URL)"
    )
    replica: str | None = Field(description="the name this replica's turns carry")
    writing: bool = Field(description="the last batch of rows was committed (false: the log is failing)")
    written: int = Field(description="rows this replica committed since it started")
    dropped: int = Field(
        description="rows this replica dropped since it started (the log's database down or far behind): "
        "those turns were answered, and are not in the log"
    )
    queued: int = Field(description="rows waiting to be written")
    last_error: str | None = Field(
        description="the kind of the last failure to write (unavailable, full, ...)"
    )
    last_error_at: float | None = Field(description="when, in seconds since the epoch")


class LabelsIn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    decision_id: int = Field(ge=1, le=MAX_ID, description="the decision's id")
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
    labels: list[LabelledTurnOut] = Field(description="oldest first")
    next_cursor: int | None = Field(default=None, description="the cursor of the next page; null on the last")


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


class RefitPlanOut(BaseModel):
    """The reply of ``GET /v1/refit-preview/{head}``: what a preview (``POST`` on the same path)
    would read, and the commands that apply a refit; nothing is computed."""

    head: HeadName
    turns: int = Field(
        description="labelled turns of this tenant's a fit of this head would read (counted up to "
        "max_labels + 1)"
    )
    left_out: int = Field(description="labelled turns without a label for this head")
    max_labels: int = Field(description="the most labelled turns a preview reads (--max-refit-labels)")
    over_limit: bool = Field(description="more labelled turns than max_labels: a preview is refused")
    commands: RefitCommandsOut


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

    def _cursor(self, principal: Principal, log: DecisionLog, cursor: int | None) -> int | None:
        """A cursor (a decision id) of this tenant's, or 422: another tenant's turn cannot be a
        place to page from, and a forgotten one names no place."""
        if cursor is None:
            return None
        try:
            self._owned(principal, log, cursor)
        except ServiceError:
            raise ServiceError(422, f"cursor {cursor} names no decision of yours", field="cursor") from None
        return cursor

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
        turns = log.page(where, limit=limit + 1, before=self._cursor(principal, log, cursor))
        more = len(turns) > limit
        turns = turns[:limit]
        return DecisionPage(
            decisions=[self._decision(principal, t) for t in turns],
            next_cursor=turns[-1].id if more else None,
            content_logged=log.content,
        )

    def health(self, principal: Principal) -> LogHealthOut:
        """The log's health, as this replica sees it (the admin scope; no query of the log)."""
        health = self._open(principal).health()
        kind = None if health.last_error is None else health.last_error.split(":", 1)[0]
        # the kind only: a failure's message names the database's host (or the file)
        return LogHealthOut(**{**health.as_dict(), "last_error": kind})

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
        self,
        principal: Principal,
        *,
        actor_id: str | None = None,
        session_id: str | None = None,
        limit: int = 1000,
        cursor: int | None = None,
    ) -> LabelsOut:
        """A page of this tenant's labelled turns (of one actor / session when given), oldest
        first; ``cursor``: the ``next_cursor`` of the page before."""
        log = self._open(principal)
        if not 1 <= limit <= MAX_LABELS_PAGE:
            raise ServiceError(422, f"limit must be 1-{MAX_LABELS_PAGE}, not {limit}", field="limit")
        where = self._filter(principal, actor_id, session_id)
        turns = log.labelled_turns(where, limit=limit + 1, after=self._cursor(principal, log, cursor))
        more = len(turns) > limit
        turns = turns[:limit]
        return LabelsOut(
            labels=[self._labelled(principal, t) for t in turns],
            next_cursor=turns[-1].id if more else None,
        )

    def _refit_labels(self, principal: Principal, head: HeadName) -> tuple[list[LoggedTurn], int]:
        """This tenant's labelled turns, up to the limit and one more (so "over" is known without
        reading them all); and how many carry a label for ``head``."""
        log = self._open(principal)
        cap = self.service.limits.max_refit_labels
        turns = log.labelled_turns(self._filter(principal, None, None), limit=cap + 1)
        counted = sum(
            1 for t in turns if (t.gate_label is not None if head == "gate" else bool(t.record_labels))
        )
        return turns, counted

    def refit_plan(self, principal: Principal, head: HeadName, *, keys: bool) -> RefitPlanOut:
        """What a preview of ``head`` would read, and the commands (nothing is fitted)."""
        self._open(principal)
        decider = self._embedded()
        turns, counted = self._refit_labels(principal, head)
        cap = self.service.limits.max_refit_labels
        return RefitPlanOut(
            head=head,
            turns=counted,
            left_out=len(turns) - counted,
            max_labels=cap,
            over_limit=len(turns) > cap,
            commands=RefitCommandsOut(**refit_commands(head, keys=keys, decider=decider)),
        )

    def can_refit(self, principal: Principal) -> None:
        """Refuse, before a preview waits for its turn, what no wait would change: a key without
        the admin scope (403), a server without a log (404) or without learned heads (422)."""
        self._open(principal)
        self._embedded()

    def _embedded(self) -> EmbeddedDecider:
        decider = self.service.policy.decider
        if not isinstance(decider, EmbeddedDecider):
            name = "none (the stock arm)" if decider is None else decider.name
            raise ServiceError(
                422, f"learned heads are the embedded decider's; this server's decider is {name}"
            )
        return decider

    def refit_preview(
        self, principal: Principal, model: type[_Preview], *, keys: bool, stop: Stop | None = None
    ) -> _Preview:
        """Fit the head ``model`` previews on this tenant's labels as ``recallwise tune HEAD
        --from-log`` does, and report the figures before and after; writes nothing. Blocking
        (seconds on many labels); ``stop`` ends it early (503)."""
        head = model.HEAD
        self._open(principal)
        decider = self._embedded()
        turns, _ = self._refit_labels(principal, head)
        cap = self.service.limits.max_refit_labels
        if not turns:
            raise ServiceError(
                422, "no labelled turns yet: label turns on /ui (or POST /v1/labels), then preview a refit"
            )
        if len(turns) > cap:
            raise ServiceError(
                413,
                f"labels: over {cap} labelled turns; a preview reads at most {cap} (--max-refit-labels): "
                "raise the limit, or fit with `recallwise tune` where the server runs",
                field="labels",
            )
        started = time.perf_counter()
        try:
            logged = from_logged(head, turns)
            fit = fit_head(
                head, logged.turns, current=decider, thresholds=self.service.policy.thresholds, stop=stop
            )
        except UsageError as exc:
            raise ServiceError(422, f"cannot preview a {head} refit: {exc}") from None
        except RefitStopped as exc:
            raise ServiceError(
                503, f"the {head} refit preview was {exc.reason}; nothing was written"
            ) from None
        fields: dict[str, Any] = {
            "head": head,
            "turns": len(logged.turns),
            "left_out": logged.left_out,
            "graded_on": fit.graded_on,
            # what `tune --from-log` says, the guard's refusal included (the commands shown would be
            # refused without --force)
            "notes": [n for n in (logged.note, *fit.notes, refusal(fit)) if n],
            "seconds": round(time.perf_counter() - started, 3),
            "before": _figures(model.FIGURES, fit.before),
            "after": _figures(model.FIGURES, fit.after),
            "commands": RefitCommandsOut(**refit_commands(head, keys=keys, decider=decider)),
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
            id=turn.id,
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
            replica=turn.replica,
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


# ---- the refit previews' queue --------------------------------------------------------------------------
@dataclass(eq=False)
class _Ticket:
    tenant: str
    granted: anyio.Event = field(default_factory=anyio.Event)
    running: bool = False


class FairQueue:
    """Refit previews of one process: ``workers`` run at once, the others wait, tenants taking
    turns (the next slot goes to the waiting tenant served longest ago, whatever their number of
    waiting previews); at most ``per_tenant`` of one tenant's wait or run at once
    (past it: 429). Lives on the event loop: every method is called from it."""

    def __init__(self, workers: int, per_tenant: int) -> None:
        self.workers = max(1, int(workers))
        self.per_tenant = max(1, int(per_tenant))
        self.running = 0
        #: tenants with waiting tickets, in the order they are served next
        self._waiting: dict[str, deque[_Ticket]] = {}
        self._held: Counter[str] = Counter()
        #: each tenant's last turn (the count of turns given when it was given)
        self._served: dict[str, int] = {}
        self._grants = 0

    @property
    def waiting(self) -> int:
        return sum(len(q) for q in self._waiting.values())

    def _grant(self) -> None:
        while self.running < self.workers and self._waiting:
            # the tenant served longest ago (never: first), the first come among equals
            tenant = min(self._waiting, key=lambda t: self._served.get(t, -1))
            self._grants += 1
            self._served[tenant] = self._grants
            tickets = self._waiting.pop(tenant)
            ticket = tickets.popleft()
            if tickets:  # the tenant's next one waits behind every other tenant's
                self._waiting[tenant] = tickets
            ticket.running = True
            self.running += 1
            ticket.granted.set()

    @asynccontextmanager
    async def slot(self, tenant: str) -> AsyncIterator[None]:
        """Wait for a turn to run (cancellable: a cancelled wait leaves the queue), then hold it."""
        if self._held[tenant] >= self.per_tenant:
            raise ServiceError(
                429,
                f"{self.per_tenant} refit preview(s) of yours are waiting or running already "
                "(--max-refits-per-tenant): wait for them",
            )
        self._held[tenant] += 1
        ticket = _Ticket(tenant)
        self._waiting.setdefault(tenant, deque()).append(ticket)
        try:
            self._grant()
            try:
                await ticket.granted.wait()
            except BaseException:
                if not ticket.running:
                    queue = self._waiting.get(tenant)
                    if queue is not None and ticket in queue:
                        queue.remove(ticket)
                        if not queue:
                            del self._waiting[tenant]
                raise
            yield
        finally:
            self._held[tenant] -= 1
            if not self._held[tenant]:
                del self._held[tenant]
            if ticket.running:
                self.running -= 1
                self._grant()


async def _until_disconnected(request: Request, stop: Stop, scope: anyio.CancelScope) -> None:
    """Wait for the client to go away; then stop its fit and cancel what waits for it."""
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            stop.cancelled.set()
            scope.cancel()
            return


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
    limits = service.limits
    queues: list[FairQueue] = []  # made on first use, on the event loop its events belong to
    Cursor = Annotated[int | None, Query(ge=1, le=MAX_ID, description="next_cursor of the page before")]

    @router.get("/v1/decisions", tags=["inspector"], response_model_exclude_unset=True)
    def list_decisions(
        who: Who,
        actor_id: str | None = None,
        session_id: str | None = None,
        opened: bool | None = Query(default=None, description="true: turns the gate opened; false: closed"),
        errors: bool | None = Query(default=None, description="true: turns with errors; false: without"),
        limit: Annotated[int, Query(ge=1, le=MAX_ID)] = 50,
        cursor: Cursor = None,
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

    @router.get("/v1/log", tags=["inspector"])
    def log_health(who: Who) -> LogHealthOut:
        """The decision log's health on this replica: writing or failing, rows written and dropped."""
        return inspector.health(who)

    @router.get("/v1/decisions/{decision_id}", tags=["inspector"], response_model_exclude_unset=True)
    def get_decision(decision_id: DecisionId, who: Who) -> DecisionOut:
        """One logged decision."""
        return inspector.decision(who, decision_id)

    @router.post("/v1/labels", tags=["inspector"], response_model_exclude_unset=True)
    def add_labels(body: LabelsIn, who: Who) -> LabelledTurnOut:
        """Label a decision: the gate (true: memory was needed) and its records (true: belongs)."""
        return inspector.add_labels(who, body)

    @router.get("/v1/labels", tags=["inspector"], response_model_exclude_unset=True)
    def list_labels(
        who: Who,
        actor_id: str | None = None,
        session_id: str | None = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LABELS_PAGE)] = 1000,
        cursor: Cursor = None,
    ) -> LabelsOut:
        """The labelled decisions, oldest first, a page at a time, as ``recallwise tune gate --fit``
        and the judge's fit read them."""
        return inspector.labels(who, actor_id=actor_id, session_id=session_id, limit=limit, cursor=cursor)

    async def refit(who: Principal, model: type[_Preview], request: Request) -> _Preview:
        # A fit holds a CPU for seconds: off the event loop, at most --refit-workers at once per
        # process with tenants taking turns, within --refit-timeout-s, stopped if the client leaves.
        if not queues:
            queues.append(FairQueue(limits.refit_workers, limits.max_refits_per_tenant))
        inspector.can_refit(who)  # 403 / 404 / 422 before it waits for a slot
        stop = Stop(limits.refit_timeout_s)
        result: _Preview | None = None
        refused: ServiceError | None = None  # raised outside the task group (not in an ExceptionGroup)
        async with anyio.create_task_group() as group:
            group.start_soon(_until_disconnected, request, stop, group.cancel_scope)
            try:
                async with queues[0].slot(who.tenant or ""):
                    stop.started = time.monotonic()
                    run = partial(inspector.refit_preview, who, model, keys=keys, stop=stop)
                    result = await anyio.to_thread.run_sync(run)
            except ServiceError as exc:
                refused = exc
            finally:
                group.cancel_scope.cancel()
        if (refused is not None and refused.status == 503) or result is None:  # the operator hears of it
            why = "cancelled: the client went away" if stop.cancelled.is_set() else str(refused)
            logger.warning("refit preview (%s) of tenant %s: %s", model.HEAD, who.tenant or "(local)", why)
        if refused is not None:
            raise refused
        if result is None:  # the client went away: nobody reads this
            raise ServiceError(503, "the refit preview was cancelled: the client went away")
        return result

    @router.get("/v1/refit-preview/gate", tags=["inspector"])
    def refit_plan_gate(who: Who) -> RefitPlanOut:
        """What a preview of a gate refit (``POST`` on this path) would read: the labelled turns,
        the limit, and the commands that apply a refit. Computes nothing."""
        return inspector.refit_plan(who, "gate", keys=keys)

    @router.get("/v1/refit-preview/judge", tags=["inspector"])
    def refit_plan_judge(who: Who) -> RefitPlanOut:
        """What a preview of a judge refit (``POST`` on this path) would read: the labelled turns,
        the limit, and the commands that apply a refit. Computes nothing."""
        return inspector.refit_plan(who, "judge", keys=keys)

    @router.post("/v1/refit-preview/gate", tags=["inspector"])
    async def refit_preview_gate(who: Who, request: Request) -> GateRefitOut:
        """What refitting the gate head on the labels would do: accuracy, AUC, ECE and open / closed
        rates of the labelled turns before and after, as ``recallwise tune gate --from-log`` fits it,
        and the commands that apply it. Writes nothing; 422 saying why when the labels cannot fit
        one, 413 over --max-refit-labels, 429 with too many of yours at once, 503 past
        --refit-timeout-s."""
        return await refit(who, GateRefitOut, request)

    @router.post("/v1/refit-preview/judge", tags=["inspector"])
    async def refit_preview_judge(who: Who, request: Request) -> JudgeRefitOut:
        """What refitting the judge head on the labels would do: accuracy, AUC, ECE, the right
        records kept and records kept per request before and after, as ``recallwise tune judge
        --from-log`` fits it, and the commands that apply it. Writes nothing; 422 saying why when
        the labels cannot fit one, 413 over --max-refit-labels, 429 with too many of yours at once,
        503 past --refit-timeout-s."""
        return await refit(who, JudgeRefitOut, request)

    @router.get("/ui", include_in_schema=False)
    def page() -> Response:
        html = _static("inspector.html").decode("utf-8")
        html = html.replace("{{keys}}", "required" if keys else "none")
        html = html.replace("{{log}}", escape("on" if inspector.log is not None else "off"))
        return Response(html, media_type="text/html; charset=utf-8", headers=_PAGE_HEADERS)

    @router.get("/ui/", include_in_schema=False)
    def page_slash() -> Response:
        # a relative Location: never an address built from the request's Host header
        return RedirectResponse("/ui", status_code=308, headers={"Cache-Control": "no-store"})

    @router.get("/ui/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name not in _STATIC_TYPES:
            raise ServiceError(404, f"no {name!r} here")
        return Response(_static(name), media_type=_STATIC_TYPES[name], headers=_PAGE_HEADERS)

    return router
