"""Fit what the gated arm searches and keeps, on LoCoMo's dev split (``recallwise tune keep``).

Three things are fitted, each shipped with this command as its provenance:

- the search depth, ``policy.budget.GATED_TOP_K`` (records searched per namespace before the
  judge chooses);
- the conversation re-scoring, ``policy.conversation.CONVERSATION_WEIGHTS``: pool centrality
  (chosen in the embedded judge's score units, ``centre_cosine``, and shipped times its
  log-odds per unit of score -- its head's, or its logistic's scale -- in log-odds) and session
  support;
- the adaptive keep budget, ``policy.budget.ADAPTIVE_BUDGET``, with at most ``--max-records``
  (5) records per question.

Every question is run through the real policy (the gate, the hybrid search at each depth, the
judge, its thresholds) with re-scoring and the budget off, and the judge's answers are kept;
the fit then replays the keep step: re-score, keep the best by the budget among the records
that pass the judge thresholds. For each depth the weights are chosen by evidence recall at
``--max-records``, then the budget; the depth with the best recall wins (the smaller on a tie).

The budget: recall can only grow with the records kept, so under a per-question cap the most
recall is always "keep the cap". The budget chosen is the one keeping the fewest records on
average whose recall is within ``--recall-tolerance`` (default 0: none given up) of that.

Beside each fitted figure is the same figure with each dev conversation held out in turn
(weights and budget chosen on the other four), so a choice that only fits one conversation
shows. Fit on dev only: the test split is for reporting, and this refuses it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.locomo import build_store, load_split
from ..deciders.embedded import EmbeddedDecider, EmbeddedParams
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import EPISODIC_OPTIONS, RecallPolicy
from ..policy.budget import AdaptiveBudget
from ..policy.conversation import log_odds, rescore_by_conversation, session_of

__all__ = [
    "BUDGET_CAP",
    "DEPTH_GRID",
    "JudgedQuestion",
    "KeepThresholds",
    "fit",
    "fit_depths",
    "judge_split",
]

DEPTH_GRID = (10, 20, 30, 40, 50)
CENTRE_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
SESSION_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
DELTA_GRID = tuple(round(float(x), 2) for x in np.arange(0.5, 30.01, 0.5))
MIN_GRID = (1, 2, 3, 4, 5)
#: at most this many records per question: the issue's target, "at <= 5 records per question"
BUDGET_CAP = 5


@dataclass
class JudgedQuestion:
    """One question's candidates as the policy judged them (re-scoring and budget off)."""

    conversation: str
    category: int
    base: np.ndarray  # judge log-odds (empty when the gate closed)
    vectors: np.ndarray  # the candidates' embeddings
    sessions: list[str | None]
    relevant: np.ndarray  # bool per candidate
    n_relevant: int
    #: the turn had a decider or store error (it failed open or injected nothing)
    failed: bool = False


@dataclass(frozen=True)
class KeepThresholds:
    """The judge thresholds the policy keeps by (probabilities), before any budget."""

    absolute: float = 0.5
    relative: float | None = 0.5
    #: the judge's log-odds per unit of its ranking score within one turn (the re-scoring's centre
    #: grid is in score units, times this): its learned head's, or its logistic's scale
    scale: float = EmbeddedParams().judge_scale


