"""Asking the candidates about labelled data, and measuring what came back.

``tune_gate`` asks every candidate about each labelled utterance in ONE decider call (extra
questions are nearly free, a second round trip is not); ``tune_validator`` asks about all of
one query's records in one call. Items run concurrently. When a call fails, each candidate
is asked alone for that item, so the failure is charged to the candidate that caused it; a
candidate with errors is reported with its error count, measured only on what it answered,
and never chosen as the best.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from ..deciders import Decider, ask
from ..deciders.questions import MAX_QUESTIONS, Answer, Question
from ..errors import DeciderError
from ..policy.config import ResolvedThreshold, ThresholdConfig, config_from_env, resolve_threshold
from . import metrics
from .candidates import Role, WordingCandidate
from .data import CaseSet, LabelSet

__all__ = [
    "CandidateResult",
    "QueryRanking",
    "TuneResult",
    "tune_gate",
    "tune_validator",
]

Progress = Callable[[int], None]
DEFAULT_WORKERS = 8
CV_FOLDS = 5


@dataclass
class QueryRanking:
    """One validator query as one candidate ranked it."""

    query: str
    #: (record key, rendered text, relevant?, score or None when the call errored), best first
    ranked: list[tuple[str, str, bool, float | None]]
    auc: float
    p_at_k: float


@dataclass
class CandidateResult:
    """Everything measured about one candidate wording."""

    name: str
    description: str
    summary: str
    inverted: bool
    shipped: bool
    #: the figures in the order and with the names of the ``--json`` output
    metrics: dict[str, float | None]
    #: one score per item (None where the decider errored), aligned with ``labels``
    scores: list[float | None]
    labels: list[bool]
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    #: validator only: per-query rankings
    queries: list[QueryRanking] = field(default_factory=list)
    configured_source: str = ""
    #: validator only: (pooled accuracy, threshold, delta) of the policy's default keep rule
    #: "p >= threshold and p >= best - delta", fitted jointly
    keep_rule: tuple[float, float, float] | None = None
    #: per ``lang`` tag of the data (empty when the data has none): n and the main figures
    by_language: dict[str, dict[str, float | None]] = field(default_factory=dict)

    @property
    def answered(self) -> tuple[list[float], list[bool]]:
        pairs = [(s, y) for s, y in zip(self.scores, self.labels, strict=True) if s is not None]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def json(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: _clean(v) for k, v in self.metrics.items()}
        out["errors"] = self.errors
        if self.by_language:
            out["by_language"] = {
                lang: {k: _clean(v) for k, v in figures.items()} for lang, figures in self.by_language.items()
            }
        return out


@dataclass
class TuneResult:
    """The outcome of one ``tune gate`` or ``tune validator`` run."""

    #: "gate" for messages labelled true/false (the gate, the follow-up question), "judge" for
    #: queries with records
    kind: Role
    backend: str
    source: str
    data_sha256: str
    n: int
    default: str
    candidates: list[CandidateResult]
    decider_calls: int = 0
    #: the question measured when it is not ``kind``'s own ("follow_up", measured as the gate is)
    role: Role | None = None

    @property
    def measured(self) -> Role:
        """The role whose question (and threshold) this run measured."""
        return self.role or self.kind

    @property
    def best(self) -> CandidateResult | None:
        """The best candidate that answered every item (None when every one errored)."""
        clean = [c for c in self.candidates if c.errors == 0]
        if not clean:
            return None
        if self.kind == "gate":
            keys = ("cv_accuracy", "auc", "margin")
        else:
            keys = ("mean_auc", "mean_p_at_k", "best_accuracy")
        return max(clean, key=lambda c: tuple(_rank_value(c.metrics.get(k)) for k in keys))

    def candidate(self, name: str) -> CandidateResult:
        return next(c for c in self.candidates if c.name == name)

    def json(self) -> dict[str, Any]:
        """The ``--json`` object (each candidate also carries its error count)."""
        body: dict[str, Any] = {"backend": self.backend}
        if self.kind == "gate":
            body["n"] = self.n
        body["default"] = self.default
        body["candidates"] = {c.name: c.json() for c in self.candidates}
        return body


def _rank_value(value: float | None) -> float:
    return -math.inf if value is None or math.isnan(value) else value


def _clean(value: float | None) -> float | None:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return None
    return round(float(value), 4)


# ---- asking ---------------------------------------------------------------------------


class _Asker:
    """Asks one item's questions in one call, isolating per-candidate failures on error."""

    def __init__(self, decider: Decider) -> None:
        self.decider = decider
        self.calls = 0
        self._lock = threading.Lock()

    def _ask(self, state: str, questions: Mapping[str, Question]) -> dict[str, Answer]:
        with self._lock:
            self.calls += 1
        return ask(self.decider, state, questions)

    def __call__(
        self, state: str, groups: Mapping[str, Mapping[str, Question]]
    ) -> dict[str, dict[str, Answer] | Exception]:
        """``groups``: candidate -> its questions. Returns candidate -> answers or the error."""
        out: dict[str, dict[str, Answer] | Exception] = {name: {} for name in groups}

        def record(name: str, result: Mapping[str, Answer] | Exception) -> None:
            current = out[name]
            if isinstance(current, Exception):
                return
            if isinstance(result, Exception):
                out[name] = result
            else:
                current.update(result)

        for batch in _batches(groups):
            questions = {q: question for _, part in batch for q, question in part.items()}
            try:
                answers = self._ask(state, questions)
            except DeciderError as exc:
                if len(batch) == 1:
                    record(batch[0][0], exc)
                    continue
                for name, part in batch:  # which candidate broke the call?
                    try:
                        record(name, self._ask(state, part))
                    except DeciderError as alone:
                        record(name, alone)
                continue
            for name, part in batch:
                record(name, {q: answers[q] for q in part})
        return out


