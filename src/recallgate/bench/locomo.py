"""The LoCoMo retrieval benchmark: real long-term memories and questions, stock arm vs gated arm.

The data is read by :mod:`recallgate.datasets.locomo` (its loader names are re-exported here
for scripts that imported them from this module); each question's relevant records are the
observations from its evidence turns. Nothing is fitted on the test split.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.locomo import SPLITS, Conversation, LocomoQuestion, build_store, load_conversation, load_split
from ..deciders import Decider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import RecallPolicy
from ..policy.pack import TOKENIZER_NAME, count_tokens
from ..stores.sqlite import SQLiteStore
from ..tuning import metrics

__all__ = [
    "SPLITS",
    "Conversation",
    "LocomoQuestion",
    "build_store",
    "load_conversation",
    "load_split",
    "run_locomo",
]


@dataclass
class _Arm:
    recall: list[float] = field(default_factory=list)
    any_hit: list[float] = field(default_factory=list)
    records: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    gate_open: list[float] = field(default_factory=list)
    judge_auc: list[float] = field(default_factory=list)
    judge_p_at_k: list[float] = field(default_factory=list)
    embed_ms: list[float] = field(default_factory=list)
    decide_ms: list[float] = field(default_factory=list)
    search_ms: list[float] = field(default_factory=list)
    errors: int = 0

    def summary(self, gated: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "recall": _mean(self.recall),
            "any_hit": _mean(self.any_hit),
            "records_per_question": _mean(self.records),
            "tokens_per_question": _mean(self.tokens),
        }
        if gated:
            out.update(
                {
                    "gate_open_rate": _mean(self.gate_open),
                    "judge_mean_auc": _mean(self.judge_auc),
                    "judge_p_at_k": _mean(self.judge_p_at_k),
                    "judge_questions": len(self.judge_auc),
                    "decider_errors": self.errors,
                }
            )
        return out


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(float(statistics.fmean(values)), 4) if values else 0.0


def _p50(values: Sequence[float]) -> float:
    return round(float(np.median(values)), 3) if values else 0.0


def run_locomo(
    data_dir: str | Path,
    split: str,
    decider: Decider | None,
    *,
    top_k: int = 10,
    layout: str = "speakers",
    embedder: Embedder | None = None,
    policy_options: dict[str, Any] | None = None,
    route: bool = False,
    progress: Callable[[int], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """Run both arms over every question of ``split``; returns the benchmark's JSON object."""
    if layout not in ("speakers", "shared"):
        raise UsageError(f"unknown layout {layout!r}: speakers or shared")
    conversations = load_split(data_dir, split)
    embedder = embedder or default_embedder()
    if on_start:
        on_start(sum(len(c.questions) for c in conversations))
    stock, gated = _Arm(), _Arm()
    heldout_rows = _heldout_rows()
    in_store: dict[bool, list[float]] = {True: [], False: []}  # label -> gate opened, per store
    for conv in conversations:
        store, namespaces = build_store(conv, embedder, layout)
        stock_policy = RecallPolicy(store, decider=None, namespaces=list(namespaces), top_k=top_k)
        gated_policy = RecallPolicy(
            store,
            decider=decider,
            namespaces=namespaces if route else list(namespaces),
            top_k=top_k,
            **(policy_options or {}),
        )
        for question in conv.questions:
            relevant = {f"{conv.actor_id}-{r}" for r in question.relevant}
            for arm, policy in ((stock, stock_policy), (gated, gated_policy)):
                recall = policy.recall(question.text, actor_id=conv.actor_id)
                injected = {k.record.id for k in recall.records}
                arm.recall.append(len(relevant & injected) / len(relevant))
                arm.any_hit.append(1.0 if relevant & injected else 0.0)
                arm.records.append(len(recall.records))
                arm.tokens.append(count_tokens(recall.context))
                timings = recall.trace.timings_ms
                arm.embed_ms.append(timings.get("embed", 0.0))
                if "search" in timings:
                    arm.search_ms.append(timings["search"])
                if arm is gated:
                    arm.errors += len(recall.trace.errors)
                    arm.gate_open.append(1.0 if recall.trace.gate_open else 0.0)
                    arm.decide_ms.append(timings.get("gate", 0.0) + timings.get("judge", 0.0))
                    _judge_ranking(arm, recall.trace.candidates, relevant)
            if progress:
                progress(1)
        if decider is not None:
            # The held-out messages against this conversation's memory: the store-aware gate
            # opens on names the memory mentions, so closing must hold with a store too.
            for row in heldout_rows:
                recall = gated_policy.recall(row["text"], actor_id=conv.actor_id)
                in_store[bool(row["label"])].append(1.0 if recall.trace.gate_open else 0.0)
        store.close()
    heldout = heldout_gate_rates(decider, embedder)
    if decider is not None:
        heldout["non_memory_closed_rate_with_store"] = round(1.0 - _mean(in_store[False]), 4)
        heldout["memory_open_rate_with_store"] = round(_mean(in_store[True]), 4)
    return {
        "split": split,
        "conversations": len(conversations),
        "questions": len(stock.recall),
        "layout": layout,
        "top_k": top_k,
        "route": route,
        "decider": getattr(decider, "name", "none") if decider is not None else "none",
        "embedder": embedder.name,
        "tokenizer": TOKENIZER_NAME,
        "stock": stock.summary(gated=False),
        "gated": gated.summary(gated=True),
        "gate_heldout": heldout,
        "latency_ms": {
            "embed_p50": _p50(gated.embed_ms),
            "decide_p50": _p50(gated.decide_ms),
            "search_p50": _p50(gated.search_ms),
        },
    }


