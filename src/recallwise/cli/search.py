"""``recallwise search``: every record of an actor with its score, best first, and the spread.

The view that shows why a fixed score floor cannot separate relevant from irrelevant records.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import UsageError
from ..records import DEFAULT_NAMESPACES, resolve_namespace, validate_id
from ..stores.base import SearchRequest
from . import report
from .common import add_embedder, add_json, add_store, existing_store_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """score every record of an actor against a query

    Score every record of an actor against QUERY, best first.
    """
    parser.add_argument("query", help="the text to search for")
    add_store(parser)
    add_embedder(parser)
    parser.add_argument("--actor", default="demo_user", help="actor id (default %(default)s)")
    parser.add_argument(
        "--namespace",
        action="append",
        dest="namespaces",
        metavar="TEMPLATE",
        help=f"namespace template, repeatable (default: {', '.join(DEFAULT_NAMESPACES)})",
    )
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise UsageError(
            'empty query: give the text to search for, e.g. recallwise search "drink preference"'
        )
    validate_id(args.actor, "actor_id")  # bad input fails before the store is even looked for
    # Read-only: a mistyped --store is an error naming the path, never a new empty store.
    store = existing_store_from_args(args)
    try:
        return _search(args, store)
    finally:
        store.close()


def _search(args: argparse.Namespace, store: Any) -> int:
    templates = args.namespaces or DEFAULT_NAMESPACES
    vector = store.embedder.embed([args.query])[0]
    rows: list[dict[str, Any]] = []
    for template in templates:
        namespace = resolve_namespace(template, actor_id=args.actor)
        count = len(store.list_records(namespace, actor_id=args.actor))
        for hit in store.search(
            SearchRequest(namespace, vector, max(count, 1), actor_id=args.actor, text=args.query)
        ):
            rows.append(
                {
                    "id": hit.record.id,
                    "namespace": namespace,
                    "score": round(hit.score, 4),
                    "text": hit.record.rendered,
                }
            )
    rows.sort(key=lambda r: -float(r["score"]))
    scores = [float(r["score"]) for r in rows]
    spread = {"min": min(scores) if scores else None, "max": max(scores) if scores else None}
    result = {"query": args.query, "actor_id": args.actor, "store": store.url}
    result |= {"records": rows, "spread": spread}
    return report(args, result, _print_text)


def _print_text(result: dict[str, Any]) -> None:
    """The records as text, best first, with the band their scores span."""
    rows, spread = result["records"], result["spread"]
    if not rows:
        print(
            f"no records for actor {result['actor_id']!r} in {result['store']} "
            "(run `recallwise demo` to seed the demo persona)"
        )
        return
    for r in rows:
        print(f"{r['score']:.3f}  {r['namespace']:<28} {r['text']}")
    print(
        f"\n{len(rows)} records; scores span {spread['min']:.3f} .. {spread['max']:.3f}: "
        "relevant and irrelevant records share that band, so no fixed floor separates them."
    )
