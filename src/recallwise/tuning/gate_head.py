"""Fitting the learned gate head (``recallwise tune gate --fit``): one set of weights per embedding
space on the message's embedding and the gate question's example vote (:func:`gate_matrix`), a
logistic regression on a user's few hundred labels or the average of :data:`GATE_SEEDS` perceptrons
on :data:`GATE_HIDDEN_FROM` turns or more, calibrated by Platt scaling; its threshold opens on
:data:`OPEN_RATE` of the graded turns that need memory.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..deciders.base import DecisionHints
from ..deciders.embedded import EmbeddedDecider, Space
from ..deciders.heads import GATE_FEATURES, Head, SpaceWeights
from ..embeddings import Embedder
from ..embeddings.language import guess_language
from ..errors import UsageError
from ..policy.wording import GATE, gate_question
from . import metrics
from .fitting import FittedModel, fit_space, platt, sigmoid
from .heads import (
    MIN_PER_CLASS,
    MIN_TURNS,
    HeadFit,
    Progress,
    Vectors,
    counts,
    decider_for,
    digest,
    no_text,
    space_name,
    spaces_of,
)
from .labelled import LabelledTurn

__all__ = [
    "GATE_HIDDEN",
    "GATE_HIDDEN_FROM",
    "GATE_SEEDS",
    "OPEN_RATE",
    "current_gate_p",
    "fit_gate_head",
    "gate_matrix",
    "gate_metrics",
    "operating_threshold",
]

#: the gate's operating point: it opens on at least this share of the graded turns that need memory
OPEN_RATE = 0.97
#: a gate fitted on at least this many turns gets a hidden layer of :data:`GATE_HIDDEN` units (a
#: perceptron: on the outside dev split it closes more where memory is not needed at the same open
#: rate than the logistic head, BENCHMARKS.md); fewer turns (a user's own labels) get the logistic
#: regression, which a few hundred labels can pin down
GATE_HIDDEN_FROM = 2000
GATE_HIDDEN = 32
#: how many perceptrons, each from its own seeded start, a gate head averages. Averaged, their
#: logits are one perceptron whose hidden layer is theirs side by side (the file format and the
#: run-time code are a single perceptron's); one seed's head moved short turns ("no, nothing else",
#: "Morning") across the threshold when only its start changed
GATE_SEEDS = 3


def _gate_turns(turns: Sequence[LabelledTurn], what: str) -> list[LabelledTurn]:
    out = []
    for turn in turns:
        if turn.label is None:
            raise UsageError(f"{turn.where}: unlabelled for the gate (no 'label': true or false)")
        if not turn.text:
            raise no_text(turn)
        out.append(turn)
    positives = sum(bool(t.label) for t in out)
    if positives in (0, len(out)):
        raise UsageError(
            f"{what}: every label is {'true' if positives else 'false'} ({len(out)} turns); a head "
            "needs both classes"
        )
    if len(out) < MIN_TURNS or min(positives, len(out) - positives) < MIN_PER_CLASS:
        raise UsageError(
            f"{what}: {len(out)} labelled turns ({positives} true, {len(out) - positives} false); a "
            f"gate head needs at least {MIN_TURNS}, with {MIN_PER_CLASS} of each class"
        )
    return out


def gate_metrics(p: np.ndarray, y: np.ndarray, threshold: float) -> dict[str, Any]:
    opened = p >= threshold
    return {
        "n": len(y),
        "accuracy": float(np.mean(opened == y)),
        "auc": metrics.auc(p, y),
        "ece": metrics.expected_calibration_error(p, y),
        "brier": metrics.brier(p, y),
        "open_rate_true": float(opened[y].mean()) if y.any() else None,
        "closed_rate_false": float((~opened[~y]).mean()) if (~y).any() else None,
        "threshold": threshold,
    }


def gate_matrix(decider: EmbeddedDecider, space: Space, texts: Sequence[str], vectors: Vectors) -> np.ndarray:
    """The gate head's features of ``texts`` in ``space`` (one row each), as
    :meth:`EmbeddedDecider.gate_features` computes them at run time -- except that a text which is
    itself one of the gate question's examples is not counted as its own nearest example."""
    question = gate_question()
    answering = decider.space_decider(space)
    x = vectors(space, texts).astype(np.float64)
    positives, negatives = answering.example_vectors(question)
    k = answering.params.k_examples
    votes = []
    for examples, label in ((positives, True), (negatives, False)):
        own = {e.state: i for i, e in enumerate(e for e in question.examples if e.label is label)}
        similarity = x @ np.asarray(examples, dtype=np.float64).T
        for row, text in enumerate(texts):
            if text in own:
                similarity[row, own[text]] = -np.inf
        votes.append(np.sort(similarity, axis=1)[:, -k:].mean(axis=1))
    return np.hstack([x, (votes[0] - votes[1])[:, None]])


