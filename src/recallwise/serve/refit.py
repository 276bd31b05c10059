"""Refitting the learned gate or judge head on labelled turns: the one call behind
``recallwise tune gate|judge`` and the decision inspector's refit preview.

Both run :func:`fit_head` (which calls :func:`~recallwise.tuning.gate_head.fit_gate_head` or
:func:`~recallwise.tuning.judge_head.fit_judge_head`) with the current decider and its thresholds, and
both read a decision log's labels through :func:`logged_turns` (the labels' texts from the log; the
turns labelled for the head fitted, the others left out), so the preview on a server and the CLI
on the same labels report the same figures before and after.

:func:`refit_commands` writes the commands that apply a previewed refit: export the labels, fit and
write the head into a threshold config, and start the server with that config.

Free of HTTP and pydantic (like :mod:`.access`): ``recallwise tune`` imports it on the base install.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..deciders.embedded import EmbeddedDecider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy.config import CONFIG_ENV
from ..tuning.gate_head import OPEN_RATE, fit_gate_head
from ..tuning.heads import HeadFit
from ..tuning.judge_head import RECORDS_PER_REQUEST, KeepRule, fit_judge_head
from ..tuning.labelled import LabelledTurn, labelled_turns_from_log

__all__ = ["HEADS", "HeadName", "LoggedLabels", "fit_head", "logged_turns", "refit_commands"]

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
    weights: Sequence[float] | None = None,
) -> HeadFit:
    """Fit ``head`` on ``turns`` (each weighing ``weights``, default 1); ``before`` grades ``current``
    at its ``thresholds`` (the gate's ``gate``; the judge's keep rule ``judge`` and
    ``judge_relative``), ``after`` the new head at its own operating point (``open_rate``,
    ``records_per_request``). Too few turns, or one class only, is the fit's :class:`UsageError`,
    naming the counts."""
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


def refit_commands(
    head: HeadName,
    *,
    log_path: str | os.PathLike[str],
    base_url: str,
    keys: bool,
    decider: EmbeddedDecider,
) -> dict[str, str]:
    """The shell commands that apply a previewed refit of ``head``, run where the server runs:

    - ``export``: the labels the preview read (with keys: the key's tenant's, from
      ``GET /v1/labels``; without: the log's, from ``recallwise log --labels``);
    - ``fit``: ``recallwise tune HEAD --from-log LOG --labels labels.json --base none --write-head
      HEAD.npz --write-config CONFIG`` (the labels alone, as the preview fits them), in the
      server's ``RECALLWISE_CONFIG`` (the heads and thresholds the preview graded as "before") and
      with its decider's embedder when not the default;
    - ``load``: the server started again with the config that names the new head.
    """
    log = shlex.quote(str(log_path))
    if keys:
        export = (
            f'curl -s -H "Authorization: Bearer $RECALLWISE_KEY" {shlex.quote(base_url + "/v1/labels")} '
            "> labels.json"
        )
    else:
        export = f"recallwise log {log} --labels --json > labels.json"
    configured = os.environ.get(CONFIG_ENV, "").strip()
    config = shlex.quote(configured) if configured else "recallwise.json"
    env = f"{CONFIG_ENV}={config} " if configured else ""
    embedder = decider.embedder.name
    flags = f" --embedder {shlex.quote(embedder)}" if embedder != default_embedder().name else ""
    fit = (
        f"{env}recallwise tune {head} --from-log {log} --labels labels.json --base none{flags} "
        f"--write-head {head}.npz --write-config {config}"
    )
    load = f"{CONFIG_ENV}={config} recallwise serve <your flags, as now>"
    return {"export": export, "fit": fit, "load": load}
