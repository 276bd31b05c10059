"""``recallwise log``: the latest turns of a decision log, as the policy decided them, or
(``--labels``) its labelled turns, as ``recallwise tune gate --fit`` and the judge's fit read them."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..errors import UsageError
from ..policy.log import DecisionLog, TurnFilter, is_log_url
from ..ranges import OptionRange, flag_type
from ..stores.urls import redact_url
from . import emit_json
from .common import add_json, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """show the latest decisions from a decision log

    Show the latest turns a policy wrote to its decision log (RecallPolicy(log=PATH) or
    RECALLWISE_LOG=PATH): the gate's answer, what was kept and dropped, the errors.
    """
    parser.add_argument(
        "path",
        metavar="LOG",
        help="the decision log: a SQLite file, or the postgresql:// URL serve --log names",
    )
    parser.add_argument(
        "--last",
        type=flag_type(OptionRange(int, 1, what="turns"), "--last"),
        default=20,
        help="how many turns (default %(default)s)",
    )
    parser.add_argument("--actor", help="only this actor's turns (default: every actor)")
    parser.add_argument("--session", help="only this session's turns (default: every session)")
    parser.add_argument(
        "--labels",
        action="store_true",
        help="print the labelled turns (labels given on `recallwise serve`'s /ui page or POST /v1/labels) "
        "as JSON lines, the format `recallwise tune gate --fit` reads; with --json one object "
        '{"labels": [...]} (--last does not apply)',
    )
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    shown = redact_url(args.path)
    if not is_log_url(args.path) and not Path(args.path).is_file():
        raise UsageError(f"no decision log at {shown!r}")
    with DecisionLog(args.path) as log:
        if args.labels:
            labelled = log.labelled_turns(TurnFilter(actor_id=args.actor, session_id=args.session))
            return _print_labels(args, [t.labelled() for t in labelled])
        turns = log.turns(last=args.last, actor_id=args.actor, session_id=args.session)
    if args.json:
        emit_json({"log": shown, "turns": [t.as_dict() for t in turns]})
        return 0
    if not turns:
        print(f"no turns in {shown}{_filters(args)}")
        return 0
    rows = []
    for t in turns:
        gate = "-" if t.gate_p is None else f"{t.gate_p:.2f} {'open' if t.gate_open else 'closed'}"
        if t.gate_p is None and t.gate_open:
            gate = "open (no answer)"
        message = "(not logged)" if t.message is None else t.message
        message = message if len(message) <= 48 else message[:47] + "…"
        rows.append(
            (t.at[:19].replace("T", " "), t.actor_id, message, t.decider, gate, t.kept, t.dropped, t.errors)
        )
    print(table(rows, ["at (UTC)", "actor", "message", "decider", "gate", "kept", "dropped", "errors"]))
    return 0


def _filters(args: argparse.Namespace) -> str:
    """The filters a listing used, in words (`` for actor 'nobody'``), so an empty listing says which."""
    given = [(what, value) for what, value in (("actor", args.actor), ("session", args.session)) if value]
    return (" for " + " and ".join(f"{what} {value!r}" for what, value in given)) if given else ""


def _print_labels(args: argparse.Namespace, labels: list[dict]) -> int:
    if args.json:
        emit_json({"labels": labels})
    else:
        if not labels:
            sys.stderr.write(f"no labelled turns{_filters(args)}\n")
        for labelled in labels:
            sys.stdout.write(json.dumps(labelled, ensure_ascii=False) + "\n")
    return 0