def _answered(answered: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The rows to calibrate a space's head on: those it answers at run time (the multilingual
    head answers the non-English ones), when they hold enough of both classes; else every row."""
    mask = np.asarray(answered, dtype=bool)
    ys = np.asarray(labels, dtype=bool)[mask]
    if min(int(ys.sum()), int((~ys).sum())) >= MIN_PER_CLASS:
        return mask
    return np.ones(len(mask), dtype=bool)


def operating_threshold(positive_p: np.ndarray, open_rate: float) -> float:
    """The highest threshold (3 decimals) at which at least ``open_rate`` of ``positive_p`` pass."""
    values = np.sort(np.asarray(positive_p, dtype=np.float64))
    if not len(values):
        return 0.5
    allowed = int(np.floor((1.0 - open_rate) * len(values) + 1e-9))  # that many may fall below
    return float(np.floor(values[min(allowed, len(values) - 1)] * 1000.0) / 1000.0)


def current_gate_p(decider: EmbeddedDecider, texts: Sequence[str], vectors: Vectors) -> np.ndarray:
    """The decider's gate p for each text, as the policy asks it (the turn's English vector as a hint)."""
    question = {GATE: gate_question()}
    primary = vectors("primary", texts)
    name = decider.embedder.name
    out = []
    for text, vector in zip(texts, primary, strict=True):
        hints = DecisionHints(state_vector=vector, embedder_name=name)
        out.append(float(decider.decide(text, question, hints).answers[GATE]))  # type: ignore[arg-type]
    return np.asarray(out)


def fit_gate_head(
    turns: Sequence[LabelledTurn],
    *,
    embedder: Embedder | None = None,
    calibration: Sequence[LabelledTurn] | None = None,
    current: EmbeddedDecider | None = None,
    threshold: float = 0.5,
    open_rate: float = OPEN_RATE,
    progress: Progress | None = None,
    provenance: Mapping[str, Any] | None = None,
    hidden: int | None = None,
    weights: Sequence[float] | None = None,
) -> HeadFit:
    """Fit and calibrate a gate head on labelled turns (see the module docs).

    ``embedder``: the policy's model (default: the offline English one, with the multilingual
    model for other languages). ``current``: the decider whose figures are ``before`` (default:
    the embedded decider with the shipped heads), graded at ``threshold`` (its gate threshold).
    The head's own threshold, saved with it, is the highest at which it still opens on
    ``open_rate`` of the graded turns that need memory; ``after`` is graded at it.
    ``hidden``: units of each of the :data:`GATE_SEEDS` perceptrons averaged into the head (0: a
    logistic regression); default
    :data:`GATE_HIDDEN` when the fit has at least :data:`GATE_HIDDEN_FROM` turns, else 0.
    ``weights``: each fit turn's weight (parallel to ``turns``; default 1 each), as when a user's
    labels are combined with the shipped fit data (:mod:`.refit`).
    """
    if not 0.0 < open_rate <= 1.0:
        raise UsageError(f"open_rate must be in (0, 1], got {open_rate}")
    if hidden is not None and hidden < 0:
        raise UsageError(f"hidden must be 0 or more units, got {hidden}")
    fit_turns = _gate_turns(turns, "fit data")
    graded = _gate_turns(calibration, "calibration data") if calibration else fit_turns
    if weights is not None and len(weights) != len(fit_turns):
        raise UsageError(f"weights: {len(weights)} for {len(fit_turns)} fit turns")
    weight_of = {id(t): float(w) for t, w in zip(fit_turns, weights, strict=True)} if weights else None
    decider = decider_for(embedder, current)
    vectors = Vectors(decider, progress)
    notes: list[str] = []
    unreadable = [t for t in fit_turns if guess_language(t.text or "").kind == "unsupported"]
    if unreadable:
        notes.append(
            f"{len(unreadable)} turn(s) in a script neither model reads (answered open, as without a "
            f"gate): left out of the fit, e.g. {unreadable[0].where}"
        )
    readable = [t for t in fit_turns if guess_language(t.text or "").kind != "unsupported"]
    texts = [t.text or "" for t in readable]
    y = np.array([bool(t.label) for t in readable])
    row_weights = np.array([weight_of[id(t)] for t in readable]) if weight_of else None
    units = hidden if hidden is not None else (GATE_HIDDEN if len(texts) >= GATE_HIDDEN_FROM else 0)
    routed = np.array([decider.answer_spaces(text)[0] for text in texts])
    spaces: dict[str, SpaceWeights] = {}
    fitted: dict[str, dict[str, Any]] = {}
    models: dict[Space, FittedModel] = {}
    out_of_fold = np.zeros(len(texts))
    for space in spaces_of(decider):
        # the English model's head is fitted on what it answers; the multilingual one on everything
        rows = np.flatnonzero(routed == space) if space == "primary" else np.arange(len(texts))
        if space == "primary" and len(spaces_of(decider)) == 1:
            rows = np.arange(len(texts))
        ys = y[rows]
        if len(rows) < MIN_TURNS or min(ys.sum(), (~ys).sum()) < MIN_PER_CLASS:
            notes.append(
                f"{space_name(decider, space)}: {len(rows)} turns ({int(ys.sum())} true): too few to fit, "
                "its questions stay with the current decider"
            )
            continue
        x = gate_matrix(decider, space, [texts[i] for i in rows], vectors)
        model, oof = fit_space(
            x,
            ys,
            rows,
            standardise=True,
            hidden=units,
            seeds=GATE_SEEDS,
            out_of_fold=not calibration,
            sample_weight=None if row_weights is None else row_weights[rows],
        )
        if model.hidden is not None:  # stored as float32: fit, grade and ship the same numbers
            model = FittedModel(
                model.weights, model.bias, model.l2, model.hidden.astype(np.float32), model.hidden_bias
            )
        models[space] = model
        answered = routed[rows] == space
        out_of_fold[rows[answered]] = oof[answered]
        fitted[space_name(decider, space)] = {
            "l2": model.l2,
            "n": len(rows),
            "true": int(ys.sum()),
            "hidden": units,
            "seeds": GATE_SEEDS if units else None,
        }
        if not calibration:
            own = _answered(answered, ys)
            a, c = platt(oof[own], ys[own], None if row_weights is None else row_weights[rows][own])
            fitted[space_name(decider, space)]["platt"] = [a, c]
    if not models:
        raise UsageError("fit data: too few turns in any embedding space to fit a gate head")
    # calibration: Platt on held-out logits (the calibration turns, or out of fold), per space
    graded_texts = [t.text or "" for t in graded]
    graded_y = np.array([bool(t.label) for t in graded])
    graded_routed = [decider.answer_spaces(text)[0] for text in graded_texts]
    graded_p = np.ones(len(graded))
    for space, model in models.items():
        name = space_name(decider, space)
        if calibration:
            cal_rows = (
                np.arange(len(graded))
                if space == "multilingual"
                else np.flatnonzero(np.array(graded_routed) == "primary")
            )
            cal_rows = np.array(
                [i for i in cal_rows if guess_language(graded_texts[i]).kind != "unsupported"], dtype=int
            )
            logits = model.logits(gate_matrix(decider, space, [graded_texts[i] for i in cal_rows], vectors))
            if len(cal_rows) < 2 or graded_y[cal_rows].all() or not graded_y[cal_rows].any():
                raise UsageError(f"calibration data: too few turns of both classes for the {name} head")
            own = _answered(np.array([graded_routed[i] == space for i in cal_rows]), graded_y[cal_rows])
            a, c = platt(logits[own], graded_y[cal_rows][own])
            fitted[name]["platt"] = [a, c]
            calibrated = sigmoid(a * logits + c)
            for row, p in zip(cal_rows, calibrated, strict=True):
                if graded_routed[row] == space:
                    graded_p[row] = p
        else:
            a, c = fitted[name]["platt"]
        spaces[name] = SpaceWeights(
            name,
            a * model.weights,
            a * model.bias + c,
            int(fitted[name]["n"]),
            model.hidden,
            model.hidden_bias,
        )
    if not calibration:
        # out of fold, calibrated: each turn by the space that answers it (unreadable ones open)
        by_text = {text: i for i, text in enumerate(texts)}
        for i, turn in enumerate(graded):
            j = by_text.get(turn.text or "")
            if j is None:
                continue
            space = routed[j]
            if space in models:
                a, c = fitted[space_name(decider, space)]["platt"]
                graded_p[i] = float(sigmoid(np.array(a * out_of_fold[j] + c)))
            else:
                graded_p[i] = np.nan
    before_p = current_gate_p(decider, graded_texts, vectors)
    unanswered = np.isnan(graded_p)
    if unanswered.any():  # a space too small to fit: those turns stay with the current decider
        graded_p[unanswered] = before_p[unanswered]
    data = dict(provenance or {})
    head = Head(
        "gate",
        spaces,
        GATE_FEATURES,
        {
            **data,
            "n": len(fit_turns),
            "true": int(sum(bool(t.label) for t in fit_turns)),
            "false": int(sum(not t.label for t in fit_turns)),
            "counts": counts(fit_turns, gate=True),
            "calibration_n": len(calibration) if calibration else None,
            "data_sha256": data.get("data_sha256") or digest(fit_turns),
            "date": _dt.datetime.now(_dt.UTC).date().isoformat(),
            "fit": fitted,
        },
    )
    chosen = operating_threshold(graded_p[graded_y], open_rate)
    head = Head(head.role, head.spaces, head.features, {**head.provenance, "thresholds": {"gate": chosen}})
    after = gate_metrics(graded_p, graded_y, chosen)
    head = Head(head.role, head.spaces, head.features, {**head.provenance, "figures": after})
    return HeadFit(
        "gate",
        head,
        gate_metrics(before_p, graded_y, threshold),
        after,
        "calibration turns" if calibration else "out of fold",
        notes,
        metrics.reliability_table(graded_p, graded_y),
    )
