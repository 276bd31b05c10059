"""``recallwise tune keep``: fit what the gated arm searches and keeps, on LoCoMo's dev split."""

from __future__ import annotations

import argparse
import functools
from typing import Any

from ..errors import UsageError
from . import progress_bar, report
from .common import add_json, table
from .tune import add_locomo

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """fit what the gated arm searches and keeps (depth, conversation re-scoring, keep budget) on
    LoCoMo's dev split

    Run LoCoMo dev questions through the embedded policy at several search depths, then choose the
    conversation re-scoring weights by evidence recall at --max-records records and the adaptive keep
    budget (the fewest records for that recall); prints the fit beside what ships.
    """
    from ..tuning.locomo_rank import DEPTH_GRID

    add_locomo(parser)
    parser.add_argument(
        "--depths",
        default=",".join(str(d) for d in DEPTH_GRID),
        metavar="N,N,...",
        help="search depths (records per namespace) to try (default %(default)s)",
    )
    parser.add_argument(
        "--max-records", type=int, default=5, help="most records kept per question (default %(default)s)"
    )
    parser.add_argument(
        "--recall-tolerance",
        type=float,
        default=0.0,
        help="evidence recall the budget may give up for fewer records (default %(default)s)",
    )
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from ..datasets.locomo import SPLITS
    from ..policy.budget import ADAPTIVE_BUDGET, GATED_TOP_K
    from ..policy.conversation import CONVERSATION_WEIGHTS
    from ..tuning.locomo_rank import fit_depths, judge_split

    if args.split != "dev":
        raise UsageError(f"--split {args.split}: what the gated arm keeps is fitted on dev only")
    try:
        depths = sorted({int(d) for d in args.depths.split(",") if d.strip()})
    except ValueError:
        raise UsageError(
            f"--depths {args.depths!r}: expected numbers separated by commas, e.g. 10,30"
        ) from None
    if not depths or depths[0] < 1:
        raise UsageError(f"--depths {args.depths!r}: every depth must be at least 1")
    if args.max_records < 1:
        raise UsageError("--max-records must be at least 1")
    if args.recall_tolerance < 0:
        raise UsageError("--recall-tolerance must be >= 0")
    with progress_bar(
        args, len(SPLITS[args.split]) * len(depths), unit="conversation x depth", desc="asking"
    ) as bar:
        judged, thresholds = judge_split(args.locomo, args.split, depths=depths, progress=bar.update)
    result = fit_depths(judged, thresholds=thresholds, cap=args.max_records, tolerance=args.recall_tolerance)
    result["shipped"] = {
        "gated_top_k": GATED_TOP_K["embedded"],
        "centre_log_odds": CONVERSATION_WEIGHTS.centre,
        "session": CONVERSATION_WEIGHTS.session,
        "budget": {
            "delta": ADAPTIVE_BUDGET.delta,
            "min_records": ADAPTIVE_BUDGET.min_records,
            "max_records": ADAPTIVE_BUDGET.max_records,
        },
    }
    return report(args, result, functools.partial(_print_text, args=args, thresholds=thresholds))


def _print_text(result: dict[str, Any], args: argparse.Namespace, thresholds: Any) -> None:
    """The fit as text: the figures at each depth, what was chosen and what ships."""
    chosen = result["chosen"]
    print(
        f"tune keep: LoCoMo {args.split}, {chosen['questions']} questions, at most {args.max_records} "
        f"records per question (judge thresholds {thresholds.absolute:g} / {thresholds.relative})"
    )
    rows = [
        (
            depth,
            f"{f['judge_alone_at_cap']:.4f}",
            f"{f['rescored_at_cap']:.4f}",
            f"{f['with_budget']:.4f}",
            f"{f['records_per_question']:.3f}",
            "-" if f["held_out_by_conversation"] is None else f"{f['held_out_by_conversation']:.4f}",
        )
        for depth, f in result["by_depth"].items()
    ]
    print(
        table(
            rows,
            ["depth", "judge alone", "re-scored", "+ budget", "records / q", "held out by conversation"],
        )
    )
    b = chosen["budget"]
    print(
        f"\nchosen: gated_top_k {result['gated_top_k']}, centre {chosen['centre_cosine']:g} "
        f"(x judge scale = {chosen['centre_log_odds']:g} log-odds), session {chosen['session']:g}, "
        f"budget delta {b['delta']:g}, {b['min_records']}-{b['max_records']} records"
    )
    ship = result["shipped"]
    sb = ship["budget"]
    print(
        f"shipped: gated_top_k {ship['gated_top_k']}, centre {ship['centre_log_odds']:g} log-odds, "
        f"session {ship['session']:g}, budget delta {sb['delta']:g}, "
        f"{sb['min_records']}-{sb['max_records']} records"
    )
