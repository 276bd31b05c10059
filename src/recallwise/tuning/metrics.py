"""Separation, ranking and calibration figures, as plain functions of scores and labels.

Separation (one absolute threshold for every item) and ranking (each query's relevant
records above its irrelevant ones) fail independently, so both are measured:

- separation: best accuracy and its threshold, margin (lowest positive minus highest
  negative: above 0 means one threshold splits the classes perfectly), accuracy at a given
  threshold, and k-fold cross-validated accuracy of choosing the threshold;
- ranking: AUC (pooled or per query) and precision@k with k = the number of relevant records;
- calibration: expected calibration error (10 equal-width bins) and Brier score.

The rule everywhere is "positive when score >= threshold". Ties count half in AUC and as
the expected value of a random tie-break in precision@k, so a constant score earns chance,
not a perfect mark.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeAlias

import numpy as np

#: scores and labels may be plain sequences or numpy arrays
Scores: TypeAlias = Sequence[float] | np.ndarray
Labels: TypeAlias = Sequence[bool] | np.ndarray

__all__ = [
    "accuracy_at",
    "auc",
    "best_keep_rule",
    "best_relative_delta",
    "best_threshold",
    "brier",
    "cv_accuracy",
    "expected_calibration_error",
    "margin",
    "precision_at_k",
    "relative_accuracy",
    "reliability_table",
    "roc_curve",
]


def _arrays(scores: Scores, labels: Labels) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(labels, dtype=bool)
    if s.shape != y.shape:
        raise ValueError(f"{s.size} scores for {y.size} labels")
    return s, y


def accuracy_at(scores: Scores, labels: Labels, threshold: float) -> float:
    """Share of items where ``score >= threshold`` equals the label."""
    s, y = _arrays(scores, labels)
    if s.size == 0:
        return float("nan")
    return float(np.mean((s >= threshold) == y))


def best_threshold(scores: Scores, labels: Labels) -> tuple[float, float]:
    """(best accuracy, threshold) of the rule ``score >= threshold``.

    Candidate thresholds sit midway between neighbouring distinct scores (and just outside
    the range). Among equally accurate thresholds the one in the widest gap wins: it is the
    choice least sensitive to a small shift in the scores.
    """
    s, y = _arrays(scores, labels)
    if s.size == 0:
        return float("nan"), float("nan")
    distinct = np.unique(s)
    edges = np.concatenate(([distinct[0] - 1e-6], (distinct[:-1] + distinct[1:]) / 2, [distinct[-1] + 1e-6]))
    gaps = np.concatenate(([0.0], np.diff(distinct), [0.0]))
    best_acc, best_t, best_gap = -1.0, float(edges[0]), -1.0
    for t, gap in zip(edges, gaps, strict=True):
        acc = float(np.mean((s >= t) == y))
        if acc > best_acc + 1e-12 or (abs(acc - best_acc) <= 1e-12 and gap > best_gap):
            best_acc, best_t, best_gap = acc, float(t), float(gap)
    return best_acc, best_t


def margin(scores: Scores, labels: Labels) -> float:
    """Lowest positive score minus highest negative score (> 0: perfectly separable)."""
    s, y = _arrays(scores, labels)
    if not y.any() or y.all():
        return float("nan")
    return float(s[y].min() - s[~y].max())


def auc(scores: Scores, labels: Labels) -> float:
    """Area under the ROC curve: P(a random positive outscores a random negative), ties half."""
    s, y = _arrays(scores, labels)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    # Mann-Whitney U from mid-ranks (ties share their average rank, i.e. count half): the same
    # figure as comparing every pair, in O(n log n) for sets of thousands.
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(s.size, dtype=np.float64)
    sorted_s = s[order]
    starts = np.flatnonzero(np.concatenate(([True], sorted_s[1:] != sorted_s[:-1])))
    ends = np.concatenate((starts[1:], [s.size]))
    for start, end in zip(starts, ends, strict=True):
        ranks[order[start:end]] = (start + end + 1) / 2.0
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def roc_curve(scores: Scores, labels: Labels) -> tuple[list[float], list[float]]:
    """(false positive rates, true positive rates) as the threshold sweeps from high to low."""
    s, y = _arrays(scores, labels)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    fpr, tpr = [0.0], [0.0]
    if n_pos == 0 or n_neg == 0:
        return fpr, tpr
    for t in np.unique(s)[::-1]:
        kept = s >= t
        tpr.append(float((kept & y).sum() / n_pos))
        fpr.append(float((kept & ~y).sum() / n_neg))
    return fpr, tpr


def expected_calibration_error(scores: Scores, labels: Labels, bins: int = 10) -> float:
    """Mean |observed positive rate - mean score| over equal-width bins, weighted by bin size."""
    s, y = _arrays(scores, labels)
    if s.size == 0:
        return float("nan")
    index = np.minimum((np.clip(s, 0.0, 1.0) * bins).astype(int), bins - 1)
    total = 0.0
    for b in range(bins):
        members = index == b
        if members.any():
            total += members.sum() * abs(float(y[members].mean()) - float(s[members].mean()))
    return total / s.size


def reliability_table(scores: Scores, labels: Labels, bins: int = 10) -> list[dict[str, float]]:
    """Per equal-width bin of the score: ``{"low", "high", "n", "mean_p", "observed"}`` (empty bins
    left out): a calibrated score has ``observed`` close to ``mean_p`` in every bin."""
    s, y = _arrays(scores, labels)
    index = np.minimum((np.clip(s, 0.0, 1.0) * bins).astype(int), bins - 1)
    rows = []
    for b in range(bins):
        members = index == b
        if members.any():
            rows.append(
                {
                    "low": b / bins,
                    "high": (b + 1) / bins,
                    "n": int(members.sum()),
                    "mean_p": float(s[members].mean()),
                    "observed": float(y[members].mean()),
                }
            )
    return rows


def brier(scores: Scores, labels: Labels) -> float:
    """Mean squared difference between score and label (0 is perfect, 0.25 is a constant 0.5)."""
    s, y = _arrays(scores, labels)
    if s.size == 0:
        return float("nan")
    return float(np.mean((np.clip(s, 0.0, 1.0) - y.astype(np.float64)) ** 2))


def stratified_folds(labels: Labels, k: int, seed: int = 0) -> list[np.ndarray]:
    """``k`` folds of item indices with both classes spread evenly (deterministic for ``seed``)."""
    y = np.asarray(labels, dtype=bool)
    rng = np.random.default_rng(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    offset = 0
    for cls in (True, False):
        members = np.flatnonzero(y == cls)
        rng.shuffle(members)
        for i, item in enumerate(members):
            folds[(offset + i) % k].append(int(item))
        offset += len(members)
    return [np.asarray(sorted(f), dtype=int) for f in folds if f]


def cv_accuracy(scores: Scores, labels: Labels, k: int = 5, seed: int = 0) -> float:
    """Accuracy of "fit the best threshold on k-1 folds, apply it to the held-out fold".

    Every item is graded by a threshold chosen without it, so this is what a fitted
    threshold is worth on new items of the same kind; the in-sample best accuracy is not.
    ``k`` is capped by the size of the smaller class (each fold needs both to fit on).
    """
    s, y = _arrays(scores, labels)
    n_small = int(min(y.sum(), (~y).sum()))
    if n_small < 2:
        return float("nan")
    k = max(2, min(k, n_small))
    correct = 0
    for fold in stratified_folds(y, k, seed):
        train = np.ones(s.size, dtype=bool)
        train[fold] = False
        _, threshold = best_threshold(s[train], y[train])
        correct += int(((s[fold] >= threshold) == y[fold]).sum())
    return correct / s.size


def precision_at_k(scores: Scores, labels: Labels, k: int | None = None) -> float:
    """Share of relevant items among the top ``k`` (default: the number relevant).

    Items tied at the cut-off count by the expected number a random tie-break would admit.
    """
    s, y = _arrays(scores, labels)
    k = int(y.sum()) if k is None else k
    if k <= 0 or s.size == 0:
        return float("nan")
    k = min(k, s.size)
    cut = np.sort(s)[::-1][k - 1]
    above = s > cut
    tied = s == cut
    slots = k - int(above.sum())
    hits = float((above & y).sum()) + slots * float((tied & y).sum()) / float(tied.sum())
    return hits / k


def relative_accuracy(groups: Sequence[tuple[Scores, Labels]], delta: float) -> float:
    """Pooled accuracy of "keep a record when its score is within ``delta`` of its query's best"."""
    correct = total = 0
    for scores, labels in groups:
        s, y = _arrays(scores, labels)
        if s.size == 0:
            continue
        kept = s >= s.max() - delta - 1e-12
        correct += int((kept == y).sum())
        total += s.size
    return correct / total if total else float("nan")


def best_relative_delta(groups: Sequence[tuple[Scores, Labels]]) -> tuple[float, float]:
    """(best pooled accuracy, delta) of the relative keep rule; ties go to the widest gap."""
    gaps: set[float] = {0.0}
    for scores, _ in groups:
        s = np.asarray(scores, dtype=np.float64)
        if s.size:
            gaps.update(float(g) for g in (s.max() - s))
    distinct = np.array(sorted(gaps))
    candidates = np.concatenate(((distinct[:-1] + distinct[1:]) / 2, [distinct[-1] + 1e-6]))
    widths = np.concatenate((np.diff(distinct), [0.0]))
    # delta = 0 keeps only each query's best record(s): always a candidate.
    candidates = np.concatenate(([0.0], candidates))
    widths = np.concatenate(([0.0], widths))
    best_acc, best_delta, best_width = -1.0, 0.0, -1.0
    for delta, width in zip(candidates, widths, strict=True):
        acc = relative_accuracy(groups, float(delta))
        if acc > best_acc + 1e-12 or (abs(acc - best_acc) <= 1e-12 and width > best_width):
            best_acc, best_delta, best_width = acc, float(delta), float(width)
    return best_acc, best_delta


def _cut_points(values: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Midpoints between neighbouring distinct values (plus both ends) and each one's gap width."""
    distinct = np.unique(values)
    cuts = np.concatenate(([distinct[0] - 1e-6], (distinct[:-1] + distinct[1:]) / 2, [distinct[-1] + 1e-6]))
    widths = np.concatenate(([0.0], np.diff(distinct), [0.0]))
    if cuts.size > limit:  # keep the search quadratic in `limit`, not in the data size
        keep = np.unique(np.linspace(0, cuts.size - 1, limit).round().astype(int))
        cuts, widths = cuts[keep], widths[keep]
    return cuts, widths


