"""``recallwise bench decisions``: the gate's and the judge's quality on labelled-turn sets.

Every ``*.jsonl`` file of a folder is one set (labelled turns, :mod:`recallwise.tuning.labelled`),
run through a real :class:`~recallwise.policy.RecallPolicy` with the decider being measured, each
turn on its own (no follow-ups, no decision cache):

- a turn with a gate ``label``: the gate's p and whether the turn opened;
- a turn with ``records``: its records in an in-memory store (one per record set, so a user's
  requests share their memory), the turn recalled end to end -- gate, hybrid search, judge, keep
  rule -- and which records were kept.

Per set: the gate's open rate on turns that need memory, its closed rate on those that do not,
AUC, ECE and a reliability table; for turns with records, the share of the right records kept
(``right_kept``, over requests with at least one right record: a closed gate keeps nothing) and
records kept per request, and records kept per turn for the same users' general requests (no
right record), after the gate. The judge's own ranking is in ``judge_mean_auc`` (per turn, over
turns whose gate opened). Nothing is fitted here.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..deciders import Decider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import RecallPolicy
from ..records import MemoryRecord
from ..stores.sqlite import SQLiteStore
from ..tuning import metrics
from ..tuning.labelled import LabelledTurn, read_labelled_dir

__all__ = ["NAMESPACE", "SetResult", "run_decision_quality"]

#: the namespace a judged turn's records are stored in
NAMESPACE = "/memories/{actorId}"
Progress = Callable[[int], None]


def _mean(values: Sequence[float]) -> float | None:
    return round(float(statistics.fmean(values)), 4) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None or value != value else round(float(value), 4)


@dataclass
class SetResult:
    """What one set's turns did."""

    gate_p: list[float] = field(default_factory=list)
    gate_label: list[bool] = field(default_factory=list)
    gate_open: list[bool] = field(default_factory=list)
    #: per request (a turn with a right record): share of its right records kept, records kept
    right_kept: list[float] = field(default_factory=list)
    kept_per_request: list[int] = field(default_factory=list)
    #: per general turn (records, none right): records kept
    kept_per_general: list[int] = field(default_factory=list)
    judge_auc: list[float] = field(default_factory=list)
    errors: int = 0

    def summary(self) -> dict[str, Any]:
        p = np.array(self.gate_p, dtype=np.float64)
        y = np.array(self.gate_label, dtype=bool)
        opened = np.array(self.gate_open, dtype=bool)
        out: dict[str, Any] = {"gate_turns": len(y)}
        if len(y):
            out.update(
                {
                    "gate_positives": int(y.sum()),
                    "open_rate_true": _round(float(opened[y].mean())) if y.any() else None,
                    "closed_rate_false": _round(float((~opened[~y]).mean())) if (~y).any() else None,
                    "accuracy": _round(float((opened == y).mean())),
                    "auc": _round(metrics.auc(p, y)) if y.any() and (~y).any() else None,
                    "ece": _round(metrics.expected_calibration_error(p, y)),
                    "reliability": [
                        {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}
                        for row in metrics.reliability_table(p, y)
                    ],
                }
            )
        out.update(
            {
                "requests": len(self.right_kept),
                "right_kept": _mean(self.right_kept),
                "records_per_request": _mean(self.kept_per_request),
                "general_turns": len(self.kept_per_general),
                "records_per_general_turn": _mean(self.kept_per_general),
                "judge_mean_auc": _mean(self.judge_auc),
                "decider_errors": self.errors,
            }
        )
        return out

    def extend(self, other: SetResult) -> None:
        for name in (
            "gate_p",
            "gate_label",
            "gate_open",
            "right_kept",
            "kept_per_request",
            "kept_per_general",
            "judge_auc",
        ):
            getattr(self, name).extend(getattr(other, name))
        self.errors += other.errors


def _policy(store: SQLiteStore, decider: Decider | None, options: Mapping[str, Any]) -> RecallPolicy:
    # each turn on its own: no follow-ups carried between turns, no cached gate answers
    return RecallPolicy(
        store,
        decider=decider,
        namespaces=[NAMESPACE],
        **{"follow_up_conversations": 0, "cache_size": 0, **options},
    )


def _record_groups(turns: Sequence[LabelledTurn]) -> dict[tuple[tuple[str, str], ...], list[int]]:
    groups: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for i, turn in enumerate(turns):
        if turn.records:
            key = tuple(sorted((r.id, r.text or "") for r in turn.records))
            groups.setdefault(key, []).append(i)
    return groups


