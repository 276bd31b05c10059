"""``recallwise mcp``: the MCP server over stdio, for one actor (Claude Desktop, Claude Code, Cursor)."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..extras import require_extra
from ..ranges import OptionRange, flag_type
from ..stores.urls import redact_url
from .common import add_create, add_decider, add_embedder, add_store, new_store_note, service_settings

_COUNT = OptionRange(int, 1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """serve gated recall as an MCP server over stdio (Claude Desktop, Claude Code, Cursor)

    Serve recall, remember, search_memories, forget and list_memories as MCP tools over stdio, for the one
    actor --actor names (the model never chooses whose memory it reads). The same server is mounted at
    /mcp on `recallwise serve`.
    """
    add_store(parser)
    add_create(parser)
    parser.add_argument("--actor", required=True, metavar="ID", help="whose memory the tools read and write")
    add_decider(parser)
    add_embedder(parser)
    parser.add_argument(
        "--mcp-token-budget",
        type=flag_type(_COUNT, "--mcp-token-budget"),
        default=None,
        metavar="N",
        help="most context tokens one recall returns (default 400)",
    )
    parser.add_argument(
        "--max-message-chars",
        type=flag_type(_COUNT, "--max-message-chars"),
        default=16_000,
        help="default %(default)s",
    )


def run(args: argparse.Namespace) -> int:
    require_extra("mcp", "recallwise mcp")
    from ..records import validate_id
    from ..serve.mcp import DEFAULT_TOKEN_BUDGET, build_mcp_server
    from ..serve.runner import build_service

    budget = DEFAULT_TOKEN_BUDGET if args.mcp_token_budget is None else args.mcp_token_budget
    if budget < 1:
        raise UsageError(f"--mcp-token-budget {budget}: at least 1")
    if args.max_message_chars < 1:
        raise UsageError(f"--max-message-chars {args.max_message_chars}: at least 1")
    try:
        actor = validate_id(args.actor, "--actor")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    settings = service_settings(
        args, limits={"max_message_chars": args.max_message_chars}, batch_embeddings=False
    )
    created = new_store_note("mcp", args.store, args.create)  # a typo of a store is refused here
    service = build_service(settings)
    if created is not None:
        sys.stderr.write(created + "\n")
    try:
        server = build_mcp_server(service, actor_id=actor, token_budget=budget)
        sys.stderr.write(f"recallwise mcp: stdio over {redact_url(args.store)} for actor {actor!r}\n")
        server.run("stdio")
    finally:
        service.close()
    return 0
