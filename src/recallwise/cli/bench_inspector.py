"""``recallwise bench inspector``: the decision inspector's list on a log of 100,000 turns."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..extras import require_extra
from . import progress_bar, report
from .common import add_json, flag_values, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """how fast GET /v1/decisions (the /ui page's list) answers on a big decision log

    Write a decision log of --turns turns (real turns of the default policy over the demo persona, spread
    over two tenants' actors and sessions), serve it with recallwise serve --log, and time GET
    /v1/decisions over HTTP for each filter the inspector page offers (target: <= 300 ms a page at 100,000
    turns).
    """
    parser.add_argument("--turns", type=int, default=100_000, help="turns in the log (default 100000)")
    parser.add_argument("--repeats", type=int, default=20, help="timed requests per filter (default 20)")
    parser.add_argument(
        "--refit-labels",
        type=int,
        default=0,
        metavar="N",
        help="also time the refit preview (GET /v1/refit-preview/gate and /judge) on N labelled turns "
        "of one actor, added to the log (synthetic labels over the demo persona; default 0: not timed)",
    )
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    if args.turns < 1000 or args.repeats < 1:
        raise UsageError("--turns must be at least 1000 and --repeats at least 1")
    if args.refit_labels and args.refit_labels < 40:
        raise UsageError(
            f"--refit-labels {args.refit_labels}: at least 40 (a gate head needs 20 labelled turns, half "
            "of them general questions without records)"
        )
    require_extra("serve", "recallwise bench inspector")  # the server it starts needs the service's packages
    from ..bench.inspector import bench_inspector

    with progress_bar(args, args.turns, desc="writing the log", unit="turn") as bar:
        result = bench_inspector(**flag_values(args, "turns", "repeats", "refit_labels"), progress=bar.update)
    return report(args, result, _print_text)


def _print_text(result: dict[str, Any]) -> None:
    """The result as text: a table of the filters, the verdict, the refit preview."""
    print(
        f"{result['turns']} logged turns ({result['log_mb']} MB, written at {result['fill_turns_per_s']:.0f} "
        f"turns/s); GET /v1/decisions?limit=50 over HTTP, {result['repeats']} requests per filter:\n"
    )
    rows = [(name, q["p50_ms"], q["max_ms"], q["returned"]) for name, q in result["queries"].items()]
    print(table(rows, ["filter", "p50 (ms)", "max (ms)", "turns returned"]))
    verdict = "met" if result["met"] else f"MISSED by {result['worst_p50_ms'] - result['target_ms']:.1f} ms"
    print(
        f"\nslowest filter p50 {result['worst_p50_ms']} ms against <= {result['target_ms']:.0f} ms: {verdict}"
    )
    if result["refit"]:
        print(f"\nrefit preview on {result['refit_labels']} labelled turns (GET /v1/refit-preview/HEAD):")
        refits = [
            (
                head,
                r["turns"],
                r["records"] or "–",
                ", ".join(map(str, r["request_s"])),
                ", ".join(map(str, r["fit_s"])),
            )
            for head, r in result["refit"].items()
        ]
        print(table(refits, ["head", "turns fitted", "records", "request (s)", "fit (s)"]))
