"""Refitting the learned gate or judge head on labelled turns: the one call behind
``recallwise tune gate|judge`` and the decision inspector's refit preview.

Both run :func:`fit_head` (which calls :func:`~recallwise.tuning.gate_head.fit_gate_head` or
:func:`~recallwise.tuning.judge_head.fit_judge_head`) with the current decider and its thresholds,
and both read a decision log's labels the same way (the labels' texts from the log; the turns
labelled for the head fitted, the others left out): the CLI from a labels file and the log's file
(:func:`logged_turns`), the server from its log's turns (:func:`from_logged`); so the preview on a
server and the CLI on the same labels report the same figures before and after.

:func:`refit_commands` writes the commands that apply a previewed refit: export the labels, fit and
write the head into a threshold config, and start the server with that config. They name no server
path and no host: ``LOG`` is the file given to ``--log``, ``$RECALLWISE_URL`` the server's address
(a request's ``Host`` header is the client's to choose, and another tenant's admin need not learn
the server's paths).

A fit can be stopped (the client went away, its time ran out): :func:`fit_head`'s ``stop`` (a
:class:`Stop`) is checked as the fit embeds and judges and at every step of its optimisers
(:func:`~recallwise.tuning.fitting.checkpoint`), and raises :class:`RefitStopped`.

Free of HTTP and pydantic (like :mod:`.access`): ``recallwise tune`` imports it on the base install.
"""

from __future__ import annotations

import os
import shlex
import threading
import time
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..deciders.embedded import EmbeddedDecider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy.config import CONFIG_ENV
from ..tuning.fitting import checkpoints
from ..tuning.gate_head import OPEN_RATE, fit_gate_head
from ..tuning.heads import HeadFit
from ..tuning.judge_head import RECORDS_PER_REQUEST, KeepRule, fit_judge_head
from ..tuning.labelled import LabelledRecord, LabelledTurn, labelled_turns_from_log

if TYPE_CHECKING:
    from ..policy.log import LoggedTurn

__all__ = [
    "HEADS",
    "HeadName",
    "LoggedLabels",
    "RefitStopped",
    "Stop",
    "fit_head",
    "from_logged",
    "logged_turns",
    "refit_commands",
]

HeadName = Literal["gate", "judge"]
HEADS: tuple[HeadName, ...] = ("gate", "judge")

#: what a label of each head is, and how one is given
_LABEL_OF = {"gate": "a gate label", "judge": "labelled records"}
_HOW = {
    "gate": "r / w on /ui, or 'gate' in POST /v1/labels",
    "judge": "b / d on /ui, or 'records' in POST /v1/labels",
}


def labelled_for(head: HeadName, turn: LabelledTurn) -> bool:
    """Whether ``turn`` carries a label ``head``'s fit reads: the gate's ``label``, the judge's
    ``records``."""
    return turn.label is not None if head == "gate" else bool(turn.records)


@dataclass(frozen=True)
class LoggedLabels:
    """The labelled turns of a decision log one head's fit reads, their texts from the log."""

    head: HeadName
    turns: list[LabelledTurn]
    #: labelled turns without a label for this head (labelled for the other head only)
    left_out: int

    @property
    def note(self) -> str | None:
        """What was left out, said in the fit's notes (None: nothing)."""
        if not self.left_out:
            return None
        other = "judge" if self.head == "gate" else "gate"
        return (
            f"{self.left_out} labelled turn(s) without {_LABEL_OF[self.head]} left out "
            f"(labelled for the {other} only)"
        )


