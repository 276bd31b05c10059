"""A refit that cannot silently make things worse (``recallwise tune gate|judge --fit``).

A user's few labels alone pin down a worse head than the shipped one: 24 sensible gate labels gave a
head whose accuracy on the shipped calibration split fell from 0.96 to 0.54. So a refit

- **combines** the user's labelled turns with the shipped fit data (the datasheet's fit sets, under
  ``data/decisions/`` of a source checkout), each of the user's turns weighing :data:`USER_WEIGHT`
  of the shipped ones, and calibrates on the shipped calibration split (``data/decisions/calib``);
- **reports** the current decider and the new head on the calibration split and on the user's own
  labels (:func:`on_labels`);
- **refuses** to write a head that is worse on the calibration split by more than
  :data:`TOLERANCE` (:func:`refusal`), unless forced.

``--calibrate DATA`` fits on exactly the ``--fit`` data and grades on ``DATA`` (the datasheet's own
commands); ``--base none`` fits on the user's labels alone, graded out of fold. The guard holds in
both: it compares the two heads on whatever the fit is graded on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..deciders.embedded import EmbeddedDecider
from ..deciders.heads import Head, HeadRole
from ..errors import UsageError
from ..policy.wording import GATE
from .gate_head import current_gate_p, gate_metrics
from .heads import HeadFit, Vectors
from .judge_head import KeepRule, current_judge_p, judge_metrics, judge_turns, set_needs
from .labelled import LabelledTurn

__all__ = [
    "SHIPPED",
    "TOLERANCE",
    "USER_WEIGHT",
    "ShippedData",
    "combine",
    "guard_figure",
    "on_labels",
    "refusal",
    "shipped_data",
]

#: ``--base``'s default: the shipped fit and calibration data of a source checkout
SHIPPED = "shipped"
#: how many of the shipped fit data's turns one of the user's labelled turns weighs (``--weight``):
#: 24 labels then count as 240 of the gate's 13,981 turns, enough to move the turns they are about
#: and too few to undo the rest
USER_WEIGHT = 10.0
#: a new head worse than the current one on the calibration split by more than this (in the guard's
#: figure, :data:`GUARD`) is not written without ``--force``; a refit on the same data moves it by
#: less (its seeds and the grid of thresholds)
TOLERANCE = 0.01
#: the figure the guard compares, per head, and its name in the refusal
GUARD: dict[str, tuple[str, str]] = {
    "gate": ("accuracy", "accuracy"),
    # pooled over every (message, record) pair: how well p separates the records that belong from
    # the rest, within a turn and across turns (a general request's records from a request's), at
    # any operating point; the right records kept depend on the records-per-request budget chosen
    "judge": ("auc", "AUC"),
}


@dataclass(frozen=True)
class ShippedData:
    """The project's decision data (``data/decisions/`` of a source checkout; not in the wheel)."""

    root: Path

    def fit_specs(self, role: HeadRole) -> list[str]:
        """The datasheet's fit sets for ``role`` (``data/heads/DATASHEET.md``)."""
        package = Path(__file__).resolve().parents[1] / "data"
        if role == "gate":
            return [
                str(self.root / "fit"),
                str(package / "gate_examples.jsonl"),
                str(package / "dev" / "gate_labels_multilingual.jsonl"),
                str(package / "dev" / "gate_labels_domains.jsonl"),
            ]
        return [
            str(self.root / "fit"),
            "builtin:dev",
            str(package / "dev" / "validator_cases_multilingual.json"),
        ]

    def calibration_specs(self) -> list[str]:
        return [str(self.root / "calib")]


def _checkout_data() -> Path:
    # src/recallwise/tuning/refit.py -> the checkout's root
    return Path(__file__).resolve().parents[3] / "data" / "decisions"


def shipped_data(spec: str) -> ShippedData | None:
    """``--base``: ``shipped`` (the checkout's ``data/decisions``), ``none``, or a folder holding
    ``fit/`` and ``calib/``."""
    if spec == "none":
        return None
    root = _checkout_data() if spec == SHIPPED else Path(spec)
    if not ((root / "fit").is_dir() and (root / "calib").is_dir()):
        if spec == SHIPPED:
            raise UsageError(
                "the shipped fit and calibration data are not installed (they are data/decisions/ of a "
                "source checkout of recallwise): give --base DIR (that folder), or --base none to fit on "
                "your labels alone, graded out of fold"
            )
        raise UsageError(f"--base {spec}: expected a folder holding fit/ and calib/ (data/decisions/)")
    return ShippedData(root)


def combine(
    user: Sequence[LabelledTurn], base: Sequence[LabelledTurn], weight: float
) -> tuple[list[LabelledTurn], list[float]]:
    """The fit turns and their weights: the shipped ones at 1, the user's at ``weight``. A user's
    turn whose text is also a shipped one replaces it (the user's label wins)."""
    if not weight > 0:
        raise UsageError(f"--weight must be > 0, got {weight}")
    own = {t.text for t in user if t.text}
    kept = [t for t in base if t.text not in own]
    return [*kept, *user], [1.0] * len(kept) + [float(weight)] * len(user)


def guard_figure(role: HeadRole, figures: Mapping[str, Any]) -> float | None:
    value = figures.get(GUARD[role][0])
    return None if value is None else float(value)


def refusal(fit: HeadFit, tolerance: float = TOLERANCE) -> str | None:
    """Why the new head must not be written (one line), or None when it is not worse than the
    current one on what the fit was graded on by more than ``tolerance``."""
    before, after = guard_figure(fit.role, fit.before), guard_figure(fit.role, fit.after)
    if before is None or after is None or after >= before - tolerance:
        return None
    name, unit = GUARD[fit.role][1], "turns" if fit.role == "gate" else "pairs"
    return (
        f"not written: on the {fit.graded_on} ({fit.after['n']} {unit}) "
        f"the new {fit.role} head's {name} is {after:.3f} against the current {before:.3f} "
        f"({after - before:+.3f}, more than {tolerance:.2f} worse); --force writes it anyway"
    )


def on_labels(
    fit: HeadFit,
    turns: Sequence[LabelledTurn],
    current: EmbeddedDecider,
    thresholds: Mapping[str, float],
) -> dict[str, dict[str, Any]]:
    """The current decider (at ``thresholds``) and the new head (at its own operating point) on the
    user's labelled ``turns``: ``{"before": ..., "after": ...}``, the figures of ``fit.before``. The
    new head was fitted on these turns, so ``after`` is in sample."""
    head: Head = fit.head
    fitted = current.with_heads(**{fit.role: head})
    vectors = Vectors(current)
    if fit.role == "gate":
        texts = [t.text or "" for t in turns]
        y = np.array([bool(t.label) for t in turns])
        return {
            "before": gate_metrics(current_gate_p(current, texts, vectors), y, thresholds[GATE]),
            "after": gate_metrics(current_gate_p(fitted, texts, vectors), y, head.thresholds[GATE]),
        }
    judged = judge_turns(turns, current, vectors=vectors, domains=False)
    set_needs(judged, current, vectors)
    before = KeepRule(thresholds["judge"], thresholds["judge_relative"])
    after = KeepRule(head.thresholds["judge"], head.thresholds.get("judge_relative", 1.0))
    return {
        "before": judge_metrics(judged, [current_judge_p(current, j, vectors) for j in judged], before),
        "after": judge_metrics(judged, [current_judge_p(fitted, j, vectors) for j in judged], after),
    }