def _batches(groups: Mapping[str, Mapping[str, Question]]) -> list[list[tuple[str, dict[str, Question]]]]:
    """(candidate, questions) parts packed into as few calls as the per-call limit allows.

    A candidate with more questions than one call may hold is split into several parts.
    """
    parts: list[tuple[str, dict[str, Question]]] = []
    for name, questions in groups.items():
        items = list(questions.items())
        for start in range(0, len(items), MAX_QUESTIONS):
            parts.append((name, dict(items[start : start + MAX_QUESTIONS])))
    batches: list[list[tuple[str, dict[str, Question]]]] = [[]]
    size = 0
    for name, part in parts:
        if size and size + len(part) > MAX_QUESTIONS:
            batches.append([])
            size = 0
        batches[-1].append((name, part))
        size += len(part)
    return batches


def _run(
    items: Sequence[Any], work: Callable[[Any], Any], workers: int, progress: Progress | None
) -> list[Any]:
    """``work`` over ``items`` on a thread pool; results in item order."""
    results: list[Any] = [None] * len(items)
    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="recallwise-tune") as pool:
        futures = {pool.submit(work, item): i for i, item in enumerate(items)}
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if progress is not None:
                progress(1)
    return results


def _configured(
    candidate: WordingCandidate, role: Role, decider: Decider, config: ThresholdConfig | None
) -> ResolvedThreshold:
    """The threshold the policy would use for the shipped wording; a wording's own otherwise."""
    if candidate.threshold is not None:
        return ResolvedThreshold(candidate.threshold, "candidate file", True, "candidate file")
    if candidate.is_shipped(role):
        backend = str(getattr(decider, "name", type(decider).__name__))
        head = getattr(decider, "head_thresholds", None)
        return resolve_threshold(backend, role, config, head=head() if callable(head) else None)
    why = "0.5 (no threshold configured for this wording)"
    return ResolvedThreshold(0.5, why, False, why)


# ---- the gate -------------------------------------------------------------------------


