"""``recallwise bench mcp``: tokens the MCP ``recall`` tool returns per demo turn vs a plain top-10."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..errors import UsageError
from ..extras import require_extra
from . import report
from .common import add_json, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """tokens the MCP recall tool returns per demo turn, against a plain top-10 search

    Run the demo persona's eight turns through the MCP server's tools (a real MCP client, in memory):
    tokens of each result the client receives and records returned, for `recall` (gated, judged, budgeted)
    and `search_memories` with limit 10 (a plain top-10).
    """
    parser.add_argument(
        "--store",
        default="sqlite:///:memory:",
        metavar="URL",
        help="store to seed with the persona and read (default: an in-memory SQLite store)",
    )
    parser.add_argument("--mcp-token-budget", type=int, default=None, metavar="N", help="default 400")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    require_extra("mcp", "recallwise bench mcp")
    from ..bench.mcp import bench_mcp
    from ..stores import open_store

    if args.mcp_token_budget is not None and args.mcp_token_budget < 1:
        raise UsageError(f"--mcp-token-budget {args.mcp_token_budget}: at least 1")
    store = open_store(args.store)
    result = bench_mcp(store, token_budget=args.mcp_token_budget)
    return report(args, result, _print_text)


def _print_text(result: dict[str, Any]) -> None:
    """The result as text: tokens and records per turn, recall beside a plain top-10."""
    rows = [
        [r["turn"], r["recall_tokens"], r["recall_records"], r["top10_tokens"], r["top10_records"]]
        for r in result["turns"]
    ]
    t = result["total"]
    rows.append(["total", t["recall_tokens"], t["recall_records"], t["top10_tokens"], t["top10_records"]])
    sys.stdout.write(
        table(rows, ["turn", "recall tokens", "recall records", "top-10 tokens", "top-10 records"]) + "\n"
    )
    sys.stdout.write(f"tokens: {result['tokenizer']} over {result['counted']}\n")
