"""``recallwise tune named-gate``: fit the store-aware gate on LoCoMo's dev split."""

from __future__ import annotations

import argparse
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from ..policy.config import read_config, write_config
from . import progress_bar, report
from .common import decider_from_args, embedder_from_args, table
from .tune import add_decider_flags, add_locomo, add_write_config

if TYPE_CHECKING:
    from ..tuning.named_gate import NamedGateFit

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """fit the store-aware gate on LoCoMo's dev split

    Fit how far below its threshold the gate may open when the message names something the actor's
    memory mentions: LoCoMo dev questions against their conversations' stores, non-memory messages
    against every store; chosen by balanced accuracy.
    """
    add_locomo(parser)
    parser.add_argument(
        "--negatives",
        metavar="FILE.jsonl",
        help="gate labels whose false rows are the non-memory messages (default: the shipped bank)",
    )
    add_decider_flags(parser, "the embedded decider (and the LoCoMo stores)")
    add_write_config(parser, "the fitted threshold")


def run(args: argparse.Namespace) -> int:
    from ..datasets.locomo import SPLITS
    from ..tuning.named_gate import fit_named_gate, load_negatives

    if args.split != "dev":
        raise UsageError(f"--split {args.split}: the store-aware gate is fitted on dev only")
    if args.write_config:
        if Path(args.write_config).is_dir():
            raise UsageError(f"--write-config {args.write_config}: is a directory, expected a file path")
        if Path(args.write_config).exists():
            read_config(args.write_config)
    load_negatives(args.negatives)  # a bad file stops us before the models load
    decider = decider_from_args(args)
    if decider is None:
        raise UsageError("tuning needs a decider; 'none' is the ungated stock behaviour")
    with progress_bar(args, len(SPLITS[args.split]), unit="conversation", desc="asking") as bar:
        fit = fit_named_gate(
            args.locomo,
            decider,
            split=args.split,
            negatives_path=args.negatives,
            embedder=embedder_from_args(args),
            progress=bar.update,
        )
    notes = []
    if args.write_config:
        data = f"LoCoMo {args.split} + {fit.negatives_source}"
        write_config(args.write_config, fit.backend, {"gate_named": fit.fitted(data)})
        notes.append(f"config: {args.write_config} ({fit.backend}: gate_named = {fit.named_threshold:g})")
    return report(args, fit, functools.partial(_print_text, notes=notes), notes)


def _print_text(fit: NamedGateFit, notes: list[str]) -> None:
    """The fit as text: open and closed rates with and without the names in memory, then ``notes``."""
    print(
        f"tune named-gate: {fit.backend} on LoCoMo {fit.split} ({fit.positives} questions) and "
        f"{fit.negatives_source} ({fit.negatives} non-memory message x store pairs)"
    )
    print(
        table(
            [
                ("opens on memory questions", fit.open_rate["message_only"], fit.open_rate["with_store"]),
                (
                    "closes on non-memory messages",
                    fit.non_memory_closed_rate["message_only"],
                    fit.non_memory_closed_rate["with_store"],
                ),
                (
                    "balanced accuracy",
                    fit.balanced_accuracy["message_only"],
                    fit.balanced_accuracy["with_store"],
                ),
            ],
            [
                "",
                f"message only (t {fit.gate_threshold:g})",
                f"+ names in memory (t {fit.named_threshold:g})",
            ],
        )
    )
    print(
        f"name-like words found in memory: {fit.positives_named:.1%} of questions, "
        f"{fit.negatives_named:.1%} of non-memory pairs"
    )
    for note in notes:
        print(note)
