"""``recallwise bench locomo``: decision quality on LoCoMo's real memories and questions."""

from __future__ import annotations

import argparse
from typing import Any

from ..bench.locomo import run_locomo, run_locomo_mem0
from ..errors import UsageError
from ..policy import EPISODIC_OPTIONS
from . import progress_bar, report
from .common import add_decider, add_embedder, add_json, decider_from_args, embedder_from_args, table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """evidence recall, records and tokens per question on LoCoMo, stock vs gated

    Run LoCoMo's questions through the stock arm (top-k per namespace, keep all) and the gated arm over a
    store holding every observation of each conversation.
    """
    parser.add_argument(
        "--data",
        required=True,
        metavar="DIR",
        help="directory with LoCoMo's NN.json files (README: where LoCoMo comes from)",
    )
    parser.add_argument(
        "--split",
        choices=["dev", "test", "all"],
        default="dev",
        help="conversations to run: dev (26, 30, 41-43), test (44, 47-50) or all (default %(default)s)",
    )
    add_decider(parser)
    add_embedder(parser, "the LoCoMo stores (records and questions)")
    parser.add_argument(
        "--via",
        choices=["policy", "mem0"],
        default="policy",
        help="policy (default): recallwise's store and policy; mem0: a real offline mem0 Memory per "
        "conversation, mem0's own search (stock) vs GatedMem0 (gated) at the same records and embedder "
        "(needs recallwise[mem0])",
    )
    parser.add_argument(
        "--top-k",
        type=int,
        default=None,
        help="records searched per namespace (default 10); with --via mem0, mem0's top_k "
        "(default 20, mem0's own)",
    )
    parser.add_argument(
        "--max-records",
        type=int,
        default=5,
        help="most records the gated arm injects per question (default 5)",
    )
    parser.add_argument(
        "--gated-top-k",
        type=int,
        default=None,
        metavar="N",
        help="records the gated arm searches per namespace before the judge chooses "
        "(default: the policy's gated_top_k, fitted on dev)",
    )
    parser.add_argument(
        "--no-conversation-rescore",
        action="store_true",
        help="leave the judge's answers as they are (the gated arm re-scores them by conversation "
        "session by default: LoCoMo's records are episodic)",
    )
    parser.add_argument(
        "--no-adaptive-budget",
        action="store_true",
        help="keep by the thresholds and --max-records only (default: the adaptive keep budget of "
        "the episodic options too)",
    )
    parser.add_argument(
        "--layout",
        choices=["speakers", "shared"],
        default=None,
        help="one namespace per speaker (default) or one shared namespace",
    )
    parser.add_argument(
        "--route", action="store_true", help="let the decider choose which speaker namespaces to search"
    )
    add_json(parser)


def run(args: argparse.Namespace) -> int:
    if args.via == "mem0":
        given = [flag for flag, value in (("--layout", args.layout), ("--route", args.route)) if value]
        if args.gated_top_k is not None:
            given.append("--gated-top-k")
        if given:
            raise UsageError(
                f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply with --via mem0: "
                "each conversation is one mem0 user, "
                "and the gated arm judges what mem0's own search returns"
            )
    if args.top_k is None:
        args.top_k = 20 if args.via == "mem0" else 10
    args.layout = args.layout or "speakers"
    if args.top_k < 1 or args.max_records < 1:
        raise UsageError("--top-k and --max-records must be at least 1")
    # LoCoMo's records are episodic (observations of each session): the gated arm runs with
    # the options fitted for such memories, declared in the JSON's "gated_keep".
    options: dict[str, object] = {**EPISODIC_OPTIONS, "max_records": args.max_records}
    if args.gated_top_k is not None:
        if args.gated_top_k < 1:
            raise UsageError("--gated-top-k must be at least 1")
        options["gated_top_k"] = args.gated_top_k
    if args.no_conversation_rescore:
        options["conversation_rescore"] = None
    if args.no_adaptive_budget:
        options["adaptive_budget"] = None
    decider = decider_from_args(args)
    with progress_bar(args, unit="q", desc=f"LoCoMo {args.split}") as bar:
        common: dict[str, Any] = {
            "embedder": embedder_from_args(args),
            "policy_options": options,
            "on_start": lambda total: bar.reset(total=total),
            "progress": bar.update,
        }
        if args.via == "mem0":
            result = run_locomo_mem0(args.data, args.split, decider, top_k=args.top_k, **common)
        else:
            result = run_locomo(
                args.data,
                args.split,
                decider,
                top_k=args.top_k,
                layout=args.layout,
                route=args.route,
                **common,
            )
    return report(args, result, _print_mem0 if args.via == "mem0" else _print_text)


