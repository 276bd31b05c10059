"""``recallwise bench decisions``: the gate's and judge's quality on labelled-turn sets, or over
whole labelled conversations (``--conversations``)."""

from __future__ import annotations

import argparse
from typing import Any

from ..bench.conversations import FIGURES, load_conversations, run_conversations
from ..bench.decision_quality import load_sets, run_decision_quality
from . import progress_bar, report
from .common import add_decider, add_embedder, add_json, decider_from_args, embedder_from_args, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """gate open / closed rates, AUC, calibration, and the judge's right records kept, set by set, on
    labelled turns

    Run every *.jsonl set of labelled turns in DIR through a real policy, each turn on its own: the
    gate's open rate where memory is needed and closed rate where it is not, AUC, ECE and a reliability
    table; for turns with records (stored for the turn's user), the right records kept and records kept
    per request, and records per general turn after the gate.

    With --conversations DIR, run whole labelled conversations instead, each in order as its own
    session of one default policy over a real SQLite store holding every user's records: opens where
    memory is needed, closes where it is not, follow-up precision and recall, records injected on
    turns that need none, the right record kept and records per turn where one belongs; per turn
    source and per split (recallwise.bench.conversations defines each figure).
    """
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--data",
        metavar="DIR",
        help="folder of labelled-turn sets (*.jsonl: {text, label, records, ...} per line; "
        "no default: give --data or --conversations)",
    )
    source.add_argument(
        "--conversations",
        metavar="DIR",
        help="folder of labelled conversations (*.jsonl, or split folders of them: "
        "{id, persona, turns: [{text, needs_memory, follow_up, records}]} per line; "
        "no default: give --data or --conversations)",
    )
    add_decider(parser)
    add_embedder(parser, "the stores and messages")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    if args.conversations is not None:
        return _run_conversations(args)
    sets = load_sets(args.data)  # every file is read and checked before any model loads
    decider = decider_from_args(args)
    with progress_bar(args, sum(len(t) for t in sets.values()), unit="turn", desc="bench decisions") as bar:
        result = run_decision_quality(
            args.data,
            decider,
            embedder=embedder_from_args(args),
            sets=sets,
            progress=bar.update,
            on_set=bar.set_postfix_str,
        )
    return report(args, result, _print)


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _print(result: dict[str, Any]) -> None:
    overall = result["overall"]
    if overall.get("decider_errors"):
        print(f"WARNING: {overall['decider_errors']} turns had decider errors; they failed open.")
    print(
        f"bench decisions: {result['data']}, {len(result['sets'])} sets, {overall['turns']} turns; "
        f"decider {result['decider']}, embedder {result['embedder']}, gate threshold "
        f"{result['thresholds'].get('gate', '—')}"
    )
    for where in result["heads"].values():
        print(f"  {where}")
    rows = []
    for name, s in [*result["sets"].items(), ("overall", overall)]:
        rows.append(
            (
                name,
                s["gate_turns"],
                _cell(s.get("open_rate_true")),
                _cell(s.get("closed_rate_false")),
                _cell(s.get("auc")),
                _cell(s.get("ece")),
                s["requests"] or "—",
                _cell(s["right_kept"]),
                _cell(s["records_per_request"]),
                _cell(s["records_per_general_turn"]),
            )
        )
    print(
        table(
            rows,
            [
                "set",
                "gate n",
                "opens (needed)",
                "closes (not)",
                "AUC",
                "ECE",
                "requests",
                "right kept",
                "records/req",
                "records/general",
            ],
        )
    )
    reliability = overall.get("reliability") or []
    if reliability:
        print("\ngate reliability (all sets): p bin, turns, mean p, share that needed memory")
        print(
            table(
                [
                    (f"{r['low']:.1f}-{r['high']:.1f}", r["n"], _cell(r["mean_p"]), _cell(r["observed"]))
                    for r in reliability
                ],
                ["p", "n", "mean p", "observed"],
            )
        )


def _run_conversations(args: argparse.Namespace) -> int:
    conversations = load_conversations(args.conversations)  # read and checked before any model loads
    decider = decider_from_args(args)
    turns = sum(len(c.turns) for c in conversations)
    with progress_bar(args, turns, unit="turn", desc="bench conversations") as bar:
        result = run_conversations(
            conversations,
            decider,
            embedder=embedder_from_args(args),
            data=str(args.conversations),
            progress=bar.update,
        )
    return report(args, result, _print_conversations)


_COLUMNS = {
    "opened_when_needed": "opens (needed)",
    "closed_when_not_needed": "closes (not)",
    "follow_up_precision": "follow-up P",
    "follow_up_recall": "follow-up R",
    "records_per_unneeded_turn": "records/unneeded",
    "right_record_kept": "right kept",
    "records_per_needed_turn": "records/needed",
}


def _print_conversations(result: dict[str, Any]) -> None:
    overall, counts = result["overall"], result["counts"]
    if counts.get("decider_errors"):
        print(f"WARNING: {counts['decider_errors']} turns had decider errors; they failed open.")
    print(
        f"bench decisions: {result['data']}, {overall['conversations']} conversations, {overall['turns']} "
        f"turns; decider {result['decider']}, embedder {result['embedder']}, default options"
    )
    for where in result["heads"].values():
        print(f"  {where}")
    rows = []
    groups = [
        *((f"split {k}", v) for k, v in result["splits"].items()),
        *((f"source {k}", v) for k, v in result["sources"].items()),
        ("overall", overall),
    ]
    for name, figures in groups:
        rows.append((name, figures["turns"], *(_cell(figures[key]) for key in FIGURES[2:])))
    print(table(rows, ["group", "turns", *(_COLUMNS[key] for key in FIGURES[2:])]))
    opened = counts.get("unneeded_opened_by") or {}
    if opened:
        said = ", ".join(f"{why} {n}" for why, n in opened.items())
        print(f"\nturns that needed no memory and retrieved, by what opened them: {said}")