def logged_turns(
    head: HeadName, log_path: str | os.PathLike[str], labels: Sequence[LabelledTurn], source: str = "labels"
) -> LoggedLabels:
    """The turns of ``labels`` (a decision log's labels: ``GET /v1/labels``, ``recallwise log
    --labels``) that ``head``'s fit reads, with their message and records' texts from the log.

    A label set holds both heads' labels (a person labels a turn's gate, its records, or both);
    each head is fitted on the turns labelled for it. No such turn is a :class:`UsageError` saying
    how to give one, as is every problem :func:`labelled_turns_from_log` finds (a turn logged
    without its text, a decision the log does not hold).
    """
    chosen = [t for t in labels if labelled_for(head, t)]
    if not chosen:
        raise UsageError(
            f"{source}: no turn has {_LABEL_OF[head]} ({_HOW[head]}); the {head} head is fitted on the "
            "turns labelled for it"
        )
    return LoggedLabels(head, labelled_turns_from_log(log_path, chosen), len(labels) - len(chosen))


def from_logged(head: HeadName, turns: Sequence[LoggedTurn]) -> LoggedLabels:
    """The labelled turns of a decision log (its :class:`~recallwise.policy.log.LoggedTurn`, as
    ``DecisionLog.labelled_turns`` returns them) that ``head``'s fit reads, with their message and
    records' texts: what :func:`logged_turns` makes of the same turns exported and read back.
    A turn logged without its text, or none labelled for ``head``, is a :class:`UsageError` naming
    it."""
    labelled = [
        LabelledTurn(
            text=None,
            label=t.gate_label,
            records=tuple(LabelledRecord(r, None, belongs) for r, belongs in t.record_labels.items()),
            decision_id=str(t.id),
        )
        for t in turns
    ]
    chosen = [t for t in labelled if labelled_for(head, t)]
    if not chosen:
        raise UsageError(
            f"labels: no turn has {_LABEL_OF[head]} ({_HOW[head]}); the {head} head is fitted on the "
            "turns labelled for it"
        )
    by_id = {str(t.id): t for t in turns}
    out = []
    for turn in chosen:
        logged = by_id[str(turn.decision_id)]
        if not logged.message:
            raise UsageError(
                f"labels: decision {turn.decision_id} was logged without its message; run "
                "`recallwise serve --log-content` (or log from a policy) to keep message text"
            )
        texts = {c["id"]: c.get("text") for c in logged.candidates}
        records = []
        for record in turn.records:
            if not texts.get(record.id):
                raise UsageError(
                    f"labels: record {record.id!r} of decision {turn.decision_id} has no text in the "
                    "log (not one of its candidates, or logged without content)"
                )
            records.append(LabelledRecord(record.id, texts[record.id], record.label))
        out.append(
            LabelledTurn(
                text=logged.message,
                label=turn.label,
                records=tuple(records),
                decision_id=turn.decision_id,
                actor_id=logged.actor_id,
                session_id=logged.session_id,
                time=logged.at,
                where=f"decision {turn.decision_id}",
            )
        )
    return LoggedLabels(head, out, len(labelled) - len(chosen))


class RefitStopped(Exception):
    """A fit stopped before its end: ``reason`` says why (its time ran out, its client went away)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Stop:
    """When a fit must stop: ``cancelled`` set (its client went away), or past ``timeout_s`` from
    its start. Called as the fit's progress callback: it checks and raises :class:`RefitStopped`."""

    timeout_s: float
    cancelled: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.monotonic)

    def __call__(self, _done: int = 0) -> None:
        if self.cancelled.is_set():
            raise RefitStopped("cancelled: the client went away")
        if time.monotonic() - self.started > self.timeout_s:
            raise RefitStopped(f"stopped after {self.timeout_s:g} s")


