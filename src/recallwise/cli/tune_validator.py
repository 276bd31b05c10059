"""``recallwise tune validator``: compare judge wordings on queries with judged records."""

from __future__ import annotations

import argparse

from ..tuning import load_cases, tune_validator
from . import progress_bar
from .tune import add_wording_flags, finish, prepare

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """compare judge wordings on queries with relevant/irrelevant records

    Ask every candidate judge wording about every record of each query (one call per query) and report
    pooled separation and per-query ranking per wording.
    """
    parser.add_argument(
        "--cases",
        required=True,
        metavar="FILE.json|builtin:NAME",
        help='{"records": {key: text}, "cases": [{"query", "relevant": [keys], "irrelevant": [keys]}]}; '
        "builtin:seed, builtin:dev and builtin:heldout are shipped sets",
    )
    add_wording_flags(parser, "judge")


def run(args: argparse.Namespace) -> int:
    cases = load_cases(args.cases)
    candidates, default, decider = prepare(args)
    with progress_bar(args, len(cases.cases), unit="query", desc="asking") as bar:
        result = tune_validator(decider, cases, candidates, default=default, progress=bar.update)
    return finish(args, result, decider)