def tune_gate(
    decider: Decider,
    labels: LabelSet,
    candidates: Sequence[WordingCandidate],
    *,
    default: str | None = None,
    workers: int = DEFAULT_WORKERS,
    progress: Progress | None = None,
    config: ThresholdConfig | None = None,
    role: Literal["gate", "follow_up"] = "gate",
) -> TuneResult:
    """Measure every candidate gate wording on ``labels`` (one decider call per item); with
    ``role="follow_up"``, the follow-up question's wordings on follow-up labels."""
    backend = str(getattr(decider, "name", type(decider).__name__))
    config = config if config is not None else config_from_env()
    asker = _Asker(decider)
    names = [f"q{i}" for i in range(len(candidates))]
    groups = {c.name: {q: c.question} for c, q in zip(candidates, names, strict=True)}

    def one(item: Any) -> dict[str, dict[str, Answer] | Exception]:
        return asker(item.text, groups)

    answers = _run(labels.items, one, workers, progress)
    y = [item.label for item in labels.items]
    results = []
    for candidate, qname in zip(candidates, names, strict=True):
        scores: list[float | None] = []
        errors: list[str] = []
        for item, got in zip(labels.items, answers, strict=True):
            outcome = got[candidate.name]
            if isinstance(outcome, Exception):
                scores.append(None)
                errors.append(f"line {item.line}: {outcome}")
            else:
                scores.append(candidate.score(outcome[qname]))
        configured = _configured(candidate, role, decider, config)
        result = CandidateResult(
            candidate.name,
            candidate.description,
            candidate.summary(),
            candidate.inverted,
            candidate.is_shipped(role),
            {},
            scores,
            y,
            len(errors),
            errors[:3],
            configured_source=configured.detail,
        )
        result.metrics = _gate_metrics(*result.answered, configured.value)
        result.by_language = _gate_by_language(labels, scores, configured.value)
        results.append(result)
    return TuneResult(
        "gate",
        backend,
        labels.source,
        labels.sha256,
        labels.n,
        default or candidates[0].name,
        results,
        asker.calls,
        role=role if role != "gate" else None,
    )


def _gate_by_language(
    labels: LabelSet, scores: Sequence[float | None], configured: float
) -> dict[str, dict[str, float | None]]:
    """Accuracy at the configured threshold and AUC per ``lang`` tag."""
    groups: dict[str, list[tuple[float, bool]]] = {}
    for item, score in zip(labels.items, scores, strict=True):
        if item.lang is not None and score is not None:
            groups.setdefault(item.lang, []).append((score, item.label))
    out: dict[str, dict[str, float | None]] = {}
    for lang, pairs in groups.items():
        s, y = [p[0] for p in pairs], [p[1] for p in pairs]
        out[lang] = {
            "n": float(len(pairs)),
            "accuracy_at_configured": metrics.accuracy_at(s, y, configured),
            "auc": metrics.auc(s, y) if len(set(y)) == 2 else None,
        }
    return out


def _gate_metrics(scores: list[float], labels: list[bool], configured: float) -> dict[str, float | None]:
    both = len(set(labels)) == 2
    if not scores or not both:
        best_acc = best_t = None
        figures: dict[str, float | None] = dict.fromkeys(("margin", "auc", "cv_accuracy"), None)
    else:
        best_acc, best_t = metrics.best_threshold(scores, labels)
        figures = {
            "margin": metrics.margin(scores, labels),
            "auc": metrics.auc(scores, labels),
            "cv_accuracy": metrics.cv_accuracy(scores, labels, CV_FOLDS),
        }
    return {
        "best_accuracy": best_acc,
        "best_threshold": best_t,
        "margin": figures["margin"],
        "auc": figures["auc"],
        "configured_threshold": configured,
        "accuracy_at_configured": metrics.accuracy_at(scores, labels, configured) if scores else None,
        "cv_accuracy": figures["cv_accuracy"],
        "ece": metrics.expected_calibration_error(scores, labels) if scores else None,
        "brier": metrics.brier(scores, labels) if scores else None,
    }


# ---- the validator (judge) ------------------------------------------------------------


