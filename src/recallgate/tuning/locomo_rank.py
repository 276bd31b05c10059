"""Fit the judge's set-level terms and the adaptive keep budget on LoCoMo's dev split.

Three values are fitted here, each shipped with this command as its provenance:

- ``policy.conversation.CENTRE_WEIGHT`` (a record's closeness to the centre of the records
  searched with it is held against it, :func:`~recallgate.policy.conversation.pool_centrality`);
  reported in the embedded judge's debiased-cosine units (``pool_centre_weight``) and shipped
  times its logistic scale, in log-odds;
- ``policy.conversation.SESSION_WEIGHT`` (a record is lifted towards the best score of its
  own session);
- ``policy.budget.ADAPTIVE_BUDGET`` (keep the records within ``delta`` log-odds of the best,
  clamped to ``[min, max]``, with the mean count per question at most ``--mean-records``).

Each question of the split is searched as the gated arm searches (hybrid, ``--top-k`` per
speaker namespace), every candidate is judged once by the embedded decider, and the two
weights are chosen on a grid by evidence recall at 5 records; the figure with each dev
conversation held out in turn (weights chosen on the other four) is reported beside it, so a
choice that only fits one conversation shows. The budget is then chosen for the fitted
weights. The gate is not consulted: every LoCoMo question needs memory. Run::

    python -m recallgate.tuning.locomo_rank --locomo ../shared/data/locomo --split dev

Fit on dev only: the test split is for reporting, and this refuses it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.locomo import build_store, load_split
from ..deciders import DecisionHints
from ..deciders.embedded import EmbeddedDecider, EmbeddedParams
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy.budget import AdaptiveBudget, keep_count
from ..policy.conversation import log_odds, rescore_by_conversation, session_of
from ..policy.wording import judge_question
from ..records import render_text

__all__ = ["JudgedQuestion", "fit", "judge_split", "main"]

CENTRE_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
SESSION_GRID = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5)
DELTA_GRID = tuple(round(x, 2) for x in np.arange(0.5, 20.01, 0.5))
MIN_GRID = (1, 2, 3, 4)
MAX_GRID = (5, 6, 7, 8, 10)


@dataclass
class JudgedQuestion:
    conversation: str
    category: int
    base: np.ndarray  # judge log-odds
    vectors: np.ndarray  # the candidates' embeddings
    sessions: list[str | None]
    relevant: np.ndarray  # bool per candidate
    n_relevant: int


def judge_split(
    data_dir: str | Path, split: str, *, top_k: int = 30, embedder: Embedder | None = None
) -> list[JudgedQuestion]:
    """Search and judge every question of ``split`` once; the terms being fitted are left out."""
    if split not in ("dev",):
        raise UsageError(f"fit on the dev split only (got {split!r}); test is for reporting")
    embedder = embedder or default_embedder()
    decider = EmbeddedDecider(embedder)
    out: list[JudgedQuestion] = []
    for conv in load_split(data_dir, split):
        store, templates = build_store(conv, embedder)
        namespaces = [t.replace("{actorId}", conv.actor_id) for t in templates]
        vectors = embedder.embed([q.text for q in conv.questions])
        for question, vector in zip(conv.questions, vectors, strict=True):
            hits = [
                hit
                for ns in namespaces
                for hit in store.search(
                    ns, vector, top_k, actor_id=conv.actor_id, text=question.text, mode="hybrid"
                )
            ]
            if not hits:
                continue
            names = [f"r{i}" for i in range(len(hits))]
            hints = DecisionHints(state_vector=vector)
            for name, hit in zip(names, hits, strict=True):
                hints.subject_vectors[name] = np.asarray(hit.record.embedding, dtype=np.float32)
                if hit.lexical is not None:
                    hints.subject_lexical[name] = hit.lexical
            answers = decider.decide(
                question.text,
                {n: judge_question(render_text(h.record.text)) for n, h in zip(names, hits, strict=True)},
                hints,
            ).answers
            relevant_ids = {f"{conv.actor_id}-{r}" for r in question.relevant}
            out.append(
                JudgedQuestion(
                    conversation=conv.id,
                    category=question.category,
                    base=log_odds([float(answers[n]) for n in names]),  # type: ignore[arg-type]
                    vectors=np.stack([hints.subject_vectors[n] for n in names]),
                    sessions=[session_of(h.record.metadata) for h in hits],
                    relevant=np.array([h.record.id in relevant_ids for h in hits]),
                    n_relevant=len(question.relevant),
                )
            )
        store.close()
    return out


def _scores(q: JudgedQuestion, centre: float, session: float, scale: float) -> np.ndarray:
    return rescore_by_conversation(
        q.base, q.vectors, q.sessions, centre_weight=scale * centre, session_weight=session
    )


def _recall_at(q: JudgedQuestion, scores: np.ndarray, n: int) -> float:
    order = np.argsort(-scores, kind="stable")[:n]
    return float(q.relevant[order].sum()) / q.n_relevant


def fit(questions: Sequence[JudgedQuestion], *, mean_records: float = 4.8) -> dict[str, Any]:
    """Choose the weights by recall at 5, then the budget; returns the fit and its figures."""
    scale = EmbeddedParams().judge_scale  # the centre weight is in debiased-cosine units
    convs = sorted({q.conversation for q in questions})
    conv_of = np.array([q.conversation for q in questions])
    grid: dict[tuple[float, float], np.ndarray] = {}
    for centre in CENTRE_GRID:
        for session in SESSION_GRID:
            grid[(centre, session)] = np.array(
                [_recall_at(q, _scores(q, centre, session, scale), 5) for q in questions]
            )
    best = max(grid, key=lambda key: (grid[key].mean(), -key[0], -key[1]))
    held_out = np.zeros(len(questions))
    per_fold = {}
    for conv in convs:
        train = conv_of != conv
        choice = max(grid, key=lambda key: (grid[key][train].mean(), -key[0], -key[1]))
        per_fold[conv] = list(choice)
        held_out[~train] = grid[choice][~train]
    scores = [_scores(q, best[0], best[1], scale) for q in questions]
    orders = [
        np.cumsum(q.relevant[np.argsort(-s, kind="stable")]) / q.n_relevant
        for q, s in zip(questions, scores, strict=True)
    ]
    chosen: tuple[float, AdaptiveBudget, float, float] | None = None
    for delta in DELTA_GRID:
        for low in MIN_GRID:
            for high in MAX_GRID:
                budget = AdaptiveBudget(float(delta), low, high)
                counts = np.array([keep_count(s, budget) for s in scores])
                if counts.mean() > mean_records:
                    continue
                recall = float(np.mean([o[c - 1] for o, c in zip(orders, counts, strict=True)]))
                if chosen is None or recall > chosen[0]:
                    chosen = (recall, budget, float(counts.mean()), 0.0)
    assert chosen is not None
    categories = np.array([q.category for q in questions])
    counts = np.array([keep_count(s, chosen[1]) for s in scores])
    adaptive = np.array([o[c - 1] for o, c in zip(orders, counts, strict=True)])

    def by_category(values: np.ndarray) -> dict[str, float]:
        return {str(c): round(float(values[categories == c].mean()), 4) for c in sorted(set(categories))}

    return {
        "questions": len(questions),
        "pool_centre_weight": best[0],
        "centre_weight_log_odds": round(best[0] * scale, 4),
        "session_weight": best[1],
        "recall_at_5": {
            "judge_alone": round(float(grid[(0.0, 0.0)].mean()), 4),
            "fitted": round(float(grid[best].mean()), 4),
            "held_out_by_conversation": round(float(held_out.mean()), 4),
            "choices_by_held_out_conversation": per_fold,
            "fitted_by_category": by_category(grid[best]),
        },
        "grid_recall_at_5": {f"{c},{s}": round(float(v.mean()), 4) for (c, s), v in grid.items()},
        "budget": {
            "delta": chosen[1].delta,
            "min_records": chosen[1].min_records,
            "max_records": chosen[1].max_records,
            "mean_records_limit": mean_records,
            "mean_records": round(chosen[2], 3),
            "recall": round(chosen[0], 4),
            "recall_by_category": by_category(adaptive),
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m recallgate.tuning.locomo_rank", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--locomo", required=True, metavar="DIR", help="LoCoMo data directory")
    parser.add_argument("--split", default="dev", help="the split to fit on (dev only)")
    parser.add_argument("--top-k", type=int, default=30, help="records searched per namespace (default 30)")
    parser.add_argument(
        "--mean-records", type=float, default=4.8, help="budget's mean records limit (default 4.8)"
    )
    args = parser.parse_args(argv)
    try:
        result = fit(judge_split(args.locomo, args.split, top_k=args.top_k), mean_records=args.mean_records)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
