"""``recallwise bench latency``: decision cost, turn latency of both arms, demo wall clock."""

from __future__ import annotations

import argparse
import functools
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..bench.latency import run_latency, serving_rss_mb
from ..errors import RecallwiseError, UsageError
from ..extras import require_extra
from ..policy.log import DecisionLog
from ..stores import open_store
from . import progress_bar, report
from .common import (
    add_decider,
    add_embedder,
    add_json,
    decider_from_args,
    embedder_from_args,
    flag_values,
    table,
)
from .demo import add_via, memory_manager_runner

KEYS = [
    ("embed p50 (ms)", "embed_p50_ms"),
    ("gate p50 (ms)", "gate_p50_ms"),
    ("judge of 20 p50 (ms)", "judge20_p50_ms"),
    ("records judged per gated turn (default depth)", "judged_per_turn"),
    ("judge of those p50 (ms)", "judge_per_turn_p50_ms"),
    (
        "decision overhead p50 (ms): the gate + route call, judge of those (a real turn)",
        "decision_overhead_p50_ms",
    ),
    (
        "decision overhead, records new to the decider p50 (ms): nothing of them cached",
        "decision_overhead_new_records_p50_ms",
    ),
    (
        "decision overhead, episodic options p50 (ms): + re-scoring",
        "decision_overhead_episodic_p50_ms",
    ),
    (
        "decision overhead, a conversation's later turn p50 (ms): + the follow-up question",
        "decision_overhead_follow_up_p50_ms",
    ),
    ("policy work of that turn p50 (ms): all but embed + search", "policy_work_gated_p50_ms"),
    ("policy work of a stock turn p50 (ms): all but embed + search", "policy_work_stock_p50_ms"),
    ("decision overhead with OpenTelemetry p50 (ms)", "decision_overhead_otel_p50_ms"),
    ("OpenTelemetry spans + metrics of a turn p50 (ms)", "otel_emit_p50_ms"),
    ("search p50 (ms)", "search_p50_ms"),
    ("turn stock p50 (ms)", "turn_stock_p50_ms"),
    ("turn gated p50 (ms)", "turn_gated_p50_ms"),
    ("decision log write of a gated turn p50 (ms), with --log", "log_p50_ms"),
    ("demo wall stock (ms)", "demo_wall_stock_ms"),
    ("demo wall gated (ms)", "demo_wall_gated_ms"),
    ("decisions / s (whole gated turns, embed + search taken out)", "decisions_per_s"),
    ("RSS serving the store (MB)", "rss_mb"),
    ("RSS of this bench process (MB)", "rss_mb_bench_process"),
    ("language guess p50 (ms)", "language_guess_p50_ms"),
]
#: shown when the decider embeds turns in other languages with a second model
MULTILINGUAL_KEYS = [
    ("2nd embedding, message p50 (ms)", "multilingual_embed_p50_ms"),
    ("2nd embedding, 20 new records p50 (ms)", "multilingual_embed20_p50_ms"),
    ("decision overhead, other language p50 (ms)", "multilingual_decision_overhead_p50_ms"),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """what a decision costs and whether a gated turn beats a stock one

    Time embedding, gate, judge, search and whole turns of both arms (medians over repeated runs after a
    warm-up), and the 8-turn demo's wall clock with a modelled remote store.
    """
    parser.add_argument(
        "--store",
        default=None,
        metavar="URL",
        help="store URL (default: a fresh SQLite file in a temporary directory)",
    )
    add_decider(parser)
    add_embedder(parser)
    parser.add_argument(
        "--records",
        type=int,
        default=10_000,
        help="synthetic records of other actors loaded into the store (default 10000)",
    )
    parser.add_argument(
        "--remote-store-ms",
        type=float,
        default=0.0,
        metavar="MS",
        help="delay added to every search, modelling a remote memory service, e.g. 530 (default 0)",
    )
    parser.add_argument(
        "--concurrency", type=int, default=1, help="threads for the throughput run (default %(default)s)"
    )
    parser.add_argument("--repeats", type=int, default=200, help="timed repetitions per figure (default 200)")
    parser.add_argument(
        "--plot",
        metavar="OUT.png",
        help="write a plot of per-turn latency of both arms to this image file; the extension picks "
        "the format (png, svg, pdf, ...; needs matplotlib; default: no plot)",
    )
    parser.add_argument(
        "--log",
        metavar="FILE",
        help="the timed turns write to this decision log (SQLite; see `recallwise log`), and the "
        "table says what logging added to a turn (default: no log)",
    )
    add_via(parser)
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    if args.records < 0 or args.repeats < 1 or args.concurrency < 1 or args.remote_store_ms < 0:
        raise UsageError("--records, --remote-store-ms must be >= 0; --repeats, --concurrency >= 1")
    # Everything that can be wrong with --plot fails now, before the long run, not after it.
    plot = check_plot_path(args.plot) if args.plot is not None else None
    decider = decider_from_args(args)
    via = getattr(args, "via", "policy")
    if via == "memory-manager":
        memory_manager_runner()  # fail before the long run when strands is not installed
    if args.log is not None:
        if via != "policy":
            raise UsageError("--log times the policy's own turns: leave out --via memory-manager")
        DecisionLog(args.log).close()  # a path that cannot be a log fails now, not after the run
    options = {"url": args.url} if getattr(args, "url", None) else {}
    tmp = None
    url = args.store
    if url is None:
        tmp = tempfile.TemporaryDirectory(prefix="recallwise-bench-")
        url = f"sqlite:///{tmp.name}/bench.db"
    store = open_store(url, embedder=embedder_from_args(args))
    stages = len(STAGES) if decider is not None else len(STAGES) - 1
    try:
        with progress_bar(args, stages, unit="stage", desc="bench latency") as bar:
            result = run_latency(
                store,
                decider,
                **flag_values(args, "records", "remote_store_ms", "concurrency", "repeats", "log"),
                on_stage=_stage_namer(bar),
                rss_probe=lambda: serving_rss_mb(url, None if decider is None else args.decider, options),
                via=via,
            )
    finally:
        store.close()
        if tmp is not None:
            tmp.cleanup()
    if plot is not None:
        write_plot(result, plot)
    notes = [] if plot is None else [f"plot: {plot}"]
    return report(args, result, functools.partial(_print_text, via=via, notes=notes), notes)


def _print_text(result: dict[str, Any], via: str, notes: list[str]) -> None:
    """The figures as text: one table, then the demo's wall clock, then ``notes``."""
    print(
        f"decider {result['decider']}, {result['records']} records, remote store delay "
        f"{result['remote_store_ms']} ms, {result['cores']} cores"
        + (", turns through Strands' MemoryManager (a real strands.Agent)" if via == "memory-manager" else "")
        + "\n"
    )
    keys = KEYS + (MULTILINGUAL_KEYS if result.get("multilingual_embedder") else [])
    # a figure the run did not measure (the OpenTelemetry ones without a decider) is left out
    print(table([(label, result[key]) for label, key in keys if key in result], ["", "value"]))
    if result.get("multilingual_embedder"):
        print(f"(messages not in English are decided with {result['multilingual_embedder']})")
    ratio = result["demo_wall_gated_ms"] / max(result["demo_wall_stock_ms"], 1e-9)
    print(f"\ngated demo wall clock = {ratio:.0%} of stock")
    for note in notes:
        print(note)


# The stages run_latency reports, in order ("deciding" and "throughput" time only a decider).
STAGES = ("seeding", "embedding", "deciding", "searching", "turns", "demo", "throughput", "memory")


def _stage_namer(bar: Any) -> Callable[[str], None]:
    """``on_stage`` for the progress bar over the stages: name the stage being timed, and count
    the one before it as done."""
    started = False

    def stage(name: str) -> None:
        nonlocal started
        if started:
            bar.update(1)
        started = True
        bar.set_description(f"bench latency: {name}")

    return stage


def check_plot_path(raw: str) -> Path:
    """The ``--plot`` file, checked before the run: a file (not a folder) in a directory that
    exists and can be written, with an extension matplotlib can write. Raises UsageError."""
    path = Path(raw)
    if not raw.strip():
        raise UsageError("--plot: empty file name")
    if path.is_dir() or raw.endswith(("/", os.sep)):
        raise UsageError(f"--plot {raw}: is a directory; name the image file, e.g. {path / 'latency.png'}")
    parent = path.parent
    if not parent.is_dir():
        raise UsageError(f"--plot {raw}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"--plot {raw}: no permission to write in {str(parent)!r}")
    formats = plot_formats()
    suffix = path.suffix.lower().removeprefix(".")
    if suffix not in formats:
        problem = f"format {suffix!r} is not supported" if suffix else "no file extension to pick the format"
        raise UsageError(f"--plot {raw}: {problem}; use one of: {', '.join(sorted(formats))}")
    return path


#: Extensions every matplotlib that ``recallwise[plot]`` allows (>= 3.8) writes with the Agg
#: canvas, no LaTeX needed (so not ``pgf``); known without importing matplotlib, which takes
#: seconds, so a bad ``--plot`` fails at once. tests/test_first_hour.py checks them against
#: the installed matplotlib.
PLOT_FORMATS = ("eps", "jpeg", "jpg", "pdf", "png", "ps", "svg", "svgz", "tif", "tiff", "webp")


def plot_formats() -> tuple[str, ...]:
    """The file extensions ``--plot`` accepts; a UsageError when matplotlib is not installed."""
    require_extra("plot", "--plot")
    return PLOT_FORMATS


def write_plot(result: dict, path: Path) -> None:
    """Per-turn latency of both arms over the demo conversation, as a PNG."""
    plt = _pyplot()
    turns = result["demo_turns"]
    stock, gated = result["demo_per_turn_ms"]["stock"], result["demo_per_turn_ms"]["gated"]
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=120)
    xs = range(len(turns))
    ax.bar([x - 0.2 for x in xs], stock, width=0.4, label="stock", color="#9aa5b1")
    ax.bar([x + 0.2 for x in xs], gated, width=0.4, label="gated", color="#2f7ed8")
    ax.set_xticks(
        list(xs), [t if len(t) < 18 else t[:16] + "…" for t in turns], rotation=30, ha="right", fontsize=7
    )
    ax.set_ylabel("turn latency (ms)")
    ax.set_title(
        f"Demo turns with a {result['remote_store_ms']:.0f} ms remote store: "
        f"stock {result['demo_wall_stock_ms']:.0f} ms vs gated {result['demo_wall_gated_ms']:.0f} ms",
        fontsize=9,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as exc:
        raise RecallwiseError(f"--plot {path}: cannot write the plot: {exc}") from exc
    finally:
        plt.close(fig)


def _pyplot() -> Any:
    require_extra("plot", "--plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt
