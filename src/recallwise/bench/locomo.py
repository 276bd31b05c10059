"""The LoCoMo retrieval benchmark: real long-term memories and questions, stock arm vs gated arm.

The data is read by :mod:`recallwise.datasets.locomo` (its loader names are re-exported here
for scripts that imported them from this module); each question's relevant records are the
observations from its evidence turns. Nothing is fitted on the test split.

The JSON object of :func:`run_locomo` has, for each arm (``"stock"`` and ``"gated"``):

- ``recall``: evidence recall (share of a question's relevant records that were injected),
  averaged over questions; ``any_hit``, ``records_per_question``, ``tokens_per_question``;
- ``recall_by_category``: ``recall`` per LoCoMo question category, keyed by the category
  number as a string (``"1"`` multi-hop, ``"2"`` temporal, ``"3"`` open-domain, ``"4"``
  single-hop; ``"5"``, adversarial, is left out of the benchmark);
- ``recall_at_tokens``: recall when the arm may inject at most N tokens per question, for N in
  :data:`TOKEN_BUDGETS` (keys are N as strings): the arm's own ranking of what it retrieved
  (stock: search score; gated: judge probability, including records its keep rule dropped),
  cut where the next record would pass N. Tokens are counted per record line plus the
  block's tags, with the tokenizer named by ``tokenizer``. A question whose gate closed
  scores 0 at every budget.

and ``stock.recall_at_gated_tokens``: the stock arm cut, question by question, to the tokens
the gated arm actually injected for that question, so the two arms are compared at equal cost.

How the gated arm searched and kept: ``gated_top_k`` (records searched per namespace; the
stock arm searches ``top_k``), ``gated_keep`` (``max_records`` and the episodic options,
``conversation_rescore`` and ``adaptive_budget``, or None where off) and
``gated.rescored_rate`` (share of questions whose records were re-scored by conversation).
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
from ..policy import RecallOptions, RecallPolicy
from ..policy.options import with_shorthand
from ..policy.pack import CLOSE_TAG, OPEN_TAG, TOKENIZER_NAME, count_tokens, escape_memory_text
from ..stores.sqlite import SQLiteStore
from ..tuning import metrics

__all__ = [
    "SPLITS",
    "TOKEN_BUDGETS",
    "Conversation",
    "LocomoQuestion",
    "build_store",
    "load_conversation",
    "load_split",
    "run_locomo",
    "run_locomo_mem0",
]

#: the per-question token budgets at which ``recall_at_tokens`` compares the arms
TOKEN_BUDGETS: tuple[int, ...] = (50, 100, 200, 400)


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
    categories: list[int] = field(default_factory=list)
    #: per question: recall at each of TOKEN_BUDGETS
    at_tokens: list[dict[int, float]] = field(default_factory=list)
    #: per question (stock arm only): recall cut to the gated arm's tokens for that question
    at_gated_tokens: list[float] = field(default_factory=list)
    #: per gated question: 1.0 when the conversation re-scoring ran
    rescored: list[float] = field(default_factory=list)
    errors: int = 0

    def summary(self, gated: bool) -> dict[str, Any]:
        by_category: dict[int, list[float]] = {}
        for category, value in zip(self.categories, self.recall, strict=True):
            by_category.setdefault(category, []).append(value)
        out: dict[str, Any] = {
            "recall": _mean(self.recall),
            "any_hit": _mean(self.any_hit),
            "records_per_question": _mean(self.records),
            "tokens_per_question": _mean(self.tokens),
            "recall_by_category": {str(c): _mean(v) for c, v in sorted(by_category.items())},
            "recall_at_tokens": {
                str(budget): _mean(row[budget] for row in self.at_tokens) for budget in TOKEN_BUDGETS
            },
        }
        if self.at_gated_tokens:
            out["recall_at_gated_tokens"] = _mean(self.at_gated_tokens)
        if gated:
            out.update(
                {
                    "gate_open_rate": _mean(self.gate_open),
                    "judge_mean_auc": _mean(self.judge_auc),
                    "judge_p_at_k": _mean(self.judge_p_at_k),
                    "judge_questions": len(self.judge_auc),
                    "rescored_rate": _mean(self.rescored),
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
    gated_depth = top_k
    heldout_rows = _heldout_rows()
    in_store: dict[bool, list[float]] = {True: [], False: []}  # label -> gate opened, per store
    line_tokens = _LineTokens()
    for conv in conversations:
        store, namespaces = build_store(conv, embedder, layout)
        stock_policy = RecallPolicy(store, decider=None, namespaces=list(namespaces), top_k=top_k)
        gated_policy = RecallPolicy(
            store,
            decider=decider,
            namespaces=namespaces if route else list(namespaces),
            top_k=top_k,
            # Each question (and each non-memory message) is a probe of its own, not the next
            # turn of one conversation: no follow-ups of the question before it.
            **{"follow_up_conversations": 0, **(policy_options or {})},
        )
        gated_depth = gated_policy.search_depth
        for question in conv.questions:
            relevant = {f"{conv.actor_id}-{r}" for r in question.relevant}
            ranked: dict[str, list[tuple[str, str]]] = {}
            for arm, policy in ((stock, stock_policy), (gated, gated_policy)):
                recall = policy.recall(question.text, actor_id=conv.actor_id)
                injected = {k.record.id for k in recall.records}
                arm.recall.append(len(relevant & injected) / len(relevant))
                arm.any_hit.append(1.0 if relevant & injected else 0.0)
                arm.records.append(len(recall.records))
                arm.tokens.append(count_tokens(recall.context))
                arm.categories.append(question.category)
                order = _arm_ranking(recall.trace.candidates, by_judge=arm is gated)
                ranked["gated" if arm is gated else "stock"] = order
                arm.at_tokens.append(
                    {b: _recall_within(order, relevant, b, line_tokens) for b in TOKEN_BUDGETS}
                )
                timings = recall.trace.timings_ms
                arm.embed_ms.append(timings.get("embed", 0.0))
                if "search" in timings:
                    arm.search_ms.append(timings["search"])
                if arm is gated:
                    arm.errors += len(recall.trace.errors)
                    arm.gate_open.append(1.0 if recall.trace.gate_open else 0.0)
                    arm.decide_ms.append(
                        timings.get("gate", 0.0) + timings.get("judge", 0.0) + timings.get("rescore", 0.0)
                    )
                    arm.rescored.append(1.0 if "rescore" in timings else 0.0)
                    _judge_ranking(arm, recall.trace.candidates, relevant)
            stock.at_gated_tokens.append(
                _recall_within(ranked["stock"], relevant, gated.tokens[-1], line_tokens)
            )
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
    gated_options = with_shorthand(None, {"top_k": top_k, **(policy_options or {})})
    if decider is not None:
        heldout["non_memory_closed_rate_with_store"] = round(1.0 - _mean(in_store[False]), 4)
        heldout["memory_open_rate_with_store"] = round(_mean(in_store[True]), 4)
    return {
        "split": split,
        "conversations": len(conversations),
        "questions": len(stock.recall),
        "layout": layout,
        "top_k": top_k,
        "gated_top_k": gated_depth,
        "gated_keep": _keep_options(gated_options),
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


def _keep_options(options: RecallOptions) -> dict[str, Any]:
    """How the gated arm keeps records, as the JSON says it."""
    weights, budget = options.keep.conversation_rescore, options.keep.adaptive_budget
    return {
        "max_records": options.limits.max_records,
        "rule": options.keep.rule,
        "judge_domains": options.keep.judge_domains,
        "conversation_rescore": None
        if weights is None
        else {"centre": weights.centre, "session": weights.session},
        "adaptive_budget": None
        if budget is None
        else {"delta": budget.delta, "min_records": budget.min_records, "max_records": budget.max_records},
    }


class _LineTokens:
    """Tokens of one record's line in the context block, cached by record text."""

    def __init__(self) -> None:
        self.tags = count_tokens(f"{OPEN_TAG}\n\n{CLOSE_TAG}")
        self._cache: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        cached = self._cache.get(text)
        if cached is None:
            cached = self._cache[text] = count_tokens(f"- {escape_memory_text(text, 600)}")
        return cached


