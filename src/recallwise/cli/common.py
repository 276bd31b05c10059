"""Flags and helpers several commands share."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..deciders import Decider, from_spec
from ..embeddings import Embedder, make_embedder
from ..errors import UsageError
from ..extraction import EXTRACTORS, Extractor, make_extractor
from ..stores import MemoryStore, open_store

if TYPE_CHECKING:
    from ..serve.runner import Settings

DEFAULT_STORE = "sqlite:///recallwise-demo.db"


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")


def add_store(parser: argparse.ArgumentParser, default: str | None = DEFAULT_STORE) -> None:
    parser.add_argument(
        "--store",
        default=os.environ.get("RECALLWISE_STORE", default),
        metavar="URL",
        # never %(default)s: the default may come from RECALLWISE_STORE, whose URL may hold a password
        help="store URL: sqlite:///path.db, postgresql://..., agentcore://ID?region=... (default: "
        f"$RECALLWISE_STORE when set, else {default or 'none'})",
    )


def add_decider(parser: argparse.ArgumentParser, default: str = "embedded") -> None:
    parser.add_argument(
        "--decider",
        default=os.environ.get("RECALLWISE_DECIDER", default),
        metavar="NAME",
        help="decision backend (default %(default)s)",
    )
    parser.add_argument(
        "--url",
        default=None,
        help="URL of an HTTP decision backend (systemone, llm, ...; default: the backend's own "
        "environment variable, e.g. RECALLWISE_SYSTEMONE_URL)",
    )


def add_embedder(parser: argparse.ArgumentParser, what: str = "the store's records and queries") -> None:
    parser.add_argument(
        "--embedder",
        default=os.environ.get("RECALLWISE_EMBEDDER"),
        metavar="NAME",
        help=f"embedding model for {what}: minilm-l6 (default), multilingual, onnx:/dir, "
        "sentence-transformers:/dir, or any registered name",
    )


def add_extractor(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--extractor",
        choices=EXTRACTORS,
        default="rules",
        help="rules (offline, default), openai (any OpenAI-compatible endpoint) or bedrock",
    )
    parser.add_argument(
        "--model",
        default=None,
        help="model name for the openai / bedrock extractors (default none: required there)",
    )
    parser.add_argument(
        "--base-url",
        default=None,
        help="endpoint of an OpenAI-compatible server (default: OPENAI_BASE_URL, else api.openai.com)",
    )


def flag_values(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The values of the flags ``names`` (as ``args`` holds them), for the keywords they are named
    after: a command passes its flags on by name, not one ``name=args.name`` line each."""
    return {name: getattr(args, name) for name in names}


def extractor_from_args(args: argparse.Namespace) -> Extractor:
    """The extractor ``--extractor`` names; ``--model`` and ``--base-url`` go to the model-backed ones."""
    options = {"model": args.model, "base_url": args.base_url} if args.extractor != "rules" else {}
    return make_extractor(args.extractor, **options)


def embedder_from_args(args: argparse.Namespace) -> Embedder | None:
    """The embedder ``--embedder`` names (None when not given)."""
    name = getattr(args, "embedder", None)
    return make_embedder(name) if name else None


def decider_from_args(args: argparse.Namespace) -> Decider | None:
    """The decider ``--decider`` and ``--url`` name (:func:`~recallwise.deciders.from_spec`;
    ``none`` is the stock, ungated behaviour).

    ``--embedder`` on a command without a store (``tune``) is the embedded decider's model.
    """
    options: dict[str, Any] = {}
    if getattr(args, "embedder_for_decider", False) and getattr(args, "embedder", None):
        if args.decider != "embedded":
            raise UsageError(
                f"--embedder picks the embedded decider's model; decider {args.decider!r} has none"
            )
        options["embedder"] = make_embedder(args.embedder)
    decider: Decider | None = from_spec(args.decider, getattr(args, "url", None), **options)
    return decider


def service_settings(args: argparse.Namespace, **settings: Any) -> Settings:
    """The settings of a service over the store ``--store``, the decider ``--decider`` and
    ``--url`` and the embedder ``--embedder`` name, with the rest of ``settings`` (``serve`` and
    ``mcp`` build their service from them; needs the ``serve`` extra)."""
    from ..serve.runner import Settings

    return Settings(
        store=args.store, decider=args.decider, decider_url=args.url, embedder=args.embedder, **settings
    )


def store_from_args(args: argparse.Namespace) -> MemoryStore:
    """The store ``--store`` names, created when it does not exist yet (commands that write)."""
    return open_store(args.store, embedder=embedder_from_args(args))


def existing_store_from_args(args: argparse.Namespace) -> MemoryStore:
    """The store ``--store`` names, for commands that only read: a store that does not exist is
    a usage error naming it, and nothing is created (a typo must not leave an empty store)."""
    return open_existing_store(args.store, embedder=embedder_from_args(args))


def open_existing_store(url: str, embedder: Embedder | None = None) -> MemoryStore:
    """Open a store that must already exist (see :func:`existing_store_from_args`).

    SQLite: the file must exist and hold a recallwise store. PostgreSQL: the schema must exist
    (nothing is created in the database). AgentCore: opening never creates a memory.
    """
    scheme = url.split("://", 1)[0].lower() if isinstance(url, str) and "://" in url else ""
    if scheme in ("sqlite", "postgres", "postgresql", "postgresql+psycopg"):
        return open_store(url, embedder=embedder, create=False)
    return open_store(url, embedder=embedder)


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """A plain aligned text table."""
    cells = [[str(h) for h in header]] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = []
    for n, row in enumerate(cells):
        lines.append(
            "  ".join(
                c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}"
    return str(value)
