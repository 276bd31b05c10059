"""Fitting the follow-up head on labelled conversations (``recallwise tune follow-up --fit DIR``).

Every turn of a conversation after its first whose ``follow_up`` label is known is one example: the
pair (the conversation's previous message, this one), the request the chain carries on (the last
turn before it labelled not a follow-up) and the turn's ``follow_up`` label. The features are the ones the
policy computes at run time (:func:`~recallwise.policy.follow_up.pair_features`): the messages'
embeddings made by the store embedder, the gate's p of each message from the embedded decider
(its shipped gate head), the new message's length and markers.

The head is a logistic regression on standardised features (L2), fitted on ``--fit``; its logit
is Platt-scaled on ``--calibrate`` and the threshold is chosen there, where precision and recall
are both highest (the largest ``min(precision, recall)``); the other sets are only graded
(AUC, ECE, precision and recall at that threshold, per turn source). Conversations are the
``*.jsonl`` files of :mod:`recallwise.bench.conversations`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..bench.conversations import Conversation, load_conversations
from ..deciders.base import DecisionHints
from ..deciders.embedded import EmbeddedDecider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy.follow_up import FOLLOW_UP_FEATURES, FollowUpHead, PriorTurn, pair_features
from ..policy.wording import GATE, gate_question
from . import metrics
from .fitting import _standardise, fit_logistic, platt

__all__ = ["FollowUpFit", "PairSet", "conversation_pairs", "fit_follow_up_head", "pair_metrics"]

#: the head's L2 penalty on standardised features: the lowest calib ECE among 10, 30, 100, 300, 1000
#: (AUC 0.968 at 10-30, 0.958 at 1000)
DEFAULT_L2 = 30.0
Progress = Callable[[int], None]


@dataclass
class PairSet:
    """The examples of a set of conversations: features, labels, and each one's turn source."""

    x: np.ndarray
    y: np.ndarray
    sources: list[str]
    conversations: int
    digest: str

    def __len__(self) -> int:
        return len(self.y)


def _digest(conversations: Sequence[Conversation]) -> str:
    h = hashlib.sha256()
    for c in conversations:
        h.update(c.id.encode())
        for t in c.turns:
            h.update(f"{t.text}\x00{t.follow_up}\x00".encode())
    return h.hexdigest()


def conversation_pairs(
    conversations: Sequence[Conversation],
    decider: EmbeddedDecider,
    embedder: Embedder,
    progress: Progress | None = None,
) -> PairSet:
    """The pair examples of ``conversations`` (see the module)."""
    texts = list(dict.fromkeys(t.text for c in conversations for t in c.turns))
    vectors: dict[str, np.ndarray] = {}
    gate: dict[str, float] = {}
    question = {GATE: gate_question()}
    for start in range(0, len(texts), 64):
        batch = texts[start : start + 64]
        for text, vector in zip(batch, embedder.embed(batch), strict=True):
            vectors[text] = vector
            hints = DecisionHints(state_vector=vector, embedder_name=embedder.name)
            answer = decider.decide(text, question, hints).answers[GATE]
            gate[text] = float(answer) if isinstance(answer, float) else 0.5
        if progress is not None:
            progress(len(batch))
    rows: list[np.ndarray] = []
    labels: list[bool] = []
    sources: list[str] = []
    for c in conversations:
        request_at = 0
        for i, turn in enumerate(c.turns):
            if i == 0:
                continue
            previous_turn = c.turns[i - 1]
            if previous_turn.follow_up is False:
                request_at = i - 1
            if turn.follow_up is None:
                continue  # the labels cannot tell: not an example
            request_turn = c.turns[request_at]
            previous = PriorTurn(
                previous_turn.text, 0.0, vectors[previous_turn.text], gate[previous_turn.text]
            )
            request = PriorTurn(request_turn.text, 0.0, vectors[request_turn.text], gate[request_turn.text])
            rows.append(pair_features(turn.text, vectors[turn.text], previous, request, gate[turn.text]))
            labels.append(bool(turn.follow_up))
            sources.append(turn.source)
    if not rows:
        raise UsageError("no conversation has two turns: nothing to fit the follow-up head on")
    return PairSet(
        np.vstack(rows), np.array(labels, dtype=bool), sources, len(conversations), _digest(conversations)
    )


def _precision_recall(p: np.ndarray, y: np.ndarray, threshold: float) -> tuple[float | None, float | None]:
    taken = p >= threshold
    precision = float(y[taken].mean()) if taken.any() else None
    recall = float(taken[y].mean()) if y.any() else None
    return precision, recall


