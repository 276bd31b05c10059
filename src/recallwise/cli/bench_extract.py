"""``recallwise bench extract``: fact recall and record quality of the write path on labelled conversations.

Every conversation in ``--data DIR`` (JSONL files, see :mod:`recallwise.bench.extract`) is
extracted into a fresh store and graded: labelled facts carried by a record, the stated
preference stored and carried by the gated recall of the conversation's question, records per
conversation, broken English, first-person leftovers, fragments, and the time to extract and
store (records embedded) a 10-message conversation.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..bench.extract import run_extract_bench
from ..extraction import EXTRACTORS, make_extractor
from . import emit_json, progress_enabled
from .common import add_embedder, add_json, embedder_from_args, table


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "extract",
        help="fact recall, record quality and speed of the write path on labelled conversations",
        description="Extract each labelled conversation in DIR into a fresh store and report fact "
        "recall, the stated preference stored and recalled for the conversation's question, records "
        "per conversation, broken English, first-person leftovers, fragments, and speed.",
    )
    parser.add_argument(
        "--data", required=True, metavar="DIR", help="a directory of conversation JSONL files"
    )
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
    parser.add_argument(
        "--limit", type=int, default=None, metavar="N", help="only the first N conversations (default all)"
    )
    add_embedder(parser, "the records and the questions")
    add_json(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    options = {"model": args.model, "base_url": args.base_url} if args.extractor != "rules" else {}
    extractor = make_extractor(args.extractor, **options)
    bar: Any = None
    if progress_enabled(args):
        from tqdm import tqdm

        bar = tqdm(desc="extract", unit="step", file=sys.stderr, leave=False)

    def progress(done: int, total: int) -> None:
        if bar is not None:
            bar.total = total
            bar.n = done
            bar.refresh()

    try:
        result = run_extract_bench(
            args.data,
            extractor=extractor,
            embedder=embedder_from_args(args),
            limit=args.limit,
            progress=progress,
        )
    finally:
        if bar is not None:
            bar.close()
    report = result.as_dict()
    if args.json:
        emit_json(report)
        return 0
    columns = (
        "conversations",
        "records_per_conversation",
        "fact_recall",
        "preference_stored",
        "gated_recall_carries_preference",
        "broken_english_rate",
        "first_person_rate",
        "fragment_rate",
    )
    rows = [["all", *(report[c] for c in columns)]]
    rows += [[name, *(part[c] for c in columns)] for name, part in report["by_source"].items()]
    header = [
        "source",
        "convs",
        "records/conv",
        "fact recall",
        "pref stored",
        "pref recalled",
        "broken",
        "1st person",
        "fragments",
    ]
    print(f"{result.extractor} on {result.data} (embedder {result.embedder})")
    print(table([[("-" if v is None else v) for v in row] for row in rows], header))
    speed = report["speed"]
    print(
        f"speed: {speed['messages']}-message conversation extracted and stored, p50 {speed['p50_ms']} ms, "
        f"p95 {speed['p95_ms']} ms, the extractor alone p50 {speed['extract_p50_ms']} ms "
        f"({speed['conversations_timed']} conversations)"
    )
    if result.errors:
        print(f"{len(result.errors)} extraction error(s); first: {result.errors[0]}")
    return 0