def best_keep_rule(groups: Sequence[tuple[Scores, Labels]], limit: int = 80) -> tuple[float, float, float]:
    """(best pooled accuracy, threshold, delta) of "score >= threshold and score >= best - delta".

    That conjunction is the policy's default keep rule; fitting its two numbers jointly
    matters because each alone leans on the other. Ties go to the widest pair of gaps.
    """
    arrays = [(_arrays(s, y)) for s, y in groups if len(s)]
    if not arrays:
        return float("nan"), float("nan"), float("nan")
    scores = np.concatenate([s for s, _ in arrays])
    labels = np.concatenate([y for _, y in arrays])
    below_best = np.concatenate([s.max() - s for s, _ in arrays])
    thresholds, t_widths = _cut_points(scores, limit)
    deltas, d_widths = _cut_points(np.concatenate((below_best, [0.0])), limit)
    deltas = np.maximum(deltas, 0.0)
    best = (-1.0, -1.0, float(thresholds[0]), float(deltas[-1]))
    for d, dw in zip(deltas, d_widths, strict=True):
        relative_ok = below_best <= d + 1e-12
        for t, tw in zip(thresholds, t_widths, strict=True):
            acc = float(np.mean(((scores >= t) & relative_ok) == labels))
            if acc > best[0] + 1e-12 or (abs(acc - best[0]) <= 1e-12 and tw + dw > best[1]):
                best = (acc, float(tw + dw), float(t), float(d))
    return best[0], best[2], best[3]