def _r(value: float | None) -> float | None:
    return None if value is None or value != value else round(float(value), 4)


def pair_metrics(p: np.ndarray, y: np.ndarray, threshold: float) -> dict[str, Any]:
    """AUC, ECE, precision, recall and accuracy of pair probabilities ``p`` at ``threshold``."""
    precision, recall = _precision_recall(p, y, threshold)
    both = bool(y.any() and (~y).any())
    return {
        "pairs": len(y),
        "follow_ups": int(y.sum()),
        "auc": _r(metrics.auc(p, y)) if both else None,
        "ece": _r(metrics.expected_calibration_error(p, y)),
        "precision": _r(precision),
        "recall": _r(recall),
        "accuracy": _r(float(((p >= threshold) == y).mean())),
    }


def choose_threshold(p: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(threshold, min(precision, recall) there): the threshold in 0.05..0.95 where the smaller of
    precision and recall is largest (the first such, rounded to 0.005)."""
    best_t, best = 0.5, -1.0
    for t in np.round(np.arange(0.05, 0.951, 0.005), 3):
        precision, recall = _precision_recall(p, y, float(t))
        score = min(precision or 0.0, recall or 0.0)
        if score > best + 1e-12:
            best_t, best = float(t), score
    return best_t, best


@dataclass
class FollowUpFit:
    head: FollowUpHead
    threshold: float
    report: dict[str, Any] = field(default_factory=dict)


def _by_source(p: np.ndarray, pairs: PairSet, threshold: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    sources = np.array(pairs.sources)
    for name in sorted(set(pairs.sources)):
        mask = sources == name
        out[name] = pair_metrics(p[mask], pairs.y[mask], threshold)
    return out


def fit_follow_up_head(
    fit_dir: str | Path,
    calib_dir: str | Path,
    grade_dirs: Sequence[str | Path] = (),
    *,
    decider: EmbeddedDecider | None = None,
    embedder: Embedder | None = None,
    l2: float = DEFAULT_L2,
    command: str = "",
    progress: Callable[[str, int], None] | None = None,
) -> FollowUpFit:
    """Fit, calibrate and grade the follow-up head (see the module)."""
    embedder = embedder or default_embedder()
    decider = decider or EmbeddedDecider(embedder=embedder)
    sets = {"fit": load_conversations(fit_dir), "calib": load_conversations(calib_dir)}
    for d in grade_dirs:
        sets[Path(d).name] = load_conversations(d)  # every file is read and checked before fitting

    def step(name: str) -> Progress | None:
        return (lambda n: progress(name, n)) if progress is not None else None

    pairs = {name: conversation_pairs(c, decider, embedder, step(name)) for name, c in sets.items()}
    fit = pairs["fit"]
    mean, scale = _standardise(fit.x)
    weights, bias = fit_logistic((fit.x - mean) / scale, fit.y, l2)

    def logits(ps: PairSet) -> np.ndarray:
        return np.asarray(((ps.x - mean) / scale) @ weights + bias)

    a, c = platt(logits(pairs["calib"]), pairs["calib"].y)
    weights, bias = weights * a, bias * a + c

    def prob(ps: PairSet) -> np.ndarray:
        return np.asarray(1.0 / (1.0 + np.exp(-(((ps.x - mean) / scale) @ weights + bias))))

    threshold, _ = choose_threshold(prob(pairs["calib"]), pairs["calib"].y)
    figures = {
        name: {
            **pair_metrics(prob(ps), ps.y, threshold),
            "conversations": ps.conversations,
            "sources": _by_source(prob(ps), ps, threshold),
        }
        for name, ps in pairs.items()
    }
    provenance = {
        "data": {name: str(Path(d)) for name, d in (("fit", fit_dir), ("calib", calib_dir))},
        "sha256": {name: ps.digest for name, ps in pairs.items() if name in ("fit", "calib")},
        "n": len(fit),
        "counts": {name: {"pairs": len(ps), "follow_ups": int(ps.y.sum())} for name, ps in pairs.items()},
        "l2": l2,
        "date": _dt.date.today().isoformat(),
        "command": command,
        "features": list(FOLLOW_UP_FEATURES),
        "thresholds": {"follow_up": threshold},
        "figures": {name: {k: v for k, v in f.items() if k != "sources"} for name, f in figures.items()},
    }
    head = FollowUpHead(embedder.name, weights, float(bias), mean, scale, provenance, "fitted")
    report = {
        "embedder": embedder.name,
        "l2": l2,
        "threshold": threshold,
        "chosen_on": "calib: the largest min(precision, recall)",
        "sets": figures,
    }
    return FollowUpFit(head, threshold, report)
