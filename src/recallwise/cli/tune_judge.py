"""``recallwise tune judge``: fit a learned judge head."""

from __future__ import annotations

import argparse

from .common import add_embedder, add_json
from .tune import add_head_flags
from .tune import run_fit as run

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """fit a learned judge head on turns with labelled records (--fit / --from-log)

    Fit and calibrate the embedded decider's judge head on labelled turns (each turn's records searched
    as the policy searches them) and report the judge before and after it: separation, calibration, the
    right records kept and records kept per request. (`tune validator` compares judge wordings.)
    """
    parser.add_argument(
        "--labels",
        metavar="LABELS.jsonl",
        help="with --from-log: the labels of logged decisions (GET /v1/labels, `recallwise log --labels`; "
        "default: none)",
    )
    add_head_flags(parser, "judge")
    add_embedder(parser, "the embedded decider")
    add_json(parser)
    parser.set_defaults(role="judge")
