"""The numerical part of fitting the learned heads: L2-regularised logistic regression by Newton's
method, Platt scaling, perceptrons with one ``tanh`` hidden layer by full-batch Adam, grouped folds,
and :func:`fit_space` (one embedding space's model, its L2 chosen by cross-validated log loss).

A long fit can be stopped from outside: :func:`checkpoint`, called at each Newton step and Adam
epoch, calls the check :func:`checkpoints` installed in this context (a server's refit preview
raises from it when its client goes away or its time runs out; none is installed otherwise).

numpy only, so the default install can refit the heads. Every fit takes optional per-row weights
(``sample_weight``: a user's labels weighed against the shipped fit data, :mod:`.refit`); without
them every row weighs 1 and the fits are the unweighted ones.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

from . import metrics

__all__ = [
    "FOLDS",
    "L2_GRID",
    "MLP_EPOCHS",
    "MLP_L2",
    "MLP_LEARNING_RATE",
    "FittedModel",
    "checkpoint",
    "checkpoints",
    "fit_logistic",
    "fit_perceptron",
    "fit_perceptrons",
    "fit_space",
    "log_loss",
    "platt",
    "sigmoid",
]

#: L2 strengths tried (chosen by cross-validated log loss)
L2_GRID: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0, 1000.0)
FOLDS = 5
#: the perceptron's L2 strength (on standardised features) and its full-batch Adam schedule
MLP_L2 = 10.0
MLP_EPOCHS = 400
MLP_LEARNING_RATE = 0.01


def sigmoid(z: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * (1.0 + np.tanh(0.5 * z)))


def _objective(x: np.ndarray, y: np.ndarray, w: np.ndarray, beta: np.ndarray, l2: float) -> float:
    z = x @ beta[:-1] + beta[-1]
    # log(1 + e^z) - y z, stably
    loss = np.logaddexp(0.0, z) - y * z
    return float(w @ loss + 0.5 * l2 * float(beta[:-1] @ beta[:-1]))


def _row_weights(sample_weight: np.ndarray | Sequence[float] | None, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,) or not np.isfinite(w).all() or (w < 0).any():
        raise ValueError(f"sample_weight: expected {n} finite weights >= 0, got shape {w.shape}")
    return w


_CHECK: ContextVar[Callable[[], None] | None] = ContextVar("recallwise_fit_check", default=None)


def checkpoint() -> None:
    """A point where a fit may be stopped: calls the check installed by :func:`checkpoints`."""
    check = _CHECK.get()
    if check is not None:
        check()


@contextlib.contextmanager
def checkpoints(check: Callable[[], None] | None) -> Iterator[None]:
    """Call ``check`` at every :func:`checkpoint` of the fits run inside (in this thread); what it
    raises ends the fit."""
    token = _CHECK.set(check)
    try:
        yield
    finally:
        _CHECK.reset(token)


def fit_logistic(
    x: np.ndarray,
    y: np.ndarray | Sequence[bool],
    l2: float,
    *,
    max_iter: int = 100,
    tol: float = 1e-8,
    sample_weight: np.ndarray | Sequence[float] | None = None,
) -> tuple[np.ndarray, float]:
    """(weights, bias) minimising the (``sample_weight``-weighted) log loss + ``l2``/2 *
    |weights|^2 (the bias is not penalised), by Newton's method with step halving."""
    features = np.asarray(x, dtype=np.float64)
    target = np.asarray(y, dtype=np.float64)
    n, d = features.shape
    rows = _row_weights(sample_weight, n)
    beta = np.zeros(d + 1)
    penalty = np.full(d + 1, float(l2))
    penalty[-1] = 0.0
    design = np.hstack([features, np.ones((n, 1))])
    current = _objective(features, target, rows, beta, l2)
    for _ in range(max_iter):
        checkpoint()
        p = sigmoid(design @ beta)
        gradient = design.T @ (rows * (p - target)) + penalty * beta
        weight = rows * p * (1.0 - p)
        hessian = (design * weight[:, None]).T @ design + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hessian, gradient)
        scale = 1.0
        while True:
            candidate = beta - scale * step
            value = _objective(features, target, rows, candidate, l2)
            if value <= current + 1e-12 or scale < 1e-6:
                break
            scale /= 2.0
        beta, improvement = candidate, current - value
        current = value
        if float(np.max(np.abs(scale * step))) < tol or improvement < tol * max(1.0, abs(current)):
            break
    return beta[:-1], float(beta[-1])


