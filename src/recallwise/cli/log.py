"""``recallwise log``: the latest turns of a decision log, as the policy decided them."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..errors import UsageError
from ..policy.log import LOG_ENV, DecisionLog
from . import emit_json
from .common import add_json, table


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "log",
        help="show the latest decisions from a decision log",
        description="Show the latest turns a policy wrote to its decision log "
        f"(RecallPolicy(log=PATH) or {LOG_ENV}=PATH): the gate's answer, what was kept and "
        "dropped, the errors.",
    )
    parser.add_argument("path", metavar="LOG.db", help="the decision log file")
    parser.add_argument("--last", type=int, default=20, help="how many turns (default %(default)s)")
    parser.add_argument("--actor", help="only this actor's turns (default: every actor)")
    parser.add_argument("--session", help="only this session's turns (default: every session)")
    add_json(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.last < 1:
        raise UsageError("--last must be at least 1")
    if not Path(args.path).is_file():
        raise UsageError(f"no decision log at {args.path!r}")
    with DecisionLog(args.path) as log:
        turns = log.turns(last=args.last, actor_id=args.actor, session_id=args.session)
    if args.json:
        emit_json({"log": args.path, "turns": [t.as_dict() for t in turns]})
        return 0
    if not turns:
        print(f"no turns in {args.path}")
        return 0
    rows = []
    for t in turns:
        gate = "-" if t.gate_p is None else f"{t.gate_p:.2f} {'open' if t.gate_open else 'closed'}"
        if t.gate_p is None and t.gate_open:
            gate = "open (no answer)"
        message = t.message if len(t.message) <= 48 else t.message[:47] + "…"
        rows.append(
            (t.at[:19].replace("T", " "), t.actor_id, message, t.decider, gate, t.kept, t.dropped, t.errors)
        )
    print(table(rows, ["at (UTC)", "actor", "message", "decider", "gate", "kept", "dropped", "errors"]))
    return 0
