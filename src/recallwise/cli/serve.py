"""``recallwise serve``: the HTTP service (``recallwise keys new`` makes an API key for it)."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..extras import require_extra
from ..ranges import OptionRange, flag_type
from ..records import DEFAULT_NAMESPACES
from ..stores.urls import redact_url
from . import emit_json
from .common import (
    add_create,
    add_decider,
    add_embedder,
    add_json,
    add_store,
    flag_values,
    new_store_note,
    service_settings,
)

_PORT = OptionRange(int, 0, 65535, what="a TCP port")
_COUNT = OptionRange(int, 1)
_SECONDS = OptionRange(float, 0.0, what="seconds")

#: the flags that are the service's settings of the same name (its HTTP side, its /mcp mount), and its
#: limits
_SETTINGS = (
    "host",
    "port",
    "keys",
    "workers",
    "max_batch",
    "log",
    "log_content",
    "log_durable",
    "log_retention_days",
    "replica_name",
    "access_log",
)
_SETTINGS_MCP = ("mcp_token_budget", "mcp_actor")
_LIMITS = (
    "max_body_bytes",
    "max_message_chars",
    "max_extract_chars",
    "max_extract_memories",
    "body_timeout_s",
    "max_refit_labels",
    "refit_timeout_s",
    "refit_workers",
    "max_refits_per_tenant",
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """serve gated recall over HTTP (any agent, any language)

    Serve the gate, route and judge as a versioned JSON API (OpenAPI at /openapi.json): POST /v1/recall,
    the write path (/v1/events, /v1/records), /v1/search, /v1/systemone, /healthz, /readyz, /metrics, and
    the MCP server at /mcp (with the mcp extra). Without --keys it binds loopback only, for one local
    user.
    """
    add_store(parser)
    add_create(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default %(default)s)")
    parser.add_argument(
        "--port", type=flag_type(_PORT, "--port"), default=8080, help="TCP port (default %(default)s)"
    )
    parser.add_argument(
        "--keys",
        metavar="FILE",
        help="API keys file (hashed keys -> tenant and scopes); required off loopback "
        "(default none: loopback, one local user)",
    )
    parser.add_argument(
        "--workers",
        type=flag_type(_COUNT, "--workers"),
        default=1,
        help="worker processes, each a replica (default %(default)s)",
    )
    add_decider(parser)
    add_embedder(parser)
    parser.add_argument(
        "--namespace",
        action="append",
        metavar="TEMPLATE[=DESCRIPTION]",
        help="a namespace template searched by default (repeat; default every namespace the write path "
        f"writes: {', '.join(DEFAULT_NAMESPACES)})",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=flag_type(_COUNT, "--max-body-bytes"),
        default=1_000_000,
        help="default %(default)s",
    )
    parser.add_argument(
        "--max-message-chars",
        type=flag_type(_COUNT, "--max-message-chars"),
        default=16_000,
        help="most characters of one text: a message, a record, a query (default %(default)s)",
    )
    parser.add_argument(
        "--max-extract-chars",
        type=flag_type(_COUNT, "--max-extract-chars"),
        default=32_000,
        help="most characters one POST /v1/events extracts memories from, all its messages together "
        "(default %(default)s; past it: 413, nothing stored)",
    )
    parser.add_argument(
        "--max-extract-memories",
        type=flag_type(_COUNT, "--max-extract-memories"),
        default=200,
        help="most statements one POST /v1/events may extract, each embedded and consolidated "
        "(default %(default)s; past it: 413, nothing stored)",
    )
    parser.add_argument(
        "--body-timeout-s",
        type=flag_type(_SECONDS, "--body-timeout-s"),
        default=10.0,
        help="seconds a request's body may take to arrive (default %(default)s; past it: 408)",
    )
    parser.add_argument(
        "--max-refit-labels",
        type=flag_type(_COUNT, "--max-refit-labels"),
        default=2000,
        help="most labelled turns one refit preview reads (default %(default)s; past it: 413)",
    )
    parser.add_argument(
        "--refit-timeout-s",
        type=flag_type(_SECONDS, "--refit-timeout-s"),
        default=120.0,
        help="seconds one refit preview may run (default %(default)s; past it: stopped, 503)",
    )
    parser.add_argument(
        "--refit-workers",
        type=flag_type(_COUNT, "--refit-workers"),
        default=1,
        help="refit previews run at once per process, tenants taking turns (default %(default)s)",
    )
    parser.add_argument(
        "--max-refits-per-tenant",
        type=flag_type(_COUNT, "--max-refits-per-tenant"),
        default=2,
        help="refit previews of one tenant waiting or running at once (default %(default)s; past it: 429)",
    )
    parser.add_argument(
        "--max-batch",
        type=flag_type(_COUNT, "--max-batch"),
        default=16,
        help="most texts per embedding batch (default 16)",
    )
    parser.add_argument(
        "--no-batching", action="store_true", help="embed each turn on its own (default: batched)"
    )
    parser.add_argument(
        "--mcp-token-budget",
        type=flag_type(_COUNT, "--mcp-token-budget"),
        default=None,
        metavar="N",
        help="most context tokens one MCP recall at /mcp returns (default 400)",
    )
    parser.add_argument(
        "--mcp-actor",
        default="local",
        metavar="ID",
        help="whose memory /mcp reads without --keys (default %(default)s; with keys: the key's label)",
    )
    parser.add_argument(
        "--log",
        metavar="FILE|URL",
        help="decision log of every turn, shown at /ui and GET /v1/decisions: a SQLite file (this host's "
        "replicas), or a postgresql:// URL every replica shares (default none)",
    )
    parser.add_argument(
        "--log-content",
        action="store_true",
        help="the log keeps message and memory text (default: ids, numbers and decisions only)",
    )
    parser.add_argument(
        "--log-durable",
        action="store_true",
        help="answer a turn only once its log row is committed and synced (default: rows are written "
        "just after the answer; a killed process loses the last burst)",
    )
    parser.add_argument(
        "--log-retention-days",
        type=flag_type(OptionRange(float, 0.0, what="days"), "--log-retention-days"),
        default=None,
        metavar="DAYS",
        help="delete logged turns (and their labels) older than DAYS, at start and hourly (default: keep)",
    )
    parser.add_argument(
        "--replica-name",
        metavar="NAME",
        help="the name the decision log gives the turns this server answers (default: host name:port)",
    )
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="one line per request on stderr: client, method, path with query, status (never keys)",
    )
    add_json(parser)


def _namespaces(values: list[str] | None) -> dict[str, str] | None:
    if not values:
        return None
    out: dict[str, str] = {}
    for value in values:
        template, _, description = value.partition("=")
        if "{actorId}" not in template:
            raise UsageError(f"--namespace {value!r}: a template needs {{actorId}} (e.g. /facts/{{actorId}})")
        out[template] = description
    return out


def run(args: argparse.Namespace) -> int:
    require_extra("serve", "recallwise serve")
    from ..serve.runner import run as serve

    settings = service_settings(
        args,
        **flag_values(args, *_SETTINGS, *_SETTINGS_MCP),
        limits=flag_values(args, *_LIMITS),
        batch_embeddings=not args.no_batching,
    )
    namespaces = _namespaces(args.namespace)
    if namespaces is not None:
        settings.namespaces = namespaces
    settings.check()  # what cannot work is refused before a store is made
    created = new_store_note("serve", args.store, args.create)  # a typo of a store is refused here

    def ready(url: str, access: str) -> None:
        if created is not None:  # the store is made by now: say so
            sys.stderr.write(created + "\n")
        if args.json:
            emit_json(
                {
                    "url": url,
                    "store": redact_url(settings.store),
                    "access": access,
                    "workers": settings.workers,
                    "created": created is not None,
                }
            )

    serve(settings, on_ready=ready)
    return 0
