"""``recallwise tune follow-up``: compare wordings of the follow-up question."""

from __future__ import annotations

import argparse

from .tune import add_labels
from .tune import run_labelled as run

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """compare follow-up wordings on labelled messages and fit the follow-up threshold

    Ask every candidate wording of the follow-up question (does this message carry on the previous
    request: 'continue', 'what about tomorrow?') about every labelled message, one decider call per
    message, and report separation, ranking and calibration per wording.
    """
    add_labels(
        parser,
        "follow_up",
        "true = carries on the previous request; builtin:dev and builtin:heldout are shipped sets",
    )