def _arm_ranking(candidates: Sequence[Any], *, by_judge: bool) -> list[tuple[str, str]]:
    """(id, text) of an arm's candidates, best first: by judge probability for the gated arm
    (unjudged ones last), by search score for the stock arm."""
    if by_judge:
        order = sorted(candidates, key=lambda c: -(c.judge_p if c.judge_p is not None else -1.0))
    else:
        order = sorted(candidates, key=lambda c: -c.score)
    seen: set[str] = set()
    out = []
    for c in order:
        if c.id not in seen:
            seen.add(c.id)
            out.append((c.id, c.text))
    return out


def _recall_within(
    ranked: Sequence[tuple[str, str]], relevant: set[str], budget: float, line_tokens: _LineTokens
) -> float:
    """Recall of the longest prefix of ``ranked`` whose block fits in ``budget`` tokens."""
    used = line_tokens.tags
    found = 0
    for record_id, text in ranked:
        used += line_tokens(text)
        if used > budget:
            break
        found += record_id in relevant
    return found / len(relevant) if relevant else 0.0


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
    """recallwise's held-out gate utterances (never fitted on)."""
    from importlib import resources

    text = (
        resources.files("recallwise.data.heldout").joinpath("gate_labels.jsonl").read_text(encoding="utf-8")
    )
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def heldout_gate_rates(decider: Decider | None, embedder: Embedder) -> dict[str, Any]:
    """The gate on recallwise's held-out utterances (data/heldout/gate_labels.jsonl).

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


# ---- through mem0 (``recallwise bench locomo --via mem0``) ------------------------------------------


def run_locomo_mem0(
    data_dir: str | Path,
    split: str,
    decider: Decider | None,
    *,
    top_k: int = 20,
    max_records: int | None = 5,
    embedder: Embedder | None = None,
    policy_options: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> dict[str, Any]:
    """mem0 stock vs mem0 gated on LoCoMo: one real, offline mem0 ``Memory`` per conversation
    (local qdrant in a temporary directory, recallwise's embedder, ``add(..., infer=False)``: one
    memory per observation, its session in the metadata), one mem0 user per conversation.

    The stock arm is ``memory.search(question, filters={"user_id": ...}, top_k=top_k)`` (mem0's
    defaults otherwise: threshold 0.1, no reranker) and injects everything it returns; the gated
    arm is the same call through :class:`~recallwise.integrations.mem0.GatedMem0` (the judge keeps
    at most ``max_records`` of those same records). Both arms' tokens are those of the returned
    memories' texts in one ``<user_context>`` block. ``chit_chat`` is the held-out non-memory
    messages (greetings, thanks, arithmetic, definitions) asked against every conversation's
    memory: how often each arm injects anything. Needs ``recallwise[mem0]``.
    """
    import importlib.metadata
    import tempfile

    from ..integrations.mem0 import GatedMem0, local_memory
    from ..policy import pack_context

    options = dict(policy_options or {})
    options.pop("gated_top_k", None)
    max_records = options.pop("max_records", max_records)
    conversations = load_split(data_dir, split)
    embedder = embedder or default_embedder()
    if on_start:
        on_start(sum(len(c.questions) for c in conversations))
    stock, gated = _Arm(), _Arm()
    chit_chat = {"stock": _Arm(), "gated": _Arm()}
    heldout_rows = [row for row in _heldout_rows() if not row["label"]]
    line_tokens = _LineTokens()
    errors: dict[str, int] = {}

    def block_tokens(texts: Sequence[str]) -> int:
        block, _ = pack_context(texts, max_record_chars=1 << 40, max_context_chars=1 << 40)
        return count_tokens(block) if block else 0

    with tempfile.TemporaryDirectory(prefix="recallwise-locomo-mem0-") as workdir:
        for conv in conversations:
            memory = local_memory(Path(workdir) / conv.id, embedder=embedder, collection_name=conv.id)
            # one batch through the shared cache: each add below finds its vector there
            memory.embedding_model.embed_batch([obs.text for obs in conv.observations])
            mem0_id: dict[str, str] = {}
            for obs in conv.observations:
                added = memory.add(
                    obs.text,
                    user_id=conv.actor_id,
                    infer=False,
                    metadata={"speaker": obs.speaker, "session": obs.session, "date": obs.date},
                )
                mem0_id[obs.id] = added["results"][0]["id"]
            gate = GatedMem0(
                memory,
                decider=decider,
                # each question (and each non-memory message) is a probe of its own
                options=with_shorthand(
                    None, {"max_records": max_records, "follow_up_conversations": 0, **options}
                ),
            )
            scope = {"user_id": conv.actor_id}
            for question in conv.questions:
                relevant = {mem0_id[r] for r in question.relevant}
                base = memory.search(question.text, filters=scope, top_k=top_k)["results"]
                kept = gate.search(question.text, filters=scope, top_k=top_k)["results"]
                stock_order = [(item["id"], item["memory"]) for item in base]
                for arm, items in ((stock, base), (gated, kept)):
                    injected = {item["id"] for item in items}
                    arm.recall.append(len(relevant & injected) / len(relevant))
                    arm.any_hit.append(1.0 if relevant & injected else 0.0)
                    arm.records.append(len(items))
                    arm.tokens.append(block_tokens([item["memory"] for item in items]))
                    arm.categories.append(question.category)
                recall = gate.last_recall
                candidates = recall.trace.candidates if recall is not None else []
                gated_order = _arm_ranking(candidates, by_judge=True)
                stock.at_tokens.append(
                    {b: _recall_within(stock_order, relevant, b, line_tokens) for b in TOKEN_BUDGETS}
                )
                gated.at_tokens.append(
                    {b: _recall_within(gated_order, relevant, b, line_tokens) for b in TOKEN_BUDGETS}
                )
                stock.at_gated_tokens.append(
                    _recall_within(stock_order, relevant, gated.tokens[-1], line_tokens)
                )
                if recall is not None:
                    gated.errors += len(recall.trace.errors)
                    gated.gate_open.append(1.0 if recall.trace.gate_open else 0.0)
                    gated.rescored.append(1.0 if "rescore" in recall.trace.timings_ms else 0.0)
                    _judge_ranking(gated, candidates, relevant)
                if progress:
                    progress(1)
            for row in heldout_rows:
                base = memory.search(row["text"], filters=scope, top_k=top_k)["results"]
                kept = gate.search(row["text"], filters=scope, top_k=top_k)["results"]
                for name, items in (("stock", base), ("gated", kept)):
                    arm = chit_chat[name]
                    arm.recall.append(1.0 if items else 0.0)
                    arm.records.append(len(items))
                    arm.tokens.append(block_tokens([item["memory"] for item in items]))
            for kind, count in gate.stats.errors_by_kind.items():
                errors[kind] = errors.get(kind, 0) + count
            gate.close()
            memory.vector_store.client.close()
    keep_options = with_shorthand(None, {"max_records": max_records, **options})
    return {
        "via": "mem0",
        "mem0ai": importlib.metadata.version("mem0ai"),
        "split": split,
        "conversations": len(conversations),
        "questions": len(stock.recall),
        "top_k": top_k,
        "gated_keep": _keep_options(keep_options),
        "decider": getattr(decider, "name", "none") if decider is not None else "none",
        "embedder": embedder.name,
        "tokenizer": TOKENIZER_NAME,
        "stock": stock.summary(gated=False),
        "gated": gated.summary(gated=True),
        "chit_chat": {
            "messages": len(chit_chat["stock"].recall),
            **{
                f"{name}_{key}": value
                for name, arm in chit_chat.items()
                for key, value in (
                    ("injected_rate", _mean(arm.recall)),
                    ("records_per_message", _mean(arm.records)),
                    ("tokens_per_message", _mean(arm.tokens)),
                )
            },
        },
        "errors_by_kind": errors,
    }