def _judge_ranking(arm: _Arm, candidates: Sequence[Any], relevant: set[str]) -> None:
    judged = [(c.judge_p, c.id in relevant) for c in candidates if c.judge_p is not None]
    positives = [p for p, is_rel in judged if is_rel]
    negatives = [p for p, is_rel in judged if not is_rel]
    if positives and negatives:
        arm.judge_auc.append(metrics.auc([p for p, _ in judged], [is_rel for _, is_rel in judged]))
    if positives:
        k = len(positives)
        top = sorted(judged, key=lambda pair: -pair[0])[:k]
        arm.judge_p_at_k.append(sum(1 for _, is_rel in top if is_rel) / k)


def _heldout_rows() -> list[dict[str, Any]]:
    """recallgate's held-out gate utterances (never fitted on)."""
    from importlib import resources

    text = (
        resources.files("recallgate.data.heldout").joinpath("gate_labels.jsonl").read_text(encoding="utf-8")
    )
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def heldout_gate_rates(decider: Decider | None, embedder: Embedder) -> dict[str, Any]:
    """The gate on recallgate's held-out utterances (data/heldout/gate_labels.jsonl).

    LoCoMo holds only questions that need memory; these show the other side: how often the
    same gate stays closed on greetings, thanks, arithmetic, definitions and general knowledge.
    """

    from ..deciders import ask
    from ..errors import DeciderError
    from ..policy.wording import GATE, gate_question

    rows = _heldout_rows()
    if decider is None:
        return {"n": len(rows), "non_memory_closed_rate": 0.0, "memory_open_rate": 1.0}
    threshold = RecallPolicy(
        SQLiteStore("sqlite://:memory:", embedder=embedder), decider=decider
    ).thresholds.get("gate", 0.5)
    closed, opened, negatives, positives = 0, 0, 0, 0
    for row in rows:
        try:
            p = ask(decider, row["text"], {GATE: gate_question()})[GATE]
        except DeciderError:
            p = 1.0  # a failing gate fails open
        is_open = isinstance(p, float) and p >= threshold
        if row["label"]:
            positives += 1
            opened += is_open
        else:
            negatives += 1
            closed += not is_open
    return {
        "n": len(rows),
        "non_memory_closed_rate": round(closed / max(negatives, 1), 4),
        "memory_open_rate": round(opened / max(positives, 1), 4),
    }
