"""``recallwise tune gate``: compare gate wordings, or fit a learned gate head."""

from __future__ import annotations

import argparse

from .tune import add_head_flags, add_labels
from .tune import run_labelled as run

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """compare gate wordings on labelled utterances and fit the gate threshold; or fit a learned gate
    head (--fit / --from-log)

    Ask every candidate gate wording about every labelled utterance (one decider call per utterance)
    and report separation, ranking and calibration per wording. With --fit or --from-log: fit and
    calibrate a learned gate head on labelled turns instead, and report the gate before and after it.
    """
    add_labels(
        parser,
        "gate",
        "true = answering needs a stored personal fact; builtin:seed and builtin:heldout are shipped "
        "sets; with --from-log, the labels of logged decisions",
    )
    add_head_flags(parser, "gate")