def _print_text(result: dict[str, Any]) -> None:
    """The result as text: the arms side by side, the gated arm's keep rule, gate, judge and latency."""
    g = result["gated"]
    if g.get("decider_errors"):
        print(f"WARNING: {g['decider_errors']} decider errors; those questions failed open.")
    print(
        f"LoCoMo {result['split']}: {result['conversations']} conversations, "
        f"{result['questions']} questions, "
        f"decider {result['decider']}, embedder {result['embedder']}, layout {result['layout']}, "
        f"top-k {result['top_k']} (gated arm: {result['gated_top_k']})\n"
    )
    print(table(_arm_rows(result), ["", "stock", "gated"]))
    keep = result["gated_keep"]
    episodic = [
        name
        for name, on in (
            ("conversation re-scoring", keep["conversation_rescore"]),
            ("adaptive keep budget", keep["adaptive_budget"]),
        )
        if on
    ]
    print(
        f"\ngated arm keeps at most {keep['max_records']} records"
        + (f", with {' and '.join(episodic)} (episodic options)" if episodic else "")
        + f"; re-scored on {g['rescored_rate']:.1%} of questions"
    )
    print(
        f"\ngate opens on {g['gate_open_rate']:.1%} of LoCoMo questions; stays closed on "
        f"{result['gate_heldout']['non_memory_closed_rate']:.1%} of held-out non-memory messages"
    )
    print(f"judge: mean per-question AUC {g['judge_mean_auc']:.3f}, precision@k {g['judge_p_at_k']:.3f}")
    lat = result["latency_ms"]
    print(
        f"latency p50: embed {lat['embed_p50']:.2f} ms, decide {lat['decide_p50']:.2f} ms, "
        f"search {lat['search_p50']:.2f} ms"
    )


def _arm_rows(result: dict) -> list[tuple[str, Any, Any]]:
    """The figures both ways of running the bench report, stock arm beside gated arm."""
    s, g = result["stock"], result["gated"]
    return [
        ("evidence recall", s["recall"], g["recall"]),
        ("any evidence hit", s["any_hit"], g["any_hit"]),
        ("records / question", s["records_per_question"], g["records_per_question"]),
        (f"tokens / question ({result['tokenizer']})", s["tokens_per_question"], g["tokens_per_question"]),
    ]


def _print_mem0(result: dict) -> None:
    s, g, chat = result["stock"], result["gated"], result["chit_chat"]
    if g.get("decider_errors") or result["errors_by_kind"]:
        kinds = ", ".join(f"{k} x{v}" for k, v in sorted(result["errors_by_kind"].items()))
        print(f"WARNING: errors in the gated arm ({kinds or 'decider'}); those questions failed open.")
    print(
        f"LoCoMo {result['split']} through mem0 {result['mem0ai']}: {result['conversations']} conversations, "
        f"{result['questions']} questions, decider {result['decider']}, embedder {result['embedder']}, "
        f"mem0 top_k {result['top_k']}\n"
    )
    rows = [
        *_arm_rows(result),
        (
            f"chit-chat injected ({chat['messages'] // max(result['conversations'], 1)} held-out "
            f"messages x {result['conversations']} memories)",
            chat["stock_injected_rate"],
            chat["gated_injected_rate"],
        ),
        ("chit-chat records / message", chat["stock_records_per_message"], chat["gated_records_per_message"]),
    ]
    print(table(rows, ["", "mem0 stock", "mem0 gated"]))
    print(
        f"\ngate opens on {g['gate_open_rate']:.1%} of LoCoMo questions; judge mean per-question AUC "
        f"{g['judge_mean_auc']:.3f}, precision@k {g['judge_p_at_k']:.3f}; stock cut to the gated arm's "
        f"tokens: recall {s['recall_at_gated_tokens']:.3f}"
    )
