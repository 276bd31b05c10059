"""``recallwise demo``: the persona's eight turns through the stock and gated arms, side by side."""

from __future__ import annotations

import argparse
import textwrap
from typing import Any

from ..demo import DemoResult, run_demo
from ..extras import require_extra
from . import report
from .common import (
    add_decider,
    add_embedder,
    add_json,
    add_store,
    decider_from_args,
    store_from_args,
    table,
)

ROWS = [
    ("retrievals", "retrievals"),
    ("records returned", "records_returned"),
    ("records injected", "records_injected"),
    ("context tokens", "context_tokens"),
    ("memory ms", "memory_ms"),
    ("decider calls", "decider_calls"),
    ("decider ms", "decider_ms"),
    ("errors", None),
    ("wall ms", "wall_ms"),
]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """run the demo persona's 8 turns through the stock and the gated arm

    Seed a fictional persona's memory (if the store has none) and run eight turns through the stock arm
    (always retrieve, keep all) and the gated arm.
    """
    add_store(parser, demo=True)
    add_embedder(parser)
    add_decider(parser)
    add_via(parser)
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    decider = decider_from_args(args)  # a bad decider name must fail before the store file is created
    store = store_from_args(args)
    if getattr(args, "via", "policy") == "memory-manager":
        return run_memory_manager(args, store, decider)
    return report(args, run_demo(store, decider), _print_text)


def _print_text(result: DemoResult) -> None:
    """The demo as text: the two arms side by side, each turn, the gated arm's report."""
    stock, gated = result.arms["stock"], result.arms["gated"]
    gated_errors = gated["decider_errors"] + gated["store_errors"]
    if gated_errors:
        print(f"WARNING: {gated_errors} decision/store errors in the gated arm; those turns failed open.")
    if result.seeded:
        print(f"seeded {result.seeded} records for the demo persona into {result.store}")
    print(f"decider: {result.decider}    store: {result.store}\n")
    rows = []
    for label, key in ROWS:
        if key is None:
            rows.append((label, stock["decider_errors"] + stock["store_errors"], gated_errors))
        else:
            rows.append((label, stock[key], gated[key]))
    print(table(rows, ["", "stock", "gated"]))
    print()
    for row in result.per_turn:
        g = row["gated"]
        _print_turn(
            row,
            "open" if g["retrieved"] else "closed",
            f"{len(g['injected'])} kept, {len(g['dropped'])} dropped",
        )
        for text in g["dropped"][:3]:
            print("    " + textwrap.shorten(f"- {text}", 96))
        if len(g["dropped"]) > 3:
            print(f"    - ... {len(g['dropped']) - 3} more dropped")
    print("\n" + result.reports["gated"])


def _print_turn(row: dict[str, Any], state: str, gated: str) -> None:
    """One turn of either demo: the message, both arms in a line, then the records the gated arm
    injected (indented; shortened to fit a terminal)."""
    gate_p = row["gated"].get("gate_p")
    gate = "-" if gate_p is None else f"{gate_p:.2f}"
    print(f"> {row['turn']}")
    print(f"  stock: {len(row['stock']['injected'])} injected | gate p={gate} ({state}), {gated}")
    for text in row["gated"]["injected"]:
        print("    " + textwrap.shorten(f"+ {text}", 96))


# ---- --via memory-manager: the same comparison through Strands' own MemoryManager ----------------

MEMORY_MANAGER_ROWS = [
    ("store searches", "store_searches"),
    ("records injected", "records_injected"),
    ("context tokens", "context_tokens"),
    ("context chars", "context_chars"),
    ("wall ms", "wall_ms"),
]


def add_via(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--via",
        choices=("policy", "memory-manager"),
        default="policy",
        help="policy: RecallPolicy.recall directly (default); memory-manager: a real strands.Agent "
        "with Strands' MemoryManager, stock stores vs the same stores behind GatedMemoryStore "
        "(needs recallwise[strands])",
    )


def memory_manager_runner() -> Any:
    require_extra("strands", "--via memory-manager")
    from ..bench.memory_manager import run_memory_manager_demo

    return run_memory_manager_demo


def run_memory_manager(args: argparse.Namespace, store: Any, decider: Any) -> int:
    return report(args, memory_manager_runner()(store, decider), _print_memory_manager)


def _print_memory_manager(result: dict[str, Any]) -> None:
    """The demo through Strands' MemoryManager as text."""
    stock, gated = result["arms"]["stock"], result["arms"]["gated"]
    errors = gated.get("gate", {}).get("decider_errors", 0) + gated.get("gate", {}).get("store_errors", 0)
    if errors:
        print(f"WARNING: {errors} decision/store errors in the gated arm; those turns failed open.")
    if result["seeded"]:
        print(f"seeded {result['seeded']} records for the demo persona into {result['store']}")
    print(
        f"via Strands MemoryManager (a real strands.Agent, scripted model)    decider: {result['decider']}"
        f"    store: {result['store']}\n"
    )
    rows = [(label, stock[key], gated[key]) for label, key in MEMORY_MANAGER_ROWS]
    rows.append(("history clean", stock["history_clean"], gated["history_clean"]))
    print(table(rows, ["", "stock", "gated"]))
    print()
    for row in result["per_turn"]:
        g = row["gated"]
        _print_turn(row, "searched" if g["searched"] else "not searched", f"{len(g['injected'])} injected")
    if "report" in gated:
        print("\n" + gated["report"])
