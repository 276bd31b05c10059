"""``recallwise tune follow-up``: compare wordings of the follow-up question, or fit the follow-up
head on labelled conversations (``--fit``)."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from ..errors import UsageError
from ..policy.follow_up import write_follow_up_head
from ..tuning.follow_up import DEFAULT_L2, fit_follow_up_head
from . import progress_bar, report
from .common import embedder_from_args, table
from .tune import add_labels, run_labelled

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """compare follow-up wordings on labelled messages, or fit the follow-up head on conversations

    Without --fit: ask every candidate wording of the follow-up question (does this message carry on
    the previous request: 'continue', 'what about tomorrow?') about every labelled message, one
    decider call per message, and report separation, ranking and calibration per wording.

    With --fit DIR: fit the follow-up head (the embedded decider's, deciding on the pair: the previous
    message and the new one) on the labelled conversations of DIR, Platt-calibrate it and choose its
    threshold on --calibrate DIR, grade it on each --grade DIR, and write it with --write-head.
    """
    add_labels(
        parser,
        "follow_up",
        "true = carries on the previous request; builtin:dev and builtin:heldout are shipped sets",
    )
    parser.add_argument(
        "--fit",
        metavar="DIR",
        help="labelled conversations to fit the follow-up head on (*.jsonl, as bench decisions "
        "--conversations reads; default: none, and wordings are compared instead)",
    )
    parser.add_argument(
        "--calibrate",
        metavar="DIR",
        help="labelled conversations to calibrate the head and choose its threshold on "
        "(with --fit; required, no default)",
    )
    parser.add_argument(
        "--grade",
        action="append",
        default=[],
        metavar="DIR",
        help="labelled conversations to grade the head on (with --fit; repeat for more; default none)",
    )
    parser.add_argument(
        "--l2",
        type=float,
        default=DEFAULT_L2,
        help="L2 penalty of the head (with --fit; default %(default)g)",
    )
    parser.add_argument(
        "--write-head",
        metavar="PATH.npz",
        help="write the fitted head here (with --fit; default: not written)",
    )


def run(args: argparse.Namespace) -> int:
    if args.fit is None:
        if args.calibrate or args.grade or args.write_head:
            raise UsageError(
                "--calibrate, --grade and --write-head go with --fit (fitting the follow-up head)"
            )
        if not args.labels:
            raise UsageError(
                "tune follow-up needs --labels FILE (compare wordings) or --fit DIR (fit the head)"
            )
        return run_labelled(args)
    if args.labels:
        raise UsageError("--labels compares wordings; --fit fits the head: give one of them")
    if getattr(args, "write_config", None):
        raise UsageError(
            "--write-config does not name a follow-up head: load the head --write-head writes with "
            "RecallPolicy(store, follow_up_head=PATH) (its threshold travels in the head file)"
        )
    if not args.calibrate:
        raise UsageError("--fit needs --calibrate DIR: the head's calibration and threshold are chosen there")
    if args.l2 <= 0:
        raise UsageError(f"--l2 must be > 0, got {args.l2}")
    if getattr(args, "decider", "embedded") != "embedded":
        raise UsageError("the follow-up head is the embedded decider's: --fit needs --decider embedded")
    command = "recallwise tune follow-up " + " ".join(shlex.quote(a) for a in sys.argv[3:])
    with progress_bar(args, None, unit="message", desc="follow-up pairs") as bar:

        def step(name: str, n: int) -> None:
            bar.set_postfix_str(name)
            bar.update(n)

        fitted = fit_follow_up_head(
            args.fit,
            args.calibrate,
            args.grade,
            embedder=embedder_from_args(args),
            l2=args.l2,
            command=command,
            progress=step,
        )
    out: dict[str, Any] = dict(fitted.report)
    if args.write_head:
        out["head"] = str(write_follow_up_head(fitted.head, args.write_head))
    return report(args, out, _print)


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _print(out: dict[str, Any]) -> None:
    print(
        f"follow-up head: {out['embedder']}, L2 {out['l2']:g}, threshold {out['threshold']:.3f} "
        f"({out['chosen_on']})"
    )
    rows = []
    for name, figures in out["sets"].items():
        rows.append(
            (
                name,
                "all",
                *(_cell(figures[k]) for k in ("pairs", "follow_ups", "auc", "ece", "precision", "recall")),
            )
        )
        for source, s in figures["sources"].items():
            rows.append(
                (
                    "",
                    source,
                    *(_cell(s[k]) for k in ("pairs", "follow_ups", "auc", "ece", "precision", "recall")),
                )
            )
    print(table(rows, ["set", "source", "pairs", "follow-ups", "AUC", "ECE", "precision", "recall"]))
    if out.get("head"):
        print(f"wrote {out['head']}")