def tune_validator(
    decider: Decider,
    cases: CaseSet,
    candidates: Sequence[WordingCandidate],
    *,
    default: str | None = None,
    workers: int = DEFAULT_WORKERS,
    progress: Progress | None = None,
    config: ThresholdConfig | None = None,
) -> TuneResult:
    """Measure every candidate judge wording on ``cases`` (one call per query when it fits)."""
    backend = str(getattr(decider, "name", type(decider).__name__))
    config = config if config is not None else config_from_env()
    asker = _Asker(decider)

    def one(case: Any) -> dict[str, dict[str, Answer] | Exception]:
        groups = {
            c.name: {f"c{ci}r{ri}": c.about(cases.records[key]) for ri, key in enumerate(case.keys)}
            for ci, c in enumerate(candidates)
        }
        return asker(case.query, groups)

    answers = _run(cases.cases, one, workers, progress)
    results = []
    for ci, candidate in enumerate(candidates):
        scores: list[float | None] = []
        labels: list[bool] = []
        errors: list[str] = []
        rankings: list[QueryRanking] = []
        groups: list[tuple[list[float], list[bool]]] = []
        for case, got in zip(cases.cases, answers, strict=True):
            outcome = got[candidate.name]
            truth = [True] * len(case.relevant) + [False] * len(case.irrelevant)
            if isinstance(outcome, Exception):
                errors.append(f"query {case.query!r}: {outcome}")
                case_scores: list[float | None] = [None] * len(truth)
            else:
                case_scores = [candidate.score(outcome[f"c{ci}r{ri}"]) for ri in range(len(case.keys))]
            scores.extend(case_scores)
            labels.extend(truth)
            # Ties are listed by key, not label order: the table must not flatter a flat scorer.
            ranked = sorted(
                zip(case.keys, [cases.records[k] for k in case.keys], truth, case_scores, strict=True),
                key=lambda row: (-(row[3] if row[3] is not None else -1.0), row[0]),
            )
            if isinstance(outcome, Exception):
                rankings.append(QueryRanking(case.query, ranked, float("nan"), float("nan")))
                continue
            answered = [float(s) for s in case_scores if s is not None]
            groups.append((answered, truth))
            rankings.append(
                QueryRanking(
                    case.query, ranked, metrics.auc(answered, truth), metrics.precision_at_k(answered, truth)
                )
            )
        configured = _configured(candidate, "judge", decider, config)
        result = CandidateResult(
            candidate.name,
            candidate.description,
            candidate.summary(),
            candidate.inverted,
            candidate.is_shipped("judge"),
            {},
            scores,
            labels,
            len(errors),
            errors[:3],
            rankings,
            configured.detail,
        )
        result.metrics = _validator_metrics(result, groups, configured.value)
        result.by_language = _validator_by_language(cases, result.queries)
        if groups:
            result.keep_rule = metrics.best_keep_rule(groups)
        results.append(result)
    return TuneResult(
        "judge",
        backend,
        cases.source,
        cases.sha256,
        cases.n,
        default or candidates[0].name,
        results,
        asker.calls,
    )


def _validator_by_language(
    cases: CaseSet, rankings: Sequence[QueryRanking]
) -> dict[str, dict[str, float | None]]:
    """Mean per-query AUC and precision@k per ``lang`` tag."""
    groups: dict[str, list[QueryRanking]] = {}
    for case, ranking in zip(cases.cases, rankings, strict=True):
        if case.lang is not None and not math.isnan(ranking.auc):
            groups.setdefault(case.lang, []).append(ranking)
    return {
        lang: {
            "n": float(len(queries)),
            "mean_auc": float(np.mean([q.auc for q in queries])),
            "mean_p_at_k": float(np.mean([q.p_at_k for q in queries])),
        }
        for lang, queries in groups.items()
    }


def _validator_metrics(
    result: CandidateResult, groups: list[tuple[list[float], list[bool]]], configured: float
) -> dict[str, float | None]:
    scores, labels = result.answered
    if not scores:  # every figure is None, as the gate's are, when no item was answered
        best_acc, best_t, rel_acc, rel_delta, answered = None, None, None, None, []
    else:
        best_acc, best_t = metrics.best_threshold(scores, labels)
        rel_acc, rel_delta = metrics.best_relative_delta(groups)
        answered = [q for q in result.queries if not math.isnan(q.auc)]
    return {
        "margin": metrics.margin(scores, labels) if scores else None,
        "best_accuracy": best_acc,
        "best_threshold": best_t,
        "mean_auc": float(np.mean([q.auc for q in answered])) if scores else None,
        "mean_p_at_k": float(np.mean([q.p_at_k for q in answered])) if scores else None,
        "configured_threshold": configured if scores else None,
        "accuracy_at_configured": metrics.accuracy_at(scores, labels, configured) if scores else None,
        "relative_delta": rel_delta,
        "relative_accuracy": rel_acc,
    }