def run_set(
    turns: Sequence[LabelledTurn],
    decider: Decider | None,
    embedder: Embedder,
    progress: Progress | None = None,
    options: Mapping[str, Any] | None = None,
) -> SetResult:
    """Run one set's turns through real policies (see the module); ``options`` are the policies'
    (``RecallPolicy`` keywords)."""
    options = dict(options or {})
    result = SetResult()
    for turn in turns:
        if not turn.text:
            raise UsageError(
                f"{turn.where}: no text: the bench runs messages (fill texts from the log first)"
            )
    # turns without records: the gate over an empty store
    plain = [t for t in turns if not t.records]
    if plain:
        store = SQLiteStore("sqlite://:memory:", embedder=embedder)
        policy = _policy(store, decider, options)
        try:
            for turn in plain:
                recall = policy.recall(turn.text or "", actor_id="bench")
                _gate(result, turn, recall.trace)
                if progress is not None:
                    progress(1)
        finally:
            policy.close()
            store.close()
    for g, (key, members) in enumerate(_record_groups(turns).items()):
        store = SQLiteStore("sqlite://:memory:", embedder=embedder)
        actor = f"user{g}"
        store.add_records(
            [
                MemoryRecord(actor, NAMESPACE.replace("{actorId}", actor), text, id=f"{actor}:{rid}")
                for rid, text in key
            ]
        )
        policy = _policy(store, decider, options)
        try:
            for i in members:
                turn = turns[i]
                recall = policy.recall(turn.text or "", actor_id=actor)
                _gate(result, turn, recall.trace)
                kept = {r.record.id.split(":", 1)[1] for r in recall.records}
                right = {r.id for r in turn.records if r.label}
                if right:
                    result.right_kept.append(len(kept & right) / len(right))
                    result.kept_per_request.append(len(kept))
                else:
                    result.kept_per_general.append(len(kept))
                judged = [c for c in recall.trace.candidates if c.judge_p is not None]
                labels = np.array([c.id.split(":", 1)[1] in right for c in judged], dtype=bool)
                if judged and labels.any() and not labels.all():
                    result.judge_auc.append(metrics.auc([c.judge_p or 0.0 for c in judged], labels))
                if progress is not None:
                    progress(1)
        finally:
            policy.close()
            store.close()
    return result


def _gate(result: SetResult, turn: LabelledTurn, trace: Any) -> None:
    if trace.errors:
        result.errors += 1
    if turn.label is None:
        return
    result.gate_label.append(bool(turn.label))
    # a stock arm (no decider) always opens; a gate that failed open has no p: it opened
    result.gate_p.append(1.0 if trace.gate_p is None else float(trace.gate_p))
    result.gate_open.append(bool(trace.gate_open) if trace.gated else True)


def load_sets(data_dir: str | Path) -> dict[str, list[LabelledTurn]]:
    """Every ``*.jsonl`` set of ``data_dir``, by file name (all read before anything runs)."""
    return read_labelled_dir(data_dir, "*.jsonl")


def run_decision_quality(
    data_dir: str | Path,
    decider: Decider | None,
    *,
    embedder: Embedder | None = None,
    sets: Mapping[str, Sequence[LabelledTurn]] | None = None,
    policy_options: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    on_set: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every set of ``data_dir`` (see the module); returns the bench's JSON object.
    ``policy_options``: ``RecallPolicy`` keywords for every policy (thresholds, say)."""
    sets = sets if sets is not None else load_sets(data_dir)
    embedder = embedder or default_embedder()
    out_sets: dict[str, Any] = {}
    overall = SetResult()
    heads: dict[str, str] = {}
    thresholds: dict[str, float] = {}
    for name, turns in sets.items():
        if on_set is not None:
            on_set(name)
        result = run_set(turns, decider, embedder, progress, policy_options)
        out_sets[name] = {"turns": len(turns), **result.summary()}
        overall.extend(result)
    probe = _policy(SQLiteStore("sqlite://:memory:", embedder=embedder), decider, dict(policy_options or {}))
    heads, thresholds = dict(probe.heads), dict(probe.thresholds)
    probe.close()
    return {
        "data": str(data_dir),
        "decider": getattr(decider, "name", None) or "none",
        "embedder": embedder.name,
        "heads": heads,
        "thresholds": {k: round(v, 4) for k, v in thresholds.items()},
        "sets": out_sets,
        "overall": {"turns": sum(len(t) for t in sets.values()), **overall.summary()},
    }
