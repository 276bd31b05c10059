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

#: The demo's own store: ``recallwise demo`` alone writes it by default. Every other command that
#: opens a store needs ``--store`` (or ``RECALLWISE_STORE``): a user's conversations must never land in
#: the demo store because a flag was left out.
DEMO_STORE = "sqlite:///recallwise-demo.db"
STORE_ENV = "RECALLWISE_STORE"


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print exactly one JSON object on stdout")


def add_store(parser: argparse.ArgumentParser, *, demo: bool = False) -> None:
    """``--store URL``: required unless ``RECALLWISE_STORE`` names one; ``demo=True`` (the demo
    command alone) defaults to the demo store."""
    env = os.environ.get(STORE_ENV, "").strip() or None
    default = env or (DEMO_STORE if demo else None)
    if env is not None:
        given = f"default: ${STORE_ENV}"
    elif demo:
        given = f"default {DEMO_STORE}, the demo's own store"
    else:
        given = f"no default: required, or set {STORE_ENV}"
    # Not argparse's required=: its error would come before the one naming a mistyped flag
    # (``serve --stor URL`` must say "unrecognized arguments: --stor"); main() asks for it instead.
    parser.add_argument(
        "--store",
        default=default,
        metavar="URL",
        # never the URL RECALLWISE_STORE holds: it may carry a password
        help=f"store URL: sqlite:///path.db, postgresql://..., agentcore://ID?region=... ({given})",
    )
    parser.set_defaults(store_required=True)


def add_create(parser: argparse.ArgumentParser) -> None:
    """``--create``: a server may make a new, empty SQLite store where none is (:func:`new_store_note`)."""
    parser.add_argument(
        "--create",
        action="store_true",
        help="make a new, empty store when a sqlite:/// --store file does not exist, even when another "
        "store beside it has a name that close (default: a missing file is created and said so, unless "
        "its name is a near miss of a store beside it: a typo, refused)",
    )


def missing_sqlite_file(url: str) -> str | None:
    """The path of the SQLite file ``url`` names when that file does not exist (None: it exists, it is
    in memory, or ``url`` is not a SQLite URL)."""
    if not isinstance(url, str) or not url.lower().startswith("sqlite:///"):
        return None
    path = url[len("sqlite:///") :].partition("?")[0]
    if not path or path == ":memory:" or os.path.lexists(path):
        return None
    return path


#: how alike a missing store's file name and one beside it must be to be taken for a typo of it
#: (difflib's ratio: "memroy.db" and "memory.db" 0.89; "s2.db" and "s1.db" 0.80, two stores)
NEAR_MISS = 0.85


def _stores_beside(path: str) -> list[str]:
    """The SQLite databases (by their header) in the folder of ``path``, by name."""
    folder = os.path.dirname(path) or "."
    found: list[str] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found
    for name in names:
        try:
            with open(os.path.join(folder, name), "rb") as handle:
                if handle.read(16) == b"SQLite format 3\x00":
                    found.append(name)
        except OSError:
            continue
    return found


def new_store_note(command: str, url: str, create: bool) -> str | None:
    """The line a server (``serve``, ``mcp``) writes once it has made a new, empty SQLite store, or
    None when the store ``url`` names exists (or is not a SQLite file).

    A missing file is a new store, and the server says so. A name that is a near miss of a store
    beside it (``memroy.db`` next to ``memory.db``) is taken for a typo and refused, a
    :class:`UsageError` naming both, unless ``create`` (``--create``) says it is meant: serving an
    empty store in place of the user's would look like a memory that forgot everything.
    """
    import difflib

    path = missing_sqlite_file(url)
    if path is None:
        return None
    name = os.path.basename(path)
    near = difflib.get_close_matches(name, _stores_beside(path), n=1, cutoff=NEAR_MISS)
    if near and not create:
        raise UsageError(
            f"no store at {path!r}, but there is {near[0]!r} beside it: a typo? Nothing was created; "
            "give --create to make a new, empty store there"
        )
    return f"recallwise {command}: there was no store at {path!r}: created a new, empty one"


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
