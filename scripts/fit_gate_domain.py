"""Fit the profile-aware gate's threshold (``gate_domain``) on labelled conversations.

For every turn that is not a follow-up, with the default decider and the conversation's persona in
a SQLite store: the gate's p on the message, the message's life domain, and whether the persona has
a record in it. The threshold t opens "p >= gate threshold, or p >= t and a record is in the
message's domain"; the one printed maximises balanced accuracy (mean of the share of turns needing
memory that open and of the share not needing it that close) on the split given.

    python scripts/fit_gate_domain.py data/conversations/fit [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from recallwise import RecallPolicy
from recallwise.bench.conversations import NAMESPACE, _store, load_conversations
from recallwise.deciders import DecisionHints, default_decider
from recallwise.embeddings import default_embedder
from recallwise.policy.wording import GATE, gate_question


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("split", help="a folder of conversation files (one split)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--rows", help="also write each turn's (source, p, covered, needs memory) here, one JSON line each"
    )
    args = parser.parse_args()
    conversations = load_conversations(args.split)
    embedder = default_embedder()
    decider = default_decider()
    rows: list[tuple[float, bool, bool]] = []
    sources: list[str] = []
    counts: list[int] = []
    with tempfile.TemporaryDirectory() as scratch:
        store = _store(conversations, Path(scratch) / "p.db", embedder)
        threshold = RecallPolicy(store, decider=decider).thresholds["gate"]
        question = {GATE: gate_question()}
        turns = [(c, t) for c in conversations for t in c.turns if not t.follow_up]
        texts = [t.text for _, t in turns]
        vectors = np.concatenate([embedder.embed(texts[i : i + 256]) for i in range(0, len(texts), 256)])
        for n, ((conversation, turn), vector) in enumerate(zip(turns, vectors, strict=True)):
            decision = decider.decide(
                turn.text, question, DecisionHints(state_vector=vector, embedder_name=embedder.name)
            )
            p = float(decision.answers[GATE])
            namespace = NAMESPACE.replace("{actorId}", conversation.id)
            held = store.actor_profile(conversation.id).records_in([namespace], store.domain_of(vector))
            rows.append((p, held > 0, turn.needs_memory))
            counts.append(held)
            sources.append(turn.source)
            if n % 500 == 0:
                print(f"{n}/{len(turns)}", file=sys.stderr)
        store.close()
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as out_file:
            for source, row, held in zip(sources, rows, counts, strict=True):
                out_file.write(json.dumps([source, *row, held]) + "\n")
    p = np.array([r[0] for r in rows])
    covered = np.array([r[1] for r in rows])
    need = np.array([r[2] for r in rows])

    def figures(t: float | None) -> dict[str, float]:
        opened = p >= threshold
        if t is not None:
            opened = opened | (covered & (p >= t))
        return {
            "opened_when_needed": round(float(opened[need].mean()), 4),
            "closed_when_not_needed": round(float((~opened[~need]).mean()), 4),
        }

    grid = [round(float(t), 4) for t in np.linspace(0.0, threshold, 101)]
    scored = [(sum(figures(t).values()) / 2, t) for t in grid]
    best_score = max(s for s, _ in scored)
    best = max(t for s, t in scored if s == best_score)  # the highest of the best: opens least
    out = {
        "split": args.split,
        "turns": len(rows),
        "need_memory": int(need.sum()),
        "gate_threshold": threshold,
        "without": figures(None),
        "gate_domain": best,
        "with": figures(best),
        "balanced_accuracy": round(best_score, 4),
    }
    print(json.dumps(out) if args.json else json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