def platt(
    logits: np.ndarray,
    labels: np.ndarray | Sequence[bool],
    sample_weight: np.ndarray | Sequence[float] | None = None,
) -> tuple[float, float]:
    """Platt scaling: (a, c) with P(true) = sigmoid(a * logit + c), fitted on held-out logits."""
    weights, bias = fit_logistic(
        np.asarray(logits, dtype=np.float64)[:, None], labels, 1e-6, sample_weight=sample_weight
    )
    return float(weights[0]), bias


def log_loss(logits: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    loss = np.logaddexp(0.0, logits) - y * logits
    return float(np.average(loss, weights=sample_weight))


def _folds(groups: np.ndarray, labels: np.ndarray, k: int) -> list[np.ndarray]:
    """``k`` folds of row indices, whole groups at a time (stratified by whether a group has a
    positive row), deterministic."""
    unique, inverse = np.unique(groups, return_inverse=True)
    positive = np.zeros(len(unique), dtype=bool)
    np.logical_or.at(positive, inverse, labels)
    group_folds = metrics.stratified_folds(positive, min(k, len(unique)))
    return [np.flatnonzero(np.isin(inverse, members)) for members in group_folds]


@dataclass(frozen=True)
class FittedModel:
    """A fitted head on the raw features: ``x @ weights + bias``, or with a hidden layer
    ``tanh(x @ hidden + hidden_bias) @ weights + bias``."""

    weights: np.ndarray
    bias: float
    l2: float
    hidden: np.ndarray | None = None
    hidden_bias: np.ndarray | None = None

    def logits(self, x: np.ndarray) -> np.ndarray:
        z = np.asarray(x, dtype=np.float64)
        if self.hidden is not None:
            z = np.tanh(z @ self.hidden + self.hidden_bias)
        return np.asarray(z @ self.weights + self.bias)


def fit_perceptron(
    x: np.ndarray,
    y: np.ndarray | Sequence[bool],
    units: int,
    l2: float,
    *,
    epochs: int = MLP_EPOCHS,
    learning_rate: float = MLP_LEARNING_RATE,
    seed: int = 0,
    sample_weight: np.ndarray | Sequence[float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """(hidden, hidden_bias, weights, bias) of a perceptron with one ``tanh`` hidden layer of
    ``units`` minimising the (``sample_weight``-weighted) mean log loss + ``l2``/2 * (|hidden|^2 +
    |weights|^2) / n, by full-batch Adam from a seeded start (the same data gives the same weights).
    The weights are scaled to sum to n, so weighting changes the rows' shares, not the L2's."""
    features = np.asarray(x, dtype=np.float64)
    target = np.asarray(y, dtype=np.float64)
    n, d = features.shape
    rows = _row_weights(sample_weight, n)
    rows = rows * (n / rows.sum())
    rng = np.random.default_rng(seed)
    params = [
        rng.normal(0.0, 1.0 / np.sqrt(d), (d, units)),
        np.zeros(units),
        rng.normal(0.0, 1.0 / np.sqrt(units), units),
        np.zeros(1),
    ]
    first = [np.zeros_like(q) for q in params]
    second = [np.zeros_like(q) for q in params]
    for step in range(1, epochs + 1):
        checkpoint()
        hidden, hidden_bias, weights, bias = params
        h = np.tanh(features @ hidden + hidden_bias)
        error = rows * (sigmoid(h @ weights + bias[0]) - target) / n  # gradient of the mean log loss
        back = np.outer(error, weights) * (1.0 - h * h)
        grads = [
            features.T @ back + l2 / n * hidden,
            back.sum(axis=0),
            h.T @ error + l2 / n * weights,
            np.array([error.sum()]),
        ]
        for i, g in enumerate(grads):
            first[i] = 0.9 * first[i] + 0.1 * g
            second[i] = 0.999 * second[i] + 0.001 * g * g
            corrected = first[i] / (1.0 - 0.9**step)
            scale = np.sqrt(second[i] / (1.0 - 0.999**step)) + 1e-8
            params[i] = params[i] - learning_rate * corrected / scale
    return params[0], params[1], params[2], float(params[3][0])


def fit_perceptrons(
    x: np.ndarray,
    y: np.ndarray | Sequence[bool],
    units: int,
    l2: float,
    seeds: int,
    sample_weight: np.ndarray | Sequence[float] | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The average of ``seeds`` perceptrons (:func:`fit_perceptron` from seeds 0, 1, ...) as one:
    their hidden layers side by side (``seeds * units`` units), their output weights and biases
    divided by ``seeds``, so its logit is the mean of theirs."""
    fits = [fit_perceptron(x, y, units, l2, seed=seed, sample_weight=sample_weight) for seed in range(seeds)]
    return (
        np.hstack([f[0] for f in fits]),
        np.concatenate([f[1] for f in fits]),
        np.concatenate([f[2] for f in fits]) / seeds,
        float(np.mean([f[3] for f in fits])),
    )


def _standardise(x: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Column means and scales (weighted by ``w``); a scale is never below a tenth of the median
    one, so a column that barely varies in the fit data (an embedding dimension the model hardly
    uses) cannot earn a weight that a small change of it at run time would turn into a large change
    of p."""
    mean = np.average(x, axis=0, weights=w)
    scale = np.sqrt(np.average((x - mean) ** 2, axis=0, weights=w))
    floor = max(float(np.median(scale)) * 0.1, 1e-9)
    return mean, np.maximum(scale, floor)


def fit_space(
    x: np.ndarray,
    y: np.ndarray,
    groups: np.ndarray,
    *,
    standardise: bool,
    folds: int = FOLDS,
    hidden: int = 0,
    seeds: int = 1,
    out_of_fold: bool = True,
    column_l2: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
) -> tuple[FittedModel, np.ndarray]:
    """The model fitted on every row and each row's out-of-fold logit (zeros when
    ``out_of_fold`` is false). A logistic regression, its L2 chosen by cross-validated log loss; or
    with ``hidden`` units the average of ``seeds`` perceptrons with one hidden layer, at
    :data:`MLP_L2`. ``column_l2``: a fixed L2 strength for some columns of the logistic regression
    (NaN: the one cross-validated). ``sample_weight``: each row's weight in the fit, the scaling and
    the cross-validated loss (default: 1 each)."""
    sw = None if sample_weight is None else _row_weights(sample_weight, len(y))
    mean, scale = _standardise(x, sw) if standardise else (np.zeros(x.shape[1]), np.ones(x.shape[1]))
    fixed = np.full(x.shape[1], np.nan) if column_l2 is None else np.asarray(column_l2, dtype=np.float64)
    z = (x - mean) / scale
    parts = _folds(groups, y, folds)
    if hidden:
        oof = np.zeros(len(y))
        for held in parts if out_of_fold else ():
            train = np.setdiff1d(np.arange(len(y)), held)
            h, c, w, b = fit_perceptrons(
                z[train], y[train], hidden, MLP_L2, seeds, None if sw is None else sw[train]
            )
            oof[held] = np.tanh(z[held] @ h + c) @ w + b
        h, c, w, b = fit_perceptrons(z, y, hidden, MLP_L2, seeds, sw)
        # back to the raw features: tanh(((x - mean) / scale) @ h + c)
        raw = h / scale[:, None]
        return FittedModel(w, b, MLP_L2, raw, c - mean @ raw), oof

    def shrink(l2: float) -> np.ndarray:
        # a column penalised k times harder than l2 = fitted at l2 on the column shrunk by sqrt(k)
        return np.asarray(np.sqrt(l2 / np.where(np.isnan(fixed), l2, fixed)))

    best: tuple[float, float, np.ndarray] | None = None
    for l2 in L2_GRID:
        oof = np.zeros(len(y))
        k = shrink(l2)
        for held in parts:
            train = np.setdiff1d(np.arange(len(y)), held)
            if y[train].all() or not y[train].any():
                oof[held] = 0.0
                continue
            w, b = fit_logistic(z[train] * k, y[train], l2, sample_weight=None if sw is None else sw[train])
            oof[held] = (z[held] * k) @ w + b
        loss = log_loss(oof, y, sw)
        if best is None or loss < best[0] - 1e-9:
            best = (loss, l2, oof)
    assert best is not None
    _, l2, oof = best
    w, b = fit_logistic(z * shrink(l2), y, l2, sample_weight=sw)
    w = w * shrink(l2)
    # back to the raw features: w . (x - mean) / scale + b
    weights = w / scale
    return FittedModel(weights, float(b - weights @ mean), l2), oof
