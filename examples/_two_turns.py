"""What the framework examples (``examples/*_gated.py``) share: their command line and how they
print the two turns ("Hello!" and "What should I have for dinner?") they ran through the
framework's own agent or memory object.

The contract the project checks from outside: ``python examples/FRAMEWORK_gated.py --store URL
--actor ID --json`` prints one JSON object, ``{"framework", "version", "stock", "turns":
[{"message", "records", "searches"}, ...]}``; without ``--json``, the same for a person.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

TURNS = ["Hello!", "What should I have for dinner?"]


def arguments(doc: str, stock_help: str, *, flag: tuple[str, str] | None = None) -> argparse.Namespace:
    """``--store`` (required), ``--actor``, ``--stock`` (``stock_help``), ``--json`` and the example's
    own ``flag`` (name, help), if any."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(
        "--store", required=True, help="a recallwise store URL (seed it with `recallwise demo`)"
    )
    parser.add_argument("--actor", default="demo_user", help="whose memory (default %(default)s)")
    parser.add_argument("--stock", action="store_true", help=stock_help)
    if flag is not None:
        parser.add_argument(flag[0], action="store_true", help=flag[1])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    return parser.parse_args()


def report(result: dict[str, Any], *, as_json: bool, out: TextIO | None = None) -> None:
    """Print an example's result: the JSON object, or each turn's searches and records."""
    out = out or sys.stdout
    if as_json:
        out.write(json.dumps(result, indent=2) + "\n")
    else:
        arm = "stock" if result["stock"] else "gated"
        print(f"== {result['framework']} {result['version']} ({arm})", file=out)
        for turn in result["turns"]:
            searches, received = turn["searches"], len(turn["records"])
            print(f"user: {turn['message']}\n  searches {searches}, model received {received}", file=out)
            for text in turn["records"]:
                print(f"    - {text}", file=out)
    out.flush()
