"""``recallwise keys new``: an API key for ``recallwise serve``, its digest added to the keys file."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from . import report
from .common import add_json

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """make a key, add its digest to the keys file, print the key once

    Make a random API key for TENANT with SCOPES, add its SHA-256 to FILE (created when missing; the key
    itself is stored nowhere) and print the key once.
    """
    parser.add_argument(
        "--keys", required=True, metavar="FILE", help="the keys file (YAML, or JSON by suffix)"
    )
    parser.add_argument(
        "--tenant", required=True, help="the tenant the key acts for (letters, digits, _ or -)"
    )
    parser.add_argument(
        "--scopes",
        default="recall,write",
        help="comma-separated: recall, write, admin (forget users), operator (/metrics, every "
        "tenant's figures) (default %(default)s)",
    )
    parser.add_argument("--id", dest="label", help="a label for the key (default TENANT-N)")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    from ..serve.auth import add_key

    scopes = [s.strip() for s in args.scopes.split(",") if s.strip()]
    key = add_key(args.keys, tenant=args.tenant, scopes=scopes, label=args.label)
    result = {"key": key, "tenant": args.tenant, "scopes": scopes, "keys_file": args.keys}
    return report(args, result, _print_text)


def _print_text(result: dict[str, Any]) -> None:
    """The key alone on stdout (for a script to capture), what was done on stderr."""
    sys.stdout.write(result["key"] + "\n")
    sys.stderr.write(
        f"added a key for tenant {result['tenant']!r} ({', '.join(result['scopes'])}) to "
        f"{result['keys_file']}; it is shown only now: keep it secret\n"
    )