def fit_head(
    head: HeadName,
    turns: Sequence[LabelledTurn],
    *,
    current: EmbeddedDecider,
    thresholds: Mapping[str, float],
    embedder: Embedder | None = None,
    calibration: Sequence[LabelledTurn] | None = None,
    open_rate: float = OPEN_RATE,
    records_per_request: float = RECORDS_PER_REQUEST,
    domain_table: bool = False,
    progress: Any = None,
    provenance: Mapping[str, Any] | None = None,
    stop: Stop | None = None,
    weights: Sequence[float] | None = None,
) -> HeadFit:
    """Fit ``head`` on ``turns`` (each weighing ``weights``, default 1); ``before`` grades
    ``current`` at its ``thresholds`` (the gate's ``gate``; the judge's keep rule ``judge`` and
    ``judge_relative``), ``after`` the new head at its own operating point (``open_rate``,
    ``records_per_request``). Too few turns, or one class only, is the fit's :class:`UsageError`,
    naming the counts. ``stop``: checked as the fit goes (it
    raises :class:`RefitStopped`)."""
    guard: AbstractContextManager[object] = nullcontext()
    if stop is not None:
        told = progress

        def progress(done: int) -> None:
            stop(done)
            if told is not None:
                told(done)

        guard = checkpoints(stop)
    with guard:
        return _fit(
            head,
            turns,
            current,
            thresholds,
            embedder,
            calibration,
            open_rate,
            records_per_request,
            domain_table,
            progress,
            provenance,
            weights,
        )


def _fit(
    head: HeadName,
    turns: Sequence[LabelledTurn],
    current: EmbeddedDecider,
    thresholds: Mapping[str, float],
    embedder: Embedder | None,
    calibration: Sequence[LabelledTurn] | None,
    open_rate: float,
    records_per_request: float,
    domain_table: bool,
    progress: Any,
    provenance: Mapping[str, Any] | None,
    weights: Sequence[float] | None = None,
) -> HeadFit:
    if head == "gate":
        return fit_gate_head(
            turns,
            embedder=embedder,
            calibration=calibration,
            current=current,
            threshold=thresholds["gate"],
            open_rate=open_rate,
            progress=progress,
            provenance=provenance,
            weights=weights,
        )
    return fit_judge_head(
        turns,
        embedder=embedder,
        calibration=calibration,
        current=current,
        keep=KeepRule(thresholds["judge"], thresholds["judge_relative"]),
        records_per_request=records_per_request,
        domain_table=domain_table,
        progress=progress,
        provenance=provenance,
        weights=weights,
    )


def refit_commands(head: HeadName, *, keys: bool, decider: EmbeddedDecider) -> dict[str, str]:
    """The shell commands that apply a previewed refit of ``head``, run where the server runs
    (``LOG``: the file given to ``--log``; ``$RECALLWISE_URL``: the server's address):

    - ``export``: the labels the preview read (with keys: the key's tenant's, from
      ``GET /v1/labels``; without: the log's, from ``recallwise log LOG --labels``);
    - ``fit``: ``recallwise tune HEAD --from-log LOG --labels labels.json --base none --write-head
      HEAD.npz --write-config CONFIG`` (the labels alone, as the preview fits them), with the
      server's ``RECALLWISE_CONFIG`` when it has one (the heads and thresholds the preview graded
      as "before"; named, not shown) and its decider's embedder when not the default;
    - ``load``: the server started again with the config that names the new head.

    Nothing in them comes from the request (its ``Host``) or names a path of the server's.
    """
    if keys:
        export = (
            'curl -s -H "Authorization: Bearer $RECALLWISE_KEY" '
            '"$RECALLWISE_URL/v1/labels?limit=10000" > labels.json'
        )
    else:
        export = "recallwise log LOG --labels --json > labels.json"
    configured = bool(os.environ.get(CONFIG_ENV, "").strip())
    config = f'"${CONFIG_ENV}"' if configured else "recallwise.json"
    embedder = decider.embedder.name
    flags = f" --embedder {shlex.quote(embedder)}" if embedder != default_embedder().name else ""
    fit = (
        f"recallwise tune {head} --from-log LOG --labels labels.json --base none{flags} "
        f"--write-head {head}.npz --write-config {config}"
    )
    load = f"{CONFIG_ENV}={config} recallwise serve <your flags, as now>"
    return {"export": export, "fit": fit, "load": load}
