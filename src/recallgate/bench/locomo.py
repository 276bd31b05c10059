"""The LoCoMo retrieval benchmark: real long-term memories and questions, stock arm vs gated arm.

LoCoMo (Maharana et al., ACL 2024) holds ten very long conversations. Each session's
observations (short third-person facts pointing at the turn they came from) are the memory
records; each question's evidence turns make the observations from those turns its relevant
records. recallgate reads the data from a directory the user has (it is not shipped: the
upstream repository carries no licence) and never fits anything on the test split.
"""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..deciders import Decider
from ..embeddings import Embedder, default_embedder
from ..errors import UsageError
from ..policy import RecallPolicy
from ..policy.pack import TOKENIZER_NAME, count_tokens
from ..records import MemoryRecord
from ..stores.sqlite import SQLiteStore

__all__ = [
    "SPLITS",
    "Conversation",
    "Question",
    "auc",
    "build_store",
    "load_conversation",
    "load_split",
    "run_locomo",
]

#: The dev/test split given with the data (../shared/data/locomo/README.md).
SPLITS: dict[str, tuple[str, ...]] = {
    "dev": ("26", "30", "41", "42", "43"),
    "test": ("44", "47", "48", "49", "50"),
}
SPLITS["all"] = SPLITS["dev"] + SPLITS["test"]

ADVERSARIAL = 5


@dataclass
class Observation:
    id: str
    speaker: str
    text: str
    dia_ids: frozenset[str]
    session: int
    date: str


@dataclass
class Question:
    text: str
    answer: str
    category: int
    relevant: frozenset[str]


@dataclass
class Conversation:
    id: str
    speakers: tuple[str, str]
    observations: list[Observation]
    questions: list[Question]

    @property
    def actor_id(self) -> str:
        return f"locomo-{self.id}"


def load_conversation(path: Path) -> Conversation:
    """Parse one LoCoMo file; questions keep only non-adversarial ones with a relevant record."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read LoCoMo file {str(path)!r}: {exc}") from exc
    try:
        speakers = (str(data["speaker_a"]), str(data["speaker_b"]))
        observations: list[Observation] = []
        for key, value in data.items():
            match = re.fullmatch(r"session_(\d+)_observation", key)
            if not match or not isinstance(value, dict):
                continue
            session = int(match.group(1))
            date = str(data.get(f"session_{session}_date_time", ""))
            for speaker, facts in value.items():
                for fact, dia in facts:
                    ids = frozenset(dia if isinstance(dia, list) else [dia])
                    observations.append(
                        Observation(f"o{len(observations)}", speaker, fact, ids, session, date)
                    )
        questions = []
        for qa in data["qa"]:
            if qa.get("category") == ADVERSARIAL:
                continue
            evidence = set(qa.get("evidence") or [])
            relevant = frozenset(o.id for o in observations if o.dia_ids & evidence)
            if relevant:
                questions.append(
                    Question(
                        str(qa["question"]), str(qa.get("answer", "")), int(qa.get("category", 0)), relevant
                    )
                )
    except (KeyError, TypeError, ValueError) as exc:
        raise UsageError(f"{str(path)!r} does not look like a LoCoMo conversation: {exc}") from exc
    return Conversation(path.stem, speakers, observations, questions)


def load_split(data_dir: str | Path, split: str) -> list[Conversation]:
    if split not in SPLITS:
        raise UsageError(f"unknown split {split!r}: dev, test or all")
    root = Path(data_dir)
    if not root.is_dir():
        raise UsageError(f"LoCoMo data directory {str(root)!r} does not exist")
    missing = [cid for cid in SPLITS[split] if not (root / f"{cid}.json").exists()]
    if missing:
        raise UsageError(f"LoCoMo directory {str(root)!r} lacks {', '.join(m + '.json' for m in missing)}")
    return [load_conversation(root / f"{cid}.json") for cid in SPLITS[split]]


def build_store(
    conv: Conversation, embedder: Embedder, layout: str = "speakers"
) -> tuple[SQLiteStore, dict[str, str]]:
    """An in-memory store with every observation; returns it and the namespace templates.

    ``layout="speakers"``: one namespace per speaker (described, so a decider can route);
    ``layout="shared"``: one namespace for both.
    """
    store = SQLiteStore("sqlite://:memory:", embedder=embedder)
    namespaces: dict[str, str] = {}
    records = []
    for obs in conv.observations:
        if layout == "shared":
            template = "/observations/{actorId}"
            namespaces[template] = ""
        else:
            template = "/observations/{actorId}/" + re.sub(r"[^A-Za-z0-9_-]", "_", obs.speaker)
            namespaces[template] = f"What {obs.speaker} said and did: {obs.speaker}'s life, plans and events"
        records.append(
            MemoryRecord(
                actor_id=conv.actor_id,
                namespace=template.replace("{actorId}", conv.actor_id),
                text=obs.text,
                id=f"{conv.actor_id}-{obs.id}",
                metadata={
                    "speaker": obs.speaker,
                    "session": obs.session,
                    "date": obs.date,
                    "dia_ids": sorted(obs.dia_ids),
                },
            )
        )
    store.add_records(records)
    return store, namespaces


def auc(positive: Sequence[float], negative: Sequence[float]) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    pos = np.asarray(positive, dtype=np.float64)[:, None]
    neg = np.asarray(negative, dtype=np.float64)[None, :]
    return float(((pos > neg) + 0.5 * (pos == neg)).mean())


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
        arm.judge_auc.append(auc(positives, negatives))
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
