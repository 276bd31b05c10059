"""Fit the store-aware gate: how far below the gate threshold a message may open the gate when
it names something (a person, place, thing) the actor's memory mentions.

Positives are LoCoMo questions, each asked against its own conversation's store; negatives
are non-memory messages (greetings, arithmetic, general knowledge), each asked against every
one of those stores, so a name that happens to be in memory counts against the rule too. The
lower threshold is chosen by balanced accuracy (open rate on the questions and closed rate
on the non-memory messages weigh the same), ties going to the higher, more cautious value.
Fit it on the dev split only: the test split is for reporting.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..datasets.locomo import build_store, load_split
from ..deciders import Decider, DecisionHints, ask
from ..embeddings import Embedder, default_embedder
from ..errors import DeciderError, UsageError
from ..policy.config import FittedThreshold, config_from_env, resolve_threshold
from ..policy.names import name_terms
from ..policy.wording import GATE, gate_question
from ..records import resolve_namespace
from ..stores import SQLiteStore

__all__ = ["NamedGateFit", "fit_named_gate", "load_negatives"]

#: candidate lower thresholds (the gate threshold itself means "rule off")
GRID = tuple(round(x, 2) for x in np.arange(0.0, 1.0001, 0.01))


@dataclass(frozen=True)
class NamedGateFit:
    backend: str
    split: str
    gate_threshold: float
    named_threshold: float
    positives: int
    negatives: int
    positives_named: float
    negatives_named: float
    open_rate: dict[str, float]
    non_memory_closed_rate: dict[str, float]
    balanced_accuracy: dict[str, float]
    negatives_source: str
    negatives_sha256: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def fitted(self, data: str) -> FittedThreshold:
        return FittedThreshold(
            value=self.named_threshold,
            data=data,
            data_sha256=self.negatives_sha256,
            n=self.positives + self.negatives,
            fit=(
                f"balanced accuracy {self.balanced_accuracy['with_store']:.3f} "
                f"(message only {self.balanced_accuracy['message_only']:.3f}) at gate threshold "
                f"{self.gate_threshold:g}"
            ),
        )


def load_negatives(path: str | None) -> tuple[list[str], str, str]:
    """Non-memory messages: the ``label: false`` rows of a gate label file (default: the
    embedded decider's shipped example bank). Returns texts, source name and sha256."""
    if path is None:
        source = "recallwise/data/gate_examples.jsonl"
        data = resources.files("recallwise.data").joinpath("gate_examples.jsonl").read_bytes()
    else:
        source = path
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise UsageError(f"cannot read {path!r}: {exc}") from exc
    texts = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            text, label = row["text"], row["label"]
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f'{source}:{number}: expected {{"text": str, "label": bool}}: {exc}') from None
        if not isinstance(text, str) or not isinstance(label, bool):
            raise UsageError(f"{source}:{number}: text must be a string and label true or false")
        if not label:
            texts.append(text)
    if not texts:
        raise UsageError(f'{source}: no rows with "label": false (non-memory messages) to fit on')
    return texts, source, hashlib.sha256(data).hexdigest()


def _gate_p(decider: Decider, embedder: Embedder, texts: Sequence[str]) -> list[float]:
    """The gate's answer for each text, asked with the shipped question minus that very text
    among its examples (leave-one-out: the default non-memory messages are its examples)."""
    vectors = embedder.embed(list(texts))
    shipped = gate_question()
    out = []
    for text, vector in zip(texts, vectors, strict=True):
        question = replace(shipped, examples=tuple(e for e in shipped.examples if e.state != text))
        try:
            p = ask(decider, text, {GATE: question}, DecisionHints(state_vector=vector))[GATE]
        except DeciderError:
            p = 1.0  # a failing gate fails open, as the policy does
        out.append(float(p) if isinstance(p, float) else 1.0)
    return out


def _named(store: SQLiteStore, namespaces: Sequence[str], actor_id: str, text: str) -> bool:
    terms = name_terms(text)
    if not terms:
        return False
    return any(
        store.mentions(resolve_namespace(t, actor_id=actor_id), terms, actor_id=actor_id) for t in namespaces
    )


def fit_named_gate(
    data_dir: str | Path,
    decider: Decider,
    *,
    split: str = "dev",
    negatives_path: str | None = None,
    embedder: Embedder | None = None,
    progress: Callable[[int], None] | None = None,
) -> NamedGateFit:
    """Fit the store-aware gate's lower threshold on LoCoMo ``split`` (never ``test``)."""
    if split != "dev":
        raise UsageError(f"the store-aware gate is fitted on the dev split only, not {split!r}")
    negatives, source, sha256 = load_negatives(negatives_path)
    conversations = load_split(data_dir, split)
    embedder = embedder or default_embedder()
    backend = str(getattr(decider, "name", type(decider).__name__))
    head = getattr(decider, "head_thresholds", None)
    threshold = resolve_threshold(
        backend, "gate", config_from_env(), head=head() if callable(head) else None
    ).value
    negative_p = np.array(_gate_p(decider, embedder, negatives))
    pos_p: list[float] = []
    pos_named: list[bool] = []
    neg_named: list[np.ndarray] = []
    for conv in conversations:
        store, namespaces = build_store(conv, embedder)
        try:
            pos_p += _gate_p(decider, embedder, [q.text for q in conv.questions])
            pos_named += [_named(store, list(namespaces), conv.actor_id, q.text) for q in conv.questions]
            neg_named.append(np.array([_named(store, list(namespaces), conv.actor_id, t) for t in negatives]))
        finally:
            store.close()
        if progress:
            progress(1)
    p_pos, named_pos = np.array(pos_p), np.array(pos_named)
    p_neg = np.tile(negative_p, len(conversations))
    named_neg = np.concatenate(neg_named)

    def rates(lower: float) -> tuple[float, float]:
        opened = (p_pos >= threshold) | (named_pos & (p_pos >= lower))
        closed = ~((p_neg >= threshold) | (named_neg & (p_neg >= lower)))
        return float(opened.mean()), float(closed.mean())

    best, best_score = threshold, -1.0
    for lower in sorted((g for g in GRID if g <= threshold), reverse=True):
        score = sum(rates(lower)) / 2
        if score > best_score + 1e-12:
            best, best_score = lower, score
    before, after = rates(threshold), rates(best)
    return NamedGateFit(
        backend=backend,
        split=split,
        gate_threshold=threshold,
        named_threshold=float(best),
        positives=len(p_pos),
        negatives=len(p_neg),
        positives_named=round(float(named_pos.mean()), 4),
        negatives_named=round(float(named_neg.mean()), 4),
        open_rate={"message_only": round(before[0], 4), "with_store": round(after[0], 4)},
        non_memory_closed_rate={"message_only": round(before[1], 4), "with_store": round(after[1], 4)},
        balanced_accuracy={
            "message_only": round(sum(before) / 2, 4),
            "with_store": round(sum(after) / 2, 4),
        },
        negatives_source=source,
        negatives_sha256=sha256,
    )