def judge_split(
    data_dir: str | Path,
    split: str,
    *,
    depths: Sequence[int] = DEPTH_GRID,
    embedder: Embedder | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[dict[int, list[JudgedQuestion]], KeepThresholds]:
    """Run every question of ``split`` through the embedded policy at each depth, re-scoring
    and budget off; returns the judged candidates per depth and the thresholds the policy used."""
    if split != "dev":
        raise UsageError(f"fit on the dev split only (got {split!r}); test is for reporting")
    if not depths or min(depths) < 1:
        raise UsageError(f"depths must be at least 1, got {list(depths)}")
    conversations = load_split(data_dir, split)
    embedder = embedder or default_embedder()
    decider = EmbeddedDecider(embedder)
    out: dict[int, list[JudgedQuestion]] = {d: [] for d in depths}
    thresholds = KeepThresholds()
    for conv in conversations:
        store, templates = build_store(conv, embedder)
        for depth in depths:
            policy = RecallPolicy(
                store,
                decider=decider,
                namespaces=list(templates),
                gated_top_k=depth,
                conversation_rescore=None,
                adaptive_budget=None,
                keep=EPISODIC_OPTIONS["keep"],
                judge_domains=EPISODIC_OPTIONS["judge_domains"],
                follow_up_conversations=0,  # each question on its own, as in the bench
            )
            thresholds = KeepThresholds(
                policy.thresholds.get("judge", 0.5),
                policy.thresholds.get("judge_relative") if policy.options.keep.rule == "both" else None,
                decider.judge_slope(),
            )
            for question in conv.questions:
                recall = policy.recall(question.text, actor_id=conv.actor_id)
                judged = [c for c in recall.trace.candidates if c.judge_p is not None]
                records = store.get_records([c.id for c in judged])
                relevant_ids = {f"{conv.actor_id}-{r}" for r in question.relevant}
                vectors = [records[c.id].embedding for c in judged]
                out[depth].append(
                    JudgedQuestion(
                        conversation=conv.id,
                        category=question.category,
                        base=log_odds([c.judge_p or 0.0 for c in judged]),
                        vectors=np.stack([np.asarray(v, dtype=np.float64) for v in vectors if v is not None])
                        if judged
                        else np.zeros((0, embedder.dimension)),
                        sessions=[session_of(records[c.id].metadata) for c in judged],
                        relevant=np.array([c.id in relevant_ids for c in judged], dtype=bool),
                        n_relevant=len(question.relevant),
                        failed=bool(recall.trace.errors),
                    )
                )
            if progress:
                progress(1)
        store.close()
    return out, thresholds


# ---- replaying the keep step ------------------------------------------------------------------
@dataclass
class _Ranked:
    """Every question's candidates in re-scored order, padded to one width, for the budget grid."""

    gaps: np.ndarray  # best score minus each score, ascending (inf: padding)
    passing: np.ndarray  # records that pass the judge thresholds (a prefix of the order)
    found: np.ndarray  # relevant records among the first k, k = 0..width (Q x width+1)
    n_relevant: np.ndarray
    length: np.ndarray

    @classmethod
    def of(
        cls, questions: Sequence[JudgedQuestion], scores: Sequence[np.ndarray], thresholds: KeepThresholds
    ) -> _Ranked:
        width = max((len(s) for s in scores), default=0)
        gaps = np.full((len(questions), max(width, 1)), np.inf)
        found = np.zeros((len(questions), width + 1))
        passing = np.zeros(len(questions), dtype=int)
        for row, (q, s) in enumerate(zip(questions, scores, strict=True)):
            if not len(s):
                continue
            order = np.argsort(-s, kind="stable")
            ordered = s[order]
            gaps[row, : len(s)] = ordered[0] - ordered
            found[row, 1 : len(s) + 1] = np.cumsum(q.relevant[order])
            found[row, len(s) + 1 :] = found[row, len(s)]
            p = 1.0 / (1.0 + np.exp(-ordered))
            keep = p >= thresholds.absolute
            if thresholds.relative is not None:
                keep &= p >= p[0] - thresholds.relative
            passing[row] = int(keep.sum())
        return cls(
            gaps,
            passing,
            found,
            np.array([q.n_relevant for q in questions], dtype=float),
            np.array([len(s) for s in scores]),
        )

    def kept(self, budget: AdaptiveBudget | None, cap: int) -> np.ndarray:
        """Records kept per question: the budget's count (or ``cap``), of those passing."""
        if budget is None:
            count = np.full(len(self.length), cap)
        else:
            close = (self.gaps <= budget.delta).sum(axis=1)
            count = np.clip(close, budget.min_records, min(budget.max_records, cap))
        return np.minimum(np.minimum(count, self.length), self.passing)

    def recall(self, kept: np.ndarray) -> np.ndarray:
        return self.found[np.arange(len(kept)), kept] / self.n_relevant


def _scores(questions: Sequence[JudgedQuestion], centre: float, session: float) -> list[np.ndarray]:
    return [
        rescore_by_conversation(q.base, q.vectors, q.sessions, centre_weight=centre, session_weight=session)
        if len(q.base)
        else q.base
        for q in questions
    ]


def _budgets(cap: int) -> list[AdaptiveBudget]:
    return [
        AdaptiveBudget(delta, low, high)
        for delta in DELTA_GRID
        for high in range(1, cap + 1)
        for low in MIN_GRID
        if low <= high
    ]


def _choose_budget(
    ranked: _Ranked, rows: np.ndarray, budgets: Sequence[AdaptiveBudget], cap: int, tolerance: float
) -> tuple[AdaptiveBudget, list[tuple[float, float]]]:
    """The budget keeping the fewest records (on ``rows``) whose recall is within ``tolerance``
    of keeping the cap; also the (mean records, recall) of every budget."""
    best = float(ranked.recall(ranked.kept(None, cap))[rows].mean())
    chosen: tuple[float, float, AdaptiveBudget] | None = None
    points = []
    for budget in budgets:
        kept = ranked.kept(budget, cap)
        recall, mean = float(ranked.recall(kept)[rows].mean()), float(kept[rows].mean())
        points.append((mean, recall))
        if recall >= best - tolerance - 1e-12 and (
            chosen is None or (mean, -recall) < (chosen[0], -chosen[1])
        ):
            chosen = (mean, recall, budget)
    assert chosen is not None  # delta's top value with min = max = cap keeps the cap
    return chosen[2], points


def _pareto(points: Sequence[tuple[float, float]]) -> list[list[float]]:
    """The (mean records, recall) points no other point beats on both."""
    out: list[list[float]] = []
    for mean, recall in sorted(set(points), key=lambda p: (p[0], -p[1])):
        if not out or recall > out[-1][1] + 1e-12:
            out.append([round(mean, 3), round(recall, 4)])
    return out


def fit(
    questions: Sequence[JudgedQuestion],
    *,
    thresholds: KeepThresholds | None = None,
    cap: int = BUDGET_CAP,
    tolerance: float = 0.0,
    judge_scale: float | None = None,
) -> dict[str, Any]:
    """Choose the weights by recall at ``cap`` records, then the budget; returns the fit and its
    figures (for one search depth)."""
    thresholds = thresholds or KeepThresholds()
    scale = judge_scale if judge_scale is not None else thresholds.scale
    convs = np.array([q.conversation for q in questions])
    categories = np.array([q.category for q in questions])
    everything = np.ones(len(questions), dtype=bool)
    ranked: dict[tuple[float, float], _Ranked] = {}
    at_cap: dict[tuple[float, float], np.ndarray] = {}
    for centre in CENTRE_GRID:
        for session in SESSION_GRID:
            r = _Ranked.of(questions, _scores(questions, centre * scale, session), thresholds)
            ranked[(centre, session)] = r
            at_cap[(centre, session)] = r.recall(r.kept(None, cap))

    def best_weights(rows: np.ndarray) -> tuple[float, float]:
        return max(at_cap, key=lambda key: (at_cap[key][rows].mean(), -key[0], -key[1]))

    budgets = _budgets(cap)
    weights = best_weights(everything)
    budget, points = _choose_budget(ranked[weights], everything, budgets, cap, tolerance)
    kept = ranked[weights].kept(budget, cap)
    final = ranked[weights].recall(kept)

    # each conversation held out: weights and budget chosen on the other four
    held_out = np.zeros(len(questions))
    held_out_at_cap = np.zeros(len(questions))
    choices: dict[str, dict[str, Any]] = {}
    for conv in sorted(set(convs)) if len(set(convs)) >= 2 else []:
        train, test = convs != conv, convs == conv
        w = best_weights(train)
        b, _ = _choose_budget(ranked[w], train, budgets, cap, tolerance)
        held_out_at_cap[test] = at_cap[w][test]
        held_out[test] = ranked[w].recall(ranked[w].kept(b, cap))[test]
        choices[str(conv)] = {"centre_cosine": w[0], "session": w[1], "budget": _budget_dict(b)}

    def by_category(values: np.ndarray) -> dict[str, float]:
        return {str(c): round(float(values[categories == c].mean()), 4) for c in sorted(set(categories))}

    alone = at_cap[(0.0, 0.0)]
    return {
        "questions": len(questions),
        "turns_with_errors": sum(q.failed for q in questions),
        "centre_cosine": weights[0],
        "centre_log_odds": round(weights[0] * scale, 4),
        "session": weights[1],
        "budget": _budget_dict(budget),
        "recall_at_cap": {
            "judge_alone": round(float(alone.mean()), 4),
            "rescored": round(float(at_cap[weights].mean()), 4),
            "records_per_question": round(float(ranked[weights].kept(None, cap).mean()), 3),
            "rescored_held_out_by_conversation": round(float(held_out_at_cap.mean()), 4) if choices else None,
            "judge_alone_by_category": by_category(alone),
            "rescored_by_category": by_category(at_cap[weights]),
        },
        "with_budget": {
            "recall": round(float(final.mean()), 4),
            "records_per_question": round(float(kept.mean()), 3),
            "max_records_per_question": int(kept.max()) if len(kept) else 0,
            "held_out_by_conversation": round(float(held_out.mean()), 4) if choices else None,
            "by_category": by_category(final),
        },
        "choices_by_held_out_conversation": choices,
        "grid_recall_at_cap": {f"{c},{s}": round(float(v.mean()), 4) for (c, s), v in at_cap.items()},
        "budget_frontier": _pareto(points),
    }


def _budget_dict(budget: AdaptiveBudget) -> dict[str, Any]:
    return {"delta": budget.delta, "min_records": budget.min_records, "max_records": budget.max_records}


def fit_depths(
    judged: dict[int, list[JudgedQuestion]],
    *,
    thresholds: KeepThresholds | None = None,
    cap: int = BUDGET_CAP,
    tolerance: float = 0.0,
) -> dict[str, Any]:
    """:func:`fit` at every depth; the depth whose fitted recall is best is chosen (the smaller
    one on a tie: it judges fewer records)."""
    thresholds = thresholds or KeepThresholds()
    fits = {
        depth: fit(qs, thresholds=thresholds, cap=cap, tolerance=tolerance) for depth, qs in judged.items()
    }
    depth = max(fits, key=lambda d: (fits[d]["with_budget"]["recall"], -d))
    return {
        "split": "dev",
        "cap": cap,
        "recall_tolerance": tolerance,
        "thresholds": {"judge": thresholds.absolute, "judge_relative": thresholds.relative},
        "gated_top_k": depth,
        "chosen": fits[depth],
        "by_depth": {
            str(d): {
                "turns_with_errors": f["turns_with_errors"],
                "judge_alone_at_cap": f["recall_at_cap"]["judge_alone"],
                "rescored_at_cap": f["recall_at_cap"]["rescored"],
                "with_budget": f["with_budget"]["recall"],
                "records_per_question": f["with_budget"]["records_per_question"],
                "held_out_by_conversation": f["with_budget"]["held_out_by_conversation"],
                "centre_cosine": f["centre_cosine"],
                "session": f["session"],
                "budget": f["budget"],
            }
            for d, f in sorted(fits.items())
        },
    }
