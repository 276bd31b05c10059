"""``recallwise bench extract``: fact recall and record quality of the write path on labelled conversations.

Every conversation in ``--data DIR`` (JSONL files, see :mod:`recallwise.bench.extract`) is
extracted into a fresh store and graded: labelled facts carried by a record, the stated
preference stored and carried by the gated recall of the conversation's question, records per
conversation, broken English, first-person leftovers, fragments, and the time to extract and
store (records embedded) a 10-message conversation, and to ingest 200 conversations of 5-10 messages.
"""

from __future__ import annotations

import argparse

from ..bench.extract import ExtractBenchResult, run_extract_bench
from . import progress_bar, report
from .common import add_embedder, add_extractor, add_json, embedder_from_args, extractor_from_args, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """fact recall, record quality and speed of the write path on labelled conversations

    Extract each labelled conversation in DIR into a fresh store and report fact recall, the stated
    preference stored and recalled for the conversation's question, records per conversation, broken
    English, first-person leftovers, fragments, request words kept, wrong topic labels, and speed.
    """
    parser.add_argument(
        "--data", required=True, metavar="DIR", help="a directory of conversation JSONL files"
    )
    add_extractor(parser)
    parser.add_argument(
        "--limit", type=int, default=None, metavar="N", help="only the first N conversations (default all)"
    )
    parser.add_argument(
        "--ingest",
        type=int,
        default=200,
        metavar="N",
        help="conversations the ingest figure writes into one SQLite file (default 200; 0: none)",
    )
    add_embedder(parser, "the records and the questions")
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    extractor = extractor_from_args(args)
    with progress_bar(args, desc="extract", unit="step") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        result = run_extract_bench(
            args.data,
            extractor=extractor,
            embedder=embedder_from_args(args),
            limit=args.limit,
            ingest_conversations=args.ingest,
            progress=progress,
        )
    return report(args, result, _print_text)


def _print_text(result: ExtractBenchResult) -> None:
    """The figures as text: a table by source, the speed, the errors."""
    figures = result.as_dict()
    columns = (
        "conversations",
        "records_per_conversation",
        "fact_recall",
        "preference_stored",
        "gated_recall_carries_preference",
        "gated_records_per_question",
        "broken_english_rate",
        "first_person_rate",
        "fragment_rate",
        "request_words",
        "topic_wrong_rate",
    )
    rows = [["all", *(figures[c] for c in columns)]]
    rows += [[name, *(part[c] for c in columns)] for name, part in figures["by_source"].items()]
    header = [
        "source",
        "convs",
        "records/conv",
        "fact recall",
        "pref stored",
        "pref recalled",
        "records/question",
        "broken",
        "1st person",
        "fragments",
        "request words",
        "wrong topic",
    ]
    print(f"{result.extractor} on {result.data} (embedder {result.embedder})")
    print(table([[("-" if v is None else v) for v in row] for row in rows], header))
    speed = figures["speed"]
    print(
        f"speed: {speed['messages']}-message conversation extracted and stored, p50 {speed['p50_ms']} ms, "
        f"p95 {speed['p95_ms']} ms, the extractor alone p50 {speed['extract_p50_ms']} ms "
        f"({speed['conversations_timed']} conversations)"
    )
    ingest = speed["ingest"]
    print(
        f"ingest: {ingest['conversations']} conversations ({ingest['messages']} messages), events and "
        f"records into one SQLite file, {ingest['seconds']} s ({ingest['cpu_seconds']} CPU s)"
    )
    if result.errors:
        print(f"{len(result.errors)} extraction error(s); first: {result.errors[0]}")
